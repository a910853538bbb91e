//! Records of where a run happened, written once and read back typed: the host ([`HostInfo`])
//! with the clock that timed its operations ([`ClockInfo`]). The probing is
//! `fsbench-measure`'s (`host::ProbeHost`, `Clock::info`); these are plain data, stored as
//! JSON and read by the reports.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The machine a run happened on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -v`.
    pub kernel_version: String,
    pub machine: String,
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: usize,
    pub memory_bytes: u64,
    /// The clock that times operations (the TSC or CLOCK_MONOTONIC, and why not the TSC).
    pub clock: ClockInfo,
}

/// A host record as stored, read back: [`HostInfo`]'s fields, each absent where the record
/// lacks it (a record older than the field, or one written by hand) — what the reports print
/// ("?" for an absent name) without walking JSON paths.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct HostRecord {
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub machine: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub clock: Option<ClockInfo>,
}

impl HostRecord {
    /// The record in `json`; one whose fields have other types than [`HostInfo`]'s reads as
    /// empty.
    pub fn of(json: &serde_json::Value) -> HostRecord {
        HostRecord::deserialize(json).unwrap_or_default()
    }
}

/// Where a clock's ticks come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockSource {
    /// The CPU's invariant time-stamp counter (rdtsc), calibrated against CLOCK_MONOTONIC.
    Tsc,
    /// clock_gettime(CLOCK_MONOTONIC) through the vDSO: ticks are nanoseconds.
    Monotonic,
}

/// What results record about the clock that timed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    pub source: ClockSource,
    /// Ticks per second (1e9 for the monotonic clock).
    pub ticks_per_s: f64,
    /// Why the TSC was not used, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<Cow<'static, str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host record reads back as it was written, and is written as it always was.
    #[test]
    fn a_host_record_round_trips_through_json() {
        let host = HostInfo {
            hostname: "bench-1".into(),
            kernel_release: "6.8.0".into(),
            kernel_version: "#1 SMP".into(),
            machine: "x86_64".into(),
            cpu_model: "Some CPU".into(),
            cpus: 2,
            memory_bytes: 8 << 30,
            clock: ClockInfo {
                source: ClockSource::Monotonic,
                ticks_per_s: 1e9,
                fallback_reason: Some(Cow::Borrowed("no invariant TSC")),
            },
        };
        let text = serde_json::to_string(&host).unwrap();
        assert_eq!(
            text,
            r##"{"hostname":"bench-1","kernel_release":"6.8.0","kernel_version":"#1 SMP","machine":"x86_64","cpu_model":"Some CPU","cpus":2,"memory_bytes":8589934592,"clock":{"source":"monotonic","ticks_per_s":1000000000.0,"fallback_reason":"no invariant TSC"}}"##
        );
        let back: HostInfo = serde_json::from_str(&text).unwrap();
        assert_eq!(back, host);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        let tsc = ClockInfo {
            source: ClockSource::Tsc,
            ticks_per_s: 2.5e9,
            fallback_reason: None,
        };
        let text = serde_json::to_string(&tsc).unwrap();
        assert_eq!(text, r#"{"source":"tsc","ticks_per_s":2500000000.0}"#);
        assert_eq!(serde_json::from_str::<ClockInfo>(&text).unwrap(), tsc);
    }

    /// A stored host record reads typed whatever it holds: a full one as written, one older
    /// than a field without it, an empty or mistyped one as empty — never an error.
    #[test]
    fn a_stored_host_record_reads_field_by_field() {
        let full = serde_json::json!({"hostname": "h", "kernel_release": "6.18",
            "kernel_version": "#1", "machine": "x86_64", "cpu_model": "C", "cpus": 2,
            "memory_bytes": 1024, "clock": {"source": "tsc", "ticks_per_s": 2.5e9},
            "dir": {"fsid": "0"}});
        let record = HostRecord::of(&full);
        assert_eq!(record.hostname.as_deref(), Some("h"));
        assert_eq!((record.cpus, record.memory_bytes), (Some(2), Some(1024)));
        assert_eq!(record.clock.unwrap().source, ClockSource::Tsc);
        let old = HostRecord::of(&serde_json::json!({"kernel_release": "5.10", "cpus": 4}));
        assert_eq!(old.kernel_release.as_deref(), Some("5.10"));
        assert_eq!((old.cpus, old.clock, old.hostname), (Some(4), None, None));
        assert_eq!(
            HostRecord::of(&serde_json::json!({})),
            HostRecord::default()
        );
        assert_eq!(
            HostRecord::of(&serde_json::json!({"cpus": "two"})),
            HostRecord::default()
        );
    }
}
