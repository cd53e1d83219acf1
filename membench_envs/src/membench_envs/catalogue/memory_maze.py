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
the maximum is T, as in both of the paper's rows.

The variant IDs that the package (and MIKASA-Base, which copies its registrations) adds to each size are kwargs
here, one per option, so they combine as the package's option words do:

=============================  ==================================================================================
package / MIKASA-Base suffix   kwargs here
=============================  ==================================================================================
``-Vis``                       ``good_visibility=True``
``-HD``                        ``camera_resolution=256``
``-Top``                       ``top_camera=True, camera_resolution=256`` (the image is the top-down camera)
``-HiFreq``                    ``control_freq=40`` (10x the steps: T = 10000 ... 40000)
``-Oracle``                    ``show_path=True`` (a minimap with the route to the prompted target on the image)
``-6CL``                       ``randomize_colors=True``
``-ExtraObs``                  ``obs_variant="full"`` (the package's global observables, and more)
=============================  ==================================================================================

``-Oracle`` is the package's oracle, not membench's ``obs_variant="oracle"``: it draws the shortest route to the
prompted target into the picture, so the task needs no memory; ``obs_variant="oracle"`` adds the remembered facts
as a separate vector and leaves the picture alone. The package's IDs without ``-ExtraObs`` return the picture
only, ours ``{"image", "target_color"}`` (see :mod:`membench_envs.envs.backends.memory_maze`).
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: The package's control frequency (steps per simulated second).
CONTROL_FREQ = 4
#: Control frequencies the package's physics allows: its control step must be a whole number of 5 ms physics steps.
CONTROL_FREQS = (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 200)
#: Per maze side: (targets, time limit in seconds) of the package's ``memory_maze_<n>x<n>`` task.
SIZES = {9: (3, 250), 11: (4, 500), 13: (5, 750), 15: (6, 1000)}
#: Ξ of the memory-classification paper's Table 2.
XI_PAPER = {9: (28, 1000), 15: (45, 4000)}

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("size", "int", 9, low=9, high=15, odd=True, doc="maze side without the outer wall (9, 11, 13, 15)"),
    Param("good_visibility", "bool", False, doc="the package's '-Vis' IDs: lower walls, targets raised above them"),
    Param(
        "randomize_colors",
        "bool",
        False,
        doc="the package's '-6CL' IDs: the targets' colours drawn from all six every episode",
    ),
    Param(
        "camera_resolution",
        "int",
        64,
        low=64,
        high=256,
        doc="side of the first-person image (the package's '-HD' IDs: 256; below 64 its border is drawn wrong)",
    ),
    Param(
        "top_camera",
        "bool",
        False,
        doc="the package's '-Top' IDs (with camera_resolution=256): the image is a camera above the maze looking "
        "down, the ball drawn with ears to show its heading",
    ),
    Param(
        "control_freq",
        "choice",
        CONTROL_FREQ,
        choices=CONTROL_FREQS,
        doc="agent steps per simulated second; the time limit stays in seconds, so T grows with it (the "
        "package's '-HiFreq' IDs: 40, 10x the steps)",
    ),
    Param(
        "show_path",
        "bool",
        False,
        doc="the package's '-Oracle' IDs: a minimap of the maze with the shortest route to the prompted target "
        "drawn over the image's top-right corner (the task then needs no memory)",
    ),
)


def env_id(size: int) -> str:
    """The ID of a maze side (also named in the wrapper's errors for other kwargs)."""
    return f"MIKASA/MemoryMaze{size}x{size}-v0"


def episode_length(size: int, control_freq: int = CONTROL_FREQ) -> int:
    """T: the package's time limit in control steps."""
    return SIZES[size][1] * control_freq


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
        id=env_id(size),
        entry_point="membench_envs.envs.backends.memory_maze:make_memory_maze",
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
            + (
                "Both values are the memory-classification paper's Table 2."
                if paper
                else f"Table 2 lists 9x9 [28, 1000] and 15x15 [45, 4000] without a derivation; the minimum here is "
                f"interpolated linearly in the side between 28 and 45 ({lo}), the maximum is T."
            )
        ),
        notes=(
            f"memory-maze 1.0.3 memory_maze_{size}x{size}() = MIKASA-Base MemoryMaze-{size}x{size}-v0: "
            f"{targets} targets, time limit {seconds} s at {CONTROL_FREQ} Hz = {T} steps (truncated), 6 discrete "
            "actions (noop, forward, left, right, forward+left, forward+right), +1 per prompted target reached. "
            "The package's variant IDs are kwargs: -Vis good_visibility, -HD camera_resolution=256, -6CL "
            "randomize_colors, -Top top_camera (+ camera_resolution=256), -HiFreq control_freq=40, -Oracle "
            "show_path. render_mode='human' is refused (a pygame window breaks MuJoCo's offscreen context)"
        ),
    )


TASKS: list[TaskSpec] = [_spec(size) for size in SIZES]
