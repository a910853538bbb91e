//! The sleep workload: the harness testing itself, like fio's null engine. It only waits, so
//! timeouts, interruption and storing can be tested without a filesystem doing anything; with a
//! `pattern`, its waits are timed operations at a known rate (the series' own test).

use crate::harness::Harness;
use crate::workload::{phase_series, Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::units::{parse_duration_ns, TimeSpan};
use fsbench_measure::Recorder;
use fsbench_model::{CachePolicy, Category, Direction, MetricDef, ResultRecord, Unit};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Waits for a while in the directory's process, touching nothing.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SleepSettings {
    /// How long to wait (ns, us, ms, s, m, h).
    #[arg(long, value_name = "DURATION", default_value_t = SleepSettings::default().duration)]
    pub duration: TimeSpan,

    /// Instead of one wait of --duration: waits as timed operations, in order: `1ms*500,10ms*50`
    /// is 500 waits of 1 ms, then 50 of 10 ms (a known rate over time, for the series).
    #[arg(long, value_name = "PATTERN")]
    pub pattern: Option<NapPattern>,
}

impl Default for SleepSettings {
    fn default() -> SleepSettings {
        SleepSettings {
            duration: TimeSpan::from_ns(1_000_000_000),
            pattern: None,
        }
    }
}

/// Waits as operations: (length, how many), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NapPattern(pub Vec<(u64, u64)>);

impl std::str::FromStr for NapPattern {
    type Err = String;
    fn from_str(text: &str) -> Result<NapPattern, String> {
        let part = |p: &str| -> Result<(u64, u64), String> {
            let (length, count) = p.split_once('*').ok_or_else(|| {
                format!("'{p}' is not LENGTH*COUNT; write waits as `1ms*500,10ms*50`")
            })?;
            let ns = parse_duration_ns(length.trim()).map_err(|e| format!("'{p}': {e}"))?;
            let n = count
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("'{p}': the count must be a whole number above 0"))?;
            Ok((ns, n))
        };
        text.split(',')
            .map(part)
            .collect::<Result<_, _>>()
            .map(NapPattern)
    }
}

impl fmt::Display for NapPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(ns, n)| format!("{}*{n}", TimeSpan::from_ns(*ns)))
            .collect();
        f.write_str(&parts.join(","))
    }
}

fsbench_model::text_serde!(NapPattern);

/// How long it slept: its one figure.
pub const SLEPT: MetricDef = MetricDef::new("slept", Unit::Nanos, Direction::Lower).main();

impl Workload for SleepSettings {
    const KIND: &'static str = "sleep";
    const ABOUT: &'static str =
        "Wait without touching the filesystem: checks the harness (timeouts, Ctrl-C, storing)";
    const LONG_ABOUT: &'static str = "Wait without touching the filesystem: checks the harness \
(timeouts, Ctrl-C, storing), like fio's null engine. Reports how long it slept.";
    const CATEGORY: Option<Category> = None;
    // It touches no file: every policy holds trivially.
    const CACHE_POLICIES: &'static [CachePolicy] = &[
        CachePolicy::Warm,
        CachePolicy::Drop,
        CachePolicy::Remount,
        CachePolicy::Direct,
    ];

    fn check(&self, _ctx: &Context) -> Result<(), WorkloadError> {
        Ok(())
    }

    fn estimate_ns(&self, _ctx: &Context) -> u64 {
        match &self.pattern {
            Some(pattern) => pattern.0.iter().map(|(ns, n)| ns * n).sum(),
            None => self.duration.ns,
        }
    }

    fn run(
        &self,
        ctx: &Context,
        _dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        _harness: &mut dyn Harness,
    ) -> End {
        if let Some(pattern) = &self.pattern {
            return naps(pattern, ctx, stop, sink);
        }
        let started = Instant::now();
        let total = Duration::from_nanos(self.duration.ns);
        let mut told = Duration::ZERO;
        while started.elapsed() < total {
            if stop.is_requested() {
                return End::interrupted(None);
            }
            if started.elapsed() >= told + Duration::from_millis(250) {
                told = started.elapsed();
                sink.status(&format!(
                    "slept {:.1} s of {:.1} s",
                    told.as_secs_f64(),
                    total.as_secs_f64()
                ));
            }
            // Never past the end: the overshoot is then one wake-up, not part of a 10 ms step.
            let left = total.saturating_sub(started.elapsed());
            std::thread::sleep(Duration::from_millis(10).min(left));
        }
        let record = ResultRecord {
            measurements: vec![SLEPT.at(started.elapsed().as_nanos() as f64)],
            ..ResultRecord::default()
        };
        sink.record(record, 1, Some(1));
        End::ok(None)
    }
}

/// The pattern's waits, each a timed operation of the phase `naps` (with its series); stops
/// between waits.
fn naps(pattern: &NapPattern, ctx: &Context, stop: &StopFlag, sink: &mut dyn Sink) -> End {
    let started = Instant::now();
    let mut recorder = Recorder::new();
    let series = phase_series(ctx, sink, "naps".into(), "thread", 1);
    recorder.set_probe(series.as_ref().map(|s| s.probe(0)));
    let mut stopped = false;
    'pattern: for &(ns, count) in &pattern.0 {
        for _ in 0..count {
            if stop.is_requested() {
                stopped = true;
                break 'pattern;
            }
            let nap = Duration::from_nanos(ns);
            let _ = recorder.time_pass(
                &mut (),
                1,
                |_, _| {
                    std::thread::sleep(nap);
                    Ok(0)
                },
                |_| Ok(()),
            );
        }
    }
    if let Some(series) = series {
        series.finish();
    }
    if stopped {
        return End::interrupted(None);
    }
    let summary = recorder.summary();
    let record = ResultRecord {
        measurements: vec![
            SLEPT.at(started.elapsed().as_nanos() as f64),
            crate::figures::OPS.at(summary.ops as f64),
        ],
        ..ResultRecord::default()
    };
    sink.record(record, 1, Some(1));
    End::ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Detached;
    use crate::workload::Collect;
    use fsbench_model::Outcome;

    #[test]
    fn sleep_reports_what_it_slept_and_stops_when_asked() {
        let nap = SleepSettings {
            duration: TimeSpan::from_ns(20_000_000),
            pattern: None,
        };
        let ctx = Context::default();
        let mut sink = Collect::default();
        let end = nap.run(
            &ctx,
            Path::new("/"),
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok);
        assert!(sink.records[0].main().unwrap().value >= 20_000_000.0);
        let stop = StopFlag::new();
        stop.request();
        let end = nap.run(
            &ctx,
            Path::new("/"),
            &stop,
            &mut Collect::default(),
            &mut Detached,
        );
        assert_eq!(end.outcome, Outcome::Interrupted);
    }

    /// A pattern's waits are the phase's operations: the series counts each once, and their
    /// rate follows the pattern.
    #[test]
    fn a_pattern_is_timed_waits_in_the_series() {
        let pattern: NapPattern = "2ms*20,20ms*3".parse().unwrap();
        assert_eq!(pattern.to_string(), "2ms*20,20ms*3");
        assert!("2ms"
            .parse::<NapPattern>()
            .unwrap_err()
            .contains("LENGTH*COUNT"));
        assert!("2ms*0"
            .parse::<NapPattern>()
            .unwrap_err()
            .contains("above 0"));
        let settings = SleepSettings {
            pattern: Some(pattern),
            ..SleepSettings::default()
        };
        assert_eq!(settings.estimate_ns(&Context::default()), 100_000_000);
        let ctx = Context {
            interval: fsbench_measure::series::SeriesInterval::Every(10_000_000),
            ..Context::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &ctx,
            Path::new("/"),
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok);
        assert_eq!(sink.records[0].measurement("ops").unwrap().value, 23.0);
        let batches = sink.series.take();
        let ops: u64 = batches
            .iter()
            .flat_map(|b| &b.intervals)
            .map(|i| i.total.ops)
            .sum();
        assert_eq!(ops, 23);
        assert!(batches.iter().all(|b| b.label == "naps"));
    }
}
