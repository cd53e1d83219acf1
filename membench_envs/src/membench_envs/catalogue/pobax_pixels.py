"""Catalogue entries of POBAX's visual continuous control (``ant_pixels``, ``halfcheetah_pixels``) on Gymnasium's
MuJoCo v5 tasks, rendered by MuJoCo's own headless OpenGL (extra ``[mujoco]``): ``POBAX/Ant-Pixels-v0`` and
``POBAX/HalfCheetah-Pixels-v0``. The rules are in :mod:`membench_envs.envs.backends.pixel_mujoco`; the kwargs are
declared here, which the wrapper imports.

Category of partial observability (paper §6.1): visual occlusion and moment features (one frame shows no
velocity). The authors' code also names ``walker2d_pixels`` and ``hopper_pixels``, which the paper leaves out.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.catalogue.pobax_mujoco import EPISODE_STEPS, ROBOTS
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: The robots of the paper's benchmark, and the authors' environment names.
PIXEL_ROBOTS: dict[str, str] = {"Ant": "ant_pixels", "HalfCheetah": "halfcheetah_pixels"}
#: The picture's side: the authors' ``image_size`` (32 in every script and in the paper).
IMAGE_SIZE = 32

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("robot", "choice", "Ant", choices=tuple(PIXEL_ROBOTS), doc="the Gymnasium MuJoCo v5 robot"),
    Param("image_size", "int", IMAGE_SIZE, low=8, high=512, doc="the picture's side in pixels (the authors' 32)"),
    Param("max_steps", "int", EPISODE_STEPS, low=1, high=10**7, doc="T: the episode is truncated after it"),
)


def _pixels(robot: str) -> TaskSpec:
    dim = ROBOTS[robot]["dim"]
    return TaskSpec(
        id=f"POBAX/{robot}-Pixels-v0",
        entry_point="membench_envs.envs.backends.pixel_mujoco:PixelMujoco",
        description=(
            f"POBAX visual {ROBOTS[robot]['gym']}: one {IMAGE_SIZE}x{IMAGE_SIZE} RGB frame from the tracking camera "
            f"per step instead of the {dim} state dims (no frame stacking), so velocities must be inferred from "
            "the frames seen"
        ),
        suites=("POBAX",),
        memory_types=("sequential",),
        episode_length=EPISODE_STEPS,
        xi=(2, EPISODE_STEPS),
        obs_type="image",
        action_type="continuous",
        source="POBAX",
        score="return",  # the paper plots returns
        extra="mujoco",
        kwargs={"robot": robot},
        params=PARAMS,
        oracle_keys=("state",),
        xi_note=(
            "velocities are differences of the poses of two consecutive frames (xi = 2); the torso's height and "
            "where it is relative to the floor pattern integrate the whole history of the motion, so xi ranges "
            f"up to T = {EPISODE_STEPS}"
        ),
        notes=(
            f"POBAX {PIXEL_ROBOTS[robot]}; categories: visual occlusion, moment features. Pictures from MuJoCo's "
            "OpenGL renderer (EGL / OSMesa, CPU), a substitute for the authors' CUDA-only Madrona batch renderer: "
            f"other shading, same camera (camera 0, 'track'). full = Gymnasium's ({dim},) state observation (the "
            "ceiling input); physics: MuJoCo, not Brax's positional backend"
        ),
    )


TASKS: list[TaskSpec] = [_pixels(robot) for robot in PIXEL_ROBOTS]
