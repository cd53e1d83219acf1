"""POBAX's visual continuous control on Gymnasium v5 (membench_envs.envs.backends.pixel_mujoco): the picture comes from
camera 0 (the models' 'track' camera, the one the authors' Madrona renderer uses), full = Gymnasium's state, oracle =
picture + state, seeding, the time limit, and the missing extra."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs._deps import MissingExtraError

from tests.envs._helpers import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("mujoco"), reason="extra [mujoco] not installed")

GYMNASIUM = {
    "Ant": ("Ant-v5", {"include_cfrc_ext_in_observation": False}, 27),
    "HalfCheetah": ("HalfCheetah-v5", {}, 17),
}


def _run(env_id, variant, seed=3, steps=5, **kwargs):
    env = gym.make(env_id, obs_variant=variant, **kwargs)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out, oracles = [obs], [info["oracle"]]
    for _ in range(steps):
        obs, _, _, _, info = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
        out.append(obs)
        oracles.append(info["oracle"])
    env.close()
    return out, oracles


@pytest.mark.parametrize("robot", list(GYMNASIUM))
def test_picture_state_and_oracle_of_the_same_steps(robot):
    env_id = f"POBAX/{robot}-Pixels-v0"
    gym_id, kwargs, dim = GYMNASIUM[robot]
    pictures, states = _run(env_id, "partial")
    full, _ = _run(env_id, "full")
    oracle, _ = _run(env_id, "oracle")
    assert pictures[0].shape == (32, 32, 3) and pictures[0].dtype == np.uint8
    assert len({p.tobytes() for p in pictures}) == len(pictures)  # the robot moves: every frame differs
    # full is Gymnasium's own state observation under the same seed and actions; info["oracle"] is it too
    ref = gym.make(gym_id, **kwargs)
    obs, _ = ref.reset(seed=3)
    rng = np.random.default_rng(0)
    expected = [obs.astype(np.float32)]
    for _ in range(5):
        expected.append(ref.step(rng.uniform(-1, 1, ref.action_space.shape).astype(np.float32))[0].astype(np.float32))
    for t in range(6):
        assert full[t].shape == (dim,)
        np.testing.assert_array_equal(full[t], expected[t])
        np.testing.assert_array_equal(states[t], expected[t])
        np.testing.assert_array_equal(oracle[t]["image"], pictures[t])
        np.testing.assert_array_equal(oracle[t]["oracle"], expected[t])


def test_the_picture_is_camera_0_the_track_camera_at_image_size():
    import mujoco

    env = gym.make("POBAX/HalfCheetah-Pixels-v0", image_size=24)
    obs, _ = env.reset(seed=0)
    inner = env.unwrapped
    assert obs.shape == (24, 24, 3)
    assert mujoco.mj_name2id(inner.inner.model, mujoco.mjtObj.mjOBJ_CAMERA, "track") == 0
    # drawing camera 0 again gives the observation
    np.testing.assert_array_equal(inner.picture(), obs)
    env.close()


def test_seeding_time_limit_and_check_env():
    a, _ = _run("POBAX/Ant-Pixels-v0", "partial", seed=11)
    b, _ = _run("POBAX/Ant-Pixels-v0", "partial", seed=11)
    c, _ = _run("POBAX/Ant-Pixels-v0", "partial", seed=12)
    np.testing.assert_array_equal(np.stack(a), np.stack(b))
    assert not np.array_equal(np.stack(a), np.stack(c))
    env = gym.make("POBAX/HalfCheetah-Pixels-v0", max_steps=3)  # HalfCheetah never terminates
    env.reset(seed=0)
    for t in range(1, 4):
        _, _, term, trunc, _ = env.step(np.zeros(6, dtype=np.float32))
        assert (term, trunc) == (False, t == 3)
    env.close()
    for variant in ("partial", "oracle", "full"):
        env = gym.make("POBAX/Ant-Pixels-v0", obs_variant=variant)
        check_env(env.unwrapped, skip_render_check=True)
        env.close()


def test_the_missing_extra_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)  # import imageio fails, as without the extra
    with pytest.raises(MissingExtraError, match=r"POBAX/Ant-Pixels-v0 needs .*pip install 'membench-envs\[mujoco\]'"):
        gym.make("POBAX/Ant-Pixels-v0")
