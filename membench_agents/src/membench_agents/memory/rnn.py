"""Recurrent cores (LSTM, GRU) with episode-start masking and fast whole-sequence training.

Rollouts call a core one step at a time (``T = 1``): the state rows of environments that start an episode
are zeroed, then one fused cell step runs. Updates call it on truncated-BPTT chunks ``[K, B]``:

* without an episode start inside the chunk (after step 0), one fused ``nn.LSTM`` / ``nn.GRU`` call runs
  the whole chunk;
* otherwise every column is cut at its episode starts into segments, and all segments run as the columns
  of ONE padded ``[longest segment, segments]`` batch in one ``nn.LSTM`` / ``nn.GRU`` call: a segment that
  begins an episode starts from the initial state, the first segment of a column starts from the carried
  state. No gradient crosses an episode start, exactly as with a masked step loop, but the time loop runs
  inside ATen instead of Python and no step is computed twice (padding steps are zeros whose outputs are
  never read). ``sequence_mode="loop"`` selects the masked step loop instead (same numbers; kept as a
  reference and for tests), and "auto" (the default) falls back to it where padding would cost more.

The segment layout (:class:`_Plan`) is host work; :meth:`_RNNCore.plan_rows` computes it for all the
minibatches of a PPO epoch in one vectorised pass. On the CPU, :meth:`LSTMCore.forward_rows_manual` runs a
planned minibatch through oneDNN's LSTM layer kernels directly (the ones ``torch.lstm`` uses there) and
returns their backward as a function, for callers that write out the rest of their gradient (PPO's
Discrete update): the same numbers without the autograd graph around the kernels. GRUs keep autograd
(ATen's oneDNN RNN path is LSTM-only).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
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
        self._frozen: tuple[Tensor, Tensor] | None = None
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

    @contextlib.contextmanager
    def frozen(self):
        """See :class:`MemoryCore`: on the CPU, cell steps without autograd then use column-major copies of
        the two weight matrices (the cell computes ``h @ w_hh.t()``, which then reads a contiguous matrix:
        ~15% faster steps, the same numbers)."""
        r = self.rnn
        if r.weight_hh_l0.device.type != "cpu":
            yield
            return
        with torch.no_grad():
            self._frozen = (r.weight_ih_l0.t().contiguous().t(), r.weight_hh_l0.t().contiguous().t(),
                            r.bias_ih_l0.detach(), r.bias_hh_l0.detach())
        try:
            yield
        finally:
            self._frozen = None

    def _cell_weights(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        frozen = self._frozen
        if frozen is not None and not torch.is_grad_enabled():
            return frozen
        r = self.rnn
        return r.weight_ih_l0, r.weight_hh_l0, r.bias_ih_l0, r.bias_hh_l0

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
        return self._sequence(x, state, episode_start, need_state, rows=False)[::2]

    def plan_rows(self, episode_start: np.ndarray, sizes: Sequence[int]) -> list[_Plan | None]:
        """See :class:`MemoryCore`: the segment plans of the column groups, computed in one vectorised pass
        (None where :meth:`forward_rows` would not pad: ``sequence_mode="loop"``, or padding that "auto"
        finds too wasteful)."""
        es = np.asarray(episode_start, dtype=bool)
        if self.sequence_mode == "loop" or es.shape[0] == 1:
            return [None] * len(sizes)
        plans: list[_Plan | None] = list(_plans(es, sizes))
        if self.sequence_mode == "auto":
            T = es.shape[0]
            plans = [p if p.n_seg * p.max_len <= self.max_padding_ratio * T * b else None
                     for p, b in zip(plans, sizes, strict=True)]
        return plans

    def forward_rows(self, x: Tensor, state: State, episode_start: Tensor, plan: _Plan | None = None
                     ) -> tuple[Tensor, Tensor | None]:
        """See :class:`MemoryCore`: the padded-segment path returns its padded rows and their index."""
        if plan is None:
            out, index, _ = self._sequence(x, state, episode_start, False, rows=True)
            return out, index
        inp, init, index = _layout(x, state, plan)
        out, _ = self._rnn(inp, self._to_rnn(init))
        return out.reshape(-1, out.shape[-1]), index

    def _sequence(self, x: Tensor, state: State, episode_start: Tensor, need_state: bool, rows: bool
                  ) -> tuple[Tensor, Tensor | None, State]:
        """(features, index, state): features [T, B, H] (index None), or with ``rows`` as in forward_rows."""
        es = check_sequence(x, episode_start)
        if len(state) != self.n_state or state[0].shape != (x.shape[1], self.hidden_size):
            raise ValueError(
                f"{type(self).__name__} state must be {self.n_state} tensor(s) of shape "
                f"[B, H] = [{x.shape[1]}, {self.hidden_size}], got {[tuple(s.shape) for s in state]}"
            )
        T, B = x.shape[:2]
        H = self.hidden_size

        def done(feats, final):
            return (feats.reshape(T * B, H) if rows else feats), None, (final if need_state else ())

        if T == 1:
            if bool(es[0].any()):
                keep0 = (~es[0]).to(x.dtype).unsqueeze(1)
                state = tuple(s * keep0 for s in state)
            new = self._cell(x[0], state)
            return done(new[0].unsqueeze(0), new)
        # the segment plan is built on the host (numpy): a few small arrays, and the sizes it needs
        # (segment count, longest segment) are host numbers anyway
        es_np = es.cpu().numpy()
        if es_np[0].any():
            keep0 = (~es[0]).to(x.dtype).unsqueeze(1)
            state = tuple(s * keep0 for s in state)
        mode = self.sequence_mode
        if mode != "loop" and not es_np[1:].any():
            out, rnn_state = self._rnn(x, self._to_rnn(state))
            return done(out, self._from_rnn(rnn_state))
        plan = _plan(es_np) if mode != "loop" else None
        if plan is None or (mode == "auto" and plan.n_seg * plan.max_len > self.max_padding_ratio * T * B):
            return done(*self._loop(x, state, es))  # the reference path, or padding would cost more than the loop
        out, index, final = self._padded(x, state, (es, es_np) if need_state else None, plan, need_state)
        if rows:
            return out, index, final
        return out.index_select(0, index).view(T, B, H), None, final

    def _loop(self, x: Tensor, state: State, es: Tensor) -> tuple[Tensor, State]:
        keep = (~es).to(x.dtype).unsqueeze(2)
        outs = []
        for t in range(x.shape[0]):
            if t > 0:
                state = tuple(s * keep[t] for s in state)
            state = self._cell(x[t], state)
            outs.append(state[0])
        return torch.stack(outs), state

    def _padded(self, x: Tensor, state: State, es: tuple[Tensor, np.ndarray] | None, plan: _Plan,
                need_state: bool = True) -> tuple[Tensor, Tensor, State]:
        """(padded output rows [max_len * n_seg, H], index of step (t, b) in them [T * B], final state or ());
        ``es`` (the episode starts as a tensor and as a host array) is needed only for the final state."""
        T = x.shape[0]
        padded, init, index = _layout(x, state, plan)
        out, _ = self._rnn(padded, self._to_rnn(init))
        out = out.reshape(-1, out.shape[-1])
        if not need_state:
            return out, index, ()
        # The final state: the last segment of every column ends at t = T - 1, so a short masked loop over
        # the tail window (from the earliest "last episode start") gives it exactly, without padding.
        es, es_np = es
        t0 = int(np.where(es_np, np.arange(T)[:, None], 0).max(0).min())  # earliest last start
        tail_init = state if t0 == 0 else tuple(torch.zeros_like(s) for s in state)
        _, final = self._loop(x[t0:], tail_init, es[t0:])
        return out, index, final


class _Plan(NamedTuple):
    """Every column of a ``[T, B]`` chunk cut at its episode starts into segments, laid out as the columns
    of a padded ``[max_len, n_seg]`` batch (CPU tensors, made from host arrays without copies)."""

    rows: Tensor
    """[T * B] (t-major: entry t * B + b): the padded row (position * n_seg + segment) of step t of column b"""
    n_seg: int
    max_len: int
    col: Tensor
    """[n_seg]: the column each segment belongs to"""
    inherit: Tensor
    """[n_seg] float32: 1 for the first segment of a column that does not begin an episode (it starts from
    the carried state), 0 otherwise (it starts from the initial state)"""


def _plan(es: np.ndarray) -> _Plan:
    return _plans(es, [es.shape[1]])[0]


def _plans(es: np.ndarray, sizes: Sequence[int]) -> list[_Plan]:
    """The plans of consecutive column groups of ``es [T, C]`` (group g: the next ``sizes[g]`` columns), each
    exactly ``_plan(es[:, group])``, from one pass over all columns (PPO plans a whole epoch's minibatches
    at once: the numpy calls are then shared by the minibatches)."""
    T, C = es.shape
    edges = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=edges[1:])
    if edges[-1] != C or (edges[1:] <= edges[:-1]).any():
        raise ValueError(f"group sizes {list(sizes)} must be positive and add up to the {C} columns")
    starts = es.T.copy()  # [C, T]: column-major flat index c * T + t
    starts[:, 0] = True  # every column begins a segment, so no segment crosses a column or a group
    flat = starts.reshape(-1)
    start_idx = np.flatnonzero(flat)  # [S] (global segment order: column by column)
    seg_id = np.cumsum(flat) - 1  # the segment of each step
    col = start_idx // T
    seg_edges = np.searchsorted(col, edges)  # the first segment of each group
    n_seg = np.diff(seg_edges)
    max_len = np.maximum.reduceat(np.diff(start_idx, append=C * T), seg_edges[:-1])
    group = np.repeat(np.arange(len(sizes)), n_seg)  # the group of each segment
    # padded row = position in the segment * (the group's segment count) + the segment's index in its group
    g = group[seg_id]
    rows = ((np.arange(C * T) - start_idx[seg_id]) * n_seg[g] + (seg_id - seg_edges[g])).reshape(C, T)
    inherit = ((start_idx % T == 0) & ~es[0, col]).astype(np.float32)
    local_col = torch.from_numpy(col - edges[group])
    inherit_t = torch.from_numpy(inherit)
    return [
        _Plan(torch.from_numpy(rows[c0:c1].T.reshape(-1)), int(n_seg[i]), int(max_len[i]),
              local_col[s0:s1], inherit_t[s0:s1])
        for i, (c0, c1, s0, s1) in enumerate(zip(edges[:-1], edges[1:], seg_edges[:-1], seg_edges[1:], strict=True))
    ]


def _layout(x: Tensor, state: State, plan: _Plan) -> _Laid:
    """The recurrent kernel's inputs for a planned chunk ``x [T, B, F]`` from ``state``: ``(input,
    initial state, index)``. Padded segments (``index``: the padded row of each step, as in
    :meth:`MemoryCore.forward_rows`), or, when no episode starts after step 0 (one segment per column), the
    chunk itself from the state masked at its step-0 starts (``index`` None)."""
    return _layout_groups(x, state, [plan], [x.shape[1]])[0]


class _Laid(NamedTuple):
    """A planned minibatch laid out for the recurrent kernel (see :func:`_layout`)."""

    input: Tensor
    init: State
    index: Tensor | None


def _layout_groups(x: Tensor, state: State, plans: list[_Plan | None], sizes: Sequence[int]) -> list[_Laid | None]:
    """:func:`_layout` of consecutive column groups of ``x [T, C, F]`` / ``state`` (group g: the next
    ``sizes[g]`` columns, planned by ``plans[g]``), from one index_copy into one zero buffer and one gather
    per state tensor for all of them. A group without a plan gets None (its steps land in spare rows)."""
    T, C, F = x.shape
    if len(plans) != len(sizes) or sum(sizes) != C:
        raise ValueError(f"{len(plans)} plans for groups of sizes {list(sizes)}; x has {C} columns")
    dev = x.device
    dest = torch.empty(T, C, dtype=torch.long)  # the buffer row of every step (t, c)
    cols, inherit, blocks, unplanned = [], [], [], []
    c0 = offset = n_seg = 0
    for plan, b in zip(plans, sizes, strict=True):
        if plan is None:
            blocks.append(None)
            unplanned.append((c0, b))
        else:
            if plan.rows.shape[0] != T * b:
                raise ValueError(f"a plan for {plan.rows.shape[0]} steps, its group has {T} x {b}")
            dest[:, c0 : c0 + b] = plan.rows.view(T, b) + offset
            cols.append(plan.col + c0)
            inherit.append(plan.inherit)
            blocks.append((offset, n_seg, plan, b))
            offset += plan.max_len * plan.n_seg
            n_seg += plan.n_seg
        c0 += b
    if not cols:
        return [None] * len(plans)
    spare = offset
    for c0, b in unplanned:  # steps of unplanned groups: rows of their own after the planned ones, never read
        dest[:, c0 : c0 + b] = torch.arange(spare, spare + T * b).view(T, b)
        spare += T * b
    buffer = x.new_zeros(spare, F).index_copy_(0, dest.view(-1).to(dev), x.reshape(T * C, F))
    keep = torch.cat(inherit).to(device=dev, dtype=x.dtype).unsqueeze(1)
    col = torch.cat(cols).to(dev)
    init_all = tuple(s.index_select(0, col) * keep for s in state)
    out: list[_Laid | None] = []
    for blk in blocks:
        if blk is None:
            out.append(None)
            continue
        off, s0, plan, b = blk
        rows = buffer[off : off + plan.max_len * plan.n_seg].view(plan.max_len, plan.n_seg, F)
        init = tuple(s[s0 : s0 + plan.n_seg] for s in init_all)
        out.append(_Laid(rows, init, None if plan.n_seg == b else plan.rows.to(dev)))
    return out


class LSTMCore(_RNNCore):
    """A one-layer LSTM; state ``(h, c)``, each ``[B, H]``."""

    rnn_cls = nn.LSTM
    _aten = staticmethod(torch.lstm)
    n_state = 2
    keep_gate = 1  # gate order i, f, g, o

    def _cell(self, x: Tensor, state: State) -> State:
        return tuple(torch.lstm_cell(x, state, *self._cell_weights()))

    def _to_rnn(self, state: State):
        return (state[0].unsqueeze(0).contiguous(), state[1].unsqueeze(0).contiguous())

    def _from_rnn(self, rnn_state) -> State:
        return (rnn_state[0][0], rnn_state[1][0])

    def prepare_rows(self, x: Tensor, state: State, plans: list[_Plan | None], sizes: Sequence[int]
                     ) -> list[_Laid | None] | None:
        """See :class:`MemoryCore`: on the CPU (oneDNN's LSTM layer kernels, the ones ``torch.lstm`` runs
        there), every planned minibatch laid out by one gather for all of them (:func:`_layout_groups`)."""
        if (not _MKLDNN_LAYER or not torch.backends.mkldnn.enabled or x.device.type != "cpu"
                or x.dtype != torch.float32 or x.requires_grad or any(s.requires_grad for s in state)):
            return None
        return _layout_groups(x, state, plans, sizes)

    def forward_rows_manual(self, prepared: _Laid):
        """See :class:`MemoryCore`: oneDNN's LSTM layer forward kernel now, its backward kernel in
        ``backward`` (called directly, without the autograd graph around them)."""
        r = self.rnn
        H = self.hidden_size
        params = (r.weight_ih_l0, r.weight_hh_l0, r.bias_ih_l0, r.bias_hh_l0)
        w = [p.detach() for p in params]
        inp, (h0, c0), index = prepared
        with torch.enable_grad():  # oneDNN returns its training workspace only in grad mode (no input needs grad)
            out, hy, cy, workspace = _MKLDNN_LAYER(inp, *w, h0, c0, False, [], _LSTM_MODE, H, 1, True, False, False,
                                                   True)

        def backward(d_rows: Tensor) -> dict[Tensor, Tensor]:
            g = _MKLDNN_LAYER_BACKWARD(inp, *w, h0, c0, out, hy, cy, d_rows.view(out.shape), None, None, False,
                                       _LSTM_MODE, H, 1, True, True, False, [], False, workspace)
            return dict(zip(params, g[1:5], strict=True))  # (d input, d weights ih/hh, d biases ih/hh, d h0, d c0)

        return out.view(-1, H), index, backward


_LSTM_MODE = 2  # oneDNN RNN mode of an LSTM (ATen's enum: RNN_RELU, RNN_TANH, LSTM, GRU)
_MKLDNN_LAYER = getattr(torch.ops.aten, "mkldnn_rnn_layer", None) if torch.backends.mkldnn.is_available() else None
_MKLDNN_LAYER_BACKWARD = getattr(torch.ops.aten, "mkldnn_rnn_layer_backward", None)
if _MKLDNN_LAYER_BACKWARD is None:
    _MKLDNN_LAYER = None


class GRUCore(_RNNCore):
    """A one-layer GRU; state ``(h,)``, ``[B, H]``."""

    rnn_cls = nn.GRU
    _aten = staticmethod(torch.gru)
    n_state = 1
    keep_gate = 1  # gate order r, z, n

    def _cell(self, x: Tensor, state: State) -> State:
        return (torch.gru_cell(x, state[0], *self._cell_weights()),)

    def _to_rnn(self, state: State):
        return state[0].unsqueeze(0).contiguous()

    def _from_rnn(self, rnn_state) -> State:
        return (rnn_state[0],)
