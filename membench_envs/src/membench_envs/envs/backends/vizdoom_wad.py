"""The ViZDoom-Two-Colors scenario, written by membench: a UDMF map and DECORATE actors packed in a PWAD.

Nothing here is taken from upstream's WAD: the map is the room upstream describes (its numbers are in
:mod:`membench_envs.envs.backends.vizdoom_two_colors`), written as UDMF text (ZDoom builds the nodes itself), and the
game logic of upstream's ACS script is done by DECORATE actors:

- ``TwoColorsDirector<Good>`` stands on the pillar's spot. At map start it puts up the pillar of the good colour
  and drops ``INITIAL_ITEMS`` items of each colour at uniform positions (those whose 40-unit box would touch a
  wall are drawn again, as upstream's ``Spawn`` retries until the spot is free); after ``FIRST_SPAWN_TICS`` it
  drops one green item, ``SPAWN_EVERY`` tics later one red item, and so on.
- ``TwoColorsPillar<Colour>``: the tall column of that colour, taken away after ``pillar_tics`` tics.
- ``TwoColors<Colour><Good|Bad>``: the armour sprite of that colour; touching it heals (``Thing_Damage(0, -25)``)
  or hurts (``Thing_Damage(0, 25)``) the player and the item is gone. With ``armour=True`` (the default) the item
  is an armour pickup, as upstream's (its ACS spawns Doom's ``GreenArmor`` and ``BlueArmor`` and runs
  ``Thing_Damage`` then ``ClearInventory()`` from the pickup's special): the pickup first gives the player that
  armour (``GreenArmor``: 100 points absorbing 33.335 %; ``BlueArmor``, drawn red by Freedoom: 200 points
  absorbing 50 %), the 25 damage is then partly absorbed (ZDoom's ``BasicArmor::AbsorbDamage`` saves
  ``int(25 * percent)``: 8 or 12), and the armour is taken away again (``A_TakeInventory("BasicArmor")``), all in
  the same tic: a bad green item costs 17 health, a bad red one 13, as measured on upstream's WAD; healing is not
  affected. With ``armour=False`` no armour is given: every bad item costs 25. A good item also gives the player
  one bullet and a bad one counts as a found item: the environment reads these two engine counters (AMMO2,
  ITEMCOUNT) for the rewards, which works on the episode's last tic too.

The WAD has two maps, identical but for the director: MAP01 (green is good) and MAP02 (red is good). The
environment picks the map of each episode from its own seed. :func:`scenario_path` writes the WAD once per
parameter set into a cache directory (deterministic bytes; the file name carries their hash).

The delay layout's moves of the player between rooms are DECORATE items given to it (``Thing_Move``; upstream's ACS
uses ``SetActorPosition``). The cache directory is ``$MEMBENCH_CACHE_DIR/vizdoom``, else ``~/.cache/membench/vizdoom``.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from pathlib import Path

#: The room: a square of 1280 map units with a 256 x 16 block against the east wall (upstream's geometry).
ROOM_MIN, ROOM_MAX = -768, 512
BLOCK = (256, -520, 512, -504)  # x0, y0, x1, y1
ITEM_RADIUS = 20
INITIAL_ITEMS = 10  # of each colour
FIRST_SPAWN_TICS = 90
SPAWN_EVERY = 30
ITEM_HEALTH = 25
#: Player start and pillar spot of each layout: (x, y, angle in degrees).
LAYOUTS = {
    "base": {"start": (-384, -640, 45), "pillar": (-256, -512)},
    "hard": {"start": (-384, -640, 0), "pillar": (-128, -128)},
    "delay": {"start": (-1440, 0, 0), "pillar": (-1120, 0)},
}
#: The delay layout (upstream's two_colors_delay_1000): a cue room west of the acid room, a choice room east of it.
CUE_ROOM = (-1568, -128, -960, 128)  # x0, y0, x1, y1
CHOICE_ROOM = ((736, -96), (736, 96), (992, 128), (992, -128))  # a trapezoid, clockwise
ACID_ARRIVAL, CHOICE_ARRIVAL = (-128, -128), (800, 0)  # map spots 20 and 21
VESTS = {"Green": (928, 64), "Red": (928, -64)}
CUE_TICS = 100  # the player is moved from the cue room to the acid room after 100 tics
MEDIKITS, MEDIKIT_EVERY = 20, 50
DELAY_TICS = 2000  # in the acid room
COLOURS = ("Green", "Red")  # index 1 = red, as upstream's is_red
#: Freedoom sprites: the tall green / red columns and the green / "blue" (red in Freedoom) armour.
PILLAR_SPRITES = {"Green": "COL1", "Red": "COL3"}
ITEM_SPRITES = {"Green": "ARM1", "Red": "ARM2"}
#: The armour each item colour is (upstream spawns Doom's GreenArmor and BlueArmor); it absorbs int(25 * share) of a
#: bad item's 25 damage (ZDoom's savepercent: 33.335 % and 50 %), so the item costs 17 and 13 health.
ITEM_ARMOUR = {"Green": "GreenArmor", "Red": "BlueArmor"}
DIRECTOR_EDNUM = 20_001  # + index of the good colour; + 2 + index: the delay layout's
VEST_EDNUM = 20_011  # + 2 * colour index + (1 if good)


def wad_bytes(lumps: list[tuple[str, bytes]]) -> bytes:
    """A PWAD holding ``lumps`` (name, data) in order: header, lump data, directory."""
    body, directory, offset = [], [], 12
    for name, data in lumps:
        if len(name) > 8 or not name.isascii():
            raise ValueError(f"bad lump name {name!r}")
        directory.append(struct.pack("<ii8s", offset, len(data), name.encode("ascii")))
        body.append(data)
        offset += len(data)
    return struct.pack("<4sii", b"PWAD", len(lumps), offset) + b"".join(body) + b"".join(directory)


def read_lumps(data: bytes) -> list[tuple[str, bytes]]:
    """The (name, data) lumps of a WAD, in directory order (the inverse of :func:`wad_bytes`)."""
    kind, count, offset = struct.unpack_from("<4sii", data, 0)
    if kind not in (b"PWAD", b"IWAD"):
        raise ValueError("not a WAD")
    lumps = []
    for i in range(count):
        pos, size, name = struct.unpack_from("<ii8s", data, offset + 16 * i)
        lumps.append((name.rstrip(b"\0").decode("ascii"), data[pos : pos + size]))
    return lumps


def _block(kind: str, fields: dict) -> str:
    lines = []
    for key, value in fields.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = f'"{value}"'
        elif isinstance(value, float):
            text = f"{value:.3f}"
        else:
            text = str(value)
        lines.append(f"  {key} = {text};")
    return kind + "\n{\n" + "\n".join(lines) + "\n}\n"


_EVERYONE = {"single": True, "coop": True, "dm": True, **{f"skill{i}": True for i in range(1, 6)}}


def _room(out: list[str], vertices: list[tuple[float, float]], texture: str, sector: int, first: int) -> int:
    """Append a closed loop of one-sided walls through ``vertices`` (the front side is on the right, so a
    clockwise loop faces inside) and its sidedef; returns the next free vertex index."""
    out += [_block("vertex", {"x": float(vx), "y": float(vy)}) for vx, vy in vertices]
    n = len(vertices)
    side = sum(chunk.startswith("sidedef") for chunk in out)
    for i in range(n):
        v1, v2 = first + i, first + (i + 1) % n
        out.append(_block("linedef", {"v1": v1, "v2": v2, "sidefront": side, "blocking": True}))
    out.append(_block("sidedef", {"sector": sector, "texturemiddle": texture}))
    return first + n


def _box(x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float]]:
    return [(x0, y0), (x0, y1), (x1, y1), (x1, y0)]  # clockwise (y up)


def textmap(layout: str, good: int) -> str:
    """The UDMF map of ``layout`` whose director makes colour ``good`` (0 green, 1 red) the healing one."""
    spot = LAYOUTS[layout]
    x, y, angle = spot["start"]
    px, py = spot["pillar"]
    delay = layout == "delay"
    out = ['namespace = "zdoom";\n']
    out.append(_block("thing", {"x": float(x), "y": float(y), "type": 1, "angle": angle, **_EVERYONE}))
    director = DIRECTOR_EDNUM + good + (2 if delay else 0)
    out.append(_block("thing", {"x": float(px), "y": float(py), "type": director, **_EVERYONE}))
    if delay:
        for tid, (sx, sy) in ((20, ACID_ARRIVAL), (21, CHOICE_ARRIVAL)):
            out.append(_block("thing", {"x": float(sx), "y": float(sy), "type": 9001, "id": tid, **_EVERYONE}))
        for i, colour in enumerate(COLOURS):
            vx, vy = VESTS[colour]
            out.append(
                _block("thing", {"x": float(vx), "y": float(vy), "type": VEST_EDNUM + 2 * i + (i == good), **_EVERYONE})
            )
    # The acid room (its walls face inside) and the block against its east wall (faces outside).
    nxt = _room(out, _box(ROOM_MIN, ROOM_MIN, ROOM_MAX, ROOM_MAX), "STONE2", 0, 0)
    bx0, by0, bx1, by1 = BLOCK
    nxt = _room(out, [(bx0, by0), (bx1, by0), (bx1, by1), (bx0, by1)], "STONE2", 0, nxt)
    # Special 83: Doom's "damage 8 per 32 tics" floor (upstream's acid).
    sectors = [{"texturefloor": "NUKAGE1", "textureceiling": "CEIL4_1", "heightceiling": 128, "special": 83}]
    if delay:
        nxt = _room(out, _box(*CUE_ROOM), "CEMENT3", 1, nxt)
        _room(out, list(CHOICE_ROOM), "BRONZE4", 2, nxt)
        sectors += [
            {"texturefloor": "FLOOR4_5", "textureceiling": "TLITE6_6", "heightceiling": 128},
            {"texturefloor": "FLAT5_2", "textureceiling": "CEIL3_4", "heightceiling": 128},
        ]
    out += [_block("sector", sector) for sector in sectors]
    return "".join(out)


def _item(colour: str, good: bool, armour: bool = True) -> str:
    sprite = ITEM_SPRITES[colour]
    amount = -ITEM_HEALTH if good else ITEM_HEALTH
    # The counters the environment reads (also after the episode's end): a good item adds one bullet (AMMO2; the
    # player cannot shoot), a bad one counts as a found item (ITEMCOUNT).
    count = '    TNT1 A 0 A_GiveInventory("Clip", 1)\n' if good else ""
    # Upstream's items are armour: it is worn while Thing_Damage runs and taken away right after (its ClearInventory)
    wear = f'    TNT1 A 0 A_GiveInventory("{ITEM_ARMOUR[colour]}", 1)\n' if armour else ""
    shed = '    TNT1 A 0 A_TakeInventory("BasicArmor", 0)\n' if armour else ""
    return f"""actor TwoColors{colour}{"Good" if good else "Bad"} : CustomInventory
{{
  Radius {ITEM_RADIUS}
  Height 16
  {"-" if good else "+"}COUNTITEM
  +INVENTORY.ALWAYSPICKUP
  Inventory.PickupMessage ""
  States
  {{
  Spawn:
    {sprite} A 6
    {sprite} B 7 bright
    loop
  Pickup:
{count}{wear}    TNT1 A 0 Thing_Damage(0, {amount}, 0)
{shed}    stop
  }}
}}
"""


def _pillar(colour: str, pillar_tics: int | None) -> str:
    sprite = PILLAR_SPRITES[colour]
    life = f"    {sprite} A {pillar_tics - 1}\n    stop" if pillar_tics is not None else f"    {sprite} A -1\n    stop"
    return f"""actor TwoColorsPillar{colour}
{{
  Radius 16
  Height 52
  +SOLID
  States
  {{
  Spawn:
    {sprite} A 1
{life}
  }}
}}
"""


_ANYWHERE = "SXF_NOCHECKPOSITION | SXF_ABSOLUTEPOSITION"  # offsets not turned by the spawner's angle


def _drop(label: str, cls: str) -> str:
    """DECORATE lines that draw a free spot uniformly and drop ``cls`` there (20 units above the floor)."""
    lo, hi = ROOM_MIN + ITEM_RADIUS + 1, ROOM_MAX - ITEM_RADIUS - 1
    bx0, by0, _bx1, by1 = BLOCK
    blocked = (
        f"user_x > {bx0 - ITEM_RADIUS - 1} && user_y > {by0 - ITEM_RADIUS - 1} && user_y < {by1 + ITEM_RADIUS + 1}"
    )
    return f"""  {label}:
    TNT1 A 0 A_SetUserVar("user_x", random({lo}, {hi}))
    TNT1 A 0 A_SetUserVar("user_y", random({lo}, {hi}))
    TNT1 A 0 A_JumpIf({blocked}, "{label}")
    TNT1 A 0 A_SpawnItemEx("{cls}", user_x - x, user_y - y, 20 - z, 0, 0, 0, 0, {_ANYWHERE})
"""


def _director_head(name: str, ednum: int, good: int) -> str:
    """The start of a director actor: its loop variables, and on spawn the pillar of the good colour."""
    return f"""actor {name} {ednum}
{{
  var int user_i;
  var int user_x;
  var int user_y;
  +NOBLOCKMAP
  +NOSECTOR
  +NOGRAVITY
  States
  {{
  Spawn:
    TNT1 A 0
    TNT1 A 0 A_SpawnItemEx("TwoColorsPillar{COLOURS[good]}", 0, 0, 0, 0, 0, 0, 0, SXF_NOCHECKPOSITION)
    TNT1 A 0 A_SetUserVar("user_i", 0)"""


def _director(good: int) -> str:
    item = {c: f"TwoColors{c}{'Good' if i == good else 'Bad'}" for i, c in enumerate(COLOURS)}
    return f"""{_director_head(f"TwoColorsDirector{COLOURS[good]}", DIRECTOR_EDNUM + good, good)}
{_drop("InitialGreen", item["Green"])}{_drop("InitialRed", item["Red"])}    TNT1 A 0 A_SetUserVar("user_i", user_i + 1)
    TNT1 A 0 A_JumpIf(user_i < {INITIAL_ITEMS}, "InitialGreen")
    TNT1 A {FIRST_SPAWN_TICS}
{_drop("NextGreen", item["Green"])}    TNT1 A {SPAWN_EVERY}
{_drop("NextRed", item["Red"])}    TNT1 A {SPAWN_EVERY}
    goto NextGreen
  }}
}}
"""


def _delay_actors() -> list[str]:
    """The delay layout's medikit (a Doom medikit that also counts as a found item, ITEMCOUNT), its two vests
    (touching one ends the map; the pillar's colour also adds a bullet, AMMO2) and the player's two moves."""
    parts = [
        """actor TwoColorsMedikit : Medikit
{
  +COUNTITEM
  Inventory.PickupMessage ""
}
"""
    ]
    for i, colour in enumerate(COLOURS):
        sprite = ITEM_SPRITES[colour]
        for good in (False, True):
            count = '    TNT1 A 0 A_GiveInventory("Clip", 1)\n' if good else ""
            name = f"TwoColorsVest{colour}{'Good' if good else 'Bad'}"
            parts.append(f"""actor {name} : CustomInventory {VEST_EDNUM + 2 * i + good}
{{
  Radius {ITEM_RADIUS}
  Height 16
  +INVENTORY.ALWAYSPICKUP
  Inventory.PickupMessage ""
  States
  {{
  Spawn:
    {sprite} A 6
    {sprite} B 7 bright
    loop
  Pickup:
{count}    TNT1 A 0 Exit_Normal(0)
    stop
  }}
}}
""")
    # The player's two moves: given to the player, these run on it (tid 0 = the player).
    for room, (tid, settle) in {
        "Acid": (20, "    TNT1 A 0 A_Stop\n    TNT1 A 0 A_SetAngle(0)\n"),
        "Choice": (21, ""),
    }.items():
        parts.append(f"""actor TwoColorsTo{room}Room : CustomInventory
{{
  +INVENTORY.ALWAYSPICKUP
  States
  {{
  Pickup:
    TNT1 A 0 Thing_Move(0, {tid}, 1)
{settle}    stop
  }}
}}
""")
    return parts


def _delay_director(good: int, delay_tics: int) -> str:
    """Upstream's two_colors_delay_1000 script: the pillar and 20 medikits at the start; after 100 tics the player
    goes to the acid room, where a medikit appears every 50 tics; after ``delay_tics`` more, to the choice room."""
    return f"""{_director_head(f"TwoColorsDelayDirector{COLOURS[good]}", DIRECTOR_EDNUM + 2 + good, good)}
{_drop("Initial", "TwoColorsMedikit")}    TNT1 A 0 A_SetUserVar("user_i", user_i + 1)
    TNT1 A 0 A_JumpIf(user_i < {MEDIKITS}, "Initial")
    TNT1 A {CUE_TICS}
    TNT1 A 0 A_GiveInventory("TwoColorsToAcidRoom", 1, AAPTR_PLAYER1)
    TNT1 A 0 A_SetUserVar("user_i", 0)
  InAcidRoom:
    TNT1 A 0 A_JumpIf(user_i >= {delay_tics}, "Choice")
    TNT1 A {MEDIKIT_EVERY}
{_drop("Next", "TwoColorsMedikit")}    TNT1 A 0 A_SetUserVar("user_i", user_i + {MEDIKIT_EVERY})
    goto InAcidRoom
  Choice:
    TNT1 A 0 A_GiveInventory("TwoColorsToChoiceRoom", 1, AAPTR_PLAYER1)
    TNT1 A -1
    stop
  }}
}}
"""


def decorate(pillar_tics: int | None, delay_tics: int = DELAY_TICS, armour: bool = True) -> str:
    parts = [_item(c, g, armour) for c in COLOURS for g in (True, False)]
    parts += [_pillar(c, pillar_tics) for c in COLOURS]
    parts += [_director(good) for good in range(len(COLOURS))]
    parts += _delay_actors()
    parts += [_delay_director(good, delay_tics) for good in range(len(COLOURS))]
    return "\n".join(parts)


def build_scenario(
    layout: str = "base", pillar_tics: int | None = 90, delay_tics: int = DELAY_TICS, armour: bool = True
) -> bytes:
    """The scenario WAD: DECORATE, then MAP01 (green good) and MAP02 (red good)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; valid: {', '.join(LAYOUTS)}")
    if pillar_tics is not None and pillar_tics < 2:
        raise ValueError(f"pillar_tics must be >= 2 or None, got {pillar_tics}")
    lumps = [("DECORATE", decorate(pillar_tics, delay_tics, armour).encode("ascii"))]
    for good in range(len(COLOURS)):
        lumps += [(f"MAP0{good + 1}", b""), ("TEXTMAP", textmap(layout, good).encode("ascii")), ("ENDMAP", b"")]
    return wad_bytes(lumps)


def cache_dir() -> Path:
    """``$MEMBENCH_CACHE_DIR/vizdoom``, else ``~/.cache/membench/vizdoom`` (the temp dir if that is read-only)."""
    root = os.environ.get("MEMBENCH_CACHE_DIR")
    base = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "membench"
    path = base / "vizdoom"
    try:
        path.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:
        fallback = Path(tempfile.gettempdir()) / "membench-vizdoom"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def scenario_path(
    layout: str = "base", pillar_tics: int | None = 90, delay_tics: int = DELAY_TICS, armour: bool = True
) -> Path:
    """The scenario WAD on disk, written on first use (atomically; the name carries the content hash)."""
    data = build_scenario(layout, pillar_tics, delay_tics, armour)
    digest = hashlib.sha256(data).hexdigest()[:16]
    path = cache_dir() / f"two_colors_{layout}_{digest}.wad"
    if not path.exists() or path.read_bytes() != data:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path
