"""Optional experiment tracking: Weights & Biases mirrors the scalars a run writes to TensorBoard.

``membench train/bench/sweep --track`` (as CleanRL's ``--track``) opens one W&B run per seed with the run's
resolved config, and every scalar the training loop logs (``charts/``, ``losses/``, ``algo/``, ``eval/``,
``final/``) is logged to it at the same environment step. TensorBoard stays the record on disk; W&B is a
mirror. The W&B run's id is derived from the seed folder, so ``--resume --track`` continues the same W&B run.
``WANDB_MODE=offline`` keeps everything local (``wandb sync`` uploads it later).

Needs the optional extra ``pip install 'membench-agents[wandb]'``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from membench_agents.errors import ConfigError


@dataclass(frozen=True)
class Tracking:
    """Where a run's scalars are mirrored: a W&B project (and entity / team, None: the user's default)."""

    project: str = "membench"
    entity: str | None = None


def check_available() -> None:
    """One clear error, before any run starts, when --track is asked for without the wandb package."""
    try:
        import wandb  # noqa: F401
    except ImportError:
        raise ConfigError(
            "--track needs Weights & Biases: pip install 'membench-agents[wandb]' (or pip install wandb)"
        ) from None


def run_id(seed_dir: str | os.PathLike) -> str:
    """The W&B run id of a seed folder (stable, so a resumed run continues its W&B run)."""
    return hashlib.sha256(str(Path(seed_dir).resolve()).encode()).hexdigest()[:16]


class WandbMirror:
    """One seed's W&B run: :meth:`log` takes (tag, value, step) triples in the order they were written (one W&B
    row per environment step), :meth:`close` finishes the run. After a resume, W&B keeps what the interrupted
    process had logged past its checkpoint (a W&B run cannot go back in steps; TensorBoard's log drops it)."""

    def __init__(self, tracking: Tracking, cfg: dict[str, Any], seed: int, seed_dir: str | os.PathLike):
        import wandb

        name = f"{cfg['env']}/{cfg['agent']}" + (f".{cfg['obs_variant']}" if cfg["obs_variant"] != "partial" else "")
        self.run = wandb.init(
            project=tracking.project,
            entity=tracking.entity,
            id=run_id(seed_dir),
            resume="allow",
            name=f"{name}/seed_{seed}",
            group=name,
            config={**cfg, "seed": seed},
            dir=str(seed_dir),
            reinit="create_new",
        )

    def log(self, scalars: list[tuple[str, float, int]]) -> None:
        row: dict[str, float] = {}
        at = None
        for tag, value, step in scalars:
            if at is not None and step != at:
                self.run.log(row, step=at)
                row = {}
            at = step
            row[tag] = value
        if row:
            self.run.log(row, step=at)

    def close(self) -> None:
        self.run.finish()


__all__ = ["Tracking", "WandbMirror", "check_available", "run_id"]
