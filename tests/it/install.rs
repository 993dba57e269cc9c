//! A relocated binary (as `cargo install` leaves it, far from the source
//! tree) flies its default scenario with the bundled autopilot, which it
//! writes into its cache; shell completions. The binary is copied alone:
//! no default path depends on a file that `cargo run` does not build (the
//! isolated autopilot's host and Monte Carlo's workers are the binary
//! itself).

use std::process::Command;

use crate::common::*;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Copies `lockstep`, and nothing else, into `dir/bin`.
fn install(dir: &TempDir) -> std::path::PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(LOCKSTEP, bin.join("lockstep")).unwrap();
    bin.join("lockstep")
}

#[test]
fn a_relocated_binary_flies_its_default_scenario_from_its_cache() {
    let dir = TempDir::new("install");
    let lockstep = install(&dir);
    let cache = dir.join("cache");
    let fly = || {
        ran(Command::new(&lockstep)
            .args(["fly", "--duration", "5", "--json", "--out", "run"])
            .current_dir(dir.path())
            .env("LOCKSTEP_IGNORE_BUILD_TREE", "1")
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("LOCKSTEP_AUTOPILOT_HOST"))
    };
    let r = fly();
    assert_eq!(r.code(), 0, "{r}");
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let scenario = std::path::PathBuf::from(j["scenario"].as_str().unwrap());
    let autopilot = std::path::PathBuf::from(j["autopilot"].as_str().unwrap());
    let bundle = scenario.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(bundle.starts_with(cache.join("lockstep")), "{bundle:?}");
    assert_eq!(autopilot, bundle.join("liblockstep_autopilot.so"));
    assert_eq!(j["isolated"], true, "the binary is its own host");
    assert_eq!(j["outcome"], "completed");
    // Everything `--out` writes, with nothing but the binary.
    for f in [
        "log.csv",
        "log.csv.json",
        "flight.png",
        "flight.svg",
        "flight.html",
        "summary.json",
    ] {
        assert!(dir.join("run").join(f).is_file(), "{f}");
    }
    // The bundle holds the very files of the source tree.
    assert_eq!(
        std::fs::read(&scenario).unwrap(),
        std::fs::read(format!("{REPO}/examples/scenarios/square.toml")).unwrap()
    );
    assert_eq!(
        std::fs::read(bundle.join("missions/square.waypoints")).unwrap(),
        std::fs::read(format!("{REPO}/examples/missions/square.waypoints")).unwrap()
    );
    assert_eq!(
        std::fs::read(&autopilot).unwrap(),
        std::fs::read(BUNDLED).unwrap()
    );
    // Every example is in the bundle, and the relocated binary flies one
    // and lists and copies them all.
    for f in [
        "scenarios/hover.toml",
        "scenarios/swarm.toml",
        "missions/swarm/lane_07.waypoints",
        "cosim/slung_load.toml",
    ] {
        assert_eq!(
            std::fs::read(bundle.join(f)).unwrap(),
            std::fs::read(format!("{REPO}/examples/{f}")).unwrap(),
            "{f}"
        );
    }
    let r = ran(Command::new(&lockstep)
        .args(["fly", "--duration", "3", "-q"])
        .arg(bundle.join("scenarios/hover.toml"))
        .env("LOCKSTEP_IGNORE_BUILD_TREE", "1")
        .env("XDG_CACHE_HOME", &cache));
    assert!(r.code() == 0 || r.code() == 3, "{r}");
    let r = ran(Command::new(&lockstep).arg("examples"));
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout.contains(
            "scenarios/gust.toml                Iris, hover at 10 m, 6 m/s gust at 20 s\n"
        ),
        "{r}"
    );
    let copy = dir.join("mine");
    let r = ran(Command::new(&lockstep)
        .args(["examples", "--copy"])
        .arg(&copy));
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(
        std::fs::read(copy.join("missions/boulder.plan")).unwrap(),
        std::fs::read(format!("{REPO}/examples/missions/boulder.plan")).unwrap()
    );
    std::fs::write(copy.join("scenarios/hover.toml"), "mine").unwrap();
    let r = ran(Command::new(&lockstep)
        .args(["examples", "--copy"])
        .arg(&copy));
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep examples: {} exists with other contents: not overwritten (copy to an empty directory)\n",
            copy.join("scenarios/hover.toml").display()
        )
    );
    // A damaged cached library is written again, not loaded.
    std::fs::write(&autopilot, b"not a library").unwrap();
    let again = fly();
    assert_eq!(again.code(), 0, "{again}");
    assert_eq!(
        std::fs::read(&autopilot).unwrap(),
        std::fs::read(BUNDLED).unwrap()
    );
    // check-lib's default is the bundled library too.
    let r = ran(Command::new(&lockstep)
        .arg("check-lib")
        .env("LOCKSTEP_IGNORE_BUILD_TREE", "1")
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("LOCKSTEP_AUTOPILOT_HOST"));
    assert_eq!(r.code(), 0, "{r}");
    assert!(r.stdout.contains(autopilot.to_str().unwrap()), "{r}");
    // A Monte Carlo batch: its workers are the binary too.
    let r = ran(Command::new(&lockstep)
        .args([
            "montecarlo",
            "--runs",
            "2",
            "--jobs",
            "2",
            "--workers",
            "processes",
        ])
        .args(["-q", "--out", "mc"])
        .arg(bundle.join("scenarios/montecarlo.toml"))
        .current_dir(dir.path())
        .env("LOCKSTEP_IGNORE_BUILD_TREE", "1")
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("LOCKSTEP_AUTOPILOT_HOST"));
    assert!(r.code() == 0 || r.code() == 3, "{r}");
    let runs = std::fs::read_to_string(dir.join("mc/runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 3, "{runs}");
}

#[test]
fn the_hidden_serve_mode_is_not_for_people() {
    let r = lockstep(&["--serve"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        "lockstep: `--serve` is how the harness starts itself to run an autopilot library in \
         isolation; it is not run by hand\n"
    );
    // Not among the commands a person is shown.
    let help = lockstep(&["--help"]);
    assert!(!help.stdout.contains("--serve"), "{help}");
}

#[test]
fn completions_cover_the_commands() {
    let r = lockstep(&["completions", "bash"]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(r.stdout.starts_with("_lockstep() {"), "{}", &r.stdout[..80]);
    for verb in ["fly", "replay", "check-lib", "schema", "specs"] {
        assert!(r.stdout.contains(verb), "{verb}");
    }
    let r = lockstep(&["completions", "zsh"]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout.starts_with("#compdef lockstep"),
        "{}",
        &r.stdout[..40]
    );
    let r = lockstep(&["completions", "tcsh"]);
    assert_eq!(r.code(), 2, "{r}");
}

/// Participants in processes of their own (`cosim --process`) are the
/// binary too, each hosting its vehicle's autopilot isolated (the default):
/// a relocated binary alone runs them.
#[cfg(feature = "distributed")]
#[test]
fn a_relocated_binary_serves_its_own_participants_and_their_autopilots() {
    let dir = TempDir::new("install-cosim");
    let lockstep = install(&dir);
    let src = examples().join("cosim");
    let text = std::fs::read_to_string(src.join("radio_swarm.toml"))
        .unwrap()
        .replacen("duration_s = 45.0", "duration_s = 3.0", 1);
    std::fs::copy(src.join("vehicle.toml"), dir.join("vehicle.toml")).unwrap();
    std::fs::create_dir_all(dir.join("missions")).unwrap();
    for e in std::fs::read_dir(src.join("missions")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join("missions").join(e.file_name())).unwrap();
    }
    std::fs::write(dir.join("swarm.toml"), text).unwrap();
    let r = ran(Command::new(&lockstep)
        .args([
            "cosim",
            "swarm.toml",
            "--process",
            "bravo",
            "-q",
            "-o",
            "out",
        ])
        .args(["--network-lease", "1"])
        .current_dir(dir.path())
        .env("LOCKSTEP_IGNORE_BUILD_TREE", "1")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("LOCKSTEP_AUTOPILOT_HOST"));
    assert_eq!(r.code(), 0, "{r}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["reached_us"], 3_000_000, "{summary}");
    assert_eq!(summary["error"], serde_json::Value::Null, "{summary}");
    // bravo's log is written by its own process.
    assert!(dir.join("out/bravo.csv").is_file());
}
