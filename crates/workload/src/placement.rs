//! Where the user buffers of buffered reads and writes sit relative to a page, chosen on the
//! host by timing, not fixed in the code. The kernel copies every buffered read into the
//! workload's buffer and every write out of it, and how fast that copy runs depends on the
//! destination's (and source's) offset within a page in ways that differ between CPUs: one
//! machine read 4 KiB into a buffer 16 bytes past a page at 1.8 GB/s and at 4.5 GB/s at +0, +64
//! or +2048, where the machine before it had +16 fast and every cache-line-aligned offset slow
//! (bench/README.md). It also differs with where the file's pages sit: on an Intel Xeon a file
//! in the CPU's caches read fastest into +0 or +2048 and one read from memory into +16 or +4000.
//! A placement that is right on one CPU and 2.5× wrong on another is a harness cost that would
//! decide results, so before a workload's first timed pass it times a few thousand 4 KiB reads
//! and writes of a file in the directory under test at each candidate offset, interleaved in
//! rounds, and keeps the fastest of each (untimed, a tenth of a second or so, once per process,
//! filesystem and [`Reach`]). The file is cache-sized (1 MiB) for a working set that fits in a
//! core's own caches and memory-sized (each timing reads pages last touched a whole file ago)
//! for a larger one. O_DIRECT buffers stay page-aligned.

use crate::fileio::{raw, AlignedBuf, BUFFER_ALIGN};
use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Mutex;

/// The offsets past a page boundary tried: page-aligned, where malloc'd memory lands (+16),
/// cache-line-aligned (+64), half a page, and near the page's end (a 4 KiB copy then spans two
/// pages). Every one is below [`BUFFER_ALIGN`]: a buffer with a page of room takes any.
pub const CANDIDATES: [usize; 5] = [0, 16, 64, 2048, 4000];

/// Bytes of room a buffer needs beyond its largest record to take any candidate offset.
pub const ROOM: usize = BUFFER_ALIGN;

/// The chosen offsets (bytes past a page boundary) of the buffers buffered reads land in and
/// buffered writes are copied from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    pub read: usize,
    pub write: usize,
}

impl Placement {
    /// O_DIRECT's: page-aligned, as the kernel requires.
    pub const ALIGNED: Placement = Placement { read: 0, write: 0 };

    /// malloc's placement, the one most programs read into: what a directory where the
    /// calibration cannot run (read-only, full) gets.
    pub const MALLOC: Placement = Placement {
        read: 16,
        write: 16,
    };

    /// The buffers' placement for I/O in `dir` over a working set of `working_set` bytes:
    /// page-aligned for direct I/O, else calibrated there (once per process, filesystem and
    /// reach). Where a memory-sized file does not fit, the cache-sized calibration's choice; where
    /// no calibration can run, [`Placement::MALLOC`].
    pub fn for_dir(dir: &Path, direct: bool, working_set: u64) -> Placement {
        if direct {
            return Placement::ALIGNED;
        }
        let reach = Reach::of(working_set);
        let (dev, kind) = filesystem_of(dir);
        static KNOWN: Mutex<Option<HashMap<Key, Placement>>> = Mutex::new(None);
        let known = |reach: Reach| {
            KNOWN
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .and_then(|k| k.get(&(dev, kind, reach)).copied())
        };
        if let Some(known) = known(reach) {
            return known;
        }
        let chosen = match reach {
            Reach::Cache => calibrate(dir, Reach::Cache.file_bytes()).ok(),
            Reach::Memory => {
                let bytes = Reach::Memory.file_bytes();
                if crate::fileio::free_space(dir)
                    .is_some_and(|(room, _)| room >= bytes.saturating_mul(2))
                {
                    calibrate(dir, bytes).ok()
                } else {
                    None
                }
            }
        };
        let chosen = match (chosen, reach) {
            (Some(chosen), _) => chosen,
            (None, Reach::Memory) => Placement::for_dir(dir, false, 0),
            (None, Reach::Cache) => Placement::MALLOC,
        };
        KNOWN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert((dev, kind, reach), chosen);
        chosen
    }

    /// How the dry run says the placement a workload will use: page-aligned for direct I/O,
    /// else the calibration's rule.
    pub fn planned(direct: bool) -> String {
        if direct {
            "page-aligned (O_DIRECT)".into()
        } else {
            Placement::describe()
        }
    }

    /// How the dry run says the calibration: the candidates, fastest timed on the target for
    /// the working set's reach.
    pub fn describe() -> String {
        let offsets: Vec<String> = CANDIDATES.iter().map(|c| format!("+{c}")).collect();
        format!(
            "calibrated (fastest of {} B, timed on a file of the working set's reach: cache or memory)",
            offsets.join(",")
        )
    }
}

/// A calibration's key: the filesystem (device, type) and the reach it was timed for.
type Key = (u64, i64, Reach);

/// Where a working set's pages are when the kernel copies them: in the core's own caches (it
/// fits in the largest cache of level 2 or below) or beyond them, in the shared cache or memory.
/// The best offset can differ between the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reach {
    Cache,
    Memory,
}

impl Reach {
    /// The reach of a working set of `bytes` on this CPU.
    pub fn of(bytes: u64) -> Reach {
        if bytes <= caches().core {
            Reach::Cache
        } else {
            Reach::Memory
        }
    }

    /// The calibration file's size: half a core's caches within 64 KiB to 1 MiB, or four times
    /// the last-level cache within 64 MiB to 256 MiB (a VM may report the host's whole L3,
    /// 480 MiB on this project's machine), so that each timing reads pages the caches lost long
    /// ago.
    fn file_bytes(self) -> u64 {
        match self {
            Reach::Cache => (caches().core / 2).clamp(64 << 10, 1 << 20),
            Reach::Memory => (4 * caches().last).clamp(64 << 20, 256 << 20),
        }
    }
}

/// The CPU's cache sizes as sysfs gives cpu0's: the largest of level 2 or below (a core's own)
/// and the largest of all; 1 MiB and 32 MiB where the host does not say.
struct Caches {
    core: u64,
    last: u64,
}

fn caches() -> &'static Caches {
    static CACHES: std::sync::OnceLock<Caches> = std::sync::OnceLock::new();
    CACHES.get_or_init(|| {
        let (mut core, mut last) = (None::<u64>, None::<u64>);
        for index in 0..16 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
            let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}"));
            let (Ok(level), Ok(size)) = (read("level"), read("size")) else {
                continue;
            };
            let (Ok(level), Some(bytes)) = (level.trim().parse::<u32>(), size_of(size.trim()))
            else {
                continue;
            };
            if level <= 2 {
                core = core.max(Some(bytes));
            }
            last = last.max(Some(bytes));
        }
        Caches {
            core: core.unwrap_or(1 << 20),
            last: last.unwrap_or(32 << 20),
        }
    })
}

/// A sysfs cache size (`48K`, `2048K`, `32M`) in bytes.
fn size_of(text: &str) -> Option<u64> {
    let (digits, shift) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 10),
        b'M' => (&text[..text.len() - 1], 20),
        b'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    digits.parse::<u64>().ok().map(|n| n << shift)
}

/// The filesystem `dir` is on, as a calibration's key: its device and its type (one loop
/// device carries ext4 in one sample and xfs in the next).
fn filesystem_of(dir: &Path) -> (u64, i64) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).map(|m| m.dev()).unwrap_or(0);
    let Ok(name) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return (dev, 0);
    };
    // SAFETY: statfs writes into the zeroed struct it is given; the path is NUL-terminated.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    let kind = if unsafe { libc::statfs(name.as_ptr(), &mut fs) } == 0 {
        fs.f_type as i64
    } else {
        0
    };
    (dev, kind)
}

/// The calibration's record.
const RECORD: usize = 4096;
/// Operations timed per candidate and round. (At 256 operations a timing, about 0.2 ms, the
/// few per cent between offsets were near the noise.)
const OPS: u64 = 1024;
const ROUNDS: usize = 11;

/// Times reads and writes of a file of `bytes` in `dir` at every candidate offset, interleaved
/// in rounds (each round in another order), and keeps the candidate of the lowest median. Each
/// timing goes on where the last one stopped, so in a file larger than the CPU's caches every
/// timing reads and writes pages from memory.
fn calibrate(dir: &Path, bytes: u64) -> io::Result<Placement> {
    let records = (bytes / RECORD as u64).max(1);
    let file = Scratch::create(dir)?;
    let mut buffer = AlignedBuf::new(RECORD + ROOM);
    crate::rng::Rng::new(0x5eed).fill(buffer.as_mut_slice());
    let fd = file.file.as_raw_fd();
    for r in 0..records {
        raw::pwrite_all(fd, &buffer.as_slice()[..RECORD], r * RECORD as u64)?;
    }
    let mut next = 0u64;
    let mut time = |offset: usize, write: bool| -> io::Result<u64> {
        let started = std::time::Instant::now();
        for _ in 0..OPS {
            let at = next * RECORD as u64;
            next = (next + 1) % records;
            let slice = &mut buffer.as_mut_slice()[offset..offset + RECORD];
            if write {
                raw::pwrite_all(fd, slice, at)?;
            } else {
                raw::pread_exact(fd, slice, at)?;
            }
        }
        Ok(started.elapsed().as_nanos() as u64)
    };
    let mut choose = |write: bool| -> io::Result<usize> {
        // Warm the file and the buffer once at every offset, untimed.
        for &c in &CANDIDATES {
            time(c, write)?;
        }
        let mut took: Vec<Vec<u64>> = vec![Vec::with_capacity(ROUNDS); CANDIDATES.len()];
        for round in 0..ROUNDS {
            for k in 0..CANDIDATES.len() {
                let c = (k + round) % CANDIDATES.len();
                took[c].push(time(CANDIDATES[c], write)?);
            }
        }
        let median = |v: &mut Vec<u64>| {
            v.sort_unstable();
            v[v.len() / 2]
        };
        let medians: Vec<u64> = took.iter_mut().map(median).collect();
        let best = (0..CANDIDATES.len())
            .min_by_key(|&c| medians[c])
            .expect("candidates");
        Ok(CANDIDATES[best])
    };
    let read = choose(false)?;
    let write = choose(true)?;
    Ok(Placement { read, write })
}

/// The calibration's file: a new name in the directory (`O_EXCL`), removed when dropped.
struct Scratch {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl Scratch {
    fn create(dir: &Path) -> io::Result<Scratch> {
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!(".fsbench-placement-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Scratch { file, path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibration_picks_a_candidate_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for bytes in [Reach::Cache.file_bytes(), 8 << 20] {
            let chosen = calibrate(dir.path(), bytes).unwrap();
            assert!(CANDIDATES.contains(&chosen.read) && CANDIDATES.contains(&chosen.write));
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
        // Direct I/O is page-aligned; a directory where nothing can be made gets +16, at
        // either reach.
        assert_eq!(Placement::for_dir(dir.path(), true, 0), Placement::ALIGNED);
        let gone = dir.path().join("gone");
        assert_eq!(Placement::for_dir(&gone, false, 0), Placement::MALLOC);
        assert_eq!(
            Placement::for_dir(&gone, false, u64::MAX),
            Placement::MALLOC
        );
    }

    /// A working set within a core's caches is cache-reach, a larger one memory; the memory
    /// calibration's file outgrows the cache it is sized by (within its bounds).
    #[test]
    fn a_working_set_beyond_the_cache_is_calibrated_from_memory() {
        let core = caches().core;
        assert!(core >= 64 << 10, "{core}");
        assert_eq!(Reach::of(0), Reach::Cache);
        assert_eq!(Reach::of(core), Reach::Cache);
        assert_eq!(Reach::of(core + 1), Reach::Memory);
        assert_eq!(Reach::of(u64::MAX), Reach::Memory);
        assert!(Reach::Memory.file_bytes() >= (4 * caches().last).min(256 << 20));
        assert!(Reach::Cache.file_bytes() <= core);
        assert_eq!(size_of("48K"), Some(48 << 10));
        assert_eq!(size_of("32M"), Some(32 << 20));
        assert_eq!(size_of("491520K"), Some(480 << 20));
        assert_eq!(size_of("K"), None);
    }

    /// Where a memory-sized file does not fit, the cache-sized calibration decides: a 16 MiB
    /// tmpfs takes no 64 MiB file, and the memory reach gets a candidate there all the same
    /// and leaves nothing behind. Real: needs root to mount.
    #[test]
    fn a_small_filesystem_falls_back_to_the_cache_calibration() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m", "fsbench-test"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let memory = Placement::for_dir(dir.path(), false, 1 << 40);
        let cache = Placement::for_dir(dir.path(), false, 0);
        let left = std::fs::read_dir(dir.path()).unwrap().count();
        let status = std::process::Command::new("umount")
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(
            memory, cache,
            "a memory reach that did not fit took the cache's choice"
        );
        assert!(CANDIDATES.contains(&memory.read) && CANDIDATES.contains(&memory.write));
        assert_eq!(left, 0);
    }
}
