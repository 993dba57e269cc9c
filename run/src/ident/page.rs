//! `lockstep predict --out DIR`: what a prediction writes.
//!
//! | file | what |
//! |---|---|
//! | `predict.html` | the page: the error table per horizon, the figures inline |
//! | `predict-<h>s.png`, `.svg` | per horizon, each quantity at every window's end: log, plant, baseline |
//! | `predict.json` | the report, as `--json` prints it |
//!
//! The quantities drawn: the body rates, roll, pitch and yaw (from the
//! quaternions), and the specific force, each component.

use std::path::{Path, PathBuf};

use nalgebra::{Quaternion, UnitQuaternion};

use super::{End, Prediction};
use crate::RunError;

/// The page's file name in its directory.
pub const PAGE: &str = "predict.html";
/// The report's.
pub const REPORT: &str = "predict.json";

/// Roll, pitch and yaw (deg) of a quaternion (w, x, y, z).
fn euler_deg(q: &[f64; 4]) -> [f64; 3] {
    let (r, p, y) =
        UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3])).euler_angles();
    [r.to_degrees(), p.to_degrees(), y.to_degrees()]
}

/// The nine quantities drawn, each as (name, value of a sample).
type Pick = fn(&super::replay::Sample) -> f64;
const DRAWN: [(&str, Pick); 9] = [
    ("roll rate p (rad/s)", |s| s.rates[0]),
    ("pitch rate q (rad/s)", |s| s.rates[1]),
    ("yaw rate r (rad/s)", |s| s.rates[2]),
    ("roll (deg)", |s| euler_deg(&s.q)[0]),
    ("pitch (deg)", |s| euler_deg(&s.q)[1]),
    ("yaw (deg)", |s| euler_deg(&s.q)[2]),
    ("specific force x (m/s²)", |s| s.force[0]),
    ("specific force y (m/s²)", |s| s.force[1]),
    ("specific force z (m/s²)", |s| s.force[2]),
];

/// Writes the page, the figures and the report of `p` into `dir` (made
/// when missing); `p.page` is set to the page's path. Every file is
/// written whole or not at all (the figures as plotters writes them, the
/// page and report under a temporary name, renamed).
pub fn write_prediction(p: &mut Prediction, dir: &Path) -> Result<Vec<PathBuf>, RunError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| RunError::configuration(format!("cannot create {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    let mut figures = Vec::new();
    for (h, ends) in p.horizons.iter().zip(&p.ends) {
        let stem = dir.join(format!("predict-{}s", h.horizon_s));
        let t: Vec<f64> = ends.iter().map(|e| e.log.t_us as f64 * 1e-6).collect();
        let column = |pick: Pick, which: fn(&End) -> &super::replay::Sample| -> Vec<f64> {
            ends.iter().map(|e| pick(which(e))).collect()
        };
        let values: Vec<[Vec<f64>; 3]> = DRAWN
            .iter()
            .map(|(_, pick)| {
                [
                    column(*pick, |e| &e.log),
                    column(*pick, |e| &e.plant),
                    column(*pick, |e| &e.baseline),
                ]
            })
            .collect();
        let panels: Vec<lockstep_plot::Compared> = DRAWN
            .iter()
            .zip(&values)
            .map(
                |((name, _), [log, plant, baseline])| lockstep_plot::Compared {
                    name,
                    t_s: &t,
                    log,
                    plant,
                    baseline,
                },
            )
            .collect();
        let title = format!(
            "{} s ahead: the log (line), the plant (blue) and the baseline (grey) at the end of \
             each of {} windows",
            h.horizon_s, h.windows
        );
        let files = lockstep_plot::prediction_plot(&title, &panels, &stem)
            .map_err(|e| RunError::run_failure(e.to_string()))?;
        let svg = files
            .iter()
            .find(|f| f.extension().is_some_and(|x| x == "svg"))
            .expect("prediction_plot writes an SVG");
        let text = std::fs::read_to_string(svg)
            .map_err(|e| RunError::run_failure(format!("cannot read {}: {e}", svg.display())))?;
        figures.push((
            svg.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            text,
        ));
        written.extend(files);
    }
    let page = dir.join(PAGE);
    p.page = Some(page.clone());
    let report = serde_json::to_value(&*p).expect("a prediction serializes");
    let title = format!(
        "{} replayed open loop with {}",
        p.log.file_name().map_or_else(
            || p.log.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        p.spec
    );
    let html = lockstep_view::prediction_page(&lockstep_view::Prediction {
        title: &title,
        report: &report,
        figures,
    })
    .map_err(|e| RunError::run_failure(e.to_string()))?;
    lockstep_view::write_page(&page, &html).map_err(|e| RunError::run_failure(e.to_string()))?;
    written.push(page);
    let json = dir.join(REPORT);
    let text = serde_json::to_string_pretty(&report).expect("a prediction serializes") + "\n";
    lockstep_view::write_page(&json, &text).map_err(|e| RunError::run_failure(e.to_string()))?;
    written.push(json);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euler_angles_are_roll_pitch_yaw_in_degrees() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        // 90 deg about z (yaw), about x (roll).
        let yaw = euler_deg(&[h, 0.0, 0.0, h]);
        assert!(
            (yaw[2] - 90.0).abs() < 1e-9 && yaw[0].abs() < 1e-9,
            "{yaw:?}"
        );
        let roll = euler_deg(&[h, h, 0.0, 0.0]);
        assert!(
            (roll[0] - 90.0).abs() < 1e-9 && roll[2].abs() < 1e-9,
            "{roll:?}"
        );
    }
}
