//! Co-simulation with lockstep vehicles: the radio's latency and loss seen
//! in what each vehicle receives and in how close the head-on pairs get,
//! the force and wind inputs against statics, and parallel = serialized.

use std::path::{Path, PathBuf};

use crate::common::{BUNDLED, TempDir, cosim_in_process, examples, lockstep, vehicles_system};
use lockstep_abi::Isolation;
use lockstep_cosim::Cosim;
use lockstep_cosim::assemble::{AssembleOptions, assemble};
use lockstep_cosim::file::{FileMode, SystemFile};
use lockstep_harness::Micros;
use lockstep_harness::engine::RunOptions;

fn options(mode: FileMode) -> AssembleOptions {
    AssembleOptions {
        run: RunOptions {
            threads: Some(2),
            ..RunOptions::new(BUNDLED, Isolation::InProcess)
        },
        mode: Some(mode),
        bundled_fmu: None,
        taken: Vec::new(),
    }
}

/// A system file written next to the example's vehicle scenario (so its
/// relative paths resolve), read back.
fn system(dir: &Path, text: &str) -> SystemFile {
    let path = dir.join("system.toml");
    std::fs::write(&path, text).unwrap();
    let scenario = examples().join("cosim");
    let text = text.replace(
        "@SCENARIO@",
        &scenario.join("vehicle.toml").display().to_string(),
    );
    SystemFile::from_toml_str(&text, &path).unwrap()
}

/// The head-on pair of the example's north lane, with this radio.
fn head_on(latency_us: u64, loss: f64, period_us: u64) -> String {
    format!(
        r#"schema_version = 1
[cosim]
step_us = 4000
duration_s = 32.0
seed = 3
[[participants]]
name = "alpha"
kind = "vehicle"
scenario = "@SCENARIO@"
set = {{ "vehicle.mission" = "missions/alpha.waypoints" }}
traffic_slots = 1
avoid_m = 25.0
[[participants]]
name = "bravo"
kind = "vehicle"
scenario = "@SCENARIO@"
set = {{ "vehicle.mission" = "missions/bravo.waypoints", "vehicle.start_east_m" = 120.0 }}
traffic_slots = 1
avoid_m = 25.0
[[transfers]]
name = "radio"
kind = "radio"
vehicles = ["alpha", "bravo"]
period_us = {period_us}
latency_us = {latency_us}
loss = {loss}
"#
    )
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

struct Flown {
    min_separation_m: f64,
    /// bravo's east speed when alpha held, m/s.
    bravo_speed_at_hold: f64,
    held_at: Micros,
}

fn fly_head_on(c: &mut Cosim, latency: Micros, period: Micros) -> Flown {
    let pa = c.find_output("alpha.position_ned_m").unwrap();
    let pb = c.find_output("bravo.position_ned_m").unwrap();
    let vb = c.find_output("bravo.velocity_ned_mps").unwrap();
    // bravo's published position at every step, to check what alpha
    // receives against it.
    let mut history: Vec<(Micros, Vec<f64>)> = vec![(Micros::ZERO, c.output(pb).to_vec())];
    let mut min = f64::INFINITY;
    let mut checked = 0;
    let mut bravo_speed = Vec::new();
    c.run_until(Micros(32_000_000), |c| {
        let t = c.now();
        history.push((t, c.output(pb).to_vec()));
        bravo_speed.push((t, c.output(vb)[1]));
        min = min.min(dist(c.output(pa), c.output(pb)));
        if t.is_multiple_of(period) && t >= latency {
            // What alpha holds now: bravo's position published at
            // t - latency, exactly, aged by the latency.
            let traffic = c.input("alpha.traffic").unwrap();
            let sent = Micros(t.0 - latency.0);
            let (_, p) = history.iter().find(|(h, _)| *h == sent).unwrap();
            assert_eq!(&traffic[..3], &p[..], "at {t}");
            assert_eq!(traffic[3], latency.as_secs_f64(), "age at {t}");
            checked += 1;
        }
        Ok(())
    })
    .unwrap();
    assert!(checked > 100);
    let report = c.finish().unwrap();
    let alpha = report[0].1.vehicle().expect("a vehicle's report");
    let held_at = Micros(alpha.avoidance.expect("alpha held").time_us);
    let bravo_speed_at_hold = bravo_speed
        .iter()
        .find(|(t, _)| *t == held_at)
        .map(|(_, v)| -v)
        .unwrap();
    Flown {
        min_separation_m: min,
        bravo_speed_at_hold,
        held_at,
    }
}

#[test]
fn radio_latency_costs_the_neighbours_speed_times_the_latency_in_separation() {
    let dir = TempDir::new("cosim-latency");
    let period = Micros(20_000);
    let mut quick = assemble(
        &system(dir.path(), &head_on(0, 0.0, 20_000)),
        &options(FileMode::Parallel),
    )
    .unwrap();
    let quick = fly_head_on(&mut quick, Micros::ZERO, period);
    let mut late = assemble(
        &system(dir.path(), &head_on(1_000_000, 0.0, 20_000)),
        &options(FileMode::Parallel),
    )
    .unwrap();
    let late = fly_head_on(&mut late, Micros(1_000_000), period);
    // alpha compares its own position with bravo's of a second ago, which
    // is farther by bravo's speed times the latency: it holds that much
    // closer, and (both braking from the same cruise) they stop that much
    // closer.
    let v = late.bravo_speed_at_hold;
    assert!((4.0..6.0).contains(&v), "bravo cruises at {v} m/s");
    let lost = quick.min_separation_m - late.min_separation_m;
    let want = v * 1.0;
    eprintln!(
        "separation {:.3} m without latency, {:.3} m with 1 s; held at {} and {}; bravo at {v:.3} m/s",
        quick.min_separation_m, late.min_separation_m, quick.held_at, late.held_at
    );
    assert!(
        (lost - want).abs() < 0.1 * want + 0.3,
        "separation {:.3} m without latency, {:.3} m with 1 s: {lost:.3} m lost, {want:.3} m predicted",
        quick.min_separation_m,
        late.min_separation_m
    );
    // Both pairs stopped apart (the trigger at 25 m leaves room to brake).
    assert!(late.min_separation_m > 5.0, "{}", late.min_separation_m);
    assert!(late.held_at > quick.held_at);
}

fn lost_and_sent(c: &Cosim) -> (u64, u64) {
    let lockstep_cosim::TransferReport::Radio(r) = c.transfer_reports()[0].1 else {
        panic!("a radio's report");
    };
    (r.reports_lost, r.reports_sent)
}

#[test]
fn the_radio_loses_reports_at_its_rate_and_beyond_its_range() {
    let dir = TempDir::new("cosim-loss");
    let mut c = assemble(
        &system(dir.path(), &head_on(0, 0.3, 4000)),
        &options(FileMode::Parallel),
    )
    .unwrap();
    c.run_until(Micros(8_000_000), |_| Ok(())).unwrap();
    let (lost, sent) = lost_and_sent(&c);
    // Binomial: 2 reports per run, 2001 runs; within 4 sigma of 30 %.
    assert_eq!(sent, 2 * 2001);
    let (n, p) = (sent as f64, 0.3);
    let sigma = (n * p * (1.0 - p)).sqrt();
    assert!(
        (lost as f64 - n * p).abs() < 4.0 * sigma,
        "{lost} of {sent}"
    );
    c.finish().unwrap();
    // 120 m apart on the ground: out of a 100 m range until they close in.
    let text = head_on(0, 0.0, 4000).replace("loss = 0", "range_m = 100.0\nloss = 0");
    let mut c = assemble(&system(dir.path(), &text), &options(FileMode::Serialized)).unwrap();
    c.run_until(Micros(4_000_000), |c| {
        assert!(c.input("alpha.traffic").unwrap()[0].is_nan());
        Ok(())
    })
    .unwrap();
    let (lost, sent) = lost_and_sent(&c);
    assert_eq!(lost, sent);
    c.finish().unwrap();
}

/// One Iris hovering at 10 m (the example's vehicle on the hover mission),
/// and a closure participant holding a force and a wind on it.
fn hover_with(force: [f64; 3], wind: [f64; 3]) -> (f64, [f64; 3], [f64; 3]) {
    use lockstep_cosim::vehicle::{VehicleOptions, VehicleParticipant};
    use lockstep_cosim::{Connect, FnParticipant, Mode, SystemBuilder, TransferSpec, Variable};
    use lockstep_harness::inputs::scenario::{Override, Scenario};
    let s = Scenario::load_with(
        examples().join("cosim/vehicle.toml"),
        &[
            Override::new(
                "vehicle.mission",
                toml::Value::String("../missions/hover.waypoints".into()),
                "test".into(),
            ),
            Override::new(
                "simulation.duration_s",
                toml::Value::Float(30.0),
                "test".into(),
            ),
        ],
    )
    .unwrap();
    let v = VehicleParticipant::new(
        &s,
        Path::new(BUNDLED),
        None,
        &Isolation::InProcess,
        VehicleOptions::default(),
    )
    .unwrap();
    let source = FnParticipant::new(
        vec![],
        vec![
            Variable::vector("f", &force, ""),
            Variable::vector("w", &wind, ""),
        ],
        |_, _, _, _| Ok(()),
    );
    let mut b = SystemBuilder::new(Micros(4000));
    b.participant("iris", None, Box::new(v)).unwrap();
    b.participant("env", None, Box::new(source)).unwrap();
    b.transfer(
        TransferSpec {
            name: "push".into(),
            reads: vec!["env.f".into(), "env.w".into()],
            writes: vec!["iris.force_ned_n".into(), "iris.wind_ned_mps".into()],
            ..TransferSpec::default()
        },
        Box::new(Connect::default()),
    )
    .unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    let q = c.find_output("iris.attitude_q").unwrap();
    let p = c.find_output("iris.position_ned_m").unwrap();
    let w = c.find_output("iris.wind_ned_mps").unwrap();
    c.run_until(Micros(25_000_000), |_| Ok(())).unwrap();
    let q = c.output(q).to_vec();
    // Tilt of the body z axis from the vertical.
    let cos_tilt = 1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]);
    let tilt = cos_tilt.clamp(-1.0, 1.0).acos();
    let pos = c.output(p).to_vec();
    let wind = c.output(w).to_vec();
    c.finish().unwrap();
    (tilt, [pos[0], pos[1], pos[2]], [wind[0], wind[1], wind[2]])
}

#[test]
fn a_steady_side_force_tilts_the_hover_by_atan_of_force_over_weight() {
    // Iris 1.5 kg: its weight is 14.7 N; 3 N east must be met by a tilt of
    // atan(3 / 14.7) = 11.5 degrees, held over home by the autopilot.
    let spec = lockstep_plant::AircraftSpec::builtin("iris")
        .unwrap()
        .build()
        .unwrap();
    let weight = spec.mass_kg * spec.gravity_mps2();
    let (tilt, pos, wind) = hover_with([0.0, 3.0, 0.0], [0.0; 3]);
    let want = (3.0 / weight).atan();
    eprintln!(
        "tilt {} deg, want {} deg",
        tilt.to_degrees(),
        want.to_degrees()
    );
    assert!(
        (tilt - want).abs() < 0.1 * want,
        "tilt {} deg, want {} deg",
        tilt.to_degrees(),
        want.to_degrees()
    );
    assert!(pos[1].abs() < 1.0 && (pos[2] + 10.0).abs() < 1.0, "{pos:?}");
    assert_eq!(wind, [0.0; 3]);
    // The wind input adds to the scenario's (calm) wind exactly.
    let (_, _, wind) = hover_with([0.0; 3], [1.5, -0.5, 0.0]);
    assert_eq!(wind, [1.5, -0.5, 0.0]);
}

#[test]
fn parallel_and_serialized_cosim_runs_write_the_same_bytes() {
    let dir = TempDir::new("cosim-modes");
    let system = examples().join("cosim/radio_swarm.toml");
    let mut outs = Vec::new();
    for (name, flags) in [
        ("serialized", vec!["--serialized"]),
        ("one", vec!["--threads", "1"]),
        ("two", vec!["--threads", "2"]),
    ] {
        let out = dir.join(name);
        let mut args = vec![
            "cosim".to_string(),
            system.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--isolation".into(),
            "in-process".into(),
            "-q".into(),
        ];
        args.extend(flags.iter().map(|s| s.to_string()));
        let r = lockstep(&args);
        assert_eq!(r.code(), 0, "{r}");
        outs.push(out);
    }
    let files = [
        "cosim.csv",
        "alpha.csv",
        "bravo.csv",
        "charlie.csv",
        "delta.csv",
    ];
    for f in files {
        let first = std::fs::read(outs[0].join(f)).unwrap();
        for o in &outs[1..] {
            assert!(
                first == std::fs::read(o.join(f)).unwrap(),
                "{f} differs in {}",
                o.display()
            );
        }
    }
    // Each vehicle names its log, in its run's directory: the same file.
    let summary = |o: &PathBuf| -> serde_json::Value {
        let mut s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(o.join("summary.json")).unwrap())
                .unwrap();
        for (name, p) in s["participants"].as_object_mut().unwrap() {
            let log = o.join(format!("{name}.csv"));
            assert_eq!(p["log"], log.display().to_string(), "{name}");
            p["log"] = serde_json::Value::Null;
        }
        s
    };
    let s0 = summary(&outs[0]);
    assert_eq!(s0["mode"], "serialized");
    assert_eq!(summary(&outs[2])["threads"], 2);
    for o in &outs[1..] {
        assert_eq!(summary(o)["participants"], s0["participants"]);
        assert_eq!(summary(o)["record_digest"], s0["record_digest"]);
    }
    // Every vehicle held for traffic, and each pair stopped apart.
    for v in ["alpha", "bravo", "charlie", "delta"] {
        assert!(
            s0["participants"][v]["avoidance"]["time_us"].is_u64(),
            "{v}"
        );
    }
    // The summary says its kind, and the viewer shows the vehicles.
    assert_eq!(s0["kind"], "cosim");
    let r = lockstep(&["view", outs[0].to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    let page = outs[0].join("flight.html");
    assert_eq!(r.stdout, format!("viewer        {}\n", page.display()));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<title>radio_swarm.toml (4 vehicles)</title>"),
        "{}",
        &html[..400]
    );
    for v in ["alpha", "bravo", "charlie", "delta"] {
        assert!(html.contains(&format!("\"name\":\"{v}\"")), "{v}");
    }
}

#[test]
fn a_vehicle_refuses_a_period_that_is_not_whole_autopilot_periods() {
    let dir = TempDir::new("cosim-period");
    let text = head_on(0, 0.0, 4000)
        .replace("step_us = 4000", "step_us = 2000")
        .replace(
            "traffic_slots = 1\navoid_m = 25.0\n[[participants]]",
            "traffic_slots = 1\navoid_m = 25.0\nperiod_us = 2000\n[[participants]]",
        );
    let e = assemble(&system(dir.path(), &text), &options(FileMode::Serialized)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "participant `alpha`: a vehicle steps whole autopilot periods: 2000 us is not a multiple of its autopilot period 4000 us"
    );
    // A bundled FMU where the program carries none.
    let text = head_on(0, 0.0, 4000).replace(
        "[[transfers]]",
        "[[participants]]\nname = \"load\"\nkind = \"fmu\"\npath = \"bundled:slung_load\"\n[[transfers]]",
    );
    let e = assemble(&system(dir.path(), &text), &options(FileMode::Serialized)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "participant `load`: `bundled:slung_load`: this program carries no FMUs"
    );
}

/// A vehicle named `cosim` logged into the record `cosim.csv` (torn rows,
/// exit 0): its log is refused before anything is written, naming both.
#[test]
fn a_vehicle_whose_log_would_be_the_record_is_refused() {
    let dir = TempDir::new("cosim-log-record");
    let system = vehicles_system(dir.path(), 3.0, &[("cosim", "")]);
    let out = dir.join("out");
    let r = cosim_in_process(&system, &out);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep cosim: participant `cosim`: the record and its log name the same file {}\n",
            out.join("cosim.csv").display()
        )
    );
    assert!(!out.join("cosim.csv").exists());
}

/// A vehicle's inputs hold the scenario file's bounds: a wind of 500 m/s
/// arriving through a connection (an offset a file may give) ends the run
/// at the first transfer, naming the input and the bound (it flew on until
/// the state overflowed, reported as a state dump naming nothing).
#[test]
fn a_wind_beyond_the_scenarios_bound_is_refused_at_the_input() {
    let dir = TempDir::new("cosim-wind-bound");
    let text = r#"schema_version = 1
[cosim]
step_us = 4000
duration_s = 2.0
[[participants]]
name = "a"
kind = "vehicle"
scenario = "@SCENARIO@"
[[transfers]]
name = "gale"
kind = "connect"
from = ["a.position_ned_m"]
to = ["a.wind_ned_mps"]
gain = 0.0
offset = 500.0
"#;
    let mut c = assemble(&system(dir.path(), text), &options(FileMode::Serialized)).unwrap();
    let e = c.step().unwrap_err().to_string();
    assert!(
        e.contains("input `wind_ned_mps` = 5e2 is outside [-100, 100] m/s per axis"),
        "{e}"
    );
    assert_eq!(c.now(), Micros(0), "no step taken");
    let _ = c.finish();
}
