//! `lockstep predict` and `lockstep fit`: a PX4 ULog replayed open loop
//! through the plant, and an airframe fitted from it.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_run::ident;

#[derive(Debug, clap::Args)]
pub struct PredictArgs {
    /// A PX4 ULog of a multirotor flight (`.ulg`).
    log: PathBuf,
    /// The airframe to replay it with: a built-in name or a spec file.
    #[arg(long, default_value = "iris")]
    spec: String,
    /// The vehicle's mass (kg), replacing the spec's.
    #[arg(long)]
    mass: Option<f64>,
    /// Write a page (predict.html: the errors per horizon and figures of
    /// the log against the prediction), the figures (predict-<h>s.png,
    /// .svg) and the report (predict.json) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// A PX4 ULog of a multirotor flight (`.ulg`) with enough excitation:
    /// climbs, turns, rolls and pitches.
    log: PathBuf,
    /// The vehicle's mass (kg): a log cannot tell it.
    #[arg(long)]
    mass: f64,
    /// The spec whose other values the fit keeps (geometry, motor,
    /// battery), and starts from: a built-in name or a spec file.
    #[arg(long, default_value = "iris")]
    spec: String,
    /// Where to write the fitted spec (fly it with `--spec FILE`).
    #[arg(long)]
    out: PathBuf,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn predict(a: PredictArgs) -> ExitCode {
    let verb = "predict";
    let spec = match ident::spec_for(&a.spec, a.mass) {
        Ok(s) => s,
        Err(e) => return crate::refused(verb, &e),
    };
    // A directory that cannot be made is refused before the replay.
    if let Some(dir) = &a.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return crate::refuse(verb, &format!("cannot create {}: {e}", dir.display()));
    }
    let written = ident::predict(&a.log, &spec).and_then(|mut p| {
        if let Some(dir) = &a.out {
            ident::write_prediction(&mut p, dir)?;
        }
        Ok(p)
    });
    match written {
        Ok(p) => {
            if a.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&p).expect("a prediction serializes")
                );
            } else {
                say!(
                    "log           {} ({:.1} s; {})",
                    p.log.display(),
                    p.log_duration_s,
                    p.commands
                );
                say!("spec          {}", p.spec);
                say!(
                    "horizon  windows  rates rad/s      attitude deg     accel m/s^2      velocity m/s"
                );
                say!(
                    "                  plant  baseline  plant  baseline  plant  baseline  plant  baseline"
                );
                for h in &p.horizons {
                    say!(
                        "{:>5.1} s  {:>7}  {:>5.3}  {:>8.3}  {:>5.2}  {:>8.2}  {:>5.2}  {:>8.2}  {:>5.2}  {:>8.2}",
                        h.horizon_s,
                        h.windows,
                        h.plant.rates_radps,
                        h.baseline.rates_radps,
                        h.plant.attitude_deg,
                        h.baseline.attitude_deg,
                        h.plant.accel_mps2,
                        h.baseline.accel_mps2,
                        h.plant.velocity_mps,
                        h.baseline.velocity_mps
                    );
                }
                say!(
                    "speed         {:.1} log seconds per wall second",
                    p.log_s_per_wall_s
                );
                if let Some(page) = &p.page {
                    say!("page          {}", page.display());
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => crate::refused(verb, &e),
    }
}

pub fn fit(a: FitArgs) -> ExitCode {
    let verb = "fit";
    let spec = match ident::spec_for(&a.spec, Some(a.mass)) {
        Ok(s) => s,
        Err(e) => return crate::refused(verb, &e),
    };
    let name = format!(
        "fitted-{}",
        a.log
            .file_stem()
            .map_or_else(|| "log".into(), |s| s.to_string_lossy().into_owned())
    );
    match ident::fit_log(&a.log, &spec, &a.out, &name) {
        Ok(r) => {
            if a.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&r).expect("a fit serializes")
                );
            } else {
                say!("log           {} ({})", r.log.display(), r.commands);
                say!("base          {} at {} kg", r.base, r.mass_kg);
                say!(
                    "windows       {} of {:.1} s; residual RMS {:.3} -> {:.3} ({} iterations, {:.1} s)",
                    r.fit.windows,
                    ident::fit::FIT_HORIZON_US as f64 * 1e-6,
                    r.fit.rms_before,
                    r.fit.rms_after,
                    r.fit.iterations,
                    r.wall_s
                );
                for p in &r.fit.params {
                    say!(
                        "{:<30} {:>12.5e}  95 % [{:.5e}, {:.5e}]  base {:.5e}  {}",
                        p.key,
                        p.value,
                        p.ci95[0],
                        p.ci95[1],
                        p.base,
                        p.note
                    );
                }
                say!("spec          {}", r.out.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => crate::refused(verb, &e),
    }
}
