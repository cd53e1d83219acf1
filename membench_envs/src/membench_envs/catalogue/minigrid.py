"""Catalogue entries of MiniGrid-Memory (minigrid 3.2.0 ``MemoryEnv``) in the set-ups of the memory-classification
paper (Cherepanov et al., App. F and §5.1): ``MIKASA/MiniGridMemoryS<size>-v0`` (fixed corridor) and
``MIKASA/MiniGridMemoryS<size>Random-v0`` (variable corridor).

Fixed vs variable. minigrid's ``MemoryEnv`` has one flag, ``random_length``: False puts the junction at the
fixed column ``size - 2`` (hallway end ``size - 3``); True draws the hallway end uniformly in ``[4, size - 3]``
every episode. In both, the agent starts facing east at a uniformly random cell of the corridor row
(columns ``1 .. hallway end``), which is the paper's "instantiated at a random position within the corridor".
The paper's "fixed L" / "variable L" is the corridor length, i.e. this flag. The start position does not
change ξ: whatever the start, the last sight of the start-room object on a shortest route is at a fixed
distance from the junction, so ξ = hallway end + 2 = size − 1 in the fixed set-up (the paper's L = 21,
ξ = 22 is size 23) and ξ ∈ [6, size − 1] in the variable one (the paper writes [7, L + 1]; minigrid's
shortest corridor, hallway end 4, gives 6). ``tests/envs/test_minigrid.py`` measures ξ with a scripted
optimal agent.

minigrid registers S7/S9/S11/S13 (fixed) and S13Random/S17Random (variable); size 23 is the paper's
experiment (§5.1, Fig. 5), registered in both set-ups.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec

#: The paper's time limit (App. F): the episode ends after 95 steps; reward on success 1 − 0.9·t/95.
TIME_LIMIT = 95

FIXED_SIZES = (7, 9, 11, 13, 23)
RANDOM_SIZES = (13, 17, 23)


def _spec(size: int, random_length: bool) -> TaskSpec:
    hi = size - 1
    lo = 6 if random_length else hi
    mode = "variable corridor (random_length=True)" if random_length else "fixed corridor"
    paper = " (the paper's §5.1 set-up, L = 21)" if size == 23 else ""
    return TaskSpec(
        id=f"MIKASA/MiniGridMemoryS{size}{'Random' if random_length else ''}-v0",
        entry_point="membench_envs.envs.minigrid:MiniGridMemory",
        description=(
            f"MiniGrid-Memory {size}x{size}, {mode}{paper}: see the object in the start room, walk the corridor, "
            "enter the arm of the matching object; 3x3 view, 95 steps, reward 1 − 0.9·t/95 on success"
        ),
        suites=("MIKASA-Base", "MEM"),
        memory_types=("object",),
        episode_length=TIME_LIMIT,
        xi=(lo, hi),
        obs_type="dict",
        action_type="discrete",
        source="MEM",
        extra="minigrid",
        kwargs={"size": size, "random_length": random_length},
        oracle_keys=("start_object",),
        # Table 2: fixed {L+1}, variable [7, L+1], with L = size - 2 the corridor length (L = 21 for size 23).
        xi_paper=(7, size - 1) if random_length else (size - 1, size - 1),
        xi_note=(
            "event: last sight of the start-room object; recall: the step into the matching arm. On a shortest "
            "route xi = hallway_end + 2 whatever the start cell"
            + (f"; hallway_end in [4, {size - 3}] -> xi in [6, {hi}] (paper: [7, L+1])" if random_length
               else f"; hallway_end = {size - 3} -> xi = {hi} (paper: {{L+1}})")
        ),
        notes=(
            "minigrid 3.2.0 MemoryEnv with agent_view_size=3 (minigrid default 7), max_steps=95 (minigrid default "
            "5·size²), actions {left, right, forward} as in the paper authors' code (minigrid's other 4 actions are "
            "no-ops here; full_action_space=True restores them). The episode ends when the agent steps into the "
            "cell next to either end object (the paper: 'turns at the junction') or after 95 steps."
        ),
    )


TASKS: list[TaskSpec] = [_spec(s, False) for s in FIXED_SIZES] + [_spec(s, True) for s in RANDOM_SIZES]
