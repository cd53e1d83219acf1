"""Vector environments for the agents, and the small conversions between environments and torch.

:func:`make_vector_env` builds a gymnasium ``VectorEnv`` with SAME_STEP autoreset (the final observation
of a finished episode is in ``info["final_obs"]``, the returned observation already starts the next
episode): the task's native batched implementation when the ID has a ``vector_entry_point`` (one numpy
step for N environments), otherwise ``SyncVectorEnv`` (or ``AsyncVectorEnv`` with ``vectorization="async"``).
Environments that already return torch tensors (ManiSkill's GPU simulation) are used as they are: the
agents keep their tensors on the device, with no detour through numpy.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv

VECTORIZATION_MODES = ("auto", "native", "sync", "async")


def make_vector_env(
    env_id: str,
    num_envs: int,
    seed: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    vectorization: str = "auto",
) -> VectorEnv:
    """A SAME_STEP-autoreset vector env of ``num_envs`` copies of ``env_id``.

    ``vectorization``: "auto" (the native batched implementation when the ID has one with SAME_STEP autoreset,
    else sync: gymnasium's own batched classic-control envs use NEXT_STEP), "native",
    "sync" or "async". ``seed`` seeds the action and observation spaces (for sampling); the episodes are
    seeded by the first ``reset(seed=...)``, which :class:`membench_agents.algos.ppo.PPO` does with its
    config seed. Unknown IDs raise gymnasium's error; missing extras raise membench-envs' error naming the
    ``pip install`` that fixes it. A module prefix (``module:ID``, which makes gymnasium import that module) is a
    ConfigError, except ``membench_envs:``, which is dropped (:func:`membench_agents.config.env_facts.plain_env_id`).
    """
    from membench_envs.registration import SyncVector  # importing membench_envs registers the membench IDs

    from membench_agents.config.env_facts import plain_env_id

    env_id = plain_env_id(env_id)  # no module prefix reaches gymnasium (it would import that module)
    if vectorization not in VECTORIZATION_MODES:
        raise ValueError(f"unknown vectorization {vectorization!r}; valid: {', '.join(VECTORIZATION_MODES)}")
    if int(num_envs) < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    kwargs = dict(env_kwargs or {})
    spec = gym.spec(env_id)
    # membench registers gymnasium's SyncVectorEnv as the vector entry point of the IDs without a batched one
    native = spec.vector_entry_point is not None and not isinstance(spec.vector_entry_point, SyncVector)
    if vectorization == "native" and not native:
        raise ValueError(f"{env_id} has no native batched implementation (vector_entry_point); use 'sync' or 'async'")
    envs = None
    if vectorization in ("auto", "native") and native:
        try:
            envs = gym.make_vec(
                env_id,
                num_envs=int(num_envs),
                vectorization_mode="vector_entry_point",
                autoreset_mode=AutoresetMode.SAME_STEP,
                **kwargs,
            )
        except TypeError as e:  # vector entry points that are always SAME_STEP may not take the argument
            if "autoreset_mode" not in str(e):
                raise
            envs = gym.make_vec(env_id, num_envs=int(num_envs), vectorization_mode="vector_entry_point", **kwargs)
        mode = envs.metadata.get("autoreset_mode")
        if mode is not None and AutoresetMode(mode) != AutoresetMode.SAME_STEP:
            envs.close()
            envs = None
            if vectorization == "native":
                raise ValueError(
                    f"{env_id}'s native vector env does not use SAME_STEP autoreset (got {mode}); use 'sync' or 'async'"
                )
            # "auto": gymnasium's own batched envs (CartPole-v1, ...) use NEXT_STEP; step single envs instead
    if envs is None:
        envs = gym.make_vec(
            env_id,
            num_envs=int(num_envs),
            vectorization_mode="async" if vectorization == "async" else "sync",
            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
            **kwargs,
        )
    if seed is not None:
        envs.action_space.seed(int(seed))
        envs.observation_space.seed(int(seed))
    return envs


def process_cap(env_id: str) -> int | None:
    """The most copies of ``env_id`` worth running at once when each copy is its own worker process, else None.

    MIKASA-Robo on a machine without a GPU steps one ManiSkill scene per process (about 300 MB each); an
    evaluation that asks for 100 parallel episodes would start 100 of them. Evaluation caps its parallel
    episodes at this number (twice the CPU count, at least 4); the episodes still all run, in more waves.
    """
    import os

    import membench_envs  # noqa: F401  (registers the membench IDs)
    from membench_agents.config.env_facts import plain_env_id

    entry = gym.spec(plain_env_id(env_id)).vector_entry_point
    if not (isinstance(entry, str) and entry.startswith("membench_envs.robo")):
        return None
    from membench_envs.robo.vector import has_gpu

    return None if has_gpu() else max(4, 2 * (os.cpu_count() or 2))


def check_autoreset(envs: VectorEnv) -> None:
    """Agents need SAME_STEP autoreset; reject NEXT_STEP / DISABLED vector envs with a clear message."""
    mode = (getattr(envs, "metadata", None) or {}).get("autoreset_mode")
    if mode is not None and AutoresetMode(mode) != AutoresetMode.SAME_STEP:
        raise ValueError(
            f"the vector env uses autoreset_mode={AutoresetMode(mode).name}; membench agents need "
            "SAME_STEP (use membench_agents.algos.vector.make_vector_env, or pass "
            "vector_kwargs={'autoreset_mode': AutoresetMode.SAME_STEP} to gym.make_vec)"
        )


def is_torch(x) -> bool:
    """Whether an env output (array, tensor, or dict of them) is a torch tensor."""
    if isinstance(x, dict):
        return any(is_torch(v) for v in x.values())
    return isinstance(x, torch.Tensor)


def first_leaf(x):
    """The first array or tensor of an observation (a possibly nested dict of them, or one)."""
    return first_leaf(next(iter(x.values()))) if isinstance(x, dict) else x


def to_numpy(x):
    """An observation (or any array-like; dicts recursively) as numpy arrays: tensors leave their device."""
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def to_tensor(x, device, dtype: torch.dtype | None = None) -> torch.Tensor:
    """An array / scalar list / tensor -> tensor on ``device`` (zero-copy for CPU numpy arrays)."""
    if isinstance(x, torch.Tensor):
        x = x.to(device, non_blocking=True)
        return x if dtype is None else x.to(dtype)
    arr = np.asarray(x)
    if arr.dtype == np.float64 or (arr.dtype == np.bool_ and dtype is None):
        arr = arr.astype(np.float32)
    if not arr.flags.writeable or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr).copy()
    t = torch.from_numpy(arr)
    if device is not None and t.device != torch.device(device):
        t = t.to(device)
    return t if dtype is None else t.to(dtype)


def obs_to_tensor(obs, device):
    """An observation (array / tensor / nested dict of them) -> tensors on ``device``."""
    if isinstance(obs, dict):
        return {k: obs_to_tensor(v, device) for k, v in obs.items()}
    return to_tensor(obs, device)


def take_rows(obs, idx: np.ndarray | torch.Tensor):
    """Rows ``idx`` of a batched observation (array, tensor, object array of per-env arrays, or dict)."""
    if isinstance(obs, dict):
        return {k: take_rows(v, idx) for k, v in obs.items()}
    if isinstance(obs, torch.Tensor):
        return obs[torch.as_tensor(idx, device=obs.device)]
    arr = np.asarray(obs)
    if arr.dtype == object:  # SyncVectorEnv: one array per environment
        rows = [arr[i] for i in idx]
        if rows and isinstance(rows[0], dict):
            return {k: np.stack([r[k] for r in rows]) for k in rows[0]}
        return np.stack([np.asarray(r) for r in rows])
    return arr[idx]


def final_obs(info: dict):
    """The final observations under SAME_STEP autoreset (gymnasium: ``final_obs``; ManiSkill: ``final_observation``)."""
    if "final_obs" in info:
        return info["final_obs"]
    return info.get("final_observation")


def episode_successes(info: dict, done_idx: np.ndarray) -> list[bool | None]:
    """``success`` of the episodes that just ended in environments ``done_idx`` (None where undefined)."""
    fin = info.get("final_info")
    source = fin if isinstance(fin, dict) and "success" in fin else (info if "success" in info else None)
    if source is None:
        return [None] * len(done_idx)
    values = source["success"]
    mask = source.get("_success")
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if isinstance(mask, torch.Tensor):
        mask = mask.detach().cpu().numpy()
    values = np.asarray(values).reshape(-1)[done_idx].astype(bool).tolist()
    if mask is None:
        return values
    ok = np.asarray(mask).reshape(-1)[done_idx].tolist()
    return [v if m else None for v, m in zip(values, ok, strict=True)]


__all__ = [
    "VECTORIZATION_MODES",
    "check_autoreset",
    "episode_successes",
    "final_obs",
    "first_leaf",
    "is_torch",
    "make_vector_env",
    "obs_to_tensor",
    "process_cap",
    "take_rows",
    "to_numpy",
    "to_tensor",
]
