"""Training algorithms."""

from membench_agents.algos.dtqn import DTQN, DTQNConfig
from membench_agents.algos.ppo import PPO, PPOConfig
from membench_agents.algos.sac import SAC, SACConfig, SACTrainer  # noqa: F401  (re-exported)

__all__ = ["DTQN", "DTQNConfig", "PPO", "PPOConfig"]
