"""Throughput of lockstep from Python, side by side with RotorPy in the same
process on the same machine (the figures of issue 22's note).

    python3 python/bench/throughput.py [--quick]

Prints, each the median of 5 repeats:
- single-environment steps per second at a 4 ms control step (Hover,
  velocity setpoints, the C autopilot in the loop at 250 Hz, the plant at
  1 kHz), the autopilot in-process and isolated;
- vector-environment vehicle steps per second for N = 1, 2, 8, 64 (threads:
  the cores);
- RotorPy stepped as its environment steps it (Multirotor.step over 4 ms
  with scipy's solve_ivp), with its SE3 controller in the loop, and with
  random motor speeds;
- Python's cost per Sim.step(1) against the engine's own per-boundary cost
  (Sim.step(n) for a large n: the Rust loop), and per vector step;
- two Sims flown in two Python threads against one after the other (the
  GIL is released while they step).
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

import numpy as np

import lockstep
from lockstep.envs import LockstepEnv, LockstepVectorEnv


def median_rate(fn, repeats=5):
    rates = []
    for _ in range(repeats):
        n, dt = fn()
        rates.append(n / dt)
    return statistics.median(rates)


def single_env(isolation, steps):
    env = LockstepEnv("hover", isolation=isolation, episode_s=10.0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-3, 3, size=(steps, 3)).astype(np.float32)
    env.reset(seed=0)

    def run():
        t = time.perf_counter()
        for a in actions:
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
                env.reset()
        return steps, time.perf_counter() - t

    return median_rate(run)


def vector_env(n, steps):
    v = LockstepVectorEnv(n, "hover", isolation="in-process", episode_s=10.0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-3, 3, size=(steps, n, 3)).astype(np.float32)
    v.reset(seed=0)

    def run():
        t = time.perf_counter()
        for a in actions:
            v.step(a)
        return steps * n, time.perf_counter() - t

    return median_rate(run)


def rotorpy_rates(steps):
    from rotorpy.controllers.quadrotor_control import SE3Control
    from rotorpy.vehicles.crazyflie_params import quad_params
    from rotorpy.vehicles.multirotor import Multirotor

    out = {}
    vehicle = Multirotor(quad_params, control_abstraction="cmd_motor_speeds")
    controller = SE3Control(quad_params)
    flat = {
        "x": np.array([0.0, 0.0, 1.0]),
        "x_dot": np.zeros(3),
        "x_ddot": np.zeros(3),
        "x_dddot": np.zeros(3),
        "x_ddddot": np.zeros(3),
        "yaw": 0.0,
        "yaw_dot": 0.0,
        "yaw_ddot": 0.0,
    }

    def controlled():
        state = dict(vehicle.initial_state)
        t = time.perf_counter()
        for k in range(steps):
            u = controller.update(k * 0.004, state, flat)
            state = vehicle.step(state, u, 0.004)
        return steps, time.perf_counter() - t

    out["rotorpy SE3 controller + Multirotor.step"] = median_rate(controlled, 3)
    rng = np.random.default_rng(0)
    speeds = rng.uniform(1500, 2100, size=(steps, 4))

    def motors():
        state = dict(vehicle.initial_state)
        t = time.perf_counter()
        for s in speeds:
            state = vehicle.step(state, {"cmd_motor_speeds": s}, 0.004)
        return steps, time.perf_counter() - t

    out["rotorpy Multirotor.step, random motor speeds"] = median_rate(motors, 3)
    return out


def step_overhead(boundaries):
    s = lockstep.Sim(duration=3600, isolation="in-process")
    s.step(1000)

    def one_by_one():
        t = time.perf_counter()
        for _ in range(boundaries):
            s.step(1)
        return boundaries, time.perf_counter() - t

    def in_rust():
        t = time.perf_counter()
        s.step(boundaries)
        return boundaries, time.perf_counter() - t

    py = median_rate(one_by_one)
    rust = median_rate(in_rust)
    return py, rust


def two_threads(seconds):
    def fly(sims):
        for s in sims:
            s.run_until(int(seconds * 1e6))

    sims = [lockstep.Sim(duration=seconds, isolation="in-process") for _ in range(2)]
    t = time.perf_counter()
    fly(sims)
    serial = time.perf_counter() - t
    sims = [lockstep.Sim(duration=seconds, isolation="in-process") for _ in range(2)]
    threads = [threading.Thread(target=fly, args=([s],)) for s in sims]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    parallel = time.perf_counter() - t
    return serial, parallel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    a = ap.parse_args()
    steps = 2_000 if a.quick else 20_000
    print(f"machine: {os.cpu_count()} cores; lockstep {lockstep.__version__}")
    rows = []
    single_in = single_env("in-process", steps)
    rows.append(("lockstep single env, autopilot in-process", single_in))
    rows.append(("lockstep single env, autopilot isolated", single_env("process", steps)))
    for n in (1, 2, 8, 64):
        rows.append((f"lockstep vector env N={n} (vehicle steps)", vector_env(n, max(steps // n, 50))))
    try:
        for k, v in rotorpy_rates(300 if a.quick else 2000).items():
            rows.append((k, v))
        rotor = rows[-2][1]
    except ImportError as e:
        print(f"RotorPy not installed ({e}); pip install rotorpy")
        rotor = None
    for name, rate in rows:
        ratio = f"  {rate / rotor:8.0f}x RotorPy (controlled)" if rotor else ""
        print(f"{name:55s} {rate:12.0f} steps/s{ratio}")
    py, rust = step_overhead(20_000 if a.quick else 200_000)
    print(
        f"Sim.step(1): {1e6 / py:.2f} us per call; the engine's own boundary (Sim.step(n)): "
        f"{1e6 / rust:.2f} us; ratio {rust / py:.2f}"
    )
    serial, parallel = two_threads(30 if a.quick else 300)
    print(f"two Sims: one after the other {serial:.2f} s, in two Python threads {parallel:.2f} s: x{serial / parallel:.2f}")


if __name__ == "__main__":
    main()
