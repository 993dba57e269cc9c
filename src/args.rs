//! The options that choose what to fly, shared by `fly`,
//! `compare-integrators` and `montecarlo`, and their translation into a
//! scenario path, an autopilot path and scenario overrides.

use std::path::PathBuf;

use lockstep_harness::inputs::scenario::Override;

use lockstep_run::choice::{Choice, Param, Spelling};

/// A scenario and the overrides applied to it before validation.
#[derive(Debug, Clone, clap::Args)]
pub struct ScenarioArgs {
    /// The scenario file (default: examples/scenarios/square.toml, the
    /// Iris flying the square mission in wind on noisy estimates).
    scenario: Option<PathBuf>,
    /// The autopilot library (default: the bundled reference autopilot),
    /// or a flight stack over its simulator protocol: `px4-sitl` (PX4 SITL,
    /// TCP 4560) or `ardupilot-json` (ArduPilot SITL's JSON backend, UDP
    /// 9002); see the scenario's `[autopilot]` keys.
    #[arg(long)]
    autopilot: Option<PathBuf>,
    /// Override the scenario's seed (`simulation.seed`).
    #[arg(long, value_parser = seed, allow_negative_numbers = true)]
    seed: Option<i64>,
    /// Override the simulated duration in seconds (`simulation.duration_s`).
    /// A negative value is taken as a value (and refused by the scenario's
    /// check with its range), not as an option.
    #[arg(long, allow_negative_numbers = true)]
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
        let mut params = Vec::new();
        for p in &self.param {
            let Some((name, value)) = p.split_once('=') else {
                return Err(format!("--param {p}: expected NAME=VALUE"));
            };
            // The value is read as `--set` reads one.
            let value = Override::parse("--param", &format!("value={value}"))?.value;
            params.push(Param {
                name: name.to_string(),
                value,
                given_as: format!("--param {p}"),
            });
        }
        let sets = self
            .set
            .iter()
            .map(|s| Override::parse("--set", s))
            .collect::<Result<Vec<_>, String>>()?;
        Choice {
            scenario: self.scenario.clone(),
            autopilot: self.autopilot.clone(),
            seed: self.seed,
            duration_s: self.duration,
            spec: self.spec.clone(),
            mission: self.mission.clone(),
            params,
            sets,
        }
        .resolve(Spelling::Cli)
    }
}
