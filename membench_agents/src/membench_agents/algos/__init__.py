"""Training algorithms."""

from membench_agents.algos.ppo import PPO, PPOConfig

__all__ = ["PPO", "PPOConfig"]
