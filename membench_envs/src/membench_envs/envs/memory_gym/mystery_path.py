"""Mystery Path (Pleines et al., "Memory Gym"; the ``memory-gym`` package's ``MysteryPath-v0`` and
``MysteryPath-Grid-v0``, which MIKASA-Base vendors), re-implemented in numpy with upstream's path generator, rules,
rewards and pictures. No pygame: the sprites are rasterised the way pygame draws them (in
:mod:`~membench_envs.envs.memory_gym.common`, shared with Mortar Mayhem). The endless version, which builds its path
from this module's generator, is :mod:`~membench_envs.envs.memory_gym.endless_mystery_path`.

Board. 7 x 7 tiles of 12 x 12 pixels (an 84 x 84 image). A side is drawn from ``cardinal_origin_choice``
(0 left, 1 right, 2 top, 3 bottom); the start is a random tile on it, the goal a random tile on the opposite
side. Upstream's generator then builds the path from the episode's ``numpy.random.Generator`` (seeded as
gymnasium seeds ``np_random``, so a seed gives upstream's path): each inner tile (1 … 4 on both axes) is a wall
with probability 33/100; 4 or 8 border tiles become walls (not next to the start, the goal, their neighbours, or
an inner wall); an A* search with random step costs (1 … 8) and a Euclidean heuristic walks from the start to the
goal. Upstream's A* quirks are kept, since they shape the path: the open node taken is the first one whose cost
is below the first open node's (not the cheapest), and a node already open that is reached more cheaply gets the
new predecessor but keeps its old cost. The path is invisible (upstream's default ``show_origin`` and
``show_goal`` are False, so the board is black).

Dynamics. Free movement (``MysteryPath-v0``): actions MultiDiscrete([3, 3]) = [0 none, 1 left, 2 right],
[0 none, 1 up, 2 down]; the agent's centre moves 3 pixels (2 per axis diagonally: upstream truncates 3/√2),
stays within 6 pixels of the edges, and its tile is centre // 12. Grid locomotion (``grid=True``): Discrete(4),
0 wait, 1 turn left, 2 turn right, 3 one tile forward (not beyond the board). On each step: the goal tile ends
the episode (``reward_goal``, success); else a path tile not rewarded before (start excluded) gives
``reward_path_progress``; a tile off the path gives ``reward_fall_off``, shows a red cross over the agent
(``visual_feedback``) and puts the agent back on the start tile on the next step, whatever its action (it keeps
its facing). ``reward_step`` every step. After ``max_steps`` steps the episode is truncated (upstream ends it
with done=True and truncated=False).

Observation (``partial``): ``{"image"}``, uint8 (84, 84, 3), exactly upstream's observation, which is pygame's
``surfarray`` of the screen: indexed [x, y] (columns first; ``render()`` shows it upright). The agent is
upstream's sprite (a body disc with two hands on the side it faces), the red cross is drawn over it on the step
it falls. ``oracle`` adds ``"oracle"``, the path: (7, 7) indexed [x, y], the rank of each tile along the path
(1 = start … L = goal, 0 = off the path), the hidden fact that a perfect memory of past falls and progress
approximates. ``full`` adds the path as ``"path"`` and the rest of the state: ``"tile"`` (the agent's [x, y]
tile), ``"position"`` (its centre in pixels), ``"rotation"`` (its facing in units of 45° counter-clockwise from
up, upstream's angle / 45), ``"returning"`` (1 when it fell and the next step puts it back on the start),
``"rewarded"`` ((7, 7), the path tiles already rewarded) and ``"time"`` (t / T). ``info["oracle"]`` is the
path in every variant.

Every reset parameter of upstream is a kwarg, except the agent's scale and speed (and, for the endless version, the
camera offset, background, stamina bar and origin), which stay at upstream's defaults. Tested step for step against
``memory_gym`` 1.0.2 (pygame-ce 2.5): the same paths, rewards, ends, agent positions and facings, and equal pixels in
all three versions, with default and other kwargs (pygame 2.4, which memory-gym pins, was not available to compare).
Measured (16 seeds): a memoryless policy that reads the agent off the image and follows the oracle reaches the goal
in every episode (return 1.76 free / 1.0 grid); random moves on the picture alone reach it in 0 / 1 of 16 (return
0.24 / 0.06).
"""

from __future__ import annotations

import functools
import math

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.memory_gym.common import (
    AGENT_RADIUS,
    AGENT_SPRITE,
    FREE_FACING,
    FREE_STEP,
    GRID_FACING,
    GRID_STEP,
    SCALE,
    SCREEN,
    MemoryGymCore,
    MemoryGymEnv,
    MemoryGymVectorEnv,
    Sprites,
    agent_sprites,
    flat_canvas,
    framed_view,
    pixel_tile,
    tile_centre,
)

#: Upstream's defaults that differ between the two finite versions: (max_steps, reward_path_progress).
DEFAULTS = {True: (128, 0.0), False: (512, 0.1)}

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "grid",
        "bool",
        False,
        doc="grid locomotion (Discrete(4): wait, turn left, turn right, forward) instead of "
        "free movement (MultiDiscrete([3, 3]): horizontal, vertical; 3 px per step)",
    ),
    Param("max_steps", "int", None, low=1, none_ok=True, doc="episode limit in steps; None: 128 (grid) / 512 (free)"),
    Param(
        "cardinal_origin_choice",
        "ints",
        (0, 1, 2, 3),
        low=0,
        high=3,
        max_length=100,
        doc="sides the path may start on (0 left, 1 right, 2 top, 3 bottom; it ends on the opposite side)",
    ),
    Param("show_origin", "bool", False, doc="draw the start tile (blue)"),
    Param("show_goal", "bool", False, doc="draw the goal tile (green)"),
    Param("visual_feedback", "bool", True, doc="draw a red cross over the agent on the step it falls off the path"),
    Param("reward_goal", "float", 1.0, doc="reward for reaching the goal tile (ends the episode)"),
    Param("reward_fall_off", "float", 0.0, doc="reward on the step the agent leaves the path"),
    Param(
        "reward_path_progress",
        "float",
        None,
        none_ok=True,
        doc="reward per path tile reached for the first time; None: 0.0 (grid) / 0.1 (free)",
    ),
    Param("reward_step", "float", 0.0, doc="reward added on every step"),
)

# Every picture is indexed [x, y] like pygame's surfarray, which is what Memory Gym returns as its observation.
GRID = 7
TILE = SCREEN // GRID  # 12 px
CROSS_RGB, ORIGIN_RGB, GOAL_RGB = (255, 0, 0), (0, 0, 255), (0, 255, 0)


def fall_cross(scale: float = SCALE) -> np.ndarray:
    """The red cross Memory Gym shows where the agent fell: a (D, D) bool mask, D = 40 * scale = 10 px; two
    diagonals 3 px wide (pygame's lines of width int(12 * scale))."""
    dim = int(40 * scale)
    i, j = np.mgrid[:dim, :dim]
    half = int(12 * scale) // 2
    return (np.abs(i - j) <= half) | (np.abs(i + j - (dim - 1)) <= half)


CROSS = fall_cross()
AGENT_XY = Sprites(*(a.swapaxes(1, 2) for a in agent_sprites()))  # [x, y]
CROSS_SPRITE = Sprites(CROSS[None], CROSS_RGB)  # (symmetric: the same [x, y] and [y, x])


@functools.lru_cache(maxsize=8)
def _neighbours(n: int) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Per tile x * n + y of an n x n board: its 4 neighbours in upstream's order (+x, -x, +y, -y), and its 8
    neighbours, as tile indices."""
    four, eight = [], []
    for x in range(n):
        for y in range(n):
            four.append(
                tuple(
                    (x + dx) * n + y + dy
                    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                    if 0 <= x + dx < n and 0 <= y + dy < n
                )
            )
            eight.append(
                tuple(
                    (x + dx) * n + y + dy
                    for dx in (-1, 0, 1)
                    for dy in (-1, 0, 1)
                    if (dx or dy) and 0 <= x + dx < n and 0 <= y + dy < n
                )
            )
    return tuple(four), tuple(eight)


def generate_path(
    rng: np.random.Generator, start: tuple[int, int], goal: tuple[int, int], size: int = GRID
) -> list[tuple[int, int]]:
    """Upstream's procedural path from ``start`` to ``goal`` (tiles [x, y]), drawing from ``rng`` in upstream's
    order; returns the path's tiles from the start to the goal. (Plain Python: it runs once per episode.)"""
    n = size
    four, eight = _neighbours(n)
    wall = [False] * (n * n)  # tile x * n + y
    for x in range(1, n - 2):  # inner walls: one draw per tile, x outer
        for y in range(1, n - 2):
            wall[x * n + y] = bool(rng.integers(0, 100) < 33)
    s, e = start[0] * n + start[1], goal[0] * n + goal[1]
    near_ends = {s, e, *four[s], *four[e]}
    border = [
        x * n + y
        for x in range(n)
        for y in range(n)
        if (x in (0, n - 1) or y in (0, n - 1))
        and x * n + y not in near_ends
        and not any(wall[k] for k in eight[x * n + y])
    ]
    for _ in range((4, 8)[rng.choice(2)]):  # upstream: rng.choice([4, 8]), then rng.choice(candidates)
        if border:
            wall[border.pop(int(rng.choice(len(border))))] = True

    # A* with random step costs (upstream's, quirks included; see the module docstring)
    g = [0] * (n * n)
    f = [0.0] * (n * n)
    previous = [-1] * (n * n)
    is_open, closed = [False] * (n * n), [False] * (n * n)
    open_list = [s]
    is_open[s] = True
    gx, gy = goal
    while True:
        if not open_list:
            raise RuntimeError(f"Mystery Path: no path from {start} to {goal} (upstream raises too)")
        first = f[open_list[0]]
        current = next((k for k in open_list if f[k] < first), open_list[0])
        if current == e:
            break
        open_list.remove(current)
        is_open[current], closed[current] = False, True
        for k in four[current]:
            if closed[k] or wall[k]:
                continue
            cost = g[current] + int(rng.integers(1, 9))
            if is_open[k]:
                if not cost < g[k]:
                    continue  # cheaper: upstream keeps the old cost but takes the new predecessor
            else:
                g[k] = cost
                open_list.append(k)
                is_open[k] = True
            f[k] = g[k] + math.sqrt((k // n - gx) ** 2 + (k % n - gy) ** 2)
            previous[k] = current
    path = [e]
    while previous[path[-1]] >= 0:
        path.append(previous[path[-1]])
    return [(k // n, k % n) for k in reversed(path)]


def draw_start_and_goal(rng: np.random.Generator, sides, size: int = GRID) -> tuple[tuple[int, int], tuple[int, int]]:
    """Upstream's start and goal tiles: a side from ``sides`` (0 left, 1 right, 2 top, 3 bottom), then a tile on it
    and one on the opposite side."""
    side = sides[int(rng.choice(len(sides)))]
    last = size - 1
    a, b = int(rng.integers(0, size)), int(rng.integers(0, size))
    return {0: ((0, a), (last, b)), 1: ((last, a), (0, b)), 2: ((a, 0), (b, last)), 3: ((a, last), (b, 0))}[side]


class MysteryPathCore(MemoryGymCore):
    PARAMS = PARAMS

    def __init__(
        self,
        num_envs: int,
        *,
        grid: bool,
        max_steps: int | None,
        cardinal_origin_choice: tuple[int, ...],
        show_origin: bool,
        show_goal: bool,
        visual_feedback: bool,
        reward_goal: float,
        reward_fall_off: float,
        reward_path_progress: float | None,
        reward_step: float,
    ):
        super().__init__(num_envs)
        default_steps, default_progress = DEFAULTS[bool(grid)]
        self.grid = bool(grid)
        self.T = default_steps if max_steps is None else int(max_steps)
        if not cardinal_origin_choice:
            raise ValueError("MysteryPath: cardinal_origin_choice must name at least one side (0 … 3)")
        self.sides = tuple(int(s) for s in cardinal_origin_choice)
        self.show_origin, self.show_goal = bool(show_origin), bool(show_goal)
        self.visual_feedback = bool(visual_feedback)
        self.reward_goal, self.reward_fall_off = float(reward_goal), float(reward_fall_off)
        self.reward_step = float(reward_step)
        self.reward_path_progress = default_progress if reward_path_progress is None else float(reward_path_progress)
        n = num_envs
        self.path = np.zeros((n, GRID, GRID), dtype=np.int64)  # [x, y]: rank along the path, 0 = off it
        self.start = np.zeros((n, 2), dtype=np.int64)
        self.goal = np.zeros((n, 2), dtype=np.int64)
        self.position = np.zeros((n, 2), dtype=np.int64)  # the agent's centre in pixels
        self.facing = np.zeros(n, dtype=np.int64)  # upstream's rotation / 45
        self.returning = np.zeros(n, dtype=bool)  # fell on the last step: the next one puts it back on the start
        self.cross = np.zeros(n, dtype=bool)  # the red cross is shown, centred at cross_at
        self.cross_at = np.zeros((n, 2), dtype=np.int64)
        self.rewarded = np.zeros((n, GRID, GRID), dtype=bool)
        self.num_fails = np.zeros(n, dtype=np.int64)
        self.board, self._board = flat_canvas(n)  # the path surface (black unless shown): flat, and [x, y]
        self._rows = np.arange(n)
        if self.grid:
            self.action_space = gym.spaces.Discrete(4)
        else:
            self.action_space = gym.spaces.MultiDiscrete([3, 3])
        image = gym.spaces.Box(0, 255, (SCREEN, SCREEN, 3), np.uint8)
        path = gym.spaces.MultiDiscrete(np.full((GRID, GRID), GRID * GRID + 1))
        self.obs_spaces = {
            "partial": gym.spaces.Dict({"image": image}),
            "oracle": gym.spaces.Dict({"image": image, "oracle": path}),
            "full": gym.spaces.Dict(
                {
                    "image": image,
                    "path": path,
                    "tile": gym.spaces.MultiDiscrete([GRID, GRID]),
                    "position": gym.spaces.MultiDiscrete([SCREEN + 1, SCREEN + 1]),
                    "rotation": gym.spaces.Discrete(8),
                    "returning": gym.spaces.Discrete(2),
                    "rewarded": gym.spaces.MultiBinary((GRID, GRID)),
                    "time": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                }
            ),
        }

    # --- episodes ----------------------------------------------------------------------------------------------
    def _new_episodes(self, idx):
        for i in np.atleast_1d(idx):
            rng = self.generator(int(i))
            start, goal = draw_start_and_goal(rng, self.sides)
            tiles = generate_path(rng, start, goal)
            self.path[i] = 0
            xs, ys = np.array(tiles).T
            self.path[i, xs, ys] = np.arange(1, len(tiles) + 1)
            self.start[i], self.goal[i] = start, goal
            board = self._board[i]
            board[:] = 0
            if self.show_goal:
                board[goal[0] * TILE : (goal[0] + 1) * TILE, goal[1] * TILE : (goal[1] + 1) * TILE] = GOAL_RGB
            if self.show_origin:
                board[start[0] * TILE : (start[0] + 1) * TILE, start[1] * TILE : (start[1] + 1) * TILE] = ORIGIN_RGB
        self.position[idx] = tile_centre(self.start[idx], TILE)
        self.facing[idx] = 0
        self.returning[idx] = False
        self.cross[idx] = False
        self.rewarded[idx] = False
        self.num_fails[idx] = 0

    # --- dynamics ----------------------------------------------------------------------------------------------
    def step(self, actions, idx=None):
        rows = self._rows if idx is None else idx
        position, facing, returning = self.position[rows], self.facing[rows], self.returning[rows]
        if self.grid:
            tile = position // TILE + GRID_STEP[facing, actions]
            moved = np.minimum(np.maximum(tile, 0), GRID - 1) * TILE + TILE // 2
            turned = GRID_FACING[facing, actions]
        else:
            a = actions[:, 0] * 3 + actions[:, 1]
            moved = np.minimum(np.maximum(position + FREE_STEP[a], AGENT_RADIUS), SCREEN - AGENT_RADIUS)
            turned = FREE_FACING[facing, a]
        if returning.any():  # fell on the last step: back on the start, whatever the action, facing kept
            moved[returning] = self.start[rows[returning]] * TILE + TILE // 2
            turned[returning] = facing[returning]
        tile = moved // TILE
        cell = tile[:, 0] * GRID + tile[:, 1]
        at_goal = cell == self.goal[rows, 0] * GRID + self.goal[rows, 1]
        rank = self.path.reshape(-1, GRID * GRID)[rows, cell]
        fell = rank == 0  # the goal is on the path
        rewarded = self.rewarded.reshape(-1, GRID * GRID)
        first_visit = (rank > 1) & ~at_goal & ~rewarded[rows, cell]  # rank 1 is the start
        reward = (
            self.reward_step
            + self.reward_goal * at_goal
            + self.reward_path_progress * first_visit
            + self.reward_fall_off * fell
        )
        rewarded[rows[first_visit], cell[first_visit]] = True
        self.num_fails[rows] += fell
        self.returning[rows] = fell  # (upstream skips this on the goal step, where it is False anyway)
        self.cross[rows] = fell & self.visual_feedback
        self.cross_at[rows] = moved
        self.position[rows] = moved
        self.facing[rows] = turned
        t = self.t[rows] + 1
        self.t[rows] = t
        self.success[rows] = at_goal
        return reward, at_goal, ~at_goal & (t >= self.T)

    # --- observations ------------------------------------------------------------------------------------------
    def image(self, sl) -> np.ndarray:
        rows = self._rows[sl]
        flat = self.board[rows]  # a copy (fancy indexing)
        AGENT_XY.draw(flat, self.facing[rows], self.position[rows] - AGENT_SPRITE // 2)
        crossed = np.flatnonzero(self.cross[rows])
        if crossed.size:
            CROSS_SPRITE.draw(
                flat,
                np.zeros(crossed.size, dtype=np.int64),
                self.cross_at[rows[crossed]] - CROSS.shape[0] // 2,
                images=crossed,
            )
        return flat[:, :-1].reshape(rows.size, SCREEN, SCREEN, 3)

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return self.path[sl].copy()

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        obs = {"image": self.image(sl)}
        if variant == "oracle":
            obs["oracle"] = self.oracle(idx)
        elif variant == "full":
            obs["path"] = self.oracle(idx)
            obs["tile"] = pixel_tile(self.position[sl], TILE)
            obs["position"] = self.position[sl].copy()
            obs["rotation"] = self.facing[sl].copy()
            obs["returning"] = self.returning[sl].astype(np.int64)
            obs["rewarded"] = self.rewarded[sl].astype(np.int8)
            obs["time"] = (self.t[sl] / self.T).astype(np.float32)[:, None]
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        """The board, rows top to bottom: ``S`` start, ``G`` goal, ``o`` path, ``.`` off it, ``A`` the agent
        (``X`` when it just fell)."""
        chars = np.where(self.path[i] > 0, "o", ".").astype("<U1")
        chars[tuple(self.start[i])], chars[tuple(self.goal[i])] = "S", "G"
        x, y = pixel_tile(self.position[i], TILE)
        chars[x, y] = "X" if self.returning[i] else "A"
        lines = ["".join(chars[:, row]) for row in range(GRID)]
        return "\n".join(lines) + f"\nt={self.t[i]}/{self.T}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The agent's image upright at 4x scale, the hidden path tinted in dim blue beneath it (start and goal
        brighter), and t / T along the bottom."""
        image = self.image(np.array([i]))[0].transpose(1, 0, 2)  # [y, x]
        path = self.path[i].T
        hidden = np.zeros_like(image)
        hidden[np.repeat(np.repeat(path > 0, TILE, 0), TILE, 1)] = draw.dim(draw.HIDDEN)
        for tile, colour in ((self.start[i], ORIGIN_RGB), (self.goal[i], GOAL_RGB)):
            hidden[tile[1] * TILE : (tile[1] + 1) * TILE, tile[0] * TILE : (tile[0] + 1) * TILE] = draw.dim(colour)
        picture = np.where(image.any(axis=2, keepdims=True), image, hidden)
        return framed_view(picture, self.t[i] / self.T, done, bool(self.success[i]))


class MysteryPath(MemoryGymEnv):
    """Mystery Path (single environment). Kwargs: :data:`PARAMS`.

    ``reset(seed=s)`` gives upstream's path for seed ``s``; later resets without a seed continue that generator,
    as upstream's ``np_random`` does."""

    core_cls = MysteryPathCore


class MysteryPathVector(MemoryGymVectorEnv):
    """Mystery Path, N environments in one numpy step (the paths are generated per environment in Python)."""

    core_cls = MysteryPathCore
