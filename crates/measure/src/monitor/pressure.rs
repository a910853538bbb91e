//! The pressure monitor: /proc/pressure's io, memory and cpu stalls (some and full), as shares
//! of each interval.

use super::{delta, HostMonitor, Out, Readings, Tick};
use fsbench_model::series::{metric, source};
use fsbench_model::Unit;

const PRESSURE: [&str; 3] = ["io", "memory", "cpu"];

/// Per resource (io, memory, cpu): the (some, full) stall µs totals.
pub(super) struct Pressure;

impl HostMonitor for Pressure {
    type Reading = [Option<(u64, Option<u64>)>; 3];

    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading {
        let mut pressure = [None; 3];
        for (slot, resource) in pressure.iter_mut().zip(PRESSURE) {
            *slot = tick
                .file(
                    &format!("/proc/pressure/{resource}"),
                    "pressure stall information is off in this kernel",
                )
                .and_then(|t| parse_pressure(&t));
        }
        pressure
    }

    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out) {
        for (r, resource) in PRESSURE.iter().enumerate() {
            let stalled = |full: bool| {
                readings.points(move |a, b, dt| {
                    let (a, b) = (a[r]?, b[r]?);
                    let (x, y) = if full { (a.1?, b.1?) } else { (a.0, b.0) };
                    (dt > 0.0).then(|| (delta(x, y) * 1e3 / dt * 100.0).min(100.0))
                })
            };
            out.push(
                source::PRESSURE,
                "",
                resource,
                metric::SOME,
                Unit::Percent,
                stalled(false),
            );
            out.push(
                source::PRESSURE,
                "",
                resource,
                metric::FULL,
                Unit::Percent,
                stalled(true),
            );
        }
    }
}

/// /proc/pressure/*: the `some` and `full` totals (µs); a kernel before 5.13 has no `full` for
/// cpu.
pub(super) fn parse_pressure(text: &str) -> Option<(u64, Option<u64>)> {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))?
            .split_whitespace()
            .find_map(|f| f.strip_prefix("total="))?
            .parse::<u64>()
            .ok()
    };
    Some((total("some")?, total("full")))
}
