//! Helpers shared by the integration tests: running the binary, root detection, and scratch
//! mounts that are always unmounted.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fsbench binary built for these tests.
pub fn fsbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fsbench"))
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
        let dir = tempfile::tempdir().expect("tempdir");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "fsbench-test"])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(status.success(), "mount -t tmpfs -o {options} failed");
        ScratchMount { dir }
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

/// Names of the entries in `dir`.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default()
}

/// Parses the JSON document fsbench wrote.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("json written");
    serde_json::from_str(&text).expect("valid json")
}
