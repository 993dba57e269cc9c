//! The options that choose what to fly, shared by `fly`,
//! `compare-integrators` and `montecarlo`, and their translation into a
//! scenario path, an autopilot path and scenario overrides.

use std::path::PathBuf;

use lockstep_harness::inputs::scenario::Override;

use lockstep_run::assets;

/// A scenario and the overrides applied to it before validation.
#[derive(Debug, Clone, clap::Args)]
pub struct ScenarioArgs {
    /// The scenario file (default: examples/scenarios/square.toml, the
    /// Iris flying the square mission in wind on noisy estimates).
    scenario: Option<PathBuf>,
    /// The autopilot library (default: the bundled reference autopilot).
    #[arg(long)]
    autopilot: Option<PathBuf>,
    /// Override the scenario's seed (`simulation.seed`).
    #[arg(long, value_parser = seed)]
    seed: Option<i64>,
    /// Override the simulated duration in seconds (`simulation.duration_s`).
    #[arg(long)]
    duration: Option<f64>,
    /// Fly another aircraft: a built-in name (iris, hexa, octa) or a spec
    /// file, relative to the working directory (`vehicle.spec`).
    #[arg(long)]
    spec: Option<String>,
    /// Fly another mission file, relative to the working directory
    /// (`vehicle.mission`).
    #[arg(long)]
    mission: Option<PathBuf>,
    /// Set any scenario key: `--set wind.mean_ned_mps=[3.0,0.0,0.0]`,
    /// `--set cadences.log.rate_hz=100`. The value is TOML; text that is
    /// not TOML is a string. Repeatable; applied in order, after the other
    /// overrides.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Set an autopilot parameter (`autopilot.params.NAME`). Repeatable.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    param: Vec<String>,
}

/// A seed: a non-negative integer that TOML can hold (at most 2^63 - 1).
pub fn seed(s: &str) -> Result<i64, String> {
    s.parse::<i64>()
        .ok()
        .filter(|v| *v >= 0)
        .ok_or_else(|| format!("{s} is not an integer in [0, 9223372036854775807]"))
}

impl ScenarioArgs {
    /// A scenario path was given.
    pub fn has_scenario(&self) -> bool {
        self.scenario.is_some()
    }

    /// `--spec` was given.
    pub fn has_spec(&self) -> bool {
        self.spec.is_some()
    }

    /// `--mission` was given.
    pub fn has_mission(&self) -> bool {
        self.mission.is_some()
    }

    /// The scenario (default: the bundled one), the autopilot (default:
    /// the bundled one) and the overrides, in the order they apply. An
    /// error is the message to print after `lockstep VERB: `.
    pub fn resolve(&self) -> Result<(PathBuf, PathBuf, Vec<Override>), String> {
        let mut overrides = Vec::new();
        if let Some(v) = self.seed {
            overrides.push(Override::new(
                "simulation.seed",
                toml::Value::Integer(v),
                format!("--seed {v}"),
            ));
        }
        if let Some(v) = self.duration {
            overrides.push(Override::new(
                "simulation.duration_s",
                toml::Value::Float(v),
                format!("--duration {v}"),
            ));
        }
        if let Some(v) = &self.spec {
            // A built-in name as it is; a file relative to the working
            // directory (the scenario's own paths are relative to the scenario).
            let builtin = lockstep_plant::spec::BUILTIN_SPECS
                .iter()
                .any(|(n, _)| n == v);
            let value = if builtin {
                v.clone()
            } else {
                match std::path::absolute(v) {
                    // Whatever exists is the loader's to judge (a device, a directory).
                    Ok(p) if p.exists() => p.display().to_string(),
                    Ok(p) => {
                        let names: Vec<&str> = lockstep_plant::spec::BUILTIN_SPECS
                            .iter()
                            .map(|(n, _)| *n)
                            .filter(|n| *n != "multirotor-base")
                            .collect();
                        let near = names
                            .iter()
                            .find(|n| strsim::levenshtein(n, v) <= 2)
                            .map(|n| format!("; did you mean `{n}`?"))
                            .unwrap_or_default();
                        return Err(format!(
                            "--spec {v}: not a built-in aircraft ({}; `lockstep specs` lists them) \
                             and no file {}{near}",
                            names.join(", "),
                            p.display()
                        ));
                    }
                    Err(e) => return Err(format!("--spec {v}: {e}")),
                }
            };
            overrides.push(Override::new(
                "vehicle.spec",
                toml::Value::String(value),
                format!("--spec {v}"),
            ));
        }
        if let Some(v) = &self.mission {
            let p = match std::path::absolute(v) {
                Ok(p) => p,
                Err(e) => return Err(format!("--mission {}: {e}", v.display())),
            };
            overrides.push(Override::new(
                "vehicle.mission",
                toml::Value::String(p.display().to_string()),
                format!("--mission {}", v.display()),
            ));
        }
        for p in &self.param {
            let Some((name, _)) = p.split_once('=') else {
                return Err(format!("--param {p}: expected NAME=VALUE"));
            };
            if name.trim().is_empty() || name.contains('.') {
                return Err(format!(
                    "--param {p}: `{}` is not a parameter name",
                    name.trim()
                ));
            }
            match Override::parse("--param", &format!("autopilot.params.{p}")) {
                Ok(mut o) => {
                    o.given_as = format!("--param {p}");
                    overrides.push(o);
                }
                Err(e) => return Err(e),
            }
        }
        for s in &self.set {
            match Override::parse("--set", s) {
                Ok(o) => overrides.push(o),
                Err(e) => return Err(e),
            }
        }
        let scenario = match self
            .scenario
            .clone()
            .map_or_else(assets::default_scenario, Ok)
        {
            Ok(p) => p,
            Err(e) => return Err(e.to_string()),
        };
        let autopilot = match self.autopilot.clone().map_or_else(assets::autopilot, Ok) {
            Ok(p) => p,
            Err(e) => return Err(e.to_string()),
        };
        Ok((scenario, autopilot, overrides))
    }
}
