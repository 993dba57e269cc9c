"""Gymnasium environments: the C autopilot in lockstep with the simulated
multirotor, or the agent on the motors.

Registered ids (``gymnasium.make(id, **options)``):

- ``lockstep/Hover-v0``: reach and hold a point (``target``, NED m; default
  10 m above the start).
- ``lockstep/Waypoints-v0``: fly through ``waypoints`` in order (each reached
  within ``radius_m``).

Options (keywords of ``make``, ``make_vec`` and the classes):

- ``action``: ``"velocity"`` (a velocity setpoint for the reference C
  autopilot, NED m/s, each component within ``max_speed_mps``),
  ``"position"`` (a position setpoint, NED m, within ``bounds_m``),
  ``"rates"`` (collective thrust as a fraction of the total, then body rates
  FRD rad/s within ``max_rate_radps``, flown by the autopilot's rate loop), or
  ``"motors"`` (one command per rotor in [0, 1], the autopilot bypassed).
  With the first three the environment arms the vehicle before the agent's
  first step and the autopilot flies its OFFBOARD mode.
- ``observation``: ``"estimate"`` (what the autopilot sees: noisy, delayed) or
  ``"truth"``. The observation is float32: position relative to the goal (3),
  velocity (3), attitude quaternion w, x, y, z (4), body rates (3); Waypoints
  adds the position relative to the next waypoint (3) and the fraction of the
  route flown (1).
- ``control_hz`` (default 250: one action every 4 ms; the plant steps at the
  scenario's physics rate), ``episode_s`` (truncation; default 10),
  ``bounds_m`` (terminated farther than this from the goal), ``scenario``,
  ``spec``, ``set``, ``params``, ``autopilot`` (as ``lockstep.fly``: wind,
  dispersions, sensor models and faults come from the scenario),
  ``isolation`` (``"process"``, default, or ``"in-process"``). The scenario's
  ``[montecarlo]`` dispersions, if any, are drawn anew for each episode's
  seed (domain randomization: ``set={"montecarlo": {"mass_sigma": 0.1}}``).

Reward: Hover, minus the distance to the target plus a tenth of the speed,
times the control period; Waypoints, the progress toward the current waypoint
less 0.1 per second, plus 10 per waypoint reached. A crash terminates the
episode with a penalty of 10.

``reset(seed=s)`` is deterministic: the episode is the scenario flown under
seed ``s``; ``reset()`` after it draws the next episode's seed from ``s`` by
name. The vector environment (``gymnasium.make_vec(id, num_envs=N,
vectorization_mode="vector_entry_point")``) steps N vehicles on threads with
the GIL released; lane i reset with seed ``s`` is seeded ``s + i`` and equals
a single environment reset with ``s + i``, bit for bit. It autoresets in the
next step (Gymnasium's ``AutoresetMode.NEXT_STEP``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from . import _native

try:  # Gymnasium >= 1.1 names the autoreset modes.
    from gymnasium.vector import AutoresetMode

    _NEXT_STEP: Any = AutoresetMode.NEXT_STEP
except ImportError:  # pragma: no cover - Gymnasium 1.0
    _NEXT_STEP = "NextStep"

_SCENARIOS = {"hover": "hover.toml", "waypoints": "waypoints.toml"}


def _scenario(task: str, scenario):
    if scenario is not None:
        return scenario
    import os

    name = _SCENARIOS.get(task)
    if name is None:
        return None  # the native side names the bad task
    return os.path.join(os.path.dirname(__file__), "scenarios", name)


def _spaces(d: Dict[str, Any]) -> Tuple[spaces.Box, spaces.Box]:
    obs = spaces.Box(low=-np.inf, high=np.inf, shape=(d["obs_len"],), dtype=np.float32)
    act = spaces.Box(low=d["action_low"], high=d["action_high"], dtype=np.float32)
    return obs, act


class LockstepEnv(gym.Env):
    """One vehicle; see the module's documentation for the options."""

    metadata = {"render_modes": []}

    def __init__(self, task: str = "hover", scenario=None, *, seed: Optional[int] = None, **options):
        super().__init__()
        self._core = _native._Env(_scenario(task, scenario), task=task, seed=seed, **options)
        d = self._core.describe()
        self.observation_space, self.action_space = _spaces(d)
        self.control_us = d["control_us"]
        self.episode_us = d["episode_us"]

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        return self._core.reset(seed)

    def step(self, action):
        a = np.asarray(action, dtype=np.float32)
        if a.shape != self.action_space.shape:
            raise ValueError(
                f"the action has shape {a.shape}; the action space's is {self.action_space.shape}"
            )
        return self._core.step(np.ascontiguousarray(a))


class LockstepVectorEnv(VectorEnv):
    """N vehicles stepped on threads, the GIL released; see the module's
    documentation. ``threads`` (default: the cores) does not change the
    results."""

    metadata = {"autoreset_mode": _NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        task: str = "hover",
        scenario=None,
        *,
        threads: Optional[int] = None,
        seed: Optional[int] = None,
        **options,
    ):
        self._core = _native._VectorEnv(
            num_envs, _scenario(task, scenario), threads=threads, task=task, seed=seed, **options
        )
        d = self._core.describe()
        self.num_envs = num_envs
        self.single_observation_space, self.single_action_space = _spaces(d)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.control_us = d["control_us"]
        self.episode_us = d["episode_us"]

    def reset(self, *, seed=None, options: Optional[dict] = None):
        if seed is not None and not isinstance(seed, int):
            seed = list(seed)
        return self._core.reset(seed)

    def step(self, actions):
        a = np.asarray(actions, dtype=np.float32)
        return self._core.step(np.ascontiguousarray(a))

    def close_extras(self, **kwargs):
        self._core = None


def _make_vec(task: str):
    def make(num_envs: int = 1, **kwargs):
        kwargs.pop("render_mode", None)
        kwargs.setdefault("task", task)
        return LockstepVectorEnv(num_envs, **kwargs)

    return make


def _register() -> None:
    for name, task, steps in (("Hover-v0", "hover", None), ("Waypoints-v0", "waypoints", None)):
        env_id = f"lockstep/{name}"
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=LockstepEnv,
            vector_entry_point=_make_vec(task),
            kwargs={"task": task},
            max_episode_steps=steps,
            disable_env_checker=False,
        )


_register()
