"""MAVSDK-Python's published examples (the gRPC package, `mavsdk-grpc`)
fly lockstep's MAVLink vehicle with only the connection URL changed:
takeoff_and_land, mission, offboard_position_ned, offboard_velocity_body,
telemetry and all_params. See mavsdk_examples/README.md for which files run
(the examples themselves with MAVSDK_PYTHON_EXAMPLES set, else this
repository's call-for-call scripts). Every check reads lockstep's own flight
(its log, report and recorded inputs), and every flight replays from its
recorded inputs bit for bit.

    LOCKSTEP_BIN=target/release/lockstep python3 -m pytest -q tests/peers/test_mavsdk_examples.py
"""

import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from test_gcs import free_udp_port, replay, vehicle
from test_peers import PEERS, log_bytes, setup_module  # noqa: F401

# The examples leave mavsdk_server on its default gRPC port (50051), so
# every test that starts one is in this file: CI runs the peer tests on
# several workers with pytest-xdist's `--dist loadfile`, which keeps a
# file's tests on one worker, one at a time.
EXAMPLES = os.path.join(PEERS, "mavsdk_examples")
PUBLISHED = os.environ.get("MAVSDK_PYTHON_EXAMPLES")

try:
    import mavsdk_grpc  # noqa: F401
except ImportError:
    if os.environ.get("CI"):
        raise  # CI installs it: never a silent skip there
    pytest.skip("needs mavsdk-grpc (pip install mavsdk-grpc)", allow_module_level=True)


def example_file(name, url, tmp_path):
    """The script to run: the published example with its URL replaced (and
    `mavsdk` resolving to `mavsdk_grpc`), else ours (the URL its argument)."""
    if not PUBLISHED:
        return [os.path.join(EXAMPLES, name + ".py"), url], {}
    text = open(os.path.join(PUBLISHED, name + ".py")).read()
    text, n = re.subn(r'system_address\s*=\s*"[^"]*"', 'system_address="%s"' % url, text)
    if n == 0:
        text, n = re.subn(r"\.connect\(\)", '.connect(system_address="%s")' % url, text)
    assert n == 1, "%s: no connection URL to change" % name
    script = tmp_path / (name + ".py")
    script.write_text(text)
    shim = tmp_path / "shim" / "mavsdk"
    shim.mkdir(parents=True)
    # `mavsdk` is mavsdk_grpc under the old name, submodules included.
    (shim / "__init__.py").write_text(
        "import mavsdk_grpc as _g\n__path__ = _g.__path__\n"
        "exec(compile(open(_g.__file__).read(), _g.__file__, 'exec'))\n")
    env = {"PYTHONPATH": str(tmp_path / "shim")}
    return [str(script)], env


def fly(tmp_path, name, duration, speed, client_timeout, stop_after=None):
    """Runs example `name` against a vehicle flying `duration` simulated
    seconds at `speed`; returns (client output, report, log rows, inputs)."""
    out = str(tmp_path / "live")
    port = free_udp_port()
    url = "udpin://127.0.0.1:%d" % port
    args, env = example_file(name, url, tmp_path)
    # Its own process group: the mavsdk_server it starts (on gRPC port
    # 50051, as the examples leave it) goes with it, whatever the ending.
    client = subprocess.Popen([sys.executable, "-u"] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, **env), start_new_session=True)
    time.sleep(1)  # the client listens before the vehicle's first HEARTBEAT
    run = vehicle(out, port, duration, speed)
    try:
        try:
            text, _ = client.communicate(timeout=stop_after or client_timeout)
        except subprocess.TimeoutExpired:
            if stop_after is None:
                raise
            os.killpg(client.pid, signal.SIGTERM)
            text, _ = client.communicate(timeout=30)
        stdout, err = run.communicate(timeout=duration / speed + 60)
    finally:
        kill_group(client)
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]
    assert run.returncode == 0, (err, report["verdict"])
    rows = list(csv.DictReader(open(os.path.join(out, "log.csv"))))
    inputs_path = os.path.join(out, "mavlink-inputs.jsonl")
    inputs = [json.loads(line) for line in open(inputs_path)]
    # The recorded inputs fly the same flight, byte for byte.
    again = replay(str(tmp_path / "replayed"), inputs_path, duration)
    assert again["digest"] == report["digest"]
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)
    return text, report, rows, inputs


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def f(row, key):
    return float(row[key])


def yaw_deg(row):
    w, x, y, z = (f(row, k) for k in ("qw", "qx", "qy", "qz"))
    return math.degrees(math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def angle_diff(a, b):
    return (a - b + 180.0) % 360.0 - 180.0


def at(rows, t_us):
    """The last log row at or before t_us."""
    best = rows[0]
    for r in rows:
        if int(r["time_us"]) > t_us:
            break
        best = r
    return best


def test_takeoff_and_land(tmp_path):
    text, report, rows, inputs = fly(tmp_path, "takeoff_and_land", 40, 2, 120)
    assert "-- Taking off" in text and "-- Landing" in text, text
    # Climbed to MIS_TAKEOFF_ALT (2.5 m) and held it, then landed and
    # disarmed.
    top = -min(f(r, "z_m") for r in rows)
    assert 2.3 < top < 2.8, top
    hold = [r for r in rows if r["mode_name"] == "hold"]
    assert hold and all(abs(f(r, "z_m") + 2.5) < 0.3 for r in hold[len(hold) // 2:])
    assert [i["command"] for i in inputs if i["input"] == "command"] == ["arm", "takeoff", "land"]
    assert report["final_state"]["armed"] is False
    assert rows[-1]["mode_name"] == "disarmed"


def test_mission(tmp_path):
    text, report, rows, inputs = fly(tmp_path, "mission", 120, 4, 120)
    # MAVSDK counts the trailing RTL with the last waypoint: the example's
    # last line is 2/3 while returning (the contract finishes a mission
    # whose last item is RTL on landing, when the example stops listening).
    assert "Mission progress: 2/3" in text and "-- Starting mission" in text, text
    # Every waypoint flown (within NAV_ACC_RAD, 2 m, of each), at 25 m,
    # at the speed the items carry (10 m/s, above the 5 m/s cruise), then
    # home by RTL, landed and disarmed.
    mission = [i for i in inputs if i["input"] == "mission"][0]["items"]
    wps = [(it["lat_deg"], it["lon_deg"]) for it in mission if it["command"] == 16]
    assert len(wps) == 3
    assert [it["command"] for it in mission] == [16, 178, 16, 178, 16, 178, 20]
    for lat, lon in wps:
        d = min(math.hypot((f(r, "lat_deg") - lat) * 111319.5,
                           (f(r, "lon_deg") - lon) * 111319.5 * math.cos(math.radians(lat)))
                for r in rows)
        assert d < 2.0, (lat, lon, d)
    flying = [r for r in rows if r["mode_name"] == "mission" and int(r["mission_current"]) > 0]
    fastest = max(math.hypot(f(r, "vx_mps"), f(r, "vy_mps")) for r in flying)
    assert 9.0 < fastest < 10.8, fastest
    assert abs(-min(f(r, "z_m") for r in flying) - 25.0) < 1.0
    assert any(r["mode_name"] == "rtl" for r in rows)
    assert report["final_state"]["armed"] is False
    end = rows[-1]
    assert math.hypot(f(end, "x_m"), f(end, "y_m")) < 1.0


def test_offboard_position_ned(tmp_path):
    text, report, rows, inputs = fly(tmp_path, "offboard_position_ned", 110, 2, 150)
    assert "Starting offboard mode failed" not in text, text
    setpoints = [i for i in inputs if i["input"] == "setpoint"]
    assert setpoints and all(s["kind"] == "position" for s in setpoints)
    # Each position and heading asked for is reached before the next.
    changes = []
    for s in setpoints:
        key = (tuple(s["vector"]), s["yaw_rad"])
        if not changes or changes[-1][0] != key:
            changes.append((key, s["time_us"]))
    targets = [(0, 0, -5, 0), (5, 0, -5, 90), (5, 10, -5, 90), (0, 10, 0, 180)]
    assert [(*k[0], round(math.degrees(k[1]))) for k, _ in changes][-4:] == targets
    ends = [t for _, t in changes[-3:]] + [[i for i in inputs if i["input"] == "command"][-1]["time_us"]]
    for (n, e, d, yaw), t_end in zip(targets, ends):
        r = at(rows, t_end)
        assert math.dist((f(r, "x_m"), f(r, "y_m"), f(r, "z_m")), (n, e, d)) < 0.5, (n, e, d, r)
        if d < -1:
            assert abs(angle_diff(yaw_deg(r), yaw)) < 3.0, (yaw, yaw_deg(r))
    # Set down by the last setpoint: landed (LNDMC_TRIG_TIME, 1 s) and
    # disarmed (COM_DISARM_LAND, 2 s) as PX4 does in any mode, before the
    # example's offboard.stop() asks for a hold (its last input).
    modes = [(int(r["time_us"]), r["mode_name"]) for r in rows]
    landed = next(t for t, m in modes if m == "landed")
    disarmed = next(t for t, m in modes if m == "disarmed" and t > landed)
    assert ends[-2] < landed < disarmed < ends[-1], (ends, landed, disarmed)
    assert report["final_state"]["armed"] is False and report["verdict"]["crashes"] == []
    assert inputs[-1] == {"time_us": inputs[-1]["time_us"], "input": "command", "command": "hold"}


def test_offboard_velocity_body(tmp_path):
    text, report, rows, inputs = fly(tmp_path, "offboard_velocity_body", 130, 2, 150)
    assert "Starting offboard mode failed" not in text, text
    sp = [i for i in inputs if i["input"] == "setpoint"]
    assert sp and all(s["kind"] == "velocity" for s in sp)
    offboard = [r for r in rows if r["mode_name"] == "offboard"]
    # The first segment climbs at 1 m/s turning clockwise at 60 deg/s; the
    # circle flies 5 m/s forward turning at 30 deg/s: measured over the
    # middle of each segment (their times from the recorded setpoints).
    starts = {}
    for s in sp:
        speed = round(math.hypot(*s["vector"][:2]), 1)
        vz = round(s["vector"][2], 1)
        starts.setdefault((speed, vz), s["time_us"])
    t_climb = starts[(0.0, -1.0)]
    t_circle = starts[(5.0, 0.0)]
    a, b = at(rows, t_climb + 3_000_000), at(rows, t_climb + 7_000_000)
    assert abs((f(b, "z_m") - f(a, "z_m")) / 4.0 + 1.0) < 0.1
    # 240 degrees in 4 s, measured modulo a turn.
    assert abs(angle_diff(angle_diff(yaw_deg(b), yaw_deg(a)), 240.0)) < 8.0
    mid = [r for r in offboard
           if t_circle + 5_000_000 <= int(r["time_us"]) <= t_circle + 25_000_000]
    speeds = [math.hypot(f(r, "vx_mps"), f(r, "vy_mps")) for r in mid]
    assert mid and all(abs(v - 5.0) < 0.5 for v in speeds), (min(speeds), max(speeds))
    r0, r1 = at(rows, t_circle + 10_000_000), at(rows, t_circle + 11_000_000)
    assert abs(angle_diff(yaw_deg(r1), yaw_deg(r0)) - 30.0) < 3.0


def test_telemetry(tmp_path):
    text, report, rows, inputs = fly(tmp_path, "telemetry", 20, 1, 60, stop_after=12)
    lines = text.splitlines()
    battery = [float(l.split(":")[1]) for l in lines if l.startswith("Battery: ")]
    assert battery and all(b > 90.0 or 0.9 < b <= 1.0 for b in battery), battery
    gps = [l for l in lines if l.startswith("GPS info: ")]
    assert gps and "FIX_3D" in gps[-1], gps[-1:]
    sats = int(re.search(r"num_satellites: (\d+)", gps[-1]).group(1))
    assert sats >= 6
    assert "In air: False" in lines
    pos = [l for l in lines if l.startswith("Position:")]
    assert pos, text
    lat = float(re.search(r"latitude_deg: ([-\d.]+)", pos[-1]).group(1))
    assert abs(lat - 47.397742) < 1e-5, pos[-1]
    assert inputs == []


def test_all_params(tmp_path):
    text, report, rows, inputs = fly(tmp_path, "all_params", 20, 1, 60)
    values = dict(l.split(": ", 1) for l in text.splitlines() if re.match(r"^[A-Z0-9_]+: ", l))
    # The reference autopilot's whole table (check-lib lists the same 44).
    assert len(values) == 44, values
    assert float(values["MPC_XY_CRUISE"]) == 5.0
    assert int(values["COM_LOW_BAT_ACT"]) == 1
    assert abs(float(values["MPC_XY_P"]) - 0.95) < 1e-6


def test_parameters_are_written_read_back_and_refusals_reported_as_such(tmp_path):
    """Our own MAVSDK client (mavsdk_params.py): a float and an integer set
    and read back (PX4's bytewise integers), and the autopilot's refusals
    reported by MAVSDK as what they are (PARAM_ERROR), not as timeouts."""
    out = str(tmp_path / "live")
    port = free_udp_port()
    result = str(tmp_path / "params.json")
    client = subprocess.Popen(
        [sys.executable, os.path.join(PEERS, "mavsdk_params.py"),
         "udpin://127.0.0.1:%d" % port, result],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    time.sleep(1)
    run = vehicle(out, port, 30, 1)
    try:
        text, _ = client.communicate(timeout=90)
        assert client.returncode == 0, text
        stdout, _ = run.communicate(timeout=90)
    finally:
        kill_group(client)
        run.kill()
    r = json.load(open(result))
    assert r == {
        "float_before": pytest.approx(1.8, abs=1e-6), "float_after": 2.25,
        "int_before": 0, "int_after": 1,
        "out_of_range": "VALUE_OUT_OF_RANGE", "unknown": "DOES_NOT_EXIST",
        "float_kept": 2.25, "count": 44,
    }, r
    report = json.loads(stdout)
    assert report["error"] is None
    inputs = [json.loads(l) for l in open(os.path.join(out, "mavlink-inputs.jsonl"))]
    again = replay(str(tmp_path / "replayed"), os.path.join(out, "mavlink-inputs.jsonl"), 30)
    assert again["digest"] == report["digest"]
    assert [(i["input"], i["name"]) for i in inputs] == [
        ("param_f32", "MPC_XY_VEL_P"), ("param_i32", "MIS_YAW_TO_WP"),
        ("param_f32", "MPC_XY_VEL_P"), ("param_f32", "NO_SUCH_PARAM")]


def test_goto(tmp_path):
    """Action.goto_location (DO_REPOSITION, COMMAND_INT in the global
    frame, altitude above mean sea level): flown to the place at 20 m above
    home and held there, at the autopilot's cruise speed (5 m/s)."""
    text, report, rows, inputs = fly(tmp_path, "goto", 260, 8, 120)
    assert "-- Taking off" in text, text
    sp = [i for i in inputs if i["input"] == "setpoint"]
    assert len(sp) == 1 and sp[0]["kind"] == "position", inputs
    # The place, 47.399386, 8.535245, north and east of home on WGS-84's
    # ellipsoid (its radii of curvature at home's latitude).
    a, e2 = 6378137.0, 6.69437999014e-3
    phi = math.radians(47.397742)
    w = 1.0 - e2 * math.sin(phi) ** 2
    north = math.radians(47.399386 - 47.397742) * a * (1.0 - e2) / w ** 1.5
    east = math.radians(8.535245 - 8.545594) * a / math.sqrt(w) * math.cos(phi)
    n, e, d = sp[0]["vector"]
    assert abs(n - north) < 0.5 and abs(e - east) < 0.5 and abs(d + 20.0) < 0.05, (sp[0], north, east)
    end = rows[-1]
    assert math.dist((f(end, "x_m"), f(end, "y_m"), f(end, "z_m")), (n, e, d)) < 1.0, end
    cruising = [math.hypot(f(r, "vx_mps"), f(r, "vy_mps")) for r in rows
                if int(r["time_us"]) > sp[0]["time_us"] + 30_000_000
                and math.dist((f(r, "x_m"), f(r, "y_m")), (n, e)) > 50.0]
    assert cruising and all(abs(v - 5.0) < 0.3 for v in cruising), (min(cruising), max(cruising))


def test_manual_control(tmp_path):
    """ManualControl: position control (PX4's POSCTL) engaged after the
    takeoff, the example's random sticks flown as velocity setpoints (full
    pitch or roll 10 m/s, full throttle 3 m/s up, none 1.5 m/s down; centred
    a position hold), and when the example stops, the RC-loss failsafe
    0.5 s after its last input: return."""
    text, report, rows, inputs = fly(tmp_path, "manual_control", 45, 1, 60, stop_after=25)
    assert "-- Starting manual control" in text, text
    sp = [i for i in inputs if i["input"] == "setpoint"]
    assert len(sp) > 20, inputs
    speeds = {round(math.hypot(*s["vector"][:2]), 6) for s in sp if s["kind"] == "velocity"}
    climbs = {round(s["vector"][2], 6) for s in sp if s["kind"] == "velocity"}
    assert speeds <= {0.0, 10.0} and climbs <= {0.0, -3.0, 1.5}, (speeds, climbs)
    assert 10.0 in speeds and any(s["kind"] == "position" for s in sp)
    # The example stopped: return 0.5 s after its last input (at least
    # that after the last setpoint: an input that changes nothing is not
    # flown again).
    assert inputs[-1]["input"] == "command" and inputs[-1]["command"] == "rtl", inputs[-1]
    assert inputs[-1]["time_us"] - sp[-1]["time_us"] >= 500_000, (sp[-1], inputs[-1])
    assert report["verdict"]["crashes"] == [], report["verdict"]
