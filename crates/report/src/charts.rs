//! Charts as static SVG (plotters' SVG backend): bars with 95 % confidence error bars, lines
//! (optionally on a log x axis) with marked points, and heat-maps. Every chart has a title that
//! says which way is better and axis titles with units; a chart that cannot be drawn says so
//! in place of the picture instead of failing the report.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

/// A chart's words: title, axis titles (with units) and the direction ("higher is better").
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

/// One bar per label: its mean, and its 95 % interval as an error bar when known.
pub fn bars(labels: &Labels, names: &[String], values: &[(f64, Option<(f64, f64)>)]) -> String {
    let mut svg = String::new();
    let n = names.len().max(1);
    let width = (140 * n as u32).clamp(480, 1400);
    let top = values
        .iter()
        .map(|(m, ci)| ci.map_or(*m, |(_, hi)| hi.max(*m)))
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.12 } else { 1.0 };
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(&mut svg, (width, 380)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(labels.caption(), (FONT, 16))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((0..n - 1).into_segmented(), 0f64..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(labels.x)
            .y_desc(labels.y)
            .x_labels(n)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .axis_desc_style((FONT, 14))
            .draw()?;
        chart.draw_series(values.iter().enumerate().map(|(i, (mean, _))| {
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), *mean),
                ],
                Palette99::pick(i).mix(0.8).filled(),
            );
            bar.set_margin(0, 0, 12, 12);
            bar
        }))?;
        chart.draw_series(values.iter().enumerate().filter_map(|(i, (mean, ci))| {
            ci.map(|(lo, hi)| {
                ErrorBar::new_vertical(
                    SegmentValue::CenterOf(i),
                    lo.max(0.0),
                    *mean,
                    hi,
                    BLACK.stroke_width(2),
                    14,
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

/// One line per series of (x, y) points; `log_x` puts x on a log scale (file sizes); `marks`
/// are labelled points (a peak, a knee) drawn over the lines.
pub fn lines(
    labels: &Labels,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
    x_format: &dyn Fn(f64) -> String,
    marks: &[(f64, f64, String)],
) -> String {
    let mut svg = String::new();
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|(x, _)| *x));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let top = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, y)| *y))
        .fold(0.0, f64::max);
    if !x0.is_finite() {
        return failed("line chart", "no points");
    }
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 * 0.5, x0 * 2.0 + 1.0)
    };
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(&mut svg, (720, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(labels.caption(), (FONT, 16))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(80);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(labels.x)
                    .y_desc(labels.y)
                    .x_label_formatter(&|x| x_format(*x))
                    .axis_desc_style((FONT, 14))
                    .draw()?;
                for (i, (name, points)) in series.iter().enumerate() {
                    let color = Palette99::pick(i).to_rgba();
                    chart
                        .draw_series(LineSeries::new(
                            points.iter().copied(),
                            color.stroke_width(2),
                        ))?
                        .label(name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                        });
                    chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
                }
                chart.draw_series(marks.iter().map(|(x, y, text)| {
                    EmptyElement::at((*x, *y))
                        + Circle::new((0, 0), 6, BLACK.stroke_width(2))
                        + Text::new(text.clone(), (8, -16), (FONT, 13))
                }))?;
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font((FONT, 13))
                    .draw()?;
            }};
        }
        if log_x {
            draw!(builder.build_cartesian_2d((x0..x1).log_scale(), 0f64..top)?);
        } else {
            draw!(builder.build_cartesian_2d(x0..x1, 0f64..top)?);
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => failed("line chart", e),
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

    fn labels() -> Labels<'static> {
        Labels {
            title: "untar",
            x: "configuration",
            y: "real [s]",
            direction: "lower is better",
        }
    }

    #[test]
    fn every_chart_carries_its_title_direction_and_axis_titles() {
        let svg = bars(
            &labels(),
            &["ext4".into(), "xfs".into()],
            &[(1.0, Some((0.9, 1.1))), (2.0, None)],
        );
        for text in [
            "untar (lower is better)",
            "configuration",
            "real [s]",
            "ext4",
            "xfs",
        ] {
            assert!(svg.contains(text), "{text} missing from {svg}");
        }
        let svg = lines(
            &labels(),
            &[("ext4".into(), vec![(4096.0, 1.0), (65536.0, 2.0)])],
            true,
            &|x| format!("{x}"),
            &[(65536.0, 2.0, "peak".into())],
        );
        assert!(svg.starts_with("<svg") && svg.contains("peak") && svg.contains("real [s]"));
        let svg = heatmap(
            &labels(),
            &["4k".into()],
            &["1m".into(), "2m".into()],
            &[vec![Some(1.0)], vec![None]],
            &|v| format!("{v:.0}"),
        );
        assert!(svg.contains("untar (lower is better)") && svg.contains("4k"));
    }
}
