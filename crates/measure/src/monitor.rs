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
//!
//! Each monitor is a module behind [`HostMonitor`]: what it reads at each tick (only the values
//! its series are made of), the series its consecutive readings make, under the names of
//! `fsbench_model::series` (`source`, `subject`, `metric`), and what those series say of the
//! sample in its assessment ([`HostMonitor::assess`], [`HostMonitor::explain`]): [`assess`]
//! asks every registered monitor. A new monitor is a module and its line in [`monitors`].

use crate::clock::now_ns;
use crate::series::{SeriesInterval, AUTO_LONG_NS, AUTO_SHORT_NS, AUTO_SWITCH_NS};
use fsbench_model::series::{Assessment, Disturbance, Point, Series};
use fsbench_model::Unit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

mod cpu;
mod disk;
mod memory;
mod pressure;
mod process;

pub use cpu::CpuTicks;
pub use disk::DiskStats;
pub use process::{cgroup_io_bytes, device_number};

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
        // Out of the workload's descriptor table before the workload starts.
        let thread = crate::aside::spawn_helper(
            std::thread::Builder::new().name("fsbench-monitor".into()),
            move || watch_until(watch, &stop, t0_ns, first, auto),
        )
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

/// One of the host's monitors: what it reads at each tick, and the series consecutive readings
/// make (counters as what happened in each interval, gauges as their value at its end).
pub trait HostMonitor: Send + 'static {
    /// One reading: only the values its series are made of, so that a sample's readings cost
    /// a few hundred bytes each whatever /proc holds besides. (Kept whole, /proc/vmstat's 180
    /// names made 20 KB a reading: 1.2 GB over a 10-minute sample at 10 ms.)
    type Reading: Send + 'static;

    /// Reads now; a file the host lacks is said once, through `tick`.
    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading;

    /// The series of consecutive readings, pushed to `out` (an empty one is left out).
    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out);

    /// Its part of a sample's assessment: what its series (found in `sample` by the keys it
    /// wrote them under) say of the sample, filled into `into`, with the warnings they make
    /// pushed to `warnings`. The monitors assess in the order of [`monitors`]: each sees what
    /// those before it filled in. Nothing by default (series that only inform the reader).
    fn assess(
        &self,
        _sample: &SampleSeries<'_>,
        _into: &mut Assessment,
        _warnings: &mut Vec<String>,
    ) {
    }

    /// The warning that says `disturbance`, when this monitor's assessment found it (in full:
    /// what happened, and what it does to the figures); None for another monitor's.
    fn explain(&self, _disturbance: &Disturbance, _assessment: &Assessment) -> Option<String> {
        None
    }
}

/// A sample's series as its assessment reads them: every series (the workload's phases' and
/// the monitors'), and when the phases ran.
#[derive(Debug, Clone, Copy)]
pub struct SampleSeries<'s> {
    pub series: &'s [Series],
    /// When the workload's phases ran: [start, end) on the sample's axis; none: the whole
    /// sample counts.
    pub windows: &'s [(u64, u64)],
}

impl<'s> SampleSeries<'s> {
    /// Whether `t_ns` (on the sample's axis) is while a phase ran.
    pub fn during(&self, t_ns: u64) -> bool {
        self.windows.is_empty() || self.windows.iter().any(|&(a, b)| t_ns >= a && t_ns < b)
    }

    /// The first series of these keys.
    pub fn find(
        &self,
        source: &str,
        phase: Option<u32>,
        subject: &str,
        metric: &str,
    ) -> Option<&'s Series> {
        self.series.iter().find(|s| {
            s.source == source && s.phase == phase && s.subject == subject && s.metric == metric
        })
    }
}

/// The monitors' part of a sample's assessment: each registered monitor's
/// [`HostMonitor::assess`], in the order of [`monitors`], then every way the host disturbed
/// the sample ([`Assessment::disturbances`]) said by the monitor that found it, and
/// `disturbed` set from them.
pub fn assess(sample: &SampleSeries<'_>, into: &mut Assessment, warnings: &mut Vec<String>) {
    assess_by(&monitors(&Watch::default()), sample, into, warnings);
}

fn assess_by(
    monitors: &[Box<dyn Kept>],
    sample: &SampleSeries<'_>,
    into: &mut Assessment,
    warnings: &mut Vec<String>,
) {
    for monitor in monitors {
        monitor.assess(sample, into, warnings);
    }
    let disturbances = into.disturbances();
    for d in &disturbances {
        warnings.push(
            monitors
                .iter()
                .find_map(|m| m.explain(d, into))
                .unwrap_or_else(|| d.to_string()),
        );
    }
    into.disturbed = !disturbances.is_empty();
}

/// The monitors of a watch, in the order their series are stored and their assessments made:
/// the registration of every monitor.
fn monitors(watch: &Watch) -> Vec<Box<dyn Kept>> {
    vec![
        kept(disk::Disks {
            devices: watch.devices.clone(),
        }),
        kept(memory::Memory),
        kept(memory::Vm),
        kept(cpu::Cpus::default()),
        kept(pressure::Pressure),
        kept(process::Process {
            this_process: watch.this_process,
            cgroup: watch.cgroup.clone(),
            cgroup_io: watch.cgroup_io.clone(),
            devices: watch.devices.clone(),
            numbers: watch
                .devices
                .iter()
                .map(|(_, name)| device_number(name))
                .collect(),
        }),
    ]
}

/// One reading's context: the files it reads, and what it says of those it cannot.
pub struct Tick<'n> {
    notes: &'n mut Vec<String>,
    /// Said after what every monitor says at this tick.
    after: Vec<String>,
}

impl Tick<'_> {
    /// The text of a file of /proc (or of the cgroup); None, said once, when the host has none.
    pub fn file(&mut self, path: &str, why: &str) -> Option<String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(_) => {
                self.note(format!(
                    "the host has no {path} ({why}): its series are left out"
                ));
                None
            }
        }
    }

    /// Says `what` once.
    pub fn note(&mut self, what: String) {
        note(self.notes, what);
    }

    /// Says `what` once, after what the other monitors say at this tick.
    pub fn note_after(&mut self, what: String) {
        self.after.push(what);
    }
}

/// A monitor's consecutive readings, each with its time.
pub struct Readings<'r, R> {
    times: &'r [u64],
    values: &'r [R],
    /// The start of the sample's time axis.
    t0: u64,
}

impl<R> Readings<'_, R> {
    /// Points from each pair of consecutive readings where `value` (of the earlier, the later
    /// and the ns between them) has one.
    pub fn points(&self, value: impl Fn(&R, &R, f64) -> Option<f64>) -> Vec<Point> {
        self.times
            .windows(2)
            .zip(self.values.windows(2))
            .filter_map(|(t, w)| {
                let dt = t[1].saturating_sub(t[0]);
                let v = value(&w[0], &w[1], dt as f64)?;
                Some(Point(t[0].saturating_sub(self.t0), dt, v))
            })
            .collect()
    }
}

/// The series the monitors make, in order.
#[derive(Debug, Default)]
pub struct Out(Vec<Series>);

impl Out {
    /// A monitor's series (None phase); left out when it has no point.
    pub fn push(
        &mut self,
        source: &str,
        label: &str,
        subject: &str,
        metric: &str,
        unit: Unit,
        points: Vec<Point>,
    ) {
        if !points.is_empty() {
            self.0.push(Series {
                source: source.into(),
                phase: None,
                label: label.into(),
                subject: subject.into(),
                metric: metric.into(),
                unit,
                points,
            });
        }
    }
}

/// What a counter did between two readings.
fn delta(a: u64, b: u64) -> f64 {
    b.saturating_sub(a) as f64
}

/// A monitor with its readings kept, whatever they are.
trait Kept: Send {
    fn read(&mut self, tick: &mut Tick<'_>);
    /// The series of its readings, taken at `times`.
    fn series(&self, times: &[u64], t0: u64, out: &mut Out);
    /// Keeps the readings whose index `keep` takes.
    fn retain(&mut self, keep: &dyn Fn(usize) -> bool);
    /// [`HostMonitor::assess`].
    fn assess(&self, sample: &SampleSeries<'_>, into: &mut Assessment, warnings: &mut Vec<String>);
    /// [`HostMonitor::explain`].
    fn explain(&self, disturbance: &Disturbance, assessment: &Assessment) -> Option<String>;
}

struct Keeping<M: HostMonitor> {
    monitor: M,
    readings: Vec<M::Reading>,
}

fn kept<M: HostMonitor>(monitor: M) -> Box<dyn Kept> {
    Box::new(Keeping {
        monitor,
        readings: Vec::new(),
    })
}

impl<M: HostMonitor> Kept for Keeping<M> {
    fn read(&mut self, tick: &mut Tick<'_>) {
        let reading = self.monitor.read(tick);
        self.readings.push(reading);
    }

    fn series(&self, times: &[u64], t0: u64, out: &mut Out) {
        let readings = Readings {
            times,
            values: &self.readings,
            t0,
        };
        self.monitor.series(&readings, out);
    }

    fn retain(&mut self, keep: &dyn Fn(usize) -> bool) {
        let mut i = 0;
        self.readings.retain(|_| {
            i += 1;
            keep(i - 1)
        });
    }

    fn assess(&self, sample: &SampleSeries<'_>, into: &mut Assessment, warnings: &mut Vec<String>) {
        self.monitor.assess(sample, into, warnings);
    }

    fn explain(&self, disturbance: &Disturbance, assessment: &Assessment) -> Option<String> {
        self.monitor.explain(disturbance, assessment)
    }
}

/// Every monitor of a watch with its readings, and their times.
struct Watched {
    times: Vec<u64>,
    monitors: Vec<Box<dyn Kept>>,
}

impl Watched {
    /// One reading of every monitor at `t`.
    fn read(&mut self, t: u64, notes: &mut Vec<String>) {
        let mut tick = Tick {
            notes,
            after: Vec::new(),
        };
        for monitor in &mut self.monitors {
            monitor.read(&mut tick);
        }
        for what in std::mem::take(&mut tick.after) {
            tick.note(what);
        }
        self.times.push(t);
    }

    fn len(&self) -> usize {
        self.times.len()
    }

    /// The series of the readings held.
    fn series(&self, t0: u64) -> Vec<Series> {
        let mut out = Out::default();
        for monitor in &self.monitors {
            monitor.series(&self.times, t0, &mut out);
        }
        out.0
    }

    /// Keeps the readings whose index `keep` takes.
    fn retain(&mut self, keep: &dyn Fn(usize) -> bool) {
        let mut i = 0;
        self.times.retain(|_| {
            i += 1;
            keep(i - 1)
        });
        for monitor in &mut self.monitors {
            monitor.retain(keep);
        }
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
    let mut readings = Watched {
        times: Vec::new(),
        monitors: monitors(&watch),
    };
    readings.read(t0, &mut notes);
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
        readings.read(now_ns(), &mut notes);
        if done {
            break;
        }
        // (`auto` thins its readings at a minute, 600 readings in: before the first chunk.)
        if readings.len() > CHUNK && !auto {
            append(&mut series, readings.series(t0));
            let last = readings.len() - 1;
            readings.retain(&|i| i == last);
        }
        if auto && now_ns() - t0 >= AUTO_SWITCH_NS {
            // A minute old: the readings of whole seconds stay, and a second it is.
            let per = AUTO_LONG_NS / AUTO_SHORT_NS;
            readings.retain(&|i| i as u64 % per == 0);
            auto = false;
            interval = AUTO_LONG_NS;
            tick /= per;
        }
    }
    append(&mut series, readings.series(t0));
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

/// `name value` lines (/proc/vmstat, cpu.stat).
pub(super) fn parse_pairs(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
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
    use super::cpu::parse_stat;
    use super::disk::parse_diskstats;
    use super::memory::parse_meminfo;
    use super::pressure::parse_pressure;
    use super::process::{parse_cgroup_io, parse_pid_stat};
    use super::*;

    #[test]
    fn procfs_lines_are_read_as_the_kernel_writes_them() {
        let disk = " 253       0 vda 1000 5 80000 300 2000 7 160000 900 3 1500 1200 0 0 0 0\n   7       3 loop3 10 0 20 1 30 0 60 2 0 4 3\n";
        assert_eq!(
            parse_diskstats(disk, "vda"),
            Some([1000, 80000, 2000, 160000, 3, 1500].into())
        );
        assert_eq!(
            parse_diskstats(disk, "loop3"),
            Some([10, 20, 30, 60, 0, 4].into())
        );
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
                ("all", [11, 5, 3, 4, 3, 126].into()),
                ("cpu0", [5, 2, 1, 2, 1, 61].into())
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
        let reading = |t: u64, sectors: u64, busy_ms: u64, dirty: u64, steal: u64| {
            (
                t,
                DiskStats::from([0, 0, 1, sectors, 2, busy_ms]),
                [Some(dirty), None, None, None],
                CpuTicks::from([0, 0, 0, 0, steal, steal * 10]),
            )
        };
        let rows = [
            reading(1_000, 0, 0, 5, 0),
            reading(100_001_000, 2048, 50, 7, 10),
            reading(200_001_000, 4096, 150, 9, 20),
        ];
        let times = rows.map(|r| r.0);
        let mut out = Out::default();
        fn on<'r, R>(times: &'r [u64], values: &'r [R]) -> Readings<'r, R> {
            Readings {
                times,
                values,
                t0: 1_000,
            }
        }
        let disks = rows.map(|r| vec![Some(r.1)]);
        disk::Disks {
            devices: watch.devices.clone(),
        }
        .series(&on(&times, &disks), &mut out);
        memory::Memory.series(&on(&times, &rows.map(|r| Some(r.2))), &mut out);
        let cpus = rows.map(|r| Some(vec![Some(r.3)]));
        cpu::Cpus {
            names: vec!["all".to_string()],
        }
        .series(&on(&times, &cpus), &mut out);
        let series = out.0;
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

    /// A monitor's part of the assessment is asked through the registration: one registered
    /// after the host's sees every series of the sample and what the monitors before it filled
    /// in, and a disturbance it leaves is said by the monitor that words it (the CPU's steal);
    /// one nobody words is said in a few words.
    #[test]
    fn a_registered_monitor_assesses_through_the_seam() {
        struct Judge;
        impl HostMonitor for Judge {
            type Reading = ();
            fn read(&mut self, _tick: &mut Tick<'_>) {}
            fn series(&self, _readings: &Readings<'_, ()>, _out: &mut Out) {}
            fn assess(
                &self,
                sample: &SampleSeries<'_>,
                into: &mut Assessment,
                warnings: &mut Vec<String>,
            ) {
                warnings.push(format!(
                    "judged {} series after {} device(s)",
                    sample.series.len(),
                    into.devices.len()
                ));
                into.steal_percent = Some(50.0);
            }
        }
        let busy = Series {
            source: fsbench_model::series::source::DISK.into(),
            phase: None,
            label: fsbench_model::series::role::DEVICE.into(),
            subject: "loop3".into(),
            metric: fsbench_model::series::metric::BUSY.into(),
            unit: Unit::Percent,
            points: vec![Point(0, 100, 10.0), Point(100, 100, 20.0)],
        };
        let series = [busy];
        let sample = SampleSeries {
            series: &series,
            windows: &[],
        };
        // The host's monitors alone: the device's load, nothing disturbed.
        let (mut alone, mut said) = (Assessment::default(), Vec::new());
        assess(&sample, &mut alone, &mut said);
        assert!(said.is_empty() && !alone.disturbed, "{said:?}");
        assert_eq!(alone.devices.len(), 1);
        assert_eq!(alone.devices[0].busy_percent, 15.0);
        // With the judge registered after them.
        let mut registered = monitors(&Watch::default());
        registered.push(kept(Judge));
        let (mut judged, mut said) = (Assessment::default(), Vec::new());
        assess_by(&registered, &sample, &mut judged, &mut said);
        assert_eq!(said[0], "judged 1 series after 1 device(s)");
        assert!(said[1].starts_with("CPU steal took 50.0 %"), "{said:?}");
        assert_eq!(said.len(), 2);
        assert!(judged.disturbed);
        // A disturbance no registered monitor words.
        let (mut unworded, mut said) = (Assessment::default(), Vec::new());
        assess_by(&[kept(Judge)], &sample, &mut unworded, &mut said);
        assert_eq!(said[1], "CPU steal 50.0 % of the CPUs' time");
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
