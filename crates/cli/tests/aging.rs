//! Aged filesystems end to end, as root on loop devices (CI is root), with images of a few
//! hundred MiB: a campaign runs its configurations fresh and aged, each aged sample from a copy
//! of one cached image (made once, found again by the next run), with the aging penalty in the
//! summary; a workload that does not fit the aged filesystem's free space fails before it
//! starts, saying so; a run killed while it ages, while it fingerprints the aged image or while
//! it copies it leaves nothing that `fsbench cleanup` does not remove, and the cache is listed
//! and, asked, removed.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A work directory of the test's own, on disk (images are sparse files in it).
fn work_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fsbench-aging-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// What a run left of its own in `work`: mounts, loop devices, images and mount points outside
/// the cache of aged images.
fn leftovers(work: &Path) -> Vec<String> {
    let text = work.to_string_lossy().to_string();
    let mut found: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&text))
        .map(|l| format!("mount: {l}"))
        .collect();
    let losetup = Command::new("losetup").arg("-a").output().unwrap();
    found.extend(
        String::from_utf8_lossy(&losetup.stdout)
            .lines()
            .filter(|l| l.contains(&text))
            .map(|l| format!("loop: {l}")),
    );
    found.extend(
        entries(work)
            .into_iter()
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.ends_with(".img") || name.starts_with("mnt-")
            })
            .map(|p| format!("file: {}", p.display())),
    );
    found
}

/// The cached images' files (records and images).
fn cache(work: &Path) -> Vec<String> {
    let mut names: Vec<String> = entries(&work.join("images"))
        .into_iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != ".lock")
        .collect();
    names.sort();
    names
}

fn cleanup(work: &Path, extra: &[&str]) -> std::process::Output {
    let output = fsbench()
        .args(["cleanup", "--work-dir"])
        .arg(work)
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

/// A sleep on ext4 aged by `spec` on an image of `size`, in the background.
fn aged_sleep(work: &Path, size: &str, spec: &str) -> Child {
    fsbench()
        .args(["sleep", "--duration", "60s", "--fs", "ext4", "--no-store"])
        .args(["--device", &format!("image:{size}"), "--age", spec])
        .arg("--work-dir")
        .arg(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Kills `child` as a power cut would: its guard first (which would otherwise undo
/// everything by itself), then the process.
fn kill_with_its_guard(mut child: Child) {
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
}

/// The run id a campaign's output names (`run 3: ...`).
fn run_id(output: &std::process::Output) -> i64 {
    let text = format!("{}{}", stdout(output), stderr(output));
    text.split_whitespace()
        .skip_while(|w| *w != "Run" && *w != "run")
        .nth(1)
        .and_then(|w| w.trim_end_matches(':').parse().ok())
        .unwrap_or_else(|| panic!("no run id in:\n{text}"))
}

/// Waits until `found` finds something in `work` (polling), or fails after a minute.
fn wait_for(work: &Path, what: &str, found: impl Fn(&Path) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !found(work) {
        assert!(Instant::now() < deadline, "never saw {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The entries of `dir` whose names start with `prefix` and end with `suffix`.
fn named(dir: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect()
}

/// Killed while it ages (the aged tree is being written), and again while the aged image it
/// made is fingerprinted (it exists, not yet in the cache): each time `fsbench cleanup` leaves
/// nothing, and no half-made image is ever in the cache.
#[test]
fn a_run_killed_while_it_ages_leaves_nothing_after_cleanup() {
    if !root_or_skip("a_run_killed_while_it_ages_leaves_nothing_after_cleanup") {
        return;
    }
    let work = work_dir();
    let w = work.path();
    let child = aged_sleep(w, "400m", "fill=80,churn=50");
    wait_for(w, "the aged tree", |w| {
        named(w, "mnt-ext4-", "")
            .iter()
            .any(|m| m.join("fsbench-aged").exists())
    });
    kill_with_its_guard(child);
    assert!(!leftovers(w).is_empty(), "a killed aging left nothing?");
    let output = cleanup(w, &[]);
    assert!(stdout(&output).contains("unmounted"), "{}", stdout(&output));
    assert!(leftovers(w).is_empty(), "{:?}", leftovers(w));
    assert!(cache(w).is_empty(), "{:?}", cache(w));

    let child = aged_sleep(w, "400m", "fill=80,churn=1");
    wait_for(w, "the aged image", |w| {
        !named(w, "aging-ext4-", ".img").is_empty()
    });
    kill_with_its_guard(child);
    assert!(cache(w).is_empty(), "{:?}", cache(w));
    cleanup(w, &[]);
    assert!(leftovers(w).is_empty(), "{:?}", leftovers(w));
    assert!(cache(w).is_empty(), "{:?}", cache(w));
}

/// The cgroups (every hierarchy) whose names say process `pid` made them.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("fsbench-{pid}-");
    let mut roots = vec![PathBuf::from("/sys/fs/cgroup")];
    roots.extend(entries(Path::new("/sys/fs/cgroup")));
    roots
        .iter()
        .flat_map(|root| named(root, &prefix, ""))
        .collect()
}

/// A sample with a CPU quota runs in a cgroup of its own. Killed while its aged filesystem is
/// made (which can take minutes on a big image), the run leaves no cgroup that `fsbench
/// cleanup` cannot find: the cgroup is made only once the filesystem is ready, and on record
/// from then on.
#[test]
fn a_run_with_a_cpu_quota_killed_while_it_ages_leaves_no_cgroup() {
    if !root_or_skip("a_run_with_a_cpu_quota_killed_while_it_ages_leaves_no_cgroup") {
        return;
    }
    let s = Scratch::new();
    let w = s.work();
    let plan = s.plan(
        "name = \"quota\"\nages = [\"old\"]\n[device]\nimage = \"400m\"\n[aging.old]\nfill = 80\nchurn = 50\n[platforms.slow]\ncpu_percent = 50\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"60s\"\n",
    );
    let child = s.spawn(&["--plan", plan.to_str().unwrap()]);
    let pid = child.id();
    wait_for(&w, "the aged tree", |w| {
        named(w, "mnt-ext4-", "")
            .iter()
            .any(|m| m.join("fsbench-aged").exists())
    });
    kill_with_its_guard(child);
    cleanup(&w, &[]);
    assert!(leftovers(&w).is_empty(), "{:?}", leftovers(&w));
    assert!(cgroups_of(pid).is_empty(), "left: {:?}", cgroups_of(pid));
}

/// Killed while a sample's image is copied from the cached one: `fsbench cleanup` removes the
/// copy and everything else the sample made, keeps the cache, lists it, and removes it when
/// asked.
#[test]
fn a_run_killed_while_it_copies_the_aged_image_leaves_only_the_cache() {
    if !root_or_skip("a_run_killed_while_it_copies_the_aged_image_leaves_only_the_cache") {
        return;
    }
    let work = work_dir();
    let w = work.path();
    let spec = "fill=80,churn=0";
    // Made once...
    let made = fsbench()
        .args(["sleep", "--duration", "1ms", "--fs", "ext4", "--no-store"])
        .args(["--device", "image:400m", "--age", spec, "--work-dir"])
        .arg(w)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let cached = cache(w);
    assert_eq!(cached.len(), 2, "{cached:?}");
    assert!(leftovers(w).is_empty(), "{:?}", leftovers(w));
    // ... and copied by the next run, killed while it copies.
    let child = aged_sleep(w, "400m", spec);
    wait_for(w, "the sample's image", |w| {
        !named(w, "ext4-", ".img").is_empty()
    });
    kill_with_its_guard(child);
    cleanup(w, &[]);
    assert!(leftovers(w).is_empty(), "{:?}", leftovers(w));
    assert_eq!(cache(w), cached);
    let listed = cleanup(w, &[]);
    assert!(
        stdout(&listed).contains("kept 1 cached aged image")
            && stdout(&listed).contains("fill=80")
            && stdout(&listed).contains("--aged-images"),
        "{}",
        stdout(&listed)
    );
    let removed = cleanup(w, &["--aged-images"]);
    assert!(
        stdout(&removed).contains("removed the aged image"),
        "{}",
        stdout(&removed)
    );
    assert!(!w.join("images").exists());
}

/// A workload that needs more than the aged filesystem has free is refused before it starts
/// (exit 2), naming what it needs, what is free and what the aged files take; nothing is left
/// but the cache.
#[test]
fn a_workload_that_does_not_fit_the_aged_free_space_fails_before_it_starts() {
    if !root_or_skip("a_workload_that_does_not_fit_the_aged_free_space_fails_before_it_starts") {
        return;
    }
    let work = work_dir();
    let w = work.path();
    let json = w.join("out.json");
    let output = fsbench()
        .args(["matrix", "--fs", "ext4", "--device", "image:300m"])
        .args(["--age", "fill=85,churn=0", "--work-dir"])
        .arg(w)
        .args(["-i", "0", "--file-sizes", "128m", "--record-sizes", "1m"])
        .args(["--no-store", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains("--file-sizes: the largest test file would take about 128 MiB")
            && text.contains("free: lower the file sizes")
            && text.contains("the filesystem is aged 'given': its aged files fill 85 %"),
        "{text}"
    );
    assert!(!json.exists(), "a refused run wrote its results");
    assert!(leftovers(w).is_empty(), "{:?}", leftovers(w));
    // The same fits fresh: the aged files are what take the room.
    let fresh = fsbench()
        .args([
            "matrix",
            "--fs",
            "ext4",
            "--device",
            "image:300m",
            "--work-dir",
        ])
        .arg(w)
        .args(["-i", "0", "--file-sizes", "128m", "--record-sizes", "1m"])
        .args(["--min-time", "0", "--no-store", "--quiet"])
        .output()
        .unwrap();
    assert!(fresh.status.success(), "{}", stderr(&fresh));
}

/// A campaign of ext4 fresh and aged: every aged sample starts from a copy of one image made
/// once (the same record and fingerprint, copied by the method the read-back names), the
/// summary has the aging penalty, and the next run finds the image instead of aging again.
#[test]
fn a_campaign_runs_fresh_and_aged_and_pays_for_the_aging_once() {
    if !root_or_skip("a_campaign_runs_fresh_and_aged_and_pays_for_the_aging_once") {
        return;
    }
    let s = Scratch::new();
    let w = s.work();
    let plan = s.plan(
        "name = \"aged\"\nrepetitions = 2\n[device]\nimage = \"300m\"\n[aging.old]\nfill = 60\nchurn = 2\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"metadata\"\nname = \"files\"\ncount = 200\nops = [\"create\", \"stat\"]\n",
    );
    let run = |s: &Scratch| {
        let output = s.run(&["--plan", plan.to_str().unwrap()]);
        assert!(output.status.success(), "{}", stderr(&output));
        output
    };
    let output = run(&s);
    let summary = stdout(&output);
    assert!(summary.contains("Aging penalty"), "{summary}");
    assert!(summary.contains("ext4 age=old:"), "{summary}");
    let doc = s.export(run_id(&output));
    let cases = run_cases(&doc);
    let keys: Vec<&str> = cases.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "ext4.default.default.default.warm.files",
            "ext4.default.default.default.old.warm.files"
        ]
    );
    let aged: Vec<&serde_json::Value> = cases[1]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sample| &sample["target"]["aging"])
        .collect();
    assert_eq!(aged.len(), 2);
    assert_eq!(aged[0]["made"]["made_at"], aged[1]["made"]["made_at"]);
    assert_eq!(
        aged[0]["made"]["fingerprint"],
        aged[1]["made"]["fingerprint"]
    );
    for a in &aged {
        let method = a["copy"]["method"].as_str().unwrap();
        assert!(
            method == "reflink" || method.starts_with("sparse copy"),
            "{method}"
        );
        let fill = a["made"]["aged"]["after"]["fill_percent"].as_f64().unwrap();
        assert!((fill - 60.0).abs() <= 1.0, "{fill}");
    }
    assert!(cases[0]["samples"][0]["target"]["aging"].is_null());
    assert!(doc["aging"]["penalties"]
        .as_array()
        .is_some_and(|p| !p.is_empty()));
    // The next run finds the image.
    let again = s.export(run_id(&run(&s)));
    let made = &run_cases(&again)[1]["samples"][0]["target"]["aging"]["made"]["made_at"];
    assert_eq!(made, &aged[0]["made"]["made_at"]);
    assert_eq!(named(&w.join("images"), "ext4-", ".img").len(), 1);
    cleanup(&w, &["--aged-images"]);
    assert!(leftovers(&w).is_empty(), "{:?}", leftovers(&w));
}

/// A cached image's record is data like any name: `fsbench cleanup` lists its date (and
/// filesystem, spec) with control characters escaped, never sent to the terminal. (Before: the
/// date was printed raw, so a record's escape sequences reached the terminal.)
#[test]
fn cleanup_lists_a_cached_image_s_record_with_its_control_characters_escaped() {
    if !root_or_skip("cleanup_lists_a_cached_image_s_record_with_its_control_characters_escaped") {
        return;
    }
    let work = work_dir();
    let images = work.path().join("images");
    std::fs::create_dir(&images).unwrap();
    let spec = serde_json::json!({"fill_percent": 80.0, "sizes": "measured", "depth": 3,
                                  "fanout": 8, "churn": 0, "seed": 1});
    let record = serde_json::json!({
        "key": "k", "filesystem": "ext4\u{1b}[2J", "mkfs_options": [], "image_bytes": 1 << 20,
        "spec": spec, "made_at": "2026-01-01T00:00:00Z\u{1b}]0;owned\u{7}\u{1b}[31m",
        "fsbench_version": "0", "target": null, "fingerprint": "f",
        "aged": {"spec": spec, "threads": 1, "elapsed_ns": 1, "fill_elapsed_ns": 1,
                 "rounds": [], "files_written": 1, "bytes_written": 1,
                 "after": {"fill_percent": 80.0, "size_bytes": 1, "used_bytes": 1,
                           "available_bytes": 1, "files": 1, "dirs": 1, "file_bytes": 1,
                           "extents": null}},
    });
    std::fs::write(images.join("ext4-k.json"), record.to_string()).unwrap();
    std::fs::write(images.join("ext4-k.img"), b"").unwrap();
    let listed = stdout(&cleanup(work.path(), &[]));
    assert!(listed.contains("kept 1 cached aged image"), "{listed}");
    for raw in ['\u{1b}', '\u{7}'] {
        assert!(
            !listed.contains(raw),
            "{raw:?} reached the terminal: {listed:?}"
        );
    }
    assert!(
        listed.contains("made 2026-01-01T00:00:00Z\\u{1b}]0;owned\\u{7}\\u{1b}[31m)")
            && listed.contains("ext4\\u{1b}[2J"),
        "{listed}"
    );
}
