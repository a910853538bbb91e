//! One sample's life, written once for a campaign's samples and a workload command alike:
//! the case is checked against what the workload and the job allow; its ground is made ready —
//! a target prepared (or kept from an earlier sample) with its cache policy applied, or the
//! plan's directory checked — and, in a job, every rank's ground is ready or none runs; the
//! sample's processes get a cgroup and, in a user's directory, the sample a directory of its
//! own, both on record; the workload runs through the [`Executor`] with a [`SampleHarness`]
//! answering what it asks (a cold cache; in a job, each phase started with every rank, rank 0
//! keeping what every rank measured as each phase ends); then everything the sample started is
//! ended, the ground released, the target finished (fsck, whose verdict can fail the sample),
//! and in a job rank 0 merges every rank's results into one.
//!
//! What to store and whether to go on is the caller's ([`crate::runner`] for campaigns, the
//! CLI for a command): the sampler returns a [`Sampled`].

use crate::executor::{Bounds, Executor};
use crate::observe::{self, Observed, Observer, PhaseLog};
use crate::plan::{Case, Plan, Remake};
use crate::workload::Job;
use fsbench_measure::host::ProbeHost;
use fsbench_measure::series::Outlet;
use fsbench_model::series::{Assessment, PhaseBatch, Series};
use fsbench_model::{CachePolicy, Outcome, ResultRecord};
use fsbench_scale::Collective;
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::cgroup::{Cgroup, SampleProcesses};
use fsbench_testbed::ledger::Ledger;
use fsbench_testbed::scratch::SampleDir;
use fsbench_testbed::{cache, DeviceSpec, System, Target, TargetError, TargetInfo, TargetSpec};
use fsbench_workload::harness::{CrashState, Cut, CutError, PowerBudget, StateCheck};
use fsbench_workload::workload::{
    KeepsFiles, Preflight, RecordedBytes, RecordsWrites, Room, RunsPrograms, SharesDir,
};
use fsbench_workload::{Context, Harness, Sink, StopFlag};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// What one sample produced.
#[derive(Debug, Clone)]
pub struct SampleResult {
    pub status: Outcome,
    /// Why it did not end ok (the status says "unsupported" already: the reason is the rest).
    pub reason: Option<String>,
    /// The case is known unsupported from an earlier sample: this one was not tried, and its
    /// reason is that sample's.
    pub not_retried: bool,
    /// Every result, in the order the workload produced them (merged over every rank in a
    /// job, at rank 0), with the filesystem check when the workload reports it.
    pub results: Vec<ResultRecord>,
    /// What the reader of the results must know.
    pub warnings: Vec<String>,
    pub seed: Option<u64>,
    /// What the workload left on purpose (the matrix's `--keep`).
    pub kept: Vec<PathBuf>,
    /// The target's read-back (None in a directory, or when nothing was prepared).
    pub target: Option<Box<TargetInfo>>,
    /// The workload ran (its configuration as it ran is stored then).
    pub ran: bool,
    /// Its phases' series and the host monitors', on the sample's time axis (in a job, every
    /// rank's and the job's total, at rank 0).
    pub series: Vec<Series>,
    /// What the series say of it (None when nothing was watched).
    pub assessment: Option<Assessment>,
}

/// At rank 0 of a job: stores what every rank has measured as each phase ends, so a job that is
/// killed keeps it.
pub type Keep<'k> = &'k mut dyn FnMut(&[ResultRecord]);

impl SampleResult {
    /// A sample that did not run: `status` and why.
    pub fn not_run(status: Outcome, reason: impl Into<String>) -> SampleResult {
        SampleResult {
            status,
            reason: Some(reason.into()),
            not_retried: false,
            results: Vec::new(),
            warnings: Vec::new(),
            seed: None,
            kept: Vec::new(),
            target: None,
            ran: false,
            series: Vec::new(),
            assessment: None,
        }
    }
}

/// How a sample ended, for the caller to store or not.
#[derive(Debug)]
pub enum Sampled {
    /// It ran (or was found unsupported, or failed before it could run): a result to store.
    /// An `Interrupted` status keeps what finished before the stop.
    Done(Box<SampleResult>),
    /// A mistake in the request (a refused device, a directory the workload cannot use):
    /// nothing ran. A campaign stores it as a failed sample; a command exits 2, storing
    /// nothing.
    Refused(String),
    /// A stop came before the workload started (or, in a job, another rank's did): nothing to
    /// store.
    Interrupted,
}

/// What a recorded target's key adds to its configuration's ([`Sampler::target_key`]).
const RECORDED: &str = "#recorded";

/// Runs samples, one at a time, keeping the targets that serve several (`remake_target`).
pub struct Sampler<'s> {
    pub system: &'s dyn System,
    pub plan: &'s Plan,
    pub executor: &'s dyn Executor,
    pub stop: StopFlag,
    /// The MPI job this process is one rank of; None alone.
    pub job: Option<&'s dyn Collective>,
    /// Targets kept for later samples, by [`Sampler::target_key`].
    kept: HashMap<String, Target<'s>>,
}

impl<'s> Sampler<'s> {
    pub fn new(
        system: &'s dyn System,
        plan: &'s Plan,
        executor: &'s dyn Executor,
        stop: StopFlag,
        job: Option<&'s dyn Collective>,
    ) -> Sampler<'s> {
        Sampler {
            system,
            plan,
            executor,
            stop,
            job,
            kept: HashMap::new(),
        }
    }

    /// The key of the target a case runs on when targets are kept: its configuration's (made
    /// per configuration) or its own. A workload on the recording device (power cuts) has a
    /// target of its own beside its configuration's: the two are never one filesystem.
    pub fn target_key(&self, case: &Case) -> String {
        match self.plan.remake {
            Remake::Configuration if case.workload.settings.apply(RecordsWrites) => {
                format!("{}{RECORDED}", case.config_key())
            }
            Remake::Configuration => case.config_key(),
            Remake::Sample | Remake::Never => case.key.clone(),
        }
    }

    /// Finishes (fsck included) the kept targets not of the configuration `except` (its key,
    /// whose targets are its plain and its recorded one), returning each key with its
    /// read-back (the verdict belongs to the last sample on it).
    pub fn finish_kept(&mut self, except: Option<&str>) -> Vec<(String, TargetInfo)> {
        let of_except =
            |k: &str| except.is_some_and(|e| k == e || k.strip_suffix(RECORDED) == Some(e));
        let done: Vec<String> = self
            .kept
            .keys()
            .filter(|k| !of_except(k))
            .cloned()
            .collect();
        done.into_iter()
            .filter_map(|k| self.kept.remove(&k).map(|t| (k, t.finish())))
            .collect()
    }

    /// The workload's context of a case: the plan's, with this process's place in the job.
    pub fn context(&self, case: &Case) -> Context {
        Context {
            job: self.job.map(|job| fsbench_workload::workload::Place {
                rank: job.rank(),
                ranks: job.size(),
            }),
            ..self.plan.context(case)
        }
    }

    /// One repetition of `case`: its results and progress go to `sink` as they exist; in a job,
    /// `keep` stores at rank 0 what every rank has measured as each phase ends.
    pub fn sample(&mut self, case: &Case, sink: &mut dyn Sink, keep: Option<Keep<'_>>) -> Sampled {
        let job = self.job;
        let host = fsbench_measure::host::HostInfo::probe().hostname;
        // What the case asks that the workload or the job cannot do: refused before anything
        // is made (agreed like a target in a job: every rank sees the same case).
        let local_ranks = job.and(fsbench_scale::launched_local_size()).unwrap_or(1);
        let refusal = refusal(self.plan, case, job.map(|j| (j, local_ranks)));
        // The sample's processes live in a cgroup made for it, with the platform's CPU share as
        // its quota; a host without one runs them under a reaper, unless a quota was asked.
        let cpu_percent = case.config.cpu_percent;
        let needs_cgroup = self.executor.separate_process()
            || case.workload.settings.apply(RunsPrograms)
            || cpu_percent.is_some();
        // The cgroup itself is made once the ground is ready, and goes on record at once: made
        // now, it would be on no record while the target is made (mkfs, aging: minutes), and a
        // kill then would leave it. A quota the host cannot give is found now, by a cgroup made
        // and removed at once, before anything is prepared for the sample.
        let no_quota = match refusal {
            Some(why) => Some(TargetError::Unsupported(why)),
            None if needs_cgroup && cpu_percent.is_some() => Cgroup::new(cpu_percent).err(),
            None => None,
        };
        let key = self.target_key(case);
        let mut fresh = None;
        let ready = match no_quota {
            Some(e) => Err(e),
            None => ready_ground(self, case, &key, &mut fresh, local_ranks, &mut |line| {
                sink.status(line)
            }),
        };
        let (system, plan, executor, stop) = (self.system, self.plan, self.executor, &self.stop);
        let ctx = self.context(case);
        let kept = &mut self.kept;
        let ready = ready.map(|ground| match ground {
            Ready::Fresh => Ground::Target(fresh.as_mut().expect("prepared")),
            Ready::Kept => Ground::Target(kept.get_mut(&key).expect("kept")),
            Ready::Dir { dir, made } => Ground::Dir { dir, made },
        });
        let agreed = match job {
            None => ready.map_err(NotReady::of),
            Some(job) => every_rank_ready(job, &host, ready),
        };
        let mut ground = match agreed {
            Ok(ground) => ground,
            Err(not) => return not.into_sampled(fresh.map(Target::finish)),
        };
        // What the sample makes on the host beyond its target — its cgroup, its own directory
        // in the user's — is on record from the moment it exists: a killed fsbench's guard and
        // `fsbench cleanup` end and remove it.
        static SAMPLES: AtomicU32 = AtomicU32::new(0);
        let mut record = Ledger::new(
            Some(&fsbench_testbed::target::state_dir(&plan.work_dir)),
            &format!(
                "sample-{}-{}",
                std::process::id(),
                SAMPLES.fetch_add(1, Ordering::Relaxed)
            ),
        );
        let settings = &case.workload.settings;
        let (dir, own) = match &ground {
            Ground::Target(target) => (target.mountpoint().to_path_buf(), Ok(None)),
            // A file the ranks of a job share is in the directory every rank sees; a file the
            // workload keeps stays where the user can find it.
            Ground::Dir { dir, .. }
                if (job.is_some() && settings.apply(SharesDir)) || settings.apply(KeepsFiles) =>
            {
                (dir.clone(), Ok(None))
            }
            // In a user's directory the sample works in a directory of its own, so whatever a
            // killed or timed-out workload leaves goes with it.
            Ground::Dir { dir, .. } => (
                dir.clone(),
                SampleDir::make(system, &mut record, dir)
                    .map(Some)
                    .map_err(|e| format!("cannot create a directory in {}: {e}", dir.display())),
            ),
        };
        let collected = RefCell::new(Collected::default());
        let mut phases = job.map(|job| RankPhases {
            job,
            host: host.clone(),
            left: false,
            stopped_by_another: false,
            in_setup: false,
            announced: false,
            heard: 0,
            shared: 0,
            merged: Vec::new(),
            merge_error: None,
            keep,
        });
        let job_spec = Job {
            workload: case.workload.clone(),
            context: ctx,
        };
        let mut observed = Observed::default();
        // Without a quota, a host without cgroups runs the processes under a reaper.
        let cgroup = match (own.is_ok() && needs_cgroup).then(|| Cgroup::new(cpu_percent)) {
            Some(Err(e)) if cpu_percent.is_some() => Err(e.to_string()),
            Some(made) => Ok(made.ok()),
            None => Ok(None),
        };
        let mut end = match (own, cgroup) {
            (Err(reason), _) => crate::executor::Executed {
                status: Outcome::Failed,
                reason: Some(reason),
                seed: None,
                kept: Vec::new(),
            },
            // The quota the probe above could give, the host no longer can.
            (Ok(own), Err(reason)) => {
                if let Some(Err(e)) = own.map(|own| own.remove(system, &mut record)) {
                    collected
                        .borrow_mut()
                        .warnings
                        .push(format!("the sample's directory stays: {e}"));
                }
                crate::executor::Executed {
                    status: Outcome::Failed,
                    reason: Some(reason),
                    seed: None,
                    kept: Vec::new(),
                }
            }
            (Ok(own), Ok(cgroup)) => {
                let workdir = own.as_ref().map_or(dir.as_path(), SampleDir::path);
                let mut processes =
                    needs_cgroup.then(|| SampleProcesses::start(system, &mut record, cgroup));
                // The host beside the sample, from just before its workload to just after.
                let observer = Observer::start(
                    plan.interval,
                    observe::devices(ground.target().map(Target::info), workdir),
                    !executor.separate_process(),
                    processes.as_ref().and_then(|p| p.cgroup()),
                );
                let mut harness = SampleHarness {
                    system,
                    ground: &mut ground,
                    phases: phases.as_mut(),
                    collected: &collected,
                };
                let mut collect = Collecting {
                    collected: &collected,
                    sink,
                    phases: observer.collector(),
                };
                let end = executor.execute(
                    &job_spec,
                    workdir,
                    Bounds {
                        timeout_ns: plan.timeout_ns,
                        processes: processes.as_mut(),
                    },
                    stop,
                    &mut collect,
                    &mut harness,
                );
                observed = observer.finish(plan.interval);
                // Nothing of the sample may run on once it ended: before its directory goes or
                // its target is unmounted.
                let ended = processes.map_or(Ok(0), |p| p.end(system, &mut record));
                let removed = own.map(|own| own.remove(system, &mut record));
                // Through the sink, as the workload's own: a command prints them too.
                if let Err(e) = ended {
                    collect.warning(&format!("the sample's processes did not all end: {e}"));
                }
                if let Some(Err(e)) = removed {
                    collect.warning(&format!("the sample's directory stays: {e}"));
                }
                end
            }
        };
        if let Some(phases) = phases.as_mut() {
            phases.leave();
        }
        if end.status == Outcome::Failed {
            // A loop device whose image cannot grow fails writes like a full filesystem would:
            // name the disk that is really full.
            if let Some(hint) = ground.target().and_then(|t| t.host_full_hint()) {
                let saw = end.reason.take().unwrap_or_default();
                end.reason = Some(format!("{hint} (the workload saw: {saw})"));
            }
        }
        let on_target = ground.target().is_some();
        ground.release();
        let info = match fresh.take() {
            Some(target) => Some(Box::new(target.finish())),
            None if on_target => kept.get(&key).map(|t| Box::new(t.info().clone())),
            None => None,
        };
        let Collected {
            records,
            mut warnings,
            ..
        } = collected.into_inner();
        warnings.extend(observed.warnings);
        let mut result = SampleResult {
            status: end.status,
            reason: end.reason,
            not_retried: false,
            results: records,
            warnings,
            seed: end.seed,
            kept: end.kept,
            target: info,
            ran: true,
            series: observed.series,
            assessment: observed.assessment,
        };
        let damaged = result
            .target
            .as_ref()
            .and_then(|i| i.fsck.as_ref())
            .filter(|f| !f.clean)
            .map(|fsck| {
                format!(
                    "the filesystem check after the run found problems: `{}` exited {:?}: {}; \
                     the results are stored, but the filesystem was damaged",
                    fsck.command,
                    fsck.exit_status,
                    fsck.output_tail.replace('\n', " / ")
                )
            });
        if let (Some(job), Some(phases)) = (job, phases) {
            merge_ranks(job, host, phases, &mut result, damaged.clone());
        }
        // In a job, rank 0's interruption is every rank's (they agreed on it): nothing is
        // stored. Alone, the caller decides.
        if job.is_some() && result.status == Outcome::Interrupted {
            return Sampled::Interrupted;
        }
        let fsck = result.target.as_ref().and_then(|i| i.fsck.clone());
        if let Some(fsck) = fsck {
            result
                .results
                .extend(settings.check_result(&fsck.command, fsck.elapsed_ns));
        }
        if let (Some(damaged), Outcome::Ok) = (damaged, result.status) {
            result.status = Outcome::Failed;
            result.reason = Some(damaged);
        }
        Sampled::Done(Box::new(result))
    }
}

/// Why `case` cannot run as planned whatever the host, when it cannot: a cache policy its
/// workload does not honour, or (as one rank of `job`, with this many ranks on this host)
/// something a rank cannot be. The same words for a campaign (an `unsupported` sample) and a
/// command (a usage error).
pub fn refusal(plan: &Plan, case: &Case, job: Option<(&dyn Collective, u32)>) -> Option<String> {
    let settings = &case.workload.settings;
    let kind = settings.kind();
    let cache = case.config.cache;
    if !settings.honours(cache) {
        return Some(format!(
            "the {kind} workload does not honour the cache policy {cache}: {}",
            match cache {
                CachePolicy::Direct => "it does not open its files with O_DIRECT",
                _ => "it cannot bring the cache to that state",
            }
        ));
    }
    let bare = fsbench_testbed::fs::by_name(&case.config.filesystem)
        .is_some_and(|fs| !fs.capabilities().filesystem);
    if bare && plan.dir.is_none() && !settings.on_device() {
        return Some(format!(
            "the {kind} workload needs a filesystem: the bare device (`{}`) is the baseline of \
             the workloads that run on a block device (io)",
            case.config.filesystem
        ));
    }
    // An aged image is one filesystem on one device, aged once and copied for every sample.
    if case.config.age != fsbench_model::FRESH && plan.dir.is_none() {
        if bare {
            return Some(format!(
                "the bare device has no filesystem to age: only its fresh cases run (age `{}`)",
                case.config.age
            ));
        }
        if let Some(array) = &case.config.array {
            return Some(format!(
                "an aged filesystem is made on one image and copied for every sample; it cannot \
                 be aged on an array ({array}): drop these cases with an `[[exclude]]` of \
                 `filesystem` and `age`, or age the filesystem on one device"
            ));
        }
    }
    let (_, local_ranks) = job?;
    let in_dir = plan.dir.is_some();
    if let Some(why) = settings.not_as_ranks() {
        return Some(why.into());
    }
    if !in_dir && settings.apply(SharesDir) {
        return Some(
            "a shared file on targets of their own: every rank has a filesystem (and a file) of \
             its own; run in a directory every rank sees (`--dir DIR`)"
                .into(),
        );
    }
    if !in_dir && plan.dir.is_none() && local_ranks > 1 {
        if let Some(fs) = fsbench_testbed::fs::by_name(&case.config.filesystem) {
            if fs.capabilities().one_per_host {
                return Some(format!(
                    "{} with {local_ranks} ranks on this host: it serves one target per host at \
                     a time; start one rank per host (mpirun --map-by ppr:1:node) or pass --dir",
                    fs.name()
                ));
            }
        }
    }
    None
}

/// What is ready (before the borrow of the target is taken).
enum Ready {
    Fresh,
    Kept,
    Dir { dir: PathBuf, made: bool },
}

/// The case's ground, ready for the workload: a target made now (a fresh one per sample, or the
/// first of those kept; on an aged case, a copy of its aged image, made first when the cache
/// has none, `status` hearing how far aging is) or kept from an earlier sample, with room for
/// the workload and its cache policy applied; or the plan's directory (a rank's own `rank-N`
/// in it, unless the workload shares it), checked by the workload, its cache dropped when the
/// case says so.
fn ready_ground<'s>(
    sampler: &mut Sampler<'s>,
    case: &Case,
    key: &str,
    fresh: &mut Option<Target<'s>>,
    local_ranks: u32,
    status: &mut dyn FnMut(&str),
) -> Result<Ready, TargetError> {
    let (system, plan, job) = (sampler.system, sampler.plan, sampler.job);
    if let Some(dir) = &plan.dir {
        // The directory is the user's (the caller checked it is there): a rank's own directory
        // in it is made for the sample and removed after it when empty.
        let settings = &case.workload.settings;
        let (dir, made) = match job {
            Some(job) if !settings.apply(SharesDir) => {
                let mine = dir.join(format!("rank-{}", job.rank()));
                let made = !mine.exists();
                // The user's directory cannot take it: a mistake in the request, like a
                // directory the workload cannot use.
                std::fs::create_dir_all(&mine).map_err(|e| {
                    TargetError::Invalid(format!("cannot create {}: {e}", mine.display()))
                })?;
                (mine, made)
            }
            _ => (dir.clone(), false),
        };
        let checked = settings
            .apply(Preflight(&sampler.context(case), &dir))
            .map_err(|e| TargetError::Invalid(sampler.executor.describe(&e)))
            .and_then(|()| match case.config.cache {
                // As a target's cache policy: a host where it cannot be done cannot run it.
                CachePolicy::Drop => cache::drop_all(system)
                    .map(drop)
                    .map_err(TargetError::Unsupported),
                _ => Ok(()),
            });
        return match checked {
            Ok(()) => Ok(Ready::Dir { dir, made }),
            Err(e) => {
                Ground::Dir { dir, made }.release();
                Err(e)
            }
        };
    }
    let stop = sampler.stop.clone();
    let stopped = || stop.is_requested();
    let mut prepare = || {
        let mut spec = target_spec(plan, case)?;
        spec.host_share = local_ranks;
        if let Some(aging) = plan.aging_of(case) {
            let aged = fsbench_testbed::images::ensure(system, &spec, aging, &stopped, status)?;
            spec.start_from = Some(aged);
        }
        Target::prepare(system, spec, &stopped)
    };
    let ctx = sampler.context(case);
    let describe = |e| sampler.executor.describe(&e);
    if plan.remake == Remake::Sample {
        let target = fresh.insert(prepare()?);
        fits(case, &ctx, target, describe)?;
        target.apply_cache_policy()?;
        return Ok(Ready::Fresh);
    }
    if !sampler.kept.contains_key(key) {
        let target = prepare()?;
        sampler.kept.insert(key.to_string(), target);
    }
    let target = sampler.kept.get_mut(key).expect("inserted above");
    fits(case, &ctx, target, describe)?;
    target.apply_cache_policy()?;
    Ok(Ready::Kept)
}

/// Whether the case's workload fits the target's free space: refused before it starts when it
/// does not, saying, on an aged filesystem, what the aged files take.
fn fits(
    case: &Case,
    ctx: &fsbench_workload::Context,
    target: &Target<'_>,
    describe: impl Fn(fsbench_workload::WorkloadError) -> String,
) -> Result<(), TargetError> {
    let Err(e) = case.workload.settings.apply(Room(ctx, target.mountpoint())) else {
        return Ok(());
    };
    let mut why = describe(e);
    if let Some(aging) = &target.info().aging {
        let after = &aging.made.aged.after;
        why = format!(
            "{why} (the filesystem is aged '{}': its aged files fill {:.0} % of {}; lower its \
             fill, or give it a larger image)",
            case.config.age,
            after.fill_percent,
            fsbench_measure::units::human_bytes(after.size_bytes)
        );
    }
    Err(TargetError::Invalid(why))
}

/// The target spec of a case.
fn target_spec(plan: &Plan, case: &Case) -> Result<TargetSpec, TargetError> {
    // The plan checked the filesystem name at parse time, against its own keys.
    // An md array this host cannot make runs on one image of the array's total size.
    let device = match (&case.config.one_device_for, &plan.device) {
        (
            Some(array),
            DeviceSpec::Image {
                size_bytes: Some(bytes),
            },
        ) => {
            let array: ArraySpec = array.parse().map_err(TargetError::Invalid)?;
            DeviceSpec::Image {
                size_bytes: Some(bytes * u64::from(array.devices)),
            }
        }
        _ => plan.device.clone(),
    };
    // The recording device's own image, when the workload sizes it.
    let recording = case.workload.settings.apply(RecordsWrites);
    let device = match (
        recording,
        case.workload.settings.apply(RecordedBytes),
        device,
    ) {
        (true, Some(bytes), DeviceSpec::Image { .. }) => DeviceSpec::Image {
            size_bytes: Some(bytes),
        },
        (_, _, device) => device,
    };
    let builder = TargetSpec::builder(&case.config.filesystem, &plan.work_dir)
        .mkfs_options(&case.config.mkfs_options)
        .mount_options(Some(&case.config.mount_options))
        .scheduler(case.config.scheduler.as_deref())
        .cache(case.config.cache)
        .device(device)
        .array(
            // The plan checked the layout at parse time.
            case.config
                .array
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(TargetError::Invalid)?,
        )
        .loop_direct_io(plan.loop_direct_io)
        .recording(recording)
        .fsck(plan.fsck)
        .size_setting(plan.size_setting);
    if case.config.image_in_ram {
        builder.image_in_memory()?.build()
    } else {
        builder.build()
    }
}

/// Where a sample runs: a target fsbench made, or the plan's directory.
enum Ground<'t, 's> {
    Target(&'t mut Target<'s>),
    /// `made`: fsbench made it for the sample (a rank's own), and removes it after if empty.
    Dir {
        dir: PathBuf,
        made: bool,
    },
}

impl<'s> Ground<'_, 's> {
    fn target(&self) -> Option<&Target<'s>> {
        match self {
            Ground::Target(target) => Some(target),
            Ground::Dir { .. } => None,
        }
    }

    /// After the sample: a rank's own directory goes if the workload left it empty (a target
    /// is torn down by its owner).
    fn release(self) {
        if let Ground::Dir { dir, made: true } = self {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Why the ground is not ready, as every rank agreed.
enum NotReady {
    Interrupted,
    Refused(String),
    Result(Box<SampleResult>),
}

impl NotReady {
    fn of(error: TargetError) -> NotReady {
        match (error.outcome(), error) {
            (Some(Outcome::Interrupted), _) => NotReady::Interrupted,
            (None, error) => NotReady::Refused(error.to_string()),
            // The status says "unsupported" already: the reason is the rest.
            (Some(status), TargetError::Unsupported(reason)) => {
                NotReady::Result(Box::new(SampleResult::not_run(status, reason)))
            }
            (Some(status), error) => {
                NotReady::Result(Box::new(SampleResult::not_run(status, error.to_string())))
            }
        }
    }

    /// With the read-back of a target that was made and is now torn down, if one was.
    fn into_sampled(self, target: Option<TargetInfo>) -> Sampled {
        match self {
            NotReady::Interrupted => Sampled::Interrupted,
            NotReady::Refused(reason) => Sampled::Refused(reason),
            NotReady::Result(result) => Sampled::Done(Box::new(SampleResult {
                target: target.map(Box::new),
                ..*result
            })),
        }
    }
}

/// What a rank that is not ready says to rank 0: its status (None: refused) and reason.
type Said = (Option<Outcome>, String);
/// A rank's word on its ground: what it says when it is not ready.
type Word = Option<Said>;

/// Every rank's ground is ready, or no rank runs the sample: at rank 0 the result names the
/// rank that was not ready (or is the reason every rank gave, when they all gave one).
fn every_rank_ready<'t, 's>(
    job: &dyn Collective,
    host: &str,
    ready: Result<Ground<'t, 's>, TargetError>,
) -> Result<Ground<'t, 's>, NotReady> {
    let mine: Word = ready.as_ref().err().map(|e| match e {
        TargetError::Unsupported(reason) => (Some(Outcome::Unsupported), reason.clone()),
        other => (other.outcome(), other.to_string()),
    });
    let word = serde_json::to_vec(&(host, &mine)).expect("plain data");
    let heard = job.gather(&word);
    let every = job.all_ok(mine.is_none());
    // A rank that was ready gives its ground back when another was not.
    let ready = match (ready, every) {
        (Ok(ground), true) => return Ok(ground),
        (Ok(ground), false) => {
            ground.release();
            Ok(())
        }
        (Err(e), _) => Err(e),
    };
    let result = |status: Option<Outcome>, reason: String| match status {
        Some(Outcome::Interrupted) => NotReady::Interrupted,
        Some(status) => NotReady::Result(Box::new(SampleResult::not_run(status, reason))),
        None => NotReady::Refused(reason),
    };
    match (ready, heard) {
        (Err(TargetError::Interrupted), _) => Err(NotReady::Interrupted),
        // Rank 0 names the rank (or gives the reason every rank gave).
        (_, Some(all)) => {
            let said: Vec<(String, Word)> = all
                .iter()
                .map(|w| serde_json::from_slice(w).unwrap_or_default())
                .collect();
            let not_ready: Vec<(usize, &String, &Said)> = said
                .iter()
                .enumerate()
                .filter_map(|(rank, (host, word))| Some((rank, host, word.as_ref()?)))
                .collect();
            if not_ready
                .iter()
                .any(|(_, _, w)| w.0 == Some(Outcome::Interrupted))
            {
                return Err(NotReady::Interrupted);
            }
            let Some(&(rank, host, (status, reason))) = not_ready.first() else {
                return Err(result(
                    Some(Outcome::Failed),
                    "a rank's word on its target could not be read".into(),
                ));
            };
            if not_ready.len() == said.len() && not_ready.iter().all(|(_, _, w)| w.1 == *reason) {
                return Err(result(*status, reason.clone()));
            }
            Err(result(
                *status,
                format!(
                    "rank {rank} (host {host}): {reason}; {} of {} ranks were not ready",
                    not_ready.len(),
                    said.len()
                ),
            ))
        }
        // Another rank: its own word (its store is not kept).
        (Err(e), None) => Err(NotReady::of(e)),
        (Ok(()), None) => Err(result(
            Some(Outcome::Failed),
            "another rank's target was not ready".into(),
        )),
    }
}

/// What the workload has handed over so far: shared by the sink that receives it and the
/// harness that, in a job, sends rank 0 what it has not sent yet as each phase starts.
#[derive(Default)]
struct Collected {
    records: Vec<ResultRecord>,
    warnings: Vec<String>,
}

/// The sample's sink: keeps every result, warning and series, and passes each on to the
/// caller's.
struct Collecting<'c, 'k> {
    collected: &'c RefCell<Collected>,
    sink: &'k mut dyn Sink,
    phases: Arc<PhaseLog>,
}

/// A batch to the sample's collection, then to the caller's outlet (a live rate).
struct Tee {
    kept: Arc<PhaseLog>,
    next: Arc<dyn Outlet>,
}

impl Outlet for Tee {
    fn send(&self, batch: &PhaseBatch) {
        self.kept.send(batch);
        self.next.send(batch);
    }
}

impl Sink for Collecting<'_, '_> {
    fn record(&mut self, record: ResultRecord, _done: usize, total: Option<usize>) {
        let done = {
            let mut collected = self.collected.borrow_mut();
            collected.records.push(record.clone());
            collected.records.len()
        };
        self.sink.record(record, done, total);
    }
    fn warning(&mut self, message: &str) {
        self.collected
            .borrow_mut()
            .warnings
            .push(message.to_string());
        self.sink.warning(message);
    }
    fn status(&mut self, line: &str) {
        self.sink.status(line);
    }
    fn outlet(&mut self) -> Arc<dyn Outlet> {
        Arc::new(Tee {
            kept: self.phases.clone(),
            next: self.sink.outlet(),
        })
    }
}

/// A target error as a cut's: what cannot be done here is unsupported, the rest failed.
fn cut_error(e: TargetError) -> CutError {
    match e {
        TargetError::Unsupported(why) => CutError::Unsupported(why),
        e => CutError::Failed(e.to_string()),
    }
}

impl<'t, 's> SampleHarness<'_, 't, 's, '_> {
    /// The target a power cut acts on; unsupported on a directory.
    fn target_for_power(&mut self) -> Result<&mut Target<'s>, CutError> {
        match &mut self.ground {
            Ground::Target(target) => Ok(target),
            Ground::Dir { .. } => Err(CutError::Unsupported(
                "a power cut needs a filesystem fsbench makes (--fs), which the durability \
                 workload's cut = power puts on the recording device: not a directory"
                    .into(),
            )),
        }
    }
}

/// What the sample's workload asks, answered on its ground and, in a job, with the other
/// ranks.
struct SampleHarness<'a, 't, 's, 'k> {
    system: &'s dyn System,
    ground: &'a mut Ground<'t, 's>,
    phases: Option<&'a mut RankPhases<'s, 'k>>,
    collected: &'a RefCell<Collected>,
}

impl Harness for SampleHarness<'_, '_, '_, '_> {
    fn cold(&mut self) -> Result<String, String> {
        match self.ground {
            Ground::Target(target) => target.remount_cold().map_err(|e| e.to_string()),
            Ground::Dir { .. } => cache::drop_all(self.system),
        }
    }
    fn drop_caches(&mut self) -> Result<String, String> {
        cache::drop_all(self.system)
    }
    fn cut(&mut self) -> Result<Cut, CutError> {
        let Ground::Target(target) = &mut self.ground else {
            return Err(CutError::Unsupported(
                "a cut needs a filesystem fsbench makes (--fs, or a campaign's filesystem), \
                 not a directory"
                    .into(),
            ));
        };
        match target.cut() {
            Ok(done) => Ok(Cut {
                how: done.how,
                recovery_ns: done.recovery_ns,
                fsck_clean: done.fsck.as_ref().map(|f| f.clean),
                fsck_said: match &done.fsck {
                    Some(f) if !f.clean => format!("{}: {}", f.command, f.output_tail),
                    _ => String::new(),
                },
            }),
            Err(TargetError::Unsupported(why)) => Err(CutError::Unsupported(why)),
            Err(e) => Err(CutError::Failed(e.to_string())),
        }
    }
    fn record(&mut self) -> Result<(), CutError> {
        self.target_for_power()?.record().map_err(cut_error)
    }
    fn mark(&mut self, n: u64) {
        if let Ground::Target(target) = &mut self.ground {
            target.mark(n);
        }
    }
    fn power_cut(&mut self, budget: PowerBudget) -> Result<Vec<CrashState>, CutError> {
        let budget = fsbench_testbed::recorder::states::Budget {
            per_flush: budget.per_flush,
            seed: budget.seed,
            ignore_flushes: budget.ignore_flushes,
        };
        let states = self
            .target_for_power()?
            .power_cut(budget)
            .map_err(cut_error)?;
        Ok(states
            .into_iter()
            .map(|s| CrashState {
                what: s.what,
                promised: s.promised,
            })
            .collect())
    }
    fn crash_state(&mut self, i: usize) -> Result<StateCheck, CutError> {
        let done = self.target_for_power()?.crash_state(i).map_err(cut_error)?;
        Ok(StateCheck {
            recovery_ns: done.recovery_ns,
            fsck_clean: done.fsck.as_ref().map(|f| f.clean),
            fsck_said: match &done.fsck {
                Some(f) if !f.clean => format!("{}: {}", f.command, f.output_tail),
                _ => String::new(),
            },
            unmountable: done.unmountable,
        })
    }
    fn resume(&mut self) -> Result<(), CutError> {
        self.target_for_power()?.resume().map_err(cut_error)
    }
    fn keep_power_cut(&mut self, dir: &Path) -> Result<PathBuf, CutError> {
        self.target_for_power()?
            .keep_power_cut(dir)
            .map_err(cut_error)
    }
    fn evict(&mut self, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String> {
        cache::evict(self.system, path, offset, len)
    }
    fn resident(&mut self, path: &Path, offset: u64, len: u64) -> Result<f64, String> {
        cache::resident(self.system, path, offset, len)
    }
    fn phase_start(&mut self) -> bool {
        match self.phases.as_mut() {
            None => true,
            Some(phases) => phases.start(self.collected),
        }
    }
    fn before_setup(&mut self) -> bool {
        match self.phases.as_mut() {
            None => true,
            Some(phases) => phases.before_setup(self.collected),
        }
    }
    fn after_setup(&mut self, ok: bool) -> bool {
        match self.phases.as_mut() {
            None => ok,
            Some(phases) => phases.after_setup(ok),
        }
    }
    fn phase_poll(&mut self, done_here: bool, finished: bool) -> bool {
        match self.phases.as_mut() {
            None => false,
            Some(phases) => phases.poll(done_here, finished),
        }
    }
}

/// One rank's side of a sample's timed phases under scale-out: each starts when every rank is
/// there, after rank 0 has got and kept what every rank measured in the phases before; a rank
/// that ended says so once, and the others stop at their next phase.
struct RankPhases<'s, 'k> {
    job: &'s dyn Collective,
    host: String,
    /// This rank has met the others for the last time in this sample.
    left: bool,
    /// It left because another rank ended.
    stopped_by_another: bool,
    /// Every rank was told to run a phase's setup, and the others will meet at its end
    /// (`all_ok`): a rank that ends before saying how its setup went meets them there.
    in_setup: bool,
    /// In a phase with a first-done stonewall: whether this rank said it is done, and how many
    /// other ranks have said so.
    announced: bool,
    heard: u32,
    /// How many of this rank's records rank 0 has.
    shared: usize,
    /// At rank 0: every rank's records merged, as far as every rank has them.
    merged: Vec<ResultRecord>,
    /// Why a merge between phases failed, if one did.
    merge_error: Option<String>,
    /// At rank 0: stores each phase's merged records as they come, so a job that is killed
    /// keeps them.
    keep: Option<Keep<'k>>,
}

impl RankPhases<'_, '_> {
    fn start(&mut self, collected: &RefCell<Collected>) -> bool {
        if !self.ended_the_last() {
            return false;
        }
        self.share(collected);
        self.job.all_ok(true)
    }

    fn before_setup(&mut self, collected: &RefCell<Collected>) -> bool {
        self.in_setup = self.ended_the_last();
        if self.in_setup {
            self.share(collected);
        }
        self.in_setup
    }

    fn after_setup(&mut self, ok: bool) -> bool {
        if self.left || !self.in_setup {
            return false;
        }
        self.in_setup = false;
        let all = self.job.all_ok(ok);
        if !all {
            // Every rank leaves here: the one whose setup failed and the others.
            self.left = true;
            self.stopped_by_another = ok;
        }
        all
    }

    /// Done here (a thread made its share, or another rank's word raised the wall, or every
    /// thread has ended): every rank says so exactly once per phase; true when another rank
    /// has. After the phase, waits for every rank's word.
    fn poll(&mut self, done_here: bool, finished: bool) -> bool {
        if !self.announced && (finished || done_here) {
            self.job.announce_done();
            self.announced = true;
        }
        self.heard += self.job.heard_done();
        let wall = self.heard > 0;
        if finished {
            self.job
                .await_done((self.job.size() - 1).saturating_sub(self.heard));
            self.announced = false;
            self.heard = 0;
        }
        wall
    }

    /// Every rank has ended the last phase (ranks done wait here for the others, idle: they
    /// take no CPU from a rank still measuring); false when one has left the sample.
    fn ended_the_last(&mut self) -> bool {
        if self.left {
            return false;
        }
        if !self.job.all_ok_idle(true) {
            self.left = true;
            self.stopped_by_another = true;
            return false;
        }
        true
    }

    /// Sends rank 0 this rank's records it has not got yet (outside any timed phase); at rank
    /// 0, merges and keeps them.
    fn share(&mut self, collected: &RefCell<Collected>) {
        let records = collected.borrow().records[self.shared..].to_vec();
        self.shared += records.len();
        let report = fsbench_scale::RankReport {
            rank: self.job.rank(),
            host: self.host.clone(),
            failure: None,
            stopped_with_the_job: false,
            records,
            series: Vec::new(),
            figures: fsbench_workload::figures::DEFINED,
        };
        match fsbench_scale::gather_and_merge_phase(self.job, &report) {
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
    fn leave(&mut self) {
        if self.in_setup {
            // The others wait at the setup's end: this rank's word is that it failed.
            self.in_setup = false;
            self.job.all_ok(false);
            self.left = true;
        }
        if !self.left {
            self.job.all_ok_idle(false);
            self.left = true;
        }
    }
}

/// Rank 0 gets every rank's results (and why a rank did not finish) and merges them into
/// `result`; the other ranks keep their own.
fn merge_ranks(
    job: &dyn Collective,
    host: String,
    phases: RankPhases<'_, '_>,
    result: &mut SampleResult,
    damaged: Option<String>,
) {
    let mine = fsbench_scale::RankReport {
        rank: job.rank(),
        host,
        failure: match result.status {
            Outcome::Ok => damaged,
            Outcome::Interrupted => Some("interrupted".into()),
            status => Some(
                result
                    .reason
                    .clone()
                    .unwrap_or_else(|| status.name().into()),
            ),
        },
        stopped_with_the_job: phases.stopped_by_another,
        records: result.results[phases.shared..].to_vec(),
        series: std::mem::take(&mut result.series),
        figures: fsbench_workload::figures::DEFINED,
    };
    let Some(merged) = fsbench_scale::gather_and_merge(job, &mine) else {
        return;
    };
    result.results = phases.merged;
    match (merged, phases.merge_error) {
        // What was merged before a failed merge is the job's result.
        (Ok(_), Some(error)) => {
            result.status = Outcome::Failed;
            result.reason = Some(error);
        }
        (Ok(merged), None) => {
            result.results.extend(merged.records);
            result.series = merged.series;
            if !merged.failures.is_empty() {
                // This rank's own timeout stays one; any other rank's end is a failure.
                if result.status != Outcome::Timeout {
                    result.status = Outcome::Failed;
                }
                result.reason = Some(format!(
                    "not every rank of the job of {} ended the sample well: {}; the results \
                     every rank has are kept",
                    job.size(),
                    merged.failures.join("; ")
                ));
            }
        }
        (Err(e), _) => {
            result.status = Outcome::Failed;
            result.reason = Some(e.to_string());
        }
    }
}
