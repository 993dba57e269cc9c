//! A fleet's lookahead: stretches of sync periods stepped between checks
//! when no pair can come near change no bit of the run (logs, encounters,
//! verdicts), and a vehicle pushed beyond what its spec allows makes its
//! stretch be redone, again to the same bits as the run checked at every
//! sync period: in one process and across a primary and its secondaries.

use std::path::{Path, PathBuf};

use crate::common::{BUNDLED, LOCKSTEP, TempDir, examples};
use lockstep_abi::Isolation;
use lockstep_fleet::run::log_path;
use lockstep_fleet::{Fleet, FleetScenario, FleetSummary};
use lockstep_harness::engine::RunOptions;
use serde_json::Value;

/// Two Iris 30 m apart take off over their pads; `b_events` are the
/// second one's own events.
fn pair(dir: &Path, fleet: &str, b_events: &str) -> PathBuf {
    let text = format!(
        r#"{head}[fleet]
{fleet}
[expect]
allow_crash = true
[[events]]
at_s = 0.5
action = "arm"
[[events]]
at_s = 1.0
action = "takeoff"
[[vehicles]]
name = "a"
spec = "iris"
[[vehicles]]
name = "b"
spec = "iris"
start_east_m = 30.0
{b_events}
"#,
        head = crate::common::fleet_head(9, 14.0)
    );
    let p = dir.join(format!("pair-{}.toml", fleet.len() + b_events.len()));
    std::fs::write(&p, text).unwrap();
    p
}

fn fly(scenario: &Path, out: &Path) -> (FleetScenario, FleetSummary) {
    let fs = FleetScenario::load(scenario).unwrap();
    let mut fleet = Fleet::new(&fs, &crate::fleet::options(out, 2)).unwrap();
    let s = fleet.run().unwrap();
    (fs, s)
}

/// The two runs wrote the same logs and found the same encounters and
/// verdicts.
fn same_run(fs: &FleetScenario, (da, a): (&Path, &FleetSummary), (db, b): (&Path, &FleetSummary)) {
    for v in &fs.vehicles {
        let (la, lb) = (log_path(da, &v.name), log_path(db, &v.name));
        assert!(
            std::fs::read(&la).unwrap() == std::fs::read(&lb).unwrap(),
            "{}'s logs differ",
            v.name
        );
    }
    let (fa, fb) = (&a.fleet, &b.fleet);
    assert_eq!(fa.encounters, fb.encounters);
    assert_eq!(fa.closest, fb.closest);
    assert_eq!(
        (fa.collisions, fa.syncs, fa.end),
        (fb.collisions, fb.syncs, fb.end)
    );
    assert_eq!(fa.vehicles, fb.vehicles);
    for ((na, _), (sa, sb)) in fa.vehicles.iter().zip(a.summaries.iter().zip(&b.summaries)) {
        assert_eq!(sa.verdict, sb.verdict, "{na}");
        assert_eq!(sa.timeline, sb.timeline, "{na}");
    }
}

#[test]
fn a_push_beyond_the_spec_redoes_the_stretch_and_changes_no_bit() {
    let dir = TempDir::new("lookahead-push");
    // At 6 s, b is pushed west at 1000 N (far beyond the most its rotors,
    // gravity and drag can do): it flies into a.
    let push = "[[vehicles.events]]\nat_s = 6.0\naction = \"push\"\nforce_ned_n = [0.0, -1000.0, 0.0]\n\
                [[vehicles.events]]\nat_s = 6.3\naction = \"push\"\nforce_ned_n = [0.0, 0.0, 0.0]\n";
    let (on, off) = (dir.join("on"), dir.join("off"));
    let (fs, ahead) = fly(&pair(dir.path(), "", push), &on);
    let (_, plain) = fly(&pair(dir.path(), "lookahead_max_s = 0", push), &off);
    same_run(&fs, (&on, &ahead), (&off, &plain));
    let (ahead, plain) = (&ahead.fleet, &plain.fleet);
    assert_eq!(plain.collisions, 1, "{:?}", plain.encounters);
    // The plain run met at every sync period; the lookahead in far fewer
    // rounds, one stretch of which was redone.
    assert_eq!(plain.lookahead.rounds, plain.syncs);
    assert_eq!(plain.lookahead.redone, 0);
    assert_eq!(
        plain.lookahead.off.as_deref(),
        Some("lookahead_max_s is under two sync periods")
    );
    assert!(ahead.lookahead.redone >= 1, "{:?}", ahead.lookahead);
    assert!(
        ahead.lookahead.rounds * 3 < ahead.syncs,
        "{:?} for {} syncs",
        ahead.lookahead,
        ahead.syncs
    );
}

#[test]
fn secondaries_redo_a_pushed_stretch_to_the_plain_runs_bits() {
    let dir = TempDir::new("lookahead-push-distributed");
    let push = "[[vehicles.events]]\nat_s = 6.0\naction = \"push\"\nforce_ned_n = [0.0, -1000.0, 0.0]\n\
                [[vehicles.events]]\nat_s = 6.3\naction = \"push\"\nforce_ned_n = [0.0, 0.0, 0.0]\n";
    // Two levels, a vehicle in each: the pair's secondaries differ.
    let levels =
        "level_grid = { north_m = [-50.0, 50.0], east_m = [-20.0, 50.0], rows = 1, columns = 2 }";
    let off = dir.join("off");
    let (fs, plain) = fly(&pair(dir.path(), "lookahead_max_s = 0", push), &off);
    let ahead = FleetScenario::load(pair(dir.path(), levels, push)).unwrap();
    let many = dir.join("many");
    let out = crate::distributed_local::on_secondaries(&ahead, 2, &many);
    for v in &fs.vehicles {
        let (a, b) = (log_path(&off, &v.name), log_path(&many, &v.name));
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{}'s logs differ",
            v.name
        );
    }
    let (out, plain) = (&out.fleet, &plain.fleet);
    assert_eq!(out.encounters, plain.encounters);
    assert_eq!(out.closest, plain.closest);
    assert_eq!((out.collisions, out.syncs), (1, plain.syncs));
    assert!(out.lookahead.redone >= 1, "{:?}", out.lookahead);
    assert!(out.lookahead.rounds * 3 < out.syncs, "{:?}", out.lookahead);
}

#[test]
fn pairs_that_come_close_change_no_bit_and_the_report_says_what_the_lookahead_did() {
    // Four lanes of the swarm, one of them the pair that ends within
    // proximity: through the command line, with and without lookahead.
    let dir = TempDir::new("lookahead-lanes");
    let swarm = std::fs::read_to_string(examples().join("scenarios/swarm.toml")).unwrap();
    let missions = examples().join("missions");
    let mut text = swarm.replace("../missions", &missions.display().to_string());
    for lane in 0..14 {
        let entry = format!("[[vehicles]]\nname = \"lane{lane:02}\"");
        let start = text.find(&entry).unwrap();
        let end = text[start + 1..].find("[[vehicles]]").unwrap() + start + 1;
        if ![0, 1].contains(&lane) {
            text.replace_range(start..end, "");
        }
    }
    let scenario = dir.join("lanes.toml");
    std::fs::write(&scenario, text).unwrap();
    let run = |out: &str, extra: &[&str]| -> Value {
        let o = std::process::Command::new(LOCKSTEP)
            .args(["fly", "--json", "--isolation", "in-process", "--out"])
            .arg(dir.join(out))
            .arg(&scenario)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let on = run("on", &[]);
    let off = run("off", &["--set", "fleet.lookahead_max_s=0"]);
    for name in ["lane00", "lane01", "lane14", "lane15"] {
        let log = |d: &str| std::fs::read(dir.join(d).join(format!("{name}.csv"))).unwrap();
        assert!(log("on") == log("off"), "{name}'s logs differ");
    }
    for k in ["encounters", "closest", "collisions"] {
        assert_eq!(on[k], off[k], "{k}");
    }
    assert!(!on["encounters"].as_array().unwrap().is_empty());
    let (la, lb) = (&on["lookahead"], &off["lookahead"]);
    assert_eq!(la["syncs"], 15_001);
    assert_eq!(lb["syncs"], 15_001);
    assert_eq!(lb["rounds"], 15_001);
    assert_eq!(lb["off"], "lookahead_max_s is under two sync periods");
    assert_eq!(la["redone"], 0);
    assert!(la.get("off").is_none(), "{la}");
    assert!(la["rounds"].as_u64().unwrap() * 5 < 15_001, "{la}");
}

/// How a run ended (the lookahead's `off`, or the error with its digits
/// taken out: process ids differ), and the logs it wrote.
type Ended = (Result<String, String>, Vec<Vec<u8>>);

/// The pair with vehicle b flown by the broken fixture `case` (isolated),
/// flown with the lookahead on and off.
fn with_broken_b(case: &str) -> [Ended; 2] {
    let dir = TempDir::new(&format!("lookahead-{case}"));
    let lib = lockstep_c_examples::broken(case);
    let own = format!("autopilot = \"{}\"\n", lib.display());
    [("on", ""), ("off", "lookahead_max_s = 0")].map(|(name, fleet)| {
        let fs = FleetScenario::load(pair(dir.path(), fleet, &own)).unwrap();
        let out = dir.join(name);
        let options = RunOptions {
            autopilot: PathBuf::from(BUNDLED),
            log_dir: Some(out.clone()),
            isolation: Isolation::Process(lockstep_abi::IsolationOptions::default()),
            threads: Some(2),
        };
        let mut fleet = Fleet::new(&fs, &options).unwrap();
        let ended = fleet
            .run()
            .map(|s| format!("{:?}", s.fleet.lookahead.off))
            .map_err(|e| e.to_string().replace(|c: char| c.is_ascii_digit(), "#"));
        let logs = ["a", "b"].map(|v| std::fs::read(log_path(&out, v)).unwrap());
        (ended, logs.to_vec())
    })
}

#[test]
fn a_vehicle_failing_inside_a_stretch_fails_where_the_plain_run_does() {
    // b's autopilot crashes at 5 s; the lookahead has stepped past it.
    let [(on, on_logs), (off, off_logs)] = with_broken_b("step_segv_migrates");
    assert!(on.is_err(), "{on:?}");
    assert_eq!(on, off);
    assert!(on_logs == off_logs, "the logs differ");
}

#[test]
fn an_autopilot_refusing_snapshots_is_flown_plain_and_the_report_says_why() {
    // b's snapshot is past the bound: the fleet checks every period.
    let [(on, on_logs), (off, off_logs)] = with_broken_b("snapshot_oversize");
    let why = on.clone().unwrap();
    assert!(
        why.starts_with("Some(\"vehicle `b` gave no snapshot: "),
        "{why}"
    );
    assert_eq!(
        off,
        Ok("Some(\"lookahead_max_s is under two sync periods\")".into())
    );
    assert!(on_logs == off_logs, "the logs differ");
}
