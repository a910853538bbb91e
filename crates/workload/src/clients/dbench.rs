//! dbench itself as the clients workload's `tool` method: `dbench -c LOADFILE -t SECONDS -D DIR
//! N` runs the same loadfile with its own processes, timed as the task chain times its tools
//! (its own process group, real/user/sys from wait4), and its figures are read from what it
//! prints: the throughput line and the table of operations (Count, AvgLat, MaxLat). They are
//! stored under the replay's names where they mean the same (the load's `throughput`; per
//! operation `ops`, `latency_mean`, `latency_max`), so dbench's own figure for a study stands
//! beside fsbench's cheaper replay.
//!
//! dbench never reads the loadfile given: it reads the copy of the lines fsbench read
//! (`loadfile::for_dbench`), held in a sealed memfd of this process, so what it runs is what
//! was checked — every path in its client's directory as dbench reads it — and nothing of the
//! copy is left on any disk. It runs in the run's directory with `-D .`: dbench turns every
//! `client1` of a path into its client's name, the directory's part included, so a directory
//! named so (`/srv/client1`) would send its other clients elsewhere.

use super::{load_attributes, ClientsSettings, Load, Method, NAMES, THROUGHPUT};
use crate::figures::{CPU_SYS, CPU_USER, ELAPSED, LATENCY_MAX, LATENCY_MEAN, OPS};
use crate::task::timing::{self, Times, ToolEnd};
use crate::workload::Sink;
use crate::{StopFlag, WorkloadError};
use fsbench_model::{Dims, Measurement, ResultRecord};
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// Why a `tool` run cannot start on this host.
pub const NOT_INSTALLED: &str = "dbench is not installed: install it (apt-get install dbench, or scripts/install-deps.sh) or use method = \"native\", fsbench's replay of the same loadfile";

/// The shortest run whose throughput dbench reports (its first report is after one second).
pub const MIN_SECONDS: u64 = 2;

/// What dbench printed at the end of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Its first line ("dbench version 4.00").
    pub version: Option<String>,
    /// "Throughput 212.806 MB/sec": MB of 10^6 bytes, over the measured time.
    pub mb_per_s: f64,
    /// "max_latency=91.648 ms".
    pub max_latency_ms: Option<f64>,
    /// The table of operations, each by its index in [`NAMES`].
    pub ops: Vec<OpLine>,
}

/// One row of dbench's table: an operation's count, mean and maximum latency (ms).
#[derive(Debug, Clone, PartialEq)]
pub struct OpLine {
    pub kind: usize,
    pub count: u64,
    pub avg_ms: f64,
    pub max_ms: f64,
}

/// An operation of dbench's table by the name it prints: the loadfile's (dbench 5) or
/// dbench 4.0's short one.
fn kind_of(name: &str) -> Option<usize> {
    let full = match name {
        "Qpathinfo" => "QUERY_PATH_INFORMATION",
        "Qfileinfo" => "QUERY_FILE_INFORMATION",
        "Qfsinfo" => "QUERY_FS_INFORMATION",
        "Sfileinfo" => "SET_FILE_INFORMATION",
        "Find" => "FIND_FIRST",
        other => other,
    };
    NAMES.iter().position(|n| *n == full)
}

/// Reads dbench's output: its version, the table of operations and the throughput line.
pub fn parse_output(text: &str) -> Result<Report, String> {
    let version = text
        .lines()
        .find(|l| l.starts_with("dbench version"))
        .map(|l| l.split(" - ").next().unwrap_or(l).trim().to_string());
    let mut ops = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"Operation") && words.contains(&"Count") {
            in_table = true;
            continue;
        }
        if !in_table || line.trim_start().starts_with('-') {
            continue;
        }
        let [name, count, avg, max] = words[..] else {
            // The table ends at its first line that is not a row (an empty one).
            if !ops.is_empty() {
                in_table = false;
            }
            continue;
        };
        let number = |w: &str| {
            w.parse::<f64>()
                .map_err(|_| format!("dbench's table has '{w}' where a number belongs: {line}"))
        };
        // An operation this fsbench does not know (a newer dbench's) is left out.
        if let Some(kind) = kind_of(name) {
            ops.push(OpLine {
                kind,
                count: number(count)? as u64,
                avg_ms: number(avg)?,
                max_ms: number(max)?,
            });
        }
    }
    let throughput = text
        .lines()
        .find(|l| l.starts_with("Throughput "))
        .ok_or("dbench printed no Throughput line")?;
    let mb_per_s = throughput
        .split_whitespace()
        .nth(1)
        .and_then(|w| w.parse::<f64>().ok())
        .ok_or_else(|| format!("cannot read dbench's throughput in: {throughput}"))?;
    let max_latency_ms = throughput
        .split_whitespace()
        .find_map(|w| w.strip_prefix("max_latency="))
        .and_then(|w| w.parse().ok());
    if ops.is_empty() {
        return Err("dbench printed no table of operations".into());
    }
    Ok(Report {
        version,
        mb_per_s,
        max_latency_ms,
        ops,
    })
}

/// `text` in a memfd of this process, sealed (nobody, this process included, can change it
/// any more), not inherited by what this process starts; dbench opens it by its path in this
/// process's `/proc/PID/fd`.
fn sealed(text: &str) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name; the flags are memfd_create's.
    let fd = unsafe {
        libc::memfd_create(
            c"fsbench-dbench-loadfile".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made, owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    std::fs::File::from(fd.try_clone()?).write_all(text.as_bytes())?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on a descriptor this function owns.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// Runs dbench on `copy` (the load's lines as dbench reads them) in `top` for `duration_ns`
/// (whole seconds, dbench's `-t`), and hands its figures to `sink`: true when done, false
/// when stopped.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    settings: &ClientsSettings,
    load: &Load,
    copy: &str,
    top: &Path,
    duration_ns: u64,
    warmup_ns: u64,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> Result<bool, WorkloadError> {
    // dbench counts whole seconds and warms up for a fifth of them (dbench 4.0 has no flag
    // for its warm-up); its throughput is the rate it last printed, once a second, so it runs
    // two seconds at least (one second ends before its first report: 0 MB/sec).
    let seconds = ((duration_ns as f64 / 1e9).round() as u64).max(MIN_SECONDS);
    let dbench_warmup = seconds / 5;
    if seconds * 1_000_000_000 != duration_ns || dbench_warmup * 1_000_000_000 != warmup_ns {
        sink.warning(&format!(
            "dbench measures whole seconds and warms up for a fifth of them: it ran -t {seconds} ({dbench_warmup} s of warm-up first) for the {:.3} s asked, after a {:.3} s warm-up",
            duration_ns as f64 / 1e9,
            warmup_ns as f64 / 1e9
        ));
    }
    // Made untimed, outside the filesystem measured (dbench reads its loadfile first).
    let held = sealed(copy).map_err(|e| {
        WorkloadError::Tool(format!(
            "cannot hold the loadfile for dbench in memory (memfd_create: {e})"
        ))
    })?;
    let loadfile = format!("/proc/{}/fd/{}", std::process::id(), held.as_raw_fd());
    // dbench's output goes to a file outside the filesystem measured.
    let temp = std::env::temp_dir();
    let (file, output) = crate::fileio::create_unique(&temp, "fsbench-dbench", ".out", |p| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
    })
    .map_err(|e| WorkloadError::io("create a file for dbench's output in", &temp, e))?;
    drop(file);
    let clients = settings.clients.to_string();
    let t = seconds.to_string();
    let env: [(&str, &OsStr); 4] = [
        ("FSBENCH_LOADFILE", OsStr::new(&loadfile)),
        ("FSBENCH_SECONDS", OsStr::new(&t)),
        ("FSBENCH_CLIENTS", OsStr::new(&clients)),
        ("FSBENCH_OUTPUT", output.as_os_str()),
    ];
    // In `top` with -D .: no text of the directory's for dbench to rewrite (module doc).
    let ran = timing::shell(
        "exec dbench -c \"$FSBENCH_LOADFILE\" -t \"$FSBENCH_SECONDS\" -D . \"$FSBENCH_CLIENTS\" > \"$FSBENCH_OUTPUT\"",
        top,
        &env,
        stop,
    );
    drop(held);
    let text = std::fs::read_to_string(&output).unwrap_or_default();
    let _ = std::fs::remove_file(&output);
    let tail = || {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" / ")
    };
    let times = match ran {
        Err(e) => return Err(WorkloadError::Tool(format!("cannot start dbench ({e})"))),
        Ok(ToolEnd::Stopped) => return Ok(false),
        Ok(ToolEnd::Failed { status, stderr, .. }) => {
            return Err(WorkloadError::Tool(format!(
                "dbench {status}: {}",
                if stderr.is_empty() { tail() } else { stderr }
            )))
        }
        Ok(ToolEnd::Ok(times)) => times,
    };
    let report = parse_output(&text)
        .map_err(|e| WorkloadError::Tool(format!("{e} (its last lines: {})", tail())))?;
    let threads = Some(settings.clients);
    let mut attributes = load_attributes(load, Method::Tool);
    attributes.insert("timelimit_s".into(), seconds.into());
    attributes.insert("warmup_s".into(), dbench_warmup.into());
    if let Some(version) = &report.version {
        attributes.insert("tool".into(), version.clone().into());
    }
    let measurements = load_figures(&report, &times);
    sink.status(&format!("dbench: {:.2} MB/sec", report.mb_per_s));
    let mut n = 1;
    sink.record(
        ResultRecord {
            dims: Dims {
                threads,
                ..Dims::default()
            },
            attributes,
            measurements,
            ..ResultRecord::default()
        },
        n,
        None,
    );
    for op in report.ops.iter().filter(|o| o.count > 0) {
        n += 1;
        sink.record(
            ResultRecord {
                dims: Dims {
                    operation: Some(NAMES[op.kind].to_string()),
                    threads,
                    ..Dims::default()
                },
                measurements: op_figures(op),
                ..ResultRecord::default()
            },
            n,
            None,
        );
    }
    Ok(true)
}

/// The figures of the whole load from dbench's report and its process's times.
fn load_figures(report: &Report, times: &Times) -> Vec<Measurement> {
    let mut measurements = vec![
        THROUGHPUT.at(report.mb_per_s * 1e6),
        OPS.at(report.ops.iter().map(|o| o.count).sum::<u64>() as f64),
    ];
    if let Some(max) = report.max_latency_ms {
        measurements.push(LATENCY_MAX.at(max * 1e6));
    }
    measurements.extend([
        ELAPSED.at(times.real_ns as f64),
        CPU_USER.at(times.user_ns as f64),
        CPU_SYS.at(times.sys_ns as f64),
    ]);
    measurements
}

/// The figures of one operation of dbench's table.
fn op_figures(op: &OpLine) -> Vec<Measurement> {
    vec![
        OPS.at(op.count as f64),
        LATENCY_MEAN.at(op.avg_ms * 1e6),
        LATENCY_MAX.at(op.max_ms * 1e6),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Collect, Context, Workload};
    use fsbench_measure::units::TimeSpan;
    use fsbench_model::Outcome;

    /// dbench 4.00's output on this host (`dbench -c client.txt -t 3 2`), abridged.
    const DBENCH_4: &str = "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004

Running for 3 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 0 secs
failed to create barrier semaphore 
2 of 2 processes prepared for launch   0 sec
releasing clients
   2     21256   264.82 MB/sec  execute   1 sec  latency 91.648 ms
   2  cleanup   3 sec

 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 NTCreateX      19959     0.026    16.246
 Close          14702     0.002     6.143
 Qpathinfo      17959     0.010    11.875
 Find            6934     0.036    16.109
 WriteX         10584     0.018    26.828
 ReadX          31065     0.006     8.756
 Flush           1402     2.318    91.643

Throughput 212.806 MB/sec  2 clients  2 procs  max_latency=91.648 ms
";

    #[test]
    fn dbench_s_output_is_read_into_the_replay_s_names() {
        let r = parse_output(DBENCH_4).unwrap();
        assert_eq!(r.version.as_deref(), Some("dbench version 4.00"));
        assert_eq!(r.mb_per_s, 212.806);
        assert_eq!(r.max_latency_ms, Some(91.648));
        let names: Vec<&str> = r.ops.iter().map(|o| NAMES[o.kind]).collect();
        assert_eq!(
            names,
            [
                "NTCreateX",
                "Close",
                "QUERY_PATH_INFORMATION",
                "FIND_FIRST",
                "WriteX",
                "ReadX",
                "Flush"
            ]
        );
        assert_eq!(
            r.ops[4],
            OpLine {
                kind: 12,
                count: 10584,
                avg_ms: 0.018,
                max_ms: 26.828
            }
        );
        assert!(parse_output("dbench version 4.00\nno table\n").is_err());
    }

    /// Every figure stored from dbench's output has a definition, with the rule a job's ranks
    /// merge it by.
    #[test]
    fn dbench_s_figures_are_all_defined() {
        let r = parse_output(DBENCH_4).unwrap();
        let times = Times {
            real_ns: 3_000_000_000,
            user_ns: 1,
            sys_ns: 1,
        };
        let figures = load_figures(&r, &times)
            .into_iter()
            .chain(r.ops.iter().flat_map(op_figures));
        for m in figures {
            assert!(
                crate::figures::definition(&m.metric).is_some(),
                "{} has no definition in figures::DEFINED",
                m.metric
            );
        }
    }

    /// The tool method for real: dbench on the built-in load for two seconds, its figures
    /// stored under the replay's names, nothing left behind.
    #[test]
    fn dbench_runs_the_load_and_its_figures_are_stored() {
        if !crate::program::installed("dbench") {
            panic!("{NOT_INSTALLED}");
        }
        let dir = tempfile::tempdir().unwrap();
        let settings = ClientsSettings {
            clients: 2,
            duration: TimeSpan::from_ns(2_000_000_000),
            warmup: TimeSpan::from_ns(0),
            method: Method::Tool,
            ..ClientsSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let overall = &sink.records[0];
        assert_eq!(overall.dims.threads, Some(2));
        assert_eq!(overall.attributes["method"], "tool");
        assert_eq!(overall.attributes["loadfile"], "built-in");
        assert!(overall.main().unwrap().value > 0.0, "{overall:?}");
        assert!(overall.measurement("elapsed").unwrap().value >= 2e9);
        let per_op: Vec<&str> = sink.records[1..]
            .iter()
            .filter_map(|r| r.dims.operation.as_deref())
            .collect();
        assert!(
            per_op.contains(&"ReadX") && per_op.contains(&"WriteX"),
            "{per_op:?}"
        );
        assert!(sink.warnings.is_empty(), "{:?}", sink.warnings);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "left behind"
        );
    }
}
