"""Memory cores: one interface (``initial_state``, ``forward(x, state, episode_start)``, ``step``) for every agent.

A core's state is a tuple of tensors, each with the batch on dim 0 (an algorithm may store, index and
concatenate states along that dim without knowing what they hold): ``(h, c)`` for the LSTM, ``(h,)`` for the
GRU and minGRU, ``()`` for the MLP, ``(memory, valid)`` for GTrXL, ``(traces,)`` for FFM and LRU (complex numbers
as a trailing (real, imaginary) dim).

>>> core = make_core("lstm", input_dim=8, hidden_size=32)
>>> state = core.initial_state(4, "cpu")
>>> feats, state = core(torch.zeros(10, 4, 8), state, torch.zeros(10, 4, dtype=torch.bool))
"""

from __future__ import annotations

import torch  # noqa: F401  (used in the doctest)

from membench_agents.nets.memory.base import MemoryCore, MLPCore, State
from membench_agents.nets.memory.gtrxl import GTrXLCore
from membench_agents.nets.memory.linear import LINEAR_SEQUENCE_MODES, FFMCore, LRUCore, MinGRUCore
from membench_agents.nets.memory.rnn import (
    SEQUENCE_MODES,
    GRUCore,
    LSTMCore,
    SegmentPlan,
    layout_segments,
    plan_segments,
)

#: name -> constructor(input_dim, hidden_size, **options)
CORES: dict[str, type[MemoryCore]] = {
    "mlp": MLPCore,
    "lstm": LSTMCore,
    "gru": GRUCore,
    "gtrxl": GTrXLCore,
    "ffm": FFMCore,
    "mingru": MinGRUCore,
    "lru": LRUCore,
}


def make_core(name: str, input_dim: int, hidden_size: int, **kwargs) -> MemoryCore:
    """Build the memory core ``name`` ("mlp": no memory, "lstm", "gru", "gtrxl", "ffm", "mingru", "lru");
    ``kwargs``: its options (GTrXL: n_layers, n_heads, window, ff_size, gate_bias; the others: their constructor's
    keywords)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in CORES:
        raise ValueError(f"unknown memory core {name!r}; valid names: {', '.join(CORES)}")
    if int(input_dim) < 1 or int(hidden_size) < 1:
        raise ValueError(f"input_dim and hidden_size must be >= 1, got {input_dim}, {hidden_size}")
    return CORES[key](int(input_dim), int(hidden_size), **kwargs)


__all__ = [
    "CORES",
    "LINEAR_SEQUENCE_MODES",
    "SEQUENCE_MODES",
    "FFMCore",
    "GRUCore",
    "GTrXLCore",
    "LRUCore",
    "LSTMCore",
    "MLPCore",
    "MemoryCore",
    "MinGRUCore",
    "SegmentPlan",
    "State",
    "layout_segments",
    "make_core",
    "plan_segments",
]
