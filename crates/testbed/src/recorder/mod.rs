//! The recording device (issue 40): an image that fsbench serves itself through FUSE, for a
//! loop device to be attached to, so that every write the filesystem sends its device reaches
//! fsbench in order, with its bytes — and every flush (the loop driver turns a flush into an
//! fsync of its backing file) and every discard — into a write [`log`]; with the marks the
//! workload sets between them ("operation 17 returned"). From the log, [`states`] makes the
//! crash states a power cut can leave. Why our own FUSE daemon (the `fuser` crate) and not
//! nbdkit's log filter behind nbdfuse: the log is ours to read (no text to parse, the bytes
//! kept once), the marks go into the same ordered stream in-process, and no package is needed.
//! A power cut can be kept as a [`bundle`], for a developer to replay one state to an image.
//!
//! Only for durability: a speed phase never runs on it (every I/O crosses into user space).

pub mod bundle;
pub mod log;
pub mod states;

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request,
    WriteFlags,
};
use log::Log;
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, UNIX_EPOCH};

/// The FUSE mount's source, as mountinfo shows it.
pub const SOURCE: &str = "fsbench-recorder";
/// The one file the device's directory holds.
pub const IMAGE: &str = "image";
const IMAGE_INO: u64 = 2;
const TTL: Duration = Duration::from_secs(3600);

/// A served image, and its log while recording.
pub struct Recorder {
    session: Option<fuser::BackgroundSession>,
    mountpoint: PathBuf,
    shared: Arc<Shared>,
}

struct Shared {
    backing: File,
    backing_path: PathBuf,
    size: u64,
    /// The log, while recording; its lock also orders the writes to `backing`.
    log: Mutex<Option<Log>>,
}

impl Shared {
    fn log(&self) -> MutexGuard<'_, Option<Log>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Recorder {
    /// Serves `backing` (an image file, its size the device's) as `IMAGE` in the empty
    /// directory `mountpoint` (a FUSE mount, until [`Recorder::stop`] or drop).
    pub fn serve(backing: &Path, mountpoint: &Path) -> io::Result<Recorder> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(backing)?;
        let size = file.metadata()?.len();
        let shared = Arc::new(Shared {
            backing: file,
            backing_path: backing.to_path_buf(),
            size,
            log: Mutex::new(None),
        });
        let mut config = fuser::Config::default();
        config
            .mount_options
            .push(fuser::MountOption::FSName(SOURCE.into()));
        config.n_threads = Some(1);
        let session = fuser::spawn_mount(
            Served {
                shared: shared.clone(),
            },
            mountpoint,
            &config,
        )?;
        Ok(Recorder {
            session: Some(session),
            mountpoint: mountpoint.to_path_buf(),
            shared,
        })
    }

    /// The served image: what a loop device is attached to (buffered: the file is served
    /// with direct I/O already, every write reaching the recorder as it is made).
    pub fn image(&self) -> PathBuf {
        self.mountpoint.join(IMAGE)
    }

    /// Starts a log whose bytes go to `data`, after copying the image as it is now to `start`
    /// (no write lands between the two: writes wait for the log's lock).
    pub fn begin(&self, start: &Path, data: &Path) -> io::Result<()> {
        let mut log = self.shared.log();
        crate::copy::copy_image(&self.shared.backing_path, start)?;
        *log = Some(Log::create(data)?);
        Ok(())
    }

    /// Mark `n` in the log (nothing when not recording).
    pub fn mark(&self, n: u64) {
        if let Some(log) = self.shared.log().as_mut() {
            log.mark(n);
        }
    }

    /// Stops recording: the log so far.
    pub fn end(&self) -> Option<Log> {
        self.shared.log().take()
    }

    /// Unmounts the FUSE mount (the loop device over it detached first) and ends its thread.
    pub fn stop(mut self) -> io::Result<()> {
        self.unmount()
    }

    /// A loop device detached a moment ago may still hold the image (EBUSY): the unmount is
    /// tried again for a while before it fails. Then the session's thread ends (ENODEV).
    fn unmount(&mut self) -> io::Result<()> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let path = std::ffi::CString::new(self.mountpoint.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let patience = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            // SAFETY: umount2 of a NUL-terminated path this function owns.
            if unsafe { libc::umount2(path.as_ptr(), 0) } == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            // Not mounted any more (a target's teardown unmounted it by its record).
            if e.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            if e.raw_os_error() != Some(libc::EBUSY) || std::time::Instant::now() >= patience {
                self.session = Some(session);
                return Err(e);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Unmounted already: the session's own unmount finds nothing to do, and its thread
        // has ended.
        let _ = session.umount_and_join();
        Ok(())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.unmount();
    }
}

/// The FUSE side: a directory with one file.
struct Served {
    shared: Arc<Shared>,
}

fn attr(ino: u64, size: u64) -> FileAttr {
    let dir = ino == 1;
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: UNIX_EPOCH,
        mtime: UNIX_EPOCH,
        ctime: UNIX_EPOCH,
        crtime: UNIX_EPOCH,
        kind: if dir {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: if dir { 0o700 } else { 0o600 },
        nlink: if dir { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        flags: 0,
        blksize: 4096,
    }
}

fn errno(e: &io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

impl Filesystem for Served {
    fn lookup(&self, _: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if u64::from(parent) == 1 && name == IMAGE {
            reply.entry(&TTL, &attr(IMAGE_INO, self.shared.size), Generation(0));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _: &Request, ino: INodeNo, _: Option<FileHandle>, reply: ReplyAttr) {
        match u64::from(ino) {
            1 => reply.attr(&TTL, &attr(1, 0)),
            IMAGE_INO => reply.attr(&TTL, &attr(IMAGE_INO, self.shared.size)),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _: &Request, _: INodeNo, _: OpenFlags, reply: ReplyOpen) {
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _: &Request,
        _: INodeNo,
        _: FileHandle,
        offset: u64,
        size: u32,
        _: OpenFlags,
        _: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let len = (size as u64).min(self.shared.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; len];
        match self.shared.backing.read_exact_at(&mut buf, offset) {
            Ok(()) => reply.data(&buf),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn write(
        &self,
        _: &Request,
        _: INodeNo,
        _: FileHandle,
        offset: u64,
        data: &[u8],
        _: WriteFlags,
        _: OpenFlags,
        _: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if offset.saturating_add(data.len() as u64) > self.shared.size {
            return reply.error(Errno::ENOSPC);
        }
        let mut log = self.shared.log();
        // Zeros (mkfs's zeroed tables) leave a hole: the image stays sparse, and so does
        // every copy a crash state starts from.
        let written = if data.iter().all(|&b| b == 0) {
            // SAFETY: fallocate on a descriptor `backing` owns, within the image (checked).
            let rc = unsafe {
                libc::fallocate(
                    self.shared.backing.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset as i64,
                    data.len() as i64,
                )
            };
            match rc {
                0 => Ok(()),
                _ => self.shared.backing.write_all_at(data, offset),
            }
        } else {
            self.shared.backing.write_all_at(data, offset)
        };
        let done = written.and_then(|()| match log.as_mut() {
            Some(log) => log.write(offset, data),
            None => Ok(()),
        });
        drop(log);
        match done {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn flush(&self, _: &Request, _: INodeNo, _: FileHandle, _: LockOwner, reply: ReplyEmpty) {
        // close(2), not a cache flush.
        reply.ok();
    }

    fn fsync(&self, _: &Request, _: INodeNo, _: FileHandle, _: bool, reply: ReplyEmpty) {
        if let Some(log) = self.shared.log().as_mut() {
            log.flush();
        }
        reply.ok();
    }

    fn fallocate(
        &self,
        _: &Request,
        _: INodeNo,
        _: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let mut log = self.shared.log();
        let fd = self.shared.backing.as_raw_fd();
        // SAFETY: fallocate on a descriptor `backing` owns, within the image (the kernel checks).
        let done = unsafe { libc::fallocate(fd, mode, offset as i64, length as i64) };
        if done != 0 {
            let e = io::Error::last_os_error();
            drop(log);
            return reply.error(errno(&e));
        }
        if let Some(log) = log.as_mut() {
            if mode & libc::FALLOC_FL_PUNCH_HOLE != 0 {
                log.discard(offset, length);
            } else if mode & libc::FALLOC_FL_ZERO_RANGE != 0 {
                log.zeros(offset, length);
            }
        }
        drop(log);
        reply.ok();
    }
}
