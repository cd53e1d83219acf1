"""Memory Cards (Esslinger et al., "Deep Transformer Q-Networks for Partially Observable RL"; the DTQN
repository's ``Memory-5-v0``, collected by MIKASA-Base as ``MemoryCards-v0`` with 5/10/30-pair presets).

Cards. ``num_pairs`` P >= 1 pairs: 2P face-down cards at positions 0 … 2P−1 holding the values 1 … P, each
twice, shuffled uniformly every episode. Exactly one card is face up (the *current* card).

Observation (``partial``, DTQN's encoding): a vector of 2P integers, MultiDiscrete([P + 2] * 2P):
0 = face down, 1 … P = the value of the current (face-up) card, P + 1 = removed.

Actions: Discrete(2P), the position of the card the agent claims is the current card's partner.
  - the partner: both cards are removed, reward 0;
  - anything else (the current card itself, a removed card, a non-matching card): the current card is
    turned face down again, reward −1.
Then, unless every card is removed, a new current card is drawn uniformly among the cards not removed
(it can be the card just turned down). The card the agent points at is never shown.

Episode end. All pairs removed: ``terminated=True``, ``info["success"]=True`` (DTQN's ``is_success``). The
time limit ``time_limit`` (default 10·P, i.e. DTQN's 50 steps for its 5-pair task) ends the episode with
``truncated=True`` and ``success=False``. MIKASA-Base registers the task with no time limit at all, so an
agent that never matches would run forever; DTQN's own registration has the 50-step limit, which we keep
and scale with P for the larger presets. The return is −(number of wrong guesses), at most 0.

Variants. ``oracle`` appends the values of the cards that have been face up at least once this episode and
are not removed (0 elsewhere), MultiDiscrete([P + 1] * 2P): exactly what a perfect memory holds, so a
memoryless policy with it plays as well as the best agent with memory (it must still guess when the
partner of the current card has never been seen). ``full`` appends the values of all 2P cards to the
partial observation (which already shows what is removed and which card is face up): the Markov state
of the game (the time limit is a truncation, not part of the task). ``info["oracle"]`` is the oracle vector.

Event–recall (memory-classification paper, Table 2): a card seen at step t_e is recalled when its partner
comes up at t_r > t_e; the shortest delay is one step (ξ = 2), the longest the whole episode, Ξ = [2, T].

The rewards are the DTQN code's (its docstring says +1 for a match; the code pays 0). The memory paper specifies 5
pairs (``MemoryCards-v0``); the 10- and 30-pair presets come from MIKASA-Base's code.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("num_pairs", "int", 5, low=1, doc="P: pairs of cards (2P cards)"),
    Param("time_limit", "int", None, low=1, none_ok=True, doc="T; None: 10 * num_pairs"),
)


def episode_length(num_pairs: int, time_limit: int | None = None) -> int:
    """T: ``time_limit``, or 10 steps per pair (DTQN's Memory-5-v0 limit of 50 for 5 pairs, scaled)."""
    return 10 * num_pairs if time_limit is None else time_limit


_SHUFFLE_STREAM, _REVEAL_STREAM = 1, 2


class MemoryCardsCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, num_pairs: int, time_limit: int | None):
        super().__init__(num_envs)
        self.P = int(num_pairs)
        self.C = 2 * self.P
        self.T = episode_length(self.P, time_limit)
        self.hidden, self.removed_code = 0, self.P + 1
        self.deck = np.repeat(np.arange(1, self.P + 1, dtype=np.int64), 2)
        self.values = np.zeros((num_envs, self.C), dtype=np.int64)
        self.removed = np.zeros((num_envs, self.C), dtype=bool)
        self.seen = np.zeros((num_envs, self.C), dtype=bool)
        self.current = np.zeros(num_envs, dtype=np.int64)
        self._all = np.arange(num_envs)
        self._card_ids = np.arange(self.C, dtype=np.uint64)
        self.action_space = gym.spaces.Discrete(self.C)
        partial = [self.P + 2] * self.C
        values = [self.P + 1] * self.C
        self.obs_spaces = {
            "partial": gym.spaces.MultiDiscrete(partial),
            "oracle": gym.spaces.MultiDiscrete(partial + values),
            "full": gym.spaces.MultiDiscrete(partial + values),
        }
        self.oracle_dim = self.C

    def _new_episodes(self, idx):
        # A uniform shuffle: sort 2P uniforms (one counter per card position).
        u = rng.uniform(self.keys[idx][:, None], self.episode[idx][:, None], self._card_ids[None, :], _SHUFFLE_STREAM)
        self.values[idx] = self.deck[np.argsort(u, axis=1)]
        self.removed[idx] = False
        self.seen[idx] = False
        self._reveal(idx)

    def _reveal(self, idx: np.ndarray) -> None:
        """Turn up a card drawn uniformly among those not removed, in environments ``idx``."""
        if idx.size == 0:
            return
        avail = ~self.removed[idx]
        k = avail.sum(axis=1)
        r = np.minimum((self.uniform(idx, _REVEAL_STREAM) * k).astype(np.int64), k - 1)
        cur = np.argmax(np.cumsum(avail, axis=1) > r[:, None], axis=1)
        self.current[idx] = cur
        self.seen[idx, cur] = True

    def step(self, actions, idx=None):
        rows = self._all if idx is None else idx
        local = np.arange(rows.shape[0])
        values, removed, cur = self.values[rows], self.removed[rows], self.current[rows]
        match = (actions != cur) & (values[local, actions] == values[local, cur])
        hit = local[match]
        removed[hit, actions[match]] = True
        removed[hit, cur[match]] = True
        t = self.t[rows] + 1
        terminated = removed.all(axis=1)
        truncated = ~terminated & (t >= self.T)
        self.removed[rows] = removed
        self.t[rows] = t
        self.success[rows] = terminated
        self._reveal(rows[~terminated])
        return np.where(match, 0.0, -1.0), terminated, truncated

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        removed, cur, values = self.removed[sl], self.current[sl], self.values[sl]
        n = cur.shape[0]
        width = self.C if variant == "partial" else 2 * self.C
        out = np.zeros((n, width), dtype=np.int64)
        part = out[:, : self.C]
        part[removed] = self.removed_code
        local = np.arange(n)
        face_up = ~removed[local, cur]
        part[local[face_up], cur[face_up]] = values[local[face_up], cur[face_up]]
        if variant == "full":
            out[:, self.C :] = values
        elif variant == "oracle":
            out[:, self.C :] = np.where(self.seen[sl] & ~removed, values, 0)
        return out

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return np.where(self.seen[sl] & ~self.removed[sl], self.values[sl], 0)

    def render_ansi(self, i: int) -> str:
        cells = []
        for j in range(self.C):
            if self.removed[i, j]:
                cells.append(" .")
            elif j == self.current[i]:
                cells.append(f"[{self.values[i, j]}]")
            else:
                cells.append(" #")
        return " ".join(cells) + f"\nt={self.t[i]}/{self.T}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The 2P cards in rows of up to 10: the face-up card white with its value, a band in the value's colour and a
        yellow outline; face-down cards blue, with their value in dim digits (the hidden state; lighter blue
        once seen this episode); removed cards as empty outlines; t / T along the bottom."""
        cols = min(self.C, 10)
        rows = -(-self.C // cols)
        w, h, gap, m = 28, 36, 6, 8
        canvas = draw.Canvas(rows * (h + gap) - gap + 2 * m + 8, cols * (w + gap) - gap + 2 * m)
        cur = int(self.current[i])
        for j in range(self.C):
            x0 = m + (j % cols) * (w + gap)
            y0 = m + (j // cols) * (h + gap)
            value = str(int(self.values[i, j]))
            if self.removed[i, j]:
                canvas.outline(x0, y0, x0 + w, y0 + h, draw.WALL, 2)
            elif j == cur:
                canvas.rect(x0, y0, x0 + w, y0 + h, draw.WHITE)
                canvas.rect(x0, y0, x0 + w, y0 + 6, draw.palette(int(value)))
                canvas.outline(x0 - 2, y0 - 2, x0 + w + 2, y0 + h + 2, draw.HIGHLIGHT, 2)
                canvas.text_centered(x0 + w / 2, y0 + h / 2 + 2, value, draw.TEXT, 2)
            else:
                back = draw.HIDDEN if self.seen[i, j] else draw.dim(draw.HIDDEN, 0.7)
                canvas.rect(x0, y0, x0 + w, y0 + h, back)
                canvas.text_centered(x0 + w / 2, y0 + h / 2, value, draw.dim(draw.WHITE, 0.55), 2)
        canvas.progress(self.t[i] / self.T)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class MemoryCards(NativeEnv):
    """Memory Cards (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = MemoryCardsCore


class MemoryCardsVector(NativeVectorEnv):
    """Memory Cards, N environments in one numpy step."""

    core_cls = MemoryCardsCore
