"""The memory-core interface shared by every agent.

A core maps a sequence of encoded observations ``x[T, B, F]`` to features ``[T, B, H]`` while carrying a
recurrent state between calls. Before step ``t`` the state of every environment ``b`` with
``episode_start[t, b]`` is reset to the initial state, so nothing leaks from one episode into the next and
nothing leaks between environments of a batch (every operation is row-wise in the batch).

The whole interface is :meth:`MemoryCore.initial_state`, :meth:`MemoryCore.forward` and
:meth:`MemoryCore.step` (which has a default in terms of ``forward``). Algorithms lay out their own
training batches; a core knows nothing about them.
"""

from __future__ import annotations

from typing import cast

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

    def forward(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """Run ``x[T, B, F]`` from ``state``; ``episode_start[T, B]`` (bool or 0/1 float) resets before a step.

        Returns ``(features [T, B, out_dim], final state)``.
        """
        raise NotImplementedError

    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """One step for a batch: ``x[B, F]``, ``episode_start[B]`` (bool) -> (features [B, H], state).

        The result of ``forward`` on a length-1 sequence (this default); cores may override it with a
        leaner path.
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
        self.net = nn.Sequential(
            nn.Linear(input_dim, hidden_size), nn.Tanh(), nn.Linear(hidden_size, hidden_size), nn.Tanh()
        )
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, 2**0.5)
                nn.init.zeros_(m.bias)
        self.out_dim = hidden_size

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        return ()

    def forward(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        check_sequence(x, episode_start)
        return self._mlp(x), ()

    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        return self._mlp(x), ()

    def _mlp(self, x: Tensor) -> Tensor:
        l1, l2 = cast(nn.Linear, self.net[0]), cast(nn.Linear, self.net[2])
        return torch.tanh(F.linear(torch.tanh(F.linear(x, l1.weight, l1.bias)), l2.weight, l2.bias))
