"""The agent registry: every agent name ``membench`` accepts, and the algorithm that trains it.

An agent's ``kind`` names its algorithm and, in a run config, the one hyperparameter section the agent reads
(``ppo:`` for membench PPO, ``sb3:`` for the stable-baselines3 references). A membench algorithm plugs in by
one row of :data:`ALGORITHMS`:

- ``config``: ``"module:Class"`` of its hyperparameter dataclass. The run sets the fields ``seed``,
  ``total_steps`` and ``device`` (and ``core``, from the agent name, when the class has that field); every other
  field is a key of the config section, typed from the dataclass's annotations. ``validate()`` (if defined)
  raises ``ValueError`` for out-of-range values.
- ``trainer``: ``"module:Class"`` implementing :class:`membench_agents.algos.trainer.Trainer`, built as
  ``Trainer(cfg, seed)`` from the run's plain config dict.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from membench_agents.errors import ConfigError, close_matches


@dataclass(frozen=True)
class Algorithm:
    kind: str
    """the config section of its hyperparameters (``ppo``)"""
    config: str
    """``"module:Class"`` of the hyperparameter dataclass"""
    trainer: str
    """``"module:Class"`` of the Trainer"""
    description: str
    """one line for the docs and error messages"""

    def config_class(self) -> type:
        return load(self.config)

    def trainer_class(self) -> type:
        return load(self.trainer)


def load(path: str):
    """The object named by ``"module:attribute"`` (imported on demand: registering imports no torch)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


#: The Trainer of the stable-baselines3 reference agents (kind ``sb3``).
SB3_TRAINER = "membench_agents.algos.sb3:SB3Trainer"

#: The membench algorithms by kind. The stable-baselines3 references (kind ``sb3``) are not listed: their
#: section is typed from the SB3 constructors (:mod:`membench_agents.config.schema`) and their trainer is
#: :class:`membench_agents.algos.sb3.SB3Trainer`.
ALGORITHMS: dict[str, Algorithm] = {
    a.kind: a
    for a in (
        Algorithm(
            "ppo",
            "membench_agents.algos.ppo:PPOConfig",
            "membench_agents.algos.ppo:PPOTrainer",
            "membench PPO hyperparameters (fields of membench_agents.algos.ppo.PPOConfig)",
        ),
        Algorithm(
            "sac",
            "membench_agents.algos.sac:SACConfig",
            "membench_agents.algos.sac:SACTrainer",
            "membench SAC hyperparameters (fields of membench_agents.algos.sac.SACConfig)",
        ),
        Algorithm(
            "dtqn",
            "membench_agents.algos.dtqn:DTQNConfig",
            "membench_agents.algos.dtqn:DTQNTrainer",
            "DTQN hyperparameters (fields of membench_agents.algos.dtqn.DTQNConfig; context_len is K)",
        ),
    )
}


@dataclass(frozen=True)
class AgentInfo:
    name: str
    kind: str
    """a key of :data:`ALGORITHMS` (``"ppo"``) or ``"sb3"``; also the config section of its hyperparameters"""
    core: str | None = None
    """the membench memory core (algorithms whose config has a ``core`` field)"""
    sb3_algo: str | None = None
    """"PPO" or "RecurrentPPO" (kind "sb3")"""
    description: str = ""

    @property
    def recurrent(self) -> bool:
        """Whether the agent carries a state between steps (a recurrent or transformer-memory core)."""
        return (self.core is not None and self.core != "mlp") or self.sb3_algo == "RecurrentPPO"

    @property
    def memory(self) -> bool:
        """Whether the policy conditions on past observations: a recurrent core (:attr:`recurrent`) or an
        attention window over the last K observations (DTQN); the others see the current observation only."""
        return self.recurrent or self.kind == "dtqn"


AGENTS: dict[str, AgentInfo] = {
    a.name: a
    for a in (
        AgentInfo("ppo-mlp", "ppo", core="mlp", description="membench PPO, no memory (MLP core)"),
        AgentInfo("ppo-lstm", "ppo", core="lstm", description="membench PPO with an LSTM core (truncated BPTT)"),
        AgentInfo("ppo-gru", "ppo", core="gru", description="membench PPO with a GRU core (truncated BPTT)"),
        AgentInfo("ppo-gtrxl", "ppo", core="gtrxl", description="membench PPO with a GTrXL core (gated transformer)"),
        AgentInfo(
            "ppo-ffm", "ppo", core="ffm", description="membench PPO with an FFM core (Fast and Forgetful Memory)"
        ),
        AgentInfo(
            "ppo-mingru", "ppo", core="mingru", description="membench PPO with a minGRU core (linear recurrence)"
        ),
        AgentInfo("ppo-lru", "ppo", core="lru", description="membench PPO with an LRU core (Linear Recurrent Unit)"),
        AgentInfo("sac", "sac", core="mlp", description="membench SAC (Box or Discrete actions), no memory"),
        AgentInfo("sac-lstm", "sac", core="lstm", description="membench SAC, LSTM cores (sequence replay, burn-in)"),
        AgentInfo("sac-gru", "sac", core="gru", description="membench SAC, GRU cores (sequence replay, burn-in)"),
        AgentInfo("sac-ffm", "sac", core="ffm", description="membench SAC, FFM cores (sequence replay, burn-in)"),
        AgentInfo(
            "sac-mingru", "sac", core="mingru", description="membench SAC, minGRU cores (sequence replay, burn-in)"
        ),
        AgentInfo("sac-lru", "sac", core="lru", description="membench SAC, LRU cores (sequence replay, burn-in)"),
        AgentInfo("dtqn", "dtqn", description="DTQN: Q-learning, causal transformer over the last K observations"),
        AgentInfo("sb3-ppo", "sb3", sb3_algo="PPO", description="stable-baselines3 PPO (reference, no memory)"),
        AgentInfo(
            "sb3-recurrentppo", "sb3", sb3_algo="RecurrentPPO", description="sb3-contrib RecurrentPPO (reference LSTM)"
        ),
    )
}


for _a in AGENTS.values():  # a registry mistake fails at import, not in the middle of a run
    if _a.kind != "sb3" and _a.kind not in ALGORITHMS:
        raise RuntimeError(f"agent {_a.name!r} has kind {_a.kind!r}, which is not in ALGORITHMS")
del _a


#: Config fields that hold an agent's attention window K (DTQN's ``context_len``, GTrXL's window), searched in
#: this order in the agent's hyperparameter section (``cfg[kind]``) and in ``cfg[kind][core]``.
CONTEXT_KEYS = ("context_len", "context_length", "window", "memory_window", "mem_len")


def context_field(info: AgentInfo, cfg: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The config path of the agent's attention window (rule 2 of the module docstring), or None."""
    section = cfg.get(info.kind)
    if not isinstance(section, Mapping):
        return None
    places: list[tuple[tuple[str, ...], Mapping[str, Any]]] = [((info.kind,), section)]
    if info.core and isinstance(section.get(info.core), Mapping):
        places.append(((info.kind, info.core), section[info.core]))
    for path, node in places:
        for key in CONTEXT_KEYS:
            if key in node and node[key] is not None:
                return (*path, key)
    return None


def check_agent(name: object) -> AgentInfo:
    """The registry entry of ``name``, or one error naming close matches and every valid agent."""
    if name is None:
        raise ConfigError(f"missing config value 'agent' (one of {', '.join(AGENTS)}): pass --agent NAME")
    if not isinstance(name, str) or name not in AGENTS:
        raise ConfigError(f"unknown agent {name!r}.{close_matches(name, AGENTS)} Valid agents: {', '.join(AGENTS)}.")
    return AGENTS[name]


__all__ = [
    "AGENTS",
    "ALGORITHMS",
    "CONTEXT_KEYS",
    "SB3_TRAINER",
    "AgentInfo",
    "Algorithm",
    "check_agent",
    "context_field",
    "load",
]
