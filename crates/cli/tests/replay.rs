//! The replay checked by recording it (as root): a two-thread trace whose second thread must
//! wait for the first (it opens the file the first creates, and renames it into the directory
//! the first lists) is replayed under `fsbench record`; the recording of the replay holds the
//! same calls in two threads, and every dependent call began after the call it depends on
//! ended. Without the rule (`--dependencies false`) the recording shows the order broken, so
//! the check can fail.

mod common;

use common::*;
use fsbench_trace::{End, Event, Header, Node, NodeKind, Op, Trace};
use std::path::Path;

const CREATE: i32 = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;

fn dependent_trace() -> Trace {
    let (a, b) = (11, 12);
    let ev = |tid, start_ns, ret, op| Event {
        pid: 11,
        tid,
        start_ns,
        dur_ns: 1,
        blocked_ns: 0,
        recorder_ns: 0,
        woken: None,
        ret,
        op,
    };
    let open = |path: &str, flags| Op::Open {
        path: path.into(),
        flags,
        mode: 0o644,
    };
    let mut events = vec![
        // B is alive from the start: nothing but the rule holds it back.
        ev(
            b,
            0,
            0,
            Op::Stat {
                path: ".".into(),
                follow: true,
            },
        ),
        ev(a, 10, 3, open("dir", libc::O_RDONLY | libc::O_DIRECTORY)),
        ev(a, 20, 4, open("pad", CREATE)),
    ];
    // A is held up: 16 MiB written and synced before it creates the file B needs.
    for i in 0..16 {
        events.push(ev(
            a,
            30 + i,
            1 << 20,
            Op::Write {
                fd: 4,
                len: 1 << 20,
            },
        ));
    }
    events.extend([
        ev(a, 100, 0, Op::Fsync { fd: 4 }),
        ev(a, 110, 0, Op::Close { fd: 4 }),
        ev(a, 120, 5, open("made", CREATE)),
        ev(a, 130, 0, Op::Close { fd: 5 }),
        ev(a, 140, 48, Op::Getdents { fd: 3, len: 32768 }),
        ev(b, 150, 6, open("made", libc::O_RDONLY)),
        ev(
            b,
            160,
            0,
            Op::Rename {
                from: "made".into(),
                to: "dir/made".into(),
                flags: 0,
            },
        ),
        ev(b, 170, 0, Op::Close { fd: 6 }),
        ev(a, 180, 0, Op::Close { fd: 3 }),
    ]);
    Trace {
        header: Header {
            command: vec!["two-threads".into()],
            root: "/app".into(),
            recorded_at_unix_s: 0,
            host: String::new(),
            kernel: String::new(),
            mechanism: "by hand".into(),
            anonymised: false,
            contents: false,
        },
        tree: vec![Node {
            path: "dir".into(),
            kind: NodeKind::Dir,
            mode: 0o755,
        }],
        events,
        end: End {
            duration_ns: 200,
            ..End::default()
        },
    }
}

/// The replay of `trace` recorded: the recording of the replay, read back.
fn record_the_replay(dir: &Path, trace: &Path, dependencies: bool) -> Trace {
    let root = dir.join(format!("root-{dependencies}"));
    std::fs::create_dir(&root).unwrap();
    let recorded = dir.join(format!("replay-{dependencies}.trace"));
    let out = fsbench()
        .args(["record", "--root"])
        .arg(&root)
        .arg("-o")
        .arg(&recorded)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_fsbench"))
        .args(["replay", "--no-store", "--quiet", "--dir"])
        .arg(&root)
        .arg("--trace")
        .arg(trace)
        .args([
            "--dependencies",
            if dependencies { "true" } else { "false" },
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    Trace::read(&recorded).unwrap()
}

/// The first call of the recording matching `what` on a path ending in `/name` (the replay
/// works in a scratch directory of its own under the root).
fn find<'t>(t: &'t Trace, name: &str, what: &dyn Fn(&Op) -> bool) -> &'t Event {
    t.events
        .iter()
        .find(|e| {
            what(&e.op)
                && e.op
                    .paths()
                    .first()
                    .is_some_and(|p| p.ends_with(&format!("/{name}")))
        })
        .unwrap_or_else(|| panic!("no call on {name} in the recording of the replay"))
}

fn ended(e: &Event) -> u64 {
    e.start_ns + e.dur_ns
}

#[test]
fn a_recorded_replay_issues_the_same_calls_in_an_order_that_keeps_the_rule() {
    if !root_or_skip("a_recorded_replay_issues_the_same_calls_in_an_order_that_keeps_the_rule") {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let trace = dir.path().join("two-threads.trace");
    dependent_trace().write(&trace).unwrap();

    let r = record_the_replay(dir.path(), &trace, true);
    let creates = |op: &Op| matches!(op, Op::Open { flags, .. } if flags & libc::O_CREAT != 0);
    let reads = |op: &Op| matches!(op, Op::Open { flags, .. } if flags & libc::O_ACCMODE == libc::O_RDONLY && flags & libc::O_DIRECTORY == 0);
    let a_create = find(&r, "made", &creates);
    let b_open = find(&r, "made", &reads);
    let rename = find(&r, "made", &|op| matches!(op, Op::Rename { .. }));
    let pad = find(&r, "pad", &creates);
    // The same calls: A's 16 MiB to pad and its fsync, the create, B's open and rename.
    let pad_fd = pad.ret as i32;
    let written: u64 = r
        .events
        .iter()
        .filter(|e| e.tid == pad.tid && matches!(e.op, Op::Write { fd, .. } | Op::Pwrite { fd, .. } | Op::Writev { fd, .. } if fd == pad_fd))
        .map(|e| e.ret as u64)
        .sum();
    assert_eq!(written, 16 << 20, "A's writes replayed whole");
    assert!(r
        .events
        .iter()
        .any(|e| e.tid == pad.tid && matches!(e.op, Op::Fsync { fd } if fd == pad_fd)));
    assert!(
        a_create.ret >= 0 && b_open.ret >= 0 && rename.ret == 0,
        "no call diverged: {a_create:?} {b_open:?} {rename:?}"
    );
    assert!(matches!(&rename.op, Op::Rename { to, .. } if to.ends_with("/dir/made")));
    // In two threads, as recorded.
    assert_eq!(a_create.tid, pad.tid);
    assert_eq!(b_open.tid, rename.tid);
    assert_ne!(
        a_create.tid, b_open.tid,
        "A's and B's calls in threads of their own"
    );
    // The rule: B's open began after A's create ended; B's rename after A's listing ended.
    assert!(
        b_open.start_ns >= ended(a_create),
        "B opened before A created: {b_open:?} {a_create:?}"
    );
    let listing = r
        .events
        .iter()
        .find(|e| {
            e.tid == a_create.tid
                && matches!(e.op, Op::Getdents { .. })
                && e.start_ns > a_create.start_ns
        })
        .expect("A's listing of dir replayed");
    assert!(
        rename.start_ns >= ended(listing),
        "B renamed into dir before A listed it"
    );

    // Without the rule B does not wait: its open comes before A's create (and fails).
    let r = record_the_replay(dir.path(), &trace, false);
    let a_create = find(&r, "made", &creates);
    let b_open = find(&r, "made", &reads);
    assert!(
        b_open.start_ns < a_create.start_ns,
        "without the rule B ran ahead of A"
    );
    assert!(b_open.ret < 0, "and its open failed: {b_open:?}");
}
