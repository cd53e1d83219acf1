"""Aggregate metrics for few-run comparisons across tasks (Agarwal et al. 2021, "Deep RL at the edge of the
statistical precipice", as its ``rliable`` package defines them), in plain numpy.

Scores are given per task: ``scores[j]`` holds the per-run scores (one per training run) of task ``j``; tasks
may have different numbers of runs. Every metric pools the runs of all tasks:

- :func:`iqm`: the interquartile mean, the mean of the middle 50 % of the pooled scores (25 % trimmed from
  each end, ``int(0.25 n)`` scores on each side, as ``scipy.stats.trim_mean(x, 0.25)``); robust to outlier
  runs, less noisy than the median;
- :func:`stratified_bootstrap`: confidence intervals by resampling the runs **within each task** with
  replacement (every resample keeps each task's run count), then recomputing the metric; percentile interval;
- :func:`performance_profile`: the run-score distribution, for each threshold τ the fraction of all runs
  (pooled over tasks) whose score is > τ, with stratified-bootstrap bands.

:func:`aggregate_runs` groups run folders by algorithm (agent, observation variant and, for agents whose
config sets it, the context length K; runs of one algorithm with other configs apart:
:func:`membench_agents.analysis.report.algorithm_names`) and task (environment ID and kwargs); :func:`table` and
:func:`plot` show the result. The mean ± SEM over runs of each cell stays the protocol's per-cell number
(:mod:`membench_agents.runs.stats`); these metrics summarise an algorithm across cells.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from membench_agents.analysis.report import algorithm_names, load_results, save_figure, task_name

#: Defaults: 2000 bootstrap resamples, 95 % percentile intervals, resampling seed 0.
REPS = 2000
CONFIDENCE = 0.95
#: The most resamples: memory grows as reps x runs (resampled scores) and reps x 101 (profile thresholds), about
#: 0.1 GB at this bound for a few dozen runs per algorithm.
MAX_REPS = 100_000


def _as_tasks(scores: Any) -> list[np.ndarray]:
    """Per-task 1-D float arrays; a 2-D array is (runs, tasks) as in rliable; a 1-D array is one task."""
    if isinstance(scores, np.ndarray):
        if scores.ndim == 1:
            tasks = [scores]
        elif scores.ndim == 2:
            tasks = [scores[:, j] for j in range(scores.shape[1])]
        else:
            raise ValueError(f"scores must be 1-D (runs) or 2-D (runs x tasks), got shape {scores.shape}")
    else:
        tasks = [np.asarray(t) for t in scores]
    out = []
    for j, t in enumerate(tasks):
        t = np.asarray(t, dtype=np.float64).reshape(-1)
        if t.size == 0:
            raise ValueError(f"task {j} has no scores")
        if not np.all(np.isfinite(t)):
            raise ValueError(f"task {j} has non-finite scores: {t.tolist()}")
        out.append(t)
    if not out:
        raise ValueError("no tasks to aggregate")
    return out


def iqm(x: Any, axis: int | None = None) -> Any:
    """Interquartile mean: sort, drop ``int(0.25 n)`` values from each end, average the rest (along ``axis``;
    ``None`` pools everything)."""
    a = np.asarray(x, dtype=np.float64)
    if axis is None:
        a, axis = a.reshape(-1), 0
    n = a.shape[axis]
    if n == 0:
        raise ValueError("iqm of no scores")
    cut = int(0.25 * n)
    a = np.sort(a, axis=axis)
    return np.take(a, np.arange(cut, n - cut), axis=axis).mean(axis=axis)


def mean(x: Any, axis: int | None = None) -> Any:
    return np.asarray(x, dtype=np.float64).mean(axis=axis)


def pooled(scores: Any) -> np.ndarray:
    """Every run of every task in one array."""
    return np.concatenate(_as_tasks(scores))


def stratified_bootstrap(scores: Any, statistic: Callable[..., Any], reps: int = REPS, seed: int = 0) -> np.ndarray:
    """``reps`` values of ``statistic`` on stratified resamples: within each task, its runs are drawn with
    replacement (as many as it has), the tasks' draws are pooled into one row, and ``statistic(rows, axis=-1)``
    is computed row-wise. Returns an array of shape ``(reps, ...)``. Deterministic for a given ``seed``."""
    tasks = _as_tasks(scores)
    if not 1 <= reps <= MAX_REPS:
        raise ValueError(f"reps must be between 1 and {MAX_REPS}, got {reps}")
    rng = np.random.default_rng(seed)
    rows = np.concatenate([t[rng.integers(0, t.size, size=(reps, t.size))] for t in tasks], axis=1)
    return np.asarray(statistic(rows, axis=-1))


def interval(samples: np.ndarray, confidence: float = CONFIDENCE) -> tuple[Any, Any]:
    """Percentile interval of bootstrap ``samples`` (along axis 0)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail], axis=0)
    return lo, hi


@dataclass(frozen=True)
class Estimate:
    value: float
    lo: float
    hi: float

    def text(self, digits: int = 3) -> str:
        return f"{self.value:.{digits}f} [{self.lo:.{digits}f}, {self.hi:.{digits}f}]"


def estimate(
    scores: Any, statistic: Callable[..., Any] = iqm, reps: int = REPS, confidence: float = CONFIDENCE, seed: int = 0
) -> Estimate:
    """Point estimate of ``statistic`` on the pooled scores and its stratified-bootstrap percentile interval."""
    value = float(statistic(pooled(scores), axis=-1))
    lo, hi = interval(stratified_bootstrap(scores, statistic, reps, seed), confidence)
    return Estimate(value, float(lo), float(hi))


def performance_profile(scores: Any, taus: Sequence[float] | np.ndarray) -> np.ndarray:
    """For each τ, the fraction of all runs (pooled over tasks) with score > τ (rliable's run-score
    distribution)."""
    taus = np.asarray(taus, dtype=np.float64)
    return _fraction_above(pooled(scores), taus)


def _fraction_above(x: np.ndarray, taus: Sequence[float] | np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.moveaxis(np.asarray(x), axis, -1)
    out = np.empty((*x.shape[:-1], len(taus)))
    for i, tau in enumerate(taus):  # one threshold at a time: memory of x, not of x times the thresholds
        out[..., i] = (x > tau).mean(axis=-1)
    return out


def performance_profile_ci(
    scores: Any, taus: Sequence[float] | np.ndarray, reps: int = REPS, confidence: float = CONFIDENCE, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(profile, lower band, upper band) at ``taus``: :func:`performance_profile` and its stratified-bootstrap
    percentile interval at every τ."""
    taus = np.asarray(taus, dtype=np.float64)
    samples = stratified_bootstrap(scores, lambda rows, axis: _fraction_above(rows, taus, axis), reps, seed)
    lo, hi = interval(samples, confidence)
    return performance_profile(scores, taus), lo, hi


# ------------------------------------------------------------------------------------------------------
# over run folders
# ------------------------------------------------------------------------------------------------------
@dataclass
class Algorithm:
    """One algorithm's scores over the tasks it ran: ``tasks[name] = per-run scores``."""

    name: str
    metric: str
    tasks: dict[str, list[float]] = field(default_factory=dict)
    iqm: Estimate | None = None
    mean: Estimate | None = None

    @property
    def n_runs(self) -> int:
        return sum(len(v) for v in self.tasks.values())


@dataclass
class Aggregate:
    algorithms: list[Algorithm]
    reps: int
    confidence: float
    seed: int
    notes: list[str]
    taus: np.ndarray
    profiles: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": (
                "IQM and mean of the per-run scores pooled over tasks; stratified bootstrap (runs resampled "
                "within each task) percentile intervals; performance profile = fraction of runs with "
                "score > tau"
            ),
            "reps": self.reps,
            "confidence": self.confidence,
            "seed": self.seed,
            "notes": self.notes,
            "algorithms": [
                {
                    "name": a.name,
                    "metric": a.metric,
                    "n_tasks": len(a.tasks),
                    "n_runs": a.n_runs,
                    "tasks": a.tasks,
                    "iqm": vars(a.iqm),
                    "mean": vars(a.mean),
                    "profile": {
                        "taus": self.taus.tolist(),
                        "fraction": self.profiles[a.name][0].tolist(),
                        "lo": self.profiles[a.name][1].tolist(),
                        "hi": self.profiles[a.name][2].tolist(),
                    },
                }
                for a in self.algorithms
            ],
        }


def aggregate_results(
    results: Sequence[dict[str, Any]],
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
    points: int = 101,
    pool: bool = False,
) -> Aggregate:
    """Group ``results.json`` contents by algorithm and task, then IQM / mean with intervals and profiles. Runs
    of one algorithm on one task with different configs stay apart unless ``pool`` (:func:`algorithm_names`)."""
    algos: dict[str, Algorithm] = {}
    names, notes = algorithm_names(results, pool=pool)
    for r, name in zip(results, names, strict=True):
        task = task_name(r)
        a = algos.setdefault(name, Algorithm(name, r["metric"]))
        if a.metric != r["metric"]:
            a.metric = "mixed"
        a.tasks.setdefault(task, []).extend(float(v) for v in r["per_run"])
    if not algos:
        raise ValueError("no runs to aggregate")
    return aggregate_algorithms(list(algos.values()), reps, confidence, seed, points=points, notes=notes)


def aggregate_algorithms(
    algos: Sequence[Algorithm],
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
    points: int = 101,
    notes: Sequence[str] = (),
    taus: Sequence[float] | np.ndarray | None = None,
) -> Aggregate:
    """IQM and mean with their intervals, and the performance profiles, of algorithms whose per-task scores are
    given (``Algorithm.tasks``; :func:`aggregate_results` groups run folders into them, a suite scorecard its
    normalised scores). ``taus``: the profile thresholds (default: 0..1 for success rates, else the scores'
    range, ``points`` of them)."""
    notes = list(notes)
    if not algos:
        raise ValueError("no algorithms to aggregate")
    task_sets = {frozenset(a.tasks) for a in algos}
    if len(task_sets) > 1:
        notes.append("the algorithms ran different sets of tasks: their aggregates are not directly comparable")
    for a in algos:
        if a.metric == "mixed":
            notes.append(f"{a.name}: some tasks report a success rate and others a return: scores are pooled as is")
        elif a.metric == "return" and len(a.tasks) > 1:
            notes.append(
                f"{a.name}: returns of different tasks are pooled unnormalised (rliable assumes normalised scores)"
            )
        a.iqm = estimate(list(a.tasks.values()), iqm, reps, confidence, seed)
        a.mean = estimate(list(a.tasks.values()), mean, reps, confidence, seed)
    if taus is not None:
        taus = np.asarray(taus, dtype=np.float64)
    elif all(a.metric == "success_rate" for a in algos):
        taus = np.linspace(0.0, 1.0, points)
    else:
        every = np.concatenate([pooled(list(a.tasks.values())) for a in algos])
        lo, hi = float(every.min()), float(every.max())
        taus = np.linspace(lo, hi if hi > lo else lo + 1.0, points)
    profiles = {a.name: performance_profile_ci(list(a.tasks.values()), taus, reps, confidence, seed) for a in algos}
    return Aggregate(list(algos), reps, confidence, seed, notes, taus, profiles)


def aggregate_runs(run_dirs: Sequence[str | os.PathLike], **kw: Any) -> Aggregate:
    return aggregate_results([load_results(d) for d in run_dirs], **kw)


def table(agg: Aggregate, markdown: bool = False) -> str:
    """One row per algorithm: tasks, runs, IQM and mean with their intervals, and the notes."""
    pct = f"{agg.confidence:.0%}"
    head = ["algorithm", "metric", "tasks", "runs", f"IQM [{pct} CI]", f"mean [{pct} CI]"]
    rows = [
        [
            a.name,
            a.metric,
            str(len(a.tasks)),
            str(a.n_runs),
            cast(Estimate, a.iqm).text(),
            cast(Estimate, a.mean).text(),
        ]
        for a in agg.algorithms
    ]  # (aggregate_results set both)
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows]
    lines.append(
        f"(stratified bootstrap over runs within each task, {agg.reps} resamples, seed {agg.seed}, "
        "percentile intervals; IQM = mean of the middle 50 % of all runs' scores)"
    )
    lines += [f"note: {n}" for n in agg.notes]
    return "\n".join(lines)


def plot(agg: Aggregate, out: str | os.PathLike, title: str | None = None) -> Path:
    """IQM (with its interval) per algorithm beside the performance profiles (with their bands)."""
    from matplotlib.figure import Figure

    metric = {a.metric for a in agg.algorithms}
    what = "success rate" if metric == {"success_rate"} else "score"
    fig = Figure(figsize=(12, max(3.8, 1.2 + 0.45 * len(agg.algorithms))), layout="constrained")
    ax, bx = fig.subplots(1, 2, width_ratios=[1, 1.4])
    ys = np.arange(len(agg.algorithms))[::-1]
    for y, (i, a) in zip(ys, enumerate(agg.algorithms), strict=True):
        est = cast(Estimate, a.iqm)  # (aggregate_results set it)
        ax.barh(y, est.hi - est.lo, left=est.lo, height=0.6, color=f"C{i}", alpha=0.35)
        ax.plot([est.value, est.value], [y - 0.3, y + 0.3], color=f"C{i}", lw=2.5)
        frac, lo, hi = agg.profiles[a.name]
        bx.plot(agg.taus, frac, color=f"C{i}", lw=2, label=a.name)
        bx.fill_between(agg.taus, lo, hi, color=f"C{i}", alpha=0.2)
    ax.set_yticks(ys, [a.name for a in agg.algorithms], fontsize=8)
    ax.set(xlabel=f"IQM of the {what} ({agg.confidence:.0%} CI)", title="interquartile mean")
    ax.grid(axis="x", alpha=0.3)
    bx.set(
        xlabel=f"{what} threshold τ",
        ylabel="fraction of runs with score > τ",
        title="performance profile",
        ylim=(-0.02, 1.02),
    )
    bx.grid(alpha=0.3)
    bx.legend(fontsize=8)
    if metric == {"success_rate"}:
        ax.set_xlim(-0.02, 1.02)
    n_tasks = sorted({len(a.tasks) for a in agg.algorithms})
    fig.suptitle(
        title or f"aggregate over {'/'.join(map(str, n_tasks))} task(s), stratified bootstrap ({agg.reps} resamples)"
    )
    return save_figure(fig, out)


def write_json(agg: Aggregate, out: str | os.PathLike) -> Path:
    out = Path(out)
    out.write_text(json.dumps(agg.to_dict(), indent=1))
    return out


__all__ = [
    "CONFIDENCE",
    "MAX_REPS",
    "REPS",
    "Aggregate",
    "Algorithm",
    "Estimate",
    "aggregate_algorithms",
    "aggregate_results",
    "aggregate_runs",
    "estimate",
    "interval",
    "iqm",
    "mean",
    "performance_profile",
    "performance_profile_ci",
    "plot",
    "pooled",
    "stratified_bootstrap",
    "table",
    "write_json",
]
