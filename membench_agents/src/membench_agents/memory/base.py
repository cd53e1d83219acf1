"""The memory-core interface shared by every agent.

A core maps a sequence of encoded observations ``x[T, B, F]`` to features ``[T, B, H]`` while carrying a
recurrent state between calls. Before step ``t`` the state of every environment ``b`` with
``episode_start[t, b]`` is reset to the initial state, so nothing leaks from one episode into the next and
nothing leaks between environments of a batch (every operation is row-wise in the batch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

State = tuple[Tensor, ...]


class MemoryCore(nn.Module):
    """Base class of the memory cores.

    Attributes:
        out_dim: size H of the features returned by :meth:`forward`.
        recurrent: whether the core carries a state between steps.
        context_length: K of the memory-classification paper (how many past steps one forward step sees
            directly): 1 for the MLP and for recurrent cores (their memory is the state).
    """

    out_dim: int
    recurrent: bool = False
    context_length: int = 1

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        """The state of ``batch_size`` fresh environments (each tensor has the batch on dim 0)."""
        raise NotImplementedError

    def forward(self, x: Tensor, state: State, episode_start: Tensor, *, need_state: bool = True
                ) -> tuple[Tensor, State]:
        """Run ``x[T, B, F]`` from ``state``; ``episode_start[T, B]`` (bool or 0/1 float) resets before a step.

        Returns ``(features [T, B, out_dim], final state)``. With ``need_state=False`` a core may skip
        computing the final state and return ``()`` instead (PPO updates never use it).
        """
        raise NotImplementedError

    @contextlib.contextmanager
    def frozen(self):
        """A context in which the weights do not change (a rollout, an evaluation): cores may cache
        derived forms of them for faster :meth:`step` calls without autograd. Changing the weights inside
        it is an error the core does not detect."""
        yield

    def plan_rows(self, episode_start: np.ndarray, sizes: Sequence[int]) -> list[Any]:
        """Host-side preparation of :meth:`forward_rows` for several minibatches at once.

        ``episode_start [T, C]`` (a host bool array) holds the episode starts of C sequences; minibatch g
        is the next ``sizes[g]`` columns. Returns one plan per minibatch, to pass to ``forward_rows`` with
        that minibatch's columns (None: nothing to prepare; the base class plans nothing).
        """
        return [None] * len(sizes)

    def forward_rows(self, x: Tensor, state: State, episode_start: Tensor, plan: Any = None
                     ) -> tuple[Tensor, Tensor | None]:
        """The training path: ``forward`` without the final state, with the features left in the layout the
        core computed them in. Returns ``(rows [R, out_dim], index)``: the features of step ``(t, b)`` are
        ``rows[index[t * B + b]]``; ``index`` None means ``R = T * B`` rows in that (t-major) order.

        Per-step layers that follow (the policy/value heads) can then run once per computed row and only
        their outputs, usually much narrower than the features, are put back in step order. ``plan``: this
        minibatch's entry of :meth:`plan_rows` (or None), made from the same episode starts.
        """
        feats, _ = self.forward(x, state, episode_start, need_state=False)
        return feats.reshape(-1, feats.shape[-1]), None

    def prepare_rows(self, x: Tensor, state: State, plans: list[Any], sizes: Sequence[int]) -> list[Any] | None:
        """The inputs of :meth:`forward_rows_manual` for several minibatches at once: ``x [T, C, F]`` and
        ``state`` (C rows) hold the minibatches' columns one after another (minibatch g: the next
        ``sizes[g]`` columns), ``plans`` is :meth:`plan_rows`'s list for them. Returns one entry per
        minibatch (None for a minibatch without a plan), or None where the core has no written-out path (the
        base class; callers then use autograd). ``x`` and ``state`` must not need gradients."""
        return None

    def forward_rows_manual(self, prepared: Any) -> tuple[Tensor, Tensor | None, Callable[[Tensor], dict]]:
        """:meth:`forward_rows` without autograd, for callers that write out the rest of their backward
        pass, from one entry of :meth:`prepare_rows`: ``(rows, index, backward)``, where ``backward(d_rows)``
        returns the gradient of every parameter of the core (a dict keyed by the parameters), the same
        numbers autograd would give."""
        raise NotImplementedError(f"{type(self).__name__} has no written-out backward pass (see prepare_rows)")

    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """One step for a batch: ``x[B, F]``, ``episode_start[B]`` (bool) -> (features [B, H], state).

        Same result as ``forward`` on a length-1 sequence; cores override it with a leaner fast path.
        """
        out, state = self.forward(x.unsqueeze(0), state, episode_start.unsqueeze(0))
        return out[0], state


def check_sequence(x: Tensor, episode_start: Tensor) -> Tensor:
    """Validate shapes; return ``episode_start`` as a bool tensor on ``x``'s device."""
    if x.dim() != 3:
        raise ValueError(f"memory cores take x of shape [T, B, F], got {tuple(x.shape)}")
    if tuple(episode_start.shape) != tuple(x.shape[:2]):
        raise ValueError(
            f"episode_start must have shape [T, B] = {tuple(x.shape[:2])}, got {tuple(episode_start.shape)}"
        )
    if episode_start.dtype != torch.bool:
        episode_start = episode_start != 0
    if episode_start.device != x.device:
        episode_start = episode_start.to(x.device)
    return episode_start


class MLPCore(MemoryCore):
    """No memory: a per-step 2-layer tanh MLP of width ``hidden_size``. Its state is the empty tuple."""

    recurrent = False
    context_length = 1

    def __init__(self, input_dim: int, hidden_size: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_dim, hidden_size), nn.Tanh(),
                                 nn.Linear(hidden_size, hidden_size), nn.Tanh())
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, 2**0.5)
                nn.init.zeros_(m.bias)
        self.out_dim = hidden_size

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        return ()

    def forward(self, x: Tensor, state: State, episode_start: Tensor, *, need_state: bool = True
                ) -> tuple[Tensor, State]:
        check_sequence(x, episode_start)
        return self._mlp(x), ()

    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        return self._mlp(x), ()

    def _mlp(self, x: Tensor) -> Tensor:
        l1, l2 = self.net[0], self.net[2]
        return torch.tanh(F.linear(torch.tanh(F.linear(x, l1.weight, l1.bias)), l2.weight, l2.bias))
