//! Errors of the workload layer. Every message is one line that says what went wrong and what
//! to change.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum WorkloadError {
    /// A setting is wrong (sizes, tests, options); nothing was touched. `field` is the
    /// setting's name, which is its plan key; the command line names its flag instead.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    /// The directory to run in cannot be used (missing, not a directory, not writable).
    #[error("{0}")]
    Directory(String),
    /// An operation on the filesystem failed.
    #[error("cannot {action} {}{context}: {source}{hint}", path.display())]
    Io {
        action: String,
        path: PathBuf,
        /// Where it happened (" during rewrite (file 64m, record 4k)"), or empty.
        context: String,
        source: io::Error,
        /// What to do, after "; " (empty when the system error says all there is).
        hint: String,
    },
    /// A task of the task chain failed or cannot run here; the message says which and why.
    #[error("{0}")]
    Task(String),
    /// The harness could not do what the workload asked of it (a cold cache, an eviction);
    /// the message says what and why.
    #[error("{0}")]
    Harness(String),
    /// A program a workload runs (dbench, a shell's commands) is missing or failed; the
    /// message says which, why and what to install.
    #[error("{0}")]
    Tool(String),
    /// A stop was requested (Ctrl-C); finished results are kept.
    #[error("interrupted")]
    Interrupted,
    /// Verified data read back other than it was written (`crate::verify`): the message names
    /// the file, the block's offset, what was expected and found.
    #[error("corrupt: {0}")]
    Corrupt(String),
    /// Another rank of a scale-out job did not finish, or the ranks' results cannot be merged;
    /// the message names the ranks and their hosts.
    #[error("{0}")]
    Job(String),
}

impl WorkloadError {
    /// True when the user can fix this by changing the command line (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            WorkloadError::Invalid { .. } | WorkloadError::Directory(_)
        )
    }

    /// A wrong setting: `field` is its name (plan key), `message` what is wrong and allowed.
    pub fn invalid(field: &'static str, message: impl Into<String>) -> WorkloadError {
        WorkloadError::Invalid {
            field,
            message: message.into(),
        }
    }

    /// The message with the setting named by `name(field)` (a flag, a plan key) in front.
    pub fn naming(&self, name: impl Fn(&str) -> String) -> String {
        match self {
            WorkloadError::Invalid { field, message } => format!("{}: {message}", name(field)),
            other => other.to_string(),
        }
    }

    /// An I/O error on `path`, with advice chosen from the errno (and, for a full
    /// filesystem, from what ran out on the filesystem of `path`).
    pub fn io(action: impl fmt::Display, path: &Path, source: io::Error) -> WorkloadError {
        WorkloadError::io_in(action, path, path, source)
    }

    /// As [`WorkloadError::io`], for a `name` shown as it is (relative: an archive's entry,
    /// a name in a tree) that lives in `dir`, whose filesystem the advice looks at.
    pub fn io_in(
        action: impl fmt::Display,
        dir: &Path,
        name: &Path,
        source: io::Error,
    ) -> WorkloadError {
        let hint = match hint_for(&source, &dir.join(name)) {
            h if h.is_empty() => h,
            h => format!("; {h}"),
        };
        WorkloadError::Io {
            action: action.to_string(),
            path: name.to_path_buf(),
            context: String::new(),
            source,
            hint,
        }
    }

    /// Adds where an I/O error happened; other errors are returned unchanged.
    pub fn during(mut self, where_: impl fmt::Display) -> WorkloadError {
        match &mut self {
            WorkloadError::Io { context, .. } => *context = format!(" during {where_}"),
            WorkloadError::Corrupt(message) => *message = format!("{message} (after {where_})"),
            _ => {}
        }
        self
    }
}

fn hint_for(error: &io::Error, path: &Path) -> String {
    let full = error.raw_os_error() == Some(libc::ENOSPC)
        || (error.raw_os_error().is_none() && error.kind() == io::ErrorKind::StorageFull);
    if full {
        return what_ran_out(path);
    }
    match error.raw_os_error() {
        Some(libc::EDQUOT) => "the disk quota is exhausted: raise it or measure smaller files",
        Some(libc::EROFS) => "the filesystem is mounted read-only: pass a writable --dir",
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "permission denied: pass a directory this user may write to"
        }
        Some(libc::ENOENT) => "it does not exist: create it or pass another --dir",
        Some(libc::ENOTDIR) => "a path component is not a directory: pass a directory as --dir",
        Some(libc::EINVAL) => {
            "the filesystem refused the request (with --direct: it may not support O_DIRECT, or the record size is not a multiple of its block size)"
        }
        Some(libc::EIO) => "the device reported an I/O error: check `dmesg`",
        Some(libc::EMFILE) | Some(libc::ENFILE) => "too many open files: raise `ulimit -n`",
        _ if error.kind() == io::ErrorKind::UnexpectedEof => {
            "the file is shorter than expected: another process may have truncated it"
        }
        // The system error says it all.
        _ => "",
    }
    .to_string()
}

/// ENOSPC means no free blocks or no free inodes: statvfs of the filesystem of `path` (its
/// nearest existing parent) tells which, and the advice differs.
fn what_ran_out(path: &Path) -> String {
    use fsbench_measure::units::human_bytes;
    match path.ancestors().find_map(crate::fileio::free_space) {
        Some((free, 0)) => format!(
            "the filesystem has no free inodes left ({} of space is still free): remove files, make fewer, or make the filesystem with more inodes (a bigger --size, or mkfs's -N or -i)",
            human_bytes(free)
        ),
        Some((free, _)) => format!(
            "the filesystem is full ({} free): free space on it or measure smaller files",
            human_bytes(free)
        ),
        None => "the filesystem is full (of space or of inodes: `df -h` and `df -i` tell): free space on it or measure smaller files".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_one_line_with_advice() {
        let e = WorkloadError::io(
            "write",
            Path::new("/x/f"),
            io::Error::from_raw_os_error(libc::ENOSPC),
        );
        let text = e.to_string();
        assert!(
            text.starts_with("cannot write /x/f: No space left on device"),
            "{text}"
        );
        assert!(text.contains("measure smaller files"), "{text}");
        assert!(!text.contains('\n'));
        assert!(!e.is_usage());
        assert!(WorkloadError::invalid("x", "y").is_usage());
        // No advice where there is none to give (there is no "system error above").
        let e = WorkloadError::io(
            "extract",
            Path::new("a/b"),
            io::Error::other("it leads out"),
        );
        assert_eq!(e.to_string(), "cannot extract a/b: it leads out");
        // A full disk whose errno was lost on the way still gets the advice.
        let e = WorkloadError::io(
            "write",
            Path::new("/x/f"),
            io::Error::new(io::ErrorKind::StorageFull, "full"),
        );
        assert!(e.to_string().contains("the filesystem is full"), "{e}");
    }

    #[test]
    fn a_full_disk_with_free_inodes_is_about_space() {
        // This directory's filesystem has both (inodes are made on demand, or some are
        // free): the advice is about space, with what is free.
        let dir = tempfile::tempdir().unwrap();
        let e = WorkloadError::io_in(
            "create",
            dir.path(),
            Path::new("not/made/yet"),
            io::Error::from_raw_os_error(libc::ENOSPC),
        );
        let text = e.to_string();
        assert!(
            text.starts_with("cannot create not/made/yet: No space left on device"),
            "{text}"
        );
        assert!(text.contains("the filesystem is full ("), "{text}");
        assert!(text.contains(" free): free space on it"), "{text}");
    }
}
