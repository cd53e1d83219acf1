"""POBAX's DeepMind-Lab-style MiniGrid mazes (``Navix-DMLab-Maze-{00,01,02,03}-v0`` of
``pobax/envs/jax/navix_mazes.py``, built on the authors' NAVIX fork ``taodav/navix``), re-implemented in numpy:
``POBAX/Maze00-v0`` … ``POBAX/Maze03-v0``.

Maps (:data:`MAZES`, copied from the authors' module; ``#`` wall, ``.`` floor; rows x columns with the outer wall):
00 = 9 x 14 (54 floor cells; a debugging maze, not in the paper), 01 = 11 x 21 (109), 02 = 19 x 31 (318), 03 = 27 x 41
(668; the paper leaves it out as too hard). Time limit T (truncation): 1000, 2000, 4000, 6000 steps
(``max_steps`` changes it). Cells are (row, column), row 0 at the top.

Episode. The agent faces one of four directions, 0 = east, 1 = south, 2 = west, 3 = north (NAVIX's order), drawn
uniformly at reset, as is its start cell (uniform over the floor cells other than the goal's). Actions
(``Discrete(3)``, NAVIX's MiniGrid action set cut to its first three, as the authors' wrapper does): 0 = turn left
(counter-clockwise), 1 = turn right (clockwise), 2 = forward (one cell; into a wall: no move). The paper lists them
as "forward, turn left and turn right"; the numbers here are the code's. Stepping onto the goal pays +1 and
terminates the episode (the only reward; the authors' gamma is 0.99); otherwise the episode is truncated after T
steps.

Goal (``random_goal_pos``). Default ``True``: the goal is drawn uniformly among the floor cells every episode, as in
the code that produced the paper's figures (the February 2025 module, whose maze runs and plots date from then) and
as the paper says ("both agent start state and goal state are randomly initialized"). ``False``: the goal is always
the cell (1, 1) (the top-left corner), the authors' HEAD default since their October 2025 commit that added
``random_goal_pos`` (with ``False`` as the default of every maze ID).

Bug fixed (start and goal cells). The authors exclude a cell from the second draw with ``grid.at[pos].set(-1)``,
where ``pos`` is a (row, column) array: JAX indexes rows with it, so it excludes the whole rows numbered ``row`` and
``column`` (the latter when it is < the height). At HEAD the start never lies in the goal's row (with the fixed goal:
never in row 1, e.g. 92 of maze 01's 108 other floor cells are possible starts); in the paper-era code (player drawn
first) the goal never lies in the player's row or in the row numbered like the player's column. Here exactly one
cell is excluded (player and goal on distinct floor cells, uniformly).

Partial observation (``view``), a float32 vector: the authors' one-hot first-person window of shape
(rows, 3, 2) flattened in C order (``obs.reshape(rows, 3, 2)`` gives it back); window row 0 is the farthest from the
agent, column 0 is on its left, channel 0 = wall, channel 1 = goal (a floor cell is (0, 0)). The agent's own cell
is always (0, 0).

- ``"2x3"`` (default; 12 values): the code behind the paper's figures, the paper's "(2, 3, 2)". The authors' NAVIX
  fork (view radius 1) crops the 3 x 3 cells around the agent, turned so that the agent faces up, and keeps its
  first radius + 1 = 2 rows: the row in front of the agent (front-left, front, front-right) and the agent's own row
  (left, agent, right). The paper's words, "the 2 x 3 grids in front of the agent", describe it loosely: the second
  row is the agent's. Every cell of it is visible (NAVIX's view cone and the authors' ``MazeFoVWrapper`` hide nothing
  within one cell of the agent).
- ``"3x3"`` (18 values): the authors' HEAD (their NAVIX fork rebased in March 2026 onto NAVIX's new ``crop``, and
  POBAX's April 2026 fix of the observation shape to (3, 3, 2)): rows two cells ahead, one cell ahead and the agent's
  row. NAVIX's new view cone hides part of the farthest row: a cell two ahead shows as a wall only if it is a wall
  next to (8-neighbourhood) a non-wall cell of the row one ahead, within one column of it; otherwise (a hidden wall,
  a floor cell, the goal, or a cell outside the map) it is (0, 0). The rows one ahead and the agent's are fully
  visible.

Field of view. POBAX wraps these IDs in ``MazeFoVWrapper``, which ray-casts from the window cell (radius, radius) =
(1, 1) and sets hidden cells to -1. In every window it is applied to, every cell is next to (1, 1) (each ray has
no cell between its ends), so it never hides anything: at HEAD it even assumes the agent one cell in front of where
it is (the agent sits at (2, 1) of the 3 x 3 window). So the observation holds 0 and 1 only, and there is no -1.

Full observation (``full``): the authors' ``-F-`` IDs' ``categorical_full_position_encoded``: the map shifted so
that the agent sits at the centre, float32 (2h - 1, 2w - 1, 6) (maze 01: (21, 41, 6); 02: (37, 61, 6); 03:
(53, 81, 6); 00: (17, 27, 6)), not rotated: channel 0 = the authors' grid value (-1 at walls, 0 on the floor and on
the padding beyond the map), channel 1 = the goal (1 at its cell), channels 2-5 = the one-hot facing direction
(east, south, west, north) on every cell. The paper calls the wall channel one-hot; the code's walls are -1, kept
here. Bug fixed: the authors write the goal with ``zeros.at[goal.position].set(1)`` on a (1, 2) position array, which
sets the whole rows numbered goal row and goal column to 1; here only the goal's cell is 1.

Oracle. POBAX's ceiling for the mazes is the ``-F-`` observation above (a memoryless agent on it; the maze IDs have no
separate perfect-memory observation), i.e. ``full`` here. ``oracle`` is ``partial`` followed by the authors'
many-hot state encoding (``categorical_many_hot``, commented out in their module): one-hot agent row (h), agent
column (w), goal row (h), goal column (w) and direction (4), float32 (2h + 2w + 4): with the fixed map, what a
perfect memory holds (where the agent is and faces, where the goal is); ``info["oracle"]`` is that vector in every
variant. The authors' memory agents also see the previous action (``action_concat``): an agent-side input, not
part of the task.

Event–recall. Localisation and the goal's cell: a view at t_e can decide an action at any later t_r (dt = 1):
ξ = t_r − t_e + 1 ranges from 2 (the view just before) to T.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: The authors' maps (``nav_maze_random_goal_{00,01,02,03}`` of pobax/envs/jax/navix_mazes.py).
MAZES: dict[str, str] = {
    "00": """
##############
#...#...#....#
#.#.#.#####.##
#.#.#....#...#
#.#.#.#..#...#
#.#...#..#.#.#
#.#####..#.#.#
#.....#....#.#
##############
""",
    "01": """
#####################
#...#...#...........#
#.#.#.#####.#####.#.#
#.#.#.#...#.....#.#.#
#.#.#.#...#.....#.#.#
#.#...#...#.....#.#.#
#.#####...#.#...#.#.#
#.....#...#.#...#.#.#
#####.#.###########.#
#...................#
#####################
""",
    "02": """
###############################
#.#...............#.......#...#
#.#.###.###########.###.#.#.#.#
#...#...#.............#.#...#.#
#.###.###.#############.#####.#
#...#...#.#.........#...#.....#
###.###.#.#.........#.#####.#.#
#.....#...#.........#.#.....#.#
#.###.#####.........#.#.....###
#.#.....#...........#.#.....#.#
#.#.....#.#.........#.#.....#.#
#.......#.#...........#.....#.#
#.#.....#.#########...#.....#.#
#.#.....#.......#.....#.....#.#
#.#####.#######.#.###.#######.#
#...#.........#.#.#.....#.....#
###.###.#####.#.#.#######.#####
#.......#.......#.............#
###############################
""",
    "03": """
#########################################
#.......................................#
#.#################.###########.#######.#
#.#...#...........#.#...#.............#.#
#.###.#...........#.#.#.#.............#.#
#...#.............#.#.#.#.............#.#
###.#.#...........#.###.#.............#.#
#.#...#...........#...#.#.............#.#
#.###.#...........###.#.#.............#.#
#...#.#...........#...#.#.............#.#
#.###.#...........#.###.#.............#.#
#.....#...........#.....#.............#.#
#.#####################.###############.#
#.#.........#.........#.......#.........#
#.#.#.###############.#.#######.#.#######
#...#.#.............#.#.......#.#.#.....#
#####.#.............#.#.......#.###.###.#
#.#...#.............#.#.......#.....#...#
#.#.###.............#.#.......#.#####.#.#
#...#.#.............#.#.......#.#...#.#.#
#.###.#.............#.#.......#.#.#.#.#.#
#...#...............#.#.......#...#.#.#.#
###.#.###############.#.......#####.#.#.#
#...#...#.....#.....#.#.......#...#.#.#.#
#.###.#.###.#.###.#.#.#.#######.#.###.#.#
#.....#.....#.....#.#...........#.....#.#
#########################################
""",
}
#: The authors' ``max_steps`` per maze: the episode is truncated after T steps.
MAX_STEPS = {"00": 1000, "01": 2000, "02": 4000, "03": 6000}
#: The fixed goal cell of ``random_goal_pos=False`` (the authors' ``jnp.ones_like(goal_pos)``).
FIXED_GOAL = (1, 1)
#: The partial views: rows of the window (farthest first).
VIEWS = {"2x3": 2, "3x3": 3}

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("maze_id", "choice", "01", choices=tuple(MAZES), doc="the authors' map: 00 (debug), 01, 02, 03"),
    Param(
        "random_goal_pos",
        "bool",
        True,
        doc="True: a random goal cell every episode (the paper's figures); False: the goal at (1, 1) (authors' HEAD)",
    ),
    Param(
        "view",
        "choice",
        "2x3",
        choices=tuple(VIEWS),
        doc="'2x3': the row ahead and the agent's (the paper's figures); '3x3': two rows ahead + the agent's (HEAD)",
    ),
    Param(
        "max_steps",
        "int",
        None,
        low=1,
        high=10**7,
        none_ok=True,
        doc="T, the time limit; None: the authors' 1000 / 2000 / 4000 / 6000 for maze 00 / 01 / 02 / 03",
    ),
)

#: (row, column) step of each direction: 0 = east, 1 = south, 2 = west, 3 = north (NAVIX's order).
DIRECTIONS = np.array([(0, 1), (1, 0), (0, -1), (-1, 0)], dtype=np.int64)
TURN_LEFT, TURN_RIGHT, FORWARD = 0, 1, 2
#: The change of direction of each action (left = counter-clockwise = -1).
_SPIN = np.array([-1, 1, 0], dtype=np.int64)
_START_STREAM, _GOAL_STREAM, _DIR_STREAM = 1, 2, 3


def walls_of(maze_id: str) -> np.ndarray:
    """The map as a bool (h, w) array, True at walls."""
    rows = MAZES[maze_id].strip().splitlines()
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


def episode_length(maze_id: str, max_steps: int | None = None) -> int:
    return MAX_STEPS[maze_id] if max_steps is None else int(max_steps)


def window_offsets(view: str, direction: int) -> np.ndarray:
    """(rows * 3, 2) (row, column) offsets from the agent of the partial view's cells, in observation order: window
    rows farthest first, columns from the agent's left to its right."""
    n = VIEWS[view]
    fwd, right = DIRECTIONS[direction], DIRECTIONS[(direction + 1) % 4]
    ahead = np.repeat(np.arange(n - 1, -1, -1), 3)  # n-1 … 0 cells ahead
    lateral = np.tile(np.arange(-1, 2), n)
    return ahead[:, None] * fwd[None, :] + lateral[:, None] * right[None, :]


class MazeCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, maze_id: str, random_goal_pos: bool, view: str, max_steps: int | None):
        super().__init__(num_envs)
        self.maze_id, self.view, self.random_goal_pos = maze_id, view, bool(random_goal_pos)
        self.walls = walls_of(maze_id)
        h, w = self.h, self.w = self.walls.shape
        self.T = episode_length(maze_id, max_steps)
        self.floor = np.argwhere(~self.walls)  # (F, 2), row-major
        n_floor = len(self.floor)
        self.cell_index = np.full((h, w), -1, dtype=np.int64)
        self.cell_index[self.floor[:, 0], self.floor[:, 1]] = np.arange(n_floor)
        self.fixed_goal = int(self.cell_index[FIXED_GOAL])
        # Per (floor cell, direction): the cell a forward step reaches (itself when a wall is in front).
        ahead = self.floor[:, None, :] + DIRECTIONS[None, :, :]  # (F, 4, 2); the outer wall keeps it on the map
        blocked = self.walls[ahead[..., 0], ahead[..., 1]]
        self.forward = np.where(blocked, np.arange(n_floor)[:, None], self.cell_index[ahead[..., 0], ahead[..., 1]])
        self._build_views()
        self.pos = np.zeros(num_envs, dtype=np.int64)  # floor-cell index of the agent
        self.dir = np.zeros(num_envs, dtype=np.int64)
        self.goal = np.zeros(num_envs, dtype=np.int64)  # floor-cell index of the goal
        self._full_walls: np.ndarray | None = None
        self.action_space = gym.spaces.Discrete(3)
        k = VIEWS[view] * 3 * 2
        m = 2 * h + 2 * w + 4
        self.obs_spaces = {
            "partial": gym.spaces.Box(0.0, 1.0, (k,), np.float32),
            "oracle": gym.spaces.Box(0.0, 1.0, (k + m,), np.float32),
            "full": gym.spaces.Box(-1.0, 1.0, (2 * h - 1, 2 * w - 1, 6), np.float32),
        }
        self.oracle_dim = m

    def _build_views(self) -> None:
        """Tables of the partial view per (floor cell, direction): the wall channel, each window cell's flat map
        index (-1 outside the map), and where a goal would be seen."""
        h, w = self.h, self.w
        offsets = np.stack([window_offsets(self.view, d) for d in range(4)])  # (4, 3n, 2)
        cells = self.floor[:, None, None, :] + offsets[None]  # (F, 4, 3n, 2)
        inside = (cells[..., 0] >= 0) & (cells[..., 0] < h) & (cells[..., 1] >= 0) & (cells[..., 1] < w)
        r, c = np.clip(cells[..., 0], 0, h - 1), np.clip(cells[..., 1], 0, w - 1)
        wall = inside & self.walls[r, c]
        visible = inside.copy()
        if self.view == "3x3":  # NAVIX's view cone (radius 1) on the row two cells ahead
            near_open = ~wall[..., 3:6]  # the row one ahead: columns left, centre, right (always on the map)
            for j in range(3):
                lo, hi = max(j - 1, 0), min(j + 1, 2) + 1
                visible[..., j] &= wall[..., j] & near_open[..., lo:hi].any(axis=-1)
        agent_cell = (offsets == 0).all(axis=-1)[None]  # (1, 4, 3n)
        self._view_walls = (wall & visible).astype(np.float32)
        self._view_cells = np.where(inside, r * w + c, -1)
        self._view_goal_ok = visible & ~agent_cell  # (two ahead only walls are ever visible)

    # --- episodes ----------------------------------------------------------------------------------------------
    def _new_episodes(self, idx):
        n_floor = len(self.floor)
        if self.random_goal_pos:
            start = self.integers(idx, _START_STREAM, 0, n_floor, step=0)
            goal = self.integers(idx, _GOAL_STREAM, 0, n_floor - 1, step=0)
            goal = goal + (goal >= start)  # uniform over the other floor cells
        else:
            goal = np.full(idx.shape, self.fixed_goal, dtype=np.int64)
            start = self.integers(idx, _START_STREAM, 0, n_floor - 1, step=0)
            start = start + (start >= goal)
        self.pos[idx], self.goal[idx] = start, goal
        self.dir[idx] = self.integers(idx, _DIR_STREAM, 0, 4, step=0)

    def place(self, i: int, cell: tuple[int, int], direction: int, goal: tuple[int, int] | None = None) -> None:
        """Put environment ``i``'s agent at ``cell`` facing ``direction`` (and its goal at ``goal``): for tests and
        demonstrations of the views."""
        for where in (cell, goal):
            if where is not None and not (0 <= where[0] < self.h and 0 <= where[1] < self.w and ~self.walls[where]):
                raise ValueError(f"cell {where} is not a floor cell of maze {self.maze_id}")
        if not 0 <= direction < 4:
            raise ValueError(f"direction {direction} is not one of 0 (east), 1 (south), 2 (west), 3 (north)")
        self.pos[i], self.dir[i] = self.cell_index[cell], direction
        if goal is not None:
            self.goal[i] = self.cell_index[goal]

    # --- dynamics ----------------------------------------------------------------------------------------------
    def step(self, actions, idx=None):
        sl = slice(None) if idx is None else idx
        pos, d = self.pos[sl], self.dir[sl]
        pos = np.where(actions == FORWARD, self.forward[pos, d], pos)
        self.dir[sl] = (d + _SPIN[actions]) % 4
        self.pos[sl] = pos
        t = self.t[sl] + 1
        self.t[sl] = t
        reached = pos == self.goal[sl]
        self.success[sl] = reached
        return reached.astype(np.float64), reached, ~reached & (t >= self.T)

    # --- observations ------------------------------------------------------------------------------------------
    def _partial(self, sl) -> np.ndarray:
        pos, d = self.pos[sl], self.dir[sl]
        goal_flat = self.floor[self.goal[sl], 0] * self.w + self.floor[self.goal[sl], 1]
        out = np.empty((pos.shape[0], self._view_walls.shape[-1], 2), dtype=np.float32)
        out[..., 0] = self._view_walls[pos, d]
        out[..., 1] = (self._view_cells[pos, d] == goal_flat[:, None]) & self._view_goal_ok[pos, d]
        return out.reshape(pos.shape[0], -1)

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        h, w = self.h, self.w
        agent, goal, d = self.floor[self.pos[sl]], self.floor[self.goal[sl]], self.dir[sl]
        m = d.shape[0]
        out = np.zeros((m, 2 * h + 2 * w + 4), dtype=np.float32)
        rows = np.arange(m)
        out[rows, agent[:, 0]] = 1
        out[rows, h + agent[:, 1]] = 1
        out[rows, h + w + goal[:, 0]] = 1
        out[rows, 2 * h + w + goal[:, 1]] = 1
        out[rows, 2 * h + 2 * w + d] = 1
        return out

    def _full(self, sl) -> np.ndarray:
        h, w = self.h, self.w
        if self._full_walls is None:  # per agent cell, the shifted wall channel (int8: 2 MB for maze 03)
            full_walls = np.zeros((len(self.floor), 2 * h - 1, 2 * w - 1), dtype=np.int8)
            for k, (r, c) in enumerate(self.floor):
                full_walls[k, h - 1 - r : 2 * h - 1 - r, w - 1 - c : 2 * w - 1 - c] = -self.walls.astype(np.int8)
            self._full_walls = full_walls
        pos, d = self.pos[sl], self.dir[sl]
        m = pos.shape[0]
        rows = np.arange(m)
        out = np.zeros((m, 2 * h - 1, 2 * w - 1, 6), dtype=np.float32)
        out[..., 0] = self._full_walls[pos]
        rel = self.floor[self.goal[sl]] - self.floor[pos] + np.array([h - 1, w - 1])
        out[rows, rel[:, 0], rel[:, 1], 1] = 1
        out[rows, :, :, 2 + d] = 1
        return out

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        if variant == "full":
            return self._full(sl)
        partial = self._partial(sl)
        if variant == "oracle":
            return np.concatenate([partial, self.oracle(sl)], axis=1)
        return partial

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        board = [["#" if wall else "." for wall in row] for row in self.walls]
        gr, gc = self.floor[self.goal[i]]
        board[gr][gc] = "G"
        ar, ac = self.floor[self.pos[i]]
        board[ar][ac] = ">v<^"[self.dir[i]]
        return "\n".join("".join(row) for row in board) + f"\nt={self.t[i]}/{self.T}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The whole maze (walls dark, floor light), the goal (green), the agent (red disc with a line towards where
        it faces) and the cells of its partial view outlined in yellow; t / T along the bottom."""
        c = draw.cell_size(self.w, 480, 6, 32)
        m = c
        canvas = draw.Canvas(self.h * c + 2 * m, self.w * c + 2 * m)
        floor = np.kron(~self.walls, np.ones((c, c), dtype=bool))
        region = canvas.pixels[m : m + self.h * c, m : m + self.w * c]
        region[floor] = draw.FLOOR
        region[~floor] = draw.WALL
        gr, gc = self.floor[self.goal[i]]
        canvas.rect(m + gc * c, m + gr * c, m + (gc + 1) * c, m + (gr + 1) * c, draw.GOOD)
        ar, ac = self.floor[self.pos[i]]
        d = int(self.dir[i])
        for dr, dc in window_offsets(self.view, d):
            r, col = ar + dr, ac + dc
            if 0 <= r < self.h and 0 <= col < self.w and (dr, dc) != (0, 0):
                canvas.outline(m + col * c, m + r * c, m + (col + 1) * c, m + (r + 1) * c, draw.HIGHLIGHT, 1)
        cx, cy = m + (ac + 0.5) * c, m + (ar + 0.5) * c
        canvas.disc(cx, cy, c * 0.38, draw.AGENT)
        dr, dc = DIRECTIONS[d]
        canvas.line(cx, cy, cx + dc * c * 0.5, cy + dr * c * 0.5, draw.TEXT, max(c / 6, 1.5))
        canvas.progress(self.t[i] / self.T)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class POBAXMaze(NativeEnv):
    """A POBAX DMLab-style maze (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = MazeCore


class POBAXMazeVector(NativeVectorEnv):
    """A POBAX DMLab-style maze, N environments in one numpy step."""

    core_cls = MazeCore
