"""Catalogue entries of POBAX's masked MuJoCo tasks on Gymnasium's MuJoCo v5 (extra ``[mujoco]``):
``POBAX/<Robot>-P-v0`` and ``POBAX/<Robot>-V-v0`` for Walker, Hopper, Ant and HalfCheetah. The rules are in
:mod:`membench_envs.envs.backends.masked_mujoco`; the masks and kwargs are declared here, which the wrapper imports.

POBAX's ``<Robot>-F-v0`` (the whole observation) is ``obs_variant="full"`` of either ID, so it has no ID of its own.
The paper's benchmark keeps Walker-V and HalfCheetah-V (the memory-improvable ones of its Fig. 1); the other six are
the rest of Fig. 1. Category of partial observability: moment features.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: Per robot: Gymnasium's MuJoCo v5 class, its observation size, POBAX's Brax name and the constructor kwargs.
ROBOTS: dict[str, dict] = {
    "Walker": {"entry": "gymnasium.envs.mujoco.walker2d_v5:Walker2dEnv", "dim": 17, "gym": "Walker2d-v5"},
    "Hopper": {"entry": "gymnasium.envs.mujoco.hopper_v5:HopperEnv", "dim": 11, "gym": "Hopper-v5"},
    "Ant": {
        "entry": "gymnasium.envs.mujoco.ant_v5:AntEnv",
        "dim": 27,
        "gym": "Ant-v5",
        "kwargs": {"include_cfrc_ext_in_observation": False},  # Brax's use_contact_forces=False
    },
    "HalfCheetah": {
        "entry": "gymnasium.envs.mujoco.half_cheetah_v5:HalfCheetahEnv",
        "dim": 17,
        "gym": "HalfCheetah-v5",
    },
}
#: POBAX's ``mask_dims`` (pobax/envs/__init__.py ``masked_gymnax_env_map``): the observation indices each ID KEEPS.
MASKS: dict[str, dict[str, tuple[int, ...]]] = {
    "Walker": {"P": tuple(range(0, 8)), "V": tuple(range(8, 17))},
    "Hopper": {"P": tuple(range(0, 5)), "V": tuple(range(5, 11))},
    "Ant": {"P": tuple(range(0, 13)), "V": tuple(range(13, 27))},
    "HalfCheetah": {"P": (0, 1, 2, 3, 8, 9, 10, 11, 12), "V": (4, 5, 6, 7, 13, 14, 15, 16)},
}
#: What each kept set holds, in Gymnasium v5's labels.
KEPT: dict[str, dict[str, str]] = {
    "Walker": {
        "P": "rootz, rooty and the 6 joint angles",
        "V": "the velocities of rootx, rootz, rooty and of the 6 joints",
    },
    "Hopper": {"P": "rootz, rooty, thigh, leg, foot angles", "V": "the 6 velocities"},
    "Ant": {
        "P": "torso z, its quaternion (4) and the 8 joint angles",
        "V": "the torso's linear and angular velocity (6) and the 8 joint velocities",
    },
    "HalfCheetah": {
        "P": "rootz, rooty, bthigh, bshin angles + the velocities of rootx, rootz, rooty, bthigh, bshin",
        "V": "bfoot, fthigh, fshin, ffoot angles + their 4 velocities (positions too: the code's mask, kept literally)",
    },
}
#: The time limit: Brax's episode_length of POBAX's runs (and Gymnasium's v5 limit).
EPISODE_STEPS = 1000

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("robot", "choice", "Walker", choices=tuple(ROBOTS), doc="the Gymnasium MuJoCo v5 robot"),
    Param("mask", "choice", "V", choices=("P", "V"), doc="POBAX's mask: 'P' (its positions) or 'V' (its velocities)"),
    Param("max_steps", "int", EPISODE_STEPS, low=1, high=10**7, doc="T: the episode is truncated after it"),
)


def _xi(robot: str, mask: str) -> tuple[tuple[int, int], str]:
    """Xi and its derivation (as for POPGym's position-only / velocity-only CartPole)."""
    if mask == "P" and robot != "HalfCheetah":
        return (2, 2), (
            "the removed velocities are finite differences of the kept positions of two consecutive observations "
            "(divided by dt): xi = 2"
        )
    if mask == "V" and robot != "HalfCheetah":
        return (2, EPISODE_STEPS), (
            "the removed positions integrate every past kept velocity from the reset on: xi = t_r - t_e + 1 in "
            f"[2, T = {EPISODE_STEPS}]"
        )
    return (2, EPISODE_STEPS), (
        "the mask removes a leg's angles and velocities together (and, for V, the torso's height and pitch), which no "
        "finite difference of kept values gives: they are inferred through the dynamics from the whole history, "
        f"xi in [2, T = {EPISODE_STEPS}]"
    )


def _masked(robot: str, mask: str) -> TaskSpec:
    dim = ROBOTS[robot]["dim"]
    keep = MASKS[robot][mask]
    benchmark = (robot, mask) in (("Walker", "V"), ("HalfCheetah", "V"))
    return TaskSpec(
        id=f"POBAX/{robot}-{mask}-v0",
        entry_point="membench_envs.envs.backends.masked_mujoco:MaskedMujoco",
        description=(
            f"POBAX masked {ROBOTS[robot]['gym']} ({'velocities' if mask == 'V' else 'positions'} mask): "
            f"{len(keep)} of the {dim} observation dims kept ({KEPT[robot][mask]}); memory recovers the rest"
        ),
        suites=("POBAX",),
        memory_types=("sequential",),
        episode_length=EPISODE_STEPS,
        xi=_xi(robot, mask)[0],
        obs_type="vector",
        action_type="continuous",
        source="POBAX",
        score="return",  # the paper plots returns; info["success"] is reported but not the score
        extra="mujoco",
        kwargs={"robot": robot, "mask": mask},
        params=PARAMS,
        oracle_keys=("removed_dims",),
        xi_note=_xi(robot, mask)[1],
        notes=(
            f"POBAX {robot}-{mask}-v0 ({'in the benchmark' if benchmark else 'Fig. 1 only'}); keeps Gymnasium "
            f"v5 indices {list(keep)}; obs_variant='full' = POBAX's {robot}-F-v0. Physics: MuJoCo (Gymnasium v5), "
            "not Brax's positional backend: the masks match, absolute returns do not"
        ),
    )


TASKS: list[TaskSpec] = [_masked(robot, mask) for robot in ROBOTS for mask in ("P", "V")]
