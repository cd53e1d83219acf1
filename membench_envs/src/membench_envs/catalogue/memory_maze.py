"""Catalogue entries of Memory Maze (Pasukonis et al., "Evaluating Long-Term Memory in 3D Mazes", 2022): the
package ``memory-maze`` 1.0.3's dm_env tasks ``memory_maze_9x9`` … ``memory_maze_15x15``, as MIKASA-Base registers
them (``MemoryMaze-9x9-v0`` … ``MemoryMaze-15x15-v0``, copied from the package).

================================  ==========================  =========  =======  =================
membench ID                       MIKASA-Base / package ID    targets    T        Ξ
================================  ==========================  =========  =======  =================
MIKASA/MemoryMaze9x9-v0           MemoryMaze-9x9-v0           3          1000     [28, 1000] (paper)
MIKASA/MemoryMaze11x11-v0         MemoryMaze-11x11-v0         4          2000     [34, 2000]
MIKASA/MemoryMaze13x13-v0         MemoryMaze-13x13-v0         5          3000     [39, 3000]
MIKASA/MemoryMaze15x15-v0         MemoryMaze-15x15-v0         6          4000     [45, 4000] (paper)
================================  ==========================  =========  =======  =================

T: the package's time limit (250, 500, 750, 1000 s) at its 4 Hz control (the episode is truncated after
T steps). Ξ: the memory-classification paper's Table 2 gives 9x9 and 15x15; it does not say how its minimum was
found, so for 11x11 and 13x13 the minimum is interpolated linearly in the maze side between the two (rounded) and
the maximum is T, as in both of the paper's rows. The kwargs of the package's variant IDs are kwargs here
(``good_visibility=True``: ``-Vis``; ``camera_resolution=256``: ``-HD``; ``randomize_colors=True``: ``-6CL``).
"""

from __future__ import annotations

from membench_envs.catalogue import VARIANTS, TaskSpec
from membench_envs.envs._params import Param

#: The package's control frequency (steps per simulated second).
CONTROL_FREQ = 4
#: Per maze side: (targets, time limit in seconds) of the package's ``memory_maze_<n>x<n>`` task.
SIZES = {9: (3, 250), 11: (4, 500), 13: (5, 750), 15: (6, 1000)}
#: Ξ of the memory-classification paper's Table 2.
XI_PAPER = {9: (28, 1000), 15: (45, 4000)}

PARAMS: tuple[Param, ...] = (
    Param("obs_variant", "choice", "partial", choices=VARIANTS, doc="the observation ladder rung"),
    Param("size", "int", 9, low=9, high=15, odd=True, doc="maze side without the outer wall (9, 11, 13, 15)"),
    Param("good_visibility", "bool", False, doc="the package's '-Vis' IDs: lower walls, targets raised above them"),
    Param("randomize_colors", "bool", False,
          doc="the package's '-6CL' IDs: the targets' colours drawn from all six every episode"),
    Param("camera_resolution", "int", 64, low=64, high=256,
          doc="side of the first-person image (the package's '-HD' IDs: 256; below 64 its border is drawn wrong)"),
)


def episode_length(size: int) -> int:
    """T: the package's time limit in control steps."""
    return SIZES[size][1] * CONTROL_FREQ


def xi(size: int) -> tuple[int, int]:
    """Ξ: Table 2's values for 9x9 and 15x15; in between, its minimum interpolated in the side, maximum T."""
    if size in XI_PAPER:
        return XI_PAPER[size]
    (lo9, _), (lo15, _) = XI_PAPER[9], XI_PAPER[15]
    return round(lo9 + (lo15 - lo9) * (size - 9) / 6), episode_length(size)


def _spec(size: int) -> TaskSpec:
    targets, seconds = SIZES[size]
    T = episode_length(size)
    lo, hi = xi(size)
    paper = size in XI_PAPER
    return TaskSpec(
        id=f"MIKASA/MemoryMaze{size}x{size}-v0",
        entry_point="membench_envs.envs.memory_maze:MemoryMaze",
        description=(
            f"Memory Maze {size}x{size}: a new 3-D maze with {targets} coloured targets every episode; the prompt "
            "(a border of the 64x64 first-person image) names a colour, +1 for touching that target, then a new "
            f"prompt; {T} steps"
        ),
        suites=("MIKASA-Base",),
        memory_types=("spatial",),
        episode_length=T,
        xi=(lo, hi),
        obs_type="dict",
        action_type="discrete",
        source="MemoryMaze",
        extra="memory-maze",
        kwargs={"size": size},
        params=PARAMS,
        oracle_keys=("agent_pos", "agent_dir", "target_pos", "maze_layout"),
        xi_paper=None,
        xi_note=(
            f"event: a target seen; recall: heading back to it when its colour is prompted, anywhere up to the "
            f"end of the episode (max = T = {T}). "
            + ("Both values are the memory-classification paper's Table 2." if paper else
               f"Table 2 lists 9x9 [28, 1000] and 15x15 [45, 4000] without a derivation; the minimum here is "
               f"interpolated linearly in the side between 28 and 45 ({lo}), the maximum is T.")
        ),
        notes=(
            f"memory-maze 1.0.3 memory_maze_{size}x{size}() = MIKASA-Base MemoryMaze-{size}x{size}-v0: "
            f"{targets} targets, time limit {seconds} s at {CONTROL_FREQ} Hz = {T} steps (truncated), 6 discrete "
            "actions (noop, forward, left, right, forward+left, forward+right), +1 per prompted target reached"
        ),
    )


TASKS: list[TaskSpec] = [_spec(size) for size in SIZES]
