"""Inputs mean what they say: every kwarg of every ID is checked against its declared type and range, with one
clear error naming the kwarg, the value and what is allowed. The cases are collected from the catalogue
(``TaskSpec.params``), not listed by hand, so a new ID or kwarg is covered as soon as it is declared.

MIKASA-Robo IDs are included: their kwargs are checked before ManiSkill is imported, so no simulator runs here.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv
from membench_envs.envs.core.params import Param, check_kwargs

import membench_envs
from tests.envs._helpers import SLOW_EXTRAS, extra_installed

#: kwargs fixed by an ID's registration: checked too, but a user never passes them.
_REGISTRATION = {"robo_env", "membench_id", "family", "difficulty"}


def _cases(kind: str, vector: bool = False):
    out = []
    for spec in membench_envs.all_tasks():
        params = spec.vector_params if vector else spec.params
        for p in params:
            if p.kind == kind:
                out.append(pytest.param(spec.id, p, id=f"{spec.id}:{p.name}"))
    return out


def _make(env_id: str, **kwargs):
    spec = membench_envs.info(env_id)
    if spec.extra not in (None, "robo") and not extra_installed(spec.extra):
        pytest.skip(f"extra [{spec.extra}] not installed")
    return gym.make(env_id, **kwargs)


def _expect(error: type[Exception], name: str, value, env_id: str, **extra):
    # The message names the kwarg with its value, and says what is allowed.
    pattern = re.escape(f"{name}={value!r} is not allowed; {name} must be ")
    with pytest.raises(error, match=pattern):
        _make(env_id, **{name: value}, **extra)


def test_every_declared_kwarg_of_every_id_is_collected():
    kinds = {p.kind for s in membench_envs.all_tasks() for p in s.params}
    assert kinds == {"bool", "int", "float", "choice", "ints", "floats"}
    for spec in membench_envs.all_tasks():
        assert spec.params, f"{spec.id} declares no kwargs"
        assert set(spec.kwargs) <= {p.name for p in spec.params}


# --- bools: strings and numbers are not bools ------------------------------------------------------------------
@pytest.mark.parametrize("env_id,param", _cases("bool"))
@pytest.mark.parametrize("value", ["False", "no", 1])
def test_bool_kwarg_given_a_string_or_number_is_a_type_error(env_id, param, value):
    _expect(TypeError, param.name, value, env_id)


def test_string_false_no_longer_turns_the_dense_penalty_on():
    with pytest.raises(TypeError, match="penalty='False'"):
        gym.make("MIKASA/TMazePassive-v0", penalty="False")
    env = gym.make("MIKASA/TMazePassive-v0", penalty=np.bool_(False))
    env.reset(seed=0)
    assert env.step(1)[1] == 0.0  # no dense penalty for a wasted step


# --- ints: floats, strings and bools are not ints; the range is enforced ---------------------------------------
@pytest.mark.parametrize("env_id,param", _cases("int"))
@pytest.mark.parametrize("value", [2.5, 3.0, "3", True])
def test_int_kwarg_given_a_non_int_is_a_type_error(env_id, param, value):
    _expect(TypeError, param.name, value, env_id)


@pytest.mark.parametrize("env_id,param", [c for c in _cases("int") if c.values[1].low is not None])
def test_int_kwarg_below_its_range_is_a_value_error(env_id, param):
    _expect(ValueError, param.name, int(param.low) - 1, env_id)


@pytest.mark.parametrize("env_id,param", [c for c in _cases("int") if c.values[1].high is not None])
def test_int_kwarg_above_its_range_is_a_value_error(env_id, param):
    _expect(ValueError, param.name, int(param.high) + 1, env_id)


@pytest.mark.parametrize("env_id,param", [c for c in _cases("int") if c.values[1].odd])
def test_odd_int_kwarg_given_an_even_int_is_a_value_error(env_id, param):
    _expect(ValueError, param.name, int(param.low) + 1, env_id)


@pytest.mark.parametrize("env_id,param", _cases("int", vector=True))
def test_vector_int_kwargs_are_checked(env_id, param):
    with pytest.raises(TypeError, match=re.escape(f"{param.name}=2.5 is not allowed")):
        gym.make_vec(env_id, **{param.name: 2.5, **({} if param.name == "num_envs" else {"num_envs": 2})})
    with pytest.raises(ValueError, match=re.escape(f"{param.name}=0 is not allowed")):
        gym.make_vec(env_id, **{param.name: 0, **({} if param.name == "num_envs" else {"num_envs": 2})})


@pytest.mark.parametrize("env_id", [s.id for s in membench_envs.all_tasks()])
def test_make_vec_num_envs_is_checked_for_every_id(env_id):
    """gym.make_vec's default (the native batched env, else gymnasium's SyncVectorEnv through
    registration.SyncVector): num_envs=0 used to be an IndexError on the IDs without a native batched env."""
    spec = membench_envs.info(env_id)
    if spec.extra not in (None, "robo") and not extra_installed(spec.extra):
        pytest.skip(f"extra [{spec.extra}] not installed")
    for bad, error in ((0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(error, match=re.escape(f"num_envs={bad!r} is not allowed; num_envs must be an int >= 1")):
            gym.make_vec(env_id, num_envs=bad)


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


def test_minigrid_max_steps_zero_is_a_clear_error_not_a_zero_division():
    pytest.importorskip("minigrid")
    with pytest.raises(ValueError, match="max_steps=0 is not allowed; max_steps must be an int >= 1"):
        gym.make("MIKASA/MiniGridMemoryS13-v0", max_steps=0, obs_variant="full")


# --- floats ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id,param", _cases("float"))
@pytest.mark.parametrize("value", ["0.1", float("nan"), True])
def test_float_kwarg_given_a_non_number_is_a_type_error(env_id, param, value):
    _expect(TypeError, param.name, value, env_id)


@pytest.mark.parametrize("env_id,param", [c for c in _cases("float") if c.values[1].low is not None])
def test_float_kwarg_below_its_range_is_a_value_error(env_id, param):
    _expect(ValueError, param.name, param.low if param.low_open else param.low - 0.5, env_id)


# --- choices and sequences --------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id,param", _cases("choice"))
def test_choice_kwarg_outside_its_choices_is_a_value_error(env_id, param):
    """A value of the choices' type that is not one of them is a ValueError, one of another type a TypeError."""
    if isinstance(param.choices[0], str):
        _expect(ValueError, param.name, "nope", env_id)
        if param.name not in _REGISTRATION:
            _expect(TypeError, param.name, 3, env_id)
    else:  # int choices: numpy integers are ints, bools and floats are not
        _expect(ValueError, param.name, max(param.choices) + 1, env_id)
        for wrong in ("nope", True, float(param.choices[0])):
            _expect(TypeError, param.name, wrong, env_id)


@pytest.mark.parametrize("env_id,param", _cases("ints") + _cases("floats"))
def test_sequence_kwarg_of_wrong_length_or_type_is_a_clear_error(env_id, param):
    _expect(ValueError, param.name, (1, 2, 3, 4, 5) if param.length is not None else (), env_id)
    _expect(TypeError, param.name, "red", env_id)
    _expect(TypeError, param.name, (1, "a", 2), env_id)


@pytest.mark.parametrize("env_id,param", [c for c in _cases("ints") + _cases("floats") if c.values[1].length is None])
def test_sequence_kwarg_of_any_length_is_bounded_where_it_is_declared(env_id, param):
    """A list of any length declares its longest (refused before its items are looked at; the message shows its
    length, not the items); a list of counts that size an allocation bounds its items too."""
    bound = param.max_length
    assert bound is not None and bound <= 1000
    ok = int(param.low) if param.low is not None else 1
    with pytest.raises(ValueError, match=re.escape(f"{param.name}=<a sequence of {bound + 1}: {ok!r}, {ok!r}, {ok!r}, "
                                                   f"...> is not allowed; {param.name} must be a non-empty sequence "
                                                   f"of at most {bound} ")):
        _make(env_id, **{param.name: [ok] * (bound + 1)})


def test_mortar_mayhem_command_count_is_bounded_not_allocated():
    """command_count=[10**9] used to allocate 7.45 GiB (one array of that many commands per environment)."""
    _expect(ValueError, "command_count", [10**9], "MIKASA/MortarMayhem-v0")
    _expect(ValueError, "max_commands", 10**9, "MIKASA/EndlessMortarMayhem-v0")
    with pytest.raises(ValueError, match=re.escape("command_count=[1001] is not allowed")):
        gym.make_vec("MIKASA/MortarMayhem-v0", num_envs=2, command_count=[1001])
    gym.make("MIKASA/MortarMayhem-v0", command_count=[1000]).close()  # the bound itself is allowed


def test_a_sequence_param_of_any_length_must_declare_its_bound():
    with pytest.raises(ValueError, match="a sequence of any length needs max_length"):
        Param("counts", "ints", (1,), low=1)
    Param("rgb", "ints", (0, 0, 0), length=3)  # a fixed length is its own bound
    with pytest.raises(ValueError, match="choices must be all strings or all ints"):
        Param("mode", "choice", "a", choices=("a", 1))


@pytest.mark.parametrize("env_id", [s.id for s in membench_envs.all_tasks() if s.extra != "robo"])
def test_unknown_kwarg_is_a_type_error_naming_it(env_id):
    with pytest.raises(TypeError, match="corridor_lenght"):
        _make(env_id, corridor_lenght=3)


def test_the_layer_itself():
    p = (Param("n", "int", 1, low=1), Param("flag", "bool", False), Param("hz", "choice", 4, choices=(4, 40)))
    assert check_kwargs("T", p, {"n": np.int64(3)}) == {"n": 3, "flag": False, "hz": 4}
    assert check_kwargs("T", p, {"hz": np.int64(40)})["hz"] == 40
    assert type(check_kwargs("T", p, {"hz": np.int64(40)})["hz"]) is int
    with pytest.raises(TypeError, match=r"T: unknown kwarg 'm'; valid kwargs: n, flag"):
        check_kwargs("T", p, {"m": 1})
    assert check_kwargs("T", p, {"m": 1}, pass_through=True)["m"] == 1


# --- reset seeds --------------------------------------------------------------------------------------------------
#: (Memory Maze's seeded reset rebuilds its MuJoCo task, ~3 s: tests/envs/test_memory_maze.py checks its seeds.)
_FAST = [s.id for s in membench_envs.all_tasks() if s.extra not in SLOW_EXTRAS]


@pytest.mark.parametrize("env_id", _FAST)
def test_non_integer_or_negative_seed_is_a_clear_error(env_id):
    env = _make(env_id)
    for bad, error in ((1.5, TypeError), ("1", TypeError), (True, TypeError), (-1, ValueError)):
        with pytest.raises(error, match=re.escape(f"seed={bad!r} is not allowed")):
            env.reset(seed=bad)
    env.reset(seed=np.int64(3))


@pytest.mark.parametrize("env_id", [s.id for s in membench_envs.all_tasks() if s.vector_params])
def test_vector_reset_seed_errors(env_id):
    venv = gym.make_vec(env_id, num_envs=2)
    for bad in (1.5, "1", np.array([1, 2])):
        with pytest.raises(TypeError, match="is not allowed; seed must be None, an int >= 0 or a list"):
            venv.reset(seed=bad)
    with pytest.raises(TypeError, match=re.escape("seed=2.5 is not allowed")):
        venv.reset(seed=[1, 2.5])
    with pytest.raises(ValueError, match="got 3 seeds for 2 environments"):
        venv.reset(seed=[1, 2, 3])


# --- actions -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", [s.id for s in membench_envs.all_tasks() if s.action_type == "multi-discrete"])
def test_non_integer_multidiscrete_action_is_a_value_error(env_id):
    env = _make(env_id)
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
    ref = SyncVectorEnv([lambda: gym.make(env_id, **kw) for _ in range(n)],
                        autoreset_mode=gym.vector.AutoresetMode(mode))
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
    obs, info = venv.reset(seed=[None, 7, None], options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(obs[[0, 2]], before[[0, 2]])  # untouched
    single = gym.make("MIKASA/TMazePassive-v0", obs_variant="full")
    np.testing.assert_array_equal(obs[1], single.reset(seed=7)[0])  # env 1 starts seed 7's episode
    assert obs[1][0] == 0.0 and obs[1][3] == 0.0  # x = 0, t = 0


def test_reset_mask_errors_follow_sync_vector_env():
    venv = gym.make_vec("MIKASA/TMazePassive-v0", num_envs=3)
    with pytest.raises(gym.error.ResetNeeded, match="reset once"):
        venv.reset(options={"reset_mask": np.array([True, False, False])})
    venv.reset(seed=0)
    for bad, error in (([True, False, True], TypeError), (np.array([1, 0, 1]), TypeError),
                       (np.array([True, False]), ValueError), (np.zeros(3, dtype=bool), ValueError)):
        with pytest.raises(error, match="reset_mask"):
            venv.reset(options={"reset_mask": bad})
