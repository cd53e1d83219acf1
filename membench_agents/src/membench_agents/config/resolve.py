"""Resolving a run config: one rule for ``membench train``, ``bench``, ``sweep`` and the Python API.

The layers, later wins (:func:`resolve`; the provenance line of a run names them):

1. the built-in defaults (:data:`BUILTIN`, the defaults of :class:`~membench_agents.config.schema.RunConfig`:
   evaluation protocol, seeds, checkpointing);
2. the agent defaults, one file per algorithm kind shipped with the package (``config/defaults/<kind>.yaml``:
   ``ppo``, ``sac``, ``dtqn``, ``sb3``): its ``base`` section, then the agent's own delta (``agent.<name>``), then
   the section of the environment's observation type (``obs_type: {vector|image|dict: ...}``), of its action
   type (``action_type: {discrete|multi-discrete|continuous: ...}``) and of its catalogue suites
   (``suite.STORI``), so an agent runs on any ID;
3. the tuned cell config shipped with the package, ``config/cells/<env-id>/<agent>[.<variant>].yaml`` (the
   env ID's ``/`` is a folder, e.g. ``config/cells/MIKASA/TMazePassiveDense-v0/ppo-lstm.yaml``; a cell for
   another observation variant is ``<agent>.<variant>.yaml``; without one, the agent's cell on the ID applies,
   with the variant set), where one exists; ``--config FILE`` (a cell config of the user's) takes its place;
4. overrides: the ``--set key.sub=value`` items (a bench spec's ``set`` lists come here too), then the named
   options ``--steps``, ``--seeds``, ``--obs-variant``, ``--device``, which win over a ``--set`` of the same key.

Because the defaults and the tuned cells are package data, an installed ``membench-agents`` resolves exactly the
config a checkout does, from any folder. Every layer is checked on its own (unknown keys, value types: the error
names the file or the ``--set`` item), then the merged config is loaded strictly into a ``RunConfig`` (missing
values, ranges, the observation variant against the catalogue, the agent's section). YAML is read with a safe
loader that builds plain data only, with YAML 1.2 scalars: booleans are ``true``/``false`` (``yes``, ``no``,
``on``, ``off`` stay strings), ``1e-3`` is a number, and a key given twice is an error.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from membench_agents.algos.registry import AGENTS, AgentInfo, check_agent
from membench_agents.config.env_facts import (
    check_env_id,
    env_suites,
    env_types,
    known_suites,
)
from membench_agents.config.schema import RunConfig, builtin_defaults, check_layer, parse_seeds
from membench_agents.errors import ConfigError
from membench_agents.errors import close_matches as _close

__all__ = [
    "BUILTIN",
    "CONFIG_DATA",
    "REQUIRED",
    "Resolved",
    "agent_defaults",
    "cell_path",
    "dump",
    "list_cells",
    "load_yaml",
    "merge",
    "parse_override",
    "resolve",
    "resolve_typed",
    "seed_list_text",
    "shown",
    "validate",
]

#: Built-in defaults (the evaluation protocol of the seed papers: 3 runs x 100 fixed episode seeds 0..99, mean ± SEM).
BUILTIN: dict[str, Any] = builtin_defaults()
REQUIRED = ("env", "agent", "total_steps", "seeds")
_OBS_TYPES = ("vector", "image", "dict")
_ACTION_TYPES = ("discrete", "multi-discrete", "continuous")


# ------------------------------------------------------------------------------------------------------
# the shipped defaults and cells
# ------------------------------------------------------------------------------------------------------
#: The package data: ``defaults/<kind>.yaml``, ``cells/<env-id>/<agent>[.<variant>].yaml``, ``ladder.yaml``.
CONFIG_DATA = Path(__file__).resolve().parent


def cell_path(env_id: str, agent: str, obs_variant: str | None = None, root: Path = CONFIG_DATA) -> Path:
    """Where the tuned cell config of (env, agent[, variant]) lives: ``cells/<env-id>/<agent>[.<variant>].yaml``."""
    stem = agent if obs_variant in (None, "partial") else f"{agent}.{obs_variant}"
    return root / "cells" / Path(*env_id.split("/")) / f"{stem}.yaml"


def list_cells(root: Path = CONFIG_DATA) -> list[tuple[str, str, Path]]:
    """Every tuned cell config as (env_id, agent[.variant], path)."""
    cells = root / "cells"
    out = []
    for p in sorted(cells.rglob("*.yaml")):
        rel = p.relative_to(cells)
        out.append(("/".join(rel.parts[:-1]), p.stem, p))
    return out


def shown(path: Path, root: Path = CONFIG_DATA) -> str:
    """A shipped file as the provenance line shows it (``membench_agents/config/cells/...``)."""
    try:
        return f"membench_agents/config/{path.relative_to(root).as_posix()}"
    except ValueError:
        return str(path)


# ------------------------------------------------------------------------------------------------------
# reading YAML
# ------------------------------------------------------------------------------------------------------
_BOOL, _INT, _FLOAT = (f"tag:yaml.org,2002:{t}" for t in ("bool", "int", "float"))


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader (plain data only: no python/* tags) with YAML 1.2 booleans and numbers and no
    duplicate keys."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key_node.value!r} is given twice", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL, _INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(_INT, re.compile(r"^(?:[-+]?(?:0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+)$"), list("-+0123456789"))
_Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


def _yaml_error(e: yaml.YAMLError) -> str:
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    mark = getattr(e, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    if "constructor for the tag" in problem:
        problem += "; membench reads plain YAML data only"
    return f"{problem}{where}"


def load_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """A YAML file holding a mapping (plain data only); an empty, invalid or non-mapping file is one error."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} {'is a folder' if path.is_dir() else 'does not exist'}")
    try:
        data = yaml.load(path.read_text(), Loader=_Loader)  # _Loader is a SafeLoader
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {_yaml_error(e)}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {str(path)!r} is not a text file") from None
    if data is None:
        raise ConfigError(f"config file {str(path)!r} is empty: a config file holds a mapping of keys")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping of keys, got {type(data).__name__}")
    return data


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: mappings merge key by key, anything else is replaced."""
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def parse_override(item: str) -> tuple[list[str], Any]:
    """``a.b=value`` -> (["a", "b"], the value read as YAML: ``3e-4`` a number, ``true`` a bool, ``abc`` a string)."""
    if "=" not in item:
        raise ConfigError(f"--set expects key=value (e.g. ppo.learning_rate=3e-4), got {item!r}")
    key, raw = item.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set: empty key in {item!r}")
    try:
        value = yaml.load(raw, Loader=_Loader)  # _Loader is a SafeLoader
    except yaml.YAMLError:
        value = raw
    return parts, value


def _nested(keys: list[str], value: Any) -> dict[str, Any]:
    out: Any = value
    for k in reversed(keys):
        out = {k: out}
    return out


# ------------------------------------------------------------------------------------------------------
# validation and resolution
# ------------------------------------------------------------------------------------------------------
def validate(cfg: Mapping[str, Any], source: str = "config") -> dict[str, Any]:
    """Load ``cfg`` strictly (:meth:`RunConfig.from_dict`) and return it as a plain dict (a new one, with every
    default filled in): ``cfg["env"]``, ``cfg["ppo"]``, ..."""
    return RunConfig.from_dict(cfg, source).to_dict()


def agent_defaults(
    agent: str, obs_type: str, action_type: str, suites: tuple[str, ...] = (), root: Path = CONFIG_DATA
) -> tuple[dict[str, Any], Path | None]:
    """The agent's defaults for an ID of these types and suites, and the file they come from (None: no file):
    ``defaults/<kind>.yaml``'s ``base``, then ``agent.<agent>``, then ``obs_type.<obs_type>``, then
    ``action_type.<action_type>``, then ``suite.<suite>`` of each catalogue suite of the ID."""
    path = root / "defaults" / f"{AGENTS[agent].kind}.yaml"
    if not path.is_file():
        return {}, None
    data = load_yaml(path)
    for section, valid in (
        ("", ("base", "agent", "obs_type", "action_type", "suite")),
        ("obs_type", _OBS_TYPES),
        ("action_type", _ACTION_TYPES),
        ("suite", known_suites()),
        ("agent", [a for a, info in AGENTS.items() if info.kind == AGENTS[agent].kind]),
    ):
        keys = data if not section else (data.get(section) or {})
        if not isinstance(keys, Mapping):
            raise ConfigError(f"{path}: '{section}' must be a mapping of {', '.join(valid)}, got {keys!r}")
        for k in keys:
            if k not in valid:
                name = f"'{section}.{k}'" if section else f"section {k!r}"
                raise ConfigError(f"{path}: unknown {name}.{_close(k, valid)} Valid: {', '.join(valid)}.")
    out = dict(data.get("base") or {})
    out = merge(out, (data.get("agent") or {}).get(agent) or {})
    out = merge(out, (data.get("obs_type") or {}).get(obs_type) or {})
    out = merge(out, (data.get("action_type") or {}).get(action_type) or {})
    for suite in suites:
        out = merge(out, (data.get("suite") or {}).get(suite) or {})
    return out, path


@dataclass
class Resolved:
    config: dict[str, Any]
    """the validated plain dict (what the trainers read and ``config.yaml`` records)"""
    sources: list[str]
    """the layers, first to last: builtin, the agent defaults file, the cell or --config file, --set items"""
    run_config: RunConfig
    """the typed config the dict was produced from"""

    @property
    def agent(self) -> AgentInfo:
        return AGENTS[self.config["agent"]]


def resolve(
    env: str | None = None,
    agent: str | None = None,
    *,
    config_file: str | os.PathLike | None = None,
    steps: int | None = None,
    seeds: Any = None,
    obs_variant: str | None = None,
    overrides: Iterable[str] = (),
    device: str | None = None,
    root: str | os.PathLike = CONFIG_DATA,
) -> Resolved:
    """Resolve the full config of one cell (see the module docstring for the layers). ``root``: where the
    defaults and cells are read (the package's own; tests give another)."""
    root = Path(root)
    sources = ["builtin"]
    explicit: dict[str, Any] = {}
    if config_file is not None:
        explicit = load_yaml(config_file)
        sources.append(str(config_file))
    info = check_agent(agent or explicit.get("agent"))
    env = check_env_id(env or explicit.get("env"))
    if config_file is not None:
        check_layer(explicit, info, str(config_file))
    overrides = list(overrides)
    layers = [(item, _nested(*parse_override(item))) for item in overrides]
    set_variant = next((layer["obs_variant"] for _, layer in reversed(layers) if "obs_variant" in layer), None)
    variant = obs_variant or set_variant or explicit.get("obs_variant") or "partial"
    if not isinstance(variant, str):
        raise ConfigError(f"obs_variant must be a string, got {variant!r}")
    if config_file is None:  # the variant's own cell, else the agent's cell on the ID (with the variant set)
        for v in ([variant] if variant != "partial" else []) + ["partial"]:
            p = cell_path(env, info.name, v, root)
            if p.is_file():
                explicit = load_yaml(p)
                check_layer(explicit, info, str(p))
                sources.append(shown(p, root))
                break
    obs, act = env_types(env, explicit.get("env_kwargs") or {})
    defaults, path = agent_defaults(info.name, obs, act, env_suites(env), root)
    if path is not None:
        check_layer(defaults, info, str(path))
        sources.insert(1, shown(path, root))
    cfg = merge(BUILTIN, defaults)
    cfg = merge(cfg, explicit)
    cfg["env"], cfg["agent"] = env, info.name
    for item, layer in layers:
        check_layer(layer, info, f"--set {item}")
        cfg = merge(cfg, layer)
    # the named arguments win over --set (a bench spec's shared overrides must not undo --steps)
    if obs_variant is not None:
        cfg["obs_variant"] = obs_variant
    if steps is not None:
        cfg["total_steps"] = steps
    if seeds is not None:
        cfg["seeds"] = parse_seeds(seeds)
    if device is not None:
        cfg["device"] = device
    if overrides:
        sources.append("--set " + " ".join(overrides))
    # an error names every layer, the named arguments too (the sources are the files and --set values only)
    named = (("obs_variant", obs_variant), ("total_steps", steps), ("seeds", seeds), ("device", device))
    given = [k for k, v in named if v is not None]
    label = " + ".join(s for s in sources if s != "builtin") or "config"
    typed = RunConfig.from_dict(cfg, source=label + (f" + the arguments ({', '.join(given)})" if given else ""))
    return Resolved(typed.to_dict(), sources, typed)


def resolve_typed(*args: Any, **kwargs: Any) -> RunConfig:
    """:func:`resolve`, returning the typed :class:`RunConfig`."""
    return resolve(*args, **kwargs).run_config


def dump(cfg: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(cfg), sort_keys=False, default_flow_style=None)


def seed_list_text(seeds: list[int]) -> str:
    return ",".join(str(s) for s in seeds)
