"""The CPU fast path (membench_agents.algos.ppo_fast_cpu) against the readable PPO (algos/ppo.py): the same
actions, buffers and parameters on the same seeds; it really runs where it applies (counters) and refuses
clearly where it cannot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_agents.algos.ppo import PPO, PPOConfig, ppo_loss
from membench_agents.algos.ppo_fast_cpu import DiscretePPOLoss, FastCPU, _objective, core_rows
from membench_agents.algos.vector import make_vector_env
from membench_agents.nets.actor_critic import ActorCritic

from tests.agents.test_ppo import TMAZE, CountEnv, DictCueEnv, TorchVectorEnv, _sync


class StartDiscreteEnv(CountEnv):
    """CountEnv with Discrete(3, start=-1) actions (checked, then ignored)."""

    def __init__(self):
        super().__init__(horizon=5)
        self.action_space = gym.spaces.Discrete(3, start=-1)

    def step(self, action):
        assert self.action_space.contains(action), action
        return super().step(0)


class DiscreteTorchVectorEnv(TorchVectorEnv):
    """TorchVectorEnv with Discrete(2) actions (tensors in, tensors out)."""

    def __init__(self, num_envs: int = 4):
        super().__init__(num_envs, "cpu")
        self.single_action_space = gym.spaces.Discrete(2)
        self.action_space = gym.spaces.MultiDiscrete([2] * num_envs)

    def step(self, actions):
        return super().step(actions.float().unsqueeze(1))


CASES = {
    # padded episode segments (bptt 6 on T-Maze episodes of 4 steps), both normalisations
    "lstm-tmaze": lambda kw: PPO(
        make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}),
        PPOConfig(core="lstm", bptt_length=6, norm_obs=True, norm_reward=True, **kw),
    ),
    # an encoder MLP in front of the core (its parameters train too), chunks without inner episode starts
    "lstm-encoder": lambda kw: PPO(
        make_vector_env(TMAZE, 4, env_kwargs={"corridor_length": 3}),
        PPOConfig(core="lstm", bptt_length=4, encoder_size=8, **kw),
    ),
    "gru-dict": lambda kw: PPO(_sync(DictCueEnv, 4), PPOConfig(core="gru", **kw)),
    "lstm-start": lambda kw: PPO(_sync(StartDiscreteEnv, 4), PPOConfig(core="lstm", **kw)),
    "mlp-truncation": lambda kw: PPO(
        _sync(lambda: gym.wrappers.TimeLimit(CountEnv(horizon=100), 5), 4), PPOConfig(core="mlp", **kw)
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fast_path_equals_the_readable_path(case):
    """Same seeds: the same actions in every rollout, the same rollout buffers, and parameters equal to a
    tight tolerance after three iterations (12 optimizer steps); the counters prove the fast path ran."""
    kw = dict(
        num_envs=4,
        num_steps=12,
        total_steps=10_000,
        hidden_size=8,
        num_minibatches=2,
        update_epochs=2,
        seed=4,
        learning_rate=1e-3,
    )
    fast, readable = CASES[case](dict(kw, fast_cpu="on")), CASES[case](dict(kw, fast_cpu="off"))
    assert isinstance(fast.fast, FastCPU) and readable.fast is None
    for _ in range(3):
        mf, mr = fast.train_iteration(), readable.train_iteration()
        assert torch.equal(fast.act_buf, readable.act_buf)  # the same actions, step by step
        for name in ("done_buf", "es_buf"):
            assert torch.equal(getattr(fast, name), getattr(readable, name)), name
        for name in ("logp_buf", "val_buf", "rew_buf"):
            torch.testing.assert_close(getattr(fast, name), getattr(readable, name), rtol=1e-5, atol=1e-6, msg=name)
        assert mf["episodes"] == mr["episodes"]
        for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
            assert mf[k] == pytest.approx(mr[k], rel=1e-4, abs=1e-6), k
    for (name, p), q in zip(fast.policy.named_parameters(), readable.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=name)
    assert not torch.equal(next(fast.policy.parameters()), next(CASES[case](kw).policy.parameters()))  # it trained
    assert fast.fast.counters == {"rollouts": 3, "updates": 3, "minibatches": 3 * 2 * 2}
    assert torch.equal(fast.generator.get_state(), readable.generator.get_state())


def test_auto_uses_the_fast_path_where_it_applies_and_on_refuses_where_it_cannot():
    tmaze = make_vector_env(TMAZE, 4)
    small = dict(num_envs=4, num_steps=8, hidden_size=8, num_minibatches=2)
    assert PPO(tmaze, PPOConfig(**small)).fast is not None  # the default: "auto"
    pendulum = make_vector_env("Pendulum-v1", 4)
    assert PPO(pendulum, PPOConfig(**small)).fast is None
    with pytest.raises(
        ValueError,
        match=r"^PPOConfig.fast_cpu='on' but the CPU fast path cannot run here: it "
        r"needs Discrete actions \(the action space is Box",
    ):
        PPO(pendulum, PPOConfig(fast_cpu="on", **small))
    with pytest.raises(ValueError, match="it needs an environment with numpy outputs"):
        PPO(DiscreteTorchVectorEnv(4), PPOConfig(fast_cpu="on", device="cpu", **small))
    assert PPO(DiscreteTorchVectorEnv(4), PPOConfig(device="cpu", **small)).fast is None
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="it runs on the CPU only"):
            PPO(make_vector_env(TMAZE, 4), PPOConfig(fast_cpu="on", device="cuda", **small))


@pytest.mark.parametrize("core", ["lstm", "gru", "mlp"])
def test_discrete_loss_node_equals_the_readable_loss_and_its_gradients(core):
    """DiscretePPOLoss on the fast path's core rows (padded layout) gives the loss, statistics and
    parameter gradients of evaluate_actions + ppo_loss."""
    T, B = 12, 5
    g = torch.Generator().manual_seed(1)
    policy = ActorCritic(gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(4, start=2), core, 16)
    obs = torch.rand(T, B, 3, generator=g) * 2 - 1
    es = torch.rand(T, B, generator=g) < 0.2  # episode starts inside the chunks: padded segments
    es[0, 1] = True
    state = tuple(torch.randn(s.shape, generator=g) for s in policy.initial_state(B))
    actions = torch.randint(2, 6, (T, B), generator=g)
    with torch.no_grad():
        logp_old = policy.evaluate_actions(obs, actions, state, es)[0] + torch.randn(T, B, generator=g) * 0.3
    adv, ret, val_old = (torch.randn(T, B, generator=g) for _ in range(3))
    cfg = PPOConfig()
    params = list(policy.parameters())

    loss, stats = ppo_loss(cfg, *policy.evaluate_actions(obs, actions, state, es), logp_old, adv, ret, val_old)
    ref_grads = torch.autograd.grad(loss, params)

    rows, index = core_rows(policy.core, policy.encode(obs), state, es, es.numpy())
    if core != "mlp":
        assert index is not None and rows.shape[0] > T * B  # the padded layout is exercised
    targets = np.stack([x.reshape(-1).numpy() for x in (logp_old, adv, ret, val_old)])
    coefs = (cfg.clip_coef, cfg.clip_vloss, cfg.ent_coef, cfg.vf_coef, cfg.norm_adv)
    out = DiscretePPOLoss.apply(
        rows, policy.head.weight, policy.head.bias, index, (actions - 2).reshape(-1).numpy(), targets, coefs
    )
    grads = torch.autograd.grad(out[0], params)
    torch.testing.assert_close(out[0], loss.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out[1:], stats, rtol=1e-5, atol=1e-6)
    for (name, _), a, b in zip(policy.named_parameters(), grads, ref_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.parametrize("clip_vloss", [True, False])
@pytest.mark.parametrize("norm_adv", [True, False])
def test_numpy_objective_gradient_equals_autograd_of_the_readable_loss(clip_vloss, norm_adv):
    """The written-out gradient of the fast path's numpy objective is autograd's gradient of ppo_loss
    (float64, with ratios on both sides of the clip range and clipped and unclipped value errors)."""
    g = torch.Generator().manual_seed(0)
    n = 128
    logp_old = -torch.rand(n, generator=g, dtype=torch.float64) * 2
    newlogp = (logp_old + (torch.rand(n, generator=g, dtype=torch.float64) - 0.5) * 0.8).requires_grad_()
    entropy = torch.rand(n, generator=g, dtype=torch.float64).requires_grad_()
    val_old = torch.randn(n, generator=g, dtype=torch.float64)
    newv = (val_old + torch.randn(n, generator=g, dtype=torch.float64) * 0.4).requires_grad_()
    adv, ret = (torch.randn(n, generator=g, dtype=torch.float64) for _ in range(2))
    cfg = PPOConfig(clip_vloss=clip_vloss, norm_adv=norm_adv)
    loss, stats = ppo_loss(cfg, newlogp, entropy, newv, logp_old, adv, ret, val_old)
    ref = torch.autograd.grad(loss, (newlogp, entropy, newv))
    clipped = ((newlogp - logp_old).exp() - 1).abs() > cfg.clip_coef
    assert 0 < int(clipped.sum()) < n  # both branches of the surrogate are exercised
    arrays = [x.detach().numpy() for x in (newlogp, entropy, newv, logp_old, adv, ret, val_old)]
    out, g_logp, g_v, (s_logp, s_ent, s_v) = _objective(
        *arrays, (cfg.clip_coef, cfg.clip_vloss, cfg.ent_coef, cfg.vf_coef, cfg.norm_adv)
    )
    np.testing.assert_allclose(out[0], float(loss.detach()), rtol=1e-12)
    np.testing.assert_allclose(out[1:], stats.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g_logp * s_logp, ref[0].numpy(), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(np.full(n, s_ent), ref[1].numpy(), rtol=1e-12)
    np.testing.assert_allclose(g_v * s_v, ref[2].numpy(), rtol=1e-10, atol=1e-15)


def test_the_matched_cell_benchmark_still_runs_an_iteration():
    """`make bench-perf`'s agents section drives a Trainer through the run loop: a change of the Trainer protocol
    must not leave it broken (it once crashed, unnoticed, after iterate() gained its should_stop argument)."""
    script = Path(__file__).resolve().parents[2] / "experiments" / "perf_agents.py"
    out = subprocess.run(
        [sys.executable, str(script), "--one", "ppo-lstm", "--steps", "2048"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["agent"] == "ppo-lstm" and row["steps"] == 2048 and row["sps"] > 0
