//! `fsbench case-worker` (hidden): the child process of a campaign. Reads one job (a JSON line)
//! on standard input, runs it in a directory and says what happens on standard output, one
//! JSON event per line; what the workload asks of its harness goes to the campaign the same
//! way and its answer comes back on standard input (`fsbench_plan::protocol`). The last event
//! says how it ended. Exit 0 ok, 1 failed (the reason also on stderr), 130 stopped. It never
//! calls MPI: its campaign meets the other ranks.

use crate::cli::CaseWorkerArgs;
use crate::exit::{self, Failure};
use crate::frontend::stop_on_signals;
use anyhow::anyhow;
use fsbench_model::Outcome;
use fsbench_plan::protocol::{child_harness, read_job, ChildEnd, ChildSink, Event};
use fsbench_plan::workload::reason;

pub fn run(args: CaseWorkerArgs) -> Result<i32, Failure> {
    let stop = stop_on_signals();
    // If the campaign dies (even by SIGKILL), stop too, so nothing keeps its target busy.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no preconditions.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    // SAFETY: as above.
    if unsafe { libc::getppid() } == 1 {
        return Ok(exit::INTERRUPTED);
    }
    let mut input = std::io::stdin().lock();
    let job = read_job(&mut input).map_err(|e| Failure::failed(anyhow!(e)))?;
    let end = std::cell::RefCell::new(ChildEnd::new(std::io::stdout(), input));
    let ended = job.workload.run(
        &job.context,
        &args.dir,
        &stop,
        &mut ChildSink(&end),
        &mut child_harness(&end),
    );
    let why = (ended.outcome != Outcome::Ok && ended.outcome != Outcome::Interrupted)
        .then(|| reason(&job, &ended));
    end.borrow_mut().send(&Event::End {
        outcome: ended.outcome,
        reason: why.clone(),
        seed: ended.seed,
        kept: ended.kept,
    });
    match ended.outcome {
        Outcome::Ok => Ok(exit::OK),
        Outcome::Interrupted => Ok(exit::INTERRUPTED),
        _ => Err(Failure::failed(anyhow!(why.unwrap_or_default()))),
    }
}
