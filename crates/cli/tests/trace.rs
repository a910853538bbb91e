//! `fsbench trace show|stats` on a trace written by the trace crate: every call shown with its
//! arguments and return, the counts by operation right, names escaped; a damaged trace and a
//! file that is not one refused with the reason and the usage exit code.

mod common;

use common::*;
use fsbench_trace::{End, Event, Header, Node, NodeKind, Op, Trace};
use std::process::Output;

fn trace_cmd(args: &[&str]) -> Output {
    fsbench().arg("trace").args(args).output().unwrap()
}

fn sample() -> Trace {
    let event = |tid, start_ns, ret, op| Event {
        pid: 7,
        tid,
        start_ns,
        dur_ns: 2_000,
        blocked_ns: 0,
        recorder_ns: 0,
        woken: None,
        ret,
        op,
    };
    Trace {
        header: Header {
            command: vec!["sqlite3".into(), "app.db".into()],
            root: "/srv/app".into(),
            recorded_at_unix_s: 1_800_000_000,
            host: "h".into(),
            kernel: "6.18".into(),
            mechanism: "test".into(),
            anonymised: false,
            contents: false,
        },
        tree: vec![Node {
            path: "app.db".into(),
            kind: NodeKind::File { size: 8192 },
            mode: 0o644,
        }],
        events: vec![
            event(
                7,
                1_000,
                3,
                Op::Open {
                    path: "app.db".into(),
                    flags: libc::O_RDWR,
                    mode: 0,
                },
            ),
            event(
                7,
                2_000,
                4096,
                Op::Pread {
                    fd: 3,
                    len: 4096,
                    off: 0,
                },
            ),
            event(
                8,
                3_000,
                512,
                Op::Pwrite {
                    fd: 3,
                    len: 512,
                    off: 8192,
                },
            ),
            event(8, 4_000, 0, Op::Fsync { fd: 3 }),
            event(
                7,
                5_000,
                -(libc::ENOENT as i64),
                Op::Unlink {
                    path: "app.db-journal\u{1b}[2J".into(),
                },
            ),
            event(7, 6_000, 0, Op::Close { fd: 3 }),
        ],
        end: End {
            duration_ns: 10_000,
            outside_events: 2,
            ..End::default()
        },
    }
}

#[test]
fn a_trace_is_shown_call_by_call_and_counted_by_operation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.trace");
    sample().write(&path).unwrap();
    let p = path.to_str().unwrap();

    let out = trace_cmd(&["show", p]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("command:   sqlite3 app.db"), "{text}");
    assert!(text.contains("pread fd=3 len=4096 off=0"), "{text}");
    assert!(text.contains("pwrite fd=3 len=512 off=8192"), "{text}");
    assert!(text.contains("7/8"), "the thread is shown: {text}");
    assert!(
        text.contains("-2 (NotFound)"),
        "a failed call shows its errno: {text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "a control character in a name is escaped: {text}"
    );
    assert!(text.contains("events:    6"), "{text}");

    let out = trace_cmd(&["show", "--limit", "2", p]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("… 4 more"), "{text}");
    assert!(!text.contains("fsync"), "{text}");

    let out = trace_cmd(&["show", "--json", p]);
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1 + 1 + 6 + 1, "header, node, events, end");
    assert_eq!(lines[3]["event"]["op"], "pread");

    let out = trace_cmd(&["stats", "--json", p]);
    assert!(out.status.success());
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["events"], 6);
    assert_eq!(stats["threads"], 2);
    assert_eq!(stats["processes"], 1);
    assert_eq!(stats["bytes_read"], 4096);
    assert_eq!(stats["bytes_written"], 512);
    assert_eq!(stats["by_op"]["unlink"]["errors"], 1);
    assert_eq!(stats["by_op"]["pread"]["calls"], 1);
    assert_eq!(stats["outside_events"], 2);
    assert_eq!(stats["tree_bytes"], 8192);

    let out = trace_cmd(&["stats", p]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("6 by 2 threads in 1 processes"), "{text}");
    assert!(text.contains("2 calls outside the root; 0 lost"), "{text}");
}

#[test]
fn a_damaged_trace_or_another_file_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.trace");
    sample().write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.trace");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = trace_cmd(&["stats", cut.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad trace is the user's input"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("truncated") || err.contains("corrupt"),
        "{err}"
    );

    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "hello\n").unwrap();
    let out = trace_cmd(&["show", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an fsbench trace"));

    let out = trace_cmd(&["show", dir.path().join("missing.trace").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.trace"));
}

#[test]
fn absurd_values_in_a_well_formed_trace_are_shown_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.trace");
    let mut trace = sample();
    for e in &mut trace.events {
        e.ret = i64::MIN;
        e.dur_ns = u64::MAX;
    }
    trace.tree[0].kind = NodeKind::File { size: u64::MAX };
    trace.tree.push(Node {
        path: "b".into(),
        kind: NodeKind::File { size: u64::MAX },
        mode: 0o644,
    });
    trace.write(&path).unwrap();
    let p = path.to_str().unwrap();
    for args in [["show", p], ["stats", p]] {
        let out = trace_cmd(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
