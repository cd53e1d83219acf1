"""POBAX's T-Maze (``tmaze_{n}``; the benchmark runs n = 10), as the authors' ``envs/jax/tmaze.py`` defines it.

Not the memory-classification paper's T-Maze (``MIKASA/TMazePassive*``) nor Ni et al.'s (``MIKASA/TMazeClassic*``):
another corridor, observation, reward and action order.

Geometry. Cells 0 … n are the hallway (the agent starts at cell 0), cell n + 1 is the junction; n is the kwarg
``corridor_length`` (the authors' ``hallway_length``). The goal direction ``goal_dir`` is drawn at reset, 0 or 1 with
probability 1/2 each; goal_dir = 0 means the reward is *up*.

Actions (the authors' order): 0 = up, 1 = down, 2 = east (towards the junction), 3 = west. East / west move one cell
(clipped to 0 … n + 1; walking back is allowed). Up / down do nothing in the hallway (reward 0, the step counts); at
the junction they end the episode (``terminated``): +4 for the correct arm (up when goal_dir = 0, down when
goal_dir = 1), −0.1 for the wrong one. Every other step pays 0. The agent then stands on cell n + 2, a terminal cell
that looks like the hallway. The shortest episode is n + 2 = 12 steps; the optimal discounted return is
4·γ^(n+1) (3.581 with the authors' γ = 0.99). The authors' ``slip_prob`` is 0 in the benchmark and not offered here
(their code cannot run with a slip: it branches in Python on a traced random number).

Episode cap: ``max_steps`` (default 1000), see :mod:`membench_envs.envs.pobax.limits`.

Observation (``partial``), 4 binary values, ``observation="code"`` (the default, the authors' code):
  [obs0, hallway, junction, 0] with obs0 = goal_dir on cell 0 and 0 elsewhere, hallway = 1 on every cell but the
  junction (cell 0 and the terminal cell included), junction = 1 on cell n + 1; the fourth value ("terminal" in the
  authors' comment) is never set. So the start cell shows [1, 1, 0, 0] when goal_dir = 1 but [0, 1, 0, 0], the
  hallway's observation, when goal_dir = 0: the agent must read "up" from the *absence* of the bit. The cue comes
  back whenever the agent walks back to cell 0.
``observation="paper"`` (the paper's App. B.1 wording: "the first two elements dictate which hallway the agent is in
… and is only set at the start grid. The next element is 1 if the agent is in the hallway. The third element is 1 if
the agent is in the junction"): [up, down, hallway, junction] with (up, down) = one-hot of the goal on cell 0 and
(0, 0) elsewhere; hallway and junction as above. Both goals give a distinct start observation.

``oracle``: POBAX's "perfect memory" observation (``TMaze(perfect_memory=True)``: the goal bit(s) set on every cell,
not only on cell 0), followed by the goal ``[goal_dir]``, which ``info["oracle"]`` holds in every variant (every
membench oracle observation ends with it; here it repeats obs0 of the "code" layout). 5 values.
``full``: the state, [goal_dir, cell / (n + 2), t / max_steps].

Randomness: the goal is the only random quantity (one draw per episode from the env's seeded stream; the authors'
``random.bernoulli(key)`` is JAX's and draws other goals for the same seed).

Event–recall: the goal, seen on cell 0 at t = 0, must be recalled at the turn, at t_r ≥ n + 1 (n + 1 east moves
first) and t_r ≤ max_steps − 1: ξ = t_r + 1 ∈ [n + 2, max_steps], K̄ = n + 1.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.pobax.limits import MAX_STEPS, truncation

#: The authors' rewards: the correct arm, the wrong arm.
GOOD_REWARD, BAD_REWARD = 4.0, -0.1
#: The longest hallway accepted (the authors' benchmark uses 10).
MAX_CORRIDOR = 100_000
#: Actions, in the authors' order.
UP, DOWN, EAST, WEST = 0, 1, 2, 3

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param(
        "corridor_length",
        "int",
        10,
        low=1,
        high=MAX_CORRIDOR,
        doc="n: hallway cells 0..n, junction n+1 (the authors' hallway_length; shortest episode n+2 steps)",
    ),
    Param(
        "observation",
        "choice",
        "code",
        choices=("code", "paper"),
        doc="'code': [goal_dir on cell 0, hallway, junction, 0] (authors' code); 'paper': [up, down, hallway, junction]"
        " (the paper's App. B.1)",
    ),
    MAX_STEPS,
)

_GOAL_STREAM = 1


def shortest_episode(corridor_length: int) -> int:
    """n + 2: n + 1 east moves to the junction, then the turn."""
    return corridor_length + 2


class PobaxTMazeCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, corridor_length: int, observation: str, max_steps: int):
        super().__init__(num_envs)
        self.n = int(corridor_length)
        self.junction = self.n + 1
        self.terminal_cell = self.n + 2
        self.observation = observation
        self.max_steps = int(max_steps)
        self.cell = np.zeros(num_envs, dtype=np.int64)
        self.goal = np.zeros(num_envs, dtype=np.int64)  # goal_dir: 0 = up, 1 = down
        # Per (cell, action), indexed cell * 4 + action, for the cells the agent can act on (0 … n + 1): the next
        # cell, and whether the action turns at the junction (ends the episode).
        cells, acts = np.divmod(np.arange((self.junction + 1) * 4), 4)
        turn = (acts < 2) & (cells == self.junction)
        east = np.minimum(cells + 1, self.junction)
        west = np.maximum(cells - 1, 0)
        self._next = np.where(
            turn, self.terminal_cell, np.where(acts == EAST, east, np.where(acts == WEST, west, cells))
        )
        self._turn = turn
        self.action_space = gym.spaces.Discrete(4)
        self.obs_spaces = {
            "partial": gym.spaces.Box(0.0, 1.0, (4,), np.float32),
            "oracle": gym.spaces.Box(0.0, 1.0, (5,), np.float32),
            "full": gym.spaces.Box(0.0, 1.0, (3,), np.float32),
        }
        self.oracle_dim = 1

    def _new_episodes(self, idx):
        self.cell[idx] = 0
        self.goal[idx] = self.uniform(idx, _GOAL_STREAM, step=0) < 0.5

    def step(self, actions, idx=None):
        sl = slice(None) if idx is None else idx
        move = self.cell[sl] * 4 + actions
        turn = self._turn[move]
        correct = turn & (actions == self.goal[sl])  # action 0 (up) is right when goal_dir = 0
        reward = np.where(turn, np.where(correct, GOOD_REWARD, BAD_REWARD), 0.0)
        self.cell[sl] = self._next[move]
        t = self.t[sl] + 1
        self.t[sl] = t
        self.success[sl] = correct
        return reward, turn, truncation(t, turn, self.max_steps)

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        cell, goal = self.cell[sl], self.goal[sl]
        if variant == "full":
            out = np.empty((cell.shape[0], 3), dtype=np.float32)
            out[:, 0] = goal
            out[:, 1] = cell / self.terminal_cell
            out[:, 2] = self.t[sl] / self.max_steps
            return out
        out = np.zeros((cell.shape[0], 5 if variant == "oracle" else 4), dtype=np.float32)
        shown = np.ones_like(cell, dtype=bool) if variant == "oracle" else cell == 0
        at_junction = cell == self.junction
        if self.observation == "code":
            out[:, 0] = shown & (goal == 1)
            out[:, 1] = ~at_junction
            out[:, 2] = at_junction
        else:
            out[:, 0] = shown & (goal == 0)
            out[:, 1] = shown & (goal == 1)
            out[:, 2] = ~at_junction
            out[:, 3] = at_junction
        if variant == "oracle":
            out[:, 4] = goal
        return out

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return self.goal[sl, None].astype(np.float32)

    def render_ansi(self, i: int) -> str:
        width = self.junction + 1
        top, mid, bot = [" "] * width, ["."] * width, [" "] * width
        top[self.junction] = "G" if self.goal[i] == 0 else "x"
        bot[self.junction] = "G" if self.goal[i] == 1 else "x"
        cell = int(self.cell[i])
        if cell == self.terminal_cell:  # in the arm it turned into
            arm = top if (self.success[i] == (self.goal[i] == 0)) else bot
            arm[self.junction] = "A"
        else:
            mid[cell] = "A"
        return "\n".join("".join(r) for r in (top, mid, bot)) + f"\nt={self.t[i]}/{self.max_steps}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The hallway (grey) with the two arms above and below the junction, the agent (red), the goal arm (bright
        green while the agent stands on cell 0, where it can see the cue, and once the episode is over; dim green
        otherwise) and the step count t in the top-left corner."""
        width = self.junction + 1
        c = draw.cell_size(width, 480, 3, 32)
        m = max(c // 2, 4)
        canvas = draw.Canvas(3 * c + 2 * m + 16, width * c + 2 * m)
        top = m + 12
        row_y = {0: top, 1: top + c, 2: top + 2 * c}  # pixel top of the arm up / hallway / arm down
        canvas.rect(m, row_y[1], m + width * c, row_y[1] + c, draw.FLOOR)
        x_j = m + self.junction * c
        goal_row = 0 if self.goal[i] == 0 else 2
        cell = int(self.cell[i])
        shown = cell == 0 or done
        for row in (0, 2):
            color = (draw.GOOD if shown else draw.dim(draw.GOOD)) if row == goal_row else draw.FLOOR
            canvas.rect(x_j, row_y[row], x_j + c, row_y[row] + c, color)
        grid = 1 if c >= 6 else 0
        for k in range(1, width):
            canvas.rect(m + k * c - grid, row_y[1], m + k * c, row_y[1] + c, draw.WALL)
        if cell == self.terminal_cell:
            ax, ay = x_j, row_y[goal_row if self.success[i] else 2 - goal_row]
        else:
            ax, ay = m + cell * c, row_y[1]
        if c >= 8:
            canvas.disc(ax + c / 2, ay + c / 2, c * 0.35, draw.AGENT)
        else:
            canvas.rect(ax, ay, ax + c, ay + c, draw.AGENT)
        canvas.text(m, 2, str(int(self.t[i])), draw.WHITE, scale=2)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class PobaxTMaze(NativeEnv):
    """POBAX's T-Maze (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = PobaxTMazeCore


class PobaxTMazeVector(NativeVectorEnv):
    """POBAX's T-Maze, N environments in one numpy step."""

    core_cls = PobaxTMazeCore
