//! Flight stacks over their simulator protocols, against bad peers: a PX4
//! that never connects, disconnects, sends garbage, a frame with a wrong
//! CRC, a truncated frame, an unknown message, answers a time not sent or
//! stops answering; an ArduPilot whose datagrams have a wrong magic or
//! length, that sends from a second address, skips frames or restarts.
//! Each is an exact error with the log written up to it, or an ignore
//! counted in the link's notes, never a hang. (Well-behaved peers written
//! from the stacks' sources fly in tests/peers, in Python.)

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::Path;
use std::thread;
use std::time::Duration;

use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::inputs::scenario::Scenario;
use mavlink::dialects::common::{
    HIL_ACTUATOR_CONTROLS_DATA, HilActuatorControlsFlags, MavMessage, MavModeFlag,
};
use mavlink::{MavHeader, MavlinkReader};

/// A 0.2 s flight of the Iris by the stack `kind` on `port`, with the
/// `[autopilot]` keys `keys` (the connect timeout and step deadline
/// default to 5 s and 2 s).
fn scenario(kind: &str, port: u16, keys: &str) -> Scenario {
    let mut autopilot = format!("kind = \"{kind}\"\nport = {port}\n{keys}\n");
    for (k, v) in [("connect_timeout_s", "5.0"), ("step_deadline_s", "2.0")] {
        if !keys.contains(k) {
            autopilot.push_str(&format!("{k} = {v}\n"));
        }
    }
    let text = format!(
        "schema_version = 1\n[simulation]\nseed = 1\nduration_s = 0.2\n\
         [cadences]\nautopilot = {{ rate_hz = 250 }}\nlog = {{ rate_hz = 250 }}\n\
         [vehicle]\nspec = \"iris\"\n[autopilot]\n{autopilot}"
    );
    Scenario::from_toml_str(&text, "stack.toml").unwrap()
}

fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs the scenario against a peer on its own thread; the run's result,
/// the link's notes and the last logged time.
fn run_against(
    s: &Scenario,
    dir: &Path,
    peer: impl FnOnce() + Send + 'static,
) -> (Result<(), EngineError>, Vec<String>, Option<u64>) {
    let log = dir.join("log.csv");
    let mut e = Engine::with_isolation(
        s,
        Path::new(crate::common::BUNDLED),
        Some(&log),
        &lockstep_abi::Isolation::InProcess,
    )
    .unwrap();
    let peer = thread::spawn(peer);
    let result = e.run().map(|_| ());
    let notes = e.stack_notes();
    // A run that ended in an error destroys its autopilot (here: closes
    // the link) when the engine is dropped.
    drop(e);
    peer.join().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let last = text
        .lines()
        .last()
        .and_then(|l| l.split(',').next())
        .and_then(|t| t.parse().ok());
    (result, notes, last)
}

fn connect(port: u16) -> TcpStream {
    for _ in 0..400 {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            return s;
        }
        thread::sleep(Duration::from_millis(5));
    }
    panic!("lockstep never listened on {port}");
}

fn frame(msg: &MavMessage) -> Vec<u8> {
    let mut out = Vec::new();
    mavlink::write_v2_msg(&mut out, MavHeader::default(), msg).unwrap();
    out
}

fn controls(time_usec: u64, level: f32) -> MavMessage {
    let mut c = [0.0f32; 16];
    c[..4].fill(level);
    MavMessage::HIL_ACTUATOR_CONTROLS(HIL_ACTUATOR_CONTROLS_DATA {
        time_usec,
        controls: c,
        mode: MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED,
        flags: HilActuatorControlsFlags::HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP,
    })
}

/// A PX4 peer: reads each HIL_SENSOR and lets `answer` write what it will
/// (returning false stops reading, the connection still open until drop).
fn px4_peer(port: u16, mut answer: impl FnMut(usize, u64, &mut TcpStream) -> bool) {
    let stream = connect(port);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = MavlinkReader::new(stream);
    let mut k = 0;
    while let Ok((_, msg)) = reader.read_any_message::<MavMessage>() {
        if let MavMessage::HIL_SENSOR(s) = msg {
            if !answer(k, s.time_usec, &mut writer) {
                return;
            }
            k += 1;
        }
    }
}

fn stack_error(r: Result<(), EngineError>) -> String {
    match r {
        Err(e) => e.to_string(),
        Ok(()) => panic!("the run succeeded"),
    }
}

#[test]
fn px4_that_never_connects_is_an_error_after_the_connect_timeout() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_tcp_port();
    let s = scenario(
        "px4-sitl",
        port,
        "boot = \"strict\"\nconnect_timeout_s = 0.2",
    );
    let (r, _, last) = run_against(&s, dir.path(), || {});
    assert_eq!(
        stack_error(r),
        format!(
            "px4-sitl (TCP 127.0.0.1:{port}): no flight stack connected within 0.2 s: start \
             PX4 SITL without a simulator of its own (see the README's PX4 section)"
        )
    );
    assert_eq!(last, None);
}

#[test]
fn px4_that_disconnects_ends_the_run_with_the_log_up_to_there() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_tcp_port();
    let s = scenario("px4-sitl", port, "boot = \"strict\"");
    let (r, _, last) = run_against(&s, dir.path(), move || {
        px4_peer(port, |k, t, w| {
            if k == 10 {
                return false;
            }
            w.write_all(&frame(&controls(t, 0.1))).unwrap();
            true
        });
    });
    let e = stack_error(r);
    assert!(
        e.starts_with(&format!(
            "px4-sitl (TCP 127.0.0.1:{port}) at t = 0.040000 s: PX4 (127.0.0.1:"
        )),
        "{e}"
    );
    assert!(
        e.ends_with("closed the connection while lockstep waited for HIL_ACTUATOR_CONTROLS"),
        "{e}"
    );
    // Rows up to the boundary before the one whose answer never came.
    assert_eq!(last, Some(36_000));
}

#[test]
fn garbage_a_wrong_crc_an_unknown_message_and_a_truncated_frame_are_skipped_and_counted() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_tcp_port();
    let s = scenario("px4-sitl", port, "boot = \"strict\"");
    let (r, notes, last) = run_against(&s, dir.path(), move || {
        px4_peer(port, |k, t, w| {
            let mut out = Vec::new();
            if k == 3 {
                out.extend_from_slice(b"this is not MAVLink\x00\xff");
                let mut bad = frame(&controls(t, 0.2));
                let n = bad.len();
                bad[n - 1] ^= 0x55; // the CRC
                out.extend_from_slice(&bad);
                // A MAVLink 2 frame of message id 60000 (in no dialect).
                let mut unknown = frame(&controls(t, 0.2));
                unknown[7..10].copy_from_slice(&[0x60, 0xEA, 0x00]);
                out.extend_from_slice(&unknown);
            }
            out.extend_from_slice(&frame(&controls(t, 0.1)));
            if t == 200_000 {
                // The last answer, then half a frame.
                let half = frame(&controls(t, 0.3));
                out.extend_from_slice(&half[..half.len() / 2]);
            }
            w.write_all(&out).unwrap();
            true
        });
    });
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(last, Some(200_000));
    let skipped = notes
        .iter()
        .find(|n| n.contains("bytes skipped that were no valid MAVLink frame"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    let n: usize = skipped.split(' ').next().unwrap().parse().unwrap();
    let one = frame(&controls(0, 0.1)).len();
    // The garbage, the bad CRC's frame, the unknown frame, half a frame.
    assert_eq!(n, 21 + one + one + one / 2, "{notes:?}");
}

#[test]
fn px4_that_stops_answering_misses_the_step_deadline() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_tcp_port();
    let s = scenario("px4-sitl", port, "boot = \"strict\"\nstep_deadline_s = 0.3");
    let (r, _, last) = run_against(&s, dir.path(), move || {
        let mut held = None;
        px4_peer(port, |k, t, w| {
            if k < 5 {
                w.write_all(&frame(&controls(t, 0.1))).unwrap();
                return true;
            }
            // Silent, the connection open, until lockstep gives up.
            held = Some(w.try_clone().unwrap());
            let mut sink = [0u8; 4096];
            let _ = held
                .as_mut()
                .unwrap()
                .set_read_timeout(Some(Duration::from_secs(5)));
            while w.read(&mut sink).is_ok_and(|n| n > 0) {}
            false
        });
    });
    assert_eq!(
        stack_error(r),
        format!(
            "px4-sitl (TCP 127.0.0.1:{port}) at t = 0.020000 s: no HIL_ACTUATOR_CONTROLS for \
             time_usec 20000 within the step deadline of 0.3 s"
        )
    );
    assert_eq!(last, Some(16_000));
}

#[test]
fn an_answer_to_a_time_not_sent_is_an_error() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_tcp_port();
    let s = scenario("px4-sitl", port, "boot = \"strict\"");
    let (r, _, _) = run_against(&s, dir.path(), move || {
        px4_peer(port, |_, t, w| {
            w.write_all(&frame(&controls(t + 4000, 0.1))).unwrap();
            true
        });
    });
    assert_eq!(
        stack_error(r),
        format!(
            "px4-sitl (TCP 127.0.0.1:{port}) at t = 0.000000 s: HIL_ACTUATOR_CONTROLS for \
             time_usec 4000 answers a HIL_SENSOR not sent yet (the last was 0)"
        )
    );
}

#[test]
fn a_port_in_use_is_refused_before_the_flight() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let s = scenario("px4-sitl", port, "boot = \"strict\"");
    let e = Engine::with_isolation(
        &s,
        Path::new(crate::common::BUNDLED),
        None,
        &lockstep_abi::Isolation::InProcess,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "px4-sitl: cannot listen on TCP 127.0.0.1:{port}: Address already in use (os error 98)"
        )
    );
    let c = lockstep_harness::engine::classify::classify_build(&e);
    assert_eq!(
        c.class,
        lockstep_harness::outcome::class::ErrorClass::Configuration
    );
}

fn servo(magic: u16, count: u32, channels: usize, pwm: u16) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&magic.to_le_bytes());
    d.extend_from_slice(&400u16.to_le_bytes());
    d.extend_from_slice(&count.to_le_bytes());
    for _ in 0..channels {
        d.extend_from_slice(&pwm.to_le_bytes());
    }
    d
}

/// An ArduPilot peer: sends what `packet(frame)` gives for each frame and
/// waits for the reply (a second-long silence ends it).
fn ardupilot_peer(port: u16, frames: u32, mut packet: impl FnMut(u32, &UdpSocket) -> Vec<u8>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut buf = [0u8; 4096];
    for k in 0..frames {
        sock.send_to(&packet(k, &sock), ("127.0.0.1", port))
            .unwrap();
        if sock.recv_from(&mut buf).is_err() {
            return;
        }
    }
}

#[test]
fn ardupilot_datagrams_of_a_wrong_magic_or_length_and_a_second_sender_are_ignored() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_udp_port();
    let s = scenario("ardupilot-json", port, "");
    let (r, notes, last) = run_against(&s, dir.path(), move || {
        let other = UdpSocket::bind("127.0.0.1:0").unwrap();
        ardupilot_peer(port, 60, |k, sock| {
            if k == 5 {
                sock.send_to(&servo(1234, k, 16, 1100), ("127.0.0.1", port))
                    .unwrap();
                sock.send_to(&servo(29569, k, 16, 1100), ("127.0.0.1", port))
                    .unwrap();
                other
                    .send_to(&servo(18458, k, 16, 1900), ("127.0.0.1", port))
                    .unwrap();
            }
            servo(18458, k, 16, 1100)
        });
    });
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(last, Some(200_000));
    assert!(
        notes.contains(&"1 datagrams ignored (magic 1234, neither 18458 (16 channels) nor 29569 (32 channels))".to_string()),
        "{notes:?}"
    );
    assert!(
        notes
            .contains(&"1 datagrams ignored (magic 29569 with 40 bytes instead of 72)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("1 datagrams from a second sender ignored")),
        "{notes:?}"
    );
}

#[test]
fn a_frame_count_jump_is_counted_and_one_going_back_ends_the_run() {
    let dir = crate::common::TempDir::new("stack");
    let port = free_udp_port();
    let s = scenario("ardupilot-json", port, "");
    let (r, notes, _) = run_against(&s, dir.path(), move || {
        ardupilot_peer(port, 60, |k, _| {
            servo(18458, if k >= 10 { k + 3 } else { k }, 16, 1100)
        });
    });
    assert!(r.is_ok(), "{r:?}");
    assert!(
        notes.contains(&"3 servo packets missing (frame count jumps)".to_string()),
        "{notes:?}"
    );
    let port = free_udp_port();
    let s = scenario("ardupilot-json", port, "");
    let (r, _, last) = run_against(&s, dir.path(), move || {
        ardupilot_peer(port, 60, |k, _| {
            servo(18458, if k == 8 { 2 } else { k }, 16, 1100)
        });
    });
    assert_eq!(
        stack_error(r),
        format!(
            "ardupilot-json (UDP 127.0.0.1:{port}) at t = 0.028000 s: the frame count went \
             back from 7 to 2 (ArduPilot restarted?)"
        )
    );
    assert_eq!(last, Some(24_000));
}

/// What a stack cannot see or report is refused, naming the key: its
/// mission, operator events, `mission_finished`, a PX4 autopilot period
/// that is not whole IMU periods, faults of sensors ArduPilot simulates
/// itself; a host's plant; a Monte Carlo batch.
#[test]
fn what_a_stack_cannot_see_is_refused_by_key() {
    let refused = |kind: &str, extra: &str| {
        let text = format!(
            "schema_version = 1\n[simulation]\nduration_s = 5.0\n[vehicle]\nspec = \"iris\"\n\
             [autopilot]\nkind = \"{kind}\"\n{extra}"
        );
        Scenario::from_toml_str(&text, "s.toml")
            .unwrap_err()
            .to_string()
    };
    let e = refused("px4-sitl", "[[events]]\nat_s = 1.0\naction = \"arm\"\n");
    assert!(
        e.ends_with(
            "key `events[0]`: `arm`: px4-sitl takes missions and commands over its own MAVLink \
             link (a ground station, MAVSDK); its simulator link carries sensors and actuators \
             only"
        ),
        "{e}"
    );
    let e = refused("px4-sitl", "[expect]\nmission_finished = true\n");
    assert!(
        e.ends_with(
            "key `expect.mission_finished`: px4-sitl does not report its mission over its \
             simulator link"
        ),
        "{e}"
    );
    let e = refused("px4-sitl", "[cadences]\nimu = { rate_hz = 200 }\n");
    assert!(
        e.ends_with(
            "key `cadences.imu`: px4-sitl needs a new IMU sample in every HIL_SENSOR: the \
             autopilot period (4000 us) must be a multiple of the IMU period (5000 us)"
        ),
        "{e}"
    );
    let e = refused(
        "ardupilot-json",
        "[[events]]\nat_s = 1.0\naction = \"sensor_dropout\"\nsensor = \"gps\"\n",
    );
    assert!(
        e.ends_with(
            "key `events[0]`: `sensor_dropout gps`: ardupilot-json simulates its own GPS, \
             barometer and compass from the state lockstep sends (only the IMU's samples reach \
             it)"
        ),
        "{e}"
    );
    let e = refused("ardupilot-json", "boot = \"strict\"\n");
    assert!(
        e.ends_with("key `autopilot.boot`: applies to px4-sitl; ardupilot-json answers every frame from the first"),
        "{e}"
    );
    let e = refused("px5", "");
    assert!(
        e.ends_with(
            "key `autopilot.kind`: unknown kind \"px5\": one of \"library\", \"px4-sitl\", \
             \"ardupilot-json\""
        ),
        "{e}"
    );
    let s = scenario("px4-sitl", free_tcp_port(), "");
    let e = lockstep_harness::engine::HostedVehicle::new(
        &s,
        Path::new(crate::common::BUNDLED),
        &lockstep_abi::Isolation::InProcess,
    )
    .unwrap_err();
    assert!(
        e.to_string().ends_with(
            "`autopilot.kind = \"px4-sitl\"`: a flight stack flies lockstep's plant, not a \
             host's (its simulator protocol needs the true state lockstep owns)"
        ),
        "{e}"
    );
}

#[test]
fn the_wait_for_a_stack_counts_down_on_the_terminal_every_10_s() {
    // Both stacks at once (11 s each): the line at 10 s, then the error.
    let dir = crate::common::TempDir::new("stack-countdown");
    let runs: Vec<_> = [
        ("px4-sitl", free_tcp_port()),
        ("ardupilot-json", free_udp_port()),
    ]
    .into_iter()
    .map(|(kind, port)| {
        let file = dir.join(format!("{kind}.toml"));
        std::fs::write(
            &file,
            format!(
                "schema_version = 1\n[simulation]\nseed = 1\nduration_s = 0.2\n\
                     [vehicle]\nspec = \"iris\"\n[autopilot]\nkind = \"{kind}\"\nport = {port}\n\
                     connect_timeout_s = 11.0\n"
            ),
        )
        .unwrap();
        let child = std::process::Command::new(crate::common::LOCKSTEP)
            .args(["fly".as_ref(), file.as_os_str(), "--quiet".as_ref()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        (kind, port, child)
    })
    .collect();
    for (kind, port, child) in runs {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind}: {stderr}");
        let (name, start) = match kind {
            "px4-sitl" => (
                format!("px4-sitl (TCP 127.0.0.1:{port})"),
                "start PX4 SITL now (make px4_sitl none_iris)",
            ),
            _ => (
                format!("ardupilot-json (UDP 127.0.0.1:{port})"),
                "start ArduPilot SITL now (sim_vehicle.py ... --model JSON)",
            ),
        };
        let line =
            format!("lockstep: waiting for {name} (10 s so far, 1 s left; {start}; Ctrl-C stops)");
        assert!(stderr.contains(&line), "{kind}: {stderr}");
        assert_eq!(
            stderr.matches("lockstep: waiting for").count(),
            1,
            "{stderr}"
        );
        assert!(
            stderr.contains("no flight stack connected within 11 s"),
            "{stderr}"
        );
    }
}
