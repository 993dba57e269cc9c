//! Distributed runs over zenoh on loopback (feature `distributed`): bit
//! identity with one process (vehicles moving between secondaries), peers
//! lost by kill -9 or SIGSTOP stopping every other peer within the lease
//! and a second with complete logs, pause and resume.
#![cfg(feature = "distributed")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::sys as sig;
use crate::common::{BUNDLED, LOCKSTEP, TempDir, lockstep};

const LEASE_S: f64 = 1.0;

fn swarm() -> PathBuf {
    crate::common::examples().join("scenarios/swarm.toml")
}

/// The swarm flown in one process for `duration` seconds into `out`: its
/// JSON report.
fn single_process(out: &Path, duration: &str) -> serde_json::Value {
    let r = lockstep(&[
        "fly",
        swarm().to_str().unwrap(),
        "--autopilot",
        BUNDLED,
        "--isolation",
        "in-process",
        "--duration",
        duration,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    // The verdicts fail before the landings: exit status 3.
    assert_eq!(r.code(), 3, "{}", r.stderr);
    report(&r.stdout)
}

/// A free loopback port.
pub(crate) fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) struct Run {
    session: String,
    endpoint: String,
    pub(crate) dir: TempDir,
}

impl Run {
    pub(crate) fn new(name: &str) -> Run {
        let dir = TempDir::new(name);
        Run {
            session: format!("{name}-{}", std::process::id()),
            endpoint: format!("tcp/127.0.0.1:{}", port()),
            dir,
        }
    }

    fn net(&self, listen: bool) -> Vec<String> {
        vec![
            "--network-session".into(),
            self.session.clone(),
            if listen {
                "--network-listen".into()
            } else {
                "--network-connect".into()
            },
            self.endpoint.clone(),
            "--network-lease".into(),
            LEASE_S.to_string(),
            "--network-wait".into(),
            "60".into(),
        ]
    }

    fn primary(&self, n: u32, extra: &[&str]) -> Child {
        self.primary_of(&swarm(), n, extra)
    }

    /// A primary of `scenario` with `n` secondaries, its logs in DIR/out.
    pub(crate) fn primary_of(&self, scenario: &Path, n: u32, extra: &[&str]) -> Child {
        let mut args: Vec<String> = vec![
            "fly".into(),
            scenario.display().to_string(),
            "--autopilot".into(),
            BUNDLED.into(),
            "--isolation".into(),
            "in-process".into(),
            "--network-role".into(),
            "primary".into(),
            "--network-secondaries".into(),
            n.to_string(),
            "--out".into(),
            self.dir.join("out").display().to_string(),
            "--json".into(),
        ];
        args.extend(self.net(true));
        args.extend(extra.iter().map(|s| s.to_string()));
        spawn(&args)
    }

    pub(crate) fn secondary(&self) -> Child {
        let mut args: Vec<String> = vec!["fly".into(), "--network-role".into(), "secondary".into()];
        args.extend(self.net(false));
        spawn(&args)
    }
}

fn spawn(args: &[String]) -> Child {
    Command::new(LOCKSTEP)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `c` at most `limit`; its status code and output.
pub(crate) fn finish(mut c: Child, limit: Duration) -> (Option<i32>, String, String, Duration) {
    let start = Instant::now();
    loop {
        if c.try_wait().unwrap().is_some() {
            let elapsed = start.elapsed();
            let out = c.wait_with_output().unwrap();
            return (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
                elapsed,
            );
        }
        if start.elapsed() > limit {
            let _ = c.kill();
            let out = c.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The primary's JSON report, once it has printed it.
pub(crate) fn report(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Waits until the primary has written rows for a few simulated seconds.
fn wait_for_rows(run: &Run) {
    let log = run.dir.join("out").join("lane00.csv");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() > 40) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no rows in {}", log.display());
}

/// Every log ends at the same boundary and its sidecar says it is
/// complete with the rows on disk.
fn assert_complete_logs(dir: &Path) {
    let mut last = None;
    for i in 0..16 {
        let csv = dir.join(format!("lane{i:02}.csv"));
        let text = std::fs::read_to_string(&csv).unwrap();
        let rows = text.lines().count() as u64 - 1;
        let t = text
            .lines()
            .last()
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string();
        assert_eq!(*last.get_or_insert(t.clone()), t, "{}", csv.display());
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("lane{i:02}.csv.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(meta["complete"], true, "{meta}");
        assert_eq!(meta["rows"], rows, "{meta}");
    }
}

#[test]
fn two_secondaries_on_loopback_give_the_single_process_logs_with_migrations() {
    let run = Run::new("dist_identity");
    let p = run.primary(2, &["--duration", "36"]);
    let s = [run.secondary(), run.secondary()];
    let (code, stdout, stderr, _) = finish(p, Duration::from_secs(300));
    for c in s {
        let (code, _, err, _) = finish(c, Duration::from_secs(30));
        assert_eq!(code, Some(0), "{err}");
    }
    // The verdicts fail (36 s is before the landings): exit status 3.
    assert_eq!(code, Some(3), "{stderr}");
    let j = report(&stdout);
    assert_eq!(j["run"]["mode"], "distributed");
    assert!(
        j["run"]["migrations"].as_u64().unwrap() >= 16,
        "{}",
        j["run"]
    );
    assert_eq!(j["run"]["refused_acks"], 0);
    // Where the rounds' time went: the parts add up to the rounds' time,
    // at least half the rounds times the median round (the other half are
    // longer), within the run's wall time; the secondaries' work came
    // through their acks.
    let parts = &j["run"]["round_parts_s"];
    let part = |k: &str| parts[k].as_f64().unwrap_or_else(|| panic!("{k}: {parts}"));
    let total: f64 = ["send", "secondary", "transit", "checks", "rows"]
        .iter()
        .map(|k| part(k))
        .sum();
    let rounds = j["lookahead"]["rounds"].as_f64().unwrap();
    let median = j["run"]["round_latency_us"]["p50"].as_f64().unwrap() * 1e-6;
    assert!(total >= 0.45 * rounds * median, "{parts} {j}");
    assert!(total < j["wall_time_s"].as_f64().unwrap(), "{parts} {j}");
    assert!(part("secondary") > 0.0, "{parts}");
    let single = run.dir.join("single");
    let one = single_process(&single, "36");
    for k in ["encounters", "closest", "collisions", "simulated_us"] {
        assert_eq!(one[k], j[k], "{k}");
    }
    assert_same_vehicles(&one, &j);
    for i in 0..16 {
        let name = format!("lane{i:02}.csv");
        assert_eq!(
            std::fs::read(single.join(&name)).unwrap(),
            std::fs::read(run.dir.join("out").join(&name)).unwrap(),
            "{name}"
        );
    }
}

/// Starts a run, waits until it flies, hurts one peer with `signal`, and
/// checks every other peer stops within the lease and a second, non-zero,
/// naming the peer lost.
fn lose_a_peer(name: &str, victim_is_primary: bool, signal: i32) {
    let run = Run::new(name);
    let p = run.primary(2, &[]);
    let s0 = run.secondary();
    let s1 = run.secondary();
    wait_for_rows(&run);
    let limit = Duration::from_secs_f64(LEASE_S + 1.0);
    if victim_is_primary {
        sig::send(p.id(), signal).unwrap();
        let hurt = Instant::now();
        for s in [s0, s1] {
            let (code, _, err, _) = finish(s, Duration::from_secs(10));
            let took = hurt.elapsed();
            assert!(took <= limit, "a secondary took {took:?}: {err}");
            assert_eq!(code, Some(1), "{err}");
            assert!(
                err.contains("the primary left: its liveliness token vanished"),
                "{err}"
            );
        }
        let mut p = p;
        let _ = p.kill();
        let _ = p.wait();
    } else {
        sig::send(s1.id(), signal).unwrap();
        let hurt = Instant::now();
        let (code, _, err, _) = finish(p, Duration::from_secs(10));
        let took = hurt.elapsed();
        assert!(took <= limit, "the primary took {took:?}: {err}");
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("lockstep fly: secondary ")
                && err.contains(" left: its liveliness token vanished"),
            "{err}"
        );
        assert_complete_logs(&run.dir.join("out"));
        let (code, _, err, _) = finish(s0, Duration::from_secs(10));
        let took = hurt.elapsed();
        assert!(took <= limit, "the other secondary took {took:?}: {err}");
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("the primary stopped the run: secondary "),
            "{err}"
        );
        let mut s1 = s1;
        let _ = sig::send(s1.id(), libc::SIGKILL);
        let _ = s1.wait();
    }
}

#[test]
fn a_secondary_killed_stops_every_peer_with_complete_logs() {
    lose_a_peer("dist_kill_secondary", false, libc::SIGKILL);
}

#[test]
fn a_secondary_stopped_stops_every_peer_with_complete_logs() {
    lose_a_peer("dist_stop_secondary", false, libc::SIGSTOP);
}

#[test]
fn the_primary_killed_stops_every_secondary() {
    lose_a_peer("dist_kill_primary", true, libc::SIGKILL);
}

#[test]
fn pause_and_resume_reach_every_secondary_and_change_nothing() {
    let run = Run::new("dist_pause");
    // Long enough to be still flying when the first rows reach the disk
    // (the log is written in blocks).
    let p = run.primary(2, &["--duration", "40"]);
    let s = [run.secondary(), run.secondary()];
    wait_for_rows(&run);
    let ctl = |cmd: &str| {
        let mut args = vec!["ctl".to_string(), cmd.to_string()];
        args.extend(run.net(false));
        let r = lockstep(&args);
        assert_eq!(r.code(), 0, "{}", r.stderr);
        assert_eq!(r.stdout.trim(), format!("{cmd}: ok"));
    };
    let mut p = p;
    ctl("pause");
    // The primary says where it paused; while paused, no lane logs a row
    // past that time. (Rows from before it may still reach the disk: the
    // log is written in blocks by a thread of its own, and counting lines
    // failed on a loaded machine.)
    let mut before = until_line(&mut p, "lockstep fly: paused at t = ");
    let paused_us = micros_of(before.lines().last().unwrap());
    let out = run.dir.join("out");
    let end = Instant::now() + Duration::from_secs(1);
    let mut checked = 0;
    while Instant::now() < end {
        for lane in ["lane00.csv", "lane01.csv"] {
            let last = last_row_time(&out.join(lane));
            assert!(
                last <= Some(paused_us),
                "{lane}: a row at {last:?} us, paused at {paused_us} us"
            );
            checked += 1;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(checked >= 10);
    ctl("resume");
    let (code, stdout, stderr, _) = finish(p, Duration::from_secs(300));
    before.push_str(&stderr);
    let stderr = before;
    for c in s {
        assert_eq!(finish(c, Duration::from_secs(30)).0, Some(0));
    }
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("lockstep fly: resumed at t = "), "{stderr}");
    let j = report(&stdout);
    let one = single_process(&run.dir.join("single"), "40");
    assert_same_vehicles(&one, &j);
}

/// Reads `c`'s stderr up to and with the line that starts with `prefix`
/// (a byte at a time: the rest stays in the pipe for [`finish`]).
fn until_line(c: &mut Child, prefix: &str) -> String {
    use std::io::Read;
    let pipe = c.stderr.as_mut().unwrap();
    let mut text = Vec::new();
    let mut byte = [0u8];
    loop {
        assert_eq!(
            pipe.read(&mut byte).unwrap(),
            1,
            "stderr ended: {}",
            String::from_utf8_lossy(&text)
        );
        text.push(byte[0]);
        let s = String::from_utf8_lossy(&text);
        if byte[0] == b'\n' && s.lines().last().is_some_and(|l| l.starts_with(prefix)) {
            return s.into_owned();
        }
    }
}

/// The µs of "... t = 12.345000 s".
fn micros_of(line: &str) -> u64 {
    let t = line.rsplit("t = ").next().unwrap().trim_end_matches(" s");
    let (s, us) = t.split_once('.').unwrap();
    s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap()
}

/// The time of the last whole row of a CSV log (its first column), if any.
fn last_row_time(log: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    whole
        .lines()
        .skip(1)
        .last()
        .and_then(|row| row.split(',').next()?.parse().ok())
}

/// The vehicles' outcomes and log digests are the same (their log paths
/// differ).
fn assert_same_vehicles(a: &serde_json::Value, b: &serde_json::Value) {
    let strip = |v: &serde_json::Value| {
        let mut v = v["vehicles"].clone();
        for x in v.as_array_mut().unwrap() {
            x.as_object_mut().unwrap().remove("log");
        }
        v
    };
    assert_eq!(strip(a), strip(b));
}

#[test]
fn roles_refuse_what_is_not_theirs() {
    let r = lockstep(&["fly", "--network-role", "PRIMARY"]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: --network-role primary needs --network-secondaries N (at least 1)"
    );
    let r = lockstep(&[
        "fly",
        "--network-role",
        "primary",
        "--network-secondaries",
        "1",
    ]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: the primary flies a fleet scenario: give its path"
    );
    let s = swarm();
    let r = lockstep(&["fly", s.to_str().unwrap(), "--network-role", "secondary"]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: a secondary reads the scenario from the primary: give none"
    );
    // Nobody there: the secondary gives up after --network-wait.
    let run = Run::new("dist_alone");
    let mut args = vec![
        "fly".to_string(),
        "--network-role".into(),
        "secondary".into(),
    ];
    args.extend(run.net(false));
    let n = args.len();
    args[n - 1] = "1".into();
    let r = lockstep(&args);
    assert_eq!(r.code(), 1);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "lockstep fly: the transport failed: no primary in session `{}` after 1 s",
            run.session
        )
    );
}
