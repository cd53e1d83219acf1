"""Numpad (Humplik et al. 2019; MIKASA-Base's three numpad-gym IDs) on MuJoCo: presets, the sequence, the pressing
rules, upstream's ball update, the variants with a scripted memoryless controller, seeding, the image observation
and clear errors."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.envs.backends.numpad import ACCELERATIONS, LIGHT_OFF, LIGHT_ON, MAX_SPEED, MOVES, PITCH, neighbours

import membench_envs

# find_spec, not importorskip: MuJoCo must not be imported before the env picks its OpenGL backend (MUJOCO_GL)
if importlib.util.find_spec("mujoco") is None:
    pytest.skip("extra [numpad] not installed", allow_module_level=True)

IDS = {
    "MIKASA/NumpadDiscrete-v0": "discrete",
    "MIKASA/NumpadContinuous-v0": "continuous",
    "MIKASA/NumpadContinuousDiscreteActions-v0": "continuous_discrete_actions",
}
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3


def make(env_id="MIKASA/NumpadDiscrete-v0", variant="partial", **kw):
    return gym.make(env_id, obs_variant=variant, **kw)


def centre(tile: int, size: int = 3) -> np.ndarray:
    return (np.array(divmod(tile, size)) + 0.5) * PITCH


# --- a memoryless controller ------------------------------------------------------------------------------------
def controller(obs: np.ndarray, mode: str, rng: np.random.Generator, size: int = 3, n: int = 4):
    """Head for the next tile of the sequence when the oracle is in the observation; without it, for a random unlit
    neighbour of a lit tile (any tile when none is lit). It keeps nothing between steps."""
    tiles = size * size
    if mode == "discrete":
        lights, rest = obs[:tiles], obs[2 * tiles :]
        pos, vel = centre(int(np.argmax(obs[tiles : 2 * tiles])), size), np.zeros(2)
    else:
        pos, vel = obs[:2] * size * PITCH, obs[2:4] * MAX_SPEED
        lights, rest = obs[4 : 4 + tiles], obs[4 + tiles :]
    if rest.size:  # oracle: per tile its rank k/n, then the progress / n
        target = int(np.flatnonzero(np.rint(rest[:tiles] * n) == np.rint(rest[tiles] * n) + 1)[0])
    else:
        lit = np.flatnonzero(lights > 0.5)
        guesses = sorted({t for k in lit for t in neighbours(int(k), size) if lights[t] < 0.5}) or range(tiles)
        target = int(rng.choice(list(guesses)))
    error = centre(target, size) - pos
    if mode == "discrete":
        d = np.sign(error).astype(np.int64)
        if d[0]:
            d[1] = 0
        return int(np.flatnonzero((MOVES == d).all(axis=1))[0]) if d.any() else UP
    push = np.clip(0.15 * error - 0.8 * vel, -1.0, 1.0)
    if mode == "continuous":
        return push.astype(np.float32)
    d = np.where(np.abs(push) > 0.2, np.sign(push), 0.0)
    if not d.any():
        d = np.sign(error) if np.abs(error).max() > 0 else np.array([1.0, 0.0])
    return int(np.argmax(ACCELERATIONS @ d - 0.1 * np.abs(ACCELERATIONS).sum(axis=1) * (np.abs(d).sum() == 1)))


def mean_return(env_id: str, variant: str, episodes: int = 4) -> float:
    env, rng, total = make(env_id, variant), np.random.default_rng(0), 0.0
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        done = False
        while not done:
            obs, r, terminated, truncated, _ = env.step(controller(obs, IDS[env_id], rng))
            total, done = total + r, terminated or truncated
    env.close()
    return total / episodes


# --- presets and spaces -----------------------------------------------------------------------------------------
def test_presets_mirror_upstream():
    for env_id, mode in IDS.items():
        spec = membench_envs.info(env_id)
        assert dict(spec.kwargs) == {"mode": mode} and spec.extra == "numpad" and "MIKASA-Base" in spec.suites
        assert spec.memory_types == ("sequential",) and spec.obs_type == "vector"
        T = 500 if mode == "discrete" else 200
        assert spec.episode_length == T and spec.xi == (2, T - 1)
        env = make(env_id).unwrapped
        assert (env.size, env.n, env.T, env.pad) == (3, 4, T, 60.0)  # upstream: 3x3, 4 tiles, 60 px pad
        if mode == "discrete":
            assert env.action_space == gym.spaces.Discrete(4) and env.observation_space.shape == (18,)
        elif mode == "continuous":
            assert env.action_space == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
            assert env.observation_space.shape == (13,)  # upstream's ram: position, velocity, 9 lights
        else:
            assert env.action_space == gym.spaces.Discrete(8) and env.observation_space.shape == (13,)
        env.close()


@pytest.mark.parametrize("obs_mode", ["vector", "image"])
@pytest.mark.parametrize("env_id", list(IDS))
def test_gymnasium_env_checker(env_id, obs_mode):
    for variant in ("partial", "oracle", "full"):
        env = make(env_id, variant, obs_mode=obs_mode, image_size=32)
        check_env(env.unwrapped, skip_render_check=True)
        env.close()


# --- the sequence and the start ---------------------------------------------------------------------------------
def test_sequences_are_walks_of_distinct_neighbours_and_the_ball_starts_off_the_first_tile():
    env = make("MIKASA/NumpadDiscrete-v0").unwrapped
    starts, firsts = set(), set()
    for seed in range(300):
        env.reset(seed=seed)
        seq = [int(t) for t in env.seq]
        assert len(seq) == len(set(seq)) == 4
        steps = np.abs(np.diff([divmod(t, 3) for t in seq], axis=0)).sum(axis=1)
        assert (steps == 1).all()  # each tile next to the previous one: no diagonals, no jumps
        start = int(env.cell[0] * 3 + env.cell[1])
        assert start != seq[0]
        starts.add((start - seq[0]) % 9)
        firsts.add(seq[0])
    assert firsts == set(range(9))
    # anywhere but the first tile, not only in its row or column (upstream's discrete reset)
    assert starts == set(range(1, 9))
    rolling = make("MIKASA/NumpadContinuous-v0").unwrapped
    for seed in range(100):
        rolling.reset(seed=seed)
        assert rolling.tile_at(*rolling.ball) != rolling.seq[0]
    big = make("MIKASA/NumpadDiscrete-v0", numpad_size=4, sequence_length=16).unwrapped  # a Hamiltonian path
    big.reset(seed=0)
    assert sorted(big.seq) == list(range(16))


# --- the pressing rules -----------------------------------------------------------------------------------------
def walk(env, tile: int) -> list[float]:
    """Discrete: move to ``tile`` (rows first), returning the reward of each step."""
    u, rewards = env.unwrapped, []
    r, c = divmod(tile, u.size)
    while tuple(u.cell) != (r, c):
        d = np.sign(np.array([r, c]) - u.cell)
        a = (DOWN if d[0] > 0 else UP) if d[0] else (RIGHT if d[1] > 0 else LEFT)
        rewards.append(env.step(a)[1])
    return rewards


def lights_of(obs: np.ndarray) -> set[int]:
    return set(np.flatnonzero(obs[:9] > 0.5).tolist())


def test_wrong_tile_resets_progress_and_only_the_first_press_of_each_correct_tile_pays():
    env = make("MIKASA/NumpadDiscrete-v0", "oracle")
    u = env.unwrapped
    for seed in range(40):  # a sequence whose second tile has a neighbour off the sequence
        env.reset(seed=seed)
        seq = [int(t) for t in u.seq]
        wrong = [t for t in neighbours(seq[1], 3) if t not in seq]
        if wrong and seq[1] not in neighbours(seq[-1], 3):
            break
    assert sum(walk(env, seq[0])) == 1.0  # any tiles crossed on the way were wrong presses at progress 0
    assert walk(env, seq[1]) == [1.0]
    obs = env.step(int(np.flatnonzero((MOVES == np.subtract(divmod(wrong[0], 3), divmod(seq[1], 3))).all(1))[0]))[0]
    assert lights_of(obs) == set() and u.next_index == 0 and obs[-1] == 0.0  # dark, progress back to the start
    again = walk(env, seq[0]) + walk(env, seq[1])
    assert again[-1] == 0.0 and sum(again) == 0.0  # re-pressing tiles already found pays nothing
    obs, reward, *_ = env.step(
        int(np.flatnonzero((MOVES == np.subtract(divmod(seq[2], 3), divmod(seq[1], 3))).all(1))[0])
    )
    assert reward == 1.0 and lights_of(obs) == set(seq[:3])  # the third tile is new
    obs, reward, *_ = env.step(
        int(np.flatnonzero((MOVES == np.subtract(divmod(seq[3], 3), divmod(seq[2], 3))).all(1))[0])
    )
    assert reward == 1.0 and lights_of(obs) == set(seq)  # completed: every tile shown lit once...
    assert not u.lights.any() and u.next_index == 0 and u.max_index == -1  # ...then dark, paying afresh
    assert sum(walk(env, seq[0])) == 1.0 and walk(env, seq[1]) == [1.0]
    assert u.completions == 1


def test_edge_bump_re_presses_the_tile_as_upstream():
    env = make("MIKASA/NumpadDiscrete-v0")
    u = env.unwrapped
    for seed in range(200):
        env.reset(seed=seed)
        seq = [int(t) for t in u.seq]
        if seq[1] in (0, 1, 2) and seq[0] in (0, 1, 2):  # two tiles of the top row: up bumps the edge there
            break
    walk(env, seq[0])
    assert walk(env, seq[1]) == [1.0] and u.next_index == 2
    obs, reward, *_ = env.step(UP)  # stays on seq[1]: a press of a wrong tile
    assert reward == 0.0 and u.next_index == 0 and lights_of(obs) == set()


def roll_to(env, tile: int, limit: int = 60) -> list[float]:
    """Rolling ball: drive towards ``tile`` until its centre enters it, returning the rewards."""
    u, rewards = env.unwrapped, []
    for _ in range(limit):
        push = np.clip(0.15 * (centre(tile) - u.ball) - 0.8 * u.velocity, -1, 1).astype(np.float32)
        rewards.append(env.step(push)[1])
        if u.prev_tile == tile:
            return rewards
    raise AssertionError(f"the ball never reached tile {tile}")


def test_rolling_ball_presses_on_entry_and_a_wrong_tile_resets():
    env = make("MIKASA/NumpadContinuous-v0")
    u = env.unwrapped
    for seed in range(60):
        env.reset(seed=seed)
        seq = [int(t) for t in u.seq]
        wrong = [t for t in neighbours(seq[1], 3) if t not in seq]
        if wrong:
            break
    roll_to(env, seq[0])
    assert u.lights[seq[0]] and u.next_index == 1
    assert sum(roll_to(env, seq[1])) == 1.0
    for _ in range(3):  # resting on a lit tile presses nothing
        assert env.step(np.zeros(2, np.float32))[1] == 0.0
    roll_to(env, wrong[0])
    assert not u.lights.any() and u.next_index == 0 and u.max_index == 1
    assert sum(roll_to(env, seq[0]) + roll_to(env, seq[1])) == 0.0
    assert sum(roll_to(env, seq[2])) == 1.0


def test_the_episode_ends_terminated_after_T_steps_with_success_info():
    env = make("MIKASA/NumpadContinuousDiscreteActions-v0", max_steps=7)
    env.reset(seed=0)
    for t in range(7):
        _, _, terminated, truncated, info = env.step(0)
        assert terminated == (t == 6) and not truncated
    assert info["success"] is False and info["completions"] == 0
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


# --- the ball -----------------------------------------------------------------------------------------------------
def test_ball_follows_upstreams_update_the_speed_cap_and_the_edges():
    """velocity += action (tile/10 = 1 per unit), position += velocity, clamp at the edge and stop on that axis."""
    for cap in (True, False):
        env = make("MIKASA/NumpadContinuous-v0", speed_cap=cap)
        u = env.unwrapped
        env.reset(seed=3)
        pos, vel = u.ball, u.velocity
        rng = np.random.default_rng(1)
        fastest = 0.0
        for t in range(200):
            a = np.sign(rng.uniform(-1, 1, 2)) if t % 40 < 25 else rng.uniform(-1, 1, 2)
            acc = a.astype(np.float32).astype(np.float64)
            if cap:
                acc = np.clip(acc, -MAX_SPEED - vel, MAX_SPEED - vel)
            vel = vel + acc
            pos = pos + vel
            hit = (pos <= 0) | (pos >= 59)
            pos, vel = np.clip(pos, 0, 59), np.where(hit, 0.0, vel)
            obs = env.step(a.astype(np.float32))[0]
            np.testing.assert_allclose(u.ball, pos, rtol=0, atol=1e-9)
            np.testing.assert_allclose(u.velocity, vel, rtol=0, atol=1e-9)
            np.testing.assert_allclose(obs[:4], np.concatenate([pos / 60, vel / 5]), atol=1e-6)
            fastest = max(fastest, np.abs(vel).max())
        assert (fastest <= MAX_SPEED) if cap else (fastest > MAX_SPEED)  # upstream's code lets it run away
        assert env.observation_space.contains(obs) or not cap


def test_discrete_actions_of_the_rolling_ball_are_upstreams_accelerations():
    env = make("MIKASA/NumpadContinuousDiscreteActions-v0")
    u = env.unwrapped
    for a, expected in enumerate([(-1, 0), (0, 1), (1, 0), (0, -1), (-1, 1), (1, 1), (-1, -1), (1, -1)]):
        env.reset(seed=0)
        u.data.qpos[:2] = 30.0, 30.0  # the middle of the pad, far from the edges
        env.step(a)
        np.testing.assert_array_equal(u.velocity, expected)
        np.testing.assert_array_equal(u.ball, np.add(30.0, expected))


# --- variants -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", list(IDS))
def test_memoryless_controller_scores_far_more_with_the_oracle(env_id):
    oracle, partial = mean_return(env_id, "oracle"), mean_return(env_id, "partial")
    print(f"{env_id}: memoryless controller, mean return over 4 episodes: oracle {oracle:.1f}, partial {partial:.1f}")
    assert oracle >= 4 * max(partial, 1.0)
    assert oracle >= (100 if IDS[env_id] == "discrete" else 12)  # the sequence run again and again


def test_variant_contents():
    env = make("MIKASA/NumpadContinuous-v0", "full", max_steps=50)
    u = env.unwrapped
    obs, info = env.reset(seed=5)
    seq = [int(t) for t in u.seq]
    assert obs.shape == (13 + 10 + 11,)
    oracle = obs[13:23]
    np.testing.assert_array_equal(oracle, info["oracle"])
    np.testing.assert_allclose(oracle[seq], [0.25, 0.5, 0.75, 1.0])
    assert oracle[[t for t in range(9) if t not in seq]].sum() == 0 and oracle[9] == 0.0  # progress 0
    assert obs[23] == 0.0 and not obs[24:33].any() and obs[33] == 0.0  # reward counter, previous tile, t/T
    roll_to(env, seq[0])
    obs = env.unwrapped._observe(u.oracle())
    assert obs[22] == 0.25 and obs[23] == 0.25 and obs[24 + seq[0]] == 1.0 and obs[33] == u.t / 50
    partial = make("MIKASA/NumpadContinuous-v0").reset(seed=5)[0]
    np.testing.assert_array_equal(partial, make("MIKASA/NumpadContinuous-v0", "full").reset(seed=5)[0][:13])


# --- seeding ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", list(IDS))
def test_same_seed_same_sequence_and_trajectory(env_id):
    def rollout(seed):
        env = make(env_id, "full")
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs]
        for _ in range(60):
            obs, r, *_ = env.step(env.action_space.sample())
            out.append(np.append(obs, r))
        return env.unwrapped.seq.copy(), out

    seq_a, a = rollout(4)
    seq_b, b = rollout(4)
    np.testing.assert_array_equal(seq_a, seq_b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    others = {tuple(rollout(s)[0]) for s in range(5, 15)}
    assert len(others) > 3


# --- the image observation ----------------------------------------------------------------------------------------
def test_image_observation_renders_headless_and_shows_the_lit_tile():
    env = make("MIKASA/NumpadDiscrete-v0", "oracle", obs_mode="image", render_mode="rgb_array")
    u = env.unwrapped
    obs, _ = env.reset(seed=0)
    assert obs["image"].shape == (64, 64, 3) and obs["image"].dtype == np.uint8
    seq = [int(t) for t in u.seq]
    first = None
    for k, tile in enumerate(seq[:2]):
        before = obs["image"]
        walk(env, tile)
        obs = u._observe(u.oracle())
        if k == 0:
            first = obs["image"]
        r, c = divmod(tile, 3)
        # the middle of the tile, away from the ball: a corner of the tile's square
        y, x = int((r * PITCH + 6) * 64 / 60), int((c * PITCH + 6) * 64 / 60)
        np.testing.assert_allclose(before[y, x], LIGHT_OFF, atol=3)
        np.testing.assert_allclose(obs["image"][y, x], LIGHT_ON, atol=3)
    assert not np.array_equal(first, obs["image"])
    frame = env.render()
    assert frame.shape == (240, 240, 3) and frame.dtype == np.uint8 and (frame == (255, 0, 0)).all(axis=2).any()
    env.close()


_FIRST_PICTURE = """
import sys{first}
import gymnasium as gym, numpy as np
import membench_envs
env = gym.make("MIKASA/NumpadContinuous-v0", obs_mode="image")
obs, _ = env.reset(seed=3)
env.close()
sys.stdout.write(obs["image"].tobytes().hex())
"""


@pytest.mark.parametrize("backend", ["", "osmesa"])
def test_images_render_headless_even_when_mujoco_was_imported_first(backend):
    """ManiSkill, gymnasium's MuJoCo tasks and SB3 import mujoco before any Numpad exists, which locks MuJoCo's own
    renderer to a windowed backend; Numpad's pictures must not depend on that."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    if backend:
        env["MUJOCO_GL"] = backend
    pictures = []
    for first in ("", "\nimport mujoco"):
        out = subprocess.run(
            [sys.executable, "-c", _FIRST_PICTURE.format(first=first)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        pictures.append(out.stdout)
    assert pictures[0] == pictures[1] and len(pictures[0]) == 2 * 64 * 64 * 3


# --- bad input ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"mode": "diagonal"}, ValueError, "mode='diagonal' is not allowed"),
        ({"sequence_length": 10}, ValueError, "sequence_length=10 is not allowed; a 3x3 pad has 9 tiles"),
        ({"numpad_size": 1}, ValueError, "numpad_size=1 is not allowed"),
        ({"obs_mode": "rgb"}, ValueError, "obs_mode='rgb' is not allowed"),
        ({"speed_cap": 1}, TypeError, "speed_cap=1 is not allowed"),
        ({"tile_size": 12}, TypeError, "unknown kwarg 'tile_size'"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make("MIKASA/NumpadContinuous-v0", **kwargs)


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(KeyError, match="NumpadDiscrete-v0"):
        membench_envs.info("MIKASA/NumpadDiscrte-v0")
    with pytest.raises(gym.error.Error):
        gym.make("MIKASA/NumpadHard-v0")


def test_bad_actions_and_step_before_reset():
    env = make("MIKASA/NumpadContinuous-v0")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(2, np.float32))
    env.reset(seed=0)
    for bad, match in (
        (np.zeros(3, np.float32), "shape"),
        (np.zeros((1, 2)), "shape"),
        (0, "shape"),
        (np.array([1.5, 0.0]), "outside"),
        (np.array([np.nan, 0.0]), "not finite"),
        (np.array(["a", "b"]), "not finite"),
    ):
        with pytest.raises(ValueError, match=match):
            env.step(bad)
    env.step(np.array([1.0, -1.0]))  # the bounds themselves are allowed
    for env_id, n in (("MIKASA/NumpadDiscrete-v0", 4), ("MIKASA/NumpadContinuousDiscreteActions-v0", 8)):
        env = make(env_id)
        env.reset(seed=0)
        for bad in (n, -1, 1.5, np.array([0, 1])):
            with pytest.raises(ValueError, match="action"):
                env.step(bad)


def test_sb3_trains_on_the_image_observation():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("MIKASA/NumpadContinuous-v0", n_envs=2, seed=0, env_kwargs={"obs_mode": "image"})
    model = PPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)  # NatureCNN on the 64 x 64 picture
    assert model.num_timesteps >= 64
    venv.close()


# --- against upstream's code, where a checkout is at hand -----------------------------------------------------------
@pytest.mark.skipif(
    not os.environ.get("NUMPAD_UPSTREAM"), reason="set NUMPAD_UPSTREAM=<MIKASA-Base checkout>/mikasa_base/Numpad/env"
)
@pytest.mark.parametrize("env_id", list(IDS))
def test_matches_upstream_step_for_step(env_id):
    """MIKASA-Base's numpad (numpy; on no package index) given our sequence and start, then the same actions: the
    same observations and rewards, with upstream's uncapped speed (``speed_cap=False``)."""
    folder = os.environ["NUMPAD_UPSTREAM"]
    if "upstream_numpad" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "upstream_numpad", Path(folder) / "__init__.py", submodule_search_locations=[folder]
        )
        sys.modules["upstream_numpad"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["upstream_numpad"])
    mode = IDS[env_id]
    module, cls = {
        "discrete": ("numpad_discrete", "Numpad2DDiscrete"),
        "continuous": ("numpad_continuous", "Numpad2DContinuous"),
        "continuous_discrete_actions": ("numpad_continuous_discrete_actions", "NumpadContinuousDiscreteActions"),
    }[mode]
    upstream_cls = getattr(importlib.import_module(f"upstream_numpad.{module}"), cls)
    ours = make(env_id, speed_cap=False).unwrapped
    rewards = 0.0
    for seed in range(10):
        obs, _ = ours.reset(seed=seed)
        up = upstream_cls()
        inner = getattr(up, "numpad_continuous", up)
        inner.reset()
        inner.seq = [int(t) for t in ours.seq]
        if mode == "discrete":
            inner.state[:] = 0
            inner.state[1, ours.cell[0], ours.cell[1]] = 1
            inner.ball_pos = (int(ours.cell[0]), int(ours.cell[1]))
        else:
            inner.ball_pos, inner.ball_velocity, inner.lights = ours.ball, np.zeros(2), np.zeros(9)
        rng = np.random.default_rng(seed)
        for _ in range(ours.T):
            if mode == "continuous":
                a = rng.uniform(-1, 1, 2)
                a = np.where(rng.random(2) < 0.5, np.sign(a), a)  # often full throttle: fast balls
            else:
                a = int(rng.integers(ours.action_space.n))
            obs, reward, *_ = ours.step(a)
            up_obs, up_reward, *_ = up.step(a)
            np.testing.assert_allclose(obs, np.ravel(up_obs), rtol=0, atol=1e-6)
            assert reward == up_reward
            rewards += reward
    assert rewards > 0
