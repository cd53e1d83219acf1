"""Catalogue entries of POBAX's numpy tasks (T-Maze, RockSample, Battleship): IDs, suites, memory types, T and Ξ. Each
task's rules, kwargs and defaults live in its module under :mod:`membench_envs.envs.pobax`, imported here.

The variants follow POBAX's ladder of observability (the paper's §4): ``partial`` is POBAX's observation (the floor),
``oracle`` its "perfect memory" observation (the ceiling a memory learner should reach), ``full`` the state. The
paper's category of partial observability (§5-6.1) is in each description; the authors' repository README assigns
RockSample and Battleship other categories (noted per entry).

Every POBAX ID is scored by its return (``TaskSpec.score``): the paper plots returns, and although each task reports
``info["success"]`` (the right arm, the exit, the last ship, the goal) an evaluation's per-run number is the mean
return.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.pobax import battleship, rocksample, tmaze
from membench_envs.envs.pobax.limits import DEFAULT_MAX_STEPS

_T = DEFAULT_MAX_STEPS
_PKG = "membench_envs.envs.pobax"


def _tmaze(env_id: str, length: int) -> TaskSpec:
    shortest = tmaze.shortest_episode(length)
    return TaskSpec(
        id=env_id,
        entry_point=f"{_PKG}.tmaze:PobaxTMaze",
        vector_entry_point=f"{_PKG}.tmaze:PobaxTMazeVector",
        description=(
            f"POBAX T-Maze (tmaze_{length}): hallway cells 0..{length}, junction {length + 1}; the goal arm (up or "
            "down) is shown on cell 0 only, as one bit that is 0 for 'up' (so the start looks like the hallway); "
            f"+4 correct arm, -0.1 wrong arm, ends on the turn (shortest episode {shortest} steps). Category: "
            "object uncertainty & tracking"
        ),
        suites=("POBAX",),
        memory_types=("object",),
        episode_length=_T,
        xi=(shortest, _T),
        obs_type="vector",
        action_type="discrete",
        source="POBAX",
        score="return",  # the paper plots returns; info["success"] is reported but not the score
        kwargs={"corridor_length": length},
        params=tmaze.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("goal_dir",),
        xi_note=(
            f"one event-recall pair: the goal, seen on cell 0 at t=0 (dt=0), recalled at the turn, t_r >= n+1 = "
            f"{length + 1} (n+1 east moves first) and t_r <= T-1: xi = t_r + 1 in [n+2, T] = [{shortest}, {_T}]"
        ),
        notes=(
            "the authors' tmaze.py: actions 0 = up (correct when goal_dir = 0), 1 = down, 2 = east, 3 = west; "
            "observation [goal_dir on cell 0, hallway, junction, 0] (observation='paper': [up, down, hallway, "
            "junction], the paper's App. B.1 wording); oracle = POBAX's perfect-memory observation (goal bit on every "
            "cell) + goal_dir; optimal discounted return 4*0.99^11 = 3.581 at the authors' gamma 0.99; cap 1000 steps "
            "(truncated; the authors' HEAD enforces it with a wrapper whose step fails for tmaze_* on gymnax 1.0). "
            "Their best/ scripts: 1e6 steps, hidden 32, action_concat on"
        ),
    )


def _rocksample(env_id: str, size: int) -> TaskSpec:
    seeds = {11: (2025, 2024), 15: (2026, 2025)}[size]
    gamma = {11: 0.99, 15: 0.999}[size]
    return TaskSpec(
        id=env_id,
        entry_point=f"{_PKG}.rocksample:RockSample",
        vector_entry_point=f"{_PKG}.rocksample:RockSampleVector",
        description=(
            f"POBAX RockSample({size}, {size}): {size} rocks at the authors' fixed positions on a grid of "
            f"{size}x{size} cells, each good or bad per episode; check a rock (a noisy reading, P(correct) = "
            "(1 + 2^(-d/20))/2 at distance d), sample it (+10 good, then bad; -10 bad), exit east (+10, ends). "
            "Category: object uncertainty"
        ),
        suites=("POBAX",),
        memory_types=("object", "capacity"),
        episode_length=_T,
        xi=(2, _T - 1),
        obs_type="vector",
        action_type="discrete",
        source="POBAX",
        score="return",  # the paper plots returns; info["success"] is reported but not the score
        kwargs={"size": size, "rocks": size},
        params=rocksample.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("rock_readings",),
        xi_note=(
            "per rock: a reading observed at t_e >= 1 (a check at t_e-1) is needed when sampling or skipping the rock, "
            "at the earliest one step later (checked from its own cell) and at the latest at t = T-1: "
            f"xi = t_r - t_e + 1 in [2, T-1] = [2, {_T - 1}]; up to {size} readings open at once"
        ),
        notes=(
            f"the authors' rocksample.py and rocksample_{size}_{size}_config.json; map = their generate_map for run "
            f"seed {seeds[0]} (the best/ PPO scripts; rock_map='transformer': seed {seeds[1]}, the Transformer-XL "
            "scripts; rock_map='drawn' + map_seed: a new one); actions 0-3 = N, E, S, W, 4 = sample, 5+i = check rock "
            "i; sensor d_half = 20 in the code, the grid diagonal in the paper (half_efficiency_distance); oracle = "
            "the perfect memory (their PerfectMemoryWrapper, its carry-over between episodes fixed), full = the true "
            "statuses (their FullyObservableWrapper, the ceiling their best/ scripts of 2025-08 ran); their pipeline "
            f"adds NormalizeVecReward (agent side), gamma {gamma}; cap 1000 steps (truncated). The repository README "
            "files RockSample under episode nonstationarity + object uncertainty"
        ),
    )


def _battleship(env_id: str, size: int) -> TaskSpec:
    ships = battleship.SHIPS[size]
    cells = size * size
    return TaskSpec(
        id=env_id,
        entry_point=f"{_PKG}.battleship:Battleship",
        vector_entry_point=f"{_PKG}.battleship:BattleshipVector",
        description=(
            f"POBAX Battleship (battleship_{size}): {size}x{size} board, ships of lengths "
            f"{', '.join(map(str, ships))} placed at random; each step fires at a cell and sees only whether it hit "
            f"(plus the action mask of cells not fired at); -1 per shot, +{cells} on sinking the last ship cell. "
            "Categories: spatial uncertainty, episode nonstationarity"
        ),
        suites=("POBAX",),
        memory_types=("spatial", "capacity"),
        episode_length=_T,
        xi=(2, _T - 1),
        obs_type="dict",
        action_type="discrete",
        source="POBAX",
        score="return",  # the paper plots returns; info["success"] is reported but not the score
        kwargs={"size": size},
        params=battleship.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("hits_misses_grid",),
        xi_note=(
            "per shot: whether it hit is seen at t_e >= 1 and shapes every later shot, from t_e+1 to the last: "
            f"xi = t_r - t_e + 1 in [2, T-1] = [2, {_T - 1}]; an agent that respects the action mask fires at most "
            f"{cells} shots, so xi <= {cells - 1} for it"
        ),
        notes=(
            "the authors' battleship.py (HEAD): observation dict {hit, action_mask} (the mask is also "
            "info['action_mask'], int8); firing at a cell fired at before is allowed (hit bit 0, -1), as in their "
            "code; oracle adds their perfect-memory grid (+1 hit, -1 miss, 0), full their StateWrapper stack (grid, "
            "ship board); the paper's ceiling is an optimal belief policy's mean return (Berry 2011), not a trained "
            "agent; gamma 1; cap 1000 steps. The repository README files Battleship under object uncertainty & "
            "tracking"
        ),
    )


TASKS: list[TaskSpec] = [
    _tmaze("POBAX/TMaze10-v0", 10),
    _rocksample("POBAX/RockSample11x11-v0", 11),
    _rocksample("POBAX/RockSample15x15-v0", 15),
    _battleship("POBAX/Battleship10-v0", 10),
    _battleship("POBAX/Battleship5-v0", 5),
    _battleship("POBAX/Battleship3-v0", 3),
]
