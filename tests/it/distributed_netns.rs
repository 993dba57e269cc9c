//! A distributed run across two Linux network namespaces joined by a veth
//! pair (feature `distributed`): the primary in one, its two secondaries in
//! the other, zenoh over the pair, `tc netem` adding 0.5 ms each way where
//! the kernel has it, else `benches/delay-relay` between the secondaries and
//! the primary holding every byte 0.5 ms each way. The test makes the
//! namespaces and removes them; where they cannot be made (no privilege),
//! it says so and checks nothing else. The logs equal the fleet's in one
//! process byte for byte.
#![cfg(feature = "distributed")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BUNDLED, LOCKSTEP, TempDir, examples, lockstep};

/// The delay each way between the namespaces, ms.
const DELAY_MS: f64 = 0.5;

/// Two namespaces joined by a veth pair, removed on drop.
struct Pair {
    names: [String; 2],
    addresses: [String; 2],
    /// Why the pair has no netem delay, when it has none.
    no_netem: Option<String>,
    /// The user-space delay (`benches/delay-relay`) in namespace 1, when
    /// the pair has no netem, and its report.
    relay: Option<(Child, BufReader<ChildStdout>)>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

impl Pair {
    fn new(delay_ms: f64) -> Result<Pair, String> {
        let id = std::process::id();
        let names = [format!("ls{id}a"), format!("ls{id}b")];
        let veth = [format!("lv{id}a"), format!("lv{id}b")];
        let net = format!("10.{}.{}", 100 + (id >> 8) % 100, id % 250);
        let addresses = [format!("{net}.1"), format!("{net}.2")];
        ip(&["netns", "add", &names[0]])?;
        let pair = Pair {
            names: names.clone(),
            addresses,
            no_netem: None,
            relay: None,
        };
        ip(&["netns", "add", &names[1]])?;
        ip(&[
            "link", "add", &veth[0], "type", "veth", "peer", "name", &veth[1],
        ])?;
        let mut pair = pair;
        for k in 0..2 {
            ip(&["link", "set", &veth[k], "netns", &names[k]])?;
            let addr = format!("{}/24", pair.addresses[k]);
            ip(&["-n", &names[k], "addr", "add", &addr, "dev", &veth[k]])?;
            ip(&["-n", &names[k], "link", "set", &veth[k], "up"])?;
            ip(&["-n", &names[k], "link", "set", "lo", "up"])?;
            let delay = format!("{delay_ms}ms");
            let o = Command::new("ip")
                .args(["netns", "exec", &names[k], "tc", "qdisc", "add", "dev"])
                .args([&veth[k], "root", "netem", "delay", &delay])
                .output()
                .map_err(|e| format!("tc: {e}"))?;
            if !o.status.success() && pair.no_netem.is_none() {
                pair.no_netem = Some(String::from_utf8_lossy(&o.stderr).trim().to_string());
            }
        }
        Ok(pair)
    }

    /// Starts `benches/delay-relay` in namespace 1, listening on its
    /// loopback at `port` and passing every byte to `target` (in namespace
    /// 0) `delay_ms` later, each way; returns the endpoint to connect to.
    fn relay(&mut self, port: u16, target: &str, delay_ms: f64) -> Result<String, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/delay-relay");
        let mut c = Command::new("ip")
            .args(["netns", "exec", &self.names[1]])
            .arg(&script)
            .args([
                format!("127.0.0.1:{port}"),
                target.into(),
                delay_ms.to_string(),
            ])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", script.display()))?;
        let mut out = BufReader::new(c.stdout.take().unwrap());
        let mut line = String::new();
        let _ = out.read_line(&mut line);
        self.relay = Some((c, out));
        if line.trim() == "listening" {
            Ok(format!("tcp/127.0.0.1:{port}"))
        } else {
            Err(format!("{} did not start", script.display()))
        }
    }

    /// The relay's report, `lines` lines (one a direction of each ended
    /// connection; fewer if 10 s pass without one), then stops it.
    fn relay_report(&mut self, lines: usize) -> Vec<String> {
        let Some((mut c, out)) = self.relay.take() else {
            return Vec::new();
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        let report = (0..lines)
            .map_while(|_| rx.recv_timeout(Duration::from_secs(10)).ok())
            .collect();
        let _ = c.kill();
        let _ = c.wait();
        report
    }

    /// `lockstep ARGS` in namespace `k`.
    fn lockstep(&self, k: usize, args: &[String]) -> std::process::Child {
        Command::new("ip")
            .args(["netns", "exec", &self.names[k], LOCKSTEP])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        if let Some((mut relay, _)) = self.relay.take() {
            let _ = relay.kill();
            let _ = relay.wait();
        }
        // The veth pair goes with its namespaces.
        for n in &self.names {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

fn wait(c: std::process::Child, limit: Duration) -> (Option<i32>, String, String) {
    let start = Instant::now();
    let mut c = c;
    while c.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = c.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = c.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn logs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn secondaries_in_another_namespace_give_the_single_process_logs() {
    let mut pair = match Pair::new(DELAY_MS) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: cannot make network namespaces here ({e})");
            return;
        }
    };
    let listen = format!("tcp/{}:7447", pair.addresses[0]);
    let (connect, relayed) = match pair.no_netem.clone() {
        None => (listen.clone(), false),
        Some(why) => match pair.relay(7448, &format!("{}:7447", pair.addresses[0]), DELAY_MS) {
            Ok(relay) => {
                eprintln!(
                    "netem is not available here ({why}): benches/delay-relay adds the delay"
                );
                (relay, true)
            }
            // The relay is the repository's: only a machine without
            // Python may go without it.
            Err(e) if Command::new("python3").arg("--version").output().is_err() => {
                eprintln!("netem is not available here ({why}) nor python3 ({e}): no delay");
                (listen.clone(), false)
            }
            Err(e) => panic!("netem is not available here ({why}) and {e}"),
        },
    };
    let dir = TempDir::new("dist-netns");
    let swarm = examples().join("scenarios/swarm.toml");
    let swarm = swarm.to_str().unwrap();
    let common = |out: &str| -> Vec<String> {
        [
            "fly",
            swarm,
            "--autopilot",
            BUNDLED,
            "--isolation",
            "in-process",
            "--duration",
            "12",
            "--json",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([dir.join(out).display().to_string()])
        .collect()
    };
    let args: Vec<String> = common("one");
    let one = lockstep(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(one.code(), 3, "{}", one.stderr);
    let session = format!("netns-{}", std::process::id());
    let net = |role: &str, flag: &str, endpoint: &str| -> Vec<String> {
        [
            "--network-role",
            role,
            "--network-session",
            &session,
            flag,
            endpoint,
            "--network-lease",
            "1",
            "--network-wait",
            "60",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut primary = common("many");
    primary.extend(net("primary", "--network-listen", &listen));
    primary.extend(["--network-secondaries".into(), "2".into()]);
    let p = pair.lockstep(0, &primary);
    let secondary: Vec<String> = ["fly".to_string()]
        .into_iter()
        .chain(net("secondary", "--network-connect", &connect))
        .collect();
    let s = [pair.lockstep(1, &secondary), pair.lockstep(1, &secondary)];
    let (code, out, err) = wait(p, Duration::from_secs(300));
    assert_eq!(code, Some(3), "{err}");
    for c in s {
        let (code, _, err) = wait(c, Duration::from_secs(30));
        assert_eq!(code, Some(0), "{err}");
    }
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["run"]["mode"], "distributed");
    assert_eq!(report["lookahead"]["syncs"], 3001);
    if relayed {
        // The secondaries' traffic went through the relay, both ways, and
        // every chunk was held at least the delay.
        let report = pair.relay_report(4);
        eprintln!("{}", report.join("\n"));
        let to_primary = format!(" -> {}:7447: ", pair.addresses[0]);
        let up: Vec<&String> = report.iter().filter(|l| l.contains(&to_primary)).collect();
        assert_eq!(up.len(), 2, "{report:?}");
        assert_eq!(report.len(), 4, "{report:?}");
        for l in &report {
            let held: f64 = l
                .split_once(", held ")
                .and_then(|(_, h)| h.split_once(" ms at least"))
                .unwrap_or_else(|| panic!("{l}: nothing relayed, or not all of it"))
                .0
                .parse()
                .unwrap();
            assert!(held >= DELAY_MS, "{l}");
        }
    }
    let (a, b) = (logs(&dir.join("one")), logs(&dir.join("many")));
    assert_eq!(a.len(), 16);
    assert!(a == b, "the logs differ");
}
