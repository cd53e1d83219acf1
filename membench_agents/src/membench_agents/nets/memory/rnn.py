"""Recurrent cores (LSTM, GRU) with episode-start masking and whole-sequence training.

Rollouts call a core one step at a time (:meth:`step`): the state rows of environments that start an
episode are zeroed, then one fused cell step runs (``torch.lstm_cell`` / ``torch.gru_cell``, the ATen ops
behind ``nn.LSTMCell`` / ``nn.GRUCell``, on the ``nn.LSTM`` / ``nn.GRU`` module's own parameters).
Updates call :meth:`forward` on truncated-BPTT chunks ``[T, B]``:

* without an episode start inside the chunk (after step 0), one ``nn.LSTM`` / ``nn.GRU`` call runs the
  whole chunk;
* otherwise every column is cut at its episode starts into segments (:func:`plan_segments`), and all
  segments run as the columns of ONE padded ``[longest segment, segments]`` batch in one ``nn.LSTM`` /
  ``nn.GRU`` call (:func:`layout_segments`): a segment that begins an episode starts from the initial
  state, the first segment of a column starts from the carried state. No gradient crosses an episode
  start, exactly as with a masked step loop, but the time loop runs inside ATen instead of Python and no
  step is computed twice (padding steps are zeros whose outputs are never read).
  ``sequence_mode="loop"`` selects the masked step loop instead (same numbers; kept as a reference and for
  tests), and "auto" (the default) falls back to it where padding would cost more.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np
import torch
from torch import Tensor, nn

from membench_agents.nets.memory.base import MemoryCore, State, check_sequence

SEQUENCE_MODES = ("auto", "padded", "loop")


class SegmentPlan(NamedTuple):
    """Every column of a ``[T, B]`` chunk cut at its episode starts into segments, laid out as the columns
    of a padded ``[max_len, n_seg]`` batch (CPU tensors)."""

    rows: Tensor
    """[T * B] (t-major: entry t * B + b): the padded row (position * n_seg + segment) of step t of column b"""
    n_seg: int
    max_len: int
    col: Tensor
    """[n_seg]: the column each segment belongs to"""
    inherit: Tensor
    """[n_seg] float32: 1 for the first segment of a column that does not begin an episode (it starts from
    the carried state), 0 otherwise (it starts from the initial state)"""


def plan_segments(episode_start: np.ndarray) -> SegmentPlan:
    """The segment plan of a chunk from its episode starts ``[T, B]`` (a host bool array)."""
    es = np.asarray(episode_start, dtype=bool)
    T, B = es.shape
    starts = es.T.copy()  # [B, T]: column-major flat index b * T + t
    starts[:, 0] = True  # every column begins a segment, so no segment crosses a column
    flat = starts.reshape(-1)
    start_idx = np.flatnonzero(flat)  # the first step of each segment, segments column by column
    seg_id = np.cumsum(flat) - 1  # the segment of each step
    n_seg = len(start_idx)
    max_len = int(np.diff(start_idx, append=B * T).max())
    position = np.arange(B * T) - start_idx[seg_id]
    rows = (position * n_seg + seg_id).reshape(B, T).T.reshape(-1)  # t-major
    col = start_idx // T
    inherit = ((start_idx % T == 0) & ~es[0, col]).astype(np.float32)
    return SegmentPlan(torch.from_numpy(rows), n_seg, max_len, torch.from_numpy(col), torch.from_numpy(inherit))


def layout_segments(x: Tensor, state: State, plan: SegmentPlan) -> tuple[Tensor, State, Tensor]:
    """The padded batch of a planned chunk ``x [T, B, F]`` starting from ``state`` (B rows): ``(input
    [max_len, n_seg, F], initial state (n_seg rows), index [T * B])``; the output row of step ``(t, b)``
    in the flattened ``[max_len * n_seg]`` output is ``index[t * B + b]``."""
    T, B, F = x.shape
    dev = x.device
    index = plan.rows.to(dev)
    padded = x.new_zeros(plan.max_len * plan.n_seg, F).index_copy_(0, index, x.reshape(T * B, F))
    keep = plan.inherit.to(device=dev, dtype=x.dtype).unsqueeze(1)
    col = plan.col.to(dev)
    init = tuple(s.index_select(0, col) * keep for s in state)
    return padded.view(plan.max_len, plan.n_seg, F), init, index


class _RNNCore(MemoryCore):
    recurrent = True
    context_length = 1
    rnn_cls: type[nn.LSTM] | type[nn.GRU]
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
            bias_hh = self._weights()[3]
            bias_hh[k * H : (k + 1) * H] = 1.0

    def initial_state(self, batch_size: int, device: torch.device | str | None = None) -> State:
        weight_ih = self._weights()[0]
        if device is None:
            device = weight_ih.device
        dtype = weight_ih.dtype
        return tuple(torch.zeros(batch_size, self.hidden_size, device=device, dtype=dtype) for _ in range(self.n_state))

    # -- subclass hooks -------------------------------------------------------------------------------
    def _cell(self, x: Tensor, state: State) -> State:
        """One cell step from ``state`` (no masking)."""
        raise NotImplementedError

    def _to_rnn(self, state: State):
        """``state`` as the ``hx`` argument of ``self.rnn``."""
        raise NotImplementedError

    def _from_rnn(self, rnn_state) -> State:
        raise NotImplementedError

    def _weights(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        r = self.rnn  # torch registers the layer-0 parameters by name: untyped attributes
        return cast(tuple[Tensor, Tensor, Tensor, Tensor], (r.weight_ih_l0, r.weight_hh_l0, r.bias_ih_l0, r.bias_hh_l0))

    # -- forward --------------------------------------------------------------------------------------
    def step(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """Rollout path: ``x[B, F]``, ``episode_start[B]`` (bool, on x's device) -> (h [B, H], state)."""
        if bool(episode_start.any()):
            keep = (~episode_start).to(x.dtype).unsqueeze(1)
            state = tuple(s * keep for s in state)
        new = self._cell(x, state)
        return new[0], new

    def forward(self, x: Tensor, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """See :class:`MemoryCore`."""
        es = check_sequence(x, episode_start)
        if len(state) != self.n_state or state[0].shape != (x.shape[1], self.hidden_size):
            raise ValueError(
                f"{type(self).__name__} state must be {self.n_state} tensor(s) of shape "
                f"[B, H] = [{x.shape[1]}, {self.hidden_size}], got {[tuple(s.shape) for s in state]}"
            )
        T, B = x.shape[:2]
        if T == 1:
            h, state = self.step(x[0], state, es[0])
            return h.unsqueeze(0), state
        es_np = es.cpu().numpy()  # the segment plan is host work (a few small arrays)
        if es_np[0].any():
            keep0 = (~es[0]).to(x.dtype).unsqueeze(1)
            state = tuple(s * keep0 for s in state)
        if self.sequence_mode != "loop" and not es_np[1:].any():  # no episode start inside: one plain call
            out, rnn_state = self.rnn(x, self._to_rnn(state))
            return out, self._from_rnn(rnn_state)
        if self.sequence_mode == "loop":
            return self._loop(x, state, es)
        plan = plan_segments(es_np)
        if self.sequence_mode == "auto" and plan.n_seg * plan.max_len > self.max_padding_ratio * T * B:
            return self._loop(x, state, es)  # padding would cost more than the loop
        padded, init, index = layout_segments(x, state, plan)
        out, _ = self.rnn(padded, self._to_rnn(init))
        feats = out.reshape(-1, self.hidden_size).index_select(0, index).view(T, B, self.hidden_size)
        # The final state: the last segment of every column ends at t = T - 1, so a short masked loop over
        # the tail window (from the earliest "last episode start") gives it exactly, without padding.
        t0 = int(np.where(es_np, np.arange(T)[:, None], 0).max(0).min())
        tail_init = state if t0 == 0 else tuple(torch.zeros_like(s) for s in state)
        _, final = self._loop(x[t0:], tail_init, es[t0:])
        return feats, final

    def _loop(self, x: Tensor, state: State, es: Tensor) -> tuple[Tensor, State]:
        """The masked step loop (the reference): reset before every step t > 0 that starts an episode."""
        keep = (~es).to(x.dtype).unsqueeze(2)
        outs = []
        for t in range(x.shape[0]):
            if t > 0:
                state = tuple(s * keep[t] for s in state)
            state = self._cell(x[t], state)
            outs.append(state[0])
        return torch.stack(outs), state


class LSTMCore(_RNNCore):
    """A one-layer LSTM; state ``(h, c)``, each ``[B, H]``."""

    rnn_cls = nn.LSTM
    n_state = 2
    keep_gate = 1  # gate order i, f, g, o

    def _cell(self, x: Tensor, state: State) -> State:
        return tuple(torch.lstm_cell(x, state, *self._weights()))

    def _to_rnn(self, state: State):
        return (state[0].unsqueeze(0).contiguous(), state[1].unsqueeze(0).contiguous())

    def _from_rnn(self, rnn_state) -> State:
        return (rnn_state[0][0], rnn_state[1][0])


class GRUCore(_RNNCore):
    """A one-layer GRU; state ``(h,)``, ``[B, H]``."""

    rnn_cls = nn.GRU
    n_state = 1
    keep_gate = 1  # gate order r, z, n

    def _cell(self, x: Tensor, state: State) -> State:
        return (torch.gru_cell(x, state[0], *self._weights()),)

    def _to_rnn(self, state: State):
        return state[0].unsqueeze(0).contiguous()

    def _from_rnn(self, rnn_state) -> State:
        return (rnn_state[0],)
