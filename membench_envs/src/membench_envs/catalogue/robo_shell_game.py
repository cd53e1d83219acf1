"""Catalogue entries of MIKASA-Robo ShellGame Touch / Push / Pick (paper App. K.1). Plain data: no ManiSkill import.

Their rows live in the one MIKASA-Robo table, :data:`membench_envs.catalogue.robo.PRESETS`; this module only lists
them after the other robot tasks in the catalogue's table order.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.catalogue.robo import SHELL_GAME_TASKS

TASKS: list[TaskSpec] = list(SHELL_GAME_TASKS)
