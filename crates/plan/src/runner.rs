//! The campaign: every planned sample, round by round. Repetitions are interleaved across
//! cases (A B C A B C ...) so slow drift of the machine favours none of them, and, with a CI
//! target, cases repeat until their main metrics are stable. Each sample is run by the
//! [`Sampler`] (its target, its workload in a child process under a watchdog, its check: one
//! sample's life, the same as a workload command's) and stored the moment it exists by
//! [`Recording`]; a configuration the host cannot run is `unsupported` once and not retried
//! for later repetitions. Ctrl-C or SIGTERM stops between steps, the sample in progress is not
//! stored, and `--resume` later runs exactly the missing ones.
//!
//! As one rank of an MPI job (`Campaign::job`), every rank walks the same plan: rank 0 decides
//! each sample (its store has what ran), and stores one sample merged from every rank's.

use crate::executor::Executor;
use crate::plan::{Case, Plan, Remake};
use crate::sample::{Keep, SampleResult, Sampled, Sampler};
use crate::workload::sample_config;
use fsbench_analysis::Summary;
use fsbench_measure::clock::{now_ns, rfc3339_utc, unix_time_s};
use fsbench_model::ResultRecord;
use fsbench_scale::Collective;
use fsbench_store::{NewSample, Outcome, Store, StoreError};
use fsbench_testbed::System;
use fsbench_workload::{Sink, StopFlag};
use std::collections::{HashMap, HashSet};
use std::path::Path;

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

/// Everything the runner needs: a run begun in the store ([`crate::run`]).
pub struct Campaign<'a> {
    pub plan: &'a Plan,
    pub store: &'a mut Store,
    /// The run's case ids by key (added when it began).
    pub cases: &'a HashMap<String, i64>,
    pub system: &'a dyn System,
    /// How each sample's workload runs (a campaign's: a child process under a watchdog).
    pub executor: &'a dyn Executor,
    pub stop: StopFlag,
    /// The MPI job this campaign is one rank of; None alone. Only rank 0's store is kept.
    pub job: Option<&'a dyn Collective>,
}

/// The reason of the sample rank 0 keeps while a job runs: what remains if the job is killed.
const JOB_ENDED: &str = "the job ended before it finished: a rank died or was killed, and \
mpirun ended the others (its message names the rank and its host); these are the results of \
the phases every rank finished";

/// A sample on its way into the store, from its start to its end: what every rank of a job has
/// measured is kept as each phase ends (as a failed sample: if the job is killed, that is what
/// it was), and the finished sample replaces it. The one place a sample is stored, for a
/// campaign and a workload command alike.
pub struct Recording {
    case_id: i64,
    repetition: u32,
    started_at: String,
    started_ns: u64,
    /// The workload's configuration as it runs.
    config: String,
    /// The sample kept so far, and everything kept: after a failed append, the next phase
    /// stores it all again.
    kept: Option<i64>,
    so_far: Vec<ResultRecord>,
}

impl Recording {
    /// A sample of case `case_id` starting now, whose workload runs with `config` (from
    /// [`sample_config`]).
    pub fn begin(case_id: i64, repetition: u32, config: String) -> Recording {
        Recording {
            case_id,
            repetition,
            started_at: rfc3339_utc(unix_time_s()),
            started_ns: now_ns(),
            config,
            kept: None,
            so_far: Vec::new(),
        }
    }

    /// Keeps what every rank has measured in the phases that just ended (rank 0 of a job).
    pub fn keep(&mut self, store: &mut Store, records: &[ResultRecord]) {
        self.so_far.extend_from_slice(records);
        let stored = match self.kept {
            Some(id) => store.append_results(id, records).map(|()| id),
            None => store.replace_sample(
                self.case_id,
                &NewSample {
                    repetition: self.repetition,
                    status: Outcome::Failed,
                    reason: Some(JOB_ENDED),
                    not_retried: false,
                    started_at: &self.started_at,
                    elapsed_ns: now_ns() - self.started_ns,
                    target_json: None,
                    results: &self.so_far,
                    seed: None,
                    warnings: &[],
                    config_json: Some(&self.config),
                    series: &[],
                    assessment: None,
                },
            ),
        };
        self.kept = stored.ok();
    }

    /// Stores the finished sample (replacing what was kept of it); returns its id.
    pub fn finish(self, store: &mut Store, result: &SampleResult) -> Result<i64, StoreError> {
        let target = result
            .target
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?;
        // The workload's configuration as it ran, when it ran.
        let ran = result.ran && (result.status == Outcome::Ok || !result.results.is_empty());
        store.replace_sample(
            self.case_id,
            &NewSample {
                repetition: self.repetition,
                status: result.status,
                reason: result.reason.as_deref(),
                not_retried: result.not_retried,
                started_at: &self.started_at,
                elapsed_ns: now_ns() - self.started_ns,
                target_json: target.as_deref(),
                results: &result.results,
                seed: result.seed,
                warnings: &result.warnings,
                config_json: ran.then_some(self.config.as_str()),
                series: &result.series,
                assessment: result.assessment.as_ref(),
            },
        )
    }
}

/// The campaign's progress hears each live word of the sample in progress.
struct Progress<'o, 'c> {
    observer: &'o mut dyn CampaignObserver,
    case: &'c Case,
    repetition: u32,
}

impl Sink for Progress<'_, '_> {
    fn record(&mut self, _record: ResultRecord, _done: usize, _total: Option<usize>) {}
    fn status(&mut self, line: &str) {
        self.observer
            .sample_status(self.case, self.repetition, line);
    }
}

impl Campaign<'_> {
    /// Runs (or resumes) the plan's samples into run `run_id`.
    pub fn run(
        &mut self,
        run_id: i64,
        observer: &mut dyn CampaignObserver,
    ) -> Result<Outcome, StoreError> {
        let plan = self.plan;
        let case_ids = self.cases;
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
                        unsupported
                            .insert(case.case.key.clone(), sample.reason.unwrap_or_default());
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

        let job = self.job;
        let mut sampler = Sampler::new(self.system, plan, self.executor, self.stop.clone(), job);
        let mut last_sample: HashMap<String, i64> = HashMap::new();
        // Ok when every planned sample ran (whatever each sample's outcome), or Interrupted.
        let mut end = Outcome::Ok;
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
                    for (key, info) in sampler.finish_kept(Some(&key)) {
                        self.store_kept(&key, &info, &last_sample)?;
                    }
                }
                observer.sample_started(case, repetition);
                let config = sample_config(&case.workload, &sampler.context(case));
                let known = unsupported.get(&case.key);
                // A sample the host disturbed runs again, as often as the plan allows; the
                // last attempt is kept, saying why the ones before it were not.
                let mut disturbed = Vec::new();
                let (recording, result) = loop {
                    let mut recording =
                        Recording::begin(case_ids[&case.key], repetition, config.clone());
                    let result = if rank_zeros_word(job, known.is_some()) {
                        Some(SampleResult {
                            not_retried: true,
                            ..SampleResult::not_run(
                                Outcome::Unsupported,
                                known.map_or("unsupported", String::as_str),
                            )
                        })
                    } else {
                        let store = &mut *self.store;
                        let mut keep = |records: &[ResultRecord]| recording.keep(store, records);
                        let lead = job.is_some_and(|j| j.rank() == 0);
                        let sampled = sampler.sample(
                            case,
                            &mut Progress {
                                observer,
                                case,
                                repetition,
                            },
                            lead.then_some(&mut keep as Keep<'_>),
                        );
                        let result = match sampled {
                            Sampled::Done(result) if result.status == Outcome::Interrupted => None,
                            Sampled::Done(result) => Some(*result),
                            // A mistake in the case (a refused device, a directory its
                            // workload cannot use) is a failed sample of the campaign.
                            Sampled::Refused(reason) => {
                                Some(SampleResult::not_run(Outcome::Failed, reason))
                            }
                            Sampled::Interrupted => None,
                        };
                        // A rank interrupted while the others ran: all stop here, together.
                        let go_on = all_go_on(job, result.is_some());
                        result.filter(|_| go_on)
                    };
                    let why = result
                        .as_ref()
                        .filter(|r| r.status == Outcome::Ok)
                        .and_then(|r| r.assessment.as_ref())
                        .and_then(|a| a.disturbance());
                    let again = why.is_some()
                        && disturbed.len() < plan.repeat_disturbed as usize
                        && !self.stop.is_requested();
                    if !rank_zeros_word(job, again) {
                        break (recording, result);
                    }
                    disturbed.extend(why);
                    observer.sample_status(case, repetition, "disturbed: running it again");
                };
                let Some(mut result) = result else {
                    end = Outcome::Interrupted;
                    break 'rounds;
                };
                if !disturbed.is_empty() {
                    result.warnings.push(format!(
                        "attempt {} of this sample: the host disturbed the {} before it ({}), which were not kept (repeat_disturbed)",
                        disturbed.len() + 1,
                        if disturbed.len() == 1 { "one".to_string() } else { disturbed.len().to_string() },
                        disturbed.join("; ")
                    ));
                }
                let sample_id = recording.finish(self.store, &result)?;
                last_sample.insert(sampler.target_key(case), sample_id);
                match result.status {
                    Outcome::Ok => values
                        .entry(case.key.clone())
                        .or_default()
                        .push(result.results),
                    Outcome::Unsupported => {
                        unsupported
                            .insert(case.key.clone(), result.reason.clone().unwrap_or_default());
                    }
                    _ => {}
                }
                let mut detail = result.reason.unwrap_or_default();
                if result.not_retried {
                    detail.push_str(" (not retried)");
                }
                observer.sample_finished(case, repetition, result.status, &detail);
            }
            // A round ends the targets made for it.
            if plan.remake == Remake::Configuration {
                for (key, info) in sampler.finish_kept(None) {
                    self.store_kept(&key, &info, &last_sample)?;
                }
            }
        }
        // Kept targets: their fsck verdict goes to their last sample.
        for (key, info) in sampler.finish_kept(None) {
            self.store_kept(&key, &info, &last_sample)?;
        }
        Ok(end)
    }

    /// A target that served several samples was torn down: its read-back (fsck verdict) goes
    /// to the last of them.
    fn store_kept(
        &mut self,
        key: &str,
        info: &fsbench_testbed::TargetInfo,
        last_sample: &HashMap<String, i64>,
    ) -> Result<(), StoreError> {
        if let Some(sample_id) = last_sample.get(key) {
            self.store
                .update_sample_target(*sample_id, &serde_json::to_string(info)?)?;
        }
        Ok(())
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
            && fsbench_measure::walk::remove_tree(&entry.path()).is_ok()
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
}
