"""Optional backends: import them only when an environment is made, with one clear error when missing."""

from __future__ import annotations

import importlib
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
