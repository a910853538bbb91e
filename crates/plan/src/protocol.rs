//! The wire between a campaign and its workload's child process (`fsbench case-worker`): the
//! job goes down the child's stdin as one JSON line; the child says what happens on its stdout,
//! one [`Event`] per line, each flushed as it exists (so a child that is killed or times out has
//! handed back everything it finished); what the workload asks of its harness goes up as
//! [`Event::Ask`] and its answer comes down stdin as one [`Answer`] line; a running phase's
//! series come up as [`Event::Series`], written by the phase's sampler thread (never by a timed
//! thread) about every second, each line whole. Both ends are written here from the same
//! enums: [`ChildSink`] and [`child_harness`] are the child's sink and harness over one
//! [`ChildEnd`], [`serve`] the campaign's answer to an event.

use crate::workload::Job;
use fsbench_measure::series::Outlet;
use fsbench_model::series::PhaseBatch;
use fsbench_model::{Outcome, ResultRecord};
use fsbench_workload::harness::{Answer, Ask, Relay};
use fsbench_workload::{Harness, Sink};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What the child says on its standard output, one JSON object per line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    Status {
        line: String,
    },
    Warning {
        message: String,
    },
    /// A finished result (boxed: a record is much larger than the other events).
    Result {
        record: Box<ResultRecord>,
    },
    /// A request to the harness; the campaign answers with one [`Answer`] line on stdin.
    Ask {
        ask: Ask,
    },
    /// Intervals of a running phase's series.
    Series {
        batch: PhaseBatch,
    },
    /// The last line: how the workload ended, why (when it did not end ok), its seed and what
    /// it left on purpose.
    End {
        outcome: Outcome,
        reason: Option<String>,
        seed: Option<u64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<PathBuf>,
    },
}

/// The campaign's side: hands an event's results to `sink` and its request to `harness`,
/// returning the answer to write back (None for an event that is not a request, or the end).
/// A series batch goes to the sink's outlet, and its live rate to its status.
pub fn serve(event: Event, sink: &mut dyn Sink, harness: &mut dyn Harness) -> Option<Answer> {
    match event {
        Event::Series { batch } => {
            sink.outlet().send(&batch);
            if let Some(rate) = batch.live_rate() {
                sink.status(&rate);
            }
        }
        Event::Status { line } => sink.status(line.trim()),
        Event::Warning { message } => sink.warning(&message),
        Event::Result { record } => {
            // The child's count is not the campaign's: the sink counts what it receives.
            sink.record(*record, 0, None)
        }
        Event::Ask { ask } => return Some(ask.serve(harness)),
        Event::End { .. } => {}
    }
    None
}

/// One JSON line, flushed; false when it cannot be written (the other end is gone).
pub fn write_line(out: &mut dyn Write, value: &impl Serialize) -> bool {
    let mut line = serde_json::to_vec(value).expect("protocol values serialize");
    line.push(b'\n');
    out.write_all(&line).and_then(|()| out.flush()).is_ok()
}

/// The child's side: a [`Sink`] that says each result, warning and status as an event, and (by
/// [`ChildEnd::harness`]) a [`Harness`] that asks the campaign and waits for its answer.
pub struct ChildEnd<W: Write, R: BufRead> {
    out: Said<W>,
    input: R,
}

/// The child's output, shared by its main thread and a phase's sampler thread: one line at a
/// time, whole.
struct Said<W> {
    out: Arc<Mutex<W>>,
    /// The campaign stopped reading: nothing more is said (the child is being stopped).
    broken: Arc<AtomicBool>,
}

impl<W> Clone for Said<W> {
    fn clone(&self) -> Said<W> {
        Said {
            out: self.out.clone(),
            broken: self.broken.clone(),
        }
    }
}

impl<W: Write> Said<W> {
    /// Says `event`; a campaign that went away ends the saying.
    fn send(&self, event: &Event) {
        if self.broken.load(Ordering::Relaxed) {
            return;
        }
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if !write_line(&mut *out, event) {
            self.broken.store(true, Ordering::Relaxed);
        }
    }
}

impl<W: Write + Send> Outlet for Said<W> {
    fn send(&self, batch: &PhaseBatch) {
        Said::send(
            self,
            &Event::Series {
                batch: batch.clone(),
            },
        );
    }
}

impl<W: Write, R: BufRead> ChildEnd<W, R> {
    pub fn new(out: W, input: R) -> ChildEnd<W, R> {
        ChildEnd {
            out: Said {
                out: Arc::new(Mutex::new(out)),
                broken: Arc::new(AtomicBool::new(false)),
            },
            input,
        }
    }

    /// Says `event`; a campaign that went away ends the saying.
    pub fn send(&mut self, event: &Event) {
        self.out.send(event);
    }

    /// What was said (tests: the lines written).
    pub fn into_output(self) -> Option<W> {
        Arc::into_inner(self.out.out).map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    /// Asks the campaign and reads its answer; None when it is gone or answered nonsense.
    fn ask(&mut self, ask: Ask) -> Option<Answer> {
        self.send(&Event::Ask { ask });
        if self.out.broken.load(Ordering::Relaxed) {
            return None;
        }
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str(&line).ok(),
            _ => None,
        }
    }
}

/// The child's sink: shares the child end with its harness, one request or event at a time.
pub struct ChildSink<'c, W: Write, R: BufRead>(pub &'c std::cell::RefCell<ChildEnd<W, R>>);

impl<W: Write + Send + 'static, R: BufRead> Sink for ChildSink<'_, W, R> {
    fn record(&mut self, record: ResultRecord, _done: usize, _total: Option<usize>) {
        self.0.borrow_mut().send(&Event::Result {
            record: Box::new(record),
        });
    }
    fn warning(&mut self, message: &str) {
        self.0.borrow_mut().send(&Event::Warning {
            message: message.to_string(),
        });
    }
    fn status(&mut self, line: &str) {
        self.0.borrow_mut().send(&Event::Status {
            line: line.to_string(),
        });
    }
    fn outlet(&mut self) -> Arc<dyn Outlet> {
        Arc::new(self.0.borrow().out.clone())
    }
}

/// The child's harness, sharing the child end with its sink.
pub fn child_harness<'c, W: Write, R: BufRead>(
    end: &'c std::cell::RefCell<ChildEnd<W, R>>,
) -> Relay<impl FnMut(Ask) -> Option<Answer> + 'c> {
    Relay {
        relay: move |ask| end.borrow_mut().ask(ask),
    }
}

/// Reads the job, the first line of the child's stdin.
pub fn read_job(input: &mut dyn BufRead) -> Result<Job, String> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the job on standard input: {e}"))?;
    serde_json::from_str(&line).map_err(|e| format!("the job on standard input is not valid: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_workload::workload::Collect;

    /// What the child says and asks, read by the campaign's side and answered: the same
    /// results, warnings and requests arrive, in order.
    #[test]
    fn the_child_end_and_the_campaign_end_speak_the_same_lines() {
        // The campaign's answers, ready before the child asks (as a pipe would hold them).
        let answers = [
            Answer::Done(Ok("remounted".into())),
            Answer::Go(true),
            Answer::Evicted(Ok(Some(0.0))),
        ];
        let mut input = Vec::new();
        for answer in &answers {
            write_line(&mut input, answer);
        }
        let end = std::cell::RefCell::new(ChildEnd::new(Vec::new(), &input[..]));
        let mut sink = ChildSink(&end);
        let mut harness = child_harness(&end);
        sink.status("write 1 of 2");
        assert_eq!(harness.cold(), Ok("remounted".into()));
        sink.record(ResultRecord::default(), 1, Some(2));
        assert!(harness.phase_start());
        assert_eq!(
            harness.evict(std::path::Path::new("/f"), 0, 0),
            Ok(Some(0.0))
        );
        sink.warning("odd");
        // No answer left: the campaign is gone, and a phase does not start.
        assert!(!harness.phase_start());
        drop(harness);
        let said = end.into_inner().into_output().unwrap();
        let events: Vec<Event> = said
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(events.len(), 7, "{events:?}");
        let mut got = Collect::default();
        let mut asked = Vec::new();
        struct Asked<'a>(&'a mut Vec<String>);
        impl Harness for Asked<'_> {
            fn cold(&mut self) -> Result<String, String> {
                self.0.push("cold".into());
                Ok("remounted".into())
            }
            fn drop_caches(&mut self) -> Result<String, String> {
                unreachable!()
            }
            fn evict(
                &mut self,
                p: &std::path::Path,
                _: u64,
                _: u64,
            ) -> Result<Option<f64>, String> {
                self.0.push(format!("evict {}", p.display()));
                Ok(Some(0.0))
            }
            fn resident(&mut self, _: &std::path::Path, _: u64, _: u64) -> Result<f64, String> {
                unreachable!()
            }
            fn phase_start(&mut self) -> bool {
                self.0.push("start".into());
                true
            }
        }
        let mut served = Vec::new();
        for event in events {
            if let Some(answer) = serve(event, &mut got, &mut Asked(&mut asked)) {
                served.push(answer);
            }
        }
        assert_eq!(asked, ["cold", "start", "evict /f", "start"]);
        assert_eq!(served[..3], answers);
        assert_eq!(got.statuses, ["write 1 of 2"]);
        assert_eq!(got.records.len(), 1);
        assert_eq!(got.warnings, ["odd"]);
    }
}
