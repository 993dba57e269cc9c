//! Data masks: what a model publishes and subscribes to, as patterns over
//! `dataset/group/attribute` keys, `*` matching any one segment.

use std::fmt;

/// One key of the world's data: dataset, entity group, attribute
/// (serialized as its text, `dataset/group/attribute`, so it can key a
/// JSON object).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(into = "String", try_from = "String")]
pub struct Key {
    pub dataset: String,
    pub group: String,
    pub attribute: String,
}

impl Key {
    pub fn new(dataset: &str, group: &str, attribute: &str) -> Key {
        Key {
            dataset: dataset.into(),
            group: group.into(),
            attribute: attribute.into(),
        }
    }

    /// `dataset/group/attribute`, each segment non-empty and without `/` or
    /// `*`.
    pub fn parse(text: &str) -> Result<Key, String> {
        let p = Pattern::parse(text)?;
        if p.segments.iter().any(|s| s == "*") {
            return Err(format!("`{text}` is a pattern, not a key (it holds `*`)"));
        }
        let [d, g, a] = p.segments;
        Ok(Key {
            dataset: d,
            group: g,
            attribute: a,
        })
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.to_string()
    }
}

impl TryFrom<String> for Key {
    type Error = String;
    fn try_from(s: String) -> Result<Key, String> {
        Key::parse(&s)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.dataset, self.group, self.attribute)
    }
}

/// `dataset/group/attribute` where any segment may be `*`. Travels as its
/// text, checked when read (a remote model's mask is input like any other).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Pattern {
    pub segments: [String; 3],
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let parts: Vec<&str> = text.split('/').collect();
        if parts.len() != 3 {
            return Err(format!(
                "`{text}` is not `dataset/group/attribute` (three segments joined by `/`)"
            ));
        }
        for p in &parts {
            if p.is_empty() {
                return Err(format!("`{text}` has an empty segment"));
            }
            if *p != "*" && p.contains('*') {
                return Err(format!(
                    "`{text}`: a wildcard stands for a whole segment (`*`), not part of one"
                ));
            }
            if p.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(format!("`{text}` holds a space or a control character"));
            }
        }
        Ok(Pattern {
            segments: [parts[0].into(), parts[1].into(), parts[2].into()],
        })
    }

    pub fn matches(&self, k: &Key) -> bool {
        let seg = |p: &str, v: &str| p == "*" || p == v;
        seg(&self.segments[0], &k.dataset)
            && seg(&self.segments[1], &k.group)
            && seg(&self.segments[2], &k.attribute)
    }

    /// Some key matches both.
    pub fn overlaps(&self, o: &Pattern) -> bool {
        self.segments
            .iter()
            .zip(&o.segments)
            .all(|(a, b)| a == "*" || b == "*" || a == b)
    }
}

impl From<Pattern> for String {
    fn from(p: Pattern) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for Pattern {
    type Error = String;
    fn try_from(s: String) -> Result<Pattern, String> {
        Pattern::parse(&s)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.segments.join("/"))
    }
}

/// What a model publishes and what it subscribes to.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct DataMask {
    pub publishes: Vec<Pattern>,
    pub subscribes: Vec<Pattern>,
}

impl DataMask {
    /// From pattern texts.
    pub fn new(publishes: &[&str], subscribes: &[&str]) -> Result<DataMask, String> {
        Ok(DataMask {
            publishes: publishes
                .iter()
                .map(|p| Pattern::parse(p))
                .collect::<Result<_, _>>()?,
            subscribes: subscribes
                .iter()
                .map(|p| Pattern::parse(p))
                .collect::<Result<_, _>>()?,
        })
    }

    pub fn may_publish(&self, k: &Key) -> bool {
        self.publishes.iter().any(|p| p.matches(k))
    }

    pub fn wants(&self, k: &Key) -> bool {
        self.subscribes.iter().any(|p| p.matches(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_whole_segments() {
        let p = Pattern::parse("vehicles/*/status").unwrap();
        assert!(p.matches(&Key::new("vehicles", "v1", "status")));
        assert!(!p.matches(&Key::new("vehicles", "v1", "position")));
        assert!(!p.matches(&Key::new("orders", "v1", "status")));
        assert!(
            Pattern::parse("*/*/*")
                .unwrap()
                .matches(&Key::new("a", "b", "c"))
        );
        assert!(p.overlaps(&Pattern::parse("*/v2/*").unwrap()));
        assert!(!p.overlaps(&Pattern::parse("orders/*/*").unwrap()));
    }

    #[test]
    fn malformed_patterns_and_keys_are_refused() {
        assert_eq!(
            Pattern::parse("a/b").unwrap_err(),
            "`a/b` is not `dataset/group/attribute` (three segments joined by `/`)"
        );
        assert_eq!(
            Pattern::parse("a//c").unwrap_err(),
            "`a//c` has an empty segment"
        );
        assert_eq!(
            Pattern::parse("a/v*/c").unwrap_err(),
            "`a/v*/c`: a wildcard stands for a whole segment (`*`), not part of one"
        );
        assert_eq!(
            Key::parse("a/*/c").unwrap_err(),
            "`a/*/c` is a pattern, not a key (it holds `*`)"
        );
        assert_eq!(Key::parse("a/b/c").unwrap().to_string(), "a/b/c");
    }
}
