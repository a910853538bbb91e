//! One result from many ranks' results of the same workload, by rules that keep the figures
//! honest (docs/design/mpi.md §5):
//!
//! Each figure merges by the rule its definition declares (`MetricDef::merge`, looked up by
//! name in the definitions the merge is given: every figure a workload records has one,
//! `fsbench_workload::figures::DEFINED`). A figure none declares is an error that names it
//! ([`MergeError::Undefined`]), never a rule guessed from its name (a new `iops` would have
//! been added up, not merged as a rate):
//!
//! - bytes, operations, passes and CPU time add up (`Sum`);
//! - a phase lasts as long as its slowest rank (`elapsed`, `finish`: `Max`);
//! - throughput and operation rate are the total bytes or operations over the slowest rank's
//!   time (IOR's aggregate rule, `Rate`), never the sum of per-rank rates where the record has
//!   its bytes, operations and time; a workload that runs every rank for one fixed duration and
//!   reports only rates (the mix's transactions per second) gets the sum of its ranks' rates;
//! - latency histograms merge exactly, by adding counters, and every percentile comes from the
//!   merged histogram (`Distribution`); a percentile of a record without its histogram is left
//!   out rather than averaged. The record's histogram is its `latency_*` figures'; a second
//!   distribution (the io workload's submission latency, `slat_*`) keeps its bins in the
//!   attribute `<name>_bins` and merges alike;
//! - a per-operation figure (CPU time per operation) is the ranks' values weighted by their
//!   operations (`PerOp`): the job's total over its operations;
//! - any other figure (a percentage, a ratio, a spread) is the mean of the ranks' values;
//! - attributes are rank 0's, except that a true flag on any rank is true (`stonewalled`), and
//!   numbers named `…_min` and `…_max` are the least and the most over the ranks (`made_min`);
//! - two figures are added: `ranks` and `imbalance` (slowest over fastest rank's time), and the
//!   record's attributes name every rank with its host, time, bytes and main figure, and the
//!   first and last rank done.

use fsbench_measure::histogram::Histogram;
use fsbench_model::{Direction, Measurement, Merge, MetricDef, ResultRecord, Stat, Unit};
use serde_json::json;

/// How many ranks' results were merged into a record.
pub const RANKS: MetricDef = MetricDef::new("ranks", Unit::Count, Direction::None);
/// The slowest rank's time over the fastest rank's: 1 when the ranks were balanced.
pub const IMBALANCE: MetricDef = MetricDef::new("imbalance", Unit::Ratio, Direction::Lower);

/// What one rank measured.
#[derive(Debug, Clone)]
pub struct RankResults {
    pub rank: u32,
    /// The host the rank ran on, as reports name it.
    pub host: String,
    pub records: Vec<ResultRecord>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    #[error("no rank reported a result")]
    Empty,
    #[error(
        "rank {rank} (host {host}) reported {theirs} results where rank {first} reported {ours}: \
         every rank must run the same workload with the same settings"
    )]
    Count {
        rank: u32,
        host: String,
        theirs: usize,
        first: u32,
        ours: usize,
    },
    #[error(
        "rank {rank} (host {host}) reported result {index} as {theirs} where rank {first} \
         reported {ours}: every rank must run the same workload with the same settings"
    )]
    Dims {
        rank: u32,
        host: String,
        index: usize,
        theirs: String,
        first: u32,
        ours: String,
    },
    #[error(
        "the figure `{metric}` has no definition among the figures' definitions, so how its \
         ranks' values merge is not known: declare it (a MetricDef with its merge rule) where \
         the workload's figures are declared (fsbench_workload::figures::DEFINED)"
    )]
    Undefined { metric: String },
}

/// Merges the ranks' results, record by record (every rank must report the same records in
/// the same order: they ran the same workload), each figure by the rule of its definition in
/// `figures` (by name); a figure `figures` lacks is [`MergeError::Undefined`].
pub fn merge_by(
    ranks: &[RankResults],
    figures: &[MetricDef],
) -> Result<Vec<ResultRecord>, MergeError> {
    let first = ranks.first().ok_or(MergeError::Empty)?;
    for other in &ranks[1..] {
        if other.records.len() != first.records.len() {
            return Err(MergeError::Count {
                rank: other.rank,
                host: other.host.clone(),
                theirs: other.records.len(),
                first: first.rank,
                ours: first.records.len(),
            });
        }
        for (index, (theirs, ours)) in other.records.iter().zip(&first.records).enumerate() {
            if theirs.dims != ours.dims {
                return Err(MergeError::Dims {
                    rank: other.rank,
                    host: other.host.clone(),
                    index,
                    theirs: format!("{:?}", theirs.dims),
                    first: first.rank,
                    ours: format!("{:?}", ours.dims),
                });
            }
        }
    }
    (0..first.records.len())
        .map(|index| {
            let records: Vec<(&RankResults, &ResultRecord)> =
                ranks.iter().map(|r| (r, &r.records[index])).collect();
            merge_record(&records, figures)
        })
        .collect()
}

fn value(record: &ResultRecord, name: &str) -> Option<f64> {
    record
        .measurements
        .iter()
        .find(|m| m.metric == name)
        .map(|m| m.value)
}

/// Every rank's value of a figure, or `None` when one of them lacks it.
fn values(records: &[(&RankResults, &ResultRecord)], name: &str) -> Option<Vec<f64>> {
    records.iter().map(|(_, r)| value(r, name)).collect()
}

fn sum(values: &[f64]) -> f64 {
    values.iter().sum()
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The distribution of a figure merged by [`Merge::Distribution`] (`slat_p99` -> `slat`), when
/// `base` has it: the record's histogram (`latency`) or bins in the attribute `<name>_bins`.
fn distribution<'n>(base: &ResultRecord, name: &'n str, stat: Stat) -> Option<&'n str> {
    let prefix = name.strip_suffix(stat.name())?.strip_suffix('_')?;
    (prefix == "latency" || base.attributes.contains_key(&bins_attribute(prefix))).then_some(prefix)
}

fn bins_attribute(prefix: &str) -> String {
    format!("{prefix}_bins")
}

/// A record's bins of distribution `prefix`, or None when it has none.
fn bins_of(record: &ResultRecord, prefix: &str) -> Option<Vec<(u64, u64)>> {
    let bins = if prefix == "latency" {
        record.latency_bins.clone()
    } else {
        serde_json::from_value(record.attributes.get(&bins_attribute(prefix))?.clone()).ok()?
    };
    (!bins.is_empty()).then_some(bins)
}

/// The ranks' histograms of distribution `prefix` as one, when every rank kept its bins: bins
/// and the exact count, minimum, maximum and mean of each.
fn merged_histogram(records: &[(&RankResults, &ResultRecord)], prefix: &str) -> Option<Histogram> {
    let mut merged = Histogram::new();
    for (_, record) in records {
        let bins = bins_of(record, prefix)?;
        let count: u64 = bins.iter().map(|&(_, n)| n).sum();
        for &(low, n) in &bins {
            merged.count_many_in_bucket(low, n);
        }
        let low = value(record, &format!("{prefix}_min"))?;
        let high = value(record, &format!("{prefix}_max"))?;
        let mean = value(record, &format!("{prefix}_mean"))?;
        merged.add_totals(
            count,
            (mean * count as f64).round() as u64,
            low as u64,
            high as u64,
        );
    }
    Some(merged)
}

/// The rule `figures` declare for a measurement; an error naming it when none does.
fn rule_of(figures: &[MetricDef], m: &Measurement) -> Result<Merge, MergeError> {
    figures
        .iter()
        .find(|f| f.name == m.metric)
        .map(|f| f.merge)
        .ok_or_else(|| MergeError::Undefined {
            metric: m.metric.to_string(),
        })
}

/// The ranks' values `all` of a figure merged by a rule of values alone.
fn by_rule(
    rule: Merge,
    all: &[f64],
    records: &[(&RankResults, &ResultRecord)],
    elapsed: &Option<Vec<f64>>,
) -> f64 {
    match rule {
        Merge::Rate(amount) => match (values(records, amount.metric()), elapsed) {
            (Some(amount), Some(elapsed)) => sum(&amount) / (max(elapsed) / 1e9),
            _ => sum(all),
        },
        Merge::PerOp => match values(records, "ops") {
            Some(ops) if sum(&ops) > 0.0 => {
                all.iter().zip(&ops).map(|(v, o)| v * o).sum::<f64>() / sum(&ops)
            }
            _ => sum(all) / all.len() as f64,
        },
        Merge::Sum => sum(all),
        Merge::Max => max(all),
        Merge::Mean | Merge::Distribution(_) => sum(all) / all.len() as f64,
    }
}

fn merge_record(
    records: &[(&RankResults, &ResultRecord)],
    figures: &[MetricDef],
) -> Result<ResultRecord, MergeError> {
    let base = records[0].1;
    let elapsed = values(records, "elapsed").filter(|e| max(e) > 0.0);
    // Every distribution of the record, merged once: (name, histogram when every rank has it).
    let mut distributions: Vec<(&str, Option<Histogram>)> = Vec::new();
    let mut measurements: Vec<Measurement> = Vec::with_capacity(base.measurements.len() + 2);
    for m in &base.measurements {
        let name = m.metric.as_ref();
        let rule = rule_of(figures, m)?;
        let Some(all) = values(records, name) else {
            continue; // a figure not every rank has is not a figure of the whole
        };
        let of_distribution = match rule {
            Merge::Distribution(stat) => distribution(base, name, stat).map(|p| (p, stat)),
            _ => None,
        };
        let merged = if let Some((prefix, stat)) = of_distribution {
            if !distributions.iter().any(|(p, _)| *p == prefix) {
                distributions.push((prefix, merged_histogram(records, prefix)));
            }
            let latency = distributions
                .iter()
                .find(|(p, _)| *p == prefix)
                .and_then(|(_, h)| h.as_ref().map(Histogram::summary));
            match (stat, &latency) {
                (Stat::Min, _) => Some(min(&all)),
                (Stat::Max, _) => Some(max(&all)),
                (Stat::Mean, Some(l)) => Some(l.mean_ns),
                (Stat::P50, Some(l)) => Some(l.p50_ns as f64),
                (Stat::P90, Some(l)) => Some(l.p90_ns as f64),
                (Stat::P99, Some(l)) => Some(l.p99_ns as f64),
                (Stat::P99_9, Some(l)) => Some(l.p99_9_ns as f64),
                // Weighted by operations where the histogram is missing but counts are not.
                (Stat::Mean, None) => values(records, "ops").map(|ops| {
                    let n = sum(&ops);
                    if n > 0.0 {
                        all.iter().zip(&ops).map(|(m, o)| m * o).sum::<f64>() / n
                    } else {
                        0.0
                    }
                }),
                _ => None,
            }
        } else {
            let rule = match rule {
                // A record that keeps no bins of it: as its unit and direction say.
                Merge::Distribution(_) => Merge::of(m.unit, m.direction),
                rule => rule,
            };
            Some(by_rule(rule, &all, records, &elapsed))
        };
        if let Some(v) = merged {
            measurements.push(Measurement {
                value: v,
                ..m.clone()
            });
        }
    }
    measurements.push(RANKS.at(records.len() as f64));
    if let Some(elapsed) = &elapsed {
        if min(elapsed) > 0.0 {
            measurements.push(IMBALANCE.at(max(elapsed) / min(elapsed)));
        }
    }
    let mut attributes = base.attributes.clone();
    merge_attributes(&mut attributes, records.iter().map(|(_, r)| &r.attributes));
    let mut histogram = None;
    for (prefix, merged) in distributions {
        if prefix == "latency" {
            histogram = merged;
        } else if let Some(h) = merged {
            attributes.insert(bins_attribute(prefix), json!(h.bins()));
        }
    }
    // A record with its histogram and no latency figure still merges it.
    let histogram = histogram.or_else(|| merged_histogram(records, "latency"));
    let per_rank: Vec<serde_json::Value> = records
        .iter()
        .map(|(rank, record)| {
            json!({
                "rank": rank.rank,
                "host": rank.host,
                "elapsed_ns": value(record, "elapsed"),
                "bytes": value(record, "bytes"),
                "ops": value(record, "ops"),
                "main": record.main().map(|m| json!({ "metric": m.metric, "value": m.value })),
            })
        })
        .collect();
    attributes.insert("per_rank".into(), per_rank.into());
    if let Some(elapsed) = &elapsed {
        let by_time = |pick: fn(f64, f64) -> bool| {
            let mut best = 0;
            for (i, &e) in elapsed.iter().enumerate() {
                if pick(e, elapsed[best]) {
                    best = i;
                }
            }
            json!({ "rank": records[best].0.rank, "host": records[best].0.host, "elapsed_ns": elapsed[best] })
        };
        attributes.insert("first_done".into(), by_time(|a, b| a < b));
        attributes.insert("last_done".into(), by_time(|a, b| a > b));
    }
    Ok(ResultRecord {
        dims: base.dims.clone(),
        attributes,
        measurements,
        latency_bins: histogram.map(|h| h.bins()).unwrap_or_default(),
    })
}

/// Merges the ranks' attributes into `into` (rank 0's): flags by any, `_min`/`_max` numbers by
/// least/most.
fn merge_attributes<'a>(
    into: &mut serde_json::Map<String, serde_json::Value>,
    ranks: impl Iterator<Item = &'a serde_json::Map<String, serde_json::Value>> + Clone,
) {
    let keys: Vec<String> = ranks.clone().flat_map(|a| a.keys().cloned()).collect();
    for key in keys {
        let values: Vec<&serde_json::Value> = ranks.clone().filter_map(|a| a.get(&key)).collect();
        let merged = if values.iter().any(|v| v.is_boolean()) {
            Some(values.iter().any(|v| v.as_bool() == Some(true)).into())
        } else if key.ends_with("_min") {
            values
                .iter()
                .filter_map(|v| v.as_u64())
                .min()
                .map(Into::into)
        } else if key.ends_with("_max") {
            values
                .iter()
                .filter_map(|v| v.as_u64())
                .max()
                .map(Into::into)
        } else {
            None
        };
        if let Some(value) = merged {
            into.insert(key, value);
        }
    }
}

#[cfg(test)]
mod tests;
