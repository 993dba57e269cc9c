"""Whole runs: a flight flown to its end, a Monte Carlo batch, the
integrator study."""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


class Flight:
    """One flight flown to its end.

    Attributes:
        report: the report as a dict: the object ``lockstep fly --json``
            prints (scenario, autopilot, vehicle, seed, outcome, error and its
            class, exit status, simulated and wall time, final state, log,
            verdict with every check, timeline).
        log: the log's columns, ``{name: numpy array}``, named and ordered as
            the CSV log's header (``time_us``, ``x_m``, ..., ``faults``, ``mode_name``), with
            the values the CSV holds (no CSV round trip: the same bits). Empty
            when the scenario has no ``log`` cadence.
        log_digest: ``sha256:<hex>`` of the CSV log this flight writes (the
            command line's digest for the same run), or None without a log.
    """

    __slots__ = ("report", "log", "log_digest")

    def __init__(self, report: Dict[str, Any], log: Dict[str, np.ndarray], log_digest: Optional[str]):
        self.report = report
        self.log = log
        self.log_digest = log_digest

    @property
    def verdict(self) -> Optional[Dict[str, Any]]:
        """The verdict (``passed``, ``crashes``, ``checks``...), or None for a
        run an error stopped."""
        return self.report.get("verdict")

    @property
    def passed(self) -> bool:
        """The run completed and its verdict passed."""
        v = self.verdict
        return bool(v and v.get("passed"))

    def to_pandas(self):
        """The log as a pandas DataFrame (needs pandas): one row per log
        boundary, the columns of :attr:`log`, and the ``mode`` column as the
        flight-mode names (``"mission"``, ``"hold"``...)."""
        import pandas as pd

        df = pd.DataFrame(self.log, copy=False)
        if "mode" in df:
            names = _native.mode_names()
            df["mode"] = pd.Categorical(
                [names.get(int(m), str(int(m))) for m in self.log["mode"]],
                categories=list(dict.fromkeys(names.values())),
            )
        return df

    def __repr__(self) -> str:
        r = self.report
        return (
            f"Flight({r.get('scenario')!r}, {r.get('vehicle')}, seed={r.get('seed')}, "
            f"outcome={r.get('outcome')}, passed={self.passed}, rows={len(self.log.get('time_us', ()))})"
        )


def _flight(parts) -> Flight:
    report_json, columns, digest = parts
    return Flight(json.loads(report_json), columns, digest)


def fly(
    scenario: Optional[PathLike] = None,
    *,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,  # noqa: A002 - the command line's --set
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
    isolation: str = "process",
    step_timeout: Optional[float] = None,
    out: Optional[PathLike] = None,
) -> Flight:
    """Flies a scenario to its end, as ``lockstep fly`` does, and returns its
    :class:`Flight`.

    Args:
        scenario: the scenario file (default: the bundled one, the Iris
            flying the square mission in wind).
        seed: the master seed (``simulation.seed``).
        duration: the simulated duration, s (``simulation.duration_s``).
        spec: another aircraft: a built-in name (``specs()``) or a spec file.
        mission: another mission file (QGC ``.waypoints`` or ``.plan``).
        set: scenario keys to set, ``{"wind.mean_ned_mps": [3.0, 0.0, 0.0]}``,
            applied in order after the rest.
        params: autopilot parameters, ``{"MPC_XY_VEL_MAX": 5.0}``.
        autopilot: the autopilot library (default: the bundled reference one).
        isolation: ``"process"`` (the library in a child process: a crash or
            hang is an exception naming it) or ``"in-process"``.
        step_timeout: the wall-time limit of one autopilot step, s (process
            isolation; default 5).
        out: a directory for what the command line's ``--out`` writes
            (``log.csv``, the plots, ``summary.json``).

    Raises:
        ConfigurationError: an argument, the scenario, spec, mission or
            library refused (the message names the file, key and line).
        RunFailure: the autopilot crashed, hung or broke the contract, the
            integration failed, or an output could not be written; the
            exception's ``flight`` holds everything flown before it.
        KeyboardInterrupt: Ctrl-C, at the next boundary (``flight`` attached).

    A completed flight whose verdict failed is returned (``passed`` is False).
    """
    try:
        parts = _native._fly(
            scenario,
            seed=seed,
            duration=duration,
            spec=spec,
            mission=mission,
            set=set,
            params=params,
            autopilot=autopilot,
            isolation=isolation,
            step_timeout=step_timeout,
            out=out,
        )
    except BaseException as e:
        parts = getattr(e, "flight_parts", None)
        if parts is not None:
            e.flight = _flight(parts)
        raise
    return _flight(parts)


class MonteCarlo:
    """A Monte Carlo batch.

    Attributes:
        report: the batch's summary as a dict (``summary.json``: runs,
            completed, failed, passed, statistics...).
        runs: the runs' table, ``{column: numpy array}``, the columns of
            ``runs.csv`` in its order; a failed run's measurements are NaN
            (or False), ``failed_motor`` is -1 and ``motor_failure_s`` NaN
            when no motor failed.
    """

    __slots__ = ("report", "runs")

    def __init__(self, report: Dict[str, Any], runs: Dict[str, np.ndarray]):
        self.report = report
        self.runs = runs

    def to_pandas(self):
        """The runs as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.runs)

    def __repr__(self) -> str:
        r = self.report
        return f"MonteCarlo(runs={r.get('runs')}, completed={r.get('completed')}, passed={r.get('passed')})"


def montecarlo(
    scenario: Optional[PathLike] = None,
    *,
    runs: int = 100,
    jobs: Optional[int] = None,
    workers: str = "processes",
    run_timeout: float = 600.0,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,  # noqa: A002
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
) -> MonteCarlo:
    """Flies a batch of the scenario's ``[montecarlo]`` dispersions, as
    ``lockstep montecarlo`` does, ``jobs`` runs at a time (default: the
    cores). ``workers="processes"`` (the default) flies each run in a child
    process (this interpreter running lockstep): a crash or hang (beyond
    ``run_timeout`` s) of the library is that run's failed row;
    ``"threads"`` flies them in this process, faster, for a re-entrant
    library only (a crash ends the interpreter). Run *k* draws from the
    stream named for *k* under the master seed, so the table depends on
    neither ``jobs`` nor ``workers``. ``out`` keeps ``runs.csv``,
    ``summary.json`` and the histograms (default: a temporary directory,
    removed). ``runs`` is the batch's size. ``scenario``, ``seed``,
    ``duration``, ``spec``, ``mission``, ``set``, ``params`` and
    ``autopilot`` are as for :func:`fly`."""
    report_json, columns = _native._montecarlo(
        scenario,
        runs=runs,
        jobs=jobs,
        workers=workers,
        run_timeout=run_timeout,
        seed=seed,
        duration=duration,
        spec=spec,
        mission=mission,
        set=set,
        params=params,
        autopilot=autopilot,
        out=out,
    )
    return MonteCarlo(json.loads(report_json), columns)


def montecarlo_run(
    scenario: Optional[PathLike],
    run: int,
    *,
    seed: Optional[int] = None,
    duration: Optional[float] = None,
    spec: Optional[PathLike] = None,
    mission: Optional[PathLike] = None,
    set: Optional[Mapping[str, Any]] = None,  # noqa: A002
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Flies run ``run`` of the scenario's Monte Carlo batch in this process
    (the autopilot in-process) and returns its row: ``{column: value}``
    with the columns of ``runs.csv`` (numpy scalars of the batch table's
    types). Run *k*'s draws depend on the master
    seed and *k* only, so the rows of runs flown anywhere (a Dask or Ray
    task each) merge into the table ``montecarlo`` gives. ``scenario``,
    ``seed``, ``duration``, ``spec``, ``mission``, ``set``, ``params`` and
    ``autopilot`` are as for :func:`fly`."""
    columns = _native._montecarlo_run(
        scenario,
        run,
        seed=seed,
        duration=duration,
        spec=spec,
        mission=mission,
        set=set,
        params=params,
        autopilot=autopilot,
    )
    # numpy scalars: a table of rows has the batch's column types.
    return {k: v[0] for k, v in columns.items()}


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def compare_integrators(
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
    set: Optional[Mapping[str, Any]] = None,  # noqa: A002
    params: Optional[Mapping[str, Any]] = None,
    autopilot: Optional[PathLike] = None,
    isolation: str = "process",
    out: Optional[PathLike] = None,
) -> Dict[str, list]:
    """Flies the scenario recorded, replays the plant's inputs with each
    integrator (``methods``: "euler", "rk4", "bs32", "dp54"; default all) at
    each step (``steps_us``) or tolerance, and measures cost and error
    against a tight reference, as ``lockstep compare-integrators`` does.
    Returns ``integrators.csv`` as ``{column: list}`` (numbers as numbers).
    ``horizon_s``: restart each replay from the reference this often
    (default 1 s; ``float("inf")``: never). ``tolerances``: the adaptive
    methods' (default a range); ``repeats``: the replays timed per point
    (the median wall time is kept); ``out``: a directory for ``integrators.csv`` and
    the work-precision plot. ``scenario``, ``seed``, ``duration``,
    ``spec``, ``mission``, ``set``, ``params``, ``autopilot`` and
    ``isolation`` are as for :func:`fly`."""
    text = _native._compare_integrators(
        scenario,
        methods=list(methods) if methods is not None else None,
        steps_us=list(steps_us) if steps_us is not None else None,
        tolerances=list(tolerances) if tolerances is not None else None,
        repeats=repeats,
        horizon_s=horizon_s,
        seed=seed,
        duration=duration,
        spec=spec,
        mission=mission,
        set=set,
        params=params,
        autopilot=autopilot,
        isolation=isolation,
        out=out,
    )
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    return {name: [_number(r[i]) for r in body] for i, name in enumerate(header)}
