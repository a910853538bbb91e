//! Loop devices by ioctl: a free device asked of the kernel (LOOP_CTL_GET_FREE, never a
//! hard-coded /dev/loopN), configured in one step (LOOP_CONFIGURE, Linux 5.8+) with autoclear
//! and, by default, direct I/O on the backing file so its pages are not cached twice.
//!
//! Autoclear means the kernel detaches the device when its last user closes it. fsbench holds
//! a descriptor for as long as the target lives, and mounts hold the device while mounted, so a
//! killed fsbench leaves at most a mount behind, and the device frees itself once that is
//! unmounted (`fsbench cleanup`).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// An attached loop device. The real one holds an open descriptor: the device is attached with
/// autoclear, so the kernel detaches it by itself once fsbench and every mount let go of it, even
/// if fsbench is killed.
#[derive(Debug)]
pub struct LoopDevice {
    pub path: PathBuf,
    pub backing_file: PathBuf,
    pub direct_io: bool,
    pub(crate) holder: Option<OwnedFd>,
}

const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;
const LO_NAME_SIZE: usize = 64;

/// `struct loop_info64` from <linux/loop.h>.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; LO_NAME_SIZE],
    lo_crypt_name: [u8; LO_NAME_SIZE],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` from <linux/loop.h>.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);
const _: () = assert!(std::mem::size_of::<LoopConfig>() == 304);

/// Attaches `image` to a free loop device. Retries when another process takes the device
/// between asking and configuring (EBUSY).
pub fn attach(image: &Path, direct_io: bool) -> io::Result<LoopDevice> {
    let backing = OpenOptions::new().read(true).write(true).open(image)?;
    let control = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/loop-control")?;
    for _ in 0..32 {
        // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a device number or -1.
        let number = unsafe { libc::ioctl(control.as_raw_fd(), LOOP_CTL_GET_FREE) };
        if number < 0 {
            return Err(io::Error::last_os_error());
        }
        let path = PathBuf::from(format!("/dev/loop{number}"));
        let device = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(device) => device,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        match configure(&device, &backing, image, direct_io) {
            Ok(()) => {
                return Ok(LoopDevice {
                    path,
                    backing_file: image.to_path_buf(),
                    direct_io,
                    holder: Some(OwnedFd::from(device)),
                })
            }
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => continue,
            Err(e) if direct_io && e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("the filesystem holding {} refuses direct I/O for a loop device ({e}); use --loop-buffered", image.display()),
                ))
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::WouldBlock,
        "every free loop device was taken by another process before it could be configured; try again",
    ))
}

fn configure(device: &File, backing: &File, image: &Path, direct_io: bool) -> io::Result<()> {
    // SAFETY: all-zero is a valid loop_config.
    let mut config: LoopConfig = unsafe { std::mem::zeroed() };
    config.fd = backing.as_raw_fd() as u32;
    config.block_size = if direct_io { 4096 } else { 0 };
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR | if direct_io { LO_FLAGS_DIRECT_IO } else { 0 };
    let name = image.as_os_str().as_bytes();
    let n = name.len().min(LO_NAME_SIZE - 1);
    config.info.lo_file_name[..n].copy_from_slice(&name[..n]);
    // SAFETY: `config` is a valid loop_config that outlives the call.
    let rc = unsafe { libc::ioctl(device.as_raw_fd(), LOOP_CONFIGURE, &config) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Detaches the device (LOOP_CLR_FD). With autoclear the kernel may already have done so once
/// the last user let go; that counts as success.
pub fn detach(device: LoopDevice) -> io::Result<()> {
    let Some(holder) = device.holder else {
        return Ok(());
    };
    // SAFETY: LOOP_CLR_FD takes no argument.
    let rc = unsafe { libc::ioctl(holder.as_raw_fd(), LOOP_CLR_FD, 0) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        // ENXIO: not bound any more. EBUSY: still mounted or open elsewhere; autoclear frees it
        // when that ends, once our descriptor is closed below.
        if !matches!(e.raw_os_error(), Some(libc::ENXIO) | Some(libc::EBUSY)) {
            return Err(e);
        }
    }
    drop(holder);
    Ok(())
}

/// What a loop device's data is in, as the kernel identifies it: unlike the path sysfs shows,
/// it stays true when the file is renamed, deleted or in another mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// A block device, by device number (major, minor).
    Device(u32, u32),
    /// A regular file, by the device number of its filesystem and its inode.
    File { device: u64, inode: u64 },
}

/// What loop device `device` is backed by (LOOP_GET_STATUS64), None when it is not attached.
/// Without the right to open the device (a dry run as another user) it is asked of sysfs and
/// the backing file's own stat instead.
pub fn backing(device: &Path) -> io::Result<Option<Backing>> {
    // Read-only: closing a device opened for writing makes udev probe it again.
    let file = match File::open(device) {
        Ok(file) => file,
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
            return backing_by_path(device)
        }
        Err(e) => return Err(e),
    };
    // SAFETY: all-zero is a valid loop_info64 for the kernel to fill.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid loop_info64 that outlives the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), LOOP_GET_STATUS64, &mut info) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        };
    }
    // The kernel encodes device numbers as userspace dev_t (huge_encode_dev).
    Ok(Some(if info.lo_rdevice != 0 {
        Backing::Device(libc::major(info.lo_rdevice), libc::minor(info.lo_rdevice))
    } else {
        Backing::File {
            device: info.lo_device,
            inode: info.lo_inode,
        }
    }))
}

/// The backing file sysfs names, by its stat (a deleted one cannot be).
fn backing_by_path(device: &Path) -> io::Result<Option<Backing>> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let name = device.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let text = match std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let path = text.trim_end_matches('\n');
    if path.ends_with(" (deleted)") {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("its backing file {path} can be identified by root only"),
        ));
    }
    let meta = std::fs::metadata(path)?;
    Ok(Some(if meta.file_type().is_block_device() {
        Backing::Device(libc::major(meta.rdev()), libc::minor(meta.rdev()))
    } else {
        Backing::File {
            device: meta.dev(),
            inode: meta.ino(),
        }
    }))
}
