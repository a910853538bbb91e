//! What the io workload reports, declared once: one result per direction (reads, writes) with
//! its dimensions (pattern, direction, file and block size, threads, engine, queue depth) and
//! figures — IOPS (the main one), bandwidth, completion latency (clat, issue to completion: the
//! result's histogram) and submission latency (slat: its histogram in the attribute
//! `slat_bins`) percentiles, CPU time per operation.

use super::settings::{Engine, IoPlan};
use super::worker::Worker;
use crate::figures::{self, BYTES, CPU_SYS, CPU_USER, ELAPSED, OPS};
use fsbench_measure::histogram::Histogram;
use fsbench_measure::CpuTimes;
use fsbench_model::{Dims, Direction, Merge, MetricDef, ResultRecord, Stat, Unit};
use serde_json::json;

/// Operations per second over all threads, from the phase's start to the last completion
/// (fio's IOPS): the main figure.
pub const OPS_RATE: MetricDef = figures::OPS_RATE.main();
pub use figures::THROUGHPUT;
/// User and system CPU time of the process over the phase, per operation of either direction.
pub const CPU_PER_OP: MetricDef =
    MetricDef::new("cpu_per_op", Unit::Nanos, Direction::Lower).merged(Merge::PerOp);
pub const SLAT_MIN: MetricDef = MetricDef::new("slat_min", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::Min));
pub const SLAT_MEAN: MetricDef = MetricDef::new("slat_mean", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::Mean));
pub const SLAT_P50: MetricDef = MetricDef::new("slat_p50", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P50));
pub const SLAT_P90: MetricDef = MetricDef::new("slat_p90", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P90));
pub const SLAT_P99: MetricDef = MetricDef::new("slat_p99", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P99));
pub const SLAT_P99_9: MetricDef = MetricDef::new("slat_p99_9", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::P99_9));
pub const SLAT_MAX: MetricDef = MetricDef::new("slat_max", Unit::Nanos, Direction::Lower)
    .merged(Merge::Distribution(Stat::Max));

/// The figures a one-run table shows.
pub const TABLE_COLUMNS: &[&str] = &[
    OPS_RATE.name,
    THROUGHPUT.name,
    figures::LATENCY_MEAN.name,
    figures::LATENCY_P50.name,
    figures::LATENCY_P99.name,
    figures::LATENCY_P99_9.name,
    SLAT_MEAN.name,
    CPU_PER_OP.name,
];

/// The submission latency's figures, in [`figures::distribution`]'s order.
const SLAT: [MetricDef; 7] = [
    SLAT_MIN, SLAT_MEAN, SLAT_P50, SLAT_P90, SLAT_P99, SLAT_P99_9, SLAT_MAX,
];

/// One result per direction the pattern has, over every thread. `partial`: an operation
/// failed and these are the figures up to it.
pub fn records(
    plan: &IoPlan,
    workers: &[Worker],
    cpu: CpuTimes,
    cache: &str,
    partial: bool,
    placement: crate::placement::Placement,
) -> Vec<ResultRecord> {
    let clock = fsbench_measure::clock::Clock::get();
    let start = workers.iter().map(|w| w.stats.started).min().unwrap_or(0);
    let end = workers.iter().map(|w| w.stats.ended).max().unwrap_or(start);
    let elapsed_ns = clock.ns(end.saturating_sub(start)).max(1);
    let seconds = elapsed_ns as f64 / 1e9;
    let all_ops: u64 = workers
        .iter()
        .map(|w| w.stats.dir[0].ops + w.stats.dir[1].ops)
        .sum();
    let (submissions, in_flight_sum) = workers.iter().fold((0, 0), |(n, sum), w| {
        (n + w.stats.submissions, sum + w.stats.in_flight_sum)
    });
    let in_flight_max = workers
        .iter()
        .map(|w| w.stats.in_flight_max)
        .max()
        .unwrap_or(0);
    // The CPU policy the threads ran under, as the kernel reported it (one name, or each one).
    let mut policies: Vec<&str> = workers.iter().map(|w| w.stats.cpu_sched).collect();
    policies.sort_unstable();
    policies.dedup();
    let cpu_sched = policies.join("+");
    let directions = [(false, plan.rw.reads()), (true, plan.rw.writes())];
    directions
        .into_iter()
        .filter(|&(_, has)| has)
        .map(|(write, _)| {
            let d = usize::from(write);
            let mut clat = Histogram::new();
            let mut submit = Histogram::new();
            let (mut ops, mut bytes) = (0u64, 0u64);
            for w in workers {
                clat.merge(&w.stats.dir[d].clat);
                submit.merge(&w.stats.dir[d].slat);
                ops += w.stats.dir[d].ops;
                bytes += w.stats.dir[d].bytes;
            }
            let mut measurements = vec![
                OPS_RATE.at(ops as f64 / seconds),
                THROUGHPUT.at(bytes as f64 / seconds),
            ];
            measurements.extend(figures::latency(&clat.summary()));
            if plan.engine == Engine::IoUring {
                measurements.extend(figures::distribution(&SLAT, &submit.summary()));
            }
            measurements.extend([
                CPU_PER_OP.at((cpu.user_ns + cpu.sys_ns) as f64 / all_ops.max(1) as f64),
                OPS.at(ops as f64),
                BYTES.at(bytes as f64),
                ELAPSED.at(elapsed_ns as f64),
                CPU_USER.at(cpu.user_ns as f64),
                CPU_SYS.at(cpu.sys_ns as f64),
            ]);
            let mut attributes = json!({
                "direct_io": plan.direct,
                "cache_state": cache,
                "layout": plan.layout,
                "in_flight_max": in_flight_max,
                "in_flight_mean": if submissions > 0 { in_flight_sum as f64 / submissions as f64 } else { 0.0 },
                "time_based": plan.ops_per_thread.is_none(),
                "cpu_sched": cpu_sched,
                // Where the direction's buffers sat past a page (`crate::placement`): io_uring's
                // slots take the reads' place when the pattern reads at all.
                "buffer_offset_bytes": match (write, plan.engine) {
                    (false, _) => placement.read,
                    (true, Engine::IoUring) if plan.rw.reads() => placement.read,
                    (true, _) => placement.write,
                },
            });
            if plan.engine == Engine::IoUring {
                attributes["iodepth_batch_submit"] = json!(plan.batch_submit);
                attributes["iodepth_batch_complete"] = json!(plan.batch_complete);
                attributes["fixedbufs"] = json!(plan.fixedbufs);
                attributes["registerfiles"] = json!(plan.registerfiles);
                attributes["hipri"] = json!(plan.hipri);
                attributes["defer_taskrun"] = json!(workers.iter().all(|w| w.stats.deferred));
                // The submission latency's own histogram, so ranks' merge exactly (as the
                // completion latency's, the result's histogram, do).
                attributes["slat_bins"] = json!(submit.bins());
            }
            if let Some(rate) = plan.rate_iops_per_thread {
                attributes["rate_iops_per_thread"] = json!(rate);
            }
            if let Some(rate) = plan.rate_bytes_per_thread {
                attributes["rate_bytes_per_thread"] = json!(rate);
            }
            if plan.read_percent != 0 && plan.read_percent != 100 {
                attributes["rwmixread"] = json!(plan.read_percent);
            }
            if partial {
                attributes["partial"] = json!(true);
            } else if plan.verify {
                // Every file was read back after the phase and found as written (`verify`).
                attributes["verified"] = json!(true);
            }
            ResultRecord {
                dims: Dims {
                    operation: Some(if write { "write" } else { "read" }.to_string()),
                    ..phase_dims(plan)
                },
                attributes: match attributes {
                    serde_json::Value::Object(map) => map,
                    _ => unreachable!("a json! object"),
                },
                measurements,
                latency_bins: clat.bins(),
            }
        })
        .collect()
}

/// The dimensions of the timed phase: what every result of it shares (each adds its direction).
pub fn phase_dims(plan: &IoPlan) -> Dims {
    Dims {
        phase: Some(plan.rw.name().to_string()),
        file_size_bytes: Some(plan.size),
        record_size_bytes: Some(plan.bs),
        threads: Some(plan.threads),
        engine: Some(plan.engine.name().to_string()),
        iodepth: Some(u64::from(plan.iodepth)),
        ..Dims::default()
    }
}

/// "randread read: 123456 IOPS, p99 250 µs" for the progress line.
pub fn status_line(record: &ResultRecord) -> String {
    let value = |m: &str| record.measurement(m).map_or(0.0, |m| m.value);
    format!(
        "{} {}: {:.0} IOPS, p99 {:.1} µs",
        record.dims.phase.as_deref().unwrap_or(""),
        record.dims.operation.as_deref().unwrap_or(""),
        value(OPS_RATE.name),
        value(figures::LATENCY_P99.name) / 1e3
    )
}
