"""lockstep against flight-stack peers written from the stacks' sources:
px4_peer.py (pymavlink, as PX4's SimulatorMavlink.cpp) and
ardupilot_peer.py (UDP, as ArduPilot's SIM_JSON.cpp). Each flies a hover
and a box; the checks are the link's promises: one HIL_SENSOR per period
stamped with lockstep time, the answer held over the next interval, the
ArduPilot clock exact, a re-sent frame not integrated twice, and two runs
byte-identical.

    python3 -m pytest -q tests/peers
"""

import csv
import json
import os
import socket
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("LOCKSTEP_BIN", os.path.join(ROOT, "target", "release", "lockstep"))
PX4 = os.path.join(ROOT, "examples", "scenarios", "px4_sitl.toml")
ARDU = os.path.join(ROOT, "examples", "scenarios", "ardupilot_json.toml")


def setup_module():
    if "LOCKSTEP_BIN" not in os.environ:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q", "--bin", "lockstep"],
                       cwd=ROOT, check=True)


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def f32(x):
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def fly(scenario, out, port, duration, peer_args, sets=()):
    """Runs lockstep and a peer against each other; the report and the
    peer's record."""
    cmd = [BIN, "fly", scenario, "--out", out, "--json", "--duration", str(duration),
           "--set", "autopilot.port=%d" % port, "--set", "autopilot.connect_timeout_s=30"]
    for s in sets:
        cmd += ["--set", s]
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    record = os.path.join(out, "peer.csv")
    peer = subprocess.run([sys.executable] + peer_args + ["--port", str(port), "--record", record],
                          capture_output=True, text=True, timeout=300)
    stdout, stderr = run.communicate(timeout=300)
    assert peer.returncode == 0, peer.stderr
    report = json.loads(stdout)
    with open(record) as f:
        rows = list(csv.DictReader(f))
    return report, rows, stderr


def log_rows(out):
    with open(os.path.join(out, "log.csv")) as f:
        return list(csv.DictReader(f))


def log_bytes(out):
    with open(os.path.join(out, "log.csv"), "rb") as f:
        return f.read()


def px4(tmp_path, plan, name, duration):
    out = str(tmp_path / name)
    port = free_port(socket.SOCK_STREAM)
    return out, fly(PX4, out, port, duration,
                    [os.path.join(PEERS, "px4_peer.py"), "--plan", plan],
                    sets=['autopilot.boot="strict"'])


@pytest.mark.parametrize("plan,duration", [("hover", 20), ("box", 45)])
def test_px4_peer_flies_in_strict_lockstep(tmp_path, plan, duration):
    out, (report, answers, _) = px4(tmp_path, plan, "a", duration)
    assert report["error"] is None, report["error"]
    assert report["verdict"]["passed"], report["verdict"]
    assert report["autopilot"].startswith("px4-sitl (TCP 127.0.0.1:")
    # The peer's HEARTBEAT and SET_MESSAGE_INTERVAL, as PX4's, are counted.
    assert "1 HEARTBEAT messages (of no use on the simulator link)" in report["link_notes"]
    # Exactly one HIL_SENSOR per autopilot period, stamped with its time.
    times = [int(a["time_usec"]) for a in answers]
    assert times == [4000 * k for k in range(len(times))]
    assert times[-1] == duration * 1_000_000
    # IMU in every message; all groups (mag, baro) in the first.
    assert all(int(a["fields_updated"]) & 0x3F == 0x3F for a in answers)
    assert int(answers[0]["fields_updated"]) == 0x3F | 0x1C0 | 0x1A00
    # The answer to the HIL_SENSOR at t is what the motors hold from t.
    by_time = {int(a["time_usec"]): a for a in answers}
    rows = log_rows(out)
    assert len(rows) == duration * 50 + 1
    for r in rows:
        a = by_time[int(r["time_us"])]
        for i in range(4):
            assert f32(r["motor%d" % i]) == f32(a["m%d" % i]), (r["time_us"], i)
    final = report["final_state"]["position_ned_m"]
    assert abs(-final[2] - 5.0) < 1.0
    if plan == "hover":
        assert abs(final[0]) < 2.0 and abs(final[1]) < 2.0
    # Two runs are byte-identical.
    out2, (report2, _, _) = px4(tmp_path, plan, "b", duration)
    assert report2["digest"] == report["digest"]
    assert log_bytes(out2) == log_bytes(out)


def ardupilot(tmp_path, plan, name, duration, extra=()):
    out = str(tmp_path / name)
    port = free_port(socket.SOCK_DGRAM)
    return out, fly(ARDU, out, port, duration,
                    [os.path.join(PEERS, "ardupilot_peer.py"), "--plan", plan] + list(extra))


@pytest.mark.parametrize("plan,duration", [("hover", 20), ("box", 45)])
def test_ardupilot_peer_flies_in_lockstep_with_an_exact_clock(tmp_path, plan, duration):
    out, (report, frames, _) = ardupilot(tmp_path, plan, "a", duration)
    assert report["error"] is None, report["error"]
    assert report["verdict"]["passed"], report["verdict"]
    assert report["autopilot"].startswith("ardupilot-json (UDP 127.0.0.1:")
    # One reply per frame; ArduPilot's uint64 clock on lockstep's µs.
    assert [int(f["frame"]) for f in frames] == list(range(len(frames)))
    assert [int(f["clock_us"]) for f in frames] == [2500 * k for k in range(len(frames))]
    assert int(frames[-1]["clock_us"]) == duration * 1_000_000
    # The PWM sent after the state at t is what the motors hold from t.
    by_clock = {int(f["clock_us"]): f for f in frames}
    for r in log_rows(out):
        f = by_clock[int(r["time_us"])]
        for i in range(4):
            expected = min(max((int(f["pwm%d" % i]) - 1000) / 1000.0, 0.0), 1.0)
            assert f32(r["motor%d" % i]) == f32(expected), (r["time_us"], i)
    final = report["final_state"]["position_ned_m"]
    assert abs(-final[2] - 5.0) < 1.0
    out2, (report2, _, _) = ardupilot(tmp_path, plan, "b", duration)
    assert log_bytes(out2) == log_bytes(out)


def test_a_lost_reply_is_answered_again_and_not_integrated_twice(tmp_path):
    out, (report, _, _) = ardupilot(tmp_path, "hover", "plain", 8)
    lost, (report_lost, frames, _) = ardupilot(tmp_path, "hover", "lost", 8,
                                               ["--lose-reply", "700", "--channels", "32"])
    assert report_lost["error"] is None
    assert ("1 servo packets re-sent by ArduPilot (answered again, not integrated)"
            in report_lost["link_notes"])
    assert log_bytes(lost) == log_bytes(out)
