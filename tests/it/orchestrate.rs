//! The delivery fleet under the orchestrator: drones land where orders
//! are, keep clear of the no-fly zones, get fresh batteries at the station;
//! the models keep their roles (produce-only, steady state, woken only by
//! events, consume-only); runs equal on 1 and 2 threads; the command line
//! and its refusals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::common::{BUNDLED, LOCKSTEP, TempDir};
use lockstep_abi::Isolation;
use lockstep_delivery::{FleetFile, Report, make_model};
use lockstep_harness::engine::RunOptions;
use lockstep_orchestrator::{DataMask, Key, Model, Moment, Outcome, Update};
use serde_json::Value;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/orchestrate")
        .join(name)
}

/// The example fleet with `edits` (text replacements, each made once) as
/// `dir/fleet.toml`, its vehicle's scenario beside it; the file's path.
pub(crate) fn fleet_file(dir: &TempDir, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(example("delivery.toml")).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    std::fs::copy(example("vehicle.toml"), dir.join("vehicle.toml")).unwrap();
    let path = dir.join("fleet.toml");
    std::fs::write(&path, &text).unwrap();
    path
}

/// [`fleet_file`], loaded.
fn fleet(dir: &TempDir, edits: &[(&str, &str)]) -> FleetFile {
    FleetFile::load(fleet_file(dir, edits)).unwrap()
}

fn options() -> RunOptions {
    RunOptions::new(BUNDLED, Isolation::InProcess)
}

type Seen = Arc<Mutex<Vec<(u64, Key, Value)>>>;

/// Records everything it subscribes to (time µs, key, value).
struct Probe {
    mask: DataMask,
    seen: Seen,
}

impl Model for Probe {
    fn mask(&self) -> DataMask {
        self.mask.clone()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        let mut s = self.seen.lock().unwrap();
        for u in inbox {
            for (k, v) in &u.data {
                s.push((at.micros(), k.clone(), v.clone()));
            }
        }
        Ok(Outcome::wake_at(None))
    }
}

fn run(ff: &FleetFile, threads: usize, probe: Option<&Seen>) -> Report {
    let mut models: Vec<(String, Box<dyn Model>)> = ff
        .models
        .iter()
        .map(|d| (d.name.clone(), make_model(ff, d, &options()).unwrap()))
        .collect();
    if let Some(seen) = probe {
        models.push((
            "probe".into(),
            Box::new(Probe {
                mask: DataMask::new(
                    &[],
                    &["orders/*/request", "vehicles/*/event", "station/*/*"],
                )
                .unwrap(),
                seen: seen.clone(),
            }),
        ));
    }
    lockstep_delivery::run(ff, threads, models, true, None).unwrap()
}

fn result<'a>(r: &'a Report, model: &str) -> &'a Value {
    &r.models.iter().find(|(n, _)| n == model).unwrap().1
}

/// A shorter fleet that swaps often.
fn short(dir: &TempDir) -> FleetFile {
    fleet(
        dir,
        &[
            ("duration_s = 900.0", "duration_s = 420.0"),
            ("swap_below_soc = 0.8", "swap_below_soc = 0.9"),
        ],
    )
}

#[test]
fn drones_land_at_the_orders_keep_clear_of_the_zones_and_get_full_batteries() {
    let dir = TempDir::new("orchestrate-fleet");
    let ff = short(&dir);
    let seen: Seen = Arc::default();
    let r = run(&ff, 2, Some(&seen));
    assert_eq!(r.error, None);
    let kpi = result(&r, "kpi");
    assert!(kpi["delivered"].as_u64().unwrap() >= 3, "{kpi}");
    assert_eq!(kpi["crashes"], serde_json::json!([]));
    assert_eq!(kpi["diverted"], 0);
    assert_eq!(kpi["zone_incursions"], 0);
    // The route keeps the 10 m margin; the drone's cross-track error eats
    // some of it, never all.
    let clearance = kpi["min_zone_clearance_m"].as_f64().unwrap();
    assert!(clearance > 3.0, "{clearance}");

    let seen = seen.lock().unwrap();
    let orders: BTreeMap<String, [f64; 2]> = seen
        .iter()
        .filter(|(_, k, _)| k.dataset == "orders")
        .map(|(_, _, v)| {
            (
                v["id"].as_str().unwrap().to_string(),
                [
                    v["north_m"].as_f64().unwrap(),
                    v["east_m"].as_f64().unwrap(),
                ],
            )
        })
        .collect();
    // Every delivery landed within 5 m of its order's drop-off, measured
    // here from the plant's position, not taken from the vehicle's word.
    let mut landed = 0;
    for (_, k, v) in seen.iter().filter(|(_, k, _)| k.attribute == "event") {
        if v["kind"] == "landed" && v["leg"] == "out" {
            let o = orders[v["order"].as_str().unwrap()];
            let d =
                (v["north_m"].as_f64().unwrap() - o[0]).hypot(v["east_m"].as_f64().unwrap() - o[1]);
            assert!(d < 5.0, "{} landed {d} m from {o:?}", k.group);
            landed += 1;
        }
    }
    assert_eq!(landed, kpi["delivered"].as_u64().unwrap());
    // A swap: the station says so, and the drone's next word is `ready`
    // with a full battery, in the same timestamp.
    let swaps: Vec<&(u64, Key, Value)> = seen
        .iter()
        .filter(|(_, k, _)| k.attribute == "swapped")
        .collect();
    assert!(!swaps.is_empty());
    for (t, _, v) in swaps {
        let vehicle = v["vehicle"].as_str().unwrap();
        let ready = seen
            .iter()
            .find(|(tr, k, e)| tr == t && k.group == vehicle && e["kind"] == "ready")
            .unwrap_or_else(|| panic!("{vehicle} not ready after its swap at {t} us"));
        assert_eq!(ready.2["soc"], 1.0);
    }
}

#[test]
fn each_model_keeps_its_role_and_threads_change_nothing() {
    let dir = TempDir::new("orchestrate-roles");
    let ff = short(&dir);
    let one = run(&ff, 1, None);
    let two = run(&ff, 2, None);
    assert_eq!(one.trace, two.trace);
    assert_eq!(one.models, two.models);
    assert_eq!(one.stats, two.stats);
    let calls = |m: &'static str| one.trace.iter().filter(move |c| c.model == m);
    // Steady state: the zone map is never called after its start.
    assert_eq!(calls("airspace").count(), 0);
    // The dispatcher only wakes on data, and does.
    assert!(calls("dispatcher").count() > 5);
    assert!(calls("dispatcher").all(|c| !c.woken && c.inbox > 0));
    // Produce-only and consume-only.
    assert!(calls("orders").all(|c| c.woken && c.inbox == 0));
    assert!(calls("kpi").all(|c| c.produced.is_empty() && !c.woken));
    // Vehicles wake at their telemetry cadence (1 s = 10 timestamps).
    assert!(
        calls("drone1")
            .filter(|c| c.woken)
            .all(|c| c.timestamp % 10 == 0 || c.produced.iter().any(|p| p.ends_with("/event")))
    );
    // A vehicle's landing reaches the dispatcher and comes back as a
    // mission within the same timestamp: cascades of at least 3 passes.
    assert!(one.stats.max_passes >= 3, "{:?}", one.stats);
}

#[test]
fn the_example_runs_from_the_command_line() {
    let dir = TempDir::new("orchestrate-cli");
    let out = dir.join("out");
    let o = std::process::Command::new(LOCKSTEP)
        .args([
            "orchestrate",
            "--isolation",
            "in-process",
            "--json",
            "--trace",
            "-o",
        ])
        .arg(&out)
        .arg(example("delivery.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["error"], Value::Null);
    assert_eq!(s["last_timestamp"], 9000);
    assert!(s["models"]["kpi"]["delivered"].as_u64().unwrap() >= 8);
    assert_eq!(s["models"]["kpi"]["zone_incursions"], 0);
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(on_disk["models"], s["models"]);
    let trace = std::fs::read_to_string(out.join("trace.jsonl")).unwrap();
    assert_eq!(
        trace.lines().count() as u64,
        s["stats"]["calls"].as_u64().unwrap()
    );
    // Each drone's flight log (the vehicle scenario logs at 10 Hz): every
    // row of the 900 s, its sidecar complete, its last row where the drone
    // said it ended, to the last bit.
    for d in ["drone1", "drone2", "drone3"] {
        let log = out.join(format!("{d}.csv"));
        assert_eq!(s["models"][d]["log"], log.display().to_string());
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(log.with_extension("csv.json")).unwrap())
                .unwrap();
        assert_eq!(meta["complete"], true);
        assert_eq!(meta["rows"], 9001);
        assert_eq!(meta["last_time_us"], 900_000_000u64);
        let mut r = csv::Reader::from_path(&log).unwrap();
        let header = r.headers().unwrap().clone();
        let last = r.records().last().unwrap().unwrap();
        let col = |name: &str| -> f64 {
            let i = header.iter().position(|h| h == name).unwrap();
            last[i].parse().unwrap()
        };
        let said = &s["models"][d]["position_ned_m"];
        for (i, c) in ["x_m", "y_m", "z_m"].iter().enumerate() {
            assert_eq!(
                col(c).to_bits(),
                said[i].as_f64().unwrap().to_bits(),
                "{d} {c}"
            );
        }
    }
    // The plot and the viewer's page of the three drones; `lockstep view`
    // of the directory writes the same page.
    let page = out.join("flight.html");
    assert_eq!(s["viewer"], page.display().to_string());
    assert_eq!(s["plots"][0], out.join("fleet.png").display().to_string());
    let html = std::fs::read(&page).unwrap();
    let again = dir.join("again.html");
    let v = std::process::Command::new(LOCKSTEP)
        .arg("view")
        .arg(&out)
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    assert!(
        html == std::fs::read(&again).unwrap(),
        "view writes another page"
    );
    let text = String::from_utf8_lossy(&html);
    for d in ["drone1", "drone2", "drone3"] {
        assert!(
            text.contains(&format!("\"name\":\"{d}\"")),
            "{d} not on the page"
        );
    }
}

#[test]
fn a_log_that_would_overwrite_an_input_is_refused() {
    // The fleet file where drone1's log would go: refused before the run.
    let dir = TempDir::new("orchestrate-log-clash");
    let f = fleet_file(&dir, &[]);
    let clash = dir.join("drone1.csv");
    std::fs::copy(&f, &clash).unwrap();
    let o = std::process::Command::new(LOCKSTEP)
        .args(["orchestrate", "--isolation", "in-process", "-o"])
        .arg(dir.path())
        .arg(&clash)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        format!(
            "lockstep orchestrate: model `drone1`'s log {} is the fleet file; refusing to overwrite an input",
            clash.display()
        )
    );
    assert_eq!(std::fs::read(&clash).unwrap(), std::fs::read(&f).unwrap());
}

fn refused(args: &[&str]) -> String {
    let o = std::process::Command::new(LOCKSTEP)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    String::from_utf8_lossy(&o.stderr).trim().to_string()
}

#[test]
fn the_command_line_refuses_what_it_cannot_run() {
    let f = example("delivery.toml");
    let f = f.to_str().unwrap();
    // An out directory nothing can be written in (sysfs: even for root) is
    // refused at once: it was found after the whole run, the summary lost.
    assert_eq!(
        refused(&["orchestrate", f, "-o", "/sys/kernel"]),
        "lockstep orchestrate: --out /sys/kernel: cannot write in the directory: Permission denied (os error 13)"
    );
    assert_eq!(
        refused(&["orchestrate", f, "--process", "nosuch", "-o", "/tmp/x"]),
        format!(
            "lockstep orchestrate: {f} has no model `nosuch` (its models: orders, airspace, dispatcher, station, kpi, drone1, drone2, drone3)"
        )
    );
    #[cfg(not(feature = "distributed"))]
    assert_eq!(
        refused(&["orchestrate", f, "--process", "kpi", "-o", "/tmp/x"]),
        "lockstep orchestrate: --process/--remote: this lockstep was built without distributed runs and remote processes (zenoh); build it with `cargo build --release --features distributed`"
    );
    #[cfg(not(feature = "distributed"))]
    assert_eq!(
        refused(&[
            "cosim",
            crate::common::examples()
                .join("cosim/radio_swarm.toml")
                .to_str()
                .unwrap(),
            "--process",
            "alpha",
            "-o",
            "/tmp/x"
        ]),
        "lockstep cosim: --process/--remote: this lockstep was built without distributed runs and remote processes (zenoh); build it with `cargo build --release --features distributed`"
    );
    assert!(
        refused(&["cosim", crate::common::examples().join("cosim/radio_swarm.toml").to_str().unwrap(), "--remote", "zulu", "-o", "/tmp/x"])
            .ends_with("radio_swarm.toml has no participant `zulu` (its participants: alpha, bravo, charlie, delta)")
    );
    let dir = TempDir::new("orchestrate-refusals");
    // A system that does not fit together names its file.
    let wired = dir.join("wired.toml");
    std::fs::write(
        &wired,
        "schema_version = 1\n[cosim]\nstep_us = 4000\nduration_s = 0.04\nrecord = [\"load.nothing\"]\n\
         [[participants]]\nname = \"load\"\nkind = \"fmu\"\npath = \"bundled:slung_load\"\n",
    )
    .unwrap();
    let said = refused(&[
        "cosim",
        wired.to_str().unwrap(),
        "-o",
        dir.join("w").to_str().unwrap(),
    ]);
    assert!(
        said.starts_with(&format!(
            "lockstep cosim: {}: cosim.record: no output `load.nothing` (outputs: load.force_north_n, ",
            wired.display()
        )),
        "{said}"
    );
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "schema_version = 1\n[timeline]\nreference_unix_s = 0.0\ntime_scale_us = 100000\nduration_s = 1.05\n[[models]]\nname = \"k\"\nkind = \"kpi\"\n").unwrap();
    assert_eq!(
        refused(&["orchestrate", bad.to_str().unwrap()]),
        format!(
            "lockstep orchestrate: {}:5:1: key `timeline.duration_s`: 1050000 us must be a positive whole number of timestamps of 100000 us",
            bad.display()
        )
    );
}

/// Fleet files refused, each with its key and reason (long by design: one
/// case after another, each message in line).
#[test]
fn fleet_files_are_refused_with_their_key() {
    let base = "schema_version = 1\n[timeline]\nreference_unix_s = 0.0\ntime_scale_us = 100000\nduration_s = 10.0\n";
    let cases: [(&str, &str); 20] = [
        (
            "",
            ": key `models`: a fleet needs at least one [[models]] entry",
        ),
        (
            "[[models]]\nname = \"a b\"\nkind = \"kpi\"\n",
            ":7:1: key `models[0].name`: `a b`: a model's name holds only letters, digits, `_` and `-`",
        ),
        (
            "[[models]]\nname = \"k\"\nkind = \"kpi\"\n[[models]]\nname = \"k\"\nkind = \"kpi\"\n",
            ":10:1: key `models[1].name`: `k` is taken by an earlier model",
        ),
        (
            "[[models]]\nname = \"k\"\nkind = \"weather\"\n",
            ":8:1: key `models[0].kind`: `weather` is not a model kind (orders, no_fly_zones, dispatcher, swap_station, kpi, vehicle)",
        ),
        (
            "[[models]]\nname = \"k\"\nkind = \"kpi\"\nbays = 2\n",
            ":9:1: key `models[0].bays`: not a key of a `kpi` model (its keys: none but name and kind)",
        ),
        (
            "[[models]]\nname = \"o\"\nkind = \"orders\"\nswap_s = 2.0\n",
            ":9:1: key `models[0].swap_s`: not a key of a `orders` model (its keys: name, kind, mean_interval_s, radius_m, first_s, max_orders)",
        ),
        (
            "[[models]]\nname = \"o\"\nkind = \"orders\"\nmean_interval_s = -1.0\n",
            ":9:1: key `models[0].mean_interval_s`: -1 must be a positive number",
        ),
        (
            "[[models]]\nname = \"z\"\nkind = \"no_fly_zones\"\nzones = [{ north_m = 1.0, east_m = 0.0, radius_m = 0.0 }]\n",
            ":9:41: key `models[0].zones[0].radius_m`: 0 must be a positive number within 1e6 m",
        ),
        (
            "[[models]]\nname = \"d\"\nkind = \"dispatcher\"\nswap_below_soc = 1.5\n",
            ":9:1: key `models[0].swap_below_soc`: 1.5 is not in [0, 1)",
        ),
        (
            "[[models]]\nname = \"s\"\nkind = \"swap_station\"\nswap_s = 1e12\n",
            ":9:1: key `models[0].swap_s`: 1000000000000 s is longer than 1e9 s",
        ),
        (
            "[[models]]\nname = \"o\"\nkind = \"orders\"\nfirst_s = 2e9\n",
            ":9:1: key `models[0].first_s`: 2000000000 s is longer than 1e9 s",
        ),
        (
            "[[models]]\nname = \"v\"\nkind = \"vehicle\"\nscenario = \"v.toml\"\ntelemetry_s = 2e9\n",
            ":10:1: key `models[0].telemetry_s`: 2000000000 s is longer than 1e9 s",
        ),
        (
            "[[models]]\nname = \"s\"\nkind = \"swap_station\"\nswap_s = 0.05\n",
            ":9:1: key `models[0].swap_s`: 0.05 s is not a whole number of timestamps of 100000 us",
        ),
        (
            "[[models]]\nname = \"v\"\nkind = \"vehicle\"\n",
            ": key `models[0].scenario`: a vehicle needs its scenario file",
        ),
        // Values no vehicle can be sent to (they passed, and the first
        // mission the autopilot refused ended the run).
        (
            "[[models]]\nname = \"o\"\nkind = \"orders\"\nradius_m = 1e300\n",
            ":9:1: key `models[0].radius_m`: 1e300 m is beyond 1e6 m (what a vehicle can be sent to)",
        ),
        (
            "[[models]]\nname = \"d\"\nkind = \"dispatcher\"\ncruise_alt_m = 1e300\n",
            ":9:1: key `models[0].cruise_alt_m`: 1e300 m is beyond 1e4 m (what a vehicle can be sent to)",
        ),
        (
            "[[models]]\nname = \"v\"\nkind = \"vehicle\"\nscenario = \"v.toml\"\n[[models]]\nname = \"w\"\nkind = \"vehicle\"\nscenario = \"v.toml\"\n[[models]]\nname = \"d\"\nkind = \"dispatcher\"\nalt_step_m = 1e300\n",
            ":17:1: key `models[2].alt_step_m`: 1e300 m: the highest of 2 vehicles would fly at 1e300 m, above 1e4 m",
        ),
        (
            "[[models]]\nname = \"d\"\nkind = \"dispatcher\"\nzone_margin_m = 2e6\n",
            ":9:1: key `models[0].zone_margin_m`: 2e6 m is beyond 1e6 m (what a vehicle can be sent to)",
        ),
        (
            "[[models]]\nname = \"z\"\nkind = \"no_fly_zones\"\nzones = [{ north_m = 1e300, east_m = 0.0, radius_m = 5.0 }]\n",
            ":9:12: key `models[0].zones[0].north_m`: 1e300 is not a finite distance within 1e6 m",
        ),
        (
            "[[models]]\nname = \"v\"\nkind = \"vehicle\"\nscenario = \"v.toml\"\npad_east_m = -1e7\n",
            ":10:1: key `models[0].pad_east_m`: -1e7 m is beyond 1e6 m (what a vehicle can be sent to)",
        ),
    ];
    for (models, expected) in cases {
        let e = FleetFile::from_toml_str(&format!("{base}{models}"), "f.toml").unwrap_err();
        // `expected` begins with the line and column of the key, or with
        // `: ` when the file does not spell it.
        assert_eq!(e.to_string(), format!("f.toml{expected}"), "{models}");
    }
    let e = FleetFile::from_toml_str(
        &format!("{base}threads = 2000\n[[models]]\nname = \"k\"\nkind = \"kpi\"\n"),
        "f.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:6:1: key `timeline.threads`: 2000: a run has 1 to 1024 threads"
    );
    let e = FleetFile::from_toml_str(
        &format!("{base}[[models]]\nname = \"k\"\nkind = \"kpi\"\ncolour = 1\n"),
        "f.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:9:1: unknown key `models.0.colour` (valid in [models.0]: kind, name)"
    );
    // An unknown key is told the keys of its model's kind.
    let e = FleetFile::from_toml_str(
        &format!("{base}[[models]]\nname = \"o\"\nkind = \"orders\"\nradius = 1.0\n"),
        "f.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:9:1: unknown key `models.0.radius` (valid in [models.0]: first_s, kind, \
         max_orders, mean_interval_s, name, radius_m)"
    );
    // Too large to be a fleet file, or not there.
    let dir = TempDir::new("orchestrate-big");
    let big = dir.join("big.toml");
    let n = lockstep_harness::inputs::scenario::MAX_SCENARIO_BYTES + 1;
    std::fs::write(&big, vec![b'#'; n as usize]).unwrap();
    assert_eq!(
        FleetFile::load(&big).unwrap_err().to_string(),
        format!(
            "cannot read fleet {}: {n} bytes; a fleet file may hold at most {}",
            big.display(),
            n - 1
        )
    );
    assert!(
        FleetFile::load(dir.join("none.toml"))
            .unwrap_err()
            .to_string()
            .ends_with("none.toml: No such file or directory (os error 2)")
    );
    // A vehicle whose scenario has no origin cannot place missions.
    let dir = TempDir::new("orchestrate-origin");
    let text = std::fs::read_to_string(example("vehicle.toml")).unwrap();
    let cut = text.replace(
        "[world]\norigin_lat_deg = 47.397742\norigin_lon_deg = 8.545594\norigin_alt_m = 488.0\n",
        "",
    );
    assert_ne!(cut, text);
    std::fs::write(dir.join("vehicle.toml"), cut).unwrap();
    let path = dir.join("f.toml");
    std::fs::write(
        &path,
        format!(
            "{base}[[models]]\nname = \"v\"\nkind = \"vehicle\"\nscenario = \"vehicle.toml\"\n"
        ),
    )
    .unwrap();
    let ff = FleetFile::load(&path).unwrap();
    let e = make_model(&ff, &ff.models[0], &options()).err().unwrap();
    assert_eq!(
        e.to_string(),
        "model `v`: the vehicle's scenario sets no [world] origin (a fleet's missions are placed from it)"
    );
}

/// An order whose mission the vehicle's autopilot refuses is rejected, as
/// the README says of orders no route reaches, and the fleet flies on (it
/// ended the whole run with exit 1). Here drone1's autopilot takes no
/// missions at all: the first order sent to it is rejected, naming it, the
/// dispatcher grounds it, and the other two deliver the rest.
#[test]
fn an_order_the_autopilot_refuses_is_rejected_and_the_fleet_flies_on() {
    let dir = TempDir::new("orchestrate-refused");
    let idle = lockstep_c_examples::broken("idle");
    let ff = fleet(
        &dir,
        &[
            ("duration_s = 900.0", "duration_s = 300.0"),
            (
                "pad_east_m = -6.0",
                &format!("pad_east_m = -6.0\nautopilot = \"{}\"", idle.display()),
            ),
        ],
    );
    let seen: Seen = Arc::default();
    let mut models: Vec<(String, Box<dyn Model>)> = ff
        .models
        .iter()
        .map(|d| (d.name.clone(), make_model(&ff, d, &options()).unwrap()))
        .collect();
    models.push((
        "probe".into(),
        Box::new(Probe {
            mask: DataMask::new(&[], &["dispatch/*/rejected"]).unwrap(),
            seen: seen.clone(),
        }),
    ));
    let r = lockstep_delivery::run(&ff, 2, models, false, None).unwrap();
    assert_eq!(r.error, None);
    let d = result(&r, "dispatcher");
    let k = result(&r, "kpi");
    let rejected = d["rejected"].as_u64().unwrap();
    assert_eq!(rejected, 1, "{d}");
    assert_eq!(d["grounded"], serde_json::json!(["drone1"]), "{d}");
    assert_eq!(k["rejected"].as_u64(), Some(rejected), "{k}");
    assert!(k["delivered"].as_u64().unwrap() >= 1, "{k}");
    let reasons: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, key, _)| key.attribute == "rejected")
        .map(|(_, _, v)| v["reason"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(reasons.len() as u64, rejected);
    assert!(
        reasons
            .iter()
            .all(|r| r.starts_with("`drone1`: the autopilot refused the mission: ")),
        "{reasons:?}"
    );
}
