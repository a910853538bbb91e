//! What a section of a report is: the [`Section`] trait, one hook per output a section can
//! appear in (the terminal summary, the Markdown, the HTML page, the workbook, the JSON), each
//! reading the [`Findings`] and doing nothing unless the section appears there; and what the
//! sections' HTML draws with (`render_html`, the [`MACROS`], a configuration's [`colour`]).
//! The sections and where each output places them: `crate::sections`.

use crate::charts;
use crate::findings::Findings;
use crate::model::ReportModel;
use rust_xlsxwriter::{Workbook, XlsxError};
use serde::Serialize;
use std::io::{self, Write};

/// One section of a report: its output in every format it appears in, from the findings.
/// Every hook but [`Section::name`] does nothing by default (the section is not in that
/// output); a renderer calls the hooks of the sections registered in `crate::sections`, in
/// the order it places them.
pub trait Section: Sync {
    /// Its name, as the registration lists it.
    fn name(&self) -> &'static str;

    /// Its part of the terminal summary.
    fn terminal(&self, _findings: &Findings, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Its part of the Markdown summary.
    fn markdown(&self, _findings: &Findings, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Its fragment of the HTML page (`render_html`), placed as it is; None when it is not in
    /// the page (an empty fragment is: the page keeps its place).
    fn html(&self, _findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        Ok(None)
    }

    /// Its sheets of the workbook, named with `sheet_name(.., used)`.
    fn workbook(
        &self,
        _findings: &Findings,
        _workbook: &mut Workbook,
        _used: &mut Vec<String>,
    ) -> Result<(), XlsxError> {
        Ok(())
    }

    /// Its member of the JSON document (after the model's), if it has one.
    fn json(&self, _findings: &Findings) -> serde_json::Result<Option<JsonMember>> {
        Ok(None)
    }
}

/// A member of the JSON document: its key and its value as `serde_json` writes it pretty.
#[derive(Debug)]
pub struct JsonMember {
    pub key: &'static str,
    pub value: String,
}

impl JsonMember {
    /// `value` under `key`.
    pub fn new(key: &'static str, value: &impl Serialize) -> serde_json::Result<JsonMember> {
        Ok(JsonMember {
            key,
            value: serde_json::to_string_pretty(value)?,
        })
    }
}

/// The macros every section's HTML draws with (a configuration's swatch), imported by each
/// section's template and by the page's.
pub const MACROS: &str = include_str!("sections/macros.html.j2");

/// One section's HTML fragment: its template (which may import the macros) rendered with its
/// context, everything it shows escaped; the page places it as it is.
pub(crate) fn render_html(
    name: &'static str,
    template: &'static str,
    context: minijinja::Value,
) -> Result<String, minijinja::Error> {
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("macros.html.j2", MACROS)?;
    env.add_template(name, template)?;
    env.get_template(name)?.render(context)
}

/// A configuration's colour in the HTML; none for one never measured (it is in no chart).
pub fn colour(model: &ReportModel, label: &str) -> String {
    model
        .configurations
        .iter()
        .position(|c| c.label == label && c.measured)
        .map(charts::colour_hex)
        .unwrap_or_default()
}
