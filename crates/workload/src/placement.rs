//! Where the user buffers of buffered reads and writes sit relative to a page, chosen on the
//! host by timing, not fixed in the code. The kernel copies every buffered read into the
//! workload's buffer and every write out of it, and how fast that copy runs depends on the
//! destination's (and source's) offset within a page in ways that differ between CPUs: one
//! machine read 4 KiB into a buffer 16 bytes past a page at 1.8 GB/s and at 4.5 GB/s at +0, +64
//! or +2048, where the machine before it had +16 fast and every cache-line-aligned offset slow
//! (bench/README.md). A placement that is right on one CPU and 2.5× wrong on another is a
//! harness cost that would decide results, so before a workload's first timed pass it times a
//! few thousand 4 KiB reads and writes of a small file in the directory under test at each
//! candidate offset, interleaved in rounds, and keeps the fastest of each (untimed, about a
//! tenth of a second, once per process and filesystem). O_DIRECT buffers stay page-aligned.

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

    /// The buffers' placement for I/O in `dir`: page-aligned for direct I/O, else calibrated
    /// there (once per process and filesystem). A directory where the calibration cannot run
    /// (read-only, full) gets malloc's placement, +16, the one most programs read into.
    pub fn for_dir(dir: &Path, direct: bool) -> Placement {
        if direct {
            return Placement::ALIGNED;
        }
        let key = filesystem_of(dir);
        static KNOWN: Mutex<Option<HashMap<(u64, i64), Placement>>> = Mutex::new(None);
        if let Some(known) = KNOWN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|k| k.get(&key))
        {
            return *known;
        }
        let chosen = calibrate(dir).unwrap_or(Placement {
            read: 16,
            write: 16,
        });
        KNOWN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(key, chosen);
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

    /// How the dry run says the calibration: the candidates, fastest timed on the target.
    pub fn describe() -> String {
        let offsets: Vec<String> = CANDIDATES.iter().map(|c| format!("+{c}")).collect();
        format!("calibrated (fastest of {} B)", offsets.join(","))
    }
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

/// Records of the calibration file, and operations timed per candidate and round.
const RECORDS: u64 = 256;
const RECORD: usize = 4096;
/// (At 256 operations a timing, about 0.2 ms, the few per cent between offsets were near the
/// noise.) The file is cache-sized: on an Intel Xeon the best offset for reads from the cache
/// (+0, +2048) is not the best for reads from memory (+16, +4000; bench/README.md).
const OPS: u64 = 1024;
const ROUNDS: usize = 11;

/// Times reads and writes of a small file in `dir` at every candidate offset, interleaved in
/// rounds (each round in another order), and keeps the candidate of the lowest median.
fn calibrate(dir: &Path) -> io::Result<Placement> {
    let file = Scratch::create(dir)?;
    let mut buffer = AlignedBuf::new(RECORD + ROOM);
    crate::rng::Rng::new(0x5eed).fill(buffer.as_mut_slice());
    let fd = file.file.as_raw_fd();
    for r in 0..RECORDS {
        raw::pwrite_all(fd, &buffer.as_slice()[..RECORD], r * RECORD as u64)?;
    }
    let mut time = |offset: usize, write: bool| -> io::Result<u64> {
        let started = std::time::Instant::now();
        for i in 0..OPS {
            let at = (i % RECORDS) * RECORD as u64;
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
        let chosen = calibrate(dir.path()).unwrap();
        assert!(CANDIDATES.contains(&chosen.read) && CANDIDATES.contains(&chosen.write));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // Direct I/O is page-aligned; a directory where nothing can be made gets +16.
        assert_eq!(Placement::for_dir(dir.path(), true), Placement::ALIGNED);
        let gone = dir.path().join("gone");
        assert_eq!(
            Placement::for_dir(&gone, false),
            Placement {
                read: 16,
                write: 16
            }
        );
    }
}
