//! Command-line overrides of scenario keys (`--set key.path=value`,
//! `--seed`, `--duration`, `--param`...), applied to the parsed TOML table
//! before it is validated, so an overridden value passes exactly the checks
//! a value in the file does, and an error names the key.

use super::{ConfigError, ScenarioError, Source};

/// One override: a dotted key path into the scenario and a TOML value.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Dotted key path, e.g. `wind.mean_ned_mps` or `events.0.at_s` (a
    /// number selects an element of an array).
    pub key: String,
    pub value: toml::Value,
    /// How it was given, for messages: `--set wind.model=constant`.
    pub given_as: String,
}

impl Override {
    /// Parses `key.path=value`. The value is read as a TOML value
    /// (`7`, `2.5`, `true`, `"text"`, `[1.0, 2.0, 0.0]`,
    /// `{ rate_hz = 100 }`); anything that is not valid TOML is taken as a
    /// string, so `vehicle.spec=hexa` needs no quotes.
    pub fn parse(flag: &str, text: &str) -> Result<Override, String> {
        let (key, raw) = text
            .split_once('=')
            .ok_or_else(|| format!("{flag} {text}: expected KEY=VALUE"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(|s| s.trim().is_empty()) {
            return Err(format!(
                "{flag} {text}: `{key}` is not a key path (parts joined by dots)"
            ));
        }
        Ok(Override {
            key: key.to_string(),
            value: value_of(raw.trim()),
            given_as: format!("{flag} {text}"),
        })
    }

    /// An override of `key` with `value`, given as `given_as`.
    pub fn new(key: &str, value: toml::Value, given_as: String) -> Override {
        Override {
            key: key.to_string(),
            value,
            given_as,
        }
    }
}

/// An override as text: what a report shows and what crosses the wire (the
/// value as inline TOML, so it reads back as the value it was).
#[derive(serde::Serialize, serde::Deserialize)]
struct OverrideText {
    key: String,
    value: String,
    given_as: String,
}

impl serde::Serialize for Override {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        OverrideText {
            key: self.key.clone(),
            value: self.value.to_string(),
            given_as: self.given_as.clone(),
        }
        .serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Override {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Override, D::Error> {
        let t = OverrideText::deserialize(d)?;
        let value = format!("v = {}", t.value)
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut table| table.remove("v"))
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "override {}: `{}` is not a TOML value",
                    t.given_as, t.value
                ))
            })?;
        Ok(Override {
            key: t.key,
            value,
            given_as: t.given_as,
        })
    }
}

/// A TOML value, or the text itself as a string.
fn value_of(raw: &str) -> toml::Value {
    format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

/// Writes every override into `table` (from `source`), creating missing
/// tables on the way; an override that cannot be written is its key's
/// error (from the command line: not located in the file).
pub(super) fn apply(
    table: &mut toml::Table,
    overrides: &[Override],
    source: &Source,
) -> Result<(), ScenarioError> {
    for o in overrides {
        set(table, o).map_err(|reason| {
            ConfigError::invalid(
                &Source::unlocated(source.label.clone()),
                o.key.clone(),
                format!("{reason} (from {})", o.given_as),
            )
        })?;
    }
    Ok(())
}

fn set(table: &mut toml::Table, o: &Override) -> Result<(), String> {
    let parts: Vec<&str> = o.key.split('.').map(str::trim).collect();
    let (last, path) = parts.split_last().expect("a key has a part");
    let mut here = Slot::Table(table);
    for (depth, part) in path.iter().enumerate() {
        let so_far = parts[..=depth].join(".");
        here = match here {
            Slot::Table(t) => {
                let v = t
                    .entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                match v {
                    toml::Value::Table(t) => Slot::Table(t),
                    toml::Value::Array(a) => Slot::Array(a),
                    other => {
                        return Err(format!(
                            "`{so_far}` is not a table but a value of type {}",
                            other.type_str()
                        ));
                    }
                }
            }
            Slot::Array(a) => {
                let n = a.len();
                let i = index(part, n, &so_far)?;
                if i == n {
                    // One past the end: a new element, built key by key.
                    a.push(toml::Value::Table(toml::Table::new()));
                }
                match &mut a[i] {
                    toml::Value::Table(t) => Slot::Table(t),
                    toml::Value::Array(a) => Slot::Array(a),
                    other => {
                        return Err(format!(
                            "`{so_far}` is not a table but a value of type {}",
                            other.type_str()
                        ));
                    }
                }
            }
        };
    }
    match here {
        Slot::Table(t) => {
            t.insert(last.to_string(), o.value.clone());
        }
        Slot::Array(a) => {
            let n = a.len();
            let i = index(last, n, &o.key)?;
            if i == n {
                a.push(o.value.clone());
            } else {
                a[i] = o.value.clone();
            }
        }
    }
    Ok(())
}

enum Slot<'a> {
    Table(&'a mut toml::Table),
    Array(&'a mut Vec<toml::Value>),
}

/// The element `part` names of an array of `len`: one that exists, or
/// `len` itself, which appends one (`events.2={...}` adds a third event).
fn index(part: &str, len: usize, so_far: &str) -> Result<usize, String> {
    match part.parse::<usize>() {
        Ok(i) if i <= len => Ok(i),
        Ok(i) => Err(format!(
            "`{so_far}`: index {i} is out of range (the array has {len} elements; index {len} \
             appends one)"
        )),
        Err(_) => Err(format!(
            "`{so_far}`: `{part}` is not an index into an array of {len} elements"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn an_override_reads_back_as_the_value_it_was() {
        for given in [
            "simulation.seed=3",
            "simulation.duration_s=30.0",
            "vehicle.spec=hexa",
            "wind.mean_ned_mps=[4.0, 0.0, -0.5]",
            "cadences.log={ rate_hz = 50 }",
            "autopilot.params.X=1e-3",
        ] {
            let o = Override::parse("--set", given).unwrap();
            let json = serde_json::to_string(&o).unwrap();
            let back: Override = serde_json::from_str(&json).unwrap();
            assert_eq!(back, o, "{json}");
        }
        let bad = r#"{"key":"a","value":"not toml","given_as":"--set a=b"}"#;
        let e = serde_json::from_str::<Override>(bad).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("override --set a=b: `not toml` is not a TOML value"),
            "{e}"
        );
    }

    #[test]
    fn an_index_one_past_the_end_appends() {
        let mut t = table("[[events]]\nat_s = 1.0\naction = \"arm\"\n");
        let set = |t: &mut toml::Table, s: &str| {
            apply(
                t,
                &[Override::parse("--set", s).unwrap()],
                &Source::unlocated("s.toml"),
            )
            .unwrap()
        };
        set(
            &mut t,
            "events.1={ at_us = 31500000, action = \"motor_fail\", motor = 2 }",
        );
        set(&mut t, "events.2.at_s=40.0");
        set(&mut t, "events.2.action=land");
        let e = t["events"].as_array().unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0]["action"].as_str(), Some("arm"));
        assert_eq!(e[1]["at_us"].as_integer(), Some(31_500_000));
        assert_eq!(e[1]["motor"].as_integer(), Some(2));
        assert_eq!(e[2]["at_s"].as_float(), Some(40.0));
        assert_eq!(e[2]["action"].as_str(), Some("land"));
    }

    #[test]
    fn values_are_toml_or_else_text() {
        let o = Override::parse("--set", "simulation.seed=7").unwrap();
        assert_eq!(o.value, toml::Value::Integer(7));
        let o = Override::parse("--set", "wind.mean_ned_mps=[1.0, 2, 0.0]").unwrap();
        assert_eq!(o.value.as_array().unwrap().len(), 3);
        let o = Override::parse("--set", "vehicle.spec = hexa").unwrap();
        assert_eq!(o.key, "vehicle.spec");
        assert_eq!(o.value, toml::Value::String("hexa".into()));
        let o = Override::parse("--set", "a.b=\"x=y\"").unwrap();
        assert_eq!(o.value, toml::Value::String("x=y".into()));
    }

    #[test]
    fn malformed_overrides_are_refused() {
        assert_eq!(
            Override::parse("--set", "seed").unwrap_err(),
            "--set seed: expected KEY=VALUE"
        );
        assert_eq!(
            Override::parse("--set", "a..b=1").unwrap_err(),
            "--set a..b=1: `a..b` is not a key path (parts joined by dots)"
        );
        assert_eq!(
            Override::parse("--set", "=1").unwrap_err(),
            "--set =1: `` is not a key path (parts joined by dots)"
        );
    }

    #[test]
    fn keys_are_set_and_tables_created() {
        let mut t = table("[simulation]\nseed = 1\n[[events]]\nat_s = 1.0\naction = \"arm\"\n");
        let os = [
            Override::parse("--set", "simulation.seed=9").unwrap(),
            Override::parse("--set", "autopilot.params.MPC_XY_VEL_P=1.5").unwrap(),
            Override::parse("--set", "events.0.at_s=2.5").unwrap(),
        ];
        apply(&mut t, &os, &Source::unlocated("s.toml")).unwrap();
        assert_eq!(t["simulation"]["seed"].as_integer(), Some(9));
        assert_eq!(
            t["autopilot"]["params"]["MPC_XY_VEL_P"].as_float(),
            Some(1.5)
        );
        assert_eq!(t["events"][0]["at_s"].as_float(), Some(2.5));
    }

    #[test]
    fn paths_through_values_or_past_arrays_are_errors_naming_the_key() {
        let mut t = table("[simulation]\nseed = 1\n[[events]]\nat_s = 1.0\n");
        let err = |s: &str, t: &mut toml::Table| {
            apply(
                t,
                &[Override::parse("--set", s).unwrap()],
                &Source::unlocated("s.toml"),
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            err("simulation.seed.x=1", &mut t),
            "s.toml: key `simulation.seed.x`: `simulation.seed` is not a table but a value of \
             type integer (from --set simulation.seed.x=1)"
        );
        assert_eq!(
            err("events.3.at_s=1", &mut t),
            "s.toml: key `events.3.at_s`: `events.3`: index 3 is out of range (the array has \
             1 elements; index 1 appends one) (from --set events.3.at_s=1)"
        );
        assert_eq!(
            err("events.first.at_s=1", &mut t),
            "s.toml: key `events.first.at_s`: `events.first`: `first` is not an index into an \
             array of 1 elements (from --set events.first.at_s=1)"
        );
    }
}
