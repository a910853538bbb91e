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

/// The figures of the latency distribution, in [`distribution`]'s order.
pub const LATENCY: [MetricDef; 7] = [
    LATENCY_MIN,
    LATENCY_MEAN,
    LATENCY_P50,
    LATENCY_P90,
    LATENCY_P99,
    LATENCY_P99_9,
    LATENCY_MAX,
];

/// The latency figures of a histogram's summary, per operation.
pub fn latency(l: &LatencySummary) -> [Measurement; 7] {
    distribution(&LATENCY, l)
}

/// A distribution's figures from a histogram's summary: `defs` are its minimum, mean, median,
/// 90th, 99th and 99.9th percentiles and maximum (a second distribution, such as the io
/// workload's submission latency, names its own).
pub fn distribution(defs: &[MetricDef; 7], l: &LatencySummary) -> [Measurement; 7] {
    let values = [
        l.min_ns as f64,
        l.mean_ns,
        l.p50_ns as f64,
        l.p90_ns as f64,
        l.p99_ns as f64,
        l.p99_9_ns as f64,
        l.max_ns as f64,
    ];
    std::array::from_fn(|i| defs[i].at(values[i]))
}
