"""MAVSDK-Python's all_params example, call for call (see README.md):
get every parameter and print the integers, then the floats."""

import asyncio
import sys

import mavsdk_grpc as mavsdk


async def run(url):
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    all_params = await drone.param.get_all_params()
    for param in all_params.int_params:
        print(f"{param.name}: {param.value}")
    for param in all_params.float_params:
        print(f"{param.name}: {param.value}")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
