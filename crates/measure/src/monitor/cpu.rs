//! The CPU monitor: /proc/stat's user, system, irq, iowait and steal time of all CPUs together
//! and of each, as shares of its time. In the assessment: the CPU steal while the phases ran.

use super::{delta, HostMonitor, Out, Readings, SampleSeries, Tick};
use fsbench_model::series::{metric, source, subject, Assessment, Disturbance};
use fsbench_model::Unit;

/// A CPU line of /proc/stat, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// User time, nice included.
    pub user: u64,
    pub system: u64,
    /// Hard and soft interrupts.
    pub irq: u64,
    pub iowait: u64,
    pub steal: u64,
    /// Every kind, idle and guests included.
    pub total: u64,
}

impl From<[u64; 6]> for CpuTicks {
    /// From [user, system, irq, iowait, steal, total].
    fn from([user, system, irq, iowait, steal, total]: [u64; 6]) -> Self {
        CpuTicks {
            user,
            system,
            irq,
            iowait,
            steal,
            total,
        }
    }
}

/// A kind of CPU time, read from a line's ticks.
type Share = fn(&CpuTicks) -> u64;

/// The shares a CPU's series show, with their metric names.
const SHARES: [(&str, Share); 5] = [
    (metric::USER, |c| c.user),
    (metric::SYSTEM, |c| c.system),
    (metric::IRQ, |c| c.irq),
    (metric::IOWAIT, |c| c.iowait),
    (metric::STEAL, |c| c.steal),
];

/// The CPU lines of /proc/stat, named once: `all` first, then the CPUs in their order.
#[derive(Debug, Clone, Default)]
pub(super) struct Cpus {
    pub names: Vec<String>,
}

impl HostMonitor for Cpus {
    /// Per CPU line, in the order of the first reading's names (None: that CPU's line was
    /// missing from this reading).
    type Reading = Option<Vec<Option<CpuTicks>>>;

    fn read(&mut self, tick: &mut Tick<'_>) -> Self::Reading {
        tick.file("/proc/stat", "no CPU statistics")
            .map(|t| self.ticks(&t))
    }

    fn series(&self, readings: &Readings<'_, Self::Reading>, out: &mut Out) {
        for (c, name) in self.names.iter().enumerate() {
            for (metric, field) in SHARES {
                let share = readings.points(|a, b, _| {
                    let (a, b) = (a.as_ref()?.get(c)?.as_ref()?, b.as_ref()?.get(c)?.as_ref()?);
                    let total = delta(a.total, b.total);
                    (total > 0.0).then(|| delta(field(a), field(b)) / total * 100.0)
                });
                out.push(source::CPU, "", name, metric, Unit::Percent, share);
            }
        }
    }

    /// The steal of all CPUs while the phases ran, weighted by each interval's length.
    fn assess(
        &self,
        sample: &SampleSeries<'_>,
        into: &mut Assessment,
        _warnings: &mut Vec<String>,
    ) {
        into.steal_percent = sample
            .find(source::CPU, None, subject::ALL_CPUS, metric::STEAL)
            .map(|s| {
                let inside: Vec<_> = s
                    .points
                    .iter()
                    .filter(|p| sample.during(p.t_ns()))
                    .collect();
                let time: u64 = inside.iter().map(|p| p.dt_ns()).sum::<u64>().max(1);
                inside
                    .iter()
                    .map(|p| p.value() * p.dt_ns() as f64)
                    .sum::<f64>()
                    / time as f64
            });
    }

    fn explain(&self, disturbance: &Disturbance, _assessment: &Assessment) -> Option<String> {
        let Disturbance::Steal { percent } = disturbance else {
            return None;
        };
        Some(format!(
            "CPU steal took {percent:.1} % of the CPUs' time while the phases ran: the hypervisor gave this machine's CPUs to others; the figures may be low"
        ))
    }
}

impl Cpus {
    /// Each named CPU's ticks in this text of /proc/stat (the names taken from the first).
    pub(super) fn ticks(&mut self, text: &str) -> Vec<Option<CpuTicks>> {
        let lines = parse_stat(text);
        if self.names.is_empty() {
            self.names = lines.iter().map(|(name, _)| name.to_string()).collect();
            self.names.sort_by_key(|n| {
                (
                    n != subject::ALL_CPUS,
                    n.trim_start_matches("cpu").parse::<u32>().unwrap_or(0),
                )
            });
        }
        self.names
            .iter()
            .map(|name| lines.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
            .collect()
    }
}

/// /proc/stat's CPU lines: `all` for `cpu`, `cpuN` for each.
pub(super) fn parse_stat(text: &str) -> Vec<(&str, CpuTicks)> {
    text.lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let name = parts.next()?;
            let v: Vec<u64> = parts.map(|p| p.parse().unwrap_or(0)).collect();
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            // user nice system idle iowait irq softirq steal (guest and guest_nice are in user
            // and nice already).
            let total: u64 = (0..8).map(at).sum();
            let name = if name == "cpu" {
                subject::ALL_CPUS
            } else {
                name
            };
            Some((
                name,
                CpuTicks {
                    user: at(0) + at(1),
                    system: at(2),
                    irq: at(5) + at(6),
                    iowait: at(4),
                    steal: at(7),
                    total,
                },
            ))
        })
        .collect()
}
