"""The regression check of a suite run against a committed scorecard (``membench bench --suite NAME --check
SUMMARY``, ``membench bench --resume DIR --check SUMMARY``, ``membench report DIR --scorecard --check SUMMARY``).

Per task and row (the scorecard's ``(task, row)`` pairs, :mod:`membench_agents.analysis.scorecard`): the new mean
of the protocol metric (success rate or return: the per-task ``raw`` mean, not the normalised score), the committed
mean and its bootstrap interval (95 % by default: the level the summary states), and a verdict:

- ``inside``: the new mean lies in the committed interval (bounds included);
- ``outside``: it does not (a regression, or an improvement: the check says which side);
- ``missing``: the summary scores the pair, the new run does not;
- ``new``: the new run scores a pair the summary does not.

The check passes (exit status 0) unless some pair is ``outside`` (exit status 1); ``missing`` and ``new`` are
reported, not failed. It writes ``check.json`` and ``check.md`` beside the new ``scorecard.json``.

Comparing different budgets is meaningless, so a summary whose matched pair was scored at another budget
(:data:`membench_agents.analysis.scorecard.BUDGET_KEYS`: steps, seeds, the evaluation protocol) or with another
metric is refused with one error naming the key. The summary is untrusted input: anything that is not a
``scorecard.json`` of this format is one :class:`ConfigError`. A summary written before the scorecard recorded
each task's whole budget (``budget``) is compared on its ``total_steps`` and ``seeds``, and a note says that its
evaluation protocol could not be compared.

The committed interval is over the summary's runs (seeds): with one seed it is the single value, and any change
is ``outside``; a summary meant for regression checks wants several seeds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from membench_agents.analysis import scorecard
from membench_agents.analysis.report import task_name
from membench_agents.analysis.scorecard import BUDGET_KEYS, SCORECARD
from membench_agents.errors import ConfigError

CHECK = "check.json"
CHECK_MD = "check.md"
INSIDE, OUTSIDE, MISSING, NEW = "inside", "outside", "missing", "new"
VERDICTS = (INSIDE, OUTSIDE, MISSING, NEW)
#: The relative slack at an interval's bounds (the same numbers averaged again may differ in the last bits).
_EPS = 1e-9


@dataclass
class Check:
    data: dict[str, Any]
    """everything check.json holds"""

    @property
    def passed(self) -> bool:
        return bool(self.data["passed"])

    @property
    def exit_status(self) -> int:
        """0 when no pair is outside its committed interval, else 1."""
        return 0 if self.passed else 1


# ------------------------------------------------------------------------------------------------------
# reading a summary (untrusted)
# ------------------------------------------------------------------------------------------------------
def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _estimate(x: Any) -> bool:
    return isinstance(x, dict) and all(_number(x.get(k)) for k in ("value", "lo", "hi")) and x["lo"] <= x["hi"]


def _task_ok(t: Any) -> bool:
    return (
        isinstance(t, dict)
        and all(isinstance(t.get(k), str) for k in ("task", "row", "metric"))
        and _estimate(t.get("raw"))
        and isinstance(t.get("total_steps"), int)
        and isinstance(t.get("seeds"), list)
        and (t.get("budget") is None or (isinstance(t["budget"], dict) and set(BUDGET_KEYS) <= set(t["budget"])))
    )


def load_summary(path: str | Path) -> tuple[dict[str, Any], Path]:
    """A committed scorecard (``scorecard.json`` or the folder holding it), checked; one :class:`ConfigError`
    naming the file for anything else."""
    path = Path(path)
    file = path / SCORECARD if path.is_dir() else path
    if not file.is_file():
        raise ConfigError(f"--check {path}: no such file (pass a {SCORECARD} written by membench bench --suite)")
    what = (
        f"--check {file} is not a {SCORECARD} of `membench bench --suite` (JSON with its format 1 and a list of "
        "tasks, each with task, row, metric, total_steps, seeds and the raw mean's value, lo and hi)"
    )
    try:
        data = json.loads(file.read_text())
    except (ValueError, UnicodeDecodeError, OSError):
        raise ConfigError(what) from None
    ok = (
        isinstance(data, dict)
        and data.get("scorecard") == "membench suite scorecard"
        and data.get("format") == 1
        and isinstance(data.get("tasks"), list)
        and all(_task_ok(t) for t in data["tasks"])
    )
    if not ok:
        raise ConfigError(what)
    seen: set[tuple[str, str]] = set()
    for t in data["tasks"]:
        if (t["task"], t["row"]) in seen:
            raise ConfigError(f"--check {file} scores {t['task']} twice in row {t['row']}: not a scorecard")
        seen.add((t["task"], t["row"]))
    return data, file


# ------------------------------------------------------------------------------------------------------
# the comparison
# ------------------------------------------------------------------------------------------------------
def _budget(t: dict[str, Any]) -> dict[str, Any]:
    return t.get("budget") or {"total_steps": t["total_steps"], "seeds": t["seeds"]}


def _confidence(data: dict[str, Any]) -> float:
    stats = data.get("statistics")
    c = stats.get("confidence") if isinstance(stats, dict) else None
    return float(c) if isinstance(c, float) and 0 < c < 1 else 0.95


def _same_budget(key: tuple[str, str], old: dict[str, Any], new: dict[str, Any], summary_path: Any) -> None:
    for k in BUDGET_KEYS:
        if k in old and old[k] != new.get(k):
            raise ConfigError(
                f"--check {summary_path}: {key[0]} ({key[1]}) was committed at {k}={json.dumps(old[k])}, the new run "
                f"has {k}={json.dumps(new.get(k))}: comparing different budgets is meaningless; rerun at the "
                "summary's budget (its command) or check against a summary of this one"
            )


def preflight(configs: Sequence[dict[str, Any]], summary: dict[str, Any], summary_path: str | Path = "") -> None:
    """Before anything trains: the cells' (resolved configs') budgets against the summary's, by the same (task,
    row) pairs the scorecard will score (one :class:`ConfigError` naming the first key that differs)."""
    results = [
        {"env": c["env"], "env_kwargs": c.get("env_kwargs") or {}, "agent": c["agent"],
         "obs_variant": c.get("obs_variant", "partial"), "config": c}
        for c in configs
    ]  # fmt: skip
    names, _ = scorecard.rows(results)
    old_by = {(t["task"], t["row"]): t for t in summary["tasks"]}
    for r, row in zip(results, names, strict=True):
        key = (task_name(r), row)
        if key in old_by:
            _same_budget(key, _budget(old_by[key]), scorecard.budget(r), summary_path)


def compare(new: dict[str, Any], summary: dict[str, Any], summary_path: str | Path = "") -> Check:
    """The check of a new scorecard's data (``scorecard.json``) against a committed one (module docstring); one
    :class:`ConfigError` where a matched pair differs in budget or metric."""
    old_by = {(t["task"], t["row"]): t for t in summary["tasks"]}
    new_by = {(t["task"], t["row"]): t for t in new["tasks"]}
    notes: list[str] = []
    partial_budget = False
    entries: list[dict[str, Any]] = []
    for key in list(old_by) + [k for k in new_by if k not in old_by]:
        old, cur = old_by.get(key), new_by.get(key)
        entry: dict[str, Any] = {"task": key[0], "row": key[1], "metric": (old or cur or {})["metric"]}
        if old is not None and cur is not None:
            partial_budget |= old.get("budget") is None
            _same_budget(key, _budget(old), _budget(cur), summary_path)
            if old["metric"] != cur["metric"]:
                raise ConfigError(
                    f"--check {summary_path}: {key[0]} ({key[1]}) was committed as {old['metric']}, the new run "
                    f"reports {cur['metric']}: not comparable"
                )
            x, c = float(cur["raw"]["value"]), old["raw"]
            eps = _EPS * max(1.0, abs(x))
            verdict = INSIDE if c["lo"] - eps <= x <= c["hi"] + eps else OUTSIDE
            entry.update({"new": x, "committed": dict(c), "verdict": verdict})
            if verdict == OUTSIDE:
                entry["side"] = "above" if x > c["hi"] else "below"
        elif old is not None:
            entry.update({"new": None, "committed": dict(old["raw"]), "verdict": MISSING})
        else:
            assert cur is not None
            entry.update({"new": float(cur["raw"]["value"]), "committed": None, "verdict": NEW})
        entries.append(entry)
    if partial_budget:
        notes.append(
            "the summary records no evaluation protocol per task (written before scorecards recorded it): only "
            "total_steps and seeds were compared"
        )
    counts = {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS}
    data = {
        "check": "membench scorecard check",
        "format": 1,
        "summary": str(summary_path),
        "summary_command": summary.get("command") if isinstance(summary.get("command"), str) else None,
        "confidence": _confidence(summary),
        "rule": "inside: the new mean of the protocol metric lies in the committed mean's bootstrap interval; "
        "outside: it does not (fails the check); missing: committed, not in the new run; new: the reverse",
        "tasks": entries,
        "counts": counts,
        "passed": counts[OUTSIDE] == 0,
        "notes": notes,
    }
    return Check(data)


def markdown(check: Check) -> str:
    """check.md: the per-(task, row) table, the counts and the verdict of the whole check."""
    d = check.data
    pct = f"{d['confidence']:.0%}"
    lines = [f"# scorecard check against {d['summary']}", ""]
    if d.get("summary_command"):
        lines += [f"committed by `{d['summary_command']}`", ""]

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    body = []
    for e in d["tasks"]:
        c = e["committed"]
        verdict = e["verdict"] + (f" ({e['side']})" if "side" in e else "")
        committed = "-" if c is None else f"{c['value']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}]"
        body.append([e["task"], e["row"], e["metric"], num(e["new"]), committed, verdict])
    head = ["task", "agent", "metric", "new mean", f"committed mean [{pct} CI]", "verdict"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    n = d["counts"]
    lines += [
        "",
        ", ".join(f"{n[v]} {v}" for v in VERDICTS)
        + (": passed" if d["passed"] else f": FAILED ({n[OUTSIDE]} outside the committed interval)"),
    ]
    if d["notes"]:
        lines += ["", "## Notes", ""] + [f"- {x}" for x in d["notes"]]
    return "\n".join(lines)


def save(folder: str | Path, check: Check) -> dict[str, Path]:
    """Write check.json and check.md into ``folder`` (beside its scorecard.json)."""
    folder = Path(folder)
    (folder / CHECK).write_text(json.dumps(check.data, indent=1))
    (folder / CHECK_MD).write_text(markdown(check) + "\n")
    return {"check": folder / CHECK, "check table": folder / CHECK_MD}


__all__ = [
    "CHECK",
    "CHECK_MD",
    "INSIDE",
    "MISSING",
    "NEW",
    "OUTSIDE",
    "VERDICTS",
    "Check",
    "compare",
    "load_summary",
    "markdown",
    "preflight",
    "save",
]
