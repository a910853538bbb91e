//! What a case runs: a named workload of the registry (`fsbench_workload::WorkloadSettings`),
//! and its execution inside the child process (`fsbench case-worker`), which hands back the
//! workload's typed results.

use fsbench_model::ResultRecord;
use fsbench_store::Outcome;
use fsbench_workload::sweep::{self, SweepSpec};
use fsbench_workload::workload::{Collect, Describe, Estimate};
use fsbench_workload::{Context, End, Sink, StopFlag, WorkloadSettings};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A workload as a plan names it: its name (the case key's last part) and its settings.
/// Stored with each case as `{"name": .., "kind": .., <settings>}` and handed to the child.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedWorkload {
    pub name: String,
    /// Run at each value of one setting (`threads=1,2,4`) instead of once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSpec>,
    #[serde(flatten)]
    pub settings: WorkloadSettings,
}

impl PlannedWorkload {
    /// A rough duration of one run under `ctx` (every point of a sweep), for `--dry-run`.
    pub fn estimate_ns(&self, ctx: &Context) -> u64 {
        match &self.sweep {
            Some(sweep) => sweep.points(&self.settings, ctx).map_or(0, |points| {
                points.iter().map(|(_, p)| p.apply(Estimate(ctx))).sum()
            }),
            None => self.settings.apply(Estimate(ctx)),
        }
    }

    /// Runs it (every point of a sweep) in `dir`.
    pub fn run(&self, ctx: &Context, dir: &Path, stop: &StopFlag, sink: &mut dyn Sink) -> End {
        sweep::execute(&self.settings, self.sweep.as_ref(), ctx, dir, stop, sink)
    }
}

/// What is stored with a sample about how its workload ran: the context (scale, cache policy),
/// the workload as named and set, and what its settings resolved to (the matrix's cells).
pub fn sample_config(workload: &PlannedWorkload, ctx: &Context) -> String {
    serde_json::json!({
        "context": ctx,
        "workload": workload,
        "plan": workload.settings.apply(Describe(ctx)),
    })
    .to_string()
}

/// What the child is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub workload: PlannedWorkload,
    pub context: Context,
}

/// What the child hands back: every result as a typed record, the warnings the reader of the
/// results must know, and the seed the workload used.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobOutput {
    pub results: Vec<ResultRecord>,
    pub warnings: Vec<String>,
    pub seed: Option<u64>,
}

/// What the child says on its standard output, one JSON object per line, each flushed as it
/// exists: so a child that is killed or times out has handed back everything it finished.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    Status {
        line: String,
    },
    Warning {
        message: String,
    },
    Result {
        record: ResultRecord,
    },
    /// The workload asks for a cold page cache between two steps ([`Sink::cold`]); the
    /// campaign remounts the target and answers with a [`ColdReply`] line on stdin.
    Cold,
    /// Under scale-out, before each timed phase ([`Sink::phase_start`]): the campaign meets the
    /// job's other ranks and answers with a [`PhaseReply`] line on stdin.
    Phase,
    /// Under scale-out, before a phase with a setup ([`Sink::phase_start_after`]): the answer
    /// is go when every rank has ended the last phase; the setup runs then.
    PhaseBeforeSetup,
    /// The setup's end on this rank: the answer is go when it went well on every rank.
    PhaseAfterSetup {
        ok: bool,
    },
    /// The last line: how the workload ended, why (when it did not end ok) and its seed.
    End {
        outcome: Outcome,
        reason: Option<String>,
        seed: Option<u64>,
    },
}

/// A job that ended without results: how (interrupted or failed) and why.
#[derive(Debug)]
pub struct Unfinished {
    pub outcome: Outcome,
    pub reason: String,
}

impl Unfinished {
    pub fn interrupted() -> Unfinished {
        Unfinished {
            outcome: Outcome::Interrupted,
            reason: String::new(),
        }
    }

    pub fn failed(reason: impl Into<String>) -> Unfinished {
        Unfinished {
            outcome: Outcome::Failed,
            reason: reason.into(),
        }
    }
}

/// A sink that keeps the records and warnings and passes progress lines on.
struct Keep<'a> {
    kept: Collect,
    status: &'a mut dyn FnMut(&str),
}

impl Sink for Keep<'_> {
    fn record(&mut self, record: ResultRecord, done: usize, total: Option<usize>) {
        self.kept.record(record, done, total);
    }
    fn warning(&mut self, message: &str) {
        self.kept.warning(message);
    }
    fn status(&mut self, line: &str) {
        (self.status)(line);
    }
}

/// The campaign's answer to [`Event::Cold`], one JSON line on the child's standard input:
/// how the cache was made cold, or why it could not be.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ColdReply {
    Done(String),
    Refused(String),
}

/// The campaign's answer to [`Event::Phase`]: `go` when every rank of the job starts the
/// phase now, false when the job is ending (another rank stopped).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PhaseReply {
    pub go: bool,
}

impl From<Result<String, String>> for ColdReply {
    fn from(result: Result<String, String>) -> ColdReply {
        match result {
            Ok(how) => ColdReply::Done(how),
            Err(why) => ColdReply::Refused(why),
        }
    }
}

impl From<ColdReply> for Result<String, String> {
    fn from(reply: ColdReply) -> Result<String, String> {
        match reply {
            ColdReply::Done(how) => Ok(how),
            ColdReply::Refused(why) => Err(why),
        }
    }
}

/// Runs a job in `dir`, handing results to `sink` as they exist; the end says how it went.
pub fn run_job(job: &Job, dir: &Path, stop: &StopFlag, sink: &mut dyn Sink) -> End {
    job.workload.run(&job.context, dir, stop, sink)
}

/// The reason to give for an end that is not ok.
pub fn reason(job: &Job, end: &End) -> String {
    end.error.as_ref().map_or_else(
        || format!("the {} workload failed", job.workload.settings.kind()),
        |e| e.to_string(),
    )
}

/// Runs a job in `dir` and keeps its results in memory. `status` hears about progress between
/// phases, never from inside a timed loop.
pub fn execute(
    job: &Job,
    dir: &Path,
    stop: &StopFlag,
    status: &mut dyn FnMut(&str),
) -> Result<JobOutput, Unfinished> {
    let mut sink = Keep {
        kept: Collect::default(),
        status,
    };
    let end = run_job(job, dir, stop, &mut sink);
    match end.outcome {
        Outcome::Ok => Ok(JobOutput {
            results: sink.kept.records,
            warnings: sink.kept.warnings,
            seed: end.seed,
        }),
        Outcome::Interrupted => Err(Unfinished::interrupted()),
        _ => Err(Unfinished::failed(reason(job, &end))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_measure::units::{SizeSpec, TimeSpan};
    use fsbench_model::Unit;
    use fsbench_workload::matrix::{MatrixSettings, MatrixTest};
    use fsbench_workload::sleep::SleepSettings;

    fn job(settings: WorkloadSettings) -> Job {
        Job {
            workload: PlannedWorkload {
                name: settings.kind().into(),
                sweep: None,
                settings,
            },
            context: Context::default(),
        }
    }

    #[test]
    fn a_job_round_trips_and_sleep_stops_when_asked() {
        let nap = job(WorkloadSettings::Sleep(SleepSettings {
            duration: TimeSpan::from_ns(20_000_000),
        }));
        let json = serde_json::to_value(&nap).unwrap();
        assert_eq!(json["workload"]["kind"], "sleep");
        assert_eq!(json["workload"]["name"], "sleep");
        assert_eq!(json["workload"]["duration"], "20ms");
        let back: Job = serde_json::from_value(json).unwrap();
        assert_eq!(back.workload, nap.workload);
        let out = execute(&nap, Path::new("/"), &StopFlag::new(), &mut |_| {}).unwrap();
        assert!(out.results[0].main().unwrap().value >= 20_000_000.0);
        let stop = StopFlag::new();
        stop.request();
        assert!(matches!(
            execute(&nap, Path::new("/"), &stop, &mut |_| {}),
            Err(Unfinished {
                outcome: Outcome::Interrupted,
                ..
            })
        ));
    }

    #[test]
    fn matrix_results_are_typed_records_with_their_seed() {
        let dir = tempfile::tempdir().unwrap();
        let job = job(WorkloadSettings::Matrix(MatrixSettings {
            tests: vec![MatrixTest::Write],
            file_sizes: SizeSpec::List(vec![64 << 10]),
            record_sizes: SizeSpec::List(vec![16 << 10, 64 << 10]),
            min_time: TimeSpan::from_ns(0),
            ..MatrixSettings::default()
        }));
        let mut statuses = Vec::new();
        let out = execute(&job, dir.path(), &StopFlag::new(), &mut |s| {
            statuses.push(s.to_string())
        })
        .unwrap();
        assert_eq!(statuses.len(), 4, "one status per result: {statuses:?}");
        assert!(statuses[3].ends_with("/s (4 of 4)"), "{statuses:?}");
        assert!(out.seed.is_some());
        // 2 cells x 2 phases.
        assert_eq!(out.results.len(), 4);
        let rewrite = out
            .results
            .iter()
            .find(|r| {
                r.dims.phase.as_deref() == Some("rewrite")
                    && r.dims.record_size_bytes == Some(16 << 10)
            })
            .unwrap();
        assert_eq!(rewrite.dims.file_size_bytes, Some(64 << 10));
        assert_eq!(rewrite.main().unwrap().unit, Unit::BytesPerSec);
        assert!(out
            .results
            .iter()
            .all(|r| r.latency_bins.iter().map(|b| b.1).sum::<u64>() > 0));
        assert!(
            out.results
                .iter()
                .all(|r| r.measurement("ops_rate").is_some()
                    && r.measurement("latency_p99").is_some())
        );
        assert!(out.seed.is_some());
    }
}
