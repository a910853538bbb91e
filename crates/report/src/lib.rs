//! The report layer: one serde model per result set, rendered by exporters (terminal, JSON,
//! CSV). Exporters write into any `io::Write`; they never decide file names or print on their
//! own, and they never compute statistics beyond formatting (that is the analysis layer's job).
//!
//! Brief overview:
//! - [`matrix`]: the throughput matrix's document ([`matrix::MatrixDocument`]), its versioned
//!   JSON, tidy CSV and iozone-style terminal grid.
//! - [`campaign`]: a stored run (`fsbench run`, `fsbench export`): the terminal summary with
//!   confidence intervals, and the run's JSON and CSV exports.
//! - [`grid`]: one run's results as the grids its workload lays out (the matrix's iozone
//!   blocks).
//! - [`unit`]: the display units a user may choose, with their direction (higher/lower is
//!   better).

pub mod campaign;
pub mod grid;
pub mod matrix;
pub mod unit;

pub use unit::DisplayUnit;
