"""membench-envs: memory-intensive and stochastic RL tasks behind ``gymnasium.make`` IDs.

``import membench_envs`` registers every ID (no simulator backend is imported until ``make``)::

    import gymnasium as gym
    import membench_envs

    env = gym.make("MIKASA/TMazePassive-v0", obs_variant="oracle")
    venv = gym.make_vec("MIKASA/TMazePassive-v0", num_envs=1024)   # native batched numpy env

Without the import, gymnasium's module prefix works too: ``gym.make("membench_envs:MIKASA/TMazePassive-v0")``.
"""

from __future__ import annotations

from membench_envs._deps import MissingExtraError
from membench_envs.catalogue import MEMORY_TYPES, TaskSpec, all_tasks, suite, suites
from membench_envs.catalogue import get as info
from membench_envs.envs.core.params import VARIANTS
from membench_envs.registration import register_all

__version__ = "0.1.0"

__all__ = [
    "MEMORY_TYPES",
    "VARIANTS",
    "MissingExtraError",
    "TaskSpec",
    "all_tasks",
    "info",
    "register_all",
    "suite",
    "suites",
]

register_all()
