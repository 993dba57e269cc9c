//! `[fleet]`: the sync period, proximity, levels and lookahead keys.

use lockstep_config::{ConfigError, Source, unknown_keys};
use lockstep_harness::inputs::scenario::ScenarioError;

use super::MAX_LEVELS;
use crate::levels::{Level, Levels};

/// `[fleet]`.
#[derive(Debug, Default)]
pub(super) struct FleetSection {
    pub(super) sync_period_us: Option<u64>,
    pub(super) proximity_m: Option<f64>,
    pub(super) levels: Option<Vec<Level>>,
    pub(super) level_grid: Option<Vec<Level>>,
    pub(super) level_buffer_m: Option<f64>,
    pub(super) lookahead_max_s: Option<f64>,
    pub(super) lookahead_margin_m: Option<f64>,
}

const FLEET_KEYS: [&str; 7] = [
    "sync_period_us",
    "proximity_m",
    "levels",
    "level_grid",
    "level_buffer_m",
    "lookahead_max_s",
    "lookahead_margin_m",
];

/// `[a, b]` with a < b, finite.
fn span(v: &toml::Value) -> Option<[f64; 2]> {
    let a = v.as_array()?;
    if a.len() != 2 {
        return None;
    }
    let (lo, hi) = (number(&a[0])?, number(&a[1])?);
    (lo < hi).then_some([lo, hi])
}

fn level_box(
    key: &str,
    v: toml::Value,
    invalid: &impl Fn(&str, String) -> ScenarioError,
    source: &Source,
) -> Result<Level, ScenarioError> {
    let toml::Value::Table(t) = v else {
        return Err(invalid(key, "must be a table".into()));
    };
    let mut name = None;
    let (mut north, mut east, mut alt) = (None, None, None);
    for (k, v) in t {
        let at = format!("{key}.{k}");
        let need_span = |v: &toml::Value| {
            span(v)
                .ok_or_else(|| invalid(&at, format!("must be [min, max] with min < max, is {v}")))
        };
        match k.as_str() {
            "name" => {
                name = Some(
                    v.as_str()
                        .filter(|s| !s.is_empty())
                        .ok_or_else(|| invalid(&at, "must be a non-empty string".into()))?
                        .to_string(),
                )
            }
            "north_m" => north = Some(need_span(&v)?),
            "east_m" => east = Some(need_span(&v)?),
            "altitude_m" => alt = Some(need_span(&v)?),
            _ => {
                return Err(unknown_keys(
                    source,
                    vec![(
                        at,
                        vec![
                            "name".into(),
                            "north_m".into(),
                            "east_m".into(),
                            "altitude_m".into(),
                        ],
                    )],
                ));
            }
        }
    }
    let missing = |k: &str| invalid(&format!("{key}.{k}"), "is required".into());
    Ok(Level {
        name: name.ok_or_else(|| missing("name"))?,
        north_m: north.ok_or_else(|| missing("north_m"))?,
        east_m: east.ok_or_else(|| missing("east_m"))?,
        altitude_m: alt,
    })
}

impl FleetSection {
    pub(super) fn take(
        table: &mut toml::Table,
        source: &Source,
    ) -> Result<FleetSection, ScenarioError> {
        let invalid = |key: &str, reason: String| ConfigError::invalid(source, key, reason);
        let Some(v) = table.remove("fleet") else {
            return Ok(FleetSection::default());
        };
        let toml::Value::Table(t) = v else {
            return Err(invalid("fleet", "must be a table ([fleet])".into()));
        };
        let mut f = FleetSection::default();
        for (k, v) in t {
            match k.as_str() {
                "sync_period_us" => {
                    let us = v.as_integer().filter(|u| *u > 0).ok_or_else(|| {
                        invalid(
                            "fleet.sync_period_us",
                            format!("must be a positive integer, is {v}"),
                        )
                    })?;
                    f.sync_period_us = Some(us as u64);
                }
                "proximity_m" => {
                    let p = number(&v)
                        .filter(|p| *p > 0.0 && *p <= 10_000.0)
                        .ok_or_else(|| {
                            invalid(
                                "fleet.proximity_m",
                                format!("must be a number in (0, 10000] m, is {v}"),
                            )
                        })?;
                    f.proximity_m = Some(p);
                }
                "levels" => f.levels = Some(levels(v, source)?),
                "level_grid" => f.level_grid = Some(level_grid(v, source)?),
                "level_buffer_m" => {
                    let b = number(&v)
                        .filter(|b| *b >= 0.0 && *b <= 1000.0)
                        .ok_or_else(|| {
                            invalid(
                                "fleet.level_buffer_m",
                                format!("must be a number in [0, 1000] m, is {v}"),
                            )
                        })?;
                    f.level_buffer_m = Some(b);
                }
                "lookahead_max_s" | "lookahead_margin_m" => {
                    // A stretch is one round of a distributed run, within
                    // its step deadline, its rows held in memory: 60 s.
                    let most = if k == "lookahead_max_s" { 60.0 } else { 1000.0 };
                    let x = number(&v)
                        .filter(|x| *x >= 0.0 && *x <= most)
                        .ok_or_else(|| {
                            invalid(
                                &format!("fleet.{k}"),
                                format!("must be a number in [0, {most}], is {v}"),
                            )
                        })?;
                    if k == "lookahead_max_s" {
                        f.lookahead_max_s = Some(x);
                    } else {
                        f.lookahead_margin_m = Some(x);
                    }
                }
                _ => {
                    return Err(unknown_keys(
                        source,
                        vec![(
                            format!("fleet.{k}"),
                            FLEET_KEYS.iter().map(|k| k.to_string()).collect(),
                        )],
                    ));
                }
            }
        }
        Ok(f)
    }
}

/// `[[fleet.levels]]`: 1 to MAX_LEVELS boxes, their names unique.
fn levels(v: toml::Value, source: &Source) -> Result<Vec<Level>, ScenarioError> {
    let invalid = |key: &str, reason: String| ConfigError::invalid(source, key, reason);
    let toml::Value::Array(a) = v else {
        return Err(invalid(
            "fleet.levels",
            "must be an array of tables ([[fleet.levels]])".into(),
        ));
    };
    if a.is_empty() || a.len() > MAX_LEVELS {
        return Err(invalid(
            "fleet.levels",
            format!("1 to {MAX_LEVELS} levels, not {}", a.len()),
        ));
    }
    let mut levels: Vec<Level> = Vec::new();
    for (i, v) in a.into_iter().enumerate() {
        let key = format!("fleet.levels[{i}]");
        let l = level_box(&key, v, &invalid, source)?;
        if levels.iter().any(|o| o.name == l.name) {
            return Err(invalid(
                &format!("{key}.name"),
                format!("`{}` names another level too", l.name),
            ));
        }
        levels.push(l);
    }
    Ok(levels)
}

/// `[fleet.level_grid]`: rows by columns of levels over the north and east
/// spans.
fn level_grid(v: toml::Value, source: &Source) -> Result<Vec<Level>, ScenarioError> {
    let invalid = |key: &str, reason: String| ConfigError::invalid(source, key, reason);
    let toml::Value::Table(t) = v else {
        return Err(invalid("fleet.level_grid", "must be a table".into()));
    };
    let get = |k: &str| {
        t.get(k)
            .ok_or_else(|| invalid(&format!("fleet.level_grid.{k}"), "is required".into()))
    };
    let spanned = |k: &str| -> Result<[f64; 2], ScenarioError> {
        let v = get(k)?;
        span(v)
            .filter(|s| s.iter().all(|x| x.is_finite()))
            .ok_or_else(|| {
                invalid(
                    &format!("fleet.level_grid.{k}"),
                    format!("must be [min, max] with min < max, is {v}"),
                )
            })
    };
    let count = |k: &str| -> Result<usize, ScenarioError> {
        let v = get(k)?;
        v.as_integer()
            .filter(|n| *n >= 1 && *n as usize <= MAX_LEVELS)
            .map(|n| n as usize)
            .ok_or_else(|| {
                invalid(
                    &format!("fleet.level_grid.{k}"),
                    format!("must be an integer in [1, {MAX_LEVELS}], is {v}"),
                )
            })
    };
    if let Some(k) = t
        .keys()
        .find(|k| !["north_m", "east_m", "rows", "columns"].contains(&k.as_str()))
    {
        return Err(unknown_keys(
            source,
            vec![(
                format!("fleet.level_grid.{k}"),
                vec![
                    "north_m".into(),
                    "east_m".into(),
                    "rows".into(),
                    "columns".into(),
                ],
            )],
        ));
    }
    let (rows, columns) = (count("rows")?, count("columns")?);
    if rows * columns > MAX_LEVELS {
        return Err(invalid(
            "fleet.level_grid",
            format!("{rows} x {columns} levels; at most {MAX_LEVELS}"),
        ));
    }
    Ok(Levels::grid(
        spanned("north_m")?,
        spanned("east_m")?,
        rows,
        columns,
    ))
}

/// A TOML number (an integer too) that is finite.
pub(super) fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}
