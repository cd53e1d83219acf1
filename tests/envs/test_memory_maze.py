"""Memory Maze (``MIKASA/MemoryMaze<n>x<n>-v0``, the package memory-maze's dm_env tasks): the gymnasium checker,
seeding, what each variant holds, the prompt / reward rule, bad inputs and the OpenGL selection.

The package renders every step with MuJoCo (~30 steps/s and ~1.5 s per reset here; a seeded reset rebuilds the
task, ~3 s), so the default tests are few and short: the checker runs on 9x9 partial; on every other ID and
variant, and the scored variant comparison, it is ``slow``. The generic tests over every ID leave these IDs out
(tests/envs/_helpers.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import deque

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.envs.core import mujoco_gl

import membench_envs
from tests.envs._helpers import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("memory-maze"), reason="extra [memory-maze] not installed")

IDS = [s.id for s in membench_envs.all_tasks() if s.extra == "memory-maze"]
ID = "MIKASA/MemoryMaze9x9-v0"
_MOVES = ((1, 0), (-1, 0), (0, 1), (0, -1))


# --- a memoryless planner: BFS on the layout, then steer towards the next cell ---------------------------------------
def _waypoint(layout: np.ndarray, pos: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """The centre of the next cell on a shortest route from ``pos`` to ``goal`` (``goal`` itself in its cell)."""
    n = layout.shape[0]
    here, there = (int(pos[1]), int(pos[0])), (int(goal[1]), int(goal[0]))
    if here == there:
        return np.asarray(goal, dtype=np.float64)
    dist = np.full(layout.shape, -1)
    dist[there] = 0
    queue = deque([there])
    while queue:
        r, c = queue.popleft()
        for dr, dc in _MOVES:
            rr, cc = r + dr, c + dc
            if 0 <= rr < n and 0 <= cc < n and layout[rr, cc] and dist[rr, cc] < 0:
                dist[rr, cc] = dist[r, c] + 1
                queue.append((rr, cc))
    steps = [(here[0] + dr, here[1] + dc) for dr, dc in _MOVES]
    steps = [(r, c) for r, c in steps if 0 <= r < n and 0 <= c < n and dist[r, c] >= 0]
    if not steps:  # no route on this layout: head straight for the goal
        return np.asarray(goal, dtype=np.float64)
    r, c = min(steps, key=lambda cell: dist[cell])
    return np.array([c + 0.5, r + 0.5])


def _steer(pos: np.ndarray, direction: np.ndarray, waypoint: np.ndarray) -> int:
    """Forward when facing the waypoint, else turn towards it (left = counter-clockwise in maze coordinates)."""
    d = waypoint - pos
    angle = np.arctan2(direction[0] * d[1] - direction[1] * d[0], direction @ d)
    if abs(angle) < 0.25:
        return 1
    if abs(angle) < 0.8:
        return 4 if angle > 0 else 5
    return 2 if angle > 0 else 3


def _walk_to(obs_full: dict, goal: np.ndarray) -> int:
    return _steer(
        obs_full["agent_pos"], obs_full["agent_dir"], _waypoint(obs_full["maze_layout"], obs_full["agent_pos"], goal)
    )


def _planner(obs: dict, size: int, rng: np.random.Generator) -> int:
    """The same memoryless policy for every variant: plan with the oracle (or the full state) when the observation
    has it; with the partial observation there is nothing to plan with, so it moves at random."""
    if "oracle" in obs:
        o = obs["oracle"]
        layout = o[6:].reshape(size, size)
        return _steer(o[0:2], o[2:4], _waypoint(layout, o[0:2], o[4:6]))
    if "maze_layout" in obs:
        return _walk_to(obs, obs["target_pos"])
    return int(rng.integers(6))


# --- the gymnasium checker (~20-40 s per call: it resets with a seed about eight times) ----------------------------
# The default suite checks the 9x9 partial env; the other variants and sizes are `slow`.
# Slow: the checker resets 12 times and a Memory Maze reset rebuilds the MuJoCo model (about 3 s each here). The
# default suite keeps what it checks through the seeding, space and oracle tests below.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "variant"), [(ID, "partial"), (ID, "oracle"), (ID, "full")] + [(i, "partial") for i in IDS[1:]]
)
def test_gymnasium_env_checker(env_id, variant):
    env = gym.make(env_id, obs_variant=variant)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


# --- seeding --------------------------------------------------------------------------------------------------------
def _episode(env: gym.Env, seed: int | None, actions) -> list[dict]:
    obs, info = env.reset(seed=seed)
    out = [obs | {"info_oracle": info["oracle"]}]
    for a in actions:
        obs, r, *_, info = env.step(a)
        out.append(obs | {"reward": np.float64(r), "info_oracle": info["oracle"]})
    return out


def test_same_seed_same_maze_and_trajectory_other_seed_other_maze():
    env = gym.make(ID, obs_variant="full")
    actions = np.random.default_rng(0).integers(0, 6, 8)
    a = _episode(env, 7, actions)
    second = env.reset()[0]["maze_layout"]  # an unseeded reset continues the seed's sequence of mazes...
    b = _episode(env, 7, actions)  # after steps and another maze: the seeded reset rebuilds the task from the seed
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for k in x:
            np.testing.assert_array_equal(x[k], y[k], err_msg=k)
    assert any(not np.array_equal(a[0]["agent_pos"], o["agent_pos"]) for o in a[1:]), "the agent never moved"
    np.testing.assert_array_equal(env.reset()[0]["maze_layout"], second)  # ...the same one each time
    other = env.reset(seed=8)[0]
    assert not np.array_equal(other["maze_layout"], a[0]["maze_layout"])
    env.close()


# --- what the variants hold ------------------------------------------------------------------------------------------
def test_oracle_is_the_agent_pose_prompted_target_and_layout_of_the_full_state():
    env = gym.make(ID, obs_variant="full")
    obs, info = env.reset(seed=3)
    oracle_env = gym.make(ID, obs_variant="oracle")
    oracle_obs, _ = oracle_env.reset(seed=3)
    for _ in range(6):  # a few steps: the pose moves, the oracle follows
        obs, _, _, _, info = env.step(4)
        oracle_obs, _, _, _, oracle_info = oracle_env.step(4)
    o = info["oracle"]
    np.testing.assert_array_equal(o, oracle_obs["oracle"])
    np.testing.assert_array_equal(o, oracle_info["oracle"])
    assert oracle_env.observation_space.contains(oracle_obs) and env.observation_space.contains(obs)
    np.testing.assert_array_equal(o[0:2], obs["agent_pos"])
    np.testing.assert_array_equal(o[2:4], obs["agent_dir"])
    np.testing.assert_array_equal(o[4:6], obs["target_pos"])
    np.testing.assert_array_equal(o[6:].reshape(9, 9), obs["maze_layout"])
    # the values mean what they say: the agent and every target stand on floor cells, the prompted target is one
    # of the targets, the direction is a unit vector
    layout = obs["maze_layout"]
    for x, y in [obs["agent_pos"], *obs["targets_pos"]]:
        assert layout[int(y), int(x)] == 1
    assert min(np.abs(obs["targets_pos"] - obs["target_pos"]).sum(axis=1)) == 0
    assert abs(np.linalg.norm(obs["agent_dir"]) - 1) < 1e-3
    assert set(obs) == {"image", "target_color", *membench_envs.envs.backends.memory_maze.FULL_KEYS}
    assert set(oracle_obs) == {"image", "target_color", "oracle"}
    env.close()
    oracle_env.close()


def test_package_options_reach_the_task():
    # -HD (256 would be slow to render here; any side from 64 up works the same), -Vis, -6CL
    env = gym.make(ID, obs_variant="full", camera_resolution=96, good_visibility=True, randomize_colors=True)
    obs, _ = env.reset(seed=1)
    assert obs["image"].shape == (96, 96, 3) and env.observation_space.contains(obs)
    from memory_maze.maze import TARGET_COLORS  # imported by make (without legacy gym)

    six = np.array(TARGET_COLORS, dtype=np.float32)
    colours = [obs["targets_color"]] + [env.reset()[0]["targets_color"] for _ in range(2)]
    for c in colours:  # three of the package's six colours, drawn anew each episode
        assert all(np.isclose(six, row, atol=1e-6).all(axis=1).any() for row in c)
    assert len({tuple(map(tuple, c)) for c in colours}) > 1
    env.close()


def test_top_camera_control_freq_and_show_path_reach_the_task():
    """The package's -Top, -HiFreq and -Oracle options as kwargs: the pictures are the package's own task's, built
    with the same seed and options, step for step; T counts the control steps of the 250 s limit."""
    from memory_maze import tasks  # imported by make (without legacy gym)

    options = {"top_camera": True, "control_freq": 40, "show_path": True}
    env = gym.make(ID, obs_variant="full", **options)
    obs, _ = env.reset(seed=2)
    assert env.unwrapped.T == 250 * 40 and env.unwrapped.metadata["render_fps"] == 40
    reference = tasks.memory_maze_9x9(seed=2, global_observables=True, **options)
    timestep = reference.reset()
    for action in (None, 1, 1, 4, 1):
        if action is not None:
            obs, *_ = env.step(action)
            timestep = reference.step(action)
        np.testing.assert_array_equal(obs["image"], timestep.observation["image"])
        np.testing.assert_array_equal(obs["maze_layout"], timestep.observation["maze_layout"] > 0)
    assert (timestep.observation["maze_layout"] == 2).any()  # the package marks the route in its layout...
    assert env.observation_space.contains(obs)  # ...ours stays floor / wall
    reference.close()
    env.close()
    with pytest.raises(ValueError, match=r"control_freq=3 is not allowed; control_freq must be one of 1, 2, 4"):
        gym.make(ID, control_freq=3)  # the control step must be a whole number of the 5 ms physics steps


@pytest.mark.slow
def test_a_memoryless_planner_scores_with_the_oracle_and_full_state_not_without():
    steps, scores = 300, {}
    for variant in ("partial", "oracle", "full"):
        env = gym.make(ID, obs_variant=variant)
        rng = np.random.default_rng(0)
        total = 0.0
        for seed in (3, 4):
            obs, _ = env.reset(seed=seed)
            for _ in range(steps):
                obs, reward, *_ = env.step(_planner(obs, 9, rng))
                total += reward
        scores[variant] = total / 2
        env.close()
    print(f"\nMemoryMaze9x9, {steps} steps, mean over 2 seeds: targets reached per variant {scores}")
    assert scores["oracle"] >= 4 and scores["full"] >= 4
    assert scores["partial"] <= 1


# --- the task's rule: the prompt names the target that pays ----------------------------------------------------------
def _prompted(obs: dict) -> int:
    """The index of the prompted target among ``targets_pos``, checking that the prompt is its colour."""
    (i,) = np.flatnonzero((obs["targets_pos"] == obs["target_pos"]).all(axis=1))
    np.testing.assert_allclose(obs["target_color"], obs["targets_color"][i], atol=1e-6)
    border = (obs["target_color"].astype(np.float64) * 255 * 0.7).astype(np.uint8)  # the package's border
    np.testing.assert_array_equal(obs["image"][0, 32], border)
    np.testing.assert_array_equal(obs["image"][32, -1], border)
    return int(i)


def test_prompt_is_the_colour_of_the_target_that_pays_and_other_targets_pay_nothing():
    env = gym.make(ID, obs_variant="full")
    obs, _ = env.reset(seed=5)
    prompted = _prompted(obs)
    other = (prompted + 1) % 3
    # 1) walk onto another target: it pays nothing and the prompt stays
    for _ in range(200):
        obs, reward, *_ = env.step(_walk_to(obs, obs["targets_pos"][other]))
        assert reward == 0.0 and _prompted(obs) == prompted
        if np.linalg.norm(obs["agent_pos"] - obs["targets_pos"][other]) < 0.1:
            break
    else:
        pytest.fail("the planner did not reach the other target")
    # 2) walk to the prompted target: +1 when the agent reaches it, then a new prompt names another target
    for _ in range(200):
        before = obs
        obs, reward, *_ = env.step(_walk_to(obs, obs["target_pos"]))
        if reward:
            break
        assert _prompted(obs) == prompted
    else:
        pytest.fail("no reward on the way to the prompted target")
    assert reward == 1.0
    assert np.linalg.norm(before["agent_pos"] - before["targets_pos"][prompted]) < 0.6
    assert _prompted(obs) != prompted
    env.close()


# --- bad input ------------------------------------------------------------------------------------------------------
def test_bad_actions_kwargs_and_calls_are_clear_errors():
    with pytest.raises(ValueError, match=r"size=10 is not allowed; size must be an odd int >= 9 and <= 15"):
        gym.make(ID, size=10)
    with pytest.raises(TypeError, match="MemoryMaze: unknown kwarg 'time_limit'; valid kwargs: obs_variant, size, "):
        gym.make(ID, time_limit=10)
    with pytest.raises(ValueError, match="unknown render_mode 'bogus'; valid: rgb_array"):
        gym.make(ID, render_mode="bogus")
    # gymnasium's HumanRendering (a pygame window) breaks MuJoCo's offscreen context: refused before anything is built
    with pytest.raises(ValueError, match="render_mode='human' is not supported by Memory Maze"):
        gym.make(ID, render_mode="human")
    frames = gym.make(ID, render_mode="rgb_array_list")
    frames.reset()  # (unseeded: half the time of a seeded reset, which rebuilds the task)
    frames.step(1)
    assert [f.shape for f in frames.render()] == [(64, 64, 3)] * 2
    frames.close()
    env = gym.make(ID, render_mode="rgb_array")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    obs, _ = env.reset()
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(env.render(), obs["image"])
    obs, *_ = env.step(np.int64(1))
    np.testing.assert_array_equal(env.render(), obs["image"])
    for bad, error in ((1.5, TypeError), ("1", TypeError), (True, TypeError), (-1, ValueError)):
        with pytest.raises(error, match=re.escape(f"seed={bad!r} is not allowed")):
            env.reset(seed=bad)
    for bad in (np.array([1, 2]), np.array([[1]]), 6, -1, 1.5, "1"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env.step(np.array(2))  # a 0-d integer array is one action
    env.close()


# --- OpenGL: chosen before MuJoCo is imported, a missing library named with its fix --------------------------------
def test_no_egl_and_no_osmesa_is_reported_with_the_packages_that_fix_it(monkeypatch):
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)  # restored afterwards, whatever select_mujoco_gl sets
    monkeypatch.setattr(mujoco_gl, "_egl_available", lambda: False)
    monkeypatch.setattr(mujoco_gl, "_osmesa_available", lambda: False)
    with pytest.raises(
        mujoco_gl.MissingSystemLibraryError,
        match=r"MIKASA/MemoryMaze9x9-v0 renders.*"
        r"apt-get install libosmesa6 \(or: apt-get install libegl1 libegl-mesa0\)",
    ):
        gym.make(ID)
    assert "MUJOCO_GL" not in os.environ
    # a MUJOCO_GL the user set is kept, whatever the probes say
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert mujoco_gl.select_mujoco_gl(ID) == "osmesa" and os.environ["MUJOCO_GL"] == "osmesa"


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY")}
    return subprocess.run(
        [sys.executable, "-c", code], env={**environ, **env}, capture_output=True, text=True, timeout=120
    )


def test_users_mujoco_gl_is_used_and_legacy_gym_is_not_imported():
    code = (
        "import sys, importlib.util, gymnasium as gym, membench_envs\n"
        "env = gym.make('MIKASA/MemoryMaze9x9-v0'); obs, _ = env.reset(seed=0); env.close()\n"
        "from dm_control import _render\n"
        "print(_render.BACKEND, obs['image'].std() > 0, 'gym' in sys.modules, importlib.util.find_spec('gym'))\n"
    )
    done = _run(code, MUJOCO_GL="osmesa")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["osmesa", "True", "False", "None"]


def test_a_backend_that_cannot_render_is_one_error_naming_the_fix():
    # glfw needs a display: without one, MuJoCo fails when the first picture is drawn (at reset)
    code = "import gymnasium as gym, membench_envs\ngym.make('MIKASA/MemoryMaze9x9-v0').reset(seed=0)\n"
    done = _run(code, MUJOCO_GL="glfw")
    assert done.returncode != 0
    assert (
        "MujocoRenderError: MIKASA/MemoryMaze9x9-v0 renders its first-person camera with MuJoCo through "
        "MUJOCO_GL=glfw, which failed" in done.stderr
    )
    assert "apt-get install libegl1 libegl-mesa0" in done.stderr


# --- stable-baselines3 --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_sb3_make_vec_env_and_ppo_learn():
    """``make_vec_env`` + ``PPO("MultiInputPolicy")``: the 64x64 image goes through NatureCNN (~20 s)."""
    pytest.importorskip("stable_baselines3")
    from tests.envs.test_sb3_compat import _learn

    _learn(ID)
