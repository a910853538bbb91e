//! The process monitor: the sample's own processes — their CPU time (this process's, when the
//! workload runs in it, and its cgroup's) and what they read and wrote on each watched device
//! (the cgroup's io.stat or blkio counters), told apart from another process's I/O. In the
//! assessment: the sample's own I/O on the disk outside its device, taken out of the disk's
//! I/O beyond the device's (the disk monitor's), so that it is never taken for another
//! process's.

use super::{delta, parse_pairs, HostMonitor, Out, Readings, SampleSeries, Tick};
use fsbench_model::series::{metric, role, source, subject, Assessment, Series};
use fsbench_model::Unit;
use std::path::{Path, PathBuf};

/// What the sample's processes are, and the devices whose I/O of theirs is counted.
pub(super) struct Process {
    /// The sample's processes include this one.
    pub this_process: bool,
    /// The sample's cgroup.
    pub cgroup: Option<PathBuf>,
    /// The file that counts the cgroup's bytes per device; None when the host counts none.
    pub cgroup_io: Option<PathBuf>,
    /// The watched devices by role, with their numbers ([`device_number`]).
    pub devices: Vec<(String, String)>,
    pub numbers: Vec<Option<String>>,
}

/// The sample's processes' (user, system) CPU ns, and per watched device their (read,
/// written) bytes on it.
#[derive(Debug, Clone, Default)]
pub(super) struct ProcessReading {
    pub cpu: Option<(u64, u64)>,
    pub own_io: Option<Vec<(u64, u64)>>,
}

impl HostMonitor for Process {
    type Reading = ProcessReading;

    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading {
        let own_io = self.cgroup_io.as_ref().and_then(|file| {
            let bytes = self
                .numbers
                .iter()
                .map(|n| cgroup_io_bytes(file, n.as_deref()?))
                .collect::<Option<Vec<_>>>();
            if bytes.is_none() {
                tick.note(format!(
                    "{} cannot be read: the sample's own I/O is not told from another process's",
                    file.display()
                ));
            }
            bytes
        });
        ProcessReading {
            cpu: process_cpu(self.this_process, self.cgroup.as_deref()),
            own_io,
        }
    }

    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out) {
        for (i, metric) in [metric::USER, metric::SYSTEM].iter().enumerate() {
            let share = readings.points(|a, b, dt| {
                let (a, b) = (a.cpu?, b.cpu?);
                let (x, y) = if i == 0 { (a.0, b.0) } else { (a.1, b.1) };
                (dt > 0.0).then(|| delta(x, y) / dt * 100.0)
            });
            out.push(
                source::PROCESS,
                "",
                subject::WORKLOAD,
                metric,
                Unit::Percent,
                share,
            );
        }
        for (d, (role, name)) in self.devices.iter().enumerate() {
            for (i, metric) in [metric::READ_BYTES, metric::WRITE_BYTES].iter().enumerate() {
                let moved = readings.points(|a, b, _| {
                    let (a, b) = (a.own_io.as_ref()?.get(d)?, b.own_io.as_ref()?.get(d)?);
                    Some(if i == 0 {
                        delta(a.0, b.0)
                    } else {
                        delta(a.1, b.1)
                    })
                });
                out.push(source::PROCESS, role, name, metric, Unit::Bytes, moved);
            }
        }
    }

    /// What the sample's processes moved on the disk beyond what they moved through the device
    /// (a loop device with direct I/O does their I/O on the disk in their name): at most their
    /// I/O outside it, taken out of the disk's bytes beyond the device's (assessed before, by
    /// the disk monitor), so another process's is never taken for theirs.
    fn assess(
        &self,
        sample: &SampleSeries<'_>,
        into: &mut Assessment,
        _warnings: &mut Vec<String>,
    ) {
        // The sample's own processes' bytes on a device (their cgroup's counters).
        let own_of = |role: &str| {
            let own: Vec<&Series> = sample
                .series
                .iter()
                .filter(|s| {
                    s.source == source::PROCESS
                        && s.label == role
                        && matches!(s.metric.as_str(), metric::READ_BYTES | metric::WRITE_BYTES)
                })
                .collect();
            (!own.is_empty()).then(|| own.iter().map(|s| s.sum() as u64).sum::<u64>())
        };
        let own =
            own_of(role::DISK).map(|disk| disk.saturating_sub(own_of(role::DEVICE).unwrap_or(0)));
        if let (Some(own), Some(other)) = (own, into.other_io_bytes) {
            into.other_io_bytes = Some(other.saturating_sub(own));
            into.own_io_bytes = Some(own);
        }
    }
}

/// A block device's number (`254:0`), from /sys/class/block/NAME/dev.
pub fn device_number(name: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).ok()?;
    Some(text.trim().to_string()).filter(|n| n.contains(':'))
}

/// The (read, written) bytes a cgroup's processes moved on the device `number` (`254:0`), from
/// its counting `file`: v2's io.stat (`254:0 rbytes=N wbytes=N ...`) or v1's
/// blkio.throttle.io_service_bytes (`254:0 Read N`, `254:0 Write N`). A device the file does
/// not list moved nothing; None when the file cannot be read.
pub fn cgroup_io_bytes(file: &Path, number: &str) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(file).ok()?;
    Some(parse_cgroup_io(&text, number))
}

pub(super) fn parse_cgroup_io(text: &str, number: &str) -> (u64, u64) {
    let (mut read, mut written) = (0, 0);
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        if fields.next() != Some(number) {
            continue;
        }
        let rest: Vec<&str> = fields.collect();
        let value = |v: &str| v.parse::<u64>().unwrap_or(0);
        match rest[..] {
            ["Read", n] => read = value(n),
            ["Write", n] => written = value(n),
            _ => {
                for pair in &rest {
                    match pair.split_once('=') {
                        Some(("rbytes", n)) => read = value(n),
                        Some(("wbytes", n)) => written = value(n),
                        _ => {}
                    }
                }
            }
        }
    }
    (read, written)
}

/// The sample's processes' CPU time: this process's (getrusage), and its cgroup's (v2's
/// cpu.stat; else the processes it lists, from /proc/PID/stat, their waited-for children
/// included).
fn process_cpu(this_process: bool, cgroup: Option<&Path>) -> Option<(u64, u64)> {
    let mut total = None::<(u64, u64)>;
    let mut add = |(user, system): (u64, u64)| {
        let t = total.get_or_insert((0, 0));
        t.0 += user;
        t.1 += system;
    };
    if this_process {
        let me = crate::cpu::CpuTimes::process();
        add((me.user_ns, me.sys_ns));
    }
    if let Some(dir) = cgroup {
        if let Ok(stat) = std::fs::read_to_string(dir.join("cpu.stat")) {
            let pairs = parse_pairs(&stat);
            if let (Some(user), Some(system)) = (pairs.get("user_usec"), pairs.get("system_usec")) {
                add((user * 1000, system * 1000));
            }
        } else if let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) {
            // SAFETY: sysconf has no preconditions.
            let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
            for pid in procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
                if let Some(ticks) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| parse_pid_stat(&s))
                {
                    add((ticks.0 * 1_000_000_000 / hz, ticks.1 * 1_000_000_000 / hz));
                }
            }
        }
    }
    total
}

/// `/proc/PID/stat`: (utime + cutime, stime + cstime) ticks.
pub(super) fn parse_pid_stat(text: &str) -> Option<(u64, u64)> {
    // The command may hold spaces and parentheses: the fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // After the state: utime is field 14 of the line, the 12th here (0-based 11).
    Some((
        fields.get(10)? + fields.get(12)?,
        fields.get(11)? + fields.get(13)?,
    ))
}
