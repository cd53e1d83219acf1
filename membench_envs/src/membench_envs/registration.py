"""Register every catalogue entry with gymnasium. Lazy: entry points are strings, imported at ``make``.

Every ID gets a vector entry point, so ``gym.make_vec(ID, num_envs=n)`` checks ``num_envs`` the same way for every
ID (one clear error for 0, a negative number or a non-int). IDs with a native batched implementation register it
(``TaskSpec.vector_entry_point``); the others register :class:`SyncVector`, which builds gymnasium's own
``SyncVectorEnv`` of ``gym.make`` copies, what ``make_vec`` builds for them without one (gymnasium's
``SyncVectorEnv([])`` fails with an IndexError instead). As for every vector entry point, gymnasium then takes the
vector env's options as kwargs (``autoreset_mode=...``); ``wrappers=`` and ``vector_kwargs=`` need
``vectorization_mode="sync"`` or ``"async"``, where gymnasium builds the vector env itself (and checks nothing).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from membench_envs.catalogue import all_tasks
from membench_envs.envs.core.params import Param

_registered = False
_NUM_ENVS = Param("num_envs", "int", 1, low=1)


class SyncVector:
    """The vector entry point of an ID without a native batched env: ``gym.vector.SyncVectorEnv`` of ``num_envs``
    ``gym.make(env_id, **kwargs)`` copies, after checking ``num_envs``. Takes ``autoreset_mode`` (the vector env's,
    gymnasium's default NEXT_STEP) and, as ``make_vec`` passes them, the ID's kwargs and ``max_episode_steps``."""

    def __init__(self, env_id: str):
        self.env_id = env_id

    def __call__(self, num_envs: Any = 1, autoreset_mode: Any = None, **kwargs: Any) -> gym.vector.VectorEnv:
        n = _NUM_ENVS.check(num_envs, f"{self.env_id} (gym.make_vec)")
        options = {} if autoreset_mode is None else {"autoreset_mode": autoreset_mode}
        return gym.vector.SyncVectorEnv([lambda: gym.make(self.env_id, **kwargs) for _ in range(n)], **options)

    def __repr__(self) -> str:
        return f"membench_envs.registration.SyncVector({self.env_id!r})"


def register_all() -> list[str]:
    """Register each catalogue ID with gymnasium (idempotent). Returns the IDs."""
    global _registered
    specs = all_tasks()
    if not _registered:
        for spec in specs:
            if spec.id in gym.registry:
                continue
            gym.register(
                id=spec.id,
                entry_point=spec.entry_point,
                vector_entry_point=spec.vector_entry_point or SyncVector(spec.id),
                max_episode_steps=spec.max_episode_steps,
                disable_env_checker=spec.disable_env_checker,
                kwargs=dict(spec.kwargs),
            )
        _registered = True
    return [s.id for s in specs]
