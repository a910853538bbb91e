//! The scheduling policy the io workload's threads run under, and with them the io-wq workers
//! that io_uring starts for them: SCHED_BATCH by default, so that a thread woken by a completion
//! does not preempt the kernel thread doing the next operation on the same CPU.
//!
//! Why: an operation io_uring cannot do without blocking (a buffered write on a filesystem
//! without asynchronous buffered writes, tmpfs among them; a read of pages not cached) goes to
//! an io-wq worker, a kernel thread of the process. Under SCHED_OTHER, each completion wakes
//! the submitting thread, which preempts that worker when both share a CPU: a context switch
//! there and back per operation, which is the harness's cost, not the filesystem's. Under SCHED_BATCH a woken
//! thread waits for the running one to sleep or use up its slice (it is not favoured on
//! wake-up); nothing else changes (the same nice value, the same share of the CPU). `chrt -b 0
//! fio …` runs fio the same way; `--cpu-sched normal` runs as fio does by default.

use std::fmt;
use std::str::FromStr;

/// The CPU scheduling policy of a workload thread (`cpu_sched`; not the device's I/O
/// scheduler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sched {
    /// SCHED_BATCH: not favoured on wake-up; completions are reaped when the CPU is free.
    Batch,
    /// SCHED_OTHER, as the process started (fio's default).
    Normal,
}

impl Sched {
    pub const fn name(self) -> &'static str {
        match self {
            Sched::Batch => "batch",
            Sched::Normal => "normal",
        }
    }

    const fn policy(self) -> libc::c_int {
        match self {
            Sched::Batch => libc::SCHED_BATCH,
            Sched::Normal => libc::SCHED_OTHER,
        }
    }

    /// Puts the calling thread under this policy, and says what it runs under afterwards (as
    /// the kernel reports it): a thread under a real-time or idle policy (a user's `chrt`) is
    /// left as it is; a refusal leaves the thread under the policy it had.
    pub fn apply(self) -> &'static str {
        // SAFETY: sched_getscheduler(0) asks about the calling thread; no memory is passed.
        let current = unsafe { libc::sched_getscheduler(0) };
        if current == libc::SCHED_OTHER || current == libc::SCHED_BATCH {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: pid 0 is the calling thread; `param` lives across the call. The legacy
            // call keeps the thread's nice value.
            unsafe { libc::sched_setscheduler(0, self.policy(), &param) };
        }
        // SAFETY: as above.
        policy_name(unsafe { libc::sched_getscheduler(0) })
    }
}

/// Policies of linux/sched.h the libc crate does not name.
const SCHED_DEADLINE: libc::c_int = 6;
const SCHED_EXT: libc::c_int = 7;

/// The name a policy number has in the results (`chrt`'s names for the others; `unknown` when
/// the kernel would not say).
fn policy_name(policy: libc::c_int) -> &'static str {
    if policy < 0 {
        return "unknown";
    }
    match policy & !libc::SCHED_RESET_ON_FORK {
        libc::SCHED_OTHER => "normal",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        SCHED_DEADLINE => "deadline",
        SCHED_EXT => "ext",
        _ => "unknown",
    }
}

impl fmt::Display for Sched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Sched {
    type Err = String;
    fn from_str(text: &str) -> Result<Sched, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "batch" | "sched_batch" => Ok(Sched::Batch),
            "normal" | "sched_other" => Ok(Sched::Normal),
            other => Err(format!(
                "'{other}' is not a CPU scheduling policy: use batch (the default: a thread woken by a completion does not preempt the kernel's worker) or normal (as fio runs); the device's I/O scheduler is --scheduler"
            )),
        }
    }
}

fsbench_model::text_serde!(Sched);

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread asking for each policy runs under it, as the kernel reports; normal undoes
    /// batch (the same thread can run a later phase either way).
    #[test]
    fn a_thread_runs_under_the_policy_it_asks_for() {
        std::thread::spawn(|| {
            // SAFETY: asks about the calling thread.
            let before = unsafe { libc::sched_getscheduler(0) };
            if before != libc::SCHED_OTHER {
                // The test itself runs under a user's chrt: nothing to compare against.
                return;
            }
            assert_eq!(Sched::Batch.apply(), "batch");
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_BATCH);
            assert_eq!(Sched::Normal.apply(), "normal");
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn policies_parse_by_name_and_refuse_others_saying_what_to_use() {
        assert_eq!("batch".parse::<Sched>(), Ok(Sched::Batch));
        assert_eq!(" Normal ".parse::<Sched>(), Ok(Sched::Normal));
        let err = "fifo".parse::<Sched>().unwrap_err();
        assert!(err.contains("use batch") && err.contains("normal"), "{err}");
        assert_eq!(policy_name(-1), "unknown");
        assert_eq!(
            policy_name(libc::SCHED_BATCH | libc::SCHED_RESET_ON_FORK),
            "batch"
        );
    }
}
