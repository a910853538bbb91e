//! What the user asks of the matrix ([`MatrixSpec`]) and its validated form ([`MatrixPlan`]).
//! Planning has no side effects; [`MatrixPlan::preflight`] is the only step that touches the
//! directory, and it leaves nothing behind.

use super::test::{MatrixTest, Phase};
use crate::data::DataKind;
use crate::error::WorkloadError;
use crate::fileio::{self, OpenMode};
use fsbench_measure::host::free_bytes;
use fsbench_measure::units::{human_bytes, size_label, SizeSpec};
use serde::Serialize;
use std::path::Path;

/// Files of at least this size skip records under [`IOZONE_SKIP_RECORD`] with `iozone_skip`.
pub const IOZONE_SKIP_FILE: u64 = 32 << 20;
pub const IOZONE_SKIP_RECORD: u64 = 64 << 10;
/// The largest record the matrix measures: 4x iozone's largest (16 MiB). The data pool and the
/// read buffer each hold one record, so larger records would cost memory, not insight.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// The matrix as requested. Defaults are iozone's `-a` ranges, with every test and every cell.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixSpec {
    /// Tests to run; empty means all of them.
    #[serde(skip)]
    pub tests: Vec<MatrixTest>,
    #[serde(skip)]
    pub file_sizes: SizeSpec,
    #[serde(skip)]
    pub record_sizes: SizeSpec,
    /// Each phase of a cell repeats its pass until this much time was measured.
    pub min_time_ns: u64,
    /// Upper bound on passes per phase (None: only `min_time_ns` decides).
    #[serde(skip)]
    pub max_passes: Option<u64>,
    /// fsync before the timing of a write pass ends (iozone -e).
    pub include_fsync: bool,
    /// close before the timing of a pass ends (iozone -c).
    pub include_close: bool,
    /// O_DIRECT for read/write and pread/pwrite phases (iozone -I).
    pub direct: bool,
    /// Overwrite a buffer larger than the CPU caches before each pass (iozone -p).
    pub purge_cpu_cache: bool,
    /// Size of that buffer (None: twice the level-2 cache of a core).
    #[serde(skip)]
    pub purge_bytes: Option<u64>,
    /// Evict the test file from the page cache before each pass of a first read phase.
    pub drop_caches: bool,
    /// What is written.
    pub data: DataKind,
    /// Seed of data and offsets (None: a fresh one per run).
    #[serde(skip)]
    pub seed: Option<u64>,
    /// Skip records under 64 KiB for files of 32 MiB and more, as iozone -a does.
    pub iozone_skip: bool,
    /// Stride of the stride-read phase, in records (iozone -j; default 17).
    pub stride_records: u64,
    /// Share of reads in the random-mix phase, percent.
    pub mix_read_percent: u8,
    /// Leave the last test file in the directory (for inspection).
    pub keep_file: bool,
    /// Shrinks the matrix for a quick try (`--scale`, FSBENCH_SCALE): file sizes and the
    /// minimum time are multiplied by it (see [`scale_file_size`]); record sizes never change.
    /// 1 is the matrix as asked. Recorded with the results.
    pub scale: f64,
}

impl Default for MatrixSpec {
    fn default() -> MatrixSpec {
        MatrixSpec {
            tests: Vec::new(),
            file_sizes: SizeSpec::Range {
                from: 4 << 10,
                to: 64 << 20,
            },
            record_sizes: SizeSpec::Range {
                from: 4 << 10,
                to: 16 << 20,
            },
            min_time_ns: 20_000_000,
            max_passes: None,
            include_fsync: false,
            include_close: false,
            direct: false,
            purge_cpu_cache: false,
            purge_bytes: None,
            drop_caches: false,
            data: DataKind::Random,
            seed: None,
            iozone_skip: false,
            stride_records: 17,
            mix_read_percent: 50,
            keep_file: false,
            scale: 1.0,
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
    #[serde(flatten)]
    pub spec: MatrixSpec,
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
    /// Bytes overwritten to purge the CPU cache before each pass (None: no purge).
    pub purge_bytes: Option<u64>,
    /// Where buffered reads land: this many bytes past a page boundary (see
    /// [`BUFFERED_READ_OFFSET`]); O_DIRECT reads always land page-aligned.
    pub read_buffer_offset_bytes: u64,
}

/// Buffered reads land 16 bytes past a page boundary, where memory from malloc lands (and so
/// what fio and most programs read into). The kernel's copy into a cache-line-aligned
/// destination measured 7-10 % slower here, for 4 KiB and 1 MiB reads alike (bench/README.md);
/// that cost belongs to the CPU, not to the filesystem under test.
pub const BUFFERED_READ_OFFSET: u64 = 16;

/// Without an explicit bound, purging the CPU cache (milliseconds each) caps passes at this.
pub const PURGE_DEFAULT_MAX_PASSES: u64 = 64;

fn expand(spec: &SizeSpec, flag: &str) -> Result<Vec<u64>, WorkloadError> {
    let check = |size: u64| -> Result<u64, WorkloadError> {
        if size == 0 {
            return Err(WorkloadError::InvalidSpec(format!(
                "{flag}: a size of 0 is not allowed; sizes are powers of two from 1k (1k, 2k, 4k, ...)"
            )));
        }
        if size < 1024 || !size.is_power_of_two() {
            return Err(WorkloadError::InvalidSpec(format!(
                "{flag}: {} is not a power of two KiB; use 1k, 2k, 4k, 8k, ... (e.g. 4k..64m or 1m,8m)",
                size_label(size)
            )));
        }
        Ok(size)
    };
    let mut sizes = match spec {
        SizeSpec::Range { from, to } => {
            let (from, to) = (check(*from)?, check(*to)?);
            if from > to {
                return Err(WorkloadError::InvalidSpec(format!(
                    "{flag}: the range {}..{} is empty; write the smaller size first",
                    size_label(from),
                    size_label(to)
                )));
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

impl MatrixSpec {
    /// Validates the request and lists what will be measured. No side effects.
    pub fn plan(&self) -> Result<MatrixPlan, WorkloadError> {
        let file_sizes = expand(&self.file_sizes, "--file-sizes")?;
        let record_sizes = expand(&self.record_sizes, "--record-sizes")?;
        if let Some(&largest) = record_sizes.last().filter(|&&r| r > MAX_RECORD_BYTES) {
            return Err(WorkloadError::InvalidSpec(format!(
                "--record-sizes: {} is larger than the largest record the matrix measures ({}); use records up to {}",
                size_label(largest),
                size_label(MAX_RECORD_BYTES),
                size_label(MAX_RECORD_BYTES)
            )));
        }
        if !(self.scale > 0.0 && self.scale <= 1.0) {
            return Err(WorkloadError::InvalidSpec(format!(
                "--scale must be above 0 and at most 1 (got {})",
                self.scale
            )));
        }
        let smallest_record = record_sizes.first().copied().unwrap_or(0);
        let mut file_sizes: Vec<u64> = file_sizes
            .into_iter()
            .map(|f| scale_file_size(f, self.scale, smallest_record))
            .collect();
        file_sizes.dedup();
        if self.max_passes == Some(0) {
            return Err(WorkloadError::InvalidSpec(
                "--max-passes must be at least 1".to_string(),
            ));
        }
        if self.stride_records == 0 {
            return Err(WorkloadError::InvalidSpec(
                "--stride must be at least 1 record".to_string(),
            ));
        }
        if self.mix_read_percent > 100 {
            return Err(WorkloadError::InvalidSpec(
                "--mix-read-percent must be between 0 and 100".to_string(),
            ));
        }
        if self.purge_bytes == Some(0) {
            return Err(WorkloadError::InvalidSpec(
                "--purge-size must be larger than 0".to_string(),
            ));
        }
        let mut tests = if self.tests.is_empty() {
            MatrixTest::ALL.to_vec()
        } else {
            self.tests.clone()
        };
        tests.sort_unstable();
        tests.dedup();
        let phases = tests
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
                        reason: "iozone -a rule: records under 64k are skipped for files of 32m and more (--iozone-skip)".to_string(),
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
            let message = if skipped.is_empty() {
                format!(
                    "no cell to measure: every record size ({}) is larger than every file size ({}); lower --record-sizes or raise --file-sizes",
                    range_label(&record_sizes),
                    range_label(&file_sizes)
                )
            } else {
                "no cell to measure: --iozone-skip skips every cell; drop it or add records of 64k and more".to_string()
            };
            return Err(WorkloadError::InvalidSpec(message));
        }
        let max_passes = self
            .max_passes
            .or(self.purge_cpu_cache.then_some(PURGE_DEFAULT_MAX_PASSES));
        let mut spec = self.clone();
        spec.min_time_ns = (self.min_time_ns as f64 * self.scale).round() as u64;
        Ok(MatrixPlan {
            spec,
            tests,
            phases,
            file_sizes_bytes: file_sizes,
            record_sizes_bytes: record_sizes,
            cells,
            skipped,
            seed: self.seed.unwrap_or_else(crate::rng::fresh_seed),
            max_passes,
            read_buffer_offset_bytes: if self.direct { 0 } else { BUFFERED_READ_OFFSET },
            purge_bytes: self.purge_cpu_cache.then(|| {
                self.purge_bytes
                    .unwrap_or_else(super::run::default_purge_bytes)
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

    pub fn largest_record(&self) -> u64 {
        self.cells
            .iter()
            .map(|c| c.record_size_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Checks that `dir` exists, is writable, takes O_DIRECT if asked, and has room for the
    /// largest file. Creates and removes one probe file; errors say what to change.
    pub fn preflight(&self, dir: &Path) -> Result<(), WorkloadError> {
        let shown = dir.display();
        match std::fs::metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(WorkloadError::InvalidSpec(format!(
                    "--dir {shown} does not exist: create it or pass another directory"
                )))
            }
            Err(e) => {
                return Err(WorkloadError::InvalidSpec(format!(
                    "--dir {shown} cannot be examined ({e}): pass another directory"
                )))
            }
            Ok(m) if !m.is_dir() => {
                return Err(WorkloadError::InvalidSpec(format!(
                    "--dir {shown} is not a directory: pass a directory"
                )))
            }
            Ok(_) => {}
        }
        let probe = dir.join(format!(".fsbench-probe-{}", std::process::id()));
        let opened = fileio::open(&probe, OpenMode::CreateNew, false);
        if let Err(e) = opened {
            let why = match e.raw_os_error() {
                Some(libc::EROFS) => "it is on a read-only filesystem".to_string(),
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    "this user may not create files in it".to_string()
                }
                _ => e.to_string(),
            };
            return Err(WorkloadError::InvalidSpec(format!(
                "--dir {shown} is not writable ({why}): pass a writable directory"
            )));
        }
        drop(opened);
        let direct_check = if self.spec.direct {
            fileio::open(&probe, OpenMode::ReadWrite, true).map(drop)
        } else {
            Ok(())
        };
        let _ = std::fs::remove_file(&probe);
        if let Err(e) = direct_check {
            return Err(WorkloadError::InvalidSpec(format!(
                "--direct: the filesystem of {shown} refuses O_DIRECT ({e}); drop --direct or pick another --dir"
            )));
        }
        let free = free_bytes(dir).unwrap_or(u64::MAX);
        let needed = self.largest_file();
        if free < needed {
            return Err(WorkloadError::InvalidSpec(format!(
                "--dir {shown} has {} free but the largest test file needs {}: lower --file-sizes or free space",
                human_bytes(free),
                human_bytes(needed)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(files: &str, records: &str) -> MatrixSpec {
        MatrixSpec {
            file_sizes: SizeSpec::parse(files).unwrap(),
            record_sizes: SizeSpec::parse(records).unwrap(),
            ..MatrixSpec::default()
        }
    }

    #[test]
    fn default_matrix_has_iozone_shape() {
        let plan = MatrixSpec::default().plan().unwrap();
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
        let plan = MatrixSpec {
            scale: 0.05,
            ..MatrixSpec::default()
        }
        .plan()
        .unwrap();
        // 4k..64m x 0.05 -> 4k (at least the smallest record) .. 4m (3.2m rounded up).
        assert_eq!(plan.file_sizes_bytes.first(), Some(&(4 << 10)));
        assert_eq!(plan.file_sizes_bytes.last(), Some(&(4 << 20)));
        assert_eq!(plan.record_sizes_bytes.len(), 13, "records are not scaled");
        assert_eq!(plan.spec.min_time_ns, 1_000_000);
        assert_eq!(plan.spec.scale, 0.05);
        // A file keeps its largest record's cell when that record is the only one.
        assert_eq!(scale_file_size(16 << 20, 0.05, 16 << 20), 16 << 20);
        assert_eq!(scale_file_size(16 << 20, 0.05, 4 << 10), 1 << 20);
        assert_eq!(scale_file_size(64 << 10, 1.0, 4 << 10), 64 << 10);
        for bad in [0.0, -1.0, 1.5, f64::NAN] {
            let e = MatrixSpec {
                scale: bad,
                ..MatrixSpec::default()
            }
            .plan()
            .unwrap_err()
            .to_string();
            assert!(e.contains("--scale"), "{e}");
        }
    }

    #[test]
    fn iozone_skip_lists_what_it_skips() {
        let plan = MatrixSpec {
            iozone_skip: true,
            ..MatrixSpec::default()
        }
        .plan()
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
        let plan = spec("4k..16k", "4k..16k").plan().unwrap();
        let cells: Vec<(u64, u64)> = plan
            .cells
            .iter()
            .map(|c| (c.file_size_bytes >> 10, c.record_size_bytes >> 10))
            .collect();
        assert_eq!(cells, [(4, 4), (8, 4), (8, 8), (16, 4), (16, 8), (16, 16)]);
    }

    #[test]
    fn invalid_sizes_say_what_to_change() {
        let e = spec("0", "4k").plan().unwrap_err().to_string();
        assert!(
            e.contains("--file-sizes") && e.contains("0 is not allowed"),
            "{e}"
        );
        let e = spec("4k..64m", "3k").plan().unwrap_err().to_string();
        assert!(
            e.contains("--record-sizes: 3k is not a power of two"),
            "{e}"
        );
        let e = spec("64m..4k", "4k").plan().unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = spec("4k..1m", "4m..16m").plan().unwrap_err().to_string();
        assert!(
            e.contains("every record size (4m..16m) is larger than every file size (4k..1m)"),
            "{e}"
        );
        assert!(spec("512", "512").plan().is_err());
        let e = spec("256m", "128m").plan().unwrap_err().to_string();
        assert!(
            e.contains("--record-sizes: 128m is larger than the largest record"),
            "{e}"
        );
        assert!(spec("64m", "64m").plan().is_ok());
    }

    #[test]
    fn tests_are_deduplicated_in_iozone_order() {
        let plan = MatrixSpec {
            tests: vec![MatrixTest::Read, MatrixTest::Write, MatrixTest::Read],
            ..spec("4k", "4k")
        }
        .plan()
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
        assert_eq!(s.plan().unwrap().max_passes, Some(PURGE_DEFAULT_MAX_PASSES));
        s.max_passes = Some(5);
        assert_eq!(s.plan().unwrap().max_passes, Some(5));
        s.max_passes = Some(0);
        assert!(s.plan().is_err());
    }

    #[test]
    fn preflight_checks_the_directory() {
        let plan = spec("4k", "4k").plan().unwrap();
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
