//! The replay workload (issue 41): an application's file-system calls, recorded once by
//! `fsbench record` (crates/trace), replayed on the configuration under test. Untimed, the
//! trace is read and checked ([`plan`]: nothing is touched when it is bad), its initial tree is
//! made again ([`tree`]) and the cache made cold when the policy asks; timed, every recorded
//! thread's calls are issued in order by a thread of their own ([`run`]), as the system calls
//! they were and never outside the replay's root ([`sys`]), each waiting for the earlier calls
//! of other threads on the same file, name or directory ([`deps`], the rule after ROOT).
//! Reported: the replay's time, latency per operation kind, throughput, and the calls whose
//! result differed from the recording's (divergence).

pub mod deps;
pub mod plan;
pub mod run;
pub mod sys;
pub mod tree;

#[cfg(test)]
pub(crate) mod tests;

use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use fsbench_measure::clock::now_ns;
use fsbench_measure::histogram::Histogram;
use fsbench_model::{CachePolicy, Category, Dims, Direction, MetricDef, ResultRecord, Unit};
use fsbench_trace::Trace;
use serde::{Deserialize, Serialize};

use crate::figures::{BYTES, ELAPSED, OPS, OPS_RATE, THROUGHPUT};
use crate::harness::Harness;
use crate::together::ScratchDir;
use crate::workload::{phase_series, Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};

/// The replay workload's settings: its plan table, its command's flags.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplaySettings {
    /// The trace to replay (`fsbench record -- COMMAND` writes one). Required.
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<PathBuf>,

    /// Pace: afap (as fast as possible), recorded (each call when it began in the recording),
    /// or a speed factor such as 2x (recorded times halved) or 0.5x.
    #[arg(long, value_name = "PACE", default_value_t = ReplaySettings::default().timing)]
    pub timing: Timing,

    /// Keep the order between threads (each call waits for the earlier calls of other threads
    /// on the same file, name or directory). false: each thread in its own order only.
    #[arg(long, value_name = "BOOL", default_value_t = ReplaySettings::default().dependencies, action = clap::ArgAction::Set)]
    pub dependencies: bool,
}

impl Default for ReplaySettings {
    fn default() -> ReplaySettings {
        ReplaySettings {
            trace: None,
            timing: Timing::Afap,
            dependencies: true,
        }
    }
}

/// How the replay is paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// Each call as soon as its thread and its waits allow.
    Afap,
    /// Each call no earlier than its recorded start (from the replay's start) divided by the
    /// factor: 1 is the recorded think time.
    Speed(f64),
}

impl Timing {
    /// The factor recorded times are divided by; None: as fast as possible.
    pub fn speed(self) -> Option<f64> {
        match self {
            Timing::Afap => None,
            Timing::Speed(s) => Some(s),
        }
    }
}

impl std::str::FromStr for Timing {
    type Err = String;
    fn from_str(text: &str) -> Result<Timing, String> {
        match text.trim() {
            "afap" => Ok(Timing::Afap),
            "recorded" => Ok(Timing::Speed(1.0)),
            other => {
                let factor = other
                    .strip_suffix('x')
                    .and_then(|f| f.parse::<f64>().ok())
                    .filter(|f| f.is_finite() && *f > 0.0)
                    .ok_or_else(|| {
                        format!(
                            "'{other}' is not a pace: use afap, recorded, or a speed factor \
                             above 0 such as 2x or 0.5x"
                        )
                    })?;
                Ok(Timing::Speed(factor))
            }
        }
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Timing::Afap => f.write_str("afap"),
            Timing::Speed(s) if *s == 1.0 => f.write_str("recorded"),
            Timing::Speed(s) => write!(f, "{s}x"),
        }
    }
}

fsbench_model::text_serde!(Timing);

/// The replay's wall time, from its first call to its last: the main figure.
pub const REPLAY_TIME: MetricDef =
    MetricDef::new("replay_time", Unit::Nanos, Direction::Lower).main();
/// Calls whose result differed from the recording's: failure against success, another
/// errno, fewer bytes read or written.
pub const DIVERGED: MetricDef = MetricDef::new("diverged", Unit::Count, Direction::Lower);
/// Lookups refused because they would have left the replay's root.
pub const REFUSED: MetricDef = MetricDef::new("refused", Unit::Count, Direction::Lower);

/// The most threads whose operations a phase's series count by thread.
const MAX_PROBES: usize = 64;

impl Workload for ReplaySettings {
    const KIND: &'static str = "replay";
    const ABOUT: &'static str =
        "Replay an application's recorded file-system calls (fsbench record) on a recreated tree";
    const LONG_ABOUT: &'static str = "Replay an application's recorded file-system calls \
(a trace of `fsbench record`).\n\nUntimed, the trace is checked (a bad one is refused before \
anything is touched) and the tree the application found is made again, files filled with \
incompressible data; timed, every recorded thread's calls are issued in order by a thread of \
their own, as the system calls they were, each waiting for the earlier calls of other threads \
on the same file, name or directory (--dependencies), as fast as possible or at the recorded \
pace (--timing). No path leaves the replay's directory, through a symbolic link the trace made \
either. Reported: the replay's time, latency per operation kind, throughput, and the calls \
whose result differed from the recording's.";
    const CATEGORY: Option<Category> = Some(Category::Tasks);

    fn check(&self, _ctx: &Context) -> Result<(), WorkloadError> {
        if self.trace.is_none() {
            return Err(WorkloadError::invalid(
                "trace",
                "required: name the trace to replay (fsbench record -- COMMAND writes one)",
            ));
        }
        Ok(())
    }

    fn estimate_ns(&self, _ctx: &Context) -> u64 {
        // The recording's length at its pace; a guess of a second as fast as possible.
        let recorded = self
            .trace
            .as_deref()
            .and_then(|p| Trace::read(p).ok())
            .map(|t| t.end.duration_ns);
        match (self.timing.speed(), recorded) {
            (Some(speed), Some(ns)) => (ns as f64 / speed) as u64,
            (None, Some(ns)) => ns / 2,
            _ => 1_000_000_000,
        }
    }

    /// The trace read and checked, and its tree against the directory's room, before the
    /// sample: a bad trace is the user's to fix (the run checks it again, for a filesystem
    /// fsbench makes, where no preflight runs).
    fn preflight(&self, _ctx: &Context, dir: &Path) -> Result<(), WorkloadError> {
        crate::workload::check_directory(dir)?;
        self.prepare(dir).map(drop)
    }

    fn table_columns() -> &'static [&'static str] {
        &[
            "replay_time",
            "ops_rate",
            "throughput",
            "latency_mean",
            "latency_p50",
            "latency_p99",
            "diverged",
            "refused",
        ]
    }

    fn describe(&self, _ctx: &Context) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "trace": self.trace.as_ref().map(|p| p.display().to_string()),
            "timing": self.timing.to_string(),
            "dependencies": self.dependencies,
        }))
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let seed = now_ns() ^ u64::from(std::process::id());
        match self.prepare(dir) {
            Ok((trace, plan, size)) => {
                ScratchDir::run(dir, "fsbench-replay", Some(seed), sink, |top, sink| {
                    self.replay(ctx, &trace, &plan, size, top, seed, stop, sink, harness)
                })
            }
            Err(e) => End::failed(e, Some(seed)),
        }
    }
}

impl ReplaySettings {
    /// Reads and checks the trace and its tree, and whether the tree fits `dir`: touches
    /// nothing.
    pub fn prepare(
        &self,
        dir: &Path,
    ) -> Result<(Trace, plan::Plan, tree::TreeSize), WorkloadError> {
        self.check(&Context::default())?;
        let path = self.trace.as_deref().expect("checked");
        let trace =
            Trace::read(path).map_err(|e| WorkloadError::invalid("trace", e.to_string()))?;
        let size = tree::check(&trace.tree)?;
        let plan = plan::compile(&trace, self.dependencies)
            .map_err(|e| WorkloadError::invalid("trace", format!("{}: {e}", path.display())))?;
        tree::room(&size, dir)?;
        Ok((trace, plan, size))
    }

    /// In `top` (the replay's root): the tree, the cold cache, the timed replay, its results.
    #[allow(clippy::too_many_arguments)]
    fn replay(
        &self,
        ctx: &Context,
        trace: &Trace,
        plan: &plan::Plan,
        size: tree::TreeSize,
        top: &Path,
        seed: u64,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<bool, WorkloadError> {
        if size.others > 0 {
            sink.warning(&format!(
                "the trace's initial tree lists {} FIFOs, sockets or devices; they were not \
                 made, and calls on them fail where the application's did not",
                size.others
            ));
        }
        if !trace.end.unsupported.is_empty() {
            let calls: Vec<String> = trace
                .end
                .unsupported
                .iter()
                .map(|(name, n)| format!("{name} {n}"))
                .collect();
            sink.warning(&format!(
                "the recording saw calls the replay cannot issue ({}): they are not replayed",
                calls.join(", ")
            ));
        }
        sink.status("making the trace's initial tree");
        tree::make(&trace.tree, top, seed)?;
        let dir = std::fs::File::open(top).map_err(|e| WorkloadError::io("open", top, e))?;
        // SAFETY: syncfs takes an open descriptor of the filesystem, held by `dir`.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(WorkloadError::io(
                "sync",
                top,
                std::io::Error::last_os_error(),
            ));
        }
        drop(dir);
        let cache = match ctx.cache {
            CachePolicy::Drop | CachePolicy::Remount => match harness.cold() {
                Ok(how) => how,
                Err(why) => {
                    sink.warning(&format!(
                        "the cache could not be made cold before the replay ({why}); it began warm"
                    ));
                    "warm".into()
                }
            },
            _ => "warm".into(),
        };
        raise_descriptor_limit();
        let root = open_root(top)?;
        if stop.is_requested() || !harness.phase_start() {
            return Ok(false);
        }
        let probes = plan.concurrency.clamp(1, MAX_PROBES);
        let series = phase_series(ctx, sink, "replay".into(), "thread", probes);
        let replayed = run::replay(
            plan,
            root.as_raw_fd(),
            run::Options {
                speed: self.timing.speed(),
                seed,
            },
            stop,
            series.as_ref(),
            probes,
        );
        if let Some(series) = series {
            series.finish();
        }
        let replayed = replayed.map_err(WorkloadError::Harness)?;
        if replayed.stopped {
            return Ok(false);
        }
        let records = self.records(trace, plan, &replayed, &cache);
        let diverged: Vec<String> = records
            .iter()
            .filter_map(|r| {
                let n = r.measurement(DIVERGED.name)?.value;
                let op = r.dims.operation.as_deref()?;
                (n > 0.0).then(|| format!("{op} {n}"))
            })
            .collect();
        if !diverged.is_empty() {
            let total = records.last().and_then(|r| r.measurement(DIVERGED.name));
            let first = replayed
                .lanes
                .iter()
                .filter_map(|l| l.first_diverged)
                .min_by_key(|(call, _)| *call)
                .map(|(call, got)| {
                    let c = &plan.calls[call as usize];
                    format!(
                        "; the first, call {call} ({}), returned {} where the recording's returned {}",
                        plan::KINDS[c.kind as usize],
                        returned(got),
                        returned(c.ret)
                    )
                })
                .unwrap_or_default();
            sink.warning(&format!(
                "the replay diverged from the recording: {} of {} calls returned otherwise \
                 ({}){first}; it did not do all the application did, and its figures are of \
                 what it did",
                total.map_or(0.0, |m| m.value),
                plan.calls.len(),
                diverged.join(", ")
            ));
        }
        let n = records.len();
        for (i, record) in records.into_iter().enumerate() {
            sink.record(record, i + 1, Some(n));
        }
        Ok(true)
    }

    /// One result per operation kind, then the replay's whole.
    fn records(
        &self,
        trace: &Trace,
        plan: &plan::Plan,
        replayed: &run::Replayed,
        cache: &str,
    ) -> Vec<ResultRecord> {
        let mut records = Vec::new();
        let (mut calls, mut bytes, mut diverged, mut refused) = (0u64, 0u64, 0u64, 0u64);
        for (k, kind) in plan::KINDS.iter().enumerate() {
            let mut histogram = Histogram::new();
            let (mut n, mut b, mut d) = (0u64, 0u64, 0u64);
            for lane in &replayed.lanes {
                if let Some(h) = &lane.histograms[k] {
                    histogram.merge(h);
                }
                n += lane.calls[k];
                b += lane.bytes[k];
                d += lane.diverged[k];
            }
            if n == 0 {
                continue;
            }
            calls += n;
            bytes += b;
            diverged += d;
            let mut measurements = vec![OPS.at(n as f64)];
            measurements.extend(crate::figures::latency(&histogram.summary()));
            measurements.push(DIVERGED.at(d as f64));
            if matches!(
                *kind,
                "read" | "pread" | "readv" | "preadv" | "write" | "pwrite" | "writev" | "pwritev"
            ) {
                measurements.push(BYTES.at(b as f64));
            }
            records.push(ResultRecord {
                dims: Dims {
                    operation: Some((*kind).to_string()),
                    ..Dims::default()
                },
                measurements,
                latency_bins: histogram.bins(),
                ..ResultRecord::default()
            });
        }
        for lane in &replayed.lanes {
            refused += lane.refused;
        }
        let wall = replayed.wall_ns.max(1);
        let seconds = wall as f64 / 1e9;
        let mut attributes = serde_json::Map::new();
        attributes.insert("timing".into(), self.timing.to_string().into());
        attributes.insert("dependencies".into(), self.dependencies.into());
        attributes.insert("cache_state".into(), cache.into());
        attributes.insert("recorded_ns".into(), trace.end.duration_ns.into());
        attributes.insert("recorded_threads".into(), plan.threads.len().into());
        attributes.insert("recorded_processes".into(), plan.procs.len().into());
        attributes.insert("replay_threads_at_once".into(), replayed.lanes_used.into());
        attributes.insert("command".into(), trace.header.command.join(" ").into());
        if trace.end.duration_ns > 0 {
            attributes.insert(
                "time_vs_recorded".into(),
                (wall as f64 / trace.end.duration_ns as f64).into(),
            );
        }
        records.push(ResultRecord {
            dims: Dims {
                threads: Some(plan.threads.len() as u64),
                ..Dims::default()
            },
            attributes,
            measurements: vec![
                REPLAY_TIME.at(wall as f64),
                OPS_RATE.at(calls as f64 / seconds),
                THROUGHPUT.at(bytes as f64 / seconds),
                OPS.at(calls as f64),
                BYTES.at(bytes as f64),
                ELAPSED.at(wall as f64),
                DIVERGED.at(diverged as f64),
                REFUSED.at(refused as f64),
            ],
            ..ResultRecord::default()
        });
        records
    }
}

/// A call's return as a reader wants it: the value, or the error's name.
fn returned(ret: i64) -> String {
    if ret >= 0 {
        return ret.to_string();
    }
    let e = std::io::Error::from_raw_os_error(-ret as i32);
    format!("-{} ({e})", -ret)
}

/// The replay's root, as the descriptor every path is resolved beneath.
fn open_root(top: &Path) -> Result<OwnedFd, WorkloadError> {
    let fd = crate::fileio::at::openat2(
        libc::AT_FDCWD,
        &std::ffi::CString::new(top.as_os_str().as_encoded_bytes()).map_err(|_| {
            WorkloadError::Directory(format!("{}: a NUL in the path", top.display()))
        })?,
        // Readable, not O_PATH: `sync` is a syncfs of it.
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )
    .map_err(|e| WorkloadError::io("open", top, e))?;
    // SAFETY: fd was just opened and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A trace of many processes holds many descriptors at once: the soft limit is raised to the
/// hard one (as a shell's `ulimit -n` may).
fn raise_descriptor_limit() {
    // SAFETY: plain data filled by getrlimit, passed back to setrlimit.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
