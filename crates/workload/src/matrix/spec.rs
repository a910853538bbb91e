//! What the user asks of the matrix ([`MatrixSettings`]) and its validated form ([`MatrixPlan`]).
//! Planning has no side effects; [`MatrixPlan::preflight`] is the only step that touches the
//! directory, and it leaves nothing behind.

use super::test::{MatrixTest, Phase};
use crate::data::DataKind;
use crate::error::WorkloadError;
use crate::fileio;
use crate::stonewall::Stonewall;
use crate::workload::{Context, Place};
use fsbench_measure::units::{size_label, Size, SizeSpec, TimeSpan};
use fsbench_model::CachePolicy;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Files of at least this size skip records under [`IOZONE_SKIP_RECORD`] with `iozone_skip`.
pub const IOZONE_SKIP_FILE: u64 = 32 << 20;
pub const IOZONE_SKIP_RECORD: u64 = 64 << 10;
/// The largest record the matrix measures: 4x iozone's largest (16 MiB). The data pool and the
/// read buffer each hold one record, so larger records would cost memory, not insight.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// The throughput matrix (iozone -a): every file size x record size x test, in one directory.
/// One type is the plan table (`kind = "matrix"`), the command's flags and the stored request;
/// its defaults (iozone's `-a` ranges, every test and cell) are the [`Default`] impl, and only
/// there. Field names are plan keys; flags are the same names in kebab-case.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatrixSettings {
    /// Tests to run, comma-separated or repeated, by name or iozone number: write (0),
    /// read (1), random (2), backward (3), record-rewrite (4), stride (5), fwrite (6),
    /// fread (7), random-mix (8), pwrite (9), pread (10). Default: all.
    #[arg(long, short = 'i', value_name = "TESTS", value_delimiter = ',')]
    pub tests: Vec<MatrixTest>,

    /// File sizes: a power-of-two range FROM..TO or a list A,B (powers of two KiB; k, m, g
    /// suffixes are binary).
    #[arg(long, value_name = "SIZES", default_value_t = MatrixSettings::default().file_sizes)]
    pub file_sizes: SizeSpec,

    /// Record (I/O) sizes: a power-of-two range FROM..TO or a list A,B. Records larger than a
    /// file are not measured for that file.
    #[arg(long, value_name = "SIZES", default_value_t = MatrixSettings::default().record_sizes)]
    pub record_sizes: SizeSpec,

    /// Minimum measured time per phase of a cell: passes repeat until it is reached
    /// (ns, us, ms, s; 0 = one pass).
    #[arg(long, value_name = "DURATION", default_value_t = MatrixSettings::default().min_time)]
    pub min_time: TimeSpan,

    /// Maximum passes per phase of a cell (default: no limit, or 64 with --purge-cpu-cache).
    #[arg(long, value_name = "N")]
    pub max_passes: Option<u64>,

    /// Exactly this many timed passes per phase of a cell, however short (1: iozone's one
    /// timed pass, quantised by the clock: each result then carries `quantisation`), instead
    /// of repeating passes until --min-time. Not with --max-passes or another --min-time.
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<u64>,

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
    pub purge_size: Option<Size>,

    /// Evict the test file from the page cache (fdatasync + POSIX_FADV_DONTNEED, verified with
    /// mincore) before every pass of a test's first read phase; results record the state reached.
    #[arg(long)]
    pub drop_caches: bool,

    /// Data written: random (incompressible, every 4 KiB block unique), zero, or
    /// compressible:PERCENT (that share of each 4 KiB block is zeroes).
    #[arg(long, value_name = "KIND", default_value_t = MatrixSettings::default().data)]
    pub data: DataKind,

    /// Seed for data and random offsets (default: a fresh one per run; recorded with the results).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Skip records under 64k for files of 32m and more, as iozone -a does (listed as skipped).
    #[arg(long)]
    pub iozone_skip: bool,

    /// Stride of the stride-read test, in records (iozone -j).
    #[arg(long, value_name = "RECORDS", default_value_t = MatrixSettings::default().stride)]
    pub stride: u64,

    /// Share of reads in the random-mix test, percent.
    #[arg(long, value_name = "PERCENT", default_value_t = MatrixSettings::default().mix_read_percent)]
    pub mix_read_percent: u8,

    /// Under mpirun: every rank works on one file in the job's directory (N-to-1, IOR's
    /// segmented layout), rank r on bytes [r*F, (r+1)*F) of it for a file size F; rank 0 makes
    /// the file afresh before each creating phase, which makes one pass. Needs the write
    /// (or fwrite, pwrite) test first, as iozone does.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shared_file: bool,

    /// End every phase early: this long after its first pass started, even mid-pass (IOR's
    /// -D; scaled by --scale), or, `first` (under mpirun), when the first rank has made its
    /// passes. A phase that was stopped says `stonewalled` and counts what it made; a write
    /// cut short writes the file whole again, untimed, before its phase ends. Default: none.
    #[arg(long, value_name = "DURATION|first")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<Stonewall>,

    /// Leave the last test file in the directory (for inspection; only in a directory, not
    /// on a filesystem fsbench removes afterwards).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep: bool,

    /// Verify what was written: every 4 KiB block written carries a header (its offset, the
    /// seed, a write sequence number, its payload's checksum), and after each phase that
    /// writes, the file is synced, dropped from the page cache and read back, untimed, and
    /// after each cell once more from a cold cache (a filesystem fsbench made is remounted;
    /// in a directory every cache is dropped, root only; where neither can be done a warning
    /// says the check was skipped). A block
    /// other than written, or one older than the phase's writes to it, ends the run `corrupt`,
    /// naming the file, the offset, what was expected and found; the file is kept in a
    /// directory (docs/workloads/matrix.md). With `--data zero` the headers are the only
    /// bytes that are not zero.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
}

impl Default for MatrixSettings {
    fn default() -> MatrixSettings {
        MatrixSettings {
            tests: Vec::new(),
            file_sizes: SizeSpec::Range {
                from: 4 << 10,
                to: 64 << 20,
            },
            record_sizes: SizeSpec::Range {
                from: 4 << 10,
                to: 16 << 20,
            },
            min_time: TimeSpan::from_ns(20_000_000),
            max_passes: None,
            passes: None,
            include_fsync: false,
            include_close: false,
            direct: false,
            purge_cpu_cache: false,
            purge_size: None,
            drop_caches: false,
            data: DataKind::Random,
            seed: None,
            iozone_skip: false,
            stride: 17,
            mix_read_percent: 50,
            shared_file: false,
            stonewall: None,
            keep: false,
            verify: false,
        }
    }
}

/// One cell of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub file_size_bytes: u64,
    pub record_size_bytes: u64,
}

impl Cell {
    /// Records per pass over the whole file.
    pub fn records(&self) -> u64 {
        self.file_size_bytes / self.record_size_bytes
    }
}

/// A cell that exists in the ranges but is deliberately not measured, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedCell {
    pub file_size_bytes: u64,
    pub record_size_bytes: u64,
    pub reason: String,
}

/// A validated matrix: every cell and phase that will be measured.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixPlan {
    /// The request, as asked.
    pub settings: MatrixSettings,
    /// The filesystem is removed after the run (`Context::disposable`): a test file found
    /// corrupt is not kept for inspection, it would go with it.
    #[serde(skip)]
    pub disposable: bool,
    /// The run's scale (1: as asked); file sizes and `min_time_ns` are scaled already.
    pub scale: f64,
    /// Each phase of a cell repeats its pass until this much time was measured (scaled).
    pub min_time_ns: u64,
    /// O_DIRECT for read/write and pread/pwrite phases: asked, or the cache policy `direct`.
    pub direct: bool,
    /// Evict the test file before each pass of a first read phase: asked, or the cache policy
    /// `drop`.
    pub drop_caches: bool,
    pub tests: Vec<MatrixTest>,
    pub phases: Vec<Phase>,
    pub file_sizes_bytes: Vec<u64>,
    pub record_sizes_bytes: Vec<u64>,
    #[serde(skip)]
    pub cells: Vec<Cell>,
    pub skipped: Vec<SkippedCell>,
    /// The seed actually used.
    pub seed: u64,
    /// Effective bound on passes per phase.
    pub max_passes: Option<u64>,
    /// Exactly this many passes per phase (min_time and max_passes do not apply).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<u64>,
    /// Bytes overwritten to purge the CPU cache before each pass (None: no purge).
    pub purge_bytes: Option<u64>,
    /// Under `shared_file`, this rank's place: its segment of the one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<Place>,
    /// The scaled stonewall deadline of every phase, from its first pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall_ns: Option<u64>,
    /// Every phase ends when the first rank has made its passes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stonewall_first: bool,
    /// Where the buffers of reads and writes sit: page-aligned for O_DIRECT, else where this
    /// CPU copies fastest, timed on the target before the first pass (`crate::placement`; each
    /// result's `read_buffer_offset_bytes` and `write_buffer_offset_bytes` say what was chosen).
    pub buffer_placement: String,
}

/// Without an explicit bound, purging the CPU cache (milliseconds each) caps passes at this.
pub const PURGE_DEFAULT_MAX_PASSES: u64 = 64;

fn expand(spec: &SizeSpec, field: &'static str) -> Result<Vec<u64>, WorkloadError> {
    let check = |size: u64| -> Result<u64, WorkloadError> {
        if size == 0 {
            return Err(WorkloadError::invalid(
                field,
                "a size of 0 is not allowed; sizes are powers of two from 1k (1k, 2k, 4k, ...)",
            ));
        }
        if size < 1024 || !size.is_power_of_two() {
            return Err(WorkloadError::invalid(
                field,
                format!(
                    "{} is not a power of two KiB; use 1k, 2k, 4k, 8k, ... (e.g. 4k..64m or 1m,8m)",
                    size_label(size)
                ),
            ));
        }
        Ok(size)
    };
    let mut sizes = match spec {
        SizeSpec::Range { from, to } => {
            let (from, to) = (check(*from)?, check(*to)?);
            if from > to {
                return Err(WorkloadError::invalid(
                    field,
                    format!(
                        "the range {}..{} is empty; write the smaller size first",
                        size_label(from),
                        size_label(to)
                    ),
                ));
            }
            std::iter::successors(Some(from), |&s| (s < to).then_some(s * 2)).collect()
        }
        SizeSpec::List(list) => list
            .iter()
            .map(|&s| check(s))
            .collect::<Result<Vec<_>, _>>()?,
    };
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

/// A file size under `scale`: the size times the scale, rounded up to a power of two, but
/// never below the smallest record the file was to be measured with (so every file keeps at
/// least one cell) nor above the size itself. The rule is mechanical, so a scaled run measures
/// the same cells at every scale where they fit.
pub fn scale_file_size(size: u64, scale: f64, smallest_record: u64) -> u64 {
    if scale >= 1.0 {
        return size;
    }
    let scaled = ((size as f64 * scale).ceil() as u64)
        .max(1)
        .next_power_of_two();
    scaled.max(smallest_record.min(size)).min(size)
}

fn range_label(sizes: &[u64]) -> String {
    match sizes {
        [one] => size_label(*one),
        [first, .., last] => format!("{}..{}", size_label(*first), size_label(*last)),
        [] => String::new(),
    }
}

impl MatrixSettings {
    /// Validates the request under a case's context (its scale and cache policy) and lists what
    /// will be measured. No side effects. Errors name the setting (`file_sizes`).
    pub fn plan(&self, ctx: &Context) -> Result<MatrixPlan, WorkloadError> {
        let file_sizes = expand(&self.file_sizes, "file_sizes")?;
        let record_sizes = expand(&self.record_sizes, "record_sizes")?;
        if let Some(&largest) = record_sizes.last().filter(|&&r| r > MAX_RECORD_BYTES) {
            return Err(WorkloadError::invalid(
                "record_sizes",
                format!(
                    "{} is larger than the largest record the matrix measures ({}); use records up to {}",
                    size_label(largest),
                    size_label(MAX_RECORD_BYTES),
                    size_label(MAX_RECORD_BYTES)
                ),
            ));
        }
        if let Some(&small) = record_sizes
            .first()
            .filter(|&&r| self.verify && r < crate::verify::BLOCK as u64)
        {
            return Err(WorkloadError::invalid(
                "record_sizes",
                format!(
                    "verify checks whole 4 KiB blocks and {} is smaller; use records of 4k or more",
                    size_label(small)
                ),
            ));
        }
        ctx.check()?;
        let scale = ctx.scale;
        let smallest_record = record_sizes.first().copied().unwrap_or(0);
        let mut file_sizes: Vec<u64> = file_sizes
            .into_iter()
            .map(|f| scale_file_size(f, scale, smallest_record))
            .collect();
        file_sizes.dedup();
        if self.max_passes == Some(0) {
            return Err(WorkloadError::invalid("max_passes", "must be at least 1"));
        }
        match self.passes {
            Some(0) => return Err(WorkloadError::invalid("passes", "must be at least 1")),
            Some(_) if self.max_passes.is_some() => {
                return Err(WorkloadError::invalid(
                    "passes",
                    "fixes the number of passes: drop max_passes",
                ))
            }
            Some(_) if self.min_time != MatrixSettings::default().min_time => {
                return Err(WorkloadError::invalid(
                    "passes",
                    "fixes the number of passes, however long they take: drop min_time",
                ))
            }
            _ => {}
        }
        if self.stride == 0 {
            return Err(WorkloadError::invalid(
                "stride",
                "must be at least 1 record",
            ));
        }
        if self.mix_read_percent > 100 {
            return Err(WorkloadError::invalid(
                "mix_read_percent",
                "must be between 0 and 100",
            ));
        }
        if self.purge_size == Some(Size(0)) {
            return Err(WorkloadError::invalid(
                "purge_size",
                "must be larger than 0",
            ));
        }
        let mut tests = if self.tests.is_empty() {
            MatrixTest::ALL.to_vec()
        } else {
            self.tests.clone()
        };
        tests.sort_unstable();
        tests.dedup();
        let phases: Vec<Phase> = tests
            .iter()
            .flat_map(|t| t.phases().iter().copied())
            .collect();

        let mut cells = Vec::new();
        let mut skipped = Vec::new();
        for &file in &file_sizes {
            for &record in record_sizes.iter().filter(|&&r| r <= file) {
                if self.iozone_skip && file >= IOZONE_SKIP_FILE && record < IOZONE_SKIP_RECORD {
                    skipped.push(SkippedCell {
                        file_size_bytes: file,
                        record_size_bytes: record,
                        reason: "iozone -a rule: records under 64k are skipped for files of 32m and more (iozone_skip)".to_string(),
                    });
                } else {
                    cells.push(Cell {
                        file_size_bytes: file,
                        record_size_bytes: record,
                    });
                }
            }
        }
        if cells.is_empty() {
            return Err(if skipped.is_empty() {
                WorkloadError::invalid(
                    "record_sizes",
                    format!(
                        "no cell to measure: every record size ({}) is larger than every file size ({}); lower the record sizes or raise the file sizes",
                        range_label(&record_sizes),
                        range_label(&file_sizes)
                    ),
                )
            } else {
                WorkloadError::invalid(
                    "iozone_skip",
                    "no cell to measure: it skips every cell; drop it or add records of 64k and more",
                )
            });
        }
        let segment = match (self.shared_file, ctx.job) {
            (false, _) => None,
            (true, None) => return Err(WorkloadError::invalid(
                "shared_file",
                "one file shared by the ranks of a job: run the matrix under mpirun, or drop it",
            )),
            (true, Some(_)) if !phases.first().is_some_and(|p| p.creates_file()) => {
                return Err(WorkloadError::invalid(
                    "shared_file",
                    "every rank writes its segment of the shared file first: add the write test \
                     (-i write), as iozone needs it",
                ))
            }
            (true, Some(place)) => Some(place),
        };
        Stonewall::check(self.stonewall)?;
        if self.stonewall == Some(Stonewall::FirstDone) && ctx.job.is_none() {
            return Err(WorkloadError::invalid(
                "stonewall",
                "`first` stops every rank when the first is done: run the matrix under \
                 mpirun, or give a duration (30s)",
            ));
        }
        let max_passes = self
            .max_passes
            .or(self.purge_cpu_cache.then_some(PURGE_DEFAULT_MAX_PASSES));
        let direct = self.direct || ctx.cache == CachePolicy::Direct;
        Ok(MatrixPlan {
            disposable: ctx.disposable,
            settings: self.clone(),
            scale,
            min_time_ns: (self.min_time.ns as f64 * scale).round() as u64,
            direct,
            drop_caches: self.drop_caches || ctx.cache == CachePolicy::Drop,
            tests,
            phases,
            file_sizes_bytes: file_sizes,
            record_sizes_bytes: record_sizes,
            cells,
            skipped,
            seed: self.seed.unwrap_or_else(crate::rng::fresh_seed),
            max_passes,
            passes: self.passes,
            segment,
            stonewall_ns: Stonewall::deadline_ns(self.stonewall, scale),
            stonewall_first: self.stonewall == Some(Stonewall::FirstDone),
            buffer_placement: crate::placement::Placement::planned(direct),
            purge_bytes: self.purge_cpu_cache.then(|| {
                self.purge_size
                    .map_or_else(super::run::default_purge_bytes, |s| s.0)
            }),
        })
    }
}

impl MatrixPlan {
    /// Number of results a complete run yields (cells x phases).
    pub fn result_count(&self) -> usize {
        self.cells.len() * self.phases.len()
    }

    pub fn largest_file(&self) -> u64 {
        self.cells
            .iter()
            .map(|c| c.file_size_bytes)
            .max()
            .unwrap_or(0)
    }

    /// The room a run takes: its largest file (every rank's segment of a shared one).
    pub fn footprint(&self) -> crate::workload::Footprint {
        let ranks = self.segment.map_or(1, |s| u64::from(s.ranks));
        crate::workload::Footprint {
            bytes: self.largest_file().saturating_mul(ranks),
            inodes: 0,
            what: "the largest test file".into(),
            setting: "file_sizes",
            advice: "lower the file sizes or free space".into(),
        }
    }

    pub fn largest_record(&self) -> u64 {
        self.cells
            .iter()
            .map(|c| c.record_size_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Checks that `dir` exists, is writable and takes O_DIRECT if asked (its room is checked
    /// against [`MatrixPlan::footprint`]). Creates and removes one probe file; errors say
    /// what to change.
    pub fn preflight(&self, dir: &Path) -> Result<(), WorkloadError> {
        crate::workload::check_directory(dir)?;
        let shown = dir.display();
        if self.direct {
            // A probe under a name no file has (a user's file at the name is passed over and
            // kept); only EINVAL is the filesystem refusing O_DIRECT.
            match fileio::create_new_file(dir, ".fsbench-probe-direct", "", true) {
                Ok((probe, path)) => {
                    drop(probe);
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(WorkloadError::invalid(
                        "direct",
                        format!("the filesystem of {shown} refuses O_DIRECT ({e}); drop it or pick another directory"),
                    ));
                }
                Err(e) => {
                    return Err(WorkloadError::io("create a probe file in", dir, e));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(files: &str, records: &str) -> MatrixSettings {
        MatrixSettings {
            file_sizes: SizeSpec::parse(files).unwrap(),
            record_sizes: SizeSpec::parse(records).unwrap(),
            ..MatrixSettings::default()
        }
    }

    fn scaled(scale: f64) -> Context {
        Context {
            scale,
            ..Context::default()
        }
    }

    #[test]
    fn default_matrix_has_iozone_shape() {
        let plan = MatrixSettings::default().plan(&Context::default()).unwrap();
        assert_eq!(plan.file_sizes_bytes.len(), 15);
        assert_eq!(plan.record_sizes_bytes.len(), 13);
        // Records 4k..16m against files 4k..64m with record <= file: 1 + 2 + ... + 13 + 13 + 13.
        assert_eq!(plan.cells.len(), 117);
        assert!(plan.skipped.is_empty());
        assert_eq!(plan.phases.len(), 18);
        assert_eq!(plan.result_count(), 117 * 18);
    }

    #[test]
    fn scale_shrinks_files_and_time_but_never_records() {
        let plan = MatrixSettings::default().plan(&scaled(0.05)).unwrap();
        // 4k..64m x 0.05 -> 4k (at least the smallest record) .. 4m (3.2m rounded up).
        assert_eq!(plan.file_sizes_bytes.first(), Some(&(4 << 10)));
        assert_eq!(plan.file_sizes_bytes.last(), Some(&(4 << 20)));
        assert_eq!(plan.record_sizes_bytes.len(), 13, "records are not scaled");
        assert_eq!(plan.min_time_ns, 1_000_000);
        assert_eq!(plan.scale, 0.05);
        // A file keeps its largest record's cell when that record is the only one.
        assert_eq!(scale_file_size(16 << 20, 0.05, 16 << 20), 16 << 20);
        assert_eq!(scale_file_size(16 << 20, 0.05, 4 << 10), 1 << 20);
        assert_eq!(scale_file_size(64 << 10, 1.0, 4 << 10), 64 << 10);
        for bad in [0.0, -1.0, 1.5, f64::NAN] {
            let e = MatrixSettings::default()
                .plan(&scaled(bad))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("scale: "), "{e}");
        }
    }

    #[test]
    fn iozone_skip_lists_what_it_skips() {
        let plan = MatrixSettings {
            iozone_skip: true,
            ..MatrixSettings::default()
        }
        .plan(&Context::default())
        .unwrap();
        // Files 32m and 64m lose records 4k, 8k, 16k, 32k.
        assert_eq!(plan.skipped.len(), 8);
        assert_eq!(plan.cells.len(), 117 - 8);
        assert!(plan
            .cells
            .iter()
            .all(|c| c.file_size_bytes < IOZONE_SKIP_FILE || c.record_size_bytes >= 64 << 10));
    }

    #[test]
    fn cells_are_in_iozone_order() {
        let plan = spec("4k..16k", "4k..16k")
            .plan(&Context::default())
            .unwrap();
        let cells: Vec<(u64, u64)> = plan
            .cells
            .iter()
            .map(|c| (c.file_size_bytes >> 10, c.record_size_bytes >> 10))
            .collect();
        assert_eq!(cells, [(4, 4), (8, 4), (8, 8), (16, 4), (16, 8), (16, 16)]);
    }

    #[test]
    fn invalid_sizes_say_what_to_change() {
        let e = spec("0", "4k")
            .plan(&Context::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("file_sizes: ") && e.contains("0 is not allowed"),
            "{e}"
        );
        let e = spec("4k..64m", "3k")
            .plan(&Context::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("record_sizes: 3k is not a power of two"), "{e}");
        let e = spec("64m..4k", "4k")
            .plan(&Context::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty"), "{e}");
        let e = spec("4k..1m", "4m..16m")
            .plan(&Context::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("every record size (4m..16m) is larger than every file size (4k..1m)"),
            "{e}"
        );
        assert!(spec("512", "512").plan(&Context::default()).is_err());
        let e = spec("256m", "128m")
            .plan(&Context::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("record_sizes: 128m is larger than the largest record"),
            "{e}"
        );
        assert!(spec("64m", "64m").plan(&Context::default()).is_ok());
    }

    #[test]
    fn tests_are_deduplicated_in_iozone_order() {
        let plan = MatrixSettings {
            tests: vec![MatrixTest::Read, MatrixTest::Write, MatrixTest::Read],
            ..spec("4k", "4k")
        }
        .plan(&Context::default())
        .unwrap();
        assert_eq!(plan.tests, [MatrixTest::Write, MatrixTest::Read]);
        assert_eq!(
            plan.phases,
            [Phase::Write, Phase::Rewrite, Phase::Read, Phase::Reread]
        );
    }

    #[test]
    fn purging_bounds_passes_unless_told_otherwise() {
        let mut s = spec("4k", "4k");
        s.purge_cpu_cache = true;
        assert_eq!(
            s.plan(&Context::default()).unwrap().max_passes,
            Some(PURGE_DEFAULT_MAX_PASSES)
        );
        s.max_passes = Some(5);
        assert_eq!(s.plan(&Context::default()).unwrap().max_passes, Some(5));
        s.max_passes = Some(0);
        assert!(s.plan(&Context::default()).is_err());
    }

    #[test]
    fn preflight_checks_the_directory() {
        let plan = spec("4k", "4k").plan(&Context::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        plan.preflight(dir.path()).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "probe left behind"
        );
        let e = plan.preflight(&dir.path().join("missing")).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("does not exist"),
            "{e}"
        );
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        assert!(plan
            .preflight(&file)
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
    }
}

#[cfg(test)]
mod settings_tests {
    use super::*;

    #[test]
    fn the_cache_policy_folds_into_the_plan() {
        let s = MatrixSettings::default();
        let direct = Context {
            cache: CachePolicy::Direct,
            ..Context::default()
        };
        let drop = Context {
            cache: CachePolicy::Drop,
            ..Context::default()
        };
        let plan = s.plan(&direct).unwrap();
        assert!(plan.direct && !plan.drop_caches && !plan.settings.direct);
        assert_eq!(plan.buffer_placement, "page-aligned (O_DIRECT)");
        let plan = s.plan(&drop).unwrap();
        assert!(plan.drop_caches && !plan.direct);
    }

    #[test]
    fn settings_serialize_as_they_are_typed() {
        let s = MatrixSettings {
            tests: vec![MatrixTest::Write, MatrixTest::RandomMix],
            min_time: TimeSpan::from_ns(1_000_000),
            data: DataKind::Compressible { percent: 50 },
            keep: true,
            ..MatrixSettings::default()
        };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["file_sizes"], "4k..64m");
        assert_eq!(json["tests"], serde_json::json!(["write", "random-mix"]));
        assert_eq!(json["min_time"], "1ms");
        assert_eq!(json["data"], "compressible:50");
        assert_eq!(
            json["keep"], true,
            "a plan key where a directory keeps the file"
        );
        let back: MatrixSettings = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
        let unset = serde_json::to_value(MatrixSettings::default()).unwrap();
        assert!(unset.get("keep").is_none(), "left out when false");
        let e = serde_json::from_str::<MatrixSettings>(r#"{"colour": 1}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
    }

    /// A shared file needs a job, and a first phase that writes it.
    #[test]
    fn a_shared_file_needs_mpirun_and_the_write_test() {
        let settings = MatrixSettings {
            shared_file: true,
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            ..MatrixSettings::default()
        };
        let alone = settings.plan(&Context::default()).unwrap_err().to_string();
        assert!(
            alone.contains("shared_file") && alone.contains("mpirun"),
            "{alone}"
        );
        let job = Context {
            job: Some(Place { rank: 0, ranks: 2 }),
            ..Context::default()
        };
        let reads = MatrixSettings {
            tests: vec![MatrixTest::Read],
            ..settings.clone()
        };
        let error = reads.plan(&job).unwrap_err().to_string();
        assert!(error.contains("add the write test"), "{error}");
        let plan = settings.plan(&job).unwrap();
        assert_eq!(plan.segment, Some(Place { rank: 0, ranks: 2 }));
    }

    /// A duration scales with the run (never under 1 ms) and is never 0; `first` needs a job
    /// (alone, the one rank is always the first done).
    #[test]
    fn a_stonewall_is_a_scaled_duration_or_first_under_mpirun() {
        let with = |wall: &str| MatrixSettings {
            stonewall: Some(wall.parse().unwrap()),
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            ..MatrixSettings::default()
        };
        let half = Context {
            scale: 0.5,
            ..Context::default()
        };
        assert_eq!(
            with("2s").plan(&half).unwrap().stonewall_ns,
            Some(1_000_000_000)
        );
        assert_eq!(
            with("1ms").plan(&half).unwrap().stonewall_ns,
            Some(1_000_000)
        );
        let zero = with("0s").plan(&half).unwrap_err().to_string();
        assert!(
            zero.contains("stonewall") && zero.contains("longer than 0"),
            "{zero}"
        );
        let alone = with("first").plan(&half).unwrap_err().to_string();
        assert!(alone.contains("mpirun"), "{alone}");
        let job = Context {
            job: Some(Place { rank: 1, ranks: 2 }),
            ..Context::default()
        };
        let plan = with("first").plan(&job).unwrap();
        assert!(plan.stonewall_first && plan.stonewall_ns.is_none());
        assert!("soon".parse::<Stonewall>().is_err());
    }
}
