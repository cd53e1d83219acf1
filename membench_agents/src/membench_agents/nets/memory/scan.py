"""The reset-aware scan of a diagonal linear recurrence, shared by the linear-recurrent cores (FFM, minGRU, LRU).

Each of those cores computes, from its inputs, a decay ``a_t`` and an input term ``b_t`` per state element, and
its state follows

    h_t = a_t * h_{t-1} + b_t        (element-wise; real or complex)

An episode start before step ``t`` resets the state: ``h_{t-1}`` is replaced by the initial state, zero. Written
as ``a_t <- 0`` at every episode start, the reset lives inside the recurrence itself, so one scan runs a whole
``[T, B]`` chunk whatever its episode starts (no padding to episode length, no cutting into segments), and no
gradient crosses an episode start: everything before it reaches ``h_t`` through a product that holds that zero.

The pairs ``(a, b)`` compose associatively, ``(a1, b1) then (a2, b2) = (a2 * a1, a2 * b1 + b2)``, so
:func:`linear_scan` computes every prefix in ``ceil(log2 T)`` rounds of whole-tensor operations (the
Hillis-Steele scan: round ``k`` combines each step with the one ``2^k`` before it). It does ``T log T`` work
instead of the loop's ``T``, in a handful of large operations instead of ``T`` small ones; products of decays
are formed directly (no logarithms or division by decays), so a zero decay is exact and nothing overflows.
:func:`linear_scan_loop` is the step-by-step definition, the reference the scan is tested equal to.
"""

from __future__ import annotations

import torch
from torch import Tensor


def reset_decay(a: Tensor, episode_start: Tensor) -> Tensor:
    """``a`` with the decay of every step that starts an episode set to 0: ``a [T, B, ...]``, ``episode_start
    [T, B]`` (bool)."""
    keep = (~episode_start).reshape(*episode_start.shape, *([1] * (a.dim() - 2)))
    return a * keep.to(a.real.dtype if a.is_complex() else a.dtype)


def linear_scan(a: Tensor, b: Tensor, h0: Tensor, episode_start: Tensor) -> Tensor:
    """Every state ``h_t`` (``[T, B, ...]``) of ``h_t = a_t * h_{t-1} + b_t`` from ``h_{-1} = h0 [B, ...]``,
    with ``a_t = 0`` where ``episode_start[t]`` (the reset); ``a`` and ``b`` (one dtype) broadcast to
    ``[T, B, ...]``."""
    a, b = torch.broadcast_tensors(reset_decay(a, episode_start), b)
    b = b.clone()
    b[0] = b[0] + a[0] * h0  # the carried state enters through step 0
    d = 1
    while d < b.shape[0]:
        # each step t >= d absorbs the combined pair ending at t - d: b_t += a_t * b_{t-d}, a_t *= a_{t-d}
        b = torch.cat([b[:d], b[d:] + a[d:] * b[:-d]])
        a = torch.cat([a[:d], a[d:] * a[:-d]])
        d *= 2
    return b


def linear_scan_loop(a: Tensor, b: Tensor, h0: Tensor, episode_start: Tensor) -> Tensor:
    """:func:`linear_scan` one step at a time (the definition)."""
    a = reset_decay(a, episode_start)
    a, b = torch.broadcast_tensors(a, b)
    h, out = h0, []
    for t in range(b.shape[0]):
        h = a[t] * h + b[t]
        out.append(h)
    return torch.stack(out)


__all__ = ["linear_scan", "linear_scan_loop", "reset_decay"]
