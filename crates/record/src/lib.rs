//! `fsbench record`: every file-system call of an application's process tree, captured in the
//! kernel by an eBPF program on the sys_enter/sys_exit raw tracepoints and the sched
//! tracepoints (bpf/record.bpf.c, loaded with aya), resolved against each process's working
//! directory and descriptors, and written as an fsbench trace (crate fsbench-trace). Nothing is lost silently: a recording
//! that lost a call is refused. docs/recording.md tells what is captured and what it costs.

#[cfg(fsbench_recorder)]
mod probe;
pub mod procfs;
pub mod raw;
pub mod resolve;
pub mod syscalls;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use fsbench_trace::stats::Stats;
use fsbench_trace::TraceError;

/// Whether this build has its recorder (clang compiled the BPF program when it was built).
pub const AVAILABLE: bool = cfg!(fsbench_recorder);

/// [`AVAILABLE`], asked at run time.
pub fn available() -> bool {
    AVAILABLE
}

/// How often the reader takes what the kernel has recorded when it is not woken (the kernel
/// wakes it only when its buffer is an eighth full: a wakeup per call would slow the
/// application). The command's end wakes it at once (a pidfd), so this is only how often it
/// runs beside the application: each wakeup is time taken from a 2-core machine's application.
#[cfg_attr(not(fsbench_recorder), allow(dead_code))]
const POLL_MS: i32 = 100;

/// How long a command may take to end by itself once fsbench is asked to stop, before it is
/// sent SIGTERM.
#[cfg_attr(not(fsbench_recorder), allow(dead_code))]
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The ring buffer's size unless `--buffer` says otherwise.
pub const DEFAULT_BUFFER: u64 = 64 << 20;

/// Set (to anything), `fsbench record` attaches the classic sched_switch, sched_waking and page_fault_user
/// tracepoints even where the raw ones would do ([`Options::classic_sched`]; docs/recording.md).
pub const CLASSIC_SCHED_ENV: &str = "FSBENCH_RECORD_CLASSIC_SCHED";

/// What to record.
#[derive(Clone, Debug)]
pub enum Target {
    /// Run this command (`argv[0]` looked up on PATH) and record it and its descendants.
    Command(Vec<OsString>),
    /// Record this running process and its descendants until it exits (or `stop` is set).
    Pid(u32),
}

#[derive(Clone, Debug)]
pub struct Options {
    /// The tree the application works in; calls outside it are counted, not kept.
    pub root: PathBuf,
    pub target: Target,
    pub anonymise: bool,
    /// The ring buffer's size in bytes (rounded up to a power of two, at least a page).
    pub buffer: u64,
    pub output: PathBuf,
    /// Set (by SIGINT or SIGTERM) to end a `--pid` recording; a recorded command is sent
    /// SIGTERM if it has not ended by itself 2 s later, and the recording ends with it.
    pub stop: Arc<AtomicBool>,
    /// Attach the classic sched_switch, sched_waking and page_fault_user tracepoints even where
    /// the raw ones would do (a kernel without BTF gets all three classic; before 5.18,
    /// sched_switch): the command reads it from [`CLASSIC_SCHED_ENV`].
    pub classic_sched: bool,
}

/// A finished recording.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The recorded command's exit code (128 + the signal that ended it); `None` for `--pid`.
    pub exit_code: Option<i32>,
    pub stats: Stats,
    /// Directories under the root on other filesystems: not walked into, not recorded.
    pub mount_points: Vec<String>,
    /// Processes of the recorded tree still running when the recording ended (descendants the
    /// command left behind): their calls from then on are not in the trace.
    pub still_running: Vec<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("this fsbench was built without its recorder: install clang (scripts/install-deps.sh) and rebuild")]
    NotBuilt,
    #[error("recording needs root (CAP_BPF and CAP_PERFMON, to load the eBPF recorder): run fsbench record as root, e.g. with sudo")]
    NeedsRoot,
    #[error("the root {path}: {source}; give an existing directory with --root")]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read the initial tree under {path}: {source}")]
    Tree {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the output {path}: {source}; give a file in an existing directory with -o", path = path.display())]
    Output {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the eBPF recorder failed: {0}")]
    Kernel(String),
    #[error("cannot start the command {command:?}: {source}")]
    Start {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("process {0} does not exist (or has ended): give the pid of a running process")]
    NoProcess(u32),
    #[error("the recording lost {lost} calls (the ring buffer of {buffer} bytes was full {lost_buffer} times, the tables of threads or of processes {lost_table} times); the trace was refused and {output} not written: record again with a larger --buffer (e.g. --buffer {suggest})", output = output.display())]
    Lost {
        lost: u64,
        lost_buffer: u64,
        lost_table: u64,
        buffer: u64,
        suggest: String,
        output: PathBuf,
        exit_code: Option<i32>,
    },
    #[error("{count} paths were longer than the recorder's {max} bytes; the trace was refused and {output} not written (a truncated path would name another file)", max = raw::PATH_MAX_BYTES - 1, output = output.display())]
    Truncated {
        count: u64,
        output: PathBuf,
        exit_code: Option<i32>,
    },
    #[error("{count} calls could not be placed inside or outside the root (a path the recorder could not copy from the process's memory, one relative to a directory descriptor or working directory it does not know, one climbing out of a symbolic link with `..`, or a name that is not UTF-8); the trace was refused and {output} not written (they would have been counted as outside the root, or under a wrong name)", output = output.display())]
    Unresolved {
        count: u64,
        output: PathBuf,
        exit_code: Option<i32>,
    },
    #[error(transparent)]
    Trace(#[from] TraceError),
}

impl RecordError {
    /// The recorded command's exit code, when it ran before the recording failed.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            RecordError::Lost { exit_code, .. }
            | RecordError::Truncated { exit_code, .. }
            | RecordError::Unresolved { exit_code, .. } => *exit_code,
            _ => None,
        }
    }
}

/// `--buffer`: bytes, with an optional K, M or G (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("--buffer {text:?}: a size is a number with K, M or G (e.g. 256M)"))?;
    let scale: u64 = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => {
            return Err(format!(
                "--buffer {text:?}: the unit is K, M or G (e.g. 256M)"
            ))
        }
    };
    let bytes = n
        .checked_mul(scale)
        .filter(|&b| b > 0 && b <= 1 << 31)
        .ok_or_else(|| format!("--buffer {text:?}: between 4K and 2G"))?;
    Ok(bytes)
}

/// The ring buffer's real size: a power of two of at least a page.
pub fn ring_size(buffer: u64) -> u32 {
    buffer.clamp(4096, 1 << 31).next_power_of_two().min(1 << 31) as u32
}

/// Whether the trace can be written where it is asked for, checked before the command runs (a
/// recording is not repeatable: it must not be lost at the end to a missing directory): the
/// output is not a directory, nor anything but a regular file the trace may replace (a device,
/// a pipe, a symbolic link: [`fsbench_trace::check_replaceable`]), and its directory takes a
/// new file.
fn check_output(output: &Path) -> Result<(), RecordError> {
    use std::os::unix::ffi::OsStrExt;
    let refuse = |source| RecordError::Output {
        path: output.to_path_buf(),
        source,
    };
    if output.as_os_str().as_bytes().ends_with(b"/")
        || output.is_dir()
        || output.file_name().is_none()
    {
        return Err(refuse(std::io::Error::from_raw_os_error(libc::EISDIR)));
    }
    fsbench_trace::check_replaceable(output).map_err(refuse)?;
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let probe = dir.join(format!(".fsbench-record-probe-{}", std::process::id()));
    std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            refuse(std::io::Error::new(
                e.kind(),
                format!("its directory {}: {e}", dir.display()),
            ))
        })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Records `options.target` into `options.output`.
pub fn record(options: &Options) -> Result<Recorded, RecordError> {
    if !AVAILABLE {
        return Err(RecordError::NotBuilt);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(RecordError::NeedsRoot);
    }
    let root = std::fs::canonicalize(&options.root).map_err(|source| RecordError::Root {
        path: options.root.clone(),
        source,
    })?;
    if !root.is_dir() {
        return Err(RecordError::Root {
            path: options.root.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOTDIR),
        });
    }
    if let Target::Pid(pid) = options.target {
        if !procfs::alive(pid) {
            return Err(RecordError::NoProcess(pid));
        }
    }
    check_output(&options.output)?;
    let walked = fsbench_trace::tree::walk(&root).map_err(|source| RecordError::Tree {
        path: root.clone(),
        source,
    })?;
    run(options, &root, walked)
}

#[cfg(not(fsbench_recorder))]
fn run(_: &Options, _: &Path, _: fsbench_trace::tree::Walked) -> Result<Recorded, RecordError> {
    Err(RecordError::NotBuilt)
}

#[cfg(fsbench_recorder)]
fn run(
    options: &Options,
    root: &Path,
    walked: fsbench_trace::tree::Walked,
) -> Result<Recorded, RecordError> {
    use std::os::fd::AsRawFd;
    use std::sync::atomic::Ordering;

    let buffer = ring_size(options.buffer);
    let mut probe = probe::Probe::load(buffer, options.classic_sched)?;
    let mut calls = raw::Calls::default();
    calls.calls.reserve(1 << 16);
    let start_ns = fsbench_measure::clock::now_ns();
    let recorded_at_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut processes: std::collections::HashMap<u32, resolve::Process> =
        std::collections::HashMap::new();
    let command: Vec<String>;
    let mut exit_code = None;
    let mut main_pid = None;
    match &options.target {
        Target::Command(argv) => {
            command = argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let mut child = launch::Child::fork(argv).map_err(|source| RecordError::Start {
                command: command.join(" "),
                source,
            })?;
            probe.trace(child.pid)?;
            main_pid = Some(child.pid);
            if let Some(p) = procfs::process(root, child.pid) {
                processes.insert(child.pid, p);
            }
            child.release().map_err(|source| RecordError::Start {
                command: command.join(" "),
                source,
            })?;
            // Asked to stop (SIGINT or SIGTERM to fsbench): the command had the signal from the
            // terminal if it was Ctrl-C; if it still runs STOP_GRACE later (fsbench alone was
            // signalled: `kill`, `timeout`, a service manager), it is sent SIGTERM. Its end
            // ends the recording, and the trace is written.
            let mut stop_asked: Option<std::time::Instant> = None;
            let mut terminated = false;
            let end = procfs::pidfd(child.pid);
            loop {
                probe.poll(&mut calls, POLL_MS, end.as_ref().map(AsRawFd::as_raw_fd));
                if let Some(code) = child.try_wait() {
                    exit_code = Some(code);
                    break;
                }
                if !terminated && options.stop.load(Ordering::Relaxed) {
                    let asked = *stop_asked.get_or_insert_with(std::time::Instant::now);
                    if asked.elapsed() >= STOP_GRACE {
                        child.terminate();
                        terminated = true;
                    }
                }
            }
        }
        Target::Pid(pid) => {
            let pid = *pid;
            command = procfs::cmdline(pid);
            probe.trace(pid)?;
            let mut tree = vec![pid];
            for child in procfs::descendants(pid) {
                probe.trace(child)?;
                tree.push(child);
            }
            for p in tree {
                if let Some(state) = procfs::process(root, p) {
                    processes.insert(p, state);
                }
            }
            let end = procfs::pidfd(pid);
            while procfs::alive(pid) && !options.stop.load(Ordering::Relaxed) {
                probe.poll(&mut calls, POLL_MS, end.as_ref().map(AsRawFd::as_raw_fd));
            }
        }
    }
    // The recording's span ends when its command did (the records still in the buffer are
    // taken after).
    let end_ns = fsbench_measure::clock::now_ns();
    probe.drain(&mut calls);
    let still_running = probe.still_running(main_pid);
    let counts = probe.counts()?;
    let (blocked_time, wakeups) = (probe.blocked_time, probe.wakeups);
    let hooks = hooks(probe.raw_hooks, probe.raw_refused.as_deref());
    if let Some(bad) = probe.bad_record.take() {
        return Err(RecordError::Kernel(format!(
            "the BPF program and fsbench disagree on a record's layout ({bad}); rebuild fsbench"
        )));
    }
    drop(probe);
    let lost = counts.lost + counts.table_full;
    if lost > 0 {
        return Err(RecordError::Lost {
            lost,
            lost_buffer: counts.lost,
            lost_table: counts.table_full,
            buffer: u64::from(buffer),
            suggest: format!("{}M", (u64::from(buffer) * 4).max(1 << 20) >> 20),
            output: options.output.clone(),
            exit_code,
        });
    }
    if counts.truncated > 0 {
        return Err(RecordError::Truncated {
            count: counts.truncated,
            output: options.output.clone(),
            exit_code,
        });
    }
    let symlinks = walked
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, fsbench_trace::NodeKind::Symlink { .. }))
        .map(|n| n.path.clone())
        .collect();
    let resolved = resolve::resolve_with_links(root, calls, start_ns, processes, symlinks);
    if resolved.unresolved > 0 {
        return Err(RecordError::Unresolved {
            count: resolved.unresolved,
            output: options.output.clone(),
            exit_code,
        });
    }
    let host = <fsbench_measure::host::HostInfo as fsbench_measure::host::ProbeHost>::probe();
    let (hostname, kernel) = (host.hostname, host.kernel_release);
    let mut trace = fsbench_trace::Trace {
        header: fsbench_trace::Header {
            command,
            root: root.to_string_lossy().into_owned(),
            recorded_at_unix_s,
            host: hostname,
            kernel,
            mechanism: mechanism(blocked_time, wakeups, &hooks),
            anonymised: false,
            contents: false,
        },
        tree: walked.nodes,
        end: fsbench_trace::End {
            nodes: 0,
            events: resolved.events.len() as u64,
            duration_ns: end_ns.saturating_sub(start_ns),
            lost_events: 0,
            outside_events: resolved.outside,
            unsupported: resolved.unsupported,
        },
        events: resolved.events,
    };
    trace.end.nodes = trace.tree.len() as u64;
    if options.anonymise {
        fsbench_trace::anonymise::anonymise(&mut trace);
    }
    trace.write(&options.output)?;
    Ok(Recorded {
        exit_code,
        stats: Stats::of(&trace),
        mount_points: walked.mount_points,
        still_running,
    })
}

#[cfg(fsbench_recorder)]
mod launch;

/// How the trace was captured, for its header: the tracepoints, and what this kernel's
/// sched tracepoints did not let the recorder measure, and how sched_switch, sched_waking and
/// page_fault_user were attached ([`hooks`]).
fn mechanism(blocked_time: bool, wakeups: bool, hooks: &str) -> String {
    let mut missing = Vec::new();
    if !blocked_time {
        missing.push("the time blocked in page faults outside the calls");
    }
    if !wakeups {
        missing.push("which thread woke which");
    }
    if missing.is_empty() {
        format!("ebpf sys_enter/sys_exit + sched_switch + sched_waking ({hooks}; fsbench record)")
    } else {
        format!(
            "ebpf sys_enter/sys_exit (fsbench record; not recorded, this kernel's sched or exceptions \
             tracepoints keep their fields elsewhere: {})",
            missing.join(", ")
        )
    }
}

/// How the hooks on every switch, wakeup and fault were attached: `raw`, `classic` (asked
/// for with [`Options::classic_sched`]), `classic: why` when the raw ones could not be, or
/// `raw a, b; classic c: why` when only some were.
fn hooks(raw: [bool; 3], refused: Option<&str>) -> String {
    let names = |want: bool| {
        probe::HOOKS
            .iter()
            .zip(raw)
            .filter(|(_, r)| *r == want)
            .map(|((_, name), _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    // The first line of the reason, short enough for a header.
    let why = refused.map(|r| {
        let line = r.lines().next().unwrap_or_default();
        let mut end = line.len().min(160);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!(": {}", &line[..end])
    });
    let why = why.unwrap_or_default();
    match raw.iter().filter(|r| **r).count() {
        3 => "raw".to_string(),
        0 => format!("classic{why}"),
        _ => format!("raw {}; classic {}{why}", names(true), names(false)),
    }
}

#[cfg(test)]
mod tests {
    use super::hooks;

    #[test]
    fn the_header_names_each_hook_that_was_not_raw_and_why() {
        assert_eq!(hooks([true; 3], None), "raw");
        assert_eq!(hooks([false; 3], None), "classic");
        assert_eq!(
            hooks([false; 3], Some("no kernel BTF: not found\nmore")),
            "classic: no kernel BTF: not found"
        );
        assert_eq!(
            hooks([true, false, true], Some("sched_waking_raw refused: EINVAL")),
            "raw sched_switch, page_fault_user; classic sched_waking: sched_waking_raw refused: EINVAL"
        );
        let long = "é".repeat(200);
        let cut = hooks([false; 3], Some(&long));
        assert!(cut.len() <= "classic: ".len() + 160, "{cut}");
        assert!(cut.ends_with('é'), "{cut}");
    }
}
