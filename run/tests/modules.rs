//! The run layer's modules form no loop: following `crate::<module>` uses
//! from any module never comes back to it, so each can be read knowing
//! only those it uses (the report types sit in `summary`, below the
//! modules that make them and the viewer that reads them). Test code
//! (`tests.rs`, an inline `mod tests`) and comments are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            sources(&e.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().unwrap() != "tests.rs"
    {
        out.push(path.to_path_buf());
    }
}

/// The top-level modules: each `src/<name>.rs` or `src/<name>/` but lib.rs.
fn modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "lib.rs")
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// Each module's uses of the others: the module used, and where.
fn uses(src: &Path, names: &BTreeSet<String>) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut graph = BTreeMap::new();
    for m in names {
        let mut files = Vec::new();
        let dir = src.join(m);
        let file = src.join(format!("{m}.rs"));
        sources(if dir.is_dir() { &dir } else { &file }, &mut files);
        let mut used = BTreeMap::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                let code = line.trim_start();
                let inline_tests = lines
                    .get(i + 1)
                    .is_some_and(|n| n.trim_start().starts_with("mod tests {"));
                if code.starts_with("#[cfg(test)]") && inline_tests {
                    break;
                }
                if code.starts_with("//") {
                    continue;
                }
                for (at, _) in code.match_indices("crate::") {
                    let name: String = code[at + 7..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if names.contains(&name) && name != *m {
                        used.entry(name).or_insert_with(|| {
                            format!("{}:{}", f.strip_prefix(src).unwrap().display(), i + 1)
                        });
                    }
                }
            }
        }
        graph.insert(m.clone(), used);
    }
    graph
}

/// A loop through `from`, as `a (file:line) -> b ... -> a`, if there is one.
fn loop_through(graph: &BTreeMap<String, BTreeMap<String, String>>, from: &str) -> Option<String> {
    // Depth first, keeping the path.
    let mut path: Vec<(String, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        at: &str,
        from: &str,
        path: &mut Vec<(String, String)>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for (next, place) in &graph[at] {
            path.push((at.to_string(), format!("{place} uses {next}")));
            if next == from {
                return true;
            }
            if seen.insert(next.clone()) && walk(graph, next, from, path, seen) {
                return true;
            }
            path.pop();
        }
        false
    }
    walk(graph, from, from, &mut path, &mut seen).then(|| {
        path.into_iter()
            .map(|(_, p)| p)
            .collect::<Vec<_>>()
            .join(", ")
    })
}

#[test]
fn no_module_of_the_run_layer_comes_back_to_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names = modules(&src);
    assert!(names.contains("summary") && names.contains("view") && names.contains("flight"));
    let graph = uses(&src, &names);
    // The viewer reads summaries; it knows none of the runs that write them.
    assert_eq!(
        graph["view"].keys().collect::<Vec<_>>(),
        ["plots", "summary"],
        "{:?}",
        graph["view"]
    );
    let loops: Vec<String> = names
        .iter()
        .filter_map(|m| loop_through(&graph, m))
        .collect();
    assert!(loops.is_empty(), "loops:\n{}", loops.join("\n"));
}

#[test]
fn a_loop_is_found_and_named() {
    // The checker itself: a graph with a loop.
    let mut g: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    g.insert("a".into(), [("b".into(), "a.rs:1".into())].into());
    g.insert("b".into(), [("c".into(), "b.rs:2".into())].into());
    g.insert("c".into(), [("a".into(), "c.rs:3".into())].into());
    g.insert("d".into(), [("a".into(), "d.rs:4".into())].into());
    assert_eq!(
        loop_through(&g, "a").as_deref(),
        Some("a.rs:1 uses b, b.rs:2 uses c, c.rs:3 uses a")
    );
    assert_eq!(loop_through(&g, "d"), None);
}
