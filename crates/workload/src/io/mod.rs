//! `io`: fio-style jobs — sequential or random reads and writes, or a mix, of `bs` blocks on a
//! file per thread, issued by the sync engine (one pread/pwrite at a time) or by io_uring
//! with up to `iodepth` operations in flight per thread, each thread with a ring of its own;
//! optionally evenly paced to a rate, for a fixed load ("the p99 at 20 k IOPS").
//!
//! Flow: [`IoSettings::plan`] (checked, scaled) -> [`Files::prepare`] (each thread's file made
//! and laid out, untimed, as fio lays files out) -> a cold cache if the case asks for one ->
//! the files opened (O_DIRECT with `direct`), rings made and registered -> the timed phase,
//! every thread released at once ([`worker`]) -> with `verify`, the threads' files closed, the
//! cache made cold (the filesystem remounted) and every file read back and checked, untimed
//! ([`Files::verify`]) -> one result per direction (reads, writes) with IOPS, bandwidth,
//! completion and submission latency and CPU per operation.
//!
//! The files are removed at the end, on error and on Ctrl-C (unless `keep`). The same run
//! works on a block device ([`IoTarget::Device`], each thread on a region of its own) for a
//! baseline of the bare device; the command and plans run it in a directory.

mod pace;
pub(crate) mod results;
mod sched;
mod settings;
mod target;
mod worker;

pub use results::{CPU_PER_OP, OPS_RATE};
pub use settings::{Engine, IoPlan, IoSettings, Layout, Rw, Sched, MAX_IODEPTH};
pub use target::IoTarget;

use crate::data::DataSource;
use crate::harness::Harness;
use crate::placement::Placement;
use crate::together::{run_together, SharedStart};
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::Clock;
use fsbench_model::Outcome;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use target::Files;
use worker::Written;
use worker::{Control, Engine as Issue, Ring, RingError, Worker};

/// Why a run ended before (or instead of) its timed phase.
pub enum NotRun {
    /// This host or filesystem cannot do what the settings ask (O_DIRECT refused, io_uring
    /// disabled, no poll queues): the message names the setting.
    Unsupported(WorkloadError),
    Failed(WorkloadError),
    Interrupted,
}

impl Workload for IoSettings {
    const KIND: &'static str = "io";
    const ABOUT: &'static str =
        "fio-style I/O: sequential or random reads and writes at a queue depth (sync or io_uring), optionally at a fixed rate";
    const LONG_ABOUT: &'static str = "fio-style I/O: sequential or random reads and writes \
at a queue depth (sync or io_uring), optionally at a fixed rate.\n\nEach thread (--threads, fio's \
numjobs) works on a file of its own, laid out untimed before the timed phase, with a ring of its \
own and up to --iodepth operations in flight; a run reads or writes the file once, or with \
--time-based until --runtime. Results per direction: IOPS, bandwidth, completion latency (clat, \
issue to completion) and submission latency (slat) percentiles, CPU time per operation. Settings \
keep fio's names (docs/workloads/io.md has a table to translate a fio job).";
    const CATEGORY: Option<fsbench_model::Category> = Some(fsbench_model::Category::Throughput);
    // `direct` opens every file with O_DIRECT.
    const CACHE_POLICIES: &'static [fsbench_model::CachePolicy] = &[
        fsbench_model::CachePolicy::Warm,
        fsbench_model::CachePolicy::Drop,
        fsbench_model::CachePolicy::Remount,
        fsbench_model::CachePolicy::Direct,
    ];
    // On the bare device (`raw`), each thread on a region of its own.
    const ON_DEVICE: bool = true;

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        self.plan(ctx).map(drop)
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        let Ok(plan) = self.plan(ctx) else {
            return 0;
        };
        // Laying out at about 1 GB/s; a size-bound pass at about 20 k operations per second
        // and thread slot, bounded by the runtime. Saturating: sizes and runtimes may be as
        // large as their types take.
        let layout = plan.size.saturating_mul(plan.threads);
        let pass = plan.blocks.saturating_mul(1_000_000_000 / 20_000) / u64::from(plan.iodepth);
        let timed = match (plan.runtime_ns, plan.ops_per_thread) {
            (Some(runtime), None) => runtime,
            (Some(runtime), Some(_)) => runtime.min(pass),
            (None, _) => pass,
        };
        // `verify` reads every file back, at about 1 GB/s too.
        let read_back = if plan.verify { layout } else { 0 };
        layout
            .saturating_add(read_back)
            .saturating_add(timed)
            .saturating_add(50_000_000)
    }

    fn describe(&self, ctx: &Context) -> Option<serde_json::Value> {
        let mut plan = serde_json::to_value(self.plan(ctx).ok()?).ok()?;
        // The seed of the run is stored on its own; this one was drawn only to describe.
        plan.as_object_mut()?.remove("seed");
        let placement = crate::placement::Placement::planned(self.direct);
        plan.as_object_mut()?
            .insert("buffer_placement".into(), placement.into());
        Some(plan)
    }

    fn keeps_files(&self) -> bool {
        self.keep
    }

    fn table_columns() -> &'static [&'static str] {
        results::TABLE_COLUMNS
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        self.run_on(ctx, &IoTarget::of(dir), stop, sink, harness)
    }

    /// A directory as any workload's; a block device (the `raw` baseline) is checked when the
    /// run opens it.
    fn preflight(&self, _ctx: &Context, dir: &Path) -> Result<(), WorkloadError> {
        match IoTarget::of(dir) {
            IoTarget::Device(_) => Ok(()),
            IoTarget::Directory(dir) => crate::workload::check_directory(&dir),
        }
    }
}

impl IoSettings {
    /// Runs the job on `target`: a directory (what the command and plans do) or a block
    /// device (a baseline of the bare device; the caller guards which device).
    pub fn run_on(
        &self,
        ctx: &Context,
        target: &IoTarget,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let plan = match self.plan(ctx) {
            Ok(plan) => plan,
            Err(e) => return End::failed(e, self.seed),
        };
        let seed = Some(plan.seed);
        let mut files = None;
        let ended = run_plan(&plan, ctx, target, stop, sink, harness, &mut files);
        let mut end = match ended {
            Ok(()) => End::ok(seed),
            Err(NotRun::Interrupted) => End::interrupted(seed),
            Err(NotRun::Failed(e @ WorkloadError::Corrupt(_))) => End {
                outcome: Outcome::Corrupt,
                ..End::failed(e, seed)
            },
            Err(NotRun::Failed(e)) => End::failed(e, seed),
            Err(NotRun::Unsupported(e)) => End {
                outcome: Outcome::Unsupported,
                ..End::failed(e, seed)
            },
        };
        if let Some(files) = files.as_mut() {
            if self.keep && end.outcome == Outcome::Ok {
                end.kept = files.kept();
            }
        }
        end
    }
}

/// Everything between the plan and the results; `files` holds what was made so the caller
/// can keep it, and it goes when dropped.
fn run_plan(
    plan: &IoPlan,
    ctx: &Context,
    target: &IoTarget,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
    files: &mut Option<Files>,
) -> Result<(), NotRun> {
    if let IoTarget::Directory(dir) = target {
        crate::workload::check_directory(dir).map_err(NotRun::Failed)?;
    }
    // The engine first: a host without io_uring says so before anything is written.
    if plan.engine == Engine::IoUring {
        probe_io_uring()?;
    }
    let largest = plan.bs.max(1 << 20) as usize;
    let mut data: Vec<DataSource> = (0..plan.threads)
        .map(|t| {
            DataSource::new(
                plan.data,
                plan.seed ^ (t + 1).wrapping_mul(0x9e37_79b9),
                largest,
            )
        })
        .collect();
    let made = files.insert(Files::prepare(plan, target, &mut data)?);
    if stop.is_requested() {
        return Err(NotRun::Interrupted);
    }
    // Buffered I/O's buffers where this CPU copies fastest, timed in the directory (a device
    // is not written to for it: its buffers stay page-aligned).
    let placement = match target {
        IoTarget::Directory(dir) => {
            Placement::for_dir(dir, plan.direct, plan.size.saturating_mul(plan.threads))
        }
        IoTarget::Device(_) => Placement::ALIGNED,
    };
    let cache = start_cold(plan, sink, harness);
    let mut workers = Vec::with_capacity(plan.threads as usize);
    for (t, data) in data.into_iter().enumerate() {
        workers.push(open_worker(plan, made, t, data, placement)?);
    }
    // The one meeting of the phase: under mpirun, every rank starts here together.
    if !harness.phase_start() {
        return Err(NotRun::Interrupted);
    }
    let ctl = Control {
        stop,
        abort: AtomicBool::new(false),
        start: SharedStart::default(),
        clock: Clock::get(),
    };
    let series = crate::workload::phase_series(
        ctx,
        sink,
        results::phase_dims(plan).label(),
        "thread",
        workers.len(),
    );
    for (t, w) in workers.iter_mut().enumerate() {
        w.probe = series.as_ref().map(|s| s.probe(t));
    }
    let together = run_together(&mut workers, |w| w.run(plan, &ctl));
    if let Some(series) = series {
        series.finish();
    }
    let together = together
        .map_err(|e| NotRun::Failed(WorkloadError::io("start a thread for", &made.paths[0], e)))?;
    if let Some(other) = workers
        .iter()
        .map(|w| w.stats.cpu_sched)
        .find(|&s| s != plan.cpu_sched.name())
    {
        sink.warning(&format!(
            "the threads ran under the CPU scheduling policy {other}, not {} (a real-time or idle policy the process was started under is kept; otherwise the kernel refused the change)",
            plan.cpu_sched
        ));
    }
    let failure = workers
        .iter_mut()
        .find_map(|w| w.failure.take().map(|f| f.into_error(&w.path)));
    let stopped = workers.iter().any(|w| w.stats.stopped);
    if stopped && failure.is_none() {
        return Err(NotRun::Interrupted);
    }
    // What was measured, also when an operation failed: marked partial, and the sample failed.
    let records = results::records(
        plan,
        &workers,
        together.cpu,
        cache,
        failure.is_some(),
        placement,
    );
    if plan.verify && failure.is_none() {
        let written: Vec<(Written, u64)> = workers
            .iter_mut()
            .map(|w| {
                let written = w.written.take().expect("verified writes are marked");
                (written, w.seed())
            })
            .collect();
        // Every descriptor of the files closed, so the filesystem can be remounted.
        drop(workers);
        verify(plan, ctx, target, made, &written, stop, sink, harness)?;
    }
    for record in records {
        sink.status(&results::status_line(&record));
        sink.record(record, 0, None);
    }
    match failure {
        Some(e) => Err(NotRun::Failed(e)),
        None => Ok(()),
    }
}

/// `verify`, after the timed phase (untimed; the threads' descriptors closed): the cache made
/// cold — a filesystem fsbench made is remounted with the caches dropped; where that cannot be
/// (a directory, a device) each file's range is evicted on its own — and every thread's file
/// read back and checked ([`Files::verify`]). The first file found other than written ends the
/// run `corrupt`, and stays for inspection unless its filesystem goes after the run; the
/// phase's results are not stored then (figures of writes that did not all land).
#[allow(clippy::too_many_arguments)]
fn verify(
    plan: &IoPlan,
    ctx: &Context,
    target: &IoTarget,
    files: &mut Files,
    written: &[(Written, u64)],
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<(), NotRun> {
    let cold = match target {
        IoTarget::Directory(_) => match harness.cold() {
            Ok(how) => {
                sink.warning(&format!(
                    "--verify: every file was read back once the cache was made cold ({how})"
                ));
                true
            }
            Err(why) => {
                sink.warning(&format!(
                    "--verify: the cache could not be made cold ({why}): each file was synced \
                     and evicted on its own before it was read back; a filesystem that keeps \
                     files in memory (tmpfs) is checked from there"
                ));
                false
            }
        },
        IoTarget::Device(_) => false,
    };
    for (t, (w, seed)) in written.iter().enumerate() {
        if stop.is_requested() {
            return Err(NotRun::Interrupted);
        }
        match files.verify(t, plan, *seed, w, cold, harness) {
            Ok(_) => {}
            Err(WorkloadError::Corrupt(found)) => {
                let kept = if !ctx.disposable && files.keep_for_inspection(t) {
                    "; the file is kept"
                } else {
                    ""
                };
                let e = WorkloadError::Corrupt(format!("{found}{kept}"));
                return Err(NotRun::Failed(e.during(plan.rw)));
            }
            Err(e) => return Err(NotRun::Failed(e.during("the read-back (verify)"))),
        }
    }
    Ok(())
}

/// The case's cache policy `drop`: the files, laid out and closed, are brought cold before the
/// timed phase (a campaign remounts the filesystem). What the phase started from.
fn start_cold(plan: &IoPlan, sink: &mut dyn Sink, harness: &mut dyn Harness) -> &'static str {
    if plan.direct {
        return "direct";
    }
    if !plan.drop_cache {
        return "warm";
    }
    match harness.cold() {
        Ok(_) => "cold",
        Err(message) => {
            sink.warning(&format!(
                "the cache could not be made cold after the layout ({message}); the timed phase started warm"
            ));
            "warm"
        }
    }
}

/// io_uring can be set up here: `kernel.io_uring_disabled` and seccomp filters turn it off.
fn probe_io_uring() -> Result<(), NotRun> {
    io_uring::IoUring::new(2).map(drop).map_err(|e| {
        let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .map(|v| format!(" (kernel.io_uring_disabled = {})", v.trim()))
            .unwrap_or_default();
        NotRun::Unsupported(WorkloadError::invalid(
            "engine",
            format!("io_uring cannot be used on this host: {e}{disabled}; use the sync engine"),
        ))
    })
}

/// Thread `t`'s file opened for the timed phase, with its ring (io_uring).
fn open_worker(
    plan: &IoPlan,
    files: &Files,
    t: usize,
    mut data: DataSource,
    placement: Placement,
) -> Result<Worker, NotRun> {
    let path = &files.paths[t];
    let file = files
        .open(t, plan.direct)
        .map_err(|e| NotRun::Failed(WorkloadError::io("open", path, e)))?;
    let engine = match plan.engine {
        Engine::Sync => Issue::sync(plan, &mut data, placement),
        Engine::IoUring => {
            use std::os::fd::AsRawFd;
            let ring = Ring::new(plan, file.as_raw_fd(), &mut data, placement).map_err(|e| match e {
                RingError::Setup(e) => NotRun::Failed(WorkloadError::io("set up io_uring for", path, e)),
                RingError::Buffers(e) => NotRun::Unsupported(WorkloadError::invalid(
                    "fixedbufs",
                    format!("this host refuses to register {} of buffers ({e}): raise the locked-memory limit (ulimit -l) or run without fixedbufs", fsbench_measure::units::human_bytes(plan.bs * u64::from(plan.iodepth))),
                )),
                RingError::Files(e) => NotRun::Unsupported(WorkloadError::invalid(
                    "registerfiles",
                    format!("this host refuses to register the file with io_uring ({e}): run without registerfiles"),
                )),
            })?;
            if plan.hipri {
                // The device must poll (sysfs), and a first read must complete polled.
                let refused = |why: String| {
                    NotRun::Unsupported(WorkloadError::invalid(
                        "hipri",
                        format!("{why}: polled completion needs a device with poll queues (NVMe with nvme.poll_queues set); run without hipri"),
                    ))
                };
                match files.device_polls(t) {
                    Some(true) => {}
                    Some(false) => {
                        return Err(refused(format!(
                            "the device under {} does not poll (its queue/io_poll is 0)",
                            path.display()
                        )))
                    }
                    None => {
                        return Err(refused(format!(
                            "{} is on no single block device",
                            path.display()
                        )))
                    }
                }
                worker::probe_polling(file.as_raw_fd(), files.bases[t], plan.bs as u32).map_err(
                    |e| {
                        if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                            refused(format!(
                                "{} refuses polled reads (EOPNOTSUPP)",
                                path.display()
                            ))
                        } else {
                            NotRun::Failed(
                                WorkloadError::io("read", path, e).during("the hipri probe"),
                            )
                        }
                    },
                )?;
            }
            Issue::Uring(Box::new(ring))
        }
    };
    Ok(Worker::new(
        path.clone(),
        file,
        files.bases[t],
        plan,
        t as u64,
        data,
        engine,
    ))
}

#[cfg(test)]
mod tests;
