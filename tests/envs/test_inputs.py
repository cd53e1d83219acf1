"""Inputs mean what they say: each ID's entry point checks exactly the kwargs it declares (``TaskSpec.params``), each
through its ``Param`` (whose kinds tests/envs/test_params.py unit-tests), and ``gym.make_vec`` checks ``num_envs``;
bad seeds, actions and reset masks are one clear error. The cases come from the catalogue, so a new ID or kwarg is
covered as soon as it is declared. What IDs of one family share (reset, step) is tested on one representative each.

MIKASA-Robo IDs are included where their kwargs are checked before ManiSkill is imported, so no simulator runs here.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv
from membench_envs.envs.core.native import NativeVectorEnv
from membench_envs.envs.core.params import Param
from membench_envs.registration import SyncVector

import membench_envs
from tests.envs._helpers import family_representatives, ids_with_extra_installed, load_entry_point

ALL = ids_with_extra_installed(exclude_extras=())


def _wrong(p: Param):
    """A value ``p`` refuses, and the error: another type (TypeError), or for a choice one of its type that is not a
    choice (ValueError; a registration kwarg such as ``robo_env`` may be looked up before its type is)."""
    if p.kind == "choice":
        return ("nope", ValueError) if isinstance(p.choices[0], str) else (max(p.choices) + 1, ValueError)
    return {"bool": "no", "int": 2.5, "float": "0.1", "ints": "red", "floats": "red"}[p.kind], TypeError


def _refused(make, p: Param, exact: bool = True) -> None:
    """``make(p.name=<a wrong value>)`` is refused with ``p``'s message (``exact``: naming what ``p`` allows)."""
    value, error = _wrong(p)
    allowed = re.escape(p.allowed()) if exact else ""
    with pytest.raises(error, match=re.escape(f"{p.name}={value!r} is not allowed; {p.name} must be ") + allowed):
        make(**{p.name: value})


@pytest.mark.parametrize("env_id", ALL)
def test_the_entry_points_check_exactly_the_declared_kwargs(env_id):
    """Every declared kwarg reaches its Param's check, an undeclared one is refused with the list of the declared
    ones, and make_vec checks num_envs (and a native batched env its own vector kwargs) the same way."""
    spec = membench_envs.info(env_id)
    assert spec.params and set(spec.kwargs) <= {p.name for p in spec.params}
    for p in spec.params:  # (a MIKASA-Robo ID narrows its family's membench_id choices to itself)
        _refused(lambda **kw: gym.make(env_id, **kw), p, exact=spec.extra != "robo")
    if spec.extra != "robo":  # (ManiSkill's own constructor refuses those)
        names = ", ".join(p.name for p in spec.params)
        with pytest.raises(TypeError, match=re.escape(f"unknown kwarg 'corridor_lenght'; valid kwargs: {names}")):
            gym.make(env_id, corridor_lenght=3)
    for bad, error in ((0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(error, match=re.escape(f"num_envs={bad!r} is not allowed; num_envs must be an int >= 1")):
            gym.make_vec(env_id, num_envs=bad)
    for p in spec.vector_params:
        if p.name != "num_envs":
            _refused(lambda **kw: gym.make_vec(env_id, num_envs=2, **kw), p)


def test_every_id_has_a_vector_entry_point_native_or_sync():
    """gym.make_vec's default path: the native batched env where the catalogue names one, else registration's
    SyncVector (gymnasium's SyncVectorEnv([]) used to fail with an IndexError on num_envs=0)."""
    for spec in membench_envs.all_tasks():
        entry = gym.spec(spec.id).vector_entry_point
        if spec.vector_entry_point is None:
            assert isinstance(entry, SyncVector) and entry.env_id == spec.id
        else:
            assert entry == spec.vector_entry_point and callable(load_entry_point(entry))
            if spec.vector_params:  # the native numpy batched envs (MIKASA-Robo's is ManiSkill's GPU batch)
                assert issubclass(load_entry_point(entry), NativeVectorEnv), spec.id


def test_every_sequence_of_any_length_is_bounded_where_it_is_declared():
    """A list of any length declares its longest (so command_count=[10**9] is refused, never allocated)."""
    for spec in membench_envs.all_tasks():
        for p in spec.params:
            if p.kind in ("ints", "floats") and p.length is None:
                assert p.max_length is not None and p.max_length <= 1000, (spec.id, p.name)


def test_string_false_no_longer_turns_the_dense_penalty_on():
    with pytest.raises(TypeError, match="penalty='False'"):
        gym.make("MIKASA/TMazePassive-v0", penalty="False")
    env = gym.make("MIKASA/TMazePassive-v0", penalty=np.bool_(False))
    env.reset(seed=0)
    assert env.step(1)[1] == 0.0  # no dense penalty for a wasted step


def test_mortar_mayhem_command_count_is_bounded_not_allocated():
    """command_count=[10**9] used to allocate 7.45 GiB (one array of that many commands per environment)."""
    for env_id, name, value in (
        ("MIKASA/MortarMayhem-v0", "command_count", [10**9]),
        ("MIKASA/EndlessMortarMayhem-v0", "max_commands", 10**9),
    ):
        with pytest.raises(ValueError, match=re.escape(f"{name}={value!r} is not allowed")):
            gym.make(env_id, **{name: value})
    with pytest.raises(ValueError, match=re.escape("command_count=[1001] is not allowed")):
        gym.make_vec("MIKASA/MortarMayhem-v0", num_envs=2, command_count=[1001])
    gym.make("MIKASA/MortarMayhem-v0", command_count=[1000]).close()  # the bound itself is allowed


def test_minigrid_max_steps_zero_is_a_clear_error_not_a_zero_division():
    pytest.importorskip("minigrid")
    with pytest.raises(ValueError, match="max_steps=0 is not allowed; max_steps must be an int >= 1"):
        gym.make("MIKASA/MiniGridMemoryS13-v0", max_steps=0, obs_variant="full")


def test_make_vec_of_an_id_without_a_native_batched_env_is_a_sync_vector_env():
    pytest.importorskip("popgym")
    from gymnasium.vector import AutoresetMode

    env_id = "POPGym/RepeatFirstEasy-v0"
    venv = gym.make_vec(env_id, num_envs=2)
    assert isinstance(venv, SyncVectorEnv) and venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, _ = venv.reset(seed=0)
    np.testing.assert_array_equal(obs[0], gym.make(env_id).reset(seed=0)[0])  # copy i is seeded with seed + i
    venv = gym.make_vec(env_id, num_envs=2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP


# --- reset seeds and actions: one ID per family ---------------------------------------------------------------------
@pytest.mark.parametrize("env_id", family_representatives())
def test_non_integer_or_negative_seed_is_a_clear_error(env_id):
    env = gym.make(env_id)
    for bad, error in ((1.5, TypeError), ("1", TypeError), (True, TypeError), (-1, ValueError)):
        with pytest.raises(error, match=re.escape(f"seed={bad!r} is not allowed")):
            env.reset(seed=bad)
    env.reset(seed=np.int64(3))


@pytest.mark.parametrize("env_id", family_representatives(native_batched=True))
def test_vector_reset_seed_errors(env_id):
    venv = gym.make_vec(env_id, num_envs=2)
    for bad in (1.5, "1", np.array([1, 2])):
        with pytest.raises(TypeError, match="is not allowed; seed must be None, an int >= 0 or a list"):
            venv.reset(seed=bad)
    with pytest.raises(TypeError, match=re.escape("seed=2.5 is not allowed")):
        venv.reset(seed=[1, 2.5])
    with pytest.raises(ValueError, match="got 3 seeds for 2 environments"):
        venv.reset(seed=[1, 2, 3])


@pytest.mark.parametrize("env_id", family_representatives(action_type="multi-discrete"))
def test_non_integer_multidiscrete_action_is_a_value_error(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not an array of integers"):
        env.step(np.array([3.9, 2.7]))
    with pytest.raises(ValueError, match="not an array of integers"):
        env.step(np.array([1.0, 0.5]))
    env.step(np.array([1.0, 2.0]))  # integer-valued floats are integers


# --- reset_mask on the native vector envs, against gymnasium's SyncVectorEnv -------------------------------------
_MASK_IDS = ["MIKASA/TMazePassive-v0", "MIKASA/TMazeClassic-v0", "MIKASA/MemoryCards-v0", "MIKASA/MemoryLength-v0"]


@pytest.mark.parametrize("env_id", _MASK_IDS)
@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_reset_mask_resets_only_the_masked_envs_as_sync_vector_env(env_id, mode):
    n, kw = 4, ({"corridor_length": 2} if "TMaze" in env_id else {"memory_length": 2} if "Length" in env_id else {})
    ours = gym.make_vec(env_id, num_envs=n, autoreset_mode=mode, **kw)
    ref = SyncVectorEnv(
        [lambda: gym.make(env_id, **kw) for _ in range(n)], autoreset_mode=gym.vector.AutoresetMode(mode)
    )
    rng = np.random.default_rng(0)

    def same(a, b):  # observations, and rewards / terminated / truncated of a step
        k = 4 if len(a) == 5 else 1
        for x, y in zip(a[:k], b[:k], strict=True):
            np.testing.assert_array_equal(x, y)

    same(ours.reset(seed=10), ref.reset(seed=10))
    for t in range(12):
        actions = ours.action_space.sample() if t % 2 else rng.integers(0, ours.single_action_space.n, n)
        same(ours.step(actions), ref.step(actions))
        if t in (4, 9):
            mask = np.array([True, False, t == 4, False])
            seed = None if t == 4 else [None, None, None, None]
            o, info = ours.reset(seed=seed, options={"reset_mask": mask})
            r, rinfo = ref.reset(seed=seed, options={"reset_mask": mask})
            np.testing.assert_array_equal(o, r)
            np.testing.assert_array_equal(info["_oracle"], mask)
            np.testing.assert_array_equal(info["oracle"][mask], rinfo["oracle"][mask])


def test_reset_mask_keeps_the_other_envs_state_and_reseeds_masked_ones():
    venv = gym.make_vec("MIKASA/TMazePassive-v0", num_envs=3, obs_variant="full")
    obs, _ = venv.reset(seed=0)
    obs, *_ = venv.step(np.array([0, 0, 0]))  # everyone one step towards the junction
    before = obs.copy()
    obs, _info = venv.reset(seed=[None, 7, None], options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(obs[[0, 2]], before[[0, 2]])  # untouched
    single = gym.make("MIKASA/TMazePassive-v0", obs_variant="full")
    np.testing.assert_array_equal(obs[1], single.reset(seed=7)[0])  # env 1 starts seed 7's episode
    assert obs[1][0] == 0.0 and obs[1][3] == 0.0  # x = 0, t = 0


def test_reset_mask_errors_follow_sync_vector_env():
    venv = gym.make_vec("MIKASA/TMazePassive-v0", num_envs=3)
    with pytest.raises(gym.error.ResetNeeded, match="reset once"):
        venv.reset(options={"reset_mask": np.array([True, False, False])})
    venv.reset(seed=0)
    for bad, error in (
        ([True, False, True], TypeError),
        (np.array([1, 0, 1]), TypeError),
        (np.array([True, False]), ValueError),
        (np.zeros(3, dtype=bool), ValueError),
    ):
        with pytest.raises(error, match="reset_mask"):
            venv.reset(options={"reset_mask": bad})
