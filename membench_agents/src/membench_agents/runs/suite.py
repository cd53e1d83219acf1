"""A suite run (``membench bench --suite NAME``): one or more agents on every selected ID of the catalogue, in one
bench folder, for a scorecard (:mod:`membench_agents.analysis.scorecard`).

The IDs (:func:`select`): those of a catalogue suite (``--suite``), narrowed by ``fnmatch`` patterns over the IDs
(``--ids 'MIKASA/TMaze*,POPGym/Repeat*'``; each pattern must match at least one ID) and by a MIKASA memory type
(``--memory-type``); any of the three alone selects from the whole catalogue. An ID whose optional extra is not
installed is never dropped silently (:func:`missing`): the command stops with one line naming them, or skips them
with ``--skip-missing`` and says so (the scorecard lists them too).

The cells (:func:`plan`): one per (ID, agent), each resolved by the one rule of ``membench train``
(:func:`membench_agents.config.resolve.resolve`: the agent's defaults, the ID's tuned cell config, then the
flags), on one observation variant (default ``partial``). The default agents are the T-Maze ladder's memoryless
and memory agents on ``partial`` (``config/ladder.yaml``: ppo-mlp and ppo-lstm).

With certificates (``--certify``, :func:`plan`'s ``ceilings``), each ID also gets the certificate's ceiling cell
(the memoryless floor agent on ``oracle`` or ``full``): the partial cells of the floor and memory agents and that
ceiling make the ID's memory-improvability certificate
(:mod:`membench_agents.analysis.certificate`), so the scorecard and the certificates come from one set of runs and
no run is trained twice; the scorecard then normalises each task by its own certificate.

The folder is a bench folder of its own kind, ``<out>/scorecard/<time>/`` (:func:`create`): the run folders (named
``<ID>__<agent>``), ``bench.yaml`` (so :func:`membench_agents.runs.bench.resume` continues it like any bench) and
``scorecard.yaml`` (the selection, the skipped IDs, the reference certificates and the command that plans it
again), which marks it as a scorecard: ``membench bench --resume`` writes the scorecard when the runs are done,
``membench report DIR --scorecard`` rebuilds it.
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

from membench_agents.config.resolve import load_yaml, resolve
from membench_agents.errors import ConfigError
from membench_agents.runs import bench
from membench_agents.runs.folder import RunFolderError

T = TypeVar("T")
#: The scorecard's own file in its (bench) folder.
META_FILE = "scorecard.yaml"
KIND = "scorecard"


def default_agents() -> list[str]:
    """The T-Maze ladder's agents on ``partial`` (its memoryless floor and its memory agent), in its order."""
    data = load_yaml(bench.LADDER)
    out: list[str] = []
    for c in data["cells"]:
        agent, variant = c["agent"], c.get("obs_variant", "partial")
        if variant == "partial" and agent not in out:
            out.append(agent)
    return out


def split_list(items: Sequence[str] | None) -> list[str]:
    """``--agent a --agent b,c`` -> [a, b, c] (empty items dropped, order kept, duplicates once)."""
    out: list[str] = []
    for item in items or []:
        for part in item.split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    return out


def select(suite: str | None = None, ids: Sequence[str] = (), memory_type: str | None = None) -> list[Any]:
    """The catalogue entries selected (module docstring), in catalogue order; one :class:`ConfigError` for an
    unknown suite or memory type, a pattern that matches no ID, or an empty selection."""
    from membench_envs import catalogue

    if suite is None and not ids and memory_type is None:
        raise ConfigError("a suite run needs --suite NAME, --ids PATTERN or --memory-type TYPE")
    try:
        specs = catalogue.select(suite=suite, memory_type=memory_type)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    where = " and ".join(
        x for x in (f"suite {suite}" if suite else "", f"memory type {memory_type}" if memory_type else "") if x
    )
    where = where or "the catalogue"
    if ids:
        hits = {p: [s for s in specs if fnmatch.fnmatchcase(s.id, p)] for p in ids}
        empty = [p for p, h in hits.items() if not h]
        if empty:
            raise ConfigError(
                f"--ids pattern(s) {', '.join(repr(p) for p in empty)} match no ID of {where} "
                "(fnmatch globs over the IDs, case-sensitive: e.g. 'MIKASA/TMaze*'; membench-envs list shows them)"
            )
        chosen = {s.id for h in hits.values() for s in h}
        specs = [s for s in specs if s.id in chosen]
    if not specs:
        raise ConfigError(f"no ID in {where}")
    return specs


def missing(specs: Sequence[Any]) -> list[tuple[str, str]]:
    """(ID, extra) of every selected ID whose optional extra is not installed."""
    from membench_envs._deps import installed

    return [(s.id, s.extra) for s in specs if not installed(s.extra)]


def missing_text(gone: Sequence[tuple[str, str]]) -> str:
    """``3 IDs need extras that are not installed: A, B (popgym); C (craftax)``."""
    by_extra: dict[str, list[str]] = {}
    for env_id, extra in gone:
        by_extra.setdefault(extra, []).append(env_id)
    parts = "; ".join(f"{', '.join(ids)} (pip install 'membench-envs[{e}]')" for e, ids in by_extra.items())
    return f"{len(gone)} ID(s) need an extra that is not installed: {parts}"


def check_variant(variant: str | None) -> str:
    return variant or "partial"


def plan(
    specs: Sequence[Any],
    agents: Sequence[str],
    *,
    variant: str | None = None,
    steps: int | None = None,
    seeds: Any = None,
    device: str | None = None,
    overrides: Sequence[str] = (),
    title: str | None = None,
    ceilings: Mapping[str, tuple[str, str]] | None = None,
) -> bench.Plan:
    """One cell per (ID, agent), in catalogue order, each resolved as ``membench train --env ID --agent A
    --obs-variant V --set ...`` resolves it; ``ceilings``: {ID: (agent, variant)}, one more cell on each of those
    IDs, after its agents' cells (a certificate's ceiling)."""
    overrides = bench.refuse_cell_overrides(
        overrides, "a suite run", "--suite/--ids/--memory-type, --agent, --obs-variant"
    )
    if not agents:
        raise ConfigError("a suite run needs at least one agent (--agent)")
    variant = check_variant(variant)
    ceilings = ceilings or {}
    cells = []
    for s in specs:
        extra = [ceilings[s.id]] if s.id in ceilings else []
        for a, v in [(a, variant) for a in agents] + extra:
            cells.append(resolve(s.id, a, obs_variant=v, steps=steps, seeds=seeds, device=device, overrides=overrides))
    return bench.Plan(
        cells,
        title=title,
        description=f"{len(specs)} ID(s) x {len(agents)} agent(s) ({', '.join(agents)}) on {variant}"
        + (f", and a certificate's ceiling cell on {len(ceilings)} ID(s)" if ceilings else ""),
    )


def certificate_roles(
    cells: Sequence[T], configs: Sequence[dict[str, Any]], floor: str, memory: str
) -> dict[str, dict[str, T]]:
    """{ID: {"floor": cell, "memory": cell, "ceiling": cell}} of a suite run with certificates (``cells``: what
    stands for each config, its label or its resolved cell): per ID, the floor agent's and the memory agent's
    partial cells and the floor agent's cell on another variant; one :class:`ConfigError` for an ID that lacks one
    of them."""
    roles: dict[str, dict[str, T]] = {}
    for cell, c in zip(cells, configs, strict=True):
        if c["obs_variant"] != "partial":
            role = "ceiling" if c["agent"] == floor else None
        else:
            role = {floor: "floor", memory: "memory"}.get(c["agent"])
        if role is not None:
            roles.setdefault(c["env"], {})[role] = cell
    for env, r in roles.items():
        if set(r) != {"floor", "memory", "ceiling"}:
            raise ConfigError(f"{env}: a certificate needs a floor, a memory and a ceiling cell, found {sorted(r)}")
    return roles


def command(meta: dict[str, Any]) -> str:
    """The ``membench bench`` command line that plans these cells again (budget and seeds as given)."""
    args = ["membench", "bench"]
    sel = meta["selection"]
    if sel["suite"]:
        args += ["--suite", sel["suite"]]
    if sel["ids"]:
        args += ["--ids", ",".join(sel["ids"])]
    if sel["memory_type"]:
        args += ["--memory-type", sel["memory_type"]]
    args += ["--agent", ",".join(meta["agents"]), "--obs-variant", meta["obs_variant"]]
    for flag, key in (("--steps", "steps"), ("--seeds", "seeds")):
        if meta.get(key) is not None:
            args += [flag, str(meta[key])]
    for item in meta["overrides"]:
        args += ["--set", item]
    if meta["skipped"]:
        args += ["--skip-missing"]
    for ref in meta["references"]:
        args += ["--reference", ref]
    if meta.get("certify"):
        args += ["--certify"]
    return shlex.join(args)


def create(
    p: bench.Plan,
    out: str | Path,
    *,
    suite: str | None,
    ids: Sequence[str],
    memory_type: str | None,
    agents: Sequence[str],
    variant: str | None,
    steps: int | None = None,
    seeds: Any = None,
    overrides: Sequence[str] = (),
    skipped: Sequence[tuple[str, str]] = (),
    references: Sequence[str] = (),
    certify: dict[str, Any] | None = None,
) -> bench.Bench:
    """A new scorecard folder, ``<out>/scorecard/<time>/``: the bench of the cells and ``scorecard.yaml``.
    Nothing is written before every cell is known to train (:func:`membench_agents.runs.bench.check`).
    ``certify``: the certificates' settings (``floor`` and ``memory`` agents, ``tolerance``, the bootstrap's
    ``reps``, ``confidence`` and ``bootstrap_seed``); each ID's roles are added here."""
    labels = bench.check(p)
    if certify is not None:
        certify = {
            **certify,
            "tasks": certificate_roles(labels, p.configs, certify["floor"], certify["memory"]),
        }
    b = bench.create(p, labels, out, kind=KIND)
    meta: dict[str, Any] = {
        "selection": {"suite": suite, "ids": list(ids), "memory_type": memory_type},
        "agents": list(agents),
        "obs_variant": check_variant(variant),
        "steps": steps,
        "seeds": None if seeds is None else str(seeds),
        "overrides": list(overrides),
        "skipped": [{"env": e, "extra": x} for e, x in skipped],
        "references": [str(Path(r).resolve()) for r in references],
        "certify": certify,
        "cells": {
            label: {"env": r.config["env"], "agent": r.config["agent"], "sources": list(r.sources)}
            for label, r in zip(labels, p.cells, strict=True)
        },
    }
    meta = {**meta, "command": command(meta)}
    (b.path / META_FILE).write_text(yaml.safe_dump(meta, sort_keys=False))
    return b


def is_scorecard(path: str | Path) -> bool:
    return (Path(path) / META_FILE).is_file()


def read_meta(path: str | Path) -> dict[str, Any]:
    """A scorecard folder's scorecard.yaml, checked against its bench.yaml (one error naming what is wrong)."""
    path = Path(path)
    cells = bench.read_meta(path)["cells"]
    file = path / META_FILE
    if not file.is_file():
        raise RunFolderError(f"{path} is not a scorecard folder (no {META_FILE})")
    try:
        meta = yaml.safe_load(file.read_text())
    except (yaml.YAMLError, UnicodeDecodeError):
        meta = None
    ok = (
        isinstance(meta, dict)
        and isinstance(meta.get("cells"), dict)
        and list(meta["cells"]) == list(cells)
        and all(isinstance(v, dict) and isinstance(v.get("env"), str) for v in meta["cells"].values())
        and isinstance(meta.get("agents"), list)
        and isinstance(meta.get("references"), list)
        and all(isinstance(r, str) for r in meta["references"])
        and isinstance(meta.get("skipped"), list)
        and isinstance(meta.get("selection"), dict)
        and _certify_ok(meta.get("certify"), cells)
    )
    if not ok:
        raise RunFolderError(
            f"{file} is not a scorecard file (cells naming the cells of {bench.BENCH_FILE} with their env, the "
            "selection, agents, references and skipped IDs as lists, certificates' roles naming its cells); "
            "restore it, or start a new suite run"
        )
    return meta


def _certify_ok(certify: Any, cells: Sequence[str]) -> bool:
    """No certificates, or their settings with each ID's three roles naming cells of the bench."""
    if certify is None:
        return True
    return (
        isinstance(certify, dict)
        and all(isinstance(certify.get(k), str) for k in ("floor", "memory"))
        and all(isinstance(certify.get(k), (int, float)) for k in ("tolerance", "reps", "confidence", "bootstrap_seed"))
        and isinstance(certify.get("tasks"), dict)
        and all(
            isinstance(r, dict) and sorted(r) == ["ceiling", "floor", "memory"] and set(r.values()) <= set(cells)
            for r in certify["tasks"].values()
        )
    )


def resume(path: str | Path) -> tuple[bench.Bench, dict[str, Any]]:
    """An interrupted suite run: its bench (checked as :func:`membench_agents.runs.bench.resume` does) and its
    scorecard.yaml."""
    meta = read_meta(path)
    return bench.resume(path), meta


__all__ = [
    "KIND",
    "META_FILE",
    "certificate_roles",
    "command",
    "create",
    "default_agents",
    "is_scorecard",
    "missing",
    "missing_text",
    "plan",
    "read_meta",
    "resume",
    "select",
    "split_list",
]
