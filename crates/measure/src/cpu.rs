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
        let before = CpuTimes::thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed().as_millis() < 30 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let spent = CpuTimes::thread().since(before);
        assert!(spent.user_ns + spent.sys_ns >= 10_000_000, "{spent:?}");
    }
}
