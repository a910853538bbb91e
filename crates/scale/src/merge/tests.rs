//! The merge rules on records with known answers, and the exactness of the histogram merge.

use super::*;
use fsbench_model::Dims;
use proptest::prelude::*;

const THROUGHPUT: MetricDef =
    MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher).main();
const OPS_RATE: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher);
const BYTES: MetricDef = MetricDef::new("bytes", Unit::Bytes, Direction::None);
const OPS: MetricDef = MetricDef::new("ops", Unit::Count, Direction::None);
const ELAPSED: MetricDef = MetricDef::new("elapsed", Unit::Nanos, Direction::None);
const CPU_SYS: MetricDef = MetricDef::new("cpu_sys", Unit::Nanos, Direction::None);
const TPS: MetricDef = MetricDef::new("tps", Unit::OpsPerSec, Direction::Higher).main();
const CPU_PERCENT: MetricDef = MetricDef::new("cpu_sys_percent", Unit::Percent, Direction::None);
const L_MIN: MetricDef = MetricDef::new("latency_min", Unit::Nanos, Direction::Lower);
const L_MEAN: MetricDef = MetricDef::new("latency_mean", Unit::Nanos, Direction::Lower);
const L_P50: MetricDef = MetricDef::new("latency_p50", Unit::Nanos, Direction::Lower);
const L_P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower);
const L_MAX: MetricDef = MetricDef::new("latency_max", Unit::Nanos, Direction::Lower);

fn phase(name: &str) -> Dims {
    Dims {
        phase: Some(name.into()),
        file_size_bytes: Some(1 << 20),
        record_size_bytes: Some(4096),
        ..Dims::default()
    }
}

/// A matrix-like record of `bytes` written in `seconds` by 4 KiB operations whose latencies
/// are `latencies`.
fn written(bytes: f64, seconds: f64, latencies: &[u64]) -> ResultRecord {
    let mut h = Histogram::new();
    for &l in latencies {
        h.record(l);
    }
    let ops = bytes / 4096.0;
    let s = h.summary();
    ResultRecord {
        dims: phase("write"),
        measurements: vec![
            THROUGHPUT.at(bytes / seconds),
            OPS_RATE.at(ops / seconds),
            L_MIN.at(s.min_ns as f64),
            L_MEAN.at(s.mean_ns),
            L_P50.at(s.p50_ns as f64),
            L_P99.at(s.p99_ns as f64),
            L_MAX.at(s.max_ns as f64),
            OPS.at(ops),
            BYTES.at(bytes),
            ELAPSED.at(seconds * 1e9),
            CPU_SYS.at(seconds * 1e8),
            CPU_PERCENT.at(10.0 * seconds),
        ],
        latency_bins: h.bins(),
        ..ResultRecord::default()
    }
}

fn rank(rank: u32, host: &str, records: Vec<ResultRecord>) -> RankResults {
    RankResults {
        rank,
        host: host.into(),
        records,
    }
}

fn get(record: &ResultRecord, name: &str) -> f64 {
    value(record, name).unwrap_or_else(|| panic!("no {name} in {record:?}"))
}

const MIB: f64 = 1048576.0;

/// Merges by the rules the workloads declare for their figures.
fn merge(ranks: &[RankResults]) -> Result<Vec<ResultRecord>, MergeError> {
    merge_by(ranks, fsbench_workload::figures::DEFINED)
}

/// Two ranks write 100 MiB each, in 1 s and in 2 s: 100 and 50 MiB/s on their own. The job
/// moved 200 MiB in 2 s: 100 MiB/s, not the 150 MiB/s that adding the rates would claim.
#[test]
fn throughput_is_total_bytes_over_the_slowest_ranks_time() {
    let merged = merge(&[
        rank(0, "a", vec![written(100.0 * MIB, 1.0, &[1000, 2000])]),
        rank(1, "b", vec![written(100.0 * MIB, 2.0, &[3000, 4000])]),
    ])
    .unwrap();
    let r = &merged[0];
    assert_eq!(r.dims, phase("write"));
    assert_eq!(get(r, "throughput"), 100.0 * MIB);
    assert_eq!(get(r, "ops_rate"), 200.0 * MIB / 4096.0 / 2.0);
    assert_eq!(get(r, "bytes"), 200.0 * MIB);
    assert_eq!(get(r, "elapsed"), 2e9);
    assert_eq!(get(r, "cpu_sys"), 3e8);
    assert_eq!(get(r, "cpu_sys_percent"), 15.0);
    assert_eq!(get(r, "ranks"), 2.0);
    assert_eq!(get(r, "imbalance"), 2.0);
    assert_eq!(get(r, "latency_min"), 1000.0);
    assert_eq!(get(r, "latency_max"), 4000.0);
    assert_eq!(get(r, "latency_mean"), 2500.0);
    assert!(r.main().is_some_and(|m| m.metric == "throughput"));
    assert_eq!(r.attributes["first_done"]["rank"], 0);
    assert_eq!(r.attributes["last_done"]["host"], "b");
    let ranks = r.attributes["per_rank"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    assert_eq!(ranks[1]["main"]["value"], 50.0 * MIB);
}

#[test]
fn a_stonewall_on_any_rank_shows_and_what_ranks_made_spans_them_all() {
    let walled = |rank_no: u32, stonewalled: bool, least: u64, most: u64| {
        let mut record = written(MIB, 1.0, &[1000]);
        record
            .attributes
            .insert("stonewalled".into(), stonewalled.into());
        record.attributes.insert("made_min".into(), least.into());
        record.attributes.insert("made_max".into(), most.into());
        record
            .attributes
            .insert("files_per_thread".into(), 1000.into());
        rank(rank_no, "a", vec![record])
    };
    let merged = merge(&[walled(0, false, 900, 1000), walled(1, true, 400, 700)]).unwrap();
    let a = &merged[0].attributes;
    assert_eq!(a["stonewalled"], true);
    assert_eq!(a["made_min"], 400);
    assert_eq!(a["made_max"], 1000);
    assert_eq!(
        a["files_per_thread"], 1000,
        "rank 0's other attributes stay"
    );
}

/// A workload that runs every rank for one fixed duration and reports only its rate: the
/// rates add up.
#[test]
fn a_rate_without_its_bytes_and_time_is_the_sum_of_the_ranks_rates() {
    let mix = |tps: f64| ResultRecord {
        measurements: vec![TPS.at(tps), CPU_PERCENT.at(tps / 100.0)],
        ..ResultRecord::default()
    };
    let merged = merge(&[
        rank(0, "a", vec![mix(300.0)]),
        rank(1, "a", vec![mix(500.0)]),
    ])
    .unwrap();
    assert_eq!(get(&merged[0], "tps"), 800.0);
    assert_eq!(get(&merged[0], "cpu_sys_percent"), 4.0);
    assert!(
        value(&merged[0], "imbalance").is_none(),
        "no times, no imbalance"
    );
}

/// Percentiles are never averaged: without every rank's histogram they are left out, and the
/// mean is weighted by each rank's operations.
#[test]
fn without_histograms_percentiles_are_left_out_and_the_mean_is_weighted() {
    let mut a = written(4096.0, 1.0, &[1000]);
    let mut b = written(3.0 * 4096.0, 1.0, &[3000, 3000, 3000]);
    a.latency_bins.clear();
    b.latency_bins.clear();
    let merged = merge(&[rank(0, "a", vec![a]), rank(1, "a", vec![b])]).unwrap();
    let r = &merged[0];
    assert!(value(r, "latency_p50").is_none() && value(r, "latency_p99").is_none());
    assert_eq!(get(r, "latency_mean"), 2500.0);
    assert!(r.latency_bins.is_empty());
}

#[test]
fn ranks_that_ran_different_workloads_are_named() {
    let one = rank(0, "a", vec![written(MIB, 1.0, &[1])]);
    let two = rank(3, "hostb", vec![]);
    let err = merge(&[one.clone(), two]).unwrap_err();
    assert!(err
        .to_string()
        .contains("rank 3 (host hostb) reported 0 results where rank 0 reported 1"));
    let mut read = written(MIB, 1.0, &[1]);
    read.dims = phase("read");
    let err = merge(&[one, rank(2, "c", vec![read])]).unwrap_err();
    assert!(
        matches!(
            err,
            MergeError::Dims {
                rank: 2,
                index: 0,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(merge(&[]).unwrap_err(), MergeError::Empty);
}

proptest! {
    /// The merged histogram is the histogram of every rank's values recorded in one: the same
    /// buckets, count, minimum, maximum and percentiles, and the mean to float precision.
    #[test]
    fn merging_histograms_equals_recording_everything_in_one(
        values in proptest::collection::vec(1u64..50_000_000_000, 1..400),
        ranks in 1usize..6,
    ) {
        let mut all = Histogram::new();
        for &v in &values {
            all.record(v);
        }
        let per_rank: Vec<RankResults> = (0..ranks)
            .map(|r| {
                let mine: Vec<u64> = values.iter().copied().skip(r).step_by(ranks).collect();
                let mine = if mine.is_empty() { vec![values[0]] } else { mine };
                rank(r as u32, "h", vec![written(MIB, 1.0 + r as f64, &mine)])
            })
            .collect();
        // What the ranks recorded, in one histogram, as the reference.
        let mut reference = Histogram::new();
        for r in &per_rank {
            for &(low, n) in &r.records[0].latency_bins {
                for _ in 0..n {
                    reference.count_in_bucket(low);
                }
            }
        }
        let merged = merge(&per_rank).unwrap();
        let r = &merged[0];
        if ranks <= values.len() {
            prop_assert_eq!(&r.latency_bins, &all.bins());
            let s = all.summary();
            prop_assert_eq!(get(r, "latency_p50"), s.p50_ns as f64);
            prop_assert_eq!(get(r, "latency_p99"), s.p99_ns as f64);
            prop_assert_eq!(get(r, "latency_min"), s.min_ns as f64);
            prop_assert_eq!(get(r, "latency_max"), s.max_ns as f64);
            prop_assert!((get(r, "latency_mean") - s.mean_ns).abs() <= s.mean_ns * 1e-9 + 1.0);
        }
        prop_assert_eq!(&r.latency_bins, &reference.bins());
    }
}

/// The io workload's records: a second latency distribution (submission latency, its bins in
/// the attribute `slat_bins`) merges exactly, as the record's histogram does, and CPU time per
/// operation is the job's over its operations — not the ranks' sum, nor their plain mean.
#[test]
fn a_second_distribution_and_per_operation_figures_merge_exactly() {
    const S_MIN: MetricDef = MetricDef::new("slat_min", Unit::Nanos, Direction::Lower);
    const S_MEAN: MetricDef = MetricDef::new("slat_mean", Unit::Nanos, Direction::Lower);
    const S_P50: MetricDef = MetricDef::new("slat_p50", Unit::Nanos, Direction::Lower);
    const S_P99: MetricDef = MetricDef::new("slat_p99", Unit::Nanos, Direction::Lower);
    const S_MAX: MetricDef = MetricDef::new("slat_max", Unit::Nanos, Direction::Lower);
    const CPU_PER_OP: MetricDef = MetricDef::new("cpu_per_op", Unit::Nanos, Direction::Lower);
    let io = |ops: f64, submit: &[u64], cpu_per_op: f64| {
        let mut r = written(ops * 4096.0, 1.0, &[1000, 2000]);
        let mut h = Histogram::new();
        for &s in submit {
            h.record(s);
        }
        let l = h.summary();
        r.measurements.extend([
            S_MIN.at(l.min_ns as f64),
            S_MEAN.at(l.mean_ns),
            S_P50.at(l.p50_ns as f64),
            S_P99.at(l.p99_ns as f64),
            S_MAX.at(l.max_ns as f64),
            CPU_PER_OP.at(cpu_per_op),
        ]);
        r.attributes
            .insert("slat_bins".into(), serde_json::json!(h.bins()));
        r
    };
    let fast: Vec<u64> = [100; 99].into_iter().chain([10_000]).collect();
    let slow = [5_000u64; 50];
    let merged = merge(&[
        rank(0, "a", vec![io(100.0, &fast, 1000.0)]),
        rank(1, "b", vec![io(300.0, &slow, 2000.0)]),
    ])
    .unwrap();
    let mut all = Histogram::new();
    for &s in fast.iter().chain(&slow) {
        all.record(s);
    }
    let want = all.summary();
    let r = &merged[0];
    assert_eq!(
        get(r, "slat_p50"),
        want.p50_ns as f64,
        "from the merged bins"
    );
    assert_eq!(get(r, "slat_p99"), want.p99_ns as f64);
    assert_eq!(get(r, "slat_mean"), want.mean_ns);
    assert_eq!((get(r, "slat_min"), get(r, "slat_max")), (100.0, 10_000.0));
    let bins: Vec<(u64, u64)> = serde_json::from_value(r.attributes["slat_bins"].clone()).unwrap();
    assert_eq!(bins, all.bins(), "the merged bins are kept");
    assert_eq!(
        get(r, "cpu_per_op"),
        1750.0,
        "(100 x 1000 + 300 x 2000) / 400"
    );
    // The record's own histogram merges as before beside it.
    assert_eq!(r.latency_bins.iter().map(|b| b.1).sum::<u64>(), 4);
}

/// A figure without a definition is not merged by a rule guessed from its name: the merge is an
/// error that names it. Declared, it merges by its declared rule.
#[test]
fn an_undefined_figure_is_an_error_that_names_it() {
    const IOPS: MetricDef = MetricDef::new("iops", Unit::OpsPerSec, Direction::Higher);
    let record = |iops: f64| {
        let mut r = written(MIB, 1.0, &[1000]);
        r.measurements.push(IOPS.at(iops));
        r
    };
    let ranks = [
        rank(0, "a", vec![record(10.0)]),
        rank(1, "b", vec![record(30.0)]),
    ];
    let err = merge(&ranks).unwrap_err();
    assert_eq!(
        err,
        MergeError::Undefined {
            metric: "iops".into()
        }
    );
    assert!(err.to_string().contains("`iops`"), "{err}");
    let declared = [
        fsbench_workload::figures::DEFINED,
        &[IOPS.merged(Merge::Mean)],
    ]
    .concat();
    let merged = merge_by(&ranks, &declared).unwrap();
    assert_eq!(get(&merged[0], "iops"), 20.0);
}
