"""Game tables of STORI: RAM labels, type-2 modes, type-5 blackout regions and RAM edits, per game.

Plain data (no emulator import), read by the wrappers, the config validator and the catalogue. Every number here
is a fact of the STORI authors' public code (the ``stori/atari_envs/<game>.py`` tables of github.com/ARY2260/stori)
or of the paper's Table 2; pixel bounds are inclusive, on ALE's 210x160 RGB screen (``frame[y, x]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: ALE's screen (every supported game): 210 rows of 160 pixels.
SCREEN_HEIGHT, SCREEN_WIDTH = 210, 160
#: A blackout region: (min_x, max_x, min_y, max_y), inclusive pixel bounds.
Region = tuple[int, int, int, int]


@dataclass(frozen=True)
class Game:
    """Everything STORI knows about one Atari game."""

    name: str
    """The name in STORI IDs and in ``ALE/<name>-v5``."""
    rom: str
    """ale-py's ROM id (``ale_py.roms.get_rom_path(rom)``)."""
    ram_labels: Mapping[str, int]
    """Named RAM addresses (the AtariARI annotations the authors' code uses): the type-0 labels and the oracle."""
    random_modes: Mapping[int, str]
    """Type 2 (action-independent random events): mode -> what it does. Mode 0 is "no event"."""
    blackout: Mapping[int, tuple[str, tuple[Region, ...]]]
    """Type 5 blackout: mode -> (description, regions filled with ``blackout_colour``)."""
    blackout_colour: tuple[int, int, int]
    ram_edits: Mapping[int, tuple[str, Mapping[int, int]]]
    """Type 5 RAM edits: mode -> (description, {address: value}) written before the observed frame is rendered."""
    notes: str = ""
    presets: Mapping[str, Mapping] = field(default_factory=dict)
    """The paper's experiment configs (Appendix A.2), keyed by the preset name in the ID."""

    def __post_init__(self) -> None:
        for name in ("ram_labels", "random_modes", "blackout", "ram_edits", "presets"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        for mode, (_, regions) in self.blackout.items():
            for x0, x1, y0, y1 in regions:
                if not (0 <= x0 <= x1 < SCREEN_WIDTH and 0 <= y0 <= y1 < SCREEN_HEIGHT):
                    raise ValueError(f"{self.name} blackout mode {mode}: region {(x0, x1, y0, y1)} is not inside the "
                                     f"{SCREEN_WIDTH}x{SCREEN_HEIGHT} screen")


#: Crop modes, common to every game (paper A.1.3). Mode 5 keeps a disc of CROP_RADIUS px around a uniform centre.
CROP_MODES: Mapping[int, str] = MappingProxyType({
    0: "no crop",
    1: "left half zeroed",
    2: "right half zeroed",
    3: "top half zeroed",
    4: "bottom half zeroed",
    5: "random circular mask: only a disc of radius 75 px around a uniformly drawn centre stays visible",
})
CROP_RADIUS = 75

# --- Breakout ------------------------------------------------------------------------------------------------------
_BLOCKS: Region = (8, 151, 57, 92)
_PADDLE: Region = (7, 152, 189, 195)
_SCORE: Region = (2, 158, 3, 16)
_BALL_TOP: Region = (8, 151, 105, 130)
_BALL_MIDDLE: Region = (8, 151, 131, 156)
_BALL_BOTTOM: Region = (8, 151, 157, 182)

BREAKOUT = Game(
    name="Breakout",
    rom="breakout",
    ram_labels={"ball_x": 99, "ball_y": 101, "player_x": 72, "blocks_hit_count": 77, "score": 84},
    random_modes={
        0: "no event",
        1: "block hit cancel: a frame that changes the block bitmap (RAM[0:36]) is undone with probability p; the "
           "ball has already bounced and the reward is kept",
        2: "block hit cancel, reward reverted: as mode 1 and the frame's reward is set to 0 (the on-screen score is "
           "not reverted)",
        3: "regenerate hit block: each frame, with probability p, one randomly chosen block byte that differs from "
           "its value at the episode start is restored",
    },
    blackout={
        0: ("no blackout", ()),
        1: ("all: blocks, paddle, score and the three ball regions",
            (_BLOCKS, _PADDLE, _SCORE, _BALL_TOP, _BALL_MIDDLE, _BALL_BOTTOM)),
        2: ("blocks", (_BLOCKS,)),
        3: ("paddle", (_PADDLE,)),
        4: ("score", (_SCORE,)),
        5: ("ball missing: top", (_BALL_TOP,)),
        6: ("ball missing: middle", (_BALL_MIDDLE,)),
        7: ("ball missing: bottom", (_BALL_BOTTOM,)),
        8: ("blocks and paddle", (_BLOCKS, _PADDLE)),
        9: ("blocks and score", (_BLOCKS, _SCORE)),
        10: ("ball missing: top and bottom (the ball is seen only in the middle band)", (_BALL_TOP, _BALL_BOTTOM)),
        11: ("ball missing: top, middle and bottom", (_BALL_TOP, _BALL_MIDDLE, _BALL_BOTTOM)),
    },
    blackout_colour=(0, 0, 0),
    ram_edits={
        0: ("no edit", {}),
        2: ("ball hidden: ball_x = RAM[99] and ball_y = RAM[101] set to 0", {99: 0, 101: 0}),
    },
    notes="RAM mode 1 of the authors' code (write an 'NUS' pattern into the block bitmap) is marked buggy there "
          "and is not provided.",
    presets={
        "Type1": {"type": 1, "prob": 0.3},
        "Type2": {"type": 2, "mode": 2, "prob": 0.25},
        "Type3": {"type": 3, "schedule": "sudden", "threshold": 300,
                  "concept": {"type": 5, "kind": "blackout", "mode": 10, "prob": 1.0}},
        "Default": {"type": 4},
        "5A": {"type": 5, "kind": "blackout", "mode": 10, "prob": 1.0},
        "5B": {"type": 5, "kind": "crop", "mode": 1, "prob": 0.75},
        "5C": {"type": 5, "kind": "crop", "mode": 5, "prob": 1.0},
    },
)

# --- Boxing --------------------------------------------------------------------------------------------------------
_RING: Region = (32, 127, 36, 176)
_RING_LEFT: Region = (32, 80, 36, 176)
_RING_RIGHT: Region = (81, 127, 36, 176)
_ENEMY_SCORE: Region = (87, 134, 1, 16)
_PLAYER_SCORE: Region = (33, 69, 1, 16)
_CLOCK: Region = (57, 97, 14, 27)
#: The colour value that makes a Boxing sprite invisible on the ring (the authors' code).
BOXING_INVISIBLE = 214

BOXING = Game(
    name="Boxing",
    rom="boxing",
    ram_labels={"player_x": 32, "player_y": 34, "enemy_x": 33, "enemy_y": 35, "player_score": 18,
                "enemy_score": 19, "clock_minutes": 16, "clock_seconds": 17},
    random_modes={
        0: "no event",
        1: "colour flip: each frame, with probability p, a persistent flag toggles; while it is set the player's "
           "and the enemy's colours (RAM[1], RAM[2]: characters and scores) are swapped",
        2: "hit cancel: a frame where exactly one score (RAM[18] player, RAM[19] enemy) changes is undone with "
           "probability p and pays no reward",
        3: "displace to corners: each frame, with probability p, the player is put at the enemy's start position "
           "and the enemy at the player's (RAM 32/34, 33/35)",
    },
    blackout={
        0: ("no blackout", ()),
        1: ("all: full ring, left ring, right ring, enemy score, player score, clock",
            (_RING, _RING_LEFT, _RING_RIGHT, _ENEMY_SCORE, _PLAYER_SCORE, _CLOCK)),
        2: ("left half of the ring", (_RING_LEFT,)),
        3: ("right half of the ring", (_RING_RIGHT,)),
        4: ("full ring", (_RING,)),
        5: ("enemy score", (_ENEMY_SCORE,)),
        6: ("player score", (_PLAYER_SCORE,)),
        7: ("enemy and player scores", (_ENEMY_SCORE, _PLAYER_SCORE)),
        8: ("clock", (_CLOCK,)),
        9: ("enemy score, player score and clock", (_ENEMY_SCORE, _PLAYER_SCORE, _CLOCK)),
    },
    blackout_colour=(110, 156, 66),
    ram_edits={
        0: ("no edit", {}),
        1: ("hide the ring: RAM[3] = 214", {3: BOXING_INVISIBLE}),
        2: ("hide the enemy: RAM[2] = 214", {2: BOXING_INVISIBLE}),
        3: ("hide the player: RAM[1] = 214", {1: BOXING_INVISIBLE}),
    },
    presets={
        "Type1": {"type": 1, "prob": 0.3},
        "Type2": {"type": 2, "mode": 1, "prob": 0.001},
        "Type3": {"type": 3, "schedule": "sudden", "threshold": 300,
                  "concept": {"type": 5, "kind": "ram", "mode": 2, "prob": 0.7}},
        "Default": {"type": 4},
        "5A": {"type": 5, "kind": "blackout", "mode": 9, "prob": 1.0},
        "5B": {"type": 5, "kind": "crop", "mode": 2, "prob": 0.75},
        "5C": {"type": 5, "kind": "ram", "mode": 2, "prob": 0.7},
    },
)

#: The games, by name.
GAMES: Mapping[str, Game] = MappingProxyType({g.name: g for g in (BREAKOUT, BOXING)})

#: The paper's taxonomy (Table 1), paper numbering -> (class, sub-type). The authors' refactored code
#: (after 2025-09) renames 1, 2, 3, 4, 5 to "1", "2.1", "2.2", "3.1", "3.2".
TAXONOMY: Mapping[int, str] = MappingProxyType({
    0: "deterministic: RAM observation with state labels (the `full` variant here)",
    1: "intrinsic, action dependent: the action is replaced by a uniform random one with probability p",
    2: "intrinsic, action independent, random: game-specific random events",
    3: "intrinsic, action independent, concept drift: default game, then a type-1, -2 or -5 concept",
    4: "partially observed, representation learning: the default game (the baseline)",
    5: "partially observed, missing state variables: crop, blackout or RAM-edited observations",
})
#: The preset names of the IDs, in table order, with the taxonomy type of each.
PRESET_TYPES: Mapping[str, int] = MappingProxyType(
    {"Type1": 1, "Type2": 2, "Type3": 3, "Default": 4, "5A": 5, "5B": 5, "5C": 5}
)
