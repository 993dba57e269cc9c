"""Stepping from Python: a whole vehicle (Sim) and the plant alone (Plant)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import lockstep


def bits(a: np.ndarray) -> list:
    return np.ascontiguousarray(a).view(np.uint64).tolist()


def test_a_sim_stepped_to_its_end_writes_the_flights_log(tmp_path, square):
    f = lockstep.fly(square, duration=30)
    s = lockstep.Sim(square, duration=30, log=tmp_path / "log.csv")
    assert s.time_us == 0 and s.end_us == 30_000_000 and s.rotors == 4
    done = 0
    while s.time_us < s.end_us:
        done += s.step(997)
    assert done == 30_001  # the boundaries at 0, 1 ms, ..., 30 s
    with pytest.raises(lockstep.EndedError) as e:
        s.step()
    assert str(e.value) == "the run ended at t = 30.000000 s; nothing is left to step"
    with pytest.raises(RuntimeError) as e:
        s.report()
    assert str(e.value) == (
        "the run is at t = 30.000000 s and has not ended: step it to its end (t = 30.000000 s) "
        "or end it with finish() first"
    )
    s.finish()
    r = s.report()
    assert r["digest"] == f.log_digest
    assert r["verdict"] == f.report["verdict"]


def test_a_log_without_a_log_cadence_is_refused_as_fly_refuses_it(idle, tmp_path):
    """A Sim is prepared by the run layer as every front end's flight is,
    its messages in Python's spelling."""
    bare = tmp_path / "bare.toml"
    bare.write_text(idle.read_text().replace("log = { rate_hz = 10 }\n", ""))
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.Sim(bare, log=tmp_path / "log.csv")
    assert str(e.value) == (
        f"log given but {bare} has no `log` cadence under [cadences] "
        '(add one, or set={"cadences.log.rate_hz": 10})'
    )
    assert not (tmp_path / "log.csv").exists()


def test_snapshot_step_restore_step_gives_the_same_bits(square):
    s = lockstep.Sim(square, duration=40)
    s.run_until(12_000_000)
    snap = s.snapshot()
    assert isinstance(snap, bytes) and len(snap) > 1000
    s.step(3000)
    a, ta = s.state, s.truth
    s.restore(snap)
    assert s.time_us == 12_000_000
    s.step(3000)
    assert bits(s.state) == bits(a)
    assert bits(s.truth["position_ned_m"]) == bits(ta["position_ned_m"])
    with pytest.raises(lockstep.Error) as e:
        s.restore(b"not a state")
    assert "not a lockstep vehicle state" in str(e.value)
    assert e.value.context == [
        "the Sim has ended (the state may have been loaded in part); reset() starts a new episode"
    ]
    with pytest.raises(lockstep.EndedError):
        s.step()
    s.reset()
    s.step(10)


def test_two_resets_with_one_seed_are_the_same_episode(square):
    s = lockstep.Sim(square, duration=20)

    def episode(seed):
        s.reset(seed=seed)
        assert s.time_us == 0
        s.run_until(15_000_000)
        return bits(s.state)

    a, b, c = episode(5), episode(5), episode(6)
    assert a == b != c
    # The default seed is the scenario's: a Sim built with seed=5 flies the
    # same episode.
    t = lockstep.Sim(square, duration=20, seed=5)
    t.run_until(15_000_000)
    assert bits(t.state) == a


def test_state_reads_commands_faults_and_setpoints(idle):
    s = lockstep.Sim(idle, set={"simulation.duration_s": 30.0})
    s.run_until(1_000_000)
    assert s.actuators["mode_name"] == "disarmed"
    s.command("arm")
    s.step(10)
    assert s.actuators["armed"] and s.actuators["mode_name"] == "idle"
    s.setpoint(position_ned_m=[2.0, 1.0, -5.0], yaw_deg=30)
    s.run_until(12_000_000)
    a, t = s.actuators, s.truth
    assert a["mode_name"] == "offboard"
    assert np.linalg.norm(t["position_ned_m"] - [2.0, 1.0, -5.0]) < 0.5
    assert set(t) == {
        "time_us",
        "position_ned_m",
        "velocity_ned_mps",
        "attitude_q",
        "rates_frd_radps",
        "specific_force_frd_mps2",
        "on_ground",
    }
    assert abs(np.linalg.norm(t["attitude_q"]) - 1.0) < 1e-12
    e = s.estimate
    assert np.linalg.norm(e["position_ned_m"] - t["position_ned_m"]) < 2.0
    b = s.battery()
    assert 0.9 < b["soc"] < 1.0 and b["connected"] and b["warning"] == "ok"
    s.setpoint(velocity_ned_mps=[1.0, 0.0, 0.0])
    s.run_until(17_000_000)
    assert abs(s.truth["velocity_ned_mps"][0] - 1.0) < 0.3
    s.fault("motor_fail", motor=1)
    s.step(5)
    assert s.actuators["motors"].shape == (4,)
    with pytest.raises(lockstep.ConfigurationError) as ex:
        s.fault("motor_fail", motr=1)
    assert str(ex.value).startswith("fault: unknown key `motr` (valid at the top level: action, ")
    with pytest.raises(IndexError) as ex:
        s.fault("motor_fail", motor=7)
    assert str(ex.value) == "motor 7, but the vehicle has 4 (0 to 3)"
    with pytest.raises(lockstep.ConfigurationError) as ex:
        s.setpoint(rates_frd_radps=[0, 0, 0.5])
    assert str(ex.value) == "setpoint.thrust is required with rates_frd_radps"
    with pytest.raises(ValueError) as ex:
        s.command("fly")
    assert str(ex.value) == 'command "fly": one of "arm", "disarm", "mission_start", "takeoff", "rtl", "land", "hold"'
    with pytest.raises(ValueError) as ex:
        s.run_until(1)
    assert str(ex.value) == "run until t = 0.000001 s, but the simulation is at t = 17.005000 s"
    with pytest.raises(IndexError):
        s.battery(3)
    r = s.run()
    kinds = [(e["kind"], e["what"]) for e in r["timeline"]]
    assert ("mode", "idle -> offboard") in kinds
    assert ("event", "setpoint position [2, 1, -5] m yaw 30 deg") in kinds
    with pytest.raises(lockstep.EndedError):
        s.command("hold")


def test_a_crashing_autopilot_in_a_sim_is_an_exception(idle, broken):
    s = lockstep.Sim(idle, seed=0, autopilot=broken("sometimes_segv"))
    with pytest.raises(lockstep.RunFailure) as e:
        s.run_until(8_000_000)
    assert "SIGSEGV" in str(e.value)
    assert s.time_us == 5_000_000
    with pytest.raises(lockstep.EndedError) as e:
        s.step()
    assert str(e.value) == "the run was finished at t = 5.000000 s"
    assert s.report()["outcome"] == "stopped"


def test_the_gil_is_released_while_a_sim_steps(square):
    s = lockstep.Sim(square, isolation="in-process")
    inside = threading.Event()
    counted = []

    def count():
        inside.wait()
        n = 0
        while inside.is_set():
            n += 1
        counted.append(n)

    t = threading.Thread(target=count)
    t.start()
    inside.set()
    s.run_until(s.end_us)
    inside.clear()
    t.join()
    # Holding the GIL through the whole flight would leave the counter no
    # turn until it returned.
    assert counted[0] > 1000


def test_plant_alone_counts_its_work_and_refuses_bad_commands():
    p = lockstep.Plant("iris", integrator="rk4", max_step_us=1000)
    assert p.rotors == 4 and p.time_us == 0
    p.set_motors(np.zeros(4))
    p.step(1_000_000)
    # RK4: four evaluations per step, 1000 steps of 1 ms.
    assert p.stats == {"rhs_evals": 4000, "accepted": 1000, "rejected": 0}
    # At rest on the ground with the motors off it stays at rest.
    assert np.abs(p.truth["velocity_ned_mps"]).max() < 1e-9
    q = lockstep.Plant("iris", integrator="rk4")
    for x in (p, q):
        x.set_motors(np.full(4, 0.7))
        x.set_wind(np.array([3.0, 0.0, 0.0]))
    p.step(500_000)
    q.step(1_000_000)
    q2 = lockstep.Plant("iris")
    q2.set_motors(np.full(4, 0.7))
    q2.set_wind(np.array([3.0, 0.0, 0.0]))
    q2.step(1_000_000)
    assert bits(q.state) == bits(q2.state)
    assert q.truth["position_ned_m"][2] < -0.5  # it climbs
    with pytest.raises(ValueError) as e:
        p.set_motors(np.array([0.1, 0.2, float("nan"), 0.1]))
    assert str(e.value) == "commands[2] is NaN: not a finite number"
    with pytest.raises(ValueError) as e:
        p.set_motors(np.array([0.1, 1.2, 0.1, 0.1]))
    assert str(e.value) == "commands[1] is 1.2, outside 0..1"
    with pytest.raises(ValueError) as e:
        p.set_motors(np.zeros(6))
    assert str(e.value) == "commands: 6 values, expected 4"
    # Seconds taken for microseconds: refused at once, the plant unmoved.
    now = p.time_us
    with pytest.raises(ValueError) as e:
        p.step(1 << 40)
    assert str(e.value) == f"dt_us = {1 << 40}: one step covers at most 10000000 us (10 s); step in parts"
    assert p.time_us == now
    p.step(10_000_000)
    assert p.time_us == now + 10_000_000
    with pytest.raises(lockstep.ConfigurationError) as e:
        lockstep.Plant("iris", integrator="rk5")
    assert str(e.value) == 'integrator="rk5": no integrator by that name (euler, rk4, bs32, dp54)'


def test_rss_stays_flat_over_a_million_steps(square):
    resource = pytest.importorskip("resource")

    def rss_kib() -> int:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    s = lockstep.Sim(square, duration=1000, isolation="in-process")
    for _ in range(100_000):
        s.step(1)
        s.truth
    before = rss_kib()
    for _ in range(900_000):
        s.step(1)
    s.truth, s.estimate, s.actuators, s.battery()
    after = rss_kib()
    assert after - before < 4096, (before, after)


def test_two_threads_on_one_sim_take_turns_without_deadlock(square):
    s = lockstep.Sim(square, isolation="in-process", duration=60)
    errors = []

    def fly():
        try:
            for _ in range(200):
                s.step(50)
                s.truth
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=fly) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "deadlocked"
    assert errors == [] and s.time_us == (2 * 200 * 50 - 1) * 1000


def test_ctrl_c_stops_a_long_step_at_a_boundary_and_the_sim_goes_on(square):
    import os
    import signal

    # Python's own Ctrl-C handler, whatever this process inherited (a
    # shell's background job starts with SIGINT ignored).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        interrupted_twice(square, os, signal)
    finally:
        signal.signal(signal.SIGINT, previous)


def interrupted_twice(square, os, signal):
    s = lockstep.Sim(square, isolation="in-process", duration=3600)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        s.run_until(s.end_us)
    timer.join()
    t = s.time_us
    assert 0 < t < s.end_us and t % 1000 == 0
    assert s.step(5) == 5 and s.time_us == t + 5000
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        s.step(10**9)
    timer.join()
    assert s.time_us < s.end_us


def test_params_lists_the_autopilots_table_with_values_and_defaults(idle, abi3_autopilot):
    sim = lockstep.Sim(idle, params={"MPC_XY_VEL_P": 1.25, "MIS_YAW_TO_WP": 1})
    table = sim.params
    assert len(table) == 44
    assert table["MPC_XY_VEL_P"]["type"] == "f32"
    assert table["MPC_XY_VEL_P"]["value"] == 1.25
    assert table["MPC_XY_VEL_P"]["default"] == pytest.approx(1.8, abs=1e-6)
    assert table["MIS_YAW_TO_WP"] == {"type": "i32", "value": 1, "default": 0}
    assert table["MPC_XY_CRUISE"]["default"] == 5.0
    # An ABI-3 library lists none.
    old = lockstep.Sim(idle, autopilot=abi3_autopilot)
    assert old.params is None
