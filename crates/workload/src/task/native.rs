//! The tasks done natively, in this process, so they measure the filesystem alone: extraction
//! of an archive already in memory (no decompressor on the clock), reading every byte of every
//! file, removing a tree, copying a file with read/write (no copy_file_range, so never a
//! reflink). The timed loops make system calls on names already in memory or in the
//! getdents64 buffer, and allocate nothing.

use crate::fileio::at;
use crate::StopFlag;
use std::ffi::{CStr, CString};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;

/// An archive's entries held in memory: names NUL-terminated, file contents in one buffer.
#[derive(Debug, Default)]
pub struct Loaded {
    pub entries: Vec<LoadedEntry>,
    pub data: Vec<u8>,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
}

#[derive(Debug)]
pub struct LoadedEntry {
    pub kind: EntryKind,
    pub path: CString,
    pub mode: u32,
    pub mtime: i64,
    /// File contents: `data[start..start + len]`; a symlink's target in `link`.
    pub start: usize,
    pub len: usize,
    pub link: CString,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    /// Hard links, devices, fifos: skipped (counted in `skipped`).
    Other,
}

/// Reads a (decompressed) tar stream into memory. Paths that escape (`..`, absolute) are
/// refused, as GNU tar refuses them.
pub fn load(archive: impl Read) -> io::Result<Loaded> {
    let mut loaded = Loaded::default();
    let mut archive = tar::Archive::new(archive);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let header = entry.header();
        let kind = match header.entry_type() {
            tar::EntryType::Directory => EntryKind::Dir,
            tar::EntryType::Regular | tar::EntryType::Continuous => EntryKind::File,
            tar::EntryType::Symlink => EntryKind::Symlink,
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => continue,
            _ => EntryKind::Other,
        };
        let mode = header.mode().unwrap_or(0o644);
        let mtime = header.mtime().unwrap_or(0) as i64;
        let path = entry.path()?.into_owned();
        if path.is_absolute()
            || path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the archive holds a path outside its directory: {}",
                    path.display()
                ),
            ));
        }
        let text = path.to_string_lossy().trim_end_matches('/').to_string();
        if text.is_empty() || text == "." {
            continue;
        }
        let link = entry
            .link_name()?
            .map(|l| l.to_string_lossy().into_owned())
            .unwrap_or_default();
        let start = loaded.data.len();
        if kind == EntryKind::File {
            entry.read_to_end(&mut loaded.data)?;
        }
        let len = loaded.data.len() - start;
        match kind {
            EntryKind::Dir => loaded.dirs += 1,
            EntryKind::File => {
                loaded.files += 1;
                loaded.bytes += len as u64;
            }
            EntryKind::Symlink => loaded.symlinks += 1,
            EntryKind::Other => {}
        }
        loaded.entries.push(LoadedEntry {
            kind,
            path: CString::new(text).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?,
            mode,
            mtime,
            start,
            len,
            link: CString::new(link).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?,
        });
    }
    Ok(loaded)
}

/// A failure inside a native task: what was done to which name.
#[derive(Debug)]
pub struct Failed {
    pub action: &'static str,
    pub name: String,
    pub error: io::Error,
}

fn failed(action: &'static str, name: &CStr, error: io::Error) -> Failed {
    Failed {
        action,
        name: name.to_string_lossy().into_owned(),
        error,
    }
}

/// Creates every entry below `root` (a directory fd): directories, files with their contents
/// and modification times, symlinks. Parents that the archive does not list are made on the
/// way. Returns false when stopped.
pub fn extract(loaded: &Loaded, root: RawFd, stop: &StopFlag) -> Result<bool, Failed> {
    for (i, e) in loaded.entries.iter().enumerate() {
        if i % 256 == 0 && stop.is_requested() {
            return Ok(false);
        }
        match e.kind {
            EntryKind::Dir => match at::mkdirat(root, &e.path) {
                Ok(()) => {}
                Err(err) if err.raw_os_error() == Some(libc::EEXIST) => {}
                Err(err) => return Err(failed("create the directory", &e.path, err)),
            },
            EntryKind::File => {
                let fd = at::openat(
                    root,
                    &e.path,
                    libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOCTTY,
                    (e.mode & 0o7777) as libc::mode_t,
                )
                .map_err(|err| failed("create", &e.path, err))?;
                let written =
                    crate::fileio::raw::write_all(fd, &loaded.data[e.start..e.start + e.len])
                        .and_then(|_| set_mtime(fd, e.mtime));
                let closed = at::close(fd);
                written
                    .and(closed)
                    .map_err(|err| failed("write", &e.path, err))?;
            }
            EntryKind::Symlink => {
                // SAFETY: both strings are NUL-terminated; the kernel reads them only.
                let rc = unsafe { libc::symlinkat(e.link.as_ptr(), root, e.path.as_ptr()) };
                if rc != 0 {
                    let err = io::Error::last_os_error();
                    if err.raw_os_error() != Some(libc::EEXIST) {
                        return Err(failed("create the symlink", &e.path, err));
                    }
                }
            }
            EntryKind::Other => {}
        }
    }
    Ok(true)
}

fn set_mtime(fd: RawFd, mtime: i64) -> io::Result<()> {
    let times = [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: mtime,
            tv_nsec: 0,
        },
    ];
    // SAFETY: fd is open; `times` is two valid timespecs.
    if unsafe { libc::futimens(fd, times.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What a walk of a tree counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Walked {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
}

/// getdents64 buffers, one per depth, and the read buffer, made before the clock starts.
pub struct Buffers {
    dirents: Vec<Vec<u8>>,
    read: crate::fileio::AlignedBuf,
}

/// Deeper trees than this are refused (the kernel's own tree is 9 deep).
pub const MAX_DEPTH: usize = 64;

impl Buffers {
    pub fn new() -> Buffers {
        Buffers {
            dirents: (0..=MAX_DEPTH).map(|_| vec![0u8; 64 << 10]).collect(),
            read: crate::fileio::AlignedBuf::new(1 << 20),
        }
    }
}

impl Default for Buffers {
    fn default() -> Buffers {
        Buffers::new()
    }
}

/// The entries of one getdents64 buffer: (name, d_type).
fn entries(buf: &[u8], len: usize) -> impl Iterator<Item = (&CStr, u8)> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
        while at + 19 <= len {
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if reclen == 0 {
                return None;
            }
            let d_type = buf[at + 18];
            let name = CStr::from_bytes_until_nul(&buf[at + 19..at + reclen]).ok()?;
            at += reclen;
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            return Some((name, d_type));
        }
        None
    })
}

/// The d_type of an entry, asking fstatat when the filesystem does not say.
fn type_of(dir: RawFd, name: &CStr, d_type: u8) -> io::Result<u8> {
    if d_type != libc::DT_UNKNOWN {
        return Ok(d_type);
    }
    // SAFETY: plain data; fstatat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    at::fstatat(dir, name, &mut st)?;
    Ok(match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => libc::DT_DIR,
        libc::S_IFREG => libc::DT_REG,
        libc::S_IFLNK => libc::DT_LNK,
        _ => libc::DT_UNKNOWN,
    })
}

fn open_sub(dir: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    let fd = at::openat(
        dir,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )?;
    // SAFETY: just opened, owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads every byte of every regular file below `dir`, in directory order (as `tar c` does),
/// counting files, directories, symlinks and bytes; symlinks are not followed. None when
/// stopped.
pub fn read_all(
    dir: RawFd,
    buffers: &mut Buffers,
    stop: &StopFlag,
) -> Result<Option<Walked>, Failed> {
    let mut walked = Walked::default();
    let (dirents, read) = (&mut buffers.dirents, &mut buffers.read);
    if read_level(dir, dirents, read.as_mut_slice(), &mut walked, stop)? {
        Ok(Some(walked))
    } else {
        Ok(None)
    }
}

fn too_deep() -> Failed {
    failed(
        "walk",
        c".",
        io::Error::other(format!("the tree is deeper than {MAX_DEPTH} directories")),
    )
}

/// One directory of [`read_all`]: `levels[0]` is its getdents64 buffer, the rest are for the
/// directories below it.
fn read_level(
    dir: RawFd,
    levels: &mut [Vec<u8>],
    read: &mut [u8],
    walked: &mut Walked,
    stop: &StopFlag,
) -> Result<bool, Failed> {
    let Some((buf, deeper)) = levels.split_first_mut() else {
        return Err(too_deep());
    };
    loop {
        let n = at::getdents64(dir, buf).map_err(|e| failed("list", c".", e))?;
        if n == 0 {
            return Ok(true);
        }
        for (name, d_type) in entries(buf, n) {
            match type_of(dir, name, d_type).map_err(|e| failed("examine", name, e))? {
                libc::DT_DIR => {
                    walked.dirs += 1;
                    let sub = open_sub(dir, name).map_err(|e| failed("open", name, e))?;
                    if !read_level(sub.as_raw_fd(), deeper, read, walked, stop)? {
                        return Ok(false);
                    }
                }
                libc::DT_REG => {
                    walked.files += 1;
                    if walked.files % 256 == 0 && stop.is_requested() {
                        return Ok(false);
                    }
                    let fd = at::openat(dir, name, libc::O_RDONLY | libc::O_NOFOLLOW, 0)
                        .map_err(|e| failed("open", name, e))?;
                    let mut result = Ok(());
                    loop {
                        match crate::fileio::raw::read_some(fd, read) {
                            Ok(0) => break,
                            Ok(got) => walked.bytes += got as u64,
                            Err(e) => {
                                result = Err(e);
                                break;
                            }
                        }
                    }
                    let _ = at::close(fd);
                    result.map_err(|e| failed("read", name, e))?;
                }
                libc::DT_LNK => walked.symlinks += 1,
                _ => {}
            }
        }
    }
}

/// Removes everything below `dir` (a directory fd), depth first, with unlinkat; the
/// directory itself stays. Counts what it removed. None when stopped.
pub fn remove_below(
    dir: RawFd,
    buffers: &mut Buffers,
    stop: &StopFlag,
) -> Result<Option<Walked>, Failed> {
    let mut walked = Walked::default();
    if remove_level(dir, &mut buffers.dirents, &mut walked, stop)? {
        Ok(Some(walked))
    } else {
        Ok(None)
    }
}

fn remove_level(
    dir: RawFd,
    levels: &mut [Vec<u8>],
    walked: &mut Walked,
    stop: &StopFlag,
) -> Result<bool, Failed> {
    let Some((buf, deeper)) = levels.split_first_mut() else {
        return Err(too_deep());
    };
    // Entries are removed while the directory is read; a pass that removes nothing ends it
    // (so nothing a filesystem's readdir skipped after a removal stays behind).
    loop {
        // SAFETY: rewinding a directory fd we hold.
        unsafe { libc::lseek(dir, 0, libc::SEEK_SET) };
        let mut removed_any = false;
        loop {
            let n = at::getdents64(dir, buf).map_err(|e| failed("list", c".", e))?;
            if n == 0 {
                break;
            }
            for (name, d_type) in entries(buf, n) {
                removed_any = true;
                if type_of(dir, name, d_type).map_err(|e| failed("examine", name, e))?
                    == libc::DT_DIR
                {
                    let sub = open_sub(dir, name).map_err(|e| failed("open", name, e))?;
                    if !remove_level(sub.as_raw_fd(), deeper, walked, stop)? {
                        return Ok(false);
                    }
                    drop(sub);
                    at::unlinkat(dir, name, libc::AT_REMOVEDIR)
                        .map_err(|e| failed("remove the directory", name, e))?;
                    walked.dirs += 1;
                } else {
                    at::unlinkat(dir, name, 0).map_err(|e| failed("remove", name, e))?;
                    if d_type == libc::DT_LNK {
                        walked.symlinks += 1;
                    } else {
                        walked.files += 1;
                    }
                    if walked.files % 256 == 0 && stop.is_requested() {
                        return Ok(false);
                    }
                }
            }
        }
        if !removed_any {
            return Ok(true);
        }
    }
}

/// Copies `from` to a new file `to` with read(2) and write(2) through one buffer: a real copy
/// of every byte (never copy_file_range, never a reflink). Returns the bytes copied; None when
/// stopped.
pub fn copy(from: &Path, to: &Path, buf: &mut [u8], stop: &StopFlag) -> io::Result<Option<u64>> {
    use std::os::unix::fs::OpenOptionsExt;
    let src = std::fs::File::open(from)?;
    let dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(to)?;
    let mut copied = 0u64;
    loop {
        if stop.is_requested() {
            return Ok(None);
        }
        let n = crate::fileio::raw::read_some(src.as_raw_fd(), buf)?;
        if n == 0 {
            return Ok(Some(copied));
        }
        crate::fileio::raw::write_all(dst.as_raw_fd(), &buf[..n])?;
        copied += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::tree;

    #[test]
    fn extract_read_and_remove_count_the_tree_exactly() {
        let model = tree::scaled(&tree::LINUX_6_1, 0.01);
        let generated = tree::generate(&model, 5, 11);
        let mut archive = Vec::new();
        tree::pack(&generated, tree::Compression::Gzip, &mut archive).unwrap();
        let loaded = load(tree::Compression::Gzip.reader(&archive[..])).unwrap();
        assert_eq!(loaded.files, generated.totals.files);
        assert_eq!(loaded.bytes, generated.totals.bytes);
        assert_eq!(loaded.dirs, generated.totals.dirs);
        assert_eq!(loaded.symlinks, generated.totals.symlinks);
        let dir = tempfile::tempdir().unwrap();
        let root = at::open_dir(dir.path()).unwrap();
        let stop = StopFlag::new();
        assert!(extract(&loaded, root.as_raw_fd(), &stop).unwrap());
        let mut buffers = Buffers::new();
        let walked = read_all(root.as_raw_fd(), &mut buffers, &stop)
            .unwrap()
            .unwrap();
        assert_eq!(walked.files, generated.totals.files);
        assert_eq!(walked.dirs, generated.totals.dirs);
        assert_eq!(walked.symlinks, generated.totals.symlinks);
        assert_eq!(walked.bytes, generated.totals.bytes);
        let removed = remove_below(root.as_raw_fd(), &mut buffers, &stop)
            .unwrap()
            .unwrap();
        assert!(generated.totals.symlinks > 0);
        assert_eq!(
            (removed.files, removed.dirs, removed.symlinks),
            (walked.files, walked.dirs, walked.symlinks)
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_archive_that_escapes_its_directory_is_refused() {
        let mut out = Vec::new();
        {
            let mut b = tar::Builder::new(&mut out);
            let mut h = tar::Header::new_gnu();
            h.set_size(1);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            // set_path refuses "..": write the name into the header directly.
            h.as_old_mut().name[..6].copy_from_slice(b"../evi");
            h.set_cksum();
            b.append(&h, &b"x"[..]).unwrap();
            b.finish().unwrap();
        }
        let err = load(&out[..]).unwrap_err();
        assert!(err.to_string().contains("outside"), "{err}");
    }
}
