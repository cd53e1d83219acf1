"""RotateLenient and RotateStrict (``membench_envs.robo.rotate``): the target draw (both modes, both samplings) and the
peg's start, the prompt (the target angle, in every image variant, constant; ``prompt_in_obs=False``), the float
oracle (``y_angle_diff``), clear errors, the step-exact start of success (t = 6), both success rules of both families on
constructed peg poses, the rewards, and the peg in the camera image (the same image after half a turn: the start yaw
cannot be read off later frames). The scripted policy acts in ``pd_ee_delta_pose`` and reads the peg's pose and the
oracle from the simulator; its rates, and the prompt's value to it, are in test_solvability (slow).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_envs.robo.experts import RotatePolicy

from tests.envs.robo._helpers import ZERO, pixel, run_episode

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

MAX_DENSE = {"RotateLenient": 25.0, "RotateStrict": 100.0}


def _family(env_id: str) -> str:
    return "RotateStrict" if "RotateStrict" in env_id else "RotateLenient"


def _wrap(x: float) -> float:
    return (x + math.pi) % (2 * math.pi) - math.pi


# --------------------------------------------------------------------------------------------------------------
# the episode draws, the prompt, the oracle
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["MIKASA/RotateLenientPos-v0", "MIKASA/RotateStrictPosNeg-v0"])
def test_reset_draws_the_target_and_the_peg(robo_env, env_id):
    """Pos: θ* in [0.1, π/2]; PosNeg: |θ*| in [0.1, π/4]; at reset nothing has turned, so the oracle (the rotation
    still to do) is the whole target; the peg lies flat at x, y in [-0.1, 0.1]."""
    env = robo_env(env_id, obs_variant="full")
    base = env.unwrapped
    for seed in range(4):
        _, info = env.reset(seed=seed)
        target = info["target_angle"]
        if "PosNeg" in env_id:
            assert 0.1 <= abs(target) <= math.pi / 4 + 1e-6
        else:
            assert 0.1 <= target <= math.pi / 2 + 1e-6
        assert info["oracle"][0] == pytest.approx(target, abs=1e-5)
        assert info["relative_angle"] == pytest.approx(0, abs=1e-5)
        peg = base.peg.pose.p[0].numpy()
        assert abs(peg[0]) <= 0.1 and abs(peg[1]) <= 0.1 and peg[2] == pytest.approx(0.025, abs=1e-5)


def test_the_default_observation_carries_the_constant_target_angle(robo_env):
    """The paper (App. K: the prompt 'is additionally added to each observation') and upstream's PPO wrapper (prompt
    beside the images in every RGB mode): the default partial variant carries θ*, as obs_variant='prompt' does;
    prompt_in_obs=False is the option without it."""
    env = robo_env("MIKASA/RotateLenientPosNeg-v0")  # no kwargs: partial
    space = env.observation_space["prompt"]
    assert (
        space.dtype == np.float32 and space.shape == (1,) and set(env.observation_space) == {"rgb", "joints", "prompt"}
    )
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        assert obs["prompt"].dtype == np.float32 and obs in env.observation_space
        assert obs["prompt"][0] == pytest.approx(info["target_angle"])
        first = obs["prompt"].copy()
        for _ in range(2):
            obs, _, _, _, info = env.step(env.action_space.sample())
            np.testing.assert_array_equal(obs["prompt"], first)  # static, whatever the robot does
    assert len({float(env.reset(seed=s)[0]["prompt"][0]) for s in (0, 1)}) == 2  # per episode: the seed's target
    prompt = robo_env("MIKASA/RotateLenientPosNeg-v0", obs_variant="prompt")  # the paper's RGB+joints+prompt name
    assert set(prompt.observation_space) == {"rgb", "joints", "prompt"}
    assert prompt.reset(seed=1)[0]["prompt"][0] == pytest.approx(prompt.unwrapped.target_angle[0].item())
    without = robo_env("MIKASA/RotateLenientPosNeg-v0", prompt_in_obs=False)
    assert set(without.observation_space) == {"rgb", "joints"} and set(without.reset(seed=1)[0]) == {"rgb", "joints"}
    with pytest.raises(ValueError, match="obs_variant='prompt' conflicts with prompt_in_obs=False"):
        gym.make("MIKASA/RotateLenientPos-v0", obs_variant="prompt", prompt_in_obs=False)
    with pytest.raises(ValueError, match="no static prompt"):
        gym.make("MIKASA/InterceptSlow-v0", obs_variant="prompt")
    with pytest.raises(TypeError, match="prompt_in_obs"):
        gym.make("MIKASA/InterceptSlow-v0", prompt_in_obs=True)


def test_oracle_variant_is_the_rotation_still_to_do(robo_env):
    env = robo_env("MIKASA/RotateStrictPos-v0", obs_variant="oracle")
    space = env.observation_space["oracle"]
    assert space.dtype == np.float32 and space.shape == (1,)
    np.testing.assert_allclose([space.low[0], space.high[0]], [-math.pi, math.pi], rtol=1e-6)
    obs, info = env.reset(seed=4)
    assert obs["oracle"].dtype == np.float32 and obs in env.observation_space
    np.testing.assert_array_equal(obs["oracle"], info["oracle"])
    base = env.unwrapped
    yaw0 = float(base.start_yaw[0])
    _set_peg(base, yaw=yaw0 + 0.3)  # turned by 0.3 rad
    obs = base.get_obs()
    assert float(obs["oracle"][0, 0]) == pytest.approx(_wrap(info["target_angle"] - 0.3), abs=1e-4)


def test_the_rgb_variant_keeps_the_prompt(robo_env):
    env = robo_env("MIKASA/RotateStrictPosNeg-v0", obs_variant="rgb")  # upstream's RGB-only mode keeps the prompt too
    obs, info = env.reset(seed=0)
    assert set(obs) == {"rgb", "prompt"} and obs["rgb"].shape == (128, 128, 6) and info["oracle"].dtype == np.float32


def test_target_draws_code_and_paper(robo_env):
    """'code' (default): |θ*| >= the threshold, PosNeg's sign follows its size (positive ones >= 0.44); 'paper':
    App. K.7's ranges, both signs at every size."""
    base = robo_env("MIKASA/RotateLenientPos-v0", obs_variant="full").unwrapped
    r = np.linspace(0.0, 1.0, 1001)
    saved = base.mode, base.angle_sampling
    try:
        base.mode, base.angle_sampling = "pos_angle", "code"
        t = base.draw_target(r)
        assert t.min() == pytest.approx(0.1) and t.max() == pytest.approx(math.pi / 2)
        base.mode = "pos_neg_angle"
        t = base.draw_target(r)
        pos, neg = t[t > 0], t[t < 0]
        assert pos.min() == pytest.approx(0.1 + 0.5 * (math.pi / 4 - 0.1), abs=1e-3) and pos.max() == pytest.approx(
            math.pi / 4
        )
        assert neg.min() == pytest.approx(-(0.1 + 0.5 * (math.pi / 4 - 0.1)), abs=1e-3)
        assert neg.max() == pytest.approx(-0.1)
        base.angle_sampling = "paper"
        t = base.draw_target(r)
        assert t.min() == pytest.approx(-math.pi / 4) and t.max() == pytest.approx(math.pi / 4)
        assert (np.abs(t) < 0.1).any()  # small targets exist: holding still solves them
        base.mode = "pos_angle"
        t = base.draw_target(r)
        assert t.min() == pytest.approx(0.0) and t.max() == pytest.approx(math.pi / 2)
    finally:
        base.mode, base.angle_sampling = saved
    env = robo_env("MIKASA/RotateLenientPosNeg-v0", obs_variant="full", angle_sampling="paper")
    targets = [env.reset(seed=s)[1]["target_angle"] for s in range(40)]
    assert min(targets) < 0 < max(targets) and all(abs(x) <= math.pi / 4 + 1e-6 for x in targets)
    with pytest.raises(ValueError, match="angle_sampling"):
        gym.make("MIKASA/RotateLenientPos-v0", angle_sampling="uniform")


# --------------------------------------------------------------------------------------------------------------
# success rules on constructed states
# --------------------------------------------------------------------------------------------------------------
def _set_peg(base, yaw: float, shift=(0.0, 0.0), euler_xy=(0.0, 0.0), spin=0.0, lift=0.0):
    """The peg at its start plus ``shift``, at orientation XYZ-Euler (euler_xy, yaw), turning at ``spin`` rad/s."""
    from mani_skill.utils.geometry import rotation_conversions
    from mani_skill.utils.structs.pose import Pose

    matrix = rotation_conversions.euler_angles_to_matrix(torch.tensor([[*euler_xy, yaw]], dtype=torch.float32), "XYZ")
    q = rotation_conversions.matrix_to_quaternion(matrix)
    xy = base._start_xy[0].numpy()
    p = torch.tensor([[xy[0] + shift[0], xy[1] + shift[1], 0.025 + lift]], dtype=torch.float32)
    base.peg.set_pose(Pose.create_from_pq(p=p, q=q))
    base.peg.set_linear_velocity(torch.zeros((1, 3)))
    base.peg.set_angular_velocity(torch.tensor([[0.0, 0.0, spin]]))


def test_success_starts_exactly_at_step_6(robo_env):
    """A peg turned to the target before the first step, with the arm idle: the conditions hold from t = 1, success
    counts from t = 6 (the public code's elapsed_steps > 5), in the sparse mode too."""
    env = robo_env("MIKASA/RotateLenientPos-v0", obs_variant="full", reward_mode="sparse", terminate_on_success=False)
    base = env.unwrapped
    _, info = env.reset(seed=7)
    _set_peg(base, float(base.start_yaw[0]) + info["target_angle"])
    rows = []
    for _ in range(8):
        _, reward, _terminated, _, info = env.step(ZERO)
        rows.append((info["elapsed_steps"], info["is_angle_correct"], info["is_robot_static"], info["success"], reward))
    assert all(r[1] and r[2] for r in rows), rows
    assert [r[3] for r in rows] == [t >= 6 for t, *_ in rows], rows
    assert [r[4] for r in rows] == [float(t >= 6) for t, *_ in rows], rows


@pytest.mark.parametrize("strict", [False, True])
def test_lenient_success_rules(robo_env, strict):
    """Default (public code): |y_angle_diff| < 0.1 and a still arm; the centre may move. strict (K.7 'stable'): also
    the peg turning slower than 0.2 rad/s. Half a turn more looks the same but is no success."""
    env = robo_env(
        "MIKASA/RotateLenientPosNeg-v0", obs_variant="full", strict_success=strict, terminate_on_success=False
    )
    base = env.unwrapped
    _, info = env.reset(seed=8)
    for _ in range(6):
        env.step(ZERO)
    goal = float(base.start_yaw[0]) + info["target_angle"]
    cases = [  # (yaw offset from the goal, centre shift, spin, success by default, success when strict)
        (0.0, (0.0, 0.0), 0.0, True, True),
        (0.09, (0.0, 0.0), 0.0, True, True),
        (-0.09, (0.0, 0.0), 0.0, True, True),
        (0.11, (0.0, 0.0), 0.0, False, False),
        (math.pi, (0.0, 0.0), 0.0, False, False),  # the same picture, the wrong rotation
        (0.0, (0.1, -0.08), 0.0, True, True),  # Lenient: the centre may move
        (0.0, (0.0, 0.0), 0.5, True, False),  # still turning
    ]
    for offset, shift, spin, default_ok, strict_ok in cases:
        _set_peg(base, goal + offset, shift=shift, spin=spin)
        got = base.evaluate()
        assert bool(got["success"][0]) == (strict_ok if strict else default_ok), (offset, shift, spin, got)
        assert abs(_wrap(float(got["y_angle_diff"][0]) + offset)) < 1e-4  # up to the wrap at ±π


@pytest.mark.parametrize("strict", [False, True])
def test_strict_family_success_rules(robo_env, strict):
    """Default (public code): the angle, |dx| < 0.05 and |dy| < 0.05 (a square), a still arm; tilt unchecked.
    strict (K.8): the centre within 0.05 m (a disc), the long axis at most 0.1 rad out of the table plane, the peg
    turning slower than 0.2 rad/s."""
    env = robo_env(
        "MIKASA/RotateStrictPosNeg-v0", obs_variant="full", strict_success=strict, terminate_on_success=False
    )
    base = env.unwrapped
    _, info = env.reset(seed=9)
    for _ in range(6):
        env.step(ZERO)
    goal = float(base.start_yaw[0]) + info["target_angle"]
    cases = [  # (centre shift, XYZ Euler x/y tilt, spin, yaw offset, success by default, success when strict)
        ((0.0, 0.0), (0.0, 0.0), 0.0, 0.0, True, True),
        ((0.03, -0.03), (0.0, 0.0), 0.0, 0.0, True, True),  # 0.042 m
        ((0.04, 0.04), (0.0, 0.0), 0.0, 0.0, True, False),  # in the square, 0.057 m from the start
        ((0.06, 0.0), (0.0, 0.0), 0.0, 0.0, False, False),
        ((0.0, -0.055), (0.0, 0.0), 0.0, 0.0, False, False),
        ((0.0, 0.0), (0.3, 0.3), 0.0, 0.0, True, False),  # tilted
        ((0.0, 0.0), (0.0, 0.0), 0.5, 0.0, True, False),  # still turning
        ((0.0, 0.0), (0.0, 0.0), 0.0, 0.12, False, False),  # wrong angle
    ]
    # Euler x, y = ±0.3 with the signs of sin(yaw), -cos(yaw): the long axis rises at least 0.28 rad out of the plane
    signs = (math.copysign(1.0, math.sin(goal)), -math.copysign(1.0, math.cos(goal)))
    for shift, tilt, spin, offset, default_ok, strict_ok in cases:
        tilt = (tilt[0] * signs[0], tilt[1] * signs[1])
        _set_peg(base, goal + offset, shift=shift, euler_xy=tilt, spin=spin, lift=0.05 if any(tilt) else 0.0)
        got = base.evaluate()
        if any(tilt):
            assert float(got["peg_tilt"][0]) > 0.25, got["peg_tilt"]
        assert float(got["peg_xy_dist"][0]) == pytest.approx(math.hypot(*shift), abs=1e-5)
        assert bool(got["success"][0]) == (strict_ok if strict else default_ok), (shift, tilt, spin, offset, got)


# --------------------------------------------------------------------------------------------------------------
# rewards
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["MIKASA/RotateLenientPos-v0", "MIKASA/RotateStrictPosNeg-v0"])
def test_dense_reward_is_bounded_and_maximal_exactly_on_success(robo_env, env_id):
    """On the scripted policy's episode: within [0, max], the max exactly on success, at most what the terms pay
    without it (RotateLenient 23 of 25, RotateStrict 60.5 of 100); normalized_dense and sparse follow from it
    (test_platform)."""
    env = robo_env(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense")
    top = MAX_DENSE[_family(env_id)]
    seen = []

    def check(reward, info):
        assert math.isfinite(reward) and 0.0 <= reward <= top + 1e-6
        assert (reward == pytest.approx(top)) == bool(info["success"]), (reward, info["success"])
        seen.append((bool(info["success"]), reward))

    assert run_episode(env, RotatePolicy(env), seed=11, check=check)
    assert seen[-1][0] and not any(ok for ok, _ in seen[:-1])
    assert max(r for _, r in seen[:-1]) <= {"RotateLenient": 23.0, "RotateStrict": 60.5}[_family(env_id)] + 1e-6


def test_reward_terms_follow_the_public_formulas(robo_env):
    """RotateStrict's terms on a constructed state: the TCP far from the peg gives only the reaching term; the
    reward is the sum of the terms; normalized = dense / 100."""
    env = robo_env("MIKASA/RotateStrictPos-v0", obs_variant="full", reward_mode="dense", terminate_on_success=False)
    base = env.unwrapped
    env.reset(seed=12)
    _, reward, _, _, info = env.step(ZERO)
    terms = {k: float(v[0]) for k, v in base._last_reward_terms.items()}
    d = info["tcp_to_peg_dist"]
    assert d > 0.04 and terms["reaching"] == pytest.approx(0.5 * math.exp(-3 * d), rel=1e-5)
    assert terms["x_position"] == terms["y_position"] == terms["angle"] == terms["correct_angle"] == 0.0
    assert reward == pytest.approx(sum(terms.values()))
    env = robo_env(
        "MIKASA/RotateLenientPos-v0", obs_variant="full", reward_mode="normalized_dense", terminate_on_success=False
    )
    base = env.unwrapped
    _, info = env.reset(seed=12)
    _set_peg(base, float(base.start_yaw[0]) + info["target_angle"])
    _, reward, _, _, info = env.step(ZERO)
    d = info["tcp_to_peg_dist"]
    assert not info["success"] and info["is_angle_correct"] and info["is_robot_static"]  # t = 1: no success yet
    assert reward == pytest.approx((math.exp(-5 * d) + 5 + 2) / 25, rel=1e-4)  # d > 0.1: no angle term


# --------------------------------------------------------------------------------------------------------------
# pixels
# --------------------------------------------------------------------------------------------------------------
def _blue(pixels: np.ndarray) -> np.ndarray:
    """Peg-blue, lit or shaded (the table is beige, the robot white and grey)."""
    x = pixels.astype(np.int32)
    return (x[..., 2] > 60) & (x[..., 2] > x[..., 0] + 40) & (x[..., 2] > x[..., 1] + 20)


def test_peg_is_visible_and_looks_the_same_after_half_a_turn(robo_env):
    """The base camera sees the peg: blue pixels at both ends' projections, none there once the peg is moved away.
    Turned by π the image is the same (up to rendering noise): a later frame does not tell the start yaw."""
    env = robo_env("MIKASA/RotateLenientPos-v0", obs_variant="partial")
    base = env.unwrapped
    obs, _ = env.reset(seed=0)
    yaw0 = float(base.start_yaw[0])
    centre = base.peg.pose.p[0].numpy()
    ends = [centre + s * 0.09 * np.array([math.cos(yaw0), math.sin(yaw0), 0.0]) for s in (-1, 1)]
    image = obs["rgb"][..., :3]
    for p in [centre, *ends]:
        row, col = pixel(base, p)
        assert 2 <= row < 126 and 2 <= col < 126, (row, col)
        assert _blue(image[row - 1 : row + 2, col - 1 : col + 2]).sum() >= 5, (p, row, col)
    assert _blue(image).sum() > 60
    _set_peg(base, yaw0 + math.pi)
    turned = base.get_obs()["rgb"][0, ..., :3].numpy()
    diff = np.abs(turned.astype(np.int32) - image.astype(np.int32))
    assert diff.max() <= 12 and (diff > 4).sum() <= 30, (diff.max(), (diff > 4).sum())
    _set_peg(base, yaw0 + math.pi / 2)  # a quarter turn does change the picture
    quarter = base.get_obs()["rgb"][0, ..., :3].numpy()
    assert (_blue(quarter) != _blue(image)).sum() > 20
    _set_peg(base, yaw0, shift=(0.0, 0.0), lift=5.0)  # far above the cameras' view
    gone = base.get_obs()["rgb"][0, ..., :3].numpy()
    assert _blue(gone).sum() < 5
