//! Plots of a lockstep flight log (the `fly` CSV, header on line 1), drawn
//! with plotters as PNG and SVG: one figure of ten panels.
//!
//! | panel | what |
//! |---|---|
//! | path | top-down true path (east, north), its setpoints, home, waypoints |
//! | altitude | true, estimated and setpoint altitude |
//! | velocity | true north/east/down velocity and their setpoints |
//! | attitude | roll, pitch, yaw from the true quaternion |
//! | motors | motor commands |
//! | rotors | rotor speeds |
//! | battery voltage, current, state of charge | per pack |
//! | wind | north, east, down |
//!
//! [`work_precision`] draws `lockstep compare-integrators`' error-vs-cost
//! figure.
//!
//! Text is drawn with DejaVu Sans, embedded (its licence is in
//! `plot/fonts/`), so plots need no system fonts.

mod histograms;
mod work_precision;

pub use histograms::{bins, histograms};
pub use work_precision::{ERROR_FLOOR, WorkPoint, WorkSeries, work_precision};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const SIZE: (u32, u32) = (1600, 2200);

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

/// A flight log's columns, by name.
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
        let names: Vec<String> = r
            .headers()
            .map_err(|e| PlotError::Log {
                path: p.clone(),
                reason: e.to_string(),
            })?
            .iter()
            .map(str::to_string)
            .collect();
        if names.first().map(String::as_str) != Some("time_us") {
            return Err(PlotError::Log {
                path: p,
                reason: "the first column is not `time_us` (is it a lockstep flight log?)".into(),
            });
        }
        let mut columns = vec![Vec::new(); names.len()];
        for (i, rec) in r.records().enumerate() {
            let line = i + 2;
            let rec = rec.map_err(|e| PlotError::Log {
                path: p.clone(),
                reason: format!("line {line}: {e}"),
            })?;
            for (k, c) in columns.iter_mut().enumerate() {
                let text = rec.get(k).unwrap_or("");
                c.push(text.parse().map_err(|_| PlotError::Log {
                    path: p.clone(),
                    reason: format!("line {line}: `{}` is `{text}`, not a number", names[k]),
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

    fn get(&self, name: &str) -> Option<&[f64]> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.columns[i].as_slice())
    }

    /// Every column whose name matches `prefix{i}{suffix}`, in order of `i`.
    fn indexed(&self, prefix: &str, suffix: &str) -> Vec<(String, &[f64])> {
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

/// Writes `<stem>.png` and `<stem>.svg` of the log at `log`; `waypoints`
/// are (north, east) metres from the origin. Returns the files written.
pub fn plot_log(
    log: &Path,
    stem: &Path,
    waypoints: &[(f64, f64)],
) -> Result<Vec<PathBuf>, PlotError> {
    let s = Series::read(log)?;
    let title = log.file_name().map_or_else(
        || log.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    write_png_svg(
        stem,
        SIZE,
        &FlightFigure {
            s: &s,
            waypoints,
            title: &title,
        },
    )
}

/// A figure drawn the same way on any plotters backend.
trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Draws `fig` into `<stem>.png` and `<stem>.svg` of `size` pixels; the
/// files written, or the error naming the file that failed.
fn write_png_svg(
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

/// The flight log's ten panels.
struct FlightFigure<'a> {
    s: &'a Series,
    waypoints: &'a [(f64, f64)],
    title: &'a str,
}

impl Figure for FlightFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        figure(root, self.s, self.waypoints, self.title)
    }
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

fn register_font() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // The embedded font parses (tested); were it not to, plotters
        // would draw no text rather than fail.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &Series,
    waypoints: &[(f64, f64)],
    title: &str,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 28))
        .map_err(|e| e.to_string())?;
    let panels = root.split_evenly((5, 2));
    let t = s.time_s();
    let neg = |c: &[f64]| c.iter().map(|v| -v).collect::<Vec<_>>();
    let col = |n: &str| s.get(n).map(<[f64]>::to_vec).unwrap_or_default();

    path_panel(&panels[0], s, waypoints)?;
    let alt = [
        ("true", neg(&col("z_m"))),
        ("estimate", neg(&col("est_z_m"))),
        ("setpoint", neg(&col("sp_z_m"))),
    ];
    time_panel(&panels[1], "Altitude", "m", &t, &alt)?;
    let vel = [
        ("north", col("vx_mps")),
        ("east", col("vy_mps")),
        ("down", col("vz_mps")),
        ("north setpoint", col("sp_vx_mps")),
        ("east setpoint", col("sp_vy_mps")),
        ("down setpoint", col("sp_vz_mps")),
    ];
    time_panel(&panels[2], "Velocity", "m/s", &t, &vel)?;
    time_panel(&panels[3], "Attitude", "deg", &t, &attitude(s))?;
    let motors: Vec<(String, Vec<f64>)> = s
        .indexed("motor", "")
        .into_iter()
        .map(|(n, c)| (n, c.to_vec()))
        .collect();
    time_panel(&panels[4], "Motor commands", "0..1", &t, &motors)?;
    let rotors: Vec<(String, Vec<f64>)> = s
        .indexed("rotor", "_radps")
        .into_iter()
        .map(|(n, c)| (n.trim_end_matches("_radps").to_string(), c.to_vec()))
        .collect();
    time_panel(&panels[5], "Rotor speeds", "rad/s", &t, &rotors)?;
    let packs = |suffix: &str, scale: f64| -> Vec<(String, Vec<f64>)> {
        s.indexed("battery", suffix)
            .into_iter()
            .map(|(n, c)| {
                (
                    n.trim_end_matches(suffix).to_string(),
                    c.iter().map(|v| v * scale).collect(),
                )
            })
            .collect()
    };
    time_panel(&panels[6], "Battery voltage", "V", &t, &packs("_v", 1.0))?;
    time_panel(&panels[7], "Battery current", "A", &t, &packs("_a", 1.0))?;
    time_panel(
        &panels[8],
        "State of charge",
        "%",
        &t,
        &packs("_soc", 100.0),
    )?;
    let wind = [
        ("north", col("wind_n_mps")),
        ("east", col("wind_e_mps")),
        ("down", col("wind_d_mps")),
    ];
    time_panel(&panels[9], "Wind", "m/s", &t, &wind)?;
    Ok(())
}

/// Roll, pitch, yaw (degrees) of the true quaternion (ZYX Euler angles).
fn attitude(s: &Series) -> Vec<(String, Vec<f64>)> {
    let (Some(w), Some(x), Some(y), Some(z)) = (s.get("qw"), s.get("qx"), s.get("qy"), s.get("qz"))
    else {
        return Vec::new();
    };
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..w.len() {
        let (w, x, y, z) = (w[i], x[i], y[i], z[i]);
        out[0].push(
            (2.0 * (w * x + y * z))
                .atan2(1.0 - 2.0 * (x * x + y * y))
                .to_degrees(),
        );
        out[1].push((2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin().to_degrees());
        out[2].push(
            (2.0 * (w * z + x * y))
                .atan2(1.0 - 2.0 * (y * y + z * z))
                .to_degrees(),
        );
    }
    let [r, p, yw] = out;
    vec![("roll".into(), r), ("pitch".into(), p), ("yaw".into(), yw)]
}

/// The finite range of `values`, widened to a visible span.
fn range<'a>(values: impl Iterator<Item = &'a f64>) -> (f64, f64) {
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

fn time_panel<DB: DrawingBackend, N: AsRef<str>>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    unit: &str,
    t: &[f64],
    lines: &[(N, Vec<f64>)],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (t0, t1) = range(t.iter());
    let (y0, y1) = range(lines.iter().flat_map(|(_, v)| v.iter()));
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{title} ({unit})"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(t0..t1, y0..y1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    for (k, (name, v)) in lines.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let points = t
            .iter()
            .zip(v)
            .filter(|(_, y)| y.is_finite())
            .map(|(x, y)| (*x, *y));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(e)?
            .label(name.as_ref())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
    }
    if !lines.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

fn path_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &Series,
    waypoints: &[(f64, f64)],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (Some(n), Some(east)) = (s.get("x_m"), s.get("y_m")) else {
        return Ok(());
    };
    let sp_n = s.get("sp_x_m").unwrap_or(&[]);
    let sp_e = s.get("sp_y_m").unwrap_or(&[]);
    let wp_n: Vec<f64> = waypoints.iter().map(|w| w.0).collect();
    let wp_e: Vec<f64> = waypoints.iter().map(|w| w.1).collect();
    let (n0, n1) = range(n.iter().chain(&wp_n).chain(std::iter::once(&0.0)));
    let (e0, e1) = range(east.iter().chain(&wp_e).chain(std::iter::once(&0.0)));
    // Equal scales: a square stays square.
    let span = (n1 - n0).max(e1 - e0) / 2.0;
    let (nc, ec) = ((n0 + n1) / 2.0, (e0 + e1) / 2.0);
    let mut chart = ChartBuilder::on(area)
        .caption("Path, top-down (m)", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(ec - span..ec + span, nc - span..nc + span)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("east (m)")
        .y_desc("north (m)")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    chart
        .draw_series(LineSeries::new(
            east.iter().zip(n).map(|(e, n)| (*e, *n)),
            COLORS[0].stroke_width(2),
        ))
        .map_err(e)?
        .label("true path")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], COLORS[0].stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            sp_e.iter().zip(sp_n).map(|(e, n)| (*e, *n)),
            COLORS[1].stroke_width(1),
        ))
        .map_err(e)?
        .label("setpoint")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], COLORS[1].stroke_width(1)));
    chart
        .draw_series(
            waypoints
                .iter()
                .map(|(n, e)| TriangleMarker::new((*e, *n), 8, COLORS[3].filled())),
        )
        .map_err(e)?
        .label("waypoints")
        .legend(|(x, y)| TriangleMarker::new((x + 8, y), 6, COLORS[3].filled()));
    chart
        .draw_series(std::iter::once(Circle::new(
            (0.0, 0.0),
            7,
            COLORS[2].filled(),
        )))
        .map_err(e)?
        .label("home (origin)")
        .legend(|(x, y)| Circle::new((x + 8, y), 5, COLORS[2].filled()));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_parses() {
        assert!(plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok());
    }

    #[test]
    fn ranges_ignore_non_finite_values_and_never_collapse() {
        assert_eq!(range([f64::NAN, 1.0, 3.0].iter()), (0.9, 3.1));
        let (lo, hi) = range([2.0, 2.0].iter());
        assert!(lo < 2.0 && hi > 2.0);
        assert_eq!(range([f64::NAN].iter()), (0.0, 1.0));
    }

    #[test]
    fn attitude_of_known_quaternions() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let s = Series {
            names: ["time_us", "qw", "qx", "qy", "qz"]
                .map(String::from)
                .to_vec(),
            columns: vec![
                vec![0.0, 1.0],
                vec![1.0, h],
                vec![0.0, 0.0],
                vec![0.0, 0.0],
                vec![0.0, h],
            ],
        };
        let a = attitude(&s);
        assert_eq!(a[2].1[0], 0.0);
        assert!((a[2].1[1] - 90.0).abs() < 1e-9, "{:?}", a[2]);
        assert!(a[0].1[1].abs() < 1e-9 && a[1].1[1].abs() < 1e-9);
    }
}
