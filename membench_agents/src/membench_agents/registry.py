"""The agent registry: every agent name ``membench`` accepts, and what kind of trainer it is.

``kind`` names the trainer and, in a run config, the one hyperparameter section the agent reads
(``ppo:`` for membench PPO, ``sb3:`` for the stable-baselines3 references).
"""

from __future__ import annotations

from dataclasses import dataclass

from membench_agents.errors import ConfigError, close_matches


@dataclass(frozen=True)
class AgentInfo:
    name: str
    kind: str
    """"ppo" (membench PPO) or "sb3" (stable-baselines3); also the config section of its hyperparameters"""
    core: str | None = None
    """the membench memory core (kind "ppo")"""
    sb3_algo: str | None = None
    """"PPO" or "RecurrentPPO" (kind "sb3")"""
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


def check_agent(name: object) -> AgentInfo:
    """The registry entry of ``name``, or one error naming close matches and every valid agent."""
    if name is None:
        raise ConfigError(f"missing config value 'agent' (one of {', '.join(AGENTS)}): pass --agent NAME")
    if not isinstance(name, str) or name not in AGENTS:
        raise ConfigError(f"unknown agent {name!r}.{close_matches(name, AGENTS)} Valid agents: {', '.join(AGENTS)}.")
    return AGENTS[name]
