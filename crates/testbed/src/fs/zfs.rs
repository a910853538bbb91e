//! ZFS through zfs-fuse: a pool on the block device, created and mounted by `zpool create`
//! (the user-space daemon serves it over FUSE). "mkfs options" are `zpool create` options
//! (`-o ashift=12`); "mount options" are dataset properties (`atime=off,compression=lz4`),
//! given as `-O key=value`. The check is a scrub followed by `zpool status`, before the pool is
//! destroyed. zfs-fuse runs one daemon per host, so fsbench processes take turns through a host
//! lock, and the daemon is started when none answers.
//!
//! Over several devices (`array = "raid0:N"`) the pool is made of one vdev per member (a
//! stripe), one mirror of them all (`raid1`) or mirrored pairs (`raid10`); `zpool status` lists
//! them. Members are loop devices, as a single device is (`zpool create` takes image files
//! too, but then zfs-fuse does its own I/O on them: no loop device, no scheduler).
//!
//! The ARC cache lives in the daemon's memory, so `drop_caches` does not empty it; a cold cache
//! needs `--cache remount` (export and import).

use super::{Build, Capabilities, CheckPoint, Filesystem, Tool};
use crate::array::{ArraySpec, Layer, Level};
use crate::error::missing_tool;
use crate::error::TargetError;
use crate::ledger::Resource;
use crate::system::tail;
use crate::system::{Cmd, CmdOutput, System};
use fsbench_model::target::{FsckInfo, MountReadBack};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Zfs;

impl Filesystem for Zfs {
    fn name(&self) -> &'static str {
        "zfs"
    }
    /// zfs-fuse needs FUSE in the kernel, not zfs.
    fn kernel_name(&self) -> &'static str {
        "fuse"
    }
    fn tools(&self) -> Vec<Tool> {
        ["zfs-fuse", "zpool", "zfs"]
            .map(|program| Tool {
                program,
                package: "zfs-fuse",
            })
            .to_vec()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            requires_paths: &["/dev/fuse"],
            mount_options_in_mountinfo: false,
            undroppable_cache: Some("zfs-fuse caches in its daemon (ARC), which drop_caches does not empty; use --cache remount"),
            prepare_estimate_ns: 4_000_000_000,
            one_per_host: true,
            no_image_copy: Some(
                "a copy of a pool's image holds the same pool, which zfs-fuse would have to \
                 import under another name: not done yet; age ext4, xfs or btrfs",
            ),
            ..Capabilities::BLOCK_DEVICE
        }
    }
    /// Takes the host's zfs-fuse turn, starts the daemon if none answers, then `zpool create`
    /// makes and mounts the pool at once; `zfs get` reads its properties back.
    fn create(&self, t: &mut dyn Build<'_>, stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
        t.hold_host_lock(
            Path::new(HOST_LOCK),
            TURN_WAIT,
            stop,
            "zfs-fuse runs one daemon per host, so zfs cases run one process at a time",
        )?;
        let sys = t.sys();
        if !sys.run(&ping()).is_ok_and(|o| o.success()) {
            start_our_daemon(t)?;
        }
        let pool = format!("fsbench-{}", t.tag().replace("zfs-", ""));
        let members = t.members();
        let vdevs = match t.array() {
            Some(array) if !array.by_md() => vdevs(array.level, &members),
            _ => vec![t
                .device()
                .expect("a pool is made on a device")
                .display()
                .to_string()],
        };
        let properties = properties(t.mount_options());
        let cmd = create_pool(&pool, t.mountpoint(), &vdevs, t.mkfs_options(), &properties);
        let out = sys.run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
        t.info_mut().mkfs = Some(out.step(&cmd));
        if !out.success() {
            let rejected = out.stderr.contains("property") || out.stderr.contains("invalid");
            if rejected && !properties.is_empty() {
                return Err(TargetError::Unsupported(format!(
                    "zfs-fuse rejected the properties '{}': {}",
                    properties.join(","),
                    out.last_line()
                )));
            }
            return Err(TargetError::command("zpool create", &cmd, &out, "check --mkfs-options (zpool create options) and --mount-options (dataset properties)"));
        }
        t.set_mount_source(&pool);
        t.record_filesystem(Resource::ZfsPool { pool: pool.clone() });
        if let Ok(out) = sys.run(&readback(&pool)) {
            let local: Vec<&str> = out
                .stdout
                .lines()
                .filter(|l| !l.ends_with("\tdefault") && !l.ends_with("\t-"))
                .collect();
            t.info_mut().readback = Some(local.join("\n"));
        }
        let mount_options = t.mount_options().map(str::to_string);
        t.info_mut().mount = Some(MountReadBack::new(
            cmd.to_string(),
            out.elapsed_ns,
            mount_options,
        ));
        Ok(())
    }
    /// `zpool export` and `zpool import`: the ARC forgets the pool.
    fn remount(&self, t: &mut dyn Build<'_>) -> Result<Option<&'static str>, TargetError> {
        let pool = t.mount_source();
        let dir = t
            .device()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| "/dev".into());
        for cmd in [export(&pool), import(&pool, &dir)] {
            let out = t.sys().run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
            if !out.success() {
                return Err(TargetError::command(
                    "remount",
                    &cmd,
                    &out,
                    "the pool may be busy",
                ));
            }
        }
        Ok(None)
    }
    /// A scrub reads the pool, so it runs while the pool still exists.
    fn check_point(&self) -> CheckPoint {
        CheckPoint::BeforeDestroy
    }
    fn check(&self, t: &dyn Build<'_>) -> Option<FsckInfo> {
        Some(scrub_check(t.sys(), &t.mount_source()))
    }
    /// A pool lays itself over its vdevs: checked here, made in `create`.
    fn array_options(&self, array: &ArraySpec) -> Result<Vec<String>, String> {
        if let Layer::Filesystem { metadata: Some(_) } = array.layer {
            return Err("metadata= is btrfs's -m profile; a zfs pool has none".to_string());
        }
        if array.level == Level::Raid10 && (array.devices < 4 || array.devices % 2 != 0) {
            return Err(format!(
                "raid10 in a zfs pool is mirrored pairs: it needs an even number of members, at least 4 (not {})",
                array.devices
            ));
        }
        Ok(Vec::new())
    }
    fn list_members(&self, t: &dyn Build<'_>) -> Option<Cmd> {
        Some(status(&t.mount_source()))
    }
    fn min_device_bytes(&self) -> u64 {
        // zpool accepts 64 MiB, but zfs-fuse 0.7 then spins at full CPU in `zpool create` and
        // never returns (seen at 64 and 96 MiB; 128 MiB works).
        128 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        // The pool name and mount point are filled in by `create_pool`; this form is what the
        // read-back shows when no pool exists yet.
        create_pool(
            "POOL",
            Path::new("MOUNTPOINT"),
            &[device.display().to_string()],
            user_options,
            &[],
        )
    }
    fn mount_type(&self) -> &'static str {
        "fuse.zfs"
    }
    fn fsck(&self, _device: &Path) -> Option<Cmd> {
        None
    }
    fn fsck_clean(&self, output: &CmdOutput) -> bool {
        output.success() && output.stdout.contains("is healthy")
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("dpkg-query").args(["-W", "-f", "zfs-fuse ${Version}\n", "zfs-fuse"])]
    }
    fn readback(&self, _device: &Path) -> Option<Cmd> {
        None
    }
}

/// The vdevs of a pool laid over `members`: each its own (a stripe), one mirror of all of
/// them, or mirrored pairs striped.
pub fn vdevs(level: Level, members: &[PathBuf]) -> Vec<String> {
    let names: Vec<String> = members.iter().map(|m| m.display().to_string()).collect();
    match level {
        Level::Raid0 => names,
        Level::Raid1 => std::iter::once("mirror".to_string()).chain(names).collect(),
        Level::Raid10 => names
            .chunks(2)
            .flat_map(|pair| std::iter::once("mirror".to_string()).chain(pair.iter().cloned()))
            .collect(),
    }
}

/// `zpool create -f -m MOUNTPOINT [pool options] [-O property=value ...] POOL VDEV...`.
pub fn create_pool(
    pool: &str,
    mountpoint: &Path,
    vdevs: &[String],
    pool_options: &[String],
    properties: &[String],
) -> Cmd {
    let mut cmd = zpool()
        .args(["create", "-f", "-m"])
        .arg(mountpoint.display().to_string())
        .args(pool_options.iter().cloned());
    for property in properties {
        cmd = cmd.arg("-O").arg(property.clone());
    }
    cmd.arg(pool).args(vdevs.iter().cloned())
}

/// How long a zpool or zfs command may take: zfs-fuse has been seen to spin for ever in
/// `zpool create`; a bounded wait turns that into a failed sample instead of a hung campaign.
pub const ZFS_COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// `zpool ARGS`, bounded by [`ZFS_COMMAND_TIMEOUT`].
fn zpool() -> Cmd {
    Cmd::new("zpool").timeout(ZFS_COMMAND_TIMEOUT)
}

/// Where fsbench processes take turns with zfs-fuse: it runs one daemon per host, and a second
/// fsbench would adopt the first one's daemon (which the first then stops under it).
pub const HOST_LOCK: &str = "/run/lock/fsbench-zfs-fuse.lock";

/// How long a zfs target waits for another fsbench process to finish with zfs-fuse.
const TURN_WAIT: Duration = Duration::from_secs(30 * 60);

/// Starts zfs-fuse with a pid file of ours, puts it on record and waits until it answers.
fn start_our_daemon(t: &mut dyn Build<'_>) -> Result<(), TargetError> {
    let sys = t.sys();
    let run_dir = t.work_dir().join("run");
    sys.create_trusted_dir(&run_dir)
        .map_err(|e| TargetError::io("create", &run_dir, e))?;
    let pidfile = run_dir.join(format!("zfs-fuse-{}.pid", std::process::id()));
    let start = start_daemon(&pidfile);
    let out = sys.run(&start).map_err(|e| missing_tool(&start, e))?;
    if !out.success() {
        return Err(TargetError::command(
            "starting zfs-fuse",
            &start,
            &out,
            "is another zfs-fuse running? see its log",
        ));
    }
    let pid = (0..50)
        .find_map(|_| {
            let pid = sys
                .read_file(&pidfile)
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok());
            if pid.is_none() {
                std::thread::sleep(Duration::from_millis(100));
            }
            pid
        })
        .ok_or_else(|| {
            TargetError::Unsupported("zfs-fuse started but wrote no pid file".to_string())
        })?;
    // Its start time and boot with it: only this very process is ever stopped.
    let process = fsbench_model::owner::of(pid);
    t.record(Resource::ZfsDaemon {
        pid,
        pidfile,
        process,
    });
    let ready = (0..50).any(|_| {
        let ok = sys.run(&ping()).is_ok_and(|o| o.success());
        if !ok {
            std::thread::sleep(Duration::from_millis(100));
        }
        ok
    });
    if !ready {
        return Err(TargetError::Unsupported(
            "zfs-fuse did not answer within 5 s".to_string(),
        ));
    }
    Ok(())
}

/// Scrubs a pool, waits for the scrub, and asks whether the pool is healthy.
pub(crate) fn scrub_check(sys: &dyn System, pool: &str) -> FsckInfo {
    let started = fsbench_measure::clock::now_ns();
    let mut last = CmdOutput::default();
    if sys.run(&scrub(pool)).is_ok_and(|o| o.success()) {
        for _ in 0..600 {
            match sys.run(&status(pool)) {
                Ok(out) if out.stdout.contains("scrub in progress") => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                _ => break,
            }
        }
        if let Ok(out) = sys.run(&healthy(pool)) {
            last = out;
        }
    }
    FsckInfo {
        command: format!("zpool scrub {pool}; zpool status -x {pool}"),
        elapsed_ns: fsbench_measure::clock::now_ns() - started,
        exit_status: last.status,
        clean: Zfs.fsck_clean(&last),
        output_tail: tail(&last.stdout, 6),
    }
}

/// Starts the daemon with a pid file of ours.
pub fn start_daemon(pidfile: &Path) -> Cmd {
    Cmd::new("zfs-fuse")
        .arg("--pidfile")
        .arg(pidfile.display().to_string())
}

/// Succeeds when a daemon answers.
pub fn ping() -> Cmd {
    zpool()
        .arg("list")
        .timeout(std::time::Duration::from_secs(20))
}

/// Succeeds when the pool exists.
pub fn listed(pool: &str) -> Cmd {
    zpool().args(["list", "-H", "-o", "name", pool])
}

pub fn destroy(pool: &str) -> Cmd {
    zpool().args(["destroy", "-f", pool])
}

pub fn export(pool: &str) -> Cmd {
    zpool().args(["export", pool])
}

pub fn import(pool: &str, device_dir: &Path) -> Cmd {
    zpool()
        .args(["import", "-d"])
        .arg(device_dir.display().to_string())
        .arg(pool)
}

/// `zpool import -d DIR -f POOL`: a pool that was not exported (a crash state of its device),
/// found among `device_dir`'s devices only.
pub fn import_forced(pool: &str, device_dir: &Path) -> Cmd {
    zpool()
        .args(["import", "-d"])
        .arg(device_dir.display().to_string())
        .args(["-f", pool])
}

/// `zpool export POOL`, again while zfs-fuse says the pool is busy (right after I/O, or while a
/// process leaves its mount point); nothing to do when no such pool is imported.
pub fn export_pool(sys: &dyn System, pool: &str) -> Result<(), TargetError> {
    if !sys.run(&listed(pool)).is_ok_and(|o| o.success()) {
        return Ok(());
    }
    let cmd = export(pool);
    let mut tries = 0;
    loop {
        let out = sys.run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
        if out.success() {
            return Ok(());
        }
        tries += 1;
        if !out.stderr.contains("busy") || tries >= 20 {
            return Err(TargetError::command(
                "zpool export",
                &cmd,
                &out,
                "a process may still use the pool's mount point",
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn scrub(pool: &str) -> Cmd {
    zpool().args(["scrub", pool])
}

pub fn status(pool: &str) -> Cmd {
    zpool().args(["status", pool])
}

pub fn healthy(pool: &str) -> Cmd {
    zpool().args(["status", "-x", pool])
}

/// Effective pool and dataset properties that differ from the defaults.
pub fn readback(pool: &str) -> Cmd {
    Cmd::new("zfs").timeout(ZFS_COMMAND_TIMEOUT).args([
        "get",
        "-H",
        "-o",
        "property,value,source",
        "all",
        pool,
    ])
}

/// Splits "atime=off,compression=lz4" into dataset properties.
pub fn properties(mount_options: Option<&str>) -> Vec<String> {
    mount_options
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}
