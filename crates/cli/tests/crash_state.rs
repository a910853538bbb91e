//! `fsbench crash-state` on crash bundles: a power cut of a real ext4 (root: the recording
//! device, loop devices) kept, listed, and a state that promises an fsync'd file written to an
//! image that loop-mounts with the file; an image in the way and a state past the list
//! refused. Without root: a bundle of a small log listed and a state written by an unprivileged
//! user, byte for byte as the log says; a bundle of another version, an incomplete one and a
//! missing one refused, each saying why.

mod common;

use common::*;
use fsbench_testbed::recorder::bundle::{self, Bundle, Manifest};
use fsbench_testbed::recorder::log::Log;
use fsbench_testbed::recorder::states::{self, Budget};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn crash_state(args: &[&str]) -> Output {
    fsbench().arg("crash-state").args(args).output().unwrap()
}

/// File `k`'s bytes: 16 KiB, the block number and `k` in every 8 bytes.
fn content(k: u64) -> Vec<u8> {
    (0..2048u64)
        .flat_map(|i| (i << 8 | k).to_le_bytes())
        .collect()
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program).args(args).output().unwrap()
}

#[test]
fn a_kept_ext4_power_cut_is_listed_and_a_state_written_mounts_with_its_promise() {
    use fsbench_testbed::{DeviceSpec, RealSystem, Target, TargetSpec};
    if !root_or_skip("a_kept_ext4_power_cut_is_listed_and_a_state_written_mounts_with_its_promise")
    {
        return;
    }
    let s = Scratch::new();
    let spec = TargetSpec::builder("ext4", s.work())
        .device(DeviceSpec::Image {
            size_bytes: Some(256 << 20),
        })
        .mount_options(Some("noatime"))
        .recording(true)
        .build()
        .unwrap();
    let mut target = Target::prepare(&RealSystem, spec, &|| false).unwrap();
    let point = target.info().mountpoint.clone();
    target.record().unwrap();
    let f1 = std::fs::File::create(point.join("f1")).unwrap();
    f1.write_all_at(&content(1), 0).unwrap();
    f1.sync_all().unwrap();
    std::fs::File::open(&point).unwrap().sync_all().unwrap();
    drop(f1);
    target.mark(1);
    let states = target
        .power_cut(Budget {
            per_flush: 2,
            ..Budget::default()
        })
        .unwrap();
    let dir = target.keep_power_cut(&s.path().join("bundles")).unwrap();
    target.resume().unwrap();
    assert!(target.finish().fsck.unwrap().clean);
    let dir_text = dir.display().to_string();

    let listed = crash_state(&[&dir_text]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let out = stdout(&listed);
    assert!(out.contains("filesystem: ext4 on a 256 MiB image"), "{out}");
    assert!(out.contains("mount options: noatime"), "{out}");
    assert!(out.contains("made by: `mkfs.ext4"), "{out}");
    assert!(
        out.contains(&format!("{} crash states:", states.len())),
        "{out}"
    );
    for (i, state) in states.iter().enumerate() {
        let promise = state
            .promised
            .map_or_else(|| "nothing".to_string(), |n| format!("mark {n}"));
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(&format!("{i} "))
                    && l.contains(&promise)
                    && l.ends_with(&state.what)),
            "state {i} ({}) not listed: {out}",
            state.what
        );
    }

    let promising = states
        .iter()
        .position(|s| s.promised >= Some(1))
        .expect("a state that promises f1");
    let image = s.path().join("state.img");
    let image_text = image.display().to_string();
    let index = promising.to_string();
    let wrote = crash_state(&[&dir_text, "--state", &index, "--to", &image_text]);
    assert!(wrote.status.success(), "{}", stderr(&wrote));
    let out = stdout(&wrote);
    assert!(
        out.contains(&format!("mount -o loop,noatime {image_text} /mnt")),
        "{out}"
    );
    assert!(out.contains(&format!("e2fsck -f -n {image_text}")), "{out}");
    assert_eq!(std::fs::metadata(&image).unwrap().len(), 256 << 20);

    // Mounted as the output says (buffered loop device), f1 is there with its bytes.
    let mnt = s.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mnt_text = mnt.display().to_string();
    let mount = run("mount", &["-o", "loop,noatime", &image_text, &mnt_text]);
    assert!(mount.status.success(), "{}", stderr(&mount));
    let f1 = std::fs::read(mnt.join("f1"));
    assert!(run("umount", &[&mnt_text]).status.success());
    assert_eq!(f1.unwrap(), content(1), "the promised file");
    let fsck = run("e2fsck", &["-f", "-n", &image_text]);
    assert!(fsck.status.success(), "{}", stdout(&fsck));

    let again = crash_state(&[&dir_text, "--state", &index, "--to", &image_text]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    let past = s.path().join("past.img").display().to_string();
    let beyond = crash_state(&[&dir_text, "--state", "99", "--to", &past]);
    assert_eq!(beyond.status.code(), Some(2));
    assert!(
        stderr(&beyond).contains(&format!(
            "no crash state 99 in {dir_text}: it has {}",
            states.len()
        )),
        "{}",
        stderr(&beyond)
    );
    assert!(!Path::new(&past).exists());
    let half = crash_state(&[&dir_text, "--state", "0"]);
    assert_eq!(half.status.code(), Some(2), "--state needs --to");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bundle of a small log over a 64 KiB image in `at`: a write, a flush, mark 1, a write,
/// mark 2; readable by anyone (as a developer's copy would be).
fn small_bundle(at: &Path) -> PathBuf {
    let start = at.join("start-src.img");
    let image = std::fs::File::create(&start).unwrap();
    image.set_len(64 << 10).unwrap();
    let mut log = Log::create(&at.join("data-src")).unwrap();
    log.write(4096, &[7u8; 4096]).unwrap();
    log.flush();
    log.mark(1);
    log.write(8192, &[9u8; 4096]).unwrap();
    log.mark(2);
    let budget = Budget::default();
    let listed = states::states(&log.records, budget);
    let manifest = Manifest::new(
        "ext4",
        Vec::new(),
        None,
        None,
        64 << 10,
        budget,
        log.records.len(),
        &listed,
    );
    let dir = at.join("bundle");
    Bundle::save(&dir, &manifest, &start, &log).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    for part in [bundle::MANIFEST, bundle::START, bundle::LOG, bundle::DATA] {
        std::fs::set_permissions(dir.join(part), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    dir
}

/// `fsbench crash-state ARGS`, as nobody when root (else as oneself): no privilege needed.
fn unprivileged(args: &[&str]) -> Output {
    let mut command = if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_fsbench"),
        ]);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_fsbench"))
    };
    command.arg("crash-state").args(args).output().unwrap()
}

#[test]
fn a_small_bundle_is_replayed_without_root_and_a_bad_one_is_refused() {
    let scratch = tempfile::Builder::new()
        .prefix("fsbench-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let d = scratch.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    let dir = small_bundle(d);
    let dir_text = dir.display().to_string();

    let listed = unprivileged(&[&dir_text]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let out = stdout(&listed);
    assert!(
        out.contains(
            "log: 5 records: 2 writes (8 KiB written, 8 KiB kept), 1 flush, 0 discards, 2 marks"
        ),
        "{out}"
    );
    assert!(out.contains("mount options: (none)"), "{out}");
    // The start, its write; after the flush, and its write.
    assert!(out.contains("4 crash states:"), "{out}");
    assert!(
        out.contains("after flush 1 and 1 of its 1 next writes"),
        "{out}"
    );

    let image = d.join("last.img");
    let image_text = image.display().to_string();
    let wrote = unprivileged(&[&dir_text, "--state", "3", "--to", &image_text]);
    assert!(wrote.status.success(), "{}", stderr(&wrote));
    assert!(
        stdout(&wrote).contains("promises mark 2"),
        "{}",
        stdout(&wrote)
    );
    let bytes = std::fs::read(&image).unwrap();
    assert_eq!(bytes.len(), 64 << 10);
    assert!(bytes[4096..8192].iter().all(|&b| b == 7));
    assert!(bytes[8192..12288].iter().all(|&b| b == 9));
    assert!(bytes[..4096].iter().chain(&bytes[12288..]).all(|&b| b == 0));

    // Another version.
    let manifest = dir.join(bundle::MANIFEST);
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"version\": 1", "\"version\": 2")).unwrap();
    let refused = crash_state(&[&dir_text]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(&format!(
            "{dir_text}: not a crash bundle this fsbench can replay: its format version is 2; \
             this fsbench reads version 1"
        )),
        "{}",
        stderr(&refused)
    );
    // Incomplete: no manifest (it is written last).
    std::fs::remove_file(&manifest).unwrap();
    let refused = crash_state(&[&dir_text, "--state", "0", "--to", "x.img"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("it has no bundle.json"),
        "{}",
        stderr(&refused)
    );
    let missing = d.join("nothing").display().to_string();
    let refused = crash_state(&[&missing]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(&format!("cannot open the crash bundle {missing}")),
        "{}",
        stderr(&refused)
    );
}
