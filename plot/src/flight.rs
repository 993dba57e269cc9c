//! The flight log's figure: a title naming the scenario, the legend of the
//! modes, and ten panels.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::panel::{
    Band, LEGEND_W, Line, Mark, legend, mode_color, time_panel, top_down_chart, top_down_ranges,
};
use crate::{COLORS, Figure, PlotError, Series, write_png_svg};

const SIZE: (u32, u32) = (1600, 2240);

/// What the log alone does not say: the figure's title, the mission's
/// waypoints (north, east metres from the origin) and the modes' names by
/// code (the sidecar's `modes`).
#[derive(Debug, Clone)]
pub struct Decor<'a> {
    pub title: &'a str,
    pub waypoints: &'a [(f64, f64)],
    pub modes: &'a BTreeMap<u32, String>,
}

/// Writes `<stem>.png` and `<stem>.svg` of the log at `log`. Returns the
/// files written.
pub fn plot_log(log: &Path, stem: &Path, decor: &Decor) -> Result<Vec<PathBuf>, PlotError> {
    let s = Series::read(log)?;
    write_png_svg(stem, SIZE, &FlightFigure { s: &s, decor })
}

struct FlightFigure<'a> {
    s: &'a Series,
    decor: &'a Decor<'a>,
}

impl Figure for FlightFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        figure(root, self.s, self.decor)
    }
}

/// The modes' stretches, from the `mode` column.
pub(crate) fn bands(s: &Series, modes: &BTreeMap<u32, String>) -> Vec<Band> {
    let (Some(m), t) = (s.get("mode"), s.time_s()) else {
        return Vec::new();
    };
    let name = |c: f64| {
        modes
            .get(&(c as u32))
            .cloned()
            .unwrap_or_else(|| format!("mode {c}"))
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=m.len() {
        if i == m.len() || m[i] != m[start] {
            let end = if i < m.len() { t[i] } else { t[m.len() - 1] };
            out.push(Band {
                t0: t[start],
                t1: end,
                name: name(m[start]),
            });
            start = i;
        }
    }
    out
}

/// Arming changes (grey) and new faults (red), from the `armed` and
/// `faults` columns.
pub(crate) fn marks(s: &Series) -> Vec<Mark> {
    let t = s.time_s();
    let mut out = Vec::new();
    if let Some(a) = s.get("armed") {
        for i in 1..a.len() {
            if a[i] != a[i - 1] {
                out.push(Mark {
                    t: t[i],
                    bad: false,
                });
            }
        }
    }
    if let Some(f) = s.get("faults") {
        for i in 1..f.len() {
            // A bit set that was not: a new fault.
            if (f[i] as u64) & !(f[i - 1] as u64) != 0 {
                out.push(Mark { t: t[i], bad: true });
            }
        }
    }
    out
}

/// Roll, pitch, yaw (degrees) of the true quaternion (ZYX Euler angles),
/// yaw unwrapped: a turn past ±180° goes on (181°, not -179°), so no line
/// jumps across the panel where the angle wraps.
pub(crate) fn attitude(s: &Series) -> Vec<(String, Vec<f64>)> {
    let (Some(w), Some(x), Some(y), Some(z)) = (s.get("qw"), s.get("qx"), s.get("qy"), s.get("qz"))
    else {
        return Vec::new();
    };
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    let mut previous: Option<f64> = None;
    let mut turns = 0.0;
    for i in 0..w.len() {
        let (w, x, y, z) = (w[i], x[i], y[i], z[i]);
        out[0].push(
            (2.0 * (w * x + y * z))
                .atan2(1.0 - 2.0 * (x * x + y * y))
                .to_degrees(),
        );
        out[1].push((2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin().to_degrees());
        let yaw = (2.0 * (w * z + x * y))
            .atan2(1.0 - 2.0 * (y * y + z * z))
            .to_degrees();
        if let Some(p) = previous.filter(|_| yaw.is_finite()) {
            if yaw - p > 180.0 {
                turns -= 360.0;
            } else if yaw - p < -180.0 {
                turns += 360.0;
            }
        }
        if yaw.is_finite() {
            previous = Some(yaw);
        }
        out[2].push(yaw + turns);
    }
    let [r, p, yw] = out;
    vec![
        ("roll".into(), r),
        ("pitch".into(), p),
        ("yaw (unwrapped)".into(), yw),
    ]
}

fn figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &Series,
    decor: &Decor,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let root = root.titled(decor.title, ("sans-serif", 28)).map_err(e)?;
    let (head, body) = root.split_vertically(34);
    let bands = bands(s, decor.modes);
    let marks = marks(s);
    modes_legend(&head, &bands)?;
    let panels = body.split_evenly((5, 2));
    let t = s.time_s();
    let neg = |c: &[f64]| c.iter().map(|v| -v).collect::<Vec<_>>();
    let col = |n: &str| s.get(n).map(<[f64]>::to_vec).unwrap_or_default();
    let owned = |v: &[(String, Vec<f64>)]| -> Vec<(String, Vec<f64>)> { v.to_vec() };
    let panel = |k: usize, title: &str, unit: &str, lines: Vec<(String, Vec<f64>)>| {
        let lines: Vec<Line> = lines
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, v)| Line { name: n, values: v })
            .collect();
        time_panel(&panels[k], title, unit, &t, &lines, &bands, &marks)
    };
    let named = |v: Vec<(&str, Vec<f64>)>| -> Vec<(String, Vec<f64>)> {
        v.into_iter().map(|(n, c)| (n.to_string(), c)).collect()
    };

    path_panel(&panels[0], s, decor.waypoints)?;
    panel(
        1,
        "Altitude",
        "m",
        named(vec![
            ("true", neg(&col("z_m"))),
            ("estimate", neg(&col("est_z_m"))),
            ("setpoint", neg(&col("sp_z_m"))),
        ]),
    )?;
    panel(
        2,
        "Velocity",
        "m/s",
        named(vec![
            ("north", col("vx_mps")),
            ("east", col("vy_mps")),
            ("down", col("vz_mps")),
            ("north setpoint", col("sp_vx_mps")),
            ("east setpoint", col("sp_vy_mps")),
            ("down setpoint", col("sp_vz_mps")),
        ]),
    )?;
    panel(3, "Attitude", "deg", owned(&attitude(s)))?;
    let indexed = |prefix: &str, suffix: &str, scale: f64| -> Vec<(String, Vec<f64>)> {
        s.indexed(prefix, suffix)
            .into_iter()
            .map(|(n, c)| {
                (
                    n.trim_end_matches(suffix).to_string(),
                    c.iter().map(|v| v * scale).collect(),
                )
            })
            .collect()
    };
    panel(4, "Motor commands", "0..1", indexed("motor", "", 1.0))?;
    panel(5, "Rotor speeds", "rad/s", indexed("rotor", "_radps", 1.0))?;
    panel(6, "Battery voltage", "V", indexed("battery", "_v", 1.0))?;
    panel(7, "Battery current", "A", indexed("battery", "_a", 1.0))?;
    panel(8, "State of charge", "%", indexed("battery", "_soc", 100.0))?;
    panel(
        9,
        "Wind",
        "m/s",
        named(vec![
            ("north", col("wind_n_mps")),
            ("east", col("wind_e_mps")),
            ("down", col("wind_d_mps")),
        ]),
    )?;
    Ok(())
}

/// One row under the title: each mode flown with its band's colour, and
/// what the vertical lines mean.
fn modes_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bands: &[Band],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut seen: Vec<&str> = Vec::new();
    for b in bands {
        if !seen.contains(&b.name.as_str()) {
            seen.push(&b.name);
        }
    }
    let font = ("sans-serif", 15).into_font().color(&BLACK);
    let mut x = 20;
    area.draw(&Text::new("modes:", (x, 8), font.clone()))
        .map_err(e)?;
    x += 60;
    for name in seen {
        area.draw(&Rectangle::new(
            [(x, 8), (x + 14, 22)],
            mode_color(name).filled(),
        ))
        .map_err(e)?;
        area.draw(&Text::new(name.to_string(), (x + 18, 8), font.clone()))
            .map_err(e)?;
        x += 30 + 9 * name.len() as i32;
    }
    area.draw(&Text::new(
        "grey lines: armed or disarmed; red lines: a fault began",
        (x + 20, 8),
        font,
    ))
    .map_err(e)?;
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
    let (w, _) = area.dim_in_pixel();
    let (chart_area, legend_area) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    let sp_n = s.get("sp_x_m").unwrap_or(&[]);
    let sp_e = s.get("sp_y_m").unwrap_or(&[]);
    let wp_n: Vec<f64> = waypoints.iter().map(|w| w.0).collect();
    let wp_e: Vec<f64> = waypoints.iter().map(|w| w.1).collect();
    let (ex, ny) = top_down_ranges(n.iter().chain(&wp_n), east.iter().chain(&wp_e));
    let mut chart = top_down_chart(&chart_area, "Path, top-down (m)", (ex, ny))?;
    for (xs, ys, color) in [(sp_e, sp_n, COLORS[1]), (east, n, COLORS[0])] {
        for part in crate::panel::clipped(xs, ys, ex, ny) {
            chart
                .draw_series(LineSeries::new(part, color.stroke_width(1)))
                .map_err(e)?;
        }
    }
    chart
        .draw_series(
            waypoints
                .iter()
                .map(|(n, e)| TriangleMarker::new((*e, *n), 8, COLORS[3].filled())),
        )
        .map_err(e)?;
    chart
        .draw_series(std::iter::once(Circle::new(
            (0.0, 0.0),
            7,
            COLORS[2].filled(),
        )))
        .map_err(e)?;
    legend(
        &legend_area,
        &[
            ("true path", COLORS[0]),
            ("setpoint", COLORS[1]),
            ("waypoints", COLORS[3]),
            ("home (origin)", COLORS[2]),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(names: &[&str], columns: Vec<Vec<f64>>) -> Series {
        Series {
            names: names.iter().map(|s| s.to_string()).collect(),
            columns,
        }
    }

    #[test]
    fn attitude_of_known_quaternions() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let s = series(
            &["time_us", "qw", "qx", "qy", "qz"],
            vec![
                vec![0.0, 1.0],
                vec![1.0, h],
                vec![0.0, 0.0],
                vec![0.0, 0.0],
                vec![0.0, h],
            ],
        );
        let a = attitude(&s);
        assert_eq!(a[2].1[0], 0.0);
        assert!((a[2].1[1] - 90.0).abs() < 1e-9, "{:?}", a[2]);
        assert!(a[0].1[1].abs() < 1e-9 && a[1].1[1].abs() < 1e-9);
    }

    #[test]
    fn yaw_turning_past_180_degrees_goes_on_unwrapped() {
        // Yaw 170, -170 (= 190), -10 (= 350), 10 (= 370): quaternion
        // about down, q = (cos(y/2), 0, 0, sin(y/2)).
        let yaws: [f64; 4] = [170.0, -170.0, -10.0, 10.0];
        let (w, z): (Vec<f64>, Vec<f64>) = yaws
            .iter()
            .map(|y| ((y.to_radians() / 2.0).cos(), (y.to_radians() / 2.0).sin()))
            .unzip();
        let s = series(
            &["time_us", "qw", "qx", "qy", "qz"],
            vec![vec![0.0, 1.0, 2.0, 3.0], w, vec![0.0; 4], vec![0.0; 4], z],
        );
        let yaw = &attitude(&s)[2].1;
        for (got, want) in yaw.iter().zip([170.0, 190.0, 350.0, 370.0]) {
            assert!((got - want).abs() < 1e-9, "{yaw:?}");
        }
    }

    #[test]
    fn bands_and_marks_come_from_the_mode_armed_and_fault_columns() {
        let s = series(
            &["time_us", "mode", "armed", "faults"],
            vec![
                vec![0.0, 1e6, 2e6, 3e6, 4e6],
                vec![1.0, 2.0, 2.0, 4.0, 4.0],
                vec![0.0, 1.0, 1.0, 1.0, 0.0],
                vec![0.0, 0.0, 1.0, 1.0, 3.0],
            ],
        );
        let modes: BTreeMap<u32, String> = [(1, "disarmed"), (2, "idle"), (4, "mission")]
            .map(|(c, n)| (c, n.to_string()))
            .into();
        let b = bands(&s, &modes);
        let names: Vec<(f64, f64, &str)> =
            b.iter().map(|b| (b.t0, b.t1, b.name.as_str())).collect();
        assert_eq!(
            names,
            vec![
                (0.0, 1.0, "disarmed"),
                (1.0, 3.0, "idle"),
                (3.0, 4.0, "mission")
            ]
        );
        assert_eq!(
            marks(&s),
            vec![
                Mark { t: 1.0, bad: false },
                Mark { t: 4.0, bad: false },
                Mark { t: 2.0, bad: true },
                Mark { t: 4.0, bad: true },
            ]
        );
    }

    /// The regression: a near-vertical line (a motor command jumping at
    /// take-off) drew past its panel's bottom into the next panel.
    #[test]
    fn no_line_leaves_its_panel() {
        let (w, h) = (800u32, 880u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        crate::register_font();
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            root.fill(&WHITE).unwrap();
            let (top, _) = root.split_vertically(440);
            // The default flight's motor 3 at take-off: 0.05 at 1.9 s,
            // 0.735 at 2.0 s, logged at 10 Hz for 90 s.
            let t: Vec<f64> = (0..901).map(|i| i as f64 * 0.1).collect();
            let v: Vec<f64> = (0..901)
                .map(|i| match i {
                    0..=9 => 0.0,
                    10..=19 => 0.05,
                    20 => 0.7350082,
                    21 => 0.725622,
                    _ => 0.5 + 0.01 * ((i * 7919) % 13) as f64,
                })
                .collect();
            let lines = [Line {
                name: "motor3",
                values: &v,
            }];
            time_panel(&top, "Motor commands", "0..1", &t, &lines, &[], &[]).unwrap();
            root.present().unwrap();
        }
        let c = COLORS[0];
        let painted = (440..h).any(|y| {
            (0..w).any(|x| {
                let i = ((y * w + x) * 3) as usize;
                (buf[i], buf[i + 1], buf[i + 2]) == (c.0, c.1, c.2)
            })
        });
        assert!(!painted, "the line's colour below its panel");
    }
}
