"""MIKASA/Intercept{Slow,Medium,Fast}-v0 and MIKASA/InterceptGrab{Slow,Medium,Fast}-v0.

The catalogue rows and Ξ (= 2: the ball's velocity needs the previous frame), spaces of the full and partial variants
for every ID, seeding, the continuous oracle (the ball's initial velocity, float32) and the ball really rolling with
it, both success rules of both families on constructed states (ball in the goal or not; ball grasped, still and lifted
or not), no success at t = 0, the rewards, the ball in the camera image, and (slow) a scripted policy on the
privileged state against idle and random actions.

At most two ManiSkill environments are open at a time (:func:`envs`). The scripted policy acts in
``pd_ee_delta_pose`` and reads the ball's position and velocity from the simulator.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mani_skill")

from membench_envs.catalogue import robo as table  # noqa: E402
from membench_envs.memory import EventRecall, correlation_horizons  # noqa: E402
from membench_envs.robo.experts import STEP, TrackPolicy  # noqa: E402

import membench_envs  # noqa: E402,F401  (registers the catalogue IDs)
from tests.envs.robo._policies import run_episode, state_rollout  # noqa: E402

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

SPEEDS = {"Slow": (0.25, 0.5), "Medium": (0.5, 0.75), "Fast": (0.75, 1.0)}
INTERCEPT_IDS = [f"MIKASA/Intercept{m}-v0" for m in SPEEDS]
GRAB_IDS = [f"MIKASA/InterceptGrab{m}-v0" for m in SPEEDS]
IDS = INTERCEPT_IDS + GRAB_IDS
STATE_DIM = {"Intercept": 52, "InterceptGrab": 50}
MAX_DENSE = {"Intercept": 30.0, "InterceptGrab": 300.0}
ZERO = np.zeros(8, dtype=np.float32)
ZERO_EE = np.zeros(7, dtype=np.float32)


def _family(env_id: str) -> str:
    return "InterceptGrab" if "InterceptGrab" in env_id else "Intercept"




# --------------------------------------------------------------------------------------------------------------
# catalogue, Ξ, task classes
# --------------------------------------------------------------------------------------------------------------
def test_catalogue_rows():
    for env_id in IDS:
        spec = membench_envs.info(env_id)
        mode = env_id.split("Intercept")[-1].removeprefix("Grab").removesuffix("-v0")
        assert spec.episode_length == 90 and spec.memory_types == ("spatial",) and spec.extra == "robo"
        assert spec.oracle_keys == ("initial_velocity",)
        assert table.PHASES[env_id] == (("rolling", 0),)
        params = table.PARAMETERS[env_id]
        assert params["velocity_range"] == list(SPEEDS[mode]) and params["ball_radius"] == 0.02
        if _family(env_id) == "Intercept":
            assert params["goal_radius"] == 0.1
        else:
            assert "goal_radius" not in params
        assert "strict_success=True" in spec.notes


def test_xi_is_two_from_the_phase_table():
    """The ball is in view on every observation; its velocity needs the previous frame: for every action on
    observation t (t = 1 .. T-1; at t = 0 there is no previous frame) the event is observation t - 1 (Δt = 1) and the
    recall t_r = t + 1, so ξ = 2 for every pair (the memory paper's ξ = t_r − t_e − Δt + 1)."""
    for env_id in IDS:
        spec = membench_envs.info(env_id)
        phases, T = table.PHASES[env_id], spec.episode_length
        assert phases[0] == ("rolling", 0) and len(phases) == 1  # visible from t = 0 to T - 1, never hidden
        pairs = [EventRecall(t - 1, 1, t + 1) for t in range(1, T)]
        assert correlation_horizons(pairs) == spec.xi == (2, 2)
        assert spec.xi_note.endswith("min=2 max=2") and "t_e = t-1" in spec.xi_note
    timing = table.tracking_timing(200)
    assert timing.xi() == (2, 2) and timing.events()[-1] == (198, 1, 200)


# --------------------------------------------------------------------------------------------------------------
# spaces, variants, seeding, the oracle
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", IDS)
def test_full_variant_make_reset_step_and_velocity_ranges(envs, env_id):
    env = envs(env_id, obs_variant="full")
    d = STATE_DIM[_family(env_id)]
    lo, hi = table.PARAMETERS[env_id]["velocity_range"]
    assert env.action_space.shape == (8,) and env.observation_space["state"].shape == (d,)
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        assert obs["state"].shape == (d,) and obs["state"].dtype == np.float32 and obs in env.observation_space
        v = info["oracle"]
        assert v.dtype == np.float32 and v.shape == (3,)
        assert 0.0 <= v[0] <= 0.05 and lo <= v[1] <= hi and v[2] == 0.0, v
        np.testing.assert_array_equal(obs["state"][-3:], v)  # the oracle ends the state
        assert info["elapsed_steps"] == 0 and info["phase"] == 0 and not info["success"]
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    assert obs in env.observation_space and info["elapsed_steps"] == 1 and info["oracle"].dtype == np.float32


@pytest.mark.parametrize("env_id", IDS)
def test_partial_variant_make_reset_step(envs, env_id):
    env = envs(env_id)  # partial is the default
    obs, info = env.reset(seed=1)
    assert set(obs) == {"rgb", "joints"} and obs in env.observation_space
    assert obs["rgb"].shape == (128, 128, 6) and obs["rgb"].dtype == np.uint8
    assert obs["joints"].shape == (25,) and obs["joints"].dtype == np.float32
    assert info["oracle"].shape == (3,) and info["oracle"].dtype == np.float32
    obs, reward, terminated, truncated, info = env.step(ZERO)  # normalized_dense (default): the reaching term
    assert obs in env.observation_space and 0.0 < reward < 1.0 and not terminated and not truncated


def test_oracle_variant_carries_the_float_velocity(envs):
    env = envs("MIKASA/InterceptMedium-v0", obs_variant="oracle")
    space = env.observation_space["oracle"]
    assert space.dtype == np.float32 and space.shape == (3,)
    np.testing.assert_allclose(space.low, [0.0, 0.5, 0.0])
    np.testing.assert_allclose(space.high, [0.05, 0.75, 0.0])
    obs, info = env.reset(seed=4)
    assert obs["oracle"].dtype == np.float32 and obs in env.observation_space
    np.testing.assert_array_equal(obs["oracle"], info["oracle"])
    assert info["oracle"][1] > 0.5  # not truncated to an integer
    obs, *_ = env.step(ZERO)
    np.testing.assert_array_equal(obs["oracle"], info["oracle"])


@pytest.mark.parametrize("env_id", ["MIKASA/InterceptSlow-v0", "MIKASA/InterceptGrabFast-v0"])
def test_gymnasium_env_checker_and_rgb_variant(envs, env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(envs(env_id, obs_variant="full"), skip_render_check=True)  # includes: info values never alias
    env = envs(env_id, obs_variant="rgb")
    obs, info = env.reset(seed=0)
    assert set(obs) == {"rgb"} and obs["rgb"].shape == (128, 128, 6) and info["oracle"].dtype == np.float32


@pytest.mark.parametrize("env_id", ["MIKASA/InterceptFast-v0", "MIKASA/InterceptGrabSlow-v0"])
def test_same_seed_same_trajectory(envs, env_id):
    env = envs(env_id, obs_variant="full")
    actions = np.random.default_rng(0).uniform(-1, 1, (15, 8)).astype(np.float32)

    def rollout(seed):
        states, info = state_rollout(env, seed, actions)
        return states, info["oracle"]

    first, v = rollout(21)
    again, v_again = rollout(21)
    np.testing.assert_array_equal(v, v_again)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_allclose(first, again, atol=1e-4)  # PhysX keeps contact caches across resets of one scene
    other, v_other = rollout(22)
    assert not np.array_equal(v, v_other) and not np.array_equal(first[0], other[0])


@pytest.mark.parametrize("env_id", ["MIKASA/InterceptMedium-v0", "MIKASA/InterceptGrabFast-v0"])
def test_ball_rolls_with_the_oracle_velocity(envs, env_id):
    """At reset the ball has exactly the oracle's velocity; it then rolls in that direction at between 5/7 of it
    (sliding turns into rolling: a solid sphere keeps 5/7 of its speed) and all of it, and stays on the table."""
    env = envs(env_id, obs_variant="full")
    base = env.unwrapped
    for seed in (0, 1):
        _, info = env.reset(seed=seed)
        v = info["oracle"]
        np.testing.assert_allclose(base.ball.linear_velocity[0].numpy(), v, atol=1e-5)
        start = base.ball_position[0].numpy().copy()
        k = 10
        for _ in range(k):
            env.step(ZERO)
        moved = base.ball_position[0].numpy() - start
        speed = moved[1] / (k * STEP)
        assert 5 / 7 * v[1] - 0.03 <= speed <= v[1] + 1e-3, (speed, v)
        assert abs(moved[0]) <= 0.05 * k * STEP + 2e-3 and moved[0] >= -2e-3  # vx in [0, 0.05]
        assert abs(base.ball_position[0, 2].item() - 0.02) < 2e-3


def test_bad_parameters_are_clear_errors():
    from membench_envs.robo.intercept import InterceptEnv, InterceptGrabEnv

    with pytest.raises(ValueError, match="velocity_range"):
        InterceptEnv(velocity_range=(0.5, 0.2))
    with pytest.raises(ValueError, match="goal_radius"):
        InterceptEnv(goal_radius=0.0)
    with pytest.raises(ValueError, match="ball_radius"):
        InterceptGrabEnv(ball_radius=-0.01)
    with pytest.raises(ValueError, match="velocity_range"):
        gym.make("MIKASA/InterceptSlow-v0", velocity_range=(0.1,))


# --------------------------------------------------------------------------------------------------------------
# success rules on constructed states
# --------------------------------------------------------------------------------------------------------------
def _place_ball(base, p, v=(0.0, 0.0, 0.0)):
    import torch
    from mani_skill.utils.structs.pose import Pose

    base.ball.set_pose(Pose.create_from_pq(p=torch.tensor([p], dtype=torch.float32)))
    base.ball.set_linear_velocity(torch.tensor([v], dtype=torch.float32))
    base.ball.set_angular_velocity(torch.zeros((1, 3)))


@pytest.mark.parametrize("strict", [False, True])
def test_intercept_success_is_the_ball_in_the_goal(envs, strict):
    """Default (public code): the ball's centre within 0.1 m of the goal's centre in the table plane. strict (the
    paper's 'come to rest within the target area'): also slower than 0.05 m/s."""
    env = envs("MIKASA/InterceptSlow-v0", obs_variant="full", strict_success=strict, terminate_on_success=False)
    base = env.unwrapped
    cases = [  # (offset of the ball from the goal centre, velocity, success by default, success when strict)
        ((0.0, 0.0), (0.0, 0.0, 0.0), True, True),
        ((0.07, 0.0), (0.0, 0.0, 0.0), True, True),
        ((0.13, 0.0), (0.0, 0.0, 0.0), False, False),
        ((0.0, -0.15), (0.0, 0.0, 0.0), False, False),
        ((0.0, 0.0), (0.0, 0.3, 0.0), True, False),  # rolling through the goal
    ]
    for (dx, dy), v, default_ok, strict_ok in cases:
        env.reset(seed=5)
        goal = base.goal_position[0].numpy()
        _place_ball(base, (goal[0] + dx, goal[1] + dy, 0.02), v)
        _, reward, _, _, info = env.step(ZERO)
        d = np.linalg.norm(base.ball_position[0, :2].numpy() - goal[:2])
        assert info["success"] == (strict_ok if strict else default_ok), (dx, dy, v, d, info["ball_speed"])
        assert info["is_ball_in_goal"] == (d < 0.1)


@pytest.mark.parametrize("strict", [False, True])
def test_grab_success_is_a_grasp_held_still_and_strict_lifts(envs, strict):
    """Default (public code): is_grasping(ball) and a still arm; no lift. strict (Table 1: 'catch ... and lift it
    up'): also the ball's bottom at least 0.05 m above the table. Constructed: the open gripper low on the table, the
    ball put between its fingers, then close, hold still, lift, hold still."""
    env = envs("MIKASA/InterceptGrabMedium-v0", obs_variant="full", control_mode="pd_ee_delta_pose",
               strict_success=strict, terminate_on_success=False)
    base = env.unwrapped
    env.reset(seed=3)
    park = (0.25, -0.3, 0.02)
    aim = np.array([0.0, 0.2, 0.02])
    log = []
    for t in range(40):
        a = ZERO_EE.copy()
        tcp = base.agent.tcp.pose.p[0].numpy()
        if t < 14:  # open gripper down to the table; the ball out of the way
            a[6] = 1.0
            a[:3] = np.clip((aim - tcp) / 0.1 * 1.5, -1, 1)
            _place_ball(base, park)
        elif t == 14:  # the ball between the open fingers, at rest
            a[6] = 1.0
            _place_ball(base, tuple(tcp))
        elif t < 22:  # close and hold still
            a[6] = -1.0
        elif t < 30:  # lift 8 cm
            a[6] = -1.0
            a[:3] = np.clip((aim + [0, 0, 0.08] - tcp) / 0.1, -0.5, 0.5)
        else:  # hold still up there
            a[6] = -1.0
        _, reward, _, _, info = env.step(a)
        log.append((t, info["is_ball_grasped"], info["is_robot_static"], info["ball_lift"], info["success"], reward))
    rows = {t: row for t, *row in log}
    before = [rows[t] for t in range(14)]
    assert not any(r[0] for r in before) and not any(r[3] for r in before)  # nothing grasped, no success
    held_low = [rows[t] for t in range(18, 22)]
    assert all(r[0] for r in held_low), log  # grasped on the table
    assert any(r[1] for r in held_low), log  # and the arm came to rest
    assert all(r[3] == (r[0] and r[1] and not strict) for r in held_low), log
    lifting = [rows[t] for t in range(23, 28)]
    assert any(r[0] and not r[1] for r in lifting), log  # grasped while the arm moves ...
    assert not any(r[3] for r in lifting if not r[1]), log  # ... is no success
    held_high = [rows[t] for t in range(34, 40)]
    assert all(r[0] and r[2] >= 0.05 for r in held_high), log  # still grasped, lifted
    assert any(r[3] for r in held_high), log  # success with the ball lifted, in both rules
    assert all(r[3] == (r[0] and r[1]) for r in held_high), log


def test_no_success_at_reset(envs):
    """t = 0 never counts: a ball put into the goal before the first step is no success (Intercept), and a reset that
    follows a grasped episode reads no success although PhysX still reports the last episode's finger contacts."""
    env = envs("MIKASA/InterceptMedium-v0", obs_variant="full")
    base = env.unwrapped
    env.reset(seed=2)
    goal = base.goal_position[0].numpy()
    _place_ball(base, (goal[0], goal[1], 0.02))
    info = base.evaluate()
    assert bool(info["is_ball_in_goal"][0]) and not bool(info["success"][0])
    _, _, terminated, _, info = env.step(ZERO)
    assert info["success"] and terminated  # the same state one step later counts

    env = envs("MIKASA/InterceptGrabSlow-v0", obs_variant="full", control_mode="pd_ee_delta_pose")
    policy = TrackPolicy(env)
    assert run_episode(env, policy, seed=0)  # ends grasped (terminates on success)
    assert bool(env.unwrapped.evaluate()["success"][0])
    _, info = env.reset(seed=1)
    assert not info["success"] and not info["success_once"] and not info["is_ball_grasped"]


# --------------------------------------------------------------------------------------------------------------
# rewards
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["MIKASA/InterceptMedium-v0", "MIKASA/InterceptGrabMedium-v0"])
def test_dense_reward_is_bounded_and_maximal_exactly_on_success(envs, env_id):
    env = envs(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense")
    top = MAX_DENSE[_family(env_id)]
    seen = []

    def check(reward, info):
        assert math.isfinite(reward) and 0.0 <= reward <= top + 1e-6
        assert (reward == pytest.approx(top)) == bool(info["success"]), (reward, info["success"])
        seen.append(bool(info["success"]))

    assert run_episode(env, TrackPolicy(env), seed=11, check=check)
    assert seen[-1] and not any(seen[:-1])


def test_normalized_and_sparse_rewards(envs):
    env = envs("MIKASA/InterceptGrabFast-v0", obs_variant="full", control_mode="pd_ee_delta_pose",
               reward_mode="normalized_dense")
    rewards = []
    run_episode(env, TrackPolicy(env), seed=12, check=lambda r, info: rewards.append(r))
    assert all(0.0 <= r <= 1.0 for r in rewards) and rewards[-1] == pytest.approx(1.0)
    assert max(rewards[:-1]) < 0.95  # 285 / 300 is the most without success

    env = envs("MIKASA/InterceptMedium-v0", obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="sparse")

    def sparse(reward, info):
        assert reward == float(info["success"])

    assert run_episode(env, TrackPolicy(env), seed=13, check=sparse)


def test_intercept_reached_latches_and_switches_the_reward_term(envs):
    """'reached' latches once the TCP is within 0.04 m of the hit point behind the ball (the ball held at rest 0.2 m
    from the goal here); before, the reward is the reaching term, after, the ball-to-goal term, also once the TCP
    has left again."""
    env = envs("MIKASA/InterceptMedium-v0", obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense",
               terminate_on_success=False)
    base = env.unwrapped
    env.reset(seed=14)
    goal = base.goal_position[0].numpy()
    ball = (goal[0] - 0.2, goal[1], 0.02)
    hit = np.array([goal[0] - 0.27, goal[1], 0.02])
    reached, obs = [], None
    for t in range(45):
        _place_ball(base, ball)
        tcp = base.agent.tcp.pose.p[0].numpy()
        aim = hit if t < 30 else hit + [0.0, 0.0, 0.2]  # to the hit point, then away
        a = ZERO_EE.copy()
        a[6] = -1.0
        a[:3] = np.clip((aim - tcp) / 0.1 * 1.5, -1, 1)
        obs, reward, _, _, info = env.step(a)
        reached.append(bool(info["reached"]))
        terms = {k: float(v[0]) for k, v in base._last_reward_terms.items()}
        if reached[-1]:
            assert terms["reaching"] == 0.0 and terms["place"] == pytest.approx(5 * (1 - math.tanh(0.2)), abs=2e-3)
        else:
            assert terms["place"] == 0.0 and terms["reaching"] > 0.0
            assert info["tcp_to_hit_dist"] >= 0.04
        assert reward == pytest.approx(sum(terms.values()))
    first = reached.index(True)
    assert 0 < first < 30 and all(reached[first:]), reached  # once reached, always reached (the TCP left at t=30)
    assert obs["state"][25 + 22] == 1.0  # the latch is in the full state


# --------------------------------------------------------------------------------------------------------------
# pixels, overlay, video
# --------------------------------------------------------------------------------------------------------------
def _project(base, p: np.ndarray) -> tuple[float, float]:
    """(row, column) of world point ``p`` in the base camera image."""
    params = base._sensors["base_camera"].get_params()
    ext = params["extrinsic_cv"][0].cpu().numpy()
    k = params["intrinsic_cv"][0].cpu().numpy()
    u, v, w = k @ (ext @ np.append(p, 1.0))
    return v / w, u / w


def _red(pixels: np.ndarray) -> np.ndarray:
    """Ball-red, lit or shaded (the table is beige, the robot white and grey)."""
    x = pixels.astype(np.int32)
    return (x[..., 0] > 100) & (x[..., 1] < 40) & (x[..., 2] < 40)


def test_ball_is_visible_in_the_base_camera_while_it_rolls(envs):
    """Wherever the ball projects into the base camera's image, the pixels there are ball-red (the ball is ~3 px
    across at this distance); a few steps later, when the ball has rolled on, the same pixel is not. The ball is never
    hidden by the task."""
    env = envs("MIKASA/InterceptGrabSlow-v0", obs_variant="partial")
    base = env.unwrapped
    obs, _ = env.reset(seed=0)
    frames, where = [obs["rgb"][..., :3]], []
    for _ in range(30):
        where.append(base.ball_position[0].numpy().copy())
        obs, *_ = env.step(ZERO)
        frames.append(obs["rgb"][..., :3])
    where.append(base.ball_position[0].numpy().copy())
    checked = 0
    for t, p in enumerate(where):
        row, col = (int(round(x)) for x in _project(base, p))
        if not (3 <= row < 125 and 3 <= col < 125):
            continue
        assert _red(frames[t][row - 2 : row + 3, col - 2 : col + 3]).sum() >= 3, t
        later = t + 6
        if later < len(frames) and np.linalg.norm(where[later] - p) > 0.06:
            assert not _red(frames[later][row, col]), t
        checked += 1
    assert checked >= 10, checked  # the ball is in the image on most of these steps


def test_render_overlay_and_record_episode(envs, tmp_path):
    env = envs("MIKASA/InterceptFast-v0", obs_variant="full", render_mode="rgb_array", render_overlay=True)
    _, info = env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8
    lines = env.unwrapped.overlay_lines(0)
    assert lines[0].startswith("step 0/90") and "rolling" in lines[0]
    assert f"v0 = ({info['oracle'][0]:.2f}, {info['oracle'][1]:.2f}) m/s" in lines[1]
    envs.clear()  # record_episode makes its own environment
    from membench_envs.robo import record_episode

    path = record_episode("MIKASA/InterceptGrabMedium-v0", tmp_path / "grab.mp4", max_steps=2, obs_variant="full")
    assert path.stat().st_size > 0


# --------------------------------------------------------------------------------------------------------------
# solvability (slow): scripted policy vs idle and random actions
# --------------------------------------------------------------------------------------------------------------
EPISODES = 15


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_scripted_policy_catches_the_ball(envs, env_id):
    env = envs(env_id, obs_variant="full", control_mode="pd_ee_delta_pose")
    policy = TrackPolicy(env)
    wins = sum(run_episode(env, policy, 300 + s) for s in range(EPISODES))
    print(f"{env_id}: scripted policy {wins}/{EPISODES}")
    assert wins >= 0.8 * EPISODES, f"{env_id}: scripted policy {wins}/{EPISODES}"


def test_strict_intercept_is_met_by_stopping_the_ball_in_the_goal(envs):
    """The strict rule wants the ball at rest (< 0.05 m/s) in the goal zone, and a rolling ball barely slows by
    itself (0.33 -> 0.30 m/s over an idle episode), so a knock cannot meet it; the scripted policy catches the ball
    and carries it into the zone, where it stops: success on every one of 3 episodes, each at a speed < 0.05 m/s."""
    env = envs("MIKASA/InterceptFast-v0", obs_variant="full", control_mode="pd_ee_delta_pose", strict_success=True)
    policy = TrackPolicy(env)
    ends = []
    for seed in range(3):
        won = run_episode(env, policy, 2000 + seed, check=lambda r, info: ends.append(info) if info["success"] else 0)
        assert won, seed
    assert len(ends) == 3 and all(i["is_ball_in_goal"] and i["ball_speed"] < 0.05 for i in ends)


def test_a_rolling_ball_barely_slows_by_itself(envs):
    """Why strict Intercept needs the ball stopped: over a whole idle episode (4.35 s) the ball loses < 15% of its
    speed (seed 0: 0.33 -> 0.30 m/s), nowhere near the 0.05 m/s of 'at rest'."""
    env = envs("MIKASA/InterceptSlow-v0", obs_variant="full", terminate_on_success=False)
    env.reset(seed=0)
    speeds = []
    for _ in range(89):
        env.step(ZERO)
        speeds.append(float(np.linalg.norm(env.unwrapped.ball.linear_velocity[0].numpy())))
    assert speeds[1] == pytest.approx(0.33, abs=0.01) and speeds[-1] == pytest.approx(0.30, abs=0.01)
    assert min(speeds[1:]) > 0.85 * speeds[1] > 0.05


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_scripted_policy_meets_the_strict_rule(envs, env_id):
    """strict_success=True: Intercept's ball stopped in the zone (the policy carries it there), InterceptGrab's
    ball held still 5 cm above the table (``lift=True``). Measured on seeds 2000-2009 (CPU): 10/10 on every ID."""
    env = envs(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", strict_success=True)
    policy = TrackPolicy(env, lift=env_id in GRAB_IDS)
    wins = sum(run_episode(env, policy, 2000 + s) for s in range(10))
    print(f"{env_id} strict: scripted policy {wins}/10")
    assert wins >= 8


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_idle_and_random_actions_rarely_succeed(envs, env_id):
    """Idle and random arms almost never succeed. The exception is the published InterceptSlow: the ball's sideways
    speed U(0, 0.05) m/s alone carries it 0.1 m towards the goal (0.2 m to the side) in the 2-4 s a slow ball takes
    to reach the goal's row, when vx is near its top (about 0.04 m/s): measured 3/60 idle episodes on seeds 1000-1059
    (every success had vx >= 0.04) and, on this test's seeds, idle 5/30 and random 3/30; 0/30 and 0/30 on the other
    five IDs."""
    env = envs(env_id, obs_variant="full")
    rng = np.random.default_rng(0)
    n = 30
    idle = sum(run_episode(env, lambda obs, info: ZERO, 500 + s) for s in range(n))
    random = sum(run_episode(env, lambda obs, info: rng.uniform(-1, 1, 8).astype(np.float32), 600 + s)
                 for s in range(n))
    print(f"{env_id}: idle {idle}/{n}, random {random}/{n}")
    limit = 0.25 if env_id == "MIKASA/InterceptSlow-v0" else 0.1
    assert idle <= limit * n and random <= limit * n
