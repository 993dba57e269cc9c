//! Helpers shared by the integration tests: library paths, airframes, frames,
//! and the geometry used to check what the motors really produce.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use lockstep_abi::ffi::*;
use lockstep_abi::{Autopilot, AutopilotLibrary, config_zeroed};

pub const BUNDLED: &str = lockstep_c_examples::REFERENCE_AUTOPILOT;
pub const SINGLE_INSTANCE: &str = lockstep_c_examples::SINGLE_INSTANCE_AUTOPILOT;

/// Held by every test that creates instances of [`SINGLE_INSTANCE`] in this
/// process: the registry of live instances of a library that is not
/// re-entrant is process-wide, and the tests share one process.
pub fn single_instance_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed while holding it leaves no instance behind.
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
pub const PERIOD_US: u64 = 4000;
pub const GRAVITY: f32 = 9.80665;

pub use lockstep_c_examples::broken;

/// Rotors evenly spaced on a circle, first one at `first_deg` from forward,
/// alternating spin directions starting with +1 (counter-clockwise).
pub fn ring(n: usize, radius: f32, first_deg: f32) -> Vec<([f32; 3], i32)> {
    (0..n)
        .map(|i| {
            let a = (first_deg + 360.0 * i as f32 / n as f32).to_radians();
            (
                [radius * a.cos(), radius * a.sin(), 0.0],
                if i % 2 == 0 { 1 } else { -1 },
            )
        })
        .collect()
}

/// A symmetric quad X: front-right and rear-left spin +1, the others -1.
pub fn quad_x() -> Vec<([f32; 3], i32)> {
    let a = 0.18;
    vec![
        ([a, a, 0.0], 1),
        ([-a, -a, 0.0], 1),
        ([a, -a, 0.0], -1),
        ([-a, a, 0.0], -1),
    ]
}

pub fn config(
    rotors: &[([f32; 3], i32)],
    mass_kg: f32,
    max_thrust_n: f32,
) -> lockstep_autopilot_config {
    let mut c = config_zeroed();
    c.rotor_count = rotors.len() as u32;
    for (i, (pos, dir)) in rotors.iter().enumerate() {
        c.rotors[i] = lockstep_rotor_geometry {
            position_m: *pos,
            thrust_axis: [0.0, 0.0, -1.0],
            spin_dir: *dir,
            torque_coeff_m: 0.05,
            max_thrust_n,
        };
    }
    c.thrust_model_factor = 0.6;
    c.mass_kg = mass_kg;
    c.inertia_diag_kgm2 = [0.03, 0.03, 0.055];
    c.gravity_mps2 = GRAVITY;
    c.autopilot_period_us = PERIOD_US as u32;
    c.origin_lat_deg = 47.397742;
    c.origin_lon_deg = 8.545594;
    c.origin_alt_m = 488.0;
    c
}

pub fn load_bundled() -> AutopilotLibrary {
    AutopilotLibrary::load(BUNDLED).expect("the bundled autopilot passes the handshake")
}

/// Quaternion body->NED from roll, pitch, yaw (ZYX).
pub fn quat_rpy(roll: f32, pitch: f32, yaw: f32) -> [f32; 4] {
    let (sr, cr) = (roll * 0.5).sin_cos();
    let (sp, cp) = (pitch * 0.5).sin_cos();
    let (sy, cy) = (yaw * 0.5).sin_cos();
    [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]
}

/// A sensor frame at `t` with only the estimate fresh.
pub fn frame(t: u64, pos: [f32; 3], q: [f32; 4]) -> lockstep_sensor_frame {
    let mut f = lockstep_sensor_frame {
        time_us: t,
        fresh_mask: LOCKSTEP_FRESH_ESTIMATE,
        ..Default::default()
    };
    f.estimate.timestamp_us = t;
    f.estimate.position_ned_m = pos;
    f.estimate.attitude_q = q;
    f
}

pub fn with_command(
    mut f: lockstep_sensor_frame,
    arm: u32,
    mode: u32,
    mission_start: u32,
) -> lockstep_sensor_frame {
    f.fresh_mask |= LOCKSTEP_FRESH_COMMANDS;
    f.commands = lockstep_commands {
        timestamp_us: f.time_us,
        arm_request: arm,
        mode_request: mode,
        mission_start,
        ..lockstep_commands::default()
    };
    f
}

/// Steps and returns the actuator frame, panicking with the error.
pub fn step(ap: &mut Autopilot, f: &lockstep_sensor_frame) -> lockstep_actuator_frame {
    let mut out = lockstep_actuator_frame::default();
    ap.step(f.time_us, f, &mut out)
        .unwrap_or_else(|e| panic!("step at {}: {e}", f.time_us));
    out
}

/// Rotor thrusts (N) the motor commands produce per the config's thrust curve.
pub fn thrusts(cfg: &lockstep_autopilot_config, out: &lockstep_actuator_frame) -> Vec<f64> {
    let f = cfg.thrust_model_factor as f64;
    (0..cfg.rotor_count as usize)
        .map(|i| {
            let u = out.motors[i] as f64;
            cfg.rotors[i].max_thrust_n as f64 * (f * u * u + (1.0 - f) * u)
        })
        .collect()
}

/// Body torque (N*m) and collective thrust along -z (N) of rotor thrusts,
/// computed independently from the geometry: sum of r x F plus reaction
/// torques -spin * k * T * axis.
pub fn wrench(cfg: &lockstep_autopilot_config, t: &[f64]) -> ([f64; 3], f64) {
    let mut tau = [0.0f64; 3];
    let mut thrust = 0.0;
    for (i, ti) in t.iter().enumerate() {
        let r = cfg.rotors[i];
        let p = r.position_m.map(f64::from);
        let a = r.thrust_axis.map(f64::from);
        let force = a.map(|x| x * ti);
        let m = [
            p[1] * force[2] - p[2] * force[1],
            p[2] * force[0] - p[0] * force[2],
            p[0] * force[1] - p[1] * force[0],
        ];
        for k in 0..3 {
            tau[k] += m[k] - r.spin_dir as f64 * r.torque_coeff_m as f64 * ti * a[k];
        }
        thrust += -a[2] * ti;
    }
    (tau, thrust)
}

/// Latitude/longitude of a local north/east offset from the config origin, on
/// the WGS-84 ellipsoid's tangent plane at the origin.
pub fn geo_of(cfg: &lockstep_autopilot_config, north_m: f64, east_m: f64) -> (f64, f64) {
    let a = 6378137.0f64;
    let f = 1.0 / 298.257223563;
    let e2 = f * (2.0 - f);
    let phi = cfg.origin_lat_deg.to_radians();
    let w = (1.0 - e2 * phi.sin().powi(2)).sqrt();
    let rn = a / w;
    let rm = a * (1.0 - e2) / (w * w * w);
    let h = cfg.origin_alt_m;
    (
        cfg.origin_lat_deg + (north_m / (rm + h)).to_degrees(),
        cfg.origin_lon_deg + (east_m / ((rn + h) * phi.cos())).to_degrees(),
    )
}

/// A mission item at a local offset, altitude relative to home.
pub fn item(
    cfg: &lockstep_autopilot_config,
    command: u32,
    north_m: f64,
    east_m: f64,
    alt_m: f32,
    hold_s: f32,
) -> lockstep_mission_item {
    let (lat_deg, lon_deg) = if command == LOCKSTEP_MAV_CMD_NAV_TAKEOFF {
        (0.0, 0.0)
    } else {
        geo_of(cfg, north_m, east_m)
    };
    lockstep_mission_item {
        command,
        frame: LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT,
        param1: hold_s,
        lat_deg,
        lon_deg,
        alt_m,
        autocontinue: 1,
        ..Default::default()
    }
}

/// The example scenario (examples/scenarios/square.toml) with text edits
/// applied; relative paths in it stay valid.
pub fn example_scenario(edits: &[(&str, &str)]) -> lockstep_harness::inputs::scenario::Scenario {
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml");
    let mut text = std::fs::read_to_string(&example).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    lockstep_harness::inputs::scenario::Scenario::from_toml_str(&text, example).unwrap()
}

// ---------------------------------------------------------------------------
// Running the command line, scratch directories, flight logs read back.

/// The `lockstep` executable cargo built for these tests.
pub const LOCKSTEP: &str = env!("CARGO_BIN_EXE_lockstep");
/// The isolated mode's host: the `lockstep` binary itself (`lockstep
/// --serve ...`).
pub const HOST: &str = LOCKSTEP;

/// A fresh, empty directory under the system's temp dir, world-traversable,
/// removed (with everything in it) on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lockstep-test-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        TempDir(dir)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }

    pub fn join(&self, p: impl AsRef<std::path::Path>) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How a finished command ended and what it printed.
#[derive(Debug)]
pub struct Ran {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub wall: std::time::Duration,
}

impl Ran {
    /// stdout without the summary's lines that vary from run to run (wall
    /// time) or that `tests/fly_cli.rs` checks on their own (the digest and
    /// the timeline), so that other tests can compare the rest exactly.
    pub fn summary(&self) -> String {
        without_report_lines(&self.stdout)
    }

    /// The exit code; panics (with the output) when a signal ended it.
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("ended by {:?}\n{self}", self.status))
    }
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {:?}\n--- stdout\n{}--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs a prepared command to its end.
pub fn ran(cmd: &mut std::process::Command) -> Ran {
    let start = std::time::Instant::now();
    let out = cmd.output().expect("run lockstep");
    Ran {
        status: out.status,
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        wall: start.elapsed(),
    }
}

/// `lockstep ARGS...`.
pub fn lockstep<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Ran {
    ran(std::process::Command::new(LOCKSTEP).args(args))
}

/// A scenario for the broken fixtures written into `dir`: the Iris idling
/// for `duration_s` without a mission, physics 1 kHz, autopilot 250 Hz, a
/// log at `log_hz`.
pub fn idle_scenario(dir: &std::path::Path, name: &str, duration_s: f64, log_hz: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "schema_version = 1\n\
             description = \"idle, no mission\"\n\
             \n\
             [simulation]\n\
             seed = 7\n\
             duration_s = {duration_s:?}\n\
             integrator = \"rk4\"\n\
             \n\
             [cadences]\n\
             physics = {{ rate_hz = 1000 }}\n\
             autopilot = {{ rate_hz = 250 }}\n\
             log = {{ rate_hz = {log_hz} }}\n\
             \n\
             [vehicle]\n\
             spec = \"iris\"\n"
        ),
    )
    .unwrap();
    path
}

/// Checks the sidecar of a log of the idle scenario (Iris, seed 7): it
/// exists from the log's creation, whatever happened since.
pub fn assert_idle_meta(l: &Log) {
    let m = l.meta.as_ref().expect("a sidecar next to the log");
    assert_eq!(m["log_schema_version"], 3);
    assert_eq!(m["spec"], "iris");
    assert_eq!(m["seed"], 7);
    assert_eq!(m["rotors"], 4);
    assert_eq!(m["batteries"], 1);
    let names: Vec<&str> = m["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        l.columns.iter().map(String::as_str).collect::<Vec<_>>()
    );
}

/// A flight log read back, every line checked to be whole: the file ends
/// with a newline, and every row has the header's column count.
#[derive(Debug)]
pub struct Log {
    pub text: String,
    /// The JSON sidecar `<log>.json`, when there is one.
    pub meta: Option<serde_json::Value>,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Log {
    pub fn read(path: &std::path::Path) -> Log {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        assert!(
            text.ends_with('\n'),
            "{} does not end with a newline: ...{:?}",
            path.display(),
            &text[text.len().saturating_sub(80)..]
        );
        let mut lines = text.lines();
        let mut sidecar = path.as_os_str().to_owned();
        sidecar.push(".json");
        let meta = std::fs::read_to_string(&sidecar)
            .ok()
            .map(|t| serde_json::from_str(&t).expect("the sidecar is JSON"));
        let columns: Vec<String> = lines
            .next()
            .expect("a header line")
            .split(',')
            .map(str::to_string)
            .collect();
        assert_eq!(columns[0], "time_us");
        let rows: Vec<Vec<String>> = lines
            .enumerate()
            .map(|(i, l)| {
                let row: Vec<String> = l.split(',').map(str::to_string).collect();
                assert_eq!(
                    row.len(),
                    columns.len(),
                    "{} row {i} is not whole: {l:?}",
                    path.display()
                );
                row
            })
            .collect();
        Log {
            text,
            meta,
            columns,
            rows,
        }
    }

    /// The rows' times.
    pub fn times_us(&self) -> Vec<u64> {
        self.rows.iter().map(|r| r[0].parse().unwrap()).collect()
    }

    /// The last row's time.
    pub fn last_time_us(&self) -> Option<u64> {
        self.times_us().last().copied()
    }

    /// One column's values as numbers.
    pub fn column(&self, name: &str) -> Vec<f64> {
        let i = self
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        self.rows.iter().map(|r| r[i].parse().unwrap()).collect()
    }
}

/// `from_us, from_us + step_us, ...` up to `to_us` inclusive.
pub fn times(from_us: u64, to_us: u64, step_us: u64) -> Vec<u64> {
    (from_us..=to_us).step_by(step_us as usize).collect()
}

/// The `log ...` line of `lockstep run`'s summary for `path`: its row count
/// and the time of the last row in microseconds (written `t = S.FFFFFF s`,
/// the exact microsecond), parsed.
pub fn summary_log_line(stdout: &str, path: &std::path::Path) -> (u64, Option<u64>) {
    let prefix = format!("log           {} (", path.display());
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in\n{stdout}"));
    let inner = line[prefix.len()..].strip_suffix(')').expect(line);
    let (rows, last) = match inner.split_once(" rows, the last at t = ") {
        Some((rows, last)) => {
            let secs = last.strip_suffix(" s").expect(line);
            (rows, Some(micros(secs)))
        }
        None => (inner.strip_suffix(" rows").expect(line), None),
    };
    (rows.parse().expect(line), last)
}

/// A time printed as `S.FFFFFF` (seconds with six decimals), in
/// microseconds; panics on any other form.
pub fn micros(text: &str) -> u64 {
    let (s, f) = text.split_once('.').expect(text);
    assert_eq!(f.len(), 6, "{text}");
    assert!(
        !s.is_empty() && s.bytes().chain(f.bytes()).all(|b| b.is_ascii_digit()),
        "{text}"
    );
    s.parse::<u64>().unwrap() * 1_000_000 + f.parse::<u64>().unwrap()
}

/// The lines `lockstep run` prints before the flight of the idle scenario
/// (see [`idle_scenario`]) with the library at `autopilot`, isolated or
/// (`in_process`) not.
pub fn idle_header(
    scenario: &std::path::Path,
    autopilot: &std::path::Path,
    in_process: bool,
) -> String {
    format!(
        "scenario      {}\n              idle, no mission\nautopilot     {}{}\n\
         vehicle       iris (4 rotors)\nseed          7\n",
        scenario.display(),
        autopilot.display(),
        if in_process { " (in-process)" } else { "" }
    )
}

/// The second line of `lockstep run`'s stderr when building the run failed
/// with an error of the autopilot library at `path`.
pub fn library_line(path: &std::path::Path) -> String {
    format!("              autopilot library: {}\n", path.display())
}

/// What `lockstep run` writes on stderr when building the run fails with
/// an autopilot error `message`: the message, then the library line unless
/// the message already names the library.
pub fn refused(message: &str, path: &std::path::Path) -> String {
    if message.contains(&path.display().to_string()) {
        format!("lockstep run: {message}\n")
    } else {
        format!("lockstep run: {message}\n{}", library_line(path))
    }
}

/// The system calls the tests need and the standard library lacks, through
/// `libc` (a dev-dependency).
#[cfg(target_os = "linux")]
pub mod sys {
    use std::ffi::c_int;

    fn check(rc: c_int) -> std::io::Result<()> {
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn both(value: u64) -> libc::rlimit {
        libc::rlimit {
            rlim_cur: value as libc::rlim_t,
            rlim_max: value as libc::rlim_t,
        }
    }

    /// Sends `sig` to the process `pid`.
    pub fn send(pid: u32, sig: c_int) -> std::io::Result<()> {
        // SAFETY: kill(2) takes plain integers.
        check(unsafe { libc::kill(pid as libc::pid_t, sig) })
    }

    /// Sends `sig` to every process of the group `pgid`, as a terminal's
    /// Ctrl-C or GNU `timeout` does.
    pub fn send_group(pgid: u32, sig: c_int) -> std::io::Result<()> {
        // SAFETY: kill(2) takes plain integers.
        check(unsafe { libc::kill(-(pgid as libc::pid_t), sig) })
    }

    /// Turns core dumps off (both limits); async-signal-safe (for
    /// `pre_exec`).
    pub fn no_core_dumps() -> std::io::Result<()> {
        // SAFETY: setrlimit(2) reads the struct, which lives on this stack.
        check(unsafe { libc::setrlimit(libc::RLIMIT_CORE, &both(0)) })
    }

    /// Limits the size of files this process writes to `bytes` (both
    /// limits); async-signal-safe (for `pre_exec`).
    pub fn limit_file_size(bytes: u64) -> std::io::Result<()> {
        // SAFETY: setrlimit(2) reads the struct, which lives on this stack.
        check(unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &both(bytes)) })
    }

    /// Ignores `sig` (inherited across exec); async-signal-safe.
    pub fn ignore(sig: c_int) -> std::io::Result<()> {
        // SAFETY: signal(2) with SIG_IGN installs no code.
        if unsafe { libc::signal(sig, libc::SIG_IGN) } == libc::SIG_ERR {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// `stdout` of `fly`/`run` without its wall-time, digest and timeline lines.
pub fn without_report_lines(stdout: &str) -> String {
    let mut out = String::new();
    let mut in_timeline = false;
    for line in stdout.split_inclusive('\n') {
        if line.starts_with("timeline ") {
            in_timeline = true;
            continue;
        }
        if in_timeline && line.starts_with("              ") {
            continue;
        }
        in_timeline = false;
        if line.starts_with("wall time ") || line.starts_with("digest ") {
            continue;
        }
        out.push_str(line);
    }
    out
}

/// The head of the fleet scenarios the tests write: the seed, the
/// duration, a 50 Hz log and the origin in Zurich (the sections after
/// `[world]` are the test's).
pub fn fleet_head(seed: u64, duration_s: f64) -> String {
    format!(
        "schema_version = 1\n[simulation]\nseed = {seed}\nduration_s = {duration_s:?}\n\
         [cadences]\nlog = {{ rate_hz = 50 }}\n[world]\norigin_lat_deg = 47.397742\n\
         origin_lon_deg = 8.545594\norigin_alt_m = 488.0\n"
    )
}

/// The repository's `examples/` directory.
pub fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// What became of a run whose child process was signalled.
#[derive(Debug)]
pub struct Signalled {
    /// The child's process id (from the run's first stderr line).
    pub pid: u32,
    pub status: std::process::ExitStatus,
    /// From the signal to the run's end (its outputs written: plots and
    /// pages take a debug build a second or more).
    pub took: std::time::Duration,
    /// From the signal to the signalled process gone: the run noticed the
    /// loss and reaped it, before writing its outputs.
    pub noticed: std::time::Duration,
    /// The run's stderr after its first line.
    pub stderr: Vec<String>,
}

/// Starts `cmd` (stderr piped), whose first stderr line is `<prefix><pid>`
/// of a process it started; after 2.5 s sends `signal` to that process and
/// waits (at most 6 s) for the run to end, noting when the signalled
/// process was gone (reaped by the run: a killed child stays a zombie, and
/// a stopped one stays, until then).
pub fn signal_its_child(cmd: &mut std::process::Command, prefix: &str, signal: i32) -> Signalled {
    use std::io::{BufRead, BufReader};
    use std::time::{Duration, Instant};
    let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let pid: u32 = first
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{first}"))
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert!(child.try_wait().unwrap().is_none(), "the run ended early");
    sys::send(pid, signal).unwrap();
    let sent = Instant::now();
    let mut noticed = None;
    let status = loop {
        if noticed.is_none() && sys::send(pid, 0).is_err() {
            noticed = Some(sent.elapsed());
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(sent.elapsed() < Duration::from_secs(6), "no end within 6 s");
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = sent.elapsed();
    Signalled {
        pid,
        status,
        took,
        noticed: noticed.unwrap_or(took),
        stderr: lines.map_while(Result::ok).collect(),
    }
}

/// `dir/system.toml`: a co-simulation of `duration_s` whose participants
/// are the example's vehicle (examples/cosim/vehicle.toml), each named
/// and given the extra lines with it; its path.
pub fn vehicles_system(dir: &Path, duration_s: f64, vehicles: &[(&str, &str)]) -> PathBuf {
    let scenario = examples().join("cosim/vehicle.toml");
    let mut text =
        format!("schema_version = 1\n[cosim]\nstep_us = 4000\nduration_s = {duration_s:?}\n");
    for (name, extra) in vehicles {
        text += &format!(
            "[[participants]]\nname = \"{name}\"\nkind = \"vehicle\"\nscenario = \"{}\"\n{extra}",
            scenario.display()
        );
    }
    let path = dir.join("system.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `lockstep cosim SYSTEM --out OUT --isolation in-process`.
pub fn cosim_in_process(system: &Path, out: &Path) -> Ran {
    lockstep(&[
        Path::new("cosim"),
        system,
        Path::new("--out"),
        out,
        Path::new("--isolation"),
        Path::new("in-process"),
    ])
}
