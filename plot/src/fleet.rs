//! A fleet's figure (`fly FLEET --out`): every vehicle's path top-down in
//! the fleet's shared frame, with the closest pair joined where they came
//! closest, and every vehicle's altitude against time.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::panel::{LEGEND_W, Line, clipped, legend, time_panel, top_down_chart, top_down_ranges};
use crate::{COLORS, Figure, PlotError, Series, write_png_svg};

/// Where two vehicles came closest: their names, the time and distance.
#[derive(Debug, Clone)]
pub struct Closest<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub time_us: u64,
    pub separation_m: f64,
}

/// Writes `<stem>.png` and `<stem>.svg` of the vehicles' logs (name, log).
pub fn fleet_plot(
    title: &str,
    vehicles: &[(&str, &Path)],
    closest: Option<&Closest>,
    stem: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let logs = vehicles
        .iter()
        .map(|(n, p)| Series::read(p).map(|s| (*n, s)))
        .collect::<Result<Vec<_>, _>>()?;
    write_png_svg(
        stem,
        (1800, 900),
        &FleetFigure {
            title,
            logs: &logs,
            closest,
        },
    )
}

struct FleetFigure<'a> {
    title: &'a str,
    logs: &'a [(&'a str, Series)],
    closest: Option<&'a Closest<'a>>,
}

impl Figure for FleetFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(self.title, ("sans-serif", 26)).map_err(e)?;
        let (left, right) = root.split_horizontally(900);
        self.paths(&left)?;
        // Altitude of every vehicle on the first one's clock (a fleet's
        // vehicles log together).
        let Some((_, first)) = self.logs.first() else {
            return Ok(());
        };
        let t = first.time_s();
        let alts: Vec<(String, Vec<f64>)> = self
            .logs
            .iter()
            .map(|(n, s)| {
                let z = s.get("z_m").unwrap_or(&[]);
                (n.to_string(), z.iter().take(t.len()).map(|v| -v).collect())
            })
            .collect();
        let lines: Vec<Line> = alts
            .iter()
            .filter(|(_, v)| v.len() == t.len())
            .map(|(n, v)| Line { name: n, values: v })
            .collect();
        time_panel(&right, "Altitude", "m", &t, &lines, &[], &[])
    }
}

impl FleetFigure<'_> {
    fn paths<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (w, _) = area.dim_in_pixel();
        let (chart_area, legend_area) = area.split_horizontally(w.saturating_sub(LEGEND_W));
        let all_n = self
            .logs
            .iter()
            .flat_map(|(_, s)| s.get("x_m").unwrap_or(&[]).iter());
        let all_e = self
            .logs
            .iter()
            .flat_map(|(_, s)| s.get("y_m").unwrap_or(&[]).iter());
        let (ex, ny) = top_down_ranges(all_n, all_e);
        let mut chart = top_down_chart(&chart_area, "Paths, top-down (m)", (ex, ny))?;
        let mut entries = Vec::new();
        for (k, (name, s)) in self.logs.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let (Some(n), Some(east)) = (s.get("x_m"), s.get("y_m")) else {
                continue;
            };
            for part in clipped(east, n, ex, ny) {
                chart
                    .draw_series(LineSeries::new(part, color.stroke_width(1)))
                    .map_err(e)?;
            }
            if let (Some(le), Some(ln)) = (east.last(), n.last()) {
                chart
                    .draw_series(std::iter::once(Circle::new((*le, *ln), 4, color.filled())))
                    .map_err(e)?;
            }
            entries.push((*name, color));
        }
        if let Some(c) = self.closest {
            let at = |name: &str| -> Option<(f64, f64)> {
                let (_, s) = self.logs.iter().find(|(n, _)| *n == name)?;
                let t = s.get("time_us")?;
                let i = t.iter().rposition(|x| *x <= c.time_us as f64)?;
                Some((s.get("y_m")?[i], s.get("x_m")?[i]))
            };
            if let (Some(a), Some(b)) = (at(c.a), at(c.b)) {
                let red = RGBColor(214, 39, 40);
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![a, b],
                        red.stroke_width(3),
                    )))
                    .map_err(e)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("closest: {} and {}, {:.2} m", c.a, c.b, c.separation_m),
                        a,
                        ("sans-serif", 14).into_font().color(&red),
                    )))
                    .map_err(e)?;
            }
        }
        legend(&legend_area, &entries)
    }
}
