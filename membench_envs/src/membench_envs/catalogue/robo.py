"""Catalogue entries of MIKASA-Robo (the ``[robo]`` extra, ManiSkill3). Plain data: nothing here imports ManiSkill.

Every entry's gymnasium entry point is ``membench_envs.robo.entry:make_robo_env`` with the task class in
``kwargs["robo_env"]``; ``gym.make_vec`` goes through ``make_robo_vec`` (GPU-batched or AsyncVectorEnv of CPU envs).
Add a family with one ``_robo(...)`` call per ID (and its ``PHASES`` / ``PARAMETERS``).
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs._params import Param

_EP = "membench_envs.robo.entry:make_robo_env"
_VEP = "membench_envs.robo.entry:make_robo_vec"
ROBO_VARIANTS = ("partial", "oracle", "full", "rgb")

#: The kwargs every MIKASA-Robo ID takes (see ``membench_envs.robo.entry``); ManiSkill's own ``BaseEnv`` kwargs
#: (``sim_config``, ``sensor_configs``, ...) pass through unchecked here and are checked by ManiSkill.
COMMON_PARAMS: tuple[Param, ...] = (
    Param("obs_variant", "choice", None, none_ok=True, choices=("partial", "oracle", "full", "rgb", "prompt"),
          doc="the observation (None: 'partial', or what obs_mode says)"),
    Param("obs_mode", "choice", None, none_ok=True,
          choices=("rgb+joints", "rgb+joint", "rgb+joints+oracle", "state", "rgb", "rgb+joints+prompt"),
          doc="the paper's name for the observation, instead of obs_variant"),
    Param("num_envs", "int", 1, low=1, doc="sub-scenes simulated together (> 1 needs a GPU)"),
    Param("sim_backend", "choice", "auto", choices=("auto", "physx_cpu", "physx_cuda", "cpu", "gpu")),
    Param("render_backend", "choice", None, none_ok=True, choices=("none", "cpu", "gpu", "sapien_cpu", "sapien_cuda")),
    Param("batched", "bool", None, none_ok=True, doc="force the batched torch interface"),
    Param("clip_actions", "bool", False, doc="clip out-of-range actions instead of raising"),
    Param("render_overlay", "bool", False, doc="draw the phase / reward overlay on rendered frames"),
    Param("terminate_on_success", "bool", True, doc="False: every episode runs the full T steps"),
    Param("episode_steps", "int", None, low=1, none_ok=True, doc="T (None: the task's default)"),
    Param("robot_init_qpos_noise", "float", 0.02, low=0.0),
    Param("control_mode", "choice", "pd_joint_delta_pos", choices=("pd_joint_delta_pos", "pd_ee_delta_pose")),
    Param("reward_mode", "choice", None, none_ok=True, choices=("sparse", "dense", "normalized_dense", "none")),
    Param("robot_uids", "choice", "panda_wristcam", choices=("panda_wristcam", "panda")),
)
_REMEMBER_PARAMS: tuple[Param, ...] = (
    Param("time_offset", "int", None, low=1, none_ok=True, doc="steps the cue is shown"),
    Param("delta_time", "int", None, low=0, none_ok=True, doc="steps of empty table after the cue"),
    Param("goal_thresh", "float", None, low=0.0, low_open=True, none_ok=True, doc="touch distance (m)"),
)
_SHELL_PARAMS: tuple[Param, ...] = tuple(
    Param(name, "float", None, low=0.0, low_open=True, none_ok=True)
    for name in ("ball_radius", "min_dist", "goal_thresh", "mug_radius", "mug_height")
) + (
    Param("time_offset", "int", None, low=1, none_ok=True, doc="steps the ball is visible"),
    Param("center_range", "float", None, low=0.0, none_ok=True),
    Param("mug_yaw", "float", None, none_ok=True),
)
#: Task parameters of each family (App. M), keyed by the class-path prefix of its ``robo_env``.
TASK_PARAMS: dict[str, tuple[Param, ...]] = {
    "membench_envs.robo.remember_color:": _REMEMBER_PARAMS + (
        Param("colors", "int", None, low=1, high=9, none_ok=True, doc="cubes of distinct colours"),
        Param("cube_halfsize", "float", None, low=0.0, low_open=True, none_ok=True),
    ),
    "membench_envs.robo.remember_shape:": _REMEMBER_PARAMS + (
        Param("shapes", "int", None, low=1, high=9, none_ok=True, doc="objects of distinct shapes"),
        Param("shape_scale", "float", None, low=0.0, low_open=True, none_ok=True),
        Param("color", "ints", None, low=0, high=255, length=(3, 4), none_ok=True, doc="RGB(A), 0-255"),
    ),
    "membench_envs.robo.remember_shape_and_color:": _REMEMBER_PARAMS + (
        Param("n_shapes", "int", None, low=1, high=5, none_ok=True),
        Param("n_colors", "int", None, low=1, high=3, none_ok=True),
        Param("shape_scale", "float", None, low=0.0, low_open=True, none_ok=True),
    ),
    "membench_envs.robo.shell_game:ShellGameTouch": _SHELL_PARAMS,
    "membench_envs.robo.shell_game:": _SHELL_PARAMS + (
        Param("goal_offset", "floats", None, length=3, none_ok=True, doc="(dx, dy, dz) of the goal from the ball"),
        Param("reach_thresh", "float", None, low=0.0, low_open=True, none_ok=True),
    ),
}


def robo_params(env_id: str, cls_path: str) -> tuple[Param, ...]:
    """Every kwarg of one MIKASA-Robo ID: its registration, the common kwargs and its family's task parameters."""
    family = next(v for k, v in TASK_PARAMS.items() if cls_path.startswith(k))
    registration = (Param("robo_env", "choice", cls_path, choices=(cls_path,)),
                    Param("membench_id", "choice", env_id, choices=(env_id,)))
    return registration + COMMON_PARAMS + family

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
        params=robo_params(env_id, cls_path),
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
