//! The native workloads of fsbench. A workload is given a directory and acts in it; the
//! framework in `fsbench-measure` does the timing. Workloads know nothing of devices, mkfs or
//! mounts (that is the target layer) and print nothing (that is the CLI and report layers).
//!
//! Brief overview:
//! - [`matrix`]: the iozone-style throughput matrix (file size x record size x test).
//! - Shared by every workload: [`data`] (what is written: incompressible by default),
//!   [`fileio`] (aligned buffers, opening with O_DIRECT), [`stdio`] (a user-space buffered
//!   stream with glibc's semantics), [`cache`] (evicting a file from the page cache and
//!   checking it), [`metric`] (the names results are stored under), [`rng`] (a fast deterministic generator), [`control`] (stop requests) and
//!   [`error`] (errors that say what to change).
//!
//! To add a workload, add a module beside `matrix` with its own spec, plan and run function, and
//! reuse the shared modules; nothing in `matrix` needs to change.

pub mod cache;
pub mod control;
pub mod data;
pub mod error;
pub mod fileio;
pub mod matrix;
pub mod metric;
pub mod rng;
pub mod stdio;

pub use control::StopFlag;
pub use error::WorkloadError;
