//! `fsbench trace show|stats`: what a recorded trace holds — its calls one by one, or counted by
//! operation with bytes, threads, files and the tree the application found.

use crate::cli::{TraceArgs, TraceCommand};
use crate::exit::Failure;
use crate::out::say;
use fsbench_measure::units::{human_bytes, human_duration};
// Names in a trace are the recorded application's: a control character in one is escaped,
// never sent to the terminal.
use fsbench_report::text::printable;
use fsbench_trace::stats::Stats;
use fsbench_trace::{Event, NodeKind, Op, Trace};

pub fn run(args: TraceArgs) -> Result<i32, Failure> {
    match args.command {
        TraceCommand::Show(show) => {
            let trace = Trace::read(&show.trace).map_err(Failure::usage)?;
            if show.json {
                json_lines(&trace, show.limit)?;
            } else {
                text(&trace, show.limit)?;
            }
        }
        TraceCommand::Stats(stats) => {
            let trace = Trace::read(&stats.trace).map_err(Failure::usage)?;
            let figures = Stats::of(&trace);
            if stats.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&figures).expect("stats serialise")
                )?;
            } else {
                summary(&trace, &figures)?;
            }
        }
    }
    Ok(0)
}

fn header(trace: &Trace) -> Result<(), Failure> {
    let h = &trace.header;
    let command: Vec<_> = h
        .command
        .iter()
        .map(|a| printable(a).into_owned())
        .collect();
    say!("command:   {}", command.join(" "))?;
    if !h.anonymised {
        say!("root:      {}", printable(&h.root))?;
        say!(
            "host:      {} (kernel {})",
            printable(&h.host),
            printable(&h.kernel)
        )?;
    } else {
        say!("names:     anonymised (kernel {})", printable(&h.kernel))?;
    }
    say!(
        "recorded:  by {}, {} long",
        h.mechanism,
        human_duration(trace.end.duration_ns)
    )?;
    Ok(())
}

fn text(trace: &Trace, limit: Option<usize>) -> Result<(), Failure> {
    header(trace)?;
    say!("tree:      {} entries", trace.tree.len())?;
    for node in &trace.tree {
        let what = match &node.kind {
            NodeKind::Dir => "dir".to_string(),
            NodeKind::File { size } => format!("file {}", human_bytes(*size)),
            NodeKind::Symlink { target } => format!("symlink -> {}", printable(target)),
            NodeKind::Other => "other (not recreated)".to_string(),
        };
        say!("  {:04o} {:<40} {what}", node.mode, printable(&node.path))?;
    }
    say!("events:    {}", trace.events.len())?;
    say!(
        "  {:>12}  {:>13}  {:>10}  {:>12}  call",
        "start ms",
        "pid/tid",
        "took µs",
        "returned"
    )?;
    for event in trace.events.iter().take(limit.unwrap_or(usize::MAX)) {
        say!(
            "  {:>12.3}  {:>13}  {:>10.1}  {:>12}  {}",
            event.start_ns as f64 / 1e6,
            format!("{}/{}", event.pid, event.tid),
            event.dur_ns as f64 / 1e3,
            returned(event),
            call(&event.op)
        )?;
    }
    if let Some(limit) = limit.filter(|&l| l < trace.events.len()) {
        say!(
            "  … {} more (without --limit: all)",
            trace.events.len() - limit
        )?;
    }
    Ok(())
}

/// "4096", or "ENOENT" for a failed call.
fn returned(event: &Event) -> String {
    // A return no errno fits (a damaged or hand-made trace) is shown as the number it is.
    match i32::try_from(event.ret.unsigned_abs()) {
        Ok(errno) if event.ret < 0 => {
            let name = std::io::Error::from_raw_os_error(errno).kind();
            format!("-{errno} ({name:?})")
        }
        _ => event.ret.to_string(),
    }
}

/// `pread fd=3 len=4096 off=0`: the operation's name and arguments, as the trace format spells
/// them.
fn call(op: &Op) -> String {
    let value = serde_json::to_value(op).expect("an op serialises");
    let mut out = op.name().to_string();
    if let serde_json::Value::Object(fields) = value {
        for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "op") {
            let shown = match value {
                serde_json::Value::String(s) => format!("{:?}", printable(s)),
                other => other.to_string(),
            };
            out.push_str(&format!(" {key}={shown}"));
        }
    }
    out
}

fn json_lines(trace: &Trace, limit: Option<usize>) -> Result<(), Failure> {
    say!("{}", serde_json::json!({ "header": trace.header }))?;
    for node in &trace.tree {
        say!("{}", serde_json::json!({ "node": node }))?;
    }
    for event in trace.events.iter().take(limit.unwrap_or(usize::MAX)) {
        say!("{}", serde_json::json!({ "event": event }))?;
    }
    say!("{}", serde_json::json!({ "end": trace.end }))?;
    Ok(())
}

fn summary(trace: &Trace, s: &Stats) -> Result<(), Failure> {
    header(trace)?;
    say!(
        "calls:     {} by {} threads in {} processes, on {} files",
        s.events,
        s.threads,
        s.processes,
        s.files
    )?;
    say!(
        "bytes:     {} read, {} written",
        human_bytes(s.bytes_read),
        human_bytes(s.bytes_written)
    )?;
    say!(
        "tree:      {} files ({}) in {} directories, found when the recording began",
        s.tree_files,
        human_bytes(s.tree_bytes),
        s.tree_dirs
    )?;
    say!(
        "left out:  {} calls outside the root; {} lost",
        s.outside_events,
        s.lost_events
    )?;
    if !s.unsupported.is_empty() {
        let seen: Vec<_> = s
            .unsupported
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        say!("not replayable: {}", seen.join(", "))?;
    }
    say!("")?;
    say!(
        "{:<16} {:>10} {:>8} {:>12} {:>12}",
        "operation",
        "calls",
        "errors",
        "time (ms)",
        "mean (µs)"
    )?;
    for (name, op) in &s.by_op {
        say!(
            "{:<16} {:>10} {:>8} {:>12.3} {:>12.2}",
            name,
            op.calls,
            op.errors,
            op.time_ns as f64 / 1e6,
            op.time_ns as f64 / 1e3 / op.calls.max(1) as f64
        )?;
    }
    Ok(())
}
