"""Whole runs from Python against the command line: the same report, the
same log bits, the same digest; montecarlo, the integrator study, specs."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import lockstep


def test_fly_gives_the_command_lines_digest_report_and_log_bits(tmp_path, lockstep_cli, square):
    log = tmp_path / "log.csv"
    r = lockstep_cli("fly", square, "--log", str(log), "--json", "--seed", "11", "--duration", "40")
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    # The same autopilot library (the bundled one of the CLI's build).
    f = lockstep.fly(square, seed=11, duration=40, autopilot=cli["autopilot"])
    assert f.log_digest == cli["digest"]
    assert f.log_digest.startswith("sha256:") and len(f.log_digest) == 71
    # The report is the same object but for what differs by nature: wall
    # time, the log file (Python kept the rows), how the overrides were given.
    for k in ("wall_time_s", "real_time_factor", "log", "digest"):
        cli.pop(k), f.report.pop(k)
    assert [o["given_as"] for o in f.report.pop("overrides")] == ["seed=11", "duration=40"]
    assert [o["given_as"] for o in cli.pop("overrides")] == ["--seed 11", "--duration 40"]
    assert f.report == cli
    # The columns are the CSV's, in its order, with the same bits.
    with open(log) as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    assert list(f.log) == header
    for j, name in enumerate(header):
        col = f.log[name]
        assert len(col) == len(body)
        text = [row[j] for row in body]
        if col.dtype == np.float32:
            expected = np.array([np.float32(float(t)) for t in text], dtype=np.float32)
            assert col.view(np.uint32).tolist() == expected.view(np.uint32).tolist(), name
        elif col.dtype == np.float64:
            expected = np.array([float(t) for t in text], dtype=np.float64)
            assert col.view(np.uint64).tolist() == expected.view(np.uint64).tolist(), name
        elif name == "mode_name":
            # The names, the same as the CSV's text and as mode_names() of the codes.
            assert col.tolist() == text, name
            names = lockstep.mode_names()
            assert text == [names[int(m)] for m in f.log["mode"]]
        else:
            assert col.tolist() == [int(t) for t in text], name


def test_the_same_seed_flies_the_same_bits_and_another_does_not(idle):
    a = lockstep.fly(idle, seed=3, isolation="in-process")
    b = lockstep.fly(idle, seed=3)
    c = lockstep.fly(idle, seed=4)
    assert a.log_digest == b.log_digest != c.log_digest
    assert a.report["isolated"] is False and b.report["isolated"] is True


def test_to_pandas_names_the_modes(square):
    pd = pytest.importorskip("pandas")
    f = lockstep.fly(square, duration=20)
    df = f.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(f.log)
    assert len(df) == len(f.log["time_us"]) == 201
    # Armed at 1 s, the mission started at 2 s.
    assert df["mode"].iloc[0] == "disarmed"
    assert "mission" in set(df["mode"].astype(str))
    assert df["x_m"].to_numpy().view(np.uint64).tolist() == f.log["x_m"].view(np.uint64).tolist()
    # The square scenario expects nothing: no crash, so its verdict passes.
    assert f.report["outcome"] == "completed" and f.passed
    assert f.verdict["checks"] == [] and f.verdict["crashes"] == []


def test_a_crashing_isolated_autopilot_is_an_exception_and_the_flight_is_kept(idle, broken):
    # sometimes_segv crashes in step at 5 s under even seeds.
    with pytest.raises(lockstep.RunFailure) as e:
        lockstep.fly(idle, seed=0, autopilot=broken("sometimes_segv"))
    assert str(e.value) == (
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s"
    )
    assert e.value.error_class == "run_failure" and e.value.exit_status == 1
    flight = e.value.flight
    assert flight.report["outcome"] == "stopped"
    assert len(flight.log["time_us"]) == 50 and flight.log["time_us"][-1] == 4_900_000
    # The interpreter lives on: the next flight flies.
    assert lockstep.fly(idle, seed=1, autopilot=broken("sometimes_segv")).passed


@pytest.mark.parametrize(
    "kwargs, kind, message",
    [
        (
            {"set": {"wind.modle": "constant"}},
            lockstep.ConfigurationError,
            "{square} (with set['wind.modle']='constant'): unknown key `wind.modle` "
            "(valid in [wind]: mean_ned_mps, model, sigma_mps, tau_s, w20_mps)",
        ),
        ({"seed": "x"}, TypeError, "seed must be an int, not str"),
        ({"seed": -1}, lockstep.ConfigurationError, "seed=-1: not an integer in [0, 9223372036854775807]"),
        ({"duration": "long"}, TypeError, "duration must be a number of seconds (int or float), not str"),
        ({"set": [("a", 1)]}, TypeError, "set must be a dict, not list"),
        ({"params": {"A.B": 1}}, lockstep.ConfigurationError, "params['A.B']=1: `A.B` is not a parameter name"),
        ({"set": {"wind.mean_ned_mps": object()}}, TypeError, None),
        ({"isolation": "thread"}, lockstep.ConfigurationError, None),
        ({"scenario": 5}, TypeError, "scenario must be a path (str or os.PathLike), not int"),
    ],
)
def test_bad_arguments_are_exceptions_with_the_exact_message(kwargs, kind, message, square):
    args = dict(kwargs)
    scenario = args.pop("scenario", square)
    with pytest.raises(kind) as e:
        lockstep.fly(scenario, **args)
    if message is not None:
        assert str(e.value) == message.format(square=square)


def test_a_missing_scenario_and_an_unknown_aircraft_are_named(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.fly(missing)
    assert str(e.value) == f"cannot read scenario {missing}: No such file or directory (os error 2)"
    assert e.value.error_class == "configuration" and e.value.exit_status == 2
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.fly(spec="hexx")
    assert str(e.value).startswith("spec=hexx: not a built-in aircraft (iris, hexa, octa; ")
    assert str(e.value).endswith("; did you mean `hexa`?")


def test_an_out_directory_that_cannot_be_made_is_named_as_python_spells_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.fly(out=blocker / "dir")
    assert str(e.value).startswith(f"out {blocker / 'dir'}: cannot create the directory: ")


def test_specs_lists_the_built_in_aircraft():
    s = lockstep.specs()
    assert list(s) == ["iris", "hexa", "octa"]
    assert all(isinstance(d, str) and d for d in s.values())
    from conftest import REPO

    assert lockstep.spec_toml("iris") == (REPO / "plant" / "specs" / "iris.toml").read_text()
    resolved = lockstep.spec_toml("iris", resolved=True)
    assert resolved != lockstep.spec_toml("iris") and "mass_kg" in resolved
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.spec_toml("quad")
    assert str(e.value) == "`quad` is not a built-in aircraft (multirotor-base, iris, hexa, octa)"


def test_montecarlo_rows_equal_the_command_lines(tmp_path, lockstep_cli):
    from conftest import REPO

    scenario = str(REPO / "examples" / "scenarios" / "montecarlo.toml")
    out = tmp_path / "cli"
    r = lockstep_cli("montecarlo", scenario, "--runs", "4", "--workers", "threads", "--out", str(out), "-q")
    assert r.returncode == 0, r.stderr
    mc = lockstep.montecarlo(scenario, runs=4, jobs=2)  # processes: this interpreter as the worker
    with open(out / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert list(mc.runs) == list(rows[0])
    assert mc.runs["digest"].tolist() == [row["digest"] for row in rows]
    assert mc.runs["seed"].tolist() == [int(row["seed"]) for row in rows]
    assert mc.runs["landing_error_m"].tolist() == [float(row["landing_error_m"]) for row in rows]
    assert mc.report["runs"] == 4 and mc.report["completed"] == 4
    summary = json.loads((out / "summary.json").read_text())
    assert mc.report["stats"] == summary["stats"]
    # The table depends on neither the jobs nor the workers.
    threads = lockstep.montecarlo(scenario, runs=4, jobs=1, workers="threads")
    assert threads.runs["digest"].tolist() == mc.runs["digest"].tolist()
    assert mc.report["workers"] == "processes" and threads.report["workers"] == "threads"
    # Runs flown one by one (as Dask or Ray tasks fly them), in any order,
    # merge into the same table.
    rows = [lockstep.montecarlo_run(scenario, k) for k in (3, 1, 0, 2)]
    rows.sort(key=lambda r: r["run"])
    for c, col in mc.runs.items():
        merged = np.array([r[c] for r in rows], dtype=col.dtype)
        if col.dtype != object:
            assert all(np.asarray(r[c]).dtype == col.dtype for r in rows), c
        if col.dtype == np.float64:  # NaN where a run measured nothing
            assert merged.view(np.uint64).tolist() == col.view(np.uint64).tolist(), c
        else:
            assert merged.tolist() == col.tolist(), c
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.montecarlo(scenario, runs=0)
    assert str(e.value) == "runs=0: an integer of at least 1"


def test_compare_integrators_measures_each_method(square):
    t = lockstep.compare_integrators(square, methods=["euler", "rk4"], duration=3, horizon_s=1.0)
    # Four steps each (the interval and 1/2, 1/4, 1/8), and the independent
    # reference (ode_solvers' Dopri5) the study checks itself against.
    assert t["method"].count("euler") == t["method"].count("rk4") == 4
    assert set(t["method"]) == {"euler", "rk4", "ode_solvers_dopri5"}
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.compare_integrators(square, methods=["rk5"])
    assert str(e.value) == "methods: no integrator named `rk5` (euler, rk4, bs32, dp54)"


def test_a_batch_with_a_crashing_autopilot_reports_the_failed_runs(idle, broken):
    idle.write_text(idle.read_text() + "\n[montecarlo]\nsensor_noise_scale = [0.5, 1.5]\n")
    mc = lockstep.montecarlo(idle, runs=6, jobs=2, autopilot=broken("sometimes_segv"))
    status = mc.runs["status"].tolist()
    assert "failed" in status and "completed" in status, status
    reasons = [r for r, s in zip(mc.runs["reason"], status) if s == "failed"]
    assert all("SIGSEGV" in r for r in reasons), reasons
    assert mc.report["failed"] == status.count("failed")
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.montecarlo(idle, runs=2, workers="fibers")
    assert str(e.value).startswith("workers='fibers': \"processes\" (each run in a child process")
