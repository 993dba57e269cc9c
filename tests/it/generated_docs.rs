//! The committed scenario reference (docs/) is what the code generates:
//! `lockstep schema > docs/scenario.schema.json` and
//! `lockstep schema --markdown > docs/scenario-reference.md` after a change
//! to the format. Also: `lockstep specs`, and unknown keys listing the
//! valid ones.

use crate::common::*;

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");

fn committed(name: &str) -> String {
    std::fs::read_to_string(format!("{DOCS}/{name}")).unwrap()
}

#[test]
fn the_committed_schema_and_reference_are_current() {
    let r = lockstep(&["schema"]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout == committed("scenario.schema.json"),
        "docs/scenario.schema.json is stale: run `cargo run -- schema > docs/scenario.schema.json`"
    );
    let schema: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(schema["title"], "File");
    let r = lockstep(&["schema", "--markdown"]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout == committed("scenario-reference.md"),
        "docs/scenario-reference.md is stale: run `cargo run -- schema --markdown > docs/scenario-reference.md`"
    );
    // Every key of the example scenario appears in the reference.
    for key in [
        "duration_s",
        "rate_hz",
        "mean_ned_mps",
        "at_s",
        "action",
        "origin_lat_deg",
    ] {
        assert!(r.stdout.contains(&format!("| `{key}` |")), "{key}");
    }
}

#[test]
fn unknown_keys_list_the_valid_ones() {
    let r = lockstep(&["fly", "--set", "simulation.sed=3", "--set", "wind.sigma=1"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.ends_with(
            ": unknown key `simulation.sed` (valid in [simulation]: duration_s, engine, \
             integrator, seed, tick_us); unknown key `wind.sigma` (valid in [wind]: \
             mean_ned_mps, model, sigma_mps, tau_s, w20_mps)\n"
        ),
        "{r}"
    );
}

#[test]
fn specs_lists_and_prints_the_built_in_aircraft() {
    let r = lockstep(&["specs"]);
    assert_eq!(r.code(), 0, "{r}");
    let names: Vec<&str> = r
        .stdout
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["multirotor-base", "iris", "hexa", "octa"]);
    assert!(
        r.stdout
            .contains("\niris             Iris-class quad X, 1.5 kg"),
        "{r}"
    );
    let r = lockstep(&["specs", "hexa"]);
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(
        r.stdout.trim_end(),
        lockstep_plant::spec::BUILTIN_SPECS[2].1.trim_end()
    );
    let r = lockstep(&["specs", "octa", "--resolved"]);
    assert_eq!(r.code(), 0, "{r}");
    let spec: lockstep_plant::AircraftSpec =
        toml::from_str(&r.stdout).expect("the resolved spec is a complete spec");
    assert_eq!(spec, lockstep_plant::AircraftSpec::resolve("octa").unwrap());
    let r = lockstep(&["specs", "quad"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        "lockstep specs: `quad` is not a built-in aircraft (multirotor-base, iris, hexa, octa)\n"
    );
}
