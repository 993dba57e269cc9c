//! What to fly, as a front end's arguments say it: a scenario (default:
//! the bundled one), an autopilot (default: the bundled one) and the
//! overrides (seed, duration, aircraft, mission, autopilot parameters, any
//! key), translated into a scenario path, an autopilot path and
//! [`Override`]s in the order they apply. The command line and Python give
//! the same arguments; messages name each as its front end spells it
//! ([`Spelling`]).

use std::path::PathBuf;

use lockstep_harness::inputs::scenario::Override;

use crate::assets;

/// How a front end spells its arguments in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `--seed 7`, `--param NAME=VALUE`.
    Cli,
    /// `seed=7`, `params={"NAME": VALUE}`.
    Python,
    /// The C ABI's `lockstep_options`: `options.log_path`.
    C,
}

impl Spelling {
    /// The argument `name` (the command line's word: `seed`, `spec`,
    /// `mission`, `param`, `set`) as this front end spells it.
    pub fn arg(self, name: &str) -> String {
        match (self, name) {
            (Spelling::Cli, n) => format!("--{n}"),
            (Spelling::Python, "param") => "params".into(),
            (Spelling::Python, n) => n.to_string(),
            (Spelling::C, n @ ("log" | "record")) => format!("options.{n}_path"),
            (Spelling::C, n) => format!("options.{n}"),
        }
    }

    /// How to set scenario `key` to `value` from this front end, for
    /// messages: `--set key=value`, `set={"key": value}`; `None` where
    /// it cannot (a C host edits its scenario).
    pub fn set_key(self, key: &str, value: &str) -> Option<String> {
        match self {
            Spelling::Cli => Some(format!("--set {key}={value}")),
            Spelling::Python => Some(format!("set={{\"{key}\": {value}}}")),
            Spelling::C => None,
        }
    }

    /// How an argument with `value` was given, for messages.
    pub fn given(self, name: &str, value: &str) -> String {
        match self {
            Spelling::Cli => format!("--{name} {value}"),
            Spelling::Python | Spelling::C => format!("{}={value}", self.arg(name)),
        }
    }
}

/// An autopilot parameter set (`autopilot.params.NAME`).
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub value: toml::Value,
    /// As the user gave it, for messages.
    pub given_as: String,
}

/// What to fly, before the defaults are filled in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Choice {
    /// The scenario file (default: the bundled one).
    pub scenario: Option<PathBuf>,
    /// The autopilot library (default: the bundled reference autopilot).
    pub autopilot: Option<PathBuf>,
    /// `simulation.seed`.
    pub seed: Option<i64>,
    /// `simulation.duration_s`.
    pub duration_s: Option<f64>,
    /// `vehicle.spec`: a built-in aircraft or a spec file relative to the
    /// working directory.
    pub spec: Option<String>,
    /// `vehicle.mission`, relative to the working directory.
    pub mission: Option<PathBuf>,
    /// Autopilot parameters, in order.
    pub params: Vec<Param>,
    /// Any scenario key, in order, after everything else.
    pub sets: Vec<Override>,
}

/// The scenario, the autopilot and the overrides in the order they apply.
pub type Resolved = (PathBuf, PathBuf, Vec<Override>);

impl Choice {
    /// The scenario (default: the bundled one), the autopilot (default: the
    /// bundled one) and the overrides in the order they apply: seed,
    /// duration, spec, mission, parameters, then the keys set. An error is
    /// one line naming the argument as `spelling` spells it.
    pub fn resolve(&self, spelling: Spelling) -> Result<Resolved, String> {
        let mut overrides = Vec::new();
        if let Some(v) = self.seed {
            if v < 0 {
                return Err(format!(
                    "{}: {v} is not an integer in [0, 9223372036854775807]",
                    spelling.given("seed", &v.to_string())
                ));
            }
            overrides.push(Override::new(
                "simulation.seed",
                toml::Value::Integer(v),
                spelling.given("seed", &v.to_string()),
            ));
        }
        if let Some(v) = self.duration_s {
            overrides.push(Override::new(
                "simulation.duration_s",
                toml::Value::Float(v),
                spelling.given("duration", &v.to_string()),
            ));
        }
        if let Some(v) = &self.spec {
            overrides.push(Override::new(
                "vehicle.spec",
                toml::Value::String(spec_value(v, spelling)?),
                spelling.given("spec", v),
            ));
        }
        if let Some(v) = &self.mission {
            let given = spelling.given("mission", &v.display().to_string());
            let p = std::path::absolute(v).map_err(|e| format!("{given}: {e}"))?;
            overrides.push(Override::new(
                "vehicle.mission",
                toml::Value::String(p.display().to_string()),
                given,
            ));
        }
        for p in &self.params {
            if p.name.trim().is_empty() || p.name.contains('.') || p.name.contains('=') {
                return Err(format!(
                    "{}: `{}` is not a parameter name",
                    p.given_as,
                    p.name.trim()
                ));
            }
            overrides.push(Override::new(
                &format!("autopilot.params.{}", p.name.trim()),
                p.value.clone(),
                p.given_as.clone(),
            ));
        }
        overrides.extend(self.sets.iter().cloned());
        let scenario = self
            .scenario
            .clone()
            .map_or_else(assets::default_scenario, Ok)
            .map_err(|e| e.to_string())?;
        // `--autopilot px4-sitl`: a flight stack's name (when no such file
        // exists) sets the scenario's `autopilot.kind`; the bundled library
        // stays the path, unused.
        let mut library = self.autopilot.clone();
        if let Some(a) = &self.autopilot
            && let Some(kind) = a.to_str().and_then(lockstep_stacks::StackKind::from_name)
            && !a.exists()
        {
            overrides.push(Override::new(
                "autopilot.kind",
                toml::Value::String(kind.name().into()),
                spelling.given("autopilot", kind.name()),
            ));
            library = None;
        }
        let autopilot = assets::autopilot_or(library).map_err(|e| e.to_string())?;
        Ok((scenario, autopilot, overrides))
    }
}

/// The `vehicle.spec` value for `v`: a built-in name as it is, a file made
/// absolute (the scenario's own paths are relative to the scenario, this
/// one to the working directory).
fn spec_value(v: &str, spelling: Spelling) -> Result<String, String> {
    let specs = lockstep_plant::spec::BUILTIN_SPECS;
    if specs.iter().any(|(n, _)| *n == v) {
        return Ok(v.to_string());
    }
    let given = spelling.given("spec", v);
    let p = std::path::absolute(v).map_err(|e| format!("{given}: {e}"))?;
    // Whatever exists is the loader's to judge (a device, a directory).
    if p.exists() {
        return Ok(p.display().to_string());
    }
    let names = lockstep_plant::spec::flyable_builtins();
    let near = lockstep_plant::spec::nearest_builtin(v)
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    let list = match spelling {
        Spelling::Cli | Spelling::C => "`lockstep specs` lists them",
        Spelling::Python => "`lockstep.specs()` lists them",
    };
    Err(format!(
        "{given}: not a built-in aircraft ({}; {list}) and no file {}{near}",
        names.join(", "),
        p.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_in_the_documented_order_and_say_how_they_were_given() {
        let c = Choice {
            seed: Some(7),
            duration_s: Some(2.5),
            spec: Some("hexa".into()),
            params: vec![Param {
                name: "MPC_XY_VEL_MAX".into(),
                value: toml::Value::Float(3.0),
                given_as: "params={'MPC_XY_VEL_MAX': 3.0}".into(),
            }],
            sets: vec![Override::parse("--set", "wind.model=\"constant\"").unwrap()],
            ..Choice::default()
        };
        let (_, _, o) = c.resolve(Spelling::Python).unwrap();
        let keys: Vec<&str> = o.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "simulation.seed",
                "simulation.duration_s",
                "vehicle.spec",
                "autopilot.params.MPC_XY_VEL_MAX",
                "wind.model"
            ]
        );
        assert_eq!(o[0].given_as, "seed=7");
        assert_eq!(o[2].given_as, "spec=hexa");
        let (_, _, o) = c.resolve(Spelling::Cli).unwrap();
        assert_eq!(o[0].given_as, "--seed 7");
    }

    #[test]
    fn a_negative_seed_a_bad_parameter_name_and_an_unknown_spec_are_refused() {
        let c = Choice {
            seed: Some(-1),
            ..Choice::default()
        };
        assert_eq!(
            c.resolve(Spelling::Python).unwrap_err(),
            "seed=-1: -1 is not an integer in [0, 9223372036854775807]"
        );
        let c = Choice {
            params: vec![Param {
                name: "a.b".into(),
                value: toml::Value::Integer(1),
                given_as: "--param a.b=1".into(),
            }],
            ..Choice::default()
        };
        assert_eq!(
            c.resolve(Spelling::Cli).unwrap_err(),
            "--param a.b=1: `a.b` is not a parameter name"
        );
        let c = Choice {
            spec: Some("hexx".into()),
            ..Choice::default()
        };
        let e = c.resolve(Spelling::Python).unwrap_err();
        assert!(
            e.starts_with("spec=hexx: not a built-in aircraft (iris, hexa, octa")
                && e.ends_with("; did you mean `hexa`?"),
            "{e}"
        );
    }
}
