//! Loop devices by ioctl: a free device asked of the kernel (LOOP_CTL_GET_FREE, never a
//! hard-coded /dev/loopN), configured in one step (LOOP_CONFIGURE, Linux 5.8+) with autoclear
//! and, by default, direct I/O on the backing file so its pages are not cached twice.
//!
//! Autoclear means the kernel detaches the device when its last user closes it. fsbench holds
//! a descriptor for as long as the target lives, and mounts hold the device while mounted, so a
//! killed fsbench leaves at most a mount behind, and the device frees itself once that is
//! unmounted (`fsbench cleanup`).

use crate::system::{LoopDevice, System};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
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

/// The backing file of a loop device, from sysfs (None when not attached).
pub fn backing_file(sys: &dyn System, device: &Path) -> Option<PathBuf> {
    let name = device.file_name()?.to_str()?;
    let path = PathBuf::from(format!("/sys/block/{name}/loop/backing_file"));
    let text = sys.read_file(&path).ok()?;
    Some(PathBuf::from(text.trim().trim_end_matches(" (deleted)")))
}

/// Whether the loop device is attached with direct I/O, as the kernel reports it (sysfs).
pub fn uses_direct_io(sys: &dyn System, device: &Path) -> Option<bool> {
    let name = device.file_name()?.to_str()?;
    let text = sys
        .read_file(&PathBuf::from(format!("/sys/block/{name}/loop/dio")))
        .ok()?;
    Some(text.trim() == "1")
}
