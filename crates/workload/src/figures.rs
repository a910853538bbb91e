//! Figures more than one workload reports, declared once: the operation rate, the latency
//! percentiles of a histogram and the facts of a timed run. A workload marks its own main
//! figure (`OPS_RATE.main()`); its other figures stay in its module.

use fsbench_measure::histogram::LatencySummary;
use fsbench_model::{Direction, Measurement, MetricDef, Unit};

/// Operations per second.
pub const OPS_RATE: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher);
/// Bytes read or written per second.
pub const THROUGHPUT: MetricDef =
    MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher);
pub const LATENCY_MIN: MetricDef = MetricDef::new("latency_min", Unit::Nanos, Direction::Lower);
pub const LATENCY_MEAN: MetricDef = MetricDef::new("latency_mean", Unit::Nanos, Direction::Lower);
pub const LATENCY_P50: MetricDef = MetricDef::new("latency_p50", Unit::Nanos, Direction::Lower);
pub const LATENCY_P90: MetricDef = MetricDef::new("latency_p90", Unit::Nanos, Direction::Lower);
pub const LATENCY_P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower);
pub const LATENCY_P99_9: MetricDef = MetricDef::new("latency_p99_9", Unit::Nanos, Direction::Lower);
pub const LATENCY_MAX: MetricDef = MetricDef::new("latency_max", Unit::Nanos, Direction::Lower);
/// Facts about how the figures were measured (no direction).
pub const OPS: MetricDef = MetricDef::new("ops", Unit::Count, Direction::None);
pub const BYTES: MetricDef = MetricDef::new("bytes", Unit::Bytes, Direction::None);
pub const ELAPSED: MetricDef = MetricDef::new("elapsed", Unit::Nanos, Direction::None);
pub const CPU_USER: MetricDef = MetricDef::new("cpu_user", Unit::Nanos, Direction::None);
pub const CPU_SYS: MetricDef = MetricDef::new("cpu_sys", Unit::Nanos, Direction::None);

/// The latency figures of a histogram's summary, per operation.
pub fn latency(l: &LatencySummary) -> [Measurement; 7] {
    [
        LATENCY_MIN.at(l.min_ns as f64),
        LATENCY_MEAN.at(l.mean_ns),
        LATENCY_P50.at(l.p50_ns as f64),
        LATENCY_P90.at(l.p90_ns as f64),
        LATENCY_P99.at(l.p99_ns as f64),
        LATENCY_P99_9.at(l.p99_9_ns as f64),
        LATENCY_MAX.at(l.max_ns as f64),
    ]
}
