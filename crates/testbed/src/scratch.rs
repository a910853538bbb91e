//! A directory fsbench makes fresh for one sample inside a user's directory (a `--dir`
//! campaign), where the sample's workload runs: on record in a ledger from the moment it exists,
//! so the campaign, a killed campaign's guard and `fsbench cleanup` remove it with everything
//! the sample wrote in it. It is the one directory outside the work directory that fsbench
//! removes with its contents, so it is made with a unique name (mkdtemp, never an existing
//! one) and removed only while it is still that directory (its device and inode), never
//! through a symlink.

use crate::ledger::{Ledger, Resource};
use crate::system::System;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How a sample's directory is named: this and six characters mkdtemp chose.
const PREFIX: &str = "fsbench-sample-";

/// Why `path` is not named like a sample's directory fsbench makes, or Ok (a ledger may name
/// no other; [`remove`] also checks it is the very directory).
pub fn check_ours(path: &Path) -> Result<(), String> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let chosen = name.as_deref().and_then(|n| n.strip_prefix(PREFIX));
    if path.is_absolute() && chosen.is_some_and(|c| c.len() == 6 && !c.contains('.')) {
        Ok(())
    } else {
        Err(format!(
            "{} is not a sample's directory fsbench makes",
            path.display()
        ))
    }
}

/// A sample's directory, on record in its ledger.
#[derive(Debug)]
pub struct SampleDir {
    path: PathBuf,
    record: Resource,
}

impl SampleDir {
    /// Makes `parent/fsbench-sample-XXXXXX` (mode 0700) and puts it on record in `ledger`.
    pub fn make(
        sys: &dyn System,
        ledger: &mut Ledger,
        parent: &Path,
    ) -> std::io::Result<SampleDir> {
        use std::os::unix::ffi::OsStringExt;
        let template = parent.join(format!("{PREFIX}XXXXXX"));
        let template = std::ffi::CString::new(template.into_os_string().into_vec())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let raw = template.into_raw();
        // SAFETY: mkdtemp rewrites the X's of a NUL-terminated buffer this function owns.
        let made = unsafe { libc::mkdtemp(raw) };
        let error = std::io::Error::last_os_error();
        // SAFETY: the buffer from into_raw above, given back once.
        let name = unsafe { std::ffi::CString::from_raw(raw) };
        if made.is_null() {
            return Err(error);
        }
        let path = PathBuf::from(std::ffi::OsString::from_vec(name.into_bytes()));
        let meta = std::fs::symlink_metadata(&path)?;
        let record = Resource::SampleDir {
            path: path.clone(),
            device: meta.dev(),
            inode: meta.ino(),
        };
        ledger.push(sys, record.clone());
        Ok(SampleDir { path, record })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes it with everything in it (call once the sample's processes have ended) and
    /// takes it off the record; what cannot be removed stays on record for `fsbench cleanup`.
    pub fn remove(self, sys: &dyn System, ledger: &mut Ledger) -> Result<String, String> {
        let Resource::SampleDir {
            path,
            device,
            inode,
        } = &self.record
        else {
            unreachable!("a sample directory's record is one")
        };
        let done = remove(path, *device, *inode)?;
        ledger.forget(sys, &self.record);
        Ok(done)
    }
}

/// Undoes a ledger's [`Resource::SampleDir`]: removes `path` with its contents if it is still
/// the directory fsbench made (`device`, `inode`); anything else there is left alone. Nothing
/// is removed across a mount (`fsbench_measure::walk`): a mount the sample left in it stays,
/// with the directories leading to it, and the error says so (the record stays, so `fsbench
/// cleanup` removes the rest once it is unmounted).
pub fn remove(path: &Path, device: u64, inode: u64) -> Result<String, String> {
    check_ours(path).map_err(|why| format!("{why}: left alone"))?;
    match fsbench_measure::walk::remove_tree_if(path, |d, i| d == device && i == inode) {
        Ok(true) => Ok(format!("removed {}", path.display())),
        Ok(false) => Ok(format!(
            "{} is no longer the directory fsbench made: left alone",
            path.display()
        )),
        Err(e) if e.is_not_found() => Ok(format!("{} is gone", path.display())),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RealSystem;

    #[test]
    fn a_sample_directory_is_fresh_on_record_and_only_it_is_removed() {
        let user = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(user.path().join("mine"), "the user's").unwrap();
        let mut ledger = Ledger::new(Some(state.path()), "sample-1-0");
        let a = SampleDir::make(&RealSystem, &mut ledger, user.path()).unwrap();
        let b = SampleDir::make(&RealSystem, &mut ledger, user.path()).unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("fsbench-sample-"));
        let file = state.path().join("sample-1-0.json");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("\"kind\": \"sample-dir\""), "{text}");
        // What the sample wrote goes with it; a symlink in it is not followed.
        std::fs::create_dir(a.path().join("tree")).unwrap();
        std::fs::write(a.path().join("tree/blob"), "x").unwrap();
        std::os::unix::fs::symlink(user.path(), a.path().join("out")).unwrap();
        assert!(a
            .remove(&RealSystem, &mut ledger)
            .unwrap()
            .starts_with("removed"));
        assert!(user.path().join("mine").exists());
        // Another directory in its place (same name, another inode) is not fsbench's.
        let Resource::SampleDir {
            path,
            device,
            inode,
        } = b.record.clone()
        else {
            unreachable!()
        };
        // Made before the old one goes: a new directory at once could get its freed inode.
        let theirs = path.with_extension("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("theirs"), "x").unwrap();
        std::fs::remove_dir(&path).unwrap();
        std::fs::rename(&theirs, &path).unwrap();
        let said = remove(&path, device, inode).unwrap();
        assert!(said.contains("left alone"), "{said}");
        assert!(path.join("theirs").exists());
        assert!(b.remove(&RealSystem, &mut ledger).is_ok());
        // Only what is named like one, whatever the ledger says.
        let mine = std::fs::symlink_metadata(user.path().join("mine")).unwrap();
        let said = remove(&user.path().join("mine"), mine.dev(), mine.ino()).unwrap_err();
        assert!(said.contains("left alone"), "{said}");
        assert!(!file.exists(), "an empty ledger leaves no state file");
        assert_eq!(
            std::fs::read_dir(user.path()).unwrap().count(),
            2,
            "the user's file and the other directory"
        );
    }

    /// Unmounts what a test mounted when dropped (lazily if busy), even on panic.
    struct Unmount(PathBuf);

    impl Drop for Unmount {
        fn drop(&mut self) {
            let ok = std::process::Command::new("umount")
                .arg(&self.0)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = std::process::Command::new("umount")
                    .arg("-l")
                    .arg(&self.0)
                    .status();
            }
        }
    }

    /// Issue 35: a mount left in a sample's directory (a tmpfs here) was entered and emptied.
    /// Now it stays with the directories leading to it, the removal says so and the directory
    /// stays on record; once it is unmounted, the ledger's undo removes the rest.
    #[test]
    #[allow(clippy::print_stderr)] // the test's own note that it was skipped
    fn a_mount_in_a_sample_directory_is_left_alone_and_stays_on_record() {
        if !fsbench_measure::trust::as_root() {
            assert!(std::env::var_os("CI").is_none(), "CI must run this as root");
            eprintln!("skipped: needs root (mount)");
            return;
        }
        let user = tempfile::Builder::new()
            .prefix("fsbench-test-scratch-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let state = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::new(Some(state.path()), "sample-1-0");
        let dir = SampleDir::make(&RealSystem, &mut ledger, user.path()).unwrap();
        let record = dir.record.clone();
        let point = dir.path().join("task/x");
        std::fs::create_dir_all(&point).unwrap();
        std::fs::write(dir.path().join("task/file"), "x").unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "fsbench-test"])
            .arg(&point)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount a tmpfs");
        let mounted = Unmount(point.clone());
        std::fs::write(point.join("on-tmpfs"), "kept").unwrap();
        let said = dir.remove(&RealSystem, &mut ledger).unwrap_err();
        assert!(
            said.contains(&format!("{} is a mount point", point.display()))
                && said.contains("never removes across a mount"),
            "{said}"
        );
        assert_eq!(
            std::fs::read_to_string(point.join("on-tmpfs")).unwrap(),
            "kept"
        );
        assert!(
            !point.parent().unwrap().join("file").exists(),
            "the rest went"
        );
        assert_eq!(
            ledger.resources(),
            std::slice::from_ref(&record),
            "still on record"
        );
        drop(mounted);
        assert!(crate::undo::undo(&RealSystem, &record)
            .unwrap()
            .starts_with("removed"));
        assert_eq!(std::fs::read_dir(user.path()).unwrap().count(), 0);
    }
}
