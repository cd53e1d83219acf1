"""Run configurations: one YAML file per reproducible cell (environment, agent, budget, hyperparameters).

Resolution order (later wins), see :func:`resolve`:

1. the built-in defaults of this module (:data:`BUILTIN`: evaluation protocol, seeds, checkpointing);
2. the agent defaults ``experiments/defaults/<agent>.yaml``: a ``base`` section, then the section of the
   environment's observation type (``obs_type: {vector|image|dict: ...}``) and of its action type
   (``action_type: {discrete|multi-discrete|continuous: ...}``), so an agent runs on any ID;
3. the cell config ``experiments/configs/<env-id>/<agent>.yaml`` (the env ID's ``/`` is a folder, e.g.
   ``experiments/configs/MIKASA/TMazePassive-v0/ppo-lstm.yaml``); a cell for another observation variant
   is ``<agent>.<variant>.yaml`` (``ppo-mlp.oracle.yaml``). ``--config FILE`` replaces the lookup;
4. command-line overrides (``--steps``, ``--seeds``, ``--obs-variant``, ``--set key.sub=value``).

Every key is checked: an unknown key, agent or environment is one error naming close matches; a missing
value (``env``, ``agent``, ``total_steps``, ...) is one error saying where to set it.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration problem, with a message meant for the user (one clear sentence or two)."""


@dataclass(frozen=True)
class AgentInfo:
    name: str
    kind: str  # "ppo" (membench PPO) or "sb3"
    core: str | None = None  # membench memory core
    sb3_algo: str | None = None  # "PPO" or "RecurrentPPO"
    description: str = ""

    @property
    def recurrent(self) -> bool:
        return self.core in ("lstm", "gru") or self.sb3_algo == "RecurrentPPO"


AGENTS: dict[str, AgentInfo] = {
    a.name: a
    for a in (
        AgentInfo("ppo-mlp", "ppo", core="mlp", description="membench PPO, no memory (MLP core)"),
        AgentInfo("ppo-lstm", "ppo", core="lstm", description="membench PPO with an LSTM core (truncated BPTT)"),
        AgentInfo("ppo-gru", "ppo", core="gru", description="membench PPO with a GRU core (truncated BPTT)"),
        AgentInfo("sb3-ppo", "sb3", sb3_algo="PPO", description="stable-baselines3 PPO (reference, no memory)"),
        AgentInfo(
            "sb3-recurrentppo", "sb3", sb3_algo="RecurrentPPO", description="sb3-contrib RecurrentPPO (reference LSTM)"
        ),
    )
}

#: Built-in defaults (the evaluation protocol of the seed papers: 3 runs x 100 fixed episode seeds 0..99, mean ± SEM).
BUILTIN: dict[str, Any] = {
    "env": None,
    "agent": None,
    "obs_variant": "partial",
    "env_kwargs": {},
    "total_steps": None,
    "seeds": [0, 1, 2],
    "device": "cpu",
    "description": "",
    "eval": {
        "episodes": 100,  # per training run
        "seed_start": 0,  # episode seeds seed_start .. seed_start + episodes - 1 (memory paper F.1: 0..99)
        "deterministic": True,
        "num_envs": 100,  # evaluation episodes run in parallel (native batched envs make this cheap)
        "every_steps": 0,  # also evaluate during training every N env steps (0: only at the end)
    },
    "checkpoint": {
        "every_iterations": 25,  # save the resumable state every N PPO iterations ...
        "every_seconds": 120,  # ... or when this much wall time passed since the last save
    },
    "ppo": {},
    "sb3": {},
}

#: Documentation of every key (also used in error messages).
KEYS_DOC: dict[str, str] = {
    "env": "the environment ID (e.g. MIKASA/TMazePassive-v0)",
    "agent": f"the agent name (one of {', '.join(AGENTS)})",
    "obs_variant": "observation variant: partial, oracle or full",
    "env_kwargs": "keyword arguments for gymnasium.make (e.g. {corridor_length: 20})",
    "total_steps": "the training budget in environment steps per run",
    "seeds": "the training seeds: one independent run per seed",
    "device": "cpu, cuda or auto",
    "description": "free text",
    "eval": "evaluation protocol: episodes, seed_start, deterministic, num_envs, every_steps",
    "checkpoint": "checkpointing: every_iterations, every_seconds",
    "ppo": "membench PPO hyperparameters (fields of membench_agents.algos.ppo.PPOConfig)",
    "sb3": "stable-baselines3 settings: n_envs, policy, policy_kwargs and constructor keyword arguments",
}
REQUIRED = ("env", "agent", "total_steps", "seeds")
_SUBKEYS = {k: set(v) for k, v in BUILTIN.items() if isinstance(v, dict) and v}


# ------------------------------------------------------------------------------------------------------
# locating experiments/
# ------------------------------------------------------------------------------------------------------
def experiments_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """The ``experiments/`` folder: explicit path, ``$MEMBENCH_EXPERIMENTS``, the CWD or its parents, the repo."""
    if explicit is not None:
        p = Path(explicit)
        if not p.is_dir():
            raise ConfigError(f"experiments folder {str(p)!r} does not exist")
        return p
    env = os.environ.get("MEMBENCH_EXPERIMENTS")
    if env:
        return experiments_dir(env)
    candidates = [Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents]
    for base in candidates:
        p = base / "experiments"
        if (p / "configs").is_dir() or (p / "defaults").is_dir():
            return p
    return None


def cell_path(experiments: Path, env_id: str, agent: str, obs_variant: str | None = None) -> Path:
    """Where the cell config of (env, agent[, variant]) lives: ``configs/<env-id>/<agent>[.<variant>].yaml``."""
    stem = agent if obs_variant in (None, "partial") else f"{agent}.{obs_variant}"
    return experiments / "configs" / Path(*env_id.split("/")) / f"{stem}.yaml"


def list_cells(experiments: Path) -> list[tuple[str, str, Path]]:
    """Every cell config as (env_id, agent[.variant], path)."""
    root = experiments / "configs"
    out = []
    for p in sorted(root.rglob("*.yaml")):
        rel = p.relative_to(root)
        out.append(("/".join(rel.parts[:-1]), p.stem, p))
    return out


# ------------------------------------------------------------------------------------------------------
# loading and merging
# ------------------------------------------------------------------------------------------------------
def load_yaml(path: str | os.PathLike) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {e}") from None
    if data is None:
        return {}
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


def _close(word: str, options: Iterable[str], n: int = 3) -> str:
    options = list(options)
    close = difflib.get_close_matches(word, options, n=n, cutoff=0.5)
    if not close:
        close = [o for o in options if word.lower() in o.lower() or o.lower() in word.lower()][:n]
    return f" Did you mean {', '.join(close)}?" if close else ""


def check_agent(name: str | None) -> AgentInfo:
    if name is None:
        raise ConfigError(f"missing config value 'agent' ({KEYS_DOC['agent']}): pass --agent NAME")
    if name not in AGENTS:
        raise ConfigError(f"unknown agent {name!r}.{_close(name, AGENTS)} Valid agents: {', '.join(AGENTS)}.")
    return AGENTS[name]


def check_env_id(env_id: str | None) -> str:
    """The ID if gymnasium knows it (membench IDs and any other registered ID), else one error with close matches."""
    if env_id is None:
        raise ConfigError(f"missing config value 'env' ({KEYS_DOC['env']}): pass --env ID or set `env:`")
    import gymnasium as gym

    import membench_envs  # noqa: F401  (registers every membench ID)

    if env_id in gym.registry or ":" in env_id:
        return env_id
    ids = list(gym.registry)
    membench = [i for i in ids if "/" in i]
    hint = _close(env_id, membench) or _close(env_id, ids)
    if not hint:
        hint = " Run `membench-envs list` to see every membench ID."
    raise ConfigError(f"unknown environment ID {env_id!r}.{hint}")


def parse_seeds(value: Any) -> list[int]:
    """Seeds from a list, an int n (seeds 0..n-1), or a string "0,1,2" / "3" / "0-4"."""
    if isinstance(value, bool):
        raise ConfigError(f"seeds must be a count or a list of ints, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ConfigError(f"seeds: the number of runs must be >= 1, got {value}")
        return list(range(value))
    if isinstance(value, str):
        s = value.strip()
        try:
            if "," in s:
                return [int(x) for x in s.split(",") if x.strip()]
            if "-" in s[1:]:
                lo, hi = s.split("-", 1)
                return list(range(int(lo), int(hi) + 1))
            return parse_seeds(int(s))
        except ValueError:
            raise ConfigError(
                f"seeds: cannot parse {value!r}; use a count (3), a list (0,1,2) or a range (0-4)"
            ) from None
    if isinstance(value, (list, tuple)):
        if not value or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ConfigError(f"seeds must be a non-empty list of ints, got {value!r}")
        if len(set(value)) != len(value):
            raise ConfigError(f"seeds must be distinct, got {value!r}")
        return list(value)
    raise ConfigError(f"seeds must be a count or a list of ints, got {value!r}")


def parse_override(item: str) -> tuple[list[str], Any]:
    """``a.b=value`` -> (["a", "b"], parsed YAML value)."""
    if "=" not in item:
        raise ConfigError(f"--set expects key=value (e.g. ppo.learning_rate=3e-4), got {item!r}")
    key, raw = item.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set: empty key in {item!r}")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        value = raw
    return parts, value


def _nested(keys: list[str], value: Any) -> dict[str, Any]:
    out: Any = value
    for k in reversed(keys):
        out = {k: out}
    return out


def validate(cfg: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Check keys, required values and types; normalise seeds. Returns the config (a new dict)."""
    cfg = copy.deepcopy(cfg)
    for k in cfg:
        if k not in BUILTIN:
            raise ConfigError(f"{source}: unknown key {k!r}.{_close(k, BUILTIN)} Valid keys: {', '.join(BUILTIN)}.")
    for k, allowed in _SUBKEYS.items():
        sub = cfg.get(k)
        if not isinstance(sub, dict):
            raise ConfigError(f"{source}: {k!r} must be a mapping ({KEYS_DOC[k]}), got {sub!r}")
        for s in sub:
            if s not in allowed:
                raise ConfigError(
                    f"{source}: unknown key '{k}.{s}'.{_close(s, allowed)} Valid: {', '.join(sorted(allowed))}."
                )
    for k in REQUIRED:
        if cfg.get(k) is None:
            how = {"total_steps": "--steps N (make bench ... STEPS=N)", "seeds": "--seeds 3"}.get(k, f"--{k}")
            raise ConfigError(f"{source}: missing config value {k!r} ({KEYS_DOC[k]}): set `{k}:` or pass {how}")
    for k in ("env_kwargs", "ppo", "sb3"):
        if not isinstance(cfg.get(k), dict):
            raise ConfigError(f"{source}: {k!r} must be a mapping ({KEYS_DOC[k]}), got {cfg.get(k)!r}")
    ts = cfg["total_steps"]
    if isinstance(ts, float) and ts.is_integer():
        ts = int(ts)
    if isinstance(ts, bool) or not isinstance(ts, int) or ts < 1:
        raise ConfigError(f"{source}: total_steps must be a positive integer, got {cfg['total_steps']!r}")
    cfg["total_steps"] = ts
    cfg["seeds"] = parse_seeds(cfg["seeds"])
    if cfg["obs_variant"] not in ("partial", "oracle", "full"):
        raise ConfigError(f"{source}: obs_variant must be one of partial, oracle, full; got {cfg['obs_variant']!r}")
    if "obs_variant" in cfg["env_kwargs"]:
        raise ConfigError(f"{source}: set the observation variant with `obs_variant:`, not inside env_kwargs")
    ev = cfg["eval"]
    for k in ("episodes", "num_envs"):
        if isinstance(ev[k], bool) or not isinstance(ev[k], int) or ev[k] < 1:
            raise ConfigError(f"{source}: eval.{k} must be a positive integer, got {ev[k]!r}")
    for k in ("seed_start", "every_steps"):
        if isinstance(ev[k], bool) or not isinstance(ev[k], int) or ev[k] < 0:
            raise ConfigError(f"{source}: eval.{k} must be a non-negative integer, got {ev[k]!r}")
    for k, v in cfg["checkpoint"].items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ConfigError(f"{source}: checkpoint.{k} must be a non-negative number, got {v!r}")
    if AGENTS[cfg["agent"]].kind == "ppo":
        _check_ppo_nulls(cfg["ppo"], source)
    return cfg


def _check_ppo_nulls(ppo: dict[str, Any], source: str) -> None:
    """A null PPO value is only allowed where PPOConfig's default is None (e.g. bptt_length, target_kl)."""
    import dataclasses

    from membench_agents.algos.ppo import PPOConfig

    defaults = {f.name: f.default for f in dataclasses.fields(PPOConfig)}
    for k, v in ppo.items():
        if v is None and k in defaults and defaults[k] is not None:
            raise ConfigError(
                f"{source}: missing config value 'ppo.{k}' (it is null); remove the key (default {defaults[k]!r}) "
                "or set a value"
            )


def env_types(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """(obs_type, action_type) of an ID: from the membench catalogue, else from the spaces of one env."""
    try:
        import membench_envs

        spec = membench_envs.info(env_id)
        return spec.obs_type, spec.action_type
    except KeyError:
        pass
    import gymnasium as gym

    env = gym.make(env_id, **dict(env_kwargs or {}))
    try:
        return space_types(env.observation_space, env.action_space)
    finally:
        env.close()


def is_membench_id(env_id: str) -> bool:
    try:
        import membench_envs

        membench_envs.info(env_id)
        return True
    except KeyError:
        return False


def make_kwargs(env_id: str, obs_variant: str, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ``gym.make``: membench IDs take ``obs_variant``; other gymnasium IDs only the
    default (partial) variant, which is then not passed."""
    if is_membench_id(env_id) or obs_variant != "partial":
        return {"obs_variant": obs_variant, **env_kwargs}
    return dict(env_kwargs)


def obs_type(obs_space) -> str:
    """"dict", "image" (a rank-3 Box) or "vector": the observation kinds agent defaults are keyed by."""
    from gymnasium import spaces

    if isinstance(obs_space, spaces.Dict):
        return "dict"
    if isinstance(obs_space, spaces.Box) and len(obs_space.shape) == 3:
        return "image"
    return "vector"


def space_types(obs_space, action_space) -> tuple[str, str]:
    from gymnasium import spaces

    obs = obs_type(obs_space)
    if isinstance(action_space, spaces.Discrete):
        act = "discrete"
    elif isinstance(action_space, spaces.MultiDiscrete):
        act = "multi-discrete"
    elif isinstance(action_space, spaces.Box):
        act = "continuous"
    else:
        act = type(action_space).__name__
    return obs, act


def agent_defaults(experiments: Path | None, agent: str, obs_type: str, action_type: str) -> dict[str, Any]:
    """``experiments/defaults/<agent>.yaml``: base, then the obs-type section, then the action-type section."""
    if experiments is None:
        return {}
    path = experiments / "defaults" / f"{agent}.yaml"
    if not path.is_file():
        return {}
    data = load_yaml(path)
    unknown = set(data) - {"base", "obs_type", "action_type"}
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {sorted(unknown)}; valid: base, obs_type, action_type")
    out = dict(data.get("base") or {})
    out = merge(out, (data.get("obs_type") or {}).get(obs_type) or {})
    out = merge(out, (data.get("action_type") or {}).get(action_type) or {})
    return out


@dataclass
class Resolved:
    config: dict[str, Any]
    sources: list[str]

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
    experiments: str | os.PathLike | None = None,
    device: str | None = None,
) -> Resolved:
    """Resolve the full config of one cell (see the module docstring for the order)."""
    exp = experiments_dir(experiments)
    sources = ["builtin"]
    explicit: dict[str, Any] = {}
    if config_file is not None:
        explicit = load_yaml(config_file)
        sources.append(str(config_file))
    env = env or explicit.get("env")
    agent = agent or explicit.get("agent")
    info = check_agent(agent)
    env = check_env_id(env)
    variant = obs_variant or explicit.get("obs_variant") or "partial"
    cell: dict[str, Any] = {}
    if config_file is None and exp is not None:
        for v in ([variant] if variant != "partial" else []) + ["partial"]:
            p = cell_path(exp, env, info.name, v)
            if p.is_file():
                cell = load_yaml(p)
                sources.append(str(p))
                break
    explicit = explicit or cell
    env_kwargs = dict(explicit.get("env_kwargs") or {})
    obs_type, action_type = env_types(env, env_kwargs)
    defaults = agent_defaults(exp, info.name, obs_type, action_type)
    if defaults:
        sources.insert(1, str(exp / "defaults" / f"{info.name}.yaml"))
    cfg = merge(BUILTIN, defaults)
    cfg = merge(cfg, explicit)
    cfg["env"], cfg["agent"] = env, info.name
    if obs_variant is not None:
        cfg["obs_variant"] = obs_variant
    if steps is not None:
        cfg["total_steps"] = steps
    if seeds is not None:
        cfg["seeds"] = parse_seeds(seeds)
    if device is not None:
        cfg["device"] = device
    for item in overrides:
        keys, value = parse_override(item)
        cfg = merge(cfg, _nested(keys, value))
    if overrides:
        sources.append("--set " + " ".join(overrides))
    cfg = validate(cfg, source=" + ".join(s for s in sources if s != "builtin") or "config")
    return Resolved(cfg, sources)


def dump(cfg: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(cfg), sort_keys=False, default_flow_style=None)


def seed_list_text(seeds: list[int]) -> str:
    return ",".join(str(s) for s in seeds)
