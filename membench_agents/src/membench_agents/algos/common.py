"""What every membench algorithm shares, written once: the set-up before training (config check, autoreset
mode, threads, determinism, device, seeds), each environment's running episode statistics, the RNG part of a
checkpoint, the Adam optimizer, and the small tree helpers for dict observations. ``ppo.py``, ``sac.py`` and
``dtqn.py`` keep only their algorithm."""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import torch
from gymnasium.vector import VectorEnv
from torch import Tensor

from membench_agents.checkpoint import restore_generator
from membench_agents.envs import check_autoreset, episode_successes


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
        if isinstance(self.returns, Tensor):
            idx = torch.nonzero(torch.as_tensor(done, device=self.returns.device)).squeeze(1)
            rows = idx.cpu().numpy()
        else:
            idx = rows = np.flatnonzero(done)
        if len(rows) == 0:
            return []
        ended = list(zip(self.returns[idx].tolist(), self.lengths[idx].tolist(), episode_successes(info, rows),
                         strict=True))
        self.returns[idx] = 0.0
        self.lengths[idx] = 0
        return ended

    def state_dict(self) -> dict[str, Any]:
        copy = (lambda x: x.clone()) if isinstance(self.returns, Tensor) else np.copy
        return {"ep_return": copy(self.returns), "ep_length": copy(self.lengths)}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        self.returns = like(d["ep_return"], self.returns)
        self.lengths = like(d["ep_length"], self.lengths)


def rng_state(generators: dict[str, torch.Generator]) -> dict[str, Any]:
    """The global python / numpy / torch RNG states and those of the algorithm's own generators (by name)."""
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate(),
            **{name: g.get_state() for name, g in generators.items()}}


def restore_rng(state: dict[str, Any], generators: dict[str, torch.Generator]) -> None:
    """The inverse of :func:`rng_state` (a generator state saved on another device type is skipped, with a
    warning: see :func:`membench_agents.checkpoint.restore_generator`)."""
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
    return torch.as_tensor(np.asarray(value) if not isinstance(value, Tensor) else value, dtype=ref.dtype,
                           device=ref.device)


__all__ = ["EpisodeStats", "adam", "like", "resolve_device", "restore_rng", "rng_state", "set_up", "tree_map"]
