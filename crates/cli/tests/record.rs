//! `fsbench record` from the command line (as root): a shell command's calls in the root
//! recorded into a trace that reads back, the summary on standard error, the command's exit
//! status as fsbench's; a missing command and a bad --buffer refused before anything runs.

mod common;

use common::*;
use fsbench_trace::{Op, Trace};

#[test]
fn a_command_is_recorded_and_its_exit_status_is_fsbenchs() {
    if !root_or_skip("a_command_is_recorded_and_its_exit_status_is_fsbenchs") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("input"), b"12345").unwrap();
    let trace = dir.path().join("app.trace");
    let out = fsbench()
        .current_dir(&root)
        .args(["record", "-o"])
        .arg(&trace)
        .args([
            "--",
            "sh",
            "-c",
            "cat input > output; mkdir sub; mv output sub/kept; exit 7",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(
        err.contains("the recorded command exited with status 7"),
        "{err}"
    );
    assert!(err.contains("lost 0"), "{err}");
    let trace = Trace::read(&trace).unwrap();
    assert_eq!(
        trace.header.root,
        root.canonicalize().unwrap().to_str().unwrap()
    );
    assert!(trace.tree.iter().any(|n| n.path == "input"));
    let has = |f: &dyn Fn(&Op) -> bool| trace.events.iter().any(|e| f(&e.op));
    assert!(has(
        &|op| matches!(op, Op::Open { path, .. } if path == "output")
    ));
    assert!(has(
        &|op| matches!(op, Op::Open { path, .. } if path == "input")
    ));
    assert!(has(
        &|op| matches!(op, Op::Mkdir { path, .. } if path == "sub")
    ));
    assert!(has(
        &|op| matches!(op, Op::Rename { from, to, .. } if from == "output" && to == "sub/kept")
    ));
    assert!(has(&|op| matches!(op, Op::Fork { .. })));
    let summary = format!("{} events", trace.events.len());
    assert!(err.contains(&summary), "{err}");
}

#[test]
fn nothing_to_record_and_a_bad_buffer_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace");
    let out = fsbench()
        .args(["record", "--buffer", "12Q", "-o"])
        .arg(&trace)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--buffer"), "{}", stderr(&out));
    let out = fsbench()
        .args(["record", "-o"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!trace.exists());
}
