"""POBAX's Battleship (``battleship_10``; also ``battleship_5`` and ``battleship_3``, which the authors' ``get_env``
defines), as the authors' ``envs/jax/battleship.py`` defines it (after Silver & Veness' POMDP version).

Board. size × size cells (``size`` = 10, 5 or 3) and the authors' ships per size: 10 → lengths (5, 4, 3, 2)
(14 ship cells), 5 → (3, 2), 3 → (2,). Each episode places the ships one after the other, in that order: an
orientation (horizontal or vertical, probability 1/2 each), then a position uniformly among the placements of that
orientation that lie on the board and overlap no earlier ship. (The paper's §6.1 says "4 ships"; POPGym's Battleship
uses lengths 2, 3, 3, 4 instead.)

Actions: Discrete(size²); action a fires at row a // size, column a % size. The action mask (1 = a cell not fired
at yet) is part of the observation and ``info["action_mask"]`` (int8, ``Discrete.sample(mask=...)`` takes it). As in
the authors' code the mask is advice: firing at a cell fired at before is allowed, hits nothing new (the hit bit is
0) and costs the step (−1); the paper's agents always apply the mask ("no position was allowed to hit twice"), so an
episode lasts at most size² shots.

Reward: size² on the step that hits the last ship cell, which ends the episode (``terminated``,
``info["success"]`` = True); −1 on every other step (the authors' ``rows * cols * done − (1 − done)``: +100 at 10 × 10
as the paper says, but +25 at 5 × 5 and +9 at 3 × 3). Best return at 10 × 10: 100 − 13 = 87 (14 shots, all
hits); with the mask the worst is 100 − 99 = 1. ``dense_reward=True`` (the authors' option, off in the benchmark):
the reward is the hit bit, nothing else. The authors' γ is 1. Episode cap: ``max_steps`` (default 1000,
:mod:`membench_envs.envs.pobax.limits`); reached only by an agent that ignores the mask.

Observation (``partial``), a dict as the authors' HEAD code: ``"hit"``: (1,) float32, 1 when the last shot hit a
ship cell not hit before, else 0 (0 at reset); ``"action_mask"``: (size²,) int8. The mask shows every cell fired at,
not which of them hit: that is what must be remembered. (The paper's App. B.3 describes the observation as the hit
bit concatenated with the last action, (101,); the paper-era code gave [hit] ++ mask, (101,), and its
``action_concat`` option, on in the ``best/`` scripts, appends a one-hot of the previous action on the agent's side.)

``oracle`` adds ``"oracle"``: POBAX's "perfect memory" grid (the authors' ``PerfectMemoryWrapper``), (size, size)
float32, +1 hit, −1 miss, 0 not fired at; ``info["oracle"]`` holds it in every variant. (The authors' wrapper returns
the grid alone and drops the mask, which the grid implies; here the dict keeps the hit bit and the mask in every
variant.)
``full`` adds ``"state"``: the authors' ``StateWrapper`` stack of that grid and the ship board (1 on ship cells),
(2, size, size) float32.

The paper's ceiling for Battleship is not a trained agent but the mean return of an optimal belief policy (Berry
2011; the authors' ``scripts/baselines/battleship_optimal.py``).

Event–recall: whether the shot at a cell hit is seen at t_e ≥ 1 (the hit bit after the shot at t_e − 1) and shapes
every later shot, from t_e + 1 up to the last shot: ξ = t_r − t_e + 1 ∈ [2, max_steps − 1]; with the mask
respected the last shot is at t ≤ size² − 1, so ξ ≤ size² − 1 (99 at 10 × 10).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.pobax.limits import MAX_STEPS, truncation

#: The authors' ships per board size (``get_env``: battleship_10, battleship_5, battleship_3).
SHIPS: dict[int, tuple[int, ...]] = {10: (5, 4, 3, 2), 5: (3, 2), 3: (2,)}
#: The authors' ``hits_misses`` codes.
UNFIRED, MISS, HIT = 0, 1, 2

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "size",
        "choice",
        10,
        choices=tuple(SHIPS),
        doc="the board is size x size; ships (5, 4, 3, 2) at 10, (3, 2) at 5, (2,) at 3 (the authors' configs)",
    ),
    Param("dense_reward", "bool", False, doc="reward = the hit bit only (the authors' option, off in the benchmark)"),
    MAX_STEPS,
)

_POSE_STREAM, _PLACE_STREAM = 1, 2


def placements(size: int, length: int, horizontal: bool) -> np.ndarray:
    """Every placement of a ship of ``length`` on a size x size board in one orientation, as (count, size²) bools."""
    out = []
    for row in range(size if horizontal else size - length + 1):
        for col in range(size - length + 1 if horizontal else size):
            cells = np.zeros((size, size), dtype=bool)
            if horizontal:
                cells[row, col : col + length] = True
            else:
                cells[row : row + length, col] = True
            out.append(cells.ravel())
    return np.array(out)


def end_reward(size: int) -> float:
    """The reward of the finishing shot: rows * cols."""
    return float(size * size)


class BattleshipCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, size: int, dense_reward: bool, max_steps: int):
        super().__init__(num_envs)
        self.size = int(size)
        self.ships = SHIPS[self.size]
        self.cells = self.size * self.size
        self.ship_cells = sum(self.ships)
        self.dense_reward = bool(dense_reward)
        self.max_steps = int(max_steps)
        # Per ship: its placements, horizontal then vertical, as float32 (count, cells) for one matrix product.
        self._placements = [
            (placements(self.size, n, True).astype(np.float32), placements(self.size, n, False).astype(np.float32))
            for n in self.ships
        ]
        self.board = np.zeros((num_envs, self.cells), dtype=bool)
        self.shots = np.zeros((num_envs, self.cells), dtype=np.int8)  # UNFIRED / MISS / HIT per cell
        self.hits = np.zeros(num_envs, dtype=np.int64)
        self.hit = np.zeros(num_envs, dtype=np.float32)  # the last shot hit a new ship cell
        self._rows = np.arange(num_envs)
        self.action_space = gym.spaces.Discrete(self.cells)
        partial = {
            "hit": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
            "action_mask": gym.spaces.MultiBinary(self.cells),
        }
        grid = gym.spaces.Box(-1.0, 1.0, (self.size, self.size), np.float32)
        self.obs_spaces = {
            "partial": gym.spaces.Dict(partial),
            "oracle": gym.spaces.Dict({**partial, "oracle": grid}),
            "full": gym.spaces.Dict({**partial, "state": gym.spaces.Box(-1.0, 1.0, (2, self.size, self.size))}),
        }
        self.oracle_dim = self.cells

    def _new_episodes(self, idx):
        m = idx.shape[0]
        board = np.zeros((m, self.cells), dtype=bool)
        for i, (horizontal, vertical) in enumerate(self._placements):
            pose = rng.uniform(self.keys[idx], self.episode[idx], i, _POSE_STREAM) < 0.5  # True: horizontal
            u = rng.uniform(self.keys[idx], self.episode[idx], i, _PLACE_STREAM)
            for options, rows in ((horizontal, pose), (vertical, ~pose)):
                if not rows.any():
                    continue
                free = (board[rows].astype(np.float32) @ options.T) == 0  # (envs, placements): no overlap
                count = free.sum(axis=1)
                k = np.minimum((u[rows] * count).astype(np.int64), count - 1)  # the k-th free placement
                chosen = np.argmax(np.cumsum(free, axis=1) > k[:, None], axis=1)
                board[rows] |= options[chosen].astype(bool)
        self.board[idx] = board
        self.shots[idx] = UNFIRED
        self.hits[idx] = 0
        self.hit[idx] = 0.0

    def step(self, actions, idx=None):
        rows = self._rows if idx is None else idx
        ship = self.board[rows, actions]
        new_hit = ship & (self.shots[rows, actions] != HIT)
        self.shots[rows, actions] = np.where(ship, HIT, MISS)
        hits = self.hits[rows] + new_hit
        self.hits[rows] = hits
        self.hit[rows] = new_hit
        terminated = hits == self.ship_cells
        if self.dense_reward:
            reward = new_hit.astype(np.float64)
        else:
            reward = np.where(terminated, end_reward(self.size), -1.0)
        t = self.t[rows] + 1
        self.t[rows] = t
        self.success[rows] = terminated
        return reward, terminated, truncation(t, terminated, self.max_steps)

    def _grid(self, rows) -> np.ndarray:
        shots = self.shots[rows]
        grid = (shots == HIT).astype(np.float32) - (shots == MISS)
        return grid.reshape(-1, self.size, self.size)

    def action_mask(self, idx=None) -> np.ndarray:
        rows = self._rows if idx is None else idx
        return (self.shots[rows] == UNFIRED).astype(np.int8)

    def observe(self, variant, idx=None):
        rows = self._rows if idx is None else idx
        obs: dict[str, np.ndarray] = {"hit": self.hit[rows, None].copy(), "action_mask": self.action_mask(rows)}
        if variant == "oracle":
            obs["oracle"] = self._grid(rows)
        elif variant == "full":
            board = self.board[rows].reshape(-1, self.size, self.size).astype(np.float32)
            obs["state"] = np.stack([self._grid(rows), board], axis=1)
        return obs

    def oracle(self, idx=None):
        rows = self._rows if idx is None else idx
        return self._grid(rows)

    def render_ansi(self, i: int) -> str:
        symbols = {UNFIRED: ".", MISS: "o", HIT: "X"}
        shots, board = self.shots[i].reshape(self.size, self.size), self.board[i].reshape(self.size, self.size)
        lines = [
            "".join("s" if (s == UNFIRED and b) else symbols[int(s)] for s, b in zip(srow, brow, strict=True))
            for srow, brow in zip(shots, board, strict=True)
        ]
        return "\n".join(lines) + f"\nt={self.t[i]}/{self.max_steps} hits={self.hits[i]}/{self.ship_cells}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The board: cells not fired at dark (ship cells dim blue: hidden from the agent), misses grey, hits red;
        the step count t in the top-left corner."""
        s = self.size
        c = draw.cell_size(s, 320, 8, 48)
        m = max(c // 4, 4)
        top = m + 12
        canvas = draw.Canvas(s * c + top + m, s * c + 2 * m)
        colors = {UNFIRED: draw.WALL, MISS: draw.FLOOR, HIT: draw.BAD}
        for cell in range(self.cells):
            row, col = divmod(cell, s)
            shot = int(self.shots[i, cell])
            color = draw.HIDDEN if (shot == UNFIRED and self.board[i, cell]) else colors[shot]
            x0, y0 = m + col * c, top + row * c
            canvas.rect(x0 + 1, y0 + 1, x0 + c - 1, y0 + c - 1, color)
        canvas.text(m, 2, str(int(self.t[i])), draw.WHITE, scale=2)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class Battleship(NativeEnv):
    """POBAX's Battleship (single environment). Kwargs: :data:`PARAMS`. ``info["action_mask"]``: the legal shots."""

    core_cls = BattleshipCore
    core: BattleshipCore

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        info["action_mask"] = self.core.action_mask(self._idx)[0]
        return info


class BattleshipVector(NativeVectorEnv):
    """POBAX's Battleship, N environments in one numpy step; ``info["action_mask"]``: (N, size²) int8."""

    core_cls = BattleshipCore
    core: BattleshipCore

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        info["action_mask"] = self.core.action_mask()
        info["_action_mask"] = np.ones(self.num_envs, dtype=bool)
        return info
