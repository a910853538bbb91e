//! What a case runs: the workload specs a plan can name, and their execution inside the child
//! process (`fsbench case-worker`), which hands back a workload's typed results.
//!
//! Workloads: `matrix` (the throughput matrix, fsbench_workload::matrix) and `sleep` (the
//! harness testing itself, like fio's null engine: it only waits, so timeouts and interruption
//! can be tested without a filesystem doing anything).

use fsbench_measure::units::human_bytes;
use fsbench_measure::units::{parse_duration_ns, size_label, SizeSpec};
use fsbench_model::{Direction, MetricDef, ResultRecord, Unit};
use fsbench_store::Outcome;
use fsbench_testbed::CachePolicy;
use fsbench_workload::matrix::{self, CellResult, MatrixObserver, MatrixSpec, MatrixTest};
use fsbench_workload::StopFlag;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A workload as a plan names it. Serialized into the store and handed to the child.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    Matrix(MatrixSettings),
    Sleep { name: String, duration_ns: u64 },
}

/// The matrix's knobs, as text where the user wrote text (sizes), so they round-trip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixSettings {
    pub name: String,
    pub tests: Vec<String>,
    pub file_sizes: String,
    pub record_sizes: String,
    pub min_time_ns: u64,
    pub max_passes: Option<u64>,
    pub include_fsync: bool,
    pub include_close: bool,
    pub direct: bool,
    pub drop_caches: bool,
    pub data: String,
    pub iozone_skip: bool,
    /// The plan's scale (1: as written).
    #[serde(default = "unscaled")]
    pub scale: f64,
}

fn unscaled() -> f64 {
    1.0
}

impl MatrixSettings {
    /// The matrix request, with the case's cache policy folded in (drop: first reads start
    /// cold; direct: O_DIRECT).
    pub fn spec(&self, cache: CachePolicy) -> Result<MatrixSpec, String> {
        let tests = self
            .tests
            .iter()
            .map(|t| MatrixTest::parse(t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MatrixSpec {
            tests,
            file_sizes: SizeSpec::parse(&self.file_sizes).map_err(|e| e.to_string())?,
            record_sizes: SizeSpec::parse(&self.record_sizes).map_err(|e| e.to_string())?,
            min_time_ns: self.min_time_ns,
            max_passes: self.max_passes,
            include_fsync: self.include_fsync,
            include_close: self.include_close,
            direct: self.direct || cache == CachePolicy::Direct,
            drop_caches: self.drop_caches || cache == CachePolicy::Drop,
            data: self.data.parse()?,
            iozone_skip: self.iozone_skip,
            scale: self.scale,
            ..MatrixSpec::default()
        })
    }
}

impl WorkloadSpec {
    pub fn name(&self) -> &str {
        match self {
            WorkloadSpec::Matrix(m) => &m.name,
            WorkloadSpec::Sleep { name, .. } => name,
        }
    }

    /// A rough duration of one run, for `--dry-run` estimates.
    pub fn estimate_ns(&self) -> u64 {
        match self {
            WorkloadSpec::Sleep { duration_ns, .. } => *duration_ns,
            WorkloadSpec::Matrix(m) => match m
                .spec(CachePolicy::Warm)
                .and_then(|s| s.plan().map_err(|e| e.to_string()))
            {
                Ok(plan) => {
                    let per_phase = plan.spec.min_time_ns.max(20_000_000) * 3 / 2;
                    plan.result_count() as u64 * per_phase + plan.cells.len() as u64 * 50_000_000
                }
                Err(_) => 0,
            },
        }
    }
}

/// The sleep workload's one figure: how long it slept.
const SLEPT: MetricDef = MetricDef::new("slept", Unit::Nanos, Direction::Lower).main();

/// What the child is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub workload: WorkloadSpec,
    pub cache: CachePolicy,
}

/// What the child hands back: every result as a typed record, the warnings the reader of the
/// results must know, and the seed the workload used.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobOutput {
    pub results: Vec<ResultRecord>,
    pub warnings: Vec<String>,
    pub seed: Option<u64>,
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

/// Hands each finished matrix result to a status callback: "write 16m/4k 3.1 GiB/s (5 of 12)".
struct LiveRate<'a>(&'a mut dyn FnMut(&str));

impl MatrixObserver for LiveRate<'_> {
    fn result(&mut self, r: &CellResult, done: usize, total: usize) {
        (self.0)(&format!(
            "{} {}/{} {}/s ({done} of {total})",
            r.phase,
            size_label(r.file_size_bytes),
            size_label(r.record_size_bytes),
            human_bytes(r.summary.bytes_per_s as u64)
        ));
    }
}

/// Runs a job in `dir` (inside the child process). `status` hears about progress between
/// phases, never from inside a timed loop.
pub fn execute(
    job: &Job,
    dir: &Path,
    stop: &StopFlag,
    status: &mut dyn FnMut(&str),
) -> Result<JobOutput, Unfinished> {
    match &job.workload {
        WorkloadSpec::Sleep { duration_ns, .. } => {
            let started = std::time::Instant::now();
            let total = std::time::Duration::from_nanos(*duration_ns);
            let mut told = std::time::Duration::ZERO;
            while started.elapsed() < total {
                if stop.is_requested() {
                    return Err(Unfinished::interrupted());
                }
                if started.elapsed() >= told + std::time::Duration::from_millis(250) {
                    told = started.elapsed();
                    status(&format!(
                        "slept {:.1} s of {:.1} s",
                        told.as_secs_f64(),
                        total.as_secs_f64()
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(10).min(total));
            }
            Ok(JobOutput {
                results: vec![ResultRecord {
                    measurements: vec![SLEPT.at(started.elapsed().as_nanos() as f64)],
                    ..ResultRecord::default()
                }],
                ..JobOutput::default()
            })
        }
        WorkloadSpec::Matrix(settings) => {
            let spec = settings.spec(job.cache).map_err(Unfinished::failed)?;
            let plan = spec.plan().map_err(|e| Unfinished::failed(e.to_string()))?;
            plan.preflight(dir)
                .map_err(|e| Unfinished::failed(e.to_string()))?;
            let outcome = matrix::run(&plan, dir, stop, &mut LiveRate(status));
            match outcome.status {
                Outcome::Ok => {}
                Outcome::Interrupted => return Err(Unfinished::interrupted()),
                _ => {
                    return Err(Unfinished::failed(
                        outcome
                            .failure
                            .map(|e| e.to_string())
                            .unwrap_or_else(|| "the matrix failed".into()),
                    ))
                }
            }
            Ok(JobOutput {
                results: outcome.results.iter().map(CellResult::record).collect(),
                warnings: outcome.warnings.clone(),
                seed: Some(plan.seed),
            })
        }
    }
}

/// Parses a duration for a plan, with the plan's vocabulary in the message.
pub fn duration(text: &str) -> Result<u64, String> {
    parse_duration_ns(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_reports_what_it_slept_and_stops_when_asked() {
        let job = Job {
            workload: WorkloadSpec::Sleep {
                name: "nap".into(),
                duration_ns: 20_000_000,
            },
            cache: CachePolicy::Warm,
        };
        let out = execute(&job, Path::new("/"), &StopFlag::new(), &mut |_| {}).unwrap();
        assert!(out.results[0].main().unwrap().value >= 20_000_000.0);
        let stop = StopFlag::new();
        stop.request();
        assert!(matches!(
            execute(&job, Path::new("/"), &stop, &mut |_| {}),
            Err(Unfinished {
                outcome: Outcome::Interrupted,
                ..
            })
        ));
    }

    #[test]
    fn matrix_results_are_typed_records_with_their_seed() {
        let dir = tempfile::tempdir().unwrap();
        let job = Job {
            workload: WorkloadSpec::Matrix(MatrixSettings {
                name: "m".into(),
                tests: vec!["write".into()],
                file_sizes: "64k".into(),
                record_sizes: "16k,64k".into(),
                min_time_ns: 0,
                max_passes: None,
                include_fsync: false,
                include_close: false,
                direct: false,
                drop_caches: false,
                data: "random".into(),
                iozone_skip: false,
                scale: 1.0,
            }),
            cache: CachePolicy::Warm,
        };
        let mut statuses = Vec::new();
        let out = execute(&job, dir.path(), &StopFlag::new(), &mut |s| {
            statuses.push(s.to_string())
        })
        .unwrap();
        assert_eq!(statuses.len(), 4, "one status per result: {statuses:?}");
        assert!(statuses[3].ends_with("/s (4 of 4)"), "{statuses:?}");
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
