use lockstep_config::ConfigError;

/// What is wrong with a spec: its file (a read, the TOML, an unknown or
/// ill-typed key, a value its checks refuse; `builtin:NAME` for a
/// built-in), or a name that is no built-in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error(transparent)]
    File(#[from] ConfigError),
    #[error("no built-in spec named `{name}` (built-in: {})", available.join(", "))]
    UnknownBuiltin {
        name: String,
        available: Vec<String>,
    },
}

impl SpecError {
    /// The file error, when it is one.
    pub fn file(&self) -> Option<&ConfigError> {
        match self {
            SpecError::File(e) => Some(e),
            SpecError::UnknownBuiltin { .. } => None,
        }
    }
}
