//! Figures more than one workload reports, declared once: the operation rate, the latency
//! percentiles of a histogram and the facts of a timed run. A workload marks its own main
//! figure (`OPS_RATE.main()`); its other figures stay in its module.

use fsbench_measure::histogram::LatencySummary;
use fsbench_model::{Amount, Direction, Measurement, Merge, MetricDef, Stat, Unit};

/// Operations per second.
/// Over a job's ranks, their operations over the slowest rank's time.
pub const OPS_RATE: MetricDef =
    MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).merged(Merge::Rate(Amount::Ops));
/// Bytes read or written per second; over a job's ranks, their bytes over the slowest rank's
/// time.
pub const THROUGHPUT: MetricDef =
    MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher)
        .merged(Merge::Rate(Amount::Bytes));
pub const LATENCY_MIN: MetricDef = MetricDef::new("latency_min", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::Min));
pub const LATENCY_MEAN: MetricDef = MetricDef::new("latency_mean", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::Mean));
pub const LATENCY_P50: MetricDef = MetricDef::new("latency_p50", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P50));
pub const LATENCY_P90: MetricDef = MetricDef::new("latency_p90", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P90));
pub const LATENCY_P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P99));
pub const LATENCY_P99_9: MetricDef = MetricDef::new("latency_p99_9", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P99_9));
pub const LATENCY_MAX: MetricDef = MetricDef::new("latency_max", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::Max));
/// Facts about how the figures were measured (no direction).
pub const OPS: MetricDef = MetricDef::new("ops", Unit::Count, Direction::None);
pub const BYTES: MetricDef = MetricDef::new("bytes", Unit::Bytes, Direction::None);
pub const ELAPSED: MetricDef = MetricDef::new("elapsed", Unit::Nanos, Direction::None);
/// CPU time adds up over a job's ranks.
pub const CPU_USER: MetricDef =
    MetricDef::new("cpu_user", Unit::Nanos, Direction::None).merged(Merge::Sum);
pub const CPU_SYS: MetricDef =
    MetricDef::new("cpu_sys", Unit::Nanos, Direction::None).merged(Merge::Sum);

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

/// Every figure a workload declares, with the rule a job's ranks merge it by (the MPI merge
/// looks each up by name): a workload's new figure is added here.
pub const DEFINED: &[MetricDef] = &[
    OPS_RATE,
    THROUGHPUT,
    LATENCY_MIN,
    LATENCY_MEAN,
    LATENCY_P50,
    LATENCY_P90,
    LATENCY_P99,
    LATENCY_P99_9,
    LATENCY_MAX,
    OPS,
    BYTES,
    ELAPSED,
    CPU_USER,
    CPU_SYS,
    crate::clients::UNEXPECTED,
    crate::clients::LINES,
    crate::clients::LOOPS,
    crate::io::results::CPU_PER_OP,
    crate::io::results::SLAT_MIN,
    crate::io::results::SLAT_MEAN,
    crate::io::results::SLAT_P50,
    crate::io::results::SLAT_P90,
    crate::io::results::SLAT_P99,
    crate::io::results::SLAT_P99_9,
    crate::io::results::SLAT_MAX,
    crate::matrix::results::PASSES,
    crate::matrix::results::FINISH,
    crate::matrix::results::PASS_RATE_STDDEV,
    crate::matrix::results::PASS_RATE_CV,
    crate::matrix::results::QUANTISATION,
    crate::matrix::results::RESIDENT_BEFORE,
    crate::metadata::ENTRIES_RATE,
    crate::mix::TPS,
    crate::mix::READ_THROUGHPUT,
    crate::mix::WRITE_THROUGHPUT,
    crate::mix::CPU_USER_PERCENT,
    crate::mix::CPU_SYS_PERCENT,
    crate::mix::CPU_PERCENT,
    crate::mix::SYNC,
    crate::mix::TRANSACTIONS,
    crate::sleep::SLEPT,
    crate::task::REAL,
    crate::task::USER,
    crate::task::SYS,
    crate::task::SYNC,
    crate::task::RATE,
    crate::task::BYTES,
    crate::task::FILES,
    crate::writeback::WRITEBACK,
    crate::writeback::SYNC[0],
    crate::writeback::SYNC[1],
    crate::writeback::SYNC[2],
    crate::writeback::SYNC[3],
    crate::writeback::SYNC[4],
    crate::writeback::SYNC[5],
    crate::writeback::SYNC[6],
    crate::durability::VIOLATIONS,
    crate::durability::CUTS,
    crate::durability::BY_KIND[0],
    crate::durability::BY_KIND[1],
    crate::durability::BY_KIND[2],
    crate::durability::BY_KIND[3],
    crate::durability::BY_KIND[4],
    crate::durability::BY_KIND[5],
    crate::durability::BY_KIND[6],
    crate::durability::CRASH_STATES,
    crate::durability::RECOVERY[0],
    crate::durability::RECOVERY[1],
    crate::durability::RECOVERY[2],
    crate::durability::RECOVERY[3],
    crate::replay::REPLAY_TIME,
    crate::replay::DIVERGED,
    crate::replay::REFUSED,
];

/// The definition of the figure named `name` in [`DEFINED`]; None for a name no workload
/// declares.
pub fn definition(name: &str) -> Option<&'static MetricDef> {
    DEFINED.iter().find(|d| d.name == name)
}

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

#[cfg(test)]
mod merge_rules {
    use super::*;

    /// The rule the MPI merge gave a figure from its name before rules were declared (kept
    /// here only to show that declaring them changed no figure's merge).
    fn by_name(name: &str, unit: Unit, direction: Direction) -> Merge {
        let stat = Stat::ALL.into_iter().find(|s| {
            name.strip_suffix(s.name())
                .is_some_and(|rest| rest.ends_with('_'))
        });
        if let Some(stat) = stat {
            return Merge::Distribution(stat);
        }
        match unit {
            Unit::BytesPerSec | Unit::OpsPerSec if direction == Direction::Higher => match name {
                "throughput" => Merge::Rate(Amount::Bytes),
                "ops_rate" => Merge::Rate(Amount::Ops),
                _ => Merge::Sum,
            },
            _ if name.ends_with("_per_op") => Merge::PerOp,
            Unit::Nanos if name.starts_with("cpu_") => Merge::Sum,
            _ => Merge::of(unit, direction),
        }
    }

    /// Every figure merges by the rule its name gave it before rules were declared (the MPI
    /// merge's results are unchanged), and a name means one rule.
    #[test]
    fn every_defined_figure_merges_as_its_name_did() {
        for def in DEFINED {
            assert_eq!(
                def.merge,
                by_name(def.name, def.unit, def.direction),
                "{}",
                def.name
            );
            for other in DEFINED.iter().filter(|o| o.name == def.name) {
                assert_eq!(other.merge, def.merge, "{}", def.name);
            }
            assert_eq!(definition(def.name).map(|d| d.merge), Some(def.merge));
        }
        assert!(definition("iops").is_none());
        // A new rate counted in operations says so: its name is not guessed.
        const IOPS: MetricDef = MetricDef::new("iops", Unit::OpsPerSec, Direction::Higher);
        assert_eq!(IOPS.merge, Merge::Sum);
        assert_eq!(
            IOPS.merged(Merge::Rate(Amount::Ops)).merge,
            Merge::Rate(Amount::Ops)
        );
    }
}

#[cfg(test)]
mod recorded;
