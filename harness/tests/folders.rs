//! The harness's folders stack: each uses (`crate::<folder>`) only the
//! folders below it in the order lib.rs lists them, so each can be read
//! knowing only those below. Test code (`tests.rs`, what follows
//! `#[cfg(test)]`) and comments are left out.

use std::path::Path;

/// Bottom to top, as lib.rs lists them.
const TOWER: [&str; 7] = [
    "persist",
    "time",
    "environment",
    "inputs",
    "outcome",
    "io",
    "engine",
];

fn sources(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            sources(&e.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().unwrap() != "tests.rs"
    {
        out.push(path.to_path_buf());
    }
}

/// (file:line, the folder used) for each use of another folder in `part`.
fn uses(src: &Path, part: &str) -> Vec<(String, &'static str)> {
    let mut files = Vec::new();
    let dir = src.join(part);
    let file = src.join(format!("{part}.rs"));
    sources(if dir.is_dir() { &dir } else { &file }, &mut files);
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
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
                if let Some(other) = TOWER.iter().find(|t| **t == name && **t != part) {
                    out.push((
                        format!("{}:{}", f.strip_prefix(src).unwrap().display(), i + 1),
                        *other,
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn each_folder_uses_only_the_folders_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let listed: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! - [`")?.split('`').next())
        .collect();
    assert_eq!(listed, TOWER, "lib.rs lists the folders bottom to top");
    let mut upward = Vec::new();
    for (rank, part) in TOWER.iter().enumerate() {
        for (at, other) in uses(&src, part) {
            if TOWER.iter().position(|t| *t == other).unwrap() > rank {
                upward.push(format!("{at}: {part} uses {other}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "uses of a folder above:\n{}",
        upward.join("\n")
    );
}
