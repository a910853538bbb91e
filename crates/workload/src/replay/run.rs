//! The timed replay: one OS thread per recorded thread, started when its first call is due
//! (its process made, its first call's waits over and, with recorded timing, its time come),
//! so that a build's thousands of short-lived processes are never thousands of idle threads.
//! Each thread issues its calls in recorded order, waiting where the plan says for other
//! threads' calls (briefly spinning, then parked on a futex), times each call and counts what
//! it did in its lane: per-kind histograms and counters made before it started, reused by the
//! threads that come after it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fsbench_measure::clock::{now_ns, Clock};
use fsbench_measure::histogram::Histogram;
use fsbench_measure::series::{PhaseSampler, Probe};

use super::deps::Dep;
use super::plan::{Call, Plan, Thread, Wake, KINDS};
use super::sys::{self, Buffers, Table};
use crate::StopFlag;

/// How the replay is paced and ordered.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Recorded times divided by this (None: as fast as possible).
    pub speed: Option<f64>,
    pub seed: u64,
}

/// Spins before a wait parks its thread.
const SPINS: u32 = 200;
/// A parked wait looks at the stop flag at least this often.
const PARK_NS: i64 = 10_000_000;
/// A wait for a call's time shorter than this is spun, not slept: a sleep overshoots by tens of
/// microseconds, and a thread's think times are often a few.
const SPIN_NS: u64 = 50_000;
/// A thread with recorded timing is started this long before its first call is due.
const LEAD_NS: u64 = 1_000_000;
/// Stack of a replay thread (its buffers are on the heap, in its lane).
const STACK: usize = 256 << 10;

/// A recorded thread's progress: how many of its calls have completed in the replay, and
/// the least count a parked waiter waits for. One cache line each.
///
/// A completion wakes the parked waiters only when it reaches that count, not at every call:
/// a thread waits for one call of another that may be thousands of calls away (the replay's
/// launcher for a fork, a dependency), and a wake at every completion made each call of the
/// thread waited for a system call and a context switch more (82,000 wakes in the replay of
/// git's 109,000 calls: 0.4 s of its busiest thread's 3 s).
#[repr(align(64))]
struct Progress {
    done: AtomicU32,
    /// The least `done` a waiter parked for (`u32::MAX`: none). Set by waiters (the minimum
    /// of theirs), cleared by the completion that reaches it.
    wanted: AtomicU32,
    /// Changed at every wake: the futex word waiters park on, so a waiter whose `wanted` a
    /// wake cleared before it parked finds the word changed and looks again.
    epoch: AtomicU32,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            done: AtomicU32::new(0),
            wanted: AtomicU32::new(u32::MAX),
            epoch: AtomicU32::new(0),
        }
    }
}

/// What the threads that used one lane did.
pub struct Lane {
    pub histograms: Vec<Option<Histogram>>,
    pub calls: [u64; KINDS.len()],
    pub diverged: [u64; KINDS.len()],
    pub bytes: [u64; KINDS.len()],
    /// Lookups refused because they would have left the root.
    pub refused: u64,
    /// The first call (by its index in the plan) that diverged, and what it returned here.
    pub first_diverged: Option<(u32, i64)>,
    buffers: Buffers,
    probe: Option<Arc<Probe>>,
}

impl Lane {
    fn new(plan: &Plan, seed: u64, probe: Option<Arc<Probe>>) -> Lane {
        Lane {
            histograms: plan
                .kinds_used
                .iter()
                .map(|&used| used.then(Histogram::new))
                .collect(),
            calls: [0; KINDS.len()],
            diverged: [0; KINDS.len()],
            bytes: [0; KINDS.len()],
            refused: 0,
            first_diverged: None,
            buffers: Buffers::new(seed),
            probe,
        }
    }
}

/// What the replay did.
pub struct Replayed {
    pub lanes: Vec<Lane>,
    /// From the first thread's start to the last one's end.
    pub wall_ns: u64,
    pub stopped: bool,
    /// The most replay threads that ran at once.
    pub lanes_used: usize,
    /// How often a completion woke threads parked on it: the harness's own system calls,
    /// which a replay keeps to the waits that end, not one per call.
    pub wakes: u64,
}

struct Shared<'a> {
    plan: &'a Plan,
    table: Table,
    progress: Vec<Progress>,
    /// Threads of each process still running.
    live: Vec<AtomicU32>,
    start_ns: u64,
    options: Options,
    stop: &'a StopFlag,
    /// The replay ends early for a reason of its own (a thread that cannot be started).
    abort: AtomicBool,
    clock: Clock,
    pool: Mutex<Vec<Lane>>,
    /// With recorded timing: when each call (by its index in the plan) would have completed
    /// in the replay had its thread not been running late (its end here less its thread's
    /// lateness when it was issued: see `worker`), so that a thread that follows it (woken by
    /// it, made by the fork it was, or ordered after it by the dependency rule) inherits the
    /// time its calls took here, but not the delays between them. Empty as fast as possible.
    ends: Vec<AtomicU64>,
    /// Wakes of parked waiters (see [`Progress`]).
    wakes: AtomicU64,
}

/// Replays `plan` in the directory whose descriptor is `root`; each thread's operations are
/// published on a probe of `series` (for as many lanes as it has probes).
pub fn replay(
    plan: &Plan,
    root: i32,
    options: Options,
    stop: &StopFlag,
    series: Option<&PhaseSampler>,
    probes: usize,
) -> Result<Replayed, String> {
    let shared = Shared {
        plan,
        table: Table::new(root, plan),
        progress: plan.threads.iter().map(|_| Progress::default()).collect(),
        live: plan
            .procs
            .iter()
            .map(|p| AtomicU32::new(p.threads))
            .collect(),
        start_ns: now_ns(),
        options,
        stop,
        abort: AtomicBool::new(false),
        clock: Clock::get(),
        pool: Mutex::new(Vec::new()),
        ends: if options.speed.is_some() {
            plan.calls.iter().map(|_| AtomicU64::new(0)).collect()
        } else {
            Vec::new()
        },
        wakes: AtomicU64::new(0),
    };
    let mut made = 0usize;
    let mut failed = None;
    std::thread::scope(|scope| {
        let mut running = Vec::new();
        for &t in &plan.launch {
            if shared.stopped() {
                break;
            }
            let thread = &plan.threads[t as usize];
            let first = &plan.calls[thread.calls[0] as usize];
            // Started only when its first call can go: no idle threads.
            let mut ready = thread.after.is_none_or(|d| shared.wait(d));
            if let Some(speed) = options.speed.filter(|_| ready) {
                let due = shared.first_due(thread, speed).saturating_sub(LEAD_NS);
                if !shared.sleep_until(due) {
                    break;
                }
            }
            if plan.dependencies {
                let (a, b) = first.deps;
                for &d in &plan.deps[a as usize..b as usize] {
                    ready = ready && shared.wait(d);
                }
            }
            if !ready {
                break;
            }
            running.retain(|h: &std::thread::ScopedJoinHandle<'_, ()>| !h.is_finished());
            let lane = shared.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let lane = lane.unwrap_or_else(|| {
                let probe = series.filter(|_| made < probes).map(|s| s.probe(made));
                made += 1;
                Lane::new(plan, options.seed ^ made as u64, probe)
            });
            let shared = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("replay-{}", thread.tid))
                .stack_size(STACK)
                .spawn_scoped(scope, move || shared.worker(t, lane));
            match spawned {
                Ok(handle) => running.push(handle),
                Err(e) => {
                    failed = Some(format!(
                        "cannot start a thread for recorded thread {} ({e}): the host's thread \
                         limit is too low for this trace",
                        thread.tid
                    ));
                    break;
                }
            }
        }
        if failed.is_some() {
            // The threads already running end at their next call.
            shared.stop_all();
        }
    });
    let wall_ns = now_ns().saturating_sub(shared.start_ns);
    for slot in 0..plan.slots {
        shared.table.close_slot(slot);
    }
    shared.table.unmap_all();
    if let Some(e) = failed {
        return Err(e);
    }
    let lanes = shared.pool.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(Replayed {
        lanes_used: lanes.len(),
        lanes,
        wakes: shared.wakes.load(Ordering::Relaxed),
        wall_ns,
        stopped: stop.is_requested(),
    })
}

fn futex(word: &AtomicU32, op: i32, value: u32, timeout: Option<&libc::timespec>) {
    // SAFETY: the word is a live, aligned u32 for the call's duration; the timeout, when
    // given, a valid timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            value,
            timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

impl Shared<'_> {
    /// Whether the replay is to end now: a stop requested, or its own abort.
    fn stopped(&self) -> bool {
        self.stop.is_requested() || self.abort.load(Ordering::Relaxed)
    }

    /// Sleeps until `deadline` (monotonic ns); false when the replay is stopped first.
    fn sleep_until(&self, deadline: u64) -> bool {
        loop {
            let now = now_ns();
            if now >= deadline {
                return true;
            }
            if self.stopped() {
                return false;
            }
            let left = deadline - now;
            if left <= SPIN_NS {
                // A sleep this short would overshoot by more than it waits: spin it out.
                while now_ns() < deadline {
                    std::hint::spin_loop();
                }
                return true;
            }
            std::thread::sleep(Duration::from_nanos((left - SPIN_NS).min(50_000_000)));
        }
    }

    /// When a call recorded at `start_ns` is due, counted from the replay's start, at `speed`
    /// times the recorded pace: for the threads there from the start.
    fn due(&self, start_ns: u64, speed: f64) -> u64 {
        self.start_ns + (start_ns as f64 / speed) as u64
    }

    /// When `call` is due after `previous` (the call before it in program order) completed
    /// here at `previous_end` (when it would have, had its thread been on time): the recorded
    /// think time between them, at `speed` times the recorded pace. A slower filesystem delays
    /// what follows, as it would the application. The time the recorded thread was blocked on
    /// I/O in between (its page faults of files mapped from inside the root) is not think
    /// time: the replay reads the mapped pages itself, on this filesystem; nor is the time the
    /// recorder's probes took (`Call::blocked_ns` holds both).
    fn think_due(previous_end: u64, previous: &Call, call: &Call, speed: f64) -> u64 {
        let think = call
            .start_ns
            .saturating_sub(previous.start_ns + previous.dur_ns)
            .saturating_sub(call.blocked_ns);
        previous_end + (think as f64 / speed) as u64
    }

    /// When `call` is due after the recorded wakeup `wake` ended its thread's wait, the
    /// waker's call before it having completed here (on time: [`Shared::ends`]): the waker's
    /// think time from that call to the wakeup, then the time from the wakeup to `call` (less
    /// the time then blocked in faults), at `speed` times the recorded pace; never before
    /// `previous_end`, when the thread's own previous call completed (on time).
    fn woken_due(&self, previous_end: u64, wake: &Wake, call: &Call, speed: f64) -> u64 {
        let ci = self.plan.threads[wake.dep.thread as usize].calls[wake.dep.seq as usize] as usize;
        let waker = &self.plan.calls[ci];
        let waker_end = self.end_of(wake.dep);
        let waker_think = wake.at_ns.saturating_sub(waker.start_ns + waker.dur_ns);
        let woken = waker_end + (waker_think as f64 / speed) as u64;
        let after = call
            .start_ns
            .saturating_sub(wake.at_ns)
            .saturating_sub(call.blocked_ns);
        woken.max(previous_end) + (after as f64 / speed) as u64
    }

    /// When `dep` would have completed here had its thread been on time (see [`Shared::ends`]);
    /// with recorded timing only.
    fn end_of(&self, dep: Dep) -> u64 {
        let ci = self.plan.threads[dep.thread as usize].calls[dep.seq as usize] as usize;
        self.ends[ci].load(Ordering::Acquire)
    }

    /// When a thread's first call is due: after the call it follows (its process's fork, or
    /// the call of its process before it was made) by the recorded think time, or, for a
    /// thread there from the start, at its recorded start.
    fn first_due(&self, thread: &Thread, speed: f64) -> u64 {
        let first = &self.plan.calls[thread.calls[0] as usize];
        match thread.after {
            Some(d) => {
                let ci = self.plan.threads[d.thread as usize].calls[d.seq as usize] as usize;
                Self::think_due(self.end_of(d), &self.plan.calls[ci], first, speed)
            }
            None => self.due(first.start_ns, speed),
        }
    }

    /// Waits until `dep` has completed; false when a stop is requested first.
    fn wait(&self, dep: Dep) -> bool {
        let p = &self.progress[dep.thread as usize];
        let want = dep.seq + 1;
        if p.done.load(Ordering::Acquire) >= want {
            return true;
        }
        for _ in 0..SPINS {
            std::hint::spin_loop();
            if p.done.load(Ordering::Acquire) >= want {
                return true;
            }
        }
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: PARK_NS,
        };
        loop {
            if self.stopped() {
                return false;
            }
            // The epoch before the wish: a wake that clears the wish after this changes the
            // epoch, and the park below then returns at once.
            let epoch = p.epoch.load(Ordering::SeqCst);
            p.wanted.fetch_min(want, Ordering::SeqCst);
            // (SeqCst both sides: the completer sees the wish, or this sees its completion.)
            if p.done.load(Ordering::SeqCst) >= want {
                return true;
            }
            futex(&p.epoch, libc::FUTEX_WAIT, epoch, Some(&timeout));
            if p.done.load(Ordering::Acquire) >= want {
                return true;
            }
        }
    }

    /// Thread `t` has completed one more call.
    fn complete(&self, t: u32) {
        let p = &self.progress[t as usize];
        let done = p.done.fetch_add(1, Ordering::SeqCst) + 1;
        if p.wanted.load(Ordering::SeqCst) <= done {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            // Every parked waiter wakes; those still short of their count wish again.
            p.wanted.store(u32::MAX, Ordering::SeqCst);
            p.epoch.fetch_add(1, Ordering::SeqCst);
            futex(&p.epoch, libc::FUTEX_WAKE, i32::MAX as u32, None);
        }
    }

    fn stop_all(&self) {
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Recorded thread `t`'s calls, in order, counted in `lane`.
    fn worker(&self, t: u32, mut lane: Lane) {
        let plan = self.plan;
        let thread = &plan.threads[t as usize];
        let clock = self.clock;
        // With recorded timing, the call before this one in program order and when it
        // completed here.
        let mut previous: Option<(&Call, u64)> = None;
        // With recorded timing, how late the previous call was issued here: after the time it
        // was due had every sleep ended on time and every wait for another thread (its waker,
        // the calls the dependency rule orders it after) returned the moment that thread's
        // call would have ended on time (`ends`). Taken back from the think times that follow:
        // thousands of short sleeps, wakeups and hand-offs would otherwise add their delays up,
        // and a thread that waited for a late one would keep the other's lateness for good
        // (ARTC keeps the think times, not their errors).
        let mut late = 0u64;
        let timed = self.options.speed.is_some();
        if timed {
            // Sleeps end as close to their deadline as the kernel can (50 µs of slack by
            // default); this thread's only.
            // SAFETY: prctl with an integer argument has no memory effects.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong) };
        }
        'calls: for &ci in &thread.calls {
            let call = &plan.calls[ci as usize];
            if self.stopped() {
                break;
            }
            // With recorded timing, when the call is due had nothing here run late.
            let mut on_time = 0;
            if let Some(speed) = self.options.speed {
                // When it is due, and the earliest it may go: never before the call it
                // follows in its thread completed.
                let (due, earliest) = match previous {
                    Some((p, end)) => {
                        let previous_on_time = end.saturating_sub(late);
                        match call.wake {
                            // Woken by another thread after the previous call: the gap waited
                            // for it, so the call follows the waker here, not the recorded gap.
                            Some(wake) if wake.at_ns >= p.start_ns + p.dur_ns => {
                                if !self.wait(wake.dep) {
                                    break;
                                }
                                (self.woken_due(previous_on_time, &wake, call, speed), end)
                            }
                            _ => (Self::think_due(previous_on_time, p, call, speed), end),
                        }
                    }
                    None => (self.first_due(thread, speed), 0),
                };
                let target = due.max(earliest);
                if target > now_ns() && !self.sleep_until(target) {
                    break;
                }
                on_time = due;
            }
            if plan.dependencies {
                let (a, b) = call.deps;
                for &d in &plan.deps[a as usize..b as usize] {
                    if !self.wait(d) {
                        break 'calls;
                    }
                    // Not before the calls it waits for would have ended on time: the order the
                    // rule imposes, and what this filesystem made those calls take, are the
                    // call's to wait; the rest (their threads' delays) is lateness.
                    if timed {
                        on_time = on_time.max(self.end_of(d));
                    }
                }
            }
            if timed {
                late = now_ns().saturating_sub(on_time);
            }
            let before = clock.ticks();
            let done = sys::issue(call, plan, &self.table, &mut lane.buffers);
            let ns = clock.ns(clock.ticks().saturating_sub(before));
            // (Read before the counting below: the harness's time is not the call's.)
            let end = if timed { now_ns() } else { 0 };
            let k = call.kind as usize;
            lane.calls[k] += 1;
            lane.bytes[k] += done.bytes;
            if let Some(h) = lane.histograms[k].as_mut() {
                h.record(ns);
            }
            if sys::diverged(call, done.ret) {
                lane.diverged[k] += 1;
                if lane.first_diverged.is_none_or(|(first, _)| ci < first) {
                    lane.first_diverged = Some((ci, done.ret));
                }
                if done.ret == -(libc::EXDEV as i64) {
                    lane.refused += 1;
                }
            }
            if let Some(probe) = &lane.probe {
                probe.op(done.bytes, ns);
            }
            if timed {
                self.ends[ci as usize].store(end.saturating_sub(late), Ordering::Release);
                previous = Some((call, end));
            }
            self.complete(t);
        }
        // The process's last thread closes what it left open (as its exit would).
        if self.live[thread.proc as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
            for &slot in &plan.procs[thread.proc as usize].slots {
                self.table.close_slot(slot);
            }
        }
        self.pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(lane);
    }
}
