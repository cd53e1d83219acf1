"""The memory-improvability certificate of one task (``membench certify``): is this task a memory test at this
budget?

Three cells are trained at one budget, on one set of seeds, with one evaluation protocol (POBAX's measurement,
all else equal):

- **floor**: a memoryless agent on ``partial`` (default ``ppo-mlp``): what the task gives without memory;
- **memory**: an agent with memory on ``partial`` (default ``ppo-lstm``, as the T-Maze ladder);
- **ceiling**: the memoryless agent on ``oracle`` (perfect memory: the task's hidden variables appended to every
  observation) or ``full`` (the Markov state); default ``oracle`` where the ID has it, else ``full``.

Each cell resolves by the one rule of ``membench train`` (:func:`membench_agents.config.resolve.resolve`: the
agent's defaults, the ID's tuned cell config, then ``--set``, shared by the three cells); a bench spec of three
cells (floor, memory, ceiling, in that order) gives per-agent hyperparameters instead (:func:`plan`). The cells
may differ only in the agent, the observation variant and the agent's hyperparameters: the ID, its kwargs, the
budget, the seeds and the evaluation protocol must be the same (:func:`check_cells`).

Each run's number is the protocol's (:mod:`membench_agents.runs.stats`: the task's score on the fixed episode
seeds). The statistics (:func:`certify`), with the percentile stratified bootstrap of
:mod:`membench_agents.analysis.aggregate` (runs resampled with replacement within each cell, the cells
independently; 2000 resamples, 95 %, seed 0):

- floor, memory and ceiling: the mean over runs with its interval;
- the gap, ceiling − floor (means), with its interval;
- the share of the gap the memory agent closes, (memory − floor) / (ceiling − floor), with its interval; defined
  only when the gap's interval lies above 0 (resamples whose gap is exactly 0 are left out of its interval);
- the verdict (:func:`verdict`), with ``tolerance`` t in the units of the task's score (default 0.05: five points
  of success rate): *not improvable at this budget* when the gap's upper bound is <= t (the ceiling is not
  above the floor by more than the tolerance; this takes precedence), else *memory-improvable at this budget*
  when the gap's lower bound is > 0, else *undetermined*;
- a note (:func:`alike`) where every run of the three cells scores exactly the same with deterministic actions
  (not all failing nor all succeeding): greedy policies that act alike, whose verdict says little yet.

A certificate folder is a bench folder (:mod:`membench_agents.runs.bench`) under ``<out>/certify/<time>/``: the
three run folders, ``bench.yaml``, and ``certify.yaml`` (each cell's role and provenance, the statistics'
settings, the command that reproduces it), so ``--resume`` continues it like any bench. When every run has
finished, :func:`write` adds ``certificate.json`` (everything needed to reproduce and check it) and
``certificate.png`` (the three learning curves and the final values with their intervals).
"""

from __future__ import annotations

import json
import math
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from membench_agents.algos.registry import AGENTS
from membench_agents.analysis.aggregate import (
    CONFIDENCE,
    MAX_REPS,
    REPS,
    Estimate,
    estimate,
    interval,
    stratified_bootstrap,
)
from membench_agents.analysis.aggregate import mean as mean_stat
from membench_agents.analysis.report import (
    load_results,
    mean_sem_curve,
    save_figure,
    seed_curves,
    steps_text,
)
from membench_agents.config.env_facts import natural_range, obs_variants
from membench_agents.config.resolve import Resolved, resolve
from membench_agents.errors import ConfigError
from membench_agents.runs import bench
from membench_agents.runs.folder import RunFolderError, git_info, versions, write_json

ROLES = ("floor", "memory", "ceiling")
CEILING_VARIANTS = ("oracle", "full")
#: The certificate's own file in its (bench) folder, and what it writes once the runs are done.
META_FILE = "certify.yaml"
CERTIFICATE = "certificate.json"
PLOT = "certificate.png"
#: A suite run's certificates (``membench bench --suite ... --certify``): one file for all its tasks.
TABLE = "certificates.json"
TABLE_MARKDOWN = "certificates.md"
TABLE_PLOT = "certificates.png"
TABLE_KIND = "memory-improvability table"
#: The default tolerance of "not improvable", in units of the task's score.
TOLERANCE = 0.05
DEFAULT_FLOOR = "ppo-mlp"
DEFAULT_MEMORY = "ppo-lstm"

IMPROVABLE = "memory-improvable at this budget"
NOT_IMPROVABLE = "not improvable at this budget"
UNDETERMINED = "undetermined"
RULES = {
    NOT_IMPROVABLE: "the gap's upper bound is <= the tolerance: the ceiling is not above the floor by more "
    "than that; checked first",
    IMPROVABLE: "the gap's lower bound is > 0: the ceiling lies above the floor",
    UNDETERMINED: "neither: the interval of the gap reaches both above the tolerance and down to 0 or below",
}
#: The config keys the three cells must share (all else equal); the evaluation keys that define the protocol.
SHARED_KEYS = ("env", "env_kwargs", "total_steps", "seeds")
SHARED_EVAL_KEYS = ("episodes", "seed_start", "deterministic")


# ------------------------------------------------------------------------------------------------------
# the cells
# ------------------------------------------------------------------------------------------------------
def ceiling_variant(env: str, asked: str | None = None) -> str:
    """The ceiling's observation variant: ``asked`` (checked against the ID's variants), else ``oracle`` where the
    ID has it, else ``full``; one error where the ID has neither."""
    have = obs_variants(env)
    if asked is not None:
        if asked not in CEILING_VARIANTS:
            raise ConfigError(f"the ceiling variant must be one of {', '.join(CEILING_VARIANTS)}, got {asked!r}")
        if asked not in have:
            raise ConfigError(
                f"{env} has no {asked!r} observation variant (it has {', '.join(have)}): choose another "
                "--ceiling-variant"
            )
        return asked
    for v in CEILING_VARIANTS:
        if v in have:
            return v
    raise ConfigError(
        f"{env} has no oracle or full observation variant (only {', '.join(have)}): a certificate needs a "
        "memoryless ceiling on one of them"
    )


def plan(
    env: str | None = None,
    *,
    spec: str | Path | None = None,
    floor: str | None = None,
    memory: str | None = None,
    variant: str | None = None,
    steps: int | None = None,
    seeds: Any = None,
    device: str | None = None,
    overrides: Sequence[str] = (),
) -> bench.Plan:
    """The three cells (floor, memory, ceiling), resolved and checked (:func:`check_cells`).

    Without ``spec``: ``floor`` (default ppo-mlp) on ``partial``, ``memory`` (default ppo-lstm) on ``partial`` and
    ``floor`` on the ceiling ``variant`` (:func:`ceiling_variant`), each the config ``membench train`` resolves to
    on ``env`` with ``overrides`` (``--set``, shared). With ``spec``: the spec's three cells, in the order floor,
    memory, ceiling (its ``set`` lists, then ``overrides``); the agents and variants are then the spec's."""
    overrides = bench.refuse_cell_overrides(
        overrides, "the certificate", "--env, --floor, --memory, --ceiling-variant, or a --spec"
    )
    common = {"steps": steps, "seeds": seeds, "device": device}
    if spec is not None:
        given = [
            f
            for f, v in (("--env", env), ("--floor", floor), ("--memory", memory), ("--ceiling-variant", variant))
            if v
        ]
        if given:
            raise ConfigError(
                f"{', '.join(given)} cannot be combined with --spec: the spec's three cells (floor, memory, "
                "ceiling) name the ID, the agents and the variants"
            )
        data, path = bench.load_spec(spec)
        if len(data["cells"]) != 3:
            raise ConfigError(
                f"bench spec {path}: a certificate takes exactly three cells (floor, memory, ceiling, in that "
                f"order), got {len(data['cells'])}"
            )
        p = bench.plan(spec=path, overrides=overrides, **common)
        p.title = p.title or f"memory-improvability certificate of {p.cells[0].config['env']}"
        p.description = f"certificate from the bench spec {path}"
    else:
        if env is None:
            raise ConfigError("membench certify needs an environment ID (--env ID), a --spec FILE or --resume DIR")
        floor, memory = floor or DEFAULT_FLOOR, memory or DEFAULT_MEMORY
        cells = [resolve(env, floor, obs_variant="partial", overrides=overrides, **common)]
        env = cells[0].config["env"]
        cells.append(resolve(env, memory, obs_variant="partial", overrides=overrides, **common))
        cells.append(resolve(env, floor, obs_variant=ceiling_variant(env, variant), overrides=overrides, **common))
        p = bench.Plan(
            cells,
            title=f"memory-improvability certificate of {env}",
            description=(
                f"certificate of {env}: {floor} on partial (floor), {memory} on partial (memory), "
                f"{floor} on {cells[2].config['obs_variant']} (ceiling)"
            ),
        )
    check_cells(p.cells)
    return p


def check_cells(cells: Sequence[Resolved | dict[str, Any]]) -> None:
    """One :class:`ConfigError` where the three cells are not a certificate: the roles' agents and variants (a
    memoryless floor on partial, an agent with memory on partial, a memoryless ceiling on oracle or full), and all
    else equal (the ID, its kwargs, the budget, the seeds and the evaluation protocol)."""
    cfgs = [c.config if isinstance(c, Resolved) else c for c in cells]
    if len(cfgs) != 3:
        raise ConfigError(f"a certificate has three cells (floor, memory, ceiling), got {len(cfgs)}")
    for role, c in zip(ROLES, cfgs, strict=True):
        info, v = AGENTS[c["agent"]], c["obs_variant"]
        if role == "memory" and not info.memory:
            raise ConfigError(
                f"the memory cell's agent {info.name!r} has no memory ({info.description}); choose one with memory: "
                f"{', '.join(a.name for a in AGENTS.values() if a.memory)}"
            )
        if role != "memory" and info.memory:
            raise ConfigError(
                f"the {role} cell's agent {info.name!r} has memory; the {role} must be memoryless: "
                f"{', '.join(a.name for a in AGENTS.values() if not a.memory)}"
            )
        wanted = CEILING_VARIANTS if role == "ceiling" else ("partial",)
        if v not in wanted:
            raise ConfigError(
                f"the {role} cell must be on the {' or '.join(wanted)} observation variant, got {v!r}"
                + (" (a spec's cells are floor, memory, ceiling, in that order)" if role != "ceiling" else "")
            )
    shared = [_shared(c) for c in cfgs]
    for role, s in zip(ROLES[1:], shared[1:], strict=True):
        if s != shared[0]:
            diff = "; ".join(f"{k}: {_text(shared[0][k])} vs {_text(s[k])}" for k in shared[0] if shared[0][k] != s[k])
            raise ConfigError(
                f"the floor and {role} cells differ in {diff}: a certificate compares its cells all else equal "
                "(only the agent, the observation variant and the agent's hyperparameters may differ)"
            )


def _shared(cfg: dict[str, Any]) -> dict[str, Any]:
    out = {k: cfg[k] for k in SHARED_KEYS}
    out.update({f"eval.{k}": cfg["eval"][k] for k in SHARED_EVAL_KEYS})
    return out


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def command(
    p: bench.Plan, *, spec: str | Path | None = None, overrides: Sequence[str] = (), tolerance: float = TOLERANCE
) -> str:
    """The ``membench certify`` command line that plans these cells again (budget and seeds spelled out)."""
    f, m, c = (r.config for r in p.cells)
    args = ["membench", "certify"]
    if spec is not None:
        args += ["--spec", str(spec)]
    else:
        args += [
            "--env",
            f["env"],
            "--floor",
            f["agent"],
            "--memory",
            m["agent"],
            "--ceiling-variant",
            c["obs_variant"],
        ]
    seeds = ",".join(map(str, f["seeds"])) + ("," if len(f["seeds"]) == 1 else "")  # "7," is one seed, "7" a count
    args += ["--steps", str(f["total_steps"]), "--seeds", seeds]
    for item in overrides:
        args += ["--set", item]
    if tolerance != TOLERANCE:
        args += ["--tolerance", repr(tolerance)]
    return shlex.join(args)


def check_tolerance(tolerance: float) -> float:
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise ConfigError(f"--tolerance must be a finite number >= 0 (in units of the task's score), got {tolerance!r}")
    return float(tolerance)


# ------------------------------------------------------------------------------------------------------
# the folder
# ------------------------------------------------------------------------------------------------------
def create(
    p: bench.Plan,
    out: str | Path,
    *,
    tolerance: float = TOLERANCE,
    spec: str | Path | None = None,
    overrides: Sequence[str] = (),
) -> bench.Bench:
    """A new certificate folder, ``<out>/certify/<time>/``: the bench of the three cells and ``certify.yaml``."""
    tolerance = check_tolerance(tolerance)
    labels = bench.check(p)
    b = bench.create(p, labels, out, kind="certify")
    meta = {
        "roles": dict(zip(ROLES, labels, strict=True)),
        "sources": {role: list(r.sources) for role, r in zip(ROLES, p.cells, strict=True)},
        "spec": None if spec is None else str(spec),
        "command": command(p, spec=spec, overrides=overrides, tolerance=tolerance),
        "tolerance": tolerance,
        "reps": REPS,
        "confidence": CONFIDENCE,
        "bootstrap_seed": 0,
    }
    (b.path / META_FILE).write_text(yaml.safe_dump(meta, sort_keys=False))
    return b


def read_meta(path: str | Path) -> dict[str, Any]:
    """A certificate folder's certify.yaml, checked against its bench.yaml (one error naming what is wrong)."""
    path = Path(path)
    cells = bench.read_meta(path)["cells"]
    file = path / META_FILE
    if not file.is_file():
        raise RunFolderError(
            f"{path} is not a certificate folder (no {META_FILE}); a bench resumes with membench bench"
        )
    try:
        meta = yaml.safe_load(file.read_text())
    except (yaml.YAMLError, UnicodeDecodeError):
        meta = None
    roles = meta.get("roles") if isinstance(meta, dict) else None
    ok = (
        isinstance(meta, dict)
        and isinstance(roles, dict)
        and list(roles) == list(ROLES)
        and list(roles.values()) == list(cells)
        and _number(meta.get("tolerance"))
        and meta["tolerance"] >= 0
        and _number(meta.get("confidence"))
        and 0 < meta["confidence"] < 1
        and all(_number(meta.get(k), integer=True) for k in ("reps", "bootstrap_seed"))
        and 1 <= meta["reps"] <= MAX_REPS
        and meta["bootstrap_seed"] >= 0
    )
    if not ok:
        raise RunFolderError(
            f"{file} is not a certificate file (roles floor, memory, ceiling naming the cells of {bench.BENCH_FILE}; "
            f"tolerance >= 0, confidence in (0, 1), reps 1..{MAX_REPS}, bootstrap_seed >= 0); restore it, or start "
            "a new certificate"
        )
    return meta


def _number(value: Any, integer: bool = False) -> bool:
    """A finite number (an integer where ``integer``), not a boolean."""
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    return math.isfinite(value)


def resume(path: str | Path) -> tuple[bench.Bench, dict[str, Any]]:
    """An interrupted certificate: its bench (checked as :func:`membench_agents.runs.bench.resume` does, and its
    cells against the rules of a certificate) and its certify.yaml."""
    meta = read_meta(path)
    b = bench.resume(path)
    check_cells(b.configs)
    return b, meta


# ------------------------------------------------------------------------------------------------------
# the statistics
# ------------------------------------------------------------------------------------------------------
def _difference(n_first: int):
    """The statistic of a stratified resample of two cells (the first ``n_first`` runs, then the others): the
    second cell's mean minus the first's."""

    def stat(rows: np.ndarray, axis: int = -1) -> np.ndarray:
        rows = np.moveaxis(np.asarray(rows), axis, -1)
        return rows[..., n_first:].mean(axis=-1) - rows[..., :n_first].mean(axis=-1)

    return stat


def _share(n_floor: int, n_memory: int):
    """(memory − floor) / (ceiling − floor) of a stratified resample of the three cells; NaN where the gap is 0."""

    def stat(rows: np.ndarray, axis: int = -1) -> np.ndarray:
        rows = np.moveaxis(np.asarray(rows), axis, -1)
        f = rows[..., :n_floor].mean(axis=-1)
        m = rows[..., n_floor : n_floor + n_memory].mean(axis=-1)
        c = rows[..., n_floor + n_memory :].mean(axis=-1)
        gap = c - f
        out = np.full(np.shape(gap), np.nan)
        np.divide(m - f, gap, out=out, where=gap != 0)
        return out

    return stat


@dataclass(frozen=True)
class Statistics:
    """The numbers of a certificate (:func:`certify`)."""

    floor: Estimate
    memory: Estimate
    ceiling: Estimate
    gap: Estimate
    share: Estimate | None
    """None: undefined (the gap's interval does not lie above 0)"""
    verdict: str
    tolerance: float
    reps: int
    confidence: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "floor": vars(self.floor),
            "memory": vars(self.memory),
            "ceiling": vars(self.ceiling),
            "gap": vars(self.gap),
            "share_closed": None if self.share is None else vars(self.share),
            "verdict": self.verdict,
        }


def verdict(gap: Estimate, tolerance: float = TOLERANCE) -> str:
    """The verdict of a gap (ceiling − floor) and its interval (module docstring): not improvable when its upper
    bound is <= ``tolerance``, else improvable when its lower bound is > 0, else undetermined."""
    if gap.hi <= tolerance:
        return NOT_IMPROVABLE
    if gap.lo > 0:
        return IMPROVABLE
    return UNDETERMINED


def certify(
    floor: Sequence[float],
    memory: Sequence[float],
    ceiling: Sequence[float],
    *,
    tolerance: float = TOLERANCE,
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> Statistics:
    """The certificate's statistics from the per-run values of its three cells (module docstring)."""
    tolerance = check_tolerance(tolerance)
    cells = [np.asarray(v, dtype=np.float64).reshape(-1) for v in (floor, memory, ceiling)]
    f, m, c = (estimate([v], mean_stat, reps, confidence, seed) for v in cells)
    nf, nm = cells[0].size, cells[1].size
    lo, hi = interval(stratified_bootstrap([cells[0], cells[2]], _difference(nf), reps, seed), confidence)
    gap = Estimate(c.value - f.value, float(lo), float(hi))
    share = None
    if gap.lo > 0:
        samples = stratified_bootstrap(cells, _share(nf, nm), reps, seed)
        samples = samples[np.isfinite(samples)]
        lo, hi = interval(samples, confidence)
        share = Estimate((m.value - f.value) / gap.value, float(lo), float(hi))
    return Statistics(f, m, c, gap, share, verdict(gap, tolerance), tolerance, reps, confidence, seed)


# ------------------------------------------------------------------------------------------------------
# the certificate: JSON, plot, text
# ------------------------------------------------------------------------------------------------------
def _certificate(
    results: dict[str, dict[str, Any]], labels: dict[str, str], settings: dict[str, Any], sources: dict[str, Any]
) -> dict[str, Any]:
    """One task's certificate from its three cells' results.json contents (by role) and folder names: the task,
    budget, protocol, cells and statistics (``settings``: tolerance, reps, confidence, bootstrap_seed)."""
    metrics = {r["metric"] for r in results.values()}
    if len(metrics) != 1:
        raise RunFolderError(
            f"{results['floor']['env']}: the certificate's cells report different metrics "
            f"({', '.join(sorted(metrics))})"
        )
    stats = certify(
        *(results[role]["per_run"] for role in ROLES),
        tolerance=settings["tolerance"],
        reps=int(settings["reps"]),
        confidence=float(settings["confidence"]),
        seed=int(settings["bootstrap_seed"]),
    )
    floor = results["floor"]
    return {
        "env": floor["env"],
        "env_kwargs": floor["env_kwargs"],
        "metric": floor["metric"],
        "total_steps": floor["total_steps"],
        "seeds": floor["seeds"],
        "protocol": {k: floor["protocol"][k] for k in ("episodes_per_run", "deterministic_actions")}
        | {"episode_seeds": [floor["protocol"]["episode_seeds"]["first"], floor["protocol"]["episode_seeds"]["last"]]},
        "cells": {
            role: {
                "folder": labels[role],
                "agent": results[role]["agent"],
                "obs_variant": results[role]["obs_variant"],
                "per_run": results[role]["per_run"],
                "config": results[role]["config"],
                "sources": sources.get(role),
                "versions": results[role].get("versions"),
                "git": results[role].get("git"),
            }
            for role in ROLES
        },
        **stats.to_dict(),
    }


def _provenance(settings: dict[str, Any]) -> dict[str, Any]:
    """The rule, the statistics' method and settings, the versions and the time: what every certificate file
    carries besides its numbers."""
    return {
        "rule": {"tolerance": float(settings["tolerance"]), **RULES},
        "statistics": {
            "method": (
                "mean over runs; percentile stratified bootstrap: the runs of each cell resampled with replacement "
                "independently of the other cells; gap = ceiling - floor; share = (memory - floor) / (ceiling - "
                "floor), defined when the gap's interval lies above 0 (resamples with a gap of exactly 0 left out)"
            ),
            "reps": int(settings["reps"]),
            "confidence": float(settings["confidence"]),
            "bootstrap_seed": int(settings["bootstrap_seed"]),
        },
        "versions": versions(),
        "git": git_info(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write(b: bench.Bench, meta: dict[str, Any]) -> tuple[dict[str, Any], Path]:
    """certificate.json and certificate.png of a finished certificate folder."""
    results = {role: load_results(d) for role, d in zip(ROLES, b.cell_dirs, strict=True)}
    cert = {
        "certificate": "memory-improvability",
        "format": 1,
        **_certificate(results, meta["roles"], meta, meta.get("sources", {})),
        **_provenance(meta),
        "spec": meta.get("spec"),
        "command": meta.get("command"),
    }
    write_json(b.path / CERTIFICATE, cert)
    return cert, plot(b, cert)


# ------------------------------------------------------------------------------------------------------
# the certificates of a suite run (membench bench --suite ... --certify)
# ------------------------------------------------------------------------------------------------------
def write_table(
    path: str | Path, settings: dict[str, Any], command: str | None = None
) -> tuple[dict[str, Any], dict[str, Path]]:
    """certificates.json, certificates.md and certificates.png of a finished suite run with certificates
    (:mod:`membench_agents.runs.suite`): one certificate per ID from its floor, memory and ceiling cells
    (``settings["tasks"]``: {ID: {role: cell folder}}), with the statistics of a single certificate."""
    path = Path(path)
    certs = []
    for roles in settings["tasks"].values():
        results = {role: load_results(path / roles[role]) for role in ROLES}
        certs.append(_certificate(results, roles, settings, {}))
    data = {
        "certificates": TABLE_KIND,
        "format": 1,
        "tasks": certs,
        **_provenance(settings),
        "command": command,
    }
    write_json(path / TABLE, data)
    (path / TABLE_MARKDOWN).write_text(table_markdown(data) + "\n")
    return data, {
        "certificates": path / TABLE,
        "certificates table": path / TABLE_MARKDOWN,
        "certificates plot": table_plot(data, path / TABLE_PLOT),
    }


def alike(cert: dict[str, Any]) -> float | None:
    """The score that every run of a certificate's three cells shares, where all of them score exactly the same with
    deterministic actions and that score is not an end of the task's known range (all failing, all succeeding);
    else None. Early in training, greedy policies often act alike (the same most likely action whatever they see),
    and then the verdict describes the greedy policies rather than what the agents learned: the runs are worth
    evaluating with sampled actions (``membench eval RUN --stochastic``) before the verdict is read."""
    if not cert["protocol"]["deterministic_actions"]:
        return None
    scores = {float(v) for role in ROLES for v in cert["cells"][role]["per_run"]}
    if len(scores) != 1:
        return None
    (score,) = scores
    known = natural_range(cert["env"], cert["metric"])
    return None if known is not None and score in known[:2] else score


def alike_note(certs: Sequence[dict[str, Any]]) -> str | None:
    """One line naming the certificates whose runs all score alike (:func:`alike`), or None."""
    same = [(c["env"], v) for c in certs if (v := alike(c)) is not None]
    if not same:
        return None
    return (
        "every run of the three cells scores the same with deterministic actions on "
        + ", ".join(f"{env} ({v:.3f})" for env, v in same)
        + ": the greedy policies may all act alike, so the verdict may describe them rather than what the agents "
        "learned; evaluate the runs with sampled actions (membench eval RUN --stochastic) before reading it"
    )


def table_markdown(data: dict[str, Any]) -> str:
    """The certificates as one Markdown table (a line per task) with the verdicts counted."""
    pct = f"{data['statistics']['confidence']:.0%}"

    def est(e: dict[str, Any] | None) -> str:
        return "undefined" if e is None else Estimate(**e).text()

    certs = data["tasks"]
    first = certs[0]
    ceilings = "/".join(sorted({c["cells"]["ceiling"]["obs_variant"] for c in certs}))
    lines = [
        f"# Memory-improvability certificates: {len(certs)} task(s)",
        "",
        f"Mean over runs [{pct} stratified-bootstrap interval, {data['statistics']['reps']} resamples]; floor = "
        f"{first['cells']['floor']['agent']} on partial, memory = {first['cells']['memory']['agent']} on partial, "
        f"ceiling = {first['cells']['floor']['agent']} on {ceilings}; "
        f"tolerance {data['rule']['tolerance']:g}.",
        "",
        "| task | metric | steps x seeds | floor | memory | ceiling | gap | share closed | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in certs:
        lines.append(
            f"| {c['env']} | {c['metric']} | {steps_text(c['total_steps'])} x {len(c['seeds'])} | {est(c['floor'])} | "
            f"{est(c['memory'])} | {est(c['ceiling'])} | {est(c['gap'])} | {est(c['share_closed'])} | {c['verdict']} |"
        )
    counts = {v: sum(c["verdict"] == v for c in certs) for v in RULES}
    lines += ["", "; ".join(f"{v}: {n}" for v, n in counts.items())]
    if note := alike_note(certs):
        lines += ["", f"Note: {note}."]
    return "\n".join(lines)


def row_range(cert: dict[str, Any]) -> tuple[float, float]:
    """The lowest and the highest end of a certificate's three intervals (floor, memory, ceiling)."""
    return min(cert[r]["lo"] for r in ROLES), max(cert[r]["hi"] for r in ROLES)


def row_scale(cert: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    """A certificate's floor, memory and ceiling (value, lo, hi) on the task's own scale: 0 is the lowest end of
    the three intervals, 1 the highest (all at 0.5 where the three are one number). Returns of different tasks
    differ by orders of magnitude (a T-Maze's 0..4, Battleship's -1000, a Walker's hundreds): on one shared axis
    the small ones would be dots on a line."""
    lo, hi = row_range(cert)
    if not hi > lo:
        return {r: (0.5, 0.5, 0.5) for r in ROLES}
    return {r: tuple((cert[r][k] - lo) / (hi - lo) for k in ("value", "lo", "hi")) for r in ROLES}


def table_plot(data: dict[str, Any], out: Path) -> Path:
    """certificates.png: per task, the floor, memory and ceiling with their intervals on one row, coloured by role,
    the task's name coloured by its verdict; one panel per metric and scale: scores of a known range (success rates,
    POPGym's returns: :func:`~membench_agents.config.env_facts.natural_range`) on that common axis, other returns
    each row on its own scale (:func:`row_scale`) with the row's range written beside it."""
    from matplotlib.figure import Figure

    certs = data["tasks"]
    by_metric: dict[tuple[str, tuple[float, float, str] | None], list[dict[str, Any]]] = {}  # per metric and range
    for c in certs:
        by_metric.setdefault((c["metric"], natural_range(c["env"], c["metric"])), []).append(c)
    heights = [len(v) for v in by_metric.values()]
    fig = Figure(figsize=(9, 1.4 + 0.32 * len(certs) + 0.6 * len(heights)), layout="constrained")
    axes = fig.subplots(len(heights), 1, height_ratios=heights, squeeze=False)[:, 0]
    colours = {IMPROVABLE: "tab:green", NOT_IMPROVABLE: "tab:red", UNDETERMINED: "tab:gray"}
    for ax, ((metric, known), group) in zip(axes, by_metric.items(), strict=True):
        for y, c in enumerate(group):
            scaled = None if known else row_scale(c)
            for i, role in enumerate(ROLES):
                value, lo, hi = (c[role]["value"], c[role]["lo"], c[role]["hi"]) if scaled is None else scaled[role]
                ax.errorbar(
                    [value],
                    [y + (i - 1) * 0.22],
                    xerr=[[value - lo], [hi - value]],
                    fmt="o",
                    color=f"C{i}",
                    ms=5,
                    capsize=3,
                    label=role if y == 0 else None,
                )
            if known is None:
                lows, highs = row_range(c)
                ax.text(1.07, y, f"{lows:.4g} .. {highs:.4g}", va="center", fontsize=7)
        ax.set_yticks(range(len(group)), [c["env"] for c in group], fontsize=8)
        for tick, c in zip(ax.get_yticklabels(), group, strict=True):
            tick.set_color(colours[c["verdict"]])
        ax.set_ylim(len(group) - 0.5, -0.5)
        if known is not None:
            low, high = known[0], known[1]
            margin = 0.03 * (high - low)
            ax.set_xlim(min(low, *(c[r]["lo"] for c in group for r in ROLES)) - margin, high + margin)
            ax.set_xlabel(f"{known[2]}: mean over runs with its interval", fontsize=9)
        else:
            ax.set_xlim(-0.03, 1.3)
            ax.set_xticks([0, 1], ["lowest", "highest"], fontsize=8)
            ax.set_xlabel(
                f"{metric}: mean over runs with its interval, each task on its own scale\n"
                "(from the lowest to the highest end of its three intervals: the range at the right)",
                fontsize=9,
            )
        ax.grid(axis="x", alpha=0.3)
    axes[0].legend(fontsize=8, ncols=3, loc="lower left", bbox_to_anchor=(0, 1.0))
    counts = ", ".join(f"{sum(c['verdict'] == v for c in certs)} {v.split(' at ')[0]}" for v in RULES)
    fig.suptitle(
        f"memory-improvability certificates: {counts}\n(task names: green improvable, red not, grey undetermined)",
        fontsize=10,
    )
    return save_figure(fig, out)


def _role_name(role: str, cell: dict[str, Any]) -> str:
    return f"{role}: {cell['agent']} ({cell['obs_variant']})"


def plot(b: bench.Bench, cert: dict[str, Any]) -> Path:
    """certificate.png: the three learning curves (mean over seeds ± SEM) and the final values with their
    intervals, the gap and the verdict."""
    from matplotlib.figure import Figure

    metric = cert["metric"]
    what = "success rate" if metric == "success_rate" else "return"
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    ax, bx = fig.subplots(1, 2, width_ratios=[2, 1])
    sources = set()
    for i, (role, d) in enumerate(zip(ROLES, b.cell_dirs, strict=True)):
        source, curves = seed_curves(d, metric)
        sources.add(source)
        gx, gm, ge = mean_sem_curve(curves)
        if gx.size:
            ax.plot(gx, gm, color=f"C{i}", lw=2, label=_role_name(role, cert["cells"][role]))
            ax.fill_between(gx, gm - ge, gm + ge, color=f"C{i}", alpha=0.2)
    on = "evaluation on the fixed episode seeds" if sources == {"eval"} else "training episodes"
    ax.set(
        xlabel="environment steps",
        ylabel=what,
        title=f"learning curves, mean ± SEM over {len(cert['seeds'])} seeds ({on})",
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    pct = f"{cert['statistics']['confidence']:.0%}"
    for i, role in enumerate(ROLES):
        est, vals = cert[role], cert["cells"][role]["per_run"]
        bx.errorbar(
            [i],
            [est["value"]],
            yerr=[[est["value"] - est["lo"]], [est["hi"] - est["value"]]],
            fmt="o",
            color=f"C{i}",
            capsize=8,
            ms=8,
            lw=2,
        )
        bx.scatter(i + np.linspace(-0.12, 0.12, len(vals)), vals, color="k", s=10, zorder=3)
    gap = cert["gap"]
    bx.set_xticks(range(3), [f"{r}\n{cert['cells'][r]['agent']}\n({cert['cells'][r]['obs_variant']})" for r in ROLES])
    bx.set(
        ylabel=f"final {what}",
        title=f"final, mean [{pct} CI]\ngap {gap['value']:.3f} [{gap['lo']:.3f}, {gap['hi']:.3f}]",
        xlim=(-0.6, 2.6),
    )
    bx.grid(axis="y", alpha=0.3)
    if metric == "success_rate":
        ax.set_ylim(-0.02, 1.02)
        bx.set_ylim(-0.02, 1.05)
    fig.suptitle(f"{cert['env']}, {steps_text(cert['total_steps'])} steps: {cert['verdict']}")
    return save_figure(fig, b.path / PLOT)


def text(cert: dict[str, Any]) -> str:
    """The certificate as a few lines of text (what ``membench certify`` prints)."""
    pct = f"{cert['statistics']['confidence']:.0%}"

    def est(e: dict[str, Any] | None) -> str:
        return "undefined" if e is None else Estimate(**e).text()

    kw = ",".join(f"{k}={v}" for k, v in sorted(cert["env_kwargs"].items()))
    lines = [
        f"certificate of {cert['env']}{f' [{kw}]' if kw else ''}: {cert['metric']}, "
        f"{steps_text(cert['total_steps'])} steps x {len(cert['seeds'])} seeds, mean [{pct} stratified-bootstrap "
        f"interval, {cert['statistics']['reps']} resamples]"
    ]
    for role in ROLES:
        c = cert["cells"][role]
        runs = " ".join(f"{v:.3f}" for v in c["per_run"])
        lines.append(f"  {role:<8} {c['agent'] + ' (' + c['obs_variant'] + ')':<26} {est(cert[role]):<26} runs {runs}")
    lines.append(f"  {'gap':<8} {'ceiling - floor':<26} {est(cert['gap'])}")
    lines.append(f"  {'share':<8} {'closed by memory':<26} {est(cert['share_closed'])}")
    rule = cert["rule"][cert["verdict"]]
    lines.append(f"verdict: {cert['verdict']} ({rule}; tolerance {cert['rule']['tolerance']:g})")
    if note := alike_note([cert]):
        lines.append(f"note: {note}")
    return "\n".join(lines)


__all__ = [
    "CEILING_VARIANTS",
    "CERTIFICATE",
    "IMPROVABLE",
    "META_FILE",
    "NOT_IMPROVABLE",
    "PLOT",
    "ROLES",
    "RULES",
    "TABLE",
    "TABLE_KIND",
    "TABLE_MARKDOWN",
    "TABLE_PLOT",
    "TOLERANCE",
    "UNDETERMINED",
    "Statistics",
    "alike",
    "alike_note",
    "ceiling_variant",
    "certify",
    "check_cells",
    "check_tolerance",
    "command",
    "create",
    "plan",
    "plot",
    "read_meta",
    "resume",
    "table_markdown",
    "table_plot",
    "text",
    "verdict",
    "write",
    "write_table",
]
