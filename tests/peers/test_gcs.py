"""lockstep as a MAVLink vehicle, against real clients written by others:
pymavlink (uploads a mission, downloads it back, sets and reads a
parameter, arms, starts the mission, follows MISSION_ITEM_REACHED, commands
RTL) and MAVSDK (mavsdk_client.py: uploads, arms, starts, follows the
progress to the end, lands). Each flight's recorded inputs replay to the
same log, byte for byte.

    python3 -m pytest -q tests/peers/test_gcs.py
"""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from test_peers import BIN, PEERS, ROOT, log_bytes, setup_module  # noqa: F401

GCS = os.path.join(ROOT, "examples", "scenarios", "gcs.toml")
HOME = (47.397742, 8.545594)  # the Iris's origin (its spec)


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def vehicle(out, port, duration, speed, extra=()):
    return subprocess.Popen(
        [BIN, "fly", GCS, "--out", out, "--json", "--duration", str(duration),
         "--speed", str(speed), "--mavlink", "udp:127.0.0.1:%d" % port] + list(extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def replay(out, inputs, duration):
    """The same scenario with the recorded inputs, as fast as possible."""
    run = subprocess.run(
        [BIN, "fly", GCS, "--out", out, "--json", "--duration", str(duration),
         "--mavlink-replay", inputs], capture_output=True, text=True, timeout=300)
    return json.loads(run.stdout)


def pymavlink_session(port, timeout=120):
    from pymavlink import mavutil
    m = mavutil.mavlink_connection("udpin:127.0.0.1:%d" % port, source_system=255)
    hb = m.wait_heartbeat(timeout=30)
    assert hb is not None, "no HEARTBEAT"
    return m


def wait(m, kind, cond=lambda msg: True, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        msg = m.recv_match(type=kind, blocking=True, timeout=1)
        if msg is not None and cond(msg):
            return msg
    raise AssertionError("no %s within %s s" % (kind, timeout))


def ready(m):
    """Waits, as a station does before arming, for the prearm check to be
    healthy (the autopilot refuses to arm before its first estimate)."""
    from pymavlink import mavutil
    bit = mavutil.mavlink.MAV_SYS_STATUS_PREARM_CHECK
    wait(m, "SYS_STATUS", lambda s: s.onboard_control_sensors_health & bit, timeout=30)


def square(lat0, lon0, side, alt):
    import math
    out = []
    for n, e in [(side, 0), (side, side), (0, side), (0, 0)]:
        lat = lat0 + n / 111319.49
        lon = lon0 + e / (111319.49 * math.cos(math.radians(lat0)))
        out.append((lat, lon, alt))
    return out


def test_pymavlink_uploads_downloads_sets_a_parameter_flies_and_returns(tmp_path):
    from pymavlink import mavutil
    mav = mavutil.mavlink
    out = str(tmp_path / "live")
    port = free_udp_port()
    duration = 120
    run = vehicle(out, port, duration, 8)
    try:
        m = pymavlink_session(port)
        ts, tc = m.target_system, m.target_component
        # Upload: a takeoff and a square.
        items = [(mav.MAV_CMD_NAV_TAKEOFF, HOME + (10.0,))] + \
            [(mav.MAV_CMD_NAV_WAYPOINT, p) for p in square(*HOME, 15.0, 10.0)]
        m.mav.mission_count_send(ts, tc, len(items), mav.MAV_MISSION_TYPE_MISSION)
        for _ in items:
            req = wait(m, "MISSION_REQUEST_INT")
            cmd, (lat, lon, alt) = items[req.seq]
            m.mav.mission_item_int_send(ts, tc, req.seq, mav.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
                                        cmd, 0, 1, 0, 2.0, 0, float("nan"),
                                        int(lat * 1e7), int(lon * 1e7), alt,
                                        mav.MAV_MISSION_TYPE_MISSION)
        ack = wait(m, "MISSION_ACK")
        assert ack.type == mav.MAV_MISSION_ACCEPTED
        # Download it back.
        m.mav.mission_request_list_send(ts, tc, mav.MAV_MISSION_TYPE_MISSION)
        count = wait(m, "MISSION_COUNT").count
        assert count == len(items)
        for seq in range(count):
            m.mav.mission_request_int_send(ts, tc, seq, mav.MAV_MISSION_TYPE_MISSION)
            it = wait(m, "MISSION_ITEM_INT", lambda x, s=seq: x.seq == s)
            cmd, (lat, lon, alt) = items[seq]
            assert (it.command, it.x, it.y, it.z) == (cmd, int(lat * 1e7), int(lon * 1e7), alt)
        m.mav.mission_ack_send(ts, tc, mav.MAV_MISSION_ACCEPTED, mav.MAV_MISSION_TYPE_MISSION)
        # A parameter set and read back.
        m.mav.param_set_send(ts, tc, b"MPC_XY_VEL_MAX", 4.0, mav.MAV_PARAM_TYPE_REAL32)
        v = wait(m, "PARAM_VALUE", lambda x: x.param_id == "MPC_XY_VEL_MAX")
        assert v.param_value == 4.0
        m.mav.param_request_read_send(ts, tc, b"MPC_XY_VEL_MAX", -1)
        v = wait(m, "PARAM_VALUE", lambda x: x.param_id == "MPC_XY_VEL_MAX")
        assert v.param_value == 4.0
        # Arm, start, follow the items reached, then RTL.
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
        assert wait(m, "COMMAND_ACK").result == mav.MAV_RESULT_ACCEPTED
        wait(m, "HEARTBEAT", lambda h: h.base_mode & mav.MAV_MODE_FLAG_SAFETY_ARMED)
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_MISSION_START, 0, 0, 0, 0, 0, 0, 0, 0)
        assert wait(m, "COMMAND_ACK").result == mav.MAV_RESULT_ACCEPTED
        reached = []
        while len(reached) < 3:
            reached.append(wait(m, "MISSION_ITEM_REACHED").seq)
        assert reached == [0, 1, 2]
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_NAV_RETURN_TO_LAUNCH, 0, 0, 0, 0, 0, 0, 0, 0)
        assert wait(m, "COMMAND_ACK").result == mav.MAV_RESULT_ACCEPTED
        wait(m, "EXTENDED_SYS_STATE",
             lambda s: s.landed_state == mav.MAV_LANDED_STATE_ON_GROUND, timeout=120)
        wait(m, "HEARTBEAT", lambda h: not h.base_mode & mav.MAV_MODE_FLAG_SAFETY_ARMED)
        stdout, _ = run.communicate(timeout=300)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]
    assert report["final_state"]["armed"] is False
    # The recorded inputs replay to the same flight, byte for byte.
    inputs = os.path.join(out, "mavlink-inputs.jsonl")
    kinds = [json.loads(line)["input"] for line in open(inputs)]
    assert kinds == ["mission", "param_f32", "command", "command", "command"], kinds
    again = replay(str(tmp_path / "replayed"), inputs, duration)
    assert again["digest"] == report["digest"]
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)


def test_mavsdk_flies_a_mission_to_the_end_and_lands(tmp_path):
    out = str(tmp_path / "live")
    port = free_udp_port()
    duration = 150
    run = vehicle(out, port, duration, 5)
    result = str(tmp_path / "mavsdk.json")
    try:
        client = subprocess.run(
            [sys.executable, os.path.join(PEERS, "mavsdk_client.py"), "--port", str(port),
             "--home-lat", str(HOME[0]), "--home-lon", str(HOME[1]), "--timeout", "120",
             "--out", result], capture_output=True, text=True, timeout=300)
        assert client.returncode == 0, client.stderr
        stdout, _ = run.communicate(timeout=300)
    finally:
        run.kill()
    r = json.load(open(result))
    assert r["uploaded"] == 4 and r["downloaded"] == 4
    assert r["finished"] and r["landed"] and r["disarmed"], r
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]
    inputs = os.path.join(out, "mavlink-inputs.jsonl")
    again = replay(str(tmp_path / "replayed"), inputs, duration)
    assert again["digest"] == report["digest"]
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)


def test_mavsdk_reports_the_vehicle_healthy_and_armable_and_a_gps_dropout_as_it_happens(tmp_path):
    """MAVSDK derives its health flags from SYS_STATUS (present and healthy
    gyro, accelerometer, magnetometer, GPS bits; the prearm check's health
    for is_armable) and HOME_POSITION: all True once the vehicle has its
    first GPS fix. A GPS dropout at 12 s (simulated) clears the GPS bit and
    the prearm check, announced by STATUSTEXT, until it is cleared at 20 s."""
    out = str(tmp_path / "live")
    port = free_udp_port()
    duration, speed = 30, 2
    events = ('events=[{ at_s = 12.0, action = "sensor_dropout", sensor = "gps" }, '
              '{ at_s = 20.0, action = "sensor_clear", sensor = "gps" }]')
    result = str(tmp_path / "health.json")
    client = subprocess.Popen(
        [sys.executable, os.path.join(PEERS, "mavsdk_health.py"), "--port", str(port),
         "--seconds", str(duration / speed + 2), "--out", result],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)  # MAVSDK listens before the vehicle's first HEARTBEAT
    run = vehicle(out, port, duration, speed, ["--set", events])
    try:
        _, err = client.communicate(timeout=120)
        assert client.returncode == 0, err
        stdout, _ = run.communicate(timeout=120)
    finally:
        client.kill()
        run.kill()
    r = json.load(open(result))
    assert r["connected"], r
    # Every flag True (is_armable too) before the dropout, and
    # health_all_ok True again at the end.
    assert r["first_all_ok_s"] is not None and r["first_all_ok_s"] < 12 / speed, r
    assert r["health_all_ok"] is True, r
    lost = [h for h in r["health"] if not h["global"]]
    assert lost, r["health"]
    assert all(not h["armable"] for h in lost), lost
    # After its first SYS_STATUS, MAVSDK never saw the IMU or the compass
    # unhealthy (only the GPS failed).
    ok_since = [h for h in r["health"] if h["t"] >= r["first_all_ok_s"]]
    assert all(h["gyro"] and h["accel"] and h["mag"] for h in ok_since), r["health"]
    texts = [s["text"] for s in r["status_texts"]]
    i = texts.index("GPS unhealthy: no samples (dropout)")
    assert "Not ready to arm: a sensor or part is unhealthy" in texts[i:], texts
    j = texts.index("GPS healthy", i)
    assert "Ready to arm" in texts[j:], texts
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]


def test_sys_status_bits_follow_the_faults_as_pymavlink_reads_them(tmp_path):
    """SYS_STATUS present/enabled/health bits and GPS_RAW_INT as a
    pymavlink client reads them: the sensors present, enabled and healthy
    (the geofence's health bit set: MAVProxy announces a breach when it
    falls), a GPS dropout clearing the GPS and prearm bits and reporting no
    fix, each at its time."""
    from pymavlink import mavutil
    mav = mavutil.mavlink
    out = str(tmp_path / "bits")
    port = free_udp_port()
    events = 'events=[{ at_s = 4.0, action = "sensor_dropout", sensor = "gps" }]'
    run = vehicle(out, port, 8, 2, ["--set", events])
    try:
        m = pymavlink_session(port)
        sensors = (mav.MAV_SYS_STATUS_SENSOR_3D_GYRO | mav.MAV_SYS_STATUS_SENSOR_3D_ACCEL
                   | mav.MAV_SYS_STATUS_SENSOR_3D_MAG | mav.MAV_SYS_STATUS_SENSOR_ABSOLUTE_PRESSURE
                   | mav.MAV_SYS_STATUS_SENSOR_GPS | mav.MAV_SYS_STATUS_AHRS
                   | mav.MAV_SYS_STATUS_SENSOR_MOTOR_OUTPUTS | mav.MAV_SYS_STATUS_SENSOR_BATTERY
                   | mav.MAV_SYS_STATUS_PREARM_CHECK)
        ok = wait(m, "SYS_STATUS", lambda s: s.onboard_control_sensors_health & sensors == sensors,
                  timeout=30)
        assert ok.onboard_control_sensors_present & sensors == sensors
        assert ok.onboard_control_sensors_enabled & sensors == sensors
        assert ok.onboard_control_sensors_health & mav.MAV_SYS_STATUS_GEOFENCE
        assert not ok.onboard_control_sensors_present & mav.MAV_SYS_STATUS_GEOFENCE
        fix = wait(m, "GPS_RAW_INT", lambda g: g.fix_type == 3)
        assert fix.satellites_visible >= 6
        text = wait(m, "STATUSTEXT", lambda t: t.text.startswith("GPS unhealthy"), timeout=30)
        assert text.text == "GPS unhealthy: no samples (dropout)"
        assert text.severity == mav.MAV_SEVERITY_CRITICAL
        lost = wait(m, "SYS_STATUS",
                    lambda s: not s.onboard_control_sensors_health & mav.MAV_SYS_STATUS_SENSOR_GPS)
        assert not lost.onboard_control_sensors_health & mav.MAV_SYS_STATUS_PREARM_CHECK
        assert lost.onboard_control_sensors_health & mav.MAV_SYS_STATUS_SENSOR_3D_GYRO
        nofix = wait(m, "GPS_RAW_INT")
        assert nofix.fix_type == mav.GPS_FIX_TYPE_NO_FIX and nofix.satellites_visible == 0, nofix
        stdout, _ = run.communicate(timeout=120)
    finally:
        run.kill()
    assert json.loads(stdout)["error"] is None


def test_requests_for_messages_home_and_time_are_answered(tmp_path):
    """REQUEST_MESSAGE for any message the vehicle sends (and
    PROTOCOL_VERSION), MAVProxy's older GET_HOME_POSITION, TIMESYNC with the
    simulated time, SYSTEM_TIME streamed (Unix time 0: unknown); a request
    for a message the vehicle does not send is answered unsupported."""
    from pymavlink import mavutil
    out = str(tmp_path / "requests")
    port = free_udp_port()
    run = vehicle(out, port, 30, 1)
    try:
        m = pymavlink_session(port)
        mav = mavutil.mavlink  # MAVLink 2's, once the session switched to it

        def request(command, *params):
            p = list(params) + [0] * (7 - len(params))
            m.mav.command_long_send(1, 1, command, 0, *p)
            return wait(m, "COMMAND_ACK", lambda a: a.command == command, timeout=10)

        for msg_id, kind in [(mav.MAVLINK_MSG_ID_SYS_STATUS, "SYS_STATUS"),
                             (mav.MAVLINK_MSG_ID_GPS_RAW_INT, "GPS_RAW_INT"),
                             (mav.MAVLINK_MSG_ID_HOME_POSITION, "HOME_POSITION")]:
            ack = request(mav.MAV_CMD_REQUEST_MESSAGE, msg_id)
            assert ack.result == mav.MAV_RESULT_ACCEPTED, (kind, ack)
            wait(m, kind, timeout=5)
        # PROTOCOL_VERSION (300): pymavlink's common dialect has no
        # definition of it, so only the answer is checked here.
        ack = request(mav.MAV_CMD_REQUEST_MESSAGE, 300)
        assert ack.result == mav.MAV_RESULT_ACCEPTED, ack
        ack = request(mav.MAV_CMD_REQUEST_MESSAGE, mav.MAVLINK_MSG_ID_ADSB_VEHICLE)
        assert ack.result == mav.MAV_RESULT_UNSUPPORTED, ack
        ack = request(mav.MAV_CMD_GET_HOME_POSITION)
        assert ack.result == mav.MAV_RESULT_ACCEPTED, ack
        home = wait(m, "HOME_POSITION", timeout=5)
        assert abs(home.latitude / 1e7 - HOME[0]) < 1e-6, home
        m.mav.timesync_send(0, 123456789)
        sync = wait(m, "TIMESYNC", lambda t: t.ts1 == 123456789, timeout=5)
        clock = wait(m, "SYSTEM_TIME", timeout=5)
        assert clock.time_unix_usec == 0
        # Both are the simulated time (ns and ms since the run's start).
        assert 0 < sync.tc1 <= 30_000_000_000, sync
        assert abs(clock.time_boot_ms - sync.tc1 / 1e6) < 2000, (clock, sync)
        stdout, _ = run.communicate(timeout=120)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None
    assert any("REQUEST_MESSAGE for messages this vehicle does not send" in n
               for n in report["link_notes"]), report["link_notes"]


def test_bad_datagrams_are_ignored_and_counted_and_the_vehicle_still_answers(tmp_path):
    from pymavlink.dialects.v20 import common as mav
    out = str(tmp_path / "bad")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(10)
    run = vehicle(out, sock.getsockname()[1], 30, 10)
    try:
        _, vehicle_addr = sock.recvfrom(65536)

        class Sink:
            def write(self, b):
                pass

        enc = mav.MAVLink(Sink(), srcSystem=255, srcComponent=190)
        frame = enc.param_request_read_encode(1, 1, b"MPC_XY_VEL_MAX", -1).pack(enc)
        bad_crc = bytearray(frame)
        bad_crc[-1] ^= 0x55
        unknown = bytearray(frame)
        unknown[7:10] = bytes([0x60, 0xEA, 0x00])  # message id 60000
        for d in [b"not mavlink at all", frame[: len(frame) // 2], bytes(bad_crc), bytes(unknown)]:
            sock.sendto(d, vehicle_addr)
        sock.sendto(frame, vehicle_addr)
        value = None
        while value is None:
            data, _ = sock.recvfrom(65536)
            for m in enc.parse_buffer(data) or []:
                if m.get_type() == "PARAM_VALUE" and m.param_id == "MPC_XY_VEL_MAX":
                    value = m.param_value
        assert value > 0
        stdout, _ = run.communicate(timeout=120)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None
    assert "4 datagrams with no valid MAVLink frame (ignored)" in report["link_notes"], \
        report["link_notes"]


def test_ardupilot_style_numbers_home_as_item_zero_and_reads_copter_modes(tmp_path):
    from pymavlink import mavutil
    mav = mavutil.mavlink
    out = str(tmp_path / "ap")
    port = free_udp_port()
    run = vehicle(out, port, 60, 8, ["--mavlink-style", "ardupilot"])
    try:
        m = pymavlink_session(port)
        hb = wait(m, "HEARTBEAT")
        assert hb.autopilot == mav.MAV_AUTOPILOT_ARDUPILOTMEGA and hb.custom_mode == 5  # LOITER
        ts, tc = m.target_system, m.target_component
        # Before any upload, the mission is home alone.
        m.mav.mission_request_list_send(ts, tc, mav.MAV_MISSION_TYPE_MISSION)
        assert wait(m, "MISSION_COUNT").count == 1
        pts = [HOME + (0.0,)] + square(*HOME, 10.0, 8.0)[:2]
        cmds = [mav.MAV_CMD_NAV_WAYPOINT] * 3
        m.mav.mission_count_send(ts, tc, len(pts), mav.MAV_MISSION_TYPE_MISSION)
        for _ in pts:
            req = wait(m, "MISSION_REQUEST_INT")
            lat, lon, alt = pts[req.seq]
            frame = mav.MAV_FRAME_GLOBAL if req.seq == 0 else mav.MAV_FRAME_GLOBAL_RELATIVE_ALT
            m.mav.mission_item_int_send(ts, tc, req.seq, frame, cmds[req.seq], 0, 1,
                                        0, 1.0, 0, float("nan"), int(lat * 1e7), int(lon * 1e7),
                                        alt, mav.MAV_MISSION_TYPE_MISSION)
        assert wait(m, "MISSION_ACK").type == mav.MAV_MISSION_ACCEPTED
        m.mav.mission_request_list_send(ts, tc, mav.MAV_MISSION_TYPE_MISSION)
        assert wait(m, "MISSION_COUNT").count == 3
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
        assert wait(m, "COMMAND_ACK").result == mav.MAV_RESULT_ACCEPTED
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_DO_SET_MODE, 0,
                                mav.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 3, 0, 0, 0, 0, 0)
        assert wait(m, "COMMAND_ACK").result == mav.MAV_RESULT_ACCEPTED
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == 3)  # AUTO
        # The first waypoint after home is item 1 on the link.
        assert wait(m, "MISSION_ITEM_REACHED").seq == 1
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_DO_SET_MODE, 0,
                                mav.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 2, 0, 0, 0, 0, 0)
        assert wait(m, "COMMAND_ACK").result == mav.MAV_RESULT_DENIED  # ALT_HOLD: no command
    finally:
        run.kill()



def test_pymavlink_mavftp_reads_the_parameter_and_mission_files_as_the_lists_send_them(tmp_path):
    """pymavlink's own MAVFTP client against an ArduPilot-style vehicle:
    AUTOPILOT_VERSION says FTP; `@PARAM/param.pck?withdefaults=1` (read in
    its 80-byte bursts, so padded for them) holds the table PARAM_REQUEST_LIST
    sends, value for value, with the default of the one parameter set;
    `@MISSION/mission.dat` holds the items a MISSION_REQUEST_LIST download
    sends; listings, a missing file and a removal are answered as ArduPilot
    answers them. A PX4-style vehicle leaves FTP unanswered, counted."""
    import struct
    from pymavlink import mavftp, mavutil
    mav = mavutil.mavlink
    out = str(tmp_path / "ftp")
    port = free_udp_port()
    run = vehicle(out, port, 30, 2, ["--mavlink-style", "ardupilot"])
    try:
        m = pymavlink_session(port)
        ts, tc = m.target_system, m.target_component
        m.mav.command_long_send(ts, tc, mav.MAV_CMD_REQUEST_MESSAGE, 0,
                                mav.MAVLINK_MSG_ID_AUTOPILOT_VERSION, 0, 0, 0, 0, 0, 0)
        caps = wait(m, "AUTOPILOT_VERSION", timeout=10).capabilities
        assert caps & mav.MAV_PROTOCOL_CAPABILITY_FTP, caps
        # The table over the parameter protocol, before one is set.
        m.mav.param_request_list_send(ts, tc)
        listed = {}
        while not listed or len(listed) < count:
            v = wait(m, "PARAM_VALUE", timeout=10)
            listed[v.param_id], count = v, v.param_count
        before = listed["MPC_XY_VEL_MAX"].param_value
        m.mav.param_set_send(ts, tc, b"MPC_XY_VEL_MAX", before + 1.5, mav.MAV_PARAM_TYPE_REAL32)
        wait(m, "PARAM_VALUE", lambda x: x.param_id == "MPC_XY_VEL_MAX")
        # A mission: home (item 0, replaced by the vehicle's) and two waypoints.
        pts = [HOME + (0.0,)] + square(*HOME, 10.0, 8.0)[:2]
        m.mav.mission_count_send(ts, tc, len(pts), mav.MAV_MISSION_TYPE_MISSION)
        for _ in pts:
            req = wait(m, "MISSION_REQUEST_INT")
            lat, lon, alt = pts[req.seq]
            m.mav.mission_item_int_send(ts, tc, req.seq, mav.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
                                        mav.MAV_CMD_NAV_WAYPOINT, 0, 1, 0, 1.0, 0, 0,
                                        int(lat * 1e7), int(lon * 1e7), alt,
                                        mav.MAV_MISSION_TYPE_MISSION)
        assert wait(m, "MISSION_ACK").type == mav.MAV_MISSION_ACCEPTED
        m.mav.mission_request_list_send(ts, tc, mav.MAV_MISSION_TYPE_MISSION)
        downloaded = []
        for seq in range(wait(m, "MISSION_COUNT").count):
            m.mav.mission_request_int_send(ts, tc, seq, mav.MAV_MISSION_TYPE_MISSION)
            downloaded.append(wait(m, "MISSION_ITEM_INT", lambda x, s=seq: x.seq == s))
        m.mav.mission_ack_send(ts, tc, mav.MAV_MISSION_ACCEPTED, mav.MAV_MISSION_TYPE_MISSION)

        ftp = mavftp.MAVFTP(m, ts, tc)  # sends ResetSessions, waits for its ACK

        def get(path):
            ftp.cmd_get([path, str(tmp_path / "got")])
            ret = ftp.process_ftp_reply("OpenFileRO", timeout=10)
            return ret.error_code, ftp.get_result

        code, data = get("@PARAM/param.pck?withdefaults=1")
        assert code == mavftp.FtpError.Success, code
        pdata = mavftp.MAVFTP.ftp_param_decode(data)
        assert pdata is not None and len(pdata.params) == count == 44
        for name, value, ptype in pdata.params:
            v = listed[name.decode()]
            if name == b"MPC_XY_VEL_MAX":
                assert value == before + 1.5
            elif ptype == 4:  # FLOAT: the same float32
                assert struct.pack("<f", value) == struct.pack("<f", v.param_value), name
            else:  # INT32: PARAM_VALUE casts it (ArduPilot style)
                assert ptype == 3 and float(value) == v.param_value, name
        defaults = {n.decode(): d for n, d, _ in pdata.defaults}
        assert defaults["MPC_XY_VEL_MAX"] == before
        assert all(defaults[n.decode()] == v for n, v, _ in pdata.params if n != b"MPC_XY_VEL_MAX")

        code, data = get("@MISSION/mission.dat")
        assert code == mavftp.FtpError.Success, code
        magic, kind, options, start, n = struct.unpack("<HHHHH", data[:10])
        assert len(downloaded) == 3
        assert (magic, kind, options, start, n) == (0x763D, 0, 0, 0, 3)
        unpacker = mavutil.mavlink.MAVLink_mission_item_int_message.unpacker
        size = unpacker.size
        assert len(data) == 10 + n * size
        fields = ("param1", "param2", "param3", "param4", "x", "y", "z", "seq", "command",
                  "target_system", "target_component", "frame", "current", "autocontinue",
                  "mission_type")
        for i, item in enumerate(downloaded):
            got = dict(zip(fields, unpacker.unpack(data[10 + i * size:10 + (i + 1) * size])))
            for f in ("x", "y", "z", "seq", "command", "frame", "autocontinue"):
                assert got[f] == getattr(item, f), (i, f, got, item)
        assert abs(downloaded[0].x / 1e7 - HOME[0]) < 1e-6

        root = ftp.cmd_list(["/"])
        assert sorted((e.name, e.is_dir) for e in root.directory_listing) == \
            [("@MISSION", True), ("@PARAM", True)]
        files = ftp.cmd_list(["@MISSION"]).directory_listing
        assert [(e.name, e.size_b) for e in files] == [("mission.dat", 10 + 3 * size)]
        assert get("@PARAM/nothing.pck")[0] == mavftp.FtpError.FileNotFound
        assert ftp.cmd_rm(["@PARAM/param.pck"]).error_code == mavftp.FtpError.FileProtected
        stdout, _ = run.communicate(timeout=60)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None
    notes = report.get("link_notes", [])
    assert not any("FILE_TRANSFER_PROTOCOL" in n for n in notes), notes

    # PX4 style: no answer, the requests counted.
    port = free_udp_port()
    run = vehicle(str(tmp_path / "px4"), port, 8, 2)
    try:
        m = pymavlink_session(port)
        for seq in range(3):
            m.mav.file_transfer_protocol_send(0, 1, 1, list(struct.pack("<HBBBBBBI", seq, 0, 2, 0, 0, 0, 0, 0)) + [0] * 239)
        assert m.recv_match(type="FILE_TRANSFER_PROTOCOL", blocking=True, timeout=2) is None
        stdout, _ = run.communicate(timeout=60)
    finally:
        run.kill()
    notes = json.loads(stdout)["link_notes"]
    assert "3 FILE_TRANSFER_PROTOCOL messages (of no use to this vehicle)" in notes, notes

def test_offboard_follows_px4s_rules_in_simulated_time(tmp_path):
    """pymavlink as an offboard controller: OFFBOARD is denied before any
    setpoint streams (COMMAND_ACK DENIED and a STATUSTEXT); streamed
    setpoints do not move the vehicle until OFFBOARD is asked; then a
    global position is flown; an attitude quaternion is refused and
    announced, body rates with a thrust taken; 1 s without a setpoint is
    the offboard-loss failsafe (hold, announced). NAV_TAKEOFF's altitude is
    above mean sea level (PX4). The flight replays bit for bit."""
    from pymavlink import mavutil
    out = str(tmp_path / "offboard")
    port = free_udp_port()
    duration = 60
    run = vehicle(out, port, duration, 1)
    try:
        m = pymavlink_session(port)
        mav = mavutil.mavlink
        offboard_mode = 6 << 16

        def command(cmd, *params):
            p = list(params) + [0] * (7 - len(params))
            m.mav.command_long_send(1, 1, cmd, 0, *p)
            return wait(m, "COMMAND_ACK", lambda a: a.command == cmd, timeout=10).result

        assert command(mav.MAV_CMD_DO_SET_MODE, mav.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 6) \
            == mav.MAV_RESULT_DENIED
        wait(m, "STATUSTEXT", lambda s: "Offboard refused" in s.text, timeout=5)
        ready(m)
        assert command(mav.MAV_CMD_COMPONENT_ARM_DISARM, 1) == mav.MAV_RESULT_ACCEPTED
        # A takeoff to 6 m above home: param 7 above mean sea level.
        assert command(mav.MAV_CMD_GET_HOME_POSITION) == mav.MAV_RESULT_ACCEPTED
        home = wait(m, "HOME_POSITION", timeout=10)
        amsl = home.altitude / 1000.0 + 6.0
        assert command(mav.MAV_CMD_NAV_TAKEOFF, 0, 0, 0, float("nan"), 0, 0, amsl) \
            == mav.MAV_RESULT_ACCEPTED
        wait(m, "GLOBAL_POSITION_INT", lambda p: abs(p.relative_alt / 1000.0 - 6.0) < 0.3,
             timeout=30)
        # A global position 10 m north at 8 m above home, streamed at 10 Hz.
        lat = int((HOME[0] + 10.0 / 111319.49) * 1e7)
        lon = int(HOME[1] * 1e7)
        mask = 0b0000_1111_1111_1000  # position only (velocity, accel, yaw rate ignored)

        def stream(seconds, send):
            end = time.time() + seconds
            while time.time() < end:
                send()
                time.sleep(0.1)

        def global_sp():
            m.mav.set_position_target_global_int_send(
                0, 1, 1, mav.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, mask, lat, lon, 8.0,
                0, 0, 0, 0, 0, 0, 0.0, 0)

        stream(1.0, global_sp)
        # Not flown before the switch: the latest position is still here.
        latest = None
        while True:
            msg = m.recv_match(type="LOCAL_POSITION_NED", blocking=False)
            if msg is None:
                break
            latest = msg
        assert latest is not None and abs(latest.x) < 0.5 and abs(latest.z + 6.0) < 0.5, latest
        assert command(mav.MAV_CMD_DO_SET_MODE, mav.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 6) \
            == mav.MAV_RESULT_ACCEPTED
        stream(8.0, global_sp)
        wait(m, "LOCAL_POSITION_NED", lambda p: abs(p.x - 10.0) < 0.5 and abs(p.z + 8.0) < 0.5,
             timeout=10)
        wait(m, "HEARTBEAT", lambda h: h.custom_mode == offboard_mode, timeout=5)
        # An attitude (quaternion) cannot be carried: refused, announced.
        m.mav.set_attitude_target_send(0, 1, 1, 0b0000_0111, [1, 0, 0, 0], 0, 0, 0, 0.5)
        wait(m, "STATUSTEXT", lambda s: "SET_ATTITUDE_TARGET with an attitude" in s.text,
             timeout=5)
        # Rates with a thrust are flown (hover thrust, level).
        rates_mask = 0b1000_0000  # attitude ignored

        def rates_sp():
            m.mav.set_attitude_target_send(0, 1, 1, rates_mask, [1, 0, 0, 0], 0, 0, 0, 0.45)

        stream(1.0, rates_sp)
        # Silence: the offboard-loss failsafe after 1 s.
        wait(m, "STATUSTEXT", lambda s: "Offboard lost" in s.text, timeout=5)
        wait(m, "HEARTBEAT", lambda h: h.custom_mode != offboard_mode, timeout=5)
        stdout, _ = run.communicate(timeout=120)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None, report["error"]
    inputs_path = os.path.join(out, "mavlink-inputs.jsonl")
    inputs = [json.loads(line) for line in open(inputs_path)]
    kinds = [i["input"] for i in inputs]
    assert kinds[:2] == ["command", "takeoff"], kinds
    assert abs(inputs[1]["height_m"] - 6.0) < 1e-3
    sp = [i for i in inputs if i["input"] == "setpoint"]
    assert {s["kind"] for s in sp} == {"position", "rates"}
    assert inputs[-1]["command"] == "hold"
    again = replay(str(tmp_path / "replayed"), inputs_path, duration)
    assert again["digest"] == report["digest"]
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)
    assert any("SET_ATTITUDE_TARGET with an attitude" in n for n in report["link_notes"])


def test_flight_view_messages_rates_and_timeline_as_stations_set_and_read_them(tmp_path):
    """What QGroundControl's flight view reads (VFR_HUD, ALTITUDE,
    ATTITUDE_QUATERNION, SERVO_OUTPUT_RAW), consistent with the other
    streams; SET_MESSAGE_INTERVAL per message (and GET_MESSAGE_INTERVAL),
    ArduPilot's REQUEST_DATA_STREAM by group; a STATUSTEXT for each
    timeline entry; AUTOPILOT_VERSION's capabilities."""
    from pymavlink import mavutil
    out = str(tmp_path / "view")
    port = free_udp_port()
    run = vehicle(out, port, 40, 1)
    try:
        m = pymavlink_session(port)
        mav = mavutil.mavlink

        def command(cmd, *params):
            p = list(params) + [0] * (7 - len(params))
            m.mav.command_long_send(1, 1, cmd, 0, *p)
            return wait(m, "COMMAND_ACK", lambda a: a.command == cmd, timeout=10).result

        def count(kind, seconds):
            n, end = 0, time.time() + seconds
            while time.time() < end:
                msg = m.recv_match(type=kind, blocking=True, timeout=0.2)
                n += msg is not None
            return n

        ready(m)
        # Delivered (ACCEPTED), then refused by the autopilot: its message
        # follows as a STATUSTEXT.
        assert command(mav.MAV_CMD_NAV_RETURN_TO_LAUNCH) == mav.MAV_RESULT_ACCEPTED
        wait(m, "STATUSTEXT", lambda s: "refused: disarmed" in s.text, timeout=5)
        assert command(mav.MAV_CMD_COMPONENT_ARM_DISARM, 1) == mav.MAV_RESULT_ACCEPTED
        wait(m, "STATUSTEXT", lambda s: s.text == "arm", timeout=5)
        assert command(mav.MAV_CMD_NAV_TAKEOFF, 0, 0, 0, float("nan"), 0, 0, float("nan")) \
            == mav.MAV_RESULT_ACCEPTED
        wait(m, "STATUSTEXT", lambda s: s.text == "takeoff", timeout=5)
        gp = wait(m, "GLOBAL_POSITION_INT", lambda p: p.relative_alt > 2000, timeout=20)
        alt = wait(m, "ALTITUDE", timeout=5)
        assert abs(alt.altitude_relative - gp.relative_alt / 1000.0) < 0.5, (alt, gp)
        assert alt.bottom_clearance == -1.0
        hud = wait(m, "VFR_HUD", timeout=5)
        assert 20 < hud.throttle < 90 and abs(hud.alt - alt.altitude_amsl) < 0.5, hud
        servo = wait(m, "SERVO_OUTPUT_RAW", timeout=5)
        motors = [getattr(servo, "servo%d_raw" % i) for i in range(1, 9)]
        assert all(1100 < v < 2000 for v in motors[:4]) and motors[4:] == [0] * 4, motors
        q = wait(m, "ATTITUDE_QUATERNION", timeout=5)
        assert abs(q.q1 ** 2 + q.q2 ** 2 + q.q3 ** 2 + q.q4 ** 2 - 1.0) < 1e-4
        # Per-message rates: VFR_HUD at 20 Hz, then off; asked back.
        assert command(mav.MAV_CMD_SET_MESSAGE_INTERVAL, mav.MAVLINK_MSG_ID_VFR_HUD, 50_000) \
            == mav.MAV_RESULT_ACCEPTED
        n = count("VFR_HUD", 2.0)
        assert 30 <= n <= 50, n
        assert command(mav.MAV_CMD_GET_MESSAGE_INTERVAL, mav.MAVLINK_MSG_ID_VFR_HUD) \
            == mav.MAV_RESULT_ACCEPTED
        iv = wait(m, "MESSAGE_INTERVAL", timeout=5)
        assert (iv.message_id, iv.interval_us) == (mav.MAVLINK_MSG_ID_VFR_HUD, 50_000)
        assert command(mav.MAV_CMD_SET_MESSAGE_INTERVAL, mav.MAVLINK_MSG_ID_VFR_HUD, -1) \
            == mav.MAV_RESULT_ACCEPTED
        count("VFR_HUD", 0.3)  # what was already on its way
        assert count("VFR_HUD", 1.5) == 0
        assert command(mav.MAV_CMD_SET_MESSAGE_INTERVAL, mav.MAVLINK_MSG_ID_ADSB_VEHICLE, 1e5) \
            == mav.MAV_RESULT_UNSUPPORTED
        # ArduPilot's stream groups: positions at 2 Hz.
        m.mav.request_data_stream_send(1, 1, mav.MAV_DATA_STREAM_POSITION, 2, 1)
        count("GLOBAL_POSITION_INT", 0.3)
        n = count("GLOBAL_POSITION_INT", 3.0)
        assert 4 <= n <= 8, n
        m.mav.request_data_stream_send(1, 1, mav.MAV_DATA_STREAM_POSITION, 0, 0)
        count("GLOBAL_POSITION_INT", 0.3)
        assert count("GLOBAL_POSITION_INT", 1.5) == 0
        assert command(mav.MAV_CMD_REQUEST_MESSAGE, mav.MAVLINK_MSG_ID_AUTOPILOT_VERSION) \
            == mav.MAV_RESULT_ACCEPTED
        v = wait(m, "AUTOPILOT_VERSION", timeout=5)
        for cap in (mav.MAV_PROTOCOL_CAPABILITY_MISSION_INT, mav.MAV_PROTOCOL_CAPABILITY_MAVLINK2,
                    mav.MAV_PROTOCOL_CAPABILITY_SET_POSITION_TARGET_LOCAL_NED,
                    mav.MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE):
            assert v.capabilities & cap, cap
        for cap in (mav.MAV_PROTOCOL_CAPABILITY_FTP, mav.MAV_PROTOCOL_CAPABILITY_TERRAIN):
            assert not v.capabilities & cap, cap
        stdout, _ = run.communicate(timeout=120)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None


def test_a_signed_link_takes_only_messages_signed_with_its_key(tmp_path):
    """--mavlink-key: the vehicle signs everything it sends (a station
    that requires signatures hears it) and applies only messages signed
    with the key. An unsigned station's arm and a wrongly keyed one's are
    refused (no answer), counted, and announced once; the signed station
    arms. The key never appears in the report or on the terminal."""
    from pymavlink import mavutil
    key = bytes(range(32))
    key_file = tmp_path / "link.key"
    key_file.write_text(key.hex() + "\n")
    out = str(tmp_path / "signed")
    port = free_udp_port()
    run = vehicle(out, port, 25, 1, ["--mavlink-key", str(key_file)])
    try:
        m = mavutil.mavlink_connection("udpin:127.0.0.1:%d" % port, source_system=255)
        # Requires signatures on what it hears (no unsigned callback).
        m.setup_signing(key, sign_outgoing=False)
        assert m.wait_heartbeat(timeout=30) is not None, "no signed HEARTBEAT"
        mav = mavutil.mavlink

        texts = []

        def arm_ack(timeout):
            m.mav.command_long_send(1, 1, mav.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0, 0, 0)
            end = time.time() + timeout
            while time.time() < end:
                a = m.recv_match(type=["COMMAND_ACK", "STATUSTEXT"], blocking=True, timeout=0.5)
                if a is not None and a.get_type() == "STATUSTEXT":
                    texts.append(a.text)
                elif a is not None:
                    return a
            return None

        assert arm_ack(3) is None  # unsigned: refused
        assert "Refused messages not signed with the key" in texts, texts
        m.setup_signing(bytes(32), sign_outgoing=True)  # the wrong key
        m.mav.signing.allow_unsigned_callback = None
        assert arm_ack(3) is None
        m.setup_signing(key, sign_outgoing=True)  # the right one
        ack = arm_ack(10)
        assert ack is not None and ack.result == mav.MAV_RESULT_ACCEPTED, ack
        # Announced once, not per refused message.
        assert texts.count("Refused messages not signed with the key") == 1, texts
        stdout, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    report = json.loads(stdout)
    assert report["error"] is None
    refused = [n for n in report["link_notes"] if "not signed with the link's key" in n]
    assert len(refused) == 1 and int(refused[0].split()[0]) >= 2, report["link_notes"]
    inputs = [json.loads(l) for l in open(os.path.join(out, "mavlink-inputs.jsonl"))]
    assert [i.get("command") for i in inputs] == ["arm"]
    assert key.hex() not in stdout + stderr


def test_a_bad_key_file_is_refused_naming_it(tmp_path):
    bad = tmp_path / "short.key"
    bad.write_bytes(b"secret")
    r = subprocess.run([BIN, "fly", GCS, "--duration", "1", "--mavlink", "udp:127.0.0.1:9",
                        "--mavlink-key", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r
    assert ("--mavlink-key %s: a key is 32 bytes, or 64 hexadecimal digits; this file has 6 bytes"
            % bad) in r.stderr, r.stderr
