//! What every time panel shares: series clipped to the panel, the legend
//! in a strip of its own beside the data, mode bands and event lines.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::COLORS;

/// Width of the legend strip right of each panel's chart.
pub(crate) const LEGEND_W: u32 = 150;

/// One line of a panel.
pub(crate) struct Line<'a> {
    pub name: &'a str,
    pub values: &'a [f64],
}

/// A stretch of one mode: [t0, t1] seconds, its name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    pub t0: f64,
    pub t1: f64,
    pub name: String,
}

/// A moment marked across every panel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub t: f64,
    /// A failure (red) or an ordinary event (grey).
    pub bad: bool,
}

/// The colour of a mode's band (the viewer's, for the same modes).
pub(crate) fn mode_color(name: &str) -> RGBColor {
    match name {
        "disarmed" => RGBColor(185, 191, 202),
        "idle" => RGBColor(158, 202, 225),
        "takeoff" => RGBColor(116, 196, 118),
        "mission" => RGBColor(107, 174, 214),
        "hold" => RGBColor(253, 208, 162),
        "rtl" => RGBColor(253, 141, 60),
        "land" => RGBColor(198, 219, 239),
        "landed" => RGBColor(161, 217, 155),
        "offboard" => RGBColor(188, 189, 220),
        "flight-stack" => RGBColor(218, 218, 235),
        _ => RGBColor(207, 211, 218),
    }
}

/// The parts of the polyline (x[i], y[i]) inside [x0, x1] x [y0, y1]:
/// every segment clipped (Liang-Barsky), a non-finite point ending a part.
pub(crate) fn clipped(
    x: &[f64],
    y: &[f64],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let mut parts: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let n = x.len().min(y.len());
    let finite = |i: usize| x[i].is_finite() && y[i].is_finite();
    for i in 1..n {
        if !(finite(i - 1) && finite(i)) {
            if current.len() > 1 {
                parts.push(std::mem::take(&mut current));
            }
            current.clear();
            continue;
        }
        let (ax, ay, bx, by) = (x[i - 1], y[i - 1], x[i], y[i]);
        let (dx, dy) = (bx - ax, by - ay);
        let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
        let mut visible = true;
        for (p, q) in [(-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)] {
            if p == 0.0 {
                if q < 0.0 {
                    visible = false;
                    break;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if !visible || t0 > t1 {
            if current.len() > 1 {
                parts.push(std::mem::take(&mut current));
            }
            current.clear();
            continue;
        }
        let a = (ax + t0 * dx, ay + t0 * dy);
        let b = (ax + t1 * dx, ay + t1 * dy);
        if current.last() != Some(&a) {
            if current.len() > 1 {
                parts.push(std::mem::take(&mut current));
            }
            current.clear();
            current.push(a);
        }
        current.push(b);
        if t1 < 1.0 {
            parts.push(std::mem::take(&mut current));
        }
    }
    if current.len() > 1 {
        parts.push(current);
    }
    parts
}

/// The finite range of `values`, widened to a visible span.
pub(crate) fn range<'a>(values: impl Iterator<Item = &'a f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-3 * hi.abs().max(1.0));
    (lo - pad, hi + pad)
}

/// The (east, north) ranges of a top-down chart of `north` and `east`
/// values and the origin, at equal scales (a square stays square).
pub(crate) fn top_down_ranges<'a>(
    north: impl Iterator<Item = &'a f64>,
    east: impl Iterator<Item = &'a f64>,
) -> ((f64, f64), (f64, f64)) {
    let (n0, n1) = range(north.chain(std::iter::once(&0.0)));
    let (e0, e1) = range(east.chain(std::iter::once(&0.0)));
    let span = (n1 - n0).max(e1 - e0) / 2.0;
    let (nc, ec) = ((n0 + n1) / 2.0, (e0 + e1) / 2.0);
    ((ec - span, ec + span), (nc - span, nc + span))
}

/// A top-down chart (east right, north up) over `ex` x `ny`, its mesh drawn.
pub(crate) fn top_down_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    (ex, ny): ((f64, f64), (f64, f64)),
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(ex.0..ex.1, ny.0..ny.1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("east (m)")
        .y_desc("north (m)")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    Ok(chart)
}

/// A legend in its own area: a sample of each line's colour and its name.
pub(crate) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, RGBColor)],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    for (k, (name, color)) in entries.iter().enumerate() {
        let y = 44 + 18 * k as i32;
        area.draw(&PathElement::new(
            vec![(6, y), (26, y)],
            color.stroke_width(3),
        ))
        .map_err(e)?;
        area.draw(&Text::new(
            name.to_string(),
            (32, y - 7),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))
        .map_err(e)?;
    }
    Ok(())
}

/// A time panel: its lines clipped to it, mode bands behind them, event
/// lines across, the legend beside it.
pub(crate) fn time_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    unit: &str,
    t: &[f64],
    lines: &[Line],
    bands: &[Band],
    marks: &[Mark],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (w, _) = area.dim_in_pixel();
    let (chart_area, legend_area) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    let (t0, t1) = range(t.iter());
    let (y0, y1) = range(lines.iter().flat_map(|l| l.values.iter()));
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(format!("{title} ({unit})"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(t0..t1, y0..y1)
        .map_err(e)?;
    chart
        .draw_series(bands.iter().map(|b| {
            Rectangle::new(
                [(b.t0.max(t0), y0), (b.t1.min(t1), y1)],
                mode_color(&b.name).mix(0.35).filled(),
            )
        }))
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .label_style(("sans-serif", 13))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(e)?;
    for m in marks.iter().filter(|m| m.t >= t0 && m.t <= t1) {
        let color = if m.bad {
            RGBColor(214, 39, 40)
        } else {
            RGBColor(90, 90, 90)
        };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(m.t, y0), (m.t, y1)],
                color.stroke_width(1),
            )))
            .map_err(e)?;
    }
    let mut entries = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        for part in clipped(t, l.values, (t0, t1), (y0, y1)) {
            chart
                .draw_series(LineSeries::new(part, color.stroke_width(1)))
                .map_err(e)?;
        }
        entries.push((l.name, color));
    }
    legend(&legend_area, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_ignore_non_finite_values_and_never_collapse() {
        assert_eq!(range([f64::NAN, 1.0, 3.0].iter()), (0.9, 3.1));
        let (lo, hi) = range([2.0, 2.0].iter());
        assert!(lo < 2.0 && hi > 2.0);
        assert_eq!(range([f64::NAN].iter()), (0.0, 1.0));
    }

    #[test]
    fn clipping_keeps_what_is_inside_and_cuts_at_the_edges() {
        // Inside: unchanged, one part.
        let p = clipped(&[0.0, 1.0, 2.0], &[0.0, 0.5, 1.0], (0.0, 2.0), (0.0, 1.0));
        assert_eq!(p, vec![vec![(0.0, 0.0), (1.0, 0.5), (2.0, 1.0)]]);
        // A spike above the top is cut where it crosses y = 1.
        let p = clipped(&[0.0, 1.0, 2.0], &[0.0, 4.0, 0.0], (0.0, 2.0), (0.0, 1.0));
        assert_eq!(
            p,
            vec![vec![(0.0, 0.0), (0.25, 1.0)], vec![(1.75, 1.0), (2.0, 0.0)]]
        );
        // Wholly outside: nothing.
        assert!(clipped(&[0.0, 1.0], &[5.0, 6.0], (0.0, 2.0), (0.0, 1.0)).is_empty());
        // A NaN ends a part.
        let p = clipped(
            &[0.0, 1.0, 2.0, 3.0],
            &[0.0, 0.1, f64::NAN, 0.2],
            (0.0, 3.0),
            (0.0, 1.0),
        );
        assert_eq!(p, vec![vec![(0.0, 0.0), (1.0, 0.1)]]);
        // A vertical drop through the whole panel.
        let p = clipped(&[1.0, 1.0], &[-5.0, 5.0], (0.0, 2.0), (0.0, 1.0));
        assert_eq!(p, vec![vec![(1.0, 0.0), (1.0, 1.0)]]);
    }
}
