"""TakeItBack (``membench_envs.robo.take_it_back``): the episode draw (the cube's start, the float oracle
``xyz_initial``, the goal), the oracle variant's bounds, clear errors, what is where at which step (the cube at its
start at t = 0, the red goal region until the observation on which the cube first reaches it, the violet one from that
very observation on, the start region in no camera image), both success rules on constructed states (including the
overlapping-regions shortcut of the public rule), and the rewards. The scripted policy acts in ``pd_ee_delta_pose``
and reads the cube's pose, the goal and the oracle from the simulator; its rates are in test_solvability (slow).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from membench_envs.robo.experts import CarryPolicy

from tests.envs.robo._helpers import ZERO, pixel, put, run_episode

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

ENV_ID = "MIKASA/TakeItBack-v0"


# --------------------------------------------------------------------------------------------------------------
# the episode draw, the oracle variant
# --------------------------------------------------------------------------------------------------------------
def test_the_start_and_goal_draw(robo_env):
    """The cube starts at x0 = U(-0.05, 0.05), y0 = 0.1 c + U(0, 0.05) with c in {-1, 0, 1} (every row is drawn), the
    oracle is (x0, y0, 0.001) and the cube stands there; the goal at x = U(0.2, 0.25), y = U(-0.025, 0.025)."""
    env = robo_env(ENV_ID, obs_variant="full")
    base = env.unwrapped
    rows = set()
    for seed in range(12):
        obs, info = env.reset(seed=seed)
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


def test_oracle_variant_bounds(robo_env):
    env = robo_env(ENV_ID, obs_variant="oracle")
    space = env.observation_space["oracle"]
    assert space.dtype == np.float32 and space.shape == (3,)
    np.testing.assert_allclose(space.low, [-0.05, -0.1, 0.001], rtol=1e-6)
    np.testing.assert_allclose(space.high, [0.05, 0.15, 0.001], rtol=1e-6)
    obs, info = env.reset(seed=2)
    np.testing.assert_array_equal(obs["oracle"], info["oracle"])
    assert obs in env.observation_space


# --------------------------------------------------------------------------------------------------------------
# what is where at which step; success on constructed states
# --------------------------------------------------------------------------------------------------------------
def _place_cube(base, xy):
    put(base, base.cube, (xy[0], xy[1], 0.02))


def _discs(base):
    """(red disc position, violet disc position, start disc position), each (3,)."""
    return (
        base.goal_region.pose.p[0].numpy(),
        base.reached_region.pose.p[0].numpy(),
        base.start_region.pose.p[0].numpy(),
    )


def test_goal_turns_violet_on_the_observation_where_the_cube_first_reaches_it(robo_env):
    """t = 0..3: the red disc at the goal, the violet one parked; the cube put into the goal before step 4: on
    observation 4 goal_reached latches, the red disc is parked and the violet one lies at the goal; the cube taken
    out again (t = 7): it stays violet. The start disc lies at the start all along."""
    env = robo_env(ENV_ID, obs_variant="full", terminate_on_success=False)
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


def test_pixels_red_goal_then_violet_and_no_start_region_in_the_cameras(robo_env):
    """In the base camera: the goal's outer ring is red, then violet once reached; the cube is green at its start.
    The start region (blue-white) is in no camera image: the images with it at the start and with it moved far away
    are identical, while the human render camera shows it."""
    env = robo_env(ENV_ID, obs_variant="partial", render_mode="rgb_array", terminate_on_success=False)
    base = env.unwrapped
    obs, _info = env.reset(seed=0)
    goal = base.goal_position[0].numpy()
    ring = pixel(base, goal + [0.0, 0.9 * 0.08, 0.0])  # the outermost ring, at 0.9 r
    cube = pixel(base, base.cube.pose.p[0].numpy() + [0.0, 0.0, 0.02])  # the cube's top face
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


def test_default_success_is_reached_then_in_the_start_region(robo_env):
    """Default (public code): goal_reached and the cube within 0.08 m of its start on the current step."""
    env = robo_env(ENV_ID, obs_variant="full", terminate_on_success=False)
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
        _, _reward, _, _, info = env.step(ZERO)
        assert info["success"] == ok and info["cube_to_start_dist"] == pytest.approx(abs(dx), abs=2e-3), (dx, info)


@pytest.mark.parametrize("strict", [False, True])
def test_overlapping_regions_and_the_strict_sequence(robo_env, strict):
    """The goal moved to 0.12 m from the start (the regions overlap): the cube pushed into the overlap succeeds at
    once under the default rule; strict (K.9: the goal first, then the return) needs a later step with the cube out
    of the goal region and back in the start region."""
    env = robo_env(ENV_ID, obs_variant="full", strict_success=strict, terminate_on_success=False)
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
def test_dense_reward_is_bounded_and_maximal_exactly_on_success(robo_env):
    """On the scripted policy's episode: within [0, 30], 30 exactly on success, at most 25 (what the terms pay)
    without; normalized_dense and sparse follow from it (test_platform)."""
    env = robo_env(ENV_ID, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense")
    seen = []

    def check(reward, info):
        assert math.isfinite(reward) and 0.0 <= reward <= 30.0 + 1e-6
        assert (reward == pytest.approx(30.0)) == bool(info["success"]), (reward, info["success"])
        seen.append((bool(info["success"]), reward))

    assert run_episode(env, CarryPolicy(env), seed=11, check=check)
    assert seen[-1][0] and not any(ok for ok, _ in seen[:-1])
    assert max(r for _, r in seen[:-1]) <= 25.0 + 1e-6


def test_reward_terms_switch_when_the_goal_is_reached(robo_env):
    """Before: the push-point term only (the TCP far away); after the goal: the pull-point term only."""
    env = robo_env(ENV_ID, obs_variant="full", reward_mode="dense", terminate_on_success=False)
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
