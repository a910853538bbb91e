//! `fsbench matrix` end to end: the real binary on real directories (tmpfs mounts when root).
//!
//! - shape: every expected cell and phase, and no other
//! - honesty: files reach their size with incompressible content; reads count what they read;
//!   each phase repeats until its minimum time
//! - bad input: one-line errors with what to change, the right exit code, nothing left behind
//! - interruption and full disks: finished results kept, the test file removed

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const KIB: u64 = 1024;

fn results(doc: &Value) -> Vec<Value> {
    flat_results(doc)
}

/// Waits until the matrix's own test file under `dir` (`fsbench-matrix-*`; not the buffer
/// placement's calibration file) has a length `len_ok` accepts; fails the test at `deadline`.
fn wait_for_test_file(dir: &Path, len_ok: impl Fn(u64) -> bool, deadline: Instant) {
    while !files_under(dir).iter().any(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("fsbench-matrix-"))
            && std::fs::metadata(p).is_ok_and(|m| len_ok(m.len()))
    }) {
        assert!(
            Instant::now() < deadline,
            "the matrix's test file never came as awaited"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn yields_every_expected_cell_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("m.json");
    let output = fsbench()
        .args([
            "matrix",
            "--tests",
            "write,read,2",
            "--file-sizes",
            "4k..64k",
        ])
        .args(["--record-sizes", "4k..16k", "--min-time", "2ms", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = read_json(&json);
    assert_eq!(doc["schema"], "fsbench.run");
    assert_eq!(first_sample(&doc)["status"], "ok");

    let phases = [
        "write",
        "rewrite",
        "read",
        "reread",
        "random-read",
        "random-write",
    ];
    let mut expected = BTreeSet::new();
    for file in [4, 8, 16, 32, 64] {
        for record in [4, 8, 16].into_iter().filter(|&r| r <= file) {
            for phase in phases {
                expected.insert((phase.to_string(), file * KIB, record * KIB));
            }
        }
    }
    let got: BTreeSet<(String, u64, u64)> = results(&doc)
        .iter()
        .map(|r| {
            (
                r["phase"].as_str().unwrap().to_string(),
                r["file_size_bytes"].as_u64().unwrap(),
                r["record_size_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(
        results(&doc).len(),
        expected.len(),
        "a cell was measured twice"
    );

    for r in &results(&doc) {
        let (file, record) = (
            r["file_size_bytes"].as_u64().unwrap(),
            r["record_size_bytes"].as_u64().unwrap(),
        );
        let passes = r["passes"].as_u64().unwrap();
        assert!(passes >= 1);
        // Every pass moves the whole file, one record per operation: reads count what they got.
        assert_eq!(r["ops"].as_u64().unwrap(), passes * file / record, "{r}");
        assert_eq!(r["bytes"].as_u64().unwrap(), passes * file, "{r}");
        assert_eq!(r["latency_count"].as_u64().unwrap(), passes * file / record);
        // Passes repeat until the minimum measured time.
        assert!(r["elapsed"].as_u64().unwrap() >= 2_000_000, "{r}");
        assert!(r["ops_rate"].as_f64().unwrap() > 0.0);
        // The buffers sat where the calibration on this host found copies fastest.
        for key in ["read_buffer_offset_bytes", "write_buffer_offset_bytes"] {
            let at = r[key].as_u64().unwrap();
            assert!([0, 16, 64, 2048, 4000].contains(&at), "{key} {at}");
        }
        let cache = r["cache_state"].as_str().unwrap();
        if r["phase"] == "write" {
            assert_eq!(cache, "new-file");
        } else {
            assert!(["warm", "partial", "cold"].contains(&cache), "{cache}");
        }
    }
    assert!(
        entries(dir.path()).is_empty(),
        "left behind: {:?}",
        entries(dir.path())
    );
    assert!(
        stderr(&output).contains("results in"),
        "the time it took is printed"
    );
    let grid = stdout(&output);
    assert!(grid.contains("Writer report") && grid.contains("Random write report"));
}

#[test]
fn small_cells_repeat_passes_instead_of_quantising() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let output = fsbench()
        .args([
            "matrix",
            "-i",
            "1",
            "--file-sizes",
            "4k",
            "--record-sizes",
            "4k",
        ])
        .args(["--min-time", "20ms", "--quiet", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(&work)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = read_json(&json);
    for r in &results(&doc) {
        // One 4 KiB read takes about a microsecond: 20 ms needs thousands of passes.
        assert!(r["passes"].as_u64().unwrap() > 100, "{r}");
        // The spread of the per-pass rates is recorded with them.
        assert!(r["pass_rate_stddev"].as_f64().unwrap() >= 0.0, "{r}");
        assert!(r["pass_rate_cv"].as_f64().unwrap() >= 0.0, "{r}");
        // No rate is a round clock quantum like iozone's 1,000,000 ops/s.
        assert_ne!(r["ops_rate"].as_f64().unwrap() % 1_000_000.0, 0.0);
    }
}

/// `--passes 1` is iozone's one timed pass per cell (study 000): every stored result of every
/// cell and phase is one pass over the file, however short, and says how much the clock's
/// resolution alone may be off by (`quantisation`); `--passes 3` is three.
#[test]
fn passes_stores_exactly_that_many_passes_per_cell() {
    for passes in [1u64, 3] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("m.json");
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let output = fsbench()
            .args(["matrix", "-i", "write,read,random"])
            .args(["--file-sizes", "4k..64k", "--record-sizes", "4k..16k"])
            .args(["--passes", &passes.to_string(), "--quiet", "--json"])
            .arg(&json)
            .arg("--dir")
            .arg(&work)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let doc = read_json(&json);
        let all = results(&doc);
        assert_eq!(all.len(), 12 * 6, "every cell and phase");
        for r in &all {
            assert_eq!(r["passes"].as_u64().unwrap(), passes, "{r}");
            let (file, record) = (
                r["file_size_bytes"].as_u64().unwrap(),
                r["record_size_bytes"].as_u64().unwrap(),
            );
            assert_eq!(r["ops"].as_u64().unwrap(), passes * file / record, "{r}");
            // A few ns of clock resolution over microseconds of measured time.
            let q = r["quantisation"].as_f64().unwrap();
            let resolution = q * r["elapsed"].as_f64().unwrap();
            assert!(q > 0.0 && (0.9..=1000.0).contains(&resolution), "{r}");
        }
    }
    // Without it, passes repeat until --min-time and no quantisation is stored.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let output = fsbench()
        .args([
            "matrix",
            "-i",
            "read",
            "--file-sizes",
            "4k",
            "--record-sizes",
            "4k",
        ])
        .args(["--min-time", "100ms", "--quiet", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    for r in &results(&read_json(&json)) {
        assert!(r["passes"].as_u64().unwrap() > 1, "{r}");
        assert!(r.get("quantisation").is_none(), "{r}");
    }
}

#[test]
fn written_files_reach_their_size_with_incompressible_unique_content() {
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "matrix",
            "--tests",
            "write",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
        ])
        .args(["--min-time", "0", "--keep", "--quiet", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let kept = entries(dir.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let content = std::fs::read(&kept[0]).unwrap();
    assert_eq!(content.len() as u64, 1024 * KIB);
    let blocks: BTreeSet<&[u8]> = content.chunks(4096).collect();
    assert_eq!(blocks.len(), 256, "every 4 KiB block differs");
    let compressed = gzip_size(&content);
    assert!(
        compressed as f64 >= content.len() as f64 * 0.99,
        "gzip shrank it to {compressed}"
    );

    // Zero data is honoured when asked for, and then it compresses.
    let zero_dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args([
            "matrix",
            "-i",
            "0",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
            "--data",
            "zero",
        ])
        .args(["--min-time", "0", "--keep", "--quiet", "--dir"])
        .arg(zero_dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let zero = std::fs::read(&entries(zero_dir.path())[0]).unwrap();
    assert_eq!(zero.len() as u64, 1024 * KIB);
    assert!(gzip_size(&zero) < 10_000);
}

/// `--verify` on real filesystems: every test that writes reads back what it wrote on ext4 and
/// xfs (loop devices; each phase's file synced, evicted and read back), the run ends ok and
/// says so in the JSON; in a directory the kept file carries a header on every 4 KiB block —
/// the magic, and the block's own offset — that anyone can check.
#[test]
fn verified_writes_read_back_on_real_filesystems_and_the_file_carries_its_headers() {
    if !root_or_skip(
        "verified_writes_read_back_on_real_filesystems_and_the_file_carries_its_headers",
    ) {
        return;
    }
    for fs in ["ext4", "xfs"] {
        let output = fsbench()
            .args([
                "matrix",
                "--fs",
                fs,
                "--verify",
                "--min-time",
                "0",
                "--quiet",
            ])
            .args(["-i", "write,random,record-rewrite,fwrite,random-mix,pwrite"])
            .args(["--file-sizes", "1m,4m", "--record-sizes", "4k,256k"])
            .args(["--json", "-"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{fs}: {}", stderr(&output));
        let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let sample = &doc["runs"][0]["cases"][0]["samples"][0];
        assert_eq!(sample["status"], "ok", "{fs}: {sample}");
        assert!(!results(&doc).is_empty());
        // Each cell's file read back again after a remount.
        let warnings = sample["warnings"].to_string();
        assert!(warnings.contains("cold (remounted)"), "{fs}: {warnings}");
    }
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args(["matrix", "--verify", "-i", "write", "--file-sizes", "256k"])
        .args([
            "--record-sizes",
            "64k",
            "--min-time",
            "0",
            "--keep",
            "--quiet",
            "--dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let content = std::fs::read(&entries(dir.path())[0]).unwrap();
    assert_eq!(content.len(), 256 << 10);
    for (k, block) in content.chunks(4096).enumerate() {
        assert_eq!(&block[..4], b"fsbV", "block {k}");
        assert_eq!(
            block[24..32],
            ((k * 4096) as u64).to_le_bytes(),
            "block {k}"
        );
    }
    let blocks: BTreeSet<&[u8]> = content.chunks(4096).collect();
    assert_eq!(blocks.len(), 64, "every 4 KiB block differs");
}

/// The matrix's test file, as grep -o finds it in the image's root directory.
const MATRIX_FILE: &str = r"fsbench-matrix-[0-9-]*\.dat";

/// A 4 MiB file of 64 KiB records written and rewritten with `--verify` on ext4 (a loop
/// device), with `hook` run while the remount after the cell has it unmounted: the JSON
/// document, the exit code, and what the hook said (the test file's name, the image offset).
fn verify_across_a_remount(hook: &str, said: &Path) -> (Value, Option<i32>, String, String) {
    let output = fsbench()
        .env("FSBENCH_TEST_BETWEEN_MOUNTS", hook)
        .args(["matrix", "--fs", "ext4", "--verify", "-i", "write"])
        .args(["--file-sizes", "4m", "--record-sizes", "64k"])
        .args(["--min-time", "0", "--quiet", "--json", "-"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let hook_said = std::fs::read_to_string(said).unwrap_or_default();
    (doc, output.status.code(), stderr(&output), hook_said)
}

/// Issue 39's test of verified data: a block changed on the image behind fsbench's back — the
/// test edits the image file while the filesystem is unmounted, between the umount and the
/// mount of the remount `--verify` asks for after a cell — is found when the file is read
/// back from the device: the sample is `corrupt` (exit 1), the message naming the test file
/// and the exact byte offset of the damaged block. Untouched, the same run passes and says it
/// read the file back after the remount. (The hook is compiled into debug builds only.)
#[test]
fn a_block_changed_on_the_image_while_unmounted_is_found_after_the_remount() {
    if !root_or_skip("a_block_changed_on_the_image_while_unmounted_is_found_after_the_remount") {
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipping: FSBENCH_TEST_BETWEEN_MOUNTS is in debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Block 100 of the file: bytes 409600..413696.
    let said = dir.path().join("untouched");
    let (doc, code, err, hook_said) =
        verify_across_a_remount(&between_mounts(MATRIX_FILE, &said, 100, false), &said);
    let sample = &doc["runs"][0]["cases"][0]["samples"][0];
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(
        hook_said.lines().count(),
        1,
        "one remount, after the cell: {hook_said}"
    );
    let warnings = sample["warnings"].to_string();
    assert!(
        warnings.contains("read back again once the cache was made cold (remounted)"),
        "{warnings}"
    );

    let said = dir.path().join("damaged");
    let (doc, code, err, hook_said) =
        verify_across_a_remount(&between_mounts(MATRIX_FILE, &said, 100, true), &said);
    let sample = &doc["runs"][0]["cases"][0]["samples"][0];
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(sample["status"], "corrupt", "{sample}");
    let (name, _at) = hook_said.trim().split_once(' ').expect("the hook ran");
    let reason = sample["reason"].as_str().unwrap();
    assert!(reason.starts_with("corrupt: /"), "{reason}");
    assert!(
        reason.contains(&format!(
            "/{name}: the block at byte 409600 is not what was written"
        )),
        "{reason}"
    );
    assert!(
        reason.contains("found no stamp (it begins 0000"),
        "{reason}"
    );
    assert!(
        reason.contains("read back once the cache was made cold: remounted"),
        "{reason}"
    );
    assert!(err.contains("the block at byte 409600"), "{err}");
}

fn gzip_size(data: &[u8]) -> usize {
    let mut child = std::process::Command::new("gzip")
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip is installed");
    let mut stdin = child.stdin.take().unwrap();
    let data = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out.stdout.len()
}

#[test]
fn iozone_skip_reproduces_iozone_auto_mode_and_lists_what_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let output = fsbench()
        .args([
            "matrix",
            "-i",
            "0",
            "--file-sizes",
            "32m",
            "--record-sizes",
            "32k..128k",
        ])
        .args(["--min-time", "0", "--iozone-skip", "--quiet", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(&work)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = read_json(&json);
    let records: BTreeSet<u64> = results(&doc)
        .iter()
        .map(|r| r["record_size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(records, BTreeSet::from([64 * KIB, 128 * KIB]));
    let skipped = first_sample(&doc)["config"]["plan"]["skipped"]
        .as_array()
        .unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["record_size_bytes"], 32 * KIB);
    assert!(skipped[0]["reason"].as_str().unwrap().contains("iozone"));
}

/// Runs a command that must fail on bad input and checks the standard: one line saying what to
/// change, the expected exit code, no panic, nothing left in the directory.
fn assert_clean_error(args: &[&str], dir: &Path, expected_code: i32, needle: &str) {
    let output = fsbench()
        .arg("matrix")
        .args(args)
        .arg("--quiet")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(expected_code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: expected one line, got:\n{err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(err.contains(needle), "{args:?}: '{needle}' not in: {err}");
    assert!(entries(dir).is_empty(), "left behind: {:?}", entries(dir));
}

#[test]
fn bad_input_ends_with_one_line_that_says_what_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--file-sizes", "4k..16k", "--record-sizes", "64k..1m"],
            "larger than every file size",
        ),
        (&["--file-sizes", "0"], "0 is not allowed"),
        (&["--record-sizes", "3k"], "3k is not a power of two"),
        (&["--file-sizes", "4k..6k"], "6k is not a power of two"),
        (&["--file-sizes", "64m..4k"], "write the smaller size first"),
        (&["--file-sizes", "lots"], "is not a size"),
        (&["--tests", "write,fsync"], "unknown test 'fsync'"),
        (&["--tests", "11"], "unknown test number 11"),
        (&["--min-time", "fast"], "--min-time"),
        (&["--data", "pattern"], "--data"),
        (&["--unit", "furlongs"], "--unit"),
        (&["--max-passes", "0"], "--max-passes"),
        (&["--passes", "0"], "--passes: must be at least 1"),
        (&["--passes", "1", "--max-passes", "4"], "drop max_passes"),
        (&["--passes", "1", "--min-time", "1s"], "drop min_time"),
        (&["--mix-read-percent", "101"], "between 0 and 100"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["--dir", d];
        all.extend_from_slice(args);
        assert_clean_error(&all, dir.path(), 2, needle);
    }
}

#[test]
fn missing_and_unwritable_directories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    assert_clean_error(
        &["--dir", missing.to_str().unwrap(), "--file-sizes", "4k"],
        dir.path(),
        2,
        "does not exist",
    );
    assert!(!missing.exists());

    if is_root() {
        // Root ignores permission bits: only a read-only filesystem stops it.
        let ro = ScratchMount::tmpfs("ro,size=1m");
        assert_clean_error(
            &["--dir", ro.path().to_str().unwrap(), "--file-sizes", "4k"],
            ro.path(),
            2,
            "read-only filesystem",
        );
    } else {
        use std::os::unix::fs::PermissionsExt;
        let locked = tempfile::tempdir().unwrap();
        std::fs::set_permissions(locked.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        assert_clean_error(
            &[
                "--dir",
                locked.path().to_str().unwrap(),
                "--file-sizes",
                "4k",
            ],
            locked.path(),
            2,
            "not writable",
        );
        std::fs::set_permissions(locked.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_directory_too_small_for_the_largest_file_is_refused_up_front() {
    if !root_or_skip("a_directory_too_small_for_the_largest_file_is_refused_up_front") {
        return;
    }
    let small = ScratchMount::tmpfs("size=2m");
    assert_clean_error(
        &[
            "--dir",
            small.path().to_str().unwrap(),
            "--file-sizes",
            "1m,4m",
            "--record-sizes",
            "1m",
        ],
        small.path(),
        2,
        "lower the file sizes or free space",
    );
}

#[test]
fn a_filesystem_that_fills_up_mid_run_ends_cleanly() {
    if !root_or_skip("a_filesystem_that_fills_up_mid_run_ends_cleanly") {
        return;
    }
    let fs = ScratchMount::tmpfs("size=8m");
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("m.json");
    let mut child = fsbench()
        .args([
            "matrix",
            "-i",
            "0",
            "--file-sizes",
            "4m",
            "--record-sizes",
            "64k",
        ])
        .args(["--min-time", "20s", "--quiet", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(fs.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once fsbench is measuring, another writer takes every block that frees up, as on a
    // disk that fills up in real life.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !files_under(fs.path())
        .iter()
        .any(|p| p.to_string_lossy().contains("fsbench-matrix"))
    {
        assert!(
            Instant::now() < deadline,
            "fsbench never created its test file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let filler_path = fs.path().join("filler");
    let mut filler = std::fs::File::create(&filler_path).unwrap();
    let chunk = vec![0xA5u8; 64 * 1024];
    let status = loop {
        let _ = filler.write_all(&chunk);
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "fsbench did not stop on a full filesystem"
        );
    };
    drop(filler);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("No space left on device") && err.contains("free space"),
        "{err}"
    );
    assert_eq!(
        entries(fs.path()),
        vec![filler_path],
        "the partial test file was removed"
    );
    let doc = read_json(&json);
    assert_eq!(first_sample(&doc)["status"], "failed");
    assert!(first_sample(&doc)["reason"]
        .as_str()
        .unwrap()
        .contains("No space left"));
}

#[test]
fn ctrl_c_keeps_finished_results_and_removes_the_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("m.json");
    let child = fsbench()
        .args([
            "matrix",
            "-i",
            "0,1",
            "--file-sizes",
            "64k..256k",
            "--record-sizes",
            "4k",
        ])
        .args(["--min-time", "300ms", "--quiet", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The test file is 128 KiB only once the first cell (64 KiB, four phases) has finished.
    // Only the matrix's own file counts: the buffer placement's calibration file, written before
    // the first cell, passes through 128 KiB on its way to 1 MiB.
    wait_for_test_file(
        dir.path(),
        |len| len == 128 * KIB,
        Instant::now() + Duration::from_secs(60),
    );
    // SAFETY: sending SIGINT to the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        entries(dir.path()).is_empty(),
        "left behind: {:?}",
        entries(dir.path())
    );
    let doc = read_json(&json);
    assert_eq!(first_sample(&doc)["status"], "interrupted");
    let n = results(&doc).len();
    assert!((4..12).contains(&n), "{n} results");
}

/// The thread that times the calls has its descriptor table alone: every other thread of the
/// process (the phase's series sampler, the host monitor, the watchdog) has left it, and no
/// thread waits for signals. A table shared with another thread makes every call take a
/// reference on its file (bench/README.md, "The price of a second thread").
#[test]
fn the_timed_thread_has_its_descriptor_table_alone() {
    let dir = tempfile::tempdir().unwrap();
    let child = fsbench()
        .args([
            "matrix",
            "-i",
            "pwrite",
            "--file-sizes",
            "16m",
            "--record-sizes",
            "4k",
        ])
        .args([
            "--min-time",
            "5s",
            "--interval",
            "100ms",
            "--quiet",
            "--no-store",
        ])
        .arg("--dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + Duration::from_secs(60);
    wait_for_test_file(dir.path(), |_| true, deadline);
    // Looked at while the phases run: each helper thread seen, and the table each has.
    // A thread just started has not left yet (it does so first thing, once scheduled: on a
    // loaded host that can take a while): one still sharing the table 500 ms after it was
    // first seen doing so is a helper that never leaves.
    let mut helpers = BTreeSet::new();
    let mut sharing: std::collections::BTreeMap<libc::pid_t, Instant> = Default::default();
    // At least two seconds, and until both helpers were seen (a slow host calibrates first).
    let until = Instant::now() + Duration::from_secs(2);
    let seen_both =
        |h: &BTreeSet<String>| h.contains("fsbench-series") && h.contains("fsbench-monitor");
    while Instant::now() < until || (!seen_both(&helpers) && Instant::now() < deadline) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            break;
        };
        for task in tasks.flatten() {
            let tid: libc::pid_t = task.file_name().to_string_lossy().parse().unwrap();
            if tid == pid {
                continue;
            }
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            let name = name.trim().to_string();
            // kcmp(2) KCMP_FILES: 0 when the two threads share one descriptor table.
            // SAFETY: kcmp only compares two tasks' kernel objects.
            let rc = unsafe { libc::syscall(libc::SYS_kcmp, pid, tid, 2, 0, 0) };
            let err = std::io::Error::last_os_error();
            if rc < 0 && err.raw_os_error() == Some(libc::ESRCH) {
                continue; // the thread ended meanwhile
            }
            assert!(rc >= 0, "kcmp: {err}");
            assert_ne!(name, "ctrl-c", "a thread waits for signals");
            if rc == 0 {
                let since = *sharing.entry(tid).or_insert_with(Instant::now);
                assert!(
                    since.elapsed() < Duration::from_millis(500),
                    "thread {tid} ({name}) shares the timed thread's table"
                );
            } else {
                helpers.insert(name);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: ending the child we spawned.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(seen_both(&helpers), "helpers seen: {helpers:?}");
}

/// A signal fsbench was started with ignored stays ignored (`nohup`): SIGHUP then does not stop
/// the run, which ends as it would have.
#[test]
fn a_hangup_ignored_at_start_stays_ignored() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let mut command = fsbench();
    command
        .args([
            "matrix",
            "-i",
            "0",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "4k",
        ])
        .args(["--min-time", "1s", "--quiet", "--no-store"])
        .arg("--dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: signal() is async-signal-safe; the child then executes fsbench.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    wait_for_test_file(
        dir.path(),
        |_| true,
        Instant::now() + Duration::from_secs(60),
    );
    // SAFETY: signalling the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn help_documents_every_option() {
    let output = fsbench().args(["matrix", "--help"]).output().unwrap();
    let help = stdout(&output);
    for flag in [
        "--dir",
        "--tests",
        "--file-sizes",
        "--record-sizes",
        "--min-time",
        "--max-passes",
        "--passes",
        "--include-fsync",
        "--include-close",
        "--direct",
        "--purge-cpu-cache",
        "--purge-size",
        "--drop-caches",
        "--data",
        "--seed",
        "--iozone-skip",
        "--stride",
        "--mix-read-percent",
        "--keep",
        "--verify",
        "--json",
        "--csv",
        "--unit",
        "--no-spread",
        "--quiet",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
}

/// A user's file at the test file's or a probe's name (same pid after exec) was truncated and
/// removed, and one at the O_DIRECT probe's name was reported as "refuses O_DIRECT": now
/// fsbench passes over every name that exists and follows no symlink.
#[test]
fn user_files_at_the_test_files_and_probes_names_survive_a_run() {
    let dir = tempfile::Builder::new()
        .prefix("fsbench-test-names")
        .tempdir_in("/var/tmp")
        .unwrap();
    let victim = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(victim.path(), "victim").unwrap();
    let stems = [
        ("fsbench-matrix", ".dat"),
        (".fsbench-probe", ""),
        (".fsbench-probe-direct", ""),
    ];
    let planted = [(dir.path(), &stems[..])];
    let output = with_files_at_fsbench_names(
        &planted,
        victim.path(),
        &format!(
            "{} matrix --tests write,read --file-sizes 64k --record-sizes 4k --min-time 0 --direct --no-store --quiet --dir {}",
            env!("CARGO_BIN_EXE_fsbench"),
            dir.path().display()
        ),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_planted_files_kept(&planted, victim.path());
}

// See issue 7: every record above the 1 MiB data pool panicked (`range end index … out of range`).
#[test]
fn records_larger_than_the_data_pool_are_measured() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("m.json");
    let output = fsbench()
        .args(["matrix", "--tests", "write,read,random,pwrite"])
        .args(["--file-sizes", "2m,16m,32m", "--record-sizes", "2m,16m"])
        .args(["--min-time", "0", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = read_json(&json);
    assert_eq!(first_sample(&doc)["status"], "ok");
    // Cells: 2m/2m, 16m/2m, 16m/16m, 32m/2m, 32m/16m; 8 phases each.
    assert_eq!(results(&doc).len(), 5 * 8);
    for r in &results(&doc) {
        let record = r["record_size_bytes"].as_u64().unwrap();
        let file = r["file_size_bytes"].as_u64().unwrap();
        let passes = r["passes"].as_u64().unwrap();
        assert!(passes >= 1, "{r}");
        assert_eq!(r["ops"].as_u64().unwrap(), passes * file / record, "{r}");
        assert_eq!(r["bytes"].as_u64().unwrap(), passes * file, "{r}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

// See issue 7: the README's first matrix example, the full default matrix, must run end to end
// (unscaled: every test, files 4k..64m x records 4k..16m, 117 cells x 18 phases).
#[test]
fn the_full_default_matrix_runs_on_tmpfs() {
    if !root_or_skip("the_full_default_matrix_runs_on_tmpfs") {
        return;
    }
    let mount = ScratchMount::tmpfs("size=256m");
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("m.json");
    let output = fsbench()
        .env_remove("FSBENCH_SCALE")
        .args(["matrix", "--quiet", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(mount.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = read_json(&json);
    assert_eq!(first_sample(&doc)["status"], "ok");
    assert_eq!(first_sample(&doc)["config"]["context"]["scale"], 1.0);
    assert_eq!(results(&doc).len(), 117 * 18);
    let largest = results(&doc)
        .iter()
        .map(|r| r["record_size_bytes"].as_u64().unwrap())
        .max();
    assert_eq!(largest, Some(16 << 20));
    assert!(entries(mount.path()).is_empty(), "test file left behind");
}
