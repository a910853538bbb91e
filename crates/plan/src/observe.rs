//! What a sample is watched with, and what that says of it: the host monitors
//! (`fsbench_measure::monitor`) run in the sample's process from just before its workload
//! starts to just after it ends, on the filesystem's device and the disk under it; the series
//! its phases hand on (through the sample's sink, from this process or the child's events) are
//! collected as they come; both go on one time axis (ns since the monitors started). Then
//! [`assess`] says whether each phase was steady, how busy the devices were, and whether the
//! host disturbed the sample — stored with it, and said as warnings.

use fsbench_analysis::steady::steadiness;
use fsbench_measure::monitor::{self, device_of_file, Monitor, SampleSeries, Watch};
use fsbench_measure::series::{Outlet, SeriesInterval};
use fsbench_model::series::{
    metric, role, subject, Assessment, PhaseBatch, PhaseVerdict, Phases, Point, Series, WORKLOAD,
};
use fsbench_testbed::cgroup::Cgroup;
use fsbench_testbed::TargetInfo;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The series of a sample's phases as they arrive (an outlet: a phase's sampler thread in this
/// process, or the child's events on this thread).
#[derive(Debug, Default)]
pub struct PhaseLog(Mutex<Phases>);

impl Outlet for PhaseLog {
    fn send(&self, batch: &PhaseBatch) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take(batch);
    }
}

/// A sample being watched.
pub struct Observer {
    monitor: Monitor,
    phases: Arc<PhaseLog>,
}

/// What watching a sample found.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The workload's series, then the monitors'.
    pub series: Vec<Series>,
    /// None when nothing was watched (`interval = "off"`).
    pub assessment: Option<Assessment>,
    /// What the reader must know: what could not be watched, and what the series say.
    pub warnings: Vec<String>,
}

/// Which devices a sample's filesystem is on: (`device`, its block device), (`disk`, the disk
/// under it — a loop device's backing disk, a partition's disk), with what cannot be watched.
pub fn devices(target: Option<&TargetInfo>, dir: &Path) -> (Vec<(String, String)>, Vec<String>) {
    let mut devices = Vec::new();
    let mut notes = Vec::new();
    let (device, disk) = match target {
        Some(info) => {
            let device = info
                .device
                .path
                .as_ref()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned());
            if device.is_none() {
                notes.push(format!(
                    "the filesystem ({}) is on no block device: the sample has no disk series",
                    info.filesystem
                ));
            }
            let disk = info.device.disk.as_ref().map(|d| d.name.clone());
            if let (Some(device), None, "image") = (&device, &disk, info.device.kind.as_ref()) {
                notes.push(format!(
                    "no disk is under {device} (its image is on a filesystem without one, such as tmpfs): the sample has no series of the disk under it"
                ));
            }
            (device, disk)
        }
        None => {
            let device = device_of_file(dir);
            let disk = fsbench_testbed::disk::disk_of_file(dir)
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
            if device.is_none() {
                notes.push(format!(
                    "{} is on no block device (tmpfs, a network or fuse filesystem): the sample has no disk series",
                    dir.display()
                ));
            }
            (device, disk)
        }
    };
    if let Some(device) = &device {
        devices.push((role::DEVICE.to_string(), device.clone()));
    }
    if let Some(disk) = disk.filter(|d| Some(d) != device.as_ref()) {
        devices.push((role::DISK.to_string(), disk));
    }
    (devices, notes)
}

impl Observer {
    /// Starts the monitors now (the sample's time 0): on `devices`, with the CPU time of this
    /// process (`this_process`: the workload runs in it) and of the sample's `cgroup`, and
    /// what the cgroup's processes read and write on each device (their own I/O, not another
    /// process's).
    pub fn start(
        interval: SeriesInterval,
        (devices, notes): (Vec<(String, String)>, Vec<String>),
        this_process: bool,
        cgroup: Option<&Cgroup>,
    ) -> Observer {
        // Where the cgroup's I/O cannot be counted (a partition), the sample has no own I/O
        // series, and a warning of another process's I/O says it may hold some.
        let names: Vec<String> = devices.iter().map(|(_, name)| name.clone()).collect();
        let cgroup_io = cgroup
            .filter(|c| interval != SeriesInterval::Off && c.count_io_on(&names).is_ok())
            .and_then(Cgroup::io_stat);
        let monitor = Monitor::start(Watch {
            interval,
            devices,
            this_process,
            cgroup: cgroup.map(|c| c.dir().to_path_buf()),
            cgroup_io,
            notes,
        });
        Observer {
            monitor,
            phases: Arc::default(),
        }
    }

    /// Where the sample's phases' batches are collected.
    pub fn collector(&self) -> Arc<PhaseLog> {
        self.phases.clone()
    }

    /// Stops the monitors: every series on the sample's time axis, and what they say.
    pub fn finish(self, interval: SeriesInterval) -> Observed {
        let monitored = self.monitor.stop();
        if interval == SeriesInterval::Off {
            return Observed::default();
        }
        let phases = self.phases.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut series = phases.series(monitored.t0_ns, "");
        series.extend(monitored.series);
        let (assessment, mut warnings) = assess(&series);
        warnings.splice(0..0, monitored.notes);
        Observed {
            series,
            assessment: Some(assessment),
            warnings,
        }
    }
}

/// What a sample's series say: each phase's steadiness and warm-up (from its total's rate per
/// interval: bytes, or operations when it moved none, over the time it moved them: its
/// finishing steps are said apart), then what each host monitor's series say of the time the
/// phases ran (`fsbench_measure::monitor::assess`: how busy each watched device was, the CPU
/// steal, the I/O on the disk beyond the device's over the whole sample, and whether the host
/// disturbed the sample); with the warnings they make.
pub fn assess(series: &[Series]) -> (Assessment, Vec<String>) {
    let find = |source: &str, phase: Option<u32>, subject: &str, metric: &str| {
        series.iter().find(|s| {
            s.source == source && s.phase == phase && s.subject == subject && s.metric == metric
        })
    };
    let mut verdicts = Vec::new();
    // When the phases ran: [start, end) on the sample's axis.
    let mut windows: Vec<(u64, u64)> = Vec::new();
    let phases = series
        .iter()
        .filter(|s| s.source == WORKLOAD && s.subject == subject::TOTAL && s.metric == metric::OPS);
    for ops in phases {
        let phase = ops.phase.unwrap_or(0);
        let bytes =
            find(WORKLOAD, ops.phase, subject::TOTAL, metric::BYTES).filter(|b| b.sum() > 0.0);
        let counts = bytes.unwrap_or(ops);
        if let (Some(first), Some(last)) = (counts.points.first(), counts.points.last()) {
            windows.push((first.t_ns(), last.t_ns() + last.dt_ns()));
        }
        // The timed finishing steps (a pass's fsync, close, flush) move nothing: each
        // interval's rate is over the time it moved data, and the steps are said apart.
        let finish = find(WORKLOAD, ops.phase, subject::TOTAL, metric::FINISH);
        let finish_in = |p: &Point| {
            finish
                .and_then(|f| f.points.iter().find(|f| f.t_ns() == p.t_ns()))
                .map_or(0, |f| f.value() as u64)
        };
        let moving: Vec<(Point, u64)> = counts
            .points
            .iter()
            .map(|p| (*p, p.dt_ns().saturating_sub(finish_in(p))))
            .collect();
        // An interval that moved data for less than half the usual time says little of the
        // rate: the phase's last, often a sliver, and those its flush filled.
        let mut lengths: Vec<u64> = moving.iter().map(|m| m.1).filter(|&t| t > 0).collect();
        lengths.sort_unstable();
        let typical = lengths.get(lengths.len() / 2).copied().unwrap_or(0);
        let (points, moved_ns): (Vec<Point>, Vec<u64>) = moving
            .into_iter()
            .filter(|&(_, t)| t > 0 && t * 2 >= typical)
            .unzip();
        let rates: Vec<f64> = points
            .iter()
            .zip(&moved_ns)
            .map(|(p, &t)| p.value() * 1e9 / t as f64)
            .collect();
        let judged = steadiness(&rates);
        verdicts.push(PhaseVerdict {
            phase,
            label: ops.label.clone(),
            steady: judged.steady,
            change_percent: judged.change.map(|c| c * 100.0),
            warmup_ns: judged.warmed_at.map(|i| {
                points
                    .get(i)
                    .map_or_else(
                        || points.last().map_or(0, |p| p.t_ns() + p.dt_ns()),
                        |p| p.t_ns(),
                    )
                    .saturating_sub(points.first().map_or(0, |p| p.t_ns()))
            }),
            finish_ns: finish.map(|f| f.sum() as u64),
        });
    }
    let mut warnings = Vec::new();
    let unsteady: Vec<String> = verdicts
        .iter()
        .filter(|v| v.steady == Some(false))
        .map(|v| {
            format!(
                "{} ({:+.0} %)",
                if v.label.is_empty() {
                    "the phase"
                } else {
                    &v.label
                },
                v.change_percent.unwrap_or(0.0)
            )
        })
        .collect();
    if !unsteady.is_empty() {
        let shown: Vec<&str> = unsteady.iter().take(5).map(String::as_str).collect();
        let more = unsteady.len().saturating_sub(shown.len());
        warnings.push(format!(
            "{} of {} phases did not reach a steady state (the rate over the last third against the middle third, beyond its noise): {}{}; the figures are averages over a changing rate",
            unsteady.len(),
            verdicts.len(),
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    // The monitors' part: each registered monitor's verdicts on its own series, while the
    // phases ran, and the ways the host disturbed the sample.
    let mut assessment = Assessment {
        phases: verdicts,
        ..Assessment::default()
    };
    let sample = SampleSeries {
        series,
        windows: &windows,
    };
    monitor::assess(&sample, &mut assessment, &mut warnings);
    (assessment, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_model::Unit;

    fn series(
        source: &str,
        phase: Option<u32>,
        label: &str,
        subject: &str,
        metric: &str,
        values: &[f64],
    ) -> Series {
        Series {
            source: source.into(),
            phase,
            label: label.into(),
            subject: subject.into(),
            metric: metric.into(),
            unit: Unit::Count,
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| Point(i as u64 * 100, 100, *v))
                .collect(),
        }
    }

    /// A write that stalls two thirds in, on a saturated loop device whose disk moved 64 MiB
    /// more than it did, with steal: every verdict, and a warning for each.
    #[test]
    fn a_stalled_phase_on_a_busy_disk_is_unsteady_saturated_and_disturbed() {
        let rates: Vec<f64> = (0..30)
            .map(|i| if i < 20 { 1000.0 } else { 100.0 })
            .collect();
        let mb = 1048576.0;
        let all = vec![
            series(WORKLOAD, Some(0), "write 1g 1m", "total", "ops", &rates),
            series(WORKLOAD, Some(0), "write 1g 1m", "total", "bytes", &rates),
            series("disk", None, "device", "loop3", "busy", &[99.0; 30]),
            series("disk", None, "device", "loop3", "write_bytes", &[mb; 30]),
            series("disk", None, "disk", "vda", "busy", &[50.0; 30]),
            series("disk", None, "disk", "vda", "write_bytes", &[mb * 3.0; 30]),
            series("cpu", None, "", "all", "steal", &[5.0; 30]),
        ];
        let (a, warnings) = assess(&all);
        assert_eq!(a.phases[0].steady, Some(false));
        assert!((a.phases[0].change_percent.unwrap() + 90.0).abs() < 1e-6);
        // Never near its (falling) settled rate: the warm-up is the whole phase.
        assert_eq!(a.phases[0].warmup_ns, Some(3000));
        assert!(a.devices[0].saturated && !a.devices[1].saturated);
        assert_eq!(a.other_io_bytes, Some(60 << 20));
        assert!(a.disturbed);
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        assert!(
            warnings[0].contains("write 1g 1m (-90 %)"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[3].contains("another process moved 60 MiB on vda"),
            "{}",
            warnings[3]
        );
        assert_eq!(
            a.disturbance().unwrap(),
            "CPU steal 5.0 % of the CPUs' time; 60.0 MiB of another process's I/O on vda"
        );
        // A quiet host: nothing to say.
        let quiet = vec![
            series(WORKLOAD, Some(0), "", "total", "ops", &[10.0; 12]),
            series("disk", None, "device", "loop3", "write_bytes", &[mb; 12]),
            series("disk", None, "device", "loop3", "busy", &[10.0; 12]),
            series("disk", None, "disk", "vda", "write_bytes", &[mb; 12]),
            series("disk", None, "disk", "vda", "busy", &[10.0; 12]),
            series("cpu", None, "", "all", "steal", &[0.5; 12]),
        ];
        let (a, warnings) = assess(&quiet);
        assert_eq!((a.phases[0].steady, a.disturbed), (Some(true), false));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(a.disturbance(), None);
    }

    /// The disk under the device moved 100 MiB beyond it; the sample's own processes moved
    /// 70 MiB on the disk, 8 of them through the device (a loop device with direct I/O does
    /// their I/O on the disk in their name): 62 MiB are theirs (a copy's source), 38 MiB
    /// another process's, which still disturbs the sample. Without their counters, all 100
    /// are another's.
    #[test]
    fn the_samples_own_io_outside_its_device_is_not_another_process() {
        let mb = 1048576.0;
        let mut all = vec![
            series(WORKLOAD, Some(0), "copy", "total", "ops", &[1.0; 10]),
            series("disk", None, "device", "loop3", "busy", &[10.0; 10]),
            series("disk", None, "device", "loop3", "write_bytes", &[mb; 10]),
            series("disk", None, "disk", "vda", "busy", &[10.0; 10]),
            series("disk", None, "disk", "vda", "write_bytes", &[11.0 * mb; 10]),
        ];
        let (a, _) = assess(&all);
        assert_eq!((a.other_io_bytes, a.own_io_bytes), (Some(100 << 20), None));
        all.extend([
            series("process", None, "device", "loop3", "write_bytes", &[mb; 8]),
            series(
                "process",
                None,
                "disk",
                "vda",
                "read_bytes",
                &[3.0 * mb; 10],
            ),
            series(
                "process",
                None,
                "disk",
                "vda",
                "write_bytes",
                &[4.0 * mb; 10],
            ),
        ]);
        let (a, warnings) = assess(&all);
        assert_eq!(a.own_io_bytes, Some(62 << 20));
        assert_eq!(a.other_io_bytes, Some(38 << 20));
        assert!(a.disturbed);
        assert!(
            warnings[0].contains("another process moved 38 MiB on vda")
                && warnings[0].contains("the sample's own 62 MiB outside it"),
            "{warnings:?}"
        );
        // Its own 100 MiB: nothing of another's.
        all.push(series(
            "process",
            None,
            "disk",
            "vda",
            "write_bytes",
            &[3.8 * mb; 10],
        ));
        let (a, warnings) = assess(&all);
        assert_eq!((a.other_io_bytes, a.disturbed), (Some(0), false));
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    /// A write at a steady rate for 20 intervals, then its fsync for 10 (nothing moves) and a
    /// sliver: judged on the writes (the flush's intervals are marked, left out and summed),
    /// the interval the fsync started in at its rate over the part that wrote. Unmarked, the
    /// same intervals are a rate that fell to nothing.
    #[test]
    fn a_phase_is_judged_on_the_time_it_moved_data_and_its_flush_is_said_apart() {
        let mut bytes: Vec<f64> = (0..20).map(|i| 1000.0 + (i % 2) as f64).collect();
        // The fsync starts 60 % into interval 20.
        bytes.extend([600.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let mut write = vec![
            series(WORKLOAD, Some(0), "write", "total", "ops", &bytes),
            series(WORKLOAD, Some(0), "write", "total", "bytes", &bytes),
        ];
        let unmarked = assess(&write).0;
        assert_eq!(unmarked.phases[0].steady, Some(false));
        assert!(unmarked.phases[0].change_percent.unwrap() < -90.0);
        // The last interval is a 30 ns sliver of the fsync's end.
        let mut finish = series(WORKLOAD, Some(0), "write", "total", "finish", &[40.0]);
        finish.points[0].0 = 2000;
        finish
            .points
            .extend((21..30).map(|i| Point(i * 100, 100, 100.0)));
        finish.points.push(Point(3000, 30, 30.0));
        write[1].points[30].1 = 30;
        write.push(finish);
        let (a, warnings) = assess(&write);
        let v = &a.phases[0];
        assert_eq!((v.steady, v.finish_ns), (Some(true), Some(40 + 900 + 30)));
        assert!(v.change_percent.unwrap().abs() < 1.0, "{v:?}");
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}
