"""Every MIKASA-Robo ID: make/reset/step in `full` and `partial`, documented keys and shapes, space checks, seeding."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import membench_envs
from tests.envs.robo.conftest import REMEMBER_IDS, SIZES


def _state_dim(env_id: str) -> int:
    n, k = SIZES[env_id]
    return 25 + 3 + 3 * n + 3 + 1 + k  # joints, goal_pos, object_pos, phase one-hot, time, oracle


def _check_step_types(obs, reward, terminated, truncated, info, space, k):
    assert space.contains(obs)
    assert isinstance(reward, float) and np.isfinite(reward)
    assert isinstance(terminated, bool) and isinstance(truncated, bool)
    assert isinstance(info["success"], bool) and isinstance(info["success_once"], bool)
    assert info["oracle"].shape == (k,) and info["oracle"].dtype == np.int64


@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_full_variant_keys_shapes_and_oracle_at_the_end_of_the_state(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full")
    n, k = SIZES[env_id]
    obs, info = env.reset(seed=0)
    assert set(obs) == {"state"}
    assert obs["state"].shape == (_state_dim(env_id),) and obs["state"].dtype == np.float32
    assert env.observation_space.contains(obs)
    assert env.action_space.shape == (8,)  # pd_joint_delta_pos: 7 arm joints + gripper
    np.testing.assert_array_equal(obs["state"][-k:], info["oracle"])
    for _ in range(3):
        out = env.step(env.action_space.sample())
        _check_step_types(*out, env.observation_space, k)
        np.testing.assert_array_equal(out[0]["state"][-k:], out[4]["oracle"])
    assert env.spec.id == env_id
    assert membench_envs.info(env_id).episode_length == env.unwrapped.max_episode_steps == 60


@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_partial_and_oracle_variants_keys_and_shapes(robo_env, env_id):
    n, k = SIZES[env_id]
    for variant, keys in (("partial", {"rgb", "joints"}), ("oracle", {"rgb", "joints", "oracle"})):
        env = robo_env(env_id, obs_variant=variant)
        obs, info = env.reset(seed=1)
        assert set(obs) == keys
        assert obs["rgb"].shape == (128, 128, 6) and obs["rgb"].dtype == np.uint8
        assert obs["joints"].shape == (25,) and obs["joints"].dtype == np.float32
        assert env.observation_space.contains(obs)
        out = env.step(env.action_space.sample())
        _check_step_types(*out, env.observation_space, k)
        if variant == "oracle":
            assert obs["oracle"].shape == (k,) and obs["oracle"].dtype == np.int64
            np.testing.assert_array_equal(out[0]["oracle"], out[4]["oracle"])
        # joints = qpos (9) | qvel (9) | tcp pose (7): the tcp position is the simulator's
        tcp = env.unwrapped.agent.tcp.pose.p[0].numpy()
        np.testing.assert_allclose(out[0]["joints"][18:21], tcp, atol=1e-6)


def test_rgb_only_variant_and_paper_obs_mode_names(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="rgb")
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"rgb"} and obs["rgb"].shape == (128, 128, 6)
    env = robo_env("MIKASA/RememberColor3-v0", obs_mode="state")
    assert env.unwrapped.obs_variant == "full"
    env = robo_env("MIKASA/RememberColor3-v0", obs_mode="rgb+joints+oracle")
    assert env.unwrapped.obs_variant == "oracle"


@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_gymnasium_env_checker_full(robo_env, env_id):
    check_env(robo_env(env_id, obs_variant="full"), skip_render_check=True)


def test_gymnasium_env_checker_partial(robo_env):
    check_env(robo_env("MIKASA/RememberShapeAndColor3x2-v0", obs_variant="partial"), skip_render_check=True)


def test_ee_control_mode_is_7d(robo_env):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", control_mode="pd_ee_delta_pose")
    env.reset(seed=0)
    assert env.action_space.shape == (7,)
    env.step(np.zeros(7, dtype=np.float32))


def _rollout(env, seed: int, steps: int = 15):
    obs, info = env.reset(seed=seed)
    actions = np.random.default_rng(seed).uniform(-1, 1, size=(steps, *env.action_space.shape)).astype(np.float32)
    traj = [(obs["state"].copy(), None, info["oracle"].copy())]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        traj.append((obs["state"].copy(), r, info["oracle"].copy()))
    return traj


@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_same_seed_same_episode_and_seeds_give_different_tasks(robo_env, env_id):
    # Identical episodes, up to PhysX's float noise: contact solving of resting compound shapes depends on the
    # simulator's history at the 1e-7 level (measured <= 4e-7), so states are compared with atol 1e-5.
    env = robo_env(env_id, obs_variant="full")
    a, b = _rollout(env, 7), _rollout(env, 7)
    for (sa, ra, qa), (sb, rb, qb) in zip(a, b, strict=True):
        np.testing.assert_allclose(sa, sb, rtol=0, atol=1e-5)
        assert ra == pytest.approx(rb, abs=1e-5) if ra is not None else rb is None
        np.testing.assert_array_equal(qa, qb)
    oracles, layouts = set(), set()
    for seed in range(12):
        _, info = env.reset(seed=seed)
        oracles.add(tuple(info["oracle"]))
        layouts.add(tuple(np.round(env.unwrapped._sched_pose[-1, 0, :, :2].numpy().ravel(), 4)))
    assert len(oracles) > 1 and len(layouts) == 12


def test_unseeded_resets_continue_the_seeded_sequence(robo_env):
    env = robo_env("MIKASA/RememberColor9-v0", obs_variant="full")
    env.reset(seed=3)
    first = [tuple(env.reset()[1]["oracle"]) for _ in range(6)]
    env.reset(seed=3)
    second = [tuple(env.reset()[1]["oracle"]) for _ in range(6)]
    assert first == second and len(set(first)) > 1


def test_catalogue_task_info():
    from membench_envs.robo import task_info

    for env_id in REMEMBER_IDS:
        info = task_info(env_id)
        assert info["episode_timeout"] == 60
        assert info["memory_types"] == ("object",)
        assert info["phases"] == (("cue", 0), ("delay", 5), ("choice", 10))
        assert env_id in gym.registry
    assert task_info("MIKASA/RememberColor9-v0")["oracle_keys"] == ("true_color_indices",)
    assert task_info("MIKASA/RememberShapeAndColor3x2-v0")["oracle_keys"] == ("true_shapes_info", "true_colors_info")
    assert task_info("MIKASA/RememberShapeAndColor3x2-v0")["parameters"]["n_shapes"] == 3
    with pytest.raises(ValueError, match="not a MIKASA-Robo task"):
        task_info("MIKASA/TMazePassive-v0")


def test_custom_timing_kwargs_set_phases_and_episode_length():
    env = gym.make("MIKASA/RememberColor3-v0", obs_variant="full", time_offset=50, delta_time=900)
    assert env.unwrapped.phase_starts == (0, 50, 950)
    assert env.unwrapped.max_episode_steps == 1000  # the paper's long variant (Code 5): cue + delay + 50
    env.close()
    env = gym.make("MIKASA/RememberColor3-v0", obs_variant="full", episode_steps=7, goal_thresh=0.03)
    assert env.unwrapped.max_episode_steps == 7 and env.unwrapped.goal_thresh == 0.03
    env.reset(seed=0)
    flags = [env.step(np.zeros(8, np.float32))[3] for _ in range(7)]
    assert flags == [False] * 6 + [True]
    env.close()
