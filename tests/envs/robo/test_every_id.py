"""What differs per MIKASA-Robo ID, checked on every one of the 32 in the ``full`` variant (no renderer): the
instance takes exactly its row's kwargs, T and phases; the state's size, the oracle's size and dtype (the oracle ends
the state); reset / step types; the same seed gives the same first state and seeds vary the task; gymnasium's env
checker. The observation variants, the seeding of whole trajectories and each family's rules are tested on
representative IDs (``test_platform`` and the family files): IDs of one family share every line of code.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.catalogue import robo as table

import membench_envs

IDS = [p.id for p in table.PRESETS]


def _expected(env_id: str) -> tuple[int, int, type]:
    """(state size D, oracle size k, oracle dtype) of an ID, written out from the task docstrings."""
    name = env_id.removeprefix("MIKASA/").removesuffix("-v0")
    if name.startswith("RememberShapeAndColor"):
        s, c = (int(x) for x in name.removeprefix("RememberShapeAndColor").split("x"))
        n, k = s * c, 2
        return 25 + 3 + 3 * n + 3 + 1 + k, k, np.int64  # joints, goal_pos, object_pos, phase one-hot, time, oracle
    if name.startswith(("RememberColor", "RememberShape")):
        n = int(name[-1])
        return 25 + 3 + 3 * n + 3 + 1 + 1, 1, np.int64
    if name.startswith("ShellGame"):
        return {"Touch": 65, "Push": 68, "Pick": 69}[name.removeprefix("ShellGame")], 1, np.int64
    if name.endswith(("OfColors3", "OfColors5", "OfColors7")):
        n, m = int(name[-1]), 9
        phases = 3 if name.startswith("Bunch") else n + 2
        return 25 + 3 * m + m + (n if name.startswith("Chain") else 0) + 3 + phases + 1 + n, n, np.int64
    if name.startswith("InterceptGrab"):
        return 50, 3, np.float32
    if name.startswith("Intercept"):
        return 52, 3, np.float32
    if name.startswith("Rotate"):
        return (37 if name.startswith("RotateStrict") else 35), 1, np.float32
    assert name == "TakeItBack"
    return 40, 3, np.float32


def _plain(value):
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize("env_id", IDS)
def test_every_id_makes_resets_steps_and_passes_the_checker(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full")
    base = env.unwrapped
    d, k, dtype = _expected(env_id)
    # its row: exactly its kwargs, T and phases
    assert env.spec.id == env_id
    knobs = {name: v for name, v in base.knobs.items() if v is not None}  # the row omits None defaults
    assert knobs == {name: _plain(v) for name, v in table.PARAMETERS[env_id].items()}
    assert base.max_episode_steps == membench_envs.info(env_id).episode_length
    assert tuple(zip(base.phase_names, base.phase_starts, strict=True)) == table.PHASES[env_id]
    # spaces, reset, step
    assert env.action_space.shape == (8,)  # pd_joint_delta_pos: 7 arm joints + gripper
    assert env.observation_space["state"].shape == (d,)
    obs, info = env.reset(seed=3)
    assert set(obs) == {"state"} and obs["state"].shape == (d,) and obs["state"].dtype == np.float32
    assert obs in env.observation_space
    assert info["oracle"].shape == (k,) and info["oracle"].dtype == dtype
    np.testing.assert_array_equal(obs["state"][-k:], info["oracle"])  # the oracle ends the state
    assert info["elapsed_steps"] == 0 and info["phase"] == 0 and info["success"] is False
    first = obs["state"].copy()
    for t in (1, 2):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert obs in env.observation_space and info["elapsed_steps"] == t
        assert isinstance(reward, float) and np.isfinite(reward)
        assert isinstance(terminated, bool) and isinstance(truncated, bool)
        assert isinstance(info["success"], bool) and isinstance(info["success_once"], bool)
        assert info["oracle"].shape == (k,) and info["oracle"].dtype == dtype
        np.testing.assert_array_equal(obs["state"][-k:], info["oracle"])
    # the same seed: the same first state; seeds vary the task
    np.testing.assert_allclose(env.reset(seed=3)[0]["state"], first, rtol=0, atol=1e-6)
    assert len({tuple(env.reset(seed=s)[1]["oracle"]) for s in range(6)}) > 1
    # includes: info values never alias between calls. Its close check (a second env built, closed twice) is the
    # base's close, shared by every ID: test_platform's checker run on the images keeps it.
    check_env(env, skip_render_check=True, skip_close_check=True)
