//! Hostile use, for real (issue 8): a run resumed while it is still going (a real second
//! process), a killed owner, output on /dev/full, a full work directory and a full disk (real
//! tmpfs), an image size the host filesystem refuses, a read-only results database (a real
//! read-only bind mount, and a file another user may only read), exit codes that show failure,
//! and the messages a user gets; loadfiles that would make dbench act outside its directory, and
//! loadfiles that are not small regular files (issue 35). (The cache state on FUSE is checked in
//! targets.rs's zfs round trip, so the suite starts zfs-fuse once.) Root-only tests run on CI
//! (which is root); everything a test makes is named fsbench-test* and removed.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The (stored, planned) pair of run `id` in `fsbench runs` output, with its status.
fn listing(runs: &str, id: i64) -> Option<(String, u64, u64)> {
    runs.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&id.to_string().as_str()) {
            return None;
        }
        let (stored, planned) = words.get(5)?.split_once('/')?;
        Some((
            words[2].to_string(),
            stored.parse().ok()?,
            planned.parse().ok()?,
        ))
    })
}

/// Waits (at most a minute) until run 1 has at least `n` stored samples.
fn wait_for_samples(s: &Scratch, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if s.db().exists() {
            let out = fsbench()
                .arg("runs")
                .arg("--db")
                .arg(s.db())
                .output()
                .unwrap();
            if listing(&stdout(&out), 1).is_some_and(|(_, stored, _)| stored >= n) {
                return;
            }
        }
        assert!(Instant::now() < deadline, "never {n} samples stored");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Six samples of a sleeping workload on tmpfs targets: cheap, and slow enough to catch.
const SLOW: &str = r#"
name = "slow"
repetitions = 3
[device]
image = "16m"
[[filesystems]]
name = "tmpfs"
[[workloads]]
kind = "sleep"
name = "a"
duration = "400ms"
[[workloads]]
kind = "sleep"
name = "b"
duration = "400ms"
"#;

#[test]
fn a_run_resumed_while_it_is_still_going_is_refused_and_the_first_finishes() {
    if !root_or_skip("a_run_resumed_while_it_is_still_going_is_refused_and_the_first_finishes") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(SLOW);
    let first = s
        .command(&["--plan", plan.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_samples(&s, 3);
    let second = s.command(&["--resume", "1"]).output().unwrap();
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("run 1 is still running in process") && err.contains(&first.id().to_string()),
        "{err}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        listing(&s.runs(), 1),
        Some(("complete".to_string(), 6, 6)),
        "{}",
        s.runs()
    );
    s.assert_nothing_mounted();
}

#[test]
fn a_killed_owner_shows_as_interrupted_with_planned_counts_and_resume_finishes() {
    if !root_or_skip("a_killed_owner_shows_as_interrupted_with_planned_counts_and_resume_finishes")
    {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(SLOW);
    let mut first = s
        .command(&["--plan", plan.to_str().unwrap(), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_samples(&s, 1);
    first.kill().unwrap();
    first.wait().unwrap();
    let (status, stored, planned) = listing(&s.runs(), 1).unwrap();
    assert_eq!(status, "interrupted", "{}", s.runs());
    assert!((1..6).contains(&stored), "{}", s.runs());
    assert_eq!(planned, 6);
    // The killed run's target (a tmpfs mount): its guard undoes it, and leaves `fsbench
    // cleanup` nothing to do.
    s.wait_until_nothing_mounted(Duration::from_secs(20));
    let cleanup = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(s.work())
        .output()
        .unwrap();
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    assert!(
        stdout(&cleanup).starts_with("nothing to clean up"),
        "{}",
        stdout(&cleanup)
    );
    let resumed = s.command(&["--resume", "1", "--quiet"]).output().unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(listing(&s.runs(), 1), Some(("complete".to_string(), 6, 6)));
    s.assert_nothing_mounted();
}

/// kill -9 of a workload on a filesystem fsbench made: its guard (a process in a session of
/// its own) unmounts it, detaches the loop device and removes the image, and says so.
#[test]
fn a_killed_workload_leaves_no_mount_loop_device_or_image() {
    if !root_or_skip("a_killed_workload_leaves_no_mount_loop_device_or_image") {
        return;
    }
    let s = Scratch::new();
    let mut child = fsbench()
        .args([
            "sleep",
            "--duration",
            "60s",
            "--fs",
            "ext4",
            "--no-store",
            "--quiet",
        ])
        .arg("--work-dir")
        .arg(s.work())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let me = s.work().to_string_lossy().to_string();
    let start = Instant::now();
    while !std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .contains(&me)
    {
        assert!(start.elapsed() < Duration::from_secs(30), "never mounted");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    s.wait_until_nothing_mounted(Duration::from_secs(20));
    s.assert_clean();
    // The guard's words reach the killed process's standard error (its terminal, a job log).
    let said = stderr(&out);
    assert!(
        said.contains("was killed; unmounted") && said.contains("was killed; removed"),
        "{said}"
    );
}

#[test]
fn no_subcommand_panics_when_its_output_cannot_be_written() {
    let s = Scratch::new();
    let dir = s.path().to_str().unwrap().to_string();
    let db = s.path().join("none.db");
    let plan = s.plan(SLOW);
    let cases: Vec<Vec<String>> = vec![
        vec!["matrix".into(), "--dir".into(), "/nonexistent".into()],
        vec![
            "matrix".into(),
            "--dir".into(),
            dir.clone(),
            "-i".into(),
            "0".into(),
            "--file-sizes".into(),
            "4k".into(),
            "--record-sizes".into(),
            "4k".into(),
            "--min-time".into(),
            "1ms".into(),
        ],
        vec!["targets".into()],
        vec!["targets".into(), "--json".into(), "-".into()],
        vec!["runs".into(), "--db".into(), db.display().to_string()],
        vec![
            "export".into(),
            "1".into(),
            "--json".into(),
            "-".into(),
            "--db".into(),
            db.display().to_string(),
        ],
        vec![
            "run".into(),
            "--dry-run".into(),
            "--plan".into(),
            plan.display().to_string(),
        ],
        vec![
            "cleanup".into(),
            "--work-dir".into(),
            s.work().display().to_string(),
        ],
        vec!["case-worker".into(), "--dir".into(), dir.clone()],
        vec!["--help".into()],
        vec!["--version".into()],
        vec!["no-such-command".into()],
    ];
    for args in &cases {
        for (out_full, err_full) in [(true, true), (false, true), (true, false)] {
            let full = || Stdio::from(std::fs::File::create("/dev/full").unwrap());
            let mut command = fsbench();
            command.args(args).stdin(Stdio::null());
            command.stdout(if out_full { full() } else { Stdio::piped() });
            command.stderr(if err_full { full() } else { Stdio::piped() });
            let output = command.output().unwrap();
            let code = output.status.code();
            assert!(
                matches!(code, Some(0..=3)),
                "{args:?} (stdout full: {out_full}, stderr full: {err_full}) ended with {code:?}: {}",
                stderr(&output)
            );
            assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
            // What prints on standard output fails when it cannot, and says so where it can.
            if out_full
                && !err_full
                && args[0] != "case-worker"
                && !args.contains(&"/nonexistent".into())
            {
                assert_ne!(code, Some(0), "{args:?}: a lost output is not a success");
                assert!(
                    stderr(&output).contains("error: ")
                        || args[0].starts_with('-')
                        || args[0] == "no-such-command",
                    "{args:?}: {}",
                    stderr(&output)
                );
            }
        }
    }
    // The issue's case: the bad-input code survives an unwritable standard error.
    let status = fsbench()
        .args(["matrix", "--dir", "/nonexistent"])
        .stderr(Stdio::from(std::fs::File::create("/dev/full").unwrap()))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

/// A reader that stops reading (`fsbench targets | head -0`) is not an error: fsbench stops
/// quietly with success, as other Unix tools do.
#[test]
fn a_closed_pipe_on_standard_output_ends_quietly() {
    let output = fsbench()
        .arg("targets")
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "", "a closed pipe is no error to report");
}

#[test]
fn a_full_work_directory_costs_the_running_sample_nothing() {
    if !root_or_skip("a_full_work_directory_costs_the_running_sample_nothing") {
        return;
    }
    let s = Scratch::new();
    let mount = ScratchMount::tmpfs("size=1m");
    let work = mount.path().join("work");
    let plan = s.plan(
        r#"
name = "full"
repetitions = 1
[device]
image = "16m"
[[filesystems]]
name = "tmpfs"
[[workloads]]
kind = "sleep"
duration = "2s"
"#,
    );
    let child = fsbench()
        .args(["run", "--quiet", "--plan", plan.to_str().unwrap(), "--db"])
        .arg(s.db())
        .arg("--work-dir")
        .arg(&work)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the workload runs, fill the work directory: the job and its results travel through
    // pipes, so nothing the sample needs is in it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let work_text = work.display().to_string();
    while !std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read_to_string(e.path().join("cmdline"))
            .is_ok_and(|c| c.contains("case-worker") && c.contains(&work_text))
    }) {
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let fill = mount.path().join("fill");
    let _ = std::fs::write(&fill, vec![0u8; 4 << 20]);
    let output = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&fill);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let doc = s.export(1);
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(
        sample["results"][0]["measurements"][0]["metric"], "slept",
        "{sample}"
    );
    let cleanup = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    drop(mount);
    s.assert_nothing_mounted();
}

#[test]
fn an_image_size_the_host_refuses_leaves_nothing_and_says_why_once() {
    if !root_or_skip("an_image_size_the_host_refuses_leaves_nothing_and_says_why_once") {
        return;
    }
    // /var/tmp is ext4 on the usual hosts and CI, whose files end at 16 TiB.
    let s = Scratch::new();
    let output = fsbench()
        .args([
            "matrix",
            "--fs",
            "ext4",
            "--device",
            "image:100t",
            "--quiet",
            "--work-dir",
        ])
        .arg(s.work())
        .args(["-i", "0", "--file-sizes", "64k", "--record-sizes", "64k"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("File too large").count(), 1, "{err}");
    let images = |dir: &Path| -> Vec<PathBuf> {
        entries(dir)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "img"))
            .collect()
    };
    assert!(images(&s.work()).is_empty(), "{:?}", entries(&s.work()));

    // The same from a plan: a failed sample, no image, and exit 1.
    let plan = s.plan(
        r#"
name = "huge"
repetitions = 1
[device]
image = "17t"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "sleep"
duration = "10ms"
"#,
    );
    let output = s
        .command(&["--quiet", "--plan", plan.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let reason = first_sample(&s.export(1))["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(reason.matches("File too large").count(), 1, "{reason}");
    assert!(images(&s.work()).is_empty(), "{:?}", entries(&s.work()));
    s.assert_nothing_mounted();
}

#[test]
fn a_database_on_a_full_disk_leaves_no_file_and_an_empty_file_is_not_made_a_database() {
    let s = Scratch::new();
    let empty = s.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    for args in [vec!["runs"], vec!["export", "1", "--json", "-"]] {
        let output = fsbench()
            .args(&args)
            .arg("--db")
            .arg(&empty)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains("is empty"), "{}", stderr(&output));
        assert_eq!(
            std::fs::metadata(&empty).unwrap().len(),
            0,
            "{args:?} wrote to it"
        );
    }
    if !root_or_skip("a_database_on_a_full_disk_leaves_no_file") {
        return;
    }
    let mount = ScratchMount::tmpfs("size=64k");
    let _ = std::fs::write(mount.path().join("fill"), vec![0u8; 1 << 20]);
    let plan = s.plan(SLOW);
    let db = mount.path().join("results.db");
    let output = fsbench()
        .args(["run", "--quiet", "--plan", plan.to_str().unwrap(), "--db"])
        .arg(&db)
        .arg("--work-dir")
        .arg(s.work())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("results database"),
        "{}",
        stderr(&output)
    );
    let left: Vec<PathBuf> = entries(mount.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "fill"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    drop(mount);
    s.assert_nothing_mounted();
}

/// A stored run: one tmpfs sample.
fn one_run(s: &Scratch) {
    let plan = s.plan(
        r#"
name = "one"
repetitions = 1
[device]
image = "16m"
[[filesystems]]
name = "tmpfs"
[[workloads]]
kind = "sleep"
duration = "10ms"
"#,
    );
    let output = s
        .command(&["--quiet", "--plan", plan.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

/// A read-only bind mount of `source`, on a directory of its own; unmounted on drop.
struct ReadOnlyBind {
    dir: tempfile::TempDir,
}

impl ReadOnlyBind {
    fn of(source: &Path) -> ReadOnlyBind {
        let dir = tempfile::Builder::new()
            .prefix("fsbench-test-ro-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let ok = Command::new("mount")
            .arg("--bind")
            .arg(source)
            .arg(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount --bind");
        let bind = ReadOnlyBind { dir };
        let ok = Command::new("mount")
            .args(["-o", "remount,bind,ro"])
            .arg(bind.dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount read-only");
        bind
    }
}

impl Drop for ReadOnlyBind {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn reads_without_writing(runs: Output, export: Output) {
    assert!(runs.status.success(), "{}", stderr(&runs));
    assert_eq!(
        listing(&stdout(&runs), 1).map(|l| l.0),
        Some("complete".to_string()),
        "{}",
        stdout(&runs)
    );
    assert!(export.status.success(), "{}", stderr(&export));
    let doc: Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(doc["runs"][0]["status"], "complete");
}

#[test]
fn reading_commands_read_a_database_on_a_read_only_mount_and_one_only_readable() {
    if !root_or_skip("reading_commands_read_a_database_on_a_read_only_mount_and_one_only_readable")
    {
        return;
    }
    let s = Scratch::new();
    one_run(&s);
    let before = std::fs::read(s.db()).unwrap();
    {
        let bind = ReadOnlyBind::of(s.path());
        let db = bind.dir.path().join("results.db");
        let runs = fsbench().arg("runs").arg("--db").arg(&db).output().unwrap();
        let export = fsbench()
            .args(["export", "1", "--json", "-", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        reads_without_writing(runs, export);
        // A campaign needs to write: it says so before anything is made.
        let plan = s.plan(SLOW);
        let run = fsbench()
            .args(["run", "--quiet", "--plan", plan.to_str().unwrap(), "--db"])
            .arg(&db)
            .arg("--work-dir")
            .arg(s.work())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
        assert!(stderr(&run).contains("is read-only"), "{}", stderr(&run));
    }
    assert_eq!(
        std::fs::read(s.db()).unwrap(),
        before,
        "the database changed"
    );

    // chmod 444, read by another user (nobody) from a directory it may not write to.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(s.db(), std::fs::Permissions::from_mode(0o444)).unwrap();
    let as_nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_fsbench"))
            .args(args)
            .arg("--db")
            .arg(s.db())
            .output()
            .unwrap()
    };
    reads_without_writing(
        as_nobody(&["runs"]),
        as_nobody(&["export", "1", "--json", "-"]),
    );
    assert_eq!(
        std::fs::read(s.db()).unwrap(),
        before,
        "the database changed"
    );
    s.assert_nothing_mounted();
}

#[test]
fn a_campaign_where_nothing_could_run_exits_3_with_the_kernels_reason_once() {
    if !root_or_skip("a_campaign_where_nothing_could_run_exits_3_with_the_kernels_reason_once") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "rejected"
repetitions = 2
[device]
image = "64m"
[[filesystems]]
name = "ext4"
mount_options = { bogus = "fsbench_no_such_option" }
[[workloads]]
kind = "sleep"
duration = "10ms"
"#,
    );
    let output = s
        .command(&["--plan", plan.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{err}");
    assert!(!err.contains("unsupported: unsupported"), "{err}");
    let reason = first_sample(&s.export(1))["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!reason.starts_with("unsupported"), "{reason}");
    assert!(
        reason.contains("the kernel said") && reason.contains("fsbench_no_such_option"),
        "{reason}"
    );
    s.assert_nothing_mounted();
}

#[test]
fn messages_name_the_right_place() {
    // --destroy-data-on without --device is a mistake, not ignored.
    if is_root() {
        let s = Scratch::new();
        let output = fsbench()
            .args([
                "matrix",
                "--fs",
                "ext4",
                "--destroy-data-on",
                "/dev/sdb",
                "--work-dir",
            ])
            .arg(s.work())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("without --device"),
            "{}",
            stderr(&output)
        );
        assert!(!s.work().exists());
    }
    // targets --json - is standard output, as for export and matrix.
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args(["targets", "--json", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["schema"], "fsbench.targets");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    // A dry run refuses an image xfs cannot use, and names the plan's setting.
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        "name = \"x\"\n[device]\nimage = \"256m\"\n[[filesystems]]\nname = \"xfs\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n",
    )
    .unwrap();
    let output = fsbench()
        .args(["run", "--dry-run", "--plan"])
        .arg(&plan)
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("too small for xfs") && err.contains("[device]"),
        "{err}"
    );
    assert!(!err.contains("--device image:"), "{err}");
}

#[test]
fn a_mkfs_on_an_image_whose_disk_is_full_blames_the_disk() {
    if !root_or_skip("a_mkfs_on_an_image_whose_disk_is_full_blames_the_disk") {
        return;
    }
    let mount = ScratchMount::tmpfs("size=40m");
    let work = mount.path().join("work");
    let output = fsbench()
        .args([
            "matrix",
            "--fs",
            "ext4",
            "--device",
            "image:1g",
            "--quiet",
            "--work-dir",
        ])
        .arg(&work)
        .args(["-i", "0", "--file-sizes", "64k", "--record-sizes", "64k"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("the disk holding the image"), "{err}");
    assert!(!err.contains("--mkfs-options"), "{err}");
    assert!(
        !entries(&work)
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "img")),
        "{:?}",
        entries(&work)
    );
}

/// An unknown `FSBENCH_CLOCK` is one line and a usage error for a command that measures; the
/// guard measures nothing and, started under the same environment, still does its job.
#[test]
fn a_bad_clock_stops_a_workload_but_not_a_guard() {
    let dir = tempfile::tempdir().unwrap();
    let out = fsbench()
        .args(["mix", "--dir"])
        .arg(dir.path())
        .env("FSBENCH_CLOCK", "sundial")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("FSBENCH_CLOCK=sundial: unknown clock"));

    let mut guard = fsbench()
        .args([
            "guard",
            "--pid",
            &std::process::id().to_string(),
            "--state-dir",
        ])
        .arg(dir.path())
        .env("FSBENCH_CLOCK", "sundial")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(guard.stdin.as_mut().unwrap(), b"dismissed\n").unwrap();
    drop(guard.stdin.take());
    let out = guard.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The uid every Linux has for "nobody": the other user of these tests.
const NOBODY: u32 = 65534;

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), None).unwrap();
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `fsbench sleep` (10 ms) on an ext4 target in `work`: the cheapest real target.
fn sleep_on_ext4(work: &Path) -> Command {
    let mut command = fsbench();
    command
        .args([
            "sleep",
            "--duration",
            "10ms",
            "--fs",
            "ext4",
            "--device",
            "image:64m",
        ])
        .args(["--no-store", "--quiet", "--work-dir"])
        .arg(work);
    command
}

/// As root, a work directory another user could change — theirs, writable by all, or in a
/// directory of theirs — is refused by a workload command with `--fs` and by `fsbench run`,
/// with how to fix it, before anything is made or stored. (Before: used as it was.)
#[test]
fn a_work_directory_another_user_could_change_is_refused() {
    if !root_or_skip("a_work_directory_another_user_could_change_is_refused") {
        return;
    }
    let s = Scratch::new();
    let work = s.work();
    std::fs::create_dir(&work).unwrap();
    let plan = s.plan(SLOW);
    // The database in a directory of root's: in one of theirs, it would be refused first.
    let db = Scratch::new();
    let cases: [(&str, &dyn Fn(), &str); 3] = [
        ("theirs", &|| chown(&work, NOBODY), "belongs to nobody"),
        (
            "writable by all",
            &|| {
                chown(&work, 0);
                chmod(&work, 0o1777);
            },
            "mode 1777",
        ),
        (
            "in a directory of theirs",
            &|| {
                chmod(&work, 0o755);
                chown(s.path(), NOBODY);
            },
            "belongs to nobody",
        ),
    ];
    for (what, make, says) in cases {
        make();
        for (command, output) in [
            ("sleep --fs", sleep_on_ext4(&work).output().unwrap()),
            (
                "run",
                fsbench()
                    .arg("run")
                    .arg("--db")
                    .arg(db.db())
                    .arg("--work-dir")
                    .arg(&work)
                    .args(["--quiet", "--plan", plan.to_str().unwrap()])
                    .output()
                    .unwrap(),
            ),
        ] {
            let err = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{what}, {command}: {err}");
            assert!(
                err.contains(&format!("work directory {}", work.display()))
                    && err.contains(says)
                    && err.contains("another user could swap"),
                "{what}, {command}: {err}"
            );
            assert!(entries(&work).is_empty(), "{what}, {command}: made in it");
        }
        assert!(!db.runs().contains("slow"), "{what}: a run was stored");
    }
    chown(s.path(), 0);
    s.assert_nothing_mounted();
}

/// The task workload's data directory (its generated tree and tarball, which it untars and
/// builds as root) is refused when another user could change it. (Before: used as it was.)
#[test]
fn a_data_directory_another_user_could_change_is_refused() {
    if !root_or_skip("a_data_directory_another_user_could_change_is_refused") {
        return;
    }
    let s = Scratch::new();
    let data = s.path().join("data");
    std::fs::create_dir(&data).unwrap();
    chown(&data, NOBODY);
    let output = fsbench()
        .args([
            "task",
            "copy",
            "--scale",
            "0.01",
            "--no-store",
            "--quiet",
            "--dir",
        ])
        .arg(s.path())
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--data-dir") && err.contains("belongs to nobody"),
        "{err}"
    );
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
}

/// As root, a directory to run in (`--dir` of a workload command and of `fsbench run`, a
/// plan's `dir`) that another user could change — theirs, inside theirs, or writable by others
/// without the sticky bit — is refused before anything is made in it or stored, naming the
/// component and the fix; a sticky directory of root's (as /tmp) is used. (Before: used as
/// it was, root making and removing files where that user could swap them for links.)
#[test]
fn a_directory_to_run_in_that_another_user_could_change_is_refused() {
    if !root_or_skip("a_directory_to_run_in_that_another_user_could_change_is_refused") {
        return;
    }
    let s = Scratch::new();
    let theirs = s.path().join("theirs");
    let inner = theirs.join("inner");
    let open = s.path().join("open");
    let sticky = s.path().join("sticky");
    for dir in [&theirs, &inner, &open, &sticky] {
        std::fs::create_dir(dir).unwrap();
    }
    chown(&theirs, NOBODY);
    chmod(&open, 0o777);
    chmod(&sticky, 0o1777);
    let sleep_in = |dir: &Path| {
        fsbench()
            .args([
                "sleep",
                "--duration",
                "10ms",
                "--no-store",
                "--quiet",
                "--dir",
            ])
            .arg(dir)
            .output()
            .unwrap()
    };
    let plan_in = |dir: Option<&Path>| {
        let mut text = String::from("name = \"in-dir\"\nrepetitions = 1\n");
        if let Some(dir) = dir {
            text += &format!("dir = {:?}\n", dir.to_str().unwrap());
        }
        text += "[[workloads]]\nkind = \"sleep\"\nname = \"a\"\nduration = \"10ms\"\n";
        s.plan(&text)
    };
    let cases: [(&Path, &Path, &str); 4] = [
        (&theirs, &theirs, "belongs to nobody"),
        (&inner, &theirs, "belongs to nobody"),
        (&open, &open, "mode 0777"),
        (&open, &open, "mode 0775"),
    ];
    for (n, (dir, component, says)) in cases.into_iter().enumerate() {
        if n == 3 {
            chmod(&open, 0o775);
        }
        let runs = [
            ("sleep --dir", "--dir", sleep_in(dir)),
            (
                "run --dir",
                "--dir",
                s.command(&["--quiet", "--plan", plan_in(None).to_str().unwrap()])
                    .arg("--dir")
                    .arg(dir)
                    .output()
                    .unwrap(),
            ),
            (
                "run, the plan's dir",
                "the plan's dir",
                s.run(&["--quiet", "--plan", plan_in(Some(dir)).to_str().unwrap()]),
            ),
        ];
        for (how, named, output) in runs {
            let err = stderr(&output);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{}, {how}: {err}",
                dir.display()
            );
            let fix = if says.starts_with("mode") {
                format!("`chmod go-w {}`", component.display())
            } else {
                "run fsbench as nobody".to_string()
            };
            assert!(
                err.contains(&format!(
                    "{named} {}: {}",
                    dir.display(),
                    component.display()
                )) && err.contains(says)
                    && err.contains(&fix),
                "{}, {how}: {err}",
                dir.display()
            );
            assert!(
                entries(dir).is_empty() || dir == theirs,
                "{how}: made in it"
            );
        }
        assert_eq!(entries(&inner), Vec::<PathBuf>::new());
    }
    assert!(!s.runs().contains("in-dir"), "a run was stored");
    // A sticky directory of root's is fine, itself or on the way.
    chown(&theirs, 0);
    for dir in [&sticky, &inner] {
        let output = sleep_in(dir);
        assert!(
            output.status.success(),
            "{}: {}",
            dir.display(),
            stderr(&output)
        );
    }
    let output = s.run(&[
        "--quiet",
        "--plan",
        plan_in(Some(&sticky)).to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(entries(&sticky).is_empty(), "{:?}", entries(&sticky));
}

/// As root, an output the user names (`--json FILE`) that is another user's link to a pipe or
/// device is refused, saying whose link it is and what to do, and nothing is written into
/// what it points to; root's own link to the same pipe is written through. (Before: any link
/// to a FIFO or character device was followed, e.g. one planted in a shared directory.)
#[test]
fn as_root_another_users_link_to_a_pipe_is_not_written_through() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    if !root_or_skip("as_root_another_users_link_to_a_pipe_is_not_written_through") {
        return;
    }
    let s = Scratch::new();
    let fifo = s.path().join("their.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
    chown(&fifo, NOBODY);
    let link = s.path().join("targets.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    chown(&link, NOBODY);
    // Their reader, waiting: a writer's open would not block.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let mut read_all = || {
        let mut got = Vec::new();
        let _ = reader.read_to_end(&mut got);
        String::from_utf8_lossy(&got).into_owned()
    };
    let targets = || {
        fsbench()
            .args(["targets", "--json"])
            .arg(&link)
            .output()
            .unwrap()
    };
    let output = targets();
    let err = stderr(&output);
    assert!(!output.status.success(), "{err}");
    assert!(
        err.contains(&format!("{} is a link to a pipe or device", link.display()))
            && err.contains(&format!("{} belongs to nobody", link.display()))
            && err.contains(&format!("`chown -h root: {}`", link.display())),
        "{err}"
    );
    assert_eq!(read_all(), "", "written into their pipe");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // Root's link to their pipe: the pipe is still theirs.
    chown(&link, 0);
    let output = targets();
    assert!(!output.status.success(), "{}", stderr(&output));
    assert_eq!(read_all(), "", "written into their pipe");
    // Root's link to root's pipe.
    chown(&fifo, 0);
    let output = targets();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(read_all().contains("fsbench.targets"));
}

/// A FIFO at `path` (mode 0666), owned by `uid`, with a reader waiting (so a writer's open
/// does not block); returns the reader.
fn fifo_with_reader(path: &Path, uid: u32) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
    chown(path, uid);
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap()
}

fn read_all(reader: &mut std::fs::File) -> String {
    use std::io::Read;
    let mut got = Vec::new();
    let _ = reader.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

/// As root, an output the user names that is a pipe (or device) another user owns, or that
/// sits in a directory another user could change (theirs, or writable by others without the
/// sticky bit), is refused with exit 2, naming it and the fix, and nothing is written into it:
/// they could read root's output or hold fsbench up. Root's own pipe in root's directory is
/// written to. (Before: any FIFO at the named path was written to.)
#[test]
fn as_root_another_users_pipe_or_one_they_could_swap_is_not_written_to() {
    if !root_or_skip("as_root_another_users_pipe_or_one_they_could_swap_is_not_written_to") {
        return;
    }
    let s = Scratch::new();
    let targets = |path: &Path| {
        fsbench()
            .args(["targets", "--json"])
            .arg(path)
            .output()
            .unwrap()
    };
    let refused = |path: &Path, says: &[String]| {
        let output = targets(path);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{}: {err}", path.display());
        for part in says {
            assert!(err.contains(part.as_str()), "{part}: {err}");
        }
    };
    // Theirs.
    let theirs = s.path().join("their.fifo");
    let mut reader = fifo_with_reader(&theirs, NOBODY);
    refused(
        &theirs,
        &[
            format!(
                "{} is a pipe of nobody (uid 65534), not root's",
                theirs.display()
            ),
            "run fsbench as nobody".into(),
        ],
    );
    assert_eq!(read_all(&mut reader), "", "written into their pipe");
    // Root's, in a directory anyone may add to (no sticky bit), or in theirs.
    let open_dir = s.path().join("open");
    std::fs::create_dir(&open_dir).unwrap();
    chmod(&open_dir, 0o777);
    let in_open = open_dir.join("out.fifo");
    let mut reader = fifo_with_reader(&in_open, 0);
    refused(
        &in_open,
        &[
            format!("{}: ", in_open.display()),
            format!("`chmod go-w {}`", open_dir.display()),
        ],
    );
    assert_eq!(
        read_all(&mut reader),
        "",
        "written into a pipe others could swap"
    );
    let their_dir = s.path().join("theirs");
    std::fs::create_dir(&their_dir).unwrap();
    chown(&their_dir, NOBODY);
    let in_theirs = their_dir.join("out.fifo");
    let mut reader = fifo_with_reader(&in_theirs, 0);
    refused(
        &in_theirs,
        &[
            format!("{} belongs to nobody", their_dir.display()),
            "run fsbench as nobody".into(),
        ],
    );
    assert_eq!(
        read_all(&mut reader),
        "",
        "written into a pipe others could swap"
    );
    // Root's, in root's directory (under the sticky /var/tmp).
    let own = s.path().join("own.fifo");
    let mut reader = fifo_with_reader(&own, 0);
    let output = targets(&own);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(read_all(&mut reader).contains("fsbench.targets"));
}

/// An output the user names through one of fsbench's own descriptors (`/dev/stdout`,
/// `/dev/fd/N`, `/proc/self/fd/N`, bash's `>(gzip)`) is written to that descriptor, whoever
/// owns what it leads to (`sudo fsbench ... | gzip`: the pipe is the user's) and whatever it is:
/// a file standard output was redirected to is written, and a link to the descriptor is never
/// replaced. (Before: a redirected standard output made the link at the path be replaced by
/// the file — `/dev/stdout` itself — or, at `/dev/fd/1`, an error.)
#[test]
fn an_output_through_fsbench_s_own_descriptor_is_written_to_it() {
    if !root_or_skip("an_output_through_fsbench_s_own_descriptor_is_written_to_it") {
        return;
    }
    use std::os::fd::{AsRawFd, FromRawFd};
    let s = Scratch::new();
    // Standard output a pipe of nobody's (the user's shell made it before sudo).
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors this test then owns.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned once each.
    let (mut read_end, write_end) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    // SAFETY: fchown on a descriptor this test owns.
    assert_eq!(
        unsafe { libc::fchown(write_end.as_raw_fd(), NOBODY, NOBODY) },
        0
    );
    let child = fsbench()
        .args(["targets", "--json", "/dev/stdout"])
        .stdout(write_end)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(read_all(&mut read_end).contains("fsbench.targets"));
    // Standard output a file: written into it, through /dev/fd/1 and through a link of root's.
    let link = s.path().join("out.json");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    for path in [Path::new("/dev/fd/1"), &link] {
        let file = s.path().join("stdout.txt");
        let output = fsbench()
            .args(["targets", "--json"])
            .arg(path)
            .stdout(std::fs::File::create(&file).unwrap())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            path.display(),
            stderr(&output)
        );
        let written = std::fs::read_to_string(&file).unwrap();
        assert!(
            written.contains("fsbench.targets"),
            "{}: {written}",
            path.display()
        );
    }
    assert!(
        std::fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the link was replaced"
    );
}

/// As root, a results database (`--db`) another user could redirect — in their directory, or
/// their symlink at its name — is refused by a command that writes one (`sleep`) and one that
/// reads it (`runs`), saying what to do; nothing is created where the link points. (Before:
/// SQLite followed the link and root created the database wherever it led.)
#[test]
fn as_root_a_database_another_user_could_redirect_is_refused() {
    if !root_or_skip("as_root_a_database_another_user_could_redirect_is_refused") {
        return;
    }
    let s = Scratch::new();
    let theirs = s.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown(&theirs, NOBODY);
    let victim = s.path().join("victim.db");
    let link = s.path().join("results.db");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    chown(&link, NOBODY);
    let sleep_into = |db: &Path| {
        fsbench()
            .args(["sleep", "--duration", "10ms", "--quiet", "--db"])
            .arg(db)
            .output()
            .unwrap()
    };
    let refused = |how: &str, output: Output, db: &Path, component: &Path, fix: &str| {
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{how}: {err}");
        assert!(
            err.contains(&format!(
                "the results database {}: {} belongs to nobody",
                db.display(),
                component.display()
            )) && err.contains(fix)
                && err.contains("pass another --db"),
            "{how}: {err}"
        );
    };
    let in_theirs = theirs.join("results.db");
    let output = sleep_into(&in_theirs);
    refused(
        "in theirs",
        output,
        &in_theirs,
        &theirs,
        "run fsbench as nobody",
    );
    refused(
        "their link",
        sleep_into(&link),
        &link,
        &link,
        "`chown -h root:",
    );
    assert!(entries(&theirs).is_empty(), "{:?}", entries(&theirs));
    assert!(!victim.exists(), "created where their link points");
    // Root's own link is followed; theirs to the same database is not, for reading either.
    chown(&link, 0);
    let output = sleep_into(&link);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(victim.exists());
    chown(&link, NOBODY);
    let output = fsbench()
        .args(["runs", "--db"])
        .arg(&link)
        .output()
        .unwrap();
    refused("runs", output, &link, &link, "`chown -h root:");
}

/// As root, a results database another user could write — theirs, writable by all, or in a
/// directory anyone may add files to (a sticky /tmp: SQLite reads a `-wal` made there as the
/// database) — is refused by `--resume` and by a run that would store in it (exit 2, saying
/// why and what to do), and nothing in its stored plan runs; reading commands still read it.
/// (Before: another user edited an interrupted run's stored plan to `command = "id > FILE"`,
/// and root's `fsbench run --resume` ran it.)
#[test]
fn as_root_a_database_another_user_could_write_is_not_resumed_and_nothing_in_it_runs() {
    if !root_or_skip(
        "as_root_a_database_another_user_could_write_is_not_resumed_and_nothing_in_it_runs",
    ) {
        return;
    }
    let s = Scratch::new();
    let dir = s.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let db = s.db();
    let output = nap_in(&s, &dir, &db);
    assert!(output.status.success(), "{}", stderr(&output));
    // What another user would write into the stored plan: a task that leaves a mark.
    let mark = s.path().join("ran-as");
    let forged = format!(
        "name = \"nap\"\nrepetitions = 1\n[[workloads]]\nkind = \"sleep\"\nduration = \"10ms\"\n\
         [[workloads]]\nkind = \"task\"\ntasks = \"exec\"\ncommand = {:?}\n",
        format!("id > {}", mark.display())
    );
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute("UPDATE runs SET plan_text = ?1 WHERE id = 1", [&forged])
            .unwrap();
    }
    let resume = || {
        fsbench()
            .args(["run", "--quiet", "--resume", "1", "--db"])
            .arg(&db)
            .output()
            .unwrap()
    };
    let refused = |how: &str, output: &Output, says: &str| {
        let err = stderr(output);
        assert_eq!(output.status.code(), Some(2), "{how}: {err}");
        assert!(
            err.contains(&format!("the results database {}", db.display()))
                && err.contains(says)
                && err.contains("pass another --db"),
            "{how}: {err}"
        );
        assert!(!mark.exists(), "{how}: the stored plan ran");
    };
    // Writable by all, as a team's database (and SQLite's files beside it take its mode).
    chmod(&db, 0o666);
    refused(
        "0666",
        &resume(),
        "can be written by its group or others (mode 0666)",
    );
    let runs = fsbench().args(["runs", "--db"]).arg(&db).output().unwrap();
    assert!(runs.status.success(), "runs: {}", stderr(&runs));
    assert!(stdout(&runs).contains("nap"), "{}", stdout(&runs));
    // Another user's.
    chmod(&db, 0o644);
    chown(&db, NOBODY);
    refused("theirs", &resume(), "belongs to nobody");
    let export = fsbench()
        .args(["export", "1", "--json", "-", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(export.status.success(), "export: {}", stderr(&export));
    // Root's, but with another user's write-ahead log beside it.
    chown(&db, 0);
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    std::fs::write(&wal, b"").unwrap();
    chown(&wal, NOBODY);
    refused("their -wal", &resume(), "belongs to nobody");
    std::fs::remove_file(&wal).unwrap();
    // Root's, in a directory anyone may add files to.
    chmod(s.path(), 0o1777);
    refused("sticky", &resume(), "lets other users add files beside it");
    let runs = fsbench().args(["runs", "--db"]).arg(&db).output().unwrap();
    assert!(runs.status.success(), "runs: {}", stderr(&runs));
    chmod(s.path(), 0o700);
    // SQLite gives the files it makes beside a database the database's mode: a `-shm` made
    // while it was 0666 is still writable by all (and said so).
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    if shm.exists() {
        chmod(&shm, 0o666);
        refused(
            "their -shm",
            &resume(),
            "-shm can be written by its group or others",
        );
        chmod(&shm, 0o644);
    }
    // Root's alone: the stored plan is root's own again, and runs.
    let output = resume();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        mark.exists(),
        "the resumed plan did not run: the test proves nothing"
    );
}

/// A plan is read only when it is a regular file of at most 1 MiB: /dev/zero, /dev/urandom, a
/// FIFO nobody writes and a 10 GB sparse file are each refused at once, with exit 2 and what to
/// give instead (before: read whole, until the OOM killer came, or blocked for ever).
#[test]
fn a_plan_that_is_not_a_small_regular_file_is_refused_at_once() {
    let s = Scratch::new();
    let fifo = s.path().join("plan.fifo");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let big = s.path().join("big.toml");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    for (plan, says) in [
        (
            Path::new("/dev/zero"),
            "is a character device, not a regular file",
        ),
        (
            Path::new("/dev/urandom"),
            "is a character device, not a regular file",
        ),
        (fifo.as_path(), "is a FIFO (named pipe), not a regular file"),
        (big.as_path(), "is 10 GiB, over the 1 MiB a plan may have"),
    ] {
        let started = Instant::now();
        let out = fsbench()
            .args(["run", "--dry-run", "--plan"])
            .arg(plan)
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "{plan:?}: slow");
        assert_eq!(out.status.code(), Some(2), "{plan:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{plan:?}: {}", stderr(&out));
    }
}

/// A process named zfs-fuse that fsbench did not start (a copy of `sleep` under that name).
struct FakeDaemon {
    child: std::process::Child,
}

impl FakeDaemon {
    fn start(dir: &Path) -> FakeDaemon {
        let program = dir.join("zfs-fuse");
        std::fs::copy("/bin/sleep", &program).unwrap();
        // A child another test thread forks while the copy is open for writing holds it open
        // until that child executes: the exec fails with ETXTBSY until then.
        let mut tries = 0;
        let child = loop {
            match Command::new(&program).arg("120").spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                spawned => break spawned.unwrap(),
            }
        };
        FakeDaemon { child }
    }
    fn alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).is_ok_and(|stat| {
            !stat
                .rsplit_once(')')
                .unwrap()
                .1
                .trim_start()
                .starts_with('Z')
        })
    }
}

impl Drop for FakeDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loop device and a busy mount of the test's own (standing for the host's), undone on drop.
struct HostMount {
    device: String,
    point: PathBuf,
    busy: std::process::Child,
}

impl HostMount {
    fn new(dir: &Path) -> HostMount {
        let image = dir.join("host.disk");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(out.status.success());
        let device = stdout(&out).trim().to_string();
        assert!(Command::new("mkfs.ext4")
            .args(["-q", "-F", &device])
            .status()
            .unwrap()
            .success());
        let point = dir.join("host-mount");
        std::fs::create_dir(&point).unwrap();
        assert!(Command::new("mount")
            .arg(&device)
            .arg(&point)
            .status()
            .unwrap()
            .success());
        // Busy: a process works inside it.
        let busy = Command::new("sleep")
            .arg("120")
            .current_dir(&point)
            .spawn()
            .unwrap();
        HostMount {
            device,
            point,
            busy,
        }
    }
    fn mounted(&self) -> bool {
        let point = format!(" {} ", self.point.display());
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .any(|l| l.contains(&point))
    }
    fn attached(&self) -> bool {
        Command::new("losetup")
            .arg(&self.device)
            .output()
            .unwrap()
            .status
            .success()
    }
}

impl Drop for HostMount {
    fn drop(&mut self) {
        let _ = self.busy.kill();
        let _ = self.busy.wait();
        let _ = Command::new("umount").arg(&self.point).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// `fsbench cleanup` obeys no ledger another user could have written, nor one naming what
/// fsbench does not make: a root-owned 0600 file outside the work directory, a loop device and
/// a busy mount fsbench never made, a process named zfs-fuse it never started all survive a
/// ledger forged in a work directory of `nobody`'s, a ledger of `nobody`'s in root's work
/// directory, and a root-owned one naming them. (Before: the file was deleted, the mount
/// lazily unmounted, the loop device detached and the process killed.)
#[test]
fn a_forged_ledger_is_not_obeyed() {
    if !root_or_skip("a_forged_ledger_is_not_obeyed") {
        return;
    }
    let s = Scratch::new();
    let victim = s.path().join("victim");
    std::fs::write(&victim, "root's").unwrap();
    chmod(&victim, 0o600);
    let host = HostMount::new(s.path());
    let daemon = FakeDaemon::start(s.path());
    let pidfile = s.path().join("zfs-fuse.pid");
    std::fs::write(&pidfile, format!("{}\n", daemon.child.id())).unwrap();
    let work = s.work();
    let state = work.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let ledger = state.join("ext4-999999999-0.json");
    let forged = serde_json::json!({
        "pid": 999_999_999u32,
        "resources": [
            {"kind": "image", "path": victim},
            {"kind": "loop", "device": host.device, "backing_file": s.path().join("host.disk")},
            {"kind": "mount", "mountpoint": host.point, "source": host.device},
            {"kind": "zfs-daemon", "pid": daemon.child.id(), "pidfile": pidfile},
        ]
    });
    std::fs::write(&ledger, forged.to_string()).unwrap();
    let survived = |when: &str| {
        assert_eq!(
            std::fs::read_to_string(&victim).ok().as_deref(),
            Some("root's"),
            "{when}"
        );
        assert!(host.mounted(), "{when}: the host's mount is gone");
        assert!(host.attached(), "{when}: the host's loop device is gone");
        assert!(daemon.alive(), "{when}: the process named zfs-fuse is gone");
        assert!(ledger.exists(), "{when}");
    };
    let cleanup = || {
        fsbench()
            .args(["cleanup", "--work-dir"])
            .arg(&work)
            .output()
            .unwrap()
    };

    // Written by nobody in nobody's work directory.
    for path in [&work, &state, &ledger] {
        chown(path, NOBODY);
    }
    let output = cleanup();
    survived("nobody's work directory");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("belongs to nobody")
            && stderr(&output).contains("no state file there is obeyed"),
        "{}",
        stderr(&output)
    );

    // Nobody's ledger in root's work directory.
    chown(&work, 0);
    chown(&state, 0);
    let output = cleanup();
    survived("nobody's ledger");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("belongs to nobody"),
        "{}",
        stderr(&output)
    );

    // Root's ledger naming what fsbench does not make.
    chown(&ledger, 0);
    let output = cleanup();
    survived("root's ledger");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("left alone").count(), 4, "{err}");
}

/// The names fsbench used to give a mount point (`mnt-<fs>-<pid>-<n>`) could be guessed: a
/// symlink planted there made it mount over the link's target and leave the mount and loop
/// device behind, and a directory planted there left a ledger `cleanup` could never finish.
/// Now each is left as it is and the run goes on in a mount point of its own.
#[test]
fn what_is_planted_at_a_mount_point_name_is_not_used() {
    if !root_or_skip("what_is_planted_at_a_mount_point_name_is_not_used") {
        return;
    }
    let s = Scratch::new();
    let work = s.work();
    std::fs::create_dir(&work).unwrap();
    let target = s.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), "").unwrap();
    let planted_dir = s.path().join("planted");
    std::fs::create_dir(&planted_dir).unwrap();
    std::fs::write(planted_dir.join("keep"), "").unwrap();
    for plant in [
        |at: &Path, target: &Path, _: &Path| std::os::unix::fs::symlink(target, at).unwrap(),
        |at: &Path, _: &Path, dir: &Path| std::fs::rename(dir, at).unwrap(),
    ] {
        // A shell that becomes fsbench once the name is planted (exec keeps its pid).
        let mut sleep = sleep_on_ext4(&work);
        let mut child = Command::new("sh")
            .args(["-c", "read go && exec \"$0\" \"$@\""])
            .arg(sleep.get_program())
            .args(sleep.get_args())
            .envs(sleep.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = &mut sleep;
        let at = work.join(format!("mnt-ext4-{}-0", child.id()));
        plant(&at, &target, &planted_dir);
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"go\n").unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        s.assert_nothing_mounted();
        assert!(at.join("keep").exists(), "{}", at.display());
        let cleanup = fsbench()
            .args(["cleanup", "--work-dir"])
            .arg(&work)
            .output()
            .unwrap();
        assert!(cleanup.status.success(), "{}", stderr(&cleanup));
        assert!(
            stdout(&cleanup).contains("nothing to clean up"),
            "{}",
            stdout(&cleanup)
        );
        assert!(at.join("keep").exists());
    }
    assert!(target.join("keep").exists());
}

/// The root of the hierarchy fsbench makes sample cgroups in (cgroup v2, else v1's freezer).
fn cgroup_root() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mounts: Vec<(&str, &str, &str)> = text
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let point = left.split(' ').nth(4)?;
            let mut right = right.split(' ');
            Some((point, right.next()?, right.nth(1)?))
        })
        .collect();
    let v2 = mounts.iter().find(|(_, fs, _)| *fs == "cgroup2");
    let freezer = mounts
        .iter()
        .find(|(_, fs, options)| *fs == "cgroup" && options.split(',').any(|o| o == "freezer"));
    v2.or(freezer).map(|(point, _, _)| PathBuf::from(point))
}

/// A pid that is reused — a new run got the pid of a killed one — gives the killed run's
/// ledger no hold on the new run's cgroup: `fsbench cleanup` ends and removes a cgroup only
/// when its name's pid and start time are the ledger's own process's and that process is
/// gone; a name of the older form (`fsbench-<pid>-<n>`) only while no process has the pid.
/// Here a `sleep` stands in for the new run, in a cgroup named as fsbench names its own.
/// (Before: the cleanup of the dead run's ledger killed it and removed its cgroup.)
#[test]
fn a_ledger_of_a_reused_pid_leaves_the_new_processes_cgroup_alone() {
    if !root_or_skip("a_ledger_of_a_reused_pid_leaves_the_new_processes_cgroup_alone") {
        return;
    }
    let Some(root) = cgroup_root() else {
        eprintln!("skipped: no cgroup v2 nor v1 freezer hierarchy is mounted");
        return;
    };
    let s = Scratch::new();
    let state = s.work().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut new_run = Command::new("sleep").arg("120").spawn().unwrap();
    let pid = new_run.id();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let start = start_time(pid);
    let cgroups = [
        root.join(format!("fsbench-{pid}-{start}-0")),
        root.join(format!("fsbench-{pid}-0")),
    ];
    for cgroup in &cgroups {
        std::fs::create_dir(cgroup).unwrap();
    }
    std::fs::write(cgroups[0].join("cgroup.procs"), pid.to_string()).unwrap();
    // The killed run's ledgers: the same pid, an earlier start; and one of the older form,
    // written long before the new process started.
    let ledgers = [
        (
            "earlier",
            serde_json::json!({
                "pid": pid,
                "owner": format!("{} {pid} 1", boot.trim()),
                "resources": [{"kind": "cgroup", "path": cgroups[0]}],
            }),
        ),
        (
            "older-form",
            serde_json::json!({
                "pid": pid,
                "resources": [{"kind": "cgroup", "path": cgroups[1]}],
            }),
        ),
    ];
    for (name, ledger) in &ledgers {
        let file = state.join(format!("sample-{name}.json"));
        std::fs::write(&file, ledger.to_string()).unwrap();
        chmod(&file, 0o600);
        let long_ago = std::time::UNIX_EPOCH + Duration::from_secs(86_400);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
    }
    let output = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(s.work())
        .output()
        .unwrap();
    let alive = new_run.try_wait().unwrap().is_none();
    let kept: Vec<bool> = cgroups.iter().map(|c| c.exists()).collect();
    // Whatever happened, the test's own leftovers go.
    let _ = new_run.kill();
    let _ = new_run.wait();
    for cgroup in &cgroups {
        let _ = std::fs::remove_dir(cgroup);
    }
    let err = stderr(&output);
    assert!(alive, "the new process was killed: {err}");
    assert_eq!(kept, [true, true], "{err}");
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("was made by process {pid} (start time {start}), not by the process whose ledger names it"))
            && err.contains("which runs")
            && !err.contains("left alone: left alone"),
        "{err}"
    );
    for (name, _) in &ledgers {
        assert!(state.join(format!("sample-{name}.json")).exists(), "{name}");
    }
}

/// A ledger whose pid now names another process — started after the ledger's owner, or in
/// another boot — is cleaned: the owner is known by its start time and boot, and a ledger of
/// fsbench 0.1 (a pid only) by a process that started after it was last written. (Before:
/// "fsbench N is still running" for ever.)
#[test]
fn a_ledger_whose_pid_was_reused_is_cleaned() {
    if !root_or_skip("a_ledger_whose_pid_was_reused_is_cleaned") {
        return;
    }
    let s = Scratch::new();
    let work = s.work();
    let state = work.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut sleeper = Command::new("sleep").arg("120").spawn().unwrap();
    let pid = sleeper.id();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let start = start_time(pid);
    let ledgers = [
        ("earlier", pid, Some(format!("{} {pid} 1", boot.trim()))),
        (
            "other-boot",
            pid,
            Some(format!("another-boot {pid} {start}")),
        ),
        ("before-a-reboot", 1, None),
    ];
    for (name, pid, owner) in &ledgers {
        let point = work.join(format!("mnt-ext4-{name}"));
        std::fs::create_dir(&point).unwrap();
        let mut ledger = serde_json::json!({
            "pid": pid,
            "resources": [{"kind": "dir", "path": point}],
        });
        if let Some(owner) = owner {
            ledger["owner"] = owner.as_str().into();
        }
        let file = state.join(format!("{name}.json"));
        std::fs::write(&file, ledger.to_string()).unwrap();
        if owner.is_none() {
            // Last written long before pid 1 of this boot started.
            let long_ago = std::time::UNIX_EPOCH + Duration::from_secs(86_400);
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
    }
    let output = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(&work)
        .output()
        .unwrap();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let said = stdout(&output);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!said.contains("still running"), "{said}");
    for (name, _, _) in &ledgers {
        assert!(
            !work.join(format!("mnt-ext4-{name}")).exists(),
            "{name}: {said}"
        );
        assert!(
            !state.join(format!("{name}.json")).exists(),
            "{name}: {said}"
        );
    }
}

/// A one-sample campaign of a 10 ms nap in `dir` (no root needed), stored in `db`.
fn nap_in(s: &Scratch, dir: &Path, db: &Path) -> Output {
    let plan = s.plan(
        "name = \"nap\"\nrepetitions = 1\n[[workloads]]\nkind = \"sleep\"\nduration = \"10ms\"\n",
    );
    fsbench()
        .args(["run", "--quiet", "--plan", plan.to_str().unwrap(), "--dir"])
        .arg(dir)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

/// A database fsbench did not make — not SQLite, another program's SQLite database (with no
/// schema version, or with one that is fsbench's number), or a results database whose pages
/// are damaged — is refused by `fsbench run` (exit 2, saying what it is) and left byte for byte
/// as it was: no run added, no journal mode switched, no file beside it. Reading commands
/// refuse it too, without calling it "empty".
#[test]
fn a_database_fsbench_did_not_make_is_refused_and_left_as_it_is() {
    let s = Scratch::new();
    let dir = s.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let not_sqlite = s.path().join("notes.db");
    std::fs::write(&not_sqlite, "a text file, not a database\n").unwrap();
    let foreign = |name: &str, version: u32| {
        let path = s.path().join(name);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "CREATE TABLE people (name TEXT, age INTEGER);
             INSERT INTO people VALUES ('ada', 36);
             PRAGMA user_version = {version};"
        ))
        .unwrap();
        path
    };
    let unversioned = foreign("contacts.db", 0);
    let versioned = foreign("app.db", 3);
    // A results database with the root page of its `runs` table overwritten.
    let damaged = s.path().join("damaged.db");
    let output = nap_in(&s, &dir, &damaged);
    assert!(output.status.success(), "{}", stderr(&output));
    {
        let conn = rusqlite::Connection::open(&damaged).unwrap();
        conn.execute_batch("PRAGMA journal_mode = DELETE").unwrap();
        let (root, page): (i64, i64) = conn
            .query_row(
                "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master WHERE name = 'runs'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        drop(conn);
        let mut bytes = std::fs::read(&damaged).unwrap();
        let at = ((root - 1) * page) as usize;
        bytes[at..at + 16].fill(0xff);
        std::fs::write(&damaged, bytes).unwrap();
    }
    for (db, what) in [
        (&unversioned, "is an SQLite database of another program"),
        (&versioned, "is an SQLite database of another program"),
        (&damaged, "is damaged"),
        (&not_sqlite, "is not an SQLite database"),
    ] {
        let before = std::fs::read(db).unwrap();
        let files = entries(s.path()).len();
        let output = nap_in(&s, &dir, db);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(what), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("pass another --db"),
            "{}",
            stderr(&output)
        );
        assert!(
            std::fs::read(db).unwrap() == before,
            "{} changed",
            db.display()
        );
        assert_eq!(entries(s.path()).len(), files, "a file was added beside it");
        if db != &damaged {
            let runs = fsbench().arg("runs").arg("--db").arg(db).output().unwrap();
            assert_eq!(runs.status.code(), Some(2), "{}", stderr(&runs));
            assert!(stderr(&runs).contains(what), "{}", stderr(&runs));
            assert!(
                std::fs::read(db).unwrap() == before,
                "{} changed",
                db.display()
            );
        }
    }
}

/// `--resume` of a campaign in a directory onto another filesystem mounted at the same path
/// since (a new tmpfs: the same type, options and case ids) is refused; onto the same one it
/// goes on.
#[test]
fn a_resume_onto_another_filesystem_at_the_same_path_is_refused() {
    if !root_or_skip("a_resume_onto_another_filesystem_at_the_same_path_is_refused") {
        return;
    }
    let s = Scratch::new();
    let mount = ScratchMount::tmpfs("size=16m");
    let output = nap_in(&s, mount.path(), &s.db());
    assert!(output.status.success(), "{}", stderr(&output));
    let resume = || {
        fsbench()
            .args(["run", "--quiet", "--resume", "1", "--db"])
            .arg(s.db())
            .output()
            .unwrap()
    };
    let output = resume();
    assert!(output.status.success(), "{}", stderr(&output));
    mount.replace("size=16m");
    let output = resume();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("on another filesystem than the one mounted there now"),
        "{}",
        stderr(&output)
    );
}

/// `fsbench cleanup` shows the paths it names as text: a control character in a work
/// directory's name reaches the terminal escaped, not as itself.
#[test]
fn cleanup_names_paths_as_text() {
    if !root_or_skip("cleanup_names_paths_as_text") {
        return;
    }
    let scratch = tempfile::Builder::new()
        .prefix("fsbench-test-cleanup")
        .tempdir_in("/var/tmp")
        .unwrap();
    let work = scratch.path().join("work-\u{1b}[31m-red");
    let out = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("nothing to clean up in"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the terminal: {text:?}"
    );
    assert!(text.contains("\\u{1b}"), "{text:?}");
}

/// Runs `command`, stopping it (and failing) if it has not ended within `limit`: how long it
/// took and what it printed. It is stopped as Ctrl-C stops it (SIGTERM: fsbench ends the tools
/// it started, which run in process groups of their own), and killed if that takes as long.
fn output_within(mut command: Command, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            // SAFETY: a signal to the child this test started and has not reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let stopping = Instant::now();
            while child.try_wait().unwrap().is_none() && stopping.elapsed() < limit {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}, stopped: {}",
                stderr(&output)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = started.elapsed();
    (child.wait_with_output().unwrap(), took)
}

/// The names in `dir` and every file's text, recursively: what a test leaves outside the run.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = files_under(dir)
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            (p, text)
        })
        .collect();
    out.sort();
    out
}

/// Issue 35: dbench (method tool) was handed the loadfile itself, and splits a line at spaces
/// only where fsbench's check split at any whitespace: a TAB hid `\..\..` from the check, and
/// as root dbench's Unlink removed a file and its Deltree a tree's files outside the run's
/// directory; a path over 99 bytes overran dbench's buffers and it spun for minutes. Each is
/// refused before dbench runs — for a command and in a plan — and what is outside survives.
#[test]
fn a_loadfile_cannot_make_dbench_touch_what_is_outside_its_directory() {
    let dir = tempfile::Builder::new()
        .prefix("fsbench-test-dbench")
        .tempdir()
        .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("sentinel-tree/sub")).unwrap();
    std::fs::write(work.join("sentinel-file"), "keep me").unwrap();
    std::fs::write(work.join("sentinel-tree/sub/file"), "keep me too").unwrap();
    let before = snapshot(&work);
    // The run's directory is work/fsbench-sample-*/fsbench-clients-*, a client's
    // clients/client0 in it: five `..` from a directory in the client's lead to work.
    let up = "\\..".repeat(5);
    let smuggled = dir.path().join("smuggled.txt");
    std::fs::write(
        &smuggled,
        format!(
            "Mkdir \"\\clients\" NT_STATUS_OK\n\
             Mkdir \"\\clients\\client1\" NT_STATUS_OK\n\
             Mkdir \"\\clients\\client1\\x\"\t\"\" NT_STATUS_OK\n\
             Unlink \"\\clients\\client1\\x\"\t\"{up}\\sentinel-file\" 0x0 NT_STATUS_OK\n\
             Deltree \"\\clients\\client1\\x\"\t\"{up}\\sentinel-tree\" NT_STATUS_OK\n"
        ),
    )
    .unwrap();
    let long = dir.path().join("long.txt");
    std::fs::write(
        &long,
        format!(
            "Mkdir \"\\clients\" NT_STATUS_OK\n\
             Mkdir \"\\clients\\client1\" NT_STATUS_OK\n\
             NTCreateX \"\\clients\\client1\\{}\" 0x0 0x2 1 NT_STATUS_OK\n\
             Close 1 NT_STATUS_OK\n",
            "a".repeat(150)
        ),
    )
    .unwrap();
    for (load, says) in [
        (
            &smuggled,
            "smuggled.txt:3: a TAB in the line: dbench separates words at spaces only",
        ),
        (&long, "long.txt:3: the path /clients/client1/aaaa"),
    ] {
        let mut command = fsbench();
        command
            .args(["clients", "--method", "tool", "--clients", "1"])
            .args(["--duration", "2s", "--warmup", "0", "--no-store", "--quiet"])
            .arg("--loadfile")
            .arg(load)
            .arg("--dir")
            .arg(&work);
        let (output, _) = output_within(command, Duration::from_secs(60));
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            snapshot(&work),
            before,
            "dbench ran, or something outside changed"
        );

        let s = Scratch::new();
        let plan = s.plan(&format!(
            "name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"clients\"\nmethod = \"tool\"\nloadfile = \"{}\"\n",
            load.display()
        ));
        let output = s.run(&["--plan", plan.to_str().unwrap()]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(
            !s.work().exists(),
            "the work directory was made for a bad plan"
        );
    }
}

/// A loadfile is read whole: /dev/zero or /dev/urandom took all memory, a FIFO nobody writes
/// blocked the command silently, a 10 GB sparse file was read for minutes. Each is refused
/// from what it is (or its size) before anything is read: at once, in little memory (the
/// command runs under a 512 MiB address-space limit), with a line that says what to give.
#[test]
fn a_loadfile_that_is_not_a_small_regular_file_is_refused_at_once() {
    let dir = tempfile::Builder::new()
        .prefix("fsbench-test-loadfile")
        .tempdir()
        .unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let sparse = dir.path().join("sparse.txt");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(10_000_000_000)
        .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    for (load, is) in [
        (
            Path::new("/dev/zero"),
            "is a character device, not a regular file",
        ),
        (
            Path::new("/dev/urandom"),
            "is a character device, not a regular file",
        ),
        (fifo.as_path(), "is a FIFO (named pipe), not a regular file"),
        (
            sparse.as_path(),
            "is 9.3 GiB, over the 64 MiB a loadfile may have",
        ),
    ] {
        for method in ["native", "tool"] {
            let mut command = Command::new("sh");
            command.arg("-c").arg(format!(
                "ulimit -v 524288; exec {} clients --method {method} --no-store --quiet --loadfile '{}' --dir '{}'",
                env!("CARGO_BIN_EXE_fsbench"),
                load.display(),
                work.display()
            ));
            let (output, took) = output_within(command, Duration::from_secs(30));
            let err = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{load:?}: {err}");
            assert_eq!(
                err.trim_end(),
                format!(
                    "error: --loadfile: {} {is}{}",
                    load.display(),
                    match is {
                        i if i.starts_with("is 9.3") => ": give a smaller one",
                        _ => ": give a loadfile that is a regular file (at most 64 MiB)",
                    }
                ),
            );
            // At once: not after reading the device, FIFO or 9.3 GiB (seconds, or for ever),
            // with room for a debug build's start on a host loaded by the other tests.
            assert!(took < Duration::from_secs(3), "{load:?} took {took:?}");
            assert!(entries(&work).is_empty(), "left behind");
        }
    }
}

/// dbench turns every `client1` in a path into its client's name (`client0`, ...), the text
/// of its `-D` directory included: handed a run's directory under `.../client1`, its first
/// client worked under `.../client0` instead, and the run failed (or, where such a directory
/// existed, wrote there). It now runs in the run's directory with `-D .`.
#[test]
fn dbench_runs_in_a_directory_whose_name_holds_client1() {
    let dir = tempfile::Builder::new()
        .prefix("fsbench-test-dbench")
        .tempdir()
        .unwrap();
    let (client0, client1) = (dir.path().join("client0"), dir.path().join("client1"));
    std::fs::create_dir(&client0).unwrap();
    std::fs::create_dir(&client1).unwrap();
    let mut command = fsbench();
    command
        .args(["clients", "--method", "tool", "--clients", "2"])
        .args(["--duration", "2s", "--warmup", "0", "--no-store", "--quiet"])
        .arg("--dir")
        .arg(&client1);
    let (output, _) = output_within(command, Duration::from_secs(60));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        entries(&client0).is_empty(),
        "dbench wrote beside its directory"
    );
    assert!(entries(&client1).is_empty(), "left behind");
}
