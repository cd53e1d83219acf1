"""The exceptions the modules share (configuration problems, a stop request) and the "did you mean" hint."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable


class ConfigError(ValueError):
    """A configuration problem, with a message meant for the user (one clear sentence or two)."""


class StopRequested(Exception):
    """Raised inside a long computation (a training iteration, an evaluation) when the ``should_stop``
    callable it was given returns True. Whether the object that raised it can still be saved is the
    raiser's to document (see :class:`membench_agents.algos.trainer.Trainer`)."""


def check_stop(should_stop: Callable[[], bool] | None) -> None:
    """Raise :class:`StopRequested` if ``should_stop`` is given and returns True (polled by long loops)."""
    if should_stop is not None and should_stop():
        raise StopRequested


def close_matches(word: object, options: Iterable[str], n: int = 3) -> str:
    """`` Did you mean a, b?`` for the options close to ``word`` (by spelling or substring), else ``""``."""
    word = str(word)
    options = list(options)
    close = difflib.get_close_matches(word, options, n=n, cutoff=0.5)
    if not close:
        close = [o for o in options if word.lower() in o.lower() or o.lower() in word.lower()][:n]
    return f" Did you mean {', '.join(close)}?" if close else ""
