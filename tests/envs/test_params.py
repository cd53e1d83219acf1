"""The one validation layer of every kwarg (:mod:`membench_envs.envs.core.params`), unit-tested per kind of parameter.

Every ID declares its kwargs as ``Param`` s and its entry point checks them with ``check_kwargs``
(tests/envs/test_inputs.py checks that per ID); what a kind accepts and refuses is tested here, once.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from membench_envs.envs.core.params import KINDS, OBS_VARIANT, VARIANTS, Param, check_kwargs, check_seed, describe

import membench_envs


def refused(param: Param, value, error: type[Exception]) -> None:
    """``param.check(value)`` raises ``error`` with the one-sentence message: owner, kwarg=value, what is allowed."""
    pattern = re.escape(f"T: {param.name}={value!r} is not allowed; {param.name} must be {param.allowed()}")
    with pytest.raises(error, match=f"^{pattern}$"):
        param.check(value, "T")


def test_every_kind_an_id_declares_is_tested_here():
    declared = {p.kind for spec in membench_envs.all_tasks() for p in spec.params}
    assert declared == set(KINDS) == {"bool", "int", "float", "choice", "ints", "floats"}


# --- bool ---------------------------------------------------------------------------------------------------------
def test_bool_takes_true_false_or_a_numpy_bool_only():
    p = Param("penalty", "bool", False)
    assert p.check(True) is True and p.check(np.bool_(False)) is False
    assert p.allowed() == "a bool (True or False)"
    for value in ("False", "no", 1, 0, 1.0, None):  # 'False' is a non-empty string: it used to turn the flag on
        refused(p, value, TypeError)


# --- int ----------------------------------------------------------------------------------------------------------
def test_int_takes_python_and_numpy_ints_never_bools_floats_or_strings():
    p = Param("n", "int", 1)
    assert p.check(np.int64(3)) == 3 and type(p.check(np.int64(3))) is int
    assert p.allowed() == "an int"
    for value in (2.5, 3.0, "3", True, np.bool_(True), None):
        refused(p, value, TypeError)


def test_int_bounds_are_inclusive_and_odd_is_enforced():
    p = Param("size", "int", 13, low=7, high=15, odd=True)
    assert p.allowed() == "an odd int >= 7 and <= 15"
    assert p.check(7) == 7 and p.check(15) == 15
    for value in (5, 17, 8, -1):
        refused(p, value, ValueError)


def test_int_with_none_ok_takes_none_for_its_default():
    p = Param("max_steps", "int", None, low=1, none_ok=True)
    assert p.check(None) is None and p.allowed() == "an int >= 1, or None"
    refused(p, 0, ValueError)
    refused(Param("max_steps", "int", 1, low=1), None, TypeError)  # without none_ok, None is a wrong type


# --- float --------------------------------------------------------------------------------------------------------
def test_float_takes_any_finite_real_number_never_a_bool_a_string_or_nan():
    p = Param("reward", "float", 0.1)
    assert p.check(0.25) == 0.25 and p.check(np.float32(0.5)) == 0.5 and p.check(2) == 2
    assert type(p.check(np.float64(0.5))) is float
    assert p.allowed() == "a finite number"
    for value in ("0.1", float("nan"), float("inf"), True, None):
        refused(p, value, TypeError)


def test_float_bounds_and_an_open_lower_bound():
    p = Param("speed", "float", 0.5, low=0.0, low_open=True, high=1.0)
    assert p.allowed() == "a finite number > 0 and <= 1"
    assert p.check(1.0) == 1.0 and p.check(1e-9) == 1e-9
    for value in (0.0, -0.5, 1.5):
        refused(p, value, ValueError)
    closed = Param("damage", "float", 1.0, low=0.0)
    assert closed.check(0.0) == 0.0
    refused(closed, -0.5, ValueError)


# --- choice -------------------------------------------------------------------------------------------------------
def test_string_choice_refuses_other_strings_with_a_value_error_and_other_types_with_a_type_error():
    p = OBS_VARIANT
    assert p.choices == VARIANTS and p.default == "partial"
    assert p.check("oracle") == "oracle"
    assert p.allowed() == "one of 'partial', 'oracle', 'full'"
    refused(p, "privileged", ValueError)
    for value in (3, None, b"oracle"):
        refused(p, value, TypeError)


def test_int_choice_takes_numpy_ints_never_bools_floats_or_strings():
    p = Param("hz", "choice", 4, choices=(4, 40))
    assert p.check(np.int64(40)) == 40 and type(p.check(np.int64(40))) is int
    refused(p, 5, ValueError)
    for value in (True, 4.0, "4"):
        refused(p, value, TypeError)


# --- sequences ----------------------------------------------------------------------------------------------------
def test_sequence_of_a_fixed_length_or_one_of_several_lengths():
    rgb = Param("rgb", "ints", (0, 0, 0), low=0, high=255, length=3)
    assert rgb.check([1, np.int64(2), 3]) == (1, 2, 3) and rgb.check(np.array([4, 5, 6])) == (4, 5, 6)
    assert rgb.allowed() == "a sequence of 3 ints, each >= 0 and <= 255"
    refused(rgb, (1, 2), ValueError)
    refused(rgb, (1, 2, 256), ValueError)  # an item out of its bounds
    two_or_three = Param("pos", "floats", (0.0, 0.0), length=(2, 3))
    assert two_or_three.check((1, 2.5, 3)) == (1, 2.5, 3)
    assert two_or_three.allowed() == "a sequence of 2 or 3 numbers"
    refused(two_or_three, (1.0,), ValueError)


def test_sequence_refuses_strings_mappings_nested_and_wrong_items_with_a_type_error():
    p = Param("counts", "ints", (1,), low=1, max_length=4)
    for value in ("red", b"ab", {"a": 1}, 3, [[1, 2]], (1, "a", 2), (1, 2.5), (True,), None):
        refused(p, value, TypeError)
    floats = Param("radii", "floats", (1.0,), max_length=4)
    assert floats.check((1, 2.5)) == (1, 2.5)
    refused(floats, (1.0, float("nan")), TypeError)


def test_sequence_of_any_length_is_non_empty_and_bounded_before_its_items_are_read():
    p = Param("command_count", "ints", (10,), low=1, high=1000, max_length=100)
    assert p.allowed() == "a non-empty sequence of at most 100 ints, each >= 1 and <= 1000"
    assert p.check(range(1, 101)) == tuple(range(1, 101))
    refused(p, (), ValueError)
    refused(p, [10**9], ValueError)
    # too long: refused by its length, and the message shows the length and the first items, not all of them
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"T: command_count=<a sequence of 101: 1, 1, 1, ...> is not allowed; command_count must be {p.allowed()}"
        ),
    ):
        p.check([1] * 101, "T")


# --- declaring a Param ---------------------------------------------------------------------------------------------
def test_a_param_is_declared_consistently():
    with pytest.raises(ValueError, match="kind must be one of"):
        Param("x", "str")
    with pytest.raises(ValueError, match="a choice needs choices"):
        Param("mode", "choice", "a")
    with pytest.raises(ValueError, match="choices must be all strings or all ints"):
        Param("mode", "choice", "a", choices=("a", 1))
    with pytest.raises(ValueError, match="a sequence of any length needs max_length"):
        Param("counts", "ints", (1,), low=1)
    Param("rgb", "ints", (0, 0, 0), length=3)  # a fixed length is its own bound


# --- the layer: kwargs, seeds, docs ---------------------------------------------------------------------------------
def test_check_kwargs_normalises_fills_defaults_and_names_the_valid_kwargs():
    p = (Param("n", "int", 1, low=1), Param("flag", "bool", False), Param("hz", "choice", 4, choices=(4, 40)))
    assert check_kwargs("T", p, {"n": np.int64(3)}) == {"n": 3, "flag": False, "hz": 4}
    assert type(check_kwargs("T", p, {"hz": np.int64(40)})["hz"]) is int
    with pytest.raises(TypeError, match=r"^T: unknown kwarg 'm'; valid kwargs: n, flag, hz$"):
        check_kwargs("T", p, {"m": 1})
    with pytest.raises(TypeError, match=r"^T: unknown kwarg 'm'; valid kwargs: none$"):
        check_kwargs("T", (), {"m": 1})
    assert check_kwargs("T", p, {"m": 1}, pass_through=True)["m"] == 1
    with pytest.raises(ValueError, match="T: n=0 is not allowed"):  # the owner names who checked
        check_kwargs("T", p, {"n": 0})


def test_check_seed_takes_none_or_an_int_from_zero():
    assert check_seed(None) is None and check_seed(np.int64(3)) == 3 and type(check_seed(np.int64(3))) is int
    for bad, error in (
        (1.5, TypeError),
        ("1", TypeError),
        (True, TypeError),
        (np.bool_(True), TypeError),
        (-1, ValueError),
    ):
        with pytest.raises(
            error, match=re.escape(f"R.reset: seed={bad!r} is not allowed; seed must be None or an int >= 0")
        ):
            check_seed(bad, "R.reset")


def test_describe_lists_each_kwarg_with_what_it_allows_and_its_default():
    text = describe((Param("n", "int", 1, low=1, doc="how many"), Param("flag", "bool", False)))
    assert text == "n: an int >= 1 (default 1) - how many\nflag: a bool (True or False) (default False)"
