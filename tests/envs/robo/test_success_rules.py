"""The two success rules of part 1's tasks, each deciding a constructed case: the public code's (default) and the
paper's (``strict_success=True``).

The cases are built by moving the object, not the robot: the robot rests (zero actions) while a test writes the
target's pose (and a velocity that cancels one control step of gravity, vz = g·Δt/2, so an object put in the air
ends the step where it was put) right before a step; the env then evaluates the step as usual.
"""

from __future__ import annotations

import numpy as np
import pytest

ZERO = np.zeros(8, dtype=np.float32)
G = 9.81


def _put(base, actor, p, hover: bool = False) -> None:
    """Place ``actor`` at ``p`` at rest (``hover``: with the upward speed that cancels gravity over one step)."""
    vz = G * (1.0 / base.control_freq) / 2 if hover else 0.0
    state = np.zeros(13, dtype=np.float32)
    state[:3], state[3], state[9] = p, 1.0, vz
    actor.set_state(state[None])


def _rest_until(env, t: int):
    obs, info = env.reset(seed=0)
    while info["elapsed_steps"] < t:
        obs, _, _, _, info = env.step(ZERO)
    assert info["is_robot_static"]
    return info


# --- Remember*: touch held 1 step vs 0.1 s -----------------------------------------------------------------------
def _remember_case(env, hold_steps: int) -> list[bool]:
    """From t = 10 put the target cube 3.5 cm under the resting TCP for ``hold_steps`` steps, then back on its slot;
    return the success flag of every step."""
    base = env.unwrapped
    _rest_until(env, base.choice_start)
    j = int(base.target_index()[0])
    cube = base.memory_objects[j]
    slot = base._sched_pose[base.phase_index("choice"), 0, j, :3].cpu().numpy()
    flags = []
    for k in range(hold_steps + 2):
        if k < hold_steps:
            _put(base, cube, base.agent.tcp.pose.p[0].cpu().numpy() - [0.0, 0.0, 0.035], hover=True)
        else:
            _put(base, cube, slot)
        _, _, _, _, info = env.step(ZERO)
        if k < hold_steps:
            assert info["is_obj_placed"] and info["is_robot_static"], (k, info["tcp_to_target_dist"])
        flags.append(bool(info["success"]))
    return flags


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_remember_touch_held_one_step_vs_0_1_s(robo_env, strict):
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", terminate_on_success=False, strict_success=strict)
    assert env.unwrapped.strict_hold_steps == 2  # 0.1 s at the 20 Hz control rate
    one = _remember_case(env, 1)
    two = _remember_case(env, 2)
    if strict:  # the paper: contact for at least 0.1 s
        assert one == [False, False, False]
        assert two == [False, True, False, False]
    else:  # the public code: one step within 0.05 m
        assert one == [True, False, False]
        assert two == [True, True, False, False]


# --- ShellGamePick: lift 3 cm vs 11 cm; ShellGamePush: forward 3 cm vs 11 cm --------------------------------------
def _shell_case(env, offset) -> bool:
    base = env.unwrapped
    _rest_until(env, base.time_offset + 2)
    cup = int(base.target_index()[0])
    start = base._ball_start[0].cpu().numpy()
    _put(base, base.ball, start + [-0.15, 0.0, 0.0])  # out of the mug's way
    mug = np.array([start[0], start[1], base.mug_geometry.rest_height]) + offset
    _put(base, base.mugs[cup], mug, hover=offset[2] > 0)
    _, _, _, _, info = env.step(ZERO)
    got = base.mug_positions[0, cup].cpu().numpy()
    np.testing.assert_allclose(got, mug, atol=3e-3)  # the constructed case is what the env evaluated
    return bool(info["success"])


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_shell_game_pick_lift_3_cm_vs_11_cm(robo_env, strict):
    env = robo_env("MIKASA/ShellGamePick-v0", obs_variant="full", terminate_on_success=False, strict_success=strict)
    low = _shell_case(env, np.array([0.0, 0.0, 0.03]))
    high = _shell_case(env, np.array([0.0, 0.0, 0.11]))
    assert high is True
    assert low is (not strict)  # public code: 3 cm is enough (goal 0.125 above the ball, tolerance 0.08); paper: 0.1 m


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_shell_game_push_forward_3_cm_vs_11_cm(robo_env, strict):
    env = robo_env("MIKASA/ShellGamePush-v0", obs_variant="full", terminate_on_success=False, strict_success=strict)
    short = _shell_case(env, np.array([0.03, 0.0, 0.0]))
    far = _shell_case(env, np.array([0.11, 0.0, 0.0]))
    assert far is True
    assert short is (not strict)
