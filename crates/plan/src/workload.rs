//! What a case runs: a named workload of the registry (`fsbench_workload::WorkloadSettings`),
//! as the job a sample's executor runs (in this process, or handed to the child process
//! `fsbench case-worker`), and what is stored of how it ran.

use fsbench_workload::sweep::{self, SweepSpec};
use fsbench_workload::workload::{Describe, Estimate};
use fsbench_workload::{Context, End, Harness, Sink, StopFlag, WorkloadSettings};
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
    pub fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        sweep::execute(
            &self.settings,
            self.sweep.as_ref(),
            ctx,
            dir,
            stop,
            sink,
            harness,
        )
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

/// What a sample's executor runs: the workload and its context.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub workload: PlannedWorkload,
    pub context: Context,
}

/// The reason to give for an end that is not ok.
pub fn reason(job: &Job, end: &End) -> String {
    end.error.as_ref().map_or_else(
        || format!("the {} workload failed", job.workload.settings.kind()),
        |e| e.to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_measure::units::{SizeSpec, TimeSpan};
    use fsbench_model::{Outcome, Unit};
    use fsbench_workload::harness::Detached;
    use fsbench_workload::matrix::{MatrixSettings, MatrixTest};
    use fsbench_workload::sleep::SleepSettings;
    use fsbench_workload::workload::Collect;

    fn run(job: &Job, dir: &Path, stop: &StopFlag) -> (End, Collect) {
        let mut sink = Collect::default();
        let end = job
            .workload
            .run(&job.context, dir, stop, &mut sink, &mut Detached);
        (end, sink)
    }

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
            ..SleepSettings::default()
        }));
        let json = serde_json::to_value(&nap).unwrap();
        assert_eq!(json["workload"]["kind"], "sleep");
        assert_eq!(json["workload"]["name"], "sleep");
        assert_eq!(json["workload"]["duration"], "20ms");
        let back: Job = serde_json::from_value(json).unwrap();
        assert_eq!(back.workload, nap.workload);
        let (end, out) = run(&nap, Path::new("/"), &StopFlag::new());
        assert_eq!(end.outcome, Outcome::Ok);
        assert!(out.records[0].main().unwrap().value >= 20_000_000.0);
        let stop = StopFlag::new();
        stop.request();
        assert_eq!(
            run(&nap, Path::new("/"), &stop).0.outcome,
            Outcome::Interrupted
        );
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
        let (end, out) = run(&job, dir.path(), &StopFlag::new());
        let statuses = &out.statuses;
        assert_eq!(statuses.len(), 4, "one status per result: {statuses:?}");
        assert!(statuses[3].ends_with("/s (4 of 4)"), "{statuses:?}");
        assert!(end.seed.is_some());
        // 2 cells x 2 phases.
        assert_eq!(out.records.len(), 4);
        let rewrite = out
            .records
            .iter()
            .find(|r| {
                r.dims.phase.as_deref() == Some("rewrite")
                    && r.dims.record_size_bytes == Some(16 << 10)
            })
            .unwrap();
        assert_eq!(rewrite.dims.file_size_bytes, Some(64 << 10));
        assert_eq!(rewrite.main().unwrap().unit, Unit::BytesPerSec);
        assert!(out
            .records
            .iter()
            .all(|r| r.latency_bins.iter().map(|b| b.1).sum::<u64>() > 0));
        assert!(
            out.records
                .iter()
                .all(|r| r.measurement("ops_rate").is_some()
                    && r.measurement("latency_p99").is_some())
        );
    }
}
