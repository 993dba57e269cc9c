"""A Monte Carlo batch on Dask: each run a task (``lockstep.montecarlo_run``,
one flight of the batch's dispersions), the rows merged into one table,
checked equal to the batch flown locally (``lockstep.montecarlo``).

    pip install "dask[distributed]" pandas
    python3 python/examples/dask_montecarlo.py --runs 16                     # a local cluster
    python3 python/examples/dask_montecarlo.py --scheduler tcp://host:8786   # an existing cluster

The workers need the lockstep package (and the scenario's files at the same
paths). Run k's draws depend on the master seed and k only, which is why the
merged table does not depend on where or in which order the runs flew.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from dask.distributed import Client, LocalCluster

import lockstep

SCENARIO = str(Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "montecarlo.toml")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--scenario", default=SCENARIO)
    ap.add_argument("--scheduler", help="an existing Dask scheduler's address (default: a local cluster)")
    a = ap.parse_args()
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        # Processes on loopback only: no other address is touched.
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    futures = [client.submit(lockstep.montecarlo_run, a.scenario, k, pure=True) for k in range(a.runs)]
    rows = client.gather(futures)
    table = pd.DataFrame(rows).sort_values("run").reset_index(drop=True)
    local = lockstep.montecarlo(a.scenario, runs=a.runs).to_pandas()
    same = table.equals(local) and (table.dtypes == local.dtypes).all()
    print(table[["run", "seed", "status", "passed", "landing_error_m", "digest"]].to_string(index=False))
    print(f"{a.runs} runs on Dask; the same table as the local batch: {same}")
    client.close()
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
