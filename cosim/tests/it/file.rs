//! System files: every refusal names the file, the key and the reason.

use std::time::Duration;

use lockstep_cosim::assemble::{AssembleOptions, assemble};
use lockstep_cosim::file::{
    DEFAULT_STEP_TIMEOUT, FileMode, ParticipantKind, SystemFile, TransferKind,
};
use lockstep_harness::Micros;
use lockstep_harness::engine::RunOptions;

const GOOD: &str = r#"schema_version = 1
[cosim]
step_us = 4000
duration_s = 2.0
[[participants]]
name = "a"
kind = "vehicle"
scenario = "a.toml"
avoid_m = 5.0
[[participants]]
name = "b"
kind = "vehicle"
scenario = "b.toml"
set = { vehicle = { start_east_m = 3.0 }, "simulation.seed" = 9 }
[[participants]]
name = "f"
kind = "fmu"
path = "bundled:slung_load"
start = { length_m = 2, on = true }
[[transfers]]
name = "r"
kind = "radio"
vehicles = ["a", "b"]
latency_us = 8000
[[transfers]]
name = "c"
kind = "connect"
from = ["a.position_ned_m"]
to = ["f.vehicle_north_m", "f.vehicle_east_m", "f.vehicle_down_m"]
same_step = true
"#;

fn err(text: &str) -> String {
    SystemFile::from_toml_str(text, "/d/s.toml")
        .unwrap_err()
        .to_string()
}

fn with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn a_good_file_reads_with_its_defaults() {
    let s = SystemFile::from_toml_str(GOOD, "/d/s.toml").unwrap();
    assert_eq!(s.step, Micros(4000));
    assert_eq!(s.duration, Micros(2_000_000));
    assert_eq!(s.seed, 1);
    assert_eq!(s.mode, FileMode::Parallel);
    assert_eq!(s.record_period, Micros(4000));
    let ParticipantKind::Vehicle {
        scenario,
        overrides,
        traffic_slots,
        avoid_m,
        ..
    } = &s.participants[1].kind
    else {
        panic!()
    };
    assert_eq!(scenario.to_str(), Some("/d/b.toml"));
    assert_eq!((*traffic_slots, *avoid_m), (8, None));
    // Its own seed kept; the duration the system's.
    let keys: Vec<&str> = overrides.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "simulation.seed",
            "vehicle.start_east_m",
            "simulation.duration_s"
        ]
    );
    // The first vehicle's seed is derived from the system's and its name.
    let ParticipantKind::Vehicle { overrides, .. } = &s.participants[0].kind else {
        panic!()
    };
    assert_eq!(
        overrides[0].value,
        toml::Value::Integer(
            lockstep_harness::time::rng::RngStreams::new(1).member_seed("cosim.vehicle", "a")
                as i64
                & i64::MAX
        )
    );
    let ParticipantKind::Fmu { path, start, .. } = &s.participants[2].kind else {
        panic!()
    };
    assert_eq!(path.to_str(), Some("bundled:slung_load"));
    assert_eq!(
        start,
        &[("length_m".to_string(), 2.0), ("on".to_string(), 1.0)]
    );
    assert!(matches!(
        s.transfers[0].kind,
        TransferKind::Radio {
            latency: Micros(8000),
            ..
        }
    ));
    assert!(s.transfers[1].same_step);
}

/// Long by design: one broken system file per case, each with its exact
/// message in line, so a failure points at the case.
#[test]
fn every_refusal_names_the_file_and_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "step_us = 4000",
            "step_us = 4000 x",
            "/d/s.toml:3:11: TOML syntax error: string values must be quoted, expected literal string",
        ),
        (
            "avoid_m = 5.0",
            "avoid = 5.0",
            "/d/s.toml:9:1: unknown key `participants.0.avoid` (valid in [participants.0]: autopilot, avoid_m, kind, name, period_us, scenario, set, traffic_slots)",
        ),
        (
            "schema_version = 1",
            "schema_version = 2",
            "/d/s.toml:1:1: key `schema_version`: 2 is not supported (this build reads 1)",
        ),
        (
            "step_us = 4000",
            "step_us = 0",
            "/d/s.toml:3:1: key `cosim.step_us`: must be positive",
        ),
        (
            "duration_s = 2.0",
            "duration_s = 2.001",
            "/d/s.toml:4:1: key `cosim.duration_s`: 2001000 us must be a positive multiple of the step 4000 us",
        ),
        (
            "duration_s = 2.0",
            "duration_s = 2.0\nmode = \"fast\"",
            "/d/s.toml:5:1: key `cosim.mode`: `fast` is not a mode (parallel, serialized)",
        ),
        (
            "duration_s = 2.0",
            "duration_s = 2.0\nthreads = 0",
            "/d/s.toml:5:1: key `cosim.threads`: 0: a run has 1 to 1024 threads",
        ),
        (
            "duration_s = 2.0",
            "duration_s = 2.0\nthreads = 5000",
            "/d/s.toml:5:1: key `cosim.threads`: 5000: a run has 1 to 1024 threads",
        ),
        (
            "duration_s = 2.0",
            "duration_s = 2.0\nrecord_period_us = 6000",
            "/d/s.toml:5:1: key `cosim.record_period_us`: 6000 us must be a positive multiple of the step 4000 us",
        ),
        (
            "kind = \"fmu\"",
            "kind = \"ssp\"",
            "/d/s.toml:17:1: key `participants[2].kind`: `ssp` is not a participant kind (vehicle, fmu, external)",
        ),
        (
            "kind = \"fmu\"",
            "kind = \"external\"",
            "/d/s.toml:18:1: key `participants[2].path`: not a key of an external participant (its keys: name, kind, period_us, outputs, inputs, step_timeout_s)",
        ),
        (
            "start = { length_m = 2, on = true }",
            "avoid_m = 3.0",
            "/d/s.toml:19:1: key `participants[2].avoid_m`: not a key of an fmu participant (its keys: name, kind, period_us, path, start, preload)",
        ),
        (
            "start = { length_m = 2, on = true }",
            "start = { body.m = 1.0, \"body.m\" = 2.0 }",
            "/d/s.toml:19:16: key `participants[2].start.body.m`: given twice (as a dotted key and as a table)",
        ),
        (
            "start = { length_m = 2, on = true }",
            "start = { body.m = \"heavy\" }",
            "/d/s.toml:19:16: key `participants[2].start.body.m`: expected a number or a boolean, found string",
        ),
        (
            "start = { length_m = 2, on = true }",
            "start = { length_m = \"long\" }",
            "/d/s.toml:19:11: key `participants[2].start.length_m`: expected a number or a boolean, found string",
        ),
        (
            "start = { length_m = 2, on = true }",
            "start = { length_m = inf }",
            "/d/s.toml:19:11: key `participants[2].start.length_m`: inf must be finite",
        ),
        (
            "same_step = true",
            "same_step = true\noffset = 1e308",
            "/d/s.toml:31:1: key `transfers[1].offset`: 1e308 is outside [-1e12, 1e12] (a connection's gain and offset are finite and at most 1e12 in size)",
        ),
        (
            "same_step = true",
            "same_step = true\ngain = -1.5e12",
            "/d/s.toml:31:1: key `transfers[1].gain`: -1.5e12 is outside [-1e12, 1e12] (a connection's gain and offset are finite and at most 1e12 in size)",
        ),
        (
            "scenario = \"a.toml\"\n",
            "",
            "/d/s.toml: key `participants[0].scenario`: a vehicle needs its scenario file",
        ),
        (
            "name = \"b\"",
            "name = \"a\"",
            "/d/s.toml:11:1: key `participants[1].name`: `a` is taken by an earlier participant",
        ),
        (
            "name = \"b\"",
            "name = \"b.c\"",
            "/d/s.toml:11:1: key `participants[1].name`: `b.c`: a participant's name holds only letters, digits, `_` and `-` (it names files, columns and `participant.variable`)",
        ),
        (
            "name = \"b\"",
            "name = \"/tmp/b\"",
            "/d/s.toml:11:1: key `participants[1].name`: `/tmp/b`: a participant's name holds only letters, digits, `_` and `-` (it names files, columns and `participant.variable`)",
        ),
        (
            "name = \"b\"",
            "name = \"\"",
            "/d/s.toml:11:1: key `participants[1].name`: ``: a participant's name has 1 to 64 characters",
        ),
        (
            "avoid_m = 5.0",
            "avoid_m = -5.0",
            "/d/s.toml:9:1: key `participants[0].avoid_m`: -5 must be a positive distance",
        ),
        (
            "avoid_m = 5.0",
            "traffic_slots = 1000",
            "/d/s.toml:9:1: key `participants[0].traffic_slots`: 1000; at most 256",
        ),
        (
            "avoid_m = 5.0",
            "period_us = 6000",
            "/d/s.toml:9:1: key `participants[0].period_us`: 6000 us must be a positive multiple of the step 4000 us",
        ),
        (
            "vehicles = [\"a\", \"b\"]",
            "vehicles = [\"a\", \"f\"]",
            "/d/s.toml:23:1: key `transfers[0].vehicles`: `f` is not a vehicle",
        ),
        (
            "vehicles = [\"a\", \"b\"]",
            "vehicles = [\"a\", \"a\"]",
            "/d/s.toml:23:1: key `transfers[0].vehicles`: `a` is listed twice",
        ),
        (
            "vehicles = [\"a\", \"b\"]",
            "vehicles = [\"a\", \"z\"]",
            "/d/s.toml:23:1: key `transfers[0].vehicles`: no participant `z`",
        ),
        (
            "vehicles = [\"a\", \"b\"]",
            "vehicles = [\"a\"]",
            "/d/s.toml:23:1: key `transfers[0].vehicles`: a radio links at least two vehicles",
        ),
        (
            "latency_us = 8000",
            "latency_us = 2000000",
            "/d/s.toml:24:1: key `transfers[0].latency_us`: 2000000 us is not shorter than the run (2000000 us): no report would arrive",
        ),
        (
            "latency_us = 8000",
            "loss = 1.5",
            "/d/s.toml:24:1: key `transfers[0].loss`: 1.5 is not a probability in [0, 1]",
        ),
        (
            "latency_us = 8000",
            "range_m = -1.0",
            "/d/s.toml:24:1: key `transfers[0].range_m`: -1 must be a positive distance",
        ),
        (
            "latency_us = 8000",
            "gain = 2.0",
            "/d/s.toml:24:1: key `transfers[0].gain`: not a key of a radio transfer function (its keys: name, kind, period_us, same_step, vehicles, latency_us, loss, range_m)",
        ),
        (
            "kind = \"connect\"",
            "kind = \"splice\"",
            "/d/s.toml:27:1: key `transfers[1].kind`: `splice` is not a transfer function kind (connect, radio)",
        ),
        (
            "from = [\"a.position_ned_m\"]\n",
            "",
            "/d/s.toml: key `transfers[1].from`: a connection needs the outputs it reads",
        ),
        (
            "avoid_m = 5.0",
            "period_us = 2004000",
            "/d/s.toml:9:1: key `participants[0].period_us`: 2004000 us is longer than the run (2000000 us): it would act once, at the start",
        ),
        (
            "from = [\"a.position_ned_m\"]",
            "from = []",
            "/d/s.toml:28:1: key `transfers[1].from`: an empty list connects nothing",
        ),
        (
            "to = [\"f.vehicle_north_m\", \"f.vehicle_east_m\", \"f.vehicle_down_m\"]",
            "to = []",
            "/d/s.toml:29:1: key `transfers[1].to`: an empty list connects nothing",
        ),
        (
            "name = \"c\"",
            "name = \"r\"",
            "/d/s.toml:26:1: key `transfers[1].name`: `r` is taken by an earlier transfer function",
        ),
    ];
    for (from, to, want) in cases {
        let got = err(&with(from, to));
        assert!(
            got.starts_with(want),
            "{from} -> {to}:\n got: {got}\nwant: {want}"
        );
    }
    assert_eq!(
        err("schema_version = 1\n[cosim]\nstep_us = 4000\nduration_s = 1.0\n"),
        "/d/s.toml: key `participants`: a system needs at least one [[participants]] entry"
    );
    assert_eq!(
        SystemFile::load("/nonexistent/s.toml")
            .unwrap_err()
            .to_string(),
        "cannot read system /nonexistent/s.toml: No such file or directory (os error 2)"
    );
}

#[test]
fn external_participants_declare_their_variables() {
    let head = "schema_version = 1\n[cosim]\nstep_us = 1000\nduration_s = 1.0\n[[participants]]\nname = \"x\"\nkind = \"external\"\n";
    let s = SystemFile::from_toml_str(
        &format!("{head}outputs = [{{ name = \"w\", start = [1.0, 2.0] }}, {{ name = \"k\" }}]\ninputs = [{{ name = \"p\", width = 3 }}]\n"),
        "/d/s.toml",
    )
    .unwrap();
    let ParticipantKind::External {
        outputs,
        inputs,
        step_timeout,
    } = &s.participants[0].kind
    else {
        panic!("{:?}", s.participants[0].kind)
    };
    assert_eq!(
        (outputs[0].len, outputs[0].start.clone()),
        (2, vec![1.0, 2.0])
    );
    assert_eq!((outputs[1].len, outputs[1].start.clone()), (1, vec![0.0]));
    assert_eq!((inputs[0].len, inputs[0].start.clone()), (3, vec![0.0; 3]));
    assert_eq!(*step_timeout, DEFAULT_STEP_TIMEOUT);
    let quick = SystemFile::from_toml_str(
        &format!("{head}inputs = [{{ name = \"p\" }}]\nstep_timeout_s = 0.25\n"),
        "/d/s.toml",
    )
    .unwrap();
    assert!(matches!(
        quick.participants[0].kind,
        ParticipantKind::External { step_timeout, .. } if step_timeout == Duration::from_millis(250)
    ));
    for (vars, expected) in [
        (
            "inputs = [{ name = \"p\" }]\nstep_timeout_s = 0.0",
            "9:1: key `participants[0].step_timeout_s`: 0: a step's deadline is more than 0 and at most 3600 s",
        ),
        (
            "inputs = [{ name = \"p\" }]\nstep_timeout_s = inf",
            "9:1: key `participants[0].step_timeout_s`: inf: a step's deadline is more than 0 and at most 3600 s",
        ),
        (
            "inputs = [{ name = \"p\" }]\nstep_timeout_s = 3601.0",
            "9:1: key `participants[0].step_timeout_s`: 3601: a step's deadline is more than 0 and at most 3600 s",
        ),
        (
            "",
            " key `participants[0].outputs`: an external participant declares outputs or inputs",
        ),
        (
            "outputs = [{ name = \"w\", width = 2, start = [1.0] }]",
            "8:37: key `participants[0].outputs[0].start`: 1 values for a width of 2",
        ),
        (
            "inputs = [{ name = \"w\", width = 0 }]",
            "8:25: key `participants[0].inputs[0].width`: 0: a variable holds 1 to 4096 values",
        ),
        (
            "inputs = [{ name = \"w\" }, { name = \"w\" }]",
            "8:29: key `participants[0].inputs[1].name`: `w` is declared twice",
        ),
        (
            "inputs = [{ name = \"a b\" }]",
            "8:13: key `participants[0].inputs[0].name`: `a b`: a variable's name is not empty and holds no spaces",
        ),
    ] {
        let e = SystemFile::from_toml_str(&format!("{head}{vars}\n"), "/d/s.toml").unwrap_err();
        // `expected` starts with the key's line and column, or with a space
        // when the file does not spell the key.
        assert_eq!(e.to_string(), format!("/d/s.toml:{expected}"), "{vars}");
    }
    // The command line has no callbacks to give it.
    let c = assemble(
        &s,
        &AssembleOptions {
            run: RunOptions::new("/nonexistent", lockstep_abi::Isolation::InProcess),
            mode: None,
            bundled_fmu: None,
            taken: Vec::new(),
        },
    );
    assert_eq!(
        c.err().unwrap().to_string(),
        "participant `x`: an external participant is provided by the program that runs the system (a C host binds it with lockstep_cosim_bind); this one provides none"
    );
}

#[test]
fn an_fmu_start_value_may_name_a_variable_with_dots() {
    // Modelica names: `body.m` bare (TOML reads a table) or quoted.
    let s = SystemFile::from_toml_str(
        &with(
            "start = { length_m = 2, on = true }",
            "start = { body.m = 1.5, \"joint.phi\" = 0.25, \"a[1]\" = 3 }",
        ),
        "/d/s.toml",
    )
    .unwrap();
    let ParticipantKind::Fmu { start, .. } = &s.participants[2].kind else {
        panic!()
    };
    let mut start = start.clone();
    start.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        start,
        [
            ("a[1]".to_string(), 3.0),
            ("body.m".to_string(), 1.5),
            ("joint.phi".to_string(), 0.25)
        ]
    );
}

#[test]
fn threads_are_at_most_one_per_participant() {
    let s = SystemFile::from_toml_str(
        &with("duration_s = 2.0", "duration_s = 2.0\nthreads = 1024"),
        "/d/s.toml",
    )
    .unwrap();
    let options = |mode| AssembleOptions {
        run: RunOptions::new("/nonexistent", lockstep_abi::Isolation::InProcess),
        mode,
        bundled_fmu: None,
        taken: Vec::new(),
    };
    assert_eq!(s.threads, Some(1024));
    assert_eq!(options(None).threads_of(&s), 3, "three participants");
    assert_eq!(options(Some(FileMode::Serialized)).threads_of(&s), 1);
}
