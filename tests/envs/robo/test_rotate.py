"""MIKASA/RotateLenient{Pos,PosNeg}-v0 and MIKASA/RotateStrict{Pos,PosNeg}-v0.

The catalogue rows and Ξ (the start yaw, seen on observation 0, recalled up to T = 90: [2, 90]), spaces of the full
and partial variants for every ID, the prompt variant (the target angle, constant) and the float oracle
(``y_angle_diff``), seeding (also of the peg's start, unseeded upstream), both target draws, the step-exact start of
success (t = 6), both success rules of both families on constructed peg poses, the rewards, the peg in the camera
image (and the same image after half a turn: the start yaw cannot be read off later frames), and (slow) a scripted
policy on the privileged state against idle and random actions.

At most two ManiSkill environments are open at a time (:func:`envs`). The scripted policy acts in
``pd_ee_delta_pose`` and reads the peg's pose and the oracle from the simulator.
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
from membench_envs.robo.experts import RotatePolicy  # noqa: E402

import membench_envs  # noqa: E402,F401  (registers the catalogue IDs)
from tests.envs.robo._policies import run_episode  # noqa: E402

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

MODES = {"Pos": "pos_angle", "PosNeg": "pos_neg_angle"}
LENIENT_IDS = [f"MIKASA/RotateLenient{m}-v0" for m in MODES]
STRICT_IDS = [f"MIKASA/RotateStrict{m}-v0" for m in MODES]
IDS = LENIENT_IDS + STRICT_IDS
STATE_DIM = {"RotateLenient": 35, "RotateStrict": 37}
MAX_DENSE = {"RotateLenient": 25.0, "RotateStrict": 100.0}
ZERO = np.zeros(8, dtype=np.float32)


def _family(env_id: str) -> str:
    return "RotateStrict" if "RotateStrict" in env_id else "RotateLenient"


def _mode(env_id: str) -> str:
    return MODES[env_id.split("Rotate")[-1].removeprefix("Lenient").removeprefix("Strict").removesuffix("-v0")]


def _wrap(x: float) -> float:
    return (x + math.pi) % (2 * math.pi) - math.pi




# --------------------------------------------------------------------------------------------------------------
# catalogue, Ξ, task classes
# --------------------------------------------------------------------------------------------------------------
def test_catalogue_rows():
    for env_id in IDS:
        spec = membench_envs.info(env_id)
        assert spec.episode_length == 90 and spec.memory_types == ("spatial",) and spec.extra == "robo"
        assert spec.oracle_keys == ("y_angle_diff",)
        assert spec.variants == ("partial", "oracle", "full", "rgb", "prompt")
        assert table.PHASES[env_id] == (("action", 0),)
        params = table.PARAMETERS[env_id]
        assert params["mode"] == _mode(env_id) and params["angle_threshold"] == 0.1
        assert (params["peg_half_width"], params["peg_half_length"], params["angle_sampling"]) == (0.025, 0.12, "code")
        assert ("pos_threshold" in params) == (_family(env_id) == "RotateStrict")
        assert "strict_success=True" in spec.notes and "angle_sampling='paper'" in spec.notes
    strict = membench_envs.info("MIKASA/RotateStrictPos-v0").notes
    assert "|x - x0| < 0.05 and |y - y0| < 0.05" in strict and "< 0.05 (Euclidean)" in strict
    assert "prompt" not in membench_envs.info("MIKASA/InterceptSlow-v0").variants


def test_xi_from_the_phase_table():
    """The peg's start yaw is certainly shown on observation 0 only (t_e = 0, Δt = 1); every action from observation
    1 on needs it (t_r = t + 1 = 2 .. 90), so ξ = t_r − 0 − 1 + 1 ranges over [2, 90]."""
    for env_id in IDS:
        spec = membench_envs.info(env_id)
        phases, T = table.PHASES[env_id], spec.episode_length
        assert phases == (("action", 0),)
        pairs = [EventRecall(0, 1, t + 1) for t in range(1, T)]
        assert correlation_horizons(pairs) == spec.xi == (2, 90)
        assert spec.xi_note.startswith("the peg's start yaw") and spec.xi_note.endswith("=2 to 90-0-1+1=90")
    assert table.rotate_timing(200).xi() == (2, 200)


# --------------------------------------------------------------------------------------------------------------
# spaces, variants, seeding, targets
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", IDS)
def test_full_variant_make_reset_step(envs, env_id):
    env = envs(env_id, obs_variant="full")
    base = env.unwrapped
    d = STATE_DIM[_family(env_id)]
    assert env.action_space.shape == (8,) and env.observation_space["state"].shape == (d,)
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        assert obs["state"].shape == (d,) and obs["state"].dtype == np.float32 and obs in env.observation_space
        target = info["target_angle"]
        if _mode(env_id) == "pos_angle":
            assert 0.1 <= target <= math.pi / 2 + 1e-6
        else:
            assert 0.1 <= abs(target) <= math.pi / 4 + 1e-6
        # at reset nothing has turned: the rotation still to do is the whole target
        assert info["oracle"].dtype == np.float32 and info["oracle"].shape == (1,)
        assert info["oracle"][0] == pytest.approx(target, abs=1e-5)
        assert info["relative_angle"] == pytest.approx(0, abs=1e-5)
        assert obs["state"][-1] == info["oracle"][0]  # the oracle ends the state
        peg = base.peg.pose.p[0].numpy()
        assert abs(peg[0]) <= 0.1 and abs(peg[1]) <= 0.1 and peg[2] == pytest.approx(0.025, abs=1e-5)
        assert info["elapsed_steps"] == 0 and info["phase"] == 0 and not info["success"]
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    assert obs in env.observation_space and info["elapsed_steps"] == 1 and info["oracle"].dtype == np.float32


@pytest.mark.parametrize("env_id", IDS)
def test_partial_variant_make_reset_step(envs, env_id):
    env = envs(env_id)  # partial is the default: RGB + joints + the prompt, no oracle
    obs, info = env.reset(seed=1)
    assert set(obs) == {"rgb", "joints", "prompt"} and obs in env.observation_space
    assert obs["prompt"][0] == pytest.approx(info["target_angle"])
    assert obs["rgb"].shape == (128, 128, 6) and obs["rgb"].dtype == np.uint8
    assert obs["joints"].shape == (25,) and obs["joints"].dtype == np.float32
    assert info["oracle"].shape == (1,) and info["oracle"].dtype == np.float32
    obs, reward, terminated, truncated, info = env.step(ZERO)
    assert obs in env.observation_space and not terminated and not truncated


def test_the_default_observation_carries_the_constant_target_angle(envs):
    """The paper (App. K: the prompt 'is additionally added to each observation') and upstream's PPO wrapper (prompt
    beside the images in every RGB mode): the default partial variant carries θ*, as obs_variant='prompt' does;
    prompt_in_obs=False is the option without it."""
    env = envs("MIKASA/RotateLenientPosNeg-v0")  # no kwargs: partial
    space = env.observation_space["prompt"]
    assert space.dtype == np.float32 and space.shape == (1,) and set(env.observation_space) == {
        "rgb", "joints", "prompt"}
    for seed in (0, 1, 2):
        obs, info = env.reset(seed=seed)
        assert obs["prompt"].dtype == np.float32 and obs in env.observation_space
        assert obs["prompt"][0] == pytest.approx(info["target_angle"])
        first = obs["prompt"].copy()
        for _ in range(3):
            obs, _, _, _, info = env.step(env.action_space.sample())
            np.testing.assert_array_equal(obs["prompt"], first)  # static, whatever the robot does
    envs.clear()
    prompt = envs("MIKASA/RotateLenientPosNeg-v0", obs_variant="prompt")  # the paper's RGB+joints+prompt name
    assert set(prompt.observation_space) == {"rgb", "joints", "prompt"}
    assert prompt.reset(seed=1)[0]["prompt"][0] == pytest.approx(prompt.unwrapped.target_angle[0].item())
    without = envs("MIKASA/RotateLenientPosNeg-v0", prompt_in_obs=False)
    assert set(without.observation_space) == {"rgb", "joints"} and set(without.reset(seed=1)[0]) == {"rgb", "joints"}
    with pytest.raises(ValueError, match="obs_variant='prompt' conflicts with prompt_in_obs=False"):
        gym.make("MIKASA/RotateLenientPos-v0", obs_variant="prompt", prompt_in_obs=False)
    with pytest.raises(ValueError, match="no static prompt"):
        gym.make("MIKASA/InterceptSlow-v0", obs_variant="prompt")
    with pytest.raises(TypeError, match="prompt_in_obs"):
        gym.make("MIKASA/InterceptSlow-v0", prompt_in_obs=True)


def test_oracle_variant_is_the_rotation_still_to_do(envs):
    env = envs("MIKASA/RotateStrictPos-v0", obs_variant="oracle")
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


@pytest.mark.parametrize("env_id", ["MIKASA/RotateLenientPos-v0", "MIKASA/RotateStrictPosNeg-v0"])
def test_gymnasium_env_checker_and_rgb_variant(envs, env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(envs(env_id, obs_variant="full"), skip_render_check=True)
    env = envs(env_id, obs_variant="rgb")  # upstream's RGB-only mode keeps the prompt too
    obs, info = env.reset(seed=0)
    assert set(obs) == {"rgb", "prompt"} and obs["rgb"].shape == (128, 128, 6) and info["oracle"].dtype == np.float32


@pytest.mark.parametrize("env_id", ["MIKASA/RotateLenientPosNeg-v0", "MIKASA/RotateStrictPos-v0"])
def test_same_seed_same_trajectory(envs, env_id):
    """Also the peg's start position (drawn from torch's unseeded global RNG upstream)."""
    env = envs(env_id, obs_variant="full")
    actions = np.random.default_rng(0).uniform(-1, 1, (15, 8)).astype(np.float32)

    def rollout(seed):
        obs, info = env.reset(seed=seed)
        torch.manual_seed(seed + 1000)  # the global torch RNG plays no part
        states = [obs["state"]]
        for a in actions:
            states.append(env.step(a)[0]["state"])
        return np.stack(states), info["target_angle"]

    first, target = rollout(21)
    again, target_again = rollout(21)
    assert target == target_again
    np.testing.assert_array_equal(first[0], again[0])  # peg pose, target, robot
    np.testing.assert_allclose(first, again, atol=1e-4)
    other, target_other = rollout(22)
    assert target != target_other and not np.array_equal(first[0][25:32], other[0][25:32])


def test_reset_without_a_seed_continues_the_seeded_chain(envs):
    """Every draw (the peg's start too) comes from ManiSkill's per-sub-scene episode RNG: after the same seeded reset,
    a reset without a seed gives the same episode whatever torch's global RNG holds (upstream drew the peg's xy from
    that global RNG, which ManiSkill does not seed on such a reset)."""
    env = envs("MIKASA/RotateStrictPosNeg-v0", obs_variant="full")

    def unseeded_after(seed, torch_seed):
        env.reset(seed=seed)
        torch.manual_seed(torch_seed)
        return env.reset()[0]["state"]

    np.testing.assert_array_equal(unseeded_after(3, 0), unseeded_after(3, 99))


def test_target_draws_code_and_paper(envs):
    """'code' (default): |θ*| >= the threshold, PosNeg's sign follows its size (positive ones >= 0.44); 'paper':
    App. K.7's ranges, both signs at every size."""
    base = envs("MIKASA/RotateLenientPos-v0", obs_variant="full").unwrapped
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
            math.pi / 4)
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
    env = envs("MIKASA/RotateLenientPosNeg-v0", obs_variant="full", angle_sampling="paper")
    targets = [env.reset(seed=s)[1]["target_angle"] for s in range(40)]
    assert min(targets) < 0 < max(targets) and all(abs(x) <= math.pi / 4 + 1e-6 for x in targets)
    with pytest.raises(ValueError, match="angle_sampling"):
        gym.make("MIKASA/RotateLenientPos-v0", angle_sampling="uniform")


def test_bad_parameters_are_clear_errors():
    from membench_envs.robo.rotate import RotateLenientEnv, RotateStrictEnv

    with pytest.raises(ValueError, match="mode"):
        RotateLenientEnv(mode="neg_angle")
    with pytest.raises(ValueError, match="angle_threshold"):
        RotateLenientEnv(angle_threshold=0.0)
    with pytest.raises(ValueError, match="pos_threshold"):
        RotateStrictEnv(pos_threshold=-1.0)


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


def test_success_starts_exactly_at_step_6(envs):
    """A peg turned to the target before the first step, with the arm idle: the conditions hold from t = 1, success
    counts from t = 6 (the public code's elapsed_steps > 5), in the sparse mode too."""
    env = envs("MIKASA/RotateLenientPos-v0", obs_variant="full", reward_mode="sparse", terminate_on_success=False)
    base = env.unwrapped
    _, info = env.reset(seed=7)
    _set_peg(base, float(base.start_yaw[0]) + info["target_angle"])
    rows = []
    for _ in range(8):
        _, reward, terminated, _, info = env.step(ZERO)
        rows.append((info["elapsed_steps"], info["is_angle_correct"], info["is_robot_static"], info["success"], reward))
    assert all(r[1] and r[2] for r in rows), rows
    assert [r[3] for r in rows] == [t >= 6 for t, *_ in rows], rows
    assert [r[4] for r in rows] == [float(t >= 6) for t, *_ in rows], rows


@pytest.mark.parametrize("strict", [False, True])
def test_lenient_success_rules(envs, strict):
    """Default (public code): |y_angle_diff| < 0.1 and a still arm; the centre may move. strict (K.7 'stable'): also
    the peg turning slower than 0.2 rad/s. Half a turn more looks the same but is no success."""
    env = envs("MIKASA/RotateLenientPosNeg-v0", obs_variant="full", strict_success=strict, terminate_on_success=False)
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
def test_strict_family_success_rules(envs, strict):
    """Default (public code): the angle, |dx| < 0.05 and |dy| < 0.05 (a square), a still arm; tilt unchecked.
    strict (K.8): the centre within 0.05 m (a disc), the long axis at most 0.1 rad out of the table plane, the peg
    turning slower than 0.2 rad/s."""
    env = envs("MIKASA/RotateStrictPosNeg-v0", obs_variant="full", strict_success=strict, terminate_on_success=False)
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
def test_dense_reward_is_bounded_and_maximal_exactly_on_success(envs, env_id):
    env = envs(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", reward_mode="dense")
    top = MAX_DENSE[_family(env_id)]
    seen = []

    def check(reward, info):
        assert math.isfinite(reward) and 0.0 <= reward <= top + 1e-6
        assert (reward == pytest.approx(top)) == bool(info["success"]), (reward, info["success"])
        seen.append(bool(info["success"]))

    assert run_episode(env, RotatePolicy(env), seed=11, check=check)
    assert seen[-1] and not any(seen[:-1])


def test_reward_terms_follow_the_public_formulas(envs):
    """RotateStrict's terms on a constructed state: the TCP far from the peg gives only the reaching term; the
    reward is the sum of the terms; normalized = dense / 100."""
    env = envs("MIKASA/RotateStrictPos-v0", obs_variant="full", reward_mode="dense", terminate_on_success=False)
    base = env.unwrapped
    env.reset(seed=12)
    _, reward, _, _, info = env.step(ZERO)
    terms = {k: float(v[0]) for k, v in base._last_reward_terms.items()}
    d = info["tcp_to_peg_dist"]
    assert d > 0.04 and terms["reaching"] == pytest.approx(0.5 * math.exp(-3 * d), rel=1e-5)
    assert terms["x_position"] == terms["y_position"] == terms["angle"] == terms["correct_angle"] == 0.0
    assert reward == pytest.approx(sum(terms.values()))
    env = envs("MIKASA/RotateLenientPos-v0", obs_variant="full", reward_mode="normalized_dense",
               terminate_on_success=False)
    base = env.unwrapped
    _, info = env.reset(seed=12)
    _set_peg(base, float(base.start_yaw[0]) + info["target_angle"])
    _, reward, _, _, info = env.step(ZERO)
    d = info["tcp_to_peg_dist"]
    assert not info["success"] and info["is_angle_correct"] and info["is_robot_static"]  # t = 1: no success yet
    assert reward == pytest.approx((math.exp(-5 * d) + 5 + 2) / 25, rel=1e-4)  # d > 0.1: no angle term


def test_normalized_and_sparse_rewards(envs):
    env = envs("MIKASA/RotateStrictPos-v0", obs_variant="full", control_mode="pd_ee_delta_pose",
               reward_mode="normalized_dense")
    rewards = []
    assert run_episode(env, RotatePolicy(env), seed=13, check=lambda r, info: rewards.append(r))
    assert all(0.0 <= r <= 1.0 for r in rewards) and rewards[-1] == pytest.approx(1.0)
    assert max(rewards[:-1]) <= 0.605 + 1e-6  # 60.5 / 100 is the most without success

    env = envs("MIKASA/RotateLenientPosNeg-v0", obs_variant="full", control_mode="pd_ee_delta_pose",
               reward_mode="sparse")

    def sparse(reward, info):
        assert reward == float(info["success"])

    assert run_episode(env, RotatePolicy(env), seed=13, check=sparse)


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


def _blue(pixels: np.ndarray) -> np.ndarray:
    """Peg-blue, lit or shaded (the table is beige, the robot white and grey)."""
    x = pixels.astype(np.int32)
    return (x[..., 2] > 60) & (x[..., 2] > x[..., 0] + 40) & (x[..., 2] > x[..., 1] + 20)


def test_peg_is_visible_and_looks_the_same_after_half_a_turn(envs):
    """The base camera sees the peg: blue pixels at both ends' projections, none there once the peg is moved away.
    Turned by π the image is the same (up to rendering noise): a later frame does not tell the start yaw."""
    env = envs("MIKASA/RotateLenientPos-v0", obs_variant="partial")
    base = env.unwrapped
    obs, _ = env.reset(seed=0)
    yaw0 = float(base.start_yaw[0])
    centre = base.peg.pose.p[0].numpy()
    ends = [centre + s * 0.09 * np.array([math.cos(yaw0), math.sin(yaw0), 0.0]) for s in (-1, 1)]
    image = obs["rgb"][..., :3]
    for p in [centre, *ends]:
        row, col = (int(round(x)) for x in _project(base, p))
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


def test_render_overlay_and_record_episode(envs, tmp_path):
    env = envs("MIKASA/RotateStrictPosNeg-v0", obs_variant="full", render_mode="rgb_array", render_overlay=True)
    _, info = env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8
    lines = env.unwrapped.overlay_lines(0)
    assert lines[0].startswith("step 0/90") and "action" in lines[0]
    assert f"rotate {math.degrees(info['target_angle']):+.1f} deg" in lines[1]
    envs.clear()  # record_episode makes its own environment
    from membench_envs.robo import record_episode

    path = record_episode("MIKASA/RotateLenientPos-v0", tmp_path / "rotate.mp4", max_steps=2, obs_variant="full")
    assert path.stat().st_size > 0


# --------------------------------------------------------------------------------------------------------------
# solvability (slow): scripted policy vs idle and random actions
# --------------------------------------------------------------------------------------------------------------
EPISODES = 20


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("strict", [False, True])
def test_scripted_policy_turns_the_peg(envs, env_id, strict):
    env = envs(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", strict_success=strict)
    policy = RotatePolicy(env)
    wins = sum(run_episode(env, policy, 300 + s) for s in range(EPISODES))
    print(f"{env_id} strict={strict}: scripted policy {wins}/{EPISODES}")
    assert wins >= 0.85 * EPISODES, f"{env_id}: scripted policy {wins}/{EPISODES}"


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_idle_and_random_actions_rarely_succeed(envs, env_id):
    env = envs(env_id, obs_variant="full")
    rng = np.random.default_rng(0)
    n = 30
    idle = sum(run_episode(env, lambda obs, info: ZERO, 500 + s) for s in range(n))
    random = sum(run_episode(env, lambda obs, info: rng.uniform(-1, 1, 8).astype(np.float32), 600 + s)
                 for s in range(n))
    print(f"{env_id}: idle {idle}/{n}, random {random}/{n}")
    assert idle == 0 and random <= 0.1 * n


@pytest.mark.slow
@pytest.mark.parametrize("env_id, guess", [("MIKASA/RotateLenientPos-v0", 0.835),
                                           ("MIKASA/RotateStrictPosNeg-v0", 0.614)])
def test_the_prompt_makes_the_task_solvable_and_a_constant_guess_stays_at_chance(envs, env_id, guess):
    """Reading θ* from the default observation's prompt, the scripted policy turns the peg by it (3 episodes in the
    partial variant, whose two renders cost ~0.4 s a step on the CPU); a policy that cannot see it can at best turn
    by a constant c (the middle of the Pos range, of PosNeg's positive range), and succeeds exactly on the episodes
    where |θ* − c| < 0.1: about 13.6% (Pos) and 29.2% (PosNeg) (20 episodes in the full variant: the guess reads
    no observation)."""
    partial = envs(env_id, control_mode="pd_ee_delta_pose")  # the default observation: rgb, joints, prompt
    reader = RotatePolicy(partial, target="prompt")
    assert all(run_episode(partial, reader, 700 + s) for s in range(3))
    envs.clear()
    full = envs(env_id, obs_variant="full", control_mode="pd_ee_delta_pose")
    guesser = RotatePolicy(full, target=guess)
    wins, lucky = 0, 0
    for s in range(20):
        wins += run_episode(full, guesser, 800 + s)
        lucky += abs(float(full.unwrapped.target_angle[0]) - guess) < 0.1
    print(f"{env_id}: constant guess {guess} won {wins}/20, |target - guess| < 0.1 on {lucky}/20")
    assert abs(wins - lucky) <= 1 and wins <= 0.4 * 20
