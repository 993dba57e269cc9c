use std::path::PathBuf;

/// What is wrong with a spec. `spec` names the file (or `builtin:NAME`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read spec {path}: {reason}")]
    Io { path: PathBuf, reason: String },
    #[error("{spec}: TOML syntax error: {message}")]
    Syntax { spec: String, message: String },
    #[error("{spec}: unknown key(s) {}; check the spelling and the unit suffix", keys.join(", "))]
    UnknownKeys { spec: String, keys: Vec<String> },
    #[error("{spec}: key `{key}`: {reason}")]
    Invalid {
        spec: String,
        key: String,
        reason: String,
    },
    #[error("{spec}: schema_version {found} is not supported (this build reads {supported})")]
    SchemaVersion {
        spec: String,
        found: u32,
        supported: u32,
    },
    #[error("{spec}: extends {target}: {reason}")]
    Extends {
        spec: String,
        target: String,
        reason: String,
    },
    #[error("no built-in spec named `{name}` (built-in: {})", available.join(", "))]
    UnknownBuiltin {
        name: String,
        available: Vec<String>,
    },
}
