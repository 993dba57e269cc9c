//! Specs shipped in the crate (plant/specs/*.toml).

use super::SpecError;

/// Built-in spec names and texts.
pub const BUILTIN_SPECS: [(&str, &str); 4] = [
    (
        "multirotor-base",
        include_str!("../../specs/multirotor-base.toml"),
    ),
    ("iris", include_str!("../../specs/iris.toml")),
    ("hexa", include_str!("../../specs/hexa.toml")),
    ("octa", include_str!("../../specs/octa.toml")),
];

/// The built-in specs that fly: all but the base the others extend.
pub fn flyable_builtins() -> Vec<&'static str> {
    BUILTIN_SPECS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| *n != "multirotor-base")
        .collect()
}

/// The flyable built-in spec `name` probably means: the same but for case
/// (`IRIS`), or within two edits (`hexx`).
pub fn nearest_builtin(name: &str) -> Option<&'static str> {
    let lower = name.to_lowercase();
    flyable_builtins()
        .into_iter()
        .find(|n| *n == lower || strsim::levenshtein(n, &lower) <= 2)
}

pub(super) fn builtin_text(name: &str) -> Result<&'static str, SpecError> {
    BUILTIN_SPECS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| SpecError::UnknownBuiltin {
            name: name.to_string(),
            available: BUILTIN_SPECS.iter().map(|(n, _)| n.to_string()).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_name_suggests_a_flyable_builtin() {
        assert_eq!(flyable_builtins(), ["iris", "hexa", "octa"]);
        assert_eq!(nearest_builtin("IRIS"), Some("iris"));
        assert_eq!(nearest_builtin("Hexa"), Some("hexa"));
        assert_eq!(nearest_builtin("octo"), Some("octa"));
        assert_eq!(nearest_builtin("quad.toml"), None);
    }
}
