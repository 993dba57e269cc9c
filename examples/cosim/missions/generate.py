#!/usr/bin/env python3
"""Writes the missions of examples/cosim/radio_swarm.toml: two pairs of
vehicles fly head-on along east-west lanes 40 m apart, at 10 m: alpha from
east 0 to east 120 on the lane at north 0, bravo back the other way on the
same lane; charlie and delta the same on the lane at north 40. Each takes
off over its home, flies to the other's home and lands there. Run from this
directory."""
LAT0, LON0, ALT0 = 47.397742, 8.545594, 488.0
M_PER_DEG_LAT = 111178.0   # at 47.4 deg
M_PER_DEG_LON = 75495.0

LANES = {
    "alpha": (0.0, 0.0, 120.0),
    "bravo": (0.0, 120.0, 0.0),
    "charlie": (40.0, 0.0, 120.0),
    "delta": (40.0, 120.0, 0.0),
}


def geo(n, e):
    return LAT0 + n / M_PER_DEG_LAT, LON0 + e / M_PER_DEG_LON


def mission(north, east_from, east_to):
    home = geo(north, east_from)
    end = geo(north, east_to)
    rows = [
        (0, 1, 0, 16, home[0], home[1], ALT0),
        (1, 0, 3, 22, 0.0, 0.0, 10.0),
        (2, 0, 3, 16, end[0], end[1], 10.0),
        (3, 0, 3, 21, end[0], end[1], 0.0),
    ]
    lines = ["QGC WPL 110"]
    for seq, cur, frame, cmd, lat, lon, a in rows:
        lines.append(f"{seq}\t{cur}\t{frame}\t{cmd}\t0\t0\t0\t0\t{lat:.8f}\t{lon:.8f}\t{a:g}\t1")
    return "\n".join(lines) + "\n"


for name, lane in LANES.items():
    with open(f"{name}.waypoints", "w") as f:
        f.write(mission(*lane))
