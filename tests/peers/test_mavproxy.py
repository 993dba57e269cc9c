"""MAVProxy (pip `MAVProxy`) as a second ground station, driven through its
own console as a user types. ArduPilot style (MAVProxy is ArduPilot's
station: its QGC WPL files carry home as item 0, as ArduPilot numbers
missions): it connects, fetches every parameter, loads a mission from a
file and lists it back, arms, switches to AUTO and then to RTL. PX4 style:
parameters, arm, a takeoff to an altitude above mean sea level. Every check also reads lockstep's own record: the
inputs it applied, the waypoints flown, home again; and each flight
replays from its recorded inputs bit for bit.

    LOCKSTEP_BIN=target/release/lockstep python3 -m pytest -q tests/peers/test_mavproxy.py
"""

import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from test_gcs import HOME, free_udp_port, replay, vehicle
from test_peers import log_bytes, setup_module  # noqa: F401

try:
    import MAVProxy  # noqa: F401  (run as `python3 -m MAVProxy.mavproxy`)
except ImportError:
    if os.environ.get("CI"):
        raise  # CI installs it: never a silent skip there
    pytest.skip("needs MAVProxy (pip install MAVProxy)", allow_module_level=True)

# A 20 m leg north, then 20 m east, at 10 m above home, then RTL.
LAT2 = HOME[0] + 20.0 / 111319.49
LON3 = HOME[1] + 20.0 / (111319.49 * math.cos(math.radians(HOME[0])))
WPL = """QGC WPL 110
0\t1\t0\t16\t0\t0\t0\t0\t{lat0:.7f}\t{lon0:.7f}\t0\t1
1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1
2\t0\t3\t16\t0\t0\t0\t0\t{lat2:.7f}\t{lon0:.7f}\t10\t1
3\t0\t3\t16\t0\t0\t0\t0\t{lat2:.7f}\t{lon3:.7f}\t10\t1
4\t0\t3\t20\t0\t0\t0\t0\t0\t0\t0\t1
""".format(lat0=HOME[0], lon0=HOME[1], lat2=LAT2, lon3=LON3)


class Console:
    """MAVProxy with its console on pipes: commands typed, output read."""

    def __init__(self, port, cwd, modules="param,wp,mode,arm,cmdlong"):
        self.lines = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "MAVProxy.mavproxy", "--master=udpin:127.0.0.1:%d" % port,
             "--default-modules=" + modules,
             "--state-basedir=%s" % cwd],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1, cwd=cwd, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())

    def type(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def wait_for(self, text, timeout=30, times=1):
        """The first line holding `text` (the `times`-th such line)."""
        end = time.time() + timeout
        while time.time() < end:
            found = [l for l in self.lines if text in l]
            if len(found) >= times:
                return found[times - 1]
            time.sleep(0.1)
        raise AssertionError("MAVProxy never printed %r:\n%s" % (text, "\n".join(self.lines)))

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def fly(tmp_path, style, duration, script, **console):
    """Runs `script(console)` against a vehicle in `style`; returns the
    console's lines, the report, the inputs and the log rows, after
    checking the replay."""
    out = str(tmp_path / "live")
    port = free_udp_port()
    mp = Console(port, str(tmp_path), **console)
    time.sleep(1)
    run = vehicle(out, port, duration, 2, ["--mavlink-style", style])
    try:
        mp.wait_for("Received 44 parameters")
        script(mp)
        stdout, _ = run.communicate(timeout=duration)
    finally:
        mp.close()
        run.kill()
    assert not any("Unknown mode" in l for l in mp.lines), mp.lines
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]
    inputs_path = os.path.join(out, "mavlink-inputs.jsonl")
    inputs = [json.loads(l) for l in open(inputs_path)]
    rows = list(csv.DictReader(open(os.path.join(out, "log.csv"))))
    again = replay(str(tmp_path / "replayed"), inputs_path, duration)
    assert again["digest"] == report["digest"]
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)
    return mp.lines, report, inputs, rows


def test_mavproxy_with_a_px4_style_vehicle_fetches_parameters_arms_and_takes_off(tmp_path):
    """PX4's NAV_TAKEOFF altitude is above mean sea level: MAVProxy's
    `takeoff` is given home's altitude + 6 m (home is 488.1 m at the Iris's
    origin). MAVProxy's `mode` command itself fails for a PX4 vehicle
    before anything is sent (MAVProxy 1.8.75 hands PX4's mode tuple to
    pymavlink 2.4.50's set_mode, which cannot pack it), so modes are not
    switched here: the README says to use ArduPilot style with MAVProxy."""
    def script(mp):
        mp.type("arm throttle")
        mp.wait_for("COMPONENT_ARM_DISARM: ACCEPTED")
        mp.type("takeoff 494")
        mp.wait_for("NAV_TAKEOFF: ACCEPTED")
        mp.wait_for("takeoff -> hold", timeout=30)
    lines, report, inputs, rows = fly(tmp_path, "px4", 30, script)
    assert [i["input"] for i in inputs] == ["command", "takeoff"]
    home_amsl = 494.0 - inputs[1]["height_m"]
    assert abs(home_amsl - 488.1) < 0.1, inputs[1]
    assert abs(-min(float(r["z_m"]) for r in rows) - inputs[1]["height_m"]) < 0.3


def test_mavproxy_fetches_parameters_loads_a_mission_arms_flies_and_returns(tmp_path):
    wpl = tmp_path / "square.txt"
    wpl.write_text(WPL)

    def script(mp):
        mp.type("wp load %s" % wpl)
        mp.wait_for("Got MISSION_ACK: TYPE_MISSION: ACCEPTED")
        mp.type("wp list")
        mp.wait_for("Saved 5 waypoints")
        mp.type("arm throttle")
        mp.wait_for("COMPONENT_ARM_DISARM: ACCEPTED")
        mp.type("mode AUTO")
        mp.wait_for("DO_SET_MODE: ACCEPTED")
        mp.wait_for("mission -> rtl", timeout=60)
        mp.type("mode RTL")

    lines, report, inputs, rows = fly(tmp_path, "ardupilot", 90, script)
    # Home is item 0 of the file and of the link (not given to the
    # autopilot); the list read back holds home and the four items.
    mission = [i for i in inputs if i["input"] == "mission"]
    assert len(mission) == 1 and [it["command"] for it in mission[0]["items"]] == [22, 16, 16, 20]
    assert [i["command"] for i in inputs if i["input"] == "command"][:2] == ["arm", "mission_start"]
    for lat, lon in [(LAT2, HOME[1]), (LAT2, LON3)]:
        d = min(math.hypot((float(r["lat_deg"]) - lat) * 111319.49,
                           (float(r["lon_deg"]) - lon) * 111319.49 * math.cos(math.radians(lat)))
                for r in rows)
        assert d < 2.0, (lat, lon, d)
    end = rows[-1]
    assert math.hypot(float(end["x_m"]), float(end["y_m"])) < 1.0
    assert report["final_state"]["armed"] is False


def read_parm(path):
    """A MAVProxy parameter file (`param save`): name -> value."""
    out = {}
    for line in open(path):
        name, value = line.split()
        out[name] = float(value)
    return out


def test_mavproxy_fetches_parameters_and_the_mission_over_mavftp(tmp_path):
    """MAVProxy with its `ftp` module fetches an ArduPilot vehicle's
    parameters as `@PARAM/param.pck?withdefaults=1` at connect and on
    `param ftp`, and the mission as `@MISSION/mission.dat` on `wp ftp`: the
    same table as `param fetch` over PARAM_REQUEST_LIST, the defaults
    telling the one parameter set apart, and the mission uploaded."""
    wpl = tmp_path / "square.txt"
    wpl.write_text(WPL)
    parm = {k: str(tmp_path / (k + ".parm")) for k in ("ftp", "list", "changed")}

    def script(mp):
        mp.wait_for("Received 44 parameters (ftp)")
        # MAVProxy sends the set from its idle loop: its PARAM_VALUE back
        # (shown by `param show`) before the file is fetched again.
        mp.type("param set MPC_XY_VEL_MAX 7.5")
        end = time.time() + 10
        while not any(re.search(r"MPC_XY_VEL_MAX +7\.5\b", l) for l in mp.lines):
            assert time.time() < end, mp.lines
            mp.type("param show MPC_XY_VEL_MAX")
            time.sleep(0.3)
        mp.type("param ftp")
        mp.wait_for("Received 44 parameters (ftp)", times=2)
        mp.type("param save %s" % parm["ftp"])
        mp.wait_for("Saved 44 parameters to %s" % parm["ftp"])
        mp.type("param savechanged %s" % parm["changed"])
        mp.wait_for("parameters to %s" % parm["changed"])
        # The same table over the parameter protocol.
        mp.type("set param_ftp 0")
        mp.type("param fetch")
        mp.wait_for("Requested parameter list")
        end = time.time() + 20
        while not any(l.strip() == "Received 44 parameters" for l in mp.lines):
            assert time.time() < end, mp.lines
            time.sleep(0.1)
        mp.type("param save %s" % parm["list"])
        mp.wait_for("Saved 44 parameters to %s" % parm["list"])
        mp.type("wp load %s" % wpl)
        mp.wait_for("Got MISSION_ACK: TYPE_MISSION: ACCEPTED")
        mp.type("wp ftp")
        saved = mp.wait_for("Saved 5 waypoints to")
        box["waypoints"] = open(saved.split(" to ", 1)[1].strip()).read()

    box = {}
    lines, report, inputs, rows = fly(tmp_path, "ardupilot", 40, script,
                                      modules="param,wp,mode,arm,cmdlong,ftp")
    assert not any("ftp open failed" in l or "bad count" in l for l in lines), lines
    ftp, listed = read_parm(parm["ftp"]), read_parm(parm["list"])
    assert len(ftp) == 44 and ftp == listed, (ftp, listed)
    assert ftp["MPC_XY_VEL_MAX"] == 7.5
    # Only the parameter set differs from its default.
    assert read_parm(parm["changed"]) == {"MPC_XY_VEL_MAX": 7.5}
    # The mission read back: home (the vehicle's, as item 0), then the four
    # items uploaded.
    got = [l.split("\t") for l in box["waypoints"].splitlines()[1:]]
    want = [l.split("\t") for l in WPL.splitlines()[1:]]
    assert len(got) == 5
    assert abs(float(got[0][8]) - HOME[0]) < 1e-6 and abs(float(got[0][9]) - HOME[1]) < 1e-6
    for g, w in zip(got[1:], want[1:]):
        assert (int(g[3]), int(g[2])) == (int(w[3]), int(w[2]))
        assert abs(float(g[8]) - float(w[8])) < 1e-6 and abs(float(g[9]) - float(w[9])) < 1e-6
        assert float(g[10]) == float(w[10])
    notes = report.get("link_notes", [])
    assert not any("FILE_TRANSFER_PROTOCOL" in n for n in notes), notes
