"""MAVSDK's view of the vehicle's health, used as its own documentation
shows: the native `mavsdk` binding (4.x) listening on a UDP port, its
Telemetry plugin's `health()` stream and `status_text()`.

It waits for the first autopilot, then records each change of the health
flags and every status text (stamped with wall seconds since connecting),
until `--seconds` of wall time have passed.

    python3 mavsdk_health.py --port 14540 --seconds 20 --out health.json

The result file holds {"connected", "first_all_ok_s", "armable",
"health": [{"t", "gyro", "accel", "mag", "local", "global", "home",
"armable"}...], "status_texts": [{"t", "type", "text"}...],
"errors"}. Exit status: 0 when it connected, 2 if no autopilot was found.
"""

import argparse
import asyncio
import json
import sys
import time

from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
from mavsdk.asyncio.plugins.telemetry import TelemetryAsync


def flags(h):
    return {
        "gyro": h.is_gyrometer_calibration_ok,
        "accel": h.is_accelerometer_calibration_ok,
        "mag": h.is_magnetometer_calibration_ok,
        "local": h.is_local_position_ok,
        "global": h.is_global_position_ok,
        "home": h.is_home_position_ok,
        "armable": h.is_armable,
    }


async def record_health(telemetry, start, result):
    async for h in telemetry.subscribe_health():
        f = flags(h)
        f["t"] = round(time.monotonic() - start, 3)
        if not result["health"] or {k: v for k, v in result["health"][-1].items() if k != "t"} != \
                {k: v for k, v in f.items() if k != "t"}:
            result["health"].append(f)
        if result["first_all_ok_s"] is None and all(v for k, v in f.items() if k != "t"):
            result["first_all_ok_s"] = f["t"]


async def record_texts(telemetry, start, result):
    async for s in telemetry.subscribe_status_text():
        result["status_texts"].append({
            "t": round(time.monotonic() - start, 3),
            "type": str(s.type),
            "text": s.text,
        })


async def watch(args, result):
    config = Configuration.create_with_component_type(ComponentType.GROUND_STATION)
    async with Mavsdk(config) as mavsdk:
        await mavsdk.add_any_connection(f"udpin://127.0.0.1:{args.port}")
        system = await mavsdk.first_autopilot(timeout_s=args.timeout)
        if system is None:
            return 2
        result["connected"] = True
        telemetry = TelemetryAsync(system)
        start = time.monotonic()
        tasks = [asyncio.ensure_future(record_health(telemetry, start, result)),
                 asyncio.ensure_future(record_texts(telemetry, start, result))]
        await asyncio.sleep(args.seconds)
        result["health_all_ok"] = await telemetry.health_all_ok()
        for t in tasks:
            t.cancel()
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True,
                        help="wall seconds to watch after connecting")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for the autopilot")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = {"connected": False, "first_all_ok_s": None, "health_all_ok": None,
              "health": [], "status_texts": [], "errors": []}
    try:
        status = asyncio.run(watch(args, result))
    except Exception as e:  # recorded, then reported through the exit status
        result["errors"].append(f"{type(e).__name__}: {e}")
        status = 1
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    return status


if __name__ == "__main__":
    sys.exit(main())
