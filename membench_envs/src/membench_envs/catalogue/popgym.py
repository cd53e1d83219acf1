"""Catalogue entries: popgym (filled by its own module)."""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec

TASKS: list[TaskSpec] = []
