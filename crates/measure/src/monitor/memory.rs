//! The memory monitor: /proc/meminfo's dirty, writeback, cached and free memory (gauges) and
//! /proc/vmstat's pages dirtied and written and reclaim's scans and steals (counters).

use super::{delta, parse_pairs, HostMonitor, Out, Readings, Tick};
use fsbench_model::series::{metric, source, subject};
use fsbench_model::Unit;
use std::collections::BTreeMap;

/// The /proc/meminfo values the memory series show, with their metric names.
const MEMINFO: [(&str, &str); 4] = [
    ("Dirty", metric::DIRTY),
    ("Writeback", metric::WRITEBACK),
    ("Cached", metric::CACHED),
    ("MemFree", metric::FREE),
];

/// /proc/meminfo's [`MEMINFO`] (bytes), where present.
pub(super) struct Memory;

impl HostMonitor for Memory {
    type Reading = Option<[Option<u64>; MEMINFO.len()]>;

    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading {
        tick.file("/proc/meminfo", "no memory statistics").map(|t| {
            let all = parse_meminfo(&t);
            MEMINFO.map(|(key, _)| all.get(key).copied())
        })
    }

    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out) {
        for (k, (_, metric)) in MEMINFO.iter().enumerate() {
            let gauge = readings.points(|_, b, _| Some(b.as_ref()?[k]? as f64));
            out.push(
                source::MEMORY,
                "",
                subject::HOST,
                metric,
                Unit::Bytes,
                gauge,
            );
        }
    }
}

/// The /proc/vmstat counters the vm series sum.
const VMSTAT: [&str; 6] = [
    "nr_dirtied",
    "nr_written",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
];

/// /proc/vmstat's [`VMSTAT`], where present.
pub(super) struct Vm;

impl HostMonitor for Vm {
    type Reading = Option<[Option<u64>; VMSTAT.len()]>;

    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading {
        tick.file("/proc/vmstat", "no virtual memory statistics")
            .map(|t| {
                let all = parse_pairs(&t);
                VMSTAT.map(|key| all.get(key).copied())
            })
    }

    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out) {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as f64;
        let vm = |keys: &'static [&'static str], scale: f64| {
            readings.points(move |a, b, _| {
                let (a, b) = (a.as_ref()?, b.as_ref()?);
                let mut sum = 0.0;
                let mut any = false;
                for key in keys {
                    let k = VMSTAT.iter().position(|v| v == key).expect("a VMSTAT key");
                    if let (Some(x), Some(y)) = (a[k], b[k]) {
                        sum += delta(x, y);
                        any = true;
                    }
                }
                any.then_some(sum * scale)
            })
        };
        let mut push = |metric: &str, unit: Unit, points| {
            out.push(source::VM, "", subject::HOST, metric, unit, points)
        };
        push(metric::DIRTIED, Unit::Bytes, vm(&["nr_dirtied"], page));
        push(metric::WRITTEN, Unit::Bytes, vm(&["nr_written"], page));
        push(
            metric::RECLAIM_SCANNED,
            Unit::Count,
            vm(&["pgscan_kswapd", "pgscan_direct"], 1.0),
        );
        push(
            metric::RECLAIM_SCANNED_DIRECT,
            Unit::Count,
            vm(&["pgscan_direct"], 1.0),
        );
        push(
            metric::RECLAIM_STOLEN,
            Unit::Count,
            vm(&["pgsteal_kswapd", "pgsteal_direct"], 1.0),
        );
    }
}

/// /proc/meminfo in bytes (`Dirty: 12 kB` -> 12288).
pub(super) fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(':')?;
            let mut parts = rest.split_whitespace();
            let value: u64 = parts.next()?.parse().ok()?;
            let factor = if parts.next() == Some("kB") { 1024 } else { 1 };
            Some((name.to_string(), value * factor))
        })
        .collect()
}
