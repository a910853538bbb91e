//! `fsbench io` as users run it: the queue depth reaches a real (loop) device, a filesystem
//! that refuses O_DIRECT makes the run unsupported, a filesystem that fills up mid-run ends it
//! with what was measured stored, bad settings are refused in flag terms, a plan sweeps the
//! queue depth with engine and depth as stored dimensions, and ranks' results merge.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An ext4 filesystem on a loop device the test attaches itself (direct I/O on the backing
/// file, as fsbench's own targets), mounted on a directory of its own; all undone on drop.
struct LoopExt4 {
    device: String,
    mount: tempfile::TempDir,
    _image: tempfile::NamedTempFile,
}

impl LoopExt4 {
    fn new() -> LoopExt4 {
        let image = tempfile::Builder::new()
            .prefix("fsbench-test-io")
            .suffix(".img")
            .tempfile_in("/var/tmp")
            .unwrap();
        image.as_file().set_len(512 << 20).unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(image.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "losetup: {}", stderr(&out));
        let device = stdout(&out).trim().to_string();
        let disk = LoopExt4 {
            device,
            mount: tempfile::tempdir().unwrap(),
            _image: image,
        };
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
            .arg(&disk.device)
            .status()
            .unwrap();
        assert!(mkfs.success());
        let mount = Command::new("mount")
            .arg(&disk.device)
            .arg(disk.mount.path())
            .status()
            .unwrap();
        assert!(mount.success());
        disk
    }

    fn path(&self) -> &Path {
        self.mount.path()
    }

    /// `loop7` of `/dev/loop7`, as /proc/diskstats names it.
    fn name(&self) -> &str {
        self.device.trim_start_matches("/dev/")
    }
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mount.path()).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// The reads in progress on `device` (the first count of /sys/block/DEV/inflight; the 9th
/// statistic of its line in /proc/diskstats counts writes too, and the layout before the timed
/// phase writes).
fn reads_in_flight(device: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/block/{device}/inflight"))
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The run id a one-case command names on stderr ("stored as run 7 in ...").
fn stored_run(output: &std::process::Output) -> i64 {
    let err = stderr(output);
    let at = err.find("stored as run ").expect(&err) + "stored as run ".len();
    err[at..].split(' ').next().unwrap().parse().unwrap()
}

/// `fsbench export RUN --json -` of `db`.
fn export(db: &Path, run: i64) -> Value {
    let out = fsbench()
        .args(["export", &run.to_string(), "--json", "-", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// O_DIRECT random reads at depth 32 on ext4 on a loop device: a thread sampling the device's
/// in-flight counts sees more than one read in progress on it at once, and the ring's own count
/// reached the depth. Every operation is counted once: ops x bs = bytes.
#[test]
fn the_queue_depth_reaches_the_device() {
    if !root_or_skip("the_queue_depth_reaches_the_device") {
        return;
    }
    let disk = LoopExt4::new();
    let name = disk.name().to_string();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut most = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(reads_in_flight(&name));
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            most
        })
    };
    let s = Scratch::new();
    let output = fsbench()
        .args(["io", "--rw", "randread", "--direct", "--iodepth", "32"])
        .args([
            "--size",
            "64m",
            "--runtime",
            "2s",
            "--time-based",
            "--json",
            "-",
        ])
        .arg("--db")
        .arg(s.db())
        .arg("--dir")
        .arg(disk.path())
        .output()
        .unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let most = sampler.join().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let r = &flat_results(&doc)[0];
    assert_eq!(r["iodepth"], 32);
    assert_eq!(r["engine"], "io_uring");
    assert_eq!(r["direct_io"], true);
    assert_eq!(r["bytes"], r["ops"].as_u64().unwrap() * 4096, "{r}");
    assert_eq!(r["latency_count"], r["ops"], "{r}");
    assert!(
        most > 1,
        "at most {most} read in progress on {} during a depth-32 run",
        disk.name()
    );
    assert_eq!(r["in_flight_max"], 32, "the ring's own count: {r}");
    assert!(entries(disk.path())
        .iter()
        .all(|p| !p.to_string_lossy().contains("fsbench-io")));
}

/// ramfs refuses O_DIRECT: the run is unsupported (exit 3), stored so, says which setting and
/// why, and leaves nothing — never a buffered run in disguise.
#[test]
fn direct_io_on_a_filesystem_that_refuses_it_is_unsupported() {
    if !root_or_skip("direct_io_on_a_filesystem_that_refuses_it_is_unsupported") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "ramfs", "fsbench-test-ramfs"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(mounted.success());
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(dir.path());
    let s = Scratch::new();
    for engine in ["io_uring", "sync"] {
        let output = fsbench()
            .args(["io", "--direct", "--size", "1m", "--engine", engine, "--db"])
            .arg(s.db())
            .arg("--dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{engine}: {err}");
        assert!(
            err.contains("--direct: the ramfs filesystem of")
                && err.contains("refuses O_DIRECT (EINVAL): run without direct I/O"),
            "{engine}: {err}"
        );
        let doc = export(&s.db(), stored_run(&output));
        assert_eq!(first_sample(&doc)["status"], "unsupported");
        assert!(entries(dir.path()).is_empty(), "{engine}: left files");
    }
}

/// Writes that allocate on a filesystem that fills up: the error completion (ENOSPC) ends the
/// run as failed with a clear reason, and what was measured up to it is stored, marked partial,
/// its bytes exactly its operations; the files go.
#[test]
fn a_filesystem_that_fills_up_ends_the_run_with_what_was_measured() {
    if !root_or_skip("a_filesystem_that_fills_up_ends_the_run_with_what_was_measured") {
        return;
    }
    let fs = ScratchMount::tmpfs("size=4m");
    let s = Scratch::new();
    for engine in ["io_uring", "sync"] {
        let output = fsbench()
            .args(["io", "--rw", "write", "--size", "16m", "--engine", engine])
            .args([
                "--iodepth",
                if engine == "sync" { "1" } else { "8" },
                "--db",
            ])
            .arg(s.db())
            .arg("--dir")
            .arg(fs.path())
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{engine}: {err}");
        assert!(
            err.contains("No space left on device") && err.contains("the filesystem is full"),
            "{engine}: {err}"
        );
        let doc = export(&s.db(), stored_run(&output));
        let sample = first_sample(&doc);
        assert_eq!(sample["status"], "failed");
        let r = &flat_results_of(sample)[0];
        assert_eq!(r["partial"], true, "{r}");
        let ops = r["ops"].as_u64().unwrap();
        assert!(ops > 0 && ops < 4096, "{engine}: {r}");
        assert_eq!(r["bytes"], ops * 4096);
        assert!(entries(fs.path()).is_empty(), "{engine}: left files");
    }
}

/// The scheduling policies of a running job's threads (from /proc; 3 is SCHED_BATCH, 0
/// SCHED_OTHER), sampled until it ends: its main thread's, its io-wq workers', the others'.
#[derive(Default)]
struct Policies {
    main: Vec<u32>,
    io_wq: Vec<u32>,
    others: Vec<u32>,
}

fn policies(child: &mut std::process::Child) -> Policies {
    let mut seen = Policies::default();
    let pid = child.id().to_string();
    while child.try_wait().unwrap().is_none() {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
        for task in tasks.into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            // After the command's name in parentheses, the policy is the 41st field overall.
            let policy = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(38)?.parse().ok());
            let Some(policy) = policy else { continue };
            if task.file_name().to_str() == Some(pid.as_str()) {
                seen.main.push(policy);
            } else if comm.starts_with("iou-wrk") {
                seen.io_wq.push(policy);
            } else {
                seen.others.push(policy);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    seen
}

/// Buffered writes on tmpfs go to io-wq workers: by default they run, with the thread that
/// submits, under SCHED_BATCH (the main thread stays as it was), and `--cpu-sched normal` leaves
/// every thread under SCHED_OTHER, as the results say.
#[test]
fn the_threads_and_their_io_wq_workers_run_under_the_policy_asked_for() {
    if !root_or_skip("the_threads_and_their_io_wq_workers_run_under_the_policy_asked_for") {
        return;
    }
    let fs = ScratchMount::tmpfs("size=64m");
    let s = Scratch::new();
    for (flags, policy, name) in [
        (&[][..], 3, "batch"),
        (&["--cpu-sched", "normal"][..], 0, "normal"),
    ] {
        let json = s.path().join("io.json");
        let err = s.path().join("io.err");
        let mut child = fsbench()
            .args(["io", "--rw", "randwrite", "--iodepth", "8", "--size", "16m"])
            .args([
                "--runtime",
                "1500ms",
                "--time-based",
                "--quiet",
                "--no-store",
            ])
            .args(flags)
            .arg("--json")
            .arg(&json)
            .arg("--dir")
            .arg(fs.path())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        let seen = policies(&mut child);
        let status = child.wait().unwrap();
        let err = std::fs::read_to_string(&err).unwrap();
        assert!(status.success(), "{err}");
        assert!(!err.contains("scheduling policy"), "{name}: {err}");
        assert!(
            !seen.io_wq.is_empty(),
            "{name}: no io-wq worker seen during the run"
        );
        assert!(
            seen.io_wq.iter().all(|&p| p == policy),
            "{name}: io-wq workers' policies {:?}",
            seen.io_wq
        );
        assert!(
            !seen.main.is_empty() && seen.main.iter().all(|&p| p == 0),
            "{name}: the main thread's policies {:?}",
            seen.main
        );
        assert!(
            seen.others.contains(&policy),
            "{name}: no submitting thread under {policy}: {:?}",
            seen.others
        );
        let r = &flat_results(&read_json(&json))[0];
        assert_eq!(r["cpu_sched"], name, "{r}");
    }
}

/// Mistakes are refused before anything runs, naming the flag (exit 2, nothing stored).
#[test]
fn bad_settings_are_refused_in_flag_terms() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let output = fsbench()
            .arg("io")
            .args(args)
            .arg("--no-store")
            .arg("--dir")
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(needle),
            "{args:?}: {}",
            stderr(&output)
        );
    };
    refused(
        &["--engine", "sync", "--iodepth", "8"],
        "error: --iodepth: a queue depth above 1 needs the io_uring engine",
    );
    refused(
        &["--engine", "libaio"],
        "libaio is not an engine of fsbench",
    );
    refused(&["--rw", "trim"], "'trim' is not an access pattern");
    refused(&["--time-based"], "--time-based: needs a runtime");
    refused(
        &["--iodepth", "4", "--iodepth-batch-complete", "8"],
        "--iodepth-batch-complete: 8 is more than iodepth (4)",
    );
    // Numbers past what a plan holds (TOML's integers are signed 64-bit): said as the
    // user's, naming the flag and its plan key. (Before: "a bug in fsbench".)
    for (flag, value) in [
        ("--rate-iops", "9223372036854775808"),
        ("--seed", "18446744073709551615"),
    ] {
        refused(
            &[flag, value],
            &format!(
                "error: {flag}: {value} is more than fsbench takes: at most 9223372036854775807 \
                 (plan key {})",
                flag[2..].replace('-', "_")
            ),
        );
    }
    assert!(entries(dir.path()).is_empty());
}

/// A plan's io workload swept over the queue depth on ext4: every point is a result whose
/// engine and depth are dimensions (stored as columns), and each is counted exactly.
#[test]
fn a_plan_sweeps_the_queue_depth_with_engine_and_depth_as_dimensions() {
    if !root_or_skip("a_plan_sweeps_the_queue_depth_with_engine_and_depth_as_dimensions") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "depths"
repetitions = 1
[device]
image = "256m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "io"
name = "qd"
rw = "randread"
direct = true
size = "16m"
numjobs = 2
cpu_sched = "normal"
sweep = "iodepth=1,8"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    s.assert_clean();
    let doc = s.export(1);
    let results = flat_results(&doc);
    assert_eq!(results.len(), 2, "{results:?}");
    for (r, depth) in results.iter().zip([1, 8]) {
        assert_eq!(r["iodepth"], depth);
        assert_eq!(r["engine"], "io_uring");
        assert_eq!(r["threads"], 2);
        assert_eq!(r["ops"], 2 * 4096, "two files of 16m, each block once: {r}");
        assert_eq!(r["latency_count"], r["ops"]);
        assert_eq!(
            r["cpu_sched"], "normal",
            "the plan's policy, as the threads ran: {r}"
        );
    }
    let conn = rusqlite::Connection::open(s.db()).unwrap();
    let depths: Vec<(String, i64)> = conn
        .prepare("SELECT engine, iodepth FROM results ORDER BY iodepth")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        depths,
        [("io_uring".to_string(), 1), ("io_uring".to_string(), 8)]
    );
}

/// Two ranks' results of the same job (here threads standing in for the ranks of mpirun) merge
/// as other workloads' do: operations and bytes add up, the time is the slowest rank's, IOPS is
/// the total over it, and both latency histograms merge whole.
#[test]
fn two_ranks_results_merge_into_the_jobs() {
    use fsbench_workload::io::IoSettings;
    use fsbench_workload::workload::{Collect, Place, Workload};
    use fsbench_workload::{Context, StopFlag};
    let dirs: Vec<PathBuf> = (0..2)
        .map(|_| tempfile::tempdir().unwrap().keep())
        .collect();
    let settings = IoSettings {
        iodepth: 8,
        rw: "randrw".parse().unwrap(),
        size: fsbench_measure::units::Size(1 << 20),
        ..IoSettings::default()
    };
    let ranks: Vec<fsbench_scale::merge::RankResults> = std::thread::scope(|scope| {
        let runs: Vec<_> = dirs
            .iter()
            .enumerate()
            .map(|(rank, dir)| {
                let settings = &settings;
                scope.spawn(move || {
                    let ctx = Context {
                        job: Some(Place {
                            rank: rank as u32,
                            ranks: 2,
                        }),
                        ..Context::default()
                    };
                    let mut sink = Collect::default();
                    let end = settings.run(
                        &ctx,
                        dir,
                        &StopFlag::new(),
                        &mut sink,
                        &mut fsbench_workload::harness::Detached,
                    );
                    assert!(end.error.is_none(), "{:?}", end.error);
                    fsbench_scale::merge::RankResults {
                        rank: rank as u32,
                        host: "h".into(),
                        records: sink.records,
                    }
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let merged =
        fsbench_scale::merge::merge_by(&ranks, fsbench_workload::figures::DEFINED).unwrap();
    assert_eq!(merged.len(), 2, "reads and writes");
    for (i, r) in merged.iter().enumerate() {
        let of = |m: &str| r.measurement(m).unwrap().value;
        let each = |m: &str| -> Vec<f64> {
            ranks
                .iter()
                .map(|rank| rank.records[i].measurement(m).unwrap().value)
                .collect()
        };
        assert_eq!(of("ops"), each("ops").iter().sum::<f64>());
        assert_eq!(of("bytes"), of("ops") * 4096.0);
        let slowest = each("elapsed").into_iter().fold(0.0, f64::max);
        assert_eq!(of("elapsed"), slowest);
        assert!((of("ops_rate") - of("ops") / (slowest / 1e9)).abs() < 1e-6 * of("ops_rate"));
        assert_eq!(
            r.latency_bins.iter().map(|b| b.1).sum::<u64>() as f64,
            of("ops"),
            "every rank's completions in the merged histogram"
        );
        let slat: Vec<(u64, u64)> =
            serde_json::from_value(r.attributes["slat_bins"].clone()).unwrap();
        assert_eq!(slat.iter().map(|b| b.1).sum::<u64>() as f64, of("ops"));
        assert_eq!(of("ranks"), 2.0);
    }
    let total: f64 = merged
        .iter()
        .map(|r| r.measurement("ops").unwrap().value)
        .sum();
    assert_eq!(
        total,
        2.0 * 256.0,
        "two ranks' files of 256 blocks, each once"
    );
    for dir in dirs {
        assert!(entries(&dir).is_empty());
        std::fs::remove_dir(dir).unwrap();
    }
}

/// The bare device (`raw`) beside ext4 in one plan: the io workload runs on the loop device
/// itself (each block of its region once), nothing is made, mounted or checked on it; the other
/// workload is unsupported on it with the reason; it is left out of the verdict and the ranking
/// and every report sets ext4's figure against it (efficiency, paired by round). Options on it
/// are refused at load.
#[test]
fn the_bare_device_is_the_baseline_of_the_filesystems() {
    if !root_or_skip("the_bare_device_is_the_baseline_of_the_filesystems") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "baseline"
repetitions = 2
[device]
image = "256m"
[[filesystems]]
name = "raw"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "io"
name = "rr"
rw = "randread"
direct = true
size = "16m"
iodepth = 4
[[workloads]]
kind = "sleep"
name = "nap"
duration = "10ms"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    s.assert_clean();
    let out = stdout(&output) + &stderr(&output);
    assert!(out.contains("Efficiency ("), "{out}");
    assert!(
        out.contains("ext4 ") && out.contains(" of raw "),
        "the terminal sets ext4 against raw: {out}"
    );
    let doc = s.export(1);
    for case in run_cases(&doc) {
        let raw = case["config"]["filesystem"] == "raw";
        for sample in case["samples"].as_array().unwrap() {
            let nap = case["workload"]["kind"] == "sleep";
            match (raw, nap) {
                (true, true) => {
                    assert_eq!(sample["status"], "unsupported", "{sample}");
                    let reason = sample["reason"].as_str().unwrap();
                    assert!(reason.contains("needs a filesystem"), "{reason}");
                }
                (true, false) => {
                    assert_eq!(sample["status"], "ok", "{sample}");
                    let target = &sample["target"];
                    let device = target["device"]["path"].as_str().unwrap();
                    assert!(device.starts_with("/dev/loop"), "{target}");
                    assert_eq!(target["mountpoint"], device, "the workload got the device");
                    assert!(target["fsck"].is_null(), "nothing to check: {target}");
                    assert!(target["mount"].is_null(), "nothing mounted: {target}");
                    let r = &flat_results_of(sample)[0];
                    assert_eq!(r["ops"], 4096, "16m in 4k blocks, each once: {r}");
                }
                (false, _) => assert_eq!(sample["status"], "ok", "{sample}"),
            }
        }
    }
    let efficiency = doc["efficiency"].as_array().unwrap();
    assert!(!efficiency.is_empty(), "{doc}");
    for f in efficiency {
        assert_eq!(f["device"], "raw");
        let entries = f["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{f}");
        assert_eq!(entries[0]["label"], "ext4");
        assert_eq!(entries[0]["paired"], true);
        let e = entries[0]["efficiency"].as_f64().unwrap();
        let (lo, hi) = (
            entries[0]["ci95_low"].as_f64().unwrap(),
            entries[0]["ci95_high"].as_f64().unwrap(),
        );
        assert!(e > 0.0 && lo <= e && e <= hi, "{f}");
        // It is what it says: the geometric mean of ext4 / raw per round, of the figure the
        // samples stored; the device's mean is the mean of its rounds.
        let metric = f["metric"].as_str().unwrap();
        let per_round = |fs: &str| -> Vec<(u64, f64)> {
            run_cases(&doc)
                .iter()
                .filter(|c| c["config"]["filesystem"] == fs && c["workload"]["kind"] == "io")
                .flat_map(|c| c["samples"].as_array().unwrap())
                .map(|s| {
                    let r = &flat_results_of(s)[0];
                    (
                        s["repetition"].as_u64().unwrap(),
                        r[metric].as_f64().unwrap(),
                    )
                })
                .collect()
        };
        let (raw, ext4) = (per_round("raw"), per_round("ext4"));
        assert_eq!(raw.len(), 2);
        let logs: Vec<f64> = raw
            .iter()
            .map(|(round, device)| {
                let (_, value) = ext4.iter().find(|(r, _)| r == round).unwrap();
                (value / device).ln()
            })
            .collect();
        let expected = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        assert!((e / expected - 1.0).abs() < 1e-9, "{e} against {expected}");
        let device_mean = raw.iter().map(|(_, v)| v).sum::<f64>() / raw.len() as f64;
        assert!((f["device_mean"].as_f64().unwrap() / device_mean - 1.0).abs() < 1e-9);
    }
    let scores = doc["standings"]["scores"].as_array().unwrap();
    assert!(!scores.is_empty());
    assert!(
        scores.iter().all(|s| s["label"] != "raw"),
        "the baseline does not contend: {scores:?}"
    );
    let report = fsbench()
        .args(["report", "1", "--markdown", "-", "--db"])
        .arg(s.db())
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let markdown = stdout(&report);
    assert!(markdown.contains("## Efficiency"), "{markdown}");
    // Options on the bare device would go unused: refused.
    let bad = s.plan(
        "name = \"bad\"\n[[filesystems]]\nname = \"raw\"\nmount_options = { fast = \"noatime\" }\n[[workloads]]\nkind = \"sleep\"\n",
    );
    let output = s.run(&["--plan", bad.to_str().unwrap(), "--dry-run"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("the bare device has no filesystem to make or mount"),
        "{}",
        stderr(&output)
    );
}

/// A process a user started under another policy (here `chrt -i`, SCHED_IDLE) keeps it: the
/// run says so on stderr and in its results, rather than claiming the policy it asked for.
#[test]
fn a_policy_the_process_was_started_under_is_kept_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("io.json");
    let output = Command::new("chrt")
        .args(["-i", "0"])
        .arg(env!("CARGO_BIN_EXE_fsbench"))
        .args([
            "io",
            "--rw",
            "randread",
            "--size",
            "1m",
            "--no-store",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("ran under the CPU scheduling policy idle, not batch"),
        "{err}"
    );
    let r = &flat_results(&read_json(&json))[0];
    assert_eq!(r["cpu_sched"], "idle", "{r}");
}

/// Pages of `path` in the page cache (mincore over a mapping of the whole file).
fn cached_pages(path: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    let len = file.metadata().unwrap().len() as usize;
    // SAFETY: sysconf takes a constant and touches no memory.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let mut resident = vec![0u8; len.div_ceil(page)];
    // SAFETY: a read-only shared mapping of an open file, unmapped before returning; mincore
    // writes one byte per page into `resident`, which has one per page.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(map, libc::MAP_FAILED);
        assert_eq!(libc::mincore(map, len, resident.as_mut_ptr()), 0);
        libc::munmap(map, len);
    }
    resident.iter().filter(|&&b| b & 1 == 1).count()
}

/// A direct-I/O run starts with none of its file in the page cache, as fio's layout with
/// direct=1 leaves it: a cached block would make each direct write to it drop the page first,
/// which io_uring can only do in an io-wq worker. The layout goes through the cache; its pages
/// are dropped before the timed phase, and direct reads bring none back.
#[test]
fn a_direct_run_finds_none_of_its_file_cached() {
    if !root_or_skip("a_direct_run_finds_none_of_its_file_cached") {
        return;
    }
    let disk = LoopExt4::new();
    let output = fsbench()
        .args(["io", "--rw", "randread", "--direct", "--iodepth", "8"])
        .args([
            "--size",
            "16m",
            "--runtime",
            "200ms",
            "--keep",
            "--no-store",
        ])
        .arg("--dir")
        .arg(disk.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let files = entries(disk.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("fsbench-io"))
        .collect::<Vec<_>>();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(std::fs::metadata(&files[0]).unwrap().len(), 16 << 20);
    assert_eq!(
        cached_pages(&files[0]),
        0,
        "pages of the layout left cached"
    );
}

/// `--keep` leaves each thread's file in the directory, named on stderr (fio and the
/// benchmarks then work on the very file fsbench laid out); without it nothing stays.
#[test]
fn keep_leaves_the_files_named_and_nothing_stays_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |keep: bool| {
        let mut command = fsbench();
        command
            .args(["io", "--rw", "randread", "--size", "1m", "--threads", "2"])
            .args(["--no-store", "--quiet", "--dir"])
            .arg(dir.path());
        if keep {
            command.arg("--keep");
        }
        command.output().unwrap()
    };
    let output = run(false);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(entries(dir.path()).is_empty(), "left behind");
    let output = run(true);
    assert!(output.status.success(), "{}", stderr(&output));
    let kept = entries(dir.path());
    assert_eq!(kept.len(), 2, "one file per thread: {kept:?}");
    for file in kept {
        assert!(
            stderr(&output).contains(&file.display().to_string()),
            "{} is not named: {}",
            file.display(),
            stderr(&output)
        );
    }
}

/// Buffers are bounded for all threads together, not only per thread: 64 threads of 1 GiB in
/// flight each are refused before anything is allocated, naming the host's memory (before:
/// accepted on a 23 GiB host, until the OOM killer came).
#[test]
fn buffers_beyond_half_the_hosts_memory_are_refused() {
    let out = fsbench()
        .args([
            "io",
            "--dir",
            "/dev/shm",
            "--engine",
            "io_uring",
            "--no-store",
        ])
        .args([
            "--threads",
            "64",
            "--iodepth",
            "1024",
            "--bs",
            "1m",
            "--size",
            "1m",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("more than half of this host's memory")
            && stderr(&out).contains("lower threads, iodepth or bs"),
        "{}",
        stderr(&out)
    );
}

/// The bare device with several threads: the device is held open exclusively once for the
/// run and the threads share it, each on its region (before: every thread opened it O_EXCL,
/// the second got EBUSY, and every raw sample with `threads > 1` failed).
#[test]
fn the_bare_device_runs_with_several_threads() {
    if !root_or_skip("the_bare_device_runs_with_several_threads") {
        return;
    }
    let s = Scratch::new();
    let output = fsbench()
        .args([
            "io",
            "--fs",
            "raw",
            "--device",
            "image:64m",
            "--rw",
            "randwrite",
        ])
        .args([
            "--threads",
            "4",
            "--size",
            "4m",
            "--bs",
            "4k",
            "--direct",
            "--iodepth",
            "2",
        ])
        .args(["--quiet", "--work-dir"])
        .arg(s.path().join("work"))
        .arg("--db")
        .arg(s.db())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = s.export(1);
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok", "{sample}");
    // Every thread wrote each block of its 4 MiB region once: 4 x 1024 operations.
    let results = flat_results(&doc);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["threads"], 4, "{results:?}");
    assert_eq!(results[0]["ops"], 4 * 1024, "{results:?}");
}

/// The bare device behind the guard: a real device (here a loop device the test attached and
/// mounted) is refused while mounted, before anything is written to it, even with its name in
/// --destroy-data-on; the filesystem on it is intact.
#[test]
fn the_bare_device_refuses_a_device_that_is_mounted() {
    if !root_or_skip("the_bare_device_refuses_a_device_that_is_mounted") {
        return;
    }
    let disk = LoopExt4::new();
    std::fs::write(disk.path().join("precious"), b"keep me").unwrap();
    let output = fsbench()
        .args(["io", "--fs", "raw", "--rw", "randwrite", "--size", "1m"])
        .args(["--no-store", "--device", &disk.device])
        .args(["--destroy-data-on", &disk.device])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(!output.status.success(), "{err}");
    assert!(
        err.contains("is in use") && err.contains("mounted"),
        "the guard says why: {err}"
    );
    assert_eq!(
        std::fs::read(disk.path().join("precious")).unwrap(),
        b"keep me"
    );
}

/// Where the buffers sat is recorded: buffered I/O at one of the calibration's candidates
/// (chosen on this host), O_DIRECT page-aligned, for both engines.
#[test]
fn every_result_says_where_its_buffers_sat() {
    let dir = tempfile::tempdir().unwrap();
    for (engine, direct) in [("sync", false), ("io_uring", false), ("sync", true)] {
        let json = dir.path().join(format!("{engine}-{direct}.json"));
        let mut command = fsbench();
        command
            .args(["io", "--rw", "randrw", "--size", "1m", "--engine", engine])
            .args(["--no-store", "--quiet", "--dir"])
            .arg(dir.path())
            .arg("--json")
            .arg(&json);
        if direct {
            command.arg("--direct");
        }
        let out = command.output().unwrap();
        if direct && out.status.code() == Some(3) {
            continue; // a filesystem without O_DIRECT (tmpfs) says so; nothing to check
        }
        assert!(out.status.success(), "{}", stderr(&out));
        let results = flat_results(&read_json(&json));
        assert!(!results.is_empty());
        for r in results {
            let at = r["buffer_offset_bytes"]
                .as_u64()
                .unwrap_or_else(|| panic!("{r}"));
            if direct {
                assert_eq!(at, 0, "{r}");
            } else {
                assert!([0, 16, 64, 2048, 4000].contains(&at), "{engine}: {at}");
            }
        }
    }
}

/// `--verify` on a real filesystem and on the bare device: on ext4 (a loop device fsbench
/// makes; the filesystem remounted and each file read back after the phase) a random mix through
/// io_uring and direct random writes through the sync engine, and random overwrites of two
/// threads' regions of the bare device, end ok, their results say `verified` and their plans
/// `verify`; in a directory the kept files carry a header on every 4 KiB block — the magic,
/// the block's own offset, the thread's file — that anyone can check. What cannot be verified
/// is refused in flag terms.
#[test]
fn verified_io_reads_back_on_ext4_and_the_bare_device_and_the_files_carry_headers() {
    if !root_or_skip(
        "verified_io_reads_back_on_ext4_and_the_bare_device_and_the_files_carry_headers",
    ) {
        return;
    }
    let runs: [&[&str]; 3] = [
        &[
            "--fs",
            "ext4",
            "--rw",
            "randrw",
            "--iodepth",
            "8",
            "--threads",
            "2",
        ],
        &[
            "--fs",
            "ext4",
            "--rw",
            "randwrite",
            "--engine",
            "sync",
            "--direct",
        ],
        &[
            "--fs",
            "raw",
            "--device",
            "image:64m",
            "--rw",
            "randwrite",
            "--overwrite",
            "--direct",
            "--iodepth",
            "4",
            "--threads",
            "2",
        ],
    ];
    for args in runs {
        let output = fsbench()
            .arg("io")
            .args(args)
            .args(["--verify", "--size", "8m", "--quiet", "--no-store"])
            .args(["--json", "-"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let sample = first_sample(&doc);
        assert_eq!(sample["status"], "ok", "{args:?}: {sample}");
        assert_eq!(
            sample["config"]["plan"]["verify"], true,
            "{args:?}: {sample}"
        );
        let results = flat_results(&doc);
        assert!(!results.is_empty(), "{args:?}");
        for r in results {
            assert_eq!(r["verified"], true, "{args:?}: {r}");
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "io", "--verify", "--rw", "write", "--bs", "64k", "--size", "256k",
        ])
        .args(["--threads", "2", "--keep", "--quiet", "--no-store", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let mut kept = entries(dir.path());
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?}");
    for (t, file) in kept.iter().enumerate() {
        let content = std::fs::read(file).unwrap();
        assert_eq!(content.len(), 256 << 10);
        for (k, block) in content.chunks(4096).enumerate() {
            assert_eq!(&block[..4], b"fsbV", "thread {t} block {k}");
            assert_eq!(
                block[24..32],
                ((k * 4096) as u64).to_le_bytes(),
                "block {k}"
            );
            assert_eq!(block[32..36], (t as u32).to_le_bytes(), "thread {t}");
        }
    }

    for (args, said) in [
        (["--bs", "2k"], "--verify: verify checks whole 4 KiB blocks"),
        (
            ["--iodepth", "8"],
            "--verify: iodepth 8 is more than the 4 blocks",
        ),
    ] {
        let output = fsbench()
            .args(["io", "--verify", "--size", "16k", "--no-store", "--dir"])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(said), "{}", stderr(&output));
    }
}

/// Issue 39's verified data for io: after the timed phase the threads' files are closed and
/// the filesystem remounted with its caches dropped, so the read-back reads the device. A
/// block of the first thread's file zeroed on the image while it is unmounted (the debug
/// build's `FSBENCH_TEST_BETWEEN_MOUNTS`) ends the sample `corrupt` (exit 1), naming the file
/// and the block's byte offset; untouched, the same run is ok and says it read back after the
/// remount.
#[test]
fn io_verify_reads_back_after_a_remount_and_finds_a_block_changed_on_the_image() {
    if !root_or_skip("io_verify_reads_back_after_a_remount_and_finds_a_block_changed_on_the_image")
    {
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipping: FSBENCH_TEST_BETWEEN_MOUNTS is in debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |damage: bool| {
        let said = dir
            .path()
            .join(if damage { "damaged" } else { "untouched" });
        // Block 50 of the file: bytes 204800..208896.
        let hook = between_mounts(r"fsbench-io-[0-9]*-[0-9]*-0\.dat", &said, 50, damage);
        let output = fsbench()
            .env("FSBENCH_TEST_BETWEEN_MOUNTS", hook)
            .args([
                "io", "--fs", "ext4", "--verify", "--rw", "write", "--bs", "64k",
            ])
            .args(["--size", "4m", "--threads", "2", "--quiet", "--json", "-"])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
        let hook_said = std::fs::read_to_string(&said).unwrap_or_default();
        (doc, output, hook_said)
    };
    let (doc, output, hook_said) = run(false);
    let sample = first_sample(&doc);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(hook_said.lines().count(), 1, "one remount: {hook_said}");
    assert!(
        sample["warnings"]
            .to_string()
            .contains("read back once the cache was made cold (remounted"),
        "{sample}"
    );

    let (doc, output, hook_said) = run(true);
    let sample = first_sample(&doc);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(sample["status"], "corrupt", "{sample}");
    let (name, _at) = hook_said.trim().split_once(' ').expect("the hook ran");
    let reason = sample["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "/{name}: the block at byte 204800 is not what was written"
        )),
        "{reason}"
    );
    assert!(
        reason.contains("found no stamp (it begins 0000"),
        "{reason}"
    );
}
