"""The scorecard of a suite run (``membench bench --suite NAME``; rebuilt by ``membench report DIR --scorecard``).

Per task and agent: the protocol's metric (the per-run numbers of :mod:`membench_agents.runs.stats`; their mean
with a 95 % bootstrap interval over the runs) and a **normalised score**, (x − floor) / (ceiling − floor) per
run, so that 0 is the floor and 1 the ceiling whatever the task's units. The floor and ceiling of a task come
from, in this order (:func:`bounds`; the table names the source of every task):

1. a reference certificate (``--reference CERT_DIR``, a ``membench certify`` folder): its floor and ceiling means,
   where the certificate is of the same ID and kwargs, reports the same metric and its verdict is
   memory-improvable, its gap established (else a note says why it was not used);
2. the metric's natural range where it is known: a success rate has floor 0 and ceiling 1 (MIKASA's convention:
   its scores are success rates), and a return of a POPGym ID has floor −1 and ceiling 1 (POPGym scales every
   task's per-step rewards so that an episode's return lies in [−1, 1], its "normalised return"; the POPGym IDs
   that define success report a success rate and take 0..1);
3. none: the task stays raw (its metric only) and is left out of the cross-task aggregates, with a note naming it.

Across tasks, per row: the IQM and the mean of the normalised per-run scores with stratified-bootstrap intervals
and the performance profiles (:func:`membench_agents.analysis.aggregate.aggregate_algorithms`: rliable's
metrics), and the same IQM and mean per MIKASA memory type and per catalogue suite (a task of several memory
types or suites counts in each of them, so these groups overlap).

A row is one agent (and observation variant) at one budget: cells of one agent that differ in the budget
(``total_steps``, the seeds) or the evaluation protocol (episodes, first episode seed, deterministic actions)
are separate rows, named by what differs, and a note says so; they are never pooled. Other per-task config
differences of one agent (the hyperparameters the resolution rule sets per ID: its tuned cell config, the agent
defaults' sections for its observation type, action type or suite) are the rule's and stay in one row; a note
lists the keys. ``scorecard.json`` holds everything (each task with its budget, :func:`budget`); ``scorecard.md``
the tables; ``scorecard.png`` the IQM and the performance profiles of the normalised scores. A committed
``scorecard.json`` serves as a regression summary: ``--check SUMMARY`` compares a new run with it
(:mod:`membench_agents.analysis.check`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from membench_agents.analysis.aggregate import (
    CONFIDENCE,
    REPS,
    Aggregate,
    Algorithm,
    Estimate,
    aggregate_algorithms,
    estimate,
    iqm,
)
from membench_agents.analysis.aggregate import mean as mean_stat
from membench_agents.analysis.aggregate import plot as aggregate_plot
from membench_agents.analysis.aggregate import table as aggregate_table
from membench_agents.analysis.certificate import IMPROVABLE, verdict
from membench_agents.analysis.report import (
    algorithm_name,
    differing_keys,
    flat_config,
    load_results,
    steps_text,
    task_name,
)
from membench_agents.config.env_facts import natural_range
from membench_agents.errors import ConfigError
from membench_agents.runs import suite
from membench_agents.runs.folder import RESULTS, RunFolderError, git_info, versions, write_json

SCORECARD = "scorecard.json"
MARKDOWN = "scorecard.md"
PLOT = "scorecard.png"
NORMALISED = "normalised score"
#: The keys that make a cell's budget and protocol (a row's identity besides the agent).
BUDGET_KEYS = ("total_steps", "seeds", "eval.episodes", "eval.seed_start", "eval.deterministic")
#: Config keys that are neither the budget nor a hyperparameter: the task itself, where and how a run is kept.
_NOT_COMPARED = ("env", "env_kwargs", "device", "checkpoint", "description", "eval.num_envs", "eval.every_steps")


# ------------------------------------------------------------------------------------------------------
# floors and ceilings
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reference:
    """A reference certificate's floor and ceiling for one task, and its gap's interval."""

    task: str
    metric: str
    floor: float
    ceiling: float
    path: str
    total_steps: int
    gap_lo: float
    gap_hi: float
    """the 95 % interval of the certificate's gap (ceiling − floor)"""
    tolerance: float = 0.0
    """the certificate's tolerance (``rule.tolerance``)"""

    def verdict(self) -> str:
        """The certificate's verdict, from its gap's interval and its tolerance (the certificate's rule, recomputed:
        a verdict string read from the file is not trusted)."""
        return verdict(Estimate(self.ceiling - self.floor, self.gap_lo, self.gap_hi), self.tolerance)


@dataclass(frozen=True)
class Bounds:
    floor: float
    ceiling: float
    source: str


def load_references(paths: Sequence[str | Path]) -> dict[str, Reference]:
    """The certificates of ``paths`` (``membench certify`` folders or their certificate.json; suite runs with
    certificates or their certificates.json: one per task), by task (the ID and its kwargs); one
    :class:`ConfigError` for a path that is not a certificate or two certificates of one task."""
    from membench_agents.analysis.certificate import CERTIFICATE, TABLE

    found: list[Reference] = []
    for p in paths:
        p = Path(p)
        file = next((p / f for f in (CERTIFICATE, TABLE) if (p / f).is_file()), p / CERTIFICATE) if p.is_dir() else p
        if not file.is_file():
            raise ConfigError(
                f"--reference {p}: no {CERTIFICATE} there, nor a {TABLE} (pass a `membench certify` folder or a "
                "suite run with --certify)"
            )
        try:
            data = json.loads(file.read_text())
        except (ValueError, UnicodeDecodeError):
            data = None
        found += references_of(data, file)
    return _by_task(found)


def references_of(data: Any, file: Path) -> list[Reference]:
    """The references in a certificate's JSON, or in a suite run's table of them, read from ``file``; one
    :class:`ConfigError` for anything else or a floor or ceiling that is not a finite number."""
    from membench_agents.analysis.certificate import TABLE_KIND

    try:
        is_table = isinstance(data, dict) and data.get("certificates") == TABLE_KIND
        tolerance = float(data["rule"]["tolerance"]) if isinstance(data, dict) and "rule" in data else 0.0
        refs = [
            Reference(
                task_name(c),
                str(c["metric"]),
                float(c["floor"]["value"]),
                float(c["ceiling"]["value"]),
                str(file if is_table else file.parent),
                int(c["total_steps"]),
                float(c["gap"]["lo"]),
                float(c["gap"]["hi"]),
                tolerance,
            )
            for c in (data["tasks"] if is_table else [data])
        ]
    except (ValueError, KeyError, TypeError):
        raise ConfigError(
            f"--reference {file} is not a certificate (JSON with env, metric, total_steps and the floor's and "
            "ceiling's values, or a table of them)"
        ) from None
    for ref in refs:
        if not all(np.isfinite([ref.floor, ref.ceiling, ref.gap_lo, ref.gap_hi, ref.tolerance])):
            raise ConfigError(f"--reference {file}: floor, ceiling, the gap's interval and tolerance must be finite")
    return refs


def _by_task(refs: Sequence[Reference]) -> dict[str, Reference]:
    out: dict[str, Reference] = {}
    for ref in refs:
        if ref.task in out:
            raise ConfigError(
                f"two reference certificates of {ref.task}: {out[ref.task].path} and {ref.path}; pass one"
            )
        out[ref.task] = ref
    return out


def bounds(result: dict[str, Any], refs: dict[str, Reference]) -> tuple[Bounds | None, list[str]]:
    """The floor and ceiling of a cell's task by the precedence of the module docstring (None: raw), and the
    notes on a reference certificate that could not be used."""
    task, metric = task_name(result), result["metric"]
    notes = []
    ref = refs.get(task)
    if ref is not None:
        if ref.metric != metric:
            notes.append(f"reference {ref.path} of {task} reports {ref.metric}, the cells {metric}: not used")
        elif (verdict_of_ref := ref.verdict()) != IMPROVABLE:  # (a gap the seeds do not agree on, or a tiny one)
            notes.append(
                f"reference {ref.path} of {task}: its gap, ceiling ({ref.ceiling:.3f}) - floor ({ref.floor:.3f}) in "
                f"[{ref.gap_lo:.3f}, {ref.gap_hi:.3f}], is {verdict_of_ref} (tolerance {ref.tolerance:g}), no "
                "scale to normalise by: not used"
            )
        else:
            return Bounds(
                ref.floor, ref.ceiling, f"certificate {ref.path} ({steps_text(ref.total_steps)} steps)"
            ), notes
    known = natural_range(result["env"], metric)  # (step 2 of the precedence)
    return (None if known is None else Bounds(*known)), notes


def _suites(env: str) -> tuple[str, ...]:
    from membench_agents.config.env_facts import env_suites

    return env_suites(env)


def _memory_types(env: str) -> tuple[str, ...]:
    import membench_envs

    try:
        return tuple(membench_envs.info(env).memory_types)
    except KeyError:
        return ()


# ------------------------------------------------------------------------------------------------------
# rows
# ------------------------------------------------------------------------------------------------------
def _budget(result: dict[str, Any]) -> dict[str, str]:
    flat = flat_config(result["config"])
    return {k: flat.get(k, "null") for k in BUDGET_KEYS}


def budget(result: dict[str, Any]) -> dict[str, Any]:
    """A cell's budget and protocol (:data:`BUDGET_KEYS`; None where its config lacks one), as scorecard.json's
    tasks record it."""
    return {k: json.loads(v) for k, v in _budget(result).items()}


def _budget_text(key: str, value: str) -> str:
    v = json.loads(value)
    if key == "total_steps" and isinstance(v, int):
        return f"steps={steps_text(v)}"
    return f"{key.removeprefix('eval.')}={v}"


def _settings(result: dict[str, Any]) -> dict[str, str]:
    """The config less the budget and what is not compared (the hyperparameters)."""
    return {
        k: v
        for k, v in flat_config(result["config"]).items()
        if k not in BUDGET_KEYS and not any(k == n or k.startswith(n + ".") for n in _NOT_COMPARED)
    }


def rows(results: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Each cell's row name and the notes: one row per agent (:func:`algorithm_name`) and budget (module
    docstring); the notes say where an agent's cells were split by budget and which per-task settings differ."""
    groups: dict[str, dict[str, list[int]]] = {}
    for i, r in enumerate(results):
        groups.setdefault(algorithm_name(r), {}).setdefault(json.dumps(_budget(r), sort_keys=True), []).append(i)
    names = [""] * len(results)
    notes = []
    for base, budgets in groups.items():
        if len(budgets) == 1:
            (members,) = budgets.values()
            for i in members:
                names[i] = base
        else:
            dicts = {b: json.loads(b) for b in budgets}
            differ = [k for k in BUDGET_KEYS if len({d[k] for d in dicts.values()}) > 1]
            parts = []
            for b, members in budgets.items():
                name = f"{base} [{', '.join(_budget_text(k, dicts[b][k]) for k in differ)}]"
                for i in members:
                    names[i] = name
                parts.append(f"{name}: {len(members)} task(s)")
            notes.append(
                f"{base}: its cells differ in budget or protocol ({', '.join(differ)}): separate rows, never pooled "
                f"({'; '.join(parts)})"
            )
    for name in dict.fromkeys(names):
        members = [i for i, n in enumerate(names) if n == name]
        settings = [_settings(results[i]) for i in members]
        keys = differing_keys(settings)
        if keys:
            notes.append(
                f"{name}: per-task settings differ in {', '.join(keys[:6])}{' ...' if len(keys) > 6 else ''} (set per "
                "ID by the resolution rule: the ID's tuned cell config, or the agent defaults' section for its "
                "observation type, action type or suite): one row"
            )
    return names, notes


# ------------------------------------------------------------------------------------------------------
# the scorecard
# ------------------------------------------------------------------------------------------------------
@dataclass
class Scorecard:
    data: dict[str, Any]
    """everything scorecard.json holds"""
    aggregate: Aggregate | None
    """the cross-task aggregate of the normalised scores (None: no task could be normalised)"""
    notes: list[str] = field(default_factory=list)


def _row(agg: Aggregate, a: Algorithm) -> dict[str, Any]:
    """One row's aggregate across tasks, with its performance profile."""
    return {
        "name": a.name,
        "n_tasks": len(a.tasks),
        "n_runs": a.n_runs,
        "iqm": None if a.iqm is None else _est(a.iqm),
        "mean": None if a.mean is None else _est(a.mean),
        "profile": {
            "taus": agg.taus.tolist(),
            "fraction": agg.profiles[a.name][0].tolist(),
            "lo": agg.profiles[a.name][1].tolist(),
            "hi": agg.profiles[a.name][2].tolist(),
        },
    }


def _est(e: Estimate) -> dict[str, float]:
    return {"value": e.value, "lo": e.lo, "hi": e.hi}


def compute(
    results: Sequence[dict[str, Any]],
    references: dict[str, Reference] | None = None,
    *,
    labels: Sequence[str] | None = None,
    skipped: Sequence[tuple[str, str]] = (),
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> Scorecard:
    """The scorecard of the cells' ``results.json`` contents (module docstring)."""
    if not results:
        raise ValueError("no cells to score")
    refs = references or {}
    labels = list(labels) if labels is not None else [f"cell {i}" for i in range(len(results))]
    names, notes = rows(results)
    tasks: list[dict[str, Any]] = []
    normalised: dict[str, dict[str, list[float]]] = {}
    raw_tasks: dict[str, None] = {}
    used_refs: set[str] = set()
    for r, name, label in zip(results, names, labels, strict=True):
        task = task_name(r)
        per_run = [float(v) for v in r["per_run"]]
        b, ref_notes = bounds(r, refs)
        notes.extend(n for n in ref_notes if n not in notes)
        entry: dict[str, Any] = {
            "task": task,
            "env": r["env"],
            "env_kwargs": r.get("env_kwargs") or {},
            "suites": list(_suites(r["env"])),
            "memory_types": list(_memory_types(r["env"])),
            "row": name,
            "cell": label,
            "agent": r["agent"],
            "obs_variant": r["obs_variant"],
            "metric": r["metric"],
            "total_steps": r["config"]["total_steps"],
            "seeds": r["config"]["seeds"],
            "budget": budget(r),
            "per_run": per_run,
            "raw": _est(estimate([per_run], mean_stat, reps, confidence, seed)),
            "normalisation": None,
            "normalised_per_run": None,
            "normalised": None,
        }
        if b is None:
            raw_tasks.setdefault(task, None)
        else:
            if b.source.startswith("certificate"):
                used_refs.add(task)
            scores = [(x - b.floor) / (b.ceiling - b.floor) for x in per_run]
            entry["normalisation"] = {"floor": b.floor, "ceiling": b.ceiling, "source": b.source}
            entry["normalised_per_run"] = scores
            entry["normalised"] = _est(estimate([scores], mean_stat, reps, confidence, seed))
            by_task = normalised.setdefault(name, {})
            if task in by_task:
                raise RunFolderError(f"{name} has two cells on {task}: a scorecard scores each task once per row")
            by_task[task] = scores
        tasks.append(entry)
    unused: dict[str, list[str]] = {}  # a reference file's certificates of tasks this scorecard does not score
    scored = {t["task"] for t in tasks}
    for task, ref in refs.items():
        if task not in scored:
            unused.setdefault(str(ref.path), []).append(task)
    for path, others in unused.items():
        which = ", ".join(others) if len(others) <= 3 else f"{len(others)} other tasks ({others[0]}, ...)"
        notes.append(f"reference {path}: not used for {which}, which this scorecard does not score")
    if raw_tasks:
        notes.append(
            f"raw, left out of the cross-task aggregates (no reference certificate, and a return without a known "
            f"range): {', '.join(raw_tasks)}"
        )
    no_type = sorted({t["task"] for t in tasks if t["normalised"] is not None and not t["memory_types"]})
    if no_type:
        notes.append(f"no memory type in the catalogue, so in no memory-type breakdown: {', '.join(no_type)}")
    for env_id, extra in skipped:
        notes.append(f"skipped (--skip-missing): {env_id}, its extra [{extra}] is not installed")
    empty_rows = [n for n in dict.fromkeys(names) if n not in normalised]
    if empty_rows:
        notes.append(f"no normalised task, so no aggregate: {', '.join(empty_rows)}")
    agg = None
    if normalised:
        algos = [Algorithm(name, NORMALISED, dict(by_task)) for name, by_task in normalised.items()]
        every = np.concatenate([np.asarray(v) for a in algos for v in a.tasks.values()])
        taus = np.linspace(min(0.0, float(every.min())), max(1.0, float(every.max())), 101)
        agg = aggregate_algorithms(algos, reps, confidence, seed, taus=taus)
        notes.extend(agg.notes)
    breakdowns = {"memory_type": _breakdown(tasks, "memory_types", reps, confidence, seed)}
    breakdowns["suite"] = _breakdown(tasks, "suites", reps, confidence, seed)
    data = {
        "scorecard": "membench suite scorecard",
        "format": 1,
        "normalised_score": "(x - floor) / (ceiling - floor) per run; floor and ceiling from a reference "
        "certificate, else the metric's natural range (success rate 0..1; POPGym return -1..1), else raw",
        "statistics": {
            "per_task": "mean over runs with a percentile bootstrap interval (runs resampled with replacement)",
            "across_tasks": "IQM and mean of the normalised per-run scores pooled over tasks; stratified "
            "bootstrap (runs resampled within each task) percentile intervals; performance profile = fraction of "
            "runs with score > tau",
            "breakdowns": "the same IQM and mean over the tasks of each memory type and each suite; a task of "
            "several memory types or suites counts in each",
            "reps": reps,
            "confidence": confidence,
            "bootstrap_seed": seed,
        },
        "rows": [] if agg is None else [_row(agg, a) for a in agg.algorithms],
        "tasks": tasks,
        "breakdowns": breakdowns,
        "raw_tasks": list(raw_tasks),
        "references": {t: vars(refs[t]) for t in sorted(used_refs)},
        "skipped": [{"env": e, "extra": x} for e, x in skipped],
        "notes": notes,
    }
    return Scorecard(data, agg, notes)


def _breakdown(
    tasks: list[dict[str, Any]], key: str, reps: int, confidence: float, seed: int
) -> dict[str, dict[str, Any]]:
    """{group: {row: {n_tasks, tasks, iqm, mean}}} over the normalised tasks of each memory type or suite."""
    groups: dict[str, dict[str, dict[str, list[float]]]] = {}
    for t in tasks:
        if t["normalised"] is None:
            continue
        for g in t[key]:
            groups.setdefault(g, {}).setdefault(t["row"], {})[t["task"]] = t["normalised_per_run"]
    out: dict[str, dict[str, Any]] = {}
    for g in sorted(groups):
        out[g] = {
            row: {
                "n_tasks": len(by_task),
                "tasks": list(by_task),
                "iqm": _est(estimate(list(by_task.values()), iqm, reps, confidence, seed)),
                "mean": _est(estimate(list(by_task.values()), mean_stat, reps, confidence, seed)),
            }
            for row, by_task in groups[g].items()
        }
    return out


# ------------------------------------------------------------------------------------------------------
# the folder: scorecard.json, scorecard.md, scorecard.png
# ------------------------------------------------------------------------------------------------------
def write(
    path: str | Path,
    references: Sequence[str | Path] | None = None,
    *,
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> tuple[Scorecard, dict[str, Path]]:
    """The scorecard files of a finished suite-run folder (``references``: the certificates; default the ones the
    run was started with)."""
    path = Path(path)
    meta = suite.read_meta(path)
    for label in meta["cells"]:
        if not (path / label / RESULTS).is_file():
            raise RunFolderError(
                f"{path / label} has no {RESULTS}: the suite run is not finished; continue it with "
                f"membench bench --resume {path}"
            )
    certify = meta.get("certify")
    ceilings = {r["ceiling"] for r in certify["tasks"].values()} if certify else set()
    labels = [label for label in meta["cells"] if label not in ceilings]  # a ceiling is a certificate's, no row
    results = [load_results(path / label) for label in labels]
    files: dict[str, Path] = {}
    if certify:
        from membench_agents.analysis.certificate import TABLE, write_table

        table, files = write_table(path, certify, meta.get("command"))
    if references is not None:
        refs = load_references(references)
    elif certify:
        refs = _by_task(references_of(table, path / TABLE))
    else:
        refs = load_references(meta["references"])
    skipped = [(s["env"], s["extra"]) for s in meta["skipped"]]
    card = compute(results, refs, labels=labels, skipped=skipped, reps=reps, confidence=confidence, seed=seed)
    if certify:
        card.notes.append(
            f"the certificates' ceiling cells ({certify['floor']} on oracle/full) are in {TABLE}, not scorecard rows"
        )
    card.data.update(
        {
            "selection": meta["selection"],
            "agents": meta["agents"],
            "obs_variant": meta.get("obs_variant"),
            "command": meta.get("command"),
            "versions": versions(),
            "git": git_info(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
    )
    write_json(path / SCORECARD, card.data)
    (path / MARKDOWN).write_text(markdown(card) + "\n")
    files = {"json": path / SCORECARD, "markdown": path / MARKDOWN, **files}
    if card.aggregate is not None:
        n = len({t["task"] for t in card.data["tasks"] if t["normalised"] is not None})
        files["plot"] = aggregate_plot(
            card.aggregate, path / PLOT, title=f"{_title(card.data)}: normalised scores over {n} task(s)"
        )
    return card, files


def _title(data: dict[str, Any]) -> str:
    sel = data.get("selection") or {}
    parts = [sel.get("suite") or "", ",".join(sel.get("ids") or []), sel.get("memory_type") or ""]
    return "scorecard " + (" ".join(p for p in parts if p) or "")


def _e(e: dict[str, float] | None) -> str:
    return "-" if e is None else Estimate(**e).text()


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in body]


def markdown(card: Scorecard) -> str:
    """scorecard.md: the per-task table (with the normalisation source of every task), the aggregate across
    tasks, the breakdowns per memory type and per suite, and the notes."""
    d = card.data
    pct = f"{d['statistics']['confidence']:.0%}"
    lines = [f"# {_title(d)}", ""]
    if d.get("command"):
        lines += [f"`{d['command']}`", ""]
    lines += [
        f"normalised score = (x - floor) / (ceiling - floor); mean [{pct} bootstrap interval] over the runs of each "
        f"cell; {d['statistics']['reps']} resamples, seed {d['statistics']['bootstrap_seed']}.",
        "",
        "## Per task",
        "",
    ]
    body = [
        [
            t["task"],
            ", ".join(t["memory_types"]) or "-",
            t["row"],
            f"{steps_text(t['total_steps'])} x {len(t['seeds'])}",
            t["metric"],
            " ".join(f"{v:.3f}" for v in t["per_run"]),
            _e(t["raw"]),
            _e(t["normalised"]),
            "raw (not normalised)" if t["normalisation"] is None else t["normalisation"]["source"],
        ]
        for t in d["tasks"]
    ]
    head = ["task", "memory types", "agent", "budget", "metric", "per run", f"mean [{pct} CI]"]
    lines += _table(head + [f"normalised [{pct} CI]", "normalisation"], body)
    lines += ["", "## Across tasks (normalised scores)", ""]
    if card.aggregate is None:
        lines.append("no task could be normalised: no aggregate")
    else:
        agg = Aggregate(card.aggregate.algorithms, card.aggregate.reps, card.aggregate.confidence,
                        card.aggregate.seed, [], card.aggregate.taus, card.aggregate.profiles)  # fmt: skip
        lines += aggregate_table(agg, markdown=True).splitlines()
    for key, title, column in (("memory_type", "By memory type", "memory type"), ("suite", "By suite", "suite")):
        lines += ["", f"## {title}", ""]
        groups = d["breakdowns"][key]
        if not groups:
            lines.append("none")
            continue
        body = [
            [g, row, str(v["n_tasks"]), _e(v["iqm"]), _e(v["mean"])]
            for g, by_row in groups.items()
            for row, v in by_row.items()
        ]
        lines += _table([column, "agent", "tasks", f"IQM [{pct} CI]", f"mean [{pct} CI]"], body)
    lines += ["", "(a task of several memory types or suites counts in each of them)"]
    if d["notes"]:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in d["notes"]]
    return "\n".join(lines)


__all__ = [
    "BUDGET_KEYS",
    "MARKDOWN",
    "NORMALISED",
    "PLOT",
    "SCORECARD",
    "Bounds",
    "Reference",
    "Scorecard",
    "bounds",
    "budget",
    "compute",
    "load_references",
    "markdown",
    "references_of",
    "rows",
    "write",
]
