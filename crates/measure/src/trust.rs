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
    walk(dir, Rules::OWN).map(drop)
}

/// Like [`check_dir`], creating `dir` and any missing directory on the way (mode 0755) first.
/// Each existing component is checked before anything is made inside it, so nothing is ever
/// created through another user's directory or symlink.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    walk(
        dir,
        Rules {
            create: true,
            ..Rules::OWN
        },
    )
    .map(drop)
}

/// Checks a directory of the user's that root works in by name (a workload's `--dir`): like
/// [`check_dir`], except that the directory itself may be a sticky one anyone may add names to
/// (`/tmp`), since what fsbench makes there it makes under new names (`O_EXCL`, mkdtemp) and
/// nobody may rename or remove what root owns in it. An error names the component and says to
/// run fsbench as its owner, or to `chown`/`chmod` it.
pub fn check_shared_dir(dir: &Path) -> io::Result<()> {
    walk(dir, Rules::SHARED).map(drop)
}

/// Checks the way to a file root opens by name and may create (a results database): every
/// directory on the way as [`check_shared_dir`] checks one, and every symlink, the file's own
/// included, of root or this user. The file itself may be missing; missing directories on the
/// way are made (0755), each checked before anything is made in it, as [`ensure_dir`] does.
pub fn check_file_path(path: &Path) -> io::Result<()> {
    walk(
        path,
        Rules {
            create: true,
            last: Last::Any,
            ..Rules::SHARED
        },
    )
    .map(drop)
}

/// Checks only the symlinks on the way to `path` (the last component's included): each must
/// belong to root or this user, or what `path` names is another user's choice (a link planted
/// beside a report, pointing at a device). Directories are not looked at; `path` may be missing.
pub fn check_links(path: &Path) -> io::Result<()> {
    walk(
        path,
        Rules {
            dirs: false,
            last: Last::Any,
            ..Rules::SHARED
        },
    )
    .map(drop)
}

/// Whether this process runs as root (where these checks matter: root may write anywhere).
pub fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Checks a file fsbench is about to obey (a ledger): a regular file of a trusted user that
/// nobody else may write. `meta` comes from the open file (fstat), not from its path.
pub fn check_file(path: &Path, meta: &Metadata) -> io::Result<()> {
    check_regular(path, meta, Rules::OWN)
}

/// Checks a file of the user's that root writes to and reads back what it then acts on (a
/// results database, whose stored plan `--resume` runs, and SQLite's files beside it): a
/// regular file of root or this user that nobody else may write. `meta` comes from lstat or
/// fstat. The fix named is to run fsbench as the file's owner, or `chown`/`chmod` it.
pub fn check_user_file(path: &Path, meta: &Metadata) -> io::Result<()> {
    check_regular(path, meta, Rules::SHARED)
}

fn check_regular(path: &Path, meta: &Metadata, rules: Rules) -> io::Result<()> {
    if !meta.file_type().is_file() {
        return Err(untrusted(path, "is not a regular file".to_string()));
    }
    check_owner(path, meta, rules)?;
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

/// What a walk asks of the path.
#[derive(Clone, Copy)]
struct Rules {
    /// Make missing directories (0755), each checked before anything is made in it.
    create: bool,
    /// Check directories' owners and modes (else only symlinks' owners).
    dirs: bool,
    last: Last,
    /// Whether the fix for another user's component may be to run fsbench as that user (the
    /// user's own directory or file), or only to give it to root (fsbench's own directory).
    theirs_ok: bool,
}

/// What the path's last component must be.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    /// A directory nobody else may add names to.
    OwnDir,
    /// A directory that may be a sticky one anyone adds names to.
    SharedDir,
    /// Anything, or nothing yet.
    Any,
}

impl Rules {
    const OWN: Rules = Rules {
        create: false,
        dirs: true,
        last: Last::OwnDir,
        theirs_ok: false,
    };
    const SHARED: Rules = Rules {
        create: false,
        dirs: true,
        last: Last::SharedDir,
        theirs_ok: true,
    };
}

/// Follows `path` as the kernel would, one component at a time, checking each by `rules`.
fn walk(path: &Path, rules: Rules) -> io::Result<()> {
    let absolute = std::path::absolute(path)?;
    let mut pending: Vec<OsString> = Vec::new();
    push_front(&mut pending, &absolute);
    let mut at = PathBuf::from("/");
    let mut hops = 0;
    if rules.dirs {
        check_directory(&at, &std::fs::metadata(&at)?, false, rules)?;
    }
    while let Some(name) = pending.pop() {
        if name == ".." {
            // `at` is always a real directory (symlinks resolved): its parent is the real one.
            at.pop();
            continue;
        }
        let next = at.join(&name);
        let last = pending.is_empty();
        let meta = match std::fs::symlink_metadata(&next) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && last && rules.last == Last::Any => {
                // A file not made yet: the way to it is checked.
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && rules.create => {
                match std::fs::DirBuilder::new().mode(0o755).create(&next) {
                    Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                    // Made now, or by someone else in between: checked below either way.
                    _ => std::fs::symlink_metadata(&next)?,
                }
            }
            other => other?,
        };
        if meta.file_type().is_symlink() {
            check_owner(&next, &meta, rules)?;
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
            if last && rules.last == Last::Any {
                return Ok(());
            }
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", next.display()),
            ));
        }
        if rules.dirs {
            check_directory(&next, &meta, false, rules)?;
        }
        at = next;
    }
    if rules.last == Last::OwnDir {
        // The directory itself, whichever way the walk reached it: nobody else may add names.
        check_directory(&at, &std::fs::metadata(&at)?, true, rules)?;
    }
    Ok(())
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

fn check_directory(path: &Path, meta: &Metadata, itself: bool, rules: Rules) -> io::Result<()> {
    check_owner(path, meta, rules)?;
    let mode = meta.mode();
    let sticky = mode & libc::S_ISVTX != 0;
    if mode & 0o022 != 0 && (itself || !sticky) {
        return Err(untrusted(
            path,
            format!(
                "can be written by its group or others (mode {:04o}); `chmod go-w {}`{}, or use \
                 another directory",
                mode & 0o7777,
                path.display(),
                if rules.theirs_ok && !itself {
                    " (or `chmod +t`: a sticky directory is fine)"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(())
}

fn check_owner(path: &Path, meta: &Metadata, rules: Rules) -> io::Result<()> {
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
    // A symlink's own owner: plain chown would change the file it points to.
    let chown = format!(
        "`chown {}{} {}`",
        if meta.file_type().is_symlink() {
            "-h "
        } else {
            ""
        },
        if me == 0 {
            "root:".to_string()
        } else {
            me.to_string()
        },
        path.display()
    );
    let fix = if rules.theirs_ok {
        format!("run fsbench as {} instead, or {chown}", user_name(owner))
    } else {
        format!("{chown}, or use another directory")
    };
    Err(untrusted(
        path,
        format!("belongs to {}, not {whom}; {fix}", user_name(owner)),
    ))
}

fn untrusted(path: &Path, why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} {why} (another user could swap what fsbench makes or opens there)",
            path.display()
        ),
    )
}

/// `name (uid N)`, or `uid N` when the user has no name.
pub fn user_name(uid: u32) -> String {
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

    /// The directory a workload runs in and the way to a database root opens: the user's own
    /// are refused with the fix (run as the user, or chown/chmod the component named), a sticky
    /// directory of root's (/var/tmp) is fine, a non-sticky writable one is not; a symlink of
    /// another user's is refused wherever it is, and only symlinks count for `check_links`.
    #[test]
    fn a_shared_directory_and_the_way_to_a_file_refuse_what_another_user_controls() {
        if !root() {
            eprintln!("skipped: needs root (chown)");
            return;
        }
        let base = tempfile::tempdir_in("/var/tmp").unwrap();
        let base = base.path();
        check_shared_dir(Path::new("/var/tmp")).unwrap();
        check_shared_dir(base).unwrap();
        let nobody = 65534;

        let theirs = base.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chown(&theirs, nobody);
        let e = check_shared_dir(&theirs).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        let said = e.to_string();
        assert!(
            said.contains(&format!("{} belongs to nobody", theirs.display()))
                && said.contains("run fsbench as nobody")
                && said.contains(&format!("`chown root: {}`", theirs.display())),
            "{said}"
        );
        let e = check_file_path(&theirs.join("results.db")).unwrap_err();
        assert!(e.to_string().contains("belongs to nobody"), "{e}");
        // Inside another user's directory, even a directory of root's.
        let inner = theirs.join("inner");
        std::fs::create_dir(&inner).unwrap();
        assert!(check_shared_dir(&inner).is_err());

        let open = base.join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let e = check_shared_dir(&open).unwrap_err();
        assert!(e.to_string().contains("mode 0777"), "{e}");
        assert!(check_file_path(&open.join("results.db")).is_err());
        chmod(&open, 0o775);
        assert!(check_shared_dir(&open).is_err(), "group-writable");
        chmod(&open, 0o1777);
        check_shared_dir(&open).unwrap();
        check_file_path(&open.join("results.db")).unwrap();

        // A symlink of another user's at the file's name, even to a good place; root's is
        // followed and the place it leads to checked.
        let db = open.join("planted.db");
        std::os::unix::fs::symlink(base.join("elsewhere.db"), &db).unwrap();
        chown(&db, nobody);
        let e = check_file_path(&db).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("`chown -h root: {}`", db.display())),
            "{e}"
        );
        assert!(check_links(&db).is_err());
        chown(&db, 0);
        check_file_path(&db).unwrap();
        check_links(&db).unwrap();
        let to_theirs = base.join("to-theirs.db");
        std::os::unix::fs::symlink(theirs.join("x.db"), &to_theirs).unwrap();
        assert!(check_file_path(&to_theirs).is_err());
        // Only links count for check_links: a file in another user's directory passes.
        check_links(&theirs.join("x.db")).unwrap();
        check_links(Path::new("/dev/stdout")).unwrap();
        // Missing directories on the way to a file are made, and checked.
        let deep = base.join("a/b/results.db");
        check_file_path(&deep).unwrap();
        assert!(base.join("a/b").is_dir() && !deep.exists());
        assert!(check_file_path(&theirs.join("made/results.db")).is_err());
        assert!(
            !theirs.join("made").exists(),
            "made inside another's directory"
        );
    }
}
