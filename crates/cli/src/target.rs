//! Target flags -> `TargetSpec`, and the one place that signals are wired to stop requests.

use crate::cli::TargetArgs;
use crate::exit::Failure;
use anyhow::anyhow;
use fsbench_testbed::{CachePolicy, DeviceSpec, TargetError, TargetSpec};
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

/// A stop flag set by Ctrl-C and SIGTERM. The handler only sets the flag: the main path stops
/// between steps and cleans up itself (never unmount from a signal handler).
pub fn stop_on_signals() -> StopFlag {
    let stop = StopFlag::new();
    let handler_stop = stop.clone();
    let _ = ctrlc::set_handler(move || handler_stop.request());
    stop
}
