//! Copying an image: a reflink where the filesystem shares blocks, else its data ranges only,
//! holes left holes ([`copy_image`], what `RealSystem` does for an aged image's copy), and
//! those data ranges ([`data_ranges`], also what an image's fingerprint reads).

pub use fsbench_model::target::CopyInfo;
use std::io;
use std::path::Path;

/// FICLONE: _IOW(0x94, 9, int).
const FICLONE: libc::c_ulong = 0x4004_9409;

/// Copies the image `from` to a new file `to` (refused when something is at `to`): a reflink
/// where the filesystem shares blocks, else its data ranges only (`copy_file_range`, or read
/// and write), leaving its holes holes. A failed copy leaves nothing at `to`.
pub fn copy_image(from: &Path, to: &Path) -> io::Result<CopyInfo> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let started = std::time::Instant::now();
    let source = open_no_follow(from)?;
    let len = source.metadata()?.len();
    let target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)?;
    let copied = (|| {
        // SAFETY: FICLONE takes the source descriptor; both are open files of this function.
        let rc = unsafe { libc::ioctl(target.as_raw_fd(), FICLONE as _, source.as_raw_fd()) };
        if rc == 0 {
            return Ok(("reflink", 0));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::EXDEV | libc::EINVAL | libc::ENOTTY | libc::ENOSYS) => {}
            _ => return Err(e),
        }
        target.set_len(len)?;
        sparse_copy(&source, &target, len)
    })();
    match copied {
        Ok((method, data_bytes)) => Ok(CopyInfo {
            method: method.to_string(),
            elapsed_ns: started.elapsed().as_nanos() as u64,
            data_bytes,
        }),
        Err(e) => {
            drop(target);
            let _ = std::fs::remove_file(to);
            Err(e)
        }
    }
}

/// The data ranges of `source` (SEEK_DATA to SEEK_HOLE), each copied at its offset.
pub(crate) fn data_ranges(source: &std::fs::File, len: u64) -> io::Result<Vec<(u64, u64)>> {
    use std::os::fd::AsRawFd;
    let fd = source.as_raw_fd();
    let mut ranges = Vec::new();
    let mut offset = 0u64;
    while offset < len {
        // SAFETY: lseek on a descriptor the caller owns.
        let start = unsafe { libc::lseek(fd, offset as libc::off_t, libc::SEEK_DATA) };
        if start < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                // No data after `offset`.
                Some(libc::ENXIO) => Ok(ranges),
                // A filesystem without SEEK_DATA: everything is data.
                Some(libc::EINVAL) if offset == 0 => Ok(vec![(0, len)]),
                _ => Err(e),
            };
        }
        // SAFETY: as above.
        let end = unsafe { libc::lseek(fd, start, libc::SEEK_HOLE) };
        if end < 0 {
            return Err(io::Error::last_os_error());
        }
        let (start, end) = (start as u64, (end as u64).min(len));
        if end > start {
            ranges.push((start, end));
        }
        offset = end.max(start + 1);
    }
    Ok(ranges)
}

fn sparse_copy(
    source: &std::fs::File,
    target: &std::fs::File,
    len: u64,
) -> io::Result<(&'static str, u64)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    let mut method = "sparse copy (copy_file_range)";
    let mut data = 0;
    let mut buf = Vec::new();
    for (start, end) in data_ranges(source, len)? {
        let mut at = start;
        while at < end && method.contains("copy_file_range") {
            let (mut off_in, mut off_out) = (at as libc::loff_t, at as libc::loff_t);
            // SAFETY: both descriptors are open; the offsets are this function's.
            let n = unsafe {
                libc::copy_file_range(
                    source.as_raw_fd(),
                    &mut off_in,
                    target.as_raw_fd(),
                    &mut off_out,
                    (end - at) as usize,
                    0,
                )
            };
            if n > 0 {
                at += n as u64;
                continue;
            }
            let e = io::Error::last_os_error();
            match (n, e.raw_os_error()) {
                (0, _) => break,
                (_, Some(libc::EXDEV | libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL)) => {
                    method = "sparse copy (read/write)"
                }
                _ => return Err(e),
            }
        }
        if at < end {
            buf.resize(1 << 20, 0);
            while at < end {
                let n = ((end - at) as usize).min(buf.len());
                source.read_exact_at(&mut buf[..n], at)?;
                target.write_all_at(&buf[..n], at)?;
                at += n as u64;
            }
        }
        data += end - start;
    }
    Ok((method, data))
}

/// Opens a file for reading (an image, a file of the image cache): never through a symlink,
/// only a regular file.
pub(crate) fn open_no_follow(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}
