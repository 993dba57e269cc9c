//! The insides of the two largest crates keep their shape: the harness's
//! folders stack (each uses only the folders below it, in the order its
//! lib.rs lists them), and the run layer's modules form no loop (the report
//! types sit in `summary`, below the modules that make them and the viewer
//! that reads them). A use is a `crate::<part>` path; test code (`tests.rs`,
//! an inline `mod tests`) and comments are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The uses of each part by the others: part -> (part used -> where, the
/// first place).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

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

/// The top-level parts of a crate's `src`: each `<name>.rs` or `<name>/`
/// but lib.rs.
fn parts(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "lib.rs")
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

fn uses(src: &Path, names: &BTreeSet<String>) -> Graph {
    let mut graph = BTreeMap::new();
    for m in names {
        let mut files = Vec::new();
        let (dir, file) = (src.join(m), src.join(format!("{m}.rs")));
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

/// A loop through `from`, as `file:line uses b, ... uses from`, if any.
fn loop_through(graph: &Graph, from: &str) -> Option<String> {
    fn walk(
        graph: &Graph,
        at: &str,
        from: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for (next, place) in &graph[at] {
            path.push(format!("{place} uses {next}"));
            if next == from || (seen.insert(next.clone()) && walk(graph, next, from, path, seen)) {
                return true;
            }
            path.pop();
        }
        false
    }
    let mut path = Vec::new();
    walk(graph, from, from, &mut path, &mut BTreeSet::new()).then(|| path.join(", "))
}

fn src_of(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate)
        .join("src")
}

#[test]
fn the_harness_folders_each_use_only_those_below_it() {
    let src = src_of("harness");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let tower: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! - [`")?.split('`').next())
        .map(str::to_string)
        .collect();
    assert_eq!(
        tower,
        [
            "persist",
            "time",
            "environment",
            "inputs",
            "outcome",
            "io",
            "engine"
        ],
        "harness/src/lib.rs lists the folders bottom to top"
    );
    assert_eq!(
        parts(&src),
        tower.iter().cloned().collect(),
        "every folder listed"
    );
    let graph = uses(&src, &parts(&src));
    let rank = |p: &str| tower.iter().position(|t| t == p).unwrap();
    let upward: Vec<String> = graph
        .iter()
        .flat_map(|(part, used)| {
            used.iter()
                .filter(|(other, _)| rank(other) > rank(part))
                .map(move |(other, at)| format!("{at}: {part} uses {other}"))
        })
        .collect();
    assert!(
        upward.is_empty(),
        "uses of a folder above:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_module_of_the_run_layer_comes_back_to_itself() {
    let src = src_of("run");
    let names = parts(&src);
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
    let g: Graph = [
        ("a", "b", "a.rs:1"),
        ("b", "c", "b.rs:2"),
        ("c", "a", "c.rs:3"),
        ("d", "a", "d.rs:4"),
    ]
    .into_iter()
    .map(|(m, n, at)| (m.to_string(), [(n.to_string(), at.to_string())].into()))
    .collect();
    assert_eq!(
        loop_through(&g, "a").as_deref(),
        Some("a.rs:1 uses b, b.rs:2 uses c, c.rs:3 uses a")
    );
    assert_eq!(loop_through(&g, "d"), None);
}

/// Every Rust file below `dir`, test files included (a face's tests build
/// nothing either).
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    sources(dir, &mut out);
    out
}

#[test]
fn one_place_in_the_run_layer_and_the_faces_builds_an_engine() {
    // The run layer's `flight::prepare` builds every stepped flight's
    // engine (CLI, C ABI, Python, a Monte Carlo run, the integrator
    // study's flight), so a check added there reaches every face.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut builders = Vec::new();
    for dir in ["run/src", "capi/src", "python/src", "src"] {
        for f in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if !code.starts_with("//")
                    && (code.contains("Engine::with") || code.contains("Engine::new("))
                {
                    builders.push(format!(
                        "{}:{}",
                        f.strip_prefix(root).unwrap().display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert_eq!(builders.len(), 1, "{builders:?}");
    assert!(
        builders[0].starts_with("run/src/flight/mod.rs:"),
        "{builders:?}"
    );
}
