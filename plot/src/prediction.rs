//! `lockstep predict`'s figures: for one horizon, each compared quantity
//! at the end of every replayed window, as the log has it (a black line),
//! as the plant predicted it (blue dots) and as the baseline did (grey
//! dots), against the log's time.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::panel::range;
use crate::{Figure, PlotError, write_png_svg};

const LOG: RGBColor = RGBColor(30, 30, 30);
const PLANT: RGBColor = RGBColor(31, 119, 180);
const BASELINE: RGBColor = RGBColor(150, 150, 150);

/// One quantity at the end of each window (in time order).
#[derive(Debug, Clone)]
pub struct Compared<'a> {
    /// What it is, with its unit: "roll rate (rad/s)".
    pub name: &'a str,
    /// The windows' end times (s of log).
    pub t_s: &'a [f64],
    pub log: &'a [f64],
    pub plant: &'a [f64],
    pub baseline: &'a [f64],
}

/// Writes `<stem>.png` and `<stem>.svg`: `title` above a panel per
/// quantity, three to a row.
pub fn prediction_plot(
    title: &str,
    panels: &[Compared],
    stem: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let rows = panels.len().div_ceil(3).max(1) as u32;
    write_png_svg(stem, (1500, 50 + 300 * rows), &Prediction { title, panels })
}

struct Prediction<'a> {
    title: &'a str,
    panels: &'a [Compared<'a>],
}

impl Figure for Prediction<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(self.title, ("sans-serif", 22)).map_err(e)?;
        let areas = root.split_evenly((self.panels.len().div_ceil(3).max(1), 3));
        for (c, area) in self.panels.iter().zip(areas.iter()) {
            panel(area, c)?;
        }
        Ok(())
    }
}

fn panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, c: &Compared) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (x0, x1) = range(c.t_s.iter());
    let (y0, y1) = range(c.log.iter().chain(c.plant).chain(c.baseline));
    let mut chart = ChartBuilder::on(area)
        .caption(c.name, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("log time (s)")
        .x_labels(6)
        .y_labels(6)
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(e)?;
    let points = |v: &'_ [f64]| -> Vec<(f64, f64)> {
        c.t_s
            .iter()
            .zip(v)
            .filter(|(t, y)| t.is_finite() && y.is_finite())
            .map(|(t, y)| (*t, *y))
            .collect()
    };
    chart
        .draw_series(
            points(c.baseline)
                .into_iter()
                .map(|p| Circle::new(p, 2, BASELINE.filled())),
        )
        .map_err(e)?
        .label("baseline")
        .legend(|(x, y)| Circle::new((x + 6, y), 3, BASELINE.filled()));
    chart
        .draw_series(
            points(c.plant)
                .into_iter()
                .map(|p| Circle::new(p, 2, PLANT.filled())),
        )
        .map_err(e)?
        .label("plant")
        .legend(|(x, y)| Circle::new((x + 6, y), 3, PLANT.filled()));
    // The log as a line, broken where a window is missing (a gap of more
    // than three times the usual spacing) or where an angle wraps.
    let logged = points(c.log);
    let mut gaps: Vec<f64> = logged.windows(2).map(|w| w[1].0 - w[0].0).collect();
    gaps.sort_by(f64::total_cmp);
    let usual = gaps.get(gaps.len() / 2).copied().unwrap_or(f64::INFINITY);
    let span = y1 - y0;
    let mut parts: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for (i, p) in logged.iter().enumerate() {
        if i > 0 {
            let q = logged[i - 1];
            if p.0 - q.0 > 3.0 * usual || (p.1 - q.1).abs() > 0.5 * span {
                parts.push(Vec::new());
            }
        }
        parts.last_mut().expect("one part at least").push(*p);
    }
    chart
        .draw_series(
            parts
                .into_iter()
                .filter(|p| p.len() > 1)
                .map(|p| PathElement::new(p, LOG.stroke_width(1))),
        )
        .map_err(e)?
        .label("log")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], LOG.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 11))
        .draw()
        .map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_drawn_with_every_panel_and_an_unwritable_one_is_named() {
        let dir = std::env::temp_dir().join(format!("lockstep-prediction-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t: Vec<f64> = (0..50).map(|i| f64::from(i) * 0.5).collect();
        let log: Vec<f64> = t.iter().map(|t| t.sin()).collect();
        let plant: Vec<f64> = log.iter().map(|v| v + 0.05).collect();
        let base = vec![0.0; 50];
        let c = Compared {
            name: "roll rate (rad/s)",
            t_s: &t,
            log: &log,
            plant: &plant,
            baseline: &base,
        };
        let files = prediction_plot("0.2 s", &[c.clone(), c.clone()], &dir.join("p")).unwrap();
        assert_eq!(files, vec![dir.join("p.png"), dir.join("p.svg")]);
        let svg = std::fs::read_to_string(dir.join("p.svg")).unwrap();
        assert_eq!(
            svg.matches("roll rate (rad/s)").count(),
            2,
            "a caption per panel"
        );
        let err = prediction_plot("x", &[c], &dir.join("missing/p")).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "cannot draw {}",
                dir.join("missing/p.png").display()
            )),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
