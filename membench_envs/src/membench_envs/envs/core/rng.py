"""Counter-based random streams for the native tasks.

Every random quantity of a native task is a pure function of ``(key, episode, step, stream)``, where the
key comes from the seed. A batched implementation therefore draws exactly what N single environments
would draw, with one vectorised numpy call and no per-environment generator objects.

The hash is SplitMix64's finaliser, applied twice; it passes the usual avalanche tests and is more than
random enough for task sampling.
"""

from __future__ import annotations

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_STEP = np.uint64(0xD1B54A32D192ED03)
_STREAM = np.uint64(0x8CB92BA72F3D8DD7)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / float(1 << 53)


def _mix(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def key_from_seed(seed: int) -> np.uint64:
    """The stream key of an environment reset with ``seed`` (any non-negative int)."""
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return np.uint64(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def random_key(rng: np.random.Generator) -> np.uint64:
    return np.uint64(rng.integers(0, 2**63, dtype=np.int64))


_MASK = (1 << 64) - 1
_M1_I, _M2_I, _GOLDEN_I, _STEP_I, _STREAM_I = int(_M1), int(_M2), int(_GOLDEN), int(_STEP), int(_STREAM)


def _mix_int(x: int) -> int:
    x = ((x ^ (x >> 30)) * _M1_I) & _MASK
    x = ((x ^ (x >> 27)) * _M2_I) & _MASK
    return x ^ (x >> 31)


def uniform_one(key: int, episode: int, step: int, stream: int) -> float:
    """:func:`uniform` for one environment, in Python ints (no numpy overhead); bit-identical results."""
    episode, step = episode & _MASK, step & _MASK
    c = (episode * _GOLDEN_I + step * _STEP_I + stream * _STREAM_I) & _MASK
    return (_mix_int(key ^ _mix_int(c)) >> 11) * _INV53


def uniform(key, episode, step, stream: int) -> np.ndarray:
    """U[0, 1) numbers, one per element of the broadcast of ``key``, ``episode`` and ``step``."""
    with np.errstate(over="ignore"):
        k = np.asarray(key, dtype=np.uint64)
        c = (
            np.asarray(episode, dtype=np.uint64) * _GOLDEN
            + np.asarray(step, dtype=np.uint64) * _STEP
            + np.uint64(stream) * _STREAM
        )
        h = _mix(k ^ _mix(c))
    return (h >> _S11).astype(np.float64) * _INV53


def to_integers(u: np.ndarray, low: int, high: int) -> np.ndarray:
    """Map U[0, 1) numbers to integers uniform in [low, high)."""
    return low + np.minimum((u * (high - low)).astype(np.int64), high - low - 1)


def integers(key, episode, step, stream: int, low: int, high: int) -> np.ndarray:
    """Integers uniform in [low, high)."""
    return to_integers(uniform(key, episode, step, stream), low, high)
