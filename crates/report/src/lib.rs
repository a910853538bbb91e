//! The report layer: one serde model per result set, rendered by exporters (terminal, JSON,
//! CSV). Exporters write into any `io::Write`; they never decide file names or print on their
//! own, and they never compute statistics beyond formatting (that is the analysis layer's job).
//!
//! Brief overview:
//! - [`model`]: stored runs as one [`ReportModel`] (cases with typed axes, samples with typed
//!   results, summary tables, problems), what `fsbench run` and `fsbench export` render.
//! - [`export`]: the [`Exporter`] trait, [`Json`] (`fsbench.run` v2) and [`Csv`] (v2).
//! - [`terminal`]: the campaign summary ([`Terminal`]).
//! - [`matrix`]: the throughput matrix's document ([`matrix::MatrixDocument`]), its versioned
//!   JSON, tidy CSV and iozone-style terminal grid.
//! - [`grid`]: one run's results as the grids its workload lays out (the matrix's iozone
//!   blocks).
//! - [`unit`]: the display units `fsbench matrix` offers, with their direction.

pub mod export;
pub mod grid;
pub mod matrix;
pub mod model;
pub mod terminal;
pub mod unit;

pub use export::{Csv, Exporter, Json};
pub use model::ReportModel;
pub use terminal::Terminal;
pub use unit::DisplayUnit;

#[cfg(test)]
mod tests;
