//! Charts as static SVG (plotters' SVG backend): bars with 95 % confidence error bars, lines
//! (on linear, log or keyed x axes, a log y axis when the values span decades) labelled at
//! their ends, and heat-maps. Every configuration has one colour, its index's in
//! [`PALETTE`], in every chart of a report; tick labels read as numbers with their unit
//! (`70 k ops/s`, `1.5 GiB/s`). Every chart has a title that says which way is better and
//! axis titles; a chart that cannot be drawn says so in place of the picture instead of
//! failing the report.

use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::text::short_number;

/// A chart's words: title, axis titles and the direction ("higher is better").
pub struct Labels<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
    pub direction: &'a str,
}

impl Labels<'_> {
    fn caption(&self) -> String {
        if self.direction.is_empty() {
            self.title.to_string()
        } else {
            format!("{} ({})", self.title, self.direction)
        }
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> String {
    format!("<p class=\"chart-error\">The {what} could not be drawn: {e}</p>")
}

const FONT: &str = "sans-serif";

/// The colours of configurations, by their index in the report: Tableau's 10 (Maureen Stone's
/// palette, tellable apart in print and by most colour-blind readers), then again.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0xe1, 0x57, 0x59),
    (0x76, 0xb7, 0xb2),
    (0x59, 0xa1, 0x4f),
    (0xed, 0xc9, 0x48),
    (0xb0, 0x7a, 0xa1),
    (0xff, 0x9d, 0xa7),
    (0x9c, 0x75, 0x5f),
    (0x1f, 0x3a, 0x5f),
];

/// The colour of the configuration at `index`.
pub fn colour(index: usize) -> RGBColor {
    let (r, g, b) = PALETTE[index % PALETTE.len()];
    RGBColor(r, g, b)
}

/// The same as `#rrggbb`, for the page around the charts.
pub fn colour_hex(index: usize) -> String {
    let (r, g, b) = PALETTE[index % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A tick label: the number and its unit ("70 k ops/s", "1.5 GiB/s", "200 ms").
pub fn tick(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        short_number(v)
    } else {
        format!("{} {unit}", short_number(v))
    }
}

/// Whether positive values span at least a decade (then a log axis shows them all).
pub fn spans_decades(values: impl IntoIterator<Item = f64>) -> bool {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    lo.is_finite() && hi / lo >= 10.0
}

/// One bar: a configuration's mean (and 95 % interval), in its colour.
pub struct Bar {
    pub name: String,
    /// The configuration's index (its colour).
    pub colour: usize,
    pub mean: f64,
    pub interval: Option<(f64, f64)>,
}

/// One bar per configuration, in the order given, from 0; its 95 % interval as an error bar
/// when known; y ticks in `unit`.
pub fn bars(labels: &Labels, bars: &[Bar], unit: &str) -> String {
    let mut svg = String::new();
    let n = bars.len().max(1);
    let width = (70 * n as u32 + 200).clamp(420, 1100);
    let top = bars
        .iter()
        .map(|b| b.interval.map_or(b.mean, |(_, hi)| hi.max(b.mean)))
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.12 } else { 1.0 };
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(&mut svg, (width, 340)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(labels.caption(), (FONT, 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(90)
            .build_cartesian_2d((0..n - 1).into_segmented(), 0f64..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(labels.x)
            .y_desc(labels.y)
            .x_labels(n)
            .y_labels(6)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => {
                    bars.get(*i).map(|b| b.name.clone()).unwrap_or_default()
                }
                _ => String::new(),
            })
            .y_label_formatter(&|v| tick(*v, unit))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), b.mean),
                ],
                colour(b.colour).filled(),
            );
            bar.set_margin(0, 0, 14, 14);
            bar
        }))?;
        chart.draw_series(bars.iter().enumerate().filter_map(|(i, b)| {
            b.interval.map(|(lo, hi)| {
                ErrorBar::new_vertical(
                    SegmentValue::CenterOf(i),
                    lo.max(0.0),
                    b.mean,
                    hi,
                    BLACK.stroke_width(2),
                    12,
                )
            })
        }))?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed("bar chart", e),
    }
}

/// One line: a configuration's points, in its colour.
pub struct Line {
    pub name: String,
    /// The configuration's index (its colour).
    pub colour: usize,
    pub points: Vec<(f64, f64)>,
}

/// The x axis of a line chart.
pub enum XAxis<'a> {
    /// Linear, ticks written by the function.
    Linear(&'a dyn Fn(f64) -> String),
    /// Logarithmic (file sizes), ticks written by the function.
    Log(&'a dyn Fn(f64) -> String),
    /// Ticks only at these points, with these names (the nines of latency percentiles).
    Keys(Vec<(f64, String)>),
}

/// The position of percentile `p` (50, 99.9) on a "nines" axis: −log10(1 − p/100), so p90 is
/// 1, p99 2, p99.9 3 — the tail, which readers look at, gets as much room as the median.
pub fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// Lines of (x, y) points, each named at its end in its colour (no legend to look up);
/// `marks` are labelled points (a peak, a knee) drawn over them. The y axis (ticks in `unit`)
/// starts at 0, or is logarithmic when `log_y` (values spanning decades).
pub fn lines(
    labels: &Labels,
    lines: &[Line],
    x: XAxis,
    unit: &str,
    log_y: bool,
    marks: &[(f64, f64, String)],
) -> String {
    let mut svg = String::new();
    let xs = lines.iter().flat_map(|l| l.points.iter().map(|(x, _)| *x));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !x0.is_finite() {
        return failed("line chart", "no points");
    }
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|(_, y)| *y))
        .collect();
    let top = ys.iter().copied().fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let bottom = ys.iter().copied().filter(|y| *y > 0.0).fold(top, f64::min);
    let (x0, x1) = match &x {
        XAxis::Keys(keys) => {
            let last = keys.iter().map(|k| k.0).fold(x1, f64::max);
            (x0.min(keys.first().map_or(x0, |k| k.0)) - 0.15, last + 0.15)
        }
        _ if x1 > x0 => (x0, x1),
        _ => (x0 * 0.5, x0 * 2.0 + 1.0),
    };
    // Room on the right for the names at the lines' ends.
    let longest = lines
        .iter()
        .map(|l| l.name.chars().count())
        .max()
        .unwrap_or(0);
    let right = (longest as u32 * 7 + 16).clamp(30, 220);
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(&mut svg, (540 + right, 380)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(labels.caption(), (FONT, 16))
            .margin(12)
            .margin_right(right)
            .x_label_area_size(44)
            .y_label_area_size(90);
        let mut ends: Vec<(i32, i32, RGBColor, &str)> = Vec::new();
        let keys: &[(f64, String)] = match &x {
            XAxis::Keys(keys) => keys,
            _ => &[],
        };
        let y_floor = if log_y { bottom * 0.8 } else { 0.0 };
        macro_rules! draw {
            ($chart:expr, $x_format:expr) => {{
                let mut chart = $chart;
                let y_format = |v: &f64| tick(*v, unit);
                let x_format = $x_format;
                let mut mesh = chart.configure_mesh();
                mesh.x_desc(labels.x)
                    .y_desc(labels.y)
                    .x_label_formatter(&x_format)
                    .y_label_formatter(&y_format)
                    .label_style((FONT, 13))
                    .axis_desc_style((FONT, 14));
                if !keys.is_empty() {
                    // Ticks only at the keys, drawn below.
                    mesh.x_labels(0).disable_x_mesh();
                }
                if log_y {
                    // A log axis's light lines crowd each decade's top into a grey band.
                    mesh.y_labels(8).light_line_style(TRANSPARENT);
                }
                mesh.draw()?;
                for (k, name) in keys {
                    let (px, py) = chart.backend_coord(&(*k, y_floor));
                    root.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK))?;
                    root.draw(&Text::new(
                        name.clone(),
                        (px, py + 8),
                        TextStyle::from((FONT, 13).into_font())
                            .pos(Pos::new(HPos::Center, VPos::Top)),
                    ))?;
                }
                for line in lines {
                    let c = colour(line.colour);
                    chart.draw_series(LineSeries::new(
                        line.points.iter().copied(),
                        c.stroke_width(2),
                    ))?;
                    chart
                        .draw_series(line.points.iter().map(|p| Circle::new(*p, 3, c.filled())))?;
                    if let Some(last) = line.points.last() {
                        let (px, py) = chart.backend_coord(last);
                        ends.push((px, py, c, line.name.as_str()));
                    }
                }
                chart.draw_series(marks.iter().map(|(x, y, text)| {
                    EmptyElement::at((*x, *y))
                        + Circle::new((0, 0), 6, BLACK.stroke_width(2))
                        + Text::new(text.clone(), (8, -16), (FONT, 13))
                }))?;
            }};
        }
        macro_rules! y_axis {
            ($x_range:expr, $x_format:expr) => {{
                if log_y {
                    draw!(
                        builder.build_cartesian_2d($x_range, (bottom * 0.8..top).log_scale())?,
                        $x_format
                    );
                } else {
                    draw!(builder.build_cartesian_2d($x_range, 0f64..top)?, $x_format);
                }
            }};
        }
        match &x {
            XAxis::Linear(format) => y_axis!(x0..x1, |v: &f64| format(*v)),
            XAxis::Log(format) => y_axis!((x0..x1).log_scale(), |v: &f64| format(*v)),
            XAxis::Keys(_) => y_axis!(x0..x1, |_: &f64| String::new()),
        }
        label_ends(&root, &mut ends)?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed("line chart", e),
    }
}

/// Each line's name right of its last point, in its colour, moved apart vertically where
/// names would overlap.
fn label_ends(
    root: &DrawingArea<SVGBackend, Shift>,
    ends: &mut [(i32, i32, RGBColor, &str)],
) -> Result<(), Box<dyn std::error::Error>> {
    const GAP: i32 = 14;
    ends.sort_by_key(|e| e.1);
    let mut last = i32::MIN;
    for (px, py, c, name) in ends.iter_mut() {
        *py = (*py).max(last.saturating_add(GAP));
        last = *py;
        root.draw(&Text::new(
            name.to_string(),
            (*px + 8, *py - 6),
            (FONT, 13).into_font().color(c),
        ))?;
    }
    Ok(())
}

/// One line of a timeline panel: its name (written at its end), colour and opacity, and its
/// points as segments (a line breaks between segments: between a workload's phases).
pub struct Trace {
    pub name: String,
    pub colour: RGBColor,
    pub opacity: f64,
    pub segments: Vec<Vec<(f64, f64)>>,
}

/// One panel of a timeline: its lines against the shared time axis, with the y axis's title,
/// the unit its ticks are written in, and its scale (from 0 to `top` or to the largest value;
/// logarithmic when `log_y`).
pub struct Panel {
    pub y: String,
    pub unit: &'static str,
    pub log_y: bool,
    pub top: Option<f64>,
    pub traces: Vec<Trace>,
}

/// A stretch of the time axis (a workload's phase): a line where it starts in every panel, its
/// label at the top of the first panel where there is room, shaded when `marked` (a phase that
/// did not reach a steady state).
pub struct Span {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub marked: bool,
}

/// The height of a timeline's first panel and of each one after it, and the room for the time
/// axis's title under the last (pixels).
pub const TIMELINE_FIRST: u32 = 210;
pub const TIMELINE_PANEL: u32 = 130;
pub const TIMELINE_AXIS: u32 = 26;
/// The width of a timeline's plotting area and axis labels, before the names at the lines' ends.
pub const TIMELINE_WIDTH: u32 = 980;

/// Panels stacked on one time axis (x in `x_unit`, titled `x_title` under the last panel):
/// each panel's lines named at their ends, `spans` marked across every panel. The caller
/// scales values to each panel's `unit`.
pub fn timeline(
    title: &str,
    x_title: &str,
    x_unit: &str,
    panels: &[Panel],
    spans: &[Span],
) -> String {
    let mut svg = String::new();
    let points = || {
        panels
            .iter()
            .flat_map(|p| &p.traces)
            .flat_map(|t| t.segments.iter().flatten())
    };
    let (x0, x1) = points()
        .map(|p| p.0)
        .chain(spans.iter().flat_map(|s| [s.from, s.to]))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if !x0.is_finite() || panels.is_empty() {
        return failed("timeline", "no points");
    }
    let (x0, x1) = if x1 > x0 {
        (0f64.min(x0), x1)
    } else {
        (0.0, x0 + 1.0)
    };
    let longest = panels
        .iter()
        .flat_map(|p| &p.traces)
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    let right = (longest as u32 * 7 + 16).clamp(30, 260);
    let heights: Vec<u32> = (0..panels.len())
        .map(|i| {
            let base = if i == 0 {
                TIMELINE_FIRST
            } else {
                TIMELINE_PANEL
            };
            base + if i + 1 == panels.len() {
                TIMELINE_AXIS
            } else {
                0
            }
        })
        .collect();
    let height = heights.iter().sum::<u32>() + 40;
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root =
            SVGBackend::with_string(&mut svg, (TIMELINE_WIDTH + right, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut rest = root.titled(title, (FONT, 16))?;
        for (i, panel) in panels.iter().enumerate() {
            let last = i + 1 == panels.len();
            // The last panel takes what is left (its share and the room for the axis title).
            let area = if last {
                rest.clone()
            } else {
                let (area, below) = rest.split_vertically(heights[i]);
                rest = below;
                area
            };
            let ys = || {
                panel
                    .traces
                    .iter()
                    .flat_map(|t| t.segments.iter().flatten().map(|p| p.1))
            };
            let top = panel.top.unwrap_or_else(|| ys().fold(0.0, f64::max) * 1.1);
            let top = if top > 0.0 { top } else { 1.0 };
            let bottom = ys().filter(|y| *y > 0.0).fold(top, f64::min) * 0.8;
            let mut builder = ChartBuilder::on(&area);
            builder
                .margin(6)
                .margin_left(12)
                .margin_right(right)
                .x_label_area_size(if last { 44 } else { 22 })
                .y_label_area_size(90);
            let mut ends: Vec<(i32, i32, RGBColor, &str)> = Vec::new();
            macro_rules! draw {
                ($chart:expr, $floor:expr) => {{
                    let mut chart = $chart;
                    let floor: f64 = $floor;
                    let x_format = |v: &f64| tick(*v, x_unit);
                    let y_format = |v: &f64| tick(*v, panel.unit);
                    let mut mesh = chart.configure_mesh();
                    mesh.y_desc(panel.y.as_str())
                        .x_label_formatter(&x_format)
                        .y_label_formatter(&y_format)
                        .x_labels(12)
                        .y_labels(match (panel.log_y, i) {
                            (true, _) => 8,
                            (false, 0) => 6,
                            _ => 4,
                        })
                        .light_line_style(TRANSPARENT)
                        .label_style((FONT, 12))
                        .axis_desc_style((FONT, 13));
                    if last {
                        mesh.x_desc(x_title);
                    }
                    mesh.draw()?;
                    for span in spans {
                        if span.marked {
                            chart.draw_series(std::iter::once(Rectangle::new(
                                [(span.from, floor), (span.to, top)],
                                RGBColor(0xe1, 0x57, 0x59).mix(0.12).filled(),
                            )))?;
                        }
                        if span.from > x0 {
                            chart.draw_series(std::iter::once(PathElement::new(
                                vec![(span.from, floor), (span.from, top)],
                                RGBColor(0x99, 0x99, 0x99).stroke_width(1),
                            )))?;
                        }
                        if i == 0 && !span.label.is_empty() {
                            let (a, _) = chart.backend_coord(&(span.from, top));
                            let (b, _) = chart.backend_coord(&(span.to, top));
                            if (b - a) as usize > span.label.chars().count() * 7 + 6 {
                                chart.draw_series(std::iter::once(Text::new(
                                    span.label.clone(),
                                    (span.from, top),
                                    TextStyle::from((FONT, 12).into_font())
                                        .pos(Pos::new(HPos::Left, VPos::Top)),
                                )))?;
                            }
                        }
                    }
                    for trace in &panel.traces {
                        let style = trace.colour.mix(trace.opacity).stroke_width(2);
                        for segment in &trace.segments {
                            let shown = segment.iter().map(|&(x, y)| (x, y.max(floor)));
                            if segment.len() == 1 {
                                chart.draw_series(
                                    shown.map(|p| Circle::new(p, 2, style.filled())),
                                )?;
                            } else {
                                chart.draw_series(LineSeries::new(shown, style))?;
                            }
                        }
                        if let Some(&(x, y)) = trace.segments.iter().flatten().last() {
                            let (px, py) = chart.backend_coord(&(x, y.max(floor)));
                            ends.push((px, py, trace.colour, trace.name.as_str()));
                        }
                    }
                }};
            }
            if panel.log_y {
                draw!(
                    builder.build_cartesian_2d(x0..x1, (bottom..top).log_scale())?,
                    bottom
                );
            } else {
                draw!(builder.build_cartesian_2d(x0..x1, 0f64..top)?, 0.0);
            }
            label_ends(&root, &mut ends)?;
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed("timeline", e),
    }
}

/// A heat-map: rows (y) by columns (x), each cell coloured from pale (lowest) to dark (highest)
/// and labelled with `cell_text`; empty cells stay white.
pub fn heatmap(
    labels: &Labels,
    x_names: &[String],
    y_names: &[String],
    values: &[Vec<Option<f64>>],
    cell_text: &dyn Fn(f64) -> String,
) -> String {
    let mut svg = String::new();
    let (nx, ny) = (x_names.len().max(1), y_names.len().max(1));
    let all = values.iter().flatten().flatten().copied();
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(
            &mut svg,
            (
                (70 * nx as u32 + 160).max(480),
                (28 * ny as u32 + 140).max(260),
            ),
        )
        .into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(labels.caption(), (FONT, 16))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(90)
            .build_cartesian_2d((0..nx - 1).into_segmented(), (0..ny - 1).into_segmented())?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(labels.x)
            .y_desc(labels.y)
            .x_labels(nx)
            .y_labels(ny)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => x_names.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => y_names.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .axis_desc_style((FONT, 14))
            .draw()?;
        for (yi, row) in values.iter().enumerate() {
            for (xi, v) in row.iter().enumerate() {
                let Some(v) = v else { continue };
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                let color = HSLColor(0.6, 0.7, 0.92 - 0.6 * t);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [
                        (SegmentValue::Exact(xi), SegmentValue::Exact(yi)),
                        (SegmentValue::Exact(xi + 1), SegmentValue::Exact(yi + 1)),
                    ],
                    color.filled(),
                )))?;
                let ink = if t > 0.5 { WHITE } else { BLACK };
                chart.draw_series(std::iter::once(Text::new(
                    cell_text(*v),
                    (SegmentValue::CenterOf(xi), SegmentValue::CenterOf(yi)),
                    (FONT, 11).into_font().color(&ink),
                )))?;
            }
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed("heat-map", e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{fixed, signed, significant};

    fn labels() -> Labels<'static> {
        Labels {
            title: "untar",
            x: "configuration",
            y: "real",
            direction: "lower is better",
        }
    }

    #[test]
    fn every_chart_carries_its_title_direction_and_axis_titles() {
        let svg = bars(
            &labels(),
            &[
                Bar {
                    name: "ext4".into(),
                    colour: 0,
                    mean: 1.0,
                    interval: Some((0.9, 1.1)),
                },
                Bar {
                    name: "xfs".into(),
                    colour: 1,
                    mean: 2.0,
                    interval: None,
                },
            ],
            "s",
        );
        for text in [
            "untar (lower is better)",
            "configuration",
            "real",
            "ext4",
            "xfs",
            " s\n",
        ] {
            assert!(svg.contains(text), "{text} missing from {svg}");
        }
        let svg = lines(
            &labels(),
            &[Line {
                name: "ext4".into(),
                colour: 0,
                points: vec![(4096.0, 1.0), (65536.0, 2.0)],
            }],
            XAxis::Log(&|x| format!("{x}")),
            "s",
            false,
            &[(65536.0, 2.0, "peak".into())],
        );
        assert!(svg.starts_with("<svg") && svg.contains("peak") && svg.contains("real"));
        let svg = heatmap(
            &labels(),
            &["4k".into()],
            &["1m".into(), "2m".into()],
            &[vec![Some(1.0)], vec![None]],
            &|v| format!("{v:.0}"),
        );
        assert!(svg.contains("untar (lower is better)") && svg.contains("4k"));
    }

    /// A configuration's colour is its index's, whatever else the chart holds: bars and lines
    /// are filled and stroked with it, and a line's name at its end is written in it.
    #[test]
    fn each_configuration_is_drawn_in_its_own_colour() {
        let svg = bars(
            &labels(),
            &[Bar {
                name: "xfs".into(),
                colour: 3,
                mean: 1.0,
                interval: None,
            }],
            "",
        );
        assert!(
            svg.contains(&format!("fill=\"{}\"", colour_hex(3).to_uppercase()))
                || svg.contains(&format!("fill=\"{}\"", colour_hex(3))),
            "{svg}"
        );
        assert!(
            !svg.contains(&format!("fill=\"{}\"", colour_hex(0))),
            "{svg}"
        );
        let svg = lines(
            &labels(),
            &[Line {
                name: "xfs".into(),
                colour: 7,
                points: vec![(0.3, 1.0), (3.0, 2.0)],
            }],
            XAxis::Keys(vec![
                (nines(50.0), "p50".into()),
                (nines(99.9), "p99.9".into()),
            ]),
            "ms",
            true,
            &[],
        );
        let hex = colour_hex(7);
        assert!(
            svg.to_lowercase().contains(&format!("stroke=\"{hex}\"")),
            "{svg}"
        );
        let named = svg
            .lines()
            .find(|l| l.contains(">xfs<") || l.trim_end().ends_with("xfs"));
        assert!(svg.contains("p99.9") && svg.contains("p50"), "{svg}");
        assert!(named.is_some(), "{svg}");
    }

    #[test]
    fn ticks_read_as_numbers_with_units_and_nines_are_evenly_spaced() {
        assert_eq!(tick(70000.0, "ops/s"), "70 k ops/s");
        assert_eq!(tick(1.5, "GiB/s"), "1.5 GiB/s");
        assert_eq!(tick(200.0, "ms"), "200 ms");
        assert_eq!(tick(0.25, ""), "0.25");
        assert_eq!(tick(1_200_000.0, "ops/s"), "1.2 M ops/s");
        assert_eq!(short_number(70000.5), "70 k");
        assert_eq!(significant(2.0), "2.00");
        assert_eq!(significant(774474.0), "774 k");
        assert_eq!(significant(33188.0), "33.2 k");
        // Past any prefix, scientific: 3 significant digits, never hundreds of digits.
        assert_eq!(significant(999e9), "999 G");
        assert_eq!(significant(1e308), "1.00e308");
        assert_eq!(significant(-2.5e15), "-2.50e15");
        assert_eq!(significant(f64::INFINITY), "inf");
        assert_eq!(
            short_number(1e300),
            "1.00e300",
            "the exponent's zeros are kept"
        );
        assert_eq!(fixed(1e308, 3), "1.00e308");
        assert_eq!(fixed(12.345, 1), "12.3");
        assert_eq!(
            (signed(1.25, 1).as_str(), signed(-3e20, 1).as_str()),
            ("+1.2", "-3.00e20")
        );
        assert!((nines(90.0) - 1.0).abs() < 1e-12 && (nines(99.9) - 3.0).abs() < 1e-9);
        assert!(spans_decades([1.0, 5.0, 12.0]) && !spans_decades([1.0, 9.0]));
    }
}
