//! What a report finds in its model, each finding computed at most once and read by every
//! section of every renderer: a finding is any type that can [`Find`] itself from the
//! [`Findings`] (the standings, each filesystem against its bare device, a study's figures then
//! and now, the marks of the samples' series, a section's own view), found when a section
//! first asks for it and kept — a new section's finding needs no field here. Aged against
//! fresh and what was not measured are found as the model is built (`ReportModel::aging`,
//! `ReportModel::not_measured`).

use crate::model::ReportModel;
use fsbench_model::Category;
use std::any::Any;
use std::cell::OnceCell;
use std::collections::BTreeMap;

/// How the standings are asked for (`crate::standings`), the one choice a reader makes of what
/// a report finds.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The configuration label the composite is relative to (default: the first one).
    pub baseline: Option<String>,
    /// Category weights (default 1 each).
    pub weights: BTreeMap<Category, f64>,
}

/// A finding: found from the model and the other findings it reads (`findings.get::<U>()`,
/// never itself), once per [`Findings`].
pub trait Find: Any {
    fn find(findings: &Findings) -> Self;
}

/// The findings of one model, for one set of standings options. Each is found when a renderer
/// first reads it (a CSV export reads none), then kept: build one `Findings` and render every
/// format from it, and nothing is found twice.
#[derive(Debug)]
pub struct Findings<'a> {
    model: &'a ReportModel,
    options: Options,
    found: Found,
}

/// The findings found so far, one a cell: a chain of cells that only grows, so a finding
/// stays where it is while others are found (one may read another as it is found).
#[derive(Debug, Default)]
struct Found {
    value: OnceCell<Box<dyn Any>>,
    next: OnceCell<Box<Found>>,
}

impl<'a> Findings<'a> {
    /// The findings of `model`, its standings ranked with `options` (baseline, weights).
    pub fn new(model: &'a ReportModel, options: &Options) -> Findings<'a> {
        Findings {
            model,
            options: options.clone(),
            found: Found::default(),
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

    /// The finding `T`, found now if it was not yet.
    pub fn get<T: Find>(&self) -> &T {
        let mut cell = &self.found;
        while let Some(value) = cell.value.get() {
            if let Some(found) = value.downcast_ref::<T>() {
                return found;
            }
            cell = cell.next.get_or_init(Box::default);
        }
        let value: Box<dyn Any> = Box::new(T::find(self));
        // Finding it may have found others, in the cells from here on.
        while cell.value.get().is_some() {
            cell = cell.next.get_or_init(Box::default);
        }
        cell.value
            .get_or_init(|| value)
            .downcast_ref()
            .expect("the finding just kept")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static FOUND: Cell<u32> = const { Cell::new(0) };
    }

    /// A finding that counts how often it was found.
    struct Counted(u32);

    impl Find for Counted {
        fn find(_: &Findings) -> Counted {
            FOUND.with(|n| n.set(n.get() + 1));
            Counted(7)
        }
    }

    /// A finding that reads another as it is found.
    struct Twice(u32);

    impl Find for Twice {
        fn find(findings: &Findings) -> Twice {
            Twice(findings.get::<Counted>().0 * 2)
        }
    }

    /// Each finding is found once, however often and in whatever order it is read, one while
    /// another is found too, and what was read stays where it was.
    #[test]
    fn a_finding_is_found_once_and_may_read_another() {
        let model = ReportModel::from_runs(Vec::new());
        let findings = Findings::new(&model, &Options::default());
        FOUND.with(|n| n.set(0));
        let twice: *const Twice = findings.get::<Twice>();
        assert_eq!(findings.get::<Twice>().0, 14);
        assert_eq!(findings.get::<Counted>().0, 7);
        assert_eq!(findings.get::<String>().as_str(), "");
        assert!(std::ptr::eq(twice, findings.get::<Twice>()));
        assert_eq!(FOUND.with(Cell::get), 1);
    }

    impl Find for String {
        fn find(_: &Findings) -> String {
            String::new()
        }
    }
}
