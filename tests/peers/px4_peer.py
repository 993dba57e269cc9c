"""A PX4-side peer of lockstep's px4-sitl link, written with pymavlink as
PX4's simulator_mavlink behaves (src/modules/simulation/simulator_mavlink/
SimulatorMavlink.cpp): it connects to the simulator's TCP port (retrying),
sends one HEARTBEAT and a SET_MESSAGE_INTERVAL request as PX4 does, then
answers every HIL_SENSOR (id 0) with HIL_ACTUATOR_CONTROLS stamped with the
HIL_SENSOR's time_usec, after running a small controller on the sensors it
received (gyro and accelerometer for attitude, magnetometer unused, the
barometer for altitude, HIL_GPS for horizontal position and velocity).
HIL_STATE_QUATERNION (ground truth) is only recorded, as PX4 only logs it.

    python3 px4_peer.py --port 4560 --plan box --record answers.csv

The record holds, per HIL_SENSOR: time_usec, fields_updated and the four
motor controls answered, so a test can check them against lockstep's log.
"""

import argparse
import math
import socket
import struct
import time

from pymavlink.dialects.v20 import common as mav

G = 9.80665
ARMED = mav.MAV_MODE_FLAG_SAFETY_ARMED | mav.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED


class Link:
    """The TCP link, parsed with pymavlink's own MAVLink parser."""

    def __init__(self, port, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.0005 * 100)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(30)
        self.mav = mav.MAVLink(self, srcSystem=1, srcComponent=1)
        self.mav.robust_parsing = True

    def write(self, data):
        self.sock.sendall(data)

    def messages(self):
        while True:
            data = self.sock.recv(65536)
            if not data:
                return
            for m in self.mav.parse_buffer(data) or []:
                yield m


class Estimator:
    """Attitude from a complementary filter (gyro, accelerometer tilt),
    altitude from the barometer, position and velocity from GPS."""

    def __init__(self):
        self.roll = self.pitch = self.yaw = 0.0
        self.last_us = None
        self.p0 = None
        self.alt = 0.0
        self.origin = None
        self.north = self.east = 0.0
        self.vn = self.ve = self.vd = 0.0

    def imu(self, m):
        if self.last_us is not None:
            dt = (m.time_usec - self.last_us) * 1e-6
            p, q, r = m.xgyro, m.ygyro, m.zgyro
            self.roll += dt * (p + q * math.sin(self.roll) * math.tan(self.pitch)
                               + r * math.cos(self.roll) * math.tan(self.pitch))
            self.pitch += dt * (q * math.cos(self.roll) - r * math.sin(self.roll))
            self.yaw += dt * (q * math.sin(self.roll) + r * math.cos(self.roll)) / math.cos(self.pitch)
            ax, ay, az = m.xacc, m.yacc, m.zacc
            k = 0.01
            self.roll += k * (math.atan2(-ay, -az) - self.roll)
            self.pitch += k * (math.atan2(ax, math.hypot(ay, az)) - self.pitch)
        self.last_us = m.time_usec
        if m.fields_updated & 0x1A00 == 0x1A00:
            pa = m.abs_pressure * 100.0
            if self.p0 is None:
                self.p0 = pa
            self.alt = 44330.769 * (1.0 - (pa / self.p0) ** 0.190263)

    def gps(self, m):
        lat, lon = m.lat * 1e-7, m.lon * 1e-7
        if self.origin is None:
            self.origin = (lat, lon)
        r = 6378137.0
        self.north = math.radians(lat - self.origin[0]) * r
        self.east = math.radians(lon - self.origin[1]) * r * math.cos(math.radians(self.origin[0]))
        self.vn, self.ve, self.vd = m.vn / 100.0, m.ve / 100.0, m.vd / 100.0


def plan_target(plan, t):
    """Where the plan wants the vehicle at time t (s): north, east, altitude."""
    if t < 1.0:
        return None
    if plan == "hover":
        return (0.0, 0.0, 5.0)
    corners = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0), (0.0, 0.0)]
    k = min(int(max(t - 6.0, 0.0) // 6.0), len(corners) - 1)
    return corners[k] + (5.0,)


def clamp(v, lo, hi):
    return max(lo, min(hi, v))


class Controller:
    """Position -> velocity -> tilt -> rates -> quad X mixer (the Iris's
    rotor order: front-right, rear-left (CCW), front-left, rear-right (CW))."""

    def __init__(self):
        self.alt_i = 0.0

    def motors(self, est, gyro, target, dt):
        if target is None:
            return [0.0] * 4, False
        n_sp, e_sp, alt_sp = target
        vn_sp = clamp(0.3 * (n_sp - est.north), -1.5, 1.5)
        ve_sp = clamp(0.3 * (e_sp - est.east), -1.5, 1.5)
        an = 0.5 * (vn_sp - est.vn)
        ae = 0.5 * (ve_sp - est.ve)
        cy, sy = math.cos(est.yaw), math.sin(est.yaw)
        a_fwd = cy * an + sy * ae
        a_right = -sy * an + cy * ae
        pitch_sp = clamp(-a_fwd / G, -0.2, 0.2)
        roll_sp = clamp(a_right / G, -0.2, 0.2)
        climb_sp = clamp(0.8 * (alt_sp - est.alt), -1.0, 1.5)
        climb_err = climb_sp - (-est.vd)
        self.alt_i = clamp(self.alt_i + climb_err * dt, -2.0, 2.0)
        u = clamp(0.5 + 0.15 * climb_err + 0.05 * self.alt_i, 0.2, 0.8)
        p_sp = 5.0 * (roll_sp - est.roll)
        q_sp = 5.0 * (pitch_sp - est.pitch)
        r_sp = 2.0 * (0.0 - est.yaw)
        roll = 0.08 * (p_sp - gyro[0])
        pitch = 0.08 * (q_sp - gyro[1])
        yaw = 0.15 * (r_sp - gyro[2])
        m = [u - roll + pitch + yaw,
             u + roll - pitch + yaw,
             u + roll + pitch - yaw,
             u - roll - pitch - yaw]
        return [clamp(x, 0.0, 1.0) for x in m], True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=4560)
    ap.add_argument("--plan", choices=["hover", "box", "echo"], default="hover",
                    help="echo: answer at once with the motors off (the link alone)")
    ap.add_argument("--record", help="CSV of every answer")
    ap.add_argument("--connect-timeout", type=float, default=30.0)
    ap.add_argument("--stop-after", type=int, default=0,
                    help="stop answering after this many HIL_SENSOR (0: never)")
    args = ap.parse_args()
    link = Link(args.port, args.connect_timeout)
    # As PX4 does on connecting: one HEARTBEAT, then a ground-truth request.
    link.mav.heartbeat_send(mav.MAV_TYPE_QUADROTOR, mav.MAV_AUTOPILOT_PX4, 0, 0, 0)
    link.mav.command_long_send(0, 0, mav.MAV_CMD_SET_MESSAGE_INTERVAL, 0,
                               mav.MAVLINK_MSG_ID_HIL_STATE_QUATERNION, 5000, 0, 0, 0, 0, 0)
    est, ctl = Estimator(), Controller()
    rows, answered, last = [], 0, None
    for m in link.messages():
        kind = m.get_type()
        if kind == "HIL_GPS":
            est.gps(m)
        elif kind == "HIL_SENSOR" and m.id == 0:
            if args.stop_after and answered >= args.stop_after:
                continue
            if args.plan == "echo":
                link.mav.hil_actuator_controls_send(m.time_usec, [0.0] * 16, 0, 1)
                answered += 1
                rows.append((m.time_usec, m.fields_updated, 0.0, 0.0, 0.0, 0.0))
                continue
            est.imu(m)
            dt = 0.004 if last is None else (m.time_usec - last) * 1e-6
            last = m.time_usec
            controls, armed = ctl.motors(est, (m.xgyro, m.ygyro, m.zgyro),
                                         plan_target(args.plan, m.time_usec * 1e-6), dt)
            out = controls + [0.0] * 12
            link.mav.hil_actuator_controls_send(m.time_usec, out, ARMED if armed else 0, 1)
            answered += 1
            f32 = [struct.unpack("<f", struct.pack("<f", c))[0] for c in controls]
            rows.append((m.time_usec, m.fields_updated, *f32))
    if args.record:
        with open(args.record, "w") as f:
            f.write("time_usec,fields_updated,m0,m1,m2,m3\n")
            for r in rows:
                f.write("%d,%d,%r,%r,%r,%r\n" % r)


if __name__ == "__main__":
    main()
