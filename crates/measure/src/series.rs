//! Per-interval series of a running phase, kept out of the timed loop's way: each thread
//! publishes what it does on a [`Probe`] of its own (its latency histogram's counters and its
//! bytes, written by it alone with plain relaxed stores: no lock, no atomic read-modify-write,
//! no allocation), and a [`PhaseSampler`] thread reads every probe once per interval, keeps
//! the previous reading, and turns the differences into each interval's operations, bytes and
//! latency percentiles — per thread and for the whole phase — handed on as
//! [`PhaseBatch`]es to an [`Outlet`] about every second and at the phase's end.
//!
//! A pass that ends with a timed finishing step (the matrix's fsync, close or stdio flush)
//! says on its probe when the step starts and ends, and each interval carries how much of it
//! the step took (`Tally::finish_ns`): a phase's flush moves no bytes, and its intervals are
//! then known for what they are, not read as the rate falling to nothing.
//!
//! The interval ([`SeriesInterval`]): `auto` takes 100 ms and, for a phase that runs past a
//! minute, replaces them by 1 s intervals (the sampler sums its 100 ms readings into seconds
//! as it goes, so the switch loses nothing), or a fixed length, or `off`. Every count a thread
//! published is in exactly one interval: the intervals of a phase add up to its totals.

use crate::clock::now_ns;
use crate::histogram::{bucket_index, bucket_range, BUCKETS};
use fsbench_model::series::{Interval, Percentiles, PhaseBatch, Tally};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// How often a running phase is sampled (and the host monitors with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesInterval {
    /// 100 ms; 1 s for a phase (or a sample's monitors) past a minute.
    #[default]
    Auto,
    /// No series, no monitors.
    Off,
    /// Every this many nanoseconds.
    Every(u64),
}

/// The shortest interval that may be asked for: a reading of every probe costs about 5 µs per
/// thread.
pub const SHORTEST_NS: u64 = 10_000_000;
/// The longest interval that may be asked for: a phase shorter than its interval has one
/// point, at its end; longer intervals would only overflow the arithmetic of the next reading.
pub const LONGEST_NS: u64 = 3_600_000_000_000;
/// The interval of `auto` for the first minute, and after it.
pub const AUTO_SHORT_NS: u64 = 100_000_000;
pub const AUTO_LONG_NS: u64 = 1_000_000_000;
/// How long `auto` keeps its short interval.
pub const AUTO_SWITCH_NS: u64 = 60_000_000_000;

impl SeriesInterval {
    /// The first interval, None when off.
    pub fn first_ns(self) -> Option<u64> {
        match self {
            SeriesInterval::Auto => Some(AUTO_SHORT_NS),
            SeriesInterval::Off => None,
            SeriesInterval::Every(ns) => Some(ns),
        }
    }
}

impl fmt::Display for SeriesInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeriesInterval::Auto => f.write_str("auto"),
            SeriesInterval::Off => f.write_str("off"),
            SeriesInterval::Every(ns) => crate::units::TimeSpan::from_ns(*ns).fmt(f),
        }
    }
}

impl std::str::FromStr for SeriesInterval {
    type Err = String;
    fn from_str(text: &str) -> Result<SeriesInterval, String> {
        match text.trim() {
            "auto" => Ok(SeriesInterval::Auto),
            "off" => Ok(SeriesInterval::Off),
            other => {
                let ns = crate::units::parse_duration_ns(other).map_err(|e| {
                    format!("{e}; an interval is \"auto\", \"off\" or a duration such as \"250ms\"")
                })?;
                if ns < SHORTEST_NS {
                    return Err(format!(
                        "{other} is shorter than the shortest interval, 10ms; use \"auto\" (100ms, 1s past a minute) or a longer one"
                    ));
                }
                if ns > LONGEST_NS {
                    return Err(format!(
                        "{other} is longer than the longest interval, 1h (a phase shorter than its interval has one point, at its end); use \"off\" for no series, or a shorter one"
                    ));
                }
                Ok(SeriesInterval::Every(ns))
            }
        }
    }
}

fsbench_model::text_serde!(SeriesInterval);

/// Where a sampler hands its batches, from its own thread (a campaign's child writes them on
/// its output; a command keeps them and shows the live rate).
pub trait Outlet: Send + Sync {
    fn send(&self, batch: &PhaseBatch);
}

/// An outlet that keeps nothing (nobody asked for the series).
pub struct Discard;

impl Outlet for Discard {
    fn send(&self, _batch: &PhaseBatch) {}
}

/// Keeps every batch (tests, and a sample's collection).
#[derive(Debug, Default)]
pub struct Keep(pub Mutex<Vec<PhaseBatch>>);

impl Outlet for Keep {
    fn send(&self, batch: &PhaseBatch) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(batch.clone());
    }
}

impl Keep {
    pub fn take(&self) -> Vec<PhaseBatch> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Where a timed loop publishes each operation: a series' [`Probe`], or nowhere ([`NoTap`]).
/// Loops generic over it are made twice, so a run without series pays nothing for them.
pub trait Tap {
    fn op(&self, bytes: u64, latency_ns: u64);
    /// The pass's finishing step (fsync, close, a buffer's flush) starts now.
    fn finishing(&self) {}
    /// The finishing step that started ended now.
    fn finished(&self) {}
}

/// No series: publishes nothing.
pub struct NoTap;

impl Tap for NoTap {
    #[inline(always)]
    fn op(&self, _bytes: u64, _latency_ns: u64) {}
}

impl Tap for Probe {
    #[inline(always)]
    fn op(&self, bytes: u64, latency_ns: u64) {
        Probe::op(self, bytes, latency_ns)
    }
    fn finishing(&self) {
        Probe::finishing(self)
    }
    fn finished(&self) {
        Probe::finished(self)
    }
}

/// Adds `n` to a counter only this thread writes: a relaxed load and store (plain moves on
/// x86 and arm64), not a read-modify-write: the reader sees every value whole.
#[inline(always)]
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

/// One thread's counters for the series of a phase: written by that thread alone, read by the
/// sampler. Aligned so that neighbouring probes never share a cache line.
#[repr(align(128))]
pub struct Probe {
    bytes: AtomicU64,
    /// The thread's operations by latency, in the buckets of [`crate::Histogram`].
    buckets: Box<[AtomicU64]>,
    /// When the finishing step under way started (CLOCK_MONOTONIC ns); 0 when none is.
    finish_since: AtomicU64,
    /// The time of the finishing steps that ended, ns.
    finish_done: AtomicU64,
}

impl fmt::Debug for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("bytes", &self.bytes.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for Probe {
    fn default() -> Probe {
        Probe::new()
    }
}

impl Probe {
    pub fn new() -> Probe {
        Probe {
            bytes: AtomicU64::new(0),
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            finish_since: AtomicU64::new(0),
            finish_done: AtomicU64::new(0),
        }
    }

    /// A finishing step starts: once per pass, outside the loop of operations (a clock read
    /// and a store).
    pub fn finishing(&self) {
        self.finish_since.store(now_ns().max(1), Ordering::Release);
    }

    /// The finishing step ended. It is marked over before its time is added (both released),
    /// so a reader that sees its time added also sees it over ([`Probe::finish_ns_at`]).
    pub fn finished(&self) {
        let since = self.finish_since.load(Ordering::Relaxed);
        if since == 0 {
            return;
        }
        let took = now_ns().saturating_sub(since);
        self.finish_since.store(0, Ordering::Release);
        let done = self.finish_done.load(Ordering::Relaxed);
        self.finish_done.store(done + took, Ordering::Release);
    }

    /// The time of every finishing step so far, the one under way counted up to `now`. An
    /// ended step is never counted twice (whole, and as the part under way): `since` is read
    /// between two reads of `done` that agree. Between its mark and its time, a step that just
    /// ended is missed for a moment; the next reading has it.
    fn finish_ns_at(&self, now: u64) -> u64 {
        loop {
            let done = self.finish_done.load(Ordering::Acquire);
            let since = self.finish_since.load(Ordering::Acquire);
            if self.finish_done.load(Ordering::Acquire) == done {
                let running = if since == 0 {
                    0
                } else {
                    now.saturating_sub(since)
                };
                return done + running;
            }
        }
    }

    /// One operation that moved `bytes` and took `latency_ns`: two relaxed stores.
    #[inline(always)]
    pub fn op(&self, bytes: u64, latency_ns: u64) {
        // Every index is in range: bucket_index(u64::MAX) == BUCKETS - 1.
        bump(&self.buckets[bucket_index(latency_ns)], 1);
        bump(&self.bytes, bytes);
    }
}

/// Counts of some interval (per bucket, with the buckets touched), its bytes and the time of
/// finishing steps in it.
struct Acc {
    counts: Vec<u64>,
    touched: Vec<u32>,
    bytes: u64,
    finish_ns: u64,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            counts: vec![0; BUCKETS],
            touched: Vec::new(),
            bytes: 0,
            finish_ns: 0,
        }
    }

    #[inline]
    fn add(&mut self, index: usize, n: u64) {
        if self.counts[index] == 0 {
            self.touched.push(index as u32);
        }
        self.counts[index] += n;
    }

    /// Its operations, bytes and percentiles; then empty again.
    fn take(&mut self) -> Tally {
        self.touched.sort_unstable();
        let ops: u64 = self.touched.iter().map(|&i| self.counts[i as usize]).sum();
        let mid = |index: u32| {
            let (low, width) = bucket_range(index as usize);
            low + width / 2
        };
        let at = |percentile: f64| {
            let rank = ((percentile / 100.0) * ops as f64)
                .ceil()
                .clamp(1.0, ops as f64) as u64;
            let mut seen = 0;
            for &i in &self.touched {
                seen += self.counts[i as usize];
                if seen >= rank {
                    return mid(i);
                }
            }
            mid(*self.touched.last().expect("ops > 0"))
        };
        let latency = (ops > 0).then(|| Percentiles {
            p50_ns: at(50.0),
            p90_ns: at(90.0),
            p99_ns: at(99.0),
            p99_9_ns: at(99.9),
            max_ns: mid(*self.touched.last().expect("ops > 0")),
        });
        let tally = Tally {
            ops,
            bytes: self.bytes,
            latency,
            finish_ns: self.finish_ns,
        };
        for &i in &self.touched {
            self.counts[i as usize] = 0;
        }
        self.touched.clear();
        self.bytes = 0;
        self.finish_ns = 0;
        tally
    }
}

/// What `threads` threads' finishing steps took of an interval of `length_ns` (their `sum`):
/// the mean over the threads, at most the interval.
fn finish_of(sum: u64, threads: usize, length_ns: u64) -> u64 {
    (sum / threads.max(1) as u64).min(length_ns)
}

/// The sampler's view of one probe: what it read last, and what the open intervals hold.
struct Reader {
    probe: Arc<Probe>,
    seen: Vec<u64>,
    seen_bytes: u64,
    /// The finishing time counted so far (never less than before: see [`Probe::finish_ns_at`]).
    seen_finish: u64,
    tick: Acc,
    /// The second being summed from 100 ms readings (`auto`, first minute).
    second: Option<Acc>,
}

/// What ends the sampler's wait: the phase's end.
#[derive(Default)]
struct Control {
    done: Mutex<bool>,
    wake: Condvar,
}

/// The sampler of one running phase: its probes (one per thread, handed to the threads) and
/// the thread that reads them. [`PhaseSampler::finish`] after the phase's threads have ended.
pub struct PhaseSampler {
    probes: Vec<Arc<Probe>>,
    control: Arc<Control>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A phase number no other phase of this process has (a [`PhaseBatch`]'s `phase`).
pub fn next_phase() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What a phase is, for its batches.
#[derive(Debug, Clone)]
pub struct PhaseSpec {
    /// Its label, as its results' dimensions say it.
    pub label: String,
    /// What each part is: `thread`, `client`.
    pub each: &'static str,
    pub threads: usize,
    pub interval: SeriesInterval,
}

impl PhaseSampler {
    /// Starts sampling a phase of `spec.threads` threads now; None when series are off (or
    /// the sampler thread cannot be started: the phase runs without series).
    pub fn start(spec: PhaseSpec, outlet: Arc<dyn Outlet>) -> Option<PhaseSampler> {
        PhaseSampler::start_with(spec, outlet, AUTO)
    }

    fn start_with(spec: PhaseSpec, outlet: Arc<dyn Outlet>, timing: Auto) -> Option<PhaseSampler> {
        let first = match spec.interval {
            SeriesInterval::Auto => timing.short_ns,
            other => other.first_ns()?,
        };
        let probes: Vec<Arc<Probe>> = (0..spec.threads).map(|_| Arc::new(Probe::new())).collect();
        let control = Arc::new(Control::default());
        let id = next_phase();
        let auto = spec.interval == SeriesInterval::Auto;
        let readers: Vec<Reader> = probes
            .iter()
            .map(|probe| Reader {
                probe: probe.clone(),
                seen: vec![0; BUCKETS],
                seen_bytes: 0,
                seen_finish: 0,
                tick: Acc::new(),
                second: auto.then(Acc::new),
            })
            .collect();
        let state = Sampling {
            batch: PhaseBatch {
                phase: id,
                label: spec.label,
                each: spec.each.to_string(),
                interval_ns: first,
                intervals: Vec::new(),
            },
            readers,
            total: Acc::new(),
            total_second: auto.then(Acc::new),
            seconds: Vec::new(),
            outlet,
            auto: timing,
        };
        let wait = control.clone();
        // Out of the workload's descriptor table before the phase starts.
        let thread = crate::aside::spawn_helper(
            std::thread::Builder::new().name("fsbench-series".into()),
            move || state.run(&wait, first, auto),
        )
        .ok()?;
        Some(PhaseSampler {
            probes,
            control,
            thread: Some(thread),
        })
    }

    /// Thread `i`'s probe.
    pub fn probe(&self, i: usize) -> Arc<Probe> {
        self.probes[i].clone()
    }

    /// The phase's threads have ended: the last (partial) interval is read, every batch handed
    /// on, and the sampler thread is gone.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        *self.control.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.control.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for PhaseSampler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The sampler thread's state.
struct Sampling {
    /// The batch being filled (its intervals since the last send).
    batch: PhaseBatch,
    readers: Vec<Reader>,
    total: Acc,
    total_second: Option<Acc>,
    /// `auto`'s seconds so far, sent in place of the 100 ms intervals if the phase passes a
    /// minute.
    seconds: Vec<Interval>,
    outlet: Arc<dyn Outlet>,
    /// `auto`'s short and long intervals and when it switches ([`AUTO`]; shorter in tests).
    auto: Auto,
}

/// The lengths of `auto`.
#[derive(Debug, Clone, Copy)]
struct Auto {
    short_ns: u64,
    long_ns: u64,
    switch_ns: u64,
}

const AUTO: Auto = Auto {
    short_ns: AUTO_SHORT_NS,
    long_ns: AUTO_LONG_NS,
    switch_ns: AUTO_SWITCH_NS,
};

/// An interval's tallies from its accumulators (emptied): each thread's, and the whole
/// phase's, whose finishing time is the mean over its threads ([`finish_of`]).
fn interval_of<'a>(
    start_ns: u64,
    length_ns: u64,
    total: &mut Acc,
    each: impl Iterator<Item = &'a mut Acc>,
) -> Interval {
    let each: Vec<Tally> = each
        .map(|acc| {
            let mut tally = acc.take();
            tally.finish_ns = finish_of(tally.finish_ns, 1, length_ns);
            tally
        })
        .collect();
    let mut total = total.take();
    total.finish_ns = finish_of(total.finish_ns, each.len(), length_ns);
    Interval {
        start_ns,
        length_ns,
        total,
        each,
    }
}

impl Sampling {
    fn run(mut self, control: &Control, first_ns: u64, mut auto: bool) {
        let Auto {
            short_ns,
            long_ns,
            switch_ns,
        } = self.auto;
        let started = now_ns();
        let (mut interval, mut last, mut second_start, mut last_sent) =
            (first_ns, started, started, started);
        let mut ticks = 0u64;
        loop {
            // Intervals are counted from the phase's start (the switch to 1 s from a whole
            // second), so they do not drift.
            // (Saturating: the next reading is never earlier than one interval on.)
            let next = if auto {
                started.saturating_add((ticks + 1).saturating_mul(interval))
            } else {
                second_start
                    .saturating_add(((last - second_start) / interval + 1).saturating_mul(interval))
            };
            let done = {
                let mut done = control.done.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    let now = now_ns();
                    if *done || now >= next {
                        break *done;
                    }
                    done = control
                        .wake
                        .wait_timeout(done, std::time::Duration::from_nanos(next - now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            };
            let now = now_ns();
            self.read(now);
            ticks += 1;
            let interval_end = interval_of(
                last,
                now - last,
                &mut self.total,
                self.readers.iter_mut().map(|r| &mut r.tick),
            );
            last = now;
            self.batch.intervals.push(interval_end);
            if auto && (ticks % (long_ns / short_ns) == 0 || done) {
                self.seconds.push(interval_of(
                    second_start,
                    now - second_start,
                    self.total_second.as_mut().expect("auto"),
                    self.readers
                        .iter_mut()
                        .map(|r| r.second.as_mut().expect("auto")),
                ));
                second_start = now;
                if now - started >= switch_ns {
                    // Past a minute: its seconds replace its 100 ms intervals, and 1 s it is.
                    auto = false;
                    interval = long_ns;
                    self.batch.interval_ns = long_ns;
                    self.batch.intervals = std::mem::take(&mut self.seconds);
                    self.total_second = None;
                    for r in &mut self.readers {
                        r.second = None;
                    }
                }
            }
            if done || now - last_sent >= long_ns {
                self.outlet.send(&self.batch);
                self.batch.intervals.clear();
                last_sent = now;
            }
            if done {
                return;
            }
        }
    }

    /// Every probe's counts since the last reading (taken at `now`), into the open intervals.
    fn read(&mut self, now: u64) {
        let total = &mut self.total;
        let mut total_second = self.total_second.as_mut();
        for r in &mut self.readers {
            let finish = r.probe.finish_ns_at(now);
            let finished = finish.saturating_sub(r.seen_finish);
            r.seen_finish = r.seen_finish.max(finish);
            r.tick.finish_ns += finished;
            total.finish_ns += finished;
            if let Some(second) = r.second.as_mut() {
                second.finish_ns += finished;
            }
            if let Some(t) = total_second.as_deref_mut() {
                t.finish_ns += finished;
            }
            for (index, counter) in r.probe.buckets.iter().enumerate() {
                let now = counter.load(Ordering::Relaxed);
                let n = now.wrapping_sub(r.seen[index]);
                if n == 0 {
                    continue;
                }
                r.seen[index] = now;
                r.tick.add(index, n);
                total.add(index, n);
                if let Some(second) = r.second.as_mut() {
                    second.add(index, n);
                }
                if let Some(t) = total_second.as_deref_mut() {
                    t.add(index, n);
                }
            }
            let bytes = r.probe.bytes.load(Ordering::Relaxed);
            let moved = bytes.wrapping_sub(r.seen_bytes);
            r.seen_bytes = bytes;
            r.tick.bytes += moved;
            total.bytes += moved;
            if let Some(second) = r.second.as_mut() {
                second.bytes += moved;
            }
            if let Some(t) = total_second.as_deref_mut() {
                t.bytes += moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(threads: usize, interval: SeriesInterval) -> PhaseSpec {
        PhaseSpec {
            label: "write".into(),
            each: "thread",
            threads,
            interval,
        }
    }

    /// Two threads publish while the sampler reads every 10 ms: every operation and byte is
    /// in exactly one interval, intervals follow each other without a gap, and each carries
    /// its threads' own figures.
    #[test]
    fn the_intervals_add_up_to_what_the_threads_did() {
        let kept = Arc::new(Keep::default());
        let sampler =
            PhaseSampler::start(spec(2, SeriesInterval::Every(10_000_000)), kept.clone()).unwrap();
        std::thread::scope(|s| {
            for t in 0..2 {
                let probe = sampler.probe(t);
                s.spawn(move || {
                    for i in 0..20_000u64 {
                        probe.op(4096 * (t as u64 + 1), 1000 + i % 5000);
                        if i % 1000 == 0 {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                    }
                });
            }
        });
        sampler.finish();
        let batches = kept.take();
        let intervals: Vec<&Interval> = batches.iter().flat_map(|b| &b.intervals).collect();
        assert!(intervals.len() >= 2, "{}", intervals.len());
        let ops: u64 = intervals.iter().map(|i| i.total.ops).sum();
        let bytes: u64 = intervals.iter().map(|i| i.total.bytes).sum();
        assert_eq!((ops, bytes), (40_000, 20_000 * 4096 * 3));
        for pair in intervals.windows(2) {
            assert_eq!(pair[0].start_ns + pair[0].length_ns, pair[1].start_ns);
        }
        // A thread's operations and bytes are two counters the sampler reads one after the
        // other: on a busy host it may be descheduled between them, and an interval then holds
        // bytes of operations the next one counts. Over the phase they agree exactly.
        let second: (u64, u64) = intervals
            .iter()
            .fold((0, 0), |(o, b), i| (o + i.each[1].ops, b + i.each[1].bytes));
        assert_eq!(second, (20_000, 20_000 * 8192));
        for i in &intervals {
            assert_eq!(i.each.len(), 2);
            assert_eq!(i.each[0].ops + i.each[1].ops, i.total.ops);
            if let Some(l) = i.total.latency {
                assert!(l.p50_ns <= l.p99_ns && l.p99_ns <= l.max_ns && l.max_ns <= 6100);
                assert!(l.p50_ns >= 990, "{l:?}");
            }
        }
        assert!(batches.iter().all(|b| b.interval_ns == 10_000_000));
    }

    /// `auto` past its switch: the short intervals sent so far are replaced by long ones that
    /// hold the same counts, and the phase goes on at the long interval.
    #[test]
    fn auto_replaces_its_short_intervals_by_long_ones_past_the_switch() {
        let kept = Arc::new(Keep::default());
        let timing = Auto {
            short_ns: 10_000_000,
            long_ns: 100_000_000,
            switch_ns: 300_000_000,
        };
        let sampler =
            PhaseSampler::start_with(spec(1, SeriesInterval::Auto), kept.clone(), timing).unwrap();
        let probe = sampler.probe(0);
        let started = std::time::Instant::now();
        let mut ops = 0u64;
        while started.elapsed() < std::time::Duration::from_millis(550) {
            probe.op(1, 100);
            ops += 1;
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        sampler.finish();
        let mut phases = fsbench_model::series::Phases::default();
        let batches = kept.take();
        assert!(batches.iter().any(|b| b.interval_ns == 10_000_000));
        for b in &batches {
            phases.take(b);
        }
        let (_, _, intervals) = phases.each().next().unwrap();
        assert_eq!(intervals.iter().map(|i| i.total.ops).sum::<u64>(), ops);
        // Long intervals from the start, on their 100 ms grid (a late reading shortens the
        // next one by as much; ends on the grid make them 100 ms on average), the last one
        // partial.
        assert!((5..=7).contains(&intervals.len()), "{}", intervals.len());
        let t0 = intervals[0].start_ns;
        for (k, i) in intervals[..intervals.len() - 1].iter().enumerate() {
            assert!(
                i.start_ns + i.length_ns >= t0 + (k as u64 + 1) * 100_000_000 - 1_000_000,
                "{k}: {intervals:?}"
            );
        }
    }

    /// A pass's end that takes 60 ms (an fsync) is in the intervals it spans as their
    /// finishing time, all of those it filled, and in none before it.
    #[test]
    fn a_finishing_step_is_in_the_intervals_it_spans() {
        let kept = Arc::new(Keep::default());
        let sampler =
            PhaseSampler::start(spec(1, SeriesInterval::Every(10_000_000)), kept.clone()).unwrap();
        let probe = sampler.probe(0);
        for _ in 0..200 {
            probe.op(4096, 100);
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        let began = crate::clock::now_ns();
        probe.finishing();
        std::thread::sleep(std::time::Duration::from_millis(60));
        probe.finished();
        let ended = crate::clock::now_ns();
        sampler.finish();
        let intervals: Vec<Interval> = kept.take().into_iter().flat_map(|b| b.intervals).collect();
        // The step's time, all of it and no more (a sleep overshoots: bounded by the clock).
        let total: u64 = intervals.iter().map(|i| i.total.finish_ns).sum();
        assert!((60_000_000..=ended - began).contains(&total), "{total}");
        // Every interval the step spans whole is filled with it, and it spans some.
        let inside: Vec<&Interval> = intervals
            .iter()
            .filter(|i| i.start_ns >= began && i.start_ns + i.length_ns <= ended)
            .collect();
        assert!(!inside.is_empty(), "{intervals:?}");
        assert!(
            inside.iter().all(|i| i.total.finish_ns == i.length_ns),
            "{intervals:?}"
        );
        let first = intervals
            .iter()
            .position(|i| i.total.finish_ns > 0)
            .unwrap();
        // None before it: the first interval with finishing time ends after the step began,
        // and every operation is in it or before it, none after.
        let f = &intervals[first];
        assert!(f.start_ns + f.length_ns > began, "{intervals:?}");
        assert_eq!(
            intervals[..=first].iter().map(|i| i.total.ops).sum::<u64>(),
            200,
            "{intervals:?}"
        );
        assert!(
            intervals[first + 1..].iter().all(|i| i.total.ops == 0),
            "{intervals:?}"
        );
        for i in &intervals {
            assert_eq!(i.each[0].finish_ns, i.total.finish_ns);
        }
    }

    #[test]
    fn percentiles_come_from_the_interval_alone() {
        let mut acc = Acc::new();
        for v in 1..=1000u64 {
            acc.add(bucket_index(v * 1000), 1);
        }
        acc.bytes = 7;
        let t = acc.take();
        let l = t.latency.unwrap();
        assert_eq!((t.ops, t.bytes), (1000, 7));
        let near = |got: u64, want: f64| (got as f64 - want).abs() / want < 0.005;
        assert!(
            near(l.p50_ns, 500_000.0) && near(l.p99_ns, 990_000.0),
            "{l:?}"
        );
        assert!(near(l.max_ns, 1_000_000.0), "{l:?}");
        // Taken: empty again.
        assert_eq!(acc.take(), Tally::default());
    }

    #[test]
    fn an_interval_is_auto_off_or_a_duration_of_at_least_10ms() {
        for (text, interval) in [
            ("auto", SeriesInterval::Auto),
            ("off", SeriesInterval::Off),
            ("250ms", SeriesInterval::Every(250_000_000)),
            ("1s", SeriesInterval::Every(1_000_000_000)),
        ] {
            assert_eq!(text.parse::<SeriesInterval>().unwrap(), interval);
            assert_eq!(interval.to_string(), text);
        }
        assert!("1ms"
            .parse::<SeriesInterval>()
            .unwrap_err()
            .contains("10ms"));
        assert!("soon"
            .parse::<SeriesInterval>()
            .unwrap_err()
            .contains("auto"));
        assert!(PhaseSampler::start(spec(1, SeriesInterval::Off), Arc::new(Discard)).is_none());
    }
}
