use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::*;

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct File {
    name: String,
    #[serde(default)]
    body: Option<Body>,
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Body {
    mass_kg: f64,
    #[serde(default)]
    inertia: BTreeMap<String, f64>,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Part {
    id: u32,
}

fn read_file(text: &str) -> Result<File, ConfigError> {
    let source = Source::new("f.toml", text);
    strict(&source, parse("f.toml", text)?)
}

#[test]
fn every_unknown_key_is_named_where_it_stands_with_the_valid_keys() {
    let e = read_file(
        "name = \"a\"\nnmae = 1\n[body]\nmass_kg = 1.0\nmas = 2\n[[parts]]\nid = 1\nide = 2\n",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:2:1: unknown key `nmae` (valid at the top level: body, name, parts); \
         5:1: unknown key `body.mas` (valid in [body]: inertia, mass_kg); \
         8:1: unknown key `parts.0.ide` (valid in [parts.0]: id)"
    );
}

#[test]
fn an_ill_typed_value_names_its_key_path_and_position() {
    let e = read_file("name = \"a\"\n[body]\nmass_kg = \"heavy\"\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:3:1: key `body.mass_kg`: invalid type: string \"heavy\", expected f64"
    );
    assert_eq!(e.key(), Some("body.mass_kg"));
    let e = read_file("[body]\nmass_kg = 1.0\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml: key `(top level)`: missing field `name`"
    );
}

#[test]
fn a_syntax_error_has_its_position_and_the_first_line_of_the_reason() {
    let e = parse("f.toml", "a = 1\nb = \"x\n").unwrap_err();
    let Problem::Syntax { at, .. } = &e.problem else {
        panic!("{e:?}")
    };
    assert_eq!(at.map(|p| p.line), Some(2));
    assert!(e.to_string().starts_with("f.toml:2:"), "{e}");
    assert!(!e.to_string().contains('\n'), "{e}");
}

#[test]
fn overridden_keys_are_not_looked_for_in_the_text() {
    let mut source = Source::new(
        "f.toml (with --set body.mass_kg=-1)",
        "[body]\nmass_kg = 1.0\n",
    );
    source.unlocated.push("body.mass_kg".into());
    let e = ConfigError::invalid(&source, "body.mass_kg", "must be positive");
    assert_eq!(
        e.to_string(),
        "f.toml (with --set body.mass_kg=-1): key `body.mass_kg`: must be positive"
    );
    let e = ConfigError::invalid(&source, "body", "is odd");
    assert_eq!(
        e.to_string(),
        "f.toml (with --set body.mass_kg=-1): key `body`: is odd"
    );
    source.unlocated.clear();
    let e = ConfigError::invalid(&source, "body", "is odd");
    assert_eq!(
        e.to_string(),
        "f.toml (with --set body.mass_kg=-1):1:2: key `body`: is odd"
    );
}

#[test]
fn reads_are_bounded_and_name_the_kind_of_file() {
    let dir = std::env::temp_dir().join(format!("lockstep-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.toml");
    let e = read(&missing, "scenario").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot read scenario {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
    let big = dir.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(MAX_BYTES + 1).unwrap();
    let e = read(&big, "system").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot read system {}: {} bytes; a system file may hold at most {MAX_BYTES}",
            big.display(),
            MAX_BYTES + 1
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_is_not_a_regular_file_is_refused_before_it_is_read() {
    // /dev/zero never ends and reports a size of 0: it was read until
    // memory ran out.
    let e = read(Path::new("/dev/zero"), "scenario").unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot read scenario /dev/zero: a character device, not a regular file: \
         a scenario file must be one"
    );
    let dir = std::env::temp_dir().join(format!("lockstep-config-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A FIFO with no writer: opening it to read would wait for one.
    let fifo = dir.join("fleet.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = read(&fifo, "fleet").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot read fleet {}: a FIFO, not a regular file: a fleet file must be one",
            fifo.display()
        )
    );
    let e = read(&dir, "spec").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot read spec {}: a directory, not a regular file: a spec file must be one",
            dir.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_longer_than_it_says_is_read_to_its_bound_only() {
    // procfs files are regular and report a size of 0, as a file growing
    // while it is read would report less than it holds.
    let text = read_text(Path::new("/proc/self/status"), "mission", 1 << 20).unwrap();
    assert!(text.len() > 64, "{text}");
    let e = read_text(Path::new("/proc/self/status"), "mission", 64).unwrap_err();
    assert_eq!(e, "more than 64 bytes; a mission file may hold at most 64");
}

#[test]
fn text_that_is_not_utf8_names_the_offset() {
    let path = std::env::temp_dir().join(format!("lockstep-config-latin1-{}", std::process::id()));
    std::fs::write(&path, b"name = \"caf\xe9\"\n").unwrap();
    let e = read_text(&path, "system", MAX_BYTES).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(e, "not UTF-8 text (an invalid byte at offset 11)");
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Kinds {
    items: Vec<Item>,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Item {
    kind: String,
    #[serde(default)]
    a: Option<f64>,
    #[serde(default)]
    b: Option<f64>,
}

#[test]
fn an_unknown_key_of_a_kinded_entry_is_told_its_kinds_keys() {
    let text = "[[items]]\nkind = \"x\"\nc = 1\n[[items]]\nkind = \"y\"\nd = 1\n\
                [[items]]\nkind = \"z\"\ne = 1\n";
    let keys_of = |kind: &str| match kind {
        "x" => Some(vec!["kind", "a"]),
        "y" => Some(vec!["kind", "b"]),
        _ => None,
    };
    let e = strict_kinded::<Kinds>(
        &Source::new("k.toml", text),
        parse("k.toml", text).unwrap(),
        &[Kinded {
            section: "items",
            keys_of: &keys_of,
        }],
    )
    .unwrap_err();
    // A kind's keys sorted; a kind not known keeps the schema's keys.
    assert_eq!(
        e.to_string(),
        "k.toml:3:1: unknown key `items.0.c` (valid in [items.0]: a, kind); \
         6:1: unknown key `items.1.d` (valid in [items.1]: b, kind); \
         9:1: unknown key `items.2.e` (valid in [items.2]: a, b, kind)"
    );
}
