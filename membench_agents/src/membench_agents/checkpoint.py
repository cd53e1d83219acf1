"""Checkpoints that can be opened without running code.

``seed_<s>/checkpoint.pt`` is written with ``torch.save`` and read with ``torch.load(weights_only=True)``,
which accepts tensors, numbers, strings, bytes and plain containers only: a file that asks to build any
other object (the way a pickle runs code) is refused before anything in it runs. Everything a trainer
saves is therefore turned into plain data first (:func:`to_plain`): numpy arrays become
``{"__ndarray__": bytes, "dtype", "shape"}``; the environments' state is the plain tree of
:mod:`membench_agents.envstate`.

A checkpoint holds::

    format       CHECKPOINT_FORMAT
    config       the run's resolved config (the truth: config.yaml must match it)
    seed         the training seed
    global_step  environment steps trained
    trainer      the trainer's state_dict (network, optimizer, normalisers, RNG states, rollout cursor)
    env_state    the environments' state (membench_agents.envstate), or None when it cannot be captured
    env_state_error   why not (None when it could)
    run          the training loop's bookkeeping (history, evaluations, time, finished)
"""

from __future__ import annotations

import os
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from membench_agents.config import ConfigError

CHECKPOINT = "checkpoint.pt"
#: 2: no pickled objects (weights_only loading); 1 (before) pickled the environments.
CHECKPOINT_FORMAT = 2


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

    warnings.warn(f"a {state.numel()}-byte torch generator state does not fit this {generator.device} generator; "
                  "it continues from its seed (exact resume holds on the device type a run was trained on)",
                  GeneratorStateWarning, stacklevel=2)
    return False


class CheckpointError(ConfigError):
    """A checkpoint that cannot be used (unreadable, refused, from another config); one line for the user."""


def to_plain(x: Any) -> Any:
    """``x`` with every numpy array / scalar replaced by plain data (tensors and containers stay)."""
    import torch

    if isinstance(x, (bool, int, float, str, bytes, type(None), torch.Tensor)):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise TypeError(f"a checkpoint cannot hold numpy object arrays (shape {x.shape})")
        return {"__ndarray__": x.tobytes(), "dtype": x.dtype.str, "shape": list(x.shape)}
    if isinstance(x, np.generic):
        return {"__npscalar__": x.item(), "dtype": x.dtype.str}
    if isinstance(x, dict):
        return {k: to_plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [to_plain(v) for v in x]
    if isinstance(x, tuple):
        return tuple(to_plain(v) for v in x)
    raise TypeError(f"a checkpoint cannot hold a {type(x).__module__}.{type(x).__qualname__}; "
                    "convert it to tensors, numbers or containers of them")


def from_plain(x: Any) -> Any:
    """The inverse of :func:`to_plain`."""
    if isinstance(x, dict):
        if "__ndarray__" in x:
            return np.frombuffer(x["__ndarray__"], dtype=np.dtype(x["dtype"])).reshape(x["shape"]).copy()
        if "__npscalar__" in x:
            return np.dtype(x["dtype"]).type(x["__npscalar__"])
        return {k: from_plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [from_plain(v) for v in x]
    if isinstance(x, tuple):
        return tuple(from_plain(v) for v in x)
    return x


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
            raise CheckpointError(f"{path} was refused: it names code ({found.group(1)}), and membench checkpoints "
                                  "hold plain data only; nothing in it was run. Do not use this folder") from None
        raise CheckpointError(f"{path} cannot be read (not a checkpoint's format): the file is corrupted; restore "
                              "it, or delete the seed's folder to retrain that seed") from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError, KeyError) as e:
        reason = str(e).split("\n")[0] or type(e).__name__
        raise CheckpointError(f"{path} cannot be read ({reason}): the file is truncated or not a checkpoint; "
                              "restore it, or delete the seed's folder to retrain that seed") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(f"{path} is not a membench checkpoint of format {CHECKPOINT_FORMAT} (found {found!r}); "
                              "it was written by another program or an older membench")
    missing = [k for k in ("config", "seed", "trainer", "run", "global_step") if k not in payload]
    if missing:
        raise CheckpointError(f"{path} is incomplete (no {', '.join(missing)}); restore it or delete the seed's folder")
    return from_plain(payload)


__all__ = ["CHECKPOINT", "CHECKPOINT_FORMAT", "CheckpointError", "from_plain", "load_checkpoint", "save_checkpoint",
           "to_plain"]
