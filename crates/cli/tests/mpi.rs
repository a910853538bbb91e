//! Scale-out under a real mpirun (a build with the `mpi` feature; scripts/test-mpi.sh): jobs of
//! 1, 2 and 4 ranks on this host run the matrix and the metadata workload, each rank in its own
//! directory, and rank 0 stores one run whose figures follow the aggregate rules. The plain
//! build links no MPI and says how to get it when mpirun starts it.

mod common;

use common::{stderr, Scratch};

#[cfg(not(feature = "mpi"))]
#[test]
fn the_plain_build_links_no_mpi_and_refuses_to_run_as_a_rank() {
    let ldd = std::process::Command::new("ldd")
        .arg(env!("CARGO_BIN_EXE_fsbench"))
        .output()
        .unwrap();
    let libraries = String::from_utf8_lossy(&ldd.stdout).into_owned();
    assert!(ldd.status.success(), "{}", stderr(&ldd));
    assert!(!libraries.contains("libmpi"), "{libraries}");
    // As mpirun would start it: every rank would otherwise store a run of its own.
    let scratch = Scratch::new();
    let out = common::fsbench()
        .args(["sleep", "--duration", "1ms", "--dir"])
        .arg(scratch.path())
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "built without MPI: build it with `cargo build --release -p fsbench --features mpi`"
        ),
        "{}",
        stderr(&out)
    );
}

#[cfg(feature = "mpi")]
use common::flat_results;
#[cfg(feature = "mpi")]
use serde_json::Value;
#[cfg(feature = "mpi")]
use std::process::{Command, Output};

#[cfg(feature = "mpi")]
/// `mpirun -np N fsbench ARGS`, oversubscribed (CI has 2 cores) and allowed as root.
fn mpirun(ranks: u32, args: &[&str]) -> Output {
    mpirun_command(ranks, &[], args)
        .output()
        .expect("mpirun (scripts/install-deps.sh --mpi)")
}

#[cfg(feature = "mpi")]
/// The command of [`mpirun`], with mpirun's own `flags`, to run or spawn.
fn mpirun_command(ranks: u32, flags: &[&str], args: &[&str]) -> Command {
    let mut command = Command::new("mpirun");
    command
        .args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(ranks.to_string())
        .args(flags)
        .arg(env!("CARGO_BIN_EXE_fsbench"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl", "self,vader");
    command
}

#[cfg(feature = "mpi")]
/// Waits (at most a minute) until run 1 in `db` holds what `kept` looks for, as exported.
fn wait_for_run(db: &std::path::Path, what: &str, kept: impl Fn(&Value) -> bool) {
    let start = std::time::Instant::now();
    loop {
        let export = common::fsbench()
            .args(["export", "1", "--json", "-", "--db"])
            .arg(db)
            .output()
            .unwrap();
        if export.status.success() && kept(&serde_json::from_slice(&export.stdout).unwrap()) {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "rank 0 never stored {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(feature = "mpi")]
fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[cfg(feature = "mpi")]
#[test]
fn the_matrix_on_1_2_and_4_ranks_is_one_run_with_total_bytes_over_the_slowest_time() {
    for ranks in [1u32, 2, 4] {
        let scratch = Scratch::new();
        let dir = scratch.path().join("shared");
        std::fs::create_dir(&dir).unwrap();
        let json = scratch.path().join("run.json");
        let out = mpirun(
            ranks,
            &[
                "matrix",
                "--tests",
                "write,read",
                "--file-sizes",
                "1m",
                "--record-sizes",
                "64k",
                "--min-time",
                "20ms",
                "--quiet",
                "--dir",
                dir.to_str().unwrap(),
                "--db",
                scratch.db().to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "np {ranks}: {}", stderr(&out));
        let doc = common::read_json(&json);
        let case = &common::run_cases(&doc)[0];
        assert!(
            case["key"]
                .as_str()
                .unwrap()
                .ends_with(&format!(".np{ranks}")),
            "{}",
            case["key"]
        );
        assert_eq!(doc["runs"][0]["host"]["mpi"]["world_size"], ranks);
        let results = flat_results(&doc);
        let phases: Vec<&str> = results
            .iter()
            .map(|r| r["phase"].as_str().unwrap())
            .collect();
        assert_eq!(
            phases,
            ["write", "rewrite", "read", "reread"],
            "merged once each"
        );
        for r in &results {
            assert_eq!(number(&r["ranks"]), ranks as f64, "{r}");
            let per_rank = r["per_rank"].as_array().expect("every rank's detail");
            assert_eq!(per_rank.len(), ranks as usize);
            let bytes = number(&r["bytes"]);
            let sum: f64 = per_rank.iter().map(|p| number(&p["bytes"])).sum();
            assert_eq!(bytes, sum, "bytes add up: {r}");
            let slowest = per_rank
                .iter()
                .map(|p| number(&p["elapsed_ns"]))
                .fold(0.0, f64::max);
            assert_eq!(
                number(&r["elapsed"]),
                slowest,
                "the slowest rank's time: {r}"
            );
            assert!(per_rank.iter().all(|p| p["host"].is_string()));
            let elapsed = number(&r["elapsed"]);
            let throughput = number(&r["throughput"]);
            assert!(
                (throughput - bytes / (elapsed / 1e9)).abs() <= throughput * 1e-9,
                "total bytes over the slowest rank's time: {r}"
            );
            assert_eq!(
                r["latency_count"], r["ops"],
                "every rank's operations, merged: {r}"
            );
            assert!(number(&r["imbalance"]) >= 1.0);
        }
        // Each rank worked in a directory of its own there, removed (empty) after the sample,
        // as a campaign's are.
        for rank in 0..ranks {
            assert!(
                !dir.join(format!("rank-{rank}")).exists(),
                "rank {rank}'s directory is left"
            );
        }
        // One run in the store, as any other.
        let runs = common::fsbench()
            .args(["runs", "--db"])
            .arg(scratch.db())
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&runs.stdout).into_owned();
        assert_eq!(listed.matches("matrix").count(), 1, "{listed}");
    }
}

#[cfg(feature = "mpi")]
#[test]
fn the_metadata_workload_on_2_ranks_adds_up_every_ranks_operations() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        2,
        &[
            "metadata",
            "-n",
            "40",
            "-t",
            "2",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let create = results
        .iter()
        .find(|r| r["operation"] == "create")
        .expect("create");
    // 40 files per thread, 2 threads, 2 ranks.
    assert_eq!(create["ops"], 160, "{create}");
    assert_eq!(create["latency_count"], 160);
    assert_eq!(number(&create["ranks"]), 2.0);
}

/// The replay workload on 2 ranks: each rank replays the whole trace in a directory of its own
/// (the trace creates its file with O_EXCL, which a second replay in the same directory would
/// find taken), and rank 0 stores one result whose calls add up over the ranks, none diverged.
#[cfg(feature = "mpi")]
#[test]
fn the_replay_workload_on_2_ranks_replays_the_trace_once_in_each_ranks_directory() {
    use fsbench_trace::{End, Event, Header, Node, NodeKind, Op, Trace};
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let event = |start_ns, ret, op| Event {
        pid: 1,
        tid: 1,
        start_ns,
        dur_ns: 1000,
        blocked_ns: 0,
        recorder_ns: 0,
        woken: None,
        ret,
        op,
    };
    let trace = Trace {
        header: Header {
            command: vec!["app".into()],
            root: "/app".into(),
            recorded_at_unix_s: 0,
            host: String::new(),
            kernel: String::new(),
            mechanism: "by hand".into(),
            anonymised: false,
            contents: false,
        },
        tree: vec![Node {
            path: "in".into(),
            kind: NodeKind::File { size: 8192 },
            mode: 0o644,
        }],
        events: vec![
            event(
                0,
                3,
                Op::Open {
                    path: "in".into(),
                    flags: libc::O_RDONLY,
                    mode: 0,
                },
            ),
            event(10, 8192, Op::Read { fd: 3, len: 8192 }),
            event(
                20,
                4,
                Op::Open {
                    path: "out".into(),
                    flags: libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
                    mode: 0o644,
                },
            ),
            event(30, 4096, Op::Write { fd: 4, len: 4096 }),
            event(40, 0, Op::Fsync { fd: 4 }),
            event(50, 0, Op::Close { fd: 4 }),
            event(60, 0, Op::Close { fd: 3 }),
        ],
        end: End {
            duration_ns: 1000,
            ..End::default()
        },
    };
    let path = scratch.path().join("app.trace");
    trace.write(&path).unwrap();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        2,
        &[
            "replay",
            "--trace",
            path.to_str().unwrap(),
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let whole = results
        .iter()
        .find(|r| r.get("replay_time").is_some())
        .expect("the replay's whole");
    assert_eq!(whole["ops"], 14, "{whole}");
    assert_eq!(whole["bytes"], 2 * (8192 + 4096), "{whole}");
    assert_eq!(whole["diverged"], 0, "{whole}");
    assert_eq!(whole["refused"], 0, "{whole}");
    assert_eq!(number(&whole["ranks"]), 2.0);
    let open = results
        .iter()
        .find(|r| r["operation"] == "open")
        .expect("open");
    assert_eq!(open["ops"], 4, "{open}");
    assert_eq!(open["diverged"], 0, "{open}");
}

/// The io workload on 2 ranks of 2 threads: the ranks start their one timed phase together,
/// and rank 0 stores one result per direction merged from both: operations and bytes add up
/// (every block of every file once), the time is the slowest rank's, and both latency
/// histograms (completion, submission) hold every rank's operations.
#[cfg(feature = "mpi")]
#[test]
fn the_io_workload_on_2_ranks_adds_up_every_ranks_operations() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        2,
        &[
            "io",
            "--rw",
            "randrw",
            "--size",
            "1m",
            "--iodepth",
            "8",
            "--threads",
            "2",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let directions: Vec<&str> = results
        .iter()
        .map(|r| r["operation"].as_str().unwrap())
        .collect();
    assert_eq!(directions, ["read", "write"], "merged once each");
    let mut ops = 0.0;
    for r in &results {
        assert_eq!(number(&r["ranks"]), 2.0, "{r}");
        assert_eq!(number(&r["bytes"]), number(&r["ops"]) * 4096.0, "{r}");
        assert_eq!(r["latency_count"], r["ops"], "{r}");
        let slat: u64 = r["slat_bins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum();
        assert_eq!(slat as f64, number(&r["ops"]), "{r}");
        let slowest = r["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| number(&p["elapsed_ns"]))
            .fold(0.0, f64::max);
        assert_eq!(number(&r["elapsed"]), slowest, "{r}");
        ops += number(&r["ops"]);
    }
    assert_eq!(ops, 2.0 * 2.0 * 256.0, "2 ranks x 2 threads x 256 blocks");
}

/// N-to-1 (IOR's shared file, segmented): 4 ranks on one file in the job's directory, rank r
/// on bytes [r*F, (r+1)*F). Each phase's operations and bytes add up over the ranks, the file
/// holds every rank's segment (none left a hole, no two alike), no rank made a directory of its
/// own, and without --keep rank 0 removes the file after the last rank is done.
#[cfg(feature = "mpi")]
#[test]
fn four_ranks_share_one_file_each_writing_its_own_segment() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let json = scratch.path().join("run.json");
    let db = scratch.db();
    let run = |keep: bool| {
        let mut args = vec![
            "matrix",
            "--shared-file",
            "--tests",
            "write,read,random",
            "--file-sizes",
            "256k",
            "--record-sizes",
            "16k",
            "--min-time",
            "5ms",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ];
        if keep {
            args.push("--keep");
        }
        mpirun(4, &args)
    };
    let out = run(true);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let phases: Vec<&str> = results
        .iter()
        .map(|r| r["phase"].as_str().unwrap())
        .collect();
    assert_eq!(
        phases,
        [
            "write",
            "rewrite",
            "read",
            "reread",
            "random-read",
            "random-write"
        ]
    );
    for r in &results {
        assert_eq!(r["layout"], "shared-file", "{r}");
        assert_eq!(r["shared_file_bytes"], 1 << 20, "{r}");
        assert_eq!(number(&r["ranks"]), 4.0);
        let per_rank = r["per_rank"].as_array().unwrap();
        let sum: f64 = per_rank.iter().map(|p| number(&p["bytes"])).sum();
        assert_eq!(number(&r["bytes"]), sum, "{r}");
        assert_eq!(r["latency_count"], r["ops"], "{r}");
    }
    // The creating phase is one pass per rank: 16 records of 16 KiB, 4 ranks.
    assert_eq!(results[0]["ops"], 64, "{}", results[0]);
    let kept = common::entries(&dir);
    assert_eq!(kept.len(), 1, "one file, no rank directories: {kept:?}");
    let content = std::fs::read(&kept[0]).unwrap();
    assert_eq!(content.len(), 1 << 20);
    let segments: Vec<&[u8]> = content.chunks(256 << 10).collect();
    for (rank, segment) in segments.iter().enumerate() {
        assert!(
            segment.chunks(4096).all(|b| b.iter().any(|&x| x != 0)),
            "rank {rank} wrote all of its segment"
        );
    }
    let firsts: std::collections::BTreeSet<&[u8]> = segments.iter().map(|s| &s[..4096]).collect();
    assert_eq!(firsts.len(), 4, "every rank wrote its own data");

    std::fs::remove_file(&kept[0]).unwrap();
    let out = run(false);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(common::entries(&dir).is_empty(), "rank 0 removed the file");
}

/// A stonewall stops every rank's creates at the same moment (IOR's -D, mdtest's -W): the job
/// made far fewer than it was asked to, every rank made some, the merged record says the wall
/// was met and spans what the ranks made, and unlink removed exactly what was made.
#[cfg(feature = "mpi")]
#[test]
fn a_stonewall_stops_every_ranks_creates_and_the_rest_remove_what_was_made() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        2,
        &[
            "metadata",
            "-n",
            "200000",
            "--ops",
            "create,stat,unlink",
            "--stonewall",
            "100ms",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let of = |op: &str| results.iter().find(|r| r["operation"] == op).unwrap();
    let create = of("create");
    let made = number(&create["ops"]);
    assert!(made < 400_000.0, "{create}");
    assert_eq!(create["stonewalled"], true, "{create}");
    assert_eq!(create["stonewall_ns"], 100_000_000);
    let (least, most) = (number(&create["made_min"]), number(&create["made_max"]));
    assert!(least >= 32.0 && least <= most, "{create}");
    let per_rank = create["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 2);
    assert!(
        per_rank.iter().all(|r| number(&r["ops"]) >= 32.0),
        "{create}"
    );
    assert_eq!(number(&of("stat")["ops"]), made);
    assert_eq!(number(&of("unlink")["ops"]), made);
    assert!(common::entries(&dir)
        .iter()
        .all(|rank_dir| common::entries(rank_dir).is_empty()));
}

/// `--stonewall first`: the first thread of any rank to make its whole share stops every
/// other, on every rank (the word crosses MPI while the threads run): one thread made all of
/// its files, the job made fewer than all, the later operations act on what was made, and the
/// job ends (no rank waits for a word that never comes).
#[cfg(feature = "mpi")]
#[test]
fn a_first_done_stonewall_stops_every_rank_when_one_thread_is_done() {
    if !common::root_or_skip("a_first_done_stonewall_stops_every_rank_when_one_thread_is_done") {
        return;
    }
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    // Rank 0 on a tmpfs, the others on the host's disk: uneven ranks, so the first done is
    // far ahead of the rest (see a_campaign_under_mpirun_does_what_the_command_does).
    let fast = common::ScratchMount::tmpfs("size=64m");
    std::os::unix::fs::symlink(fast.path(), dir.join("rank-0")).unwrap();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        4,
        &[
            "metadata",
            "-n",
            "3000",
            "-t",
            "2",
            "--ops",
            "mkdir,create,stat,unlink,rmdir",
            "--stonewall",
            "first",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let of = |op: &str| results.iter().find(|r| r["operation"] == op).unwrap();
    for op in ["mkdir", "create"] {
        let r = of(op);
        assert_eq!(r["stonewall"], "first", "{r}");
        assert_eq!(
            number(&r["made_max"]),
            3000.0,
            "one thread made its share: {r}"
        );
        assert!(number(&r["made_min"]) >= 32.0, "{r}");
        assert!(number(&r["made_min"]) < 1500.0, "the others stopped: {r}");
        assert!(number(&r["ops"]) < 4.0 * 3000.0, "the others stopped: {r}");
    }
    let made = number(&of("create")["ops"]);
    assert_eq!(number(&of("stat")["ops"]), made);
    assert_eq!(number(&of("unlink")["ops"]), made);
    assert!(common::entries(&dir)
        .iter()
        .all(|rank_dir| common::entries(rank_dir).is_empty()));
}

/// A campaign under mpirun does what a workload command under mpirun does (one sample's life,
/// issue 24): a first-done stonewall stops every rank's threads when the first of any rank has
/// made its share (the campaign's child asks its campaign at each poll), and the task workload,
/// which cannot be a rank, is unsupported with the same reason both ways.
#[cfg(feature = "mpi")]
#[test]
fn a_campaign_under_mpirun_does_what_the_command_does() {
    if !common::root_or_skip("a_campaign_under_mpirun_does_what_the_command_does") {
        return;
    }
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    // Rank 0 works on a tmpfs (its `rank-0` is already there, so it is used as it is), rank 1
    // on the host's disk: rank 0's threads are done long before rank 1's, so the stonewall has
    // something to stop. Equal ranks here can all end within the 32 operations between two
    // looks at the wall, and then nothing is stopped.
    let fast = common::ScratchMount::tmpfs("size=64m");
    std::os::unix::fs::symlink(fast.path(), dir.join("rank-0")).unwrap();
    let plan = scratch.plan(
        r#"
name = "as-the-command"
repetitions = 1

[[workloads]]
kind = "metadata"
name = "walled"
count = 3000
threads = 2
ops = ["mkdir", "create", "stat", "unlink", "rmdir"]
stonewall = "first"

[[workloads]]
kind = "task"
name = "untar"
tasks = "untar"
method = "native"
compression = "none"
tree_fraction = 0.01
"#,
    );
    let out = mpirun(
        2,
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--work-dir",
            scratch.work().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = scratch.export(1);
    let cases = common::run_cases(&doc);
    let sample = |workload: &str| {
        cases
            .iter()
            .find(|c| {
                c["key"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!(".{workload}.np2"))
            })
            .map(|c| c["samples"][0].clone())
            .unwrap_or_else(|| panic!("{workload}: {cases:?}"))
    };
    let walled = sample("walled");
    assert_eq!(walled["status"], "ok", "{walled}");
    let results = common::flat_results_of(&walled);
    let of = |op: &str| results.iter().find(|r| r["operation"] == op).unwrap();
    for op in ["mkdir", "create"] {
        let r = of(op);
        assert_eq!(r["stonewall"], "first", "{r}");
        assert_eq!(
            number(&r["made_max"]),
            3000.0,
            "one thread made its share: {r}"
        );
        // Rank 1's threads were stopped far from their share.
        assert!(number(&r["made_min"]) < 1500.0, "the others stopped: {r}");
        assert!(number(&r["ops"]) < 3.0 * 3000.0, "the others stopped: {r}");
    }
    assert_eq!(number(&of("unlink")["ops"]), number(&of("create")["ops"]));
    let untar = sample("untar");
    assert_eq!(untar["status"], "unsupported", "{untar}");
    // The command, under mpirun alike: the same reason, and nothing measured.
    let db = scratch.path().join("command.db");
    let out = mpirun(
        2,
        &[
            "task",
            "untar",
            "--method",
            "native",
            "--compression",
            "none",
            "--tree-fraction",
            "0.01",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let reason = untar["reason"].as_str().unwrap();
    assert!(reason.contains("does not run under mpirun"), "{reason}");
    assert!(stderr(&out).contains(reason), "{}", stderr(&out));
}

/// `matrix --stonewall first` on one shared file, 4 ranks on 2 cores: the first rank to write
/// its whole segment ends the others' writes mid-pass, and so in every phase; the job's bytes
/// add up to what the ranks made, the phases after the write find every segment whole (no
/// short read), and rank 0 removes the file.
#[cfg(feature = "mpi")]
#[test]
fn a_first_done_stonewall_ends_every_ranks_matrix_phase_when_one_is_done() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        4,
        &[
            "matrix",
            "--tests",
            "write,read",
            "--file-sizes",
            "32m",
            "--record-sizes",
            "4k",
            "--shared-file",
            "--stonewall",
            "first",
            "--min-time",
            "20ms",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = flat_results(&common::read_json(&json));
    let phases: Vec<&str> = results
        .iter()
        .map(|r| r["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["write", "rewrite", "read", "reread"]);
    for r in &results {
        assert_eq!(r["stonewall"], "first", "{r}");
        assert!(r["stonewalled"].is_boolean(), "{r}");
        let per_rank = r["per_rank"].as_array().unwrap();
        let bytes: Vec<f64> = per_rank.iter().map(|p| number(&p["bytes"])).collect();
        assert_eq!(bytes.len(), 4);
        assert!(bytes.iter().all(|&b| b >= 4096.0), "{r}");
        assert_eq!(number(&r["bytes"]), bytes.iter().sum::<f64>(), "{r}");
    }
    let write = &results[0];
    let segments: Vec<f64> = write["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| number(&p["bytes"]))
        .collect();
    let whole = f64::from(32u32 << 20);
    assert!(
        segments.contains(&whole) && segments.iter().all(|&b| b <= whole),
        "one rank wrote its whole segment: {write}"
    );
    // Oversubscribed (4 ranks on 2 cores), the others are still mid-pass when the first is
    // done: in every manual run here the write phase stopped three ranks short of 64 MiB.
    assert!(
        results.iter().any(|r| r["stonewalled"] == true),
        "no rank was stopped: {results:?}"
    );
    assert!(common::entries(&dir).is_empty(), "rank 0 removed the file");
}

/// A rank that cannot start ends the whole job at once, saying why; nothing is stored.
#[cfg(feature = "mpi")]
#[test]
fn a_rank_that_cannot_start_ends_the_job_with_its_reason() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    // Rank 1's directory cannot be made: a file is in its place.
    std::fs::write(dir.join("rank-1"), b"in the way").unwrap();
    let out = mpirun(
        2,
        &[
            "metadata",
            "-n",
            "10",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains("cannot create") && said.contains("rank-1"),
        "{said}"
    );
    let runs = common::fsbench()
        .args(["runs", "--db"])
        .arg(scratch.db())
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&runs.stdout).contains("metadata"),
        "nothing stored"
    );
}

/// Two "hosts" on this machine: network namespaces joined by a veth pair, each with its own
/// address; mpirun runs in the first and starts the second's ranks through `ip netns exec` (its
/// remote agent, in place of ssh), so the ranks' traffic crosses a network. Removed on drop.
#[cfg(feature = "mpi")]
struct TwoHosts {
    names: [String; 2],
    agent: std::path::PathBuf,
}

#[cfg(feature = "mpi")]
impl TwoHosts {
    const ADDRESSES: [&'static str; 2] = ["10.77.0.1", "10.77.0.2"];

    fn new(scratch: &Scratch) -> TwoHosts {
        // Tests run in parallel: each pair of hosts is named by the process and a count.
        static PAIRS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = PAIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 10;
        let id = std::process::id() % 100_000;
        let names = [format!("fsbta{id}{n}"), format!("fsbtb{id}{n}")];
        let ip = |args: &[&str]| {
            let out = Command::new("ip")
                .args(args)
                .output()
                .expect("ip (iproute2)");
            assert!(out.status.success(), "ip {args:?}: {}", stderr(&out));
        };
        let hosts = TwoHosts {
            names: names.clone(),
            agent: scratch.path().join("netns-agent"),
        };
        for name in &names {
            ip(&["netns", "add", name]);
            ip(&["-n", name, "link", "set", "lo", "up"]);
        }
        let (a, b) = (format!("{}v", names[0]), format!("{}v", names[1]));
        ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]);
        for (i, (name, link)) in names.iter().zip([&a, &b]).enumerate() {
            ip(&["link", "set", link, "netns", name]);
            let address = format!("{}/24", Self::ADDRESSES[i]);
            ip(&["-n", name, "addr", "add", &address, "dev", link]);
            ip(&["-n", name, "link", "set", link, "up"]);
        }
        // mpirun's remote agent: `AGENT HOST COMMAND...`, run as sshd would (through a shell),
        // in the host's namespace and under its own host name.
        let script = format!(
            "#!/bin/sh\nhost=$1; shift\ncase $host in\n  {}) ns={} ;;\n  {}) ns={} ;;\n  *) echo \"unknown host $host\" >&2; exit 1 ;;\nesac\nexec ip netns exec \"$ns\" unshare --uts sh -c \"hostname $ns; $*\"\n",
            Self::ADDRESSES[0], names[0], Self::ADDRESSES[1], names[1]
        );
        std::fs::write(&hosts.agent, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hosts.agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        hosts
    }

    /// `mpirun` in the first namespace, two ranks per host.
    fn mpirun(&self, args: &[&str]) -> Output {
        self.command(&[], args)
            .output()
            .expect("ip netns exec mpirun")
    }

    /// The same command with more of mpirun's flags, to start in the background.
    fn command(&self, flags: &[&str], args: &[&str]) -> Command {
        let hosts = format!("{}:2,{}:2", Self::ADDRESSES[0], Self::ADDRESSES[1]);
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.names[0], "mpirun"])
            .args(["--allow-run-as-root", "-np", "4", "--host", &hosts])
            .args(["--mca", "plm_rsh_agent"])
            .arg(&self.agent)
            .args(["--mca", "plm_rsh_no_tree_spawn", "1"])
            .args(["--mca", "btl", "self,vader,tcp"])
            .args(["--mca", "btl_tcp_if_include", "10.77.0.0/24"])
            .args(["--mca", "oob_tcp_if_include", "10.77.0.0/24"])
            .args(flags)
            .arg(env!("CARGO_BIN_EXE_fsbench"))
            .args(args)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        command
    }

    /// Bytes the second host received on its link.
    fn received(&self) -> u64 {
        let path = format!("/sys/class/net/{}v/statistics/rx_bytes", self.names[1]);
        let out = Command::new("ip")
            .args(["netns", "exec", &self.names[1], "cat", &path])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }
}

#[cfg(feature = "mpi")]
impl Drop for TwoHosts {
    fn drop(&mut self) {
        for name in &self.names {
            // Deleting a namespace removes its end of the veth pair, and so the pair.
            let _ = Command::new("ip").args(["netns", "delete", name]).status();
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_job_across_two_network_namespaces_is_one_run_with_every_host() {
    if !common::root_or_skip("a_job_across_two_network_namespaces_is_one_run_with_every_host") {
        return;
    }
    let scratch = Scratch::new();
    let hosts = TwoHosts::new(&scratch);
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let json = scratch.path().join("run.json");
    let before = hosts.received();
    let out = hosts.mpirun(&[
        "metadata",
        "-n",
        "20",
        "-t",
        "1",
        "--quiet",
        "--dir",
        dir.to_str().unwrap(),
        "--db",
        scratch.db().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        hosts.received() > before,
        "the ranks talked over the veth pair"
    );
    let doc = common::read_json(&json);
    let ranks = doc["runs"][0]["host"]["mpi"]["ranks"].as_array().unwrap();
    let mut names: Vec<&str> = ranks
        .iter()
        .map(|r| r["host"]["hostname"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4);
    names.dedup();
    assert_eq!(names.len(), 2, "two hosts, two ranks each: {names:?}");
    assert!(names.contains(&hosts.names[1].as_str()), "{names:?}");
    let create = flat_results(&doc)
        .into_iter()
        .find(|r| r["operation"] == "create")
        .unwrap();
    assert_eq!(create["ops"], 80, "20 files x 4 ranks: {create}");
    let per_rank = create["per_rank"].as_array().unwrap();
    assert!(per_rank
        .iter()
        .any(|p| p["host"] == hosts.names[1].as_str()));
    for rank in 0..4 {
        assert!(
            !dir.join(format!("rank-{rank}")).exists(),
            "removed when empty"
        );
    }
}

/// The plain build refuses a campaign under mpirun too: each rank would run the whole campaign
/// into a store of its own.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_campaign_under_mpirun_needs_the_mpi_build() {
    let scratch = Scratch::new();
    let out = common::fsbench()
        .args(["run", "--dry-run", "--db"])
        .arg(scratch.db())
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("this fsbench was built without MPI"),
        "{}",
        stderr(&out)
    );
}

/// Issue 14's campaign under mpirun: two ranks each prepare every configuration on a loop
/// device of their own, start every phase together, and rank 0 stores one run whose samples
/// are merged from both ranks' (keys end `.np2`); a filesystem the kernel lacks, a workload
/// that cannot be a rank and a shared file on per-rank filesystems are stored as unsupported
/// with their reasons, and nothing is left.
#[cfg(feature = "mpi")]
#[test]
fn a_campaign_under_mpirun_is_one_run_merged_from_every_rank() {
    if !common::root_or_skip("a_campaign_under_mpirun_is_one_run_merged_from_every_rank") {
        return;
    }
    let scratch = Scratch::new();
    let plan = scratch.plan(
        r#"
name = "mpi-campaign"
repetitions = 2
timeout = "5m"

[device]
image = "300m"

[[filesystems]]
name = "ext4"

[[filesystems]]
name = "jfs"

[[workloads]]
kind = "matrix"
name = "stream"
tests = ["write", "read"]
file_sizes = "1m"
record_sizes = "64k"
min_time = "20ms"

[[workloads]]
kind = "metadata"
name = "files"
count = 25
threads = 1
ops = ["create", "stat", "unlink"]

[[workloads]]
kind = "task"
name = "untar"
tasks = "untar"
method = "native"
compression = "none"
tree_fraction = 0.01

[[workloads]]
kind = "matrix"
name = "segments"
tests = ["write"]
file_sizes = "1m"
record_sizes = "64k"
shared_file = true
"#,
    );
    let out = mpirun(
        2,
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--quiet",
            "--db",
            scratch.db().to_str().unwrap(),
            "--work-dir",
            scratch.work().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = scratch.runs();
    assert_eq!(runs.matches("mpi-campaign").count(), 1, "one run: {runs}");
    let doc = scratch.export(1);
    assert_eq!(doc["runs"][0]["host"]["mpi"]["world_size"], 2);
    let cases = common::run_cases(&doc);
    assert_eq!(cases.len(), 8, "2 filesystems x 4 workloads");
    let case = |fs: &str, workload: &str| {
        cases
            .iter()
            .find(|c| {
                let key = c["key"].as_str().unwrap();
                key.starts_with(&format!("{fs}.")) && key.ends_with(&format!(".{workload}.np2"))
            })
            .unwrap_or_else(|| panic!("{fs} {workload}: {cases:?}"))
    };
    for sample in case("ext4", "stream")["samples"].as_array().unwrap() {
        assert_eq!(sample["status"], "ok", "{sample}");
        let results = common::flat_results_of(sample);
        let write = results
            .iter()
            .find(|r| r["phase"] == "write")
            .expect("a merged write");
        assert_eq!(number(&write["ranks"]), 2.0, "{write}");
        let per_rank = write["per_rank"].as_array().unwrap();
        let sum: f64 = per_rank.iter().map(|p| number(&p["bytes"])).sum();
        assert_eq!(number(&write["bytes"]), sum, "bytes add up: {write}");
        assert!(sum >= 2.0 * 1048576.0, "each rank wrote its file: {write}");
    }
    let files = case("ext4", "files")["samples"].as_array().unwrap();
    assert_eq!(files.len(), 2, "two repetitions");
    for sample in files {
        assert_eq!(sample["status"], "ok", "{sample}");
        let create = common::flat_results_of(sample)
            .into_iter()
            .find(|r| r["operation"] == "create")
            .unwrap();
        assert_eq!(create["ops"], 50, "25 files x 2 ranks: {create}");
        assert_eq!(sample["target"]["fsck"]["clean"], true, "rank 0's check");
    }
    let untar = &case("ext4", "untar")["samples"][0];
    assert_eq!(untar["status"], "unsupported");
    assert!(
        untar["reason"]
            .as_str()
            .unwrap()
            .contains("does not run under mpirun"),
        "{untar}"
    );
    let segments = &case("ext4", "segments")["samples"][0];
    assert_eq!(segments["status"], "unsupported");
    assert!(
        segments["reason"]
            .as_str()
            .unwrap()
            .contains("a shared file on targets of their own"),
        "{segments}"
    );
    let jfs = &case("jfs", "files")["samples"][0];
    assert_eq!(jfs["status"], "unsupported", "{jfs}");
    scratch.assert_clean();
}

/// A rank that fails mid-run (its directory is a tmpfs of 60 inodes: the creates after the
/// mkdirs run out) is named with its host; the others stop with it, and the phases every rank
/// finished are kept, merged over all of them.
#[cfg(feature = "mpi")]
#[test]
fn a_rank_that_fails_mid_run_is_named_and_the_phases_every_rank_finished_are_kept() {
    if !common::root_or_skip("a_rank_that_fails_mid_run_is_named") {
        return;
    }
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let small = common::ScratchMount::tmpfs("size=8m,nr_inodes=60");
    std::os::unix::fs::symlink(small.path(), dir.join("rank-1")).unwrap();
    let out = mpirun(
        3,
        &[
            "metadata",
            "--ops",
            "mkdir,create",
            "-n",
            "40",
            "-t",
            "1",
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains("rank 1 (host ") && said.contains("No space left on device"),
        "{said}"
    );
    let json = scratch.path().join("run.json");
    let export = common::fsbench()
        .args(["export", "1", "--db"])
        .arg(scratch.db())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let doc = common::read_json(&json);
    let sample = &common::run_cases(&doc)[0]["samples"][0];
    assert_eq!(sample["status"], "failed");
    let results = flat_results(&doc);
    assert_eq!(
        results.len(),
        1,
        "the mkdirs, made by every rank: {results:?}"
    );
    assert_eq!(results[0]["operation"], "mkdir");
    assert_eq!(results[0]["ops"], 120);
    assert_eq!(number(&results[0]["ranks"]), 3.0);
}

/// With --fs, every rank makes, mounts, checks and removes a filesystem of its own (a loop
/// device on its host), and the job is one run of that configuration.
#[cfg(feature = "mpi")]
#[test]
fn each_rank_prepares_a_filesystem_of_its_own_and_leaves_nothing() {
    if !common::root_or_skip("each_rank_prepares_a_filesystem_of_its_own") {
        return;
    }
    let scratch = Scratch::new();
    let json = scratch.path().join("run.json");
    let out = mpirun(
        2,
        &[
            "metadata",
            "--fs",
            "ext4",
            "--device",
            "image:256m",
            "-n",
            "30",
            "-t",
            "1",
            "--quiet",
            "--work-dir",
            scratch.work().to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = common::read_json(&json);
    let case = &common::run_cases(&doc)[0];
    assert!(
        case["key"].as_str().unwrap().starts_with("ext4.")
            && case["key"].as_str().unwrap().ends_with(".np2"),
        "{}",
        case["key"]
    );
    let sample = &case["samples"][0];
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(sample["target"]["fsck"]["clean"], true, "rank 0's check");
    let create = flat_results(&doc)
        .into_iter()
        .find(|r| r["operation"] == "create")
        .unwrap();
    assert_eq!(create["ops"], 60, "30 files x 2 ranks: {create}");
    scratch.assert_clean();
}

/// A campaign in a directory every rank sees (`fsbench run --dir`): no rank makes a
/// filesystem; each rank's metadata work is in `DIR/rank-N`, the matrix's shared file is in
/// `DIR` itself, made afresh by rank 0 while no rank has it open (each rank's workload asks its
/// campaign before and after that setup), rank 0 stores one merged run, and the directory is
/// left as it was.
#[cfg(feature = "mpi")]
#[test]
fn a_campaign_in_a_shared_directory_runs_every_rank_there() {
    let scratch = Scratch::new();
    let dir = scratch.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let plan = scratch.plan(
        r#"
name = "mpi-shared-dir"
repetitions = 1

[[workloads]]
kind = "metadata"
name = "files"
count = 20
threads = 1
ops = ["create", "unlink"]

[[workloads]]
kind = "matrix"
name = "segments"
tests = ["write", "read"]
file_sizes = "1m"
record_sizes = "64k"
min_time = "20ms"
shared_file = true
"#,
    );
    let out = mpirun(
        2,
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--quiet",
            "--dir",
            dir.to_str().unwrap(),
            "--db",
            scratch.db().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = scratch.export(1);
    let cases = common::run_cases(&doc);
    let case = |name: &str| {
        cases
            .iter()
            .find(|c| {
                let key = c["key"].as_str().unwrap();
                key.contains(".existing.existing.") && key.ends_with(&format!(".{name}.np2"))
            })
            .unwrap_or_else(|| panic!("{name}: {cases:?}"))
    };
    let files = &case("files")["samples"][0];
    assert_eq!(files["status"], "ok", "{files}");
    let create = common::flat_results_of(files)
        .into_iter()
        .find(|r| r["operation"] == "create")
        .unwrap();
    assert_eq!(create["ops"], 40, "20 files x 2 ranks: {create}");
    let segments = &case("segments")["samples"][0];
    assert_eq!(segments["status"], "ok", "{segments}");
    for r in common::flat_results_of(segments) {
        assert_eq!(number(&r["ranks"]), 2.0, "{r}");
        let per_rank = r["per_rank"].as_array().unwrap();
        let sum: f64 = per_rank.iter().map(|p| number(&p["bytes"])).sum();
        assert_eq!(number(&r["bytes"]), sum, "bytes add up: {r}");
        assert!(sum >= 2.0 * 1048576.0, "each rank its segment: {r}");
    }
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.is_empty(),
        "the shared file and the ranks' own directories are gone: {left:?}"
    );
    scratch.assert_nothing_mounted();
}

/// A rank of a campaign asked to stop (SIGTERM) mid-sample: the others stop with it at their
/// next phase (a nap has none: at its end), no rank starts another sample, rank 0 keeps the
/// samples that finished and marks the run interrupted, and no rank leaves a mount or a loop
/// device.
#[cfg(feature = "mpi")]
#[test]
fn a_campaign_rank_told_to_stop_stops_the_job_keeping_the_finished_samples() {
    if !common::root_or_skip("a_campaign_rank_told_to_stop_stops_the_job") {
        return;
    }
    let scratch = Scratch::new();
    let plan = scratch.plan(
        r#"
name = "mpi-stop"
timeout = "5m"

[device]
image = "300m"

[[filesystems]]
name = "ext4"

[[workloads]]
kind = "metadata"
name = "files"
count = 25
threads = 1
ops = ["create", "unlink"]

[[workloads]]
kind = "sleep"
name = "nap"
duration = "6s"

[[workloads]]
kind = "metadata"
name = "after"
count = 25
threads = 1
ops = ["create", "unlink"]
"#,
    );
    let marker = format!("FSBENCH_TEST_JOB={}", scratch.path().display());
    let (db, work) = (scratch.db(), scratch.work());
    let args = [
        "run",
        "--quiet",
        "--plan",
        plan.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--work-dir",
        work.to_str().unwrap(),
    ];
    let job = mpirun_command(2, &["-x", "FSBENCH_TEST_JOB"], &args)
        .env("FSBENCH_TEST_JOB", scratch.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first sample is stored (the nap runs), rank 1 is told to stop.
    wait_for_run(&db, "the first sample", |doc| {
        doc["runs"][0]["cases"]
            .as_array()
            .is_some_and(|cases| cases.iter().any(|c| c["samples"][0].is_object()))
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    let rank1 = rank_process_of(&marker, 1, "run").expect("rank 1's process");
    // SAFETY: kill(2) on a process this test's job started (its environment says so).
    assert_eq!(unsafe { libc::kill(rank1, libc::SIGTERM) }, 0);
    let out = job.wait_with_output().unwrap();
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains("run the campaign again under mpirun"),
        "{said}"
    );
    let doc = scratch.export(1);
    assert_eq!(
        doc["runs"][0]["status"], "interrupted",
        "{}",
        doc["runs"][0]
    );
    let cases = common::run_cases(&doc);
    let files = cases
        .iter()
        .find(|c| c["key"].as_str().unwrap().ends_with(".files.np2"))
        .unwrap();
    assert_eq!(files["samples"][0]["status"], "ok", "{files}");
    let nap = cases
        .iter()
        .find(|c| c["key"].as_str().unwrap().ends_with(".nap.np2"))
        .unwrap();
    assert!(
        nap["samples"].as_array().is_none_or(Vec::is_empty),
        "an interrupted sample is not stored: {nap}"
    );
    let after = cases
        .iter()
        .find(|c| c["key"].as_str().unwrap().ends_with(".after.np2"))
        .unwrap();
    assert!(
        after["samples"].as_array().is_none_or(Vec::is_empty),
        "no rank starts another sample: {after}"
    );
    scratch.wait_until_nothing_mounted(std::time::Duration::from_secs(30));
    scratch.assert_clean();
}

/// Issue 14's kill: a job of four ranks on two "hosts", each rank on an ext4 of its own; once
/// rank 0 has kept the first phase, rank 3 (on the second host) is killed mid-phase. mpirun
/// ends the job naming the rank and its host; the store keeps the phases every rank finished,
/// merged over all four; and no loop device, mount or image stays on either host (the killed
/// rank's guard undoes its filesystem).
#[cfg(feature = "mpi")]
#[test]
fn a_rank_killed_mid_phase_ends_the_job_keeping_what_was_measured_and_nothing_else() {
    if !common::root_or_skip("a_rank_killed_mid_phase_ends_the_job") {
        return;
    }
    let scratch = Scratch::new();
    let hosts = TwoHosts::new(&scratch);
    let marker = format!("FSBENCH_TEST_JOB={}", scratch.path().display());
    let (work, db) = (scratch.work(), scratch.db());
    let args = [
        "metadata",
        "--fs",
        "ext4",
        "--device",
        "image:256m",
        "--ops",
        "create,stat,unlink",
        "-n",
        "4000",
        "-t",
        "1",
        "--quiet",
        "--work-dir",
        work.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ];
    let job = hosts
        .command(&["-x", "FSBENCH_TEST_JOB"], &args)
        .env("FSBENCH_TEST_JOB", scratch.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for rank 0 to keep the first phase (the creates), then kill rank 3.
    wait_for_run(&scratch.db(), "a phase", |doc| {
        doc["runs"][0]["cases"][0]["samples"][0]["results"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    });
    let rank3 = rank_process(&marker, 3).expect("rank 3's process");
    // SAFETY: kill(2) on a process this test's job started (its environment says so).
    assert_eq!(unsafe { libc::kill(rank3, libc::SIGKILL) }, 0);
    let out = job.wait_with_output().unwrap();
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains("rank 3") && said.contains(TwoHosts::ADDRESSES[1]),
        "mpirun names the rank and its host: {said}"
    );
    let export = common::fsbench()
        .args(["export", "1", "--json", "-", "--db"])
        .arg(scratch.db())
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let doc: Value = serde_json::from_slice(&export.stdout).unwrap();
    let sample = &common::run_cases(&doc)[0]["samples"][0];
    assert_eq!(sample["status"], "failed", "{sample}");
    assert!(
        sample["reason"]
            .as_str()
            .unwrap()
            .contains("the results of the phases every rank finished"),
        "{sample}"
    );
    let create = flat_results(&doc)
        .into_iter()
        .find(|r| r["operation"] == "create")
        .expect("the creates every rank finished");
    assert_eq!(create["ops"], 16_000, "4000 files x 4 ranks: {create}");
    assert_eq!(number(&create["ranks"]), 4.0);
    // Every rank's filesystem is gone: the killed one's by its guard, the others' by theirs
    // or their own teardown.
    scratch.wait_until_nothing_mounted(std::time::Duration::from_secs(30));
    // The guards undo in reverse: unmount, detach, remove the image, then the mount point.
    let start = std::time::Instant::now();
    while std::fs::read_dir(scratch.work())
        .unwrap()
        .flatten()
        .any(|e| !["state", "run"].contains(&&*e.file_name().to_string_lossy()))
        && start.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    scratch.assert_clean();
}

/// The pid of the fsbench process that is rank `rank` of the job whose environment holds
/// `marker` (not its guard, which shares the environment, nor its mkfs or mount).
#[cfg(feature = "mpi")]
fn rank_process(marker: &str, rank: u32) -> Option<i32> {
    rank_process_of(marker, rank, "metadata")
}

/// As [`rank_process`], for the rank running `fsbench COMMAND`.
#[cfg(feature = "mpi")]
fn rank_process_of(marker: &str, rank: u32, command: &str) -> Option<i32> {
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let environ = std::fs::read(e.path().join("environ")).ok()?;
        let vars: Vec<&[u8]> = environ.split(|&b| b == 0).collect();
        let has = |v: &str| vars.contains(&v.as_bytes());
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let argv: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let is_rank = argv.first()?.ends_with(b"fsbench") && *argv.get(1)? == command.as_bytes();
        (has(marker) && has(&wanted) && is_rank).then_some(pid)
    })
}
