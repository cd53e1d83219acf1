"""Rewards (sparse = success, dense/normalized_dense finite and bounded) and clear errors for bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from membench_envs.robo.entry import NoGPUError, has_gpu
from membench_envs.robo.experts import ReachPolicy

import membench_envs


def _episode(env, seed: int):
    policy = ReachPolicy(env, "oracle")
    obs, info = env.reset(seed=seed)
    out = []
    while True:
        obs, r, term, trunc, info = env.step(policy(obs, info))
        out.append((r, info["success"], term))
        if term or trunc:
            return out


@pytest.mark.parametrize("env_id", ["MIKASA/RememberColor5-v0", "MIKASA/RememberShapeAndColor3x3-v0"])
def test_sparse_equals_success_and_dense_is_bounded(robo_env, env_id):
    kw = dict(obs_variant="full", control_mode="pd_ee_delta_pose", terminate_on_success=False)
    runs = {mode: _episode(robo_env(env_id, reward_mode=mode, **kw), seed=4) for mode in
            ("sparse", "dense", "normalized_dense")}
    sparse, dense, norm = runs["sparse"], runs["dense"], runs["normalized_dense"]
    assert len(sparse) == 60  # terminate_on_success=False: the paper baselines' fixed-length episodes
    assert any(s for _, s, _ in sparse) and not all(s for _, s, _ in sparse)
    for r, s, term in sparse:
        assert r == float(s) and term is False
    for (rd, sd, _), (rn, sn, _), (_, ss, _) in zip(dense, norm, sparse, strict=True):
        assert sd == sn == ss  # same seed and actions: same episode in every reward mode
        assert np.isfinite(rd) and 0.0 <= rd <= 3.0
        assert rd == 3.0 if sd else rd <= 2.0 + 1e-6  # success overwrites with the max; otherwise terms sum to <= 2
        assert rn == pytest.approx(rd / 3.0, abs=1e-6) and 0.0 <= rn <= 1.0


def test_reward_mode_defaults_to_upstreams_normalized_dense(robo_env):
    """Upstream MIKASA-Robo keeps ManiSkill's reward-mode list, whose first entry (normalized_dense) ManiSkill takes
    when none is given; ours lists sparse first, so the default must be set, once, in the catalogue's Param."""
    from membench_envs.catalogue.robo import COMMON_PARAMS, PRESETS

    assert {p.name: p.default for p in COMMON_PARAMS}["reward_mode"] == "normalized_dense"
    for preset in PRESETS:  # what `membench-envs info` prints for every ID
        params = {p.name: p.default for p in membench_envs.info(preset.id).params}
        assert params["reward_mode"] == "normalized_dense", preset.id
    env = robo_env("MIKASA/RememberColor3-v0")  # no kwargs at all
    assert env.unwrapped.reward_mode == "normalized_dense"
    env.reset(seed=0)
    _, reward, _, _, _ = env.step(np.zeros(8, np.float32))
    assert 0.0 < reward < 1.0  # the static term / 3 (sparse would pay 0 here)
    assert gym.make("MIKASA/RememberColor3-v0", obs_variant="full", reward_mode=None).unwrapped.reward_mode == (
        "normalized_dense")


def test_dense_reward_rises_as_the_gripper_approaches_the_target(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", control_mode="pd_ee_delta_pose",
                   reward_mode="dense", terminate_on_success=False)
    rewards = [r for r, _, _ in _episode(env, seed=2)]
    assert max(rewards[:9]) <= 0.5 + 1e-6  # t = 1..9: before the choice phase only the static term (<= 0.5) is paid
    assert rewards[-1] == 3.0


def test_terminates_on_success_by_default(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", control_mode="pd_ee_delta_pose")
    steps = _episode(env, seed=0)
    assert steps[-1][2] is True and steps[-1][1] is True and len(steps) < 60


def test_unknown_variant_obs_mode_and_prompt_are_clear_errors():
    with pytest.raises(ValueError, match="obs_variant='privileged' is not allowed.*'partial', 'oracle', 'full'"):
        gym.make("MIKASA/RememberColor3-v0", obs_variant="privileged")
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("MIKASA/RememberColor3-v0", obs_mode="depth")
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("MIKASA/RememberColor3-v0", obs_mode="state", obs_variant="partial")
    with pytest.raises(ValueError, match="no static prompt"):
        gym.make("MIKASA/RememberColor3-v0", obs_variant="prompt")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"control_mode": "pd_joint_vel"}, "control_mode"),
        ({"reward_mode": "shaped"}, "reward_mode"),
        ({"colors": 10}, "colors"),
        ({"delta_time": -1}, "delta_time"),
        ({"goal_thresh": 0.0}, "goal_thresh"),
    ],
)
def test_bad_parameters_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("MIKASA/RememberColor3-v0", obs_variant="full", **kwargs)


def test_bad_actions_are_clear_errors(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full")
    env.reset(seed=0)
    for bad in (np.zeros(7, np.float32), np.zeros((1, 8), np.float32), np.full(8, 1e6, np.float32),
                np.full(8, np.nan, np.float32)):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    clipped = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", clip_actions=True)
    clipped.reset(seed=0)
    clipped.step(np.full(8, 1e6, np.float32))


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU: num_envs > 1 is valid here")
def test_many_envs_without_gpu_points_to_the_vector_helper():
    with pytest.raises(NoGPUError, match=r"make_vec\('MIKASA/RememberColor3-v0', num_envs=4\)"):
        gym.make("MIKASA/RememberColor3-v0", num_envs=4)


def test_robo_ids_are_in_the_catalogue_with_their_suite():
    ids = membench_envs.suite("MIKASA-Robo")
    assert len(ids) >= 9 and "MIKASA/RememberColor9-v0" in ids
