//! The work–precision plot of `lockstep compare-integrators`: error
//! against cost (RHS evaluations; wall time), log–log, one line per
//! method through its settings.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{COLORS, Figure, PlotError, write_png_svg};

const SIZE: (u32, u32) = (1600, 720);

/// Errors below this are drawn at it (a log axis has no zero).
pub const ERROR_FLOOR: f64 = 1e-16;

/// One measured setting of a method.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkPoint {
    /// RHS evaluations per simulated second.
    pub rhs_per_s: f64,
    /// Median wall time of the whole replay, ms.
    pub wall_ms: f64,
    /// The error plotted (e.g. the largest position error, m).
    pub error: f64,
    /// The setting, drawn next to the point (`500 us`, `1e-7`).
    pub label: String,
}

/// A method's points, in the order of its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkSeries {
    pub name: String,
    pub points: Vec<WorkPoint>,
}

/// Writes `<stem>.png` and `<stem>.svg`: error (named `error_name`)
/// against RHS evaluations per simulated second, and against wall time.
pub fn work_precision(
    series: &[WorkSeries],
    error_name: &str,
    title: &str,
    stem: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    write_png_svg(
        stem,
        SIZE,
        &Wp {
            series,
            error_name,
            title,
        },
    )
}

struct Wp<'a> {
    series: &'a [WorkSeries],
    error_name: &'a str,
    title: &'a str,
}

impl Figure for Wp<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        figure(root, self.series, self.error_name, self.title)
    }
}

fn figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    series: &[WorkSeries],
    error_name: &str,
    title: &str,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 26))
        .map_err(|e| e.to_string())?;
    let panels = root.split_evenly((1, 2));
    panel(
        &panels[0],
        series,
        error_name,
        "RHS evaluations per simulated second",
        |p| p.rhs_per_s,
    )?;
    panel(
        &panels[1],
        series,
        error_name,
        "median wall time of a replay (ms)",
        |p| p.wall_ms,
    )
}

/// Decade bounds around the finite, positive values (at least one decade).
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi == 0.0 {
        return (1e-1, 1e1);
    }
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    if hi > lo { (lo, hi) } else { (lo, lo * 10.0) }
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    series: &[WorkSeries],
    error_name: &str,
    x_name: &str,
    x_of: impl Fn(&WorkPoint) -> f64,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let points = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = log_range(points().map(&x_of));
    let (y0, y1) = log_range(points().map(|p| p.error.max(ERROR_FLOOR)));
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(x_name)
        .y_desc(error_name)
        .label_style(("sans-serif", 14))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .x_label_formatter(&|v| format!("{v:.0e}"))
        .draw()
        .map_err(e)?;
    for (k, s) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let xy: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| x_of(p).is_finite() && x_of(p) > 0.0 && !p.error.is_nan())
            .map(|p| (x_of(p), p.error.max(ERROR_FLOOR)))
            .collect();
        chart
            .draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(s.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        chart
            .draw_series(xy.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(e)?;
        let labels = s
            .points
            .iter()
            .filter(|p| x_of(p).is_finite() && x_of(p) > 0.0 && !p.error.is_nan())
            .map(|p| {
                // Beside the marker, not on it.
                EmptyElement::at((x_of(p), p.error.max(ERROR_FLOOR)))
                    + Text::new(
                        p.label.clone(),
                        (7, -6),
                        ("sans-serif", 12).into_font().color(&color),
                    )
            });
        chart.draw_series(labels).map_err(e)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ranges_span_whole_decades() {
        assert_eq!(log_range([3e-9, 2e-3].into_iter()), (1e-9, 1e-2));
        assert_eq!(log_range([1e-3].into_iter()), (1e-3, 1e-2));
        assert_eq!(log_range([0.0, f64::NAN].into_iter()), (1e-1, 1e1));
    }

    #[test]
    fn a_plot_is_written_as_png_and_svg() {
        let dir = std::env::temp_dir().join(format!("lockstep-wp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = vec![WorkSeries {
            name: "rk4".into(),
            points: vec![
                WorkPoint {
                    rhs_per_s: 4000.0,
                    wall_ms: 3.0,
                    error: 3e-11,
                    label: "1000 us".into(),
                },
                WorkPoint {
                    rhs_per_s: 8000.0,
                    wall_ms: 6.0,
                    error: 0.0,
                    label: "500 us".into(),
                },
            ],
        }];
        let files = work_precision(&s, "position error (m)", "test", &dir.join("wp")).unwrap();
        let png = std::fs::read(&files[0]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("<svg") && svg.contains("rk4") && svg.contains("500 us"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
