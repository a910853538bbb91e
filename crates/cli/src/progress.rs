//! Progress on the terminal: a bar that appears once a run has taken a few seconds, and
//! warnings printed above it. Nothing is drawn when stderr is not a terminal.

use fsbench_measure::units::size_label;
use fsbench_workload::matrix::{CellResult, MatrixObserver};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Runs shorter than this show no bar.
const SHOW_AFTER: Duration = Duration::from_secs(2);

pub struct MatrixProgress {
    started: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
}

impl MatrixProgress {
    pub fn new(enabled: bool) -> MatrixProgress {
        MatrixProgress {
            started: Instant::now(),
            bar: None,
            enabled: enabled && std::io::stderr().is_terminal(),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl MatrixObserver for MatrixProgress {
    fn result(&mut self, result: &CellResult, done: usize, total: usize) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= SHOW_AFTER {
            let bar = ProgressBar::with_draw_target(
                Some(total as u64),
                ProgressDrawTarget::stderr_with_hz(4),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} results, ETA {eta} {msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            bar.set_message(format!(
                "{} file {} record {}",
                result.phase,
                size_label(result.file_size_bytes),
                size_label(result.record_size_bytes)
            ));
        }
    }

    fn warning(&mut self, message: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("warning: {message}")),
            None => eprintln!("warning: {message}"),
        }
    }
}
