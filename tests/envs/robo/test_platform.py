"""The platform every family shares (``membench_envs.robo.base``, ``.entry``, ``.wrappers``): the observation
variants and their keys, the paper's observation names, the two controllers, seeding (whole trajectories; resets
without a seed), episode length and termination, the reward modes, and one clear error for bad input. Checked once,
or once per family where a family's own code feeds the rule (its scene in the images, its draws in the seeding).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from membench_envs.robo.entry import NoGPUError
from membench_envs.robo.experts import ReachPolicy
from membench_envs.robo.vector import has_gpu

from tests.envs.robo._helpers import ZERO, ZERO_EE, state_rollout

#: one ID per family module (the IDs of a family share its code)
FAMILY_IDS = [
    "MIKASA/RememberShapeAndColor3x2-v0",
    "MIKASA/ShellGameTouch-v0",
    "MIKASA/BunchOfColors3-v0",
    "MIKASA/InterceptGrabSlow-v0",
    "MIKASA/RotateLenientPosNeg-v0",
    "MIKASA/TakeItBack-v0",
]
#: the oracle's (size, dtype) at those IDs
ORACLE = {
    "MIKASA/RememberShapeAndColor3x2-v0": (2, np.int64),
    "MIKASA/ShellGameTouch-v0": (1, np.int64),
    "MIKASA/BunchOfColors3-v0": (3, np.int64),
    "MIKASA/InterceptGrabSlow-v0": (3, np.float32),
    "MIKASA/RotateLenientPosNeg-v0": (1, np.float32),
    "MIKASA/TakeItBack-v0": (3, np.float32),
}
#: one ID per family module whose episode draws feed the seeding checks
SEEDED_IDS = [
    "MIKASA/RememberColor9-v0",
    "MIKASA/ShellGamePush-v0",
    "MIKASA/ChainOfColors3-v0",
    "MIKASA/InterceptFast-v0",
    "MIKASA/RotateStrictPos-v0",
    "MIKASA/TakeItBack-v0",
]


# --------------------------------------------------------------------------------------------------------------
# observation variants
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", FAMILY_IDS)
def test_partial_variant_of_every_family(robo_env, env_id):
    """RGB (base ‖ wrist camera) + joints (qpos ‖ qvel ‖ tcp pose), no oracle; Rotate* adds its prompt."""
    env = robo_env(env_id)  # partial is the default
    k, dtype = ORACLE[env_id]
    keys = {"rgb", "joints", "prompt"} if "Rotate" in env_id else {"rgb", "joints"}
    assert set(env.observation_space) == keys
    obs, info = env.reset(seed=1)
    assert set(obs) == keys and obs in env.observation_space
    assert obs["rgb"].shape == (128, 128, 6) and obs["rgb"].dtype == np.uint8 and obs["rgb"].std() > 0
    assert obs["joints"].shape == (25,) and obs["joints"].dtype == np.float32
    assert info["oracle"].shape == (k,) and info["oracle"].dtype == dtype
    obs, _reward, terminated, truncated, info = env.step(ZERO)
    assert obs in env.observation_space and not terminated and not truncated
    tcp = env.unwrapped.agent.tcp.pose.p[0].numpy()  # joints = qpos (9) | qvel (9) | tcp pose (7)
    np.testing.assert_allclose(obs["joints"][18:21], tcp, atol=1e-6)


def test_oracle_and_rgb_variants_and_the_paper_obs_mode_names(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="oracle")
    obs, _info = env.reset(seed=1)
    assert set(obs) == {"rgb", "joints", "oracle"} and obs in env.observation_space
    assert obs["oracle"].shape == (1,) and obs["oracle"].dtype == np.int64
    out = env.step(env.action_space.sample())
    np.testing.assert_array_equal(out[0]["oracle"], out[4]["oracle"])
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="rgb")
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"rgb"} and obs["rgb"].shape == (128, 128, 6)
    assert robo_env("MIKASA/RememberColor3-v0", obs_mode="state").unwrapped.obs_variant == "full"
    assert robo_env("MIKASA/RememberColor3-v0", obs_mode="rgb+joints+oracle").unwrapped.obs_variant == "oracle"


def test_gymnasium_env_checker_on_images(robo_env):
    """With its close check (a second env, closed twice): the base's close, which test_every_id skips per ID. The
    checker only warns when the second close raises: here it fails."""
    check_env(robo_env("MIKASA/RememberShapeAndColor3x2-v0", obs_variant="partial"), skip_render_check=True)
    env = gym.make("MIKASA/RememberColor3-v0", obs_variant="full")
    env.close()
    env.close()


def test_ee_control_mode_is_7d(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", control_mode="pd_ee_delta_pose")
    env.reset(seed=0)
    assert env.action_space.shape == (7,)
    env.step(ZERO_EE)


# --------------------------------------------------------------------------------------------------------------
# seeding
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", SEEDED_IDS)
def test_same_seed_same_trajectory(robo_env, env_id):
    """The same seed gives the same episode, whatever torch's global RNG holds (every draw comes from ManiSkill's
    per-sub-scene episode RNG; upstream drew some from torch's global one); another seed gives another."""
    env = robo_env(env_id, obs_variant="full")
    actions = np.random.default_rng(0).uniform(-1, 1, (15, 8)).astype(np.float32)

    def rollout(seed, torch_seed):
        torch.manual_seed(torch_seed)
        states, info = state_rollout(env, seed, actions)
        return states, info["oracle"]

    first, oracle = rollout(21, 0)
    again, oracle_again = rollout(21, 99)
    np.testing.assert_array_equal(oracle, oracle_again)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_allclose(first, again, rtol=0, atol=1e-4)  # PhysX keeps contact caches across resets
    other, _ = rollout(22, 0)
    assert not np.array_equal(first[0], other[0])


@pytest.mark.parametrize("env_id", SEEDED_IDS)
def test_resets_without_a_seed_continue_the_seeded_chain(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full")

    def chain(torch_seed):
        env.reset(seed=3)
        torch.manual_seed(torch_seed)
        return [env.reset()[0]["state"] for _ in range(4)]

    first, second = chain(0), chain(99)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])


# --------------------------------------------------------------------------------------------------------------
# episode length, termination, rewards
# --------------------------------------------------------------------------------------------------------------
def test_custom_timing_kwargs_set_phases_and_episode_length():
    env = gym.make("MIKASA/RememberColor3-v0", obs_variant="full", time_offset=50, delta_time=900)
    assert env.unwrapped.phase_starts == (0, 50, 950)
    assert env.unwrapped.max_episode_steps == 1000  # the paper's long variant (Code 5): cue + delay + 50
    env.close()
    env = gym.make("MIKASA/RememberColor3-v0", obs_variant="full", episode_steps=7, goal_thresh=0.03)
    assert env.unwrapped.max_episode_steps == 7 and env.unwrapped.goal_thresh == 0.03
    env.reset(seed=0)
    flags = [env.step(ZERO)[3] for _ in range(7)]
    assert flags == [False] * 6 + [True]
    env.close()


def _reach_episode(env, seed: int):
    policy = ReachPolicy(env, "oracle")
    obs, info = env.reset(seed=seed)
    out = []
    while True:
        obs, r, term, trunc, info = env.step(policy(obs, info))
        out.append((r, info["success"], term))
        if term or trunc:
            return out


def test_reward_modes_sparse_is_success_normalized_is_dense_over_its_maximum(robo_env):
    """One seeded expert episode in each reward mode: the same episode; sparse = success; dense = the terms, the
    maximum (3) on success; normalized_dense = dense / 3. terminate_on_success=False runs all 60 steps."""
    kw = dict(obs_variant="full", control_mode="pd_ee_delta_pose", terminate_on_success=False)
    env_id = "MIKASA/RememberColor5-v0"
    runs = {
        mode: _reach_episode(robo_env(env_id, reward_mode=mode, **kw), seed=4)
        for mode in ("sparse", "dense", "normalized_dense")
    }
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
    env = robo_env("MIKASA/RememberColor3-v0")  # no kwargs at all
    assert env.unwrapped.reward_mode == "normalized_dense"
    env.reset(seed=0)
    _, reward, _, _, _ = env.step(ZERO)
    assert 0.0 < reward < 1.0  # the static term / 3 (sparse would pay 0 here)
    env = gym.make("MIKASA/RememberColor3-v0", obs_variant="full", reward_mode=None)
    assert env.unwrapped.reward_mode == "normalized_dense"
    env.close()


def test_terminates_on_success_by_default(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", control_mode="pd_ee_delta_pose")
    steps = _reach_episode(env, seed=0)
    assert steps[-1][2] is True and steps[-1][1] is True and len(steps) < 60


# --------------------------------------------------------------------------------------------------------------
# clear errors
# --------------------------------------------------------------------------------------------------------------
def test_unknown_variant_obs_mode_and_prompt_are_clear_errors():
    with pytest.raises(ValueError, match=r"obs_variant='privileged' is not allowed.*'partial', 'oracle', 'full'"):
        gym.make("MIKASA/RememberColor3-v0", obs_variant="privileged")
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("MIKASA/RememberColor3-v0", obs_mode="depth")
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make("MIKASA/RememberColor3-v0", obs_mode="state", obs_variant="partial")
    with pytest.raises(ValueError, match="no static prompt"):
        gym.make("MIKASA/RememberColor3-v0", obs_variant="prompt")
    with pytest.raises(ValueError, match="no static prompt"):
        gym.make("MIKASA/TakeItBack-v0", obs_variant="prompt")
    with pytest.raises(ValueError, match="'partial', 'oracle', 'full'"):
        gym.make("MIKASA/ShellGameTouch-v0", obs_variant="nope")


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
    for bad in (
        np.zeros(7, np.float32),
        np.zeros((1, 8), np.float32),
        np.full(8, 1e6, np.float32),
        np.full(8, np.nan, np.float32),
    ):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    clipped = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", clip_actions=True)
    clipped.reset(seed=0)
    clipped.step(np.full(8, 1e6, np.float32))


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU: num_envs > 1 is valid here")
def test_many_envs_without_gpu_points_to_the_vector_helper():
    with pytest.raises(NoGPUError, match=r"make_vec\('MIKASA/RememberColor3-v0', num_envs=4\)"):
        gym.make("MIKASA/RememberColor3-v0", num_envs=4)
