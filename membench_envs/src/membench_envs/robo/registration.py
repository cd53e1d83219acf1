"""ManiSkill registrations of the MIKASA-Robo IDs, derived from the one table (``membench_envs.catalogue.robo``).

Each family module calls :func:`register_family` on its class at import, which registers ``membench-<Name>-v0`` for
every preset row of that class with ManiSkill (``gym.make("membench-RememberColor3-v0")`` then builds the raw
ManiSkill env with ManiSkill's own wrappers), with the preset's knobs as default kwargs and T from the same timing
rule as the catalogue. Users normally want the ``MIKASA/<Name>-v0`` IDs instead (membench's wrapper and checks).
"""

from __future__ import annotations

from mani_skill.utils.registration import register_env

from membench_envs.catalogue.robo import PRESETS


def register_family(cls: type) -> type:
    """Register ``membench-<Name>-v0`` with ManiSkill for every preset of ``cls``; returns ``cls``."""
    path = f"{cls.__module__}:{cls.__name__}"
    for p in PRESETS:
        if p.family.cls_path == path:
            register_env(p.maniskill_id, max_episode_steps=p.timing.T, **p.parameters)(cls)
    return cls
