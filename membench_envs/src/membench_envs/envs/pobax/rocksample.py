"""POBAX's RockSample(n, k) (``rocksample_11_11``, ``rocksample_15_15``), as the authors' ``envs/jax/rocksample.py``
and ``envs/configs/rocksample_{11_11,15_15}_config.json`` define it (Smith & Simmons' POMDP, the authors' variant).

Grid. n × n cells (``size``), positions (row, col), row 0 at the top (north). k rocks (``rocks``) sit on distinct
cells of rows 0 … n − 1 and columns 0 … n − 2. The rock map is fixed for a whole run: the authors draw it once per
process from the run's PRNG key (``RockSample.generate_map``), so every environment of a run, and every episode, shares
it. Each episode draws every rock's status, good (1) or bad (0), with probability 1/2 each, and the agent's start cell
uniformly over rows 0 … n − 1, columns 0 … n − 2 (a rock's cell included).

Maps (``rock_map``), rock i = list position, (row, col):

- ``"ppo"`` (default): the maps of the run seeds the paper's ``best/`` PPO scripts use, 2025 for 11 × 11 and 2026 for
  15 × 15 (:data:`MAPS`). They are constants here: jax draws them with ``random.choice`` (computed with jax 0.10; the
  authors' pinned jax 0.6.2 may differ), and no numpy generator reproduces jax's.
- ``"transformer"``: the maps of the Transformer-XL ``best/`` scripts' run seeds, 2024 (11 × 11) and 2025 (15 × 15).
- ``"drawn"``: a new map drawn from ``map_seed`` (numpy's generator; the authors' code would draw another one for the
  same seed): k distinct cells, uniformly, of the same area. The only choice for sizes other than 11 / 11 and 15 / 15.

Actions (5 + k): 0 = north (row − 1), 1 = east (col + 1), 2 = south (row + 1), 3 = west (col − 1), each clipped to
the grid; 4 = sample the rock on the agent's cell; 5 + i = check rock i.

- Sample: on a good rock +10, and the rock turns bad; on a bad rock −10 (every time); on a cell without a rock 0.
- Check rock i: the reading is the rock's true status with probability ½ (1 + 2^(−d / d_half)), where d is the
  Euclidean distance between the agent's cell and the rock's (in cells) and d_half = ``half_efficiency_distance``
  = 20 (both configs), else the opposite status. So d = 0 reads correctly with probability 1, d = 5 with 0.920,
  d = 20 with 0.75, and the farthest pair of cells ((n − 1)·√2 apart) with 0.806 at 11 × 11 and 0.752 at 15 × 15.
  The paper's App. B.2 takes d_half = "the maximum distance from any grid in the domain" instead: the grid's
  diagonal, (n − 1)·√2 = 14.142 at 11 × 11 and 19.799 at 15 × 15; pass it as ``half_efficiency_distance``.
- Exit: a move into column n − 1 pays +10 and ends the episode (``terminated``, ``info["success"]`` = True). It is
  the only way the task ends; the episode cap ``max_steps`` (default 1000, :mod:`membench_envs.envs.pobax.limits`)
  truncates.

Rewards are the environment's: the authors' pipeline always wraps RockSample in ``NormalizeVecReward`` (running
return normalisation, an agent-side transform); their discount γ is 0.99 (11 × 11) and 0.999 (15 × 15).

Observation (``partial``), 2n + k values: one-hot(row) (n), one-hot(col) (n), then k rock features, all 0 except on
the step after checking rock i: feature i = +1 (read good) or −1 (read bad). The reset observation has no reading.
Sampling shows nothing. (The paper's App. B.2 says the features are updated after a check *or a sample* and set to
"1 if the rock appears good", which fixes no value for a bad reading nor for a sample: not offered as an option.)

``oracle``: POBAX's "perfect memory" observation (the authors' ``PerfectMemoryWrapper``, which the paper's text
describes and their Transformer scripts use): the same position, then per rock the most recent reading (+1 / −1),
−1 once the agent has sampled it (a sampled rock is bad), 0 before either. Those k values are ``info["oracle"]`` in
every variant. Bug fixed (read from their code, not run): the authors' wrapper keeps its memory through gymnax's
automatic reset inside ``step`` (the reset observation has no reading, so nothing overwrites it), so from the second
episode on their perfect memory starts with the previous episode's readings, of rocks whose statuses were redrawn;
here it starts empty every episode.

``full``: the state as the authors' ``FullyObservableWrapper`` shows it: the position, then each rock's true status
(1 good, 0 bad). Since 2025-08-01 their ``get_env(perfect_memory=True)`` returns this for the PPO scripts (the
``best/`` RockSample scripts of 2025-08-04 ran it as the "perfect memory" ceiling); the paper-era code (``e1b2218``)
returned the perfect memory. Both are here: ``oracle`` and ``full``.

Event–recall: a reading of rock i is observed at t_e ≥ 1 (a check at t_e − 1) and needed when deciding to sample
or skip the rock, at the earliest one step later (checking from the rock's own cell, then sampling) and at the
latest at t = max_steps − 1: ξ = t_r − t_e + 1 ∈ [2, max_steps − 1]. k such pairs may be open at once.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param
from membench_envs.envs.pobax.limits import MAX_STEPS, truncation

#: The authors' configs (``rocksample_11_11_config.json``, ``rocksample_15_15_config.json``; equal in both).
GOOD_ROCK_REWARD, BAD_ROCK_REWARD, EXIT_REWARD = 10.0, -10.0, 10.0
HALF_EFFICIENCY_DISTANCE = 20.0
#: (row, col) per action 0 … 3: north, east, south, west (the authors' ``direction_mapping``).
MOVES = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]], dtype=np.int64)
SAMPLE, FIRST_CHECK = 4, 5

#: The authors' rock maps, (row, col) per rock, keyed by (rock_map, size): the maps their ``generate_map`` draws for
#: the run seeds of the paper's ``best/`` scripts (PPO: 2025 for 11 x 11, 2026 for 15 x 15; Transformer-XL: 2024 and
#: 2025). Read from the authors' code with jax 0.10.
MAPS: dict[tuple[str, int], tuple[tuple[int, int], ...]] = {
    ("ppo", 11): ((8, 6), (1, 7), (10, 2), (2, 9), (7, 4), (8, 4), (6, 9), (3, 5), (5, 3), (2, 1), (6, 3)),
    ("ppo", 15): (
        (8, 5), (10, 6), (3, 9), (5, 6), (4, 5), (9, 6), (0, 13), (7, 11),
        (5, 10), (9, 10), (13, 5), (5, 0), (10, 4), (2, 7), (9, 9),
    ),
    ("transformer", 11): ((5, 8), (5, 1), (7, 7), (3, 9), (1, 9), (6, 5), (5, 0), (5, 3), (6, 8), (9, 9), (2, 6)),
    ("transformer", 15): (
        (14, 4), (6, 8), (11, 7), (3, 5), (11, 13), (2, 2), (4, 11), (3, 12),
        (1, 8), (11, 6), (10, 11), (6, 3), (13, 7), (7, 3), (0, 7),
    ),
}  # fmt: skip
#: The largest grid accepted (the observation has 2n + k values).
MAX_SIZE = 100

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("size", "int", 11, low=2, high=MAX_SIZE, doc="n: the grid is n x n; column n-1 is the exit"),
    Param("rocks", "int", 11, low=1, high=MAX_SIZE * (MAX_SIZE - 1), doc="k: rocks, at most n(n-1)"),
    Param(
        "rock_map",
        "choice",
        "ppo",
        choices=("ppo", "transformer", "drawn"),
        doc="'ppo': the authors' map of the best/ PPO scripts' seed; 'transformer': of the Transformer-XL scripts'; "
        "'drawn': a new map from map_seed",
    ),
    Param("map_seed", "int", 0, low=0, doc="the seed of a drawn map (rock_map='drawn' only)"),
    Param(
        "half_efficiency_distance",
        "float",
        HALF_EFFICIENCY_DISTANCE,
        low=0.0,
        low_open=True,
        doc="d_half of the sensor: P(correct) = (1 + 2^(-d/d_half)) / 2 (code: 20; paper: the grid diagonal)",
    ),
    MAX_STEPS,
)

_MORALITY_STREAM, _START_STREAM, _CHECK_STREAM = 1, 2, 3


def sensor_accuracy(distance, half_efficiency_distance: float = HALF_EFFICIENCY_DISTANCE):
    """P(the check reads the rock's true status) at ``distance`` cells: ½ (1 + 2^(−d / d_half))."""
    return 0.5 * (1.0 + np.power(2.0, -np.asarray(distance, dtype=np.float64) / half_efficiency_distance))


def rock_positions(size: int, rocks: int, rock_map: str, map_seed: int) -> np.ndarray:
    """The (rocks, 2) int array of (row, col) per rock; one clear ValueError for a map that does not exist."""
    if rocks > size * (size - 1):
        raise ValueError(
            f"rocks={rocks} is not allowed; a {size}x{size} grid has {size * (size - 1)} cells for rocks "
            "(columns 0 … n-2)"
        )
    if map_seed != 0 and rock_map != "drawn":
        raise ValueError(f"map_seed={map_seed} is not allowed with rock_map={rock_map!r}; it picks a drawn map only")
    if rock_map != "drawn":
        if size != rocks or (rock_map, size) not in MAPS:
            raise ValueError(
                f"rock_map={rock_map!r} is not allowed for size={size}, rocks={rocks}; the authors' maps are "
                "11x11 with 11 rocks and 15x15 with 15 rocks (use rock_map='drawn')"
            )
        return np.array(MAPS[rock_map, size], dtype=np.int64)
    # The authors' enumeration of the cells (their meshgrid): cell p = (p % n, p // n), columns 0 … n-2.
    cells = np.random.default_rng(map_seed).choice(size * (size - 1), rocks, replace=False)
    return np.stack([cells % size, cells // size], axis=1).astype(np.int64)


class RockSampleCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(
        self,
        num_envs: int,
        *,
        size: int,
        rocks: int,
        rock_map: str,
        map_seed: int,
        half_efficiency_distance: float,
        max_steps: int,
    ):
        super().__init__(num_envs)
        self.n, self.k = int(size), int(rocks)
        self.rocks = rock_positions(self.n, self.k, rock_map, map_seed)
        self.half_efficiency_distance = float(half_efficiency_distance)
        self.max_steps = int(max_steps)
        n, k = self.n, self.k
        # The rock on each cell (row * n + col), or -1.
        self.rock_at = np.full(n * n, -1, dtype=np.int64)
        self.rock_at[self.rocks[:, 0] * n + self.rocks[:, 1]] = np.arange(k)
        self.pos = np.zeros((num_envs, 2), dtype=np.int64)
        self.good = np.zeros((num_envs, k), dtype=np.int64)  # the rocks' statuses: 1 good, 0 bad
        self.reading = np.zeros((num_envs, k), dtype=np.float32)  # this step's check: +1 / -1 on the checked rock
        self.memory = np.zeros((num_envs, k), dtype=np.float32)  # the perfect memory (oracle)
        self._rows = np.arange(num_envs)
        self._rock_steps = np.arange(k)[None, :]
        self.action_space = gym.spaces.Discrete(5 + k)
        features = gym.spaces.Box(-1.0, 1.0, (2 * n + k,), np.float32)
        self.obs_spaces = {
            "partial": features,
            "oracle": features,
            "full": gym.spaces.Box(0.0, 1.0, (2 * n + k,), np.float32),
        }
        self.oracle_dim = k

    def _new_episodes(self, idx):
        u = rng.uniform(self.keys[idx, None], self.episode[idx, None], self._rock_steps, _MORALITY_STREAM)
        self.good[idx] = u < 0.5
        cell = self.integers(idx, _START_STREAM, 0, self.n * (self.n - 1), step=0)
        self.pos[idx, 0] = cell % self.n
        self.pos[idx, 1] = cell // self.n
        self.reading[idx] = 0.0
        self.memory[idx] = 0.0

    def step(self, actions, idx=None):
        rows = self._rows if idx is None else idx
        m = rows.shape[0]
        reward = np.zeros(m, dtype=np.float64)
        reading = np.zeros((m, self.k), dtype=np.float32)
        pos = self.pos[rows]
        # Moves (0 … 3), clipped to the grid.
        moving = actions < SAMPLE
        if moving.any():
            pos[moving] = np.clip(pos[moving] + MOVES[actions[moving]], 0, self.n - 1)
            self.pos[rows] = pos
        # Sample (4): the rock on the agent's cell pays +10 (good; it turns bad) or -10 (bad).
        rock_here = self.rock_at[pos[:, 0] * self.n + pos[:, 1]]
        sampled = (actions == SAMPLE) & (rock_here >= 0)
        if sampled.any():
            s_rows, s_rocks = rows[sampled], rock_here[sampled]
            was_good = self.good[s_rows, s_rocks] == 1
            reward[sampled] = np.where(was_good, GOOD_ROCK_REWARD, BAD_ROCK_REWARD)
            self.good[s_rows, s_rocks] = 0
            reading[sampled, s_rocks] = -1.0  # (perfect memory only: the partial observation shows no sample)
        # Check (5 + i): the true status with probability (1 + 2^(-d/d_half)) / 2.
        checking = actions >= FIRST_CHECK
        if checking.any():
            c_rows, c_rocks = rows[checking], actions[checking] - FIRST_CHECK
            delta = pos[checking] - self.rocks[c_rocks]
            accuracy = sensor_accuracy(np.hypot(delta[:, 0], delta[:, 1]), self.half_efficiency_distance)
            correct = self.uniform(c_rows, _CHECK_STREAM) < accuracy
            good = (self.good[c_rows, c_rocks] == 1) == correct
            reading[checking, c_rocks] = np.where(good, 1.0, -1.0)
        self.memory[rows] = np.where(reading != 0, reading, self.memory[rows])
        reading[sampled, rock_here[sampled]] = 0.0
        self.reading[rows] = reading
        # Exit: a move into column n - 1.
        terminated = pos[:, 1] == self.n - 1
        reward += np.where(terminated, EXIT_REWARD, 0.0)
        t = self.t[rows] + 1
        self.t[rows] = t
        self.success[rows] = terminated
        return reward, terminated, truncation(t, terminated, self.max_steps)

    def observe(self, variant, idx=None):
        rows = self._rows if idx is None else idx
        n = self.n
        out = np.zeros((rows.shape[0], 2 * n + self.k), dtype=np.float32)
        lines = np.arange(rows.shape[0])
        out[lines, self.pos[rows, 0]] = 1.0
        out[lines, n + self.pos[rows, 1]] = 1.0
        if variant == "partial":
            out[:, 2 * n :] = self.reading[rows]
        elif variant == "oracle":
            out[:, 2 * n :] = self.memory[rows]
        else:
            out[:, 2 * n :] = self.good[rows]
        return out

    def oracle(self, idx=None):
        rows = self._rows if idx is None else idx
        return self.memory[rows].copy()

    def render_ansi(self, i: int) -> str:
        grid = [["."] * (self.n - 1) + ["E"] for _ in range(self.n)]
        for r, (row, col) in enumerate(self.rocks):
            grid[row][col] = "G" if self.good[i, r] else "B"
        row, col = self.pos[i]
        grid[row][col] = "A"
        return "\n".join("".join(line) for line in grid) + f"\nt={self.t[i]}/{self.max_steps}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The grid (grey) with the exit column (dim green), each rock as a disc coloured by its true status (green
        good, red bad; dim while the agent's memory holds no reading of it, bright once it does), the agent (red
        square outline) and the step count t in the top-left corner."""
        n = self.n
        c = draw.cell_size(n, 480, 6, 40)
        m = max(c // 2, 4)
        top = m + 12
        canvas = draw.Canvas(n * c + top + m, n * c + 2 * m)
        canvas.rect(m, top, m + (n - 1) * c, top + n * c, draw.FLOOR)
        canvas.rect(m + (n - 1) * c, top, m + n * c, top + n * c, draw.dim(draw.GOOD))
        for k in range(1, n):
            canvas.rect(m + k * c - 1, top, m + k * c, top + n * c, draw.WALL)
            canvas.rect(m, top + k * c - 1, m + n * c, top + k * c, draw.WALL)
        for r, (row, col) in enumerate(self.rocks):
            color = draw.GOOD if self.good[i, r] else draw.BAD
            if self.memory[i, r] == 0:
                color = draw.dim(color)
            canvas.disc(m + (col + 0.5) * c, top + (row + 0.5) * c, c * 0.3, color)
        row, col = self.pos[i]
        canvas.outline(m + col * c, top + row * c, m + (col + 1) * c, top + (row + 1) * c, draw.AGENT, max(c // 6, 2))
        canvas.text(m, 2, str(int(self.t[i])), draw.WHITE, scale=2)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class RockSample(NativeEnv):
    """POBAX's RockSample (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = RockSampleCore


class RockSampleVector(NativeVectorEnv):
    """POBAX's RockSample, N environments in one numpy step."""

    core_cls = RockSampleCore
