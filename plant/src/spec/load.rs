//! Reading specs: files and built-ins, `extends` resolution and deep merge,
//! strict deserialization.

use std::path::{Path, PathBuf};

use super::builtin::builtin_text;
use super::{AircraftSpec, SCHEMA_VERSION, SpecError};

/// Where a spec text comes from.
#[derive(Debug, Clone)]
enum Origin {
    Builtin(String),
    File(PathBuf),
}

impl Origin {
    fn label(&self) -> String {
        match self {
            Origin::Builtin(n) => format!("builtin:{n}"),
            Origin::File(p) => p.display().to_string(),
        }
    }

    fn text(&self) -> Result<String, SpecError> {
        match self {
            Origin::Builtin(name) => builtin_text(name).map(str::to_string),
            Origin::File(p) => std::fs::read_to_string(p).map_err(|e| SpecError::Io {
                path: p.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// Resolves an `extends` entry relative to this origin.
    fn resolve(&self, target: &str) -> Result<Origin, String> {
        let is_path = target.contains('/') || target.ends_with(".toml");
        match (self, is_path) {
            (_, false) => Ok(Origin::Builtin(target.to_string())),
            (Origin::File(p), true) => {
                let base = p.parent().unwrap_or(Path::new("."));
                let path = base.join(target);
                // Canonical when it exists, so that cycles are recognised
                // whatever the spelling of the path.
                Ok(Origin::File(std::fs::canonicalize(&path).unwrap_or(path)))
            }
            (Origin::Builtin(_), true) => {
                Err("a built-in spec can only extend built-in specs".into())
            }
        }
    }
}

/// Tables merge key by key; anything else in `overlay` replaces `base`.
fn deep_merge(base: &mut toml::Table, overlay: toml::Table) {
    for (k, v) in overlay {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Parses one origin and everything it extends into one merged table.
fn load_merged(
    origin: &Origin,
    text: &str,
    stack: &mut Vec<String>,
) -> Result<toml::Table, SpecError> {
    let label = origin.label();
    let mut table = parse_table(&label, text)?;
    if let Some(v) = table.get("schema_version") {
        let found = v.as_integer().ok_or_else(|| SpecError::Invalid {
            spec: label.clone(),
            key: "schema_version".into(),
            reason: "must be an integer".into(),
        })?;
        if found != i64::from(SCHEMA_VERSION) {
            return Err(SpecError::SchemaVersion {
                spec: label,
                found: u32::try_from(found).unwrap_or(u32::MAX),
                supported: SCHEMA_VERSION,
            });
        }
    }
    let extends = match table.remove("extends") {
        None => Vec::new(),
        Some(toml::Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                toml::Value::String(s) => Ok(s),
                other => Err(SpecError::Invalid {
                    spec: label.clone(),
                    key: "extends".into(),
                    reason: format!("entries must be strings, found {}", other.type_str()),
                }),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(SpecError::Invalid {
                spec: label,
                key: "extends".into(),
                reason: format!(
                    "must be an array of spec names or paths, found {}",
                    other.type_str()
                ),
            });
        }
    };
    stack.push(label.clone());
    let mut merged = toml::Table::new();
    for target in extends {
        let ext_err = |reason: String| SpecError::Extends {
            spec: label.clone(),
            target: target.clone(),
            reason,
        };
        let base = origin.resolve(&target).map_err(ext_err)?;
        let base_label = base.label();
        if stack.contains(&base_label) {
            return Err(ext_err(format!(
                "cycle: {} -> {base_label}",
                stack.join(" -> ")
            )));
        }
        let base_text = base.text().map_err(|e| ext_err(e.to_string()))?;
        deep_merge(&mut merged, load_merged(&base, &base_text, stack)?);
    }
    stack.pop();
    deep_merge(&mut merged, table);
    Ok(merged)
}

/// Deserializes a TOML table into `T`, refusing unknown keys and naming the
/// path of every unknown key or ill-typed value; `label` names the source in
/// errors. Any strict TOML configuration of the project reads through this.
pub fn deserialize_strict<T: serde::de::DeserializeOwned>(
    label: &str,
    table: toml::Table,
) -> Result<T, SpecError> {
    let mut unknown = Vec::new();
    // serde_ignored writes `?` for an Option layer: not part of the key path.
    let mut note = |path: serde_ignored::Path| {
        unknown.push(
            path.to_string()
                .split('.')
                .filter(|s| *s != "?")
                .collect::<Vec<_>>()
                .join("."),
        )
    };
    let de = serde_ignored::Deserializer::new(toml::Value::Table(table), &mut note);
    let value: Result<T, _> = serde_path_to_error::deserialize(de);
    if !unknown.is_empty() {
        return Err(SpecError::UnknownKeys {
            spec: label.to_string(),
            keys: unknown,
        });
    }
    value.map_err(|e| {
        let key = e.path().to_string();
        SpecError::Invalid {
            spec: label.to_string(),
            key: if key == "." {
                "(top level)".into()
            } else {
                key
            },
            // The first line: the rest repeats the key path ("in `body`").
            reason: e
                .inner()
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .trim_end()
                .to_string(),
        }
    })
}

/// Parses TOML text into a table; syntax errors carry line and column.
pub fn parse_table(label: &str, text: &str) -> Result<toml::Table, SpecError> {
    text.parse()
        .map_err(|e: toml::de::Error| SpecError::Syntax {
            spec: label.to_string(),
            message: e.to_string().trim_end().to_string(),
        })
}

fn from_table(label: &str, table: toml::Table) -> Result<AircraftSpec, SpecError> {
    let spec: AircraftSpec = deserialize_strict(label, table)?;
    if spec.schema_version != SCHEMA_VERSION {
        return Err(SpecError::SchemaVersion {
            spec: label.to_string(),
            found: spec.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(spec)
}

fn load_origin(origin: Origin, text: Option<&str>) -> Result<AircraftSpec, SpecError> {
    let owned;
    let text = match text {
        Some(t) => t,
        None => {
            owned = origin.text()?;
            &owned
        }
    };
    let origin = match origin {
        Origin::File(p) => Origin::File(std::fs::canonicalize(&p).unwrap_or(p)),
        b => b,
    };
    let mut stack = Vec::new();
    let merged = load_merged(&origin, text, &mut stack)?;
    from_table(&origin.label(), merged)
}

impl AircraftSpec {
    /// A built-in spec by name (`iris`, `hexa`, `octa`).
    pub fn builtin(name: &str) -> Result<Self, SpecError> {
        load_origin(Origin::Builtin(name.to_string()), None)
    }

    /// A spec file; `extends` paths are relative to its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SpecError> {
        load_origin(Origin::File(path.as_ref().to_path_buf()), None)
    }

    /// A built-in name, or else a path.
    pub fn resolve(name_or_path: &str) -> Result<Self, SpecError> {
        if builtin_text(name_or_path).is_ok() {
            Self::builtin(name_or_path)
        } else {
            Self::load(name_or_path)
        }
    }

    /// A spec from text, as if read from `path` (which anchors relative
    /// `extends` paths and names the source in errors).
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<Self, SpecError> {
        load_origin(Origin::File(path.as_ref().to_path_buf()), Some(text))
    }

    /// The merged spec as canonical TOML (no `extends`): what a recording
    /// embeds. Reading it back gives an equal spec.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self)
            .unwrap_or_else(|e| unreachable!("every spec field serializes to TOML: {e}"))
    }
}
