"""MIKASA-Robo on ManiSkill3 (the ``[robo]`` extra): tabletop memory tasks on a Franka Panda.

Importing this package is cheap: ManiSkill (and torch) are imported only when an environment is made or a helper
that needs them is called. See :mod:`membench_envs.robo.base` for the platform and the observation contract.

Every task has one ID, ``gym.make("MIKASA/<Name>-v0")``, registered with gymnasium only: the task classes are not
registered with ManiSkill (the GPU path builds a class with ``num_envs`` directly; see
:mod:`membench_envs.catalogue.robo`, "One registration per ID").
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "make": "membench_envs.robo.entry",
    "make_vec": "membench_envs.robo.vector",
    "has_gpu": "membench_envs.robo.vector",
    "record_episode": "membench_envs.robo.video",
    "task_info": "membench_envs.robo.entry",
    "MemoryTabletopEnv": "membench_envs.robo.base",
    "RenderOverlay": "membench_envs.robo.wrappers",
    "MikasaRoboEnv": "membench_envs.robo.wrappers",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        if _LAZY[name] != "membench_envs.robo.entry":  # entry imports ManiSkill only when called
            from membench_envs._deps import require

            require("mani_skill", "robo")
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
