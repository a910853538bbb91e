//! Durability: per configuration, what the `durability` workload found when it cut the
//! filesystem — the cuts, the promises broken (in all and by kind), the recovery time and the
//! filesystem check, summed over the samples, with a few violations and the command that
//! replays each; the configurations that could not be cut, with why. Also what the verdict and
//! the heat-map read of it: whether a configuration kept every promise ([`Promise`]).

use crate::findings::{Find, Findings};
use crate::model::{CaseView, ReportModel};
use crate::section::{colour, render_html, JsonMember, Section};
use crate::text::{
    escape_markdown as escape, heading, printable, say, sheet_name, shell_word, write_rows,
};
use fsbench_model::{Outcome, Unit};
use fsbench_workload::durability::{oracle::Kind, BY_KIND};
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use serde::Serialize;
use std::io::{self, Write};

/// The workload kind whose results this section reads.
pub const KIND: &str = "durability";
/// Its main figure: promises broken over every cut.
pub const VIOLATIONS: &str = "violations";
/// Cuts made and checked.
pub const CUTS: &str = "cuts";
/// Crash states made and checked (power cuts).
pub const CRASH_STATES: &str = fsbench_workload::durability::CRASH_STATES.name;
/// Violations shown with their sequence, per configuration.
const EXAMPLES: usize = 3;

/// Every configuration the durability workload ran on: those it cut and checked, and those it
/// could not.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Durability {
    pub checked: Vec<Checked>,
    pub not_checked: Vec<NotChecked>,
}

/// One configuration's durability workload, its ok samples summed.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub run_id: i64,
    /// The configuration's label.
    pub configuration: String,
    /// The plan's name of the workload.
    pub workload: String,
    /// Samples with a result, and all the case's samples.
    pub samples: usize,
    pub all_samples: usize,
    pub cuts: u64,
    /// How the filesystem was cut: "shutdown" (the shutdown ioctl) or "power" (the recording
    /// device's crash states; "power, flushes ignored" when the device ignored them).
    pub cut: String,
    /// Crash states made and checked (power cuts; 0 for the shutdown cut).
    pub crash_states: u64,
    pub violations: u64,
    /// Each sample's violations, in repetition order: the spread between samples.
    pub per_sample: Vec<u64>,
    /// The kinds that occurred, with their counts, in the oracle's order.
    pub by_kind: Vec<KindCount>,
    /// Each sample's median recovery (ns): medians do not add up, so each is kept.
    pub recovery_p50: Vec<f64>,
    /// The longest recovery of any cut (ns).
    pub recovery_max: Option<f64>,
    /// Cuts after which the read-only check found errors.
    pub fsck_errors: u64,
    /// Why some cuts were not checked by a filesystem check (none: all were).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fsck_unchecked: Option<String>,
    /// The first few violations, each with the sequence that produced it.
    pub examples: Vec<Example>,
}

/// Violations of one kind.
#[derive(Debug, Clone, Serialize)]
pub struct KindCount {
    /// As a reader says it: `stale data exposed`.
    pub kind: String,
    pub count: u64,
}

/// One violation as the workload kept it, with the command that replays its sequence.
#[derive(Debug, Clone, Serialize)]
pub struct Example {
    pub repetition: u32,
    pub cut: u64,
    pub kind: String,
    pub path: String,
    pub detail: String,
    pub family: String,
    /// The crash state the violation was found in (power cuts): "after flush 2 and 1 of its 3
    /// next writes".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_state: Option<String>,
    /// The operations that break the promise, joined with "; " (as `--sequence` reads them):
    /// the minimal sequence the workload reduced it to, else all those before the cut.
    pub sequence: String,
    /// What the reduction found ("2 of 9 operations still break it …", or that a replay did
    /// not reproduce it); none when the workload did not reduce this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduction: Option<String>,
    pub replay: String,
    /// The command that writes the crash state the violation was found in to an image, from
    /// the crash bundle the run kept (`keep_states`); none when it kept none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_image: Option<String>,
}

/// A configuration the durability workload did not cut: its outcome and why.
#[derive(Debug, Clone, Serialize)]
pub struct NotChecked {
    pub run_id: i64,
    pub configuration: String,
    pub workload: String,
    pub status: Outcome,
    pub samples: usize,
    pub reason: String,
}

/// Whether a configuration kept every promise it was held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Promise {
    /// Cut and checked: no violation.
    Kept { cuts: u64 },
    /// Cut and checked: some violations.
    Broken { violations: u64, cuts: u64 },
    /// No durability result: never assumed safe.
    NotChecked,
}

impl Promise {
    /// "kept every promise in 200 cuts", "broke 12 promises in 200 cuts", "not checked".
    pub fn text(&self) -> String {
        match self {
            Promise::Kept { cuts } => format!("kept every promise in {cuts} cuts"),
            Promise::Broken { violations, cuts } => format!(
                "broke {violations} promise{} in {cuts} cuts",
                if *violations == 1 { "" } else { "s" }
            ),
            Promise::NotChecked => "not checked for durability".into(),
        }
    }
}

impl Durability {
    /// What the model's durability cases found (empty without one).
    pub fn of(model: &ReportModel) -> Durability {
        let mut out = Durability::default();
        for case in model.cases().filter(|c| c.kind == KIND) {
            let configuration = model.configurations[case.configuration].label.clone();
            match checked(case, &configuration) {
                Some(c) => out.checked.push(c),
                None => {
                    let first = case.samples.iter().find(|s| s.status != Outcome::Ok);
                    let Some(first) = first else { continue };
                    out.not_checked.push(NotChecked {
                        run_id: case.run_id,
                        configuration,
                        workload: case.axis(fsbench_model::CaseAxis::Workload).to_string(),
                        status: first.status,
                        samples: case
                            .samples
                            .iter()
                            .filter(|s| s.status == first.status)
                            .count(),
                        reason: first.reason.clone().unwrap_or_default(),
                    });
                }
            }
        }
        out
    }

    /// Nothing ran the durability workload.
    pub fn is_empty(&self) -> bool {
        self.checked.is_empty() && self.not_checked.is_empty()
    }

    /// Some configuration was cut and checked: the verdict then says which kept its promises.
    pub fn has_results(&self) -> bool {
        !self.checked.is_empty()
    }

    /// Whether the configuration `label` kept every promise, over all its durability results.
    pub fn promise(&self, label: &str) -> Promise {
        let mine: Vec<&Checked> = self
            .checked
            .iter()
            .filter(|c| c.configuration == label)
            .collect();
        if mine.is_empty() {
            return Promise::NotChecked;
        }
        let cuts = mine.iter().map(|c| c.cuts).sum();
        match mine.iter().map(|c| c.violations).sum() {
            0 => Promise::Kept { cuts },
            violations => Promise::Broken { violations, cuts },
        }
    }

    /// Why `label` was not checked, when the workload ran on it and ended otherwise.
    pub fn why_not(&self, label: &str) -> Option<&NotChecked> {
        self.not_checked.iter().find(|n| n.configuration == label)
    }
}

impl Find for Durability {
    fn find(findings: &Findings) -> Durability {
        Durability::of(findings.model())
    }
}

/// A case's ok samples summed; None when none has a result.
fn checked(case: &CaseView, configuration: &str) -> Option<Checked> {
    let figure = |r: &fsbench_model::ResultRecord, metric: &str| {
        r.measurements
            .iter()
            .find(|m| m.metric == metric)
            .map(|m| m.value)
    };
    let mut c = Checked {
        run_id: case.run_id,
        configuration: configuration.to_string(),
        workload: case.axis(fsbench_model::CaseAxis::Workload).to_string(),
        samples: 0,
        all_samples: case.samples.len(),
        cuts: 0,
        cut: String::new(),
        crash_states: 0,
        violations: 0,
        per_sample: Vec::new(),
        by_kind: Vec::new(),
        recovery_p50: Vec::new(),
        recovery_max: None,
        fsck_errors: 0,
        fsck_unchecked: None,
        examples: Vec::new(),
    };
    let mut kinds = [0u64; BY_KIND.len()];
    for sample in case.samples.iter().filter(|s| s.status == Outcome::Ok) {
        let Some(result) = sample
            .results
            .iter()
            .find(|r| figure(r, VIOLATIONS).is_some())
        else {
            continue;
        };
        let count = |metric: &str| figure(result, metric).unwrap_or(0.0).max(0.0).round() as u64;
        c.samples += 1;
        c.cuts += count(CUTS);
        c.crash_states += count(CRASH_STATES);
        if c.cut.is_empty() {
            c.cut = cut_of(result).to_string();
        }
        let violations = count(VIOLATIONS);
        c.violations += violations;
        c.per_sample.push(violations);
        for (k, def) in BY_KIND.iter().enumerate() {
            kinds[k] += count(def.name);
        }
        c.fsck_errors += count(BY_KIND[6].name);
        if let Some(p50) = figure(result, "recovery_p50") {
            c.recovery_p50.push(p50);
        }
        if let Some(max) = figure(result, "recovery_max") {
            c.recovery_max = Some(c.recovery_max.map_or(max, |m: f64| m.max(max)));
        }
        if let Some(why) = result.attributes.get("fsck").and_then(|v| v.as_str()) {
            c.fsck_unchecked.get_or_insert_with(|| why.to_string());
        }
        let kept = result
            .attributes
            .get("violation_list")
            .and_then(|v| v.as_array());
        for v in kept.into_iter().flatten() {
            if c.examples.len() >= EXAMPLES {
                break;
            }
            let cut = v["cut"].as_u64().unwrap_or(0);
            // One per cut: the violations of one cut share their sequence.
            if c.examples
                .iter()
                .any(|e| e.repetition == sample.repetition && e.cut == cut)
            {
                continue;
            }
            let text = |key: &str| v[key].as_str().unwrap_or("").to_string();
            let kept_as = if v["minimal"].is_array() {
                "minimal"
            } else {
                "sequence"
            };
            let steps: Vec<&str> = v[kept_as]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str())
                .collect();
            let sequence = steps.join("; ");
            c.examples.push(Example {
                repetition: sample.repetition,
                cut,
                kind: text("kind"),
                path: text("path"),
                detail: text("detail"),
                family: text("family"),
                crash_state: v["crash_state"].as_str().map(str::to_string),
                state_image: v["bundle"].as_str().map(|bundle| {
                    format!(
                        "fsbench crash-state {} --state {} --to state.img",
                        shell_word(bundle),
                        v["crash_state_index"].as_u64().unwrap_or(0)
                    )
                }),
                replay: replay(case, cut_of(result), &sequence, &text("kind")),
                sequence,
                reduction: v["reduction"].as_str().map(str::to_string),
            });
        }
    }
    if c.samples == 0 {
        return None;
    }
    c.by_kind = Kind::ALL
        .iter()
        .zip(kinds)
        .filter(|(_, n)| *n > 0)
        .map(|(k, count)| KindCount {
            kind: k.name().to_string(),
            count,
        })
        .collect();
    Some(c)
}

/// How a result's filesystem was cut, from its `cut` attribute: "shutdown" (also for results
/// from before the power cut, which have none), "power", or "power, flushes ignored".
fn cut_of(result: &fsbench_model::ResultRecord) -> &'static str {
    let said = result
        .attributes
        .get("cut")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    match said {
        s if s.starts_with("power cut") && s.contains("ignoring flushes") => {
            "power, flushes ignored"
        }
        s if s.starts_with("power cut") => "power",
        _ => "shutdown",
    }
}

/// The command that runs `sequence` on the case's filesystem with its options, cut after its
/// last operation (the sequence kept is what ran before the cut). Stale data shows only where
/// the blocks a file is given held other data before: on a fresh filesystem the blocks are
/// zeros until the run's own churn has freed some, so a stale-data violation is replayed on a
/// small aged filesystem, where it shows at once.
fn replay(case: &CaseView, cut: &str, sequence: &str, kind: &str) -> String {
    let config = &case.config;
    let mut command = format!("fsbench durability --fs {}", shell_word(&config.filesystem));
    if !config.mkfs_options.is_empty() {
        command.push_str(&format!(
            " --mkfs-options {}",
            shell_word(&config.mkfs_options)
        ));
    }
    if !config.mount_options.is_empty() {
        command.push_str(&format!(
            " --mount-options {}",
            shell_word(&config.mount_options)
        ));
    }
    if kind == Kind::StaleData.name() {
        command.push_str(" --device image:1G --age 30");
    }
    if cut.starts_with("power") {
        command.push_str(" --cut power");
    }
    if cut.ends_with("ignored") {
        command.push_str(" --flushes ignored");
    }
    format!("{command} --cut-at end --sequence {}", shell_word(sequence))
}

/// A duration in the unit it reads best in: "4.93 ms".
fn duration(ns: f64) -> String {
    let (factor, unit) = Unit::Nanos.display(ns);
    format!("{} {unit}", crate::text::significant(ns / factor))
}

impl Checked {
    /// "2 samples: 5, 7" (the spread between samples), or "1 sample"; "of 3" when some failed.
    pub fn samples_text(&self) -> String {
        let of = if self.all_samples > self.samples {
            format!(" of {}", self.all_samples)
        } else {
            String::new()
        };
        if self.samples == 1 {
            return format!("1 sample{of}");
        }
        let spread = if self.per_sample.len() <= 6 {
            self.per_sample
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            let (lo, hi) = (
                self.per_sample.iter().min().copied().unwrap_or(0),
                self.per_sample.iter().max().copied().unwrap_or(0),
            );
            format!("{lo} to {hi} each")
        };
        format!("{} samples{of}: {spread}", self.samples)
    }

    /// "stale data exposed 12, lost fsync'd data 1", or "none".
    pub fn kinds_text(&self) -> String {
        if self.by_kind.is_empty() {
            return "none".into();
        }
        self.by_kind
            .iter()
            .map(|k| format!("{} {}", k.kind, k.count))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The median recovery: one sample's, or the range of the samples' medians ("4.93 ms to
    /// 22.9 ms": medians of different samples do not combine into one).
    pub fn p50_text(&self) -> String {
        let lo = self
            .recovery_p50
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let hi = self.recovery_p50.iter().copied().fold(0.0, f64::max);
        match self.recovery_p50.len() {
            0 => "-".into(),
            1 => duration(lo),
            _ if duration(lo) == duration(hi) => duration(lo),
            _ => format!("{} to {}", duration(lo), duration(hi)),
        }
    }

    /// The longest recovery.
    pub fn max_text(&self) -> String {
        self.recovery_max.map_or("-".into(), duration)
    }

    /// Whether the filesystem was cut by power (the recording device's crash states).
    pub fn power(&self) -> bool {
        self.cut.starts_with("power")
    }

    /// What a check was made after: "cuts", or "crash states" for a power cut.
    fn checked_after(&self) -> (u64, &'static str) {
        match self.power() {
            true => (self.crash_states, "crash states"),
            false => (self.cuts, "cuts"),
        }
    }

    /// "clean after every cut", "errors after 2 of 200 cuts", "errors in 3 of 410 crash
    /// states" (an unmountable state counts), "not run: ...".
    pub fn fsck_text(&self) -> String {
        let (of, what) = self.checked_after();
        match (&self.fsck_unchecked, self.fsck_errors) {
            (_, n) if n > 0 && self.power() => format!("errors in {n} of {of} {what}"),
            (_, n) if n > 0 => format!("errors after {n} of {of} {what}"),
            (Some(why), _) => format!("not run: {why}"),
            (None, _) if self.power() => "clean in every crash state".into(),
            (None, _) => "clean after every cut".into(),
        }
    }

    /// "0 violations in 200 cuts", or "12 violations in 20 power cuts (410 crash states)".
    pub fn violations_text(&self) -> String {
        let states = match self.power() {
            true => format!(" ({} crash states)", self.crash_states),
            false => String::new(),
        };
        format!(
            "{} violation{} in {} {}{states}",
            self.violations,
            if self.violations == 1 { "" } else { "s" },
            self.cuts,
            self.cut_text(),
        )
    }

    /// "cuts", "power cuts" or "power cuts, flushes ignored," as counted.
    fn cut_text(&self) -> &'static str {
        match self.cut.as_str() {
            "power" => "power cuts",
            "power, flushes ignored" => "power cuts (flushes ignored)",
            _ => "cuts",
        }
    }

    /// The crash states checked, or "-" for the shutdown cut (it makes none).
    pub fn crash_states_text(&self) -> String {
        match self.power() {
            true => self.crash_states.to_string(),
            false => "-".into(),
        }
    }
}

impl NotChecked {
    /// Its configuration's name, with its workload's when the report has several durability
    /// workloads (a configuration cut by power and not by the shutdown ioctl is both checked
    /// and not).
    pub fn label(&self, several_workloads: bool) -> String {
        if several_workloads {
            format!("{} ({})", self.configuration, self.workload)
        } else {
            self.configuration.clone()
        }
    }

    /// "failed ×2: the workload exited with 1: btrfs has no shutdown ioctl ...".
    pub fn text(&self) -> String {
        format!("{} ×{}: {}", self.status, self.samples, self.reason)
    }
}

impl Example {
    /// "sample 1, cut 6 (mixed): stale data exposed: B: the block at byte ... (reduced: 2 of 9
    /// operations still break it …)".
    pub fn text(&self) -> String {
        let state = self
            .crash_state
            .as_ref()
            .map(|s| format!(", crash state {s}"))
            .unwrap_or_default();
        let mut text = format!(
            "sample {}, cut {}{state} ({}): {}: {}: {}",
            self.repetition, self.cut, self.family, self.kind, self.path, self.detail
        );
        if let Some(reduction) = &self.reduction {
            text.push_str(&format!(" (reduced: {reduction})"));
        }
        text
    }
}

/// What the figures are, for every report.
pub const EXPLAINED: &str = "each configuration's filesystem cut after seeded sequences of \
    file operations — as a crash of the system would (the shutdown ioctl, the log not written \
    back), or as a power failure would (cut = power: every crash state the recording device's \
    write log can leave, at each flush and of the writes since it, each mounted) — then \
    checked with its fsck and against what POSIX and Linux promise \
    (docs/workloads/durability.md); summed over its samples, with each sample's count (the \
    spread). 0 violations is the only good value: a count of broken promises is not a speed, \
    and one is a fault, not noise. Recovery: the mount after a cut or of a crash state (the \
    median of each sample, and the longest)";

/// A configuration's name, with its workload's when the report has several durability workloads.
fn label(c: &Checked, several_workloads: bool) -> String {
    if several_workloads {
        format!("{} ({})", c.configuration, c.workload)
    } else {
        c.configuration.clone()
    }
}

fn several_workloads(d: &Durability) -> bool {
    let mut names: Vec<&str> = d
        .checked
        .iter()
        .map(|c| c.workload.as_str())
        .chain(d.not_checked.iter().map(|n| n.workload.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.len() > 1
}

/// The terminal: a line per configuration, the configurations not cut, then the violations to
/// replay.
pub fn terminal(out: &mut dyn Write, d: &Durability) -> io::Result<()> {
    if d.is_empty() {
        return Ok(());
    }
    heading(
        out,
        "Durability (per configuration, summed over its samples: promises broken when the filesystem was cut; 0 is the only good value):",
    )?;
    let several = several_workloads(d);
    let mut rows: Vec<(String, String)> = d
        .checked
        .iter()
        .map(|c| {
            let kinds = if c.by_kind.is_empty() {
                String::new()
            } else {
                format!(": {}", c.kinds_text())
            };
            let text = format!(
                "{} ({}){kinds}; recovery median {}, longest {}; fsck {}",
                c.violations_text(),
                c.samples_text(),
                c.p50_text(),
                c.max_text(),
                c.fsck_text()
            );
            (
                printable(&label(c, several)).into_owned(),
                printable(&text).into_owned(),
            )
        })
        .collect();
    rows.extend(d.not_checked.iter().map(|n| {
        (
            printable(&n.label(several)).into_owned(),
            printable(&format!("not checked: {}", n.text())).into_owned(),
        )
    }));
    write_rows(out, 2, &rows)?;
    let examples: Vec<(&Checked, &Example)> = d
        .checked
        .iter()
        .flat_map(|c| c.examples.iter().map(move |e| (c, e)))
        .collect();
    if !examples.is_empty() {
        heading(
            out,
            "Violations to replay (the fewest operations found that still break the promise, else all before the cut; the command runs them and cuts after the last):",
        )?;
        for (c, e) in examples {
            say(
                out,
                "  ",
                &printable(&format!("{}, {}", label(c, several), e.text())),
                4,
            )?;
            say(out, "    ", &printable(&e.replay), 6)?;
            if let Some(image) = &e.state_image {
                say(out, "    ", &printable(image), 6)?;
            }
        }
    }
    Ok(())
}

/// The Markdown: a table of the configurations, those not cut, and the violations to replay.
pub fn markdown(out: &mut dyn Write, d: &Durability) -> io::Result<()> {
    if d.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Durability\n")?;
    writeln!(
        out,
        "{}.\n",
        EXPLAINED[..1].to_uppercase() + &EXPLAINED[1..]
    )?;
    let several = several_workloads(d);
    if !d.checked.is_empty() {
        writeln!(
            out,
            "| configuration | samples (violations each) | cut | cuts | crash states | violations | by kind | recovery median | recovery longest | fsck |\n|---|---|---|---:|---:|---:|---|---:|---:|---|"
        )?;
        for c in &d.checked {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                escape(&label(c, several)),
                escape(&c.samples_text()),
                c.cut,
                c.cuts,
                c.crash_states_text(),
                if c.violations > 0 {
                    format!("**{}**", c.violations)
                } else {
                    "0".into()
                },
                escape(&c.kinds_text()),
                c.p50_text(),
                c.max_text(),
                escape(&c.fsck_text()),
            )?;
        }
        writeln!(out)?;
    }
    if !d.not_checked.is_empty() {
        writeln!(out, "Not checked (never assumed safe):\n")?;
        for n in &d.not_checked {
            writeln!(
                out,
                "- {}: {}",
                escape(&n.label(several)),
                escape(&n.text())
            )?;
        }
        writeln!(out)?;
    }
    let examples: Vec<(&Checked, &Example)> = d
        .checked
        .iter()
        .flat_map(|c| c.examples.iter().map(move |e| (c, e)))
        .collect();
    if !examples.is_empty() {
        writeln!(out, "### Violations to replay\n")?;
        writeln!(
            out,
            "The fewest operations found that still break the promise (else all before the cut), each with its persistence call; the command runs them on the same configuration and cuts after the last.\n"
        )?;
        for (c, e) in examples {
            writeln!(
                out,
                "- {}, {}\n",
                escape(&label(c, several)),
                escape(&e.text())
            )?;
            writeln!(
                out,
                "  ```console\n  {}\n  ```\n",
                e.replay.replace('\n', " ")
            )?;
            if let Some(image) = &e.state_image {
                writeln!(
                    out,
                    "  The crash state, to mount:\n\n  ```console\n  {}\n  ```\n",
                    image.replace('\n', " ")
                )?;
            }
        }
    }
    Ok(())
}

/// The HTML fragment (empty without a durability result).
pub fn html(findings: &Findings) -> Result<String, minijinja::Error> {
    let (model, d) = (findings.model(), findings.get::<Durability>());
    if d.is_empty() {
        return Ok(String::new());
    }
    let several = several_workloads(d);
    let checked: Vec<_> = d
        .checked
        .iter()
        .map(|c| {
            minijinja::context! {
                label => label(c, several),
                colour => colour(model, &c.configuration),
                samples => c.samples_text(),
                cut => c.cut.clone(),
                cuts => c.cuts,
                crash_states => c.crash_states_text(),
                violations => c.violations,
                kinds => c.kinds_text(),
                p50 => c.p50_text(),
                max => c.max_text(),
                fsck => c.fsck_text(),
                fsck_bad => c.fsck_errors > 0,
                examples => c.examples.iter().map(|e| minijinja::context! { text => e.text(), replay => e.replay.clone(), state_image => e.state_image.clone() }).collect::<Vec<_>>(),
            }
        })
        .collect();
    let not_checked: Vec<_> = d
        .not_checked
        .iter()
        .map(|n| minijinja::context! { label => n.label(several), colour => colour(model, &n.configuration), text => n.text() })
        .collect();
    render_html(
        "durability.html.j2",
        include_str!("durability.html.j2"),
        minijinja::context! {
            checked => checked,
            not_checked => not_checked,
            note => EXPLAINED[..1].to_uppercase() + &EXPLAINED[1..],
        },
    )
}

/// The workbook's durability sheet: a row per configuration, every kind a column.
pub fn workbook(
    wb: &mut Workbook,
    d: &Durability,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    if d.is_empty() {
        return Ok(());
    }
    let bold = Format::new().set_bold();
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("durability", used))?;
    let mut header: Vec<String> = [
        "configuration",
        "workload",
        "samples",
        "samples in all",
        "cut",
        "cuts",
        "crash states",
        "violations",
    ]
    .map(String::from)
    .to_vec();
    header.extend(Kind::ALL.iter().map(|k| k.name().to_string()));
    header.extend(
        [
            "recovery median, lowest sample (ns)",
            "recovery median, highest sample (ns)",
            "recovery longest (ns)",
            "fsck",
            "not checked: why",
        ]
        .map(String::from),
    );
    for (j, h) in header.iter().enumerate() {
        ws.write_string_with_format(0, j as u16, h, &bold)?;
    }
    let mut r = 1u32;
    for c in &d.checked {
        ws.write_string(r, 0, &c.configuration)?;
        ws.write_string(r, 1, &c.workload)?;
        ws.write_number(r, 2, c.samples as f64)?;
        ws.write_number(r, 3, c.all_samples as f64)?;
        ws.write_string(r, 4, &c.cut)?;
        ws.write_number(r, 5, c.cuts as f64)?;
        if c.power() {
            ws.write_number(r, 6, c.crash_states as f64)?;
        }
        ws.write_number(r, 7, c.violations as f64)?;
        for (k, kind) in Kind::ALL.iter().enumerate() {
            let n = c
                .by_kind
                .iter()
                .find(|x| x.kind == kind.name())
                .map_or(0, |x| x.count);
            ws.write_number(r, 8 + k as u16, n as f64)?;
        }
        let next = 8 + Kind::ALL.len() as u16;
        if !c.recovery_p50.is_empty() {
            let lo = c.recovery_p50.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.recovery_p50.iter().copied().fold(0.0, f64::max);
            ws.write_number(r, next, lo)?;
            ws.write_number(r, next + 1, hi)?;
        }
        if let Some(max) = c.recovery_max {
            ws.write_number(r, next + 2, max)?;
        }
        ws.write_string(r, next + 3, c.fsck_text())?;
        r += 1;
    }
    for n in &d.not_checked {
        ws.write_string(r, 0, &n.configuration)?;
        ws.write_string(r, 1, &n.workload)?;
        ws.write_number(r, 3, n.samples as f64)?;
        ws.write_string(r, 8 + Kind::ALL.len() as u16 + 4, n.text())?;
        r += 1;
    }
    Ok(())
}

/// Durability: in every output, only when the durability workload ran.
pub struct DurabilitySection;

impl Section for DurabilitySection {
    fn name(&self) -> &'static str {
        "durability"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal(out, findings.get())
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown(out, findings.get())
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        // Not in the page at all without a durability result: an empty fragment would still
        // take its place (and its blank lines) among the sections.
        if findings.get::<Durability>().is_empty() {
            return Ok(None);
        }
        html(findings).map(Some)
    }

    fn workbook(
        &self,
        findings: &Findings,
        workbook: &mut Workbook,
        used: &mut Vec<String>,
    ) -> Result<(), XlsxError> {
        self::workbook(workbook, findings.get(), used)
    }

    fn json(&self, findings: &Findings) -> serde_json::Result<Option<JsonMember>> {
        let d = findings.get::<Durability>();
        if d.is_empty() {
            return Ok(None);
        }
        JsonMember::new("durability", d).map(Some)
    }
}
