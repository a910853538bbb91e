//! The report model: stored runs read once into what every exporter renders — each case with
//! its typed axes and its samples' typed results, the configurations (every axis but the
//! workload: one label and one colour each, throughout a report), the summary tables (one per
//! workload kind, metric and unit; rows are result dimensions, columns are cases, cells are
//! means with their confidence intervals) and what was not measured: per case and outcome
//! (`problems`) and per configuration and reason (`not_measured`).

use crate::aged::AgingReport;
use crate::tables::{axis_value, configurations, not_measured, tables};
pub use crate::tables::{
    CaseView, Cell, Column, Configuration, NotMeasured, Problem, Row, RunView, Table,
};
use fsbench_model::CaseAxis;
use fsbench_store::{Outcome, Sample, Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;

/// The JSON export's schema name and version (docs/results-schema.md).
pub const SCHEMA: &str = "fsbench.run";
pub const SCHEMA_VERSION: u32 = 2;

/// One or more stored runs, ready to render.
#[derive(Debug, Clone, Serialize)]
pub struct ReportModel {
    pub schema: &'static str,
    pub schema_version: u32,
    /// Each run's row with its cases (in position order) and their samples.
    pub runs: Vec<RunView>,
    /// Every configuration (every axis but the workload) of every run, in order of appearance:
    /// `CaseView::configuration` and `Column::configuration` index it.
    pub configurations: Vec<Configuration>,
    /// The summary: one table per (workload kind, metric, unit), in order of appearance.
    pub tables: Vec<Table>,
    /// Samples that are not `ok`, per case and outcome, with the first reason.
    pub problems: Vec<Problem>,
    /// The same per configuration, outcome and reason, with the workloads it concerns: one
    /// line each in every report.
    pub not_measured: Vec<NotMeasured>,
    /// Aged against fresh: each aged configuration's penalty and whether aging changes the
    /// rankings (`crate::aged::AgingReport`); absent when nothing was aged.
    #[serde(skip_serializing_if = "AgingReport::is_empty")]
    pub aging: AgingReport,
}

impl ReportModel {
    /// Reads the runs (in the order given) from the store and builds the tables.
    pub fn load(store: &Store, runs: &[i64]) -> Result<ReportModel, StoreError> {
        let mut views = Vec::with_capacity(runs.len());
        for &id in runs {
            let data = store.load(id)?;
            let cases = data
                .cases
                .into_iter()
                .map(|c| CaseView {
                    run_id: id,
                    id: c.case.id,
                    axes: CaseAxis::ALL
                        .into_iter()
                        .map(|axis| (axis, axis_value(&c.case.config, &c.case.workload, axis)))
                        .collect(),
                    kind: c.case.workload["kind"].as_str().unwrap_or("?").to_string(),
                    key: c.case.key,
                    position: c.case.position,
                    config: c.case.config,
                    workload: c.case.workload,
                    samples: c.samples,
                    configuration: 0,
                })
                .collect();
            views.push(RunView {
                run: data.run,
                cases,
            });
        }
        Ok(ReportModel::from_runs(views))
    }

    /// The model of runs already read (their cases' `configuration` is set here).
    pub fn from_runs(mut runs: Vec<RunView>) -> ReportModel {
        let configurations = configurations(&mut runs);
        let tables = tables(&runs, &configurations);
        let aging = AgingReport::of(&runs, &tables);
        let mut problems: BTreeMap<(i64, String, Outcome), (usize, String)> = BTreeMap::new();
        for case in runs.iter().flat_map(|r| &r.cases) {
            for s in case.samples.iter().filter(|s| s.status != Outcome::Ok) {
                problems
                    .entry((case.run_id, case.key.clone(), s.status))
                    .or_insert((0, s.reason.clone().unwrap_or_default()))
                    .0 += 1;
            }
        }
        let problems: Vec<Problem> = problems
            .into_iter()
            .map(|((run_id, case_key, status), (count, reason))| Problem {
                run_id,
                case_key,
                status,
                count,
                reason,
            })
            .collect();
        let not_measured = not_measured(&runs, &configurations);
        ReportModel {
            schema: SCHEMA,
            schema_version: SCHEMA_VERSION,
            aging,
            runs,
            configurations,
            tables,
            problems,
            not_measured,
        }
    }

    /// The names the plans gave the workloads, in order of appearance.
    pub fn workload_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for case in self.cases() {
            let name = case.axis(CaseAxis::Workload);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// What the report compares, in one line: "6 configurations (ext2, ext3, …) × 5 workloads
    /// (stream, files, …), 5 rounds; not measured: jfs, reiserfs".
    pub fn compared(&self) -> String {
        let measured: Vec<&str> = self
            .configurations
            .iter()
            .filter(|c| c.measured)
            .map(|c| c.label.as_str())
            .collect();
        let missing: Vec<&str> = self
            .configurations
            .iter()
            .filter(|c| !c.measured)
            .map(|c| c.label.as_str())
            .collect();
        let names = self.workload_names();
        let rounds = self
            .cases()
            .flat_map(|c| &c.samples)
            .filter(|s| s.status == Outcome::Ok)
            .map(|s| s.repetition)
            .max()
            .unwrap_or(0);
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let mut text = format!(
            "{} ({}) × {} ({}), {} each",
            plural(measured.len(), "configuration", "configurations"),
            measured.join(", "),
            plural(names.len(), "workload", "workloads"),
            names.join(", "),
            plural(rounds as usize, "round", "rounds"),
        );
        if !missing.is_empty() {
            text.push_str(&format!("; not measured: {}", missing.join(", ")));
        }
        text
    }

    /// Reads the series of every sample (`only`: of that sample alone) into the model: the
    /// exports carry them; [`ReportModel::load`] leaves them out (a long campaign's are large).
    pub fn load_series(&mut self, store: &Store, only: Option<i64>) -> Result<(), StoreError> {
        self.load_series_where(store, |s| only.is_none_or(|id| id == s.id))
    }

    /// Reads the series of the samples `wanted` picks (the HTML report's: those it draws).
    pub fn load_series_where(
        &mut self,
        store: &Store,
        wanted: impl Fn(&Sample) -> bool,
    ) -> Result<(), StoreError> {
        for case in self.runs.iter_mut().flat_map(|r| &mut r.cases) {
            for sample in &mut case.samples {
                if wanted(sample) {
                    sample.series = store.series(sample.id)?;
                }
            }
        }
        Ok(())
    }

    /// Every sample whose id is `id`, with its case (None: no such sample in the model).
    pub fn sample(&self, id: i64) -> Option<(&CaseView, &Sample)> {
        self.cases()
            .find_map(|c| c.samples.iter().find(|s| s.id == id).map(|s| (c, s)))
    }

    /// Every case of every run, in order.
    pub fn cases(&self) -> impl Iterator<Item = &CaseView> {
        self.runs.iter().flat_map(|r| &r.cases)
    }

    /// The workload kinds, in order of appearance.
    pub fn kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = Vec::new();
        for case in self.cases() {
            if !kinds.contains(&case.kind.as_str()) {
                kinds.push(&case.kind);
            }
        }
        kinds
    }
}
