//! Where a key stands in a TOML text: the text parsed again with its spans
//! (`toml::de::DeTable`), the dotted key path followed through tables and
//! arrays (a number indexes an array), the byte offset made a line and a
//! column.

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A line and a column in a text, both from 1 (the column counts
/// characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` of `text`.
    pub fn of(text: &str, offset: usize) -> Position {
        let offset = offset.min(text.len());
        let before = text.get(..offset).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

/// Where the dotted key path `key` is spelled in `text` (the last part's
/// key, or the array element it indexes); `None` when the text does not
/// hold it or is not TOML.
pub fn locate(text: &str, key: &str) -> Option<Position> {
    let doc = DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut span = None;
    // `events[2].at_s` is `events.2.at_s`.
    let key = key.replace('[', ".").replace(']', "");
    if key.is_empty() {
        return None;
    }
    // An empty part is a key spelled `""`.
    let mut parts = key.split('.').peekable();
    let mut value: Option<&Spanned<DeValue>> = None;
    while let Some(part) = parts.next() {
        let next = match value.map(Spanned::get_ref) {
            None => {
                let (k, v) = table.iter().find(|(k, _)| k.get_ref() == part)?;
                span = Some(k.span());
                v
            }
            Some(DeValue::Table(t)) => {
                table = t;
                let (k, v) = table.iter().find(|(k, _)| k.get_ref() == part)?;
                span = Some(k.span());
                v
            }
            Some(DeValue::Array(a)) => {
                let v = a.get(part.parse::<usize>().ok()?)?;
                span = Some(v.span());
                v
            }
            Some(_) => return None,
        };
        value = Some(next);
        if parts.peek().is_none() {
            break;
        }
    }
    span.map(|s| Position::of(text, s.start))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "schema_version = 1\n\
                        [simulation]\n\
                        seed = 7\n\
                        [cadences]\n\
                        log = { rate_hz = 10 }\n\
                        [[events]]\n\
                        at_s = 1.0\n\
                        [[events]]\n\
                        at_s = 2.0\n\
                        action = \"arm\"\n\
                        [wind]\n\
                        mean_ned_mps = [1.0, 2.0, 3.0]\n\
                        # é\n\
                        [world]\n  origin_lat_deg = 1.0\n";

    fn at(key: &str) -> Option<(usize, usize)> {
        locate(TEXT, key).map(|p| (p.line, p.column))
    }

    #[test]
    fn keys_are_found_through_tables_inline_tables_and_arrays() {
        assert_eq!(at("schema_version"), Some((1, 1)));
        assert_eq!(at("simulation"), Some((2, 2)));
        assert_eq!(at("simulation.seed"), Some((3, 1)));
        assert_eq!(at("cadences.log.rate_hz"), Some((5, 9)));
        assert_eq!(at("events.1.action"), Some((10, 1)));
        assert_eq!(at("events[1].action"), Some((10, 1)));
        assert_eq!(at("events.0.at_s"), Some((7, 1)));
        assert_eq!(at("wind.mean_ned_mps.2"), Some((12, 27)));
        assert_eq!(at("world.origin_lat_deg"), Some((15, 3)));
    }

    #[test]
    fn what_the_text_does_not_hold_has_no_position() {
        assert_eq!(at("simulation.duration_s"), None);
        assert_eq!(at("events.2.at_s"), None);
        assert_eq!(at("simulation.seed.x"), None);
        assert_eq!(at("events.x"), None);
        assert_eq!(locate("not = = toml", "not"), None);
        assert_eq!(
            locate("[a]\n\"\" = 1\n", "a."),
            Some(Position { line: 2, column: 1 })
        );
        assert_eq!(locate("a = 1\n", ""), None);
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(
            Position::of("é = 1\né = 2", 10),
            Position { line: 2, column: 3 }
        );
        assert_eq!(Position::of("", 5), Position { line: 1, column: 1 });
    }
}
