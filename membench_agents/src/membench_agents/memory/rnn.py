"""Recurrent cores (LSTM, GRU) with episode-start masking and fast whole-sequence training.

Rollouts call a core one step at a time (``T = 1``): the state rows of environments that start an episode
are zeroed, then one fused cell step runs. Updates call it on truncated-BPTT chunks ``[K, B]``:

* without an episode start inside the chunk (after step 0), one fused ``nn.LSTM`` / ``nn.GRU`` call runs
  the whole chunk;
* otherwise every column is cut at its episode starts into segments, and all segments run in ONE packed
  ``nn.LSTM`` / ``nn.GRU`` call (``pack_padded_sequence``): a segment that begins an episode starts from
  the initial state, the first segment of a column starts from the carried state. No gradient crosses an
  episode start, exactly as with a masked step loop, but the time loop runs inside ATen instead of Python
  and no step is computed twice. ``sequence_mode="loop"`` selects the masked step loop instead (same
  numbers; kept as a reference and for tests).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from membench_agents.memory.base import MemoryCore, State, check_sequence

SEQUENCE_MODES = ("auto", "padded", "loop")


class _RNNCore(MemoryCore):
    recurrent = True
    context_length = 1
    rnn_cls: type[nn.RNNBase]
    n_state: int
    keep_gate: int
    #: "auto" pads episode segments unless that computes more than this many times the real steps.
    max_padding_ratio: float = 3.0

    def __init__(self, input_dim: int, hidden_size: int, sequence_mode: str = "auto"):
        super().__init__()
        if sequence_mode not in SEQUENCE_MODES:
            raise ValueError(f"unknown sequence_mode {sequence_mode!r}; valid: {', '.join(SEQUENCE_MODES)}")
        self.rnn = self.rnn_cls(input_dim, hidden_size)
        self.hidden_size = hidden_size
        self.out_dim = hidden_size
        self.sequence_mode = sequence_mode
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Orthogonal weights per gate block (so small raw inputs still move every gate), zero biases
        except +1 on the gate that keeps the old state."""
        H = self.hidden_size
        with torch.no_grad():
            for name, p in self.rnn.named_parameters():
                if "weight" in name:
                    for g in range(p.shape[0] // H):
                        nn.init.orthogonal_(p[g * H : (g + 1) * H])
                else:
                    p.zero_()
            # keep-gate bias +1 (LSTM forget gate, GRU update gate): remember by default at initialisation
            k = self.keep_gate
            self.rnn.bias_hh_l0[k * H : (k + 1) * H] = 1.0

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        if device is None:
            device = self.rnn.weight_ih_l0.device
        dtype = self.rnn.weight_ih_l0.dtype
        return tuple(torch.zeros(batch_size, self.hidden_size, device=device, dtype=dtype) for _ in range(self.n_state))

    # -- subclass hooks -------------------------------------------------------------------------------
    def _cell(self, x: Tensor, state: State) -> State:
        raise NotImplementedError

    def _to_rnn(self, state: State):
        raise NotImplementedError

    def _from_rnn(self, rnn_state) -> State:
        raise NotImplementedError

    def _rnn(self, x: Tensor, hx):
        """``self.rnn(x, hx)``: on CPU the ATen op directly (same kernel, without the module's per-call checks)."""
        r = self.rnn
        if x.device.type != "cpu" or r.num_layers != 1 or r.bidirectional or r.batch_first or r.proj_size:
            return r(x, hx)
        res = self._aten(x, hx, r._flat_weights, r.bias, 1, 0.0, r.training, False, False)
        return res[0], (res[1:] if len(res) == 3 else res[1])  # like the module: (out, (h, c)) or (out, h)

    # -- forward --------------------------------------------------------------------------------------
    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """Rollout fast path: ``x[B, F]``, ``episode_start[B]`` (bool, on x's device) -> (h [B, H], state)."""
        if bool(episode_start.any()):
            keep = (~episode_start).to(x.dtype).unsqueeze(1)
            state = tuple(s * keep for s in state)
        new = self._cell(x, state)
        return new[0], new

    def forward(self, x: Tensor, state: State, episode_start: Tensor, *, need_state: bool = True
                ) -> tuple[Tensor, State]:
        """See :class:`MemoryCore`. ``need_state=False`` may return ``()`` as the state (saves work in updates)."""
        es = check_sequence(x, episode_start)
        if len(state) != self.n_state or state[0].shape != (x.shape[1], self.hidden_size):
            raise ValueError(
                f"{type(self).__name__} state must be {self.n_state} tensor(s) of shape "
                f"[B, H] = [{x.shape[1]}, {self.hidden_size}], got {[tuple(s.shape) for s in state]}"
            )
        T = x.shape[0]
        if bool(es[0].any()):
            keep0 = (~es[0]).to(x.dtype).unsqueeze(1)
            state = tuple(s * keep0 for s in state)
        if T == 1:
            new = self._cell(x[0], state)
            return new[0].unsqueeze(0), new
        mode = self.sequence_mode
        if mode == "loop":
            out, final = self._loop(x, state, es)
            return out, final if need_state else ()
        if not bool(es[1:].any()):
            out, rnn_state = self._rnn(x, self._to_rnn(state))
            return out, self._from_rnn(rnn_state)
        plan = self._plan(es)
        if mode == "auto" and plan[1] * plan[2] > self.max_padding_ratio * T * x.shape[1]:
            out, final = self._loop(x, state, es)  # padding would cost more than the step loop
            return out, final if need_state else ()
        return self._padded(x, state, es, plan, need_state)

    def _loop(self, x: Tensor, state: State, es: Tensor) -> tuple[Tensor, State]:
        keep = (~es).to(x.dtype).unsqueeze(2)
        outs = []
        for t in range(x.shape[0]):
            if t > 0:
                state = tuple(s * keep[t] for s in state)
            state = self._cell(x[t], state)
            outs.append(state[0])
        return torch.stack(outs), state

    def _padded(self, x: Tensor, state: State, es: Tensor, plan, need_state: bool = True) -> tuple[Tensor, State]:
        T, B, F = x.shape
        flat_pos, n_seg, max_len, col, inherit = plan
        init = tuple(s[col] * inherit.to(x.dtype).unsqueeze(1) for s in state)
        x_flat = x.transpose(0, 1).reshape(B * T, F)
        padded = x.new_zeros(max_len * n_seg, F).index_copy(0, flat_pos, x_flat).view(max_len, n_seg, F)
        out, _ = self._rnn(padded, self._to_rnn(init))
        H = out.shape[-1]
        feats = out.reshape(max_len * n_seg, H).index_select(0, flat_pos).view(B, T, H).transpose(0, 1)
        if not need_state:
            return feats, ()
        # The final state: the last segment of every column ends at t = T - 1, so a short masked loop over
        # the tail window (from the earliest "last episode start") gives it exactly, without padding.
        last_start = torch.where(es, torch.arange(T, device=x.device).unsqueeze(1), 0).amax(0)  # [B]
        t0 = int(last_start.min())
        tail_init = state if t0 == 0 else tuple(torch.zeros_like(s) for s in state)
        _, final = self._loop(x[t0:], tail_init, es[t0:])
        return feats, final

    @staticmethod
    def _plan(es: Tensor):
        """Cut every column at its episode starts: flat padded positions, segment count, max length, ..."""
        T, B = es.shape
        starts = es.clone()
        starts[0] = True
        flat_starts = starts.t().reshape(-1)  # column-major: flat index = b * T + t
        seg_id = torch.cumsum(flat_starts, 0) - 1
        start_idx = torch.nonzero(flat_starts).squeeze(1)
        n_seg = start_idx.shape[0]
        ends = torch.cat([start_idx[1:], start_idx.new_tensor([B * T])])
        max_len = int((ends - start_idx).max())
        pos = torch.arange(B * T, device=es.device) - start_idx[seg_id]
        flat_pos = pos * n_seg + seg_id
        col = torch.div(start_idx, T, rounding_mode="floor")
        # Only the first segment of a column that does not begin an episode inherits the carried state.
        inherit = ((start_idx % T) == 0) & ~es[0][col]
        return flat_pos, n_seg, max_len, col, inherit


class LSTMCore(_RNNCore):
    """A one-layer LSTM; state ``(h, c)``, each ``[B, H]``."""

    rnn_cls = nn.LSTM
    _aten = staticmethod(torch.lstm)
    n_state = 2
    keep_gate = 1  # gate order i, f, g, o

    def _cell(self, x: Tensor, state: State) -> State:
        r = self.rnn
        return tuple(torch.lstm_cell(x, state, r.weight_ih_l0, r.weight_hh_l0, r.bias_ih_l0, r.bias_hh_l0))

    def _to_rnn(self, state: State):
        return (state[0].unsqueeze(0).contiguous(), state[1].unsqueeze(0).contiguous())

    def _from_rnn(self, rnn_state) -> State:
        return (rnn_state[0][0], rnn_state[1][0])


class GRUCore(_RNNCore):
    """A one-layer GRU; state ``(h,)``, ``[B, H]``."""

    rnn_cls = nn.GRU
    _aten = staticmethod(torch.gru)
    n_state = 1
    keep_gate = 1  # gate order r, z, n

    def _cell(self, x: Tensor, state: State) -> State:
        r = self.rnn
        return (torch.gru_cell(x, state[0], r.weight_ih_l0, r.weight_hh_l0, r.bias_ih_l0, r.bias_hh_l0),)

    def _to_rnn(self, state: State):
        return state[0].unsqueeze(0).contiguous()

    def _from_rnn(self, rnn_state) -> State:
        return (rnn_state[0],)
