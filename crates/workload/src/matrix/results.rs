//! What the matrix reports, declared once: the figures of a measured phase of a cell (their
//! units, directions, and which is main) and its dimensions (phase, file size, record size).

use super::run::CellResult;
use fsbench_model::{Dims, Direction, MetricDef, ResultRecord, Unit};
use serde::Serialize;
use serde_json::json;

/// The cache state a measurement started from, as recorded with each result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheState {
    /// Every page of the file was in the page cache.
    Warm,
    /// No page of the file was in the page cache.
    Cold,
    /// Some pages were cached (see the resident percentage).
    Partial,
    /// The page cache was bypassed (O_DIRECT).
    Direct,
    /// The pass created a new file: there was nothing to cache.
    NewFile,
    /// Residency could not be measured (mincore refused the file, or no harness measured it).
    Unknown,
}

impl CacheState {
    /// The state implied by the resident fraction (0.0 ..= 1.0) of a file's pages.
    pub fn from_resident(fraction: f64) -> CacheState {
        if fraction >= 1.0 {
            CacheState::Warm
        } else if fraction <= 0.0 {
            CacheState::Cold
        } else {
            CacheState::Partial
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
            CacheState::Partial => "partial",
            CacheState::Direct => "direct",
            CacheState::NewFile => "new-file",
            CacheState::Unknown => "unknown",
        }
    }
}

pub use crate::figures::{
    BYTES, CPU_SYS, CPU_USER, ELAPSED, LATENCY_MAX, LATENCY_MEAN, LATENCY_MIN, LATENCY_P50,
    LATENCY_P90, LATENCY_P99, LATENCY_P99_9, OPS, OPS_RATE,
};

/// Bytes per second over the measured time of every pass: the matrix's main figure.
pub const THROUGHPUT: MetricDef = crate::figures::THROUGHPUT.main();
pub const PASSES: MetricDef = MetricDef::new("passes", Unit::Count, Direction::None);
/// Part of `elapsed` spent finishing (fsync, close, flushing a stdio buffer).
pub const FINISH: MetricDef = MetricDef::new("finish", Unit::Nanos, Direction::None);
/// Spread of the per-pass operation rates.
pub const PASS_RATE_STDDEV: MetricDef =
    MetricDef::new("pass_rate_stddev", Unit::OpsPerSec, Direction::None);
pub const PASS_RATE_CV: MetricDef = MetricDef::new("pass_rate_cv", Unit::Ratio, Direction::None);
/// With a fixed number of passes (`passes`): the clock's resolution over the measured time,
/// the largest relative error the clock alone puts on the figures (iozone's one pass of a
/// small cell, timed with gettimeofday's microseconds, is off by up to 100 %).
pub const QUANTISATION: MetricDef = MetricDef::new("quantisation", Unit::Ratio, Direction::None);
/// Largest share of the file found in the page cache before a pass.
pub const RESIDENT_BEFORE: MetricDef =
    MetricDef::new("resident_before", Unit::Percent, Direction::None);

impl CellResult {
    /// The result as the store and every report read it.
    pub fn record(&self) -> ResultRecord {
        let s = &self.summary;
        let mut measurements = vec![THROUGHPUT.at(s.bytes_per_s), OPS_RATE.at(s.ops_per_s)];
        measurements.extend(crate::figures::latency(&s.latency));
        measurements.extend([
            PASSES.at(s.passes as f64),
            OPS.at(s.ops as f64),
            BYTES.at(s.bytes as f64),
            ELAPSED.at(s.elapsed_ns as f64),
            FINISH.at(s.finish_ns as f64),
            CPU_USER.at(s.cpu.user_ns as f64),
            CPU_SYS.at(s.cpu.sys_ns as f64),
            PASS_RATE_STDDEV.at(s.pass_ops_per_s.stddev),
            PASS_RATE_CV.at(s.pass_ops_per_s.cv),
        ]);
        if let Some(q) = self.quantisation {
            measurements.push(QUANTISATION.at(q));
        }
        if let Some(resident) = self.resident_before_percent {
            measurements.push(RESIDENT_BEFORE.at(resident));
        }
        let mut attributes = json!({
            "test": self.test.name(),
            "cache_state": self.cache_state.name(),
            "direct_io": self.direct_io,
            "read_buffer_offset_bytes": self.buffer_offsets.read,
            "write_buffer_offset_bytes": self.buffer_offsets.write,
        });
        if let Some(walled) = self.stonewalled {
            attributes["stonewalled"] = json!(walled);
        }
        if let Some(wall) = self.stonewall_ns {
            attributes["stonewall_ns"] = json!(wall);
        }
        if self.stonewall_first {
            attributes["stonewall"] = json!("first");
        }
        if let Some(bytes) = self.shared_file_bytes {
            attributes["layout"] = json!("shared-file");
            attributes["shared_file_bytes"] = json!(bytes);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_from_residency() {
        assert_eq!(CacheState::from_resident(1.0), CacheState::Warm);
        assert_eq!(CacheState::from_resident(0.0), CacheState::Cold);
        assert_eq!(CacheState::from_resident(0.5), CacheState::Partial);
    }
}
