"""MIKASA-Robo tests: every test here is marked ``robo`` and skipped only when the ``[robo]`` extra is missing.

Environments are expensive to build (the first renderer start compiles shaders), so tests share them through the
session-scoped :func:`robo_env` factory; every test resets with an explicit seed before using one.
"""

from __future__ import annotations

import importlib.util

import pytest

HAVE_MANISKILL = importlib.util.find_spec("mani_skill") is not None

REMEMBER_IDS = [
    "MIKASA/RememberColor3-v0",
    "MIKASA/RememberColor5-v0",
    "MIKASA/RememberColor9-v0",
    "MIKASA/RememberShape3-v0",
    "MIKASA/RememberShape5-v0",
    "MIKASA/RememberShape9-v0",
    "MIKASA/RememberShapeAndColor3x2-v0",
    "MIKASA/RememberShapeAndColor3x3-v0",
    "MIKASA/RememberShapeAndColor5x3-v0",
]
#: (number of objects N, oracle size k) per ID.
SIZES = {
    "MIKASA/RememberColor3-v0": (3, 1),
    "MIKASA/RememberColor5-v0": (5, 1),
    "MIKASA/RememberColor9-v0": (9, 1),
    "MIKASA/RememberShape3-v0": (3, 1),
    "MIKASA/RememberShape5-v0": (5, 1),
    "MIKASA/RememberShape9-v0": (9, 1),
    "MIKASA/RememberShapeAndColor3x2-v0": (6, 2),
    "MIKASA/RememberShapeAndColor3x3-v0": (9, 2),
    "MIKASA/RememberShapeAndColor5x3-v0": (15, 2),
}


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="extra [robo] (mani-skill) not installed")
    for item in items:
        if "tests/envs/robo" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.robo)
            if not HAVE_MANISKILL:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def robo_env():
    """``robo_env(env_id, **make_kwargs)``: a cached ``gym.make`` (same kwargs -> same env object)."""
    import gymnasium as gym

    import membench_envs  # noqa: F401

    cache: dict = {}

    def get(env_id: str, **kwargs):
        key = (env_id, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        if key not in cache:
            cache[key] = gym.make(env_id, **kwargs)
        return cache[key]

    yield get
    for env in cache.values():
        env.close()


@pytest.fixture(scope="module")
def envs():
    """``envs(env_id, **kwargs)``: a cached ``gym.make`` for one test module; never more than two environments open
    at once (the older one is closed); ``envs.clear()`` closes them all."""
    import gymnasium as gym

    import membench_envs  # noqa: F401

    cache: dict = {}

    def get(env_id: str, **kwargs):
        key = (env_id, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        if key not in cache:
            while len(cache) >= 2:
                cache.pop(next(iter(cache))).close()
            cache[key] = gym.make(env_id, **kwargs)
        return cache[key]

    def clear():
        while cache:
            cache.popitem()[1].close()

    get.clear = clear
    yield get
    clear()
