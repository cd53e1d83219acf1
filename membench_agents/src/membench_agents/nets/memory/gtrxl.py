"""GTrXL (Parisotto et al. 2020, "Stabilizing Transformers for Reinforcement Learning") as a memory core.

Architecture (the paper's "GTrXL (GRU)" variant):

* the input ``x`` is embedded by one linear layer to the model width ``D`` (= ``hidden_size``);
* ``n_layers`` blocks, each: ``Y = RelMHA(LN([memory, E]))``, ``E = g1(E, ReLU(Y))``,
  ``Z = MLP(LN(E))``, ``E = g2(E, ReLU(Z))``: layer norm in front of each sub-layer ("identity map
  reordering"), and each residual connection replaced by a GRU-type gate
  ``r = σ(W_r y + U_r x)``, ``z = σ(W_z y + U_z x - b_g)``, ``h = tanh(W_g y + U_g (r ⊙ x))``,
  ``g(x, y) = (1 - z) ⊙ x + z ⊙ h``, with ``b_g = gate_bias`` (2 by default) so that every block starts
  close to the identity;
* a final layer norm; the features have ``out_dim = D``.

Attention and positions: Transformer-XL's relative scheme. The score of query step ``i`` and key step ``j`` is
``((q_i + u) · k_j + (q_i + v) · W_R R_{i-j}) / sqrt(d_head)`` with ``R`` the sinusoid table of the distance
``i - j`` and ``u``, ``v`` learned per head. Attention is causal and limited to a window: query step ``t``
sees steps ``t - window + 1 .. t`` of its own episode, and nothing else.

Memory (the core's ``state``): like Transformer-XL, every layer keeps the inputs it saw at the last
``window - 1`` steps (its memory), and a new step's query attends to those plus itself. The state is the
tuple

* ``memory`` ``[B, n_layers, window - 1, D]``: row ``b``, layer ``l``, slot ``m`` holds the input of layer
  ``l`` at the step ``window - 1 - m`` steps back (oldest slot first);
* ``valid`` ``[B, window - 1]`` (bool): whether that slot holds a step of the current episode.

Both have the batch on dim 0, like every core's state. An episode start clears ``valid`` before its step, so
nothing is attended across an episode boundary, in the memory or inside a sequence (keys of an earlier episode
in the same sequence are masked too). The memory is a constant for the gradient (Transformer-XL's stop-gradient):
the state returned by :meth:`GTrXLCore.forward` is detached.

Receptive field: each layer looks ``window - 1`` steps back, so the output at step ``t`` depends on the inputs
of steps ``t - n_layers * (window - 1) .. t`` (``effective_context`` steps) and on no earlier or later one.
``context_length`` (the memory paper's K: the steps one forward step attends to directly) is ``window``.

Rollout and update see the same context (the scheme PPO uses, nothing PPO-specific here): an algorithm that
stores the state at the start of a chunk of steps and later re-runs the chunk from it with :meth:`forward`
gets, for unchanged parameters, the outputs that :meth:`step` gave one step at a time: inside the chunk the
earlier steps' layer inputs are recomputed (with gradient) instead of read from the memory, and the stored
memory supplies the steps before the chunk. Gradients therefore reach every step of the chunk inside the
window, and the steps before the chunk only through their (constant) memory.
"""

from __future__ import annotations

import inspect
import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from membench_agents.nets.memory.base import MemoryCore, State, check_sequence


def sinusoid_table(n: int, dim: int) -> Tensor:
    """``[n, dim]``: row ``d`` is Transformer's sinusoid encoding of position (here: distance) ``d``."""
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    angles = torch.arange(n, dtype=torch.float32).unsqueeze(1) * inv_freq.unsqueeze(0)
    return torch.cat([angles.sin(), angles.cos()], dim=1)[:, :dim]


class GRUGate(nn.Module):
    """GTrXL's GRU-type gate ``g(x, y)`` on a residual stream ``x`` and a sub-layer output ``y``."""

    def __init__(self, dim: int, gate_bias: float):
        super().__init__()
        self.w = nn.Linear(dim, 3 * dim, bias=False)  # W_r, W_z, W_g on y
        self.u = nn.Linear(dim, 2 * dim, bias=False)  # U_r, U_z on x
        self.u_g = nn.Linear(dim, dim, bias=False)  # U_g on r * x
        self.bias = nn.Parameter(torch.full((dim,), float(gate_bias)))  # b_g

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        wr, wz, wg = self.w(y).chunk(3, dim=-1)
        ur, uz = self.u(x).chunk(2, dim=-1)
        r = torch.sigmoid(wr + ur)
        z = torch.sigmoid(wz + uz - self.bias)
        h = torch.tanh(wg + self.u_g(r * x))
        return (1 - z) * x + z * h


class RelativeAttention(nn.Module):
    """Multi-head attention with Transformer-XL's relative positions over distances ``0 .. max_distance``."""

    def __init__(self, dim: int, n_heads: int, max_distance: int):
        super().__init__()
        self.n_heads, self.d_head = n_heads, dim // n_heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * dim, bias=False)
        self.r = nn.Linear(dim, dim, bias=False)  # W_R
        self.o = nn.Linear(dim, dim, bias=False)
        self.u = nn.Parameter(torch.zeros(n_heads, self.d_head))
        self.v = nn.Parameter(torch.zeros(n_heads, self.d_head))
        self.register_buffer("table", sinusoid_table(max_distance + 1, dim), persistent=False)

    def forward(self, x: Tensor, keys: Tensor, distance: Tensor, allowed: Tensor) -> Tensor:
        """Queries ``x [B, T, D]`` over ``keys [B, S, D]``; ``distance [T, S, distances]`` (the one-hot distance
        of every query-key pair), ``allowed [B, T, S]`` (bool; every query must allow at least itself)
        -> ``[B, T, D]``."""
        B, T, D = x.shape
        S, H, dh = keys.shape[1], self.n_heads, self.d_head
        q = self.q(x).view(B, T, H, dh)
        k, v = self.kv(keys).view(B, S, 2, H, dh).unbind(2)
        r = self.r(self.table.to(x.dtype)).view(-1, H, dh)  # [distances, H, dh]
        content = torch.einsum("bthd,bshd->bhts", q + self.u, k)
        by_distance = torch.einsum("bthd,rhd->bhtr", q + self.v, r)
        # the score of each pair's distance, picked by a product with the one-hot distances (a matmul: no
        # gather, whose backward is nondeterministic on CUDA)
        position = torch.einsum("bhtr,tsr->bhts", by_distance, distance)
        scores = (content + position) * (1.0 / math.sqrt(dh))
        scores = scores.masked_fill(~allowed.unsqueeze(1), float("-inf"))
        out = torch.einsum("bhts,bshd->bthd", torch.softmax(scores, dim=-1), v)
        return self.o(out.reshape(B, T, D))


class GTrXLBlock(nn.Module):
    """One pre-LN, gated GTrXL block (see the module docstring)."""

    def __init__(self, dim: int, n_heads: int, ff_size: int, window: int, gate_bias: float):
        super().__init__()
        self.norm_attn = nn.LayerNorm(dim)
        self.attn = RelativeAttention(dim, n_heads, max_distance=window - 1)
        self.gate_attn = GRUGate(dim, gate_bias)
        self.norm_ff = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff_size), nn.ReLU(), nn.Linear(ff_size, dim))
        self.gate_ff = GRUGate(dim, gate_bias)

    def forward(self, x: Tensor, memory: Tensor, distance: Tensor, allowed: Tensor) -> Tensor:
        """``x [B, T, D]`` (this layer's inputs), ``memory [B, M, D]`` (its inputs at the M steps before)."""
        keys = self.norm_attn(torch.cat([memory, x], dim=1))
        y = self.attn(keys[:, memory.shape[1] :], keys, distance, allowed)
        x = self.gate_attn(x, F.relu(y))
        return self.gate_ff(x, F.relu(self.ff(self.norm_ff(x))))


class GTrXLCore(MemoryCore):
    """GTrXL with a per-layer memory of the last ``window - 1`` steps (see the module docstring).

    Args:
        input_dim: size F of the inputs ``x [T, B, F]``.
        hidden_size: the model width D (``out_dim``); a multiple of ``n_heads``.
        n_layers: GTrXL blocks.
        n_heads: attention heads per block.
        window: steps each attention layer sees (the current one and ``window - 1`` in memory), >= 1.
        ff_size: width of each block's MLP (default: ``hidden_size``).
        gate_bias: initial ``b_g`` of the gates (larger: closer to the identity at initialisation).
    """

    recurrent = True  # it carries a state (the memory) between calls

    def __init__(
        self,
        input_dim: int,
        hidden_size: int,
        n_layers: int = 2,
        n_heads: int = 4,
        window: int = 16,
        ff_size: int | None = None,
        gate_bias: float = 2.0,
    ):
        super().__init__()
        check_options(
            dict(n_layers=n_layers, n_heads=n_heads, window=window, ff_size=ff_size, gate_bias=gate_bias),
            hidden_size,
            "GTrXLCore",
        )
        self.hidden_size = self.out_dim = hidden_size
        self.n_layers, self.n_heads, self.window = n_layers, n_heads, window
        self.context_length = window
        self.effective_context = n_layers * (window - 1) + 1
        self.embed = nn.Linear(input_dim, hidden_size)
        self.blocks = nn.ModuleList(
            GTrXLBlock(hidden_size, n_heads, ff_size or hidden_size, window, gate_bias) for _ in range(n_layers)
        )
        self.norm_out = nn.LayerNorm(hidden_size)

    @property
    def memory_length(self) -> int:
        """M = ``window - 1``: the past steps each layer keeps."""
        return self.window - 1

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        w = self.embed.weight
        device = w.device if device is None else device
        M = self.memory_length
        return (
            torch.zeros(batch_size, self.n_layers, M, self.hidden_size, device=device, dtype=w.dtype),
            torch.zeros(batch_size, M, device=device, dtype=torch.bool),
        )

    def forward(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """See :class:`MemoryCore`; one call runs the whole sequence (every step attends in parallel)."""
        es = check_sequence(x, episode_start)
        T, B = x.shape[:2]
        M = self.memory_length
        want = [(B, self.n_layers, M, self.hidden_size), (B, M)]
        if len(state) != 2 or [tuple(s.shape) for s in state] != want:
            raise ValueError(
                f"GTrXLCore state must be (memory {want[0]}, valid {want[1]}), got {[tuple(s.shape) for s in state]}"
            )
        memory, valid = state
        dev = x.device
        # Episode index of every step, counted from the sequence start: the memory's steps are episode 0, a
        # query sees a key only in its own episode, within the window, not in the future, and valid.
        episode = torch.cumsum(es.long(), dim=0).T  # [B, T]
        key_episode = torch.cat([episode.new_zeros(B, M), episode], dim=1)  # [B, M + T]
        key_valid = torch.cat([valid.to(dev), torch.ones(B, T, dtype=torch.bool, device=dev)], dim=1)
        query_pos = torch.arange(T, device=dev).unsqueeze(1) + M
        distance = query_pos - torch.arange(M + T, device=dev).unsqueeze(0)  # [T, M + T]
        in_window = (distance >= 0) & (distance <= M)
        allowed = in_window & key_valid.unsqueeze(1) & (key_episode.unsqueeze(1) == episode.unsqueeze(2))
        distance = F.one_hot(distance.clamp(0, M), M + 1).to(x.dtype)  # [T, M + T, M + 1]

        h = self.embed(x).transpose(0, 1)  # [B, T, D]
        new_memory = []
        for layer, block in enumerate(self.blocks):
            inputs = torch.cat([memory[:, layer], h], dim=1)  # this layer's inputs, memory steps first
            new_memory.append(inputs[:, T:].detach())  # the last M of them
            h = block(h, memory[:, layer], distance, allowed)
        out = self.norm_out(h).transpose(0, 1)
        # the slots still valid after the sequence: those of the last step's episode
        new_valid = (key_valid & (key_episode == episode[:, -1:]))[:, T:]
        return out, (torch.stack(new_memory, dim=1), new_valid)


#: The keyword arguments of :class:`GTrXLCore` beyond ``input_dim`` and ``hidden_size`` (the keys of a config's
#: GTrXL section), with their defaults.
OPTIONS: dict[str, object] = {
    name: p.default
    for name, p in inspect.signature(GTrXLCore.__init__).parameters.items()
    if name not in ("self", "input_dim", "hidden_size")
}


def check_options(options: dict, hidden_size: int, where: str) -> None:
    """Raise ValueError naming the first bad key of the GTrXL ``options`` (``where``: the prefix of its name)."""
    for key in options:
        if key not in OPTIONS:
            raise ValueError(f"unknown {where} option {key!r}; valid: {', '.join(OPTIONS)}")
    o = {**OPTIONS, **options}

    def integer(name: str, low: int, allow_none: bool = False) -> None:
        v = o[name]
        if allow_none and v is None:
            return
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ValueError(f"{where}.{name} must be an integer >= {low}{' or null' if allow_none else ''}, got {v!r}")

    integer("n_layers", 1)
    integer("n_heads", 1)
    integer("window", 1)
    integer("ff_size", 1, allow_none=True)
    g = o["gate_bias"]
    if isinstance(g, bool) or not isinstance(g, (int, float)) or not math.isfinite(g):
        raise ValueError(f"{where}.gate_bias must be a finite number, got {g!r}")
    if hidden_size % o["n_heads"]:
        raise ValueError(f"{where}.n_heads ({o['n_heads']}) must divide the model width hidden_size ({hidden_size})")
