"""Optional backends: import them only when an environment is made, with one clear error when missing."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


class MissingExtraError(ImportError):
    """An environment needs an optional backend that is not installed."""


def require(module: str, extra: str, *, env_id: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming the ``pip install`` that fixes it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        what = f"{env_id} needs" if env_id else "This environment needs"
        raise MissingExtraError(
            f"{what} the optional backend '{module}', which is not installed "
            f"({type(exc).__name__}: {exc}). Fix: pip install 'membench-envs[{extra}]'"
        ) from exc


#: The top-level modules each optional extra provides (those its backends :func:`require`): what
#: :func:`installed` looks for, without importing them.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "popgym": ("popgym", "mazelib"),
    "minigrid": ("minigrid",),
    "robo": ("mani_skill",),
    "atari": ("ale_py",),
    "vizdoom": ("vizdoom",),
    "memory-maze": ("memory_maze", "dm_control"),
    "numpad": ("mujoco",),
    "mujoco": ("mujoco", "imageio"),
    "craftax": ("craftax", "jax"),
}


def installed(extra: str | None) -> bool:
    """Whether the extra ``extra`` (a catalogue entry's ``extra``; None: the core) is installed: each of its
    modules is found (not imported: a backend that is found may still fail to load, which ``make`` reports)."""
    if extra is None:
        return True
    if extra not in EXTRA_MODULES:
        raise KeyError(f"unknown extra {extra!r}; known: {', '.join(EXTRA_MODULES)}")
    return all(importlib.util.find_spec(m) is not None for m in EXTRA_MODULES[extra])
