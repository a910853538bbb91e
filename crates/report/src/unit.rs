//! Display units for throughput figures, each with its direction.

use fsbench_measure::OpSummary;
use std::fmt;
use std::str::FromStr;

/// How a rate is shown on the terminal. Stored results keep every base unit regardless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayUnit {
    /// KiB per second (iozone's default).
    KibPerSec,
    /// MiB per second.
    MibPerSec,
    /// Operations per second (iozone -O).
    OpsPerSec,
    /// Mean microseconds per operation (iozone -N).
    MicrosPerOp,
    /// 99th percentile of the operation latency, microseconds.
    P99Micros,
}

impl DisplayUnit {
    pub const ALL: [DisplayUnit; 5] = [
        DisplayUnit::KibPerSec,
        DisplayUnit::MibPerSec,
        DisplayUnit::OpsPerSec,
        DisplayUnit::MicrosPerOp,
        DisplayUnit::P99Micros,
    ];

    /// The flag value (`kib`, `mib`, `ops`, `us`, `p99`).
    pub fn key(self) -> &'static str {
        match self {
            DisplayUnit::KibPerSec => "kib",
            DisplayUnit::MibPerSec => "mib",
            DisplayUnit::OpsPerSec => "ops",
            DisplayUnit::MicrosPerOp => "us",
            DisplayUnit::P99Micros => "p99",
        }
    }

    /// The unit as printed next to values.
    pub fn label(self) -> &'static str {
        match self {
            DisplayUnit::KibPerSec => "KiB/s",
            DisplayUnit::MibPerSec => "MiB/s",
            DisplayUnit::OpsPerSec => "ops/s",
            DisplayUnit::MicrosPerOp => "µs/op (mean)",
            DisplayUnit::P99Micros => "µs/op (p99)",
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            DisplayUnit::KibPerSec | DisplayUnit::MibPerSec | DisplayUnit::OpsPerSec
        )
    }

    pub fn direction(self) -> &'static str {
        if self.higher_is_better() {
            "higher is better"
        } else {
            "lower is better"
        }
    }

    /// The value of `summary` in this unit.
    pub fn value(self, summary: &OpSummary) -> f64 {
        match self {
            DisplayUnit::KibPerSec => summary.bytes_per_s / 1024.0,
            DisplayUnit::MibPerSec => summary.bytes_per_s / (1024.0 * 1024.0),
            DisplayUnit::OpsPerSec => summary.ops_per_s,
            DisplayUnit::MicrosPerOp => summary.latency.mean_ns / 1e3,
            DisplayUnit::P99Micros => summary.latency.p99_ns as f64 / 1e3,
        }
    }

    /// The value formatted with a sensible number of digits for this unit.
    pub fn format(self, value: f64) -> String {
        match self {
            DisplayUnit::KibPerSec | DisplayUnit::OpsPerSec => format!("{value:.0}"),
            DisplayUnit::MibPerSec => format!("{value:.1}"),
            DisplayUnit::MicrosPerOp | DisplayUnit::P99Micros => {
                if value < 10.0 {
                    format!("{value:.2}")
                } else {
                    format!("{value:.1}")
                }
            }
        }
    }
}

impl fmt::Display for DisplayUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for DisplayUnit {
    type Err = String;
    fn from_str(s: &str) -> Result<DisplayUnit, String> {
        DisplayUnit::ALL
            .into_iter()
            .find(|u| u.key() == s)
            .ok_or_else(|| format!("unknown unit '{s}': use kib, mib, ops, us or p99"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_each_unit() {
        let mut s = OpSummary {
            ops_per_s: 1000.0,
            bytes_per_s: 4096.0 * 1000.0,
            ..OpSummary::default()
        };
        s.latency.mean_ns = 2500.0;
        s.latency.p99_ns = 9000;
        assert_eq!(DisplayUnit::KibPerSec.value(&s), 4000.0);
        assert!((DisplayUnit::MibPerSec.value(&s) - 3.90625).abs() < 1e-9);
        assert_eq!(DisplayUnit::OpsPerSec.value(&s), 1000.0);
        assert_eq!(DisplayUnit::MicrosPerOp.value(&s), 2.5);
        assert_eq!(DisplayUnit::P99Micros.value(&s), 9.0);
        assert!(!DisplayUnit::MicrosPerOp.higher_is_better());
        assert_eq!("ops".parse(), Ok(DisplayUnit::OpsPerSec));
        assert!("bogus".parse::<DisplayUnit>().is_err());
    }
}
