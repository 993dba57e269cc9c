"""A MAVSDK (gRPC, `mavsdk-grpc`) parameter client of ours, used as MAVSDK's
documentation shows its Param plugin: read a float and an integer, write
each and read it back, then write values the autopilot refuses (out of
range, a name it does not have) and report how MAVSDK reports them.

    python3 mavsdk_params.py URL OUT.json
"""

import asyncio
import json
import sys

import mavsdk_grpc as mavsdk
from mavsdk_grpc.param import ParamError


async def run(url, out):
    result = {}
    drone = mavsdk.System()
    await drone.connect(system_address=url)
    async for state in drone.core.connection_state():
        if state.is_connected:
            break
    p = drone.param
    result["float_before"] = await p.get_param_float("MPC_XY_VEL_P")
    await p.set_param_float("MPC_XY_VEL_P", 2.25)
    result["float_after"] = await p.get_param_float("MPC_XY_VEL_P")
    result["int_before"] = await p.get_param_int("MIS_YAW_TO_WP")
    await p.set_param_int("MIS_YAW_TO_WP", 1)
    result["int_after"] = await p.get_param_int("MIS_YAW_TO_WP")
    for key, call in [("out_of_range", p.set_param_float("MPC_XY_VEL_P", 99.0)),
                      ("unknown", p.set_param_float("NO_SUCH_PARAM", 1.0))]:
        try:
            await call
            result[key] = "accepted"
        except ParamError as e:
            result[key] = str(e._result.result)
    result["float_kept"] = await p.get_param_float("MPC_XY_VEL_P")
    all_params = await p.get_all_params()
    result["count"] = len(all_params.int_params) + len(all_params.float_params)
    json.dump(result, open(out, "w"))


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2]))
