//! Aged images, paid once: an aged filesystem is made once per configuration — filesystem,
//! mkfs options, image size, aging spec and seed — and kept in the work directory's `images`
//! cache; every sample that runs on it starts from a copy of it (a reflink where the work
//! directory's filesystem can share blocks, `FICLONE`; else a sparse copy of its data with
//! `copy_file_range`, or read and write where even that is refused), so repetitions and rounds
//! start from one state, byte for byte.
//!
//! While an image is made, everything it takes is on record: the target it is aged on (its own
//! ledger) and the image it becomes (`aging-*.img` in the work directory, on this module's
//! ledger until it is renamed into the cache), so a kill leaves nothing `fsbench cleanup` does
//! not remove. A finished entry is two files, `images/<fs>-<key>.img` and its record
//! `images/<fs>-<key>.json` (what was asked, what aging did and measured, the target it was
//! made on, a fingerprint of the image), written before the image is renamed into place: an
//! image without its record is never used. `fsbench cleanup` lists the cache and, asked,
//! removes it. One process makes images at a time (the cache's lock).

use crate::aging::{self, AgingSpec, FreeSpace};
pub use crate::copy::{copy_image, CopyInfo};
use crate::copy::{data_ranges, open_no_follow};
use crate::error::TargetError;
pub use crate::fs::FreeSpaceProbe;
use crate::fs::Storage;
use crate::ledger::{Ledger, Resource};
use crate::system::{Cmd, System};
pub use crate::target::AgedImage;
use crate::target::{Target, TargetSpec};
use crate::{CachePolicy, DeviceSpec};
use fsbench_measure::units::human_bytes;
pub use fsbench_model::target::{AgedRecord, AgedTarget};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What an aged image's record says about how it is made: a new version makes new images
/// (its key changes), never reusing one made another way.
const AGING_VERSION: u32 = 1;

/// The cache directory under a work directory.
pub fn cache_dir(work_dir: &Path) -> PathBuf {
    work_dir.join("images")
}

/// The cache entry of `spec` aged by `aging`, made now when there is none (aged on a target
/// of its own, checked, fingerprinted, renamed into the cache). `progress` hears what is being
/// done; `stop` is polled throughout.
pub fn ensure(
    sys: &dyn System,
    spec: &TargetSpec,
    aging: &AgingSpec,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<AgedImage, TargetError> {
    let fs = spec.fs;
    if fs.capabilities().storage != Storage::BlockDevice {
        return Err(TargetError::Unsupported(format!(
            "{} lives in memory: there is no image to age once and copy for each sample",
            fs.name()
        )));
    }
    if let Some(why) = fs.capabilities().no_image_copy {
        return Err(TargetError::Unsupported(format!(
            "aging {}: {why}",
            fs.name()
        )));
    }
    let size = match spec.device {
        DeviceSpec::Image {
            size_bytes: Some(size),
        } => size,
        _ => {
            return Err(TargetError::Invalid(format!(
                "aging needs an image of a given size, made once and copied for each sample: \
                 use {}",
                spec.size_setting.suggest("SIZE")
            )))
        }
    };
    let key = key(spec, aging, size);
    let dir = cache_dir(&spec.work_dir);
    crate::target::prepare_work_dir(sys, &spec.work_dir)?;
    sys.create_trusted_dir(&dir)
        .map_err(|e| TargetError::io("create", &dir, e))?;
    let stem = format!("{}-{key}", fs.name());
    let (image, json) = (
        dir.join(format!("{stem}.img")),
        dir.join(format!("{stem}.json")),
    );
    let lock_path = dir.join(".lock");
    let _lock = loop {
        match sys.try_lock(&lock_path) {
            Ok(Some(lock)) => break lock,
            Ok(None) => progress("waiting for another fsbench process to finish an aged image"),
            Err(e) => return Err(TargetError::io("lock", &lock_path, e)),
        }
        crate::error::check_stop(stop)?;
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let mut remade = None;
    if let Some(record) = read_entry(&json, &image, &key) {
        match verified(&image, &record, fs.name(), progress) {
            Ok(()) => {
                return Ok(AgedImage {
                    image,
                    record: Box::new(record),
                    remade: None,
                })
            }
            Err(why) => {
                progress(&format!("aging {}: {why}: making it again", fs.name()));
                remade = Some(why);
            }
        }
    }
    let record = make(sys, spec, aging, &key, &image, &json, stop, progress)?;
    Ok(AgedImage {
        image,
        record: Box::new(record),
        remade,
    })
}

/// Whether the cached `image` still holds what its record's fingerprint says: checked once
/// per process and image (a campaign's every sample copies it; reading it whole each time would
/// cost a fifth of aging it again), and again when its size, inode or change time moved. Else
/// why not: a changed image would give every sample another filesystem than the one recorded,
/// silently, or a mount error that does not name the cache.
fn verified(
    image: &Path,
    record: &AgedRecord,
    fs: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    type Seen = std::collections::HashSet<(PathBuf, u64, u64, i64, i64)>;
    static SEEN: std::sync::Mutex<Option<Seen>> = std::sync::Mutex::new(None);
    let meta = std::fs::symlink_metadata(image)
        .map_err(|e| format!("cannot look at {}: {e}", image.display()))?;
    let seen = (
        image.to_path_buf(),
        meta.ino(),
        meta.len(),
        meta.ctime(),
        meta.ctime_nsec(),
    );
    let mut known = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if known.get_or_insert_with(Seen::new).contains(&seen) {
        return Ok(());
    }
    progress(&format!(
        "aging {fs}: checking the cached image against its record"
    ));
    let found = fingerprint(image)
        .map_err(|e| format!("cannot read the cached image {}: {e}", image.display()))?;
    if found != record.fingerprint {
        return Err(format!(
            "the cached image {} changed since it was made (fingerprint {found}, recorded {})",
            image.display(),
            record.fingerprint
        ));
    }
    known.get_or_insert_with(Seen::new).insert(seen);
    Ok(())
}

/// The cache key of `spec` aged by `aging` on an image of `size` bytes.
fn key(spec: &TargetSpec, aging: &AgingSpec, size: u64) -> String {
    let text = format!(
        "v{AGING_VERSION}|{}|{:?}|{:?}|{size}|{aging}",
        spec.fs.name(),
        spec.fs.default_mkfs_options(),
        spec.mkfs_options,
    );
    // FNV-1a: stable across builds and versions of Rust (the std hasher is not).
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The record of a finished entry: its record names the key, and its image is there, whole;
/// both regular files (a symlink in the cache is not followed: the entry is made again).
fn read_entry(json: &Path, image: &Path, key: &str) -> Option<AgedRecord> {
    let record: AgedRecord = serde_json::from_str(&read_no_follow(json).ok()?).ok()?;
    let meta = std::fs::symlink_metadata(image).ok()?;
    (meta.is_file() && record.key == key && meta.len() == record.image_bytes).then_some(record)
}

/// A file's text, refused when its name is a symlink (O_NOFOLLOW) or it is not a regular file.
fn read_no_follow(path: &Path) -> io::Result<String> {
    use std::io::Read;
    let mut file = open_no_follow(path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

static MADE: AtomicU64 = AtomicU64::new(0);

/// Makes the entry: ages a target of its own, reads its free space, finishes it into an image
/// on record, fingerprints that, writes the record and renames the image into the cache.
#[allow(clippy::too_many_arguments)]
fn make(
    sys: &dyn System,
    spec: &TargetSpec,
    aging: &AgingSpec,
    key: &str,
    image: &Path,
    json: &Path,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<AgedRecord, TargetError> {
    let fs = spec.fs;
    let started = std::time::Instant::now();
    // Aged as the filesystem is made for a sample, with fsbench's mount options: an image
    // serves every mount option set, scheduler and cache policy of its configuration.
    let mut on = spec.clone();
    on.mount_options = None;
    on.scheduler = None;
    on.cache = CachePolicy::Warm;
    on.image_dir = None;
    on.fsck = true;
    on.start_from = None;
    progress(&format!("aging {}: making the filesystem", fs.name()));
    let target = Target::prepare(sys, on, stop)?;
    let threads = aging::default_threads();
    let mut said = |line: &str| progress(&format!("aging {} ({aging}): {line}", fs.name()));
    let mut aged =
        aging::age(target.mountpoint(), aging, threads, stop, &mut said).map_err(|e| match e {
            aging::AgingError::Interrupted => TargetError::Interrupted,
            aging::AgingError::Impossible(why) => TargetError::Invalid(why),
            other => TargetError::Aging(other.to_string()),
        })?;
    aged.after.free_space = free_space(sys, &target);
    // The image it becomes is on record before it exists under its own name.
    let mut ledger = Ledger::new(
        Some(&crate::target::state_dir(&spec.work_dir)),
        &format!(
            "aging-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        ),
    );
    let partial = spec.work_dir.join(format!(
        "aging-{}-{}-{}.img",
        fs.name(),
        std::process::id(),
        crate::target::unguessable()
    ));
    let record = Resource::Image {
        path: partial.clone(),
    };
    ledger.push(sys, record.clone());
    progress(&format!(
        "aging {}: checking the aged filesystem",
        fs.name()
    ));
    let info = target.finish_into(&partial);
    let failed = |why: String| {
        let _ = crate::undo::undo(sys, &record);
        TargetError::Aging(why)
    };
    if let Some(fsck) = info.fsck.as_ref().filter(|f| !f.clean) {
        return Err(failed(format!(
            "the aged {} did not pass its check: `{}` exited {:?}: {}",
            fs.name(),
            fsck.command,
            fsck.exit_status,
            fsck.output_tail.replace('\n', " / ")
        )));
    }
    if let Some(error) = info.teardown.iter().find(|t| t.starts_with("error")) {
        return Err(failed(format!("the aged {}: {error}", fs.name())));
    }
    crate::error::check_stop(stop)?;
    progress(&format!("aging {}: fingerprinting the image", fs.name()));
    let fingerprint = fingerprint(&partial)
        .map_err(|e| failed(format!("cannot read {}: {e}", partial.display())))?;
    let image_bytes = std::fs::metadata(&partial).map(|m| m.len()).unwrap_or(0);
    let made = AgedRecord {
        key: key.to_string(),
        filesystem: fs.name().to_string(),
        mkfs_options: spec.mkfs_options.clone(),
        image_bytes,
        spec: aging.clone(),
        made_at: fsbench_measure::clock::rfc3339_utc(fsbench_measure::clock::unix_time_s()),
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        aged,
        target: Box::new(info.clone()),
        fingerprint,
    };
    let text = serde_json::to_string_pretty(&made).expect("plain data");
    let tmp = json.with_extension("json.tmp");
    sys.write_file(&tmp, &text)
        .and_then(|()| sys.rename(&tmp, json))
        .and_then(|()| sys.rename(&partial, image))
        .map_err(|e| {
            failed(format!(
                "cannot put {} into the cache: {e}",
                partial.display()
            ))
        })?;
    ledger.forget(sys, &record);
    progress(&format!(
        "aging {}: aged to {:.1} % in {:.0} s, cached as {}",
        fs.name(),
        made.aged.after.fill_percent,
        started.elapsed().as_secs_f64(),
        image.display()
    ));
    Ok(made)
}

/// The free space's fragments by the filesystem's own tool, read with the filesystem
/// remounted read-only (everything on disk where the tool reads it); None where it has no
/// such tool.
fn free_space(sys: &dyn System, target: &Target<'_>) -> Option<FreeSpace> {
    let device = target.block_device()?;
    let probe = target.spec().fs.free_space(device)?;
    let remount = Cmd::new("mount")
        .args(["-o", "remount,ro"])
        .arg(target.mountpoint().display().to_string());
    let quiet = sys.run(&remount).is_ok_and(|out| out.success());
    let command = probe.cmd.to_string();
    let out = match sys.run(&probe.cmd) {
        Ok(out) if out.success() => out,
        Ok(out) => {
            return Some(FreeSpace {
                command,
                note: Some(format!("it failed: {}", out.last_line())),
                ..FreeSpace::default()
            })
        }
        Err(e) => {
            return Some(FreeSpace {
                command,
                note: Some(format!("it could not run: {e}")),
                ..FreeSpace::default()
            })
        }
    };
    let mut report = (probe.read)(&out.stdout);
    report.command = command;
    if !quiet {
        report.note = Some("read while mounted read-write (the remount failed)".into());
    }
    Some(report)
}

/// A fingerprint of the content of the file at `path`: every non-zero 4 KiB block with its
/// offset (zero blocks, written or holes, count alike), hashed 8 bytes at a time. Not
/// cryptographic: it tells a copy from a changed one.
pub fn fingerprint(path: &Path) -> io::Result<String> {
    use std::os::unix::fs::FileExt;
    let file = open_no_follow(path)?;
    let len = file.metadata()?.len();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut buf = vec![0u8; 1 << 20];
    for (start, end) in data_ranges(&file, len)? {
        let mut at = start;
        while at < end {
            let n = ((end - at) as usize).min(buf.len());
            file.read_exact_at(&mut buf[..n], at)?;
            for (i, block) in buf[..n].chunks(4096).enumerate() {
                if block.iter().all(|&b| b == 0) {
                    continue;
                }
                let mut h = hash ^ (at + (i as u64) * 4096);
                for word in block.chunks(8) {
                    let mut bytes = [0u8; 8];
                    bytes[..word.len()].copy_from_slice(word);
                    h = (h ^ u64::from_le_bytes(bytes)).wrapping_mul(0x0000_0100_0000_01b3);
                }
                hash = h.rotate_left(29);
            }
            at += n as u64;
        }
    }
    Ok(format!("{hash:016x}"))
}

/// One entry of the cache.
#[derive(Debug, Clone)]
pub struct Cached {
    pub image: PathBuf,
    pub record: AgedRecord,
    /// What the image takes on the disk (it is sparse).
    pub disk_bytes: u64,
}

/// The cache's entries under `work_dir`, in name order.
pub fn list(work_dir: &Path) -> Vec<Cached> {
    let dir = cache_dir(work_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|json| {
            let image = json.with_extension("img");
            let record: AgedRecord =
                serde_json::from_str(&std::fs::read_to_string(&json).ok()?).ok()?;
            let disk_bytes = std::fs::metadata(&image)
                .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
                .ok()?;
            Some(Cached {
                image,
                record,
                disk_bytes,
            })
        })
        .collect()
}

/// Removes every entry of the cache under `work_dir` (records, images, anything else in it —
/// a record whose image is gone, a half-written record — and the directory), waiting for a
/// process making an image to finish; returns what was done.
pub fn remove_all(sys: &dyn System, work_dir: &Path) -> Result<Vec<String>, String> {
    let dir = cache_dir(work_dir);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    fsbench_measure::trust::check_dir(&dir)
        .map_err(|e| format!("{}: {e}; it is left alone", dir.display()))?;
    let lock = dir.join(".lock");
    let held = loop {
        match sys.try_lock(&lock) {
            Ok(Some(held)) => break held,
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(200)),
            Err(e) => return Err(format!("cannot lock {}: {e}", lock.display())),
        }
    };
    let mut done = Vec::new();
    for entry in list(work_dir) {
        done.push(format!(
            "removed the aged image {} ({} {}, {})",
            entry.image.display(),
            entry.record.filesystem,
            entry.record.spec,
            human_bytes(entry.disk_bytes)
        ));
    }
    let names = sys.list_dir(&dir).map_err(|e| e.to_string())?;
    for name in names.iter().filter(|n| *n != ".lock") {
        let path = dir.join(name);
        sys.remove_file(&path)
            .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
    }
    let _ = sys.remove_file(&lock);
    drop(held);
    let _ = sys.remove_dir(&dir);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    fn host() -> RecordingSystem {
        let sys = RecordingSystem::new();
        sys.set_file("/proc/filesystems", "\text4\n");
        sys.set_file(
            "/proc/self/mountinfo",
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n",
        );
        sys
    }

    /// What the recording host did, without reads of versions, read-backs and state files,
    /// with generated names cut to their kind.
    fn actions(sys: &RecordingSystem) -> Vec<String> {
        let pid = format!("-{}-", std::process::id());
        sys.log()
            .into_iter()
            .filter(|l| !l.ends_with(" -V") && !l.contains("dumpe2fs") && !l.contains("/state"))
            .map(|l| {
                l.split(' ')
                    .map(|w| match w.split_once(&pid) {
                        Some((head, _)) if w.ends_with(".img") => format!("{head}.img"),
                        Some((head, _)) => head.to_string(),
                        None => w.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    fn aged(image: &str) -> AgedImage {
        let aged: aging::Aged = serde_json::from_value(serde_json::json!({
            "spec": AgingSpec::default(), "threads": 4, "elapsed_ns": 1, "fill_elapsed_ns": 1,
            "rounds": [], "files_written": 1, "bytes_written": 1,
            "after": {"fill_percent": 70.0, "size_bytes": 1, "used_bytes": 1,
                      "available_bytes": 1, "files": 1, "dirs": 1, "file_bytes": 1,
                      "extents": null}
        }))
        .unwrap();
        AgedImage {
            image: image.into(),
            remade: None,
            record: Box::new(AgedRecord {
                key: "k".into(),
                filesystem: "ext4".into(),
                mkfs_options: Vec::new(),
                image_bytes: 512 << 20,
                spec: AgingSpec::default(),
                made_at: String::new(),
                fsbench_version: String::new(),
                aged,
                target: Box::default(),
                fingerprint: "f".into(),
            }),
        }
    }

    /// A target started from an aged image is a copy of it, mounted: no image is made, no
    /// mkfs runs; the read-back says how it was copied. Finished into a path, a target's image
    /// is renamed there once unmounted, checked and detached, not removed.
    #[test]
    fn a_target_starts_from_a_copy_and_can_finish_into_an_image() {
        let sys = host();
        let mut spec = TargetSpec::new("ext4", "/w").unwrap();
        spec.start_from = Some(aged("/w/images/ext4-k.img"));
        let target = Target::prepare(&sys, spec, &|| false).unwrap();
        let info = target.finish_into(Path::new("/w/aging-ext4-k.img"));
        assert_eq!(
            actions(&sys),
            [
                "mkdir /w",
                "mkdir /w/mnt-ext4",
                "copy /w/images/ext4-k.img /w/ext4.img",
                "attach /dev/loop40 /w/ext4.img direct_io=true",
                "run mount -t ext4 /dev/loop40 /w/mnt-ext4",
                "run umount /w/mnt-ext4",
                "run e2fsck -f -n /dev/loop40",
                "detach /dev/loop40",
                "rename /w/ext4.img /w/aging-ext4-k.img",
                "rmdir /w/mnt-ext4",
            ]
        );
        let aging = info.aging.unwrap();
        assert_eq!(aging.copy.method, "reflink");
        assert_eq!(aging.made.fingerprint, "f");
        assert_eq!(info.device.size_bytes, 512 << 20);
        assert!(info.mkfs.is_none());
    }

    /// A copy holds the same bytes, its holes stay holes, and it is made new: what is at the
    /// name already is refused and kept.
    #[test]
    fn a_copy_is_byte_identical_sparse_and_new() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("a.img");
        {
            use std::os::unix::fs::FileExt;
            let file = std::fs::File::create(&from).unwrap();
            file.set_len(64 << 20).unwrap();
            file.write_all_at(&[7u8; 8192], 4 << 20).unwrap();
            file.write_all_at(b"end", (64 << 20) - 3).unwrap();
        }
        let to = dir.path().join("b.img");
        let info = copy_image(&from, &to).unwrap();
        assert!(
            [
                "reflink",
                "sparse copy (copy_file_range)",
                "sparse copy (read/write)"
            ]
            .contains(&info.method.as_str()),
            "{info:?}"
        );
        assert_eq!(std::fs::read(&from).unwrap(), std::fs::read(&to).unwrap());
        assert_eq!(fingerprint(&from).unwrap(), fingerprint(&to).unwrap());
        let used =
            |p: &Path| std::os::unix::fs::MetadataExt::blocks(&std::fs::metadata(p).unwrap()) * 512;
        assert!(used(&to) < 1 << 20, "{} bytes on disk", used(&to));
        let e = copy_image(&from, &to).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&from).unwrap(), std::fs::read(&to).unwrap());
        // A changed byte changes the fingerprint; a written zero block does not.
        {
            use std::os::unix::fs::FileExt;
            let file = std::fs::OpenOptions::new().write(true).open(&to).unwrap();
            file.write_all_at(&[0u8; 4096], 8 << 20).unwrap();
            assert_eq!(fingerprint(&from).unwrap(), fingerprint(&to).unwrap());
            file.write_all_at(&[1u8], 4 << 20).unwrap();
        }
        assert_ne!(fingerprint(&from).unwrap(), fingerprint(&to).unwrap());
    }
}
