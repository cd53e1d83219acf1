"""Checkpoints that can be opened without running code.

``seed_<s>/checkpoint.pt`` is written with ``torch.save`` and read with ``torch.load(weights_only=True)``,
which accepts tensors, numbers, strings, bytes and plain containers only: a file that asks to build any
other object (the way a pickle runs code) is refused before anything in it runs. Everything a trainer
saves is therefore turned into plain data first (:func:`to_plain`): numpy arrays become
``{"__ndarray__": bytes, "dtype", "shape"}``; the environments' state is the plain tree of
:mod:`membench_agents.runs.envstate`.

A checkpoint holds::

    format       CHECKPOINT_FORMAT
    config       the run's resolved config (the truth: config.yaml must match it)
    seed         the training seed
    global_step  environment steps trained
    trainer      the trainer's state_dict (network, optimizer, normalisers, RNG states, rollout cursor)
    env_state    the environments' state (membench_agents.runs.envstate), or None when it cannot be captured
    env_state_error   why not (None when it could)
    run          the training loop's bookkeeping (history, evaluations, time, finished)
"""

from __future__ import annotations

import math
import os
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from membench_agents.errors import ConfigError

CHECKPOINT = "checkpoint.pt"
#: 2: no pickled objects (weights_only loading); 1 (before) pickled the environments.
CHECKPOINT_FORMAT = 2


class CheckpointError(ConfigError):
    """A checkpoint that cannot be used (unreadable, refused, from another config); one line for the user."""


def to_plain(x: Any) -> Any:
    """``x`` with every numpy array / scalar replaced by plain data (tensors and containers stay)."""
    import torch

    if type(x) in (bool, int, float, str, bytes, type(None)) or isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.hasobject:
            raise TypeError(f"a checkpoint cannot hold numpy object arrays (shape {x.shape})")
        return {"__ndarray__": x.tobytes(), "dtype": x.dtype.str, "shape": list(x.shape)}
    if isinstance(x, np.generic):  # before the Python scalars: np.float64 is a float, and is no plain data
        return {"__npscalar__": x.item(), "dtype": x.dtype.str}
    if isinstance(x, dict):
        return {k: to_plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [to_plain(v) for v in x]
    if isinstance(x, tuple):
        return tuple(to_plain(v) for v in x)
    raise TypeError(
        f"a checkpoint cannot hold a {type(x).__module__}.{type(x).__qualname__}; "
        "convert it to tensors, numbers or containers of them"
    )


def from_plain(x: Any, where: str = "checkpoint") -> Any:
    """The inverse of :func:`to_plain`. A saved array or scalar that :func:`to_plain` cannot have written (an
    object dtype, bytes that do not fill its shape, a missing or extra key, ...) is one :class:`CheckpointError`
    naming where it is in the tree (``where``: the name of ``x``)."""
    if isinstance(x, dict):
        if "__ndarray__" in x:
            return _array(x, where)
        if "__npscalar__" in x:
            return _scalar(x, where)
        return {k: from_plain(v, f"{where}[{k!r}]") for k, v in x.items()}
    if isinstance(x, list):
        return [from_plain(v, f"{where}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, tuple):
        return tuple(from_plain(v, f"{where}[{i}]") for i, v in enumerate(x))
    return x


def _keys(x: dict[str, Any], keys: set[str], where: str) -> None:
    if set(x) != keys:
        raise CheckpointError(f"{where} is a saved numpy value with the keys {sorted(map(str, x))}, not {sorted(keys)}")


def _dtype(value: Any, where: str) -> np.dtype:
    try:
        dtype = np.dtype(value) if isinstance(value, str) else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None:
        raise CheckpointError(f"{where}: {value!r} is not a numpy dtype string")
    if dtype.hasobject:
        raise CheckpointError(f"{where}: dtype {value!r} holds Python objects; checkpoints hold plain data only")
    return dtype


def _array(x: dict[str, Any], where: str) -> np.ndarray:
    _keys(x, {"__ndarray__", "dtype", "shape"}, where)
    data, shape = x["__ndarray__"], x["shape"]
    dtype = _dtype(x["dtype"], where)
    if not isinstance(data, bytes):
        raise CheckpointError(f"{where}: the array's data must be bytes, got {type(data).__name__}")
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise CheckpointError(f"{where}: shape must be a list of integers >= 0, got {shape!r}")
    size = math.prod(shape) * dtype.itemsize
    if size != len(data):
        raise CheckpointError(
            f"{where}: {len(data)} bytes cannot be an array of shape {list(shape)} and dtype {dtype.str} ({size} bytes)"
        )
    if dtype.itemsize == 0:
        return np.zeros(shape, dtype)
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


def _scalar(x: dict[str, Any], where: str) -> np.generic:
    _keys(x, {"__npscalar__", "dtype"}, where)
    dtype, value = _dtype(x["dtype"], where), x["__npscalar__"]
    if type(value) not in (bool, int, float, complex, str, bytes):
        raise CheckpointError(
            f"{where}: a numpy scalar's value must be a number, string or bytes, got {type(value).__name__}"
        )
    try:
        return dtype.type(value)
    except (TypeError, ValueError, OverflowError) as e:
        raise CheckpointError(f"{where}: {value!r} is not a {dtype.str} scalar ({e})") from None


def save_checkpoint(path: str | os.PathLike, payload: dict[str, Any]) -> None:
    """Write ``payload`` (plus ``format``) atomically (a temporary file, then rename): a crash leaves the
    previous checkpoint intact."""
    import torch

    path = Path(path)
    tmp = path.with_suffix(".tmp")
    torch.save(to_plain({"format": CHECKPOINT_FORMAT, **payload}), tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Read a checkpoint without running code from it: one :class:`CheckpointError` line for a missing,
    truncated, foreign or refused file."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(e))
        if found:  # the file names code to run: a pickle payload, not a membench checkpoint
            raise CheckpointError(
                f"{path} was refused: it names code ({found.group(1)}), and membench checkpoints "
                "hold plain data only; nothing in it was run. Do not use this folder"
            ) from None
        raise CheckpointError(
            f"{path} cannot be read (not a checkpoint's format): the file is corrupted; restore "
            "it, or delete the seed's folder to retrain that seed"
        ) from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError, KeyError) as e:
        reason = str(e).split("\n")[0] or type(e).__name__
        raise CheckpointError(
            f"{path} cannot be read ({reason}): the file is truncated or not a checkpoint; "
            "restore it, or delete the seed's folder to retrain that seed"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        what = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(
            f"{path} is not a membench checkpoint of format {CHECKPOINT_FORMAT} (found {what!r}); "
            "it was written by another program or an older membench"
        )
    missing = [k for k in ("config", "seed", "trainer", "run", "global_step") if k not in payload]
    if missing:
        raise CheckpointError(f"{path} is incomplete (no {', '.join(missing)}); restore it or delete the seed's folder")
    fix = "restore it, or delete the seed's folder to retrain that seed"
    try:
        _check_payload_types(payload)
        return from_plain(payload, "checkpoint")
    except CheckpointError as e:
        raise CheckpointError(f"{path} is not a valid membench checkpoint ({e}); {fix}") from None
    except RecursionError:
        raise CheckpointError(f"{path} is nested too deeply to be a membench checkpoint; {fix}") from None


def load_trainer_state(trainer: Any, state: Any, path: str | os.PathLike) -> None:
    """``trainer.load_state_dict(state)``; a saved state that does not fit the trainer (a missing key, a tensor of
    another shape, a value of another type: an edited or foreign checkpoint) is one :class:`CheckpointError`."""
    try:
        trainer.load_state_dict(state)
    except CheckpointError:
        raise
    except (RuntimeError, KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        reason = " ".join(str(e).split())[:300] or type(e).__name__
        raise CheckpointError(
            f"{path}: the saved trainer state does not fit this agent ({type(e).__name__}: "
            f"{reason}); restore the file, or delete the seed's folder to retrain that seed"
        ) from None


#: The types of what every reader of a checkpoint uses before the trainer does (the run's bookkeeping included).
_PAYLOAD_TYPES = {"config": dict, "seed": int, "global_step": int, "trainer": dict, "run": dict}
_RUN_TYPES: dict[str, type | tuple[type, ...]] = {
    "history": list,
    "evals": list,
    "recent": list,
    "finished": bool,
    "train_time": (int, float),
}
_TYPE_NAMES = {dict: "a mapping", int: "an integer", list: "a list", bool: "a boolean", (int, float): "a number"}


def _check_payload_types(payload: dict[str, Any]) -> None:
    kind: type | tuple[type, ...]
    for key, kind in _PAYLOAD_TYPES.items():
        value = payload[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise CheckpointError(f"{key} must be {_TYPE_NAMES[kind]}, got {type(value).__name__}")
    if payload["global_step"] < 0:
        raise CheckpointError(f"global_step must be >= 0, got {payload['global_step']}")
    for key, kind in _RUN_TYPES.items():
        value = payload["run"].get(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise CheckpointError(f"run[{key!r}] must be {_TYPE_NAMES[kind]}, got {value!r}")
    if payload.get("env_state") is not None and not isinstance(payload["env_state"], dict):
        raise CheckpointError(f"env_state must be a mapping or None, got {type(payload['env_state']).__name__}")
    if payload.get("env_state_error") is not None and not isinstance(payload["env_state_error"], str):
        raise CheckpointError(f"env_state_error must be a string or None, got {payload['env_state_error']!r}")


__all__ = [
    "CHECKPOINT",
    "CHECKPOINT_FORMAT",
    "CheckpointError",
    "from_plain",
    "load_checkpoint",
    "load_trainer_state",
    "save_checkpoint",
    "to_plain",
]
