//! The Markdown summary, for pasting into an issue or a mail, the answer first: what was
//! compared, each discipline's verdict (the winner or the group that ties for first, and the
//! lead over the rest with its 95 % interval), the ranking with its rank intervals, a study's
//! published figures beside the run's (crate::then_now), then the provenance, one row per
//! configuration, and what was not measured (one row per configuration and reason).

use crate::export::Exporter;
use crate::findings::Findings;
use crate::findings::Options;
use crate::model::CaseView;
use crate::sections::{self, Output, Part};
use crate::text::{escape_markdown as escape, fixed};
use fsbench_store::Outcome;
use std::io::{self, Write};

/// The Markdown exporter, with the standings' options (baseline, weights).
#[derive(Debug, Clone, Default)]
pub struct Markdown {
    pub options: Options,
}

/// Options as given (mkfs, mount), escaped; "(default)" when there are none.
fn options(text: &str) -> String {
    if text.is_empty() {
        "(default)".into()
    } else {
        escape(text)
    }
}

impl Exporter for Markdown {
    fn options(&self) -> Options {
        self.options.clone()
    }

    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        let model = findings.model();
        for view in &model.runs {
            let run = &view.run;
            writeln!(
                out,
                "# fsbench report: run {} \"{}\" ({}{})\n",
                run.id,
                escape(&run.plan_name),
                run.status,
                view.conditions_note()
            )?;
        }
        writeln!(out, "**Compared:** {}.\n", escape(&model.compared()))?;
        let answered = sections::answered(findings);
        let placed = sections::ordered(Output::Markdown);
        for p in placed.iter().filter(|p| p.part != Part::Tail) {
            if p.part != Part::Answer || answered {
                p.section.markdown(findings, out)?;
            }
        }
        writeln!(out, "## Configurations\n")?;
        for view in &model.runs {
            let run = &view.run;
            let host = fsbench_model::records::HostRecord::of(&run.host);
            writeln!(
                out,
                "Run {}: started {}; fsbench {}; kernel {}; {} ({} CPUs); {} GiB memory.\n",
                run.id,
                escape(&run.started_at),
                escape(&run.fsbench_version),
                escape(host.kernel_release.as_deref().unwrap_or("?")),
                escape(host.cpu_model.as_deref().unwrap_or("?")),
                host.cpus.map_or("null".to_string(), |n| n.to_string()),
                fixed(
                    host.memory_bytes.map_or(0.0, |m| m as f64) / f64::from(1u32 << 30),
                    1
                ),
            )?;
        }
        writeln!(
            out,
            "| configuration | filesystem | mkfs options | mount options | scheduler | cache | samples ok |\n|---|---|---|---|---|---|---|"
        )?;
        for (i, configuration) in model.configurations.iter().enumerate() {
            let cases: Vec<&CaseView> = model.cases().filter(|c| c.configuration == i).collect();
            let Some(first) = cases.first() else { continue };
            let c = &first.config;
            let samples = cases.iter().flat_map(|c| &c.samples);
            let ok = samples.clone().filter(|s| s.status == Outcome::Ok).count();
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {ok} of {} |",
                escape(&configuration.label),
                escape(&c.filesystem),
                options(&c.mkfs_options),
                options(&c.mount_options),
                escape(c.scheduler.as_deref().unwrap_or("default")),
                escape(c.cache.name()),
                samples.count(),
            )?;
        }
        writeln!(out)?;
        for p in placed.iter().filter(|p| p.part == Part::Tail) {
            p.section.markdown(findings, out)?;
        }
        Ok(())
    }
}
