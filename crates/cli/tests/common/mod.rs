//! Helpers shared by the integration tests: running the binary, root detection, scratch
//! mounts that are always unmounted, and a scratch campaign directory ([`Scratch`]).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fsbench binary built for these tests.
/// The binary, storing one-case runs in the tests' own database (never the host's default).
pub fn fsbench() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fsbench"));
    command.env(
        "FSBENCH_DB",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/fsbench-tests.db"),
    );
    command
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// True when a root-only test may run. Off CI, a non-root developer skips it; on CI (which is
/// root) a missing privilege is a failure, never a silent skip.
pub fn root_or_skip(test: &str) -> bool {
    if is_root() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} needs root, and CI must run it as root"
    );
    eprintln!("skipping {test}: needs root");
    false
}

/// A tmpfs mounted by a test on a directory of its own; unmounted on drop, even on panic.
pub struct ScratchMount {
    pub dir: tempfile::TempDir,
}

impl ScratchMount {
    pub fn tmpfs(options: &str) -> ScratchMount {
        let mount = ScratchMount {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        mount.mount_tmpfs(options);
        mount
    }

    fn mount_tmpfs(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "fsbench-test"])
            .arg(self.dir.path())
            .status()
            .expect("run mount");
        assert!(status.success(), "mount -t tmpfs -o {options} failed");
    }

    /// Unmounts the tmpfs and mounts a new one at the same path: the same type and options,
    /// another filesystem.
    pub fn replace(&self, options: &str) {
        let status = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .expect("run umount");
        assert!(
            status.success(),
            "umount {} failed",
            self.dir.path().display()
        );
        self.mount_tmpfs(options);
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for ScratchMount {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Still busy (a child is exiting): detach it so nothing stays mounted.
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

/// The write end of a pipe whose reader has gone (`| head` after its line): a write to it
/// fails with EPIPE.
pub fn closed_pipe() -> std::os::fd::OwnedFd {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors this function then owns.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned once each.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read_end);
    write_end
}

/// Names of the entries in `dir`.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default()
}

/// Every file under `dir`, at any depth (a sample works in a directory of its own in the
/// user's: `DIR/fsbench-sample-XXXXXX`).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in entries(dir) {
        if entry.is_dir() && !entry.is_symlink() {
            files.extend(files_under(&entry));
        } else {
            files.push(entry);
        }
    }
    files
}

/// Parses the JSON document fsbench wrote.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("json written");
    serde_json::from_str(&text).expect("valid json")
}

/// The cases of the one run of an `fsbench export RUN --json` document (`fsbench.run` v2).
pub fn run_cases(doc: &serde_json::Value) -> &Vec<serde_json::Value> {
    assert_eq!(doc["schema"], "fsbench.run");
    assert_eq!(doc["schema_version"], 2);
    doc["runs"][0]["cases"].as_array().expect("runs[0].cases")
}

/// The results of an export's first sample as flat objects, as a reader of one run sees them:
/// its dimensions, its attributes, every measurement by its metric, and `latency_count` (the
/// operations in its latency histogram).
pub fn flat_results(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    flat_results_of(first_sample(doc))
}

/// The results of one sample of an export, flat as [`flat_results`] makes them.
#[allow(dead_code)]
pub fn flat_results_of(sample: &serde_json::Value) -> Vec<serde_json::Value> {
    sample["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let mut flat = serde_json::Map::new();
            for (key, value) in r.as_object().unwrap() {
                match key.as_str() {
                    "measurements" => {
                        for m in value.as_array().unwrap() {
                            // Whole values (counts, bytes, ns) read back as integers.
                            let v = m["value"].as_f64().unwrap();
                            let v = if v.fract() == 0.0 && (0.0..9e15).contains(&v) {
                                serde_json::Value::from(v as u64)
                            } else {
                                m["value"].clone()
                            };
                            flat.insert(m["metric"].as_str().unwrap().into(), v);
                        }
                    }
                    "attributes" => flat.extend(value.as_object().unwrap().clone()),
                    "latency_bins" => {
                        let count: u64 = value
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|b| b[1].as_u64().unwrap())
                            .sum();
                        flat.insert("latency_count".into(), count.into());
                    }
                    _ => {
                        flat.insert(key.clone(), value.clone());
                    }
                }
            }
            serde_json::Value::Object(flat)
        })
        .collect()
}

/// A sample's warnings but those of the host's disturbance (another process's I/O on the disk,
/// CPU steal, a saturated device, an unsteady phase): what fsbench itself has to say of it. A
/// test asserting these must not depend on what else the machine does.
pub fn own_warnings(sample: &serde_json::Value) -> Vec<String> {
    sample["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().expect("text").to_string())
        .filter(|w| {
            !(w.starts_with("another process moved ")
                || w.starts_with("CPU steal took ")
                || w.contains(" was saturated: busy ")
                || w.contains(" did not reach a steady state "))
        })
        .collect()
}

/// The first sample of the first case of an export's one run.
pub fn first_sample(doc: &serde_json::Value) -> &serde_json::Value {
    &run_cases(doc)[0]["samples"][0]
}

/// A scratch directory under /var/tmp (a disk-backed filesystem) with a results database, a
/// work directory and plan files, for `fsbench run`; named fsbench-test* like everything the
/// tests make.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("fsbench-test-")
                .tempdir_in("/var/tmp")
                .unwrap(),
        }
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn db(&self) -> PathBuf {
        self.path().join("results.db")
    }
    pub fn work(&self) -> PathBuf {
        self.path().join("work")
    }
    pub fn plan(&self, text: &str) -> PathBuf {
        let path = self.path().join("plan.toml");
        std::fs::write(&path, text).unwrap();
        path
    }
    /// `fsbench run` with this scratch's database and work directory.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = fsbench();
        command
            .arg("run")
            .arg("--db")
            .arg(self.db())
            .arg("--work-dir")
            .arg(self.work())
            .args(args);
        command
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
    /// The same, running in the background with its output captured.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }
    /// `fsbench runs` on this scratch's database (which must succeed).
    pub fn runs(&self) -> String {
        let out = fsbench()
            .arg("runs")
            .arg("--db")
            .arg(self.db())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    }
    /// `fsbench export RUN --json -` (which must succeed), parsed.
    pub fn export(&self, run: i64) -> serde_json::Value {
        let out = fsbench()
            .args(["export", &run.to_string(), "--json", "-", "--db"])
            .arg(self.db())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
    /// Nothing under the scratch directory is mounted or attached.
    pub fn assert_nothing_mounted(&self) {
        let me = self.path().to_string_lossy().to_string();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(!mounts.contains(&me), "mount left:\n{mounts}");
        let loops = Command::new("losetup").arg("-a").output().unwrap();
        assert!(
            !stdout(&loops).contains(&me),
            "loop device left: {}",
            stdout(&loops)
        );
    }
    /// Waits up to `limit` for nothing under the scratch directory to be mounted or attached
    /// (a killed process's guard undoing its targets), then asserts it.
    pub fn wait_until_nothing_mounted(&self, limit: std::time::Duration) {
        let me = self.path().to_string_lossy().to_string();
        let start = std::time::Instant::now();
        while start.elapsed() < limit {
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
            let loops = Command::new("losetup").arg("-a").output().unwrap();
            if !mounts.contains(&me) && !stdout(&loops).contains(&me) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        self.assert_nothing_mounted();
    }
    /// Nothing is mounted or attached, and no image or mount point stays in the work directory.
    pub fn assert_clean(&self) {
        self.assert_nothing_mounted();
        let left: Vec<_> = std::fs::read_dir(self.work())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            left.iter().all(|n| n == "state" || n == "run"),
            "left in the work dir: {left:?}"
        );
    }
}

/// The start time of process `pid` (field 22 of /proc/PID/stat, clock ticks since boot), as
/// fsbench names a process's cgroups and ledgers by it.
pub fn start_time(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command's closing parenthesis (the command may hold spaces and parentheses).
    let rest = stat.rsplit_once(')').unwrap().1;
    rest.split_whitespace().nth(19).unwrap().to_string()
}

/// The processes whose parent is `pid`, with their command lines (arguments joined by spaces):
/// how a test finds what a process it spawned started, without matching anything by name.
pub fn children_of(pid: u32) -> Vec<(u32, String)> {
    fsbench_testbed::cgroup::children_of(pid)
        .into_iter()
        .map(|child| {
            let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            let words: Vec<String> = cmdline
                .split(|b| *b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            (child, words.join(" "))
        })
        .collect()
}

/// Plants a user's file at each name fsbench would take in each directory for the process
/// `sh` becomes (`$$` stays the pid through exec: a pid reused as the issue found it): the
/// names fsbench used to take whole (`<stem>-<pid><ext>`), the first numbered ones
/// (`<stem>-<pid>-<n><ext>`) and, after them, a symlink to `victim`; then runs `command`.
pub fn with_files_at_fsbench_names(
    planted: &[(&Path, &[(&str, &str)])],
    victim: &Path,
    command: &str,
) -> Output {
    let mut script = String::new();
    for (dir, stems) in planted {
        for (stem, ext) in *stems {
            script.push_str(&format!(
                "echo user > \"{d}/{stem}-$${ext}\"; for n in 0 1 2 3 4 5 6 7; do echo user > \"{d}/{stem}-$$-$n{ext}\"; done; ln -s \"{v}\" \"{d}/{stem}-$$-8{ext}\"; ",
                d = dir.display(),
                v = victim.display(),
            ));
        }
    }
    Command::new("sh")
        .arg("-c")
        .arg(format!("{script}exec {command}"))
        .output()
        .expect("run sh")
}

/// Everything [`with_files_at_fsbench_names`] planted is still there, unchanged, and so is
/// `victim` (which holds "victim").
pub fn assert_planted_files_kept(planted: &[(&Path, &[(&str, &str)])], victim: &Path) {
    for (dir, stems) in planted {
        let mut found = 0;
        for path in entries(dir) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some(_) = stems.iter().find(|(stem, _)| {
                name.strip_prefix(stem)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            }) else {
                continue;
            };
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                found += 1;
                continue;
            }
            if meta.is_file() && std::fs::read_to_string(&path).unwrap() == "user\n" {
                found += 1;
            }
        }
        assert_eq!(
            found,
            stems.len() * 10,
            "a file planted in {} was changed or removed: {:?}",
            dir.display(),
            entries(dir)
        );
    }
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "victim");
}

/// A loop device the test attaches itself, standing in for a real disk.
pub struct TestDisk {
    pub device: String,
    _image: tempfile::NamedTempFile,
}

impl TestDisk {
    pub fn new() -> TestDisk {
        let image = tempfile::Builder::new()
            .prefix("fsbench-test-")
            .suffix(".disk")
            .tempfile_in("/var/tmp")
            .unwrap();
        image.as_file().set_len(256 << 20).unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(image.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        TestDisk {
            device: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            _image: image,
        }
    }
}

impl Drop for TestDisk {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// A filesystem made on a [`TestDisk`] and mounted on a directory of its own: unmounted on
/// drop (even on panic), before the disk is detached.
pub struct MountedDisk {
    pub dir: tempfile::TempDir,
    pub disk: TestDisk,
}

impl MountedDisk {
    /// `mkfs -t fs` (ext options that leave nothing to initialise in the background) on a new
    /// test disk, mounted.
    pub fn new(fs: &str) -> MountedDisk {
        let disk = TestDisk::new();
        let mut mkfs = Command::new(format!("mkfs.{fs}"));
        if fs.starts_with("ext") {
            mkfs.args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"]);
        } else {
            mkfs.arg("-f");
        }
        let out = mkfs.arg(&disk.device).output().expect("run mkfs");
        assert!(out.status.success(), "mkfs.{fs}: {}", stderr(&out));
        let dir = tempfile::Builder::new()
            .prefix("fsbench-test-")
            .tempdir()
            .unwrap();
        let status = Command::new("mount")
            .arg(&disk.device)
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(status.success(), "mount {} failed", disk.device);
        MountedDisk { dir, disk }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Bytes written to the disk so far (its /sys/block stat: sectors written, field 7).
    pub fn written(&self) -> u64 {
        let name = self.disk.device.trim_start_matches("/dev/");
        let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
        let sectors: u64 = stat.split_whitespace().nth(6).unwrap().parse().unwrap();
        sectors * 512
    }

    /// Bytes a sync of the filesystem writes now: what was dirty in it.
    pub fn written_by_sync(&self) -> u64 {
        let dir = std::fs::File::open(self.path()).unwrap();
        let before = self.written();
        // SAFETY: `dir` is an open descriptor of a directory of the filesystem.
        assert_eq!(
            unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&dir)) },
            0
        );
        self.written() - before
    }
}

impl Drop for MountedDisk {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

/// The shell command the debug build runs between a remount's umount and mount
/// (`FSBENCH_TEST_BETWEEN_MOUNTS`): finds the first file of the unmounted ext4 image's root
/// directory whose name matches `name` (`grep -o`; debugfs), writes its name and the image
/// offset of its block `block` to `said`, and — with `damage` — overwrites that 4 KiB block of the image with zeroes, with direct I/O (the
/// loop device reads its image with direct I/O: what reaches the image file is what the
/// filesystem reads after the mount).
pub fn between_mounts(name: &str, said: &Path, block: u64, damage: bool) -> String {
    between_mounts_below(name, "", said, block, damage)
}

/// As [`between_mounts`], for the file at `below` (`/tree-1/x.c`) under the entry of the root
/// directory `name` matches.
pub fn between_mounts_below(
    name: &str,
    below: &str,
    said: &Path,
    block: u64,
    damage: bool,
) -> String {
    let write = if damage {
        r#"dd if=/dev/zero of="$FSBENCH_IMAGE" bs=4096 count=1 seek=$((at / 4096)) conv=notrunc oflag=direct status=none"#
    } else {
        "true"
    };
    format!(
        r#"set -e
name=$(debugfs -R "ls /" "$FSBENCH_IMAGE" 2>/dev/null | grep -o '{name}' | head -n 1)
size=$(dumpe2fs -h "$FSBENCH_IMAGE" 2>/dev/null | awk -F: '/^Block size/ {{ print $2 + 0 }}')
physical=$(debugfs -R "bmap /$name{below} {fs_block}" "$FSBENCH_IMAGE" 2>/dev/null)
test -n "$name" && test "$size" = 4096 && test "$physical" -gt 0
at=$((physical * size))
{write}
echo "$name $at" >> {said}"#,
        fs_block = block,
        name = name,
        said = said.display()
    )
}
