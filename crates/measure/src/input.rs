//! Bounded reads of the files a user names as input (a loadfile, a plan): a regular file under
//! a size limit, refused before anything is read otherwise. fsbench runs as root, and read
//! whole, `/dev/zero` or `/dev/urandom` would take all memory, a FIFO would block forever, a
//! 10 GB sparse file would be read for minutes, and opening a device can act on the host
//! (a watchdog arms when opened).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Reads the regular file at `path` (symlinks followed) as UTF-8 text of at most `limit`
/// bytes. Each error names the path and says what to give instead, `what` naming the input
/// there ("a loadfile", "a plan"): a file that is not regular (a directory, a device, a FIFO, a
/// socket; kind `InvalidInput`) is refused from its inode alone, without ever being opened for
/// reading; one over `limit` (kind `InvalidInput`) from its size; one that is not UTF-8 (kind
/// `InvalidData`) after the read. Errors of the system keep their kind (`NotFound`,
/// `PermissionDenied`).
pub fn read_regular(path: &Path, limit: u64, what: &str) -> io::Result<String> {
    let shown = path.display();
    let context = |e: io::Error| io::Error::new(e.kind(), format!("cannot read {shown}: {e}"));
    // O_PATH names the inode without opening it: no driver's open runs, and no FIFO waits for
    // a writer. Only a regular file is then opened, through this descriptor, so what is read
    // is the inode looked at even if the name is replaced in between.
    let probe = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
        .map_err(context)?;
    let kind = probe.metadata().map_err(context)?.file_type();
    let other = if kind.is_dir() {
        Some("a directory")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_socket() {
        Some("a socket")
    } else if !kind.is_file() {
        Some("not a file")
    } else {
        None
    };
    if let Some(other) = other {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{shown} is {other}, not a regular file: give {what} that is a regular file (at most {})",
                crate::units::human_bytes(limit)
            ),
        ));
    }
    let mut file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(format!("/proc/self/fd/{}", probe.as_raw_fd()))
        .map_err(context)?;
    let size = file.metadata().map_err(context)?.len();
    let too_big = |size: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{shown} is {size}, over the {} {what} may have: give a smaller one",
                crate::units::human_bytes(limit)
            ),
        )
    };
    if size > limit {
        return Err(too_big(crate::units::human_bytes(size)));
    }
    // The size may change while it is read: at most one byte more than the limit is read.
    let mut bytes = Vec::with_capacity(size as usize);
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(context)?;
    if bytes.len() as u64 > limit {
        return Err(too_big("growing".into()));
    }
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{shown} is not text (not UTF-8 at byte {}): give {what} that is text",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_regular_file_under_the_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("load.txt");
        std::fs::write(&file, "Close 1 NT_STATUS_OK\n").unwrap();
        assert_eq!(
            read_regular(&file, 64, "a loadfile").unwrap(),
            "Close 1 NT_STATUS_OK\n"
        );
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_regular(&link, 21, "a loadfile").unwrap().len(), 21);
        let e = read_regular(&file, 20, "a loadfile").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(
            e.to_string()
                .contains("is 21 B, over the 20 B a loadfile may have: give a smaller one"),
            "{e}"
        );
        let missing = read_regular(&dir.path().join("none"), 64, "a plan").unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(
            missing.to_string().starts_with("cannot read /"),
            "{missing}"
        );
        std::fs::write(&file, b"\xff\xfe").unwrap();
        let e = read_regular(&file, 64, "a loadfile").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    /// Each is refused at once, without reading: a device of endless bytes, a FIFO nobody
    /// writes (an open for reading would wait for a writer), a directory, a sparse file of
    /// 10 GB (its size alone).
    #[test]
    fn what_is_not_a_small_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let sparse = dir.path().join("sparse");
        File::create(&sparse)
            .unwrap()
            .set_len(10_000_000_000)
            .unwrap();
        for (path, says) in [
            (
                Path::new("/dev/zero"),
                "is a character device, not a regular file",
            ),
            (
                Path::new("/dev/urandom"),
                "is a character device, not a regular file",
            ),
            (&fifo, "is a FIFO (named pipe), not a regular file"),
            (dir.path(), "is a directory, not a regular file"),
            (&sparse, "is 9.3 GiB, over the 64 MiB a loadfile may have"),
        ] {
            let started = Instant::now();
            let e = read_regular(path, 64 << 20, "a loadfile").unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(1), "{path:?}");
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
            assert!(e.to_string().contains(says), "{e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("{} is ", path.display())),
                "{e}"
            );
        }
    }
}
