"""Linear-recurrent memory cores: FFM, minGRU and LRU, each a diagonal linear recurrence run by one reset-aware scan.

Every core here maps its inputs to a decay ``a_t`` and an input term ``b_t`` and keeps the state
``h_t = a_t * h_{t-1} + b_t`` (element-wise); its features are a read-out of ``h_t`` and ``x_t``. A whole
``[T, B]`` chunk runs through :func:`membench_agents.nets.memory.scan.linear_scan` in one call, episode starts
included (they zero the decay, which resets the state and stops the gradient there); rollouts take one step of
the same recurrence. ``sequence_mode="loop"`` runs the chunk step by step instead (the reference, same numbers).

* :class:`FFMCore`, Fast and Forgetful Memory (Morad et al. 2023, "Reinforcement Learning with Fast and Forgetful
  Memory"): the state is ``m x c`` complex traces ``S_t = γ ⊙ S_{t-1} + x̃_t 1_c^T`` with the fixed (learned) decay
  ``γ_jk = exp(alpha_j + i ω_k)``, ``alpha_j < 0`` (forgetting) and ``ω_k`` (a period of ``2π / ω_k`` steps: relative
  time); the input ``x̃ = W_v x ⊙ σ(W_i x)``, the features ``LN(W_m [Re S, Im S]) ⊙ σ(W_o x) + W_s x ⊙ (1 - σ(W_o
  x))``. Initialisation as the authors' PyTorch code: ``alpha`` evenly spaced from -0.6732 (its float64 limit for
  1024-step chunks) to ``ln(forgotten_at) / max_period`` (a trace falls to 1 % of an input after ``max_period``
  steps), ``ω_k = 2π / p_k`` with periods ``p`` evenly spaced over ``[min_period, max_period]``; ``alpha`` is kept in
  ``[-0.6832, -1e-8]`` in use, as there (so ``|γ| <= 1``: no trace grows).
* :class:`MinGRUCore`, minGRU (Feng et al. 2024, "Were RNNs All We Needed?"): ``z_t = σ(W_z v_t)``,
  ``h_t = (1 - z_t) ⊙ h_{t-1} + z_t ⊙ g(W_h v_t)`` with the paper's ``g(w) = w + 0.5`` for ``w >= 0``, ``σ(w)``
  otherwise (positive candidates, as its log-space version needs; kept here although this scan takes no logs, so
  the cell is the paper's), in one pre-norm residual layer with an MLP, the layout the paper's models stack:
  ``u = W_e x``, ``v = LN(u)``, ``y = u + h``, features ``y + MLP(LN(y))`` (``MLP``: two layers of width H with a
  GELU). The bare cell (features ``h_t``) did not learn the Passive T-Maze at the test settings (success 0.0 and
  0.53 with seeds 0 and 2) where this layer does (1.0 with both). One more departure: the gate's bias starts at
  ``gate_bias = -3`` (``z ≈ 0.05``: at initialisation each step keeps 95 % of the state, as an LSTM's forget-gate
  bias makes it keep its cell), where ``nn.Linear``'s default (about 0: ``z ≈ 0.5``, a thousandth of a cue left
  after 10 steps) is the paper's. Measured (PPO, Passive T-Maze): the ladder's memory row at L = 10 (3 seeds)
  gave 1.00, 0.47, 1.00 with 0, 1.00 x 3 with -2 and -3; the L = 3 test's settings (seeds 0-4) solved 3 of 5 with
  0 and with -2, 5 of 5 with -3. ``gate_bias=0.0`` builds the paper's initialisation.
* :class:`LRUCore`, the Linear Recurrent Unit (Orvieto et al. 2023, "Resurrecting Recurrent Neural Networks for
  Long Sequences") in the paper's residual block: ``u = W_e x``, ``v = LN(u)``, ``h_t = λ ⊙ h_{t-1} + γ ⊙ (B v_t)``
  (complex, ``λ = exp(-exp(nu) + i exp(θ))``, ``γ = exp(γ_log)``, initialised to ``sqrt(1 - |λ|²)``),
  ``y_t = Re(C h_t) + D ⊙ v_t``, features ``u + W_1 GELU(y) ⊙ σ(W_2 GELU(y))`` (a GLU). Initialisation as the
  paper's code: ``|λ|`` uniform on the ring ``[r_min, r_max] = [0, 1]``, phases uniform in ``[0, max_phase = 6.28]``,
  ``B ~ N(0, 1 / (2 H))``, ``C ~ N(0, 1 / N)`` (real and imaginary parts), ``D ~ N(0, 1)``.

A complex state is kept as real tensors with a trailing ``(real, imaginary)`` dim of 2, so algorithms store,
index, checkpoint and concatenate every core's state the same way (a tuple of float tensors, batch on dim 0).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from membench_agents.nets.memory.base import MemoryCore, State, check_sequence
from membench_agents.nets.memory.scan import linear_scan, linear_scan_loop, reset_decay

LINEAR_SEQUENCE_MODES = ("scan", "loop")


class _LinearRecurrentCore(MemoryCore):
    """The shared machinery: state layout, the scan over a chunk, the one-step path. A subclass gives
    :meth:`_recurrence` (inputs -> decay, input term, what the read-out needs) and :meth:`_readout`."""

    recurrent = True
    context_length = 1
    #: the state per environment, without the trailing (real, imaginary) dim of a complex state
    state_shape: tuple[int, ...]
    complex_state: bool = False

    def __init__(self, sequence_mode: str = "scan"):
        super().__init__()
        if sequence_mode not in LINEAR_SEQUENCE_MODES:
            raise ValueError(f"unknown sequence_mode {sequence_mode!r}; valid: {', '.join(LINEAR_SEQUENCE_MODES)}")
        self.sequence_mode = sequence_mode

    # -- subclass hooks -------------------------------------------------------------------------------
    def _recurrence(self, x: Tensor) -> tuple[Tensor, Tensor, Any]:
        """``x [T, B, F]`` -> (decay ``a`` [T or 1, B or 1, *state_shape], input term ``b`` [T, B, *state_shape],
        what :meth:`_readout` needs besides the state)."""
        raise NotImplementedError

    def _readout(self, h: Tensor, extra: Any) -> Tensor:
        """States ``h [T, B, *state_shape]`` -> features ``[T, B, out_dim]``."""
        raise NotImplementedError

    # -- the interface --------------------------------------------------------------------------------
    @property
    def stored_shape(self) -> tuple[int, ...]:
        """The stored state per environment: ``state_shape``, plus the (real, imaginary) dim of a complex state."""
        return (*self.state_shape, 2) if self.complex_state else self.state_shape

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        p = next(self.parameters())
        return (
            torch.zeros((batch_size, *self.stored_shape), device=p.device if device is None else device, dtype=p.dtype),
        )

    def forward(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """See :class:`MemoryCore`: the whole chunk in one scan (or step by step with ``sequence_mode="loop"``)."""
        es = check_sequence(x, episode_start)
        want = (x.shape[1], *self.stored_shape)
        if len(state) != 1 or tuple(state[0].shape) != want:
            raise ValueError(
                f"{type(self).__name__} state must be one tensor of shape {list(want)}, "
                f"got {[tuple(s.shape) for s in state]}"
            )
        a, b, extra = self._recurrence(x)
        scan = linear_scan if self.sequence_mode == "scan" else linear_scan_loop
        h = scan(a, b, self._to_h(state[0]), es)
        return self._readout(h, extra), (self._from_h(h[-1]),)

    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """One step of the recurrence: ``x[B, F]``, ``episode_start[B]`` -> (features [B, H], state)."""
        a, b, extra = self._recurrence(x.unsqueeze(0))
        h = reset_decay(a, episode_start.unsqueeze(0)) * self._to_h(state[0]) + b
        return self._readout(h, extra)[0], (self._from_h(h[0]),)

    def _to_h(self, s: Tensor) -> Tensor:
        return torch.complex(s[..., 0], s[..., 1]) if self.complex_state else s

    def _from_h(self, h: Tensor) -> Tensor:
        return torch.stack([h.real, h.imag], -1) if self.complex_state else h


# --------------------------------------------------------------------------------------------------------
# FFM
# --------------------------------------------------------------------------------------------------------
#: the authors' decay bounds: float64's exp limit over their 1024-step chunks (less a 0.01 fudge factor)
_FFM_LIMIT = math.log(torch.finfo(torch.float64).max) / 1024 - 0.01


class FFMCore(_LinearRecurrentCore):
    """Fast and Forgetful Memory (see the module docstring).

    Args:
        input_dim, hidden_size: input size F and feature size H.
        memory_size: m, the trace channels (each its own decay).
        context_size: c, the oscillation frequencies per channel (the state is ``m x c`` complex numbers).
        min_period, max_period: the initial periods of the oscillations (steps); ``max_period`` also sets the
            slowest initial decay.
        forgotten_at: the fraction of an input left in the slowest trace after ``max_period`` steps, initially.
    """

    complex_state = True

    def __init__(
        self,
        input_dim: int,
        hidden_size: int,
        memory_size: int = 32,
        context_size: int = 4,
        min_period: float = 1.0,
        max_period: float = 1024.0,
        forgotten_at: float = 0.01,
        sequence_mode: str = "scan",
    ):
        super().__init__(sequence_mode)
        if memory_size < 1 or context_size < 1 or not 0 < min_period <= max_period or not 0 < forgotten_at < 1:
            raise ValueError(
                "FFMCore needs memory_size, context_size >= 1, 0 < min_period <= max_period and "
                f"0 < forgotten_at < 1, got {memory_size}, {context_size}, {min_period}, {max_period}, {forgotten_at}"
            )
        self.memory_size, self.context_size = memory_size, context_size
        self.state_shape = (memory_size, context_size)
        self.out_dim = hidden_size
        # value (m), skip (H), input gate (m), output gate (H): one matmul
        self.pre = nn.Linear(input_dim, 2 * memory_size + 2 * hidden_size)
        low = -_FFM_LIMIT + 0.01
        high = max(min(-1e-6, math.log(forgotten_at) / max_period), low)
        self.alpha = nn.Parameter(torch.linspace(low, high, memory_size))
        self.omega = nn.Parameter(2 * math.pi / torch.linspace(min_period, max_period, context_size))
        self.mix = nn.Linear(2 * memory_size * context_size, hidden_size)
        self.norm = nn.LayerNorm(hidden_size, elementwise_affine=False)

    def decay(self) -> Tensor:
        """``γ [m, c]`` (complex): ``exp(alpha_j + i ω_k)``, ``alpha`` kept in the authors' bounds."""
        alpha = self.alpha.clamp(-_FFM_LIMIT, -1e-8)
        return torch.exp(
            torch.complex(alpha.unsqueeze(1).expand(-1, self.context_size), self.omega.expand(self.memory_size, -1))
        )

    def _recurrence(self, x: Tensor) -> tuple[Tensor, Tensor, Any]:
        m, H = self.memory_size, self.out_dim
        value, skip, gates = self.pre(x).split([m, H, m + H], dim=-1)
        gate_in, gate_out = torch.sigmoid(gates).split([m, H], dim=-1)
        b = torch.complex(value * gate_in, torch.zeros_like(value)).unsqueeze(-1)  # [T, B, m, 1]: every context
        return self.decay()[None, None], b, (skip, gate_out)

    def _readout(self, h: Tensor, extra: Any) -> Tensor:
        skip, gate_out = extra
        z = self.mix(torch.cat([h.real, h.imag], dim=-1).flatten(-2))
        return self.norm(z) * gate_out + skip * (1 - gate_out)


# --------------------------------------------------------------------------------------------------------
# minGRU
# --------------------------------------------------------------------------------------------------------
def _g(v: Tensor) -> Tensor:
    """minGRU's positive activation: ``v + 0.5`` for ``v >= 0``, ``σ(v)`` otherwise (continuous at 0)."""
    return torch.where(v >= 0, v + 0.5, torch.sigmoid(v))


class MinGRUCore(_LinearRecurrentCore):
    """minGRU in the paper's residual layer (see the module docstring): a GRU whose gate and candidate depend on
    the input only. ``gate_bias``: the gate's initial bias (-3: each step keeps about 95 % of the state at first;
    0.0: the paper's initialisation)."""

    def __init__(self, input_dim: int, hidden_size: int, gate_bias: float = -3.0, sequence_mode: str = "scan"):
        super().__init__(sequence_mode)
        H = hidden_size
        self.state_shape = (H,)
        self.out_dim = H
        self.embed = nn.Linear(input_dim, H)
        self.norm = nn.LayerNorm(H)
        self.linear = nn.Linear(H, 2 * H)  # gate and candidate: one matmul
        with torch.no_grad():
            self.linear.bias[:H].fill_(gate_bias)  # z = σ(gate_bias) at first: the state starts long-lived
        self.norm_mlp = nn.LayerNorm(H)
        self.mlp = nn.Sequential(nn.Linear(H, H), nn.GELU(), nn.Linear(H, H))

    def _recurrence(self, x: Tensor) -> tuple[Tensor, Tensor, Any]:
        u = self.embed(x)
        k, v = self.linear(self.norm(u)).chunk(2, dim=-1)
        z = torch.sigmoid(k)
        return 1 - z, z * _g(v), u

    def _readout(self, h: Tensor, extra: Any) -> Tensor:
        y = extra + h
        return y + self.mlp(self.norm_mlp(y))


# --------------------------------------------------------------------------------------------------------
# LRU
# --------------------------------------------------------------------------------------------------------
class LRUCore(_LinearRecurrentCore):
    """The Linear Recurrent Unit in its residual block (see the module docstring).

    Args:
        input_dim, hidden_size: input size F and model width H (the features).
        state_size: N, the complex state's size (default: ``hidden_size``).
        r_min, r_max: the ring ``|λ|`` is drawn from at initialisation.
        max_phase: the largest initial phase of ``λ``.
    """

    complex_state = True

    def __init__(
        self,
        input_dim: int,
        hidden_size: int,
        state_size: int | None = None,
        r_min: float = 0.0,
        r_max: float = 1.0,
        max_phase: float = 6.28,
        sequence_mode: str = "scan",
    ):
        super().__init__(sequence_mode)
        N = hidden_size if state_size is None else state_size
        if N < 1 or not 0 <= r_min < r_max <= 1 or max_phase <= 0:
            raise ValueError(
                f"LRUCore needs state_size >= 1, 0 <= r_min < r_max <= 1 and max_phase > 0, got {N}, {r_min}, "
                f"{r_max}, {max_phase}"
            )
        H = hidden_size
        self.state_shape = (N,)
        self.out_dim = H
        self.embed = nn.Linear(input_dim, H)
        self.norm = nn.LayerNorm(H)
        u1, u2 = torch.rand(N), torch.rand(N)
        self.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(u1 * (r_max**2 - r_min**2) + r_min**2)))
        self.theta_log = nn.Parameter(torch.log(max_phase * u2))
        with torch.no_grad():
            magnitude = torch.exp(-torch.exp(self.nu_log))
            self.gamma_log = nn.Parameter(torch.log(torch.sqrt(1 - magnitude**2)))
        self.B_re = nn.Parameter(torch.randn(N, H) / math.sqrt(2 * H))
        self.B_im = nn.Parameter(torch.randn(N, H) / math.sqrt(2 * H))
        self.C_re = nn.Parameter(torch.randn(H, N) / math.sqrt(N))
        self.C_im = nn.Parameter(torch.randn(H, N) / math.sqrt(N))
        self.D = nn.Parameter(torch.randn(H))
        self.glu = nn.Linear(H, 2 * H)

    def decay(self) -> Tensor:
        """``λ [N]`` (complex): ``exp(-exp(nu) + i exp(θ))``."""
        return torch.exp(torch.complex(-torch.exp(self.nu_log), torch.exp(self.theta_log)))

    def _recurrence(self, x: Tensor) -> tuple[Tensor, Tensor, Any]:
        u = self.embed(x)
        v = self.norm(u)
        scale = torch.exp(self.gamma_log)
        b = torch.complex(F.linear(v, self.B_re) * scale, F.linear(v, self.B_im) * scale)
        return self.decay()[None, None], b, (u, v)

    def _readout(self, h: Tensor, extra: Any) -> Tensor:
        u, v = extra
        y = F.linear(h.real, self.C_re) - F.linear(h.imag, self.C_im) + self.D * v  # Re(C h) + D ⊙ v
        value, gate = self.glu(F.gelu(y)).chunk(2, dim=-1)
        return u + value * torch.sigmoid(gate)


__all__ = ["LINEAR_SEQUENCE_MODES", "FFMCore", "LRUCore", "MinGRUCore"]
