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
