//! Evenly paced operations: operation i of a thread is due at `start + i x interval`, an
//! absolute schedule, so lateness never accumulates (a late operation makes the next ones
//! due at once, not later). Waiting sleeps in clock_nanosleep(TIMER_ABSTIME) until shortly
//! before the due time and spins only the last [`SPIN_NS`].

use fsbench_measure::clock::{now_ns, Clock};

/// The last stretch before a due time that is spun rather than slept: a thread woken from a
/// sleep runs some tens of microseconds late on a busy machine, a spin is on time.
pub const SPIN_NS: u64 = 20_000;

/// The schedule of one thread's operations, in the ticks of the run's [`Clock`].
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    start: u64,
    interval_ticks: f64,
    clock: Clock,
}

impl Pace {
    /// Operations `interval_ns` apart from `start` (ticks of `clock`).
    pub fn new(start: u64, interval_ns: f64, clock: Clock) -> Pace {
        Pace {
            start,
            interval_ticks: interval_ns * clock.ticks_per_ns(),
            clock,
        }
    }

    /// When operation `i` is due, in ticks (saturating: a time beyond the clock's range is
    /// never reached, not wrapped into the past).
    #[inline(always)]
    pub fn due(&self, i: u64) -> u64 {
        self.start
            .saturating_add((i as f64 * self.interval_ticks) as u64)
    }

    /// Waits until `due` (ticks); returns the clock's reading at the end (the operation's
    /// start). Sleeps while more than [`SPIN_NS`] are left.
    pub fn wait_until(&self, due: u64) -> u64 {
        let now = self.clock.ticks();
        if now >= due {
            return now;
        }
        let left = self.clock.ns(due - now);
        if left > SPIN_NS {
            sleep_until_ns(now_ns() + left - SPIN_NS);
        }
        loop {
            let now = self.clock.ticks();
            if now >= due {
                return now;
            }
            std::hint::spin_loop();
        }
    }
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns` (an absolute time: an interrupted sleep
/// resumes towards the same instant).
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// Lets this thread's sleeps end when asked: the kernel's default timer slack (50 µs) would
/// make every paced sleep that much late.
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects this thread only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 200 operations 1 ms apart, with a stall of 20 ms after the 50th: the last one still
    /// starts 199 ms after the first (a schedule relative to the previous operation would have
    /// drifted by the stall, to 219 ms or more), and none starts before its time.
    #[test]
    fn paced_operations_keep_their_absolute_schedule() {
        tight_timer_slack();
        let clock = Clock::get();
        let start = clock.ticks();
        let pace = Pace::new(start, 1e6, clock);
        let mut last = start;
        for i in 0..200 {
            let due = pace.due(i);
            last = pace.wait_until(due);
            assert!(last >= due, "operation {i} started early");
            if i == 50 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let total = clock.ns(last - start);
        assert!(
            (199_000_000..215_000_000).contains(&total),
            "the 200th operation started {total} ns after the first"
        );
    }
}
