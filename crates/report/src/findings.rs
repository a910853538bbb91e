//! What a report finds in its model, each finding computed at most once and read by every
//! section of every renderer: the standings (ranked with the options asked for), each
//! filesystem against its bare device, a study's figures then and now, and the marks of the
//! samples' series. Aged against fresh and what was not measured are found as the model is
//! built (`ReportModel::aging`, `ReportModel::not_measured`); [`Findings`] hands them on.

use crate::efficiency::Efficiency;
use crate::model::{NotMeasured, ReportModel};
use crate::over_time::{self, Marked};
use crate::sections::aging::AgingReport;
use crate::standings::{Options, Standings};
use crate::then_now::ThenNow;
use std::cell::OnceCell;

/// The findings of one model, for one set of standings options. Each is computed when a
/// renderer first reads it (a CSV export reads none), then kept: build one `Findings` and
/// render every format from it, and nothing is computed twice.
#[derive(Debug)]
pub struct Findings<'a> {
    model: &'a ReportModel,
    options: Options,
    standings: OnceCell<Standings>,
    efficiency: OnceCell<Vec<Efficiency>>,
    then_now: OnceCell<ThenNow>,
    marked: OnceCell<Marked>,
}

impl<'a> Findings<'a> {
    /// The findings of `model`, its standings ranked with `options` (baseline, weights).
    pub fn new(model: &'a ReportModel, options: &Options) -> Findings<'a> {
        Findings {
            model,
            options: options.clone(),
            standings: OnceCell::new(),
            efficiency: OnceCell::new(),
            then_now: OnceCell::new(),
            marked: OnceCell::new(),
        }
    }

    /// The model they were found in.
    pub fn model(&self) -> &'a ReportModel {
        self.model
    }

    /// The options the standings are ranked with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Who won each discipline and the ranking (`crate::standings`).
    pub fn standings(&self) -> &Standings {
        self.standings
            .get_or_init(|| Standings::of(self.model, &self.options))
    }

    /// Each filesystem's share of its bare device (`crate::efficiency`; empty without one).
    pub fn efficiency(&self) -> &[Efficiency] {
        self.efficiency.get_or_init(|| Efficiency::of(self.model))
    }

    /// A study's figures and claims then and now (`crate::then_now`; empty without one).
    pub fn then_now(&self) -> &ThenNow {
        self.then_now.get_or_init(|| ThenNow::of(self.model))
    }

    /// The marks of the samples, per workload and configuration (`over_time::marked`).
    pub fn marked(&self) -> &Marked {
        self.marked.get_or_init(|| over_time::marked(self.model))
    }

    /// Aged against fresh, found as the model was built.
    pub fn aging(&self) -> &'a AgingReport {
        &self.model.aging
    }

    /// What was not measured, found as the model was built.
    pub fn not_measured(&self) -> &'a [NotMeasured] {
        &self.model.not_measured
    }
}
