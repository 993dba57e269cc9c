"""A ground-station client written with MAVSDK, used as it is: a real client
written by others, not a peer of ours. It is the native `mavsdk` binding (4.x,
ctypes over libcmavsdk, its asyncio API), not the old gRPC MAVSDK-Python.

It listens on a UDP port, as a ground station does for PX4 SITL on 14540,
waits for an autopilot, uploads a 4-waypoint square mission (the Mission plugin
sends MISSION_ITEM_INT), downloads it back, arms, starts the mission, follows
its progress until it is finished, lands and waits for the vehicle to be on the
ground and disarmed.

    python3 mavsdk_client.py --port 14540 --home-lat 47.397742 --home-lon 8.545594 \
        --timeout 120 --out result.json

The result file holds {"connected", "uploaded", "downloaded", "progress",
"finished", "landed", "disarmed", "errors"}. Exit status: 0 on success, 2 if no
autopilot was found in time, 1 on any other failure.
"""

import argparse
import asyncio
import json
import math
import sys

from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
from mavsdk.asyncio.plugins.action import ActionAsync
from mavsdk.asyncio.plugins.mission import MissionAsync, MissionItem, MissionPlan
from mavsdk.asyncio.plugins.telemetry import TelemetryAsync

M_PER_DEG_LAT = 111319.49
SQUARE = [(20, 0), (20, 20), (0, 20), (0, 0)]  # (north, east) in m from home


class NoAutopilot(Exception):
    pass


def square_mission(home_lat, home_lon):
    """Four waypoints of a 20 m square, flat-earth offsets from home."""
    m_per_deg_lon = M_PER_DEG_LAT * math.cos(math.radians(home_lat))
    items = [
        MissionItem(
            latitude_deg=home_lat + north / M_PER_DEG_LAT,
            longitude_deg=home_lon + east / m_per_deg_lon,
            relative_altitude_m=10.0,
            speed_m_s=5.0,
            is_fly_through=False,
            acceptance_radius_m=2.0,
        )  # everything else keeps MissionItem's defaults (NaN / NONE)
        for north, east in SQUARE
    ]
    return MissionPlan(items)


async def follow_progress(mission, progress):
    """Record each new (current, total) until current == total."""
    async for p in mission.subscribe_mission_progress():
        pair = [p.current, p.total]
        if not progress or progress[-1] != pair:
            progress.append(pair)
        if p.total > 0 and p.current == p.total:
            return True


async def wait_landed(telemetry, result):
    """Poll telemetry until the vehicle is on the ground and disarmed."""
    while True:
        result["landed"] = not await telemetry.in_air()
        result["disarmed"] = not await telemetry.armed()
        if result["landed"] and result["disarmed"]:
            return
        await asyncio.sleep(0.2)


async def fly(args, result):
    config = Configuration.create_with_component_type(ComponentType.GROUND_STATION)
    async with Mavsdk(config) as mavsdk:
        await mavsdk.add_any_connection(f"udpin://127.0.0.1:{args.port}")
        system = await mavsdk.first_autopilot(timeout_s=args.timeout)
        if system is None:
            raise NoAutopilot(
                f"no autopilot heard on udp 127.0.0.1:{args.port} "
                f"within {args.timeout} s")
        result["connected"] = True
        mission = MissionAsync(system)
        action = ActionAsync(system)
        telemetry = TelemetryAsync(system)

        plan = square_mission(args.home_lat, args.home_lon)
        await asyncio.wait_for(mission.upload_mission(plan), args.timeout)
        result["uploaded"] = len(plan.mission_items)
        downloaded = await asyncio.wait_for(mission.download_mission(), args.timeout)
        result["downloaded"] = len(downloaded.mission_items)

        # Subscribe before starting, so that no progress update is missed.
        watch = asyncio.ensure_future(follow_progress(mission, result["progress"]))
        try:
            await action.arm()
            await mission.start_mission()
            result["finished"] = bool(await asyncio.wait_for(watch, args.timeout))
        except asyncio.TimeoutError:
            result["errors"].append(f"mission not finished within {args.timeout} s")
        finally:
            watch.cancel()

        await action.land()
        try:
            await asyncio.wait_for(wait_landed(telemetry, result), args.timeout)
        except asyncio.TimeoutError:
            result["errors"].append(
                f"not landed and disarmed within {args.timeout} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True,
                        help="UDP port to listen on at 127.0.0.1")
    parser.add_argument("--home-lat", type=float, required=True)
    parser.add_argument("--home-lon", type=float, required=True)
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds allowed for each stage (default 120)")
    parser.add_argument("--out", help="path of the JSON result file")
    args = parser.parse_args()

    result = {"connected": False, "uploaded": 0, "downloaded": 0,
              "progress": [], "finished": False, "landed": False,
              "disarmed": False, "errors": []}
    status = 0
    try:
        asyncio.run(fly(args, result))
    except NoAutopilot as e:
        result["errors"].append(str(e))
        status = 2
    except Exception as e:  # recorded, then reported through the exit status
        result["errors"].append(f"{type(e).__name__}: {e}")
        status = 1

    ok = (result["uploaded"] == len(SQUARE) and result["downloaded"] == len(SQUARE)
          and result["finished"] and result["landed"] and result["disarmed"]
          and not result["errors"])
    if status == 0 and not ok:
        status = 1
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
    if status:
        reasons = "; ".join(result["errors"]) or "mission incomplete: " + json.dumps(result)
        print(f"mavsdk_client: FAILED: {reasons}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
