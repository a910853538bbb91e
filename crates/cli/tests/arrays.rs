//! Multi-device targets, for real, as root on loop devices (CI is root): a btrfs RAID 0 and a
//! zfs pool striped over two loop devices are made, their members read back, used by a
//! workload and torn down with nothing left; md RAID ends `unsupported` with the kernel's
//! reason where the kernel has no md (a command and a campaign, not retried); real devices
//! as members each need consent; a campaign killed on a multi-device target leaves nothing
//! once its guard, or `fsbench cleanup`, has run.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Loop devices whose backing file is under `dir`, as `losetup -a` lists them.
fn loops_under(dir: &Path) -> Vec<String> {
    let out = Command::new("losetup").arg("-a").output().unwrap();
    let dir = dir.to_string_lossy().to_string();
    stdout(&out)
        .lines()
        .filter(|l| l.contains(&dir))
        .map(str::to_string)
        .collect()
}

/// Nothing of the scratch's is mounted or attached, no image or mount point is in its work
/// directory, and no ledger is left in its state directory.
fn nothing_left(s: &Scratch) {
    s.assert_clean();
    let ledgers: Vec<_> = std::fs::read_dir(s.work().join("state"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(ledgers.is_empty(), "ledgers left: {ledgers:?}");
}

/// `fsbench matrix` on `fs` laid out as `array` over images of 256 MiB, in the scratch's work
/// directory; returns the stored target.
fn matrix_on_array(s: &Scratch, fs: &str, array: &str) -> Value {
    let json = s.path().join(format!("{fs}.json"));
    let output = fsbench()
        .args([
            "matrix",
            "--fs",
            fs,
            "--array",
            array,
            "--device",
            "image:256m",
        ])
        .arg("--work-dir")
        .arg(s.work())
        .args([
            "-i",
            "0,1",
            "--file-sizes",
            "64k..256k",
            "--record-sizes",
            "64k",
        ])
        .args(["--min-time", "2ms", "--no-store", "--quiet", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(output.status.success(), "{fs}: {}", stderr(&output));
    let doc = read_json(&json);
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "ok", "{sample}");
    // Used: the write, rewrite, read and reread passes of every cell.
    assert_eq!(flat_results(&doc).len(), 3 * 4, "{fs}");
    sample["target"].clone()
}

/// Each member is a loop device of its own image in the work directory, and the read-back
/// lists every one: the filesystem (or md) uses them all.
fn assert_members(target: &Value, made_by: &str, layout: &str, work: &Path) {
    let array = &target["device"]["array"];
    assert_eq!(array["layout"], layout, "{target}");
    assert_eq!(array["made_by"], made_by, "{target}");
    let members = array["members"].as_array().unwrap();
    assert_eq!(members.len(), 2, "{target}");
    let paths: Vec<&str> = members
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_ne!(paths[0], paths[1]);
    for member in members {
        assert!(member["path"].as_str().unwrap().starts_with("/dev/loop"));
        let image = PathBuf::from(member["image"].as_str().unwrap());
        assert_eq!(image.parent().unwrap(), work, "{member}");
        assert_eq!(member["size_bytes"], 256 << 20);
    }
    let listed: Vec<&str> = array["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(listed, paths, "{target}");
    assert_eq!(target["device"]["size_bytes"], 2 * (256 << 20));
    assert!(target["fsck"]["clean"].as_bool().unwrap(), "{target}");
    let teardown: Vec<&str> = target["teardown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        teardown.iter().all(|n| !n.starts_with("error")),
        "{teardown:?}"
    );
    for path in paths {
        assert!(
            teardown.contains(&format!("detached {path}").as_str()),
            "{path}: {teardown:?}"
        );
    }
}

#[test]
fn a_btrfs_raid0_over_two_loop_devices_is_made_read_back_used_and_removed() {
    if !root_or_skip("a_btrfs_raid0_over_two_loop_devices_is_made_read_back_used_and_removed") {
        return;
    }
    let s = Scratch::new();
    let target = matrix_on_array(&s, "btrfs", "raid0:2");
    assert_members(&target, "btrfs", "raid0:2", &s.work());
    let mkfs = target["mkfs"]["command"].as_str().unwrap();
    let members: Vec<&str> = target["device"]["array"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        mkfs,
        format!("mkfs.btrfs -f -d raid0 {} {}", members[0], members[1])
    );
    assert!(
        target["device"]["array"]["read_back"]
            .as_str()
            .unwrap()
            .starts_with("btrfs filesystem show"),
        "{target}"
    );
    // The scheduler goes on each member.
    assert!(
        target["scheduler"]["note"]
            .as_str()
            .unwrap()
            .contains("each of the 2 members"),
        "{target}"
    );
    nothing_left(&s);
}

#[test]
fn a_zfs_pool_striped_over_two_loop_devices_is_made_read_back_used_and_removed() {
    if !root_or_skip("a_zfs_pool_striped_over_two_loop_devices_is_made_read_back_used_and_removed")
    {
        return;
    }
    let s = Scratch::new();
    let target = matrix_on_array(&s, "zfs", "raid0:2");
    assert_members(&target, "zfs", "raid0:2", &s.work());
    let create = target["mkfs"]["command"].as_str().unwrap();
    let members = target["device"]["array"]["members"].as_array().unwrap();
    // One vdev per member: a stripe.
    assert!(
        create.starts_with("zpool create")
            && create.ends_with(&format!(
                " {} {}",
                members[0]["path"].as_str().unwrap(),
                members[1]["path"].as_str().unwrap()
            )),
        "{create}"
    );
    assert!(
        target["device"]["array"]["read_back"]
            .as_str()
            .unwrap()
            .starts_with("zpool status fsbench-"),
        "{target}"
    );
    nothing_left(&s);
}

/// md RAID where the kernel has none: a command ends `unsupported` (exit 3) with the kernel's
/// reason in one line, having made nothing; where it has md, the array is made and read back.
#[test]
fn md_raid0_in_a_command_is_unsupported_with_the_kernels_reason_where_it_has_no_md() {
    if !root_or_skip(
        "md_raid0_in_a_command_is_unsupported_with_the_kernels_reason_where_it_has_no_md",
    ) {
        return;
    }
    let s = Scratch::new();
    let json = s.path().join("md.json");
    let output = fsbench()
        .args(["sleep", "--duration", "10ms", "--fs", "ext4"])
        .args(["--array", "md-raid0:2,chunk=64k", "--device", "image:64m"])
        .arg("--work-dir")
        .arg(s.work())
        .args(["--no-store", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let err = stderr(&output);
    if Path::new("/proc/mdstat").exists() && Command::new("mdadm").arg("--version").output().is_ok()
    {
        assert!(output.status.success(), "{err}");
        let doc = read_json(&json);
        let target = &first_sample(&doc)["target"];
        assert_eq!(target["device"]["array"]["made_by"], "md", "{target}");
        assert_eq!(
            target["device"]["array"]["listed"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    } else {
        assert_eq!(output.status.code(), Some(3), "{err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line expected:\n{err}");
        assert!(
            lines[0].contains("md RAID (md-raid0:2,chunk=64k) cannot be made on this host")
                && lines[0].contains("/proc/mdstat is absent"),
            "{err}"
        );
    }
    nothing_left(&s);
}

/// The same in a campaign: its md case ends `unsupported` with the kernel's reason once, its
/// later repetitions are not tried again, and its btrfs RAID 0 case runs.
#[test]
fn md_raid0_in_a_campaign_is_unsupported_once_and_the_btrfs_array_runs() {
    if !root_or_skip("md_raid0_in_a_campaign_is_unsupported_once_and_the_btrfs_array_runs") {
        return;
    }
    if Path::new("/proc/mdstat").exists() {
        eprintln!("skipped: this kernel has md");
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "arrays"
repetitions = 2
[device]
image = "160m"
[[filesystems]]
name = "ext4"
array = "md-raid0:2,chunk=64k"
[[filesystems]]
name = "btrfs"
array = "raid0:2"
[[workloads]]
kind = "sleep"
duration = "10ms"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    let text = format!("{}{}", stdout(&output), stderr(&output));
    // Some cases ran: the campaign is not all unsupported.
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert_eq!(
        text.matches("Note: md RAID cannot be made on this host")
            .count(),
        1,
        "{text}"
    );
    let doc = s.export(1);
    let cases = run_cases(&doc);
    let md = cases
        .iter()
        .find(|c| c["key"].as_str().unwrap().starts_with("ext4."))
        .unwrap();
    let samples = md["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2, "{md}");
    for sample in samples {
        assert_eq!(sample["status"], "unsupported", "{sample}");
        assert!(
            sample["reason"]
                .as_str()
                .unwrap()
                .contains("/proc/mdstat is absent"),
            "{sample}"
        );
    }
    assert_ne!(samples[0]["not_retried"], true, "{md}");
    assert_eq!(samples[1]["not_retried"], true, "{md}");
    let btrfs = cases
        .iter()
        .find(|c| c["key"].as_str().unwrap().starts_with("btrfs."))
        .unwrap();
    for sample in btrfs["samples"].as_array().unwrap() {
        assert_eq!(sample["status"], "ok", "{sample}");
        assert_eq!(
            sample["target"]["device"]["array"]["listed"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
    nothing_left(&s);
}

/// Real devices as an array's members: each needs its own consent, and each is checked by the
/// device guard (a mounted one is refused); given up, they carry the array, which is read
/// back, and they stay attached (fsbench did not make them).
#[test]
fn every_real_member_needs_consent_and_passes_the_guard() {
    if !root_or_skip("every_real_member_needs_consent_and_passes_the_guard") {
        return;
    }
    let (a, b) = (TestDisk::new(), TestDisk::new());
    let both = format!("{},{}", a.device, b.device);
    let s = Scratch::new();
    let run = |consent: &str| {
        fsbench()
            .args(["sleep", "--duration", "10ms", "--fs", "btrfs"])
            .args(["--array", "raid1:2", "--device", &both])
            .args(["--destroy-data-on", consent])
            .arg("--work-dir")
            .arg(s.work())
            .args(["--no-store", "--quiet"])
            .output()
            .unwrap()
    };
    let output = run(&a.device);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("{} is a real device", b.device)),
        "{}",
        stderr(&output)
    );
    // The second member mounted: the guard refuses it, before anything is written.
    assert!(Command::new("mkfs.ext4")
        .args(["-q", "-F", &b.device])
        .status()
        .unwrap()
        .success());
    let mnt = tempfile::tempdir().unwrap();
    assert!(Command::new("mount")
        .arg(&b.device)
        .arg(mnt.path())
        .status()
        .unwrap()
        .success());
    let output = run(&format!("{},{}:ext4", a.device, b.device));
    assert!(Command::new("umount")
        .arg(mnt.path())
        .status()
        .unwrap()
        .success());
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("{} is in use", b.device)),
        "{}",
        stderr(&output)
    );
    let output = run(&format!("{},{}:ext4", a.device, b.device));
    assert!(output.status.success(), "{}", stderr(&output));
    for disk in [&a.device, &b.device] {
        let still = Command::new("losetup").arg(disk).output().unwrap();
        assert!(still.status.success(), "{disk} was detached");
    }
    nothing_left(&s);
}

/// A campaign on a btrfs RAID 0 whose one sample sleeps long enough to be killed in (and,
/// resumed, is stopped by the plan's timeout).
fn long_campaign(s: &Scratch) -> std::process::Child {
    let plan = s.plan(
        r#"
name = "killed-on-an-array"
repetitions = 1
timeout = "5s"
[device]
image = "160m"
[[filesystems]]
name = "btrfs"
array = "raid0:2"
[[workloads]]
kind = "sleep"
duration = "60s"
"#,
    );
    s.command(&["--plan", plan.to_str().unwrap(), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the campaign's filesystem is mounted over both its members.
fn wait_for_the_array(s: &Scratch) {
    let me = s.path().to_string_lossy().to_string();
    let start = Instant::now();
    while !(std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .contains(&me)
        && loops_under(s.path()).len() == 2)
    {
        assert!(start.elapsed() < Duration::from_secs(60), "never mounted");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL of `fsbench run` on a two-device target: its guard unmounts, detaches both loop
/// devices and removes both images, leaving `fsbench cleanup` nothing; `--resume` then makes
/// the array anew for the sample that was in flight.
#[test]
fn a_campaign_killed_on_an_array_leaves_nothing_after_its_guard() {
    if !root_or_skip("a_campaign_killed_on_an_array_leaves_nothing_after_its_guard") {
        return;
    }
    let s = Scratch::new();
    let mut child = long_campaign(&s);
    wait_for_the_array(&s);
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    s.wait_until_nothing_mounted(Duration::from_secs(30));
    // Both members' images, said on the killed process's standard error.
    let said = stderr(&out);
    assert!(said.contains("was killed; unmounted"), "{said}");
    let images = said
        .lines()
        .filter(|l| l.contains("was killed; removed") && l.ends_with(".img"))
        .count();
    assert_eq!(images, 2, "{said}");
    let cleanup = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(s.work())
        .output()
        .unwrap();
    assert!(
        stdout(&cleanup).starts_with("nothing to clean up"),
        "{}",
        stdout(&cleanup)
    );
    nothing_left(&s);
    // The sample in flight runs again on a new array (its 60 s sleep ended by the timeout).
    let resumed = s.run(&["--resume", "1", "--quiet"]);
    assert_eq!(resumed.status.code(), Some(1), "{}", stderr(&resumed));
    let doc = s.export(1);
    let sample = first_sample(&doc);
    assert_eq!(sample["status"], "timeout", "{sample}");
    let listed = &sample["target"]["device"]["array"]["listed"];
    assert_eq!(listed.as_array().unwrap().len(), 2, "{sample}");
    nothing_left(&s);
}

/// The same with the guard killed too (as a power cut would): `fsbench cleanup` undoes every
/// member from the ledger.
#[test]
fn a_campaign_killed_on_an_array_with_its_guard_is_undone_by_cleanup() {
    if !root_or_skip("a_campaign_killed_on_an_array_with_its_guard_is_undone_by_cleanup") {
        return;
    }
    let s = Scratch::new();
    let mut child = long_campaign(&s);
    wait_for_the_array(&s);
    let guards: Vec<u32> = children_of(child.id())
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains(" guard "))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(guards.len(), 1, "{:?}", children_of(child.id()));
    // SAFETY: signalling the guard of the child this test spawned.
    unsafe { libc::kill(guards[0] as i32, libc::SIGKILL) };
    child.kill().unwrap();
    child.wait().unwrap();
    // The workload process ends with the campaign (its parent-death signal), then nothing
    // keeps the mount busy.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        loops_under(s.path()).len(),
        2,
        "the killed run left its members"
    );
    let output = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(s.work())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let said = stdout(&output);
    assert!(said.contains("unmounted"), "{said}");
    nothing_left(&s);
}
