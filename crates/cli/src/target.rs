//! Target flags -> `TargetSpec`, and the one place that signals are wired to stop requests.

use crate::cli::TargetArgs;
use crate::exit::Failure;
use crate::out::note;
use anyhow::anyhow;
use fsbench_testbed::{CachePolicy, DeviceSpec, TargetError, TargetSpec};
use fsbench_workload::StopFlag;
use std::path::Path;

/// The spec the flags ask for, or None when no --fs was given.
pub fn spec_from(args: &TargetArgs) -> Result<Option<TargetSpec>, Failure> {
    let Some(fs) = &args.fs else { return Ok(None) };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Failure::usage(anyhow!(
            "--fs {fs}: preparing a filesystem needs root (loop devices, mkfs, mount); run as root, or measure an existing directory with --dir"
        )));
    }
    let cache = args
        .cache
        .parse::<CachePolicy>()
        .map_err(|e| Failure::usage(anyhow!("--cache: {e}")))?;
    let device = DeviceSpec::parse(&args.device, args.destroy_data_on.as_deref())?;
    let spec = TargetSpec::builder(fs, &args.work.work_dir)
        .mkfs_options(args.mkfs_options.as_deref().unwrap_or_default())
        .mount_options(args.mount_options.as_deref())
        .scheduler(args.scheduler.as_deref())
        .cache(cache)
        .device(device)
        .loop_direct_io(!args.loop_buffered)
        .fsck(!args.no_fsck)
        .build()
        // The builder speaks of filesystems; the user typed a flag.
        .map_err(|e| match e {
            TargetError::Invalid(m) => TargetError::Invalid(format!("--fs: {m}")),
            other => other,
        })?;
    Ok(Some(spec))
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
