"""MIKASA-Robo tests: every test here is marked ``robo`` and skipped only when the ``[robo]`` extra is missing.

Environments are expensive to build (the first renderer start compiles shaders), so tests share them through the
session-scoped :func:`robo_env` cache; every test resets with an explicit seed before using one. The tests are laid
out like the code: ``test_table`` (the catalogue), ``test_every_id`` (what differs per ID), ``test_platform`` (the
base, the entry point, the wrapper), one file per task family (its rules, on representative IDs), ``test_solvability``
(the scripted experts against idle and random play), ``test_vector_and_video`` and the datasets.
"""

from __future__ import annotations

import gc
import importlib.util
from collections import OrderedDict

import pytest

HAVE_MANISKILL = importlib.util.find_spec("mani_skill") is not None

#: open environments kept by :func:`robo_env` (the least recently used one is closed beyond this)
MAX_OPEN = 6


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="extra [robo] (mani-skill) not installed")
    for item in items:
        if "tests/envs/robo" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.robo)
            if not HAVE_MANISKILL:
                item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _frozen_heap():
    """ManiSkill calls ``gc.collect()`` on every environment build and close (to free GPU memory); in a test process
    holding torch, the whole suite's modules and their objects, each full collection takes ~0.6-1 s. The objects alive
    before the first robot test (imports, collected tests) are moved out of the collector's sight with
    ``gc.freeze()``, so those collections scan only what the robot tests create; ``gc.unfreeze()`` at the end."""
    if HAVE_MANISKILL:
        import mani_skill.envs  # noqa: F401  (its imports, before the freeze)
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def _renders(env) -> bool:
    base = env.unwrapped
    return base.obs_variant != "full" or base.render_mode is not None


@pytest.fixture(scope="session")
def robo_env():
    """``robo_env(env_id, **make_kwargs)``: a cached ``gym.make`` (same kwargs -> same env object), at most
    :data:`MAX_OPEN` open at once; ``robo_env.clear()`` closes them all (before a test that makes its own).

    The first environment that renders stays open all session, whatever else is closed: SAPIEN releases its renderer
    with the last rendering environment, and starting it again costs ~30 s on the CPU (lavapipe)."""
    import gymnasium as gym

    import membench_envs  # noqa: F401

    cache: OrderedDict = OrderedDict()
    pinned: list = []  # [key] of the environment that keeps the renderer alive

    def evict(keep: int) -> None:
        for key in [k for k in cache if k not in pinned][: max(0, len(cache) - keep)]:
            cache.pop(key).close()

    def get(env_id: str, **kwargs):
        key = (env_id, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        if key in cache:
            cache.move_to_end(key)
        else:
            evict(MAX_OPEN - 1)
            cache[key] = gym.make(env_id, **kwargs)
            if not pinned and _renders(cache[key]):
                pinned.append(key)
        return cache[key]

    def clear():
        evict(len(pinned))

    get.clear = clear
    yield get
    while cache:
        cache.popitem()[1].close()
