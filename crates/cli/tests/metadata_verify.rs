//! `fsbench metadata --verify` on a real filesystem: what the loops wrote is read back after a
//! remount with no false alarm, and a block changed on the device while it was unmounted ends
//! the sample `corrupt`, naming the file and the block's offset.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The shell command the debug build runs between the remount's umount and mount
/// (`FSBENCH_TEST_BETWEEN_MOUNTS`): finds the first file of thread 0 in the unmounted ext4
/// image (debugfs), writes its name to `said` and, with `damage`, zeroes its second 4 KiB
/// block in the image, with direct I/O (the loop device reads its image with direct I/O: what
/// reaches the image file is what the filesystem reads after the mount).
fn between_mounts(said: &Path, damage: bool) -> String {
    let write = if damage {
        r#"dd if=/dev/zero of="$img" bs=4096 count=1 seek="$physical" conv=notrunc oflag=direct status=none"#
    } else {
        "true"
    };
    format!(
        r#"set -e
img="$FSBENCH_IMAGE"
top=$(debugfs -R "ls -p /" "$img" 2>/dev/null | awk -F/ '$6 ~ /^fsbench-metadata-/ {{ print $6; exit }}')
name=$(debugfs -R "ls -p /$top/t0" "$img" 2>/dev/null | awk -F/ '$6 != "." && $6 != ".." && $6 != "" {{ print $6; exit }}')
test -n "$name"
test "$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Block size/ {{ print $2 + 0 }}')" = 4096
physical=$(debugfs -R "bmap /$top/t0/$name 1" "$img" 2>/dev/null)
test "$physical" -gt 0
{write}
echo "$name" >> {said}"#,
        said = said.display()
    )
}

/// `fsbench metadata --fs ext4 --verify` of 2 threads' 20 files each, created, written (16 KiB:
/// four blocks), stat'ed and removed, with `hook` run while the check's remount has the
/// filesystem unmounted: the JSON document, the exit code, stderr and what the hook said.
fn verified_metadata(hook: &str, said: &Path) -> (Value, Option<i32>, String, String) {
    let output = fsbench()
        .env("FSBENCH_TEST_BETWEEN_MOUNTS", hook)
        .args(["metadata", "--fs", "ext4", "--verify", "--count", "20"])
        .args(["--threads", "2", "--ops", "create,write,stat,unlink"])
        .args(["--no-store", "--quiet", "--json", "-"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let hook_said = std::fs::read_to_string(said).unwrap_or_default();
    (doc, output.status.code(), stderr(&output), hook_said)
}

/// Issue 39's test for the metadata loops: untouched, every file the write wrote is read back
/// after the remount (the write's result says how many files and bytes) and the run passes; a
/// block of one file zeroed on the image between the umount and the mount is found: the sample
/// is `corrupt` (exit 1), the reason naming that file and the block's byte offset. (The hook is
/// compiled into debug builds only.)
#[test]
fn metadata_verify_reads_back_after_a_remount_and_finds_a_block_changed_on_the_image() {
    if !root_or_skip(
        "metadata_verify_reads_back_after_a_remount_and_finds_a_block_changed_on_the_image",
    ) {
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipping: FSBENCH_TEST_BETWEEN_MOUNTS is in debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let said = dir.path().join("untouched");
    let (doc, code, err, hook_said) = verified_metadata(&between_mounts(&said, false), &said);
    assert_eq!(code, Some(0), "{err}");
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(hook_said.lines().count(), 1, "one remount: {hook_said}");
    let warnings = sample["warnings"].to_string();
    assert!(
        warnings.contains("read back after write once the cache was made cold (remounted)"),
        "{warnings}"
    );
    let results = sample["results"].as_array().unwrap();
    let write = results
        .iter()
        .find(|r| r["operation"] == "write")
        .expect("a write result");
    assert_eq!(write["attributes"]["verified_files"], 40, "{write}");
    assert_eq!(write["attributes"]["verified_bytes"], 40 * 16384, "{write}");
    assert!(results
        .iter()
        .filter(|r| r["operation"] != "write")
        .all(|r| r["attributes"].get("verified_files").is_none()));

    let said = dir.path().join("damaged");
    let (doc, code, err, hook_said) = verified_metadata(&between_mounts(&said, true), &said);
    assert_eq!(code, Some(1), "{err}");
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "corrupt", "{sample}");
    let name = hook_said.trim();
    assert!(!name.is_empty(), "the hook ran");
    let reason = sample["reason"].as_str().unwrap();
    assert!(reason.starts_with("corrupt: /"), "{reason}");
    assert!(
        reason.contains(&format!(
            "/t0/{name}: the block at byte 4096 is not what was written"
        )),
        "{reason}"
    );
    assert!(
        reason.contains("found no stamp (it begins 0000"),
        "{reason}"
    );
    assert!(
        reason.contains("read back after write once the cache was made cold: remounted"),
        "{reason}"
    );
    assert!(err.contains("the block at byte 4096"), "{err}");
}
