//! Every figure a workload records has a definition in [`DEFINED`](super::DEFINED), with the
//! rule a job's ranks merge it by: each registered workload run briefly, in each of its
//! methods and engines, and the filesystem check a workload reports as its own result.
//! (dbench's own output, read from its fixture, is checked in `clients::dbench`.)

use crate::harness::Survives;
use crate::workload::{Apply, Collect, Context, End, Workload};
use crate::{StopFlag, WorkloadSettings};
use fsbench_measure::units::{Size, SizeSpec, TimeSpan};
use fsbench_model::{Outcome, ResultRecord};
use std::path::Path;

/// Brief settings for each workload: every method and engine that records figures of its
/// own. A new workload fails to compile here until it is added (the match has no wildcard).
fn briefly(settings: WorkloadSettings) -> Vec<WorkloadSettings> {
    use WorkloadSettings as W;
    match settings {
        W::Matrix(s) => vec![W::Matrix(crate::matrix::MatrixSettings {
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            min_time: TimeSpan::from_ns(1_000_000),
            seed: Some(1),
            ..s
        })],
        W::Clients(s) => vec![W::Clients(crate::clients::ClientsSettings {
            clients: 2,
            duration: TimeSpan::from_ns(100_000_000),
            warmup: TimeSpan::from_ns(10_000_000),
            ..s
        })],
        W::Metadata(s) => [
            crate::metadata::Method::Native,
            crate::metadata::Method::Tool,
        ]
        .into_iter()
        .map(|method| {
            W::Metadata(crate::metadata::MetadataSettings {
                count: 5,
                method,
                ..s.clone()
            })
        })
        .collect(),
        W::Mix(s) => vec![W::Mix(crate::mix::MixSettings {
            threads: 2,
            duration: TimeSpan::from_ns(100_000_000),
            num_files: 8,
            num_dirs: 2,
            min_filesize: Size(4 << 10),
            max_filesize: Size(8 << 10),
            ..s
        })],
        W::Task(s) => [crate::task::Method::Tool, crate::task::Method::Native]
            .into_iter()
            .map(|method| {
                W::Task(crate::task::TaskSettings {
                    tasks: "copy,untar,read-all,exec,remove".parse().unwrap(),
                    command: "true".into(),
                    method,
                    ..s.clone()
                })
            })
            .collect(),
        W::Sleep(s) => vec![
            W::Sleep(crate::sleep::SleepSettings {
                duration: TimeSpan::from_ns(1_000_000),
                ..s.clone()
            }),
            W::Sleep(crate::sleep::SleepSettings {
                pattern: Some("1ms*3".parse().unwrap()),
                ..s
            }),
        ],
        W::Io(s) => [crate::io::Engine::Sync, crate::io::Engine::IoUring]
            .into_iter()
            .map(|engine| {
                W::Io(crate::io::IoSettings {
                    engine,
                    rw: "randrw".parse().unwrap(),
                    size: Size(256 << 10),
                    ..s.clone()
                })
            })
            .collect(),
        W::Writeback(s) => vec![W::Writeback(crate::writeback::WritebackSettings {
            size: Size(1 << 20),
            rounds: 1,
            ..s
        })],
        W::Durability(s) => vec![W::Durability(crate::durability::DurabilitySettings {
            cuts: 3,
            seed: Some(1),
            ..s
        })],
        W::Replay(s) => [true, false]
            .into_iter()
            .map(|dependencies| {
                W::Replay(crate::replay::ReplaySettings {
                    trace: Some(crate::replay::tests::brief_trace()),
                    dependencies,
                    ..s.clone()
                })
            })
            .collect(),
    }
}

/// Runs settings of any workload in a directory, at a small scale.
struct Run<'a> {
    dir: &'a Path,
    sink: &'a mut Collect,
}

impl Apply for Run<'_> {
    type Out = End;
    fn apply<W: Workload>(self, settings: &W) -> End {
        let ctx = Context {
            scale: 0.01,
            ..Context::default()
        };
        settings.run(
            &ctx,
            self.dir,
            &StopFlag::new(),
            self.sink,
            &mut Survives::default(),
        )
    }
}

/// The figures of `records` that have no definition, each with the record's kind.
fn undefined(kind: &str, records: &[ResultRecord]) -> Vec<String> {
    records
        .iter()
        .flat_map(|r| &r.measurements)
        .filter(|m| super::definition(&m.metric).is_none())
        .map(|m| format!("{kind}: {}", m.metric))
        .collect()
}

#[test]
fn every_figure_a_workload_records_is_defined() {
    let mut missing = Vec::new();
    for default in WorkloadSettings::defaults() {
        let kind = default.kind();
        // The filesystem check after a run, for the workloads that report it as theirs.
        let check: Vec<ResultRecord> = default
            .check_result("fsck -n", 1_000_000)
            .into_iter()
            .collect();
        missing.extend(undefined(kind, &check));
        for settings in briefly(default) {
            let dir = tempfile::tempdir().unwrap();
            let mut sink = Collect::default();
            let end = settings.apply(Run {
                dir: dir.path(),
                sink: &mut sink,
            });
            assert_eq!(end.outcome, Outcome::Ok, "{settings:?}: {:?}", end.error);
            assert!(!sink.records.is_empty(), "{settings:?} recorded nothing");
            missing.extend(undefined(kind, &sink.records));
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "figures recorded without a definition in figures::DEFINED (the MPI merge refuses \
         them): {missing:?}"
    );
}
