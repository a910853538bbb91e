//! Every workload command (`fsbench matrix`, `fsbench metadata`, `fsbench sleep`, ...) is a
//! one-case run: settings -> check -> the filesystem (prepared with --fs, or the directory's
//! own) -> preflight -> the workload, in this process -> the target finished (fsck) -> one
//! stored sample -> the report model -> terminal (the workload's grid, or its table), JSON and
//! CSV, exactly what `fsbench export RUN` writes.
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
use crate::target::{guard, spec_from as target_spec_from, stop_on_signals};
use anyhow::{anyhow, Context};
use fsbench_measure::clock::{now_ns, rfc3339_utc, unix_time_s};
use fsbench_measure::host::{mount_of, HostInfo};
use fsbench_measure::units::human_duration;
use fsbench_model::{Outcome, ResultRecord, RunState};
use fsbench_plan::plan::{Case, CaseConfig, DEFAULT_PLATFORM};
use fsbench_plan::workload::{sample_config, PlannedWorkload};
use fsbench_report::grid;
use fsbench_report::target::write_target;
use fsbench_report::terminal::{printable, printable_path};
use fsbench_report::{Csv, Exporter, Json, ReportModel};
use fsbench_store::{NewRun, NewSample, Store};
use fsbench_testbed::cgroup::SampleProcesses;
use fsbench_testbed::ledger::Ledger;
use fsbench_testbed::{CachePolicy, RealSystem, Target, TargetError, TargetInfo};
use fsbench_workload::workload::{Check, KeepsFiles, Preflight, RunsPrograms, SharesDir};
use fsbench_workload::{Context as WorkloadContext, Sink, WorkloadError, WorkloadSettings};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A workload error in command-line terms: a setting is named by its flag (`--file-sizes`).
fn in_flags(error: &WorkloadError) -> String {
    error.naming(|field| format!("--{}", field.replace('_', "-")))
}

/// A workload error found before anything ran: a usage error, in flag terms.
pub fn usage_error(error: WorkloadError) -> Failure {
    Failure::usage(anyhow!(in_flags(&error)))
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

/// Stores merged records as a job's phases end (rank 0).
type Keep<'k> = dyn FnMut(&[ResultRecord]) + 'k;

/// The run's sink on a target fsbench prepared: a request for a cold cache remounts it. In a
/// job, every phase starts when every rank is there, after rank 0 has got and kept what every
/// rank measured in the phases before.
struct OnTarget<'p, 's> {
    progress: &'p mut WorkloadProgress,
    target: Option<&'p mut Target<'s>>,
    job: Option<&'p dyn fsbench_scale::Collective>,
    /// This rank has met the others for the last time before the gather: it said it was done,
    /// or learnt that another rank was.
    left: bool,
    /// This rank's host, as a job's reports name it.
    host: String,
    /// How many of this rank's records rank 0 has.
    shared: usize,
    /// At rank 0: every rank's records merged, as far as every rank has them.
    merged: Vec<ResultRecord>,
    /// At rank 0: stores each phase's merged records as they come, so a job that is killed
    /// keeps them.
    keep: Option<&'p mut Keep<'p>>,
    /// Why a merge between phases failed, if one did.
    merge_error: Option<String>,
    /// In a phase with a first-done stonewall: whether this rank said it is done, and how
    /// many other ranks have said so.
    announced: bool,
    heard: u32,
}

impl Sink for OnTarget<'_, '_> {
    fn record(&mut self, record: ResultRecord, done: usize, total: Option<usize>) {
        self.progress.record(record, done, total);
    }
    fn warning(&mut self, message: &str) {
        self.progress.warning(message);
    }
    fn status(&mut self, line: &str) {
        self.progress.status(line);
    }
    fn cold(&mut self) -> Result<String, String> {
        match self.target.as_mut() {
            Some(target) => target.remount_cold().map_err(|e| e.to_string()),
            None => fsbench_workload::workload::drop_caches(),
        }
    }
    fn phase_start(&mut self) -> bool {
        let Some(job) = self.job else {
            return true;
        };
        if self.left {
            return false;
        }
        // Every rank still running says true; one that ended says false once, and the others
        // stop with it (their workload ends as interrupted). Ranks done with the last phase
        // wait here for the others, idle: they take no CPU from a rank still measuring.
        if !job.all_ok_idle(true) {
            self.left = true;
            return false;
        }
        // Every rank goes on: rank 0 gets and keeps what each measured since the last phase
        // (outside any timed phase), then all start the next one together.
        self.share(job);
        job.all_ok(true)
    }
    fn phase_poll(&mut self, wall: &std::sync::atomic::AtomicBool, finished: bool) {
        use std::sync::atomic::Ordering;
        let Some(job) = self.job else {
            return;
        };
        // Done here (a thread made its share, or another rank's word raised the wall, or every
        // thread has ended): every rank says so exactly once per phase.
        if !self.announced && (finished || wall.load(Ordering::Relaxed)) {
            job.announce_done();
            self.announced = true;
        }
        self.heard += job.heard_done();
        if self.heard > 0 {
            wall.store(true, Ordering::Relaxed);
        }
        if finished {
            job.await_done((job.size() - 1).saturating_sub(self.heard));
            self.announced = false;
            self.heard = 0;
        }
    }
    fn phase_start_after(
        &mut self,
        setup: &mut dyn FnMut() -> Result<(), WorkloadError>,
    ) -> Result<bool, WorkloadError> {
        let Some(job) = self.job else {
            setup()?;
            return Ok(true);
        };
        if self.left {
            return Ok(false);
        }
        if !job.all_ok_idle(true) {
            self.left = true;
            return Ok(false);
        }
        // Every rank has ended the previous phase: the setup runs while none measures, and
        // the next phase starts only if it went well on every rank.
        self.share(job);
        let done = setup();
        let all = job.all_ok(done.is_ok());
        done.map(|()| all)
    }
}

impl OnTarget<'_, '_> {
    /// Sends rank 0 this rank's records it has not got yet; at rank 0, merges and keeps them.
    fn share(&mut self, job: &dyn fsbench_scale::Collective) {
        let report = fsbench_scale::RankReport {
            rank: job.rank(),
            host: self.host.clone(),
            failure: None,
            stopped_with_the_job: false,
            records: self.progress.records[self.shared..].to_vec(),
        };
        self.shared = self.progress.records.len();
        match fsbench_scale::gather_and_merge_phase(job, &report) {
            Some(Ok(merged)) if !merged.records.is_empty() => {
                if let Some(keep) = self.keep.as_mut() {
                    keep(&merged.records);
                }
                self.merged.extend(merged.records);
            }
            Some(Err(e)) => self.merge_error = Some(e.to_string()),
            _ => {}
        }
    }

    /// After the workload: a rank that has not left yet tells the others it is done (the call
    /// that meets their next phase start, or their own end).
    fn leave(&mut self) -> bool {
        let stopped_by_another = self.left;
        if let (Some(job), false) = (self.job, self.left) {
            job.all_ok_idle(false);
            self.left = true;
        }
        stopped_by_another
    }
}

/// The case of a one-case run: the configuration as the campaign's cases name theirs, so it
/// reports, exports and compares alike. A directory's filesystem is what its mount says, its
/// option sets `existing`.
fn case_of(
    settings: &WorkloadSettings,
    args: &RunOptions,
    cache: CachePolicy,
    dir: Option<&Path>,
) -> Case {
    let set = |options: &Option<String>| match options.as_deref() {
        None | Some("") => ("default".to_string(), String::new()),
        Some(options) => ("given".to_string(), options.to_string()),
    };
    let config = match (&args.target.fs, dir) {
        (Some(fs), _) => {
            let (mkfs_set, mkfs_options) = set(&args.target.mkfs_options);
            let (mount_set, mount_options) = set(&args.target.mount_options);
            CaseConfig {
                filesystem: fsbench_testbed::fs::by_name(fs)
                    .map_or(fs.clone(), |f| f.name().to_string()),
                mkfs_set,
                mkfs_options,
                mount_set,
                mount_options,
                scheduler: args.target.scheduler.clone(),
                platform: DEFAULT_PLATFORM.into(),
                image_in_ram: false,
                cpu_percent: None,
                cache,
            }
        }
        (None, dir) => CaseConfig::of_directory(dir, cache),
    };
    let mut case = Case {
        key: String::new(),
        position: 0,
        config,
        workload: PlannedWorkload {
            name: settings.kind().to_string(),
            sweep: args.sweep.clone(),
            settings: settings.clone(),
        },
    };
    case.key = case.key_of();
    case
}

/// The reason of the sample rank 0 keeps while a job runs: what remains if the job is killed.
const JOB_ENDED: &str = "the job ended before it finished: a rank died or was killed, and \
mpirun ended the others (its message names the rank and its host); these are the results of \
the phases every rank finished";

/// What a one-case run stores as its plan text: the command, for provenance (it is not a plan
/// to resume: the command is run again instead).
pub const ONE_CASE_MARK: &str = "# one-case run:";

fn plan_text(kind: &str, case: &Case, dir: &Path, scale: f64) -> String {
    format!(
        "{ONE_CASE_MARK} fsbench {kind}\n# case {}\n# directory {}\n# scale {scale}\n# workload {}\n",
        case.key,
        dir.display(),
        serde_json::to_string(&case.workload).unwrap_or_default()
    )
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
        if kind == "task" {
            return Err(Failure::usage(anyhow!(
                "the task workload does not run under mpirun: its tools are not ranks"
            )));
        }
        let shares_dir = settings.apply(SharesDir);
        if shares_dir && args.target.fs.is_some() {
            return Err(Failure::usage(anyhow!(
                "--shared-file with --fs: every rank would have a filesystem (and a file) of its \
                 own; pass --dir, a directory every rank sees"
            )));
        }
        if let Some(dir) = args.dir.as_ref().filter(|_| !shares_dir) {
            let mine = dir.join(format!("rank-{}", job.rank()));
            std::fs::create_dir_all(&mine)
                .with_context(|| format!("cannot create {}", mine.display()))?;
            args.dir = Some(mine);
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
    let mut target_spec = target_spec_from(&args.target)?;
    // The ranks on one host make their targets at once: each takes its share of the free space,
    // and zfs, whose one daemon per host serves one pool at a time, is one rank per host.
    let local_ranks = job.and(fsbench_scale::launched_local_size()).unwrap_or(1);
    if let Some(spec) = target_spec.as_mut() {
        spec.host_share = local_ranks;
        if local_ranks > 1 && spec.fs.name() == "zfs" {
            return Err(Failure::usage(anyhow!(
                "--fs zfs under mpirun with {local_ranks} ranks on this host: its one zfs-fuse \
                 daemon serves one target at a time; start one rank per host (mpirun \
                 --map-by ppr:1:node) or pass --dir"
            )));
        }
    }
    let cache = target_spec.as_ref().map_or(CachePolicy::Warm, |t| t.cache);
    let ctx = WorkloadContext {
        scale: args.scale,
        cache,
        // --fs makes a filesystem for this run alone.
        disposable: target_spec.is_some(),
        job: job.map(|job| fsbench_workload::workload::Place {
            rank: job.rank(),
            ranks: job.size(),
        }),
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

    // The filesystem under test: prepared by fsbench (--fs), or the directory's own.
    let system = RealSystem;
    let mut not_run: Option<TargetError> = None;
    // The programs the workload starts (its tools) live in a cgroup made for the sample; the
    // command itself stays out, so ending the cgroup ends them and not it.
    let runs_programs = settings.apply(RunsPrograms);
    let cgroup = crate::target::programs_cgroup(runs_programs);
    let state_dir = fsbench_testbed::target::state_dir(&args.target.work.work_dir);
    // Dropped after the target's teardown (declared before it).
    let _guard = (target_spec.is_some() || cgroup.is_some())
        .then(|| guard(&state_dir))
        .flatten();
    let mut target = match target_spec {
        Some(spec) => match Target::prepare(&system, spec, &|| stop.is_requested()) {
            Ok(target) => Some(target),
            Err(TargetError::Interrupted) => {
                note!("fsbench {kind}: interrupted while preparing the target; everything made was undone");
                return Ok(exit::INTERRUPTED);
            }
            Err(error) if error.outcome().is_none() => return Err(error.into()),
            Err(error) => {
                not_run = Some(error);
                None
            }
        },
        None => None,
    };
    if let Some(target) = target.as_mut() {
        if let Err(error) = target.apply_cache_policy() {
            not_run = Some(error);
        }
    }

    // The directory: the target's mount point, the user's, or a temporary one removed afterwards.
    let temporary = match (&args.dir, &target, &not_run) {
        (None, None, None) => Some(
            tempfile::Builder::new()
                .prefix(&format!("fsbench-{kind}-"))
                .tempdir()
                .context("cannot create a temporary directory; pass --dir")?,
        ),
        _ => None,
    };
    let dir: PathBuf = match (&args.dir, &target, &temporary) {
        (Some(dir), _, _) => dir.clone(),
        (None, Some(target), _) => target.mountpoint().to_path_buf(),
        (None, None, Some(tmp)) => tmp.path().to_path_buf(),
        (None, None, None) => args.target.work.work_dir.clone(),
    };
    let preflight = not_run
        .is_none()
        .then(|| settings.apply(Preflight(&ctx, &dir)));
    // Every rank starts, or none: a rank that cannot start (its target, its directory) would
    // leave the others waiting. Each rank tears its own target down on the way out.
    if let Some(job) = job {
        let ready = preflight.as_ref().is_some_and(Result::is_ok);
        if !job.all_ok(ready) {
            if ready {
                return Err(Failure::usage(anyhow!(
                    "another rank could not start the workload (its error is above); nothing ran"
                )));
            }
            if let Some(error) = not_run {
                return Err(error.into());
            }
        }
    }
    if let Some(preflight) = preflight {
        preflight.map_err(usage_error)?;
    }

    // From here on, what happens is stored.
    let mut case = case_of(
        &settings,
        &args,
        cache,
        (args.target.fs.is_none()).then_some(dir.as_path()),
    );
    let mut host = serde_json::to_value(HostInfo::probe()).context("cannot encode the host")?;
    if let Some(job) = job {
        // A job's results never pool with one process's: the key names the ranks.
        case.key = format!("{}.np{}", case.key, job.size());
        if let Some(all) = fsbench_scale::gather_hosts(job, &host) {
            host = all.map_err(Failure::failed)?;
        }
    }
    let host = host.to_string();
    let started_at = rfc3339_utc(unix_time_s());
    let run_id = store
        .begin_run(&NewRun {
            started_at: &started_at,
            plan_name: kind,
            plan_text: &plan_text(kind, &case, &dir, args.scale),
            fsbench_version: env!("CARGO_PKG_VERSION"),
            host_json: &host,
            planned_samples: 1,
        })
        .map_err(Failure::failed)?;
    let case_id = store
        .add_case(
            run_id,
            &case.key,
            0,
            &serde_json::to_string(&case.config).context("cannot encode the case")?,
            &serde_json::to_string(&case.workload).context("cannot encode the workload")?,
        )
        .map_err(Failure::failed)?;

    // Read now: a prepared target's mount is gone when the results are shown.
    let mount = mount_of(&dir)
        .map(|m| {
            let text = format!(" ({} {}, {})", m.fs_type, m.source, m.mount_options);
            printable(&text).into_owned()
        })
        .unwrap_or_default();
    let started = now_ns();
    let mut progress = WorkloadProgress::new(!args.quiet);
    let (outcome, mut reason, seed, kept, info) = match not_run {
        Some(error) => {
            let outcome = error.outcome().unwrap_or(Outcome::Failed);
            // The status says "unsupported" already: the reason is the rest.
            let reason = match &error {
                TargetError::Unsupported(reason) => reason.clone(),
                other => other.to_string(),
            };
            let info = target.map(Target::finish);
            (outcome, Some(reason), None, Vec::new(), info)
        }
        None => {
            // At rank 0 of a job: what every rank has measured, stored as each phase ends (as a
            // failed sample: if the job is killed, that is what it was); the final sample
            // replaces it.
            let config = sample_config(&case.workload, &ctx);
            let mut kept: Option<i64> = None;
            // Everything kept so far: after a failed append, the next phase stores it all again.
            let mut so_far: Vec<ResultRecord> = Vec::new();
            let mut keep = |records: &[ResultRecord]| {
                so_far.extend_from_slice(records);
                let stored = match kept {
                    Some(id) => store.append_results(id, records).map(|()| id),
                    None => store.replace_sample(
                        case_id,
                        &NewSample {
                            repetition: 1,
                            status: Outcome::Failed,
                            reason: Some(JOB_ENDED),
                            started_at: &started_at,
                            elapsed_ns: now_ns() - started,
                            target_json: None,
                            results: &so_far,
                            seed: None,
                            warnings: &[],
                            config_json: Some(&config),
                        },
                    ),
                };
                kept = stored.ok();
            };
            let hostname = HostInfo::probe().hostname;
            let mut sink = OnTarget {
                progress: &mut progress,
                target: target.as_mut(),
                job,
                left: false,
                host: hostname.clone(),
                shared: 0,
                merged: Vec::new(),
                keep: job
                    .filter(|j| j.rank() == 0)
                    .map(|_| &mut keep as &mut dyn FnMut(&[ResultRecord])),
                merge_error: None,
                announced: false,
                heard: 0,
            };
            let mut record = Ledger::new(
                Some(&state_dir),
                &format!("sample-{}-0", std::process::id()),
            );
            let processes =
                runs_programs.then(|| SampleProcesses::start(&system, &mut record, cgroup));
            if let Some(cgroup) = processes.as_ref().and_then(SampleProcesses::cgroup) {
                fsbench_workload::task::timing::put_tools_in(&cgroup.procs_files());
            }
            let mut end = case.workload.run(&ctx, &dir, &stop, &mut sink);
            // Nothing the sample started runs on (before its target is unmounted).
            if let Some(processes) = processes {
                fsbench_workload::task::timing::put_tools_in(&[]);
                if let Err(e) = processes.end(&system, &mut record) {
                    note!("warning: the processes the workload started did not all end: {e}");
                }
            }
            let stopped_by_another = sink.leave();
            let (shared, merged_before, merge_error) = (
                sink.shared,
                std::mem::take(&mut sink.merged),
                sink.merge_error.take(),
            );
            progress.finish();
            if let Some(job) = job {
                let mine = fsbench_scale::RankReport {
                    rank: job.rank(),
                    host: hostname,
                    failure: end.error.as_ref().map(in_flags).or_else(|| {
                        (end.outcome != Outcome::Ok).then(|| end.outcome.name().to_string())
                    }),
                    stopped_with_the_job: stopped_by_another,
                    records: progress.records[shared..].to_vec(),
                };
                let merged = fsbench_scale::gather_and_merge(job, &mine);
                *met = true;
                match merged {
                    // Another rank: its own records stay, for its own exit status.
                    None => {}
                    // What was merged before the failed merge is the job's result: rank 0's
                    // own records are not (nor do they replace what was kept).
                    Some(Ok(_)) if merge_error.is_some() => {
                        progress.records = merged_before;
                        end.outcome = Outcome::Failed;
                        end.error = merge_error.map(WorkloadError::Job);
                    }
                    Some(Ok(merged)) => {
                        progress.records = merged_before;
                        progress.records.extend(merged.records);
                        if !merged.failures.is_empty() {
                            end.outcome = Outcome::Failed;
                            end.error = Some(WorkloadError::Job(format!(
                                "the job of {} ranks did not finish: {}; the results every \
                                 rank has are kept",
                                job.size(),
                                merged.failures.join("; ")
                            )));
                        }
                    }
                    Some(Err(e)) => {
                        progress.records = merged_before;
                        end.outcome = Outcome::Failed;
                        end.error = Some(WorkloadError::Job(e.to_string()));
                    }
                }
            }
            // Before teardown: is the disk under the image full (then that is why)?
            let host_full = target.as_ref().and_then(Target::host_full_hint);
            let info: Option<TargetInfo> = target.map(Target::finish);
            let reason = end.error.map(|e| {
                let said = in_flags(&e);
                match &host_full {
                    Some(hint) => format!("{hint} (the workload saw: {said})"),
                    None => said,
                }
            });
            (end.outcome, reason, end.seed, end.kept, info)
        }
    };
    let mut outcome = outcome;
    if let Some(fsck) = info.as_ref().and_then(|t| t.fsck.as_ref()) {
        let check = settings.check_result(&fsck.command, fsck.elapsed_ns);
        progress.records.extend(check);
    }
    if let Some(fsck) = info
        .as_ref()
        .and_then(|t| t.fsck.as_ref())
        .filter(|f| !f.clean)
    {
        if outcome == Outcome::Ok {
            outcome = Outcome::Failed;
            reason = Some(format!(
                "the filesystem check after the run found problems: `{}` exited {:?}: {}; the results are stored, but the filesystem was damaged",
                fsck.command,
                fsck.exit_status,
                fsck.output_tail.replace('\n', " / ")
            ));
        }
    }
    let target_json = info
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .context("cannot encode the target")?;
    let ran = outcome == Outcome::Ok || !progress.records.is_empty();
    let config = ran.then(|| sample_config(&case.workload, &ctx));
    store
        .replace_sample(
            case_id,
            &NewSample {
                repetition: 1,
                status: outcome,
                reason: reason.as_deref(),
                started_at: &started_at,
                elapsed_ns: now_ns() - started,
                target_json: target_json.as_deref(),
                results: &progress.records,
                seed,
                warnings: &progress.warnings,
                config_json: config.as_deref(),
            },
        )
        .map_err(Failure::failed)?;
    let state = match outcome {
        Outcome::Interrupted => RunState::Interrupted,
        _ => RunState::Complete,
    };
    store
        .finish_run(run_id, state, Some(&rfc3339_utc(unix_time_s())))
        .map_err(Failure::failed)?;
    let model = ReportModel::load(&store, &[run_id]).map_err(Failure::failed)?;
    // Each export is tried, even when one before it failed.
    exit::all_of(
        [(json, &Json as &dyn Exporter), (csv, &Csv)]
            .into_iter()
            .filter_map(|(file, exporter)| {
                file.map(|f| f.write(|out| exporter.write(&model, out)))
            }),
    )?;
    let elapsed = now_ns() - started;
    // The terminal comes after the exports: a closed pipe (`| head`) must not cost the results.
    // An export on standard output takes its place.
    let exports_on_stdout = is_stdout(args.json.as_deref()) || is_stdout(args.csv.as_deref());
    if !args.quiet && !exports_on_stdout && !progress.records.is_empty() {
        let mut stdout = std::io::stdout().lock();
        let written = write_terminal(
            &mut stdout,
            &settings,
            &match job {
                Some(job) if args.dir.is_some() => format!(
                    "{} ranks in {}/rank-0..{}{mount}",
                    job.size(),
                    printable_path(dir.parent().unwrap_or(&dir)),
                    job.size() - 1
                ),
                Some(job) if args.target.fs.is_some() => format!(
                    "{} ranks, each on a filesystem of its own{mount}",
                    job.size()
                ),
                Some(job) => format!("{} ranks, each in a temporary directory{mount}", job.size()),
                None => format!("{}{mount}", printable_path(&dir)),
            },
            info.as_ref(),
            &progress.records,
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
    for path in &kept {
        note!("kept the last test file: {}", path.display());
        if let Some(tmp) = temporary {
            let _ = tmp.keep();
            break;
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
        results(progress.records.len()),
        human_duration(elapsed)
    );
    let reason = reason.unwrap_or_default();
    match outcome {
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
