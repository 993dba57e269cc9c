//! The C and C++ hosts in c_examples/host/, compiled against
//! include/lockstep/harness.h with `-Wall -Wextra -Werror` and linked to
//! the liblockstep.so cargo built, run and checked:
//! - mode 1 (sim.c) flies the Rust API's flight bit for bit;
//! - mode 2 (bridge.c, the autopilot against a host-owned plant) flies it
//!   too, bit for bit;
//! - mode 3 (plant.c) steps the plant and counts its work;
//! - the C++17 RAII wrapper (fleet.cpp) flies several vehicles at once;
//! - every error path gives its status and message, also under
//!   AddressSanitizer and UBSan (double free, stale and never-created
//!   handles, NULL, wrong struct sizes);
//! - isolated.c flies its autopilot in a child process with nothing but
//!   liblockstep.so beside it: the library is its own host.

use std::path::{Path, PathBuf};
use std::process::Command;

use lockstep_abi::Isolation;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;

use crate::common::{BUNDLED, TempDir, broken};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>/deps, where cargo builds liblockstep.so as this
/// package's dev-dependency (the copy in target/<profile> is refreshed only
/// when lockstep-capi itself is built), next to this test.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    assert!(
        dir.join("liblockstep.so").exists(),
        "liblockstep.so in {}",
        dir.display()
    );
    dir
}

/// Compiles one host program; `sanitize` adds ASan and UBSan.
fn compile(source: &str, out: &Path, sanitize: bool) {
    compile_against(source, out, sanitize, &lib_dir());
}

/// Compiles one host program linked to the liblockstep.so in `lib`.
fn compile_against(source: &str, out: &Path, sanitize: bool, lib: &Path) {
    let cpp = source.ends_with(".cpp");
    let compiler = if cpp {
        std::env::var("CXX").unwrap_or_else(|_| "c++".into())
    } else {
        std::env::var("CC").unwrap_or_else(|_| "cc".into())
    };
    let mut c = Command::new(&compiler);
    c.arg(if cpp { "-std=c++17" } else { "-std=c11" })
        .args(["-Wall", "-Wextra", "-Werror", "-g"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("c_examples/host").join(source))
        .arg("-o")
        .arg(out)
        .arg("-L")
        .arg(lib)
        .arg("-llockstep")
        .arg(format!("-Wl,-rpath,{}", lib.display()));
    if cpp {
        c.arg("-pthread");
    }
    if sanitize {
        c.args([
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ]);
    }
    let o = c
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(
        o.status.success(),
        "{compiler} {source}:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs a host; its stdout (it must exit 0 and end with "ok").
fn run(exe: &Path, args: &[&str]) -> String {
    let o = Command::new(exe)
        .args(args)
        .current_dir(root())
        // cargo's LD_LIBRARY_PATH lists target/<profile>, whose copy of the
        // library may be stale; the host's rpath names the fresh one.
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && stdout.ends_with("ok\n"),
        "{} {args:?}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        exe.display(),
        o.status
    );
    assert!(!stderr.contains("Sanitizer"), "{stderr}");
    stdout
}

/// The `state` lines: time and the 13 rigid-body numbers as bits.
fn states(out: &str) -> Vec<(u64, Vec<u64>)> {
    out.lines()
        .filter_map(|l| l.strip_prefix("state "))
        .map(|l| {
            let mut f = l.split(' ');
            let t = f.next().unwrap().parse().unwrap();
            let x = f.map(|v| v.parse::<f64>().unwrap().to_bits()).collect();
            (t, x)
        })
        .collect()
}

/// The Rust API's flight of the default scenario: the state every second.
fn rust_states() -> Vec<(u64, Vec<u64>)> {
    let s = Scenario::load(root().join("examples/scenarios/square.toml")).unwrap();
    let mut e =
        Engine::with_isolation(&s, Path::new(BUNDLED), None, &Isolation::InProcess).unwrap();
    let mut out = Vec::new();
    let mut t = 0;
    while t <= e.end().0 {
        while e.next_time().is_some_and(|n| n.0 <= t) {
            e.step().unwrap();
        }
        out.push((t, e.state()[..13].iter().map(|v| v.to_bits()).collect()));
        t += 1_000_000;
    }
    out
}

const SCENARIO: &str = "examples/scenarios/square.toml";

#[test]
fn mode_1_from_c_flies_the_rust_apis_flight_bit_for_bit() {
    let dir = TempDir::new("c-sim");
    let exe = dir.join("sim");
    compile("sim.c", &exe, false);
    let log = dir.join("flight.csv");
    let out = run(&exe, &[SCENARIO, BUNDLED, log.to_str().unwrap()]);
    let c = states(&out);
    assert_eq!(c.len(), 91, "0 to 90 s");
    assert_eq!(c, rust_states());
    // The log was written and finished (its sidecar says so).
    let meta = std::fs::read_to_string(dir.join("flight.csv.json")).unwrap();
    assert!(meta.contains("\"complete\": true"), "{meta}");
    // The verdict through the ABI: the square ends without a crash (it
    // has no [expect] checks; tests/it/c_abi.rs reads failing ones).
    assert!(
        out.contains(
            "verdict passed=1 outcome=0 class=0 exit=0 crashes=0 checks=0 failed=0 \
             simulated_us=90000000"
        ),
        "{out}"
    );
    // The report through the ABI is the CLI's for the same flight: the
    // same verdict, final state, timeline and log digest.
    let report: serde_json::Value = out
        .lines()
        .find_map(|l| l.strip_prefix("report "))
        .and_then(|l| l.split_once(' '))
        .map(|(len, json)| {
            assert_eq!(len.parse::<usize>().unwrap(), json.len());
            serde_json::from_str(json).unwrap()
        })
        .expect("a report line");
    let cli = Command::new(crate::common::LOCKSTEP)
        .current_dir(root())
        .args(["fly", SCENARIO, "--json", "--isolation", "in-process"])
        .args(["--autopilot", BUNDLED, "--log"])
        .arg(dir.join("cli.csv"))
        .output()
        .unwrap();
    assert!(cli.status.success());
    let cli: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    for key in [
        "report_version",
        "vehicle",
        "seed",
        "outcome",
        "exit_status",
        "simulated_us",
        "boundaries",
        "final_state",
        "verdict",
        "timeline",
        "digest",
        "isolated",
    ] {
        assert_eq!(report[key], cli[key], "{key}");
    }
    assert_eq!(
        report["digest"],
        lockstep_harness::io::digest::file_digest(&log).unwrap()
    );
    assert_eq!(report["log"]["path"], log.display().to_string());
    for line in [
        "expected LOCKSTEP_ERR_NOT_ENDED: the run is at t = 90.000000 s and has not ended: step it to its end (t = 90.000000 s) or end it with lockstep_sim_finish first",
        "expected LOCKSTEP_ERR_ENDED: the run was finished at t = 90.000000 s",
        "expected LOCKSTEP_ERR_STRUCT_SIZE: lockstep_truth.size is 16, but this library's lockstep_truth is 144 bytes: set size = sizeof(lockstep_truth) and build against the header of this library (ABI version 1)",
        "expected LOCKSTEP_ERR_NULL: `out` is NULL",
        "expected LOCKSTEP_ERR_ARGUMENT: command 99 is not a LOCKSTEP_COMMAND_* value (1 to 6)",
        "expected LOCKSTEP_ERR_ARGUMENT: battery 99, but the vehicle has 1 (0 to 0)",
        // Copying a message out does not replace the thread's last error.
        "expected LOCKSTEP_ERR_BUFFER: battery 99, but the vehicle has 1 (0 to 0)",
        "last error needs 43 bytes",
        "expected LOCKSTEP_ERR_NULL: `sim` is NULL",
        "expected LOCKSTEP_ERR_HANDLE: 0x1234 is not a live lockstep_sim handle (never created, already freed, or of another type)",
        "expected LOCKSTEP_ERR_CONFIG: cannot read scenario no/such/scenario.toml: No such file or directory (os error 2)",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
    // The double free and the stale handle after it.
    let stale = out
        .lines()
        .filter(|l| l.contains("is not a live lockstep_sim handle"))
        .count();
    assert_eq!(stale, 3, "{out}");
}

#[test]
fn mode_2_from_c_with_a_host_owned_plant_flies_the_same_flight() {
    let dir = TempDir::new("c-bridge");
    let exe = dir.join("bridge");
    compile("bridge.c", &exe, false);
    let out = run(&exe, &[SCENARIO, BUNDLED]);
    assert_eq!(states(&out), rust_states());
    for line in [
        "expected LOCKSTEP_ERR_ENDED: the run ended at t = 90.000000 s; nothing is left to step",
        "expected LOCKSTEP_ERR_UNSUPPORTED: plant faults (motors, batteries) act on the plant, which the host owns",
        "expected LOCKSTEP_ERR_ARGUMENT: 5 motor commands for 4 rotors",
        "expected LOCKSTEP_ERR_ARGUMENT: `wind_ned_mps[1]` is NaN, not a finite number",
        "is not a live lockstep_plant handle",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
}

#[test]
fn mode_3_from_c_steps_the_plant_alone_and_counts_its_work() {
    let dir = TempDir::new("c-plant");
    let exe = dir.join("plant");
    compile("plant.c", &exe, false);
    let out = run(&exe, &["iris", "rk4", "2000"]);
    assert!(
        out.contains("stats rhs_evals=8000 accepted=2000 rejected=0"),
        "{out}"
    );
    assert!(out.contains("time_us 2000000 "), "{out}");
    // Near hover: within 2 m of the 10 m it started at after 2 s.
    let alt: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("time_us 2000000 altitude "))
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((alt - 10.0).abs() < 2.0, "altitude {alt}");
    for line in [
        "expected LOCKSTEP_ERR_ARGUMENT: `commands[0]` is 1.5, outside 0..1",
        "expected LOCKSTEP_ERR_ARGUMENT: `commands[0]` is NaN, not a finite number",
        "expected LOCKSTEP_ERR_BUFFER: the state has 19 values; the buffer holds 3",
        "expected LOCKSTEP_ERR_ARGUMENT: `x[5]` is inf, not a finite number",
        "expected LOCKSTEP_ERR_ARGUMENT: no integrator named `no-such-method` (euler, rk4, bs32, dp54)",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
    // An adaptive method from C too.
    let out = run(&exe, &["hexa", "dp54", "500"]);
    assert!(out.contains("time_us 500000 "), "{out}");
}

/// The system of the C co-simulation host.
const C_WIND: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cosim/c_wind.toml");

#[test]
fn a_c_callback_is_a_cosimulation_participant() {
    let dir = TempDir::new("c-cosim");
    let exe = dir.join("cosim");
    compile("cosim.c", &exe, false);
    let out = run(&exe, &[C_WIND, BUNDLED]);
    assert!(out.contains("first step to 4000 us"), "{out}");
    assert!(
        out.contains("wind 3.000 0.000 0.000 m/s, 2000 calls"),
        "{out}"
    );
    for line in [
        "expected LOCKSTEP_ERR_CONFIG: external participant(s) not bound: gust",
        "expected LOCKSTEP_ERR_ARGUMENT: participant `iris` is not external: the system makes it",
        "has no participant `nobody`",
        "expected LOCKSTEP_ERR_ARGUMENT: participant `gust` is bound already",
        "expected LOCKSTEP_ERR_ARGUMENT: `gust`: participants are bound before the first step",
        "expected LOCKSTEP_ERR_ARGUMENT: no output `iris.nothing` in the system",
        "expected LOCKSTEP_ERR_BUFFER: `iris.position_ned_m` holds 3 values; the buffer 2",
        "expected LOCKSTEP_ERR_ENDED: the co-simulation ended at t = 10.000000 s",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
}

#[test]
fn cpp_raii_wrapper_flies_several_vehicles_at_once() {
    let dir = TempDir::new("cpp-fleet");
    let exe = dir.join("fleet");
    compile("fleet.cpp", &exe, false);
    let out = run(&exe, &[SCENARIO, BUNDLED, "3"]);
    assert!(out.contains("identical yes"), "{out}");
    assert_eq!(out.matches("end 90000000 position").count(), 3, "{out}");
    assert!(
        out.contains(
            "threw lockstep_sim_step: LOCKSTEP_ERR_ENDED: the run was finished at t = 90.000000 s"
        ),
        "{out}"
    );
}

#[test]
fn the_hosts_are_clean_under_address_and_undefined_behaviour_sanitizers() {
    let dir = TempDir::new("c-asan");
    for (source, args) in [
        ("sim.c", vec![SCENARIO, BUNDLED]),
        ("bridge.c", vec![SCENARIO, BUNDLED]),
        ("plant.c", vec!["iris", "rk4", "200"]),
        ("cosim.c", vec![C_WIND, BUNDLED]),
    ] {
        let exe = dir.join(source.replace(".c", ""));
        compile(source, &exe, true);
        run(&exe, &args);
    }
}

/// The report line of isolated.c's output.
fn report_of(out: &str) -> serde_json::Value {
    out.lines()
        .find_map(|l| l.strip_prefix("report "))
        .and_then(|l| l.split_once(' '))
        .map(|(_, json)| serde_json::from_str(json).unwrap())
        .unwrap_or_else(|| panic!("a report line in\n{out}"))
}

#[test]
fn liblockstep_so_alone_hosts_an_isolated_autopilot() {
    // The library copied alone into its own directory, the program into
    // another: no `lockstep` binary anywhere near, no environment naming a
    // host. The library runs itself as the host (`liblockstep.so --serve`).
    let dir = TempDir::new("c-isolated");
    let lib = dir.join("lib");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(lib_dir().join("liblockstep.so"), lib.join("liblockstep.so")).unwrap();
    let exe = bin.join("isolated");
    compile_against("isolated.c", &exe, false, &lib);
    let fly = |scenario: &str, autopilot: &str| {
        let o = Command::new(&exe)
            .args([scenario, autopilot, "5000000"])
            .current_dir(root())
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("LOCKSTEP_AUTOPILOT_HOST")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success() && out.ends_with("ok\n"),
            "{}: {out}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        out
    };
    let out = fly(SCENARIO, BUNDLED);
    assert!(!out.contains("stopped"), "{out}");
    let report = report_of(&out);
    assert_eq!(report["isolated"], true, "{out}");
    assert_eq!(report["simulated_us"], 5_000_000, "{out}");
    // A library that crashes in its step is a status in this program, which
    // goes on: the crash happened in the library's own host process.
    let idle = crate::common::idle_scenario(dir.path(), "idle.toml", 10.0, 10);
    let segv = broken("step_segv");
    let out = fly(idle.to_str().unwrap(), segv.to_str().unwrap());
    assert!(
        out.contains("stopped LOCKSTEP_ERR_AUTOPILOT ") && out.contains("SIGSEGV"),
        "{out}"
    );
    assert_eq!(report_of(&out)["isolated"], true, "{out}");
}

#[test]
fn liblockstep_so_run_as_a_program_says_what_it_is() {
    let o = Command::new(lib_dir().join("liblockstep.so"))
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "liblockstep.so: the lockstep harness's C library (include/lockstep/harness.h), \
             version {}; run as a program only by the library itself, to host an autopilot \
             in isolation\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}
