//! The device guard follows stacked devices, as root on loop devices the tests attach (CI is
//! root): a loop device over a mounted one, over a loop device over a mounted one, under a
//! mounted one, or over the image of a mounted filesystem is refused naming the chain, for the
//! bare device and for a filesystem, from a workload command and from a plan, and the mounted
//! filesystem is intact afterwards; an array member named twice (once through a symlink) or
//! stacked on another member is refused; a stacked chain nothing uses is still accepted.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A loop device the test attaches over `backing` (a device or a file); detached on drop.
struct LoopOver {
    device: String,
}

impl LoopOver {
    fn new(backing: &Path) -> LoopOver {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .unwrap();
        assert!(out.status.success(), "losetup: {}", stderr(&out));
        LoopOver {
            device: stdout(&out).trim().to_string(),
        }
    }

    fn path(&self) -> &Path {
        Path::new(&self.device)
    }
}

impl Drop for LoopOver {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// An ext4 on a loop device of the test's own, mounted on a directory of its own with a file
/// in it; unmounted on drop.
struct MountedExt4 {
    disk: TestDisk,
    mnt: tempfile::TempDir,
}

impl MountedExt4 {
    fn new() -> MountedExt4 {
        let disk = TestDisk::new();
        let made = Command::new("mkfs.ext4")
            .args(["-q", "-F", &disk.device])
            .output()
            .unwrap();
        assert!(made.status.success(), "{}", stderr(&made));
        let mnt = tempfile::Builder::new()
            .prefix("fsbench-test-mnt-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let fs = MountedExt4 { disk, mnt };
        fs.mount();
        std::fs::write(fs.mnt.path().join("precious"), b"keep me").unwrap();
        // On the device, not only in the page cache: an overwrite would be found by fsck.
        assert!(Command::new("sync")
            .arg("-f")
            .arg(fs.mnt.path())
            .status()
            .unwrap()
            .success());
        fs
    }

    fn device(&self) -> &Path {
        Path::new(&self.disk.device)
    }

    fn image(&self) -> PathBuf {
        let name = self.disk.device.trim_start_matches("/dev/");
        let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
            .expect("the test's loop device is attached");
        PathBuf::from(text.trim())
    }

    fn point(&self) -> String {
        self.mnt.path().display().to_string()
    }

    fn mount(&self) {
        let out = Command::new("mount")
            .arg(&self.disk.device)
            .arg(self.mnt.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "mount: {}", stderr(&out));
    }

    fn unmount(&self) {
        let out = Command::new("umount")
            .arg(self.mnt.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "umount: {}", stderr(&out));
    }

    /// Unmounted, the filesystem checks clean (`fsck -n`), and mounted again it still holds
    /// the file written before.
    fn assert_intact(&self) {
        self.unmount();
        let fsck = Command::new("fsck.ext4")
            .args(["-n", "-f", &self.disk.device])
            .output()
            .unwrap();
        assert!(
            fsck.status.success(),
            "the mounted filesystem was damaged: {}{}",
            stdout(&fsck),
            stderr(&fsck)
        );
        self.mount();
        assert_eq!(
            std::fs::read(self.mnt.path().join("precious")).unwrap(),
            b"keep me"
        );
    }
}

impl Drop for MountedExt4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
    }
}

/// `fsbench io` on the bare device `device`, with consent to `consent`.
fn raw_io(device: &Path, consent: &str) -> Output {
    fsbench()
        .args(["io", "--fs", "raw", "--rw", "randwrite", "--size", "1m"])
        .args(["--no-store", "--quiet", "--device"])
        .arg(device)
        .args(["--destroy-data-on", consent])
        .output()
        .unwrap()
}

/// `fsbench sleep` on `fs` on `device` (one, or an array's members), with consent to `consent`.
fn sleep_on(s: &Scratch, fs: &str, device: &str, consent: &str, array: Option<&str>) -> Output {
    let mut command = fsbench();
    command
        .args([
            "sleep",
            "--duration",
            "10ms",
            "--fs",
            fs,
            "--device",
            device,
        ])
        .args(["--destroy-data-on", consent, "--no-store", "--quiet"])
        .arg("--work-dir")
        .arg(s.work());
    if let Some(array) = array {
        command.args(["--array", array]);
    }
    command.output().unwrap()
}

/// A plan of one ext4 case on `device`.
fn plan_on(s: &Scratch, device: &Path, consent: &str) -> PathBuf {
    s.plan(&format!(
        "name = \"stacked\"\n[device]\nblock = \"{}\"\ndestroy_data_on = \"{consent}\"\n\
         [[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"10ms\"\n",
        device.display()
    ))
}

/// `fsbench run` of the plan (`--dry-run` when `dry`).
fn run_plan(s: &Scratch, plan: &Path, dry: bool) -> Output {
    let plan = plan.display().to_string();
    if dry {
        s.run(&["--dry-run", "--plan", &plan])
    } else {
        s.run(&["--plan", &plan])
    }
}

/// Exit 2 with one line of error that contains `needle`.
fn refused(output: &Output, needle: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected:\n{err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "'{needle}' not in: {err}"
    );
}

/// A loop device over a mounted loop device writes the mounted filesystem: refused by the bare
/// device, a workload command, a dry run and a campaign (each sample failed), naming the chain.
/// (Before: the guard passed it; the bare device overwrote the mounted ext4's superblock, and
/// an ext4 target ran mkfs over the mounted filesystem.)
#[test]
fn a_loop_device_over_a_mounted_one_is_refused_and_the_filesystem_is_intact() {
    if !root_or_skip("a_loop_device_over_a_mounted_one_is_refused_and_the_filesystem_is_intact") {
        return;
    }
    let fs = MountedExt4::new();
    let stacked = LoopOver::new(fs.device());
    let chain = format!(
        "{} -> {} (mounted on {})",
        stacked.device,
        fs.device().display(),
        fs.point()
    );
    // The stacked device shows the mounted ext4's signature: acknowledged, so that the only
    // reason left to refuse it is what it is stacked on.
    let consent = format!("{}:ext4", stacked.device);
    refused(&raw_io(stacked.path(), &consent), &chain);
    let s = Scratch::new();
    refused(
        &sleep_on(&s, "ext4", &stacked.device, &consent, None),
        &chain,
    );
    let plan = plan_on(&s, stacked.path(), &consent);
    refused(&run_plan(&s, &plan, true), &chain);
    // A campaign stores the refusal as each sample's failure.
    let output = run_plan(&s, &plan, false);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = format!("{}{}", stdout(&output), stderr(&output));
    assert_eq!(
        said.lines()
            .filter(|l| l.contains("failed") && l.contains(&chain))
            .count(),
        3,
        "{said}"
    );
    fs.assert_intact();
}

/// Two loop devices up from a mounted one: the message names every link of the chain.
#[test]
fn a_loop_over_a_loop_over_a_mounted_one_is_refused_naming_the_chain() {
    if !root_or_skip("a_loop_over_a_loop_over_a_mounted_one_is_refused_naming_the_chain") {
        return;
    }
    let fs = MountedExt4::new();
    let middle = LoopOver::new(fs.device());
    let top = LoopOver::new(middle.path());
    let chain = format!(
        "{} -> {} -> {} (mounted on {})",
        top.device,
        middle.device,
        fs.device().display(),
        fs.point()
    );
    let consent = format!("{}:ext4", top.device);
    refused(&raw_io(top.path(), &consent), &chain);
    let s = Scratch::new();
    refused(&sleep_on(&s, "xfs", &top.device, &consent, None), &chain);
    fs.assert_intact();
}

/// What is written reaches a mounted filesystem the other way too: a device a mounted loop
/// device is stacked on, and a second loop device over the image of a mounted one.
#[test]
fn a_device_under_a_mounted_loop_and_a_second_loop_over_a_mounted_image_are_refused() {
    if !root_or_skip(
        "a_device_under_a_mounted_loop_and_a_second_loop_over_a_mounted_image_are_refused",
    ) {
        return;
    }
    // The filesystem is mounted through a loop device over the test's disk: the disk itself
    // is not mounted.
    let disk = TestDisk::new();
    let over = LoopOver::new(Path::new(&disk.device));
    assert!(Command::new("mkfs.ext4")
        .args(["-q", "-F", &over.device])
        .status()
        .unwrap()
        .success());
    let mnt = tempfile::Builder::new()
        .prefix("fsbench-test-mnt-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let mount = Command::new("mount")
        .arg(&over.device)
        .arg(mnt.path())
        .output()
        .unwrap();
    assert!(mount.status.success(), "{}", stderr(&mount));
    let consent = format!("{}:ext4", disk.device);
    let output = raw_io(Path::new(&disk.device), &consent);
    let unmounted = Command::new("umount").arg(mnt.path()).status().unwrap();
    assert!(unmounted.success());
    refused(
        &output,
        &format!(
            "{} <- {} (mounted on {})",
            disk.device,
            over.device,
            mnt.path().display()
        ),
    );
    drop(over);

    // Two loop devices over one image: the second writes what the first has mounted.
    let fs = MountedExt4::new();
    let image = fs.image();
    let second = LoopOver::new(&image);
    let consent = format!("{}:ext4", second.device);
    refused(
        &raw_io(second.path(), &consent),
        &format!(
            "{} -> {} <- {} (mounted on {})",
            second.device,
            image.display(),
            fs.device().display(),
            fs.point()
        ),
    );
    fs.assert_intact();
}

/// An array's members are distinct devices: one named twice (once through a symlink) is
/// refused, and so is one stacked on another. (Before: the paths differed, so both passed.)
#[test]
fn an_array_member_named_twice_or_stacked_on_another_is_refused() {
    if !root_or_skip("an_array_member_named_twice_or_stacked_on_another_is_refused") {
        return;
    }
    let disk = TestDisk::new();
    let s = Scratch::new();
    let link = s.path().join("fsbench-test-link");
    std::os::unix::fs::symlink(&disk.device, &link).unwrap();
    let both = format!("{},{}", disk.device, link.display());
    let output = sleep_on(&s, "btrfs", &both, &both, Some("raid1:2"));
    refused(
        &output,
        &format!("{} and {} are the same device", link.display(), disk.device),
    );
    let stacked = LoopOver::new(Path::new(&disk.device));
    let both = format!("{},{}", disk.device, stacked.device);
    let output = sleep_on(&s, "btrfs", &both, &both, Some("raid1:2"));
    refused(
        &output,
        &format!(
            "{} and {} share storage: {} -> {}",
            stacked.device, disk.device, stacked.device, disk.device
        ),
    );
    let blank = Command::new("blkid")
        .args(["-p", &disk.device])
        .output()
        .unwrap();
    assert!(
        stdout(&blank).is_empty(),
        "the disk was written: {}",
        stdout(&blank)
    );
}

/// A chain nothing uses is safe to overwrite, and is accepted: a loop device over a loop
/// device over an image that a third, unused loop device also shows.
#[test]
fn a_stacked_chain_nothing_uses_is_accepted() {
    if !root_or_skip("a_stacked_chain_nothing_uses_is_accepted") {
        return;
    }
    let disk = TestDisk::new();
    let name = disk.device.trim_start_matches("/dev/");
    let image = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).unwrap();
    let beside = LoopOver::new(Path::new(image.trim()));
    let middle = LoopOver::new(Path::new(&disk.device));
    let top = LoopOver::new(middle.path());
    let s = Scratch::new();
    let plan = plan_on(&s, top.path(), &top.device);
    let output = run_plan(&s, &plan, true);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = sleep_on(&s, "ext4", &top.device, &top.device, None);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = raw_io(top.path(), &format!("{}:ext4", top.device));
    assert!(output.status.success(), "{}", stderr(&output));
    for device in [&disk.device, &beside.device, &middle.device, &top.device] {
        let still = Command::new("losetup").arg(device).output().unwrap();
        assert!(still.status.success(), "{device} was detached");
    }
}
