"""An ArduPilot-side peer of lockstep's ardupilot-json link, behaving as
ArduPilot's SIM_JSON.cpp does: it sends a servo packet (magic 18458 with 16
channels, or 29569 with 32) to the physics port over UDP, waits for the
newline-framed JSON state, re-sends the same frame after 1 s without one,
and advances its clock as SIM_JSON does (time_now_us += deltat * 1.0e6 into
a uint64). Its controller flies on the state it reads (as ArduPilot's own
sensor simulation would): the IMU's gyro, the quaternion, position and
velocity.

    python3 ardupilot_peer.py --port 9002 --plan box --record frames.csv

The record holds, per reply: the frame count answered, the timestamp, the
peer's clock (µs) after it, and the four PWMs sent next.
"""

import argparse
import json
import math
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from px4_peer import Controller, plan_target  # noqa: E402

MAGIC_16, MAGIC_32 = 18458, 29569


class State:
    """What the controller reads, from one JSON reply."""

    def __init__(self, s):
        self.north, self.east, down = s["position"]
        self.alt = -down
        self.vn, self.ve, self.vd = s["velocity"]
        w, x, y, z = s["quaternion"]
        self.roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
        self.pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
        self.yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def parse_reply(data):
    """The JSON between the last two newlines, as SIM_JSON reads it."""
    text = data.decode()
    parts = text.split("\n")
    if len(parts) < 3:
        raise ValueError("reply is not framed by newlines: %r" % text[:80])
    return json.loads(parts[-2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=9002)
    ap.add_argument("--plan", choices=["hover", "box", "echo"], default="hover",
                    help="echo: answer at once with the motors off (the link alone)")
    ap.add_argument("--channels", type=int, choices=[16, 32], default=16)
    ap.add_argument("--record")
    ap.add_argument("--lose-reply", type=int, default=-1,
                    help="pretend the reply to this frame count was lost (ArduPilot re-sends)")
    ap.add_argument("--frames", type=int, default=10**9)
    args = ap.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(0.1)
    target = ("127.0.0.1", args.port)
    magic = MAGIC_16 if args.channels == 16 else MAGIC_32
    fmt = "<HHI%dH" % args.channels
    ctl = Controller()
    frame, pwm = 0, [1000] * args.channels
    now_us, last_ts = 0, 0.0
    rows, lost = [], False
    while frame < args.frames:
        sock.sendto(struct.pack(fmt, magic, 400, frame, *pwm), target)
        waited, silent, reply = 0.0, 0.0, None
        while reply is None and silent < 3.0:
            try:
                data, _ = sock.recvfrom(65536)
                if args.lose_reply == frame and not lost:
                    lost = True
                    continue
                reply = parse_reply(data)
            except socket.timeout:
                waited += 0.1
                silent += 0.1
                if waited > 1.0:
                    # As SIM_JSON: "No JSON sensor message received, resending servos"
                    sock.sendto(struct.pack(fmt, magic, 400, frame, *pwm), target)
                    waited = 0.0
            except ConnectionRefusedError:
                time.sleep(0.05)
                sock.sendto(struct.pack(fmt, magic, 400, frame, *pwm), target)
        if reply is None:
            break  # lockstep's run ended: nothing answers any more
        ts = reply["timestamp"]
        deltat = 0.0 if ts < last_ts else ts - last_ts
        now_us = int(float(now_us) + deltat * 1.0e6)
        last_ts = ts
        if args.plan == "echo":
            controls = [0.0] * 4
        else:
            st = State(reply)
            gyro = reply["imu"]["gyro"]
            controls, _ = ctl.motors(st, gyro, plan_target(args.plan, now_us * 1e-6), 0.0025)
        pwm = [int(round(1000 + 1000 * u)) for u in controls] + [1000] * (args.channels - 4)
        rows.append((frame, repr(ts), now_us, *pwm[:4]))
        frame += 1
    if args.record:
        with open(args.record, "w") as f:
            f.write("frame,timestamp,clock_us,pwm0,pwm1,pwm2,pwm3\n")
            for r in rows:
                f.write("%d,%s,%d,%d,%d,%d,%d\n" % r)


if __name__ == "__main__":
    main()
