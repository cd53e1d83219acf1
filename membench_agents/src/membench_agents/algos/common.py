"""What every membench algorithm shares, written once: the allowed values of its config's fields (declared
with :func:`ranged`, checked by :func:`check_fields`), the set-up before training (config check, autoreset
mode, threads, determinism, device, seeds), each environment's running episode statistics, the RNG part of a
checkpoint, the Adam optimizer, and the small tree helpers for dict observations. ``ppo.py``, ``sac.py`` and
``dtqn.py`` keep only their algorithm."""

from __future__ import annotations

import dataclasses
import math
import os
import random
import types
from typing import Any, Union, get_args, get_origin, get_type_hints

import numpy as np
import torch
from gymnasium.vector import VectorEnv
from torch import Tensor

from membench_agents.algos.vector import check_autoreset, episode_successes


# -- config fields: types and ranges declared once -----------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Allowed:
    """The values a config field allows beyond its annotated type (a field's ``metadata["allowed"]``)."""

    at_least: float | None = None
    above: float | None = None
    at_most: float | None = None
    below: float | None = None
    choices: tuple[Any, ...] = ()

    def admits(self, v: Any) -> bool:
        return (
            (self.at_least is None or v >= self.at_least)
            and (self.above is None or v > self.above)
            and (self.at_most is None or v <= self.at_most)
            and (self.below is None or v < self.below)
            and (not self.choices or v in self.choices)
        )

    def text(self) -> str:
        """``>= 1``, ``> 0``, ``in [0, 1]``, ``in (0, 1]``, ``one of 'a', 'b'``."""
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        low = self.at_least if self.at_least is not None else self.above
        high = self.at_most if self.at_most is not None else self.below
        if low is not None and high is not None:
            return (
                f"in {'[' if self.at_least is not None else '('}{low:g}, {high:g}"
                f"{']' if self.at_most is not None else ')'}"
            )
        if low is not None:
            return f"{'>=' if self.at_least is not None else '>'} {low:g}"
        if high is not None:
            return f"{'<=' if self.at_most is not None else '<'} {high:g}"
        return ""


def ranged(default: Any, **allowed: Any) -> Any:
    """A config dataclass field with its allowed values: ``ranged(16, at_least=1)``, ``ranged(0.99, at_least=0,
    at_most=1)``, ``ranged(2.5e-4, above=0)``, ``ranged("auto", choices=("auto", "on", "off"))``."""
    return dataclasses.field(default=default, metadata={"allowed": Allowed(**allowed)})


def check_fields(config: Any) -> None:
    """Raise ValueError naming the first field of the config dataclass whose value is not of its annotated type
    (``int``: not a bool; ``float``: a finite number; ``X | None``) or not allowed by its :func:`ranged`
    declaration: ``PPOConfig.num_envs must be an integer >= 1, got 0``. Fields of other types are left to the
    config's own checks."""
    hints = get_type_hints(type(config))
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        what = _not_allowed(value, hints[f.name], f.metadata.get("allowed"))
        if what is not None:
            raise ValueError(f"{type(config).__name__}.{f.name} must be {what}, got {value!r}")


def _not_allowed(value: Any, hint: Any, allowed: Allowed | None) -> str | None:
    """What ``value`` should have been (None: it is fine)."""
    optional = get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)
    base = next((a for a in get_args(hint) if a is not type(None)), hint) if optional else hint
    if value is None and optional:
        return None
    kind = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string"}.get(base)
    if kind is None:  # a mapping, a list, ...: the config checks it itself
        return None
    ok = {
        bool: lambda v: isinstance(v, bool),
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
        str: lambda v: isinstance(v, str),
    }[base](value)
    rule = allowed.text() if allowed is not None else ""
    if ok and (allowed is None or allowed.admits(value)):
        return None
    if not ok and base is float:
        return kind
    words = {int: f"an integer {rule}".strip(), float: rule, str: rule or kind, bool: kind}[base]
    return f"{words} or None" if optional else words


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"``: cuda where available, else the CPU; a CUDA device this machine lacks is a ValueError."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    d = torch.device(device)
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    return d


def set_up(envs: VectorEnv, config: Any) -> torch.device:
    """The start of every algorithm: ``config.validate()``, the vector env's SAME_STEP autoreset and size,
    torch's threads (``config.num_threads``) and deterministic algorithms (``config.deterministic``), the
    global python / numpy / torch seeds (``config.seed``). Returns the training device (``config.device``)."""
    config.validate()
    check_autoreset(envs)
    if envs.num_envs != config.num_envs:
        raise ValueError(f"the vector env has {envs.num_envs} environments but config.num_envs = {config.num_envs}")
    if config.num_threads is not None:
        torch.set_num_threads(int(config.num_threads))
    if config.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
    device = resolve_device(config.device)
    random.seed(config.seed)
    np.random.seed(config.seed % 2**32)
    torch.manual_seed(config.seed)
    return device


def adam(params, lr: float, eps: float = 1e-8) -> torch.optim.Adam:
    """Adam, with the fused kernel where this torch build has one for the parameters' device."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=eps, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr, eps=eps)


class EpisodeStats:
    """Each environment's running return and length, kept where the environment's outputs live (numpy arrays,
    or torch tensors on ``device``) so that a step costs no transfer. :meth:`finish` hands out the episodes
    that ended as ``(return, length, success or None)`` and starts them again."""

    def __init__(self, num_envs: int, device: torch.device | None = None):
        if device is None:
            self.returns: Any = np.zeros(num_envs, dtype=np.float64)
            self.lengths: Any = np.zeros(num_envs, dtype=np.int64)
        else:
            self.returns = torch.zeros(num_envs, dtype=torch.float64, device=device)
            self.lengths = torch.zeros(num_envs, dtype=torch.long, device=device)

    def add(self, reward) -> None:
        """One step of every environment (``reward``: float64, or promoted to it)."""
        self.returns += reward
        self.lengths += 1

    def finish(self, done, info: dict) -> list[tuple[float, int, bool | None]]:
        """The episodes of the ``done`` environments (their successes read from ``info``)."""
        idx: Tensor | np.ndarray
        if isinstance(self.returns, Tensor):
            idx = torch.nonzero(torch.as_tensor(done, device=self.returns.device)).squeeze(1)
            rows = idx.cpu().numpy()
        else:
            idx = rows = np.flatnonzero(done)
        if len(rows) == 0:
            return []
        ended = list(
            zip(self.returns[idx].tolist(), self.lengths[idx].tolist(), episode_successes(info, rows), strict=True)
        )
        self.returns[idx] = 0.0
        self.lengths[idx] = 0
        return ended

    def state_dict(self) -> dict[str, Any]:
        copy = (lambda x: x.clone()) if isinstance(self.returns, Tensor) else np.copy
        return {"ep_return": copy(self.returns), "ep_length": copy(self.lengths)}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        self.returns = like(d["ep_return"], self.returns)
        self.lengths = like(d["ep_length"], self.lengths)


class GeneratorStateWarning(UserWarning):
    """A torch generator state saved on another device type than the one it is restored on."""


def restore_generator(generator: Any, state: Any) -> bool:
    """``generator.set_state(state)`` where the state fits the generator; False (and a
    :class:`GeneratorStateWarning`) where it was saved on another device type.

    A torch generator's state is device-specific (a CPU generator's is 5056 bytes, a CUDA one's 16), so a run
    trained on a GPU and rebuilt on a CPU (``membench eval`` on a machine without a GPU, or a ``device: auto``
    run resumed on one) keeps the fresh generator of its seed: evaluation is unaffected (it draws from its own
    seeded generator), and such a resume continues correctly but not bit for bit.
    """
    if state.numel() == generator.get_state().numel():
        generator.set_state(state)
        return True
    import warnings

    warnings.warn(
        f"a {state.numel()}-byte torch generator state does not fit this {generator.device} generator; "
        "it continues from its seed (exact resume holds on the device type a run was trained on)",
        GeneratorStateWarning,
        stacklevel=2,
    )
    return False


def rng_state(generators: dict[str, torch.Generator]) -> dict[str, Any]:
    """The global python / numpy / torch RNG states and those of the algorithm's own generators (by name)."""
    return {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "python": random.getstate(),
        **{name: g.get_state() for name, g in generators.items()},
    }


def restore_rng(state: dict[str, Any], generators: dict[str, torch.Generator]) -> None:
    """The inverse of :func:`rng_state` (a generator state saved on another device type is skipped, with a
    warning: see :func:`restore_generator`)."""
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    for name, g in generators.items():
        restore_generator(g, state[name])


def tree_map(fn, x):
    """``fn`` on every leaf of an observation (a tensor / array, or a dict of them, nested)."""
    if isinstance(x, dict):
        return {k: tree_map(fn, v) for k, v in x.items()}
    return fn(x)


def like(value, ref):
    """``value`` as the kind of ``ref``: a numpy array of its dtype, or a tensor of its dtype on its device."""
    if isinstance(ref, np.ndarray):
        return np.array(value.cpu() if isinstance(value, Tensor) else value, dtype=ref.dtype)
    return torch.as_tensor(
        np.asarray(value) if not isinstance(value, Tensor) else value, dtype=ref.dtype, device=ref.device
    )


__all__ = [
    "Allowed",
    "EpisodeStats",
    "GeneratorStateWarning",
    "adam",
    "check_fields",
    "like",
    "ranged",
    "resolve_device",
    "restore_generator",
    "restore_rng",
    "rng_state",
    "set_up",
    "tree_map",
]
