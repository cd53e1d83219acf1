"""MIKASA/ShellGame{Touch,Push,Pick}-v0: spaces, seeding, step-exact phases, the yaw-leak fix, pixels, solvability.

Most checks run the ``full`` (state) variant, which needs no renderer; two RGB environments check the camera
observations and that the ball disappears from the pixels once the mugs cover it. The scripted policies act in
``pd_ee_delta_pose`` and read the mugs' positions from the simulator (privileged); the oracle one takes the cup from
``info["oracle"]``, the random one picks a cup uniformly, so they measure "solvable" and "chance".
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mani_skill")

from membench_envs.catalogue import robo as robo_catalogue  # noqa: E402
from membench_envs.catalogue import robo_shell_game  # noqa: E402
from membench_envs.robo.experts import ShellPolicy  # noqa: E402

import membench_envs  # noqa: E402,F401  (registers the catalogue IDs)
from tests.envs.robo._policies import state_rollout  # noqa: E402

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

MODES = ("Touch", "Push", "Pick")
STATE_DIM = {"Touch": 65, "Push": 68, "Pick": 69}
MAX_DENSE = {"Touch": 3.0, "Push": 4.0, "Pick": 75.0}
ZERO = np.zeros(8, dtype=np.float32)


def _register() -> None:
    """Register the IDs with gymnasium if the catalogue loader does not list robo_shell_game (yet)."""
    for spec in robo_shell_game.TASKS:
        if spec.id not in gym.registry:
            gym.register(id=spec.id, entry_point=spec.entry_point, vector_entry_point=spec.vector_entry_point,
                         kwargs=dict(spec.kwargs))


_register()


def _make(mode: str, **kwargs):
    return gym.make(f"MIKASA/ShellGame{mode}-v0", disable_env_checker=True, **kwargs)


@pytest.fixture(scope="module")
def full_envs():
    envs = {mode: _make(mode, obs_variant="full", reward_mode="normalized_dense") for mode in MODES}
    yield envs
    for env in envs.values():
        env.close()


@pytest.fixture(scope="module")
def ee_envs():
    """Dense-reward envs in end-effector control, for the scripted policies."""
    envs = {mode: _make(mode, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense")
            for mode in MODES}
    yield envs
    for env in envs.values():
        env.close()


@pytest.fixture(scope="module")
def oracle_rgb_env():
    env = _make("Touch", obs_variant="oracle")
    yield env
    env.close()


# --------------------------------------------------------------------------------------------------------------
# running a scripted expert (membench_envs.robo.experts)
# --------------------------------------------------------------------------------------------------------------
def _episode(env, policy, seed: int, max_steps: int | None = None, check_reward=None) -> tuple[bool, dict]:
    obs, info = env.reset(seed=seed)
    policy.reset()
    for _ in range(max_steps or 10**6):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        if check_reward is not None:
            check_reward(reward, info)
        if terminated or truncated:
            break
    return bool(info["success_once"]), info


# --------------------------------------------------------------------------------------------------------------
# catalogue, spaces, variants, seeding
# --------------------------------------------------------------------------------------------------------------
def test_catalogue_entries():
    ids = [s.id for s in robo_shell_game.TASKS]
    assert ids == [f"MIKASA/ShellGame{m}-v0" for m in MODES]
    for spec in robo_shell_game.TASKS:
        assert spec.episode_length == 90 and spec.oracle_keys == ("cup_with_ball_number",)
        assert spec.memory_types == ("object",) and spec.extra == "robo"
        assert robo_catalogue.PHASES[spec.id] == (("observation", 0), ("occlusion", 5), ("action", 6))
        params = robo_catalogue.PARAMETERS[spec.id]
        assert params["time_offset"] == 5 and params["goal_thresh"] == 0.08 and params["min_dist"] == 0.2
        assert params["ball_radius"] == 0.02


def test_task_info_of_the_shell_game():
    from membench_envs.robo import task_info

    from membench_envs import catalogue

    assert {f"MIKASA/ShellGame{m}-v0" for m in MODES} <= set(catalogue.ids(catalogue.all_tasks()))
    info = task_info("MIKASA/ShellGamePick-v0")
    assert info["episode_timeout"] == 90 and info["oracle_keys"] == ("cup_with_ball_number",)
    assert info["phases"] == (("observation", 0), ("occlusion", 5), ("action", 6))
    assert info["parameters"]["goal_offset"] == [0.0, 0.0, 0.125]


@pytest.mark.parametrize("mode", MODES)
def test_full_variant_spaces_and_step(full_envs, mode):
    env = full_envs[mode]
    assert env.action_space.shape == (8,)
    assert env.observation_space["state"].shape == (STATE_DIM[mode],)
    obs, info = env.reset(seed=3)
    assert set(obs) == {"state"} and obs["state"].dtype == np.float32 and obs["state"].shape == (STATE_DIM[mode],)
    assert obs in env.observation_space
    assert info["oracle"].dtype == np.int64 and info["oracle"].shape == (1,) and 0 <= info["oracle"][0] <= 2
    assert obs["state"][-1] == info["oracle"][0]  # the oracle is the last entry of the state
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    assert obs in env.observation_space and info["phase"] == 0 and info["elapsed_steps"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_gymnasium_env_checker_full_variant(full_envs, mode):
    from gymnasium.utils.env_checker import check_env

    check_env(full_envs[mode], skip_render_check=True)  # includes: info values never alias between calls


def test_partial_variant_spaces_and_step():
    env = _make("Touch")  # partial is the default variant
    try:
        obs, info = env.reset(seed=0)
        assert set(obs) == {"rgb", "joints"}
        assert obs["rgb"].shape == (128, 128, 6) and obs["rgb"].dtype == np.uint8
        assert obs["joints"].shape == (25,) and obs["joints"].dtype == np.float32
        assert obs in env.observation_space and info["oracle"].shape == (1,)
        obs, reward, terminated, truncated, info = env.step(ZERO)
        assert obs in env.observation_space and reward == 0.0 and not terminated and not truncated
    finally:
        env.close()


def test_same_seed_same_episode_and_seeds_vary_the_cup(full_envs):
    env = full_envs["Push"]
    actions = np.random.default_rng(0).uniform(-1, 1, (12, 8)).astype(np.float32)

    def rollout(seed):
        states, info = state_rollout(env, seed, actions)
        return states, int(info["oracle"][0])

    first, cup = rollout(11)
    again, cup_again = rollout(11)
    assert cup == cup_again
    np.testing.assert_array_equal(first[:6], again[:6])  # layout, robot and ball: bit-identical until the mugs land
    # PhysX keeps contact caches across resets of one scene: resting mugs may differ by ~1e-6 m between runs
    np.testing.assert_allclose(first, again, atol=1e-4)
    other, _ = rollout(12)
    assert not np.array_equal(first[0], other[0])
    cups = {int(env.reset(seed=s)[1]["oracle"][0]) for s in range(12)}
    assert cups == {0, 1, 2}


def test_bad_parameters_are_clear_errors():
    from membench_envs.robo.shell_game import ShellGamePushEnv, ShellGameTouchEnv

    with pytest.raises(ValueError, match="does not fit under a mug"):
        ShellGameTouchEnv(ball_radius=0.03)
    with pytest.raises(ValueError, match="overlap"):
        ShellGameTouchEnv(min_dist=0.08)
    with pytest.raises(ValueError, match="time_offset"):
        ShellGameTouchEnv(time_offset=0)
    with pytest.raises(ValueError, match="goal_offset"):
        ShellGamePushEnv(goal_offset=(0.1, 0.0))
    with pytest.raises(ValueError, match="'partial', 'oracle', 'full'"):
        _make("Touch", obs_variant="nope")


# --------------------------------------------------------------------------------------------------------------
# phases, from the simulator state
# --------------------------------------------------------------------------------------------------------------
def _check_phases(env, seed: int, time_offset: int):
    base = env.unwrapped
    g = base.mug_geometry
    r = base.ball_radius
    obs, info = env.reset(seed=seed)
    cup = int(info["oracle"][0])
    phases = []
    for t in range(time_offset + 4):
        if t > 0:
            obs, _, _, _, info = env.step(ZERO)
        assert info["elapsed_steps"] == t
        phases.append(int(info["phase"]))
        pos = base.memory_object_positions[0].cpu().numpy()  # mugs 0..2, then the ball
        mugs, ball = pos[:3], pos[3]
        visible = base.object_visible()[0].cpu().numpy()
        assert abs(ball[2] - r) < 2e-3, (t, ball)  # the ball lies on the table all episode long
        if t < time_offset:  # the ball is in the open, no mug anywhere near the table
            assert visible.tolist() == [False, False, False, True]
            assert np.all(mugs[:, 2] > 100.0), (t, mugs)
        else:  # three mugs stand on the table, the ball is inside the one of its cup
            assert visible.all()
            np.testing.assert_allclose(mugs[:, 2], g.rest_height, atol=2e-3)
            np.testing.assert_allclose(np.diff(mugs[:, 1]), base.min_dist, atol=2e-3)
            np.testing.assert_allclose(mugs[:, 0], mugs[0, 0], atol=2e-3)
            horizontal = np.linalg.norm(mugs[:, :2] - ball[:2], axis=1)
            assert np.argmin(horizontal) == cup
            assert horizontal[cup] + r < g.inner_radius  # covered: inside the wall ...
            assert ball[2] + r < mugs[cup, 2] + g.height / 2 - g.top  # ... and under the closed end
        if t == time_offset - 1:
            cue_xy = ball[:2].copy()
        if t >= time_offset:
            np.testing.assert_allclose(ball[:2], cue_xy, atol=2e-3)  # the ball did not move
    assert phases == [0] * time_offset + [1] + [2] * 3


@pytest.mark.parametrize("mode", MODES)
def test_phases_step_exact(full_envs, mode):
    for seed in (0, 1):
        _check_phases(full_envs[mode], seed, 5)


def test_time_offset_is_a_parameter_and_class_constant():
    from membench_envs.robo import make
    from membench_envs.robo.shell_game import ShellGameTouchEnv

    env = _make("Touch", obs_variant="full", time_offset=3)
    try:
        assert env.unwrapped.phase_starts == (0, 3, 4)
        _check_phases(env, 4, 3)
    finally:
        env.close()

    class ShellGameTouchDebug(ShellGameTouchEnv):  # App. M, Code 7
        TIME_OFFSET = 7
        GOAL_THRESH = 0.05
        MIN_DIST = 0.25
        MAX_EPISODE_STEPS = 200

    env = make(ShellGameTouchDebug, obs_variant="full")
    try:
        base = env.unwrapped
        assert base.phase_starts == (0, 7, 8) and base.max_episode_steps == 200
        assert base.goal_thresh == 0.05 and base.min_dist == 0.25
        _check_phases(env, 5, 7)
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["Touch", "Pick"])
def test_mug_yaw_does_not_depend_on_the_cup(full_envs, mode):
    """Upstream ShellGamePick turns every mug by a target-dependent quaternion; here every mug, every episode,
    has the same orientation, so the mugs' appearance carries nothing about the ball's cup."""
    env = full_envs[mode]
    base = env.unwrapped
    expected = np.array([math.cos(base.mug_yaw / 2), 0.0, 0.0, math.sin(base.mug_yaw / 2)])
    cups, quats = [], []
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        for _ in range(base.time_offset):
            obs, _, _, _, info = env.step(ZERO)
        raw = base._memory_view.pose.raw_pose.reshape(4, 1, 7)[:3, 0].cpu().numpy()
        cups.append(int(info["oracle"][0]))
        quats.append(raw[:, 3:])
    assert set(cups) == {0, 1, 2}
    quats = np.stack(quats)  # (episodes, mugs, 4)
    sign = np.sign(quats[..., :1] + 1e-12)
    np.testing.assert_allclose(quats * sign, np.broadcast_to(expected, quats.shape), atol=1e-4)
    by_cup = {c: quats[[i for i, k in enumerate(cups) if k == c]] for c in (0, 1, 2)}
    for c in (1, 2):  # the same orientation whichever cup hides the ball
        np.testing.assert_allclose(by_cup[c].mean(axis=(0, 1)), by_cup[0].mean(axis=(0, 1)), atol=1e-5)


def test_mug_yaw_parameter(full_envs):
    env = _make("Touch", obs_variant="full", mug_yaw=1.0)
    try:
        env.reset(seed=0)
        for _ in range(5):
            env.step(ZERO)
        raw = env.unwrapped._memory_view.pose.raw_pose.reshape(4, 1, 7)[:3, 0].cpu().numpy()
        np.testing.assert_allclose(np.abs(raw[:, 3:]), [[math.cos(0.5), 0, 0, math.sin(0.5)]] * 3, atol=1e-4)
    finally:
        env.close()


# --------------------------------------------------------------------------------------------------------------
# pixels
# --------------------------------------------------------------------------------------------------------------
def _red_pixels(rgb: np.ndarray) -> tuple[int, int]:
    """Ball-red pixels in the base camera and in the wrist camera of a (128, 128, 6) observation."""
    x = rgb.astype(np.int32)
    counts = []
    for cam in (x[..., :3], x[..., 3:]):
        counts.append(int(((cam[..., 0] > 150) & (cam[..., 1] < 60) & (cam[..., 2] < 60)).sum()))
    return counts[0], counts[1]


def test_ball_is_seen_then_hidden_in_the_cameras(oracle_rgb_env):
    env = oracle_rgb_env
    obs, info = env.reset(seed=3)
    assert set(obs) == {"rgb", "joints", "oracle"} and obs["oracle"].shape == (1,)
    np.testing.assert_array_equal(obs["oracle"], info["oracle"])
    base_red, wrist_red = _red_pixels(obs["rgb"])
    assert base_red >= 5 and wrist_red >= 5, (base_red, wrist_red)  # t=0: the ball is in both images
    for t in range(1, 8):
        obs, _, _, _, info = env.step(ZERO)
        np.testing.assert_array_equal(obs["oracle"], info["oracle"])
        if t >= 5:  # covered by its mug: no ball-red pixel anywhere
            assert _red_pixels(obs["rgb"]) == (0, 0), t
        else:
            assert min(_red_pixels(obs["rgb"])) >= 5, t


def test_observation_after_occlusion_does_not_depend_on_the_cup(oracle_rgb_env):
    """With the layout and the robot's start pinned (center_range = 0, no joint noise), episodes that differ only in
    the ball's cup give different images while the ball is visible and bit-identical RGB + joints once it is covered:
    nothing in the partial observation (mug pose, shading, shadows) tells where the ball is."""
    env = oracle_rgb_env
    base = env.unwrapped
    saved = base.center_range, base.robot_init_qpos_noise
    base.center_range, base.robot_init_qpos_noise = 0.0, 0.0
    try:
        episodes = {}
        for seed in range(20):
            obs, info = env.reset(seed=seed)
            cup = int(info["oracle"][0])
            if cup in episodes:
                continue
            seq = [(obs["rgb"], obs["joints"])]
            for _ in range(6):
                obs, *_ = env.step(ZERO)
                seq.append((obs["rgb"], obs["joints"]))
            episodes[cup] = seq
            if len(episodes) == 3:
                break
    finally:
        base.center_range, base.robot_init_qpos_noise = saved
    assert sorted(episodes) == [0, 1, 2]
    for cup in (1, 2):
        assert not np.array_equal(episodes[cup][0][0], episodes[0][0][0])  # t=0: the ball shows where it is
        for t in (5, 6):
            np.testing.assert_array_equal(episodes[cup][t][0], episodes[0][t][0])
            np.testing.assert_array_equal(episodes[cup][t][1], episodes[0][t][1])


# --------------------------------------------------------------------------------------------------------------
# solvability, chance, rewards
# --------------------------------------------------------------------------------------------------------------
def _reward_checker(mode: str):
    top = MAX_DENSE[mode]

    def check(reward, info):
        assert math.isfinite(reward) and 0.0 <= reward <= top + 1e-6, reward
        if info["success"]:
            assert reward == pytest.approx(top)
        else:
            assert reward < top - 0.5
        if info["elapsed_steps"] < 5:
            assert reward == 0.0

    return check


@pytest.mark.parametrize(("mode", "episodes", "needed"), [("Touch", 10, 9), ("Push", 6, 5), ("Pick", 6, 5)])
def test_oracle_policy_solves_the_task(ee_envs, mode, episodes, needed):
    env = ee_envs[mode]
    policy = ShellPolicy(env, "oracle")
    wins = sum(_episode(env, policy, 100 + s, check_reward=_reward_checker(mode))[0] for s in range(episodes))
    assert wins >= needed, f"{mode}: oracle policy solved {wins}/{episodes}"


@pytest.mark.parametrize(("mode", "episodes", "steps"), [("Touch", 30, 40), ("Push", 6, 50), ("Pick", 6, 55)])
def test_random_cup_succeeds_only_on_the_right_cup(ee_envs, mode, episodes, steps):
    """Acting on a random mug succeeds exactly when it is the ball's mug: chance (1/3) without memory."""
    env = ee_envs[mode]
    policy = ShellPolicy(env, "random", seed=7)
    right = wins = 0
    for s in range(episodes):
        won, info = _episode(env, policy, 200 + s, max_steps=steps)
        hit = policy.target == int(info["oracle"][0])
        assert won == hit, (mode, s, policy.target, info["oracle"])
        right += hit
        wins += won
    if mode == "Touch":
        assert 4 <= wins <= 17, f"random cup: {wins}/{episodes} (chance = 10)"


def test_sparse_reward_is_success():
    env = _make("Touch", obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="sparse")
    try:
        policy = ShellPolicy(env, "oracle")
        seen = []

        def check(reward, info):
            assert reward == float(info["success"])
            seen.append(info["success"])

        won, _ = _episode(env, policy, 1, check_reward=check)
        assert won and seen[-1] and not any(seen[:5])
    finally:
        env.close()


@pytest.mark.parametrize("mode", MODES)
def test_normalized_dense_is_bounded(full_envs, mode):
    env = full_envs[mode]
    env.reset(seed=9)
    rng = np.random.default_rng(0)
    for t in range(1, 16):
        _, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, 8).astype(np.float32))
        assert math.isfinite(reward) and 0.0 <= reward <= 1.0
        if t < 5:
            assert reward == 0.0
    assert env.unwrapped.reward_mode == "normalized_dense"
