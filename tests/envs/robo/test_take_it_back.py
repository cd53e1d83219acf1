"""MIKASA/TakeItBack-v0.

The catalogue row and Ξ (the cube's start, seen on observation 0, recalled up to T = 180: [2, 180]), spaces of the full
and partial variants, the float oracle (``xyz_initial``), seeding, what is where at which step (the cube at its start
at t = 0, the red goal region until the observation on which the cube first reaches it, the violet one from that very
observation on, the start region in no camera image), both success rules on constructed states (including the
overlapping-regions shortcut of the public rule), the rewards, and (slow) a scripted policy on the privileged state
against idle and random actions.

At most two ManiSkill environments are open at a time (:func:`envs`). The scripted policy acts in
``pd_ee_delta_pose`` and reads the cube's pose, the goal and the oracle from the simulator.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mani_skill")

import torch  # noqa: E402
from membench_envs.catalogue import robo as table  # noqa: E402
from membench_envs.memory import EventRecall, correlation_horizons  # noqa: E402
from membench_envs.robo.experts import CarryPolicy  # noqa: E402

import membench_envs  # noqa: E402,F401  (registers the catalogue IDs)
from tests.envs.robo._policies import run_episode, state_rollout  # noqa: E402

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

ENV_ID = "MIKASA/TakeItBack-v0"
STATE_DIM = 40
ZERO = np.zeros(8, dtype=np.float32)




# --------------------------------------------------------------------------------------------------------------
# catalogue, Ξ, task class
# --------------------------------------------------------------------------------------------------------------
def test_catalogue_row():
    spec = membench_envs.info(ENV_ID)
    assert spec.episode_length == 180 and spec.memory_types == ("spatial",) and spec.extra == "robo"
    assert spec.oracle_keys == ("xyz_initial",) and "prompt" not in spec.variants
    assert table.PHASES[ENV_ID] == (("action", 0),)
    assert table.PARAMETERS[ENV_ID] == {"goal_radius": 0.08, "cube_halfsize": 0.02}
    assert "strict_success=True" in spec.notes and "within goal_radius (0.08 m) of its start" in spec.notes
    assert "0.2% of episodes" in spec.notes


def test_xi_from_the_phase_table():
    """The cube's start is certainly shown on observation 0 only (t_e = 0, Δt = 1; its region is never rendered);
    the return may begin on any later step (the goal is a state, not a step), so every action from observation 1 on
    may recall it (t_r = t + 1 = 2 .. 180): ξ = t_r − 0 − 1 + 1 over [2, 180]."""
    spec = membench_envs.info(ENV_ID)
    T = spec.episode_length
    pairs = [EventRecall(0, 1, t + 1) for t in range(1, T)]
    assert correlation_horizons(pairs) == spec.xi == (2, 180)
    assert spec.xi_note.startswith("the cube's start position") and spec.xi_note.endswith("=2 to 180-0-1+1=180")
    assert table.take_it_back_timing(300).xi() == (2, 300)


# --------------------------------------------------------------------------------------------------------------
# spaces, variants, seeding
# --------------------------------------------------------------------------------------------------------------
def test_full_variant_make_reset_step(envs):
    env = envs(ENV_ID, obs_variant="full")
    base = env.unwrapped
    assert env.action_space.shape == (8,) and env.observation_space["state"].shape == (STATE_DIM,)
    rows = set()
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        assert obs["state"].shape == (STATE_DIM,) and obs["state"].dtype == np.float32 and obs in env.observation_space
        x0, y0, z0 = info["oracle"]
        assert info["oracle"].dtype == np.float32 and z0 == pytest.approx(0.001)
        assert -0.05 <= x0 <= 0.05
        row = round((y0 - 0.025) / 0.1)
        assert row in (-1, 0, 1) and 0.0 <= y0 - 0.1 * row <= 0.05 + 1e-6
        rows.add(row)
        np.testing.assert_array_equal(obs["state"][-3:], info["oracle"])  # the oracle ends the state
        cube = base.cube.pose.p[0].numpy()
        np.testing.assert_allclose(cube, [x0, y0, 0.02], atol=1e-5)  # the cube stands on its start
        goal = base.goal_position[0].numpy()
        assert 0.2 <= goal[0] <= 0.25 and -0.025 <= goal[1] <= 0.025
        assert info["elapsed_steps"] == 0 and info["phase"] == 0 and not info["goal_reached"] and not info["success"]
    assert rows == {-1, 0, 1}
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    assert obs in env.observation_space and info["elapsed_steps"] == 1


def test_partial_and_oracle_variants(envs):
    env = envs(ENV_ID)  # partial
    obs, info = env.reset(seed=1)
    assert set(obs) == {"rgb", "joints"} and obs in env.observation_space
    assert obs["rgb"].shape == (128, 128, 6) and obs["joints"].shape == (25,)
    assert info["oracle"].shape == (3,) and info["oracle"].dtype == np.float32
    obs, reward, terminated, truncated, info = env.step(ZERO)
    assert obs in env.observation_space and not terminated and not truncated
    env = envs(ENV_ID, obs_variant="oracle")
    space = env.observation_space["oracle"]
    assert space.dtype == np.float32 and space.shape == (3,)
    np.testing.assert_allclose(space.low, [-0.05, -0.1, 0.001], rtol=1e-6)
    np.testing.assert_allclose(space.high, [0.05, 0.15, 0.001], rtol=1e-6)
    obs, info = env.reset(seed=2)
    np.testing.assert_array_equal(obs["oracle"], info["oracle"])
    assert obs in env.observation_space
    with pytest.raises(ValueError, match="no static prompt"):
        gym.make(ENV_ID, obs_variant="prompt")


def test_gymnasium_env_checker(envs):
    from gymnasium.utils.env_checker import check_env

    check_env(envs(ENV_ID, obs_variant="full"), skip_render_check=True)


def test_same_seed_same_trajectory_and_unseeded_resets(envs):
    env = envs(ENV_ID, obs_variant="full")
    actions = np.random.default_rng(0).uniform(-1, 1, (15, 8)).astype(np.float32)

    first, again, other = (state_rollout(env, seed, actions)[0] for seed in (21, 21, 22))
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_allclose(first, again, atol=1e-4)
    assert not np.array_equal(first[0][-3:], other[0][-3:])

    def unseeded_after(seed, torch_seed):  # every draw from ManiSkill's episode RNG, none from torch's global one
        env.reset(seed=seed)
        torch.manual_seed(torch_seed)
        return env.reset()[0]["state"]

    np.testing.assert_array_equal(unseeded_after(3, 0), unseeded_after(3, 99))


def test_bad_parameters_are_clear_errors():
    from membench_envs.robo.take_it_back import TakeItBackEnv

    with pytest.raises(ValueError, match="goal_radius"):
        TakeItBackEnv(goal_radius=0.0)
    with pytest.raises(ValueError, match="cube_halfsize"):
        TakeItBackEnv(cube_halfsize=-0.02)


# --------------------------------------------------------------------------------------------------------------
# what is where at which step; success on constructed states
# --------------------------------------------------------------------------------------------------------------
def _place_cube(base, xy):
    from mani_skill.utils.structs.pose import Pose

    base.cube.set_pose(Pose.create_from_pq(p=torch.tensor([[xy[0], xy[1], 0.02]], dtype=torch.float32)))
    base.cube.set_linear_velocity(torch.zeros((1, 3)))
    base.cube.set_angular_velocity(torch.zeros((1, 3)))


def _discs(base):
    """(red disc position, violet disc position, start disc position), each (3,)."""
    return (base.goal_region.pose.p[0].numpy(), base.reached_region.pose.p[0].numpy(),
            base.start_region.pose.p[0].numpy())


def test_goal_turns_violet_on_the_observation_where_the_cube_first_reaches_it(envs):
    """t = 0..3: the red disc at the goal, the violet one parked; the cube put into the goal before step 4: on
    observation 4 goal_reached latches, the red disc is parked and the violet one lies at the goal; the cube taken
    out again (t = 7): it stays violet. The start disc lies at the start all along."""
    env = envs(ENV_ID, obs_variant="full", terminate_on_success=False)
    base = env.unwrapped
    _, info = env.reset(seed=4)
    goal = base.goal_position[0].numpy().copy()
    start = info["oracle"]
    log = []
    for t in range(1, 11):
        if t == 4:
            _place_cube(base, goal[:2] + [0.03, 0.0])
        if t == 7:
            _place_cube(base, goal[:2] + [-0.12, 0.1])  # out of the goal, not at the start
        _, _, _, _, info = env.step(ZERO)
        red, violet, start_disc = _discs(base)
        log.append((t, info["goal_reached"], info["is_cube_in_goal"]))
        np.testing.assert_allclose(start_disc[:2], start[:2], atol=1e-6)
        if t < 4:
            assert not info["goal_reached"] and not info["is_cube_in_goal"], log
            np.testing.assert_allclose(red, goal, atol=1e-6)
            assert violet[2] > 999
        else:
            assert info["goal_reached"], log
            np.testing.assert_allclose(violet, goal, atol=1e-6)
            assert red[2] > 999
        assert info["is_cube_in_goal"] == (4 <= t < 7), log
        assert not info["success"]


def _color_at(frame, row, col, ref) -> float:
    return float(np.abs(frame[row - 1 : row + 2, col - 1 : col + 2].astype(np.int32) - np.asarray(ref)).sum(-1).min())


def _project(base, p: np.ndarray) -> tuple[int, int]:
    params = base._sensors["base_camera"].get_params()
    ext = params["extrinsic_cv"][0].cpu().numpy()
    k = params["intrinsic_cv"][0].cpu().numpy()
    u, v, w = k @ (ext @ np.append(p, 1.0))
    return int(round(v / w)), int(round(u / w))


def test_pixels_red_goal_then_violet_and_no_start_region_in_the_cameras(envs):
    """In the base camera: the goal's outer ring is red, then violet once reached; the cube is green at its start.
    The start region (blue-white) is in no camera image: the images with it at the start and with it moved far away
    are identical, while the human render camera shows it."""
    env = envs(ENV_ID, obs_variant="partial", render_mode="rgb_array", terminate_on_success=False)
    base = env.unwrapped
    obs, info = env.reset(seed=0)
    goal = base.goal_position[0].numpy()
    ring = _project(base, goal + [0.0, 0.9 * 0.08, 0.0])  # the outermost ring, at 0.9 r
    cube = _project(base, base.cube.pose.p[0].numpy() + [0.0, 0.0, 0.02])  # the cube's top face
    image = obs["rgb"][..., :3]
    assert _color_at(image, *ring, (194, 19, 22)) < 150, image[ring]
    assert _color_at(image, *cube, (0, 255, 0)) < 200, image[cube]
    # the start region: the same sensor images without it; the human camera sees it
    from mani_skill.utils.structs.pose import Pose

    frame_with = env.render()
    start_pose = base.start_region.pose.raw_pose.clone()
    base.start_region.set_pose(Pose.create_from_pq(p=torch.tensor([[-2.0, 0.0, 1000.0]])))
    without = base.get_obs()["rgb"][0].numpy()
    frame_without = env.render()
    base.start_region.set_pose(Pose.create(start_pose))
    with_it = base.get_obs()["rgb"][0].numpy()
    np.testing.assert_array_equal(with_it, without)
    assert np.abs(frame_with.astype(np.int32) - frame_without.astype(np.int32)).sum(-1).astype(bool).sum() > 200
    # the goal reached: violet ring
    _place_cube(base, goal[:2])
    obs, *_ = env.step(ZERO)
    assert _color_at(obs["rgb"][..., :3], *ring, (147, 0, 211)) < 150, obs["rgb"][ring]


def test_default_success_is_reached_then_in_the_start_region(envs):
    """Default (public code): goal_reached and the cube within 0.08 m of its start on the current step."""
    env = envs(ENV_ID, obs_variant="full", terminate_on_success=False)
    base = env.unwrapped
    _, info = env.reset(seed=5)
    start, goal = info["oracle"][:2], base.goal_position[0].numpy()[:2]
    _place_cube(base, start + [0.03, 0.0])  # near the start, goal not reached
    _, _, _, _, info = env.step(ZERO)
    assert info["is_cube_returned"] and not info["success"]
    _place_cube(base, goal)
    _, _, _, _, info = env.step(ZERO)
    assert info["goal_reached"] and not info["success"]
    for dx, ok in ((0.07, True), (-0.05, True), (0.09, False), (0.0, True)):
        _place_cube(base, start + [dx, 0.0])
        _, reward, _, _, info = env.step(ZERO)
        assert info["success"] == ok and info["cube_to_start_dist"] == pytest.approx(abs(dx), abs=2e-3), (dx, info)


@pytest.mark.parametrize("strict", [False, True])
def test_overlapping_regions_and_the_strict_sequence(envs, strict):
    """The goal moved to 0.12 m from the start (the regions overlap): the cube pushed into the overlap succeeds at
    once under the default rule; strict (K.9: the goal first, then the return) needs a later step with the cube out
    of the goal region and back in the start region."""
    env = envs(ENV_ID, obs_variant="full", strict_success=strict, terminate_on_success=False)
    base = env.unwrapped
    _, info = env.reset(seed=6)
    start = info["oracle"][:2]
    base._goal[0, :2] = torch.tensor(start + [0.12, 0.0])
    _place_cube(base, start + [0.06, 0.0])  # 0.06 from both centres
    _, _, _, _, info = env.step(ZERO)
    assert info["is_cube_in_goal"] and info["is_cube_returned"] and info["goal_reached"]
    assert info["success"] == (not strict)
    _, _, _, _, info = env.step(ZERO)  # still in the overlap, one step later
    assert info["success"] == (not strict)
    _place_cube(base, start - [0.02, 0.0])  # 0.14 from the goal centre, 0.02 from the start
    _, _, _, _, info = env.step(ZERO)
    assert not info["is_cube_in_goal"] and info["success"]


# --------------------------------------------------------------------------------------------------------------
# rewards
# --------------------------------------------------------------------------------------------------------------
def test_dense_reward_is_bounded_and_maximal_exactly_on_success(envs):
    env = envs(ENV_ID, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense")
    seen = []

    def check(reward, info):
        assert math.isfinite(reward) and 0.0 <= reward <= 30.0 + 1e-6
        assert (reward == pytest.approx(30.0)) == bool(info["success"]), (reward, info["success"])
        seen.append(bool(info["success"]))

    assert run_episode(env, CarryPolicy(env), seed=11, check=check)
    assert seen[-1] and not any(seen[:-1])


def test_reward_terms_switch_when_the_goal_is_reached(envs):
    """Before: the push-point term only (the TCP far away); after the goal: the pull-point term only."""
    env = envs(ENV_ID, obs_variant="full", reward_mode="dense", terminate_on_success=False)
    base = env.unwrapped
    env.reset(seed=12)
    cube = base.cube.pose.p[0].numpy()
    _, reward, _, _, info = env.step(ZERO)
    terms = {k: float(v[0]) for k, v in base._last_reward_terms.items()}
    tcp = base.agent.tcp.pose.p[0].numpy()
    push = np.linalg.norm(cube - [0.025, 0.0, 0.0] - tcp)
    assert terms["reach_push_point"] == pytest.approx(2 * (1 - math.tanh(5 * push)), rel=1e-4)
    assert terms["cube_to_goal"] == terms["reach_pull_point"] == terms["cube_to_start"] == 0.0
    assert reward == pytest.approx(sum(terms.values()))
    _place_cube(base, base.goal_position[0].numpy()[:2])
    _, reward, _, _, info = env.step(ZERO)
    terms = {k: float(v[0]) for k, v in base._last_reward_terms.items()}
    cube, tcp = base.cube.pose.p[0].numpy(), base.agent.tcp.pose.p[0].numpy()
    pull = np.linalg.norm(cube + [0.03, 0.0, 0.0] - tcp)
    assert info["goal_reached"] and terms["reach_push_point"] == terms["cube_to_goal"] == 0.0
    assert terms["reach_pull_point"] == pytest.approx(10 * (1 - math.tanh(5 * pull)), rel=1e-4)
    assert reward == pytest.approx(sum(terms.values()))


def test_normalized_and_sparse_rewards(envs):
    env = envs(ENV_ID, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="normalized_dense")
    rewards = []
    assert run_episode(env, CarryPolicy(env), seed=13, check=lambda r, info: rewards.append(r))
    assert all(0.0 <= r <= 1.0 for r in rewards) and rewards[-1] == pytest.approx(1.0)
    assert max(rewards[:-1]) <= 25 / 30 + 1e-6
    env = envs(ENV_ID, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="sparse")

    def sparse(reward, info):
        assert reward == float(info["success"])

    assert run_episode(env, CarryPolicy(env), seed=14, check=sparse)


def test_render_overlay_and_record_episode(envs, tmp_path):
    env = envs(ENV_ID, obs_variant="full", render_mode="rgb_array", render_overlay=True)
    _, info = env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8
    lines = env.unwrapped.overlay_lines(0)
    assert lines[0].startswith("step 0/180") and "action" in lines[0]
    assert f"start ({info['oracle'][0]:+.3f}, {info['oracle'][1]:+.3f}); to the goal" in lines[1]
    envs.clear()  # record_episode makes its own environment
    from membench_envs.robo import record_episode

    path = record_episode(ENV_ID, tmp_path / "take_it_back.mp4", max_steps=2, obs_variant="full")
    assert path.stat().st_size > 0


# --------------------------------------------------------------------------------------------------------------
# solvability (slow): scripted policy vs idle and random actions
# --------------------------------------------------------------------------------------------------------------
EPISODES = 30


@pytest.mark.slow
@pytest.mark.parametrize("strict", [False, True])
def test_scripted_policy_takes_it_back(envs, strict):
    env = envs(ENV_ID, obs_variant="full", control_mode="pd_ee_delta_pose", strict_success=strict)
    policy = CarryPolicy(env)
    wins = sum(run_episode(env, policy, 300 + s) for s in range(EPISODES))
    print(f"TakeItBack strict={strict}: scripted policy {wins}/{EPISODES}")
    assert wins >= 0.9 * EPISODES


@pytest.mark.slow
def test_idle_and_random_actions_never_succeed(envs):
    env = envs(ENV_ID, obs_variant="full")
    rng = np.random.default_rng(0)
    n = 30
    idle = sum(run_episode(env, lambda obs, info: ZERO, 500 + s) for s in range(n))
    random = sum(run_episode(env, lambda obs, info: rng.uniform(-1, 1, 8).astype(np.float32), 600 + s)
                 for s in range(n))
    print(f"TakeItBack: idle {idle}/{n}, random {random}/{n}")
    assert idle == 0 and random <= 0.1 * n
