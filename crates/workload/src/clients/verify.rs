//! `--verify` for the client replay: what each client writes is a pattern determined by the
//! file and the offset, what every file must hold is tracked through the loadfile's creates,
//! truncations, renames, unlinks and tree deletions, and after the run every file the clients
//! left is read back and compared byte for byte.
//!
//! dbench's writes land at any offset and length, so the unit written is not a block but a
//! slice of the file's pattern: every 4 KiB block position `b` of a file has one content — the
//! header of `crate::verify` (the run's seed, the client's number as the file, the file's
//! incarnation as the sequence, the offset `b * 4096`, the payload's checksum) over a payload
//! from the client's incompressible pool — and a write of bytes `o..o + n` writes exactly those
//! bytes of the pattern. A file's incarnation is new whenever it is created or truncated, so a
//! block of an earlier life of the file is told from the present one. Per file the byte ranges
//! written are kept (sorted, merged), so the check knows every byte: the pattern where written,
//! zeros where never written, and the end of the file where the last write ended.
//!
//! A file is followed by identity, not by name: its state is a slot, named by at most one path
//! and referenced by every handle open on it, so a write through a handle opened before a rename
//! or an unlink lands in the right state. What cannot be followed is never checked, never a
//! false alarm: a file opened that was already there with data the run did not track, the files
//! under a renamed directory. Such files are counted (`verify_excluded_files`).

use super::loadfile::{Base, Line, LoadOp, LoadPath};
use crate::fileio::AlignedBuf;
use crate::verify::{payload_crc, Corruption, Stamp, BLOCK, HEADER};
use std::collections::HashMap;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

/// Blocks in a client's pool of payloads (1 MiB): a file's block `b` takes its payload from
/// pool block `(start + b) mod POOL_BLOCKS`, `start` drawn per incarnation.
const POOL_BLOCKS: usize = 256;
const NONE: u32 = u32::MAX;

/// The loadfile's paths, each once (canonical: no empty or `.` components), and per line the
/// paths it names: shared by the clients, built once before the run.
pub struct Paths {
    canon: Vec<(Base, Vec<u8>)>,
    ids: HashMap<(Base, Vec<u8>), u32>,
    /// Per line: its path ids (NONE where it names fewer).
    lines: Vec<[u32; 2]>,
}

fn canonical(path: &LoadPath) -> (Base, Vec<u8>) {
    let mut out = Vec::new();
    for part in path.rel.to_bytes().split(|&b| b == b'/') {
        if part.is_empty() || part == b"." {
            continue;
        }
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(part);
    }
    (path.base, out)
}

impl Paths {
    pub fn new(lines: &[Line]) -> Paths {
        let mut paths = Paths {
            canon: Vec::new(),
            ids: HashMap::new(),
            lines: Vec::with_capacity(lines.len()),
        };
        for line in lines {
            let mut ids = [NONE; 2];
            let named: [Option<&LoadPath>; 2] = match &line.op {
                LoadOp::NtCreateX { path, .. }
                | LoadOp::Unlink { path }
                | LoadOp::Deltree { path }
                | LoadOp::Rmdir { path }
                | LoadOp::Mkdir { path }
                | LoadOp::QueryPath { path }
                | LoadOp::FindFirst { path, .. } => [Some(path), None],
                LoadOp::Rename { from, to } => [Some(from), Some(to)],
                _ => [None, None],
            };
            for (k, path) in named.into_iter().enumerate() {
                if let Some(path) = path {
                    let key = canonical(path);
                    let next = paths.canon.len() as u32;
                    ids[k] = *paths.ids.entry(key.clone()).or_insert_with(|| {
                        paths.canon.push(key);
                        next
                    });
                }
            }
            paths.lines.push(ids);
        }
        paths
    }

    /// Whether path `id` is `of` or inside it (`of` the client's directory: every path of it).
    fn under(&self, id: usize, of: usize) -> bool {
        let (base, path) = &self.canon[id];
        let (of_base, prefix) = &self.canon[of];
        *base == Base::Client
            && *of_base == Base::Client
            && (prefix.is_empty()
                || (path.starts_with(prefix)
                    && (path.len() == prefix.len() || path[prefix.len()] == b'/')))
    }
}

/// What `--verify` refuses in a loadfile: a line that removes or renames `\clients`, the
/// directory all the clients share (one client would take the others' files with it).
pub fn refused(lines: &[Line]) -> Option<String> {
    lines.iter().find_map(|line| {
        let top = |p: &LoadPath| p.base == Base::Top;
        let shared = match &line.op {
            LoadOp::Deltree { path } | LoadOp::Unlink { path } | LoadOp::Rmdir { path } => {
                top(path)
            }
            LoadOp::Rename { from, to } => top(from) || top(to),
            _ => false,
        };
        shared.then(|| {
            format!(
                "line {} removes or renames \\clients, the directory every client shares: a \
                 client would take the others' files with it, which verify cannot follow",
                line.number
            )
        })
    })
}

/// One file as the client knows it.
struct Slot {
    incarnation: u64,
    /// Where the file ends: the end of its furthest write since it was created or truncated.
    size: u64,
    /// The byte ranges written, sorted, disjoint and not touching.
    ranges: Vec<(u64, u64)>,
    /// Found with data the client did not write: not checked.
    unknown: bool,
    /// The path naming it (NONE: none — unlinked, or under a renamed directory).
    path: u32,
    /// The path and the handles open on it; at 0 the slot is free.
    refs: u32,
}

/// A client's tracking: its pool, its files and its handles.
pub struct Tracker {
    paths: Arc<Paths>,
    seed: u64,
    client: u32,
    /// POOL_BLOCKS blocks of payload, then as many again as the largest write spans, a copy of
    /// the first (a write's slice is contiguous whatever block it starts at).
    pool: AlignedBuf,
    crcs: Vec<u32>,
    incarnations: u64,
    by_path: Vec<u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    handles: Vec<(u32, u32)>,
    /// Bytes written with no file state (a handle the client does not follow).
    stray: u64,
}

fn mix(mut x: u64) -> u64 {
    // splitmix64's finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Tracker {
    /// Client `client`'s tracking for writes of up to `biggest` bytes.
    pub fn new(paths: Arc<Paths>, seed: u64, client: u32, biggest: usize) -> Tracker {
        let room = biggest.div_ceil(BLOCK) + 1;
        let mut pool = AlignedBuf::new((POOL_BLOCKS + room) * BLOCK);
        let bytes = pool.as_mut_slice();
        crate::rng::Rng::new(mix(seed ^ u64::from(client))).fill(&mut bytes[..POOL_BLOCKS * BLOCK]);
        for k in 0..room {
            let from = (k % POOL_BLOCKS) * BLOCK;
            bytes.copy_within(from..from + BLOCK, (POOL_BLOCKS + k) * BLOCK);
        }
        let crcs = bytes[..POOL_BLOCKS * BLOCK]
            .chunks(BLOCK)
            .map(payload_crc)
            .collect();
        let n = paths.canon.len();
        Tracker {
            paths,
            seed,
            client,
            pool,
            crcs,
            incarnations: 0,
            by_path: vec![NONE; n],
            slots: Vec::with_capacity(64),
            free: Vec::with_capacity(64),
            handles: Vec::with_capacity(256),
            stray: 0,
        }
    }

    /// The path ids line `index` names.
    #[inline]
    pub fn ids(&self, index: usize) -> [u32; 2] {
        self.paths.lines[index]
    }

    fn fresh(&mut self, s: u32) {
        self.incarnations += 1;
        let slot = &mut self.slots[s as usize];
        slot.incarnation = self.incarnations;
        slot.size = 0;
        slot.ranges.clear();
        slot.unknown = false;
    }

    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot {
                    incarnation: 0,
                    size: 0,
                    ranges: Vec::with_capacity(16),
                    unknown: false,
                    path: NONE,
                    refs: 0,
                });
                self.slots.len() as u32 - 1
            }
        }
    }

    fn release(&mut self, s: u32) {
        if s == NONE {
            return;
        }
        let slot = &mut self.slots[s as usize];
        slot.refs -= 1;
        if slot.refs == 0 {
            self.free.push(s);
        }
    }

    /// Path `id` no longer names its file (unlinked, replaced, moved where it is not followed).
    fn detach(&mut self, id: u32) {
        let s = std::mem::replace(&mut self.by_path[id as usize], NONE);
        if s != NONE {
            self.slots[s as usize].path = NONE;
            self.release(s);
        }
    }

    /// Path `id` and every path under it no longer name their files.
    fn detach_under(&mut self, id: u32) {
        for j in 0..self.by_path.len() {
            if self.by_path[j] != NONE && self.paths.under(j, id as usize) {
                self.detach(j as u32);
            }
        }
    }

    /// An NTCreateX opened path `id` as `fd` (a directory when `directory`), O_TRUNC when
    /// `truncate`; `handle` keeps it (None: closed at once, the outcome not the one expected).
    pub fn opened(
        &mut self,
        id: u32,
        fd: RawFd,
        directory: bool,
        truncate: bool,
        handle: Option<u32>,
    ) {
        let s = if directory || id == NONE {
            NONE
        } else {
            match self.by_path[id as usize] {
                NONE => {
                    let s = self.alloc();
                    self.slots[s as usize].path = id;
                    self.slots[s as usize].refs = 1;
                    self.by_path[id as usize] = s;
                    self.fresh(s);
                    if !truncate {
                        // A file the client does not know of: followed only if it is empty.
                        // SAFETY: stat is plain data; fstat fills it.
                        let mut st: libc::stat = unsafe { std::mem::zeroed() };
                        // SAFETY: fd is open; st is valid and writable.
                        let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
                        self.slots[s as usize].unknown = !ok || st.st_size != 0;
                    }
                    s
                }
                s => {
                    if truncate {
                        self.fresh(s);
                    }
                    s
                }
            }
        };
        let Some(handle) = handle else {
            return;
        };
        if s != NONE {
            self.slots[s as usize].refs += 1;
        }
        match self.handles.iter_mut().find(|h| h.0 == handle) {
            Some(open) => {
                let old = std::mem::replace(&mut open.1, s);
                self.release(old);
            }
            None => self.handles.push((handle, s)),
        }
    }

    pub fn closed(&mut self, handle: u32) {
        if let Some(i) = self.handles.iter().position(|h| h.0 == handle) {
            let (_, s) = self.handles.swap_remove(i);
            self.release(s);
        }
    }

    /// Every handle closed (the end of the replay).
    pub fn close_all(&mut self) {
        while let Some((_, s)) = self.handles.pop() {
            self.release(s);
        }
    }

    /// A rename of `from` to `to` succeeded.
    pub fn renamed(&mut self, from: u32, to: u32) {
        if from == to {
            return;
        }
        let s = self.by_path[from as usize];
        if s != NONE {
            self.detach(to);
            self.by_path[from as usize] = NONE;
            self.by_path[to as usize] = s;
            self.slots[s as usize].path = to;
        } else {
            // A directory (or a file not followed): what was under either name is not followed.
            self.detach_under(from);
            self.detach_under(to);
        }
    }

    /// An unlink of `id` succeeded.
    pub fn unlinked(&mut self, id: u32) {
        self.detach(id);
    }

    /// A tree was removed (in part or whole: what stays is not followed).
    pub fn deltree(&mut self, id: u32) {
        self.detach_under(id);
    }

    /// What a WriteX of `len` bytes at `offset` through `handle` writes, the write counted in
    /// its file's state.
    #[inline]
    pub fn write(&mut self, handle: u32, offset: u64, len: usize) -> &[u8] {
        let s = self
            .handles
            .iter()
            .find(|h| h.0 == handle)
            .map_or(NONE, |h| h.1);
        let incarnation = if s == NONE {
            self.stray += len as u64;
            0
        } else {
            let slot = &mut self.slots[s as usize];
            if len > 0 {
                add_range(&mut slot.ranges, offset, offset + len as u64);
                slot.size = slot.size.max(offset + len as u64);
            }
            slot.incarnation
        };
        if len == 0 {
            return &[];
        }
        let first = offset / BLOCK as u64;
        let last = (offset + len as u64 - 1) / BLOCK as u64;
        let start = self.start(incarnation, first);
        let pool = self.pool.as_mut_slice();
        for k in 0..=(last - first) as usize {
            let p = start + k;
            Stamp {
                seed: self.seed,
                sequence: incarnation,
                offset: (first + k as u64) * BLOCK as u64,
                file: self.client,
                payload_crc: self.crcs[p % POOL_BLOCKS],
            }
            .write(&mut pool[p * BLOCK..]);
        }
        let at = start * BLOCK + (offset % BLOCK as u64) as usize;
        &self.pool.as_slice()[at..at + len]
    }

    /// The pool block holding the payload of block `block` of incarnation `incarnation`.
    #[inline]
    fn start(&self, incarnation: u64, block: u64) -> usize {
        (mix(self.seed ^ incarnation.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_add(block)
            % POOL_BLOCKS as u64) as usize
    }

    /// The pattern of block `block` of incarnation `incarnation`, into `out`.
    fn pattern(&self, incarnation: u64, block: u64, out: &mut [u8]) {
        let p = self.start(incarnation, block);
        out[HEADER..BLOCK]
            .copy_from_slice(&self.pool.as_slice()[p * BLOCK + HEADER..(p + 1) * BLOCK]);
        Stamp {
            seed: self.seed,
            sequence: incarnation,
            offset: block * BLOCK as u64,
            file: self.client,
            payload_crc: self.crcs[p],
        }
        .write(out);
    }
}

/// `ranges` with `a..b` added (kept sorted, disjoint, not touching); a write after the last
/// range's start (dbench's writes mostly go forward) costs a comparison.
#[inline]
fn add_range(ranges: &mut Vec<(u64, u64)>, a: u64, b: u64) {
    if let Some(last) = ranges.last_mut() {
        if a >= last.0 {
            if a <= last.1 {
                last.1 = last.1.max(b);
            } else {
                ranges.push((a, b));
            }
            return;
        }
    } else {
        ranges.push((a, b));
        return;
    }
    let i = ranges.partition_point(|r| r.1 < a);
    let (mut lo, mut hi) = (a, b);
    let mut j = i;
    while j < ranges.len() && ranges[j].0 <= hi {
        lo = lo.min(ranges[j].0);
        hi = hi.max(ranges[j].1);
        j += 1;
    }
    ranges.drain(i..j);
    ranges.insert(i, (lo, hi));
}

/// What a check found across the clients.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    pub files: u64,
    pub bytes: u64,
    /// Files found that the client could not follow (not checked).
    pub excluded: u64,
}

/// Reads back every regular file under `dir` (client `tracker`'s directory) and checks it
/// against what the client wrote; `evict` drops each file's cached pages first (the cache
/// could not be made cold). `Ok(Err(_))` names the first byte that is not what was written, or
/// a file the client left that is not there.
pub fn check_client(
    tracker: &Tracker,
    dir: &Path,
    evict: bool,
    verified: &mut Verified,
) -> io::Result<Result<(), Corruption>> {
    let mut seen = vec![false; tracker.slots.len()];
    let mut buf = vec![0u8; 256 * BLOCK];
    let mut pending = vec![(dir.to_path_buf(), Vec::<u8>::new())];
    while let Some((path, rel)) = pending.pop() {
        for entry in std::fs::read_dir(&path)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = entry.file_name();
            let mut child = rel.clone();
            if !child.is_empty() {
                child.push(b'/');
            }
            child.extend_from_slice(name.as_bytes());
            if kind.is_dir() {
                pending.push((entry.path(), child));
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let s = tracker
                .paths
                .ids
                .get(&(Base::Client, child))
                .map_or(NONE, |&id| tracker.by_path[id as usize]);
            if s == NONE || tracker.slots[s as usize].unknown {
                verified.excluded += 1;
                continue;
            }
            seen[s as usize] = true;
            let file_path = entry.path();
            match check_file(tracker, s, &file_path, evict, &mut buf)? {
                Ok(bytes) => {
                    verified.files += 1;
                    verified.bytes += bytes;
                }
                Err(corruption) => return Ok(Err(corruption)),
            }
        }
    }
    for (id, &s) in tracker.by_path.iter().enumerate() {
        if s != NONE && !tracker.slots[s as usize].unknown && !seen[s as usize] {
            let slot = &tracker.slots[s as usize];
            return Ok(Err(Corruption {
                path: dir.join(std::ffi::OsStr::from_bytes(&tracker.paths.canon[id].1)),
                offset: 0,
                expected: format!("a file of {} bytes (client {})", slot.size, tracker.client),
                found: "no such file".into(),
            }));
        }
    }
    Ok(Ok(()))
}

/// Checks one file against slot `s`: its length, then every block, byte for byte; the bytes
/// checked.
fn check_file(
    tracker: &Tracker,
    s: u32,
    path: &Path,
    evict: bool,
    buf: &mut [u8],
) -> io::Result<Result<u64, Corruption>> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    let slot = &tracker.slots[s as usize];
    // Never through a symlink: a name in the directory under test is not proof of a file.
    let file = crate::fileio::open(path, crate::fileio::OpenMode::Read, false)?;
    if evict {
        // SAFETY: advice on a descriptor `file` owns.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    let corrupt = |offset: u64, expected: String, found: String| Corruption {
        path: path.to_path_buf(),
        offset,
        expected,
        found,
    };
    let len = file.metadata()?.len();
    let size = slot.size;
    let mut expected = vec![0u8; BLOCK];
    let mut pattern = vec![0u8; BLOCK];
    let mut at = 0u64;
    let mut range = 0;
    while at < size.min(len) {
        let want = ((size.min(len) - at) as usize).min(buf.len());
        let mut got = 0;
        while got < want {
            match file.read_at(&mut buf[got..want], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        for found in buf[..got].chunks(BLOCK) {
            let block = at / BLOCK as u64;
            let end = at + found.len() as u64;
            // What this block must hold: the pattern where written, zeros elsewhere.
            expected[..found.len()].fill(0);
            let mut written = Vec::new();
            while range < slot.ranges.len() && slot.ranges[range].1 <= at {
                range += 1;
            }
            let mut r = range;
            if r < slot.ranges.len() && slot.ranges[r].0 < end {
                tracker.pattern(slot.incarnation, block, &mut pattern);
            }
            while r < slot.ranges.len() && slot.ranges[r].0 < end {
                let (lo, hi) = (slot.ranges[r].0.max(at), slot.ranges[r].1.min(end));
                let (lo_i, hi_i) = ((lo - at) as usize, (hi - at) as usize);
                expected[lo_i..hi_i].copy_from_slice(&pattern[lo_i..hi_i]);
                written.push((lo, hi));
                r += 1;
            }
            if let Some(i) = found
                .iter()
                .zip(&expected[..found.len()])
                .position(|(f, e)| f != e)
            {
                let whole = written == [(at, at + BLOCK as u64)];
                let what = if written.is_empty() {
                    "zeros (never written)".to_string()
                } else if whole {
                    format!(
                        "client {}'s block at byte {at} (incarnation {} of the file, seed {:#x})",
                        tracker.client, slot.incarnation, tracker.seed
                    )
                } else {
                    let spans: Vec<String> = written
                        .iter()
                        .map(|(lo, hi)| format!("{lo}..{hi}"))
                        .collect();
                    format!(
                        "client {}'s pattern at bytes {} (incarnation {} of the file, seed \
                         {:#x}), zeros in the rest",
                        tracker.client,
                        spans.join(", "),
                        slot.incarnation,
                        tracker.seed
                    )
                };
                let byte = at + i as u64;
                return Ok(Err(corrupt(
                    at,
                    format!("{what}: byte {byte} {:#04x}", expected[i]),
                    format!("{}: byte {byte} {:#04x}", describe(found, whole), found[i]),
                )));
            }
            at = end;
        }
        if got < want {
            break;
        }
    }
    if len != size {
        return Ok(Err(corrupt(
            at.min(len).min(size) / BLOCK as u64 * BLOCK as u64,
            format!("a file of {size} bytes (where its last write ended)"),
            format!("a file of {len} bytes"),
        )));
    }
    Ok(Ok(size))
}

/// What a block read back says of itself (`whole`: it was written whole, so its payload must
/// match its stamp's checksum).
fn describe(found: &[u8], whole: bool) -> String {
    if found.len() < HEADER {
        return format!("{} bytes", found.len());
    }
    match Stamp::read(found) {
        Ok(stamp) if whole && payload_crc(found) != stamp.payload_crc => format!(
            "client {}'s block at byte {} (incarnation {}): its payload changed (checksum \
             {:#010x}, stamped {:#010x})",
            stamp.file,
            stamp.offset,
            stamp.sequence,
            payload_crc(found),
            stamp.payload_crc
        ),
        Ok(stamp) => format!(
            "client {}'s block at byte {} (incarnation {}, seed {:#x})",
            stamp.file, stamp.offset, stamp.sequence, stamp.seed
        ),
        Err(why) => why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    /// What a client cannot follow is excluded and counted, never a false alarm: the files
    /// under a renamed directory, a file found holding data the client did not write. A file
    /// the client left that is gone is found.
    #[test]
    fn what_cannot_be_followed_is_excluded_and_a_missing_file_found() {
        let lines = super::super::parse(
            "NTCreateX \"\\clients\\client1\\d\\x\" 0x40 0x2 1 NT_STATUS_OK\n\
             Rename \"\\clients\\client1\\d\" \"\\clients\\client1\\e\" NT_STATUS_OK\n\
             NTCreateX \"\\clients\\client1\\y\" 0x40 0x2 2 NT_STATUS_OK\n\
             NTCreateX \"\\clients\\client1\\z\" 0x40 0x2 3 NT_STATUS_OK\n",
            "test",
        )
        .unwrap();
        let paths = Arc::new(Paths::new(&lines));
        let mut tracker = Tracker::new(paths, 5, 1, 65536);
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir(top.join("d")).unwrap();
        let open = |name: &str| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(top.join(name))
                .unwrap()
        };
        // d/x written unaligned, then d renamed to e.
        let x = open("d/x");
        tracker.opened(tracker.ids(0)[0], x.as_raw_fd(), false, false, Some(1));
        x.write_all_at(tracker.write(1, 10, 5000), 10).unwrap();
        tracker.closed(1);
        std::fs::rename(top.join("d"), top.join("e")).unwrap();
        let [from, to] = tracker.ids(1);
        tracker.renamed(from, to);
        // y already held data when it was opened.
        std::fs::write(top.join("y"), b"not the client's").unwrap();
        let y = open("y");
        tracker.opened(tracker.ids(2)[0], y.as_raw_fd(), false, false, Some(2));
        tracker.closed(2);
        // z written whole blocks and a tail.
        let z = open("z");
        tracker.opened(tracker.ids(3)[0], z.as_raw_fd(), false, false, Some(3));
        z.write_all_at(tracker.write(3, 0, 10000), 0).unwrap();
        tracker.closed(3);

        let mut verified = Verified::default();
        check_client(&tracker, top, false, &mut verified)
            .unwrap()
            .unwrap();
        assert_eq!(
            verified,
            Verified {
                files: 1,
                bytes: 10000,
                excluded: 2
            }
        );
        std::fs::remove_file(top.join("z")).unwrap();
        let mut verified = Verified::default();
        let gone = check_client(&tracker, top, false, &mut verified)
            .unwrap()
            .unwrap_err();
        assert_eq!(gone.path, top.join("z"));
        assert_eq!(gone.found, "no such file");
    }

    #[test]
    fn ranges_stay_sorted_disjoint_and_merged() {
        let mut r = Vec::new();
        add_range(&mut r, 10, 20);
        add_range(&mut r, 20, 30);
        assert_eq!(r, [(10, 30)]);
        add_range(&mut r, 40, 50);
        add_range(&mut r, 0, 5);
        assert_eq!(r, [(0, 5), (10, 30), (40, 50)]);
        add_range(&mut r, 4, 41);
        assert_eq!(r, [(0, 50)]);
        add_range(&mut r, 60, 70);
        add_range(&mut r, 55, 56);
        assert_eq!(r, [(0, 50), (55, 56), (60, 70)]);
    }
}
