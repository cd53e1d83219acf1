"""The linear-recurrent cores (FFM, minGRU, LRU): their shared reset-aware scan against the step-by-step definition,
and each core's initialisation as its paper's code has it. What every recurrent core must do (episode starts, batch
isolation, gradients, step = forward) is tested on these cores too, in tests/agents/test_memory_cores.py."""

from __future__ import annotations

import math

import pytest
import torch
from membench_agents.nets.memory import FFMCore, LRUCore, MinGRUCore, make_core
from membench_agents.nets.memory.linear import _g
from membench_agents.nets.memory.scan import linear_scan, linear_scan_loop


def test_the_step_loop_is_the_recurrence_with_resets():
    """h_t = a h_{t-1} + b, the carried state replaced by zero where an episode starts."""
    a, b = torch.full((4, 1, 1), 0.5), torch.ones(4, 1, 1)
    es = torch.tensor([[False], [False], [True], [False]])
    h = linear_scan_loop(a, b, torch.ones(1, 1), es)
    torch.testing.assert_close(h.flatten(), torch.tensor([1.5, 1.75, 1.0, 1.5]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
@pytest.mark.parametrize("T", [1, 2, 7, 33])
@pytest.mark.parametrize("shared_decay", [False, True])
def test_the_scan_equals_the_step_loop_with_episode_starts_anywhere(dtype, T, shared_decay):
    """Random decays (|a| <= 1; one per step and environment, or one for all as FFM and LRU have), random inputs
    and carried state, episode starts at random steps (the first included): every state agrees."""
    g = torch.Generator().manual_seed(T)
    B, N = 6, 5

    def rand(*shape):
        x = torch.rand(*shape, generator=g) * 2 - 1
        return torch.complex(x, torch.rand(*shape, generator=g) * 2 - 1) / 2 if dtype.is_complex else x

    a = rand(1, 1, N) if shared_decay else rand(T, B, N)
    b, h0 = rand(T, B, N), rand(B, N)
    es = torch.rand(T, B, generator=g) < 0.25
    es[0, 0] = True
    torch.testing.assert_close(linear_scan(a, b, h0, es), linear_scan_loop(a, b, h0, es))


@pytest.mark.parametrize("core_cls", [FFMCore, MinGRUCore, LRUCore])
def test_the_sequence_modes_are_checked(core_cls):
    with pytest.raises(ValueError, match=r"unknown sequence_mode 'padded'; valid: scan, loop"):
        core_cls(4, 8, sequence_mode="padded")


def test_ffm_starts_from_the_authors_decays_and_periods():
    """Decay rates evenly spaced from -0.6732 to ln(0.01) / max_period, periods evenly spaced over [min, max]; in
    use the decay stays in the authors' bounds, so |γ| <= 1."""
    core = FFMCore(4, 8, memory_size=5, context_size=3, min_period=2, max_period=100)
    assert core.alpha[0].item() == pytest.approx(-(math.log(torch.finfo(torch.float64).max) / 1024 - 0.01) + 0.01)
    assert core.alpha[0].item() == pytest.approx(-0.6732, abs=1e-4)
    assert core.alpha[-1].item() == pytest.approx(math.log(0.01) / 100)
    torch.testing.assert_close(core.omega, 2 * math.pi / torch.tensor([2.0, 51.0, 100.0]))
    with torch.no_grad():
        core.alpha.fill_(5.0)  # pushed out of bounds by a step of the optimiser
    assert torch.all(core.decay().abs() <= 1)  # (exp(-1e-8) is 1 in float32: no growth, never a blow-up)
    assert core.initial_state(2)[0].shape == (2, 5, 3, 2)  # m x c complex numbers as (real, imaginary)
    with pytest.raises(ValueError, match="FFMCore needs"):
        FFMCore(4, 8, memory_size=0)


def test_lru_starts_on_the_ring_with_normalised_inputs():
    torch.manual_seed(0)
    core = LRUCore(4, 8, state_size=64, r_min=0.5, r_max=0.9, max_phase=1.0)
    magnitude, phase = core.decay().abs(), torch.exp(core.theta_log)
    assert torch.all((magnitude >= 0.5 - 1e-6) & (magnitude <= 0.9 + 1e-6))
    assert torch.all((phase >= 0) & (phase <= 1.0))
    torch.testing.assert_close(torch.exp(core.gamma_log), torch.sqrt(1 - magnitude.detach() ** 2))
    assert core.initial_state(2)[0].shape == (2, 64, 2)
    with pytest.raises(ValueError, match="LRUCore needs"):
        LRUCore(4, 8, r_min=0.9, r_max=0.5)


def test_mingru_candidates_are_positive_and_g_is_continuous():
    v = torch.linspace(-20, 20, 401)
    assert torch.all(_g(v) > 0)
    assert _g(torch.tensor(0.0)).item() == 0.5 == torch.sigmoid(torch.tensor(0.0)).item()
    core = make_core("mingru", 4, 8)
    a, b, _ = core._recurrence(torch.randn(3, 2, 4))
    assert torch.all((a > 0) & (a < 1)) and torch.all(b > 0)


def test_mingru_gate_starts_long_lived_and_zero_bias_is_the_papers_init():
    """The gate's bias starts at -3: at initialisation the mean decay 1 - z is near 1 - σ(-3) ≈ 0.95 (the default
    nn.Linear bias, the paper's, gives ≈ 0.5)."""
    torch.manual_seed(0)
    x = torch.randn(64, 16, 4)
    decay = make_core("mingru", 4, 32)._recurrence(x)[0].mean().item()
    paper = make_core("mingru", 4, 32, gate_bias=0.0)._recurrence(x)[0].mean().item()
    assert abs(decay - (1 - torch.sigmoid(torch.tensor(-3.0)).item())) < 0.03
    assert abs(paper - 0.5) < 0.05
