//! Walking and removing a directory tree without ever leaving its mount: the one removal of
//! every directory fsbench made and removes with its contents (a `--dir` sample's own
//! directory, a workload's scratch directory, a task chain's), and the one test a walk over a
//! user's tree (the task's `--source`) makes of each name before it enters it.
//!
//! A process the user runs in such a directory (a task's `exec` step) may leave a mount there —
//! another filesystem, or a bind mount of any directory of the host, even of the same
//! filesystem (same `st_dev`). A recursive removal that entered it would delete the other
//! tree's files. Here each name is opened relative to its parent's descriptor (`openat2` with
//! `RESOLVE_NO_XDEV`, which the kernel refuses for any mount point, bind mounts included;
//! where the kernel has no openat2, `openat` and the mount id the kernel shows for each
//! descriptor in /proc/self/fdinfo), with `O_NOFOLLOW`: a symlink is removed, never followed,
//! and a rename of a directory on the way cannot redirect the walk. A mount point found is left
//! alone with the directories leading to it, and said.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why a removal did not remove everything.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// Mount points inside (or at) the directory: each left alone with the directories leading
    /// to it; everything else was removed.
    #[error("{}", mounted(top, mounts))]
    Mounted { top: PathBuf, mounts: Vec<PathBuf> },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl RemoveError {
    /// The directory was not there to remove.
    pub fn is_not_found(&self) -> bool {
        matches!(self, RemoveError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    fn io<'p>(action: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> RemoveError + 'p {
        move |source| RemoveError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

fn mounted(top: &Path, mounts: &[PathBuf]) -> String {
    let first = mounts.first().map_or(top, PathBuf::as_path).display();
    let (what, it) = match mounts.len() {
        0 | 1 => (format!("{first} is a mount point"), "it"),
        n => (
            format!("{first} and {} more are mount points", n - 1),
            "them",
        ),
    };
    let place = if mounts.len() == 1 && mounts[0] == top {
        String::new()
    } else {
        format!(" inside {}", top.display())
    };
    format!(
        "{what}{place} (another filesystem or a bind mount), left alone with the directories \
         leading to {it}: fsbench never removes across a mount; unmount {it} (umount {first}), \
         then remove {}",
        top.display()
    )
}

/// What a name in a directory is, opened by a walk that stays on the directory's mount.
#[derive(Debug)]
pub enum Entry {
    /// Opened on the same mount.
    Open(OwnedFd),
    /// A mount point (another filesystem, or a bind mount): not entered.
    Mount,
    /// Nothing by that name any more.
    Gone,
}

/// How a mount point is told from a directory of the same mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detect {
    /// openat2(2) with RESOLVE_NO_XDEV (Linux 5.6); falls back to [`Detect::MountId`] where the
    /// kernel has no openat2 (ENOSYS, or EPERM from a seccomp filter that does not know it).
    Kernel,
    /// openat(2), then the mount ids /proc/self/fdinfo shows for the parent and the name.
    /// (Reached from [`Detect::Kernel`] on kernels without openat2; only tests ask for it.)
    #[cfg_attr(not(test), allow(dead_code))]
    MountId,
}

/// Opens `name` in `dir` with `flags` (`O_NOFOLLOW` added: a symlink is never followed, and
/// opening one fails with ELOOP, or ENOTDIR with `O_DIRECTORY`), unless it is a mount point.
pub fn open_entry(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<Entry> {
    open_with(dir, name, flags, Detect::Kernel)
}

fn open_with(
    dir: BorrowedFd<'_>,
    name: &CStr,
    flags: libc::c_int,
    detect: Detect,
) -> io::Result<Entry> {
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let gone_or = |e: io::Error| match e.raw_os_error() {
        Some(libc::ENOENT) => Ok(Entry::Gone),
        _ => Err(e),
    };
    if detect == Detect::Kernel {
        let resolve =
            libc::RESOLVE_NO_XDEV | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        match openat2(dir.as_raw_fd(), name, flags, resolve) {
            Ok(fd) => return Ok(Entry::Open(fd)),
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => return Ok(Entry::Mount),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {}
            Err(e) => return gone_or(e),
        }
    }
    // SAFETY: name is NUL-terminated; the kernel reads it only.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return gone_or(io::Error::last_os_error());
    }
    // SAFETY: just opened, owned here alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if mount_id(fd.as_raw_fd())? == mount_id(dir.as_raw_fd())? {
        Ok(Entry::Open(fd))
    } else {
        Ok(Entry::Mount)
    }
}

fn openat2(dir: RawFd, name: &CStr, flags: libc::c_int, resolve: u64) -> io::Result<OwnedFd> {
    // SAFETY: open_how is plain data (its fields are set below; zero is "nothing").
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = resolve;
    // SAFETY: name is NUL-terminated; how is a valid open_how of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just opened, owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// The id of the mount `fd` is on, as /proc/self/fdinfo shows it (Linux 3.15).
fn mount_id(fd: RawFd) -> io::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("mnt_id:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            io::Error::other("/proc/self/fdinfo shows no mount id, so a mount point cannot be told")
        })
}

/// The names in the directory `dir` (not `.` nor `..`) with their `d_type` (`DT_UNKNOWN` where
/// the filesystem does not say), read to the end before anything is done to them.
pub fn entries(dir: BorrowedFd<'_>) -> io::Result<Vec<(CString, u8)>> {
    let mut names = Vec::new();
    let mut buf = vec![0u8; 32 << 10];
    each_entry(
        dir,
        &mut buf,
        |e| e,
        |name, d_type| {
            names.push((name.to_owned(), d_type));
            Ok(())
        },
    )?;
    Ok(names)
}

/// Calls `each` with every name in `dir` from where its offset is (not `.` nor `..`) and its
/// `d_type`, a getdents64 buffer (`buf`) at a time; a failure to read it is `list_error`'s.
fn each_entry<E>(
    dir: BorrowedFd<'_>,
    buf: &mut [u8],
    list_error: impl Fn(io::Error) -> E,
    mut each: impl FnMut(&CStr, u8) -> Result<(), E>,
) -> Result<(), E> {
    loop {
        // SAFETY: buf is valid and writable for buf.len() bytes.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(list_error(io::Error::last_os_error()));
        }
        let len = n as usize;
        if len == 0 {
            return Ok(());
        }
        let mut at = 0;
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
        while at + 19 <= len {
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let d_type = buf[at + 18];
            if let Ok(name) = CStr::from_bytes_until_nul(&buf[at + 19..at + reclen]) {
                if name.to_bytes() != b"." && name.to_bytes() != b".." {
                    each(name, d_type)?;
                }
            }
            at += reclen;
        }
    }
}

/// Removes the directory `path` with everything in it, never across a mount (see the module).
/// A mount point inside is left with the directories leading to it and named in the error;
/// everything else goes.
pub fn remove_tree(path: &Path) -> Result<(), RemoveError> {
    match remove_with(path, |_, _| true, Detect::Kernel)? {
        true => Ok(()),
        false => Err(RemoveError::Io {
            action: "remove",
            path: path.to_path_buf(),
            source: io::Error::from_raw_os_error(libc::ENOTDIR),
        }),
    }
}

/// As [`remove_tree`], only while `path` is the directory `is_it(device, inode)` accepts,
/// checked on the directory opened (so nothing put in its place after the check is removed):
/// false, and nothing removed, when it is not, or is no directory.
pub fn remove_tree_if(
    path: &Path,
    is_it: impl FnOnce(u64, u64) -> bool,
) -> Result<bool, RemoveError> {
    remove_with(path, is_it, Detect::Kernel)
}

fn remove_with(
    path: &Path,
    is_it: impl FnOnce(u64, u64) -> bool,
    detect: Detect,
) -> Result<bool, RemoveError> {
    let (Some(name), Some(parent)) = (path.file_name(), path.parent()) else {
        return Err(RemoveError::Io {
            action: "remove",
            path: path.to_path_buf(),
            source: io::Error::from(io::ErrorKind::InvalidInput),
        });
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let name = c_name(name).map_err(RemoveError::io("remove", path))?;
    let parent_fd = open_dir(parent).map_err(RemoveError::io("open", parent))?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY;
    let top = match open_with(as_fd(&parent_fd), &name, flags, detect) {
        Ok(Entry::Open(fd)) => fd,
        Ok(Entry::Mount) => {
            return Err(RemoveError::Mounted {
                top: path.to_path_buf(),
                mounts: vec![path.to_path_buf()],
            })
        }
        Ok(Entry::Gone) => {
            return Err(RemoveError::io("remove", path)(io::Error::from(
                io::ErrorKind::NotFound,
            )))
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP)) => {
            return Ok(false)
        }
        Err(e) => return Err(RemoveError::io("open", path)(e)),
    };
    let (device, inode) = identity(&top).map_err(RemoveError::io("examine", path))?;
    if !is_it(device, inode) {
        return Ok(false);
    }
    let mut mounts = Vec::new();
    clear(&top, path, detect, &mut mounts)?;
    drop(top);
    if !mounts.is_empty() {
        return Err(RemoveError::Mounted {
            top: path.to_path_buf(),
            mounts,
        });
    }
    unlink(&parent_fd, &name, libc::AT_REMOVEDIR).map_err(RemoveError::io("remove", path))?;
    Ok(true)
}

/// Removes everything in `dir` (at `path`, for messages) but mount points, which go to `mounts`
/// with the directories leading to them. True when `dir` is empty now.
fn clear(
    dir: &OwnedFd,
    path: &Path,
    detect: Detect,
    mounts: &mut Vec<PathBuf>,
) -> Result<bool, RemoveError> {
    let mut buf = vec![0u8; 32 << 10];
    // Entries are removed as the directory is read (a huge one is never held in memory); a
    // pass that removes nothing ends it, so nothing a filesystem's readdir skipped after a
    // removal stays behind.
    loop {
        // SAFETY: rewinding a directory descriptor held here.
        if unsafe { libc::lseek(dir.as_raw_fd(), 0, libc::SEEK_SET) } < 0 {
            return Err(RemoveError::io("list", path)(io::Error::last_os_error()));
        }
        let (mut removed, mut kept) = (false, false);
        let list_error = |source| RemoveError::Io {
            action: "list",
            path: path.to_path_buf(),
            source,
        };
        each_entry(as_fd(dir), &mut buf, list_error, |name, d_type| {
            let here = path.join(OsStr::from_bytes(name.to_bytes()));
            match remove_entry(dir, name, d_type, &here, detect, mounts)? {
                Fate::Removed => removed = true,
                Fate::Kept => kept = true,
                Fate::Gone => {}
            }
            Ok(())
        })?;
        if !removed {
            return Ok(!kept);
        }
    }
}

/// What became of a name in a directory being cleared.
enum Fate {
    Removed,
    /// A mount point, or a directory leading to one: left.
    Kept,
    Gone,
}

/// Keeps the mount point `here`, named once (a later pass over its directory meets it again).
fn keep(mounts: &mut Vec<PathBuf>, here: &Path) -> Result<Fate, RemoveError> {
    if !mounts.iter().any(|m| m == here) {
        mounts.push(here.to_path_buf());
    }
    Ok(Fate::Kept)
}

/// Removes `name` in `dir` (at `here`) and everything below it, but mount points.
fn remove_entry(
    dir: &OwnedFd,
    name: &CStr,
    d_type: u8,
    here: &Path,
    detect: Detect,
    mounts: &mut Vec<PathBuf>,
) -> Result<Fate, RemoveError> {
    // d_type is a hint: what the name is when it is opened or unlinked decides, so a name
    // replaced in between is still removed the right way (tried at most twice each way).
    let mut as_dir = matches!(d_type, libc::DT_DIR | libc::DT_UNKNOWN);
    for _ in 0..4 {
        if as_dir {
            let flags = libc::O_RDONLY | libc::O_DIRECTORY;
            match open_with(as_fd(dir), name, flags, detect) {
                Ok(Entry::Open(sub)) => {
                    if !clear(&sub, here, detect, mounts)? {
                        return Ok(Fate::Kept);
                    }
                    drop(sub);
                    return match unlink(dir, name, libc::AT_REMOVEDIR) {
                        Ok(()) => Ok(Fate::Removed),
                        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => keep(mounts, here),
                        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(Fate::Gone),
                        Err(e) => Err(RemoveError::io("remove", here)(e)),
                    };
                }
                Ok(Entry::Mount) => return keep(mounts, here),
                Ok(Entry::Gone) => return Ok(Fate::Gone),
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP)) => {
                    as_dir = false;
                }
                Err(e) => return Err(RemoveError::io("open", here)(e)),
            }
        } else {
            match unlink(dir, name, 0) {
                Ok(()) => return Ok(Fate::Removed),
                // A file with another mounted over it: the mount stays, and so does it.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return keep(mounts, here),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Fate::Gone),
                Err(e) if e.raw_os_error() == Some(libc::EISDIR) => as_dir = true,
                Err(e) => return Err(RemoveError::io("remove", here)(e)),
            }
        }
    }
    Err(RemoveError::io("remove", here)(io::Error::other(
        "it keeps changing between a directory and a file",
    )))
}

fn as_fd(fd: &OwnedFd) -> BorrowedFd<'_> {
    std::os::fd::AsFd::as_fd(fd)
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let path = c_name(path.as_os_str())?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // SAFETY: path is NUL-terminated; the kernel reads it only.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just opened, owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn identity(fd: &OwnedFd) -> io::Result<(u64, u64)> {
    // SAFETY: plain data; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is valid and writable.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_dev, st.st_ino))
}

fn unlink(dir: &OwnedFd, name: &CStr, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: name is NUL-terminated; dir is open.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::process::Command;

    fn tempdir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("fsbench-test-walk-")
            .tempdir_in("/var/tmp")
            .unwrap()
    }

    /// True when a root-only test may run; off CI a non-root developer skips it.
    #[allow(clippy::print_stderr)] // the test's own note that it was skipped
    fn root_or_skip(test: &str) -> bool {
        if crate::trust::as_root() {
            return true;
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "{test} needs root, and CI must run it as root"
        );
        eprintln!("skipping {test}: needs root");
        false
    }

    /// Mounts a test made, unmounted (lazily if busy) when dropped, even on panic.
    struct Mounts(Vec<PathBuf>);

    impl Mounts {
        fn mount(&mut self, args: &[&str], at: &Path) {
            let ok = Command::new("mount")
                .args(args)
                .arg(at)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "mount {args:?} {}", at.display());
            self.0.push(at.to_path_buf());
        }

        fn unmount_all(&mut self) {
            for at in self.0.drain(..).rev() {
                let ok = Command::new("umount")
                    .arg(&at)
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok {
                    let _ = Command::new("umount").arg("-l").arg(&at).status();
                }
            }
        }
    }

    impl Drop for Mounts {
        fn drop(&mut self) {
            self.unmount_all();
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_tree_goes_whole_and_a_symlink_in_it_is_removed_not_followed() {
        for detect in [Detect::Kernel, Detect::MountId] {
            let base = tempdir();
            let outside = base.path().join("outside");
            write(&outside.join("keep"), "the user's");
            let top = base.path().join("top");
            write(&top.join("a/b/c/file"), "x");
            write(&top.join("file"), "x");
            std::fs::create_dir_all(top.join("empty/deeper")).unwrap();
            std::os::unix::fs::symlink(&outside, top.join("a/out")).unwrap();
            std::os::unix::fs::symlink(outside.join("keep"), top.join("keep-link")).unwrap();
            // More names than one getdents buffer holds: removed as they are read.
            std::fs::create_dir(top.join("many")).unwrap();
            for i in 0..3000 {
                std::fs::write(top.join(format!("many/a-rather-long-file-name-{i:05}")), "")
                    .unwrap();
            }
            assert!(remove_with(&top, |_, _| true, detect).unwrap());
            assert!(!top.exists(), "{detect:?}");
            assert_eq!(
                std::fs::read_to_string(outside.join("keep")).unwrap(),
                "the user's"
            );
            // Not there: said as such; a file or a symlink at the name is no directory to
            // remove, and stays.
            assert!(remove_tree(&top).unwrap_err().is_not_found());
            std::os::unix::fs::symlink(&outside, &top).unwrap();
            assert!(!remove_with(&top, |_, _| true, detect).unwrap());
            assert!(remove_tree(&top).is_err());
            assert!(outside.join("keep").exists() && top.is_symlink());
        }
    }

    #[test]
    fn only_the_directory_named_by_its_device_and_inode_is_removed() {
        let base = tempdir();
        let top = base.path().join("top");
        write(&top.join("theirs"), "x");
        let meta = std::fs::metadata(&top).unwrap();
        let other = (meta.dev(), meta.ino() + 1);
        assert!(!remove_tree_if(&top, |d, i| (d, i) == other).unwrap());
        assert!(top.join("theirs").exists());
        assert!(remove_tree_if(&top, |d, i| (d, i) == (meta.dev(), meta.ino())).unwrap());
        assert!(!top.exists());
    }

    /// A tmpfs, a bind mount of a directory of the same filesystem (same st_dev) and a file
    /// bind-mounted over a file, inside the tree: each stays with everything in it and the
    /// directories leading to it, everything else goes, and the error names them; once they
    /// are unmounted the rest goes. A mount on the directory itself leaves it whole.
    #[test]
    fn a_mount_inside_is_left_alone_with_the_way_to_it() {
        if !root_or_skip("a_mount_inside_is_left_alone_with_the_way_to_it") {
            return;
        }
        for detect in [Detect::Kernel, Detect::MountId] {
            let base = tempdir();
            let other = base.path().join("other");
            write(&other.join("sub/precious"), "the other tree's");
            write(&base.path().join("a-file"), "the other file");
            let top = base.path().join("top");
            write(&top.join("plain/file"), "x");
            write(&top.join("one/two/file"), "x");
            std::fs::create_dir_all(top.join("one/two/tmpfs")).unwrap();
            std::fs::create_dir_all(top.join("bind")).unwrap();
            write(&top.join("one/over"), "covered");
            let mut mounts = Mounts(Vec::new());
            mounts.mount(&["-t", "tmpfs", "fsbench-test"], &top.join("one/two/tmpfs"));
            write(&top.join("one/two/tmpfs/on-tmpfs"), "on the tmpfs");
            mounts.mount(&["--bind", other.to_str().unwrap()], &top.join("bind"));
            let file = base.path().join("a-file");
            mounts.mount(&["--bind", file.to_str().unwrap()], &top.join("one/over"));
            assert_eq!(
                std::fs::metadata(top.join("bind")).unwrap().dev(),
                std::fs::metadata(&top).unwrap().dev(),
                "the bind mount is of the same filesystem"
            );
            let Err(RemoveError::Mounted {
                top: said,
                mounts: mut found,
            }) = remove_with(&top, |_, _| true, detect)
            else {
                panic!("{detect:?}: the mounts were not reported");
            };
            assert_eq!(said, top);
            found.sort();
            assert_eq!(
                found,
                [
                    top.join("bind"),
                    top.join("one/over"),
                    top.join("one/two/tmpfs")
                ],
                "{detect:?}"
            );
            let message = RemoveError::Mounted {
                top: top.clone(),
                mounts: found.clone(),
            }
            .to_string();
            assert!(
                message.contains("and 2 more are mount points inside")
                    && message.contains("never removes across a mount"),
                "{message}"
            );
            assert_eq!(
                std::fs::read_to_string(other.join("sub/precious")).unwrap(),
                "the other tree's"
            );
            assert_eq!(
                std::fs::read_to_string(top.join("one/two/tmpfs/on-tmpfs")).unwrap(),
                "on the tmpfs"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "the other file");
            assert!(!top.join("plain").exists() && !top.join("one/two/file").exists());
            // A mount on the directory itself: nothing in it is touched.
            mounts.mount(&["--bind", other.to_str().unwrap()], &top.join("bind"));
            let Err(RemoveError::Mounted { mounts: found, .. }) =
                remove_with(&top.join("bind"), |_, _| true, detect)
            else {
                panic!("{detect:?}: the mount on the directory was not reported");
            };
            assert_eq!(found, [top.join("bind")]);
            assert!(other.join("sub/precious").exists());
            mounts.unmount_all();
            assert!(remove_with(&top, |_, _| true, detect).unwrap());
            assert!(!top.exists());
            assert!(other.join("sub/precious").exists() && file.exists());
        }
    }
}
