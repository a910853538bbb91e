//! What machine, and which mounted filesystem, a measurement was taken on (provenance): the host
//! probed into its record (`fsbench_model::records::HostInfo`), mounts, free space.

use serde::Serialize;
use std::path::{Path, PathBuf};

pub use fsbench_model::records::HostInfo;

/// The host's record, read from the host.
pub trait ProbeHost {
    fn probe() -> Self;
}

impl ProbeHost for HostInfo {
    /// Reads uname(2), /proc/cpuinfo and /proc/meminfo; unknown fields are empty, never guessed.
    fn probe() -> HostInfo {
        // SAFETY: an all-zero utsname is valid and uname only writes into it.
        let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: `uts` is a valid, writable utsname.
        unsafe { libc::uname(&mut uts) };
        let field = |f: &[libc::c_char]| {
            let bytes: Vec<u8> = f
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let memory_bytes = memory_bytes().unwrap_or(0);
        HostInfo {
            hostname: field(&uts.nodename),
            kernel_release: field(&uts.release),
            kernel_version: field(&uts.version),
            machine: field(&uts.machine),
            cpu_model,
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_bytes,
            clock: crate::clock::Clock::info(),
        }
    }
}

/// This host's memory (MemTotal of /proc/meminfo), None where /proc says nothing.
pub fn memory_bytes() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// One line of /proc/self/mountinfo: the filesystem a path lives on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MountEntry {
    /// `major:minor` of the mounted device (an anonymous 0:N for btrfs, tmpfs, FUSE).
    pub device_number: String,
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    /// Filesystem-specific options as the kernel shows them (`rw,seclabel,size=…`).
    pub super_options: String,
}

/// Parses the text of /proc/self/mountinfo (see proc(5)).
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            Some(MountEntry {
                device_number: left.get(2)?.to_string(),
                mount_point: PathBuf::from(unescape_octal(left.get(4)?)),
                mount_options: left.get(5)?.to_string(),
                fs_type: right.first()?.to_string(),
                source: unescape_octal(right.get(1)?),
                super_options: right.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount that holds `path` (the longest mount point that is a prefix of it; the last such
/// line wins, as later mounts hide earlier ones).
pub fn mount_of(path: &Path) -> Option<MountEntry> {
    let path = path.canonicalize().ok()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<MountEntry> = None;
    for entry in parse_mountinfo(&text) {
        if path.starts_with(&entry.mount_point) {
            let longer = best.as_ref().is_none_or(|b| {
                entry.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len()
            });
            if longer {
                best = Some(entry);
            }
        }
    }
    best
}

/// The mount points strictly below the directory `dir` (resolved), as this process's
/// /proc/self/mountinfo lists them: other filesystems and bind mounts inside it.
pub fn mounts_inside(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let dir = dir.canonicalize()?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")?;
    let mut inside: Vec<PathBuf> = parse_mountinfo(&text)
        .into_iter()
        .map(|m| m.mount_point)
        .filter(|p| p.starts_with(&dir) && *p != dir)
        .collect();
    // Mounts stacked on one point are listed once.
    inside.sort();
    inside.dedup();
    Ok(inside)
}

/// Bytes available to an unprivileged writer on the filesystem holding `path` (statvfs
/// f_bavail x f_frsize). A path that does not exist yet is asked of its nearest existing parent.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    let mut probe = path;
    while !probe.exists() {
        probe = probe
            .parent()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
    }
    let stat = statvfs(probe)?;
    Ok(stat.f_bavail as u64 * stat.f_frsize as u64)
}

fn statvfs(path: &Path) -> std::io::Result<libc::statvfs> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: an all-zero statvfs is valid and statvfs only writes into it.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid NUL-terminated string, stat a valid writable struct.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stat)
}

/// Which filesystem instance a directory is on: what tells it from another filesystem mounted
/// at the same path later, of the same type with the same options (a run resumed there would
/// mix two filesystems' results). The filesystem id (statfs f_fsid) is the kernel's answer:
/// from the UUID for ext4 and btrfs (the same after a reboot), a new random one for every tmpfs
/// mount. The device number alone cannot tell: a new tmpfs gets the anonymous 0:N the last one
/// had. Where the filesystem gives no id (0), the device and the directory's inode decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FsInstance {
    /// f_fsid in hex; `0` where the filesystem has none.
    pub fsid: String,
    /// st_dev of the directory.
    pub device: u64,
    /// st_ino of the directory.
    pub inode: u64,
}

impl FsInstance {
    /// The instance `dir` is on.
    pub fn of(dir: &Path) -> std::io::Result<FsInstance> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir)?;
        Ok(FsInstance {
            fsid: format!("{:x}", statvfs(dir)?.f_fsid),
            device: meta.dev(),
            inode: meta.ino(),
        })
    }

    /// True when `other` is the same filesystem (the same id, or, without ids, the same
    /// directory on the same device).
    pub fn same_as(&self, other: &FsInstance) -> bool {
        if self.fsid != "0" && other.fsid != "0" {
            return self.fsid == other.fsid;
        }
        self.device == other.device && self.inode == other.inode
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mountinfo_lines() {
        let text = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=24683656k\n\
                    31 22 0:27 / /mnt/with\\040space rw - xfs /dev/loop3 rw,attr2\n";
        let entries = parse_mountinfo(text);
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[1].fs_type, "tmpfs");
        assert_eq!(entries[1].mount_options, "rw,nosuid,nodev");
        assert_eq!(entries[1].super_options, "rw,size=24683656k");
        assert_eq!(entries[2].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(entries[2].source, "/dev/loop3");
        assert_eq!(entries[2].device_number, "0:27");
    }

    #[test]
    fn finds_the_mount_of_a_real_path() {
        let root = mount_of(Path::new("/")).expect("/ is mounted");
        assert_eq!(root.mount_point, PathBuf::from("/"));
        let proc_mount = mount_of(Path::new("/proc/self")).expect("/proc is mounted");
        assert_eq!(proc_mount.fs_type, "proc");
    }

    #[test]
    fn free_space_of_a_path_or_its_nearest_existing_parent() {
        let here = free_bytes(Path::new("/")).unwrap();
        assert!(here > 0);
        assert!(free_bytes(Path::new("/no/such/dir/for/fsbench")).unwrap() > 0);
    }

    #[test]
    fn probes_the_host() {
        let host = HostInfo::probe();
        assert!(!host.kernel_release.is_empty());
        assert!(host.cpus >= 1);
        assert!(host.memory_bytes > 0);
    }
}
