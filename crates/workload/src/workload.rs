//! The workload seam: what every workload is ([`Workload`]), what it is given ([`Context`], a
//! directory, a stop flag) and where its results go ([`Sink`]). The registry in `lib.rs` lists
//! the workloads, one line each; nothing else in fsbench names a workload.

use crate::control::StopFlag;
use crate::error::WorkloadError;
use crate::fileio;
use crate::harness::Harness;
use fsbench_measure::series::{Discard, Keep, Outlet, PhaseSampler, PhaseSpec, SeriesInterval};
use fsbench_model::{CachePolicy, Category, Dim, Direction, Outcome, ResultRecord};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a case adds to a workload's settings: the run's scale and the cache policy the target
/// was prepared with (`drop` asks first reads to start cold, `direct` asks for O_DIRECT).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// Sizes, counts and times are multiplied by it (0 < scale <= 1).
    pub scale: f64,
    pub cache: CachePolicy,
    /// The filesystem was made for this case and is removed after it (a campaign's target,
    /// `--fs`): files left in it cost nothing, and the filesystem check that follows sees them
    /// (the task chain leaves its tree for it, as study 001 checked a full filesystem).
    #[serde(default)]
    pub disposable: bool,
    /// This process's place in a scale-out job (under mpirun), when it is one rank of many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Place>,
    /// How often a timed phase's series are taken (the plan's `interval`, `--interval`).
    #[serde(default)]
    pub interval: SeriesInterval,
}

/// One rank's place in a job of `ranks` processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub rank: u32,
    pub ranks: u32,
}

impl Context {
    /// A scale is above 0 and at most 1.
    pub fn check(&self) -> Result<(), WorkloadError> {
        if self.scale > 0.0 && self.scale <= 1.0 {
            Ok(())
        } else {
            Err(WorkloadError::invalid(
                "scale",
                format!("must be above 0 and at most 1 (got {})", self.scale),
            ))
        }
    }
}

impl Default for Context {
    fn default() -> Context {
        Context {
            scale: 1.0,
            cache: CachePolicy::Warm,
            disposable: false,
            job: None,
            interval: SeriesInterval::Auto,
        }
    }
}

/// Where a running workload's results, warnings and progress go. Called between timed
/// sections, never inside one. What the workload asks of the harness (a cold cache, a phase
/// started with the job's other ranks) goes to its [`Harness`](crate::Harness) instead.
pub trait Sink {
    /// A finished result; `done` of `total` (when known) exist now.
    fn record(&mut self, record: ResultRecord, done: usize, total: Option<usize>);
    /// Something the reader of the results must know (said once per kind).
    fn warning(&mut self, _message: &str) {}
    /// The latest word on progress (a live rate), for a progress line.
    fn status(&mut self, _line: &str) {}
    /// Where a running phase's series go, from the thread that samples it (beside the
    /// workload's threads, which are not stopped to pass them on): nowhere by default.
    fn outlet(&mut self) -> Arc<dyn Outlet> {
        Arc::new(Discard)
    }
}

/// Starts sampling a timed phase of `threads` threads (or clients: `each`) whose results'
/// dimensions say `label`, its series going to `sink`'s outlet; None when the context's
/// interval is `off`. Each thread publishes on its probe ([`PhaseSampler::probe`]); the phase
/// ends with [`PhaseSampler::finish`], after its threads.
pub fn phase_series(
    ctx: &Context,
    sink: &mut dyn Sink,
    label: String,
    each: &'static str,
    threads: usize,
) -> Option<PhaseSampler> {
    if ctx.interval == SeriesInterval::Off {
        return None;
    }
    let spec = PhaseSpec {
        label,
        each,
        threads,
        interval: ctx.interval,
    };
    PhaseSampler::start(spec, sink.outlet())
}

/// Keeps everything in memory (tests, and the child process before it hands results back).
#[derive(Debug, Default)]
pub struct Collect {
    pub records: Vec<ResultRecord>,
    pub warnings: Vec<String>,
    pub statuses: Vec<String>,
    /// The batches of every phase's series.
    pub series: Arc<Keep>,
}

impl Sink for Collect {
    fn record(&mut self, record: ResultRecord, _done: usize, _total: Option<usize>) {
        self.records.push(record);
    }
    fn warning(&mut self, message: &str) {
        self.warnings.push(message.to_string());
    }
    fn status(&mut self, line: &str) {
        self.statuses.push(line.to_string());
    }
    fn outlet(&mut self) -> Arc<dyn Outlet> {
        self.series.clone()
    }
}

/// How a workload run ended: its outcome, why (when not ok), and the seed it used.
#[derive(Debug)]
pub struct End {
    pub outcome: Outcome,
    pub error: Option<WorkloadError>,
    pub seed: Option<u64>,
    /// What the workload left in the directory on purpose (the matrix's `--keep`).
    pub kept: Vec<PathBuf>,
}

impl End {
    pub fn ok(seed: Option<u64>) -> End {
        End {
            outcome: Outcome::Ok,
            error: None,
            seed,
            kept: Vec::new(),
        }
    }

    pub fn interrupted(seed: Option<u64>) -> End {
        End {
            outcome: Outcome::Interrupted,
            error: None,
            seed,
            kept: Vec::new(),
        }
    }

    pub fn failed(error: WorkloadError, seed: Option<u64>) -> End {
        End {
            // A block read back other than written (`--verify`) is its own ending.
            outcome: match error {
                WorkloadError::Corrupt(_) => Outcome::Corrupt,
                _ => Outcome::Failed,
            },
            error: Some(error),
            seed,
            kept: Vec::new(),
        }
    }
}

/// A workload: one settings type that is at once its plan table, its command's flags and its
/// stored request (defaults in its `Default`), and the code that runs it. Field names are plan
/// keys and, in kebab-case, flags; errors name fields ([`WorkloadError::Invalid`]).
pub trait Workload:
    clap::Args
    + Serialize
    + DeserializeOwned
    + Default
    + Clone
    + PartialEq
    + fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// The plan's `kind`, the command's name, the stored kind.
    const KIND: &'static str;
    /// One line for `fsbench --help`.
    const ABOUT: &'static str;
    /// More for `fsbench KIND --help`.
    const LONG_ABOUT: &'static str;
    /// What its figures are ranked among (None: it measures the harness, not a filesystem).
    const CATEGORY: Option<Category>;
    /// Why it cannot run as the ranks of an MPI job, when it cannot (None: it can).
    const NOT_AS_RANKS: Option<&'static str> = None;
    /// The cache policies it honours: every one but `direct` unless it opens its files with
    /// O_DIRECT when the policy is `direct`. A case with another is `unsupported` before it
    /// runs: a result stored under "direct" must have bypassed the cache.
    const CACHE_POLICIES: &'static [CachePolicy] =
        &[CachePolicy::Warm, CachePolicy::Drop, CachePolicy::Remount];
    /// Whether it can run on a bare block device — the baseline of a filesystem's results
    /// (`raw`) — given as its directory: its `preflight` and `run` then take the device path.
    const ON_DEVICE: bool = false;

    /// Validates the settings under a context. No side effects.
    fn check(&self, ctx: &Context) -> Result<(), WorkloadError>;

    /// A rough duration, for `--dry-run` estimates.
    fn estimate_ns(&self, ctx: &Context) -> u64;

    /// What the settings resolve to under `ctx` (the matrix: its cells, phases and skipped
    /// cells), stored with each sample; None when there is nothing beyond the settings.
    fn describe(&self, _ctx: &Context) -> Option<serde_json::Value> {
        None
    }

    /// What the reader of the results must know about how these settings run on this host:
    /// a study's own file or program asked for and missing here, and what runs instead. A
    /// campaign says each once (`fsbench run` prints it with the plan's notes); the samples
    /// say it too, as warnings.
    fn host_notes(&self, _ctx: &Context) -> Vec<String> {
        Vec::new()
    }

    /// Whether, in a scale-out job, every rank works in the job's one directory (a file they
    /// share) rather than in a directory of its own.
    fn shares_dir(&self) -> bool {
        false
    }

    /// Whether the run leaves files on purpose (then it cannot run on a filesystem fsbench
    /// removes afterwards).
    fn keeps_files(&self) -> bool {
        false
    }

    /// Whether the run starts programs (tools, a user's command): they are ended with the
    /// sample, and a host that cannot keep them in a cgroup is told once.
    fn runs_programs(&self) -> bool {
        false
    }

    /// Whether the run needs its filesystem on the recording device (power cuts: every write
    /// logged, [`crate::Harness::record`]); for durability only, never a speed phase.
    fn records_writes(&self) -> bool {
        false
    }

    /// With [`Workload::records_writes`]: the recording device's image size, when the
    /// workload sets it (None: the plan's).
    fn recorded_bytes(&self) -> Option<u64> {
        None
    }

    /// Checks the directory before anything is measured (exists, writable, what the workload
    /// itself needs of it). Leaves nothing behind. Room is not its to check: see
    /// [`Workload::footprint`].
    fn preflight(&self, _ctx: &Context, dir: &Path) -> Result<(), WorkloadError> {
        check_directory(dir)
    }

    /// The most room the run takes at once under `ctx` (its files, their inodes), checked
    /// against the directory's free space before it starts ([`check_room`]: on a filesystem
    /// fsbench made, an aged one included, or in a directory); None when it takes little.
    fn footprint(&self, _ctx: &Context) -> Option<Footprint> {
        None
    }

    /// Measures in `dir`, handing each result to `sink` as it exists and asking `harness` for
    /// what it needs of the host (a cold cache) and of the job (phases started together).
    /// Never panics on I/O; stops between steps when `stop` is requested.
    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End;

    /// How one run's results lay out as grids on the terminal (the matrix: iozone's report
    /// blocks); None prints the generic table.
    fn grid() -> Option<GridView> {
        None
    }

    /// The figures a one-run table shows on the terminal, in order (the exports have every
    /// one); empty: every figure that has a direction.
    fn table_columns() -> &'static [&'static str] {
        &[]
    }

    /// The filesystem check that followed a run on a disposable filesystem (its command and
    /// duration) as a result of the workload's own, for workloads that report it with theirs
    /// (the task chain, as study 001 timed fsck after its tasks); None for the others.
    fn check_result(_command: &str, _elapsed_ns: u64) -> Option<ResultRecord> {
        None
    }

    /// The step the figure `metric` is counted in, in its unit, when that is coarser than the
    /// nanosecond clock (the task's CPU times, split between user and system by scheduler
    /// ticks): a figure of a few steps says nothing of its size, and the reports call it not
    /// measurable rather than take its ratio. None for a figure timed by the clock.
    fn resolution(_metric: &str) -> Option<f64> {
        None
    }
}

/// The room a run takes, and what to say when it does not fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Footprint {
    pub bytes: u64,
    /// Inodes (files and directories) it makes; 0 when few.
    pub inodes: u64,
    /// What takes the room (`the largest test file`, `the tree`).
    pub what: String,
    /// The setting to change (its flag or key is named in the message).
    pub setting: &'static str,
    /// How to make it fit (`lower the file sizes`).
    pub advice: String,
}

/// Whether `footprint` fits the free space and inodes of the filesystem of `dir`; the error
/// says what needs how much, what there is, and what to change.
pub fn check_room(footprint: &Footprint, dir: &Path) -> Result<(), WorkloadError> {
    let (free, inodes) = fileio::free_space(dir).unwrap_or((u64::MAX, u64::MAX));
    if footprint.bytes <= free && footprint.inodes <= inodes {
        return Ok(());
    }
    let need = if footprint.inodes > inodes && footprint.bytes == 0 {
        format!(
            "{} inodes; {} has {} inodes free",
            footprint.inodes,
            dir.display(),
            inodes
        )
    } else if footprint.inodes > inodes {
        format!(
            "{} and {} inodes; {} has {} and {} inodes free",
            fsbench_measure::units::human_bytes(footprint.bytes),
            footprint.inodes,
            dir.display(),
            fsbench_measure::units::human_bytes(free),
            inodes
        )
    } else {
        format!(
            "{}; {} has {} free",
            fsbench_measure::units::human_bytes(footprint.bytes),
            dir.display(),
            fsbench_measure::units::human_bytes(free)
        )
    };
    Err(WorkloadError::invalid(
        footprint.setting,
        format!(
            "{} would take about {need}: {}",
            footprint.what, footprint.advice
        ),
    ))
}

/// A terminal layout for one run of a workload: one block per value of `blocks`, rows and
/// columns by two more dimensions, each cell one measurement in one of `units`. Plain data:
/// the report layer draws it.
#[derive(Debug, Clone, Copy)]
pub struct GridView {
    pub blocks: Dim,
    pub rows: Dim,
    pub columns: Dim,
    /// The title of a block from its value ("write" -> "Writer report").
    pub block_title: fn(&str) -> &'static str,
    /// The units a user may choose (`--unit`); the first is the default.
    pub units: &'static [GridUnit],
    /// What a value is ("each value is the rate over all passes of a cell").
    pub note: &'static str,
    /// A measurement (a ratio) shown after each value as ±N%, and what it is.
    pub spread: Option<(&'static str, &'static str)>,
    /// A line under each block from its records ("passes per cell: 1..9; cache: warm").
    pub footer: fn(&[&ResultRecord]) -> String,
}

/// One unit of a grid: the measurement shown, divided by `divisor`, with its label.
#[derive(Debug, Clone, Copy)]
pub struct GridUnit {
    /// The `--unit` value.
    pub key: &'static str,
    pub metric: &'static str,
    pub divisor: f64,
    pub label: &'static str,
    pub direction: Direction,
    /// Digits after the point (values under 10 get two more).
    pub decimals: usize,
}

/// Something to do with a workload's settings whatever its type (the registry dispatches).
pub trait Apply {
    type Out;
    fn apply<W: Workload>(self, settings: &W) -> Self::Out;
}

/// Checks that `dir` exists, is a directory and is writable; creates and removes one probe file.
pub fn check_directory(dir: &Path) -> Result<(), WorkloadError> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(WorkloadError::Directory(format!(
                "the directory {shown} does not exist: create it or pass another directory"
            )))
        }
        Err(e) => {
            return Err(WorkloadError::Directory(format!(
                "the directory {shown} cannot be examined ({e}): pass another directory"
            )))
        }
        Ok(m) if !m.is_dir() => {
            return Err(WorkloadError::Directory(format!(
                "{shown} is not a directory: pass a directory"
            )))
        }
        Ok(_) => {}
    }
    // A probe under a name no file has: an existing one (a user's) is passed over, never
    // mistaken for an unwritable directory, and never removed.
    let (probe, path) = fileio::create_new_file(dir, ".fsbench-probe", "", false).map_err(|e| {
        let why = match e.raw_os_error() {
            Some(libc::EROFS) => "it is on a read-only filesystem".to_string(),
            Some(libc::EACCES) | Some(libc::EPERM) => {
                "this user may not create files in it".to_string()
            }
            _ => e.to_string(),
        };
        WorkloadError::Directory(format!(
            "the directory {shown} is not writable ({why}): pass a writable directory"
        ))
    })?;
    drop(probe);
    let _ = std::fs::remove_file(&path);
    Ok(())
}

/// Generates [`WorkloadSettings`](crate::WorkloadSettings), the one enum of every workload's
/// settings (serde-tagged by `kind`), with what needs its variants: its constructors (from a
/// plan's table, from parsed flags, the defaults) and the registry's one dispatch, by value
/// ([`Apply`]) and by kind ([`ApplyKind`]). Everything else asked of a workload is a visitor
/// below, through that dispatch. Invoked once, in `lib.rs`.
macro_rules! workloads {
    ($($variant:ident($settings:ty)),+ $(,)?) => {
        /// Any workload's settings, tagged by its kind: a plan's workload, a stored case's
        /// workload, the job handed to the worker process.
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "kind", rename_all = "kebab-case")]
        pub enum WorkloadSettings {
            $($variant($settings)),+
        }

        /// Every workload's kind, in registration order.
        pub const KINDS: &[&str] = &[$(<$settings as $crate::workload::Workload>::KIND),+];

        impl WorkloadSettings {
            /// Runs `action` on the settings, whatever their type.
            pub fn apply<A: $crate::workload::Apply>(&self, action: A) -> A::Out {
                match self {
                    $(WorkloadSettings::$variant(settings) => action.apply(settings)),+
                }
            }

            /// Runs `action` on the settings type of the workload of `kind` (what a stored
            /// case or a command line names); None for an unknown kind.
            pub fn apply_kind<A: $crate::workload::ApplyKind>(kind: &str, action: A) -> Option<A::Out> {
                $(if kind == <$settings as $crate::workload::Workload>::KIND {
                    return Some(action.apply::<$settings>());
                })+
                None
            }

            /// The settings of `kind` from a plan's table (without `kind`); None for an unknown
            /// kind.
            pub fn from_kind<'de, D: serde::Deserializer<'de>>(
                kind: &str,
                table: D,
            ) -> Option<Result<WorkloadSettings, D::Error>> {
                $(if kind == <$settings as $crate::workload::Workload>::KIND {
                    return Some(<$settings as serde::Deserialize>::deserialize(table).map(WorkloadSettings::$variant));
                })+
                None
            }

            /// The settings of the command `kind` from its parsed flags; None for an unknown kind.
            pub fn from_matches(
                kind: &str,
                matches: &clap::ArgMatches,
            ) -> Option<Result<WorkloadSettings, clap::Error>> {
                $(if kind == <$settings as $crate::workload::Workload>::KIND {
                    return Some(<$settings as clap::FromArgMatches>::from_arg_matches(matches).map(WorkloadSettings::$variant));
                })+
                None
            }

            /// Every workload's default settings (for guard tests and docs).
            pub fn defaults() -> Vec<WorkloadSettings> {
                vec![$(WorkloadSettings::$variant(<$settings>::default())),+]
            }
        }
    };
}
pub(crate) use workloads;

/// Something to do with a workload's type, given its kind alone (a stored case has its kind,
/// not its settings: reports ask by kind): its constants and its associated functions.
pub trait ApplyKind {
    type Out;
    fn apply<W: Workload>(self) -> Self::Out;
}

/// Any question of a workload's type ([`ApplyKind`]) asked of its settings.
pub struct OfType<A>(pub A);
impl<A: ApplyKind> Apply for OfType<A> {
    type Out = A::Out;
    fn apply<W: Workload>(self, _: &W) -> A::Out {
        self.0.apply::<W>()
    }
}

/// What the registry is asked of every workload, each a question of one workload through
/// its one dispatch.
impl crate::WorkloadSettings {
    pub fn kind(&self) -> &'static str {
        self.apply(OfType(Kind))
    }

    /// One command per workload, its flags from the settings type after the ones `common`
    /// adds (directory, target, exports).
    pub fn commands(common: impl Fn(clap::Command) -> clap::Command) -> Vec<clap::Command> {
        crate::KINDS
            .iter()
            .filter_map(|kind| Self::apply_kind(kind, CommandOf(&common)))
            .collect()
    }

    /// The category the workload of `kind` ranks in; None for one that measures the harness,
    /// or an unknown kind.
    pub fn category_of(kind: &str) -> Option<Category> {
        Self::apply_kind(kind, CategoryOf).flatten()
    }

    /// The grid the results of the workload of `kind` lay out as (the matrix's iozone
    /// blocks); None for one without a grid, or an unknown kind.
    pub fn grid_of(kind: &str) -> Option<GridView> {
        Self::apply_kind(kind, GridOf).flatten()
    }

    /// The figures a table of the workload of `kind` shows, in order; empty for one that
    /// names none (every figure with a direction), or an unknown kind.
    pub fn table_columns_of(kind: &str) -> &'static [&'static str] {
        Self::apply_kind(kind, TableColumnsOf).unwrap_or(&[])
    }

    /// The step the figure `metric` of the workload of `kind` is counted in, when it is
    /// coarser than the clock ([`Workload::resolution`]); None for the others, or an unknown
    /// kind.
    pub fn resolution_of(kind: &str, metric: &str) -> Option<f64> {
        Self::apply_kind(kind, ResolutionOf(metric)).flatten()
    }

    /// Why the workload cannot run as the ranks of an MPI job, when it cannot.
    pub fn not_as_ranks(&self) -> Option<&'static str> {
        self.apply(OfType(NotAsRanks))
    }

    /// Whether the workload can run on a bare block device (the `raw` baseline).
    pub fn on_device(&self) -> bool {
        self.apply(OfType(OnDevice))
    }

    /// Whether the workload honours the cache policy `cache`.
    pub fn honours(&self, cache: CachePolicy) -> bool {
        self.apply(OfType(Honours(cache)))
    }

    /// The grid of the workload's results, if it has one.
    pub fn grid(&self) -> Option<GridView> {
        self.apply(OfType(GridOf))
    }

    /// The figures a one-run table shows on the terminal.
    pub fn table_columns(&self) -> &'static [&'static str] {
        self.apply(OfType(TableColumnsOf))
    }

    /// The filesystem check after a run as a result, for workloads that report it.
    pub fn check_result(&self, command: &str, elapsed_ns: u64) -> Option<ResultRecord> {
        self.apply(OfType(CheckResult {
            command,
            elapsed_ns,
        }))
    }
}

/// A workload's kind.
pub struct Kind;
impl ApplyKind for Kind {
    type Out = &'static str;
    fn apply<W: Workload>(self) -> &'static str {
        W::KIND
    }
}

/// A workload's command, its flags after the ones the closure adds.
pub struct CommandOf<'a, F>(pub &'a F);
impl<F: Fn(clap::Command) -> clap::Command> ApplyKind for CommandOf<'_, F> {
    type Out = clap::Command;
    fn apply<W: Workload>(self) -> clap::Command {
        let command = clap::Command::new(W::KIND);
        // After the settings' flags: clap takes the settings type's doc comment for the
        // command's help otherwise.
        W::augment_args((self.0)(command))
            .about(W::ABOUT)
            .long_about(W::LONG_ABOUT)
    }
}

/// What a workload's figures rank among.
pub struct CategoryOf;
impl ApplyKind for CategoryOf {
    type Out = Option<Category>;
    fn apply<W: Workload>(self) -> Self::Out {
        W::CATEGORY
    }
}

/// The grid a workload's results lay out as.
pub struct GridOf;
impl ApplyKind for GridOf {
    type Out = Option<GridView>;
    fn apply<W: Workload>(self) -> Self::Out {
        W::grid()
    }
}

/// The figures a workload's table shows.
pub struct TableColumnsOf;
impl ApplyKind for TableColumnsOf {
    type Out = &'static [&'static str];
    fn apply<W: Workload>(self) -> Self::Out {
        W::table_columns()
    }
}

/// The step a workload's figure is counted in.
pub struct ResolutionOf<'a>(pub &'a str);
impl ApplyKind for ResolutionOf<'_> {
    type Out = Option<f64>;
    fn apply<W: Workload>(self) -> Self::Out {
        W::resolution(self.0)
    }
}

/// Why a workload cannot run as ranks.
pub struct NotAsRanks;
impl ApplyKind for NotAsRanks {
    type Out = Option<&'static str>;
    fn apply<W: Workload>(self) -> Self::Out {
        W::NOT_AS_RANKS
    }
}

/// Whether a workload runs on a bare device.
pub struct OnDevice;
impl ApplyKind for OnDevice {
    type Out = bool;
    fn apply<W: Workload>(self) -> bool {
        W::ON_DEVICE
    }
}

/// Whether a workload honours a cache policy.
pub struct Honours(pub CachePolicy);
impl ApplyKind for Honours {
    type Out = bool;
    fn apply<W: Workload>(self) -> bool {
        W::CACHE_POLICIES.contains(&self.0)
    }
}

/// The filesystem check after a run, as a workload reports it.
pub struct CheckResult<'a> {
    pub command: &'a str,
    pub elapsed_ns: u64,
}
impl ApplyKind for CheckResult<'_> {
    type Out = Option<ResultRecord>;
    fn apply<W: Workload>(self) -> Self::Out {
        W::check_result(self.command, self.elapsed_ns)
    }
}

/// Validates any workload's settings.
pub struct Check<'a>(pub &'a Context);
impl Apply for Check<'_> {
    type Out = Result<(), WorkloadError>;
    fn apply<W: Workload>(self, settings: &W) -> Self::Out {
        settings.check(self.0)
    }
}

/// Estimates any workload's duration.
pub struct Estimate<'a>(pub &'a Context);
impl Apply for Estimate<'_> {
    type Out = u64;
    fn apply<W: Workload>(self, settings: &W) -> u64 {
        settings.estimate_ns(self.0)
    }
}

/// What any workload's settings resolve to.
pub struct Describe<'a>(pub &'a Context);
impl Apply for Describe<'_> {
    type Out = Option<serde_json::Value>;
    fn apply<W: Workload>(self, settings: &W) -> Self::Out {
        settings.describe(self.0)
    }
}

/// What any workload's settings make of this host.
pub struct HostNotes<'a>(pub &'a Context);
impl Apply for HostNotes<'_> {
    type Out = Vec<String>;
    fn apply<W: Workload>(self, settings: &W) -> Vec<String> {
        settings.host_notes(self.0)
    }
}

/// Whether any workload keeps files.
pub struct KeepsFiles;
impl Apply for KeepsFiles {
    type Out = bool;
    fn apply<W: Workload>(self, settings: &W) -> bool {
        settings.keeps_files()
    }
}

/// Whether any workload starts programs.
pub struct RunsPrograms;
impl Apply for RunsPrograms {
    type Out = bool;
    fn apply<W: Workload>(self, settings: &W) -> bool {
        settings.runs_programs()
    }
}

/// Whether a workload needs the recording device ([`Workload::records_writes`]).
pub struct RecordsWrites;
impl Apply for RecordsWrites {
    type Out = bool;
    fn apply<W: Workload>(self, settings: &W) -> bool {
        settings.records_writes()
    }
}

/// The recording device's image size a workload sets ([`Workload::recorded_bytes`]).
pub struct RecordedBytes;
impl Apply for RecordedBytes {
    type Out = Option<u64>;
    fn apply<W: Workload>(self, settings: &W) -> Option<u64> {
        settings.recorded_bytes()
    }
}

/// Whether any workload's ranks share the job's directory.
pub struct SharesDir;
impl Apply for SharesDir {
    type Out = bool;
    fn apply<W: Workload>(self, settings: &W) -> bool {
        settings.shares_dir()
    }
}

/// Checks the directory for any workload: its own checks, then whether it fits.
pub struct Preflight<'a>(pub &'a Context, pub &'a Path);
impl Apply for Preflight<'_> {
    type Out = Result<(), WorkloadError>;
    fn apply<W: Workload>(self, settings: &W) -> Self::Out {
        settings.preflight(self.0, self.1)?;
        Room(self.0, self.1).apply(settings)
    }
}

/// Whether any workload fits the free space of a directory ([`check_room`]).
pub struct Room<'a>(pub &'a Context, pub &'a Path);
impl Apply for Room<'_> {
    type Out = Result<(), WorkloadError>;
    fn apply<W: Workload>(self, settings: &W) -> Self::Out {
        settings
            .footprint(self.0)
            .map_or(Ok(()), |f| check_room(&f, self.1))
    }
}

/// Runs any workload.
pub struct Execute<'a> {
    pub ctx: &'a Context,
    pub dir: &'a Path,
    pub stop: &'a StopFlag,
    pub sink: &'a mut dyn Sink,
    pub harness: &'a mut dyn Harness,
}
impl Apply for Execute<'_> {
    type Out = End;
    fn apply<W: Workload>(self, settings: &W) -> End {
        settings.run(self.ctx, self.dir, self.stop, self.sink, self.harness)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What does not fit is refused with what it needs, what there is and what to change;
    /// what fits passes; every workload that makes files says how much room it takes.
    #[test]
    fn room_is_checked_against_the_free_space() {
        let dir = tempfile::tempdir().unwrap();
        let (free, _) = fileio::free_space(dir.path()).unwrap();
        let need = |bytes| Footprint {
            bytes,
            inodes: 0,
            what: "the largest test file".into(),
            setting: "file_sizes",
            advice: "lower the file sizes".into(),
        };
        check_room(&need(4096), dir.path()).unwrap();
        let e = check_room(&need(free + (1 << 30)), dir.path()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("the largest test file would take about")
                && text.contains("free: lower the file sizes"),
            "{text}"
        );
        assert!(matches!(
            e,
            WorkloadError::Invalid {
                field: "file_sizes",
                ..
            }
        ));
        let ctx = Context::default();
        for settings in crate::WorkloadSettings::defaults() {
            let kind = settings.kind();
            let takes = settings.apply(FootprintOf(&ctx));
            let makes_files = ["matrix", "mix", "metadata", "task"].contains(&kind);
            assert_eq!(takes.is_some(), makes_files, "{kind}");
        }
    }

    struct FootprintOf<'a>(&'a Context);
    impl Apply for FootprintOf<'_> {
        type Out = Option<Footprint>;
        fn apply<W: Workload>(self, settings: &W) -> Self::Out {
            settings.footprint(self.0)
        }
    }
}
