//! `fsbench cleanup`: undo what killed runs left behind, from their state files, and remove the
//! job files of campaigns that are gone.

use crate::cli::CleanupArgs;
use crate::exit::{self, Failure};
use crate::out::say;
use anyhow::anyhow;
use fsbench_testbed::ledger;
use fsbench_testbed::target::state_dir;
use fsbench_testbed::RealSystem;

pub fn run(args: CleanupArgs) -> Result<i32, Failure> {
    let dir = state_dir(&args.work.work_dir);
    let mut report = ledger::cleanup(&RealSystem, &dir);
    report
        .done
        .extend(fsbench_plan::runner::remove_stale_jobs(&args.work.work_dir));
    for note in &report.done {
        say!("{note}")?;
    }
    for pid in &report.live {
        say!("fsbench {pid} is still running: its resources were left alone")?;
    }
    if report.done.is_empty() && report.failed.is_empty() {
        say!("nothing to clean up in {}", dir.display())?;
    }
    if report.failed.is_empty() {
        Ok(exit::OK)
    } else {
        Err(Failure::failed(anyhow!(
            "could not undo everything: {}; run `fsbench cleanup` again once the cause is fixed",
            report.failed.join("; ")
        )))
    }
}
