//! The sections of a report, each one module with its data and its output in every format it
//! appears in (the terminal summary, the Markdown, the HTML and, where it has one, the
//! workbook's sheet and the JSON): a renderer lays the sections out and each writes itself.
//!
//! - [`standings`]: the verdict per discipline and the ranking.
//! - [`efficiency`]: each filesystem against its bare device.
//! - [`aging`]: aged against fresh.
//! - [`marks`]: the samples whose figures the host disturbed or that did not settle.
//! - [`then_now`]: a study's figures and claims then and now.
//! - [`not_measured`]: what was not measured, and why.

pub mod aging;
pub mod efficiency;
pub mod marks;
pub mod not_measured;
pub mod standings;
pub mod then_now;

/// The macros every section's HTML draws with (a configuration's swatch), imported by each
/// section's template and by the page's.
pub const MACROS: &str = include_str!("macros.html.j2");

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
