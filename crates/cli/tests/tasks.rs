//! The task workload end to end: real tar, cp, rm and make (and their native counterparts) on
//! data fsbench generates, counted against the model; exec timed against /usr/bin/time; the
//! errors a user meets (a missing tool, a file that is not a tarball, a target too small, a
//! failed step, Ctrl-C); and the chains of studies 000 and 001 in campaigns on loop devices.

mod common;

use common::{flat_results, fsbench, root_or_skip, stderr, Scratch, ScratchMount};
use fsbench_workload::task::tree;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Small enough for CI: 393 files, 6.5 MB.
const SCALE: &str = "0.005";

/// The tree the tests' runs generate (seed 1, default units scaled and at least 8).
fn expected_tree() -> tree::Totals {
    let model = tree::scaled(&tree::LINUX_6_1, 0.005);
    tree::generate(&model, 8, 1).totals
}

struct TaskDir {
    dir: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl TaskDir {
    fn new() -> TaskDir {
        TaskDir {
            dir: tempfile::Builder::new()
                .prefix("fsbench-test-task")
                .tempdir_in("/var/tmp")
                .unwrap(),
            data: tempfile::Builder::new()
                .prefix("fsbench-test-data")
                .tempdir()
                .unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = fsbench();
        command
            .arg("task")
            .args(args)
            .arg("--dir")
            .arg(self.path())
            .arg("--data-dir")
            .arg(self.data.path())
            .args(["--scale", SCALE, "--no-store"]);
        command
    }

    /// Runs and returns the flat results of its JSON export.
    fn run_json(&self, args: &[&str]) -> (std::process::Output, Vec<serde_json::Value>) {
        let json = self.data.path().join("out.json");
        let output = self
            .command(args)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        let results = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .map(|doc: serde_json::Value| flat_results(&doc))
            .unwrap_or_default();
        (output, results)
    }

    fn assert_empty(&self) {
        let left = common::entries(self.path());
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

fn step<'a>(results: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    results
        .iter()
        .find(|r| r["step"] == name)
        .unwrap_or_else(|| panic!("no {name} result in {results:?}"))
}

/// A shell command for `exec` that writes the extracted tree's counts to `out`.
fn count_tree(out: &Path) -> String {
    let out = out.display();
    format!(
        "cd \"$FSBENCH_TREE\" && echo $(find . -type f | wc -l) $(find . -mindepth 1 -type d | wc -l) $(find . -type l | wc -l) $(find . -type f -printf '%s\\n' | awk '{{s+=$1}} END {{print s}}') > {out}"
    )
}

fn counted(path: &Path) -> tree::Totals {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    tree::Totals {
        files: v[0],
        dirs: v[1],
        symlinks: v[2],
        bytes: v[3],
    }
}

/// Both methods extract exactly the modelled tree (files, directories, symlinks, bytes, as
/// find(1) counts them); the native read-all reads every byte of it; remove leaves nothing;
/// each step has its real/user/sys and sync.
#[test]
fn untar_extracts_the_modelled_tree_read_all_reads_every_byte_remove_leaves_nothing() {
    let expected = expected_tree();
    for method in ["tool", "native"] {
        let t = TaskDir::new();
        let counts = t.data.path().join("counts");
        let command = count_tree(&counts);
        let (output, results) = t.run_json(&[
            "untar,exec,read-all,remove",
            "--method",
            method,
            "--command",
            &command,
        ]);
        assert!(output.status.success(), "{method}: {}", stderr(&output));
        assert_eq!(counted(&counts), expected, "{method}: the extracted tree");
        let untar = step(&results, "untar");
        assert_eq!(untar["operation"], method);
        assert_eq!(untar["files"], expected.files);
        assert_eq!(untar["bytes"], expected.bytes);
        let read = step(&results, "read-all");
        assert_eq!(read["bytes"], expected.bytes, "{method}: bytes read");
        assert_eq!(read["files"], expected.files);
        assert!(read["cache"].is_string(), "{read}");
        for r in &results {
            let (real, user, sys, sync) = (
                r["real"].as_u64().unwrap(),
                r["user"].as_u64().unwrap(),
                r["sys"].as_u64().unwrap(),
                r["sync"].as_u64().unwrap(),
            );
            assert!(real > 0 && sync <= real, "{r}");
            let _ = (user, sys);
        }
        // tar's bzip2 shows in the user time of the tool's untar.
        if method == "tool" {
            assert!(untar["user"].as_u64().unwrap() > 0, "{untar}");
            assert!(untar["command"]
                .as_str()
                .unwrap()
                .starts_with("tar -x -j -f"));
        }
        t.assert_empty();
    }
}

/// The generated C project compiles and links: the program it builds runs.
#[test]
fn the_generated_build_compiles_and_runs() {
    let t = TaskDir::new();
    let out = t.data.path().join("ran");
    let command = format!("\"$FSBENCH_TREE\"/linux/fsbench-app > {}", out.display());
    let (output, results) = t.run_json(&["build,exec", "--command", &command, "--jobs", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = std::fs::read_to_string(&out).unwrap();
    assert!(printed.trim().parse::<u64>().is_ok(), "{printed:?}");
    let phases: Vec<_> = results
        .iter()
        .filter(|r| r["step"] == "build")
        .map(|r| r["phase"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(phases, ["configure", "compile"]);
    let compile = results.iter().find(|r| r["phase"] == "compile").unwrap();
    assert!(compile["command"].as_str().unwrap().ends_with("-j2"));
    // gcc ran as make's child: its CPU is in the user time.
    assert!(compile["user"].as_u64().unwrap() > 10_000_000, "{compile}");
    t.assert_empty();
}

/// The copy is a real copy of an incompressible file, by both methods; the data directory
/// keeps nothing of it.
#[test]
fn copy_copies_the_big_file_by_both_methods() {
    for method in ["tool", "native"] {
        let t = TaskDir::new();
        let out = t.data.path().join("size");
        let command = format!("stat -c %s big-file > {}", out.display());
        let (output, results) = t.run_json(&[
            "copy,exec",
            "--method",
            method,
            "--big-file",
            "1g",
            "--command",
            &command,
        ]);
        assert!(output.status.success(), "{method}: {}", stderr(&output));
        // 1 GiB at scale 0.005.
        let expected = (f64::from(1u32 << 30) * 0.005).round() as u64;
        assert_eq!(
            std::fs::read_to_string(&out).unwrap().trim(),
            expected.to_string()
        );
        let copy = step(&results, "copy");
        assert_eq!(copy["bytes"], expected);
        assert!(copy["rate"].as_f64().unwrap() > 0.0);
        if method == "tool" {
            assert!(copy["command"]
                .as_str()
                .unwrap()
                .starts_with("cp --reflink=never"));
        }
        let kept: Vec<_> = common::entries(t.data.path())
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("big-file"))
            .collect();
        assert!(kept.is_empty(), "{kept:?}");
        t.assert_empty();
    }
}

fn measure_with_time(script: &str, dir: &Path) -> (f64, f64) {
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%e %U %S", "sh", "-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    let text = stderr(&out);
    let v: Vec<f64> = text
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    (v[0], v[1] + v[2])
}

/// exec's real and CPU times agree with /usr/bin/time on the same command (best of three
/// each, within 25 % and 100 ms: noise, not the harness).
#[test]
fn exec_timing_matches_usr_bin_time() {
    let t = TaskDir::new();
    let script = "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; sleep 0.2";
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..3 {
        let (output, results) = t.run_json(&["exec", "--command", script, "--sync", "false"]);
        assert!(output.status.success(), "{}", stderr(&output));
        let r = step(&results, "exec");
        ours.push((
            r["real"].as_f64().unwrap() / 1e9,
            (r["user"].as_f64().unwrap() + r["sys"].as_f64().unwrap()) / 1e9,
        ));
        theirs.push(measure_with_time(script, t.path()));
    }
    let best = |v: &[(f64, f64)]| {
        v.iter()
            .fold((f64::MAX, f64::MAX), |a, b| (a.0.min(b.0), a.1.min(b.1)))
    };
    let (our_real, our_cpu) = best(&ours);
    let (their_real, their_cpu) = best(&theirs);
    let close = |a: f64, b: f64| (a - b).abs() <= 0.1 + 0.25 * b;
    assert!(
        close(our_real, their_real),
        "real: ours {our_real} s, time's {their_real} s"
    );
    assert!(
        close(our_cpu, their_cpu),
        "cpu: ours {our_cpu} s, time's {their_cpu} s"
    );
    assert!(their_cpu > 0.1, "the command burns CPU: {their_cpu}");
}

/// A PATH with tar but without bzip2 (or make): the task ends as unsupported (exit 3) with
/// the package to install; the steps before it are kept.
#[test]
fn a_missing_tool_is_unsupported_with_the_package_to_install() {
    let t = TaskDir::new();
    let bin = t.data.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["tar", "sh", "rm", "cp"] {
        std::os::unix::fs::symlink(Path::new("/usr/bin").join(tool), bin.join(tool))
            .or_else(|_| std::os::unix::fs::symlink(Path::new("/bin").join(tool), bin.join(tool)))
            .unwrap();
    }
    let output = t.command(&["untar"]).env("PATH", &bin).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("bzip2 is not installed (tar runs it to decompress): install it (apt-get install bzip2)"),
        "{}",
        stderr(&output)
    );
    // untar without compression works there; build then lacks make.
    let json = t.data.path().join("out.json");
    let output = t
        .command(&[
            "untar,build,read-all",
            "--compression",
            "none",
            "--json",
            json.to_str().unwrap(),
        ])
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("build failed: make is not installed"), "{err}");
    assert!(err.contains("not run: read-all"), "{err}");
    let results = flat_results(&common::read_json(&json));
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["step"], "untar");
    t.assert_empty();
}

/// --source that is not a tarball fails with a clear reason; a missing one is refused before
/// anything runs.
#[test]
fn a_source_that_is_not_a_tarball_is_refused() {
    let t = TaskDir::new();
    let not_tar = t.data.path().join("notes.tar.gz");
    std::fs::write(&not_tar, "just some text, not an archive\n".repeat(40)).unwrap();
    let output = t
        .command(&["untar", "--source", not_tar.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is not a tar archive (nor gzip, bzip2 or xz)"),
        "{}",
        stderr(&output)
    );
    let output = t
        .command(&["untar", "--source", "/nonexistent/linux.tar.xz"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--source: /nonexistent/linux.tar.xz does not exist"));
    t.assert_empty();
}

/// A real tree given as --source is packed and extracted exactly; a real tarball too.
#[test]
fn a_real_tree_or_tarball_can_be_the_source() {
    let t = TaskDir::new();
    let src = t.data.path().join("project");
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    std::fs::write(src.join("a.c"), "int a;\n").unwrap();
    std::fs::write(src.join("sub/deeper/b.h"), vec![7u8; 10_000]).unwrap();
    std::os::unix::fs::symlink("a.c", src.join("link")).unwrap();
    let counts = t.data.path().join("counts");
    let command = count_tree(&counts);
    for method in ["tool", "native"] {
        let (output, results) = t.run_json(&[
            "untar,exec",
            "--source",
            src.to_str().unwrap(),
            "--method",
            method,
            "--command",
            &command,
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        // The top directory (project) and its two below.
        assert_eq!(
            counted(&counts),
            tree::Totals {
                files: 2,
                dirs: 3,
                symlinks: 1,
                bytes: 10_007
            }
        );
        assert_eq!(step(&results, "untar")["bytes"], 10_007);
    }
    t.assert_empty();
}

/// A filesystem too small for the tree is refused before anything runs, saying what it needs.
#[test]
fn a_target_too_small_for_the_tree_is_refused_before_anything_runs() {
    if !root_or_skip("a_target_too_small_for_the_tree_is_refused_before_anything_runs") {
        return;
    }
    let small = ScratchMount::tmpfs("size=4m");
    let data = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args(["task", "untar", "--scale", SCALE, "--no-store", "--dir"])
        .arg(small.path())
        .arg("--data-dir")
        .arg(data.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the tree needs about"),
        "{}",
        stderr(&output)
    );
    assert!(common::entries(small.path()).is_empty());
}

/// Ctrl-C during a chain: the steps that finished are stored, the run is interrupted (130),
/// nothing is left in the directory, and the tool's processes are gone.
#[test]
fn an_interrupted_chain_keeps_what_finished() {
    let t = TaskDir::new();
    let db = t.data.path().join("results.db");
    let marker = t.data.path().join("started");
    let command = format!("touch {}; sleep 60", marker.display());
    let child = fsbench()
        .args([
            "task",
            "untar,exec,remove",
            "--scale",
            SCALE,
            "--command",
            &command,
        ])
        .arg("--dir")
        .arg(t.path())
        .arg("--data-dir")
        .arg(t.data.path())
        .arg("--db")
        .arg(&db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !marker.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "exec never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the sleep was not stopped"
    );
    let export = fsbench()
        .args(["export", "1", "--json", "-", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let results = flat_results(&doc);
    let steps: Vec<_> = results.iter().map(|r| r["step"].clone()).collect();
    assert_eq!(steps, ["untar"], "{results:?}");
    assert_eq!(common::first_sample(&doc)["status"], "interrupted");
    t.assert_empty();
}

fn plan_with(work_data: &Path, tasks_toml: &str) -> String {
    format!(
        r#"
name = "tasks"
repetitions = 1
[device]
image = "512m"
[[filesystems]]
name = "ext4"
[[filesystems]]
name = "xfs"
[[workloads]]
kind = "task"
data_dir = "{}"
{tasks_toml}
"#,
        work_data.display()
    )
}

fn steps_of(sample: &serde_json::Value) -> Vec<String> {
    sample["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let step = r["step"].as_str().unwrap().to_string();
            match r["phase"].as_str() {
                Some(phase) => format!("{step}:{phase}"),
                None => step,
            }
        })
        .collect()
}

/// Study 001's chain in a campaign on ext4 and xfs loop devices: untar, build, a remount
/// before read-all (asked of the campaign by the worker), then the target's fsck over the
/// tree, reported as a step; nothing stays mounted.
#[test]
fn study_001_chain_runs_in_a_campaign_with_a_remount_and_fsck() {
    if !root_or_skip("study_001_chain_runs_in_a_campaign_with_a_remount_and_fsck") {
        return;
    }
    let s = Scratch::new();
    let data = s.path().join("data");
    let plan = s.plan(&plan_with(&data, r#"tasks = "untar,build,read-all""#));
    let output = s.run(&[
        "--plan",
        plan.to_str().unwrap(),
        "--scale",
        SCALE,
        "--quiet",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = s.export(1);
    let cases = common::run_cases(&doc);
    assert_eq!(cases.len(), 2);
    for case in cases {
        let sample = &case["samples"][0];
        assert_eq!(sample["status"], "ok", "{sample}");
        assert_eq!(
            steps_of(sample),
            [
                "untar",
                "build:configure",
                "build:compile",
                "read-all",
                "fsck"
            ]
        );
        let results = sample["results"].as_array().unwrap();
        let read = results.iter().find(|r| r["step"] == "read-all").unwrap();
        assert_eq!(read["attributes"]["cache"], "remounted", "{read}");
        let fsck = results.iter().find(|r| r["step"] == "fsck").unwrap();
        let command = fsck["attributes"]["command"].as_str().unwrap();
        assert!(
            command.starts_with("e2fsck") || command.starts_with("xfs_repair"),
            "{command}"
        );
    }
    s.assert_clean();
}

/// Study 000's trio in a campaign; and a failed step ends its chain with the rest named as not
/// run, the steps before it stored.
#[test]
fn study_000_chain_and_a_failed_step_in_a_campaign() {
    if !root_or_skip("study_000_chain_and_a_failed_step_in_a_campaign") {
        return;
    }
    let s = Scratch::new();
    let data: PathBuf = s.path().join("data");
    let plan = s.plan(&plan_with(
        &data,
        r#"tasks = "copy,untar,remove"
big_file = "2g"
[[workloads]]
kind = "task"
name = "broken"
tasks = "untar,exec,read-all"
command = "echo the build broke >&2; exit 7""#,
    ));
    let output = s.run(&[
        "--plan",
        plan.to_str().unwrap(),
        "--scale",
        SCALE,
        "--quiet",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let doc = s.export(1);
    for case in common::run_cases(&doc) {
        let sample = &case["samples"][0];
        let key = case["key"].as_str().unwrap();
        if key.ends_with(".task") {
            assert_eq!(sample["status"], "ok", "{sample}");
            assert_eq!(steps_of(sample), ["copy", "untar", "remove", "fsck"]);
        } else {
            assert_eq!(sample["status"], "failed", "{sample}");
            let reason = sample["reason"].as_str().unwrap();
            assert!(
                reason.contains("exec failed: the command `echo the build broke >&2; exit 7` exited with 7: the build broke; not run: read-all"),
                "{reason}"
            );
            assert_eq!(steps_of(sample), ["untar", "fsck"]);
        }
    }
    s.assert_clean();
}
