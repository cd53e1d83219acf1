"""Catalogue entries of Numpad (Humplik et al. 2019, "Meta reinforcement learning as task inference"), as MIKASA-Base
ships it (the numpad-gym code): ``MIKASA/NumpadDiscrete-v0``, ``MIKASA/NumpadContinuous-v0`` and
``MIKASA/NumpadContinuousDiscreteActions-v0``, MIKASA-Base's ``Numpad-Discrete-v0``, ``Numpad-Continuous-v0`` and
``Numpad-ContinuousDiscreteActions-v0``. Written by us on MuJoCo (extra ``numpad``); every rule and number is in
:mod:`membench_envs.envs.backends.numpad`.

The three upstream IDs differ in how the ball moves, not in what is observed:

- ``discrete``: the ball stands on a tile and each action moves it one tile (up, right, down, left); the
  observation is the lights and the ball's tile; 500 steps.
- ``continuous``: the ball rolls on the pad; the action (two numbers in [-1, 1]) is an acceleration; the
  observation is the ball's position and velocity and the lights; 200 steps.
- ``continuous_discrete_actions``: the rolling ball of ``continuous``, driven by 8 fixed accelerations (the four
  directions and the four diagonals, each component ±1); same observation and length as ``continuous``.

Upstream has no size or length presets (its defaults: a 3 x 3 pad, a sequence of 4 tiles), so these are kwargs.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: Upstream's defaults: a 3 x 3 pad, 4 tiles to press, 500 steps (discrete) / 200 steps (the rolling ball).
NUMPAD_SIZE = 3
SEQUENCE_LENGTH = 4
MODES = ("discrete", "continuous", "continuous_discrete_actions")
EPISODE_LENGTH = {"discrete": 500, "continuous": 200, "continuous_discrete_actions": 200}
#: The ID of each mode (the wrapper names it in its errors) and its upstream twin.
IDS = {
    "discrete": "MIKASA/NumpadDiscrete-v0",
    "continuous": "MIKASA/NumpadContinuous-v0",
    "continuous_discrete_actions": "MIKASA/NumpadContinuousDiscreteActions-v0",
}
UPSTREAM = {
    "discrete": "Numpad-Discrete-v0",
    "continuous": "Numpad-Continuous-v0",
    "continuous_discrete_actions": "Numpad-ContinuousDiscreteActions-v0",
}

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "mode",
        "choice",
        "continuous",
        choices=MODES,
        doc="how the ball moves: tile by tile, or rolling under continuous / 8 discrete accelerations",
    ),
    Param("numpad_size", "int", NUMPAD_SIZE, low=2, high=8, doc="N: the pad is N x N tiles"),
    Param(
        "sequence_length", "int", SEQUENCE_LENGTH, low=1, high=64, doc="n: tiles in the hidden sequence (at most N * N)"
    ),
    Param(
        "max_steps",
        "int",
        None,
        low=1,
        none_ok=True,
        doc="T, the fixed episode length; None: upstream's 500 (discrete) or 200 (rolling ball)",
    ),
    Param(
        "speed_cap",
        "bool",
        True,
        doc="cap the ball's speed at half a tile per step on each axis (upstream's stated limit; its code "
        "clips the acceleration instead, so False lets the ball jump tiles as upstream's code does)",
    ),
    Param(
        "obs_mode",
        "choice",
        "vector",
        choices=("vector", "image"),
        doc="'vector': upstream's numbers; 'image': a top-down MuJoCo picture of the pad",
    ),
    Param("image_size", "int", 64, low=16, high=256, doc="side in pixels of the image observation"),
)

_EP = "membench_envs.envs.backends.numpad:Numpad"


def _numpad(mode: str) -> TaskSpec:
    T = EPISODE_LENGTH[mode]
    moves = {
        "discrete": "one tile per action (4 actions: up, right, down, left)",
        "continuous": "a ball rolled by a continuous 2-D acceleration",
        "continuous_discrete_actions": "a ball rolled by 8 fixed accelerations (4 directions, 4 diagonals)",
    }[mode]
    return TaskSpec(
        id=IDS[mode],
        entry_point=_EP,
        description=(
            f"Numpad: press a hidden sequence of {SEQUENCE_LENGTH} neighbouring tiles of a {NUMPAD_SIZE}x"
            f"{NUMPAD_SIZE} pad in order, {moves}; +1 per newly found tile, a wrong tile turns the lights off; "
            f"{T} steps"
        ),
        suites=("MIKASA-Base",),
        memory_types=("sequential",),
        episode_length=T,
        xi=(2, T - 1),
        obs_type="vector",
        action_type="continuous" if mode == "continuous" else "discrete",
        source="Humplik",
        extra="numpad",
        kwargs={"mode": mode},
        params=PARAMS,
        oracle_keys=("sequence_order", "progress"),
        xi_note=(
            "event: a tile of the sequence seen lit (its light shows which tile was right); recall: pressing it "
            "again after the lights went dark (a wrong tile, or a completed sequence). xi = t_r - t_e + 1 for the "
            "last observation t_e that showed it lit: 2 when a wrong press darkens the pad and the very next action "
            "heads back, up to T - 1 for a tile lit by the first action and needed by the last"
        ),
        notes=(
            f"MIKASA-Base {UPSTREAM[mode]} (numpad-gym, Humplik et al.'s task without the jump action); "
            f"{NUMPAD_SIZE}x{NUMPAD_SIZE} pad, {SEQUENCE_LENGTH} tiles, T = {T} (terminated at T, as upstream). "
            "Ball physics run in MuJoCo in upstream's pixel units; obs_mode='image' renders the pad top-down"
        ),
    )


TASKS: list[TaskSpec] = [_numpad(mode) for mode in MODES]
