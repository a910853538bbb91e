//! The report layer: one serde model per result set, rendered by exporters (terminal, JSON,
//! CSV, Markdown, HTML, XLSX). Exporters write into any `io::Write`; they never decide file
//! names or print on their own, and they never compute statistics beyond formatting (that is
//! the analysis layer's job, reached through [`findings`]).
//!
//! Brief overview:
//! - [`model`]: stored runs as one [`ReportModel`] (cases with typed axes, the configurations
//!   with one label and colour each, samples with typed results, summary tables, what was not
//!   measured per case and per configuration, aged against fresh), what every exporter
//!   renders; its pieces and how they are built in [`tables`], aged against fresh in [`aged`].
//! - [`findings`]: what the report finds in the model ([`Findings`]: the standings, efficiency,
//!   then and now, the samples' marks, any type that can `Find` itself), each found at most
//!   once and read by every renderer.
//! - [`section`]: the [`Section`] trait, a section's hooks for each output (default: not in it).
//! - [`sections`]: one module per section of a report, its data beside its output in every
//!   format, and their one registration (`sections::SECTIONS`: where each output places each
//!   section), which every renderer iterates — [`standings`] (who won each discipline, by how
//!   much and whether it is real; the ranking by points with rank intervals and a composite
//!   against a baseline), [`efficiency`] (each filesystem against its bare device, `raw`),
//!   [`aging`] (aged against fresh: the penalty, and whether aging changes a ranking),
//!   [`then_now`] (a study's published figures and claims beside the run's, with a verdict
//!   per claim; [`study_points`]: a study's own ranking), [`durability`] (the promises each
//!   configuration kept when it was cut, and beside each discipline's fastest the fastest that
//!   kept them all), [`marks`] (the samples the host disturbed or that did not settle) and
//!   [`not_measured`].
//! - [`text`]: numbers and text as every format writes them (one formatter of figures, names
//!   made safe for a terminal or Markdown, the terminal's layout within 120 columns);
//!   [`compare`]: a figure against another, paired by round or by Welch.
//! - [`export`]: the [`Exporter`] trait (a renderer of findings), [`Json`] (`fsbench.run` v2,
//!   with the standings), [`Csv`] (v5) and the long-form [`SeriesCsv`] (one row per point of
//!   a sample's series).
//! - [`html`]: one self-contained HTML report ([`Html`]), the answer first, with inline SVG
//!   [`charts`] (one colour per configuration throughout).
//! - [`over_time`]: a sample along its time axis (the rate of its phases with their latency
//!   percentiles, the host's memory, devices and CPUs beneath), for a representative
//!   repetition or every one, and what its assessment says of its figures (not steady,
//!   saturated, disturbed by the host).
//! - [`markdown`]: the Markdown summary ([`Markdown`]) for an issue or a mail.
//! - [`versus`]: run against run (`fsbench compare`): ratios, intervals, regressions, and its
//!   section of the HTML report.
//! - [`xlsx`]: the workbook ([`Xlsx`]): a workload's grid as iozone's sheets, the verdict,
//!   the ranking, what was not measured, a summary and a tidy sheet.
//! - [`terminal`]: the campaign summary ([`Terminal`]), within 120 columns.
//! - [`target`]: a prepared target in a few lines (device, mkfs, mount, scheduler, cache, fsck).
//! - [`grid`]: one run's results as the grids its workload lays out (the matrix's iozone
//!   blocks).

pub mod aged;
pub mod charts;
pub mod compare;
pub mod export;
pub mod findings;
pub mod grid;
pub mod html;
pub mod markdown;
pub mod model;
pub mod over_time;
pub mod section;
pub mod sections;
pub mod study_points;
pub mod tables;
pub mod target;
pub mod terminal;
pub mod text;
pub mod versus;
pub mod xlsx;

pub use sections::{aging, durability, efficiency, marks, not_measured, standings, then_now};

pub use export::{Csv, Exporter, Json, SeriesCsv};
pub use findings::Findings;
pub use html::Html;
pub use markdown::Markdown;
pub use model::ReportModel;
pub use section::Section;
pub use terminal::Terminal;
pub use xlsx::Xlsx;

#[cfg(test)]
mod tests;
