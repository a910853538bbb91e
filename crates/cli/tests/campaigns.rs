//! `fsbench run`: real campaigns on loop devices (root; CI is root). A 2 filesystems x 2 mount
//! options x 2 repetitions plan stores exactly the expected samples with provenance; a rejected
//! mount option is stored as unsupported while the rest completes; a workload past its timeout is
//! stored as timeout and its target is torn down; Ctrl-C then --resume ends with the same samples
//! as an uninterrupted run; malformed plans fail precisely before anything is made.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// The run number `fsbench run` reports ("Run 3 ..." in the summary).
fn run_id(output: &Output) -> i64 {
    let text = format!("{}{}", stdout(output), stderr(output));
    text.split_whitespace()
        .skip_while(|w| *w != "Run" && *w != "run")
        .nth(1)
        .and_then(|w| w.trim_end_matches(':').parse().ok())
        .unwrap_or_else(|| panic!("no run id in:\n{text}"))
}

fn samples(doc: &Value) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for case in run_cases(doc) {
        for s in case["samples"].as_array().unwrap() {
            out.push((
                case["key"].as_str().unwrap().to_string(),
                s["repetition"].as_u64().unwrap(),
                s["status"].as_str().unwrap().to_string(),
            ));
        }
    }
    out.sort();
    out
}

const TWO_BY_TWO: &str = r#"
name = "two-by-two"
repetitions = 2
timeout = "5m"
schedulers = ["mq-deadline"]

[device]
image = "256m"

[[filesystems]]
name = "ext4"
mount_options = { default = "", noatime = "noatime" }

[[filesystems]]
name = "btrfs"
mount_options = { default = "", noatime = "noatime" }

[[workloads]]
kind = "matrix"
name = "small"
tests = ["write", "read"]
file_sizes = "256k"
record_sizes = "64k"
min_time = "2ms"
"#;

#[test]
fn a_two_by_two_by_two_campaign_stores_exactly_the_expected_samples() {
    if !root_or_skip("a_two_by_two_by_two_campaign_stores_exactly_the_expected_samples") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(TWO_BY_TWO);
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    // Throughput in a binary-prefixed unit chosen for its size (MiB/s, GiB/s).
    assert!(
        summary.contains("95 % confidence interval") && summary.contains("iB/s"),
        "{summary}"
    );
    // Columns are labelled by the axes that vary (and the filesystem), with their prefixes.
    assert!(
        summary.contains("ext4 mount=noatime") && summary.contains("btrfs mount=default"),
        "{summary}"
    );
    assert!(
        !summary.contains("sched="),
        "the scheduler does not vary: {summary}"
    );
    s.assert_clean();

    // The tidy CSV names every case axis, in the order of a case key.
    let csv = fsbench()
        .args(["export", &run_id(&output).to_string(), "--csv", "-", "--db"])
        .arg(s.db())
        .output()
        .unwrap();
    assert!(csv.status.success(), "{}", stderr(&csv));
    let csv = stdout(&csv);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("run_id,case_key,filesystem,mkfs_set,mount_set,scheduler,platform,age,cache,workload,repetition,status,reason,phase,operation,file_size_bytes,record_size_bytes,threads,client,step,engine,iodepth,sweep,metric,value,unit,direction,main")
    );
    assert!(
        lines.any(|l| l.contains(",ext4.default.noatime.mq-deadline.warm.small,ext4,default,noatime,mq-deadline,default,fresh,warm,small,")),
        "{csv}"
    );
    // Sizes are integer columns; one row per sample x result x measurement, unit and direction
    // with every value.
    let throughput: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",write,,262144,65536,,,,,,,throughput,"))
        .collect();
    assert_eq!(throughput.len(), 8, "{csv}");
    assert!(
        throughput.iter().all(|l| l.ends_with(",B/s,higher,true")),
        "{throughput:?}"
    );

    let doc = s.export(run_id(&output));
    assert_eq!(doc["schema"], "fsbench.run");
    assert_eq!(doc["schema_version"], 2);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "complete");
    assert!(!run["host"]["kernel_release"].as_str().unwrap().is_empty());
    assert!(run["plan_text"].as_str().unwrap().contains("two-by-two"));
    let mut expected = BTreeSet::new();
    for fs in ["ext4", "btrfs"] {
        for mount in ["default", "noatime"] {
            for rep in 1..=2 {
                expected.insert((
                    format!("{fs}.default.{mount}.mq-deadline.warm.small"),
                    rep,
                    "ok".to_string(),
                ));
            }
        }
    }
    let got: BTreeSet<_> = samples(&doc).into_iter().collect();
    assert_eq!(got, expected);

    let mut rep1_ids = Vec::new();
    let mut rep2_ids = Vec::new();
    for case in run_cases(&doc) {
        assert_eq!(case["axes"]["mount_set"], case["config"]["mount_set"]);
        assert_eq!(case["kind"], "matrix");
        for sample in case["samples"].as_array().unwrap() {
            let id = sample["id"].as_i64().unwrap();
            if sample["repetition"] == 1 {
                rep1_ids.push(id)
            } else {
                rep2_ids.push(id)
            }
            // Provenance of every sample: the target's read-back and the fsck verdict.
            let target = &sample["target"];
            assert!(!target["tool_versions"].as_array().unwrap().is_empty());
            assert_eq!(target["scheduler"]["in_force"], "mq-deadline");
            assert!(target["fsck"]["clean"].as_bool().unwrap());
            // 1 cell x 4 phases, each with its dimensions as typed fields.
            let results = sample["results"].as_array().unwrap();
            assert_eq!(results.len(), 4, "{sample}");
            for r in results {
                assert_eq!(r["file_size_bytes"], 262144, "{r}");
                assert_eq!(r["record_size_bytes"], 65536, "{r}");
                let measurements = r["measurements"].as_array().unwrap();
                assert!(measurements
                    .iter()
                    .all(|m| !m["unit"].as_str().unwrap().is_empty()));
                let main: Vec<&Value> = measurements.iter().filter(|m| m["main"] == true).collect();
                assert_eq!(main.len(), 1, "{r}");
                assert_eq!(main[0]["metric"], "throughput");
                assert_eq!(main[0]["unit"], "B/s");
                assert_eq!(main[0]["direction"], "higher");
            }
            assert!(sample["seed"].is_u64(), "{sample}");
        }
    }
    // The summary table of the main metric: a row per phase, a column per case, n = 2 each.
    let table = doc["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["metric"] == "throughput")
        .unwrap();
    assert_eq!(table["columns"].as_array().unwrap().len(), 4);
    assert_eq!(table["rows"].as_array().unwrap().len(), 4);
    let write = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["dims"]["phase"] == "write")
        .unwrap();
    assert!(write["cells"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["n"] == 2));
    assert_eq!(doc["problems"].as_array().unwrap().len(), 0);
    // Interleaved: every first repetition comes before any second one.
    assert!(
        rep1_ids.iter().max() < rep2_ids.iter().min(),
        "{rep1_ids:?} {rep2_ids:?}"
    );

    let runs = fsbench()
        .args(["runs", "--db"])
        .arg(s.db())
        .output()
        .unwrap();
    assert!(
        stdout(&runs).contains("two-by-two") && stdout(&runs).contains("8/8"),
        "{}",
        stdout(&runs)
    );
}

/// A small matrix on tmpfs with `drop_caches`: tmpfs keeps its files in memory, so the
/// matrix warns that its reads stayed warm; that warning and the seed are stored with the sample.
const TMPFS_MATRIX: &str = r#"
name = "typed"
repetitions = 1
[device]
image = "16m"
[[filesystems]]
name = "tmpfs"
[[workloads]]
kind = "matrix"
name = "tiny"
tests = ["write", "read"]
file_sizes = "64k"
record_sizes = "4k,16k"
min_time = "1ms"
drop_caches = true
"#;

#[test]
fn a_matrix_sample_stores_typed_dims_its_seed_and_its_warnings() {
    if !root_or_skip("a_matrix_sample_stores_typed_dims_its_seed_and_its_warnings") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(TMPFS_MATRIX);
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    s.assert_clean();
    let id = run_id(&output);

    // Plain SQL on the results database: the record size is a column of its own.
    let conn =
        rusqlite::Connection::open_with_flags(s.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut sizes: Vec<i64> = conn
        .prepare("SELECT record_size_bytes FROM results")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    sizes.sort_unstable();
    sizes.dedup();
    assert_eq!(sizes, [4096, 16384]);
    let (rows, kind): (i64, String) = conn
        .query_row(
            "SELECT COUNT(*), MIN(workload) FROM measurement_rows
             WHERE metric = 'throughput' AND main = 1 AND unit = 'B/s'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    // 2 cells x 4 phases (write, rewrite, read, reread).
    assert_eq!((rows, kind.as_str()), (8, "matrix"));
    drop(conn);

    let doc = s.export(id);
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok");
    assert!(sample["seed"].is_u64(), "{sample}");
    let warnings = sample["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("--drop-caches")),
        "{warnings:?}"
    );
    assert_eq!(sample["config"]["workload"]["name"], "tiny");
    let results = sample["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    assert!(results
        .iter()
        .all(|r| r["record_size_bytes"].is_u64() && r["file_size_bytes"] == 65536));
    assert!(results
        .iter()
        .all(|r| r["test"].is_null() && r["attributes"]["test"].is_string()));

    let csv = fsbench()
        .args(["export", &id.to_string(), "--csv", "-", "--db"])
        .arg(s.db())
        .output()
        .unwrap();
    assert!(csv.status.success(), "{}", stderr(&csv));
    let csv = stdout(&csv);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (record, metric) = (column("record_size_bytes"), column("metric"));
    let mut records: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[metric] == "throughput")
        .map(|f| f[record].parse().expect("an integer record size"))
        .collect();
    assert_eq!(records.len(), 8, "{csv}");
    records.sort_unstable();
    records.dedup();
    assert_eq!(records, [4096, 16384]);
}

#[test]
fn a_rejected_mount_option_is_stored_as_unsupported_and_the_rest_completes() {
    if !root_or_skip("a_rejected_mount_option_is_stored_as_unsupported_and_the_rest_completes") {
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
mount_options = { default = "", bogus = "fsbench_no_such_option" }
[[workloads]]
kind = "sleep"
duration = "10ms"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("unsupported ×2"),
        "{}",
        stdout(&output)
    );
    s.assert_clean();
    let doc = s.export(run_id(&output));
    let got = samples(&doc);
    assert_eq!(
        got,
        [
            (
                "ext4.default.bogus.default.warm.sleep".to_string(),
                1,
                "unsupported".to_string()
            ),
            (
                "ext4.default.bogus.default.warm.sleep".to_string(),
                2,
                "unsupported".to_string()
            ),
            (
                "ext4.default.default.default.warm.sleep".to_string(),
                1,
                "ok".to_string()
            ),
            (
                "ext4.default.default.default.warm.sleep".to_string(),
                2,
                "ok".to_string()
            ),
        ]
    );
    let cases = run_cases(&doc);
    let reason = cases[0]["samples"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string()
        + cases[1]["samples"][0]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("fsbench_no_such_option"), "{reason}");
    // The sleep samples that ran: one result without dimensions, its main figure in ns.
    let slept = cases
        .iter()
        .flat_map(|c| c["samples"].as_array().unwrap())
        .filter(|s| s["status"] == "ok")
        .map(|s| &s["results"][0]["measurements"][0])
        .collect::<Vec<_>>();
    assert_eq!(slept.len(), 2);
    assert!(slept
        .iter()
        .all(|m| m["metric"] == "slept" && m["unit"] == "ns" && m["main"] == true));
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        (&problems[0]["status"], &problems[0]["count"]),
        (&Value::from("unsupported"), &Value::from(2))
    );
}

#[test]
fn a_workload_past_its_timeout_is_stored_as_timeout_and_torn_down() {
    if !root_or_skip("a_workload_past_its_timeout_is_stored_as_timeout_and_torn_down") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "hang"
repetitions = 1
timeout = "1s"
[device]
image = "64m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "sleep"
duration = "1h"
"#,
    );
    let started = Instant::now();
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(started.elapsed() < Duration::from_secs(60));
    // A timed-out sample is a failure of the campaign (README "Exit codes"), results stored.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    s.assert_clean();
    let doc = s.export(run_id(&output));
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "timeout");
    assert!(
        sample["reason"].as_str().unwrap().contains("timeout"),
        "{sample}"
    );
}

const RESUMABLE: &str = r#"
name = "resumable"
repetitions = 2
[device]
image = "64m"
[[filesystems]]
name = "ext4"
mount_options = { default = "", noatime = "noatime" }
[[workloads]]
kind = "sleep"
duration = "700ms"
"#;

/// Waits (up to a minute) until a sample of the scratch's campaign is stored.
fn wait_for_a_stored_sample(s: &Scratch) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = fsbench()
            .args(["runs", "--db"])
            .arg(s.db())
            .output()
            .unwrap();
        let stored = stdout(&runs).split_whitespace().any(|w| {
            w.split_once('/')
                .is_some_and(|(ok, _)| ok.parse::<u32>().is_ok_and(|n| n >= 1))
        });
        if stored {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no sample was ever stored: {} {}",
            stdout(&runs),
            stderr(&runs)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `--repetitions N` runs every case N times instead of the plan's; the run keeps it, so
/// `--resume` after Ctrl-C completes N per case; a count out of range is refused.
#[test]
fn the_command_line_sets_the_repetitions_and_resume_keeps_them() {
    if !root_or_skip("the_command_line_sets_the_repetitions_and_resume_keeps_them") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(RESUMABLE);
    let path = plan.to_str().unwrap();
    let bad = s.run(&["--plan", path, "--repetitions", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("--repetitions: must be between 1 and 1000"),
        "{}",
        stderr(&bad)
    );
    let child = s.spawn(&["--plan", path, "--repetitions", "3"]);
    wait_for_a_stored_sample(&s);
    // SAFETY: signalling the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(interrupted.status.code(), Some(130));
    let id = run_id(&interrupted);
    let resumed = s.run(&["--resume", &id.to_string()]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    s.assert_clean();
    let doc = s.export(id);
    assert_eq!(
        doc["runs"][0]["overrides"]["repetitions"], 3,
        "{}",
        doc["runs"][0]
    );
    let done = samples(&doc);
    assert_eq!(done.len(), 2 * 3, "two cases, three rounds each: {done:?}");
    assert!(done.iter().all(|(_, _, status)| status == "ok"), "{done:?}");
}

#[test]
fn ctrl_c_then_resume_ends_with_the_samples_of_an_uninterrupted_run() {
    if !root_or_skip("ctrl_c_then_resume_ends_with_the_samples_of_an_uninterrupted_run") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(RESUMABLE);
    let child = s.spawn(&["--plan", plan.to_str().unwrap()]);
    // Interrupt once the first sample is stored (the second is then running).
    wait_for_a_stored_sample(&s);
    // SAFETY: signalling the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(
        interrupted.status.code(),
        Some(130),
        "{}",
        stderr(&interrupted)
    );
    assert!(
        stderr(&interrupted).contains("--resume"),
        "{}",
        stderr(&interrupted)
    );
    s.assert_clean();
    let id = run_id(&interrupted);
    let partial = samples(&s.export(id));
    assert!(!partial.is_empty() && partial.len() < 4, "{partial:?}");

    let resumed = s.run(&["--resume", &id.to_string()]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    s.assert_clean();
    let after = s.export(id);
    assert_eq!(after["runs"][0]["status"], "complete");

    let fresh = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(fresh.status.success(), "{}", stderr(&fresh));
    assert_eq!(samples(&after), samples(&s.export(run_id(&fresh))));
}

#[test]
fn adaptive_repetitions_stop_when_stable_and_go_on_when_not() {
    if !root_or_skip("adaptive_repetitions_stop_when_stable_and_go_on_when_not") {
        return;
    }
    let s = Scratch::new();
    // A 200 ms sleep varies by well under 90 % (three samples: t = 4.30, so their standard
    // deviation may be up to about 36 % of the mean, room for a late wakeup on a machine
    // loaded by the other tests; two would need them within 7 %) but far more than 0.0001 %.
    let plan = |target: &str| {
        format!(
            "name = \"adaptive\"\nrepetitions = 3\nmax_repetitions = 5\ntarget_ci_percent = {target}\n\
             [device]\nimage = \"64m\"\n[[filesystems]]\nname = \"tmpfs\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"200ms\"\n"
        )
    };
    let loose = s.plan(&plan("90.0"));
    let output = s.run(&["--plan", loose.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        samples(&s.export(run_id(&output))).len(),
        3,
        "stable after the minimum"
    );
    let strict = s.plan(&plan("0.0001"));
    let output = s.run(&["--plan", strict.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        samples(&s.export(run_id(&output))).len(),
        5,
        "repeated up to the maximum"
    );
}

#[test]
fn a_killed_campaign_takes_its_workload_along_and_its_guard_the_rest() {
    if !root_or_skip("a_killed_campaign_takes_its_workload_along_and_its_guard_the_rest") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        "name = \"killed\"\nrepetitions = 1\n[device]\nimage = \"64m\"\n[[filesystems]]\nname = \"ext4\"\n\
         [[workloads]]\nkind = \"sleep\"\nduration = \"1h\"\n",
    );
    let mut child = s.spawn(&["--plan", plan.to_str().unwrap()]);
    let work = s.work().to_string_lossy().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .contains(&work)
    {
        assert!(Instant::now() < deadline, "never mounted");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    // Its standard error ends when the guard (which shares it) has finished.
    let said = stderr(&child.wait_with_output().unwrap());
    // The workload process follows its parent within moments, so the mount is not busy.
    let worker_gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        !std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read_to_string(e.path().join("cmdline"))
                .is_ok_and(|c| c.contains("case-worker") && c.contains(&work))
        })
    });
    assert!(worker_gone, "the workload process outlived its campaign");
    // The campaign's guard undid its target, the mount not busy (not lazily), and left
    // `fsbench cleanup` nothing to do.
    assert!(
        said.contains("was killed; unmounted") && !said.contains("lazily"),
        "{said}"
    );
    let out = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(s.work())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("nothing to clean up"),
        "{}",
        stdout(&out)
    );
    s.assert_clean();
}

#[test]
fn malformed_plans_fail_precisely_before_anything_is_made() {
    let s = Scratch::new();
    let cases: &[(&str, &str)] = &[
        ("name = \"x\"\n[[filesystems]\n", "plan.toml:2:"),
        ("name = \"x\"\nflavour = \"mild\"\n", "plan.toml:2:1: unknown field `flavour`"),
        (
            "name = \"x\"\n[[filesystems]]\nname = \"ntfs\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n",
            "plan.toml:3:8: filesystems.name: unknown filesystem 'ntfs'",
        ),
        (
            "name = \"x\"\n[device]\nimage = \"12q\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n",
            "plan.toml:3:9: device.image: '12q' is not a size",
        ),
    ];
    for (text, needle) in cases {
        let plan = s.plan(text);
        let output = s.run(&["--plan", plan.to_str().unwrap()]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "'{needle}' not in {err}");
        assert!(!s.db().exists(), "the database was created for a bad plan");
        assert!(
            !s.work().exists(),
            "the work directory was created for a bad plan"
        );
    }
}

#[test]
fn dry_run_lists_cases_with_stable_ids_and_an_estimate() {
    let s = Scratch::new();
    let plan = s.plan(TWO_BY_TWO);
    let output = s.run(&["--plan", plan.to_str().unwrap(), "--dry-run"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("4 cases x 2 repetitions = 8 samples, estimated"),
        "{text}"
    );
    assert!(
        text.contains("btrfs.default.noatime.mq-deadline.warm.small"),
        "{text}"
    );
    let again = s.run(&["--plan", plan.to_str().unwrap(), "--dry-run"]);
    let ids = |t: &str| {
        t.lines()
            .skip(2)
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&text), ids(&stdout(&again)));
    assert!(!s.db().exists());

    let quick = s.run(&["--dry-run"]);
    assert!(quick.status.success(), "{}", stderr(&quick));
    let text = stdout(&quick);
    assert!(text.starts_with("Plan \"quick\""), "{text}");
    assert!(
        text.contains("ext4.default.default.default.warm.stream"),
        "{text}"
    );
}

/// `--dry-run` says what each workload will do — every setting (threads, counts, sizes,
/// durations) and what they resolve to at the plan's scale — once per workload, and every line
/// of every built-in profile's dry run fits 120 columns.
#[test]
fn dry_run_says_what_each_workload_does_within_120_columns() {
    for profile in fsbench_plan::profiles::ALL {
        let output = fsbench()
            .args([
                "run",
                "--dry-run",
                "--scale",
                "0.05",
                "--profile",
                profile.name,
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{}: {line}", profile.name);
        }
        if profile.name != "quick" {
            continue;
        }
        // A workload's line and the more indented ones after it, as one.
        let workload = |name: &str| {
            let lines: Vec<&str> = text.lines().collect();
            let at = lines
                .iter()
                .position(|l| l.starts_with(&format!("  {name} (")))
                .unwrap_or_else(|| panic!("{name}: {text}"));
            let more = lines[at + 1..]
                .iter()
                .take_while(|l| l.starts_with("    "))
                .copied();
            std::iter::once(lines[at])
                .chain(more)
                .flat_map(str::split_whitespace)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let files = workload("files");
        for setting in ["count=2000", "threads=1", "ops=create,stat,readdir,unlink"] {
            assert!(files.contains(setting), "{setting}: {files}");
        }
        assert!(
            workload("fsync").contains("fsync_file=true create_size=4k")
                || workload("fsync").contains("create_size=4k"),
            "{text}"
        );
        let clients = workload("clients");
        assert!(clients.contains("clients=4 duration=3s"), "{clients}");
        // The matrix's sizes at scale 0.05, and the task's generated tree.
        assert!(
            workload("stream").contains(" file_sizes_bytes=16m"),
            "{text}"
        );
        assert!(workload("untar").contains("files=196"), "{text}");
        assert_eq!(
            text.matches("\n  files (metadata, ").count(),
            1,
            "once each: {text}"
        );
        assert!(
            text.contains("at scale 0.05, sizes, counts, times shrink"),
            "{text}"
        );
    }
}

#[test]
fn example_plans_parse() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/plans");
    let mut seen = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        let output = fsbench()
            .args(["run", "--dry-run", "--plan"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            path.display(),
            stderr(&output)
        );
        seen += 1;
    }
    assert!(seen >= 2);
}

/// `fsbench run --dir`: the plan's workloads run in an existing directory, no filesystem is
/// made (nothing is mounted or attached), every configuration is the directory's filesystem
/// (a plan may then list none), the stored plan keeps the directory, and the samples leave
/// nothing in it.
#[test]
fn a_campaign_in_a_directory_runs_each_workload_there_and_makes_no_filesystem() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("there");
    std::fs::create_dir(&dir).unwrap();
    let plan = scratch.plan(
        r#"
name = "in-a-directory"
repetitions = 2

[[workloads]]
kind = "metadata"
name = "files"
count = 20
threads = 1
ops = ["create", "stat", "unlink"]

[[workloads]]
kind = "matrix"
name = "stream"
tests = ["write", "read"]
file_sizes = "256k"
record_sizes = "64k"
min_time = "2ms"
"#,
    );
    let out = scratch.run(&[
        "--plan",
        plan.to_str().unwrap(),
        "--quiet",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = scratch.export(1);
    let fs = fsbench_mount_type(&dir);
    assert_eq!(
        samples(&doc),
        [
            (
                format!("{fs}.existing.existing.default.warm.files"),
                1,
                "ok".into()
            ),
            (
                format!("{fs}.existing.existing.default.warm.files"),
                2,
                "ok".into()
            ),
            (
                format!("{fs}.existing.existing.default.warm.stream"),
                1,
                "ok".into()
            ),
            (
                format!("{fs}.existing.existing.default.warm.stream"),
                2,
                "ok".into()
            ),
        ]
    );
    assert!(
        doc["runs"][0]["overrides"]["dir"]
            .as_str()
            .is_some_and(|d| Path::new(d) == dir),
        "the run keeps the directory it ran in: {}",
        doc["runs"][0]["overrides"]
    );
    let sample = &run_cases(&doc)[0]["samples"][0];
    assert!(sample["target"].is_null(), "no target: {sample}");
    let create = flat_results_of(sample)
        .into_iter()
        .find(|r| r["operation"] == "create")
        .unwrap();
    assert_eq!(create["ops"], 20);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "the workloads leave nothing in the directory"
    );
    scratch.assert_nothing_mounted();
    // Each sample's own directory (and, as root, its cgroup) was on record in the work
    // directory while it ran; nothing stays on record.
    let records = entries(&scratch.work().join("state"));
    assert!(records.is_empty(), "state files left: {records:?}");
    // The stored plan resumes there; with another filesystem mounted there it is refused.
    let out = scratch.run(&["--resume", "1", "--quiet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    if root_or_skip("a_campaign_in_a_directory: resume on another filesystem") {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "fsbench-test"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(mounted.success());
        let out = scratch.run(&["--resume", "1"]);
        let _ = std::process::Command::new("umount").arg(&dir).status();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("on another filesystem"),
            "{}",
            stderr(&out)
        );
    }
    // A directory that is not there is refused before anything is stored.
    let out = scratch.run(&[
        "--plan",
        plan.to_str().unwrap(),
        "--dir",
        "/nonexistent-dir",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not an existing directory"),
        "{}",
        stderr(&out)
    );
}

/// The filesystem type a directory is on, as /proc/self/mountinfo says.
fn fsbench_mount_type(dir: &Path) -> String {
    let out = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .unwrap();
    let t = stdout(&out).trim().to_string();
    // stat names ext2/3/4 "ext2/ext3"; the mount table has the real name.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let point = fields[4];
        let sep = fields.iter().position(|f| *f == "-").unwrap();
        if dir.starts_with(point) && best.as_ref().is_none_or(|(n, _)| point.len() > *n) {
            best = Some((point.len(), fields[sep + 1].to_string()));
        }
    }
    best.map(|(_, t)| t).unwrap_or(t)
}
