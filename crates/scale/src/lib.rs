//! Scale-out: the same workload run by many ranks (processes, on one host or many, started by
//! mpirun) becomes one result. [`collective`] is how ranks meet (MPI with the `mpi` feature;
//! threads in tests), [`job`] what each rank sends rank 0, [`merge`] the rules that make one
//! result of many, [`series`] the job's series from its ranks'. docs/design/mpi.md describes the whole design (issue 14).

pub mod collective;
pub mod job;
pub mod merge;
pub mod series;

pub use collective::{launched_local_size, launched_size, launcher, Collective, Threads};
pub use job::{
    gather_and_merge, gather_and_merge_phase, gather_hosts, JobError, JobResult, RankReport,
};
pub use merge::{merge_by, MergeError, RankResults};
pub use series::merge_series;
