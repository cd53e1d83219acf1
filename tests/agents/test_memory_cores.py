"""Memory cores: the interface, hidden-state hygiene (episode starts, batch isolation) and truncated BPTT."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_agents.memory import CORES, GRUCore, LSTMCore, MemoryCore, MLPCore, make_core
from membench_agents.policy import ActorCritic

RECURRENT = ["lstm", "gru"]
ALL = ["mlp", "lstm", "gru"]
T, B, F, H = 12, 5, 6, 16


def _random_state(core: MemoryCore, batch: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s.shape, generator=g) for s in core.initial_state(batch, "cpu"))


def _inputs(seed: int = 0, t: int = T, b: int = B):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t, b, F, generator=g)


# -- interface ---------------------------------------------------------------------------------------------
def test_registry_and_factory():
    assert set(CORES) == {"mlp", "lstm", "gru"}
    assert isinstance(make_core("mlp", F, H), MLPCore)
    assert isinstance(make_core("LSTM", F, H), LSTMCore)
    assert isinstance(make_core("gru", F, H), GRUCore)


def test_unknown_core_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown memory core 'transformer'.*mlp, lstm, gru"):
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
    """The padded-segment and masked-loop sequence paths and T single steps give the same features and state."""
    core = make_core(name, F, H)
    x = _inputs(1)
    es = torch.rand(T, B, generator=torch.Generator().manual_seed(2)) < p_start
    state = _random_state(core, B)
    results = {}
    for mode in ("padded", "loop"):
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


@pytest.mark.parametrize("name", RECURRENT)
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
    feats, none = core(x, state, es, need_state=False)
    torch.testing.assert_close(feats, ref)


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
@pytest.mark.parametrize("mode", ["padded", "loop", "step"])
def test_no_leak_between_environments(name, mode):
    """Changing env 0's inputs, state and episode starts changes nothing in the other environments."""
    core = make_core(name, F, H)
    if mode != "step" and core.recurrent:
        core.sequence_mode = mode
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
    out, _ = core(x, state, es, need_state=False)
    out[-1].sum().backward()  # a loss at the END of the chunk
    return x.grad


@pytest.mark.parametrize("name", RECURRENT)
@pytest.mark.parametrize("mode", ["padded", "loop"])
def test_gradient_reaches_the_chunk_start(name, mode):
    core = make_core(name, F, H)
    core.sequence_mode = mode
    es = torch.zeros(T, B, dtype=torch.bool)
    es[0] = True
    grad = _grad_wrt_inputs(core, _inputs(10), es)
    assert torch.all(grad[0].abs().sum(-1) > 0), "no gradient from the last step to the first input"
    # ... and to the stored state at the chunk start (no episode start at t = 0)
    state = tuple(s.requires_grad_(True) for s in _random_state(core, B))
    out, _ = core(_inputs(10), state, torch.zeros(T, B, dtype=torch.bool))
    out[-1].sum().backward()
    assert all(torch.all(s.grad.abs().sum(-1) > 0) for s in state)


@pytest.mark.parametrize("name", RECURRENT)
@pytest.mark.parametrize("mode", ["padded", "loop", "auto"])
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


@pytest.mark.parametrize("name", RECURRENT)
def test_frozen_steps_equal_plain_steps_and_see_new_weights(name):
    """Inside ``frozen()`` (rollouts, evaluation) cell steps use cached weights: same features as outside;
    a later ``frozen()`` context sees weights changed in between."""
    core = make_core(name, F, H)
    x = _inputs(13)[0]
    state = _random_state(core, B)
    es = torch.zeros(B, dtype=torch.bool)
    with torch.no_grad():
        plain, _ = core.step(x, state, es)
        with core.frozen():
            cached, _ = core.step(x, state, es)
        torch.testing.assert_close(cached, plain)
        core.rnn.weight_hh_l0.mul_(0.5)
        with core.frozen():
            after, _ = core.step(x, state, es)
        torch.testing.assert_close(after, core.step(x, state, es)[0])
        assert not torch.allclose(after, plain)


# -- minibatch plans and the written-out LSTM backward (PPO's CPU update) ----------------------------------
@pytest.mark.parametrize("name", RECURRENT)
def test_planned_minibatches_equal_unplanned_ones(name):
    """``plan_rows`` plans every minibatch of a [T, C] episode-start matrix in one pass; ``forward_rows``
    with a minibatch's plan gives the rows and index it computes without one (padded minibatches, one
    without an episode start after step 0, and one that begins episodes at step 0)."""
    core = make_core(name, F, H, sequence_mode="padded")
    C = 9
    es = torch.rand(T, C, generator=torch.Generator().manual_seed(3)) < 0.2
    es[1:, 4:6] = False  # minibatch 2 (columns 4, 5): no episode start after step 0 ...
    es[0, 4] = True  # ... but column 4 begins one at step 0
    sizes = [4, 2, 3]
    plans = core.plan_rows(es.numpy(), sizes)
    assert len(plans) == 3 and all(p is not None for p in plans)
    assert plans[1].n_seg == 2  # planned as one plain call on the chunk
    x, state = _inputs(20, b=C), _random_state(core, C, seed=21)
    start = 0
    for size, plan in zip(sizes, plans, strict=True):
        sl = slice(start, start + size)
        start += size
        mb_state = tuple(s[sl] for s in state)
        ref_rows, ref_index = core.forward_rows(x[:, sl], mb_state, es[:, sl])
        rows, index = core.forward_rows(x[:, sl], mb_state, es[:, sl], plan)
        feats = rows if index is None else rows.index_select(0, index)
        ref = ref_rows if ref_index is None else ref_rows.index_select(0, ref_index)
        torch.testing.assert_close(feats, ref, rtol=0, atol=0)
        if plan.n_seg > size:  # padded: every step has its own row, and the longest segment fills max_len
            assert len(set(plan.rows.tolist())) == T * size
            assert int(plan.rows.max()) // plan.n_seg == plan.max_len - 1
    with pytest.raises(ValueError, match="add up"):
        core.plan_rows(es.numpy(), [4, 4])
    core.sequence_mode = "auto"  # no plan where padding would compute over 3x the real steps (the loop runs)
    auto = core.plan_rows(es.numpy(), sizes)
    wasteful = [p.n_seg * p.max_len > 3 * T * b for p, b in zip(plans, sizes, strict=True)]
    assert any(wasteful) and [p is None for p in auto] == wasteful
    core.sequence_mode = "loop"
    assert core.plan_rows(es.numpy(), sizes) == [None] * 3


@pytest.mark.parametrize("inner_starts", [True, False])
def test_lstm_written_out_backward_equals_autograd(inner_starts):
    """``LSTMCore.forward_rows_manual`` (oneDNN's LSTM kernels called directly, no autograd graph) on a
    minibatch laid out by ``prepare_rows`` gives autograd's rows and parameter gradients exactly; other
    cores have no such path."""
    core = make_core("lstm", F, H)
    es = torch.rand(T, B, generator=torch.Generator().manual_seed(4)) < (0.2 if inner_starts else 0.0)
    es[0, 1] = True
    plan = core.plan_rows(es.numpy(), [B])[0]
    x, state = _inputs(22), _random_state(core, B, seed=23)
    laid = core.prepare_rows(x, state, [plan], [B])
    if laid is None:
        pytest.skip("this torch build has no oneDNN LSTM layer kernels")
    rows, index, backward = core.forward_rows_manual(laid[0])
    ref_rows, ref_index = core.forward_rows(x, state, es, plan)
    assert (index is None) == (not inner_starts) and (ref_index is None) == (index is None)
    torch.testing.assert_close(rows, ref_rows, rtol=0, atol=0)
    d_rows = torch.randn(rows.shape, generator=torch.Generator().manual_seed(5))
    grads = backward(d_rows)
    params = list(core.parameters())
    ref_grads = torch.autograd.grad(ref_rows, params, d_rows)
    assert set(grads) == set(params)
    for (pname, p), ref in zip(core.named_parameters(), ref_grads, strict=True):
        torch.testing.assert_close(grads[p], ref, rtol=1e-6, atol=1e-6, msg=pname)
    for name in ("gru", "mlp"):
        other = make_core(name, F, H)
        assert other.prepare_rows(x, _random_state(other, B), [plan], [B]) is None
        with pytest.raises(NotImplementedError, match="no written-out backward"):
            other.forward_rows_manual(laid[0])


def test_lstm_minibatches_laid_out_together_equal_each_alone():
    """``prepare_rows`` lays out several minibatches with one gather: each gets the rows of its own
    forward_rows (a padded one, one without inner episode starts, and one without a plan, which gets None)."""
    core = make_core("lstm", F, H, sequence_mode="padded")
    C, sizes = 9, [4, 2, 3]
    es = torch.rand(T, C, generator=torch.Generator().manual_seed(6)) < 0.2
    es[1:, 4:6] = False
    plans = core.plan_rows(es.numpy(), sizes)
    plans[2] = None  # e.g. "auto" found its padding too wasteful
    x, state = _inputs(24, b=C), _random_state(core, C, seed=25)
    laid = core.prepare_rows(x, state, plans, sizes)
    if laid is None:
        pytest.skip("this torch build has no oneDNN LSTM layer kernels")
    assert laid[2] is None and laid[1].index is None and laid[0].index is not None
    start = 0
    for size, plan, entry in zip(sizes, plans, laid, strict=True):
        sl = slice(start, start + size)
        start += size
        if plan is None:
            continue
        rows, index, _ = core.forward_rows_manual(entry)
        ref_rows, ref_index = core.forward_rows(x[:, sl], tuple(s[sl] for s in state), es[:, sl], plan)
        torch.testing.assert_close(rows, ref_rows, rtol=0, atol=0)
        assert (index is None and ref_index is None) or torch.equal(index, ref_index)
    with pytest.raises(ValueError, match="plans for groups"):
        core.prepare_rows(x, state, plans, [4, 4])
