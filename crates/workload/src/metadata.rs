//! The metadata loops of seed 003 (mkdir, touch, echo, cat, dd, rm, rmdir), as system calls (or
//! as the study's shell loops, below): per operation, every thread times a loop of `count`
//! operations on its own files (or on files in one shared directory), all threads starting
//! together. Each operation reports its rate over all threads and its latency distribution;
//! everything made is removed afterwards.
//!
//! Names, buffers and directory descriptors are made before the timed loops; a timed operation
//! is the system calls of the operation and nothing else (`openat`+`close` for create, ...).
//! Files and directories are named as `names` says ([`crate::names`]): fs_mark's random names
//! by default, numbered ones (`f0-17`) for the shell loops, which count.
//!
//! A stonewall (`stonewall`, mdtest's `-W`, IOR's `-D`) ends the loops that make things (mkdir,
//! create) once its time has passed since the operation started — or, `first`, once the first
//! thread of any rank has made its whole share; the operations after them act on what each
//! thread made (mdtest's wear-out), so every file made is stat'ed, read and removed.
//!
//! `method = "tool"` runs the loops as study 003 ran them, in a shell: per operation and
//! thread one shell runs `count` iterations of the operation's command as a process (`mkdir`,
//! `touch`, `cat`, `dd`, ...; `echo` is the shell's own), timed as a whole with wait4, so
//! fork and exec are in the figure; the names and what each operation needs are the same.
//!
//! `verify` stamps what create, append and write write (a header on every whole 4 KiB block of
//! a file, a key on the bytes that are not one: `crate::verify`), each file by its number, and
//! after the last operation that writes data, untimed, brings the cache cold (a filesystem
//! fsbench made is remounted) and reads every file back; a byte other than written ends the
//! run `corrupt`, naming the file and the first bad offset.

use crate::data::{DataKind, DataSource};
use crate::fileio::{at, raw, AlignedBuf};
use crate::harness::Harness;
pub use crate::names::NameScheme;
use crate::names::{Namer, Table};
pub use crate::stonewall::Stonewall;
use crate::task::timing::{self, Times, ToolEnd};
pub use crate::task::Method;
use crate::together::{run_together, run_together_watching, ScratchDir, SharedStart};
use crate::verify::{self, Corruption, BLOCK as VBLOCK};
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::{now_ns, Clock};
use fsbench_measure::histogram::Histogram;
use fsbench_measure::units::Size;
use fsbench_measure::{CpuTimes, Recorder};
use fsbench_model::{CachePolicy, Dims, Direction, MetricDef, ResultRecord, Unit};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// One timed metadata operation, in the order a run times them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetaOp {
    /// mkdir(2) of a new directory.
    Mkdir,
    /// open(O_CREAT|O_EXCL) + close of a new, empty file (touch).
    Create,
    /// open(O_APPEND) + a small write + close (echo >>).
    Append,
    /// open + read to the end + close (cat).
    Read,
    /// open(O_TRUNC) + a few block writes + close (dd).
    Write,
    /// stat(2) of a file.
    Stat,
    /// rename(2) of a file within its directory.
    Rename,
    /// open + getdents64 to the end + close of a directory (ls).
    Readdir,
    /// unlink(2) of a file (rm).
    Unlink,
    /// rmdir(2) of an empty directory.
    Rmdir,
}

impl MetaOp {
    pub const ALL: [MetaOp; 10] = [
        MetaOp::Mkdir,
        MetaOp::Create,
        MetaOp::Append,
        MetaOp::Read,
        MetaOp::Write,
        MetaOp::Stat,
        MetaOp::Rename,
        MetaOp::Readdir,
        MetaOp::Unlink,
        MetaOp::Rmdir,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            MetaOp::Mkdir => "mkdir",
            MetaOp::Create => "create",
            MetaOp::Append => "append",
            MetaOp::Read => "read",
            MetaOp::Write => "write",
            MetaOp::Stat => "stat",
            MetaOp::Rename => "rename",
            MetaOp::Readdir => "readdir",
            MetaOp::Unlink => "unlink",
            MetaOp::Rmdir => "rmdir",
        }
    }

    fn needs_files(self) -> bool {
        !matches!(self, MetaOp::Mkdir | MetaOp::Create | MetaOp::Rmdir)
    }
}

impl fmt::Display for MetaOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for MetaOp {
    type Err = String;
    fn from_str(text: &str) -> Result<MetaOp, String> {
        let text = text.trim().to_ascii_lowercase();
        let alias = match text.as_str() {
            "touch" => "create",
            "echo" => "append",
            "cat" => "read",
            "dd" => "write",
            "rm" => "unlink",
            "mv" => "rename",
            "ls" => "readdir",
            other => other,
        };
        MetaOp::ALL
            .into_iter()
            .find(|op| op.name() == alias)
            .ok_or_else(|| {
                let names: Vec<&str> = MetaOp::ALL.iter().map(|op| op.name()).collect();
                format!("unknown operation '{text}': use {}", names.join(", "))
            })
    }
}

fsbench_model::text_serde!(MetaOp);

/// Metadata loops (seed 003): per operation, a timed loop of `count` system calls per thread.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetadataSettings {
    /// Operations per thread and operation: files (and directories) each thread makes.
    #[arg(long, short = 'n', value_name = "N", default_value_t = MetadataSettings::default().count)]
    pub count: u64,

    /// Threads, all timing the same operation at once, each on its own files.
    #[arg(long, short = 't', value_name = "N", default_value_t = MetadataSettings::default().threads)]
    pub threads: u64,

    /// Operations to time, comma-separated, run in this order whatever the order given: mkdir,
    /// create (touch), append (echo >>), read (cat), write (dd), stat, rename, readdir, unlink
    /// (rm), rmdir. Default: all. What an operation needs (files to read) is made untimed.
    #[arg(long, value_name = "OPS", value_delimiter = ',')]
    pub ops: Vec<MetaOp>,

    /// All threads work in one shared directory (default: each in its own).
    #[arg(long)]
    pub shared_dir: bool,

    /// Spread each thread's files over this many subdirectories (a two-level tree; 1: one
    /// directory).
    #[arg(long, value_name = "N", default_value_t = MetadataSettings::default().dirs)]
    pub dirs: u64,

    /// Bytes `create` writes into each new file before closing it, in one write (0: an empty
    /// file, as touch makes; 4k: as fs_mark -s 4096).
    #[arg(long, value_name = "SIZE", default_value_t = MetadataSettings::default().create_size)]
    pub create_size: Size,

    /// Bytes one append writes.
    #[arg(long, value_name = "SIZE", default_value_t = MetadataSettings::default().append_size)]
    pub append_size: Size,

    /// Bytes one write writes (the file is truncated first), in blocks of --write-block-size.
    #[arg(long, value_name = "SIZE", default_value_t = MetadataSettings::default().write_size)]
    pub write_size: Size,

    /// Block size of a write.
    #[arg(long, value_name = "SIZE", default_value_t = MetadataSettings::default().write_block_size)]
    pub write_block_size: Size,

    /// fsync each file before it is closed (create, append, write).
    #[arg(long)]
    pub fsync_file: bool,

    /// fsync the directory after each entry changes (mkdir, create, rename, unlink, rmdir).
    #[arg(long)]
    pub fsync_dir: bool,

    /// Data written: random (incompressible), zero, or compressible:PERCENT.
    #[arg(long, value_name = "KIND", default_value_t = MetadataSettings::default().data)]
    pub data: DataKind,

    /// Stop making directories and files (mkdir, create) once this much time has passed since
    /// the operation started, on every thread (and, under mpirun, on every rank: they start
    /// together) — mdtest's -W, IOR's -D — or, `first`, once the first thread of any rank has
    /// made its whole --count; the operations after them act on what each thread made. A
    /// duration is scaled by --scale. Default: no stonewall, every thread makes --count.
    #[arg(long, value_name = "DURATION|first")]
    pub stonewall: Option<Stonewall>,

    /// Seed of the data written (default: a fresh one per run; recorded with the results).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// native: each operation as system calls; tool: study 003's shell loops, one shell per
    /// thread running --count iterations of the operation's command as a process (mkdir,
    /// touch, echo >>, cat, dd, stat, mv, ls, rm, rmdir), timed as a whole.
    #[arg(long, value_name = "METHOD", default_value_t = MetadataSettings::default().method)]
    pub method: Method,

    /// The shell that runs the loops of --method tool (study 003's were bash scripts).
    #[arg(long, value_name = "PROGRAM", default_value_t = MetadataSettings::default().shell)]
    pub shell: String,

    /// How files and directories are named: random (fs_mark's names: 40 bytes, the last 24
    /// random, from --seed), sequential (numbered: f0-1, f0-2, ...; the best case of a
    /// directory indexed by name) or LENGTH:RANDOM (fs_mark's -p and -r). Default: random, or
    /// sequential with --method tool (its loops count: fT-$i).
    #[arg(long, value_name = "random|sequential|LENGTH:RANDOM")]
    pub names: Option<NameScheme>,

    /// Verify what was written: every whole 4 KiB block create, append and write write carries
    /// a header (its offset, its file's number, the seed, a sequence number, its payload's
    /// checksum), the bytes that are not a whole block a key of the same; after the last
    /// operation that writes data, untimed, the cache is made cold (a filesystem fsbench made
    /// is remounted) and every file is read back and checked. A byte other than written ends
    /// the run `corrupt`. Not with --method tool (docs/workloads/metadata.md).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
}

impl Default for MetadataSettings {
    fn default() -> MetadataSettings {
        MetadataSettings {
            count: 1000,
            threads: 1,
            ops: Vec::new(),
            shared_dir: false,
            dirs: 1,
            create_size: Size(0),
            append_size: Size(16),
            write_size: Size(16 << 10),
            write_block_size: Size(4 << 10),
            fsync_file: false,
            fsync_dir: false,
            data: DataKind::Random,
            stonewall: None,
            seed: None,
            method: Method::Native,
            shell: "sh".into(),
            names: None,
            verify: false,
        }
    }
}

use crate::figures::{
    BYTES, CPU_SYS, CPU_USER, ELAPSED, LATENCY_MAX, LATENCY_MEAN, LATENCY_P50, LATENCY_P99, OPS,
    THROUGHPUT,
};

/// Operations per second over all threads, from the first thread's start to the last one's
/// end: the main figure.
pub const OPS_RATE: MetricDef = crate::figures::OPS_RATE.main();
/// Directory entries returned per second (readdir).
pub const ENTRIES_RATE: MetricDef =
    MetricDef::new("entries_rate", Unit::OpsPerSec, Direction::Higher);

/// The most files one run makes over all threads.
pub const MAX_FILES: u64 = 10_000_000;

/// Operations per timed pass: the stop flag is looked at between passes.
const PASS: u64 = 1024;
/// Operations per timed pass under a stonewall: its clock is read between passes, so a thread
/// overshoots it by at most this many operations.
const STONEWALL_PASS: u64 = 32;
/// Buffer for reads and directory listings.
const READ_BUFFER: usize = 64 << 10;

/// A validated run: the operations in order, the scaled count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetadataPlan {
    pub ops: Vec<MetaOp>,
    pub count: u64,
    pub threads: u64,
    pub dirs: u64,
    /// The scaled stonewall, if any.
    pub stonewall_ns: Option<u64>,
    /// Stop making things when the first thread (of any rank) made its share.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stonewall_first: bool,
    /// How files and directories are named (the setting, or the method's default).
    pub names: NameScheme,
    /// `verify`: the operation after which every file is read back and checked (the last one
    /// that writes data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify_after: Option<MetaOp>,
    pub seed: u64,
}

impl MetadataSettings {
    /// Validates the settings under `ctx` (the count scales, never below 1). No side effects.
    pub fn plan(&self, ctx: &Context) -> Result<MetadataPlan, WorkloadError> {
        let positive = |field: &'static str, value: u64| {
            if value == 0 {
                Err(WorkloadError::invalid(field, "must be at least 1"))
            } else {
                Ok(())
            }
        };
        positive("count", self.count)?;
        positive("threads", self.threads)?;
        positive("dirs", self.dirs)?;
        if self.threads > 4096 {
            return Err(WorkloadError::invalid("threads", "at most 4096"));
        }
        let names = self.names.unwrap_or(match self.method {
            Method::Native => NameScheme::default(),
            Method::Tool => NameScheme::Sequential,
        });
        // Names are made before anything is timed: a file's, its new name's and a
        // directory's, each with its NUL and where it ends.
        let name_bytes = 3 * (names.length().unwrap_or(16) as u64 + 9);
        if self.count.saturating_mul(self.threads) > MAX_FILES {
            return Err(WorkloadError::invalid(
                "count",
                format!(
                    "{} files per thread x {} threads is more than {MAX_FILES} files (their names alone would take {} of memory); lower count or threads",
                    self.count,
                    self.threads,
                    fsbench_measure::units::human_bytes(self.count.saturating_mul(self.threads).saturating_mul(name_bytes))
                ),
            ));
        }
        if self.dirs > self.count {
            return Err(WorkloadError::invalid(
                "dirs",
                format!(
                    "{} directories for {} files per thread leaves some empty; use at most count",
                    self.dirs, self.count
                ),
            ));
        }
        positive("write_block_size", self.write_block_size.0)?;
        if self.write_size.0 > 64 << 20 || self.append_size.0 > 64 << 20 {
            return Err(WorkloadError::invalid(
                if self.write_size.0 > 64 << 20 {
                    "write_size"
                } else {
                    "append_size"
                },
                "at most 64m: the workload is about metadata, not streaming (see `fsbench matrix`)",
            ));
        }
        Stonewall::check(self.stonewall)?;
        ctx.check()?;
        if self.verify && self.method == Method::Tool {
            return Err(WorkloadError::invalid(
                "verify",
                "verify cannot be used with method = tool: the shell's commands (echo, dd) \
                 write the same bytes into every file, which cannot say which file and offset \
                 they belong to; use method = native",
            ));
        }
        if self.method == Method::Tool {
            self.check_tool()?;
        }
        let mut ops = if self.ops.is_empty() {
            MetaOp::ALL.to_vec()
        } else {
            self.ops.clone()
        };
        ops.sort_unstable();
        ops.dedup();
        let verify_after = if self.verify {
            let writes = |op: &&MetaOp| match op {
                MetaOp::Create => self.create_size.0 > 0,
                MetaOp::Append => self.append_size.0 > 0,
                MetaOp::Write => self.write_size.0 > 0,
                _ => false,
            };
            match ops.iter().rev().find(writes) {
                Some(&op) => Some(op),
                None => {
                    return Err(WorkloadError::invalid(
                        "verify",
                        "none of the operations writes data (create with create_size above 0, \
                         append, write): there is nothing to verify",
                    ))
                }
            }
        } else {
            None
        };
        let count = ((self.count as f64 * ctx.scale).ceil() as u64)
            .max(self.dirs)
            .max(1);
        // Every thread's files, their new names and its directories have names of their own.
        names.check(
            "names",
            count.saturating_mul(self.threads).saturating_mul(3),
        )?;
        Ok(MetadataPlan {
            ops,
            count,
            threads: self.threads,
            dirs: self.dirs,
            stonewall_ns: Stonewall::deadline_ns(self.stonewall, ctx.scale),
            stonewall_first: self.stonewall == Some(Stonewall::FirstDone),
            names,
            verify_after,
            seed: self.seed.unwrap_or_else(crate::rng::fresh_seed),
        })
    }
}

impl MetadataSettings {
    /// What the shell loops cannot do as asked: each refusal names the setting.
    fn check_tool(&self) -> Result<(), WorkloadError> {
        let refuse = |field: &'static str, why: &str| {
            Err(WorkloadError::invalid(
                field,
                format!("{why} with method = tool (the shell's commands): drop it or use method = native"),
            ))
        };
        if self.fsync_file || self.fsync_dir {
            return refuse(
                if self.fsync_file {
                    "fsync_file"
                } else {
                    "fsync_dir"
                },
                "the commands do not fsync",
            );
        }
        if self.create_size.0 > 0 {
            return refuse("create_size", "touch makes empty files");
        }
        if self.stonewall.is_some() {
            return refuse("stonewall", "a shell loop runs its whole count");
        }
        if self.names.is_some_and(|n| n != NameScheme::Sequential) {
            return refuse(
                "names",
                "the loops name their files by counting (fT-$i): names = sequential",
            );
        }
        if self.append_size.0 == 0 || self.append_size.0 > 4096 {
            return Err(WorkloadError::invalid(
                "append_size",
                "echo appends 1 to 4096 bytes (its text and a newline) with method = tool",
            ));
        }
        let shell = self.shell.trim();
        if shell.is_empty() || shell.starts_with('-') || shell.contains(char::is_whitespace) {
            return Err(WorkloadError::invalid(
                "shell",
                "name one program (sh, bash, or a path to one)",
            ));
        }
        Ok(())
    }

    /// Whether the shell of the tool method is there (a path, or a name on PATH).
    fn shell_installed(&self) -> bool {
        if self.shell.contains('/') {
            Path::new(&self.shell).is_file()
        } else {
            crate::program::installed(&self.shell)
        }
    }
}

impl Workload for MetadataSettings {
    const KIND: &'static str = "metadata";
    const ABOUT: &'static str =
        "Metadata loops (mkdir, create, append, read, write, stat, rename, readdir, unlink, rmdir) as system calls or shell loops, 1..N threads";
    const LONG_ABOUT: &'static str = "Metadata loops (mkdir, create, append, read, write, stat, \
rename, readdir, unlink, rmdir) as system calls, 1..N threads.\n\nPer operation, every thread \
times a loop of --count operations on its own files (or, with --shared-dir, in one directory), \
all threads starting together; each operation reports its rate over all threads and its latency \
percentiles. What an operation needs (files to read) is made untimed; everything is removed \
afterwards. With the cache policy `drop`, caches are dropped before each operation. --method \
tool runs study 003's shell loops instead: per operation and thread one shell runs --count \
iterations of its command as a process (mkdir, touch, echo >>, cat, dd, ...), timed as a whole.";
    const CATEGORY: Option<fsbench_model::Category> = Some(fsbench_model::Category::Metadata);

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        self.plan(ctx).map(drop)
    }

    /// The operations in order, the scaled count and the names (the method's default).
    fn describe(&self, ctx: &Context) -> Option<serde_json::Value> {
        let mut plan = serde_json::to_value(self.plan(ctx).ok()?).ok()?;
        plan.as_object_mut()?.remove("seed");
        Some(plan)
    }

    fn table_columns() -> &'static [&'static str] {
        &[
            OPS_RATE.name,
            THROUGHPUT.name,
            ENTRIES_RATE.name,
            LATENCY_MEAN.name,
            LATENCY_P50.name,
            LATENCY_P99.name,
            LATENCY_MAX.name,
        ]
    }

    /// Every thread's files (with their data, --create-size) and directories.
    fn footprint(&self, ctx: &Context) -> Option<crate::workload::Footprint> {
        let plan = self.plan(ctx).ok()?;
        let files = plan.count.saturating_mul(plan.threads);
        Some(crate::workload::Footprint {
            bytes: files.saturating_mul(self.create_size.0.div_ceil(4096) * 4096),
            inodes: files + plan.dirs.saturating_mul(plan.threads),
            what: "the files".into(),
            setting: "count",
            advice: "lower count, threads or create_size, or use a bigger target".into(),
        })
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        // About 20 µs per operation on a cached filesystem, more with fsync; a process per
        // operation (fork, exec, the command's start) about a millisecond.
        let per_op = if self.method == Method::Tool {
            1_000_000
        } else if self.fsync_file || self.fsync_dir {
            2_000_000
        } else {
            20_000
        };
        self.plan(ctx).map_or(0, |p| {
            p.ops.len() as u64 * p.count * per_op * p.threads.div_ceil(2)
        })
    }

    fn host_notes(&self, _ctx: &Context) -> Vec<String> {
        if self.method == Method::Tool && !self.shell_installed() {
            vec![format!(
                "{}: install it or give another shell (its loops' cases end unsupported here)",
                tool_missing(&self.shell)
            )]
        } else {
            Vec::new()
        }
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let plan = match self.plan(ctx) {
            Ok(plan) => plan,
            Err(e) => return End::failed(e, self.seed),
        };
        if self.method == Method::Tool && !self.shell_installed() {
            return End {
                outcome: fsbench_model::Outcome::Unsupported,
                error: Some(WorkloadError::Tool(format!(
                    "{}: install it, or give another shell (shell = \"sh\")",
                    tool_missing(&self.shell)
                ))),
                seed: self.seed,
                kept: Vec::new(),
            };
        }
        let seed = Some(plan.seed);
        if let Err(e) = self.preflight(ctx, dir) {
            return End::failed(e, seed);
        }
        // Everything made goes, whatever happens (untimed; a panic included).
        ScratchDir::run(dir, "fsbench-metadata", seed, sink, |top, sink| {
            run(self, &plan, ctx, top, stop, sink, harness)
        })
    }
}

/// One thread's files and buffers, all made before anything is timed.
struct Worker {
    thread: u64,
    /// Where this thread's directories go (mkdir, rmdir); the shell loops run in it.
    base: OwnedFd,
    base_path: PathBuf,
    /// The directories its files are spread over, and their paths.
    file_dirs: Vec<OwnedFd>,
    file_dir_paths: Vec<PathBuf>,
    /// The number of its first file over every thread (`verify`'s stamps say it).
    first: u64,
    /// Its files' names, their names after a rename and its directories' (the last two only
    /// when an operation needs them).
    files: Table,
    renamed: Table,
    subdirs: Table,
    files_exist: bool,
    files_renamed: bool,
    subdirs_exist: bool,
    /// Files 0..made exist while `files_exist` (fewer than `files` after a stonewall).
    made: u64,
    /// Directories 0..subdirs_made exist while `subdirs_exist`.
    subdirs_made: u64,
    /// The last timed loop ended at the stonewall.
    walled: bool,
    write_data: Vec<u8>,
    create_data: Vec<u8>,
    append_data: Vec<u8>,
    block: usize,
    read_buf: AlignedBuf,
    stat: libc::stat,
    fsync_file: bool,
    fsync_dir: bool,
    recorder: Recorder,
    /// Directory listings: entries seen.
    entries: u64,
    /// `verify`: how the data is stamped, and what the files hold.
    verifying: Option<Verifying>,
}

/// `verify`'s state of one thread: the data source whose sequence the stamps carry, where
/// each writing operation's bytes lie in a file, and what the thread's files hold now.
struct Verifying {
    source: DataSource,
    /// The run's seed, which every thread's stamps carry.
    seed: u64,
    create: Layout,
    append: Layout,
    write: Layout,
    /// The files hold create's bytes (and then the append's), or the write's alone.
    holds: Holds,
}

/// Which operations' bytes the files hold, in the order they lie.
#[derive(Debug, Clone, Copy, Default)]
struct Holds {
    create: bool,
    append: bool,
    write: bool,
}

impl Verifying {
    /// What the files hold, in file order: each operation's layout and bytes as the worker
    /// keeps them (`create_data`, ...).
    fn pieces<'a>(&'a self, w: &'a Worker) -> Vec<(&'a Layout, &'a [u8])> {
        let mut pieces = Vec::new();
        if self.holds.write {
            pieces.push((&self.write, &w.write_data[..]));
        } else {
            if self.holds.create {
                pieces.push((&self.create, &w.create_data[..]));
            }
            if self.holds.append {
                pieces.push((&self.append, &w.append_data[..]));
            }
        }
        pieces
    }
}

/// Where one operation's bytes lie in a file (`verify`): from byte `at`, a piece up to the
/// first 4 KiB boundary (`head` bytes), whole blocks (each under a header), and a piece after
/// the last one; and the whole blocks' payload checksums, the same for every file.
struct Layout {
    at: u64,
    len: usize,
    head: usize,
    blocks: usize,
    crcs: Vec<u32>,
}

impl Layout {
    fn new(at: u64, data: &[u8]) -> Layout {
        let block = VBLOCK as u64;
        let head = ((block - at % block) % block).min(data.len() as u64) as usize;
        let blocks = (data.len() - head) / VBLOCK;
        let crcs = data[head..head + blocks * VBLOCK]
            .chunks(VBLOCK)
            .map(verify::payload_crc)
            .collect();
        Layout {
            at,
            len: data.len(),
            head,
            blocks,
            crcs,
        }
    }

    /// Where the piece after the whole blocks starts, from `at`.
    fn tail(&self) -> usize {
        self.head + self.blocks * VBLOCK
    }

    /// Stamps `data` (this layout's bytes, as the worker keeps them) for file number `file`:
    /// headers over the whole blocks (five stores and a header checksum each), keys over the
    /// pieces.
    #[inline]
    fn stamp(&self, data: &mut [u8], source: &mut DataSource, seed: u64, file: u32) {
        if self.head > 0 {
            verify::stamp_piece(&mut data[..self.head], seed, file, self.at);
        }
        let tail = self.tail();
        source.stamp_verified(
            &mut data[self.head..tail],
            &self.crcs,
            file,
            self.at + self.head as u64,
        );
        if tail < data.len() {
            verify::stamp_piece(&mut data[tail..], seed, file, self.at + tail as u64);
        }
    }
}

impl Worker {
    fn new(
        settings: &MetadataSettings,
        plan: &MetadataPlan,
        top: &Path,
        thread: u64,
    ) -> Result<Worker, WorkloadError> {
        let base_path = if settings.shared_dir {
            top.join("shared")
        } else {
            top.join(format!("t{thread}"))
        };
        let mkdir = |path: &Path| match std::fs::create_dir(path) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                Err(WorkloadError::io("create the directory", path, e))
            }
            _ => Ok(()),
        };
        mkdir(&base_path)?;
        let base =
            at::open_dir(&base_path).map_err(|e| WorkloadError::io("open", &base_path, e))?;
        let (mut file_dirs, mut file_dir_paths) = (Vec::new(), Vec::new());
        for d in 0..plan.dirs {
            let path = if plan.dirs == 1 {
                base_path.clone()
            } else {
                let path = base_path.join(format!("s{d}"));
                mkdir(&path)?;
                path
            };
            file_dirs.push(at::open_dir(&path).map_err(|e| WorkloadError::io("open", &path, e))?);
            file_dir_paths.push(path);
        }
        let n = plan.count;
        let mut data = DataSource::new(
            settings.data,
            plan.seed ^ thread,
            settings
                .write_size
                .0
                .max(settings.append_size.0)
                .max(settings.create_size.0)
                .max(1) as usize,
        );
        // Each name has its own number over every thread (threads may share a directory): a
        // thread's files, then their new names, then its directories.
        let namer = Namer::new(plan.names, plan.seed);
        let all = n * plan.threads;
        let first = thread * n;
        let needed = |wanted: bool| if wanted { n } else { 0 };
        let renames = needed(plan.ops.contains(&MetaOp::Rename));
        let dirs = needed(plan.ops.contains(&MetaOp::Mkdir) || plan.ops.contains(&MetaOp::Rmdir));
        let write_data = data.next(settings.write_size.0 as usize).to_vec();
        let append_data = data.next(settings.append_size.0 as usize).to_vec();
        let create_data = data.next(settings.create_size.0 as usize).to_vec();
        let verifying = plan.verify_after.map(|_| {
            // Every thread's stamps say the run's seed (the file numbers are the run's own).
            data.stamp_as(plan.seed);
            Verifying {
                seed: plan.seed,
                create: Layout::new(0, &create_data),
                // Appended once, after the bytes create wrote.
                append: Layout::new(create_data.len() as u64, &append_data),
                write: Layout::new(0, &write_data),
                holds: Holds::default(),
                source: data,
            }
        });
        Ok(Worker {
            thread,
            base,
            base_path,
            file_dirs,
            file_dir_paths,
            first,
            files: Table::new(&namer, n, first, &format!("f{thread}-")),
            renamed: Table::new(&namer, renames, all + first, &format!("r{thread}-")),
            subdirs: Table::new(&namer, dirs, 2 * all + first, &format!("d{thread}-")),
            files_exist: false,
            files_renamed: false,
            subdirs_exist: false,
            made: n,
            subdirs_made: n,
            walled: false,
            write_data,
            append_data,
            create_data,
            block: settings.write_block_size.0 as usize,
            read_buf: AlignedBuf::new(READ_BUFFER),
            // SAFETY: struct stat is plain data; all zeroes is a valid value.
            stat: unsafe { std::mem::zeroed() },
            fsync_file: settings.fsync_file,
            fsync_dir: settings.fsync_dir,
            recorder: Recorder::new(),
            entries: 0,
            verifying,
        })
    }

    /// Closes every descriptor the worker holds in the filesystem (a remount needs none open):
    /// a descriptor of `/` holds the place of its directory's until [`Worker::reopen`].
    fn let_go(&mut self) -> io::Result<()> {
        self.file_dirs.clear();
        self.base = at::open_dir(Path::new("/"))?;
        Ok(())
    }

    /// Opens its directories again after [`Worker::let_go`].
    fn reopen(&mut self) -> Result<(), WorkloadError> {
        let open = |path: &Path| at::open_dir(path).map_err(|e| WorkloadError::io("open", path, e));
        self.base = open(&self.base_path)?;
        self.file_dirs = self
            .file_dir_paths
            .iter()
            .map(|path| open(path))
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    /// The path of file `i` (under its name now).
    fn path_of(&self, i: u64) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let dir = &self.file_dir_paths[(i % self.file_dir_paths.len() as u64) as usize];
        dir.join(std::ffi::OsStr::from_bytes(self.name(i).to_bytes()))
    }

    /// `verify`: the files now hold what `op` wrote (after create's, an append's; a write's
    /// alone, the file truncated first).
    fn wrote(&mut self, op: MetaOp) {
        if let Some(v) = &mut self.verifying {
            match op {
                MetaOp::Create => {
                    v.holds = Holds {
                        create: true,
                        ..Holds::default()
                    }
                }
                MetaOp::Append => v.holds.append = true,
                MetaOp::Write => {
                    v.holds = Holds {
                        write: true,
                        ..Holds::default()
                    }
                }
                _ => {}
            }
        }
    }

    fn dir_of(&self, i: u64) -> RawFd {
        self.file_dirs[(i % self.file_dirs.len() as u64) as usize].as_raw_fd()
    }

    fn name(&self, i: u64) -> &CStr {
        if self.files_renamed {
            self.renamed.get(i as usize)
        } else {
            self.files.get(i as usize)
        }
    }

    fn sync_dir(&self, dir: RawFd) -> io::Result<()> {
        if self.fsync_dir {
            at::fsync(dir)
        } else {
            Ok(())
        }
    }

    fn finish_file(&self, fd: RawFd) -> io::Result<()> {
        let synced = if self.fsync_file {
            at::fsync(fd)
        } else {
            Ok(())
        };
        let closed = at::close(fd);
        synced.and(closed)
    }

    /// One operation on file or directory `i`; the bytes it moved (entries for readdir).
    #[inline]
    fn op(&mut self, op: MetaOp, i: u64) -> io::Result<u64> {
        let dir = self.dir_of(i);
        match op {
            MetaOp::Mkdir => {
                let base = self.base.as_raw_fd();
                at::mkdirat(base, self.subdirs.get(i as usize))?;
                self.sync_dir(base)?;
                Ok(0)
            }
            MetaOp::Create => {
                if let Some(v) = &mut self.verifying {
                    let file = (self.first + i) as u32;
                    v.create
                        .stamp(&mut self.create_data, &mut v.source, v.seed, file);
                }
                let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY;
                let fd = at::openat(dir, self.files.get(i as usize), flags, 0o644)?;
                let written = if self.create_data.is_empty() {
                    Ok(())
                } else {
                    raw::write_all(fd, &self.create_data)
                };
                let finished = self.finish_file(fd);
                written.and(finished)?;
                self.sync_dir(dir)?;
                Ok(self.create_data.len() as u64)
            }
            MetaOp::Append => {
                if let Some(v) = &mut self.verifying {
                    let file = (self.first + i) as u32;
                    v.append
                        .stamp(&mut self.append_data, &mut v.source, v.seed, file);
                }
                let fd = at::openat(dir, self.name(i), libc::O_WRONLY | libc::O_APPEND, 0)?;
                let written = raw::write_all(fd, &self.append_data);
                let finished = self.finish_file(fd);
                written.and(finished)?;
                Ok(self.append_data.len() as u64)
            }
            MetaOp::Read => {
                let fd = at::openat(dir, self.name(i), libc::O_RDONLY, 0)?;
                let mut total = 0u64;
                let read = loop {
                    match raw::read_some(fd, self.read_buf.as_mut_slice()) {
                        Ok(0) => break Ok(()),
                        Ok(n) => total += n as u64,
                        Err(e) => break Err(e),
                    }
                };
                let closed = at::close(fd);
                read.and(closed)?;
                Ok(total)
            }
            MetaOp::Write => {
                if let Some(v) = &mut self.verifying {
                    let file = (self.first + i) as u32;
                    v.write
                        .stamp(&mut self.write_data, &mut v.source, v.seed, file);
                }
                let fd = at::openat(dir, self.name(i), libc::O_WRONLY | libc::O_TRUNC, 0)?;
                let mut written = Ok(());
                for block in self.write_data.chunks(self.block) {
                    written = raw::write_all(fd, block);
                    if written.is_err() {
                        break;
                    }
                }
                let finished = self.finish_file(fd);
                written.and(finished)?;
                Ok(self.write_data.len() as u64)
            }
            MetaOp::Stat => {
                let name = if self.files_renamed {
                    self.renamed.get(i as usize)
                } else {
                    self.files.get(i as usize)
                };
                at::fstatat(dir, name, &mut self.stat)?;
                Ok(0)
            }
            MetaOp::Rename => {
                at::renameat(
                    dir,
                    self.files.get(i as usize),
                    self.renamed.get(i as usize),
                )?;
                self.sync_dir(dir)?;
                Ok(0)
            }
            MetaOp::Readdir => {
                let fd = at::openat(dir, c".", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
                let mut entries = 0u64;
                let listed = loop {
                    match at::getdents64(fd, self.read_buf.as_mut_slice()) {
                        Ok(0) => break Ok(()),
                        Ok(n) => entries += at::count_entries(self.read_buf.as_slice(), n),
                        Err(e) => break Err(e),
                    }
                };
                let closed = at::close(fd);
                listed.and(closed)?;
                self.entries += entries;
                Ok(0)
            }
            MetaOp::Unlink => {
                at::unlinkat(dir, self.name(i), 0)?;
                self.sync_dir(dir)?;
                Ok(0)
            }
            MetaOp::Rmdir => {
                let base = self.base.as_raw_fd();
                at::unlinkat(base, self.subdirs.get(i as usize), libc::AT_REMOVEDIR)?;
                self.sync_dir(base)?;
                Ok(0)
            }
        }
    }

    /// Makes, untimed, what `op` needs: files to act on, directories to remove.
    fn prepare(&mut self, op: MetaOp) -> io::Result<()> {
        if op.needs_files() && !self.files_exist {
            for i in 0..self.files.len() as u64 {
                let (fsync_file, fsync_dir) = (self.fsync_file, self.fsync_dir);
                (self.fsync_file, self.fsync_dir) = (false, false);
                let made = self.op(MetaOp::Create, i);
                (self.fsync_file, self.fsync_dir) = (fsync_file, fsync_dir);
                made?;
            }
            self.files_exist = true;
            self.made = self.files.len() as u64;
            self.wrote(MetaOp::Create);
        }
        if op == MetaOp::Rmdir && !self.subdirs_exist {
            for i in 0..self.subdirs.len() {
                at::mkdirat(self.base.as_raw_fd(), self.subdirs.get(i))?;
            }
            self.subdirs_exist = true;
            self.subdirs_made = self.subdirs.len() as u64;
        }
        Ok(())
    }

    /// How many timed operations `op` is: one per file or directory (made, or to make), and for
    /// readdir as many listings as it takes to return the files made (at least one per
    /// directory).
    fn op_count(&self, op: MetaOp) -> u64 {
        let n = match op {
            MetaOp::Mkdir | MetaOp::Create => self.files.len() as u64,
            MetaOp::Rmdir => self.subdirs_made,
            _ => self.made,
        };
        match op {
            MetaOp::Readdir => {
                let per_dir = n.div_ceil(self.file_dirs.len() as u64).max(1);
                (n / per_dir).max(self.file_dirs.len() as u64)
            }
            _ => n,
        }
    }

    /// Times `op` in passes of at most [`PASS`] operations, looking at `stop` in between, and
    /// for mkdir and create at the `stonewall` (CLOCK_MONOTONIC ns) if there is one. Returns
    /// false when stopped.
    fn time(
        &mut self,
        op: MetaOp,
        stop: &StopFlag,
        stonewall: Option<u64>,
        wall: Option<&AtomicBool>,
    ) -> Result<bool, OpFailed> {
        let total = self.op_count(op);
        let makes = matches!(op, MetaOp::Mkdir | MetaOp::Create);
        let stonewall = stonewall.filter(|_| makes);
        let wall = wall.filter(|_| makes);
        let most = if stonewall.is_some() || wall.is_some() {
            STONEWALL_PASS
        } else {
            PASS
        };
        self.walled = false;
        let mut done = 0u64;
        let mut recorder = std::mem::take(&mut self.recorder);
        let mut result = Ok(true);
        while done < total {
            if stop.is_requested() {
                result = Ok(false);
                break;
            }
            // Every thread makes at least one pass: a thread the scheduler ran late still has
            // files for the operations after this one.
            if done > 0
                && (stonewall.is_some_and(|at| now_ns() >= at)
                    || wall.is_some_and(|w| w.load(Ordering::Relaxed)))
            {
                self.walled = true;
                break;
            }
            let pass = most.min(total - done);
            let first = done;
            let mut at = first;
            let timed = recorder.time_pass(
                self,
                pass,
                |w, k| {
                    at = first + k;
                    w.op(op, at)
                },
                |_| Ok(()),
            );
            if let Err(e) = timed {
                let name = match op {
                    MetaOp::Mkdir | MetaOp::Rmdir => {
                        self.subdirs.get((at % self.subdirs.len() as u64) as usize)
                    }
                    MetaOp::Readdir => c".",
                    _ => self.name(at),
                }
                .to_owned();
                result = Err(OpFailed { error: e, name });
                break;
            }
            done += pass;
        }
        // The first thread to make its whole share raises the wall for every other.
        if let (Some(wall), true) = (wall, done == total && !self.walled) {
            wall.store(true, Ordering::Relaxed);
        }
        self.recorder = recorder;
        self.finished(op, done);
        result
    }

    /// What exists after `op` made or removed `done` things.
    fn finished(&mut self, op: MetaOp, done: u64) {
        match op {
            MetaOp::Mkdir => {
                self.subdirs_exist = true;
                self.subdirs_made = done;
            }
            MetaOp::Create => {
                self.files_exist = true;
                self.made = done;
                self.wrote(op);
            }
            MetaOp::Append | MetaOp::Write => self.wrote(op),
            MetaOp::Rename => self.files_renamed = true,
            MetaOp::Unlink => self.files_exist = false,
            MetaOp::Rmdir => self.subdirs_exist = false,
            _ => {}
        }
    }

    /// One iteration of `op`'s shell loop on name number `$i`, with the names [`Worker::op`]
    /// uses (relative to the thread's directory, where the shell runs), and how many processes
    /// it starts.
    fn iteration(&self, op: MetaOp, shell: &ShellData) -> (String, u64) {
        let t = self.thread;
        let dirs = self.file_dirs.len();
        let dir = if dirs > 1 {
            format!("s$((i % {dirs}))/")
        } else {
            String::new()
        };
        let stem = if self.files_renamed { "r" } else { "f" };
        let file = format!("{dir}{stem}{t}-$i");
        let body = match op {
            MetaOp::Mkdir => format!("mkdir d{t}-$i"),
            MetaOp::Create => format!("touch {file}"),
            // echo is the shell's own: no process, as in the study's bash scripts.
            MetaOp::Append => return (format!("echo {} >> {file}", shell.text), 0),
            MetaOp::Read => format!("cat {file} > /dev/null"),
            MetaOp::Write => format!(
                "dd if={} of={file} bs={} count={} 2> /dev/null",
                shell.source, shell.block, shell.blocks
            ),
            MetaOp::Stat => format!("stat {file} > /dev/null"),
            MetaOp::Rename => format!("mv {dir}f{t}-$i {dir}r{t}-$i"),
            MetaOp::Readdir if dirs > 1 => format!("ls -f s$((i % {dirs})) > /dev/null"),
            MetaOp::Readdir => "ls -f . > /dev/null".to_string(),
            MetaOp::Unlink => format!("rm {file}"),
            MetaOp::Rmdir => format!("rmdir d{t}-$i"),
        };
        (body, 1)
    }
}

/// What every thread's shell loops share: the text echo appends and the file dd copies from
/// (made before anything is timed), dd's block size and blocks.
struct ShellData {
    /// Letters (echo adds the newline that makes `append_size` bytes).
    text: String,
    /// The path of a file of `write_size` bytes of the run's data, quoted for the shell.
    source: String,
    block: u64,
    blocks: u64,
}

impl ShellData {
    fn new(
        settings: &MetadataSettings,
        plan: &MetadataPlan,
        top: &Path,
    ) -> Result<ShellData, WorkloadError> {
        let mut rng = crate::rng::Rng::new(plan.seed);
        let text: String = (1..settings.append_size.0)
            .map(|_| (b'a' + (rng.next_u64() % 26) as u8) as char)
            .collect();
        let path = top.join("dd-source");
        let size = settings.write_size.0 as usize;
        let data = DataSource::new(settings.data, plan.seed, size.max(1))
            .next(size)
            .to_vec();
        std::fs::write(&path, data)
            .map_err(|e| WorkloadError::io("write the data dd copies to", &path, e))?;
        let block = settings.write_block_size.0;
        Ok(ShellData {
            text,
            source: shell_quote(&path.to_string_lossy()),
            block,
            blocks: settings.write_size.0.div_ceil(block),
        })
    }
}

/// `text` as one word for sh: in single quotes, each quote in it closed and escaped.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Why the tool method cannot run: its shell is missing.
fn tool_missing(shell: &str) -> String {
    format!("the shell of the loops (method = tool), {shell}, is not installed")
}

/// `count` iterations of `body` with `$i` from 0, stopping at the first command that fails.
fn shell_loop(body: &str, count: u64) -> String {
    format!("set -e; i=0; while [ \"$i\" -lt {count} ]; do {body}; i=$((i + 1)); done")
}

/// An operation that failed, and on which name.
struct OpFailed {
    error: io::Error,
    name: CString,
}

fn run(
    settings: &MetadataSettings,
    plan: &MetadataPlan,
    ctx: &Context,
    top: &Path,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<bool, WorkloadError> {
    let mut workers = (0..plan.threads)
        .map(|t| Worker::new(settings, plan, top, t))
        .collect::<Result<Vec<_>, _>>()?;
    let total = plan.ops.len();
    let mut warned = false;
    let first_done = plan.stonewall_first.then(|| AtomicBool::new(false));
    let shell = match settings.method {
        Method::Tool => Some(ShellData::new(settings, plan, top)?),
        Method::Native => None,
    };
    for (done, &op) in plan.ops.iter().enumerate() {
        if stop.is_requested() {
            return Ok(false);
        }
        for w in workers.iter_mut() {
            w.prepare(op)
                .map_err(|e| WorkloadError::io(format!("prepare {op} in"), top, e))?;
            w.recorder.reset();
            w.entries = 0;
        }
        let cache = if ctx.cache == CachePolicy::Drop {
            match harness.drop_caches() {
                Err(why) if !warned => {
                    warned = true;
                    sink.warning(&format!(
                        "caches could not be dropped before each operation ({why}); they started warm"
                    ));
                    "warm"
                }
                Err(_) => "warm",
                Ok(_) => "dropped",
            }
        } else {
            "warm"
        };
        if !harness.phase_start() {
            return Ok(false);
        }
        if let Some(shell) = &shell {
            let Some(record) = time_loops(settings, plan, op, shell, &mut workers, top, stop)?
            else {
                return Ok(false);
            };
            let mut record = record;
            record.attributes.insert("cache_state".into(), cache.into());
            sink.status(&format!(
                "{op} {:.0} ops/s ({} of {total})",
                record.main().map_or(0.0, |m| m.value),
                done + 1
            ));
            sink.record(record, done + 1, Some(total));
            continue;
        }
        // The operation's series: every thread's passes publish on its probe.
        let label = Dims {
            operation: Some(op.name().to_string()),
            threads: Some(plan.threads),
            ..Dims::default()
        }
        .label();
        let series = crate::workload::phase_series(ctx, sink, label, "thread", workers.len());
        for (t, w) in workers.iter_mut().enumerate() {
            w.recorder.set_probe(series.as_ref().map(|s| s.probe(t)));
        }
        let phase = SharedStart::default();
        let work = |w: &mut Worker| {
            let start = now_ns();
            let stonewall = plan
                .stonewall_ns
                .map(|wall| phase.get(Clock::monotonic()) + wall);
            let timed = w.time(op, stop, stonewall, first_done.as_ref());
            (start, now_ns(), timed)
        };
        let together = match &first_done {
            // The first done, of this process's threads or of another rank's, stops the rest:
            // the sink hears of the others while the threads run (MPI is called from here).
            Some(wall) if matches!(op, MetaOp::Mkdir | MetaOp::Create) => {
                wall.store(false, Ordering::Relaxed);
                run_together_watching(&mut workers, work, &mut |finished| {
                    if harness.phase_poll(wall.load(Ordering::Relaxed), finished) {
                        wall.store(true, Ordering::Relaxed);
                    }
                })
            }
            _ => run_together(&mut workers, work),
        };
        for w in workers.iter_mut() {
            w.recorder.set_probe(None);
        }
        if let Some(series) = series {
            series.finish();
        }
        let outcomes = together
            .map_err(|e| WorkloadError::io(format!("{op} in"), top, e))?
            .results;
        let start = outcomes.iter().map(|o| o.0).min().unwrap_or(0);
        let end = outcomes.iter().map(|o| o.1).max().unwrap_or(0);
        for (_, _, timed) in outcomes {
            match timed {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(OpFailed { error, name }) => {
                    // The errno is kept, so the advice can tell a full disk from no inodes.
                    let action = format!("{op} {} in", name.to_string_lossy());
                    return Err(WorkloadError::io(action, top, error));
                }
            }
        }
        let mut record = record(op, plan, &workers, end.saturating_sub(start).max(1), cache);
        if plan.verify_after == Some(op) {
            // Untimed, between this operation and the next (none of which writes data).
            if stop.is_requested() {
                return Ok(false);
            }
            let Some((files, bytes)) = verify_files(op, &mut workers, top, stop, sink, harness)?
            else {
                return Ok(false);
            };
            record
                .attributes
                .insert("verified_files".into(), files.into());
            record
                .attributes
                .insert("verified_bytes".into(), bytes.into());
        }
        sink.status(&format!(
            "{op} {:.0} ops/s ({} of {total})",
            record.main().map_or(0.0, |m| m.value),
            done + 1
        ));
        sink.record(record, done + 1, Some(total));
    }
    Ok(true)
}

/// `verify`, after `op` (the last operation that writes data; untimed): the cache made cold (a
/// filesystem fsbench made is remounted, the workers holding nothing open in it; elsewhere
/// every cache dropped, or, where that cannot be, each file written back and evicted on its
/// own) and every file of every thread read back whole and checked against what it should
/// hold. The files read back and their bytes; None when stopped.
fn verify_files(
    op: MetaOp,
    workers: &mut [Worker],
    top: &Path,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<Option<(u64, u64)>, WorkloadError> {
    for w in workers.iter_mut() {
        w.let_go()
            .map_err(|e| WorkloadError::io("open", Path::new("/"), e))?;
    }
    let cold = harness.cold();
    let read_back = match &cold {
        Ok(how) => {
            sink.warning(&format!(
                "--verify: every file was read back after {op} once the cache was made cold \
                 ({how})"
            ));
            format!("read back after {op} once the cache was made cold: {how}")
        }
        Err(why) => {
            sink.warning(&format!(
                "--verify: the cache could not be made cold ({why}): each file was evicted on \
                 its own (fadvise) before it was read back after {op}; a filesystem that keeps \
                 files in memory (tmpfs) is checked from there"
            ));
            // The files' pages clean, so the advice below can drop them.
            let dir = std::fs::File::open(top).map_err(|e| WorkloadError::io("open", top, e))?;
            // SAFETY: syncfs takes an open descriptor, held by `dir`.
            if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
                return Err(WorkloadError::io("sync", top, io::Error::last_os_error()));
            }
            format!("read back after {op}; the cache could not be made cold")
        }
    };
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut buf = Vec::new();
    for w in workers.iter() {
        let v = w.verifying.as_ref().expect("verify");
        let pieces = v.pieces(w);
        for i in 0..w.made {
            if stop.is_requested() {
                return Ok(None);
            }
            let path = w.path_of(i);
            // Never through a symlink: a name in the directory under test is not proof of a file.
            let file = crate::fileio::open(&path, crate::fileio::OpenMode::Read, false)
                .map_err(|e| WorkloadError::io("open for verifying", &path, e))?;
            if cold.is_err() {
                // SAFETY: advice on a descriptor `file` owns; the sync above left it clean.
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            }
            let number = (w.first + i) as u32;
            match check_file(&file, &path, &pieces, v.seed, number, &mut buf) {
                Ok(Ok(len)) => {
                    files += 1;
                    bytes += len;
                }
                Ok(Err(corruption)) => {
                    return Err(WorkloadError::Corrupt(format!(
                        "{corruption} ({read_back})"
                    )))
                }
                Err(e) => return Err(WorkloadError::io("read back", &path, e)),
            }
        }
    }
    for w in workers.iter_mut() {
        w.reopen()?;
    }
    sink.status(&format!("{files} files read back as written"));
    Ok(Some((files, bytes)))
}

/// Reads the file at `path` (open in `file`) back whole and checks it, in file order, against
/// `pieces`, what it should hold: each whole block's header (file number `number`, its offset,
/// `seed`) and payload, each piece of a block byte for byte, and its length. Its bytes, or the
/// first offset that is not what was written.
fn check_file(
    file: &std::fs::File,
    path: &Path,
    pieces: &[(&Layout, &[u8])],
    seed: u64,
    number: u32,
    buf: &mut Vec<u8>,
) -> io::Result<Result<u64, Corruption>> {
    use std::os::unix::fs::FileExt;
    let want = pieces
        .last()
        .map_or(0, |(layout, _)| layout.at as usize + layout.len);
    // A byte more than it should hold, to see one too many.
    buf.clear();
    buf.resize(want + 1, 0);
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let found = &buf[..got];
    let corrupt = |offset: usize, expected: String, found: String| {
        Ok(Err(Corruption {
            path: path.to_path_buf(),
            offset: offset as u64,
            expected,
            found,
        }))
    };
    let ends = |at: usize| format!("the file ends at byte {at}");
    let expect = verify::Expect {
        file: number,
        seed,
        fresh_from: None,
    };
    for &(layout, data) in pieces {
        let at = layout.at as usize;
        // The piece from `from` to `to` of the layout: its key, then the data's own bytes.
        let piece = |from: usize, to: usize| {
            let mut should = data[from..to].to_vec();
            verify::stamp_piece(&mut should, seed, number, (at + from) as u64);
            let (start, end) = (at + from, at + to);
            let have = &found[start.min(got)..end.min(got)];
            if let Some(k) = have.iter().zip(&should).position(|(a, b)| a != b) {
                let upto = |len: usize| (k + 16).min(len);
                return Some((
                    start + k,
                    format!(
                        "{} (bytes {start}..{end} of file {number}, seed {seed:#x}: not a whole \
                         block, compared byte for byte)",
                        verify::hex(&should[k..upto(should.len())])
                    ),
                    verify::hex(&have[k..upto(have.len())]),
                ));
            }
            (end > got).then(|| (got, format!("{want} bytes"), ends(got)))
        };
        if let Some((offset, expected, was)) = piece(0, layout.head) {
            return corrupt(offset, expected, was);
        }
        for b in 0..layout.blocks {
            let start = at + layout.head + b * VBLOCK;
            if start + VBLOCK > got {
                return corrupt(start, format!("{want} bytes"), ends(got));
            }
            let block = &found[start..start + VBLOCK];
            if let Err(was) = verify::check_block(block, start as u64, expect) {
                return corrupt(start, expect.describe(start as u64), was);
            }
        }
        if let Some((offset, expected, was)) = piece(layout.tail(), layout.len) {
            return corrupt(offset, expected, was);
        }
    }
    if got > want {
        return corrupt(
            want,
            ends(want),
            format!("more bytes (they begin {})", verify::hex(&found[want..])),
        );
    }
    Ok(Ok(want as u64))
}

/// Times `op` as shell loops: every thread's shell runs its iterations at once; the result
/// is over all of them, from their release to the last one's end. None when stopped.
fn time_loops(
    settings: &MetadataSettings,
    plan: &MetadataPlan,
    op: MetaOp,
    shell: &ShellData,
    workers: &mut [Worker],
    top: &Path,
    stop: &StopFlag,
) -> Result<Option<ResultRecord>, WorkloadError> {
    let (iteration, processes) = workers[0].iteration(op, shell);
    let clock = Clock::get();
    let together = run_together(workers, |w| {
        let count = w.op_count(op);
        let script = shell_loop(&w.iteration(op, shell).0, count);
        let ran = timing::tool(&settings.shell, &["-c", &script], &w.base_path, stop);
        (count, ran)
    })
    .map_err(|e| WorkloadError::io(format!("{op} in"), top, e))?;
    let wall_ns = clock
        .ns(together.ended.saturating_sub(together.released))
        .max(1);
    let (mut ops, mut times) = (0u64, Times::default());
    for (w, (count, ran)) in workers.iter_mut().zip(together.results) {
        match ran {
            Err(e) => {
                return Err(WorkloadError::Tool(format!(
                    "{}: cannot start it ({e})",
                    tool_missing(&settings.shell)
                )))
            }
            Ok(ToolEnd::Stopped) => return Ok(None),
            Ok(ToolEnd::Failed { status, stderr, .. }) => {
                return Err(WorkloadError::Tool(format!(
                    "the {op} loop ({}) {status}: {stderr}",
                    settings.shell
                )))
            }
            Ok(ToolEnd::Ok(t)) => times = times + t,
        }
        w.finished(op, count);
        ops += count;
    }
    let seconds = wall_ns as f64 / 1e9;
    let mut measurements = vec![
        OPS_RATE.at(ops as f64 / seconds),
        LATENCY_MEAN.at(times.real_ns as f64 / ops.max(1) as f64),
        OPS.at(ops as f64),
        ELAPSED.at(wall_ns as f64),
        CPU_USER.at(times.user_ns as f64),
        CPU_SYS.at(times.sys_ns as f64),
    ];
    let bytes = match op {
        MetaOp::Append => Some(ops * settings.append_size.0),
        // Files are made empty (touch) and read before dd writes them: what cat reads is
        // what echo appended, if it ran (looked up, not stat'ed: that would warm a dropped
        // cache).
        MetaOp::Read if plan.ops.contains(&MetaOp::Append) => Some(ops * settings.append_size.0),
        MetaOp::Read => Some(0),
        MetaOp::Write => Some(ops * settings.write_size.0),
        _ => None,
    };
    if let Some(bytes) = bytes {
        measurements.push(THROUGHPUT.at(bytes as f64 / seconds));
        measurements.push(BYTES.at(bytes as f64));
    }
    let mut attributes = serde_json::Map::new();
    attributes.insert("method".into(), "tool".into());
    attributes.insert("shell".into(), settings.shell.clone().into());
    attributes.insert("iteration".into(), iteration.into());
    attributes.insert("processes_per_iteration".into(), processes.into());
    attributes.insert("files_per_thread".into(), plan.count.into());
    attributes.insert("names".into(), plan.names.to_string().into());
    Ok(Some(ResultRecord {
        dims: Dims {
            operation: Some(op.name().to_string()),
            threads: Some(plan.threads),
            ..Dims::default()
        },
        attributes,
        measurements,
        latency_bins: Vec::new(),
    }))
}

/// One operation's result over all threads.
fn record(
    op: MetaOp,
    plan: &MetadataPlan,
    workers: &[Worker],
    wall_ns: u64,
    cache: &str,
) -> ResultRecord {
    let mut histogram = Histogram::new();
    let (mut ops, mut bytes, mut entries, mut cpu) = (0u64, 0u64, 0u64, CpuTimes::default());
    for w in workers {
        histogram.merge(w.recorder.histogram());
        let s = w.recorder.summary();
        ops += s.ops;
        bytes += s.bytes;
        cpu.add(s.cpu);
        entries += w.entries;
    }
    let seconds = wall_ns as f64 / 1e9;
    let mut measurements = vec![OPS_RATE.at(ops as f64 / seconds)];
    measurements.extend(crate::figures::latency(&histogram.summary()));
    measurements.extend([
        OPS.at(ops as f64),
        ELAPSED.at(wall_ns as f64),
        CPU_USER.at(cpu.user_ns as f64),
        CPU_SYS.at(cpu.sys_ns as f64),
    ]);
    if matches!(op, MetaOp::Read | MetaOp::Write | MetaOp::Append)
        || (op == MetaOp::Create && bytes > 0)
    {
        measurements.push(THROUGHPUT.at(bytes as f64 / seconds));
        measurements.push(BYTES.at(bytes as f64));
    }
    if op == MetaOp::Readdir {
        measurements.push(ENTRIES_RATE.at(entries as f64 / seconds));
    }
    let mut attributes = serde_json::Map::new();
    attributes.insert("cache_state".into(), cache.into());
    attributes.insert("files_per_thread".into(), plan.count.into());
    attributes.insert("names".into(), plan.names.to_string().into());
    if let Some(wall) = plan.stonewall_ns {
        attributes.insert("stonewall_ns".into(), wall.into());
    }
    if plan.stonewall_first {
        attributes.insert("stonewall".into(), "first".into());
    }
    if (plan.stonewall_ns.is_some() || plan.stonewall_first)
        && matches!(op, MetaOp::Mkdir | MetaOp::Create)
    {
        // Whether any thread met the wall, and what the slowest and the fastest thread made
        // (mdtest's min and max).
        let made = workers.iter().map(|w| match op {
            MetaOp::Mkdir => w.subdirs_made,
            _ => w.made,
        });
        let walled = workers.iter().any(|w| w.walled);
        attributes.insert("stonewalled".into(), walled.into());
        attributes.insert("made_min".into(), made.clone().min().unwrap_or(0).into());
        attributes.insert("made_max".into(), made.max().unwrap_or(0).into());
    }
    ResultRecord {
        dims: Dims {
            operation: Some(op.name().to_string()),
            threads: Some(plan.threads),
            ..Dims::default()
        },
        attributes,
        measurements,
        latency_bins: histogram.bins(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Detached;
    use crate::workload::Collect;
    use fsbench_measure::units::TimeSpan;
    use fsbench_model::Outcome;

    fn run_in(dir: &Path, settings: &MetadataSettings) -> (End, Collect) {
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir,
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        (end, sink)
    }

    fn value(r: &ResultRecord, metric: &str) -> f64 {
        r.measurement(metric).unwrap().value
    }

    #[test]
    fn every_operation_does_what_it_reports_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MetadataSettings {
            count: 50,
            threads: 2,
            dirs: 5,
            ..MetadataSettings::default()
        };
        let (end, sink) = run_in(dir.path(), &settings);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let ops: Vec<&str> = sink
            .records
            .iter()
            .map(|r| r.dims.operation.as_deref().unwrap())
            .collect();
        assert_eq!(
            ops,
            [
                "mkdir", "create", "append", "read", "write", "stat", "rename", "readdir",
                "unlink", "rmdir"
            ]
        );
        for r in &sink.records {
            assert_eq!(r.dims.threads, Some(2));
            assert!(value(r, "ops_rate") > 0.0 && r.main().unwrap().metric == "ops_rate");
            let bins: u64 = r.latency_bins.iter().map(|b| b.1).sum();
            assert_eq!(bins as f64, value(r, "ops"), "{:?}", r.dims.operation);
        }
        let by = |op: &str| {
            sink.records
                .iter()
                .find(|r| r.dims.operation.as_deref() == Some(op))
                .unwrap()
        };
        assert_eq!(value(by("create"), "ops"), 100.0);
        // append wrote 16 bytes per file; read read them (the files were appended to once).
        assert_eq!(value(by("append"), "bytes"), 100.0 * 16.0);
        assert_eq!(value(by("read"), "bytes"), 100.0 * 16.0);
        assert_eq!(value(by("write"), "bytes"), 100.0 * 16384.0);
        // readdir: 5 directories of 10 files per thread, one listing each.
        assert_eq!(value(by("readdir"), "ops"), 10.0);
        assert!(value(by("readdir"), "entries_rate") > 0.0);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "left behind"
        );
    }

    #[test]
    fn a_stonewall_ends_mkdir_and_create_and_the_rest_act_on_what_was_made() {
        let dir = tempfile::tempdir().unwrap();
        // 100,000 files per thread take seconds; the wall comes after 20 ms.
        let settings = MetadataSettings {
            count: 100_000,
            threads: 2,
            dirs: 4,
            ops: vec![
                MetaOp::Mkdir,
                MetaOp::Create,
                MetaOp::Stat,
                MetaOp::Readdir,
                MetaOp::Unlink,
                MetaOp::Rmdir,
            ],
            stonewall: Some(Stonewall::After(TimeSpan::from_ns(20_000_000))),
            ..MetadataSettings::default()
        };
        let (end, sink) = run_in(dir.path(), &settings);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let by = |op: &str| {
            sink.records
                .iter()
                .find(|r| r.dims.operation.as_deref() == Some(op))
                .unwrap()
        };
        let made = value(by("create"), "ops");
        assert!((64.0..200_000.0).contains(&made), "{made}");
        let attrs = &by("create").attributes;
        assert_eq!(attrs["stonewalled"], true, "{attrs:?}");
        assert_eq!(attrs["stonewall_ns"], 20_000_000);
        let (least, most) = (
            attrs["made_min"].as_u64().unwrap(),
            attrs["made_max"].as_u64().unwrap(),
        );
        assert!(
            least >= 32 && least <= most && (least + most) as f64 <= made,
            "{attrs:?}"
        );
        // Every file made is stat'ed and removed, and nothing more: the run ends clean.
        assert_eq!(value(by("stat"), "ops"), made);
        assert_eq!(value(by("unlink"), "ops"), made);
        assert!(by("stat").attributes.get("stonewalled").is_none());
        assert_eq!(by("mkdir").attributes["stonewalled"], true);
        assert_eq!(value(by("rmdir"), "ops"), value(by("mkdir"), "ops"));
        assert!(value(by("mkdir"), "ops") < 200_000.0);
        // The wall is kept to within a pass of each thread's last operation (and the wait
        // for a CPU on a busy machine).
        let elapsed_s = value(by("create"), "elapsed") / 1e9;
        assert!(elapsed_s < 2.0, "{elapsed_s} s");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "left behind"
        );
    }

    /// `first`: alone, the first thread to make its whole share stops the other (one of them
    /// made all of it); told by the sink that another rank is done (as a job's rank hears it),
    /// every thread stops within a pass or so, and the rest act on what was made.
    #[test]
    fn a_first_done_stonewall_stops_the_rest_when_one_is_done() {
        let settings = |count| MetadataSettings {
            count,
            threads: 2,
            ops: vec![MetaOp::Create, MetaOp::Stat, MetaOp::Unlink],
            stonewall: Some("first".parse().unwrap()),
            ..MetadataSettings::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let (end, sink) = run_in(dir.path(), &settings(2000));
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let create = &sink.records[0];
        assert_eq!(create.attributes["stonewall"], "first");
        assert_eq!(create.attributes["made_max"], 2000, "{create:?}");
        assert_eq!(value(&sink.records[1], "ops"), value(create, "ops"));

        // A harness that hears, at its first poll, that another rank is done.
        let mut told = crate::harness::Watching {
            wall: true,
            ..Default::default()
        };
        let mut records = Collect::default();
        let end = settings(1_000_000).run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut records,
            &mut told,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert_eq!(
            told.ended, 1,
            "one phase watched (create), told once that it ended"
        );
        let create = &records.records[0];
        assert_eq!(create.attributes["stonewalled"], true, "{create:?}");
        let made = value(create, "ops");
        assert!((64.0..2_000_000.0).contains(&made), "{made}");
        assert_eq!(
            value(&records.records[2], "ops"),
            made,
            "unlink removed what was made"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// The shell loops (study 003): every operation is a loop of its command in a shell per
    /// thread, each iteration on the names the system-call loops use, so each finds what the
    /// one before made, and the run ends clean; the figures are over the whole loops.
    #[test]
    fn the_shell_loops_run_every_operation_as_its_command() {
        for dirs in [1, 3] {
            let dir = tempfile::tempdir().unwrap();
            let settings = MetadataSettings {
                count: 12,
                threads: 2,
                dirs,
                method: Method::Tool,
                ..MetadataSettings::default()
            };
            let (end, sink) = run_in(dir.path(), &settings);
            assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
            assert_eq!(sink.records.len(), 10);
            for r in &sink.records {
                let op = r.dims.operation.as_deref().unwrap();
                assert_eq!(r.attributes["method"], "tool");
                assert_eq!(r.attributes["shell"], "sh");
                let iteration = r.attributes["iteration"].as_str().unwrap();
                // Every iteration names its own file or directory (a listing, a directory).
                assert!(
                    iteration.contains("$i") || op == "readdir",
                    "{op}: {iteration}"
                );
                let processes = if op == "append" { 0 } else { 1 };
                assert_eq!(r.attributes["processes_per_iteration"], processes, "{op}");
                let want = if op == "readdir" { 2 * dirs } else { 24 };
                assert_eq!(value(r, "ops"), want as f64, "{op}");
                assert!(value(r, "ops_rate") > 0.0 && value(r, "cpu_user") >= 0.0);
            }
            let by = |op: &str| {
                sink.records
                    .iter()
                    .find(|r| r.dims.operation.as_deref() == Some(op))
                    .unwrap()
            };
            assert_eq!(by("mkdir").attributes["iteration"], "mkdir d0-$i");
            assert_eq!(value(by("append"), "bytes"), 24.0 * 16.0);
            assert_eq!(value(by("read"), "bytes"), 24.0 * 16.0);
            assert_eq!(value(by("write"), "bytes"), 24.0 * 16384.0);
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                0,
                "left behind"
            );
        }
    }

    #[test]
    fn what_a_shell_loop_cannot_do_is_refused_by_name() {
        let ctx = Context::default();
        let tool = |s: MetadataSettings| {
            MetadataSettings {
                method: Method::Tool,
                ..s
            }
            .plan(&ctx)
            .unwrap_err()
            .to_string()
        };
        assert!(tool(MetadataSettings {
            fsync_file: true,
            ..Default::default()
        })
        .starts_with("fsync_file: the commands do not fsync with method = tool"));
        assert!(tool(MetadataSettings {
            create_size: Size(4096),
            ..Default::default()
        })
        .starts_with("create_size: touch makes empty files"));
        assert!(tool(MetadataSettings {
            shell: "sh -x".into(),
            ..Default::default()
        })
        .starts_with("shell: name one program"));
        let dir = tempfile::tempdir().unwrap();
        let missing = MetadataSettings {
            method: Method::Tool,
            shell: "no-such-shell-fsbench".into(),
            ..MetadataSettings::default()
        };
        let (end, _) = run_in(dir.path(), &missing);
        assert_eq!(end.outcome, Outcome::Unsupported);
        assert!(end.error.unwrap().to_string().contains("is not installed"));
        assert_eq!(missing.host_notes(&ctx).len(), 1);
    }

    #[test]
    fn create_can_write_its_files_as_fs_mark_does() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MetadataSettings {
            count: 30,
            ops: vec![MetaOp::Create],
            create_size: Size(4096),
            ..MetadataSettings::default()
        };
        let mut sink = Collect::default();
        let ctx = Context::default();
        let plan = settings.plan(&ctx).unwrap();
        let top = dir.path().join("top");
        std::fs::create_dir(&top).unwrap();
        assert!(super::run(
            &settings,
            &plan,
            &ctx,
            &top,
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        )
        .unwrap());
        let files: Vec<u64> = std::fs::read_dir(top.join("t0"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .collect();
        assert_eq!(files.len(), 30);
        assert!(files.iter().all(|&len| len == 4096), "{files:?}");
        assert_eq!(value(&sink.records[0], "bytes"), 30.0 * 4096.0);
    }

    /// What one run of mkdir and create in a shared directory left: the names of its files
    /// and of its directories (sorted), and the create's result.
    fn names_made(
        names: Option<NameScheme>,
        seed: u64,
    ) -> (Vec<String>, Vec<String>, ResultRecord) {
        let dir = tempfile::tempdir().unwrap();
        let settings = MetadataSettings {
            count: 20,
            threads: 2,
            shared_dir: true,
            ops: vec![MetaOp::Mkdir, MetaOp::Create],
            names,
            seed: Some(seed),
            ..MetadataSettings::default()
        };
        let mut sink = Collect::default();
        let ctx = Context::default();
        let plan = settings.plan(&ctx).unwrap();
        assert!(super::run(
            &settings,
            &plan,
            &ctx,
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        )
        .unwrap());
        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        for entry in std::fs::read_dir(dir.path().join("shared")).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            if entry.file_type().unwrap().is_dir() {
                dirs.push(name);
            } else {
                files.push(name);
            }
        }
        files.sort();
        dirs.sort();
        (files, dirs, sink.records.pop().unwrap())
    }

    /// By default files and directories get fs_mark's names (40 bytes: 8 hex digits, `~` up to
    /// 16, then 24 upper-case letters and digits), every one its own across the threads sharing
    /// the directory, the same again for the same seed; `sequential` numbers them as the shell
    /// loops do; a result says which.
    #[test]
    fn files_are_named_as_names_says_and_the_seed_repeats_them() {
        let (files, dirs, create) = names_made(None, 11);
        assert_eq!((files.len(), dirs.len()), (40, 40));
        let every: std::collections::HashSet<&String> = files.iter().chain(&dirs).collect();
        assert_eq!(every.len(), 80, "every name its own");
        for name in &every {
            assert_eq!(name.len(), 40, "{name}");
            let (stamp, rest) = name.split_at(8);
            assert!(stamp.bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
            assert!(rest.starts_with("~~~~~~~~"), "{name}");
            assert!(
                rest[8..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()),
                "{name}"
            );
        }
        assert_eq!(create.attributes["names"], "random");
        assert_eq!(
            names_made(None, 11).0,
            files,
            "the same seed, the same names"
        );
        let other = names_made(None, 12).0;
        assert!(
            other.iter().all(|n| !files.contains(n)),
            "another seed, others"
        );

        let (files, dirs, create) = names_made(Some(NameScheme::Sequential), 11);
        assert!(files.contains(&"f1-19".to_string()), "{files:?}");
        assert!(dirs.contains(&"d0-0".to_string()), "{dirs:?}");
        assert_eq!(create.attributes["names"], "sequential");
        let (files, _, create) = names_made(Some("64:32".parse().unwrap()), 11);
        assert!(files.iter().all(|n| n.len() == 64), "{files:?}");
        assert_eq!(create.attributes["names"], "64:32");
    }

    /// The shell loops count (`fT-$i`): their names are sequential unless told otherwise, and
    /// told otherwise they refuse; the dry run's description says which names a run makes.
    #[test]
    fn the_shell_loops_name_by_counting_and_the_description_says_so() {
        let ctx = Context::default();
        let tool = MetadataSettings {
            method: Method::Tool,
            ..MetadataSettings::default()
        };
        assert_eq!(tool.plan(&ctx).unwrap().names, NameScheme::Sequential);
        assert_eq!(tool.describe(&ctx).unwrap()["names"], "sequential");
        let err = MetadataSettings {
            names: Some(NameScheme::default()),
            ..tool
        }
        .plan(&ctx)
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("names: the loops name their files by counting"),
            "{err}"
        );
        let native = MetadataSettings::default();
        assert_eq!(native.describe(&ctx).unwrap()["names"], "random");
        // Too few random characters for the names a run makes: refused before it runs.
        let err = MetadataSettings {
            count: 1000,
            names: Some("5:2".parse().unwrap()),
            ..MetadataSettings::default()
        }
        .plan(&ctx)
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("names: 5:2 has 2 random characters"),
            "{err}"
        );
    }

    #[test]
    fn a_shared_directory_holds_every_thread_s_files() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MetadataSettings {
            count: 20,
            threads: 3,
            shared_dir: true,
            ops: vec![MetaOp::Create],
            ..MetadataSettings::default()
        };
        let mut sink = Collect::default();
        let ctx = Context::default();
        let plan = settings.plan(&ctx).unwrap();
        let top = dir.path().join("top");
        std::fs::create_dir(&top).unwrap();
        assert!(super::run(
            &settings,
            &plan,
            &ctx,
            &top,
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        )
        .unwrap());
        assert_eq!(std::fs::read_dir(top.join("shared")).unwrap().count(), 60);
        std::fs::remove_dir_all(&top).unwrap();
        assert_eq!(value(&sink.records[0], "ops"), 60.0);
    }

    #[test]
    fn settings_are_checked_in_their_own_terms() {
        let ctx = Context::default();
        let bad = |s: MetadataSettings| s.plan(&ctx).unwrap_err().to_string();
        assert_eq!(
            bad(MetadataSettings {
                count: 0,
                ..Default::default()
            }),
            "count: must be at least 1"
        );
        assert!(bad(MetadataSettings {
            dirs: 2000,
            ..Default::default()
        })
        .starts_with("dirs: "));
        assert_eq!("touch".parse::<MetaOp>(), Ok(MetaOp::Create));
        assert!("chmod"
            .parse::<MetaOp>()
            .unwrap_err()
            .contains("use mkdir, create"));
        let plan = MetadataSettings {
            count: 1000,
            ..Default::default()
        }
        .plan(&Context { scale: 0.05, ..ctx })
        .unwrap();
        assert_eq!(plan.count, 50);
    }

    /// What `verify`'s harness does to a file when asked to make the cache cold.
    #[derive(Debug, Clone, Copy)]
    enum Damage {
        None,
        /// Inverts the byte at this offset of the first file long enough.
        Flip(u64),
        /// Copies the first file's bytes over the second's.
        Copy,
    }

    /// `verify`'s harness: its `cold` finds nothing of the run open, does `damage` to the
    /// first file (in name order) under `top`, names it, and says "remounted (test)".
    struct Damaging<'a> {
        top: &'a Path,
        damage: Damage,
        damaged: Option<String>,
        colds: u32,
    }

    fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                files.extend(files_under(&path));
            } else {
                files.push(path);
            }
        }
        files
    }

    impl Harness for Damaging<'_> {
        fn cold(&mut self) -> Result<String, String> {
            use std::os::unix::fs::FileExt;
            self.colds += 1;
            // A remount needs nothing of the run open.
            for fd in std::fs::read_dir("/proc/self/fd").unwrap() {
                if let Ok(to) = std::fs::read_link(fd.unwrap().path()) {
                    assert!(!to.starts_with(self.top), "{} is open", to.display());
                }
            }
            let files = files_under(self.top);
            let open = |path: &Path| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(path)
                    .unwrap()
            };
            let damaged = match self.damage {
                Damage::None => return Ok("remounted (test)".into()),
                Damage::Flip(at) => {
                    let path = files
                        .iter()
                        .find(|f| f.metadata().unwrap().len() > at)
                        .expect("a file long enough");
                    let file = open(path);
                    let mut byte = [0u8];
                    file.read_exact_at(&mut byte, at).unwrap();
                    file.write_all_at(&[!byte[0]], at).unwrap();
                    path
                }
                Damage::Copy => {
                    let bytes = std::fs::read(&files[0]).unwrap();
                    open(&files[1]).write_all_at(&bytes, 0).unwrap();
                    &files[1]
                }
            };
            self.damaged = Some(damaged.file_name().unwrap().to_str().unwrap().into());
            Ok("remounted (test)".into())
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            Err("no".into())
        }
        fn evict(&mut self, _: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
            Err("no".into())
        }
        fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
            Err("no".into())
        }
    }

    /// A verified run of `settings` under a harness doing `damage`: how it ended, what it
    /// recorded, and the file damaged. Nothing stays behind, whatever the end.
    fn verified_run(settings: &MetadataSettings, damage: Damage) -> (End, Collect, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut harness = Damaging {
            top: dir.path(),
            damage,
            damaged: None,
            colds: 0,
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        assert_eq!(harness.colds, 1, "one check, after the last write");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        (end, sink, harness.damaged)
    }

    /// `verify` with several threads and directories: after the last operation that writes
    /// data (the append here, the write there), every file is read back with no false alarm —
    /// whole blocks, the piece create leaves past its last block, the append's short line —
    /// and the result of that operation says how many files and bytes; a byte changed by the
    /// harness's "remount" — in a block's payload, in its header, in a piece — or a file's
    /// bytes copied over another's end the run `corrupt`, naming the file and the first bad
    /// offset, what was expected and what was found.
    #[test]
    fn verify_reads_back_every_file_written_and_finds_a_changed_byte() {
        // create 6000 bytes (a block and a piece), then 16 appended at byte 6000 (a piece).
        let appended = MetadataSettings {
            count: 20,
            threads: 3,
            dirs: 2,
            create_size: Size(6000),
            ops: vec![
                MetaOp::Create,
                MetaOp::Append,
                MetaOp::Read,
                MetaOp::Stat,
                MetaOp::Unlink,
            ],
            seed: Some(5),
            verify: true,
            ..MetadataSettings::default()
        };
        // Every operation; the write's 10000 bytes in writes of 3000: two blocks and a piece.
        let written = MetadataSettings {
            count: 10,
            threads: 2,
            create_size: Size(4096),
            write_size: Size(10000),
            write_block_size: Size(3000),
            seed: Some(6),
            verify: true,
            ..MetadataSettings::default()
        };
        // Files of a line each (made empty, untimed): no block at all, one piece.
        let short = MetadataSettings {
            count: 8,
            threads: 2,
            ops: vec![MetaOp::Append, MetaOp::Unlink],
            seed: Some(7),
            verify: true,
            ..MetadataSettings::default()
        };
        for (settings, after, bytes) in [
            (&appended, "append", 6016),
            (&written, "write", 10000),
            (&short, "append", 16),
        ] {
            let (end, sink, _) = verified_run(settings, Damage::None);
            assert_eq!(end.outcome, Outcome::Ok, "{after}: {:?}", end.error);
            for r in &sink.records {
                let op = r.dims.operation.as_deref().unwrap();
                let files = settings.count * settings.threads;
                if op == after {
                    assert_eq!(r.attributes["verified_files"], files, "{op}");
                    assert_eq!(r.attributes["verified_bytes"], files * bytes, "{op}");
                } else {
                    assert!(!r.attributes.contains_key("verified_files"), "{op}");
                }
            }
            assert!(
                sink.warnings.iter().any(|w| w.contains(&format!(
                    "read back after {after} once the cache was made cold (remounted (test))"
                ))),
                "{:?}",
                sink.warnings
            );
        }

        for (settings, damage, offset, found) in [
            (&written, Damage::Flip(4096 + 100), 4096, "payload changed"),
            (&written, Damage::Flip(24), 0, "own checksum fails"),
            (&written, Damage::Flip(9000), 9000, ""),
            (&written, Damage::Copy, 0, "found a block of file "),
            (&appended, Damage::Flip(4096 + 10), 4106, ""),
            (&appended, Damage::Flip(6005), 6005, ""),
            (&appended, Damage::Copy, 0, "found a block of file "),
            (&short, Damage::Copy, 0, ""),
            (&short, Damage::Flip(15), 15, ""),
        ] {
            let (end, _, damaged) = verified_run(settings, damage);
            let case = format!("{damage:?} of {:?}", settings.ops);
            assert_eq!(end.outcome, Outcome::Corrupt, "{case}: {:?}", end.error);
            let said = end.error.unwrap().to_string();
            let name = damaged.unwrap();
            assert!(
                said.contains(&format!(
                    "/{name}: the block at byte {offset} is not what was written: expected "
                )),
                "{case}: {said}"
            );
            assert!(said.contains(found), "{case}: {said}");
            if offset % 4096 != 0 {
                assert!(said.contains("compared byte for byte"), "{case}: {said}");
            }
            assert!(
                said.contains("once the cache was made cold: remounted (test)"),
                "{case}: {said}"
            );
        }
    }

    /// Without a harness the files are evicted one by one and read back, said; what verify
    /// cannot check is refused, naming it: the shell loops, operations that write nothing.
    #[test]
    fn verify_without_a_harness_evicts_and_what_it_cannot_check_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MetadataSettings {
            count: 10,
            threads: 2,
            ops: vec![MetaOp::Create, MetaOp::Write, MetaOp::Unlink],
            verify: true,
            ..MetadataSettings::default()
        };
        let (end, sink) = run_in(dir.path(), &settings);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert_eq!(sink.records[1].attributes["verified_files"], 20);
        assert!(
            sink.warnings
                .iter()
                .any(|w| w.contains("could not be made cold") && w.contains("no harness")),
            "{:?}",
            sink.warnings
        );
        let ctx = Context::default();
        let plan = settings.plan(&ctx).unwrap();
        assert_eq!(plan.verify_after, Some(MetaOp::Write));
        // A plan's key; unset, it is not written (stored settings stay as they were).
        let keyed: MetadataSettings =
            serde_json::from_value(serde_json::json!({"verify": true, "count": 10})).unwrap();
        assert!(keyed.verify);
        let unset = serde_json::to_value(MetadataSettings::default()).unwrap();
        assert!(unset.get("verify").is_none());
        assert_eq!(settings.describe(&ctx).unwrap()["verify_after"], "write");
        assert!(MetadataSettings::default().describe(&ctx).unwrap()["verify_after"].is_null());
        for refused in [
            MetadataSettings {
                method: Method::Tool,
                ..settings.clone()
            },
            MetadataSettings {
                ops: vec![MetaOp::Create, MetaOp::Stat, MetaOp::Unlink],
                ..settings.clone()
            },
        ] {
            let err = refused.plan(&ctx).unwrap_err().to_string();
            assert!(err.starts_with("verify: "), "{err}");
        }
    }

    #[test]
    fn a_missing_directory_and_a_stop_end_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let (end, _) = run_in(&dir.path().join("missing"), &MetadataSettings::default());
        assert_eq!(end.outcome, Outcome::Failed);
        assert!(end.error.unwrap().to_string().contains("does not exist"));
        let stop = StopFlag::new();
        stop.request();
        let end = MetadataSettings::default().run(
            &Context::default(),
            dir.path(),
            &stop,
            &mut Collect::default(),
            &mut Detached,
        );
        assert_eq!(end.outcome, Outcome::Interrupted);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
