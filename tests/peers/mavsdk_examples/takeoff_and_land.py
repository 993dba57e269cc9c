"""MAVSDK-Python's takeoff_and_land example, call for call (see README.md):
wait for the connection and for global position and home, arm, take off,
wait 10 s, land."""

import asyncio
import sys

import mavsdk_grpc as mavsdk


async def run(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    status_text_task = asyncio.ensure_future(print_status_text(drone))
    print("Waiting for drone to connect...")
    async for state in drone.core.connection_state():
        if state.is_connected:
            print("-- Connected to drone!")
            break
    print("Waiting for drone to have a global position estimate...")
    async for health in drone.telemetry.health():
        if health.is_global_position_ok and health.is_home_position_ok:
            print("-- Global position estimate OK")
            break
    print("-- Arming")
    await drone.action.arm()
    print("-- Taking off")
    await drone.action.takeoff()
    await asyncio.sleep(10)
    print("-- Landing")
    await drone.action.land()
    status_text_task.cancel()


async def print_status_text(drone):
    try:
        async for status_text in drone.telemetry.status_text():
            print(f"Status: {status_text.type}: {status_text.text}")
    except asyncio.CancelledError:
        return


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
