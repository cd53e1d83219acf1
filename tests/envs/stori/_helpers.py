"""Helpers shared by the STORI tests."""

from __future__ import annotations

import gymnasium as gym


def make(game: str, config=None, **kwargs) -> gym.Env:
    """The generic ``STORI/<game>-v0`` with ``config``."""
    return gym.make(f"STORI/{game}-v0", config=config, **kwargs)


class RecordingALE:
    """Delegates to the emulator and records the actions of ``act`` (to see what type 1 executes)."""

    def __init__(self, ale):
        self._ale, self.acted = ale, []

    def act(self, action, *args):
        self.acted.append(action)
        return self._ale.act(action, *args)

    def __getattr__(self, name):
        return getattr(self._ale, name)
