//! FFSB's file list (its `filelist.c`, the `benchfiles` of a filesystem), which every thread of
//! a mix picks its files from. What FFSB does, and what this keeps:
//!
//! - Files are numbered in the order they were made (FFSB's `listsize` counts every number
//!   ever given). A deleted file's number becomes a hole, and the next create takes the oldest
//!   hole (a FIFO) before a new number, and with it the hole's name.
//! - A thread picks a file by drawing numbers below the count until one is in the list (the
//!   holes are drawn too, and drawn again), holding the list's lock shared; it then tries the
//!   file's own lock — shared to read, write, append or stat it, exclusive to delete it — and
//!   when another thread holds it the other way, lets the list go and picks afresh.
//! - A create adds its file under the list's lock held exclusively and holds the new file
//!   locked exclusively until it is written and closed, so no thread reads it half made; a
//!   delete holds the file exclusively while it unlinks it.
//!
//! FFSB's locks are a mutex and a condition variable each, taken on every pick; here the list's
//! lock is a `RwLock` (a shared hold is one atomic operation) and a file's lock one atomic word
//! that is only ever tried, never waited on, so the loop serializes no more than FFSB's does.
//! Files live in segments that never move, reached by number without the list's lock; a new
//! segment (twice the last) is allocated only when the numbers outgrow the ones made, under
//! the exclusive lock, as FFSB allocates on every create. One difference, of order only: a
//! delete unlinks its file before its number becomes a hole (FFSB makes the hole first, and a
//! create that takes it then waits for the delete's lock), so no thread ever waits for a lock.

use crate::names::{NameScheme, Namer, NAME_MAX};
use crate::rng::Rng;
use std::collections::VecDeque;
use std::ffi::CStr;
use std::io::Write;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};

/// A file's lock word: readers counted from 0, or one of these.
const WRITER: u32 = u32::MAX - 1;
/// Not in the list: never made, or deleted (a hole).
const HOLE: u32 = u32::MAX;

/// Bytes of a buffer any name of a list fits in: `d999999/` (at most 1,000,000 directories),
/// a file's name of at most NAME_MAX bytes, its NUL.
pub const NAME_BUF: usize = 8 + NAME_MAX + 1;

/// Numbers in the first segment; segment k holds `FIRST << k`.
const FIRST: u64 = 1024;
/// Enough segments for every number a u32 can be.
const SEGMENTS: usize = 23;

/// How a picked file is held: shared (read, write, append, stat) or alone (delete, rename).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    Shared,
    Alone,
}

/// One file (or directory) of the list.
struct Slot {
    lock: AtomicU32,
    /// Its size as the list knows it (appends add to it).
    size: AtomicU64,
    /// The directory it is in, fixed when its number is first given.
    dir: AtomicU32,
    /// Renames so far (a renamed directory's name ends `.N`).
    renames: AtomicU32,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            lock: AtomicU32::new(HOLE),
            size: AtomicU64::new(0),
            dir: AtomicU32::new(0),
            renames: AtomicU32::new(0),
        }
    }

    fn try_hold(&self, hold: Hold) -> bool {
        match hold {
            Hold::Alone => self
                .lock
                .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
                .is_ok(),
            Hold::Shared => {
                let mut now = self.lock.load(Ordering::Relaxed);
                while now < WRITER - 1 {
                    match self.lock.compare_exchange_weak(
                        now,
                        now + 1,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return true,
                        Err(seen) => now = seen,
                    }
                }
                false
            }
        }
    }
}

/// Who is in the list: the numbers given so far, the holes to give again, how many are files.
struct Members {
    given: u32,
    holes: VecDeque<u32>,
    live: u64,
}

/// A list of files (or of directories) one or every thread picks from, as FFSB's.
pub struct FileList {
    segments: [OnceLock<Box<[Slot]>>; SEGMENTS],
    members: RwLock<Members>,
    /// What names start with: `d` for files (`d12/f7`), `meta/m` for directories.
    kind: Kind,
    /// The thread whose own list this is (its names say so), or None for the one shared list.
    owner: Option<u64>,
    /// How its files are named (its metaop directories are numbered whatever the scheme).
    names: Namer,
}

/// What a list holds, and so how its names are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Files, in directories `dN`: `dN/fM` (`dN/tT-fM` in thread T's own list) when numbered,
    /// `dN/` and the scheme's name otherwise.
    Files,
    /// Directories of metaops, in `meta`: `meta/mM.R` (R: its renames).
    Dirs,
}

/// Segment and index of number `n`.
fn place(n: u32) -> (usize, usize) {
    let k = 63 - (n as u64 / FIRST + 1).leading_zeros() as usize;
    (k, (n as u64 - FIRST * ((1 << k) - 1)) as usize)
}

impl FileList {
    /// An empty list with room for `expected` numbers made now (more are made as needed), its
    /// files numbered (see [`FileList::named`]).
    pub fn new(kind: Kind, owner: Option<u64>, expected: u64) -> FileList {
        let list = FileList {
            segments: std::array::from_fn(|_| OnceLock::new()),
            members: RwLock::new(Members {
                given: 0,
                holes: VecDeque::new(),
                live: 0,
            }),
            kind,
            owner,
            names: Namer::new(NameScheme::Sequential, 0),
        };
        let last = expected.clamp(1, u32::MAX as u64) - 1;
        for k in 0..=place(last as u32).0 {
            list.segment(k);
        }
        list
    }

    /// The list, its files named by `names`: number M of thread T's own list is the scheme's
    /// name number `T << 32 | M` (no two lists share one).
    pub fn named(self, names: Namer) -> FileList {
        FileList { names, ..self }
    }

    /// How many names the lists of a run need at most: every number a list can give (a u32),
    /// in each of `lists` lists.
    pub fn names_needed(lists: u64) -> u64 {
        lists.saturating_mul(1 << 32)
    }

    fn segment(&self, k: usize) -> &[Slot] {
        self.segments[k].get_or_init(|| (0..FIRST << k).map(|_| Slot::new()).collect())
    }

    fn slot(&self, n: u32) -> &Slot {
        let (k, i) = place(n);
        &self.segment(k)[i]
    }

    /// Files in the list now.
    pub fn live(&self) -> u64 {
        self.members.read().unwrap_or_else(|p| p.into_inner()).live
    }

    /// Adds a file of `size` in directory `dir` (a hole's number and name first, as FFSB), held
    /// alone until [`FileList::release`]: the caller makes it.
    pub fn add(&self, dir: u32, size: u64) -> u32 {
        let mut members = self.members.write().unwrap_or_else(|p| p.into_inner());
        let n = match members.holes.pop_front() {
            Some(n) => n,
            None => {
                let n = members.given;
                members.given += 1;
                self.slot(n).dir.store(dir, Ordering::Relaxed);
                n
            }
        };
        let slot = self.slot(n);
        slot.size.store(size, Ordering::Relaxed);
        slot.lock.store(WRITER, Ordering::Release);
        members.live += 1;
        n
    }

    /// Picks a file at random and holds it as asked; None when the list has no file.
    pub fn pick(&self, rng: &mut Rng, hold: Hold) -> Option<u32> {
        loop {
            {
                let members = self.members.read().unwrap_or_else(|p| p.into_inner());
                if members.live == 0 {
                    return None;
                }
                let given = members.given as u64;
                loop {
                    let n = (rng.next_u64() % given) as u32;
                    let slot = self.slot(n);
                    if slot.lock.load(Ordering::Relaxed) == HOLE {
                        continue;
                    }
                    if slot.try_hold(hold) {
                        return Some(n);
                    }
                    break;
                }
            }
            // Held the other way by another thread: as FFSB, pick afresh (after letting the
            // others run, which FFSB's mutexes do by blocking).
            std::thread::yield_now();
        }
    }

    /// Lets go of a file picked or added.
    pub fn release(&self, n: u32, hold: Hold) {
        let lock = &self.slot(n).lock;
        match hold {
            Hold::Shared => lock.fetch_sub(1, Ordering::Release),
            Hold::Alone => lock.swap(0, Ordering::Release),
        };
    }

    /// Takes a file held alone out of the list (it was unlinked): its number becomes a hole.
    pub fn remove(&self, n: u32) {
        let mut members = self.members.write().unwrap_or_else(|p| p.into_inner());
        self.slot(n).lock.store(HOLE, Ordering::Release);
        members.holes.push_back(n);
        members.live -= 1;
    }

    pub fn size(&self, n: u32) -> u64 {
        self.slot(n).size.load(Ordering::Relaxed)
    }

    /// Adds to a file's size (an append), held shared; its size before.
    pub fn grow(&self, n: u32, by: u64) -> u64 {
        self.slot(n).size.fetch_add(by, Ordering::Relaxed)
    }

    /// The numbers of the files in the list now (for a check after the run, when no thread
    /// holds any).
    pub fn numbers(&self) -> Vec<u32> {
        let members = self.members.read().unwrap_or_else(|p| p.into_inner());
        (0..members.given)
            .filter(|&n| self.slot(n).lock.load(Ordering::Acquire) != HOLE)
            .collect()
    }

    /// Counts a rename of a directory held alone: its name changes.
    pub fn renamed(&self, n: u32) {
        self.slot(n).renames.fetch_add(1, Ordering::Relaxed);
    }

    /// The name of number `n` below the run's directory, written into `buf` (no allocation).
    pub fn name<'b>(&self, n: u32, buf: &'b mut [u8; NAME_BUF]) -> &'b CStr {
        let slot = self.slot(n);
        let mut at = &mut buf[..];
        let dir = slot.dir.load(Ordering::Relaxed);
        let number = self.owner.unwrap_or(0) << 32 | u64::from(n);
        let written = match (self.kind, self.owner) {
            (Kind::Files, None) => write!(at, "d{dir}/").and_then(|()| {
                self.names.write(&mut at, format_args!("f{n}"), number)?;
                at.write_all(b"\0")
            }),
            (Kind::Files, Some(t)) => write!(at, "d{dir}/").and_then(|()| {
                self.names
                    .write(&mut at, format_args!("t{t}-f{n}"), number)?;
                at.write_all(b"\0")
            }),
            (Kind::Dirs, owner) => {
                let renames = slot.renames.load(Ordering::Relaxed);
                match owner {
                    None => write!(at, "meta/m{n}.{renames}\0"),
                    Some(t) => write!(at, "meta/t{t}-m{n}.{renames}\0"),
                }
            }
        };
        written.expect("a name fits in NAME_BUF bytes");
        CStr::from_bytes_until_nul(&buf[..]).expect("written with its NUL")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_find_their_segment() {
        assert_eq!(place(0), (0, 0));
        assert_eq!(place(1023), (0, 1023));
        assert_eq!(place(1024), (1, 0));
        assert_eq!(place(3071), (1, 2047));
        assert_eq!(place(3072), (2, 0));
        assert_eq!(place(u32::MAX).0, SEGMENTS - 1);
    }

    /// FFSB's rules: a hole's number (and name) is given again, oldest first; a file held
    /// alone is not picked; a held file is not picked alone; an empty list has nothing.
    #[test]
    fn holes_are_reused_and_holds_exclude_as_ffsb_s() {
        let list = FileList::new(Kind::Files, None, 4);
        let mut rng = Rng::new(1);
        assert_eq!(list.pick(&mut rng, Hold::Shared), None);
        let (a, b, c) = (list.add(3, 10), list.add(5, 20), list.add(7, 30));
        assert_eq!((a, b, c), (0, 1, 2));
        let mut buf = [0u8; NAME_BUF];
        assert_eq!(list.name(b, &mut buf).to_str().unwrap(), "d5/f1");
        for n in [a, b, c] {
            list.release(n, Hold::Alone);
        }
        // b held shared: never picked alone; a and c are.
        assert!(list.slot(b).try_hold(Hold::Shared));
        for _ in 0..50 {
            let n = list.pick(&mut rng, Hold::Alone).unwrap();
            assert_ne!(n, b);
            list.release(n, Hold::Alone);
        }
        list.release(b, Hold::Shared);
        // Deleting c then a: the next creates take c's number and name, then a's.
        list.slot(c).try_hold(Hold::Alone);
        list.remove(c);
        list.slot(a).try_hold(Hold::Alone);
        list.remove(a);
        assert_eq!(list.live(), 1);
        for _ in 0..50 {
            let n = list.pick(&mut rng, Hold::Shared).unwrap();
            assert_eq!(n, b, "holes are never picked");
            list.release(n, Hold::Shared);
        }
        assert_eq!(list.add(9, 1), c);
        assert_eq!(list.name(c, &mut buf).to_str().unwrap(), "d7/f2");
        assert_eq!(list.add(9, 1), a);
        assert_eq!(list.add(9, 1), 3, "then new numbers");
        let own = FileList::new(Kind::Dirs, Some(4), 1);
        let d = own.add(0, 0);
        own.renamed(d);
        assert_eq!(own.name(d, &mut buf).to_str().unwrap(), "meta/t4-m0.1");
    }
}
