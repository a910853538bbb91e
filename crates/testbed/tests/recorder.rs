//! The recording device for real, as root (CI is root): ext4 made and mounted on a loop device
//! over the image fsbench serves through FUSE; files written and fsync'd with a mark after each;
//! the log holds the writes with their bytes, the flushes and the marks in order. Every crash
//! state made from it (at each flush, and subsets of the writes since) mounts — the journal
//! replayed — checks clean with `e2fsck -f -n`, and holds every file whose mark it promises,
//! with its bytes; some states lose the later files (the states differ). A state with one write
//! before a flush left out — a bug of the replay, injected — is caught.

use fsbench_testbed::loopdev;
use fsbench_testbed::recorder::log::Record;
use fsbench_testbed::recorder::states::{self, Budget, Builder};
use fsbench_testbed::recorder::Recorder;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn run(program: &str, args: &[&str]) -> std::process::Output {
    Command::new(program).args(args).output().unwrap()
}

/// A loop device, and the mount on it: both undone when dropped.
struct Mounted {
    point: PathBuf,
    mounted: bool,
    device: Option<loopdev::LoopDevice>,
}

impl Mounted {
    fn attach(image: &Path, direct: bool, point: &Path) -> Mounted {
        std::fs::create_dir_all(point).unwrap();
        Mounted {
            point: point.to_path_buf(),
            mounted: false,
            device: Some(loopdev::attach(image, direct).unwrap()),
        }
    }
    fn dev(&self) -> String {
        self.device.as_ref().unwrap().path.display().to_string()
    }
    fn mount(&mut self) -> Result<(), String> {
        let out = run("mount", &[&self.dev(), &self.point.display().to_string()]);
        self.mounted = out.status.success();
        match self.mounted {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }
    fn umount(&mut self) {
        if self.mounted {
            assert!(run("umount", &[&self.point.display().to_string()])
                .status
                .success());
            self.mounted = false;
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.mounted {
            let _ = run("umount", &[&self.point.display().to_string()]);
        }
        if let Some(device) = self.device.take() {
            let _ = loopdev::detach(device);
        }
    }
}

/// File `k`'s bytes: 16 KiB, the block number and `k` in every 8 bytes.
fn content(k: u64) -> Vec<u8> {
    (0..2048u64)
        .flat_map(|i| (i << 8 | k).to_le_bytes())
        .collect()
}

/// Which of files 1..=3 the tree at `point` holds with their bytes.
fn present(point: &Path) -> Vec<u64> {
    (1..=3)
        .filter(|&k| std::fs::read(point.join(format!("f{k}"))).ok() == Some(content(k)))
        .collect()
}

#[test]
fn crash_states_of_a_recorded_ext4_mount_clean_and_keep_what_was_promised() {
    if !root_or_skip("crash_states_of_a_recorded_ext4_mount_clean_and_keep_what_was_promised") {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("fsbench-recorder-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let d = dir.path();
    let base = d.join("base.img");
    std::fs::File::create(&base)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    std::fs::create_dir(d.join("served")).unwrap();
    let recorder = Recorder::serve(&base, &d.join("served")).unwrap();
    let log = {
        let mut fs = Mounted::attach(&recorder.image(), false, &d.join("mnt"));
        let mkfs = run("mkfs.ext4", &["-q", "-F", "-b", "4096", &fs.dev()]);
        assert!(mkfs.status.success(), "{mkfs:?}");
        fs.mount().unwrap();
        recorder
            .begin(&d.join("start.img"), &d.join("log.data"))
            .unwrap();
        for k in 1..=3u64 {
            let path = fs.point.join(format!("f{k}"));
            let file = std::fs::File::create(&path).unwrap();
            file.write_all_at(&content(k), 0).unwrap();
            file.sync_all().unwrap();
            // The directory entry too: the name is promised with the data.
            std::fs::File::open(&fs.point).unwrap().sync_all().unwrap();
            recorder.mark(k);
        }
        std::fs::write(fs.point.join("unsynced"), content(9)).unwrap();
        recorder.mark(4);
        let log = recorder.end().unwrap();
        fs.umount();
        log
    };
    recorder.stop().unwrap();
    let counts = log.counts();
    assert!(counts.writes >= 6 && counts.flushes >= 3, "{counts:?}");
    assert_eq!(counts.marks, 4);
    let marks: Vec<u64> = log
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Mark(n) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(marks, [1, 2, 3, 4]);
    // Every fsync'd file's bytes reached the device before its mark, a flush between.
    let mark_1 = log
        .records
        .iter()
        .position(|r| *r == Record::Mark(1))
        .unwrap();
    assert!(log.records[..mark_1].contains(&Record::Flush));

    let all = states::states(
        &log.records,
        Budget {
            per_flush: 3,
            ..Budget::default()
        },
    );
    assert!(all.len() >= 6, "{}", all.len());
    let mut builder = Builder::new(log, &d.join("start.img"), &d.join("working.img")).unwrap();
    let mut kept = Vec::new();
    let mut injected = None;
    for (n, state) in all.iter().enumerate() {
        let image = d.join(format!("state-{n}.img"));
        builder.make(state, &image).unwrap();
        let mut fs = Mounted::attach(&image, true, &d.join(format!("state-{n}")));
        fs.mount()
            .unwrap_or_else(|e| panic!("{}: the state does not mount: {e}", state.what));
        let have = present(&fs.point);
        fs.umount();
        let fsck = run("e2fsck", &["-f", "-n", &fs.dev()]);
        assert!(
            fsck.status.success(),
            "{}: {}",
            state.what,
            String::from_utf8_lossy(&fsck.stdout)
        );
        drop(fs);
        let promised = state.promised.unwrap_or(0).min(3);
        for k in 1..=promised {
            assert!(
                have.contains(&k),
                "{}: f{k} was promised (mark {promised}) and is not there: {have:?}",
                state.what
            );
        }
        kept.push(have.len());
        // The first state that promises f1, for the injected bug below.
        if promised >= 1 && injected.is_none() {
            injected = Some(image);
        } else {
            std::fs::remove_file(&image).unwrap();
        }
    }
    assert!(kept.contains(&0) && kept.contains(&3), "{kept:?}");

    // The replay's bug: f1's data write, before the flush that made it durable, left out
    // (its range as it was at the log's start). The check finds f1 not as written.
    let image = injected.unwrap();
    let start = std::fs::File::open(d.join("start.img")).unwrap();
    let target = std::fs::OpenOptions::new()
        .write(true)
        .open(&image)
        .unwrap();
    let f1 = content(1);
    let log = builder.log();
    let dropped = log.records[..mark_1]
        .iter()
        .enumerate()
        .find_map(|(i, r)| match *r {
            Record::Write { offset, len, .. } if len >= 4096 => {
                let bytes = log.bytes(i).unwrap();
                bytes
                    .windows(8)
                    .step_by(8)
                    .any(|w| w == &f1[..8])
                    .then_some((offset, len))
            }
            _ => None,
        })
        .expect("f1's data write in the log");
    let mut before = vec![0u8; dropped.1 as usize];
    start.read_exact_at(&mut before, dropped.0).unwrap();
    target.write_all_at(&before, dropped.0).unwrap();
    target.sync_all().unwrap();
    let mut fs = Mounted::attach(&image, true, &d.join("injected"));
    fs.mount().unwrap();
    assert!(
        !present(&fs.point).contains(&1),
        "the dropped write went unnoticed"
    );
}

/// A target on the recording device, power-cut: each crash state of its log is mounted where
/// the filesystem was (its recovery timed), checked clean, and holds the fsync'd file wherever
/// its mark is promised; after `resume` the filesystem is back with both files, and teardown
/// leaves no mount, loop device or file behind.
#[test]
fn a_recorded_target_is_power_cut_state_by_state_and_resumes() {
    use fsbench_testbed::{RealSystem, Target, TargetSpec};
    if !root_or_skip("a_recorded_target_is_power_cut_state_by_state_and_resumes") {
        return;
    }
    let work = tempfile::Builder::new()
        .prefix("fsbench-recorder-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let spec = TargetSpec::builder("ext4", work.path())
        .recording(true)
        .build()
        .unwrap();
    let mut target = Target::prepare(&RealSystem, spec, &|| false).unwrap();
    assert!(target.records());
    assert_eq!(target.info().device.kind, "recorded image");
    let point = target.info().mountpoint.clone();
    target.record().unwrap();
    let f1 = std::fs::File::create(point.join("f1")).unwrap();
    f1.write_all_at(&content(1), 0).unwrap();
    f1.sync_all().unwrap();
    std::fs::File::open(&point).unwrap().sync_all().unwrap();
    drop(f1);
    target.mark(1);
    std::fs::write(point.join("f2"), content(2)).unwrap();
    target.mark(2);
    let states = target
        .power_cut(Budget {
            per_flush: 2,
            ..Budget::default()
        })
        .unwrap();
    assert!(states.len() >= 3, "{states:?}");
    let mut lost = 0;
    for (i, state) in states.iter().enumerate() {
        let mounted = target.crash_state(i).unwrap();
        assert_eq!(mounted.unmountable, None, "{}", state.what);
        assert!(mounted.recovery_ns > 0);
        let fsck = mounted.fsck.unwrap();
        assert!(fsck.clean, "{}: {}", state.what, fsck.output_tail);
        let have = std::fs::read(point.join("f1")).ok() == Some(content(1));
        if state.promised >= Some(1) {
            assert!(have, "{}: f1 was promised", state.what);
        }
        lost += usize::from(!have);
    }
    assert!(lost > 0, "some state is from before f1's fsync");
    target.resume().unwrap();
    assert_eq!(std::fs::read(point.join("f1")).unwrap(), content(1));
    assert_eq!(std::fs::read(point.join("f2")).unwrap(), content(2));
    let info = target.finish();
    assert!(info.fsck.unwrap().clean);
    assert!(
        info.teardown.iter().all(|n| !n.starts_with("error")),
        "{:?}",
        info.teardown
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let here = work.path().display().to_string();
    assert!(!mounts.contains(&here), "{mounts}");
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "state")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A power cut of a real ext4 target kept as a crash bundle: the bundle's log bytes are the
/// cut's; every state materialised from it (by `Bundle`, no root needed for that) and
/// loop-mounted holds the same files as the state `crash_state` mounted for the same index —
/// f1 wherever its mark is promised, and missing in some state, so the comparison can fail —
/// and checks clean with `e2fsck -f -n` after its recovery. The cut goes on after the bundle is
/// kept; after `resume` and teardown only the bundle is left (then removed by the test).
#[test]
fn a_kept_power_cut_replays_each_state_as_the_target_made_it() {
    use fsbench_testbed::recorder::bundle::{self, Bundle};
    use fsbench_testbed::{DeviceSpec, RealSystem, Target, TargetSpec};
    if !root_or_skip("a_kept_power_cut_replays_each_state_as_the_target_made_it") {
        return;
    }
    let work = tempfile::Builder::new()
        .prefix("fsbench-recorder-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let spec = TargetSpec::builder("ext4", work.path())
        .device(DeviceSpec::Image {
            size_bytes: Some(256 << 20),
        })
        .mount_options(Some("noatime"))
        .recording(true)
        .build()
        .unwrap();
    let mut target = Target::prepare(&RealSystem, spec, &|| false).unwrap();
    let point = target.info().mountpoint.clone();
    assert!(target.keep_power_cut(work.path()).is_err(), "no cut yet");
    target.record().unwrap();
    let f1 = std::fs::File::create(point.join("f1")).unwrap();
    f1.write_all_at(&content(1), 0).unwrap();
    f1.sync_all().unwrap();
    std::fs::File::open(&point).unwrap().sync_all().unwrap();
    drop(f1);
    target.mark(1);
    std::fs::write(point.join("f2"), content(2)).unwrap();
    target.mark(2);
    let budget = Budget {
        per_flush: 2,
        ..Budget::default()
    };
    let states = target.power_cut(budget).unwrap();
    assert!(states.len() >= 3, "{states:?}");

    let kept_in = work.path().join("bundles");
    let dir = target.keep_power_cut(&kept_in).unwrap();
    assert!(dir.starts_with(&kept_in));
    let mut parts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    parts.sort();
    assert_eq!(
        parts,
        [bundle::MANIFEST, bundle::LOG, bundle::DATA, bundle::START]
    );
    let kept = Bundle::open(&dir).unwrap();
    let manifest = kept.manifest();
    assert_eq!(manifest.filesystem, "ext4");
    assert_eq!(manifest.mount_options.as_deref(), Some("noatime"));
    assert_eq!(manifest.image_bytes, 256 << 20);
    assert_eq!(manifest.budget, budget);
    assert!(manifest
        .mkfs_command
        .as_deref()
        .unwrap()
        .contains("mkfs.ext4"));
    let listed: Vec<(String, Option<u64>)> = manifest
        .states
        .iter()
        .map(|s| (s.what.clone(), s.promised))
        .collect();
    let cut: Vec<(String, Option<u64>)> = states
        .iter()
        .map(|s| (s.what.clone(), s.promised))
        .collect();
    assert_eq!(listed, cut);
    // The bundle's bytes are the cut's: its data file equals the one the cut wrote (beside the
    // target's image, until resume).
    let cut_data = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".log") && p.to_string_lossy().contains("-log-"))
        .expect("the cut's data file");
    let cut_bytes = std::fs::read(&cut_data).unwrap();
    let kept_bytes = std::fs::read(dir.join(bundle::DATA)).unwrap();
    assert!(!kept_bytes.is_empty());
    assert_eq!(kept_bytes, cut_bytes[..kept_bytes.len()]);
    assert_eq!(kept_bytes.len() as u64, kept.log().kept());
    // And its start image is the cut's.
    let cut_start = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("-start-"))
        .expect("the cut's start image");
    let cmp = run(
        "cmp",
        &[
            &cut_start.display().to_string(),
            &dir.join(bundle::START).display().to_string(),
        ],
    );
    assert!(cmp.status.success(), "{cmp:?}");

    let replays = tempfile::Builder::new()
        .prefix("fsbench-bundle-replay-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let mut lost = 0;
    for (i, state) in states.iter().enumerate() {
        let mounted = target.crash_state(i).unwrap();
        assert_eq!(mounted.unmountable, None, "{}", state.what);
        let had = present(&point);
        let image = replays.path().join(format!("state-{i}.img"));
        kept.materialise(i, &image).unwrap();
        assert_eq!(std::fs::metadata(&image).unwrap().len(), 256 << 20);
        // Buffered, as `mount -o loop` attaches it (a 256 MiB ext4 has 1 KiB blocks, which a
        // direct I/O loop device over a 4 KiB-sector file cannot read).
        let mut fs = Mounted::attach(&image, false, &replays.path().join(format!("m{i}")));
        fs.mount()
            .unwrap_or_else(|e| panic!("{}: the replayed state does not mount: {e}", state.what));
        let has = present(&fs.point);
        fs.umount();
        let fsck = run("e2fsck", &["-f", "-n", &fs.dev()]);
        assert!(
            fsck.status.success(),
            "{}: {}",
            state.what,
            String::from_utf8_lossy(&fsck.stdout)
        );
        drop(fs);
        assert_eq!(
            has, had,
            "state {i} ({}): bundle and cut differ",
            state.what
        );
        if state.promised >= Some(1) {
            assert!(has.contains(&1), "{}: f1 was promised", state.what);
        }
        lost += usize::from(!has.contains(&1));
        std::fs::remove_file(&image).unwrap();
    }
    assert!(lost > 0, "some state is from before f1's fsync");
    target.resume().unwrap();
    assert_eq!(std::fs::read(point.join("f1")).unwrap(), content(1));
    let info = target.finish();
    assert!(info.fsck.unwrap().clean);
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "state")
        .collect();
    assert_eq!(left, ["bundles"], "only the bundle is left");
    assert!(Bundle::open(&dir).is_ok(), "the bundle outlives its target");
    std::fs::remove_dir_all(&kept_in).unwrap();
}

/// Whether zfs-fuse is installed; says why a zfs test is skipped when it is not.
fn zfs_fuse_or_skip(test: &str) -> bool {
    let found = ["/usr/sbin/zfs-fuse", "/usr/bin/zfs-fuse", "/sbin/zfs-fuse"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !found {
        eprintln!("skipping {test}: zfs-fuse is not installed (apt-get install zfs-fuse)");
    }
    found
}

/// The pools zfs-fuse has imported now.
fn pools() -> Vec<String> {
    let out = run("zpool", &["list", "-H", "-o", "name"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A zfs pool (zfs-fuse) on the recording device, power-cut: the cut exports the pool; each
/// crash state's pool is imported from its own loop device alone (its recovery timed), scrubs
/// clean, and holds the fsync'd file wherever its mark is promised; zfs-fuse's syncs reach the
/// log as flushes; after `resume` the pool is back with both files, and teardown leaves no pool,
/// mount, loop device or file behind.
#[test]
fn a_recorded_zfs_pool_is_power_cut_state_by_state_and_resumes() {
    use fsbench_testbed::recorder::bundle::Bundle;
    use fsbench_testbed::{RealSystem, Target, TargetSpec};
    let test = "a_recorded_zfs_pool_is_power_cut_state_by_state_and_resumes";
    if !root_or_skip(test) || !zfs_fuse_or_skip(test) {
        return;
    }
    let work = tempfile::Builder::new()
        .prefix("fsbench-recorder-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let spec = TargetSpec::builder("zfs", work.path())
        .recording(true)
        .build()
        .unwrap();
    let mut target = Target::prepare(&RealSystem, spec, &|| false).unwrap();
    assert!(target.records());
    assert_eq!(target.info().device.kind, "recorded image");
    let ours = format!("fsbench-{}-", std::process::id());
    assert!(
        pools().iter().any(|p| p.starts_with(&ours)),
        "{:?}",
        pools()
    );
    let point = target.info().mountpoint.clone();
    target.record().unwrap();
    let f1 = std::fs::File::create(point.join("f1")).unwrap();
    f1.write_all_at(&content(1), 0).unwrap();
    f1.sync_all().unwrap();
    std::fs::File::open(&point).unwrap().sync_all().unwrap();
    drop(f1);
    target.mark(1);
    std::fs::write(point.join("f2"), content(2)).unwrap();
    target.mark(2);
    let states = target
        .power_cut(Budget {
            per_flush: 2,
            ..Budget::default()
        })
        .unwrap();
    assert!(
        !pools().iter().any(|p| p.starts_with(&ours)),
        "the cut exports the pool: {:?}",
        pools()
    );
    let kept = target.keep_power_cut(&work.path().join("bundles")).unwrap();
    let counts = Bundle::open(&kept).unwrap().log().counts();
    eprintln!("zfs-fuse's log: {counts:?}; {} states", states.len());
    assert!(counts.writes > 0, "{counts:?}");
    assert!(
        counts.flushes > 0,
        "zfs-fuse's fsync never flushed: {counts:?}"
    );
    assert!(states.len() >= 3, "{states:?}");
    let mut lost = 0;
    for (i, state) in states.iter().enumerate() {
        let mounted = target.crash_state(i).unwrap();
        assert_eq!(mounted.unmountable, None, "{}", state.what);
        assert!(mounted.recovery_ns > 0);
        let fsck = mounted.fsck.unwrap();
        eprintln!(
            "state {i} ({}): import {:.0} ms, scrub {:.0} ms, clean {}",
            state.what,
            mounted.recovery_ns as f64 / 1e6,
            fsck.elapsed_ns as f64 / 1e6,
            fsck.clean
        );
        assert!(fsck.clean, "{}: {}", state.what, fsck.output_tail);
        let have = std::fs::read(point.join("f1")).ok() == Some(content(1));
        if state.promised >= Some(1) {
            assert!(have, "{}: f1 was promised", state.what);
        }
        lost += usize::from(!have);
    }
    assert!(lost > 0, "some state is from before f1's fsync");
    target.resume().unwrap();
    assert_eq!(std::fs::read(point.join("f1")).unwrap(), content(1));
    assert_eq!(std::fs::read(point.join("f2")).unwrap(), content(2));
    let info = target.finish();
    assert!(info.fsck.unwrap().clean);
    assert!(
        info.teardown.iter().all(|n| !n.starts_with("error")),
        "{:?}",
        info.teardown
    );
    assert!(
        !pools().iter().any(|p| p.starts_with(&ours)),
        "{:?}",
        pools()
    );
    let here = work.path().display().to_string();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&here), "{mounts}");
    let loops = String::from_utf8_lossy(&run("losetup", &["-a"]).stdout).into_owned();
    assert!(!loops.contains(&here), "{loops}");
    std::fs::remove_dir_all(work.path().join("bundles")).unwrap();
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "state" && n != "run")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
