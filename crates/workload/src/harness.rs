//! What a running workload asks of the harness that runs it, apart from where its results go
//! ([`Sink`](crate::Sink)): the page cache brought cold (a filesystem remounted, every cache
//! dropped, one file evicted and its residency checked) and, under scale-out, each timed phase
//! started together with the job's other ranks. A workload command's harness answers in its own
//! process; a campaign's child relays each request to its campaign as one [`Ask`] and gets one
//! [`Answer`] (`fsbench_plan::protocol`), so the two ends are written from the same enum.
//!
//! Every request is made between timed sections, never inside one.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The requests a workload makes of its harness. Each method is one [`Ask`]; a new request is
/// a method here, a variant there and its arm in [`Ask::serve`] and the relaying harness.
pub trait Harness {
    /// Brings the page cache cold for the filesystem the workload runs on, as well as the
    /// harness can, and says how ("remounted", "dropped"): a filesystem fsbench made is
    /// remounted (the workload holds no file open in it then); elsewhere every cache is
    /// dropped (root only).
    fn cold(&mut self) -> Result<String, String>;

    /// Drops the page, dentry and inode caches of every filesystem (after a sync); root only.
    fn drop_caches(&mut self) -> Result<String, String>;

    /// Writes back and evicts from the page cache the `len` bytes at `offset` of the file at
    /// `path` (`len` 0: to its end; a directory: every file under it), then says how much of
    /// the range is still resident (0..=1), None when that cannot be measured.
    fn evict(&mut self, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String>;

    /// How much of the `len` bytes at `offset` of the file at `path` is in the page cache
    /// (0..=1), without changing it.
    fn resident(&mut self, path: &Path, offset: u64, len: u64) -> Result<f64, String>;

    /// Cuts the filesystem the workload runs on as a crash would (see [`Cut`]): the filesystem
    /// is shut down without writing back its log, unmounted, mounted again (the recovery,
    /// timed), checked read-only and mounted for the workload. The workload holds no file open
    /// in it then. [`CutError::Unsupported`] where the filesystem or the ground cannot be cut.
    fn cut(&mut self) -> Result<Cut, CutError> {
        Err(CutError::Unsupported(NO_CUT.into()))
    }

    /// The power cut of a recording device (the durability workload's `cut = power`, issue 40), in four calls:
    /// `record` starts the log of every write from the device as it is now; the workload sets
    /// `mark`s as its operations return; `power_cut` ends the log, takes the filesystem away
    /// and lists the crash states the log can leave (at most `budget.per_flush` of the writes
    /// since each flush); `crash_state(i)` makes state `i` and mounts it where the filesystem
    /// was, recovered and checked (states in the listed order); `resume` brings the
    /// filesystem back as it was before the cut. [`CutError::Unsupported`] where the
    /// filesystem is not on a recording device.
    fn record(&mut self) -> Result<(), CutError> {
        Err(CutError::Unsupported(NOT_RECORDED.into()))
    }

    /// Mark `n` in the log ("operation n returned"); nothing when not recording.
    fn mark(&mut self, _n: u64) {}

    /// See [`Harness::record`].
    fn power_cut(&mut self, _budget: PowerBudget) -> Result<Vec<CrashState>, CutError> {
        Err(CutError::Unsupported(NOT_RECORDED.into()))
    }

    /// See [`Harness::record`].
    fn crash_state(&mut self, _i: usize) -> Result<StateCheck, CutError> {
        Err(CutError::Unsupported(NOT_RECORDED.into()))
    }

    /// See [`Harness::record`].
    fn resume(&mut self) -> Result<(), CutError> {
        Err(CutError::Unsupported(NOT_RECORDED.into()))
    }

    /// Between `power_cut` and `resume`: the cut kept as a crash bundle (the start image, the
    /// log and its bytes, a manifest with every state; docs/recording-device.md) in a new
    /// directory under `dir` (made when missing), whose path comes back; `fsbench crash-state`
    /// replays any of its states to an image. The cut goes on as before; the bundle outlives
    /// it, and the caller may add its own files to the directory (the operations to replay).
    fn keep_power_cut(&mut self, _dir: &Path) -> Result<PathBuf, CutError> {
        Err(CutError::Unsupported(NOT_RECORDED.into()))
    }

    /// Before each timed phase. Under scale-out the ranks of a job start the phase together
    /// here; false when the job is ending (another rank stopped), and the workload then stops
    /// as if interrupted. Alone, true at once.
    fn phase_start(&mut self) -> bool {
        true
    }

    /// Before a phase with a setup ([`phase_start_after`]): true once every rank of the job has
    /// ended the previous phase (the setup runs then), false when the job is ending.
    fn before_setup(&mut self) -> bool {
        true
    }

    /// The setup's end on this rank (`ok`): true when it went well on every rank and the
    /// phase starts now.
    fn after_setup(&mut self, ok: bool) -> bool {
        ok
    }

    /// While a phase with a first-done stonewall runs, about every millisecond (`finished`
    /// false) and once after its threads have ended (true), on the thread that started them:
    /// `done_here` says the wall is up in this process. Under scale-out, tells the other ranks
    /// once and answers true when another rank's wall is up (the caller raises its own); after
    /// the phase, waits for every rank's word, so none is left for the next. Alone: false.
    fn phase_poll(&mut self, _done_here: bool, _finished: bool) -> bool {
        false
    }
}

/// [`Harness::phase_start`] for a phase with `setup`, run on this process once every rank of
/// the job has ended the previous phase and before any starts the next (rank 0 makes a file
/// all ranks then open). An error from `setup` is this rank's, and the others stop with it;
/// `Ok(false)`: another rank stopped. Alone: `setup`, then `Ok(true)`.
pub fn phase_start_after(
    harness: &mut dyn Harness,
    setup: &mut dyn FnMut() -> Result<(), crate::WorkloadError>,
) -> Result<bool, crate::WorkloadError> {
    if !harness.before_setup() {
        return Ok(false);
    }
    let done = setup();
    let all = harness.after_setup(done.is_ok());
    done.map(|()| all)
}

/// What a cut did ([`Harness::cut`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    /// How the filesystem was cut, as results say it ("shutdown ioctl, log not flushed").
    pub how: String,
    /// Nanoseconds of the first mount after the cut, the log's replay included: the recovery.
    pub recovery_ns: u64,
    /// The read-only check after the recovery (None: the filesystem has no check tool).
    pub fsck_clean: Option<bool>,
    /// The check's command and last lines when it was not clean (empty otherwise).
    pub fsck_said: String,
}

/// How many crash states a power cut lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerBudget {
    /// States of the writes since each flush (all subsets when they are at most this many,
    /// else this many seeded ones), besides the flush's own.
    pub per_flush: usize,
    pub seed: u64,
    /// The device ignored every flush: subsets of every write.
    pub ignore_flushes: bool,
}

/// A crash state a power cut can leave, as listed before it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashState {
    /// "after flush 3 and 2 of its 5 next writes".
    pub what: String,
    /// The workload's last mark before the state's next flush: what was promised in it (None:
    /// no mark yet).
    pub promised: Option<u64>,
}

/// A crash state made and mounted ([`Harness::crash_state`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateCheck {
    /// The first mount, the log's replay included: the recovery.
    pub recovery_ns: u64,
    /// The read-only check after it (None: no check tool, or not mounted).
    pub fsck_clean: Option<bool>,
    /// The check's command and last lines when it was not clean.
    pub fsck_said: String,
    /// Why the state did not mount (None: it is mounted where the filesystem was).
    pub unmountable: Option<String>,
}

const NOT_RECORDED: &str = "the filesystem is not on the recording device: a power cut needs a \
                            filesystem fsbench makes (--fs) for the durability workload with \
                            cut = power, which puts it there";

/// Why a cut was not made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "kebab-case")]
pub enum CutError {
    /// This filesystem, or this ground (a directory, not a filesystem fsbench made), cannot be
    /// cut here: the case is `unsupported` with this reason.
    #[error("{0}")]
    Unsupported(String),
    /// The cut was tried and something failed (the mount after it, say): the sample fails.
    #[error("{0}")]
    Failed(String),
}

const NO_CUT: &str = "this harness cannot cut a filesystem: a cut needs one fsbench made \
                      (--fs, or a campaign's filesystem)";

/// A harness that can do nothing with the page cache (unit tests of workloads, which have no
/// host to act on): every cache request is refused, every phase starts at once.
#[derive(Debug, Default)]
pub struct Detached;

impl Harness for Detached {
    fn cold(&mut self) -> Result<String, String> {
        Err(DETACHED.into())
    }
    fn drop_caches(&mut self) -> Result<String, String> {
        Err(DETACHED.into())
    }
    fn evict(&mut self, _: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
        Err(DETACHED.into())
    }
    fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
        Err(DETACHED.into())
    }
}

const DETACHED: &str = "no harness: the workload runs detached from any host";

/// For the workloads' tests: a detached harness whose cut cuts nothing (every write survives,
/// as if the filesystem had flushed everything first): a durability run's oracle then finds
/// no violation.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Survives {
    pub cuts: u32,
}

#[cfg(test)]
impl Harness for Survives {
    fn cold(&mut self) -> Result<String, String> {
        Detached.cold()
    }
    fn drop_caches(&mut self) -> Result<String, String> {
        Detached.drop_caches()
    }
    fn evict(&mut self, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String> {
        Detached.evict(path, offset, len)
    }
    fn resident(&mut self, path: &Path, offset: u64, len: u64) -> Result<f64, String> {
        Detached.resident(path, offset, len)
    }
    fn cut(&mut self) -> Result<Cut, CutError> {
        self.cuts += 1;
        Ok(Cut {
            how: "nothing cut (a test)".into(),
            recovery_ns: 1_000,
            fsck_clean: Some(true),
            fsck_said: String::new(),
        })
    }
}

/// For the workloads' tests of scale-out: a detached harness that counts the phases it was told
/// ended and the setups it agreed to, and answers every poll with `wall` (true: another rank
/// is done).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Watching {
    pub wall: bool,
    pub ended: u32,
    pub setups: u32,
}

#[cfg(test)]
impl Harness for Watching {
    fn cold(&mut self) -> Result<String, String> {
        Detached.cold()
    }
    fn drop_caches(&mut self) -> Result<String, String> {
        Detached.drop_caches()
    }
    fn evict(&mut self, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String> {
        Detached.evict(path, offset, len)
    }
    fn resident(&mut self, path: &Path, offset: u64, len: u64) -> Result<f64, String> {
        Detached.resident(path, offset, len)
    }
    fn before_setup(&mut self) -> bool {
        self.setups += 1;
        true
    }
    fn phase_poll(&mut self, _done_here: bool, finished: bool) -> bool {
        self.ended += u32::from(finished);
        self.wall
    }
}

/// One request of a workload to its harness, as it crosses from a campaign's child to the
/// campaign (one JSON line); [`Ask::serve`] answers it from any [`Harness`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "kebab-case")]
pub enum Ask {
    Cold,
    DropCaches,
    Evict {
        path: PathBuf,
        offset: u64,
        len: u64,
    },
    Resident {
        path: PathBuf,
        offset: u64,
        len: u64,
    },
    Cut,
    Record,
    Mark {
        n: u64,
    },
    PowerCut {
        budget: PowerBudget,
    },
    CrashState {
        i: usize,
    },
    Resume,
    KeepPowerCut {
        dir: PathBuf,
    },
    PhaseStart,
    BeforeSetup,
    AfterSetup {
        ok: bool,
    },
    PhasePoll {
        done_here: bool,
        finished: bool,
    },
}

/// The harness's answer to an [`Ask`], in kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// How the cache was made cold, or why it could not be.
    Done(Result<String, String>),
    /// What stays resident after an eviction (None: unknown), or why it could not be done.
    Evicted(Result<Option<f64>, String>),
    /// How much is resident, or why it cannot be said.
    Resident(Result<f64, String>),
    /// Go (or not) for a phase, a setup or a wall.
    Go(bool),
    /// What a cut did, or why it was not made.
    Cut(Result<Cut, CutError>),
    /// A recording started or a power cut resumed, or why not.
    Recorded(Result<(), CutError>),
    /// The crash states of a power cut, or why it was not made.
    States(Result<Vec<CrashState>, CutError>),
    /// A crash state made and mounted, or why not.
    State(Result<StateCheck, CutError>),
    /// Where a power cut was kept, or why not.
    Kept(Result<PathBuf, CutError>),
}

impl Ask {
    /// The answer of `harness` (the campaign's end of the relay).
    pub fn serve(self, harness: &mut dyn Harness) -> Answer {
        match self {
            Ask::Cold => Answer::Done(harness.cold()),
            Ask::DropCaches => Answer::Done(harness.drop_caches()),
            Ask::Evict { path, offset, len } => Answer::Evicted(harness.evict(&path, offset, len)),
            Ask::Resident { path, offset, len } => {
                Answer::Resident(harness.resident(&path, offset, len))
            }
            Ask::Cut => Answer::Cut(harness.cut()),
            Ask::Record => Answer::Recorded(harness.record()),
            Ask::Mark { n } => {
                harness.mark(n);
                Answer::Go(true)
            }
            Ask::PowerCut { budget } => Answer::States(harness.power_cut(budget)),
            Ask::CrashState { i } => Answer::State(harness.crash_state(i)),
            Ask::Resume => Answer::Recorded(harness.resume()),
            Ask::KeepPowerCut { dir } => Answer::Kept(harness.keep_power_cut(&dir)),
            Ask::PhaseStart => Answer::Go(harness.phase_start()),
            Ask::BeforeSetup => Answer::Go(harness.before_setup()),
            Ask::AfterSetup { ok } => Answer::Go(harness.after_setup(ok)),
            Ask::PhasePoll {
                done_here,
                finished,
            } => Answer::Go(harness.phase_poll(done_here, finished)),
        }
    }
}

/// The asking end of the relay: a [`Harness`] whose every request is an [`Ask`] handed to
/// `relay`, which returns the answer (None: no answer came — the campaign is gone).
pub struct Relay<F: FnMut(Ask) -> Option<Answer>> {
    pub relay: F,
}

impl<F: FnMut(Ask) -> Option<Answer>> Relay<F> {
    fn done(&mut self, ask: Ask) -> Result<String, String> {
        match (self.relay)(ask) {
            Some(Answer::Done(done)) => done,
            other => Err(unanswered(other)),
        }
    }

    fn go(&mut self, ask: Ask) -> bool {
        matches!((self.relay)(ask), Some(Answer::Go(true)))
    }
}

fn unanswered(answer: Option<Answer>) -> String {
    match answer {
        None => "the campaign did not answer".into(),
        Some(other) => format!("the campaign answered out of turn ({other:?})"),
    }
}

impl<F: FnMut(Ask) -> Option<Answer>> Harness for Relay<F> {
    fn cold(&mut self) -> Result<String, String> {
        self.done(Ask::Cold)
    }
    fn drop_caches(&mut self) -> Result<String, String> {
        self.done(Ask::DropCaches)
    }
    fn evict(&mut self, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String> {
        let path = path.to_path_buf();
        match (self.relay)(Ask::Evict { path, offset, len }) {
            Some(Answer::Evicted(evicted)) => evicted,
            other => Err(unanswered(other)),
        }
    }
    fn resident(&mut self, path: &Path, offset: u64, len: u64) -> Result<f64, String> {
        let path = path.to_path_buf();
        match (self.relay)(Ask::Resident { path, offset, len }) {
            Some(Answer::Resident(resident)) => resident,
            other => Err(unanswered(other)),
        }
    }
    fn cut(&mut self) -> Result<Cut, CutError> {
        match (self.relay)(Ask::Cut) {
            Some(Answer::Cut(cut)) => cut,
            other => Err(CutError::Failed(unanswered(other))),
        }
    }
    fn record(&mut self) -> Result<(), CutError> {
        match (self.relay)(Ask::Record) {
            Some(Answer::Recorded(done)) => done,
            other => Err(CutError::Failed(unanswered(other))),
        }
    }
    fn mark(&mut self, n: u64) {
        (self.relay)(Ask::Mark { n });
    }
    fn power_cut(&mut self, budget: PowerBudget) -> Result<Vec<CrashState>, CutError> {
        match (self.relay)(Ask::PowerCut { budget }) {
            Some(Answer::States(states)) => states,
            other => Err(CutError::Failed(unanswered(other))),
        }
    }
    fn crash_state(&mut self, i: usize) -> Result<StateCheck, CutError> {
        match (self.relay)(Ask::CrashState { i }) {
            Some(Answer::State(state)) => state,
            other => Err(CutError::Failed(unanswered(other))),
        }
    }
    fn resume(&mut self) -> Result<(), CutError> {
        match (self.relay)(Ask::Resume) {
            Some(Answer::Recorded(done)) => done,
            other => Err(CutError::Failed(unanswered(other))),
        }
    }
    fn keep_power_cut(&mut self, dir: &Path) -> Result<PathBuf, CutError> {
        let dir = dir.to_path_buf();
        match (self.relay)(Ask::KeepPowerCut { dir }) {
            Some(Answer::Kept(kept)) => kept,
            other => Err(CutError::Failed(unanswered(other))),
        }
    }
    fn phase_start(&mut self) -> bool {
        self.go(Ask::PhaseStart)
    }
    fn before_setup(&mut self) -> bool {
        self.go(Ask::BeforeSetup)
    }
    fn after_setup(&mut self, ok: bool) -> bool {
        self.go(Ask::AfterSetup { ok })
    }
    fn phase_poll(&mut self, done_here: bool, finished: bool) -> bool {
        self.go(Ask::PhasePoll {
            done_here,
            finished,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A harness that says what it was asked, to check that a relayed request reaches the
    /// serving harness as the same call with the same arguments, and its answer comes back.
    #[derive(Default)]
    struct Said(Vec<String>);

    impl Harness for Said {
        fn cold(&mut self) -> Result<String, String> {
            self.0.push("cold".into());
            Ok("remounted".into())
        }
        fn drop_caches(&mut self) -> Result<String, String> {
            self.0.push("drop".into());
            Err("needs root".into())
        }
        fn evict(&mut self, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String> {
            self.0
                .push(format!("evict {} {offset} {len}", path.display()));
            Ok(Some(0.25))
        }
        fn resident(&mut self, path: &Path, offset: u64, len: u64) -> Result<f64, String> {
            self.0
                .push(format!("resident {} {offset} {len}", path.display()));
            Ok(0.5)
        }
        fn cut(&mut self) -> Result<Cut, CutError> {
            self.0.push("cut".into());
            Ok(Cut {
                how: "shutdown".into(),
                recovery_ns: 7,
                fsck_clean: Some(true),
                fsck_said: String::new(),
            })
        }
        fn record(&mut self) -> Result<(), CutError> {
            self.0.push("record".into());
            Ok(())
        }
        fn mark(&mut self, n: u64) {
            self.0.push(format!("mark {n}"));
        }
        fn power_cut(&mut self, budget: PowerBudget) -> Result<Vec<CrashState>, CutError> {
            self.0.push(format!("power {}", budget.per_flush));
            Ok(vec![CrashState {
                what: "after flush 1".into(),
                promised: Some(3),
            }])
        }
        fn crash_state(&mut self, i: usize) -> Result<StateCheck, CutError> {
            self.0.push(format!("state {i}"));
            Err(CutError::Failed("no loop device".into()))
        }
        fn resume(&mut self) -> Result<(), CutError> {
            self.0.push("resume".into());
            Err(CutError::Unsupported("not recorded".into()))
        }
        fn keep_power_cut(&mut self, dir: &Path) -> Result<PathBuf, CutError> {
            self.0.push(format!("keep {}", dir.display()));
            Ok(dir.join("ext4-1-0-cut-0123abcd"))
        }
        fn phase_start(&mut self) -> bool {
            self.0.push("start".into());
            true
        }
        fn before_setup(&mut self) -> bool {
            self.0.push("before".into());
            true
        }
        fn after_setup(&mut self, ok: bool) -> bool {
            self.0.push(format!("after {ok}"));
            false
        }
        fn phase_poll(&mut self, done_here: bool, finished: bool) -> bool {
            self.0.push(format!("poll {done_here} {finished}"));
            true
        }
    }

    #[test]
    fn a_relayed_request_is_the_same_call_at_the_other_end() {
        let mut served = Said::default();
        let mut relay = Relay {
            relay: |ask: Ask| {
                // Through JSON, as over the pipe.
                let ask: Ask = serde_json::from_str(&serde_json::to_string(&ask).unwrap()).unwrap();
                let answer = ask.serve(&mut served);
                Some(serde_json::from_str(&serde_json::to_string(&answer).unwrap()).unwrap())
            },
        };
        assert_eq!(relay.cold(), Ok("remounted".into()));
        assert_eq!(relay.drop_caches(), Err("needs root".into()));
        assert_eq!(relay.evict(Path::new("/f"), 4096, 8192), Ok(Some(0.25)));
        assert_eq!(relay.resident(Path::new("/f"), 0, 0), Ok(0.5));
        assert_eq!(relay.cut().map(|c| c.recovery_ns), Ok(7));
        assert_eq!(relay.record(), Ok(()));
        relay.mark(4);
        let budget = PowerBudget {
            per_flush: 5,
            seed: 1,
            ignore_flushes: false,
        };
        assert_eq!(
            relay.power_cut(budget).unwrap()[0].promised,
            Some(3),
            "the states listed come back"
        );
        assert_eq!(
            relay.crash_state(2),
            Err(CutError::Failed("no loop device".into()))
        );
        assert_eq!(
            relay.keep_power_cut(Path::new("/kept")),
            Ok(PathBuf::from("/kept/ext4-1-0-cut-0123abcd"))
        );
        assert_eq!(
            relay.resume(),
            Err(CutError::Unsupported("not recorded".into()))
        );
        assert!(relay.phase_start());
        let mut setups = 0;
        let went = phase_start_after(&mut relay, &mut || {
            setups += 1;
            Ok(())
        });
        assert!(
            !went.unwrap(),
            "the serving harness said no after the setup"
        );
        assert_eq!(setups, 1);
        assert!(relay.phase_poll(true, false));
        let _ = relay;
        assert_eq!(
            served.0,
            [
                "cold",
                "drop",
                "evict /f 4096 8192",
                "resident /f 0 0",
                "cut",
                "record",
                "mark 4",
                "power 5",
                "state 2",
                "keep /kept",
                "resume",
                "start",
                "before",
                "after true",
                "poll true false"
            ]
        );
    }

    #[test]
    fn no_answer_is_a_refusal_and_no_go() {
        let mut gone = Relay { relay: |_| None };
        assert!(gone.cold().unwrap_err().contains("did not answer"));
        assert!(!gone.phase_start());
        assert!(!gone.phase_poll(false, true));
        let mut wrong = Relay {
            relay: |_| Some(Answer::Go(true)),
        };
        assert!(wrong.cold().unwrap_err().contains("out of turn"));
    }
}
