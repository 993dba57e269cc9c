//! The keys valid at a key path, from the JSON Schema of the serde structs
//! a format is read into (schemars).

use serde_json::Value;

/// The node `v` stands for: `$ref`s followed, `Option`'s `anyOf` with
/// `null` unwrapped.
pub fn resolve<'a>(root: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..16 {
        if let Some(r) = v.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/");
            match root.get("$defs").and_then(|d| d.get(name)) {
                Some(t) => v = t,
                None => return v,
            }
        } else if let Some(any) = v.get("anyOf").and_then(Value::as_array) {
            match any
                .iter()
                .find(|a| a.get("type") != Some(&Value::from("null")))
            {
                Some(t) if any.len() == 2 => v = t,
                _ => return v,
            }
        } else {
            return v;
        }
    }
    v
}

/// The keys valid in the table at `path` (dotted; numbers index arrays) of
/// a file whose schema is `root`, or `None` when `path` is not a table of
/// the format.
pub fn valid_keys(root: &Value, path: &str) -> Option<Vec<String>> {
    let mut node = resolve(root, root);
    for part in path.split('.').filter(|p| !p.is_empty()) {
        node = if part.parse::<usize>().is_ok() {
            resolve(root, node.get("items")?)
        } else {
            resolve(root, node.get("properties")?.get(part)?)
        };
    }
    let props = node.get("properties")?.as_object()?;
    Some(props.keys().cloned().collect())
}
