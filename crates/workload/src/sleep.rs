//! The sleep workload: the harness testing itself, like fio's null engine. It only waits, so
//! timeouts, interruption and storing can be tested without a filesystem doing anything.

use crate::harness::Harness;
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::units::TimeSpan;
use fsbench_model::{CachePolicy, Category, Direction, MetricDef, ResultRecord, Unit};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// Waits for a while in the directory's process, touching nothing.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SleepSettings {
    /// How long to wait (ns, us, ms, s, m, h).
    #[arg(long, value_name = "DURATION", default_value_t = SleepSettings::default().duration)]
    pub duration: TimeSpan,
}

impl Default for SleepSettings {
    fn default() -> SleepSettings {
        SleepSettings {
            duration: TimeSpan::from_ns(1_000_000_000),
        }
    }
}

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
        self.duration.ns
    }

    fn run(
        &self,
        _ctx: &Context,
        _dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        _harness: &mut dyn Harness,
    ) -> End {
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
}
