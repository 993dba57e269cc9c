"""MAVSDK-Python's goto example, call for call (see README.md): wait for
the connection and a global position, read home's altitude above mean sea
level, arm, take off, wait 1 s, go to 47.399386, 8.535245 at 20 m above
home (Action.goto_location: MAV_CMD_DO_REPOSITION) and exit."""

import asyncio
import sys

import mavsdk_grpc as mavsdk


async def run(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    print("Waiting for drone to connect...")
    async for state in drone.core.connection_state():
        if state.is_connected:
            print("Drone discovered!")
            break
    print("Waiting for drone to have a global position estimate...")
    async for health in drone.telemetry.health():
        if health.is_global_position_ok:
            print("Global position estimate ok")
            break
    print("Fetching amsl altitude at home location....")
    async for terrain_info in drone.telemetry.home():
        absolute_altitude = terrain_info.absolute_altitude_m
        break
    print("-- Arming")
    await drone.action.arm()
    print("-- Taking off")
    await drone.action.takeoff()
    await asyncio.sleep(1)
    flying_alt = absolute_altitude + 20.0
    await drone.action.goto_location(47.399386, 8.535245, flying_alt, 0)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
