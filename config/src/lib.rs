//! lockstep-config: the one way lockstep reads a configuration file
//! (scenario, aircraft spec, fleet scenario, co-simulation system, delivery
//! fleet): a bounded read, TOML parsed with its positions kept, strict
//! deserialization that reports every unknown key with the keys valid
//! where it stands, and one error shape, [`ConfigError`]:
//!
//! ```text
//! file.toml:12:1: key `simulation.duration_s`: must be positive, is -1
//! file.toml:7:1: unknown key `wind.sigma` (valid in [wind]: model, mean_ned_mps, sigma_mps, tau_s)
//! file.toml:3:8: TOML syntax error: ...
//! cannot read scenario file.toml: No such file or directory (os error 2)
//! ```
//!
//! The line and column are the key's where the file spells it (a key taken
//! from a default, an extended spec or a command-line override has none).

mod locate;
mod read;
mod schema;

use std::path::Path;

use serde::de::DeserializeOwned;

pub use locate::{Position, locate};
pub use read::{kind_of, read_text};
pub use schema::{resolve, valid_keys};

/// Largest configuration file read: 16 MiB.
pub const MAX_BYTES: u64 = 16 << 20;

/// One unknown key: its path, where it stands, and the keys valid there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    pub key: String,
    pub at: Option<Position>,
    pub valid: Vec<String>,
}

/// What is wrong with a configuration file.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// It could not be read: `what` names the kind of file (`scenario`).
    Read { what: String, reason: String },
    /// It is not TOML.
    Syntax {
        at: Option<Position>,
        message: String,
    },
    /// Keys the format does not have.
    UnknownKeys(Vec<UnknownKey>),
    /// A key whose value is refused.
    Invalid {
        key: String,
        at: Option<Position>,
        reason: String,
    },
}

/// A configuration file refused: which file, and what is wrong where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.text())]
pub struct ConfigError {
    /// The file as the user named it (with the overrides that applied,
    /// when there are any), or `builtin:NAME`.
    pub file: String,
    pub problem: Problem,
}

fn at(file: &str, p: &Option<Position>) -> String {
    match p {
        Some(p) => format!("{file}:{}:{}", p.line, p.column),
        None => file.to_string(),
    }
}

/// Unknown keys in the order the file spells them (those it does not
/// spell last, by name).
fn in_file_order(mut keys: Vec<UnknownKey>) -> Vec<UnknownKey> {
    keys.sort_by(|a, b| match (a.at, b.at) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.key.cmp(&b.key),
    });
    keys
}

impl ConfigError {
    fn text(&self) -> String {
        let f = &self.file;
        match &self.problem {
            Problem::Read { what, reason } => format!("cannot read {what} {f}: {reason}"),
            Problem::Syntax { at: p, message } => {
                format!("{}: TOML syntax error: {message}", at(f, p))
            }
            // The file once; each further key's position after it.
            Problem::UnknownKeys(keys) => keys
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let parent = k.key.rsplit_once('.').map_or("", |(p, _)| p);
                    let place = if parent.is_empty() {
                        "at the top level".to_string()
                    } else {
                        format!("in [{parent}]")
                    };
                    let valid = if k.valid.is_empty() {
                        "none".to_string()
                    } else {
                        k.valid.join(", ")
                    };
                    let at = match (i, k.at) {
                        (0, p) => format!("{}: ", at(f, &p)),
                        (_, Some(p)) => format!("{}:{}: ", p.line, p.column),
                        (_, None) => String::new(),
                    };
                    format!("{at}unknown key `{}` (valid {place}: {valid})", k.key)
                })
                .collect::<Vec<_>>()
                .join("; "),
            Problem::Invalid { key, at: p, reason } => {
                format!("{}: key `{key}`: {reason}", at(f, p))
            }
        }
    }

    /// `key` of `source` refused for `reason` (located in its text).
    pub fn invalid(source: &Source, key: impl Into<String>, reason: impl Into<String>) -> Self {
        let key = key.into();
        ConfigError {
            file: source.label.clone(),
            problem: Problem::Invalid {
                at: source.locate(&key),
                key,
                reason: reason.into(),
            },
        }
    }

    /// The refused key, when the problem is one key.
    pub fn key(&self) -> Option<&str> {
        match &self.problem {
            Problem::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The same error with the keys valid where an unknown key stands
    /// narrowed by `valid` (given the unknown key's path; `None` keeps the
    /// schema's list): for a format whose entries take the keys of their
    /// kind.
    pub fn valid_keys_by(mut self, valid: impl Fn(&str) -> Option<Vec<String>>) -> Self {
        if let Problem::UnknownKeys(keys) = &mut self.problem {
            for k in keys {
                if let Some(v) = valid(&k.key) {
                    k.valid = v;
                }
            }
        }
        self
    }

    /// The same error with its keys spelled as `source` spells them
    /// (`rekey` maps each key) and located in `source`'s text: an error of
    /// a table built from a part of a file (a fleet's vehicle entry).
    pub fn rekey(self, source: &Source, rekey: impl Fn(&str) -> String) -> Self {
        let problem = match self.problem {
            Problem::Invalid { key, reason, .. } => {
                let key = rekey(&key);
                Problem::Invalid {
                    at: source.locate(&key),
                    key,
                    reason,
                }
            }
            Problem::UnknownKeys(keys) => Problem::UnknownKeys(in_file_order(
                keys.into_iter()
                    .map(|k| {
                        let key = rekey(&k.key);
                        UnknownKey {
                            at: source.locate(&key),
                            key,
                            valid: k.valid,
                        }
                    })
                    .collect(),
            )),
            p => p,
        };
        ConfigError {
            file: source.label.clone(),
            problem,
        }
    }
}

/// A configuration text and the name its errors carry. Keys named in
/// `unlocated` (command-line overrides, and everything under them) are
/// not looked for in the text: their values did not come from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub label: String,
    pub text: Option<String>,
    pub unlocated: Vec<String>,
}

impl Source {
    /// `text`, named `label` in errors.
    pub fn new(label: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            label: label.into(),
            text: Some(text.into()),
            unlocated: Vec::new(),
        }
    }

    /// A source with no text to look in (a built-in, a table made in code).
    pub fn unlocated(label: impl Into<String>) -> Source {
        Source {
            label: label.into(),
            text: None,
            unlocated: Vec::new(),
        }
    }

    /// Where `key` (a dotted path) stands in the text.
    pub fn locate(&self, key: &str) -> Option<Position> {
        let overridden = self.unlocated.iter().any(|o| {
            key == o || key.starts_with(&format!("{o}.")) || o.starts_with(&format!("{key}."))
        });
        if overridden {
            return None;
        }
        locate(self.text.as_deref()?, key)
    }
}

/// The text of the configuration file at `path` (a `what` file: scenario,
/// spec, system, fleet): a regular file of at most [`MAX_BYTES`]
/// ([`read_text`]).
pub fn read(path: &Path, what: &str) -> Result<String, ConfigError> {
    let refuse = |reason: String| ConfigError {
        file: path.display().to_string(),
        problem: Problem::Read {
            what: what.to_string(),
            reason,
        },
    };
    read_text(path, what, MAX_BYTES).map_err(refuse)
}

/// Parses TOML text into a table; a syntax error carries its position.
pub fn parse(label: &str, text: &str) -> Result<toml::Table, ConfigError> {
    text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map(|s| Position::of(text, s.start));
        // toml's message repeats the position and quotes the line: the
        // first line says what is wrong.
        let message = e.message().lines().next().unwrap_or_default().trim_end();
        ConfigError {
            file: label.to_string(),
            problem: Problem::Syntax {
                at,
                message: message.to_string(),
            },
        }
    })
}

/// Deserializes `table` into `T`, refusing unknown keys (all of them, each
/// with the keys valid where it stands, from `T`'s schema) and naming the
/// key path of an ill-typed value, located in `source`'s text.
pub fn strict<T: DeserializeOwned + schemars::JsonSchema>(
    source: &Source,
    table: toml::Table,
) -> Result<T, ConfigError> {
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
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
        return Err(ConfigError {
            file: source.label.clone(),
            problem: Problem::UnknownKeys(in_file_order(
                unknown
                    .into_iter()
                    .map(|key| {
                        let parent = key.rsplit_once('.').map_or("", |(p, _)| p);
                        UnknownKey {
                            at: source.locate(&key),
                            valid: valid_keys(&schema, parent).unwrap_or_default(),
                            key,
                        }
                    })
                    .collect(),
            )),
        });
    }
    value.map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." {
            "(top level)".to_string()
        } else {
            key
        };
        // The first line: the rest repeats the key path ("in `body`").
        let reason = e
            .inner()
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .trim_end()
            .to_string();
        ConfigError::invalid(source, key, reason)
    })
}

/// An array of tables whose entries each name their `kind`
/// (`[[participants]]`, `[[models]]`): the keys an entry of each kind takes.
pub struct Kinded<'a> {
    /// The array's key.
    pub section: &'a str,
    /// The keys an entry of `kind` takes (`None`: no such kind, and the
    /// unknown key keeps the schema's valid keys).
    pub keys_of: &'a dyn Fn(&str) -> Option<Vec<&'static str>>,
}

impl std::fmt::Debug for Kinded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kinded")
            .field("section", &self.section)
            .finish_non_exhaustive()
    }
}

/// [`strict`], with an unknown key of an entry of a [`Kinded`] array told
/// the keys its entry's kind takes (sorted) rather than every kind's.
pub fn strict_kinded<T: DeserializeOwned + schemars::JsonSchema>(
    source: &Source,
    table: toml::Table,
    kinded: &[Kinded],
) -> Result<T, ConfigError> {
    // Each entry's kind, read before the table is taken.
    let kinds: Vec<Vec<Option<String>>> = kinded
        .iter()
        .map(|k| match table.get(k.section) {
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|e| e.get("kind").and_then(|v| v.as_str()).map(String::from))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    strict(source, table).map_err(|e| {
        e.valid_keys_by(|key| {
            let mut parts = key.splitn(3, '.');
            let (section, i) = (parts.next()?, parts.next()?.parse::<usize>().ok()?);
            parts.next()?;
            let at = kinded.iter().position(|k| k.section == section)?;
            let kind = kinds[at].get(i)?.as_deref()?;
            let mut valid: Vec<String> = (kinded[at].keys_of)(kind)?
                .iter()
                .map(|k| k.to_string())
                .collect();
            valid.sort();
            Some(valid)
        })
    })
}

/// The unknown keys `keys` (with the keys valid where they stand) of
/// `source`: for keys a format checks itself (per kind of entry).
pub fn unknown_keys(source: &Source, keys: Vec<(String, Vec<String>)>) -> ConfigError {
    ConfigError {
        file: source.label.clone(),
        problem: Problem::UnknownKeys(in_file_order(
            keys.into_iter()
                .map(|(key, valid)| UnknownKey {
                    at: source.locate(&key),
                    key,
                    valid,
                })
                .collect(),
        )),
    }
}

#[cfg(test)]
mod tests;
