"""Searing Spotlights (Pleines et al., "Memory Gym"; the ``memory-gym`` package's ``SearingSpotlights-v0``, which
MIKASA-Base vendors), re-implemented in numpy with upstream's random draws, rules, rewards and pictures. No pygame:
the sprites are rasterised the way pygame draws them (in :mod:`~membench_envs.envs.memory_gym.common`, shared with
Mortar Mayhem and Mystery Path), and the darkness is pygame's surface-alpha blend of a black layer.

Arena. An 84 x 84 chessboard of 12 px tiles (white and blue; red on a step the agent is hit, ``visual_feedback``)
under a 4 px top bar. At the reset, from the episode's ``numpy.random.Generator`` (seeded as gymnasium seeds
upstream's ``np_random``, so a seed gives upstream's episode) and in upstream's order: the agent's facing (one of 8),
its position (a free cell of an 84 x 84 grid sampler plus 2 or 3 px on each axis; the sampler then blocks a disc of
radius 28 around it), ``initial_spawns`` spotlights, the number of coins (from ``num_coins``), each coin and the exit
(sampler cells blocking radius 21, plus 2 or 3 px, kept 7 px inside the screen). A spotlight: a radius (integers in
[min, max + 1)), a speed (uniform), and three angles: it travels from a point on a circle around the arena (the
half diagonal plus its radius away from the centre) towards the opposite side, along upstream's double lerp
spawn → (target → offset), one ``speed`` of its path per step, and leaves the list once there.

Dynamics. Actions MultiDiscrete([3, 3]) = [0 none, 1 left, 2 right], [0 none, 1 up, 2 down]: the agent moves 3 px
(2 per axis diagonally) and stays 6 px inside the arena below the top bar. Each step, in upstream's order: the
darkness's alpha grows by int(255 / ``light_dim_off_duration``) (42: 0 at the reset, 255 from step 7 on); every
40 steps (``initial_spawn_interval + spawn_interval_threshold``) a new spotlight comes, ``num_spawns`` times; each
spotlight in the list moves and lights a disc, and one within its radius + 6 px of the agent's centre hurts it
(``spot_damage`` once per step, whatever the number of spotlights); a health of 0 ends the episode. A coin within
3 + 6 px is collected (``reward_coin``); with all coins collected the exit opens, and the agent within 5 + 6 px of
it ends the episode (``reward_exit``, success). After ``max_steps`` steps the episode is truncated (upstream ends
it with done=True and truncated=False). Upstream's quirks are kept: removing a finished spotlight from the list
while iterating it skips the next one for that step (not drawn, moved or checked), and likewise for coins.

Observation (``partial``): ``{"image"}``, uint8 (84, 84, 3), exactly upstream's observation, which is pygame's
``surfarray`` of the screen: indexed [x, y] (``render()`` shows it upright). Layers, bottom up: the chessboard,
the coins (orange discs of radius 3), the exit (a 10 px door, grey, green once open), the agent, the darkness (a
black layer at the current alpha with the spotlights' discs cut out; pygame's blend v − v·alpha // 255), the top
bar (the health in green/red on its left half, the previous step's action components in grey / purple / orange
on the right, a yellow mark after a positive reward). ``agent_visible`` / ``coins_visible`` / ``exit_visible``
draw those above the darkness, in upstream's list order. ``oracle`` adds ``"oracle"``, (C + 2, 3) int: the agent
(x, y, 1), the coins (x, y, 1 while not collected; C = max(num_coins), unused rows 0) and the exit (x, y, 1 once
open): the positions a memoryless agent cannot see in the dark. ``full`` adds them as ``"agent"``, ``"coins"``,
``"exit"`` and the rest of the state: ``"rotation"`` (facing, 45° units counter-clockwise from up), ``"health"``
(fraction left), ``"spotlights"`` ((S, 10): 1 if in the list, radius, progress t, speed, spawn x, y, target x, y,
offset x, y), ``"alpha"`` (the darkness / 255), ``"spawn_timer"`` (steps since the last spawn), ``"spawns_left"``
and ``"time"`` (t / T). ``info["oracle"]`` is the oracle array in every variant.

Endless (``EndlessSearingSpotlights``, upstream's ``Endless-SearingSpotlights-v0``). One coin at a time: when it is
collected (+0.25) a new one is drawn (a fresh grid sampler with 28 px blocked around the old coin, not around the
agent) and shown above the darkness while fewer than ``coin_show_duration`` (6) steps have passed since the last
coin; no exit; health 10; 3 spotlights at the reset and one every ``spawn_interval`` (50) steps without end. The
episode ends (terminated) on death or when ``steps_per_coin`` (160) steps pass without a coin; no step limit
(``max_steps`` adds a truncation). ``oracle`` is (2, 3): the agent and the coin; ``full`` drops the exit and the
spawn count and adds ``"coin_timer"`` (steps since the last coin / steps_per_coin); ``"time"`` is t in steps when
there is no step limit.

Every reset parameter of upstream is a kwarg except the scales, the agent's speed, ``black_background``,
``hide_chessboard``, ``use_exit`` (False crashes upstream) and ``spawn_interval_decay`` / ``reward_max_steps`` (no
effect upstream); Endless takes no ``show_last_action`` (False crashes upstream). The reset's picture is fully lit
and shows the agent facing up (upstream draws sprite 0 there). Upstream's other quirks are kept too, since they shape
episodes and pictures: the spawn interval never decays (upstream compares with the first interval and pops the last)
and the top bar shows the previous step's action and positive reward. Tested step for step against ``memory_gym``
1.0.2 (pygame-ce 2.5.8), finite and endless, with default and other kwargs: the same rewards, ends, successes and
agent positions, and equal pixels (the darkness's blend was measured on pygame, and the exit's rounded rectangle is a
10 x 10 picture measured from pygame). Measured: a memoryless policy that heads for the coin and the exit from the
oracle, return 1.2 and success 0.9 over 20 seeds; one that reads the agent and targets off the image when they are
seen (random otherwise), 0.025 and 0.0. Endless, 8 seeds: oracle follower vs image reader, return 1.72 vs 0.06.
"""

from __future__ import annotations

import math
from typing import ClassVar, cast

import gymnasium as gym
import numpy as np

from membench_envs.envs.core.native import BatchedCore
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.memory_gym.common import (
    AGENT_RADIUS,
    AGENT_SPRITE,
    FREE_FACING,
    FREE_STEP,
    SCALE,
    SCREEN,
    MemoryGymCore,
    MemoryGymEnv,
    MemoryGymVectorEnv,
    Sprites,
    agent_sprites,
    filled_circle,
    flat_index,
    framed_view,
    rotate_vector,
)

#: The kwargs both Searing Spotlights share, declared once (each tuple below lists them in its own order).
_SPOT_MIN_RADIUS = Param(
    "spot_min_radius",
    "float",
    30.0 * SCALE,
    low=1.0,
    high=30.0,
    doc="smallest spotlight radius (px; upstream draws integers(min, max + 1), i.e. int(min) … int(max + 1) - 1)",
)
_SPOT_MAX_RADIUS = Param(
    "spot_max_radius", "float", 55.0 * SCALE, low=1.0, high=30.0, doc="largest spotlight radius (px)"
)
_SPOT_DAMAGE = Param("spot_damage", "float", 1.0, low=0.0, doc="health lost on a step inside one or more spotlights")
_VISUAL_FEEDBACK = Param("visual_feedback", "bool", True, doc="the chessboard turns red on a step the agent is hit")
_LIGHT_DIM_OFF_DURATION = Param(
    "light_dim_off_duration",
    "int",
    6,
    low=1,
    doc="steps over which the light dims off: the darkness's alpha grows by int(255 / duration) per step from 0",
)
_LIGHT_THRESHOLD = Param(
    "light_threshold", "int", 255, low=0, high=255, doc="the darkness's alpha stops growing once above this"
)
_SAMPLE_AGENT_POSITION = Param("sample_agent_position", "bool", True, doc="random start position (False: the centre)")
_AGENT_VISIBLE = Param("agent_visible", "bool", False, doc="draw the agent above the darkness")
_SHOW_LAST_POSITIVE_REWARD = Param(
    "show_last_positive_reward", "bool", True, doc="the top bar shows a yellow mark after a positive reward"
)
_REWARD_INSIDE_SPOTLIGHT = Param("reward_inside_spotlight", "float", 0.0, doc="reward on a step inside a spotlight")
_REWARD_OUTSIDE_SPOTLIGHT = Param(
    "reward_outside_spotlight", "float", 0.0, doc="reward on a step outside every spotlight"
)
_REWARD_DEATH = Param("reward_death", "float", 0.0, doc="reward when the health runs out")

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("max_steps", "int", 256, low=1, doc="episode limit in steps (a truncation here; upstream: done=True)"),
    Param("initial_spawns", "int", 4, low=0, high=64, doc="spotlights spawned at the reset"),
    Param(
        "num_spawns",
        "int",
        30,
        low=0,
        high=256,
        doc="spotlights spawned later, one every "
        "initial_spawn_interval + spawn_interval_threshold steps (upstream's decay never applies: it compares "
        "with the first interval and pops the last)",
    ),
    Param("initial_spawn_interval", "int", 30, low=1, doc="see num_spawns"),
    Param("spawn_interval_threshold", "int", 10, low=0, doc="see num_spawns"),
    _SPOT_MIN_RADIUS,
    _SPOT_MAX_RADIUS,
    Param(
        "spot_min_speed",
        "float",
        0.0025,
        low=0.0,
        low_open=True,
        high=1.0,
        doc="slowest spotlight (fraction of its path per step)",
    ),
    Param("spot_max_speed", "float", 0.0075, low=0.0, low_open=True, high=1.0, doc="fastest spotlight"),
    _SPOT_DAMAGE,
    Param("agent_health", "int", 5, low=1, doc="the agent's health: it dies (episode ends) at 0"),
    _VISUAL_FEEDBACK,
    _LIGHT_DIM_OFF_DURATION,
    _LIGHT_THRESHOLD,
    Param("num_coins", "ints", (1,), low=0, high=8, max_length=100, doc="coins per episode, drawn from this list"),
    _SAMPLE_AGENT_POSITION,
    _AGENT_VISIBLE,
    Param("coins_visible", "bool", False, doc="draw the coins above the darkness"),
    Param("exit_visible", "bool", False, doc="draw the exit above the darkness"),
    Param("show_last_action", "bool", True, doc="the top bar shows the previous action's two components"),
    _SHOW_LAST_POSITIVE_REWARD,
    _REWARD_INSIDE_SPOTLIGHT,
    _REWARD_OUTSIDE_SPOTLIGHT,
    _REWARD_DEATH,
    Param("reward_exit", "float", 1.0, doc="reward for reaching the open exit (ends the episode)"),
    Param("reward_coin", "float", 0.25, doc="reward per coin collected"),
)

ENDLESS_PARAMS: tuple[Param, ...] = (  # (show_last_action=False crashes upstream: not offered)
    OBS_VARIANT,
    Param(
        "max_steps",
        "int",
        None,
        low=1,
        none_ok=True,
        doc="episode limit in steps (a truncation); None: none, as upstream (max_steps = -1)",
    ),
    Param("steps_per_coin", "int", 160, low=1, doc="the episode ends when this many steps pass without a coin"),
    Param("initial_spawns", "int", 3, low=0, high=64, doc="spotlights spawned at the reset"),
    Param("spawn_interval", "int", 50, low=1, doc="a new spotlight every this many steps, without end"),
    _SPOT_MIN_RADIUS,
    _SPOT_MAX_RADIUS,
    Param(
        "spot_min_speed", "float", 0.0025, low=0.001, high=1.0, doc="slowest spotlight (fraction of its path per step)"
    ),
    Param("spot_max_speed", "float", 0.0075, low=0.001, high=1.0, doc="fastest spotlight"),
    _SPOT_DAMAGE,
    Param("agent_health", "int", 10, low=1, doc="the agent's health: it dies (episode ends) at 0"),
    _VISUAL_FEEDBACK,
    _LIGHT_DIM_OFF_DURATION,
    _LIGHT_THRESHOLD,
    Param(
        "coin_show_duration",
        "int",
        6,
        low=0,
        doc="a new coin is drawn above the darkness while fewer steps "
        "than this have passed since the last coin (5 observations after a collection, 6 at the start)",
    ),
    Param("coins_visible", "bool", False, doc="always draw the coin above the darkness"),
    _SAMPLE_AGENT_POSITION,
    _AGENT_VISIBLE,
    _SHOW_LAST_POSITIVE_REWARD,
    _REWARD_INSIDE_SPOTLIGHT,
    _REWARD_OUTSIDE_SPOTLIGHT,
    _REWARD_DEATH,
    Param("reward_coin", "float", 0.25, doc="reward per coin collected (a new one appears elsewhere)"),
)

# Every picture is indexed [x, y] like pygame's surfarray, which is what Memory Gym returns as its observation.
TILE = int(50 * SCALE)  #: 12: the chessboard's tiles
BAR = int(16 * SCALE)  #: 4: the top bar's height (the agent stays below it)
WHITE, BLUE, RED = (255, 255, 255), (0, 0, 255), (255, 0, 0)
COIN_RGB = (255, 165, 0)  # the coin's outline width int(2 * 0.375) is 0, i.e. filled over the yellow disc
COIN_RADIUS = int(10 * 1.5 * SCALE)  #: 3
EXIT_SIZE = int(20 * 2.0 * SCALE)  #: 10
EXIT_RADIUS = 20 / 2 * 2.0 * SCALE  #: 5.0, the reach of the exit
EXIT_CLOSED_RGB, EXIT_OPEN_RGB = (55, 55, 55), (48, 141, 70)
BAR_RGB, HEALTH_RGB, REWARD_RGB = (50, 50, 50), (0, 255, 0), (255, 255, 0)
ACTION_RGB = np.array([(120, 120, 120), (116, 1, 113), (255, 94, 14)], dtype=np.uint8)
SPAWN_OFFSET = int(30 * SCALE)  #: 7: coins and the exit lie this far inside the screen
AGENT_BLOCK, ITEM_BLOCK = 28, 21  #: the grid sampler's blocked radius around the agent and around a coin / the exit
CENTRE = SCREEN // 2
SPAWN_DISTANCE = math.sqrt(math.pow(SCREEN, 2) + math.pow(SCREEN, 2)) / 2  #: + its radius: where a spotlight starts
QUARTER = SCREEN // 4  #: 21: the top bar's quarters
# The agent's bounds (upstream's walkable rect (0, 4, 84, 80) less the agent's radius).
X_MIN, X_MAX, Y_MIN, Y_MAX = AGENT_RADIUS, SCREEN - AGENT_RADIUS, BAR + AGENT_RADIUS, SCREEN - AGENT_RADIUS

#: pygame's rounded rectangle of the exit (10 x 10, top corners of radius 5, a 1 px outline), [y, x] rows:
#: ``o`` the black outline, ``#`` the door's colour, ``.`` transparent.
EXIT_PICTURE = (
    "...oooo...",
    "..o####o..",
    ".o######o.",
    "o########o",
    "o########o",
    "o########o",
    "o########o",
    "o########o",
    "o########o",
    "oooooooooo",
)


def chessboard(colour) -> np.ndarray:
    """Upstream's tiled background, [x, y]: white where (tile x + tile y) is even, ``colour`` elsewhere."""
    tiles = (np.arange(SCREEN)[:, None] // TILE + np.arange(SCREEN)[None, :] // TILE) % 2
    return np.where(tiles[:, :, None] == 0, np.array(WHITE, np.uint8), np.array(colour, np.uint8))


def disc_mask(radius: int, box: int) -> np.ndarray:
    """pygame's filled circle of ``radius`` centred at (box // 2, box // 2) on a (box, box) mask (symmetric under
    transposition, so [x, y] = [y, x])."""
    mask = np.zeros((box, box), dtype=bool)
    filled_circle(mask, box // 2, box // 2, radius)
    return mask


def _exit_sprites() -> Sprites:
    """The closed (0) and open (1) exit, [x, y]."""
    chars = np.array([list(row) for row in EXIT_PICTURE]).T  # [x, y]
    mask = chars != "."
    colours = np.zeros((2, EXIT_SIZE, EXIT_SIZE, 3), dtype=np.uint8)
    for k, door in enumerate((EXIT_CLOSED_RGB, EXIT_OPEN_RGB)):
        colours[k][chars == "#"] = door
    return Sprites(np.stack([mask, mask]), colours)


_AGENT = Sprites(*(a.swapaxes(1, 2) for a in agent_sprites()))  # [x, y]
_COIN = Sprites(disc_mask(COIN_RADIUS, 2 * COIN_RADIUS)[None], COIN_RGB)
_EXIT = _exit_sprites()
#: the blue and the red board, [x, y] flat with a spare pixel (see :func:`flat_canvas`)
_BOARDS = np.concatenate(
    [np.stack([chessboard(BLUE), chessboard(RED)]).reshape(2, -1, 3), np.zeros((2, 1, 3), np.uint8)], axis=1
)
#: pygame's blend of a black layer of surface alpha a over a channel value v: v - v * a // 255, per [a, v]
_DARKEN = (np.arange(256)[None, :] - np.arange(256)[None, :] * np.arange(256)[:, None] // 255).astype(np.uint8)


class GridSampler:
    """Upstream's spawn sampler over the 84 x 84 pixels: a uniformly drawn free cell (row-major order), after which
    a disc around it is blocked."""

    def __init__(self, rng: np.random.Generator, size: int = SCREEN):
        self.rng, self.size = rng, size
        self.blocked = np.zeros((size, size), dtype=bool)  # [y, x]

    def sample(self, block_radius: int) -> tuple[int, int]:
        free = np.flatnonzero(~self.blocked)
        cell = int(free[self.rng.integers(0, len(free))])
        x, y = cell % self.size, cell // self.size
        self.block((x, y), block_radius)
        return x, y

    def block(self, position, radius: int = ITEM_BLOCK) -> None:
        x, y = position
        ys, xs = np.ogrid[: self.size, : self.size]
        self.blocked[(xs - x) ** 2 + (ys - y) ** 2 < radius * radius] = True


class SearingSpotlightsCore(MemoryGymCore):
    PARAMS = PARAMS

    def __init__(
        self,
        num_envs: int,
        *,
        max_steps: int,
        initial_spawns: int,
        num_spawns: int,
        initial_spawn_interval: int,
        spawn_interval_threshold: int,
        spot_min_radius: float,
        spot_max_radius: float,
        spot_min_speed: float,
        spot_max_speed: float,
        spot_damage: float,
        agent_health: int,
        visual_feedback: bool,
        light_dim_off_duration: int,
        light_threshold: int,
        num_coins: tuple[int, ...],
        sample_agent_position: bool,
        agent_visible: bool,
        coins_visible: bool,
        exit_visible: bool,
        show_last_action: bool,
        show_last_positive_reward: bool,
        reward_inside_spotlight: float,
        reward_outside_spotlight: float,
        reward_death: float,
        reward_exit: float,
        reward_coin: float,
    ):
        super().__init__(num_envs)
        if int(spot_max_radius + 1) <= int(spot_min_radius):
            raise ValueError(
                f"SearingSpotlights: spot_max_radius ({spot_max_radius}) must be >= spot_min_radius ({spot_min_radius})"
            )
        if spot_max_speed < spot_min_speed:
            raise ValueError(
                f"SearingSpotlights: spot_max_speed ({spot_max_speed}) must be >= spot_min_speed ({spot_min_speed})"
            )
        n = num_envs
        self.T = int(max_steps)
        self.initial_spawns, self.num_spawns = int(initial_spawns), int(num_spawns)
        self.spawn_interval = int(initial_spawn_interval + spawn_interval_threshold)  # upstream's first interval
        self.radius_range = (int(spot_min_radius), int(spot_max_radius + 1))  # as integers() truncated the floats
        self.speed_range = (spot_min_speed, spot_max_speed)
        self.damage, self.H = float(spot_damage), int(agent_health)
        self.visual_feedback = bool(visual_feedback)
        self.dim_step, self.light_threshold = int(255 / light_dim_off_duration), int(light_threshold)
        self.num_coins = [int(c) for c in num_coins]
        self.sample_agent_position = bool(sample_agent_position)
        self.agent_visible, self.coins_visible = bool(agent_visible), bool(coins_visible)
        self.exit_visible = bool(exit_visible)
        self.show_last_action, self.show_last_reward = bool(show_last_action), bool(show_last_positive_reward)
        self.reward_inside, self.reward_outside = float(reward_inside_spotlight), float(reward_outside_spotlight)
        self.reward_death, self.reward_exit = float(reward_death), float(reward_exit)
        self.reward_coin = float(reward_coin)
        self.max_radius = int(spot_max_radius + 1)
        box = 2 * self.max_radius
        self._spot = Sprites(
            np.stack([disc_mask(r, box) for r in range(1, self.max_radius + 1)]), (1, 1, 1)
        )  # radius r: sprite r - 1
        self.C = max(max(self.num_coins), 1)  # the oracle's coin rows
        self.S = max(self.initial_spawns + self.num_spawns, 1)  # the most spotlights ever in the list
        # the coin mark of the top bar: [x0, x1)
        self.reward_mark = (
            (int(QUARTER * 2.75), int(QUARTER * 2.75) + int(QUARTER * 0.5))
            if self.show_last_action
            else (QUARTER * 2, QUARTER * 4)
        )
        self._rows = np.arange(n)
        self.position = np.zeros((n, 2), dtype=np.int64)  # the agent's centre in pixels
        self.facing = np.zeros(n, dtype=np.int64)  # upstream's rotation / 45
        self.health = np.zeros(n, dtype=np.float64)
        self.red = np.zeros(n, dtype=np.int64)  # the health bar's red width
        self.hit = np.zeros(n, dtype=bool)  # hit on the last step: the chessboard is red
        self.alpha = np.zeros(n, dtype=np.int64)  # the darkness's alpha
        self.shown_action = np.zeros((n, 2), dtype=np.int64)  # the top bar's action (the previous step's)
        self.last_action = np.zeros((n, 2), dtype=np.int64)
        self.last_reward = np.zeros(n, dtype=np.float64)
        self.mark = np.zeros(n, dtype=np.int64)  # the top bar's reward mark: 0 not drawn yet, 1 grey, 2 yellow
        # the spotlight list, in upstream's order: slots 0 … count - 1
        S = self.S
        self.spots = np.zeros(n, dtype=np.int64)
        self.spot_radius = np.zeros((n, S), dtype=np.int64)
        self.spot_speed = np.zeros((n, S), dtype=np.float64)
        self.spot_t = np.zeros((n, S), dtype=np.float64)
        self.spot_done = np.zeros((n, S), dtype=bool)
        self.spot_path = np.zeros((n, S, 3, 2), dtype=np.float64)  # spawn, target, offset locations
        self.spot_at = np.zeros((n, S, 2), dtype=np.float64)  # the location drawn last
        self.spot_lit = np.zeros((n, S), dtype=bool)  # drawn on the last step
        self.spawn_timer = np.zeros(n, dtype=np.int64)
        self.spawns_left = np.zeros(n, dtype=np.int64)
        # the coin list (collected coins leave it) and the exit
        C = self.C
        self.coins = np.zeros(n, dtype=np.int64)  # coins in the list
        self.coin_at = np.zeros((n, C, 2), dtype=np.int64)
        self.coin_xy = np.zeros((n, C, 2), dtype=np.int64)  # every coin of the episode, in spawn order
        self.coin_left = np.zeros((n, C), dtype=bool)  # … not collected yet
        self.episode_coins = np.zeros(n, dtype=np.int64)
        self.exit_at = np.zeros((n, 2), dtype=np.int64)
        self.exit_open = np.zeros(n, dtype=bool)
        self.has_exit = True

        self.action_space = gym.spaces.MultiDiscrete([3, 3])
        image = gym.spaces.Box(0, 255, (SCREEN, SCREEN, 3), np.uint8)
        # the agent starts up to 2 px beyond the screen's last pixel (a sampler cell plus 2 or 3 px)
        positions = {
            "agent": gym.spaces.MultiDiscrete([SCREEN + 3, SCREEN + 3]),
            "coins": gym.spaces.MultiDiscrete(np.tile([SCREEN, SCREEN, 2], (C, 1))),
            "exit": gym.spaces.MultiDiscrete([SCREEN, SCREEN, 2]),
        }
        far = 3 * SCREEN
        self.obs_spaces = {
            "partial": gym.spaces.Dict({"image": image}),
            "oracle": gym.spaces.Dict(
                {"image": image, "oracle": gym.spaces.MultiDiscrete(np.tile([SCREEN + 3, SCREEN + 3, 2], (C + 2, 1)))}
            ),
            "full": gym.spaces.Dict(
                {
                    "image": image,
                    **positions,
                    "rotation": gym.spaces.Discrete(8),
                    "health": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                    "spotlights": gym.spaces.Box(-far, far, (S, 10), np.float32),
                    "alpha": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                    "spawn_timer": gym.spaces.Box(0, np.iinfo(np.int32).max, (1,), np.int64),
                    "spawns_left": gym.spaces.Box(0, max(self.num_spawns, 1), (1,), np.int64),
                    "time": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                }
            ),
        }

    # --- episodes ----------------------------------------------------------------------------------------------
    def _spawn_spotlight(self, i: int, rng: np.random.Generator) -> None:
        """Append upstream's next spotlight to environment i's list (radius, speed, then three angles)."""
        radius = rng.integers(*self.radius_range)
        speed = rng.uniform(*self.speed_range)
        start = rng.integers(0, 360)
        target = start + 180 + rng.integers(-45, 45)
        offset = target + rng.integers(-135, 135)
        distance = SPAWN_DISTANCE + radius
        j = int(self.spots[i])
        self.spot_radius[i, j], self.spot_speed[i, j] = int(radius), float(speed)
        self.spot_t[i, j], self.spot_done[i, j], self.spot_lit[i, j] = 0.0, False, False
        for k, angle in enumerate((start, target, offset)):
            x, y = rotate_vector(float(distance), 0.0, int(angle))
            self.spot_path[i, j, k] = (CENTRE + x, CENTRE + y)
        self.spot_at[i, j] = self.spot_path[i, j, 0]
        self.spots[i] = j + 1

    def _item_position(self, sampler: GridSampler, rng: np.random.Generator) -> tuple[int, int]:
        """A coin's or the exit's centre: a sampler cell plus 2 or 3 px per axis, kept 7 px inside the screen."""
        x, y = sampler.sample(ITEM_BLOCK)
        x, y = x + int(rng.integers(2, 4)), y + int(rng.integers(2, 4))
        return (min(max(x, SPAWN_OFFSET), SCREEN - SPAWN_OFFSET), min(max(y, SPAWN_OFFSET), SCREEN - SPAWN_OFFSET))

    def _start_episode(self, i: int, rng: np.random.Generator, block_centre: bool) -> GridSampler:
        """Upstream's first draws of an episode: the agent's facing and position, then the initial spotlights.
        ``block_centre``: whether a centred agent keeps later items off its spot (the finite version's sampler
        does, the endless one's does not)."""
        sampler = GridSampler(rng)
        self.facing[i] = int(rng.choice([0, 45, 90, 135, 180, 225, 270, 315])) // 45
        if self.sample_agent_position:
            x, y = sampler.sample(AGENT_BLOCK)
            self.position[i] = (x + int(rng.integers(2, 4)), y + int(rng.integers(2, 4)))
        else:
            self.position[i] = (CENTRE, CENTRE)
            if block_centre:
                sampler.block((CENTRE, CENTRE))
        self.spots[i] = 0
        for _ in range(self.initial_spawns):
            self._spawn_spotlight(i, rng)
        return sampler

    def _reset_counters(self, idx) -> None:
        """The per-episode health, hit, darkness, top-bar and spawn-timer state both versions start from."""
        self.health[idx] = self.H
        self.red[idx] = 0
        self.hit[idx] = False
        self.alpha[idx] = 0
        self.shown_action[idx] = 0
        self.last_action[idx] = 0
        self.last_reward[idx] = 0.0
        self.mark[idx] = 0
        self.spawn_timer[idx] = 0

    def _new_episodes(self, idx):
        for i in np.atleast_1d(idx):
            i = int(i)
            rng = self.generator(i)
            sampler = self._start_episode(i, rng, block_centre=True)
            count = int(rng.choice(self.num_coins))
            self.coins[i] = self.episode_coins[i] = count
            self.coin_left[i] = False
            self.coin_xy[i] = 0
            for k in range(count):
                self.coin_xy[i, k] = self.coin_at[i, k] = self._item_position(sampler, rng)
                self.coin_left[i, k] = True
            self.exit_at[i] = self._item_position(sampler, rng)
        self._reset_counters(idx)
        self.spawns_left[idx] = self.num_spawns
        self.exit_open[idx] = False

    # --- dynamics ----------------------------------------------------------------------------------------------
    def step(self, actions, idx=None):
        rows = self._rows if idx is None else idx
        m = rows.size
        actions = np.asarray(actions, dtype=np.int64).reshape(m, 2)
        a = actions[:, 0] * 3 + actions[:, 1]
        moved = self.position[rows] + FREE_STEP[a]
        moved[:, 0] = np.minimum(np.maximum(moved[:, 0], X_MIN), X_MAX)
        moved[:, 1] = np.minimum(np.maximum(moved[:, 1], Y_MIN), Y_MAX)
        self.position[rows] = moved
        self.facing[rows] = FREE_FACING[self.facing[rows], a]
        if self.show_last_action:
            self.shown_action[rows] = self.last_action[rows]
            self.last_action[rows] = actions
        alpha = self.alpha[rows]
        self.alpha[rows] = np.where(alpha <= self.light_threshold, np.minimum(alpha + self.dim_step, 255), alpha)

        # the spotlights: spawn, then each one in the list moves and lights (a finished one leaves the list)
        timer = self.spawn_timer[rows] + 1
        spawn = self._spawning(rows, timer)
        for j in np.flatnonzero(spawn):
            i = int(rows[j])
            self._spawn_spotlight(i, self.episode_generator(i))
        self.spawns_left[rows] -= spawn
        self.spawn_timer[rows] = np.where(spawn, 0, timer)
        reward = np.zeros(m, dtype=np.float64)
        hit = self._move_spotlights(rows, moved)
        health = self.health[rows] - self.damage * hit
        self.health[rows] = health
        reward += np.where(hit, self.reward_inside, self.reward_outside)
        width = (SCREEN // 2 * (1 - health / self.H)).astype(np.int64)
        self.red[rows] = np.where(hit, width, self.red[rows])
        self.hit[rows] = hit & self.visual_feedback
        dead = health <= 0
        reward += self.reward_death * dead

        terminated = dead | self._tasks(rows, moved, reward, dead)
        t = self.t[rows] + 1
        self.t[rows] = t
        terminated |= self._tick(rows)
        if self.show_last_reward:
            self.mark[rows] = np.where(self.last_reward[rows] > 0, 2, 1)
            self.last_reward[rows] = reward
        return reward, terminated, ~terminated & (t >= self.T)

    def _spawning(self, rows, timer) -> np.ndarray:
        """Which environments spawn a spotlight on this step (``timer``: steps since the last spawn)."""
        return (self.spawns_left[rows] > 0) & (timer >= self.spawn_interval)

    def _tasks(self, rows, agent, reward, dead) -> np.ndarray:
        """The coins, then the exit: adds their rewards to ``reward`` (in place); returns whether the exit ends the
        episode."""
        collected = self._collect_coins(rows, agent)
        reward += self.reward_coin * collected
        coins_done = self.coins[rows] == 0
        self.exit_open[rows] |= coins_done
        out = np.sqrt(((self.exit_at[rows] - agent) ** 2).sum(axis=1)) <= EXIT_RADIUS + AGENT_RADIUS
        out &= coins_done
        reward += self.reward_exit * out
        self.success[rows] = ~dead & out
        return out

    def _tick(self, rows) -> np.ndarray:
        """Timers after the step's count; returns which episodes they end."""
        return np.zeros(rows.size, dtype=bool)

    def _move_spotlights(self, rows, agent) -> np.ndarray:
        """Walk the spotlight lists as upstream does (a removed spotlight makes the next one skipped); returns
        whether one of the drawn spotlights reaches the agent."""
        listed = np.arange(self.S)[None, :] < self.spots[rows, None]  # (m, S)
        removed = listed & self.spot_done[rows]
        skipped = np.zeros_like(removed)
        if removed.any():  # (rare) a finished spotlight leaves the list and the next one is skipped
            for j in range(1, self.S):
                skipped[:, j] = removed[:, j - 1]
                removed[:, j] &= ~skipped[:, j]
        drawn = listed & ~self.spot_done[rows] & ~skipped
        r, c = np.nonzero(drawn)
        d = rows[r]
        t = self.spot_t[d, c][:, None]
        path = self.spot_path[d, c]
        target = path[:, 1] * (1 - t) + path[:, 2] * t  # pygame's lerp: a * (1 - t) + b * t
        at = path[:, 0] * (1 - t) + target * t
        self.spot_at[d, c] = at
        t = t[:, 0] + self.spot_speed[d, c]
        finished = t >= 1.0
        self.spot_t[d, c] = np.where(finished, 1.0, t)
        self.spot_done[d, c] = finished
        self.spot_lit[rows] = drawn
        dx, dy = at[:, 0] - agent[r, 0], at[:, 1] - agent[r, 1]
        reach = np.sqrt(dx * dx + dy * dy) <= self.spot_radius[d, c] + AGENT_RADIUS
        hit = np.zeros(rows.size, dtype=bool)
        hit[r[reach]] = True
        for j in np.flatnonzero(removed.any(axis=1)).tolist():  # close the gaps, keeping the list's order
            i = int(rows[j])
            keep = np.flatnonzero(~removed[j, : self.spots[i]])
            k = keep.size
            for array in (
                self.spot_radius,
                self.spot_speed,
                self.spot_t,
                self.spot_done,
                self.spot_path,
                self.spot_at,
                self.spot_lit,
            ):
                array[i, :k] = array[i, keep]
            self.spot_lit[i, k:] = False
            self.spots[i] = k
        return hit

    def _collect_coins(self, rows, agent) -> np.ndarray:
        """Walk the coin lists as upstream does (a collected coin leaves the list and the next one is skipped);
        returns the number collected."""
        m = rows.size
        count = self.coins[rows]
        skip = np.zeros(m, dtype=bool)
        taken = np.zeros((m, self.C), dtype=bool)
        for j in range(int(count.max(initial=0))):
            listed = (j < count) & ~skip
            d = self.coin_at[rows, j] - agent
            taken[:, j] = listed & (np.sqrt((d * d).sum(axis=1)) <= COIN_RADIUS + AGENT_RADIUS)
            skip = taken[:, j]
        for j in np.flatnonzero(taken.any(axis=1)).tolist():
            i = int(rows[j])
            for xy in self.coin_at[i, : self.coins[i]][taken[j, : self.coins[i]]]:
                first = np.flatnonzero(self.coin_left[i] & (self.coin_xy[i] == xy).all(axis=1))[0]
                self.coin_left[i, first] = False
            keep = np.flatnonzero(~taken[j, : self.coins[i]])
            self.coin_at[i, : keep.size] = self.coin_at[i, keep]
            self.coins[i] = keep.size
        return taken.sum(axis=1)

    # --- observations ------------------------------------------------------------------------------------------
    def image(self, sl, darkness: int | None = None) -> np.ndarray:
        """The observation, [x, y]; ``darkness`` overrides the darkness's alpha (for ``render``)."""
        rows = self._rows[sl]
        m = rows.size
        flat = _BOARDS[self.hit[rows].astype(np.int64)]  # (a copy; the spare pixel catches off-screen sprites)
        canvas = flat[:, :-1].reshape(m, SCREEN, SCREEN, 3)

        def coins(on):
            for j in range(int(self.coins[rows[on]].max(initial=0))):
                k = on[j < self.coins[rows[on]]]
                _COIN.draw(flat, np.zeros(k.size, dtype=np.int64), self.coin_at[rows[k], j] - COIN_RADIUS, images=k)

        def door(on):
            _EXIT.draw(
                flat, self.exit_open[rows[on]].astype(np.int64), self.exit_at[rows[on]] - EXIT_SIZE // 2, images=on
            )

        def agent(on):  # upstream draws the reset's agent facing up, whatever its facing
            facing = np.where(self.t[rows[on]] == 0, 0, self.facing[rows[on]])
            _AGENT.draw(flat, facing, self.position[rows[on]] - AGENT_SPRITE // 2, images=on)

        def dark(on):
            alpha = self.alpha[rows[on]] if darkness is None else np.full(on.size, darkness)
            if not alpha.any():
                return
            lit = self.lit(rows[on])  # (k, 84 * 84) [x, y]
            pixels = flat[:, :-1]
            for a in np.unique(alpha[alpha > 0]):  # (few values: the alpha follows t)
                same = alpha == a
                k, lk = (on, lit) if same.all() else (on[same], lit[same])
                if on.size == m and same.all():
                    k = slice(None)  # (the common case: a view)
                if a == 255:  # black
                    pixels[k] *= lk[:, :, None]
                else:
                    pixels[k] = np.where(lk[:, :, None], pixels[k], _DARKEN[a][pixels[k]])

        def top(on):
            canvas[on, :, :BAR] = self.top_bar(rows[on])[:, :, None]

        draw = {"coins": coins, "exit": door, "agent": agent, "dark": dark, "top": top}
        above = self._coins_above(rows)
        for flag in (False, True):
            on = np.flatnonzero(above == flag)
            if on.size:
                for layer in self._layers(flag):
                    draw[layer](on)
        return canvas

    def _coins_above(self, rows) -> np.ndarray:
        """Per environment: whether its coins are drawn above the darkness."""
        return np.full(rows.size, self.coins_visible)

    def _layers(self, coins_above: bool) -> list[str]:
        """Upstream's drawing order above the board: its list [darkness, top bar] into which the coins, the exit
        and the agent are inserted, each below the darkness or (visible) at upstream's offsets above it."""
        layers, i = ["dark", "top"], 0
        items = [("coins", coins_above, 1), ("agent", self.agent_visible, 3)]
        if self.has_exit:
            items.insert(1, ("exit", self.exit_visible, 2))
        for name, visible, offset in items:
            if visible:
                layers.insert(i + offset, name)
            else:
                layers.insert(i, name)
                i += 1
        return layers

    def lit(self, rows) -> np.ndarray:
        """(m, 84 * 84) bool, [x, y] flat: the pixels the drawn spotlights light."""
        lit = np.zeros((rows.size, SCREEN * SCREEN + 1), dtype=bool)
        r, j = np.nonzero(self.spot_lit[rows])
        if r.size:
            corner = np.trunc(self.spot_at[rows[r], j]).astype(np.int64) - self.max_radius
            which = self.spot_radius[rows[r], j] - 1
            offsets = self._spot.offsets
            lit[
                r[:, None], flat_index(corner[:, 0, None] + offsets[0, which], corner[:, 1, None] + offsets[1, which])
            ] = True
        return lit[:, :-1]

    def top_bar(self, rows) -> np.ndarray:
        """(m, 84, 3) [x]: the health (green, red from the left as it drops), the previous action, the reward
        mark."""
        bar = np.empty((rows.size, SCREEN, 3), dtype=np.uint8)
        bar[:] = BAR_RGB
        bar[:, : QUARTER * 2] = HEALTH_RGB
        if self.show_last_action:
            bar[:, QUARTER * 2 : QUARTER * 3] = ACTION_RGB[self.shown_action[rows, 0]][:, None]
            bar[:, QUARTER * 3 :] = ACTION_RGB[self.shown_action[rows, 1]][:, None]
        columns = np.arange(SCREEN)[None, :]
        bar[columns < self.red[rows, None]] = RED
        x0, x1 = self.reward_mark
        mark = self.mark[rows]
        bar[(mark == 1)[:, None] & (columns >= x0) & (columns < x1)] = BAR_RGB
        bar[(mark == 2)[:, None] & (columns >= x0) & (columns < x1)] = REWARD_RGB
        return bar

    def positions(self, sl) -> dict[str, np.ndarray]:
        """The full variant's ``agent``, ``coins`` and ``exit``."""
        return {
            "agent": self.position[sl].copy(),
            "coins": np.concatenate([self.coin_xy[sl], self.coin_left[sl, :, None]], axis=2),
            "exit": np.concatenate([self.exit_at[sl], self.exit_open[sl, None]], axis=1),
        }

    def oracle(self, idx=None):
        """(m, C + 2, 3): the agent (x, y, 1), the coins (x, y, 1 while not collected; unused rows 0), the exit
        (x, y, 1 once open)."""
        sl = slice(None) if idx is None else idx
        p = self.positions(sl)
        agent = np.concatenate([p["agent"], np.ones_like(p["agent"][:, :1])], axis=1)
        return np.concatenate([agent[:, None], p["coins"], p["exit"][:, None]], axis=1)

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        obs = {"image": self.image(sl)}
        if variant == "oracle":
            obs["oracle"] = self.oracle(idx)
        elif variant == "full":
            obs.update(self.positions(sl))
            listed = np.arange(self.S)[None, :] < self.spots[sl, None]
            path = self.spot_path[sl].reshape(-1, self.S, 6)
            spots = (
                np.concatenate(
                    [
                        listed[..., None],
                        self.spot_radius[sl, :, None],
                        self.spot_t[sl, :, None],
                        self.spot_speed[sl, :, None],
                        path,
                    ],
                    axis=2,
                )
                * listed[..., None]
            )
            obs["rotation"] = self.facing[sl].copy()
            obs["health"] = (np.maximum(self.health[sl], 0) / self.H).astype(np.float32)[:, None]
            obs["spotlights"] = spots.astype(np.float32)
            obs["alpha"] = (self.alpha[sl] / 255).astype(np.float32)[:, None]
            obs["spawn_timer"] = self.spawn_timer[sl, None].copy()
            obs["spawns_left"] = self.spawns_left[sl, None].copy()
            obs["time"] = (self.t[sl] / self.T).astype(np.float32)[:, None]
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        """The arena in 12 px tiles, rows top to bottom: ``A`` the agent, ``c`` a coin, ``E`` the exit (``e``
        closed), ``*`` lit by a spotlight, ``.`` dark."""
        image = self.image(np.array([i]))[0]
        lit = image[::TILE, ::TILE].any(axis=2)
        chars = np.where(lit, "*", ".").astype("<U1")
        for xy in self.coin_at[i, : self.coins[i]]:
            chars[tuple(np.minimum(xy // TILE, SCREEN // TILE - 1))] = "c"
        chars[tuple(self.exit_at[i] // TILE)] = "E" if self.exit_open[i] else "e"
        chars[tuple(np.minimum(np.maximum(self.position[i], 0), SCREEN - 1) // TILE)] = "A"
        lines = ["".join(chars[:, row]) for row in range(SCREEN // TILE)]
        return "\n".join(lines) + (
            f"\nhealth={self.health[i]:g}/{self.H} coins left={self.coins[i]} t={self.t[i]}/{self.T}\n"
        )

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The arena upright at 4x scale, the darkness at half strength so that the agent, coins and exit show,
        and t / T along the bottom."""
        picture = self.image(np.array([i]), darkness=128)[0].transpose(1, 0, 2)  # [y, x]
        return framed_view(picture, self.t[i] / self.T, done, bool(self.success[i]))


class SearingSpotlights(MemoryGymEnv):
    """Searing Spotlights (single environment). Kwargs: :data:`PARAMS`.

    ``reset(seed=s)`` gives upstream's episode for seed ``s``; later resets without a seed continue that generator,
    as upstream's ``np_random`` does."""

    core_cls: ClassVar[type[BatchedCore]] = SearingSpotlightsCore  # the endless core's kwargs differ


class SearingSpotlightsVector(MemoryGymVectorEnv):
    """Searing Spotlights, N environments in one numpy step (the episodes are drawn per environment in Python)."""

    core_cls: ClassVar[type[BatchedCore]] = SearingSpotlightsCore  # the endless core's kwargs differ


# ======================================================================================================================
# Endless Searing Spotlights
# ======================================================================================================================
class EndlessSearingSpotlightsCore(SearingSpotlightsCore):
    """Upstream's ``Endless-SearingSpotlights-v0``: one coin at a time, a new one (drawn above the darkness for its
    first steps) each time it is collected; no exit; a spotlight every ``spawn_interval`` steps without end; the
    episode ends on death or after ``steps_per_coin`` steps without a coin."""

    PARAMS = ENDLESS_PARAMS

    def __init__(
        self,
        num_envs: int,
        *,
        max_steps: int | None,
        steps_per_coin: int,
        initial_spawns: int,
        spawn_interval: int,
        spot_min_radius: float,
        spot_max_radius: float,
        spot_min_speed: float,
        spot_max_speed: float,
        spot_damage: float,
        agent_health: int,
        visual_feedback: bool,
        light_dim_off_duration: int,
        light_threshold: int,
        coin_show_duration: int,
        coins_visible: bool,
        sample_agent_position: bool,
        agent_visible: bool,
        show_last_positive_reward: bool,
        reward_inside_spotlight: float,
        reward_outside_spotlight: float,
        reward_death: float,
        reward_coin: float,
    ):
        # the most spotlights in a list: the initial ones and those spawned while the slowest one travels (it is
        # removed a step after it arrives, or later when the one before it leaves at the same step)
        lifetime = math.ceil(1 / spot_min_speed) + 2 + initial_spawns
        spawned = math.ceil(lifetime / spawn_interval) + 1
        super().__init__(
            num_envs,
            max_steps=2**62,
            initial_spawns=initial_spawns,
            num_spawns=spawned,
            initial_spawn_interval=spawn_interval,
            spawn_interval_threshold=0,
            spot_min_radius=spot_min_radius,
            spot_max_radius=spot_max_radius,
            spot_min_speed=spot_min_speed,
            spot_max_speed=spot_max_speed,
            spot_damage=spot_damage,
            agent_health=agent_health,
            visual_feedback=visual_feedback,
            light_dim_off_duration=light_dim_off_duration,
            light_threshold=light_threshold,
            num_coins=(1,),
            sample_agent_position=sample_agent_position,
            agent_visible=agent_visible,
            coins_visible=coins_visible,
            exit_visible=False,
            show_last_action=True,
            show_last_positive_reward=show_last_positive_reward,
            reward_inside_spotlight=reward_inside_spotlight,
            reward_outside_spotlight=reward_outside_spotlight,
            reward_death=reward_death,
            reward_exit=1.0,
            reward_coin=reward_coin,
        )  # (no exit: has_exit is False below)
        self.max_steps = max_steps
        self.T = np.iinfo(np.int64).max if max_steps is None else int(max_steps)
        self.steps_per_coin, self.coin_show_duration = int(steps_per_coin), int(coin_show_duration)
        self.has_exit = False
        n = num_envs
        self.coin_t = np.zeros(n, dtype=np.int64)  # steps since the last coin
        self.collected = np.zeros(n, dtype=np.int64)
        spaces = cast(dict[str, gym.spaces.Dict], self.obs_spaces)  # every variant of the base task is a Dict
        image = spaces["partial"]["image"]
        full = dict(spaces["full"].spaces)
        del full["exit"]
        full["coins"] = gym.spaces.MultiDiscrete(np.tile([SCREEN, SCREEN, 2], (1, 1)))
        del full["spawns_left"]  # (no end to the spawns)
        full["coin_timer"] = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
        full["time"] = gym.spaces.Box(0.0, 2.0**31 if max_steps is None else 1.0, (1,), np.float32)  # (steps)
        self.obs_spaces = {
            "partial": gym.spaces.Dict({"image": image}),
            "oracle": gym.spaces.Dict(
                {"image": image, "oracle": gym.spaces.MultiDiscrete(np.tile([SCREEN + 3, SCREEN + 3, 2], (2, 1)))}
            ),
            "full": gym.spaces.Dict(full),
        }

    # --- episodes ----------------------------------------------------------------------------------------------
    def _new_coin(self, i: int, rng: np.random.Generator) -> None:
        """Upstream's next coin: a fresh grid sampler (the agent is not blocked) with a disc of radius 28 around the
        last coin blocked, a cell plus 2 or 3 px per axis, kept 7 px inside the screen."""
        sampler = GridSampler(rng)
        if self.episode_coins[i]:
            sampler.block(tuple(self.coin_at[i, 0]), AGENT_BLOCK)
        x, y = sampler.sample(AGENT_BLOCK)
        x, y = x + int(rng.integers(2, 4)), y + int(rng.integers(2, 4))
        self.coin_at[i, 0] = (
            min(max(x, SPAWN_OFFSET), SCREEN - SPAWN_OFFSET),
            min(max(y, SPAWN_OFFSET), SCREEN - SPAWN_OFFSET),
        )
        self.coin_xy[i, 0] = self.coin_at[i, 0]
        self.coin_left[i, 0] = True
        self.coins[i] = self.episode_coins[i] = 1

    def _new_episodes(self, idx):
        for i in np.atleast_1d(idx):
            i = int(i)
            rng = self.generator(i)
            self._start_episode(i, rng, block_centre=False)
            self.episode_coins[i] = 0
            self._new_coin(i, rng)
        self._reset_counters(idx)
        self.spawns_left[idx] = 0
        self.coin_t[idx] = 0
        self.collected[idx] = 0

    # --- dynamics ----------------------------------------------------------------------------------------------
    def _spawning(self, rows, timer) -> np.ndarray:
        return timer >= self.spawn_interval

    def _spawn_spotlight(self, i: int, rng: np.random.Generator) -> None:
        if self.spots[i] >= self.S:
            raise RuntimeError("EndlessSearingSpotlights: more spotlights in the list than its bound (a bug)")
        super()._spawn_spotlight(i, rng)

    def _tasks(self, rows, agent, reward, dead) -> np.ndarray:
        d = self.coin_at[rows, 0] - agent
        got = np.sqrt((d * d).sum(axis=1)) <= COIN_RADIUS + AGENT_RADIUS
        reward += self.reward_coin * got
        for j in np.flatnonzero(got):
            i = int(rows[j])
            self._new_coin(i, self.episode_generator(i))
        self.collected[rows] += got
        self.coin_t[rows] = np.where(got, 0, self.coin_t[rows])
        return np.zeros(rows.size, dtype=bool)

    def _tick(self, rows) -> np.ndarray:
        coin_t = self.coin_t[rows] + 1
        self.coin_t[rows] = coin_t
        return coin_t == self.steps_per_coin

    # --- observations ------------------------------------------------------------------------------------------
    def _coins_above(self, rows) -> np.ndarray:
        return self.coins_visible | (self.coin_t[rows] < self.coin_show_duration)

    def oracle(self, idx=None):
        """(m, 2, 3): the agent (x, y, 1) and the coin (x, y, 1)."""
        return super().oracle(idx)[:, :2]

    def observe(self, variant, idx=None):
        obs = super().observe(variant, idx)
        if variant == "full":
            sl = slice(None) if idx is None else idx
            del obs["exit"], obs["spawns_left"]
            obs["coin_timer"] = (self.coin_t[sl] / self.steps_per_coin).astype(np.float32)[:, None]
            if self.max_steps is None:
                obs["time"] = self.t[sl].astype(np.float32)[:, None]
        return obs

    def render_ansi(self, i: int) -> str:
        text = super().render_ansi(i)
        return text.replace(f"coins left={self.coins[i]}", f"coins={self.collected[i]} coin_t={self.coin_t[i]}")


class EndlessSearingSpotlights(SearingSpotlights):
    """Endless Searing Spotlights (single environment). Kwargs: :data:`ENDLESS_PARAMS`."""

    core_cls = EndlessSearingSpotlightsCore


class EndlessSearingSpotlightsVector(SearingSpotlightsVector):
    """Endless Searing Spotlights, N environments in one numpy step."""

    core_cls = EndlessSearingSpotlightsCore
