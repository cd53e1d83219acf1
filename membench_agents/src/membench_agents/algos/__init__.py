"""Training algorithms."""

from membench_agents.algos.dtqn import DTQN, DTQNConfig
from membench_agents.algos.ppo import PPO, PPOConfig

__all__ = ["DTQN", "DTQNConfig", "PPO", "PPOConfig"]
