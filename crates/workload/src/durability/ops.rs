//! The durability workload's operations: the file operations and persistence calls a sequence
//! is made of, how a seeded sequence is generated (ACE's one- and two-operation families, and a
//! longer mixed load), and how each runs on a real directory, telling the oracle once it
//! returned.
//!
//! Every name is in the sequence's directory or its subdirectory `d`, from a small set, so
//! operations meet: a rename lands over a file written before, a link of a file fsync'd later.

use super::oracle::{parent, Oracle};
use crate::data::DataSource;
use crate::verify::BLOCK;
use crate::WorkloadError;
use fsbench_measure::rng::Rng;
use std::fmt;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// The names files take.
const FILES: [&str; 6] = ["A", "B", "C", "d/A", "d/B", "d/C"];
/// The directory `mkdir` and `rmdir` make and remove (`d` is always there).
const SPARE_DIR: &str = "e";

/// A file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// open(O_CREAT | O_EXCL) of a new, empty file.
    Create {
        name: String,
    },
    /// pwrite of `blocks` stamped blocks from block `at` (a new one past the end leaves a hole).
    Write {
        name: String,
        at: u64,
        blocks: u64,
    },
    /// Blocks written at the end.
    Append {
        name: String,
        blocks: u64,
    },
    /// ftruncate to `blocks` blocks.
    Truncate {
        name: String,
        blocks: u64,
    },
    /// fallocate (mode 0) of `blocks` blocks from block `at`.
    Fallocate {
        name: String,
        at: u64,
        blocks: u64,
    },
    /// rename(2), over an existing name or to a new one.
    Rename {
        from: String,
        to: String,
    },
    Link {
        from: String,
        to: String,
    },
    Unlink {
        name: String,
    },
    Mkdir {
        dir: String,
    },
    Rmdir {
        dir: String,
    },
}

/// What ends an operation: the call that makes it durable, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persist {
    None,
    /// fsync(2) of the file the operation left (a rename's or link's destination).
    Fsync,
    Fdatasync,
    /// The write itself through a descriptor opened O_SYNC.
    OSync,
    /// The write itself through a descriptor opened O_DSYNC.
    ODsync,
    /// sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER) over the file: data written back,
    /// no metadata, no device flush — no promise.
    SyncFileRange,
    /// fsync(2) of the directory the operation changed.
    FsyncDir,
    Syncfs,
    Sync,
}

/// One operation and what ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub op: Op,
    pub persist: Persist,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |n: u64| fsbench_measure::units::Size(n * BLOCK as u64);
        match self {
            Op::Create { name } => write!(f, "create {name}"),
            Op::Write { name, at, blocks } => write!(f, "write {name} {}@{}", b(*blocks), b(*at)),
            Op::Append { name, blocks } => write!(f, "append {name} {}", b(*blocks)),
            Op::Truncate { name, blocks } => write!(f, "truncate {name} {}", b(*blocks)),
            Op::Fallocate { name, at, blocks } => {
                write!(f, "fallocate {name} {}@{}", b(*blocks), b(*at))
            }
            Op::Rename { from, to } => write!(f, "rename {from} {to}"),
            Op::Link { from, to } => write!(f, "link {from} {to}"),
            Op::Unlink { name } => write!(f, "unlink {name}"),
            Op::Mkdir { dir } => write!(f, "mkdir {dir}"),
            Op::Rmdir { dir } => write!(f, "rmdir {dir}"),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.op.to_string();
        match self.persist {
            Persist::None => write!(f, "{what}"),
            Persist::Fsync => write!(f, "{what}; fsync {}", self.op.file()),
            Persist::Fdatasync => write!(f, "{what}; fdatasync {}", self.op.file()),
            Persist::OSync => write!(f, "{what} (O_SYNC)"),
            Persist::ODsync => write!(f, "{what} (O_DSYNC)"),
            Persist::SyncFileRange => write!(f, "{what}; sync_file_range {}", self.op.file()),
            Persist::FsyncDir => {
                let dir = self.op.dir();
                write!(
                    f,
                    "{what}; fsync {}",
                    if dir.is_empty() { "." } else { dir }
                )
            }
            Persist::Syncfs => write!(f, "{what}; syncfs"),
            Persist::Sync => write!(f, "{what}; sync"),
        }
    }
}

impl Op {
    /// The file the operation leaves, that a file persistence call acts on.
    fn file(&self) -> &str {
        match self {
            Op::Create { name }
            | Op::Write { name, .. }
            | Op::Append { name, .. }
            | Op::Truncate { name, .. }
            | Op::Fallocate { name, .. }
            | Op::Unlink { name } => name,
            Op::Rename { to, .. } | Op::Link { to, .. } => to,
            Op::Mkdir { dir } | Op::Rmdir { dir } => dir,
        }
    }

    /// The directory the operation changes (or the one of the file it changes).
    fn dir(&self) -> &str {
        match self {
            Op::Mkdir { dir } | Op::Rmdir { dir } => parent(dir),
            other => parent(other.file()),
        }
    }

    fn writes_data(&self) -> bool {
        matches!(self, Op::Write { .. } | Op::Append { .. })
    }

    fn changes_names(&self) -> bool {
        matches!(
            self,
            Op::Rename { .. }
                | Op::Link { .. }
                | Op::Unlink { .. }
                | Op::Mkdir { .. }
                | Op::Rmdir { .. }
        )
    }
}

/// The families of sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// One operation and its persistence call (ACE's seq-1).
    Seq1,
    /// Two, each with its persistence call (ACE's seq-2).
    Seq2,
    /// `ops` operations, about half of them persisted: a steady mixed load.
    Mixed,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Seq1, Family::Seq2, Family::Mixed];

    pub fn name(self) -> &'static str {
        match self {
            Family::Seq1 => "seq-1",
            Family::Seq2 => "seq-2",
            Family::Mixed => "mixed",
        }
    }
}

fn below(rng: &mut Rng, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        rng.next_u64() % n
    }
}

fn pick<'a, T>(rng: &mut Rng, from: &'a [T]) -> Option<&'a T> {
    (!from.is_empty()).then(|| &from[below(rng, from.len() as u64) as usize])
}

/// A sequence of `family` for the state `oracle` holds (its setup done), seeded by `rng`;
/// writes at most `max_blocks` blocks.
pub fn generate(
    family: Family,
    rng: &mut Rng,
    oracle: &Oracle,
    ops: u64,
    max_blocks: u64,
    fallocate: bool,
) -> Vec<Step> {
    let count = match family {
        Family::Seq1 => 1,
        Family::Seq2 => 2,
        Family::Mixed => ops.max(1),
    };
    // Generated against a copy the planned steps update, so each fits the state before it.
    let mut state = oracle.clone();
    let mut steps = Vec::new();
    while (steps.len() as u64) < count {
        let Some(op) = op_for(rng, &state, max_blocks) else {
            continue;
        };
        if !fallocate && matches!(op, Op::Fallocate { .. }) {
            continue;
        }
        let persist = match family {
            Family::Mixed if below(rng, 2) == 0 => Persist::None,
            _ => persist_for(rng, &op),
        };
        plan(&mut state, &op);
        steps.push(Step { op, persist });
    }
    steps
}

/// A random operation that fits `state`, or None (try again).
fn op_for(rng: &mut Rng, state: &Oracle, max_blocks: u64) -> Option<Op> {
    let present: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|n| state.file(n).is_some())
        .collect();
    let absent: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|n| state.file(n).is_none())
        .collect();
    let blocks = 1 + below(rng, max_blocks.max(1));
    let s = |n: &&str| n.to_string();
    Some(match below(rng, 11) {
        0 => Op::Create {
            name: s(pick(rng, &absent)?),
        },
        1 | 2 => {
            let name = pick(rng, &present)?;
            // Within the file, at its end, or one block past it (a hole).
            let at = below(rng, state.blocks(name) + 2);
            Op::Write {
                name: s(name),
                at,
                blocks,
            }
        }
        3 => Op::Append {
            name: s(pick(rng, &present)?),
            blocks,
        },
        4 => {
            let name = pick(rng, &present)?;
            Op::Truncate {
                name: s(name),
                blocks: below(rng, state.blocks(name) + 2),
            }
        }
        5 => {
            let name = pick(rng, &present)?;
            Op::Fallocate {
                name: s(name),
                at: below(rng, state.blocks(name) + 2),
                blocks,
            }
        }
        6 | 7 => {
            let from = pick(rng, &present)?;
            // Over another existing file about as often as to a new name.
            let over: Vec<&str> = present.iter().copied().filter(|n| n != from).collect();
            let to = if below(rng, 2) == 0 {
                pick(rng, &over)?
            } else {
                pick(rng, &absent)?
            };
            Op::Rename {
                from: s(from),
                to: s(to),
            }
        }
        8 => Op::Link {
            from: s(pick(rng, &present)?),
            to: s(pick(rng, &absent)?),
        },
        9 => Op::Unlink {
            name: s(pick(rng, &present)?),
        },
        _ => {
            if !state.has_dir(SPARE_DIR) {
                Op::Mkdir {
                    dir: SPARE_DIR.into(),
                }
            } else if state.dir_is_empty(SPARE_DIR) {
                Op::Rmdir {
                    dir: SPARE_DIR.into(),
                }
            } else {
                return None;
            }
        }
    })
}

fn persist_for(rng: &mut Rng, op: &Op) -> Persist {
    let choices: &[Persist] = if op.writes_data() {
        &[
            Persist::Fsync,
            Persist::Fdatasync,
            Persist::OSync,
            Persist::ODsync,
            Persist::SyncFileRange,
            Persist::FsyncDir,
            Persist::Syncfs,
            Persist::Sync,
        ]
    } else if matches!(op, Op::Unlink { .. } | Op::Mkdir { .. } | Op::Rmdir { .. }) {
        &[Persist::FsyncDir, Persist::Syncfs, Persist::Sync]
    } else if op.changes_names() {
        &[
            Persist::Fsync,
            Persist::FsyncDir,
            Persist::Syncfs,
            Persist::Sync,
        ]
    } else {
        &[
            Persist::Fsync,
            Persist::Fdatasync,
            Persist::FsyncDir,
            Persist::Syncfs,
            Persist::Sync,
        ]
    };
    *pick(rng, choices).expect("choices")
}

/// What `op` does to `state`, as `run` tells the oracle (a planned step; sequence numbers do
/// not matter to the plan).
fn plan(state: &mut Oracle, op: &Op) {
    let block = BLOCK as u64;
    match op {
        Op::Create { name } => {
            state.created(
                name,
                super::oracle::Inode {
                    number: 0,
                    generation: 0,
                },
            );
        }
        Op::Write { name, at, blocks } => {
            let id = state.file(name).expect("planned on a file");
            state.wrote(id, *at as usize, (0..*blocks).map(|_| 0));
        }
        Op::Append { name, blocks } => {
            let at = state.blocks(name);
            let id = state.file(name).expect("planned on a file");
            state.wrote(id, at as usize, (0..*blocks).map(|_| 0));
        }
        Op::Truncate { name, blocks } => {
            let id = state.file(name).expect("planned on a file");
            state.truncated(id, blocks * block);
        }
        Op::Fallocate { name, at, blocks } => {
            let id = state.file(name).expect("planned on a file");
            state.allocated(id, at * block, blocks * block);
        }
        Op::Rename { from, to } => state.renamed(from, to),
        Op::Link { from, to } => state.linked(from, to),
        Op::Unlink { name } => state.unlinked(name),
        Op::Mkdir { dir } => state.made_dir(dir),
        Op::Rmdir { dir } => state.removed_dir(dir),
    }
}

/// The files every sequence starts with, and their blocks (with the directory `d`).
const SETUP: [(&str, u64); 3] = [("A", 2), ("B", 1), ("d/A", 1)];

/// The oracle's state after [`setup`], planned without touching a filesystem: what a given
/// sequence is checked against before it runs.
pub fn setup_state() -> Oracle {
    let mut state = Oracle::new(0, 1);
    state.made_dir("d");
    for (name, blocks) in SETUP {
        plan(&mut state, &Op::Create { name: name.into() });
        plan(
            &mut state,
            &Op::Write {
                name: name.into(),
                at: 0,
                blocks,
            },
        );
    }
    state
}

/// The state every sequence starts from, made durable (syncfs): files A (2 blocks) and B (1)
/// at the top, directory d with d/A (1 block).
pub fn setup(root: &Path, oracle: &mut Oracle, data: &mut DataSource) -> Result<(), WorkloadError> {
    mkdir(root, "d")?;
    oracle.made_dir("d");
    for (name, blocks) in SETUP {
        let step = Step {
            op: Op::Create { name: name.into() },
            persist: Persist::None,
        };
        run(root, &step, oracle, data)?;
        let step = Step {
            op: Op::Write {
                name: name.into(),
                at: 0,
                blocks,
            },
            persist: Persist::None,
        };
        run(root, &step, oracle, data)?;
    }
    syncfs(root)?;
    oracle.synced_all();
    Ok(())
}

/// Whether the filesystem at `dir` takes fallocate(2) (ext2 and ext3 files without extents do
/// not: EOPNOTSUPP), tried on a file made and removed here.
pub fn fallocate_works(dir: &Path) -> Result<bool, WorkloadError> {
    let path = dir.join(".fallocate-probe");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| io("create", &path, e))?;
    // SAFETY: fallocate on a descriptor `file` holds.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, BLOCK as libc::off_t) };
    let error = std::io::Error::last_os_error();
    drop(file);
    std::fs::remove_file(&path).map_err(|e| io("remove", &path, e))?;
    match rc {
        0 => Ok(true),
        _ if error.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(false),
        _ => Err(io("fallocate", &path, error)),
    }
}

fn io(action: &str, path: &Path, e: std::io::Error) -> WorkloadError {
    WorkloadError::io(action, path, e)
}

fn mkdir(root: &Path, dir: &str) -> Result<(), WorkloadError> {
    let path = root.join(dir);
    std::fs::create_dir(&path).map_err(|e| io("create the directory", &path, e))
}

fn syncfs(root: &Path) -> Result<(), WorkloadError> {
    let dir = std::fs::File::open(root).map_err(|e| io("open", root, e))?;
    // SAFETY: syncfs of a descriptor `dir` holds.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
        return Err(io("syncfs", root, std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Opens the file `name` for writing (O_NOFOLLOW; `extra` flags such as O_SYNC).
fn open_write(root: &Path, name: &str, extra: libc::c_int) -> Result<std::fs::File, WorkloadError> {
    let path = root.join(name);
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | extra)
        .open(&path)
        .map_err(|e| io("open", &path, e))
}

/// `blocks` stamped blocks written to file `name` from block `at` (through a descriptor
/// opened with `sync_flag`: O_SYNC, O_DSYNC or 0), told to `oracle`; the file stays open.
fn write(
    root: &Path,
    name: &str,
    at: u64,
    blocks: u64,
    sync_flag: libc::c_int,
    oracle: &mut Oracle,
    data: &mut DataSource,
) -> Result<std::fs::File, WorkloadError> {
    let block = BLOCK as u64;
    let id = oracle.file(name).expect("a file there");
    let file = open_write(root, name, sync_flag)?;
    let first = data.sequence();
    let bytes = data.next_verified((blocks * block) as usize, id, at * block);
    file.write_all_at(bytes, at * block)
        .map_err(|e| io("write", &root.join(name), e))?;
    oracle.wrote(id, at as usize, first..first + blocks);
    if sync_flag != 0 {
        oracle.synced_write(id, at as usize, (at + blocks) as usize);
    }
    Ok(file)
}

/// Runs `step` in `root`, telling `oracle` what it did once each call returned. Every
/// descriptor it opens is closed when it returns.
pub fn run(
    root: &Path,
    step: &Step,
    oracle: &mut Oracle,
    data: &mut DataSource,
) -> Result<(), WorkloadError> {
    let block = BLOCK as u64;
    let sync_flag = match step.persist {
        Persist::OSync => libc::O_SYNC,
        Persist::ODsync => libc::O_DSYNC,
        _ => 0,
    };
    // The file the step leaves open for its persistence call.
    let mut left: Option<std::fs::File> = None;
    match &step.op {
        Op::Create { name } => {
            let path = root.join(name);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .map_err(|e| io("create", &path, e))?;
            let ino = super::oracle::Inode::of(&file).map_err(|e| io("stat", &path, e))?;
            oracle.created(name, ino);
            left = Some(file);
        }
        Op::Write { name, at, blocks } => {
            left = Some(write(root, name, *at, *blocks, sync_flag, oracle, data)?);
        }
        Op::Append { name, blocks } => {
            let at = oracle.blocks(name);
            left = Some(write(root, name, at, *blocks, sync_flag, oracle, data)?);
        }
        Op::Truncate { name, blocks } => {
            let id = oracle.file(name).expect("a file there");
            let file = open_write(root, name, 0)?;
            file.set_len(blocks * block)
                .map_err(|e| io("truncate", &root.join(name), e))?;
            oracle.truncated(id, blocks * block);
            left = Some(file);
        }
        Op::Fallocate { name, at, blocks } => {
            let id = oracle.file(name).expect("a file there");
            let file = open_write(root, name, 0)?;
            // SAFETY: fallocate on a descriptor `file` holds.
            let rc = unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    0,
                    (at * block) as libc::off_t,
                    (blocks * block) as libc::off_t,
                )
            };
            if rc != 0 {
                return Err(io(
                    "fallocate",
                    &root.join(name),
                    std::io::Error::last_os_error(),
                ));
            }
            oracle.allocated(id, at * block, blocks * block);
            left = Some(file);
        }
        Op::Rename { from, to } => {
            std::fs::rename(root.join(from), root.join(to))
                .map_err(|e| io("rename", &root.join(from), e))?;
            oracle.renamed(from, to);
        }
        Op::Link { from, to } => {
            std::fs::hard_link(root.join(from), root.join(to))
                .map_err(|e| io("link", &root.join(from), e))?;
            oracle.linked(from, to);
        }
        Op::Unlink { name } => {
            std::fs::remove_file(root.join(name)).map_err(|e| io("unlink", &root.join(name), e))?;
            oracle.unlinked(name);
        }
        Op::Mkdir { dir } => {
            mkdir(root, dir)?;
            oracle.made_dir(dir);
        }
        Op::Rmdir { dir } => {
            let path = root.join(dir);
            std::fs::remove_dir(&path).map_err(|e| io("remove the directory", &path, e))?;
            oracle.removed_dir(dir);
        }
    }
    let file_of = |left: Option<std::fs::File>| -> Result<std::fs::File, WorkloadError> {
        match left {
            Some(file) => Ok(file),
            None => {
                let path = root.join(step.op.file());
                crate::fileio::open(&path, crate::fileio::OpenMode::Read, false)
                    .map_err(|e| io("open", &path, e))
            }
        }
    };
    match step.persist {
        Persist::None | Persist::OSync | Persist::ODsync => {}
        Persist::Fsync | Persist::Fdatasync => {
            let file = file_of(left)?;
            let path = root.join(step.op.file());
            if step.persist == Persist::Fsync {
                file.sync_all().map_err(|e| io("fsync", &path, e))?;
            } else {
                file.sync_data().map_err(|e| io("fdatasync", &path, e))?;
            }
            if let Some(id) = oracle.file(step.op.file()) {
                oracle.synced_file(id);
            }
        }
        Persist::SyncFileRange => {
            let file = file_of(left)?;
            let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE
                | libc::SYNC_FILE_RANGE_WRITE
                | libc::SYNC_FILE_RANGE_WAIT_AFTER;
            // SAFETY: sync_file_range over a descriptor `file` holds (0, 0: to its end).
            if unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, flags) } != 0 {
                return Err(io(
                    "sync_file_range",
                    &root.join(step.op.file()),
                    std::io::Error::last_os_error(),
                ));
            }
        }
        Persist::FsyncDir => {
            let dir = root.join(step.op.dir());
            let file = std::fs::File::open(&dir).map_err(|e| io("open", &dir, e))?;
            file.sync_all().map_err(|e| io("fsync", &dir, e))?;
            oracle.synced_dir(step.op.dir());
        }
        Persist::Syncfs => {
            drop(left);
            syncfs(root)?;
            oracle.synced_all();
        }
        Persist::Sync => {
            drop(left);
            // SAFETY: sync(2) takes nothing and waits for the writeback it starts (Linux).
            unsafe { libc::sync() };
            oracle.synced_all();
        }
    }
    Ok(())
}

/// A sequence given as text (`--sequence`), as results print one: steps separated by `;`, an
/// operation followed by its persistence call as its own step (`write C 8k@0; fsync C`), or
/// `(O_SYNC)` / `(O_DSYNC)` after a write or append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence(pub Vec<Step>);

impl std::str::FromStr for Sequence {
    type Err = String;
    fn from_str(text: &str) -> Result<Sequence, String> {
        let mut steps: Vec<Step> = Vec::new();
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = |why: &str| format!("'{part}': {why}");
            let (part_op, sync) = match part
                .strip_suffix("(O_SYNC)")
                .map(|p| (p, Persist::OSync))
                .or_else(|| part.strip_suffix("(O_DSYNC)").map(|p| (p, Persist::ODsync)))
            {
                Some((p, sync)) => (p.trim(), Some(sync)),
                None => (part, None),
            };
            let words: Vec<&str> = part_op.split_whitespace().collect();
            let name = |i: usize| -> Result<String, String> {
                let n = words.get(i).ok_or_else(|| bad("a name is missing"))?;
                let known = FILES.contains(n) || ["d", SPARE_DIR, "."].contains(n);
                known.then(|| n.to_string()).ok_or_else(|| {
                    bad(&format!(
                        "'{n}' is not a name of a sequence: use {}, d, e or .",
                        FILES.join(", ")
                    ))
                })
            };
            let blocks = |w: &str| -> Result<u64, String> {
                let size: fsbench_measure::units::Size =
                    w.parse().map_err(|e| bad(&format!("{e}")))?;
                (size.0 % BLOCK as u64 == 0)
                    .then_some(size.0 / BLOCK as u64)
                    .ok_or_else(|| bad("sizes are whole 4 KiB blocks"))
            };
            let at = |i: usize| -> Result<(u64, u64), String> {
                let w = words.get(i).ok_or_else(|| bad("SIZE@OFFSET is missing"))?;
                let (len, off) = w.split_once('@').ok_or_else(|| bad("write SIZE@OFFSET"))?;
                Ok((blocks(len)?, blocks(off)?))
            };
            let arity = |n: usize| -> Result<(), String> {
                (words.len() == n)
                    .then_some(())
                    .ok_or_else(|| bad(&format!("takes {} word(s)", n - 1)))
            };
            let persist = match words.first().copied() {
                Some("fsync") => {
                    arity(2)?;
                    let target = name(1)?;
                    Some(match steps.last() {
                        Some(last) if last.op.file() == target => Persist::Fsync,
                        Some(last) if last.op.dir() == target.trim_start_matches('.') => {
                            Persist::FsyncDir
                        }
                        _ => {
                            return Err(bad(
                                "fsyncs neither the last operation's file nor its directory",
                            ))
                        }
                    })
                }
                Some("fdatasync") | Some("sync_file_range") => {
                    arity(2)?;
                    let target = name(1)?;
                    if steps.last().map(|l| l.op.file()) != Some(target.as_str()) {
                        return Err(bad("acts on the last operation's file only"));
                    }
                    Some(if words[0] == "fdatasync" {
                        Persist::Fdatasync
                    } else {
                        Persist::SyncFileRange
                    })
                }
                Some("syncfs") => {
                    arity(1)?;
                    Some(Persist::Syncfs)
                }
                Some("sync") => {
                    arity(1)?;
                    Some(Persist::Sync)
                }
                _ => None,
            };
            if let Some(persist) = persist {
                match steps.last_mut() {
                    Some(last) if last.persist == Persist::None => last.persist = persist,
                    _ => return Err(bad("a persistence call follows an operation not yet ended")),
                }
                continue;
            }
            let op = match words.first().copied() {
                Some("create") => {
                    arity(2)?;
                    Op::Create { name: name(1)? }
                }
                Some("write") => {
                    arity(3)?;
                    let (blocks, at) = at(2)?;
                    Op::Write {
                        name: name(1)?,
                        at,
                        blocks,
                    }
                }
                Some("append") => {
                    arity(3)?;
                    Op::Append {
                        name: name(1)?,
                        blocks: blocks(words[2])?,
                    }
                }
                Some("truncate") => {
                    arity(3)?;
                    Op::Truncate {
                        name: name(1)?,
                        blocks: blocks(words[2])?,
                    }
                }
                Some("fallocate") => {
                    arity(3)?;
                    let (blocks, at) = at(2)?;
                    Op::Fallocate {
                        name: name(1)?,
                        at,
                        blocks,
                    }
                }
                Some("rename") | Some("link") => {
                    arity(3)?;
                    let (from, to) = (name(1)?, name(2)?);
                    if words[0] == "rename" {
                        Op::Rename { from, to }
                    } else {
                        Op::Link { from, to }
                    }
                }
                Some("unlink") => {
                    arity(2)?;
                    Op::Unlink { name: name(1)? }
                }
                Some("mkdir") | Some("rmdir") => {
                    arity(2)?;
                    let dir = name(1)?;
                    if dir != SPARE_DIR {
                        return Err(bad("mkdir and rmdir take the directory e"));
                    }
                    if words[0] == "mkdir" {
                        Op::Mkdir { dir }
                    } else {
                        Op::Rmdir { dir }
                    }
                }
                _ => return Err(bad("not an operation or a persistence call of a sequence")),
            };
            if sync.is_some() && !op.writes_data() {
                return Err(bad(
                    "only a write or an append is made through O_SYNC or O_DSYNC",
                ));
            }
            steps.push(Step {
                op,
                persist: sync.unwrap_or(Persist::None),
            });
        }
        if steps.is_empty() {
            return Err("an empty sequence: give operations separated by ';'".into());
        }
        Ok(Sequence(steps))
    }
}

impl fmt::Display for Sequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let steps: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&steps.join("; "))
    }
}

fsbench_model::text_serde!(Sequence);

impl Sequence {
    /// Why the sequence cannot run from the setup's state (`state`): the first step that does
    /// not fit (a name that is not there, one that already is).
    pub fn fits(&self, state: &Oracle) -> Result<(), String> {
        let mut state = state.clone();
        for (i, step) in self.0.iter().enumerate() {
            let is = |n: &str| state.file(n).is_some();
            let dir_of = |n: &str| parent(n).is_empty() || state.has_dir(parent(n));
            let why = match &step.op {
                Op::Create { name } if is(name) => Some(format!("{name} exists")),
                Op::Create { name } | Op::Link { to: name, .. } if !dir_of(name) => {
                    Some(format!("the directory of {name} is not there"))
                }
                Op::Link { to, .. } if is(to) => Some(format!("{to} exists")),
                Op::Write { name, .. }
                | Op::Append { name, .. }
                | Op::Truncate { name, .. }
                | Op::Fallocate { name, .. }
                | Op::Unlink { name }
                | Op::Rename { from: name, .. }
                | Op::Link { from: name, .. }
                    if !is(name) =>
                {
                    Some(format!("{name} is not there"))
                }
                Op::Rename { to, .. } if !dir_of(to) => {
                    Some(format!("the directory of {to} is not there"))
                }
                Op::Mkdir { dir } if state.has_dir(dir) => Some(format!("{dir} exists")),
                Op::Rmdir { dir } if !state.has_dir(dir) || !state.dir_is_empty(dir) => {
                    Some(format!("{dir} is not there, or not empty"))
                }
                _ => None,
            };
            if let Some(why) = why {
                return Err(format!("step {} ({step}): {why}", i + 1));
            }
            plan(&mut state, &step.op);
        }
        Ok(())
    }
}
