//! The measuring layer of fsbench: everything a workload needs to time operations honestly.
//!
//! Brief overview:
//! - [`clock`]: a monotonic nanosecond clock, and the [`Clock`] of timed loops (the invariant
//!   TSC, calibrated, when the CPU and kernel trust it; CLOCK_MONOTONIC otherwise).
//! - [`histogram`]: a log-linear latency histogram with a documented error bound.
//! - [`cpu`]: user and system CPU time of the calling thread.
//! - [`stats`]: running mean / spread of per-pass rates (Welford).
//! - [`recorder`]: the framework that times a pass of operations; workloads only act.
//! - [`monitor`]: the host beside a sample (disks, memory, CPU, pressure) at its interval.
//! - [`aside`]: helper threads leave the workload's descriptor table, so its calls take no
//!   file references.
//! - [`rng`]: the seeded generator every random choice of fsbench's comes from.
//! - [`series`]: per-interval series of a running phase (threads publish on probes, a sampler
//!   thread reads them).
//! - [`units`]: parsing and formatting of sizes and durations (`fsbench_model::units`, here
//!   under its old name: the records of `fsbench-model` print sizes too).
//! - [`host`]: what machine and which mounted filesystem a measurement was taken on;
//!   [`trust`]: whether a directory of the host may hold what root makes (nobody else can
//!   change it or the way to it); [`walk`]: removing a directory fsbench made (and walking a
//!   user's tree) without ever crossing a mount.
//! - [`procs`]: a process's children and descendants (read from /proc), and killing such a
//!   tree whole.
//! - [`input`]: a file the user names as input (a loadfile, a plan) read only when it is a
//!   regular file under a size limit.
//!
//! This crate depends on no other fsbench crate; every other layer builds on it.

pub mod aside;
pub mod clock;
pub mod cpu;
pub mod histogram;
pub mod host;
pub mod input;
pub mod monitor;
pub mod procs;
pub mod recorder;
pub mod rng;
pub mod series;
pub mod stats;
pub mod trust;
pub use fsbench_model::units;
pub mod walk;

pub use clock::{Clock, ClockInfo, ClockSource};
pub use cpu::CpuTimes;
pub use histogram::{Histogram, LatencySummary};
pub use recorder::{NoWall, OpSummary, Recorder, Wall, WallAt};
pub use stats::{RunningStats, Spread};
