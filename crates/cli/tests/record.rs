//! `fsbench record` from the command line (as root): a shell command's calls in the root
//! recorded into a trace that reads back, the summary on standard error, the command's exit
//! status as fsbench's; a missing command, a bad --buffer and an output that is not a regular
//! file (a device, a pipe, a symbolic link) refused before anything runs.

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

#[test]
fn an_output_that_is_a_device_a_pipe_or_a_link_is_refused_before_the_command_runs() {
    if !root_or_skip(
        "an_output_that_is_a_device_a_pipe_or_a_link_is_refused_before_the_command_runs",
    ) {
        return;
    }
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    // /dev/null's own numbers, in a directory of the test's: as root, a trace written there
    // was renamed over the device node (and `-o /dev/null` over the host's).
    let null = dir.path().join("null");
    let fifo = dir.path().join("fifo");
    let target = dir.path().join("target");
    let link = dir.path().join("link");
    let cstr =
        |p: &std::path::Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid paths.
    unsafe {
        assert_eq!(
            libc::mknod(
                cstr(&null).as_ptr(),
                libc::S_IFCHR | 0o666,
                libc::makedev(1, 3)
            ),
            0
        );
        assert_eq!(libc::mkfifo(cstr(&fifo).as_ptr(), 0o600), 0);
    }
    std::fs::write(&target, b"precious").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let marker = dir.path().join("ran");
    for (out, what) in [
        (&null, "a character device"),
        (&fifo, "a pipe"),
        (&link, "a symbolic link"),
    ] {
        let run = fsbench()
            .args(["record", "-o"])
            .arg(out)
            .args(["--", "touch"])
            .arg(&marker)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
        assert!(stderr(&run).contains(what), "{}", stderr(&run));
        assert!(!marker.exists(), "the command ran");
    }
    let kind = |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().file_type();
    assert!(kind(&null).is_char_device());
    assert!(kind(&fifo).is_fifo());
    assert!(kind(&link).is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
}

/// The recorded command does not outlive a recorder killed outright (SIGKILL: no handler, no
/// clean-up): the kernel kills it with its parent, rather than leave it running unrecorded.
#[test]
fn a_recorder_killed_outright_takes_its_command_with_it() {
    if !root_or_skip("a_recorder_killed_outright_takes_its_command_with_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("app.trace");
    let mut recorder = fsbench()
        .current_dir(dir.path())
        .args(["record", "-o"])
        .arg(&trace)
        .args(["--", "sleep", "1000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The command, once it is `sleep` (executed: the recorder has let it go).
    let children = format!("/proc/{0}/task/{0}/children", recorder.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let command = loop {
        let found = std::fs::read_to_string(&children)
            .unwrap_or_default()
            .split_whitespace()
            .map(|p| p.parse::<i32>().unwrap())
            .find(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim() == "sleep")
            });
        if let Some(pid) = found {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the recorder never ran its command"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    // Gone, or a zombie waiting for whoever reaps orphans here.
    let ended = || {
        std::fs::read_to_string(format!("/proc/{command}/stat")).map_or(true, |s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !ended() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let still = ended();
    if !still {
        // SAFETY: the test's own grandchild, still running: not left behind.
        unsafe { libc::kill(command, libc::SIGKILL) };
    }
    assert!(still, "the command {command} outlived its recorder");
}
