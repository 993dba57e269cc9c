//! Physics against real logs: a PX4 ULog replayed open loop through the
//! plant (`lockstep predict`: the prediction error of body rates,
//! attitude, specific force and velocity over short horizons, against two
//! baselines), and an airframe fitted from a log (`lockstep fit`).
//!
//! - [`log`]: the log read (yule_log), refused when it cannot be replayed.
//! - [`replay`]: one window flown from the logged state with the logged
//!   commands; the baselines.
//! - [`fit`]: least squares on the replay's residuals.
//! - `page`: `lockstep predict --out`'s page, figures and JSON report.

pub mod fit;
pub mod log;
mod page;
pub mod replay;

pub use page::write_prediction;

use std::path::{Path, PathBuf};
use std::time::Instant;

use lockstep_plant::{AircraftSpec, Multirotor};
use serde::Serialize;

use crate::RunError;

/// The horizons the prediction error is reported at (s).
pub const HORIZONS_S: [f64; 3] = [0.2, 0.5, 1.0];

/// The most windows a prediction flies per horizon.
const MOST_WINDOWS: usize = 400;

/// The root-mean-square errors at a horizon's end over the windows.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Errors {
    pub rates_radps: f64,
    pub attitude_deg: f64,
    pub accel_mps2: f64,
    pub velocity_mps: f64,
}

/// One horizon's errors: the plant's, and the baselines'.
#[derive(Debug, Clone, Serialize)]
pub struct Horizon {
    pub horizon_s: f64,
    pub windows: usize,
    pub plant: Errors,
    /// Constant body rates (rates and attitude) and the previous sample's
    /// specific force held (acceleration and velocity).
    pub baseline: Errors,
}

/// `lockstep predict`'s result.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub log: PathBuf,
    pub spec: String,
    pub commands: String,
    pub log_duration_s: f64,
    pub horizons: Vec<Horizon>,
    /// Log seconds replayed per wall second (every horizon's windows).
    pub log_s_per_wall_s: f64,
    /// The page written (`--out`), when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PathBuf>,
    /// Each horizon's windows' ends: the log, the plant, the baseline (in
    /// the order of [`Prediction::horizons`]; the figures' data).
    #[serde(skip)]
    pub ends: Vec<Vec<End>>,
}

/// One window's end: what the log has, the plant predicted, the
/// baseline predicted.
#[derive(Debug, Clone, Copy)]
pub struct End {
    pub log: replay::Sample,
    pub plant: replay::Sample,
    pub baseline: replay::Sample,
}

/// The spec a log is replayed with: `spec` (a built-in name or a file),
/// the mass replaced when given.
pub fn spec_for(spec: &str, mass_kg: Option<f64>) -> Result<AircraftSpec, RunError> {
    let mut s = AircraftSpec::resolve(spec).map_err(|e| RunError::configuration(e.to_string()))?;
    if let Some(m) = mass_kg {
        if !(m.is_finite() && m > 0.0) {
            return Err(RunError::configuration(format!(
                "--mass {m}: a mass is a positive number of kilograms"
            )));
        }
        s.body.mass_kg = m;
    }
    Ok(s)
}

fn build(spec: &AircraftSpec) -> Result<Multirotor, RunError> {
    spec.build()
        .map_err(|e| RunError::configuration(e.to_string()))
}

fn read(path: &Path) -> Result<log::Flight, RunError> {
    log::read(path).map_err(RunError::configuration)
}

/// Replays `log` with `spec` at each horizon of [`HORIZONS_S`].
pub fn predict(path: &Path, spec: &AircraftSpec) -> Result<Prediction, RunError> {
    let flight = read(path)?;
    let plant = build(spec)?;
    let started = Instant::now();
    let mut horizons = Vec::new();
    let mut all_ends = Vec::new();
    let mut flown = 0.0;
    let g = plant.gravity_mps2();
    for h in HORIZONS_S {
        let horizon_us = (h * 1e6) as u64;
        let starts = replay::windows(&flight, plant.rotors.len(), horizon_us, MOST_WINDOWS);
        let mut model = Vec::new();
        let mut base = Vec::new();
        let mut ends = Vec::new();
        for &t0 in &starts {
            let pairs =
                replay::fly(&plant, &flight, t0, horizon_us).map_err(RunError::run_failure)?;
            flown += h + replay::WARMUP_US as f64 * 1e-6;
            let Some((p, l)) = pairs.last() else {
                continue;
            };
            let Some(b) = replay::baseline(&flight, t0, l.t_us, g) else {
                continue;
            };
            model.push(errors(p, l));
            base.push(errors(&b, l));
            ends.push(End {
                log: *l,
                plant: *p,
                baseline: b,
            });
        }
        all_ends.push(ends);
        horizons.push(Horizon {
            horizon_s: h,
            windows: model.len(),
            plant: rms(&model),
            baseline: rms(&base),
        });
    }
    if horizons.iter().all(|h| h.windows == 0) {
        return Err(RunError::configuration(format!(
            "{}: no airborne stretch to replay (every motor above 10 % and {} m above the \
             log's start, for {} s at least)",
            path.display(),
            replay::MIN_HEIGHT_M,
            HORIZONS_S[0]
        )));
    }
    let wall = started.elapsed().as_secs_f64();
    Ok(Prediction {
        log: path.to_path_buf(),
        spec: spec.name.clone(),
        commands: flight.commands.to_string(),
        log_duration_s: flight.duration_us as f64 * 1e-6,
        horizons,
        log_s_per_wall_s: flown / wall.max(1e-9),
        page: None,
        ends: all_ends,
    })
}

fn errors(p: &replay::Sample, l: &replay::Sample) -> [f64; 4] {
    let d = |a: &[f64; 3], b: &[f64; 3]| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let e = replay::attitude_error(&p.q, &l.q);
    [
        d(&p.rates, &l.rates),
        (e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
            .sqrt()
            .to_degrees(),
        d(&p.force, &l.force),
        d(&p.vel, &l.vel),
    ]
}

fn rms(v: &[[f64; 4]]) -> Errors {
    let n = v.len().max(1) as f64;
    let r = |k: usize| (v.iter().map(|e| e[k] * e[k]).sum::<f64>() / n).sqrt();
    Errors {
        rates_radps: r(0),
        attitude_deg: r(1),
        accel_mps2: r(2),
        velocity_mps: r(3),
    }
}

/// `lockstep fit`'s result: the fit, and the spec written.
#[derive(Debug, Clone, Serialize)]
pub struct FitReport {
    pub log: PathBuf,
    pub base: String,
    pub mass_kg: f64,
    pub commands: String,
    #[serde(flatten)]
    pub fit: fit::Fit,
    pub out: PathBuf,
    pub wall_s: f64,
}

/// Fits `base` to `log` and writes the fitted spec to `out` (named
/// `name`).
pub fn fit_log(
    path: &Path,
    base: &AircraftSpec,
    out: &Path,
    name: &str,
) -> Result<FitReport, RunError> {
    let flight = read(path)?;
    let started = Instant::now();
    let f = fit::fit(base, &flight)
        .map_err(|e| RunError::configuration(format!("{}: {e}", path.display())))?;
    let mut spec = f.spec.clone();
    spec.name = name.to_string();
    spec.description = Some(format!(
        "{} fitted to {} ({} of {} parameters identified)",
        base.name,
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        f.params.iter().filter(|p| p.identified).count(),
        f.params.len()
    ));
    let mut text = String::from(
        "# Fitted by `lockstep fit`: each parameter, its 95 % interval, and\n# what identified it (or why the base value is kept).\n",
    );
    for p in &f.params {
        text.push_str(&format!(
            "# {}: {:.6e} [{:.6e}, {:.6e}] (base {:.6e}): {}\n",
            p.key, p.value, p.ci95[0], p.ci95[1], p.base, p.note
        ));
    }
    text.push_str(&spec.to_toml_string());
    // Written whole under a temporary name, then renamed: a full disk or a
    // failure leaves no half spec.
    let tmp = out.with_extension("toml.partial");
    std::fs::write(&tmp, text.as_bytes())
        .and_then(|()| std::fs::rename(&tmp, out))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            RunError::run_failure(format!("cannot write {}: {e}", out.display()))
        })?;
    Ok(FitReport {
        log: path.to_path_buf(),
        base: base.name.clone(),
        mass_kg: base.body.mass_kg,
        commands: flight.commands.to_string(),
        fit: f,
        out: out.to_path_buf(),
        wall_s: started.elapsed().as_secs_f64(),
    })
}
