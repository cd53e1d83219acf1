"""Training runs: run folders, the training loop, checkpoints / resume, parallel seeds, evaluation protocol.

A *run* is one cell (environment, agent, budget, hyperparameters) trained once per seed. Its folder::

    <run>/config.yaml            the resolved configuration (what `--resume` and `membench eval` read)
    <run>/results.json           mean ± SEM over the per-seed means, protocol, versions, git commit
    <run>/learning_curve.png     learning curves (mean ± SEM over seeds) and the final evaluation
    <run>/seed_<s>/events.out.tfevents.*   TensorBoard log (returns, success rate, losses, SPS)
    <run>/seed_<s>/checkpoint.pt the resumable state (written periodically, on Ctrl-C and at the end)
    <run>/seed_<s>/metrics.jsonl one line per iteration (and per evaluation during training)
    <run>/seed_<s>/eval.json     the final evaluation: one episode per fixed episode seed

Evaluation protocol (the seed papers: MIKASA-Robo App. I, memory-classification App. F.1): every training
run is evaluated on the same fixed list of episode seeds (``eval.seed_start`` ... + ``eval.episodes`` - 1,
default 0..99 as in the memory-classification paper; MIKASA-Robo uses 1..100), deterministic actions;
the per-run mean success rate (or return, where the task defines no success) is computed first, then
the mean ± standard error over runs (SEM = std(ddof=1) / sqrt(n)).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import platform
import random
import signal
import subprocess
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from membench_agents.config import AGENTS, ConfigError, _close, dump, make_kwargs

CHECKPOINT = "checkpoint.pt"
CHECKPOINT_FORMAT = 1


# ------------------------------------------------------------------------------------------------------
# provenance
# ------------------------------------------------------------------------------------------------------
def versions(agent: str | None = None) -> dict[str, str | None]:
    """Versions of python and the packages a result depends on."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version()}
    names = ["torch", "gymnasium", "numpy", "membench-envs", "membench-agents"]
    if agent is None or AGENTS[agent].kind == "sb3":
        names += ["stable-baselines3", "sb3-contrib"]
    for name in names:
        try:
            out[name.replace("-", "_")] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name.replace("-", "_")] = None
    return out


def git_info() -> dict[str, Any]:
    """The commit of the membench checkout (and whether tracked files differ from it), or None outside git."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        if not commit:
            return {"commit": None, "dirty": None}
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True,
            timeout=10,
        ).stdout.strip()
        return {"commit": commit, "dirty": bool(status)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


# ------------------------------------------------------------------------------------------------------
# evaluation protocol and aggregation
# ------------------------------------------------------------------------------------------------------
def episode_seeds(cfg: dict[str, Any]) -> list[int]:
    ev = cfg["eval"]
    return list(range(ev["seed_start"], ev["seed_start"] + ev["episodes"]))


def normalize_eval(result: dict[str, Any]) -> dict[str, Any]:
    """Per-episode lists plus their means, whatever evaluator produced them."""
    returns = [float(x) for x in result["returns"]]
    lengths = [int(x) for x in result["lengths"]]
    raw = result.get("successes")
    successes = list(raw) if raw is not None else [None] * len(returns)
    has_success = bool(successes) and all(s is not None for s in successes)
    return {
        "returns": returns,
        "lengths": lengths,
        "successes": [bool(s) for s in successes] if has_success else None,
        "mean_return": float(np.mean(returns)),
        "mean_length": float(np.mean(lengths)),
        "success_rate": float(np.mean(successes)) if has_success else None,
    }


def run_metric(evaluation: dict[str, Any]) -> tuple[str, float]:
    """The per-run number of the protocol: success rate where the task defines success, return otherwise."""
    if evaluation.get("success_rate") is not None:
        return "success_rate", float(evaluation["success_rate"])
    return "return", float(evaluation["mean_return"])


def sem(values: list[float]) -> float:
    """Standard error of the mean over runs (ddof=1); 0 for a single run (no spread can be estimated)."""
    if len(values) < 2:
        return 0.0
    return float(np.std(values, ddof=1) / math.sqrt(len(values)))


def aggregate(per_run: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean ± SEM over the per-run means. ``per_run``: normalised evaluations (see :func:`normalize_eval`)."""
    if not per_run:
        raise ValueError("no runs to aggregate")
    names = {run_metric(r)[0] for r in per_run}
    metric = "success_rate" if names == {"success_rate"} else "return"
    values = [r["success_rate"] if metric == "success_rate" else r["mean_return"] for r in per_run]
    returns = [r["mean_return"] for r in per_run]
    return {
        "metric": metric,
        "mean": float(np.mean(values)),
        "sem": sem(values),
        "n_runs": len(values),
        "per_run": [float(v) for v in values],
        "return_mean": float(np.mean(returns)),
        "return_sem": sem(returns),
    }


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


# ------------------------------------------------------------------------------------------------------
# trainers: one interface over membench PPO and the SB3 reference agents
# ------------------------------------------------------------------------------------------------------
def _ppo_modules():
    from membench_agents.algos.ppo import PPO, PPOConfig
    from membench_agents.envs import make_vector_env

    return PPO, PPOConfig, make_vector_env


_PPO_SET_BY_RUN = {"core", "seed", "total_steps", "device"}


def ppo_config(cfg: dict[str, Any], seed: int):
    """The membench ``PPOConfig`` of a run config (unknown keys: one error with close matches)."""
    _, PPOConfig, _ = _ppo_modules()
    fields = {f.name for f in dataclasses.fields(PPOConfig)}
    allowed = fields - _PPO_SET_BY_RUN
    for k in cfg["ppo"]:
        if k in _PPO_SET_BY_RUN:
            raise ConfigError(f"'ppo.{k}' is set by the run (agent name, seeds, total_steps, device); remove it")
        if k not in allowed:
            raise ConfigError(f"unknown key 'ppo.{k}'.{_close(k, allowed)} Valid: {', '.join(sorted(allowed))}.")
    kwargs = dict(cfg["ppo"])
    kwargs.update(core=AGENTS[cfg["agent"]].core, seed=seed, total_steps=cfg["total_steps"], device=cfg["device"])
    return PPOConfig(**kwargs)


def env_kwargs_of(cfg: dict[str, Any]) -> dict[str, Any]:
    return make_kwargs(cfg["env"], cfg["obs_variant"], cfg["env_kwargs"])


class PPOTrainer:
    """A membench PPO run (one seed)."""

    def __init__(self, cfg: dict[str, Any], seed: int):
        PPO, _, make_vector_env = _ppo_modules()
        self.cfg = cfg
        pc = ppo_config(cfg, seed)
        self.envs = make_vector_env(cfg["env"], num_envs=pc.num_envs, seed=seed, env_kwargs=env_kwargs_of(cfg))
        try:
            self.algo = PPO(self.envs, pc)
        except ValueError as e:
            self.envs.close()
            raise ConfigError(f"agent {cfg['agent']!r} cannot be built for {cfg['env']}: {e}") from None

    @property
    def global_step(self) -> int:
        return int(self.algo.global_step)

    @property
    def policy(self):
        return self.algo.policy

    @property
    def target_steps(self) -> int:
        """The steps of the whole run: PPO trains ``num_iterations`` full rollouts."""
        c = self.algo.config
        return int(self.algo.num_iterations * c.num_envs * c.num_steps)

    @property
    def finished(self) -> bool:
        return self.algo.iteration >= self.algo.num_iterations

    def iterate(self) -> dict[str, Any]:
        return self.algo.train_iteration()

    def state_dict(self) -> dict[str, Any]:
        return {"kind": "ppo", "algo": self.algo.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.algo.load_state_dict(state["algo"])

    def evaluate(self, seeds: list[int], deterministic: bool = True, num_envs: int = 100) -> dict[str, Any]:
        from membench_agents.evaluation import evaluate

        return evaluate(
            self.policy, self.cfg["env"], env_kwargs_of(self.cfg), seeds, device=self.algo.device,
            deterministic=deterministic, num_envs=min(num_envs, len(seeds)),
        )

    def close(self) -> None:
        self.envs.close()


def make_trainer(cfg: dict[str, Any], seed: int):
    if AGENTS[cfg["agent"]].kind == "sb3":
        from membench_agents.sb3 import SB3Trainer

        return SB3Trainer(cfg, seed, device=cfg["device"])
    return PPOTrainer(cfg, seed)


def preflight(cfg: dict[str, Any]) -> None:
    """Fail early, with one clear message, when the agent cannot handle the environment or a key is wrong."""
    import gymnasium as gym

    agent = cfg["agent"]
    try:
        env = gym.make(cfg["env"], **env_kwargs_of(cfg))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"cannot create {cfg['env']} with {env_kwargs_of(cfg)}: {e}") from None
    try:
        obs_space, act_space = env.observation_space, env.action_space
    finally:
        env.close()
    if AGENTS[agent].kind == "sb3":
        from membench_agents.sb3 import check_spaces

        check_spaces(agent, obs_space, act_space)
        return
    check_ppo_spaces(agent, obs_space, act_space)
    pc = ppo_config(cfg, cfg["seeds"][0])
    try:
        from membench_agents.policy import ActorCritic

        ActorCritic(obs_space, act_space, pc.core, pc.hidden_size)
    except ValueError as e:
        raise ConfigError(f"agent {agent!r} cannot handle {cfg['env']}: {e}") from None


def check_ppo_spaces(agent: str, obs_space, action_space) -> None:
    from gymnasium import spaces

    if not isinstance(action_space, (spaces.Discrete, spaces.MultiDiscrete, spaces.Box)):
        raise ConfigError(
            f"agent {agent!r} cannot handle the action space {action_space}: membench PPO has categorical "
            "(Discrete, MultiDiscrete) and diagonal-Gaussian (Box) policy heads only"
        )
    bounded = isinstance(action_space, spaces.Box) and np.all(np.isfinite(action_space.low))
    if isinstance(action_space, spaces.Box) and not (bounded and np.all(np.isfinite(action_space.high))):
        raise ConfigError(
            f"agent {agent!r} cannot handle the action space {action_space}: continuous actions are clipped to the "
            "space, so its bounds must be finite"
        )
    if not isinstance(obs_space, (spaces.Box, spaces.Dict)):
        raise ConfigError(
            f"agent {agent!r} cannot handle the observation space {obs_space}: membench encoders take Box "
            "(vector or HxWxC image) and Dict observations"
        )


# ------------------------------------------------------------------------------------------------------
# stopping: Ctrl-C finishes the current iteration, saves a checkpoint and exits; a second Ctrl-C aborts
# ------------------------------------------------------------------------------------------------------
class StopFlag:
    def __init__(self) -> None:
        self.count = 0
        self._parent = os.getppid()
        self.watch_parent = False

    def __call__(self) -> bool:
        if self.watch_parent and os.getppid() != self._parent:
            return True
        return self.count > 0

    def _handler(self, signum, frame):  # noqa: ARG002
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopFlag]:
        try:
            previous = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread
            yield self
            return
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)


class Interrupted(Exception):
    """Training stopped on request; the checkpoint is saved."""


# ------------------------------------------------------------------------------------------------------
# one seed
# ------------------------------------------------------------------------------------------------------
def _episode_stats(episodes: list[tuple]) -> dict[str, Any]:
    if not episodes:
        return {"episodes": 0, "return_mean": None, "length_mean": None, "success_rate": None}
    rets = [float(e[0]) for e in episodes]
    lens = [int(e[1]) for e in episodes]
    succ = [e[2] for e in episodes]
    return {
        "episodes": len(episodes),
        "return_mean": float(np.mean(rets)),
        "length_mean": float(np.mean(lens)),
        "success_rate": float(np.mean(succ)) if all(s is not None for s in succ) else None,
    }


_LOSS_KEYS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance")
#: History fields that depend on the wall clock (left out when comparing two runs).
TIMING_KEYS = ("sps", "time")


def _save(path: Path, payload: dict[str, Any]) -> None:
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    import torch

    payload = torch.load(path, map_location="cpu", weights_only=False)
    if payload.get("format") != CHECKPOINT_FORMAT:
        raise ConfigError(f"{path}: not a membench checkpoint (format {payload.get('format')!r})")
    return payload


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, path)


class _BatchedWriter:
    """A TensorBoard ``SummaryWriter`` fed in batches: scalars wait here and are handed over at most every
    ``every_s`` seconds, on :meth:`flush` (every checkpoint) and on :meth:`close`. The writer's background
    thread wakes for every scalar it is given; woken several times per training iteration, it competes with
    the training loop for the GIL between torch calls."""

    def __init__(self, writer, every_s: float = 2.0):
        self.writer = writer
        self.every_s = every_s
        self.pending: list[tuple[str, float, int]] = []
        self.last = time.monotonic()

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.pending.append((tag, value, step))
        if time.monotonic() - self.last >= self.every_s:
            self.flush()

    def flush(self) -> None:
        for tag, value, step in self.pending:
            self.writer.add_scalar(tag, value, step)
        self.pending.clear()
        self.last = time.monotonic()

    def close(self) -> None:
        self.flush()
        self.writer.close()


def train_seed(
    cfg: dict[str, Any],
    seed: int,
    seed_dir: str | os.PathLike,
    *,
    resume: bool = False,
    report: Callable[[dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stop_after_iterations: int | None = None,
    trainer=None,
) -> dict[str, Any]:
    """Train one seed into ``seed_dir`` and evaluate it. Returns the seed's summary (also ``eval.json``).

    ``resume``: continue from ``seed_dir/checkpoint.pt`` when it exists. ``should_stop`` is polled after every
    iteration: when it returns True the state is checkpointed and :class:`Interrupted` is raised (so does
    ``stop_after_iterations``, used by tests). A crash inside an iteration leaves the last periodic checkpoint.
    """
    import torch

    seed_dir = Path(seed_dir)
    seed_dir.mkdir(parents=True, exist_ok=True)
    ckpt = seed_dir / CHECKPOINT
    eval_path = seed_dir / "eval.json"
    if resume and eval_path.is_file():
        return json.loads(eval_path.read_text())
    # small networks: 1 thread is fastest and does not fight the other runs for the cores
    torch.set_num_threads(int(os.environ.get("MEMBENCH_TORCH_THREADS", "1")))

    trainer = trainer or make_trainer(cfg, seed)
    run: dict[str, Any] = {"history": [], "evals": [], "train_time": 0.0, "recent": [], "finished": False}
    resumed = False
    if resume and ckpt.is_file():
        payload = load_checkpoint(ckpt)
        if payload["config"] != cfg or payload["seed"] != seed:
            raise ConfigError(f"{ckpt} was written by a different config or seed; start a new run instead")
        trainer.load_state_dict(payload["trainer"])
        run = payload["run"]
        resumed = True
    from torch.utils.tensorboard import SummaryWriter

    writer = _BatchedWriter(SummaryWriter(str(seed_dir), purge_step=trainer.global_step if resumed else None))
    recent = deque(run["recent"], maxlen=100)
    total = trainer.target_steps
    every_eval = cfg["eval"]["every_steps"]
    ck = cfg["checkpoint"]
    seeds_eval = episode_seeds(cfg)

    def save(finished: bool = False) -> None:
        writer.flush()
        run["recent"] = list(recent)
        run["finished"] = finished
        _save(ckpt, {"format": CHECKPOINT_FORMAT, "config": cfg, "seed": seed, "trainer": trainer.state_dict(),
                     "run": run, "global_step": trainer.global_step})
        _write_jsonl(seed_dir / "metrics.jsonl", run["history"] + [{"eval": e} for e in run["evals"]])

    def periodic_eval() -> None:
        with preserve_rng():
            res = normalize_eval(trainer.evaluate(seeds_eval, deterministic=cfg["eval"]["deterministic"],
                                                  num_envs=cfg["eval"]["num_envs"]))
        entry = {"global_step": trainer.global_step, "success_rate": res["success_rate"],
                 "mean_return": res["mean_return"], "mean_length": res["mean_length"]}
        run["evals"].append(entry)
        if res["success_rate"] is not None:
            writer.add_scalar("eval/success_rate", res["success_rate"], trainer.global_step)
        writer.add_scalar("eval/return", res["mean_return"], trainer.global_step)

    last_save = time.monotonic()
    iterations_here = 0
    try:
        if not resumed:
            if every_eval:
                periodic_eval()
            save()  # a checkpoint exists from the very start, so a crash always leaves one
        while not trainer.finished:
            if (should_stop is not None and should_stop()) or (
                stop_after_iterations is not None and iterations_here >= stop_after_iterations
            ):
                save()
                raise Interrupted(f"stopped at step {trainer.global_step}; checkpoint saved to {ckpt}")
            t0 = time.perf_counter()
            before = trainer.global_step
            metrics = trainer.iterate()
            run["train_time"] += time.perf_counter() - t0
            iterations_here += 1
            step = trainer.global_step
            episodes = metrics.get("episodes") or []
            stats = _episode_stats(episodes)
            recent.extend((float(e[0]), e[2]) for e in episodes)
            row = {"iteration": len(run["history"]) + 1, "global_step": step, **stats,
                   **{k: float(metrics[k]) for k in _LOSS_KEYS if metrics.get(k) is not None},
                   "sps": float(metrics.get("sps", 0.0)), "time": run["train_time"]}
            if metrics.get("learning_rate") is not None:
                row["learning_rate"] = float(metrics["learning_rate"])
            run["history"].append(row)
            if stats["episodes"]:
                writer.add_scalar("charts/episodic_return", stats["return_mean"], step)
                writer.add_scalar("charts/episodic_length", stats["length_mean"], step)
                if stats["success_rate"] is not None:
                    writer.add_scalar("charts/success_rate", stats["success_rate"], step)
            writer.add_scalar("charts/SPS", row["sps"], step)
            if "learning_rate" in row:
                writer.add_scalar("charts/learning_rate", row["learning_rate"], step)
            for k in _LOSS_KEYS:
                if k in row:
                    writer.add_scalar(f"losses/{k}", row[k], step)
            if every_eval and (step // every_eval > before // every_eval or trainer.finished):
                periodic_eval()
            if report is not None:
                rec_r = [r for r, _ in recent]
                rec_s = [s for _, s in recent if s is not None]
                report({"step": step, "total": total, "sps": row["sps"],
                        "ret": float(np.mean(rec_r)) if rec_r else None,
                        "succ": float(np.mean(rec_s)) if rec_s else None})
            now = time.monotonic()
            if (ck["every_iterations"] and len(run["history"]) % int(ck["every_iterations"]) == 0) or (
                ck["every_seconds"] and now - last_save >= ck["every_seconds"]
            ):
                save()
                last_save = now
    except KeyboardInterrupt:
        writer.close()
        raise
    except Interrupted:
        writer.close()
        raise
    except BaseException:
        (seed_dir / "error.txt").write_text(traceback.format_exc())
        writer.close()
        raise

    with preserve_rng():
        final = normalize_eval(trainer.evaluate(seeds_eval, deterministic=cfg["eval"]["deterministic"],
                                                num_envs=cfg["eval"]["num_envs"]))
    metric, value = run_metric(final)
    writer.add_scalar(f"final/{metric}", value, trainer.global_step)
    writer.close()
    save(finished=True)
    summary = {
        "seed": seed,
        "global_step": trainer.global_step,
        "iterations": len(run["history"]),
        "train_time_s": run["train_time"],
        "sps": trainer.global_step / run["train_time"] if run["train_time"] > 0 else None,
        "metric": metric,
        "value": value,
        "episode_seeds": seeds_eval,
        "deterministic": cfg["eval"]["deterministic"],
        "eval": final,
    }
    eval_path.write_text(json.dumps(summary, indent=1))
    with contextlib.suppress(Exception):
        trainer.close()
    (seed_dir / "error.txt").unlink(missing_ok=True)
    return summary


def load_trainer(run_dir: str | os.PathLike, seed: int):
    """Rebuild the trainer of ``run_dir/seed_<seed>`` from its checkpoint (for `membench eval`)."""
    run_dir = Path(run_dir)
    cfg = read_config(run_dir)
    payload = load_checkpoint(run_dir / f"seed_{seed}" / CHECKPOINT)
    trainer = make_trainer(cfg, seed)
    trainer.load_state_dict(payload["trainer"])
    return cfg, trainer, payload


# ------------------------------------------------------------------------------------------------------
# jobs: several seeds (and cells) in parallel worker processes with one aggregated progress bar
# ------------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Job:
    label: str
    cfg: dict[str, Any]
    seed: int
    seed_dir: str
    resume: bool = False

    @property
    def cost(self) -> float:
        return self.cfg["total_steps"] * (2.5 if AGENTS[self.cfg["agent"]].recurrent else 1.0)


class Progress:
    """One tqdm bar over every job: steps, SPS, recent return / success and ETA."""

    def __init__(self, jobs: list[Job], enabled: bool = True):
        self.totals = {j.label: int(j.cfg["total_steps"]) for j in jobs}
        self.steps: dict[str, int] = {}
        self.info: dict[str, dict[str, Any]] = {}
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=sum(self.totals.values()), unit="step", unit_scale=True, dynamic_ncols=True,
                            mininterval=0.5, smoothing=0.05, file=sys.stderr)

    def start(self, job: Job, step: int) -> None:
        self._advance(job, step)

    def _set_total(self, job: Job, total: int) -> None:
        if total != self.totals[job.label]:
            self.totals[job.label] = total
            if self.bar is not None:
                self.bar.total = sum(self.totals.values())

    def _advance(self, job: Job, step: int) -> None:
        prev = self.steps.get(job.label, 0)
        self.steps[job.label] = step
        if self.bar is not None and step > prev:
            self.bar.update(step - prev)

    def update(self, job: Job, msg: dict[str, Any]) -> None:
        self._set_total(job, int(msg.get("total", self.totals[job.label])))
        self._advance(job, int(msg["step"]))
        self.info[job.label] = msg
        if self.bar is not None:
            sps = sum(m["sps"] for m in self.info.values())
            post = {"sps": f"{sps:,.0f}"}
            if msg.get("ret") is not None:
                post["ret"] = f"{msg['ret']:.3g}"
            if msg.get("succ") is not None:
                post["succ"] = f"{msg['succ']:.2f}"
            post["run"] = job.label
            self.bar.set_postfix(post, refresh=False)

    def finish(self, job: Job) -> None:
        self._advance(job, max(self.totals[job.label], self.steps.get(job.label, 0)))
        self._set_total(job, self.steps[job.label])
        self.info.pop(job.label, None)

    def write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _job_steps_done(job: Job) -> int:
    """Steps already trained (for the progress bar of a resumed run)."""
    d = Path(job.seed_dir)
    if (d / "eval.json").is_file():
        return job.cfg["total_steps"]
    if job.resume and (d / CHECKPOINT).is_file():
        try:
            return int(load_checkpoint(d / CHECKPOINT).get("global_step", 0))
        except Exception:
            return 0
    return 0


def _worker(job: Job, queue) -> None:
    """Entry point of a worker process (spawned): one job, progress and result through ``queue``."""
    os.setpgrp()  # Ctrl-C in the terminal reaches only the parent, which forwards it exactly once
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    stop = StopFlag()
    stop.watch_parent = True
    with stop.installed():
        try:
            summary = train_seed(job.cfg, job.seed, job.seed_dir, resume=job.resume, should_stop=stop,
                                 report=lambda m: queue.put(("progress", job.label, m)))
            queue.put(("done", job.label, summary))
        except Interrupted as e:
            queue.put(("interrupted", job.label, str(e)))
        except KeyboardInterrupt:
            queue.put(("interrupted", job.label, "aborted (second Ctrl-C); the last periodic checkpoint remains"))
        except ConfigError as e:
            queue.put(("error", job.label, str(e)))
        except BaseException:
            queue.put(("error", job.label, traceback.format_exc()))


class RunFailed(RuntimeError):
    pass


def run_jobs(jobs: list[Job], workers: int = 1, progress: bool = True) -> dict[str, dict[str, Any]]:
    """Run the jobs, ``workers`` at a time (1: in this process). Returns the summaries by job label.

    Ctrl-C: every running job finishes its current iteration, saves its checkpoint and stops (a second Ctrl-C
    aborts at once); then :class:`KeyboardInterrupt` is raised. Any failed job raises :class:`RunFailed`.
    """
    bar = Progress(jobs, enabled=progress)
    for j in jobs:
        bar.start(j, _job_steps_done(j))
    results: dict[str, dict[str, Any]] = {}
    try:
        if workers <= 1:
            _run_inline(jobs, bar, results)
        else:
            _run_parallel(jobs, workers, bar, results)
    finally:
        bar.close()
    return results


def _run_inline(jobs: list[Job], bar: Progress, results: dict[str, dict[str, Any]]) -> None:
    stop = StopFlag()
    with stop.installed():
        for job in jobs:
            try:
                results[job.label] = train_seed(job.cfg, job.seed, job.seed_dir, resume=job.resume,
                                                should_stop=stop, report=lambda m, j=job: bar.update(j, m))
            except Interrupted as e:
                bar.write(f"[{job.label}] {e}")
                raise KeyboardInterrupt from None
            bar.finish(job)


def _run_parallel(jobs: list[Job], workers: int, bar: Progress, results: dict[str, dict[str, Any]]) -> None:
    import multiprocessing as mp
    import queue as queue_mod

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    pending = sorted(jobs, key=lambda j: -j.cost)
    by_label = {j.label: j for j in jobs}
    running: dict[str, Any] = {}
    failures: list[str] = []
    interrupted: list[str] = []
    stop = StopFlag()

    def handle(kind: str, label: str, payload: Any) -> None:
        """One message from a worker: progress, its final summary, an interruption or an error."""
        if kind == "progress":
            bar.update(by_label[label], payload)
        elif kind == "done":
            results[label] = payload
            bar.finish(by_label[label])
        elif kind == "interrupted":
            interrupted.append(label)
            bar.write(f"[{label}] {payload}")
        elif kind == "error":
            failures.append(label)
            bar.write(f"[{label}] failed:\n{payload}")

    def forward(signum, frame):  # noqa: ARG001
        stop.count += 1
        if stop.count == 1:
            bar.write("Ctrl-C: each running run finishes its iteration and saves a checkpoint "
                      "(Ctrl-C again to abort at once)")
        for p in running.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, forward)
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        while pending or running:
            while pending and len(running) < workers and not stop.count and not failures:
                job = pending.pop(0)
                p = ctx.Process(target=_worker, args=(job, q), name=f"membench-{job.label}")
                p.start()
                running[job.label] = p
            try:
                handle(*q.get(timeout=0.5))
            except queue_mod.Empty:
                pass
            for label, p in list(running.items()):
                if p.exitcode is None:
                    continue
                # drain what the process sent before it exited
                while True:
                    try:
                        handle(*q.get(timeout=0.2))
                    except queue_mod.Empty:
                        break
                p.join()
                del running[label]
                if label not in results and label not in interrupted and label not in failures:
                    failures.append(label)
                    bar.write(f"[{label}] worker exited with code {p.exitcode} (see its error.txt / checkpoint)")
            if failures and not stop.count:
                # let the other runs checkpoint and stop, then report the failure
                forward(signal.SIGINT, None)
    finally:
        signal.signal(signal.SIGINT, previous)
    if failures:
        raise RunFailed(f"run(s) failed: {', '.join(failures)}")
    if stop.count or interrupted:
        raise KeyboardInterrupt


# ------------------------------------------------------------------------------------------------------
# a run folder (one cell, all seeds)
# ------------------------------------------------------------------------------------------------------
def run_label(cfg: dict[str, Any]) -> str:
    v = cfg["obs_variant"]
    return cfg["agent"] if v == "partial" else f"{cfg['agent']}.{v}"


def new_run_dir(root: str | os.PathLike, cfg: dict[str, Any]) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path(root) / Path(*cfg["env"].replace(":", "_").split("/")) / run_label(cfg)
    d = base / stamp
    k = 1
    while d.exists():
        k += 1
        d = base / f"{stamp}-{k}"
    return d


def read_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    import yaml

    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise ConfigError(f"{run_dir} is not a membench run folder (no config.yaml)")
    return yaml.safe_load(path.read_text())


def prepare_run(cfg: dict[str, Any], run_dir: str | os.PathLike) -> list[Job]:
    """Write config.yaml and return one job per seed."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(dump(cfg))
    return jobs_for(cfg, run_dir, resume=False)


def jobs_for(cfg: dict[str, Any], run_dir: Path, resume: bool, prefix: str = "") -> list[Job]:
    return [
        Job(f"{prefix}{run_label(cfg)}/s{s}", cfg, s, str(Path(run_dir) / f"seed_{s}"), resume=resume)
        for s in cfg["seeds"]
    ]


def finalize_run(run_dir: str | os.PathLike, plot: bool = True, wall_time: float | None = None) -> dict[str, Any]:
    """Aggregate the seeds of a finished run into results.json (and the learning-curve PNG)."""
    run_dir = Path(run_dir)
    cfg = read_config(run_dir)
    summaries = []
    for s in cfg["seeds"]:
        p = run_dir / f"seed_{s}" / "eval.json"
        if not p.is_file():
            raise ConfigError(f"{run_dir}: seed {s} has not finished (no {p.name}); resume with --resume {run_dir}")
        summaries.append(json.loads(p.read_text()))
    agg = aggregate([s["eval"] for s in summaries])
    seeds_eval = episode_seeds(cfg)
    git = git_info()
    results = {
        "env": cfg["env"],
        "agent": cfg["agent"],
        "obs_variant": cfg["obs_variant"],
        "env_kwargs": cfg["env_kwargs"],
        "total_steps": cfg["total_steps"],
        "seeds": cfg["seeds"],
        **agg,
        "runs": [
            {k: s[k] for k in ("seed", "global_step", "iterations", "train_time_s", "sps", "metric", "value")}
            | {"success_rate": s["eval"]["success_rate"], "mean_return": s["eval"]["mean_return"],
               "mean_length": s["eval"]["mean_length"]}
            for s in summaries
        ],
        "protocol": {
            "description": (
                "independent training runs (one per seed), each evaluated on the same fixed list of episode seeds "
                "(episode i: env.reset(seed=episode_seeds[i])); per-run mean first, then mean ± SEM over runs "
                "(SEM = std(ddof=1)/sqrt(n_runs)); success rate where the task defines success, return otherwise"
            ),
            "n_runs": len(summaries),
            "training_seeds": cfg["seeds"],
            "episodes_per_run": len(seeds_eval),
            "episode_seeds": {"first": seeds_eval[0], "last": seeds_eval[-1], "list": seeds_eval},
            "deterministic_actions": cfg["eval"]["deterministic"],
            "metric": agg["metric"],
            "aggregation": "mean ± SEM over per-run means (ddof=1)",
        },
        "versions": versions(cfg["agent"]),
        "git": git,
        "git_commit": git["commit"],
        "config": cfg,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if wall_time is not None:
        results["wall_time_s"] = wall_time
    (run_dir / "results.json").write_text(json.dumps(results, indent=1))
    if plot:
        from membench_agents.report import plot_run

        plot_run(run_dir)
    return results


def train(
    cfg: dict[str, Any],
    run_dir: str | os.PathLike,
    *,
    workers: int = 1,
    resume: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Train every seed of one cell into ``run_dir``, evaluate, write results.json and the PNG."""
    run_dir = Path(run_dir)
    t0 = time.perf_counter()
    if resume:
        saved = read_config(run_dir)
        if saved != cfg:
            raise ConfigError(f"{run_dir}/config.yaml differs from the requested config; resume without overrides")
        jobs = jobs_for(cfg, run_dir, resume=True)
    else:
        preflight(cfg)
        jobs = prepare_run(cfg, run_dir)
    run_jobs(jobs, workers=workers, progress=progress)
    return finalize_run(run_dir, wall_time=time.perf_counter() - t0)
