//! A distributed run across two Linux network namespaces joined by a veth
//! pair (feature `distributed`): the primary in one, its two secondaries in
//! the other, zenoh over the pair, `tc netem` adding 0.5 ms each way where
//! the kernel has it. The test makes the namespaces and removes them; where
//! they cannot be made (no privilege), it says so and checks nothing else.
//! The logs equal the fleet's in one process byte for byte.
#![cfg(feature = "distributed")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BUNDLED, LOCKSTEP, TempDir, examples, lockstep};

/// Two namespaces joined by a veth pair, removed on drop.
struct Pair {
    names: [String; 2],
    addresses: [String; 2],
    /// Why the pair has no delay, when it has none.
    no_delay: Option<String>,
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
            no_delay: None,
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
            if !o.status.success() && pair.no_delay.is_none() {
                pair.no_delay = Some(String::from_utf8_lossy(&o.stderr).trim().to_string());
            }
        }
        Ok(pair)
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
    let pair = match Pair::new(0.5) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: cannot make network namespaces here ({e})");
            return;
        }
    };
    if let Some(why) = &pair.no_delay {
        eprintln!("netem is not available here ({why}): the namespaces are joined without delay");
    }
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
    let endpoint = format!("tcp/{}:7447", pair.addresses[0]);
    let session = format!("netns-{}", std::process::id());
    let net = |role: &str, flag: &str| -> Vec<String> {
        [
            "--network-role",
            role,
            "--network-session",
            &session,
            flag,
            &endpoint,
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
    primary.extend(net("primary", "--network-listen"));
    primary.extend(["--network-secondaries".into(), "2".into()]);
    let p = pair.lockstep(0, &primary);
    let secondary: Vec<String> = ["fly".to_string()]
        .into_iter()
        .chain(net("secondary", "--network-connect"))
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
    let (a, b) = (logs(&dir.join("one")), logs(&dir.join("many")));
    assert_eq!(a.len(), 16);
    assert!(a == b, "the logs differ");
}
