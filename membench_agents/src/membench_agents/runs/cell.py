"""A cell (environment, agent, budget, hyperparameters) trained once per seed into one run folder.

:func:`train` prepares (or resumes) the folder, runs one job per seed (:mod:`~membench_agents.runs.workers`,
each one :func:`membench_agents.runs.loop.train_seed`) and aggregates the seeds into ``results.json``
(:func:`finalize_run`). :func:`run_config` reads a folder's config and checks it against what each seed was
actually trained with.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from membench_agents.algos.trainer import check_device_available, preflight
from membench_agents.config.env_facts import env_score
from membench_agents.config.resolve import dump
from membench_agents.runs.checkpoint import CHECKPOINT, load_checkpoint
from membench_agents.runs.executors import Executor
from membench_agents.runs.folder import (
    CONFIG,
    RESULTS,
    RunFolderError,
    diff_text,
    git_info,
    locked,
    read_config,
    run_label,
    same_config,
    versions,
    write_json,
)
from membench_agents.runs.loop import read_eval, resume_point
from membench_agents.runs.stats import aggregate, episode_seeds
from membench_agents.runs.tracking import Tracking
from membench_agents.runs.workers import Job, run_jobs


def seed_dir(run_dir: str | os.PathLike, seed: int) -> Path:
    return Path(run_dir) / f"seed_{seed}"


def run_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    """The config of a run folder: ``config.yaml``, which must equal the config every seed's checkpoint (or
    final evaluation) was trained with; an edited config.yaml is one error naming the first differences."""
    cfg = read_config(run_dir)
    for s in cfg["seeds"]:
        d = seed_dir(run_dir, s)
        if (d / CHECKPOINT).is_file():
            trained = load_checkpoint(d / CHECKPOINT)["config"]
            source = d / CHECKPOINT
        elif (d / "eval.json").is_file():
            summary = read_eval(d)
            if "config" not in summary:
                continue
            trained, source = summary["config"], d / "eval.json"
        else:
            continue
        if not same_config(trained, cfg):
            raise RunFolderError(
                f"{Path(run_dir) / CONFIG} differs from the config {source} was trained with "
                f"({diff_text(cfg, trained)}); the checkpoint's config is the run's: restore "
                "config.yaml, or start a new run for the new config"
            )
    return cfg


def check_resumable(cfg: dict[str, Any], run_dir: str | os.PathLike) -> None:
    """Raise the one clear error ``--resume`` would hit for any seed of the folder, before any work starts."""
    check_device_available(cfg["device"])
    for s in cfg["seeds"]:
        resume_point(cfg, s, seed_dir(run_dir, s))


def prepare_run(cfg: dict[str, Any], run_dir: str | os.PathLike) -> list[Job]:
    """Write config.yaml and return one job per seed."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG).write_text(dump(cfg))
    return jobs_for(cfg, run_dir, resume=False)


def jobs_for(cfg: dict[str, Any], run_dir: Path, resume: bool, prefix: str = "") -> list[Job]:
    return [
        Job(f"{prefix}{run_label(cfg)}/s{s}", cfg, s, str(seed_dir(run_dir, s)), resume=resume) for s in cfg["seeds"]
    ]


def finalize_run(run_dir: str | os.PathLike, wall_time: float | None = None) -> dict[str, Any]:
    """Aggregate the seeds of a finished run into results.json (its learning-curve plot:
    :func:`membench_agents.analysis.report.plot_run`)."""
    run_dir = Path(run_dir)
    cfg = run_config(run_dir)
    summaries = []
    for s in cfg["seeds"]:
        if not (seed_dir(run_dir, s) / "eval.json").is_file():
            raise RunFolderError(
                f"{run_dir}: seed {s} has not finished (no eval.json); resume with membench train --resume {run_dir}"
            )
        summaries.append(read_eval(seed_dir(run_dir, s), cfg))
    agg = aggregate([s["eval"] for s in summaries], env_score(cfg["env"]))
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
        # each run's number is the aggregate's, from its evaluation: the metric an eval.json names is the one of
        # the catalogue when the seed finished (a task's score can change since: POPGym's on 2026-11-28)
        "runs": [
            {k: s[k] for k in ("seed", "global_step", "iterations", "train_time_s", "sps")}
            | {
                "metric": agg["metric"],
                "value": value,
                "success_rate": s["eval"]["success_rate"],
                "mean_return": s["eval"]["mean_return"],
                "mean_length": s["eval"]["mean_length"],
            }
            for s, value in zip(summaries, agg["per_run"], strict=True)
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
    write_json(run_dir / RESULTS, results)
    return results


def train(
    cfg: dict[str, Any],
    run_dir: str | os.PathLike,
    *,
    workers: int = 1,
    resume: bool = False,
    progress: bool = True,
    tracking: Tracking | None = None,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """Train every seed of one cell into ``run_dir``, evaluate, write results.json.

    ``resume``: continue the folder's run; ``cfg`` must be the config its seeds were trained with. The
    folder is locked for the whole call (a second process gets one error). ``tracking``: mirror each seed's
    scalars to Weights & Biases (:mod:`membench_agents.runs.tracking`). ``executor``: where the seeds train
    (:mod:`membench_agents.runs.executors`; None: this machine, ``workers`` processes)."""
    run_dir = Path(run_dir)
    t0 = time.perf_counter()
    if not resume:
        if (run_dir / CONFIG).exists():
            raise RunFolderError(f"{run_dir} already holds a run; resume it or choose another folder")
        preflight(cfg)  # before the folder exists: a config that cannot train leaves nothing behind
    with locked(run_dir):
        if resume:
            saved = run_config(run_dir)
            if not same_config(saved, cfg):
                raise RunFolderError(
                    f"{run_dir} holds a run of another config ({diff_text(saved, cfg)}); "
                    "resume it with its own config, or start a new run"
                )
            check_resumable(cfg, run_dir)
            jobs = jobs_for(cfg, run_dir, resume=True)
        else:
            if (run_dir / CONFIG).exists():  # made by another process since the check above
                raise RunFolderError(f"{run_dir} already holds a run; resume it or choose another folder")
            jobs = prepare_run(cfg, run_dir)
        for job in jobs:
            job.tracking = tracking
        run_jobs(jobs, workers=workers, progress=progress, executor=executor)
        return finalize_run(run_dir, wall_time=time.perf_counter() - t0)


__all__ = ["check_resumable", "finalize_run", "jobs_for", "prepare_run", "run_config", "seed_dir", "train"]
