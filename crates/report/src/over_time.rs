//! Over time: what a sample did along its own time axis, and what the host did beside it — for
//! each workload and configuration, one representative repetition (the median by its main
//! figures) or every one ([`SeriesChoice`]), drawn as the rate of its phases with their
//! latency percentiles and, beneath them on the same axis, the monitors that explain a rate:
//! dirty and writeback memory, how busy the filesystem's device and the disk under it were,
//! the CPUs' iowait and steal. And what a sample's stored assessment says a reader must know
//! of its figures ([`marks`]: a phase that did not settle, a saturated device, a host that
//! disturbed it), which the report shows beside the chart, in the verdict and in a table.

use crate::charts::{self, Panel, Span, Trace};
use crate::findings::{Find, Findings};
use crate::model::{CaseView, ReportModel};
use fsbench_model::series::{metric, source, subject, subject::TOTAL, Series, WORKLOAD};
use fsbench_model::{CaseAxis, Direction, Unit};
use fsbench_store::{Outcome, Sample, Store, StoreError};
use plotters::style::RGBColor;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Which repetitions a report draws over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesChoice {
    /// One per workload and configuration: the median repetition by its main figures.
    #[default]
    Representative,
    /// Every repetition (failed and timed-out ones too: a hang shows as a rate falling to 0).
    All,
    /// None (the report reads no series).
    None,
}

impl fmt::Display for SeriesChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SeriesChoice::Representative => "representative",
            SeriesChoice::All => "all",
            SeriesChoice::None => "none",
        })
    }
}

impl std::str::FromStr for SeriesChoice {
    type Err = String;
    fn from_str(text: &str) -> Result<SeriesChoice, String> {
        match text.trim() {
            "representative" => Ok(SeriesChoice::Representative),
            "all" => Ok(SeriesChoice::All),
            "none" => Ok(SeriesChoice::None),
            other => Err(format!(
                "'{other}' is not a choice of series: use representative (one repetition per workload and configuration), all (every repetition) or none"
            )),
        }
    }
}

impl SeriesChoice {
    /// The samples of a case to draw, each with why it is the one drawn.
    pub fn samples(self, case: &CaseView) -> Vec<(&Sample, String)> {
        match self {
            SeriesChoice::None => Vec::new(),
            SeriesChoice::Representative => representative(case).into_iter().collect(),
            SeriesChoice::All => case
                .samples
                .iter()
                .map(|s| {
                    let why = if s.status == Outcome::Ok {
                        "every repetition is drawn".to_string()
                    } else {
                        format!(
                            "every repetition is drawn; this one ended {}",
                            s.status.name()
                        )
                    };
                    (s, why)
                })
                .collect(),
        }
    }
}

/// Reads the series of the samples `choice` draws into the model (and no others: a long
/// campaign's are large).
pub fn load(
    model: &mut ReportModel,
    store: &Store,
    choice: SeriesChoice,
) -> Result<(), StoreError> {
    let wanted: Vec<i64> = model
        .cases()
        .flat_map(|c| choice.samples(c))
        .map(|(s, _)| s.id)
        .collect();
    model.load_series_where(store, |s| wanted.contains(&s.id))
}

/// A case's representative repetition: of its `ok` samples, the median by its main figures —
/// each figure relative to the case's median of it, oriented so that above 1 is better,
/// combined by their geometric mean — with why it was chosen. None when no sample is `ok`.
pub fn representative(case: &CaseView) -> Option<(&Sample, String)> {
    let ok: Vec<&Sample> = case
        .samples
        .iter()
        .filter(|s| s.status == Outcome::Ok)
        .collect();
    let first = *ok.first()?;
    if ok.len() == 1 {
        return Some((first, "the only repetition measured".into()));
    }
    // Every main figure with a direction, by its row and metric: each sample's value.
    let mut figures: BTreeMap<String, (Direction, Vec<(usize, f64)>)> = BTreeMap::new();
    let mut metrics: Vec<String> = Vec::new();
    for (i, s) in ok.iter().enumerate() {
        for r in &s.results {
            for m in r.measurements.iter().filter(|m| m.main) {
                if m.direction == Direction::None || !(m.value.is_finite() && m.value > 0.0) {
                    continue;
                }
                let metric = m.metric.to_string();
                if !metrics.contains(&metric) {
                    metrics.push(metric.clone());
                }
                figures
                    .entry(format!("{} {metric}", r.dims.label()))
                    .or_insert((m.direction, Vec::new()))
                    .1
                    .push((i, m.value));
            }
        }
    }
    if figures.is_empty() {
        return Some((
            first,
            "the first repetition measured (it has no main figure to choose by)".into(),
        ));
    }
    let mut logs: Vec<Vec<f64>> = vec![Vec::new(); ok.len()];
    for (direction, values) in figures.values() {
        let mut sorted: Vec<f64> = values.iter().map(|v| v.1).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        for &(i, v) in values {
            let ratio = (v / median).ln();
            logs[i].push(if *direction == Direction::Lower {
                -ratio
            } else {
                ratio
            });
        }
    }
    let mut scored: Vec<(f64, usize)> = logs
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (l.iter().sum::<f64>() / l.len() as f64, i))
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (_, at) = scored[(scored.len() - 1) / 2];
    let shown: Vec<String> = metrics
        .iter()
        .take(3)
        .map(|m| fsbench_model::metric_label(m).into_owned())
        .collect();
    Some((
        ok[at],
        format!(
            "the median of the {} repetitions measured by {} ({}{})",
            ok.len(),
            if figures.len() == 1 {
                "its main figure"
            } else {
                "its main figures, each relative to the median, combined by their geometric mean"
            },
            shown.join(", "),
            if metrics.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ),
    ))
}

/// What a sample's assessment says of its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// A phase's rate over its last third differed from its middle third beyond its noise.
    NotSteady,
    /// A device was busy (I/O in flight) at least 95 % of most of the phases' intervals.
    Saturated,
    /// The host disturbed it: CPU steal, or another process's I/O on the disk under its device.
    Disturbed,
}

/// One thing a reader must know of a sample's figures, in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    pub kind: MarkKind,
    pub text: String,
}

/// What the stored assessment of an `ok` sample says a reader must know of its figures (none
/// for a sample that was not watched, or not `ok`: its figures are not in the report).
pub fn marks(sample: &Sample) -> Vec<Mark> {
    let Some(a) = sample
        .assessment
        .as_ref()
        .filter(|_| sample.status == Outcome::Ok)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let unsteady: Vec<String> = a
        .phases
        .iter()
        .filter(|p| p.steady == Some(false))
        .map(|p| {
            let label = if p.label.is_empty() {
                "the phase"
            } else {
                &p.label
            };
            match p.change_percent {
                Some(c) => format!("{label} ({c:+.0} %)"),
                None => label.to_string(),
            }
        })
        .collect();
    if !unsteady.is_empty() {
        let shown: Vec<&str> = unsteady.iter().take(3).map(String::as_str).collect();
        let more = unsteady.len() - shown.len();
        out.push(Mark {
            kind: MarkKind::NotSteady,
            text: format!(
                "not steady: {} of {} phases (the last third's rate against the middle third's): {}{}",
                unsteady.len(),
                a.phases.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
        });
    }
    for d in a.devices.iter().filter(|d| d.saturated) {
        out.push(Mark {
            kind: MarkKind::Saturated,
            text: format!(
                "{} ({}) saturated: busy {:.0} % while the phases ran; the figures are its limit",
                d.device,
                role(&d.role),
                d.busy_percent
            ),
        });
    }
    if let Some(why) = a.disturbance() {
        // The same rule and words as when the sample was assessed (fsbench_model::series).
        out.push(Mark {
            kind: MarkKind::Disturbed,
            text: format!("disturbed by the host: {why}"),
        });
    }
    out
}

/// A watched device's role in words.
fn role(role: &str) -> &str {
    match role {
        "device" => "the filesystem's device",
        "disk" => "the disk under it",
        other => other,
    }
}

/// The marks of samples per (workload name, configuration label), each with its repetition.
pub type Marked = BTreeMap<(String, String), Vec<(u32, Mark)>>;

/// Per (workload name, configuration label): the marks of its `ok` samples, each with its
/// repetition — what the verdict and the heat-map mark.
pub fn marked(model: &ReportModel) -> Marked {
    let mut out = Marked::new();
    for case in model.cases() {
        for s in &case.samples {
            for m in marks(s) {
                out.entry((
                    case.axis(CaseAxis::Workload).to_string(),
                    model.configurations[case.configuration].label.clone(),
                ))
                .or_default()
                .push((s.repetition, m));
            }
        }
    }
    out
}

impl Find for Marked {
    fn find(findings: &Findings) -> Marked {
        marked(findings.model())
    }
}

/// One sample drawn over time, for the HTML report.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// The configuration's label and colour.
    pub configuration: String,
    pub colour: String,
    pub repetition: u32,
    /// Why this repetition is drawn.
    pub why: String,
    /// The chart (None: the sample has no stored series, and `caption` says why).
    pub svg: Option<String>,
    pub caption: String,
    /// What its assessment says of its figures.
    pub marks: Vec<Mark>,
}

/// The light grey and the dark grey of the monitors' lines (a timeline is one configuration's:
/// its colour is the workload's; the host is drawn in greys).
const INK: [RGBColor; 2] = [RGBColor(0x33, 0x33, 0x33), RGBColor(0x99, 0x99, 0x99)];

/// The timelines of one workload (by its plan's name), per configuration in order, of the
/// samples `choice` draws.
pub fn timelines(model: &ReportModel, workload: &str, choice: SeriesChoice) -> Vec<Timeline> {
    let mut cases: Vec<&CaseView> = model
        .cases()
        .filter(|c| c.axis(CaseAxis::Workload) == workload)
        .collect();
    cases.sort_by_key(|c| c.configuration);
    let mut out = Vec::new();
    for case in cases {
        let configuration = &model.configurations[case.configuration];
        if !configuration.measured {
            continue;
        }
        let samples = choice.samples(case);
        for (sample, why) in samples {
            // Every repetition asked for: one that ended early without a series is under
            // "Not measured" already.
            if sample.series.is_empty() && sample.status != Outcome::Ok {
                continue;
            }
            let title = format!(
                "{workload} on {}: repetition {} of {}",
                configuration.label,
                sample.repetition,
                case.samples.len()
            );
            let (svg, caption) = if sample.series.is_empty() {
                (
                    None,
                    format!(
                        "{title}: no series were stored with this sample (it ran with --interval off, or before fsbench recorded series)."
                    ),
                )
            } else {
                let (svg, caption) = draw(&title, sample, case.configuration);
                (Some(svg), caption)
            };
            out.push(Timeline {
                configuration: configuration.label.clone(),
                colour: charts::colour_hex(case.configuration),
                repetition: sample.repetition,
                why,
                svg,
                caption,
                marks: marks(sample),
            });
        }
    }
    out
}

/// A line's points, broken between phases.
type Segments = Vec<Vec<(f64, f64)>>;

/// The time axis's unit: seconds, or minutes for a sample past ten minutes. (divisor of
/// seconds, tick unit, axis title)
fn time_axis(end_s: f64) -> (f64, &'static str, &'static str) {
    if end_s > 600.0 {
        (60.0, "min", "time since the sample started [min]")
    } else {
        (1.0, "s", "time since the sample started [s]")
    }
}

/// A series' points on the chart's axes: x in the time axis's unit at the interval's middle
/// (`at_end`: its end, for a gauge read at the end), y by `value(point value, interval s)`.
fn traced(
    s: &Series,
    minutes: f64,
    at_end: bool,
    value: impl Fn(f64, f64) -> f64,
) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .map(|p| {
            let (t, dt) = (p.t_ns() as f64 / 1e9, p.dt_ns() as f64 / 1e9);
            let x = if at_end { t + dt } else { t + dt / 2.0 };
            (x / minutes, value(p.value(), dt))
        })
        .collect()
}

/// The sample's timeline: the rate of its phases (bytes per second, or operations when it
/// moved no bytes) with their latency percentiles, then the host's dirty and writeback memory,
/// its devices' utilisation and the CPUs' iowait and steal; with the caption that says what
/// is drawn.
fn draw(title: &str, sample: &Sample, colour: usize) -> (String, String) {
    let series = &sample.series;
    fn total<'a>(series: &'a [Series], metric: &'a str) -> impl Iterator<Item = &'a Series> {
        series
            .iter()
            .filter(move |s| s.source == WORKLOAD && s.subject == TOTAL && s.metric == metric)
    }
    let end_s = series
        .iter()
        .flat_map(|s| s.points.last())
        .map(|p| (p.t_ns() + p.dt_ns()) as f64 / 1e9)
        .fold(0.0, f64::max);
    let (minutes, x_unit, x_title) = time_axis(end_s);
    let bytes = total(series, metric::BYTES).any(|s| s.sum() > 0.0);
    let (rate_metric, rate_unit, rate_title) = if bytes {
        (metric::BYTES, Unit::BytesPerSec, "throughput")
    } else {
        (metric::OPS, Unit::OpsPerSec, "operation rate")
    };
    let rates: Segments = total(series, rate_metric)
        .map(|s| {
            traced(
                s,
                minutes,
                false,
                |v, dt| if dt > 0.0 { v / dt } else { 0.0 },
            )
        })
        .collect();
    let config_colour = charts::colour(colour);
    let mut panels = Vec::new();
    let mut described = Vec::new();
    let top_rate = rates.iter().flatten().map(|p| p.1).fold(0.0, f64::max);
    let (factor, unit) = rate_unit.display(top_rate);
    panels.push(Panel {
        y: rate_title.into(),
        unit,
        log_y: false,
        top: None,
        traces: vec![Trace {
            name: rate_title.into(),
            colour: config_colour,
            opacity: 1.0,
            segments: scaled(rates, factor),
        }],
    });
    described.push(format!("the {rate_title} of each interval of each phase"));
    // Latency percentiles, the workload's colour fading towards the tail.
    let percentiles = [
        (metric::LATENCY_P50, "p50", 1.0),
        (metric::LATENCY_P99, "p99", 0.65),
        (metric::LATENCY_P99_9, "p99.9", 0.35),
    ];
    let latency: Vec<(&str, f64, Segments)> = percentiles
        .iter()
        .map(|(metric, name, opacity)| {
            let segments: Segments = total(series, metric)
                .map(|s| traced(s, minutes, false, |v, _| v))
                .collect();
            (*name, *opacity, segments)
        })
        .filter(|(_, _, segments)| segments.iter().any(|s| !s.is_empty()))
        .collect();
    if !latency.is_empty() {
        let all = || {
            latency
                .iter()
                .flat_map(|l| l.2.iter().flatten().map(|p| p.1))
        };
        let (factor, unit) = Unit::Nanos.display(all().fold(0.0, f64::max));
        let log_y = charts::spans_decades(all());
        panels.push(Panel {
            y: "latency".into(),
            unit,
            log_y,
            top: None,
            traces: latency
                .into_iter()
                .map(|(name, opacity, segments)| Trace {
                    name: name.into(),
                    colour: config_colour,
                    opacity,
                    segments: scaled(segments, factor),
                })
                .collect(),
        });
        described.push(format!(
            "its latency percentiles (p50, p99, p99.9{})",
            if log_y { ", log scale" } else { "" }
        ));
    }
    let monitor = |source: &str, subject: Option<&str>, metric: &str| {
        series.iter().find(|s| {
            s.source == source && subject.is_none_or(|x| s.subject == x) && s.metric == metric
        })
    };
    // Dirty and writeback memory (gauges read at each interval's end).
    let memory: Vec<(&str, Vec<(f64, f64)>)> = [metric::DIRTY, metric::WRITEBACK]
        .into_iter()
        .filter_map(|m| {
            Some((
                m,
                traced(monitor(source::MEMORY, None, m)?, minutes, true, |v, _| v),
            ))
        })
        .collect();
    if !memory.is_empty() {
        let top = memory
            .iter()
            .flat_map(|m| &m.1)
            .map(|p| p.1)
            .fold(0.0, f64::max);
        let (factor, unit) = Unit::Bytes.display(top);
        panels.push(Panel {
            y: "memory".into(),
            unit,
            log_y: false,
            top: None,
            traces: memory
                .into_iter()
                .enumerate()
                .map(|(i, (name, points))| Trace {
                    name: name.into(),
                    colour: INK[i],
                    opacity: 1.0,
                    segments: scaled(vec![points], factor),
                })
                .collect(),
        });
        described.push("the host's dirty and writeback memory".into());
    }
    // How busy each watched device was.
    let busy: Vec<Trace> = series
        .iter()
        .filter(|s| s.source == source::DISK && s.metric == metric::BUSY)
        .enumerate()
        .map(|(i, s)| Trace {
            name: format!("{} ({})", s.subject, role(&s.label)),
            colour: INK[i % INK.len()],
            opacity: 1.0,
            segments: vec![traced(s, minutes, false, |v, _| v)],
        })
        .collect();
    if !busy.is_empty() {
        panels.push(Panel {
            y: "device busy".into(),
            unit: "%",
            log_y: false,
            top: Some(100.0),
            traces: busy,
        });
        described.push(
            "how busy the filesystem's device and the disk under it were (time with I/O in flight)"
                .into(),
        );
    }
    let cpu: Vec<Trace> = [metric::IOWAIT, metric::STEAL]
        .into_iter()
        .enumerate()
        .filter_map(|(i, m)| {
            Some(Trace {
                name: m.into(),
                colour: INK[i],
                opacity: 1.0,
                segments: vec![traced(
                    monitor(source::CPU, Some(subject::ALL_CPUS), m)?,
                    minutes,
                    false,
                    |v, _| v,
                )],
            })
        })
        .collect();
    if !cpu.is_empty() {
        let top = cpu
            .iter()
            .flat_map(|t| t.segments.iter().flatten())
            .map(|p| p.1)
            .fold(0.0, f64::max);
        panels.push(Panel {
            y: "CPU (all)".into(),
            unit: "%",
            log_y: false,
            top: Some((top * 1.1).clamp(5.0, 100.0)),
            traces: cpu,
        });
        described.push("the CPUs' iowait and steal (share of all CPUs' time)".into());
    }
    // The phases, shaded where they did not settle.
    let verdicts = sample.assessment.as_ref().map(|a| a.phases.as_slice());
    let spans: Vec<Span> = total(series, rate_metric)
        .filter_map(|s| {
            let (first, last) = (s.points.first()?, s.points.last()?);
            let steady = verdicts
                .and_then(|v| v.iter().find(|v| Some(v.phase) == s.phase))
                .and_then(|v| v.steady);
            Some(Span {
                from: first.t_ns() as f64 / 1e9 / minutes,
                to: (last.t_ns() + last.dt_ns()) as f64 / 1e9 / minutes,
                label: if steady == Some(false) {
                    format!("{} (not steady)", s.label)
                } else {
                    s.label.clone()
                },
                marked: steady == Some(false),
            })
        })
        .collect();
    let svg = charts::timeline(title, x_title, x_unit, &panels, &spans);
    let mut intervals: Vec<u64> = total(series, rate_metric)
        .flat_map(|s| s.points.iter().map(|p| p.dt_ns()))
        .collect();
    intervals.sort_unstable();
    // The typical interval, as it was asked for (a measured one is a few µs over).
    let interval = intervals
        .get(intervals.len() / 2)
        .map_or("?".into(), |&ns| {
            if ns >= 1_000_000_000 {
                charts::tick((ns as f64 / 1e9 * 10.0).round() / 10.0, "s")
            } else {
                charts::tick((ns as f64 / 1e6).round(), "ms")
            }
        });
    let phases = spans.len();
    let mut described = described.into_iter();
    let first = described.next().unwrap_or_default();
    let caption = format!(
        "{}{}{} on one time axis; {phases} phase{}{}, intervals of {interval}.",
        first[..1].to_uppercase(),
        &first[1..],
        described.map(|d| format!("; then {d}")).collect::<String>(),
        if phases == 1 { "" } else { "s" },
        if spans.iter().any(|s| s.marked) {
            " (shaded: not steady)"
        } else {
            ""
        },
    );
    (svg, caption)
}

fn scaled(segments: Segments, factor: f64) -> Segments {
    segments
        .into_iter()
        .map(|s| s.into_iter().map(|(x, y)| (x, y / factor)).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_model::series::{Assessment, DeviceLoad, PhaseVerdict, Point};
    use fsbench_model::{Dims, MetricDef, ResultRecord};

    const RATE: MetricDef =
        MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher).main();

    fn sample(repetition: u32, rate: f64) -> Sample {
        Sample {
            id: repetition as i64,
            repetition,
            status: Outcome::Ok,
            reason: None,
            not_retried: false,
            started_at: String::new(),
            elapsed_ns: 0,
            target: None,
            seed: None,
            warnings: Vec::new(),
            config: None,
            results: vec![ResultRecord {
                dims: Dims::default(),
                measurements: vec![RATE.at(rate)],
                ..ResultRecord::default()
            }],
            assessment: None,
            series: Vec::new(),
        }
    }

    fn series(
        source: &str,
        phase: Option<u32>,
        label: &str,
        subject: &str,
        metric: &str,
        unit: Unit,
        values: &[f64],
    ) -> Series {
        Series {
            source: source.into(),
            phase,
            label: label.into(),
            subject: subject.into(),
            metric: metric.into(),
            unit,
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    Point(
                        i as u64 * 100_000_000 + phase.unwrap_or(0) as u64 * 2_000_000_000,
                        100_000_000,
                        *v,
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn the_representative_repetition_is_the_median_by_the_main_figures() {
        let case = |rates: &[f64]| {
            CaseView {
            run_id: 1,
            id: 1,
            key: "k".into(),
            position: 0,
            axes: BTreeMap::new(),
            kind: "io".into(),
            config: serde_json::from_str(r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}"#).unwrap(),
            workload: serde_json::json!({}),
            samples: rates
                .iter()
                .enumerate()
                .map(|(i, r)| sample(i as u32 + 1, *r))
                .collect(),
            configuration: 0,
        }
        };
        let c = case(&[300.0, 100.0, 200.0, 900.0, 50.0]);
        let (s, why) = representative(&c).unwrap();
        assert_eq!(s.repetition, 3, "{why}");
        assert!(
            why.contains("median of the 5 repetitions") && why.contains("throughput"),
            "{why}"
        );
        // The figures it chose by are named as a reader knows them.
        let mut ops = c.clone();
        for m in ops
            .samples
            .iter_mut()
            .flat_map(|s| &mut s.results)
            .flat_map(|r| &mut r.measurements)
        {
            m.metric = "ops_rate".into();
        }
        let (_, why) = representative(&ops).unwrap();
        assert!(why.ends_with("(operations/s)"), "{why}");
        // Four: the lower of the two middle ones.
        let four = case(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(representative(&four).unwrap().0.repetition, 4);
        let one = case(&[7.0]);
        assert_eq!(
            representative(&one).unwrap().1,
            "the only repetition measured"
        );
        assert_eq!(SeriesChoice::All.samples(&c).len(), 5);
        assert!(SeriesChoice::None.samples(&c).is_empty());
        assert_eq!("all".parse::<SeriesChoice>(), Ok(SeriesChoice::All));
        assert!("some"
            .parse::<SeriesChoice>()
            .unwrap_err()
            .contains("representative"));
    }

    /// A write that halves its rate in its second phase on a saturated loop device, with
    /// steal: the timeline has the rate, latency, memory, device and CPU panels with their
    /// units on the ticks and the time axis in seconds; the marks say what the reader must know.
    #[test]
    fn a_timeline_has_a_panel_per_monitor_with_units_and_marks_say_why() {
        let mib = 1048576.0;
        let mut s = sample(1, 1.0);
        s.series = vec![
            series(
                WORKLOAD,
                Some(0),
                "write",
                "total",
                "bytes",
                Unit::Bytes,
                &[100.0 * mib; 10],
            ),
            series(
                WORKLOAD,
                Some(0),
                "write",
                "total",
                "ops",
                Unit::Count,
                &[100.0; 10],
            ),
            series(
                WORKLOAD,
                Some(0),
                "write",
                "total",
                "latency_p50",
                Unit::Nanos,
                &[2e6; 10],
            ),
            series(
                WORKLOAD,
                Some(0),
                "write",
                "total",
                "latency_p99_9",
                Unit::Nanos,
                &[9e7; 10],
            ),
            series(
                WORKLOAD,
                Some(1),
                "rewrite",
                "total",
                "bytes",
                Unit::Bytes,
                &[50.0 * mib; 10],
            ),
            series(
                "memory",
                None,
                "",
                "host",
                "dirty",
                Unit::Bytes,
                &[300.0 * mib; 40],
            ),
            series(
                "memory",
                None,
                "",
                "host",
                "writeback",
                Unit::Bytes,
                &[20.0 * mib; 40],
            ),
            series(
                "disk",
                None,
                "device",
                "loop3",
                "busy",
                Unit::Percent,
                &[99.0; 40],
            ),
            series(
                "disk",
                None,
                "disk",
                "vda",
                "busy",
                Unit::Percent,
                &[40.0; 40],
            ),
            series("cpu", None, "", "all", "iowait", Unit::Percent, &[12.0; 40]),
            series("cpu", None, "", "all", "steal", Unit::Percent, &[3.0; 40]),
        ];
        s.assessment = Some(Assessment {
            phases: vec![
                PhaseVerdict {
                    phase: 0,
                    label: "write".into(),
                    steady: Some(true),
                    change_percent: Some(1.0),
                    warmup_ns: Some(0),
                    finish_ns: None,
                },
                PhaseVerdict {
                    phase: 1,
                    label: "rewrite".into(),
                    steady: Some(false),
                    change_percent: Some(-48.0),
                    warmup_ns: None,
                    finish_ns: None,
                },
            ],
            devices: vec![DeviceLoad {
                role: "device".into(),
                device: "loop3".into(),
                busy_percent: 99.0,
                saturated: true,
                read_bytes: 0,
                write_bytes: 1 << 30,
            }],
            steal_percent: Some(3.0),
            other_io_bytes: Some(64 << 20),
            own_io_bytes: None,
            disturbed: true,
        });
        let (svg, caption) = draw("io on ext4: repetition 1 of 1", &s, 2);
        for text in [
            "throughput",
            "MiB/s",
            "latency",
            " ms",
            "p99.9",
            "memory",
            "dirty",
            "writeback",
            "device busy",
            "loop3 (the filesystem",
            "vda (the disk under it)",
            "%",
            "iowait",
            "steal",
            "time since the sample started [s]",
            "\n1 s\n",
            "\n10 ms\n",
            "\n1000 MiB/s\n",
            "\n300 MiB\n",
            "\n100 %\n",
            "rewrite (not steady)",
        ] {
            assert!(svg.contains(text), "{text} missing from the timeline");
        }
        assert!(
            svg.contains(&charts::colour_hex(2).to_uppercase())
                || svg.contains(&charts::colour_hex(2)),
            "the configuration's colour"
        );
        assert!(
            caption.starts_with("The throughput of each interval of each phase; then its latency")
                && caption.contains("2 phases (shaded: not steady), intervals of 100 ms"),
            "{caption}"
        );
        let marks = marks(&s);
        let kinds: Vec<MarkKind> = marks.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            [
                MarkKind::NotSteady,
                MarkKind::Saturated,
                MarkKind::Disturbed
            ]
        );
        assert!(
            marks[0].text.contains("1 of 2 phases") && marks[0].text.contains("rewrite (-48 %)"),
            "{marks:?}"
        );
        assert!(
            marks[2].text.contains("CPU steal 3.0 %")
                && marks[2]
                    .text
                    .contains("64.0 MiB of another process's I/O on the disk"),
            "{marks:?}"
        );
        // Not watched, or not ok: nothing to say.
        s.status = Outcome::Failed;
        assert!(super::marks(&s).is_empty());
    }

    #[test]
    fn a_long_sample_is_drawn_in_minutes() {
        assert_eq!(time_axis(1800.0).1, "min");
        assert_eq!(time_axis(30.0).1, "s");
    }
}
