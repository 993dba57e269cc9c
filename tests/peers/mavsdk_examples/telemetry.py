"""MAVSDK-Python's telemetry example, call for call (see README.md):
print battery, GPS info, in-air and position as they come, for ever (the
test stops it)."""

import asyncio
import sys

import mavsdk_grpc as mavsdk


async def run(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    asyncio.ensure_future(print_battery(drone))
    asyncio.ensure_future(print_gps_info(drone))
    asyncio.ensure_future(print_in_air(drone))
    asyncio.ensure_future(print_position(drone))
    while True:
        await asyncio.sleep(1)


async def print_battery(drone):
    async for battery in drone.telemetry.battery():
        print(f"Battery: {battery.remaining_percent}", flush=True)


async def print_gps_info(drone):
    async for gps_info in drone.telemetry.gps_info():
        print(f"GPS info: {gps_info}", flush=True)


async def print_in_air(drone):
    async for in_air in drone.telemetry.in_air():
        print(f"In air: {in_air}", flush=True)


async def print_position(drone):
    async for position in drone.telemetry.position():
        print(position, flush=True)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
