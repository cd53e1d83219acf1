"""One function that picks the parallel path from the machine: :func:`make_vec`.

- **GPU present** (a CUDA device visible to torch): one ManiSkill process simulating all ``num_envs`` sub-scenes
  on ``physx_cuda``, wrapped in :class:`RoboVectorEnv`. Observations, rewards and flags are *torch tensors on the
  GPU* (no copy through numpy).
- **No GPU**: ``gymnasium.vector.AsyncVectorEnv`` of ``num_envs`` CPU environments (``physx_cpu``, one per worker
  process). Values are *numpy arrays*.

Both follow gymnasium 1.x's ``SAME_STEP`` autoreset: when an episode ends, the returned observation already is the
first one of the next episode, and ``info["final_obs"]`` / ``info["final_info"]`` (masks ``info["_final_obs"]`` /
``info["_final_info"]``) hold the last observation and info of the finished one. ``reset(seed=s)`` gives environment
i the seed ``s + i`` on both paths. Agent code that calls ``torch.as_tensor(obs[key], device=...)`` therefore runs
unchanged on either machine.

    venv = membench_envs.robo.make_vec("MIKASA/RememberColor3-v0", num_envs=2, obs_variant="partial")

Verified on the CPU only (``physx_cpu`` with Mesa lavapipe). The GPU path (``num_envs > 1``, ``physx_cuda``) is
implemented but has not run on a GPU: on the one GPU machine available, SAPIEN could not fetch its PhysX GPU library,
which it downloads from GitHub at first use (an offline machine needs it unpacked under
``~/.sapien/physx/<version>/`` beforehand).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, VectorEnv


def has_gpu() -> bool:
    """Whether ManiSkill's GPU simulation (physx_cuda) can run here: a CUDA device visible to torch."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.device_count() > 0)


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


class RoboVectorEnv(VectorEnv):
    """gymnasium ``VectorEnv`` over one batched ManiSkill env (GPU simulation), SAME_STEP autoreset, torch values."""

    def __init__(self, env: gym.Env):
        self.env: Any = env  # a batched MikasaRoboEnv: its reset takes a seed per sub-env
        base: Any = env.unwrapped  # ManiSkill's BaseEnv (untyped)
        try:
            batched = env.get_wrapper_attr("batched")
        except AttributeError:
            batched = False
        if not batched:
            raise ValueError("RoboVectorEnv needs a batched MikasaRoboEnv (num_envs > 1 or batched=True)")
        self.num_envs = base.num_envs
        self.single_observation_space = base.single_observation_space
        self.single_action_space = base.single_action_space
        self.observation_space = base.observation_space
        self.action_space = base.action_space
        self.metadata = {**env.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}
        self.render_mode = base.render_mode
        self.spec = env.spec

    @property
    def device(self) -> torch.device:
        return self.env.unwrapped.device

    @property
    def unwrapped(self):
        return self.env.unwrapped

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        if isinstance(seed, (int, np.integer)):
            seed = [int(seed) + i for i in range(self.num_envs)]
        return self.env.reset(seed=seed, options=options)

    def step(self, actions):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        done = terminated | truncated
        if bool(done.any()):
            final_obs, final_info = _clone(obs), _clone(info)
            env_idx = torch.nonzero(done).flatten()
            obs, info = self.env.reset(options={"env_idx": env_idx})
            info = dict(info)
            info["final_obs"] = final_obs
            info["_final_obs"] = done.clone()
            info["final_info"] = final_info
            info["_final_info"] = done.clone()
        return obs, reward, terminated, truncated, info

    def render(self):
        return self.env.render()

    def close_extras(self, **kwargs):
        self.env.close()


def make_vec(
    env_id: str,
    num_envs: int = 2,
    *,
    backend: str = "auto",
    context: str | None = "forkserver",
    **kwargs: Any,
) -> VectorEnv:
    """``num_envs`` MIKASA-Robo environments: GPU-batched where a GPU exists, else an AsyncVectorEnv of CPU envs.

    ``backend``: ``"auto"`` (pick from the machine), ``"gpu"`` or ``"cpu"``. ``context`` is the multiprocessing
    start method of the CPU workers (``forkserver`` by default: ManiSkill/Vulkan state must not be forked). Other
    kwargs go to ``gym.make`` (``obs_variant``, ``reward_mode``, task parameters, ...).
    """
    import membench_envs  # noqa: F401  (registers the MIKASA/ IDs in this and in every worker process)

    num_envs = int(num_envs)
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    if backend == "auto":
        backend = "gpu" if has_gpu() else "cpu"
    if backend == "gpu":
        env = gym.make(env_id, num_envs=num_envs, batched=True, disable_env_checker=True, **kwargs)
        return RoboVectorEnv(env)
    if backend != "cpu":
        raise ValueError(f"unknown backend {backend!r}; valid: auto, gpu, cpu")
    kwargs.pop("num_envs", None)
    fns = [_EnvFn(env_id, kwargs) for _ in range(num_envs)]
    return AsyncVectorEnv(fns, context=context, autoreset_mode=AutoresetMode.SAME_STEP)


class _EnvFn:
    """Picklable ``gym.make`` thunk for the worker processes."""

    def __init__(self, env_id: str, kwargs: dict):
        self.env_id = env_id
        self.kwargs = dict(kwargs)

    def __call__(self) -> gym.Env:
        import os

        os.environ.setdefault("OMP_NUM_THREADS", "1")
        torch.set_num_threads(1)
        import membench_envs  # noqa: F401

        return gym.make(self.env_id, num_envs=1, **self.kwargs)
