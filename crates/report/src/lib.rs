//! The report layer: one serde model per result set, rendered by exporters (terminal, JSON,
//! CSV, Markdown, HTML, XLSX). Exporters write into any `io::Write`; they never decide file
//! names or print on their own, and they never compute statistics beyond formatting (that is
//! the analysis layer's job, reached through [`standings`]).
//!
//! Brief overview:
//! - [`model`]: stored runs as one [`ReportModel`] (cases with typed axes, the configurations
//!   with one label and colour each, samples with typed results, summary tables, what was not
//!   measured per case and per configuration), what every exporter renders.
//! - [`standings`]: who won each discipline (the winner or the group that ties for first, and
//!   its lead with its interval), by how much and whether it is real; rankings by points (ties
//!   share them) per category and overall with their rank intervals, and a composite against
//!   a baseline; aged against fresh (the aging penalty, and whether aging changes a
//!   ranking). Every exporter takes it from the model.
//! - [`efficiency`]: each filesystem's result as a share of its bare device's (`raw`), the
//!   baseline that is not a contender.
//! - [`export`]: the [`Exporter`] trait, [`Json`] (`fsbench.run` v2, with the standings),
//!   [`Csv`] (v4) and the long-form [`SeriesCsv`] (one row per point of a sample's series).
//! - [`html`]: one self-contained HTML report ([`Html`]), the answer first, with inline SVG
//!   [`charts`] (one colour per configuration throughout).
//! - [`over_time`]: a sample along its time axis (the rate of its phases with their latency
//!   percentiles, the host's memory, devices and CPUs beneath), for a representative
//!   repetition or every one, and what its assessment says of its figures (not steady,
//!   saturated, disturbed by the host).
//! - [`markdown`]: the Markdown summary ([`Markdown`]) for an issue or a mail.
//! - [`versus`]: run against run (`fsbench compare`): ratios, intervals, regressions.
//! - [`xlsx`]: the workbook ([`Xlsx`]): a workload's grid as iozone's sheets, the verdict,
//!   the ranking, what was not measured, a summary and a tidy sheet.
//! - [`terminal`]: the campaign summary ([`Terminal`]), within 120 columns.
//! - [`then_now`]: a study's published figures and claims beside the run's ratios, with a
//!   verdict per claim that weighs the size as well as the direction; [`study_points`]: the
//!   points of a study's own ranking (its disciplines, the configurations ranked together).
//! - [`target`]: a prepared target in a few lines (device, mkfs, mount, scheduler, cache, fsck).
//! - [`grid`]: one run's results as the grids its workload lays out (the matrix's iozone
//!   blocks).

pub mod charts;
pub mod efficiency;
pub mod export;
pub mod grid;
pub mod html;
pub mod markdown;
pub mod model;
pub mod over_time;
pub mod standings;
pub mod study_points;
pub mod target;
pub mod terminal;
pub mod text;
pub mod then_now;
pub mod versus;
pub mod xlsx;

pub use export::{Csv, Exporter, Json, SeriesCsv};
pub use html::Html;
pub use markdown::Markdown;
pub use model::ReportModel;
pub use terminal::Terminal;
pub use xlsx::Xlsx;

#[cfg(test)]
mod tests;
