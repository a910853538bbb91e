//! Every workload command (`fsbench matrix`, `fsbench metadata`, `fsbench sleep`, ...) is a
//! one-case campaign: its settings and flags become a plan of one case (`Plan::one_case`), run
//! by the plan layer as a campaign's are (`fsbench_plan::run::Run`: refused, begun, its one
//! sample in this process, finished or discarded); this module keeps the flags and the
//! printing: the terminal (`terminal`: the workload's grid, or its table), JSON and CSV,
//! exactly what `fsbench export RUN` writes.
//!
//! Mistakes found before anything runs (a bad flag, a missing directory, a refused device) store
//! nothing and exit 2. A configuration the host cannot run is stored as `unsupported` (exit 3).
//!
//! Under mpirun (a build with the `mpi` feature), every rank runs the workload in its own
//! `DIR/rank-N`, all start together, and rank 0 alone stores and shows one result merged from
//! every rank's (fsbench-scale); the other ranks store nothing and print nothing.

use crate::cli::RunOptions;
use crate::exit::{self, Failure};
use crate::frontend::{database, stop_on_signals, Cli};
use crate::out::note;
use crate::outfile::{Origin, OutputFile};
use crate::progress::WorkloadProgress;
use anyhow::{anyhow, Context};
use fsbench_measure::clock::now_ns;
use fsbench_measure::host::mount_of;
use fsbench_measure::units::human_duration;
use fsbench_model::Outcome;
use fsbench_plan::executor::{Executor, InProcess};
use fsbench_plan::one_case::{OneCase, OneTarget, TargetFlags};
use fsbench_plan::run::{Host, Kind as RunKind, Run};
use fsbench_plan::sample::Sampled;
use fsbench_plan::Plan;
use fsbench_report::terminal::{printable, printable_path};
use fsbench_report::{Csv, Exporter, Json, ReportModel};
use fsbench_testbed::aging::AgingSpec;
use fsbench_testbed::{CachePolicy, RealSystem};
use fsbench_workload::workload::{Check, KeepsFiles};
use fsbench_workload::{Context as WorkloadContext, WorkloadError, WorkloadSettings};
use std::io::Write;
use std::path::{Path, PathBuf};
use terminal::{grid_of, place, results, write_terminal};

mod terminal;

/// How the command's workload runs: in this process, its errors in command-line terms (a
/// setting is named by its flag, `--file-sizes`).
const EXECUTOR: InProcess = InProcess { flag_names: true };

/// A workload error found before anything ran: a usage error, in flag terms.
fn usage_error(error: WorkloadError) -> Failure {
    Failure::usage(anyhow!(EXECUTOR.describe(&error)))
}

/// True when an export path means standard output.
fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(crate::outfile::is_stdout)
}

/// An export, prepared before the run so a bad path fails in a second, not after an hour; the
/// file it replaces keeps its content until the results are written (crate::outfile).
fn export_file(path: &Path, flag: &str) -> Result<OutputFile, Failure> {
    OutputFile::open(path, Origin::User).map_err(|e| {
        Failure::usage(anyhow!(
            "{flag} {}: {}; pass a writable path",
            path.display(),
            crate::exit::one_line(&e)
        ))
    })
}

pub fn run(settings: WorkloadSettings, args: RunOptions) -> Result<i32, Failure> {
    let job = fsbench_scale::launcher().map_err(|e| Failure::usage(anyhow!(e)))?;
    let mut met = false;
    let result = run_on(settings, args, job.as_deref(), &mut met);
    exit::end_rank(job.as_deref(), met, result)
}

/// The target the flags ask for (`--fs` and what goes with it), checked as flags; `age` holds
/// the parsed `--age`.
fn one_target<'a>(
    args: &'a RunOptions,
    age: Option<&'a AgingSpec>,
) -> Result<Option<OneTarget<'a>>, Failure> {
    let target = &args.target;
    let Some(fs) = &target.fs else {
        only_with_a_target(args)?;
        return Ok(None);
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Failure::usage(anyhow!(
            "--fs {fs}: preparing a filesystem needs root (loop devices, mkfs, mount); run as root, or measure an existing directory with --dir"
        )));
    }
    OneTarget::from_flags(&TargetFlags {
        fs,
        mkfs_options: target.mkfs_options.as_deref(),
        mount_options: target.mount_options.as_deref(),
        scheduler: target.scheduler.as_deref(),
        cache: &target.cache,
        device: &target.device,
        destroy_data_on: target.destroy_data_on.as_deref(),
        array: target.array.as_deref(),
        loop_buffered: target.loop_buffered,
        no_fsck: target.no_fsck,
        age,
    })
    .map(Some)
    .map_err(|e| Failure::usage(anyhow!(e)))
}

/// Without `--fs`, the flags that only a filesystem fsbench prepares can honour are refused,
/// naming the first given: a directory's device, mkfs and mount options are not fsbench's to
/// choose, and a flag that does nothing must not look as if it did.
fn only_with_a_target(args: &RunOptions) -> Result<(), Failure> {
    let target = &args.target;
    let given = [
        ("--mkfs-options", target.mkfs_options.is_some()),
        ("--mount-options", target.mount_options.is_some()),
        ("--scheduler", target.scheduler.is_some()),
        ("--device", target.device != "image"),
        ("--destroy-data-on", target.destroy_data_on.is_some()),
        ("--array", target.array.is_some()),
        ("--loop-buffered", target.loop_buffered),
        ("--no-fsck", target.no_fsck),
        ("--age", target.age.is_some()),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
        return Err(Failure::usage(anyhow!(
            "{flag} applies to a filesystem fsbench prepares: add --fs FS, or remove {flag} to \
             run in {}",
            args.dir
                .as_deref()
                .map_or("a temporary directory".into(), |d| d.display().to_string())
        )));
    }
    Ok(())
}

/// The cache policy in a directory (`--cache` without `--fs`): warm, or drop (the host's page
/// cache dropped before the workload, as root); remount and direct need a filesystem fsbench
/// prepares.
fn dir_cache(args: &RunOptions) -> Result<CachePolicy, Failure> {
    let policy: CachePolicy = args
        .target
        .cache
        .parse()
        .map_err(|e: String| Failure::usage(anyhow!("--cache: {e}")))?;
    match policy {
        CachePolicy::Warm => Ok(policy),
        CachePolicy::Drop => {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                return Err(Failure::usage(anyhow!(
                    "--cache {}: dropping the page cache needs root; run as root, or use --cache warm",
                    args.target.cache
                )));
            }
            Ok(policy)
        }
        CachePolicy::Remount | CachePolicy::Direct => Err(Failure::usage(anyhow!(
            "--cache {policy} applies to a filesystem fsbench prepares: add --fs FS, or use \
             --cache drop (the host's page cache dropped) in a directory"
        ))),
    }
}

/// The run, as one process or as one rank of `job`; `met` is set once the ranks have met for
/// the last time (after that a rank can end on its own).
fn run_on(
    settings: WorkloadSettings,
    mut args: RunOptions,
    job: Option<&dyn fsbench_scale::Collective>,
    met: &mut bool,
) -> Result<i32, Failure> {
    let kind = settings.kind();
    if let Some(job) = job {
        if job.rank() != 0 {
            args.no_store = true;
            args.quiet = true;
            args.json = None;
            args.csv = None;
        }
    }
    let grid = grid_of(&settings, args.unit.as_deref())?;
    if settings.apply(KeepsFiles) && args.target.fs.is_some() {
        return Err(Failure::usage(anyhow!(
            "--keep: the filesystem of --fs is removed after the run; use --dir to keep the file"
        )));
    }
    let age: Option<AgingSpec> = args
        .target
        .age
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| Failure::usage(anyhow!("--age: {e}")))?;
    let target = one_target(&args, age.as_ref())?;
    // The settings, checked as the user typed them (flags), before anything is made.
    let ctx = WorkloadContext {
        scale: args.scale,
        cache: match &target {
            Some(t) => t.cache,
            None => dir_cache(&args)?,
        },
        disposable: target.is_some(),
        job: job.map(|job| fsbench_workload::workload::Place {
            rank: job.rank(),
            ranks: job.size(),
        }),
        interval: args.interval,
    };
    ctx.check().map_err(usage_error)?;
    settings.apply(Check(&ctx)).map_err(usage_error)?;
    if let Some(sweep) = &args.sweep {
        sweep.points(&settings, &ctx).map_err(usage_error)?;
    }
    crate::outfile::distinct(&[
        ("--json", args.json.as_deref()),
        ("--csv", args.csv.as_deref()),
    ])?;
    let json = args
        .json
        .as_deref()
        .map(|p| export_file(p, "--json"))
        .transpose()?;
    let csv = args
        .csv
        .as_deref()
        .map(|p| export_file(p, "--csv"))
        .transpose()?;
    // The directory: the user's, or (without --fs) a temporary one, removed afterwards.
    let dir = match &args.dir {
        Some(dir) if !dir.is_dir() => {
            return Err(Failure::usage(anyhow!(
                "the directory {} does not exist: create it or pass another directory",
                dir.display()
            )))
        }
        Some(dir) => {
            fsbench_plan::run::check_run_dir(dir, "--dir")?;
            Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
        }
        None => None,
    };
    let temporary = match (&dir, &target) {
        (None, None) => Some(TemporaryDir(Some(
            tempfile::Builder::new()
                .prefix(&format!("fsbench-{kind}-"))
                .tempdir()
                .context("cannot create a temporary directory; pass --dir")?
                .keep(),
        ))),
        _ => None,
    };
    let dir: Option<PathBuf> = dir.or_else(|| temporary.as_ref().and_then(|t| t.0.clone()));
    let plan = Plan::one_case(&OneCase {
        settings: &settings,
        sweep: args.sweep.as_ref(),
        scale: args.scale,
        interval: args.interval,
        dir: dir.as_deref(),
        work_dir: &args.target.work.work_dir,
        target,
        dir_cache: ctx.cache,
    })
    .map_err(|e| Failure::usage(anyhow!(e)))?;
    let host = Host {
        system: &RealSystem,
        job,
    };
    Run::check(&plan, host)?;
    // The store opens before anything runs, so a bad --db fails in a second; --no-store keeps
    // the run in a database that is removed at the end.
    let (store, _scratch) = database(
        &args.db.path(),
        !args.no_store,
        "cannot create a temporary directory for --no-store",
    )?;
    let stop = stop_on_signals();
    // From here on, what happens is stored (a mistake found while making the ground ready is
    // not: the run is taken back). The guard is dropped after the sample's teardown.
    let mut run = Run::begin(plan, store, host, RunKind::Command, &Cli, stop)?;
    let run_id = run.id;
    // Read now: a prepared target's mount is gone when the results are shown.
    let mount = run
        .plan()
        .dir
        .as_deref()
        .and_then(mount_of)
        .map(|m| format!(" ({} {}, {})", m.fs_type, m.source, m.mount_options));
    let started = now_ns();
    let mut progress = WorkloadProgress::new(!args.quiet);
    let sampled = run.one_sample(&EXECUTOR, &mut progress);
    progress.finish();
    // The ranks met for the last time in the sample.
    *met = true;
    let result = match sampled.map_err(Failure::failed)? {
        Sampled::Done(result) => *result,
        Sampled::Refused(reason) => return Err(Failure::usage(anyhow!(reason))),
        Sampled::Interrupted => {
            note!("fsbench {kind}: interrupted before the workload started; everything made was undone");
            return Ok(exit::INTERRUPTED);
        }
    };
    let (plan, store) = (run.plan(), run.store());
    let mut model = ReportModel::load(store, &[run_id]).map_err(Failure::failed)?;
    if json.is_some() {
        model.load_series(store, None).map_err(Failure::failed)?;
    }
    // Each export is tried, even when one before it failed.
    exit::all_of(
        [(json, &Json as &dyn Exporter), (csv, &Csv)]
            .into_iter()
            .filter_map(|(file, exporter)| {
                file.map(|f| f.write(|out| exporter.write(&model, out)))
            }),
    )?;
    let elapsed = now_ns() - started;
    let info = result.target.as_deref();
    // The terminal comes after the exports: a closed pipe (`| head`) must not cost the results.
    // An export on standard output takes its place.
    let exports_on_stdout = is_stdout(args.json.as_deref()) || is_stdout(args.csv.as_deref());
    if !args.quiet && !exports_on_stdout && !result.results.is_empty() {
        let place = place(job, plan, info, mount);
        let mut stdout = std::io::stdout().lock();
        let written = write_terminal(
            &mut stdout,
            &settings,
            &place,
            info,
            &result.results,
            grid.filter(|_| args.sweep.is_none()),
            args.scale,
            elapsed,
            !args.no_spread,
        )
        .and_then(|_| stdout.flush());
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.context("cannot write to standard output")?,
        }
    }
    for path in &result.kept {
        note!("kept the last test file: {}", printable_path(path));
    }
    if !result.kept.is_empty() {
        if let Some(mut tmp) = temporary {
            tmp.0 = None;
        }
    }
    for line in info.iter().flat_map(|t| t.teardown.iter()) {
        if line.starts_with("error") {
            note!("warning: teardown: {line}; run `fsbench cleanup`");
        }
    }
    let stored = if args.no_store {
        String::new()
    } else {
        format!(
            "; stored as run {run_id} in {} (`fsbench export {run_id}`)",
            store.path().display()
        )
    };
    let summary = format!(
        "{} in {} (wall clock){stored}",
        results(result.results.len()),
        human_duration(elapsed)
    );
    let reason = result.reason.unwrap_or_default();
    match result.status {
        Outcome::Ok => {
            if !args.quiet {
                note!("fsbench {kind}: {summary}");
            }
            Ok(exit::OK)
        }
        Outcome::Interrupted => {
            note!("fsbench {kind}: interrupted; {summary}; files it made were removed");
            Ok(exit::INTERRUPTED)
        }
        Outcome::Unsupported => Err(Failure {
            code: exit::UNSUPPORTED,
            error: anyhow!("{reason}{stored}"),
            silent: false,
        }),
        _ => Err(Failure::failed(anyhow!(
            "{kind} stopped after {summary}: {reason}; files it made were removed"
        ))),
    }
}

/// The temporary directory a command without `--dir` or `--fs` runs in, removed when dropped
/// (on every way out) but never across a mount a program of the workload left in it
/// (`fsbench_measure::walk`): that stays, with the directories leading to it, and is said.
struct TemporaryDir(Option<PathBuf>);

impl Drop for TemporaryDir {
    fn drop(&mut self) {
        let Some(path) = self.0.take() else { return };
        match fsbench_measure::walk::remove_tree(&path) {
            Err(e) if !e.is_not_found() => {
                note!(
                    "warning: the temporary directory stays: {}",
                    printable(&e.to_string())
                );
            }
            _ => {}
        }
    }
}
