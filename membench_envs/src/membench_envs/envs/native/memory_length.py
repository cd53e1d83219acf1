"""bsuite MemoryLength (Osband et al., "Behaviour Suite for RL": the ``memory_len`` / ``memory_size``
experiments on the ``memory_chain`` environment), as collected in MIKASA-Base.

Parameters: ``memory_length`` L >= 1 and ``num_bits`` B >= 1. Per episode, B context bits c ∈ {0, 1}^B are
drawn i.i.d. fair, and one query index q uniform in {0, …, B−1}. Actions: 2 (0 or 1).

Timing (bsuite's, reproduced exactly). bsuite computes the observation that a step returns from its step
counter *before* incrementing it, so the observation of the reset and of the first step are identical.
With t = the number of actions taken so far and s = max(t − 1, 0) the step counter the observation shows:

  - o[0] = 1 − s / L: the time channel (1 at reset and after the first action, 1/L when the query is shown,
    0 in the final observation);
  - o[1] = q (the raw index, 0 … B−1) when s = L − 1, else 0: the query is shown in the observation the
    agent answers from (after L actions) and nowhere else;
  - o[2:] = 2c − 1 (±1) when s = 0, else 0: the context, in the reset observation and in the observation
    after the first action.

The episode is T = L + 1 actions long. Actions 1 … L give reward 0; action L + 1 (taken on the observation
that shows the query) is judged: reward +1 if it equals c[q], −1 otherwise, and the episode ends with
``terminated=True, truncated=False`` (MIKASA-Base's adapter reports ``truncated=True`` as well, which tells
an agent to bootstrap from a terminal state: a defect we do not copy). ``info["success"]``: reward == +1.

Variants. ``oracle`` appends the B context bits (±1) to every observation: before the query is revealed
the agent cannot know which bit will be asked, so all of them must be remembered; with the query shown at
o[1] a memoryless policy then answers optimally. ``full`` is the Markov state [t / T, q, 2c − 1].

Event–recall: one pair. The context is observed at t = 0 and again at t = 1 (the duplicated first
observation), so the event lasts Δt = 1 from t_e = 0; the recall is the judged action at t_r = L:
ξ = t_r − t_e − Δt + 1 = L, K̄ = L − 1.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from membench_envs.envs.core import draw, rng
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import OBS_VARIANT, Param

PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("memory_length", "int", 10, low=1, doc="L: steps between the context and the query (T = L + 1)"),
    Param("num_bits", "int", 1, low=1, doc="B: context bits, one of which is queried"),
)


def episode_length(memory_length: int) -> int:
    """T = L + 1 actions; the last one, taken on the observation that shows the query, is judged."""
    return memory_length + 1


_CONTEXT_STREAM, _QUERY_STREAM = 1, 2


class MemoryLengthCore(BatchedCore):
    PARAMS = PARAMS

    def __init__(self, num_envs: int, *, memory_length: int, num_bits: int):
        super().__init__(num_envs)
        self.L = int(memory_length)
        self.B = int(num_bits)
        self.T = episode_length(self.L)
        self.context = np.zeros((num_envs, self.B), dtype=np.int64)
        self.query = np.zeros(num_envs, dtype=np.int64)
        self._bit_ids = np.arange(self.B, dtype=np.uint64)
        self.action_space = gym.spaces.Discrete(2)
        qmax = float(max(self.B - 1, 1))  # the query is 0 … B−1; a bound of 1 for B = 1 keeps low < high
        low = np.array([0.0, 0.0] + [-1.0] * self.B, dtype=np.float32)
        high = np.array([1.0, qmax] + [1.0] * self.B, dtype=np.float32)
        self.obs_spaces = {
            "partial": gym.spaces.Box(low, high, dtype=np.float32),
            "oracle": gym.spaces.Box(
                np.concatenate([low, -np.ones(self.B, np.float32)]),
                np.concatenate([high, np.ones(self.B, np.float32)]),
                dtype=np.float32,
            ),
            "full": gym.spaces.Box(low, high, dtype=np.float32),
        }
        self.oracle_dim = self.B

    def _new_episodes(self, idx):
        # One counter per bit (the bit index stands in for the step), drawn once per episode.
        u = rng.uniform(self.keys[idx][:, None], self.episode[idx][:, None], self._bit_ids[None, :], _CONTEXT_STREAM)
        self.context[idx] = (u < 0.5).astype(np.int64)
        self.query[idx] = self.integers(idx, _QUERY_STREAM, 0, self.B, step=0)

    def step(self, actions, idx=None):
        sl = slice(None) if idx is None else idx
        t = self.t[sl] + 1
        final = t >= self.T
        context, query = self.context[sl], self.query[sl]
        answer = context[np.arange(t.shape[0]), query]
        correct = final & (actions == answer)
        reward = np.where(final, np.where(correct, 1.0, -1.0), 0.0)
        self.t[sl] = t
        self.success[sl] = correct
        return reward, final, np.zeros_like(final)

    def observe(self, variant, idx=None):
        sl = slice(None) if idx is None else idx
        t = self.t[sl]
        n = t.shape[0]
        bits = 2 * self.context[sl] - 1
        if variant == "full":
            out = np.empty((n, 2 + self.B), dtype=np.float32)
            out[:, 0] = t / self.T
            out[:, 1] = self.query[sl]
            out[:, 2:] = bits
            return out
        s = np.maximum(t - 1, 0)
        out = np.zeros((n, 2 + self.B + (self.B if variant == "oracle" else 0)), dtype=np.float32)
        out[:, 0] = 1.0 - s / self.L
        out[:, 1] = np.where(s == self.L - 1, self.query[sl], 0)
        out[:, 2 : 2 + self.B] = np.where((s == 0)[:, None], bits, 0)
        if variant == "oracle":
            out[:, 2 + self.B :] = bits
        return out

    def oracle(self, idx=None):
        sl = slice(None) if idx is None else idx
        return (2 * self.context[sl] - 1).astype(np.float32)

    def render_ansi(self, i: int) -> str:
        bits = "".join("+" if c else "-" for c in self.context[i])
        return f"t={self.t[i]}/{self.T} context={bits} query={self.query[i]}\n"

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """The B context bits as cells labelled 0 / 1 (green for 1, blue for 0), bright while the observation
        shows them (t <= 1) and dim afterwards; the queried bit outlined in yellow, bright once the query is
        shown (t >= L) and dim before; t / T along the bottom."""
        c = draw.cell_size(self.B, 320, 12, 48)
        m = 8
        canvas = draw.Canvas(c + 2 * m + 8, max(self.B * c + 2 * m, 64))
        t = int(self.t[i])
        bits_shown = t <= 1
        query_shown = t >= self.L
        scale = max(c // 12, 1)
        for b in range(self.B):
            x0 = m + b * c
            color = draw.GOOD if self.context[i, b] else draw.HIDDEN
            canvas.rect(x0 + 1, m + 1, x0 + c - 1, m + c - 1, color if bits_shown else draw.dim(color))
            label = draw.WHITE if bits_shown else draw.dim(draw.WHITE)
            canvas.text_centered(x0 + c / 2, m + c / 2, str(int(self.context[i, b])), label, scale)
        q = int(self.query[i])
        highlight = draw.HIGHLIGHT if query_shown else draw.dim(draw.HIGHLIGHT)
        canvas.outline(m + q * c, m, m + (q + 1) * c, m + c, highlight, max(c // 10, 2))
        canvas.progress(t / self.T)
        canvas.border(done, bool(self.success[i]))
        return canvas.image()


class MemoryLength(NativeEnv):
    """bsuite MemoryLength (single environment). Kwargs: :data:`PARAMS`."""

    core_cls = MemoryLengthCore


class MemoryLengthVector(NativeVectorEnv):
    """bsuite MemoryLength, N environments in one numpy step."""

    core_cls = MemoryLengthCore
