#!/usr/bin/env python3
"""Writes the 64 missions of examples/scenarios/region64.toml and the
scenario itself: an 8 x 8 grid of homes 400 m apart (2.8 km square), each
vehicle taking off to 15 m, flying 120 m on a heading of its own and
landing there. Three pairs are set to meet: the second of each pair starts
at the first one's destination and flies back along its path 4 m higher,
so the two pass within the fleet's proximity (5 m) mid-way without
touching. Run from this directory."""
import math

LAT0, LON0, ALT0 = 47.397742, 8.545594, 488.0
M_PER_DEG_LAT = 111178.0   # at 47.4 deg
M_PER_DEG_LON = 75495.0
SPACING, LEG, ALT = 400.0, 120.0, 15.0
# (vehicle that flies back, vehicle whose path it flies): index = 8 row + column
MEETINGS = {9: 1, 36: 28, 54: 46}


def geo(n, e):
    return LAT0 + n / M_PER_DEG_LAT, LON0 + e / M_PER_DEG_LON


def plan(i):
    """(home north, home east, end north, end east, altitude) of vehicle i."""
    if i in MEETINGS:
        hn, he, en, ee, alt = plan(MEETINGS[i])
        return en, ee, hn, he, alt + 4.0
    row, col = divmod(i, 8)
    heading = math.radians((i * 47) % 360)
    hn, he = row * SPACING - 1400.0, col * SPACING - 1400.0
    return hn, he, hn + LEG * math.cos(heading), he + LEG * math.sin(heading), ALT


def mission(i):
    hn, he, en, ee, alt = plan(i)
    home, end = geo(hn, he), geo(en, ee)
    rows = [
        (0, 1, 0, 16, home[0], home[1], ALT0),
        (1, 0, 3, 22, 0.0, 0.0, alt),
        (2, 0, 3, 16, end[0], end[1], alt),
        (3, 0, 3, 21, end[0], end[1], 0.0),
    ]
    lines = ["QGC WPL 110"]
    for seq, cur, frame, cmd, lat, lon, a in rows:
        lines.append(f"{seq}\t{cur}\t{frame}\t{cmd}\t0\t0\t0\t0\t{lat:.8f}\t{lon:.8f}\t{a:g}\t1")
    return "\n".join(lines) + "\n"


def vehicles():
    out = []
    for i in range(64):
        hn, he, *_ = plan(i)
        out.append(
            f'[[vehicles]]\nname = "v{i:02}"\nspec = "iris"\n'
            f'mission = "../missions/region64/v{i:02}.waypoints"\n'
            f"start_north_m = {hn:g}\nstart_east_m = {he:g}\n"
        )
    return "\n".join(out)


HEADER = """# 64 Iris over a 2.8 km square (an 8 x 8 grid of homes 400 m apart), each
# flying 120 m on a heading of its own at 15 m and landing. Three pairs
# meet: one flies the other's path back 4 m higher, and the separation
# check records their proximity mid-way (5 m), no collision. Most of the
# time no pair can come near: the fleet's lookahead steps long stretches
# between checks. Written by examples/missions/region64/generate.py.
#
#   lockstep fly examples/scenarios/region64.toml --out region64
schema_version = 1
description = "64 Iris spread over 2.8 km; three pairs pass within proximity"

[simulation]
seed = 64
duration_s = 80.0

[cadences]
log = { rate_hz = 10 }

[world]
origin_lat_deg = 47.397742
origin_lon_deg = 8.545594
origin_alt_m = 488.0

[fleet]
proximity_m = 5.0
# Four levels, a quadrant each: a distributed run deals them to its
# secondaries.
level_grid = { north_m = [-1500.0, 1500.0], east_m = [-1500.0, 1500.0], rows = 2, columns = 2 }

[expect]
mission_finished = true
disarmed = true

[[events]]
at_s = 1.0
action = "arm"

[[events]]
at_s = 2.0
action = "mission_start"

"""

if __name__ == "__main__":
    for i in range(64):
        with open(f"v{i:02}.waypoints", "w") as f:
            f.write(mission(i))
    with open("../../scenarios/region64.toml", "w") as f:
        f.write(HEADER + vehicles())
