"""Endless Mystery Path (Pleines et al., "Memory Gym"; the ``memory-gym`` package's ``Endless-MysteryPath-v0``,
which MIKASA-Base vendors), re-implemented in numpy over the finite Mystery Path's path generator and pictures
(:mod:`membench_envs.envs.memory_gym.mystery_path`).

The path is made of segments: segment s
is a 7 x 7 path from upstream's generator (the first starts on a random row, each next one on the row where the
last ended, all end in the segment's last column), put in world columns 8s … 8s + 6, followed by one transition
tile in column 8s + 7; three segments at the reset, and a new one whenever the agent enters the last but one. The
agent starts on the first tile facing right and moves 3 px per step: Discrete(4), 0 none, 1 right, 2 up, 3 down
(no left; nothing keeps it on the board). The camera follows it: the agent is always drawn with its centre at
screen x = 66, and the path tiles behind it are shown (white with a 1 px (210, 210, 210) border): from the
predecessor of the last path tile it stood on, back to the first tile in a column at most 5 behind the agent's
column − 1. A path tile reached for the first time gives ``reward_path_progress``; stamina (``stamina_level``)
drops by one every step and refills on a path tile other than the start not visited since the last fall
(MIKASA-Base's fix; memory-gym 1.0.2 compares the tile's ``(x, y)`` with the start node object, never equal, so
there the start refills too: the step back on it after a fall, one step more per fall;
``start_refills_stamina=True`` restores that, for the parity tests against memory_gym). A fall: ``reward_fall_off``,
the red cross, every tile refills again, and the next step puts the agent back on the first tile; the episode ends
(terminated) when a fall is in a column behind the furthest one reached on the path, or on a spot where it fell
before (upstream never clears that list), or when the stamina reaches 0. No step limit (``max_steps`` adds a
truncation). The observation is upstream's screen, [x, y]; ``oracle`` adds ``"oracle"``, the path in a window
of 16 columns (the agent's tile − 7 … + 8) x 7 rows: 0 off the path, 1 a tile up to the last one stood on, 2 a
tile after it; ``full`` adds that window as ``"path"``, upstream's ground truth ``"direction"`` (the step from the
last path tile to the next: east / north / south, one-hot; a step west keeps the old value as upstream does),
the agent's world ``"position"``, ``"rotation"``, ``"stamina"`` (fraction left) and ``"returning"``.

With ``start_refills_stamina=True`` the env equals ``memory_gym`` 1.0.2 step for step and in pixels. Measured (8
seeds, 300-step cap): an oracle follower vs random moves, return 8.0 vs 0.15, furthest column 58 vs 1.3 (the same
with either stamina rule).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.memory_gym.common import (
    AGENT_SPRITE,
    FREE_FACING,
    FREE_STEP,
    SCREEN,
    MemoryGymCore,
    MemoryGymEnv,
    MemoryGymVectorEnv,
    flat_canvas,
    framed_view,
)
from membench_envs.envs.memory_gym.mystery_path import AGENT_XY, CROSS, CROSS_SPRITE, GRID, TILE, generate_path

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "max_steps",
        "int",
        None,
        low=1,
        none_ok=True,
        doc="episode limit in steps (truncation); None: none, as upstream (the stamina ends episodes)",
    ),
    Param("stamina_level", "int", 20, low=1, doc="steps the agent may take without reaching a new path tile"),
    Param(
        "start_refills_stamina",
        "bool",
        False,
        doc="memory-gym 1.0.2's bug: the start tile refills the stamina like any other path tile (its check "
        "compares the tile's (x, y) with the start node object, never equal), so the step back on the start "
        "after a fall refills it; False: MIKASA-Base's fix, the start tile never refills (one step less after "
        "each fall). True for parity with memory_gym",
    ),
    Param("show_past_path", "bool", True, doc="draw the path behind the agent (up to 5 columns back)"),
    Param("visual_feedback", "bool", True, doc="draw a red cross over the agent on the step it falls off the path"),
    Param("reward_fall_off", "float", 0.0, doc="reward on the step the agent leaves the path"),
    Param("reward_path_progress", "float", 0.1, doc="reward per path tile reached for the first time"),
    Param("reward_step", "float", 0.0, doc="reward added on every step"),
)

SEGMENT = GRID + 1  #: columns per endless segment: a 7 x 7 path, then one transition tile
_ENDLESS_MOVES = np.array([0, 2 * 3, 1, 2])  #: actions none, right, up, down as free-movement actions h * 3 + v
AGENT_SCREEN_X = 66  #: the agent's centre on screen: the camera trails it by 5.0 tiles (camera_offset_scale)
_PAST_DEPTH = 5  #: columns of past path drawn behind the agent (int(camera_offset_scale))
_LOOK_BACK = 128  #: path nodes examined when drawing the past path (more than 6 columns can hold)
_DIRECTIONS = np.full((3, 3), -1, dtype=np.int64)  # per (dx + 1, dy + 1) of a path step: east 0, north 1, south 2
_DIRECTIONS[2, 1], _DIRECTIONS[1, 0], _DIRECTIONS[1, 2] = 0, 1, 2
_ONE_HOT = np.eye(3, dtype=np.int64)[[0, 1, 2, 0]]  # (index -1: unused)
#: the oracle's window: the path in the columns [tile - 7, tile + 8] around the agent's tile
WINDOW_BEHIND, WINDOW = 7, 16


_VIEW_COLUMNS = SCREEN // TILE + 2  #: world columns that can show on screen (the first and last partly)
_ROW_EDGE = (np.arange(SCREEN) % TILE == 0) | (np.arange(SCREEN) % TILE == TILE - 1)  # tile borders along y


class EndlessMysteryPathCore(MemoryGymCore):
    PARAMS = PARAMS
    # the per-tile arrays, (re)sized by _allocate
    rank: np.ndarray
    rewarded: np.ndarray
    refilled: np.ndarray
    node_xy: np.ndarray

    def __init__(
        self,
        num_envs: int,
        *,
        max_steps: int | None,
        stamina_level: int,
        start_refills_stamina: bool,
        show_past_path: bool,
        visual_feedback: bool,
        reward_fall_off: float,
        reward_path_progress: float,
        reward_step: float,
    ):
        super().__init__(num_envs)
        n = num_envs
        self.max_steps = max_steps
        self.T = max_steps if max_steps is not None else np.iinfo(np.int64).max
        self.stamina_level = int(stamina_level)
        self.start_refills_stamina = bool(start_refills_stamina)
        self.show_past_path, self.visual_feedback = bool(show_past_path), bool(visual_feedback)
        self.reward_fall_off, self.reward_path_progress = float(reward_fall_off), float(reward_path_progress)
        self.reward_step = float(reward_step)
        self._rows = np.arange(n)
        self._allocate(4 * SEGMENT)
        self.segments = np.zeros(n, dtype=np.int64)
        self.nodes = np.zeros(n, dtype=np.int64)  # path nodes so far
        self.end_y = np.zeros(n, dtype=np.int64)  # the last segment's goal row: the next segment starts there
        self.position = np.zeros((n, 2), dtype=np.int64)  # the agent's centre in world pixels
        self.facing = np.zeros(n, dtype=np.int64)
        self.current = np.zeros(n, dtype=np.int64)  # rank of the last path node the agent stood on
        self.direction = np.zeros((n, 3), dtype=np.int64)  # upstream's ground truth: next node east / north / south
        self.stamina = np.zeros(n, dtype=np.int64)
        self.max_x = np.zeros(n, dtype=np.int64)
        self.returning = np.zeros(n, dtype=bool)
        self.cross = np.zeros(n, dtype=bool)
        self.num_fails = np.zeros(n, dtype=np.int64)
        self.falls: list[set[tuple[int, int]]] = [set() for _ in range(n)]
        self.action_space = gym.spaces.Discrete(4)
        image = gym.spaces.Box(0, 255, (SCREEN, SCREEN, 3), np.uint8)
        window = gym.spaces.MultiDiscrete(np.full((WINDOW, GRID), 3))
        self.obs_spaces = {
            "partial": gym.spaces.Dict({"image": image}),
            "oracle": gym.spaces.Dict({"image": image, "oracle": window}),
            "full": gym.spaces.Dict(
                {
                    "image": image,
                    "path": window,
                    "direction": gym.spaces.MultiBinary(3),
                    # the agent's centre in world pixels (x grows along the path; y leaves the board by a step at most)
                    "position": gym.spaces.Box(
                        np.array([0, -TILE], np.float32), np.array([2**24, SCREEN + TILE], np.float32), dtype=np.float32
                    ),
                    "rotation": gym.spaces.Discrete(8),
                    "stamina": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                    "returning": gym.spaces.Discrete(2),
                }
            ),
        }

    def _allocate(self, columns: int) -> None:
        """(Re)size the per-tile arrays to ``columns`` world columns, keeping what they hold."""
        n = self.num_envs
        old = getattr(self, "rank", None)
        self.columns = columns
        fresh = {
            "rank": np.zeros((n, columns, GRID), dtype=np.int64),  # [x, y]: the node's rank along the path, 0 = off
            "rewarded": np.zeros((n, columns, GRID), dtype=bool),
            "refilled": np.zeros((n, columns, GRID), dtype=bool),  # upstream's stamina_visited
            "node_xy": np.zeros((n, columns * GRID + 1, 2), dtype=np.int64),  # per rank (1 …), its tile
        }
        for name, array in fresh.items():
            if old is not None:
                previous = getattr(self, name)
                array[:, : previous.shape[1]] = previous
            setattr(self, name, array)

    # --- the endless path ----------------------------------------------------------------------------------------
    def _add_segment(self, i: int) -> None:
        """Upstream's next segment: a 7 x 7 path from the last goal row (the first: a random row) to a random row
        of the segment's last column, shifted to columns 8s … 8s + 6, then a transition tile in column 8s + 7."""
        rng = self.episode_generator(i)
        s = int(self.segments[i])
        start_y = int(rng.integers(0, GRID)) if s == 0 else int(self.end_y[i])
        end_y = int(rng.integers(0, GRID))
        tiles = generate_path(rng, (0, start_y), (GRID - 1, end_y)) + [(GRID, end_y)]
        if SEGMENT * (s + 1) > self.columns:
            self._allocate(2 * self.columns)
        xy = np.array(tiles, dtype=np.int64) + (SEGMENT * s, 0)
        first = int(self.nodes[i]) + 1
        ranks = np.arange(first, first + len(tiles))
        self.rank[i, xy[:, 0], xy[:, 1]] = ranks
        self.node_xy[i, ranks] = xy
        self.nodes[i] += len(tiles)
        self.segments[i] = s + 1
        self.end_y[i] = end_y

    def _new_episodes(self, idx):
        for i in np.atleast_1d(idx):
            self.generator(int(i))  # (re)seeded on a new seed; _add_segment draws from it
            self.rank[i] = 0
            self.rewarded[i] = False
            self.refilled[i] = False
            self.segments[i] = self.nodes[i] = 0
            for _ in range(3):
                self._add_segment(i)
            self.falls[i] = set()
            start = self.node_xy[i, 1]
            self.rewarded[i, start[0], start[1]] = True  # upstream: the first node yields no reward
            self.position[i] = start * TILE + TILE // 2
        self.facing[idx] = 6  # 270°: facing right
        self.current[idx] = 1
        self.direction[idx] = self._direction(idx, np.zeros((np.size(idx), 3), dtype=np.int64))
        self.stamina[idx] = self.stamina_level
        self.max_x[idx] = 0
        self.returning[idx] = False
        self.cross[idx] = False
        self.num_fails[idx] = 0

    def _direction(self, rows, previous):
        """Upstream's ground truth: the step from the current node to the next, one-hot east / north / south
        (a step west keeps the previous value, as upstream does)."""
        current = self.current[rows]
        d = self.node_xy[rows, current + 1] - self.node_xy[rows, current]
        which = _DIRECTIONS[d[:, 0] + 1, d[:, 1] + 1]  # east 0, north 1, south 2, west -1
        return np.where((which >= 0)[:, None], _ONE_HOT[which], previous)

    # --- dynamics ----------------------------------------------------------------------------------------------
    def step(self, actions, idx=None):
        rows = self._rows if idx is None else idx
        position, facing, returning = self.position[rows], self.facing[rows], self.returning[rows]
        moves = _ENDLESS_MOVES[actions]
        moved = position + FREE_STEP[moves]
        turned = FREE_FACING[facing, moves]
        if returning.any():  # fell on the last step: back on the start, whatever the action, facing kept
            moved[returning] = self.node_xy[rows[returning], 1] * TILE + TILE // 2
            turned[returning] = facing[returning]
        tile = moved // TILE
        for j in np.flatnonzero(tile[:, 0] // SEGMENT > self.segments[rows] - 2):  # keep a segment ahead
            self._add_segment(int(rows[j]))
        inside = (tile[:, 1] >= 0) & (tile[:, 1] < GRID)
        ty = np.where(inside, tile[:, 1], 0)
        rank = np.where(inside, self.rank[rows, tile[:, 0], ty], 0)
        on_path = rank > 0
        new_tile = on_path & ~self.rewarded[rows, tile[:, 0], ty]
        refill = on_path & ~self.refilled[rows, tile[:, 0], ty]
        if not self.start_refills_stamina:  # MIKASA-Base's fix: the start tile (rank 1) never refills
            refill &= rank != 1
        self.rewarded[rows[new_tile], tile[new_tile, 0], ty[new_tile]] = True
        self.refilled[rows[refill], tile[refill, 0], ty[refill]] = True
        stamina = np.where(refill, self.stamina_level, self.stamina[rows])
        self.current[rows] = np.where(on_path, rank, self.current[rows])
        fell = ~on_path
        terminated = fell & (tile[:, 0] < self.max_x[rows])  # fell behind its furthest column
        for j in np.flatnonzero(fell & ~terminated):  # or where it fell before
            spot = (int(tile[j, 0]), int(tile[j, 1]))
            falls = self.falls[int(rows[j])]
            terminated[j] = spot in falls
            falls.add(spot)  # (upstream would clear these on a new furthest column, but checks too early to)
        if fell.any():  # a fall makes every tile refill the stamina again
            self.refilled[rows[fell]] = False
            stamina = np.where(fell, self.stamina_level, stamina)
        reward = self.reward_step + self.reward_path_progress * new_tile + self.reward_fall_off * fell
        self.num_fails[rows] += fell
        self.returning[rows] = fell
        self.cross[rows] = fell & self.visual_feedback
        stamina = stamina - 1
        terminated |= stamina == 0
        self.stamina[rows] = stamina
        self.position[rows] = moved
        self.facing[rows] = turned
        self.direction[rows] = self._direction(rows, self.direction[rows])
        self.max_x[rows] = np.where(on_path & (tile[:, 0] > self.max_x[rows]), tile[:, 0], self.max_x[rows])
        t = self.t[rows] + 1
        self.t[rows] = t
        return reward, terminated, ~terminated & (t >= self.T)

    # --- observations ------------------------------------------------------------------------------------------
    def image(self, sl) -> np.ndarray:
        rows = self._rows[sl]
        m = rows.size
        flat, canvas = flat_canvas(m)
        position = self.position[rows]
        camera = position[:, 0] - AGENT_SCREEN_X  # world x of the screen's left edge
        if self.show_past_path:
            # from the current node's predecessor back to the first node in a column <= past_x (drawn too)
            x0 = position[:, 0] // TILE - 1
            past_x = np.maximum(0, x0 - _PAST_DEPTH)
            ranks = self.current[rows, None] - 1 - np.arange(_LOOK_BACK)[None, :]  # (m, K)
            valid = (ranks >= 1) & (x0 >= 0)[:, None]
            xy = self.node_xy[rows[:, None], np.maximum(ranks, 0)]  # (m, K, 2)
            reached = valid & (xy[..., 0] <= past_x[:, None])
            last = np.where(reached.any(axis=1), reached.argmax(axis=1), _LOOK_BACK)
            drawn = valid & (np.arange(_LOOK_BACK)[None, :] <= last[:, None])
            # the drawn tiles on a tile map of the 9 world columns in view, blown up and shifted by the camera
            first = camera // TILE  # the world column at the screen's left edge (partly visible)
            j, k = np.nonzero(drawn)
            column = xy[j, k, 0] - first[j]
            seen = (column >= 0) & (column < _VIEW_COLUMNS)
            tiles = np.zeros((m, _VIEW_COLUMNS, GRID), dtype=bool)
            tiles[j[seen], column[seen], xy[j[seen], k[seen], 1]] = True
            pixels = tiles.repeat(TILE, axis=1).repeat(TILE, axis=2)  # (m, 108, 84)
            xs = camera[:, None] - first[:, None] * TILE + np.arange(SCREEN)[None, :]  # (m, 84) into the map
            pixels = pixels[np.arange(m)[:, None], xs]
            canvas[pixels] = 255
            edge = (xs % TILE == 0) | (xs % TILE == TILE - 1)  # upstream's 1 px (210, 210, 210) border
            canvas[pixels & (edge[:, :, None] | _ROW_EDGE[None, None, :])] = 210
        screen = np.stack([np.full(m, AGENT_SCREEN_X), position[:, 1]], axis=1)
        AGENT_XY.draw(flat, self.facing[rows], screen - AGENT_SPRITE // 2)
        crossed = np.flatnonzero(self.cross[rows])
        if crossed.size:
            CROSS_SPRITE.draw(
                flat, np.zeros(crossed.size, dtype=np.int64), screen[crossed] - CROSS.shape[0] // 2, images=crossed
            )
        return canvas

    def window(self, sl) -> np.ndarray:
        """(m, 16, 7) [x, y]: the path in the columns tile − 7 … tile + 8 around the agent: 0 off the path, 1 a
        node at or before the current one, 2 a node after it."""
        rows = self._rows[sl]
        columns = self.position[rows, 0, None] // TILE - WINDOW_BEHIND + np.arange(WINDOW)[None, :]
        inside = (columns >= 0) & (columns < self.columns)
        rank = self.rank[rows[:, None], np.minimum(np.maximum(columns, 0), self.columns - 1)] * inside[:, :, None]
        return np.where(rank == 0, 0, np.where(rank > self.current[rows, None, None], 2, 1))

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return self.window(sl)

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        obs = {"image": self.image(sl)}
        if variant == "oracle":
            obs["oracle"] = self.window(sl)
        elif variant == "full":
            obs["path"] = self.window(sl)
            obs["direction"] = self.direction[sl].astype(np.int8)
            obs["position"] = self.position[sl].astype(np.float32)
            obs["rotation"] = self.facing[sl].copy()
            obs["stamina"] = (self.stamina[sl] / self.stamina_level).astype(np.float32)[:, None]
            obs["returning"] = self.returning[sl].astype(np.int64)
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        """The oracle window (columns tile − 7 … tile + 8; ``o`` path behind, ``+`` ahead, ``.`` off it) with the
        agent (``A``, ``X`` when it just fell), its stamina and its furthest column."""
        window = self.window(np.array([i]))[0]
        chars = np.array([".", "o", "+"])[window]
        y = int(self.position[i, 1] // TILE)
        if 0 <= y < GRID:
            chars[WINDOW_BEHIND, y] = "X" if self.returning[i] else "A"
        lines = ["".join(chars[:, row]) for row in range(GRID)]
        return "\n".join(lines) + (
            f"\nstamina={self.stamina[i]}/{self.stamina_level} max_x={self.max_x[i]} t={self.t[i]}\n"
        )

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The agent's image upright at 4x scale, the hidden path ahead tinted in dim blue beneath it, and the
        stamina along the bottom."""
        image = self.image(np.array([i]))[0].transpose(1, 0, 2)  # [y, x]
        camera = int(self.position[i, 0]) - AGENT_SCREEN_X
        hidden = np.zeros_like(image)
        xs = camera + np.arange(SCREEN)
        inside = (xs >= 0) & (xs < self.columns * TILE)
        ahead = self.rank[i, np.clip(xs // TILE, 0, self.columns - 1)] > self.current[i]  # (84, 7) [x, y]
        ahead &= inside[:, None]
        hidden[np.repeat(ahead.T, TILE, axis=0)] = draw.dim(draw.HIDDEN)
        picture = np.where(image.any(axis=2, keepdims=True), image, hidden)
        return framed_view(picture, self.stamina[i] / self.stamina_level, done, False)


class EndlessMysteryPath(MemoryGymEnv):
    """Endless Mystery Path (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = EndlessMysteryPathCore


class EndlessMysteryPathVector(MemoryGymVectorEnv):
    """Endless Mystery Path, N environments in one numpy step."""

    core_cls = EndlessMysteryPathCore
