//! Plots of a lockstep flight log (the `fly` CSV, header on line 1), drawn
//! with plotters as PNG and SVG: one figure of ten panels.
//!
//! | panel | what |
//! |---|---|
//! | path | top-down true path (east, north), its setpoints, home, waypoints |
//! | altitude | true, estimated and setpoint altitude |
//! | velocity | true north/east/down velocity and their setpoints |
//! | attitude | roll, pitch, yaw (unwrapped) from the true quaternion |
//! | motors | motor commands |
//! | rotors | rotor speeds |
//! | battery voltage, current, state of charge | per pack |
//! | wind | north, east, down |
//!
//! Every time panel has the modes as coloured bands behind its lines,
//! arming and fault changes as vertical lines (faults red), its lines
//! clipped to it, and its legend in a strip beside it, off the data.
//!
//! [`prediction_plot`] draws `lockstep predict`'s log-against-prediction
//! figure of one horizon; [`work_precision`] draws `lockstep
//! compare-integrators`' error-vs-cost figure.
//!
//! Text is drawn with DejaVu Sans, embedded (its licence is in
//! `plot/fonts/`), so plots need no system fonts.

mod fleet;
mod flight;
mod histograms;
mod panel;
mod prediction;
mod work_precision;

pub use fleet::{Closest, fleet_plot};
pub use flight::{Decor, plot_log};
pub use histograms::{Outcome, bin_count, bins, histograms, scatter};
pub use prediction::{Compared, prediction_plot};
pub use work_precision::{ERROR_FLOOR, WorkPoint, WorkSeries, work_precision};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// What went wrong, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot read log {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("log {path}: {reason}")]
    Log { path: String, reason: String },
    #[error("cannot draw {path}: {reason}")]
    Draw { path: String, reason: String },
}

/// The log's columns that hold names, not numbers.
const TEXT: [&str; 1] = ["mode_name"];

/// A flight log's numeric columns, by name.
#[derive(Debug, Clone)]
pub struct Series {
    names: Vec<String>,
    columns: Vec<Vec<f64>>,
}

impl Series {
    /// Reads every column of the CSV log at `path` as numbers.
    pub fn read(path: &Path) -> Result<Series, PlotError> {
        let p = path.display().to_string();
        let mut r = csv::Reader::from_path(path).map_err(|e| PlotError::Read {
            path: p.clone(),
            reason: e.to_string(),
        })?;
        let all: Vec<String> = r
            .headers()
            .map_err(|e| PlotError::Log {
                path: p.clone(),
                reason: e.to_string(),
            })?
            .iter()
            .map(str::to_string)
            .collect();
        if all.first().map(String::as_str) != Some("time_us") {
            return Err(PlotError::Log {
                path: p,
                reason: "the first column is not `time_us` (is it a lockstep flight log?)".into(),
            });
        }
        // The numeric columns: every one but the names (`mode_name`).
        let kept: Vec<usize> = (0..all.len())
            .filter(|k| !TEXT.contains(&all[*k].as_str()))
            .collect();
        let names: Vec<String> = kept.iter().map(|k| all[*k].clone()).collect();
        let mut columns = vec![Vec::new(); names.len()];
        for (i, rec) in r.records().enumerate() {
            let line = i + 2;
            let rec = rec.map_err(|e| PlotError::Log {
                path: p.clone(),
                reason: format!("line {line}: {e}"),
            })?;
            for (c, k) in columns.iter_mut().zip(&kept) {
                let text = rec.get(*k).unwrap_or("");
                c.push(text.parse().map_err(|_| PlotError::Log {
                    path: p.clone(),
                    reason: format!("line {line}: `{}` is `{text}`, not a number", all[*k]),
                })?);
            }
        }
        if columns[0].is_empty() {
            return Err(PlotError::Log {
                path: p,
                reason: "no rows to plot".into(),
            });
        }
        Ok(Series { names, columns })
    }

    /// The column `name`, if the log has it.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.columns[i].as_slice())
    }

    /// The columns' names, in the log's order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Every column whose name matches `prefix{i}{suffix}`, in order of `i`.
    pub fn indexed(&self, prefix: &str, suffix: &str) -> Vec<(String, &[f64])> {
        (0..64)
            .map_while(|i| {
                let n = format!("{prefix}{i}{suffix}");
                self.get(&n).map(|c| (n, c))
            })
            .collect()
    }

    /// Time in seconds.
    fn time_s(&self) -> Vec<f64> {
        self.columns[0].iter().map(|t| t * 1e-6).collect()
    }
}

/// A figure drawn the same way on any plotters backend.
pub(crate) trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Draws `fig` into `<stem>.png` and `<stem>.svg` of `size` pixels; the
/// files written, or the error naming the file that failed.
pub(crate) fn write_png_svg(
    stem: &Path,
    size: (u32, u32),
    fig: &impl Figure,
) -> Result<Vec<PathBuf>, PlotError> {
    register_font();
    let [png, svg] = output_files(stem);
    let failed = |p: &Path, reason: String| PlotError::Draw {
        path: p.display().to_string(),
        reason,
    };
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        fig.draw(&root).map_err(|r| failed(&png, r))?;
        root.present().map_err(|e| failed(&png, e.to_string()))?;
    }
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        fig.draw(&root).map_err(|r| failed(&svg, r))?;
        root.present().map_err(|e| failed(&svg, e.to_string()))?;
    }
    Ok(vec![png, svg])
}

/// The files [`plot_log`] writes for `stem`: `<stem>.png` and `<stem>.svg`
/// (appended, so a stem with a dot keeps it).
pub fn output_files(stem: &Path) -> [PathBuf; 2] {
    ["png", "svg"].map(|ext| {
        let mut s = stem.as_os_str().to_owned();
        s.push(".");
        s.push(ext);
        PathBuf::from(s)
    })
}

pub(crate) fn register_font() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // The embedded font parses (tested); were it not to, plotters
        // would draw no text rather than fail.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

pub(crate) const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_parses() {
        assert!(plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok());
    }
}
