//! Stop requests (Ctrl-C, SIGTERM, a watchdog) that workloads honour between passes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared flag: set by a signal handler or another thread, read by the workload between
/// passes (never inside a timed loop).
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Asks the workload to stop at its next check; safe to call from a signal handler thread.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// The flag itself, for a signal handler to set (`request` from signal context).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
