"""MAVSDK-Python's offboard_position_ned example, call for call (see
README.md): wait for global position and home, arm, set an initial
setpoint, start offboard, then four NED positions with headings (10, 10,
15 and 10 s), stop offboard."""

import asyncio
import sys

import mavsdk_grpc as mavsdk
from mavsdk_grpc.offboard import OffboardError, PositionNedYaw


async def run(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
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
    print("-- Setting initial setpoint")
    await drone.offboard.set_position_ned(PositionNedYaw(0.0, 0.0, 0.0, 0.0))
    print("-- Starting offboard")
    try:
        await drone.offboard.start()
    except OffboardError as error:
        print(f"Starting offboard mode failed with error code: {error._result.result}")
        print("-- Disarming")
        await drone.action.disarm()
        return
    for (n, e, d, yaw, wait) in [(0.0, 0.0, -5.0, 0.0, 10), (5.0, 0.0, -5.0, 90.0, 10),
                                 (5.0, 10.0, -5.0, 90.0, 15), (0.0, 10.0, 0.0, 180.0, 10)]:
        print(f"-- Go {n}m North, {e}m East, {d}m Down, heading {yaw}")
        await drone.offboard.set_position_ned(PositionNedYaw(n, e, d, yaw))
        await asyncio.sleep(wait)
    print("-- Stopping offboard")
    try:
        await drone.offboard.stop()
    except OffboardError as error:
        print(f"Stopping offboard mode failed with error code: {error._result.result}")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
