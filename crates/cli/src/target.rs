//! The guard of this process's targets, the note on sample cgroups, the check of a directory
//! a workload runs in, and the one place that signals are wired to stop requests.

use crate::exit::Failure;
use crate::out::note;
use anyhow::anyhow;
use fsbench_testbed::TargetError;
use fsbench_workload::StopFlag;
use std::path::Path;

/// As root, refuses a directory to run a workload in (`--dir`, a plan's `dir`; `named` says
/// which) that another user could change: theirs, on the way through theirs, or writable by
/// others without the sticky bit (measure::trust). Root would make and remove files there
/// that such a user could swap for links (docs/failures.md, "Security").
pub fn check_run_dir(dir: &Path, named: &str) -> Result<(), Failure> {
    if !fsbench_measure::trust::as_root() {
        return Ok(());
    }
    fsbench_measure::trust::check_shared_dir(dir)
        .map_err(|e| Failure::usage(anyhow!("{named} {}: {e}", dir.display())))
}

/// Starts the guard of this process's targets, whose state files go to `state_dir` (`fsbench guard`): should this
/// process be killed (kill -9, mpirun ending a job, the OOM killer), it undoes the mounts,
/// loop devices and images the ledger lists. Keep the value until every target is torn down.
/// A guard that cannot start costs only that: a warning, and `fsbench cleanup` after a kill.
pub fn guard(state_dir: &Path) -> Option<fsbench_testbed::guard::Guard> {
    // The guard works in `/`: a relative --work-dir is this process's, made absolute.
    let state_dir = std::path::absolute(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
    let started = std::env::current_exe().and_then(|exe| {
        let mut command = std::process::Command::new(exe);
        command
            .arg("guard")
            .arg("--state-dir")
            .arg(&state_dir)
            .arg("--pid")
            .arg(std::process::id().to_string());
        fsbench_testbed::guard::Guard::start(command)
    });
    match started {
        Ok(guard) => Some(guard),
        Err(e) => {
            note!("warning: cannot start the guard process ({e}); if fsbench is killed, run `fsbench cleanup`");
            None
        }
    }
}

/// The sample cgroup of a run whose workloads start programs (`runs_programs`), or None. When
/// none can be made here (not root, no cgroup filesystem), says so once: the programs are then
/// ended through their process group and as orphans fsbench adopts, which a kill -9 of fsbench
/// does not do.
pub fn programs_cgroup(runs_programs: bool) -> Option<fsbench_testbed::cgroup::Cgroup> {
    if !runs_programs {
        return None;
    }
    match fsbench_testbed::cgroup::Cgroup::new(None) {
        Ok(cgroup) => Some(cgroup),
        Err(e) => {
            let reason = match e {
                TargetError::Unsupported(reason) => reason,
                other => other.to_string(),
            };
            note!(
                "note: no cgroup for the processes a sample starts ({reason}): they are ended \
                 through their process group and as orphans fsbench adopts, on Ctrl-C and \
                 timeouts, but not if fsbench itself is killed (kill -9)"
            );
            None
        }
    }
}

/// A stop flag set by Ctrl-C and SIGTERM. The handler only sets the flag: the main path stops
/// between steps and cleans up itself (never unmount from a signal handler).
pub fn stop_on_signals() -> StopFlag {
    let stop = StopFlag::new();
    let handler_stop = stop.clone();
    let _ = ctrlc::set_handler(move || handler_stop.request());
    stop
}
