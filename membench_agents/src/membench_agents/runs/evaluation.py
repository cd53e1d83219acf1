"""Evaluation on a fixed list of episode seeds (the memory-classification paper's protocol, F.1: every
trained policy is evaluated on episodes with seeds 0..99).

Episode ``i`` is run with ``reset(seed=episode_seeds[i])``. Episodes run in waves of ``num_envs``
environments (one vector env, reset with the wave's seed list); an environment whose episode has ended
is ignored until the wave ends, so every episode is exactly the one its seed defines, whatever
``num_envs`` is.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from membench_agents.algos.trainer import env_kwargs_of
from membench_agents.algos.vector import (
    episode_successes,
    first_leaf,
    is_torch,
    make_vector_env,
    obs_to_tensor,
    process_cap,
    to_tensor,
)
from membench_agents.errors import check_stop
from membench_agents.nets.actor_critic import ActorCritic
from membench_agents.runs.stats import normalize_eval

#: The default episode seeds: 0..99 (memory-classification paper, Appendix F.1).
DEFAULT_EPISODE_SEEDS: tuple[int, ...] = tuple(range(100))
#: Safety cap on the steps of one wave when neither the env spec nor the catalogue gives a horizon.
DEFAULT_MAX_STEPS = 100_000


@contextlib.contextmanager
def preserve_rng() -> Iterator[None]:
    """Leave the python / numpy / torch global RNGs as they were (evaluation must not perturb training)."""
    import torch

    py, npst, th = random.getstate(), np.random.get_state(), torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        random.setstate(py)
        np.random.set_state(npst)
        torch.set_rng_state(th)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)


@torch.no_grad()
def evaluate(
    policy: ActorCritic,
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    episode_seeds: list[int] | tuple[int, ...] = DEFAULT_EPISODE_SEEDS,
    device: str | torch.device | None = None,
    deterministic: bool = True,
    num_envs: int = 16,
    max_steps: int | None = None,
    seed: int = 0,
    envs=None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Run one episode per seed with ``policy``; returns per-episode lists and their means.

    Returns ``{"episode_seeds", "returns", "lengths", "successes" (None entries where the task defines no
    success), "mean_return", "std_return", "mean_length", "success_rate" (None when no episode defines
    success), "num_episodes"}``. ``device``: where observations go (default: the policy's device).
    ``seed`` seeds the action sampling when ``deterministic`` is False. ``max_steps`` caps one wave
    (default 100000); an episode cut by it counts with its partial return.
    ``envs``: an existing SAME_STEP vector env to use instead of making one (its num_envs wins).
    ``num_envs`` is how many episodes run at once; where every environment is its own process (MIKASA-Robo
    without a GPU) it is capped at :func:`membench_agents.algos.vector.process_cap`.
    ``should_stop`` is polled before every step: when it returns True,
    :class:`~membench_agents.errors.StopRequested` is raised (no result).
    """
    seeds = [int(s) for s in episode_seeds]
    if not seeds:
        raise ValueError("episode_seeds is empty")
    dev = torch.device(device) if device is not None else policy.device
    if envs is None:
        cap = process_cap(env_id)
        n_par = min(int(num_envs), len(seeds), cap if cap is not None else len(seeds))
        envs = make_vector_env(env_id, n_par, env_kwargs=env_kwargs)
        own = True
    else:
        own = False
    n = envs.num_envs
    # A safety net for tasks that never end; the env's own time limit ends episodes first. (The catalogue's
    # T cannot serve as the cap: env_kwargs such as corridor_length change the episode length.)
    cap = int(max_steps) if max_steps is not None else DEFAULT_MAX_STEPS
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    was_training = policy.training
    policy.eval()
    returns: list[float] = []
    lengths: list[int] = []
    successes: list[bool | None] = []
    try:
        for w in range(0, len(seeds), n):
            wave = seeds[w : w + n]
            k = len(wave)
            padded = wave + [wave[-1]] * (n - k)  # spare envs re-run the last seed; their results are dropped
            obs, _ = envs.reset(seed=padded)
            torch_env = is_torch(obs)
            env_device = first_leaf(obs).device if torch_env else None
            obs = obs_to_tensor(obs, dev)
            state = policy.initial_state(n, dev)
            es = torch.ones(n, dtype=torch.bool, device=dev)
            active = np.zeros(n, dtype=bool)
            active[:k] = True
            ret = np.zeros(n)
            length = np.zeros(n, dtype=np.int64)
            succ: list[bool | None] = [None] * n
            for _ in range(cap):
                check_stop(should_stop)
                action, _, _, state = policy.act(obs, state, es, deterministic=deterministic, generator=gen)
                env_action = policy.env_action(action)
                step_action: torch.Tensor | np.ndarray = env_action
                if not torch_env:
                    step_action = env_action.cpu().numpy()
                elif env_action.device != env_device:
                    step_action = env_action.to(env_device)
                next_obs, reward, terminated, truncated, info = envs.step(step_action)
                r = to_tensor(reward, "cpu", torch.float64).reshape(-1).numpy()
                ended_now = to_tensor(terminated, "cpu", torch.bool) | to_tensor(truncated, "cpu", torch.bool)
                done = ended_now.reshape(-1).numpy()
                ret[active] += r[active]
                length[active] += 1
                ended = np.flatnonzero(done & active)
                if ended.size:
                    for i, s in zip(ended, episode_successes(info, ended), strict=True):
                        succ[i] = s
                    active[ended] = False
                if not active.any():
                    break
                obs = obs_to_tensor(next_obs, dev)
                es = torch.as_tensor(done, device=dev)
            returns.extend(ret[:k].tolist())
            lengths.extend(length[:k].tolist())
            successes.extend(succ[:k])
    finally:
        policy.train(was_training)
        if own:
            envs.close()
    defined = [s for s in successes if s is not None]
    mean_ret = float(np.mean(returns))
    return {
        "episode_seeds": seeds,
        "returns": returns,
        "lengths": lengths,
        "successes": successes,
        "num_episodes": len(seeds),
        "mean_return": mean_ret,
        "std_return": float(np.std(returns)),
        "mean_length": float(np.mean(lengths)),
        "success_rate": float(np.mean(defined)) if defined else None,
    }


def evaluate_trainer(
    trainer,
    cfg: dict[str, Any],
    episode_seeds: list[int],
    deterministic: bool | None = None,
    num_envs: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """A trainer's policy (:attr:`membench_agents.algos.trainer.Trainer.policy`) evaluated by the run config's
    protocol (``deterministic`` and ``num_envs``: the config's ``eval`` unless given) on ``cfg``'s environment,
    one episode per seed, leaving the global RNGs as they were; the result normalised
    (:func:`membench_agents.runs.stats.normalize_eval`)."""
    ev = cfg["eval"]
    with preserve_rng():
        return normalize_eval(
            evaluate(
                trainer.policy,
                cfg["env"],
                env_kwargs_of(cfg),
                episode_seeds,
                deterministic=ev["deterministic"] if deterministic is None else deterministic,
                num_envs=ev["num_envs"] if num_envs is None else num_envs,
                should_stop=should_stop,
            )
        )


__all__ = ["DEFAULT_EPISODE_SEEDS", "evaluate", "evaluate_trainer", "preserve_rng"]
