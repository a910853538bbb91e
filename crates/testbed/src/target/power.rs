//! The power cut of a target on the recording device (issue 40): the log of every write since
//! [`Target::record`] ends; the filesystem goes (unmounted: what it writes then is not logged);
//! each crash state the log can leave is made, mounted where the filesystem was (the
//! recovery, timed), checked read-only and mounted again for the workload to check
//! ([`Target::crash_state`]); [`Target::resume`] brings the filesystem back as it was. Before
//! that, [`Target::keep_power_cut`] can keep the cut as a crash bundle for a developer.
//!
//! A zfs pool (zfs-fuse) is exported where another filesystem is unmounted, and imported where
//! it is mounted: each crash state's pool — the same pool, name and GUID, as the recording
//! device's — is imported (`-f`: it was never exported) from a private directory holding only a
//! link to the state's loop device, never by scanning /dev; the check is a scrub.

use super::{unguessable, Target};
use crate::error::{missing_tool, TargetError};
use crate::fs::run_check;
use crate::fs::zfs;
use crate::ledger::Resource;
use crate::recorder::bundle::{Bundle, Manifest};
use crate::recorder::states::{self, Budget, Builder, State};
use crate::system::{Cmd, CmdOutput, LoopDevice};
use fsbench_model::target::FsckInfo;
use std::path::{Path, PathBuf};

/// A crash state as the workload sees it before it is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashState {
    /// "after flush 3 and 2 of its 5 next writes".
    pub what: String,
    /// The workload's last mark before the state's next flush: what was promised in it.
    pub promised: Option<u64>,
}

/// A crash state made and mounted ([`Target::crash_state`]).
#[derive(Debug, Clone)]
pub struct StateMounted {
    /// The first mount (the log's replay): the recovery.
    pub recovery_ns: u64,
    /// The read-only check after it (None: no check tool).
    pub fsck: Option<FsckInfo>,
    /// Why the state could not be mounted (None: it is mounted where the filesystem was).
    pub unmountable: Option<String>,
}

/// The power cut under way.
pub(super) struct Power {
    builder: Builder,
    states: Vec<State>,
    budget: Budget,
    /// The image as it was when the log started (one of `files`).
    start: PathBuf,
    /// The files of the cut (the start image, the log's bytes, the working image): removed by
    /// [`Target::resume`], or by teardown.
    files: Vec<Resource>,
    /// The state made last: its image, loop device and mount, undone before the next.
    current: Vec<Resource>,
    current_loop: Option<LoopDevice>,
}

/// What a recording in progress keeps: the start image and the log's bytes.
pub(super) struct Recording {
    start: PathBuf,
    files: Vec<Resource>,
}

impl Target<'_> {
    /// Whether the filesystem is on the recording device.
    pub fn records(&self) -> bool {
        self.recorder.is_some()
    }

    /// A path for one of the cut's files, on record (in the ledger) before it exists.
    fn cut_file(&mut self, what: &str, ext: &str) -> (PathBuf, Resource) {
        let dir = self.spec.image_dir.as_ref().unwrap_or(&self.spec.work_dir);
        let path = dir.join(format!("{}-{what}-{}{ext}", self.tag, unguessable()));
        let resource = Resource::Image { path: path.clone() };
        self.ledger.push(self.sys, resource.clone());
        (path, resource)
    }

    /// Starts a log from the device as it is now (its copy is where every crash state starts).
    pub fn record(&mut self) -> Result<(), TargetError> {
        if self.recorder.is_none() {
            return Err(TargetError::Unsupported(
                "the filesystem is not on the recording device (TargetSpec::recording)".into(),
            ));
        }
        if self.power.is_some() || self.recording.is_some() {
            return Err(TargetError::Invalid(
                "a recording is already under way: resume first".into(),
            ));
        }
        let (start, start_record) = self.cut_file("start", ".img");
        let (data, data_record) = self.cut_file("log", ".log");
        let recorder = self.recorder.as_ref().expect("checked");
        if let Err(e) = recorder.begin(&start, &data) {
            let _ = std::fs::remove_file(&start);
            let _ = std::fs::remove_file(&data);
            self.ledger.forget(self.sys, &start_record);
            self.ledger.forget(self.sys, &data_record);
            return Err(TargetError::io("start the write log", &start, e));
        }
        self.recording = Some(Recording {
            start,
            files: vec![start_record, data_record],
        });
        Ok(())
    }

    /// Mark `n` in the log ("operation n returned").
    pub fn mark(&self, n: u64) {
        if let Some(recorder) = &self.recorder {
            recorder.mark(n);
        }
    }

    /// The power cut: the log ends, the filesystem is unmounted (a zfs pool exported; nothing
    /// it writes now is in the log), and the crash states `budget` allows are listed, in the order they are made.
    pub fn power_cut(&mut self, budget: Budget) -> Result<Vec<CrashState>, TargetError> {
        let (Some(recorder), Some(recording)) = (&self.recorder, self.recording.take()) else {
            return Err(TargetError::Invalid(
                "no recording under way: record first".into(),
            ));
        };
        let log = recorder.end().expect("recording");
        let mut files = recording.files;
        match self.pool() {
            Some(pool) => zfs::export_pool(self.sys, &pool)?,
            None => self.unmount_here("power cut")?,
        }
        let (working, working_record) = self.cut_file("working", ".img");
        files.push(working_record);
        let states = states::states(&log.records, budget);
        let builder = Builder::new(log, &recording.start, &working)
            .map_err(|e| TargetError::io("copy the image the log started from", &working, e))?;
        let listed = states
            .iter()
            .map(|s| CrashState {
                what: s.what.clone(),
                promised: s.promised,
            })
            .collect();
        self.power = Some(Power {
            builder,
            states,
            budget,
            start: recording.start,
            files,
            current: Vec::new(),
            current_loop: None,
        });
        Ok(listed)
    }

    /// While a power cut is under way (after [`Target::power_cut`], before [`Target::resume`]):
    /// the cut kept as a crash bundle ([`Bundle`]) in a new directory under `dir` (made when
    /// missing), named `TAG-cut-XXXXXXXX`: the image the log started from (sparse), the log's
    /// records and bytes, and the manifest with the filesystem, its options, the budget and
    /// every state. The bundle is the caller's (not on the target's record: teardown leaves it;
    /// other files may be added to its directory); the cut goes on as before.
    pub fn keep_power_cut(&self, dir: &Path) -> Result<PathBuf, TargetError> {
        let power = self
            .power
            .as_ref()
            .ok_or_else(|| TargetError::Invalid("no power cut under way: cut first".into()))?;
        std::fs::create_dir_all(dir)
            .map_err(|e| TargetError::io("create the directory for crash bundles", dir, e))?;
        let bundle = dir.join(format!("{}-cut-{}", self.tag, unguessable()));
        let image_bytes = std::fs::metadata(&power.start)
            .map_err(|e| TargetError::io("read", &power.start, e))?
            .len();
        let mut mkfs_options = self.info.default_mkfs_options.clone();
        mkfs_options.extend(self.spec.mkfs_options.iter().cloned());
        let log = power.builder.log();
        let manifest = Manifest::new(
            self.spec.fs.name(),
            mkfs_options,
            self.info.mkfs.as_ref().map(|m| m.command.clone()),
            self.spec.mount_options.clone(),
            image_bytes,
            power.budget,
            log.records.len(),
            &power.states,
        );
        Bundle::save(&bundle, &manifest, &power.start, log)
            .map_err(|e| TargetError::io("keep the power cut in", &bundle, e))?;
        Ok(bundle)
    }

    /// Crash state `i` (of [`Target::power_cut`]'s list, in its order) made, attached, mounted
    /// where the filesystem was (timed: the recovery), unmounted, checked read-only, and mounted
    /// again for the workload to check what survived. A zfs pool is imported from the state's
    /// device instead (timed), scrubbed, and left imported for the workload.
    pub fn crash_state(&mut self, i: usize) -> Result<StateMounted, TargetError> {
        self.release_state()?;
        let (image, image_record) = self.cut_file("state", ".img");
        let power = self
            .power
            .as_mut()
            .ok_or_else(|| TargetError::Invalid("no power cut under way: cut first".into()))?;
        power.current.push(image_record);
        let state = power
            .states
            .get(i)
            .ok_or_else(|| TargetError::Invalid(format!("no crash state {i}")))?
            .clone();
        power
            .builder
            .make(&state, &image)
            .map_err(|e| TargetError::io("make the crash state", &image, e))?;
        let device = self
            .sys
            .attach_loop(&image, false)
            .map_err(|e| TargetError::io("attach a loop device to", &image, e))?;
        let loop_record = Resource::Loop {
            device: device.path.clone(),
            backing_file: image.clone(),
        };
        self.ledger.push(self.sys, loop_record.clone());
        let source = device.path.display().to_string();
        let power = self.power.as_mut().expect("checked");
        power.current.push(loop_record);
        let device_path = device.path.clone();
        power.current_loop = Some(device);
        if let Some(pool) = self.pool() {
            return self.import_state(&pool, &device_path);
        }
        let options = self.spec.mount_options.clone();
        self.mount_source = Some(source.clone());
        let mount = self.mount_command(&[], options.as_deref());
        self.mount_source = None;
        let mount_record = Resource::Mount {
            mountpoint: self.info.mountpoint.clone(),
            source,
        };
        self.ledger.push(self.sys, mount_record.clone());
        self.power
            .as_mut()
            .expect("checked")
            .current
            .push(mount_record);
        let mount_once = |target: &Target<'_>| -> Result<Result<u64, String>, TargetError> {
            let out = target
                .sys
                .run(&mount)
                .map_err(|e| missing_tool(&mount, e))?;
            Ok(match out.success() {
                true => Ok(out.elapsed_ns),
                false => Err(format!("{mount}: {}", out.last_line())),
            })
        };
        let recovery_ns = match mount_once(self)? {
            Ok(ns) => ns,
            Err(why) => {
                return Ok(StateMounted {
                    recovery_ns: 0,
                    fsck: None,
                    unmountable: Some(why),
                })
            }
        };
        self.unmount_here("power cut")?;
        let device = self.power.as_ref().expect("checked").current_loop.as_ref();
        let fsck = device
            .and_then(|d| self.spec.fs.fsck(&d.path))
            .map(|cmd| run_check(self.sys, &cmd, |out| self.spec.fs.fsck_clean(out)));
        let unmountable = mount_once(self)?.err();
        Ok(StateMounted {
            recovery_ns,
            fsck,
            unmountable,
        })
    }

    /// The zfs pool the filesystem is, if it is one.
    fn pool(&self) -> Option<String> {
        match &self.filesystem {
            Some(Resource::ZfsPool { pool }) => Some(pool.clone()),
            _ => None,
        }
    }

    /// A crash state's pool imported from its loop device `device` (timed: the recovery, the
    /// intent log's replay included; the import mounts it where the filesystem was), then
    /// scrubbed. On record while imported, so that teardown and `fsbench cleanup` find it.
    fn import_state(&mut self, pool: &str, device: &Path) -> Result<StateMounted, TargetError> {
        let record = Resource::ZfsPool {
            pool: pool.to_string(),
        };
        self.ledger.push(self.sys, record.clone());
        self.power
            .as_mut()
            .expect("a power cut")
            .current
            .push(record);
        let (cmd, out) = self.import_pool(pool, device, true)?;
        if !out.success() {
            return Ok(StateMounted {
                recovery_ns: 0,
                fsck: None,
                unmountable: Some(format!("{cmd}: {}", out.last_line())),
            });
        }
        if !crate::undo::mounted(self.sys, &self.info.mountpoint, pool) {
            return Ok(StateMounted {
                recovery_ns: out.elapsed_ns,
                fsck: None,
                unmountable: Some(format!(
                    "{cmd} imported the pool but did not mount it at {}",
                    self.info.mountpoint.display()
                )),
            });
        }
        let fsck = Some(zfs::scrub_check(self.sys, pool));
        Ok(StateMounted {
            recovery_ns: out.elapsed_ns,
            fsck,
            unmountable: None,
        })
    }

    /// `zpool import` of `pool` from `device` alone (`force`: one that was not exported): a new
    /// directory in the work directory holds a link to the device, and only it is scanned — a
    /// copy of the pool's device (the recording device, another state) holds the same pool.
    /// The link and the directory are gone again when this returns.
    fn import_pool(
        &mut self,
        pool: &str,
        device: &Path,
        force: bool,
    ) -> Result<(Cmd, CmdOutput), TargetError> {
        let work_dir = self.spec.work_dir.clone();
        let stem = format!("mnt-{}-pool", self.tag);
        let dir = self.make_fresh(
            &work_dir,
            &stem,
            "",
            "make the directory to import the pool from",
            |path| Resource::Dir { path },
            |path| std::fs::create_dir(path),
        )?;
        let name = device.file_name().unwrap_or(std::ffi::OsStr::new("device"));
        let link = dir.join(name);
        let cmd = match force {
            true => zfs::import_forced(pool, &dir),
            false => zfs::import(pool, &dir),
        };
        let out = std::os::unix::fs::symlink(device, &link)
            .map_err(|e| TargetError::io("link the pool's device into", &link, e))
            .and_then(|()| self.sys.run(&cmd).map_err(|e| missing_tool(&cmd, e)));
        let _ = std::fs::remove_file(&link);
        let dir_record = Resource::Dir { path: dir };
        if crate::undo::undo(self.sys, &dir_record).is_ok() {
            self.ledger.forget(self.sys, &dir_record);
        }
        Ok((cmd, out?))
    }

    /// The state made last undone: unmounted, detached, its image removed.
    fn release_state(&mut self) -> Result<(), TargetError> {
        let Some(power) = self.power.as_mut() else {
            return Ok(());
        };
        let current: Vec<Resource> = power.current.drain(..).rev().collect();
        let mut held = power.current_loop.take();
        for resource in current {
            let undone = match (&resource, held.take()) {
                (Resource::Loop { .. }, Some(device)) => self
                    .sys
                    .detach_loop(device)
                    .map(|_| String::new())
                    .map_err(|e| e.to_string()),
                // Unmounted at once: undoing a mount waits while any process names the mount
                // point, and the workload's own command line does (a campaign's child).
                (Resource::Mount { mountpoint, source }, device) => {
                    held = device;
                    match crate::undo::mounted(self.sys, mountpoint, source) {
                        true => self
                            .unmount_here("power cut")
                            .map(|()| String::new())
                            .map_err(|e| e.to_string()),
                        false => Ok(String::new()),
                    }
                }
                // A state's pool: exported (undoing it would destroy it, as `fsbench cleanup`
                // may).
                (Resource::ZfsPool { pool }, device) => {
                    held = device;
                    zfs::export_pool(self.sys, pool)
                        .map(|()| String::new())
                        .map_err(|e| e.to_string())
                }
                (_, device) => {
                    held = device;
                    crate::undo::undo(self.sys, &resource)
                }
            };
            match undone {
                Ok(_) => self.ledger.forget(self.sys, &resource),
                Err(why) => {
                    return Err(TargetError::Invalid(format!(
                        "cannot undo the crash state's {resource:?}: {why}"
                    )))
                }
            }
        }
        Ok(())
    }

    /// The power cut over: the last state undone, the cut's files removed, and the filesystem
    /// mounted again as it was before the cut (the device still recording; a zfs pool imported
    /// from the recording device's loop device alone).
    pub fn resume(&mut self) -> Result<(), TargetError> {
        self.release_state()?;
        if let Some(power) = self.power.take() {
            drop(power.builder);
            for resource in power.files {
                if crate::undo::undo(self.sys, &resource).is_ok() {
                    self.ledger.forget(self.sys, &resource);
                }
            }
        }
        if let Some(recording) = self.recording.take() {
            let _ = self.recorder.as_ref().map(|r| r.end());
            for resource in recording.files {
                if crate::undo::undo(self.sys, &resource).is_ok() {
                    self.ledger.forget(self.sys, &resource);
                }
            }
        }
        if let Some(pool) = self.pool() {
            let device = self.device_path();
            let (cmd, out) = self.import_pool(&pool, &device, false)?;
            return match out.success() {
                true => Ok(()),
                false => Err(TargetError::command(
                    "import the pool after the power cut",
                    &cmd,
                    &out,
                    "see `zpool import -d` of the recording device's loop device",
                )),
            };
        }
        let mount = self
            .mount_cmd
            .clone()
            .ok_or_else(|| TargetError::Invalid("the filesystem was never mounted".into()))?;
        let out = self.sys.run(&mount).map_err(|e| missing_tool(&mount, e))?;
        if out.success() {
            Ok(())
        } else {
            Err(TargetError::command(
                "mount after the power cut",
                &mount,
                &out,
                "see `dmesg`",
            ))
        }
    }
}
