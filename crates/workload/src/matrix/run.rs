//! Runs a [`MatrixPlan`] in a directory: one test file, every cell and phase in iozone's order,
//! each phase repeated until its minimum measured time, each result handed to the observer the
//! moment it exists.
//!
//! Everything a pass needs (data pool, read buffer, stdio buffers, histogram) is allocated
//! before the first pass; the timed loops only issue system calls, read the clock and count.
//! Setup between passes (creating the file afresh, evicting it from the page cache, purging the
//! CPU cache) is never timed. The test file is removed at the end, on error and on interruption.

use super::spec::{Cell, MatrixPlan};
use super::test::{Access, Api, Direction, MatrixTest, Phase};
use crate::control::StopFlag;
use crate::data::DataSource;
use crate::error::WorkloadError;
use crate::fileio::{self, raw, AlignedBuf, OpenMode};
use crate::harness::{phase_start_after, Answer, Ask, Harness, Relay};
use crate::matrix::{CacheState, MatrixSettings};
use crate::placement::Placement;
use crate::rng::{Permutation, Rng};
use crate::stdio::{StdioReader, StdioWriter};
use crate::together::run_together_watching;
use crate::workload::Place;
use fsbench_measure::clock::{now_ns, Clock};
use fsbench_measure::series::PhaseSampler;
use fsbench_measure::units::size_label;
use fsbench_measure::{NoWall, OpSummary, Recorder, Wall, WallAt};
use fsbench_model::{Dims, Outcome};
use serde::Serialize;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Receives results and warnings while the matrix runs (progress bars, live stores).
pub trait MatrixObserver {
    /// A phase of a cell finished; `done` of `total` results exist now.
    fn result(&mut self, _result: &CellResult, _done: usize, _total: usize) {}
    /// Something the reader of the results must know (said once per kind).
    fn warning(&mut self, _message: &str) {}
    /// A phase whose results' dimensions say `label` starts: its series' sampler (None: no
    /// series).
    fn series(&mut self, _label: String) -> Option<PhaseSampler> {
        None
    }
}

/// An observer that ignores everything.
pub struct NoObserver;
impl MatrixObserver for NoObserver {}

/// One measured phase of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellResult {
    pub test: MatrixTest,
    pub phase: Phase,
    pub file_size_bytes: u64,
    pub record_size_bytes: u64,
    /// The page-cache state the passes started from.
    pub cache_state: CacheState,
    /// Largest share of the file found in the page cache before a pass, percent (measured
    /// before the first pass, and before every pass when caches are dropped).
    pub resident_before_percent: Option<f64>,
    /// Whether the phase bypassed the page cache (O_DIRECT).
    pub direct_io: bool,
    /// Where its read and write buffers sat past a page boundary (`crate::placement`).
    pub buffer_offsets: Placement,
    /// Under a stonewall: whether it ended the phase before its passes were done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewalled: Option<bool>,
    /// The stonewall's scaled deadline, from the phase's first pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall_ns: Option<u64>,
    /// The stonewall is the first rank done.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stonewall_first: bool,
    /// Under `shared_file`: the size of the one file of the job's segments (ranks x file size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_file_bytes: Option<u64>,
    /// With a fixed number of passes: the clock's resolution over the measured time, the
    /// largest relative error the clock alone puts on the figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantisation: Option<f64>,
    #[serde(flatten)]
    pub summary: OpSummary,
    /// The per-operation latency distribution: (lowest ns of the bucket, count) for every
    /// non-empty bucket of the log-linear histogram, so percentiles can be merged later.
    pub latency_bins: Vec<(u64, u64)>,
}

/// Everything a run produced, including how it ended.
#[derive(Debug)]
pub struct MatrixOutcome {
    pub results: Vec<CellResult>,
    pub warnings: Vec<String>,
    /// Wall-clock time of the whole run, setup included.
    pub elapsed_ns: u64,
    /// Ok, Interrupted or Failed (with `failure`).
    pub status: Outcome,
    /// Why the run failed, when it did.
    pub failure: Option<WorkloadError>,
    /// The test file (removed unless the plan keeps it and the run completed).
    pub test_file: PathBuf,
}

/// Measures every cell and phase of `plan` in `dir`. Call [`MatrixPlan::preflight`] first for
/// friendly errors about the directory. Never panics on I/O errors: they end the run with
/// `Outcome::Failed` and the results measured so far.
pub fn run(
    plan: &MatrixPlan,
    dir: &Path,
    stop: &StopFlag,
    observer: &mut dyn MatrixObserver,
    harness: &mut dyn Harness,
) -> MatrixOutcome {
    let started = now_ns();
    let mut runner = match Runner::new(plan, dir) {
        Ok(runner) => runner,
        Err(e) => {
            return MatrixOutcome {
                results: Vec::new(),
                warnings: Vec::new(),
                elapsed_ns: now_ns() - started,
                status: Outcome::Failed,
                failure: Some(WorkloadError::io("create the test file in", dir, e)),
                test_file: dir.to_path_buf(),
            }
        }
    };
    let total = plan.result_count();
    let mut results = Vec::with_capacity(total);
    let mut warnings = Vec::new();
    let mut status = Outcome::Ok;
    let mut failure = None;
    let first_done = plan.stonewall_first.then(|| AtomicBool::new(false));
    // `--verify` after a remount: how the cache was made cold, said once; None once it failed.
    let mut cold_said = false;
    let mut cold_works = true;
    'cells: for &cell in &plan.cells {
        runner.start_cell(cell);
        for &phase in &plan.phases {
            let started = if stop.is_requested() {
                Ok(false)
            } else if runner.segment.is_some() && phase.creates_file() {
                // A shared file is made afresh by rank 0 while no rank has it open.
                let first = runner.segment.is_some_and(|s| s.rank == 0);
                let path = runner.path.clone();
                phase_start_after(harness, &mut || {
                    remove_shared(first, &path).map_err(|e| {
                        WorkloadError::io("remove the shared file", &path, e).during(phase.name())
                    })
                })
            } else {
                Ok(harness.phase_start())
            };
            // The phase's series, from its start (after the meeting of the ranks) to its end.
            let series = match &started {
                Ok(true) => observer.series(
                    Dims {
                        phase: Some(phase.name().to_string()),
                        file_size_bytes: Some(cell.file_size_bytes),
                        record_size_bytes: Some(cell.record_size_bytes),
                        ..Dims::default()
                    }
                    .label(),
                ),
                _ => None,
            };
            runner
                .recorder
                .set_probe(series.as_ref().map(|s| s.probe(0)));
            runner
                .recorder
                .mark_finishing(Pass::finishes(&runner.plan.settings, phase));
            let measured = match (started, &first_done) {
                (Ok(true), Some(wall)) => {
                    // The rank's main thread hears of the others while the phase runs in
                    // a thread of its own (MPI is called from this thread only); what the
                    // phase's thread asks of the harness (an eviction) is handed over to the
                    // main thread, which answers between its polls.
                    wall.store(false, Ordering::Relaxed);
                    let (asks, asked) = std::sync::mpsc::channel::<Ask>();
                    let (answers, answered) = std::sync::mpsc::channel::<Answer>();
                    let link = std::sync::Mutex::new((asks, answered));
                    let work = |r: &mut Runner| {
                        let mut relay = Relay {
                            relay: |ask| {
                                let link = link.lock().unwrap_or_else(|p| p.into_inner());
                                link.0.send(ask).ok()?;
                                link.1.recv().ok()
                            },
                        };
                        r.measure(cell, phase, stop, Some(wall), &mut relay)
                    };
                    run_together_watching(std::slice::from_mut(&mut runner), work, &mut |end| {
                        while let Ok(ask) = asked.try_recv() {
                            let _ = answers.send(ask.serve(harness));
                        }
                        if harness.phase_poll(wall.load(Ordering::Relaxed), end) {
                            wall.store(true, Ordering::Relaxed);
                        }
                    })
                    .map_err(|e| WorkloadError::io("start a thread in", dir, e))
                    .and_then(|mut together| together.results.remove(0))
                }
                (Ok(true), None) => runner.measure(cell, phase, stop, None, harness),
                (Ok(false), _) => Err(WorkloadError::Interrupted),
                (Err(e), _) => Err(e),
            };
            runner.recorder.set_probe(None);
            if let Some(series) = series {
                series.finish();
            }
            for warning in runner.warnings.drain(..) {
                observer.warning(&warning);
                warnings.push(warning);
            }
            match measured {
                Ok(result) => {
                    results.push(result);
                    observer.result(results.last().expect("just pushed"), results.len(), total);
                }
                Err(WorkloadError::Interrupted) => {
                    status = Outcome::Interrupted;
                    break 'cells;
                }
                Err(error @ WorkloadError::Corrupt(_)) => {
                    status = Outcome::Corrupt;
                    failure = Some(error);
                    break 'cells;
                }
                Err(error) => {
                    status = Outcome::Failed;
                    failure = Some(error);
                    break 'cells;
                }
            }
        }
        // `--verify`, once the cell's phases are done (untimed, no file open): the cache made
        // cold (a filesystem fsbench made is remounted) and the file read back from the device.
        let Some(fresh_from) = runner.written.take().filter(|_| cold_works) else {
            continue;
        };
        if stop.is_requested() {
            status = Outcome::Interrupted;
            break 'cells;
        }
        match harness.cold() {
            Ok(how) => {
                if !cold_said {
                    cold_said = true;
                    let said = format!(
                        "--verify: after each cell's phases the test file was read back again \
                         once the cache was made cold ({how}): every block checked from the \
                         device"
                    );
                    observer.warning(&said);
                    warnings.push(said);
                }
                let context = format!(
                    "the cell's phases, read back once the cache was made cold: {how} (file {}, \
                     record {})",
                    size_label(cell.file_size_bytes),
                    size_label(cell.record_size_bytes)
                );
                match runner.verify_cold(cell, fresh_from) {
                    Ok(()) => {}
                    Err(error @ WorkloadError::Corrupt(_)) => {
                        status = Outcome::Corrupt;
                        failure = Some(error.during(context));
                        break 'cells;
                    }
                    Err(error) => {
                        status = Outcome::Failed;
                        failure = Some(error.during(format!("the read-back after {context}")));
                        break 'cells;
                    }
                }
            }
            Err(why) => {
                cold_works = false;
                let said = format!(
                    "--verify: the read-back after a remount was skipped: the cache could not be \
                     made cold ({why}); each phase's read-back after eviction stands alone"
                );
                observer.warning(&said);
                warnings.push(said);
            }
        }
    }
    // A shared file is removed (by rank 0) once every rank is done with it: one more meeting.
    if runner.segment.is_some() && status == Outcome::Ok {
        harness.phase_start();
    }
    // The runner's drop removes the file unless it is to be kept (also when a panic unwinds).
    // A file found corrupt stays for inspection, unless its filesystem goes after the run.
    runner.keep_file = (plan.settings.keep && status == Outcome::Ok)
        || (status == Outcome::Corrupt && !plan.disposable);
    MatrixOutcome {
        results,
        warnings,
        elapsed_ns: now_ns() - started,
        status,
        failure,
        test_file: runner.path.clone(),
    }
}

/// The record visited by the i-th operation of a pass.
enum Offsets {
    Sequential,
    Backward { records: u64 },
    Stride { stride: u64, records: u64 },
    Same { index: u64 },
    Random(Permutation),
}

impl Offsets {
    fn new(access: Access, records: u64, stride: u64, rng: &mut Rng) -> Offsets {
        match access {
            Access::Sequential => Offsets::Sequential,
            Access::Backward => Offsets::Backward { records },
            Access::Stride => Offsets::Stride { stride, records },
            Access::SameRecord => Offsets::Same { index: records / 2 },
            Access::Random => Offsets::Random(Permutation::new(records, rng)),
        }
    }

    #[inline(always)]
    fn record(&mut self, i: u64) -> u64 {
        match self {
            Offsets::Sequential => i,
            Offsets::Backward { records } => *records - 1 - i,
            Offsets::Stride { stride, records } => i.wrapping_mul(*stride) % *records,
            Offsets::Same { index } => *index,
            Offsets::Random(permutation) => permutation.next_index(),
        }
    }
}

/// What the timed closures of one pass work on. The loops use the raw descriptor; the `File`
/// owns it and is taken only by the finishing step (fsync, close).
struct Pass<'a> {
    fd: RawFd,
    file: Option<File>,
    data: &'a mut DataSource,
    buffer: &'a mut [u8],
    offsets: Offsets,
    rng: &'a mut Rng,
    writer: &'a mut StdioWriter,
    reader: &'a mut StdioReader,
    record: u64,
    /// Where this process's bytes start in the file: 0, or its segment of a shared file.
    base: u64,
    mix_read_percent: u64,
    fsync: bool,
    close: bool,
    /// Writes carry verifiable headers (`--verify`).
    verify: bool,
}

impl Pass<'_> {
    /// Whether `phase`'s passes end with a step that does something (what [`Pass::finish`]
    /// does): its series mark the time it takes.
    fn finishes(settings: &MatrixSettings, phase: Phase) -> bool {
        let stdio_write = (phase.api(), phase.direction()) == (Api::Stdio, Direction::Write);
        Pass::fsyncs(settings, phase) || settings.include_close || stdio_write
    }

    /// fsync (-e) ends the passes of phases that write.
    fn fsyncs(settings: &MatrixSettings, phase: Phase) -> bool {
        settings.include_fsync && phase.direction() != Direction::Read
    }

    /// The end of a timed pass: flush the stdio buffer, fsync (-e) and close (-c) as asked.
    fn finish(&mut self, stdio_write: bool) -> io::Result<()> {
        if stdio_write {
            self.writer.flush(self.fd)?;
        }
        if self.fsync {
            self.file.as_ref().expect("open until closed").sync_all()?;
        }
        if self.close {
            let fd = self.file.take().expect("open").into_raw_fd();
            // SAFETY: `fd` came from into_raw_fd, so nothing else will close it.
            if unsafe { libc::close(fd) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

struct Runner<'p> {
    plan: &'p MatrixPlan,
    path: PathBuf,
    /// This rank's segment of a shared file (`shared_file` under mpirun).
    segment: Option<Place>,
    data: DataSource,
    buffer: AlignedBuf,
    /// Where buffered passes place their buffers (calibrated on the target for the cell's file
    /// size before its first pass).
    placement: Placement,
    rng: Rng,
    recorder: Recorder,
    purge: Option<AlignedBuf>,
    writer: StdioWriter,
    reader: StdioReader,
    stdio_capacity: usize,
    file_ready: bool,
    /// Leave the test file when the runner is dropped (set after a complete run with --keep).
    keep_file: bool,
    warned_stdio_direct: bool,
    warned_not_evicted: bool,
    warnings: Vec<String>,
    /// `--verify`: the cell's file was written (the last write's `fresh_from`), to be read
    /// back once more after its phases, from a cold cache.
    written: Option<Option<u64>>,
}

impl<'p> Runner<'p> {
    /// A runner with its test file's name taken: `fsbench-matrix-<pid>-<n>.dat`, made empty
    /// under a name no file has (a user's file at a name is passed over, so nothing this run
    /// did not make is truncated or removed); a shared file's name is the job's.
    fn new(plan: &'p MatrixPlan, dir: &Path) -> io::Result<Runner<'p>> {
        let largest_record = plan.largest_record() as usize;
        let segment = plan.segment;
        let path = match segment {
            Some(_) => dir.join(SHARED_FILE_NAME),
            None => fileio::create_new_file(dir, "fsbench-matrix", ".dat", false)?.1,
        };
        // Ranks of one job share the seed (the same offsets), not their data.
        let data_seed = plan.seed
            ^ segment.map_or(0, |s| u64::from(s.rank).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        Ok(Runner {
            plan,
            path,
            segment,
            data: DataSource::new(plan.settings.data, data_seed, largest_record),
            // Room for the offset of buffered reads past the page boundary.
            buffer: AlignedBuf::new(largest_record + crate::placement::ROOM),
            placement: Placement::ALIGNED,
            rng: Rng::new(plan.seed ^ 0x6f66_6673_6574_7321),
            recorder: Recorder::new(),
            purge: plan
                .purge_bytes
                .map(|bytes| AlignedBuf::new(bytes as usize)),
            writer: StdioWriter::new(fileio::BUFFER_ALIGN),
            reader: StdioReader::new(fileio::BUFFER_ALIGN),
            stdio_capacity: fileio::BUFFER_ALIGN,
            file_ready: false,
            keep_file: false,
            warned_stdio_direct: false,
            warned_not_evicted: false,
            warnings: Vec::new(),
            written: None,
        })
    }

    fn start_cell(&mut self, cell: Cell) {
        self.written = None;
        // The buffers where this CPU copies fastest for a file of the cell's size (calibrated
        // once per filesystem and reach, untimed, before the cell's first pass).
        if let Some(dir) = self.path.parent() {
            self.placement = Placement::for_dir(dir, self.plan.direct, cell.file_size_bytes);
        }
        // A shared file is made afresh by rank 0 before the cell's first (creating) phase.
        if self.segment.is_none() {
            self.remove_file();
        }
        self.file_ready = false;
    }

    /// `--verify`, after a phase that wrote (untimed): this process's span of the test file
    /// synced, evicted from the page cache as the cold reads are (where the filesystem lets go
    /// of it: tmpfs keeps it; without a harness, by fadvise) and read back, every block checked
    /// against what was written there.
    fn verify(
        &mut self,
        cell: Cell,
        harness: &mut dyn Harness,
        fresh_from: Option<u64>,
    ) -> Result<(), WorkloadError> {
        let (base, len) = self.span(cell);
        let file = self.open_to_verify()?;
        let io = |action: &str, e: io::Error| WorkloadError::io(action, &self.path, e);
        file.sync_data().map_err(|e| io("sync for verifying", e))?;
        if harness.evict(&self.path, base, len).is_err() {
            // SAFETY: advice on a descriptor `file` owns, over its own range.
            unsafe {
                libc::posix_fadvise(
                    file.as_raw_fd(),
                    base as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
        }
        self.written = Some(fresh_from);
        self.read_back(&file, cell, fresh_from)
    }

    /// `--verify` after the cache was made cold ([`Harness::cold`]: remounted, or every cache
    /// dropped): this process's span of the test file read back from the device and checked
    /// against what was last written there (`fresh_from` as the last write's read-back had it).
    fn verify_cold(&mut self, cell: Cell, fresh_from: Option<u64>) -> Result<(), WorkloadError> {
        let file = self.open_to_verify()?;
        self.read_back(&file, cell, fresh_from)
    }

    /// The test file opened for reading back, never through a symlink: a name in the directory
    /// under test is not proof of a file.
    fn open_to_verify(&self) -> Result<File, WorkloadError> {
        fileio::open(&self.path, OpenMode::Read, false)
            .map_err(|e| WorkloadError::io("open for verifying", &self.path, e))
    }

    /// Every block of this process's span of `file` checked against what was written there.
    fn read_back(
        &self,
        file: &File,
        cell: Cell,
        fresh_from: Option<u64>,
    ) -> Result<(), WorkloadError> {
        let (base, len) = self.span(cell);
        let expect = crate::verify::Expect {
            file: 0,
            seed: self.data.seed(),
            fresh_from,
        };
        let io = |action: &str, e: io::Error| WorkloadError::io(action, &self.path, e);
        match crate::verify::check(file, &self.path, expect, base, len) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(corruption)) => {
                let kept = if self.plan.disposable {
                    ""
                } else {
                    "; the file is kept"
                };
                Err(WorkloadError::Corrupt(format!("{corruption}{kept}")))
            }
            Err(e) => Err(io("read back", e)),
        }
    }

    fn remove_file(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Where this process's bytes of a `cell` start in the file, and how many there are.
    fn span(&self, cell: Cell) -> (u64, u64) {
        let base = self
            .segment
            .map_or(0, |s| u64::from(s.rank) * cell.file_size_bytes);
        (base, cell.file_size_bytes)
    }

    fn measure(
        &mut self,
        cell: Cell,
        phase: Phase,
        stop: &StopFlag,
        first_done: Option<&AtomicBool>,
        harness: &mut dyn Harness,
    ) -> Result<CellResult, WorkloadError> {
        let plan = self.plan;
        let direct = plan.direct && phase.api() != Api::Stdio;
        if plan.direct && !direct && !self.warned_stdio_direct {
            self.warned_stdio_direct = true;
            self.warnings.push("--direct does not apply to fwrite/fread: like iozone's stdio tests they always go through a user-space buffer and the page cache (their results say direct_io: false)".to_string());
        }
        let context = || {
            format!(
                "{phase} (file {}, record {})",
                size_label(cell.file_size_bytes),
                size_label(cell.record_size_bytes)
            )
        };
        if !phase.creates_file() && !self.file_ready {
            self.prepare_file(cell)
                .map_err(|e| WorkloadError::io("write", &self.path, e).during(context()))?;
        }
        // The first write of this phase (`--verify`: a block older than it, where the phase
        // writes every block, is a write that did not reach the file).
        let first_write = self.data.sequence();
        let evict = plan.drop_caches && phase.may_start_cold() && !direct;
        let mut resident: Option<f64> = None;
        let mut residency_unknown = false;
        self.recorder.reset();
        // The deadline counts from the first pass, after the untimed setup of the phase.
        let mut deadline = None;
        let walled_in = plan.stonewall_ns.is_some() || first_done.is_some();
        // The phase ended at the wall; its last pass was cut short by it.
        let walled;
        let mut cut_short = false;
        let wall_met = |deadline: Option<u64>| {
            deadline.is_some_and(|at| now_ns() >= at)
                || first_done.is_some_and(|f| f.load(Ordering::Relaxed))
        };
        loop {
            if stop.is_requested() {
                return Err(WorkloadError::Interrupted);
            }
            // A wall met between passes ends the phase before another (a creating phase's
            // open would make the file afresh).
            if self.recorder.passes() > 0 && wall_met(deadline) {
                walled = true;
                break;
            }
            let file = self
                .open_for(phase, direct)
                .map_err(|e| WorkloadError::io("open", &self.path, e).during(context()))?;
            if !phase.creates_file() && !direct && (evict || self.recorder.passes() == 0) {
                // Only this rank's segment of a shared file: the others may be mid-pass.
                let (base, len) = self.span(cell);
                let now = if evict {
                    harness.evict(&self.path, base, len).map_err(|e| {
                        WorkloadError::Harness(format!(
                            "cannot evict {} from the page cache during {}: {e}",
                            self.path.display(),
                            context()
                        ))
                    })?
                } else {
                    harness.resident(&self.path, base, len).ok()
                };
                match now {
                    Some(f) => resident = Some(resident.map_or(f, |r: f64| r.max(f))),
                    None => residency_unknown = true,
                }
            }
            if phase.api() == Api::Stdio {
                self.fit_stdio_buffers(&file);
            }
            if let Some(purge) = &mut self.purge {
                purge_cpu_cache(purge);
            }
            if let (None, Some(wall)) = (deadline, plan.stonewall_ns) {
                deadline = Some(now_ns() + wall);
            }
            // Nor does a pass start (for one operation) when its setup took the rest.
            if self.recorder.passes() > 0 && !phase.creates_file() && wall_met(deadline) {
                walled = true;
                break;
            }
            let pass = if walled_in {
                let wall = WallAt {
                    after_ns: deadline.map(|at| at.saturating_sub(now_ns())),
                    flag: first_done,
                };
                self.timed_pass(cell, phase, file, direct, &wall)
            } else {
                self.timed_pass(cell, phase, file, direct, &NoWall)
            };
            cut_short = pass.map_err(|e| {
                let verb = match phase.direction() {
                    Direction::Read => "read",
                    Direction::Write => "write",
                    Direction::Mixed => "read or write",
                };
                WorkloadError::io(verb, &self.path, e).during(context())
            })?;
            let passes = self.recorder.passes();
            let enough = match plan.passes {
                Some(exactly) => passes >= exactly,
                None => {
                    self.recorder.elapsed_ns() >= self.plan.min_time_ns
                        || plan.max_passes.is_some_and(|max| passes >= max)
                }
            };
            // A shared file is made once per creating phase (rank 0 alone may remove it).
            let once = self.segment.is_some() && phase.creates_file();
            if cut_short || enough || once {
                walled = cut_short;
                break;
            }
        }
        if cut_short && phase.creates_file() {
            // Left short: made whole now, untimed, before any rank starts the next phase.
            self.prepare_file(cell)
                .map_err(|e| WorkloadError::io("write", &self.path, e).during(context()))?;
        } else if phase.writes_whole_file() {
            self.file_ready = true;
        }
        if plan.settings.verify && phase.direction() != Direction::Read {
            // Every block was written again in this phase when a pass of it wrote them all (a
            // whole-file or random write; the random order visits every record once a pass)
            // and ended, or the file was made whole after a pass cut short.
            let whole = phase.writes_whole_file() || phase == Phase::RandomWrite;
            let completed = self.recorder.passes() > u64::from(cut_short);
            let fresh = whole && (completed || phase.creates_file());
            self.verify(cell, harness, fresh.then_some(first_write))
                .map_err(|e| e.during(context()))?;
        }
        if evict && resident.is_some_and(|r| r > 0.0) && !self.warned_not_evicted {
            self.warned_not_evicted = true;
            self.warnings.push(format!(
                "--drop-caches: the filesystem kept {:.0} % of the test file in the page cache after eviction (tmpfs keeps files in memory); those read results are marked warm or partial, not cold",
                resident.unwrap_or(0.0) * 100.0
            ));
        }
        let cache_state = if phase.creates_file() {
            CacheState::NewFile
        } else if direct {
            CacheState::Direct
        } else if residency_unknown {
            CacheState::Unknown
        } else {
            CacheState::from_resident(resident.unwrap_or(1.0))
        };
        Ok(CellResult {
            test: phase.test(),
            phase,
            file_size_bytes: cell.file_size_bytes,
            record_size_bytes: cell.record_size_bytes,
            cache_state,
            resident_before_percent: if residency_unknown {
                None
            } else {
                resident.map(|r| r * 100.0)
            },
            direct_io: direct,
            buffer_offsets: if direct {
                Placement::ALIGNED
            } else {
                self.placement
            },
            stonewalled: walled_in.then_some(walled),
            stonewall_ns: plan.stonewall_ns,
            stonewall_first: first_done.is_some(),
            shared_file_bytes: self
                .segment
                .map(|s| u64::from(s.ranks) * cell.file_size_bytes),
            quantisation: plan
                .passes
                .map(|_| Clock::get().resolution_ns() / self.recorder.elapsed_ns().max(1) as f64),
            summary: self.recorder.summary(),
            latency_bins: self.recorder.histogram().bins(),
        })
    }

    /// Writes the whole file (a shared file: this rank's segment), untimed, for phases that
    /// need one when no write phase made it or a stonewall left it short.
    fn prepare_file(&mut self, cell: Cell) -> io::Result<()> {
        let (base, _) = self.span(cell);
        let file = if self.segment.is_some() {
            fileio::open(&self.path, OpenMode::Create, false)?
        } else {
            self.remove_file();
            fileio::open(&self.path, OpenMode::CreateNew, false)?
        };
        let record = cell.record_size_bytes;
        if self.plan.settings.verify {
            // Every block written again from here.
            self.written = Some(Some(self.data.sequence()));
        }
        for i in 0..cell.records() {
            let at = base + i * record;
            raw::pwrite_all(
                file.as_raw_fd(),
                self.data
                    .next_at(self.plan.settings.verify, record as usize, at),
                at,
            )?;
        }
        self.file_ready = true;
        Ok(())
    }

    fn open_for(&mut self, phase: Phase, direct: bool) -> io::Result<File> {
        if phase.creates_file() && self.segment.is_some() {
            // Rank 0 removed it before the phase; whichever rank opens first makes it.
            return fileio::open(&self.path, OpenMode::Create, direct);
        }
        if phase.creates_file() {
            match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            return fileio::open(&self.path, OpenMode::CreateNew, direct);
        }
        let mode = match phase.direction() {
            Direction::Read => OpenMode::Read,
            Direction::Write => OpenMode::Write,
            Direction::Mixed => OpenMode::ReadWrite,
        };
        fileio::open(&self.path, mode, direct)
    }

    /// Sizes the stdio buffers to the file's st_blksize, as glibc does (allocates only when the
    /// size changes).
    fn fit_stdio_buffers(&mut self, file: &File) {
        let capacity = fileio::preferred_block_size(file);
        if capacity != self.stdio_capacity {
            self.writer = StdioWriter::new(capacity);
            self.reader = StdioReader::new(capacity);
            self.stdio_capacity = capacity;
        }
        self.writer.discard();
        self.reader.reset();
    }

    /// One timed pass over this process's records; true when `wall` ended it early.
    fn timed_pass<W: Wall>(
        &mut self,
        cell: Cell,
        phase: Phase,
        file: File,
        direct: bool,
        wall: &W,
    ) -> io::Result<bool> {
        let records = cell.records();
        let record = cell.record_size_bytes;
        let settings = &self.plan.settings;
        let offsets = Offsets::new(phase.access(), records, settings.stride, &mut self.rng);
        let (base, _) = self.span(cell);
        if base > 0 && phase.api() != Api::Positional {
            // Streams start at this rank's segment (untimed, once per pass).
            // SAFETY: lseek on a descriptor `file` owns.
            if unsafe { libc::lseek(file.as_raw_fd(), base as libc::off_t, libc::SEEK_SET) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        self.data
            .place(if direct { 0 } else { self.placement.write });
        let mut pass = Pass {
            fd: file.as_raw_fd(),
            file: Some(file),
            data: &mut self.data,
            buffer: {
                // O_DIRECT needs page alignment; buffered reads land where this CPU copies
                // fastest.
                let offset = if direct { 0 } else { self.placement.read };
                &mut self.buffer.as_mut_slice()[offset..offset + record as usize]
            },
            offsets,
            rng: &mut self.rng,
            writer: &mut self.writer,
            reader: &mut self.reader,
            record,
            base,
            mix_read_percent: u64::from(settings.mix_read_percent),
            fsync: Pass::fsyncs(settings, phase),
            close: settings.include_close,
            verify: settings.verify,
        };
        let recorder = &mut self.recorder;
        match (phase.api(), phase.direction()) {
            (Api::Stream, Direction::Write) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, i| {
                    let at = p.base + i * p.record;
                    raw::write_all(p.fd, p.data.next_at(p.verify, p.record as usize, at))?;
                    Ok(p.record)
                },
                |p| p.finish(false),
                wall,
            ),
            (Api::Stream, _) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, _| {
                    raw::read_exact(p.fd, p.buffer)?;
                    Ok(p.record)
                },
                |p| p.finish(false),
                wall,
            ),
            (Api::Stdio, Direction::Write) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, i| {
                    let at = p.base + i * p.record;
                    p.writer
                        .write(p.fd, p.data.next_at(p.verify, p.record as usize, at))
                },
                |p| p.finish(true),
                wall,
            ),
            (Api::Stdio, _) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, _| p.reader.read(p.fd, p.buffer),
                |p| p.finish(false),
                wall,
            ),
            // Sequential positional passes compute their offset directly: the access pattern
            // is chosen once per pass, not matched at every operation.
            (Api::Positional, Direction::Write) if matches!(pass.offsets, Offsets::Sequential) => {
                recorder.time_pass_walled(
                    &mut pass,
                    records,
                    |p, i| {
                        let at = p.base + i * p.record;
                        raw::pwrite_all(p.fd, p.data.next_at(p.verify, p.record as usize, at), at)?;
                        Ok(p.record)
                    },
                    |p| p.finish(false),
                    wall,
                )
            }
            (Api::Positional, Direction::Read) if matches!(pass.offsets, Offsets::Sequential) => {
                recorder.time_pass_walled(
                    &mut pass,
                    records,
                    |p, i| {
                        raw::pread_exact(p.fd, p.buffer, p.base + i * p.record)?;
                        Ok(p.record)
                    },
                    |p| p.finish(false),
                    wall,
                )
            }
            (Api::Positional, Direction::Write) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, i| {
                    let offset = p.base + p.offsets.record(i) * p.record;
                    raw::pwrite_all(
                        p.fd,
                        p.data.next_at(p.verify, p.record as usize, offset),
                        offset,
                    )?;
                    Ok(p.record)
                },
                |p| p.finish(false),
                wall,
            ),
            (Api::Positional, Direction::Read) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, i| {
                    let offset = p.base + p.offsets.record(i) * p.record;
                    raw::pread_exact(p.fd, p.buffer, offset)?;
                    Ok(p.record)
                },
                |p| p.finish(false),
                wall,
            ),
            (Api::Positional, Direction::Mixed) => recorder.time_pass_walled(
                &mut pass,
                records,
                |p, i| {
                    let offset = p.base + p.offsets.record(i) * p.record;
                    if p.rng.next_u64() % 100 < p.mix_read_percent {
                        raw::pread_exact(p.fd, p.buffer, offset)?;
                    } else {
                        raw::pwrite_all(
                            p.fd,
                            p.data.next_at(p.verify, p.record as usize, offset),
                            offset,
                        )?;
                    }
                    Ok(p.record)
                },
                |p| p.finish(false),
                wall,
            ),
        }
    }
}

/// The one file the ranks of a job share (`shared_file`), in the job's directory.
pub const SHARED_FILE_NAME: &str = "fsbench-matrix-shared.dat";

/// Rank 0 (`first`) removes the shared file; the others have nothing to do.
fn remove_shared(first: bool, path: &Path) -> io::Result<()> {
    if !first {
        return Ok(());
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

impl Drop for Runner<'_> {
    fn drop(&mut self) {
        // Of a shared file, rank 0 alone (after the last meeting, or when the job stops).
        let mine = self.segment.is_none_or(|s| s.rank == 0);
        if !self.keep_file && mine {
            self.remove_file();
        }
    }
}

/// Writes one byte per cache line of a buffer larger than the CPU caches, evicting whatever the
/// previous pass left there (iozone -p).
fn purge_cpu_cache(buffer: &mut AlignedBuf) {
    for line in buffer.as_mut_slice().chunks_mut(64) {
        line[0] = line[0].wrapping_add(1);
    }
    std::hint::black_box(buffer.as_slice().as_ptr());
}

/// Twice the level-2 cache of a core (sysfs), or 8 MiB when the kernel does not say.
pub fn default_purge_bytes() -> u64 {
    let base = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let l2 = (0..8).find_map(|index| {
        let dir = base.join(format!("index{index}"));
        let level = std::fs::read_to_string(dir.join("level")).ok()?;
        if level.trim() != "2" {
            return None;
        }
        let size = std::fs::read_to_string(dir.join("size")).ok()?;
        fsbench_measure::units::parse_size(size.trim()).ok()
    });
    l2.map_or(8 << 20, |bytes| 2 * bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{Detached, Watching};
    use crate::matrix::{MatrixSettings, MatrixTest};
    use crate::workload::Context;
    use fsbench_measure::units::{SizeSpec, TimeSpan};

    fn shared(rank: u32, ranks: u32, keep: bool) -> MatrixPlan {
        MatrixSettings {
            tests: vec![MatrixTest::Write, MatrixTest::Read, MatrixTest::Random],
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            min_time: TimeSpan::from_ns(1_000_000),
            shared_file: true,
            seed: Some(7),
            keep,
            ..MatrixSettings::default()
        }
        .plan(&Context {
            job: Some(Place { rank, ranks }),
            ..Context::default()
        })
        .unwrap()
    }

    fn walled(tests: Vec<MatrixTest>, shared_file: bool, wall: &str) -> MatrixPlan {
        MatrixSettings {
            tests,
            file_sizes: SizeSpec::parse("64m").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            min_time: TimeSpan::from_ns(10_000_000_000),
            stonewall: Some(wall.parse().unwrap()),
            shared_file,
            seed: Some(7),
            keep: true,
            ..MatrixSettings::default()
        }
        .plan(&Context {
            job: (shared_file || wall == "first").then_some(Place { rank: 1, ranks: 2 }),
            ..Context::default()
        })
        .unwrap()
    }

    /// A harness for `--verify`'s tests: its eviction does `0` to the file (stands for a device
    /// that lost or changed a write); nothing else is available.
    struct OnEvict<F: FnMut(&Path)>(F);

    impl<F: FnMut(&Path)> Harness for OnEvict<F> {
        fn cold(&mut self) -> Result<String, String> {
            Err("no".into())
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            Err("no".into())
        }
        fn evict(&mut self, path: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
            (self.0)(path);
            Ok(Some(0.0))
        }
        fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
            Err("no".into())
        }
    }

    /// The read-back never follows a symlink: a test file replaced by a link to another file
    /// (one root may read and the directory's owner may not) is refused with an error that
    /// says so — none of that file's bytes in any message (a check through the link would
    /// have quoted its first bytes as "no stamp (it begins …)"), the file untouched.
    #[test]
    fn the_read_back_does_not_follow_a_symlink_put_at_the_test_file() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"SECRET-BYTES-0123456789").unwrap();
        let plan = MatrixSettings {
            tests: vec![MatrixTest::Write],
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            seed: Some(5),
            verify: true,
            ..MatrixSettings::default()
        }
        .plan(&Context::default())
        .unwrap();
        let cell = plan.cells[0];
        let mut runner = Runner::new(&plan, dir.path()).unwrap();
        runner.prepare_file(cell).unwrap();
        runner.verify(cell, &mut Detached, Some(0)).unwrap();
        std::fs::remove_file(&runner.path).unwrap();
        std::os::unix::fs::symlink(&secret, &runner.path).unwrap();
        let said = runner
            .verify(cell, &mut Detached, None)
            .unwrap_err()
            .to_string();
        assert!(said.contains("cannot open for verifying"), "{said}");
        assert!(said.contains("symbolic links"), "{said}");
        assert!(!said.contains("534543524554"), "{said}");
        drop(runner);
        assert_eq!(std::fs::read(&secret).unwrap(), b"SECRET-BYTES-0123456789");
    }

    /// `--verify`: every test that writes (sequential, random, record rewrite, stdio,
    /// positional, the mix), at several records and placements, with a shared file's segment
    /// too, reads back what it wrote; the file kept checks again from outside the run.
    #[test]
    fn verified_writes_read_back_as_written_in_every_test() {
        for (shared_file, direct) in [(false, false), (true, false), (false, true)] {
            let dir = tempfile::tempdir().unwrap();
            let plan = MatrixSettings {
                tests: MatrixTest::ALL.to_vec(),
                file_sizes: SizeSpec::parse("256k,1m").unwrap(),
                record_sizes: SizeSpec::parse("4k,64k").unwrap(),
                min_time: TimeSpan::from_ns(1_000_000),
                shared_file,
                direct,
                seed: Some(11),
                keep: true,
                verify: true,
                ..MatrixSettings::default()
            }
            .plan(&Context {
                job: shared_file.then_some(Place { rank: 1, ranks: 2 }),
                ..Context::default()
            })
            .unwrap();
            let outcome = run(
                &plan,
                dir.path(),
                &StopFlag::new(),
                &mut NoObserver,
                &mut Detached,
            );
            if direct && outcome.status != Outcome::Ok {
                // tmpfs takes no O_DIRECT before 6.6: nothing to verify there.
                continue;
            }
            assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
            let base = if shared_file { 1 << 20 } else { 0 };
            let seed = Runner::new(&plan, dir.path()).unwrap().data.seed();
            let reader = fileio::open(&outcome.test_file, OpenMode::Read, false).unwrap();
            let expect = crate::verify::Expect {
                file: 0,
                seed,
                fresh_from: None,
            };
            let checked = crate::verify::check(&reader, &outcome.test_file, expect, base, 1 << 20)
                .unwrap()
                .unwrap();
            assert_eq!(checked.blocks, 256);
        }
    }

    /// A block that reads back other than written ends the run `corrupt`, naming the file,
    /// the block and what was found; the results before it are kept. The harness here stands
    /// for a device that lost a write: its eviction zeroes a block of the test file.
    #[test]
    fn a_block_read_back_other_than_written_ends_the_run_corrupt() {
        // The device lost a write: block 3 reads back as zeroes.
        let mut losing = OnEvict(|path: &Path| {
            use std::os::unix::fs::FileExt;
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            file.write_all_at(&[0u8; 4096], 3 * 4096).unwrap();
        });
        let dir = tempfile::tempdir().unwrap();
        let settings = MatrixSettings {
            tests: vec![MatrixTest::Read, MatrixTest::Write],
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            min_time: TimeSpan::from_ns(1_000_000),
            seed: Some(5),
            verify: true,
            ..MatrixSettings::default()
        };
        let plan = settings.plan(&Context::default()).unwrap();
        let outcome = run(
            &plan,
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut losing,
        );
        assert_eq!(outcome.status, Outcome::Corrupt);
        let said = outcome.failure.unwrap().to_string();
        assert!(said.starts_with("corrupt: "), "{said}");
        assert!(said.contains("the block at byte 12288"), "{said}");
        assert!(said.contains("no stamp"), "{said}");
        assert!(
            said.ends_with("; the file is kept (after write (file 64k, record 4k))"),
            "{said}"
        );
        // The evidence stays, in a directory.
        assert!(outcome.test_file.is_file());
        // Records of 1 KiB cannot carry a 4 KiB block's header: refused before anything runs.
        let small = MatrixSettings {
            record_sizes: SizeSpec::parse("1k").unwrap(),
            ..settings
        };
        let err = small.plan(&Context::default()).unwrap_err().to_string();
        assert!(
            err.contains("record_sizes") && err.contains("4k or more"),
            "{err}"
        );
    }

    /// A write that did not reach the file leaves the block an earlier write made there: right
    /// offset, right run, intact — and older than the phase that wrote every block again. The
    /// harness keeps block 3 as the first eviction finds it and puts it back at the next (a
    /// device that lost the later write): after write then rewrite, pwrite then re-pwrite,
    /// and (the random reads' cold start evicting first) the prepared file then the random
    /// writes. Each ends `corrupt`, naming the earlier write.
    #[test]
    fn a_write_that_did_not_reach_the_file_is_found() {
        for (tests, drop_caches, after) in [
            (vec![MatrixTest::Write], false, "(after rewrite"),
            (vec![MatrixTest::Pwrite], false, "(after re-pwrite"),
            (vec![MatrixTest::Random], true, "(after random-write"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let plan = MatrixSettings {
                tests,
                file_sizes: SizeSpec::parse("64k").unwrap(),
                record_sizes: SizeSpec::parse("4k").unwrap(),
                passes: Some(1),
                seed: Some(5),
                verify: true,
                drop_caches,
                ..MatrixSettings::default()
            }
            .plan(&Context::default())
            .unwrap();
            let outcome = run(
                &plan,
                dir.path(),
                &StopFlag::new(),
                &mut NoObserver,
                &mut OnEvict({
                    // Block 3 as the first eviction finds it, put back at the next.
                    let mut kept: Option<Vec<u8>> = None;
                    move |path: &Path| {
                        use std::os::unix::fs::FileExt;
                        let file = std::fs::OpenOptions::new()
                            .read(true)
                            .write(true)
                            .open(path)
                            .unwrap();
                        match kept.take() {
                            None => {
                                let mut block = vec![0u8; 4096];
                                file.read_exact_at(&mut block, 3 * 4096).unwrap();
                                kept = Some(block);
                            }
                            Some(old) => file.write_all_at(&old, 3 * 4096).unwrap(),
                        }
                    }
                }),
            );
            assert_eq!(
                outcome.status,
                Outcome::Corrupt,
                "{after}: {:?}",
                outcome.failure
            );
            let said = outcome.failure.unwrap().to_string();
            assert!(said.contains("the block at byte 12288"), "{said}");
            assert!(
                said.contains("the later write did not reach the file"),
                "{said}"
            );
            assert!(said.contains(after), "{said}");
        }
    }

    /// A harness for `--verify`'s read-back after a remount: its `cold` does `0` to the test
    /// files in the directory (stands for what the device gives back after a remount) and says
    /// "remounted (test)"; its eviction keeps block 3 of the file as the eviction after the
    /// first write finds it (for `0` to put back: a write lost on the way to the device).
    struct OnCold<F: FnMut(&Path, Option<&[u8]>)> {
        dir: PathBuf,
        damage: F,
        colds: u32,
        first: Option<Vec<u8>>,
    }

    impl<F: FnMut(&Path, Option<&[u8]>)> OnCold<F> {
        fn new(dir: &Path, damage: F) -> Self {
            OnCold {
                dir: dir.to_path_buf(),
                damage,
                colds: 0,
                first: None,
            }
        }
    }

    impl<F: FnMut(&Path, Option<&[u8]>)> Harness for OnCold<F> {
        fn cold(&mut self) -> Result<String, String> {
            self.colds += 1;
            for entry in std::fs::read_dir(&self.dir).unwrap() {
                (self.damage)(&entry.unwrap().path(), self.first.as_deref());
            }
            Ok("remounted (test)".into())
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            Err("no".into())
        }
        fn evict(&mut self, path: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
            use std::os::unix::fs::FileExt;
            if self.first.is_none() {
                let mut block = vec![0u8; 4096];
                let file = std::fs::File::open(path).unwrap();
                file.read_exact_at(&mut block, 3 * 4096).unwrap();
                self.first = Some(block);
            }
            Ok(Some(0.0))
        }
        fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
            Err("no".into())
        }
    }

    fn verified(tests: Vec<MatrixTest>, file_sizes: &str) -> MatrixPlan {
        MatrixSettings {
            tests,
            file_sizes: SizeSpec::parse(file_sizes).unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            passes: Some(1),
            seed: Some(5),
            verify: true,
            ..MatrixSettings::default()
        }
        .plan(&Context::default())
        .unwrap()
    }

    /// `--verify` reads each cell's file back once more after its phases, once the harness made
    /// the cache cold (a remount, on a filesystem fsbench made): a block changed behind the
    /// run's back while it was unmounted — zeroed, or an older write put back where the last
    /// one wrote every block again — ends it `corrupt` at that block's offset, saying it was
    /// found after the remount; untouched, the run is ok and says how the cache was made cold,
    /// once; a harness that cannot make it cold is said, never skipped silently.
    #[test]
    fn verify_reads_each_cells_file_back_again_after_a_remount() {
        use std::os::unix::fs::FileExt;
        let run_with = |plan: &MatrixPlan, dir: &Path, harness: &mut dyn Harness| {
            let mut observer = Said(Vec::new());
            let outcome = run(plan, dir, &StopFlag::new(), &mut observer, harness);
            (outcome, observer.0)
        };
        // Untouched: ok, one cold read-back per cell, said once.
        let dir = tempfile::tempdir().unwrap();
        let plan = verified(vec![MatrixTest::Write, MatrixTest::Read], "64k,128k");
        let mut harness = OnCold::new(dir.path(), |_: &Path, _: Option<&[u8]>| {});
        let (outcome, warnings) = run_with(&plan, dir.path(), &mut harness);
        assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
        assert_eq!(harness.colds, 2);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("(remounted (test))"), "{warnings:?}");
        assert_eq!(outcome.warnings, warnings);

        // Zeroed while unmounted: corrupt at its offset, after the remount.
        let dir = tempfile::tempdir().unwrap();
        let mut harness = OnCold::new(dir.path(), |path: &Path, _: Option<&[u8]>| {
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            file.write_all_at(&[0u8; 4096], 5 * 4096).unwrap();
        });
        let (outcome, _) = run_with(&plan, dir.path(), &mut harness);
        assert_eq!(outcome.status, Outcome::Corrupt, "{:?}", outcome.failure);
        let said = outcome.failure.unwrap().to_string();
        assert!(said.contains("the block at byte 20480"), "{said}");
        assert!(said.contains("no stamp"), "{said}");
        assert!(
            said.ends_with(
                "(after the cell's phases, read back once the cache was made cold: remounted \
                 (test) (file 64k, record 4k))"
            ),
            "{said}"
        );
        assert_eq!(outcome.results.len(), 4, "the first cell's phases are kept");
        assert!(outcome.test_file.is_file(), "the evidence is kept");

        // The write's block put back (a rewrite that never reached the device): the rewrite
        // wrote every block again, so an older one is found.
        let dir = tempfile::tempdir().unwrap();
        let plan = verified(vec![MatrixTest::Write], "64k");
        let mut harness = OnCold::new(dir.path(), |path: &Path, first: Option<&[u8]>| {
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            file.write_all_at(first.unwrap(), 3 * 4096).unwrap();
        });
        let (outcome, _) = run_with(&plan, dir.path(), &mut harness);
        assert_eq!(outcome.status, Outcome::Corrupt, "{:?}", outcome.failure);
        let said = outcome.failure.unwrap().to_string();
        assert!(said.contains("the block at byte 12288"), "{said}");
        assert!(said.contains("did not reach the file"), "{said}");

        // Only reads: the file fsbench prepared for them is checked too.
        let dir = tempfile::tempdir().unwrap();
        let plan = verified(vec![MatrixTest::Read], "64k");
        let mut harness = OnCold::new(dir.path(), |path: &Path, _: Option<&[u8]>| {
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            file.write_all_at(&[1], 7 * 4096 + 100).unwrap();
        });
        let (outcome, _) = run_with(&plan, dir.path(), &mut harness);
        assert_eq!(outcome.status, Outcome::Corrupt, "{:?}", outcome.failure);
        let said = outcome.failure.unwrap().to_string();
        assert!(said.contains("the block at byte 28672"), "{said}");

        // No harness to make the cache cold: said, once, with why.
        let dir = tempfile::tempdir().unwrap();
        let plan = verified(vec![MatrixTest::Write], "64k,128k");
        let (outcome, warnings) = run_with(&plan, dir.path(), &mut Detached);
        assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("after a remount was skipped")
                && warnings[0].contains("no harness"),
            "{warnings:?}"
        );
    }

    /// An observer that keeps the warnings.
    struct Said(Vec<String>);
    impl MatrixObserver for Said {
        fn warning(&mut self, message: &str) {
            self.0.push(message.to_string());
        }
    }

    /// The file a run kept is whole: every 4 KiB block of this rank's 64 MiB written.
    fn assert_whole(outcome: &MatrixOutcome, shared_file: bool) {
        let content = std::fs::read(&outcome.test_file).unwrap();
        let base = if shared_file { 64 << 20 } else { 0 };
        assert_eq!(content.len(), base + (64 << 20));
        assert!(content[base..]
            .chunks(4096)
            .all(|block| block.iter().any(|&b| b != 0)));
    }

    /// A stonewall of 1 ms ends every pass over 64 MiB (no page cache moves 64 GB/s) mid-pass,
    /// though --min-time asks for 10 s: each phase counts what it moved and says it met the
    /// wall; the file the write left short is written whole before its phase ends — the file,
    /// or this rank's segment of a shared one — so a run of the write alone keeps a whole file
    /// and the phases after it find every record.
    #[test]
    fn a_stonewall_ends_a_phase_mid_pass_and_the_file_is_left_whole() {
        for shared_file in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let plan = walled(vec![MatrixTest::Write], shared_file, "1ms");
            let alone = run(
                &plan,
                dir.path(),
                &StopFlag::new(),
                &mut NoObserver,
                &mut Detached,
            );
            assert_eq!(alone.status, Outcome::Ok, "{:?}", alone.failure);
            assert_eq!(alone.results[0].summary.passes, 1);
            assert_eq!(alone.results[0].stonewalled, Some(true));
            assert_whole(&alone, shared_file);

            let dir = tempfile::tempdir().unwrap();
            let plan = walled(
                vec![MatrixTest::Write, MatrixTest::Read],
                shared_file,
                "1ms",
            );
            let outcome = run(
                &plan,
                dir.path(),
                &StopFlag::new(),
                &mut NoObserver,
                &mut Detached,
            );
            assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
            let phases: Vec<&str> = outcome.results.iter().map(|r| r.phase.name()).collect();
            assert_eq!(phases, ["write", "rewrite", "read", "reread"]);
            for r in &outcome.results {
                assert_eq!(r.stonewalled, Some(true), "{r:?}");
                assert_eq!(r.stonewall_ns, Some(1_000_000));
                assert_eq!(r.summary.passes, 1, "{r:?}");
                assert!(r.summary.ops >= 1 && r.summary.ops < 16384, "{r:?}");
                assert_eq!(r.summary.bytes, r.summary.ops * 4096, "{r:?}");
                assert_eq!(r.summary.latency.count, r.summary.ops, "{r:?}");
                assert!(r.summary.elapsed_ns < 1_000_000_000, "{r:?}");
                assert_eq!(r.record().attributes["stonewalled"], true);
            }
            assert_whole(&outcome, shared_file);
        }
    }

    /// `first`: another rank's word, heard by the observer while the phase runs in its
    /// thread, stops every phase mid-pass; the observer is told once per phase that it ended.
    #[test]
    fn another_ranks_word_ends_every_phase_of_a_first_done_stonewall() {
        let dir = tempfile::tempdir().unwrap();
        let plan = walled(vec![MatrixTest::Write, MatrixTest::Read], false, "first");
        // A harness that hears, at its first poll of a phase, that another rank is done.
        let mut told = Watching {
            wall: true,
            ..Default::default()
        };
        let outcome = run(
            &plan,
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut told,
        );
        assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
        assert_eq!(
            told.ended, 4,
            "every phase watched, told once that it ended"
        );
        for r in &outcome.results {
            assert_eq!(r.stonewalled, Some(true), "{r:?}");
            assert!(r.stonewall_first && r.stonewall_ns.is_none());
            assert!(r.summary.ops >= 1 && r.summary.ops < 16384, "{r:?}");
            assert_eq!(r.record().attributes["stonewall"], "first");
        }
        assert_whole(&outcome, false);
        // Without a stonewall, a result says nothing of one.
        let plain = serde_json::to_value(&outcome.results[0]).unwrap();
        assert!(plain.get("stonewalled").is_some());
        let none = MatrixSettings {
            tests: vec![MatrixTest::Write],
            file_sizes: SizeSpec::parse("64k").unwrap(),
            record_sizes: SizeSpec::parse("4k").unwrap(),
            min_time: TimeSpan::from_ns(1_000_000),
            ..MatrixSettings::default()
        }
        .plan(&Context::default())
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let plain = run(
            &none,
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut Detached,
        );
        let attributes = plain.results[0].record().attributes;
        assert!(!attributes.contains_key("stonewalled") && !attributes.contains_key("stonewall"));
    }

    /// Rank 1 of 2 writes, reads and rewrites at random only its segment of the one file,
    /// the second 64 KiB; the first stays a hole (no byte of it written). Its creating phase
    /// makes one pass; the others repeat to their minimum time. It leaves the file to rank 0.
    #[test]
    fn a_rank_works_on_its_segment_of_the_shared_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let plan = shared(1, 2, false);
        let outcome = run(
            &plan,
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut Detached,
        );
        assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
        let content = std::fs::read(dir.path().join(SHARED_FILE_NAME)).unwrap();
        assert_eq!(content.len(), 128 << 10);
        assert!(content[..64 << 10].iter().all(|&b| b == 0));
        assert!(content[64 << 10..]
            .chunks(4096)
            .all(|block| block.iter().any(|&b| b != 0)));
        for r in &outcome.results {
            assert_eq!(r.shared_file_bytes, Some(128 << 10));
            assert_eq!(r.summary.bytes % (64 << 10), 0, "{r:?}");
            if r.phase.creates_file() {
                assert_eq!(r.summary.passes, 1, "{r:?}");
            }
        }
    }

    /// Rank 0 removes the shared file at the end unless it is kept; its data differs from
    /// another rank's with the same seed (every rank's bytes are its own).
    #[test]
    fn rank_zero_removes_the_shared_file_and_ranks_write_different_data() {
        let dir = tempfile::tempdir().unwrap();
        let one = run(
            &shared(1, 2, false),
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut Detached,
        );
        assert_eq!(one.status, Outcome::Ok);
        let zero = run(
            &shared(0, 2, true),
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut Detached,
        );
        assert_eq!(zero.status, Outcome::Ok);
        let content = std::fs::read(dir.path().join(SHARED_FILE_NAME)).unwrap();
        // Rank 0 made the file afresh: rank 1's earlier segment is gone.
        assert_eq!(content.len(), 64 << 10);
        assert!(content[..64 << 10].iter().any(|&b| b != 0));
        let other = tempfile::tempdir().unwrap();
        run(
            &shared(1, 2, false),
            other.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut Detached,
        );
        let theirs = std::fs::read(other.path().join(SHARED_FILE_NAME)).unwrap();
        assert_ne!(content[..4096], theirs[64 << 10..(64 << 10) + 4096]);

        let gone = run(
            &shared(0, 2, false),
            dir.path(),
            &StopFlag::new(),
            &mut NoObserver,
            &mut Detached,
        );
        assert_eq!(gone.status, Outcome::Ok);
        assert!(!dir.path().join(SHARED_FILE_NAME).exists());
    }
}
