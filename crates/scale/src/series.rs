//! One job's series from its ranks': every rank's own (its subjects named by its rank: `rank 1
//! total`, `rank 1 loop3`), and the job's total of each workload phase — each interval's
//! operations and bytes summed over the ranks. The ranks start each phase together and sample
//! it at the same interval, so the n-th interval of every rank is the same stretch of time; its
//! time is the first rank's that has it. Latency percentiles do not add: each rank keeps its
//! own.

use fsbench_model::series::{metric, subject, Point, Series, WORKLOAD};

/// The series of `ranks` (rank, its series on its own time axis) as the job's.
pub fn merge_series(ranks: &[(u32, Vec<Series>)]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (rank, series) in ranks {
        for s in series {
            let is_total = s.source == WORKLOAD && s.subject == subject::TOTAL;
            if is_total && matches!(s.metric.as_str(), metric::OPS | metric::BYTES) {
                add_to_total(&mut out, s);
            }
            out.push(Series {
                subject: format!("rank {rank} {}", s.subject),
                ..s.clone()
            });
        }
    }
    out
}

/// Adds a rank's total of a phase, interval by interval, to the job's.
fn add_to_total(out: &mut Vec<Series>, s: &Series) {
    let total = out.iter_mut().find(|t| {
        t.source == s.source
            && t.phase == s.phase
            && t.subject == subject::TOTAL
            && t.metric == s.metric
    });
    let Some(total) = total else {
        out.push(s.clone());
        return;
    };
    for (i, p) in s.points.iter().enumerate() {
        match total.points.get_mut(i) {
            Some(sum) => sum.2 += p.2,
            None => total.points.push(Point(p.0, p.1, p.2)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_model::Unit;

    fn series(subject: &str, metric: &str, values: &[f64]) -> Series {
        Series {
            source: if subject == "loop3" { "disk" } else { WORKLOAD }.into(),
            phase: (subject != "loop3").then_some(0),
            label: "write".into(),
            subject: subject.into(),
            metric: metric.into(),
            unit: Unit::Count,
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| Point(i as u64 * 10, 10, *v))
                .collect(),
        }
    }

    #[test]
    fn the_jobs_total_is_the_sum_over_ranks_per_interval() {
        let ranks = vec![
            (
                0,
                vec![
                    series("total", "ops", &[1.0, 2.0]),
                    series("total", "latency_p99", &[5.0, 5.0]),
                    series("loop3", "busy", &[50.0]),
                ],
            ),
            (
                1,
                vec![
                    series("total", "ops", &[10.0, 20.0, 30.0]),
                    series("thread 0", "ops", &[10.0, 20.0, 30.0]),
                ],
            ),
        ];
        let merged = merge_series(&ranks);
        let find = |subject: &str, metric: &str| {
            merged
                .iter()
                .find(|s| s.subject == subject && s.metric == metric)
                .map(|s| s.points.iter().map(|p| p.2).collect::<Vec<_>>())
        };
        assert_eq!(find("total", "ops"), Some(vec![11.0, 22.0, 30.0]));
        assert_eq!(find("rank 0 total", "ops"), Some(vec![1.0, 2.0]));
        assert_eq!(find("rank 1 thread 0", "ops"), Some(vec![10.0, 20.0, 30.0]));
        assert_eq!(find("rank 0 loop3", "busy"), Some(vec![50.0]));
        assert_eq!(find("total", "latency_p99"), None, "percentiles do not add");
    }
}
