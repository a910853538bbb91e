//! The disk monitor: /proc/diskstats for each watched block device (the filesystem's device,
//! the disk under it) — I/Os and bytes read and written, I/Os in flight, time busy.

use super::{delta, HostMonitor, Out, Readings, Tick};
use fsbench_model::series::{metric, source};
use fsbench_model::Unit;

/// A device's line of /proc/diskstats, the fields the series are made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStats {
    pub reads: u64,
    pub sectors_read: u64,
    pub writes: u64,
    pub sectors_written: u64,
    /// I/Os in flight now (a gauge).
    pub in_flight: u64,
    /// Milliseconds with I/O in flight.
    pub busy_ms: u64,
}

impl From<[u64; 6]> for DiskStats {
    /// From the fields in /proc/diskstats' order.
    fn from([reads, sectors_read, writes, sectors_written, in_flight, busy_ms]: [u64; 6]) -> Self {
        DiskStats {
            reads,
            sectors_read,
            writes,
            sectors_written,
            in_flight,
            busy_ms,
        }
    }
}

/// The watched devices by role: (`device`, `loop3`), (`disk`, `vda`).
pub(super) struct Disks {
    pub devices: Vec<(String, String)>,
}

impl HostMonitor for Disks {
    /// Per watched device, in order.
    type Reading = Vec<Option<DiskStats>>;

    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading {
        let diskstats = tick.file("/proc/diskstats", "no block device statistics");
        let disks: Vec<Option<DiskStats>> = self
            .devices
            .iter()
            .map(|(_, name)| diskstats.as_deref().and_then(|t| parse_diskstats(t, name)))
            .collect();
        for ((role, name), disk) in self.devices.iter().zip(&disks) {
            if diskstats.is_some() && disk.is_none() {
                tick.note_after(format!(
                    "/proc/diskstats has no {name} (the {role}): its series are left out"
                ));
            }
        }
        disks
    }

    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out) {
        for (d, (role, name)) in self.devices.iter().enumerate() {
            let counter = |field: fn(&DiskStats) -> u64, scale: f64| {
                readings.points(|a, b, _| {
                    Some(delta(field(a[d].as_ref()?), field(b[d].as_ref()?)) * scale)
                })
            };
            let mut push = |metric: &str, unit: Unit, points| {
                out.push(source::DISK, role, name, metric, unit, points)
            };
            push(metric::READ_IOS, Unit::Count, counter(|s| s.reads, 1.0));
            push(
                metric::READ_BYTES,
                Unit::Bytes,
                counter(|s| s.sectors_read, 512.0),
            );
            push(metric::WRITE_IOS, Unit::Count, counter(|s| s.writes, 1.0));
            push(
                metric::WRITE_BYTES,
                Unit::Bytes,
                counter(|s| s.sectors_written, 512.0),
            );
            push(
                metric::IN_FLIGHT,
                Unit::Count,
                readings.points(|_, b, _| Some(b[d]?.in_flight as f64)),
            );
            push(
                metric::BUSY,
                Unit::Percent,
                readings.points(|a, b, dt| {
                    let ms = delta(a[d]?.busy_ms, b[d]?.busy_ms);
                    (dt > 0.0).then(|| (ms * 1e6 / dt * 100.0).min(100.0))
                }),
            );
        }
    }
}

/// A device's line of /proc/diskstats.
pub(super) fn parse_diskstats(text: &str, name: &str) -> Option<DiskStats> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(2) != Some(&name) {
            return None;
        }
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        Some(DiskStats {
            reads: n(3)?,
            sectors_read: n(5)?,
            writes: n(7)?,
            sectors_written: n(9)?,
            in_flight: n(11)?,
            busy_ms: n(12)?,
        })
    })
}
