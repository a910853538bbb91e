//! The durability workload's oracle: what POSIX and Linux promise survives a crash at each
//! moment of a sequence, kept as the sequence runs, and the check of a tree after the cut
//! against it (docs/durability.md has the rules and their sources).
//!
//! Promised, and checked:
//! - **A file's data and size after fsync or fdatasync** of it (or an O_SYNC / O_DSYNC write,
//!   or syncfs / sync): every block as then, or as a later write left it; the size at least the
//!   smallest and at most the largest it had since. Less is *lost fsync'd data*; more, or a
//!   size it never had, a *wrong size*.
//! - **A name after an fsync of its directory** (or syncfs / sync): the name is there, naming
//!   that file; a missing one is a *missing name*.
//! - **A rename over a name that was durable**: the name stays, naming the old file or the
//!   new one, never missing, never empty when neither could be: else *rename not atomic*.
//!
//! Not promised: anything not made durable by one of these (an unsynced write or name may be
//! lost, or half kept), sync_file_range (it writes data back, no metadata and no device cache:
//! not a durability call), a name's removal. Except: **no file may show another file's data**.
//! Every block written is stamped with its file and offset (`crate::verify`), so a block of
//! another file, of another run, at another offset, or unstamped and not zero, in any file
//! found, is *stale data exposed* — `data=writeback`'s known risk — promised or not.

use crate::verify::{payload_crc, Stamp, BLOCK};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

/// A file of the sequence, as its blocks' stamps name it.
pub type FileId = u32;

/// A block's content as the oracle knows it: the sequence number of the write that left it,
/// plus one; 0 for zeros (a hole, a block a truncate or fallocate left).
type Block = u64;
/// A block of a durable state nothing promised (an O_DSYNC write made others durable).
const ANY: Block = u64::MAX - 1;
/// A block found that no write of the file left (another file's, unstamped, torn).
const NONE: Block = u64::MAX;

/// The kinds of violation, each a figure of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    LostData,
    WrongSize,
    MissingName,
    RenameNotAtomic,
    Unreadable,
    StaleData,
    FsckErrors,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::LostData,
        Kind::WrongSize,
        Kind::MissingName,
        Kind::RenameNotAtomic,
        Kind::Unreadable,
        Kind::StaleData,
        Kind::FsckErrors,
    ];

    /// As results and reports say it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::LostData => "lost fsync'd data",
            Kind::WrongSize => "wrong size",
            Kind::MissingName => "missing name",
            Kind::RenameNotAtomic => "rename not atomic",
            Kind::Unreadable => "unreadable",
            Kind::StaleData => "stale data exposed",
            Kind::FsckErrors => "fsck errors",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken promise found after a cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub kind: Kind,
    /// The name, relative to the sequence's directory.
    pub path: String,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.kind, self.path, self.detail)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
struct State {
    blocks: Vec<Block>,
    size: u64,
}

#[derive(Debug, Clone, Default)]
struct FileModel {
    now: State,
    /// As last made durable (None: never).
    durable: Option<State>,
    /// Per block, what each change since `durable` left there.
    since: Vec<BTreeSet<Block>>,
    min_size: u64,
    max_size: u64,
}

impl FileModel {
    fn changed(&mut self, block: usize, value: Block) {
        if self.since.len() <= block {
            self.since.resize(block + 1, BTreeSet::new());
        }
        self.since[block].insert(value);
    }

    fn sized(&mut self, size: u64) {
        self.now.size = size;
        self.min_size = self.min_size.min(size);
        self.max_size = self.max_size.max(size);
    }

    fn persist(&mut self) {
        self.durable = Some(self.now.clone());
        self.since.clear();
        self.min_size = self.now.size;
        self.max_size = self.now.size;
    }

    /// An O_SYNC or O_DSYNC write of blocks `first..end`: those blocks, and a size that
    /// reaches them, are durable; nothing else the file went through since.
    fn persist_range(&mut self, first: usize, end: usize) {
        let durable = self.durable.get_or_insert_with(State::default);
        if durable.blocks.len() < end {
            durable.blocks.resize(end, ANY);
        }
        for b in first..end {
            durable.blocks[b] = self.now.blocks[b];
            if let Some(since) = self.since.get_mut(b) {
                since.clear();
            }
        }
        let reach = (end * BLOCK) as u64;
        durable.size = durable.size.max(reach);
        self.min_size = self.min_size.max(reach);
    }
}

/// Why a name is promised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// Its directory was synced (or the filesystem).
    Synced,
    /// A rename went over it while it was promised.
    RenamedOver,
}

/// What the sequence did and what of it is promised, kept as it runs.
#[derive(Debug, Clone)]
pub struct Oracle {
    seed: u64,
    files: BTreeMap<FileId, FileModel>,
    /// Every name now, and the file it names.
    names: BTreeMap<String, FileId>,
    /// Directories now ("" is the sequence's own).
    dirs: BTreeSet<String>,
    /// Every file a name ever named in this sequence.
    ever: BTreeMap<String, BTreeSet<FileId>>,
    /// Names promised, with the files they may name.
    promised: BTreeMap<String, (BTreeSet<FileId>, Cause)>,
    promised_dirs: BTreeSet<String>,
    /// Each file's inode: its number and generation ([`Inode`]).
    inodes: BTreeMap<FileId, Inode>,
    next_id: FileId,
    /// Every call told, in order: what a view of an earlier point replays
    /// ([`Oracle::replay_operations`]).
    events: Vec<Event>,
}

/// One call told to the oracle: an operation that returned, or a persistence call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Created(String, Inode),
    Wrote(FileId, usize, Vec<u64>),
    Truncated(FileId, u64),
    Allocated(FileId, u64, u64),
    Renamed(String, String),
    Linked(String, String),
    Unlinked(String),
    MadeDir(String),
    RemovedDir(String),
    SyncedWrite(FileId, usize, usize),
    SyncedFile(FileId),
    SyncedDir(String),
    SyncedAll,
}

/// The directory a name is in ("" for the top).
pub fn parent(name: &str) -> &str {
    name.rsplit_once('/').map_or("", |(dir, _)| dir)
}

impl Oracle {
    /// An oracle for a sequence writing with `seed` (its stamps'), whose files are numbered
    /// from `first_id`.
    pub fn new(seed: u64, first_id: FileId) -> Oracle {
        Oracle {
            seed,
            files: BTreeMap::new(),
            names: BTreeMap::new(),
            dirs: BTreeSet::from([String::new()]),
            ever: BTreeMap::new(),
            promised: BTreeMap::new(),
            promised_dirs: BTreeSet::from([String::new()]),
            inodes: BTreeMap::new(),
            next_id: first_id,
            events: Vec::new(),
        }
    }

    /// The calls told so far, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// `events` (told to another oracle after this one was cloned from it) replayed as
    /// operations only: their effects on the files and names, none of their promises. A view
    /// of what was promised at an earlier point (a mark of the recording device), knowing every
    /// write that may have reached the device since — so a later write found there is no
    /// violation, and an earlier promise not kept is one.
    pub fn replay_operations(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::Created(name, ino) => {
                    self.created(name, *ino);
                }
                Event::Wrote(id, first, sequences) => {
                    self.wrote(*id, *first, sequences.iter().copied())
                }
                Event::Truncated(id, size) => self.truncated(*id, *size),
                Event::Allocated(id, at, len) => self.allocated(*id, *at, *len),
                Event::Renamed(from, to) => self.renamed(from, to),
                Event::Linked(from, to) => self.linked(from, to),
                Event::Unlinked(name) => self.unlinked(name),
                Event::MadeDir(dir) => self.made_dir(dir),
                Event::RemovedDir(dir) => self.removed_dir(dir),
                Event::SyncedWrite(..)
                | Event::SyncedFile(_)
                | Event::SyncedDir(_)
                | Event::SyncedAll => {}
            }
        }
    }

    /// The number the next file created gets.
    pub fn next_id(&self) -> FileId {
        self.next_id
    }

    pub fn file(&self, name: &str) -> Option<FileId> {
        self.names.get(name).copied()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.keys().map(String::as_str)
    }

    pub fn has_dir(&self, dir: &str) -> bool {
        self.dirs.contains(dir)
    }

    /// The directory holds no name and no directory.
    pub fn dir_is_empty(&self, dir: &str) -> bool {
        !self.names.keys().any(|n| parent(n) == dir)
            && !self.dirs.iter().any(|d| !d.is_empty() && parent(d) == dir)
    }

    /// Blocks of the file named `name` now.
    pub fn blocks(&self, name: &str) -> u64 {
        self.file(name)
            .map_or(0, |id| self.files[&id].now.size.div_ceil(BLOCK as u64))
    }

    // The operations, each told once it returned.

    /// A new file named `name` made, with inode `ino`.
    pub fn created(&mut self, name: &str, ino: Inode) -> FileId {
        self.events.push(Event::Created(name.to_string(), ino));
        let id = self.next_id;
        self.next_id += 1;
        self.files.insert(id, FileModel::default());
        self.inodes.insert(id, ino);
        self.name(name, id);
        id
    }

    fn name(&mut self, name: &str, id: FileId) {
        self.names.insert(name.to_string(), id);
        self.ever.entry(name.to_string()).or_default().insert(id);
    }

    /// Blocks `first..first + sequences.len()` of file `id` written, block `k` by the write
    /// numbered `sequences[k]`.
    pub fn wrote(&mut self, id: FileId, first: usize, sequences: impl Iterator<Item = u64>) {
        let sequences: Vec<u64> = sequences.collect();
        self.events.push(Event::Wrote(id, first, sequences.clone()));
        let file = self.files.get_mut(&id).expect("a file of the sequence");
        let mut end = first;
        for (k, sequence) in sequences.into_iter().enumerate() {
            let b = first + k;
            if file.now.blocks.len() <= b {
                file.now.blocks.resize(b + 1, 0);
            }
            file.now.blocks[b] = sequence + 1;
            file.changed(b, sequence + 1);
            end = b + 1;
        }
        let size = file.now.size.max((end * BLOCK) as u64);
        file.sized(size);
    }

    /// File `id` truncated to `size` bytes (whole blocks).
    pub fn truncated(&mut self, id: FileId, size: u64) {
        self.events.push(Event::Truncated(id, size));
        let file = self.files.get_mut(&id).expect("a file of the sequence");
        let keep = size.div_ceil(BLOCK as u64) as usize;
        for b in keep..file.now.blocks.len() {
            file.changed(b, 0);
        }
        file.now.blocks.truncate(keep);
        file.now.blocks.resize(keep, 0);
        file.sized(size);
    }

    /// `len` bytes from `at` of file `id` allocated (fallocate mode 0: the size grows to cover
    /// them; blocks never written read as zeros).
    pub fn allocated(&mut self, id: FileId, at: u64, len: u64) {
        self.events.push(Event::Allocated(id, at, len));
        let file = self.files.get_mut(&id).expect("a file of the sequence");
        let end = at + len;
        let blocks = end.div_ceil(BLOCK as u64) as usize;
        if file.now.blocks.len() < blocks {
            for b in file.now.blocks.len()..blocks {
                file.changed(b, 0);
            }
            file.now.blocks.resize(blocks, 0);
        }
        let size = file.now.size.max(end);
        file.sized(size);
    }

    pub fn renamed(&mut self, from: &str, to: &str) {
        self.events
            .push(Event::Renamed(from.to_string(), to.to_string()));
        if self.names.get(from) == self.names.get(to) {
            // Two links to one file: rename(2) does nothing, and both names stay.
            return;
        }
        let id = self.names.remove(from).expect("renamed a name there is");
        self.name(to, id);
        self.promised.remove(from);
        if let Some((ids, cause)) = self.promised.get_mut(to) {
            ids.insert(id);
            *cause = Cause::RenamedOver;
        }
    }

    pub fn linked(&mut self, from: &str, to: &str) {
        self.events
            .push(Event::Linked(from.to_string(), to.to_string()));
        let id = self.names[from];
        self.name(to, id);
    }

    pub fn unlinked(&mut self, name: &str) {
        self.events.push(Event::Unlinked(name.to_string()));
        self.names.remove(name);
        self.promised.remove(name);
    }

    pub fn made_dir(&mut self, dir: &str) {
        self.events.push(Event::MadeDir(dir.to_string()));
        self.dirs.insert(dir.to_string());
    }

    pub fn removed_dir(&mut self, dir: &str) {
        self.events.push(Event::RemovedDir(dir.to_string()));
        self.dirs.remove(dir);
        self.promised_dirs.remove(dir);
    }

    // The persistence calls, each told once it returned.

    /// An O_SYNC or O_DSYNC write of blocks `first..end` of file `id` returned.
    pub fn synced_write(&mut self, id: FileId, first: usize, end: usize) {
        self.events.push(Event::SyncedWrite(id, first, end));
        self.files
            .get_mut(&id)
            .expect("a file of the sequence")
            .persist_range(first, end);
    }

    /// fsync or fdatasync of file `id`: its data and size now.
    pub fn synced_file(&mut self, id: FileId) {
        self.events.push(Event::SyncedFile(id));
        self.files
            .get_mut(&id)
            .expect("a file of the sequence")
            .persist();
    }

    /// fsync of directory `dir`: its names and directories now.
    pub fn synced_dir(&mut self, dir: &str) {
        self.events.push(Event::SyncedDir(dir.to_string()));
        self.sync_dir(dir);
    }

    fn sync_dir(&mut self, dir: &str) {
        self.promised.retain(|name, _| parent(name) != dir);
        for (name, id) in &self.names {
            if parent(name) == dir {
                self.promised
                    .insert(name.clone(), (BTreeSet::from([*id]), Cause::Synced));
            }
        }
        self.promised_dirs
            .retain(|d| d.is_empty() || parent(d) != dir);
        for d in &self.dirs {
            if !d.is_empty() && parent(d) == dir {
                self.promised_dirs.insert(d.clone());
            }
        }
    }

    /// syncfs or sync: everything now.
    pub fn synced_all(&mut self) {
        self.events.push(Event::SyncedAll);
        for file in self.files.values_mut() {
            file.persist();
        }
        let dirs: Vec<String> = self.dirs.iter().cloned().collect();
        for dir in dirs {
            self.sync_dir(&dir);
        }
    }

    /// Checks the tree at `root` (the sequence's directory after the cut) against what was
    /// promised; every violation found, in a stable order. A file is known by its inode
    /// number (which a crash keeps), not by what it holds.
    pub fn check(&self, root: &Path) -> Vec<Violation> {
        let mut found = Vec::new();
        for dir in &self.promised_dirs {
            if !dir.is_empty() && !root.join(dir).is_dir() {
                found.push(Violation {
                    kind: Kind::MissingName,
                    path: dir.clone(),
                    detail: "the directory's name was made durable (its parent synced), and \
                             it is gone"
                        .into(),
                });
            }
        }
        for (name, (ids, cause)) in &self.promised {
            if let Some(v) = self.check_name(root, name, ids, *cause) {
                found.push(v);
            }
        }
        let mut names: BTreeSet<&String> = self.ever.keys().collect();
        names.extend(self.promised.keys());
        for name in names {
            let path = root.join(name);
            if let Some((ino, true)) = inode(&path) {
                found.extend(self.check_file(&path, name, ino));
            }
        }
        found
    }

    /// The files of the sequence with inode `ino` (more than one only where the filesystem
    /// keeps no generation numbers and an inode freed by an unlink was taken again).
    fn with_inode(&self, ino: Inode) -> Vec<FileId> {
        self.inodes
            .iter()
            .filter(|(_, &i)| i == ino)
            .map(|(&id, _)| id)
            .collect()
    }

    fn check_name(
        &self,
        root: &Path,
        name: &str,
        ids: &BTreeSet<FileId>,
        cause: Cause,
    ) -> Option<Violation> {
        let kind = match cause {
            Cause::Synced => Kind::MissingName,
            Cause::RenamedOver => Kind::RenameNotAtomic,
        };
        let violation = |detail: String| Violation {
            kind,
            path: name.to_string(),
            detail,
        };
        let ino = match inode(&root.join(name)) {
            Some((ino, true)) => ino,
            Some((_, false)) => {
                return Some(violation("the name no longer names a regular file".into()))
            }
            None => {
                return Some(violation(match cause {
                    Cause::Synced => "the name was made durable (its directory synced), and \
                                      it is gone"
                        .into(),
                    Cause::RenamedOver => "a rename went over this durable name, and after \
                                           the cut it names nothing: neither the old file nor \
                                           the new"
                        .into(),
                }))
            }
        };
        let may: Vec<String> = ids
            .iter()
            .map(|id| format!("file {id} (inode {})", self.inodes[id]))
            .collect();
        let found = self.with_inode(ino);
        (!found.iter().any(|id| ids.contains(id))).then(|| {
            violation(format!(
                "the name names inode {ino}, not what it was made durable with: {}",
                may.join(" or ")
            ))
        })
    }

    /// The file at `path` (named `name`, inode `ino`) against what was promised of it; another
    /// file's blocks in it whatever was promised.
    fn check_file(&self, path: &Path, name: &str, ino: Inode) -> Vec<Violation> {
        let violation = |(kind, detail): (Kind, String)| Violation {
            kind,
            path: name.to_string(),
            detail,
        };
        let bytes = match read_all(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                return vec![violation((
                    Kind::Unreadable,
                    format!("cannot read it: {e}"),
                ))];
            }
        };
        let mut candidates = self.with_inode(ino);
        // The file the name names now first: its account is the one said.
        if let Some(now) = self.names.get(name) {
            candidates.sort_by_key(|id| id != now);
        }
        if candidates.is_empty() {
            // Not a file of the sequence (an inode the sequence never made): only its blocks
            // can be judged — none of them may be data of this run's.
            return self
                .foreign_blocks(&bytes, None)
                .into_iter()
                .map(violation)
                .collect();
        }
        let mut first = None;
        for id in candidates {
            let mut broken = self.foreign_blocks(&bytes, Some(id));
            let found = self.blocks_of(&bytes, id);
            // A block another file's data took is said once, as stale data.
            let stale = !broken.is_empty();
            broken.extend(self.promises_of(id, bytes.len() as u64, &found, stale));
            if broken.is_empty() {
                return Vec::new();
            }
            first.get_or_insert(broken);
        }
        first
            .unwrap_or_default()
            .into_iter()
            .map(violation)
            .collect()
    }

    /// The first block of `bytes` that file `id` (None: no file) never wrote: another file's,
    /// another run's, at another offset, or neither zeros nor stamped.
    fn foreign_blocks(&self, bytes: &[u8], id: Option<FileId>) -> Vec<(Kind, String)> {
        for (b, block) in bytes.chunks(BLOCK).enumerate() {
            let at = (b * BLOCK) as u64;
            if block.iter().all(|&x| x == 0) {
                continue;
            }
            let detail = match Stamp::read(block) {
                Ok(s) if s.seed == self.seed && Some(s.file) == id && s.offset == at => continue,
                Ok(s) if s.seed != self.seed => format!(
                    "the block at byte {at} holds a block another run wrote (seed {:#x}), \
                     never written to this file",
                    s.seed
                ),
                Ok(s) => format!(
                    "the block at byte {at} holds file {}'s block of byte {} (write {}), never \
                     written here",
                    s.file, s.offset, s.sequence
                ),
                // A partial last block: what is there of it cannot be judged.
                Err(_) if block.len() < BLOCK => continue,
                Err(_) => format!(
                    "the block at byte {at} holds bytes no write of this file wrote (not \
                     zeros, no stamp)"
                ),
            };
            return vec![(Kind::StaleData, detail)];
        }
        Vec::new()
    }

    /// Each block of `bytes` as file `id`'s writes would leave it ([`NONE`] for what none of
    /// them left, a torn block included).
    fn blocks_of(&self, bytes: &[u8], id: FileId) -> Vec<Block> {
        bytes
            .chunks(BLOCK)
            .enumerate()
            .map(|(b, block)| {
                if block.iter().all(|&x| x == 0) {
                    return 0;
                }
                match Stamp::read(block) {
                    Ok(s)
                        if s.seed == self.seed
                            && s.file == id
                            && s.offset == (b * BLOCK) as u64
                            && block.len() == BLOCK
                            && payload_crc(block) == s.payload_crc =>
                    {
                        s.sequence + 1
                    }
                    _ => NONE,
                }
            })
            .collect()
    }

    /// What of file `id`'s durable state a file of `size` bytes with `found` blocks breaks.
    /// (`stale`: a block no write of the file left is already said as stale data.)
    fn promises_of(
        &self,
        id: FileId,
        size: u64,
        found: &[Block],
        stale: bool,
    ) -> Vec<(Kind, String)> {
        let mut out = Vec::new();
        let Some(model) = self.files.get(&id) else {
            return out;
        };
        let Some(durable) = &model.durable else {
            return out;
        };
        if size < model.min_size {
            out.push((
                Kind::LostData,
                format!(
                    "file {id} is {size} bytes, where it was made durable with {} and never \
                     had fewer than {} since: its durable data past byte {size} is lost",
                    durable.size, model.min_size
                ),
            ));
        } else if size > model.max_size {
            out.push((
                Kind::WrongSize,
                format!(
                    "file {id} is {size} bytes, where it was made durable with {} and never \
                     had more than {} since",
                    durable.size, model.max_size
                ),
            ));
        }
        for (b, &want) in durable.blocks.iter().enumerate() {
            let Some(&got) = found.get(b) else {
                break;
            };
            let later = model.since.get(b);
            let allowed = want == ANY
                || got == want
                || (stale && got == NONE)
                || later.is_some_and(|l| l.contains(&got));
            if !allowed {
                let said = |v: Block| match v {
                    0 => "zeros".to_string(),
                    NONE => "no block of this file's writes".to_string(),
                    v => format!("write {}", v - 1),
                };
                out.push((
                    Kind::LostData,
                    format!(
                        "file {id}'s block at byte {}: {} was made durable{}, found {}",
                        b * BLOCK,
                        said(want),
                        match later.map_or(0, BTreeSet::len) {
                            0 => String::new(),
                            n => format!(" ({n} later change(s) to it also allowed)"),
                        },
                        said(got)
                    ),
                ));
                break;
            }
        }
        out
    }
}

/// A file's identity across a crash: its inode number and generation (FS_IOC_GETVERSION, which
/// ext4, xfs and btrfs keep; 0 where the filesystem has none), so an inode number taken again
/// after an unlink is another file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Inode {
    pub number: u64,
    pub generation: u64,
}

impl fmt::Display for Inode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number)?;
        if self.generation != 0 {
            write!(f, " generation {}", self.generation)?;
        }
        Ok(())
    }
}

impl Inode {
    /// The inode `file` is open on.
    pub fn of(file: &std::fs::File) -> std::io::Result<Inode> {
        use std::os::fd::AsRawFd;
        /// `_IOR('v', 1, long)`.
        const FS_IOC_GETVERSION: libc::c_ulong = 0x8008_7601;
        let number = file.metadata()?.ino();
        let mut generation: libc::c_long = 0;
        // SAFETY: the ioctl writes one long through the pointer, which outlives the call.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                FS_IOC_GETVERSION as _,
                &mut generation as *mut libc::c_long,
            )
        };
        Ok(Inode {
            number,
            generation: if rc == 0 { generation as u64 } else { 0 },
        })
    }
}

/// The inode at `path` and whether it is a regular file; None when nothing is there. Never
/// through a symlink.
fn inode(path: &Path) -> Option<(Inode, bool)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return Some((
            Inode {
                number: meta.ino(),
                generation: 0,
            },
            false,
        ));
    }
    match crate::fileio::open(path, crate::fileio::OpenMode::Read, false) {
        Ok(file) => Inode::of(&file).ok().map(|ino| (ino, true)),
        // Unreadable: the check of its blocks says so.
        Err(_) => Some((
            Inode {
                number: meta.ino(),
                generation: 0,
            },
            true,
        )),
    }
}

/// Every byte of the file at `path`, never through a symlink.
fn read_all(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = crate::fileio::open(path, crate::fileio::OpenMode::Read, false)?;
    let len = file.metadata()?.len() as usize;
    let mut bytes = vec![0u8; len];
    let mut got = 0;
    while got < len {
        match file.read_at(&mut bytes[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(got);
    Ok(bytes)
}
