//! `fsbench clients --verify` on a real filesystem (ext4 on a loop device fsbench makes): the
//! clients' files read back after the remount with no false alarm, and a block changed on the
//! image while it is unmounted found, the sample `corrupt` naming the file and the offset.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// A loadfile whose clients always leave a file of 1 MiB and a little more: nothing in it
/// removes or truncates the file (its create, disposition 2, opens it again on every later
/// loop), so once a client's first loop is done, wherever the time runs out the file holds
/// every block. (A Deltree at the top of the loop made this test fail in 2 runs of about 16:
/// both clients stopped between it and the last write, and no file was left to verify.) The
/// last write leaves a hole and ends off a block boundary.
fn loadfile(dir: &Path) -> std::path::PathBuf {
    let mut text =
        String::from("NTCreateX \"\\clients\\client1\\keep.dat\" 0x40 0x2 1 NT_STATUS_OK\n");
    for k in 0..16 {
        text.push_str(&format!(
            "WriteX 1 {} 65536 65536 NT_STATUS_OK\n",
            k * 65536
        ));
    }
    text.push_str(
        "WriteX 1 1050000 5000 5000 NT_STATUS_OK\n\
         Flush 1 NT_STATUS_OK\n\
         Close 1 NT_STATUS_OK\n",
    );
    let path = dir.join("keep.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// The shell command the debug build runs between a remount's umount and mount
/// (`FSBENCH_TEST_BETWEEN_MOUNTS`): finds `keep.dat` of the first client that left it in the
/// unmounted ext4 image (debugfs), writes its path and the image offset of its block 100 to
/// `said`, and — with `damage` — overwrites that 4 KiB block of the image with zeroes, with
/// direct I/O (what reaches the image file is what the filesystem reads after the mount).
fn between_mounts(said: &Path, damage: bool) -> String {
    let write = if damage {
        r#"dd if=/dev/zero of="$FSBENCH_IMAGE" bs=4096 count=1 seek=$((at / 4096)) conv=notrunc oflag=direct status=none"#
    } else {
        "true"
    };
    format!(
        r#"set -e
top=$(debugfs -R "ls /" "$FSBENCH_IMAGE" 2>/dev/null | grep -o 'fsbench-clients-[0-9-]*' | head -n 1)
size=$(dumpe2fs -h "$FSBENCH_IMAGE" 2>/dev/null | awk -F: '/^Block size/ {{ print $2 + 0 }}')
test -n "$top" && test "$size" = 4096
for client in client1 client2; do
  file=/$top/clients/$client/keep.dat
  physical=$(debugfs -R "bmap $file 100" "$FSBENCH_IMAGE" 2>/dev/null || true)
  case "$physical" in ''|0|*[!0-9]*) continue ;; esac
  at=$((physical * size))
  {write}
  echo "$file $at" >> {said}
  exit 0
done
echo "none" >> {said}"#,
        said = said.display()
    )
}

/// `fsbench clients --fs ext4 --verify` of the keep.dat load with `hook` between the remount's
/// umount and mount: the sample, the exit code, stderr and what the hook said.
fn verified_clients(hook: &str, said: &Path, load: &Path) -> (Value, Option<i32>, String, String) {
    let output = fsbench()
        .env("FSBENCH_TEST_BETWEEN_MOUNTS", hook)
        .args(["clients", "--fs", "ext4", "--verify", "--clients", "2"])
        .args(["--duration", "1s", "--warmup", "0", "--loadfile"])
        .arg(load)
        .args(["--no-store", "--quiet", "--json", "-"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let sample = doc["runs"][0]["cases"][0]["samples"][0].clone();
    let hook_said = std::fs::read_to_string(said).unwrap_or_default();
    (sample, output.status.code(), stderr(&output), hook_said)
}

/// Issue 39's test of verified data for the client replay: untouched, every file the clients
/// left reads back as written after the remount (no false alarm); a block of a client's file
/// zeroed on the image while unmounted ends the sample `corrupt` (exit 1), naming the file and
/// the byte offset of the block. (The hook is compiled into debug builds only.)
#[test]
fn a_clients_block_changed_on_the_image_while_unmounted_is_found_after_the_remount() {
    let test = "a_clients_block_changed_on_the_image_while_unmounted_is_found_after_the_remount";
    if !root_or_skip(test) {
        return;
    }
    if !cfg!(debug_assertions) {
        eprintln!("skipping: FSBENCH_TEST_BETWEEN_MOUNTS is in debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let load = loadfile(dir.path());

    let said = dir.path().join("untouched");
    let (sample, code, err, hook_said) =
        verified_clients(&between_mounts(&said, false), &said, &load);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(sample["status"], "ok", "{sample}");
    assert_eq!(hook_said.lines().count(), 1, "one remount: {hook_said}");
    let warnings = sample["warnings"].to_string();
    assert!(
        warnings.contains("read back once the cache was made cold (remounted)"),
        "{warnings}"
    );
    let attributes = &flat_results_of(&sample)[0];
    let files = attributes["verified_files"].as_u64().unwrap();
    assert_eq!(files, 2, "both clients' keep.dat: {attributes}");
    assert!(
        attributes["verified_bytes"].as_u64().unwrap() >= 2 * 1_055_000,
        "{attributes}"
    );
    assert_eq!(attributes["verify_excluded_files"], 0, "{attributes}");

    let said = dir.path().join("damaged");
    let (sample, code, err, hook_said) =
        verified_clients(&between_mounts(&said, true), &said, &load);
    let (file, _at) = hook_said
        .trim()
        .split_once(' ')
        .expect("a client left keep.dat");
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(sample["status"], "corrupt", "{sample}");
    let reason = sample["reason"].as_str().unwrap();
    assert!(reason.starts_with("corrupt: /"), "{reason}");
    assert!(
        reason.contains(&format!(
            "{file}: the block at byte 409600 is not what was written"
        )),
        "{reason}"
    );
    assert!(
        reason.contains("found no stamp (it begins 0000"),
        "{reason}"
    );
    assert!(err.contains("the block at byte 409600"), "{err}");
}
