//! Every process a sample starts ends with the sample (issue 23, item 6), for real: an `exec`
//! command that ignores SIGTERM and leaves children behind — one in the background, one in a
//! session of its own (setsid, out of every process group) — is gone, nothing stays mounted or
//! attached and nothing is written later, after Ctrl-C of `fsbench run`, kill -9 of it (its
//! guard ends them) and the plan's timeout; and a `--dir` campaign's scratch directory goes after
//! a timeout, a killed run (its guard) and a killed run and guard (`fsbench cleanup`), while
//! the user's files stay. The processes are found by an environment variable each test sets,
//! never by name. Root-only (cgroups, loop devices); CI is root.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The variable that marks every process a test's run starts (inherited by the workload's
/// processes, whatever their group or session).
const MARK: &str = "FSBENCH_TEST_MARK";

/// Seconds after the command starts at which its leftovers would write their markers: well
/// after the run has ended in every test (Ctrl-C gives the workload 10 s to stop).
const LATE_S: u64 = 14;

/// A command that ignores SIGTERM, says it started, and leaves a background child and one in
/// a session of its own that write a marker `LATE_S` seconds on, unless they were ended.
fn hostile_command() -> String {
    format!(
        "trap '' TERM; \
         (sleep {LATE_S}; touch \"$FSBENCH_TEST_OUT/late\") & \
         setsid sh -c 'sleep {LATE_S}; touch \"$FSBENCH_TEST_OUT/late-setsid\"' & \
         touch \"$FSBENCH_TEST_OUT/started\"; sleep 60"
    )
}

/// A campaign of one `exec` sample running [`hostile_command`], with its processes marked.
struct Hostile {
    s: Scratch,
    mark: String,
    out: PathBuf,
}

impl Hostile {
    fn new(test: &str) -> Hostile {
        let s = Scratch::new();
        let out = s.path().join("out");
        std::fs::create_dir(&out).unwrap();
        Hostile {
            mark: format!("{test}-{}", std::process::id()),
            s,
            out,
        }
    }

    /// The plan: one exec sample on ext4 (a loop device), with `extra` top-level keys.
    fn plan(&self, extra: &str) -> PathBuf {
        self.s.plan(&format!(
            r#"
name = "hostile"
repetitions = 1
{extra}
[device]
image = "64m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "task"
tasks = "exec"
sync = false
data_dir = "{}"
command = '''{}'''
"#,
            self.s.path().join("data").display(),
            hostile_command()
        ))
    }

    /// `fsbench run ARGS` in the background, its processes marked.
    fn spawn(&self, args: &[&str]) -> Child {
        self.marked_spawn(self.s.command(args))
    }

    fn marked_spawn(&self, mut command: std::process::Command) -> Child {
        command
            .env(MARK, &self.mark)
            .env("FSBENCH_TEST_OUT", &self.out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `fsbench run` of [`Hostile::plan`] (with `extra` keys) and `args`, once the command has
    /// started: the run, its pid and when the command started.
    fn start(&self, extra: &str, args: &[&str]) -> (Child, u32, Instant) {
        let plan = self.plan(extra);
        let mut all = vec!["--plan", plan.to_str().unwrap()];
        all.extend_from_slice(args);
        let run = self.spawn(&all);
        let started = self.wait_started();
        let pid = run.id();
        assert_cgroup_named_for(pid);
        (run, pid, started)
    }

    /// Waits until the command has started.
    fn wait_started(&self) -> Instant {
        let start = Instant::now();
        while !self.out.join("started").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "exec never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Instant::now()
    }

    /// The processes carrying this test's mark, with their command lines.
    fn marked(&self) -> Vec<(u32, String)> {
        let wanted = format!("{MARK}={}", self.mark).into_bytes();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            if environ.split(|&b| b == 0).any(|v| v == wanted.as_slice()) {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
            }
        }
        found
    }

    /// Waits up to `limit` for every marked process to end, then asserts that none is left.
    fn wait_until_none_left(&self, limit: Duration) {
        let start = Instant::now();
        while !self.marked().is_empty() && start.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = self.marked();
        assert!(left.is_empty(), "processes of the sample left: {left:?}");
    }

    /// No cgroup of process `pid` (a run) is left in any hierarchy, nor a state file in the
    /// work directory. `fsbench-<pid>-` begins its cgroups' names (`fsbench-<pid>-<start
    /// time>-<n>`) and those of the older form (`fsbench-<pid>-<n>`) alike.
    fn assert_no_cgroup_or_record_of(&self, pid: u32) {
        let left = cgroups_named(&format!("fsbench-{pid}-"));
        assert!(left.is_empty(), "cgroups left: {left:?}");
        let records = entries(&self.s.work().join("state"));
        assert!(records.is_empty(), "state files left: {records:?}");
    }

    /// Within `limit`, every process of the run `pid` has ended (at once: the run ended after
    /// them; a killed run's guard takes a moment), and nothing of it is left: no mount, loop
    /// device, image, cgroup or record.
    fn assert_all_gone(&self, pid: u32, limit: Duration) {
        self.wait_until_none_left(limit);
        self.s.assert_clean();
        self.assert_no_cgroup_or_record_of(pid);
    }

    /// Past the time the leftovers would have written, nothing was written.
    fn assert_nothing_written_late(&self, started: Instant) {
        let after = Duration::from_secs(LATE_S) + Duration::from_millis(1500);
        if let Some(rest) = after.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
        for name in ["late", "late-setsid"] {
            assert!(
                !self.out.join(name).exists(),
                "a process of the sample wrote {name} after the run ended"
            );
        }
    }
}

/// The cgroups, in every mounted hierarchy, whose names begin with `prefix`.
fn cgroups_named(prefix: &str) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut found = Vec::new();
    for line in text.lines().filter(|l| l.contains(" - cgroup")) {
        let root = line.split(' ').nth(4).unwrap();
        found.extend(
            entries(Path::new(root))
                .into_iter()
                .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix)),
        );
    }
    found
}

/// The sample's cgroup of the running process `pid` is named for it, its pid and its start
/// time (field 22 of /proc/PID/stat): `fsbench cleanup` tells it from a cgroup of another
/// process that had the pid before.
fn assert_cgroup_named_for(pid: u32) {
    let start = start_time(pid);
    let named = cgroups_named(&format!("fsbench-{pid}-{start}-"));
    assert!(
        !named.is_empty(),
        "no cgroup named for process {pid} started at {start}"
    );
}

impl Drop for Hostile {
    /// Whatever a failing test leaves of its own marked processes is ended (only those).
    fn drop(&mut self) {
        for (pid, _) in self.marked() {
            // SAFETY: signalling a process that carries this test's mark.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

#[test]
fn ctrl_c_of_a_run_ends_every_process_of_its_sample() {
    if !root_or_skip("ctrl_c_of_a_run_ends_every_process_of_its_sample") {
        return;
    }
    let h = Hostile::new("ctrl-c");
    let (run, pid, started) = h.start("", &[]);
    // SAFETY: signalling the child this test spawned.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    h.assert_all_gone(pid, Duration::ZERO);
    h.assert_nothing_written_late(started);
}

#[test]
fn a_killed_runs_guard_ends_every_process_of_its_sample_before_unmounting() {
    if !root_or_skip("a_killed_runs_guard_ends_every_process_of_its_sample_before_unmounting") {
        return;
    }
    let h = Hostile::new("kill-9");
    let (mut run, pid, started) = h.start("", &[]);
    run.kill().unwrap();
    let out = run.wait_with_output().unwrap();
    // The guard (marked too) ends the sample's processes, undoes the target and leaves; it
    // ended them first: the mount was not busy.
    h.assert_all_gone(pid, Duration::from_secs(15));
    let said = stderr(&out);
    assert!(
        said.contains("processes of the sample and removed cgroup")
            && said.contains("was killed; unmounted")
            && !said.contains("lazily"),
        "{said}"
    );
    h.assert_nothing_written_late(started);
}

#[test]
fn a_sample_past_its_timeout_ends_every_process_it_started() {
    if !root_or_skip("a_sample_past_its_timeout_ends_every_process_it_started") {
        return;
    }
    let h = Hostile::new("timeout");
    let (run, pid, started) = h.start("timeout = \"2s\"", &["--quiet"]);
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sample = first_sample(&h.s.export(1)).clone();
    assert_eq!(sample["status"], "timeout");
    assert_eq!(own_warnings(&sample), Vec::<String>::new(), "{sample}");
    h.assert_all_gone(pid, Duration::ZERO);
    h.assert_nothing_written_late(started);
}

/// A workload command's programs (`fsbench task exec --fs`) live in a cgroup of their own:
/// Ctrl-C ends them (the command kills what ignores SIGTERM), and so does the guard of a
/// command killed with kill -9, before it unmounts.
#[test]
fn a_workload_commands_programs_end_on_ctrl_c_and_with_its_guard() {
    if !root_or_skip("a_workload_commands_programs_end_on_ctrl_c_and_with_its_guard") {
        return;
    }
    let h = Hostile::new("command");
    let command = || {
        let mut command = fsbench();
        command
            .args([
                "task",
                "exec",
                "--sync",
                "false",
                "--no-store",
                "--fs",
                "ext4",
            ])
            .arg("--command")
            .arg(hostile_command())
            .arg("--work-dir")
            .arg(h.s.work())
            .arg("--data-dir")
            .arg(h.s.path().join("data"));
        command
    };
    let run = h.marked_spawn(command());
    h.wait_started();
    let pid = run.id();
    assert_cgroup_named_for(pid);
    // SAFETY: signalling the child this test spawned.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    h.assert_all_gone(pid, Duration::ZERO);

    let _ = std::fs::remove_file(h.out.join("started"));
    let mut run = h.marked_spawn(command());
    h.wait_started();
    let pid = run.id();
    run.kill().unwrap();
    let out = run.wait_with_output().unwrap();
    h.assert_all_gone(pid, Duration::from_secs(15));
    let said = stderr(&out);
    assert!(
        said.contains("processes of the sample and removed cgroup") && !said.contains("lazily"),
        "{said}"
    );
}

/// A workload command in a directory (`--dir`) keeps its sample's ledger (its cgroup, its own
/// directory) and its guard in the work directory asked for, by `--work-dir` or
/// FSBENCH_WORK_DIR, as `fsbench run --dir` does, so `fsbench cleanup` of that directory finds
/// them. (Before: they went to the default /var/lib/fsbench/work, whatever was asked.)
#[test]
fn a_workload_command_in_a_directory_keeps_its_ledger_and_guard_in_its_work_directory() {
    if !root_or_skip(
        "a_workload_command_in_a_directory_keeps_its_ledger_and_guard_in_its_work_directory",
    ) {
        return;
    }
    let h = Hostile::new("dir-work");
    let dir = h.s.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let work = h.s.work();
    for by_env in [false, true] {
        let _ = std::fs::remove_file(h.out.join("started"));
        let mut command = fsbench();
        command
            .args(["task", "exec", "--sync", "false", "--no-store", "--dir"])
            .arg(&dir)
            .arg("--command")
            .arg("touch \"$FSBENCH_TEST_OUT/started\"; sleep 60")
            .arg("--data-dir")
            .arg(h.s.path().join("data"));
        if by_env {
            command.env("FSBENCH_WORK_DIR", &work);
        } else {
            command
                .env_remove("FSBENCH_WORK_DIR")
                .arg("--work-dir")
                .arg(&work);
        }
        let run = h.marked_spawn(command);
        h.wait_started();
        let pid = run.id();
        let records: Vec<String> = entries(&work.join("state"))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            records
                .iter()
                .any(|n| n.starts_with(&format!("sample-{pid}-"))),
            "by env {by_env}: no ledger of the sample in {}: {records:?}",
            work.display()
        );
        let guards: Vec<String> = children_of(pid)
            .into_iter()
            .map(|(_, cmdline)| cmdline)
            .filter(|cmdline| cmdline.contains(" guard "))
            .collect();
        let state = format!("--state-dir {}", work.join("state").display());
        assert!(
            guards.len() == 1 && guards[0].contains(&state),
            "by env {by_env}: {guards:?}"
        );
        // SAFETY: signalling the child this test spawned.
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        h.assert_all_gone(pid, Duration::ZERO);
    }
}

/// The entries of `dir` but the user's file.
fn left_in(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|p| !p.ends_with("mine"))
        .collect()
}

/// A `--dir` campaign whose command writes into its directory and then hangs: its scratch
/// directory goes after a timeout (the campaign removes it), after kill -9 of the run (its
/// guard) and after kill -9 of the run and its guard (`fsbench cleanup`, which also ends the
/// processes); the user's own file beside it stays.
#[test]
fn a_dir_campaigns_scratch_directory_goes_after_a_timeout_a_kill_and_cleanup() {
    if !root_or_skip("a_dir_campaigns_scratch_directory_goes_after_a_timeout_a_kill_and_cleanup") {
        return;
    }
    let h = Hostile::new("dir");
    let dir = h.s.path().join("user");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("mine"), b"the user's").unwrap();
    let dir_arg = dir.to_str().unwrap().to_string();
    let command = "head -c 4000000 /dev/zero > \"$FSBENCH_DIR/blob\"; trap '' TERM; \
                   touch \"$FSBENCH_TEST_OUT/started\"; sleep 60";
    let plan = |extra: &str| {
        h.s.plan(&format!(
            r#"
name = "hostile-dir"
repetitions = 1
{extra}
[[workloads]]
kind = "task"
tasks = "exec"
sync = false
data_dir = "{}"
command = '''{command}'''
"#,
            h.s.path().join("data").display(),
        ))
    };
    let restart = || {
        let _ = std::fs::remove_file(h.out.join("started"));
    };

    // A timeout: the campaign ends the processes and removes the directory.
    let timed = plan("timeout = \"2s\"");
    let run = h.spawn(&["--plan", timed.to_str().unwrap(), "--dir", &dir_arg]);
    let pid = run.id();
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    h.assert_all_gone(pid, Duration::ZERO);
    assert_eq!(left_in(&dir), Vec::<PathBuf>::new());

    // kill -9 of the run: its guard.
    restart();
    let untimed = plan("");
    let mut run = h.spawn(&["--plan", untimed.to_str().unwrap(), "--dir", &dir_arg]);
    h.wait_started();
    let pid = run.id();
    run.kill().unwrap();
    run.wait().unwrap();
    h.assert_all_gone(pid, Duration::from_secs(15));
    assert_eq!(left_in(&dir), Vec::<PathBuf>::new());

    // kill -9 of the run and of its guard: `fsbench cleanup`.
    restart();
    let mut run = h.spawn(&["--plan", untimed.to_str().unwrap(), "--dir", &dir_arg]);
    h.wait_started();
    let pid = run.id();
    for (guard, _) in children_of(run.id())
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains(" guard "))
    {
        // SAFETY: signalling the guard of the run this test spawned.
        unsafe { libc::kill(guard as i32, libc::SIGKILL) };
    }
    run.kill().unwrap();
    run.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(!left_in(&dir).is_empty(), "nothing for cleanup to do");
    let cleanup = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(h.s.work())
        .output()
        .unwrap();
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    h.assert_all_gone(pid, Duration::ZERO);
    assert_eq!(left_in(&dir), Vec::<PathBuf>::new(), "{}", stdout(&cleanup));
    assert_eq!(std::fs::read(dir.join("mine")).unwrap(), b"the user's");
}
