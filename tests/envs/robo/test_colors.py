"""Bunch / Seq / ChainOfColors (``membench_envs.robo.colors``): the shown colours, step-exact phases from the simulator
state, the cues in the camera images, and the success rules (any order, the shown order, no wrong cube, a touch held
0.1 s under the strict rule; upstream's reaching term and the documented late-touch difference).

The scripted policy (:class:`membench_envs.robo.experts.TouchSequencePolicy`) reads the cube positions from the
simulator (privileged) and the colours to touch from ``info["oracle"]``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from membench_envs.robo.experts import TouchSequencePolicy

from tests.envs.robo._helpers import ZERO, episode


def _n(env_id: str) -> int:
    return int(env_id.split("-")[0][-1])


def _ee(robo_env, env_id, **kw):
    return robo_env(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", **kw)


# --------------------------------------------------------------------------------------------------------------
# the shown colours
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["MIKASA/BunchOfColors3-v0", "MIKASA/SeqOfColors5-v0", "MIKASA/ChainOfColors7-v0"])
def test_n_distinct_colours_and_seeds_vary_them(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full")
    n = _n(env_id)
    _, info = env.reset(seed=3)
    assert info["oracle"].shape == (n,) and len(set(info["oracle"].tolist())) == n  # N distinct colours
    assert len({tuple(env.reset(seed=s)[1]["oracle"]) for s in range(8)}) == 8
    assert env.unwrapped.n_colors == 9 and env.unwrapped.max_episode_steps == 120


# --------------------------------------------------------------------------------------------------------------
# step-exact phases, from the simulator state
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["MIKASA/BunchOfColors5-v0", "MIKASA/SeqOfColors5-v0", "MIKASA/ChainOfColors3-v0"])
def test_phases_step_exact(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full")
    base = env.unwrapped
    n, sequential = _n(env_id), "Bunch" not in env_id
    cue_end = 5 * n if sequential else 5
    selection = cue_end + 5
    assert base.selection_start == selection
    obs, info = env.reset(seed=1)
    seq = info["oracle"].tolist()
    slots = base._sched_pose[base.phase_index("selection"), 0, :, :3].cpu().numpy()
    bunch = base.bunch_positions()
    for t in range(selection + 3):
        if t > 0:
            obs, _, _, _, info = env.step(ZERO)
        p = base.memory_object_positions[0].cpu().numpy()
        on_table = sorted(np.flatnonzero(p[:, 2] < 1.0).tolist())
        if t < cue_end and sequential:  # cube seq[t // 5] alone, at the table centre, for its 5 steps
            assert on_table == [seq[t // 5]], t
            np.testing.assert_allclose(p[seq[t // 5]], [0.0, 0.0, base.cube_halfsize], atol=2e-3)
            assert base.phase_names[info["phase"]] == f"cue_{t // 5}"
        elif t < cue_end:  # all N at once, on the bunch arc
            assert on_table == sorted(seq), t
            np.testing.assert_allclose(p[seq], bunch[seq], atol=2e-3)
        elif t < selection:
            assert on_table == [], t
            assert base.phase_names[info["phase"]] == "delay"
        else:  # all 9, at their recorded (jittered, shuffled) slots
            assert on_table == list(range(9)), t
            np.testing.assert_allclose(p, slots, atol=1e-4 if t == selection else 5e-3)
            assert base.phase_names[info["phase"]] == "selection"
        visible_state = obs["state"][25:52].reshape(9, 3)
        np.testing.assert_allclose(visible_state[on_table], p[on_table], atol=1e-5)
        assert not visible_state[[k for k in range(9) if k not in on_table]].any()


# --------------------------------------------------------------------------------------------------------------
# pixels: one task per family
# --------------------------------------------------------------------------------------------------------------
def _cube_colour(frame: np.ndarray, empty: np.ndarray) -> np.ndarray | None:
    """Mean colour of the cube pixels of ``frame``: those that differ from the empty-table frame and have a channel
    near 0, as every palette colour (the table and the settling robot do not). None if there are none."""
    diff = np.abs(frame.astype(np.int32) - empty.astype(np.int32)).sum(axis=-1) > 60
    diff &= frame.min(axis=-1) < 30
    return None if diff.sum() < 6 else frame[diff].astype(np.float64).mean(axis=0)


def _nearest_palette(colour: np.ndarray, candidates: list[int]) -> int:
    from membench_envs.robo.remember_color import COLORS

    rgb = (np.array([COLORS[k][1] for k in candidates], dtype=np.float64) / 255) ** (1 / 2.2)  # as rendered (sRGB)
    unit = lambda v: v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-9)  # noqa: E731 (hue, not brightness)
    return candidates[int(np.argmax(unit(rgb) @ unit(colour)))]


def test_each_cue_cube_is_seen_for_its_steps_in_order(robo_env):
    """In the base camera, each step of cue i shows a cube whose hue is that of seq[i]; the delay shows nothing
    (SeqOfColors3 at 2 steps a cue and a 2-step delay: the phase steps at the default timing are
    test_phases_step_exact's, from the state; ChainOfColors shows its cue with the same code)."""
    n, d, delay = 3, 2, 2
    env = robo_env("MIKASA/SeqOfColors3-v0", obs_variant="partial", step_duration=d, delta_time=delay)
    obs, info = env.reset(seed=2)
    seq = info["oracle"].tolist()
    frames = [obs["rgb"][..., :3]]
    for _ in range(d * n + delay):
        obs, *_ = env.step(ZERO)
        frames.append(obs["rgb"][..., :3])
    empty = frames[d * n + 1]
    distinct = [k for k in range(9) if k not in (6, 8)]  # maroon and teal share red's / cyan's hue
    for t in range(d * n):
        colour = _cube_colour(frames[t], empty)
        assert colour is not None, t
        if seq[t // d] in distinct:
            assert _nearest_palette(colour, distinct) == seq[t // d], (t, seq, colour)
    for t in range(d * n, d * n + delay):
        assert _cube_colour(frames[t], empty) is None, t


def test_bunch_is_seen_together_then_gone(robo_env):
    """BunchOfColors7 at a 2-step cue and a 2-step delay (the default timing's phase steps: test_phases_step_exact):
    7 cubes at once, then the empty table, then the selection."""
    d, delay = 2, 2
    env = robo_env("MIKASA/BunchOfColors7-v0", obs_variant="partial", step_duration=d, delta_time=delay)
    obs, _info = env.reset(seed=0)
    frames = [obs["rgb"][..., :3]]
    for _ in range(d + delay):
        obs, *_ = env.step(ZERO)
        frames.append(obs["rgb"][..., :3])
    empty = frames[d + delay - 1]
    diff = np.abs(frames[0].astype(np.int32) - empty.astype(np.int32)).sum(axis=-1) > 60
    # 7 separate cube blobs at t = 0: connected components of the changed pixels whose colour has a channel near 0
    # (every palette colour has one; the table and the robot, which settles a little meanwhile, do not)
    from scipy import ndimage

    labels, count = ndimage.label(diff)
    cubes = [j for j in range(1, count + 1) if (labels == j).sum() >= 10 and frames[0][labels == j].mean(0).min() < 30]
    assert len(cubes) == 7, count
    for t in range(1, d):
        assert _cube_colour(frames[t], empty) is not None, t
    for t in range(d, d + delay):
        assert _cube_colour(frames[t], empty) is None, t
    assert _cube_colour(frames[d + delay], empty) is not None  # the selection


# --------------------------------------------------------------------------------------------------------------
# success rules
# --------------------------------------------------------------------------------------------------------------
def test_seq_of_colors_any_order_succeeds_and_a_wrong_cube_fails(robo_env):
    env = _ee(robo_env, "MIKASA/SeqOfColors3-v0")
    info = episode(env, TouchSequencePolicy(env, "reversed"), seed=5)
    assert info["success_once"]  # any order (paper K.10)
    _obs, info = env.reset(seed=5)
    seq = info["oracle"].tolist()
    other = next(k for k in range(9) if k not in seq)
    info = episode(env, TouchSequencePolicy(env, [seq[0], other, seq[1], seq[2]]), seed=5)
    assert not info["success_once"] and info["n_wrong"] == 1 and info["n_correct"] == 3  # "without any mistakes"


def test_chain_of_colors_right_colours_in_the_wrong_order_fail(robo_env):
    env = _ee(robo_env, "MIKASA/ChainOfColors3-v0")
    info = episode(env, TouchSequencePolicy(env, "reversed"), seed=5)
    assert not info["success_once"]
    assert info["touched"][info["oracle"]].all()  # every shown colour was touched ...
    assert info["touch_order"].tolist() == info["oracle"].tolist()[::-1]  # ... last-first
    info = episode(env, TouchSequencePolicy(env, "oracle"), seed=5)
    assert info["success_once"]


def test_chain_of_colors_reaching_term_after_completion_is_upstreams(robo_env):
    """Once every place holds its colour, upstream's next place is clamped to N - 1: the reaching term keeps paying
    for the distance to the last shown cube (not the maximum 1 for a distance 0)."""
    env = _ee(robo_env, "MIKASA/ChainOfColors3-v0")
    _, info = env.reset(seed=2)
    base = env.unwrapped
    for _ in range(base.selection_start):
        _, _, _, _, info = env.step(np.zeros(7, np.float32))
    assert info["in_selection"] and not info["touched"].any()
    seq = base._seq[0].clone()
    base._order[0] = seq  # every place touched with its colour, in order
    base._touched[0] = base._in_seq[0]
    info = base.evaluate()
    terms = base._reward_terms(info)
    last = base.touch_points()[0, int(seq[-1])] - base.agent.tcp.pose.p[0]
    d = float(torch.linalg.norm(last))
    assert int(info["next_target"][0]) == int(seq[-1]) and d > 0.05
    assert float(terms["reaching"][0]) == pytest.approx(1.0 - math.tanh(10.0 * d), abs=1e-5)
    assert float(terms["correct"][0]) == pytest.approx(90.0) and float(terms["wrong"][0]) == 0.0


def test_chain_of_colors_a_touch_after_the_nth_is_not_recorded(robo_env):
    """The documented difference from upstream (its bug): with the N places filled after a wrong touch, a further new
    cube is not written into place 0, so the right first place stays right and the reward keeps its counts."""
    env = _ee(robo_env, "MIKASA/ChainOfColors3-v0")
    _, info = env.reset(seed=5)
    seq = info["oracle"].tolist()
    other = next(k for k in range(9) if k not in seq)
    info = episode(env, TouchSequencePolicy(env, [seq[0], other, seq[2], seq[1]]), seed=5)
    assert info["touched"][[seq[0], other, seq[2], seq[1]]].all() and not info["success_once"]
    assert info["touch_order"].tolist() == [seq[0], other, seq[2]]  # upstream: [seq[1], other, seq[2]]
    assert (info["n_correct"], info["n_wrong"]) == (2, 1)


def test_bunch_of_colors_any_order(robo_env):
    env = _ee(robo_env, "MIKASA/BunchOfColors3-v0")
    for order in ("reversed", "nearest"):
        info = episode(env, TouchSequencePolicy(env, order), seed=7)
        assert info["success_once"], order


def test_strict_success_needs_each_touch_held_for_0_1_s(robo_env):
    """Under strict_success a touch counts after 2 steps (0.1 s at 20 Hz); by default after 1. A policy that leaves
    each cube as soon as it is touched succeeds by default and never under the strict rule."""
    results = {}
    for strict in (False, True):
        env = _ee(robo_env, "MIKASA/BunchOfColors3-v0", strict_success=strict)
        assert env.unwrapped.strict_hold_steps == 2
        info = episode(env, TouchSequencePolicy(env, hasty=True), seed=11)
        results[strict] = (bool(info["success_once"]), int(info["n_correct"]))
    assert results[False] == (True, 3), results
    assert results[True][0] is False and results[True][1] < 3, results
    env = _ee(robo_env, "MIKASA/BunchOfColors3-v0", strict_success=True)
    info = episode(env, TouchSequencePolicy(env), seed=11)  # the patient policy waits until the env counts it
    assert info["success_once"]
