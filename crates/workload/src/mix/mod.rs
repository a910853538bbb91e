//! A weighted small-file mix with FFSB's semantics and parameter names (seed 002): a fileset of
//! `num_files` files in `num_dirs` directories is created first (timed and reported on its own)
//! and synced, untimed, as FFSB syncs it; then `threads` threads pick operations by weight —
//! create, write, append, read, readall, delete, stat, metaop — for `duration`. Reported as FFSB reports it: transactions per second
//! (one transaction per read or write call as FFSB counts them, one per delete, stat or
//! metaop), MB/s read and written, and CPU utilisation as FFSB computes it (the process's user
//! and system time over the run and its closing sync, 100 % being one CPU); and per operation,
//! with latency percentiles.
//!
//! Every thread picks its files from one list, as FFSB's threads do ([`filelist`]: its
//! selection, holes and locks); `file_list = "per-thread"` gives each thread a list of its own
//! instead (a share of the fileset and what it creates), whose locks no other thread takes.
//! Buffers and descriptors of the directories are made before the timed loop; a file's name is
//! written into a buffer when an operation needs it (no allocation), as `names` says
//! ([`crate::names`]: fs_mark's random names by default; FFSB numbers its files).

mod filelist;

pub use filelist::{FileList, Hold, Kind, NAME_BUF};

use crate::data::{DataKind, DataSource};
use crate::figures::{
    BYTES, CPU_SYS, CPU_USER, ELAPSED, LATENCY_MAX, LATENCY_MEAN, LATENCY_P50, LATENCY_P99, OPS,
    OPS_RATE,
};
use crate::fileio::{at, raw, AlignedBuf};
use crate::harness::Harness;
pub use crate::names::NameScheme;
use crate::names::Namer;
use crate::placement::Placement;
use crate::rng::Rng;
use crate::together::{run_together, ScratchDir};
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::Clock;
use fsbench_measure::histogram::Histogram;
use fsbench_measure::series::{NoTap, Probe, Tap};
use fsbench_measure::units::{Size, TimeSpan};
use fsbench_measure::CpuTimes;
use fsbench_model::{Dims, Direction, MetricDef, ResultRecord, Unit};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::Arc;

/// Transactions per second as FFSB counts them: the main figure.
pub const TPS: MetricDef = MetricDef::new("tps", Unit::OpsPerSec, Direction::Higher).main();
pub const READ_THROUGHPUT: MetricDef =
    MetricDef::new("read_throughput", Unit::BytesPerSec, Direction::Higher);
pub const WRITE_THROUGHPUT: MetricDef =
    MetricDef::new("write_throughput", Unit::BytesPerSec, Direction::Higher);
/// User CPU time of the whole process over the run and its closing sync, % of the run's
/// time: FFSB's "% User Time" (100 % is one CPU busy all along; several CPUs give more).
pub const CPU_USER_PERCENT: MetricDef =
    MetricDef::new("cpu_user_percent", Unit::Percent, Direction::None);
/// System CPU time likewise: FFSB's "% System Time".
pub const CPU_SYS_PERCENT: MetricDef =
    MetricDef::new("cpu_sys_percent", Unit::Percent, Direction::None);
/// Both: FFSB's "% CPU Utilization", study 002's "CPU usage %".
pub const CPU_PERCENT: MetricDef = MetricDef::new("cpu_percent", Unit::Percent, Direction::None);
/// A sync of the filesystem, as FFSB's: the one after the fileset is made (outside the
/// fileset's time and the mix's) and the one that ends the mix (inside its `elapsed` and every
/// rate).
pub const SYNC: MetricDef = MetricDef::new("sync", Unit::Nanos, Direction::None);
pub const TRANSACTIONS: MetricDef = MetricDef::new("transactions", Unit::Count, Direction::None);

/// The operations a thread chooses from, by weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Write,
    Append,
    Read,
    Readall,
    Delete,
    Stat,
    Metaop,
}

const OPS_ALL: [Op; 8] = [
    Op::Create,
    Op::Write,
    Op::Append,
    Op::Read,
    Op::Readall,
    Op::Delete,
    Op::Stat,
    Op::Metaop,
];

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Write => "write",
            Op::Append => "append",
            Op::Read => "read",
            Op::Readall => "readall",
            Op::Delete => "delete",
            Op::Stat => "stat",
            Op::Metaop => "metaop",
        }
    }
}

/// Which files a thread picks from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileListMode {
    /// One list for every thread, as FFSB's: any thread may pick any file, and the files one
    /// creates are picked by the others.
    #[default]
    Shared,
    /// A list of its own per thread: an equal share of the fileset and what it creates.
    PerThread,
}

impl fmt::Display for FileListMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileListMode::Shared => "shared",
            FileListMode::PerThread => "per-thread",
        })
    }
}

impl std::str::FromStr for FileListMode {
    type Err = String;
    fn from_str(s: &str) -> Result<FileListMode, String> {
        match s {
            "shared" => Ok(FileListMode::Shared),
            "per-thread" => Ok(FileListMode::PerThread),
            _ => Err(format!("unknown file list '{s}': use shared or per-thread")),
        }
    }
}

fsbench_model::text_serde!(FileListMode);

/// A weighted small-file mix (FFSB): a fileset, then threads choosing operations by weight.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MixSettings {
    /// Threads choosing operations (FFSB num_threads).
    #[arg(long, short = 't', value_name = "N", default_value_t = MixSettings::default().threads)]
    pub threads: u64,

    /// How long the threads run (FFSB time); scaled by --scale.
    #[arg(long, value_name = "DURATION", default_value_t = MixSettings::default().duration)]
    pub duration: TimeSpan,

    /// Files created before the run (FFSB num_files); scaled by --scale.
    #[arg(long, value_name = "N", default_value_t = MixSettings::default().num_files)]
    pub num_files: u64,

    /// Directories the files are spread over (FFSB num_dirs).
    #[arg(long, value_name = "N", default_value_t = MixSettings::default().num_dirs)]
    pub num_dirs: u64,

    /// Smallest file size (FFSB min_filesize).
    #[arg(long, value_name = "SIZE", default_value_t = MixSettings::default().min_filesize)]
    pub min_filesize: Size,

    /// Largest file size (FFSB max_filesize); sizes are uniform in between unless
    /// --size-weights is given.
    #[arg(long, value_name = "SIZE", default_value_t = MixSettings::default().max_filesize)]
    pub max_filesize: Size,

    /// File sizes by weight instead of uniform, SIZE:WEIGHT comma-separated (FFSB size_weight):
    /// 4k:1,64k:2.
    #[arg(long, value_name = "SIZE:WEIGHT", value_delimiter = ',')]
    pub size_weights: Vec<String>,

    /// Weight of create: a new file of a file size, written in write_blocksize writes.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().create_weight)]
    pub create_weight: u32,
    /// Weight of write: write_size bytes at a random offset of a file.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().write_weight)]
    pub write_weight: u32,
    /// Weight of append: write_size bytes at the end of a file.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().append_weight)]
    pub append_weight: u32,
    /// Weight of read: read_size bytes at a random offset of a file.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().read_weight)]
    pub read_weight: u32,
    /// Weight of readall: a whole file, in read_blocksize reads.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().readall_weight)]
    pub readall_weight: u32,
    /// Weight of delete: unlink of a file.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().delete_weight)]
    pub delete_weight: u32,
    /// Weight of stat: stat of a file.
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().stat_weight)]
    pub stat_weight: u32,
    /// Weight of metaop: two mkdir, one rmdir and one rename of directories (FFSB metaop).
    #[arg(long, value_name = "W", default_value_t = MixSettings::default().metaop_weight)]
    pub metaop_weight: u32,

    /// Bytes a write or an append writes (FFSB write_size).
    #[arg(long, value_name = "SIZE", default_value_t = MixSettings::default().write_size)]
    pub write_size: Size,
    /// Size of each write call (FFSB write_blocksize).
    #[arg(long, value_name = "SIZE", default_value_t = MixSettings::default().write_blocksize)]
    pub write_blocksize: Size,
    /// Bytes a read reads (FFSB read_size).
    #[arg(long, value_name = "SIZE", default_value_t = MixSettings::default().read_size)]
    pub read_size: Size,
    /// Size of each read call (FFSB read_blocksize).
    #[arg(long, value_name = "SIZE", default_value_t = MixSettings::default().read_blocksize)]
    pub read_blocksize: Size,
    /// A read reads read_blocksize pieces at random offsets instead of read_size in sequence
    /// (FFSB read_random).
    #[arg(long)]
    pub read_random: bool,
    /// A write writes write_blocksize pieces at random offsets instead of write_size in
    /// sequence (FFSB write_random).
    #[arg(long)]
    pub write_random: bool,
    /// fsync after create, write and append, inside the timing (FFSB fsync_file).
    #[arg(long)]
    pub fsync_file: bool,
    /// O_DIRECT for every read and write (FFSB directio); sizes are then whole 4 KiB blocks.
    #[arg(long)]
    pub directio: bool,
    /// When the filesystem fills during the mix (ENOSPC), stop every thread there and report
    /// the figures over the time run, with a warning saying when it filled, instead of failing:
    /// a mix that creates and never deletes fills any disk on a fast enough machine.
    #[arg(long)]
    pub stop_when_full: bool,
    /// Data written: random (incompressible), zero, or compressible:PERCENT.
    #[arg(long, value_name = "KIND", default_value_t = MixSettings::default().data)]
    pub data: DataKind,
    /// Seed of sizes, choices, offsets and data (default: a fresh one per run; stored).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// shared: every thread picks its files from one list, FFSB's (its locks); per-thread:
    /// each thread from its own share of the fileset (no other thread takes its locks).
    #[arg(long, value_name = "LIST", default_value_t = MixSettings::default().file_list)]
    pub file_list: FileListMode,
    /// How files are named: random (fs_mark's names: 40 bytes, the last 24 random, from
    /// --seed), sequential (numbered, as FFSB's: d3/f17) or LENGTH:RANDOM (fs_mark's -p and
    /// -r). Metaop directories are numbered whatever this says.
    #[arg(long, value_name = "random|sequential|LENGTH:RANDOM", default_value_t = MixSettings::default().names)]
    pub names: NameScheme,
    /// Verify what was written: every 4 KiB block the mix writes (the fileset, creates, writes,
    /// appends) carries a header (its offset, its file's number, the seed, a sequence number,
    /// its payload's checksum); after the mix, untimed, the cache is made cold (a filesystem
    /// fsbench made is remounted) and every file is read back and checked. A block other than
    /// written ends the run `corrupt`. File sizes are rounded down to whole 4 KiB blocks (as
    /// with directio), writes land on whole blocks, appends write at the end the file list
    /// gives them (pwrite, not O_APPEND); write_size and write_blocksize must be whole blocks
    /// (docs/workloads/mix.md).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
}

impl Default for MixSettings {
    /// Seed 002's operation mix (create 1, write 1, readall 2; 4 KiB writes and reads) on a
    /// smaller fileset and for a shorter time than its 1,800 s.
    fn default() -> MixSettings {
        MixSettings {
            threads: 4,
            duration: TimeSpan::from_ns(10_000_000_000),
            num_files: 1000,
            num_dirs: 100,
            min_filesize: Size(4 << 10),
            max_filesize: Size(64 << 10),
            size_weights: Vec::new(),
            create_weight: 1,
            write_weight: 1,
            append_weight: 0,
            read_weight: 0,
            readall_weight: 2,
            delete_weight: 0,
            stat_weight: 0,
            metaop_weight: 0,
            write_size: Size(4 << 10),
            write_blocksize: Size(4 << 10),
            read_size: Size(4 << 10),
            read_blocksize: Size(4 << 10),
            read_random: false,
            write_random: false,
            fsync_file: false,
            directio: false,
            stop_when_full: false,
            data: DataKind::Random,
            seed: None,
            file_list: FileListMode::Shared,
            names: NameScheme::default(),
            verify: false,
        }
    }
}

/// The validated mix: scaled counts and time, the weights in operation order, the sizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixPlan {
    pub num_files: u64,
    pub duration_ns: u64,
    pub weights: Vec<(String, u32)>,
    pub size_weights: Vec<(u64, u32)>,
    pub names: NameScheme,
    pub seed: u64,
}

const BLOCK: u64 = 4096;

impl MixSettings {
    fn weights(&self) -> [u32; 8] {
        [
            self.create_weight,
            self.write_weight,
            self.append_weight,
            self.read_weight,
            self.readall_weight,
            self.delete_weight,
            self.stat_weight,
            self.metaop_weight,
        ]
    }

    /// Validates the settings under `ctx`. No side effects.
    pub fn plan(&self, ctx: &Context) -> Result<MixPlan, WorkloadError> {
        ctx.check()?;
        let positive = |field: &'static str, value: u64| {
            if value == 0 {
                Err(WorkloadError::invalid(field, "must be at least 1"))
            } else {
                Ok(())
            }
        };
        positive("threads", self.threads)?;
        positive("num_files", self.num_files)?;
        positive("num_dirs", self.num_dirs)?;
        positive("write_blocksize", self.write_blocksize.0)?;
        positive("read_blocksize", self.read_blocksize.0)?;
        positive("min_filesize", self.min_filesize.0)?;
        if self.threads > 4096 {
            return Err(WorkloadError::invalid("threads", "at most 4096"));
        }
        if self.num_files > crate::metadata::MAX_FILES || self.num_dirs > 1_000_000 {
            return Err(WorkloadError::invalid(
                if self.num_dirs > 1_000_000 {
                    "num_dirs"
                } else {
                    "num_files"
                },
                format!(
                    "at most {} files in at most 1000000 directories",
                    crate::metadata::MAX_FILES
                ),
            ));
        }
        if self.duration.ns == 0 {
            return Err(WorkloadError::invalid("duration", "must be longer than 0"));
        }
        if self.min_filesize > self.max_filesize {
            return Err(WorkloadError::invalid(
                "max_filesize",
                format!(
                    "{} is below min_filesize ({})",
                    self.max_filesize, self.min_filesize
                ),
            ));
        }
        if self.max_filesize.0 > 1 << 30 {
            return Err(WorkloadError::invalid("max_filesize", "at most 1g"));
        }
        if self.weights().iter().all(|&w| w == 0) {
            return Err(WorkloadError::invalid(
                "create_weight",
                "every operation weight is 0; give at least one (e.g. --create-weight 1)",
            ));
        }
        let mut size_weights = Vec::new();
        for entry in &self.size_weights {
            let (size, weight) = entry.split_once(':').ok_or_else(|| {
                WorkloadError::invalid(
                    "size_weights",
                    format!("'{entry}' is not SIZE:WEIGHT (e.g. 64k:2)"),
                )
            })?;
            let size: Size = size
                .parse()
                .map_err(|e| WorkloadError::invalid("size_weights", format!("{e}")))?;
            let weight: u32 = weight.parse().map_err(|_| {
                WorkloadError::invalid("size_weights", format!("'{weight}' is not a weight"))
            })?;
            if size.0 == 0 || size.0 > 1 << 30 {
                return Err(WorkloadError::invalid(
                    "size_weights",
                    format!("{size}: sizes are 1 byte to 1g"),
                ));
            }
            size_weights.push((size.0, weight));
        }
        if !size_weights.is_empty() && size_weights.iter().all(|s| s.1 == 0) {
            return Err(WorkloadError::invalid("size_weights", "every weight is 0"));
        }
        let smallest = size_weights
            .iter()
            .map(|s| s.0)
            .min()
            .unwrap_or(self.min_filesize.0);
        // FFSB asserts these at run time; here they are refused before anything is made.
        if self.write_weight > 0 && self.write_size.0 > smallest {
            return Err(WorkloadError::invalid(
                "write_size",
                format!(
                    "{} is larger than the smallest file ({}): a write stays inside its file",
                    self.write_size,
                    Size(smallest)
                ),
            ));
        }
        if self.read_weight > 0 && self.read_size.0 > smallest {
            return Err(WorkloadError::invalid(
                "read_size",
                format!(
                    "{} is larger than the smallest file ({}): a read stays inside its file",
                    self.read_size,
                    Size(smallest)
                ),
            ));
        }
        if self.directio {
            for (field, size) in [
                ("write_blocksize", self.write_blocksize),
                ("read_blocksize", self.read_blocksize),
                ("write_size", self.write_size),
                ("read_size", self.read_size),
            ] {
                if size.0 % BLOCK != 0 {
                    return Err(WorkloadError::invalid(
                        field,
                        format!("{size} is not whole 4 KiB blocks, which directio needs"),
                    ));
                }
            }
        }
        if self.verify {
            for (field, size) in [
                ("write_size", self.write_size),
                ("write_blocksize", self.write_blocksize),
            ] {
                if size.0 % BLOCK != 0 {
                    return Err(WorkloadError::invalid(
                        "verify",
                        format!(
                            "verify stamps and checks whole 4 KiB blocks, and {field} {size} is \
                             not whole blocks: use a multiple of 4k"
                        ),
                    ));
                }
            }
            if self.stop_when_full {
                return Err(WorkloadError::invalid(
                    "verify",
                    "verify cannot be used with stop_when_full: a write the full filesystem \
                     cut short leaves a block half written, which the check cannot tell from \
                     damage",
                ));
            }
        }
        // The run's creates are not counted before it runs: every number a list can give
        // needs a name of its own.
        let lists = match self.file_list {
            FileListMode::Shared => 1,
            FileListMode::PerThread => self.threads,
        };
        self.names.check("names", FileList::names_needed(lists))?;
        let num_files = ((self.num_files as f64 * ctx.scale).ceil() as u64).max(self.threads);
        let duration_ns = ((self.duration.ns as f64 * ctx.scale) as u64).max(1_000_000);
        Ok(MixPlan {
            num_files,
            duration_ns,
            weights: OPS_ALL
                .iter()
                .zip(self.weights())
                .map(|(op, w)| (op.name().to_string(), w))
                .collect(),
            size_weights,
            names: self.names,
            seed: self.seed.unwrap_or_else(crate::rng::fresh_seed),
        })
    }
}

/// Per operation: how many, their transactions and bytes, and their latency.
#[derive(Default)]
struct Tally {
    ops: u64,
    transactions: u64,
    read_bytes: u64,
    written_bytes: u64,
    latency: Histogram,
}

/// One thread: the file lists it picks from, its buffers and its tallies.
struct Worker<'l> {
    thread: u64,
    /// The run's top directory; every name is relative to it (`d12/f7`), as FFSB's are paths.
    top: RawFd,
    num_dirs: u64,
    /// The files it picks from: the one list every thread shares (FFSB's), or its own.
    files: &'l FileList,
    /// The directories of metaops (in `meta/`), shared or its own as the files.
    meta: &'l FileList,
    rng: Rng,
    /// What every write call writes, `data_at` bytes past a page (`crate::placement`).
    data: AlignedBuf,
    data_at: usize,
    /// Where reads land: `read_at` bytes past the page of `buf`.
    buf: AlignedBuf,
    read_at: usize,
    /// Names, made without allocating (a rename's two).
    name: [u8; NAME_BUF],
    other: [u8; NAME_BUF],
    stat: libc::stat,
    tallies: [Tally; 8],
    cpu: CpuTimes,
    /// Why this thread stopped before the time was up (a full disk); what it measured stays.
    failure: Option<io::Error>,
    /// Where each operation is also published for the phase's series (None: no series).
    probe: Option<Arc<Probe>>,
    /// `verify`: what every write call writes instead of `data`, each 4 KiB block under a
    /// header naming its file and offset (`crate::verify`).
    verified: Option<DataSource>,
    /// The files it picked, in order (for the tests of FFSB's list).
    #[cfg(test)]
    picked: Vec<u32>,
}

/// A list of files and one of metaop directories, for every thread or for one.
struct Lists {
    files: FileList,
    meta: FileList,
}

impl Lists {
    fn new(owner: Option<u64>, files: u64, names: Namer) -> Lists {
        Lists {
            files: FileList::new(Kind::Files, owner, files).named(names),
            meta: FileList::new(Kind::Dirs, owner, 1),
        }
    }
}

/// Everything one run needs that is the same for every thread.
struct Shared<'a> {
    settings: &'a MixSettings,
    plan: &'a MixPlan,
    cumulative: [u32; 8],
    total_weight: u32,
    size_total: u32,
    /// Set by the first thread that found the filesystem full (with `stop_when_full`).
    full: std::sync::atomic::AtomicBool,
}

impl Shared<'_> {
    fn pick(&self, rng: &mut Rng) -> Op {
        let r = (rng.next_u64() % self.total_weight as u64) as u32;
        let i = self.cumulative.iter().position(|&c| r < c).unwrap_or(0);
        OPS_ALL[i]
    }

    fn file_size(&self, rng: &mut Rng) -> u64 {
        let s = self.settings;
        let size = if self.plan.size_weights.is_empty() {
            let range = s.max_filesize.0 - s.min_filesize.0;
            s.min_filesize.0
                + if range == 0 {
                    0
                } else {
                    rng.next_u64() % (range + 1)
                }
        } else {
            let mut r = (rng.next_u64() % self.size_total as u64) as u32;
            let mut chosen = self.plan.size_weights[0].0;
            for &(size, weight) in &self.plan.size_weights {
                if r < weight {
                    chosen = size;
                    break;
                }
                r -= weight;
            }
            chosen
        };
        if s.directio || s.verify {
            (size / BLOCK).max(1) * BLOCK
        } else {
            size
        }
    }
}

impl<'l> Worker<'l> {
    /// Thread `t`'s worker, its buffers and data made now, picking from `files` and `meta`.
    fn new(
        settings: &MixSettings,
        plan: &MixPlan,
        top: RawFd,
        t: u64,
        files: &'l FileList,
        meta: &'l FileList,
        placement: Placement,
    ) -> Worker<'l> {
        let read_buffer = settings.read_blocksize.0.max(settings.read_size.0) as usize;
        // Every write call writes from one block of data, as large as the largest call, placed
        // where this CPU copies fastest (page-aligned for directio).
        let largest = settings.write_blocksize.0.max(settings.write_size.0) as usize;
        let mut data = AlignedBuf::new(largest + crate::placement::ROOM);
        data.as_mut_slice()[placement.write..placement.write + largest]
            .copy_from_slice(DataSource::new(settings.data, plan.seed ^ t, largest).next(largest));
        let verified = settings.verify.then(|| {
            let mut source = DataSource::new(settings.data, plan.seed ^ t, largest);
            source.place(placement.write);
            source.stamp_as(list_seed(settings, plan, t));
            source
        });
        Worker {
            thread: t,
            top,
            num_dirs: settings.num_dirs,
            files,
            meta,
            rng: Rng::new(
                plan.seed
                    .wrapping_add(t.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ),
            data,
            data_at: placement.write,
            buf: AlignedBuf::new(read_buffer.max(4096) + crate::placement::ROOM),
            read_at: placement.read,
            name: [0; NAME_BUF],
            other: [0; NAME_BUF],
            // SAFETY: struct stat is plain data; all zeroes is a valid value.
            stat: unsafe { std::mem::zeroed() },
            tallies: Default::default(),
            cpu: CpuTimes::default(),
            failure: None,
            probe: None,
            verified,
            #[cfg(test)]
            picked: Vec::new(),
        }
    }

    fn flags(&self, s: &MixSettings, flags: libc::c_int) -> libc::c_int {
        if s.directio {
            flags | libc::O_DIRECT
        } else {
            flags
        }
    }

    /// A random offset below `range` (0 when there is no room), on a 4 KiB block with O_DIRECT.
    fn offset(&mut self, range: u64, whole_blocks: bool) -> u64 {
        let at = if range == 0 {
            0
        } else {
            self.rng.next_u64() % range
        };
        if whole_blocks {
            at - at % BLOCK
        } else {
            at
        }
    }

    /// Opens number `n` of `list` (below the top) with `flags`.
    fn open(&mut self, list: &FileList, n: u32, flags: libc::c_int) -> io::Result<RawFd> {
        let name = list.name(n, &mut self.name);
        at::openat(self.top, name, flags, 0o644)
    }

    /// Writes `len` bytes in `block`-sized calls, at `offset` (None: from the current position,
    /// then `start`, for `verify`'s stamps) of file number `file`; the calls made.
    fn write_blocks(
        &mut self,
        fd: RawFd,
        len: u64,
        block: u64,
        offset: Option<u64>,
        (file, start): (u32, u64),
    ) -> io::Result<u64> {
        let mut done = 0u64;
        let mut calls = 0u64;
        let first = offset.unwrap_or(start);
        while done < len {
            let n = block.min(len - done) as usize;
            let chunk = match &mut self.verified {
                Some(source) => source.next_verified(n, file, first + done),
                None => &self.data.as_slice()[self.data_at..self.data_at + n],
            };
            match offset {
                Some(at) => raw::pwrite_all(fd, chunk, at + done)?,
                None => raw::write_all(fd, chunk)?,
            }
            done += n as u64;
            calls += 1;
        }
        Ok(calls)
    }

    fn finish(&self, s: &MixSettings, fd: RawFd, sync: bool) -> io::Result<()> {
        let synced = if sync && s.fsync_file {
            at::fsync(fd)
        } else {
            Ok(())
        };
        let closed = at::close(fd);
        synced.and(closed)
    }

    /// Creates a file of `size` in directory `dir`, written in write_blocksize calls, as FFSB:
    /// added to the list held alone (no thread reads it half made), then made; returns the
    /// calls made. A file that could not be made leaves the list again.
    fn create(&mut self, s: &MixSettings, dir: u64, size: u64, sync: bool) -> io::Result<u64> {
        let files = self.files;
        let n = files.add(dir as u32, size);
        let flags = self.flags(s, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY);
        let made = self.open(files, n, flags).and_then(|fd| {
            let written = self.write_blocks(fd, size, s.write_blocksize.0, None, (n, 0));
            let finished = self.finish(s, fd, sync);
            let calls = written?;
            finished.map(|()| calls)
        });
        match made {
            Ok(calls) => {
                files.release(n, Hold::Alone);
                Ok(calls)
            }
            Err(e) => {
                let _ = at::unlinkat(self.top, files.name(n, &mut self.name), 0);
                files.remove(n);
                Err(e)
            }
        }
    }

    /// One operation, timed by the caller: (transactions, bytes read, bytes written).
    fn op(&mut self, shared: &Shared<'_>, op: Op) -> io::Result<(u64, u64, u64)> {
        let s = shared.settings;
        let files = self.files;
        let hold = if op == Op::Delete {
            Hold::Alone
        } else {
            Hold::Shared
        };
        // A file to act on, picked as FFSB picks it; with no file left, a create (FFSB would
        // stop: "No more files to operate on").
        let picked = match op {
            Op::Create | Op::Metaop => None,
            _ => match files.pick(&mut self.rng, hold) {
                Some(n) => Some(n),
                None => return self.op(shared, Op::Create),
            },
        };
        #[cfg(test)]
        self.picked.extend(picked);
        let done = match (op, picked) {
            (Op::Create, _) => {
                let dir = self.rng.next_u64() % self.num_dirs;
                let size = shared.file_size(&mut self.rng);
                let calls = self.create(s, dir, size, true)?;
                return Ok((calls, 0, size));
            }
            (Op::Metaop, _) => return self.metaop().map(|()| (1, 0, 0)),
            (Op::Write | Op::Append, Some(n)) => self.write(s, op, n),
            (Op::Read | Op::Readall, Some(n)) => self.read(s, op, n),
            (Op::Delete, Some(n)) => {
                let gone = at::unlinkat(self.top, files.name(n, &mut self.name), 0);
                if gone.is_ok() {
                    files.remove(n);
                    return Ok((1, 0, 0));
                }
                gone.map(|()| (1, 0, 0))
            }
            (Op::Stat, Some(n)) => {
                let name = files.name(n, &mut self.name);
                at::fstatat(self.top, name, &mut self.stat).map(|()| (1, 0, 0))
            }
            (_, None) => unreachable!("every other operation picked a file"),
        };
        // An append let its file go once it was open, as FFSB does.
        if op != Op::Append || done.is_err() {
            files.release(picked.expect("picked"), hold);
        }
        done
    }

    /// A write (write_size bytes at a random offset, or write_blocksize pieces at random
    /// offsets) or an append (write_size bytes at the end) to file `n`, held shared.
    fn write(&mut self, s: &MixSettings, op: Op, n: u32) -> io::Result<(u64, u64, u64)> {
        let files = self.files;
        let size = files.size(n);
        let len = s.write_size.0;
        // `verify`: an append writes where the list says the file ends (its stamps must say
        // where), not wherever O_APPEND puts it.
        let flags = if op == Op::Append && !s.verify {
            libc::O_WRONLY | libc::O_APPEND
        } else {
            libc::O_WRONLY
        };
        let flags = self.flags(s, flags);
        let fd = self.open(files, n, flags)?;
        let whole_blocks = s.directio || s.verify;
        let written = if op == Op::Append && s.verify {
            let end = files.grow(n, len);
            files.release(n, Hold::Shared);
            self.write_blocks(fd, len, s.write_blocksize.0, Some(end), (n, end))
        } else if op == Op::Append {
            files.release(n, Hold::Shared);
            files.grow(n, len);
            self.write_blocks(fd, len, s.write_blocksize.0, None, (n, 0))
        } else if s.write_random {
            let block = s.write_blocksize.0;
            let range = size.saturating_sub(block);
            let mut calls = 0;
            let mut result = Ok(0);
            for _ in 0..(len / block).max(1) {
                let at = self.offset(range, whole_blocks);
                if let Err(e) = self.write_blocks(fd, block.min(size), block, Some(at), (n, at)) {
                    result = Err(e);
                    break;
                }
                calls += 1;
            }
            result.map(|_: u64| calls)
        } else {
            let range = size - len;
            let at = self.offset(range, whole_blocks);
            self.write_blocks(fd, len, s.write_blocksize.0, Some(at), (n, at))
        };
        let finished = self.finish(s, fd, true);
        let calls = written?;
        finished?;
        Ok((calls, 0, len))
    }

    /// A read (read_size bytes at a random offset, or read_blocksize pieces at random
    /// offsets) or a readall of file `n`, held shared. A readall reads the size stat(2) gives,
    /// in read_blocksize reads, and counts as FFSB counts it: the whole blocks (its last,
    /// partial read is made but not counted).
    fn read(&mut self, s: &MixSettings, op: Op, n: u32) -> io::Result<(u64, u64, u64)> {
        let files = self.files;
        let size = files.size(n);
        let flags = self.flags(s, libc::O_RDONLY);
        let fd = self.open(files, n, flags)?;
        let (mut calls, mut bytes) = (0u64, 0u64);
        let result = (|| -> io::Result<()> {
            if op == Op::Readall {
                let name = files.name(n, &mut self.name);
                at::fstatat(self.top, name, &mut self.stat)?;
                let size = self.stat.st_size as u64;
                let block = s.read_blocksize.0;
                while bytes < size {
                    let want = block.min(size - bytes) as usize;
                    let got = raw::read_some(
                        fd,
                        &mut self.buf.as_mut_slice()[self.read_at..self.read_at + want],
                    )?;
                    if got == 0 {
                        break;
                    }
                    bytes += got as u64;
                }
                calls = size / block;
                return Ok(());
            }
            let block = s.read_blocksize.0;
            let len = s.read_size.0;
            if s.read_random {
                let range = size.saturating_sub(block);
                for _ in 0..(len / block).max(1) {
                    let at = self.offset(range, s.directio);
                    let n = block.min(size) as usize;
                    raw::pread_exact(
                        fd,
                        &mut self.buf.as_mut_slice()[self.read_at..self.read_at + n],
                        at,
                    )?;
                    calls += 1;
                    bytes += n as u64;
                }
            } else {
                let range = size - len;
                let at = self.offset(range, s.directio);
                let mut done = 0;
                while done < len {
                    let n = block.min(len - done) as usize;
                    raw::pread_exact(
                        fd,
                        &mut self.buf.as_mut_slice()[self.read_at..self.read_at + n],
                        at + done,
                    )?;
                    done += n as u64;
                    calls += 1;
                }
                bytes += len;
            }
            Ok(())
        })();
        let closed = at::close(fd);
        result.and(closed)?;
        Ok((calls, bytes, 0))
    }

    /// FFSB's metaop: two directories made, one removed, one renamed (each picked from the
    /// list of metaop directories held alone), counted as one transaction.
    fn metaop(&mut self) -> io::Result<()> {
        let meta = self.meta;
        for _ in 0..2 {
            let n = meta.add(0, 0);
            let made = at::mkdirat(self.top, meta.name(n, &mut self.name));
            if let Err(e) = made {
                meta.remove(n);
                return Err(e);
            }
            meta.release(n, Hold::Alone);
        }
        if let Some(n) = meta.pick(&mut self.rng, Hold::Alone) {
            let gone = at::unlinkat(self.top, meta.name(n, &mut self.name), libc::AT_REMOVEDIR);
            match gone {
                Ok(()) => meta.remove(n),
                Err(e) => {
                    meta.release(n, Hold::Alone);
                    return Err(e);
                }
            }
        }
        if let Some(n) = meta.pick(&mut self.rng, Hold::Alone) {
            let from = meta.name(n, &mut self.name);
            meta.renamed(n);
            let moved = at::renameat(self.top, from, meta.name(n, &mut self.other));
            meta.release(n, Hold::Alone);
            moved?;
        }
        Ok(())
    }

    /// Runs operations until `deadline_ns` (Clock ns since `start`); false when stopped.
    fn run(
        &mut self,
        shared: &Shared<'_>,
        start: u64,
        duration_ns: u64,
        stop: &StopFlag,
    ) -> io::Result<bool> {
        // Made with the series' probe and without: no series costs nothing.
        match self.probe.clone() {
            Some(probe) => self.run_tapped(shared, start, duration_ns, stop, &*probe),
            None => self.run_tapped(shared, start, duration_ns, stop, &NoTap),
        }
    }

    fn run_tapped<T: Tap>(
        &mut self,
        shared: &Shared<'_>,
        start: u64,
        duration_ns: u64,
        stop: &StopFlag,
        tap: &T,
    ) -> io::Result<bool> {
        let clock = Clock::get();
        let cpu_before = CpuTimes::thread();
        let mut before = clock.ticks();
        let mut n = 0u64;
        let stop_when_full = shared.settings.stop_when_full;
        loop {
            if clock.ns(before.saturating_sub(start)) >= duration_ns {
                break;
            }
            // One relaxed load, and only when asked for.
            if stop_when_full && shared.full.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            n += 1;
            if n % 256 == 0 && stop.is_requested() {
                return Ok(false);
            }
            let op = shared.pick(&mut self.rng);
            let (transactions, read, written) = match self.op(shared, op) {
                Ok(done) => done,
                Err(e) if stop_when_full && e.raw_os_error() == Some(libc::ENOSPC) => {
                    shared
                        .full
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    break;
                }
                Err(e) => {
                    self.failure = Some(e);
                    break;
                }
            };
            let after = clock.ticks();
            let tally = &mut self.tallies[op as usize];
            let latency = clock.ns(after.saturating_sub(before));
            tally.latency.record(latency);
            tap.op(read + written, latency);
            tally.ops += 1;
            tally.transactions += transactions;
            tally.read_bytes += read;
            tally.written_bytes += written;
            before = after;
        }
        self.cpu = CpuTimes::thread().since(cpu_before);
        Ok(true)
    }
}

impl Workload for MixSettings {
    const KIND: &'static str = "mix";
    const ABOUT: &'static str =
        "Weighted small-file mix (FFSB): a fileset, then threads choosing create/write/append/read/readall/delete/stat/metaop by weight";
    const LONG_ABOUT: &'static str = "Weighted small-file mix with FFSB's semantics and \
parameter names (seed 002).\n\nA fileset of --num-files files in --num-dirs directories is \
created first (timed and reported as the `fileset` result), then --threads threads choose \
operations by weight for --duration. Reported as FFSB reports it: transactions per second (one \
per read or write call, one per delete, stat or metaop), MB/s read and written, CPU use as FFSB \
computes it (100 % is one CPU); and per operation, with latency percentiles. Every thread picks \
its files from one list, with FFSB's locks (--file-list per-thread: each from its own share).";
    const CATEGORY: Option<fsbench_model::Category> = Some(fsbench_model::Category::Metadata);

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        self.plan(ctx).map(drop)
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        self.plan(ctx)
            .map_or(0, |p| p.duration_ns + p.num_files * 100_000)
    }

    /// The fileset made before the run (what it grows by while it runs depends on the run).
    fn footprint(&self, ctx: &Context) -> Option<crate::workload::Footprint> {
        let plan = self.plan(ctx).ok()?;
        Some(crate::workload::Footprint {
            bytes: fileset_bytes(&plan, self),
            inodes: plan.num_files + self.num_dirs,
            what: "the fileset".into(),
            setting: "num_files",
            advice: "lower num_files or the file sizes, or use a bigger target".into(),
        })
    }

    fn describe(&self, ctx: &Context) -> Option<serde_json::Value> {
        let mut plan = serde_json::to_value(self.plan(ctx).ok()?).ok()?;
        plan.as_object_mut()?.remove("seed");
        let placement = crate::placement::Placement::planned(self.directio);
        plan.as_object_mut()?
            .insert("buffer_placement".into(), placement.into());
        Some(plan)
    }

    fn table_columns() -> &'static [&'static str] {
        &[
            TPS.name,
            OPS_RATE.name,
            READ_THROUGHPUT.name,
            WRITE_THROUGHPUT.name,
            LATENCY_MEAN.name,
            LATENCY_P50.name,
            LATENCY_P99.name,
            LATENCY_MAX.name,
            CPU_PERCENT.name,
            CPU_USER_PERCENT.name,
            CPU_SYS_PERCENT.name,
        ]
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
        let seed = Some(plan.seed);
        if let Err(e) = self.preflight(ctx, dir) {
            return End::failed(e, seed);
        }
        // Everything made goes, whatever happens (untimed; a panic included).
        ScratchDir::run(dir, "fsbench-mix", seed, sink, |top, sink| {
            run(self, &plan, ctx, top, stop, sink, harness)
        })
    }
}

/// The fileset's bytes before the run: its files at their mean size, in whole blocks.
fn fileset_bytes(plan: &MixPlan, settings: &MixSettings) -> u64 {
    let mean = if plan.size_weights.is_empty() {
        (settings.min_filesize.0 + settings.max_filesize.0) / 2
    } else {
        let weights: u64 = plan.size_weights.iter().map(|s| u64::from(s.1)).sum();
        plan.size_weights
            .iter()
            .map(|(size, w)| size * u64::from(*w))
            .sum::<u64>()
            / weights.max(1)
    };
    plan.num_files.saturating_mul(mean.div_ceil(BLOCK) * BLOCK)
}

fn run(
    settings: &MixSettings,
    plan: &MixPlan,
    ctx: &Context,
    top: &Path,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<bool, WorkloadError> {
    for name in (0..settings.num_dirs)
        .map(|d| format!("d{d}"))
        .chain(["meta".to_string()])
    {
        let path = top.join(name);
        std::fs::create_dir(&path)
            .map_err(|e| WorkloadError::io("create the directory", &path, e))?;
    }
    // One descriptor for every thread: names below it are paths, as FFSB's are.
    let top_fd = at::open_dir(top).map_err(|e| WorkloadError::io("open", top, e))?;
    let weights = settings.weights();
    let mut cumulative = [0u32; 8];
    let mut sum = 0;
    for (c, w) in cumulative.iter_mut().zip(weights) {
        sum += w;
        *c = sum;
    }
    let shared = Shared {
        settings,
        plan,
        cumulative,
        total_weight: sum,
        size_total: plan.size_weights.iter().map(|s| s.1).sum(),
        full: std::sync::atomic::AtomicBool::new(false),
    };
    // The lists the threads pick from: FFSB's one, or one per thread.
    let files_per_thread = plan.num_files.div_ceil(settings.threads);
    let names = Namer::new(plan.names, plan.seed);
    let lists: Vec<Lists> = match settings.file_list {
        FileListMode::Shared => vec![Lists::new(None, plan.num_files, names)],
        FileListMode::PerThread => (0..settings.threads)
            .map(|t| Lists::new(Some(t), files_per_thread, names))
            .collect(),
    };
    // Buffered reads and writes copy where this CPU copies fastest, timed in the directory.
    let placement = Placement::for_dir(top, settings.directio, fileset_bytes(plan, settings));
    let mut workers: Vec<Worker> = (0..settings.threads)
        .map(|t| {
            let lists = &lists[(t as usize).min(lists.len() - 1)];
            Worker::new(
                settings,
                plan,
                top_fd.as_raw_fd(),
                t,
                &lists.files,
                &lists.meta,
                placement,
            )
        })
        .collect();

    // The fileset, timed on its own: every thread creates its share, all at once.
    if !harness.phase_start() {
        return Ok(false);
    }
    let phase = |operation: &str| {
        Dims {
            operation: (!operation.is_empty()).then(|| operation.to_string()),
            threads: Some(settings.threads),
            ..Dims::default()
        }
        .label()
    };
    let series =
        crate::workload::phase_series(ctx, sink, phase("fileset"), "thread", workers.len());
    for (t, w) in workers.iter_mut().enumerate() {
        w.probe = series.as_ref().map(|s| s.probe(t));
    }
    let fileset = timed(&mut workers, |w| {
        let mut tally = Tally::default();
        let clock = Clock::get();
        for i in 0..files_per_thread {
            if w.thread * files_per_thread + i >= plan.num_files {
                break;
            }
            if i % 256 == 255 && stop.is_requested() {
                return Ok(false);
            }
            let dir = w.rng.next_u64() % w.num_dirs;
            let size = shared.file_size(&mut w.rng);
            let before = clock.ticks();
            let calls = w.create(settings, dir, size, false)?;
            let latency = clock.ns(clock.ticks().saturating_sub(before));
            tally.latency.record(latency);
            if let Some(probe) = &w.probe {
                probe.op(size, latency);
            }
            tally.ops += 1;
            tally.transactions += calls;
            tally.written_bytes += size;
        }
        w.tallies[Op::Create as usize] = tally;
        Ok(true)
    });
    if let Some(series) = series {
        series.finish();
    }
    let fileset = fileset.map_err(|e| WorkloadError::io("create the fileset in", top, e))?;
    let Some((wall, cpu)) = fileset else {
        return Ok(false);
    };
    let created: Vec<&Tally> = workers
        .iter()
        .map(|w| &w.tallies[Op::Create as usize])
        .collect();
    let mut record = summary_record("fileset", &created, wall, cpu, settings, placement);
    record
        .attributes
        .insert("files".into(), plan.num_files.into());
    // FFSB syncs once its fileset is made ("Syncing()..."), outside the benchmark's time: the
    // mix starts on a clean filesystem instead of writing the fileset back inside its time.
    // The sync's time is a fact of the fileset, outside its rates.
    let synced = sync_ns(top_fd.as_raw_fd()).map_err(|e| WorkloadError::io("sync", top, e))?;
    record.measurements.push(SYNC.at(synced as f64));
    sink.status(&format!("fileset of {} files made", plan.num_files));
    sink.record(record, 1, None);
    for w in workers.iter_mut() {
        w.tallies = Default::default();
    }

    // The mix.
    if !harness.phase_start() {
        return Ok(false);
    }
    let series = crate::workload::phase_series(ctx, sink, phase(""), "thread", workers.len());
    for (t, w) in workers.iter_mut().enumerate() {
        w.probe = series.as_ref().map(|s| s.probe(t));
    }
    let start = crate::together::SharedStart::default();
    let ran = timed(&mut workers, |w| {
        w.run(&shared, start.get(Clock::get()), plan.duration_ns, stop)
    });
    if let Some(series) = series {
        series.finish();
    }
    let ran = ran.map_err(|e| WorkloadError::io("run the mix in", top, e))?;
    let Some((ran_ns, mut cpu)) = ran else {
        return Ok(false);
    };
    // FFSB ends its run with sync(2), inside its time and its CPU time: here the sync of the
    // filesystem measured alone (syncfs), which FFSB's also waits for.
    let cpu_before = CpuTimes::process();
    let sync_ns = sync_ns(top_fd.as_raw_fd()).map_err(|e| WorkloadError::io("sync", top, e))?;
    cpu.add(CpuTimes::process().since(cpu_before));
    let wall = ran_ns + sync_ns;
    let all: Vec<&Tally> = workers.iter().flat_map(|w| w.tallies.iter()).collect();
    let mut overall = summary_record("", &all, wall, cpu, settings, placement);
    overall.dims.operation = None;
    overall.measurements.push(SYNC.at(sync_ns as f64));
    overall
        .attributes
        .insert("file_list".into(), settings.file_list.to_string().into());
    let filled = shared.full.load(std::sync::atomic::Ordering::Relaxed);
    if filled {
        sink.warning(&format!(
            "the filesystem filled after {:.1} s of the mix's {:.1} s: its figures are over the \
             {:.1} s run (stop_when_full)",
            ran_ns as f64 / 1e9,
            plan.duration_ns as f64 / 1e9,
            ran_ns as f64 / 1e9
        ));
        overall.attributes.insert("stopped".into(), "full".into());
    }
    sink.status(&format!(
        "{:.0} transactions/s",
        overall.main().map_or(0.0, |m| m.value)
    ));
    sink.record(overall, 2, None);
    let mut n = 2;
    for (i, op) in OPS_ALL.iter().enumerate() {
        if weights[i] == 0 {
            continue;
        }
        let tallies: Vec<&Tally> = workers.iter().map(|w| &w.tallies[i]).collect();
        let record = summary_record(
            op.name(),
            &tallies,
            wall,
            CpuTimes::default(),
            settings,
            placement,
        );
        n += 1;
        sink.record(record, n, None);
    }
    // What was measured is kept (above); then the first thread that could not go on says why.
    if let Some(e) = workers.iter_mut().find_map(|w| w.failure.take()) {
        return Err(WorkloadError::io("run the mix in", top, e));
    }
    if settings.verify {
        // Nothing of the run stays open: a filesystem fsbench made can be remounted.
        drop(workers);
        drop(top_fd);
        if stop.is_requested() {
            return Ok(false);
        }
        verify_files(settings, plan, &lists, top, sink, harness)?;
    }
    Ok(true)
}

/// The seed the stamps of list `t`'s files carry (`verify`): the run's, or under per-thread
/// lists the run's and the thread's (a block of another thread's file says so).
fn list_seed(settings: &MixSettings, plan: &MixPlan, t: u64) -> u64 {
    match settings.file_list {
        FileListMode::Shared => plan.seed,
        FileListMode::PerThread => plan.seed ^ t,
    }
}

/// `verify`, after the mix (untimed): the cache made cold (a filesystem fsbench made is
/// remounted; in a directory every cache dropped) and every file in the lists read back, each
/// 4 KiB block checked against its file's number, its offset and the seed. The blocks of a
/// file were written at various times and by various threads, so none is held to a sequence:
/// each must be a whole block this run wrote there.
fn verify_files(
    settings: &MixSettings,
    plan: &MixPlan,
    lists: &[Lists],
    top: &Path,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<(), WorkloadError> {
    use std::os::unix::ffi::OsStrExt;
    let cold = match harness.cold() {
        Ok(how) => {
            sink.warning(&format!(
                "--verify: every file the mix left was read back once the cache was made cold \
                 ({how})"
            ));
            true
        }
        Err(why) => {
            sink.warning(&format!(
                "--verify: the cache could not be made cold ({why}): each file was evicted on \
                 its own (fadvise) before it was read back; a filesystem that keeps files in \
                 memory (tmpfs) is checked from there"
            ));
            false
        }
    };
    let mut name = [0u8; NAME_BUF];
    let mut files = 0u64;
    for (t, list) in lists.iter().enumerate() {
        let seed = list_seed(settings, plan, t as u64);
        for n in list.files.numbers() {
            let path = top.join(std::ffi::OsStr::from_bytes(
                list.files.name(n, &mut name).to_bytes(),
            ));
            // Never through a symlink: a name in the directory under test is not proof of a file.
            let file = crate::fileio::open(&path, crate::fileio::OpenMode::Read, false)
                .map_err(|e| WorkloadError::io("open for verifying", &path, e))?;
            if !cold {
                // SAFETY: advice on a descriptor `file` owns; the closing sync left it clean.
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            }
            let expect = crate::verify::Expect {
                file: n,
                seed,
                fresh_from: None,
            };
            match crate::verify::check(&file, &path, expect, 0, list.files.size(n)) {
                Ok(Ok(_)) => files += 1,
                Ok(Err(corruption)) => {
                    return Err(WorkloadError::Corrupt(format!(
                        "{corruption} (read back after the mix)"
                    )))
                }
                Err(e) => return Err(WorkloadError::io("read back", &path, e)),
            }
        }
    }
    sink.status(&format!("{files} files read back as written"));
    Ok(())
}

/// syncfs(2) of the filesystem holding `dir`: its time in ns.
fn sync_ns(dir: RawFd) -> io::Result<u64> {
    let clock = Clock::get();
    let start = clock.ticks();
    // SAFETY: `dir` is an open descriptor; syncfs only reads it.
    if unsafe { libc::syncfs(dir) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(clock.ns(clock.ticks().saturating_sub(start)))
}

/// Runs `work` on every worker in its own thread, all released together; the wall time from
/// the release to the last end and the process's CPU time over it. None when stopped.
fn timed(
    workers: &mut [Worker],
    work: impl Fn(&mut Worker) -> io::Result<bool> + Sync,
) -> io::Result<Option<(u64, CpuTimes)>> {
    let clock = Clock::get();
    let done = run_together(workers, work)?;
    for outcome in done.results {
        if !outcome? {
            return Ok(None);
        }
    }
    let wall = clock.ns(done.ended.saturating_sub(done.released)).max(1);
    Ok(Some((wall, done.cpu)))
}

/// A result over `tallies` (merged) in `wall_ns`, as FFSB reports it, saying how the files
/// were named.
fn summary_record(
    operation: &str,
    tallies: &[&Tally],
    wall_ns: u64,
    cpu: CpuTimes,
    settings: &MixSettings,
    placement: Placement,
) -> ResultRecord {
    let mut latency = Histogram::new();
    let (mut ops, mut transactions, mut read, mut written) = (0u64, 0u64, 0u64, 0u64);
    for t in tallies {
        latency.merge(&t.latency);
        ops += t.ops;
        transactions += t.transactions;
        read += t.read_bytes;
        written += t.written_bytes;
    }
    let seconds = wall_ns as f64 / 1e9;
    let mut measurements = vec![
        TPS.at(transactions as f64 / seconds),
        OPS_RATE.at(ops as f64 / seconds),
        READ_THROUGHPUT.at(read as f64 / seconds),
        WRITE_THROUGHPUT.at(written as f64 / seconds),
    ];
    if ops > 0 {
        measurements.extend(crate::figures::latency(&latency.summary()));
    }
    measurements.extend([
        OPS.at(ops as f64),
        TRANSACTIONS.at(transactions as f64),
        BYTES.at((read + written) as f64),
        ELAPSED.at(wall_ns as f64),
    ]);
    if cpu != CpuTimes::default() {
        // As FFSB's main.c: CPU seconds over the run's seconds, 100 % being one CPU.
        let percent = |ns: u64| ns as f64 / wall_ns as f64 * 100.0;
        measurements.extend([
            CPU_USER.at(cpu.user_ns as f64),
            CPU_SYS.at(cpu.sys_ns as f64),
            CPU_USER_PERCENT.at(percent(cpu.user_ns)),
            CPU_SYS_PERCENT.at(percent(cpu.sys_ns)),
            CPU_PERCENT.at(percent(cpu.user_ns + cpu.sys_ns)),
        ]);
    }
    ResultRecord {
        dims: Dims {
            operation: (!operation.is_empty()).then(|| operation.to_string()),
            threads: Some(settings.threads),
            ..Dims::default()
        },
        attributes: [
            ("names".to_string(), settings.names.to_string().into()),
            (
                "read_buffer_offset_bytes".to_string(),
                placement.read.into(),
            ),
            (
                "write_buffer_offset_bytes".to_string(),
                placement.write.into(),
            ),
        ]
        .into_iter()
        .collect(),
        latency_bins: latency.bins(),
        measurements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Collect;
    use fsbench_model::Outcome;

    fn value(r: &ResultRecord, metric: &str) -> f64 {
        r.measurement(metric).map_or(f64::NAN, |m| m.value)
    }

    fn by<'a>(records: &'a [ResultRecord], op: Option<&str>) -> &'a ResultRecord {
        records
            .iter()
            .find(|r| r.dims.operation.as_deref() == op)
            .unwrap()
    }

    #[test]
    fn the_mix_does_what_it_reports_and_honours_weights() {
        for file_list in [FileListMode::Shared, FileListMode::PerThread] {
            weights_are_honoured(file_list);
        }
    }

    fn weights_are_honoured(file_list: FileListMode) {
        let dir = tempfile::tempdir().unwrap();
        let settings = MixSettings {
            file_list,
            threads: 2,
            duration: TimeSpan::from_ns(300_000_000),
            num_files: 40,
            num_dirs: 4,
            min_filesize: Size(8 << 10),
            max_filesize: Size(16 << 10),
            create_weight: 1,
            write_weight: 1,
            readall_weight: 2,
            stat_weight: 4,
            metaop_weight: 0,
            ..MixSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let fileset = by(&sink.records, Some("fileset"));
        assert_eq!(value(fileset, "ops"), 40.0);
        // 8..16 KiB files in 4 KiB writes: 2..4 transactions each.
        let t = value(fileset, "transactions");
        assert!((80.0..=160.0).contains(&t), "{t}");
        let overall = by(&sink.records, None);
        assert_eq!(overall.main().unwrap().metric, "tps");
        let ops = |op| value(by(&sink.records, Some(op)), "ops");
        let total = ops("create") + ops("write") + ops("readall") + ops("stat");
        assert_eq!(total, value(overall, "ops"));
        assert!(
            total > 400.0,
            "a 0.3 s mix on a cached fs runs many ops: {total}"
        );
        // Weights 1:1:2:4 within a few percent of the operations.
        let share = |op| ops(op) / total;
        assert!((share("stat") - 0.5).abs() < 0.08, "stat {}", share("stat"));
        assert!(
            (share("readall") - 0.25).abs() < 0.08,
            "readall {}",
            share("readall")
        );
        // A write writes write_size (4 KiB) in one call; a stat is one transaction.
        let write = by(&sink.records, Some("write"));
        assert_eq!(value(write, "transactions"), value(write, "ops"));
        assert_eq!(value(write, "bytes"), 4096.0 * value(write, "ops"));
        let stat = by(&sink.records, Some("stat"));
        assert_eq!(value(stat, "transactions"), value(stat, "ops"));
        // readall reads whole files: at least 8 KiB each.
        let readall = by(&sink.records, Some("readall"));
        assert!(value(readall, "bytes") >= 8192.0 * value(readall, "ops"));
        // As FFSB counts a readall: its whole 4 KiB blocks, not the last partial read (nor
        // a read at the end of the file).
        let blocks = value(readall, "bytes") / 4096.0;
        let t = value(readall, "transactions");
        assert!(
            t <= blocks && t > blocks - value(readall, "ops"),
            "{t} transactions for {blocks} blocks"
        );
        assert!(value(overall, "cpu_sys_percent") >= 0.0);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "left behind"
        );
    }

    /// Two threads and one list (FFSB's): a file one thread created is read by the other,
    /// which picks from the whole set; with lists of their own, neither sees the other's.
    #[test]
    fn threads_pick_from_one_list_and_see_each_other_s_creates() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["d0", "d1", "meta"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        let top = at::open_dir(dir.path()).unwrap();
        let settings = MixSettings {
            num_dirs: 2,
            min_filesize: Size(4096),
            max_filesize: Size(8192),
            seed: Some(3),
            ..MixSettings::default()
        };
        let plan = settings.plan(&Context::default()).unwrap();
        let shared = Shared {
            settings: &settings,
            plan: &plan,
            cumulative: [0, 0, 0, 0, 1, 1, 1, 1],
            total_weight: 1,
            size_total: 0,
            full: std::sync::atomic::AtomicBool::new(false),
        };
        let (files, meta) = (
            FileList::new(Kind::Files, None, 64),
            FileList::new(Kind::Dirs, None, 1),
        );
        let fd = top.as_raw_fd();
        let mut a = Worker::new(&settings, &plan, fd, 0, &files, &meta, Placement::ALIGNED);
        let mut b = Worker::new(&settings, &plan, fd, 1, &files, &meta, Placement::ALIGNED);
        // Thread a makes the whole fileset, 32 files.
        for i in 0..32 {
            a.create(&settings, i % 2, 4096, false).unwrap();
        }
        // Both threads read at once: each reads files of the whole set, all made by a.
        std::thread::scope(|s| {
            for w in [&mut a, &mut b] {
                let shared = &shared;
                s.spawn(move || {
                    for _ in 0..2000 {
                        w.op(shared, Op::Readall).unwrap();
                    }
                });
            }
        });
        for w in [&a, &b] {
            let seen: std::collections::BTreeSet<u32> = w.picked.iter().copied().collect();
            assert_eq!(seen.len(), 32, "thread {} picked {seen:?}", w.thread);
            assert!(
                w.tallies.iter().all(|t| t.ops == 0),
                "tallied by the caller"
            );
        }
        assert_eq!(files.live(), 32, "no read became a create");
        // A file b creates is one a then reads.
        b.create(&settings, 1, 8192, false).unwrap();
        a.picked.clear();
        while !a.picked.contains(&32) {
            let (_, read, _) = a.op(&shared, Op::Readall).unwrap();
            assert!(read >= 4096);
        }
        // b deletes while a holds a file: never that one.
        let held = files.pick(&mut a.rng, Hold::Shared).unwrap();
        for _ in 0..31 {
            b.op(&shared, Op::Delete).unwrap();
        }
        assert_eq!(files.live(), 2);
        assert!(b.picked.iter().rev().take(31).all(|&n| n != held));
        files.release(held, Hold::Shared);
        let mut name = [0u8; NAME_BUF];
        assert!(dir
            .path()
            .join(files.name(held, &mut name).to_str().unwrap())
            .exists());

        // Lists of their own: a thread with none makes a file rather than read another's.
        let (own_a, own_b) = (
            FileList::new(Kind::Files, Some(0), 8),
            FileList::new(Kind::Files, Some(1), 8),
        );
        let mut a = Worker::new(&settings, &plan, fd, 0, &own_a, &meta, Placement::ALIGNED);
        let mut b = Worker::new(&settings, &plan, fd, 1, &own_b, &meta, Placement::ALIGNED);
        a.create(&settings, 0, 4096, false).unwrap();
        let (_, read, written) = b.op(&shared, Op::Readall).unwrap();
        assert_eq!((read, own_b.live(), own_a.live()), (0, 1, 1));
        assert!(written >= 4096);
        assert_eq!(
            own_b.name(0, &mut name).to_str().unwrap().split('/').nth(1),
            Some("t1-f0")
        );
    }

    /// FFSB's CPU %: the process's CPU seconds over the run's seconds, 100 % for one CPU (not
    /// divided among the CPUs), and the run's time includes its closing sync.
    #[test]
    fn cpu_percent_is_ffsb_s_and_the_run_ends_with_its_sync() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MixSettings {
            threads: 2,
            duration: TimeSpan::from_ns(200_000_000),
            num_files: 20,
            num_dirs: 2,
            max_filesize: Size(16 << 10),
            ..MixSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let overall = by(&sink.records, None);
        let (user, sys, elapsed) = (
            value(overall, "cpu_user"),
            value(overall, "cpu_sys"),
            value(overall, "elapsed"),
        );
        let percent = |ns: f64| ns / elapsed * 100.0;
        assert!((value(overall, "cpu_user_percent") - percent(user)).abs() < 1e-9);
        assert!((value(overall, "cpu_sys_percent") - percent(sys)).abs() < 1e-9);
        assert!((value(overall, "cpu_percent") - percent(user + sys)).abs() < 1e-9);
        assert!(value(overall, "sync") > 0.0 && value(overall, "sync") < elapsed);
        assert!(elapsed >= 200_000_000.0);
        assert_eq!(overall.attributes["file_list"], "shared");
    }

    #[test]
    fn metaop_delete_and_empty_shares_work_and_settings_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MixSettings {
            threads: 2,
            duration: TimeSpan::from_ns(100_000_000),
            num_files: 2,
            num_dirs: 1,
            create_weight: 0,
            write_weight: 0,
            readall_weight: 0,
            delete_weight: 1,
            metaop_weight: 1,
            ..MixSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert!(value(by(&sink.records, Some("metaop")), "ops") > 0.0);
        let ctx = Context::default();
        let bad = |s: MixSettings| s.plan(&ctx).unwrap_err().to_string();
        let none = MixSettings {
            create_weight: 0,
            write_weight: 0,
            readall_weight: 0,
            ..MixSettings::default()
        };
        assert!(bad(none).starts_with("create_weight: every operation weight is 0"));
        let big = MixSettings {
            write_size: Size(1 << 20),
            ..MixSettings::default()
        };
        assert!(bad(big).starts_with("write_size: 1m is larger than the smallest file"));
        let direct = MixSettings {
            directio: true,
            read_blocksize: Size(1000),
            ..MixSettings::default()
        };
        assert!(bad(direct).starts_with("read_blocksize: 1000 is not whole 4 KiB blocks"));
        let weights = MixSettings {
            size_weights: vec!["4k".into()],
            ..MixSettings::default()
        };
        assert!(bad(weights).starts_with("size_weights: '4k' is not SIZE:WEIGHT"));
    }

    /// At the mix's phase (the second), the names of the fileset's files in `top`'s dN/.
    struct Fileset<'a> {
        top: &'a Path,
        phases: u32,
        names: Vec<String>,
    }

    impl Harness for Fileset<'_> {
        fn cold(&mut self) -> Result<String, String> {
            crate::harness::Detached.cold()
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            crate::harness::Detached.drop_caches()
        }
        fn evict(&mut self, _: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
            Err("detached".into())
        }
        fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
            Err("detached".into())
        }
        fn phase_start(&mut self) -> bool {
            self.phases += 1;
            if self.phases == 2 {
                for dir in std::fs::read_dir(self.top).unwrap() {
                    let dir = dir.unwrap();
                    if dir.file_name().to_str().unwrap().starts_with('d') {
                        for file in std::fs::read_dir(dir.path()).unwrap() {
                            self.names
                                .push(file.unwrap().file_name().into_string().unwrap());
                        }
                    }
                }
                self.names.sort();
            }
            true
        }
    }

    /// `verify`'s harness: its `cold` changes one byte of the second block of the first file
    /// of 8 KiB or more it finds under `top` (None: changes nothing), names it, and says
    /// "remounted (test)".
    struct Damaging<'a> {
        top: &'a Path,
        damage: bool,
        damaged: Option<String>,
    }

    impl Harness for Damaging<'_> {
        fn cold(&mut self) -> Result<String, String> {
            use std::os::unix::fs::FileExt;
            if self.damage {
                let path = std::fs::read_dir(self.top)
                    .unwrap()
                    .map(|d| d.unwrap().path())
                    .filter(|d| d.file_name().unwrap().to_str().unwrap().starts_with('d'))
                    .flat_map(|d| std::fs::read_dir(d).unwrap().map(|f| f.unwrap().path()))
                    .find(|f| f.metadata().unwrap().len() >= 8192)
                    .expect("a file of two blocks");
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .unwrap();
                let mut byte = [0u8];
                file.read_exact_at(&mut byte, 4096 + 100).unwrap();
                file.write_all_at(&[!byte[0]], 4096 + 100).unwrap();
                self.damaged = Some(path.file_name().unwrap().to_str().unwrap().to_string());
            }
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

    /// A mix of every writing operation (the fileset, creates, sequential and random writes,
    /// appends, deletes that free numbers creates take again) by several threads, on one list
    /// and on lists of their own, with `verify`: read back after the mix with no false alarm;
    /// a byte changed behind its back (by the harness's "remount") ends it `corrupt`, naming
    /// the file and the block; settings it cannot verify are refused.
    #[test]
    fn verify_reads_back_every_file_the_mix_wrote_and_finds_a_changed_block() {
        let settings = |file_list, write_random| MixSettings {
            threads: 3,
            duration: TimeSpan::from_ns(150_000_000),
            num_files: 40,
            num_dirs: 3,
            min_filesize: Size(10 << 10),
            max_filesize: Size(40 << 10),
            create_weight: 2,
            write_weight: 3,
            append_weight: 3,
            readall_weight: 1,
            delete_weight: 1,
            write_size: Size(8 << 10),
            write_blocksize: Size(4 << 10),
            write_random,
            file_list,
            seed: Some(9),
            verify: true,
            ..MixSettings::default()
        };
        let ctx = Context::default();
        for (file_list, write_random, damage) in [
            (FileListMode::Shared, false, false),
            (FileListMode::PerThread, true, false),
            (FileListMode::Shared, true, true),
            (FileListMode::PerThread, false, true),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let settings = settings(file_list, write_random);
            let plan = settings.plan(&ctx).unwrap();
            let mut harness = Damaging {
                top: dir.path(),
                damage,
                damaged: None,
            };
            let mut sink = Collect::default();
            let ran = super::run(
                &settings,
                &plan,
                &ctx,
                dir.path(),
                &StopFlag::new(),
                &mut sink,
                &mut harness,
            );
            let case = format!("{file_list} random {write_random} damage {damage}");
            if !damage {
                assert!(ran.unwrap(), "{case}");
                assert!(
                    sink.warnings
                        .iter()
                        .any(|w| w.contains("read back once the cache was made cold")),
                    "{case}: {:?}",
                    sink.warnings
                );
                continue;
            }
            let said = ran.unwrap_err();
            assert!(matches!(said, WorkloadError::Corrupt(_)), "{case}: {said}");
            let said = said.to_string();
            let name = harness.damaged.unwrap();
            assert!(
                said.contains(&format!("/{name}: the block at byte 4096 is not")),
                "{case}: {said}"
            );
            assert!(said.contains("payload changed"), "{case}: {said}");
            assert_eq!(
                End::failed(WorkloadError::Corrupt(said), None).outcome,
                Outcome::Corrupt
            );
        }
        // No harness: each file evicted on its own, said.
        let dir = tempfile::tempdir().unwrap();
        let settings = settings(FileListMode::Shared, false);
        let mut sink = Collect::default();
        let plan = settings.plan(&ctx).unwrap();
        let ran = super::run(
            &settings,
            &plan,
            &ctx,
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert!(ran.unwrap());
        assert!(
            sink.warnings
                .iter()
                .any(|w| w.contains("could not be made cold") && w.contains("no harness")),
            "{:?}",
            sink.warnings
        );
        // What cannot be verified is refused, naming verify.
        for refused in [
            MixSettings {
                write_size: Size(6 << 10),
                ..settings.clone()
            },
            MixSettings {
                write_blocksize: Size(1 << 10),
                ..settings.clone()
            },
            MixSettings {
                stop_when_full: true,
                ..settings.clone()
            },
        ] {
            let err = refused.plan(&ctx).unwrap_err();
            assert!(err.to_string().contains("verify"), "{err}");
        }
    }

    /// The fileset's names and the results of a short mix named by `names` with `seed`.
    fn fileset_names(
        names: NameScheme,
        file_list: FileListMode,
        seed: u64,
    ) -> (Vec<String>, Vec<ResultRecord>) {
        let dir = tempfile::tempdir().unwrap();
        let settings = MixSettings {
            threads: 2,
            duration: TimeSpan::from_ns(50_000_000),
            num_files: 60,
            num_dirs: 3,
            max_filesize: Size(8 << 10),
            names,
            file_list,
            seed: Some(seed),
            ..MixSettings::default()
        };
        let ctx = Context::default();
        let plan = settings.plan(&ctx).unwrap();
        let mut harness = Fileset {
            top: dir.path(),
            phases: 0,
            names: Vec::new(),
        };
        let mut sink = Collect::default();
        let ran = super::run(
            &settings,
            &plan,
            &ctx,
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        assert!(ran.unwrap());
        (harness.names, sink.records)
    }

    /// The fileset's files, and those the mix creates, get fs_mark's names by default (40
    /// bytes, the last 24 upper-case letters and digits), each its own over every list, the
    /// same for the same seed; `sequential` names them as FFSB numbers its files; every result
    /// says which.
    #[test]
    fn files_are_named_as_names_says_and_the_seed_repeats_them() {
        for file_list in [FileListMode::Shared, FileListMode::PerThread] {
            let (names, records) = fileset_names(MixSettings::default().names, file_list, 5);
            assert_eq!(names.len(), 60, "{names:?}");
            let distinct: std::collections::HashSet<&String> = names.iter().collect();
            assert_eq!(distinct.len(), 60);
            for name in &names {
                assert_eq!(name.len(), 40, "{name}");
                assert_eq!(&name[8..16], "~~~~~~~~", "{name}");
                assert!(name[16..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()));
            }
            assert!(records.iter().all(|r| r.attributes["names"] == "random"));
            let again = fileset_names(MixSettings::default().names, file_list, 5).0;
            assert_eq!(again, names, "the same seed, the same names");
        }
        let (names, records) = fileset_names(NameScheme::Sequential, FileListMode::Shared, 5);
        assert!(names.contains(&"f59".to_string()), "{names:?}");
        assert_eq!(records[0].attributes["names"], "sequential");
        // Too few random characters for every number a list can give: refused.
        let err = MixSettings {
            names: "20:6".parse().unwrap(),
            ..MixSettings::default()
        }
        .plan(&Context::default())
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("names: 20:6 has 6 random characters"),
            "{err}"
        );
    }

    #[test]
    fn seed_002s_profile_is_expressible_exactly() {
        let ffsb: MixSettings = serde_json::from_value(serde_json::json!({
            "threads": 128, "duration": "1800s", "num_files": 5000, "num_dirs": 1000,
            "max_filesize": "512k", "min_filesize": "4k",
            "write_size": "4k", "write_blocksize": "4k", "read_blocksize": "4k",
            "create_weight": 1, "write_weight": 1, "readall_weight": 2, "names": "sequential",
        }))
        .unwrap();
        let plan = ffsb.plan(&Context::default()).unwrap();
        assert_eq!(
            (plan.num_files, plan.duration_ns),
            (5000, 1_800_000_000_000)
        );
        let scaled = ffsb
            .plan(&Context {
                scale: 0.01,
                ..Context::default()
            })
            .unwrap();
        assert_eq!(
            (scaled.num_files, scaled.duration_ns),
            (128, 18_000_000_000)
        );
    }
}
