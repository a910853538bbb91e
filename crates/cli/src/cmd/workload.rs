//! Every workload command (`fsbench matrix`, `fsbench metadata`, `fsbench sleep`, ...) is a
//! one-case campaign: its settings and flags become a plan of one case (`Plan::one_case`),
//! whose one sample the plan layer's sampler runs as it runs a campaign's — the workload in
//! this process — and stores; this module keeps the flags and the printing: the terminal (the
//! workload's grid, or its table), JSON and CSV, exactly what `fsbench export RUN` writes.
//!
//! Mistakes found before anything runs (a bad flag, a missing directory, a refused device) store
//! nothing and exit 2. A configuration the host cannot run is stored as `unsupported` (exit 3).
//!
//! Under mpirun (a build with the `mpi` feature), every rank runs the workload in its own
//! `DIR/rank-N`, all start together, and rank 0 alone stores and shows one result merged from
//! every rank's (fsbench-scale); the other ranks store nothing and print nothing.

use crate::cli::RunOptions;
use crate::exit::{self, Failure};
use crate::out::note;
use crate::outfile::{Origin, OutputFile};
use crate::progress::WorkloadProgress;
use crate::target::{guard, stop_on_signals};
use anyhow::{anyhow, Context};
use fsbench_measure::clock::{now_ns, rfc3339_utc, unix_time_s};
use fsbench_measure::host::{mount_of, HostInfo};
use fsbench_measure::units::human_duration;
use fsbench_model::{Outcome, ResultRecord, RunState};
use fsbench_plan::executor::{Executor, InProcess};
use fsbench_plan::one_case::{OneCase, OneTarget};
use fsbench_plan::runner::Recording;
use fsbench_plan::sample::{Keep, Sampled, Sampler};
use fsbench_plan::workload::sample_config;
use fsbench_plan::Plan;
use fsbench_report::grid;
use fsbench_report::target::write_target;
use fsbench_report::terminal::{printable, printable_path};
use fsbench_report::{Csv, Exporter, Json, ReportModel};
use fsbench_store::{NewRun, Store};
use fsbench_testbed::aging::AgingSpec;
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::{CachePolicy, DeviceSpec, RealSystem, TargetInfo};
use fsbench_workload::workload::{Check, KeepsFiles, RunsPrograms};
use fsbench_workload::{Context as WorkloadContext, WorkloadError, WorkloadSettings};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How the command's workload runs: in this process, its errors in command-line terms (a
/// setting is named by its flag, `--file-sizes`).
const EXECUTOR: InProcess = InProcess { flag_names: true };

/// A workload error found before anything ran: a usage error, in flag terms.
pub fn usage_error(error: WorkloadError) -> Failure {
    Failure::usage(anyhow!(EXECUTOR.describe(&error)))
}

/// "1 result", "12 results".
fn results(n: usize) -> String {
    if n == 1 {
        "1 result".into()
    } else {
        format!("{n} results")
    }
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
    end_rank(job.as_deref(), met, result)
}

/// A rank's end: one that stops with an error before the ranks have met for the last time
/// (`met`) would leave the others waiting for it, so it says why, naming itself, and ends the
/// job. Alone, or after the last meeting: the result as it is.
pub fn end_rank(
    job: Option<&dyn fsbench_scale::Collective>,
    met: bool,
    result: Result<i32, Failure>,
) -> Result<i32, Failure> {
    match (job, result) {
        (Some(job), Err(mut failure)) if !met => {
            failure.error = failure.error.context(format!(
                "rank {} of {} (host {})",
                job.rank(),
                job.size(),
                HostInfo::probe().hostname
            ));
            let code = exit::report(Err(failure));
            job.abort(code)
        }
        (_, result) => result,
    }
}

/// The host record of a run: this host's, or in a job every rank's (gathered at rank 0).
pub fn host_json(job: Option<&dyn fsbench_scale::Collective>) -> Result<String, Failure> {
    let mut host = serde_json::to_value(HostInfo::probe()).context("cannot encode the host")?;
    if let Some(job) = job {
        if let Some(all) = fsbench_scale::gather_hosts(job, &host) {
            host = all.map_err(Failure::failed)?;
        }
    }
    Ok(host.to_string())
}

/// A case key in a job: a job's results never pool with one process's, so the key names the
/// ranks.
pub fn job_key(key: &str, job: &dyn fsbench_scale::Collective) -> String {
    format!("{key}.np{}", job.size())
}

/// The target the flags ask for (`--fs` and what goes with it), checked as flags; `age` holds
/// the parsed `--age`.
fn one_target<'a>(
    args: &'a RunOptions,
    age: &'a Option<AgingSpec>,
) -> Result<Option<OneTarget<'a>>, Failure> {
    let target = &args.target;
    let Some(fs) = &target.fs else {
        return Ok(None);
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Failure::usage(anyhow!(
            "--fs {fs}: preparing a filesystem needs root (loop devices, mkfs, mount); run as root, or measure an existing directory with --dir"
        )));
    }
    let Some(filesystem) = fsbench_testbed::fs::by_name(fs) else {
        return Err(Failure::usage(anyhow!(
            "--fs: unknown filesystem '{fs}'; use one of {}",
            fsbench_testbed::fs::names()
        )));
    };
    let cache = target
        .cache
        .parse::<CachePolicy>()
        .map_err(|e| Failure::usage(anyhow!("--cache: {e}")))?;
    if let Some(e) = target
        .scheduler
        .as_deref()
        .and_then(fsbench_plan::plan::scheduler_error)
    {
        return Err(Failure::usage(anyhow!("--scheduler: {e}")));
    }
    let device = DeviceSpec::parse(&target.device, target.destroy_data_on.as_deref())?;
    // The layout, checked as the flags say it (the plan of the command would name its keys).
    let array = match &target.array {
        None => None,
        Some(text) => Some(
            text.parse::<ArraySpec>()
                .map_err(|e| Failure::usage(anyhow!("--array {text}: {e}")))?,
        ),
    };
    let real = match &device {
        DeviceSpec::Block { devices } => Some(devices.len()),
        DeviceSpec::Image { .. } => None,
    };
    fsbench_testbed::array::check_layout(filesystem, array.as_ref(), real).map_err(|e| {
        let flag = if array.is_some() {
            "--array"
        } else {
            "--device"
        };
        Failure::usage(anyhow!("{flag}: {e}"))
    })?;
    if age.is_some()
        && !matches!(
            device,
            DeviceSpec::Image {
                size_bytes: Some(_)
            }
        )
    {
        return Err(Failure::usage(anyhow!(
            "--age: an aged filesystem is made once, on an image, and copied for every run: give the image's size (--device image:SIZE, e.g. image:4g)"
        )));
    }
    Ok(Some(OneTarget {
        fs,
        mkfs_options: target.mkfs_options.as_deref(),
        mount_options: target.mount_options.as_deref(),
        scheduler: target.scheduler.as_deref(),
        cache,
        device,
        array: target.array.as_deref(),
        loop_direct_io: !target.loop_buffered,
        fsck: !target.no_fsck,
        age: age.as_ref(),
    }))
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
        if args.target.fs.is_some() && !args.target.device.starts_with("image") {
            return Err(Failure::usage(anyhow!(
                "--device under mpirun: every rank would format the same device; drop --device \
                 (each rank makes a loop device of its own on its host) or pass --dir"
            )));
        }
        if job.rank() != 0 {
            args.no_store = true;
            args.quiet = true;
            args.json = None;
            args.csv = None;
        }
    }
    let view = settings.grid();
    let unit = match (&view, args.unit.as_deref()) {
        (Some(view), key) => {
            Some(*grid::unit(view, key).map_err(|e| Failure::usage(anyhow!("--unit: {e}")))?)
        }
        (None, Some(_)) => {
            return Err(Failure::usage(anyhow!(
                "--unit: the {kind} workload prints a table, not a grid; drop --unit"
            )))
        }
        (None, None) => None,
    };
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
    let target = one_target(&args, &age)?;
    // The settings, checked as the user typed them (flags), before anything is made.
    let ctx = WorkloadContext {
        scale: args.scale,
        cache: target.as_ref().map_or(CachePolicy::Warm, |t| t.cache),
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
            crate::target::check_run_dir(dir, "--dir")?;
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
    })
    .map_err(|e| Failure::usage(anyhow!(e)))?;
    let case = &plan.cases[0];
    // The store opens before anything runs, so a bad --db fails in a second; --no-store keeps
    // the run in a database that is removed at the end.
    let scratch_db = if args.no_store {
        Some(tempfile::tempdir().context("cannot create a temporary directory for --no-store")?)
    } else {
        None
    };
    let db_path = match &scratch_db {
        Some(dir) => dir.path().join("results.db"),
        None => args.db.path(),
    };
    let mut store = Store::open(&db_path).map_err(Failure::usage)?;
    let stop = stop_on_signals();
    // The programs the workload starts (its tools) live in a cgroup made for the sample: said
    // once when none can be made here.
    let runs_programs = settings.apply(RunsPrograms);
    drop(crate::target::programs_cgroup(runs_programs));
    // Dropped after the sample's teardown (declared before it).
    let _guard = (args.target.fs.is_some() || runs_programs)
        .then(|| guard(&fsbench_testbed::target::state_dir(&plan.work_dir)))
        .flatten();

    // From here on, what happens is stored (a mistake found while making the ground ready is
    // not: the run is taken back).
    let key = match job {
        Some(job) => job_key(&case.key, job),
        None => case.key.clone(),
    };
    let host = host_json(job)?;
    let run_id = store
        .begin_run(&NewRun {
            started_at: &rfc3339_utc(unix_time_s()),
            plan_name: kind,
            plan_text: &plan.text,
            fsbench_version: env!("CARGO_PKG_VERSION"),
            host_json: &host,
            planned_samples: 1,
            overrides_json: None,
            scale: plan.scale,
        })
        .map_err(Failure::failed)?;
    let case_id = store
        .add_case(
            run_id,
            &key,
            0,
            &case.config,
            &serde_json::to_string(&case.workload).context("cannot encode the workload")?,
        )
        .map_err(Failure::failed)?;
    // Read now: a prepared target's mount is gone when the results are shown.
    let mount = plan
        .dir
        .as_deref()
        .and_then(mount_of)
        .map(|m| format!(" ({} {}, {})", m.fs_type, m.source, m.mount_options));
    let started = now_ns();
    let mut progress = WorkloadProgress::new(!args.quiet);
    let mut sampler = Sampler::new(&RealSystem, &plan, &EXECUTOR, stop.clone(), job);
    let mut recording = Recording::begin(
        case_id,
        1,
        sample_config(&case.workload, &sampler.context(case)),
    );
    let lead = job.is_some_and(|j| j.rank() == 0);
    let sampled = {
        let mut keep = |records: &[ResultRecord]| recording.keep(&mut store, records);
        sampler.sample(case, &mut progress, lead.then_some(&mut keep as Keep<'_>))
    };
    progress.finish();
    // The ranks met for the last time in the sample.
    *met = true;
    let result = match sampled {
        Sampled::Done(result) => *result,
        Sampled::Refused(reason) => {
            let _ = store.discard_run(run_id);
            return Err(Failure::usage(anyhow!(reason)));
        }
        Sampled::Interrupted => {
            let _ = store.discard_run(run_id);
            note!("fsbench {kind}: interrupted before the workload started; everything made was undone");
            return Ok(exit::INTERRUPTED);
        }
    };
    recording
        .finish(&mut store, &result)
        .map_err(Failure::failed)?;
    let state = match result.status {
        Outcome::Interrupted => RunState::Interrupted,
        _ => RunState::Complete,
    };
    store
        .finish_run(run_id, state, Some(&rfc3339_utc(unix_time_s())))
        .map_err(Failure::failed)?;
    let mut model = ReportModel::load(&store, &[run_id]).map_err(Failure::failed)?;
    if json.is_some() {
        model.load_series(&store, None).map_err(Failure::failed)?;
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
        let place = place(job, &plan, info, mount);
        let mut stdout = std::io::stdout().lock();
        let written = write_terminal(
            &mut stdout,
            &settings,
            &place,
            info,
            &result.results,
            view.zip(unit).filter(|_| args.sweep.is_none()),
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
            db_path.display()
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

/// Where a one-case run ran, as its first line says: the directory (or the target's mount
/// point) with its filesystem, source and options; in a job, the ranks' places.
fn place(
    job: Option<&dyn fsbench_scale::Collective>,
    plan: &Plan,
    target: Option<&TargetInfo>,
    dir_mount: Option<String>,
) -> String {
    let mount = match (target, dir_mount) {
        (Some(t), _) => t.mount.as_ref().map(|m| {
            let source = t
                .device
                .path
                .as_ref()
                .map_or_else(|| "-".to_string(), |p| p.display().to_string());
            format!(" ({} {source}, {})", m.fs_type, m.mount_options)
        }),
        (None, mount) => mount,
    };
    let mount = printable(&mount.unwrap_or_default()).into_owned();
    let dir = plan
        .dir
        .clone()
        .or_else(|| target.map(|t| t.mountpoint.clone()))
        .unwrap_or_default();
    match job {
        Some(job) if target.is_some() => format!(
            "{} ranks, each on a filesystem of its own{mount}",
            job.size()
        ),
        Some(job) => format!(
            "{} ranks in {}/rank-0..{}{mount}",
            job.size(),
            printable_path(&dir),
            job.size() - 1
        ),
        None => format!("{}{mount}", printable_path(&dir)),
    }
}

/// The terminal view of a one-case run: where it ran, at what scale, the target, then the
/// workload's grid or its table.
#[allow(clippy::too_many_arguments)]
fn write_terminal(
    out: &mut dyn Write,
    settings: &WorkloadSettings,
    place: &str,
    target: Option<&TargetInfo>,
    records: &[fsbench_model::ResultRecord],
    grid_view: Option<(
        fsbench_workload::workload::GridView,
        fsbench_workload::workload::GridUnit,
    )>,
    scale: f64,
    elapsed_ns: u64,
    spread: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "fsbench {} on {place}: {} in {}",
        settings.kind(),
        results(records.len()),
        human_duration(elapsed_ns)
    )?;
    if scale < 1.0 {
        writeln!(
            out,
            "Scale {scale}: sizes, counts and minimum times were shrunk (--scale or FSBENCH_SCALE); compare only with runs of the same scale."
        )?;
    }
    if let Some(target) = target {
        write_target(out, target)?;
    }
    match grid_view {
        Some((view, unit)) => grid::write_grids(out, &view, &unit, records, spread),
        None => {
            grid::write_table(out, records, settings.table_columns())?;
            grid::write_curves(out, records)
        }
    }
}
