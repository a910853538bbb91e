//! The trace file: written and read back whole; every damaged or foreign file refused with its
//! reason; anonymised traces keep their structure and lose their names.

use std::io::Write;

use fsbench_trace::anonymise::anonymise;
use fsbench_trace::stats::Stats;
use fsbench_trace::{End, Event, Header, Node, NodeKind, Op, Trace, TraceError, FORMAT_VERSION};

fn sample() -> Trace {
    let event = |tid, start_ns, ret, op| Event {
        pid: 100,
        tid,
        start_ns,
        dur_ns: 500,
        blocked_ns: 0,
        recorder_ns: 0,
        woken: None,
        ret,
        op,
    };
    Trace {
        header: Header {
            command: vec!["app".into(), "--secret-db".into()],
            root: "/srv/secret-project".into(),
            recorded_at_unix_s: 1_800_000_000,
            host: "build-host".into(),
            kernel: "6.18".into(),
            mechanism: "test".into(),
            anonymised: false,
            contents: false,
        },
        tree: vec![
            Node {
                path: "db".into(),
                kind: NodeKind::Dir,
                mode: 0o755,
            },
            Node {
                path: "db/customers.sqlite".into(),
                kind: NodeKind::File { size: 65536 },
                mode: 0o644,
            },
            Node {
                path: "latest".into(),
                kind: NodeKind::Symlink {
                    target: "db/customers.sqlite".into(),
                },
                mode: 0o777,
            },
        ],
        events: vec![
            event(
                100,
                10,
                3,
                Op::Open {
                    path: "db/customers.sqlite".into(),
                    flags: libc::O_RDWR,
                    mode: 0,
                },
            ),
            event(
                100,
                20,
                4096,
                Op::Pread {
                    fd: 3,
                    len: 4096,
                    off: 0,
                },
            ),
            event(
                101,
                25,
                0,
                Op::Stat {
                    path: "db/customers.sqlite".into(),
                    follow: true,
                },
            ),
            event(
                100,
                30,
                100,
                Op::Pwrite {
                    fd: 3,
                    len: 100,
                    off: 4096,
                },
            ),
            event(100, 40, 0, Op::Fsync { fd: 3 }),
            event(
                101,
                45,
                -libc::ENOENT as i64,
                Op::Unlink {
                    path: "db/customers.sqlite-journal".into(),
                },
            ),
            event(
                100,
                50,
                0,
                Op::Rename {
                    from: "db/customers.sqlite".into(),
                    to: "db/old.sqlite".into(),
                    flags: 0,
                },
            ),
            event(100, 60, 0, Op::Close { fd: 3 }),
        ],
        end: End {
            nodes: 3,
            events: 8,
            duration_ns: 1_000,
            ..End::default()
        },
    }
}

#[test]
fn a_trace_is_read_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.trace");
    let trace = sample();
    trace.write(&path).unwrap();
    assert_eq!(Trace::read(&path).unwrap(), trace);
    // Nothing but the trace is left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // Readable by its owner only (as perf.data): it names every file the application used.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let stats = Stats::of(&trace);
    assert_eq!(stats.events, 8);
    assert_eq!((stats.processes, stats.threads), (1, 2));
    assert_eq!((stats.bytes_read, stats.bytes_written), (4096, 100));
    assert_eq!(stats.by_op["unlink"].errors, 1);
    assert_eq!(
        stats.files, 3,
        "customers.sqlite, its journal and old.sqlite"
    );
    assert_eq!(
        (stats.tree_files, stats.tree_dirs, stats.tree_bytes),
        (1, 1, 65536)
    );
}

#[test]
fn damaged_and_foreign_files_are_refused_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.trace");
    sample().write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let write = |name: &str, data: &[u8]| {
        let p = dir.path().join(name);
        std::fs::File::create(&p).unwrap().write_all(data).unwrap();
        p
    };
    // Cut short anywhere in the compressed stream.
    for cut in [13, bytes.len() / 2, bytes.len() - 9] {
        let p = write("cut.trace", &bytes[..cut]);
        let err = Trace::read(&p).unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::Truncated { .. } | TraceError::Corrupt { .. }
            ),
            "cut at {cut}: {err}"
        );
    }
    // Not a trace at all.
    let err = Trace::read(&write("text.trace", b"hello, world\n")).unwrap_err();
    assert!(matches!(err, TraceError::NotATrace(_)), "{err}");
    let err = Trace::read(&write("empty.trace", b"")).unwrap_err();
    assert!(matches!(err, TraceError::NotATrace(_)), "{err}");
    // A newer version.
    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = Trace::read(&write("newer.trace", &newer)).unwrap_err();
    assert!(
        matches!(err, TraceError::NewerVersion { found, .. } if found == FORMAT_VERSION + 1),
        "{err}"
    );
    assert!(err.to_string().contains("newer fsbench"), "{err}");
    // An older version (1: before chown events) is read as it is.
    let mut older = bytes.clone();
    older[8..12].copy_from_slice(&1u32.to_le_bytes());
    let read = Trace::read(&write("older.trace", &older)).unwrap();
    assert_eq!(
        read.events.len(),
        Trace::read(&write("same.trace", &bytes))
            .unwrap()
            .events
            .len()
    );
    // A flipped byte inside the compressed data: gzip's check, or a line that does not parse.
    let mut flipped = bytes.clone();
    let at = 12 + (bytes.len() - 12) / 2;
    flipped[at] ^= 0x55;
    let err = Trace::read(&write("flipped.trace", &flipped)).unwrap_err();
    assert!(
        matches!(
            err,
            TraceError::Corrupt { .. } | TraceError::Truncated { .. }
        ),
        "{err}"
    );
    // Well-formed lines whose end disagrees with them.
    let mut short = sample();
    short.events.pop();
    let p = dir.path().join("short.trace");
    let mut writer = fsbench_trace::TraceWriter::create(&p, &short.header).unwrap();
    for e in &short.events {
        writer.event(e).unwrap();
    }
    writer.finish(End::default()).unwrap();
    assert_eq!(
        Trace::read(&p).unwrap().events.len(),
        7,
        "the writer's own counts are right"
    );
}

#[test]
fn an_unfinished_writer_leaves_nothing_under_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.trace");
    let trace = sample();
    let mut writer = fsbench_trace::TraceWriter::create(&path, &trace.header).unwrap();
    writer.event(&trace.events[0]).unwrap();
    drop(writer);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn an_anonymised_trace_has_no_original_name_and_the_same_structure() {
    let mut trace = sample();
    anonymise(&mut trace);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anon.trace");
    trace.write(&path).unwrap();
    let raw = {
        let mut s = String::new();
        let bytes = std::fs::read(&path).unwrap();
        let mut d = flate2::read::MultiGzDecoder::new(&bytes[12..]);
        std::io::Read::read_to_string(&mut d, &mut s).unwrap();
        s
    };
    for secret in [
        "customers",
        "sqlite",
        "secret",
        "db/",
        "build-host",
        "journal",
        "old",
        "latest",
    ] {
        assert!(!raw.contains(secret), "{secret:?} survived anonymisation");
    }
    let read = Trace::read(&path).unwrap();
    assert!(read.header.anonymised);
    let original = sample();
    // The same name hashes the same everywhere: the open, the stat and the rename name one file.
    let open_path = read.events[0].op.paths()[0].to_owned();
    assert_eq!(read.events[2].op.paths()[0], open_path);
    assert_eq!(read.events[6].op.paths()[0], open_path);
    assert_eq!(read.tree[1].path, open_path);
    assert_eq!(
        open_path.split('/').count(),
        2,
        "the directory structure is kept"
    );
    assert_eq!(read.tree[0].path, open_path.split('/').next().unwrap());
    // Sizes, offsets, returns and timing are kept.
    assert_eq!(read.tree[1].kind, original.tree[1].kind);
    for (a, b) in read.events.iter().zip(&original.events) {
        assert_eq!(
            (a.pid, a.tid, a.start_ns, a.dur_ns, a.ret),
            (b.pid, b.tid, b.start_ns, b.dur_ns, b.ret)
        );
        assert_eq!(a.op.name(), b.op.name());
        assert_eq!(a.op.fd(), b.op.fd());
    }
}

/// The entries of a directory, by name.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_output_that_cannot_take_the_trace_leaves_no_temporary_behind() {
    let dir = tempfile::tempdir().unwrap();
    // The output path is a directory: refused, and no partial file beside it.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let err = sample().write(&out).unwrap_err();
    assert!(matches!(err, TraceError::Io { .. }), "{err}");
    assert_eq!(names(dir.path()), ["out"]);
    assert_eq!(names(&out), Vec::<String>::new());
    // A path ending in a slash names a directory too (never a file written beside it).
    let slash = dir.path().join("sub/");
    let err = sample().write(&slash).unwrap_err();
    assert!(matches!(err, TraceError::Io { .. }), "{err}");
    assert_eq!(names(dir.path()), ["out"]);
}

#[test]
fn a_pipe_or_a_symbolic_link_at_the_output_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"precious").unwrap();
    let link = dir.path().join("link.trace");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = dir.path().join("fifo.trace");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (out, what) in [(&link, "a symbolic link"), (&fifo, "a pipe")] {
        let err = sample().write(out).unwrap_err().to_string();
        assert!(err.contains(what), "{err}");
    }
    use std::os::unix::fs::FileTypeExt;
    let kind = |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().file_type();
    assert!(kind(&link).is_symlink());
    assert!(kind(&fifo).is_fifo());
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    assert_eq!(names(dir.path()), ["fifo.trace", "link.trace", "target"]);
    // A regular file there is replaced, whole.
    sample().write(&target).unwrap();
    assert_eq!(Trace::read(&target).unwrap(), sample());
}

#[test]
fn the_temporary_is_never_opened_through_a_planted_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let out = dir.path().join("app.trace");
    // The temporary's name is predictable (the pid): someone who can write in the output's
    // directory plants a link there; root must not write through it.
    let pid = std::process::id();
    let planted: Vec<_> = [format!("{pid}"), format!("{pid}-0"), format!("{pid}-1")]
        .iter()
        .map(|suffix| dir.path().join(format!(".app.trace.partial-{suffix}")))
        .collect();
    for link in &planted {
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    sample().write(&out).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(Trace::read(&out).unwrap(), sample());
    for link in &planted {
        let kind = std::fs::symlink_metadata(link).unwrap().file_type();
        assert!(kind.is_symlink(), "{}", link.display());
    }
}

/// A tmpfs of a few KiB, unmounted when dropped.
struct TinyFs(tempfile::TempDir);

impl Drop for TinyFs {
    fn drop(&mut self) {
        let target = std::ffi::CString::new(self.0.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

#[test]
fn a_full_disk_leaves_no_temporary_behind() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = std::ffi::CString::new(dir.path().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated strings.
    let rc = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            c"size=16k".as_ptr().cast(),
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    let fs = TinyFs(dir);
    let mut big = sample();
    let template = big.events[0].clone();
    for i in 0..20_000u64 {
        let mut e = template.clone();
        e.start_ns = 1_000_000 + i;
        e.op = Op::Stat {
            path: format!("d/{:016x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            follow: true,
        };
        big.events.push(e);
    }
    let out = fs.0.path().join("app.trace");
    let err = big.write(&out).unwrap_err();
    assert!(err.to_string().contains("No space left"), "{err}");
    assert_eq!(names(fs.0.path()), Vec::<String>::new());
}

#[test]
fn a_huge_line_is_refused_before_it_is_held_in_memory() {
    use flate2::write::GzEncoder;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.trace");
    let mut header = sample().header;
    // A well-formed header line of 65 MiB (a gzip bomb: it compresses to a few KiB).
    header.command = vec!["a".repeat(65 << 20)];
    let mut file = std::fs::File::create(&p).unwrap();
    file.write_all(b"FSBTRACE").unwrap();
    file.write_all(&FORMAT_VERSION.to_le_bytes()).unwrap();
    let mut gz = GzEncoder::new(file, flate2::Compression::fast());
    serde_json::to_writer(&mut gz, &serde_json::json!({ "header": header })).unwrap();
    gz.write_all(b"\n{\"end\":{\"nodes\":0,\"events\":0,\"duration_ns\":0,\"lost_events\":0,\"outside_events\":0,\"unsupported\":{}}}\n")
        .unwrap();
    gz.finish().unwrap();
    let err = match Trace::read(&p) {
        Ok(_) => panic!("a 65 MiB line was read whole"),
        Err(e) => e,
    };
    assert!(matches!(err, TraceError::Corrupt { line: 1, .. }), "{err}");
    assert!(err.to_string().contains("longer than"), "{err}");
    // Nor is such a line ever written.
    let mut trace = sample();
    trace.header = header;
    assert!(trace.write(&dir.path().join("w.trace")).is_err());
    assert_eq!(names(dir.path()), ["huge.trace"]);
}

#[test]
fn stats_of_absurd_values_do_not_overflow() {
    let mut trace = sample();
    for e in &mut trace.events {
        e.ret = i64::MAX;
        e.dur_ns = u64::MAX;
    }
    trace.tree.push(Node {
        path: "big".into(),
        kind: NodeKind::File { size: u64::MAX },
        mode: 0o644,
    });
    let stats = Stats::of(&trace);
    assert_eq!(stats.tree_bytes, u64::MAX);
    assert!(stats.bytes_read >= i64::MAX as u64 && stats.bytes_written >= i64::MAX as u64);
    assert_eq!(stats.by_op["pread"].time_ns, u64::MAX);
}
