//! The stonewall: a timed phase that ends at a deadline (mdtest -W, IOR -D) or when the first
//! thread or rank is done, with what each made up to then as its result.

use crate::WorkloadError;
use fsbench_measure::units::TimeSpan;
use std::fmt;
use std::str::FromStr;

/// When a timed phase stops before every thread (of every rank) made its share: metadata's
/// mkdir and create, every phase of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stonewall {
    /// This long after the operation started (mdtest -W, IOR -D).
    After(TimeSpan),
    /// When the first thread, of any rank, has made its whole share.
    FirstDone,
}

impl FromStr for Stonewall {
    type Err = String;
    fn from_str(text: &str) -> Result<Stonewall, String> {
        if text.trim().eq_ignore_ascii_case("first") {
            return Ok(Stonewall::FirstDone);
        }
        text.parse().map(Stonewall::After).map_err(|_| {
            format!("`{text}` is neither a duration (30s, 500ms) nor `first` (the first one done)")
        })
    }
}

impl fmt::Display for Stonewall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stonewall::After(time) => time.fmt(f),
            Stonewall::FirstDone => f.write_str("first"),
        }
    }
}

fsbench_model::text_serde!(Stonewall);

impl Stonewall {
    /// Refuses a stonewall of 0 (leaving it out means none).
    pub fn check(stonewall: Option<Stonewall>) -> Result<(), WorkloadError> {
        if stonewall == Some(Stonewall::After(TimeSpan::from_ns(0))) {
            return Err(WorkloadError::invalid(
                "stonewall",
                "must be longer than 0 (leave it out for none)",
            ));
        }
        Ok(())
    }

    /// A deadline scaled by `scale` (at least 1 ms), in nanoseconds; none for first-done.
    pub fn deadline_ns(stonewall: Option<Stonewall>, scale: f64) -> Option<u64> {
        match stonewall {
            Some(Stonewall::After(s)) => Some(((s.ns as f64 * scale) as u64).max(1_000_000)),
            _ => None,
        }
    }
}
