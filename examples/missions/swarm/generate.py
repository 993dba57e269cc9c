#!/usr/bin/env python3
"""Writes the 16 lanes of examples/scenarios/swarm.toml: lane i starts at
north 10*i m, east 0 (its home), takes off, flies east to east 120 m, and
lands there. Lane 15 flies 13 m up and ends 3 m north of lane 14's end, so
the two pass within proximity without colliding. Run from this directory."""
LAT0, LON0, ALT0 = 47.397742, 8.545594, 488.0
M_PER_DEG_LAT = 111178.0   # at 47.4 deg
M_PER_DEG_LON = 75495.0


def geo(n, e):
    return LAT0 + n / M_PER_DEG_LAT, LON0 + e / M_PER_DEG_LON


def lane(i):
    north, alt, end_north = 10.0 * i, 10.0, 10.0 * i
    if i == 15:
        north, alt, end_north = 150.0, 13.0, 143.0
    home = geo(north, 0.0)
    end = geo(end_north, 120.0)
    rows = [
        (0, 1, 0, 16, 0, home[0], home[1], ALT0),
        (1, 0, 3, 22, 0, 0.0, 0.0, alt),
        (2, 0, 3, 16, 0, end[0], end[1], alt),
        (3, 0, 3, 21, 0, end[0], end[1], 0.0),
    ]
    lines = ["QGC WPL 110"]
    for seq, cur, frame, cmd, p1, lat, lon, a in rows:
        lines.append(f"{seq}\t{cur}\t{frame}\t{cmd}\t{p1}\t0\t0\t0\t{lat:.8f}\t{lon:.8f}\t{a:g}\t1")
    return "\n".join(lines) + "\n"


for i in range(16):
    with open(f"lane_{i:02}.waypoints", "w") as f:
        f.write(lane(i))
