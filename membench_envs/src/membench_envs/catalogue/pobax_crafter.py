"""Catalogue entry of POBAX's no-inventory Crafter (``craftax_pixels``) on ``craftax`` with CPU jax (extra
``[craftax]``): ``POBAX/Crafter-v0``. The rules are in :mod:`membench_envs.envs.backends.pobax_crafter`; the kwargs are
declared here, which the wrapper imports.

Category of partial observability (paper §6.1): visual occlusion (the inventory is cropped out), spatial uncertainty
and object uncertainty & tracking (the authors' README: object uncertainty & tracking and spatial uncertainty).
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: The time limit: POBAX's ``CraftaxGymnaxWrapper.max_steps_in_episode`` (and craftax's own ``max_timesteps``).
EPISODE_STEPS = 100_000
#: Craftax's view: 9 map rows x 11 columns of blocks, then 4 inventory rows; POBAX renders 3 x 3 pixels per block.
MAP_ROWS, COLUMNS, INVENTORY_ROWS, BLOCK_PIXELS = 9, 11, 4, 3
#: Full Craftax's action set (``craftax.craftax.constants.Action``).
NUM_ACTIONS = 43
#: The symbolic observation of ``Craftax-Symbolic-v1``.
SYMBOLIC_DIM = 8268

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "max_steps",
        "int",
        EPISODE_STEPS,
        low=1,
        high=10**9,
        doc="T: the episode is truncated after it (the authors' 100000)",
    ),
)

TASKS: list[TaskSpec] = [
    TaskSpec(
        id="POBAX/Crafter-v0",
        entry_point="membench_envs.envs.backends.pobax_crafter:POBAXCrafter",
        vector_entry_point="membench_envs.envs.backends.pobax_crafter:POBAXCrafterVector",
        description=(
            "POBAX no-inventory Crafter (full Craftax, 43 actions, 65 achievements): a (27, 33, 3) top-down picture "
            "of the 9 x 11 blocks around the agent at 3 px per block, with the 4 inventory rows cropped out, so "
            "the agent must remember its items, health, food, drink and energy"
        ),
        suites=("POBAX",),
        memory_types=("object", "spatial"),
        episode_length=EPISODE_STEPS,
        xi=(2, EPISODE_STEPS),
        obs_type="image",
        action_type="discrete",
        source="POBAX",
        score="return",  # the paper plots returns
        extra="craftax",
        params=PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("inventory_rows",),
        xi_note=(
            "the inventory and the intrinsics change at the steps that collect, craft, eat or get hurt and stay "
            "hidden afterwards: what one step changes can decide an action at any later step, so "
            f"xi = t_r - t_e + 1 ranges from 2 to T = {EPISODE_STEPS}"
        ),
        notes=(
            "POBAX craftax_pixels; categories: visual occlusion, spatial uncertainty, object uncertainty & tracking. "
            "partial = rows [:27] of a 3-px-per-block Craftax picture; oracle = the whole (39, 33, 3) picture "
            "(the paper's ceiling: regular Crafter with the inventory, which at 3 px shows the items held, not "
            "counts or health); full = Craftax-Symbolic-v1's (8268,) "
            "observation of the same state (the code's ceiling, craftax_ppo_observable_best). jax compiles for "
            "2-3 minutes per batch size on a CPU"
        ),
    )
]
