"""Game tables of STORI: RAM labels, type-2 modes, type-5 blackout regions and RAM edits, per game.

Plain data (no emulator import), read by the wrappers, the config validator and the catalogue. Every number here
is a fact of the STORI authors' public code (the ``stori/atari_envs/<game>.py`` tables of github.com/ARY2260/stori,
its ``Exp_configs.json``) or of the paper's Table 2; pixel bounds are inclusive, on ALE's 210x160 RGB screen
(``frame[y, x]``). Breakout and Boxing are the paper's games; Gopher and BankHeist are extras of the authors'
repository (no experiment in the paper).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import cast

#: ALE's screen (every supported game): 210 rows of 160 pixels.
SCREEN_HEIGHT, SCREEN_WIDTH = 210, 160
#: A blackout region: (min_x, max_x, min_y, max_y), inclusive pixel bounds.
Region = tuple[int, int, int, int]
Colour = tuple[int, int, int]
#: A blackout fill: a region filled with the game's ``blackout_colour``, or (region, its own colour).
Fill = Region | tuple[Region, Colour]


@dataclass(frozen=True)
class ClearBits:
    """A RAM-edit write: clear these bits of the byte (bits already clear stay clear)."""

    bits: int


@dataclass(frozen=True)
class Lookup:
    """A RAM-edit write: the byte becomes ``values[RAM[index] % len(values)]``."""

    index: int
    values: tuple[int, ...]


@dataclass(frozen=True)
class Replace:
    """A conditional RAM-edit write: the byte becomes ``new`` where it holds ``old`` (``old=None``: wherever it is
    not ``new`` already). When a mode has conditional writes and none of them applies, the mode leaves the frame as
    it is (nothing to hide)."""

    new: int
    old: int | None = None


#: A RAM-edit write: a plain value, or one of the computed writes above.
Write = int | ClearBits | Lookup | Replace


def edit_writes(edits: Mapping[int, Write], ram) -> list[tuple[int, int]] | None:
    """The (address, value) pairs a RAM edit writes given the current RAM; None when the edit has conditional
    writes and none of them applies (the observed frame is then left as it is)."""
    writes, conditional, applied = [], False, False
    for address, write in edits.items():
        now = int(ram[address])
        if isinstance(write, Replace):
            conditional = True
            if now == write.new or (write.old is not None and now != write.old):
                continue
            applied, value = True, write.new
        elif isinstance(write, ClearBits):
            value = now & ~write.bits & 0xFF
        elif isinstance(write, Lookup):
            value = write.values[int(ram[write.index]) % len(write.values)]
        else:
            value = int(write)
        writes.append((address, value))
    if conditional and not applied:
        return None
    return writes


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
    blackout: Mapping[int, tuple[str, tuple[Fill, ...]]]
    """Type 5 blackout: mode -> (description, fills): regions filled, in order, with ``blackout_colour`` or their
    own colour."""
    blackout_colour: Colour
    ram_edits: Mapping[int, tuple[str, Mapping[int, Write]]]
    """Type 5 RAM edits: mode -> (description, {address: write}) written before the observed frame is rendered."""
    notes: str = ""
    presets: Mapping[str, Mapping] = field(default_factory=dict)
    """The experiment configs (the paper's Appendix A.2; for the repository-only games the authors'
    ``Exp_configs.json``), keyed by the preset name in the ID."""
    random_actions: int | None = None
    """Type 1 draws the replacement action from the first ``random_actions`` actions of the action set (None: all)."""

    def __post_init__(self) -> None:
        for name in ("ram_labels", "random_modes", "blackout", "ram_edits", "presets"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        for mode in self.blackout:
            for (x0, x1, y0, y1), _ in self.fills(mode):
                if not (0 <= x0 <= x1 < SCREEN_WIDTH and 0 <= y0 <= y1 < SCREEN_HEIGHT):
                    raise ValueError(
                        f"{self.name} blackout mode {mode}: region {(x0, x1, y0, y1)} is not inside the "
                        f"{SCREEN_WIDTH}x{SCREEN_HEIGHT} screen"
                    )

    def fills(self, mode: int) -> tuple[tuple[Region, Colour], ...]:
        """The (region, colour) pairs of blackout ``mode``, in fill order."""
        out: list[tuple[Region, Colour]] = []
        for fill in self.blackout[mode][1]:
            region, colour = (fill[0], fill[1]) if len(fill) == 2 else (fill, self.blackout_colour)
            out.append((cast(Region, tuple(region)), cast(Colour, tuple(colour))))
        return tuple(out)


#: Crop modes, common to every game (paper A.1.3). Mode 5 keeps a disc of CROP_RADIUS px around a uniform centre.
CROP_MODES: Mapping[int, str] = MappingProxyType(
    {
        0: "no crop",
        1: "left half zeroed",
        2: "right half zeroed",
        3: "top half zeroed",
        4: "bottom half zeroed",
        5: "random circular mask: only a disc of radius 75 px around a uniformly drawn centre stays visible",
    }
)
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
        1: (
            "all: blocks, paddle, score and the three ball regions",
            (_BLOCKS, _PADDLE, _SCORE, _BALL_TOP, _BALL_MIDDLE, _BALL_BOTTOM),
        ),
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
        "Type3": {
            "type": 3,
            "schedule": "sudden",
            "threshold": 300,
            "concept": {"type": 5, "kind": "blackout", "mode": 10, "prob": 1.0},
        },
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
    ram_labels={
        "player_x": 32,
        "player_y": 34,
        "enemy_x": 33,
        "enemy_y": 35,
        "player_score": 18,
        "enemy_score": 19,
        "clock_minutes": 16,
        "clock_seconds": 17,
    },
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
        1: (
            "all: full ring, left ring, right ring, enemy score, player score, clock",
            (_RING, _RING_LEFT, _RING_RIGHT, _ENEMY_SCORE, _PLAYER_SCORE, _CLOCK),
        ),
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
        "Type3": {
            "type": 3,
            "schedule": "sudden",
            "threshold": 300,
            "concept": {"type": 5, "kind": "ram", "mode": 2, "prob": 0.7},
        },
        "Default": {"type": 4},
        "5A": {"type": 5, "kind": "blackout", "mode": 9, "prob": 1.0},
        "5B": {"type": 5, "kind": "crop", "mode": 2, "prob": 0.75},
        "5C": {"type": 5, "kind": "ram", "mode": 2, "prob": 0.7},
    },
)

# --- Gopher (an extra of the authors' repository, no experiment in the paper) ------------------------------------
#: The underground: 4 rows (top to bottom) of 6 playfield bytes; a set bit is dug (a tunnel or hole), a clear bit
#: is earth. The gopher digs (sets bits), the farmer's shovel fills (clears bits and pays 20).
GOPHER_UNDERGROUND = slice(0, 24)
#: Carrots: bit 2 left, bit 1 middle, bit 0 right, set while the carrot is there.
GOPHER_CARROTS = 52
GOPHER_SEED_Y = 92
#: The carrot event (type 2 mode 3) waits for this many emulator frames of the episode (the game's opening).
GOPHER_DELAYED_START = 238
_LEFT_ATTACK: tuple[Fill, ...] = (
    ((0, 59, 146, 150), (101, 209, 174)),
    ((0, 59, 151, 155), (117, 231, 194)),
    ((0, 59, 156, 160), (132, 252, 212)),
)
_RIGHT_ATTACK: tuple[Fill, ...] = (
    ((100, 159, 146, 150), (101, 209, 174)),
    ((100, 159, 151, 155), (117, 231, 194)),
    ((100, 159, 156, 160), (132, 252, 212)),
)
_EARTH, _DUG = (187, 159, 71), (223, 183, 85)
_UNDERGROUND: Region = (0, 159, 161, 200)
_UNDERGROUND_OFFSET: Region = (0, 159, 164, 200)
_UNDERGROUND_ROWS: tuple[Region, ...] = ((0, 159, 161, 168), (0, 159, 168, 176), (0, 159, 176, 182), (0, 159, 183, 194))
_FARMER: Region = (0, 159, 87, 145)
_FARMER_BELOW_NOSE: Region = (0, 159, 104, 145)
_DUCK: Region = (0, 159, 26, 56)
_GOPHER_SCORE: Region = (0, 159, 0, 25)


def _rows() -> dict[int, tuple[str, tuple[Fill, ...]]]:
    modes: dict[int, tuple[str, tuple[Fill, ...]]] = {}
    for row, region in enumerate(_UNDERGROUND_ROWS):
        modes[7 + 2 * row] = (f"underground row {row} in the earth colour", ((region, _EARTH),))
        modes[8 + 2 * row] = (f"underground row {row} in the dug colour (is it dug or not?)", ((region, _DUG),))
    return modes


GOPHER = Game(
    name="Gopher",
    rom="gopher",
    ram_labels={
        "player_x": 31,
        "score_0": 48,
        "score_1": 49,
        "score_2": 50,
        "carrots": GOPHER_CARROTS,
        "duck_x": 28,
        "duck_state": 94,
        "seed_x": 95,
        "seed_y": GOPHER_SEED_Y,
        **{f"underground_{row}_{i}": 6 * row + i for row in range(4) for i in range(6)},
    },
    random_modes={
        0: "no event",
        1: "hole does not close: a frame where the farmer fills a hole (underground bits cleared and the fill's 20 "
        "points paid) is undone with probability p; the reward is kept",
        2: "hole does not close, reward reverted: as mode 1 and the frame's reward is set to 0",
        3: "carrot dies: once per episode, after its first 238 frames, each frame with probability p one of the "
        "visible carrots, drawn uniformly, is removed (only while at least two are visible)",
    },
    blackout={
        0: ("no blackout", ()),
        1: (
            "all: gopher attack rows, underground (earth colour), farmer, duck and score",
            (*_LEFT_ATTACK, *_RIGHT_ATTACK, (_UNDERGROUND, _EARTH), _FARMER, _DUCK, _GOPHER_SCORE),
        ),
        2: ("gopher attack rows, both sides (each row in its own ground colour)", (*_LEFT_ATTACK, *_RIGHT_ATTACK)),
        3: ("gopher attack rows, left side", _LEFT_ATTACK),
        4: ("gopher attack rows, right side", _RIGHT_ATTACK),
        5: ("underground, full (earth colour)", ((_UNDERGROUND, _EARTH),)),
        6: (
            "underground below its top 3 lines (earth colour): the tops of the holes stay visible",
            ((_UNDERGROUND_OFFSET, _EARTH),),
        ),
        **_rows(),
        15: ("farmer", (_FARMER,)),
        16: ("farmer below the nose (he is located, not what he does)", (_FARMER_BELOW_NOSE,)),
        17: ("duck's flight band", (_DUCK,)),
        18: ("score", (_GOPHER_SCORE,)),
    },
    blackout_colour=(0, 0, 0),
    ram_edits={
        0: ("no edit", {}),
        1: ("hide the left carrot: bit 2 of RAM[52] cleared", {GOPHER_CARROTS: ClearBits(0b100)}),
        2: ("hide the middle carrot: bit 1 of RAM[52] cleared", {GOPHER_CARROTS: ClearBits(0b010)}),
        3: ("hide the right carrot: bit 0 of RAM[52] cleared", {GOPHER_CARROTS: ClearBits(0b001)}),
        4: ("hide all carrots: RAM[52] bits 0-2 cleared", {GOPHER_CARROTS: ClearBits(0b111)}),
        5: (
            "hide the seed the duck drops: seed_y = RAM[92] set to 128 (when it is not hidden already)",
            {GOPHER_SEED_Y: Replace(128)},
        ),
    },
    notes="Not in the paper (an extra of the authors' repository); presets from the authors' Exp_configs.json, "
    "whose single type-5 config is named 5A here. Fixed bugs of the authors' code: the fill cancel (type 2 "
    "mode 1/2) looks for a fill only on frames whose action fires, but the shovel fills a few frames after "
    "the press (16 of 44 fills in a random-play sample happened on frames without FIRE), and it finds the "
    "farmer's column from 6 equal slices of RAM[31]'s range, but the 6 bytes of a row are playfield "
    "registers of unequal widths; here a fill is a frame where underground bits go from dug to earth and "
    "the frame pays (every fill pays 20; the game's refill of the whole underground after a carrot is lost "
    "pays nothing), and only the filled bits are restored. The carrot event's 'at least two "
    "visible' check counts the bits, not the visible carrots (always 3), and its 238-frame delay reads the "
    "frame number since the ROM was loaded, so it only works in the first episode; here both are per episode.",
    presets={
        "Type1": {"type": 1, "prob": 0.3},
        "Type2": {"type": 2, "mode": 2, "prob": 0.3},
        "Type3": {
            "type": 3,
            "schedule": "cyclic",
            "threshold": 600,
            "concept": {"type": 5, "kind": "blackout", "mode": 6, "prob": 1.0},
        },
        "Default": {"type": 4},
        "5A": {"type": 5, "kind": "blackout", "mode": 6, "prob": 1.0},
    },
)

# --- BankHeist (an extra of the authors' repository, no experiment in the paper) ---------------------------------
#: City counter: RAM[0] % 4 is the city's maze (0-3); it counts up as the robber drives out to the next city.
BANKHEIST_CITY = 0
BANKHEIST_BOMB = 12
#: The three bank/police slots: 253 a bank, 254 a police car, 255 empty (a robbed bank shows 255, then police).
BANKHEIST_SLOTS = (24, 25, 26)
BANKHEIST_BANK, BANKHEIST_POLICE, BANKHEIST_EMPTY = 253, 254, 255
#: Fuel used: 0 full, 25 empty.
BANKHEIST_FUEL = 86
BANKHEIST_FUEL_EMPTY = 25
_TOP_WALL: Region = (12, 147, 37, 44)
_LEFT_WALL: Region = (12, 15, 37, 177)
_BOTTOM_WALL: Region = (12, 147, 173, 177)
_RIGHT_WALL: Region = (144, 147, 37, 177)
_PANEL = (0, 0, 148)  # the fuel and lives panel's blue
_FUEL: Fill = ((12, 73, 11, 36), _PANEL)
_LIVES: Fill = ((78, 147, 11, 36), _PANEL)
_BANK_SCORE: Fill = ((12, 147, 178, 186), (162, 98, 33))
_WALLS = (_TOP_WALL, _LEFT_WALL, _BOTTOM_WALL, _RIGHT_WALL)

BANKHEIST = Game(
    name="BankHeist",
    rom="bank_heist",
    ram_labels={
        "city": BANKHEIST_CITY,
        "player_x": 28,
        "player_y": 8,
        "direction": 15,
        "orientation": 51,
        "fuel": BANKHEIST_FUEL,
        "lives": 85,
        "bomb": BANKHEIST_BOMB,
        "slot_0": 24,
        "slot_1": 25,
        "slot_2": 26,
    },
    random_modes={
        0: "no event",
        1: "dud bomb: a frame that changes the dynamite byte (RAM[12]) away from its start value and from the value "
        "read after the previous frame (before any write-back, as the authors' code) is undone with probability p "
        "(a dropped stick vanishes before it explodes)",
        2: "fuel leak: once per city (RAM[0] % 4) per episode, each frame with probability p, the tank drops to "
        "half (fuel used RAM[86] set to 12 if it was below)",
        3: "city switch: each frame with probability p the maze becomes another city's, drawn uniformly among the "
        "other three (RAM[0] % 4; the robber stays where he is)",
        4: "empty bank: a frame where a bank slot (RAM[24:27]) stops being a bank pays 0 with probability p",
    },
    blackout={
        0: ("no blackout", ()),
        1: ("all: city walls, fuel, lives and score", (*_WALLS, _FUEL, _LIVES, _BANK_SCORE)),
        2: ("city walls", _WALLS),
        3: ("top city wall", (_TOP_WALL,)),
        4: ("left city wall", (_LEFT_WALL,)),
        5: ("bottom city wall", (_BOTTOM_WALL,)),
        6: ("right city wall", (_RIGHT_WALL,)),
        7: ("left and right city walls", (_LEFT_WALL, _RIGHT_WALL)),
        8: ("fuel gauge (panel colour)", (_FUEL,)),
        9: ("lives (panel colour)", (_LIVES,)),
        10: ("score (its strip's colour)", (_BANK_SCORE,)),
    },
    blackout_colour=(0, 0, 0),
    ram_edits={
        0: ("no edit", {}),
        1: ("hide the robber's car: RAM[8] = 155, RAM[28] = 12", {8: 155, 28: 12}),
        2: ("hide the fuel use: the gauge shows full (RAM[86] = 0)", {BANKHEIST_FUEL: 0}),
        3: ("hide the city blocks: RAM[66] = RAM[68] = 0", {66: 0, 68: 0}),
        4: (
            "blend city blocks and walls into the background: RAM[69] = the city's colour (30, 190, 46, 126 for "
            "RAM[0] % 4 = 0-3)",
            {69: Lookup(BANKHEIST_CITY, (30, 190, 46, 126))},
        ),
        5: (
            "hide the banks: bank slots (253) of RAM[24:27] set to empty (255)",
            {a: Replace(BANKHEIST_EMPTY, old=BANKHEIST_BANK) for a in BANKHEIST_SLOTS},
        ),
        6: (
            "hide the police: police slots (254) of RAM[24:27] set to empty (255)",
            {a: Replace(BANKHEIST_EMPTY, old=BANKHEIST_POLICE) for a in BANKHEIST_SLOTS},
        ),
    },
    notes="Not in the paper (an extra of the authors' repository); presets from the authors' Exp_configs.json, "
    "whose single type-5 config is named 5A here. As in the authors' code, a type-1 replacement action is "
    "drawn from the first 10 actions (the moves and FIRE, not the 8 move+FIRE actions), so random actions "
    "rarely drop dynamite. City switch (type 2 mode 3): the authors' code writes the new city (0-3) into "
    "the city counter, which sends a robber past the 4th city back to the first round; here the counter's "
    "rounds (RAM[0] // 4) are kept and only the maze changes.",
    presets={
        "Type1": {"type": 1, "prob": 0.3},
        "Type2": {"type": 2, "mode": 3, "prob": 0.001},
        "Type3": {
            "type": 3,
            "schedule": "cyclic",
            "threshold": 600,
            "concept": {"type": 5, "kind": "ram", "mode": 3, "prob": 0.75},
        },
        "Default": {"type": 4},
        "5A": {"type": 5, "kind": "ram", "mode": 3, "prob": 0.75},
    },
    random_actions=10,
)

#: The games, by name.
GAMES: Mapping[str, Game] = MappingProxyType({g.name: g for g in (BREAKOUT, BOXING, GOPHER, BANKHEIST)})

#: The paper's taxonomy (Table 1), paper numbering -> (class, sub-type). The authors' refactored code
#: (after 2025-09) renames 1, 2, 3, 4, 5 to "1", "2.1", "2.2", "3.1", "3.2".
TAXONOMY: Mapping[int, str] = MappingProxyType(
    {
        0: "deterministic: RAM observation with state labels (the `full` variant here)",
        1: "intrinsic, action dependent: the action is replaced by a uniform random one with probability p",
        2: "intrinsic, action independent, random: game-specific random events",
        3: "intrinsic, action independent, concept drift: default game, then a type-1, -2 or -5 concept",
        4: "partially observed, representation learning: the default game (the baseline)",
        5: "partially observed, missing state variables: crop, blackout or RAM-edited observations",
    }
)
#: The preset names of the IDs, in table order, with the taxonomy type of each.
PRESET_TYPES: Mapping[str, int] = MappingProxyType(
    {"Type1": 1, "Type2": 2, "Type3": 3, "Default": 4, "5A": 5, "5B": 5, "5C": 5}
)
