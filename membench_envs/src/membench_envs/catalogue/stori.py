"""Catalogue entries of STORI (STOchastic-ataRI): Breakout and Boxing under the paper's stochasticity presets, and
Gopher and BankHeist (extras of the authors' repository) under its ``Exp_configs.json``.

IDs: ``STORI/<Game>-<Preset>-v0`` for the experiment presets of each game (the paper's Appendix A.2: ``Type1``,
``Type2``, ``Type3``, ``Default`` = type 4, ``5A``, ``5B``, ``5C``; Gopher and BankHeist: ``Type1``, ``Type2``,
``Type3``, ``Default``, ``5A``) and ``STORI/<Game>-v0``, which takes any config dict
(``gym.make("STORI/Breakout-v0", config={"type": 2, "mode": 3, "prob": 0.1})``; no config = the default game).
The config schema is :mod:`membench_envs.stori.config`; the game tables are :mod:`membench_envs.stori.games`.
``TaskSpec.stochasticity`` is the paper's taxonomy type of each preset (``membench-envs list --stochasticity 5``).
Plain data: importing this module never imports ale-py.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.stori.games import GAMES, PRESET_TYPES, TAXONOMY

#: ALE's v5 episode limit, in emulator frames (30 minutes at 60 Hz).
MAX_EPISODE_FRAMES = 108_000
FRAME_SKIP = 4

PARAMS: tuple[Param, ...] = (
    Param("game", "choice", "Breakout", choices=tuple(GAMES), doc="the Atari game (fixed by the ID)"),
    Param(
        "preset",
        "choice",
        None,
        choices=tuple(PRESET_TYPES),
        none_ok=True,
        doc="the paper's experiment preset (fixed by the ID); None: the `config` kwarg (default: type 4)",
    ),
    OBS_VARIANT,
    Param(
        "frame_skip",
        "int",
        FRAME_SKIP,
        low=1,
        high=16,
        doc="emulator frames per agent step, the action repeated (the paper's agents: 4)",
    ),
    Param(
        "max_pool", "bool", True, doc="observe the pixel-wise max of the step's last two frames (the paper's agents)"
    ),
    Param(
        "noop_max",
        "int",
        30,
        low=0,
        high=1000,
        doc="reset runs a uniform number of NOOP frames in [0, noop_max) (the paper's DreamerV3 set-up: 30)",
    ),
    Param(
        "noops_through_effect",
        "bool",
        True,
        doc="the reset's NOOP frames go through the type-1 / type-2 effect like the agent's frames (the authors' "
        "DreamerV3 pipeline); False: they run on the bare emulator",
    ),
    Param("full_action_space", "bool", False, doc="ALE's 18 actions instead of the game's minimal set"),
    Param("grayscale", "bool", False, doc="grey-scale observation (BT.601 luma), shape (..., 1)"),
    Param(
        "screen_size",
        "int",
        None,
        low=8,
        high=160,
        none_ok=True,
        doc="area-average resize to screen_size x screen_size (84: the usual Atari preprocessing); None: 210x160",
    ),
    Param(
        "max_episode_frames", "int", MAX_EPISODE_FRAMES, low=1, doc="truncation, in emulator frames (ALE v5: 108000)"
    ),
)

_PRESET_TEXT = {
    "Type1": "type 1: each emulator frame, the action is replaced by a uniform random one with p = 0.3",
    "Default": "type 4: the default game (the baseline)",
}
_SPECIFIC = {
    ("Breakout", "Type2"): "type 2 mode 2: a block hit is cancelled with p = 0.25 per hit frame and pays 0",
    ("Breakout", "Type3"): "type 3: the default game, then 5A from the 300th agent step (sudden drift)",
    ("Breakout", "5A"): "type 5 blackout mode 10: the ball is visible only in the band between blocks and paddle",
    ("Breakout", "5B"): "type 5 crop mode 1: the left half of each frame is zeroed with p = 0.75",
    ("Breakout", "5C"): "type 5 crop mode 5: only a random disc of radius 75 px is visible, every frame",
    ("Boxing", "Type2"): "type 2 mode 1: player and enemy colours swap (persistently) with p = 0.001 per frame",
    ("Boxing", "Type3"): "type 3: the default game, then 5C from the 300th agent step (sudden drift)",
    ("Boxing", "5A"): "type 5 blackout mode 9: both scores and the clock are hidden, every frame",
    ("Boxing", "5B"): "type 5 crop mode 2: the right half of each frame is zeroed with p = 0.75",
    ("Boxing", "5C"): "type 5 RAM mode 2: the enemy is hidden (RAM edit) with p = 0.7 per frame",
    ("Gopher", "Type2"): "type 2 mode 2: a hole the farmer fills stays open with p = 0.3 per fill and pays 0",
    ("Gopher", "Type3"): "type 3: the default game and 5A alternate every 600 agent steps (cyclic drift)",
    ("Gopher", "5A"): "type 5 blackout mode 6: the underground below its top 3 lines is painted over, every frame",
    ("BankHeist", "Type2"): "type 2 mode 3: the city's maze switches to another one with p = 0.001 per frame",
    ("BankHeist", "Type3"): "type 3: the default game and 5A alternate every 600 agent steps (cyclic drift)",
    ("BankHeist", "5A"): "type 5 RAM mode 3: the city blocks are hidden (RAM edit) with p = 0.75 per frame",
}


def _spec(game: str, preset: str | None) -> TaskSpec:
    g = GAMES[game]
    if preset is None:
        what = (
            "any STORI config (type 1, 2, 3, 4 or 5) passed as config={...}; validated with one clear error "
            "per bad field; no config = the default game"
        )
    else:
        what = _PRESET_TEXT.get(preset) or _SPECIFIC[(game, preset)]
    origin = "" if game in ("Breakout", "Boxing") else "not in the paper (the authors' repository's configs); "
    return TaskSpec(
        id=f"STORI/{game}-{preset}-v0" if preset else f"STORI/{game}-v0",
        entry_point="membench_envs.stori.env:StoriEnv",
        description=f"{game} (ale-py), {origin}{what}; frame skip 4 with max-pool of the last 2 frames, sticky "
        "actions off",
        suites=("STORI",),
        memory_types=(),
        episode_length=MAX_EPISODE_FRAMES // FRAME_SKIP,
        xi=None,
        obs_type="image",
        action_type="discrete",
        source="STORI",
        extra="atari",
        kwargs={"game": game, **({"preset": preset} if preset else {})},
        params=PARAMS,
        oracle_keys=tuple(g.ram_labels),
        stochasticity=PRESET_TYPES[preset] if preset else None,
        notes=(
            f"Taxonomy type {PRESET_TYPES[preset]}: {TAXONOMY[PRESET_TYPES[preset]]}. "
            if preset
            else "The config's taxonomy type is the user's; `membench-envs list --stochasticity N` lists the presets. "
        )
        + "partial: the (masked) frame; oracle: + the labelled RAM variables; full: the unmasked frame and the RAM "
        "(type 0). Config schema: membench_envs.stori.config.",
    )


TASKS: list[TaskSpec] = [
    _spec(game, preset) for game in GAMES for preset in (*(p for p in PRESET_TYPES if p in GAMES[game].presets), None)
]
