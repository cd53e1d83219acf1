"""The episode cap of POBAX's tasks, one rule for every module here.

The authors' environments declare ``EnvParams(max_steps_in_episode=1000)`` (T-Maze, RockSample, Battleship), but
none of them counts steps itself:

- In the paper-era code (commit ``e1b2218``, gymnax < 1.0) nothing enforced the cap: an episode ran until the task
  ended it.
- At HEAD (``a5e1d62``) ``get_env`` wraps every env in a ``TimeLimitWrapper`` (truncation at 1000 steps). It calls
  gymnax's ``Environment.step``, which since gymnax 1.0 reads ``state.time``; ``TMazeState`` and
  ``RockSampleState`` have no such field, so ``step`` fails for ``tmaze_*`` and ``rocksample_*`` (seen running their
  HEAD with gymnax 1.0.1). Battleship overrides ``step`` and runs.

Here the cap is the task's own (the bug does not exist): the step that reaches ``max_steps`` (default 1000, the
authors' value) returns ``truncated=True`` unless the task ended on that step (then ``terminated=True`` only), as the
HEAD wrapper intends.
"""

from __future__ import annotations

import numpy as np

from membench_envs.envs.core.params import Param

#: The authors' ``max_steps_in_episode`` of T-Maze, RockSample and Battleship.
DEFAULT_MAX_STEPS = 1000
#: The longest cap accepted (far past every POBAX budget; keeps per-episode counters meaningful).
MAX_MAX_STEPS = 1_000_000

MAX_STEPS = Param(
    "max_steps",
    "int",
    DEFAULT_MAX_STEPS,
    low=1,
    high=MAX_MAX_STEPS,
    doc="episode cap: truncated=True on the step that reaches it (authors' max_steps_in_episode)",
)


def truncation(t: np.ndarray, terminated: np.ndarray, max_steps: int) -> np.ndarray:
    """``truncated`` after a step that brought the step counters to ``t``."""
    return (t >= max_steps) & ~terminated
