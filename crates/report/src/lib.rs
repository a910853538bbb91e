//! The report layer: one serde model per result set, rendered by exporters (terminal, JSON,
//! CSV). Exporters write into any `io::Write`; they never decide file names or print on their
//! own, and they never compute statistics beyond formatting (that is the analysis layer's job).
//!
//! Brief overview:
//! - [`model`]: stored runs as one [`ReportModel`] (cases with typed axes, samples with typed
//!   results, summary tables, problems), what `fsbench run` and `fsbench export` render.
//! - [`export`]: the [`Exporter`] trait, [`Json`] (`fsbench.run` v2) and [`Csv`] (v2).
//! - [`standings`]: who won each discipline, by how much and whether it is real; rankings by
//!   points (ties share them) per category and overall, and a composite against a baseline.
//! - [`html`]: one self-contained HTML report ([`Html`]) with inline SVG [`charts`].
//! - [`markdown`]: the Markdown summary ([`Markdown`]) for an issue or a mail.
//! - [`versus`]: run against run (`fsbench compare`): ratios, intervals, regressions.
//! - [`xlsx`]: the workbook ([`Xlsx`]): iozone's sheets per test, a summary and a tidy sheet.
//! - [`terminal`]: the campaign summary ([`Terminal`]).
//! - [`target`]: a prepared target in a few lines (device, mkfs, mount, scheduler, cache, fsck).
//! - [`grid`]: one run's results as the grids its workload lays out (the matrix's iozone
//!   blocks).

pub mod charts;
pub mod export;
pub mod grid;
pub mod html;
pub mod markdown;
pub mod model;
pub mod standings;
pub mod target;
pub mod terminal;
pub mod versus;
pub mod xlsx;

pub use export::{Csv, Exporter, Json};
pub use html::Html;
pub use markdown::Markdown;
pub use model::ReportModel;
pub use terminal::Terminal;
pub use xlsx::Xlsx;

#[cfg(test)]
mod tests;
