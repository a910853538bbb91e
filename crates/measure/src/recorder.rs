//! The framework that times passes of operations: workloads say what one operation is, the
//! recorder reads the clock, fills the latency histogram and keeps the totals.
//!
//! A pass is `count` operations followed by an optional finishing step (fsync, close) that is
//! inside the timed region but not in the per-operation histogram. The clock ([`Clock`]: the
//! invariant TSC where usable) is read once per operation: the end of one operation is the start
//! of the next, so the per-operation cost of measuring is one clock read plus one histogram
//! increment, and the sum of the recorded latencies is exactly the pass's operation time. Nothing in the loop allocates, locks or prints.
//! With a series' probe ([`Recorder::set_probe`]) each operation is also published on it: two
//! relaxed stores more; and, when the passes are said to end with a finishing step that does
//! something ([`Recorder::mark_finishing`]: an fsync, a close), when it starts and ends (a
//! clock read each, once per pass).

use crate::clock::Clock;
use crate::cpu::CpuTimes;
use crate::histogram::{Histogram, LatencySummary};
use crate::series::{NoTap, Probe, Tap};
use crate::stats::{RunningStats, Spread};
use serde::Serialize;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Accumulates the passes of one measurement (one cell of a matrix, one phase of a workload).
#[derive(Debug, Default)]
pub struct Recorder {
    histogram: Histogram,
    pass_rates: RunningStats,
    passes: u64,
    ops: u64,
    bytes: u64,
    elapsed_ns: u64,
    finish_ns: u64,
    cpu: CpuTimes,
    /// Where each operation is also published for the phase's series (None: no series).
    probe: Option<Arc<Probe>>,
    /// The passes' finishing steps are published on the probe too.
    marks_finish: bool,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Forgets every pass, keeping the allocated histogram.
    pub fn reset(&mut self) {
        self.histogram.clear();
        self.pass_rates = RunningStats::new();
        self.passes = 0;
        self.ops = 0;
        self.bytes = 0;
        self.elapsed_ns = 0;
        self.finish_ns = 0;
        self.cpu = CpuTimes::default();
    }

    /// Publishes every operation of the passes to come on `probe` too (a running phase's
    /// series), or no more (None).
    pub fn set_probe(&mut self, probe: Option<Arc<Probe>>) {
        self.probe = probe;
    }

    /// The passes to come end with a finishing step that does something (an fsync, a close, a
    /// buffer's flush): the probe is told when it starts and ends, so their series mark the
    /// time it takes. A pass without one (`|_| Ok(())`) says nothing: its series have no
    /// finishing time.
    pub fn mark_finishing(&mut self, marks: bool) {
        self.marks_finish = marks;
    }

    /// Times one pass: `op(ctx, i)` for `i` in `0..count`, each returning the bytes it moved,
    /// then `finish(ctx)`. CPU time is read before and after, outside the timed region.
    #[inline]
    pub fn time_pass<C, Op, Finish>(
        &mut self,
        ctx: &mut C,
        count: u64,
        op: Op,
        finish: Finish,
    ) -> io::Result<()>
    where
        Op: FnMut(&mut C, u64) -> io::Result<u64>,
        Finish: FnOnce(&mut C) -> io::Result<()>,
    {
        self.time_pass_walled(ctx, count, op, finish, &NoWall)
            .map(drop)
    }

    /// As [`Recorder::time_pass`], ending the operations early once `wall` is reached (looked
    /// at after every operation, with the pass's time so far): `finish` still runs and the
    /// pass counts the operations it made. True when the wall ended it before `count`.
    #[inline]
    pub fn time_pass_walled<C, Op, Finish, W>(
        &mut self,
        ctx: &mut C,
        count: u64,
        op: Op,
        finish: Finish,
        wall: &W,
    ) -> io::Result<bool>
    where
        Op: FnMut(&mut C, u64) -> io::Result<u64>,
        Finish: FnOnce(&mut C) -> io::Result<()>,
        W: Wall,
    {
        // The loop is made once with the probe and once without: a run without series pays
        // nothing for them, not even a branch per operation.
        match self.probe.take() {
            Some(probe) => {
                let pass = self.pass(ctx, count, op, finish, wall, &*probe);
                self.probe = Some(probe);
                pass
            }
            None => self.pass(ctx, count, op, finish, wall, &NoTap),
        }
    }

    #[inline]
    fn pass<C, Op, Finish, W, T>(
        &mut self,
        ctx: &mut C,
        count: u64,
        mut op: Op,
        finish: Finish,
        wall: &W,
        tap: &T,
    ) -> io::Result<bool>
    where
        Op: FnMut(&mut C, u64) -> io::Result<u64>,
        Finish: FnOnce(&mut C) -> io::Result<()>,
        W: Wall,
        T: Tap,
    {
        let clock = Clock::get();
        let cpu_before = CpuTimes::thread();
        let start = clock.ticks();
        // Nanoseconds since `start` at the end of the previous operation: converting the
        // running total (not each difference) keeps the latencies summing exactly to the time.
        let mut previous_ns = 0u64;
        let mut bytes = 0u64;
        // The pass's latency totals stay in registers; only the bucket is stored per operation.
        let (mut min_ns, mut max_ns) = (u64::MAX, 0u64);
        let (mut completed, mut failure) = (count, None);
        for i in 0..count {
            let moved = match op(ctx, i) {
                Ok(moved) => moved,
                Err(e) => {
                    (completed, failure) = (i, Some(e));
                    break;
                }
            };
            bytes += moved;
            let now_ns = clock
                .ns(clock.ticks().saturating_sub(start))
                .max(previous_ns);
            let latency = now_ns - previous_ns;
            self.histogram.count_in_bucket(latency);
            tap.op(moved, latency);
            min_ns = min_ns.min(latency);
            max_ns = max_ns.max(latency);
            previous_ns = now_ns;
            if wall.reached(now_ns) && i + 1 < count {
                completed = i + 1;
                break;
            }
        }
        // The latencies add up to the operations' time exactly, so their sum is known; the
        // totals go in even when an operation failed, so counts and buckets always agree.
        self.histogram
            .add_totals(completed, previous_ns, min_ns, max_ns);
        if let Some(e) = failure {
            return Err(e);
        }
        // The series are told where the pass's end is: its flush moves no bytes, and is not
        // to be read as the rate falling.
        if self.marks_finish {
            tap.finishing();
        }
        let finished = finish(ctx);
        if self.marks_finish {
            tap.finished();
        }
        finished?;
        let end_ns = clock
            .ns(clock.ticks().saturating_sub(start))
            .max(previous_ns);
        let cpu_after = CpuTimes::thread();

        let elapsed = end_ns.max(1);
        self.passes += 1;
        self.ops += completed;
        self.bytes += bytes;
        self.elapsed_ns += elapsed;
        self.finish_ns += end_ns - previous_ns;
        self.cpu.add(cpu_after.since(cpu_before));
        self.pass_rates
            .push(completed as f64 * 1e9 / elapsed as f64);
        Ok(completed < count)
    }

    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Measured time of all passes so far, in nanoseconds.
    pub fn elapsed_ns(&self) -> u64 {
        self.elapsed_ns
    }

    pub fn histogram(&self) -> &Histogram {
        &self.histogram
    }

    /// Totals and rates of everything recorded since the last reset.
    pub fn summary(&self) -> OpSummary {
        let seconds = self.elapsed_ns as f64 / 1e9;
        let rate = |x: u64| {
            if seconds > 0.0 {
                x as f64 / seconds
            } else {
                0.0
            }
        };
        OpSummary {
            passes: self.passes,
            ops: self.ops,
            bytes: self.bytes,
            elapsed_ns: self.elapsed_ns,
            finish_ns: self.finish_ns,
            cpu: self.cpu,
            ops_per_s: rate(self.ops),
            bytes_per_s: rate(self.bytes),
            pass_ops_per_s: self.pass_rates.spread(),
            latency: self.histogram.summary(),
        }
    }
}

/// Where a pass stops before its last operation (a stonewall), asked after every operation
/// with the pass's time so far: inlined, so [`NoWall`] costs nothing.
pub trait Wall {
    fn reached(&self, pass_ns: u64) -> bool;
}

/// No wall: every pass makes all its operations.
pub struct NoWall;

impl Wall for NoWall {
    #[inline(always)]
    fn reached(&self, _pass_ns: u64) -> bool {
        false
    }
}

/// A pass's time limit, and a flag another thread raises to stop it (either may be absent).
pub struct WallAt<'a> {
    pub after_ns: Option<u64>,
    pub flag: Option<&'a AtomicBool>,
}

impl Wall for WallAt<'_> {
    #[inline]
    fn reached(&self, pass_ns: u64) -> bool {
        self.after_ns.is_some_and(|at| pass_ns >= at)
            || self.flag.is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// What a measurement did and how fast: the unit of every figure is in its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct OpSummary {
    /// Number of timed passes.
    pub passes: u64,
    /// Operations issued in all passes.
    pub ops: u64,
    /// Bytes moved (returned by reads, accepted by writes) in all passes.
    pub bytes: u64,
    /// Measured time of all passes, nanoseconds (includes `finish_ns`).
    pub elapsed_ns: u64,
    /// Part of `elapsed_ns` spent in the finishing step (fsync / close / buffer flush).
    pub finish_ns: u64,
    /// CPU time of the measuring thread during the passes.
    pub cpu: CpuTimes,
    /// ops / elapsed.
    pub ops_per_s: f64,
    /// bytes / elapsed.
    pub bytes_per_s: f64,
    /// Spread of the per-pass operation rates (ops/s), one value per pass.
    pub pass_ops_per_s: Spread,
    /// Per-operation latency (finishing step excluded).
    pub latency: LatencySummary,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_ends_a_pass_after_the_operation_that_met_it_and_finish_still_runs() {
        let flag = AtomicBool::new(false);
        let mut rec = Recorder::new();
        let mut finished = false;
        let walled = rec
            .time_pass_walled(
                &mut finished,
                100,
                |_, i| {
                    if i == 5 {
                        flag.store(true, Ordering::Relaxed);
                    }
                    Ok(10)
                },
                |finished| {
                    *finished = true;
                    Ok(())
                },
                &WallAt {
                    after_ns: None,
                    flag: Some(&flag),
                },
            )
            .unwrap();
        let s = rec.summary();
        assert!(walled && finished);
        assert_eq!((s.passes, s.ops, s.bytes, s.latency.count), (1, 6, 60, 6));
        // A wall met by the last operation is no stop; a time limit of 0 stops after one.
        let mut rec = Recorder::new();
        let flagged = |i: u64| {
            flag.store(i == 3, Ordering::Relaxed);
            Ok(1)
        };
        assert!(!rec
            .time_pass_walled(
                &mut (),
                4,
                |_, i| flagged(i),
                |_| Ok(()),
                &WallAt {
                    after_ns: None,
                    flag: Some(&flag)
                }
            )
            .unwrap());
        let at_once = WallAt {
            after_ns: Some(0),
            flag: None,
        };
        assert!(rec
            .time_pass_walled(&mut (), 4, |_, _| Ok(1), |_| Ok(()), &at_once)
            .unwrap());
        assert_eq!(rec.summary().ops, 5);
    }

    #[test]
    fn totals_and_latencies_add_up() {
        let mut rec = Recorder::new();
        let mut calls = Vec::new();
        for _ in 0..3 {
            rec.time_pass(
                &mut calls,
                4,
                |calls, i| {
                    calls.push(i);
                    Ok(10)
                },
                |_| Ok(()),
            )
            .unwrap();
        }
        let s = rec.summary();
        assert_eq!((s.passes, s.ops, s.bytes), (3, 12, 120));
        assert_eq!(calls, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(s.latency.count, 12);
        assert_eq!(rec.histogram().bins().iter().map(|b| b.1).sum::<u64>(), 12);
        // The recorded latencies add up to the measured time less the finishing steps.
        let sum = rec.histogram().mean().unwrap() * 12.0;
        assert!(
            (sum - (s.elapsed_ns - s.finish_ns) as f64).abs() <= 3.0,
            "{sum} vs {s:?}"
        );
        assert_eq!(s.pass_ops_per_s.n, 3);
        assert!(s.elapsed_ns >= s.finish_ns);
        rec.reset();
        assert_eq!(rec.summary().ops, 0);
    }

    /// With a series' probe, every operation the recorder counts is published, with its
    /// bytes and in the same latency bucket.
    #[test]
    fn a_probe_sees_every_operation_the_recorder_counts() {
        use crate::series::{Keep, PhaseSampler, PhaseSpec, SeriesInterval};
        let kept = Arc::new(Keep::default());
        let sampler = PhaseSampler::start(
            PhaseSpec {
                label: "t".into(),
                each: "thread",
                threads: 1,
                interval: SeriesInterval::Every(10_000_000),
            },
            kept.clone(),
        )
        .unwrap();
        let mut rec = Recorder::new();
        rec.set_probe(Some(sampler.probe(0)));
        for _ in 0..3 {
            rec.time_pass(&mut (), 1000, |_, i| Ok(i % 7), |_| Ok(()))
                .unwrap();
        }
        rec.set_probe(None);
        rec.time_pass(&mut (), 10, |_, _| Ok(1), |_| Ok(()))
            .unwrap();
        sampler.finish();
        let intervals: Vec<_> = kept.take().into_iter().flat_map(|b| b.intervals).collect();
        let ops: u64 = intervals.iter().map(|i| i.total.ops).sum();
        let bytes: u64 = intervals.iter().map(|i| i.total.bytes).sum();
        let per_pass: u64 = (0..1000).map(|i| i % 7).sum();
        assert_eq!((ops, bytes), (3000, 3 * per_pass));
        assert_eq!(rec.summary().ops, 3010);
    }

    /// Passes said to end with a finishing step publish its time (5 ms a pass, here); passes
    /// not said to publish none, whatever their end does.
    #[test]
    fn a_probe_sees_the_finishing_steps_it_is_told_of() {
        use crate::series::{Keep, PhaseSampler, PhaseSpec, SeriesInterval};
        let finish_ns = |mark: bool| {
            let kept = Arc::new(Keep::default());
            let spec = PhaseSpec {
                label: "t".into(),
                each: "thread",
                threads: 1,
                interval: SeriesInterval::Every(10_000_000),
            };
            let sampler = PhaseSampler::start(spec, kept.clone()).unwrap();
            let mut rec = Recorder::new();
            rec.set_probe(Some(sampler.probe(0)));
            rec.mark_finishing(mark);
            let wall = std::time::Instant::now();
            for _ in 0..4 {
                let nap = |_: &mut ()| {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    Ok(())
                };
                rec.time_pass(&mut (), 10, |_, _| Ok(1), nap).unwrap();
            }
            let wall = wall.elapsed().as_nanos() as u64;
            sampler.finish();
            let intervals = kept.take().into_iter().flat_map(|b| b.intervals);
            (intervals.map(|i| i.total.finish_ns).sum::<u64>(), wall)
        };
        // The four naps, all of them and no more than the passes took (a sleep overshoots).
        let (marked, wall) = finish_ns(true);
        assert!((20_000_000..=wall).contains(&marked), "{marked} of {wall}");
        assert_eq!(finish_ns(false).0, 0);
    }

    #[test]
    fn an_operation_error_stops_the_pass() {
        let mut rec = Recorder::new();
        let err = rec
            .time_pass(
                &mut (),
                10,
                |_, i| {
                    if i == 2 {
                        Err(io::Error::from_raw_os_error(libc::ENOSPC))
                    } else {
                        Ok(1)
                    }
                },
                |_| Ok(()),
            )
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
        assert_eq!(rec.passes(), 0);
        // The two operations that completed are counted, in the buckets and the totals alike.
        assert_eq!(rec.histogram().count(), 2);
        assert_eq!(rec.histogram().bins().iter().map(|b| b.1).sum::<u64>(), 2);
    }

    #[test]
    fn finishing_time_is_measured() {
        let mut rec = Recorder::new();
        rec.time_pass(
            &mut (),
            1,
            |_, _| Ok(0),
            |_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                Ok(())
            },
        )
        .unwrap();
        let s = rec.summary();
        assert!(
            s.finish_ns >= 5_000_000 && s.elapsed_ns >= s.finish_ns,
            "{s:?}"
        );
        assert!(s.latency.max_ns < 5_000_000);
    }
}
