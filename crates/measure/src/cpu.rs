//! User and system CPU time of the calling thread, from getrusage(2).

use serde::Serialize;

/// CPU time consumed, split into user and system (kernel) time, in nanoseconds.
///
/// Only the calling thread is counted: kernel threads (writeback, loop workers, journal threads)
/// and FUSE daemons do work on its behalf that this does not see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
}

impl CpuTimes {
    /// CPU time of the calling thread so far (RUSAGE_THREAD).
    pub fn thread() -> CpuTimes {
        rusage(libc::RUSAGE_THREAD)
    }

    /// CPU time of the whole process so far (RUSAGE_SELF).
    pub fn process() -> CpuTimes {
        rusage(libc::RUSAGE_SELF)
    }

    /// The CPU time spent between `earlier` and `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
        }
    }

    /// Adds another interval's CPU time to this one.
    pub fn add(&mut self, other: CpuTimes) {
        self.user_ns += other.user_ns;
        self.sys_ns += other.sys_ns;
    }
}

fn rusage(who: libc::c_int) -> CpuTimes {
    // SAFETY: an all-zero rusage is valid, and getrusage only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage; `who` is a constant getrusage accepts.
    unsafe { libc::getrusage(who, &mut usage) };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
    CpuTimes {
        user_ns: ns(usage.ru_utime),
        sys_ns: ns(usage.ru_stime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_consumes_user_time() {
        // Spins until the kernel's own count of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
        // has gone 30 ms on, however little of a CPU the thread gets on a loaded host.
        let cpu_ns = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid timespec to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        let before = CpuTimes::thread();
        let (start, from) = (std::time::Instant::now(), cpu_ns());
        let mut x = 0u64;
        while cpu_ns() - from < 30_000_000 && start.elapsed().as_secs() < 10 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let spent = CpuTimes::thread().since(before);
        assert!(spent.user_ns + spent.sys_ns >= 20_000_000, "{spent:?}");
    }
}
