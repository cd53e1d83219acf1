"""The one validation layer for the keyword arguments of every membench environment.

Each task declares its kwargs once, as a tuple of :class:`Param` (in its catalogue module, so the catalogue can
list them without importing a backend); the entry point checks what the user passed with :func:`check_kwargs`
before building anything. A bad kwarg gives one error naming the kwarg, the value and what is allowed:

- a value of the wrong type -> ``TypeError`` (``penalty='False'``: a string is not a bool; ``num_pairs=2.5``);
- a value of the right type outside the allowed range or set -> ``ValueError`` (``max_steps=0``);
- a kwarg the task does not take -> ``TypeError`` listing the valid ones.

Types are strict on purpose: a bool kwarg takes ``True`` / ``False`` (or a numpy bool) only, never ``1`` or
``"no"``; an int kwarg takes a Python or numpy integer, never a bool or a float (even ``3.0``); a float kwarg
takes any finite real number (ints included), never a bool. This module imports only numpy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

KINDS = ("bool", "int", "float", "choice", "ints", "floats")

#: The memory-improvability ladder every ID supports (its ``obs_variant`` kwarg).
VARIANTS = ("partial", "oracle", "full")


@dataclass(frozen=True)
class Param:
    """One keyword argument: its name, kind and allowed values.

    ``kind``: ``"bool"``, ``"int"``, ``"float"``, ``"choice"`` (one of ``choices``: strings, or ints), ``"ints"`` /
    ``"floats"`` (a sequence of ``length`` numbers, or, when ``length`` is None, a non-empty one of at most
    ``max_length``, each within the bounds). ``low`` / ``high`` bound numbers (inclusive; ``low_open=True`` makes
    the lower bound exclusive), ``odd`` requires an odd int, ``none_ok`` lets ``None`` through (meaning "the
    default"), ``default`` is what the entry point uses when the kwarg is not given.

    A sequence of any length must declare ``max_length``, and a number that sizes an allocation (a per-episode
    array, an observation) its ``high``, where the kwarg is declared: ``command_count=[10**9]`` would otherwise
    ask for gigabytes before any error.
    """

    name: str
    kind: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    odd: bool = False
    choices: tuple[Any, ...] = ()
    length: int | tuple[int, ...] | None = None
    max_length: int | None = None
    none_ok: bool = False
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Param {self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"Param {self.name}: a choice needs choices")
        if self.kind == "choice" and not (
            all(isinstance(c, str) for c in self.choices)
            or all(_number(c, integer=True) is not None for c in self.choices)
        ):
            raise ValueError(f"Param {self.name}: choices must be all strings or all ints")
        if self.kind in ("ints", "floats") and self.length is None and self.max_length is None:
            raise ValueError(f"Param {self.name}: a sequence of any length needs max_length")

    # --- what is allowed, in words ---------------------------------------------------------------------------
    def _bounds(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        return " and ".join(parts)

    def allowed(self) -> str:
        """What the kwarg accepts, e.g. ``"an odd int >= 7"``."""
        if self.kind == "bool":
            text = "a bool (True or False)"
        elif self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind in ("int", "float"):
            noun = ("an odd int" if self.odd else "an int") if self.kind == "int" else "a finite number"
            bounds = self._bounds()
            text = f"{noun} {bounds}" if bounds else noun
        else:
            n = self.length if not isinstance(self.length, tuple) else " or ".join(map(str, self.length))
            noun = "ints" if self.kind == "ints" else "numbers"
            bounds = self._bounds()
            text = (
                f"a sequence of {n} {noun}"
                if n is not None
                else f"a non-empty sequence of at most {self.max_length} {noun}"
            )
            if bounds:
                text += f", each {bounds}"
        return text + (", or None" if self.none_ok else "")

    # --- the check -------------------------------------------------------------------------------------------
    def _fail(self, owner: str, value: Any, error: type[Exception]) -> Exception:
        return error(f"{owner}: {self.name}={value!r} is not allowed; {self.name} must be {self.allowed()}")

    def _in_bounds(self, x: float) -> bool:
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        return self.high is None or x <= self.high

    def check(self, value: Any, owner: str = "") -> Any:
        """Return ``value`` normalised (Python bool / int / float / tuple), or raise TypeError / ValueError."""
        owner = owner or "membench_envs"
        if value is None:
            if self.none_ok:
                return None
            raise self._fail(owner, value, TypeError)
        kind = self.kind
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise self._fail(owner, value, TypeError)
            return bool(value)
        if kind == "choice":
            return self._check_choice(value, owner)
        if kind in ("int", "float"):
            return self._check_number(value, owner)
        return self._check_sequence(value, owner)

    def _check_choice(self, value: Any, owner: str) -> Any:
        given: str | int | float | None
        if isinstance(self.choices[0], str):
            given = value if isinstance(value, str) else None
        else:  # ints: numpy integers too, never a bool or a float
            given = _number(value, integer=True)
        if given is None:  # not of the choices' type
            raise self._fail(owner, value, TypeError)
        if given not in self.choices:
            raise self._fail(owner, value, ValueError)
        return given

    def _check_number(self, value: Any, owner: str) -> int | float:
        number = _number(value, integer=self.kind == "int")
        if number is None:
            raise self._fail(owner, value, TypeError)
        if not self._in_bounds(number) or (self.odd and number % 2 == 0):
            raise self._fail(owner, value, ValueError)
        return number

    def _check_sequence(self, value: Any, owner: str) -> tuple[int | float, ...]:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
            raise self._fail(owner, value, TypeError)
        if self.max_length is not None and len(value) > self.max_length:  # before looking at the items
            raise self._fail(owner, _Long(value), ValueError)
        items = [_number(v, integer=self.kind == "ints") for v in np.asarray(value, dtype=object).ravel()]
        numbers = [v for v in items if v is not None]
        if np.ndim(value) != 1 or len(numbers) != len(items):
            raise self._fail(owner, value, TypeError)
        lengths = self.length if isinstance(self.length, tuple) else (self.length,)
        wrong_length = len(numbers) not in lengths if self.length is not None else not numbers
        if wrong_length or not all(self._in_bounds(v) for v in numbers):
            raise self._fail(owner, value, ValueError)
        return tuple(numbers)


#: ``obs_variant``, the kwarg of every ID but MIKASA-Robo's (whose variants are its own).
OBS_VARIANT = Param("obs_variant", "choice", "partial", choices=VARIANTS, doc="the observation ladder rung")


class _Long:
    """A long sequence in an error message: its length and first items, not all of it."""

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        head = ", ".join(repr(v) for v in list(self.value[:3]))
        return f"<a sequence of {len(self.value)}: {head}, ...>"


def _number(value: Any, integer: bool) -> int | float | None:
    """``value`` as a Python int (integer=True) or finite float, or None when it is not such a number."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if integer:
        return None
    if isinstance(value, (float, np.floating)) and math.isfinite(float(value)):
        return float(value)
    return None


def check_kwargs(
    owner: str, params: Iterable[Param], kwargs: Mapping[str, Any], *, pass_through: bool = False
) -> dict[str, Any]:
    """Check ``kwargs`` against ``params``; return every declared kwarg (given or default), normalised.

    Unknown kwargs raise one TypeError listing the valid ones, unless ``pass_through`` (then they are returned
    unchanged, for a backend that checks them itself).
    """
    declared = {p.name: p for p in params}
    out: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name in declared:
            out[name] = declared[name].check(value, owner)
        elif pass_through:
            out[name] = value
        else:
            raise TypeError(f"{owner}: unknown kwarg {name!r}; valid kwargs: {', '.join(declared) or 'none'}")
    for name, p in declared.items():
        out.setdefault(name, p.default)
    return out


@overload
def check_seed(seed: None, owner: str = ...) -> None: ...
@overload
def check_seed(seed: int | np.integer, owner: str = ...) -> int: ...
@overload
def check_seed(seed: Any, owner: str = ...) -> int | None: ...
def check_seed(seed: Any, owner: str = "reset") -> int | None:
    """A reset seed: None or an int >= 0 (Python or numpy); one clear TypeError / ValueError otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{owner}: seed={seed!r} is not allowed; seed must be None or an int >= 0")
    if seed < 0:
        raise ValueError(f"{owner}: seed={seed!r} is not allowed; seed must be None or an int >= 0")
    return int(seed)


def describe(params: Iterable[Param]) -> str:
    """One line per kwarg: ``name: allowed (default ...)``, for docs and ``membench-envs info``."""
    lines = []
    for p in params:
        line = f"{p.name}: {p.allowed()} (default {p.default!r})"
        if p.doc:
            line += f" - {p.doc}"
        lines.append(line)
    return "\n".join(lines)
