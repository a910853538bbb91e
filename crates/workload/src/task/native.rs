//! The tasks done natively, in this process, so they measure the filesystem alone: extraction
//! of an archive already in memory (a compressed one decompressed before the clock starts, an
//! uncompressed one mapped with its pages read in), reading every byte of every file, removing
//! a tree, copying a file with read/write (no copy_file_range, so never a reflink). The timed
//! loops make system calls on names already in memory or in the getdents64 buffer, and
//! allocate nothing.

use super::beneath::{Beneath, Resolver, REFUSED};
use crate::fileio::at;
use crate::StopFlag;
use std::ffi::{CStr, CString};
use std::fmt;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;

/// An archive's entries held in memory: names NUL-terminated, file contents in one buffer.
#[derive(Debug, Default)]
pub struct Loaded {
    pub entries: Vec<LoadedEntry>,
    pub data: Contents,
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
}

/// Where an archive's file contents are held: read into this process's memory (a compressed
/// archive, decompressed), or, for an uncompressed archive, its file mapped read-only with every
/// page read in before the extraction starts — the archive's page cache, as GNU tar reads it,
/// and no second copy of it in the process's own memory.
#[derive(Debug)]
pub enum Contents {
    Read(Vec<u8>),
    Mapped(Mapped),
}

impl Default for Contents {
    fn default() -> Contents {
        Contents::Read(Vec::new())
    }
}

impl std::ops::Deref for Contents {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Contents::Read(data) => data,
            Contents::Mapped(mapped) => mapped.bytes(),
        }
    }
}

/// A regular file mapped read-only (private) with its pages populated. The file must not shrink
/// while it is mapped (a read past its new end would be a SIGBUS): fsbench's own tarballs never
/// change, and a given one is the user's to leave alone during the run.
#[derive(Debug)]
pub struct Mapped {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is read-only and owned: shared references only read it.
unsafe impl Send for Mapped {}
// SAFETY: as above.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps all of `file`, reading every page in now (MAP_POPULATE).
    pub fn of(file: &std::fs::File) -> io::Result<Mapped> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::from(io::ErrorKind::FileTooLarge))?;
        if len == 0 {
            return Ok(Mapped {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
            });
        }
        // SAFETY: a new private read-only mapping of an open file; checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapped {
            ptr: ptr.cast(),
            len,
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `ptr` for as long as self lives (or none).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `of`, unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

#[derive(Debug)]
pub struct LoadedEntry {
    pub kind: EntryKind,
    /// Below the directory extracted to: components joined by '/', none empty, `.` or `..`.
    pub path: CString,
    pub mode: u32,
    pub mtime: i64,
    /// File contents: `data[start..start + len]`.
    pub start: usize,
    pub len: usize,
    /// A symlink's target (as the archive has it), or the entry a hard link links to (a
    /// path like `path`).
    pub link: CString,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    /// A hard link to an earlier entry.
    HardLink,
    /// Devices, fifos: skipped.
    Other,
}

/// Why an archive cannot be extracted.
#[derive(Debug)]
pub enum LoadError {
    /// It is not a tar archive fsbench can read.
    Unreadable(io::Error),
    /// An entry would be written outside the directory extracted to.
    Refused(Failed),
}

/// Reads a (decompressed) tar stream into memory. Entries that would be written outside the
/// directory extracted to are refused before anything is written: absolute names, `..` in a
/// name, hard links to such names, and paths deeper than [`MAX_DEPTH`].
pub fn load(archive: impl Read) -> Result<Loaded, LoadError> {
    let mut data = Vec::new();
    let mut archive = tar::Archive::new(archive);
    let entries = archive.entries().map_err(LoadError::Unreadable)?;
    let mut loaded = load_entries(entries, |entry| {
        let start = data.len();
        entry.read_to_end(&mut data)?;
        Ok((start, data.len() - start))
    })?;
    loaded.data = Contents::Read(data);
    Ok(loaded)
}

/// As [`load`], for an uncompressed tar file: its headers are read, and its file contents are
/// the file itself, mapped ([`Mapped`]), each file's bytes where the archive has them. A file
/// that cannot be mapped (a filesystem without mmap) is read into memory instead.
pub fn load_file(file: std::fs::File) -> Result<Loaded, LoadError> {
    let Ok(mapped) = Mapped::of(&file) else {
        return load(io::BufReader::with_capacity(1 << 20, file));
    };
    let size = mapped.len as u64;
    // The headers read from the mapping itself: skipping a file's contents is a move of the
    // cursor (a BufReader refills its whole buffer after every seek, a copy per file).
    let mut archive = tar::Archive::new(io::Cursor::new(mapped.bytes()));
    let entries = archive.entries_with_seek().map_err(LoadError::Unreadable)?;
    let mut loaded = load_entries(entries, |entry| {
        let (start, len) = (entry.raw_file_position(), entry.size());
        if start.checked_add(len).is_none_or(|end| end > size) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "an entry's contents run past the end of the file",
            ));
        }
        Ok((start as usize, len as usize))
    })?;
    loaded.data = Contents::Mapped(mapped);
    Ok(loaded)
}

/// The entries of an archive as [`load`] keeps them, each regular file's contents placed by
/// `contents` (where they start in [`Loaded::data`], and how long they are).
fn load_entries<R: Read>(
    entries: tar::Entries<'_, R>,
    mut contents: impl FnMut(&mut tar::Entry<'_, R>) -> io::Result<(usize, usize)>,
) -> Result<Loaded, LoadError> {
    let unreadable = LoadError::Unreadable;
    let mut loaded = Loaded::default();
    for entry in entries {
        let mut entry = entry.map_err(unreadable)?;
        let header = entry.header();
        let kind = match header.entry_type() {
            tar::EntryType::Directory => EntryKind::Dir,
            tar::EntryType::Regular | tar::EntryType::Continuous => EntryKind::File,
            tar::EntryType::Symlink => EntryKind::Symlink,
            tar::EntryType::Link => EntryKind::HardLink,
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => continue,
            _ => EntryKind::Other,
        };
        let mode = header.mode().unwrap_or(0o644);
        let mtime = header.mtime().unwrap_or(0) as i64;
        let raw = entry.path_bytes().into_owned();
        let path = below(&raw).map_err(|why| refused(&raw, why))?;
        if path.is_empty() {
            continue;
        }
        let link = entry
            .link_name_bytes()
            .map(|l| l.into_owned())
            .unwrap_or_default();
        let link = if kind == EntryKind::HardLink {
            below(&link).map_err(|why| {
                refused(
                    &raw,
                    format!(
                        "is a hard link to {}, which {why}",
                        String::from_utf8_lossy(&link)
                    ),
                )
            })?
        } else {
            link
        };
        let (start, len) = if kind == EntryKind::File {
            contents(&mut entry).map_err(unreadable)?
        } else {
            (0, 0)
        };
        match kind {
            EntryKind::Dir => loaded.dirs += 1,
            EntryKind::File => {
                loaded.files += 1;
                loaded.bytes += len as u64;
            }
            EntryKind::Symlink => loaded.symlinks += 1,
            EntryKind::HardLink | EntryKind::Other => {}
        }
        let nul =
            |b: Vec<u8>| CString::new(b).map_err(|_| unreadable(io::ErrorKind::InvalidData.into()));
        loaded.entries.push(LoadedEntry {
            kind,
            path: nul(path)?,
            mode,
            mtime,
            start,
            len,
            link: nul(link)?,
        });
    }
    Ok(loaded)
}

/// An archive's name as a path below the directory extracted to (`.` and empty components
/// dropped), or why it cannot be one.
pub(super) fn below(name: &[u8]) -> Result<Vec<u8>, String> {
    if name.first() == Some(&b'/') {
        return Err("is an absolute path".into());
    }
    let mut path = Vec::with_capacity(name.len());
    let mut depth = 0;
    for component in name.split(|&b| b == b'/') {
        match component {
            b"" | b"." => continue,
            b".." => return Err("has `..` in its path".into()),
            _ => {}
        }
        depth += 1;
        if depth > MAX_DEPTH {
            return Err(format!("is deeper than {MAX_DEPTH} directories"));
        }
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(component);
    }
    Ok(path)
}

/// The refusal of an entry that would be written outside the directory extracted to.
fn refused(name: &[u8], why: impl fmt::Display) -> LoadError {
    LoadError::Refused(Failed {
        action: "extract",
        name: String::from_utf8_lossy(name).into_owned(),
        error: io::Error::other(format!("it {why}: {REFUSED}")),
    })
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

/// A path's directory and its last component.
fn split(path: &CStr) -> (&[u8], &CStr) {
    let bytes = path.to_bytes_with_nul();
    match bytes.iter().rposition(|&b| b == b'/') {
        Some(i) => (
            &bytes[..i],
            CStr::from_bytes_with_nul(&bytes[i + 1..]).expect("ends with its NUL"),
        ),
        None => (&[], path),
    }
}

/// Creates every entry below `root` (a directory fd): directories, files with their contents
/// and modification times, symlinks and hard links, each in its parent directory reached
/// beneath `root` ([`beneath`]: nothing is written outside it, whatever the archive's
/// symlinks point to). Parents that the archive does not list are made on the way; an entry
/// whose name exists replaces it, as GNU tar does (never writing through it). Returns false
/// when stopped.
pub fn extract(loaded: &Loaded, root: RawFd, stop: &StopFlag) -> Result<bool, Failed> {
    extract_with(loaded, root, stop, Resolver::Kernel)
}

fn extract_with(
    loaded: &Loaded,
    root: RawFd,
    stop: &StopFlag,
    resolver: Resolver,
) -> Result<bool, Failed> {
    let mut dirs = Beneath::new(root, resolver);
    for (i, e) in loaded.entries.iter().enumerate() {
        if i % 256 == 0 && stop.is_requested() {
            return Ok(false);
        }
        let (parent, name) = split(&e.path);
        let dir = dirs
            .dir(parent)
            .map_err(|err| failed("extract", &e.path, err))?;
        match e.kind {
            EntryKind::Dir => match at::mkdirat(dir, name) {
                Ok(()) => {}
                Err(err) if err.raw_os_error() == Some(libc::EEXIST) => {}
                Err(err) => return Err(failed("create the directory", &e.path, err)),
            },
            EntryKind::File => {
                let flags = libc::O_WRONLY
                    | libc::O_CREAT
                    | libc::O_EXCL
                    | libc::O_NOFOLLOW
                    | libc::O_NOCTTY;
                let mode = (e.mode & 0o7777) as libc::mode_t;
                let fd = replacing(&mut dirs, dir, name, || at::openat(dir, name, flags, mode))
                    .map_err(|err| failed("create", &e.path, err))?;
                let written = write_chunked(fd, &loaded.data[e.start..e.start + e.len])
                    .and_then(|_| set_mtime(fd, e.mtime));
                let closed = at::close(fd);
                written
                    .and(closed)
                    .map_err(|err| failed("write", &e.path, err))?;
            }
            EntryKind::Symlink => {
                replacing(&mut dirs, dir, name, || at::symlinkat(&e.link, dir, name))
                    .map_err(|err| failed("create the symlink", &e.path, err))?;
            }
            EntryKind::HardLink => {
                let (from_dir, from) = split(&e.link);
                let from_dir = dirs
                    .resolve(from_dir)
                    .map_err(|err| failed("extract", &e.path, err))?;
                replacing(&mut dirs, dir, name, || {
                    at::linkat(from_dir.as_raw_fd(), from, dir, name)
                })
                .map_err(|err| failed("create the hard link", &e.path, err))?;
            }
            EntryKind::Other => {}
        }
    }
    Ok(true)
}

/// Makes a name with `make`; when the name exists (an archive may list a name twice), the
/// old entry is removed first, as GNU tar removes it, so nothing is written through it. A
/// directory there stays and is the error.
fn replacing<T>(
    dirs: &mut Beneath,
    dir: RawFd,
    name: &CStr,
    mut make: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    match make() {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
            at::unlinkat(dir, name, 0)?;
            dirs.forget();
            make()
        }
        made => made,
    }
}

/// The most one write(2) of the native tasks carries (each file of an extraction, each
/// buffer of a copy). Writes of 1-2 MiB and more into a new file cost 3 to 9 times the system
/// time per byte of 256 KiB writes on ext4 and xfs here (`dd bs=16M` against `bs=256K`: the
/// page cache makes folios as large as the write, and the copy into such a fresh large folio
/// is slow on this host), which made whole-file writes of the kernel's large files slower
/// than GNU tar's 10 KiB ones; tmpfs and btrfs, with small folios, do not care. 256 KiB is
/// below where the cost starts on both (1 MiB on xfs, 2 MiB on ext4) and adds a write only
/// to files larger than it (bench/README.md).
pub const WRITE_CHUNK: usize = 256 << 10;

/// Writes all of `data` at the file position in writes of at most [`WRITE_CHUNK`] bytes.
fn write_chunked(fd: RawFd, data: &[u8]) -> io::Result<()> {
    for chunk in data.chunks(WRITE_CHUNK) {
        crate::fileio::raw::write_all(fd, chunk)?;
    }
    Ok(())
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
    /// Where reads land past the read buffer's page (`crate::placement`).
    read_at: usize,
}

/// The read-all's read size.
const READ_BYTES: usize = 1 << 20;

/// Deeper trees than this are refused (the kernel's own tree is 9 deep).
pub const MAX_DEPTH: usize = 64;

impl Buffers {
    pub fn new() -> Buffers {
        Buffers::placed(0)
    }

    /// With reads landing `read_at` bytes past a page boundary.
    pub fn placed(read_at: usize) -> Buffers {
        Buffers {
            dirents: (0..=MAX_DEPTH).map(|_| vec![0u8; 64 << 10]).collect(),
            read: crate::fileio::AlignedBuf::new(READ_BYTES + crate::placement::ROOM),
            read_at,
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

/// Opens the directory `name` in `dir` for a timed walk, never across a mount: a mount point
/// (another filesystem, or a bind mount a task's `exec` step left) is an error naming it, so a
/// timed removal never deletes, and a timed read never counts, another tree's files.
fn open_sub(dir: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    use fsbench_measure::walk::{open_entry, Entry};
    // SAFETY: `dir` is a directory descriptor the caller holds open for this call.
    let dir = unsafe { std::os::fd::BorrowedFd::borrow_raw(dir) };
    match open_entry(dir, name, libc::O_RDONLY | libc::O_DIRECTORY)? {
        Entry::Open(fd) => Ok(fd),
        Entry::Mount => Err(io::Error::other(
            "it is a mount point (another filesystem or a bind mount): fsbench never walks \
             or removes across a mount; unmount it first",
        )),
        Entry::Gone => Err(io::Error::from_raw_os_error(libc::ENOENT)),
    }
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
    let (dirents, read, at) = (&mut buffers.dirents, &mut buffers.read, buffers.read_at);
    let read = &mut read.as_mut_slice()[at..at + READ_BYTES];
    if read_level(dir, dirents, read, &mut walked, stop)? {
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
        let (generated, archive) = generated_archive(tree::Compression::Gzip);
        let Ok(loaded) = load(tree::Compression::Gzip.reader(&archive[..])) else {
            panic!("the generated archive loads");
        };
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

    /// Write system calls made by this thread so far (/proc/thread-self/io), if the kernel
    /// counts them.
    fn writes_so_far() -> Option<u64> {
        std::fs::read_to_string("/proc/thread-self/io")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("syscw:"))
            .and_then(|v| v.trim().parse().ok())
    }

    /// A small generated linux-6.1-shaped tree (seeded) and its archive.
    fn generated_archive(compression: tree::Compression) -> (tree::Tree, Vec<u8>) {
        let model = tree::scaled(&tree::LINUX_6_1, 0.01);
        let generated = tree::generate(&model, 5, 11);
        let mut archive = Vec::new();
        tree::pack(&generated, compression, &mut archive).unwrap();
        (generated, archive)
    }

    /// An uncompressed archive mapped holds what reading it into memory holds: the same
    /// entries, each file's bytes the same, and a file cut short inside an entry's contents is
    /// an unreadable archive (not a read past the mapping's end).
    #[test]
    fn a_mapped_archive_loads_as_a_read_one_and_a_cut_one_is_refused() {
        let (generated, archive) = generated_archive(tree::Compression::None);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &archive).unwrap();
        let (Ok(read), Ok(mapped)) = (
            load(&archive[..]),
            load_file(std::fs::File::open(file.path()).unwrap()),
        ) else {
            panic!("the archive loads both ways");
        };
        assert!(matches!(mapped.data, Contents::Mapped(_)));
        assert_eq!(mapped.files, generated.totals.files);
        assert_eq!(mapped.bytes, generated.totals.bytes);
        assert_eq!((mapped.dirs, mapped.symlinks), (read.dirs, read.symlinks));
        assert_eq!(mapped.entries.len(), read.entries.len());
        for (m, r) in mapped.entries.iter().zip(&read.entries) {
            assert_eq!(
                (m.kind, &m.path, &m.link, m.len),
                (r.kind, &r.path, &r.link, r.len)
            );
            assert_eq!(
                &mapped.data[m.start..m.start + m.len],
                &read.data[r.start..r.start + r.len],
                "{:?}",
                m.path
            );
        }
        // Cut in the middle of the largest file's contents.
        let big = read.entries.iter().max_by_key(|e| e.len).unwrap();
        let in_archive = mapped.entries.iter().find(|e| e.path == big.path).unwrap();
        let cut = (in_archive.start + in_archive.len / 2) as u64;
        std::fs::OpenOptions::new()
            .write(true)
            .open(file.path())
            .unwrap()
            .set_len(cut)
            .unwrap();
        let cut_short = load_file(std::fs::File::open(file.path()).unwrap());
        assert!(
            matches!(cut_short, Err(LoadError::Unreadable(_))),
            "{cut_short:?}"
        );
    }

    /// A file is written in writes of at most WRITE_CHUNK (one write per chunk, counted by the
    /// kernel), never in one write of its whole size: large writes are what made the native
    /// extraction slower than GNU tar on ext4 and xfs. Small files still take one write each,
    /// empty ones none.
    #[test]
    fn files_are_written_in_bounded_chunks() {
        if writes_so_far().is_none() {
            eprintln!("skipped: /proc/thread-self/io has no syscw (no task I/O accounting)");
            return;
        }
        let big: Vec<u8> = (0..WRITE_CHUNK * 4 + 1).map(|i| (i % 251) as u8).collect();
        let tar = archive(&[
            Test::Dir("d"),
            Test::File("d/big", &big),
            Test::File("d/small", b"small"),
            Test::File("d/empty", b""),
        ]);
        let p = Place::new();
        let base = writes_so_far().unwrap();
        assert!(p.extract(&tar, Resolver::Kernel).unwrap());
        let writes = writes_so_far().unwrap() - base;
        // 4 full chunks and 1 byte, then the small file; building the archive wrote nothing
        // after `base`.
        assert_eq!(writes, 5 + 1, "write(2) calls for {} bytes", big.len());
        assert_eq!(std::fs::read(p.root().join("d/big")).unwrap(), big);
        assert_eq!(std::fs::read(p.root().join("d/small")).unwrap(), b"small");
        assert_eq!(std::fs::read(p.root().join("d/empty")).unwrap(), b"");
    }

    /// One entry of a test archive: its raw name (`..` and absolute names included, which
    /// the tar crate's builder refuses to write) and what it is.
    enum Test<'a> {
        Dir(&'a str),
        File(&'a str, &'a [u8]),
        Symlink(&'a str, &'a str),
        HardLink(&'a str, &'a str),
    }

    fn archive(entries: &[Test]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = tar::Builder::new(&mut out);
        for entry in entries {
            let mut h = tar::Header::new_gnu();
            h.set_mode(0o644);
            let (name, data): (&str, &[u8]) = match *entry {
                Test::Dir(name) => {
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_mode(0o755);
                    (name, b"")
                }
                Test::File(name, data) => {
                    h.set_entry_type(tar::EntryType::Regular);
                    (name, data)
                }
                Test::Symlink(name, target) => {
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_link_name(target).unwrap();
                    (name, b"")
                }
                Test::HardLink(name, target) => {
                    h.set_entry_type(tar::EntryType::Link);
                    h.set_link_name(target).unwrap();
                    (name, b"")
                }
            };
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_size(data.len() as u64);
            h.set_cksum();
            b.append(&h, data).unwrap();
        }
        b.finish().unwrap();
        drop(b);
        out
    }

    /// A directory to extract into, inside `base`, and a sentinel file beside it (outside).
    struct Place {
        base: tempfile::TempDir,
    }

    impl Place {
        fn new() -> Place {
            let base = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(base.path().join("one/root")).unwrap();
            std::fs::create_dir(base.path().join("outside")).unwrap();
            std::fs::write(base.path().join("outside/victim"), b"sentinel").unwrap();
            Place { base }
        }

        fn root(&self) -> std::path::PathBuf {
            self.base.path().join("one/root")
        }

        fn outside(&self) -> std::path::PathBuf {
            self.base.path().join("outside")
        }

        fn extract(&self, tar: &[u8], resolver: Resolver) -> Result<bool, Failed> {
            let loaded = match load(tar) {
                Ok(loaded) => loaded,
                Err(LoadError::Refused(f)) => return Err(f),
                Err(LoadError::Unreadable(e)) => panic!("{e}"),
            };
            let root = at::open_dir(&self.root()).unwrap();
            extract_with(&loaded, root.as_raw_fd(), &StopFlag::new(), resolver)
        }

        /// Nothing outside the root changed: the sentinel holds its bytes and is alone.
        fn assert_outside_intact(&self) {
            assert_eq!(
                std::fs::read(self.outside().join("victim")).unwrap(),
                b"sentinel"
            );
            let names: Vec<_> = std::fs::read_dir(self.outside())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["victim"]);
            let beside: Vec<_> = std::fs::read_dir(self.base.path().join("one"))
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(beside, ["root"]);
        }
    }

    const RESOLVERS: [Resolver; 2] = [Resolver::Kernel, Resolver::Walk];

    fn assert_refused(result: Result<bool, Failed>, entry: &str) {
        let f = result.expect_err("the archive must be refused");
        assert_eq!(f.name, entry, "{}", f.error);
        assert!(f.error.to_string().contains("outside"), "{}", f.error);
    }

    #[test]
    fn a_symlink_out_of_the_directory_is_never_written_through() {
        for resolver in RESOLVERS {
            let p = Place::new();
            let outside = p.outside().display().to_string();
            let tar = archive(&[
                Test::Symlink("link", &outside),
                Test::File("link/victim", b"overwritten"),
            ]);
            assert_refused(p.extract(&tar, resolver), "link/victim");
            p.assert_outside_intact();
            // A new file through it, and a directory below it, are refused alike.
            let p = Place::new();
            let tar = archive(&[
                Test::Dir("top"),
                Test::Symlink("top/link", &outside),
                Test::Dir("top/link/made"),
            ]);
            assert_refused(p.extract(&tar, resolver), "top/link/made");
            p.assert_outside_intact();
        }
    }

    #[test]
    fn a_relative_symlink_that_climbs_out_is_refused() {
        for resolver in RESOLVERS {
            let p = Place::new();
            // root is base/one/root: ../../outside is base/outside.
            let tar = archive(&[
                Test::Symlink("a", "../../outside"),
                Test::File("a/victim", b"overwritten"),
            ]);
            assert_refused(p.extract(&tar, resolver), "a/victim");
            p.assert_outside_intact();
            // Climbing through an in-tree symlink first, then out.
            let p = Place::new();
            let tar = archive(&[
                Test::Dir("d"),
                Test::Symlink("d/up", ".."),
                Test::Symlink("d/out", "up/../../outside"),
                Test::File("d/out/new", b"x"),
            ]);
            assert_refused(p.extract(&tar, resolver), "d/out/new");
            p.assert_outside_intact();
        }
    }

    #[test]
    fn an_entry_over_a_symlink_replaces_it_and_is_not_written_through() {
        for resolver in RESOLVERS {
            let p = Place::new();
            let victim = p.outside().join("victim").display().to_string();
            let tar = archive(&[
                Test::Symlink("l", &victim),
                Test::File("l", b"mine"),
                Test::Symlink("r", "../../outside/victim"),
                Test::File("r", b"mine too"),
            ]);
            assert!(p.extract(&tar, resolver).unwrap());
            p.assert_outside_intact();
            let l = p.root().join("l");
            assert!(std::fs::symlink_metadata(&l).unwrap().is_file());
            assert_eq!(std::fs::read(&l).unwrap(), b"mine");
            assert_eq!(std::fs::read(p.root().join("r")).unwrap(), b"mine too");
        }
    }

    #[test]
    fn hard_links_out_of_the_directory_are_refused() {
        for resolver in RESOLVERS {
            let p = Place::new();
            let victim = p.outside().join("victim").display().to_string();
            let tar = archive(&[
                Test::HardLink("passwd", &victim),
                Test::File("passwd", b"x"),
            ]);
            assert_refused(p.extract(&tar, resolver), "passwd");
            p.assert_outside_intact();
            let tar = archive(&[Test::HardLink("h", "../../outside/victim")]);
            assert_refused(p.extract(&tar, resolver), "h");
            p.assert_outside_intact();
            // Through a symlink that leads out.
            let outside = p.outside().display().to_string();
            let tar = archive(&[
                Test::Symlink("link", &outside),
                Test::HardLink("h", "link/victim"),
                Test::File("h", b"x"),
            ]);
            assert_refused(p.extract(&tar, resolver), "h");
            p.assert_outside_intact();
        }
    }

    #[test]
    fn names_with_dot_dot_or_absolute_are_refused_naming_the_entry() {
        let p = Place::new();
        for (name, why) in [
            ("../../outside/victim", "`..`"),
            ("a/../../x", "`..`"),
            ("/tmp/fsbench-never", "absolute"),
        ] {
            let tar = archive(&[Test::Dir("ok"), Test::File(name, b"x")]);
            let f = p.extract(&tar, Resolver::Kernel).unwrap_err();
            assert_eq!(f.name, name);
            assert!(f.error.to_string().contains(why), "{}", f.error);
            assert!(f.error.to_string().contains("refuses"), "{}", f.error);
            // Refused before anything is written.
            assert_eq!(std::fs::read_dir(p.root()).unwrap().count(), 0);
        }
        p.assert_outside_intact();
        assert!(!Path::new("/tmp/fsbench-never").exists());
    }

    #[test]
    fn symlinks_inside_the_tree_extract_and_may_be_walked_through() {
        for resolver in RESOLVERS {
            let p = Place::new();
            let tar = archive(&[
                Test::Dir("./top/"),
                Test::Dir("top/real"),
                Test::File("top/real/f", b"f"),
                // A directory symlink a later entry uses as a path (include/asm in old
                // kernels), one that climbs and comes back, and a dangling one.
                Test::Symlink("top/link", "real"),
                Test::File("top/link/g", b"g"),
                Test::Dir("top/sub"),
                Test::Symlink("top/sub/up", "../real"),
                Test::File("top/sub/up/h", b"h"),
                Test::Dir("top/sub/up/deeper"),
                Test::File("top/sub/up/deeper/i", b"i"),
                Test::Symlink("top/dangling", "../../../nowhere"),
                Test::HardLink("top/hard", "top/link/g"),
                Test::File("top/sub/file", b"after the symlinks"),
            ]);
            assert!(p.extract(&tar, resolver).unwrap());
            p.assert_outside_intact();
            let top = p.root().join("top");
            for (name, data) in [
                ("real/f", &b"f"[..]),
                ("real/g", b"g"),
                ("real/h", b"h"),
                ("real/deeper/i", b"i"),
                ("hard", b"g"),
                ("sub/file", b"after the symlinks"),
            ] {
                assert_eq!(std::fs::read(top.join(name)).unwrap(), data, "{name}");
            }
            assert_eq!(
                std::fs::read_link(top.join("link")).unwrap(),
                Path::new("real")
            );
            assert_eq!(
                std::fs::read_link(top.join("dangling")).unwrap(),
                Path::new("../../../nowhere")
            );
            use std::os::unix::fs::MetadataExt;
            assert_eq!(
                std::fs::metadata(top.join("hard")).unwrap().ino(),
                std::fs::metadata(top.join("real/g")).unwrap().ino()
            );
        }
    }
}
