"""Catalogue entries of MiniGrid-Memory (minigrid 3.2.0 ``MemoryEnv``) in the set-ups of the memory-classification
paper (Cherepanov et al., App. F and §5.1): ``MIKASA/MiniGridMemoryS<size>-v0`` (fixed corridor) and
``MIKASA/MiniGridMemoryS<size>Random-v0`` (variable corridor).

Fixed vs variable. minigrid's ``MemoryEnv`` has one flag, ``random_length``: False puts the junction at the
fixed column ``size - 2`` (hallway end ``size - 3``); True draws the hallway end uniformly in ``[4, size - 3]``
every episode. In both, the agent starts facing east at a uniformly random cell of the corridor row
(columns ``1 .. hallway end``), which is the paper's "instantiated at a random position within the corridor".
The paper's "fixed L" / "variable L" is the corridor length, i.e. this flag. The start position does not
change ξ: whatever the start, the last sight of the start-room object on a shortest route is at a fixed
distance from the junction, so ξ = hallway end + 2 = size − 1 in the fixed set-up (the paper's L = 21,
ξ = 22 is size 23) and ξ ∈ [6, size − 1] in the variable one (the paper writes [7, L + 1]; minigrid's
shortest corridor, hallway end 4, gives 6). ``tests/envs/test_minigrid.py`` measures ξ with a scripted
optimal agent.

Observation. The paper (App. F) limits the view to a 3x3 frame and calls the observations "a 2D space of image
observations"; its text does not say which encoding. The authors' public code for this set-up (the RATE repository,
CognitiveAISystems/RATE, ``MinigridMemory/get_data/environments/minigrid_env.py``: 3x3 view, 3 actions, 96 steps)
feeds the *rendered RGB* view: minigrid's ``ViewSizeWrapper(3)`` + ``RGBImgPartialObsWrapper(tile_size=28)``, an
84x84x3 picture of the agent's window (scaled to [0, 1] and put channel-first there). So the default here is
``obs_encoding="rgb"``: ``image`` is that picture, uint8 (3·28, 3·28, 3) in minigrid's (H, W, C) layout (divide by
255 and transpose for RATE's exact tensor). ``obs_encoding="symbolic"`` gives minigrid's own ``image`` encoding
(object, colour, state) per cell, uint8 (3, 3, 3), which is what minigrid's and MIKASA-Base's registered IDs return.
``tile_size`` sets the pixels per cell of the RGB view.

IDs and their upstream twins (every ID here uses the paper's 3x3 view and 95-step limit; the upstream IDs use
minigrid's defaults, a 7x7 view and 5·size² steps: pass ``agent_view_size=7, max_steps=5*size**2,
obs_encoding="symbolic", full_action_space=True`` to get those):

================================  =========================================  ===========================
membench ID                       MIKASA-Base ID (its size)                  minigrid 3.2.0 ID
================================  =========================================  ===========================
MIKASA/MiniGridMemoryS7-v0        MiniGrid-MemoryS7-v0 (7)                   MiniGrid-MemoryS7-v0
MIKASA/MiniGridMemoryS9-v0        –                                          MiniGrid-MemoryS9-v0
MIKASA/MiniGridMemoryS11-v0       –                                          MiniGrid-MemoryS11-v0
MIKASA/MiniGridMemoryS13-v0       MiniGrid-MemoryS13-v0 (13)                 MiniGrid-MemoryS13-v0
MIKASA/MiniGridMemoryS19-v0       MiniGrid-MemoryS19-v0 (19)                 –
MIKASA/MiniGridMemoryS23-v0       – (the memory paper's §5.1 set-up, L = 21)  –
MIKASA/MiniGridMemoryS7Random-v0  MiniGrid-MemoryS7Random-v0 (7)             –
MIKASA/MiniGridMemoryS13Random-v0 MiniGrid-MemoryS13Random-v0 (13)           MiniGrid-MemoryS13Random-v0
MIKASA/MiniGridMemoryS17Random-v0 –                                          MiniGrid-MemoryS17Random-v0
MIKASA/MiniGridMemoryS19Random-v0 MiniGrid-MemoryS17Random-v0 (built at 19)  –
MIKASA/MiniGridMemoryS23Random-v0 – (the memory paper's §5.1 set-up)         –
================================  =========================================  ===========================

MIKASA-Base registers ``MiniGrid-MemoryS17Random-v0`` with ``size=19``; membench names IDs by the size they are
built at, so that task is ``MIKASA/MiniGridMemoryS19Random-v0`` here, and ``MIKASA/MiniGridMemoryS17Random-v0`` is
minigrid's size-17 task. Suites: ``MIKASA-Base`` for MIKASA-Base's sizes, ``MiniGrid`` for minigrid's registered
ones, ``MEM`` for the paper's size-23 experiment.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: The paper's time limit (App. F): the episode ends after 95 steps; reward on success 1 − 0.9·t/95.
TIME_LIMIT = 95
#: Pixels per cell of the RGB view (the authors' RATE code: 28, so a 3x3 view is 84x84).
TILE_SIZE = 28

FIXED_SIZES = (7, 9, 11, 13, 19, 23)
RANDOM_SIZES = (7, 13, 17, 19, 23)
#: (size, random_length) of the IDs each upstream registers (MIKASA-Base's "S17Random" is built at size 19).
MIKASA_BASE = {(7, False), (13, False), (19, False), (7, True), (13, True), (19, True)}
MINIGRID = {(7, False), (9, False), (11, False), (13, False), (13, True), (17, True)}

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("size", "int", 13, low=7, odd=True, doc="grid size (minigrid's MemoryEnv needs an odd size >= 7)"),
    Param("random_length", "bool", False, doc="variable corridor (hallway end drawn every episode)"),
    Param("max_steps", "int", TIME_LIMIT, low=1, doc="time limit; the success reward is 1 - 0.9 t / max_steps"),
    Param("agent_view_size", "int", 3, low=3, odd=True, doc="side of the agent's square view"),
    Param("full_action_space", "bool", False, doc="minigrid's 7 actions instead of left / right / forward"),
    Param(
        "obs_encoding",
        "choice",
        "rgb",
        choices=("rgb", "symbolic"),
        doc="'rgb': the rendered view (authors' code); 'symbolic': minigrid's (object, colour, state) cells",
    ),
    Param("tile_size", "int", TILE_SIZE, low=1, high=64, doc="pixels per cell of the RGB view"),
)


def env_id(size: int, random_length: bool) -> str:
    """The ID of a size and corridor mode (also named in the wrapper's errors for other kwargs)."""
    return f"MIKASA/MiniGridMemoryS{size}{'Random' if random_length else ''}-v0"


def _suites(size: int, random_length: bool) -> tuple[str, ...]:
    key = (size, random_length)
    named = (("MIKASA-Base", key in MIKASA_BASE), ("MiniGrid", key in MINIGRID), ("MEM", size == 23))
    return tuple(name for name, member in named if member)


def _spec(size: int, random_length: bool) -> TaskSpec:
    hi = size - 1
    lo = min(6, hi) if random_length else hi
    upstream = {(19, True): "MIKASA-Base's MiniGrid-MemoryS17Random-v0 (which it builds at size 19). "}
    mode = "variable corridor (random_length=True)" if random_length else "fixed corridor"
    paper = " (the paper's §5.1 set-up, L = 21)" if size == 23 else ""
    return TaskSpec(
        id=env_id(size, random_length),
        entry_point="membench_envs.envs.backends.minigrid:MiniGridMemory",
        description=(
            f"MiniGrid-Memory {size}x{size}, {mode}{paper}: see the object in the start room, walk the corridor, "
            "enter the arm of the matching object; 3x3 RGB view, 95 steps, reward 1 − 0.9·t/95 on success"
        ),
        suites=_suites(size, random_length),
        memory_types=("object",),
        episode_length=TIME_LIMIT,
        xi=(lo, hi),
        obs_type="dict",
        action_type="discrete",
        source="MEM",
        extra="minigrid",
        kwargs={"size": size, "random_length": random_length},
        params=PARAMS,
        oracle_keys=("start_object",),
        # Table 2: fixed {L+1}, variable [7, L+1], with L = size - 2 the corridor length (L = 21 for size 23).
        xi_paper=((7, size - 1) if size - 1 >= 7 else None) if random_length else (size - 1, size - 1),
        xi_note=(
            "event: last sight of the start-room object; recall: the step into the matching arm. On a shortest "
            "route xi = hallway_end + 2 whatever the start cell"
            + (
                f"; hallway_end in [4, {size - 3}] -> xi in [6, {hi}] (paper: [7, L+1])"
                if random_length
                else f"; hallway_end = {size - 3} -> xi = {hi} (paper: {{L+1}})"
            )
        ),
        notes=upstream.get((size, random_length), "")
        + (
            "minigrid 3.2.0 MemoryEnv with agent_view_size=3 (minigrid default 7), max_steps=95 (minigrid default "
            "5·size²), actions {left, right, forward} as in the paper authors' code (minigrid's other 4 actions are "
            "no-ops here; full_action_space=True restores them); obs_encoding='rgb' (default: the rendered 84x84 view, "
            "as the authors' RATE code) or 'symbolic' (minigrid's (3, 3, 3) cells, as minigrid's and MIKASA-Base's "
            "IDs). The episode ends when the agent steps into the "
            "cell next to either end object (the paper: 'turns at the junction') or after 95 steps."
        ),
    )


TASKS: list[TaskSpec] = [_spec(s, False) for s in FIXED_SIZES] + [_spec(s, True) for s in RANDOM_SIZES]
