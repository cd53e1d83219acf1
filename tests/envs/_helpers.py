"""Helpers shared by the environment tests."""

from __future__ import annotations

import importlib.util

import pytest

import membench_envs

#: The Python module that proves each extra is installed.
EXTRA_MODULES = {"popgym": "popgym", "minigrid": "minigrid", "robo": "mani_skill", "atari": "ale_py"}


def extra_installed(extra: str | None) -> bool:
    return extra is None or importlib.util.find_spec(EXTRA_MODULES[extra]) is not None


def ids_with_extra_installed(exclude_extras: tuple[str, ...] = ("robo",)) -> list:
    """Every catalogue ID as a pytest param, skipped when its extra is missing.

    MIKASA-Robo IDs (ManiSkill, seconds per make) have their own, dedicated tests under tests/envs/robo.
    """
    params = []
    for spec in membench_envs.all_tasks():
        if spec.extra in exclude_extras:
            continue
        marks = [] if extra_installed(spec.extra) else [pytest.mark.skip(reason=f"extra [{spec.extra}] not installed")]
        params.append(pytest.param(spec.id, marks=marks, id=spec.id))
    return params
