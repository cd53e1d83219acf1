"""Tables and plots over run folders (``membench report``).

A run folder is any folder holding a ``results.json`` written by :func:`membench_agents.runs.finalize_run`.
A folder whose results.json or metrics.jsonl cannot be read is skipped and listed, not fatal to the report.
Learning curves come from the per-seed ``metrics.jsonl``: the evaluations during training when the run made
them (``eval.every_steps`` > 0, the protocol's fixed episode seeds), otherwise the training episodes
(stochastic policy, smoothed). Across seeds: mean ± SEM at every step.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from membench_agents.runs.folder import RESULTS, RunFolderError, read_json
from membench_agents.runs.stats import sem

if TYPE_CHECKING:
    from membench_agents.runs.bench import Bench, Expectation

_RESULT_KEYS = (
    "env",
    "agent",
    "obs_variant",
    "seeds",
    "metric",
    "mean",
    "sem",
    "n_runs",
    "per_run",
    "runs",
    "protocol",
)

#: The files of result folders that reports read (the HTML page among them), named once here for their writers:
#: a finished bench's table of its cells (:func:`write_bench_report`); a sweep's own file and, once finished, its
#: results (every cell and the generalisation table) and their tables (:mod:`membench_agents.ltm.sweep`).
BENCH_TABLE = "table.md"
SWEEP_FILE = "sweep.yaml"
SWEEP_RESULTS_JSON = "sweep_results.json"
SWEEP_RESULTS_MD = "sweep_results.md"


def find_runs(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Every run folder (holding results.json) at or under the given paths, in a stable order."""
    found: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise FileNotFoundError(f"{p} does not exist")
        if (p / "results.json").is_file():
            found.append(p)
        else:
            hits = [Path(root) for root, _, files in os.walk(p, followlinks=True) if "results.json" in files]
            found.extend(sorted(hits))
    seen: dict[Path, None] = {}
    for f in found:
        seen.setdefault(f.resolve(), None)
    return list(seen)


def load_results(run_dir: str | os.PathLike) -> dict[str, Any]:
    """A run's results.json (one :class:`RunFolderError` when it is missing, truncated or incomplete)."""
    return read_json(
        Path(run_dir) / RESULTS,
        "membench results file",
        f"rebuild it with `membench train --resume {run_dir}`",
        keys=_RESULT_KEYS,
    )


def label(results: dict[str, Any]) -> str:
    return f"{results['agent']} ({results['obs_variant']})"


def algorithm_name(results: dict[str, Any]) -> str:
    """``agent (variant)``, plus ``K=k`` when the agent's config sets its context length."""
    from membench_agents.algos.registry import AGENTS, context_field

    name = f"{results['agent']} ({results['obs_variant']})"
    cfg = results.get("config") or {}
    info = AGENTS.get(results["agent"])
    path = context_field(info, cfg) if info is not None else None
    if path is not None:
        node: Any = cfg
        for k in path:
            node = node[k]
        name += f" K={node}"
    return name


#: Config keys that do not make two runs different experiments: which seeds, where, how often checkpointed,
#: how many evaluation episodes run at once, free text.
_NOT_THE_EXPERIMENT = ("seeds", "device", "checkpoint", "description", "eval.num_envs", "eval.every_steps")


def flat_config(node: Any, prefix: str = "") -> dict[str, str]:
    """A config as dotted keys (``ppo.learning_rate``), each value as sorted-key JSON text (comparable, hashable)."""
    if isinstance(node, dict) and node:
        out: dict[str, str] = {}
        for k, v in node.items():
            out.update(flat_config(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: json.dumps(node, sort_keys=True)}


def differing_keys(configs: Sequence[dict[str, str]]) -> list[str]:
    """The keys, sorted, whose value is not the same in every one of ``configs`` (missing in some counts)."""
    return sorted(
        {k for c in configs for k in c} - {k for k in configs[0] if all(c.get(k) == configs[0][k] for c in configs)}
    )


def _experiment(results: dict[str, Any]) -> dict[str, Any]:
    """The run's config as dotted keys, less what does not make it another experiment."""
    flat = flat_config(results.get("config") or {})
    return {
        k: v for k, v in flat.items() if not any(k == ign or k.startswith(ign + ".") for ign in _NOT_THE_EXPERIMENT)
    }


def _value_text(key: str, value: str) -> str:
    """``steps=400k``, ``learning_rate=0.001`` (a hyperparameter without its section), ``env_kwargs.x=3``."""
    from membench_agents.algos.registry import ALGORITHMS

    v = json.loads(value)
    if key == "total_steps" and isinstance(v, int):
        return f"steps={steps_text(v)}"
    section, _, rest = key.partition(".")
    return f"{rest if rest and section in (*ALGORITHMS, 'sb3') else key}={v}"


def algorithm_names(results: Sequence[dict[str, Any]], pool: bool = False) -> tuple[list[str], list[str]]:
    """Each run's algorithm name (:func:`algorithm_name`) and notes. Runs of one name on one task whose configs
    differ (budget, hyperparameters, evaluation protocol) are different experiments: their names get the keys
    that set them apart (``ppo-lstm (partial) [steps=400k]``, ``[learning_rate=0.001]``), so no table, plot or
    aggregate pools them, unless ``pool`` (then a note says they were)."""
    base = [algorithm_name(r) for r in results]
    names = list(base)
    notes: list[str] = []
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(results):
        groups.setdefault((base[i], task_name(r)), []).append(i)
    for (name, task), members in groups.items():
        configs = [_experiment(results[i]) for i in members]
        keys = differing_keys(configs)
        if not keys:
            continue
        if pool:
            notes.append(f"{name} on {task}: runs with different configs ({', '.join(keys[:4])}) pooled (--pool)")
            continue
        shown = keys[:3]
        for i, c in zip(members, configs, strict=True):
            parts = [_value_text(k, c[k]) if k in c else f"{k}=unset" for k in shown]
            more = f", +{len(keys) - 3} more" if len(keys) > 3 else ""
            names[i] = f"{name} [{', '.join(parts)}{more}]"
        notes.append(
            f"{name} on {task}: runs with different configs are kept apart ({', '.join(keys[:4])}); --pool pools them"
        )
    return names, notes


def task_name(results: dict[str, Any]) -> str:
    kw = ",".join(f"{k}={v}" for k, v in sorted((results.get("env_kwargs") or {}).items()))
    return results["env"] + (f"[{kw}]" if kw else "")


def labels(results: list[dict[str, Any]]) -> list[str]:
    """The name of each run in tables and plots: agent and variant, and what sets apart runs of one agent on one
    task that differ in budget or hyperparameters (:func:`algorithm_names`)."""
    return algorithm_names(results)[0]


def mean_text(mean: float, sem: float, n: int, digits: int = 3) -> str:
    """``0.512 ± 0.034``; one run has no spread to show: ``0.512 (n = 1)``."""
    return f"{mean:.{digits}f} (n = 1)" if n == 1 else f"{mean:.{digits}f} ± {sem:.{digits}f}"


def _read_metrics(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    history: list[dict[str, Any]] = []
    evals: list[dict[str, Any]] = []
    if not path.is_file():
        return history, evals
    for i, line in enumerate(path.read_text().splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise RunFolderError(f"{path} line {i + 1} is not valid JSON (truncated or edited?)") from None
        if "eval" in row:
            evals.append(row["eval"])
        else:
            history.append(row)
    return history, evals


def _smooth(y: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average that ignores NaNs (iterations without finished episodes)."""
    out = np.full_like(y, np.nan, dtype=np.float64)
    for i in range(len(y)):
        seg = y[max(0, i - window + 1) : i + 1]
        seg = seg[~np.isnan(seg)]
        if seg.size:
            out[i] = seg.mean()
    return out


def seed_curves(run_dir: str | os.PathLike, metric: str) -> tuple[str, list[tuple[np.ndarray, np.ndarray]]]:
    """Per-seed (steps, values) curves of a run and their source ("eval" or "train")."""
    run_dir = Path(run_dir)
    res = load_results(run_dir)
    eval_key = "success_rate" if metric == "success_rate" else "mean_return"
    train_key = "success_rate" if metric == "success_rate" else "return_mean"
    evals_by_seed, train_by_seed = [], []
    for s in res["seeds"]:
        history, evals = _read_metrics(run_dir / f"seed_{s}" / "metrics.jsonl")
        if evals:
            evals_by_seed.append(
                (
                    np.array([e["global_step"] for e in evals], dtype=np.float64),
                    np.array([np.nan if e[eval_key] is None else e[eval_key] for e in evals]),
                )
            )
        if history:
            x = np.array([h["global_step"] for h in history], dtype=np.float64)
            y = np.array([np.nan if h.get(train_key) is None else h[train_key] for h in history], dtype=np.float64)
            train_by_seed.append((x, _smooth(y, max(1, len(y) // 20))))
    if evals_by_seed and len(evals_by_seed) == len(res["seeds"]) and all(len(x) > 1 for x, _ in evals_by_seed):
        return "eval", evals_by_seed
    return "train", train_by_seed


def mean_sem_curve(curves: list[tuple[np.ndarray, np.ndarray]], points: int = 200):
    """Interpolate every seed onto one grid; return (x, mean, sem)."""
    if not curves:
        return np.array([]), np.array([]), np.array([])
    lo = max(float(x[0]) for x, _ in curves)
    hi = min(float(x[-1]) for x, _ in curves)
    grid = np.unique(np.concatenate([x for x, _ in curves])) if len(curves) == 1 else np.linspace(lo, hi, points)
    rows = []
    for x, y in curves:
        ok = ~np.isnan(y)
        rows.append(np.interp(grid, x[ok], y[ok]) if ok.sum() else np.full_like(grid, np.nan))
    ys = np.array(rows)
    mean = np.nanmean(ys, axis=0)
    err = np.array([sem(list(col[~np.isnan(col)])) for col in ys.T])
    return grid, mean, err


def _env_text(res: dict[str, Any]) -> str:
    kw = ", ".join(f"{k}={v}" for k, v in (res.get("env_kwargs") or {}).items())
    return f"{res['env']} ({kw})" if kw else res["env"]


def _metric_name(metric: str) -> str:
    return "success rate" if metric == "success_rate" else "return"


def plot_run(run_dir: str | os.PathLike, out: str | os.PathLike | None = None) -> Path:
    """``learning_curve.png`` of one run: per-seed curves, their mean ± SEM, and the final evaluation."""
    from matplotlib.figure import Figure

    run_dir = Path(run_dir)
    res = load_results(run_dir)
    metric = res["metric"]
    source, curves = seed_curves(run_dir, metric)
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax, bx = fig.subplots(1, 2, width_ratios=[3, 1])
    for (x, y), s in zip(curves, res["seeds"], strict=False):
        ax.plot(x, y, lw=0.8, alpha=0.5, label=f"seed {s}")
    gx, gm, ge = mean_sem_curve(curves)
    if gx.size:
        ax.plot(gx, gm, color="k", lw=2, label="mean")
        ax.fill_between(gx, gm - ge, gm + ge, color="k", alpha=0.15, label="± SEM")
    what = "evaluation on the fixed episode seeds" if source == "eval" else "training episodes (smoothed)"
    ax.set(xlabel="environment steps", ylabel=_metric_name(metric), title=f"{label(res)} on {_env_text(res)}: {what}")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    vals = res["per_run"]
    bx.bar([0], [res["mean"]], yerr=[res["sem"]], capsize=8, color="C0", alpha=0.7)
    bx.scatter(np.zeros(len(vals)) + np.linspace(-0.15, 0.15, len(vals)), vals, color="k", zorder=3, s=12)
    bx.set(
        xticks=[0],
        xticklabels=["final"],
        ylabel=_metric_name(metric),
        title=mean_text(res["mean"], res["sem"], res["n_runs"])
        + ("" if res["n_runs"] == 1 else f" (n = {res['n_runs']})"),
    )
    if metric == "success_rate":
        ax.set_ylim(-0.02, 1.02)
        bx.set_ylim(0, 1.05)
    return save_figure(fig, out if out is not None else run_dir / "learning_curve.png")


def plot_comparison(run_dirs: list[Path], out: str | os.PathLike, title: str | None = None) -> Path:
    """One figure for several runs: learning curves (mean ± SEM over seeds) and the final values as horizontal
    bars (mean ± SEM; the runs' names on their own rows, so no two labels overlap however many runs)."""
    from matplotlib.figure import Figure

    results = [load_results(d) for d in run_dirs]
    names = labels(results)
    counts = [r["metric"] for r in results]  # the axes show the metric most runs report
    metric = "success_rate" if counts.count("success_rate") >= counts.count("return") else "return"
    fig = Figure(figsize=(12, max(4.5, 1.6 + 0.55 * len(results))), layout="constrained")
    ax, bx = fig.subplots(1, 2, width_ratios=[2, 1])
    sources = set()
    for i, (d, r, name) in enumerate(zip(run_dirs, results, names, strict=True)):
        source, curves = seed_curves(d, metric)
        sources.add(source)
        gx, gm, ge = mean_sem_curve(curves)
        if gx.size:
            ax.plot(gx, gm, color=f"C{i}", lw=2, label=f"{name}  [{_env_text(r)}]")
            ax.fill_between(gx, gm - ge, gm + ge, color=f"C{i}", alpha=0.2)
    what = "evaluation on the fixed episode seeds" if sources == {"eval"} else "training episodes"
    ax.set(xlabel="environment steps", ylabel=_metric_name(metric), title=f"learning curves (mean ± SEM): {what}")
    ax.grid(alpha=0.3)
    ys = np.arange(len(results))[::-1]  # the first run on top
    for i, (r, y) in enumerate(zip(results, ys, strict=True)):
        if r["metric"] != metric:  # a run of another metric has no bar on this axis
            bx.text(0.01, y, f"{r['metric']}: not on this axis", va="center", fontsize=7, color="gray")
            continue
        err = r["sem"] if r["n_runs"] > 1 else 0.0
        bx.barh(y, r["mean"], xerr=err, height=0.6, capsize=4, color=f"C{i}", alpha=0.75)
        vals = r["per_run"]
        bx.scatter(vals, y + np.linspace(-0.15, 0.15, len(vals)), color="k", s=10, zorder=3)
        bx.text(
            r["mean"] + err,
            y + 0.32,
            " " + mean_text(r["mean"], r["sem"], r["n_runs"], digits=2),
            va="bottom",
            fontsize=7,
        )
    bx.set_yticks(ys, [n.replace(" [", "\n[", 1) for n in names], fontsize=8)
    n_eps = {r["protocol"]["episodes_per_run"] for r in results}
    bx.set(
        xlabel=f"final {_metric_name(metric)}",
        title=f"final: {'/'.join(map(str, sorted(n_eps)))} episode seeds/run, mean ± SEM",
    )
    bx.set_ylim(-0.6, len(results) - 0.1)
    bx.grid(axis="x", alpha=0.3)
    if metric == "success_rate":
        ax.set_ylim(-0.02, 1.02)
        bx.set_xlim(0, 1.25)
        bx.axvline(0.5, color="gray", ls="--", lw=1)
        ax.axhline(0.5, color="gray", ls="--", lw=1, label="0.5 (chance of a binary choice)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return save_figure(fig, out)


def save_figure(fig, out: str | os.PathLike) -> Path:
    """Write a figure (its folder made first); a path that cannot be written is one :class:`ConfigError`."""
    from membench_agents.errors import ConfigError

    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=110)
    except OSError as e:
        where = f" ({e.filename})" if e.filename and str(e.filename) != str(out) else ""
        raise ConfigError(f"cannot write the plot {out}: {e.strerror or e}{where}") from None
    return out


def check_plot_path(out: str | os.PathLike, what: str = "--out") -> Path:
    """``out`` if it names an image file matplotlib writes (by its extension), else one :class:`ConfigError`."""
    from matplotlib.backend_bases import FigureCanvasBase

    from membench_agents.errors import ConfigError

    formats = FigureCanvasBase.get_supported_filetypes()
    path = Path(out)
    if path.suffix[1:].lower() not in formats or not path.stem:
        raise ConfigError(
            f"{what} must name an image file ending in one of "
            f"{', '.join('.' + f for f in sorted(formats))}; got {str(out)!r}"
        )
    if path.is_dir():
        raise ConfigError(f"{what} {str(out)!r} is a folder; name the image file to write")
    return path


def steps_text(n: int) -> str:
    """``400k``, ``1.5M``, ``512``."""
    for div, suf in ((1_000_000, "M"), (1_000, "k")):
        if n >= div:
            v = n / div
            return f"{v:.0f}{suf}" if v == int(v) else f"{v:.1f}{suf}"
    return str(n)


def table(run_dirs: list[Path], markdown: bool = False) -> str:
    """The results table: one row per run folder (mean ± SEM over the training seeds)."""
    rows = []
    results = [load_results(d) for d in run_dirs]
    for r, name in zip(results, labels(results), strict=True):
        kw = ",".join(f"{k}={v}" for k, v in r.get("env_kwargs", {}).items())
        rows.append(
            [
                name,
                r["env"] + (f" [{kw}]" if kw else ""),
                steps_text(max(x["global_step"] for x in r["runs"])),
                str(r["n_runs"]),
                r["metric"],
                mean_text(r["mean"], r["sem"], r["n_runs"]),
                " ".join(f"{v:.2f}" for v in r["per_run"]),
                f"{np.mean([x['sps'] or 0 for x in r['runs']]):,.0f}",
            ]
        )
    head = ["agent (variant)", "env", "steps", "runs", "metric", "mean ± SEM", "per run", "SPS"]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_run(run_dir: Path) -> None:
    """Read everything the report and its aggregate use from one run folder (results.json, each seed's
    metrics.jsonl); a score that is not a finite number makes the folder unreadable too."""
    res = load_results(run_dir)
    try:
        table([run_dir])
        seed_curves(run_dir, res["metric"])
        algorithm_name(res)
        task_name(res)
        episodes = res["protocol"]["episodes_per_run"]  # the comparison plot's title
    except RunFolderError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise RunFolderError(
            f"{run_dir / RESULTS} or a seed's metrics.jsonl is not in membench's format ({type(e).__name__}: {e})"
        ) from None
    per_run = res["per_run"]
    if not (
        isinstance(per_run, list)
        and per_run
        and all(map(_finite, per_run))
        and _finite(res["mean"])
        and _finite(res["sem"])
    ):
        raise RunFolderError(
            f"{run_dir / RESULTS} holds a score that is not a finite number (mean {res['mean']!r}, "
            f"per run {per_run!r}): an edited file, or an environment that returned NaN rewards"
        )
    seeds = res["seeds"]
    if not (
        isinstance(seeds, list)
        and all(isinstance(x, int) and not isinstance(x, bool) for x in seeds)
        and len(seeds) == len(per_run) == res["n_runs"]
        and isinstance(episodes, int)
    ):
        raise RunFolderError(
            f"{run_dir / RESULTS} does not add up: seeds {seeds!r}, n_runs {res['n_runs']!r}, "
            f"{len(per_run)} per-run scores, {episodes!r} episodes per run (an edited file?)"
        )


def report(
    paths: Iterable[str | os.PathLike],
    out: str | os.PathLike | None = None,
    markdown: bool = False,
    title: str | None = None,
) -> tuple[str, Path, list[tuple[Path, str]]]:
    """Find the runs under ``paths``; return (table text, plot path, skipped folders with the reason)."""
    paths = list(paths)
    good, skipped = [], []
    for run in find_runs(paths):
        try:
            check_run(run)
            good.append(run)
        except RunFolderError as e:
            skipped.append((run, str(e)))
    if not good:
        found = f"; {len(skipped)} unreadable: {skipped[0][1]}" if skipped else ""
        raise FileNotFoundError(
            f"no readable run folders (with results.json) under {', '.join(map(str, paths))}{found}"
        )
    if out is None:
        base = Path(paths[0]) if len(paths) == 1 and Path(paths[0]).is_dir() else Path.cwd()
        out = base / "report.png"
    text = table(good, markdown=markdown)
    plot = plot_comparison(good, out, title=title)
    return text, plot, skipped


def expectation_text(e: Expectation) -> str:
    """One line of a bench's expected ranges: the cell, its mean ± SEM, the range, ``ok`` or ``NOT MET``."""
    r = e.results
    return (
        f"  {e.label:<18} {mean_text(r['mean'], r['sem'], r['n_runs'])}  expected [{e.low}, {e.high}]  "
        f"{'ok' if e.met else 'NOT MET'}"
    )


def write_bench_report(bench: Bench) -> tuple[str, list[Expectation], Path]:
    """The report of a finished bench: each cell's learning-curve plot, the table with the expected ranges
    (``table.txt``; ``table.md`` without them) and the comparison plot (``comparison.png``).

    Returns the table, the cells' expected ranges (:func:`membench_agents.runs.bench.expectations`) and the plot."""
    from membench_agents.runs.bench import expectations  # here: the report module itself imports no torch

    for d in bench.cell_dirs:
        plot_run(d)
    text = table(bench.cell_dirs)
    expected = expectations(bench)
    lines = "".join(f"{expectation_text(e)}\n" for e in expected)
    (bench.path / "table.txt").write_text(text + "\n" + (f"\nexpected:\n{lines}" if expected else ""))
    (bench.path / BENCH_TABLE).write_text(table(bench.cell_dirs, markdown=True) + "\n")
    plot = plot_comparison(bench.cell_dirs, bench.path / "comparison.png", title=bench.title)
    return text, expected, plot
