//! What the matrix reports, declared once: the figures of a measured phase of a cell (their
//! units, directions, and which is main) and its dimensions (phase, file size, record size).

use super::run::CellResult;
use fsbench_model::{Dims, Direction, MetricDef, ResultRecord, Unit};
use serde_json::json;

/// Bytes per second over the measured time of every pass: the matrix's main figure.
pub const THROUGHPUT: MetricDef =
    MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher).main();
/// Operations per second.
pub const OPS_RATE: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher);
pub const LATENCY_MIN: MetricDef = MetricDef::new("latency_min", Unit::Nanos, Direction::Lower);
pub const LATENCY_MEAN: MetricDef = MetricDef::new("latency_mean", Unit::Nanos, Direction::Lower);
pub const LATENCY_P50: MetricDef = MetricDef::new("latency_p50", Unit::Nanos, Direction::Lower);
pub const LATENCY_P90: MetricDef = MetricDef::new("latency_p90", Unit::Nanos, Direction::Lower);
pub const LATENCY_P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower);
pub const LATENCY_P99_9: MetricDef = MetricDef::new("latency_p99_9", Unit::Nanos, Direction::Lower);
pub const LATENCY_MAX: MetricDef = MetricDef::new("latency_max", Unit::Nanos, Direction::Lower);
/// Facts about how the figures were measured (no direction).
pub const PASSES: MetricDef = MetricDef::new("passes", Unit::Count, Direction::None);
pub const OPS: MetricDef = MetricDef::new("ops", Unit::Count, Direction::None);
pub const BYTES: MetricDef = MetricDef::new("bytes", Unit::Bytes, Direction::None);
pub const ELAPSED: MetricDef = MetricDef::new("elapsed", Unit::Nanos, Direction::None);
/// Part of `elapsed` spent finishing (fsync, close, flushing a stdio buffer).
pub const FINISH: MetricDef = MetricDef::new("finish", Unit::Nanos, Direction::None);
pub const CPU_USER: MetricDef = MetricDef::new("cpu_user", Unit::Nanos, Direction::None);
pub const CPU_SYS: MetricDef = MetricDef::new("cpu_sys", Unit::Nanos, Direction::None);
/// Spread of the per-pass operation rates.
pub const PASS_RATE_STDDEV: MetricDef =
    MetricDef::new("pass_rate_stddev", Unit::OpsPerSec, Direction::None);
pub const PASS_RATE_CV: MetricDef = MetricDef::new("pass_rate_cv", Unit::Ratio, Direction::None);
/// Largest share of the file found in the page cache before a pass.
pub const RESIDENT_BEFORE: MetricDef =
    MetricDef::new("resident_before", Unit::Percent, Direction::None);

impl CellResult {
    /// The result as the store and every report read it.
    pub fn record(&self) -> ResultRecord {
        let s = &self.summary;
        let l = &s.latency;
        let mut measurements = vec![
            THROUGHPUT.at(s.bytes_per_s),
            OPS_RATE.at(s.ops_per_s),
            LATENCY_MIN.at(l.min_ns as f64),
            LATENCY_MEAN.at(l.mean_ns),
            LATENCY_P50.at(l.p50_ns as f64),
            LATENCY_P90.at(l.p90_ns as f64),
            LATENCY_P99.at(l.p99_ns as f64),
            LATENCY_P99_9.at(l.p99_9_ns as f64),
            LATENCY_MAX.at(l.max_ns as f64),
            PASSES.at(s.passes as f64),
            OPS.at(s.ops as f64),
            BYTES.at(s.bytes as f64),
            ELAPSED.at(s.elapsed_ns as f64),
            FINISH.at(s.finish_ns as f64),
            CPU_USER.at(s.cpu.user_ns as f64),
            CPU_SYS.at(s.cpu.sys_ns as f64),
            PASS_RATE_STDDEV.at(s.pass_ops_per_s.stddev),
            PASS_RATE_CV.at(s.pass_ops_per_s.cv),
        ];
        if let Some(resident) = self.resident_before_percent {
            measurements.push(RESIDENT_BEFORE.at(resident));
        }
        let attributes = json!({
            "test": self.test.name(),
            "cache_state": self.cache_state.name(),
            "direct_io": self.direct_io,
        });
        ResultRecord {
            dims: Dims {
                phase: Some(self.phase.name().to_string()),
                file_size_bytes: Some(self.file_size_bytes),
                record_size_bytes: Some(self.record_size_bytes),
                ..Dims::default()
            },
            attributes: match attributes {
                serde_json::Value::Object(map) => map,
                _ => unreachable!("a json! object"),
            },
            measurements,
            latency_bins: self.latency_bins.clone(),
        }
    }
}
