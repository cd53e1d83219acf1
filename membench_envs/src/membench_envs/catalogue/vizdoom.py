"""Catalogue entries of ViZDoom-Two-Colors (Sorokin et al. 2022, "Explain My Surprise" / MemUP; wrapped by
MIKASA-Base as ``ViZDoomTwoColorsBase-v0``, ``ViZDoomTwoColorsHard-v0`` and ``ViZDoomTwoColorsDelay1000-v0``).

The scenario (map, actors) is written by membench itself (:mod:`membench_envs.envs.backends.vizdoom_wad`); the engine is
the ``vizdoom`` wheel. Plain data: importing this module never imports vizdoom. See
:mod:`membench_envs.envs.backends.vizdoom_two_colors` for every rule and decision.

Every ViZDoom ID is scored by its return (``TaskSpec.score``): MemUP and MIKASA-Base state the task by its
rewards (+1 for an item of the pillar's colour, -1 for the other, survival), and the return counts both the items
and the tics survived. ``info["success"]`` (alive at the timeout; in the delay layout, the vest of the pillar's
colour) is kept in each evaluation but is not the score. (Until 2026-12-07 the IDs were scored by that success.)
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: Upstream's numbers (the authors' ACS script and .cfg, identical in MemUP and MIKASA-Base).
EPISODE_TIMEOUT = 2100  # tics
PILLAR_TICS = 90  # the pillar is taken away 90 tics after the map starts (both upstream maps)
FRAME_SKIP = 2  # MemUP's training set-up (MIKASA-Base's class default is 4)
LAYOUTS = ("base", "hard", "delay")
DELAY_TICS = 2000  # the delay layout's time in the acid room
#: The ID of each layout (the wrapper names it in its errors).
IDS = {
    "base": "MIKASA/ViZDoomTwoColors-v0",
    "hard": "MIKASA/ViZDoomTwoColorsHard-v0",
    "delay": "MIKASA/ViZDoomTwoColorsDelay1000-v0",
}
CUE_TICS = 100  # the delay layout's time in the cue room

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "layout",
        "choice",
        "base",
        choices=LAYOUTS,
        doc="upstream's map: 'base' (two_colors.wad: the pillar right in front of the start), 'hard' "
        "(two_colors_hard.wad: the pillar far off to the side) or 'delay' (two_colors_delay_1000.wad: a cue "
        "room, the acid room with medikits, a choice room with two vests); fixed by the ID",
    ),
    Param(
        "frame_skip",
        "int",
        FRAME_SKIP,
        low=1,
        high=64,
        doc="engine tics per step, the action repeated (MemUP's agents: 2; MIKASA-Base's class default: 4)",
    ),
    Param(
        "pillar_tics",
        "int",
        PILLAR_TICS,
        low=2,
        none_ok=True,
        doc="tics after which the pillar is taken away (upstream: 90 in both maps); None: it stays (the papers' "
        "wording of the base variant)",
    ),
    Param(
        "reward_mode",
        "choice",
        "items",
        choices=("items", "health"),
        doc="'items': +1 per item of the pillar's colour, -1 per other item (delay layout: +0.1 per medikit, +5 "
        "for the vest of the pillar's colour) (MemUP, use_shaping=True, the papers' wording); 'health': +1 on "
        "each step whose health rose (MIKASA-Base's class default)",
    ),
    Param(
        "armour",
        "bool",
        True,
        doc="the items are armour pickups, as upstream's (Doom's GreenArmor and BlueArmor): the armour absorbs part "
        "of a bad item's 25 damage before it is taken away, so a bad green item costs 17 health and a bad red "
        "one 13 (upstream's WAD, measured); False: every bad item costs 25 (the papers' wording)",
    ),
    Param("living_reward", "float", 0.01, doc="reward per engine tic survived (upstream .cfg: 0.01; delay: 0)"),
    Param(
        "episode_timeout",
        "int",
        EPISODE_TIMEOUT,
        low=2,
        high=100_000,
        doc="tics until the episode is truncated (upstream .cfg: 2100; delay: 2300)",
    ),
    Param(
        "delay_tics",
        "int",
        DELAY_TICS,
        low=0,
        high=100_000,
        doc="delay layout only: tics in the acid room before the choice room (upstream: 2000)",
    ),
)


def steps_per_episode(frame_skip: int = FRAME_SKIP, episode_timeout: int = EPISODE_TIMEOUT) -> int:
    """T in steps: observation k is engine tic 1 + k * frame_skip and the engine ends the episode on the first step
    past tic ``episode_timeout``."""
    return (episode_timeout - 1) // frame_skip + 1


def pillar_steps(frame_skip: int = FRAME_SKIP, pillar_tics: int = PILLAR_TICS) -> int:
    """The number of observations showing the pillar's spot with the pillar: observation k is tic 1 + k * frame_skip
    and the pillar is gone from tic ``pillar_tics + 1`` on."""
    return -(-pillar_tics // frame_skip)


def _spec(layout: str, upstream: str, where: str) -> TaskSpec:
    T = steps_per_episode()
    shown = pillar_steps()
    return TaskSpec(
        id=IDS[layout],
        entry_point="membench_envs.envs.backends.vizdoom_two_colors:ViZDoomTwoColors",
        description=(
            f"ViZDoom Two-Colors: acid room (8 HP per 32 tics), red and green items; a pillar ({where}) shows "
            f"which colour heals (+1) and which hurts (-1); it is taken away after {PILLAR_TICS} tics "
            f"({shown} steps); 64x112 first-person image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("object",),
        episode_length=T,
        xi=(2, T - shown + 1),
        xi_paper=(2, 2055),
        obs_type="dict",
        action_type="discrete",
        source="MemUP",
        score="return",  # the rule: this module's docstring
        extra="vizdoom",
        kwargs={"layout": layout},
        params=PARAMS,
        oracle_keys=("good_colour",),
        xi_note=(
            f"event: the pillar, in observations 0 ... {shown - 1} (t_e = 0, dt = {shown - 1}); recall: choosing "
            f"an item from observation {shown} to the last, {T - 1}: xi = t_r - t_e - dt + 1 = 2 ... {T - shown + 1}. "
            f"The paper's 2055 = 2100 - 45 counts the 2100-tic timeout as steps; at frame_skip=2 the episode is {T} "
            "steps"
        ),
        notes=(
            f"MIKASA-Base {upstream} (MemUP's scenario): room 1280 x 1280 with a 256 x 16 block on the east wall, "
            "10 items of each colour at the start, then one item every 30 tics (green, red, ...); an item of the "
            "pillar's colour heals 25, the other costs 17 health (green) or 13 (red): the items are armour "
            "pickups (GreenArmor, BlueArmor) whose armour absorbs part of the 25 damage before upstream's script "
            "clears it (armour=False: 25 for both, the papers' wording); 2100-tic timeout (truncated), death "
            "terminates; 8 actions = left, right, forward, backward, left+forward, left+backward, right+forward, "
            "right+backward; reward 0.01 per tic + the item reward. Observation: image + health (upstream's keys; "
            "its running item score 'shaping_reward' is left out: it tells the good colour without memory). "
            "Scenario built by membench (UDMF map + DECORATE), not upstream's WAD/ACS."
        ),
    )


def _delay_spec() -> TaskSpec:
    timeout = CUE_TICS + DELAY_TICS + 200
    T = steps_per_episode(FRAME_SKIP, timeout)
    shown = pillar_steps(FRAME_SKIP, CUE_TICS)  # observations in the cue room
    choice = pillar_steps(FRAME_SKIP, CUE_TICS + DELAY_TICS)  # the first observation in the choice room
    return TaskSpec(
        id=IDS["delay"],
        entry_point="membench_envs.envs.backends.vizdoom_two_colors:ViZDoomTwoColors",
        description=(
            f"ViZDoom Two-Colors with a delay: a pillar (green or red) in a cue room for {CUE_TICS} tics, then "
            f"{DELAY_TICS} tics in the acid room gathering medikits (+0.1), then a room with a green and a red "
            "vest: the pillar's colour gives +5 and ends the episode, the other 0; 64x112 first-person image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("object",),
        episode_length=T,
        xi=(choice - shown + 2, T - shown + 1),
        obs_type="dict",
        action_type="discrete",
        source="MemUP",
        score="return",  # the rule: this module's docstring
        extra="vizdoom",
        kwargs={"layout": "delay", "pillar_tics": None, "living_reward": 0.0, "episode_timeout": timeout},
        params=PARAMS,
        oracle_keys=("good_colour",),
        xi_note=(
            f"event: the pillar, in the cue room's observations 0 ... {shown - 1} (t_e = 0, dt = {shown - 1}); "
            f"recall: taking a vest, from the first observation in the choice room ({choice}) to the last "
            f"({T - 1}): xi = t_r - t_e - dt + 1 = {choice - shown + 2} ... {T - shown + 1}. Not in the memory paper's "
            "Table 2"
        ),
        notes=(
            "MIKASA-Base ViZDoomTwoColorsDelay1000-v0 (MemUP's two_colors_delay_1000): cue room 608 x 256 with the "
            "pillar 320 units ahead; after 100 tics the player is moved to the acid room (20 medikits at the start, "
            "one more every 50 tics; +0.1 each), after 2000 more tics to the choice room (vests 128 units ahead, "
            "64 to each side); touching a vest ends the episode (terminated; +5 for the pillar's colour), tic 2300 "
            "truncates; living reward 0. Scenario built by membench (UDMF map + DECORATE), not upstream's WAD/ACS."
        ),
    )


TASKS: list[TaskSpec] = [
    _spec("base", "ViZDoomTwoColorsBase-v0", "in front of the start"),
    _spec("hard", "ViZDoomTwoColorsHard-v0", "far off to the side"),
    _delay_spec(),
]
