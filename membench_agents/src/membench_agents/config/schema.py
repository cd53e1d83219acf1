"""The typed run configuration: every key a config may hold, its type and its allowed values.

A run config is a :class:`RunConfig`. Its sections are :class:`EvalConfig`, :class:`CheckpointConfig` and the
hyperparameter section of the agent's kind (see :mod:`membench_agents.algos.registry`): for a membench algorithm
(``ppo``, ...) the fields of its config dataclass (``registry.ALGORITHMS``; for PPO
:class:`membench_agents.algos.ppo.PPOConfig`), read from the dataclass at run time, less those the run sets
(``core``, ``seed``, ``total_steps``, ``device``); ``sb3`` for the stable-baselines3 agents (:class:`SB3Config`).

:meth:`RunConfig.from_dict` loads a plain mapping strictly; each problem is one :class:`ConfigError` that
names the key:

* an unknown key, with the nearest valid ones;
* a value of the wrong type, with the value and the expected type. Integral numbers (``1e6``) are accepted
  where an integer is expected and integers where a number is; nothing else is converted (``"3"`` is not an
  integer, ``"yes"`` is not a boolean);
* a value out of range: a budget below 1, an observation variant the environment does not have, a PPO value
  :meth:`PPOConfig.validate` rejects, ...;
* a section the agent does not read (``ppo.*`` keys for an sb3 agent, ``sb3.*`` keys for a PPO agent).

:meth:`RunConfig.to_dict` gives the plain dict the trainers read and ``config.yaml`` records, with every
hyperparameter of the agent's algorithm spelled out.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from membench_agents.algos.registry import AGENTS, ALGORITHMS, AgentInfo, check_agent
from membench_agents.config.env_facts import check_env_id, obs_variants
from membench_agents.errors import ConfigError, close_matches

#: Fields of an algorithm's config dataclass that come from the run, not from its config section.
SET_BY_RUN = ("core", "seed", "total_steps", "device")
PPO_SET_BY_RUN = SET_BY_RUN  # the name before other algorithms existed
#: stable-baselines3 constructor arguments membench sets itself (they may not appear in the ``sb3:`` section).
SB3_SET_BY_RUN = ("env", "seed", "device", "verbose", "tensorboard_log", "_init_setup_model")
#: Seeds seed numpy and gymnasium, which take 0 <= seed < 2**32.
MAX_SEED = 2**32 - 1
#: The most training runs (seeds) one cell may have, and the most evaluation episodes per run: bounds that keep a
#: typo (``seeds: 1000000000``) from allocating the list before anything says no.
MAX_SEEDS = 10_000
MAX_EPISODES = 1_000_000

#: One line per top-level key (used in error messages and the docs).
KEYS_DOC: dict[str, str] = {
    "env": "the environment ID (e.g. MIKASA/TMazePassive-v0)",
    "agent": f"the agent name (one of {', '.join(AGENTS)})",
    "obs_variant": "the observation variant, one of the ID's catalogue variants (partial, oracle, full; robots: rgb)",
    "env_kwargs": "keyword arguments for gymnasium.make (e.g. {corridor_length: 20})",
    "total_steps": "the training budget in environment steps per run",
    "seeds": "the training seeds: one independent run per seed",
    "device": "cpu, cuda, cuda:N or auto",
    "description": "free text",
    "eval": "evaluation protocol: episodes, seed_start, deterministic, num_envs, every_steps",
    "checkpoint": "checkpointing: every_iterations, every_seconds",
    **{kind: algo.description for kind, algo in ALGORITHMS.items()},
    "sb3": "stable-baselines3 settings: n_envs, policy, policy_kwargs and constructor keyword arguments",
}


def sections() -> tuple[str, ...]:
    """The hyperparameter sections: one per membench algorithm (``registry.ALGORITHMS``), and sb3."""
    return (*ALGORITHMS, "sb3")


_HOW_TO_SET = {
    "env": "--env ID",
    "agent": "--agent NAME",
    "total_steps": "--steps N (make bench ... STEPS=N)",
    "seeds": "--seeds 3",
}


# ------------------------------------------------------------------------------------------------------
# typed values
# ------------------------------------------------------------------------------------------------------
_FAIL = object()
_NAMES = {bool: "a boolean (true or false)", int: "an integer", float: "a number", str: "a string"}


def _is_union(hint) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def _describe(hint) -> str:
    """The expected type in words: ``an integer or null``."""
    if _is_union(hint):
        args = get_args(hint)
        words = " or ".join(_describe(a) for a in args if a is not type(None))
        return f"{words} or null" if type(None) in args else words
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(hint))
    if get_origin(hint) in (dict, Mapping) or hint in (dict, Mapping):
        return "a mapping"
    if get_origin(hint) in (list, tuple) or hint in (list, tuple):
        return "a list"
    return _NAMES.get(hint, getattr(hint, "__name__", str(hint)))


def _got(value: Any) -> str:
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        dict: "a mapping",
        list: "a list",
    }.get(type(value), type(value).__name__)
    return f"{value!r} ({kind})"


def _convert_union(value: Any, hint) -> Any:
    """``value`` as the first member of the union it converts to (null only where the union allows it)."""
    if value is None:
        return None if type(None) in get_args(hint) else _FAIL
    for arg in get_args(hint):
        out = _FAIL if arg is type(None) else _convert(value, arg)
        if out is not _FAIL:
            return out
    return _FAIL


def _convert_int(value: Any) -> Any:
    """An integer; a float only where it is whole (``1e6``); never a boolean."""
    if isinstance(value, bool):
        return _FAIL
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else _FAIL


def _convert_float(value: Any) -> Any:
    """A number (an integer becomes a float); never a boolean or NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return _FAIL
    return float(value)


_SCALAR_CONVERSIONS: dict[Any, Callable[[Any], Any]] = {
    bool: lambda value: value if isinstance(value, bool) else _FAIL,
    int: _convert_int,
    float: _convert_float,
    str: lambda value: value if isinstance(value, str) else _FAIL,
}


def _convert_sequence(value: Any, hint) -> Any:
    """A list or tuple of ``hint``'s item type, as the container ``hint`` names."""
    if not isinstance(value, (list, tuple)):
        return _FAIL
    args = [a for a in get_args(hint) if a is not Ellipsis]
    items = [_convert(v, args[0]) if args else v for v in value]
    if any(i is _FAIL for i in items):
        return _FAIL
    return tuple(items) if (get_origin(hint) or hint) is tuple else items


def _convert(value: Any, hint) -> Any:
    """``value`` as ``hint`` (lossless conversions only), or ``_FAIL``."""
    origin = get_origin(hint)
    if hint is Any:
        return value
    if _is_union(hint):
        return _convert_union(value, hint)
    if origin is Literal:
        return value if any(value == a and type(value) is type(a) for a in get_args(hint)) else _FAIL
    if hint in _SCALAR_CONVERSIONS:
        return _SCALAR_CONVERSIONS[hint](value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return dict(value) if isinstance(value, Mapping) and all(isinstance(k, str) for k in value) else _FAIL
    if origin in (list, tuple) or hint in (list, tuple):
        return _convert_sequence(value, hint)
    if isinstance(hint, type):
        return value if isinstance(value, hint) else _FAIL
    return value  # a type this loader does not know: left to the class's own validation


def _typed(value: Any, hint, key: str, source: str, default: Any = dataclasses.MISSING) -> Any:
    """``value`` converted to ``hint``, or one error naming the key, the value and the expected type."""
    if value is None and _convert(None, hint) is _FAIL:
        if default is dataclasses.MISSING:
            raise ConfigError(f"{source}: missing config value {key!r} (it is null): set it ({_describe(hint)})")
        raise ConfigError(
            f"{source}: missing config value {key!r} (it is null); remove the key (default {default!r}) "
            f"or set a value ({_describe(hint)})"
        )
    out = _convert(value, hint)
    if out is _FAIL:
        raise ConfigError(f"{source}: {key} must be {_describe(hint)}, got {_got(value)}")
    return out


def _mapping(value: Any, key: str, source: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: {key!r} must be a mapping ({KEYS_DOC.get(key, key)}), got {_got(value)}")
    return value


def _unknown(key: Any, valid: list[str], prefix: str, source: str) -> ConfigError:
    return ConfigError(f"{source}: unknown key '{prefix}{key}'.{close_matches(key, valid)} Valid: {', '.join(valid)}.")


def _build(cls, kwargs: dict[str, Any], source: str):
    """``cls(**kwargs)``; a ValueError of its validation becomes a ConfigError naming the source."""
    try:
        return cls(**kwargs)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def _section_values(cls, data: Any, name: str, source: str) -> dict[str, Any]:
    """The typed keys of a dataclass section (``eval``, ``checkpoint``): unknown keys and types checked."""
    data = _mapping(data, name, source)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = get_type_hints(cls)
    out = {}
    for k, v in data.items():
        if k not in fields:
            raise _unknown(k, list(fields), f"{name}.", source)
        out[k] = _typed(v, hints[k], f"{name}.{k}", source, fields[k].default)
    return out


def _plain(value: Any) -> Any:
    """A value as plain YAML data (tuples become lists, mappings dicts)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# ------------------------------------------------------------------------------------------------------
# seeds
# ------------------------------------------------------------------------------------------------------
_SEED_FORMS = "a count of runs (3 = seeds 0,1,2), a list (0,1,2 or [0, 1, 2]) or a range (0-4)"


def parse_seeds(value: Any) -> list[int]:
    """Seeds from a count ``n`` (seeds 0..n-1), a list, or a string: ``"3"`` (a count), ``"0,5,7"``, ``"2-4"``.

    A single seed is a one-element list: ``[7]``, ``"7,"`` or ``"7-7"`` (``"7"`` alone is a count)."""
    if isinstance(value, bool):
        raise ConfigError(f"seeds must be {_SEED_FORMS}; got {value!r}")
    if isinstance(value, int):
        if value < 1:
            single = " (the single seed 0 is written 0-0)" if value == 0 else ""
            raise ConfigError(f"seeds: {value} is read as a count of runs, which must be >= 1{single}")
        _check_run_count(value)
        return list(range(value))
    if isinstance(value, str):
        s = value.strip()
        try:
            if "," in s:
                return parse_seeds([int(x) for x in s.split(",") if x.strip()])
            if "-" in s[1:]:
                lo, hi = (int(x) for x in s.split("-", 1))
                if hi < lo:
                    raise ConfigError(f"seeds: the range {value!r} is empty (write low-high with low <= high)")
                _check_run_count(hi - lo + 1)
                return parse_seeds(list(range(lo, hi + 1)))
            count = int(s)
        except ConfigError:
            raise
        except ValueError:
            raise ConfigError(f"seeds: cannot read {value!r} as {_SEED_FORMS}") from None
        return parse_seeds(count)
    if isinstance(value, (list, tuple)):
        if not value or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ConfigError(f"seeds must be a non-empty list of integers, got {value!r}")
        _check_run_count(len(value))
        if len(set(value)) != len(value):
            raise ConfigError(f"seeds must be distinct, got {list(value)!r}")
        bad = [v for v in value if not 0 <= v <= MAX_SEED]
        if bad:
            raise ConfigError(f"seeds must be in 0..{MAX_SEED} (numpy and gymnasium seeds), got {bad[0]}")
        return list(value)
    raise ConfigError(f"seeds must be {_SEED_FORMS}; got {_got(value)}")


def _check_run_count(n: int) -> None:
    if n > MAX_SEEDS:
        raise ConfigError(f"seeds: at most {MAX_SEEDS} training runs per cell, got {n}")


# ------------------------------------------------------------------------------------------------------
# sections
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalConfig:
    """The evaluation protocol (the seed papers': 100 fixed episode seeds 0..99, deterministic actions)."""

    episodes: int = 100
    """evaluation episodes per training run (1 .. MAX_EPISODES)"""
    seed_start: int = 0
    """episode seeds seed_start .. seed_start + episodes - 1 (all within 0 .. MAX_SEED)"""
    deterministic: bool = True
    """act with the deterministic policy"""
    num_envs: int = 100
    """evaluation episodes run in parallel"""
    every_steps: int = 0
    """also evaluate during training every N environment steps (0: only at the end)"""

    def __post_init__(self) -> None:
        for k in ("episodes", "num_envs"):
            if getattr(self, k) < 1:
                raise ConfigError(f"eval.{k} must be a positive integer, got {getattr(self, k)!r}")
        for k in ("seed_start", "every_steps"):
            if getattr(self, k) < 0:
                raise ConfigError(f"eval.{k} must be a non-negative integer, got {getattr(self, k)!r}")
        if self.episodes > MAX_EPISODES:
            raise ConfigError(f"eval.episodes must be at most {MAX_EPISODES}, got {self.episodes}")
        if self.seed_start + self.episodes - 1 > MAX_SEED:
            raise ConfigError(
                f"eval.seed_start must leave the episode seeds seed_start .. seed_start + episodes - 1 "
                f"within 0..{MAX_SEED} (numpy and gymnasium seeds), got seed_start {self.seed_start} "
                f"with {self.episodes} episodes"
            )


@dataclass(frozen=True)
class CheckpointConfig:
    """When a run saves its resumable state: every N iterations or after this much wall time (0: never by it)."""

    every_iterations: int = 25
    every_seconds: float = 120.0

    def __post_init__(self) -> None:
        for k in ("every_iterations", "every_seconds"):
            if getattr(self, k) < 0:
                raise ConfigError(f"checkpoint.{k} must be a non-negative number, got {getattr(self, k)!r}")


@dataclass(frozen=True)
class SB3Config:
    """Settings of the stable-baselines3 agents: ``n_envs`` (a DummyVecEnv of ``gym.make`` envs), ``policy``
    (default: chosen from the observation space) and keyword arguments of the algorithm's constructor."""

    n_envs: int = 8
    policy: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.n_envs < 1:
            raise ConfigError(f"sb3.n_envs must be a positive integer, got {self.n_envs!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n_envs": self.n_envs}
        if self.policy is not None:
            out["policy"] = self.policy
        return {**out, **_plain(self.kwargs)}


def _sb3_values(data: Any, info: AgentInfo, source: str) -> dict[str, Any]:
    """The typed ``sb3:`` section: n_envs, policy and the algorithm's constructor arguments (keys checked against
    its signature and, where its default is a number, bool or string, typed like the default)."""
    data = dict(_mapping(data, "sb3", source))
    own = {"n_envs": int, "policy": str | None}
    out = {k: _typed(data.pop(k), h, f"sb3.{k}", source, getattr(SB3Config, k)) for k, h in own.items() if k in data}
    params = _sb3_parameters(info)
    kwargs = {}
    for k, v in data.items():
        if k in SB3_SET_BY_RUN:
            raise ConfigError(f"{source}: 'sb3.{k}' is set by the run (seeds, device); remove it")
        if params is not None and k not in params:  # without SB3 the trainer says so when it starts
            raise _unknown(k, [*own, *params], "sb3.", source)
        default = None if params is None else params[k]
        kwargs[k] = (
            _typed(v, type(default), f"sb3.{k}", source, default) if isinstance(default, (bool, int, float, str)) else v
        )
    if kwargs:
        out["kwargs"] = kwargs
    return out


def _sb3_parameters(info: AgentInfo) -> dict[str, Any] | None:
    """{name: default} of the agent's SB3 constructor (less what the run sets), or None without SB3."""
    import inspect

    cls: type[Any]
    try:
        if info.sb3_algo == "RecurrentPPO":
            from sb3_contrib import RecurrentPPO as cls
        else:
            from stable_baselines3 import PPO as cls
    except ImportError:
        return None
    params = inspect.signature(cls.__init__).parameters
    return {k: p.default for k, p in params.items() if k not in ("self", "policy", *SB3_SET_BY_RUN)}


def algo_fields(kind: str) -> dict[str, dataclasses.Field]:
    """The keys of an algorithm's section: the fields of its config dataclass, less those the run sets."""
    cls = ALGORITHMS[kind].config_class()
    return {f.name: f for f in dataclasses.fields(cls) if f.name not in SET_BY_RUN}


def ppo_fields() -> dict[str, dataclasses.Field]:
    """The ``ppo:`` keys: the fields of PPOConfig, less those the run sets."""
    return algo_fields("ppo")


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _algo_values(kind: str, data: Any, source: str) -> dict[str, Any]:
    """The typed section of an algorithm: keys checked against its config's fields, values against their types."""
    data = _mapping(data, kind, source)
    fields = algo_fields(kind)
    hints = get_type_hints(ALGORITHMS[kind].config_class())
    out = {}
    for k, v in data.items():
        if k in SET_BY_RUN:
            raise ConfigError(
                f"{source}: '{kind}.{k}' is set by the run (core: the agent name; seed: seeds; total_steps; device); "
                "remove it"
            )
        if k not in fields:
            raise _unknown(k, sorted(fields), f"{kind}.", source)
        out[k] = _typed(v, hints[k], f"{kind}.{k}", source, _field_default(fields[k]))
    return out


def _run_fields(cls: type, info: AgentInfo, *, seed: int, total_steps: int, device: str) -> dict[str, Any]:
    """The values of ``cls``'s fields that the run sets (``core`` only where the class has that field)."""
    out = {"seed": seed, "total_steps": total_steps, "device": device}
    if "core" in {f.name for f in dataclasses.fields(cls)}:
        out["core"] = info.core
    return out


def _build_algo(
    values: dict[str, Any], info: AgentInfo, *, total_steps: int, device: str, seed: int, source: str
) -> Any:
    cls = ALGORITHMS[info.kind].config_class()
    kind, name = info.kind, cls.__name__
    try:
        config = cls(**values, **_run_fields(cls, info, seed=seed, total_steps=total_steps, device=device))
        if hasattr(config, "validate"):
            config.validate()
    except ValueError as e:  # the config's own range checks
        msg = str(e).replace(f"{name}.", f"{kind}.")
        raise ConfigError(f"{source}: {msg if msg.startswith(kind + '.') else kind + ': ' + msg}") from None
    return config


_REQUIRED = ("env", "agent", "total_steps")
_SCALARS = {
    "env": str,
    "agent": str,
    "total_steps": int,
    "obs_variant": str,
    "device": str,
    "description": str,
    "env_kwargs": dict[str, Any],
}


def check_layer(data: Any, info: AgentInfo, source: str) -> dict[str, Any]:
    """Keys and types of one mapping: a whole config, or one layer of it (an agent-defaults section, a cell file,
    one ``--set``), so that an error names the file that holds the bad key. Returns the typed values.
    Required values and ranges are checked on the whole config (:meth:`RunConfig.from_dict`)."""
    data = _mapping(data, "config", source)
    names = [*(f.name for f in dataclasses.fields(RunConfig) if f.name != "algo"), *sections()]
    out: dict[str, Any] = {}
    for k, v in data.items():
        if k not in names:
            raise _unknown(k, names, "", source)
        if v is None and k in (*_REQUIRED, "seeds"):
            out[k] = None  # a missing value: reported (with where to set it) on the whole config
        elif k == "seeds":
            try:
                out[k] = tuple(parse_seeds(v))
            except ConfigError as e:
                raise ConfigError(f"{source}: {e}") from None
        elif k in _SCALARS:
            out[k] = _typed(v, _SCALARS[k], k, source, getattr(RunConfig, k, dataclasses.MISSING))
        elif k in ("eval", "checkpoint"):
            out[k] = _section_values(EvalConfig if k == "eval" else CheckpointConfig, v, k, source)
        elif k == info.kind:
            out[k] = _sb3_values(v, info, source) if k == "sb3" else _algo_values(k, v, source)
        elif _mapping(v, k, source):
            raise ConfigError(f"{source}: {_wrong_section(k, info, next(iter(v)))}")
    return out


# ------------------------------------------------------------------------------------------------------
# the run config
# ------------------------------------------------------------------------------------------------------
_DEVICE = re.compile(r"cpu|auto|cuda(:\d+)?")


def check_device(device: str) -> str:
    """A run's ``device`` string, or one clear error."""
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ConfigError(f"device must be cpu, cuda, cuda:N or auto, got {device!r}")
    return device


@dataclass(frozen=True)
class RunConfig:
    """One reproducible cell: environment, agent, budget, seeds, protocol and the agent's hyperparameters.

    ``algo`` is the agent's hyperparameter section, written under its kind in a config file (``ppo:``, ``sb3:``,
    ...): the config dataclass of a membench algorithm (its ``core``, ``seed``, ``total_steps`` and ``device``
    follow the run: :meth:`algo_config` gives the config of one seed) or :class:`SB3Config`.
    """

    env: str
    agent: str
    total_steps: int
    seeds: tuple[int, ...] = (0, 1, 2)
    obs_variant: str = "partial"
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    description: str = ""
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    algo: Any = None

    def __post_init__(self) -> None:
        info = check_agent(self.agent)
        check_env_id(self.env)
        if self.total_steps < 1:
            raise ConfigError(f"total_steps must be a positive integer, got {self.total_steps!r}")
        seeds = list(self.seeds) if isinstance(self.seeds, tuple) else self.seeds
        object.__setattr__(self, "seeds", tuple(parse_seeds(seeds)))
        variants = obs_variants(self.env)
        if self.obs_variant not in variants:
            what = "membench ID" if len(variants) > 1 else "gymnasium ID outside the membench catalogue"
            hint = close_matches(self.obs_variant, variants)
            raise ConfigError(
                f"obs_variant {self.obs_variant!r} is not a variant of {self.env}.{hint} "
                f"Valid for this {what}: {', '.join(variants)}."
            )
        if "obs_variant" in self.env_kwargs:
            raise ConfigError("set the observation variant with `obs_variant:`, not inside env_kwargs")
        check_device(self.device)
        cls: type[Any] = SB3Config if info.kind == "sb3" else ALGORITHMS[info.kind].config_class()
        algo = self.algo if self.algo is not None else cls()
        if not isinstance(algo, cls):
            raise ConfigError(f"agent {info.name!r} reads a {cls.__name__} section, got {type(algo).__name__}")
        if info.kind != "sb3":
            algo = dataclasses.replace(
                algo, **_run_fields(cls, info, seed=self.seeds[0], total_steps=self.total_steps, device=self.device)
            )
        object.__setattr__(self, "algo", algo)

    @property
    def agent_info(self) -> AgentInfo:
        return AGENTS[self.agent]

    @property
    def ppo(self) -> Any:
        """The PPO section (membench PPO agents: a ``PPOConfig``), else None. Typed ``Any``: the config layer
        sits below the algorithms and never imports them, not even for type checking."""
        return self.algo if self.agent_info.kind == "ppo" else None

    @property
    def sb3(self) -> SB3Config | None:
        """The stable-baselines3 section (sb3 agents), else None."""
        return self.algo if self.agent_info.kind == "sb3" else None

    def algo_config(self, seed: int) -> Any:
        """The algorithm's config for training seed ``seed`` (membench algorithms; not the sb3 agents)."""
        if self.agent_info.kind == "sb3":
            raise ConfigError(f"agent {self.agent!r} is a stable-baselines3 agent: it has no membench algorithm config")
        return dataclasses.replace(self.algo, seed=seed)

    def ppo_config(self, seed: int) -> Any:
        """The PPOConfig of the run with training seed ``seed`` (membench PPO agents only)."""
        if self.ppo is None:
            raise ConfigError(f"agent {self.agent!r} is not a membench PPO agent")
        return self.algo_config(seed)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "config") -> RunConfig:
        """Load a plain mapping strictly (see the module docstring); missing keys take their defaults."""
        data = _mapping(data, "config", source)
        for k in (*_REQUIRED, "seeds"):
            if data.get(k) is None and (k in data or k in _REQUIRED):
                raise ConfigError(
                    f"{source}: missing config value {k!r} ({KEYS_DOC[k]}): set `{k}:` or pass {_HOW_TO_SET[k]}"
                )
        try:
            info = check_agent(data["agent"])
            env = check_env_id(data["env"])
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None
        values = check_layer(data, info, source)
        values["env"] = env
        for k, section in (("eval", EvalConfig), ("checkpoint", CheckpointConfig)):
            if k in values:
                values[k] = _build(section, values[k], source)
        seeds = values.get("seeds", cls.seeds)
        if values["total_steps"] < 1:  # before PPOConfig sees it, so the error names the top-level key
            raise ConfigError(f"{source}: total_steps must be a positive integer, got {values['total_steps']!r}")
        section = values.pop(info.kind, {})
        if info.kind == "sb3":
            values["algo"] = _build(SB3Config, section, source)
        else:
            values["algo"] = _build_algo(
                section,
                info,
                total_steps=values["total_steps"],
                device=values.get("device", cls.device),
                seed=seeds[0],
                source=source,
            )
        return _build(cls, values, source)

    def to_dict(self) -> dict[str, Any]:
        """The plain dict the trainers read (``cfg["env"]``, ``cfg["ppo"]``, ...) and ``config.yaml`` records: the
        agent's own hyperparameter section (under its kind), every key spelled out."""
        kind = self.agent_info.kind
        own = self.algo.to_dict() if kind == "sb3" else {k: _plain(getattr(self.algo, k)) for k in algo_fields(kind)}
        return {
            "env": self.env,
            "agent": self.agent,
            "obs_variant": self.obs_variant,
            "env_kwargs": _plain(self.env_kwargs),
            "total_steps": self.total_steps,
            "seeds": list(self.seeds),
            "device": self.device,
            "description": self.description,
            "eval": dataclasses.asdict(self.eval),
            "checkpoint": dataclasses.asdict(self.checkpoint),
            kind: own,
        }


def _wrong_section(kind: str, info: AgentInfo, key: str | None = None) -> str:
    what = f"'{kind}.{key}'" if key else f"a '{kind}' section"
    reads = "stable-baselines3 settings" if info.kind == "sb3" else ALGORITHMS[info.kind].description
    return (
        f"{what} is given, but agent {info.name!r} reads only the '{info.kind}' section ({reads}); "
        f"remove the '{kind}' settings or use '{info.kind}.<key>'"
    )


def builtin_defaults() -> dict[str, Any]:
    """The defaults of every optional key, as a plain dict (``env``, ``agent``, ``total_steps`` are None)."""
    out: dict[str, Any] = {
        "env": None,
        "agent": None,
        "obs_variant": "partial",
        "env_kwargs": {},
        "total_steps": None,
        "seeds": [0, 1, 2],
        "device": "cpu",
        "description": "",
        "eval": dataclasses.asdict(EvalConfig()),
        "checkpoint": dataclasses.asdict(CheckpointConfig()),
        **{k: {} for k in sections()},
    }
    return out
