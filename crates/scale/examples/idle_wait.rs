//! Proof that a rank waiting for another takes no CPU: under `mpirun -np 2`, rank 1 sleeps
//! 500 ms before each meeting while rank 0 waits, once with the blocking `all_ok` and once
//! with `all_ok_idle`; rank 0 prints the CPU time each wait took and fails when the idle one
//! took more than 100 ms, a fifth of the wait (scripts/test-mpi.sh runs it). Needs the `mpi` feature.

use fsbench_measure::CpuTimes;
use fsbench_scale::Collective;
use std::time::{Duration, Instant};

const LATE: Duration = Duration::from_millis(500);

fn main() {
    let job = match fsbench_scale::launcher() {
        Ok(Some(job)) if job.size() == 2 => job,
        Ok(_) => fail("run it as `mpirun -np 2` with the mpi feature"),
        Err(e) => fail(&e),
    };
    let blocking = wait(job.as_ref(), |job| job.all_ok(true));
    let idle = wait(job.as_ref(), |job| job.all_ok_idle(true));
    let together = meetings(job.as_ref());
    if job.rank() == 0 {
        println!(
            "rank 0 waiting {} ms for rank 1: {} ms CPU blocking (all_ok), {} ms CPU polled (all_ok_idle); \
             ranks arriving together meet in {} us (all_ok_idle, median of {MEETINGS})",
            LATE.as_millis(),
            blocking.as_millis(),
            idle.as_millis(),
            together.as_micros()
        );
        if idle > Duration::from_millis(100) {
            fail("all_ok_idle took CPU while it waited");
        }
    }
}

/// The CPU time rank 0 spends in `meet` while rank 1 arrives `LATE`.
fn wait(job: &dyn Collective, meet: impl Fn(&dyn Collective) -> bool) -> Duration {
    assert!(job.all_ok(true), "every rank is here");
    if job.rank() == 1 {
        std::thread::sleep(LATE);
    }
    let (cpu, start) = (CpuTimes::process(), Instant::now());
    assert!(meet(job));
    let used = CpuTimes::process().since(cpu);
    if job.rank() == 0 {
        assert!(
            start.elapsed() >= LATE - Duration::from_millis(50),
            "it waited"
        );
    }
    Duration::from_nanos(used.user_ns + used.sys_ns)
}

const MEETINGS: usize = 200;

/// The median time of a polled meeting when both ranks arrive at once (printed, not checked:
/// bench/mpi-scaling.sh measures what a phase costs).
fn meetings(job: &dyn Collective) -> Duration {
    let mut times: Vec<Duration> = (0..MEETINGS)
        .map(|_| {
            job.all_ok(true);
            let start = Instant::now();
            job.all_ok_idle(true);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[MEETINGS / 2]
}

fn fail(why: &str) -> ! {
    eprintln!("idle_wait: {why}");
    std::process::exit(1)
}
