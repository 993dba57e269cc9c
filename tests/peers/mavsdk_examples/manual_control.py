"""MAVSDK-Python's manual_control example, call for call (see README.md):
wait for the connection and a global position, centred sticks, arm, take
off, wait 5 s, centred sticks, start position control, then a random
stick input from the example's test set every 0.1 s, for ever (the test
stops it)."""

import asyncio
import random
import sys

import mavsdk_grpc as mavsdk

# The example's test set: [roll, pitch, throttle, yaw].
manual_inputs = [
    [0, 0, 0.5, 0],
    [-1, 0, 0.5, 0],
    [1, 0, 0.5, 0],
    [0, -1, 0.5, 0],
    [0, 1, 0.5, 0],
    [0, 0, 0.5, -1],
    [0, 0, 0.5, 1],
    [0, 0, 1, 0],
    [0, 0, 0, 0],
]


async def manual_controls(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    print("Waiting for drone to connect...")
    async for state in drone.core.connection_state():
        if state.is_connected:
            print("-- Connected to drone!")
            break
    async for health in drone.telemetry.health():
        if health.is_global_position_ok and health.is_home_position_ok:
            print("-- Global position state is good enough for flying.")
            break
    await drone.manual_control.set_manual_control_input(
        float(0), float(0), float(0.5), float(0))
    print("-- Arming")
    await drone.action.arm()
    print("-- Taking off")
    await drone.action.takeoff()
    await asyncio.sleep(5)
    await drone.manual_control.set_manual_control_input(
        float(0), float(0), float(0.5), float(0))
    print("-- Starting manual control", flush=True)
    await drone.manual_control.start_position_control()
    while True:
        input_index = random.randint(0, len(manual_inputs) - 1)
        input_list = manual_inputs[input_index]
        roll = float(input_list[0])
        pitch = float(input_list[1])
        throttle = float(input_list[2])
        yaw = float(input_list[3])
        await drone.manual_control.set_manual_control_input(
            roll, pitch, throttle, yaw)
        await asyncio.sleep(0.1)


if __name__ == "__main__":
    asyncio.run(manual_controls(sys.argv[1]))
