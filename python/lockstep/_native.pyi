"""Type stubs of lockstep's extension module (the Rust side of the
package). Use the names ``lockstep`` exports; the underscored functions are
wrapped by ``lockstep.runs`` and ``lockstep.envs``."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

PathLike = Union[str, "os.PathLike[str]"]
__version__: str

class Error(Exception):
    """A lockstep error: ``error_class``, ``part``, ``exit_status``,
    ``signal``, ``context`` say more."""

    error_class: str
    part: Optional[str]
    exit_status: int
    signal: Optional[int]
    context: List[str]

class ConfigurationError(Error): ...
class RunFailure(Error): ...
class ExpectationFailed(Error): ...
class Interrupted(Error): ...
class EndedError(RuntimeError): ...

def specs() -> Dict[str, str]:
    """The built-in aircraft: name -> description."""

def spec_toml(name: str, *, resolved: bool = False) -> str:
    """A built-in aircraft's spec as TOML (``resolved``: its base merged in)."""

def mode_names() -> Dict[int, str]:
    """Flight-mode names by code (the log's ``mode`` column)."""

def _fly(
    scenario: Optional[PathLike] = None,
    *,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
    isolation: Optional[str] = None,
    step_timeout: Optional[float] = None,
    out: Optional[PathLike] = None,
) -> Tuple[str, Dict[str, np.ndarray], Optional[str]]: ...
def _montecarlo(
    scenario: Optional[PathLike] = None,
    *,
    runs: Optional[int] = None,
    jobs: Optional[int] = None,
    workers: Optional[str] = None,
    run_timeout: Optional[float] = None,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
) -> Tuple[str, Dict[str, np.ndarray]]: ...
def _montecarlo_run(
    scenario: Optional[PathLike],
    run: int,
    *,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
) -> Dict[str, np.ndarray]: ...
def _compare_integrators(
    scenario: Optional[PathLike] = None,
    *,
    methods: Optional[Sequence[str]] = None,
    steps_us: Optional[Sequence[int]] = None,
    tolerances: Optional[Sequence[float]] = None,
    repeats: int = 1,
    horizon_s: Optional[float] = None,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
    isolation: Optional[str] = None,
    out: Optional[PathLike] = None,
) -> str: ...
def _child(args: List[str]) -> int: ...

class Sim:
    """A whole vehicle stepped from Python (see ``help(lockstep.Sim)``)."""

    def __init__(
        self,
        scenario: Optional[PathLike] = None,
        *,
        seed: Optional[int] = None,
        duration: Optional[float] = None,
        spec: Optional[PathLike] = None,
        mission: Optional[PathLike] = None,
        set: Optional[Mapping[str, Any]] = None,
        params: Optional[Mapping[str, Any]] = None,
        autopilot: Optional[PathLike] = None,
        isolation: Optional[str] = None,
        step_timeout: Optional[float] = None,
        log: Optional[PathLike] = None,
        record: Optional[PathLike] = None,
    ) -> None: ...
    def step(self, n: int = 1) -> int: ...
    def run_until(self, time_us: int) -> None: ...
    def run(self) -> Dict[str, Any]: ...
    @property
    def time_us(self) -> int: ...
    @property
    def end_us(self) -> int: ...
    @property
    def rotors(self) -> int: ...
    @property
    def truth(self) -> Dict[str, Any]: ...
    @property
    def estimate(self) -> Dict[str, Any]: ...
    @property
    def actuators(self) -> Dict[str, Any]: ...
    def battery(self, index: int = 0) -> Dict[str, Any]: ...
    @property
    def params(self) -> Optional[Dict[str, Dict[str, Any]]]: ...
    @property
    def state(self) -> npt.NDArray[np.float64]: ...
    def command(self, name: str) -> None: ...
    def fault(self, action: str, **keys: Any) -> None: ...
    def setpoint(self, **keys: Any) -> None: ...
    def upload_mission(self, mission: PathLike) -> None: ...
    def snapshot(self) -> bytes: ...
    def restore(self, state: bytes) -> None: ...
    def reset(self, *, seed: Optional[int] = None) -> None: ...
    def finish(self) -> None: ...
    def report(self) -> Dict[str, Any]: ...
    def __enter__(self) -> "Sim": ...
    def __exit__(self, *args: Any) -> bool: ...

class Plant:
    """The aircraft alone, stepped with motor commands (see ``help(lockstep.Plant)``)."""

    def __init__(
        self, spec: Optional[PathLike] = None, *, integrator: str = "rk4", max_step_us: int = 1000
    ) -> None: ...
    @staticmethod
    def from_scenario(scenario: PathLike) -> "Plant": ...
    @property
    def rotors(self) -> int: ...
    def set_motors(self, commands: npt.NDArray[np.float64]) -> None: ...
    def set_wind(self, wind_ned_mps: npt.NDArray[np.float64]) -> None: ...
    def step(self, dt_us: int) -> None: ...
    @property
    def time_us(self) -> int: ...
    @property
    def truth(self) -> Dict[str, Any]: ...
    @property
    def state(self) -> npt.NDArray[np.float64]: ...
    def battery(self, index: int = 0) -> Dict[str, Any]: ...
    @property
    def stats(self) -> Dict[str, int]: ...

class _Env:
    def __init__(
        self,
        scenario: Optional[PathLike] = None,
        *,
        seed: Optional[int] = None,
        spec: Optional[PathLike] = None,
        set: Optional[Mapping[str, Any]] = None,
        params: Optional[Mapping[str, Any]] = None,
        autopilot: Optional[PathLike] = None,
        task: str = ...,
        action: str = ...,
        observation: str = ...,
        control_hz: float = 250.0,
        episode_s: float = 10.0,
        target: Optional[Sequence[float]] = None,
        waypoints: Optional[Sequence[Sequence[float]]] = None,
        radius_m: float = 1.0,
        bounds_m: float = 50.0,
        max_speed_mps: float = 5.0,
        max_rate_radps: float = 6.0,
        isolation: Optional[str] = None,
    ) -> None: ...
    def describe(self) -> Dict[str, Any]: ...
    def reset(self, seed: Optional[int] = None) -> Tuple[npt.NDArray[np.float32], Dict[str, Any]]: ...
    def step(
        self, action: npt.NDArray[np.float32]
    ) -> Tuple[npt.NDArray[np.float32], float, bool, bool, Dict[str, Any]]: ...

class _VectorEnv:
    def __init__(
        self,
        num_envs: int,
        scenario: Optional[PathLike] = None,
        *,
        threads: Optional[int] = None,
        seed: Optional[int] = None,
        spec: Optional[PathLike] = None,
        set: Optional[Mapping[str, Any]] = None,
        params: Optional[Mapping[str, Any]] = None,
        autopilot: Optional[PathLike] = None,
        task: str = ...,
        action: str = ...,
        observation: str = ...,
        control_hz: float = 250.0,
        episode_s: float = 10.0,
        target: Optional[Sequence[float]] = None,
        waypoints: Optional[Sequence[Sequence[float]]] = None,
        radius_m: float = 1.0,
        bounds_m: float = 50.0,
        max_speed_mps: float = 5.0,
        max_rate_radps: float = 6.0,
        isolation: Optional[str] = None,
    ) -> None: ...
    def describe(self) -> Dict[str, Any]: ...
    def reset(
        self, seed: Union[None, int, Sequence[int]] = None
    ) -> Tuple[npt.NDArray[np.float32], Dict[str, Any]]: ...
    def step(self, actions: npt.NDArray[np.float32]) -> Tuple[Any, Any, Any, Any, Dict[str, Any]]: ...
