//! `fsbench case-worker` (hidden): the child process of a campaign. Runs one job in a directory
//! and writes its metrics to a file; exit 0 ok, 1 failed (the reason on stderr), 130 stopped.

use crate::cli::CaseWorkerArgs;
use crate::exit::{self, Failure};
use crate::target::stop_on_signals;
use anyhow::{anyhow, Context};
use fsbench_model::Outcome;
use fsbench_plan::workload::{execute, Job, Unfinished};

pub fn run(args: CaseWorkerArgs) -> Result<i32, Failure> {
    let stop = stop_on_signals();
    // If the campaign dies (even by SIGKILL), stop too, so nothing keeps its target busy.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no preconditions.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    // SAFETY: as above.
    if unsafe { libc::getppid() } == 1 {
        return Ok(exit::INTERRUPTED);
    }
    let text = std::fs::read_to_string(&args.job)
        .with_context(|| format!("cannot read {}", args.job.display()))?;
    let job: Job = serde_json::from_str(&text).context("the job file is not valid")?;
    let mut status = |line: &str| {
        if let Some(path) = &args.status {
            // Write then rename: the parent never reads half a line.
            let tmp = path.with_extension("tmp");
            if std::fs::write(&tmp, line).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    };
    match execute(&job, &args.dir, &stop, &mut status) {
        Ok(output) => {
            let text = serde_json::to_string(&output).context("cannot encode the results")?;
            std::fs::write(&args.out, text)
                .with_context(|| format!("cannot write {}", args.out.display()))?;
            Ok(exit::OK)
        }
        Err(Unfinished {
            outcome: Outcome::Interrupted,
            ..
        }) => Ok(Outcome::Interrupted.exit_code()),
        Err(Unfinished { reason, .. }) => Err(Failure::failed(anyhow!(reason))),
    }
}
