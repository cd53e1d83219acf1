"""POPGym (Morad et al., ICLR 2023) tasks behind ``POPGym/<Task><Easy|Medium|Hard>-v0``.

The wrapper instantiates popgym 1.0.7's environment class with the difficulty's constructor arguments
(``catalogue.popgym.DIFFICULTY_KWARGS``; a family's horizon kwarg, ``HORIZON_KWARGS``, overrides its preset) and
owns it; popgym's bare ``popgym-*`` IDs are never used. Every variant is one flat float32 ``Box`` (discrete parts
one-hot, as RLlib's preprocessor fed them to the paper's models):

- ``partial``: the paper's experiment observation, ``Antialias(PreviousAction(env))``:
  ``[popgym observation | previous action | is_t0]``. The previous action at reset is the null action
  (0 or the lowest action), and ``is_t0`` = 1 only on the reset observation (it is what tells the null
  action from a real action 0, and it is RepeatFirst's "remember this" indicator).
- ``oracle``: ``partial`` followed by exactly what a perfect memory would hold (table below); the same vector
  is ``info["oracle"]`` at reset and at every step, in every variant.
- ``full``: popgym's Markov state ``get_state()`` (``state_space``) flattened; for the Labyrinths the agent
  position (row, column, scaled to [0, 1]) is appended because popgym's state lacks it.

What the oracle holds (the information a memoryless policy would have to remember):

=========================== ===================================================================================
family                      oracle (appended at the end; one-hot blocks are 0 where nothing is known yet)
=========================== ===================================================================================
RepeatFirst                 suit of the first card, one-hot (4)
RepeatPrevious              suits of the last k dealt cards, oldest first, one-hot (4k); slot 0 is the answer
Autoencode                  suits still to be recited, next first (LIFO), one-hot (4N, N = 52 x decks)
CountRecall                 running count of each value dealt so far / max count (incl. the current card)
PositionOnlyCartPole        the dropped velocities [x_dot, theta_dot]
VelocityOnlyCartPole        the dropped positions [x, theta]
NoisyPositionOnlyCartPole   the noiseless state [x, x_dot, theta, theta_dot]
PositionOnlyPendulum        the dropped angular velocity [theta_dot]
NoisyPositionOnlyPendulum   the noiseless state [cos theta, sin theta, theta_dot]
MultiarmedBandit            per arm: pulls / L, then payouts / L (the empirical arm statistics)
HigherLower                 count of each rank dealt so far / (4 x decks) (card counting)
Concentration               each card's value if it has ever been face up, else "face-down" (obs encoding)
Battleship                  each cell's shot result so far: unknown / miss / hit, one-hot (3 B^2)
MineSweeper                 each cell: unrevealed, or revealed with its neighbour count, one-hot
LabyrinthExplore / Escape   popgym's visited map (unvisited = hidden), one-hot, + the agent position
=========================== ===================================================================================

For the games and the bandit nothing is known at reset, so their oracle starts as the same "unknown" vector
for every seed; it differs between seeds as soon as something has been observed.

Actions are validated (wrong shape, out of the space, non-finite: ``ValueError`` naming the action), since
popgym does not check. ``info["success"]`` is set at the end of an episode for the tasks that define it:
Battleship / Concentration / MineSweeper (board cleared), the Labyrinths (maze explored / exit reached) and
the CartPoles (survived to the time limit).

Labyrinth mazes come from ``mazelib``, which draws from Python's and numpy's *global* generators; the
wrapper seeds each maze from its own generator and restores the global generators afterwards, so two
environments never disturb each other (or anything else that uses the global RNG) and a seed gives a maze.
"""

from __future__ import annotations

import importlib
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue import get as catalogue_entry
from membench_envs.catalogue.popgym import HORIZON_KWARGS, POPGYM_CLASSES, constructor_kwargs, env_id, params
from membench_envs.envs.core import draw
from membench_envs.envs.core.native import check_can_step, check_render_mode
from membench_envs.envs.core.params import check_kwargs, check_seed
from membench_envs.envs.core.wrap import Flattener, check_action, null_action


def _one_hot_rows(values: np.ndarray, n: int, valid: np.ndarray | None = None) -> np.ndarray:
    """Rows of one-hot vectors (len(values) x n) flattened; rows where ``valid`` is False stay zero."""
    out = np.zeros((len(values), n), dtype=np.float32)
    idx = np.arange(len(values))
    if valid is None:
        out[idx, values] = 1.0
    else:
        out[idx[valid], np.asarray(values)[valid]] = 1.0
    return out.ravel()


class POPGymTask(gym.Env):
    """One POPGym task (``family`` at ``difficulty``) with the membench observation variants.

    What differs between families (the oracle, success, the picture, the mazes' seeding) is one row of
    :data:`FAMILIES`; this class is the same for all of them."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 4}  # noqa: RUF012
    observation_space: gym.spaces.Box  # every variant is one flat float32 vector
    # per-family state, set by reset or step (declared, so a checkpoint's copy restores into a fresh env)
    _hit_mine: bool  # MineSweeper: the last step hit a mine
    _pulls: np.ndarray  # MultiarmedBandit: pulls per arm
    _payouts: np.ndarray  # MultiarmedBandit: payouts per arm
    _seen: np.ndarray  # Concentration: cards ever face up

    def __init__(self, family: str, difficulty: str, render_mode: str | None = None, **kwargs: Any):
        """``family`` and ``difficulty`` are set by the ID's registration; ``kwargs``: ``obs_variant`` and the
        family's horizon kwarg (``catalogue.popgym.HORIZON_KWARGS``: RepeatFirst's ``num_decks``)."""
        p = check_kwargs("POPGymTask", params(family), {"family": family, "difficulty": difficulty, **kwargs})
        self.obs_variant = p["obs_variant"]
        self.render_mode = check_render_mode(render_mode, ("rgb_array",))
        self.family, self.difficulty = family, difficulty
        self._rules = FAMILIES[family]
        if self._rules.render_fps != self.metadata["render_fps"]:  # smooth motion: videos at the simulation rate
            self.metadata = {**self.metadata, "render_fps": self._rules.render_fps}
        self.env_id = env_id(family, difficulty)
        require("popgym", "popgym", env_id=self.env_id)
        if self._rules.maze:
            require("mazelib", "popgym", env_id=self.env_id)
        module, cls = POPGYM_CLASSES[family].split(":")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # the mazes' "solvable without memory" warning
            ctor = constructor_kwargs(family, difficulty, p)
            self.inner = getattr(importlib.import_module(module), cls)(**ctor)

        inner = self.inner
        self.action_space = inner.action_space
        self._obs_flat = Flattener(inner.observation_space)
        self._act_flat = Flattener(inner.action_space)
        self._state_flat = Flattener(inner.state_space)
        self._null_action = null_action(inner.action_space)
        lo, hi = self._rules.oracle_bounds(self)
        self._oracle_low = np.asarray(lo, dtype=np.float32)
        self._oracle_high = np.asarray(hi, dtype=np.float32)

        self._partial_size = self._obs_flat.size + self._act_flat.size + 1
        lo = np.concatenate([self._obs_flat.low, self._act_flat.low, [0.0]]).astype(np.float32)
        hi = np.concatenate([self._obs_flat.high, self._act_flat.high, [1.0]]).astype(np.float32)
        if self.obs_variant == "partial":
            self.observation_space = gym.spaces.Box(lo, hi, dtype=np.float32)
        elif self.obs_variant == "oracle":
            self.observation_space = gym.spaces.Box(
                np.concatenate([lo, self._oracle_low]), np.concatenate([hi, self._oracle_high]), dtype=np.float32
            )
        else:
            extra = 2 if self._rules.maze else 0
            self.observation_space = gym.spaces.Box(
                np.concatenate([self._state_flat.low, np.zeros(extra)]).astype(np.float32),
                np.concatenate([self._state_flat.high, np.ones(extra)]).astype(np.float32),
                dtype=np.float32,
            )
        self._started = False
        self._done = False
        self._maze_rng: np.random.Generator | None = None
        horizon = HORIZON_KWARGS.get(family)
        if horizon is not None and horizon.episode_length is not None:
            T: int | None = horizon.episode_length(ctor[horizon.name])
        else:
            T = catalogue_entry(self.env_id).episode_length
        self._t, self._horizon = 0, T or 1  # for render()'s time bar
        self._last_obs: Any = None
        self._last_success: bool | None = None

    def _oracle(self) -> np.ndarray:
        return self._rules.oracle(self)

    def _position(self) -> np.ndarray:
        """The agent's (row, column) in a maze, scaled to [0, 1]."""
        y, x = self.inner.position
        h, w = self.inner.maze.grid.shape
        return np.array([y / (h - 1), x / (w - 1)], dtype=np.float32)

    # --- observation -------------------------------------------------------------------------------------
    def _observe(self, obs: Any, prev_action: Any, is_t0: bool, oracle: np.ndarray) -> np.ndarray:
        if self.obs_variant == "full":
            state = self._state_flat.encode(self.inner.get_state())
            if self._rules.maze:  # popgym's state lacks the agent position
                state = np.concatenate([state, self._position()])
            return state
        size = self.observation_space.shape[0]
        out = np.empty(size, dtype=np.float32)
        self._obs_flat.encode(obs, out, 0)
        self._act_flat.encode(prev_action, out, self._obs_flat.size)
        out[self._partial_size - 1] = 1.0 if is_t0 else 0.0
        if self.obs_variant == "oracle":
            out[self._partial_size :] = oracle
        return out

    # --- gymnasium API ---------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, f"{self.env_id}.reset")
        super().reset(seed=seed)
        if self._rules.maze:
            obs = self._reset_maze(seed)
        else:
            obs, _ = self.inner.reset(seed=seed)
        if self.family == "MultiarmedBandit":  # the oracle's arm statistics
            self._pulls = np.zeros(self.inner.num_bandits, dtype=np.float64)
            self._payouts = np.zeros(self.inner.num_bandits, dtype=np.float64)
        elif self.family == "Concentration":  # the oracle's cards ever face up
            self._seen = np.zeros(self.inner.deck.num_cards, dtype=bool)
            # popgym's step sets an unused `hand = []` after each pair; set here too, the checkpoint of a stepped
            # env restores into a fresh one (which restores only attributes the target has)
            self.inner.hand = []
        self._started, self._done = True, False
        self._t, self._last_obs, self._last_success = 0, obs, None
        oracle = self._oracle()
        return self._observe(obs, self._null_action, True, oracle), {"oracle": oracle}

    def _reset_maze(self, seed: int | None):
        if seed is not None:
            self._maze_rng = np.random.default_rng(seed)
        elif self._maze_rng is None:
            self._maze_rng = np.random.default_rng(self.np_random.integers(2**63))
        maze_seed = int(self._maze_rng.integers(2**31 - 1))
        py_state, np_state = random.getstate(), np.random.get_state()
        try:
            obs, _ = self.inner.reset(seed=maze_seed)
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
        return obs

    def step(self, action):
        check_can_step(self._started, self._done)
        a = check_action(self.action_space, action)
        f = self.family
        if f == "MineSweeper":  # for success: the game also ends on a mine
            self._hit_mine = bool(self.inner.hidden_grid[tuple(a)] == 1)  # HiddenSquare.MINE ends the game
        obs, reward, terminated, truncated, _ = self.inner.step(a)
        terminated, truncated = bool(terminated), bool(truncated)
        if f == "MultiarmedBandit":
            self._pulls[a] += 1
            self._payouts[a] += int(obs)
        elif f == "Concentration":
            self._seen[self.inner.last_in_play_idx] = True
        oracle = self._oracle()
        info: dict[str, Any] = {"oracle": oracle}
        self._done = terminated or truncated
        self._t, self._last_obs = self._t + 1, obs
        if self._done:
            success = self._rules.success(self, terminated, truncated)
            if success is not None:
                info["success"] = success
            self._last_success = success
        return self._observe(obs, a, False, oracle), float(reward), terminated, truncated, info

    # --- rendering ---------------------------------------------------------------------------------------
    def render(self):
        """``"rgb_array"``: a uint8 (H, W, 3) picture whose size is fixed per ID (see :meth:`_draw_frame`); None
        without a render mode. Call it after ``reset``."""
        if self.render_mode != "rgb_array":
            return None
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before render()")
        return self._draw_frame()

    def _draw_frame(self) -> np.ndarray:
        """The family's picture (:attr:`Family.picture`: boards for the board games and the Labyrinths, the cart and
        pole or the pendulum for the control tasks, strips of the observation and the oracle for the card and bandit
        tasks) with t / T along the bottom and a green / red border once the episode is over (for the tasks that
        define success; grey otherwise)."""
        canvas = self._rules.picture(self)
        canvas.progress(self._t / self._horizon)
        if self._done:
            if self._last_success is None:
                canvas.outline(0, 0, canvas.width, canvas.height, draw.FLOOR, 3)
            else:
                canvas.border(True, self._last_success)
        return canvas.image()


# --- what a perfect memory holds, per family (the table in the module docstring) -------------------------------
def _unit(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of n values in [0, 1]."""
    return np.zeros(n), np.ones(n)


def _unbounded(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(n, -np.inf), np.full(n, np.inf)


def _first_suit(task: POPGymTask) -> np.ndarray:
    out = np.zeros(4, dtype=np.float32)
    out[int(task.inner.card)] = 1.0
    return out


def _last_k_suits(task: POPGymTask) -> np.ndarray:
    e = task.inner
    hand = e.deck["player"][-e.k :]
    suits = np.zeros(e.k, dtype=np.int64)
    valid = np.zeros(e.k, dtype=bool)
    if hand:
        suits[e.k - len(hand) :] = e.deck.suits_idx[hand]
        valid[e.k - len(hand) :] = True
    return _one_hot_rows(suits, 4, valid)


def _suits_to_recite(task: POPGymTask) -> np.ndarray:
    e = task.inner
    n = e.deck.num_cards
    stack = e.deck["system"][::-1]  # next card to recite first
    suits = np.zeros(n, dtype=np.int64)
    valid = np.zeros(n, dtype=bool)
    if stack:
        suits[: len(stack)] = e.deck.suits_idx[stack]
        valid[: len(stack)] = True
    return _one_hot_rows(suits, 4, valid)


def _revealed_cards(task: POPGymTask) -> np.ndarray:
    e = task.inner
    board = np.full(e.deck.num_cards, e.facedown_card, dtype=np.int64)
    board[task._seen] = e.state[task._seen]
    return task._obs_flat.encode(board)


def _shot_results(task: POPGymTask) -> np.ndarray:
    e = task.inner
    result = (e.guesses.astype(np.int64) * (1 + e.board.astype(np.int64))).ravel()  # 0 ? / 1 miss / 2 hit
    return _one_hot_rows(result, 3)


def _minesweeper_cells(task: POPGymTask) -> int:
    return int(task.inner.observation_space.n) + 1


def _revealed_counts(task: POPGymTask) -> np.ndarray:
    e = task.inner
    viewed = (e.hidden_grid == 2).ravel()  # HiddenSquare.VIEWED
    cell = np.where(viewed, 1 + e.neighbor_grid.ravel().astype(np.int64), 0)
    return _one_hot_rows(cell, _minesweeper_cells(task))


def _visited_map(task: POPGymTask) -> np.ndarray:
    out = np.empty(task._state_flat.size + 2, dtype=np.float32)
    task._state_flat.encode(task.inner.get_state(), out, 0)
    out[-2:] = task._position()
    return out


# --- success, per family ---------------------------------------------------------------------------------------
def _undefined(task: POPGymTask, terminated: bool, truncated: bool) -> bool | None:
    return None


def _survived(task: POPGymTask, terminated: bool, truncated: bool) -> bool | None:
    return truncated and not terminated


def _reached(task: POPGymTask, terminated: bool, truncated: bool) -> bool | None:
    return terminated


def _fleet_sunk(task: POPGymTask, terminated: bool, truncated: bool) -> bool | None:
    return bool(task.inner.hits == task.inner.needed_hits)


def _all_face_up(task: POPGymTask, terminated: bool, truncated: bool) -> bool | None:
    return bool(len(task.inner.deck["face_up"]) == len(task.inner.deck))


def _board_cleared(task: POPGymTask, terminated: bool, truncated: bool) -> bool | None:
    return terminated and not task._hit_mine


# --- pictures, per family --------------------------------------------------------------------------------------


def _grid_canvas(rows: int, cols: int, target: int = 384) -> tuple[draw.Canvas, int, int]:
    c = draw.cell_size(max(rows, cols), target, 6, 40)
    m = 8
    return draw.Canvas(rows * c + 2 * m + 8, cols * c + 2 * m), c, m


def _battleship_picture(task: POPGymTask) -> draw.Canvas:
    """Unknown cells blue (ship cells a little lighter: the hidden board), misses grey, hits red."""
    e = task.inner
    n = e.board_size
    canvas, c, m = _grid_canvas(n, n)
    for r in range(n):
        for k in range(n):
            ship, shot = bool(e.board[r, k]), bool(e.guesses[r, k])
            if shot:
                color = draw.AGENT if ship else draw.FLOOR
            else:
                color = draw.dim(draw.HIDDEN, 0.9) if ship else draw.dim(draw.HIDDEN, 0.55)
            canvas.rect(m + k * c + 1, m + r * c + 1, m + (k + 1) * c - 1, m + (r + 1) * c - 1, color)
    return canvas


def _minesweeper_picture(task: POPGymTask) -> draw.Canvas:
    """Revealed cells light with their neighbour count, hidden cells blue, hidden mines dim red."""
    e = task.inner
    rows, cols = (int(d) for d in e.dims)
    canvas, c, m = _grid_canvas(rows, cols)
    for r in range(rows):
        for k in range(cols):
            hidden = int(e.hidden_grid[r, k])  # 0 clear, 1 mine, 2 viewed
            x0, y0 = m + k * c, m + r * c
            if hidden == 2:
                canvas.rect(x0 + 1, y0 + 1, x0 + c - 1, y0 + c - 1, draw.FLOOR)
                canvas.text_centered(
                    x0 + c / 2, y0 + c / 2, str(int(e.neighbor_grid[r, k])), draw.TEXT, max(c // 12, 1)
                )
            else:
                color = draw.dim(draw.BAD, 0.6) if hidden == 1 else draw.dim(draw.HIDDEN, 0.7)
                canvas.rect(x0 + 1, y0 + 1, x0 + c - 1, y0 + c - 1, color)
    return canvas


def _concentration_picture(task: POPGymTask) -> draw.Canvas:
    """Cards in rows of 13: face up white with their value, face down blue with the hidden value dim."""
    e = task.inner
    n = int(e.deck.num_cards)
    cols, w, h, gap, m = 13, 22, 28, 4, 8
    rows = -(-n // cols)
    canvas = draw.Canvas(rows * (h + gap) - gap + 2 * m + 8, cols * (w + gap) - gap + 2 * m)
    visible = np.asarray(e.get_obs())
    for j in range(n):
        x0, y0 = m + (j % cols) * (w + gap), m + (j // cols) * (h + gap)
        value = str(int(e.state[j]))
        if visible[j] != e.facedown_card:
            canvas.rect(x0, y0, x0 + w, y0 + h, draw.WHITE)
            canvas.text_centered(x0 + w / 2, y0 + h / 2, value, draw.TEXT, 2)
        else:
            canvas.rect(x0, y0, x0 + w, y0 + h, draw.dim(draw.HIDDEN, 0.7))
            canvas.text_centered(x0 + w / 2, y0 + h / 2, value, draw.dim(draw.WHITE, 0.5), 2)
    return canvas


def _maze_picture(task: POPGymTask) -> draw.Canvas:
    """Walls dark, unexplored floor grey, explored floor light, the exit green, the agent red."""
    e = task.inner
    grid = np.asarray(e.maze.grid)
    rows, cols = grid.shape
    canvas, c, m = _grid_canvas(rows, cols)
    explored = np.asarray(e.explored) == 1
    for r in range(rows):
        for k in range(cols):
            if grid[r, k] == 1:
                continue  # obstacle: background
            color = draw.FLOOR if explored[r, k] else draw.dim(draw.FLOOR, 0.55)
            if grid[r, k] == 3:  # Cell.GOAL (the exit of LabyrinthEscape)
                color = draw.GOOD
            canvas.rect(m + k * c, m + r * c, m + (k + 1) * c, m + (r + 1) * c, color)
    y, x = e.position
    canvas.disc(m + (x + 0.5) * c, m + (y + 0.5) * c, c * 0.4, draw.AGENT)
    return canvas


def _cartpole_picture(task: POPGymTask) -> draw.Canvas:
    """The track (its ends are the failure bounds), the cart and the pole at the true (noiseless) state."""
    e = task.inner
    width, height = 480, 200
    canvas = draw.Canvas(height, width)
    x, _, theta, _ = (float(v) for v in e.state)
    bound = float(e.x_threshold)
    scale = (width - 80) / (2 * bound)
    ground = height - 50
    canvas.rect(40, ground, width - 40, ground + 3, draw.WALL)
    cx = width / 2 + x * scale
    canvas.rect(cx - 25, ground - 18, cx + 25, ground, draw.HIDDEN)
    pole = 2 * float(e.length) * scale
    canvas.line(cx, ground - 18, cx + pole * np.sin(theta), ground - 18 - pole * np.cos(theta), draw.AGENT, 7)
    canvas.disc(cx, ground - 18, 4, draw.FLOOR)
    return canvas


def _pendulum_picture(task: POPGymTask) -> draw.Canvas:
    """The pendulum at its true angle (0 = upright), drawn from its pivot."""
    e = task.inner
    size = 240
    canvas = draw.Canvas(size + 8, size)
    theta = float(e.state[0])
    cx = cy = size / 2
    r = size * 0.38
    canvas.line(cx, cy, cx + r * np.sin(theta), cy - r * np.cos(theta), draw.AGENT, 12)
    canvas.disc(cx, cy, 5, draw.FLOOR)
    return canvas


def _strips_picture(task: POPGymTask) -> draw.Canvas:
    """Two strips of cells: the popgym observation (top) and the oracle, what must be remembered (bottom; green for
    positive values, red for negative)."""
    obs = task._obs_flat.encode(task._last_obs)
    oracle = task._oracle()
    per_row = 32
    c, gap, m = 14, 8, 8

    def rows(n: int) -> int:
        return max(-(-n // per_row), 1)

    width = min(max(obs.size, oracle.size), per_row) * c + 2 * m
    height = (rows(obs.size) + rows(oracle.size)) * c + gap + 2 * m + 8
    canvas = draw.Canvas(height, max(width, 64))
    y = m
    for values, lo, hi in (
        (obs, task._obs_flat.low, task._obs_flat.high),
        (oracle, task._oracle_low, task._oracle_high),
    ):
        span = np.where(np.isfinite(hi - lo) & (hi - lo > 0), np.maximum(np.abs(lo), np.abs(hi)), np.inf)
        level = np.where(np.isfinite(span), values / np.where(np.isfinite(span), span, 1), np.tanh(values))
        for j, v in enumerate(np.clip(level, -1.0, 1.0)):
            x0, y0 = m + (j % per_row) * c, y + (j // per_row) * c
            base = draw.GOOD if v >= 0 else draw.BAD
            color = tuple(int(30 + (b - 30) * abs(v)) for b in base)
            canvas.rect(x0, y0, x0 + c - 1, y0 + c - 1, color)
        y += rows(values.size) * c + gap
    return canvas


# --- the per-family table --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """What :class:`POPGymTask` does differently for one popgym family."""

    oracle_bounds: Callable[[POPGymTask], tuple[np.ndarray, np.ndarray]]
    """(low, high) of the oracle vector."""
    oracle: Callable[[POPGymTask], np.ndarray]
    """What a perfect memory holds: ``info["oracle"]`` and the end of the ``oracle`` observation."""
    success: Callable[[POPGymTask, bool, bool], bool | None] = _undefined
    """``info["success"]`` at the end of an episode, from (terminated, truncated); None where it is not defined."""
    picture: Callable[[POPGymTask], draw.Canvas] = _strips_picture
    render_fps: int = 4
    maze: bool = False
    """A mazelib maze: needs mazelib, is drawn from the env's own generator, and the ``full`` state gets the agent
    position appended (popgym's state lacks it)."""


def _pendulum_true_state(task: POPGymTask) -> np.ndarray:
    th, thdot = task.inner.state
    return np.array([np.cos(th), np.sin(th), thdot], dtype=np.float32)


_CARTPOLE: dict[str, Any] = {"success": _survived, "picture": _cartpole_picture, "render_fps": 50}
_PENDULUM: dict[str, Any] = {"picture": _pendulum_picture, "render_fps": 20}
_LABYRINTH = Family(lambda t: _unit(t._state_flat.size + 2), _visited_map, _reached, _maze_picture, maze=True)

#: Every popgym family (``catalogue.popgym.POPGYM_CLASSES``): its oracle, success, picture and frame rate.
FAMILIES: dict[str, Family] = {
    "RepeatFirst": Family(lambda t: _unit(4), _first_suit),
    "RepeatPrevious": Family(lambda t: _unit(4 * t.inner.k), _last_k_suits),
    "Autoencode": Family(lambda t: _unit(4 * t.inner.deck.num_cards), _suits_to_recite),
    "CountRecall": Family(
        lambda t: _unit(t.inner.num_distinct_cards),
        lambda t: (t.inner.counts / t.inner.max_card_count).astype(np.float32),
    ),
    "PositionOnlyCartPole": Family(
        lambda t: _unbounded(2),  # the dropped velocities
        lambda t: np.array([t.inner.state[1], t.inner.state[3]], dtype=np.float32),
        **_CARTPOLE,
    ),
    "VelocityOnlyCartPole": Family(
        lambda t: _unbounded(2),  # the dropped positions
        lambda t: np.array([t.inner.state[0], t.inner.state[2]], dtype=np.float32),
        **_CARTPOLE,
    ),
    "NoisyPositionOnlyCartPole": Family(
        lambda t: _unbounded(4),  # the noiseless state
        lambda t: np.asarray(t.inner.state, dtype=np.float32).copy(),
        **_CARTPOLE,
    ),
    "PositionOnlyPendulum": Family(
        lambda t: (np.array([-t.inner.max_speed]), np.array([t.inner.max_speed])),
        lambda t: np.array([t.inner.state[1]], dtype=np.float32),
        **_PENDULUM,
    ),
    "NoisyPositionOnlyPendulum": Family(
        lambda t: (np.array([-1.0, -1.0, -t.inner.max_speed]), np.array([1.0, 1.0, t.inner.max_speed])),
        _pendulum_true_state,
        **_PENDULUM,
    ),
    "MultiarmedBandit": Family(
        lambda t: _unit(2 * t.inner.num_bandits),  # pulls / L, then payouts / L per arm
        lambda t: (np.concatenate([t._pulls, t._payouts]) / t.inner.max_episode_length).astype(np.float32),
    ),
    "HigherLower": Family(lambda t: _unit(13), lambda t: (t.inner.state / (4 * t.inner.num_decks)).astype(np.float32)),
    "Concentration": Family(
        lambda t: (t._obs_flat.low, t._obs_flat.high), _revealed_cards, _all_face_up, _concentration_picture
    ),
    "Battleship": Family(lambda t: _unit(3 * t.inner.board_size**2), _shot_results, _fleet_sunk, _battleship_picture),
    "MineSweeper": Family(
        lambda t: _unit(int(np.prod(t.inner.dims)) * _minesweeper_cells(t)),
        _revealed_counts,
        _board_cleared,
        _minesweeper_picture,
    ),
    "LabyrinthExplore": _LABYRINTH,
    "LabyrinthEscape": _LABYRINTH,
}
