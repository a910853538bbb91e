//! Aging a filesystem: a file tree of realistic sizes written until the filesystem holds a fill
//! level, then churned — files deleted, appended to, truncated and created again, round after
//! round — until a number of rounds or a fragmentation target is reached; then what aging did
//! is measured (fill, files and directories, extents per file of a sample of files by FIEMAP).
//!
//! Everything aging decides — names, directories, sizes, which files a round deletes, appends to
//! or truncates — is drawn from one generator seeded by the spec, in one thread, before the
//! operations of a phase run on many threads (large writes where the sizes allow): the same
//! spec and seed give the same tree. Only where the filesystem puts the blocks differs between
//! two agings, which is what aging is about. The fill level is reached by topping up, from the
//! same stream of files, while `statfs` says it is more than half a percent short (and by
//! removing the newest files while it is as much over).
//!
//! It works on a mounted directory like a workload does (not through [`crate::System`]): the
//! tree is made in its `fsbench-aged` directory, which no workload touches. Caching the aged
//! image, copying it for each sample and the free-space report of each filesystem's own tools
//! are [`crate::images`]'.

use fsbench_measure::rng::Rng;
use fsbench_measure::units::human_bytes;
pub use fsbench_model::aging::{
    Aged, AgingSpec, ExtentSample, Fragmentation, FreeSpace, Round, Sizes, KEYS,
};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The directory of the aged tree, at the top of the filesystem.
pub const AGED_DIR: &str = "fsbench-aged";

// The measured distribution, as Impressions (Agrawal, Arpaci-Dusseau and Arpaci-Dusseau,
// "Generating Realistic Impressions for File-System Benchmarking", FAST 2009, Table 2) fits the
// file sizes by count of the last year of Agrawal, Bolosky, Douceur and Lorch, "A Five-Year
// Study of File-System Metadata" (FAST 2007): a lognormal body (of the size in bytes: mu 9.48,
// sigma 2.46, so half the files are under about 13 KB) and, for 0.006 % of the files, a Pareto
// tail from 512 MB (shape 0.91).
const BODY_MU: f64 = 9.48;
const BODY_SIGMA: f64 = 2.46;
const TAIL_SHARE: f64 = 0.000_06;
const TAIL_FROM: f64 = 512.0 * 1_000_000.0;
const TAIL_SHAPE: f64 = 0.91;

/// One file size of `sizes`, at most `cap` bytes (a tree fills a filesystem with many files,
/// never with one that takes a large share of it).
fn draw(sizes: &Sizes, rng: &mut Rng, cap: u64) -> u64 {
    let size = match sizes {
        Sizes::Measured => {
            if uniform(rng) < TAIL_SHARE {
                TAIL_FROM / (1.0 - uniform(rng)).powf(1.0 / TAIL_SHAPE)
            } else {
                (BODY_MU + BODY_SIGMA * normal(rng)).exp()
            }
        }
        Sizes::Given(list) => {
            let total: u64 = list.iter().map(|(_, w)| u64::from(*w)).sum();
            let mut pick = rng.next_u64() % total.max(1);
            let mut chosen = list[0].0;
            for (size, weight) in list {
                if pick < u64::from(*weight) {
                    chosen = *size;
                    break;
                }
                pick -= u64::from(*weight);
            }
            chosen as f64
        }
    };
    (size.round() as u64).min(cap)
}

/// A uniform number in [0, 1).
fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal number (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - uniform(rng);
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Why aging could not finish.
#[derive(Debug)]
pub enum AgingError {
    Interrupted,
    Io {
        action: String,
        path: PathBuf,
        source: io::Error,
    },
    /// The spec cannot be met on this filesystem (a fill level below what it takes empty).
    Impossible(String),
}

impl fmt::Display for AgingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgingError::Interrupted => f.write_str("interrupted"),
            AgingError::Io {
                action,
                path,
                source,
            } => write!(f, "aging: cannot {action} {}: {source}", path.display()),
            AgingError::Impossible(why) => f.write_str(why),
        }
    }
}

fn io_error(action: &str, path: &Path, source: io::Error) -> AgingError {
    AgingError::Io {
        action: action.to_string(),
        path: path.to_path_buf(),
        source,
    }
}

/// The space of the filesystem holding `dir`, after its dirty data is on disk (so delayed
/// allocations are counted).
#[derive(Debug, Clone, Copy)]
struct Space {
    size: u64,
    used: u64,
    available: u64,
    block: u64,
}

fn space(dir: &Path) -> io::Result<Space> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let handle = std::fs::File::open(dir)?;
    // SAFETY: syncfs on a descriptor this function owns.
    unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&handle)) };
    // SAFETY: an all-zero statvfs is valid and statvfs only writes into it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let unit = st.f_frsize as u64;
    Ok(Space {
        size: st.f_blocks as u64 * unit,
        used: (st.f_blocks as u64).saturating_sub(st.f_bfree as u64) * unit,
        available: st.f_bavail as u64 * unit,
        block: (st.f_bsize as u64).max(512),
    })
}

/// One file of the tree while it is aged.
#[derive(Debug, Clone)]
struct File {
    /// Its number in the stream of files (its name: `f0000042`).
    number: u64,
    dir: usize,
    size: u64,
    live: bool,
}

/// What a phase does to one file.
#[derive(Debug, Clone, Copy)]
enum Op {
    Create { file: usize },
    Append { file: usize, bytes: u64 },
    Truncate { file: usize, to: u64 },
    Delete { file: usize },
}

/// The tree while it is aged: its directories, its files and the stream they come from.
struct Tree {
    dirs: Vec<PathBuf>,
    files: Vec<File>,
    rng: Rng,
    spec: AgingSpec,
    /// The largest file a size may be.
    cap: u64,
    block: u64,
}

impl Tree {
    fn path(&self, file: usize) -> PathBuf {
        let f = &self.files[file];
        self.dirs[f.dir].join(format!("f{:07}", f.number))
    }

    /// Space a file of `size` takes, in whole blocks.
    fn blocks(&self, size: u64) -> u64 {
        size.div_ceil(self.block) * self.block
    }

    /// The next file of the stream, at most `cap` bytes.
    fn next_file(&mut self, cap: u64) -> usize {
        let dir = (self.rng.next_u64() % self.dirs.len() as u64) as usize;
        let size = draw(&self.spec.sizes, &mut self.rng, cap.min(self.cap));
        self.files.push(File {
            number: self.files.len() as u64,
            dir,
            size,
            live: false,
        });
        self.files.len() - 1
    }

    /// Files of the stream, to be created, until they take `bytes` (the last one no more than
    /// what is left), none over `cap`; returns the space they take.
    fn creates(&mut self, bytes: u64, cap: u64, ops: &mut Vec<Op>) -> u64 {
        let mut planned = 0;
        while planned < bytes {
            let file = self.next_file(cap.min(bytes - planned).max(self.block));
            planned += self.blocks(self.files[file].size);
            ops.push(Op::Create { file });
        }
        planned
    }

    /// The space the live files take, by the tree's own account (whole blocks).
    fn planned(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| f.live)
            .map(|f| self.blocks(f.size))
            .sum()
    }

    /// The live files, in the order they were made.
    fn live(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| self.files[i].live)
            .collect()
    }

    /// `n` of `from`, chosen by the tree's generator (a partial Fisher-Yates shuffle).
    fn choose(&mut self, from: &mut [usize], n: usize) -> Vec<usize> {
        let n = n.min(from.len());
        for i in 0..n {
            let j = i + (self.rng.next_u64() % (from.len() - i) as u64) as usize;
            from.swap(i, j);
        }
        from[..n].to_vec()
    }
}

/// The data every file is written from: random (so no filesystem compresses it), the same for
/// a seed, and each file's chunk at an offset of its own.
struct Pool {
    bytes: Vec<u8>,
}

/// The largest write: files are written in writes of up to this.
const WRITE: usize = 1 << 20;

impl Pool {
    fn new(seed: u64) -> Pool {
        let mut bytes = vec![0u8; 2 * WRITE];
        Rng::new(seed ^ 0x5eed_da7a).fill(&mut bytes);
        Pool { bytes }
    }

    /// `len` bytes (at most [`WRITE`]) for file `number` at `offset`.
    fn chunk(&self, number: u64, offset: u64, len: usize) -> &[u8] {
        let start = (number
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(offset)
            % WRITE as u64) as usize;
        &self.bytes[start..start + len]
    }
}

/// What the threads of a phase share.
struct Shared<'a> {
    ops: &'a [Op],
    paths: &'a [PathBuf],
    sizes: &'a [u64],
    numbers: &'a [u64],
    pool: &'a Pool,
    next: AtomicUsize,
    done: AtomicUsize,
    written: AtomicU64,
    abort: AtomicBool,
    failure: Mutex<Option<AgingError>>,
}

impl Shared<'_> {
    fn work(&self) {
        while !self.abort.load(Ordering::Relaxed) {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(op) = self.ops.get(i) else { return };
            if let Err(e) = self.one(op, &self.paths[i], self.sizes[i], self.numbers[i]) {
                self.abort.store(true, Ordering::Relaxed);
                let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
                failure.get_or_insert(e);
                return;
            }
            self.done.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Runs one operation on `path`; `size` is the file's size before it.
    fn one(&self, op: &Op, path: &Path, size: u64, number: u64) -> Result<(), AgingError> {
        use std::os::unix::fs::OpenOptionsExt;
        match *op {
            Op::Create { .. } => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o644)
                    .open(path)
                    .map_err(|e| io_error("create", path, e))?;
                self.write(&file, path, number, 0, size)
            }
            Op::Append { bytes, .. } => {
                let file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(|e| io_error("open", path, e))?;
                self.write(&file, path, number, size, bytes)
            }
            Op::Truncate { to, .. } => std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(to))
                .map_err(|e| io_error("truncate", path, e)),
            Op::Delete { .. } => {
                std::fs::remove_file(path).map_err(|e| io_error("remove", path, e))
            }
        }
    }

    /// Writes `len` bytes of file `number` from `offset` (its end), in large writes.
    fn write(
        &self,
        mut file: &std::fs::File,
        path: &Path,
        number: u64,
        offset: u64,
        len: u64,
    ) -> Result<(), AgingError> {
        use std::io::Write;
        let mut done = 0;
        while done < len {
            if self.abort.load(Ordering::Relaxed) {
                return Ok(());
            }
            let n = (len - done).min(WRITE as u64) as usize;
            file.write_all(self.pool.chunk(number, offset + done, n))
                .map_err(|e| io_error("write", path, e))?;
            done += n as u64;
            self.written.fetch_add(n as u64, Ordering::Relaxed);
        }
        // A truncate to its own size gives back what the filesystem allocated past the end on
        // speculation (xfs keeps that for files appended to, until it evicts them): the fill
        // level counts what the files hold.
        file.set_len(offset + len)
            .map_err(|e| io_error("truncate", path, e))
    }
}

/// How often a phase says how far it is.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Ages the filesystem mounted at `mountpoint` as `spec` says, in `threads` threads; `stop` is
/// polled while it runs, `progress` hears how far it is a few times a second.
pub fn age(
    mountpoint: &Path,
    spec: &AgingSpec,
    threads: u32,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Aged, AgingError> {
    let started = std::time::Instant::now();
    let root = mountpoint.join(AGED_DIR);
    let empty = space(mountpoint).map_err(|e| io_error("read the free space of", mountpoint, e))?;
    let target = (spec.fill_percent / 100.0 * empty.size as f64) as u64;
    let mut dirs = vec![root.clone()];
    let mut level = vec![root.clone()];
    for _ in 0..spec.depth {
        let mut next = Vec::new();
        for parent in &level {
            for i in 0..spec.fanout {
                next.push(parent.join(format!("d{i:03}")));
            }
        }
        dirs.extend(next.iter().cloned());
        level = next;
    }
    let dirs_bytes = dirs.len() as u64 * empty.block;
    if empty.used + dirs_bytes >= target {
        return Err(AgingError::Impossible(format!(
            "a fill level of {} % is below what the filesystem takes empty ({:.1} % of {}): \
             give a higher fill",
            spec.fill_percent,
            empty.used as f64 * 100.0 / empty.size.max(1) as f64,
            human_bytes(empty.size)
        )));
    }
    for dir in &dirs {
        std::fs::create_dir(dir).map_err(|e| io_error("create the directory", dir, e))?;
    }
    let budget = target - empty.used - dirs_bytes;
    let mut tree = Tree {
        dirs,
        files: Vec::new(),
        rng: Rng::new(spec.seed),
        spec: spec.clone(),
        // Many files, never one that takes a large share: at most 1/64 of what is filled.
        cap: (budget / 64).max(empty.block),
        block: empty.block,
    };
    let mut run = Runner {
        threads: threads.max(1),
        pool: Pool::new(spec.seed),
        stop,
        progress,
        files_written: 0,
        bytes_written: 0,
        target,
        size: empty.size,
    };
    // The fill: files until they take the budget, then a top-up by what the filesystem says
    // it took (its own overhead: inodes, extent maps).
    let mut ops = Vec::new();
    let cap = tree.cap;
    tree.creates(budget, cap, &mut ops);
    run.phase(&mut tree, &ops, "fill")?;
    run.settle(&mut tree, mountpoint, "fill")?;
    let fill_elapsed_ns = started.elapsed().as_nanos() as u64;
    // Every round gives back what it took, by the tree's account: what it decides does not
    // depend on where the filesystem put the blocks.
    let planned = tree.planned();
    let mut rounds = Vec::new();
    for round in 1..=spec.churn {
        let began = std::time::Instant::now();
        let label = format!("churn round {round} of {}", spec.churn);
        // A third of the files go ...
        let mut live = tree.live();
        let third = live.len() / 3;
        let doomed = tree.choose(&mut live, third);
        let deletes: Vec<Op> = doomed.iter().map(|&file| Op::Delete { file }).collect();
        run.phase(&mut tree, &deletes, &label)?;
        // ... then a tenth of the rest grow, a twentieth shrink, and new files take the room
        // back, all at once: appends land where the new files left room.
        let mut live = tree.live();
        let n = live.len();
        let chosen = tree.choose(&mut live, n / 10 + n / 20);
        let mut ops = Vec::new();
        let mut after = tree.planned();
        for (k, &file) in chosen.iter().enumerate() {
            let size = tree.files[file].size;
            let to = if k < n / 10 {
                let bytes = draw(
                    &tree.spec.sizes,
                    &mut tree.rng,
                    tree.cap.saturating_sub(size),
                )
                .max(1);
                ops.push(Op::Append { file, bytes });
                size + bytes
            } else {
                let to = (uniform(&mut tree.rng) * size as f64) as u64;
                ops.push(Op::Truncate { file, to });
                to
            };
            after = after + tree.blocks(to) - tree.blocks(size);
        }
        tree.creates(planned.saturating_sub(after), cap, &mut ops);
        // The order of the operations is the generator's too.
        let len = ops.len();
        let order = tree.choose(&mut (0..len).collect::<Vec<_>>(), len);
        let ops: Vec<Op> = order.into_iter().map(|i| ops[i]).collect();
        run.phase(&mut tree, &ops, &label)?;
        run.settle(&mut tree, mountpoint, &label)?;
        let count = |f: fn(&Op) -> bool| ops.iter().filter(|op| f(op)).count() as u64;
        let mut done = Round {
            elapsed_ns: began.elapsed().as_nanos() as u64,
            deleted: deletes.len() as u64,
            appended: count(|op| matches!(op, Op::Append { .. })),
            truncated: count(|op| matches!(op, Op::Truncate { .. })),
            created: count(|op| matches!(op, Op::Create { .. })),
            extents_per_file: None,
        };
        if let Some(wanted) = spec.fragmentation {
            let mean = extent_sample(&tree).map(|s| s.mean);
            done.extents_per_file = mean;
            rounds.push(done);
            // Without extent maps (FUSE), every round runs.
            if mean.is_some_and(|m| m >= wanted) {
                break;
            }
        } else {
            rounds.push(done);
        }
    }
    let end = space(mountpoint).map_err(|e| io_error("read the free space of", mountpoint, e))?;
    let live = tree.live();
    (run.progress)(&format!(
        "aged: {:.1} % full, {} files",
        end.used as f64 * 100.0 / end.size.max(1) as f64,
        live.len()
    ));
    Ok(Aged {
        spec: spec.clone(),
        threads: run.threads,
        elapsed_ns: started.elapsed().as_nanos() as u64,
        fill_elapsed_ns,
        rounds,
        files_written: run.files_written,
        bytes_written: run.bytes_written,
        after: Fragmentation {
            fill_percent: end.used as f64 * 100.0 / end.size.max(1) as f64,
            size_bytes: end.size,
            used_bytes: end.used,
            available_bytes: end.available,
            files: live.len() as u64,
            dirs: tree.dirs.len() as u64,
            file_bytes: live.iter().map(|&f| tree.files[f].size).sum(),
            extents: extent_sample(&tree),
            free_space: None,
        },
    })
}

/// Runs the phases of an aging.
struct Runner<'a> {
    threads: u32,
    pool: Pool,
    stop: &'a dyn Fn() -> bool,
    progress: &'a mut dyn FnMut(&str),
    files_written: u64,
    bytes_written: u64,
    /// The bytes in use the fill aims at, and the filesystem's size.
    target: u64,
    size: u64,
}

impl Runner<'_> {
    /// Runs `ops` on the tree's threads, saying how far it is; the tree records what they did.
    fn phase(&mut self, tree: &mut Tree, ops: &[Op], label: &str) -> Result<(), AgingError> {
        if ops.is_empty() {
            return Ok(());
        }
        // Everything a thread needs, decided before any runs: a file's path, its size before
        // the operation (a new file: its size) and its number.
        let file_of = |op: &Op| match *op {
            Op::Create { file }
            | Op::Append { file, .. }
            | Op::Truncate { file, .. }
            | Op::Delete { file } => file,
        };
        let paths: Vec<PathBuf> = ops.iter().map(|op| tree.path(file_of(op))).collect();
        let sizes: Vec<u64> = ops.iter().map(|op| tree.files[file_of(op)].size).collect();
        let numbers: Vec<u64> = ops
            .iter()
            .map(|op| tree.files[file_of(op)].number)
            .collect();
        let shared = Shared {
            ops,
            paths: &paths,
            sizes: &sizes,
            numbers: &numbers,
            pool: &self.pool,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            written: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            failure: Mutex::new(None),
        };
        let started = std::time::Instant::now();
        let mut stopped = false;
        std::thread::scope(|scope| {
            for _ in 0..self.threads {
                scope.spawn(|| shared.work());
            }
            loop {
                std::thread::sleep(PROGRESS_EVERY.min(std::time::Duration::from_millis(50)));
                let done = shared.done.load(Ordering::Relaxed);
                if done >= ops.len() || shared.abort.load(Ordering::Relaxed) {
                    break;
                }
                if (self.stop)() {
                    stopped = true;
                    shared.abort.store(true, Ordering::Relaxed);
                    break;
                }
                if started.elapsed() >= PROGRESS_EVERY {
                    let written = shared.written.load(Ordering::Relaxed);
                    let secs = started.elapsed().as_secs_f64().max(1e-3);
                    (self.progress)(&format!(
                        "{label}: {done} of {} operations, {} at {}/s (aiming at {:.1} % of {})",
                        ops.len(),
                        human_bytes(written),
                        human_bytes((written as f64 / secs) as u64),
                        self.target as f64 * 100.0 / self.size.max(1) as f64,
                        human_bytes(self.size)
                    ));
                }
            }
        });
        self.bytes_written += shared.written.load(Ordering::Relaxed);
        if let Some(e) = shared
            .failure
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
        {
            return Err(e);
        }
        if stopped {
            return Err(AgingError::Interrupted);
        }
        for op in ops {
            match *op {
                Op::Create { file } => {
                    tree.files[file].live = true;
                    self.files_written += 1;
                }
                Op::Append { file, bytes } => tree.files[file].size += bytes,
                Op::Truncate { file, to } => tree.files[file].size = to,
                Op::Delete { file } => tree.files[file].live = false,
            }
        }
        Ok(())
    }

    /// Brings the filesystem to the fill level, as `statfs` counts it once everything is on
    /// disk: files of the stream are added while it is short by more than half a percent of
    /// its size, the newest files removed while it is over by as much (btrfs keeps a whole
    /// extent while a truncated file still uses part of it). Within that, nothing changes: a
    /// tree the account put close enough is the same tree whatever the filesystem's own
    /// overhead came to this time.
    fn settle(
        &mut self,
        tree: &mut Tree,
        mountpoint: &Path,
        label: &str,
    ) -> Result<(), AgingError> {
        let tolerance = self.size / 200;
        for _ in 0..50 {
            let now =
                space(mountpoint).map_err(|e| io_error("read the free space of", mountpoint, e))?;
            let mut ops = Vec::new();
            if now.used + tolerance < self.target {
                // Small steps, so the last one does not overshoot.
                let missing = self.target - now.used;
                tree.creates(missing, (missing / 4).max(tree.block), &mut ops);
                self.phase(tree, &ops, &format!("{label}: topping up"))?;
            } else if now.used > self.target + tolerance {
                let mut freed = 0;
                for file in tree.live().into_iter().rev() {
                    if freed >= now.used - self.target {
                        break;
                    }
                    freed += tree.blocks(tree.files[file].size).max(tree.block);
                    ops.push(Op::Delete { file });
                }
                if ops.is_empty() {
                    return Ok(());
                }
                self.phase(tree, &ops, &format!("{label}: trimming"))?;
            } else {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Extents per file of every n-th live file (at most [`SAMPLED`], in the order they were
/// made), by FIEMAP; None where the filesystem has no extent maps.
fn extent_sample(tree: &Tree) -> Option<ExtentSample> {
    let live: Vec<usize> = tree
        .live()
        .into_iter()
        .filter(|&f| tree.files[f].size > 0)
        .collect();
    if live.is_empty() {
        return None;
    }
    let step = live.len().div_ceil(SAMPLED);
    let mut sample = ExtentSample {
        files: 0,
        extents: 0,
        mean: 0.0,
        max: 0,
        fragmented_percent: 0.0,
    };
    let mut fragmented = 0u64;
    for &file in live.iter().step_by(step) {
        let extents = extents_of(&tree.path(file)).ok()?;
        sample.files += 1;
        sample.extents += extents;
        sample.max = sample.max.max(extents);
        fragmented += u64::from(extents > 1);
    }
    sample.mean = sample.extents as f64 / sample.files.max(1) as f64;
    sample.fragmented_percent = fragmented as f64 * 100.0 / sample.files.max(1) as f64;
    Some(sample)
}

/// The most files an extent sample maps.
const SAMPLED: usize = 1000;

/// `struct fiemap` of linux/fiemap.h, without room for extents: the kernel then only counts
/// them.
#[repr(C)]
#[derive(Default)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
}

/// FS_IOC_FIEMAP: _IOWR('f', 11, struct fiemap).
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Sync the file before mapping it (delayed allocations get their blocks).
const FIEMAP_FLAG_SYNC: u32 = 1;

/// How many extents the file at `path` is in (FIEMAP).
pub fn extents_of(path: &Path) -> io::Result<u64> {
    let file = std::fs::File::open(path)?;
    let mut map = Fiemap {
        length: u64::MAX,
        flags: FIEMAP_FLAG_SYNC,
        ..Fiemap::default()
    };
    // SAFETY: FIEMAP with extent_count 0 writes only the header this struct is.
    let rc = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            FS_IOC_FIEMAP as _,
            &mut map as *mut Fiemap,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from(map.mapped_extents))
}

/// Every file of the aged tree under `mountpoint` with its size, by path relative to the tree,
/// sorted: what two agings of one spec must share.
pub fn listing(mountpoint: &Path) -> io::Result<Vec<(String, u64)>> {
    let root = mountpoint.join(AGED_DIR);
    let mut out = Vec::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_dir() {
                todo.push(entry.path());
            } else {
                let name = entry.path();
                let relative = name.strip_prefix(&root).unwrap_or(&name);
                out.push((relative.display().to_string(), meta.len()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// How many threads write an aged tree: twice the CPUs (the work is the disk's), 2 to 16.
pub fn default_threads() -> u32 {
    std::thread::available_parallelism()
        .map_or(4, |n| n.get() as u32 * 2)
        .clamp(2, 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_reads_back_from_its_own_text_and_refuses_what_it_cannot_be() {
        let spec: AgingSpec = "fill=60,churn=5,sizes=4k:5/1m:1,seed=9,fragmentation=1.5"
            .parse()
            .unwrap();
        assert_eq!(spec.fill_percent, 60.0);
        assert_eq!(spec.churn, 5);
        assert_eq!(spec.sizes, Sizes::Given(vec![(4096, 5), (1 << 20, 1)]));
        assert_eq!(spec.fragmentation, Some(1.5));
        assert_eq!(spec.to_string().parse::<AgingSpec>().unwrap(), spec);
        assert_eq!("70".parse::<AgingSpec>().unwrap(), AgingSpec::default());
        for (text, wanted) in [
            ("fill=99", "1 to 95 %"),
            ("depth=0", "at least 1"),
            ("depth=8,fanout=64", "more than 100000 directories"),
            ("sizes=4k", "SIZE:WEIGHT"),
            ("sizes=4k:0", "every weight is 0"),
            (
                "colour=blue",
                "unknown aging key 'colour'; the keys are fill, sizes",
            ),
            ("fragmentation=0.5", "1 to 1000 extents"),
            ("fast", "not KEY=VALUE"),
        ] {
            let e = text.parse::<AgingSpec>().unwrap_err();
            assert!(e.contains(wanted), "{text}: {e}");
        }
        // Stored as the same text in JSON.
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(json["sizes"], "4k:5/1m:1");
        assert_eq!(serde_json::from_value::<AgingSpec>(json).unwrap(), spec);
    }

    /// The measured distribution has the published median (e^9.48, about 13 KB), honours the
    /// cap, and a seed draws the same sizes again.
    #[test]
    fn the_measured_sizes_have_the_published_median_and_repeat_by_seed() {
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..20_000)
                .map(|_| draw(&Sizes::Measured, &mut rng, 8 << 20))
                .collect::<Vec<u64>>()
        };
        let mut sizes = draw(3);
        assert_eq!(sizes, draw(3));
        assert_ne!(sizes, draw(4));
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2] as f64;
        assert!((11_000.0..16_000.0).contains(&median), "{median}");
        assert!(*sizes.last().unwrap() <= 8 << 20);
    }
}
