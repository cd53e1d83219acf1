"""Ballet (Lampinen et al., "Towards mental time travel", NeurIPS 2021; DeepMind's ``pycolab_ballet``, which
MIKASA-Base wraps), re-implemented in numpy with the authors' rules, timing and pictures.

Room. 11 x 11 cells: a 9 x 9 floor inside a one-cell wall. The agent starts at the centre (row 5, column 5).
Dancers stand at ``num_dancers`` of the 8 home cells (2, 2), (2, 5), (2, 8), (5, 2), (5, 8), (8, 2), (8, 5),
(8, 8) (rows, columns), each in its own 3 x 3 square; each has a distinct shape (15) and colour (19) and a
distinct dance (13). Per episode the homes, dances, shapes and colours are drawn without replacement and one
dancer is the target. ``easy_mode=True`` (MIKASA-Base's "Light" levels): every dancer is red, and the homes and
shapes are the first ``num_dancers`` of the authors' lists (shuffled among the dancers).

Dance phase. A dance is 16 one-cell moves (of the 8 compass directions) inside the dancer's square, ending at
home. The dancers dance one after the other, in the order they were drawn, which is unrelated to where they
stand. With P = 15 + ``dance_delay``, dancer k (k = 0 … n−1) is displaced by its first j + 1 moves in the
observation k·P + j (j = 0 … 15; the reset observation already shows the first move of dancer 0), and back
home from k·P + 15 on; between two dances the room is still for ``dance_delay`` − 1 observations. This is
the authors' pycolab timing (the timer that starts the next dance runs out on the step of its first move).
Actions do nothing in this phase.

Choice phase. The observation n·P is the first to show the instruction (the code of the target's dance);
from the action taken on it on, the agent moves one cell per step in the direction of its action (a move
into the wall leaves it in place; dancers do not block). Stepping onto a dancer ends the episode:
reward +1 if it is the target (success), 0 otherwise. Without a choice the episode is truncated after
T = ``max_steps`` − 1 steps (the authors count the reset as frame 1 of their ``max_steps`` = 320 for a
delay of 16, else 1024; the dm_env original ends it with discount 1, i.e. a truncation).

Actions: Discrete(8), 0 = N (up), 1 = NE, 2 = E (right), 3 = SE, 4 = S, 5 = SW, 6 = W, 7 = NW.

Observation (``partial``): ``{"image", "instruction"}`` (the authors' image-and-language tuple as a Dict):
  - image: uint8 (99, 99, 3), the 11 x 11 cells around the agent (egocentric: the agent's cell is the centre
    one, cells beyond the room are black), 9 x 9 pixels per cell: floor black, wall (40, 40, 40), agent white,
    a dancer its shape in its colour on black. A dancer is drawn over the agent (the authors' z-order);
  - instruction: Discrete(14), 0 ("watch") during the dance phase, then the target's dance, 1 … 13 in the
    order circle_cw, circle_ccw, up_and_down, left_and_right, diagonal_uldr, diagonal_urdl, plus_cw,
    plus_ccw, times_cw, times_ccw, zee, chevron_down, chevron_up (MIKASA-Base's ``LANG_DICT``).
``oracle`` adds ``"oracle"``: MultiDiscrete([14] * 8), per home cell the dance code of its dancer once that
dancer has finished its dance (0 before, and where no dancer stands): what a perfect memory of the dance phase
holds; with the instruction it names the target. ``full`` adds to ``partial`` the Markov state: ``"dances"``
(every dancer's dance code per home cell, from the start), ``"order"`` (MultiDiscrete([9] * 8), its rank
1 … n in the dance order, 0 = no dancer), ``"target"`` (Discrete(8), the target's home cell) and
``"time"`` (t / T). ``info["oracle"]`` is the oracle vector in every variant.

Event–recall: the target's dance (16 observations from k·P) and the first effective action (at n·P):
ξ = (n − k)·P − 15, so Ξ = [dance_delay, n·P − 15].

Only the random streams differ from the authors' code. MIKASA-Base reports the time limit as ``terminated`` and its
wrapper crashes when ``max_steps`` is passed; here ``max_steps`` is a kwarg, and a limit that ends before the
instruction appears is one ``ValueError``. Measured: with ``oracle`` (and the instruction) a memoryless policy walks
to the target every time (success 1.0 on Easy, Medium and Hard); on the picture alone it is at chance.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param

#: The dance and its timing, in the authors' pycolab code: every dance is 16 moves; dancer k starts at
#: observation k * (15 + dance_delay) and the instruction appears at observation num_dancers * (15 + dance_delay).
DANCE_LENGTH = 16
PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("num_dancers", "int", 2, low=1, high=8, doc="dancers around the agent, each with its own dance"),
    Param("dance_delay", "int", 8, low=1, doc="steps from the end of one dance to the start of the next (+1)"),
    Param(
        "easy_mode",
        "bool",
        False,
        doc="MIKASA-Base's 'Light' levels: all dancers red, the first num_dancers positions and shapes only",
    ),
    Param(
        "max_steps",
        "int",
        None,
        low=2,
        none_ok=True,
        doc="the authors' frame limit (the episode ends after max_steps - 1 steps); None: 320 if "
        "dance_delay == 16 else 1024",
    ),
)


def frame_limit(dance_delay: int, max_steps: int | None = None) -> int:
    """The authors' frame limit: ``max_steps``, or 320 for a delay of 16 and 1024 otherwise (T = limit - 1)."""
    return (320 if dance_delay == 16 else 1024) if max_steps is None else max_steps


ROOM = 11
CELL = 9  # pixels per cell
CENTRE = 5
HOMES = np.array([(2, 2), (2, 5), (2, 8), (5, 2), (5, 8), (8, 2), (8, 5), (8, 8)], dtype=np.int64)

#: (row, column) step of each action / dance move: N, NE, E, SE, S, SW, W, NW.
MOVES = np.array([(-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1)], dtype=np.int64)
_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")

#: The 13 dances of the authors' code, in their instruction-code order (code = index + 1).
DANCES = {
    "circle_cw": "N E S S W W N N E E S S W W N E",
    "circle_ccw": "N W S S E E N N W W S S E E N W",
    "up_and_down": "N S S N N S S N N S S N N S S N",
    "left_and_right": "E W W E E W W E E W W E E W W E",
    "diagonal_uldr": "NW SE SE NW NW SE SE NW NW SE SE NW NW SE SE NW",
    "diagonal_urdl": "NE SW SW NE NE SW SW NE NE SW SW NE NE SW SW NE",
    "plus_cw": "N S E W S N W E N S E W S N W E",
    "plus_ccw": "N S W E S N E W N S W E S N E W",
    "times_cw": "NE SW SE NW SW NE NW SE NE SW SE NW SW NE NW SE",
    "times_ccw": "NW SE SW NE SE NW NE SW NW SE SW NE SE NW NE SW",
    "zee": "NE W W E E SW NE SW SW E E W W NE SW NE",
    "chevron_down": "NW S SE NE N SW NE SW NE S SW NW N SE NW SE",
    "chevron_up": "SE N NW SW S NE SW NE SW N NE SE S NW SE NW",
}
DANCE_NAMES = tuple(DANCES)
#: The displacement of a dancer after j moves of each dance: (13, 17, 2); row j = 16 is home again.
DANCE_OFFSETS = np.concatenate(
    [
        np.zeros((len(DANCES), 1, 2), dtype=np.int64),
        np.cumsum(MOVES[[[_NAMES.index(m) for m in d.split()] for d in DANCES.values()]], axis=1),
    ],
    axis=1,
)

#: RGB colours of the dancers (the authors' 19, in their order; "red" first).
COLOURS = np.array(
    [
        (255, 0, 0),
        (0, 255, 0),
        (0, 0, 255),
        (128, 0, 128),
        (255, 165, 0),
        (255, 255, 0),
        (128, 64, 0),
        (255, 64, 255),
        (0, 255, 255),
        (0, 100, 0),
        (100, 0, 0),
        (0, 0, 100),
        (100, 100, 0),
        (0, 100, 100),
        (215, 200, 255),
        (255, 210, 170),
        (255, 205, 230),
        (200, 255, 200),
        (255, 255, 200),
    ],
    dtype=np.uint8,
)
WALL_RGB, AGENT_RGB = (40, 40, 40), (255, 255, 255)


def _shape_masks() -> np.ndarray:
    """The authors' 15 dancer shapes as (15, 9, 9) bool masks, in their order."""
    i, j = np.mgrid[:CELL, :CELL]
    h = CELL // 2
    band_r, band_c = abs(i - h) <= 1, abs(j - h) <= 1  # the 3-pixel middle row / column
    left, right, top, bottom = j < 3, j >= CELL - 3, i < 3, i >= CELL - 3
    cross = (abs(i - j) <= 1) | (abs(CELL - 1 - i - j) <= 1)
    r2 = (i - h) ** 2 + (j - h) ** 2
    frame = (np.minimum(i, j) < 2) | (np.maximum(i, j) >= CELL - 2)
    shapes = [
        i >= 2 * abs(j - h),  # triangle
        frame,  # empty_square
        band_r | band_c,  # plus
        ~(band_r | band_c),  # inverse_plus
        cross,  # ex
        ~cross,  # inverse_ex
        r2 <= h * h,  # circle
        abs(r2 - h * h) < 6,  # empty_circle
        band_c | top,  # tee
        band_c | bottom,  # upside_down_tee
        left | right | band_r,  # h
        left | right | bottom,  # u
        left | right | top,  # upside_down_u
        j % 2 == 0,  # vertical_stripes
        i % 2 == 0,  # horizontal_stripes
    ]
    return np.stack(shapes)


SHAPES = _shape_masks()

_HOME_STREAM, _DANCE_STREAM, _COLOUR_STREAM, _SHAPE_STREAM, _TARGET_STREAM = 1, 2, 3, 4, 5
_FLOOR, _WALL, _AGENT, _DANCER0 = 0, 1, 2, 3  # cell codes of the board; dancer k is _DANCER0 + k


class BalletCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, num_dancers: int, dance_delay: int, easy_mode: bool, max_steps: int | None):
        super().__init__(num_envs)
        self.n = int(num_dancers)
        self.delay = int(dance_delay)
        self.easy_mode = bool(easy_mode)
        self.max_steps = frame_limit(self.delay, max_steps)
        self.T = self.max_steps - 1
        self.period = DANCE_LENGTH - 1 + self.delay
        self.choice_start = self.n * self.period  # the first observation showing the instruction
        if self.T <= self.choice_start:
            raise ValueError(
                f"Ballet: max_steps={self.max_steps} leaves no time to choose; the instruction appears after "
                f"{self.choice_start} steps (num_dancers * (15 + dance_delay)), so max_steps must be > "
                f"{self.choice_start + 1}"
            )
        n = self.n
        self.home = np.zeros((num_envs, n), dtype=np.int64)  # index into HOMES
        self.dance = np.zeros((num_envs, n), dtype=np.int64)  # index into DANCES
        self.target = np.zeros(num_envs, dtype=np.int64)  # the target dancer (its rank in the dance order)
        self.agent = np.full((num_envs, 2), CENTRE, dtype=np.int64)
        # Per env, the 9x9 picture of each cell code: floor, wall, agent, dancer 0 … n-1.
        self.tiles = np.zeros((num_envs, _DANCER0 + n, CELL, CELL, 3), dtype=np.uint8)
        self.tiles[:, _WALL] = WALL_RGB
        self.tiles[:, _AGENT] = AGENT_RGB
        self._rows = np.arange(num_envs)
        self._view = np.arange(ROOM)
        walls = np.zeros((ROOM, ROOM), dtype=bool)
        walls[[0, -1], :] = walls[:, [0, -1]] = True
        self._walls = walls
        self.action_space = gym.spaces.Discrete(8)
        image = gym.spaces.Box(0, 255, (ROOM * CELL, ROOM * CELL, 3), np.uint8)
        instruction = gym.spaces.Discrete(len(DANCES) + 1)
        codes = gym.spaces.MultiDiscrete([len(DANCES) + 1] * len(HOMES))
        partial = {"image": image, "instruction": instruction}
        self.obs_spaces = {
            "partial": gym.spaces.Dict(partial),
            "oracle": gym.spaces.Dict({**partial, "oracle": codes}),
            "full": gym.spaces.Dict(
                {
                    **partial,
                    "dances": codes,
                    "order": gym.spaces.MultiDiscrete([9] * len(HOMES)),
                    "target": gym.spaces.Discrete(len(HOMES)),
                    "time": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                }
            ),
        }

    # --- episodes ----------------------------------------------------------------------------------------------
    def _permutations(self, idx: np.ndarray, stream: int, size: int) -> np.ndarray:
        """A uniform permutation of range(size) per environment (sorted uniforms, one counter per item)."""
        u = rng.uniform(
            self.keys[idx][:, None], self.episode[idx][:, None], np.arange(size, dtype=np.uint64)[None, :], stream
        )
        return np.argsort(u, axis=1)

    def _new_episodes(self, idx):
        n = self.n
        pool = n if self.easy_mode else len(HOMES)  # easy mode: the first n homes and shapes only
        self.home[idx] = self._permutations(idx, _HOME_STREAM, pool)[:, :n]
        self.dance[idx] = self._permutations(idx, _DANCE_STREAM, len(DANCES))[:, :n]
        shape = self._permutations(idx, _SHAPE_STREAM, n if self.easy_mode else len(SHAPES))[:, :n]
        if self.easy_mode:
            colour = np.zeros((idx.size, n), dtype=np.int64)  # all red
        else:
            colour = self._permutations(idx, _COLOUR_STREAM, len(COLOURS))[:, :n]
        self.target[idx] = self.integers(idx, _TARGET_STREAM, 0, n, step=0)
        self.agent[idx] = CENTRE
        self.tiles[idx, _DANCER0:] = SHAPES[shape][..., None] * COLOURS[colour][:, :, None, None, :]

    # --- dynamics ----------------------------------------------------------------------------------------------
    def dancer_cells(self, sl, t: np.ndarray) -> np.ndarray:
        """(rows, n, 2) cells of every dancer in the observation after ``t`` steps."""
        k = np.arange(self.n)
        moves = np.clip(t[:, None] - k[None, :] * self.period + 1, 0, DANCE_LENGTH)
        return HOMES[self.home[sl]] + DANCE_OFFSETS[self.dance[sl], moves]

    def step(self, actions, idx=None):
        sl = slice(None) if idx is None else idx
        t = self.t[sl]
        agent = self.agent[sl]
        choosing = t >= self.choice_start
        new = agent + MOVES[actions] * choosing[:, None]
        blocked = self._walls[new[:, 0], new[:, 1]]
        agent = np.where(blocked[:, None], agent, new)
        t = t + 1
        on = (self.dancer_cells(sl, t) == agent[:, None, :]).all(axis=2)  # (rows, n)
        terminated = on.any(axis=1)
        correct = on[np.arange(on.shape[0]), self.target[sl]]
        self.agent[sl] = agent
        self.t[sl] = t
        self.success[sl] = correct
        return correct.astype(np.float64), terminated, ~terminated & (t >= self.T)

    # --- observations ------------------------------------------------------------------------------------------
    def board(self, sl) -> np.ndarray:
        """(rows, 11, 11) cell codes of the room: walls, the agent, the dancers drawn over it."""
        rows = self._rows[sl]
        m = rows.shape[0]
        codes = np.where(self._walls, _WALL, _FLOOR)[None].repeat(m, axis=0)
        local = np.arange(m)
        agent = self.agent[rows]
        codes[local, agent[:, 0], agent[:, 1]] = _AGENT
        cells = self.dancer_cells(rows, self.t[rows])
        codes[local[:, None], cells[..., 0], cells[..., 1]] = _DANCER0 + np.arange(self.n)[None, :]
        return codes

    def image(self, sl) -> np.ndarray:
        rows = self._rows[sl]
        m = rows.shape[0]
        padded = np.full((m, ROOM + 2 * CENTRE, ROOM + 2 * CENTRE), _FLOOR, dtype=np.int64)
        padded[:, CENTRE : CENTRE + ROOM, CENTRE : CENTRE + ROOM] = self.board(rows)
        agent = self.agent[rows]
        r = agent[:, 0, None, None] + self._view[None, :, None]  # padded row of view cell (i, j)
        c = agent[:, 1, None, None] + self._view[None, None, :]
        local = np.arange(m)[:, None, None]
        view = padded[local, r, c]  # (m, 11, 11), the agent at (5, 5)
        pictures = self.tiles[rows[:, None, None], view]  # (m, 11, 11, 9, 9, 3)
        return pictures.transpose(0, 1, 3, 2, 4, 5).reshape(m, ROOM * CELL, ROOM * CELL, 3)

    def instruction(self, sl) -> np.ndarray:
        target_dance = self.dance[sl][np.arange(self.target[sl].shape[0]), self.target[sl]]
        return np.where(self.t[sl] >= self.choice_start, target_dance + 1, 0)

    def _per_home(self, sl, values: np.ndarray) -> np.ndarray:
        """(rows, 8): ``values`` (rows, n) of each dancer written at its home cell, 0 elsewhere."""
        out = np.zeros((values.shape[0], len(HOMES)), dtype=np.int64)
        out[np.arange(values.shape[0])[:, None], self.home[sl]] = values
        return out

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        t = self.t[sl]
        finished = t[:, None] >= np.arange(self.n)[None, :] * self.period + DANCE_LENGTH - 1
        return self._per_home(sl, np.where(finished, self.dance[sl] + 1, 0))

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        obs = {"image": self.image(sl), "instruction": self.instruction(sl)}
        if variant == "oracle":
            obs["oracle"] = self.oracle(idx)
        elif variant == "full":
            m = obs["instruction"].shape[0]
            obs["dances"] = self._per_home(sl, self.dance[sl] + 1)
            obs["order"] = self._per_home(sl, np.broadcast_to(np.arange(1, self.n + 1), (m, self.n)))
            obs["target"] = self.home[sl][np.arange(m), self.target[sl]]
            obs["time"] = (self.t[sl] / self.T).astype(np.float32)[:, None]
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        chars = np.array([" ", "#", "A"] + [chr(ord("a") + k) for k in range(self.n)])
        board = chars[self.board(np.array([i]))[0]]
        target = chr(ord("a") + int(self.target[i]))
        code = int(self.instruction(np.array([i]))[0])
        said = DANCE_NAMES[code - 1] if code else "watch"
        lines = ["".join(row) for row in board]
        dances = ", ".join(f"{chr(ord('a') + k)}={DANCE_NAMES[self.dance[i, k]]}" for k in range(self.n))
        return "\n".join(lines) + f"\n{dances}; target {target}; instruction: {said}\nt={self.t[i]}/{self.T}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The agent's 99x99 view at 3x scale, the instruction code under it (``-`` while watching, the target's
        home outlined in yellow on the view once the instruction is shown), and t / T along the bottom."""
        scale, m = 3, 8
        view = self.image(np.array([i]))[0].repeat(scale, axis=0).repeat(scale, axis=1)
        size = ROOM * CELL * scale
        canvas = draw.Canvas(size + 2 * m + 24, size + 2 * m)
        canvas.pixels[m : m + size, m : m + size] = view
        code = int(self.instruction(np.array([i]))[0])
        if code:
            home = HOMES[self.home[i, self.target[i]]] - self.agent[i] + CENTRE
            if (0 <= home).all() and (home < ROOM).all():
                y0, x0 = m + home[0] * CELL * scale, m + home[1] * CELL * scale
                canvas.outline(x0, y0, x0 + CELL * scale, y0 + CELL * scale, draw.HIGHLIGHT, 2)
        canvas.text(m, m + size + 4, str(code) if code else "-", draw.WHITE, 2)
        canvas.progress(self.t[i] / self.T)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class Ballet(NativeEnv):
    """Ballet (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = BalletCore


class BalletVector(NativeVectorEnv):
    """Ballet, N environments in one numpy step."""

    core_cls = BalletCore
