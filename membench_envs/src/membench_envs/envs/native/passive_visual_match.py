"""Passive Visual Match (Hung et al., "Optimizing agent behavior over long time scales by transporting value",
2019; the passive pycolab version of Ni et al.'s Memory-RL code, which MIKASA-Base registers as
``Passive-VisualMatch-v0``), re-implemented in numpy with the authors' rooms, timing, colours and rewards.

Three phases, each a pycolab game of its own ``*_frames`` frames, chained as a pycolab Story: a phase's first
frame is shown by the step that ends the previous phase, whose last frame is never shown (its reward counts).
With E, D, R = 15, 30, 15 frames: observations 0 … E−2 show the colour phase, E−1 … E+D−3 the apples,
E+D−2 … E+D+R−3 the choice; the episode ends (``terminated``) after T = E + D + R − 3 = 57 steps.

1. Colour phase (7 x 11 room). The agent stands at (2, 5) inside a closed 3 x 3 ring of wall; one ring cell
   (drawn uniformly among 8) shows the target colour. The agent cannot move.
2. Apple phase: a 7 x 11 room (5 x 9 floor); the agent starts at (5, 5), ``num_apples`` apples lie on cells
   drawn among the authors' 22 apple cells. Eating one gives ``apple_reward``; an apple eaten in frame f
   is back from frame f + ``respawn_every`` + 1 on (0: never).
3. Choice phase: the agent starts at (5, 5) at the bottom of a corridor that opens into a 3 x 9 room with
   three pads at (1, 2), (1, 5), (1, 8), one of each colour (red, green, blue). Stepping on a pad removes all
   three; it gives ``final_reward`` if its colour is the target (success), 0 otherwise. The phase runs to its
   end either way.

The pad colours are shuffled once per environment upstream (numpy's unseeded RNG, so nothing is seedable);
here they are drawn from the environment's seed key alone, so they stay the same over the episodes of one
seed stream and differ between seeds. The target colour, the coloured ring cell and the apples are drawn
per episode.

Actions: Discrete(4), 0 = N (up), 1 = S, 2 = W, 3 = E (pycolab's order); walls block.

Observation (``partial``): ``{"image"}``, uint8 (5, 5, 3): the 5 x 5 cells centred on the agent, one pixel per
cell (the authors' RGB, HWC; MIKASA-Base transposes it to CHW and flattens it to 75 numbers), cells beyond
the room in the background grey: background (204, 204, 204), wall (25, 25, 25), agent (228, 148, 109), apple
(140, 178, 0), colours (255, 0, 0), (0, 255, 0), (0, 0, 255). ``oracle`` adds ``"oracle"``: Discrete(3), the
target colour (what the agent must remember; it is in view from the reset on). ``full`` adds the Markov
state: ``"target"``, ``"pads"`` (the colours of the three pads, left to right), ``"board"`` (the whole room of the
current phase as cell codes 0 floor, 1 wall, 2 agent, 3 apple, 4 + colour), ``"respawn"`` (frames until each
eaten apple is back, 0 elsewhere) and ``"time"`` (t / T). ``info["oracle"]`` is the target colour.

Event–recall: the colour is in view in observations 0 … E−2 and the first action of the choice phase (at
E + D − 2) can already head for the pad: ξ = (E + D − 2) − 0 − (E − 1) + 1 = D = 30.

Measured with memoryless scripted policies (300 episodes): success 1.0 with ``oracle`` or ``full``, 0.333 on the
picture alone (chance 1/3).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("num_apples", "int", 10, low=0, high=22, doc="apples in the distractor room (of its 22 apple cells)"),
    Param("apple_reward", "float", 1.0, doc="reward per apple"),
    Param("final_reward", "float", 10.0, doc="reward for stepping on the pad of the remembered colour"),
    Param("respawn_every", "int", 20, low=0, doc="an apple reappears this many frames after it was eaten (0: never)"),
    Param("explore_frames", "int", 15, low=2, doc="frames of the colour phase (the first one is the reset)"),
    Param("distractor_frames", "int", 30, low=2, doc="frames of the apple phase"),
    Param("reward_frames", "int", 15, low=2, doc="frames of the choice phase"),
)


def episode_length(explore_frames: int, distractor_frames: int, reward_frames: int) -> int:
    """T in steps: every phase's last frame is replaced by the next phase's first (pycolab's Story), so 3 fewer."""
    return explore_frames + distractor_frames + reward_frames - 3


ROWS, COLS, VIEW = 7, 11, 5
START = (5, 5)  # the agent's cell in the apple and choice rooms
EXPLORE_AGENT = (2, 5)
FLOOR, WALL, AGENT, APPLE, COLOUR0 = 0, 1, 2, 3, 4  # cell codes; colour c is COLOUR0 + c
#: RGB of each cell code: the authors' 0-1000 colours times 255/1000, truncated to uint8.
PALETTE = np.array(
    [(204, 204, 204), (25, 25, 25), (228, 148, 109), (140, 178, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255)],
    dtype=np.uint8,
)
COLOUR_NAMES = ("red", "green", "blue")

#: Actions (row, column): N, S, W, E.
MOVES = np.array([(-1, 0), (1, 0), (0, -1), (0, 1)], dtype=np.int64)


def _room(rows: list[str]) -> np.ndarray:
    return np.array([[WALL if ch == "#" else FLOOR for ch in row] for row in rows], dtype=np.int64)


#: The apple room, and its 22 apple cells (a checkerboard of the floor, less the agent's start).
APPLE_ROOM = _room(["#" * COLS] + ["#" + " " * (COLS - 2) + "#"] * (ROWS - 2) + ["#" * COLS])
APPLE_CELLS = np.array([(r, c) for r in range(1, 6) for c in range(1, 10) if (r + c) % 2 == 0 and (r, c) != START])
#: The choice room: a 3 x 9 room above a 2-cell corridor (columns 4-6) that holds the agent.
CHOICE_ROOM = _room(
    ["###########", "#         #", "#         #", "#         #", "####   ####", "   #   #   ", "   #####   "]
)
PADS = np.array([(1, 2), (1, 5), (1, 8)], dtype=np.int64)
#: The colour phase: the 8 ring cells around the agent, one of which shows the colour.
RING = np.array([(r, c) for r in (1, 2, 3) for c in (4, 5, 6) if (r, c) != EXPLORE_AGENT], dtype=np.int64)
EXPLORE_ROOM = np.zeros((ROWS, COLS), dtype=np.int64)
EXPLORE_ROOM[RING[:, 0], RING[:, 1]] = WALL

_PADS_STREAM, _TARGET_STREAM, _RING_STREAM, _APPLE_STREAM = 1, 2, 3, 4
_NEVER = np.iinfo(np.int64).max // 2


class PassiveVisualMatchCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(
        self,
        num_envs: int,
        *,
        num_apples: int,
        apple_reward: float,
        final_reward: float,
        respawn_every: int,
        explore_frames: int,
        distractor_frames: int,
        reward_frames: int,
    ):
        super().__init__(num_envs)
        self.num_apples = int(num_apples)
        self.apple_reward = float(apple_reward)
        self.final_reward = float(final_reward)
        self.respawn_every = int(respawn_every)
        self.E, self.D, self.R = int(explore_frames), int(distractor_frames), int(reward_frames)
        self.T = episode_length(self.E, self.D, self.R)
        self.apple_start = self.E - 1  # the first observation of each phase
        self.choice_start = self.E + self.D - 2
        self.target = np.zeros(num_envs, dtype=np.int64)  # colour index
        self.pads = np.zeros((num_envs, 3), dtype=np.int64)  # colour of each pad, left to right
        self.ring = np.zeros(num_envs, dtype=np.int64)  # the coloured ring cell
        self.agent = np.zeros((num_envs, 2), dtype=np.int64)
        self.apples = np.zeros((num_envs, ROWS, COLS), dtype=bool)
        self.eaten_at = np.full((num_envs, ROWS, COLS), _NEVER, dtype=np.int64)  # apple-phase frame, or _NEVER
        self.pads_shown = np.ones(num_envs, dtype=bool)
        self._rows = np.arange(num_envs)
        self._view = np.arange(VIEW)
        self.action_space = gym.spaces.Discrete(4)
        image = gym.spaces.Box(0, 255, (VIEW, VIEW, 3), np.uint8)
        colour = gym.spaces.Discrete(3)
        self.obs_spaces = {
            "partial": gym.spaces.Dict({"image": image}),
            "oracle": gym.spaces.Dict({"image": image, "oracle": colour}),
            "full": gym.spaces.Dict(
                {
                    "image": image,
                    "target": colour,
                    "pads": gym.spaces.MultiDiscrete([3, 3, 3]),
                    "board": gym.spaces.MultiDiscrete(np.full((ROWS, COLS), len(PALETTE))),
                    "respawn": gym.spaces.Box(0.0, float(self.respawn_every + 1), (ROWS, COLS), np.float32),
                    "time": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                }
            ),
        }

    # --- episodes ----------------------------------------------------------------------------------------------
    def _new_episodes(self, idx):
        # The pad colours depend on the key only (episode 0 for every episode): fixed along one seed stream.
        u = rng.uniform(self.keys[idx][:, None], 0, np.arange(3, dtype=np.uint64)[None, :], _PADS_STREAM)
        self.pads[idx] = np.argsort(u, axis=1)
        self.target[idx] = self.integers(idx, _TARGET_STREAM, 0, 3, step=0)
        self.ring[idx] = self.integers(idx, _RING_STREAM, 0, len(RING), step=0)
        u = rng.uniform(
            self.keys[idx][:, None],
            self.episode[idx][:, None],
            np.arange(len(APPLE_CELLS), dtype=np.uint64)[None, :],
            _APPLE_STREAM,
        )
        chosen = APPLE_CELLS[np.argsort(u, axis=1)[:, : self.num_apples]]  # (m, num_apples, 2)
        self.apples[idx] = False
        local = np.arange(idx.size)[:, None]
        self.apples[idx[local], chosen[..., 0], chosen[..., 1]] = True
        self.eaten_at[idx] = _NEVER
        self.pads_shown[idx] = True
        self.agent[idx] = EXPLORE_AGENT

    # --- dynamics ----------------------------------------------------------------------------------------------
    def phase(self, t: np.ndarray) -> np.ndarray:
        """0 colour, 1 apples, 2 choice: the phase of the observation after ``t`` steps."""
        return (t >= self.apple_start).astype(np.int64) + (t >= self.choice_start)

    def step(self, actions, idx=None):
        rows = self._rows if idx is None else idx
        t = self.t[rows]
        phase = self.phase(t)
        reward = np.zeros(rows.shape[0])
        # The move (the colour phase's agent is walled in: it never moves).
        moving = phase > 0
        room = np.where((phase == 2)[:, None, None], CHOICE_ROOM, APPLE_ROOM)
        agent = self.agent[rows]
        new = agent + MOVES[actions]
        local = np.arange(rows.shape[0])
        free = moving & (room[local, new[:, 0], new[:, 1]] != WALL)
        agent = np.where(free[:, None], new, agent)
        # Apple phase: eat, then respawn (the frame produced by this step is f + 1).
        apple = np.flatnonzero(phase == 1)
        if apple.size:
            r, frame = rows[apple], t[apple] - self.apple_start + 2
            ar, ac = agent[apple, 0], agent[apple, 1]
            eat = self.apples[r, ar, ac]
            self.apples[r[eat], ar[eat], ac[eat]] = False
            self.eaten_at[r[eat], ar[eat], ac[eat]] = frame[eat]
            reward[apple[eat]] = self.apple_reward
            if self.respawn_every:
                back = frame[:, None, None] > self.eaten_at[r] + self.respawn_every
                self.apples[r] |= back
        # Choice phase: stepping on a shown pad removes all three.
        choice = np.flatnonzero((phase == 2) & self.pads_shown[rows])
        if choice.size:
            r = rows[choice]
            on = (PADS[None, :, :] == agent[choice, None, :]).all(axis=2)  # (m, 3)
            hit = on.any(axis=1)
            right = on[np.arange(choice.size), np.argmax(self.pads[r] == self.target[r, None], axis=1)]
            reward[choice[right]] = self.final_reward
            self.success[r[right]] = True
            self.pads_shown[r[hit]] = False
        t = t + 1
        # A new phase starts in this step's observation: the agent at the start of its room.
        agent = np.where((t == self.apple_start)[:, None] | (t == self.choice_start)[:, None], START, agent)
        self.agent[rows] = agent
        self.t[rows] = t
        terminated = t >= self.T
        return reward, terminated, np.zeros_like(terminated)

    # --- observations ------------------------------------------------------------------------------------------
    def board(self, sl) -> np.ndarray:
        """(rows, 7, 11) cell codes of the current phase's room."""
        rows = self._rows[sl]
        m = rows.shape[0]
        phase = self.phase(self.t[rows])
        local = np.arange(m)
        board = np.where(
            (phase == 0)[:, None, None], EXPLORE_ROOM, np.where((phase == 1)[:, None, None], APPLE_ROOM, CHOICE_ROOM)
        ).copy()
        colour = phase == 0
        ring = RING[self.ring[rows[colour]]]
        board[local[colour], ring[:, 0], ring[:, 1]] = COLOUR0 + self.target[rows[colour]]
        apples = (phase == 1)[:, None, None] & self.apples[rows]
        board[apples] = APPLE
        pads = np.flatnonzero((phase == 2) & self.pads_shown[rows])
        board[pads[:, None], PADS[None, :, 0], PADS[None, :, 1]] = COLOUR0 + self.pads[rows[pads]]
        agent = self.agent[rows]
        board[local, agent[:, 0], agent[:, 1]] = AGENT
        return board

    def image(self, sl) -> np.ndarray:
        board = self.board(sl)
        m = board.shape[0]
        half = VIEW // 2
        padded = np.full((m, ROWS + 2 * half, COLS + 2 * half), FLOOR, dtype=np.int64)
        padded[:, half : half + ROWS, half : half + COLS] = board
        agent = self.agent[self._rows[sl]]
        r = agent[:, 0, None, None] + self._view[None, :, None]
        c = agent[:, 1, None, None] + self._view[None, None, :]
        return PALETTE[padded[np.arange(m)[:, None, None], r, c]]

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return self.target[sl].copy()

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        obs = {"image": self.image(sl)}
        if variant == "oracle":
            obs["oracle"] = self.oracle(idx)
        elif variant == "full":
            rows = self._rows[sl]
            obs["target"] = self.target[rows].copy()
            obs["pads"] = self.pads[rows].copy()
            obs["board"] = self.board(sl)
            frame = (self.t[rows] - self.apple_start + 1)[:, None, None]
            wait = np.where(
                self.apples[rows] | (self.eaten_at[rows] == _NEVER) | (self.respawn_every == 0),
                0,
                self.eaten_at[rows] + self.respawn_every + 1 - frame,
            )
            in_apples = (self.phase(self.t[rows]) == 1)[:, None, None]
            obs["respawn"] = np.where(in_apples, np.clip(wait, 0, None), 0).astype(np.float32)
            obs["time"] = (self.t[rows] / self.T).astype(np.float32)[:, None]
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def render_ansi(self, i: int) -> str:
        chars = np.array([" ", "#", "A", "a", "R", "G", "B"])
        board = chars[self.board(np.array([i]))[0]]
        phase = ("colour", "apples", "choice")[int(self.phase(self.t[i : i + 1])[0])]
        return (
            "\n".join("".join(row) for row in board)
            + f"\n{phase} phase; target {COLOUR_NAMES[self.target[i]]}\nt={self.t[i]}/{self.T}\n"
        )

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The current phase's whole room (16 px per cell) with the agent's 5 x 5 view outlined in yellow, the
        target colour as a swatch on the right (dim: the agent no longer sees it), and t / T along the bottom."""
        c, m = 16, 8
        board = self.board(np.array([i]))[0]
        canvas = draw.Canvas(ROWS * c + 2 * m + 8, COLS * c + 3 * m + 2 * c)
        canvas.pixels[m : m + ROWS * c, m : m + COLS * c] = PALETTE[board].repeat(c, axis=0).repeat(c, axis=1)
        r0, c0 = self.agent[i] - VIEW // 2
        canvas.outline(m + c0 * c, m + r0 * c, m + (c0 + VIEW) * c, m + (r0 + VIEW) * c, draw.HIGHLIGHT, 2)
        colour = tuple(int(v) for v in PALETTE[COLOUR0 + self.target[i]])
        shown = self.phase(self.t[i : i + 1])[0] == 0 or done
        x0 = m * 2 + COLS * c
        canvas.rect(x0, m, x0 + 2 * c, m + 2 * c, colour if shown else draw.dim(colour))
        canvas.progress(self.t[i] / self.T)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class PassiveVisualMatch(NativeEnv):
    """Passive Visual Match (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = PassiveVisualMatchCore


class PassiveVisualMatchVector(NativeVectorEnv):
    """Passive Visual Match, N environments in one numpy step."""

    core_cls = PassiveVisualMatchCore
