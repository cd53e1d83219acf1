"""Catalogue entries of the native (numpy, no extra) MIKASA-Base diagnostic tasks."""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec

_TMAZE_EP = "membench_envs.envs.tmaze:TMazePassive"
_TMAZE_VEP = "membench_envs.envs.tmaze:TMazePassiveVector"


def _tmaze(env_id: str, length: int, penalty: bool = False) -> TaskSpec:
    T = length + 1
    reward = "dense: -1/(T-1) per step, +1 correct turn" if penalty else "sparse: +1 correct turn"
    return TaskSpec(
        id=env_id,
        entry_point=_TMAZE_EP,
        vector_entry_point=_TMAZE_VEP,
        description=f"Passive T-Maze, corridor L={length}; cue at t=0 only, turn at the junction ({reward})",
        suites=("MIKASA-Base", "MEM"),
        memory_types=("object",),
        episode_length=T,
        xi=(T, T),
        obs_type="vector",
        action_type="discrete",
        source="MEM",
        kwargs={"corridor_length": length, "penalty": penalty},
        oracle_keys=("goal",),
        xi_note="one event-recall pair: clue at t=0, turn at t=T-1, so xi = T = L+1",
    )


TASKS: list[TaskSpec] = [
    _tmaze("MIKASA/TMazePassive-v0", 10),
    _tmaze("MIKASA/TMazePassiveDense-v0", 10, penalty=True),
    *[_tmaze(f"MIKASA/TMazePassiveL{n}-v0", n) for n in (5, 30, 100, 300)],
]
