//! The scenario format's reference, generated from the serde structs the
//! loader reads (schemars): a JSON Schema, a Markdown reference, and the
//! valid keys at any key path (for unknown-key errors). The committed copies
//! in `docs/` are checked against these by a test, so they cannot drift.

use lockstep_config::resolve;
use serde_json::Value;

use super::file::File;

/// The JSON Schema of a scenario file.
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(File)).expect("a schema is JSON")
}

/// The keys valid in the table at `path` of a scenario (dotted; numbers
/// index arrays), or None when `path` is not a table of the format.
pub fn valid_keys(path: &str) -> Option<Vec<String>> {
    lockstep_config::valid_keys(&schema(), path)
}

/// The type of a property, as the reference shows it.
fn type_name(root: &Value, v: &Value) -> String {
    let v = resolve(root, v);
    if let Some(e) = v.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" \\| ");
    }
    if let Some(one) = v.get("oneOf").and_then(Value::as_array) {
        let names: Vec<String> = one
            .iter()
            .filter_map(|o| {
                o.get("const")
                    .or_else(|| o.get("enum").and_then(|e| e.get(0)))
            })
            .map(|x| x.to_string())
            .collect();
        if !names.is_empty() {
            return names.join(" \\| ");
        }
    }
    match v.get("type") {
        Some(Value::String(t)) if t == "array" => {
            let item = v
                .get("items")
                .map_or("value".into(), |i| type_name(root, i));
            match v.get("minItems").and_then(Value::as_u64) {
                Some(n) if v.get("maxItems").and_then(Value::as_u64) == Some(n) => {
                    format!("[{item}; {n}]")
                }
                _ => format!("[{item}]"),
            }
        }
        Some(Value::String(t)) if t == "object" && v.get("properties").is_none() => {
            "table of numbers".into()
        }
        Some(Value::String(t)) if t == "object" => "table".into(),
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter(|t| *t != "null")
            .map(|t| t.as_str().unwrap_or("?").to_string())
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "value".into(),
    }
}

/// The Markdown reference: one table per section, in the order the
/// sections appear in the format.
pub fn markdown() -> String {
    let root = schema();
    let mut out = String::from(
        "# Scenario reference\n\n\
         Generated from the code by `lockstep schema --markdown` (the JSON Schema:\n\
         `lockstep schema`); a test fails when this file and the code disagree.\n\
         Every key is optional unless marked required. Numbers are checked at load,\n\
         and an error names the key path.\n",
    );
    let mut sections = vec![(String::new(), resolve(&root, &root))];
    let mut i = 0;
    while i < sections.len() {
        let (path, node) = sections[i].clone();
        i += 1;
        let Some(props) = node.get("properties").and_then(Value::as_object) else {
            continue;
        };
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let title = if path.is_empty() {
            "top level".to_string()
        } else {
            format!("`[{path}]`")
        };
        out.push_str(&format!(
            "\n## {title}\n\n| key | type | meaning |\n|---|---|---|\n"
        ));
        for (key, v) in props {
            let full = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let target = resolve(&root, v);
            let doc = v
                .get("description")
                .or_else(|| target.get("description"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .replace('\n', " ");
            let req = if required.contains(&key.as_str()) {
                " (required)"
            } else {
                ""
            };
            out.push_str(&format!(
                "| `{key}` | {} | {doc}{req} |\n",
                type_name(&root, v)
            ));
            if target.get("properties").is_some() {
                sections.push((full, target));
            } else if let Some(items) = target.get("items") {
                let item = resolve(&root, items);
                if item.get("properties").is_some() {
                    sections.push((format!("{full}[]"), item));
                }
            }
        }
    }
    out.push_str(FLEET);
    out
}

/// Fleet scenarios (read by `lockstep-fleet`, which checks the keys).
const FLEET: &str = "
## Fleet scenarios: `[[vehicles]]` and `[fleet]`

A fleet scenario lists `[[vehicles]]` instead of one `[vehicle]`; every other
section above is shared by all of them, and `[world]` must give the origin
(`origin_lat_deg`, `origin_lon_deg`, `origin_alt_m`).

### `[[vehicles]]`

| key | type | meaning |
|---|---|---|
| `name` | string | Unique; letters, digits, `_`, `-`, `.`: the log is `<out>/<name>.csv`. (required) |
| `spec`, `mission`, `start_north_m`, `start_east_m`, `start_yaw_deg` | | As in `[vehicle]`. |
| `autopilot` | string | This vehicle's autopilot library, relative to the scenario (default: the run's). |
| `radius_m` | number | Collision radius, m, in (0, 100] (default: the airframe's rotor tip radius). |
| `events` | array | `[[vehicles.events]]`: this vehicle's own events, after the shared ones. |

### `[fleet]`

| key | type | meaning |
|---|---|---|
| `sync_period_us` | integer | The vehicles meet (separation check, distributed rounds) at every multiple: a multiple of the autopilot period (the default). |
| `proximity_m` | number | A pair closer than this is in proximity, m (default 5). |
| `level_grid` | table | Levels for distributed runs: `north_m`, `east_m` ([min, max]), `rows`, `columns`. |
| `levels` | array | `[[fleet.levels]]`: levels as boxes: `name`, `north_m`, `east_m`, optional `altitude_m` (each [min, max]). |
| `level_buffer_m` | number | A vehicle changes level once this far past its level's border, m (default 2). |
| `lookahead_max_s` | number | The longest stretch the vehicles step between two checks when no pair can come near, s (default 1, at most 60; 0: every sync period). Results are the same either way. |
| `lookahead_margin_m` | number | Distance a stretch keeps beyond a pair's contact distance, m (default 1). |
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_keys_follow_tables_options_and_arrays() {
        let sim = valid_keys("simulation").unwrap();
        for k in ["seed", "duration_s", "integrator", "engine", "tick_us"] {
            assert!(sim.contains(&k.to_string()), "{sim:?}");
        }
        assert!(valid_keys("").unwrap().contains(&"world".to_string()));
        assert!(
            valid_keys("wind")
                .unwrap()
                .contains(&"sigma_mps".to_string())
        );
        assert!(
            valid_keys("events.0")
                .unwrap()
                .contains(&"action".to_string())
        );
        assert!(
            valid_keys("events.3.gust")
                .unwrap()
                .contains(&"hold_s".to_string())
        );
        assert!(
            valid_keys("cadences.log")
                .unwrap()
                .contains(&"rate_hz".to_string())
        );
        assert_eq!(valid_keys("simulation.seed"), None);
        assert_eq!(valid_keys("nothing"), None);
    }
}
