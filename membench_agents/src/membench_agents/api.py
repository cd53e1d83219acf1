"""The Python API: what the ``membench`` CLI does, for notebooks and scripts (as stable-baselines3's users work).

    from membench_agents.api import load, train

    run = train("MIKASA/TMazePassiveDense-v0", "ppo-lstm", seeds=1)   # the config `membench train` resolves
    run.results["mean"]                  # the protocol's metric (success rate here), mean over the seeds
    agent = run.agent()                  # the policy of the run's first seed, on numpy observations

    env = gym.make("MIKASA/TMazePassiveDense-v0")
    obs, info = env.reset(seed=0)
    state, start = None, True
    while True:
        action, state = agent.predict(obs, state, episode_start=start)
        obs, reward, terminated, truncated, info = env.step(action)
        start = False
        if terminated or truncated:
            break

    run.evaluate()                       # `membench eval`: the protocol's episodes, from the checkpoints
    load("runs/MIKASA/TMazePassiveDense-v0/ppo-lstm/20261126-101500")   # an existing run folder

:func:`train` resolves the config exactly as ``membench train`` does (the tuned cell config or the agent's
defaults, then ``steps``, ``seeds``, ``overrides``), trains every seed (``jobs`` at a time in worker processes,
or in this process) and returns the :class:`Run`; Ctrl-C stops it with checkpoints saved
(:class:`KeyboardInterrupt` is raised; :func:`train` with ``resume=`` the folder continues it).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch

from membench_agents.algos.trainer import env_kwargs_of
from membench_agents.algos.vector import obs_to_tensor
from membench_agents.analysis.report import plot_run
from membench_agents.config.env_facts import env_score
from membench_agents.config.resolve import resolve
from membench_agents.runs import cell, folder, loop, stats
from membench_agents.runs.evaluation import evaluate_trainer
from membench_agents.runs.executors import Executor
from membench_agents.runs.folder import RESULTS
from membench_agents.runs.tracking import Tracking


def train(
    env: str | None = None,
    agent: str | None = None,
    *,
    seeds: Any = None,
    steps: int | None = None,
    obs_variant: str | None = None,
    config: str | os.PathLike | None = None,
    overrides: Iterable[str] = (),
    run_dir: str | os.PathLike | None = None,
    out: str | os.PathLike = "runs",
    jobs: int = 1,
    device: str | None = None,
    progress: bool = True,
    tracking: Tracking | None = None,
    resume: str | os.PathLike | None = None,
    executor: str = "local",
    address: str | None = None,
    slurm: Iterable[str] = (),
) -> Run:
    """Train a cell and return its :class:`Run` (``membench train``). ``overrides`` are ``--set`` items
    (``"ppo.learning_rate=1e-3"``); ``jobs``: seeds trained at once in worker processes (1: in this process);
    ``resume``: continue that run folder with its own config (then give nothing else); ``executor``, ``address``,
    ``slurm``: where the seeds train, as ``--executor``, ``--address`` and ``--slurm`` (``"ray"``: tasks of a Ray
    cluster; ``"slurm"``: Slurm jobs)."""
    where = Executor(executor, address, tuple(slurm))
    if resume is not None:
        run_dir = Path(resume)
        cfg = cell.run_config(run_dir)
        cell.check_resumable(cfg, run_dir)
    else:
        cfg = resolve(
            env,
            agent,
            config_file=config,
            steps=steps,
            seeds=seeds,
            obs_variant=obs_variant,
            overrides=overrides,
            device=device,
        ).config
        run_dir = Path(run_dir) if run_dir is not None else folder.new_run_dir(out, cfg)
    cell.train(
        cfg, run_dir, workers=jobs, resume=resume is not None, progress=progress, tracking=tracking, executor=where
    )
    plot_run(run_dir)
    return Run(run_dir)


def load(run_dir: str | os.PathLike) -> Run:
    """An existing run folder (its config is checked against what every seed was trained with)."""
    return Run(run_dir)


class Run:
    """A run folder: its config, its results and its trained policies."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        #: the run's config (``config.yaml``, checked against every seed's checkpoint)
        self.config: dict[str, Any] = cell.run_config(self.path)

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}: {self.config['agent']} on {self.config['env']})"

    @property
    def seeds(self) -> list[int]:
        return list(self.config["seeds"])

    @property
    def results(self) -> dict[str, Any] | None:
        """``results.json`` (mean ± SEM over the seeds, per-run values, protocol, provenance); None until every
        seed has finished."""
        if not (self.path / RESULTS).is_file():
            return None
        from membench_agents.analysis.report import load_results

        return load_results(self.path)

    def agent(self, seed: int | None = None, device: str | None = None) -> Agent:
        """The trained policy of one seed (default: the first) as an :class:`Agent`."""
        return self._agent(seed, device)[0]

    def _agent(self, seed: int | None, device: str | None) -> tuple[Agent, dict[str, Any]]:
        seed = self.seeds[0] if seed is None else seed
        if seed not in self.seeds:
            raise ValueError(f"{self.path} has seeds {self.seeds}, not {seed}")
        from membench_agents.algos.common import GeneratorStateWarning

        with warnings.catch_warnings():  # a generator state of another device: acting does not use it
            warnings.simplefilter("ignore", GeneratorStateWarning)
            trainer, payload = loop.load_trainer(self.config, cell.seed_dir(self.path, seed), seed, device=device)
        env = gym.make(self.config["env"], **env_kwargs_of(self.config))
        space = env.observation_space
        env.close()
        return Agent(trainer, space), payload

    def evaluate(
        self,
        episodes: int | None = None,
        seed_start: int | None = None,
        deterministic: bool | None = None,
        device: str | None = None,
    ) -> dict[str, Any]:
        """Evaluate every seed's checkpoint by the run's protocol (``membench eval``); the arguments replace
        the protocol's (checked by its rules: a ConfigError names the one that is not allowed). Returns
        ``metric``, ``mean``, ``sem``, ``per_run``, ``n_runs``, ``episode_seeds``, ``per_seed`` (each seed's
        per-episode returns, lengths and successes) and ``unfinished`` ((seed, step) of each seed whose
        training had not finished)."""
        from membench_agents.config.schema import EvalConfig

        ev = dict(self.config["eval"])
        for key, value in (("episodes", episodes), ("seed_start", seed_start), ("deterministic", deterministic)):
            if value is not None:
                ev[key] = value
        EvalConfig(**ev)  # the protocol's own rules
        seeds_eval = stats.episode_seeds({**self.config, "eval": ev})
        per_seed, unfinished = [], []
        for s in self.seeds:
            agent, payload = self._agent(s, device)
            if not payload["run"].get("finished"):
                unfinished.append((s, int(payload["global_step"])))
            per_seed.append(evaluate_trainer(agent.trainer, {**self.config, "eval": ev}, seeds_eval))
            agent.close()
        return {
            **stats.aggregate(per_seed, env_score(self.config["env"])),
            "episode_seeds": seeds_eval,
            "per_seed": per_seed,
            "unfinished": unfinished,
        }

    def record(
        self,
        episodes: int = 1,
        folder: str | os.PathLike | None = None,
        seed: int | None = None,
        deterministic: bool | None = None,
        device: str | None = None,
    ) -> list[Path]:
        """Play the protocol's first ``episodes`` evaluation episodes (episode seeds ``seed_start``, ...) with one
        seed's policy and write each as an MP4 video (``<folder>/seed_<s>/episode_<episode seed>.mp4``; default
        folder: ``<run>/videos``). A video holds one frame per step plus the first (length + 1 frames), at the
        environment's ``render_fps``. Returns the files. Needs moviepy (``membench-agents[video]``)."""
        if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
            raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
        try:
            from moviepy import ImageSequenceClip
        except ImportError:
            raise ImportError("videos need moviepy: pip install 'membench-agents[video]'") from None
        seed = self.seeds[0] if seed is None else seed
        folder = Path(folder) if folder is not None else self.path / "videos"
        ev = self.config["eval"]
        deterministic = ev["deterministic"] if deterministic is None else deterministic
        agent = self.agent(seed, device=device)
        env = gym.make(self.config["env"], render_mode="rgb_array", **env_kwargs_of(self.config))
        fps = env.metadata.get("render_fps") or 30
        out = []
        try:
            for episode_seed in stats.episode_seeds({**self.config, "eval": {**ev, "episodes": episodes}}):
                obs, _ = env.reset(seed=episode_seed)
                frames, state, start = [env.render()], None, True
                while True:
                    action, state = agent.predict(obs, state, episode_start=start, deterministic=deterministic)
                    obs, _, terminated, truncated, _ = env.step(action)
                    frames.append(env.render())
                    start = False
                    if terminated or truncated:
                        break
                path = folder / f"seed_{seed}" / f"episode_{episode_seed}.mp4"
                path.parent.mkdir(parents=True, exist_ok=True)
                ImageSequenceClip([np.asarray(f) for f in frames], fps=fps).write_videofile(str(path), logger=None)
                out.append(path)
        finally:
            env.close()
            agent.close()
        return out


class Agent:
    """A trained policy acting on numpy observations, one environment or a batch of them.

    ``action, state = agent.predict(obs, state, episode_start)``: ``obs`` as the environment returns it (one
    observation, or a batch from a vector env); ``state`` is the memory (None: a new episode);
    ``episode_start`` (bool, or one per environment) resets the memory where an episode begins. The actions
    are the environment's (clipped to a Box, a Discrete's ``start`` added)."""

    def __init__(self, trainer, observation_space: gym.Space):
        self.trainer = trainer
        self.policy = trainer.policy
        self.observation_space = observation_space

    def initial_state(self, n: int = 1):
        return self.policy.initial_state(n, self.policy.device)

    def _batched(self, obs) -> bool:
        leaf = obs[next(iter(obs))] if isinstance(obs, dict) else obs
        space = self.observation_space
        if isinstance(space, gym.spaces.Dict):
            space = space[next(iter(obs))]
        return np.ndim(leaf) == len(cast(tuple[int, ...], space.shape)) + 1  # the leaves are array spaces

    @torch.no_grad()
    def predict(self, obs, state=None, episode_start=None, deterministic: bool = True):
        batched = self._batched(obs)
        if not batched:
            obs = {k: np.asarray(v)[None] for k, v in obs.items()} if isinstance(obs, dict) else np.asarray(obs)[None]
        n = len(next(iter(obs.values())) if isinstance(obs, dict) else obs)
        if episode_start is None:
            episode_start = state is None
        if state is None:
            state = self.initial_state(n)
        es = torch.as_tensor(
            np.broadcast_to(np.asarray(episode_start, dtype=bool), (n,)).copy(), device=self.policy.device
        )
        x = obs_to_tensor(obs, self.policy.device)
        action, _, _, state = self.policy.act(x, state, es, deterministic=deterministic)
        action = self.policy.env_action(action)
        action = action.cpu().numpy() if isinstance(action, torch.Tensor) else np.asarray(action)
        return (action if batched else action[0]), state

    def close(self) -> None:
        self.trainer.close()


__all__ = ["Agent", "Run", "load", "train"]
