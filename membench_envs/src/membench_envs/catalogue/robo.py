"""Catalogue entries of MIKASA-Robo (the ``[robo]`` extra, ManiSkill3). Plain data: nothing here imports ManiSkill.

Every entry's gymnasium entry point is ``membench_envs.robo.entry:make_robo_env`` with the task class in
``kwargs["robo_env"]``; ``gym.make_vec`` goes through ``make_robo_vec`` (GPU-batched or AsyncVectorEnv of CPU envs).
Add a family with one ``_robo(...)`` call per ID (and its ``PHASES`` / ``PARAMETERS``).
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec

_EP = "membench_envs.robo.entry:make_robo_env"
_VEP = "membench_envs.robo.entry:make_robo_vec"
ROBO_VARIANTS = ("partial", "oracle", "full", "rgb")

#: Phase timing of every ID at its default parameters: ((phase, first step), ...); steps are observation indices.
PHASES: dict[str, tuple[tuple[str, int], ...]] = {}
#: Default task parameters (the App. M knobs) of every ID.
PARAMETERS: dict[str, dict] = {}


def _robo(
    env_id: str,
    cls_path: str,
    description: str,
    memory_types: tuple[str, ...],
    T: int,
    xi: tuple[int, int],
    oracle_keys: tuple[str, ...],
    phases: tuple[tuple[str, int], ...],
    parameters: dict,
    xi_note: str = "",
    notes: str = "",
    variants: tuple[str, ...] = ROBO_VARIANTS,
) -> TaskSpec:
    PHASES[env_id] = phases
    PARAMETERS[env_id] = parameters
    return TaskSpec(
        id=env_id,
        entry_point=_EP,
        vector_entry_point=_VEP,
        description=description,
        suites=("MIKASA-Robo",),
        memory_types=memory_types,
        episode_length=T,
        xi=xi,
        obs_type="dict",
        action_type="continuous",
        source="MIKASA",
        extra="robo",
        # gymnasium's passive checker converts observations to numpy: impossible for GPU (CUDA tensor) batches.
        disable_env_checker=True,
        kwargs={"robo_env": cls_path, "membench_id": env_id},
        variants=variants,
        oracle_keys=oracle_keys,
        xi_note=xi_note,
        notes=notes,
    )


_REMEMBER_PHASES = (("cue", 0), ("delay", 5), ("choice", 10))
_REMEMBER_XI = (7, 60)
_REMEMBER_XI_NOTE = (
    "cue visible at t=0..4, choice possible at t=10..59; xi = t_recall - t_cue + 1 ranges from 10-4+1=7 to 59-0+1=60"
)
_REMEMBER_NOTES = (
    "Choice objects are parked out of physics and cameras while hidden and return to their recorded slots at t=10 "
    "(fixes upstream PR #6); success also requires the choice phase (upstream counts touching the cue)."
)


def _remember_color(n: int) -> TaskSpec:
    return _robo(
        f"MIKASA/RememberColor{n}-v0",
        f"membench_envs.robo.remember_color:RememberColor{n}Env",
        f"Panda: a cube of one colour is shown (t=0-4), the table is empty (t=5-9), then {n} cubes of distinct colours "
        "appear; touch the one with the shown colour and hold still",
        ("object",),
        60,
        _REMEMBER_XI,
        ("true_color_indices",),
        _REMEMBER_PHASES,
        {"colors": n, "time_offset": 5, "delta_time": 5, "goal_thresh": 0.05, "cube_halfsize": 0.02,
         "episode_steps": 60},
        _REMEMBER_XI_NOTE,
        _REMEMBER_NOTES,
    )


def _remember_shape(n: int) -> TaskSpec:
    return _robo(
        f"MIKASA/RememberShape{n}-v0",
        f"membench_envs.robo.remember_shape:RememberShape{n}Env",
        f"Panda: one blue object is shown (t=0-4), the table is empty (t=5-9), then {n} blue objects of distinct "
        "shapes appear; touch the one with the shown shape and hold still",
        ("object",),
        60,
        _REMEMBER_XI,
        ("true_shape_indices",),
        _REMEMBER_PHASES,
        {"shapes": n, "time_offset": 5, "delta_time": 5, "goal_thresh": 0.05, "shape_scale": 0.02,
         "color": [0, 0, 255, 255], "episode_steps": 60},
        _REMEMBER_XI_NOTE,
        _REMEMBER_NOTES,
    )


def _remember_shape_and_color(n_shapes: int, n_colors: int) -> TaskSpec:
    extra = ""
    if (n_shapes, n_colors) == (3, 2):
        extra = (
            " 3x2 follows the paper (cube/sphere/t-shape x red/green); the public code builds 2 shapes x 3 colours "
            "(n_shapes=2, n_colors=3)."
        )
    return _robo(
        f"MIKASA/RememberShapeAndColor{n_shapes}x{n_colors}-v0",
        f"membench_envs.robo.remember_shape_and_color:RememberShapeAndColor{n_shapes}x{n_colors}Env",
        f"Panda: one object is shown (t=0-4), the table is empty (t=5-9), then all {n_shapes * n_colors} "
        f"(shape, colour) pairs of {n_shapes} shapes x {n_colors} colours appear; touch the exact match",
        ("object",),
        60,
        _REMEMBER_XI,
        ("true_shapes_info", "true_colors_info"),
        _REMEMBER_PHASES,
        {"n_shapes": n_shapes, "n_colors": n_colors, "time_offset": 5, "delta_time": 5, "goal_thresh": 0.05,
         "shape_scale": 0.02, "episode_steps": 60},
        _REMEMBER_XI_NOTE,
        _REMEMBER_NOTES + extra,
    )


TASKS: list[TaskSpec] = [
    *[_remember_color(n) for n in (3, 5, 9)],
    *[_remember_shape(n) for n in (3, 5, 9)],
    *[_remember_shape_and_color(s, c) for s, c in ((3, 2), (3, 3), (5, 3))],
]
