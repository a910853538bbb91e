//! Target flags -> `TargetSpec`, and the one place that signals are wired to stop requests.

use crate::cli::TargetArgs;
use crate::exit::Failure;
use anyhow::anyhow;
use fsbench_testbed::target::split_options;
use fsbench_testbed::{CachePolicy, DeviceSpec, TargetSpec};
use fsbench_workload::StopFlag;

/// The spec the flags ask for, or None when no --fs was given.
pub fn spec_from(args: &TargetArgs) -> Result<Option<TargetSpec>, Failure> {
    let Some(fs) = &args.fs else { return Ok(None) };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Failure::usage(anyhow!(
            "--fs {fs}: preparing a filesystem needs root (loop devices, mkfs, mount); run as root, or measure an existing directory with --dir"
        )));
    }
    let mut spec = TargetSpec::new(fs, &args.work.work_dir)?;
    spec.mkfs_options = args
        .mkfs_options
        .as_deref()
        .map(split_options)
        .unwrap_or_default();
    spec.mount_options = args.mount_options.clone().filter(|o| !o.is_empty());
    spec.scheduler = args.scheduler.clone();
    spec.cache = args
        .cache
        .parse::<CachePolicy>()
        .map_err(|e| Failure::usage(anyhow!("--cache: {e}")))?;
    spec.device = DeviceSpec::parse(&args.device, args.destroy_data_on.as_deref())?;
    spec.loop_direct_io = !args.loop_buffered;
    spec.fsck = !args.no_fsck;
    Ok(Some(spec))
}

/// A stop flag set by Ctrl-C and SIGTERM. The handler only sets the flag: the main path stops
/// between steps and cleans up itself (never unmount from a signal handler).
pub fn stop_on_signals() -> StopFlag {
    let stop = StopFlag::new();
    let handler_stop = stop.clone();
    let _ = ctrlc::set_handler(move || handler_stop.request());
    stop
}
