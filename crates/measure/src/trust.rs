//! Which directories root may trust with what it makes: a directory is trusted when nobody but
//! root (or the user fsbench runs as) can change it or any directory on the way to it, as ssh's
//! StrictModes asks of `~/.ssh`. Otherwise another local user could swap a component — plant a
//! symlink where fsbench is about to mount, forge a ledger `fsbench cleanup` obeys — and make
//! root act on the host for them.
//!
//! The walk follows the path as the kernel would, one component at a time, symlinks included
//! (each must belong to a trusted user too). A world-writable directory with the sticky bit
//! (`/var/tmp`, `/tmp`) may lead to a trusted one: there, nobody may rename or remove an entry
//! they do not own, so a directory of root's inside it stays root's. The directory itself may
//! not be such a directory: anyone could create names in it.

use std::ffi::OsString;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

/// The most symlinks a walk follows (the kernel's limit, MAXSYMLINKS).
const MAX_SYMLINKS: u32 = 40;

/// Checks that `dir` is a directory that only root (or this user) can change, and that so is
/// every directory leading to it. The error (kind `PermissionDenied` for an untrusted
/// component) names the component and says how to fix it.
pub fn check_dir(dir: &Path) -> io::Result<()> {
    walk(dir, false)
}

/// Like [`check_dir`], creating `dir` and any missing directory on the way (mode 0755) first.
/// Each existing component is checked before anything is made inside it, so nothing is ever
/// created through another user's directory or symlink.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    walk(dir, true)
}

/// Checks a file fsbench is about to obey (a ledger): a regular file of a trusted user that
/// nobody else may write. `meta` comes from the open file (fstat), not from its path.
pub fn check_file(path: &Path, meta: &Metadata) -> io::Result<()> {
    if !meta.file_type().is_file() {
        return Err(untrusted(path, "is not a regular file".to_string()));
    }
    check_owner(path, meta)?;
    if meta.mode() & 0o022 != 0 {
        return Err(untrusted(
            path,
            format!(
                "can be written by its group or others (mode {:04o}); `chmod go-w {}`",
                meta.mode() & 0o7777,
                path.display()
            ),
        ));
    }
    Ok(())
}

fn walk(dir: &Path, create: bool) -> io::Result<()> {
    let absolute = std::path::absolute(dir)?;
    let mut pending: Vec<OsString> = Vec::new();
    push_front(&mut pending, &absolute);
    let mut at = PathBuf::from("/");
    let mut hops = 0;
    check_directory(&at, &std::fs::metadata(&at)?, false)?;
    while let Some(name) = pending.pop() {
        if name == ".." {
            // `at` is always a real directory (symlinks resolved): its parent is the real one.
            at.pop();
            continue;
        }
        let next = at.join(&name);
        let meta = match std::fs::symlink_metadata(&next) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                match std::fs::DirBuilder::new().mode(0o755).create(&next) {
                    Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                    // Made now, or by someone else in between: checked below either way.
                    _ => std::fs::symlink_metadata(&next)?,
                }
            }
            other => other?,
        };
        if meta.file_type().is_symlink() {
            check_owner(&next, &meta)?;
            hops += 1;
            if hops > MAX_SYMLINKS {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            let target = std::fs::read_link(&next)?;
            if target.is_absolute() {
                at = PathBuf::from("/");
            }
            push_front(&mut pending, &target);
            continue;
        }
        if !meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", next.display()),
            ));
        }
        check_directory(&next, &meta, false)?;
        at = next;
    }
    // The directory itself, whichever way the walk reached it: nobody else may add names.
    check_directory(&at, &std::fs::metadata(&at)?, true)
}

/// Puts the components of `path` before those still to walk (`pending` is a stack).
fn push_front(pending: &mut Vec<OsString>, path: &Path) {
    let names: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(names.into_iter().rev());
}

fn check_directory(path: &Path, meta: &Metadata, itself: bool) -> io::Result<()> {
    check_owner(path, meta)?;
    let mode = meta.mode();
    let sticky = mode & libc::S_ISVTX != 0;
    if mode & 0o022 != 0 && (itself || !sticky) {
        return Err(untrusted(
            path,
            format!(
                "can be written by its group or others (mode {:04o}); `chmod go-w {}`, or use \
                 another directory",
                mode & 0o7777,
                path.display()
            ),
        ));
    }
    Ok(())
}

fn check_owner(path: &Path, meta: &Metadata) -> io::Result<()> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let owner = meta.uid();
    if owner == 0 || owner == me {
        return Ok(());
    }
    let whom = if me == 0 {
        "root".to_string()
    } else {
        format!("root or {}", user_name(me))
    };
    Err(untrusted(
        path,
        format!(
            "belongs to {}, not {whom}; `chown {} {}`, or use another directory",
            user_name(owner),
            if me == 0 {
                "root:".to_string()
            } else {
                me.to_string()
            },
            path.display()
        ),
    ))
}

fn untrusted(path: &Path, why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} {why} (another user could swap what fsbench makes there)",
            path.display()
        ),
    )
}

/// `name (uid N)`, or `uid N` when the user has no name.
fn user_name(uid: u32) -> String {
    let mut buffer = vec![0 as libc::c_char; 4096];
    // SAFETY: zeroed passwd, a buffer of the given length and a result pointer, all outliving
    // the call; getpwuid_r writes only into them.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe {
        libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() || entry.pw_name.is_null() {
        return format!("uid {uid}");
    }
    // SAFETY: getpwuid_r succeeded, so pw_name points to a NUL-terminated name in `buffer`.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    format!("{} (uid {uid})", name.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn root() -> bool {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() == 0 }
    }

    fn chown(path: &Path, uid: u32) {
        std::os::unix::fs::lchown(path, Some(uid), None).unwrap();
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Root's own directory passes (in /var/tmp: world-writable, sticky); a missing one is
    /// made; another user's, a writable one, one reached through another user's symlink or
    /// directory do not, and nothing is made through them.
    #[test]
    fn only_directories_nobody_else_can_change_are_trusted() {
        if !root() {
            eprintln!("skipped: needs root (chown)");
            return;
        }
        let base = tempfile::tempdir_in("/var/tmp").unwrap();
        let base = base.path();
        check_dir(base).unwrap();
        let made = base.join("a/b");
        ensure_dir(&made).unwrap();
        assert!(made.is_dir());
        check_dir(&made).unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().mode() & 0o022, 0);

        let nobody = 65534;
        let theirs = base.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chown(&theirs, nobody);
        let e = ensure_dir(&theirs.join("work")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("not root; `chown root:"), "{e}");
        assert!(
            !theirs.join("work").exists(),
            "made inside another's directory"
        );

        let open = base.join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let e = check_dir(&open).unwrap_err();
        assert!(e.to_string().contains("mode 0777"), "{e}");
        // Sticky helps a directory on the way, not the directory itself.
        chmod(&open, 0o1777);
        assert!(check_dir(&open).is_err());
        let inside = open.join("mine");
        ensure_dir(&inside).unwrap();
        chown(&inside, nobody);
        assert!(check_dir(&inside).is_err());
        chown(&inside, 0);
        check_dir(&inside).unwrap();

        // A symlink of another user's, even to a good directory.
        let link = base.join("link");
        std::os::unix::fs::symlink(&made, &link).unwrap();
        check_dir(&link).unwrap();
        chown(&link, nobody);
        let e = check_dir(&link.join("..")).unwrap_err();
        assert!(e.to_string().contains("link belongs to nobody"), "{e}");
        // Through a symlink to another user's directory.
        let to_theirs = base.join("to-theirs");
        std::os::unix::fs::symlink(&theirs, &to_theirs).unwrap();
        assert!(ensure_dir(&to_theirs.join("x")).is_err());
        assert!(!theirs.join("x").exists());

        let file = base.join("file");
        std::fs::write(&file, "").unwrap();
        assert_eq!(
            check_dir(&file).unwrap_err().kind(),
            io::ErrorKind::NotADirectory
        );
        let meta = std::fs::metadata(&file).unwrap();
        check_file(&file, &meta).unwrap();
        chmod(&file, 0o666);
        let meta = std::fs::metadata(&file).unwrap();
        assert!(check_file(&file, &meta).is_err());
        chmod(&file, 0o600);
        chown(&file, nobody);
        let meta = std::fs::metadata(&file).unwrap();
        assert!(check_file(&file, &meta).is_err());
    }
}
