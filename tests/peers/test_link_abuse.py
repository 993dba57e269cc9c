"""A ground-station link that nobody can break: random frames with valid
CRCs for every message the vehicle reads (fields random, NaN and infinity
included, other system ids, an oversized mission count), and a flood of
more than 10,000 datagrams a second. The vehicle never crashes, hangs or
falls behind its pacing, still answers afterwards, and the fuzzed flight
replays from its recorded inputs bit for bit. pymavlink builds the frames.

    LOCKSTEP_BIN=target/release/lockstep python3 -m pytest -q tests/peers/test_link_abuse.py
"""

import json
import math
import os
import random
import socket
import struct
import time

from test_gcs import free_udp_port, pymavlink_session, replay, vehicle
from test_peers import log_bytes, setup_module  # noqa: F401

# Every message the vehicle reads (run/src/gcs/mod.rs's handle()).
READ = ["HEARTBEAT", "TIMESYNC", "COMMAND_LONG", "COMMAND_INT", "SET_MODE",
        "MISSION_COUNT", "MISSION_ITEM_INT", "MISSION_REQUEST_LIST", "MISSION_REQUEST_INT",
        "MISSION_REQUEST", "MISSION_CLEAR_ALL", "MISSION_ACK", "PARAM_SET",
        "PARAM_REQUEST_READ", "PARAM_REQUEST_LIST", "SET_POSITION_TARGET_LOCAL_NED",
        "SET_POSITION_TARGET_GLOBAL_INT", "SET_ATTITUDE_TARGET", "REQUEST_DATA_STREAM"]

INT_RANGES = {"uint8_t": (0, 255), "int8_t": (-128, 127), "uint16_t": (0, 65535),
              "int16_t": (-32768, 32767), "uint32_t": (0, 2**32 - 1),
              "int32_t": (-2**31, 2**31 - 1), "uint64_t": (0, 2**64 - 1),
              "int64_t": (-2**63, 2**63 - 1)}
SPECIAL_FLOATS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e38, -1e38, 1e-45]


def random_value(rng, ftype, length):
    if ftype == "char":
        return bytes(rng.randrange(256) for _ in range(length))
    if ftype in ("float", "double"):
        pick = lambda: rng.choice(SPECIAL_FLOATS) if rng.random() < 0.3 else rng.uniform(-1e4, 1e4)
    else:
        lo, hi = INT_RANGES[ftype]
        edges = [lo, hi, 0, 1, hi // 2]
        pick = lambda: rng.choice(edges) if rng.random() < 0.3 else rng.randint(lo, hi)
    if length:
        return [pick() for _ in range(length)]
    return pick()


def random_frame(module, mav, rng, name):
    cls = getattr(module, "MAVLink_%s_message" % name.lower())
    args = []
    # array_lengths follow the wire order (ordered_fieldnames); the
    # constructor takes the declaration order (fieldnames, fieldtypes).
    lengths = dict(zip(cls.ordered_fieldnames, cls.array_lengths))
    enums = getattr(cls, "fieldenums_by_name", {})
    for field, ftype in zip(cls.fieldnames, cls.fieldtypes):
        length = lengths[field]
        v = random_value(rng, ftype, length)
        # Mostly a value of the field's enum (else the frame seldom parses
        # and the fuzz stops at the parser); bitmasks mostly whole.
        if field in enums and not length and rng.random() < 0.8:
            values = [k for k in module.enums[enums[field]] if not str(module.enums[enums[field]][k].name).endswith("_ENUM_END")]
            if values:
                v = rng.choice(values)
        if field == "target_system":
            v = rng.choice([0, 1, 1, 1, 2, 255])  # mostly for this vehicle
        if name == "MISSION_COUNT" and field == "count":
            v = rng.choice([65535, 0, 3, v])
        args.append(v)
    msg = cls(*args)
    return msg.pack(mav, force_mavlink1=False)


def still_answered(m):
    """A parameter read is answered. Sent again every half second, as a
    station does: a request that lands in a socket buffer still full of
    the flood is dropped by the kernel (UDP), not by the vehicle."""
    for _ in range(6):
        m.mav.param_request_read_send(1, 1, b"MPC_XY_P", -1)
        end = time.time() + 0.5
        while time.time() < end:
            p = m.recv_match(type="PARAM_VALUE", blocking=True, timeout=0.1)
            if p is not None and p.param_id == "MPC_XY_P":
                return
    raise AssertionError("no PARAM_VALUE for MPC_XY_P within 3 s")


def vehicle_address(m):
    """The vehicle's own socket: where the station heard it from."""
    (addr,) = m.clients
    return addr


def test_random_frames_of_every_message_read_never_break_the_vehicle(tmp_path):
    from pymavlink import mavutil
    seed = int(os.environ.get("LOCKSTEP_FUZZ_SEED", "1"))
    rng = random.Random(seed)
    out = str(tmp_path / "fuzz")
    port = free_udp_port()
    duration = 20
    run = vehicle(out, port, duration, 1)
    try:
        m = pymavlink_session(port)
        enc = mavutil.mavlink.MAVLink(None, srcSystem=255, srcComponent=190)
        sent, start = 0, time.time()
        while time.time() - start < 10.0:
            frames = b"".join(random_frame(mavutil.mavlink, enc, rng, rng.choice(READ))
                              for _ in range(4))
            # To the vehicle's own socket (the station's port is ours).
            m.port.sendto(frames, vehicle_address(m))
            sent += 4
            if sent % 400 == 0:
                time.sleep(0.01)
        rate = sent / (time.time() - start)
        still_answered(m)
        stdout, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode in (0, 3), stderr  # 3: a crash the fuzz flew into (a verdict)
    report = json.loads(stdout)
    assert report["error"] is None, (seed, report["error"])
    print("fuzz: %d frames in 10 s (%.0f frames/s), seed %d; %s" % (sent, rate, seed, report["link_notes"]))
    inputs = os.path.join(out, "mavlink-inputs.jsonl")
    again = replay(str(tmp_path / "replayed"), inputs, duration)
    assert again["digest"] == report["digest"], "seed %d" % seed
    assert log_bytes(str(tmp_path / "replayed")) == log_bytes(out)


def test_a_flood_of_datagrams_does_not_slow_the_flight(tmp_path):
    """More than 10,000 datagrams a second for 6 s (valid HEARTBEATs and
    garbage, from one socket): the 10 s flight still takes 10 s of wall
    time at --speed 1, and the station is still answered."""
    from pymavlink import mavutil
    out = str(tmp_path / "flood")
    port = free_udp_port()
    duration = 10
    run = vehicle(out, port, duration, 1)
    try:
        m = pymavlink_session(port)
        enc = mavutil.mavlink.MAVLink(None, srcSystem=254, srcComponent=190)
        hb = enc.heartbeat_encode(6, 8, 0, 0, 0).pack(enc)
        garbage = struct.pack("<8d", *([math.pi] * 8))
        flood = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        to = vehicle_address(m)
        sent, start = 0, time.time()
        while time.time() - start < 6.0:
            for _ in range(100):
                try:
                    flood.sendto(hb if sent % 2 else garbage, to)
                except OSError:
                    pass  # the vehicle's socket buffer is full: dropped
                sent += 1
        rate = sent / (time.time() - start)
        still_answered(m)
        stdout, _ = run.communicate(timeout=60)
    finally:
        run.kill()
    assert rate > 10_000, rate
    report = json.loads(stdout)
    assert report["error"] is None
    print("flood: %.0f datagrams/s; the flight took %.2f s of wall time for %d s"
          % (rate, report["wall_time_s"], duration))
    assert report["wall_time_s"] < duration + 0.5, report["wall_time_s"]
    assert any("datagrams with no valid MAVLink frame" in n for n in report["link_notes"])
