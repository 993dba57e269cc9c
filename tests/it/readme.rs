//! The README says what the code and its headings say: every link of its
//! Contents (any `](#anchor)`) reaches a heading, and the crates depend in
//! the direction its Layout lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// GitHub's anchor for a heading: lower case, every character but letters,
/// digits, spaces, '-' and '_' dropped, spaces made '-'; a repeated anchor
/// gets "-1", "-2", ...
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = (!fenced)
            .then(|| line.trim_start_matches('#'))
            .filter(|t| line.starts_with('#') && t.starts_with(' ') && line.len() - t.len() <= 6)
        else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

#[test]
fn github_anchors_follow_its_rules() {
    let a =
        anchors("# A b\n## Pacing: `--realtime` and `--speed`\n```\n# not a heading\n```\n# A b\n");
    let want = ["a-b", "a-b-1", "pacing---realtime-and---speed"];
    assert_eq!(a, want.iter().map(|s| s.to_string()).collect());
}

#[test]
fn every_link_to_a_heading_reaches_one() {
    let text = readme();
    let anchors = anchors(&text);
    let dead: Vec<&str> = text
        .split("](#")
        .skip(1)
        .map(|rest| &rest[..rest.find(')').unwrap()])
        .filter(|target| !anchors.contains(*target))
        .collect();
    assert!(dead.is_empty(), "README links to no heading: {dead:?}");
}

/// Every lockstep crate: its short name (without "lockstep-") and the
/// short names of the lockstep crates it depends on (not dev or build).
fn crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = |dir: &Path| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml")).unwrap()).unwrap()
    };
    let top = manifest(root);
    let members = top["workspace"]["members"].as_array().unwrap();
    let dirs = members.iter().map(|m| root.join(m.as_str().unwrap()));
    let mut graph = BTreeMap::new();
    for dir in std::iter::once(root.to_path_buf())
        .chain(dirs)
        .chain([root.join("python")])
    {
        let m = manifest(&dir);
        let name = m["package"]["name"].as_str().unwrap();
        let short = name.strip_prefix("lockstep-").unwrap_or(name).to_string();
        let deps = m.get("dependencies").and_then(|d| d.as_table());
        let on = deps
            .into_iter()
            .flat_map(|d| d.keys())
            .filter_map(|k| k.strip_prefix("lockstep-").map(str::to_string))
            .collect();
        graph.insert(short, on);
    }
    graph
}

/// The Layout's numbered rows after "depend in one direction": the crate
/// names in backquotes on each.
fn layers(text: &str, known: &BTreeSet<String>) -> Vec<BTreeSet<String>> {
    let from = text.find("The crates depend in one direction").unwrap();
    text[from..]
        .lines()
        .skip_while(|l| !l.starts_with("1. "))
        .take_while(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            // The names of the row, not those in parentheses (what they need).
            let mut row = String::new();
            let mut depth = 0usize;
            for c in l.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    c if depth == 0 => row.push(c),
                    _ => {}
                }
            }
            row.split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| known.contains(*n))
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[test]
fn the_crates_depend_in_the_direction_the_layout_lists() {
    let graph = crate_graph();
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    let rows = layers(&readme(), &known);
    let row_of: BTreeMap<&String, usize> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.iter().map(move |n| (n, i)))
        .collect();
    let listed: BTreeSet<String> = row_of.keys().map(|n| n.to_string()).collect();
    assert_eq!(listed, known, "the Layout lists each crate once");
    assert_eq!(row_of.len(), rows.iter().map(BTreeSet::len).sum::<usize>());
    for (name, deps) in &graph {
        for dep in deps {
            assert!(
                row_of[dep] < row_of[name],
                "{name} (row {}) depends on {dep} (row {}): not above it",
                row_of[name] + 1,
                row_of[dep] + 1
            );
        }
    }
    // Each row past the first holds a crate that needs the row above.
    for (i, row) in rows.iter().enumerate().skip(1) {
        assert!(
            row.iter()
                .any(|n| graph[n].iter().any(|d| row_of[d] == i - 1)),
            "row {} could move up: nothing in it needs row {i}",
            i + 1
        );
    }
}
