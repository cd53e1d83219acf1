"""``render_mode="rgb_array"``: fixed-shape uint8 frames on every ID; on one ID per family, frames that follow the
state, the batched native env's frames and gymnasium's render wrappers (RenderCollection, RecordVideo); clear errors
for unknown modes.

MIKASA-Robo (ManiSkill's own renderer) is covered in tests/envs/robo/ and by the SB3 test there, Memory Maze (MuJoCo)
in tests/envs/test_memory_maze.py.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from membench_envs.catalogue.popgym import POPGYM_CLASSES
from membench_envs.envs.core import draw

import membench_envs
from tests.envs._helpers import extra_installed, family_representatives, ids_with_extra_installed

STEPS = 12
#: IDs whose game shows one still picture at first: STORI's Gopher holds its opening screen for about 240 emulator
#: frames (60 agent steps) before the gopher appears, in raw ALE as here.
SLOW_START = {"STORI/Gopher": 70}


#: IDs whose frames cost about 0.15 s each here (MuJoCo's software renderer): a few steps already move the robot.
SLOW_FRAMES = ("POBAX/Hopper", "POBAX/Walker", "POBAX/Ant", "POBAX/HalfCheetah")


def _steps(env_id: str, default: int) -> int:
    if env_id.startswith(SLOW_FRAMES):
        return min(default, 3)
    return next((n for prefix, n in SLOW_START.items() if env_id.startswith(prefix)), default)


def _episode_frames(env: gym.Env, seed: int, steps: int = STEPS) -> list[np.ndarray]:
    """Frames of the reset and of ``steps`` steps with actions sampled from ``seed`` (resetting on episode ends)."""
    env.reset(seed=seed)
    env.action_space.seed(1234)  # the same actions for every seed: only the state differs
    frames = [env.render()]
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        frames.append(env.render())
        if terminated or truncated:
            env.reset()
            frames.append(env.render())
    return frames


def _make(env_id: str, **kwargs) -> gym.Env:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # popgym's "mazes are solvable without memory" notice
        return gym.make(env_id, render_mode="rgb_array", **kwargs)


FAMILIES = family_representatives()


@pytest.mark.parametrize("env_id", ids_with_extra_installed())
def test_rgb_frames_have_a_fixed_shape_and_change_during_an_episode(env_id):
    env = _make(env_id)
    assert "rgb_array" in env.unwrapped.metadata["render_modes"]
    assert env.unwrapped.metadata["render_fps"] > 0
    frames = _episode_frames(env, seed=0, steps=_steps(env_id, STEPS))
    shape = frames[0].shape
    assert len(shape) == 3 and shape[2] == 3 and shape[0] >= 16 and shape[1] >= 16
    for frame in frames:
        assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == shape
    assert len({f.tobytes() for f in frames}) > 1, "the picture never changes while the episode runs"
    env.close()


@pytest.mark.parametrize("env_id", FAMILIES)
def test_rgb_frames_follow_the_state(env_id):
    frames = _episode_frames(_make(env_id), seed=0, steps=_steps(env_id, STEPS))
    # The picture is a function of the state: the same seed and actions draw the same frames...
    again = _episode_frames(_make(env_id), seed=0, steps=_steps(env_id, STEPS))
    assert all(np.array_equal(a, b) for a, b in zip(frames, again, strict=True))
    # ...and other episodes (other seeds, same actions) draw other frames at the same time steps.
    # (5 steps: STORI's Breakout shows the same picture until the ball is served, at step 4 of these actions.)
    n = _steps(env_id, 5)

    def differs(seed: int) -> bool:
        other = _episode_frames(_make(env_id), seed=seed, steps=n)
        return any(not np.array_equal(other[k], frames[k]) for k in range(n + 1))

    assert any(differs(s) for s in (1, 2, 3)), "frames ignore the state"  # (stops at the first that differs)


NATIVE = family_representatives(native_batched=True)
#: Every entry point, and every POPGym game (each has its own picture).
PICTURES = family_representatives(only=("family",))


def test_tmaze_picture_shows_the_agent_and_the_goal():
    def after(actions, seed=0):
        env = _make("MIKASA/TMazePassive-v0", corridor_length=4)
        env.reset(seed=seed)
        for a in actions:
            env.step(a)
        return env.render()

    stay, right = after([2]), after([0])  # same t (the time bar), agent at x = 0 (left into the wall) vs x = 1
    assert not np.array_equal(stay, right)
    env = _make("MIKASA/TMazePassive-v0", corridor_length=4)
    goals = {}
    for seed in range(10):  # the goal arm is drawn (bright at t = 0): up- and down-goal episodes look different
        env.reset(seed=seed)
        goals.setdefault(int(env.unwrapped.core.goal[0]), env.render())
    assert set(goals) == {-1, 1} and not np.array_equal(goals[1], goals[-1])
    end_ok, end_bad = None, None  # the border shows the outcome: the same final position, success vs failure
    for seed in range(10):
        env.reset(seed=seed)
        for _ in range(4):
            env.step(0)  # towards the junction (the authors' action order)
        _, reward, terminated, _, _ = env.step(1)  # turn up
        assert terminated
        if reward > 0:
            end_ok = env.render()
        else:
            end_bad = env.render()
    assert end_ok is not None and end_bad is not None and not np.array_equal(end_ok, end_bad)
    env.reset(seed=0)
    running = env.render()
    assert tuple(end_ok[0, 0]) == draw.GOOD and tuple(end_bad[0, 0]) == draw.BAD  # the outcome border
    assert tuple(running[0, 0]) == draw.BACKGROUND


def test_memory_length_and_cards_pictures_show_their_hidden_state():
    env = _make("MIKASA/MemoryLength-v0", num_bits=3)
    by_context = {}
    for seed in range(20):
        env.reset(seed=seed)
        by_context.setdefault(tuple(env.unwrapped.core.context[0]), env.render())
    assert len(by_context) > 1 and len({f.tobytes() for f in by_context.values()}) == len(by_context)
    cards = _make("MIKASA/MemoryCards-v0", num_pairs=3)
    by_deal = {}
    for seed in range(20):
        cards.reset(seed=seed)
        core = cards.unwrapped.core
        by_deal.setdefault((tuple(core.values[0]), int(core.current[0])), cards.render())
    assert len(by_deal) > 1 and len({f.tobytes() for f in by_deal.values()}) == len(by_deal)


@pytest.mark.parametrize("env_id", NATIVE)
def test_batched_native_env_renders_each_env_like_the_single_env(env_id):
    venv = gym.make_vec(env_id, num_envs=3, render_mode="rgb_array")
    assert venv.render_mode == "rgb_array" and "rgb_array" in venv.metadata["render_modes"]
    venv.reset(seed=5)
    frames = venv.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    for i, frame in enumerate(frames):
        single = _make(env_id)
        single.reset(seed=5 + i)
        np.testing.assert_array_equal(frame, single.render())
    venv.step(np.zeros(venv.action_space.shape, dtype=np.int64))  # Discrete or MultiDiscrete
    assert not np.array_equal(venv.render()[0], frames[0])
    text = gym.make_vec(env_id, num_envs=2, render_mode="ansi")
    text.reset(seed=0)
    assert all(isinstance(t, str) for t in text.render())
    assert gym.make_vec(env_id, num_envs=2).render() is None
    np.testing.assert_array_equal(venv.unwrapped.render_env(2), venv.render()[2])
    with pytest.raises(IndexError, match="environment index 3"):
        venv.unwrapped.render_env(3)


def test_the_representatives_cover_every_family():
    """Every entry point (but the slow backends', which have their own render and SB3 tests), every POPGym game,
    every STORI game and preset, both T-Maze rewards."""
    names = {p.values[0] for p in FAMILIES}
    entry_points = {membench_envs.info(n).entry_point for n in names}
    assert entry_points == {
        s.entry_point for s in membench_envs.all_tasks() if s.extra not in ("robo", "memory-maze", "craftax")
    }
    assert {"MIKASA/TMazePassive-v0", "MIKASA/TMazePassiveDense-v0", "MIKASA/MemoryLength-v0"} <= names
    assert sum(n.startswith("POPGym/") for n in names) == len(POPGYM_CLASSES)  # every POPGym game
    stori = [membench_envs.info(n).kwargs for n in names if n.startswith("STORI/")]
    assert {k["game"] for k in stori} == {"Breakout", "Boxing", "Gopher", "BankHeist"}
    assert {k.get("preset") for k in stori} == {"Type1", "Type2", "Type3", "Default", "5A", "5B", "5C", None}


@pytest.mark.parametrize("env_id", PICTURES)
def test_render_collection_gathers_an_episode(env_id):
    """``render_mode="rgb_array_list"``: gymnasium wraps the env in RenderCollection (needs no video library)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gym.make(env_id, render_mode="rgb_array_list")
    env.reset(seed=0)
    env.action_space.seed(0)
    steps, done = 0, False
    while steps < 5 and not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps, done = steps + 1, terminated or truncated
    frames = env.render()
    assert isinstance(frames, list) and len(frames) == steps + 1
    assert len({f.shape for f in frames}) == 1 and frames[0].dtype == np.uint8


@pytest.mark.parametrize("env_id", family_representatives(only=()))  # every entry point
def test_record_video_writes_a_file(env_id, tmp_path):
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo writes videos with moviepy (not installed)")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(_make(env_id), str(tmp_path), episode_trigger=lambda episode: True, disable_logger=True)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(_steps(env_id, 20)):  # an episode cut short: close() writes what was recorded
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            break
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0


@pytest.mark.parametrize(
    "env_id",
    [
        "MIKASA/TMazePassive-v0",
        pytest.param(
            "POPGym/RepeatFirstEasy-v0",
            marks=[] if extra_installed("popgym") else [pytest.mark.skip(reason="no [popgym]")],
        ),
    ],
)
def test_unknown_render_mode_is_one_clear_error(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium warns before the env raises
        with pytest.raises(ValueError, match=r"unknown render_mode 'bogus'; valid: rgb_array"):
            gym.make(env_id, render_mode="bogus")


def test_unknown_render_mode_of_a_robo_id_is_one_clear_error_before_maniskill_starts():
    with pytest.raises(ValueError, match=r"unknown render_mode 'bogus'; valid: rgb_array, sensors, all, human"):
        gym.make("MIKASA/RememberColor3-v0", render_mode="bogus")
