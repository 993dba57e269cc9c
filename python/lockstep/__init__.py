"""lockstep from Python: a C autopilot flown in deterministic lockstep with
a simulated multirotor.

- ``fly(...)`` flies a scenario to its end and returns a :class:`Flight`
  (its report, verdict, log as numpy columns, the log's digest).
- ``montecarlo(...)``, ``compare_integrators(...)``, ``specs()``.
- :class:`Sim` steps a whole vehicle (the C autopilot in the loop);
  :class:`Plant` steps the aircraft alone with motor commands.
- ``lockstep.envs`` registers the Gymnasium environments (``lockstep/Hover-v0``,
  ``lockstep/Waypoints-v0``) when gymnasium is installed.

Errors are exceptions of the run layer's classes (:class:`ConfigurationError`,
:class:`RunFailure`, :class:`ExpectationFailed`, :class:`Interrupted`, all
:class:`Error`), carrying its exact message. Same inputs and seed give the
same bits as the ``lockstep`` command line.
"""

from ._native import (  # noqa: F401
    ConfigurationError,
    EndedError,
    Error,
    ExpectationFailed,
    Interrupted,
    Plant,
    RunFailure,
    Sim,
    __version__,
    mode_names,
    spec_toml,
    specs,
)
from .runs import Flight, MonteCarlo, compare_integrators, fly, montecarlo, montecarlo_run  # noqa: F401

__all__ = [
    "ConfigurationError",
    "EndedError",
    "Error",
    "ExpectationFailed",
    "Flight",
    "Interrupted",
    "MonteCarlo",
    "Plant",
    "RunFailure",
    "Sim",
    "compare_integrators",
    "fly",
    "mode_names",
    "montecarlo",
    "montecarlo_run",
    "spec_toml",
    "specs",
]

try:  # The environments register themselves when gymnasium is installed.
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:  # pragma: no cover - gymnasium is optional
    pass
else:
    from . import envs  # noqa: F401
