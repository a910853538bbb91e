//! The sections of a report, each one module with its data and its output in every format it
//! appears in (the terminal summary, the Markdown, the HTML and, where it has one, the
//! workbook's sheet and the JSON): a renderer lays the sections out and each writes itself.
//!
//! - [`standings`]: the verdict per discipline and the ranking.
//! - [`efficiency`]: each filesystem against its bare device.
//! - [`aging`]: aged against fresh.
//! - [`then_now`]: a study's figures and claims then and now.
//! - [`not_measured`]: what was not measured, and why.

pub mod aging;
pub mod efficiency;
pub mod not_measured;
pub mod standings;
pub mod then_now;
