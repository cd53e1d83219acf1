"""POBAX's masked MuJoCo on Gymnasium v5 (membench_envs.envs.backends.masked_mujoco): each mask keeps exactly the
authors' indices of Gymnasium's observation, oracle = partial + what was removed, full = Gymnasium's observation, the
time limit, seeding, and the missing extra."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs._deps import MissingExtraError

pytest.importorskip("mujoco")

#: POBAX's mask_dims (pobax/envs/__init__.py), written out by hand: (robot, mask) -> kept indices, observation size.
KEEP = {
    ("Walker", "P"): ([0, 1, 2, 3, 4, 5, 6, 7], 17),
    ("Walker", "V"): ([8, 9, 10, 11, 12, 13, 14, 15, 16], 17),
    ("Hopper", "P"): ([0, 1, 2, 3, 4], 11),
    ("Hopper", "V"): ([5, 6, 7, 8, 9, 10], 11),
    ("Ant", "P"): (list(range(13)), 27),
    ("Ant", "V"): (list(range(13, 27)), 27),
    ("HalfCheetah", "P"): ([0, 1, 2, 3, 8, 9, 10, 11, 12], 17),
    ("HalfCheetah", "V"): ([4, 5, 6, 7, 13, 14, 15, 16], 17),
}
GYMNASIUM = {"Walker": "Walker2d-v5", "Hopper": "Hopper-v5", "Ant": "Ant-v5", "HalfCheetah": "HalfCheetah-v5"}


def _episode(env_id, variant, seed=3, steps=6):
    env = gym.make(env_id, obs_variant=variant)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out, oracles = [obs], [info["oracle"]]
    for _ in range(steps):
        obs, _, _, _, info = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
        out.append(obs)
        oracles.append(info["oracle"])
    return np.stack(out), np.stack(oracles)


@pytest.mark.parametrize(("robot", "mask"), list(KEEP))
def test_each_mask_keeps_exactly_the_authors_indices_and_the_oracle_appends_the_rest(robot, mask):
    keep, dim = KEEP[(robot, mask)]
    removed = [i for i in range(dim) if i not in keep]
    env_id = f"POBAX/{robot}-{mask}-v0"
    full, _ = _episode(env_id, "full")
    partial, oracle_info = _episode(env_id, "partial")
    oracle, _ = _episode(env_id, "oracle")
    assert full.shape[1] == dim
    np.testing.assert_array_equal(partial, full[:, keep])
    np.testing.assert_array_equal(oracle, np.concatenate([full[:, keep], full[:, removed]], axis=1))
    np.testing.assert_array_equal(oracle_info, full[:, removed])
    # full is Gymnasium's own observation (Ant without the contact forces), same seed, same actions
    kwargs = {"include_cfrc_ext_in_observation": False} if robot == "Ant" else {}
    ref = gym.make(GYMNASIUM[robot], **kwargs)
    np.testing.assert_array_equal(full[0], ref.reset(seed=3)[0].astype(np.float32))


def test_the_time_limit_truncates_and_termination_passes_through():
    env = gym.make("POBAX/HalfCheetah-V-v0", max_steps=4)  # HalfCheetah never terminates
    env.reset(seed=0)
    for t in range(1, 5):
        _, _, term, trunc, _ = env.step(np.zeros(6, dtype=np.float32))
        assert (term, trunc) == (False, t == 4)
    assert gym.make("POBAX/Walker-V-v0").unwrapped.T == 1000
    env = gym.make("POBAX/Hopper-P-v0")  # full torque on every joint: the hopper falls over within 1000 steps
    env.reset(seed=0)
    steps, term, trunc = 0, False, False
    while not (term or trunc):
        _, _, term, trunc, _ = env.step(np.ones(3, dtype=np.float32))
        steps += 1
    assert term and not trunc and steps < 1000


def test_seeding_and_check_env():
    a, _ = _episode("POBAX/Ant-V-v0", "partial", seed=11)
    b, _ = _episode("POBAX/Ant-V-v0", "partial", seed=11)
    c, _ = _episode("POBAX/Ant-V-v0", "partial", seed=12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    for variant in ("partial", "oracle", "full"):
        check_env(gym.make("POBAX/Walker-P-v0", obs_variant=variant).unwrapped, skip_render_check=True)


def test_the_missing_extra_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)  # import imageio fails, as without the extra
    with pytest.raises(MissingExtraError, match=r"POBAX/Walker-V-v0 needs .*pip install 'membench-envs\[mujoco\]'"):
        gym.make("POBAX/Walker-V-v0")
