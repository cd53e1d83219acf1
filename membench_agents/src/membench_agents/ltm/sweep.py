"""``membench sweep``: the memory-classification paper's experiment designs, run as ordinary run folders.

A sweep spec (YAML, see ``experiments/sweeps/``) names one environment and a list of designs:

- ``vary_k`` (design (a), §5.2): hold ξ fixed (one ``length``) and vary the agent's context length K over
  ``K: [...]`` (for agents whose config sets an attention window; see :mod:`membench_agents.ltm.plan`);
- ``vary_length`` (design (b), §5.2): hold K fixed and vary the task's length kwarg (T-Maze's
  ``corridor_length``, so ξ = L + 1) over ``lengths: [...]``;
- ``length_generalization`` (design (c), §5.3): train on each of ``train_lengths`` and evaluate every trained
  run on each of ``eval_lengths`` (longer ones: extrapolation), drawn as a heatmap of success over
  (train length, eval length).

Every (agent, length, K) cell is one run folder under ``<sweep>/cells/`` made by the run machinery of
``membench train`` (:mod:`membench_agents.runs`): checkpoints, TensorBoard, ``results.json`` with the
evaluation protocol's mean ± SEM over runs. Design (c) evaluates each seed's final checkpoint on the other
lengths with the same protocol (same episode seeds, deterministic actions, mean ± SEM over runs). The sweep
folder then holds ``sweep_results.{txt,md,json}`` (every cell with its K, Ξ and regime, the generalisation
matrix, and the aggregate metrics across the cells: IQM with stratified-bootstrap intervals and performance
profiles, :mod:`membench_agents.analysis.aggregate`), ``generalization.png`` (the heatmap), ``sweep.png`` (success
against K and against ξ) and ``aggregate.png``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from membench_agents.analysis.report import SWEEP_FILE, SWEEP_RESULTS_JSON, SWEEP_RESULTS_MD
from membench_agents.config.env_facts import env_score
from membench_agents.errors import ConfigError, close_matches
from membench_agents.runs.folder import RunFolderError, folder_name, same_config

if TYPE_CHECKING:
    from membench_envs import TaskSpec

DESIGNS = {
    "vary_k": "(a) fixed ξ, varying K",
    "vary_length": "(b) fixed K, varying ξ",
    "length_generalization": "(c) train on one length, evaluate on others",
}
_TOP_KEYS = {
    "name": "the sweep's name (default: the spec file's stem); the folder is <out>/sweeps/<name>/<time>",
    "description": "free text",
    "title": "plot title",
    "env": "the environment ID (required)",
    "obs_variant": "the observation variant of every cell (default: partial)",
    "length_kwarg": "the env kwarg that sets ξ (default: the family's, e.g. corridor_length for the T-Maze)",
    "seeds": "training runs per cell: a count, a list or a range '0-4' (default: the agent config's)",
    "steps": "training budget per run (default: the agent config's)",
    "episodes": "evaluation episodes per run (default: the protocol's 100)",
    "set": "KEY=VALUE overrides applied to every cell, as `membench train --set`",
    "jobs": "runs trained in parallel (default: min(CPUs, runs))",
    "designs": "the list of designs (required)",
}
_DESIGN_KEYS = {
    "vary_k": {"design", "agent", "agents", "K", "length", "set"},
    "vary_length": {"design", "agent", "agents", "K", "lengths", "set"},
    "length_generalization": {"design", "agent", "agents", "K", "train_lengths", "eval_lengths", "set"},
}
_REQUIRED = {"vary_k": ("K",), "vary_length": ("lengths",), "length_generalization": ("train_lengths", "eval_lengths")}


# ------------------------------------------------------------------------------------------------------
# the spec
# ------------------------------------------------------------------------------------------------------
@dataclass
class Design:
    kind: str
    agents: list[str]
    K: list[int] | None = None
    """vary_k: the K values; the other designs: one K (or None: the agent's own)"""
    lengths: list[int] = field(default_factory=list)
    """vary_k: [length]; vary_length: the lengths; length_generalization: the train lengths"""
    eval_lengths: list[int] = field(default_factory=list)
    set: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return DESIGNS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "agents": self.agents,
            "K": self.K,
            "lengths": self.lengths,
            "eval_lengths": self.eval_lengths,
            "set": self.set,
        }


@dataclass
class SweepSpec:
    name: str
    env: str
    length_kwarg: str
    designs: list[Design]
    obs_variant: str = "partial"
    seeds: Any = None
    steps: int | None = None
    episodes: int | None = None
    set: list[str] = field(default_factory=list)
    jobs: int = 0
    title: str | None = None
    description: str = ""
    source: str = ""


class _Where:
    def __init__(self, source: str):
        self.source = source

    def error(self, where: str, msg: str) -> ConfigError:
        return ConfigError(f"sweep spec {self.source}: {where}{': ' if where else ''}{msg}")


def _int(w: _Where, where: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise w.error(where, f"must be an integer >= {low}, got {value!r}")
    return value


def _ints(w: _Where, where: str, value: Any) -> list[int]:
    if not isinstance(value, list) or not value:
        raise w.error(where, f"must be a non-empty list of integers >= 1, got {value!r}")
    out = [_int(w, f"{where}[{i}]", v) for i, v in enumerate(value)]
    if len(set(out)) != len(out):
        raise w.error(where, f"lists a value twice: {out}")
    return out


def _strings(w: _Where, where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and "=" in v for v in value):
        raise w.error(where, f"must be a list of KEY=VALUE strings (as --set), got {value!r}")
    return list(value)


def _keys(w: _Where, where: str, data: Mapping[str, Any], valid) -> None:
    for k in data:
        if k not in valid:
            raise w.error(where, f"unknown key {k!r}.{close_matches(k, valid)} Valid: {', '.join(sorted(valid))}.")


def parse_spec(data: Any, source: str = "<spec>") -> SweepSpec:
    """Check a sweep spec strictly (one error naming the bad key or value and what is allowed)."""
    from membench_agents.algos.registry import check_agent
    from membench_agents.config.schema import parse_seeds

    w = _Where(source)
    if not isinstance(data, Mapping):
        raise w.error("", f"must be a mapping of {', '.join(_TOP_KEYS)}, got {type(data).__name__}")
    _keys(w, "", data, _TOP_KEYS)
    env, spec = _task(w, data)
    length_kwarg = _length_kwarg(w, data, env, spec)
    variant = data.get("obs_variant", "partial")
    if variant not in spec.variants:
        raise w.error("obs_variant", f"{variant!r} is not a variant of {env}; valid: {', '.join(spec.variants)}")
    seeds = data.get("seeds")
    if seeds is not None:
        try:
            seeds = parse_seeds(seeds)
        except ConfigError as e:
            raise w.error("seeds", str(e).removeprefix("seeds: ")) from None
    steps = _int(w, "steps", data["steps"]) if data.get("steps") is not None else None
    episodes = _int(w, "episodes", data["episodes"]) if data.get("episodes") is not None else None
    jobs = _int(w, "jobs", data["jobs"], low=0) if data.get("jobs") is not None else 0
    sets = _spec_sets(w, data, length_kwarg)
    raw = data.get("designs")
    if not isinstance(raw, list) or not raw:
        raise w.error("designs", f"must be a non-empty list of designs ({', '.join(DESIGNS)}), got {raw!r}")
    designs = [_parse_design(w, i, d, check_agent) for i, d in enumerate(raw)]
    name = data.get("name") or Path(source).stem or "sweep"
    try:
        folder_name(name, "the sweep's name")
    except ConfigError as e:
        raise w.error("name", str(e)) from None
    for key in ("title", "description"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise w.error(key, f"must be a string, got {data[key]!r}")
    return SweepSpec(
        name,
        env,
        length_kwarg,
        designs,
        variant,
        seeds,
        steps,
        episodes,
        sets,
        jobs,
        data.get("title"),
        data.get("description") or "",
        source,
    )


def _task(w: _Where, data: Mapping[str, Any]) -> tuple[str, TaskSpec]:
    """The spec's environment ID and its catalogue entry."""
    from membench_agents.config.env_facts import check_env_id
    from membench_agents.ltm.plan import _spec

    if data.get("env") is None:
        raise w.error("", "missing 'env' (the environment ID, e.g. MIKASA/TMazePassive-v0)")
    try:
        env = check_env_id(data["env"])
        return env, _spec(env)
    except ConfigError as e:
        raise w.error("env", str(e)) from None


def _length_kwarg(w: _Where, data: Mapping[str, Any], env: str, spec: TaskSpec) -> str:
    """The integer kwarg of ``env`` that sets ξ: the spec's ``length_kwarg``, else the task's known one."""
    from membench_agents.ltm.plan import length_rule

    rule = length_rule(env)
    length_kwarg = data.get("length_kwarg", rule.name if rule else None)
    params = [p.name for p in spec.params]
    if length_kwarg is None:
        raise w.error(
            "length_kwarg",
            f"{env} has no known length kwarg; name the integer kwarg that sets ξ (one of {', '.join(params)})",
        )
    if not isinstance(length_kwarg, str) or length_kwarg not in params:
        raise w.error(
            "length_kwarg",
            f"{length_kwarg!r} is not a kwarg of {env}.{close_matches(length_kwarg, params)} "
            f"Valid: {', '.join(params)}.",
        )
    ints = [p.name for p in spec.params if p.kind == "int"]
    if length_kwarg not in ints:
        raise w.error(
            "length_kwarg",
            f"{length_kwarg!r} is not an integer kwarg of {env}, so it cannot set ξ; "
            f"integer kwargs: {', '.join(ints) or 'none'}",
        )
    return length_kwarg


def _spec_sets(w: _Where, data: Mapping[str, Any], length_kwarg: str) -> list[str]:
    """The spec's ``set`` overrides, none of them setting what the designs vary."""
    sets = _strings(w, "set", data["set"]) if data.get("set") is not None else []
    for s in sets:
        if s.split("=", 1)[0].strip() in ("env", "agent", f"env_kwargs.{length_kwarg}"):
            raise w.error("set", f"{s!r} sets what the designs vary; use the spec's env / agents / lengths")
    return sets


def _parse_design(w: _Where, i: int, d: Any, check_agent) -> Design:
    where = f"designs[{i}]"
    if not isinstance(d, Mapping):
        raise w.error(where, f"must be a mapping with a 'design' key ({', '.join(DESIGNS)}), got {d!r}")
    kind = d.get("design")
    if not isinstance(kind, str) or kind not in DESIGNS:
        hint = close_matches(kind, DESIGNS)
        raise w.error(f"{where}.design", f"must be one of {', '.join(DESIGNS)}, got {kind!r}.{hint}")
    where = f"{where} ({kind})"
    _keys(w, where, d, _DESIGN_KEYS[kind])
    for k in _REQUIRED[kind]:
        if d.get(k) is None:
            raise w.error(where, f"missing {k!r}")
    if ("agent" in d) == ("agents" in d):
        raise w.error(where, "give exactly one of 'agent' (a name) or 'agents' (a list of names)")
    agents = [d["agent"]] if "agent" in d else d["agents"]
    if not isinstance(agents, list) or not agents:
        raise w.error(f"{where}.agents", f"must be a non-empty list of agent names, got {agents!r}")
    for a in agents:
        try:
            check_agent(a)
        except ConfigError as e:
            raise w.error(where, str(e)) from None
    if len(set(agents)) != len(agents):
        raise w.error(f"{where}.agents", f"lists an agent twice: {agents}")
    sets = _strings(w, f"{where}.set", d["set"]) if d.get("set") is not None else []
    K: list[int] | None
    if kind == "vary_k":
        K = _ints(w, f"{where}.K", d["K"])
        lengths = [_int(w, f"{where}.length", d["length"])] if d.get("length") is not None else []
        return Design(kind, agents, K, lengths, [], sets)
    K = [_int(w, f"{where}.K", d["K"])] if d.get("K") is not None else None
    if kind == "vary_length":
        return Design(kind, agents, K, _ints(w, f"{where}.lengths", d["lengths"]), [], sets)
    return Design(
        kind,
        agents,
        K,
        _ints(w, f"{where}.train_lengths", d["train_lengths"]),
        _ints(w, f"{where}.eval_lengths", d["eval_lengths"]),
        sets,
    )


def load_spec(path: str | os.PathLike) -> SweepSpec:
    from membench_agents.config.resolve import load_yaml

    return parse_spec(load_yaml(path), str(path))


# ------------------------------------------------------------------------------------------------------
# cells
# ------------------------------------------------------------------------------------------------------
@dataclass
class Cell:
    """One run folder of the sweep: an agent on one length with one K."""

    name: str
    agent: str
    length: int
    K: int | None
    """the K this cell sets in the agent's config (designs (a) and an explicit K); None: the agent's own"""
    designs: list[int]
    cfg: dict[str, Any]

    def meta(self) -> dict[str, Any]:
        return {"name": self.name, "agent": self.agent, "length": self.length, "K": self.K, "designs": self.designs}


def _resolve_cell(
    spec: SweepSpec, design: Design, agent: str, length: int | None, K: int | None, overrides: Mapping[str, Any]
) -> dict[str, Any]:
    from membench_agents.algos.registry import AGENTS
    from membench_agents.config.resolve import resolve
    from membench_agents.ltm.plan import with_context

    sets = list(spec.set) + list(design.set)
    if spec.episodes is not None:
        sets.append(f"eval.episodes={spec.episodes}")
    if length is not None:
        sets.append(f"env_kwargs.{spec.length_kwarg}={length}")
    given = {k: overrides[k] if overrides.get(k) is not None else getattr(spec, k) for k in ("steps", "seeds")}
    common = {
        "steps": given["steps"],
        "seeds": given["seeds"],
        "obs_variant": spec.obs_variant,
        "device": overrides.get("device"),
    }
    cfg = resolve(spec.env, agent, overrides=sets, **common).config
    if K is not None:
        cfg = resolve(spec.env, agent, overrides=sets + with_context(cfg, AGENTS[agent], K), **common).config
    return cfg


def expand(spec: SweepSpec, **overrides: Any) -> list[Cell]:
    """Every cell of the spec, each with its resolved run config (same config in two designs: one cell)."""
    from membench_agents.ltm.plan import _full_kwargs, _spec

    default_length = _full_kwargs(_spec(spec.env), {}).get(spec.length_kwarg)
    cells: dict[str, Cell] = {}
    for i, d in enumerate(spec.designs):
        combos: list[tuple[str, int | None, int | None]]
        if d.kind == "vary_k":
            ks = cast(list[int], d.K)  # vary_k: always a list
            combos = [(a, d.lengths[0] if d.lengths else None, k) for a in d.agents for k in ks]
        else:
            k = d.K[0] if d.K else None
            combos = [(a, L, k) for a in d.agents for L in d.lengths]
        for agent, length, K in combos:
            try:
                cfg = _resolve_cell(spec, d, agent, length, K, overrides)
            except ConfigError as e:
                raise ConfigError(
                    f"sweep spec {spec.source}: designs[{i}] ({d.kind}), agent {agent}"
                    f"{f', length {length}' if length else ''}{f', K {K}' if K else ''}: {e}"
                ) from None
            L = cfg["env_kwargs"].get(spec.length_kwarg, default_length)
            name = f"{agent}{'' if spec.obs_variant == 'partial' else '.' + spec.obs_variant}.L{L}"
            if K is not None:
                name += f".K{K}"
            if name in cells and not same_config(cells[name].cfg, cfg):
                name += f".d{i}"
            if name in cells:
                if i not in cells[name].designs:
                    cells[name].designs.append(i)
            else:
                cells[name] = Cell(name, agent, int(L), K, [i], cfg)
    return list(cells.values())


def cell_plan(spec_env: str, cell_cfg: dict[str, Any]):
    """Algorithm 1 for one cell (None when its regime cannot be computed, with the reason)."""
    from membench_agents.algos.registry import AGENTS
    from membench_agents.ltm.plan import plan_cell

    return plan_cell(
        spec_env,
        AGENTS[cell_cfg["agent"]],
        cell_cfg,
        env_kwargs=cell_cfg["env_kwargs"],
        obs_variant=cell_cfg["obs_variant"],
    )


def plan_table(spec: SweepSpec, cells: list[Cell]) -> tuple[str, list[str]]:
    """The cells with their K, Ξ and regime (before training), and the protocol's warnings (deduplicated)."""
    rows: list[list[str]] = []
    warnings: dict[str, list[str]] = {}
    for c in cells:
        p = cell_plan(spec.env, c.cfg)
        lo, hi = p.xi
        rows.append(
            [
                c.name,
                ",".join("abc"[list(DESIGNS).index(spec.designs[i].kind)] for i in c.designs),
                str(p.context.K),
                p.context.K_eff_text,
                f"{spec.length_kwarg}={c.length}",
                str(lo) if lo == hi else f"[{lo},{hi}]",
                p.regime,
                "yes" if p.valid_ltm else "no",
            ]
        )
        for wmsg in p.warnings:
            warnings.setdefault(wmsg, []).append(c.name)
    head = ["cell", "design", "K", "K_eff", "length", "Ξ", "regime", "Eq 6"]
    text = _format(head, rows)
    notes = [f"{msg} [{', '.join(names)}]" for msg, names in warnings.items()]
    return text, notes


def _format(head: list[str], rows: list[list[str]], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows])


# ------------------------------------------------------------------------------------------------------
# length generalisation: evaluate the trained runs on other lengths
# ------------------------------------------------------------------------------------------------------
def evaluate_on_length(cfg: dict[str, Any], run_dir: Path, length_kwarg: str, length: int) -> dict[str, Any]:
    """Every seed's final checkpoint of ``run_dir`` evaluated with the run's protocol on ``length``: the
    protocol's aggregate (mean ± SEM over runs) and the mean episode length."""
    from membench_agents.algos.trainer import make_trainer
    from membench_agents.runs import checkpoint, stats
    from membench_agents.runs.cell import seed_dir
    from membench_agents.runs.checkpoint import load_checkpoint, load_trainer_state
    from membench_agents.runs.evaluation import evaluate_trainer, preserve_rng
    from membench_agents.runs.loop import _check_payload

    eval_cfg = copy.deepcopy(cfg)
    eval_cfg["env_kwargs"] = {**cfg["env_kwargs"], length_kwarg: length}
    seeds = stats.episode_seeds(cfg)
    per_seed = []
    for s in cfg["seeds"]:
        path = seed_dir(run_dir, s) / checkpoint.CHECKPOINT
        payload = load_checkpoint(path)
        _check_payload(payload, cfg, s, path)
        with preserve_rng():
            trainer = make_trainer(eval_cfg, s)  # the same agent, built for the evaluation length
        try:
            load_trainer_state(trainer, payload["trainer"], path)
            per_seed.append(evaluate_trainer(trainer, eval_cfg, seeds))
        finally:
            trainer.close()
    mean_length = float(np.mean([r["mean_length"] for r in per_seed]))
    return {**stats.aggregate(per_seed, env_score(cfg["env"])), "mean_length": mean_length}


# ------------------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------------------


def new_sweep_dir(out: str | os.PathLike, name: str) -> Path:
    root = Path(out) / "sweeps" / name
    stamp = time.strftime("%Y%m%d-%H%M%S")
    d, k = root / stamp, 1
    while d.exists():
        k += 1
        d = root / f"{stamp}-{k}"
    return d


def read_sweep(sweep_dir: Path) -> dict[str, Any]:
    import yaml

    path = sweep_dir / SWEEP_FILE
    if not path.is_file():
        raise RunFolderError(f"{sweep_dir} is not a membench sweep folder (no {SWEEP_FILE})")
    try:
        meta = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError):
        meta = None
    if not isinstance(meta, dict) or not isinstance(meta.get("cells"), list) or not isinstance(meta.get("spec"), dict):
        raise RunFolderError(f"{path} is not a sweep file (a mapping with 'spec' and 'cells'); restore it")
    try:
        _check_sweep_meta(meta)
    except ConfigError as e:
        raise RunFolderError(f"{path}: {e}; restore it (membench sweep writes it), or start the sweep again") from None
    return meta


def _is_int(value: Any, low: int = 1) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _check_sweep_meta(meta: dict[str, Any]) -> None:
    """What :func:`finish` and :func:`resume_jobs` read from ``sweep.yaml``, checked as strictly as a new sweep's
    values: cell names by the same rule as every folder name (:func:`membench_agents.runs.folder.folder_name`), so a
    name read back cannot reach outside ``cells/``."""
    from membench_agents.algos.registry import AGENTS
    from membench_agents.config.env_facts import check_env_id

    spec = meta["spec"]
    folder_name(spec.get("name"), "spec.name")
    spec["env"] = check_env_id(spec.get("env"))
    for key in ("length_kwarg", "obs_variant"):
        if not isinstance(spec.get(key), str):
            raise ConfigError(f"spec.{key} must be a string, got {spec.get(key)!r}")
    designs = spec.get("designs")
    if not isinstance(designs, list) or not designs:
        raise ConfigError(f"spec.designs must be a non-empty list, got {designs!r}")
    for i, d in enumerate(designs):
        if not isinstance(d, dict) or not isinstance(d.get("kind"), str) or d["kind"] not in DESIGNS:
            raise ConfigError(
                f"spec.designs[{i}] must be a mapping whose kind is one of {', '.join(DESIGNS)}, got {d!r}"
            )
        lengths = d.get("eval_lengths", [])
        if not isinstance(lengths, list) or not all(_is_int(v) for v in lengths):
            raise ConfigError(f"spec.designs[{i}].eval_lengths must be a list of integers >= 1, got {lengths!r}")
    if not meta["cells"]:
        raise ConfigError("cells is empty")
    names = set()
    for j, m in enumerate(meta["cells"]):
        where = f"cells[{j}]"
        if not isinstance(m, dict):
            raise ConfigError(f"{where} must be a mapping (name, agent, length, K, designs), got {m!r}")
        folder_name(m.get("name"), f"{where}.name")
        if m["name"] in names:
            raise ConfigError(f"{where}.name {m['name']!r} is given twice")
        names.add(m["name"])
        if not isinstance(m.get("agent"), str) or m["agent"] not in AGENTS:
            raise ConfigError(f"{where}.agent must be one of {', '.join(AGENTS)}, got {m.get('agent')!r}")
        if not _is_int(m.get("length")):
            raise ConfigError(f"{where}.length must be an integer >= 1, got {m.get('length')!r}")
        if m.get("K") is not None and not _is_int(m["K"]):
            raise ConfigError(f"{where}.K must be an integer >= 1 or null, got {m['K']!r}")
        ds = m.get("designs")
        if not isinstance(ds, list) or not ds or not all(_is_int(i, 0) and i < len(designs) for i in ds):
            raise ConfigError(
                f"{where}.designs must be a non-empty list of indices into spec.designs "
                f"(0..{len(designs) - 1}), got {ds!r}"
            )


def check_cells(cells: list[Cell], spec: SweepSpec | None = None) -> None:
    """What every cell must pass before a sweep writes anything (each one's environment is built once and its
    agent checked against it, as ``membench train`` does), and with ``spec`` the evaluation lengths of design (c)
    (built once each, with the first cell of the design), which the real run reaches only after training. The
    real run and ``--dry-run`` both call this."""
    from membench_agents.algos import trainer

    checks = [(c.name, c.cfg) for c in cells]
    if spec is not None:
        for i, d in enumerate(spec.designs):
            first = next((c for c in cells if i in c.designs), None)
            if first is None:
                continue
            for L in d.eval_lengths:
                cfg = {**first.cfg, "env_kwargs": {**first.cfg["env_kwargs"], spec.length_kwarg: L}}
                checks.append((f"{first.name} evaluated on {spec.length_kwarg}={L}", cfg))
    for name, cfg in checks:
        try:
            trainer.preflight(cfg)
        except ConfigError as e:
            raise ConfigError(f"cell {name}: {e}") from None
        except MemoryError:
            raise ConfigError(
                f"cell {name}: {cfg['env']} with {cfg['env_kwargs']} needs more memory than this "
                "machine has; use smaller kwargs"
            ) from None


def prepare(spec: SweepSpec, cells: list[Cell], sweep_dir: Path) -> list:
    """Write the sweep folder (sweep.yaml, one run folder per cell) and return the training jobs."""
    import yaml

    from membench_agents.runs.cell import prepare_run

    check_cells(cells, spec)
    jobs = []
    for c in cells:
        jobs += prepare_run(c.cfg, sweep_dir / "cells" / c.name)
    jobs = [_relabel(j, c) for j, c in zip(jobs, [c for c in cells for _ in c.cfg["seeds"]], strict=True)]
    meta = {"spec": _spec_dict(spec), "cells": [c.meta() for c in cells]}
    (sweep_dir / SWEEP_FILE).write_text(yaml.safe_dump(meta, sort_keys=False))
    return jobs


def _relabel(job, cell: Cell):
    job.label = f"{cell.name}/s{job.seed}"
    return job


def _spec_dict(spec: SweepSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "env": spec.env,
        "length_kwarg": spec.length_kwarg,
        "obs_variant": spec.obs_variant,
        "title": spec.title,
        "description": spec.description,
        "source": spec.source,
        "designs": [d.to_dict() for d in spec.designs],
    }


def resume_jobs(sweep_dir: Path) -> tuple[dict[str, Any], list[Cell], list]:
    from membench_agents.runs.cell import check_resumable, jobs_for, run_config

    meta = read_sweep(sweep_dir)
    cells, jobs = [], []
    for m in meta["cells"]:
        d = sweep_dir / "cells" / m["name"]
        cfg = run_config(d)
        if cfg["agent"] != m["agent"] or cfg["env"] != meta["spec"]["env"]:
            raise RunFolderError(
                f"{d / 'config.yaml'} trains {cfg['agent']} on {cfg['env']}, but "
                f"{sweep_dir / SWEEP_FILE} lists that cell as {m['agent']} on {meta['spec']['env']}; "
                "restore the sweep folder as membench sweep wrote it"
            )
        check_resumable(cfg, d)
        cell = Cell(m["name"], m["agent"], int(m["length"]), m["K"], list(m["designs"]), cfg)
        cells.append(cell)
        jobs += [_relabel(j, cell) for j in jobs_for(cfg, d, resume=True)]
    return meta, cells, jobs


def finish(meta: dict[str, Any], cells: list[Cell], sweep_dir: Path, progress: bool = True) -> dict[str, Any]:
    """After training: results.json of every cell, design (c)'s evaluations, the tables, plots and aggregate."""
    from membench_agents.analysis import aggregate
    from membench_agents.analysis.report import plot_run
    from membench_agents.runs.cell import finalize_run

    spec = meta["spec"]
    designs = spec["designs"]
    kwarg = spec["length_kwarg"]
    rows = []
    for c in cells:
        d = sweep_dir / "cells" / c.name
        res = finalize_run(d)
        plot_run(d)
        p = cell_plan(spec["env"], c.cfg)
        rows.append(
            {
                **c.meta(),
                "design_kinds": [designs[i]["kind"] for i in c.designs],
                "xi": list(p.xi),
                "K_agent": p.context.K,
                "K_eff": None if math.isinf(p.context.K_eff) else p.context.K_eff,
                "regime": p.regime,
                "valid_ltm": p.valid_ltm,
                "metric": res["metric"],
                "mean": res["mean"],
                "sem": res["sem"],
                "n_runs": res["n_runs"],
                "per_run": res["per_run"],
                "run_dir": f"cells/{c.name}",
            }
        )
    gen = []
    for i, dz in enumerate(designs):
        if dz["kind"] != "length_generalization":
            continue
        for c in [c for c in cells if i in c.designs]:
            for L in dz["eval_lengths"]:
                if progress:
                    print(f"evaluating {c.name} on {kwarg}={L}", file=sys.stderr)
                ev = evaluate_on_length(c.cfg, sweep_dir / "cells" / c.name, kwarg, L)
                p = cell_plan(spec["env"], {**c.cfg, "env_kwargs": {**c.cfg["env_kwargs"], kwarg: L}})
                gen.append(
                    {
                        "design": i,
                        "cell": c.name,
                        "agent": c.agent,
                        "K": c.K,
                        "train_length": c.length,
                        "eval_length": L,
                        "xi": list(p.xi),
                        "regime": p.regime,
                        **{k: ev[k] for k in ("metric", "mean", "sem", "n_runs", "per_run", "mean_length")},
                    }
                )
    out = {"spec": spec, "length_kwarg": kwarg, "cells": rows, "generalization": gen}
    agg = aggregate.aggregate_runs([sweep_dir / "cells" / c.name for c in cells])
    out["aggregate"] = agg.to_dict()
    (sweep_dir / SWEEP_RESULTS_JSON).write_text(json.dumps(out, indent=1))
    text = results_table(out)
    (sweep_dir / "sweep_results.txt").write_text(text + "\n\n" + aggregate.table(agg) + "\n")
    (sweep_dir / SWEEP_RESULTS_MD).write_text(
        results_table(out, markdown=True) + "\n\n" + aggregate.table(agg, markdown=True) + "\n"
    )
    aggregate.plot(agg, sweep_dir / "aggregate.png", title=f"{spec['name']}: aggregate over the sweep's cells")
    if gen:
        plot_generalization(out, sweep_dir / "generalization.png")
    if any(d["kind"] in ("vary_k", "vary_length") for d in designs):
        plot_sweep(out, sweep_dir / "sweep.png")
    return out


def _cell_text(r: dict[str, Any]) -> str:
    from membench_agents.analysis.report import mean_text

    return mean_text(r["mean"], r["sem"], len(r["per_run"]))


def results_table(out: dict[str, Any], markdown: bool = False) -> str:
    """The cells (K, Ξ, regime, mean ± SEM over runs) and, for design (c), the (train, eval) length matrix."""
    kwarg = out["length_kwarg"]
    head = ["design", "agent", "K", "K_eff", kwarg, "Ξ", "regime", "metric", "mean ± SEM", "runs", "per run"]
    rows = []
    for r in out["cells"]:
        lo, hi = r["xi"]
        rows.append(
            [
                ",".join("abc"[list(DESIGNS).index(k)] for k in r["design_kinds"]),
                r["agent"],
                str(r["K_agent"]),
                "unbounded" if r["K_eff"] is None else str(r["K_eff"]),
                str(r["length"]),
                str(lo) if lo == hi else f"[{lo},{hi}]",
                r["regime"],
                r["metric"],
                _cell_text(r),
                str(r["n_runs"]),
                " ".join(f"{v:.2f}" for v in r["per_run"]),
            ]
        )
    parts = [_format(head, rows, markdown)]
    if out["generalization"]:
        head = [
            "agent",
            f"train {kwarg}",
            f"eval {kwarg}",
            "Ξ (eval)",
            "regime (eval)",
            "metric",
            "mean ± SEM",
            "per run",
        ]
        rows = [
            [
                g["agent"] + (f" K={g['K']}" if g["K"] else ""),
                str(g["train_length"]),
                str(g["eval_length"]),
                str(g["xi"][0]) if g["xi"][0] == g["xi"][1] else f"[{g['xi'][0]},{g['xi'][1]}]",
                g["regime"],
                g["metric"],
                _cell_text(g),
                " ".join(f"{v:.2f}" for v in g["per_run"]),
            ]
            for g in out["generalization"]
        ]
        parts += [
            "",
            "length generalisation (design (c)): every trained run evaluated on each eval length",
            _format(head, rows, markdown),
        ]
    lines = [
        "",
        "design: a = fixed ξ, varying K; b = fixed K, varying ξ; c = train on one length, evaluate on others. "
        "mean ± SEM over training runs, each evaluated on the protocol's fixed episode seeds.",
    ]
    return "\n".join(parts + lines)


def plot_generalization(out: dict[str, Any], path: str | os.PathLike) -> Path:
    """Heatmap of the metric over (train length, eval length), one panel per agent (and K)."""
    path = Path(path)
    generalization_figure(out).savefig(path, dpi=110)
    return path


def generalization_figure(out: dict[str, Any]):
    """The figure of :func:`plot_generalization`. Every panel shares one colour scale (and the colour bar): [0, 1]
    for a success rate, the range of all panels' values for a return."""
    from matplotlib.figure import Figure

    kwarg = out["length_kwarg"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for g in out["generalization"]:
        groups.setdefault(g["agent"] + (f" K={g['K']}" if g["K"] else ""), []).append(g)
    n = len(groups)
    fig = Figure(figsize=(max(6.5, 4.2 * n + 1), 4.2), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, n))
    metric = {g["metric"] for g in out["generalization"]}
    success = metric == {"success_rate"}
    values = [g["mean"] for g in out["generalization"]]
    lo, hi = (0.0, 1.0) if success else (min(values), max(values))
    if hi <= lo:  # one value everywhere
        lo, hi = lo - 0.5, hi + 0.5
    image = None
    for ax, (name, rows) in zip(axes, groups.items(), strict=True):
        trains = sorted({r["train_length"] for r in rows})
        evals = sorted({r["eval_length"] for r in rows})
        grid = np.full((len(trains), len(evals)), np.nan)
        errs = np.zeros_like(grid)
        for r in rows:
            i, j = trains.index(r["train_length"]), evals.index(r["eval_length"])
            grid[i, j], errs[i, j] = r["mean"], r["sem"]
        image = ax.imshow(grid, cmap="viridis", origin="lower", aspect="auto", vmin=lo, vmax=hi)
        for i, tl in enumerate(trains):
            for j, el in enumerate(evals):
                if np.isnan(grid[i, j]):
                    continue
                bright = (grid[i, j] - lo) / (hi - lo) > 0.6  # viridis is light there: black text
                ax.text(
                    j,
                    i,
                    f"{grid[i, j]:.2f}\n±{errs[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black" if bright else "white",
                    fontweight="bold" if tl == el else "normal",
                )
        ax.set_xticks(range(len(evals)), [str(e) for e in evals])
        ax.set_yticks(range(len(trains)), [str(t) for t in trains])
        ax.set(xlabel=f"eval {kwarg}", ylabel=f"train {kwarg}", title=name)
    if image is not None:
        fig.colorbar(image, ax=list(axes), label="success rate" if success else "return", shrink=0.9)
    fig.suptitle(
        f"{out['spec']['env']}: train on one length, evaluate on others\n(mean ± SEM over runs; bold: "
        "the training length; right of it: extrapolation)",
        fontsize=10,
    )
    return fig


def plot_sweep(out: dict[str, Any], path: str | os.PathLike) -> Path:
    """Designs (a) and (b): the metric against K (fixed ξ) and against ξ (fixed K), mean ± SEM over runs."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    kinds = [k for k in ("vary_k", "vary_length") if any(k in r["design_kinds"] for r in out["cells"])]
    fig = Figure(figsize=(6 * len(kinds), 4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(kinds)))
    for ax, kind in zip(axes, kinds, strict=True):
        rows = [r for r in out["cells"] if kind in r["design_kinds"]]
        agents = list(dict.fromkeys(r["agent"] for r in rows))
        for i, a in enumerate(agents):
            mine = [r for r in rows if r["agent"] == a]
            if kind == "vary_k":
                mine.sort(key=lambda r: r["K_agent"])
                x = [r["K_agent"] for r in mine]
            else:
                mine.sort(key=lambda r: r["xi"][1])
                x = [r["xi"][1] for r in mine]
                if mine[0]["K_eff"] is not None and mine[0]["K_agent"] > 1:
                    ax.axvline(mine[0]["K_agent"], color=f"C{i}", ls=":", lw=1)
            ax.errorbar(
                x,
                [r["mean"] for r in mine],
                yerr=[r["sem"] for r in mine],
                color=f"C{i}",
                marker="o",
                capsize=4,
                label=a,
            )
        if kind == "vary_k":
            for xi in sorted({r["xi"][0] for r in rows}):
                ax.axvline(xi - 0.5, color="gray", ls="--", lw=1, label=f"K = ξ ({xi}): LTM-only left of it")
            ax.set(xlabel="context length K", title="(a) fixed ξ, varying K")
        else:
            ax.set(xlabel="correlation horizon ξ", title="(b) fixed K, varying ξ (dotted: the agent's K)")
        success = {r["metric"] for r in rows} == {"success_rate"}
        ax.set(ylabel="success rate" if success else "return")
        if success:
            ax.set_ylim(-0.02, 1.05)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    path = Path(path)
    fig.savefig(path, dpi=110)
    return path


__all__ = [
    "DESIGNS",
    "Cell",
    "Design",
    "SweepSpec",
    "cell_plan",
    "check_cells",
    "evaluate_on_length",
    "expand",
    "finish",
    "generalization_figure",
    "load_spec",
    "new_sweep_dir",
    "parse_spec",
    "plan_table",
    "plot_generalization",
    "plot_sweep",
    "prepare",
    "read_sweep",
    "results_table",
    "resume_jobs",
]
