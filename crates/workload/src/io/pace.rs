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

    /// 200 operations 1 ms apart, with a stall of 20 ms after the 50th: the operations after
    /// the stall catch up and start at their times again (the median of their lateness is
    /// under 5 ms; a schedule relative to the previous operation would have every one of them
    /// 20 ms late or more), and none starts before its time.
    #[test]
    fn paced_operations_keep_their_absolute_schedule() {
        tight_timer_slack();
        let clock = Clock::get();
        let start = clock.ticks();
        let pace = Pace::new(start, 1e6, clock);
        let mut late = Vec::with_capacity(200);
        for i in 0..200u64 {
            let due = pace.due(i);
            let began = pace.wait_until(due);
            assert!(began >= due, "operation {i} started early");
            late.push(clock.ns(began - start).saturating_sub(i * 1_000_000));
            if i == 50 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let mut after = late[52..].to_vec();
        after.sort_unstable();
        let median = after[after.len() / 2];
        assert!(median < 5_000_000, "lateness after the stall: {after:?}");
    }
}
