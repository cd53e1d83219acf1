"""The error type of configuration problems and the "did you mean" hint the config modules share."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ConfigError(ValueError):
    """A configuration problem, with a message meant for the user (one clear sentence or two)."""


def close_matches(word: object, options: Iterable[str], n: int = 3) -> str:
    """`` Did you mean a, b?`` for the options close to ``word`` (by spelling or substring), else ``""``."""
    word = str(word)
    options = list(options)
    close = difflib.get_close_matches(word, options, n=n, cutoff=0.5)
    if not close:
        close = [o for o in options if word.lower() in o.lower() or o.lower() in word.lower()][:n]
    return f" Did you mean {', '.join(close)}?" if close else ""
