//! Series: what a sample measured over time, beside its totals. A running phase's sampler hands
//! on [`PhaseBatch`]es (per interval: operations, bytes and latency percentiles of every thread
//! or client and of the whole phase); [`Phases`] collects them as they come (a batch of longer
//! intervals replaces the phase's shorter ones) and turns them, with the host monitors', into
//! stored [`Series`]: one per source, phase, subject and metric, each a list of [`Point`]s with
//! its unit. [`Assessment`] is what a sample's series say of it (steady or not, disturbed or
//! not). Plain data: the measuring is `fsbench-measure`'s, the judging `fsbench-analysis`'s.

use crate::Unit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency percentiles of the operations of one interval, from the interval's own histogram
/// (within the histogram's 0.4 %: bucket midpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub max_ns: u64,
}

/// What one thread (or client, or the whole phase) did in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub ops: u64,
    pub bytes: u64,
    /// None when the interval had no operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Percentiles>,
    /// How much of the interval went to the timed finishing steps that end passes (the
    /// matrix's fsync, close or stdio flush), ns; of the whole phase, the mean over its
    /// threads. A flush moves no bytes: the intervals it fills are not a fall in the rate.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub finish_ns: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One interval of a phase: when it started (CLOCK_MONOTONIC of the host that measured it),
/// how long it lasted, and what each thread and the whole phase did in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub start_ns: u64,
    pub length_ns: u64,
    pub total: Tally,
    /// Per thread (or client), in order; empty for a phase of one step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<Tally>,
}

/// Some intervals of one timed phase, as its sampler hands them on (about every second, and
/// at the phase's end).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseBatch {
    /// The phase, unique in the process that measured it (numbered per sample on arrival).
    pub phase: u64,
    /// What the phase measures, as its results' dimensions say it (`write 16m 4k`).
    pub label: String,
    /// What each of `Interval::each` is: `thread`, `client`.
    pub each: String,
    /// The length the intervals were taken at. A batch with a longer one than the phase's
    /// earlier batches replaces them (a phase past a minute is kept at 1 s, not 100 ms).
    pub interval_ns: u64,
    pub intervals: Vec<Interval>,
}

impl PhaseBatch {
    /// The rate of the batch's last interval, for a live progress line ("812 MiB/s", "1520
    /// ops/s"); None when it has no interval or no length.
    pub fn live_rate(&self) -> Option<String> {
        let last = self.intervals.last().filter(|i| i.length_ns > 0)?;
        let seconds = last.length_ns as f64 / 1e9;
        let (rate, unit) = if last.total.bytes > 0 {
            (last.total.bytes as f64 / seconds, Unit::BytesPerSec)
        } else {
            (last.total.ops as f64 / seconds, Unit::OpsPerSec)
        };
        let (divisor, label) = unit.display(rate);
        let digits = if unit == Unit::OpsPerSec { 0 } else { 1 };
        let shown = format!("{} {:.digits$} {label}", self.label, rate / divisor);
        Some(shown.trim().to_string())
    }
}

/// One point of a series: its interval's start (ns since the sample began), its length, and
/// the value over it. Written as `[t_ns, dt_ns, value]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point(pub u64, pub u64, pub f64);

impl Point {
    pub fn t_ns(&self) -> u64 {
        self.0
    }
    pub fn dt_ns(&self) -> u64 {
        self.1
    }
    pub fn value(&self) -> f64 {
        self.2
    }
}

/// The workload's series' source (the monitors' are theirs: [`source`]).
pub const WORKLOAD: &str = source::WORKLOAD;

/// A series is named by three strings — its source, its subject and its metric — written by
/// the workload's sampler and the host monitors and read by the assessment, the MPI merge and
/// the reports: each spelled once, here.
pub mod source {
    /// The workload's phases.
    pub const WORKLOAD: &str = "workload";
    /// A watched block device (/proc/diskstats); its label is its role ([`super::role`]).
    pub const DISK: &str = "disk";
    /// /proc/meminfo.
    pub const MEMORY: &str = "memory";
    /// /proc/vmstat.
    pub const VM: &str = "vm";
    /// /proc/stat.
    pub const CPU: &str = "cpu";
    /// /proc/pressure.
    pub const PRESSURE: &str = "pressure";
    /// The sample's own processes (CPU time, and their I/O on each watched device).
    pub const PROCESS: &str = "process";
}

/// The role of a watched device: the label of its `disk` and `process` series.
pub mod role {
    /// The filesystem's own block device.
    pub const DEVICE: &str = "device";
    /// The disk under it (a loop device's backing disk, a partition's disk).
    pub const DISK: &str = "disk";
}

/// Whose a series is, where the subject is fixed (a device's is its name, a thread's `thread
/// N`, a CPU's `cpuN`).
pub mod subject {
    /// A workload phase's whole.
    pub const TOTAL: &str = "total";
    /// Every CPU together.
    pub const ALL_CPUS: &str = "all";
    /// The host's memory and virtual memory.
    pub const HOST: &str = "host";
    /// The sample's own processes.
    pub const WORKLOAD: &str = "workload";
}

/// What a series measures.
pub mod metric {
    // A workload phase's, per interval.
    pub const OPS: &str = "ops";
    pub const BYTES: &str = "bytes";
    pub const LATENCY_P50: &str = "latency_p50";
    pub const LATENCY_P90: &str = "latency_p90";
    pub const LATENCY_P99: &str = "latency_p99";
    pub const LATENCY_P99_9: &str = "latency_p99_9";
    pub const LATENCY_MAX: &str = "latency_max";
    /// The timed finishing steps (fsync, close, a flush), ns.
    pub const FINISH: &str = "finish";
    // A disk's (and, for the bytes, the sample's own I/O on it).
    pub const READ_IOS: &str = "read_ios";
    pub const READ_BYTES: &str = "read_bytes";
    pub const WRITE_IOS: &str = "write_ios";
    pub const WRITE_BYTES: &str = "write_bytes";
    pub const IN_FLIGHT: &str = "in_flight";
    /// Time with I/O in flight, percent.
    pub const BUSY: &str = "busy";
    // Memory's.
    pub const DIRTY: &str = "dirty";
    pub const WRITEBACK: &str = "writeback";
    pub const CACHED: &str = "cached";
    pub const FREE: &str = "free";
    // Virtual memory's.
    pub const DIRTIED: &str = "dirtied";
    pub const WRITTEN: &str = "written";
    pub const RECLAIM_SCANNED: &str = "reclaim_scanned";
    pub const RECLAIM_SCANNED_DIRECT: &str = "reclaim_scanned_direct";
    pub const RECLAIM_STOLEN: &str = "reclaim_stolen";
    // A CPU's, percent of its time (user and system: the sample's processes' too).
    pub const USER: &str = "user";
    pub const SYSTEM: &str = "system";
    pub const IRQ: &str = "irq";
    pub const IOWAIT: &str = "iowait";
    pub const STEAL: &str = "steal";
    // A pressure's, percent of the time stalled.
    pub const SOME: &str = "some";
    pub const FULL: &str = "full";
}

/// What a series measures, where, and its points over the sample. Counts (ops, bytes, I/Os)
/// are per interval: a rate is `value / dt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// `workload`, or a monitor: `disk`, `memory`, `vm`, `cpu`, `pressure`, `process`.
    pub source: String,
    /// The workload's phase, numbered from 0 in the sample; None for a monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<u32>,
    /// The phase's label; for a disk, its role (`target`, `backing`); else empty.
    #[serde(default)]
    pub label: String,
    /// Whose: `total`, `thread 3`, `client 2`, `rank 1 total`; a device (`loop3`), a CPU
    /// (`all`, `cpu0`), a pressure (`io`), `workload`.
    pub subject: String,
    pub metric: String,
    pub unit: Unit,
    pub points: Vec<Point>,
}

impl Series {
    /// `source/phase/subject/metric` (a monitor's without the phase, a disk's with its
    /// role): one column of a long-form table.
    pub fn name(&self) -> String {
        let mut parts = vec![self.source.as_str()];
        let phase = self.phase.map(|p| p.to_string());
        if let Some(p) = &phase {
            parts.push(p);
        } else if !self.label.is_empty() {
            parts.push(&self.label);
        }
        parts.push(&self.subject);
        parts.push(&self.metric);
        parts.join("/")
    }

    /// The sum of its values (a count series: the phase's total).
    pub fn sum(&self) -> f64 {
        self.points.iter().map(|p| p.2).sum()
    }
}

/// One phase as collected: its label, what each of its parts is, and its intervals.
#[derive(Debug, Clone)]
struct Collected {
    label: String,
    each: String,
    interval_ns: u64,
    intervals: Vec<Interval>,
}

/// The batches of one sample's phases as they arrive, numbered in order of first arrival.
#[derive(Debug, Clone, Default)]
pub struct Phases {
    order: Vec<u64>,
    phases: BTreeMap<u64, Collected>,
}

impl Phases {
    /// Takes a batch: its intervals join its phase's, or replace them when taken at a longer
    /// interval (the phase passed a minute); a batch at a shorter one than the phase has is
    /// late and dropped.
    pub fn take(&mut self, batch: &PhaseBatch) {
        if !self.phases.contains_key(&batch.phase) {
            self.order.push(batch.phase);
        }
        let phase = self.phases.entry(batch.phase).or_insert_with(|| Collected {
            label: batch.label.clone(),
            each: batch.each.clone(),
            interval_ns: batch.interval_ns,
            intervals: Vec::new(),
        });
        if batch.interval_ns > phase.interval_ns {
            phase.interval_ns = batch.interval_ns;
            phase.intervals.clear();
        } else if batch.interval_ns < phase.interval_ns {
            return;
        }
        phase.intervals.extend(batch.intervals.iter().cloned());
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Every phase in order of arrival: (number, label, intervals).
    pub fn each(&self) -> impl Iterator<Item = (u32, &str, &[Interval])> {
        self.order.iter().enumerate().map(|(n, id)| {
            let p = &self.phases[id];
            (n as u32, p.label.as_str(), p.intervals.as_slice())
        })
    }

    /// The stored series of every phase, times made relative to `t0` (CLOCK_MONOTONIC ns of
    /// the sample's start on the host that measured them) and subjects prefixed with
    /// `prefix` (`rank 1 `; empty alone).
    pub fn series(&self, t0: u64, prefix: &str) -> Vec<Series> {
        let mut out = Vec::new();
        for (n, id) in self.order.iter().enumerate() {
            let p = &self.phases[id];
            // One thread's series would be its total's again.
            let threads = p.intervals.iter().map(|i| i.each.len()).max().unwrap_or(0);
            let threads = if threads > 1 { threads } else { 0 };
            let subjects = std::iter::once((format!("{prefix}{}", subject::TOTAL), None))
                .chain((0..threads).map(|t| (format!("{prefix}{} {t}", p.each), Some(t))));
            for (subject, thread) in subjects {
                let metrics: &[Metric] = if thread.is_none() {
                    &TOTAL_METRICS
                } else {
                    &EACH_METRICS
                };
                for (metric, unit, value) in metrics {
                    let points: Vec<Point> = p
                        .intervals
                        .iter()
                        .filter_map(|i| {
                            let tally = match thread {
                                None => &i.total,
                                Some(t) => i.each.get(t)?,
                            };
                            Some(Point(
                                i.start_ns.saturating_sub(t0),
                                i.length_ns,
                                value(tally)?,
                            ))
                        })
                        .collect();
                    if points.is_empty() {
                        continue;
                    }
                    out.push(Series {
                        source: WORKLOAD.into(),
                        phase: Some(n as u32),
                        label: p.label.clone(),
                        subject: subject.clone(),
                        metric: (*metric).into(),
                        unit: *unit,
                        points,
                    });
                }
            }
        }
        out
    }
}

type Metric = (&'static str, Unit, fn(&Tally) -> Option<f64>);

/// The figures of a phase's total per interval (`finish` only in the intervals that had a
/// finishing step).
const TOTAL_METRICS: [Metric; 8] = [
    (metric::OPS, Unit::Count, |t| Some(t.ops as f64)),
    (metric::BYTES, Unit::Bytes, |t| Some(t.bytes as f64)),
    (metric::LATENCY_P50, Unit::Nanos, |t| {
        t.latency.map(|l| l.p50_ns as f64)
    }),
    (metric::LATENCY_P90, Unit::Nanos, |t| {
        t.latency.map(|l| l.p90_ns as f64)
    }),
    (metric::LATENCY_P99, Unit::Nanos, |t| {
        t.latency.map(|l| l.p99_ns as f64)
    }),
    (metric::LATENCY_P99_9, Unit::Nanos, |t| {
        t.latency.map(|l| l.p99_9_ns as f64)
    }),
    (metric::LATENCY_MAX, Unit::Nanos, |t| {
        t.latency.map(|l| l.max_ns as f64)
    }),
    (metric::FINISH, Unit::Nanos, |t| {
        (t.finish_ns > 0).then_some(t.finish_ns as f64)
    }),
];

/// The figures of each thread or client per interval (fewer percentiles: a run of many
/// clients stays small).
const EACH_METRICS: [Metric; 5] = [
    (metric::OPS, Unit::Count, |t| Some(t.ops as f64)),
    (metric::BYTES, Unit::Bytes, |t| Some(t.bytes as f64)),
    (metric::LATENCY_P50, Unit::Nanos, |t| {
        t.latency.map(|l| l.p50_ns as f64)
    }),
    (metric::LATENCY_P99, Unit::Nanos, |t| {
        t.latency.map(|l| l.p99_ns as f64)
    }),
    (metric::LATENCY_MAX, Unit::Nanos, |t| {
        t.latency.map(|l| l.max_ns as f64)
    }),
];

/// What a phase's series say of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseVerdict {
    pub phase: u32,
    pub label: String,
    /// Whether the rate over its last third is within the noise of its middle third; None
    /// when it had too few intervals to say (fewer than six).
    pub steady: Option<bool>,
    /// The last third's rate against the middle third's, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_percent: Option<f64>,
    /// From the phase's start to the first interval whose rate (over three) came within 10 %
    /// of the rate over its last two thirds; None when it had too few intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_ns: Option<u64>,
    /// The time of the timed finishing steps that end its passes (fsync, close, a flush), left
    /// out of the rates judged above and said here; None when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_ns: Option<u64>,
}

/// How busy a watched device was while the workload's phases ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceLoad {
    /// `target` (the filesystem's device) or `backing` (the disk under a loop device).
    pub role: String,
    pub device: String,
    /// Its mean utilisation over the phases (time with I/O in flight), percent.
    pub busy_percent: f64,
    /// Busy at least 95 % in most of the phases' intervals: the figures are the device's limit.
    pub saturated: bool,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// What a sample's series say of it, stored with it: whether each phase was steady, how busy
/// its devices were, and whether the host disturbed it (CPU steal; another process's I/O on
/// the disk under its loop device).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    pub phases: Vec<PhaseVerdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceLoad>,
    /// CPU steal over the phases, percent of all CPUs' time; None without /proc/stat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// Bytes the disk under the loop device moved beyond what the loop device did and beyond
    /// the sample's own I/O outside it (`own_io_bytes`): another process's; None when there is
    /// no such disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// Bytes the sample's own processes (its cgroup) moved on that disk beyond what they
    /// moved through the device: its I/O outside its target (a task's source, its data
    /// files), not another process's; None when the host does not count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_io_bytes: Option<u64>,
    /// The host disturbed the sample (steal or another process's I/O, beyond their limits):
    /// a campaign's `repeat_disturbed` runs it again.
    pub disturbed: bool,
}

/// A device busy at least this much (percent) in an interval is saturated in it.
pub const SATURATED_PERCENT: f64 = 95.0;
/// CPU steal above this share of all CPUs' time (percent) over the phases disturbs a sample.
pub const STEAL_PERCENT: f64 = 2.0;
/// I/O on the disk beyond the device's, above this many bytes and [`OTHER_IO_SHARE`] of the
/// device's own, disturbs a sample.
pub const OTHER_IO_BYTES: u64 = 16 << 20;
pub const OTHER_IO_SHARE: f64 = 0.01;

/// One way the host disturbed a sample beyond its limit (the limits above).
#[derive(Debug, Clone, PartialEq)]
pub enum Disturbance {
    /// CPU steal over the phases, percent of all CPUs' time.
    Steal { percent: f64 },
    /// Bytes another process moved on `disk`, the disk under the device, against the
    /// device's own `device_bytes`.
    OtherIo {
        bytes: u64,
        disk: String,
        device_bytes: u64,
    },
}

impl std::fmt::Display for Disturbance {
    /// In a few words: "CPU steal 3.1 % of the CPUs' time", "60.0 MiB of another process's
    /// I/O on vda".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disturbance::Steal { percent } => {
                write!(f, "CPU steal {percent:.1} % of the CPUs' time")
            }
            Disturbance::OtherIo { bytes, disk, .. } => write!(
                f,
                "{:.1} MiB of another process's I/O on {}",
                *bytes as f64 / (1u64 << 20) as f64,
                if disk.is_empty() { "the disk" } else { disk }
            ),
        }
    }
}

impl Assessment {
    /// How the host disturbed the sample, each beyond its limit: the one rule that sets
    /// [`Assessment::disturbed`] when a sample is assessed, and that every report reads back.
    pub fn disturbances(&self) -> Vec<Disturbance> {
        let mut out = Vec::new();
        if let Some(percent) = self.steal_percent.filter(|&s| s > STEAL_PERCENT) {
            out.push(Disturbance::Steal { percent });
        }
        let of = |role: &str| self.devices.iter().find(|d| d.role == role);
        let device_bytes = of(role::DEVICE).map_or(0, |d| d.read_bytes + d.write_bytes);
        if let Some(bytes) = self
            .other_io_bytes
            .filter(|&o| o > OTHER_IO_BYTES && o as f64 > OTHER_IO_SHARE * device_bytes as f64)
        {
            out.push(Disturbance::OtherIo {
                bytes,
                disk: of(role::DISK).map_or_else(String::new, |d| d.device.clone()),
                device_bytes,
            });
        }
        out
    }

    /// How the host disturbed the sample, in a few words ("CPU steal 3.1 % of the CPUs' time;
    /// 60.0 MiB of another process's I/O on vda"), as the campaign's repeat and every report word
    /// it; None when it did not.
    pub fn disturbance(&self) -> Option<String> {
        if !self.disturbed {
            return None;
        }
        let why: Vec<String> = self.disturbances().iter().map(|d| d.to_string()).collect();
        Some(if why.is_empty() {
            // Stored by an fsbench whose limits were not these.
            "beyond the limits of the fsbench that stored it".to_string()
        } else {
            why.join("; ")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start: u64, ops: [u64; 2]) -> Interval {
        let tally = |ops: u64| Tally {
            ops,
            bytes: ops * 4096,
            latency: (ops > 0).then_some(Percentiles {
                p50_ns: 10,
                p90_ns: 20,
                p99_ns: 30,
                p99_9_ns: 40,
                max_ns: 50,
            }),
            finish_ns: 0,
        };
        Interval {
            start_ns: start,
            length_ns: 100,
            total: tally(ops[0] + ops[1]),
            each: ops.iter().map(|&o| tally(o)).collect(),
        }
    }

    fn batch(phase: u64, interval_ns: u64, intervals: Vec<Interval>) -> PhaseBatch {
        PhaseBatch {
            phase,
            label: format!("p{phase}"),
            each: "thread".into(),
            interval_ns,
            intervals,
        }
    }

    #[test]
    fn phases_are_numbered_on_arrival_and_a_longer_interval_replaces_a_shorter() {
        let mut phases = Phases::default();
        phases.take(&batch(7, 100, vec![interval(1000, [1, 2])]));
        phases.take(&batch(3, 100, vec![interval(2000, [0, 5])]));
        phases.take(&batch(7, 100, vec![interval(1100, [3, 0])]));
        // Phase 7 passed a minute: its 1 s intervals replace the 100 ms ones.
        phases.take(&batch(7, 1000, vec![interval(1000, [4, 4])]));
        // A late short batch changes nothing.
        phases.take(&batch(7, 100, vec![interval(1200, [9, 9])]));
        let series = phases.series(1000, "");
        let ops = |phase: u32, subject: &str| {
            series
                .iter()
                .find(|s| s.phase == Some(phase) && s.subject == subject && s.metric == "ops")
                .map(|s| s.points.clone())
        };
        assert_eq!(ops(0, "total"), Some(vec![Point(0, 100, 8.0)]));
        assert_eq!(ops(1, "total"), Some(vec![Point(1000, 100, 5.0)]));
        assert_eq!(ops(1, "thread 1"), Some(vec![Point(1000, 100, 5.0)]));
        // Thread 0 of phase 1 did nothing: its ops are 0, and it has no latency point.
        assert_eq!(ops(1, "thread 0"), Some(vec![Point(1000, 100, 0.0)]));
        assert!(!series.iter().any(|s| s.phase == Some(1)
            && s.subject == "thread 0"
            && s.metric.starts_with("latency")));
        let p99 = series.iter().find(|s| s.metric == "latency_p99_9").unwrap();
        assert_eq!(
            (p99.unit, p99.name()),
            (Unit::Nanos, "workload/0/total/latency_p99_9".into())
        );
        assert_eq!(
            phases
                .each()
                .map(|(n, l, _)| (n, l.to_string()))
                .collect::<Vec<_>>(),
            [(0, "p7".into()), (1, "p3".into())]
        );
    }

    #[test]
    fn points_are_written_as_arrays_and_the_live_rate_names_its_unit() {
        assert_eq!(
            serde_json::to_string(&Point(1, 2, 3.5)).unwrap(),
            "[1,2,3.5]"
        );
        let mut b = batch(0, 100, vec![interval(0, [1, 0])]);
        b.intervals[0].length_ns = 1_000_000_000;
        b.intervals[0].total.bytes = 2 << 20;
        assert_eq!(b.live_rate().unwrap(), "p0 2.0 MiB/s");
        b.intervals[0].total.bytes = 0;
        assert_eq!(b.live_rate().unwrap(), "p0 1 ops/s");
    }
}
