"""MAVSDK-Python's offboard_velocity_body example, call for call (see
README.md): wait for global position and home, arm, an initial zero
setpoint, start offboard, then body velocities with yaw rates (turn and
climb 5 s, turn back 5 s, wait 2 s, a circle 15 s, wait 5 s, a sideways
circle 15 s, wait 8 s), stop offboard."""

import asyncio
import sys

import mavsdk_grpc as mavsdk
from mavsdk_grpc.offboard import OffboardError, VelocityBodyYawspeed


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
    await drone.offboard.set_velocity_body(VelocityBodyYawspeed(0.0, 0.0, 0.0, 0.0))
    print("-- Starting offboard")
    try:
        await drone.offboard.start()
    except OffboardError as error:
        print(f"Starting offboard mode failed with error code: {error._result.result}")
        print("-- Disarming")
        await drone.action.disarm()
        return
    for (f, r, d, yawspeed, wait) in [(0.0, 0.0, -1.0, 60.0, 5), (0.0, 0.0, 0.0, -60.0, 5),
                                      (0.0, 0.0, 0.0, 0.0, 2), (5.0, 0.0, 0.0, 30.0, 15),
                                      (0.0, 0.0, 0.0, 0.0, 5), (0.0, -5.0, 0.0, 30.0, 15),
                                      (0.0, 0.0, 0.0, 0.0, 8)]:
        print(f"-- Body velocity {f}, {r}, {d} m/s, yaw rate {yawspeed} deg/s")
        await drone.offboard.set_velocity_body(VelocityBodyYawspeed(f, r, d, yawspeed))
        await asyncio.sleep(wait)
    print("-- Stopping offboard")
    try:
        await drone.offboard.stop()
    except OffboardError as error:
        print(f"Stopping offboard mode failed with error code: {error._result.result}")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
