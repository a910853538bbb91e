//! The durability workload: does a configuration keep its promises when the system goes down?
//! Each round runs a seeded sequence of file operations, each ended by a persistence call (or
//! not), on a fresh directory; cuts the filesystem at a chosen point as a crash would
//! ([`Harness::cut`]: the shutdown ioctl, the log not written back; then the timed mount that
//! recovers it and a read-only fsck); and checks what survived against what POSIX and Linux
//! promise ([`oracle`]). Reported per configuration: the cuts, the violations by kind (each
//! with the sequence that produced it), the recovery time and the fsck verdicts.

pub mod ops;
pub mod oracle;

use crate::data::{DataKind, DataSource};
use crate::figures::{ELAPSED, OPS};
use crate::harness::{CutError, Harness, PowerBudget};
use crate::together::ScratchDir;
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::now_ns;
use fsbench_measure::histogram::Histogram;
use fsbench_measure::rng::Rng;
use fsbench_model::{CachePolicy, Category, Direction, Merge, MetricDef, ResultRecord, Stat, Unit};
use ops::{Family, Step};
use oracle::{Kind, Oracle, Violation};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The durability workload's settings: its plan table, its command's flags.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DurabilitySettings {
    /// Cuts: each runs one sequence on a fresh directory, cuts the filesystem and checks it
    /// (scaled by --scale; at least 1).
    #[arg(long, value_name = "N", default_value_t = DurabilitySettings::default().cuts)]
    pub cuts: u64,

    /// The sequences, taken in turn: seq-1 (one operation and its persistence call), seq-2
    /// (two), mixed (--ops operations, about half persisted).
    #[arg(long, value_name = "LIST", default_value_t = DurabilitySettings::default().sequences)]
    pub sequences: Families,

    /// Operations of a mixed sequence.
    #[arg(long, value_name = "N", default_value_t = DurabilitySettings::default().ops)]
    pub ops: u64,

    /// Where a sequence is cut: end (after its last operation) or random (after a seeded one
    /// of its operations, the last included).
    #[arg(long, value_name = "WHERE", default_value_t = DurabilitySettings::default().cut_at)]
    pub cut_at: CutAt,

    /// How the filesystem is cut: shutdown (the shutdown ioctl: a crash of the system, what
    /// reached the device kept) or power (the recording device: every crash state a power cut
    /// can leave of the writes since the last flush, each mounted and checked).
    #[arg(long, value_name = "HOW", default_value_t = DurabilitySettings::default().cut)]
    pub cut: CutKind,

    /// With `cut = power`: crash states of the writes since each flush, besides the flush's
    /// own (all of them when they are at most this many, else this many seeded ones).
    #[arg(long, value_name = "N", default_value_t = DurabilitySettings::default().crash_states)]
    pub crash_states: u64,

    /// With `cut = power`: what the device did with the filesystem's flushes — kept (every
    /// write before a flush durable once it returned) or ignored (a device that acknowledges
    /// flushes without making anything durable: any subset of every write since the sequence
    /// began may be lost).
    #[arg(long, value_name = "HOW", default_value_t = DurabilitySettings::default().flushes)]
    pub flushes: Flushes,

    /// With `cut = power`: the recording device's image (`1g`): its own filesystem, made for
    /// the power cuts (default: the plan's image size, else 512 MiB). Every crash state is
    /// checked with fsck, whose time grows with the filesystem: a study's 68 GB image makes a
    /// state take minutes.
    #[arg(long, value_name = "SIZE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_size: Option<fsbench_model::units::Size>,

    /// With `cut = power`: where the power cuts that broke a promise are kept as crash bundles
    /// (the image the log started from, the log, every state, and the sequence in
    /// `sequence.txt`), the first few of a run; `fsbench crash-state DIR/BUNDLE --state N --to
    /// IMAGE` writes one state to an image to mount. None: kept nowhere.
    #[arg(long, value_name = "DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_states: Option<std::path::PathBuf>,

    /// Most 4 KiB blocks one write or append writes.
    #[arg(long, value_name = "N", default_value_t = DurabilitySettings::default().max_blocks)]
    pub max_blocks: u64,

    /// Instead of generated sequences, this one at every cut (as results print a sequence:
    /// `create C; write C 8k@0; fsync C; rename C A`): a violation found, replayed.
    #[arg(long, value_name = "STEPS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<ops::Sequence>,

    /// Violations whose sequence is reduced to a minimal one after the cuts: each is replayed
    /// (cut after its last operation) without one operation at a time, keeping every removal
    /// that still breaks the promise of the same kind (untimed; not counted in the cuts).
    #[arg(long, value_name = "N", default_value_t = DurabilitySettings::default().reduce)]
    pub reduce: u64,

    /// Seed of the sequences and the data (a fresh one per run when unset; stored with the
    /// results: the same seed gives the same sequences).
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Default for DurabilitySettings {
    fn default() -> DurabilitySettings {
        DurabilitySettings {
            cuts: 50,
            sequences: Families(Family::ALL.to_vec()),
            ops: 12,
            cut_at: CutAt::Random,
            cut: CutKind::Shutdown,
            crash_states: 8,
            flushes: Flushes::Kept,
            keep_states: None,
            recorded_size: None,
            max_blocks: 4,
            sequence: None,
            reduce: 3,
            seed: None,
        }
    }
}

/// The sequence families a run takes in turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Families(pub Vec<Family>);

impl std::str::FromStr for Families {
    type Err = String;
    fn from_str(text: &str) -> Result<Families, String> {
        let one = |name: &str| {
            Family::ALL
                .into_iter()
                .find(|f| f.name() == name.trim())
                .ok_or_else(|| {
                    format!(
                        "'{}' is not a sequence family: use seq-1, seq-2 or mixed",
                        name.trim()
                    )
                })
        };
        let families = text.split(',').map(one).collect::<Result<Vec<_>, _>>()?;
        Ok(Families(families))
    }
}

impl fmt::Display for Families {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|f| f.name()).collect();
        f.write_str(&names.join(","))
    }
}

/// Where a sequence is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutAt {
    End,
    Random,
}

impl std::str::FromStr for CutAt {
    type Err = String;
    fn from_str(text: &str) -> Result<CutAt, String> {
        match text {
            "end" => Ok(CutAt::End),
            "random" => Ok(CutAt::Random),
            other => Err(format!("'{other}' is not where to cut: use end or random")),
        }
    }
}

impl fmt::Display for CutAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CutAt::End => "end",
            CutAt::Random => "random",
        })
    }
}

/// How the filesystem is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutKind {
    /// The shutdown ioctl, the log not written back: a crash of the system.
    Shutdown,
    /// The recording device's crash states: a power cut.
    Power,
}

impl std::str::FromStr for CutKind {
    type Err = String;
    fn from_str(text: &str) -> Result<CutKind, String> {
        match text {
            "shutdown" => Ok(CutKind::Shutdown),
            "power" => Ok(CutKind::Power),
            other => Err(format!(
                "'{other}' is not how to cut: use shutdown (the shutdown ioctl) or power (the \
                 recording device's crash states)"
            )),
        }
    }
}

impl fmt::Display for CutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CutKind::Shutdown => "shutdown",
            CutKind::Power => "power",
        })
    }
}

/// What the recording device did with the filesystem's flushes, in a power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushes {
    /// Every write before a flush is durable once the flush returned.
    Kept,
    /// Flushes acknowledged and ignored: nothing is durable until the cut.
    Ignored,
}

impl std::str::FromStr for Flushes {
    type Err = String;
    fn from_str(text: &str) -> Result<Flushes, String> {
        match text {
            "kept" => Ok(Flushes::Kept),
            "ignored" => Ok(Flushes::Ignored),
            other => Err(format!(
                "'{other}' is not what the device did with flushes: use kept or ignored (a \
                 device that acknowledges flushes without making writes durable)"
            )),
        }
    }
}

impl fmt::Display for Flushes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Flushes::Kept => "kept",
            Flushes::Ignored => "ignored",
        })
    }
}

fsbench_model::text_serde!(Families, CutAt, CutKind, Flushes);

/// Promises broken, over every cut: the main figure (0 is the only good value).
pub const VIOLATIONS: MetricDef = MetricDef::new("violations", Unit::Count, Direction::Lower)
    .merged(Merge::Sum)
    .main();
/// Cuts made and checked.
pub const CUTS: MetricDef = MetricDef::new("cuts", Unit::Count, Direction::None).merged(Merge::Sum);
/// Violations of each kind, in [`Kind::ALL`]'s order.
pub const BY_KIND: [MetricDef; 7] = [
    MetricDef::new("lost_fsynced_data", Unit::Count, Direction::Lower).merged(Merge::Sum),
    MetricDef::new("wrong_size", Unit::Count, Direction::Lower).merged(Merge::Sum),
    MetricDef::new("missing_name", Unit::Count, Direction::Lower).merged(Merge::Sum),
    MetricDef::new("rename_not_atomic", Unit::Count, Direction::Lower).merged(Merge::Sum),
    MetricDef::new("unreadable", Unit::Count, Direction::Lower).merged(Merge::Sum),
    MetricDef::new("stale_data_exposed", Unit::Count, Direction::Lower).merged(Merge::Sum),
    MetricDef::new("fsck_errors", Unit::Count, Direction::Lower).merged(Merge::Sum),
];
/// Crash states made and checked (power cuts).
pub const CRASH_STATES: MetricDef =
    MetricDef::new("crash_states", Unit::Count, Direction::None).merged(Merge::Sum);
/// The mount after a cut (the log's replay included): the recovery time.
pub const RECOVERY: [MetricDef; 4] = [
    MetricDef::new("recovery_p50", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::P50)),
    MetricDef::new("recovery_mean", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::Mean)),
    MetricDef::new("recovery_p99", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::P99)),
    MetricDef::new("recovery_max", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::Max)),
];

/// Violations kept whole (with their sequence) in a result, at most: every one a run of the
/// default size can find (a result says when more were counted than kept).
const KEPT: usize = 1000;

impl DurabilitySettings {
    fn cuts_at(&self, ctx: &Context) -> u64 {
        ((self.cuts as f64 * ctx.scale).round() as u64).max(1)
    }
}

impl Workload for DurabilitySettings {
    const KIND: &'static str = "durability";
    const ABOUT: &'static str =
        "Durability: cut the filesystem after seeded operation sequences and check what survived";
    const LONG_ABOUT: &'static str = "Durability: does the filesystem keep what it promised \
when the system goes down?\n\nEach cut runs a seeded sequence of file operations (create, \
write, append, truncate, fallocate, rename over a file or to a new name, link, unlink, mkdir, \
rmdir), each ended by a persistence call (fsync, fdatasync, an O_SYNC or O_DSYNC write, \
sync_file_range, an fsync of the directory, syncfs, sync) or not, then cuts the filesystem as \
a crash would (the shutdown ioctl, the log not written back), mounts it again (timed: the \
recovery), checks it read-only with its fsck and checks every file and name against what \
POSIX and Linux promise. Needs a filesystem fsbench makes (--fs) whose kernel driver has the \
shutdown ioctl (ext4, xfs here); others end unsupported. Reported: cuts, violations by kind \
(each kept with the sequence that produced it), the recovery time.";
    const CATEGORY: Option<Category> = None;
    const CACHE_POLICIES: &'static [CachePolicy] =
        &[CachePolicy::Warm, CachePolicy::Drop, CachePolicy::Remount];

    fn table_columns() -> &'static [&'static str] {
        &["cuts", "violations", "recovery_p50", "recovery_max"]
    }

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        if self.cuts == 0 {
            return Err(WorkloadError::invalid("cuts", "must be at least 1"));
        }
        if self.sequences.0.is_empty() {
            return Err(WorkloadError::invalid(
                "sequences",
                "name at least one family",
            ));
        }
        if self.ops == 0 || self.ops > 10_000 {
            return Err(WorkloadError::invalid("ops", "must be from 1 to 10000"));
        }
        if self.crash_states == 0 || self.crash_states > 10_000 {
            return Err(WorkloadError::invalid(
                "crash_states",
                "must be from 1 to 10000",
            ));
        }
        if self.flushes == Flushes::Ignored && self.cut != CutKind::Power {
            return Err(WorkloadError::invalid(
                "flushes",
                "ignored flushes are a model of the recording device: use it with cut = power",
            ));
        }
        if self.recorded_size.is_some() && self.cut != CutKind::Power {
            return Err(WorkloadError::invalid(
                "recorded_size",
                "the recording device is for power cuts: use it with cut = power",
            ));
        }
        if self.keep_states.is_some() && self.cut != CutKind::Power {
            return Err(WorkloadError::invalid(
                "keep_states",
                "crash bundles are kept of power cuts: use it with cut = power",
            ));
        }
        if self.max_blocks == 0 || self.max_blocks > 256 {
            return Err(WorkloadError::invalid(
                "max_blocks",
                "must be from 1 to 256 (4 KiB blocks)",
            ));
        }
        if let Some(sequence) = &self.sequence {
            sequence
                .fits(&ops::setup_state())
                .map_err(|why| WorkloadError::invalid("sequence", why))?;
        }
        if ctx.job.is_some() {
            return Err(WorkloadError::invalid(
                "kind",
                "durability cuts the filesystem of one host: it does not run as a scale-out job",
            ));
        }
        Ok(())
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        // A cut (shutdown, two mounts, fsck) takes about 0.2 s on a loop device; a power cut
        // as much per crash state.
        let per_cut = match self.cut {
            CutKind::Shutdown => 1,
            CutKind::Power => 4 * (1 + self.crash_states),
        };
        self.cuts_at(ctx) * per_cut * 250_000_000
    }

    fn records_writes(&self) -> bool {
        self.cut == CutKind::Power
    }

    fn recorded_bytes(&self) -> Option<u64> {
        self.recorded_size.map(|s| s.0)
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let seed = self
            .seed
            .unwrap_or_else(|| (now_ns() ^ u64::from(std::process::id())) >> 1);
        if let Err(e) = self.check(ctx) {
            return End::failed(e, Some(seed));
        }
        let mut unsupported = None;
        let end =
            ScratchDir::run(
                dir,
                "fsbench-durability",
                Some(seed),
                sink,
                |top, sink| match self.rounds(ctx, top, seed, stop, sink, harness) {
                    Err(Stopped::Unsupported(why)) => {
                        unsupported = Some(why);
                        Ok(true)
                    }
                    Err(Stopped::Error(e)) => Err(e),
                    Ok(done) => Ok(done),
                },
            );
        match unsupported {
            Some(why) => End {
                outcome: fsbench_model::Outcome::Unsupported,
                error: Some(WorkloadError::Harness(why)),
                seed: Some(seed),
                kept: Vec::new(),
            },
            None => end,
        }
    }
}

/// Why the rounds ended early.
enum Stopped {
    Unsupported(String),
    Error(WorkloadError),
}

impl From<WorkloadError> for Stopped {
    fn from(e: WorkloadError) -> Stopped {
        Stopped::Error(e)
    }
}

impl DurabilitySettings {
    /// Every cut in `top`; its one result handed to `sink` at the end.
    fn rounds(
        &self,
        ctx: &Context,
        top: &Path,
        seed: u64,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<bool, Stopped> {
        let cuts = self.cuts_at(ctx);
        let record = (self.max_blocks as usize) * crate::verify::BLOCK;
        let mut data = DataSource::new(DataKind::Random, seed, record);
        let mut rng = Rng::new(seed ^ 0x6475_7261_6269_6c65);
        let mut tally = Tally::default();
        let mut by_kind = [0u64; 7];
        let mut kept: Vec<serde_json::Value> = Vec::new();
        let mut operations = 0u64;
        let started = now_ns();
        let mut next_id = 1;
        // The violations to reduce: where each is kept, the sequence that made it, its kind.
        let mut to_reduce: Vec<(usize, u64, Vec<Step>, Kind)> = Vec::new();
        // Where power cuts that broke a promise are kept (absolute: a campaign's child keeps
        // them through its parent), and how many were.
        let keep_in = match &self.keep_states {
            Some(dir) if dir.is_relative() => Some(
                std::env::current_dir()
                    .map_err(|e| WorkloadError::io("find the current directory for", dir, e))?
                    .join(dir),
            ),
            other => other.clone(),
        };
        let mut bundles = 0;
        let fallocate = ops::fallocate_works(top)?;
        if !fallocate {
            if let Some(given) = &self.sequence {
                if given
                    .0
                    .iter()
                    .any(|s| matches!(s.op, ops::Op::Fallocate { .. }))
                {
                    return Err(Stopped::Unsupported(
                        "this filesystem does not take fallocate (EOPNOTSUPP), and the sequence \
                         given has one"
                            .into(),
                    ));
                }
            }
            sink.warning(
                "durability: this filesystem does not take fallocate (EOPNOTSUPP: ext2 and ext3 \
                 files without extents): the sequences leave it out",
            );
        }
        for round in 0..cuts {
            if stop.is_requested() {
                return Ok(false);
            }
            let family = self.sequences.0[(round % self.sequences.0.len() as u64) as usize];
            let name = format!("cut-{round}");
            let root = top.join(&name);
            std::fs::create_dir(&root)
                .map_err(|e| WorkloadError::io("create the directory", &root, e))?;
            let power = self.cut == CutKind::Power;
            let mut oracle = Oracle::new(seed, next_id);
            let mut views = self.begin(harness, &root, &mut oracle, &mut data, || {
                format!("the recording before sequence {}", round + 1)
            })?;
            let steps = match &self.sequence {
                Some(given) => given.0.clone(),
                None => ops::generate(
                    family,
                    &mut rng,
                    &oracle,
                    self.ops,
                    self.max_blocks,
                    fallocate,
                ),
            };
            let cut_after = match self.cut_at {
                CutAt::End => steps.len(),
                CutAt::Random => 1 + (rng.next_u64() % steps.len() as u64) as usize,
            };
            let done: &[Step] = &steps[..cut_after];
            for (k, step) in done.iter().enumerate() {
                ops::run(&root, step, &mut oracle, &mut data)?;
                mark(harness, &mut views, &oracle, k + 1);
            }
            operations += done.len() as u64;
            next_id = oracle.next_id();
            let failed = |why: String| -> Stopped {
                WorkloadError::Harness(format!(
                    "the cut after sequence {} ({}) failed: {why}",
                    round + 1,
                    said(done)
                ))
                .into()
            };
            // Each check of the round: the crash state it was of (power cuts), what it found.
            let mut checks = Checks::new();
            let mut bundle: Option<std::path::PathBuf> = None;
            if power {
                let budget = self.budget(seed, round);
                let states = (&views, &oracle, root.as_path());
                let keep = keep_in.as_deref().filter(|_| bundles < BUNDLES);
                match check_states(harness, budget, states, keep, stop, &mut tally, &failed)? {
                    Some((found, kept_as)) => {
                        checks = found;
                        match kept_as {
                            Some(Ok(dir)) => {
                                bundles += 1;
                                write_sequence(&dir, done, &checks)?;
                                bundle = Some(dir);
                            }
                            Some(Err(why)) => sink.warning(&format!(
                                "cut {}: the power cut could not be kept as a crash bundle: {why}",
                                round + 1
                            )),
                            None => {}
                        }
                    }
                    None => return Ok(false),
                }
            } else {
                let (cut, found) = match cut_and_check(harness, &oracle, &root) {
                    Ok(done) => done,
                    Err(CutError::Unsupported(why)) => return Err(Stopped::Unsupported(why)),
                    Err(CutError::Failed(why)) => return Err(failed(why)),
                };
                tally.recoveries.record(cut.recovery_ns);
                if cut.fsck_clean.is_none() {
                    tally.fsck_unchecked = true;
                }
                checks.push((None, found));
            }
            for (state, found) in checks {
                let first_kept = kept.len();
                for v in &found {
                    by_kind[Kind::ALL.iter().position(|k| *k == v.kind).expect("a kind")] += 1;
                    if kept.len() < KEPT {
                        let mut entry = serde_json::json!({
                            "kind": v.kind.name(),
                            "path": v.path,
                            "detail": v.detail,
                            "cut": round + 1,
                            "family": if self.sequence.is_some() { "given" } else { family.name() },
                            "sequence": done.iter().map(ToString::to_string).collect::<Vec<_>>(),
                        });
                        if let Some((index, what)) = &state {
                            entry["crash_state"] = what.clone().into();
                            entry["crash_state_index"] = (*index).into();
                        }
                        if let Some(dir) = &bundle {
                            entry["bundle"] = dir.display().to_string().into();
                        }
                        kept.push(entry);
                    }
                }
                if let Some(v) = found.first() {
                    // One violation a cut (of a power cut: its first state's first).
                    let reduced = to_reduce.iter().any(|r| r.1 == round);
                    if !reduced && first_kept < kept.len() && (to_reduce.len() as u64) < self.reduce
                    {
                        to_reduce.push((first_kept, round, done.to_vec(), v.kind));
                    }
                    let at = state
                        .map(|(_, s)| format!(", crash state {s}"))
                        .unwrap_or_default();
                    sink.warning(&format!(
                        "cut {}{at}: {v} (after: {})",
                        round + 1,
                        said(done)
                    ));
                }
            }
            sink.status(&format!(
                "cut {} of {cuts}: {} violation(s) so far",
                round + 1,
                by_kind.iter().sum::<u64>()
            ));
            if let Err(e) = fsbench_measure::walk::remove_tree(&root) {
                return Err(WorkloadError::Harness(format!("cannot remove {name}: {e}")).into());
            }
        }
        let elapsed = now_ns() - started;
        let mut replays = 0;
        let cut_after_last = match self.cut {
            CutKind::Shutdown => "cut after the last",
            CutKind::Power => "power cut after the last, in some crash state",
        };
        for (n, (at, round, steps, kind)) in to_reduce.into_iter().enumerate() {
            if stop.is_requested() {
                return Ok(false);
            }
            sink.status(&format!("reducing the sequence of violation {}", n + 1));
            let root = top.join(format!("reduce-{n}"));
            let mut replay = |steps: &[Step]| -> Result<bool, Stopped> {
                replays += 1;
                let found = self.replayed(
                    &root,
                    steps,
                    seed,
                    round,
                    &mut next_id,
                    &mut data,
                    harness,
                    stop,
                )?;
                Ok(found.iter().any(|v| v.kind == kind))
            };
            let reduced = reduce(&steps, &mut replay, stop)?;
            let entry = kept[at]
                .as_object_mut()
                .expect("a kept violation is an object");
            match reduced {
                Some((minimal, tries)) => {
                    entry.insert(
                        "minimal".into(),
                        minimal
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .into(),
                    );
                    entry.insert(
                        "reduction".into(),
                        format!(
                            "{} of {} operations still break it ({cut_after_last}), found in \
                             {tries} replays",
                            minimal.len(),
                            steps.len()
                        )
                        .into(),
                    );
                }
                None => {
                    entry.insert(
                        "reduction".into(),
                        format!(
                            "not reproduced by a replay of the whole sequence ({cut_after_last} \
                             operation): the cut's timing decided it"
                        )
                        .into(),
                    );
                }
            }
        }
        let total: u64 = by_kind.iter().sum();
        let mut measurements = vec![
            VIOLATIONS.at(total as f64),
            CUTS.at(cuts as f64),
            OPS.at(operations as f64),
            ELAPSED.at(elapsed as f64),
        ];
        measurements.extend(BY_KIND.iter().zip(by_kind).map(|(m, n)| m.at(n as f64)));
        if self.cut == CutKind::Power {
            measurements.push(CRASH_STATES.at(tally.crash_states as f64));
        }
        let summary = tally.recoveries.summary();
        measurements.extend([
            RECOVERY[0].at(summary.p50_ns as f64),
            RECOVERY[1].at(summary.mean_ns),
            RECOVERY[2].at(summary.p99_ns as f64),
            RECOVERY[3].at(summary.max_ns as f64),
        ]);
        let mut attributes = serde_json::Map::new();
        attributes.insert(
            "sequences".into(),
            match &self.sequence {
                Some(given) => format!("given: {given}"),
                None => self.sequences.to_string(),
            }
            .into(),
        );
        attributes.insert("cut_at".into(), self.cut_at.to_string().into());
        if replays > 0 {
            attributes.insert(
                "reduction_replays".into(),
                format!(
                    "{replays} cuts after the timed ones, replaying violations' sequences to \
                     reduce them (not counted in cuts)"
                )
                .into(),
            );
        }
        if !fallocate {
            attributes.insert(
                "fallocate".into(),
                "not taken by this filesystem: left out of the sequences".into(),
            );
        }
        attributes.insert(
            "cut".into(),
            match self.cut {
                CutKind::Shutdown => "shutdown ioctl (FS_IOC_SHUTDOWN), log not flushed".into(),
                CutKind::Power if self.flushes == Flushes::Ignored => format!(
                    "power cut of the recording device ignoring flushes: the state at the \
                     sequence's start and up to {} seeded subsets of every write since, mounted \
                     and checked",
                    self.crash_states
                ),
                CutKind::Power => format!(
                    "power cut of the recording device: every crash state of the write log — at \
                     each flush, and up to {} of the writes since it (seeded) — mounted and checked",
                    self.crash_states
                ),
            }
            .into(),
        );
        if tally.fsck_unchecked {
            attributes.insert(
                "fsck".into(),
                "none: the filesystem has no check tool".into(),
            );
        }
        if total as usize > kept.len() {
            attributes.insert(
                "violations_kept".into(),
                format!("the first {} of {total}", kept.len()).into(),
            );
        }
        attributes.insert("violation_list".into(), serde_json::Value::Array(kept));
        sink.record(
            ResultRecord {
                attributes,
                measurements,
                ..ResultRecord::default()
            },
            1,
            Some(1),
        );
        Ok(true)
    }
}

/// Cuts the filesystem and checks what survived in `root` against `oracle`; an fsck that
/// found errors is a violation of its own.
fn cut_and_check(
    harness: &mut dyn Harness,
    oracle: &Oracle,
    root: &Path,
) -> Result<(crate::harness::Cut, Vec<Violation>), CutError> {
    let cut = harness.cut()?;
    let mut found = oracle.check(root);
    found.extend(fsck_violation(cut.fsck_clean, &cut.fsck_said));
    Ok((cut, found))
}

/// The violation a read-only check that found errors after the recovery is.
fn fsck_violation(clean: Option<bool>, said: &str) -> Option<Violation> {
    (clean == Some(false)).then(|| Violation {
        kind: Kind::FsckErrors,
        path: String::new(),
        detail: format!("the filesystem check after the recovery: {said}"),
    })
}

/// What the cuts of a run found besides violations.
#[derive(Default)]
struct Tally {
    /// The mounts after each cut (each crash state of a power cut).
    recoveries: Histogram,
    /// Crash states made and checked.
    crash_states: u64,
    /// Some check had no filesystem check to run.
    fsck_unchecked: bool,
}

/// What was promised at each mark of a sequence on the recording device (0: the setup): the
/// oracle then, and how many of its calls it had told. Empty for the shutdown cut.
type Views = Vec<(Oracle, usize)>;

/// Each check of a cut: the crash state it was of (power cuts: its index in the cut's list and
/// what it is), what it found.
type Checks = Vec<(Option<(usize, String)>, Vec<Violation>)>;

/// A power cut's checks, and where it was kept as a crash bundle (or why it could not be).
type PowerChecks = (Checks, Option<Result<std::path::PathBuf, String>>);

/// Power cuts kept as crash bundles in a run, at most (`keep_states`).
const BUNDLES: usize = 5;

/// Mark `n` set on the recording device ("operation n returned") and the oracle kept as of it;
/// nothing without a recording (`views` is then empty and stays so).
fn mark(harness: &mut dyn Harness, views: &mut Views, oracle: &Oracle, n: usize) {
    if !views.is_empty() {
        harness.mark(n as u64);
        views.push((oracle.clone(), oracle.events().len()));
    }
}

impl DurabilitySettings {
    /// A sequence's start in `root` (made already): with a power cut the recording begins (what
    /// the device holds now is where every crash state starts), then the setup's files are
    /// made; the views of the marks, begun with mark 0 (the setup) on the recording device.
    fn begin(
        &self,
        harness: &mut dyn Harness,
        root: &Path,
        oracle: &mut Oracle,
        data: &mut DataSource,
        what: impl Fn() -> String,
    ) -> Result<Views, Stopped> {
        let power = self.cut == CutKind::Power;
        if power {
            match harness.record() {
                Ok(()) => {}
                Err(CutError::Unsupported(why)) => return Err(Stopped::Unsupported(why)),
                Err(CutError::Failed(why)) => {
                    return Err(WorkloadError::Harness(format!("{} failed: {why}", what())).into())
                }
            }
        }
        ops::setup(root, oracle, data)?;
        let mut views = Views::new();
        if power {
            harness.mark(0);
            views.push((oracle.clone(), oracle.events().len()));
        }
        Ok(views)
    }

    /// The crash states a power cut after the sequence of `round` lists: seeded by the run's
    /// seed and the round, so a replay of the round's sequence lists the same subsets of a
    /// log like its.
    fn budget(&self, seed: u64, round: u64) -> PowerBudget {
        PowerBudget {
            per_flush: self.crash_states as usize,
            seed: seed ^ round,
            ignore_flushes: self.flushes == Flushes::Ignored,
        }
    }

    /// `steps` run again from the setup in `root` (made and removed here), cut after the last
    /// as the run cuts (a power cut: every crash state its budget lists for `round`, checked):
    /// the violations found.
    #[allow(clippy::too_many_arguments)]
    fn replayed(
        &self,
        root: &Path,
        steps: &[Step],
        seed: u64,
        round: u64,
        next_id: &mut oracle::FileId,
        data: &mut DataSource,
        harness: &mut dyn Harness,
        stop: &StopFlag,
    ) -> Result<Vec<Violation>, Stopped> {
        std::fs::create_dir(root)
            .map_err(|e| WorkloadError::io("create the directory", root, e))?;
        let what = || format!("a replay of {}", said(steps));
        let mut oracle = Oracle::new(seed, *next_id);
        let mut views = self.begin(harness, root, &mut oracle, data, what)?;
        for (k, step) in steps.iter().enumerate() {
            ops::run(root, step, &mut oracle, data)?;
            mark(harness, &mut views, &oracle, k + 1);
        }
        *next_id = oracle.next_id();
        let failed = |why: String| -> Stopped {
            WorkloadError::Harness(format!("the cut after {} failed: {why}", what())).into()
        };
        let found = if self.cut == CutKind::Power {
            let budget = self.budget(seed, round);
            let mut tally = Tally::default();
            let sequence = (&views, &oracle, root);
            match check_states(harness, budget, sequence, None, stop, &mut tally, &failed)? {
                Some((checks, _)) => checks.into_iter().flat_map(|(_, found)| found).collect(),
                None => Vec::new(),
            }
        } else {
            match cut_and_check(harness, &oracle, root) {
                Ok((_, found)) => found,
                Err(CutError::Unsupported(why)) => return Err(Stopped::Unsupported(why)),
                Err(CutError::Failed(why)) => return Err(failed(why)),
            }
        };
        fsbench_measure::walk::remove_tree(root).map_err(|e| {
            WorkloadError::Harness(format!("cannot remove {}: {e}", root.display()))
        })?;
        Ok(found)
    }
}

/// The sequence of a power cut kept as a crash bundle, beside it in `sequence.txt`: the
/// operations as `--sequence` reads them, and each state that broke a promise with what broke.
fn write_sequence(dir: &Path, done: &[Step], checks: &Checks) -> Result<(), WorkloadError> {
    use std::io::Write;
    let path = dir.join("sequence.txt");
    let mut text = format!(
        "# The operations of this power cut (as --sequence reads them), one a line; then the\n\
         # crash states that broke a promise: fsbench crash-state {} --state N --to IMAGE\n",
        dir.display()
    );
    for step in done {
        text.push_str(&format!("{step}\n"));
    }
    for (state, found) in checks {
        if let (Some((index, what)), Some(first)) = (state, found.first()) {
            text.push_str(&format!("# state {index} ({what}): {first}\n"));
        }
    }
    let write = || -> std::io::Result<()> {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?
            .write_all(text.as_bytes())
    };
    write().map_err(|e| WorkloadError::io("write the sequence of", &path, e))
}

/// The power cut after a sequence: every crash state `budget` lists made, mounted and checked
/// — fsck's verdict, and the files of `root` against what was promised at the state's mark,
/// knowing every later call — then, when one broke a promise and `keep` names a directory,
/// the cut kept there as a crash bundle (its path, or why not), and the filesystem resumed.
/// `sequence` is the views of its marks, the oracle after its last operation, and its
/// directory. None: stopped (resumed).
fn check_states(
    harness: &mut dyn Harness,
    budget: PowerBudget,
    sequence: (&Views, &Oracle, &Path),
    keep: Option<&Path>,
    stop: &StopFlag,
    tally: &mut Tally,
    failed: &dyn Fn(String) -> Stopped,
) -> Result<Option<PowerChecks>, Stopped> {
    let (views, oracle, root) = sequence;
    let states = match harness.power_cut(budget) {
        Ok(states) => states,
        Err(CutError::Unsupported(why)) => return Err(Stopped::Unsupported(why)),
        Err(CutError::Failed(why)) => return Err(failed(why)),
    };
    let mut checks = Checks::new();
    for (i, state) in states.iter().enumerate() {
        if stop.is_requested() {
            let _ = harness.resume();
            return Ok(None);
        }
        let check = harness.crash_state(i).map_err(|e| failed(e.to_string()))?;
        tally.crash_states += 1;
        let mut found = Vec::new();
        match &check.unmountable {
            Some(why) => found.push(Violation {
                kind: Kind::FsckErrors,
                path: String::new(),
                detail: format!("the crash state did not mount: {why}"),
            }),
            None => {
                tally.recoveries.record(check.recovery_ns);
                // The view of the state's promises, knowing every later call.
                let view = state.promised.and_then(|m| views.get(m as usize));
                if let Some((at_mark, told)) = view {
                    let mut view = at_mark.clone();
                    view.replay_operations(&oracle.events()[*told..]);
                    found = view.check(root);
                }
            }
        }
        found.extend(fsck_violation(check.fsck_clean, &check.fsck_said));
        tally.fsck_unchecked |= check.fsck_clean.is_none() && check.unmountable.is_none();
        checks.push((Some((i, state.what.clone())), found));
    }
    let broken = checks.iter().any(|(_, found)| !found.is_empty());
    let kept = match keep {
        Some(dir) if broken => Some(harness.keep_power_cut(dir).map_err(|e| e.to_string())),
        _ => None,
    };
    harness.resume().map_err(|e| failed(e.to_string()))?;
    Ok(Some((checks, kept)))
}

/// Most replays one reduction makes, per operation of the sequence.
const REPLAYS_PER_STEP: usize = 3;

/// The shortest sequence found from `steps` that still `breaks` (a replay, cut after its last
/// operation, that finds the violation again), and the replays it took; None when `steps`
/// themselves do not break it again. Greedy, as delta debugging's one-at-a-time pass: each
/// operation, from the last, is left out when the sequence without it still fits the setup's
/// files and still breaks; passes repeat while one removes something, within
/// [`REPLAYS_PER_STEP`] replays per operation.
fn reduce(
    steps: &[Step],
    breaks: &mut dyn FnMut(&[Step]) -> Result<bool, Stopped>,
    stop: &StopFlag,
) -> Result<Option<(Vec<Step>, usize)>, Stopped> {
    let budget = REPLAYS_PER_STEP * steps.len() + 1;
    let mut tries = 1;
    if !breaks(steps)? {
        return Ok(None);
    }
    let setup = ops::setup_state();
    let mut now = steps.to_vec();
    loop {
        let mut removed = false;
        for i in (0..now.len()).rev() {
            if now.len() == 1 || tries >= budget || stop.is_requested() {
                return Ok(Some((now, tries)));
            }
            let mut without = now.clone();
            without.remove(i);
            if ops::Sequence(without.clone()).fits(&setup).is_err() {
                continue;
            }
            tries += 1;
            if breaks(&without)? {
                now = without;
                removed = true;
            }
        }
        if !removed {
            return Ok(Some((now, tries)));
        }
    }
}

/// A sequence as one line.
fn said(steps: &[Step]) -> String {
    steps
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::ops::{Op, Persist};
    use super::*;
    use crate::harness::Survives;
    use crate::workload::Collect;

    fn figure(sink: &Collect, name: &str) -> f64 {
        sink.records[0].measurement(name).unwrap().value
    }

    /// Where a cut keeps everything (the harness cuts nothing), every sequence of every family
    /// finds every promise kept: the oracle never reports what was written and kept.
    #[test]
    fn a_cut_that_keeps_everything_breaks_no_promise() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let settings = DurabilitySettings {
            cuts: 120,
            seed: Some(7),
            ..DurabilitySettings::default()
        };
        let mut sink = Collect::default();
        let mut harness = Survives::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
        assert_eq!(harness.cuts, 120);
        assert_eq!(figure(&sink, "cuts"), 120.0);
        assert_eq!(figure(&sink, "violations"), 0.0, "{:?}", sink.warnings);
        assert!(figure(&sink, "ops") >= 120.0);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    /// A cut that loses data (every file of the sequence emptied, as a broken filesystem
    /// would): each cut's durable files are reported lost, and the figures agree with what
    /// was found — violations the sum of the kinds, kept violations with their sequence, the
    /// recovery the harness's, in ns.
    #[test]
    fn a_cut_that_loses_data_is_counted_by_kind_and_kept_with_its_sequence() {
        /// Cuts by emptying every regular file below `dir`; its recovery takes 2 ms.
        struct Emptying(std::path::PathBuf, u32);
        impl Harness for Emptying {
            fn cold(&mut self) -> Result<String, String> {
                Err("no".into())
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
            fn cut(&mut self) -> Result<crate::harness::Cut, CutError> {
                fn empty(dir: &Path) {
                    for entry in std::fs::read_dir(dir).unwrap().flatten() {
                        let kind = entry.file_type().unwrap();
                        if kind.is_dir() {
                            empty(&entry.path());
                        } else if kind.is_file() {
                            std::fs::write(entry.path(), b"").unwrap();
                        }
                    }
                }
                empty(&self.0);
                self.1 += 1;
                Ok(crate::harness::Cut {
                    how: "emptied (a test)".into(),
                    recovery_ns: 2_000_000,
                    fsck_clean: Some(self.1 != 2),
                    fsck_said: "e2fsck: errors (a test)".into(),
                })
            }
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let settings = DurabilitySettings {
            cuts: 5,
            seed: Some(3),
            ..DurabilitySettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut Emptying(dir.path().to_path_buf(), 0),
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
        let total = figure(&sink, "violations");
        let kinds: f64 = BY_KIND.iter().map(|k| figure(&sink, k.name)).sum();
        assert_eq!(total, kinds);
        // The setup's three files were made durable with data: each cut loses at least one
        // (the sequence may have removed or renamed some), and the second cut's fsck failed.
        assert!(
            figure(&sink, "lost_fsynced_data") >= 5.0,
            "{:?}",
            sink.warnings
        );
        assert_eq!(figure(&sink, "fsck_errors"), 1.0);
        assert_eq!(figure(&sink, "cuts"), 5.0);
        let recovery = figure(&sink, "recovery_p50");
        assert!((recovery / 2e6 - 1.0).abs() < 0.05, "{recovery} ns");
        let kept = sink.records[0].attributes["violation_list"]
            .as_array()
            .unwrap();
        assert_eq!(kept.len() as f64, total.min(KEPT as f64));
        assert!(kept
            .iter()
            .all(|v| v["kind"].is_string() && v["cut"].as_u64().unwrap() >= 1));
        assert!(kept.iter().any(|v| v["kind"] == "fsck errors"));
        // One warning a cut, each naming its first violation and the sequence before it.
        assert_eq!(sink.warnings.len(), 5, "{:?}", sink.warnings);
        assert!(sink.warnings.iter().all(|w| w.contains("(after: ")));
    }

    /// A violation's sequence is reduced to the operations that still break the promise: with
    /// a cut that empties every file named C, only C's creation and its fsync'd write are
    /// left of seven operations; the figures count the timed cut only; a sequence whose cut
    /// breaks nothing when replayed says it was not reproduced.
    #[test]
    fn a_violation_is_kept_with_its_minimal_sequence() {
        /// Cuts by emptying every file named C below `dir`, a number of times (then none).
        struct LosesC(std::path::PathBuf, u32, u32);
        impl Harness for LosesC {
            fn cold(&mut self) -> Result<String, String> {
                Err("no".into())
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
            fn cut(&mut self) -> Result<crate::harness::Cut, CutError> {
                fn lose(dir: &Path) {
                    for entry in std::fs::read_dir(dir).unwrap().flatten() {
                        if entry.file_type().unwrap().is_dir() {
                            lose(&entry.path());
                        } else if entry.file_name() == "C" {
                            std::fs::write(entry.path(), b"").unwrap();
                        }
                    }
                }
                self.1 += 1;
                if self.1 <= self.2 {
                    lose(&self.0);
                }
                Ok(crate::harness::Cut {
                    how: "C emptied (a test)".into(),
                    recovery_ns: 1_000_000,
                    fsck_clean: Some(true),
                    fsck_said: String::new(),
                })
            }
        }
        let given = "append A 4k; fsync A; create C; write C 8k@0; fsync C; unlink B; mkdir e; \
                     append d/A 4k; fsync d/A; link A d/B; syncfs";
        for (losing, minimal) in [
            (u32::MAX, Some(vec!["create C", "write C 8k@0; fsync C"])),
            (1, None),
        ] {
            let dir = tempfile::tempdir_in("/var/tmp").unwrap();
            let settings = DurabilitySettings {
                cuts: 1,
                seed: Some(5),
                cut_at: CutAt::End,
                sequence: Some(given.parse().unwrap()),
                ..DurabilitySettings::default()
            };
            let mut sink = Collect::default();
            let mut harness = LosesC(dir.path().to_path_buf(), 0, losing);
            let end = settings.run(
                &Context::default(),
                dir.path(),
                &StopFlag::new(),
                &mut sink,
                &mut harness,
            );
            assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
            assert_eq!(figure(&sink, "cuts"), 1.0);
            assert_eq!(figure(&sink, "violations"), 1.0, "{:?}", sink.warnings);
            assert_eq!(figure(&sink, "lost_fsynced_data"), 1.0);
            let kept = &sink.records[0].attributes["violation_list"][0];
            assert_eq!(kept["sequence"].as_array().unwrap().len(), 7, "{kept}");
            let reduction = kept["reduction"].as_str().unwrap();
            match minimal {
                Some(minimal) => {
                    assert_eq!(kept["minimal"], serde_json::json!(minimal), "{kept}");
                    assert!(reduction.starts_with("2 of 7 operations"), "{reduction}");
                    assert!(harness.1 > 2 && harness.1 <= 1 + 1 + 3 * 7, "{}", harness.1);
                    // The replays said are the cuts the harness made after the timed one.
                    let replays = sink.records[0].attributes["reduction_replays"]
                        .as_str()
                        .unwrap();
                    assert!(
                        replays.starts_with(&format!("{} cuts after", harness.1 - 1)),
                        "{replays}"
                    );
                    assert!(reduction.ends_with(&format!("{} replays", harness.1 - 1)));
                }
                None => {
                    assert!(kept.get("minimal").is_none(), "{kept}");
                    assert!(reduction.starts_with("not reproduced"), "{reduction}");
                    assert_eq!(harness.1, 2);
                }
            }
            assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        }
    }

    /// A power cut through a harness that records what it is asked (a recording fake of the
    /// device; the real one: the CLI's known-answer test): a recording before each sequence, a
    /// mark after the setup and after each operation, every listed state checked once, then
    /// resumed; `crash_states` is the states checked, the recovery the states', and a state
    /// whose fsck found errors or that did not mount is a violation each, kept with its state.
    #[test]
    fn a_power_cut_checks_every_state_it_lists_and_counts_them() {
        #[derive(Default)]
        struct Powered {
            said: Vec<String>,
            marks: u64,
            states: u64,
        }
        impl Harness for Powered {
            fn cold(&mut self) -> Result<String, String> {
                Err("no".into())
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
            fn record(&mut self) -> Result<(), CutError> {
                self.said.push("record".into());
                Ok(())
            }
            fn mark(&mut self, n: u64) {
                self.marks += 1;
                self.said.push(format!("mark {n}"));
            }
            fn power_cut(
                &mut self,
                budget: PowerBudget,
            ) -> Result<Vec<crate::harness::CrashState>, CutError> {
                assert_eq!(budget.per_flush, 5);
                self.said.push("power".into());
                // Before the setup's mark, at it, and a later one: the tree as it is is
                // what each promised (nothing, the setup, everything).
                Ok([None, Some(0), Some(self.marks - 1)]
                    .into_iter()
                    .enumerate()
                    .map(|(i, promised)| crate::harness::CrashState {
                        what: format!("state {i}"),
                        promised,
                    })
                    .collect())
            }
            fn crash_state(&mut self, i: usize) -> Result<crate::harness::StateCheck, CutError> {
                self.states += 1;
                self.said.push(format!("state {i}"));
                Ok(crate::harness::StateCheck {
                    recovery_ns: 3_000_000,
                    fsck_clean: Some(i != 1 || self.states > 3),
                    fsck_said: "e2fsck: errors (a test)".into(),
                    unmountable: (i == 2 && self.states == 3).then(|| "bad superblock".into()),
                })
            }
            fn resume(&mut self) -> Result<(), CutError> {
                self.said.push("resume".into());
                Ok(())
            }
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let settings = DurabilitySettings {
            cuts: 4,
            seed: Some(2),
            cut: CutKind::Power,
            crash_states: 5,
            cut_at: CutAt::End,
            // The reduction's replays are another test's.
            reduce: 0,
            ..DurabilitySettings::default()
        };
        assert!(settings.records_writes());
        let mut sink = Collect::default();
        let mut harness = Powered::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
        assert_eq!(figure(&sink, "cuts"), 4.0);
        assert_eq!(figure(&sink, "crash_states"), 12.0);
        assert_eq!(harness.states, 12);
        // One state of the first cut did not mount, one failed its check: two violations, no
        // broken promise of the tree (nothing was lost).
        assert_eq!(figure(&sink, "fsck_errors"), 2.0, "{:?}", sink.warnings);
        assert_eq!(figure(&sink, "violations"), 2.0);
        let recovery = figure(&sink, "recovery_p50");
        assert!((recovery / 3e6 - 1.0).abs() < 0.05, "{recovery} ns");
        let kept = sink.records[0].attributes["violation_list"]
            .as_array()
            .unwrap();
        assert_eq!(kept[0]["crash_state"], "state 1");
        assert!(kept[1]["detail"]
            .as_str()
            .unwrap()
            .contains("did not mount: bad superblock"));
        // Each cut: record, a mark a step and the setup's, the cut, its states, resume.
        let first_power = harness.said.iter().position(|s| s == "power").unwrap();
        assert_eq!(harness.said[0], "record");
        assert!(harness.said[1..first_power]
            .iter()
            .enumerate()
            .all(|(k, s)| *s == format!("mark {k}")));
        assert_eq!(
            harness.said[first_power..first_power + 5],
            ["power", "state 0", "state 1", "state 2", "resume"]
        );
        assert_eq!(harness.said.iter().filter(|s| *s == "record").count(), 4);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    /// A power cut's violation is reduced by replaying power cuts: here every crash state of a
    /// sequence of two operations or more fails its check, so the sequence is cut down to its
    /// first operation (removals from the end), each replay a whole power cut (record, marks,
    /// cut, states, resume) with the device's flushes as the run had them.
    #[test]
    fn a_power_cut_violation_is_reduced_by_replayed_power_cuts() {
        #[derive(Default)]
        struct Lossy {
            marks: u64,
            records: u64,
            resumes: u64,
            ignored: Vec<bool>,
        }
        impl Harness for Lossy {
            fn cold(&mut self) -> Result<String, String> {
                Err("no".into())
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
            fn record(&mut self) -> Result<(), CutError> {
                self.records += 1;
                self.marks = 0;
                Ok(())
            }
            fn mark(&mut self, _: u64) {
                self.marks += 1;
            }
            fn power_cut(
                &mut self,
                budget: PowerBudget,
            ) -> Result<Vec<crate::harness::CrashState>, CutError> {
                self.ignored.push(budget.ignore_flushes);
                Ok(vec![crate::harness::CrashState {
                    what: "after flush 1".into(),
                    promised: Some(0),
                }])
            }
            fn crash_state(&mut self, _: usize) -> Result<crate::harness::StateCheck, CutError> {
                // The setup's mark and two operations' or more: the check finds errors.
                Ok(crate::harness::StateCheck {
                    recovery_ns: 1_000_000,
                    fsck_clean: Some(self.marks < 3),
                    fsck_said: "e2fsck: errors (a test)".into(),
                    unmountable: None,
                })
            }
            fn resume(&mut self) -> Result<(), CutError> {
                self.resumes += 1;
                Ok(())
            }
            fn keep_power_cut(&mut self, dir: &Path) -> Result<std::path::PathBuf, CutError> {
                let bundle = dir.join(format!("bundle-{}", self.records));
                std::fs::create_dir_all(&bundle).unwrap();
                Ok(bundle)
            }
        }
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let bundles = tempfile::tempdir_in("/var/tmp").unwrap();
        let settings = DurabilitySettings {
            cuts: 1,
            seed: Some(9),
            keep_states: Some(bundles.path().to_path_buf()),
            cut: CutKind::Power,
            flushes: Flushes::Ignored,
            sequences: "mixed".parse().unwrap(),
            ops: 6,
            cut_at: CutAt::End,
            ..DurabilitySettings::default()
        };
        let mut sink = Collect::default();
        let mut harness = Lossy::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
        assert_eq!(figure(&sink, "cuts"), 1.0);
        assert_eq!(
            figure(&sink, "crash_states"),
            1.0,
            "replays are not counted"
        );
        let kept = &sink.records[0].attributes["violation_list"][0];
        let minimal = kept["minimal"].as_array().expect("reduced");
        assert_eq!(minimal.len(), 2, "{kept}");
        assert_eq!(minimal[..], kept["sequence"].as_array().unwrap()[..2]);
        assert!(kept["reduction"]
            .as_str()
            .unwrap()
            .contains("2 of 6 operations still break it (power cut after the last"));
        // The run's power cut, then each replay of the reduction a power cut of its own: the
        // whole sequence, 4 removals that still break it, and the 2 tries of each of the
        // last two passes that do not.
        assert!(kept["reduction"]
            .as_str()
            .unwrap()
            .ends_with("found in 9 replays"));
        assert_eq!(harness.records, 1 + 9, "{kept}");
        assert_eq!(harness.resumes, harness.records);
        assert!(
            harness.ignored.iter().all(|i| *i),
            "flushes ignored in every cut"
        );
        assert!(sink.records[0].attributes["cut"]
            .as_str()
            .unwrap()
            .contains("ignoring flushes"));
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        // The run's power cut kept as a bundle (the replays' not), with its sequence beside.
        let bundle = bundles.path().join("bundle-1");
        assert_eq!(kept["bundle"], bundle.display().to_string());
        assert_eq!(kept["crash_state_index"], 0);
        assert_eq!(std::fs::read_dir(bundles.path()).unwrap().count(), 1);
        let sequence = std::fs::read_to_string(bundle.join("sequence.txt")).unwrap();
        let steps: Vec<&str> = sequence.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            steps,
            kept["sequence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect::<Vec<_>>()
        );
        assert!(
            sequence.contains("# state 0 (after flush 1): "),
            "{sequence}"
        );
    }

    /// Ignored flushes are a model of the recording device: refused with the shutdown cut.
    #[test]
    fn ignored_flushes_need_the_power_cut() {
        let settings = DurabilitySettings {
            flushes: Flushes::Ignored,
            ..DurabilitySettings::default()
        };
        let e = settings.check(&Context::default()).unwrap_err().to_string();
        assert!(e.contains("flushes") && e.contains("cut = power"), "{e}");
    }

    /// Without a harness that can cut, the run ends unsupported, saying why.
    #[test]
    fn a_harness_that_cannot_cut_makes_the_run_unsupported() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let mut sink = Collect::default();
        let end = DurabilitySettings::default().run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Unsupported);
        assert!(end.error.unwrap().to_string().contains("cannot cut"));
        assert!(sink.records.is_empty());
    }

    /// A sequence's state after its setup and `steps`, run for real in a new directory.
    fn ran(steps: &[Step]) -> (tempfile::TempDir, Oracle) {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let mut oracle = Oracle::new(9, 1);
        let mut data = DataSource::new(DataKind::Random, 9, 16 << 10);
        ops::setup(dir.path(), &mut oracle, &mut data).unwrap();
        for step in steps {
            ops::run(dir.path(), step, &mut oracle, &mut data).unwrap();
        }
        (dir, oracle)
    }

    fn step(op: Op, persist: Persist) -> Step {
        Step { op, persist }
    }

    /// A tree where an fsync'd file was cut short (made by the test) is reported as lost
    /// fsync'd data of that file, and nothing else.
    #[test]
    fn an_fsynced_file_cut_short_is_lost_data_and_nothing_else() {
        let (dir, oracle) = ran(&[step(
            Op::Append {
                name: "B".into(),
                blocks: 3,
            },
            Persist::Fsync,
        )]);
        assert_eq!(oracle.check(dir.path()), []);
        let b = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("B"))
            .unwrap();
        b.set_len(8192).unwrap();
        let found = oracle.check(dir.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, Kind::LostData);
        assert_eq!(found[0].path, "B");
        assert!(found[0].detail.contains("8192 bytes"), "{}", found[0]);
    }

    /// A view of what was promised at an earlier point (a mark of the recording device),
    /// given the operations told since: a later write found in the tree is no violation — it
    /// may have reached the device before the cut — and losing what was promised at the mark
    /// is one; the oracle of the end holds the later promises too.
    #[test]
    fn a_view_of_an_earlier_mark_knows_later_writes_but_not_their_promises() {
        let write = |name: &str, persist| {
            step(
                Op::Write {
                    name: name.into(),
                    at: 0,
                    blocks: 2,
                },
                persist,
            )
        };
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let mut oracle = Oracle::new(9, 1);
        let mut data = DataSource::new(DataKind::Random, 9, 16 << 10);
        ops::setup(dir.path(), &mut oracle, &mut data).unwrap();
        // Mark 1: B's two blocks fsync'd. Then A rewritten and fsync'd (promised after mark 1).
        ops::run(
            dir.path(),
            &write("B", Persist::Fsync),
            &mut oracle,
            &mut data,
        )
        .unwrap();
        let (at_mark, told) = (oracle.clone(), oracle.events().len());
        ops::run(
            dir.path(),
            &write("A", Persist::Fsync),
            &mut oracle,
            &mut data,
        )
        .unwrap();
        let mut view = at_mark.clone();
        view.replay_operations(&oracle.events()[told..]);
        assert_eq!(view.check(dir.path()), [], "the tree as the end left it");
        // A back to the setup's bytes (its rewrite lost): no promise of mark 1 broken, but
        // the end's oracle says its fsync'd data is lost.
        let setup_a = {
            let (setup_dir, _) = ran(&[]);
            std::fs::read(setup_dir.path().join("A")).unwrap()
        };
        let a = dir.path().join("A");
        std::fs::write(&a, &setup_a).unwrap();
        let lost = oracle.check(dir.path());
        assert!(
            lost.iter()
                .any(|v| v.kind == Kind::LostData && v.path == "A"),
            "{lost:?}"
        );
        // The setup's data was written with the same seed, ids and sequence numbers as the
        // view's setup: it is A's data as of mark 1.
        assert_eq!(view.check(dir.path()), []);
        // B cut short: mark 1's promise broken, in the view as at the end.
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("B"))
            .unwrap()
            .set_len(4096)
            .unwrap();
        let broken = view.check(dir.path());
        assert_eq!(
            broken
                .iter()
                .map(|v| (v.kind, v.path.as_str()))
                .collect::<Vec<_>>(),
            [(Kind::LostData, "B")],
            "{broken:?}"
        );
    }

    /// Every kind the oracle tells apart, each from a tree the test damages.
    #[test]
    fn each_broken_promise_is_told_by_its_kind() {
        // A name made durable by its directory's fsync, gone.
        let (dir, oracle) = ran(&[step(Op::Create { name: "C".into() }, Persist::FsyncDir)]);
        std::fs::remove_file(dir.path().join("C")).unwrap();
        let found = oracle.check(dir.path());
        assert_eq!(
            found
                .iter()
                .map(|v| (v.kind, v.path.as_str()))
                .collect::<Vec<_>>(),
            [(Kind::MissingName, "C")]
        );
        // A rename over a durable name (A) of an fsync'd file: A empty after the cut.
        let (dir, oracle) = ran(&[
            step(Op::Create { name: "C".into() }, Persist::None),
            step(
                Op::Write {
                    name: "C".into(),
                    at: 0,
                    blocks: 1,
                },
                Persist::Fsync,
            ),
            step(
                Op::Rename {
                    from: "C".into(),
                    to: "A".into(),
                },
                Persist::None,
            ),
        ]);
        assert_eq!(oracle.check(dir.path()), []);
        // Emptied: the new file's fsync'd data is lost.
        let a = dir.path().join("A");
        let kinds = |found: Vec<Violation>| {
            found
                .into_iter()
                .map(|v| (v.kind, v.path))
                .collect::<Vec<_>>()
        };
        let content = std::fs::read(&a).unwrap();
        std::fs::write(&a, b"").unwrap();
        assert_eq!(
            kinds(oracle.check(dir.path())),
            [(Kind::LostData, "A".to_string())]
        );
        // Another file (neither the old A nor the new) under the name, or none at all.
        std::fs::write(dir.path().join("x"), &content).unwrap();
        std::fs::rename(dir.path().join("x"), &a).unwrap();
        assert!(kinds(oracle.check(dir.path())).contains(&(Kind::RenameNotAtomic, "A".into())));
        std::fs::remove_file(&a).unwrap();
        assert_eq!(
            kinds(oracle.check(dir.path())),
            [(Kind::RenameNotAtomic, "A".to_string())]
        );
        // Another file's block in a file: stale data, whatever was promised.
        let (dir, oracle) = ran(&[]);
        let b = std::fs::read(dir.path().join("B")).unwrap();
        let a = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("A"))
            .unwrap();
        std::os::unix::fs::FileExt::write_all_at(&a, &b[..4096], 4096).unwrap();
        let found = oracle.check(dir.path());
        assert!(
            found
                .iter()
                .any(|v| v.kind == Kind::StaleData && v.path == "A"),
            "{found:?}"
        );
        // An older block where a later fsync'd write was.
        let (dir, oracle) = ran(&[]);
        let old = std::fs::read(dir.path().join("d/A")).unwrap();
        let (dir2, oracle2) = ran(&[step(
            Op::Write {
                name: "d/A".into(),
                at: 0,
                blocks: 1,
            },
            Persist::Fdatasync,
        )]);
        drop((dir, oracle));
        // The setup's block (write 3: A's two, B's one before it) of another run's oracle
        // has the same seed and file: here it stands for the write that did not reach it.
        std::fs::write(dir2.path().join("d/A"), &old).unwrap();
        let found = oracle2.check(dir2.path());
        assert_eq!(
            found.iter().map(|v| v.kind).collect::<Vec<_>>(),
            [Kind::LostData],
            "{found:?}"
        );
    }

    /// The same seed gives the same sequences; another seed others.
    #[test]
    fn sequences_are_seeded() {
        let (_dir, state) = ran(&[]);
        let make = |seed| {
            let mut rng = Rng::new(seed);
            ops::generate(Family::Mixed, &mut rng, &state, 30, 4, true)
        };
        assert_eq!(make(3), make(3));
        assert_ne!(make(3), make(4));
        assert_eq!(make(3).len(), 30);
    }

    /// Every generated sequence, printed as results print it, reads back as the same steps
    /// and fits the setup's state: a violation's sequence can be given back (`--sequence`).
    #[test]
    fn a_printed_sequence_reads_back_as_itself() {
        let setup = ops::setup_state();
        let mut rng = Rng::new(11);
        for family in Family::ALL {
            for _ in 0..200 {
                let steps = ops::generate(family, &mut rng, &setup, 12, 4, true);
                let text = ops::Sequence(steps.clone()).to_string();
                let back: ops::Sequence = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(back.0, steps, "{text}");
                back.fits(&setup).unwrap();
            }
        }
        for (bad, said) in [
            ("create A", "A exists"),
            ("unlink C", "C is not there"),
            ("write Z 4k@0", "not a name"),
            ("write A 5k@0", "whole 4 KiB blocks"),
            ("fsync A", "fsyncs neither"),
            ("create C (O_SYNC)", "only a write or an append"),
            ("", "an empty sequence"),
        ] {
            let why = bad
                .parse::<ops::Sequence>()
                .and_then(|s| s.fits(&setup))
                .unwrap_err();
            assert!(why.contains(said), "{bad}: {why}");
        }
    }
}
