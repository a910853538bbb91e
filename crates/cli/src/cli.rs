//! The command-line interface: every subcommand and flag, with its documentation. Values that
//! need validation arrive as text and are checked by the layer that owns them, so every mistake
//! ends in one line that says what to change.

use clap::error::ErrorKind;
use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use fsbench_testbed::target::DEFAULT_WORK_DIR;
use fsbench_workload::sweep::SweepSpec;
use fsbench_workload::{WorkloadSettings, KINDS};
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
    /// Every workload of the registry is a command of its own (`fsbench matrix`, ...): its
    /// flags are its settings plus the common [`RunOptions`].
    #[command(flatten)]
    Workload(Box<WorkloadCommand>),

    /// Run a campaign: every case of a plan (or of the built-in quick profile), repeated,
    /// each sample stored in the results database as it finishes, then a summary.
    ///
    /// Without --plan, the quick profile runs: every filesystem fsbench knows (those this host
    /// lacks listed as unsupported), default options, one short workload of each family
    /// (streaming with a cold read, metadata loops, fsync'd small files, a 4-client load, an
    /// untar), 5 interleaved rounds, on loop-device images (about 4 minutes).
    Run(RunArgs),

    /// List the built-in profiles (the five studies and the quick main job), one line each;
    /// with a NAME, print that profile's plan file (to copy and edit).
    Profiles(ProfilesArgs),

    /// List the runs stored in the results database.
    Runs(RunsArgs),

    /// Write one stored run as JSON (with its summary tables), tidy CSV, or its samples' series
    /// (per interval: the workload's phases and the host beside them) as long-form CSV.
    Export(ExportArgs),

    /// Write the report of stored runs: a self-contained HTML page with charts, a Markdown
    /// summary, an XLSX workbook. Without a file flag, the Markdown goes to standard output.
    ///
    /// Every figure is a mean with its 95 % confidence interval; each discipline's winner is
    /// compared with the others (paired by round within a run), differences that are not
    /// significant are ties; rankings give points per placement (docs/metrics.md).
    Report(ReportArgs),

    /// Compare stored runs (the same plan on two kernels): per case and figure, the ratio of
    /// each later run to the first with its 95 % interval and whether the change is real.
    Compare(CompareArgs),

    /// Which filesystems this host can prepare, and exactly why not where it cannot.
    Targets(TargetsArgs),

    /// Undo what killed fsbench runs left behind: mounts, loop devices, zfs pools, images.
    ///
    /// Only what fsbench recorded in its state files is touched, and only after checking it is
    /// still what fsbench made. Runs still alive are left alone.
    Cleanup(CleanupArgs),

    /// Replay a power cut kept as a crash bundle: list its crash states, or write one to an
    /// image to mount and check (docs/recording-device.md).
    ///
    /// Without --state, the bundle's filesystem, options, log and states (index, what it is,
    /// the mark it promises). With --state N --to IMAGE, state N written to the new file IMAGE
    /// (sparse) as the power cut made it, and how to mount and check it. Root is not needed
    /// to write the image, only to mount it.
    CrashState(CrashStateArgs),

    /// What a recorded trace (`fsbench record`) holds: its calls one by one (`show`), or
    /// counted by operation with bytes, threads and files (`stats`); docs/trace-format.md.
    ///
    /// A truncated, corrupt or newer trace is refused with the reason.
    Trace(TraceArgs),

    /// Record every file-system call of a command's process tree (or of a running process's,
    /// with --pid) into a trace, to replay on every configuration (docs/recording.md).
    ///
    /// Captured in the kernel with eBPF (needs root): opens, reads, writes, syncs, metadata
    /// calls, forks and execs, with thread, time, duration, arguments and return value; paths
    /// relative to --root, calls outside it counted and left out; the tree found under the
    /// root (names, types, sizes; never contents). A recording that lost a call is refused.
    /// The command's exit status is fsbench's.
    Record(RecordArgs),

    /// Internal: runs one case's workload in a directory (the campaign's child process).
    #[command(hide = true)]
    CaseWorker(CaseWorkerArgs),

    /// Internal: the guard of a process that prepares targets; undoes what that process's
    /// ledger lists if it dies without tearing down (its end of standard input closes).
    #[command(hide = true)]
    Guard(GuardArgs),
}

/// Where the results database is.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// The results database (SQLite; created with its directory when missing). Default:
    /// /var/lib/fsbench/results.db for root, else $XDG_DATA_HOME/fsbench/results.db
    /// (~/.local/share/fsbench/results.db).
    #[arg(long = "db", value_name = "FILE", env = "FSBENCH_DB")]
    pub given: Option<PathBuf>,
}

impl DbArgs {
    /// The database to use: the one given, or the default for this user.
    pub fn path(&self) -> PathBuf {
        if let Some(path) = &self.given {
            return path.clone();
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return PathBuf::from("/var/lib/fsbench/results.db");
        }
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from("."));
        data.join("fsbench/results.db")
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Plan file (TOML; docs/plans.md, examples/plans/). Without it, --profile runs.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub plan: Option<PathBuf>,

    /// Built-in profile to run without --plan (`fsbench profiles` lists them).
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
    /// the image size (never below the largest minimum of the plan's filesystems, nor 4 GiB), are multiplied by F (0 < F <= 1).
    /// Stored with the run as the plan's `scale` key; repetitions and timeouts do not change.
    #[arg(long, value_name = "F", env = "FSBENCH_SCALE")]
    pub scale: Option<f64>,

    /// Run every case N times instead of the plan's `repetitions` (a quick try of a study: 1;
    /// adaptive repetitions stop at no fewer). Stored with the run, so `--resume` keeps it.
    #[arg(long, value_name = "N", conflicts_with = "resume")]
    pub repetitions: Option<u32>,

    #[command(flatten)]
    pub db: DbArgs,

    /// Where images, mount points and state files go (overrides the plan's work_dir).
    #[arg(long, value_name = "DIR", env = "FSBENCH_WORK_DIR")]
    pub work_dir: Option<PathBuf>,

    /// Run the plan's workloads in this existing directory (a shared or network filesystem)
    /// instead of on filesystems fsbench makes: every configuration is the directory's
    /// filesystem. Stored with the run as the plan's `dir` key.
    #[arg(long, value_name = "PATH", conflicts_with = "resume")]
    pub dir: Option<PathBuf>,

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

    /// Write JSON (schema fsbench.run, every sample's series included) to FILE ("-" for
    /// standard output).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["csv", "series"])]
    pub json: Option<PathBuf>,

    /// Write tidy CSV (one row per sample and metric) to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write every sample's series as long-form CSV (one row per point: sample, series, time,
    /// duration, value, unit) to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,

    /// Only this sample's series (its id: `sample_id` in the series CSV, `id` in the JSON).
    #[arg(long, value_name = "ID")]
    pub sample: Option<i64>,

    #[command(flatten)]
    pub db: DbArgs,
}

/// How the standings are computed (report and compare).
#[derive(Debug, Args)]
pub struct StandingsArgs {
    /// The configuration the composite and the relative charts are measured against, by its
    /// label as the report shows it (default: the first configuration; relative charts: the
    /// best of each discipline).
    #[arg(long, value_name = "CONFIG")]
    pub baseline: Option<String>,

    /// The weight of a category in the overall ranking: throughput, metadata or tasks
    /// (repeatable; default 1 each): --weight metadata=2.
    #[arg(long, value_name = "CATEGORY=W")]
    pub weight: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The runs' numbers (see `fsbench runs`); several are reported side by side.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<i64>,

    /// Write the HTML report to FILE (one file, charts inline, opens from disk).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write the Markdown summary to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Write the XLSX workbook to FILE (iozone's sheets per test, a summary, a tidy sheet).
    #[arg(long, value_name = "FILE")]
    pub xlsx: Option<PathBuf>,

    /// Which repetitions the HTML report draws over time (the rate with its latency
    /// percentiles, the host's memory, devices and CPUs beneath): representative (one per
    /// workload and configuration, the median by its main figures), all, or none.
    #[arg(long, value_name = "WHICH", default_value = "representative")]
    pub series: fsbench_report::over_time::SeriesChoice,

    #[command(flatten)]
    pub standings: StandingsArgs,

    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The runs: the first is the reference, each later one is compared with it.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<i64>,

    /// Exit 1 when a figure got significantly worse by more than PCT percent (for CI).
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,

    /// Also write the HTML report of the runs, with the comparison, to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct GuardArgs {
    /// The state directory of the guarded process's targets.
    #[arg(long)]
    pub state_dir: PathBuf,
    /// The guarded process.
    #[arg(long)]
    pub pid: u32,
}

#[derive(Debug, Args)]
pub struct CaseWorkerArgs {
    /// The directory the job runs in (the job itself comes on standard input).
    #[arg(long)]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ProfilesArgs {
    /// A profile whose plan file to print.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
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

    /// Also remove the cached aged images (`images/` in the work directory), which are
    /// otherwise kept for the runs that use them again.
    #[arg(long)]
    pub aged_images: bool,
}

#[derive(Debug, Args)]
pub struct CrashStateArgs {
    /// The crash bundle: the directory a kept power cut was written to.
    #[arg(value_name = "BUNDLE_DIR")]
    pub bundle: PathBuf,

    /// The crash state to write (its index in the list); needs --to.
    #[arg(long, value_name = "N", requires = "to")]
    pub state: Option<usize>,

    /// Where to write the state: a new image file (sparse; an existing file is refused);
    /// needs --state.
    #[arg(long, value_name = "IMAGE", requires = "state")]
    pub to: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// The trace's header, the tree the application found and every call in order: when it
    /// began, process/thread, how long it took, what it returned, the call with its arguments.
    Show(TraceShowArgs),
    /// Calls, errors and time by operation; bytes read and written; threads, processes and
    /// files; the initial tree; calls left out (outside the root, lost, not replayable).
    Stats(TraceStatsArgs),
}

#[derive(Debug, Args)]
pub struct TraceShowArgs {
    /// The trace file.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Show only the first N calls.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// The trace's lines as JSON (uncompressed; one object per line, as in the file).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TraceStatsArgs {
    /// The trace file.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// The figures as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The tree the application works in: paths are recorded relative to it, calls outside it
    /// are counted and left out. Default: the current directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,

    /// Record this running process and its descendants (from now until it exits, or Ctrl-C)
    /// instead of starting a command.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,

    /// Hash every name in the trace (sizes, types and structure kept; the command line, root
    /// and host name dropped).
    #[arg(long)]
    pub anonymise: bool,

    /// The kernel's buffer for calls not yet read (K, M or G; rounded up to a power of two).
    /// A recording that fills it is refused: record again with a larger one.
    #[arg(long, value_name = "SIZE", default_value = "64M")]
    pub buffer: String,

    /// The trace to write (it appears only when the recording is complete).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,

    /// The command to record, after `--`.
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "pid")]
    pub command: Vec<std::ffi::OsString>,
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
/// The flags after `--fs` apply to the filesystem it prepares: without `--fs` they are refused
/// (`cmd::workload`; `--cache` takes warm and drop in a directory).
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Prepare this filesystem and run in it (ext2, ext3, ext4, xfs, btrfs, f2fs, jfs, reiserfs,
    /// nilfs2, zfs, tmpfs; see `fsbench targets`). Needs root. Instead of --dir.
    #[arg(long, value_name = "FS", conflicts_with = "dir")]
    pub fs: Option<String>,

    /// mkfs options after fsbench's defaults, as one string ("-I 256 -O ^has_journal"); for
    /// zfs, `zpool create` options ("-o ashift=12").
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub mkfs_options: Option<String>,

    /// Mount options ("noatime,data=writeback"); for zfs, dataset properties
    /// ("atime=off,compression=lz4"). A rejected option ends as "unsupported" (exit 3).
    #[arg(long, value_name = "OPTIONS")]
    pub mount_options: Option<String>,

    /// I/O scheduler of the device (none, mq-deadline, kyber, bfq; legacy noop, deadline, cfq
    /// are mapped); the previous one is restored afterwards.
    #[arg(long, value_name = "NAME")]
    pub scheduler: Option<String>,

    /// Cache state before the workload: warm (as left), drop or cold (sync + drop_caches, and
    /// the matrix's first reads evict the test file), remount (umount + mount), direct
    /// (O_DIRECT). In a directory (without --fs): warm or drop (as root).
    #[arg(long, value_name = "POLICY", default_value = "warm")]
    pub cache: String,

    /// The device: image[:SIZE] (a sparse image on a loop device; default size: a quarter of the
    /// work directory's free space, 1-8 GiB; each member's with --array) or a block device
    /// (/dev/X, with --destroy-data-on; an array's members: /dev/X,/dev/Y).
    #[arg(long, value_name = "DEVICE", default_value = "image")]
    pub device: String,

    /// Allow destroying everything on the block device given to --device: name it again, with
    /// :TYPE to acknowledge an existing signature (/dev/sdb:ext4); several, comma-separated.
    #[arg(long, value_name = "DEVICE[:TYPE]")]
    pub destroy_data_on: Option<String>,

    /// Several devices as one: raid0:N, raid1:N, raid10:N laid out by the filesystem itself
    /// (btrfs -d, [,metadata=PROFILE] for -m; a striped or mirrored zfs pool), or md-LEVEL:N
    /// with [,chunk=SIZE] for md RAID under any filesystem. Each member is an image of
    /// --device's size, or one of the devices --device lists (/dev/X,/dev/Y).
    #[arg(long, value_name = "LAYOUT")]
    pub array: Option<String>,

    /// Attach images with buffered I/O on the backing file (default: direct I/O, so the page
    /// cache does not hold the data twice).
    #[arg(long)]
    pub loop_buffered: bool,

    /// Skip the read-only filesystem check after the run.
    #[arg(long)]
    pub no_fsck: bool,

    /// Age the filesystem first: KEY=VALUE,... of fill (percent of the filesystem, default
    /// 70), sizes (measured, or SIZE:WEIGHT/...), depth, fanout, churn (rounds), fragmentation
    /// (extents per file to churn to), seed; a bare number is the fill (--age 70). The aged
    /// image is made once per filesystem, mkfs options, image size and spec, kept in the work
    /// directory, and copied for each run; needs --device image:SIZE (docs/targets.md).
    #[arg(long, value_name = "SPEC")]
    pub age: Option<String>,

    #[command(flatten)]
    pub work: WorkDirArgs,
}

/// A workload command: the workload's settings and the options every workload command has.
#[derive(Debug)]
pub struct WorkloadCommand {
    pub settings: WorkloadSettings,
    pub options: RunOptions,
}

impl FromArgMatches for WorkloadCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let Some((kind, sub)) = matches.subcommand() else {
            return Err(clap::Error::new(ErrorKind::MissingSubcommand));
        };
        let settings = WorkloadSettings::from_matches(kind, sub)
            .ok_or_else(|| clap::Error::new(ErrorKind::InvalidSubcommand))??;
        let options = RunOptions::from_arg_matches(sub)?;
        Ok(WorkloadCommand { settings, options })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = WorkloadCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for WorkloadCommand {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        command.subcommands(WorkloadSettings::commands(RunOptions::augment_args))
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        WorkloadCommand::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        KINDS.contains(&name)
    }
}

/// What every workload command takes besides the workload's own settings: where it runs
/// (a directory, or a filesystem fsbench prepares), how it is scaled and where results go.
#[derive(Debug, Args)]
pub struct RunOptions {
    /// Directory to run in; its filesystem is what is measured. Default: a new temporary
    /// directory under $TMPDIR (or /tmp), removed afterwards.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub db: DbArgs,

    /// Do not store the run (by default it is stored like a campaign's, for `fsbench runs`,
    /// `export` and comparison); --db and FSBENCH_DB are then not used.
    #[arg(long)]
    pub no_store: bool,

    /// Shrink the workload for a quick try: sizes, counts and minimum times are multiplied by F
    /// (0 < F <= 1; matrix files rounded up to a power of two, never below their smallest
    /// record; record sizes never change). Recorded with the results.
    #[arg(long, value_name = "F", env = "FSBENCH_SCALE", default_value_t = 1.0)]
    pub scale: f64,

    /// How often the phases' series (operations, bytes, latency percentiles per interval) and
    /// the host monitors (disks, memory, CPU, pressure) are taken: auto (100ms; 1s for a phase
    /// past a minute), off, or a duration of at least 10ms. Stored with the run as the plan's
    /// `interval` key.
    #[arg(long, value_name = "INTERVAL", default_value = "auto")]
    pub interval: fsbench_measure::series::SeriesInterval,

    /// Run the workload at each value of one of its numeric settings and report the curve, its
    /// peak and its knee: SETTING=V1,V2,... (e.g. --sweep threads=1,2,4,8).
    #[arg(long, value_name = "SETTING=VALUES")]
    pub sweep: Option<SweepSpec>,

    /// Write the run as JSON, as `fsbench export RUN --json` does (schema fsbench.run,
    /// docs/results-schema.md); "-" for standard output.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the run as tidy CSV (one row per result x measurement), as `fsbench export RUN
    /// --csv` does; "-" for standard output.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Unit of the terminal grid, for workloads that have one (the matrix: kib (KiB/s, the
    /// default), mib (MiB/s), ops (ops/s, iozone -O), us (mean µs per op, iozone -N), p99
    /// (99th percentile µs per op)).
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,

    /// Leave out the ±CV% spread after each grid value.
    #[arg(long)]
    pub no_spread: bool,

    /// Print no results and no progress (exports and errors only).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
