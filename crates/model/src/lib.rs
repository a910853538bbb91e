//! The vocabulary every stage of fsbench shares, defined once: how a sample, a workload, a run
//! and a command ended ([`Outcome`]), and the state of a stored run ([`RunState`]). Depends on no
//! other fsbench crate; every layer that speaks of an ending uses these.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How something measured ended: a sample of a campaign, a workload run, a one-case command.
/// Every outcome is a result, shown in every report with its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Measured to the end.
    Ok,
    /// The host cannot run the configuration (kernel, tool, rejected option).
    Unsupported,
    /// The target or the workload failed; the reason says how.
    Failed,
    /// The workload ran past its timeout and was stopped.
    Timeout,
    /// Stopped by Ctrl-C or SIGTERM; what finished before is kept.
    Interrupted,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Ok,
        Outcome::Unsupported,
        Outcome::Failed,
        Outcome::Timeout,
        Outcome::Interrupted,
    ];

    /// The one spelling, in the store, the exports and the reports.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Unsupported => "unsupported",
            Outcome::Failed => "failed",
            Outcome::Timeout => "timeout",
            Outcome::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == text)
    }

    /// The exit code of a command that ended so (README, "Exit codes"): 0, 3, 1, 1, 130.
    pub const fn exit_code(self) -> i32 {
        match self {
            Outcome::Ok => 0,
            Outcome::Unsupported => 3,
            Outcome::Failed | Outcome::Timeout => 1,
            Outcome::Interrupted => 130,
        }
    }

    /// How a run of several samples ended, by the README's rule: interrupted first; then
    /// failed if any sample failed or timed out; then unsupported if every sample was; else ok
    /// (unsupported cases beside measured ones are listed, not failures). No samples is ok.
    pub fn of_run(samples: impl IntoIterator<Item = Outcome>) -> Outcome {
        let (mut any, mut all_unsupported, mut failed) = (false, true, false);
        for outcome in samples {
            match outcome {
                Outcome::Interrupted => return Outcome::Interrupted,
                Outcome::Failed | Outcome::Timeout => failed = true,
                _ => {}
            }
            any = true;
            all_unsupported &= outcome == Outcome::Unsupported;
        }
        if failed {
            Outcome::Failed
        } else if any && all_unsupported {
            Outcome::Unsupported
        } else {
            Outcome::Ok
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // pad, not write_str: tables align these with width specifiers.
        f.pad(self.name())
    }
}

/// The state of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    /// Its owner is measuring (or was, if it is gone: then readers show it as interrupted).
    Running,
    Complete,
    Interrupted,
    /// The campaign itself failed (the store could not take a sample); `--resume` continues.
    Failed,
}

impl RunState {
    pub const ALL: [RunState; 4] = [
        RunState::Running,
        RunState::Complete,
        RunState::Interrupted,
        RunState::Failed,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Complete => "complete",
            RunState::Interrupted => "interrupted",
            RunState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|s| s.name() == text)
    }
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // pad, not write_str: tables align these with width specifiers.
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.name()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.name());
        }
        for s in RunState::ALL {
            assert_eq!(RunState::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert_eq!(Outcome::parse("complete"), None);
        // Tables align these with width specifiers.
        assert_eq!(format!("{:<11}|", RunState::Complete), "complete   |");
        assert_eq!(format!("{:>8}|", Outcome::Ok), "      ok|");
    }

    #[test]
    fn a_run_ends_by_the_documented_rule() {
        use Outcome::*;
        assert_eq!(Outcome::of_run([]), Ok);
        assert_eq!(Outcome::of_run([Ok, Unsupported]), Ok);
        assert_eq!(Outcome::of_run([Unsupported, Unsupported]), Unsupported);
        assert_eq!(Outcome::of_run([Ok, Timeout, Unsupported]), Failed);
        assert_eq!(Outcome::of_run([Failed, Interrupted]), Interrupted);
        assert_eq!(
            [Ok, Unsupported, Failed, Timeout, Interrupted].map(Outcome::exit_code),
            [0, 3, 1, 1, 130]
        );
    }
}
