"""The STORI config dict: its schema, its validation (one clear error per bad field) and the paper's presets.

A config is a plain dict keyed by the paper's taxonomy type (Table 1; the authors' refactored code calls
types 1, 2, 3, 4, 5 "1", "2.1", "2.2", "3.1", "3.2")::

    {"type": 1, "prob": 0.3}                                   # random action replacement, per emulator frame
    {"type": 2, "mode": 2, "prob": 0.25}                       # game-specific random events (games.Game.random_modes)
    {"type": 3, "schedule": "sudden", "threshold": 300,        # concept drift: the default game, then `concept`
     "concept": {"type": 5, "kind": "blackout", "mode": 10, "prob": 1.0}}
    {"type": 4}                                                # the default game
    {"type": 5, "kind": "crop", "mode": 1, "prob": 0.75}       # missing state variables: crop | blackout | ram

Type 3 also takes ``"timing": "code" | "paper"`` for the sudden switch (see :class:`StoriConfig`). Type 0 (RAM
with state labels) is not a config: it is the ``full`` observation variant of every ID.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from membench_envs.stori.games import CROP_MODES, GAMES, Game

TYPES = (1, 2, 3, 4, 5)
KINDS = ("crop", "blackout", "ram")
SCHEDULES = ("sudden", "cyclic")
TIMINGS = ("code", "paper")
#: The keys each type takes (all required except "timing").
KEYS: Mapping[int, tuple[str, ...]] = {
    1: ("type", "prob"),
    2: ("type", "mode", "prob"),
    3: ("type", "schedule", "threshold", "concept", "timing"),
    4: ("type",),
    5: ("type", "kind", "mode", "prob"),
}


@dataclass(frozen=True)
class Concept:
    """One stochasticity effect: type 1 (prob), 2 (mode, prob) or 5 (kind, mode, prob)."""

    type: int
    prob: float = 0.0
    mode: int = 0
    kind: str | None = None


@dataclass(frozen=True)
class StoriConfig:
    """A validated config. ``effect`` is the type-1/2/5 effect (for type 3: the second concept; type 4: None).

    Concept drift (type 3) counts agent steps (env steps, each ``frame_skip`` emulator frames). ``schedule="sudden"``:
    the second concept is on from a fixed step to the end of the episode; with ``timing="code"`` (default, the
    authors' code that produced the published results) it is on from the ``threshold``-th step (0-based step index
    ``threshold - 1``); with ``timing="paper"`` ("after 300 steps") from step index ``threshold``.
    ``schedule="cyclic"``: the second concept is on while ``(step // threshold) % 2 == 1`` (same in both).
    Reset restores the first concept.
    """

    type: int
    effect: Concept | None = None
    schedule: str | None = None
    threshold: int | None = None
    timing: str = "code"

    def concept_on(self, step: int) -> bool:
        """Whether the drift's second concept (type 3) or the effect (types 1, 2, 5) is on at 0-based agent step
        ``step``."""
        if self.type != 3:
            return self.effect is not None
        assert self.threshold is not None
        if self.schedule == "cyclic":
            return (step // self.threshold) % 2 == 1
        return step >= (self.threshold - 1 if self.timing == "code" else self.threshold)


def _game(game: str | Game) -> Game:
    if isinstance(game, Game):
        return game
    if game not in GAMES:
        raise ValueError(f"STORI: unknown game {game!r}; valid games: {', '.join(GAMES)}")
    return GAMES[game]


def _int(where: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name}={value!r} is not allowed; {name} must be an int")
    return int(value)


def _prob(where: str, value: Any) -> float:
    try:
        ok = not isinstance(value, (bool, str)) and math.isfinite(float(value))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise TypeError(f"{where}: prob={value!r} is not allowed; prob must be a number in [0, 1]")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{where}: prob={value!r} is not allowed; prob must be a number in [0, 1]")
    return float(value)


def _mode(where: str, value: Any, table: Mapping[int, Any], what: str) -> int:
    mode = _int(where, "mode", value)
    if mode not in table:
        raise ValueError(f"{where}: mode={value!r} is not allowed; {what} modes are {', '.join(map(str, table))}")
    return mode


def parse_config(game: str | Game, config: Mapping[str, Any] | None, *, where: str = "STORI config") -> StoriConfig:
    """Validate ``config`` for ``game`` and return it as a :class:`StoriConfig`; None means the default game (type 4).

    Raises TypeError for a value of the wrong type and ValueError for an unknown game, type, mode or kind, a
    probability outside [0, 1], a drift to type 3 or 4, a missing or an unknown key; each names the bad field.
    """
    g = _game(game)
    if config is None:
        return StoriConfig(type=4)
    if not isinstance(config, Mapping):
        raise TypeError(f"{where}: config must be a dict such as {{'type': 1, 'prob': 0.3}}, got {config!r}")
    kind_of = _config_type(config, where)
    if kind_of == 4:
        return StoriConfig(type=4)
    if kind_of == 3:
        return _drift(g, config, where)
    prob = _prob(where, config["prob"])
    if kind_of == 1:
        return StoriConfig(type=1, effect=Concept(type=1, prob=prob))
    if kind_of == 2:
        mode = _mode(where, config["mode"], g.random_modes, f"{g.name} type-2")
        return StoriConfig(type=2, effect=Concept(type=2, prob=prob, mode=mode))
    kind = config["kind"]
    if kind not in KINDS:
        raise ValueError(f"{where}: kind={kind!r} is not allowed; valid kinds: {', '.join(KINDS)}")
    table = {"crop": CROP_MODES, "blackout": g.blackout, "ram": g.ram_edits}[kind]
    mode = _mode(where, config["mode"], table, f"{g.name} {kind}")
    return StoriConfig(type=5, effect=Concept(type=5, prob=prob, mode=mode, kind=kind))


def _config_type(config: Mapping[str, Any], where: str) -> int:
    """The config's type, once its keys are exactly those of the type (``timing`` optional)."""
    if "type" not in config:
        raise ValueError(f"{where}: the config has no 'type'; valid types: {', '.join(map(str, TYPES))}")
    kind_of = _int(where, "type", config["type"])
    if kind_of == 0:
        raise ValueError(
            f"{where}: type 0 (RAM observation with state labels) is not a config; "
            "use obs_variant='full' (the frame and the 128-byte RAM) on any STORI ID"
        )
    if kind_of not in TYPES:
        raise ValueError(f"{where}: type={config['type']!r} is not allowed; valid types: {', '.join(map(str, TYPES))}")
    allowed = KEYS[kind_of]
    unknown = [k for k in config if k not in allowed]
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} for type {kind_of}; its keys are {', '.join(allowed)}")
    missing = [k for k in allowed if k not in config and k != "timing"]
    if missing:
        raise ValueError(f"{where}: type {kind_of} needs the key(s) {', '.join(missing)}")
    return kind_of


def _drift(g: Game, config: Mapping[str, Any], where: str) -> StoriConfig:
    """A type-3 config (its keys checked): the schedule, threshold and timing, and the second concept parsed."""
    schedule = config["schedule"]
    if schedule not in SCHEDULES:
        raise ValueError(f"{where}: schedule={schedule!r} is not allowed; valid: {', '.join(SCHEDULES)}")
    threshold = _int(where, "threshold", config["threshold"])
    if threshold < 1:
        raise ValueError(f"{where}: threshold={threshold!r} is not allowed; threshold must be an int >= 1")
    timing = config.get("timing", "code")
    if timing not in TIMINGS:
        raise ValueError(f"{where}: timing={timing!r} is not allowed; valid: {', '.join(TIMINGS)}")
    second = config["concept"]
    if isinstance(second, Mapping) and second.get("type") in (3, 4):
        raise ValueError(
            f"{where}: a drift's concept must be of type 1, 2 or 5, got type {second['type']} "
            "(type 4 is the first concept; a drift cannot drift)"
        )
    inner = parse_config(g, second, where=f"{where} (drift concept)")
    if inner.type not in (1, 2, 5):  # the type-3/4 check above covers dicts; this one numpy ints
        raise ValueError(f"{where}: a drift's concept must be of type 1, 2 or 5, got type {inner.type}")
    return StoriConfig(type=3, effect=inner.effect, schedule=schedule, threshold=threshold, timing=timing)


def preset_config(game: str, preset: str) -> dict[str, Any]:
    """The config dict of one of the paper's experiment presets (a copy), e.g. ``preset_config("Breakout", "5A")``."""
    g = _game(game)
    if preset not in g.presets:
        raise ValueError(f"STORI: unknown preset {preset!r} for {g.name}; valid: {', '.join(g.presets)}")
    import copy

    return copy.deepcopy(dict(g.presets[preset]))
