"""Catalogue entries of POBAX's DeepMind-Lab-style MiniGrid mazes (``Navix-DMLab-Maze-{00,01,02,03}-v0``):
``POBAX/Maze00-v0`` … ``POBAX/Maze03-v0``. The rules, kwargs and defaults live in
:mod:`membench_envs.envs.pobax.mazes`.

Category of partial observability (paper §6.1): spatial uncertainty and episode nonstationarity (the authors'
README lists spatial uncertainty only). The benchmark uses mazes 01 and 02; 03 is left out as too hard, 00 is the
authors' debugging maze. The defaults reproduce the code behind the paper's figures (a random goal every episode,
the 2 x 3 view); ``random_goal_pos=False, view="3x3"`` gives the authors' current HEAD.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.pobax import mazes

_EP = "membench_envs.envs.pobax.mazes:POBAXMaze"
_VEP = "membench_envs.envs.pobax.mazes:POBAXMazeVector"
_ROLE = {
    "00": "the authors' debugging maze, not in the paper",
    "01": "in the benchmark (paper: 256 envs, 1e7 steps)",
    "02": "in the benchmark (paper: 512 envs, 1e8 steps)",
    "03": "left out of the benchmark as too hard (an open challenge)",
}


def _maze(maze_id: str) -> TaskSpec:
    h, w = mazes.walls_of(maze_id).shape
    T = mazes.episode_length(maze_id)
    return TaskSpec(
        id=f"POBAX/Maze{maze_id}-v0",
        entry_point=_EP,
        vector_entry_point=_VEP,
        description=(
            f"POBAX DMLab MiniGrid maze {maze_id} ({h}x{w} with walls): find the goal (+1, ends the episode) from a "
            "one-hot 2x3 first-person view of walls and goal; random start cell, direction and goal; 3 actions"
        ),
        suites=("POBAX",),
        memory_types=("spatial",),
        episode_length=T,
        xi=(2, T),
        obs_type="vector",
        action_type="discrete",
        source="POBAX",
        score="return",  # the paper plots returns; info["success"] is reported but not the score
        kwargs={"maze_id": maze_id},
        params=mazes.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("agent_row", "agent_col", "goal_row", "goal_col", "direction"),
        xi_note=(
            "localisation and the goal's cell: a view at t_e can decide an action at any later t_r (dt = 1), so "
            f"xi = t_r - t_e + 1 ranges from 2 (the previous view) to T = {T}"
        ),
        notes=(
            f"POBAX Navix-DMLab-Maze-{maze_id}-v0 ({_ROLE[maze_id]}); categories: spatial uncertainty, episode "
            "nonstationarity. Actions 0 = turn left, 1 = turn right, 2 = forward (the code's order). full = the "
            f"authors' -F- agent-centred map ({2 * h - 1}, {2 * w - 1}, 6), POBAX's ceiling input; oracle = partial + "
            "the one-hot agent cell, direction and goal cell. random_goal_pos=False, view='3x3' = the authors' HEAD"
        ),
    )


TASKS: list[TaskSpec] = [_maze(m) for m in mazes.MAZES]
