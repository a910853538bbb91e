//! The disk monitor: /proc/diskstats for each watched block device (the filesystem's device,
//! the disk under it) — I/Os and bytes read and written, I/Os in flight, time busy. In the
//! assessment: how busy each device was while the phases ran (saturated or not), and the I/O
//! on the disk beyond the device's (another process's, once the process monitor takes the
//! sample's own out of it).

use super::{delta, HostMonitor, Out, Readings, SampleSeries, Tick};
use crate::units::human_bytes;
use fsbench_model::series::{
    metric, role, source, Assessment, DeviceLoad, Disturbance, SATURATED_PERCENT,
};
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

    /// Each watched device's load while the phases ran (its mean busy share, saturated when
    /// busy at least [`SATURATED_PERCENT`] in most of their intervals, said as a warning) and
    /// the bytes it moved over the sample; the disk's bytes beyond the device's.
    fn assess(&self, sample: &SampleSeries<'_>, into: &mut Assessment, warnings: &mut Vec<String>) {
        let mut devices = Vec::new();
        for busy in sample
            .series
            .iter()
            .filter(|s| s.source == source::DISK && s.metric == metric::BUSY)
        {
            let inside: Vec<_> = busy
                .points
                .iter()
                .filter(|p| sample.during(p.t_ns()))
                .collect();
            let time: u64 = inside.iter().map(|p| p.dt_ns()).sum();
            let busy_percent = if time == 0 {
                0.0
            } else {
                inside
                    .iter()
                    .map(|p| p.value() * p.dt_ns() as f64)
                    .sum::<f64>()
                    / time as f64
            };
            let saturated_intervals = inside
                .iter()
                .filter(|p| p.value() >= SATURATED_PERCENT)
                .count();
            let total = |metric: &str| {
                sample
                    .find(source::DISK, None, &busy.subject, metric)
                    .filter(|s| s.label == busy.label)
                    .map_or(0, |s| s.sum() as u64)
            };
            devices.push(DeviceLoad {
                role: busy.label.clone(),
                device: busy.subject.clone(),
                busy_percent,
                saturated: !inside.is_empty() && saturated_intervals * 2 > inside.len(),
                read_bytes: total(metric::READ_BYTES),
                write_bytes: total(metric::WRITE_BYTES),
            });
        }
        for d in devices.iter().filter(|d| d.saturated) {
            warnings.push(format!(
                "{} (the {}) was saturated: busy {:.0} % of the time while the phases ran; the figures are its limit",
                d.device, d.role, d.busy_percent
            ));
        }
        let bytes_of = |role: &str| {
            devices
                .iter()
                .find(|d| d.role == role)
                .map(|d| d.read_bytes + d.write_bytes)
        };
        // All of it, until the process monitor takes out the sample's own I/O outside the
        // device.
        into.other_io_bytes = match (bytes_of(role::DEVICE), bytes_of(role::DISK)) {
            (Some(device), Some(disk)) => Some(disk.saturating_sub(device)),
            _ => None,
        };
        into.devices = devices;
    }

    fn explain(&self, disturbance: &Disturbance, assessment: &Assessment) -> Option<String> {
        let Disturbance::OtherIo {
            bytes,
            disk,
            device_bytes,
        } = disturbance
        else {
            return None;
        };
        Some(format!(
            "another process moved {} on {disk}, the disk under the sample's device, during the sample (beyond the device's own {}{}): the figures may be low",
            human_bytes(*bytes),
            human_bytes(*device_bytes),
            match assessment.own_io_bytes {
                Some(own) => format!(" and the sample's own {} outside it", human_bytes(own)),
                None => "; the sample's own I/O outside the device is not counted here and may be part of it".to_string(),
            }
        ))
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
