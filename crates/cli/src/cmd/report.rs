//! `fsbench report RUN... [--html F] [--markdown F] [--xlsx F] [--series WHICH]` and `fsbench
//! compare A B...`: stored runs through the report model's exporters (the series of the
//! repetitions the HTML draws read only for it), and run against run with the verdict a CI
//! pipeline can act on (`--fail-on-regression PCT`).

use crate::cli::{CompareArgs, ReportArgs, StandingsArgs};
use crate::cmd::export::{write_all, write_to};
use crate::exit::{self, Failure};
use crate::out::say;
use crate::outfile::distinct;
use anyhow::anyhow;
use fsbench_report::over_time::{self, SeriesChoice};
use fsbench_report::standings::{Category, Options};
use fsbench_report::terminal::printable;
use fsbench_report::versus::{changes, Change};
use fsbench_report::{Exporter, Findings, Html, Markdown, ReportModel, Xlsx};
use fsbench_store::{Store, StoreError};
use std::path::{Path, PathBuf};

fn options(args: &StandingsArgs) -> Result<Options, Failure> {
    let mut weights = std::collections::BTreeMap::new();
    for w in &args.weight {
        let (name, value) = w.split_once('=').ok_or_else(|| {
            Failure::usage(anyhow!(
                "--weight {w}: give CATEGORY=W (throughput, metadata or tasks), e.g. --weight metadata=2"
            ))
        })?;
        let category = Category::parse(name.trim()).ok_or_else(|| {
            Failure::usage(anyhow!(
                "--weight {w}: unknown category '{name}': use throughput, metadata or tasks"
            ))
        })?;
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                Failure::usage(anyhow!("--weight {w}: the weight must be a number >= 0"))
            })?;
        weights.insert(category, value);
    }
    Ok(Options {
        baseline: args.baseline.clone(),
        weights,
    })
}

fn load(db: &Path, runs: &[i64]) -> Result<(Store, ReportModel), Failure> {
    let store = Store::open_existing(db).map_err(Failure::usage)?;
    let model = ReportModel::load(&store, runs).map_err(|e| match e {
        StoreError::NoSuchRun(_) => Failure::usage(e),
        other => Failure::failed(other),
    })?;
    Ok((store, model))
}

/// The baseline must name a configuration of the report (a typo would silently fall back).
fn check_baseline(model: &ReportModel, options: &Options) -> Result<(), Failure> {
    let Some(baseline) = &options.baseline else {
        return Ok(());
    };
    let labels: Vec<String> = model
        .tables
        .iter()
        .flat_map(|t| t.columns.iter().map(|c| c.label.clone()))
        .collect();
    if labels.contains(baseline) {
        return Ok(());
    }
    let mut known = labels;
    known.sort();
    known.dedup();
    Err(Failure::usage(anyhow!(
        "--baseline {baseline}: no configuration has that label; the report's are: {}",
        known.join(", ")
    )))
}

pub fn run(args: ReportArgs) -> Result<i32, Failure> {
    distinct(&[
        ("--html", args.html.as_deref()),
        ("--markdown", args.markdown.as_deref()),
        ("--xlsx", args.xlsx.as_deref()),
    ])?;
    let options = options(&args.standings)?;
    let (store, mut model) = load(&args.db.path(), &args.runs)?;
    check_baseline(&model, &options)?;
    // Series are large: read those the HTML draws, and only for it.
    let series = if args.html.is_some() {
        args.series
    } else {
        SeriesChoice::None
    };
    over_time::load(&mut model, &store, series).map_err(Failure::failed)?;
    let markdown = Markdown {
        options: options.clone(),
    };
    let html = Html {
        options: options.clone(),
        changes: Vec::new(),
        series,
    };
    let any_file = args.html.is_some() || args.markdown.is_some() || args.xlsx.is_some();
    let markdown_path = match &args.markdown {
        None if !any_file => Some(Path::new("-")),
        path => path.as_deref(),
    };
    let outputs: Vec<(&Path, &dyn Exporter)> = [
        args.html.as_deref().map(|p| (p, &html as &dyn Exporter)),
        args.xlsx.as_deref().map(|p| (p, &Xlsx as &dyn Exporter)),
        markdown_path.map(|p| (p, &markdown as &dyn Exporter)),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Found once, with the command's baseline and weights, for every output.
    let findings = Findings::new(&model, &options);
    write_all(&outputs, &findings)?;
    Ok(exit::OK)
}

fn percent(v: f64) -> String {
    format!("{:+.1} %", (v - 1.0) * 100.0)
}

fn line(c: &Change) -> String {
    let (factor, unit) = c.unit.display(c.base_mean.abs().max(c.mean.abs()));
    let ci = match (c.comparison.ci95_low, c.comparison.ci95_high) {
        (Some(lo), Some(hi)) => format!("[{} .. {}]", percent(lo), percent(hi)),
        _ => "[too few repetitions]".into(),
    };
    let verdict = if c.is_worse() {
        "worse"
    } else if c.is_better() {
        "better"
    } else if c.comparison.ci95_low.is_some() {
        "tie"
    } else {
        "unknown"
    };
    if let Some(counted) = &c.counted {
        // A count of broken promises (durability): its row says both counts whole; a ratio of
        // rates only where neither is none.
        let ratio = match (counted.before, counted.after) {
            (0, _) | (_, 0) => String::new(),
            _ => format!(": {} {ci}", percent(c.comparison.ratio)),
        };
        return format!(
            "{}  {} {}{ratio} {verdict}",
            printable(&c.case_key),
            printable(&c.workload),
            printable(&c.row),
        );
    }
    format!(
        "{}  {} {}: {:.3} -> {:.3} {unit} ({}): {} {ci} {verdict}",
        printable(&c.case_key),
        printable(&c.workload),
        printable(&c.row),
        c.base_mean / factor,
        c.mean / factor,
        c.direction.phrase(),
        percent(c.comparison.ratio),
    )
}

pub fn compare(args: CompareArgs) -> Result<i32, Failure> {
    if let Some(pct) = args.fail_on_regression {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(Failure::usage(anyhow!(
                "--fail-on-regression {pct}: give a percentage >= 0"
            )));
        }
    }
    let (_, model) = load(&args.db.path(), &args.runs)?;
    let found = changes(&model);
    if found.is_empty() {
        return Err(Failure::usage(anyhow!(
            "runs {} share no measured case: compare runs of the same plan",
            args.runs
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    say!(
        "Run {} against {} (ratio later / first, 95 % interval by Welch's test on the logs; \"tie\": no significant change):",
        args.runs[1..]
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        args.runs[0]
    )?;
    for c in &found {
        say!("{}", line(c))?;
    }
    let (worse, better) = (
        found.iter().filter(|c| c.is_worse()).count(),
        found.iter().filter(|c| c.is_better()).count(),
    );
    say!(
        "{} figures: {worse} significantly worse, {better} significantly better, {} without a significant change",
        found.len(),
        found.len() - worse - better
    )?;
    if let Some(path) = &args.html {
        let html = Html {
            changes: found.clone(),
            ..Html::default()
        };
        write_to(path, &html, &Findings::new(&model, &html.options()))?;
    }
    if let Some(pct) = args.fail_on_regression {
        let regressions: Vec<&Change> = found.iter().filter(|c| c.is_regression(pct)).collect();
        if !regressions.is_empty() {
            crate::out::note!(
                "fsbench compare: {} figures regressed by more than {pct} %: {}",
                regressions.len(),
                regressions
                    .iter()
                    .map(|c| match c.counted {
                        // Its row says the counts: "violations: none … before, 3 … now".
                        Some(_) => format!("{} {}", printable(&c.case_key), printable(&c.row)),
                        None => format!(
                            "{} {} ({:.1} % worse)",
                            printable(&c.case_key),
                            printable(&c.row),
                            c.worse_by_percent()
                        ),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            return Ok(exit::FAILED);
        }
    }
    Ok(exit::OK)
}

/// Where `fsbench run` writes its HTML report: next to the database, named by the run.
pub fn report_path(db: &Path, run: i64) -> PathBuf {
    db.parent()
        .unwrap_or(Path::new("."))
        .join(format!("report-run-{run}.html"))
}
