//! Real-world tasks (studies 000 and 001), timed as `time` times them — real, user and system
//! time including children, with the `sync` after each inside the total and on its own — and
//! run as one ordered chain on one filesystem: copy a big file in, untar a source tree, build
//! it, read every file cold, remove it, or run any command of the user's. The data is made by
//! fsbench from a seed ([`tree`]: a tree modelled on a kernel's, with a C project in it), or a
//! real tarball or tree given with `--source`. Each task runs with the real tool (`tar`, `cp`,
//! `rm`, `make`) or natively ([`native`]: the filesystem alone, no decompressor on the clock).

mod beneath;
pub mod kernel;
pub mod native;
pub mod project;
pub mod readback;
pub mod timing;
pub mod tree;

use crate::fileio;
use crate::harness::Harness;
use crate::workload::{check_directory, Context, End, Footprint, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::units::{human_bytes, human_duration, Size};
use fsbench_model::{Direction, MetricDef, Outcome, ResultRecord, Unit};
use readback::{Found, Verified, Written};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use timing::{Times, ToolEnd};
use tree::{Compression, TreeModel};

/// One task of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskName {
    Copy,
    Untar,
    Remove,
    ReadAll,
    Build,
    Exec,
}

impl TaskName {
    pub const ALL: [TaskName; 6] = [
        TaskName::Copy,
        TaskName::Untar,
        TaskName::Remove,
        TaskName::ReadAll,
        TaskName::Build,
        TaskName::Exec,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TaskName::Copy => "copy",
            TaskName::Untar => "untar",
            TaskName::Remove => "remove",
            TaskName::ReadAll => "read-all",
            TaskName::Build => "build",
            TaskName::Exec => "exec",
        }
    }

    /// Whether `--verify` compares what it wrote with its source (copy, untar).
    fn verified(self) -> bool {
        matches!(self, TaskName::Copy | TaskName::Untar)
    }

    /// Whether it may remove or change what an earlier step wrote: `--verify` reads that back
    /// before it runs (untimed).
    fn changes_what_was_written(self) -> bool {
        matches!(self, TaskName::Remove | TaskName::Build | TaskName::Exec)
    }

    /// Whether it works on the extracted tree (made untimed first when no untar came before).
    fn needs_tree(self) -> bool {
        matches!(
            self,
            TaskName::Untar | TaskName::Remove | TaskName::ReadAll | TaskName::Build
        )
    }
}

/// The tasks of a chain, in order (`copy,untar,remove`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskChain(pub Vec<TaskName>);

impl fmt::Display for TaskChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|t| t.name()).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for TaskChain {
    type Err = String;
    fn from_str(s: &str) -> Result<TaskChain, String> {
        let mut chain = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let task = TaskName::ALL
                .into_iter()
                .find(|t| t.name() == part)
                .ok_or_else(|| {
                    format!(
                        "unknown task '{part}': use copy, untar, remove, read-all, build or exec (a chain: untar,build,read-all)"
                    )
                })?;
            chain.push(task);
        }
        if chain.is_empty() {
            return Err("no task given: name one or a chain (copy,untar,remove)".into());
        }
        Ok(TaskChain(chain))
    }
}

fsbench_model::text_serde!(TaskChain);

/// How a task is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// The real tool, as the studies typed it (tar, cp, rm).
    #[default]
    Tool,
    /// In fsbench's own process: the filesystem alone.
    Native,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Tool => "tool",
            Method::Native => "native",
        })
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Method, String> {
        match s {
            "tool" => Ok(Method::Tool),
            "native" => Ok(Method::Native),
            _ => Err(format!("unknown method '{s}': use tool or native")),
        }
    }
}

fsbench_model::text_serde!(Method);

/// The big file's size: `auto` or a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BigFile {
    /// 1.9 GB (study 000's ISO), at most 40 % of the free space where it is made and copied
    /// to and 25 % of the memory available.
    #[default]
    Auto,
    Bytes(u64),
}

/// Study 000 copied a 1.9 GB ISO.
pub const SEED_BIG_FILE: u64 = 1_900_000_000;

/// CPU time of `make defconfig && make` of the Linux 6.1 source, for the dry run's estimate
/// only (not measured here: some 80 CPU-minutes, divided among the jobs that can run).
const KERNEL_BUILD_CPU_NS: u64 = 80 * 60 * 1_000_000_000;

impl fmt::Display for BigFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BigFile::Auto => f.write_str("auto"),
            BigFile::Bytes(b) => write!(f, "{}", Size(*b)),
        }
    }
}

impl FromStr for BigFile {
    type Err = String;
    fn from_str(s: &str) -> Result<BigFile, String> {
        if s == "auto" {
            return Ok(BigFile::Auto);
        }
        match s.parse::<Size>() {
            Ok(Size(0)) => Err("the big file must not be empty: give a size or auto".into()),
            Ok(Size(b)) => Ok(BigFile::Bytes(b)),
            Err(e) => Err(format!("{e}; or auto")),
        }
    }
}

fsbench_model::text_serde!(BigFile);

/// Real-world tasks, timed as real/user/sys with their sync, one chain per run.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskSettings {
    /// The tasks, in order, as one chain on one filesystem: copy, untar, remove, read-all,
    /// build, exec (study 000: copy,untar,remove; study 001: untar,build,read-all).
    #[arg(value_name = "TASKS", default_value_t = TaskSettings::default().tasks)]
    pub tasks: TaskChain,

    /// tool: the real programs (tar, cp, rm); native: fsbench's own system calls, the
    /// filesystem alone (build and exec always run their programs).
    #[arg(long, value_name = "METHOD", default_value_t = TaskSettings::default().method)]
    pub method: Method,

    /// A real tarball (tar, .gz, .bz2, .xz) or directory tree to use instead of the generated
    /// one (a kernel source to build with `make defconfig`).
    #[arg(long, value_name = "PATH")]
    pub source: Option<PathBuf>,

    /// true: the tree is Debian's kernel source where it is installed
    /// (/usr/src/linux-source-*.tar.xz, package linux-source-6.1), recompressed once (untimed)
    /// to --compression and kept in the data directory; at scale 1 only. Where it is not
    /// installed, and below scale 1, the generated tree (--tree) instead, and the run says so.
    #[arg(long, value_name = "BOOL", default_value_t = TaskSettings::default().linux_source, action = clap::ArgAction::Set)]
    pub linux_source: bool,

    /// true: the tarball is copied onto the filesystem under test (untimed, not synced) and
    /// untarred from there, as study 001's `cp linux.tar.bz2 .`.
    #[arg(long, value_name = "BOOL", default_value_t = TaskSettings::default().copy_tarball, action = clap::ArgAction::Set)]
    pub copy_tarball: bool,

    /// The tree to generate: linux-6.1 (78,579 files, 1.3 GB) or qt-4.6.0 (30,786 files, as
    /// study 000 removed). Scaled by the run's scale.
    #[arg(long, value_name = "MODEL", default_value_t = TaskSettings::default().tree)]
    pub tree: TreeModel,

    /// The share of the model generated (its files, directories, bytes and symlinks), before
    /// the run's scale: 0.02 is a 1,572-file tree of the kernel's shape (0 < F <= 1).
    #[arg(long, value_name = "F", default_value_t = TaskSettings::default().tree_fraction)]
    pub tree_fraction: f64,

    /// How the generated tarball is compressed: none, gzip, bzip2 (as the studies' `tar xjf`)
    /// or xz.
    #[arg(long, value_name = "FORMAT", default_value_t = TaskSettings::default().compression)]
    pub compression: Compression,

    /// Size of the file `copy` copies (incompressible): a size, or auto (1.9 GB as study 000,
    /// at most 40 % of the free space and 25 % of the available memory). Scaled by the run's
    /// scale.
    #[arg(long, value_name = "SIZE", default_value_t = TaskSettings::default().big_file)]
    pub big_file: BigFile,

    /// Translation units of the C project in the generated tree (what `build` compiles).
    /// Scaled by the run's scale (at least 8).
    #[arg(long, value_name = "N", default_value_t = TaskSettings::default().build_units)]
    pub build_units: u64,

    /// Parallel jobs of `make -jN` (0: one per CPU).
    #[arg(long, value_name = "N", default_value_t = TaskSettings::default().jobs)]
    pub jobs: u64,

    /// The make target that configures before the build (the kernel's defconfig; timed apart).
    #[arg(long, value_name = "TARGET", default_value_t = TaskSettings::default().config)]
    pub config: String,

    /// The shell command `exec` times (sh -c, in the run's directory; $FSBENCH_DIR is that
    /// directory, $FSBENCH_TREE the extracted tree if any).
    #[arg(long, value_name = "CMD", default_value_t)]
    pub command: String,

    /// A shell command run before `exec`'s command, untimed.
    #[arg(long, value_name = "CMD", default_value_t)]
    pub setup: String,

    /// A shell command run after `exec`'s command, untimed.
    #[arg(long, value_name = "CMD", default_value_t)]
    pub teardown: String,

    /// Sync the filesystem after each task (inside its real time, and reported on its own), as
    /// the studies' `&& sync`.
    #[arg(long, value_name = "BOOL", default_value_t = TaskSettings::default().sync, action = clap::ArgAction::Set)]
    pub sync: bool,

    /// Seed of the generated data (fixed by default, so every configuration gets the same
    /// tree and file).
    #[arg(long, value_name = "N", default_value_t = TaskSettings::default().seed)]
    pub seed: u64,

    /// Where generated data is made and kept (the tarball is reused by later runs; the big
    /// file is removed after the copy). Default: /var/cache/fsbench for root, else
    /// ~/.cache/fsbench. Put it on another filesystem than the one measured.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Verify what the chain wrote: untimed, after the timed steps (and before a remove, build
    /// or exec that could remove or change it), the cache is made cold (a filesystem fsbench
    /// made is remounted) and every file a copy or an untar left is read back and compared
    /// with its source: the big file with its seed's bytes, each extracted entry with the
    /// archive's (bytes, size, type, symlink target, hard link). A difference ends the run
    /// `corrupt`, naming the file, the first differing byte, and what was expected and found.
    /// What build and exec write is not verified (the results say so).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
}

impl Default for TaskSettings {
    fn default() -> TaskSettings {
        TaskSettings {
            tasks: TaskChain(vec![TaskName::Copy, TaskName::Untar, TaskName::Remove]),
            method: Method::Tool,
            source: None,
            linux_source: false,
            copy_tarball: false,
            tree: TreeModel::default(),
            tree_fraction: 1.0,
            compression: Compression::Bzip2,
            big_file: BigFile::Auto,
            build_units: 400,
            jobs: 0,
            config: "defconfig".into(),
            command: String::new(),
            setup: String::new(),
            teardown: String::new(),
            sync: true,
            seed: 1,
            data_dir: None,
            verify: false,
        }
    }
}

/// Real (wall) time of a task, its sync included: the main figure, as the studies' tables.
pub const REAL: MetricDef = MetricDef::new("real", Unit::Nanos, Direction::Lower).main();
/// How finely the kernel splits CPU time between user and system: by the scheduler tick that
/// falls in each (rusage scales the precise total by the ticks' split), at most 10 ms (a tick
/// at HZ=100, the coarsest Linux configures). A task of a few ticks has user and sys figures of
/// 0 or a whole tick.
pub const CPU_TICK_NS: f64 = 10e6;
/// User CPU time, children included.
pub const USER: MetricDef = MetricDef::new("user", Unit::Nanos, Direction::Lower);
/// System CPU time, children included.
pub const SYS: MetricDef = MetricDef::new("sys", Unit::Nanos, Direction::Lower);
/// The sync after the task, on its own (also inside `real`).
pub const SYNC: MetricDef = MetricDef::new("sync", Unit::Nanos, Direction::Lower);
/// Bytes copied, extracted or read per second of real time.
pub const RATE: MetricDef = MetricDef::new("rate", Unit::BytesPerSec, Direction::Higher);
pub const BYTES: MetricDef = MetricDef::new("bytes", Unit::Bytes, Direction::None);
pub const FILES: MetricDef = MetricDef::new("files", Unit::Count, Direction::None);

/// A failed step: how the run ends (failed or unsupported) and why.
struct StepError {
    outcome: Outcome,
    message: String,
}

impl StepError {
    fn failed(message: impl Into<String>) -> StepError {
        StepError {
            outcome: Outcome::Failed,
            message: message.into(),
        }
    }

    fn unsupported(message: impl Into<String>) -> StepError {
        StepError {
            outcome: Outcome::Unsupported,
            message: message.into(),
        }
    }

    fn io(action: impl fmt::Display, path: &Path, e: std::io::Error) -> StepError {
        StepError::failed(WorkloadError::io(action, path, e).to_string())
    }
}

impl StepError {
    /// A native task's failure on a name in `dir` (shown as the task names it).
    fn native(f: native::Failed, dir: &Path) -> StepError {
        StepError::failed(
            WorkloadError::io_in(f.action, dir, Path::new(&f.name), f.error).to_string(),
        )
    }
}

/// What one timed step measured.
struct Measured {
    times: Times,
    files: Option<u64>,
    bytes: Option<u64>,
    attributes: serde_json::Map<String, serde_json::Value>,
}

impl Measured {
    fn new(times: Times) -> Measured {
        Measured {
            times,
            files: None,
            bytes: None,
            attributes: serde_json::Map::new(),
        }
    }

    fn note(mut self, key: &str, value: impl Into<serde_json::Value>) -> Measured {
        self.attributes.insert(key.into(), value.into());
        self
    }
}

/// Makes a program's absence a clear, unsupported end.
fn require(program: &str, package: &str, why: &str) -> Result<(), StepError> {
    let found = std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths)
            .any(|dir| std::fs::metadata(dir.join(program)).is_ok_and(|m| m.is_file()))
    });
    if found {
        Ok(())
    } else {
        Err(StepError::unsupported(format!(
            "{program} is not installed ({why}): install it (apt-get install {package}){}",
            match program {
                "make" | "cc" => "",
                "flex" | "bison" | "bc" => " or scripts/install-deps.sh --studies",
                _ => " or use --method native",
            }
        )))
    }
}

/// The scaled figures of a run: the tree model and the number of build units.
fn scaled_tree(settings: &TaskSettings, ctx: &Context) -> (tree::Model, u64) {
    let model = tree::scaled(&settings.tree.0, settings.tree_fraction * ctx.scale);
    let units = ((settings.build_units as f64 * ctx.scale).round() as u64).max(8);
    (model, units)
}

fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(u64::MAX, |kib| kib * 1024)
}

fn device_of(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.dev())
}

/// Why a `--source` directory with a mount point at `mount` inside is refused.
fn mount_in_source(mount: &Path, source: &Path) -> String {
    format!(
        "{} is a mount point inside {} (another filesystem or a bind mount): a source tree is \
         packed without crossing mounts, since one there (of the data directory, say) would be \
         packed into its own output until the disk is full; unmount it, or pass a source \
         without mounts",
        mount.display(),
        source.display()
    )
}

/// `path` with its symlinks resolved: canonicalize(3) of the part that exists, the rest (not
/// made yet) appended as it is.
fn canonical_as_far_as_it_exists(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                };
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Opens a tarball for reading without waiting on it: O_NONBLOCK, so a FIFO put in its place
/// after [`TaskSettings::check_source`] looked cannot block, and anything but a regular
/// file is refused. `follow`: a symlink at `path` is followed (a path the user or a package
/// gave); fsbench's own tarballs (in the data directory, or copied onto the target) are
/// opened with O_NOFOLLOW.
fn open_tarball(path: &Path, follow: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file: pass a tarball or a directory",
        ));
    }
    Ok(file)
}

/// The default place for generated data.
fn default_data_dir() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/cache/fsbench");
    }
    match std::env::var_os("XDG_CACHE_HOME").or_else(|| {
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").into_os_string())
    }) {
        Some(base) => PathBuf::from(base).join("fsbench"),
        None => std::env::temp_dir().join("fsbench-cache"),
    }
}

/// What tree a run with `linux_source` untars.
#[derive(Debug, Clone, PartialEq)]
enum KernelChoice {
    /// `linux_source` is off (or a `source` is given): nothing to say.
    Off,
    /// The installed kernel source, at scale 1.
    Installed(kernel::Installed),
    /// Not installed here: the generated tree.
    Missing,
    /// Installed, but the run's scale is below 1: the generated tree, scaled.
    Scaled(kernel::Installed),
}

impl TaskSettings {
    fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(default_data_dir)
    }

    /// Whether the run untars Debian's kernel source, and if not, why.
    fn kernel(&self, ctx: &Context) -> KernelChoice {
        self.kernel_of(ctx, kernel::find)
    }

    /// [`TaskSettings::kernel`] with the kernel source `find` finds.
    fn kernel_of(
        &self,
        ctx: &Context,
        find: impl FnOnce() -> Option<kernel::Installed>,
    ) -> KernelChoice {
        if !self.linux_source
            || self.source.is_some()
            || !self.tasks.0.iter().any(|t| t.needs_tree())
        {
            return KernelChoice::Off;
        }
        match find() {
            None => KernelChoice::Missing,
            Some(k) if ctx.scale < 1.0 => KernelChoice::Scaled(k),
            Some(k) => KernelChoice::Installed(k),
        }
    }

    /// What the tasks untar and build instead of Debian's kernel source, said once by a
    /// campaign and as a warning of each sample: nothing when the kernel is used (the results'
    /// `source` names it) or not asked for.
    fn kernel_notes(&self, ctx: &Context) -> Vec<String> {
        self.notes_for(self.kernel(ctx), ctx)
    }

    fn notes_for(&self, choice: KernelChoice, ctx: &Context) -> Vec<String> {
        if matches!(choice, KernelChoice::Off | KernelChoice::Installed(_)) {
            return Vec::new();
        }
        let (model, _) = scaled_tree(self, ctx);
        let builds = self.tasks.0.contains(&TaskName::Build);
        let instead = if builds {
            format!(
                "the generated tree shaped like {} ({} files) and its C project stand",
                model.name, model.files
            )
        } else {
            format!(
                "the generated tree shaped like {} ({} files) stands",
                model.name, model.files
            )
        };
        let what = if builds {
            "untarred and built"
        } else {
            "untarred"
        };
        vec![match choice {
            KernelChoice::Scaled(k) => format!(
                "at scale {} {instead} in for Debian's kernel source ({}), which is {what} at scale 1 only",
                ctx.scale,
                k.path.display()
            ),
            _ => format!(
                "Debian's kernel source is not installed ({}/linux-source-*.tar.xz): {instead} in for it; install it with `apt-get install {}` (or scripts/install-deps.sh --studies)",
                kernel::DIR,
                kernel::PACKAGE
            ),
        }]
    }

    /// Checks `--source` before anything is opened or written: it exists and is a regular file
    /// or a directory, as stat(2) sees it (a symlink to either is used as what it points to;
    /// a FIFO would block open(2) for ever, a device or socket is no archive); a directory
    /// holds neither the data directory nor `dir`, the run's, or packing it would pack the
    /// run's own output (the data directory: until the disk is full).
    fn check_source(&self, dir: &Path) -> Result<(), WorkloadError> {
        use std::os::unix::fs::FileTypeExt;
        let Some(source) = &self.source else {
            return Ok(());
        };
        let shown = source.display();
        let kind = match std::fs::metadata(source) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(WorkloadError::invalid(
                    "source",
                    format!("{shown} does not exist: pass a tarball or a directory"),
                ))
            }
            Err(e) => {
                return Err(WorkloadError::invalid(
                    "source",
                    format!("{shown} cannot be examined ({e}): pass a tarball or a directory"),
                ))
            }
            Ok(m) if m.is_file() => return Ok(()),
            Ok(m) if m.is_dir() => None,
            Ok(m) => Some(match m.file_type() {
                t if t.is_fifo() => "a FIFO",
                t if t.is_socket() => "a socket",
                t if t.is_block_device() => "a block device",
                t if t.is_char_device() => "a character device",
                _ => "not a regular file",
            }),
        };
        if let Some(kind) = kind {
            return Err(WorkloadError::invalid(
                "source",
                format!("{shown} is {kind}, not a tarball or a directory: pass a tarball or a directory"),
            ));
        }
        let tree = std::fs::canonicalize(source).map_err(|e| {
            WorkloadError::invalid("source", format!("{shown} cannot be resolved ({e})"))
        })?;
        let data = self.data_dir();
        if canonical_as_far_as_it_exists(&data).starts_with(&tree) {
            return Err(WorkloadError::invalid(
                "source",
                format!(
                    "the data directory {} is inside {shown}, so packing {shown} would pack its own output until the disk is full: pass a --data-dir outside it",
                    data.display()
                ),
            ));
        }
        if canonical_as_far_as_it_exists(dir).starts_with(&tree) {
            return Err(WorkloadError::invalid(
                "source",
                format!(
                    "the directory measured, {}, is inside {shown}, so packing {shown} would pack what the run writes: measure a directory outside it",
                    dir.display()
                ),
            ));
        }
        // Refused before anything is written; the packer's walk, which never crosses a mount,
        // stops at one mounted since.
        if let Some(mount) = fsbench_measure::host::mounts_inside(&tree)
            .unwrap_or_default()
            .first()
        {
            return Err(WorkloadError::invalid(
                "source",
                mount_in_source(mount, source),
            ));
        }
        Ok(())
    }

    /// `verify`'s read-back of what copy and untar wrote (a remount, and every byte read).
    fn verify_estimate_ns(&self, ctx: &Context, model: &tree::Model) -> u64 {
        if !self.verify {
            return 0;
        }
        self.tasks
            .0
            .iter()
            .map(|t| match t {
                TaskName::Copy => (SEED_BIG_FILE as f64 * ctx.scale / 500e6 * 1e9) as u64,
                TaskName::Untar => (model.bytes as f64 / 100e6 * 1e9) as u64 + model.files * 20_000,
                _ => 0,
            })
            .sum()
    }

    fn jobs(&self) -> u64 {
        if self.jobs > 0 {
            return self.jobs;
        }
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
    }

    /// The big file's size for `dir`.
    fn big_file_bytes(&self, ctx: &Context, dir: &Path) -> u64 {
        let scaled = |b: u64| ((b as f64 * ctx.scale).round() as u64).max(1);
        match self.big_file {
            BigFile::Bytes(b) => scaled(b),
            BigFile::Auto => {
                let free = |p: &Path| fileio::free_space(p).map_or(u64::MAX, |(b, _)| b);
                let data = self.data_dir();
                let data_free = free(if data.exists() { &data } else { dir });
                scaled(SEED_BIG_FILE)
                    .min(free(dir) / 10 * 4)
                    .min(data_free / 10 * 4)
                    .min(mem_available() / 4)
                    .max(1 << 20)
            }
        }
    }
}

impl Workload for TaskSettings {
    const KIND: &'static str = "task";
    const ABOUT: &'static str =
        "Real-world tasks timed as real/user/sys with their sync: copy, untar, remove, read-all, build, exec";
    const LONG_ABOUT: &'static str = "Real-world tasks (studies 000 and 001), timed as `time` \
times them: real, user and system time including children, with the sync after each task inside \
the real time and on its own. TASKS is one task or a chain run in order on one filesystem: copy \
(a big incompressible file from another filesystem), untar (a source tree), remove (rm -rf), \
read-all (every byte of every file, from a cold cache: the target is remounted), build \
(make defconfig, then make -jN), exec (any command). The tree is generated from a seed (modelled \
on Linux 6.1, with a C project in it) or given with --source. --method tool runs tar, cp and rm; \
native does the same with fsbench's own system calls. On a filesystem fsbench made (--fs, \
campaigns) the tree stays for the filesystem check, which is reported with the tasks.";
    const CATEGORY: Option<fsbench_model::Category> = Some(fsbench_model::Category::Tasks);
    const NOT_AS_RANKS: Option<&'static str> =
        Some("the task workload does not run under mpirun: its tools are not ranks");

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        ctx.check()?;
        if self.tasks.0.contains(&TaskName::Exec) && self.command.trim().is_empty() {
            return Err(WorkloadError::invalid(
                "command",
                "exec needs a command to time: pass --command 'CMD'",
            ));
        }
        if !(self.tree_fraction > 0.0 && self.tree_fraction <= 1.0) {
            return Err(WorkloadError::invalid(
                "tree_fraction",
                format!("must be above 0 and at most 1 (got {})", self.tree_fraction),
            ));
        }
        if self.build_units == 0 || self.build_units > 100_000 {
            return Err(WorkloadError::invalid(
                "build_units",
                format!("must be 1 to 100000 (got {})", self.build_units),
            ));
        }
        if self.jobs > 4096 {
            return Err(WorkloadError::invalid(
                "jobs",
                format!("must be at most 4096 (got {})", self.jobs),
            ));
        }
        if self.config.trim().is_empty() || self.config.starts_with('-') {
            return Err(WorkloadError::invalid(
                "config",
                "must name a make target (defconfig, allnoconfig, ...)",
            ));
        }
        if self.linux_source && self.source.is_some() {
            return Err(WorkloadError::invalid(
                "linux_source",
                "a --source is given too: pass either --source PATH or --linux-source true",
            ));
        }
        Ok(())
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        let (model, units) = scaled_tree(self, ctx);
        let kernel = matches!(self.kernel(ctx), KernelChoice::Installed(_));
        // The kernel source is of the size of the linux-6.1 model, whatever `tree` says.
        let model = if kernel { tree::LINUX_6_1 } else { model };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        self.tasks
            .0
            .iter()
            .map(|t| match t {
                TaskName::Copy => (SEED_BIG_FILE as f64 * ctx.scale / 300e6 * 1e9) as u64,
                TaskName::Untar | TaskName::ReadAll | TaskName::Remove => {
                    (model.bytes as f64 / 100e6 * 1e9) as u64 + model.files * 20_000
                }
                TaskName::Build if kernel => KERNEL_BUILD_CPU_NS / self.jobs().min(cpus).max(1),
                TaskName::Build => units * 40_000_000 / self.jobs().max(1),
                TaskName::Exec => 1_000_000_000,
            })
            .sum::<u64>()
            + self.verify_estimate_ns(ctx, &model)
    }

    fn describe(&self, ctx: &Context) -> Option<serde_json::Value> {
        let (model, units) = scaled_tree(self, ctx);
        let tree = match (&self.source, self.kernel(ctx)) {
            (Some(s), _) => serde_json::json!({ "source": s }),
            (None, KernelChoice::Installed(k)) => serde_json::json!({
                "source": k.path,
                "linux_source": k.name(),
                "compression": self.compression,
            }),
            (None, choice) => {
                let mut generated = serde_json::json!({
                    "model": model.name,
                    "files": model.files,
                    "dirs": model.dirs + 1,
                    "symlinks": model.symlinks,
                    "bytes": model.bytes,
                    "build_units": units,
                });
                if choice != KernelChoice::Off {
                    generated["instead_of_linux_source"] = self.kernel_notes(ctx).join(" ").into();
                }
                generated
            }
        };
        Some(serde_json::json!({
            "tree": tree,
            "jobs": self.jobs(),
            "buffer_placement": crate::placement::Placement::planned(false),
        }))
    }

    fn host_notes(&self, ctx: &Context) -> Vec<String> {
        self.kernel_notes(ctx)
    }

    fn preflight(&self, _ctx: &Context, dir: &Path) -> Result<(), WorkloadError> {
        self.check_source(dir)?;
        check_directory(dir)?;
        let data = self.data_dir();
        // Made where missing, and only used when nobody else can change it or the way to it:
        // the generated tree and tarball there are what the task untars and builds.
        fsbench_measure::trust::ensure_dir(&data).map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!("{} may not hold fsbench's data: {e}", data.display())
            } else {
                format!("cannot create {} ({e})", data.display())
            };
            WorkloadError::invalid("data_dir", format!("{what}; or pass another --data-dir"))
        })?;
        Ok(())
    }

    /// The generated tree (its room and inodes) or a copy's big file when its size is given,
    /// whichever is larger (an automatic big file is sized by the free space itself).
    fn footprint(&self, ctx: &Context) -> Option<Footprint> {
        // The tree is generated unless the task takes a source or the installed kernel's.
        let generated =
            self.source.is_none() && !matches!(self.kernel(ctx), KernelChoice::Installed(_));
        let tree = (self.tasks.0.iter().any(|t| t.needs_tree()) && generated).then(|| {
            let (model, units) = scaled_tree(self, ctx);
            let tree = tree::generate(&model, units, self.seed);
            Footprint {
                bytes: tree.totals.room_bytes(&tree.entries),
                inodes: tree.totals.inodes(),
                what: "the tree".into(),
                setting: "tree",
                advice: "use a bigger target (--size), a smaller --scale or --tree qt-4.6.0".into(),
            }
        });
        let copy = match self.big_file {
            BigFile::Bytes(b) if self.tasks.0.contains(&TaskName::Copy) => Some(Footprint {
                bytes: ((b as f64 * ctx.scale).round() as u64).max(1),
                inodes: 0,
                what: "the copy".into(),
                setting: "big_file",
                advice: "pass a smaller --big-file or use a bigger target".into(),
            }),
            _ => None,
        };
        match (tree, copy) {
            (Some(tree), Some(copy)) if copy.bytes > tree.bytes => Some(copy),
            (tree, copy) => tree.or(copy),
        }
    }

    fn runs_programs(&self) -> bool {
        true
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        if let Err(e) = self.check_source(dir) {
            return End::failed(e, Some(self.seed));
        }
        // The tools run in the run's directory: every path they are given is absolute.
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let dir = absolute.as_path();
        for note in self.kernel_notes(ctx) {
            sink.warning(&note);
        }
        let scratch =
            match fileio::create_unique(dir, "fsbench-task", "", |p| std::fs::create_dir(p)) {
                Ok(((), scratch)) => scratch,
                Err(e) => {
                    return End::failed(
                        WorkloadError::io("create a directory in", dir, e),
                        Some(self.seed),
                    )
                }
            };
        // On a filesystem made for this run, the tree stays for the check that follows.
        let keep = ctx.disposable;
        // The native copy's and read-all's buffers where this CPU copies fastest, timed here.
        // A tree copied or read whole is larger than a core's caches but for the smallest.
        let placement = crate::placement::Placement::for_dir(&scratch, false, u64::MAX);
        let mut chain = Chain {
            settings: self,
            ctx,
            scratch: scratch.clone(),
            placement,
            stop,
            tarball: None,
            tree_dir: None,
            extracted: 0,
            temporary: Vec::new(),
            archive: None,
            written: None,
            unchecked: Vec::new(),
            not_verified: Vec::new(),
            sent: 0,
        };
        let outcome = chain.run(sink, harness);
        for path in chain.temporary.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        if !keep || outcome.is_err() {
            // Never across a mount a step left in it (an `exec` command's bind mount): that
            // stays, with the directories leading to it, and the sample says so.
            match fsbench_measure::walk::remove_tree(&scratch) {
                Err(e) if !e.is_not_found() => {
                    sink.warning(&format!("the chain's directory stays: {e}"));
                }
                _ => {}
            }
        }
        match outcome {
            Ok(true) => End::ok(Some(self.seed)),
            Ok(false) => End::interrupted(Some(self.seed)),
            Err(e) => End {
                outcome: e.outcome,
                // A file read back other than its source (`verify`): `corrupt: ...`.
                error: Some(if e.outcome == Outcome::Corrupt {
                    WorkloadError::Corrupt(e.message)
                } else {
                    WorkloadError::Task(e.message)
                }),
                seed: Some(self.seed),
                kept: Vec::new(),
            },
        }
    }

    fn table_columns() -> &'static [&'static str] {
        &["real", "user", "sys", "sync", "rate"]
    }

    fn resolution(metric: &str) -> Option<f64> {
        [USER.name, SYS.name]
            .contains(&metric)
            .then_some(CPU_TICK_NS)
    }

    fn check_result(command: &str, elapsed_ns: u64) -> Option<ResultRecord> {
        let mut record = ResultRecord {
            measurements: vec![REAL.at(elapsed_ns as f64)],
            ..ResultRecord::default()
        };
        record.dims.step = Some("fsck".into());
        record.dims.operation = Some("tool".into());
        record
            .attributes
            .insert("command".into(), command.to_string().into());
        Some(record)
    }
}

/// The tarball a chain extracts: where, how compressed, and what it holds.
struct Tarball {
    path: PathBuf,
    compression: Compression,
    totals: tree::Totals,
    /// Generated by fsbench (with the model's name), Debian's kernel source or the user's.
    origin: String,
    /// A path given by the user or a package (a symlink there is followed), not one of
    /// fsbench's own files (opened with O_NOFOLLOW).
    given: bool,
    /// Debian's kernel source: its build needs the kernel's tools.
    kernel: bool,
}

/// The state of a chain between its steps.
struct Chain<'a> {
    settings: &'a TaskSettings,
    ctx: &'a Context,
    scratch: PathBuf,
    /// Where the native steps' read buffers sit past a page (`crate::placement`).
    placement: crate::placement::Placement,
    stop: &'a StopFlag,
    tarball: Option<Tarball>,
    /// Where the tree was extracted (holding its top directory), while it exists.
    tree_dir: Option<PathBuf>,
    extracted: u32,
    /// Files made for this run outside the directory (removed at the end).
    temporary: Vec<PathBuf>,
    /// The archive as it was before `copy_tarball` copied it onto the target (and whether it
    /// was given): what `verify` compares the extracted files with.
    archive: Option<(PathBuf, bool)>,
    /// What the last copy or untar wrote, for `verify`.
    written: Option<Written>,
    /// `verify`: what copy and untar steps wrote and was not read back yet, each with the
    /// step's records (sent once checked, saying so).
    unchecked: Vec<Unchecked>,
    /// `verify`: the steps whose output cannot be verified (build, exec).
    not_verified: Vec<&'static str>,
    /// Records sent.
    sent: usize,
}

/// What a step wrote that `verify` has not read back yet, and its records, held until then.
struct Unchecked {
    task: TaskName,
    written: Written,
    records: Vec<ResultRecord>,
}

impl Chain<'_> {
    /// Runs every step in order; false when stopped. A failed step ends the chain; the steps
    /// after it are named as not run. Records held for a check that did not come are sent,
    /// saying so.
    fn run(&mut self, sink: &mut dyn Sink, harness: &mut dyn Harness) -> Result<bool, StepError> {
        let ran = self.run_steps(sink, harness);
        let why = match &ran {
            Ok(_) => "not read back: the chain was stopped before its check",
            Err(_) => "not read back: the chain ended before its check",
        };
        for held in std::mem::take(&mut self.unchecked) {
            for mut record in held.records {
                note_verify(&mut record, false, why);
                self.send(record, sink);
            }
        }
        ran
    }

    fn run_steps(
        &mut self,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<bool, StepError> {
        let tasks = self.settings.tasks.0.clone();
        let total = tasks.len();
        let not_run = |from: usize| -> String {
            let rest: Vec<&str> = tasks[from..].iter().map(|t| t.name()).collect();
            if rest.is_empty() {
                String::new()
            } else {
                format!("; not run: {}", rest.join(", "))
            }
        };
        for (i, task) in tasks.iter().enumerate() {
            if self.stop.is_requested() {
                return Ok(false);
            }
            // Untimed, between the steps: what this one may remove or change is read back first.
            if task.changes_what_was_written() && !self.unchecked.is_empty() {
                match self.verify_written(&format!("before {}", task.name()), sink, harness) {
                    Ok(true) => {}
                    Ok(false) => return Ok(false),
                    Err(mut e) => {
                        e.message.push_str(&not_run(i));
                        return Err(e);
                    }
                }
            }
            sink.status(&format!("{} ({} of {total})", task.name(), i + 1));
            self.written = None;
            let measured = match self.step(*task, sink, harness) {
                Ok(Some(m)) => m,
                Ok(None) => return Ok(false),
                Err(mut e) => {
                    e.message = format!("{} failed: {}", task.name(), e.message);
                    e.message.push_str(&not_run(i + 1));
                    return Err(e);
                }
            };
            self.series(&measured, sink);
            for record in &measured {
                let real = record.measurement("real").map_or(0.0, |m| m.value);
                sink.status(&format!("{} {}", task.name(), human_duration(real as u64)));
            }
            let written = self.written.take().filter(|_| self.settings.verify);
            if let Some(written) = written {
                self.unchecked.push(Unchecked {
                    task: *task,
                    written,
                    records: measured,
                });
                continue;
            }
            if self.settings.verify && !task.verified() {
                let (note, verified) = match task {
                    TaskName::Build | TaskName::Exec => {
                        if !self.not_verified.contains(&task.name()) {
                            self.not_verified.push(task.name());
                        }
                        ("not verified: what it writes cannot be known", Some(false))
                    }
                    _ => ("nothing to verify: it writes no file data", None),
                };
                for mut record in measured {
                    match verified {
                        Some(v) => note_verify(&mut record, v, note),
                        None => {
                            record.attributes.insert("verify".into(), note.into());
                        }
                    }
                    self.send(record, sink);
                }
                continue;
            }
            for record in measured {
                self.send(record, sink);
            }
        }
        if !self.unchecked.is_empty() && !self.verify_written("after the chain", sink, harness)? {
            return Ok(false);
        }
        if self.settings.verify && !self.not_verified.is_empty() {
            sink.warning(&format!(
                "--verify: not verified: {} (what a build or a command writes cannot be known)",
                self.not_verified.join(", ")
            ));
        }
        Ok(true)
    }

    fn send(&mut self, record: ResultRecord, sink: &mut dyn Sink) {
        self.sent += 1;
        sink.record(record, self.sent, None);
    }

    /// `verify`, between timed steps (`when`: before which, or after the chain): the cache made
    /// cold (a filesystem fsbench made is remounted; else every cache dropped, or each file
    /// evicted as it is read), then everything the held copy and untar steps wrote read back
    /// and compared with its source; their records sent, saying what was verified. A
    /// difference ends the chain `corrupt`; false when stopped.
    fn verify_written(
        &mut self,
        when: &str,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<bool, StepError> {
        let steps: Vec<&str> = self.unchecked.iter().map(|u| u.task.name()).collect();
        sink.status(&format!(
            "--verify: reading back what {} wrote",
            steps.join(", ")
        ));
        // Nothing of the chain is open on the target: a filesystem fsbench made can be remounted.
        let (evict, how) = match harness.cold() {
            Ok(how) => (false, format!("once the cache was made cold: {how}")),
            Err(why) => (
                true,
                format!(
                    "each file evicted on its own (fadvise) before it was read, as the cache \
                     could not be made cold ({why}); a filesystem that keeps files in memory \
                     (tmpfs) is checked from there"
                ),
            ),
        };
        let mut total = Verified::default();
        let mut ended: Result<bool, StepError> = Ok(true);
        for held in std::mem::take(&mut self.unchecked) {
            let checked = match ended {
                Ok(true) => readback::check(&held.written, evict, self.stop),
                _ => Ok(None),
            };
            let (ok, note) = match checked {
                Ok(Some(v)) => {
                    total += v;
                    let mut records = held.records;
                    for record in &mut records {
                        note_verify(record, true, &format!("read back as written {when}, {how}"));
                        for (key, n) in [
                            ("verified_files", v.files),
                            ("verified_bytes", v.bytes),
                            ("verified_dirs", v.dirs),
                            ("verified_symlinks", v.symlinks),
                            ("verified_hard_links", v.hard_links),
                            ("not_verified_entries", v.skipped),
                        ] {
                            if n > 0 || key == "verified_files" {
                                record.attributes.insert(key.into(), n.into());
                            }
                        }
                    }
                    for record in records {
                        self.send(record, sink);
                    }
                    continue;
                }
                Ok(None) => {
                    if ended.is_ok() {
                        ended = Ok(false);
                    }
                    (
                        false,
                        "not read back: the chain was stopped before its check".to_string(),
                    )
                }
                Err(Found::Corrupt(c)) => {
                    let note = format!("corrupt: {c}");
                    ended = Err(StepError {
                        outcome: Outcome::Corrupt,
                        message: format!(
                            "{c} (what {} wrote, read back {when}, {how})",
                            held.task.name()
                        ),
                    });
                    (false, note)
                }
                Err(Found::Failed(why)) => {
                    ended = Err(StepError::failed(format!(
                        "--verify could not read back what {} wrote: {why}",
                        held.task.name()
                    )));
                    (false, format!("not read back: {why}"))
                }
            };
            for mut record in held.records {
                note_verify(&mut record, ok, &note);
                self.send(record, sink);
            }
        }
        if matches!(ended, Ok(true)) {
            let skipped = if total.skipped > 0 {
                format!(
                    "; {} entries not compared (devices, FIFOs, names no untar writes, files \
                     not readable here)",
                    total.skipped
                )
            } else {
                String::new()
            };
            let mut counted = vec![format!(
                "{} files ({})",
                total.files,
                human_bytes(total.bytes)
            )];
            for (n, what) in [
                (total.dirs, "directories"),
                (total.symlinks, "symlinks"),
                (total.hard_links, "hard links"),
            ] {
                if n > 0 {
                    counted.push(format!("{n} {what}"));
                }
            }
            sink.warning(&format!(
                "--verify: what {} wrote was read back as written {when}, {how}: {}{skipped}",
                steps.join(", "),
                counted.join(", ")
            ));
        }
        ended
    }

    /// A step's series, one interval per record (a step runs tools: its threads cannot be
    /// sampled): the `real` time that ended now, back to back (build's configure before its
    /// compile), with the files it handled as operations and its bytes.
    fn series(&self, records: &[ResultRecord], sink: &mut dyn Sink) {
        if self.ctx.interval == fsbench_measure::series::SeriesInterval::Off {
            return;
        }
        let outlet = sink.outlet();
        let mut end = fsbench_measure::clock::now_ns();
        let mut batches = Vec::new();
        for record in records.iter().rev() {
            let real = record.measurement(REAL.name).map_or(0, |m| m.value as u64);
            let value =
                |metric: &MetricDef| record.measurement(metric.name).map(|m| m.value as u64);
            let total = fsbench_model::series::Tally {
                ops: value(&FILES).unwrap_or(1),
                bytes: value(&BYTES).unwrap_or(0),
                latency: None,
                finish_ns: 0,
            };
            batches.push(fsbench_model::series::PhaseBatch {
                phase: fsbench_measure::series::next_phase(),
                label: record.dims.label(),
                each: "step".into(),
                interval_ns: real,
                intervals: vec![fsbench_model::series::Interval {
                    start_ns: end.saturating_sub(real),
                    length_ns: real,
                    total,
                    each: Vec::new(),
                }],
            });
            end = end.saturating_sub(real);
        }
        for batch in batches.iter().rev() {
            outlet.send(batch);
        }
    }

    /// One step: its records (build has two: configure and compile), None when stopped.
    fn step(
        &mut self,
        task: TaskName,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<Option<Vec<ResultRecord>>, StepError> {
        if task.needs_tree() && self.tarball.is_none() {
            self.prepare_tarball(sink)?;
        }
        if matches!(task, TaskName::Remove | TaskName::ReadAll | TaskName::Build)
            && self.tree_dir.is_none()
        {
            // Nothing extracted yet: extract untimed.
            if !self.extract_untimed()? {
                return Ok(None);
            }
        }
        let method = match task {
            TaskName::Build | TaskName::Exec => Method::Tool,
            _ => self.settings.method,
        };
        let steps = match task {
            TaskName::Copy => self.copy(method, sink)?.map(|m| vec![("", m)]),
            TaskName::Untar => self.untar(method)?.map(|m| vec![("", m)]),
            TaskName::Remove => self.remove(method)?.map(|m| vec![("", m)]),
            TaskName::ReadAll => self.read_all(method, sink, harness)?.map(|m| vec![("", m)]),
            TaskName::Build => self.build()?,
            TaskName::Exec => self.exec()?.map(|m| vec![("", m)]),
        };
        let Some(steps) = steps else {
            return Ok(None);
        };
        let mut records = Vec::new();
        for (phase, measured) in steps {
            let sync = if self.settings.sync && phase != "configure" {
                timing::sync(&self.scratch).map_err(|e| StepError::io("sync", &self.scratch, e))?
            } else {
                Times::default()
            };
            records.push(self.record(task, method, phase, measured, sync));
        }
        Ok(Some(records))
    }

    fn record(
        &self,
        task: TaskName,
        method: Method,
        phase: &str,
        m: Measured,
        sync: Times,
    ) -> ResultRecord {
        let total = m.times + sync;
        let mut measurements = vec![
            REAL.at(total.real_ns as f64),
            USER.at(total.user_ns as f64),
            SYS.at(total.sys_ns as f64),
        ];
        if self.settings.sync {
            measurements.push(SYNC.at(sync.real_ns as f64));
        }
        if let Some(bytes) = m.bytes {
            if total.real_ns > 0 {
                measurements.push(RATE.at(bytes as f64 * 1e9 / total.real_ns as f64));
            }
            measurements.push(BYTES.at(bytes as f64));
        }
        if let Some(files) = m.files {
            measurements.push(FILES.at(files as f64));
        }
        let mut record = ResultRecord {
            measurements,
            attributes: m.attributes,
            ..ResultRecord::default()
        };
        record.dims.step = Some(task.name().into());
        record.dims.operation = Some(method.to_string());
        if !phase.is_empty() {
            record.dims.phase = Some(phase.into());
        }
        record
    }

    /// Finds or makes the tarball (untimed): the user's, a packed copy of the user's tree,
    /// Debian's kernel source recompressed, or the generated one (both kept in the data
    /// directory for later runs); then, with `copy_tarball`, copies it onto the target.
    fn prepare_tarball(&mut self, sink: &mut dyn Sink) -> Result<(), StepError> {
        let data = self.settings.data_dir();
        std::fs::create_dir_all(&data).map_err(|e| StepError::io("create", &data, e))?;
        let mut tarball = match &self.settings.source {
            Some(source) if source.is_dir() => {
                let (file, path) = fileio::create_new_file(&data, "fsbench-source", ".tar", false)
                    .map_err(|e| StepError::io("create a file in", &data, e))?;
                sink.status(&format!("packing {}", source.display()));
                self.temporary.push(path.clone());
                let top = source
                    .file_name()
                    .map_or_else(|| "source".into(), |n| n.to_string_lossy().into_owned());
                let packed = tree::pack_dir(source, &top, std::io::BufWriter::new(file))
                    .and_then(|out| Ok(out.into_inner().map_err(|e| e.into_error())?));
                packed.map_err(|e| match e {
                    tree::PackError::Mount(at) => {
                        StepError::failed(format!("--source: {}", mount_in_source(&at, source)))
                    }
                    tree::PackError::Io(e) => StepError::io("pack the tree", source, e),
                })?;
                self.user_tarball(&path, source, false)?
            }
            Some(source) => self.user_tarball(source, source, true)?,
            None => match self.settings.kernel(self.ctx) {
                KernelChoice::Installed(k) => self.kernel_tarball(&k, &data, sink)?,
                _ => self.generated_tarball(&data, sink)?,
            },
        };
        self.archive = Some((tarball.path.clone(), tarball.given));
        if self.settings.copy_tarball {
            tarball = self.copy_onto_target(tarball, sink)?;
        }
        self.tarball = Some(tarball);
        Ok(())
    }

    /// The generated tree's tarball, made once in `data`.
    fn generated_tarball(&self, data: &Path, sink: &mut dyn Sink) -> Result<Tarball, StepError> {
        let (model, units) = scaled_tree(self.settings, self.ctx);
        let tree = tree::generate(&model, units, self.settings.seed);
        let path = data.join(format!(
            "fsbench-tree-{}-{}f-{}u-seed{}.{}",
            model.name,
            model.files,
            units,
            self.settings.seed,
            self.settings.compression.extension()
        ));
        if !path.exists() {
            sink.status(&format!(
                "generating the {} tree ({} files, {}) in {}",
                model.name,
                tree.totals.files,
                human_bytes(tree.totals.bytes),
                data.display()
            ));
        }
        tree::pack_to_file(&tree, self.settings.compression, &path)
            .map_err(|e| StepError::io("write the tarball", &path, e))?;
        Ok(Tarball {
            path,
            compression: self.settings.compression,
            totals: tree.totals,
            origin: format!("generated {} (seed {})", model.name, self.settings.seed),
            given: false,
            kernel: false,
        })
    }

    /// Debian's kernel source, recompressed once (untimed) to the run's compression in `data`
    /// ([`kernel::recompressed`]); its contents counted from the package's own file.
    fn kernel_tarball(
        &self,
        k: &kernel::Installed,
        data: &Path,
        sink: &mut dyn Sink,
    ) -> Result<Tarball, StepError> {
        let source = self.user_tarball(&k.path, &k.path, true)?;
        let to = self.settings.compression;
        let cached = kernel::cache_name(&k.path, to)
            .map(|name| data.join(name))
            .map_err(|e| StepError::io("examine", &k.path, e))?;
        if source.compression != to && !cached.exists() {
            sink.status(&format!(
                "recompressing {} to {to} in {} (once: later runs reuse it)",
                k.path.display(),
                data.display()
            ));
        }
        let (path, _) = kernel::recompressed(&k.path, source.compression, to, data)
            .map_err(|e| StepError::io("recompress", &k.path, e))?;
        let origin = match to {
            _ if source.compression == to => {
                format!("Debian's {} ({})", k.name(), k.path.display())
            }
            Compression::None => format!(
                "Debian's {} ({}), decompressed (untimed): {}",
                k.name(),
                k.path.display(),
                path.display()
            ),
            _ => format!(
                "Debian's {} ({}), recompressed to {to} (untimed): {}",
                k.name(),
                k.path.display(),
                path.display()
            ),
        };
        Ok(Tarball {
            given: path == k.path,
            compression: to,
            path,
            origin,
            kernel: true,
            ..source
        })
    }

    /// Copies the tarball into the run's directory on the filesystem under test, untimed and
    /// not synced, as study 001's `cp linux.tar.bz2 .` before its timed `tar xjf ... && sync`
    /// (whose sync then writes the copy's dirty pages too, as the study's did).
    fn copy_onto_target(
        &mut self,
        tarball: Tarball,
        sink: &mut dyn Sink,
    ) -> Result<Tarball, StepError> {
        let ext = format!(".{}", tarball.compression.extension());
        let (mut to, path) = fileio::create_new_file(&self.scratch, "linux", &ext, false)
            .map_err(|e| StepError::io("create a file in", &self.scratch, e))?;
        sink.status(&format!(
            "copying the tarball onto the filesystem under test ({})",
            path.display()
        ));
        let mut from = open_tarball(&tarball.path, tarball.given)
            .map_err(|e| StepError::io("open", &tarball.path, e))?;
        std::io::copy(&mut from, &mut to)
            .map_err(|e| StepError::io("copy the tarball to", &path, e))?;
        Ok(Tarball {
            path,
            given: false,
            ..tarball
        })
    }

    /// A tarball (`given` by the user or a package, or a packed tree of fsbench's): its
    /// compression sniffed, its contents counted (untimed).
    fn user_tarball(&self, path: &Path, shown: &Path, given: bool) -> Result<Tarball, StepError> {
        let mut head = [0u8; 512];
        let n = {
            use std::io::Read;
            let mut f = open_tarball(path, given).map_err(|e| StepError::io("open", path, e))?;
            let mut n = 0;
            while n < head.len() {
                match f.read(&mut head[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) => return Err(StepError::io("read", path, e)),
                }
            }
            n
        };
        let compression = Compression::sniff(&head[..n]).ok_or_else(|| {
            StepError::failed(format!(
                "{} is not a tar archive (nor gzip, bzip2 or xz): pass a tarball or a directory as --source",
                shown.display()
            ))
        })?;
        let file = open_tarball(path, given).map_err(|e| StepError::io("open", path, e))?;
        let bad = |e: std::io::Error| {
            StepError::failed(format!(
                "{} is not a readable tar archive ({e}): pass a tarball or a directory as --source",
                shown.display()
            ))
        };
        fn count<R: std::io::Read>(entries: tar::Entries<'_, R>) -> std::io::Result<tree::Totals> {
            let mut totals = tree::Totals::default();
            for entry in entries {
                let entry = entry?;
                match entry.header().entry_type() {
                    tar::EntryType::Directory => totals.dirs += 1,
                    tar::EntryType::Regular | tar::EntryType::Continuous => {
                        totals.files += 1;
                        totals.bytes += entry.size();
                    }
                    tar::EntryType::Symlink => totals.symlinks += 1,
                    _ => {}
                }
            }
            Ok(totals)
        }
        // An uncompressed archive's headers are read where they are, its contents skipped by
        // seeking (the kernel tarball's 1.3 GB are not read to count its 80 k entries).
        let totals = if compression == Compression::None {
            let mut archive = tar::Archive::new(file);
            count(archive.entries_with_seek().map_err(bad)?)
        } else {
            let mut archive = tar::Archive::new(compression.reader(std::io::BufReader::new(file)));
            count(archive.entries().map_err(bad)?)
        }
        .map_err(bad)?;
        Ok(Tarball {
            path: path.to_path_buf(),
            compression,
            totals,
            origin: shown.display().to_string(),
            given,
            kernel: false,
        })
    }

    fn tarball(&self) -> &Tarball {
        self.tarball.as_ref().expect("prepared before")
    }

    /// A fresh directory to extract into.
    fn new_tree_dir(&mut self) -> Result<PathBuf, StepError> {
        self.extracted += 1;
        let path = self.scratch.join(format!("tree-{}", self.extracted));
        std::fs::create_dir(&path).map_err(|e| StepError::io("create", &path, e))?;
        Ok(path)
    }

    fn load(&self) -> Result<native::Loaded, StepError> {
        let tarball = self.tarball();
        let need = tarball.totals.bytes + tarball.totals.bytes / 4;
        if need > mem_available() {
            return Err(StepError::failed(format!(
                "the native extraction holds the archive in memory ({}), more than is available: use --method tool or a smaller --scale",
                human_bytes(tarball.totals.bytes)
            )));
        }
        let file = open_tarball(&tarball.path, tarball.given)
            .map_err(|e| StepError::io("open", &tarball.path, e))?;
        // An uncompressed archive is mapped (its page cache, no copy of it in this process);
        // a compressed one is decompressed into memory.
        let loaded = match tarball.compression {
            Compression::None => native::load_file(file),
            compression => {
                native::load(compression.reader(std::io::BufReader::with_capacity(1 << 20, file)))
            }
        };
        loaded.map_err(|e| match e {
            native::LoadError::Unreadable(e) => StepError::failed(format!(
                "{} is not a readable tar archive ({e})",
                tarball.origin
            )),
            native::LoadError::Refused(refused) => StepError::native(refused, &self.scratch),
        })
    }

    fn extract_untimed(&mut self) -> Result<bool, StepError> {
        let loaded = self.load()?;
        let dir = self.new_tree_dir()?;
        let fd = crate::fileio::at::open_dir(&dir).map_err(|e| StepError::io("open", &dir, e))?;
        let done = native::extract(&loaded, fd.as_raw_fd(), self.stop)
            .map_err(|f| StepError::native(f, &dir))?;
        self.tree_dir = Some(dir);
        Ok(done)
    }

    fn untar(&mut self, method: Method) -> Result<Option<Measured>, StepError> {
        let dir = self.new_tree_dir()?;
        let (totals, origin, compression, path) = {
            let t = self.tarball();
            (t.totals, t.origin.clone(), t.compression, t.path.clone())
        };
        let measured = match method {
            Method::Tool => {
                require("tar", "tar", "untar runs GNU tar")?;
                if let Some(program) = compression.program() {
                    require(program, program, "tar runs it to decompress")?;
                }
                let path_text = path.to_string_lossy().into_owned();
                let dir_text = dir.to_string_lossy().into_owned();
                let mut args = vec!["-x"];
                args.extend(compression.tar_flag());
                args.extend(["-f", &path_text, "-C", &dir_text]);
                let command = format!("tar {}", args.join(" "));
                match self.tool("tar", &args, &command)? {
                    Some(times) => Measured::new(times).note("command", command),
                    None => return Ok(None),
                }
            }
            Method::Native => {
                let loaded = self.load()?;
                let fd = crate::fileio::at::open_dir(&dir)
                    .map_err(|e| StepError::io("open", &dir, e))?;
                let (done, times) =
                    timing::native(|| native::extract(&loaded, fd.as_raw_fd(), self.stop));
                if !done.map_err(|f| StepError::native(f, &dir))? {
                    return Ok(None);
                }
                Measured::new(times).note(
                    "command",
                    match loaded.data {
                        native::Contents::Mapped(_) => {
                            "native extraction (archive mapped in memory)"
                        }
                        native::Contents::Read(_) => "native extraction (archive read into memory)",
                    },
                )
            }
        };
        let (archive, given) = self.archive.clone().expect("prepared before");
        self.written = Some(Written::Tree {
            dir: dir.clone(),
            archive,
            given,
            compression,
        });
        self.tree_dir = Some(dir);
        let mut m = measured
            .note("source", origin)
            .note("tarball", path.display().to_string());
        m.files = Some(totals.files);
        m.bytes = Some(totals.bytes);
        Ok(Some(m))
    }

    /// Runs a tool with its failure as the step's error.
    fn tool(&self, program: &str, args: &[&str], shown: &str) -> Result<Option<Times>, StepError> {
        match timing::tool(program, args, &self.scratch, self.stop) {
            Ok(ToolEnd::Ok(times)) => Ok(Some(times)),
            Ok(ToolEnd::Stopped) => Ok(None),
            Ok(ToolEnd::Failed { status, stderr, .. }) => Err(StepError::failed(format!(
                "`{shown}` {status}: {}",
                if stderr.is_empty() {
                    "no message"
                } else {
                    &stderr
                }
            ))),
            Err(e) => Err(StepError::failed(format!("cannot run `{shown}`: {e}"))),
        }
    }

    fn remove(&mut self, method: Method) -> Result<Option<Measured>, StepError> {
        let dir = self.tree_dir.clone().expect("extracted before");
        let totals = self.tarball().totals;
        // Untimed: a mount an `exec` step left in the tree (a bind mount of any directory, even
        // of this filesystem) would make `rm -rf` delete the other tree's files. The native
        // walk also refuses to enter one it meets (openat2, RESOLVE_NO_XDEV).
        if let Some(point) = mount_inside(&dir) {
            return Err(StepError::failed(format!(
                "{} is a mount point inside {} (another filesystem or a bind mount): fsbench \
                 never removes across a mount; unmount it (umount {}) and run again",
                point.display(),
                dir.display(),
                point.display()
            )));
        }
        let measured = match method {
            Method::Tool => {
                require("rm", "coreutils", "remove runs rm -rf")?;
                let text = dir.to_string_lossy().into_owned();
                let command = format!("rm -rf {text}");
                match self.tool("rm", &["-rf", &text], &command)? {
                    Some(times) => Measured::new(times).note("command", command),
                    None => return Ok(None),
                }
            }
            Method::Native => {
                let mut buffers = native::Buffers::placed(self.placement.read);
                let fd = crate::fileio::at::open_dir(&dir)
                    .map_err(|e| StepError::io("open", &dir, e))?;
                let (walked, times) = timing::native(|| {
                    let walked = native::remove_below(fd.as_raw_fd(), &mut buffers, self.stop)?;
                    if walked.is_some() {
                        std::fs::remove_dir(&dir).map_err(|e| native::Failed {
                            action: "remove the directory",
                            name: dir.display().to_string(),
                            error: e,
                        })?;
                    }
                    Ok::<_, native::Failed>(walked)
                });
                if walked.map_err(|f| StepError::native(f, &dir))?.is_none() {
                    return Ok(None);
                }
                Measured::new(times).note("command", "native removal (unlinkat, depth first)")
            }
        };
        self.tree_dir = None;
        let mut m = measured;
        m.files = Some(totals.files);
        Ok(Some(m))
    }

    fn read_all(
        &mut self,
        method: Method,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<Option<Measured>, StepError> {
        let dir = self.tree_dir.clone().expect("extracted before");
        let cache = match harness.cold() {
            Ok(how) => how,
            Err(why) => match harness.evict(&dir, 0, 0) {
                Ok(_) => {
                    sink.warning(&format!(
                        "read-all: the page cache could not be dropped ({why}); every file was evicted on its own instead (dentries and inodes stay cached)"
                    ));
                    "evicted file by file".to_string()
                }
                Err(not) => {
                    sink.warning(&format!(
                        "read-all: the page cache could not be dropped ({why}) nor the files evicted ({not}): the tree was read warm"
                    ));
                    "warm".to_string()
                }
            },
        };
        let totals = self.tarball().totals;
        let measured = match method {
            Method::Tool => {
                require("tar", "tar", "read-all runs GNU tar")?;
                let text = dir.to_string_lossy().into_owned();
                // GNU tar does not read the files when the archive is /dev/null.
                let command = format!("tar -c -f /dev/zero -C {text} .");
                let mut m = match self.tool(
                    "tar",
                    &["-c", "-f", "/dev/zero", "-C", &text, "."],
                    &command,
                )? {
                    Some(times) => Measured::new(times).note("command", command),
                    None => return Ok(None),
                };
                m.files = Some(totals.files);
                m.bytes = Some(totals.bytes);
                m
            }
            Method::Native => {
                let mut buffers = native::Buffers::placed(self.placement.read);
                let fd = crate::fileio::at::open_dir(&dir)
                    .map_err(|e| StepError::io("open", &dir, e))?;
                let (walked, times) =
                    timing::native(|| native::read_all(fd.as_raw_fd(), &mut buffers, self.stop));
                let Some(walked) = walked.map_err(|f| StepError::native(f, &dir))? else {
                    return Ok(None);
                };
                let mut m = Measured::new(times)
                    .note("command", "native read (1 MiB reads)")
                    .note("read_buffer_offset_bytes", self.placement.read);
                m.files = Some(walked.files);
                m.bytes = Some(walked.bytes);
                m
            }
        };
        Ok(Some(measured.note("cache", cache)))
    }

    /// The top of the extracted tree: its one top directory, or the directory itself.
    fn tree_top(&self) -> PathBuf {
        let dir = self.tree_dir.clone().expect("extracted before");
        let entries: Vec<_> = std::fs::read_dir(&dir)
            .map(|r| r.filter_map(Result::ok).collect())
            .unwrap_or_default();
        match entries.as_slice() {
            [one] if one.file_type().is_ok_and(|t| t.is_dir()) => one.path(),
            _ => dir,
        }
    }

    fn build(&mut self) -> Result<Option<Vec<(&'static str, Measured)>>, StepError> {
        require("make", "make", "build runs make")?;
        require("cc", "gcc", "build compiles C")?;
        if self.tarball().kernel {
            // The kernel's own build runs these (its headers, libelf's and OpenSSL's, make
            // names when they are missing).
            for program in ["flex", "bison", "bc"] {
                require(program, program, "the kernel's build runs it")?;
            }
        }
        let top = self.tree_top();
        if !top.join("Makefile").exists() {
            return Err(StepError::failed(format!(
                "{} has no Makefile: build needs the generated tree, a kernel source or a C project with a Makefile as --source",
                top.display()
            )));
        }
        let top_text = top.to_string_lossy().into_owned();
        let config = self.settings.config.clone();
        let configure = format!("make -C {top_text} {config}");
        let Some(configured) = self.tool("make", &["-C", &top_text, &config], &configure)? else {
            return Ok(None);
        };
        let jobs = format!("-j{}", self.settings.jobs());
        let compile = format!("make -C {top_text} {jobs}");
        let Some(compiled) = self.tool("make", &["-C", &top_text, &jobs], &compile)? else {
            return Ok(None);
        };
        Ok(Some(vec![
            (
                "configure",
                Measured::new(configured).note("command", configure),
            ),
            ("compile", Measured::new(compiled).note("command", compile)),
        ]))
    }

    fn exec(&mut self) -> Result<Option<Measured>, StepError> {
        let s = self.settings;
        // Passed in the environment, not spliced into the script: any path is safe.
        let tree = self.tree_dir.clone().unwrap_or_default();
        let env = [
            ("FSBENCH_DIR", self.scratch.as_os_str()),
            ("FSBENCH_TREE", tree.as_os_str()),
        ];
        let run = |what: &str, cmd: &str| -> Result<Option<Times>, StepError> {
            match timing::shell(cmd, &self.scratch, &env, self.stop) {
                Ok(ToolEnd::Ok(times)) => Ok(Some(times)),
                Ok(ToolEnd::Stopped) => Ok(None),
                Ok(ToolEnd::Failed { status, stderr, .. }) => Err(StepError::failed(format!(
                    "the {what} `{cmd}` {status}: {}",
                    if stderr.is_empty() {
                        "no message"
                    } else {
                        &stderr
                    }
                ))),
                Err(e) => Err(StepError::failed(format!("cannot run sh: {e}"))),
            }
        };
        if !s.setup.trim().is_empty() && run("setup", &s.setup)?.is_none() {
            return Ok(None);
        }
        let Some(times) = run("command", &s.command)? else {
            return Ok(None);
        };
        if !s.teardown.trim().is_empty() && run("teardown", &s.teardown)?.is_none() {
            return Ok(None);
        }
        Ok(Some(
            Measured::new(times).note("command", s.command.clone()),
        ))
    }

    fn copy(&mut self, method: Method, sink: &mut dyn Sink) -> Result<Option<Measured>, StepError> {
        let data = self.settings.data_dir();
        std::fs::create_dir_all(&data).map_err(|e| StepError::io("create", &data, e))?;
        let bytes = self.settings.big_file_bytes(self.ctx, &self.scratch);
        let (file, source) = fileio::create_new_file(&data, "fsbench-big-file", "", false)
            .map_err(|e| StepError::io("create a file in", &data, e))?;
        self.temporary.push(source.clone());
        sink.status(&format!("writing the {} file to copy", human_bytes(bytes)));
        write_big_file(file, bytes, self.settings.seed)
            .map_err(|e| StepError::io("write", &source, e))?;
        if device_of(&data) == device_of(&self.scratch) {
            sink.warning(&format!(
                "copy: the file copied is on the same filesystem as the target ({}): pass --data-dir on another filesystem, as study 000 copied from another partition",
                data.display()
            ));
        }
        let target = self.scratch.join("big-file");
        let measured = match method {
            Method::Tool => {
                require("cp", "coreutils", "copy runs cp")?;
                let (from, to) = (
                    source.to_string_lossy().into_owned(),
                    target.to_string_lossy().into_owned(),
                );
                // cp reflinks by default on xfs and btrfs (coreutils 9): a real copy is asked for.
                let command = format!("cp --reflink=never {from} {to}");
                match self.tool("cp", &["--reflink=never", &from, &to], &command)? {
                    Some(times) => Measured::new(times).note("command", command),
                    None => return Ok(None),
                }
            }
            Method::Native => {
                let at = self.placement.read;
                let mut buf =
                    crate::fileio::AlignedBuf::new(native::WRITE_CHUNK + crate::placement::ROOM);
                let chunk = &mut buf.as_mut_slice()[at..at + native::WRITE_CHUNK];
                let (copied, times) =
                    timing::native(|| native::copy(&source, &target, chunk, self.stop));
                match copied.map_err(|e| StepError::io("copy to", &target, e))? {
                    Some(_) => {}
                    None => return Ok(None),
                }
                Measured::new(times)
                    .note(
                        "command",
                        format!(
                            "native copy (read/write, {}; no copy_file_range)",
                            human_bytes(native::WRITE_CHUNK as u64)
                        ),
                    )
                    .note("read_buffer_offset_bytes", at)
            }
        };
        let _ = std::fs::remove_file(&source);
        self.written = Some(Written::Copy {
            path: target,
            bytes,
            seed: self.settings.seed,
        });
        let mut m = measured.note("source", format!("{} (in the page cache)", data.display()));
        m.bytes = Some(bytes);
        m.files = Some(1);
        Ok(Some(m))
    }
}

/// `verify`'s word on a step's record: whether what it wrote was verified, and how (or why not).
fn note_verify(record: &mut ResultRecord, verified: bool, note: &str) {
    record.attributes.insert("verified".into(), verified.into());
    record.attributes.insert("verify".into(), note.into());
}

/// The generator of the big file's bytes, [`readback::CHUNK`] at a time (the read-back
/// regenerates them to compare).
fn big_file_rng(seed: u64) -> crate::rng::Rng {
    crate::rng::Rng::new(seed ^ 0x0b16_f11e)
}

/// Writes `bytes` of incompressible data to `path` and syncs it, so the copy reads it from the
/// page cache and nothing of it is still being written back while the copy is timed.
fn write_big_file(mut file: std::fs::File, bytes: u64, seed: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut rng = big_file_rng(seed);
    let mut buf = vec![0u8; readback::CHUNK];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        rng.fill(&mut buf[..n]);
        file.write_all(&buf[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

/// The first mount point at or below `dir` that /proc/self/mountinfo shows, if any.
fn mount_inside(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let dir = dir.canonicalize().ok()?;
    fsbench_measure::host::parse_mountinfo(&text)
        .into_iter()
        .map(|m| m.mount_point)
        .find(|point| point.starts_with(&dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Collect;

    #[test]
    fn chains_parse_and_print_in_order() {
        let chain: TaskChain = "untar,build,read-all".parse().unwrap();
        assert_eq!(
            chain.0,
            [TaskName::Untar, TaskName::Build, TaskName::ReadAll]
        );
        assert_eq!(chain.to_string(), "untar,build,read-all");
        let err = "untar,bake".parse::<TaskChain>().unwrap_err();
        assert!(err.contains("unknown task 'bake'"), "{err}");
        assert!("".parse::<TaskChain>().is_err());
        assert_eq!("auto".parse::<BigFile>(), Ok(BigFile::Auto));
        assert_eq!("1m".parse::<BigFile>(), Ok(BigFile::Bytes(1 << 20)));
        assert!("0".parse::<BigFile>().is_err());
    }

    /// CPU times are counted in scheduler ticks, the wall clock in nanoseconds: the reports ask
    /// the registry which figure is which.
    #[test]
    fn cpu_times_are_counted_in_ticks() {
        use crate::WorkloadSettings;
        assert_eq!(
            WorkloadSettings::resolution_of("task", "user"),
            Some(CPU_TICK_NS)
        );
        assert_eq!(
            WorkloadSettings::resolution_of("task", "sys"),
            Some(CPU_TICK_NS)
        );
        assert_eq!(WorkloadSettings::resolution_of("task", "real"), None);
        assert_eq!(WorkloadSettings::resolution_of("matrix", "user"), None);
    }

    /// What a run with `linux_source` untars, and what it says: nothing where the kernel
    /// source is used (or not asked for), one note where it is missing or the scale is below 1,
    /// naming what stands in; --source and --linux-source together are refused.
    #[test]
    fn the_kernel_source_is_used_at_scale_1_only_and_its_absence_said() {
        let installed = kernel::Installed {
            path: PathBuf::from("/usr/src/linux-source-6.1.tar.xz"),
            version: "6.1".into(),
        };
        let s = TaskSettings {
            tasks: "untar,build,read-all".parse().unwrap(),
            linux_source: true,
            ..TaskSettings::default()
        };
        let full = Context::default();
        let small = Context {
            scale: 0.01,
            ..Context::default()
        };
        let found = || Some(installed.clone());
        assert_eq!(
            s.kernel_of(&full, found),
            KernelChoice::Installed(installed.clone())
        );
        assert!(s.notes_for(s.kernel_of(&full, found), &full).is_empty());
        let scaled = s.notes_for(s.kernel_of(&small, found), &small);
        assert_eq!(
            scaled,
            ["at scale 0.01 the generated tree shaped like linux-6.1 (786 files) and its C project stand in for Debian's kernel source (/usr/src/linux-source-6.1.tar.xz), which is untarred and built at scale 1 only"]
        );
        let missing = s.notes_for(s.kernel_of(&full, || None), &full);
        assert_eq!(
            missing,
            ["Debian's kernel source is not installed (/usr/src/linux-source-*.tar.xz): the generated tree shaped like linux-6.1 (78579 files) and its C project stand in for it; install it with `apt-get install linux-source-6.1` (or scripts/install-deps.sh --studies)"]
        );
        // Without build, nothing is said of a C project; without linux_source, nothing at all.
        let untar = TaskSettings {
            tasks: "copy,untar,remove".parse().unwrap(),
            tree: "qt-4.6.0".parse().unwrap(),
            ..s.clone()
        };
        let note = untar.notes_for(untar.kernel_of(&full, || None), &full);
        assert!(
            note[0].contains("the generated tree shaped like qt-4.6.0 (30786 files) stands in"),
            "{}",
            note[0]
        );
        let off = TaskSettings::default();
        assert_eq!(off.kernel_of(&full, found), KernelChoice::Off);
        let both = TaskSettings {
            source: Some(PathBuf::from("/tmp/linux.tar")),
            ..s.clone()
        };
        let e = both.check(&full).unwrap_err();
        assert!(
            e.to_string()
                .contains("either --source PATH or --linux-source true"),
            "{e}"
        );
    }

    #[test]
    fn exec_needs_a_command() {
        let s = TaskSettings {
            tasks: "exec".parse().unwrap(),
            ..TaskSettings::default()
        };
        let e = s.check(&Context::default()).unwrap_err();
        assert!(e.to_string().contains("--command"), "{e}");
    }

    /// `verify`'s harness: its `cold` changes one byte of a file the chain wrote (`damage`: a
    /// name the file's path ends with, or "tree" for the largest extracted file) at byte 4196 — in the block at 4096 — and names it; None changes nothing.
    struct Damaging {
        scratch_in: PathBuf,
        damage: Option<&'static str>,
        damaged: Option<PathBuf>,
        colds: u32,
    }

    impl Damaging {
        fn new(dir: &Path, damage: Option<&'static str>) -> Damaging {
            Damaging {
                scratch_in: dir.to_path_buf(),
                damage,
                damaged: None,
                colds: 0,
            }
        }

        fn files(dir: &Path, out: &mut Vec<PathBuf>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for path in entries {
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    Damaging::files(&path, out);
                } else if meta.is_file() {
                    out.push(path);
                }
            }
        }
    }

    impl Harness for Damaging {
        fn cold(&mut self) -> Result<String, String> {
            use std::os::unix::fs::FileExt;
            self.colds += 1;
            let Some(damage) = self.damage.take() else {
                return Ok("remounted (test)".into());
            };
            let mut files = Vec::new();
            Damaging::files(&self.scratch_in, &mut files);
            let path = files
                .into_iter()
                .filter(|p| match damage {
                    "tree" => p.to_string_lossy().contains("/tree-"),
                    name => p.ends_with(name),
                })
                .max_by_key(|p| p.metadata().unwrap().len())
                .expect("a file to damage");
            assert!(path.metadata().unwrap().len() > 4196, "{}", path.display());
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            let mut byte = [0u8];
            file.read_exact_at(&mut byte, 4196).unwrap();
            file.write_all_at(&[!byte[0]], 4196).unwrap();
            self.damaged = Some(path);
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

    /// A small chain with `verify`: a 300,000-byte big file and a 157-file tree (no
    /// compression), natively or with the tools, on `dir`.
    fn verified(tasks: &str, method: Method, data: &Path) -> TaskSettings {
        TaskSettings {
            tasks: tasks.parse().unwrap(),
            method,
            tree_fraction: 0.002,
            compression: Compression::None,
            big_file: BigFile::Bytes(300_000),
            data_dir: Some(data.to_path_buf()),
            sync: false,
            verify: true,
            ..TaskSettings::default()
        }
    }

    fn has_tools() -> bool {
        ["tar", "cp", "rm"]
            .iter()
            .all(|p| require(p, p, "test").is_ok())
    }

    /// What copy and untar wrote is read back once, after the chain (the timed steps never
    /// wait on it) and compared with its source: unchanged, no false alarm, and the records say
    /// what was verified; a byte changed by the "remount" ends the sample `corrupt`, naming the
    /// file, the block and the byte, with what was expected and found.
    #[test]
    fn task_verify_reads_back_what_copy_and_untar_wrote_and_finds_a_changed_byte() {
        let data = tempfile::tempdir().unwrap();
        let ctx = Context::default();
        let mut methods = vec![Method::Native];
        if has_tools() {
            methods.push(Method::Tool);
        }
        for method in methods {
            for damage in [None, Some("big-file"), Some("tree")] {
                let dir = tempfile::tempdir().unwrap();
                let settings = verified("copy,untar,read-all", method, data.path());
                let mut harness = Damaging::new(dir.path(), damage);
                let mut sink = Collect::default();
                let end = settings.run(&ctx, dir.path(), &StopFlag::new(), &mut sink, &mut harness);
                let case = format!("{method} damage {damage:?}");
                // read-all's cold, then the check's.
                assert_eq!(harness.colds, 2, "{case}");
                let Some(damaged) = harness.damaged else {
                    assert_eq!(end.outcome, Outcome::Ok, "{case}: {:?}", end.error);
                    let steps: Vec<_> = sink
                        .records
                        .iter()
                        .map(|r| r.dims.step.clone().unwrap())
                        .collect();
                    assert_eq!(steps, ["read-all", "copy", "untar"], "{case}");
                    let copy = &sink.records[1].attributes;
                    assert_eq!(copy["verified"], true, "{case}");
                    assert_eq!(copy["verified_files"], 1, "{case}");
                    assert_eq!(copy["verified_bytes"], 300_000, "{case}");
                    let untar = &sink.records[2].attributes;
                    assert_eq!(untar["verified"], true, "{case}");
                    let (model, units) = scaled_tree(&settings, &ctx);
                    let totals = tree::generate(&model, units, 1).totals;
                    assert_eq!(untar["verified_files"], totals.files, "{case}");
                    assert_eq!(untar["verified_bytes"], totals.bytes, "{case}");
                    assert_eq!(untar["verified_dirs"], totals.dirs, "{case}");
                    assert!(
                        untar["verify"]
                            .as_str()
                            .unwrap()
                            .contains("after the chain, once the cache was made cold: remounted"),
                        "{case}: {untar:?}"
                    );
                    assert!(
                        sink.records[0].attributes["verify"]
                            .as_str()
                            .unwrap()
                            .contains("nothing to verify"),
                        "{case}"
                    );
                    assert!(
                        sink.warnings.iter().any(|w| w.contains(
                            "--verify: what copy, untar wrote was read back as written after the chain"
                        )),
                        "{case}: {:?}",
                        sink.warnings
                    );
                    continue;
                };
                assert_eq!(end.outcome, Outcome::Corrupt, "{case}: {:?}", end.error);
                let said = end.error.unwrap();
                assert!(matches!(said, WorkloadError::Corrupt(_)), "{case}: {said}");
                let said = said.to_string();
                assert!(
                    said.contains(&format!(
                        "{}: the block at byte 4096 is not what was written: expected ",
                        damaged.display()
                    )),
                    "{case}: {said}"
                );
                assert!(
                    said.contains(" at byte 4196 (the block's CRC-32 "),
                    "{case}: {said}"
                );
                assert!(said.contains(", found "), "{case}: {said}");
                let corrupt = sink
                    .records
                    .iter()
                    .find(|r| r.attributes.get("verified") == Some(&false.into()))
                    .expect("the damaged step's record");
                assert!(
                    corrupt.attributes["verify"]
                        .as_str()
                        .unwrap()
                        .starts_with("corrupt: "),
                    "{case}"
                );
            }
        }
    }

    /// A remove after an untar: the tree is read back between them (untimed), and a changed
    /// byte found there ends the chain before the remove; build and exec are said unverified.
    #[test]
    fn task_verify_reads_back_before_a_remove_and_says_what_it_cannot_verify() {
        let data = tempfile::tempdir().unwrap();
        let ctx = Context::default();
        for damage in [None, Some("tree")] {
            let dir = tempfile::tempdir().unwrap();
            let mut settings = verified("untar,exec,remove", Method::Native, data.path());
            settings.command = "true".into();
            let mut harness = Damaging::new(dir.path(), damage);
            let mut sink = Collect::default();
            let end = settings.run(&ctx, dir.path(), &StopFlag::new(), &mut sink, &mut harness);
            assert_eq!(harness.colds, 1, "{damage:?}");
            if damage.is_none() {
                assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
                let steps: Vec<_> = sink
                    .records
                    .iter()
                    .map(|r| r.dims.step.clone().unwrap())
                    .collect();
                assert_eq!(steps, ["untar", "exec", "remove"]);
                assert!(sink.records[0].attributes["verify"]
                    .as_str()
                    .unwrap()
                    .contains("read back as written before exec"));
                assert_eq!(sink.records[1].attributes["verified"], false);
                assert!(
                    sink.warnings
                        .iter()
                        .any(|w| w.contains("--verify: not verified: exec")),
                    "{:?}",
                    sink.warnings
                );
                continue;
            }
            assert_eq!(end.outcome, Outcome::Corrupt);
            let said = end.error.unwrap().to_string();
            assert!(said.contains("the block at byte 4096"), "{said}");
            assert!(said.contains("read back before exec"), "{said}");
            assert!(said.ends_with("; not run: exec, remove"), "{said}");
            assert_eq!(sink.records.len(), 1);
        }
    }

    /// Each kind of difference in an extracted tree is named: a file cut short or grown, a
    /// symlink pointing elsewhere, a missing entry, a file where a directory was; untouched, a
    /// tree with symlinks and hard links verifies.
    #[test]
    fn task_verify_names_each_kind_of_difference_in_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.tar");
        {
            let mut b = tar::Builder::new(std::fs::File::create(&archive).unwrap());
            let mut add = |name: &str, kind: tar::EntryType, link: &str, data: &[u8]| {
                let mut h = tar::Header::new_gnu();
                h.set_entry_type(kind);
                h.set_mode(0o755);
                h.set_size(data.len() as u64);
                if !link.is_empty() {
                    h.set_link_name(link).unwrap();
                }
                b.append_data(&mut h, name, data).unwrap();
            };
            add("top", tar::EntryType::Directory, "", b"");
            add("top/sub", tar::EntryType::Directory, "", b"");
            let big: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
            add("top/sub/big", tar::EntryType::Regular, "", &big);
            add("top/small", tar::EntryType::Regular, "", b"hello");
            add("top/link", tar::EntryType::Symlink, "sub/big", b"");
            add("top/hard", tar::EntryType::Link, "top/small", b"");
            b.finish().unwrap();
        }
        let extract = |to: &Path| {
            let loaded = native::load_file(std::fs::File::open(&archive).unwrap()).unwrap();
            let fd = crate::fileio::at::open_dir(to).unwrap();
            assert!(native::extract(&loaded, fd.as_raw_fd(), &StopFlag::new()).unwrap());
        };
        let check = |to: &Path| {
            readback::check(
                &Written::Tree {
                    dir: to.to_path_buf(),
                    archive: archive.clone(),
                    given: false,
                    compression: Compression::None,
                },
                true,
                &StopFlag::new(),
            )
        };
        type Change = fn(&Path);
        let changes: [(&str, Change, &str); 6] = [
            ("intact", |_| {}, ""),
            (
                "cut short",
                |t| {
                    let f = std::fs::OpenOptions::new().write(true).open(t.join("top/sub/big")).unwrap();
                    f.set_len(10_000).unwrap();
                },
                "top/sub/big: the block at byte 8192 is not what was written: expected ",
            ),
            (
                "grown",
                |t| {
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new().append(true).open(t.join("top/small")).unwrap();
                    f.write_all(b"!").unwrap();
                },
                "top/small: the block at byte 0 is not what was written: expected the end of the file at byte 5, found 21 at byte 5 (6 bytes in all)",
            ),
            (
                "relinked",
                |t| {
                    std::fs::remove_file(t.join("top/link")).unwrap();
                    std::os::unix::fs::symlink("small", t.join("top/link")).unwrap();
                },
                "top/link: the block at byte 0 is not what was written: expected a symlink to sub/big, found a symlink to small",
            ),
            (
                "missing",
                |t| std::fs::remove_file(t.join("top/small")).unwrap(),
                "top/small: the block at byte 0 is not what was written: expected a file of 5 bytes, found nothing there",
            ),
            (
                "replaced",
                |t| {
                    std::fs::remove_dir_all(t.join("top/sub")).unwrap();
                    std::fs::write(t.join("top/sub"), b"x").unwrap();
                },
                "top/sub: the block at byte 0 is not what was written: expected a directory, found a file",
            ),
        ];
        for (case, change, said) in changes {
            let to = tempfile::tempdir().unwrap();
            extract(to.path());
            change(to.path());
            match check(to.path()) {
                Ok(Some(v)) => {
                    assert_eq!(case, "intact");
                    assert_eq!(
                        v,
                        Verified {
                            files: 2,
                            bytes: 20_005,
                            dirs: 2,
                            symlinks: 1,
                            hard_links: 1,
                            skipped: 0
                        }
                    );
                }
                Err(Found::Corrupt(c)) => {
                    let c = c.to_string();
                    assert!(c.contains(said), "{case}: {c}");
                    assert!(
                        c.starts_with(&to.path().display().to_string()),
                        "{case}: {c}"
                    );
                }
                other => panic!("{case}: {other:?}"),
            }
        }
    }
}
