"""A fleet served as MAVLink vehicles on one link: each vehicle its own
system id (1, 2, 3 in the scenario's order), messages routed by their
target system, inputs recorded with the vehicle's name and replayed to each
vehicle's log byte for byte. pymavlink is the station, as a multi-vehicle
ground station uses it (target_system per message).

    LOCKSTEP_BIN=target/release/lockstep python3 -m pytest -q tests/peers/test_gcs_fleet.py
"""

import csv
import json
import math
import os
import subprocess
import time

from test_gcs import HOME, free_udp_port
from test_peers import BIN, ROOT, setup_module  # noqa: F401

FLEET = os.path.join(ROOT, "examples", "scenarios", "gcs_fleet.toml")
NAMES = ["alpha", "bravo", "charlie"]


def wait_from(m, kind, system, cond=lambda msg: True, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        msg = m.recv_match(type=kind, blocking=True, timeout=1)
        if msg is not None and msg.get_srcSystem() == system and cond(msg):
            return msg
    raise AssertionError("no %s from system %d within %s s" % (kind, system, timeout))


def fleet(out, port, duration, speed, extra=()):
    return subprocess.Popen(
        [BIN, "fly", FLEET, "--out", out, "--json", "--duration", str(duration),
         "--speed", str(speed)] + list(extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def log_rows(out, name):
    return list(csv.DictReader(open(os.path.join(out, name + ".csv"))))


def test_each_vehicle_is_its_own_system_and_is_replayed_from_its_inputs(tmp_path):
    from pymavlink import mavutil
    mav = mavutil.mavlink
    out = str(tmp_path / "live")
    port = free_udp_port()
    duration = 60
    run = fleet(out, port, duration, 2, ["--mavlink", "udp:127.0.0.1:%d" % port])
    try:
        m = mavutil.mavlink_connection("udpin:127.0.0.1:%d" % port, source_system=255)
        # Three systems, each an autopilot.
        seen = set()
        end = time.time() + 10
        while time.time() < end and len(seen) < 3:
            hb = m.recv_match(type="HEARTBEAT", blocking=True, timeout=1)
            if hb is not None:
                assert hb.autopilot == mav.MAV_AUTOPILOT_PX4
                seen.add(hb.get_srcSystem())
        assert seen == {1, 2, 3}, seen
        # A parameter set on system 1 only.
        m.mav.param_set_send(1, 1, b"MPC_XY_CRUISE", 3.0, mav.MAV_PARAM_TYPE_REAL32)
        assert wait_from(m, "PARAM_VALUE", 1, lambda p: p.param_id == "MPC_XY_CRUISE").param_value \
            == 3.0
        m.mav.param_request_read_send(2, 1, b"MPC_XY_CRUISE", -1)
        assert wait_from(m, "PARAM_VALUE", 2, lambda p: p.param_id == "MPC_XY_CRUISE").param_value \
            == 5.0
        # A command for a system that is not served: no answer, counted.
        m.mav.command_long_send(9, 1, mav.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
        prearm = mav.MAV_SYS_STATUS_PREARM_CHECK
        for system in (2, 3):
            wait_from(m, "SYS_STATUS", system, lambda s: s.onboard_control_sensors_health & prearm)
        # System 2: arm and take off to 6 m.
        home = wait_from(m, "HOME_POSITION", 2, timeout=10)
        m.mav.command_long_send(2, 1, mav.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
        assert wait_from(m, "COMMAND_ACK", 2).result == mav.MAV_RESULT_ACCEPTED
        m.mav.command_long_send(2, 1, mav.MAV_CMD_NAV_TAKEOFF, 0, 0, 0, 0, float("nan"), 0, 0,
                                home.altitude / 1000.0 + 6.0)
        assert wait_from(m, "COMMAND_ACK", 2).result == mav.MAV_RESULT_ACCEPTED
        # System 3: a mission of one waypoint 15 m east of its start (20 m
        # north of the origin), uploaded, armed and started.
        lat = HOME[0] + 20.0 / 111319.49
        lon = HOME[1] + 15.0 / (111319.49 * math.cos(math.radians(HOME[0])))
        m.mav.mission_count_send(3, 1, 1, mav.MAV_MISSION_TYPE_MISSION)
        req = wait_from(m, "MISSION_REQUEST_INT", 3)
        assert req.seq == 0
        m.mav.mission_item_int_send(3, 1, 0, mav.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
                                    mav.MAV_CMD_NAV_WAYPOINT, 0, 1, 0, 1.0, 0, float("nan"),
                                    int(lat * 1e7), int(lon * 1e7), 5.0,
                                    mav.MAV_MISSION_TYPE_MISSION)
        assert wait_from(m, "MISSION_ACK", 3).type == mav.MAV_MISSION_ACCEPTED
        m.mav.command_long_send(3, 1, mav.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
        assert wait_from(m, "COMMAND_ACK", 3).result == mav.MAV_RESULT_ACCEPTED
        m.mav.command_long_send(3, 1, mav.MAV_CMD_MISSION_START, 0, 0, 0, 0, 0, 0, 0, 0)
        assert wait_from(m, "COMMAND_ACK", 3).result == mav.MAV_RESULT_ACCEPTED
        assert wait_from(m, "MISSION_ITEM_REACHED", 3, timeout=40).seq == 0
        stdout, err = run.communicate(timeout=duration + 60)
    except BaseException:
        run.kill()
        raise
    report = json.loads(stdout)
    assert report["error"] is None, (report["error"], err)
    assert "1 COMMAND_LONG messages for system 9, which is not served (ignored)" \
        in report["link_notes"], report["link_notes"]
    inputs = [json.loads(line) for line in open(os.path.join(out, "mavlink-inputs.jsonl"))]
    assert {i["vehicle"] for i in inputs} == {"alpha", "bravo", "charlie"}
    assert [i["input"] for i in inputs if i["vehicle"] == "alpha"] == ["param_f32"]
    assert [i.get("command", i["input"]) for i in inputs if i["vehicle"] == "bravo"] \
        == ["arm", "takeoff"]
    assert [i.get("command", i["input"]) for i in inputs if i["vehicle"] == "charlie"] \
        == ["mission", "arm", "mission_start"]
    # Each vehicle flew what was asked of it, and only that.
    alpha, bravo, charlie = (log_rows(out, n) for n in NAMES)
    assert max(-float(r["z_m"]) for r in alpha) < 0.5
    assert abs(max(-float(r["z_m"]) for r in bravo) - 6.0) < 0.5
    assert min(math.hypot(float(r["x_m"]) - 20.0, float(r["y_m"]) - 15.0) for r in charlie) < 2.0
    # Replayed: every vehicle's log byte for byte, with no station.
    again = str(tmp_path / "replayed")
    replay = subprocess.run(
        [BIN, "fly", FLEET, "--out", again, "--json", "--duration", str(duration),
         "--mavlink-replay", os.path.join(out, "mavlink-inputs.jsonl")],
        capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stderr
    for n in NAMES:
        assert open(os.path.join(again, n + ".csv"), "rb").read() == \
            open(os.path.join(out, n + ".csv"), "rb").read(), n


def test_a_record_that_names_no_vehicle_is_refused_for_a_fleet(tmp_path):
    record = tmp_path / "one.jsonl"
    record.write_text('{"time_us":1000,"input":"command","command":"arm"}\n')
    run = subprocess.run(
        [BIN, "fly", FLEET, "--duration", "2", "--mavlink-replay", str(record)],
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "%s:1: no vehicle: one flight's record, and this is a fleet's" % record in run.stderr
    record.write_text(
        '{"time_us":1000,"vehicle":"delta","input":"command","command":"arm"}\n')
    run = subprocess.run(
        [BIN, "fly", FLEET, "--duration", "2", "--mavlink-replay", str(record)],
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert '%s:1: vehicle "delta" is not in the fleet (alpha, bravo, charlie)' % record \
        in run.stderr


def test_a_record_that_would_overwrite_an_input_or_an_output_is_refused(tmp_path):
    scenario = tmp_path / "fleet.toml"
    scenario.write_text(open(FLEET).read())
    run = subprocess.run(
        [BIN, "fly", str(scenario), "--duration", "1", "--mavlink", "udp:127.0.0.1:9",
         "--mavlink-record", str(scenario)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "--mavlink-record %s is the scenario; refusing to overwrite an input" % scenario \
        in run.stderr
    assert open(scenario).read() == open(FLEET).read()
    out = tmp_path / "out"
    log = out / "bravo.csv"
    run = subprocess.run(
        [BIN, "fly", str(scenario), "--duration", "1", "--mavlink", "udp:127.0.0.1:9",
         "--out", str(out), "--mavlink-record", str(log)],
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "a vehicle's log and --mavlink-record name the same file %s" % log in run.stderr
