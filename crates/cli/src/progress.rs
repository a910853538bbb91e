//! Progress on the terminal: a bar that appears once a run has taken a few seconds, with the
//! running phase's live rate, and warnings printed above it. Nothing is drawn when stderr is
//! not a terminal. A configuration the host cannot run is said once, with its reason and how
//! many samples it costs, not once per sample.

use crate::out::note;
use fsbench_measure::series::{Discard, Outlet};
use fsbench_measure::units::human_duration;
use fsbench_model::series::PhaseBatch;
use fsbench_model::ResultRecord;
use fsbench_plan::{CampaignObserver, Case};
use fsbench_report::terminal::{printable, wrap, WIDTH};
use fsbench_store::Outcome;
use fsbench_workload::Sink;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
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
/// of results done once the run has taken a few seconds, with the running phase's live rate
/// (from its series, a sampler thread's), and prints warnings above it.
pub struct WorkloadProgress {
    started: Instant,
    shown: Arc<Mutex<Shown>>,
    enabled: bool,
    pub records: Vec<ResultRecord>,
    pub warnings: Vec<String>,
}

/// The bar and its message: the last status and the running phase's rate.
#[derive(Default)]
struct Shown {
    bar: Option<ProgressBar>,
    status: String,
    live: String,
}

impl Shown {
    /// The bar, made once the run has taken a few seconds (None before, or when disabled).
    fn bar(&mut self, started: Instant, total: usize) -> Option<&ProgressBar> {
        if self.bar.is_none() && started.elapsed() >= SHOW_AFTER {
            self.bar = Some(bar(total, "results"));
        }
        self.bar.as_ref()
    }

    fn message(&self) -> String {
        match (self.status.is_empty(), self.live.is_empty()) {
            (_, true) => self.status.clone(),
            (true, false) => format!("now {}", self.live),
            (false, false) => format!("{}; now {}", self.status, self.live),
        }
    }
}

/// The running phase's series, for the bar: the rate of its last interval.
struct LiveRate {
    shown: Arc<Mutex<Shown>>,
    started: Instant,
}

impl Outlet for LiveRate {
    fn send(&self, batch: &PhaseBatch) {
        let Some(rate) = batch.live_rate() else {
            return;
        };
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        shown.live = printable(&rate).into_owned();
        let message = shown.message();
        if let Some(bar) = shown.bar(self.started, 0) {
            bar.set_message(message);
        }
    }
}

impl WorkloadProgress {
    pub fn new(enabled: bool) -> WorkloadProgress {
        WorkloadProgress {
            started: Instant::now(),
            shown: Arc::default(),
            enabled: enabled && std::io::stderr().is_terminal(),
            records: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn finish(&mut self) {
        let bar = self
            .shown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .bar
            .take();
        if let Some(bar) = bar {
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
        let mut shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        // A phase ended: its live rate is over.
        shown.live.clear();
        let message = shown.message();
        if let Some(bar) = shown.bar(self.started, total.unwrap_or(done)) {
            bar.set_length(total.unwrap_or(done).max(done) as u64);
            bar.set_position(done as u64);
            bar.set_message(message);
        }
    }

    fn status(&mut self, line: &str) {
        self.shown.lock().unwrap_or_else(|p| p.into_inner()).status = printable(line).into_owned();
    }

    fn warning(&mut self, message: &str) {
        self.warnings.push(message.to_string());
        let shown = self.shown.lock().unwrap_or_else(|p| p.into_inner());
        match &shown.bar {
            Some(bar) => bar.println(format!("warning: {}", printable(message))),
            None => note!("warning: {}", printable(message)),
        }
    }

    fn outlet(&mut self) -> Arc<dyn Outlet> {
        if !self.enabled {
            return Arc::new(Discard);
        }
        Arc::new(LiveRate {
            shown: self.shown.clone(),
            started: self.started,
        })
    }
}

/// Unsupported samples of one configuration in a row (its cases one after the other in a
/// round), not said yet: per reason, how many cases.
struct Unsupported {
    config: String,
    repetition: u32,
    reasons: Vec<(String, usize)>,
}

/// Campaign progress: a bar (samples done, ETA) with the case in progress on a terminal, one
/// plain line per finished sample otherwise; a configuration found unsupported is one line.
pub struct CampaignProgress {
    enabled: bool,
    terminal: bool,
    bar: Option<ProgressBar>,
    done: usize,
    total: usize,
    /// Rounds of the plan (its minimum repetitions).
    rounds: u32,
    sample_started: Instant,
    /// The configuration found unsupported in the cases just run, until another comes.
    pending: Option<Unsupported>,
    /// (configuration, reason) already said: their later samples are only counted.
    said: Vec<(String, String)>,
}

impl CampaignProgress {
    pub fn new(enabled: bool, rounds: u32) -> CampaignProgress {
        CampaignProgress {
            enabled,
            terminal: std::io::stderr().is_terminal(),
            bar: None,
            done: 0,
            total: 0,
            rounds,
            sample_started: Instant::now(),
            pending: None,
            said: Vec::new(),
        }
    }

    pub fn finish(&mut self) {
        self.flush();
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

    /// Says the unsupported configuration just seen: once per reason, with the samples it
    /// costs (its cases found unsupported, in this round and every later one: a case found
    /// unsupported is not tried again).
    fn flush(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        let rounds = self.rounds.saturating_sub(pending.repetition) + 1;
        for (reason, cases) in pending.reasons {
            if self.enabled {
                let plural =
                    |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                let lead = format!(
                    "[{}/{}] {}: unsupported, {} ({} × {}) not run:",
                    self.done,
                    self.total,
                    printable(&pending.config),
                    plural(cases * rounds as usize, "sample"),
                    plural(cases, "case"),
                    plural(rounds as usize, "round"),
                );
                let words: Vec<String> = printable(&reason)
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                self.say(wrap(&lead, &words, 4, WIDTH).join("\n"));
            }
            self.said.push((pending.config.clone(), reason));
        }
    }

    /// Counts an unsupported sample: said with the others of its configuration once they are
    /// all in, or not at all when its configuration and reason were said already.
    fn unsupported(&mut self, case: &Case, repetition: u32, detail: &str) {
        let config = case.config_key();
        let reason = detail.strip_suffix(" (not retried)").unwrap_or(detail);
        if self.said.iter().any(|(c, r)| *c == config && r == reason) {
            return;
        }
        let same = self
            .pending
            .as_ref()
            .is_some_and(|p| p.config == config && p.repetition == repetition);
        if !same {
            self.flush();
            self.pending = Some(Unsupported {
                config,
                repetition,
                reasons: Vec::new(),
            });
        }
        let reasons = &mut self.pending.as_mut().expect("pending").reasons;
        match reasons.iter_mut().find(|(r, _)| r == reason) {
            Some((_, cases)) => *cases += 1,
            None => reasons.push((reason.to_string(), 1)),
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
        // Another configuration: the one found unsupported before it is complete.
        if self
            .pending
            .as_ref()
            .is_some_and(|p| p.config != case.config_key() || p.repetition != repetition)
        {
            self.flush();
        }
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
        if let Some(bar) = &self.bar {
            bar.set_position(self.done.min(self.total) as u64);
        }
        if status == Outcome::Unsupported {
            self.unsupported(case, repetition, detail);
            return;
        }
        if !self.enabled {
            return;
        }
        let took = human_duration(self.sample_started.elapsed().as_nanos() as u64);
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(": {}", printable(detail))
        };
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
