"""Register every catalogue entry with gymnasium. Lazy: entry points are strings, imported at ``make``."""

from __future__ import annotations

import gymnasium as gym

from membench_envs import catalogue

_registered = False


def register_all() -> list[str]:
    """Register each catalogue ID with gymnasium (idempotent). Returns the IDs."""
    global _registered
    specs = catalogue.all_tasks()
    if not _registered:
        for spec in specs:
            if spec.id in gym.registry:
                continue
            gym.register(
                id=spec.id,
                entry_point=spec.entry_point,
                vector_entry_point=spec.vector_entry_point,
                max_episode_steps=spec.max_episode_steps,
                disable_env_checker=spec.disable_env_checker,
                kwargs=dict(spec.kwargs),
            )
        _registered = True
    return [s.id for s in specs]
