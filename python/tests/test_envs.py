"""The Gymnasium environments: Gymnasium's checks, determinism, the vector
environment against Gymnasium's own SyncVectorEnv, bad actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import lockstep
from lockstep.envs import LockstepEnv, LockstepVectorEnv

IDS = ["lockstep/Hover-v0", "lockstep/Waypoints-v0"]
ACTIONS = ["velocity", "position", "rates", "motors"]


def bits(a) -> list:
    a = np.ascontiguousarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64).tolist()


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("observation", ["estimate", "truth"])
def test_check_env_passes(env_id, action, observation):
    env = gym.make(env_id, action=action, observation=observation, episode_s=2.0)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert obs.shape == ((13,) if "Hover" in env_id else (17,))
    env.close()


def test_two_resets_with_one_seed_are_the_same_episode_and_the_next_differs():
    env = LockstepEnv("hover", episode_s=1.0, isolation="in-process")
    rng = np.random.default_rng(0)
    actions = rng.uniform(-5, 5, size=(250, 3)).astype(np.float32)

    def episode(seed):
        o, _ = env.reset(seed=seed)
        trace = [bits(o)]
        for a in actions:
            o, r, term, trunc, info = env.step(a)
            trace.append((bits(o), r, term, trunc))
            if term or trunc:
                break
        return trace

    a, b = episode(9), episode(9)
    assert a == b
    assert a[-1][3] is True  # truncated at episode_s
    o, info = env.reset()  # the next episode of seed 9's sequence
    assert info["seed"] != 9
    assert episode(10) != a


def test_estimate_observations_are_noisy_and_truth_ones_are_not():
    est = LockstepEnv("hover", observation="estimate", isolation="in-process")
    tru = LockstepEnv("hover", observation="truth", isolation="in-process")
    oe, _ = est.reset(seed=2)
    ot, _ = tru.reset(seed=2)
    a = np.zeros(3, dtype=np.float32)
    for _ in range(50):
        oe, *_ = est.step(a)
        ot, *_ = tru.step(a)
    assert bits(oe) != bits(ot)
    assert np.abs(oe[:3] - ot[:3]).max() < 1.0


def test_agents_fly_the_tasks():
    # A proportional agent on velocity setpoints reaches the hover point.
    env = LockstepEnv("hover", target=[3.0, -2.0, -8.0], episode_s=15.0, isolation="in-process")
    o, _ = env.reset(seed=4)
    for _ in range(int(15e6 / env.control_us)):
        o, r, term, trunc, info = env.step(np.clip(-0.8 * o[:3], -5, 5).astype(np.float32))
        if term or trunc:
            break
    assert info["distance_m"] < 0.5 and not term
    # The same agent flies a route through its waypoints.
    env = LockstepEnv(
        "waypoints",
        waypoints=[[0, 0, -5], [8, 0, -5], [8, 8, -5]],
        radius_m=1.0,
        episode_s=40.0,
        isolation="in-process",
    )
    o, _ = env.reset(seed=4)
    total = 0.0
    while True:
        o, r, term, trunc, info = env.step(np.clip(-1.0 * o[:3], -5, 5).astype(np.float32))
        total += r
        if term or trunc:
            break
    assert term and info["waypoint"] == 3 and total > 30


def test_the_scenarios_dispersions_and_faults_reach_each_episode():
    # Every episode loses a motor at a time drawn for it (the scenario's
    # [montecarlo] dispersions, drawn per episode seed): the quad falls.
    lose = {"montecarlo": {"motor_failure_probability": 1.0, "motor_failure_window_s": [4.0, 5.0]}}
    env = LockstepEnv("hover", set=lose, episode_s=14.0, observation="truth", isolation="in-process")

    def episode(seed):
        o, info = env.reset(seed=seed)
        total, steps = 0.0, 0
        while True:
            o, r, term, trunc, info = env.step(np.clip(-0.8 * o[:3], -5, 5).astype(np.float32))
            total, steps = total + r, steps + 1
            if term or trunc:
                return term, steps, total

    a, b, c = episode(1), episode(1), episode(2)
    assert a == b and a != c
    assert a[0] and c[0]  # terminated: crashed
    assert a[2] < -10.0  # the crash penalty
    # Without the dispersions the same agent holds the point to the end.
    calm = LockstepEnv("hover", episode_s=14.0, observation="truth", isolation="in-process")
    o, _ = calm.reset(seed=1)
    while True:
        o, r, term, trunc, info = calm.step(np.clip(-0.8 * o[:3], -5, 5).astype(np.float32))
        if term or trunc:
            break
    assert trunc and not term


def test_motors_at_zero_leave_it_on_the_ground_and_full_lifts_it():
    env = LockstepEnv("hover", action="motors", observation="truth", isolation="in-process")
    o, _ = env.reset(seed=0)
    for _ in range(100):
        o, *_ = env.step(np.zeros(4, dtype=np.float32))
    assert abs(o[2] - 10.0) < 0.2  # 10 m below the target: on the ground
    for _ in range(250):
        o, *_ = env.step(np.full(4, 0.8, dtype=np.float32))
    assert o[2] < 9.0 and o[5] < -1.0  # a second later: climbing


@pytest.mark.parametrize(
    "action, message",
    [
        (np.array([0.0, float("nan"), 0.0], dtype=np.float32), "action[1] is NaN: not a finite number"),
        (np.array([0.0, 0.0, 7.0], dtype=np.float32), "action[2] is 7, outside the action space's -5..5"),
        (np.zeros(4, dtype=np.float32), "the action has shape (4,); the action space's is (3,)"),
    ],
)
def test_bad_actions_are_value_errors(action, message):
    env = LockstepEnv("hover", isolation="in-process")
    env.reset(seed=0)
    with pytest.raises(ValueError) as e:
        env.step(action)
    assert str(e.value) == message
    env.step(np.zeros(3, dtype=np.float32))  # and it steps on


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"action": "thrust"}, 'action="thrust": "position" or "velocity"'),
        ({"observation": "state"}, 'observation="state": "estimate"'),
        ({"control_hz": 300.0}, "control_hz=300: its period, 3333.3333333333335 us, is not a whole number of microseconds"),
        ({"target": [1.0, 2.0]}, "target: 3 finite numbers (NED, m), got [1.0, 2.0]"),
        ({"episode_s": -1.0}, "episode_s=-1: a positive number of seconds (at most a day)"),
    ],
)
def test_bad_options_are_refused_with_the_reason(kwargs, message):
    with pytest.raises((ValueError, lockstep.Error)) as e:
        gym.make("lockstep/Hover-v0", **kwargs)
    assert str(e.value).startswith(message), str(e.value)


def test_a_crashing_autopilot_in_an_env_is_an_exception(broken):
    # sometimes_segv crashes at 5 s in about half of the episodes (by the
    # sign of its gyro noise); the motors need no arming.
    env = LockstepEnv("hover", action="motors", autopilot=broken("sometimes_segv"), episode_s=8.0)
    fates = []
    for seed in range(6):
        env.reset(seed=seed)
        try:
            for _ in range(2000):
                env.step(np.zeros(4, dtype=np.float32))
            fates.append("flown")
        except lockstep.RunFailure as e:
            assert str(e) == (
                "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s"
            )
            fates.append("crashed")
    # Each crash was an exception, and the next episode flew on.
    assert "crashed" in fates and "flown" in fates, fates


def test_make_vec_returns_the_native_vector_env():
    venv = gym.make_vec("lockstep/Hover-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(venv, LockstepVectorEnv)
    assert venv.num_envs == 3
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert venv.observation_space.shape == (3, 13)
    assert venv.action_space.shape == (3, 3)
    obs, info = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    assert set(info) >= {"time_us", "_time_us", "seed", "_seed"}
    assert info["seed"].tolist() == [0, 1, 2]
    obs, rew, term, trunc, info = venv.step(venv.action_space.sample())
    assert obs.dtype == np.float32 and rew.shape == (3,) and term.dtype == bool
    venv.close()


@pytest.mark.parametrize("task, action", [("hover", "velocity"), ("waypoints", "rates"), ("hover", "motors")])
def test_vector_lanes_equal_gymnasiums_sync_vector_env_bit_for_bit(task, action):
    n, steps = 3, 400
    options = dict(action=action, episode_s=0.5, isolation="in-process", waypoints=[[1, 0, -1], [2, 0, -1]])
    if task == "hover":
        options.pop("waypoints")
    native = LockstepVectorEnv(n, task, threads=2, **options)
    sync = gym.vector.SyncVectorEnv(
        [lambda: LockstepEnv(task, **options) for _ in range(n)],
        autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP,
    )
    rng = np.random.default_rng(1)
    a_obs, _ = native.reset(seed=100)
    b_obs, _ = sync.reset(seed=100)
    assert bits(a_obs) == bits(b_obs)
    resets = 0
    for _ in range(steps):
        act = rng.uniform(native.action_space.low, native.action_space.high).astype(np.float32)
        a = native.step(act)
        b = sync.step(act)
        assert bits(a[0]) == bits(b[0])
        assert a[1].tolist() == b[1].tolist()
        assert a[2].tolist() == b[2].tolist() and a[3].tolist() == b[3].tolist()
        resets += int(a[4]["reset"].sum())
    assert resets >= n * 2  # episodes ended and restarted along the way


def test_threads_do_not_change_the_vector():
    def run(threads):
        v = LockstepVectorEnv(4, "hover", threads=threads, isolation="in-process", episode_s=0.3)
        v.reset(seed=7)
        rng = np.random.default_rng(3)
        out = []
        for _ in range(200):
            o, r, *_ = v.step(rng.uniform(-5, 5, size=(4, 3)).astype(np.float32))
            out.append((bits(o), r.tolist()))
        return out

    assert run(1) == run(4)


def test_vector_bad_actions_name_the_environment():
    v = LockstepVectorEnv(2, "hover", isolation="in-process")
    v.reset(seed=0)
    a = np.zeros((2, 3), dtype=np.float32)
    a[1, 0] = np.inf
    with pytest.raises(ValueError) as e:
        v.step(a)
    assert str(e.value) == "environment 1: action[0] is inf: not a finite number"
    with pytest.raises(ValueError) as e:
        v.step(np.zeros((3, 3), dtype=np.float32))
    assert str(e.value) == "actions have shape [3, 3]; the action space's is [2, 3]"


def test_rss_stays_flat_over_env_steps_and_resets():
    v = LockstepVectorEnv(4, "hover", isolation="in-process", episode_s=2.0)
    v.reset(seed=0)
    a = np.zeros((4, 3), dtype=np.float32)

    def rss_kib() -> int:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    for _ in range(20_000):
        v.step(a)
    before = rss_kib()
    for _ in range(230_000):  # with the first 20 000: a million vehicle steps
        v.step(a)
    after = rss_kib()
    assert after - before < 4096, (before, after)
