"""MiniGrid-Memory: fixed vs variable corridor, measured correlation horizons, reward, variants, errors."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import membench_envs
from membench_envs import catalogue

pytest.importorskip("minigrid")

LEFT, RIGHT, FORWARD = 0, 1, 2
KEY, BALL = 5, 6  # minigrid OBJECT_TO_IDX
EAST, SOUTH, WEST, NORTH = 0, 1, 2, 3
FIXED, RANDOM = "MIKASA/MiniGridMemoryS13-v0", "MIKASA/MiniGridMemoryS13Random-v0"


def _turn_towards(direction: int, target: int) -> int:
    return LEFT if (direction - target) % 4 == 1 else RIGHT


def _drive(env, decide):
    """Walk the corridor east to the junction, then enter the arm chosen by ``decide(obs, info)`` ('north'/'south').

    Navigation reads the agent's pose (Markov, memoryless); only the arm choice depends on ``decide``.
    """
    mg, u = env.unwrapped.minigrid, env.unwrapped
    obs, info = env.reset(seed=env._seed)
    steps, total, done = 0, 0.0, False
    jx, _mid = u.junction
    while not done:
        x, _ = mg.agent_pos
        d = mg.agent_dir
        if x < jx:
            a = FORWARD if d == EAST else _turn_towards(d, EAST)
        else:
            want = NORTH if decide(obs, info) == "north" else SOUTH
            a = FORWARD if d == want else _turn_towards(d, want)
        obs, r, term, trunc, info = env.step(a)
        steps, total, done = steps + 1, total + r, term or trunc
    return info["success"], total, steps


def _north_object(env) -> int:
    mg = env.unwrapped.minigrid
    jx, mid = env.unwrapped.junction
    return mg.grid.get(jx, mid - 2).type


def _run_many(env_id, variant, decide, seeds=range(40)):
    env = gym.make(env_id, obs_variant=variant)
    out = []
    for s in seeds:
        env._seed = s
        out.append(_drive(env, lambda o, i: decide(env, o, i)))
    return out


def test_catalogue_entries():
    ids = [s.id for s in catalogue.select(extra="minigrid")]
    assert ids == [f"MIKASA/MiniGridMemoryS{n}-v0" for n in (7, 9, 11, 13, 19, 23)] + [
        f"MIKASA/MiniGridMemoryS{n}Random-v0" for n in (7, 13, 17, 19, 23)
    ]
    for spec in catalogue.select(extra="minigrid"):
        assert spec.memory_types == ("object",) and spec.episode_length == 95 and spec.obs_type == "dict"
    # Suites say which upstream registers each set-up: MIKASA-Base S7/S13/S19 fixed, S7/S13 random and its
    # "S17Random" built at size 19; minigrid S7/S9/S11/S13 fixed, S13/S17 random; the paper's S23 (MEM).
    mikasa_base = {f"MIKASA/MiniGridMemoryS{n}-v0" for n in (7, 13, 19)} | {
        f"MIKASA/MiniGridMemoryS{n}Random-v0" for n in (7, 13, 19)
    }
    minigrid_ids = {f"MIKASA/MiniGridMemoryS{n}-v0" for n in (7, 9, 11, 13)} | {
        f"MIKASA/MiniGridMemoryS{n}Random-v0" for n in (13, 17)
    }
    assert set(membench_envs.suite("MIKASA-Base")) & set(ids) == mikasa_base
    assert set(membench_envs.suite("MiniGrid")) == minigrid_ids
    assert set(membench_envs.suite("MEM")) & set(ids) == {
        "MIKASA/MiniGridMemoryS23-v0",
        "MIKASA/MiniGridMemoryS23Random-v0",
    }
    for env_id, size, random_length in (
        ("MIKASA/MiniGridMemoryS19-v0", 19, False),
        ("MIKASA/MiniGridMemoryS7Random-v0", 7, True),
        ("MIKASA/MiniGridMemoryS19Random-v0", 19, True),
    ):
        env = gym.make(env_id)
        env.reset(seed=0)
        mg = env.unwrapped.minigrid
        assert (mg.width, mg.height, mg.random_length if hasattr(mg, "random_length") else random_length) == (
            size,
            size,
            random_length,
        )
    assert "MiniGrid-MemoryS17Random-v0" in membench_envs.info("MIKASA/MiniGridMemoryS19Random-v0").notes
    assert membench_envs.info("MIKASA/MiniGridMemoryS23-v0").xi == (22, 22)  # paper §5.1: L = 21, ξ = 22
    assert membench_envs.info("MIKASA/MiniGridMemoryS23Random-v0").xi == (6, 22)


def test_observation_variants():
    spaces = {v: gym.make(FIXED, obs_variant=v).observation_space for v in ("partial", "oracle", "full")}
    assert set(spaces["partial"].spaces) == {"image"} and spaces["partial"]["image"].shape == (84, 84, 3)
    assert gym.make(FIXED, obs_encoding="symbolic").observation_space["image"].shape == (3, 3, 3)
    assert set(spaces["oracle"].spaces) == {"image", "oracle"}
    assert spaces["full"]["image"].shape == (13, 13, 3)
    env = gym.make(FIXED, obs_variant="full")
    obs, info = env.reset(seed=0)
    mg = env.unwrapped.minigrid
    x, y = mg.agent_pos
    np.testing.assert_array_equal(obs["agent"], [x, y, mg.agent_dir])
    assert obs["image"][x, y, 0] == 10  # the agent is drawn in the full grid
    assert obs["image"][1, 5, 0] == {"key": KEY, "ball": BALL}[env.unwrapped.start_object]
    np.testing.assert_array_equal(info["oracle"], np.eye(2)[["key", "ball"].index(env.unwrapped.start_object)])


def test_start_object_is_visible_at_reset_only_from_the_room():
    env = gym.make(FIXED, obs_encoding="symbolic")
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        if env.unwrapped.minigrid.agent_pos[0] == 1:
            assert obs["image"][0, 2, 0] in (KEY, BALL)  # left of the agent, who faces east
            break
    else:
        pytest.fail("no start in the room's first column in 60 seeds")
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        if 4 < env.unwrapped.minigrid.agent_pos[0] < env.unwrapped.junction[0] - 2:
            assert not np.isin(obs["image"][..., 0], (KEY, BALL)).any()  # mid-corridor: nothing to see


@pytest.mark.parametrize("env_id", [FIXED, RANDOM])
def test_oracle_memoryless_policy_succeeds_partial_is_at_chance(env_id):
    def from_oracle(env, obs, info):
        want = ("key", "ball")[int(np.argmax(obs["oracle"]))]
        return "north" if _north_object(env) == want else "south"

    res = _run_many(env_id, "oracle", from_oracle)
    assert all(s for s, _, _ in res)

    # Full: everything is in the observation (start object and end objects in the grid).
    def from_full(env, obs, info):
        mid = 6
        start = obs["image"][1, mid - 1, 0]
        jx = env.unwrapped.junction[0]
        return "north" if obs["image"][jx, mid - 2, 0] == start else "south"

    assert all(s for s, _, _ in _run_many(env_id, "full", from_full))
    # Partial: the same memoryless policy cannot know the start object; it must guess -> chance.
    guesses = _run_many(env_id, "partial", lambda env, o, i: "north", seeds=range(60))
    rate = np.mean([s for s, _, _ in guesses])
    assert 0.3 < rate < 0.7


def test_success_reward_is_one_minus_point_nine_t_over_95_and_failure_is_zero():
    env = gym.make(FIXED, obs_variant="oracle")
    for seed in range(10):
        env._seed = seed
        success, total, steps = _drive(
            env, lambda o, i: "north" if _north_object(env) == ("key", "ball")[int(np.argmax(o["oracle"]))] else "south"
        )
        env.reset(seed=seed)
        start_x = env.unwrapped.minigrid.agent_pos[0]
        assert success and steps == (env.unwrapped.junction[0] - start_x) + 2  # optimal route
        assert total == pytest.approx(1 - 0.9 * steps / 95)
        env._seed = seed
        success, total, _ = _drive(
            env, lambda o, i: "south" if _north_object(env) == ("key", "ball")[int(np.argmax(o["oracle"]))] else "north"
        )
        assert not success and total == 0.0


def test_time_limit_is_95_steps():
    env = gym.make("MIKASA/MiniGridMemoryS7-v0")
    env.reset(seed=0)
    for t in range(95):
        _, r, term, trunc, info = env.step(LEFT)
        assert r == 0.0 and not term
        assert trunc == (t == 94)
    assert info["success"] is False
    with pytest.raises(gym.error.ResetNeeded):
        env.step(LEFT)


def _measured_xi(env, seed):
    """Scripted memory agent: look at the start object (fewest steps), then go to the matching arm.

    Returns (ξ, start column, junction column) with ξ = t_recall − t_last_sight + 1: t_last_sight is the last
    observation in which the start-room object is in view, t_recall the action entering the arm.
    """
    u = env.unwrapped
    mg = u.minigrid
    obs, _ = env.reset(seed=seed)
    x0, jx = int(mg.agent_pos[0]), u.junction[0]
    start_obj = {"key": KEY, "ball": BALL}[u.start_object]
    plan = []
    if x0 == 2:
        plan = [LEFT, RIGHT]  # facing north at column 2 shows the object
    elif x0 >= 3:
        plan = [LEFT, LEFT] + [FORWARD] * (x0 - 3) + [LEFT, LEFT]  # at column 3 facing west it is in view
    t, last_sight = 0, None
    while True:
        if mg.agent_pos[0] <= 3 and (obs["image"][..., 0] == start_obj).any():
            last_sight = t
        if plan:
            a = plan.pop(0)
        elif mg.agent_pos[0] < jx:
            a = FORWARD
        else:
            want = NORTH if _north_object(env) == u.start_object else SOUTH
            a = FORWARD if mg.agent_dir == want else _turn_towards(mg.agent_dir, want)
        obs, _r, term, trunc, info = env.step(a)
        if term or trunc:
            assert info["success"]
            return t - last_sight + 1, x0, jx
        t += 1


@pytest.mark.parametrize("env_id", [FIXED, RANDOM, "MIKASA/MiniGridMemoryS23-v0", "MIKASA/MiniGridMemoryS7-v0"])
def test_fixed_corridor_has_one_xi_random_corridor_spans_the_catalogue_range(env_id):
    env = gym.make(env_id, obs_encoding="symbolic")
    runs = [_measured_xi(env, s) for s in range(60)]
    xis = {xi for xi, _, _ in runs}
    starts = {x0 for _, x0, _ in runs}
    junctions = {jx for _, _, jx in runs}
    spec = membench_envs.info(env_id)
    assert len(starts) > 3  # the agent starts anywhere in the corridor in both set-ups (upstream minigrid)
    if spec.kwargs["random_length"]:
        assert len(junctions) > 3 and len(xis) > 3  # the corridor length, hence ξ, varies
    else:
        assert junctions == {spec.kwargs["size"] - 2}  # same object-to-junction distance every episode
        assert len(xis) == 1  # ... so the same ξ whatever the start cell
    assert (min(xis), max(xis)) == spec.xi


def test_seeding_and_fixed_vs_random_layouts():
    a, b = gym.make(RANDOM), gym.make(RANDOM)
    for seed in range(5):
        oa, _ = a.reset(seed=seed)
        ob, _ = b.reset(seed=seed)
        np.testing.assert_array_equal(oa["image"], ob["image"])
        assert a.unwrapped.junction == b.unwrapped.junction
        for act in (FORWARD, LEFT, FORWARD, RIGHT, FORWARD):
            ra, rb = a.step(act), b.step(act)
            np.testing.assert_array_equal(ra[0]["image"], rb[0]["image"])
            assert ra[1:4] == rb[1:4]
            if ra[2] or ra[3]:
                break


def test_actions_and_bad_actions():
    env = gym.make(FIXED)
    env.reset(seed=0)
    assert env.action_space == gym.spaces.Discrete(3)
    for bad in (3, -1, 0.5, np.array([1, 2])):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env = gym.make(FIXED, full_action_space=True)
    env.reset(seed=0)
    env.step(6)  # minigrid's "done": a no-op here
    with pytest.raises(ValueError, match="action"):
        env.step(7)
    with pytest.raises(ValueError, match="size"):
        gym.make(FIXED, size=12)


def _authors_rgb_view(size: int, random_length: bool, tile_size: int):
    """The authors' (RATE) observation pipeline on minigrid's own MemoryEnv: gym_minigrid's ViewSizeWrapper(3), which
    set the unwrapped env's ``agent_view_size`` (minigrid 3's wrapper only re-encodes the symbolic view, so the
    view size is passed to the env here), then minigrid's RGBImgPartialObsWrapper(tile_size)."""
    from minigrid.envs.memory import MemoryEnv
    from minigrid.wrappers import RGBImgPartialObsWrapper

    env = MemoryEnv(size=size, random_length=random_length, max_steps=95, agent_view_size=3)
    return RGBImgPartialObsWrapper(env, tile_size=tile_size)


@pytest.mark.parametrize("env_id,tile", [(FIXED, 28), (RANDOM, 8)])
def test_rgb_view_equals_the_authors_rgb_pipeline(env_id, tile):
    spec = membench_envs.info(env_id)
    ours = gym.make(env_id, tile_size=tile)
    ref = _authors_rgb_view(spec.kwargs["size"], spec.kwargs["random_length"], tile)
    assert ours.observation_space["image"] == ref.observation_space["image"]
    rng = np.random.default_rng(0)
    changed = False
    for seed in range(3):
        o, _ = ours.reset(seed=seed)
        r, _ = ref.reset(seed=seed)
        np.testing.assert_array_equal(o["image"], r["image"])
        first = o["image"]
        for a in rng.integers(0, 3, 30):
            o, _, term, trunc, _ = ours.step(int(a))
            r, *_ = ref.step(int(a))
            np.testing.assert_array_equal(o["image"], r["image"])
            changed |= not np.array_equal(o["image"], first)
            if term or trunc:
                break
    assert changed  # the view is not a constant picture


def test_symbolic_view_equals_minigrid_image():
    from minigrid.envs.memory import MemoryEnv

    ours = gym.make(FIXED, obs_encoding="symbolic")
    ref = MemoryEnv(size=13, max_steps=95, agent_view_size=3)
    for seed in range(3):
        o, _ = ours.reset(seed=seed)
        r, _ = ref.reset(seed=seed)
        np.testing.assert_array_equal(o["image"], r["image"])
        for a in (FORWARD, LEFT, FORWARD, RIGHT):
            np.testing.assert_array_equal(ours.step(a)[0]["image"], ref.step(a)[0]["image"])


def test_missing_minigrid_is_one_clear_error():
    code = (
        "import sys; sys.modules['minigrid'] = None\n"
        "import gymnasium as gym, membench_envs\n"
        "try:\n"
        f"    gym.make({FIXED!r})\n"
        "except membench_envs.MissingExtraError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('made without minigrid')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'membench-envs[minigrid]'" in out and FIXED in out
