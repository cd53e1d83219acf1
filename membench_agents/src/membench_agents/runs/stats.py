"""The evaluation protocol's statistics: per-run means first, then mean ± SEM over runs.

Evaluation protocol (the seed papers: MIKASA-Robo App. I, memory-classification App. F.1): every training
run is evaluated on the same fixed list of episode seeds (``eval.seed_start`` ... + ``eval.episodes`` - 1,
default 0..99 as in the memory-classification paper; MIKASA-Robo uses 1..100), deterministic actions;
the per-run mean success rate (or return, where the task defines no success) is computed first, then
the mean ± standard error over runs (SEM = std(ddof=1) / sqrt(n)). :func:`sem` is the one SEM of the
package (run results, report curves).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def episode_seeds(cfg: dict[str, Any]) -> list[int]:
    """The fixed episode seeds of a run config's evaluation protocol."""
    ev = cfg["eval"]
    return list(range(ev["seed_start"], ev["seed_start"] + ev["episodes"]))


def normalize_eval(result: dict[str, Any]) -> dict[str, Any]:
    """Per-episode lists plus their means, whatever evaluator produced them."""
    returns = [float(x) for x in result["returns"]]
    lengths = [int(x) for x in result["lengths"]]
    raw = result.get("successes")
    successes: list[Any] = list(raw) if raw is not None else [None] * len(returns)
    has_success = bool(successes) and all(s is not None for s in successes)
    return {
        "returns": returns,
        "lengths": lengths,
        "successes": [bool(s) for s in successes] if has_success else None,
        "mean_return": float(np.mean(returns)),
        "mean_length": float(np.mean(lengths)),
        "success_rate": float(np.mean(successes)) if has_success else None,
    }


def run_metric(evaluation: dict[str, Any], score: str | None = None) -> tuple[str, float]:
    """The per-run number of the protocol: the task's ``score`` where its catalogue entry names one (``"return"``,
    :func:`membench_agents.config.env_facts.env_score`), else the success rate where the task defines success, the
    return otherwise."""
    if score != "return" and evaluation.get("success_rate") is not None:
        return "success_rate", float(evaluation["success_rate"])
    return "return", float(evaluation["mean_return"])


def sem(values: list[float]) -> float:
    """Standard error of the mean over runs (ddof=1); 0 for a single run (no spread can be estimated)."""
    if len(values) < 2:
        return 0.0
    return float(np.std(values, ddof=1) / math.sqrt(len(values)))


def aggregate(per_run: list[dict[str, Any]], score: str | None = None) -> dict[str, Any]:
    """Mean ± SEM over the per-run means. ``per_run``: normalised evaluations (see :func:`normalize_eval`).

    The metric is the success rate when every run defines one (and the task's ``score`` is not ``"return"``,
    :func:`run_metric`), the return otherwise."""
    if not per_run:
        raise ValueError("no runs to aggregate")
    names = {run_metric(r, score)[0] for r in per_run}
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


__all__ = ["aggregate", "episode_seeds", "normalize_eval", "run_metric", "sem"]
