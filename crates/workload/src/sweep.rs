//! Sweeps: one workload run at each value of one of its numeric settings (`threads=1,2,4,8`),
//! every result tagged with the point it belongs to, so the results form a curve; and the
//! curve's peak and knee (where more load stops adding throughput).
//!
//! A sweep works on any workload through its settings' serde form: the setting is replaced by
//! each value and read back by the workload's own `Deserialize`, so a value the setting cannot
//! take is refused with the setting's own message, before anything runs.

use crate::harness::Harness;
use crate::workload::{Context, End, Execute, Sink};
use crate::{StopFlag, WorkloadError, WorkloadSettings};
use fsbench_measure::series::Outlet;
use fsbench_measure::units::{parse_duration_ns, parse_size};
use fsbench_model::series::PhaseBatch;
use fsbench_model::{Outcome, ResultRecord, Sweep as SweepPoint};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::str::FromStr;

/// What to sweep: a setting (its plan key) and its values, as written (`threads=1,2,4`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub parameter: String,
    pub values: Vec<String>,
}

impl FromStr for SweepSpec {
    type Err = String;
    fn from_str(text: &str) -> Result<SweepSpec, String> {
        let (parameter, values) = text
            .split_once('=')
            .ok_or_else(|| format!("'{text}' is not SETTING=V1,V2,... (e.g. threads=1,2,4,8)"))?;
        let values: Vec<String> = values
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(String::from)
            .collect();
        if values.len() < 2 {
            return Err(format!("'{text}': a sweep needs at least two values"));
        }
        Ok(SweepSpec {
            parameter: parameter.trim().replace('-', "_"),
            values,
        })
    }
}

impl std::fmt::Display for SweepSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.parameter, self.values.join(","))
    }
}

/// The numeric value of a sweep point, for the curve: a number, a size in bytes or a duration
/// in nanoseconds.
fn numeric(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .or_else(|| parse_size(text).ok().map(|b| b as f64))
        .or_else(|| parse_duration_ns(text).ok().map(|ns| ns as f64))
}

impl SweepSpec {
    /// The settings at every point, checked: the setting exists and is numeric, every value is
    /// one the workload takes, and the settings at that value pass its checks under `ctx`.
    pub fn points(
        &self,
        settings: &WorkloadSettings,
        ctx: &Context,
    ) -> Result<Vec<(f64, WorkloadSettings)>, WorkloadError> {
        let field = "sweep";
        let base = serde_json::to_value(settings).expect("settings serialize");
        let current = base.get(&self.parameter).ok_or_else(|| {
            let keys: Vec<&String> = base
                .as_object()
                .map(|m| m.keys().filter(|k| *k != "kind").collect())
                .unwrap_or_default();
            WorkloadError::invalid(
                field,
                format!(
                    "the {} workload has no setting '{}'; its settings are: {}",
                    settings.kind(),
                    self.parameter,
                    keys.iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        let mut points = Vec::new();
        for text in &self.values {
            let x = numeric(text).ok_or_else(|| {
                WorkloadError::invalid(
                    field,
                    format!(
                        "{}={text}: only numeric settings (counts, sizes, durations) can be swept",
                        self.parameter
                    ),
                )
            })?;
            let value = if current.is_string() {
                serde_json::Value::String(text.clone())
            } else {
                serde_json::from_str(text).map_err(|_| {
                    WorkloadError::invalid(
                        field,
                        format!("{}={text}: not a number", self.parameter),
                    )
                })?
            };
            let mut json = base.clone();
            json[&self.parameter] = value;
            let point: WorkloadSettings = serde_json::from_value(json).map_err(|e| {
                WorkloadError::invalid(field, format!("{}={text}: {e}", self.parameter))
            })?;
            point.apply(crate::workload::Check(ctx)).map_err(|e| {
                WorkloadError::invalid(field, format!("{}={text}: {e}", self.parameter))
            })?;
            points.push((x, point));
        }
        Ok(points)
    }
}

/// Tags each record with its sweep point, then hands it on.
struct Tag<'a> {
    inner: &'a mut dyn Sink,
    point: SweepPoint,
    done: usize,
}

impl Sink for Tag<'_> {
    fn record(&mut self, mut record: ResultRecord, _done: usize, _total: Option<usize>) {
        record.dims.sweep = Some(self.point.clone());
        self.done += 1;
        self.inner.record(record, self.done, None);
    }
    fn warning(&mut self, message: &str) {
        self.inner.warning(message);
    }
    fn status(&mut self, line: &str) {
        let line = format!("{}={}: {line}", self.point.parameter, self.point.value);
        self.inner.status(&line);
    }
    fn outlet(&mut self) -> std::sync::Arc<dyn Outlet> {
        std::sync::Arc::new(TagSeries {
            inner: self.inner.outlet(),
            point: format!("{}={}", self.point.parameter, self.point.value),
        })
    }
}

/// Tags each phase's label with its sweep point (its results' dimension), then hands it on.
struct TagSeries {
    inner: std::sync::Arc<dyn Outlet>,
    point: String,
}

impl Outlet for TagSeries {
    fn send(&self, batch: &PhaseBatch) {
        let mut batch = batch.clone();
        batch.label = format!("{} {}", batch.label, self.point).trim().to_string();
        self.inner.send(&batch);
    }
}

/// Runs `settings` at every point of `sweep`, in order; stops at the first point that does not
/// end ok (the results before it are kept).
pub fn run(
    settings: &WorkloadSettings,
    sweep: &SweepSpec,
    ctx: &Context,
    dir: &Path,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> End {
    let points = match sweep.points(settings, ctx) {
        Ok(points) => points,
        Err(e) => return End::failed(e, None),
    };
    let mut done = 0;
    let mut seed = None;
    for (x, point) in points {
        let mut tag = Tag {
            inner: &mut *sink,
            point: SweepPoint {
                parameter: sweep.parameter.clone(),
                value: x,
            },
            done,
        };
        let end = point.apply(Execute {
            ctx,
            dir,
            stop,
            sink: &mut tag,
            harness: &mut *harness,
        });
        done = tag.done;
        seed = seed.or(end.seed);
        if end.outcome != Outcome::Ok {
            return End { seed, ..end };
        }
    }
    End::ok(seed)
}

/// Where a curve peaks and where it saturates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Curve {
    pub peak: (f64, f64),
    /// The first point after which no point is more than [`KNEE_GAIN`] above it: more load
    /// stops adding throughput there. None when the curve still climbs at its last point.
    pub knee: Option<(f64, f64)>,
}

/// How much higher a later point may be and the knee still be where it is (5 %).
pub const KNEE_GAIN: f64 = 0.05;

/// The peak and knee of `(x, y)` points sorted by x, for a figure where higher is better.
pub fn curve(points: &[(f64, f64)]) -> Option<Curve> {
    let peak = points.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let last = points.len() - 1;
    let knee = (0..last)
        .find(|&i| {
            let (_, y) = points[i];
            points[i + 1..]
                .iter()
                .all(|&(_, later)| later <= y * (1.0 + KNEE_GAIN))
        })
        .map(|i| points[i]);
    Some(Curve { peak, knee })
}

/// Runs a workload, swept when `sweep` says so: what every runner (the one-case command, the
/// campaign's worker) calls.
pub fn execute(
    settings: &WorkloadSettings,
    sweep: Option<&SweepSpec>,
    ctx: &Context,
    dir: &Path,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> End {
    match sweep {
        Some(sweep) => run(settings, sweep, ctx, dir, stop, sink, harness),
        None => settings.apply(Execute {
            ctx,
            dir,
            stop,
            sink,
            harness,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Detached;
    use crate::sleep::SleepSettings;
    use crate::workload::Collect;

    #[test]
    fn a_sweep_runs_every_point_and_tags_its_results() {
        let settings = WorkloadSettings::Sleep(SleepSettings::default());
        let sweep: SweepSpec = "duration=5ms,10ms".parse().unwrap();
        let mut sink = Collect::default();
        let end = run(
            &settings,
            &sweep,
            &Context::default(),
            Path::new("/"),
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok);
        let points: Vec<f64> = sink
            .records
            .iter()
            .map(|r| r.dims.sweep.as_ref().unwrap().value)
            .collect();
        assert_eq!(points, [5e6, 1e7]);
        assert!(sink.records[1].main().unwrap().value >= 1e7);
    }

    /// Under mpirun a sweep's points keep the job's meetings: the polls of a first-done
    /// stonewall and the agreement before a shared file is made reach the rank's harness.
    #[test]
    fn a_sweep_hands_on_the_polls_and_agreements_of_a_job() {
        let matrix = crate::matrix::MatrixSettings {
            tests: vec![crate::matrix::MatrixTest::Write],
            file_sizes: "64k".parse().unwrap(),
            record_sizes: "4k".parse().unwrap(),
            shared_file: true,
            stonewall: Some(crate::stonewall::Stonewall::FirstDone),
            ..Default::default()
        };
        let sweep: SweepSpec = "min_time=1ms,2ms".parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut meetings = crate::harness::Watching::default();
        let ctx = Context {
            job: Some(crate::workload::Place { rank: 0, ranks: 1 }),
            ..Context::default()
        };
        let end = run(
            &WorkloadSettings::Matrix(matrix),
            &sweep,
            &ctx,
            dir.path(),
            &StopFlag::new(),
            &mut Collect::default(),
            &mut meetings,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert_eq!(
            (meetings.ended, meetings.setups),
            (4, 2),
            "write and rewrite watched at each point, the write agreed on"
        );
    }

    #[test]
    fn a_bad_sweep_is_refused_in_the_workload_s_terms() {
        let settings = WorkloadSettings::Sleep(SleepSettings::default());
        let ctx = Context::default();
        let err = |text: &str| {
            text.parse::<SweepSpec>()
                .map_err(|e| e.to_string())
                .and_then(|s| {
                    s.points(&settings, &ctx)
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
                .unwrap_err()
        };
        assert!(err("threads=1,2").contains("has no setting 'threads'; its settings are: duration"));
        assert!(err("duration=1s").contains("at least two values"));
        assert!(err("duration=1s,soon").contains("only numeric settings"));
        assert!(err("duration").contains("not SETTING=V1,V2"));
    }

    #[test]
    fn the_knee_is_where_more_load_stops_adding() {
        let points = [
            (1.0, 100.0),
            (2.0, 190.0),
            (4.0, 350.0),
            (8.0, 360.0),
            (16.0, 340.0),
        ];
        let c = curve(&points).unwrap();
        assert_eq!(c.peak, (8.0, 360.0));
        assert_eq!(c.knee, Some((4.0, 350.0)));
        let climbing = [(1.0, 1.0), (2.0, 2.0), (4.0, 4.0)];
        assert_eq!(curve(&climbing).unwrap().knee, None);
    }
}
