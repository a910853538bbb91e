//! One workload run by every rank of a job: each rank reports what it measured to rank 0, which
//! merges the results into one and names every rank that failed, with its host.

use crate::collective::Collective;
use crate::merge::{merge_by, MergeError, RankResults};
use fsbench_model::series::Series;
use fsbench_model::{MetricDef, ResultRecord};
use serde::{Deserialize, Serialize};

/// What one rank sends rank 0 after its run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: u32,
    /// The host's name, as reports name it.
    pub host: String,
    /// Why the rank's run did not finish, when it did not.
    pub failure: Option<String>,
    /// The rank stopped because another one did (its own failure is "interrupted").
    #[serde(default)]
    pub stopped_with_the_job: bool,
    pub records: Vec<ResultRecord>,
    /// The rank's series (its phases' and its host's), on its own time axis; sent at the job's
    /// end only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
    /// The definitions of the figures the records may hold, whose merge rules rank 0 merges
    /// them by (not sent: rank 0 merges by its own).
    #[serde(skip)]
    pub figures: &'static [MetricDef],
}

/// The job's result at rank 0.
#[derive(Debug)]
pub struct JobResult {
    /// The merged results every rank has (all of them when every rank finished).
    pub records: Vec<ResultRecord>,
    /// "rank R (host H): reason" for every rank that did not finish.
    pub failures: Vec<String>,
    /// Every rank's series, and the job's total ([`crate::merge_series`]).
    pub series: Vec<fsbench_model::series::Series>,
}

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("rank {rank} sent a report rank 0 cannot read: {error}")]
    Unreadable { rank: usize, error: String },
    #[error(transparent)]
    Merge(#[from] MergeError),
}

/// Sends this rank's report to rank 0; at rank 0, returns the job's merged result (`None` on the
/// other ranks). Every rank must call it.
pub fn gather_and_merge(
    job: &dyn Collective,
    mine: &RankReport,
) -> Option<Result<JobResult, JobError>> {
    gather_at(job, mine, Ends::Job)
}

/// As [`gather_and_merge`], between two phases of a job that goes on: every rank must have
/// measured the same records since the last share — one rank with more is a merge error, not
/// records silently dropped (only the job's end keeps what every rank has).
pub fn gather_and_merge_phase(
    job: &dyn Collective,
    mine: &RankReport,
) -> Option<Result<JobResult, JobError>> {
    gather_at(job, mine, Ends::Phase)
}

fn gather_at(
    job: &dyn Collective,
    mine: &RankReport,
    at: Ends,
) -> Option<Result<JobResult, JobError>> {
    let bytes = serde_json::to_vec(mine).expect("a report is plain data");
    let all = job.gather(&bytes)?;
    Some(merge_reports(&all, at, mine.figures))
}

/// Where a merge happens: at the job's end (a rank that stopped early has fewer records) or
/// between phases (every rank has the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ends {
    Job,
    Phase,
}

fn merge_reports(all: &[Vec<u8>], at: Ends, figures: &[MetricDef]) -> Result<JobResult, JobError> {
    let reports: Vec<RankReport> = all
        .iter()
        .enumerate()
        .map(|(rank, bytes)| {
            serde_json::from_slice(bytes).map_err(|e| JobError::Unreadable {
                rank,
                error: e.to_string(),
            })
        })
        .collect::<Result<_, _>>()?;
    // The ranks that stopped on their own first, then those that stopped with them.
    let mut failures: Vec<String> = reports
        .iter()
        .filter(|r| !r.stopped_with_the_job)
        .filter_map(|r| {
            let reason = r.failure.as_ref()?;
            Some(format!("rank {} (host {}): {reason}", r.rank, r.host))
        })
        .collect();
    let followers: Vec<String> = reports
        .iter()
        .filter(|r| r.stopped_with_the_job)
        .map(|r| r.rank.to_string())
        .collect();
    if !followers.is_empty() {
        failures.push(format!("rank(s) {} stopped with it", followers.join(", ")));
    }
    // What every rank measured: all of it when every rank finished; when one did not, the
    // results every rank has (the phases before the stop), so nothing measured by the whole job
    // is lost and no figure is of part of it.
    let common = match at {
        Ends::Job => reports.iter().map(|r| r.records.len()).min().unwrap_or(0),
        Ends::Phase => reports.iter().map(|r| r.records.len()).max().unwrap_or(0),
    };
    let ranks: Vec<RankResults> = reports
        .iter()
        .map(|r| RankResults {
            rank: r.rank,
            host: r.host.clone(),
            records: r.records[..common.min(r.records.len())].to_vec(),
        })
        .collect();
    let records = merge_by(&ranks, figures)?;
    let series = crate::merge_series(
        &reports
            .iter()
            .map(|r| (r.rank, r.series.clone()))
            .collect::<Vec<_>>(),
    );
    Ok(JobResult {
        records,
        failures,
        series,
    })
}

/// Every rank's host description at rank 0, as the run's provenance: rank 0's own, with an
/// `mpi` object listing the job's size and each rank's host (`None` on the other ranks). Every
/// rank must call it.
pub fn gather_hosts(
    job: &dyn Collective,
    host: &serde_json::Value,
) -> Option<Result<serde_json::Value, JobError>> {
    let bytes = serde_json::to_vec(host).expect("a host description is plain data");
    let all = job.gather(&bytes)?;
    let ranks: Result<Vec<serde_json::Value>, JobError> = all
        .iter()
        .enumerate()
        .map(|(rank, bytes)| {
            let host: serde_json::Value =
                serde_json::from_slice(bytes).map_err(|e| JobError::Unreadable {
                    rank,
                    error: e.to_string(),
                })?;
            Ok(serde_json::json!({ "rank": rank, "host": host }))
        })
        .collect();
    Some(ranks.map(|ranks| {
        let mut first = host.clone();
        if let Some(object) = first.as_object_mut() {
            object.insert(
                "mpi".into(),
                serde_json::json!({ "world_size": ranks.len(), "ranks": ranks }),
            );
        }
        first
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Threads;
    use fsbench_model::{Direction, MetricDef, Unit};

    const BYTES: MetricDef = MetricDef::new("bytes", Unit::Bytes, Direction::None);

    /// The merge of reports whose figures merge by the workloads' definitions.
    fn merge_reports(all: &[Vec<u8>], at: Ends) -> Result<JobResult, JobError> {
        super::merge_reports(all, at, fsbench_workload::figures::DEFINED)
    }

    fn report(rank: u32, failure: Option<&str>) -> RankReport {
        RankReport {
            rank,
            host: format!("h{}", rank / 2),
            failure: failure.map(str::to_string),
            stopped_with_the_job: false,
            series: Vec::new(),
            figures: fsbench_workload::figures::DEFINED,
            records: vec![ResultRecord {
                measurements: vec![BYTES.at(100.0 * (rank + 1) as f64)],
                ..ResultRecord::default()
            }],
        }
    }

    /// Four ranks as threads: rank 0 alone gets the merged result, with every rank's host.
    #[test]
    fn rank_zero_gets_one_result_from_every_rank() {
        let handles: Vec<_> = Threads::job(4)
            .into_iter()
            .map(|job| {
                std::thread::spawn(move || {
                    assert!(job.all_ok(true));
                    let host = serde_json::json!({ "hostname": format!("h{}", job.rank() / 2) });
                    let hosts = gather_hosts(&job, &host).map(|h| h.unwrap());
                    let mine = report(job.rank(), None);
                    (hosts, gather_and_merge(&job, &mine).map(|r| r.unwrap()))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results[1..]
            .iter()
            .all(|(hosts, job)| hosts.is_none() && job.is_none()));
        let (hosts, job) = &results[0];
        let job = job.as_ref().unwrap();
        assert!(job.failures.is_empty());
        assert_eq!(job.records[0].measurements[0].value, 1000.0);
        let hosts = hosts.as_ref().unwrap();
        assert_eq!(hosts["hostname"], "h0");
        assert_eq!(hosts["mpi"]["world_size"], 4);
        let names: Vec<&str> = hosts["mpi"]["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["host"]["hostname"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["h0", "h0", "h1", "h1"]);
    }

    /// One rank that cannot start stops every rank before anything runs; one that fails is
    /// named with its host, and the results every rank has are kept.
    #[test]
    fn a_failed_rank_is_named_and_stops_the_job() {
        let handles: Vec<_> = Threads::job(3)
            .into_iter()
            .map(|job| {
                std::thread::spawn(move || {
                    let started = job.all_ok(job.rank() != 1);
                    let again = job.all_ok(true);
                    let failure = (job.rank() == 2).then_some("No space left on device");
                    let result = gather_and_merge(&job, &report(job.rank(), failure));
                    (started, again, result.map(|r| r.unwrap()))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results.iter().all(|(started, again, _)| !started && *again));
        let job = results[0].2.as_ref().unwrap();
        assert_eq!(job.failures, ["rank 2 (host h1): No space left on device"]);
        // Every rank has its one result: it is kept, merged over all three.
        assert_eq!(job.records[0].measurements[0].value, 600.0);
    }

    /// A rank with one record more than the others: at the job's end the records every rank
    /// has are merged; between phases it is an error naming the rank, not a record dropped.
    #[test]
    fn a_rank_with_more_records_is_truncated_at_the_end_and_an_error_between_phases() {
        let mut long = report(1, None);
        long.records.push(long.records[0].clone());
        let all = [report(0, None), long].map(|r| serde_json::to_vec(&r).unwrap());
        let at_end = merge_reports(&all, Ends::Job).unwrap();
        assert_eq!(at_end.records.len(), 1);
        assert_eq!(at_end.records[0].measurements[0].value, 300.0);
        let error = merge_reports(&all, Ends::Phase).unwrap_err().to_string();
        assert!(error.contains("rank 1"), "{error}");
    }
}
