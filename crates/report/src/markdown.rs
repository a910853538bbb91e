//! The Markdown summary, for pasting into an issue or a mail, the answer first: what was
//! compared, each discipline's verdict (the winner or the group that ties for first, and the
//! lead over the rest with its 95 % interval), the ranking with its rank intervals, a study's
//! published figures beside the run's (crate::then_now), then the provenance, one row per
//! configuration, and what was not measured (one row per configuration and reason).

use crate::efficiency::Efficiency;
use crate::export::Exporter;
use crate::model::{CaseView, ReportModel};
use crate::standings::{leaders_text, value_text, Options, Standings};
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
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        let standings = Standings::of(model, &self.options);
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
        if !standings.disciplines.is_empty() {
            writeln!(out, "## Verdict\n")?;
            writeln!(
                out,
                "Per discipline: the winner, or those that tie for first (no difference can be claimed between them), with the mean of its repetitions, and the lead over the best of the rest with its 95 % interval.\n"
            )?;
            writeln!(
                out,
                "| discipline | winner, or those that tie for first | value | lead over the rest (95 % CI) |\n|---|---|---:|---|"
            )?;
            for d in &standings.disciplines {
                let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
                let lead = match &d.lead {
                    Some(lead) => escape(&lead.text()),
                    None if d.entries.len() == 1 => "the only one measured".into(),
                    None => "all tie: no difference can be claimed".into(),
                };
                writeln!(
                    out,
                    "| {} ({}) | {} | {} | {lead} |",
                    escape(&d.title()),
                    d.direction.phrase(),
                    escape(&leaders_text(d)),
                    value_text(d, best.mean),
                )?;
            }
            writeln!(out)?;
            if let Some((gain, n)) = standings.pairing_gain {
                writeln!(
                    out,
                    "Pairing by round: the paired intervals are {} % as wide as Welch's on the same values (median of {n} comparisons).\n",
                    fixed(gain * 100.0, 0)
                )?;
            }
            let efficiency = Efficiency::of(model);
            if !efficiency.is_empty() {
                writeln!(out, "## Efficiency\n")?;
                writeln!(
                    out,
                    "{}.\n",
                    crate::efficiency::EXPLAINED[..1].to_uppercase()
                        + &crate::efficiency::EXPLAINED[1..]
                )?;
                writeln!(out, "| figure | bare device | filesystem | share of the device (95 % CI) |\n|---|---:|---|---|")?;
                for f in &efficiency {
                    for e in &f.entries {
                        writeln!(
                            out,
                            "| {} ({}) | {} {} | {} ({}) | {} |",
                            escape(&f.title()),
                            f.direction.phrase(),
                            escape(&f.device),
                            f.value_text(f.device_mean),
                            escape(&e.label),
                            f.value_text(e.mean),
                            e.text()
                        )?;
                    }
                }
                writeln!(out)?;
            }
            writeln!(out, "## Ranking\n")?;
            let categories = standings.categories();
            writeln!(
                out,
                "Most overall points first. Rank: its 95 % interval (a bootstrap over the rounds, paired; {} resamples): 1–2 means the order between those configurations is not established. Points per placement in each discipline (with N configurations the best gets N, the last 1; ties share), per category; overall = Σ weight × mean points per discipline of the category; composite = geometric mean of each value relative to {} (above 1 is better).\n",
                standings.resamples,
                escape(standings.baseline.as_deref().unwrap_or("the baseline"))
            )?;
            write!(out, "| rank | configuration |")?;
            for c in &categories {
                write!(
                    out,
                    " {} points (weight {}) |",
                    c.name(),
                    standings.weights[c]
                )?;
            }
            writeln!(out, " overall | composite |")?;
            write!(out, "|---:|---|")?;
            for _ in &categories {
                write!(out, "---:|")?;
            }
            writeln!(out, "---:|---:|")?;
            for s in &standings.scores {
                write!(out, "| {} | {} |", s.rank.text(), escape(&s.label))?;
                for c in &categories {
                    match s.points.get(c) {
                        Some(p) => {
                            write!(out, " {} ({} disciplines) |", fixed(*p, 1), s.placed[c])?
                        }
                        None => write!(out, " - |")?,
                    }
                }
                writeln!(
                    out,
                    " {} | {} |",
                    fixed(s.overall, 2),
                    s.composite.map_or("-".into(), |c| fixed(c, 3))
                )?;
            }
            writeln!(out)?;
        }
        if !model.aging.penalties.is_empty() {
            writeln!(out, "## Aged against fresh\n")?;
            writeln!(
                out,
                "Each aged configuration against the same configuration fresh (the aging penalty: how much worse aged is), with the 95 % interval of aged / fresh; a tie: no difference can be claimed.\n"
            )?;
            writeln!(
                out,
                "| discipline | configuration | age | fresh | aged | aged vs fresh |\n|---|---|---|---:|---:|---|"
            )?;
            for p in &model.aging.penalties {
                let (factor, unit) = p.unit.display(p.fresh_mean.max(p.aged_mean));
                let value = |v: f64| format!("{} {unit}", fixed(v / factor, 3));
                writeln!(
                    out,
                    "| {} ({}) | {} | {} | {} | {} | {} |",
                    escape(&p.title()),
                    p.direction.phrase(),
                    escape(&p.configuration),
                    escape(&p.age),
                    value(p.fresh_mean),
                    value(p.aged_mean),
                    escape(&crate::standings::penalty_text(p)),
                )?;
            }
            writeln!(out)?;
            if !model.aging.rankings.is_empty() {
                writeln!(out, "### Ranking, fresh and aged\n")?;
                writeln!(
                    out,
                    "Best first; `=` joins configurations the 95 % intervals do not separate. Changed: two configurations the fresh ranking places apart are placed the other way round aged.\n"
                )?;
                writeln!(
                    out,
                    "| discipline | age | fresh | aged | changed |\n|---|---|---|---|---|"
                )?;
                for r in &model.aging.rankings {
                    writeln!(
                        out,
                        "| {} | {} | {} | {} | {} |",
                        escape(&r.title()),
                        escape(&r.age),
                        escape(&crate::standings::ranking_text(&r.fresh)),
                        escape(&crate::standings::ranking_text(&r.aged)),
                        if r.changed { "**yes**" } else { "no" }
                    )?;
                }
                writeln!(out)?;
            }
        }
        crate::then_now::write_markdown(&crate::then_now::ThenNow::of(model), out, &escape)?;
        writeln!(out, "## Configurations\n")?;
        for view in &model.runs {
            let run = &view.run;
            let host = &run.host;
            writeln!(
                out,
                "Run {}: started {}; fsbench {}; kernel {}; {} ({} CPUs); {} GiB memory.\n",
                run.id,
                escape(&run.started_at),
                escape(&run.fsbench_version),
                escape(host["kernel_release"].as_str().unwrap_or("?")),
                escape(host["cpu_model"].as_str().unwrap_or("?")),
                host["cpus"],
                fixed(
                    host["memory_bytes"].as_f64().unwrap_or(0.0) / f64::from(1u32 << 30),
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
        if !model.not_measured.is_empty() {
            writeln!(out, "## Not measured\n")?;
            writeln!(
                out,
                "| configuration | status | samples | workloads | reason |\n|---|---|---:|---|---|"
            )?;
            for n in &model.not_measured {
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    escape(&n.configuration),
                    n.status,
                    n.samples,
                    escape(&n.workloads.join(", ")),
                    escape(&n.reason.replace('\n', " "))
                )?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}
