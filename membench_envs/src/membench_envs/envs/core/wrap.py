"""Helpers shared by the environments that wrap a third-party backend (POPGym, MiniGrid).

- :func:`check_action` turns a user action into the backend's format, or raises one ``ValueError`` naming
  the action (wrong shape, out of the space, not finite) — many backends do not check.
- :class:`Flattener` encodes a value of a gymnasium space as one float32 vector: one-hot for the discrete
  parts (``Discrete``, ``MultiDiscrete`` of any shape), raw values for ``Box`` / ``MultiBinary``, parts of a
  ``Tuple`` concatenated in order. It is what RLlib's preprocessor does to POPGym observations in the paper's
  experiments; it is written here once and compiled per space, so an encode is a few numpy calls.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs.envs.core.native import validate_actions


def check_action(space: gym.Space, action: Any) -> Any:
    """Validate ``action`` against ``space``; return it as the backend expects (int, int array, float array)."""
    if isinstance(space, gym.spaces.Discrete):
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):  # fast path
            a = int(action)
            if space.start <= a < space.start + space.n:
                return a
            raise ValueError(f"action {action!r} is outside the action space {space}")
        return int(validate_actions(space, action, None))
    if isinstance(space, gym.spaces.Box):
        arr = np.asarray(action)
        if arr.shape != space.shape:
            raise ValueError(f"action has shape {arr.shape}, expected {space.shape} for action space {space}")
        if arr.dtype.kind not in "fiu" or not np.isfinite(arr).all():
            raise ValueError(f"action {action!r} is not finite numbers; action space is {space}")
        if (arr < space.low).any() or (arr > space.high).any():
            raise ValueError(f"action {action!r} is outside the action space {space}")
        return arr.astype(space.dtype)
    if isinstance(space, gym.spaces.MultiDiscrete):
        arr = np.asarray(action)
        if arr.shape == space.shape and arr.dtype.kind in "iu":  # fast path
            if (arr >= space.start).all() and (arr < space.start + space.nvec).all():
                return arr.astype(np.int64)
            raise ValueError(f"action {action!r} is outside the action space {space}")
    return validate_actions(space, action, None)


def null_action(space: gym.Space) -> Any:
    """The action reported as 'previous' at reset: 0 (or the lowest action) as in the POPGym paper's stack."""
    if isinstance(space, gym.spaces.Discrete):
        return int(space.start)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return np.asarray(space.start, dtype=np.int64).copy()
    if isinstance(space, gym.spaces.Box):
        zero = np.zeros(space.shape, dtype=space.dtype)
        return zero if space.contains(zero) else space.low.copy()
    raise TypeError(f"no null action for {space}")


class Flattener:
    """Encode values of one gymnasium space as a flat float32 vector (one-hot for discrete parts)."""

    def __init__(self, space: gym.Space):
        self.space = space
        lows: list[np.ndarray] = []
        highs: list[np.ndarray] = []
        self._plan = self._compile(space, lows, highs)
        self.low = np.concatenate(lows).astype(np.float32) if lows else np.zeros(0, np.float32)
        self.high = np.concatenate(highs).astype(np.float32) if highs else np.zeros(0, np.float32)
        self.size = int(self.low.size)

    def _compile(self, space: gym.Space, lows: list, highs: list):
        offset = sum(x.size for x in lows)
        if isinstance(space, gym.spaces.Discrete):
            n = int(space.n)
            lows.append(np.zeros(n))
            highs.append(np.ones(n))
            return ("discrete", offset, n, int(space.start))
        if isinstance(space, gym.spaces.MultiDiscrete):
            nvec = np.asarray(space.nvec, dtype=np.int64).ravel()
            starts = np.asarray(space.start, dtype=np.int64).ravel()
            offsets = offset + np.concatenate([[0], np.cumsum(nvec)[:-1]])
            total = int(nvec.sum())
            lows.append(np.zeros(total))
            highs.append(np.ones(total))
            return ("multi", offset, total, (offsets, starts))
        if isinstance(space, gym.spaces.Box):
            n = int(np.prod(space.shape))
            lows.append(np.asarray(space.low, dtype=np.float64).ravel())
            highs.append(np.asarray(space.high, dtype=np.float64).ravel())
            return ("box", offset, n, None)
        if isinstance(space, gym.spaces.MultiBinary):
            n = int(np.prod(space.shape))
            lows.append(np.zeros(n))
            highs.append(np.ones(n))
            return ("box", offset, n, None)
        if isinstance(space, gym.spaces.Tuple):
            return ("tuple", offset, None, [self._compile(s, lows, highs) for s in space.spaces])
        raise TypeError(f"cannot flatten a {type(space).__name__} space")

    def encode(self, value: Any, out: np.ndarray | None = None, at: int = 0) -> np.ndarray:
        """Write the encoding of ``value`` into ``out[at : at + size]`` (a new zero vector when ``out`` is None)."""
        if out is None:
            out = np.zeros(self.size, dtype=np.float32)
            at = 0
        else:
            out[at : at + self.size] = 0.0
        self._write(self._plan, value, out, at)
        return out

    def _write(self, plan, value, out: np.ndarray, at: int) -> None:
        kind, offset, size, extra = plan
        base = at + offset
        if kind == "discrete":
            out[base + int(value) - extra] = 1.0
        elif kind == "multi":
            offsets, starts = extra
            out[at + offsets + np.asarray(value, dtype=np.int64).ravel() - starts] = 1.0
        elif kind == "box":
            out[base : base + size] = np.asarray(value, dtype=np.float32).ravel()
        else:
            for sub, v in zip(extra, value, strict=True):
                self._write(sub, v, out, at)
