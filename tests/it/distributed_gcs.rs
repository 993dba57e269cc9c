//! A distributed run served to ground stations (feature `distributed`):
//! the primary's one link carries every vehicle, wherever it steps; a
//! station's commands reach the vehicle on another secondary; the inputs
//! recorded by the primary replay the same logs byte for byte in one
//! process, and replayed by a distributed run too. The station is the
//! `mavlink` crate on a UDP socket (pymavlink and MAVSDK are tried against
//! the same vehicles in one process, `tests/peers/`).
#![cfg(feature = "distributed")]

use std::collections::BTreeSet;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mavlink::dialects::common::*;
use mavlink::{MavHeader, MavlinkReader};

use crate::common::lockstep;
use crate::distributed_zenoh::{Run, finish, report};

const NAMES: [&str; 3] = ["alpha", "bravo", "charlie"];

fn fleet() -> PathBuf {
    crate::common::examples().join("scenarios/gcs_fleet.toml")
}

/// A ground station (system 255) on a loopback socket the vehicles send to.
struct Station {
    socket: UdpSocket,
    to: Option<std::net::SocketAddr>,
    sequence: u8,
}

impl Station {
    fn new() -> Station {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        Station {
            socket,
            to: None,
            sequence: 0,
        }
    }

    fn endpoint(&self) -> String {
        format!("udp:{}", self.socket.local_addr().unwrap())
    }

    /// The next message that `pick` takes (given its system), within
    /// 30 s.
    fn wait_any<T>(&mut self, mut pick: impl FnMut(u8, &MavMessage) -> Option<T>) -> T {
        let end = Instant::now() + Duration::from_secs(30);
        let mut buf = [0u8; 65_536];
        while Instant::now() < end {
            let Ok((n, from)) = self.socket.recv_from(&mut buf) else {
                continue;
            };
            self.to = Some(from);
            let mut reader = MavlinkReader::new(&buf[..n]);
            while let Ok((h, msg)) = reader.read_any_message::<MavMessage>() {
                if let Some(t) = pick(h.system_id as u8, &msg) {
                    return t;
                }
            }
        }
        panic!("not heard within 30 s");
    }

    /// The next message of `system` that `pick` takes, within 30 s.
    fn wait<T>(&mut self, system: u8, mut pick: impl FnMut(&MavMessage) -> Option<T>) -> T {
        self.wait_any(|s, m| if s == system { pick(m) } else { None })
    }

    fn send(&mut self, msg: &MavMessage) {
        let header = MavHeader {
            system_id: 255,
            component_id: 190,
            sequence: self.sequence,
        };
        self.sequence = self.sequence.wrapping_add(1);
        let mut out = Vec::new();
        mavlink::write_v2_msg(&mut out, header, msg).unwrap();
        self.socket.send_to(&out, self.to.unwrap()).unwrap();
    }

    /// COMMAND_LONG `command` to `system`; its COMMAND_ACK's result.
    fn command(&mut self, system: u8, command: MavCmd, params: [f32; 7]) -> MavResult {
        self.send(&MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
            target_system: system,
            target_component: 1,
            command,
            param1: params[0],
            param2: params[1],
            param3: params[2],
            param4: params[3],
            param5: params[4],
            param6: params[5],
            param7: params[6],
            confirmation: 0,
        }));
        self.wait(system, |m| match m {
            MavMessage::COMMAND_ACK(a) if a.command == command => Some(a.result),
            _ => None,
        })
    }
}

/// Runs a primary of the fleet with two secondaries, `extra` its options,
/// while `station` does its part; the primary's report and stderr.
fn distributed(run: &Run, extra: &[&str], station: impl FnOnce()) -> serde_json::Value {
    let p = run.primary_of(&fleet(), 2, extra);
    let s = [run.secondary(), run.secondary()];
    station();
    let (code, stdout, stderr, _) = finish(p, Duration::from_secs(300));
    for c in s {
        let (code, _, err, _) = finish(c, Duration::from_secs(30));
        assert_eq!(code, Some(0), "{err}");
    }
    assert_eq!(code, Some(0), "{stderr}");
    let j = report(&stdout);
    // Bravo steps on the second secondary, alpha and charlie on the first.
    assert!(
        stderr.contains(
            "the vehicles are served to ground stations: each stays on its first secondary \
             (alpha, charlie on secondary 0"
        ) && stderr.contains("; bravo on secondary 1"),
        "{stderr}"
    );
    j
}

fn logs(dir: &Path) -> Vec<Vec<u8>> {
    NAMES
        .iter()
        .map(|n| std::fs::read(dir.join(format!("{n}.csv"))).unwrap())
        .collect()
}

#[test]
fn a_distributed_fleet_is_served_from_the_primary_and_replays_byte_for_byte() {
    let run = Run::new("dist_gcs");
    let mut st = Station::new();
    let endpoint = st.endpoint();
    let live = distributed(
        &run,
        &["--duration", "20", "--speed", "2", "--mavlink", &endpoint],
        || {
            // Every vehicle on the one link, each its own system.
            let mut seen = BTreeSet::new();
            while seen.len() < 3 {
                let s = st.wait_any(|s, m| matches!(m, MavMessage::HEARTBEAT(_)).then_some(s));
                seen.insert(s);
            }
            assert_eq!(seen, BTreeSet::from([1, 2, 3]));
            // Bravo steps on the second secondary, charlie on the first.
            let prearm = MavSysStatusSensor::MAV_SYS_STATUS_PREARM_CHECK;
            st.wait(2, |m| match m {
                MavMessage::SYS_STATUS(s) => s
                    .onboard_control_sensors_health
                    .contains(prearm)
                    .then_some(()),
                _ => None,
            });
            let arm = MavCmd::MAV_CMD_COMPONENT_ARM_DISARM;
            let takeoff = MavCmd::MAV_CMD_NAV_TAKEOFF;
            let accepted = MavResult::MAV_RESULT_ACCEPTED;
            assert_eq!(
                st.command(2, arm, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
                accepted
            );
            let nan = f32::NAN;
            assert_eq!(
                st.command(2, takeoff, [0.0, 0.0, 0.0, nan, 0.0, 0.0, nan]),
                accepted
            );
            let mut id = [0u8; 16];
            id[..13].copy_from_slice(b"MPC_XY_CRUISE");
            st.send(&MavMessage::PARAM_SET(PARAM_SET_DATA {
                param_value: 3.0,
                target_system: 3,
                target_component: 1,
                param_id: id.into(),
                param_type: MavParamType::MAV_PARAM_TYPE_REAL32,
            }));
            let v = st.wait(3, |m| match m {
                MavMessage::PARAM_VALUE(p) if p.param_id.to_str().ok() == Some("MPC_XY_CRUISE") => {
                    Some(p.param_value)
                }
                _ => None,
            });
            assert_eq!(v, 3.0);
            // For no vehicle here: counted, not answered.
            st.send(&MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
                target_system: 9,
                target_component: 1,
                command: arm,
                param1: 1.0,
                ..Default::default()
            }));
            // Bravo climbs to MIS_TAKEOFF_ALT (2.5 m).
            st.wait(2, |m| match m {
                MavMessage::GLOBAL_POSITION_INT(g) => (g.relative_alt > 2000).then_some(()),
                _ => None,
            });
        },
    );
    assert_eq!(live["error"], serde_json::Value::Null, "{live}");
    let notes = live["link_notes"].to_string();
    assert!(
        notes.contains("1 COMMAND_LONG messages for system 9, which is not served (ignored)"),
        "{notes}"
    );
    let out = run.dir.join("out");
    let record = out.join("mavlink-inputs.jsonl");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |name: &str| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l["vehicle"] == name)
            .map(|l| {
                l.get("command")
                    .unwrap_or(&l["input"])
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(of("alpha"), Vec::<String>::new());
    assert_eq!(of("bravo"), ["arm", "takeoff"]);
    assert_eq!(of("charlie"), ["param_f32"]);
    let flown = logs(&out);
    // Bravo took off, the others stayed on the ground.
    let top = |log: &[u8]| -> f64 {
        let text = String::from_utf8_lossy(log);
        let mut lines = text.lines();
        let z = lines
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == "z_m")
            .unwrap();
        lines
            .map(|l| -l.split(',').nth(z).unwrap().parse::<f64>().unwrap())
            .fold(f64::MIN, f64::max)
    };
    assert!((top(&flown[1]) - 2.5).abs() < 0.5, "{}", top(&flown[1]));
    assert!(top(&flown[0]) < 0.5 && top(&flown[2]) < 0.5);
    // In one process, from the record: every log byte for byte.
    let local = run.dir.join("local");
    let r = lockstep(&[
        "fly",
        fleet().to_str().unwrap(),
        "--autopilot",
        crate::common::BUNDLED,
        "--isolation",
        "in-process",
        "--duration",
        "20",
        "--out",
        local.to_str().unwrap(),
        "--mavlink-replay",
        record.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(flown == logs(&local), "the replay in one process differs");
    // Replayed by a distributed run: the same again.
    let again = Run::new("dist_gcs_replay");
    let j = distributed(
        &again,
        &[
            "--duration",
            "20",
            "--mavlink-replay",
            record.to_str().unwrap(),
        ],
        || {},
    );
    assert_eq!(j["error"], serde_json::Value::Null, "{j}");
    assert!(
        flown == logs(&again.dir.join("out")),
        "the distributed replay differs"
    );
}

#[test]
fn a_distributed_run_refuses_one_flights_outputs() {
    let r = lockstep(&[
        "fly",
        fleet().to_str().unwrap(),
        "--network-role",
        "primary",
        "--network-secondaries",
        "1",
        "--ulog",
        "x.ulg",
    ]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: --ulog is not for a distributed run: its vehicles' logs are the \
         primary's (--out DIR), their specs and missions the fleet scenario's"
    );
}

#[test]
fn a_secondary_refuses_the_primarys_link_options() {
    let r = lockstep(&[
        "fly",
        "--network-role",
        "secondary",
        "--mavlink",
        "udp:127.0.0.1:14550",
    ]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: --mavlink, --mavlink-replay, --realtime and --speed are the primary's (it \
         serves the fleet and keeps its time)"
    );
}
