"""Memory cores: the interface, hidden-state hygiene (episode starts, batch isolation) and truncated BPTT, on every
recurrent core through each of its sequence paths (the linear-recurrent cores' scan itself:
tests/agents/test_linear_cores.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_agents.nets.actor_critic import ActorCritic
from membench_agents.nets.memory import CORES, GRUCore, LSTMCore, MemoryCore, MLPCore, make_core

RNN = ["lstm", "gru"]
LINEAR = ["ffm", "mingru", "lru"]
RECURRENT = [*RNN, *LINEAR]
ALL = ["mlp", *RECURRENT]
#: each recurrent core's whole-sequence path ("sequence") and its step-by-step reference ("loop")
PATHS = {"lstm": "padded", "gru": "padded", "ffm": "scan", "mingru": "scan", "lru": "scan"}
T, B, F, H = 12, 5, 6, 16


def _random_state(core: MemoryCore, batch: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s.shape, generator=g) for s in core.initial_state(batch, "cpu"))


def _inputs(seed: int = 0, t: int = T, b: int = B):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t, b, F, generator=g)


# -- interface ---------------------------------------------------------------------------------------------
def test_the_interface_is_initial_state_forward_and_step():
    """MemoryCore has three methods; ``step`` defaults to ``forward`` on a one-step sequence."""
    public = {k for k, v in vars(MemoryCore).items() if callable(v) and not k.startswith("_")}
    assert public == {"initial_state", "forward", "step"}

    class Twice(MemoryCore):  # a core that defines only initial_state and forward
        out_dim = F

        def initial_state(self, batch_size, device=None):
            return (torch.zeros(batch_size, F),)

        def forward(self, x, state, episode_start):
            s = state[0]
            outs = []
            for t in range(x.shape[0]):
                s = torch.where(episode_start[t].unsqueeze(1), 0.0, s) + 2 * x[t]
                outs.append(s)
            return torch.stack(outs), (s,)

    core, x = Twice(), _inputs(30)
    state = (torch.ones(B, F),)
    es = torch.tensor([True, False, True, False, False])
    out, (s,) = core.step(x[0], state, es)
    torch.testing.assert_close(out, torch.where(es.unsqueeze(1), 0.0, 1.0) + 2 * x[0])
    torch.testing.assert_close(s, out)


def test_registry_and_factory():
    assert set(CORES) == {"mlp", "lstm", "gru", "gtrxl", "ffm", "mingru", "lru"}
    assert isinstance(make_core("mlp", F, H), MLPCore)
    assert isinstance(make_core("LSTM", F, H), LSTMCore)
    assert isinstance(make_core("gru", F, H), GRUCore)


def test_unknown_core_name_lists_valid_names():
    with pytest.raises(ValueError, match=r"unknown memory core 'transformer'.*mlp, lstm, gru"):
        make_core("transformer", F, H)


@pytest.mark.parametrize("name", ALL)
def test_shapes_and_attributes(name):
    core = make_core(name, F, H)
    assert core.out_dim == H
    assert core.recurrent == (name != "mlp")
    assert core.context_length == 1
    state = core.initial_state(B, "cpu")
    assert all(s.shape[0] == B for s in state)
    assert all(torch.count_nonzero(s) == 0 for s in state)  # the initial state is zeros
    out, new = core(_inputs(), state, torch.zeros(T, B, dtype=torch.bool))
    assert out.shape == (T, B, H)
    assert len(new) == len(state) and all(n.shape == s.shape for n, s in zip(new, state, strict=True))


@pytest.mark.parametrize("name", RECURRENT)
def test_bad_shapes_are_rejected(name):
    core = make_core(name, F, H)
    with pytest.raises(ValueError, match=r"\[T, B, F\]"):
        core(torch.zeros(B, F), core.initial_state(B), torch.zeros(1, B))
    with pytest.raises(ValueError, match="episode_start"):
        core(_inputs(), core.initial_state(B), torch.zeros(T + 1, B))
    with pytest.raises(ValueError, match="state"):
        core(_inputs(), core.initial_state(B + 1), torch.zeros(T, B))


# -- sequence paths agree ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", RECURRENT)
@pytest.mark.parametrize("p_start", [0.0, 0.15, 0.5])
def test_whole_sequence_equals_step_by_step(name, p_start):
    """The whole-sequence path (the RNNs' padded segments, the linear cores' scan), the masked step loop and T
    single steps give the same features and state."""
    core = make_core(name, F, H)
    x = _inputs(1)
    es = torch.rand(T, B, generator=torch.Generator().manual_seed(2)) < p_start
    state = _random_state(core, B)
    results = {}
    for mode in (PATHS[name], "loop"):
        core.sequence_mode = mode
        results[mode] = core(x, state, es)
    s, outs = state, []
    for t in range(T):
        o, s = core.step(x[t], s, es[t])
        outs.append(o)
    results["step"] = (torch.stack(outs), s)
    ref_out, ref_state = results["loop"]
    for mode, (out, st) in results.items():
        torch.testing.assert_close(out, ref_out, msg=mode)
        for a, b in zip(st, ref_state, strict=True):
            torch.testing.assert_close(a, b, msg=mode)


@pytest.mark.parametrize("name", RNN)
def test_auto_mode_falls_back_to_the_loop_when_padding_is_wasteful(name):
    """One long segment next to many short ones: auto must still be exact (whichever path it takes)."""
    core = make_core(name, F, H)
    x = _inputs(3, t=40, b=4)
    es = torch.zeros(40, 4, dtype=torch.bool)
    es[::2, 1:] = True  # columns 1..3: episodes of length 2; column 0: one 40-step segment
    state = _random_state(core, 4)
    core.sequence_mode = "loop"
    ref, ref_state = core(x, state, es)
    core.sequence_mode = "auto"
    out, st = core(x, state, es)
    torch.testing.assert_close(out, ref)
    for a, b in zip(st, ref_state, strict=True):
        torch.testing.assert_close(a, b)


# -- hidden-state hygiene ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_episode_start_resets_to_the_initial_state(name):
    """After an episode start the features equal those of a fresh initial state fed the same inputs."""
    core = make_core(name, F, H)
    x = _inputs(4)
    t0 = 5
    es = torch.zeros(T, B, dtype=torch.bool)
    es[t0] = True
    out, _ = core(x, _random_state(core, B, seed=7), es)
    fresh, _ = core(x[t0:], core.initial_state(B), torch.zeros(T - t0, B, dtype=torch.bool))
    torch.testing.assert_close(out[t0:], fresh)
    # and at t = 0 (the carried state is dropped)
    es0 = torch.zeros(T, B, dtype=torch.bool)
    es0[0] = True
    out0, _ = core(x, _random_state(core, B, seed=8), es0)
    fresh0, _ = core(x, core.initial_state(B), torch.zeros(T, B, dtype=torch.bool))
    torch.testing.assert_close(out0, fresh0)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("mode", ["sequence", "loop", "step"])
def test_no_leak_between_environments(name, mode):
    """Changing env 0's inputs, state and episode starts changes nothing in the other environments."""
    core = make_core(name, F, H)
    if mode != "step" and core.recurrent:
        core.sequence_mode = PATHS[name] if mode == "sequence" else mode
    x = _inputs(5)
    es = torch.rand(T, B, generator=torch.Generator().manual_seed(6)) < 0.3
    state = _random_state(core, B, seed=9)

    def run(x, es, state):
        if mode == "step":
            outs, s = [], state
            for t in range(T):
                o, s = core.step(x[t], s, es[t])
                outs.append(o)
            return torch.stack(outs), s
        return core(x, state, es)

    out, st = run(x, es, state)
    x2, es2 = x.clone(), es.clone()
    x2[:, 0] += 3.0
    es2[:, 0] = ~es2[:, 0]
    state2 = tuple(s.clone() for s in state)
    for s in state2:
        s[0] += 1.0
    out2, st2 = run(x2, es2, state2)
    torch.testing.assert_close(out2[:, 1:], out[:, 1:])
    assert not torch.allclose(out2[:, 0], out[:, 0])
    for a, b in zip(st2, st, strict=True):
        torch.testing.assert_close(a[1:], b[1:])


@pytest.mark.parametrize("name", ALL)
def test_policy_after_episode_start_equals_fresh_policy(name):
    """ActorCritic.act right after an episode start gives the distribution of a fresh initial state."""
    obs_space = gym.spaces.Box(-1, 1, (4,), np.float32)
    policy = ActorCritic(obs_space, gym.spaces.Discrete(4), name, H)
    g = torch.Generator().manual_seed(0)
    obs = torch.rand(B, 4, generator=g) * 2 - 1
    es = torch.tensor([True, False, True, False, True])
    # a state carried over from some earlier episode
    old = policy.initial_state(B)
    for _ in range(3):
        _, _, _, old = policy.act(torch.rand(B, 4, generator=g), old, torch.zeros(B, dtype=torch.bool))
    with torch.no_grad():
        logits_mid, value_mid, _ = policy(obs[None], old, es[None])
        logits_new, value_new, _ = policy(obs[None], policy.initial_state(B), torch.ones(1, B, dtype=torch.bool))
    rows = es.nonzero().squeeze(1)
    torch.testing.assert_close(logits_mid[0, rows], logits_new[0, rows])
    torch.testing.assert_close(value_mid[0, rows], value_new[0, rows])
    if policy.recurrent:  # the carried state does matter for the other rows
        assert not torch.allclose(logits_mid[0, ~es], logits_new[0, ~es])
    # sampling with the same generator state gives the same actions and log-probs
    a1 = policy.act(obs, old, es, generator=torch.Generator().manual_seed(3))
    fresh_es = torch.ones(B, dtype=torch.bool)
    a2 = policy.act(obs, policy.initial_state(B), fresh_es, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(a1[0][rows], a2[0][rows])
    torch.testing.assert_close(a1[1][rows], a2[1][rows])


# -- truncated BPTT ----------------------------------------------------------------------------------------
def _grad_wrt_inputs(core, x, es, state=None):
    x = x.clone().requires_grad_(True)
    state = core.initial_state(x.shape[1]) if state is None else state
    out, _ = core(x, state, es)
    out[-1].sum().backward()  # a loss at the END of the chunk
    return x.grad


@pytest.mark.parametrize("name", RECURRENT)
@pytest.mark.parametrize("mode", ["sequence", "loop"])
def test_gradient_reaches_the_chunk_start(name, mode):
    core = make_core(name, F, H)
    core.sequence_mode = PATHS[name] if mode == "sequence" else mode
    es = torch.zeros(T, B, dtype=torch.bool)
    es[0] = True
    grad = _grad_wrt_inputs(core, _inputs(10), es)
    assert torch.all(grad[0].abs().sum(-1) > 0), "no gradient from the last step to the first input"
    # ... and to the stored state at the chunk start (no episode start at t = 0)
    state = tuple(s.requires_grad_(True) for s in _random_state(core, B))
    out, _ = core(_inputs(10), state, torch.zeros(T, B, dtype=torch.bool))
    out[-1].sum().backward()
    assert all(torch.all(s.grad.abs().sum(-1) > 0) for s in state)


@pytest.mark.parametrize(
    ("name", "mode"),
    [(n, m) for n in RNN for m in ("padded", "loop", "auto")] + [(n, m) for n in LINEAR for m in ("scan", "loop")],
)
def test_gradient_does_not_cross_an_episode_start(name, mode):
    core = make_core(name, F, H)
    core.sequence_mode = mode
    t0 = 6
    es = torch.zeros(T, B, dtype=torch.bool)
    es[t0, :3] = True  # envs 0..2 start a new episode at t0; envs 3, 4 do not
    es[2, 4] = True  # env 4 starts one earlier; its gradient must still reach t = 2 but not t < 2
    grad = _grad_wrt_inputs(core, _inputs(11), es)
    assert torch.count_nonzero(grad[:t0, :3]) == 0, "gradient crossed an episode start"
    assert torch.all(grad[t0:, :3].abs().sum(-1) > 0)
    assert torch.all(grad[:, 3].abs().sum(-1) > 0)
    assert torch.count_nonzero(grad[:2, 4]) == 0 and torch.all(grad[2:, 4].abs().sum(-1) > 0)


def test_mlp_core_has_no_memory():
    core = make_core("mlp", F, H)
    grad = _grad_wrt_inputs(core, _inputs(12), torch.zeros(T, B, dtype=torch.bool))
    assert torch.count_nonzero(grad[:-1]) == 0
    assert core.initial_state(B) == ()
