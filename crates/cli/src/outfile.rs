//! Output files (reports, exports, tables; `-` is standard output), written whole or not at
//! all: into a new file made beside the target (`O_EXCL`, a unique hidden name, the mode a
//! plain create gives) and renamed over it once complete. So a failed write keeps the old file
//! as it was, and nothing is written through a symbolic link at the target's path: rename(2)
//! replaces the link itself, the file it points to is untouched (a link there may have been
//! planted, e.g. at `report-run-N.html` beside a database in a shared directory).
//!
//! Replacing the link rather than refusing it: the output lands exactly at the path named, the
//! place the user looks; a planted link can neither redirect it nor, by making fsbench refuse,
//! suppress it. A link the user made on purpose loses its meaning, which fsbench says.
//!
//! A pipe or terminal the user names (`/dev/null`, a FIFO) is written through: it cannot be
//! replaced, and writing to it truncates nothing. As root, only one of root's (or this user's),
//! in a directory no other user can change, reached through links of root's: another user's
//! pipe at a path root writes to would hand them root's output (or hold fsbench up, never
//! reading), and their link could point root's writes at a device (`/dev/mem`). A path through
//! one of fsbench's own descriptors (`/dev/stdout`, `/dev/fd/N`, bash's `>(gzip > f)`) is
//! written to that descriptor, whatever it leads to: the caller handed it over (`sudo fsbench
//! ... | gzip` gives root a pipe of the user's), and a file it leads to is written, never the
//! link replaced (`/dev/stdout` itself). A name fsbench chose itself is never opened: whatever
//! is there is replaced.

use crate::exit::Failure;
use crate::out::{note, stdout_failed};
use anyhow::{anyhow, Context};
use fsbench_report::terminal::printable_path;
use std::fs::{File, Metadata};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Who chose an output's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user, on the command line: a pipe or a character device there is written through.
    User,
    /// fsbench (`report-run-N.html`): whatever is at the path is replaced, never opened.
    Own,
}

/// One output, ready before anything is written to it (a bad path fails before an hour's run,
/// and a refused run leaves the target as it was); [`OutputFile::write`] completes it.
pub struct OutputFile {
    path: PathBuf,
    to: To,
}

enum To {
    Stdout,
    /// A pipe or character device the user named, or (a copy of) one of this process's own
    /// descriptors the path leads to.
    Stream(File),
    /// The new file beside the target; removed again (on drop) unless it was completed.
    Replace(tempfile::NamedTempFile),
}

/// True for `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

fn is_stream(meta: &Metadata) -> bool {
    meta.file_type().is_fifo() || meta.file_type().is_char_device()
}

/// An output path fsbench will not write through as it stands (another user's link, pipe or
/// device, or one in a directory they could change): the user's to change (exit 2), unlike a
/// failure to write.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// The descriptor of this process that `path` leads to (`/dev/stdout`, `/dev/fd/N`,
/// `/proc/self/fd/N`, a link to one), or None: the links are followed one by one until a
/// name in this process's own `/proc/PID/fd` (or a thread's), never by what the descriptor
/// itself leads to.
fn own_descriptor(path: &Path) -> Option<std::os::fd::RawFd> {
    let pid = std::process::id();
    let fds = PathBuf::from(format!("/proc/{pid}/fd"));
    let tasks = PathBuf::from(format!("/proc/{pid}/task"));
    let mut path = std::path::absolute(path).ok()?;
    for _ in 0..40 {
        let dir = path.parent()?.canonicalize().ok()?;
        let name = path.file_name()?;
        let in_task = dir.starts_with(&tasks)
            && dir.components().count() == tasks.components().count() + 2
            && dir.ends_with("fd");
        if dir == fds || in_task {
            return name.to_str()?.parse().ok();
        }
        let next = std::fs::read_link(dir.join(name)).ok()?;
        path = dir.join(next);
    }
    None
}

/// A copy of this process's descriptor `fd` to write to, refused unless open for writing.
fn copy_of(path: &Path, fd: std::os::fd::RawFd) -> anyhow::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_GETFL only reads the descriptor's flags (an unused number fails with EBADF).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(anyhow::Error::new(Refused(format!(
            "{} is descriptor {fd} of fsbench, which is not open for writing: name a file to \
             write",
            path.display()
        ))));
    }
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor, which this function then owns alone.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if copy < 0 {
        return Err(io::Error::last_os_error())
            .with_context(|| format!("cannot write {}", path.display()));
    }
    // SAFETY: `copy` was just made and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(copy) })
}

/// As root, refuses a pipe or device `seen` at `path` that another user could read, hold up
/// or swap: theirs, or in a directory they could change (measure::trust), or reached through a
/// link of theirs. `seen` is what `path` led to (links followed).
fn check_stream(path: &Path, seen: &Metadata) -> anyhow::Result<()> {
    if !fsbench_measure::trust::as_root() {
        return Ok(());
    }
    let refused = |why: String| anyhow::Error::new(Refused(why));
    fsbench_measure::trust::check_links(path).map_err(|e| {
        refused(format!(
            "{} is a link to a pipe or device, and fsbench as root writes through a link only \
             when it is root's: {e}; or name the pipe or device itself",
            path.display()
        ))
    })?;
    if seen.uid() != 0 {
        let owner = fsbench_measure::trust::user_name(seen.uid());
        return Err(refused(format!(
            "{} is a {} of {owner}, not root's, and fsbench as root writes into no other \
             user's (they could read what it writes, or never read and hold it up): run \
             fsbench as {owner} instead, or name a file or a pipe of root's",
            path.display(),
            if seen.file_type().is_fifo() {
                "pipe"
            } else {
                "device"
            },
        )));
    }
    let real = path
        .canonicalize()
        .with_context(|| format!("cannot open {} for writing", path.display()))?;
    if let Some(dir) = real.parent() {
        fsbench_measure::trust::check_shared_dir(dir).map_err(|e| {
            refused(format!(
                "{}: fsbench as root writes into a pipe or device only where no other user \
                 can swap it: {e}",
                path.display()
            ))
        })?;
    }
    Ok(())
}

impl OutputFile {
    /// Prepares the output at `path`. Errors name the path and say what to do.
    pub fn open(path: &Path, origin: Origin) -> anyhow::Result<OutputFile> {
        let to = if is_stdout(path) {
            To::Stdout
        } else {
            match (std::fs::symlink_metadata(path), origin) {
                (Ok(meta), _) if meta.is_dir() => {
                    return Err(anyhow!(
                        "{} is a directory: give the name of a file to write",
                        path.display()
                    ))
                }
                (Ok(meta), Origin::User) if is_stream(&meta) => {
                    check_stream(path, &meta)?;
                    To::Stream(open_stream(path, &meta)?)
                }
                (Ok(meta), Origin::User) if meta.file_type().is_symlink() => {
                    match (own_descriptor(path), std::fs::metadata(path)) {
                        (Some(fd), _) => {
                            // Another user's link to root's descriptor could still point
                            // root's output into its database: links must be root's.
                            if fsbench_measure::trust::as_root() {
                                fsbench_measure::trust::check_links(path).map_err(|e| {
                                    Refused(format!(
                                        "{} is a link to a descriptor of fsbench, and fsbench \
                                         as root writes through a link only when it is \
                                         root's: {e}",
                                        path.display()
                                    ))
                                })?;
                            }
                            To::Stream(copy_of(path, fd)?)
                        }
                        (None, Ok(target)) if is_stream(&target) => {
                            check_stream(path, &target)?;
                            To::Stream(open_stream(path, &target)?)
                        }
                        _ => To::Replace(beside(path, None)?),
                    }
                }
                (Ok(meta), Origin::User) if !meta.is_file() => {
                    return Err(anyhow!(
                        "{} is neither a file nor a pipe: give the name of a file to write",
                        path.display()
                    ))
                }
                (Ok(meta), _) if meta.is_file() => To::Replace(beside(path, Some(&meta))?),
                (Ok(_) | Err(_), _) => To::Replace(beside(path, None)?),
            }
        };
        Ok(OutputFile {
            path: path.to_path_buf(),
            to,
        })
    }

    /// Writes the output with `fill` and completes it: the new file is synced and renamed over
    /// the target. On standard output a closed pipe (`| head`) is the reader's choice, not an
    /// error: the output ends there.
    pub fn write(self, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Failure> {
        let path = self.path;
        match self.to {
            To::Stdout => {
                let mut out = BufWriter::new(io::stdout().lock());
                match fill(&mut out).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                    Err(e) => Err(stdout_failed(e)),
                    Ok(()) => Ok(()),
                }
            }
            To::Stream(file) => {
                let mut out = BufWriter::new(file);
                match fill(&mut out).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                    other => Ok(other.with_context(|| format!("cannot write {}", path.display()))?),
                }
            }
            To::Replace(temp) => {
                let mut out = BufWriter::new(temp);
                fill(&mut out)
                    .and_then(|()| out.flush())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let temp = out
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                // On disk before it replaces the old file: a crash leaves one or the other.
                temp.as_file()
                    .sync_all()
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let link = std::fs::read_link(&path).ok();
                temp.persist(&path)
                    .map_err(|e| e.error)
                    .with_context(|| format!("cannot replace {}", path.display()))?;
                if let Some(link) = link {
                    let (path, link) = (printable_path(&path), printable_path(&link));
                    note!("fsbench: {path} was a symbolic link (to {link}): it is now the file written; {link} is untouched");
                }
                Ok(())
            }
        }
    }
}

/// Prepares `path` and writes it: [`OutputFile::open`], then [`OutputFile::write`].
pub fn write_file(
    path: &Path,
    origin: Origin,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    OutputFile::open(path, origin)
        .map_err(|e| {
            if e.is::<Refused>() {
                Failure::usage(e)
            } else {
                Failure::failed(e)
            }
        })?
        .write(fill)
}

/// A pipe or character device the user named, opened for writing without creating anything;
/// what was opened is checked again: the very file `seen` when the name was looked at (it may
/// have changed since).
fn open_stream(path: &Path, seen: &Metadata) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .with_context(|| format!("cannot open {} for writing", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot open {} for writing", path.display()))?;
    if !is_stream(&meta)
        || meta.dev() != seen.dev()
        || meta.ino() != seen.ino()
        || meta.uid() != seen.uid()
    {
        return Err(anyhow!(
            "{} changed while fsbench opened it; run the command again",
            path.display()
        ));
    }
    Ok(file)
}

/// A new file in the target's directory, created exclusively under a unique hidden name with
/// the mode a plain create gives (0666 less the umask), or, replacing a file, that file's mode
/// and (where this process may give it) owner.
fn beside(path: &Path, old: Option<&Metadata>) -> anyhow::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{}: give the name of a file to write", path.display()))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "cannot create a file in {} to write {} (pass a path in an existing, writable directory)",
                dir.display(),
                path.display()
            )
        })?;
    if let Some(old) = old {
        let file = temp.as_file();
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
        file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o777))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(temp)
}

/// Refuses two outputs of one command that would replace the same file (the second would
/// silently take the first's place): paths are compared with their directories resolved, the
/// way they are written (a link at the path is replaced, not followed, so it is a file of its
/// own). Standard output and pipes or devices may take several outputs, one after another.
pub fn distinct(outputs: &[(&str, Option<&Path>)]) -> Result<(), Failure> {
    let mut seen: Vec<(&str, &Path, PathBuf)> = Vec::new();
    for (flag, path) in outputs {
        let Some(path) = path else { continue };
        if is_stdout(path)
            || own_descriptor(path).is_some()
            || std::fs::metadata(path).is_ok_and(|m| is_stream(&m))
        {
            continue;
        }
        let key = resolved(path);
        if let Some((first, first_path, _)) = seen.iter().find(|(_, _, k)| *k == key) {
            return Err(Failure::usage(anyhow!(
                "{first} {} and {flag} {} are the same file: give each output a file of its own",
                first_path.display(),
                path.display()
            )));
        }
        seen.push((flag, path, key));
    }
    Ok(())
}

/// `path` with its directory resolved (links, `..`), its last component as given.
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(name),
        _ => absolute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, origin: Origin, text: &str) -> Result<(), Failure> {
        write_file(path, origin, |out| out.write_all(text.as_bytes()))
    }

    #[test]
    fn a_file_is_replaced_whole_and_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        write(&path, Origin::User, "first").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&path, Origin::User, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // A failed write keeps the old file and leaves no temporary file.
        let failed = write_file(&path, Origin::User, |out| {
            out.write_all(b"partial")?;
            Err(io::Error::other("the exporter failed"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_link_at_the_path_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        for origin in [Origin::User, Origin::Own] {
            let path = dir.path().join(format!("report-{origin:?}.html"));
            std::os::unix::fs::symlink(&victim, &path).unwrap();
            write(&path, origin, "report").unwrap();
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
            assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "report");
        }
        // A dangling link, too.
        let path = dir.path().join("dangling.html");
        std::os::unix::fs::symlink(dir.path().join("nothing"), &path).unwrap();
        write(&path, Origin::Own, "report").unwrap();
        assert!(!dir.path().join("nothing").exists());
    }

    #[test]
    fn a_device_the_user_names_is_written_through_and_one_fsbench_named_is_not() {
        write(Path::new("/dev/null"), Origin::User, "x").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("report-run-1.html");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        write(&link, Origin::Own, "x").unwrap();
        assert!(std::fs::metadata(&link).unwrap().is_file());
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        let e = write(dir.path(), Origin::User, "x").unwrap_err();
        assert!(
            e.error.to_string().contains("is a directory"),
            "{:#}",
            e.error
        );
    }

    /// As root, a link to a device or pipe is followed only when it is root's: another
    /// user's is refused, saying whose it is and what to do, and the link stays as it was.
    #[test]
    #[allow(clippy::print_stderr)] // the test's own note that it was skipped, not fsbench's output
    fn as_root_a_link_of_another_users_to_a_device_is_not_followed() {
        if !fsbench_measure::trust::as_root() {
            eprintln!("skipped: needs root (lchown)");
            return;
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let link = dir.path().join("out.csv");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
        let e = write(&link, Origin::User, "x").unwrap_err();
        let said = format!("{:#}", e.error);
        assert!(
            said.contains("is a link to a pipe or device")
                && said.contains("belongs to nobody")
                && said.contains(&format!("`chown -h root: {}`", link.display())),
            "{said}"
        );
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/dev/null"));
        std::os::unix::fs::lchown(&link, Some(0), None).unwrap();
        write(&link, Origin::User, "x").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }

    #[test]
    fn the_same_file_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.out");
        let again = dir.path().join(".").join("a.out");
        let e = distinct(&[("--json", Some(&a)), ("--csv", Some(&again))]).unwrap_err();
        assert_eq!(e.code, crate::exit::USAGE);
        assert!(
            e.error.to_string().contains("are the same file"),
            "{}",
            e.error
        );
        let b = dir.path().join("b.out");
        let dash = Path::new("-");
        distinct(&[("--json", Some(&a)), ("--csv", Some(&b)), ("--x", None)]).unwrap();
        distinct(&[("--json", Some(dash)), ("--csv", Some(dash))]).unwrap();
        let null = Path::new("/dev/null");
        distinct(&[("--json", Some(null)), ("--csv", Some(null))]).unwrap();
    }
}
