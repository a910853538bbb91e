//! Aging for real, as root on loop devices (CI is root): the same spec and seed age the same
//! tree and another seed another, the fill level is reached within 1 %, churn fragments more
//! than a plain fill (extents per file, free-space extents), and every target that starts from
//! a cached aged image starts from the same bytes. Images of a few hundred MiB.

use fsbench_testbed::aging::{self, Aged, AgingSpec};
use fsbench_testbed::images::{self, AgedImage};
use fsbench_testbed::{DeviceSpec, RealSystem, System, Target, TargetSpec};
use std::path::Path;

fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} needs root, and CI must run it as root"
    );
    eprintln!("skipping {test}: needs root");
    false
}

/// A work directory of the test's own, on disk.
fn work_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fsbench-aging-test-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

fn spec(fs: &str, work: &Path, size: u64) -> TargetSpec {
    let mut spec = TargetSpec::new(fs, work).unwrap();
    spec.device = DeviceSpec::Image {
        size_bytes: Some(size),
    };
    spec
}

/// Ages a new `fs` by `aging`; returns what aging said and the tree it made.
fn age_once(work: &Path, fs: &str, aging: &AgingSpec) -> (Aged, Vec<(String, u64)>, f64) {
    let target = Target::prepare(&RealSystem, spec(fs, work, 300 << 20), &|| false).unwrap();
    let aged = aging::age(target.mountpoint(), aging, 4, &|| false, &mut |_| {}).unwrap();
    let tree = aging::listing(target.mountpoint()).unwrap();
    let fill = statfs_fill(target.mountpoint());
    let info = target.finish();
    assert!(info.fsck.unwrap().clean);
    (aged, tree, fill)
}

/// Size minus free over size, in percent, as `df` counts it.
fn statfs_fill(dir: &Path) -> f64 {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a zeroed out-struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    (st.f_blocks - st.f_bfree) as f64 * 100.0 / st.f_blocks as f64
}

#[test]
fn the_same_spec_and_seed_age_the_same_tree_to_the_fill_level() {
    if !root_or_skip("the_same_spec_and_seed_age_the_same_tree_to_the_fill_level") {
        return;
    }
    let work = work_dir();
    let aging: AgingSpec = "fill=60,churn=1,seed=5".parse().unwrap();
    let (aged, first, fill) = age_once(work.path(), "ext4", &aging);
    let (_, second, _) = age_once(work.path(), "ext4", &aging);
    assert!(first.len() > 100, "{} files", first.len());
    assert_eq!(first, second, "the same spec and seed made another tree");
    let other: AgingSpec = "fill=60,churn=1,seed=6".parse().unwrap();
    let (_, third, _) = age_once(work.path(), "ext4", &other);
    assert_ne!(first, third, "another seed made the same tree");
    // Within 1 % of the filesystem, by aging's own account and by statfs afterwards.
    assert!((aged.after.fill_percent - 60.0).abs() <= 1.0, "{aged:?}");
    assert!((fill - 60.0).abs() <= 1.0, "{fill}");
    assert_eq!(aged.after.files, first.len() as u64);
    assert_eq!(
        aged.after.file_bytes,
        first.iter().map(|(_, size)| size).sum::<u64>()
    );
    assert_eq!(aged.rounds.len(), 1);
}

/// A cached aged image, made (or found) in `work`.
fn cached(work: &Path, fs: &str, aging: &AgingSpec) -> AgedImage {
    images::ensure(
        &RealSystem,
        &spec(fs, work, 300 << 20),
        aging,
        &|| false,
        &mut |_| {},
    )
    .unwrap()
}

/// On ext4, xfs and btrfs: churn leaves the files in more extents and the free space in more
/// pieces than a plain fill to the same level, and both reach the level within 1 %.
#[test]
fn churn_fragments_more_than_a_plain_fill() {
    if !root_or_skip("churn_fragments_more_than_a_plain_fill") {
        return;
    }
    let work = work_dir();
    for fs in ["ext4", "xfs", "btrfs"] {
        let plain = cached(work.path(), fs, &"fill=70,churn=0".parse().unwrap());
        let churned = cached(work.path(), fs, &"fill=70,churn=4".parse().unwrap());
        let (plain, churned) = (&plain.record.aged.after, &churned.record.aged.after);
        for aged in [plain, churned] {
            assert!((aged.fill_percent - 70.0).abs() <= 1.0, "{fs}: {aged:?}");
        }
        let extents = |f: &aging::Fragmentation| f.extents.as_ref().unwrap().mean;
        assert!(
            extents(churned) > extents(plain) * 1.05,
            "{fs}: extents per file {} after churn, {} after a plain fill",
            extents(churned),
            extents(plain)
        );
        let free = |f: &aging::Fragmentation| f.free_space.as_ref().unwrap().free_extents.unwrap();
        assert!(
            free(churned) > free(plain) * 2,
            "{fs}: {} free extents after churn, {} after a plain fill",
            free(churned),
            free(plain)
        );
        images::remove_all(&RealSystem, work.path()).unwrap();
    }
}

/// The cached image is never changed; each copy holds its bytes, and each target made from one
/// has the same tree, file for file and byte for byte, before anything runs on it.
#[test]
fn every_target_starts_from_a_byte_identical_image() {
    if !root_or_skip("every_target_starts_from_a_byte_identical_image") {
        return;
    }
    let work = work_dir();
    let aging: AgingSpec = "fill=50,churn=1".parse().unwrap();
    let image = cached(work.path(), "ext4", &aging);
    assert_eq!(
        images::fingerprint(&image.image).unwrap(),
        image.record.fingerprint
    );
    // Each copy, as a sample's image is made, holds the cached image's bytes.
    for n in 0..2 {
        let copy = work.path().join(format!("copy-{n}.img"));
        RealSystem.copy_image(&image.image, &copy).unwrap();
        assert_eq!(
            images::fingerprint(&copy).unwrap(),
            image.record.fingerprint
        );
        std::fs::remove_file(copy).unwrap();
    }
    let mut trees = Vec::new();
    for _ in 0..2 {
        let mut s = spec("ext4", work.path(), 300 << 20);
        s.start_from = Some(image.clone());
        let target = Target::prepare(&RealSystem, s, &|| false).unwrap();
        let copied = target.info().aging.clone().unwrap();
        assert_eq!(copied.made.fingerprint, image.record.fingerprint);
        assert!(
            copied.copy.method == "reflink" || copied.copy.method.starts_with("sparse copy"),
            "{:?}",
            copied.copy
        );
        trees.push(content(target.mountpoint()));
        // What a workload writes changes the copy, never the cache.
        std::fs::write(target.mountpoint().join("new"), b"x").unwrap();
        assert!(target.finish().fsck.unwrap().clean);
    }
    assert_eq!(trees[0], trees[1]);
    assert!(trees[0].len() > 50);
    assert_eq!(
        images::fingerprint(&image.image).unwrap(),
        image.record.fingerprint,
        "the cached image changed"
    );
    // Found again, not made again.
    let again = cached(work.path(), "ext4", &aging);
    assert_eq!(again.record.made_at, image.record.made_at);
    images::remove_all(&RealSystem, work.path()).unwrap();
    assert!(!images::cache_dir(work.path()).exists());
}

/// A cached image changed behind fsbench's back (a block written into it) no longer matches
/// its record's fingerprint: it is made again, and the entry says why; an entry whose record is
/// a symlink is not followed but made again, as a regular file. (Before: a changed image gave
/// every sample another filesystem than the one recorded, silently.)
#[test]
fn a_changed_or_linked_cache_entry_is_made_again() {
    if !root_or_skip("a_changed_or_linked_cache_entry_is_made_again") {
        return;
    }
    use std::os::unix::fs::FileExt;
    let work = work_dir();
    let aging: AgingSpec = "fill=40,churn=0".parse().unwrap();
    let first = cached(work.path(), "ext4", &aging);
    assert!(first.remade.is_none());
    // A block of another content where the image had a hole or data.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&first.image)
        .unwrap();
    file.write_all_at(&[0x5a; 4096], 100 << 20).unwrap();
    drop(file);
    let mut said = Vec::new();
    let again = images::ensure(
        &RealSystem,
        &spec("ext4", work.path(), 300 << 20),
        &aging,
        &|| false,
        &mut |line| said.push(line.to_string()),
    )
    .unwrap();
    let why = again.remade.clone().expect("made again");
    assert!(why.contains("changed since it was made"), "{why}");
    assert!(
        said.iter().any(|l| l.contains("making it again")),
        "{said:?}"
    );
    assert_eq!(
        images::fingerprint(&again.image).unwrap(),
        again.record.fingerprint
    );
    // Found as it is now, once checked.
    let found = cached(work.path(), "ext4", &aging);
    assert!(found.remade.is_none());
    assert_eq!(found.record.fingerprint, again.record.fingerprint);
    // Its record a symlink to a copy of itself: not read, the entry made again.
    let json = again.image.with_extension("json");
    let real = again.image.with_extension("json.real");
    std::fs::rename(&json, &real).unwrap();
    std::os::unix::fs::symlink(&real, &json).unwrap();
    let _ = cached(work.path(), "ext4", &aging);
    assert!(
        std::fs::symlink_metadata(&json).unwrap().is_file(),
        "the record is still the symlink"
    );
    images::remove_all(&RealSystem, work.path()).unwrap();
}

/// Every file of the aged tree: its name, size and a hash of its bytes.
fn content(mountpoint: &Path) -> Vec<(String, u64, u64)> {
    aging::listing(mountpoint)
        .unwrap()
        .into_iter()
        .map(|(name, size)| {
            let bytes = std::fs::read(mountpoint.join(aging::AGED_DIR).join(&name)).unwrap();
            let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
            });
            (name, size, hash)
        })
        .collect()
}
