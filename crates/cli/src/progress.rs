//! Progress on the terminal: a bar that appears once a run has taken a few seconds, and
//! warnings printed above it. Nothing is drawn when stderr is not a terminal.

use crate::out::note;
use fsbench_measure::units::human_duration;
use fsbench_model::ResultRecord;
use fsbench_plan::{CampaignObserver, Case};
use fsbench_report::terminal::printable;
use fsbench_store::Outcome;
use fsbench_workload::Sink;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A bar on stderr counting `total` things called `what`, with the elapsed time and ETA.
fn bar(total: usize, what: &str) -> ProgressBar {
    let bar =
        ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {what}, ETA {{eta}} {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// Runs shorter than this show no bar.
const SHOW_AFTER: Duration = Duration::from_secs(2);

/// A workload command's progress and its sink: keeps the results and warnings, draws a bar
/// of results done once the run has taken a few seconds, and prints warnings above it.
pub struct WorkloadProgress {
    started: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
    pub records: Vec<ResultRecord>,
    pub warnings: Vec<String>,
    status: String,
}

impl WorkloadProgress {
    pub fn new(enabled: bool) -> WorkloadProgress {
        WorkloadProgress {
            started: Instant::now(),
            bar: None,
            enabled: enabled && std::io::stderr().is_terminal(),
            records: Vec::new(),
            warnings: Vec::new(),
            status: String::new(),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Sink for WorkloadProgress {
    fn record(&mut self, record: ResultRecord, done: usize, total: Option<usize>) {
        self.records.push(record);
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= SHOW_AFTER {
            self.bar = Some(bar(total.unwrap_or(done), "results"));
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            bar.set_message(self.status.clone());
        }
    }

    fn status(&mut self, line: &str) {
        self.status = printable(line).into_owned();
    }

    fn warning(&mut self, message: &str) {
        self.warnings.push(message.to_string());
        match &self.bar {
            Some(bar) => bar.println(format!("warning: {}", printable(message))),
            None => note!("warning: {}", printable(message)),
        }
    }
}

/// Campaign progress: a bar (samples done, ETA) with the case in progress on a terminal, one
/// plain line per finished sample otherwise.
pub struct CampaignProgress {
    enabled: bool,
    terminal: bool,
    bar: Option<ProgressBar>,
    done: usize,
    total: usize,
    sample_started: Instant,
}

impl CampaignProgress {
    pub fn new(enabled: bool) -> CampaignProgress {
        CampaignProgress {
            enabled,
            terminal: std::io::stderr().is_terminal(),
            bar: None,
            done: 0,
            total: 0,
            sample_started: Instant::now(),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn say(&self, line: String) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => note!("{line}"),
        }
    }
}

impl CampaignObserver for CampaignProgress {
    fn started(&mut self, run_id: i64, total: usize, already: usize) {
        self.total = total;
        self.done = already;
        if !self.enabled {
            return;
        }
        let resumed = if already > 0 {
            format!(", {already} already stored")
        } else {
            String::new()
        };
        note!("run {run_id}: {total} samples{resumed}");
        if self.terminal {
            let bar = bar(total, "samples");
            bar.set_position(already as u64);
            self.bar = Some(bar);
        }
    }

    fn sample_started(&mut self, case: &Case, repetition: u32) {
        self.sample_started = Instant::now();
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{} #{repetition}", printable(&case.key)));
        }
    }

    fn sample_status(&mut self, case: &Case, repetition: u32, status: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} #{repetition}: {}",
                printable(&case.key),
                printable(status)
            ));
        }
    }

    fn sample_finished(&mut self, case: &Case, repetition: u32, status: Outcome, detail: &str) {
        self.done += 1;
        if !self.enabled {
            return;
        }
        let took = human_duration(self.sample_started.elapsed().as_nanos() as u64);
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(": {}", printable(detail))
        };
        if let Some(bar) = &self.bar {
            bar.set_position(self.done.min(self.total) as u64);
        }
        if !self.terminal || status != Outcome::Ok {
            self.say(format!(
                "[{}/{}] {} #{repetition}: {} ({took}){detail}",
                self.done,
                self.total,
                printable(&case.key),
                status.name()
            ));
        }
    }
}
