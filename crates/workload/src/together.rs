//! Threads that start together, for workloads with 1..N threads: every thread is spawned and
//! waits until all exist, then they are released at once; a thread the host refuses to create
//! releases the others with a stop instead of leaving them waiting. And the scratch directory
//! a workload makes in the directory under test, removed on every way out (panics included),
//! only when this run made it and never across a mount found in it.

use crate::workload::{End, Sink};
use crate::WorkloadError;
use fsbench_measure::clock::Clock;
use fsbench_measure::walk::RemoveError;
use fsbench_measure::CpuTimes;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

#[derive(Clone, Copy, PartialEq)]
enum Gate {
    Wait,
    Go,
    Abort,
}

/// What running the threads took: their results, the clock ticks at release and at the last
/// thread's end, and the process's CPU time in between.
pub struct Together<R> {
    pub results: Vec<R>,
    pub released: u64,
    pub ended: u64,
    pub cpu: CpuTimes,
}

/// Runs `work` on every item in a thread of its own, all released together (one item too: its
/// thread may change its own scheduling policy, which the caller's must keep; the caller waits
/// in `join` meanwhile and shares the thread's descriptor table, `fsbench_measure::aside`).
/// `Ok(None)` from a thread's point of view means it was told to stop before starting (never, unless spawning
/// failed); an error spawning a thread is returned after the others have stopped.
pub fn run_together<W: Send, R: Send>(
    items: &mut [W],
    work: impl Fn(&mut W) -> R + Sync,
) -> io::Result<Together<R>> {
    run(items, work, None)
}

/// As [`run_together`], with `watch` called on this thread about every millisecond while the
/// threads run (false) and once after the last has ended (true): where a scale-out job's rank
/// hears of the others (MPI is called from this thread only).
pub fn run_together_watching<W: Send, R: Send>(
    items: &mut [W],
    work: impl Fn(&mut W) -> R + Sync,
    watch: &mut dyn FnMut(bool),
) -> io::Result<Together<R>> {
    run(items, work, Some(watch))
}

fn run<W: Send, R: Send>(
    items: &mut [W],
    work: impl Fn(&mut W) -> R + Sync,
    mut watch: Option<&mut dyn FnMut(bool)>,
) -> io::Result<Together<R>> {
    let total = items.len();
    let gate = (Mutex::new(Gate::Wait), Condvar::new());
    let clock = Clock::get();
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(items.len());
        let mut spawn_error = None;
        for item in items.iter_mut() {
            let (gate, work) = (&gate, &work);
            let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                let mut state = gate.0.lock().unwrap_or_else(|p| p.into_inner());
                while *state == Gate::Wait {
                    state = gate.1.wait(state).unwrap_or_else(|p| p.into_inner());
                }
                let go = *state == Gate::Go;
                drop(state);
                go.then(|| work(item))
            });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        let cpu_before = CpuTimes::process();
        let released = clock.ticks();
        {
            let mut state = gate.0.lock().unwrap_or_else(|p| p.into_inner());
            *state = if spawn_error.is_some() {
                Gate::Abort
            } else {
                Gate::Go
            };
            gate.1.notify_all();
        }
        if let Some(watch) = watch.as_mut() {
            while !handles.iter().all(|h| h.is_finished()) {
                watch(false);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            watch(true);
        }
        let results: Vec<Option<R>> = handles
            .into_iter()
            .map(|h| h.join().expect("a workload thread panicked"))
            .collect();
        let ended = clock.ticks();
        if let Some(e) = spawn_error {
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "cannot start thread {} of {total} ({e}); use fewer threads",
                    results.len() + 1
                ),
            ));
        }
        Ok(Together {
            results: results.into_iter().map(|r| r.expect("released")).collect(),
            released,
            ended,
            cpu: CpuTimes::process().since(cpu_before),
        })
    })
}

/// One start for every thread of a timed run: the clock reading of the first thread to wake
/// after the release. Threads that the scheduler runs later (128 threads on 2 CPUs wait hundreds
/// of milliseconds for their first turn) still stop at the same deadline, as FFSB's and dbench's
/// one timer stops them all, so a run lasts its duration and not its duration plus the last
/// thread's wait.
#[derive(Debug, Default)]
pub struct SharedStart(std::sync::atomic::AtomicU64);

impl SharedStart {
    /// The run's start in `clock` ticks: this thread's reading if it is the first, else the
    /// first one's. Called once per thread, before its loop.
    pub fn get(&self, clock: Clock) -> u64 {
        use std::sync::atomic::Ordering;
        let now = clock.ticks().max(1);
        match self
            .0
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => now,
            Err(first) => first,
        }
    }
}

/// A directory a workload made for its files; removed when dropped (on success, on error and
/// when a panic unwinds), and never one it did not make, nor across a mount found in it.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Makes `dir/<prefix>-<pid>-<n>` under a name nothing has (what exists is not this
    /// run's, and stays).
    pub fn make(dir: &Path, prefix: &str) -> io::Result<ScratchDir> {
        let ((), path) = crate::fileio::create_unique(dir, prefix, "", |p| std::fs::create_dir(p))?;
        Ok(ScratchDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes it with everything in it but a mount found inside, which stays with the
    /// directories leading to it (`fsbench_measure::walk`): the error says so.
    pub fn remove(mut self) -> Result<(), RemoveError> {
        let path = std::mem::take(&mut self.path);
        fsbench_measure::walk::remove_tree(&path)
    }

    /// Runs a workload's `work` in a new `dir/<prefix>-<pid>-<n>`, removed afterwards whatever
    /// happens (what stays, `sink` hears), and turns what it says (`Ok(true)` done, `Ok(false)`
    /// stopped) into how it ended.
    pub fn run(
        dir: &Path,
        prefix: &str,
        seed: Option<u64>,
        sink: &mut dyn Sink,
        work: impl FnOnce(&Path, &mut dyn Sink) -> Result<bool, WorkloadError>,
    ) -> End {
        let scratch = match ScratchDir::make(dir, prefix) {
            Ok(scratch) => scratch,
            Err(e) => return End::failed(WorkloadError::io("create a directory in", dir, e), seed),
        };
        let outcome = work(scratch.path(), sink);
        if let Err(e) = scratch.remove() {
            sink.warning(&format!("the workload's directory stays: {e}"));
        }
        match outcome {
            Ok(true) => End::ok(seed),
            Ok(false) => End::interrupted(seed),
            Err(e) => End::failed(e, seed),
        }
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Unwinding (or removed already): what stays is said by the sample's own removal.
        if !self.path.as_os_str().is_empty() {
            let _ = fsbench_measure::walk::remove_tree(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_gets_the_first_threads_start() {
        let start = SharedStart::default();
        let clock = Clock::monotonic();
        let mut items = vec![0u64; 8];
        run_together(&mut items, |item| {
            *item = start.get(clock);
        })
        .unwrap();
        let first = items[0];
        assert!(first > 0);
        assert!(items.iter().all(|&s| s == first), "{items:?}");
        assert_eq!(start.get(clock), first, "later readers get it too");
    }

    #[test]
    fn threads_start_together_and_each_gets_its_item() {
        let mut items = vec![1u64, 2, 3, 4];
        let done = run_together(&mut items, |x| {
            *x *= 10;
            *x
        })
        .unwrap();
        assert_eq!(done.results, [10, 20, 30, 40]);
        assert!(done.ended >= done.released);
    }

    #[test]
    fn a_scratch_directory_goes_on_every_way_out_and_only_if_it_is_ours() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let scratch = ScratchDir::make(dir.path(), "x").unwrap();
            std::fs::write(scratch.path().join("f"), b"1").unwrap();
            scratch.path().to_path_buf()
        };
        assert!(!path.exists());
        // Someone else's directory at the next names is passed over and stays.
        let pid = std::process::id();
        let n: u64 = path
            .to_string_lossy()
            .rsplit('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let theirs: Vec<_> = (1..4)
            .map(|k| dir.path().join(format!("x-{pid}-{}", n + k)))
            .collect();
        for d in &theirs {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("theirs"), b"1").unwrap();
        }
        drop(ScratchDir::make(dir.path(), "x").unwrap());
        for d in &theirs {
            assert!(d.join("theirs").exists(), "someone else's directory stays");
        }
        let caught = std::panic::catch_unwind(|| {
            let _scratch = ScratchDir::make(&dir.path().join("x-sub-never"), "y");
            let scratch = ScratchDir::make(dir.path(), "z").unwrap();
            std::fs::write(scratch.path().join("f"), b"1").unwrap();
            panic!("unwinds");
        });
        assert!(caught.is_err());
        assert!(std::fs::read_dir(dir.path()).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("z-")));
    }

    /// Issue 35: a mount left in a workload's scratch directory (a tmpfs here) was entered and
    /// emptied when the directory was removed. Now it stays with the directories leading to it,
    /// and the sample is told.
    #[test]
    #[allow(clippy::print_stderr)] // the test's own note that it was skipped
    fn a_mount_in_a_scratch_directory_is_left_alone_and_said() {
        if !fsbench_measure::trust::as_root() {
            assert!(std::env::var_os("CI").is_none(), "CI must run this as root");
            eprintln!("skipped: needs root (mount)");
            return;
        }
        let dir = tempfile::Builder::new()
            .prefix("fsbench-test-together-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let mut sink = crate::workload::Collect::default();
        let mut point = PathBuf::new();
        let end = ScratchDir::run(dir.path(), "x", None, &mut sink, |top, _sink| {
            point = top.join("a/x");
            std::fs::create_dir_all(&point).unwrap();
            std::fs::write(top.join("a/file"), "x").unwrap();
            let ok = std::process::Command::new("mount")
                .args(["-t", "tmpfs", "fsbench-test"])
                .arg(&point)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "mount a tmpfs");
            std::fs::write(point.join("on-tmpfs"), "kept").unwrap();
            Ok(true)
        });
        let kept = std::fs::read_to_string(point.join("on-tmpfs"));
        let _ = std::process::Command::new("umount").arg(&point).status();
        assert_eq!(kept.ok().as_deref(), Some("kept"), "the tmpfs was emptied");
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok);
        assert!(
            sink.warnings.iter().any(|w| w
                .contains(&format!("{} is a mount point", point.display()))
                && w.contains("never removes across a mount")),
            "{:?}",
            sink.warnings
        );
    }
}
