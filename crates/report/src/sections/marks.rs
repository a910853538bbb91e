//! The host's marks: the samples whose series say a reader must know something of their
//! figures — a phase that did not settle, a saturated device, a host that disturbed them (the
//! findings' marks, `crate::over_time::marked`) — as the HTML report lists them; the verdict and
//! the heat-map mark the leaders and cells they concern (`crate::standings`).

use crate::findings::{Find, Findings};
use crate::model::ReportModel;
use crate::over_time::{Mark, MarkKind, Marked};
use crate::section::{colour, render_html, Section};
use fsbench_store::Outcome;

/// The samples whose figures the host disturbed or that did not settle, one row per sample,
/// and how many samples were watched at all (none: the section is left out).
pub fn view(
    model: &ReportModel,
    marked: &Marked,
    colour_of: &dyn Fn(&str) -> String,
) -> minijinja::Value {
    let watched = model
        .cases()
        .flat_map(|c| &c.samples)
        .filter(|s| s.status == Outcome::Ok && s.assessment.is_some())
        .count();
    let mut rows = Vec::new();
    for ((workload, label), marks) in marked {
        let mut repetitions: Vec<u32> = marks.iter().map(|(r, _)| *r).collect();
        repetitions.dedup();
        for r in repetitions {
            let of: Vec<&Mark> = marks.iter().filter(|m| m.0 == r).map(|m| &m.1).collect();
            rows.push(minijinja::context! {
                workload => workload.clone(),
                configuration => label.clone(),
                colour => colour_of(label),
                repetition => r,
                disturbed => of.iter().any(|m| m.kind == MarkKind::Disturbed),
                marks => of.iter().map(|m| m.text.clone()).collect::<Vec<_>>(),
            });
        }
    }
    minijinja::context! { watched => watched, rows => rows }
}

/// The HTML section, from its [`view`] (nothing when no sample was watched).
pub fn html(view: &minijinja::Value) -> Result<String, minijinja::Error> {
    render_html(
        "marks.html.j2",
        include_str!("marks.html.j2"),
        minijinja::context! { host => view },
    )
}

/// The page's view of the host's marks ([`view`]), for this section and the verdict's.
#[derive(Debug)]
pub struct HostMarks(pub minijinja::Value);

impl Find for HostMarks {
    fn find(findings: &Findings) -> HostMarks {
        let model = findings.model();
        HostMarks(view(model, findings.get::<Marked>(), &|label| {
            colour(model, label)
        }))
    }
}

/// The host's marks: in the HTML only.
pub struct MarksSection;

impl Section for MarksSection {
    fn name(&self) -> &'static str {
        "marks"
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        html(&findings.get::<HostMarks>().0).map(Some)
    }
}
