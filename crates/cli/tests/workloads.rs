//! Every workload command is a one-case run: stored like a campaign's sample, listed by
//! `fsbench runs`, exported alike; and every workload runs from a plan as well.
//!
//! - pipeline: `--json` is what `fsbench export RUN --json` writes; `--no-store` stores nothing
//! - the workloads of the registry from the command line (matrix, metadata, sleep)
//! - metadata: what it reports it did, from the command line and from a campaign

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The run id a one-case command names on stderr ("stored as run 7 in ...").
fn stored_run(output: &std::process::Output) -> i64 {
    let err = stderr(output);
    let at = err.find("stored as run ").expect(&err) + "stored as run ".len();
    err[at..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{err}"))
}

#[test]
fn a_matrix_on_a_directory_is_stored_listed_and_exported_like_a_campaign() {
    let s = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let json = s.path().join("m.json");
    let output = fsbench()
        .args([
            "matrix",
            "-i",
            "0,1",
            "--file-sizes",
            "64k",
            "--record-sizes",
            "16k,64k",
        ])
        .args(["--min-time", "0", "--db"])
        .arg(s.db())
        .arg("--json")
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = stored_run(&output);
    assert!(s.runs().contains("matrix"), "{}", s.runs());
    let exported = s.export(run);
    assert_eq!(read_json(&json), exported, "--json is the run's export");
    let case = &run_cases(&exported)[0];
    assert_eq!(case["axes"]["mkfs_set"], "existing");
    let results = flat_results(&exported);
    assert_eq!(results.len(), 2 * 2 * 2, "2 cells x 4 phases... of 2 tests");
    assert!(results.iter().all(|r| r["record_size_bytes"].is_u64()));
    // The record size is a column: one stored row per result with it.
    let conn = rusqlite::Connection::open(s.db()).unwrap();
    let records: Vec<i64> = conn
        .prepare("SELECT DISTINCT record_size_bytes FROM results ORDER BY 1")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(records, [16 << 10, 64 << 10]);
    assert!(entries(dir.path()).is_empty());
    // It is not a campaign: --resume says what to do instead.
    let resume = s.run(&["--resume", &run.to_string()]);
    assert_eq!(resume.status.code(), Some(2), "{}", stderr(&resume));
    assert!(
        stderr(&resume).contains("one-case run of `fsbench matrix`"),
        "{}",
        stderr(&resume)
    );
}

#[test]
fn no_store_leaves_no_database_and_still_exports() {
    let s = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "sleep",
            "--duration",
            "20ms",
            "--no-store",
            "--json",
            "-",
            "--dir",
        ])
        .arg(dir.path())
        .env("FSBENCH_DB", s.db())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok");
    assert_eq!(sample["results"][0]["measurements"][0]["metric"], "slept");
    assert!(!s.db().exists(), "--no-store stored");
    assert!(
        !stderr(&output).contains("stored as run"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_metadata_loops_run_from_the_command_line_and_report_what_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let s = Scratch::new();
    let output = fsbench()
        .args([
            "metadata", "-n", "40", "-t", "2", "--dirs", "4", "--json", "-", "--db",
        ])
        .arg(s.db())
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = flat_results(&doc);
    let ops: Vec<&str> = results
        .iter()
        .map(|r| r["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        [
            "mkdir", "create", "append", "read", "write", "stat", "rename", "readdir", "unlink",
            "rmdir"
        ]
    );
    for r in &results {
        assert_eq!(r["threads"], 2);
        // Stored with every result: how the files were named (fs_mark's names by default).
        assert_eq!(r["names"], "random", "{r}");
        assert_eq!(r["latency_count"], r["ops"], "{r}");
        if r["operation"] != "readdir" {
            assert_eq!(r["ops"], 80, "{r}");
        }
    }
    assert!(entries(dir.path()).is_empty(), "left behind");
    // Bad settings are refused in flag terms, before anything runs.
    let bad = fsbench()
        .args(["metadata", "--ops", "mkdir,chmod", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("unknown operation 'chmod'"),
        "{}",
        stderr(&bad)
    );
    let bad = fsbench()
        .args(["metadata", "--count", "0", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(stderr(&bad).trim(), "error: --count: must be at least 1");
    let bad = fsbench()
        .args(["metadata", "--names", "40:0", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).starts_with("error: --names: 40:0 has 0 random characters"),
        "{}",
        stderr(&bad)
    );
}

/// Study 003's loops as shell loops (`--method tool`): each iteration starts exactly one
/// process, its command (echo, the shell's own, none). Counted by shims on PATH that log
/// their name and exec the real command: one fork per iteration still, and the log says which.
#[test]
fn the_shell_loops_start_one_process_per_iteration() {
    let dir = tempfile::tempdir().unwrap();
    let shims = tempfile::tempdir().unwrap();
    let log = shims.path().join("log");
    let commands = [
        "mkdir", "touch", "echo", "cat", "dd", "stat", "mv", "ls", "rm", "rmdir",
    ];
    let path = std::env::var("PATH").unwrap();
    for command in commands {
        let real = std::env::split_paths(&path)
            .map(|d| d.join(command))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{command} is not on PATH"));
        let shim = shims.path().join(command);
        std::fs::write(
            &shim,
            format!(
                "#!/bin/sh\necho {command} >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (count, threads) = (25, 2);
    let output = fsbench()
        .env("PATH", format!("{}:{path}", shims.path().display()))
        .args(["metadata", "--method", "tool", "--no-store", "--json", "-"])
        .args([
            "-n",
            &count.to_string(),
            "-t",
            &threads.to_string(),
            "--dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let results = flat_results(&serde_json::from_slice(&output.stdout).unwrap());
    let logged = std::fs::read_to_string(&log).unwrap();
    let started = |command: &str| logged.lines().filter(|l| *l == command).count();
    for (op, command) in [
        ("mkdir", "mkdir"),
        ("create", "touch"),
        ("append", "echo"),
        ("read", "cat"),
        ("write", "dd"),
        ("stat", "stat"),
        ("rename", "mv"),
        ("readdir", "ls"),
        ("unlink", "rm"),
        ("rmdir", "rmdir"),
    ] {
        let r = results.iter().find(|r| r["operation"] == op).unwrap();
        let iterations = r["ops"].as_u64().unwrap() as usize;
        let per = r["processes_per_iteration"].as_u64().unwrap() as usize;
        assert_eq!(started(command), per * iterations, "{op}: {r}");
        let expected = if op == "readdir" {
            threads
        } else {
            count * threads
        };
        assert_eq!(iterations, expected, "{op}");
        assert_eq!(per, usize::from(op != "append"), "{op}");
    }
    // Eight commands a file or directory each, and one listing per thread, and nothing else.
    assert_eq!(logged.lines().count(), 8 * count * threads + threads);
    assert!(entries(dir.path()).is_empty(), "left behind");
}

#[test]
fn the_metadata_loops_run_in_a_campaign_on_a_prepared_filesystem() {
    if !root_or_skip("the_metadata_loops_run_in_a_campaign_on_a_prepared_filesystem") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "meta"
repetitions = 2
[device]
image = "64m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "metadata"
name = "small"
count = 100
threads = 2
ops = ["create", "stat", "unlink"]
fsync_dir = true
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    s.assert_clean();
    let doc = s.export(1);
    let case = &run_cases(&doc)[0];
    assert_eq!(case["key"], "ext4.default.default.default.warm.small");
    for sample in case["samples"].as_array().unwrap() {
        assert_eq!(sample["status"], "ok");
        let ops: Vec<&str> = sample["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["operation"].as_str().unwrap())
            .collect();
        assert_eq!(ops, ["create", "stat", "unlink"]);
    }
    // The summary table has a row per operation, in ops/s.
    let table = doc["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["metric"] == "ops_rate")
        .expect("an ops_rate table");
    assert_eq!(table["rows"].as_array().unwrap().len(), 3, "{table}");
}

#[test]
fn seed_002s_mix_runs_shortened_from_a_plan_and_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "mix",
            "--threads",
            "3",
            "--duration",
            "200ms",
            "--num-files",
            "30",
        ])
        .args(["--stat-weight", "1", "--no-store", "--json", "-", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = flat_results(&doc);
    let labels: Vec<&str> = results
        .iter()
        .map(|r| r["operation"].as_str().unwrap_or("(all)"))
        .collect();
    assert_eq!(
        labels,
        ["fileset", "(all)", "create", "write", "readall", "stat"]
    );
    assert_eq!(results[0]["ops"], 30, "the fileset");
    assert!(results[1]["tps"].as_f64().unwrap() > 0.0);
    assert!(entries(dir.path()).is_empty(), "left behind");
    if !root_or_skip("seed_002s_mix_runs_shortened_from_a_plan") {
        return;
    }
    // Seed 002's profile as written but for its length and fileset (1,800 s and 5,000 files
    // would fill a test image; on a cached ext4 its creates write about 2 GB/s): 0.1 s on
    // 256 files.
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "ffsb-002"
repetitions = 1
[device]
image = "2g"
[[filesystems]]
name = "ext4"
mkfs_options = { i256 = "-I 256" }
mount_options = { writeback = "data=writeback" }
[[workloads]]
kind = "mix"
threads = 128
duration = "100ms"
num_files = 256
num_dirs = 1000
min_filesize = "4k"
max_filesize = "512k"
write_size = "4k"
write_blocksize = "4k"
read_blocksize = "4k"
create_weight = 1
write_weight = 1
readall_weight = 2
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
    let doc = s.export(1);
    let sample = first_sample(&doc);
    assert!(output.status.success(), "{}", sample["reason"]);
    s.assert_clean();
    assert_eq!(sample["status"], "ok", "{sample}");
    let overall = flat_results(&doc)
        .into_iter()
        .find(|r| r.get("operation").is_none())
        .unwrap();
    assert_eq!(overall["threads"], 128);
    assert!(overall["tps"].as_f64().unwrap() > 0.0, "{overall}");
    assert!(sample["target"]["fsck"]["clean"].as_bool().unwrap());
}

#[test]
fn a_sweep_runs_from_the_command_line_and_in_a_campaign_and_its_curve_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "metadata",
            "--ops",
            "create",
            "-n",
            "200",
            "--sweep",
            "threads=1,2",
        ])
        .args(["--no-store", "--json", "-", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let points: Vec<(Value, Value)> = flat_results(&doc)
        .iter()
        .map(|r| (r["sweep"]["value"].clone(), r["threads"].clone()))
        .collect();
    assert_eq!(points, [(1.0.into(), 1.into()), (2.0.into(), 2.into())]);
    let bad = fsbench()
        .args(["metadata", "--sweep", "threads=1,0", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--sweep: threads=0: threads: must be at least 1"),
        "{}",
        stderr(&bad)
    );
    if !root_or_skip("a_sweep_runs_in_a_campaign") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "sweep"
repetitions = 1
[device]
image = "64m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "metadata"
ops = ["create"]
count = 100
sweep = "threads=1,4"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let conn = rusqlite::Connection::open(s.db()).unwrap();
    let curve: Vec<(String, f64, i64)> = conn
        .prepare("SELECT sweep_parameter, sweep_value, threads FROM results ORDER BY sweep_value")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        curve,
        [
            ("threads".to_string(), 1.0, 1),
            ("threads".to_string(), 4.0, 4)
        ]
    );
    // A sweep that names no setting is a plan error at its key.
    let bad = s.plan("name = \"x\"\n[[filesystems]]\nname = \"tmpfs\"\n[[workloads]]\nkind = \"sleep\"\nsweep = \"threads=1,2\"\n");
    let output = s.run(&["--plan", bad.to_str().unwrap(), "--dry-run"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "plan.toml:6:9: workloads.sweep: the sleep workload has no setting 'threads'"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_refused_run_neither_empties_nor_leaves_its_export_files() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("keep.json");
    std::fs::write(&kept, "precious").unwrap();
    let new = dir.path().join("new.csv");
    let output = fsbench()
        .args(["metadata", "--dir", "/nonexistent", "--no-store", "--json"])
        .arg(&kept)
        .arg("--csv")
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "precious");
    assert!(!new.exists(), "a refused run left {}", new.display());
    // A run that measures replaces the old content.
    let output = fsbench()
        .args([
            "sleep",
            "--duration",
            "1ms",
            "--no-store",
            "--quiet",
            "--json",
        ])
        .arg(&kept)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(read_json(&kept)["schema"], "fsbench.run");
}

#[test]
fn client_loads_replay_debians_client_txt_operation_for_operation() {
    let dir = tempfile::tempdir().unwrap();
    // A bad loadfile line is refused with its number, before anything runs.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "Close 1 NT_STATUS_OK\nReadX 1 NT_STATUS_OK\n").unwrap();
    let output = fsbench()
        .args(["clients", "--no-store", "--loadfile"])
        .arg(&bad)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("bad.txt:2: ReadX needs 4 arguments"),
        "{}",
        stderr(&output)
    );
    let client_txt = std::path::Path::new("/usr/share/dbench/client.txt");
    assert!(
        client_txt.exists() || !is_root(),
        "scripts/install-deps.sh installs dbench for its client.txt"
    );
    if !client_txt.exists() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "clients",
            "--clients",
            "2",
            "--duration",
            "2s",
            "--warmup",
            "0",
        ])
        .args(["--no-store", "--json", "-", "--loadfile", "dbench", "--dir"])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = flat_results(&doc);
    // Every operation of the file, and only those, as often as the file has it: without a
    // warm-up a client's lines are whole loops of the file and then a part of one, so each
    // kind's count is that many loops of its count in the file plus its count in the part.
    let file: Vec<String> = std::fs::read_to_string(client_txt)
        .unwrap()
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let kind = |line: &str| line.split_whitespace().next().unwrap().to_string();
    let count = |lines: &[String]| {
        let mut counts = std::collections::BTreeMap::<String, u64>::new();
        for l in lines {
            *counts.entry(kind(l)).or_default() += 1;
        }
        counts
    };
    let whole = count(&file);
    let mut expected = std::collections::BTreeMap::<String, u64>::new();
    for client in results.iter().filter(|r| r.get("client").is_some()) {
        let lines = client["lines"].as_u64().unwrap() as usize;
        let loops = client["loops"].as_u64().unwrap() as usize;
        assert_eq!(loops, lines / file.len(), "{client}");
        for (op, n) in &whole {
            *expected.entry(op.clone()).or_default() += loops as u64 * n;
        }
        for (op, n) in count(&file[..lines % file.len()]) {
            *expected.entry(op).or_default() += n;
        }
    }
    let got: std::collections::BTreeMap<String, u64> = results
        .iter()
        .filter(|r| r.get("operation").is_some())
        .map(|r| {
            (
                r["operation"].as_str().unwrap().to_string(),
                r["ops"].as_u64().unwrap(),
            )
        })
        .collect();
    expected.retain(|_, n| *n > 0);
    assert_eq!(got, expected, "per operation: replayed, and as in the file");
    assert!(got.values().sum::<u64>() > 1000, "{got:?}");
    let overall = results
        .iter()
        .find(|r| r.get("operation").is_none() && r.get("client").is_none())
        .unwrap();
    assert!(overall["throughput"].as_f64().unwrap() > 0.0);
    assert_eq!(overall["loadfile"], client_txt.to_str().unwrap());
    assert!(entries(work.path()).is_empty(), "left behind");
}

/// dbench itself (method tool) on Debian's client.txt: it runs fsbench's copy of the 458,344
/// lines (held in memory, never on the filesystem measured), and its figures name the file.
#[test]
fn client_txt_runs_with_dbench_itself() {
    let client_txt = std::path::Path::new("/usr/share/dbench/client.txt");
    assert!(
        client_txt.exists() || !is_root(),
        "scripts/install-deps.sh installs dbench for its client.txt"
    );
    if !client_txt.exists() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "clients",
            "--method",
            "tool",
            "--clients",
            "2",
            "--duration",
            "2s",
        ])
        .args([
            "--warmup",
            "0",
            "--no-store",
            "--json",
            "-",
            "--loadfile",
            "dbench",
        ])
        .arg("--dir")
        .arg(work.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = flat_results(&doc);
    let overall = results
        .iter()
        .find(|r| r.get("operation").is_none())
        .unwrap();
    assert_eq!(overall["method"], "tool");
    assert_eq!(overall["loadfile"], client_txt.to_str().unwrap());
    assert!(overall["throughput"].as_f64().unwrap() > 0.0, "{overall}");
    assert!(overall["ops"].as_f64().unwrap() > 1000.0, "{overall}");
    let ops: Vec<&str> = results
        .iter()
        .filter_map(|r| r.get("operation").and_then(|o| o.as_str()))
        .collect();
    for op in [
        "NTCreateX",
        "ReadX",
        "WriteX",
        "QUERY_PATH_INFORMATION",
        "FIND_FIRST",
    ] {
        assert!(ops.contains(&op), "{op} not in {ops:?}");
    }
    assert!(entries(work.path()).is_empty(), "left behind");
}

#[test]
fn too_few_file_descriptors_for_the_clients_is_a_clear_error_that_keeps_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 64; exec {} clients --clients 200 --duration 1s --warmup 0 --no-store --quiet --json - --dir {}",
            env!("CARGO_BIN_EXE_fsbench"),
            dir.path().display()
        ))
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Too many open files") && err.contains("ulimit -n"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "failed");
    assert!(
        !sample["results"].as_array().unwrap().is_empty(),
        "what was measured is kept"
    );
    assert!(entries(dir.path()).is_empty(), "left behind");
}

/// A loadfile that opens a handle again without closing it leaked a descriptor per pass
/// and ended in "raise `ulimit -n`": the earlier descriptor is closed and a warning names
/// the line.
#[test]
fn a_loadfile_that_reopens_a_handle_leaks_no_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let load = dir.path().join("load.txt");
    std::fs::write(
        &load,
        "NTCreateX \"\\clients\\client1\\a.txt\" 0x0 0x2 1 NT_STATUS_OK\n\
         WriteX 1 0 100 100 NT_STATUS_OK\n\
         NTCreateX \"\\clients\\client1\\a.txt\" 0x0 0x2 1 NT_STATUS_OK\n\
         ReadX 1 0 100 100 NT_STATUS_OK\n",
    )
    .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 64; exec {} clients --clients 2 --duration 1s --warmup 0 --no-store --quiet --loadfile {} --dir {}",
            env!("CARGO_BIN_EXE_fsbench"),
            load.display(),
            work.display()
        ))
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("the loadfile opens handle 1 again at line 3 before closing it"),
        "{err}"
    );
    assert!(entries(&work).is_empty(), "left behind");
}

/// Out of inodes said "No space left on device ... see the system error above", with
/// nothing above: now a run that cannot have the inodes it needs is refused before it starts,
/// saying how many it needs, how many there are and what to change.
#[test]
fn running_out_of_inodes_says_so_and_what_to_do() {
    if !root_or_skip("running_out_of_inodes_says_so_and_what_to_do") {
        return;
    }
    let few = ScratchMount::tmpfs("size=16m,nr_inodes=64");
    let output = fsbench()
        .args(["metadata", "-n", "200", "-t", "1", "--dirs", "1"])
        .args(["--no-store", "--quiet", "--dir"])
        .arg(few.path())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--count: the files would take about 201 inodes;")
            && err.contains("inodes free")
            && err.contains("lower count"),
        "{err}"
    );
    assert!(!err.contains("see the system error above"), "{err}");
    assert!(entries(few.path()).is_empty(), "left behind");
}

#[test]
fn a_client_load_runs_in_a_campaign() {
    if !root_or_skip("a_client_load_runs_in_a_campaign") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "dbench"
repetitions = 2
[device]
image = "64m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "clients"
clients = 3
duration = "300ms"
warmup = "100ms"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    s.assert_clean();
    let doc = s.export(1);
    let table = doc["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["workload"] == "clients" && t["metric"] == "throughput")
        .expect("a throughput table");
    assert!(!table["rows"].as_array().unwrap().is_empty(), "{table}");
    assert!(stdout(&output).contains("clients"), "{}", stdout(&output));
}

#[test]
fn a_full_filesystem_mid_mix_is_a_clear_error_that_keeps_the_results() {
    if !root_or_skip("a_full_filesystem_mid_mix_is_a_clear_error_that_keeps_the_results") {
        return;
    }
    let small = ScratchMount::tmpfs("size=4m");
    let output = fsbench()
        .args(["mix", "--num-files", "20", "--duration", "2s"])
        .args(["--no-store", "--quiet", "--json", "-", "--dir"])
        .arg(small.path())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("No space left on device") && err.contains("the filesystem is full"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "failed");
    let labels: Vec<Value> = flat_results(&doc)
        .iter()
        .map(|r| r["operation"].clone())
        .collect();
    assert_eq!(labels[0], "fileset");
    assert!(labels.len() > 2, "the mix's results are kept: {labels:?}");
    assert!(entries(small.path()).is_empty(), "left behind");
}

/// With `stop_when_full`, a mix that fills the filesystem stops there: its figures are over
/// the time it ran, the sample is ok, and a warning says when it filled.
#[test]
fn a_mix_told_to_stop_when_full_reports_the_time_it_ran() {
    if !root_or_skip("a_mix_told_to_stop_when_full_reports_the_time_it_ran") {
        return;
    }
    let small = ScratchMount::tmpfs("size=4m");
    let output = fsbench()
        .args([
            "mix",
            "--num-files",
            "20",
            "--duration",
            "20s",
            "--stop-when-full",
        ])
        .args(["--no-store", "--quiet", "--json", "-", "--dir"])
        .arg(small.path())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok");
    let warnings = sample["warnings"].to_string();
    assert!(
        warnings.contains("the filesystem filled after"),
        "{warnings}"
    );
    let results = flat_results(&doc);
    let whole = results
        .iter()
        .find(|r| r["operation"].is_null())
        .expect("the whole mix");
    assert_eq!(whole["stopped"], "full", "{whole}");
    let elapsed = whole["elapsed"].as_f64().unwrap();
    assert!(elapsed < 20e9, "stopped when full, not at 20 s: {elapsed}");
    assert!(whole["tps"].as_f64().unwrap() > 0.0);
    assert!(entries(small.path()).is_empty(), "left behind");
}

/// FFSB syncs after it makes its fileset, before the benchmark's time starts: the mix's timed
/// phase starts on a clean filesystem, with nothing of the fileset left to write back inside
/// it (a real ext4 on a loop device; what a sync writes at the phase's start is read from the
/// disk's own counters).
#[test]
fn the_mix_starts_its_timed_phase_with_the_fileset_written_back() {
    use fsbench_workload::harness::{Detached, Harness};
    use fsbench_workload::mix::MixSettings;
    use fsbench_workload::workload::{Collect, Workload};
    use fsbench_workload::{Context, StopFlag};
    use std::path::Path;

    if !root_or_skip("the_mix_starts_its_timed_phase_with_the_fileset_written_back") {
        return;
    }
    let fs = MountedDisk::new("ext4");
    // The probe sees dirty data: 4 MiB written and not synced are written by its sync.
    std::fs::write(fs.path().join("dirty"), vec![7u8; 4 << 20]).unwrap();
    let seen = fs.written_by_sync();
    assert!(seen >= 4 << 20, "a sync wrote {seen} bytes of 4 MiB dirty");
    std::fs::remove_file(fs.path().join("dirty")).unwrap();
    fs.written_by_sync();

    /// At the second phase (the mix's; the first is the fileset's): what a sync writes then.
    struct AtTimedStart<'a> {
        fs: &'a MountedDisk,
        phases: u32,
        dirty: Option<u64>,
    }
    impl Harness for AtTimedStart<'_> {
        fn cold(&mut self) -> Result<String, String> {
            Detached.cold()
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            Detached.drop_caches()
        }
        fn evict(&mut self, p: &Path, o: u64, l: u64) -> Result<Option<f64>, String> {
            Detached.evict(p, o, l)
        }
        fn resident(&mut self, p: &Path, o: u64, l: u64) -> Result<f64, String> {
            Detached.resident(p, o, l)
        }
        fn phase_start(&mut self) -> bool {
            self.phases += 1;
            if self.phases == 2 {
                self.dirty = Some(self.fs.written_by_sync());
            }
            true
        }
    }
    // A 25 MiB fileset: 400 files of 64 KiB.
    let settings = MixSettings {
        threads: 2,
        duration: "200ms".parse().unwrap(),
        num_files: 400,
        num_dirs: 4,
        min_filesize: "64k".parse().unwrap(),
        max_filesize: "64k".parse().unwrap(),
        ..MixSettings::default()
    };
    let mut harness = AtTimedStart {
        fs: &fs,
        phases: 0,
        dirty: None,
    };
    let mut sink = Collect::default();
    let end = settings.run(
        &Context::default(),
        fs.path(),
        &StopFlag::new(),
        &mut sink,
        &mut harness,
    );
    assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
    let dirty = harness.dirty.expect("the mix's phase started");
    assert!(
        dirty < 1 << 20,
        "{dirty} bytes of the 25 MiB fileset were still to write when the timed mix started"
    );
    // The sync is on record with the fileset, outside its time.
    let fileset = &sink.records[0];
    assert_eq!(fileset.dims.operation.as_deref(), Some("fileset"));
    let sync = fileset
        .measurement("sync")
        .expect("the fileset's sync")
        .value;
    assert!(sync > 0.0 && sync < 60e9, "{sync}");
}

#[test]
fn the_dry_run_says_where_every_copying_workloads_buffers_sit() {
    let s = Scratch::new();
    let plan = s.plan(
        "name = \"p\"\n[[filesystems]]\nname = \"tmpfs\"\n\
         [[workloads]]\nname = \"a\"\nkind = \"io\"\nsize = \"4m\"\nengine = \"sync\"\n\
         [[workloads]]\nname = \"b\"\nkind = \"mix\"\n\
         [[workloads]]\nname = \"c\"\nkind = \"matrix\"\ndirect = true\n\
         [[workloads]]\nname = \"d\"\nkind = \"clients\"\n",
    );
    let output = s.run(&["--plan", plan.to_str().unwrap(), "--dry-run"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output).replace("\n      ", " ");
    let calibrated = "buffer_placement=calibrated (fastest of +0,+16,+64,+2048,+4000 B, timed on a file of the working set's reach: cache or memory)";
    // Each workload's block runs to the next one's name (the plan's order), the last to the table.
    let starts = ["a (io", "b (mix", "c (matrix", "d (clients", "\nid "];
    let block = |k: usize| {
        let from = text.find(starts[k]).unwrap();
        &text[from..from + text[from..].find(starts[k + 1]).unwrap()]
    };
    for k in [0, 1, 3] {
        assert!(block(k).contains(calibrated), "{}", block(k));
    }
    let block = block(2);
    assert!(
        block.contains("buffer_placement=page-aligned (O_DIRECT)"),
        "{block}"
    );
}

/// The mix's `--verify` on ext4 (a loop device): every file the mix wrote is read back after
/// the remount, and the run passes; a block of one of its files zeroed in the unmounted image
/// (the debug build's `FSBENCH_TEST_BETWEEN_MOUNTS`, between the umount and the mount) is
/// found: the sample is `corrupt`, naming that file and the block's byte offset.
#[test]
fn the_mix_verifies_what_it_wrote_after_a_remount_on_ext4() {
    if !root_or_skip("the_mix_verifies_what_it_wrote_after_a_remount_on_ext4") {
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipping: FSBENCH_TEST_BETWEEN_MOUNTS is in debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let said = dir.path().join("said");
    // The first file (of the run's directories, in order) with a second block on the disk
    // (every file has two blocks or more; one the mix was still changing may not have one
    // mapped), that block zeroed in the image, with direct I/O as the loop device reads it.
    let hook = format!(
        r#"set -e
img="$FSBENCH_IMAGE"
top=$(debugfs -R "ls -p /" "$img" 2>/dev/null | awk -F/ '$6 ~ /^fsbench-mix-/ {{ print $6; exit }}')
physical=0
for d in 0 1 2; do
  for name in $(debugfs -R "ls -p /$top/d$d" "$img" 2>/dev/null | awk -F/ '$6 != "." && $6 != ".." && $6 != "" {{ print $6 }}'); do
    physical=$(debugfs -R "bmap /$top/d$d/$name 1" "$img" 2>/dev/null || echo 0)
    test "${{physical:-0}}" -gt 0 2>/dev/null && break 2
    physical=0
  done
done
test "$physical" -gt 0
dd if=/dev/zero of="$img" bs=4096 count=1 seek="$physical" conv=notrunc oflag=direct status=none
echo "$name" > {said}"#,
        said = said.display()
    );
    let mix = |damage: bool| {
        let mut command = fsbench();
        if damage {
            command.env("FSBENCH_TEST_BETWEEN_MOUNTS", &hook);
        }
        command
            .args(["mix", "--fs", "ext4", "--verify", "--threads", "2"])
            .args(["--num-files", "60", "--num-dirs", "3", "--duration", "2s"])
            .args(["--min-filesize", "8k", "--max-filesize", "32k"])
            .args(["--append-weight", "1", "--delete-weight", "1"])
            .args(["--no-store", "--quiet", "--json", "-"])
            .output()
            .unwrap()
    };
    let output = mix(false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok", "{sample}");
    let warnings = sample["warnings"].to_string();
    assert!(
        warnings.contains("read back once the cache was made cold (remounted)"),
        "{warnings}"
    );

    let output = mix(true);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "corrupt", "{sample}");
    let name = std::fs::read_to_string(&said).expect("the hook ran");
    let reason = sample["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("/{}: the block at byte 4096 is not", name.trim())),
        "{reason}"
    );
    assert!(reason.contains("found no stamp"), "{reason}");
}

/// The flags only a filesystem fsbench prepares can honour are refused in a directory (exit 2,
/// nothing stored): they used to be taken and silently not applied, so `--cache cold --dir`
/// measured a warm cache as if it were cold.
#[test]
fn a_directory_refuses_the_flags_of_a_prepared_filesystem_and_drops_the_cache_when_asked() {
    let s = Scratch::new();
    let dir = tempfile::tempdir().unwrap();
    let matrix = |extra: &[&str], json: Option<&Path>| {
        let mut command = fsbench();
        command
            .args([
                "matrix",
                "-i",
                "0,1",
                "--file-sizes",
                "1m",
                "--record-sizes",
                "64k",
            ])
            .args(["--min-time", "0", "--quiet", "--db"])
            .arg(s.db())
            .arg("--dir")
            .arg(dir.path())
            .args(extra);
        if let Some(json) = json {
            command.arg("--json").arg(json);
        }
        command.output().unwrap()
    };
    for flags in [
        &["--scheduler", "bfq"][..],
        &["--mount-options", "noatime"],
        &["--mkfs-options", "-b 4096"],
        &["--device", "image:1g"],
        &["--no-fsck"],
        &["--age", "50"],
        &["--cache", "remount"],
        &["--cache", "direct"],
    ] {
        let output = matrix(flags, None);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{flags:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(&format!("{} ", flags[0]))
                && stderr(&output).contains("add --fs FS"),
            "{flags:?}: {}",
            stderr(&output)
        );
        assert!(!s.db().exists(), "{flags:?}: nothing stored");
    }
    // Without --dir (a temporary directory) alike.
    let temporary = fsbench()
        .args([
            "matrix",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
            "--no-store",
        ])
        .args(["--scheduler", "bfq"])
        .output()
        .unwrap();
    assert_eq!(temporary.status.code(), Some(2), "{}", stderr(&temporary));
    assert!(
        stderr(&temporary).contains("--scheduler applies to a filesystem fsbench prepares"),
        "{}",
        stderr(&temporary)
    );
    let unknown = matrix(&["--cache", "tepid"], None);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("unknown cache policy 'tepid'"));
    if !root_or_skip("the page cache dropped in a directory") {
        return;
    }
    // Root: drop (or cold) is honoured in a directory; the case says so, and the read phase
    // begins with the file out of the cache, where a warm run reads it from the cache.
    for (cache, read_state) in [("cold", "cold"), ("warm", "warm")] {
        let json = s.path().join(format!("{cache}.json"));
        let output = matrix(&["--cache", cache], Some(&json));
        assert!(output.status.success(), "{cache}: {}", stderr(&output));
        let doc = read_json(&json);
        let case = &run_cases(&doc)[0];
        let policy = if cache == "cold" { "drop" } else { "warm" };
        assert_eq!(case["axes"]["cache"], policy, "{cache}");
        let read = flat_results(&doc)
            .into_iter()
            .find(|r| r["phase"] == "read")
            .unwrap();
        assert_eq!(read["cache_state"], read_state, "{cache}");
    }
}
