"""Catalogue entries of Memory Gym's Mystery Path (Pleines et al., "Memory Gym: Towards Endless Tasks to Benchmark
Memory Capabilities of Agents"; the ``memory-gym`` package, which MIKASA-Base vendors), re-implemented in numpy in
:mod:`membench_envs.envs.memory_gym.mystery_path`.

Upstream registers ``MysteryPath-v0`` (free movement, 512 steps), ``MysteryPath-Grid-v0`` (grid locomotion, 128
steps) and ``Endless-MysteryPath-v0`` (a scrolling, stamina-limited path): here ``MIKASA/MysteryPath-v0``,
``MIKASA/MysteryPathGrid-v0`` and ``MIKASA/EndlessMysteryPath-v0``.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.memory_gym import endless_mystery_path, mystery_path

_EP = "membench_envs.envs.memory_gym.mystery_path:MysteryPath"
_VEP = "membench_envs.envs.memory_gym.mystery_path:MysteryPathVector"


def _mystery_path(env_id: str, grid: bool, upstream: str) -> TaskSpec:
    T, progress = mystery_path.DEFAULTS[grid]
    movement = (
        "grid locomotion (0 wait, 1 turn left, 2 turn right, 3 forward one tile)"
        if grid
        else "free movement (MultiDiscrete([3, 3]): [0 none, 1 left, 2 right], [0 none, 1 up, 2 down]; 3 px per step, "
        "2 px per axis diagonally)"
    )
    return TaskSpec(
        id=env_id,
        entry_point=_EP,
        vector_entry_point=_VEP,
        description=(
            f"Mystery Path{' Grid' if grid else ''}: walk an invisible path across a 7x7 board from one side to the "
            f"other; stepping off it sends the agent back to the start (+1 at the goal"
            f"{', +0.1 per new path tile' if progress else ''}); 84x84 image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("capacity", "spatial"),
        episode_length=T,
        xi=(8, 26),
        obs_type="dict",
        action_type="discrete" if grid else "multi-discrete",
        source="MemoryGym",
        score="return",  # the rule: membench_envs.envs.memory_gym
        kwargs={"grid": grid},
        params=mystery_path.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("path",),
        xi_note=(
            "Table 2 of the memory-classification paper gives [8, 26] for 'Mystery Path (finite)' without naming the "
            "version or deriving it; it is used for both finite versions. Event: the agent learns that a tile is on "
            "or off the path (by standing on it, or by the cross when it falls); recall: the next time it must "
            "choose at that tile, after walking back from the start"
        ),
        notes=(
            f"memory-gym {upstream} (MIKASA-Base vendors it), its default reset parameters: max_steps={T}, "
            f"reward_goal=1, reward_path_progress={progress}, reward_fall_off=0, reward_step=0, no origin / goal "
            f"shown, visual feedback on; {movement}. The time limit is a truncation here (upstream reports "
            "done=True, truncated=False). Upstream IDs: MysteryPath-v0, MysteryPath-Grid-v0, Endless-MysteryPath-v0"
        ),
    )


TASKS = [
    _mystery_path("MIKASA/MysteryPath-v0", False, "MysteryPath-v0"),
    _mystery_path("MIKASA/MysteryPathGrid-v0", True, "MysteryPath-Grid-v0"),
    TaskSpec(
        id="MIKASA/EndlessMysteryPath-v0",
        entry_point="membench_envs.envs.memory_gym.endless_mystery_path:EndlessMysteryPath",
        vector_entry_point="membench_envs.envs.memory_gym.endless_mystery_path:EndlessMysteryPathVector",
        description=(
            "Endless Mystery Path: an endless invisible path scrolls by from left to right; only the last tiles "
            "behind the agent are shown; a fall sends it back to the start, a second fall at the same spot, a fall "
            "behind its furthest column or 20 steps without a new tile end the episode (+0.1 per new tile); "
            "84x84 image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("capacity", "spatial"),
        episode_length=None,
        xi=None,
        obs_type="dict",
        action_type="discrete",
        source="MemoryGym",
        score="return",  # the rule: membench_envs.envs.memory_gym
        kwargs={},
        params=endless_mystery_path.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("path_window",),
        xi_note=(
            "undefined: the memory paper's Table 2 lists only the finite Mystery Path, and here the distance between "
            "learning a tile (a fall) and using it grows with the furthest column reached, without bound"
        ),
        notes=(
            "memory-gym Endless-MysteryPath-v0 (MIKASA-Base vendors it), its default reset parameters: stamina 20, "
            "reward_path_progress=0.1, past path shown (5 columns back), camera 5 tiles behind, no background, no "
            "stamina bar, no step limit; actions 0 none, 1 right, 2 up, 3 down (3 px). Episodes end only by the "
            "rules (terminated). The start tile never refills the stamina: MIKASA-Base's fix of memory-gym 1.0.2, "
            "whose check `(node.x, node.y) == self.start` compares a tuple with the start node and is never true, "
            "so there the step back on the start after a fall refills it (one step more per fall; "
            "start_refills_stamina=True, used by the parity tests). Upstream never clears its list of fall spots "
            "(it checks for a new furthest column before updating it), kept. Upstream IDs: MysteryPath-v0, "
            "MysteryPath-Grid-v0, Endless-MysteryPath-v0"
        ),
    ),
]
