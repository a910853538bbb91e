//! `fsbench case-worker` (hidden): the child process of a campaign. Reads one job (a JSON line)
//! on standard input (later lines answer its requests for a cold cache and, when the campaign
//! is one rank of an MPI job, for the start of each timed phase), runs it in a directory and
//! says what happens on standard output, one JSON event per line
//! (`fsbench_plan::workload::Event`), the last one how it ended. Exit 0 ok, 1 failed (the
//! reason also on stderr), 130 stopped. It never calls MPI: its parent meets the other ranks.

use crate::cli::CaseWorkerArgs;
use crate::exit::{self, Failure};
use crate::target::stop_on_signals;
use anyhow::{anyhow, Context};
use fsbench_model::{Outcome, ResultRecord};
use fsbench_plan::workload::{reason, run_job, ColdReply, Event, Job, PhaseReply};
use fsbench_workload::Sink;
use std::io::Write;

/// Writes each event as a line and flushes it; a parent that went away ends the child.
struct Events {
    out: std::io::Stdout,
    broken: bool,
    /// One rank of a job: each phase starts when the campaign says every rank does.
    in_job: bool,
}

impl Events {
    fn send(&mut self, event: &Event) {
        if self.broken {
            return;
        }
        let mut line = serde_json::to_vec(event).expect("events serialize");
        line.push(b'\n');
        let mut out = self.out.lock();
        if out.write_all(&line).and_then(|_| out.flush()).is_err() {
            self.broken = true;
        }
    }
}

impl Sink for Events {
    fn record(&mut self, record: ResultRecord, _done: usize, _total: Option<usize>) {
        self.send(&Event::Result { record });
    }
    fn warning(&mut self, message: &str) {
        self.send(&Event::Warning {
            message: message.to_string(),
        });
    }
    fn status(&mut self, line: &str) {
        self.send(&Event::Status {
            line: line.to_string(),
        });
    }
    fn cold(&mut self) -> Result<String, String> {
        self.send(&Event::Cold);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str::<ColdReply>(&line)
                .map(Into::into)
                .unwrap_or_else(|e| Err(format!("the campaign's answer is not valid: {e}"))),
            _ => Err("the campaign did not answer the request for a cold cache".into()),
        }
    }
    fn phase_start(&mut self) -> bool {
        self.ask(&Event::Phase)
    }
    fn phase_start_after(
        &mut self,
        setup: &mut dyn FnMut() -> Result<(), fsbench_workload::WorkloadError>,
    ) -> Result<bool, fsbench_workload::WorkloadError> {
        if !self.in_job {
            setup()?;
            return Ok(true);
        }
        if !self.ask(&Event::PhaseBeforeSetup) {
            return Ok(false);
        }
        let done = setup();
        let all = self.ask(&Event::PhaseAfterSetup { ok: done.is_ok() });
        done.map(|()| all)
    }
}

impl Events {
    /// Alone: yes at once. In a job: asks the campaign, which meets the other ranks; no answer
    /// (the campaign is gone) or a garbled one is a no.
    fn ask(&mut self, event: &Event) -> bool {
        if !self.in_job {
            return true;
        }
        self.send(event);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str::<PhaseReply>(&line).is_ok_and(|r| r.go),
            _ => false,
        }
    }
}

pub fn run(args: CaseWorkerArgs) -> Result<i32, Failure> {
    let stop = stop_on_signals();
    // If the campaign dies (even by SIGKILL), stop too, so nothing keeps its target busy.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no preconditions.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    // SAFETY: as above.
    if unsafe { libc::getppid() } == 1 {
        return Ok(exit::INTERRUPTED);
    }
    // The job is the first line; later lines answer requests for a cold cache.
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("cannot read the job on standard input")?;
    let job: Job = serde_json::from_str(&line).context("the job on standard input is not valid")?;
    let mut events = Events {
        out: std::io::stdout(),
        broken: false,
        in_job: job.context.job.is_some(),
    };
    let end = run_job(&job, &args.dir, &stop, &mut events);
    let why = (end.outcome != Outcome::Ok && end.outcome != Outcome::Interrupted)
        .then(|| reason(&job, &end));
    events.send(&Event::End {
        outcome: end.outcome,
        reason: why.clone(),
        seed: end.seed,
    });
    match end.outcome {
        Outcome::Ok => Ok(exit::OK),
        Outcome::Interrupted => Ok(exit::INTERRUPTED),
        _ => Err(Failure::failed(anyhow!(why.unwrap_or_default()))),
    }
}
