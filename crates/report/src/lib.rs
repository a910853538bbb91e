//! The report layer: one serde model per result set, rendered by exporters (terminal, JSON,
//! CSV). Exporters write into any `io::Write`; they never decide file names or print on their
//! own, and they never compute statistics beyond formatting (that is the analysis layer's job).
//!
//! Brief overview:
//! - [`model`]: stored runs as one [`ReportModel`] (cases with typed axes, samples with typed
//!   results, summary tables, problems), what `fsbench run` and `fsbench export` render.
//! - [`export`]: the [`Exporter`] trait, [`Json`] (`fsbench.run` v2) and [`Csv`] (v2).
//! - [`terminal`]: the campaign summary ([`Terminal`]).
//! - [`target`]: a prepared target in a few lines (device, mkfs, mount, scheduler, cache, fsck).
//! - [`grid`]: one run's results as the grids its workload lays out (the matrix's iozone
//!   blocks).

pub mod export;
pub mod grid;
pub mod model;
pub mod target;
pub mod terminal;

pub use export::{Csv, Exporter, Json};
pub use model::ReportModel;
pub use terminal::Terminal;

#[cfg(test)]
mod tests;
