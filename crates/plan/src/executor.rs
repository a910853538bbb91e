//! How a sample's workload is run, apart from what is measured (as hyperfine separates its
//! executors from its benchmark): in this process ([`InProcess`], a workload command) or in a
//! child process under a watchdog ([`Child`], a campaign: a hang becomes a `timeout`, a crash a
//! `failed` sample with the child's last words, and what the child finished before is kept).
//! Either way the workload's results go to the sample's sink and its requests to the sample's
//! harness, and every process it starts is in the sample's processes (its cgroup).

use crate::protocol::{self, Event};
use crate::workload::Job;
use fsbench_model::Outcome;
use fsbench_testbed::cgroup::SampleProcesses;
use fsbench_workload::{Harness, Sink, StopFlag, WorkloadError};
use std::path::{Path, PathBuf};
use std::process::{Child as Process, Command, Stdio};
use std::time::{Duration, Instant};

/// How the workload ended, as the executor saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    pub status: Outcome,
    pub reason: Option<String>,
    pub seed: Option<u64>,
    /// What the workload left on purpose (the matrix's `--keep`).
    pub kept: Vec<PathBuf>,
}

impl Executed {
    fn failed(reason: String) -> Executed {
        Executed {
            status: Outcome::Failed,
            reason: Some(reason),
            seed: None,
            kept: Vec::new(),
        }
    }
}

/// What bounds the workload: its time (None: none), and the sample's processes (its cgroup,
/// with the platform's CPU share, or a reaper; None for a workload in this process that starts
/// no program).
pub struct Bounds<'p> {
    pub timeout_ns: Option<u64>,
    pub processes: Option<&'p mut SampleProcesses>,
}

/// Runs a job's workload in `dir`; `Interrupted` after a stop request (what it finished before
/// went to the sink: a campaign drops it and runs the sample again on `--resume`, a workload
/// command keeps it).
pub trait Executor {
    fn execute(
        &self,
        job: &Job,
        dir: &Path,
        bounds: Bounds<'_>,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Executed;

    /// Whether the workload runs in a process of its own, all of which is in the sample's
    /// processes; false: this process stays out, and only the programs the workload starts
    /// join them.
    fn separate_process(&self) -> bool;

    /// A workload's error as its user reads it: settings named by their plan keys, or by the
    /// command's flags.
    fn describe(&self, error: &WorkloadError) -> String {
        error.to_string()
    }
}

/// The workload runs in this process, on this thread (a workload command): nothing stands
/// between it and the caller's progress, and a stop request reaches it directly. A timeout asks
/// it to stop between its steps (a workload stuck inside a system call is not stopped).
pub struct InProcess {
    /// Reasons name a setting by its flag (`--file-sizes`), as a command's user typed it,
    /// rather than by its plan key.
    pub flag_names: bool,
}

impl Executor for InProcess {
    fn execute(
        &self,
        job: &Job,
        dir: &Path,
        bounds: Bounds<'_>,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Executed {
        use std::sync::atomic::{AtomicBool, Ordering};
        // The programs the workload starts join the sample's cgroup; this process does not.
        let procs = bounds
            .processes
            .as_ref()
            .and_then(|p| p.cgroup())
            .map(|c| c.procs_files())
            .unwrap_or_default();
        fsbench_workload::task::timing::put_tools_in(&procs);
        let mine = StopFlag::new();
        let done = AtomicBool::new(false);
        let timed_out = AtomicBool::new(false);
        let end = std::thread::scope(|s| {
            // The watchdog: a stop request or the deadline stops the workload between steps.
            // Out of the workload's descriptor table before the workload starts.
            fsbench_measure::aside::spawn_scoped_helper(s, || {
                let deadline = bounds
                    .timeout_ns
                    .map(|ns| Instant::now() + Duration::from_nanos(ns));
                while !done.load(Ordering::Acquire) {
                    if stop.is_requested() {
                        mine.request();
                    }
                    if deadline.is_some_and(|at| Instant::now() >= at) {
                        timed_out.store(true, Ordering::Release);
                        mine.request();
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            let end = job.workload.run(&job.context, dir, &mine, sink, harness);
            done.store(true, Ordering::Release);
            end
        });
        fsbench_workload::task::timing::put_tools_in(&[]);
        if timed_out.load(Ordering::Acquire) {
            return Executed {
                status: Outcome::Timeout,
                reason: Some(timeout_reason(bounds.timeout_ns.unwrap_or(0))),
                seed: end.seed,
                kept: end.kept,
            };
        }
        let ended = end.outcome;
        Executed {
            status: ended,
            reason: (ended != Outcome::Ok && ended != Outcome::Interrupted).then(|| {
                match &end.error {
                    Some(e) => self.describe(e),
                    None => crate::workload::reason(job, &end),
                }
            }),
            seed: end.seed,
            kept: end.kept,
        }
    }

    fn separate_process(&self) -> bool {
        false
    }

    fn describe(&self, error: &WorkloadError) -> String {
        if self.flag_names {
            error.naming(|field| format!("--{}", field.replace('_', "-")))
        } else {
            error.to_string()
        }
    }
}

fn timeout_reason(timeout_ns: u64) -> String {
    format!(
        "the workload ran past the {} timeout and was stopped",
        fsbench_measure::units::human_duration(timeout_ns)
    )
}

/// The workload runs in a child process, `WORKER case-worker --dir DIR`, with the job on its
/// stdin, under a watchdog (a campaign): its events come back on its stdout as they happen (a
/// reader thread keeps the pipe flowing), its requests are answered on its stdin, its reason
/// for failing comes on its stderr.
pub struct Child {
    /// The fsbench binary.
    pub worker: PathBuf,
}

/// The longest event line kept from the child (a result with its histogram is a few KiB).
const EVENT_LINE_MAX: usize = 16 << 20;

/// The child's stderr kept for the reason (its last lines are what matter).
const STDERR_KEPT: usize = 64 * 1024;

impl Executor for Child {
    fn execute(
        &self,
        job: &Job,
        dir: &Path,
        bounds: Bounds<'_>,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Executed {
        let Bounds {
            timeout_ns,
            processes,
        } = bounds;
        let Some(processes) = processes else {
            return Executed::failed("a child process needs the sample's processes".into());
        };
        let job_bytes = match serde_json::to_vec(job) {
            Ok(bytes) => bytes,
            Err(e) => return Executed::failed(format!("cannot encode the job: {e}")),
        };
        let mut command = Command::new(&self.worker);
        // The child is no rank: MPI's variables stay with the campaign, which meets the others.
        for (name, _) in std::env::vars_os() {
            let name_text = name.to_string_lossy();
            if name_text.starts_with("OMPI_") || name_text.starts_with("PMI") {
                command.env_remove(&name);
            }
        }
        if processes.cgroup().is_none() {
            // Without a cgroup, the reaper follows the child's own process group.
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let spawned = command
            .arg("case-worker")
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                return Executed::failed(format!("cannot start {}: {e}", self.worker.display()))
            }
        };
        // Into the sample's cgroup before it has its job, so all it does and starts is in it
        // (and under the quota).
        if let Err(e) = processes.add(child.id()) {
            terminate(&mut child);
            let cgroup = processes.cgroup().map(|c| c.dir().display().to_string());
            return Executed::failed(format!(
                "cannot put the workload in its cgroup ({}: {e})",
                cgroup.unwrap_or_default()
            ));
        }
        // The job is one line (small: a pipe holds 64 KiB). Stdin stays open for the answers
        // to the child's requests.
        let mut stdin = child.stdin.take();
        if let Some(pipe) = stdin.as_mut() {
            use std::io::Write;
            let _ = pipe
                .write_all(&job_bytes)
                .and_then(|_| pipe.write_all(b"\n"));
        }
        let (events, received) = std::sync::mpsc::channel::<Result<Event, String>>();
        let stdout_reader = child
            .stdout
            .take()
            .map(|pipe| std::thread::spawn(move || read_events(pipe, &events)));
        // The child's reason comes through a pipe, not a file in the work directory: a full
        // disk must not cost the reason (it is often the reason).
        let stderr_reader = child
            .stderr
            .take()
            .map(|pipe| std::thread::spawn(move || read_tail(pipe)));
        let mut end: Option<Executed> = None;
        let mut take = |event: Result<Event, String>,
                        stdin: &mut Option<std::process::ChildStdin>| {
            match event {
                Ok(Event::End {
                    outcome,
                    reason,
                    seed,
                    kept,
                }) => {
                    end = Some(Executed {
                        status: outcome,
                        reason,
                        seed,
                        kept,
                    })
                }
                Ok(event) => {
                    if let Some(answer) = protocol::serve(event, sink, harness) {
                        // Gone once the child is being stopped: it hears no at once.
                        if let Some(pipe) = stdin.as_mut() {
                            let _ = protocol::write_line(pipe, &answer);
                        }
                    }
                }
                Err(line) => sink.warning(&format!(
                    "the workload process printed an unexpected line: {}",
                    line.chars().take(200).collect::<String>()
                )),
            }
        };
        let started = Instant::now();
        let status = loop {
            while let Ok(event) = received.try_recv() {
                take(event, &mut stdin);
            }
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => {
                    terminate(&mut child);
                    return Executed::failed(format!("cannot watch the workload process: {e}"));
                }
            }
            if stop.is_requested() {
                // A child waiting for an answer (a cold cache, a phase) hears "no" at once.
                stdin.take();
                terminate(&mut child);
                return Executed {
                    status: Outcome::Interrupted,
                    reason: None,
                    seed: end.as_ref().and_then(|e| e.seed),
                    kept: Vec::new(),
                };
            }
            if timeout_ns.is_some_and(|ns| started.elapsed() >= Duration::from_nanos(ns)) {
                let _ = child.kill();
                let _ = child.wait();
                if let Some(reader) = stdout_reader {
                    let _ = reader.join();
                }
                while let Ok(event) = received.try_recv() {
                    take(event, &mut stdin);
                }
                return Executed {
                    status: Outcome::Timeout,
                    reason: Some(timeout_reason(timeout_ns.unwrap_or(0))),
                    seed: end.as_ref().and_then(|e| e.seed),
                    kept: Vec::new(),
                };
            }
            // The next event at once (a phase waiting to start), or another look in 20 ms.
            match received.recv_timeout(Duration::from_millis(20)) {
                Ok(event) => take(event, &mut stdin),
                // The child closed its output: it is ending.
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
        };
        if let Some(reader) = stdout_reader {
            let _ = reader.join();
        }
        while let Ok(event) = received.try_recv() {
            take(event, &mut stdin);
        }
        let text = stderr_reader
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default();
        let stderr_tail = || {
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            lines[lines.len().saturating_sub(3)..].join(" / ")
        };
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal(), end) {
            (Some(0), _, Some(end)) if end.status == Outcome::Ok => end,
            (Some(0), _, _) => Executed::failed(
                "the workload process ended without saying how its workload ended".into(),
            ),
            (Some(130), _, end) if stop.is_requested() => Executed {
                status: Outcome::Interrupted,
                reason: None,
                seed: end.and_then(|e| e.seed),
                kept: Vec::new(),
            },
            // The workload said it cannot run here, or found its data corrupt: as it said.
            (Some(1), _, Some(end))
                if matches!(end.status, Outcome::Unsupported | Outcome::Corrupt) =>
            {
                end
            }
            (Some(code), _, end) => {
                let seed = end.as_ref().and_then(|e| e.seed);
                let said = end.and_then(|e| e.reason).unwrap_or_else(stderr_tail);
                Executed {
                    seed,
                    ..Executed::failed(with_reason(
                        format!("the workload exited with {code}"),
                        &said,
                    ))
                }
            }
            (None, Some(signal), _) => Executed::failed(with_reason(
                format!(
                    "the workload was killed by signal {signal} ({})",
                    signal_name(signal)
                ),
                &stderr_tail(),
            )),
            (None, None, _) => Executed::failed("the workload ended without an exit status".into()),
        }
    }

    fn separate_process(&self) -> bool {
        true
    }
}

/// Reads the child's events, one line at a time, at most [`EVENT_LINE_MAX`] bytes of it kept: a
/// line that is not an event (not UTF-8, not JSON, too long) is handed on as Err (a warning)
/// and reading goes on, so the events after it still arrive.
fn read_events(pipe: impl std::io::Read, events: &std::sync::mpsc::Sender<Result<Event, String>>) {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(EVENT_LINE_MAX as u64)
            .read_until(b'\n', &mut line);
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') && line.len() == EVENT_LINE_MAX {
            // Skip the rest of an overlong line, keeping none of it.
            while let Ok(buf) = reader.fill_buf() {
                if buf.is_empty() {
                    break;
                }
                match buf.iter().position(|&b| b == b'\n') {
                    Some(end) => {
                        reader.consume(end + 1);
                        break;
                    }
                    None => {
                        let n = buf.len();
                        reader.consume(n);
                    }
                }
            }
            let _ = events.send(Err(format!("a line of more than {EVENT_LINE_MAX} bytes")));
            continue;
        }
        let event = serde_json::from_slice::<Event>(&line)
            .map_err(|_| String::from_utf8_lossy(&line).trim_end().to_string());
        if events.send(event).is_err() {
            break;
        }
    }
}

/// The last [`STDERR_KEPT`] bytes the child wrote on its stderr.
fn read_tail(mut pipe: impl std::io::Read) -> String {
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut buf) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_KEPT {
            tail.drain(..tail.len() - STDERR_KEPT);
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// `what: reason`, or `what (it said nothing)` when the reason is empty.
fn with_reason(what: String, reason: &str) -> String {
    if reason.is_empty() {
        format!("{what}, without a word on its standard error")
    } else {
        format!("{what}: {reason}")
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => {
            "SIGKILL: killed from outside, often by the out-of-memory killer; see `dmesg`"
        }
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS: a mapped file's storage failed, or the filesystem is full",
        libc::SIGABRT => "SIGABRT",
        _ => "a signal",
    }
}

/// Asks the child to stop (SIGTERM), then kills it if it does not within 10 s.
fn terminate(child: &mut Process) {
    // SAFETY: signalling the child this process spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_workload::harness::Detached;
    use fsbench_workload::workload::Collect;

    fn sleep_job() -> Job {
        Job {
            workload: crate::workload::PlannedWorkload {
                name: "sleep".into(),
                sweep: None,
                settings: fsbench_workload::WorkloadSettings::Sleep(Default::default()),
            },
            context: Default::default(),
        }
    }

    /// A worker that says odd things before its events: they become warnings, and the events
    /// after them still arrive.
    #[test]
    fn lines_that_are_not_events_do_not_cost_the_events_after_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let worker = dir.path().join("worker");
        let result = r#"{"event":"result","record":{"measurements":[{"metric":"slept","value":5.0,"unit":"ns","direction":"lower","main":true}]}}"#;
        let end = r#"{"event":"end","outcome":"ok","reason":null,"seed":7}"#;
        std::fs::write(
            &worker,
            format!(
                "#!/bin/sh\nhead -n 1 >/dev/null\nprintf '\\377\\376 not utf-8\\n'\necho 'hello'\necho '{result}'\necho '{end}'\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut processes = SampleProcesses::Reaper(fsbench_testbed::cgroup::Reaper::start());
        let mut sink = Collect::default();
        let got = Child { worker }.execute(
            &sleep_job(),
            dir.path(),
            Bounds {
                timeout_ns: Some(60_000_000_000),
                processes: Some(&mut processes),
            },
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        assert_eq!(
            processes.end(
                &fsbench_testbed::RecordingSystem::new(),
                &mut fsbench_testbed::ledger::Ledger::new(None, "t")
            ),
            Ok(0)
        );
        assert_eq!(got.status, Outcome::Ok, "{:?}", got.reason);
        assert_eq!(sink.records.len(), 1);
        assert_eq!(got.seed, Some(7));
        assert_eq!(sink.warnings.len(), 2, "{:?}", sink.warnings);
        assert!(sink.warnings[1].ends_with("hello"));
    }

    /// In this process, a timeout stops the workload between its steps and is a timeout.
    #[test]
    fn in_process_a_timeout_stops_the_workload_and_says_so() {
        let mut job = sleep_job();
        job.workload.settings =
            fsbench_workload::WorkloadSettings::Sleep(fsbench_workload::sleep::SleepSettings {
                duration: fsbench_measure::units::TimeSpan::from_ns(30_000_000_000),
                ..Default::default()
            });
        let started = Instant::now();
        let got = InProcess { flag_names: false }.execute(
            &job,
            Path::new("/"),
            Bounds {
                timeout_ns: Some(100_000_000),
                processes: None,
            },
            &StopFlag::new(),
            &mut Collect::default(),
            &mut Detached,
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(got.status, Outcome::Timeout);
        assert!(got.reason.unwrap().contains("timeout"));
        // A stop request is an interruption.
        let stop = StopFlag::new();
        stop.request();
        let bounds = Bounds {
            timeout_ns: None,
            processes: None,
        };
        let got = InProcess { flag_names: false }.execute(
            &job,
            Path::new("/"),
            bounds,
            &stop,
            &mut Collect::default(),
            &mut Detached,
        );
        assert_eq!(got.status, Outcome::Interrupted);
    }

    #[test]
    fn a_reason_never_ends_on_a_dangling_colon() {
        let silent = with_reason(
            format!("the workload was killed by signal 9 ({})", signal_name(9)),
            "",
        );
        assert!(!silent.trim_end().ends_with(':'), "{silent}");
        assert!(
            silent.contains("SIGKILL") && silent.contains("dmesg"),
            "{silent}"
        );
        assert_eq!(
            with_reason("the workload exited with 1".into(), "cannot write out.json"),
            "the workload exited with 1: cannot write out.json"
        );
    }
}
