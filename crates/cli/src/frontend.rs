//! The command line's side of a run (`fsbench_plan::run::Frontend`): the guard process, which
//! is this binary, and notes on standard error; the database a run goes to; and the one place
//! that signals are wired to stop requests.

use crate::exit::Failure;
use crate::out::note;
use anyhow::Context;
use fsbench_store::Store;
use fsbench_testbed::guard::Guard;
use fsbench_workload::StopFlag;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;

/// What the command line does for a run.
pub struct Cli;

impl fsbench_plan::run::Frontend for Cli {
    /// Starts the guard of this process's targets, whose state files go to `state_dir`
    /// (`fsbench guard`): should this process be killed (kill -9, mpirun ending a job, the OOM
    /// killer), it undoes the mounts, loop devices and images the ledger lists. A guard that
    /// cannot start costs only that: a warning, and `fsbench cleanup` after a kill.
    fn guard(&self, state_dir: &Path) -> Option<Guard> {
        // The guard works in `/`: a relative --work-dir is this process's, made absolute.
        let state_dir = std::path::absolute(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
        let started = std::env::current_exe().and_then(|exe| {
            let mut command = std::process::Command::new(exe);
            command
                .arg("guard")
                .arg("--state-dir")
                .arg(&state_dir)
                .arg("--pid")
                .arg(std::process::id().to_string());
            Guard::start(command)
        });
        match started {
            Ok(guard) => Some(guard),
            Err(e) => {
                note!("warning: cannot start the guard process ({e}); if fsbench is killed, run `fsbench cleanup`");
                None
            }
        }
    }

    fn note(&self, line: &str) {
        note!("{line}");
    }
}

/// The database a run is stored in: `db`, or, when the run is not `kept` (a rank other than 0,
/// `--no-store`), one in a temporary directory removed when the returned one is dropped (after
/// the store); `unmade` is the error when that directory cannot be made.
pub fn database(
    db: &Path,
    kept: bool,
    unmade: &'static str,
) -> Result<(Store, Option<tempfile::TempDir>), Failure> {
    let scratch = match kept {
        true => None,
        false => Some(tempfile::tempdir().context(unmade)?),
    };
    let path = match &scratch {
        Some(dir) => dir.path().join("results.db"),
        None => db.to_path_buf(),
    };
    let store = Store::open(&path).map_err(Failure::usage)?;
    Ok((store, scratch))
}

/// A stop flag set by Ctrl-C and SIGTERM. The handler only sets the flag: the main path stops
/// between steps and cleans up itself (never unmount from a signal handler).
pub fn stop_on_signals() -> StopFlag {
    let stop = StopFlag::new();
    on_stop_signals(stop.flag());
    stop
}

/// The flag the signal handler sets: leaked once installed (a handler may be reading it).
static SIGNALLED: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(_: libc::c_int) {
    let flag = SIGNALLED.load(Ordering::Acquire);
    if !flag.is_null() {
        // SAFETY: a pointer from `Arc::into_raw`, never released; an atomic store is
        // async-signal-safe.
        unsafe { (*flag).store(true, Ordering::SeqCst) };
    }
}

/// SIGINT, SIGTERM and SIGHUP set `flag` from now on (the last flag given wins), except one the
/// process was started with ignored. A handler, not a thread that waits for the signal: a
/// second thread in the process would make every system call of a workload's thread take a
/// reference on its file (`fsbench_measure::aside`). SA_RESTART: a call the signal interrupts
/// resumes; the stop is seen at the next check.
pub fn on_stop_signals(flag: Arc<AtomicBool>) {
    let _leaked = SIGNALLED.swap(Arc::into_raw(flag).cast_mut(), Ordering::AcqRel);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction is valid; the handler only stores to an atomic.
        unsafe {
            // A signal fsbench was started with ignored stays ignored: `nohup` (SIGHUP), a
            // background job of a non-interactive shell (SIGINT).
            let mut was: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut was) == 0
                && was.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
