//! A CPU quota for a process tree: a cgroup that caps the CPU time its processes get in each
//! 100 ms period (cgroup v1's `cpu` controller, or v2's `cpu.max`), removed when dropped.
//! Only the processes put in it are slowed: the kernel's own threads (writeback, journal
//! commits) are not, unlike a lower CPU frequency (docs/plans.md, "platforms").

use crate::error::TargetError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

const PERIOD_US: u64 = 100_000;

/// A cgroup fsbench made, with its quota set.
#[derive(Debug)]
pub struct CpuQuota {
    dir: PathBuf,
    /// The quota per period, in microseconds.
    pub quota_us: u64,
    pub period_us: u64,
}

impl CpuQuota {
    /// A cgroup whose processes together get at most `percent` % of the machine's CPU time
    /// (of all its CPUs). Unsupported when the host has no usable cpu controller.
    pub fn new(percent: f64) -> Result<CpuQuota, TargetError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let quota_us = ((PERIOD_US as f64 * cpus * percent / 100.0).round() as u64).max(1000);
        let name = format!(
            "fsbench-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let io = |what: &str, path: &Path, e: std::io::Error| {
            TargetError::Unsupported(format!(
                "a CPU quota needs a cgroup: cannot {what} {} ({e})",
                path.display()
            ))
        };
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let v2 = Path::new("/sys/fs/cgroup");
        let dir = if v1.join("cpu.cfs_quota_us").exists() {
            let dir = v1.join(&name);
            std::fs::create_dir(&dir).map_err(|e| io("create", &dir, e))?;
            let cgroup = CpuQuota {
                dir,
                quota_us,
                period_us: PERIOD_US,
            };
            for (file, value) in [
                ("cpu.cfs_period_us", PERIOD_US),
                ("cpu.cfs_quota_us", quota_us),
            ] {
                let path = cgroup.dir.join(file);
                std::fs::write(&path, value.to_string()).map_err(|e| io("write", &path, e))?;
            }
            return Ok(cgroup);
        } else if std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "cpu"))
        {
            v2.join(&name)
        } else {
            return Err(TargetError::Unsupported(
                "a CPU quota needs the cgroup cpu controller (cgroup v1 at /sys/fs/cgroup/cpu, or v2 with cpu in /sys/fs/cgroup/cgroup.subtree_control); this host has neither".into(),
            ));
        };
        std::fs::create_dir(&dir).map_err(|e| io("create", &dir, e))?;
        let cgroup = CpuQuota {
            dir,
            quota_us,
            period_us: PERIOD_US,
        };
        let path = cgroup.dir.join("cpu.max");
        std::fs::write(&path, format!("{quota_us} {PERIOD_US}"))
            .map_err(|e| io("write", &path, e))?;
        Ok(cgroup)
    }

    /// Moves a process (and the threads and children it makes from then on) into the cgroup.
    pub fn add(&self, pid: u32) -> std::io::Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// CPU time its processes were throttled for, in nanoseconds (v1 `cpu.stat`
    /// throttled_time, v2 throttled_usec), when the kernel says.
    pub fn throttled_ns(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        stat.lines().find_map(|line| {
            let (key, value) = line.split_once(' ')?;
            let value: u64 = value.trim().parse().ok()?;
            match key {
                "throttled_time" => Some(value),
                "throttled_usec" => Some(value * 1000),
                _ => None,
            }
        })
    }
}

impl Drop for CpuQuota {
    fn drop(&mut self) {
        // The processes are gone by now; the kernel may take a moment to notice.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real: needs root and a cpu controller (CI has both); skipped elsewhere with a note.
    #[test]
    fn a_quota_slows_a_busy_process_and_its_cgroup_goes_away() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return;
        }
        let quota = match CpuQuota::new(10.0) {
            Ok(q) => q,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        let dir = quota.dir().to_path_buf();
        // A shell spinning for 0.5 s of wall time gets ~10 % of the machine's CPU time.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("read go; end=$(($(date +%s%N) + 500000000)); while [ $(date +%s%N) -lt $end ]; do :; done")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        quota.add(child.id()).unwrap();
        {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        }
        assert!(child.wait().unwrap().success());
        let throttled = quota.throttled_ns().unwrap_or(0);
        assert!(
            throttled > 0,
            "a 10 % quota never throttled a spinning shell"
        );
        drop(quota);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}
