"""MAVSDK-Python's mission example, call for call (see README.md): three
waypoints 25 m above home at 10 m/s, return to launch after the mission,
upload, wait for global position and home, arm, start, and end once the
vehicle has been in the air and is on the ground again."""

import asyncio
import sys

import mavsdk_grpc as mavsdk
from mavsdk_grpc.mission import MissionItem, MissionPlan


def item(lat, lon):
    nan = float("nan")
    return MissionItem(lat, lon, 25, 10, True, nan, nan, MissionItem.CameraAction.NONE,
                       nan, nan, nan, nan, nan, MissionItem.VehicleAction.NONE)


async def run(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    print("Waiting for drone to connect...")
    async for state in drone.core.connection_state():
        if state.is_connected:
            print("-- Connected to drone!")
            break
    progress = asyncio.ensure_future(print_mission_progress(drone))
    termination = asyncio.ensure_future(observe_is_in_air(drone, [progress]))
    plan = MissionPlan([
        item(47.398039859999997, 8.5455725400000002),
        item(47.398036222362471, 8.5450146439425509),
        item(47.397825620791885, 8.5450092830163271),
    ])
    await drone.mission.set_return_to_launch_after_mission(True)
    print("-- Uploading mission")
    await drone.mission.upload_mission(plan)
    print("Waiting for drone to have a global position estimate...")
    async for health in drone.telemetry.health():
        if health.is_global_position_ok and health.is_home_position_ok:
            print("-- Global position estimate OK")
            break
    print("-- Arming")
    await drone.action.arm()
    print("-- Starting mission")
    await drone.mission.start_mission()
    await termination


async def print_mission_progress(drone):
    async for p in drone.mission.mission_progress():
        print(f"Mission progress: {p.current}/{p.total}")


async def observe_is_in_air(drone, running_tasks):
    was_in_air = False
    async for is_in_air in drone.telemetry.in_air():
        if is_in_air:
            was_in_air = is_in_air
        if was_in_air and not is_in_air:
            for task in running_tasks:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
            return


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
