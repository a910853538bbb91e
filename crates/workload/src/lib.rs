//! The native workloads of fsbench. A workload is given a directory and acts in it; the
//! framework in `fsbench-measure` does the timing. Workloads know nothing of devices, mkfs or
//! mounts (that is the target layer) and print nothing (that is the CLI and report layers).
//!
//! Brief overview:
//! - [`matrix`]: the iozone-style throughput matrix (file size x record size x test).
//! - [`clients`]: client load replay in dbench's loadfile format, or dbench itself.
//! - [`metadata`]: metadata loops (mkdir, create, ..., rmdir) as system calls, 1..N threads,
//!   or as shell loops of the commands (study 003's).
//! - [`mix`]: a weighted small-file mix with FFSB's semantics (a fileset, then threads).
//! - [`task`]: real-world tasks (copy, untar, remove, read-all, build, exec) timed as
//!   real/user/sys with their sync, as one chain, on data fsbench generates.
//! - [`sleep`]: waits, touching nothing (the harness testing itself).
//! - [`io`]: fio-style jobs: reads and writes at a queue depth (sync or io_uring), optionally
//!   paced to a rate.
//! - [`replay`]: an application's recorded file-system calls (`fsbench record`) replayed on
//!   a recreated tree, thread by thread, with the order between threads that keeps it faithful.
//! - [`sweep`]: any workload at each value of one of its numeric settings, and the curve's
//!   peak and knee.
//! - Shared by every workload: [`data`] (what is written: incompressible by default),
//!   [`verify`] (a checkable header on every written block, and the check that reads it back),
//!   [`figures`] (the figures several workloads report), [`names`] (the names of the files
//!   they make: fs_mark's random ones, numbered ones, or a length and randomness), [`together`] (threads released at
//!   once; the scratch directory removed on every way out), [`fileio`] (aligned buffers, opening with O_DIRECT), [`stdio`] (a user-space buffered
//!   stream with glibc's semantics), [`rng`] (a fast deterministic generator), [`control`] (stop requests),
//!   [`error`] (errors that say what to change) and [`program`] (whether a program a workload
//!   runs is installed).
//!
//! The seam is [`workload`] and [`harness`] (what a running workload asks of whatever runs
//! it: a cold cache, phases started with a job's other ranks): a workload is one module with one settings type (plan table,
//! command flags and stored request at once) that implements [`Workload`], and one line in the
//! registry below. ARCHITECTURE.md, "Adding a workload", walks through it.

pub mod clients;
pub mod control;
pub mod data;
pub mod durability;
pub mod error;
pub mod figures;
pub mod fileio;
pub mod harness;
pub mod io;
pub mod matrix;
pub mod metadata;
pub mod mix;
pub mod names;
pub mod placement;
pub mod program;
pub mod replay;
pub mod rng;
pub mod sleep;
pub mod stdio;
pub mod stonewall;
pub mod sweep;
pub mod task;
pub mod together;
pub mod verify;
pub mod workload;
pub mod writeback;

pub use control::StopFlag;
pub use error::WorkloadError;
pub use harness::Harness;
pub use workload::{Apply, ApplyKind, Context, End, Sink, Workload};

workload::workloads! {
    Matrix(matrix::MatrixSettings),
    Clients(clients::ClientsSettings),
    Metadata(metadata::MetadataSettings),
    Mix(mix::MixSettings),
    Task(task::TaskSettings),
    Sleep(sleep::SleepSettings),
    Io(io::IoSettings),
    Writeback(writeback::WritebackSettings),
    Durability(durability::DurabilitySettings),
    Replay(replay::ReplaySettings),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same settings with every field at its default, however they arrive: a command
    /// with no flags, a plan table with no keys, `Default`.
    #[test]
    fn every_workload_has_one_set_of_defaults_and_one_name_per_setting() {
        let commands = WorkloadSettings::commands(|c| c);
        for (default, command) in WorkloadSettings::defaults().into_iter().zip(commands) {
            let kind = default.kind();
            assert_eq!(command.get_name(), kind);
            let json = serde_json::to_value(&default).unwrap();
            assert_eq!(json["kind"], kind, "the serde tag is the kind");
            let from_flags = WorkloadSettings::from_matches(
                kind,
                &command.clone().try_get_matches_from([kind]).unwrap(),
            )
            .unwrap()
            .unwrap();
            assert_eq!(from_flags, default, "{kind}: flag defaults");
            let empty = serde_json::Value::Object(Default::default());
            let from_plan = WorkloadSettings::from_kind(kind, empty).unwrap().unwrap();
            assert_eq!(from_plan, default, "{kind}: plan defaults");
            // A setting's plan key is its flag in kebab-case (or its positional argument).
            for key in json.as_object().unwrap().keys().filter(|k| *k != "kind") {
                let arg = command
                    .get_arguments()
                    .find(|a| a.get_id() == key.as_str())
                    .unwrap_or_else(|| panic!("{kind}: no flag for {key}"));
                // A positional setting (the task chain) is named by its plan key alone.
                if arg.is_positional() {
                    continue;
                }
                assert_eq!(arg.get_long(), Some(key.replace('_', "-").as_str()));
            }
        }
        let mut kinds = KINDS.to_vec();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), KINDS.len(), "every kind is one workload's");
    }

    /// What a report asks by a stored case's kind is what the settings of that kind say.
    #[test]
    fn a_kind_has_the_grid_and_table_of_its_settings() {
        for settings in WorkloadSettings::defaults() {
            let kind = settings.kind();
            assert_eq!(
                WorkloadSettings::grid_of(kind).map(|g| g.rows),
                settings.grid().map(|g| g.rows),
                "{kind}"
            );
            assert_eq!(
                WorkloadSettings::table_columns_of(kind),
                settings.table_columns(),
                "{kind}"
            );
        }
        assert!(WorkloadSettings::grid_of("no-such-kind").is_none());
        assert!(WorkloadSettings::table_columns_of("no-such-kind").is_empty());
    }
}
