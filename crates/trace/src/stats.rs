//! What a trace holds (`fsbench trace stats`): calls by operation, bytes read and written,
//! threads, processes, files, the initial tree and how long the application ran.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::format::Trace;
use crate::tree::NodeKind;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpStats {
    pub calls: u64,
    /// Calls that returned an error.
    pub errors: u64,
    /// The calls' summed duration as recorded, in nanoseconds.
    pub time_ns: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub events: u64,
    pub duration_ns: u64,
    pub processes: u64,
    pub threads: u64,
    /// Distinct root-relative paths the calls named or opened.
    pub files: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub by_op: BTreeMap<String, OpStats>,
    pub tree_files: u64,
    pub tree_dirs: u64,
    pub tree_bytes: u64,
    pub outside_events: u64,
    pub lost_events: u64,
    pub unsupported: BTreeMap<String, u64>,
}

impl Stats {
    pub fn of(trace: &Trace) -> Stats {
        let mut stats = Stats {
            events: trace.events.len() as u64,
            duration_ns: trace.end.duration_ns,
            outside_events: trace.end.outside_events,
            lost_events: trace.end.lost_events,
            unsupported: trace.end.unsupported.clone(),
            ..Stats::default()
        };
        let mut processes = BTreeSet::new();
        let mut threads = BTreeSet::new();
        let mut files = BTreeSet::new();
        for event in &trace.events {
            processes.insert(event.pid);
            threads.insert(event.tid);
            for path in event.op.paths() {
                files.insert(path);
            }
            let (read, written) = event.op.bytes(event.ret);
            stats.bytes_read = stats.bytes_read.saturating_add(read);
            stats.bytes_written = stats.bytes_written.saturating_add(written);
            let op = stats.by_op.entry(event.op.name().to_owned()).or_default();
            op.calls += 1;
            op.errors += u64::from(event.ret < 0);
            op.time_ns = op.time_ns.saturating_add(event.dur_ns);
        }
        stats.processes = processes.len() as u64;
        stats.threads = threads.len() as u64;
        stats.files = files.len() as u64;
        for node in &trace.tree {
            match node.kind {
                NodeKind::Dir => stats.tree_dirs += 1,
                NodeKind::File { size } => {
                    stats.tree_files += 1;
                    stats.tree_bytes = stats.tree_bytes.saturating_add(size);
                }
                _ => {}
            }
        }
        stats
    }
}
