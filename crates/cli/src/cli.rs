//! The command-line interface: every subcommand and flag, with its documentation. Values that
//! need validation arrive as text and are checked by the layer that owns them, so every mistake
//! ends in one line that says what to change.

use clap::{Args, Parser, Subcommand};
use fsbench_testbed::target::DEFAULT_WORK_DIR;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "fsbench",
    version,
    about = "Which filesystem, with which options, is fastest for your workload on your hardware",
    long_about = "fsbench measures filesystems honestly and repeatably: native workloads that time \
the filesystem and not the harness, every figure with its unit, sample count and spread."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Throughput matrix (iozone -a): every file size x record size x test, in one directory.
    ///
    /// Each phase of a cell repeats its pass (a write pass on a fresh file, a rewrite on a
    /// written one, ...) until --min-time of measured time is reached, so small cells are not
    /// quantised by the clock. Data written is incompressible unless --data says otherwise.
    Matrix(Box<MatrixArgs>),

    /// Run a campaign: every case of a plan (or of the built-in quick profile), repeated,
    /// each sample stored in the results database as it finishes, then a summary.
    ///
    /// Without --plan, the quick profile runs: every filesystem this host supports, default
    /// options, a small throughput matrix, 3 repetitions, on loop-device images (a few minutes).
    Run(RunArgs),

    /// List the runs stored in the results database.
    Runs(RunsArgs),

    /// Write one stored run as JSON (with per-metric summaries) or tidy CSV.
    Export(ExportArgs),

    /// Which filesystems this host can prepare, and exactly why not where it cannot.
    Targets(TargetsArgs),

    /// Undo what killed fsbench runs left behind: mounts, loop devices, zfs pools, images.
    ///
    /// Only what fsbench recorded in its state files is touched, and only after checking it is
    /// still what fsbench made. Runs still alive are left alone.
    Cleanup(CleanupArgs),

    /// Internal: runs one case's workload in a directory (the campaign's child process).
    #[command(hide = true)]
    CaseWorker(CaseWorkerArgs),
}

/// Where the results database is.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// The results database (SQLite; created with its directory when missing).
    #[arg(
        long,
        value_name = "FILE",
        env = "FSBENCH_DB",
        default_value = "/var/lib/fsbench/results.db"
    )]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Plan file (TOML; docs/plans.md, examples/plans/). Without it, --profile runs.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub plan: Option<PathBuf>,

    /// Built-in profile to run without --plan: quick.
    #[arg(long, value_name = "NAME", default_value = "quick", conflicts_with_all = ["plan", "resume"])]
    pub profile: String,

    /// List the cases with their stable ids and an estimate of the time they take, then stop.
    #[arg(long)]
    pub dry_run: bool,

    /// Finish only the missing samples of a stored run (after Ctrl-C, a kill or a reboot).
    /// The run keeps the scale it started with.
    #[arg(long, value_name = "RUN")]
    pub resume: Option<i64>,

    /// Shrink the campaign for a quick try: every workload's file sizes and minimum times, and
    /// the image size (never below the largest minimum of the plan's filesystems), are multiplied by F (0 < F <= 1).
    /// Stored with the run as the plan's `scale` key; repetitions and timeouts do not change.
    #[arg(long, value_name = "F", env = "FSBENCH_SCALE")]
    pub scale: Option<f64>,

    #[command(flatten)]
    pub db: DbArgs,

    /// Where images, mount points and state files go (overrides the plan's work_dir).
    #[arg(long, value_name = "DIR", env = "FSBENCH_WORK_DIR")]
    pub work_dir: Option<PathBuf>,

    /// No progress and no summary (errors only).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run's number (see `fsbench runs`).
    pub run: i64,

    /// Write JSON (schema fsbench.run) to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE", required_unless_present = "csv")]
    pub json: Option<PathBuf>,

    /// Write tidy CSV (one row per sample and metric) to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct CaseWorkerArgs {
    #[arg(long)]
    pub job: PathBuf,
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    /// Where to leave the latest progress line (replaced, never appended).
    #[arg(long)]
    pub status: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TargetsArgs {
    /// Also write the table as JSON to FILE ("-" for standard output, instead of the table).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub work: WorkDirArgs,
}

/// Where images, mount points and state files go.
#[derive(Debug, Args)]
pub struct WorkDirArgs {
    /// Where images, mount points and state files go (and where `fsbench cleanup` looks).
    #[arg(
        long,
        value_name = "DIR",
        env = "FSBENCH_WORK_DIR",
        default_value = DEFAULT_WORK_DIR
    )]
    pub work_dir: PathBuf,
}

/// Where a workload runs: a directory, or a filesystem fsbench prepares, uses and takes down.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Prepare this filesystem and run in it (ext2, ext3, ext4, xfs, btrfs, f2fs, jfs, reiserfs,
    /// nilfs2, zfs, tmpfs; see `fsbench targets`). Needs root. Instead of --dir.
    #[arg(long, value_name = "FS", conflicts_with = "dir")]
    pub fs: Option<String>,

    /// mkfs options after fsbench's defaults, as one string ("-I 256 -O ^has_journal"); for
    /// zfs, `zpool create` options ("-o ashift=12").
    #[arg(
        long,
        value_name = "OPTIONS",
        requires = "fs",
        allow_hyphen_values = true
    )]
    pub mkfs_options: Option<String>,

    /// Mount options ("noatime,data=writeback"); for zfs, dataset properties
    /// ("atime=off,compression=lz4"). A rejected option ends as "unsupported" (exit 3).
    #[arg(long, value_name = "OPTIONS", requires = "fs")]
    pub mount_options: Option<String>,

    /// I/O scheduler of the device (none, mq-deadline, kyber, bfq; legacy noop, deadline, cfq
    /// are mapped); the previous one is restored afterwards.
    #[arg(long, value_name = "NAME", requires = "fs")]
    pub scheduler: Option<String>,

    /// Cache state before the workload: warm (as left), drop (sync + drop_caches, and the
    /// matrix's first reads evict the test file), remount (umount + mount), direct (O_DIRECT).
    #[arg(long, value_name = "POLICY", default_value = "warm", requires = "fs")]
    pub cache: String,

    /// The device: image[:SIZE] (a sparse image on a loop device; default size: a quarter of the
    /// work directory's free space, 1-8 GiB) or a block device (/dev/X, with --destroy-data-on).
    #[arg(long, value_name = "DEVICE", default_value = "image", requires = "fs")]
    pub device: String,

    /// Allow destroying everything on the block device given to --device: name it again, with
    /// :TYPE to acknowledge an existing signature (/dev/sdb:ext4).
    #[arg(long, value_name = "DEVICE[:TYPE]", requires = "fs")]
    pub destroy_data_on: Option<String>,

    /// Attach images with buffered I/O on the backing file (default: direct I/O, so the page
    /// cache does not hold the data twice).
    #[arg(long, requires = "fs")]
    pub loop_buffered: bool,

    /// Skip the read-only filesystem check after the run.
    #[arg(long, requires = "fs")]
    pub no_fsck: bool,

    #[command(flatten)]
    pub work: WorkDirArgs,
}

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Directory to run in; its filesystem is what is measured. Default: a new temporary
    /// directory under $TMPDIR (or /tmp), removed afterwards.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Tests to run, comma-separated or repeated, by name or iozone number: write (0),
    /// read (1), random (2), backward (3), record-rewrite (4), stride (5), fwrite (6),
    /// fread (7), random-mix (8), pwrite (9), pread (10). Default: all.
    #[arg(long, short = 'i', value_name = "TESTS", value_delimiter = ',')]
    pub tests: Vec<String>,

    /// File sizes: a power-of-two range FROM..TO or a list A,B (powers of two KiB; k, m, g
    /// suffixes are binary).
    #[arg(long, value_name = "SIZES", default_value = "4k..64m")]
    pub file_sizes: String,

    /// Record (I/O) sizes: a power-of-two range FROM..TO or a list A,B. Records larger than a
    /// file are not measured for that file.
    #[arg(long, value_name = "SIZES", default_value = "4k..16m")]
    pub record_sizes: String,

    /// Minimum measured time per phase of a cell: passes repeat until it is reached
    /// (ns, us, ms, s; 0 = one pass).
    #[arg(long, value_name = "DURATION", default_value = "20ms")]
    pub min_time: String,

    /// Maximum passes per phase of a cell (default: no limit, or 64 with --purge-cpu-cache).
    #[arg(long, value_name = "N")]
    pub max_passes: Option<u64>,

    /// Include fsync in the timing of write phases (iozone -e).
    #[arg(long, short = 'e')]
    pub include_fsync: bool,

    /// Include close in the timing of every phase (iozone -c).
    #[arg(long, short = 'c')]
    pub include_close: bool,

    /// Bypass the page cache with O_DIRECT (iozone -I); fwrite/fread stay buffered, as in iozone.
    #[arg(long, short = 'I')]
    pub direct: bool,

    /// Overwrite a buffer larger than the CPU caches before each pass (iozone -p).
    #[arg(long, short = 'p')]
    pub purge_cpu_cache: bool,

    /// Size of the buffer --purge-cpu-cache overwrites (default: twice a core's L2 cache).
    #[arg(long, value_name = "SIZE")]
    pub purge_size: Option<String>,

    /// Evict the test file from the page cache (fdatasync + POSIX_FADV_DONTNEED, verified with
    /// mincore) before every pass of a test's first read phase; results record the state reached.
    #[arg(long)]
    pub drop_caches: bool,

    /// Data written: random (incompressible, every 4 KiB block unique), zero, or
    /// compressible:PERCENT (that share of each 4 KiB block is zeroes).
    #[arg(long, value_name = "KIND", default_value = "random")]
    pub data: String,

    /// Seed for data and random offsets (default: a fresh one per run; recorded in the JSON).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Skip records under 64k for files of 32m and more, as iozone -a does (listed as skipped).
    #[arg(long)]
    pub iozone_skip: bool,

    /// Stride of the stride-read test, in records (iozone -j).
    #[arg(long, value_name = "RECORDS", default_value_t = 17)]
    pub stride: u64,

    /// Share of reads in the random-mix test, percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 50)]
    pub mix_read_percent: u8,

    /// Leave the last test file in the directory (for inspection; not with --fs, whose
    /// filesystem is removed afterwards).
    #[arg(long, conflicts_with = "fs")]
    pub keep: bool,

    /// Shrink the matrix for a quick try: file sizes and --min-time are multiplied by F (0 < F
    /// <= 1; files rounded up to a power of two, never below their smallest record); record
    /// sizes never change. Recorded with the results.
    #[arg(long, value_name = "F", env = "FSBENCH_SCALE", default_value_t = 1.0)]
    pub scale: f64,

    /// Write the results as JSON (schema: docs/results-schema.md); "-" for standard output.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the results as tidy CSV (one row per phase x file size x record size x metric);
    /// "-" for standard output.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Unit of the terminal grid: kib (KiB/s), mib (MiB/s), ops (ops/s, iozone -O),
    /// us (mean µs per op, iozone -N), p99 (99th percentile µs per op).
    #[arg(long, value_name = "UNIT", default_value = "kib")]
    pub unit: String,

    /// Leave out the ±CV% spread after each grid value.
    #[arg(long)]
    pub no_spread: bool,

    /// Print no grid and no progress (exports and errors only).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
