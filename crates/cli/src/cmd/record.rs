//! `fsbench record`: a command's (or a running process's) file-system calls recorded into a
//! trace by the eBPF recorder (crate fsbench-record), with a summary of what was captured on
//! standard error; the recorded command's exit status is fsbench's.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::RecordArgs;
use crate::exit::{self, Failure};
use crate::out::note;
use anyhow::anyhow;
use fsbench_measure::units::human_bytes;
use fsbench_record::{record, Options, RecordError, Target};
use fsbench_report::terminal::{printable, printable_path};

pub fn run(args: RecordArgs) -> Result<i32, Failure> {
    let buffer =
        fsbench_record::parse_size(&args.buffer).map_err(|e| Failure::usage(anyhow!(e)))?;
    let target = match args.pid {
        Some(pid) => Target::Pid(pid),
        None if args.command.is_empty() => {
            return Err(Failure::usage(anyhow!(
                "nothing to record: give a command after `--`, or --pid PID"
            )))
        }
        None => Target::Command(args.command),
    };
    // Ctrl-C ends a --pid recording (the trace is written); a recorded command gets the signal
    // itself, from the terminal, and the recording ends when it does.
    let stop = Arc::new(AtomicBool::new(false));
    crate::frontend::on_stop_signals(stop.clone());
    let options = Options {
        root: args.root,
        target,
        anonymise: args.anonymise,
        buffer,
        output: args.output.clone(),
        stop,
        classic_sched: std::env::var_os(fsbench_record::CLASSIC_SCHED_ENV).is_some(),
    };
    let recorded = match record(&options) {
        Ok(recorded) => recorded,
        Err(e) => {
            if let Some(code) = e.exit_code() {
                note!("the recorded command exited with status {code}");
            }
            let code = match e {
                RecordError::NotBuilt | RecordError::NeedsRoot | RecordError::Kernel(_) => {
                    exit::UNSUPPORTED
                }
                RecordError::Root { .. }
                | RecordError::NoProcess(_)
                | RecordError::Output { .. } => exit::USAGE,
                _ => exit::FAILED,
            };
            return Err(Failure {
                code,
                error: e.into(),
                silent: false,
            });
        }
    };
    let s = &recorded.stats;
    note!(
        "recorded {}: {} events, {} processes, {} threads, {} read, {} written, {} files; lost 0, outside the root {}",
        printable_path(&args.output),
        s.events,
        s.processes,
        s.threads,
        human_bytes(s.bytes_read),
        human_bytes(s.bytes_written),
        s.files,
        s.outside_events
    );
    if !s.unsupported.is_empty() {
        let list: Vec<String> = s
            .unsupported
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        note!("seen but not replayable (unsupported): {}", list.join(", "));
    }
    for mount in &recorded.mount_points {
        note!(
            "not recorded: {} is another filesystem under the root (its initial tree is not in the trace)",
            printable(mount)
        );
    }
    if !recorded.still_running.is_empty() {
        let pids: Vec<String> = recorded.still_running.iter().map(u32::to_string).collect();
        note!(
            "not recorded: {} processes of the recorded tree were still running when the recording ended (pids {}): their calls from then on are not in the trace",
            pids.len(),
            pids.join(", ")
        );
    }
    match recorded.exit_code {
        Some(code) => {
            note!("the recorded command exited with status {code}");
            Ok(code)
        }
        None => Ok(exit::OK),
    }
}
