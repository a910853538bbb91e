//! The host beside a sample: a thread that reads, at the sample's interval, what the kernel
//! says of the sample's devices and of the host — /proc/diskstats for the filesystem's device
//! and the disk under it, /proc/meminfo and /proc/vmstat (dirty and writeback memory, the page
//! cache, reclaim), /proc/stat (user, system, iowait, steal: all CPUs and each), /proc/pressure
//! (io, memory, cpu), the CPU time of the sample's own processes and their I/O on each watched
//! device (its cgroup's io.stat or blkio counters) — and turns consecutive
//! readings into [`Series`] on the sample's time axis. Counters become what happened in each
//! interval, gauges their value at its end. A file the host lacks is said once, in
//! [`Monitored::notes`], and its series are left out.
//!
//! The interval is the series' ([`SeriesInterval`]): `auto` reads every 100 ms and, once the
//! sample is a minute old, keeps only the readings of whole seconds and goes on every second.

use crate::clock::now_ns;
use crate::series::{SeriesInterval, AUTO_LONG_NS, AUTO_SHORT_NS, AUTO_SWITCH_NS};
use fsbench_model::series::{Point, Series};
use fsbench_model::Unit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

/// What to watch.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    pub interval: SeriesInterval,
    /// Block devices by role: (`device`, `loop3`), (`disk`, `vda`).
    pub devices: Vec<(String, String)>,
    /// The sample's processes include this one (a workload in this process).
    pub this_process: bool,
    /// The sample's cgroup (its processes, and what they started).
    pub cgroup: Option<PathBuf>,
    /// The file that counts the cgroup's bytes per device ([`cgroup_io_bytes`]); None when
    /// the host counts none.
    pub cgroup_io: Option<PathBuf>,
    /// Said with the notes (a device that cannot be watched, and why).
    pub notes: Vec<String>,
}

/// The monitors' series, on the time axis that starts at `t0_ns` (CLOCK_MONOTONIC).
#[derive(Debug, Clone, Default)]
pub struct Monitored {
    pub t0_ns: u64,
    pub series: Vec<Series>,
    /// What could not be watched, each said once.
    pub notes: Vec<String>,
}

/// A running monitor; [`Monitor::stop`] takes a last reading and returns its series.
pub struct Monitor {
    t0_ns: u64,
    control: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<Monitored>>,
}

impl Monitor {
    /// Starts watching now (the first reading is the sample's time 0). With the interval `off`
    /// (or no thread to spare) it watches nothing, and its series are empty.
    pub fn start(watch: Watch) -> Monitor {
        let t0_ns = now_ns();
        let control = Arc::new((Mutex::new(false), Condvar::new()));
        let Some(first) = watch.interval.first_ns() else {
            return Monitor {
                t0_ns,
                control,
                thread: None,
            };
        };
        let stop = control.clone();
        let auto = watch.interval == SeriesInterval::Auto;
        let thread = std::thread::Builder::new()
            .name("fsbench-monitor".into())
            .spawn(move || watch_until(watch, &stop, t0_ns, first, auto))
            .ok();
        Monitor {
            t0_ns,
            control,
            thread,
        }
    }

    /// The start of the sample's time axis (CLOCK_MONOTONIC ns).
    pub fn t0_ns(&self) -> u64 {
        self.t0_ns
    }

    /// Stops after one last reading; the series of the whole watch.
    pub fn stop(mut self) -> Monitored {
        *self.control.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.control.1.notify_all();
        let t0_ns = self.t0_ns;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(monitored)) => monitored,
            Some(Err(_)) => Monitored {
                t0_ns,
                series: Vec::new(),
                notes: vec!["the host monitor failed; the sample has no host series".into()],
            },
            None => Monitored {
                t0_ns,
                ..Monitored::default()
            },
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        *self.control.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.control.1.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One reading of everything watched: only the values the series are made of, in fixed
/// places, so that a sample's readings cost a few hundred bytes each (at 10 ms, about 1.5 MB
/// a minute on a host of 2 CPUs, 48 bytes more per CPU per reading), whatever /proc holds
/// besides. (Kept whole, /proc/vmstat's 180 names made 20 KB a reading: 1.2 GB over a
/// 10-minute sample at 10 ms.)
#[derive(Debug, Clone, Default)]
struct Reading {
    t: u64,
    /// Per watched device: [reads, sectors read, writes, sectors written, in flight, ms busy].
    disks: Vec<Option<[u64; 6]>>,
    /// /proc/meminfo's [`MEMINFO`] (bytes) and /proc/vmstat's [`VMSTAT`], where present.
    meminfo: Option<[Option<u64>; MEMINFO.len()]>,
    vmstat: Option<[Option<u64>; VMSTAT.len()]>,
    /// Per CPU line, in the order of the first reading's [`Cpus::names`]: [user, system, irq,
    /// iowait, steal, total] ticks (None: that CPU's line was missing from this reading).
    cpus: Option<Vec<Option<[u64; 6]>>>,
    /// Per resource (io, memory, cpu): (some, full) stall µs totals.
    pressure: [Option<(u64, Option<u64>)>; 3],
    /// The sample's processes' (user, system) CPU ns.
    process: Option<(u64, u64)>,
    /// Per watched device: the sample's cgroup's (read, written) bytes on it.
    own_io: Option<Vec<(u64, u64)>>,
}

const PRESSURE: [&str; 3] = ["io", "memory", "cpu"];
/// The /proc/meminfo values the memory series show, with their metric names.
const MEMINFO: [(&str, &str); 4] = [
    ("Dirty", "dirty"),
    ("Writeback", "writeback"),
    ("Cached", "cached"),
    ("MemFree", "free"),
];
/// The /proc/vmstat counters the vm series sum.
const VMSTAT: [&str; 6] = [
    "nr_dirtied",
    "nr_written",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
];

/// The CPU lines of /proc/stat, named once: `all` first, then the CPUs in their order.
#[derive(Debug, Clone, Default)]
struct Cpus {
    names: Vec<String>,
}

impl Cpus {
    /// Each named CPU's ticks in this text of /proc/stat (the names taken from the first).
    fn read(&mut self, text: &str) -> Vec<Option<[u64; 6]>> {
        let lines = parse_stat(text);
        if self.names.is_empty() {
            self.names = lines.iter().map(|(name, _)| name.to_string()).collect();
            self.names.sort_by_key(|n| {
                (
                    n != "all",
                    n.trim_start_matches("cpu").parse::<u32>().unwrap_or(0),
                )
            });
        }
        self.names
            .iter()
            .map(|name| lines.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
            .collect()
    }
}

fn watch_until(
    watch: Watch,
    control: &(Mutex<bool>, Condvar),
    t0: u64,
    first: u64,
    mut auto: bool,
) -> Monitored {
    let mut notes = watch.notes.clone();
    let mut cpus = Cpus::default();
    let numbers: Vec<Option<String>> = watch
        .devices
        .iter()
        .map(|(_, name)| device_number(name))
        .collect();
    let mut readings = vec![read(&watch, t0, &mut notes, &mut cpus, &numbers)];
    // Readings become points as they come, a chunk at a time: a long sample holds its points
    // (24 bytes each), not its readings.
    let mut series: Vec<Series> = Vec::new();
    let mut interval = first;
    let mut tick = 0u64;
    loop {
        tick += 1;
        let next = t0.saturating_add(tick.saturating_mul(interval));
        let done = {
            let mut done = control.0.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                let now = now_ns();
                if *done || now >= next {
                    break *done;
                }
                done = control
                    .1
                    .wait_timeout(done, std::time::Duration::from_nanos(next - now))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        };
        readings.push(read(&watch, now_ns(), &mut notes, &mut cpus, &numbers));
        if done {
            break;
        }
        // (`auto` thins its readings at a minute, 600 readings in: before the first chunk.)
        if readings.len() > CHUNK && !auto {
            append(&mut series, series_of(&watch, &readings, &cpus.names, t0));
            readings.drain(..readings.len() - 1);
        }
        if auto && now_ns() - t0 >= AUTO_SWITCH_NS {
            // A minute old: the readings of whole seconds stay, and a second it is.
            let per = AUTO_LONG_NS / AUTO_SHORT_NS;
            let mut i = 0u64;
            readings.retain(|_| {
                i += 1;
                (i - 1) % per == 0
            });
            auto = false;
            interval = AUTO_LONG_NS;
            tick /= per;
        }
    }
    append(&mut series, series_of(&watch, &readings, &cpus.names, t0));
    Monitored {
        t0_ns: t0,
        series,
        notes,
    }
}

/// How many readings a monitor holds before it turns them into points.
const CHUNK: usize = 1024;

/// Adds the points of `more` (the series of later readings) to those of the same series in
/// `series`, or the series itself when it is new.
fn append(series: &mut Vec<Series>, more: Vec<Series>) {
    for part in more {
        let same = |s: &&mut Series| {
            s.source == part.source
                && s.label == part.label
                && s.subject == part.subject
                && s.metric == part.metric
        };
        match series.iter_mut().find(same) {
            Some(whole) => whole.points.extend(part.points),
            None => series.push(part),
        }
    }
}

/// Says `what` once.
fn note(notes: &mut Vec<String>, what: String) {
    if !notes.contains(&what) {
        notes.push(what);
    }
}

/// One reading at `t`; `numbers` are the watched devices' ([`device_number`]).
fn read(
    watch: &Watch,
    t: u64,
    notes: &mut Vec<String>,
    cpus: &mut Cpus,
    numbers: &[Option<String>],
) -> Reading {
    let mut file = |path: &str, why: &str| match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(_) => {
            note(
                notes,
                format!("the host has no {path} ({why}): its series are left out"),
            );
            None
        }
    };
    let diskstats = file("/proc/diskstats", "no block device statistics");
    let disks: Vec<Option<[u64; 6]>> = watch
        .devices
        .iter()
        .map(|(_, name)| diskstats.as_deref().and_then(|t| parse_diskstats(t, name)))
        .collect();
    let meminfo = file("/proc/meminfo", "no memory statistics").map(|t| {
        let all = parse_meminfo(&t);
        MEMINFO.map(|(key, _)| all.get(key).copied())
    });
    let vmstat = file("/proc/vmstat", "no virtual memory statistics").map(|t| {
        let all = parse_pairs(&t);
        VMSTAT.map(|key| all.get(key).copied())
    });
    let cpus = file("/proc/stat", "no CPU statistics").map(|t| cpus.read(&t));
    let mut pressure = [None; 3];
    for (slot, resource) in pressure.iter_mut().zip(PRESSURE) {
        *slot = file(
            &format!("/proc/pressure/{resource}"),
            "pressure stall information is off in this kernel",
        )
        .and_then(|t| parse_pressure(&t));
    }
    let own_io = watch.cgroup_io.as_ref().and_then(|file| {
        let bytes = numbers
            .iter()
            .map(|n| cgroup_io_bytes(file, n.as_deref()?))
            .collect::<Option<Vec<_>>>();
        if bytes.is_none() {
            note(
                notes,
                format!(
                    "{} cannot be read: the sample's own I/O is not told from another process's",
                    file.display()
                ),
            );
        }
        bytes
    });
    for ((role, name), disk) in watch.devices.iter().zip(&disks) {
        if diskstats.is_some() && disk.is_none() {
            note(
                notes,
                format!("/proc/diskstats has no {name} (the {role}): its series are left out"),
            );
        }
    }
    Reading {
        t,
        disks,
        meminfo,
        vmstat,
        cpus,
        pressure,
        process: process_cpu(watch),
        own_io,
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

fn parse_cgroup_io(text: &str, number: &str) -> (u64, u64) {
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
fn process_cpu(watch: &Watch) -> Option<(u64, u64)> {
    let mut total = None::<(u64, u64)>;
    let mut add = |(user, system): (u64, u64)| {
        let t = total.get_or_insert((0, 0));
        t.0 += user;
        t.1 += system;
    };
    if watch.this_process {
        let me = crate::cpu::CpuTimes::process();
        add((me.user_ns, me.sys_ns));
    }
    if let Some(dir) = &watch.cgroup {
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
fn parse_pid_stat(text: &str) -> Option<(u64, u64)> {
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

/// A device's line of /proc/diskstats: [reads, sectors read, writes, sectors written, in
/// flight, ms busy].
fn parse_diskstats(text: &str, name: &str) -> Option<[u64; 6]> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(2) != Some(&name) {
            return None;
        }
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        Some([n(3)?, n(5)?, n(7)?, n(9)?, n(11)?, n(12)?])
    })
}

/// `name value` lines (/proc/vmstat, cpu.stat).
fn parse_pairs(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// /proc/meminfo in bytes (`Dirty: 12 kB` -> 12288).
fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(':')?;
            let mut parts = rest.split_whitespace();
            let value: u64 = parts.next()?.parse().ok()?;
            let factor = if parts.next() == Some("kB") { 1024 } else { 1 };
            Some((name.to_string(), value * factor))
        })
        .collect()
}

/// /proc/stat's CPU lines: `all` for `cpu`, `cpuN` for each; [user (+nice), system, irq
/// (+softirq), iowait, steal, total (idle and guests included)] ticks.
fn parse_stat(text: &str) -> Vec<(&str, [u64; 6])> {
    text.lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let name = parts.next()?;
            let v: Vec<u64> = parts.map(|p| p.parse().unwrap_or(0)).collect();
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            // user nice system idle iowait irq softirq steal (guest and guest_nice are in user
            // and nice already).
            let total: u64 = (0..8).map(at).sum();
            let name = if name == "cpu" { "all" } else { name };
            Some((
                name,
                [at(0) + at(1), at(2), at(5) + at(6), at(4), at(7), total],
            ))
        })
        .collect()
}

/// /proc/pressure/*: the `some` and `full` totals (µs); a kernel before 5.13 has no `full` for
/// cpu.
fn parse_pressure(text: &str) -> Option<(u64, Option<u64>)> {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))?
            .split_whitespace()
            .find_map(|f| f.strip_prefix("total="))?
            .parse::<u64>()
            .ok()
    };
    Some((total("some")?, total("full")))
}

/// The series of consecutive readings: counters as what happened in each interval, gauges as
/// their value at its end.
fn series_of(watch: &Watch, readings: &[Reading], cpus: &[String], t0: u64) -> Vec<Series> {
    let mut out = Vec::new();
    let mut push =
        |source: &str, label: &str, subject: &str, metric: &str, unit: Unit, points: Vec<Point>| {
            if !points.is_empty() {
                out.push(Series {
                    source: source.into(),
                    phase: None,
                    label: label.into(),
                    subject: subject.into(),
                    metric: metric.into(),
                    unit,
                    points,
                });
            }
        };
    // Points from each pair of readings where `value` has both.
    let points = |value: &dyn Fn(&Reading, &Reading, f64) -> Option<f64>| -> Vec<Point> {
        readings
            .windows(2)
            .filter_map(|w| {
                let dt = w[1].t.saturating_sub(w[0].t);
                let v = value(&w[0], &w[1], dt as f64)?;
                Some(Point(w[0].t.saturating_sub(t0), dt, v))
            })
            .collect()
    };
    let delta = |a: u64, b: u64| b.saturating_sub(a) as f64;
    for (d, (role, name)) in watch.devices.iter().enumerate() {
        let field = |i: usize, scale: f64| {
            points(&|a, b, _| Some(delta(a.disks[d]?[i], b.disks[d]?[i]) * scale))
        };
        push("disk", role, name, "read_ios", Unit::Count, field(0, 1.0));
        push(
            "disk",
            role,
            name,
            "read_bytes",
            Unit::Bytes,
            field(1, 512.0),
        );
        push("disk", role, name, "write_ios", Unit::Count, field(2, 1.0));
        push(
            "disk",
            role,
            name,
            "write_bytes",
            Unit::Bytes,
            field(3, 512.0),
        );
        push(
            "disk",
            role,
            name,
            "in_flight",
            Unit::Count,
            points(&|_, b, _| Some(b.disks[d]?[4] as f64)),
        );
        push(
            "disk",
            role,
            name,
            "busy",
            Unit::Percent,
            points(&|a, b, dt| {
                let ms = delta(a.disks[d]?[5], b.disks[d]?[5]);
                (dt > 0.0).then(|| (ms * 1e6 / dt * 100.0).min(100.0))
            }),
        );
    }
    for (k, (_, metric)) in MEMINFO.iter().enumerate() {
        let gauge = points(&|_, b, _| Some(b.meminfo.as_ref()?[k]? as f64));
        push("memory", "", "host", metric, Unit::Bytes, gauge);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as f64;
    let vm = |keys: &'static [&'static str], scale: f64| {
        points(&move |a, b, _| {
            let (a, b) = (a.vmstat.as_ref()?, b.vmstat.as_ref()?);
            let mut sum = 0.0;
            let mut any = false;
            for key in keys {
                let k = VMSTAT.iter().position(|v| v == key).expect("a VMSTAT key");
                if let (Some(x), Some(y)) = (a[k], b[k]) {
                    sum += delta(x, y);
                    any = true;
                }
            }
            any.then_some(sum * scale)
        })
    };
    push(
        "vm",
        "",
        "host",
        "dirtied",
        Unit::Bytes,
        vm(&["nr_dirtied"], page),
    );
    push(
        "vm",
        "",
        "host",
        "written",
        Unit::Bytes,
        vm(&["nr_written"], page),
    );
    push(
        "vm",
        "",
        "host",
        "reclaim_scanned",
        Unit::Count,
        vm(&["pgscan_kswapd", "pgscan_direct"], 1.0),
    );
    push(
        "vm",
        "",
        "host",
        "reclaim_scanned_direct",
        Unit::Count,
        vm(&["pgscan_direct"], 1.0),
    );
    push(
        "vm",
        "",
        "host",
        "reclaim_stolen",
        Unit::Count,
        vm(&["pgsteal_kswapd", "pgsteal_direct"], 1.0),
    );
    for (c, name) in cpus.iter().enumerate() {
        for (i, metric) in ["user", "system", "irq", "iowait", "steal"]
            .iter()
            .enumerate()
        {
            let share = points(&|a, b, _| {
                let (a, b) = (
                    a.cpus.as_ref()?.get(c)?.as_ref()?,
                    b.cpus.as_ref()?.get(c)?.as_ref()?,
                );
                let total = delta(a[5], b[5]);
                (total > 0.0).then(|| delta(a[i], b[i]) / total * 100.0)
            });
            push("cpu", "", name, metric, Unit::Percent, share);
        }
    }
    for (r, resource) in PRESSURE.iter().enumerate() {
        let stalled = |full: bool| {
            points(&move |a, b, dt| {
                let (a, b) = (a.pressure[r]?, b.pressure[r]?);
                let (x, y) = if full { (a.1?, b.1?) } else { (a.0, b.0) };
                (dt > 0.0).then(|| (delta(x, y) * 1e3 / dt * 100.0).min(100.0))
            })
        };
        push(
            "pressure",
            "",
            resource,
            "some",
            Unit::Percent,
            stalled(false),
        );
        push(
            "pressure",
            "",
            resource,
            "full",
            Unit::Percent,
            stalled(true),
        );
    }
    for (i, metric) in ["user", "system"].iter().enumerate() {
        let share = points(&|a, b, dt| {
            let (a, b) = (a.process?, b.process?);
            let (x, y) = if i == 0 { (a.0, b.0) } else { (a.1, b.1) };
            (dt > 0.0).then(|| delta(x, y) / dt * 100.0)
        });
        push("process", "", "workload", metric, Unit::Percent, share);
    }
    for (d, (role, name)) in watch.devices.iter().enumerate() {
        for (i, metric) in ["read_bytes", "write_bytes"].iter().enumerate() {
            let moved = points(&|a, b, _| {
                let (a, b) = (a.own_io.as_ref()?.get(d)?, b.own_io.as_ref()?.get(d)?);
                Some(if i == 0 {
                    delta(a.0, b.0)
                } else {
                    delta(a.1, b.1)
                })
            });
            push("process", role, name, metric, Unit::Bytes, moved);
        }
    }
    out
}

/// The name of the block device a file's filesystem is on (`vda1`, `loop3`); None on a
/// filesystem without one (tmpfs, fuse).
pub fn device_of_file(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let resolved = std::fs::canonicalize(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ))
    .ok()?;
    Some(resolved.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procfs_lines_are_read_as_the_kernel_writes_them() {
        let disk = " 253       0 vda 1000 5 80000 300 2000 7 160000 900 3 1500 1200 0 0 0 0\n   7       3 loop3 10 0 20 1 30 0 60 2 0 4 3\n";
        assert_eq!(
            parse_diskstats(disk, "vda"),
            Some([1000, 80000, 2000, 160000, 3, 1500])
        );
        assert_eq!(parse_diskstats(disk, "loop3"), Some([10, 20, 30, 60, 0, 4]));
        assert_eq!(parse_diskstats(disk, "vd"), None);
        let mem = parse_meminfo("MemFree:  100 kB\nDirty:   3 kB\nHugePages_Total: 0\n");
        assert_eq!(
            (mem["MemFree"], mem["Dirty"], mem["HugePages_Total"]),
            (102400, 3072, 0)
        );
        let stat = parse_stat("cpu  10 1 5 100 4 2 1 3 0 0\ncpu0 5 0 2 50 2 1 0 1 0 0\nintr 5\n");
        assert_eq!(
            stat,
            [
                ("all", [11, 5, 3, 4, 3, 126]),
                ("cpu0", [5, 2, 1, 2, 1, 61])
            ]
        );
        assert_eq!(
            parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=56\n"),
            Some((1234, Some(56)))
        );
        assert_eq!(parse_pressure("some avg10=0.00 total=9\n"), Some((9, None)));
        let stat = "1234 (a (b) c) S 1 1 1 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 1 0 100 1000 50";
        assert_eq!(parse_pid_stat(stat), Some((9, 4)));
        let v2 = "254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n7:3 rbytes=1 wbytes=2 rios=1 wios=1 dbytes=0 dios=0\n";
        assert_eq!(parse_cgroup_io(v2, "254:0"), (4096, 8192));
        assert_eq!(parse_cgroup_io(v2, "7:3"), (1, 2));
        let v1 = "254:0 Read 100\n254:0 Write 200\n254:0 Sync 300\n254:0 Total 300\nTotal 300\n";
        assert_eq!(parse_cgroup_io(v1, "254:0"), (100, 200));
        assert_eq!(parse_cgroup_io(v1, "7:3"), (0, 0));
    }

    /// Counters become each interval's difference, gauges the value at its end; times are on
    /// the sample's axis.
    #[test]
    fn consecutive_readings_become_points() {
        let watch = Watch {
            devices: vec![("device".into(), "loop3".into())],
            ..Watch::default()
        };
        let reading = |t: u64, sectors: u64, busy_ms: u64, dirty: u64, steal: u64| Reading {
            t,
            disks: vec![Some([0, 0, 1, sectors, 2, busy_ms])],
            meminfo: Some([Some(dirty), None, None, None]),
            cpus: Some(vec![Some([0, 0, 0, 0, steal, steal * 10])]),
            ..Reading::default()
        };
        let readings = [
            reading(1_000, 0, 0, 5, 0),
            reading(100_001_000, 2048, 50, 7, 10),
            reading(200_001_000, 4096, 150, 9, 20),
        ];
        let series = series_of(&watch, &readings, &["all".to_string()], 1_000);
        let find = |source: &str, metric: &str| {
            series
                .iter()
                .find(|s| s.source == source && s.metric == metric)
                .map(|s| s.points.clone())
                .unwrap()
        };
        assert_eq!(
            find("disk", "write_bytes"),
            [
                Point(0, 100_000_000, 1048576.0),
                Point(100_000_000, 100_000_000, 1048576.0)
            ]
        );
        assert_eq!(find("disk", "busy")[1].2, 100.0);
        assert_eq!(find("disk", "busy")[0].2, 50.0);
        assert_eq!(find("disk", "in_flight")[0].2, 2.0);
        assert_eq!(find("memory", "dirty")[1].2, 9.0);
        assert_eq!(find("cpu", "steal")[0].2, 10.0);
        assert!(
            series.iter().all(|s| s.source != "pressure"),
            "no pressure readings"
        );
    }

    #[test]
    fn a_monitor_watches_this_host_until_stopped() {
        let monitor = Monitor::start(Watch {
            interval: SeriesInterval::Every(10_000_000),
            devices: vec![("disk".into(), "no-such-disk".into())],
            this_process: true,
            ..Watch::default()
        });
        std::thread::sleep(std::time::Duration::from_millis(60));
        let t0 = monitor.t0_ns();
        let got = monitor.stop();
        assert_eq!(got.t0_ns, t0);
        let user = got
            .series
            .iter()
            .find(|s| s.source == "process" && s.metric == "user")
            .unwrap();
        assert!(user.points.len() >= 3, "{:?}", user.points);
        assert_eq!(user.points[0].0, 0);
        assert!(
            got.notes.iter().any(|n| n.contains("no-such-disk")),
            "{:?}",
            got.notes
        );
        assert!(Monitor::start(Watch {
            interval: SeriesInterval::Off,
            ..Watch::default()
        })
        .stop()
        .series
        .is_empty());
    }
}
