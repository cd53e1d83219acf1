"""Passive T-Maze: the memory-classification paper's variant (Appendix F) and Ni et al.'s classic one.

Geometry. The corridor has cells x = 0 … L; the junction is x = L, with the two goal arms at y = +1 (up)
and y = −1 (down). The agent starts at x = 0.

Actions (``action_order="code"``, the default): 0 = right (+x, towards the junction), 1 = up, 2 = left (−x,
away from the junction), 3 = down: the authors' ``action_mapping = [[1, 0], [0, 1], [-1, 0], [0, -1]]`` in Ni
et al.'s T-Maze code and in MIKASA-Base's copies of it. ``action_order="paper"``: 0 = left, 1 = up, 2 = right,
3 = down, the order in which the memory paper lists the actions ("left, up, right, down"). Walls stop a move
(the agent stays in place): left at x = 0, right at the junction, up/down anywhere in the corridor except the
junction.

Timing. The optimal agent walks right L times (steps t = 0 … L−1) and turns at t = L, so the episode
lasts at most T = L + 1 steps. Turning at the junction ends the episode; so does reaching T steps
without turning (a failure; ``terminated`` because the horizon is part of the task).

Observation (``partial``): o = [y, clue, flag, noise]
  - y: the vertical coordinate (0 in the corridor, ±1 in an arm, i.e. only in the final observation);
  - clue: ±1 (+1: the goal is up) in the reset observation only, 0 afterwards;
  - flag: 1 in the observation on which the turn must be taken (the agent stands at the junction, one
    step before it can enter an arm), 0 otherwise;
  - noise: a uniform random integer in {−1, 0, +1}, redrawn every step.
``oracle`` appends the goal (±1) to every observation; ``full`` is the Markov state
[x / L, y, goal, t / T].

Reward. Sparse: +1 for the correct turn, 0 otherwise. Dense (``penalty=True``): additionally −1/(T−1) on
every non-final step after which the agent lags behind the optimal schedule (x < t), as in Ni et al.'s T-Maze,
which the paper's environment modifies. The paper words it as a penalty "for each step taken"; a penalty on
literally every step would be a constant (every episode lasts exactly T steps, since the junction cannot be
reached before t = L), so it could not turn the sparse reward into a dense one. The optimal return is 1 in
both reward modes; a policy that never moves right collects −1 (all T−1 non-final steps lag).

Classic T-Maze (:class:`TMazeClassic`; Ni et al.'s ``TMazeClassicPassive``, registered by MIKASA-Base as
``T-Maze-v0`` / ``T-Maze-Dense-v0``): the same corridor, timing, actions and rewards (Ni et al.'s dense mode is
``penalty = −1/L = −1/(T−1)`` on the same lagging steps), but the "ambiguous position" observation
``o = [at_junction, clue_or_y]``:
  - at_junction: 1 when x = L (the junction, or an arm in the final observation), else 0;
  - clue_or_y: the clue (±1) in the reset observation, y (0 at the junction, ±1 in an arm) when x = L,
    0 elsewhere.
There is no flag and no noise channel, and the corridor cells all look alike. ``oracle`` appends the goal;
``full`` is the same Markov state as above. (Upstream the episode always runs T steps; here a turn ends it, which
is the same thing, since the junction cannot be reached before t = L = T − 1.)

Event–recall: one pair (the clue at t = 0, the turn at t = T−1): ξ = T, K̄ = T − 1.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: Action orders: per action, (dx, dy). "code" is the authors' (Ni et al.; MIKASA-Base), "paper" the memory paper's
#: listing "left, up, right, down".
ACTION_ORDERS = {
    "code": ((1, 0), (0, 1), (-1, 0), (0, -1)),
    "paper": ((-1, 0), (0, 1), (1, 0), (0, -1)),
}
#: The longest corridor: T = 100,001 steps is far past every published sweep (Ni et al. reach L = 1500), and a
#: picture of the maze or an agent's per-episode buffers stay within memory.
MAX_CORRIDOR = 100_000
#: The kwargs of both T-Mazes (the catalogue's IDs set ``corridor_length`` and ``penalty``).
PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "corridor_length",
        "int",
        10,
        low=1,
        high=MAX_CORRIDOR,
        doc="L: cells from the start to the junction (T = L + 1)",
    ),
    Param("penalty", "bool", False, doc="dense reward: -1/(T-1) on each step that lags behind the optimal one"),
    Param(
        "action_order",
        "choice",
        "code",
        choices=tuple(ACTION_ORDERS),
        doc="'code': 0 towards the junction, 1 up, 2 away, 3 down (authors' code); 'paper': left, up, right, down",
    ),
)


def episode_length(corridor_length: int) -> int:
    """T = L + 1: L steps to the junction, then the turn."""
    return corridor_length + 1


#: The default (authors' code) action order: 0 = right (towards the junction), 1 = up, 2 = left, 3 = down.
RIGHT, UP, LEFT, DOWN = 0, 1, 2, 3
_GOAL_STREAM, _NOISE_STREAM = 1, 2


class TMazeCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, corridor_length: int, penalty: bool, action_order: str):
        super().__init__(num_envs)
        self.L = int(corridor_length)
        self.T = episode_length(self.L)
        self.penalty = bool(penalty)
        self.action_order = action_order
        # Per action: the x move, and the y move (a turn; it only takes effect at the junction).
        moves = np.array(ACTION_ORDERS[action_order], dtype=np.int64)
        dx, dy = moves[:, 0], moves[:, 1]
        self.step_penalty = -1.0 / (self.T - 1) if self.penalty else 0.0
        self.x = np.zeros(num_envs, dtype=np.int64)
        self.y = np.zeros(num_envs, dtype=np.int64)
        self.goal = np.ones(num_envs, dtype=np.int64)
        # The noise of every step of the episode, drawn at its start (noise at step t = hash(key, episode, t)).
        self.noise_table = np.zeros((num_envs, self.T + 1), dtype=np.int64)
        self._rows = np.arange(num_envs)
        self._steps = np.arange(self.T + 1)[None, :]
        # The move of every (x, action) pair, indexed by x * 4 + action: the next x, and the arm entered
        # (+1 up, -1 down, 0 none: only a turn at the junction enters one).
        xs, acts = np.divmod(np.arange((self.L + 1) * 4), 4)
        self._next_x = np.clip(xs + dx[acts], 0, self.L)
        self._arm = np.where((dy[acts] != 0) & (xs == self.L), dy[acts], 0)
        self.action_space = gym.spaces.Discrete(4)
        self.obs_spaces = {
            "partial": gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
            "oracle": gym.spaces.Box(-1.0, 1.0, (5,), np.float32),
            "full": gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
        }
        self.oracle_dim = 1

    def _new_episodes(self, idx):
        self.x[idx] = 0
        self.y[idx] = 0
        self.goal[idx] = np.where(self.uniform(idx, _GOAL_STREAM, step=0) < 0.5, 1, -1)
        self.noise_table[idx] = rng.integers(
            self.keys[idx, None], self.episode[idx, None], self._steps, _NOISE_STREAM, -1, 2
        )

    def step(self, actions, idx=None):
        sl = slice(None) if idx is None else idx
        t = self.t[sl] + 1
        move = self.x[sl] * 4 + actions
        new_x = self._next_x[move]
        new_y = self._arm[move]  # != 0 exactly when the agent turns at the junction
        correct = new_y == self.goal[sl]  # (the goal is +-1, never 0)
        terminated = (new_y != 0) | (t >= self.T)
        if self.penalty:  # non-final steps after which the agent lags behind the optimal schedule
            reward = np.where(terminated, correct, np.where(new_x < t, self.step_penalty, 0.0))
        else:
            reward = correct.astype(np.float64)
        self.x[sl] = new_x
        self.y[sl] = new_y
        self.t[sl] = t
        self.success[sl] = correct
        return reward, terminated, np.zeros_like(terminated)

    def _noise(self, sl):
        rows = self._rows[sl]
        return self.noise_table[rows, self.t[rows]]

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        y = self.y[sl]
        n = y.shape[0]
        if variant == "full":
            out = np.empty((n, 4), dtype=np.float32)
            out[:, 0] = self.x[sl] / self.L
            out[:, 1] = y
            out[:, 2] = self.goal[sl]
            out[:, 3] = self.t[sl] / self.T
            return out
        out = np.empty((n, 5 if variant == "oracle" else 4), dtype=np.float32)
        out[:, 0] = y
        out[:, 1] = np.where(self.t[sl] == 0, self.goal[sl], 0)
        out[:, 2] = (self.x[sl] == self.L) & (y == 0)
        out[:, 3] = self._noise(sl)
        if variant == "oracle":
            out[:, 4] = self.goal[sl]
        return out

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return self.goal[sl, None].astype(np.float32)

    def render_ansi(self, i: int) -> str:
        top = [" "] * (self.L + 1)
        mid = ["."] * (self.L + 1)
        bot = [" "] * (self.L + 1)
        top[self.L] = "G" if self.goal[i] == 1 else "x"
        bot[self.L] = "G" if self.goal[i] == -1 else "x"
        row = {1: top, 0: mid, -1: bot}[int(self.y[i])]
        row[self.x[i]] = "A"
        return "\n".join("".join(r) for r in (top, mid, bot)) + f"\nt={self.t[i]}/{self.T}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The corridor (grey) with the two arms above and below the junction, the agent (red), the goal arm
        (bright green while the agent can see the clue, i.e. at t = 0, and once the episode is over; dim green
        otherwise), the junction outlined in yellow when the flag is on, and t / T along the bottom."""
        c = draw.cell_size(self.L + 1, 480, 3, 32)
        m = max(c // 2, 4)
        canvas = draw.Canvas(3 * c + 2 * m + 8, (self.L + 1) * c + 2 * m)
        row_y = {1: m, 0: m + c, -1: m + 2 * c}  # pixel top of the arm up / corridor / arm down
        canvas.rect(m, row_y[0], m + (self.L + 1) * c, row_y[0] + c, draw.FLOOR)
        x_j = m + self.L * c
        goal = int(self.goal[i])
        shown = self.t[i] == 0 or done
        for arm in (1, -1):
            color = (draw.GOOD if shown else draw.dim(draw.GOOD)) if arm == goal else draw.FLOOR
            canvas.rect(x_j, row_y[arm], x_j + c, row_y[arm] + c, color)
        grid = 1 if c >= 6 else 0  # thin lines between cells when there is room
        for k in range(1, self.L + 1):
            canvas.rect(m + k * c - grid, row_y[0], m + k * c, row_y[0] + c, draw.WALL)
        x, y = int(self.x[i]), int(self.y[i])
        if x == self.L and y == 0:  # the flag: the turn must be taken now
            canvas.outline(x_j, row_y[0], x_j + c, row_y[0] + c, draw.HIGHLIGHT, max(c // 8, 1))
        ax, ay = m + x * c, row_y[y]
        if c >= 8:
            canvas.disc(ax + c / 2, ay + c / 2, c * 0.35, draw.AGENT)
        else:
            canvas.rect(ax, ay, ax + c, ay + c, draw.AGENT)
        canvas.progress(self.t[i] / self.T)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class TMazeClassicCore(TMazeCore):
    """Ni et al.'s classic passive T-Maze: observation [at_junction, clue_or_y] (see the module docstring)."""

    def __init__(self, num_envs: int, **params):
        super().__init__(num_envs, **params)
        self.obs_spaces = {
            "partial": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
            "oracle": gym.spaces.Box(-1.0, 1.0, (3,), np.float32),
            "full": self.obs_spaces["full"],
        }

    def observe(self, variant, idx=None):
        if variant == "full":
            return super().observe(variant, idx)
        sl = slice(None) if idx is None else idx
        at_junction = self.x[sl] == self.L
        out = np.empty((at_junction.shape[0], 3 if variant == "oracle" else 2), dtype=np.float32)
        out[:, 0] = at_junction
        out[:, 1] = np.where(at_junction, self.y[sl], np.where(self.t[sl] == 0, self.goal[sl], 0))
        if variant == "oracle":
            out[:, 2] = self.goal[sl]
        return out


class TMazePassive(NativeEnv):
    """Passive T-Maze, memory paper variant (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = TMazeCore


class TMazePassiveVector(NativeVectorEnv):
    """Passive T-Maze, N environments in one numpy step."""

    core_cls = TMazeCore


class TMazeClassic(NativeEnv):
    """Classic passive T-Maze of Ni et al. (single environment); MIKASA-Base's ``T-Maze-v0``."""

    core_cls = TMazeClassicCore


class TMazeClassicVector(NativeVectorEnv):
    """Classic passive T-Maze, N environments in one numpy step."""

    core_cls = TMazeClassicCore
