//! The task workload's `--verify` on a real filesystem: a copy and an untar on ext4 (a loop
//! device fsbench makes) read back after the chain once the filesystem was remounted, with no
//! false alarm; a block of an extracted file changed on the image while it was unmounted
//! (`FSBENCH_TEST_BETWEEN_MOUNTS`, debug builds) ends the sample `corrupt`, naming the file and
//! the offset.

mod common;

use common::{between_mounts_below, fsbench, root_or_skip, stderr, stdout};
use fsbench_workload::task::tree;
use serde_json::Value;
use std::path::Path;

/// Small enough for CI: 393 files, 6.5 MB.
const SCALE: &str = "0.005";

/// The largest file of the tree the run generates (seed 1, units scaled to at least 8): its
/// path below the directory it is extracted in, and its size.
fn largest_file() -> (String, u64) {
    let model = tree::scaled(&tree::LINUX_6_1, 0.005);
    let tree = tree::generate(&model, 8, 1);
    let file = tree
        .entries
        .iter()
        .filter(|e| matches!(e.kind, tree::Kind::Text | tree::Kind::Project(_)))
        .max_by_key(|e| e.size)
        .unwrap();
    (file.path.clone(), file.size)
}

/// The hook that finds block `block` of `file` below the chain's extracted tree in the
/// unmounted image (and with `damage` zeroes it): [`between_mounts_below`].
fn between_mounts(said: &Path, file: &str, block: u64, damage: bool) -> String {
    between_mounts_below(
        "fsbench-task-[0-9-]*",
        &format!("/tree-1/{file}"),
        said,
        block,
        damage,
    )
}

/// `fsbench task copy,untar --fs ext4 --verify` with `hook` between the mounts of each
/// remount: the JSON document, the exit code, stderr, and what the hook said.
fn verified_chain(hook: &str, said: &Path, data: &Path) -> (Value, Option<i32>, String, String) {
    let output = fsbench()
        .env("FSBENCH_TEST_BETWEEN_MOUNTS", hook)
        .args(["task", "copy,untar", "--fs", "ext4", "--verify"])
        .args([
            "--method",
            "tool",
            "--compression",
            "none",
            "--big-file",
            "1g",
        ])
        .args(["--scale", SCALE, "--no-store", "--quiet", "--json", "-"])
        .arg("--data-dir")
        .arg(data)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let hook_said = std::fs::read_to_string(said).unwrap_or_default();
    (doc, output.status.code(), stderr(&output), hook_said)
}

/// Issue 39's test for tasks: the chain's copy and untar are read back after a remount and
/// compared with their sources — untouched, the sample is ok and its results say what was
/// verified; with block 1 (bytes 4096..8192) of the tree's largest file zeroed on the image
/// while it was unmounted, the sample is `corrupt` (exit 1), naming the file and the block at
/// byte 4096. (The hook is compiled into debug builds only.)
#[test]
fn task_verify_finds_a_block_of_an_extracted_file_changed_on_the_image() {
    if !root_or_skip("task_verify_finds_a_block_of_an_extracted_file_changed_on_the_image") {
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipping: FSBENCH_TEST_BETWEEN_MOUNTS is in debug builds only");
        return;
    }
    let (file, size) = largest_file();
    assert!(size > 8192, "{file}: {size}");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");

    let said = dir.path().join("untouched");
    let (doc, code, err, hook_said) =
        verified_chain(&between_mounts(&said, &file, 1, false), &said, &data);
    let sample = &doc["runs"][0]["cases"][0]["samples"][0];
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(hook_said.lines().count(), 1, "one remount: {hook_said}");
    let warnings = sample["warnings"].to_string();
    assert!(
        warnings.contains(
            "--verify: what copy, untar wrote was read back as written after the chain, once the cache was made cold: remounted"
        ),
        "{warnings}"
    );
    let results = common::flat_results_of(sample);
    let step = |name: &str| {
        results
            .iter()
            .find(|r| r["step"] == name)
            .unwrap_or_else(|| panic!("no {name} in {results:?}"))
            .clone()
    };
    let (copy, untar) = (step("copy"), step("untar"));
    assert_eq!(copy["verified"], true, "{copy}");
    assert_eq!(copy["verified_bytes"], copy["bytes"], "{copy}");
    assert_eq!(untar["verified"], true, "{untar}");
    assert_eq!(untar["verified_files"], untar["files"], "{untar}");
    assert_eq!(untar["verified_bytes"], untar["bytes"], "{untar}");

    let said = dir.path().join("damaged");
    let (doc, code, err, hook_said) =
        verified_chain(&between_mounts(&said, &file, 1, true), &said, &data);
    let sample = &doc["runs"][0]["cases"][0]["samples"][0];
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(sample["status"], "corrupt", "{sample}");
    assert!(!hook_said.is_empty(), "the hook ran");
    let reason = sample["reason"].as_str().unwrap();
    assert!(reason.starts_with("corrupt: /"), "{reason}");
    assert!(
        reason.contains(&format!(
            "/tree-1/{file}: the block at byte 4096 is not what was written: expected "
        )),
        "{reason}"
    );
    // The block reads back as the zeroes written on the image.
    assert!(reason.contains(", found 00000000"), "{reason}");
    assert!(
        reason.contains("(what untar wrote, read back after the chain, once the cache was made cold: remounted)"),
        "{reason}"
    );
    assert!(err.contains("the block at byte 4096"), "{err}");
}
