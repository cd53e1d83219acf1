"""A bench: several cells (env, agent, observation variant) trained side by side in one folder (``membench bench``,
``make bench``).

What a bench trains (:func:`plan`): without ``env`` and ``agent``, the cells of a bench spec (``--spec FILE``, else
the T-Maze memory ladder shipped with the package, ``config/ladder.yaml``); with ``env`` alone, the ladder's
(agent, variant) cells on that ID; with ``agent``, that one cell (on the ladder's ID without ``env``). Each cell
resolves by the one rule of ``membench train`` (:func:`membench_agents.config.resolve.resolve`).

A bench folder, ``<out>/bench/<time>/``, holds ``bench.yaml`` (the cells' folder names, the title, the expected
ranges of the final metric per cell) and one run folder per cell, named by its label. :func:`resume` continues
an interrupted bench from that file. The tables, plots and the check of the expected ranges are the report's
(:func:`membench_agents.analysis.report.write_bench_report`). A suite run (``membench bench --suite``,
:mod:`membench_agents.runs.suite`) and a certificate (``membench certify``) are bench folders of their own kinds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from membench_agents.algos.trainer import env_kwargs_of, preflight
from membench_agents.config.resolve import CONFIG_DATA, Resolved, load_yaml, parse_override, resolve
from membench_agents.errors import ConfigError
from membench_agents.runs import cell
from membench_agents.runs.executors import Executor
from membench_agents.runs.folder import RunFolderError, folder_name, locked, run_label
from membench_agents.runs.tracking import Tracking
from membench_agents.runs.workers import Job, run_jobs

BENCH_FILE = "bench.yaml"
#: the default bench: the memory-improvability ladder on the Passive T-Maze
LADDER = CONFIG_DATA / "ladder.yaml"


@dataclass
class Plan:
    """The resolved cells of a new bench, before its folder exists."""

    cells: list[Resolved]
    title: str | None = None
    expect: dict[str, list[float]] = field(default_factory=dict)
    jobs: int = 0  #: the spec's worker processes (0: automatic)
    description: str | None = None  #: what the spec says it is (a spec's bench only)

    @property
    def configs(self) -> list[dict[str, Any]]:
        return [r.config for r in self.cells]


@dataclass
class Bench:
    """A bench folder and what it trains."""

    path: Path
    labels: list[str]
    configs: list[dict[str, Any]]
    jobs: list[Job]
    title: str | None = None
    expect: dict[str, list[float]] = field(default_factory=dict)

    @property
    def cell_dirs(self) -> list[Path]:
        return [self.path / label for label in self.labels]


#: The keys of a bench spec, and of each of its cells given as a mapping.
SPEC_KEYS = ("title", "description", "env", "jobs", "set", "cells", "expect")
CELL_KEYS = ("agent", "obs_variant", "env", "set")


def load_spec(spec: str | Path | None = None) -> tuple[dict[str, Any], Path]:
    """A bench spec and its path: ``spec``, else the T-Maze ladder shipped with the package. A spec that is not
    what the module docstring describes is one :class:`ConfigError` naming the file and the key."""
    path = Path(spec) if spec else LADDER
    data = load_yaml(path)
    _check_keys(data, SPEC_KEYS, f"bench spec {path}")
    cells = data.get("cells")
    if not isinstance(cells, list) or not cells:
        raise ConfigError(f"bench spec {path}: 'cells' must be a non-empty list of cells, got {cells!r}")
    for i, c in enumerate(cells):
        where = f"bench spec {path}: cells[{i}]"
        if isinstance(c, dict):
            _check_keys(c, CELL_KEYS, where)
            if not isinstance(c.get("agent"), str):
                raise ConfigError(f"{where}: 'agent' must name an agent, got {c.get('agent')!r}")
            _check_sets(c, where)
        elif not isinstance(c, str):
            raise ConfigError(f"{where} must be a cell config file (a path) or a mapping with 'agent', got {c!r}")
    _check_sets(data, f"bench spec {path}")
    if not isinstance(data.get("jobs", 0), int) or isinstance(data.get("jobs"), bool) or data.get("jobs", 0) < 0:
        raise ConfigError(f"bench spec {path}: 'jobs' must be an int >= 0, got {data['jobs']!r}")
    return data, path


def _check_keys(data: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; valid: {', '.join(allowed)}")


def _check_sets(data: dict[str, Any], where: str) -> None:
    sets = data.get("set", [])
    if not isinstance(sets, list) or not all(isinstance(x, str) and "=" in x for x in sets):
        raise ConfigError(f"{where}: 'set' must be a list of 'key=value' overrides (as --set), got {sets!r}")


#: What a bench cell is (its task, agent and observation variant): a command that plans its own cells sets them itself.
CELL_DEFINING = ("env", "agent", "obs_variant")


def refuse_cell_overrides(overrides: Sequence[str], what: str, flags: str) -> list[str]:
    """``overrides`` (``--set`` items) as a list, once none sets a key of :data:`CELL_DEFINING`, which ``what``
    (a command that plans its own cells) sets itself through ``flags``: else one :class:`ConfigError`."""
    overrides = list(overrides)
    for item in overrides:
        key = parse_override(item)[0]
        if key[0] in CELL_DEFINING:
            raise ConfigError(f"--set {item}: {what} sets each cell's {key[0]} itself ({flags})")
    return overrides


def plan(
    env: str | None = None,
    agent: str | None = None,
    spec: str | Path | None = None,
    *,
    steps: int | None = None,
    seeds: Any = None,
    device: str | None = None,
    overrides: Sequence[str] = (),
    obs_variant: str | None = None,
) -> Plan:
    """The cells a bench trains (module docstring), each resolved with the budget, seeds and device given.
    ``overrides`` (``--set`` items) apply to every cell (to the cells of a spec after the spec's own ``set``
    lists); ``obs_variant``: the variant of the one (env, agent) cell."""
    common = {"steps": steps, "seeds": seeds, "device": device, "overrides": list(overrides)}
    if env is not None and agent is not None:
        return Plan([resolve(env, agent, obs_variant=obs_variant, **common)])
    data, path = load_spec(spec)
    if env is None and agent is None:
        common.pop("overrides")
        return _spec_plan(data, path, common, list(overrides))
    if agent is None:
        # the ladder's (agent, variant) cells on another ID, with that ID's cell configs / agent defaults
        cells = [resolve(env, a, obs_variant=variant, **common) for a, variant in _agent_variants(data, path)]
        return Plan(cells, title=f"memory ladder on {env}")
    return Plan([resolve(data["env"], agent, **common)])


def _spec_plan(data: dict[str, Any], path: Path, common: dict[str, Any], last: list[str] | None = None) -> Plan:
    """Every cell of a spec: a cell config file (relative to the spec) or a mapping (agent, obs_variant, env, set).
    The spec's ``set`` overrides apply to every cell (the hyperparameters a protocol fixes across agents), then the
    cell's own ``set`` (its agent's tuned ones), then ``last`` (the command line's), all like ``membench train
    --set``."""
    shared = list(data.get("set", []))
    last = last or []
    cells = [
        resolve(config_file=path.parent / c, overrides=shared + last, **common)
        if isinstance(c, str)
        else resolve(
            c.get("env", data.get("env")),
            c["agent"],
            obs_variant=c.get("obs_variant"),
            overrides=shared + list(c.get("set", [])) + last,
            **common,
        )
        for c in data["cells"]
    ]
    return Plan(
        cells,
        title=data.get("title"),
        expect=data.get("expect") or {},
        jobs=int(data["jobs"]) if data.get("jobs") else 0,
        description=data.get("description", str(path)),
    )


def _agent_variants(data: dict[str, Any], path: Path) -> list[tuple[str, str]]:
    """(agent, obs_variant) of every cell of a bench spec."""
    pairs = []
    for c in data["cells"]:
        cfg = load_yaml(path.parent / c) if isinstance(c, str) else c
        pairs.append((cfg["agent"], cfg.get("obs_variant", "partial")))
    return pairs


def labels(configs: list[dict[str, Any]]) -> list[str]:
    """The cells' folder names: their run labels, prefixed by the ID where the cells are on several tasks."""
    one_env = len({(c["env"], json.dumps(c["env_kwargs"], sort_keys=True)) for c in configs}) == 1
    out = [run_label(c) if one_env else f"{c['env'].replace('/', '__')}__{run_label(c)}" for c in configs]
    if len(set(out)) != len(out):
        raise ConfigError(f"two bench cells share a label: {out}")
    return out


def check(p: Plan) -> list[str]:
    """The cells' labels, once every cell is known to train (before anything is written). Each environment (ID,
    kwargs and variant) is made once, however many cells train on it."""
    from tqdm import tqdm

    out = labels(p.configs)
    spaces: dict[str, tuple] = {}
    # a bar on a terminal only (disable=None): a suite of ManiSkill IDs makes each in seconds
    cells = tqdm(
        p.configs, "checking the cells", unit="cell", leave=False, disable=None, dynamic_ncols=True, file=sys.stderr
    )
    for c in cells:
        key = json.dumps([c["env"], env_kwargs_of(c)], sort_keys=True, default=str)
        spaces[key] = preflight(c, spaces.get(key))
    return out


def create(p: Plan, cell_labels: list[str], out: str | Path, kind: str = "bench") -> Bench:
    """A new bench folder under ``<out>/<kind>/`` (``bench``; ``certify`` for a certificate, ``scorecard`` for a
    suite run), named by the time,
    with its cells' run folders and bench.yaml."""
    path = Path(out) / kind / time.strftime("%Y%m%d-%H%M%S")
    k = 1
    while path.exists():
        k += 1
        path = path.with_name(f"{time.strftime('%Y%m%d-%H%M%S')}-{k}")
    jobs = [
        _named(j, label)
        for label, c in zip(cell_labels, p.configs, strict=True)
        for j in cell.prepare_run(c, path / label)
    ]
    (path / BENCH_FILE).write_text(yaml.safe_dump({"cells": cell_labels, "title": p.title, "expect": p.expect}))
    return Bench(path, cell_labels, p.configs, jobs, p.title, p.expect)


def _named(job: Job, label: str) -> Job:
    """The job named by its cell's label (``<label>/s<seed>``): unique in the bench, where cells on several IDs
    share an agent (the workers tell their runs apart by these names)."""
    return dataclasses.replace(job, label=f"{label}/s{job.seed}")


def read_meta(path: str | Path) -> dict[str, Any]:
    """A bench folder's bench.yaml, checked (one error naming what is wrong and how to recover)."""
    path = Path(path)
    file = path / BENCH_FILE
    if not file.is_file():
        raise RunFolderError(f"{path} is not a membench bench folder (no {BENCH_FILE})")
    try:
        meta = yaml.safe_load(file.read_text())
    except (yaml.YAMLError, UnicodeDecodeError):
        meta = None
    fix = "restore it, or resume each cell with membench train --resume"
    cells = meta.get("cells") if isinstance(meta, dict) else None
    if (
        not isinstance(meta, dict)
        or not isinstance(cells, list)
        or not cells
        or not all(isinstance(c, str) for c in cells)
    ):
        raise RunFolderError(
            f"{file} is not a bench file (a mapping with a list of cell folder names under 'cells'); {fix}"
        )
    try:  # names read back: the rule of every new folder name, so none reaches outside the bench folder
        for i, c in enumerate(cells):
            folder_name(c, f"cells[{i}]")
    except ConfigError as e:
        raise RunFolderError(f"{file}: {e}; {fix}") from None
    if len(set(cells)) != len(cells):
        raise RunFolderError(f"{file} lists a cell twice ({cells}); {fix}")
    if meta.get("title") is not None and not isinstance(meta["title"], str):
        raise RunFolderError(f"{file}: title must be a string, got {meta['title']!r}; {fix}")
    expect = meta.get("expect") or {}
    if not isinstance(expect, dict) or not all(_is_range(v) for v in expect.values()):
        raise RunFolderError(f"{file}: expect must map cell labels to [low, high], got {expect!r}; {fix}")
    return meta


def _is_range(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)
    )


def resume(path: str | Path) -> Bench:
    """An interrupted bench, to continue with the configs it started with (checked before any work starts)."""
    path = Path(path)
    meta = read_meta(path)
    cell_labels = meta["cells"]
    configs = [cell.run_config(path / label) for label in cell_labels]
    for label, c in zip(cell_labels, configs, strict=True):
        cell.check_resumable(c, path / label)
    jobs = [
        _named(j, label)
        for label, c in zip(cell_labels, configs, strict=True)
        for j in cell.jobs_for(c, path / label, resume=True)
    ]
    return Bench(path, cell_labels, configs, jobs, meta.get("title"), meta.get("expect") or {})


def run(
    bench: Bench,
    workers: int = 1,
    progress: bool = True,
    tracking: Tracking | None = None,
    executor: Executor | None = None,
) -> None:
    """Train every job of the bench (each cell folder locked: one writer), then write each cell's results.json.
    ``executor``: where the runs train (:mod:`membench_agents.runs.executors`; None: this machine).

    A stop (Ctrl-C, SIGTERM) raises :class:`KeyboardInterrupt`, a failed run
    :class:`~membench_agents.runs.workers.RunFailed`, with every checkpoint saved: :func:`resume` continues."""
    with contextlib.ExitStack() as held:
        for d in bench.cell_dirs:
            held.enter_context(locked(d))
        for job in bench.jobs:
            job.tracking = tracking
        run_jobs(bench.jobs, workers=workers, progress=progress, executor=executor)
        for d in bench.cell_dirs:
            cell.finalize_run(d)


@dataclass
class Expectation:
    """A cell's final metric (mean over its runs) against the range the bench expects of it."""

    label: str
    results: dict[str, Any]  #: the cell's results.json
    low: float
    high: float

    @property
    def met(self) -> bool:
        return self.low <= self.results["mean"] <= self.high


def expectations(bench: Bench) -> list[Expectation]:
    """The expected ranges of the bench's finished cells, in the order of its cells."""
    out = []
    for label, d in zip(bench.labels, bench.cell_dirs, strict=True):
        if label in bench.expect:
            low, high = bench.expect[label]
            out.append(Expectation(label, json.loads((d / "results.json").read_text()), low, high))
    return out


__all__ = [
    "BENCH_FILE",
    "LADDER",
    "Bench",
    "Expectation",
    "Plan",
    "check",
    "create",
    "expectations",
    "labels",
    "load_spec",
    "plan",
    "read_meta",
    "refuse_cell_overrides",
    "resume",
    "run",
]
