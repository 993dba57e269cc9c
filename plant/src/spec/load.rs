//! Reading specs: files and built-ins, `extends` resolution and deep merge,
//! strict deserialization.

use std::path::{Path, PathBuf};

use lockstep_config::{ConfigError, Source};

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
            Origin::File(p) => Ok(lockstep_config::read(p, "spec")?),
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
    let source = Source::new(label.clone(), text);
    let invalid = |key: &str, reason: String| ConfigError::invalid(&source, key, reason);
    let mut table = lockstep_config::parse(&label, text)?;
    if let Some(v) = table.get("schema_version") {
        let found = v
            .as_integer()
            .ok_or_else(|| invalid("schema_version", "must be an integer".into()))?;
        if found != i64::from(SCHEMA_VERSION) {
            return Err(invalid("schema_version", unsupported(found)).into());
        }
    }
    let extends = match table.remove("extends") {
        None => Vec::new(),
        Some(toml::Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                toml::Value::String(s) => Ok(s),
                other => Err(invalid(
                    "extends",
                    format!("entries must be strings, found {}", other.type_str()),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(invalid(
                "extends",
                format!(
                    "must be an array of spec names or paths, found {}",
                    other.type_str()
                ),
            )
            .into());
        }
    };
    stack.push(label.clone());
    let mut merged = toml::Table::new();
    for target in extends {
        let ext_err = |reason: String| invalid("extends", format!("{target}: {reason}"));
        let base = origin.resolve(&target).map_err(ext_err)?;
        let base_label = base.label();
        if stack.contains(&base_label) {
            return Err(ext_err(format!("cycle: {} -> {base_label}", stack.join(" -> "))).into());
        }
        let base_text = base.text().map_err(|e| ext_err(e.to_string()))?;
        deep_merge(&mut merged, load_merged(&base, &base_text, stack)?);
    }
    stack.pop();
    deep_merge(&mut merged, table);
    Ok(merged)
}

/// The reason a schema version is refused.
fn unsupported(found: i64) -> String {
    format!("{found} is not supported (this build reads {SCHEMA_VERSION})")
}

fn from_table(source: &Source, table: toml::Table) -> Result<AircraftSpec, SpecError> {
    let spec: AircraftSpec = lockstep_config::strict(source, table)?;
    if spec.schema_version != SCHEMA_VERSION {
        return Err(ConfigError::invalid(
            source,
            "schema_version",
            unsupported(i64::from(spec.schema_version)),
        )
        .into());
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
    from_table(&Source::new(origin.label(), text), merged)
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
