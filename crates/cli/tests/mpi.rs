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
    Command::new("mpirun")
        .args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_fsbench"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl", "self,vader")
        .output()
        .expect("mpirun (scripts/install-deps.sh --mpi)")
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
        for rank in 0..ranks {
            assert!(
                dir.join(format!("rank-{rank}")).is_dir(),
                "rank {rank}'s directory"
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
