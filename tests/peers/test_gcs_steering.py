"""Steering the MAVLink vehicle as a pilot and a ground station's map do:
MANUAL_CONTROL in position control (PX4's POSCTL, ArduPilot's LOITER) with
the RC-loss failsafe, DO_REPOSITION ("go to location"), DO_CHANGE_SPEED as
a command, NAV_LAND where the vehicle is, and the mode ArduPilot reports
for a mission's own takeoff. pymavlink is the station; every number is
read from lockstep's own log, and every flight replays bit for bit from
its recorded inputs.

    LOCKSTEP_BIN=target/release/lockstep python3 -m pytest -q tests/peers/test_gcs_steering.py
"""

import csv
import json
import math
import os
import threading
import time

from test_gcs import HOME, free_udp_port, pymavlink_session, ready, replay, vehicle, wait
from test_peers import log_bytes, setup_module  # noqa: F401

POSCTL = 3 << 16
AUTO_LOITER = (4 << 16) | (3 << 24)
AUTO_RTL = (4 << 16) | (5 << 24)


class Sticks:
    """MANUAL_CONTROL streamed at 20 Hz from a thread, as a joystick does;
    `set` changes the sticks, `stop` ends the stream."""

    def __init__(self, m):
        self.m, self.axes, self.running = m, (0, 0, 500, 0), True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def set(self, x=0, y=0, z=500, r=0):
        self.axes = (x, y, z, r)

    def run(self):
        while self.running:
            x, y, z, r = self.axes
            self.m.mav.manual_control_send(1, x, y, z, r, 0)
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.thread.join()


def commander(m):
    from pymavlink import mavutil
    mav = mavutil.mavlink

    def command(cmd, *params):
        p = list(params) + [0] * (7 - len(params))
        m.mav.command_long_send(1, 1, cmd, 0, *p)
        return wait(m, "COMMAND_ACK", lambda a: a.command == cmd, timeout=10).result

    def command_int(cmd, frame, params, x, y, z):
        m.mav.command_int_send(1, 1, frame, cmd, 0, 0, *params, x, y, z)
        return wait(m, "COMMAND_ACK", lambda a: a.command == cmd, timeout=10).result

    def mode(main, sub=0):
        return command(mav.MAV_CMD_DO_SET_MODE, mav.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, main, sub)

    return mav, command, command_int, mode


def takeoff_to(m, command, height):
    from pymavlink import mavutil
    mav = mavutil.mavlink
    ready(m)
    assert command(mav.MAV_CMD_COMPONENT_ARM_DISARM, 1) == mav.MAV_RESULT_ACCEPTED
    assert command(mav.MAV_CMD_GET_HOME_POSITION) == mav.MAV_RESULT_ACCEPTED
    home = wait(m, "HOME_POSITION", timeout=10)
    amsl = home.altitude / 1000.0 + height
    assert command(mav.MAV_CMD_NAV_TAKEOFF, 0, 0, 0, float("nan"), 0, 0, amsl) \
        == mav.MAV_RESULT_ACCEPTED
    wait(m, "GLOBAL_POSITION_INT", lambda p: abs(p.relative_alt / 1000.0 - height) < 0.3,
         timeout=60)


def finish(run, out, tmp_path, duration):
    """The flight's report, rows and inputs; and its replay, bit for bit."""
    stdout, err = run.communicate(timeout=duration + 60)
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]
    inputs_path = os.path.join(out, "mavlink-inputs.jsonl")
    inputs = [json.loads(line) for line in open(inputs_path)]
    again = replay(str(tmp_path / "replayed"), inputs_path, duration)
    assert again["digest"] == report["digest"]
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)
    rows = list(csv.DictReader(open(os.path.join(out, "log.csv"))))
    return report, rows, inputs


def f(row, key):
    return float(row[key])


def speed(row):
    return math.hypot(f(row, "vx_mps"), f(row, "vy_mps"))


def at(rows, t_us):
    """The last log row at or before t_us."""
    return [r for r in rows if int(r["time_us"]) <= t_us][-1]


def between(rows, t0, t1):
    return [r for r in rows if t0 <= int(r["time_us"]) <= t1]


def test_px4_position_control_flies_the_sticks_and_returns_when_they_are_lost(tmp_path):
    """POSCTL is refused before any stick input; with sticks streaming it
    is engaged (HEARTBEAT reads POSCTL); full pitch flies forward at up to
    MPC_VEL_MANUAL (10 m/s), centred sticks brake, then hold where the
    vehicle stopped, full throttle
    climbs at MPC_Z_VEL_MAX_UP (3 m/s), full yaw turns clockwise; 0.5 s
    without MANUAL_CONTROL (COM_RC_LOSS_T) is the RC-loss failsafe: return,
    announced."""
    out = str(tmp_path / "posctl")
    port = free_udp_port()
    duration = 50
    run = vehicle(out, port, duration, 1)
    try:
        m = pymavlink_session(port)
        mav, command, _, mode = commander(m)
        assert mode(3) == mav.MAV_RESULT_DENIED
        wait(m, "STATUSTEXT", lambda s: "Position mode refused" in s.text, timeout=5)
        takeoff_to(m, command, 8.0)
        sticks = Sticks(m)
        time.sleep(0.3)
        assert mode(3) == mav.MAV_RESULT_ACCEPTED
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == POSCTL, timeout=5)
        sticks.set(x=1000)
        time.sleep(4)
        sticks.set()
        time.sleep(5)
        sticks.set(z=1000)
        time.sleep(2.5)
        sticks.set()
        time.sleep(2)
        sticks.set(r=1000)
        time.sleep(1.5)
        sticks.set()
        time.sleep(2)
        sticks.stop()
        wait(m, "STATUSTEXT", lambda s: "Manual control lost" in s.text, timeout=5)
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == AUTO_RTL, timeout=5)
    except BaseException:
        run.kill()
        raise
    report, rows, inputs = finish(run, out, tmp_path, duration)
    sp = [i for i in inputs if i["input"] == "setpoint"]
    vel = [s for s in sp if s["kind"] == "velocity"]
    # The four stick moves, in order: forward, climb, turn.
    forward = next(s for s in vel if s["vector"][0] > 9.0)
    assert abs(math.hypot(*forward["vector"][:2]) - 10.0) < 1e-9 and forward["vector"][2] == 0.0
    climb = next(s for s in vel if s["vector"][2] < 0)
    assert climb["vector"] == [0.0, 0.0, -3.0], climb
    # Forward: north (the heading at takeoff), reaching ~10 m/s.
    t_fwd = forward["time_us"]
    fwd_rows = between(rows, t_fwd, t_fwd + 4_000_000)
    assert max(f(r, "vx_mps") for r in fwd_rows) > 8.5
    assert max(abs(f(r, "vy_mps")) for r in fwd_rows) < 0.5
    # Centred: braked to a stop (a zero velocity), then the position where
    # it stopped held, still.
    brake = next(s for s in vel if s["time_us"] > t_fwd and s["vector"] == [0.0, 0.0, 0.0])
    hold = next(s for s in sp if s["kind"] == "position" and s["time_us"] > t_fwd)
    assert brake["time_us"] < hold["time_us"] < brake["time_us"] + 4_000_000, (brake, hold)
    settled = between(rows, hold["time_us"] + 1_000_000, hold["time_us"] + 2_000_000)
    assert settled and all(speed(r) < 0.3 for r in settled), [speed(r) for r in settled]
    assert all(math.dist((f(r, "x_m"), f(r, "y_m")), hold["vector"][:2]) < 0.3 for r in settled)
    # Full throttle: 3 m/s up (measured over its middle second).
    a, b = at(rows, climb["time_us"] + 1_000_000), at(rows, climb["time_us"] + 2_000_000)
    rise = (f(a, "z_m") - f(b, "z_m")) / ((int(b["time_us"]) - int(a["time_us"])) * 1e-6)
    assert abs(rise - 3.0) < 0.3, rise
    # Full yaw: the heading asked turns clockwise at 150 deg/s (over the
    # setpoints that turn it).
    turn = [s for s in sp if s["time_us"] > climb["time_us"] and s["yaw_rad"] is not None]
    steps = [((b["yaw_rad"] - a["yaw_rad"] + math.pi) % (2 * math.pi) - math.pi,
              (b["time_us"] - a["time_us"]) * 1e-6) for a, b in zip(turn, turn[1:])]
    # (Consecutive turning setpoints: each 1/20 s of sticks apart.)
    steps = [(d, dt) for d, dt in steps if abs(d) > 1e-9 and dt < 0.2]
    turned, span = sum(d for d, _ in steps), sum(dt for _, dt in steps)
    assert span > 1.0 and abs(math.degrees(turned) / span - 150.0) < 5.0, (turned, span)
    yaw_rates = [f(r, "r_radps") for r in between(rows, turn[0]["time_us"], turn[-1]["time_us"])]
    assert max(yaw_rates) > math.radians(100), max(yaw_rates)
    # The loss: return, 0.5 s after the last stick message.
    assert inputs[-1]["input"] == "command" and inputs[-1]["command"] == "rtl"
    assert any(r["mode_name"] == "rtl" for r in rows)


def test_ardupilot_loiter_holds_until_sticks_come_and_a_mission_takeoff_reads_auto(tmp_path):
    """ArduPilot style: AUTO (mode 3) asked on the ground reads AUTO during
    the mission's own takeoff, never GUIDED; LOITER without sticks holds,
    sticks then steer it; 3 s without an override (RC_OVERRIDE_TIME) is the
    radio failsafe: RTL."""
    out = str(tmp_path / "loiter")
    port = free_udp_port()
    duration = 50
    run = vehicle(out, port, duration, 1, ["--mavlink-style", "ardupilot"])
    try:
        m = pymavlink_session(port)
        mav, command, _, mode = commander(m)
        ts, tc = 1, 1
        pts = [HOME + (0.0,), (HOME[0] + 20.0 / 111319.49, HOME[1], 6.0)]
        m.mav.mission_count_send(ts, tc, len(pts), mav.MAV_MISSION_TYPE_MISSION)
        for _ in pts:
            req = wait(m, "MISSION_REQUEST_INT")
            lat, lon, alt = pts[req.seq]
            frame = mav.MAV_FRAME_GLOBAL if req.seq == 0 else mav.MAV_FRAME_GLOBAL_RELATIVE_ALT
            m.mav.mission_item_int_send(ts, tc, req.seq, frame, mav.MAV_CMD_NAV_WAYPOINT, 0, 1,
                                        0, 1.0, 0, float("nan"), int(lat * 1e7), int(lon * 1e7),
                                        alt, mav.MAV_MISSION_TYPE_MISSION)
        assert wait(m, "MISSION_ACK").type == mav.MAV_MISSION_ACCEPTED
        ready(m)
        assert command(mav.MAV_CMD_COMPONENT_ARM_DISARM, 1) == mav.MAV_RESULT_ACCEPTED
        assert mode(3) == mav.MAV_RESULT_ACCEPTED
        # Every HEARTBEAT until the waypoint is reached reads AUTO.
        seen = set()
        end = time.time() + 30
        while time.time() < end:
            msg = m.recv_match(type=["HEARTBEAT", "MISSION_ITEM_REACHED"], blocking=True,
                               timeout=1)
            if msg is None:
                continue
            if msg.get_type() == "MISSION_ITEM_REACHED":
                break
            seen.add(msg.custom_mode)
        assert seen == {3}, seen
        assert mode(5) == mav.MAV_RESULT_ACCEPTED  # LOITER, no sticks yet: a hold
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == 5, timeout=5)
        time.sleep(4)  # no sticks, no failsafe
        sticks = Sticks(m)
        sticks.set(y=1000)  # roll right: east
        time.sleep(3)
        sticks.set()
        time.sleep(2)
        sticks.stop()
        wait(m, "STATUSTEXT", lambda s: "Radio failsafe" in s.text, timeout=6)
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == 6, timeout=5)  # RTL
    except BaseException:
        run.kill()
        raise
    report, rows, inputs = finish(run, out, tmp_path, duration)
    kinds = [(i["input"], i.get("command")) for i in inputs]
    assert ("command", "hold") in kinds and kinds[-1] == ("command", "rtl"), kinds
    east = next(i for i in inputs if i["input"] == "setpoint" and i["kind"] == "velocity")
    assert abs(math.hypot(*east["vector"][:2]) - 10.0) < 1e-9 and east["vector"][1] > 9.9, east
    moving = between(rows, east["time_us"] + 1_000_000, east["time_us"] + 2_500_000)
    assert max(f(r, "vy_mps") for r in moving) > 7.0
    loss = inputs[-1]["time_us"]
    last_sp = [i for i in inputs if i["input"] == "setpoint"][-1]["time_us"]
    assert loss - last_sp >= 3_000_000


def test_reposition_change_speed_and_land_here(tmp_path):
    """DO_REPOSITION refused on the ground; in the air flown to the place
    (HEARTBEAT: AUTO.LOITER) at the ground speed it gives; DO_CHANGE_SPEED
    then sets the speed of the next reposition; NAV_LAND at another place
    is refused, NAV_LAND here lands."""
    out = str(tmp_path / "reposition")
    port = free_udp_port()
    duration = 90
    run = vehicle(out, port, duration, 2)
    try:
        m = pymavlink_session(port)
        mav, command, command_int, mode = commander(m)
        frame = mav.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT
        north = (int((HOME[0] + 40.0 / 111319.49) * 1e7), int(HOME[1] * 1e7))
        ready(m)
        assert command_int(mav.MAV_CMD_DO_REPOSITION, frame, (-1, 1, 0, float("nan")),
                           *north, 12.0) == mav.MAV_RESULT_FAILED
        wait(m, "STATUSTEXT", lambda s: "Reposition refused: not flying" in s.text, timeout=5)
        takeoff_to(m, command, 8.0)
        # 40 m north at 12 m above home, 3 m/s, facing east (the heading
        # in radians, as PX4 reads it and MAVSDK sends it).
        assert command_int(mav.MAV_CMD_DO_REPOSITION, frame, (3.0, 1, 0, math.pi / 2),
                           *north, 12.0) == mav.MAV_RESULT_ACCEPTED
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == AUTO_LOITER, timeout=5)
        wait(m, "LOCAL_POSITION_NED", lambda p: abs(p.x - 40.0) < 0.3 and abs(p.z + 12.0) < 0.3,
             timeout=40)
        # 8 m/s from now on; then 60 m east at the same height.
        assert command(mav.MAV_CMD_DO_CHANGE_SPEED, 1, 8.0, -1) == mav.MAV_RESULT_ACCEPTED
        assert command(mav.MAV_CMD_DO_CHANGE_SPEED, 7, 8.0, -1) == mav.MAV_RESULT_FAILED
        wait(m, "STATUSTEXT", lambda s: "speed type 7" in s.text, timeout=5)
        east = (north[0], int((HOME[1] + 60.0 / (111319.49 * math.cos(math.radians(HOME[0]))))
                              * 1e7))
        assert command_int(mav.MAV_CMD_DO_REPOSITION, frame, (-1, 1, 0, float("nan")),
                           *east, float("nan")) == mav.MAV_RESULT_ACCEPTED
        wait(m, "LOCAL_POSITION_NED", lambda p: abs(p.y - 60.0) < 0.3 and speed_of(p) < 0.2,
             timeout=40)
        # Land: at another place refused; here, landed and disarmed.
        assert command(mav.MAV_CMD_NAV_LAND, 0, 0, 0, float("nan"), HOME[0], HOME[1], 0) \
            == mav.MAV_RESULT_DENIED
        wait(m, "STATUSTEXT", lambda s: "Land refused" in s.text, timeout=5)
        assert command(mav.MAV_CMD_NAV_LAND, 0, 0, 0, float("nan"), float("nan"),
                       float("nan"), float("nan")) == mav.MAV_RESULT_ACCEPTED
        wait(m, "HEARTBEAT", lambda h: not h.base_mode & mav.MAV_MODE_FLAG_SAFETY_ARMED,
             timeout=40)
    except BaseException:
        run.kill()
        raise
    report, rows, inputs = finish(run, out, tmp_path, duration)
    kinds = [i["input"] for i in inputs]
    params = [(i["name"], i["value"]) for i in inputs if i["input"] == "param_f32"]
    assert params == [("MPC_XY_CRUISE", 3.0), ("MPC_XY_CRUISE", 8.0)], params
    sp = [i for i in inputs if i["input"] == "setpoint"]
    assert len(sp) == 2 and kinds.count("setpoint") == 2
    assert abs(sp[0]["yaw_rad"] - math.pi / 2) < 1e-6 and sp[1]["yaw_rad"] is None
    assert abs(sp[1]["vector"][2] - sp[0]["vector"][2]) < 0.5  # NaN altitude: the height flown
    leg1 = between(rows, sp[0]["time_us"] + 4_000_000, sp[0]["time_us"] + 8_000_000)
    assert leg1 and all(abs(speed(r) - 3.0) < 0.25 for r in leg1), [speed(r) for r in leg1]
    leg2 = between(rows, sp[1]["time_us"] + 2_500_000, sp[1]["time_us"] + 4_500_000)
    assert max(speed(r) for r in leg2) > 7.5 and max(speed(r) for r in leg2) < 8.4
    end = rows[-1]
    assert abs(f(end, "y_m") - 60.0) < 1.0 and report["final_state"]["armed"] is False


def speed_of(p):
    return math.hypot(p.vx, p.vy)
