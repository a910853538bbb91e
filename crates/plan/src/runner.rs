//! The campaign runner. Per sample: prepare the target, run the workload in a child process
//! under a watchdog (in a cgroup made for the sample with all it starts, ended with the sample;
//! in a user's directory, in a directory made for the sample), record, tear down. A hang becomes a recorded `timeout` and the campaign
//! goes on; a crash becomes `failed` with the child's last stderr lines; a configuration the host
//! cannot run becomes `unsupported` (not retried for later repetitions). Repetitions are
//! interleaved across cases (A B C A B C ...) so slow drift of the machine favours none of them,
//! and, with a CI target, cases repeat until their main metrics are stable.
//!
//! Every sample is stored the moment it exists; Ctrl-C or SIGTERM stops between steps, the
//! sample in progress is not stored, and `--resume` later runs exactly the missing ones.
//!
//! As one rank of an MPI job (`Campaign::job`), every rank walks the same plan: rank 0 decides
//! each sample (its store has what ran), every rank prepares the configuration on a target of
//! its own, runs the workload in its child with every timed phase started together, and rank 0
//! stores one sample merged from every rank's (fsbench-scale).

use crate::plan::{Case, Plan, Remake};
use crate::workload::{sample_config, ColdReply, Event, Job, JobOutput, PhaseReply};
use fsbench_analysis::Summary;
use fsbench_measure::clock::{now_ns, rfc3339_utc, unix_time_s};
use fsbench_model::ResultRecord;
use fsbench_scale::Collective;
use fsbench_store::{NewSample, Outcome, Store, StoreError};
use fsbench_testbed::cgroup::{Cgroup, SampleProcesses};
use fsbench_testbed::ledger::Ledger;
use fsbench_testbed::scratch::SampleDir;
use fsbench_testbed::CachePolicy;
use fsbench_testbed::{System, Target, TargetError, TargetSpec};
use fsbench_workload::workload::{Preflight, SharesDir};
use fsbench_workload::{Context, StopFlag};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Lifecycle events for progress displays (no-op defaults).
pub trait CampaignObserver {
    /// `total` samples are planned at the minimum repetitions; `already` exist (resume).
    fn started(&mut self, _run_id: i64, _total: usize, _already: usize) {}
    fn sample_started(&mut self, _case: &Case, _repetition: u32) {}
    /// The running workload's latest word on itself (a live rate), every quarter second or so.
    fn sample_status(&mut self, _case: &Case, _repetition: u32, _status: &str) {}
    fn sample_finished(&mut self, _case: &Case, _repetition: u32, _status: Outcome, _detail: &str) {
    }
}

/// Ignores every event.
pub struct Quiet;
impl CampaignObserver for Quiet {}

/// Everything the runner needs.
pub struct Campaign<'a> {
    pub plan: &'a Plan,
    pub store: &'a mut Store,
    pub system: &'a dyn System,
    /// The fsbench binary, run as `EXE case-worker --dir DIR` (the job on its stdin).
    pub worker: PathBuf,
    pub stop: StopFlag,
    /// The MPI job this campaign is one rank of; None alone. Only rank 0's store is kept.
    pub job: Option<&'a dyn Collective>,
}

/// What one sample produced.
struct SampleResult {
    status: Outcome,
    reason: Option<String>,
    output: JobOutput,
    target_json: Option<String>,
}

impl Campaign<'_> {
    /// Runs (or resumes) the plan's samples into run `run_id`.
    pub fn run(
        &mut self,
        run_id: i64,
        observer: &mut dyn CampaignObserver,
    ) -> Result<Outcome, StoreError> {
        let plan = self.plan;
        let system = self.system;
        let mut case_ids = HashMap::new();
        for case in &plan.cases {
            let id = self.store.add_case(
                run_id,
                &case.key,
                case.position as i64,
                &serde_json::to_string(&case.config)?,
                &serde_json::to_string(&case.workload)?,
            )?;
            case_ids.insert(case.key.clone(), id);
        }
        let recorded: HashSet<(String, u32)> = self.store.recorded(run_id)?;
        // Results and unsupported reasons of what exists already (resume).
        let mut values: HashMap<String, Vec<Vec<ResultRecord>>> = HashMap::new();
        let mut unsupported: HashMap<String, String> = HashMap::new();
        for case in self.store.load(run_id)?.cases {
            for sample in case.samples {
                match sample.status {
                    Outcome::Ok => values
                        .entry(case.case.key.clone())
                        .or_default()
                        .push(sample.results),
                    Outcome::Unsupported => {
                        let reason = sample.reason.unwrap_or_default();
                        let reason = reason.trim_end_matches(" (not retried)").to_string();
                        unsupported.insert(case.case.key.clone(), reason);
                    }
                    _ => {}
                }
            }
        }
        let total = plan.sample_count();
        let already = recorded
            .iter()
            .filter(|(_, rep)| *rep <= plan.repetitions.min)
            .count();
        observer.started(run_id, total, already);

        let mut kept: HashMap<String, Target<'_>> = HashMap::new();
        let mut last_sample: HashMap<String, i64> = HashMap::new();
        // Ok when every planned sample ran (whatever each sample's outcome), or Interrupted.
        let mut end = Outcome::Ok;
        let job = self.job;
        'rounds: for repetition in 1..=plan.repetitions.max {
            for case in &plan.cases {
                let done = recorded.contains(&(case.key.clone(), repetition))
                    || (repetition > plan.repetitions.min
                        && is_stable(plan, values.get(&case.key)));
                if !rank_zeros_word(job, !done) {
                    continue;
                }
                if !all_go_on(job, !self.stop.is_requested()) {
                    end = Outcome::Interrupted;
                    break 'rounds;
                }
                // A target made per configuration ends when its configuration's cases do.
                if plan.remake == Remake::Configuration {
                    let key = case.config_key();
                    let done: Vec<String> = kept.keys().filter(|k| **k != key).cloned().collect();
                    for k in done {
                        if let Some(target) = kept.remove(&k) {
                            self.finish_kept(&k, target, &last_sample)?;
                        }
                    }
                }
                observer.sample_started(case, repetition);
                let started_at = rfc3339_utc(unix_time_s());
                let started = now_ns();
                let known = unsupported.get(&case.key);
                let outcome = if rank_zeros_word(job, known.is_some()) {
                    Some(SampleResult {
                        status: Outcome::Unsupported,
                        reason: Some(format!(
                            "{} (not retried)",
                            known.map_or("unsupported", String::as_str)
                        )),
                        output: JobOutput::default(),
                        target_json: None,
                    })
                } else {
                    let done = sample(
                        system,
                        plan,
                        &self.worker,
                        &self.stop,
                        job,
                        case,
                        &mut kept,
                        &mut |status| observer.sample_status(case, repetition, status),
                    );
                    // A rank interrupted while the others ran: all stop here, together.
                    let go_on = all_go_on(job, done.is_some());
                    done.filter(|_| go_on)
                };
                let Some(outcome) = outcome else {
                    end = Outcome::Interrupted;
                    break 'rounds;
                };
                let output = &outcome.output;
                // The workload's configuration as it ran, when it ran (its output came back).
                let config = (outcome.status == Outcome::Ok || !output.results.is_empty())
                    .then(|| sample_config(&case.workload, &context_in(plan, case, job)));
                let sample_id = self.store.record_sample(
                    case_ids[&case.key],
                    &NewSample {
                        repetition,
                        status: outcome.status,
                        reason: outcome.reason.as_deref(),
                        started_at: &started_at,
                        elapsed_ns: now_ns() - started,
                        target_json: outcome.target_json.as_deref(),
                        results: &output.results,
                        seed: output.seed,
                        warnings: &output.warnings,
                        config_json: config.as_deref(),
                    },
                )?;
                last_sample.insert(target_key(plan, case), sample_id);
                match outcome.status {
                    Outcome::Ok => values
                        .entry(case.key.clone())
                        .or_default()
                        .push(outcome.output.results),
                    Outcome::Unsupported => {
                        let reason = outcome.reason.clone().unwrap_or_default();
                        let reason = reason.trim_end_matches(" (not retried)").to_string();
                        unsupported.insert(case.key.clone(), reason);
                    }
                    _ => {}
                }
                let detail = outcome.reason.unwrap_or_default();
                observer.sample_finished(case, repetition, outcome.status, &detail);
            }
            // A round ends the targets made for it.
            if plan.remake == Remake::Configuration {
                for (key, target) in std::mem::take(&mut kept) {
                    self.finish_kept(&key, target, &last_sample)?;
                }
            }
        }
        // Kept targets: their fsck verdict goes to their last sample.
        for (key, target) in kept {
            self.finish_kept(&key, target, &last_sample)?;
        }
        Ok(end)
    }

    /// Tears down a target that served several samples; its fsck verdict goes to the last.
    fn finish_kept(
        &mut self,
        key: &str,
        target: Target<'_>,
        last_sample: &HashMap<String, i64>,
    ) -> Result<(), StoreError> {
        let info = target.finish();
        if let Some(sample_id) = last_sample.get(key) {
            self.store
                .update_sample_target(*sample_id, &serde_json::to_string(&info)?)?;
        }
        Ok(())
    }
}

/// The key of the target a case runs on when targets are kept: its configuration's (made per
/// configuration) or its own.
fn target_key(plan: &Plan, case: &Case) -> String {
    match plan.remake {
        Remake::Configuration => case.config_key(),
        Remake::Sample | Remake::Never => case.key.clone(),
    }
}

/// True when a case needs no more repetitions: no stability target, nothing measured, or the
/// 95 % CI of every result's main measurement (the same dimensions and metric across samples)
/// within the target.
fn is_stable(plan: &Plan, samples: Option<&Vec<Vec<ResultRecord>>>) -> bool {
    let Some(target) = plan.repetitions.target_ci else {
        return true;
    };
    let Some(samples) = samples.filter(|s| !s.is_empty()) else {
        return true;
    };
    let mut series: HashMap<(String, &str), Vec<f64>> = HashMap::new();
    for results in samples {
        for r in results {
            if let Some(main) = r.main() {
                series
                    .entry((r.dims.label(), main.metric.as_ref()))
                    .or_default()
                    .push(main.value);
            }
        }
    }
    series
        .values()
        .all(|values| Summary::of(values).is_some_and(|s| s.is_stable(target)))
}

/// The target spec of a case.
fn target_spec(plan: &Plan, case: &Case) -> Result<TargetSpec, TargetError> {
    // The plan checked the filesystem name at parse time, against its own keys.
    let builder = TargetSpec::builder(&case.config.filesystem, &plan.work_dir)
        .mkfs_options(&case.config.mkfs_options)
        .mount_options(Some(&case.config.mount_options))
        .scheduler(case.config.scheduler.as_deref())
        .cache(case.config.cache)
        .device(plan.device.clone())
        .loop_direct_io(plan.loop_direct_io)
        .size_setting(fsbench_testbed::device::SizeSetting::Plan);
    if case.config.image_in_ram {
        builder.image_in_memory()?.build()
    } else {
        builder.build()
    }
}

fn not_run(error: TargetError) -> Option<SampleResult> {
    // The status says "unsupported" already: the reason is the rest.
    let (status, reason) = match error {
        TargetError::Interrupted => return None,
        TargetError::Unsupported(reason) => (Outcome::Unsupported, reason),
        other => (Outcome::Failed, other.to_string()),
    };
    Some(SampleResult {
        status,
        reason: Some(reason),
        output: JobOutput::default(),
        target_json: None,
    })
}

/// Rank 0's `mine`, on every rank of the job (alone: `mine`): how rank 0, whose store has
/// what ran, decides each sample for every rank.
fn rank_zeros_word(job: Option<&dyn Collective>, mine: bool) -> bool {
    match job {
        Some(job) => job.all_ok(job.rank() != 0 || mine),
        None => mine,
    }
}

/// True on every rank of the job when every rank says true (alone: `mine`).
fn all_go_on(job: Option<&dyn Collective>, mine: bool) -> bool {
    job.map_or(mine, |job| job.all_ok(mine))
}

/// Why a case cannot run as one rank of a job (before any target is made), when it cannot.
fn not_in_a_job(case: &Case, local_ranks: u32, in_dir: bool) -> Option<String> {
    let settings = &case.workload.settings;
    let workload = serde_json::to_value(settings).unwrap_or_default();
    if settings.kind() == "task" {
        Some("the task workload does not run under mpirun: its tools are not ranks".into())
    } else if !in_dir && settings.apply(SharesDir) {
        Some(
            "a shared file in a campaign under mpirun on targets: every rank has a filesystem of \
             its own; run the campaign in a directory every rank sees (`fsbench run --dir DIR`)"
                .into(),
        )
    } else if workload["stonewall"] == "first" {
        Some(
            "stonewall = \"first\" in a campaign under mpirun is not built yet (the workload's \
             process cannot hear the other ranks mid-phase): set a duration, or run the workload \
             command under mpirun"
                .into(),
        )
    } else if !in_dir && local_ranks > 1 && case.config.filesystem == "zfs" {
        Some(format!(
            "zfs with {local_ranks} ranks on this host: its one zfs-fuse daemon serves one \
             target at a time; start one rank per host (mpirun --map-by ppr:1:node)"
        ))
    } else {
        None
    }
}

/// Where a sample runs: a target fsbench made, or the plan's directory (a rank's own
/// `rank-N` in it, unless the workload shares it).
enum Ground<'t, 's> {
    Target(&'t mut Target<'s>),
    /// `made`: fsbench made it for the sample (a rank's own), and removes it after if empty.
    Dir {
        dir: PathBuf,
        made: bool,
    },
}

impl Ground<'_, '_> {
    /// After the sample: a rank's own directory goes if the workload left it empty (a target
    /// is torn down by its owner).
    fn release(self) {
        if let Ground::Dir { dir, made: true } = self {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The case's ground, ready for the workload: a target made now (a fresh one per sample, or
/// the first of those kept) or kept from an earlier sample, with its cache policy applied; or
/// the plan's directory, checked by the workload, its cache dropped when the case says so.
#[allow(clippy::too_many_arguments)]
fn ready_ground<'t, 's>(
    system: &'s dyn System,
    plan: &Plan,
    stop: &StopFlag,
    job: Option<&dyn Collective>,
    case: &Case,
    key: &str,
    fresh: &'t mut Option<Target<'s>>,
    kept: &'t mut HashMap<String, Target<'s>>,
) -> Result<Ground<'t, 's>, TargetError> {
    // The ranks on one host make their targets at once: each takes its share of the space.
    let local_ranks = job.and(fsbench_scale::launched_local_size()).unwrap_or(1);
    let in_dir = plan.dir.is_some();
    if let Some(reason) = job.and_then(|_| not_in_a_job(case, local_ranks, in_dir)) {
        return Err(TargetError::Unsupported(reason));
    }
    if let Some(dir) = &plan.dir {
        // The directory is the user's (the campaign checked it is there): a rank's own
        // directory in it is made for the sample and removed after it when empty.
        let settings = &case.workload.settings;
        let (dir, made) = match job {
            Some(job) if !settings.apply(SharesDir) => {
                let mine = dir.join(format!("rank-{}", job.rank()));
                let made = !mine.exists();
                std::fs::create_dir_all(&mine).map_err(|source| TargetError::Io {
                    action: "create",
                    path: mine.clone(),
                    source,
                })?;
                (mine, made)
            }
            _ => (dir.clone(), false),
        };
        let checked = settings
            .apply(Preflight(&context_in(plan, case, job), &dir))
            .map_err(|e| TargetError::Invalid(e.to_string()))
            .and_then(|()| match case.config.cache {
                // As a target's cache policy: a host where it cannot be done cannot run it.
                CachePolicy::Drop => fsbench_workload::workload::drop_caches()
                    .map(drop)
                    .map_err(TargetError::Unsupported),
                _ => Ok(()),
            });
        let ground = Ground::Dir { dir, made };
        return match checked {
            Ok(()) => Ok(ground),
            Err(e) => {
                ground.release();
                Err(e)
            }
        };
    }
    let prepare = || {
        let mut spec = target_spec(plan, case)?;
        spec.host_share = local_ranks;
        Target::prepare(system, spec, &|| stop.is_requested())
    };
    let target: &mut Target<'s> = if plan.remake == Remake::Sample {
        fresh.insert(prepare()?)
    } else {
        if !kept.contains_key(key) {
            kept.insert(key.to_string(), prepare()?);
        }
        kept.get_mut(key).expect("inserted above")
    };
    target.apply_cache_policy()?;
    Ok(Ground::Target(target))
}

/// The workload's context of a case: the plan's, with this process's place in the job.
fn context_in(plan: &Plan, case: &Case, job: Option<&dyn Collective>) -> Context {
    Context {
        job: job.map(|job| fsbench_workload::workload::Place {
            rank: job.rank(),
            ranks: job.size(),
        }),
        ..plan.context(case)
    }
}

/// How a rank that is not ready says so to rank 0: its status and reason.
type NotReady = Option<(Outcome, String)>;

/// Every rank's target is ready, or no rank runs the sample: at rank 0 the result names the
/// rank that was not ready (or is the reason every rank gave, when they all gave one). Err(None)
/// when this rank, or at rank 0 any rank, was interrupted.
fn every_rank_ready<'t, 's>(
    job: &dyn Collective,
    host: &str,
    ready: Result<Ground<'t, 's>, TargetError>,
) -> Result<Ground<'t, 's>, Option<SampleResult>> {
    let mine: NotReady = match &ready {
        Ok(_) => None,
        Err(TargetError::Interrupted) => Some((Outcome::Interrupted, String::new())),
        Err(TargetError::Unsupported(reason)) => Some((Outcome::Unsupported, reason.clone())),
        Err(other) => Some((Outcome::Failed, other.to_string())),
    };
    let word = serde_json::to_vec(&(host, &mine)).expect("plain data");
    let heard = job.gather(&word);
    let every = job.all_ok(mine.is_none());
    let result = |status: Outcome, reason: String| {
        if status == Outcome::Interrupted {
            return None;
        }
        Some(SampleResult {
            status,
            reason: Some(reason),
            output: JobOutput::default(),
            target_json: None,
        })
    };
    // A rank that was ready gives its ground back when another was not.
    let ready = match (ready, every) {
        (Ok(ground), true) => return Ok(ground),
        (Ok(ground), false) => {
            ground.release();
            Ok(())
        }
        (Err(e), _) => Err(e),
    };
    match (ready, heard) {
        (Err(TargetError::Interrupted), _) => Err(None),
        // Rank 0 names the rank (or gives the reason every rank gave).
        (_, Some(all)) => {
            let said: Vec<(String, NotReady)> = all
                .iter()
                .map(|w| serde_json::from_slice(w).unwrap_or_default())
                .collect();
            let not_ready: Vec<(usize, &String, &(Outcome, String))> = said
                .iter()
                .enumerate()
                .filter_map(|(rank, (host, word))| Some((rank, host, word.as_ref()?)))
                .collect();
            if not_ready
                .iter()
                .any(|(_, _, w)| w.0 == Outcome::Interrupted)
            {
                return Err(None);
            }
            let Some(&(rank, host, (status, reason))) = not_ready.first() else {
                return Err(result(
                    Outcome::Failed,
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
        (Err(e), None) => Err(not_run(e)),
        (Ok(()), None) => Err(result(
            Outcome::Failed,
            "another rank's target was not ready".into(),
        )),
    }
}

/// One rank's side of a sample's timed phases under scale-out: each starts when every rank is
/// there; a rank that ended says so once, and the others stop at their next phase.
struct RankPhases<'j> {
    job: &'j dyn Collective,
    /// This rank has met the others for the last time in this sample.
    left: bool,
    /// It left because another rank ended.
    stopped_by_another: bool,
    /// Every rank was told to run a phase's setup, and the others will meet at its end
    /// (`all_ok`): a rank that ends before saying how its setup went meets them there.
    in_setup: bool,
}

impl RankPhases<'_> {
    /// The answer to the workload's child.
    fn answer(&mut self, ask: PhaseAsk) -> bool {
        match ask {
            PhaseAsk::Start => self.ended_the_last() && self.job.all_ok(true),
            PhaseAsk::BeforeSetup => {
                self.in_setup = self.ended_the_last();
                self.in_setup
            }
            PhaseAsk::AfterSetup { .. } if self.left || !self.in_setup => false,
            PhaseAsk::AfterSetup { ok } => {
                self.in_setup = false;
                let all = self.job.all_ok(ok);
                if !all {
                    // Every rank leaves here: the one whose setup failed and the others.
                    self.left = true;
                    self.stopped_by_another = ok;
                }
                all
            }
        }
    }

    /// Every rank has ended the last phase (ranks done wait here for the others, idle); false
    /// when one has left the sample.
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

/// What the workload's child asks before a phase ([`Event::Phase`], [`Event::PhaseBeforeSetup`],
/// [`Event::PhaseAfterSetup`]).
#[derive(Debug, Clone, Copy)]
enum PhaseAsk {
    Start,
    BeforeSetup,
    AfterSetup { ok: bool },
}

/// One repetition of a case; None when interrupted (nothing is recorded then). As one rank of a
/// job: every rank's target ready or none runs; the workload's phases start together; rank 0's
/// result is merged from every rank's.
#[allow(clippy::too_many_arguments)]
fn sample<'s>(
    system: &'s dyn System,
    plan: &Plan,
    worker: &Path,
    stop: &StopFlag,
    job: Option<&dyn Collective>,
    case: &Case,
    kept: &mut HashMap<String, Target<'s>>,
    status: &mut dyn FnMut(&str),
) -> Option<SampleResult> {
    let mut fresh = None;
    let key = target_key(plan, case);
    let host = fsbench_measure::host::HostInfo::probe().hostname;
    // The sample's processes live in a cgroup made for it, with the platform's CPU share as
    // its quota; a host without one runs them under a reaper, unless a quota was asked
    // (unsupported, agreed like a target).
    let cpu_percent = case.config.cpu_percent;
    let (cgroup, no_quota) = match Cgroup::new(cpu_percent) {
        Ok(cgroup) => (Some(cgroup), None),
        Err(e) if cpu_percent.is_some() => (None, Some(e)),
        Err(_) => (None, None),
    };
    let ready = match no_quota {
        Some(e) => Err(e),
        None => ready_ground(system, plan, stop, job, case, &key, &mut fresh, kept),
    };
    let agreed = match job {
        None => ready.map_err(not_run),
        Some(job) => every_rank_ready(job, &host, ready),
    };
    let mut ground = match agreed {
        Ok(ground) => ground,
        Err(outcome) => return outcome,
    };
    let job_spec = Job {
        workload: case.workload.clone(),
        context: context_in(plan, case, job),
    };
    // What the sample makes on the host beyond its target — its cgroup, its own directory in
    // the user's — is on record from the moment it exists: a killed campaign's guard and
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
    let (dir, own) = match &ground {
        Ground::Target(target) => (target.mountpoint().to_path_buf(), Ok(None)),
        // A file the ranks of a job share is in the directory every rank sees.
        Ground::Dir { dir, .. } if job.is_some() && case.workload.settings.apply(SharesDir) => {
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
    let mut phases = job.map(|job| RankPhases {
        job,
        left: false,
        stopped_by_another: false,
        in_setup: false,
    });
    let asks = Asks {
        status,
        cold: &mut || match &mut ground {
            Ground::Target(target) => target.remount_cold().map_err(|e| e.to_string()),
            Ground::Dir { .. } => fsbench_workload::workload::drop_caches(),
        },
        phase: &mut |ask| match phases.as_mut() {
            None => true,
            Some(phases) => phases.answer(ask),
        },
    };
    let mut outcome = match own {
        Err(reason) => Some(SampleResult {
            status: Outcome::Failed,
            reason: Some(reason),
            output: JobOutput::default(),
            target_json: None,
        }),
        Ok(own) => {
            let workdir = own.as_ref().map_or(dir.as_path(), SampleDir::path);
            let mut processes = SampleProcesses::start(system, &mut record, cgroup);
            let limits = Limits {
                timeout_ns: plan.timeout_ns,
                processes: &mut processes,
            };
            let mut outcome = run_child(worker, &job_spec, workdir, limits, stop, asks);
            // Nothing of the sample may run on once it ended: before its directory goes or
            // its target is unmounted.
            let ended = processes.end(system, &mut record);
            let removed = own.map(|own| own.remove(system, &mut record));
            if let Some(outcome) = outcome.as_mut() {
                let warnings = &mut outcome.output.warnings;
                if let Err(e) = ended {
                    warnings.push(format!("the sample's processes did not all end: {e}"));
                }
                if let Some(Err(e)) = removed {
                    warnings.push(format!("the sample's directory stays: {e}"));
                }
            }
            outcome
        }
    };
    if let Some(phases) = phases.as_mut() {
        phases.leave();
    }
    if let Some(outcome) = outcome.as_mut() {
        if outcome.status == Outcome::Failed {
            // A loop device whose image cannot grow fails writes like a full filesystem
            // would: name the disk that is really full.
            let hint = match &ground {
                Ground::Target(target) => target.host_full_hint(),
                Ground::Dir { .. } => None,
            };
            if let Some(hint) = hint {
                let saw = outcome.reason.take().unwrap_or_default();
                outcome.reason = Some(format!("{hint} (the workload saw: {saw})"));
            }
        }
    }
    let on_target = matches!(ground, Ground::Target(_));
    ground.release();
    let info = match fresh.take() {
        Some(target) => Some(target.finish()),
        None if on_target => Some(kept[&key].info().clone()),
        None => None,
    };
    let fsck = info.as_ref().and_then(|i| i.fsck.as_ref());
    let damaged = fsck.filter(|f| !f.clean).map(|fsck| {
        format!(
            "the filesystem check after the run found problems: `{}` exited {:?}",
            fsck.command, fsck.exit_status
        )
    });
    if let (Some(job), Some(phases)) = (job, phases) {
        // Rank 0 gets every rank's results (and why a rank did not finish) and merges them.
        let mine = fsbench_scale::RankReport {
            rank: job.rank(),
            host,
            failure: match &outcome {
                None => Some("interrupted".into()),
                Some(o) if o.status != Outcome::Ok => {
                    Some(o.reason.clone().unwrap_or_else(|| o.status.name().into()))
                }
                Some(_) => damaged.clone(),
            },
            stopped_with_the_job: phases.stopped_by_another,
            records: outcome
                .as_ref()
                .map(|o| o.output.results.clone())
                .unwrap_or_default(),
        };
        let merged = fsbench_scale::gather_and_merge(job, &mine);
        if let (Some(merged), Some(outcome)) = (merged, outcome.as_mut()) {
            match merged {
                Ok(merged) => {
                    outcome.output.results = merged.records;
                    if !merged.failures.is_empty() {
                        // Rank 0's own timeout stays one; any other rank's end is a failure.
                        if outcome.status != Outcome::Timeout {
                            outcome.status = Outcome::Failed;
                        }
                        outcome.reason = Some(format!(
                            "not every rank of the job of {} ended the sample well: {}; the \
                             results every rank has are kept",
                            job.size(),
                            merged.failures.join("; ")
                        ));
                    }
                }
                Err(e) => {
                    outcome.output.results.clear();
                    outcome.status = Outcome::Failed;
                    outcome.reason = Some(e.to_string());
                }
            }
        }
    }
    let mut outcome = outcome?;
    if let Some(fsck) = fsck.filter(|_| outcome.status != Outcome::Unsupported) {
        let check = case
            .workload
            .settings
            .check_result(&fsck.command, fsck.elapsed_ns);
        outcome.output.results.extend(check);
    }
    if let (Some(damaged), Outcome::Ok) = (damaged, outcome.status) {
        outcome.status = Outcome::Failed;
        outcome.reason = Some(damaged);
    }
    outcome.target_json = info.and_then(|info| serde_json::to_string(&info).ok());
    Some(outcome)
}

/// What the child's events ask of the campaign: to hear its progress, to make the cache cold,
/// to start a phase with the job's other ranks (always yes alone).
struct Asks<'a> {
    status: &'a mut dyn FnMut(&str),
    cold: &'a mut dyn FnMut() -> Result<String, String>,
    phase: &'a mut dyn FnMut(PhaseAsk) -> bool,
}

/// What bounds a workload's child: its time, and its sample's processes (the cgroup with the
/// platform's CPU share, or a reaper).
struct Limits<'q> {
    timeout_ns: u64,
    processes: &'q mut SampleProcesses,
}

/// Runs the job in a child process under the watchdog. None when interrupted. The job goes
/// on the child's stdin; its events come back on its stdout as they happen (a reader thread
/// keeps the pipe flowing), its reason for failing on its stderr. What it finished before a
/// timeout or a crash is kept with the sample.
fn run_child(
    worker: &Path,
    job: &Job,
    dir: &Path,
    limits: Limits<'_>,
    stop: &StopFlag,
    asks: Asks<'_>,
) -> Option<SampleResult> {
    let Limits {
        timeout_ns,
        processes,
    } = limits;
    let Asks {
        status: status_seen,
        cold,
        phase,
    } = asks;
    let failed = |reason: String, output: JobOutput| {
        Some(SampleResult {
            status: Outcome::Failed,
            reason: Some(reason),
            output,
            target_json: None,
        })
    };
    let job_bytes = match serde_json::to_vec(job) {
        Ok(bytes) => bytes,
        Err(e) => return failed(format!("cannot encode the job: {e}"), JobOutput::default()),
    };
    let mut command = Command::new(worker);
    // The child is no rank: MPI's variables stay with the campaign, which meets the others.
    for (name, _) in std::env::vars_os() {
        let name_text = name.to_string_lossy();
        if name_text.starts_with("OMPI_") || name_text.starts_with("PMI") {
            command.env_remove(&name);
        }
    }
    if processes.cgroup().is_none() {
        // Without a cgroup, the reaper follows the child's own process group.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let spawned = command
        .arg("case-worker")
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            return failed(
                format!("cannot start {}: {e}", worker.display()),
                JobOutput::default(),
            )
        }
    };
    // Into the sample's cgroup before it has its job, so all it does and starts is in it (and
    // under the quota).
    if let Err(e) = processes.add(child.id()) {
        terminate(&mut child);
        let cgroup = processes.cgroup().map(|c| c.dir().display().to_string());
        return failed(
            format!(
                "cannot put the workload in its cgroup ({}: {e})",
                cgroup.unwrap_or_default()
            ),
            JobOutput::default(),
        );
    }
    // The job is one line (small: a pipe holds 64 KiB). Stdin stays open for the answers to
    // the child's requests for a cold cache ([`Event::Cold`]).
    let stdin = std::cell::RefCell::new(child.stdin.take());
    if let Some(pipe) = stdin.borrow_mut().as_mut() {
        use std::io::Write;
        let _ = pipe
            .write_all(&job_bytes)
            .and_then(|_| pipe.write_all(b"\n"));
    }
    let (events, received) = std::sync::mpsc::channel::<Result<Event, String>>();
    let stdout_reader = child.stdout.take().map(|pipe| {
        std::thread::spawn(move || {
            use std::io::{BufRead, Read};
            // One line at a time, at most EVENT_LINE_MAX bytes of it kept: a line that is not
            // an event (not UTF-8, not JSON, too long) becomes a warning and reading goes on,
            // so the events after it still arrive.
            let mut reader = std::io::BufReader::new(pipe);
            let mut line = Vec::new();
            loop {
                line.clear();
                let read = (&mut reader)
                    .take(EVENT_LINE_MAX as u64)
                    .read_until(b'\n', &mut line);
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if line.last() != Some(&b'\n') && line.len() == EVENT_LINE_MAX {
                    // Skip the rest of an overlong line, keeping none of it.
                    while let Ok(buf) = reader.fill_buf() {
                        if buf.is_empty() {
                            break;
                        }
                        match buf.iter().position(|&b| b == b'\n') {
                            Some(end) => {
                                reader.consume(end + 1);
                                break;
                            }
                            None => {
                                let n = buf.len();
                                reader.consume(n);
                            }
                        }
                    }
                    let _ = events.send(Err(format!("a line of more than {EVENT_LINE_MAX} bytes")));
                    continue;
                }
                let event = serde_json::from_slice::<Event>(&line)
                    .map_err(|_| String::from_utf8_lossy(&line).trim_end().to_string());
                if events.send(event).is_err() {
                    break;
                }
            }
        })
    });
    // The child's reason comes through a pipe, not a file in the work directory: a full disk
    // must not cost the reason (it is often the reason).
    let stderr_reader = child.stderr.take().map(|pipe| {
        std::thread::spawn(move || {
            use std::io::Read;
            let mut tail = Vec::new();
            let mut buf = [0u8; 4096];
            let mut pipe = pipe;
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_KEPT {
                    tail.drain(..tail.len() - STDERR_KEPT);
                }
            }
            String::from_utf8_lossy(&tail).into_owned()
        })
    });
    let mut output = JobOutput::default();
    let mut end: Option<(Outcome, Option<String>)> = None;
    let mut take = |event: Result<Event, String>, output: &mut JobOutput| match event {
        Ok(Event::Status { line }) => status_seen(line.trim()),
        Ok(Event::Cold) => answer(&stdin, &ColdReply::from(cold())),
        Ok(ask @ (Event::Phase | Event::PhaseBeforeSetup | Event::PhaseAfterSetup { .. })) => {
            let ask = match ask {
                Event::PhaseBeforeSetup => PhaseAsk::BeforeSetup,
                Event::PhaseAfterSetup { ok } => PhaseAsk::AfterSetup { ok },
                _ => PhaseAsk::Start,
            };
            answer(&stdin, &PhaseReply { go: phase(ask) });
        }
        Ok(Event::Warning { message }) => output.warnings.push(message),
        Ok(Event::Result { record }) => output.results.push(record),
        Ok(Event::End {
            outcome,
            reason,
            seed,
        }) => {
            output.seed = seed;
            end = Some((outcome, reason));
        }
        Err(line) => output.warnings.push(format!(
            "the workload process printed an unexpected line: {}",
            line.chars().take(200).collect::<String>()
        )),
    };
    let started = Instant::now();
    let timeout = Duration::from_nanos(timeout_ns);
    let status = loop {
        while let Ok(event) = received.try_recv() {
            take(event, &mut output);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return failed(format!("cannot watch the workload process: {e}"), output),
        }
        if stop.is_requested() {
            // A child waiting for an answer (a cold cache, a phase) hears "no" at once.
            stdin.borrow_mut().take();
            terminate(&mut child);
            return None;
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            if let Some(reader) = stdout_reader {
                let _ = reader.join();
            }
            while let Ok(event) = received.try_recv() {
                take(event, &mut output);
            }
            return Some(SampleResult {
                status: Outcome::Timeout,
                reason: Some(format!(
                    "the workload ran past the {} timeout and was stopped",
                    fsbench_measure::units::human_duration(timeout_ns)
                )),
                output,
                target_json: None,
            });
        }
        // The next event at once (a phase waiting to start), or another look in 20 ms.
        match received.recv_timeout(Duration::from_millis(20)) {
            Ok(event) => take(event, &mut output),
            // The child closed its output: it is ending.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    };
    if let Some(reader) = stdout_reader {
        let _ = reader.join();
    }
    while let Ok(event) = received.try_recv() {
        take(event, &mut output);
    }
    let text = stderr_reader
        .and_then(|reader| reader.join().ok())
        .unwrap_or_default();
    let stderr_tail = || {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        lines[lines.len().saturating_sub(3)..].join(" / ")
    };
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal(), end) {
        (Some(0), _, Some((Outcome::Ok, _))) => Some(SampleResult {
            status: Outcome::Ok,
            reason: None,
            output,
            target_json: None,
        }),
        (Some(0), _, _) => failed(
            "the workload process ended without saying how its workload ended".into(),
            output,
        ),
        (Some(130), _, _) if stop.is_requested() => None,
        (Some(code), _, end) => {
            let said = end
                .and_then(|(_, reason)| reason)
                .unwrap_or_else(stderr_tail);
            failed(
                with_reason(format!("the workload exited with {code}"), &said),
                output,
            )
        }
        (None, Some(signal), _) => failed(
            with_reason(
                format!(
                    "the workload was killed by signal {signal} ({})",
                    signal_name(signal)
                ),
                &stderr_tail(),
            ),
            output,
        ),
        (None, None, _) => failed("the workload ended without an exit status".into(), output),
    }
}

/// Answers a request of the child: one JSON line on its stdin (gone once it is being stopped).
fn answer(
    stdin: &std::cell::RefCell<Option<std::process::ChildStdin>>,
    reply: &impl serde::Serialize,
) {
    let mut line = serde_json::to_vec(reply).expect("replies serialize");
    line.push(b'\n');
    if let Some(pipe) = stdin.borrow_mut().as_mut() {
        use std::io::Write;
        let _ = pipe.write_all(&line).and_then(|_| pipe.flush());
    }
}

/// The longest event line kept from the child (a result with its histogram is a few KiB).
const EVENT_LINE_MAX: usize = 16 << 20;

/// The child's stderr kept for the reason (its last lines are what matter).
const STDERR_KEPT: usize = 64 * 1024;

/// `what: reason`, or `what (it said nothing)` when the reason is empty.
fn with_reason(what: String, reason: &str) -> String {
    if reason.is_empty() {
        format!("{what}, without a word on its standard error")
    } else {
        format!("{what}: {reason}")
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => {
            "SIGKILL: killed from outside, often by the out-of-memory killer; see `dmesg`"
        }
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS: a mapped file's storage failed, or the filesystem is full",
        libc::SIGABRT => "SIGABRT",
        _ => "a signal",
    }
}

/// Asks the child to stop (SIGTERM), then kills it if it does not within 10 s.
fn terminate(child: &mut Child) {
    // SAFETY: signalling the child this process spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Removes the job scratch directories (`<work>/jobs/<pid>-<n>`) that fsbench 0.1 campaigns
/// made and a kill left behind (jobs now travel through pipes); returns what was removed. For
/// `fsbench cleanup`.
pub fn remove_stale_jobs(work_dir: &Path) -> Vec<String> {
    let jobs = work_dir.join("jobs");
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(&jobs).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !fsbench_testbed::ledger::process_alive(pid)
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed.push(format!("removed {}", entry.path().display()));
        }
    }
    let _ = std::fs::remove_dir(&jobs);
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker that says odd things before its events: they become warnings, and the events
    /// after them still arrive.
    #[test]
    fn lines_that_are_not_events_do_not_cost_the_events_after_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let worker = dir.path().join("worker");
        let result = r#"{"event":"result","record":{"measurements":[{"metric":"slept","value":5.0,"unit":"ns","direction":"lower","main":true}]}}"#;
        let end = r#"{"event":"end","outcome":"ok","reason":null,"seed":7}"#;
        std::fs::write(
            &worker,
            format!(
                "#!/bin/sh\nhead -n 1 >/dev/null\nprintf '\\377\\376 not utf-8\\n'\necho 'hello'\necho '{result}'\necho '{end}'\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
        let job = Job {
            workload: crate::workload::PlannedWorkload {
                name: "sleep".into(),
                sweep: None,
                settings: fsbench_workload::WorkloadSettings::Sleep(Default::default()),
            },
            context: Default::default(),
        };
        let mut processes = SampleProcesses::Reaper(fsbench_testbed::cgroup::Reaper::start());
        let got = run_child(
            &worker,
            &job,
            dir.path(),
            Limits {
                timeout_ns: 60_000_000_000,
                processes: &mut processes,
            },
            &StopFlag::new(),
            Asks {
                status: &mut |_| {},
                cold: &mut || Err("no target".into()),
                phase: &mut |_| true,
            },
        )
        .unwrap();
        assert_eq!(
            processes.end(
                &fsbench_testbed::RecordingSystem::new(),
                &mut Ledger::new(None, "t")
            ),
            Ok(0)
        );
        assert_eq!(got.status, Outcome::Ok, "{:?}", got.reason);
        assert_eq!(got.output.results.len(), 1);
        assert_eq!(got.output.seed, Some(7));
        assert_eq!(got.output.warnings.len(), 2, "{:?}", got.output.warnings);
        assert!(got.output.warnings[1].ends_with("hello"));
    }

    #[test]
    fn stability_is_judged_per_result_on_its_main_measurement() {
        use fsbench_model::{Dims, Direction, MetricDef, Unit};
        const THROUGHPUT: MetricDef =
            MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher).main();
        const P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower);
        let plan = Plan::parse(
            "name = \"a\"\nrepetitions = 2\ntarget_ci_percent = 5.0\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n",
            "a.toml",
        )
        .unwrap();
        let sample = |write: f64, read: f64, p99: f64| {
            ["write", "read"]
                .into_iter()
                .zip([write, read])
                .map(|(phase, rate)| ResultRecord {
                    dims: Dims {
                        phase: Some(phase.into()),
                        ..Dims::default()
                    },
                    measurements: vec![THROUGHPUT.at(rate), P99.at(p99)],
                    ..ResultRecord::default()
                })
                .collect::<Vec<_>>()
        };
        // Each phase steady; the p99 latency (not main) wild: stable.
        let steady = vec![sample(100.0, 5.0, 1.0), sample(100.1, 5.001, 900.0)];
        assert!(is_stable(&plan, Some(&steady)));
        // One phase's throughput moves: not stable, although the other phase is steady.
        let moving = vec![sample(100.0, 5.0, 1.0), sample(100.1, 9.0, 1.0)];
        assert!(!is_stable(&plan, Some(&moving)));
        assert!(is_stable(&plan, Some(&Vec::new())));
    }

    #[test]
    fn a_reason_never_ends_on_a_dangling_colon() {
        let silent = with_reason(
            format!("the workload was killed by signal 9 ({})", signal_name(9)),
            "",
        );
        assert!(!silent.trim_end().ends_with(':'), "{silent}");
        assert!(
            silent.contains("SIGKILL") && silent.contains("dmesg"),
            "{silent}"
        );
        assert_eq!(
            with_reason("the workload exited with 1".into(), "cannot write out.json"),
            "the workload exited with 1: cannot write out.json"
        );
    }
}
