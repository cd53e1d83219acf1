"""The CPU fast path of :class:`~membench_agents.algos.ppo.PPO`: the same rollout and update as
:meth:`PPO._rollout` and :meth:`PPO._update`, with less per-operation overhead.

Switched by ``PPOConfig.fast_cpu``: "auto" (default) uses it wherever :func:`why_not` finds nothing against
it (the CPU, Discrete actions, numpy environments, a built-in memory core), "on" makes that an error, "off"
never uses it. It uses public torch APIs only. At PPO's sizes (a 128-wide LSTM, minibatches of a few
hundred steps, one thread) most of the readable path's time is the fixed cost of many small tensor ops
(dispatch, autograd records); this module removes those, not FLOPs:

* Rollout (:meth:`FastCPU.rollout`): the environments' outputs are copied once, into numpy views of the
  buffers, and the observation row t + 1 is also the next step's policy input (no tensor conversions per
  step); the policy's head writes into a buffer with ``out=``; the Gumbel noise of the whole rollout is
  drawn in one call (on the CPU, one ``exponential_`` call of T x N x n draws yields exactly the draws of
  T calls of N x n in order, so the actions are those of :meth:`ActorCritic.act`); the log-probabilities
  of the taken actions are computed once for the whole rollout.
* Update (:meth:`FastCPU.update`): a recurrent core's ``nn.LSTM`` / ``nn.GRU`` runs the minibatch's padded
  episode segments directly (:func:`~membench_agents.nets.memory.rnn.layout_segments`; the final state, which
  an update never reads, is not computed); the head runs once per padded row and only its narrow outputs
  are put back in step order; head, categorical and PPO loss are ONE autograd node
  (:class:`DiscretePPOLoss`) whose forward and written-out backward run in numpy (a numpy call on a few
  hundred numbers costs a fraction of a torch op's dispatch). Same optimizer, ``clip_grad_norm_`` and
  ``optimizer.step()`` as the readable update.

``FastCPU.counters`` counts the rollouts, updates and minibatches it ran (tests check that it really ran).
tests/agents/test_ppo_fast_cpu.py checks that it takes the readable path's actions and reaches its
parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor, nn

from membench_agents.algos.common import tree_map
from membench_agents.errors import check_stop
from membench_agents.nets.memory import GRUCore, LSTMCore, MemoryCore, MLPCore, State, layout_segments, plan_segments

if TYPE_CHECKING:  # ppo.py imports this module, never the other way round
    from membench_agents.algos.ppo import PPO

#: the memory cores whose layout this module knows (the recurrent ones' ``rnn`` module, the MLP's forward)
SUPPORTED_CORES = (LSTMCore, GRUCore, MLPCore)


def why_not(ppo: PPO) -> str | None:
    """Why the fast path cannot run this PPO (None: it can)."""
    core = ppo.policy.core
    if ppo.device.type != "cpu":
        return f"it runs on the CPU only (device {ppo.device})"
    if ppo.policy.kind != "discrete":
        return f"it needs Discrete actions (the action space is {ppo.envs.single_action_space})"
    if ppo.torch_env:
        return "it needs an environment with numpy outputs (this one returns torch tensors)"
    if type(core) not in SUPPORTED_CORES:
        return (
            f"it knows the memory cores {', '.join(c.__name__ for c in SUPPORTED_CORES)} "
            f"(this one is {type(core).__name__})"
        )
    return None


class FastCPU:
    """:meth:`rollout` and :meth:`update` for one :class:`PPO` (its buffers, policy and optimizer)."""

    def __init__(self, ppo: PPO):
        reason = why_not(ppo)
        if reason is not None:
            raise ValueError(f"the CPU fast path cannot run here: {reason}")
        self.ppo = ppo
        self.counters = {"rollouts": 0, "updates": 0, "minibatches": 0}
        T, N, n = ppo.config.num_steps, ppo.config.num_envs, ppo.policy.n_out
        # per-step views of PPO's buffers, made once: torch rows for the policy, numpy arrays for the env
        self.obs_rows = [tree_map(lambda o, t=t: o[t], ppo._obs_store) for t in range(T + 1)]
        self.obs_np = tree_map(lambda o: o.numpy(), ppo._obs_store)
        self.es_rows = list(ppo._es_store.unbind(0))
        self.es_np = ppo._es_store.numpy()
        self.act_rows = [a.unsqueeze(-1) for a in ppo.act_buf.unbind(0)]  # [N, 1]: argmax(..., keepdim) writes here
        self.act_np = ppo.act_buf.numpy()
        self.rew_np = ppo.rew_buf.numpy()
        self.head = torch.zeros(T, N, n + 1)  # the head's outputs of the rollout: logits and value
        self.log_noise = torch.zeros(T, N, n)  # log Exp(1) draws: action = argmax(logits - log_noise)

    # -- rollout ------------------------------------------------------------------------------------------
    @torch.no_grad()
    def rollout(self, should_stop: Callable[[], bool] | None = None) -> list[tuple[float, int, bool | None]]:
        """:meth:`PPO._rollout` (the same buffers, actions and episodes, the same stop checks)."""
        ppo = self.ppo
        cfg, policy, envs = ppo.config, ppo.policy, ppo.envs
        K, n = ppo.bptt, policy.n_out
        start = int(policy.action_start)
        weight_t, bias = policy.head.weight.t(), policy.head.bias
        self.log_noise.exponential_(generator=ppo.generator).log_()
        _tree_copy_row(ppo._obs_store, 0, ppo.next_obs)
        self.es_rows[0].copy_(ppo.next_episode_start)
        state = ppo.next_state
        episodes: list[tuple[float, int, bool | None]] = []
        for t in range(cfg.num_steps):
            check_stop(should_stop)
            if t % K == 0:
                for buf, s in zip(ppo.state_buf, state, strict=True):
                    buf[t // K] = s
            feats, state = policy.core.step(policy.encode(self.obs_rows[t]), state, self.es_rows[t])
            head = torch.addmm(bias, feats, weight_t, out=self.head[t])
            torch.argmax(head[:, :n] - self.log_noise[t], -1, keepdim=True, out=self.act_rows[t])
            if start:
                self.act_rows[t].add_(start)
            next_obs, reward, terminated, truncated, info = envs.step(self.act_np[t])
            reward = np.asarray(reward, dtype=np.float64).reshape(-1)
            terminated = np.asarray(terminated, dtype=bool).reshape(-1)
            truncated = np.asarray(truncated, dtype=bool).reshape(-1)
            done = np.logical_or(terminated, truncated, out=self.es_np[t + 1])  # done after t = start at t + 1
            ppo.episodes.add(reward)
            self.rew_np[t] = reward
            _copy_into(self.obs_np, t + 1, next_obs)
            if cfg.norm_reward:
                ppo.rew_buf[t] = ppo._normalize_reward(ppo.rew_buf[t], self.es_rows[t + 1])
            if done.any():
                ppo._bootstrap_truncated(t, truncated & ~terminated, info, state)
                episodes.extend(ppo.episodes.finish(done, info))
        ppo.val_buf.copy_(self.head[:, :, n])
        logp_all = torch.log_softmax(self.head[:, :, :n], -1)
        ppo.logp_buf.copy_(logp_all.gather(-1, (ppo.act_buf - start).unsqueeze(-1)).squeeze(-1))
        T = cfg.num_steps
        ppo.next_obs, ppo.next_state, ppo.next_episode_start = self.obs_rows[T], state, self.es_rows[T]
        self.counters["rollouts"] += 1
        return episodes

    # -- update -------------------------------------------------------------------------------------------
    def update(
        self, advantages: Tensor, returns: Tensor, should_stop: Callable[[], bool] | None = None
    ) -> dict[str, float]:
        """:meth:`PPO._update` (the same minibatches, loss, clipping, optimizer steps and stop checks)."""
        ppo = self.ppo
        cfg, policy = ppo.config, ppo.policy
        obs = tree_map(ppo.chunks, ppo.obs_buf)
        es = ppo.chunks(ppo.es_buf)
        es_np = es.numpy()
        actions = (ppo.chunks(ppo.act_buf) - int(policy.action_start)).numpy()  # 0-based, [K, C]
        targets = np.stack([ppo.chunks(x).numpy() for x in (ppo.logp_buf, advantages, returns, ppo.val_buf)])
        states = tuple(s.reshape(-1, *s.shape[2:]) for s in ppo.state_buf)
        coefs = (cfg.clip_coef, cfg.clip_vloss, cfg.ent_coef, cfg.vf_coef, cfg.norm_adv)
        head = policy.head
        stats = []
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(es.shape[1], generator=ppo.shuffle_generator)
            for mb in perm.tensor_split(cfg.num_minibatches):
                check_stop(should_stop)
                cols = mb.numpy()
                x = policy.encode(tree_map(lambda o, mb=mb: o[:, mb], obs))
                rows, index = core_rows(policy.core, x, tuple(s[mb] for s in states), es[:, mb], es_np[:, cols])
                out = DiscretePPOLoss.apply(
                    rows,
                    head.weight,
                    head.bias,
                    index,
                    actions[:, cols].reshape(-1),
                    targets[:, :, cols].reshape(4, -1),
                    coefs,
                )
                ppo.optimizer.zero_grad()
                out[0].backward()
                nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                ppo.optimizer.step()
                stats.append(out[1:])
                self.counters["minibatches"] += 1
                if cfg.target_kl is not None and float(out[4]) > cfg.target_kl:
                    break
            if cfg.target_kl is not None and float(stats[-1][3]) > cfg.target_kl:
                break
        self.counters["updates"] += 1
        return ppo._update_metrics(stats, returns)


def core_rows(core: MemoryCore, x: Tensor, state: State, es: Tensor, es_np: np.ndarray) -> tuple[Tensor, Tensor | None]:
    """The features of a minibatch ``x [T, B, F]`` (from ``state``, episode starts ``es`` and their host copy
    ``es_np``) in the layout the core computed them in: ``(rows [R, H], index)``; the features of step
    ``(t, b)`` are ``rows[index[t * B + b]]`` (index None: R = T * B rows in step order)."""
    T, B = es.shape
    if not isinstance(core, (LSTMCore, GRUCore)) or T == 1 or core.sequence_mode == "loop":
        feats, _ = core(x, state, es)
        return feats.reshape(T * B, -1), None
    if not es_np[1:].any():  # no episode start inside: one plain call
        if es_np[0].any():
            state = tuple(s * (~es[0]).to(x.dtype).unsqueeze(1) for s in state)
        out, _ = core.rnn(x, _hx(core, state))
        return out.reshape(T * B, -1), None
    plan = plan_segments(es_np)  # (segments that begin an episode start from zeros: no masking needed)
    if core.sequence_mode == "auto" and plan.n_seg * plan.max_len > core.max_padding_ratio * T * B:
        feats, _ = core(x, state, es)  # padding would cost more than the core's masked loop
        return feats.reshape(T * B, -1), None
    padded, init, index = layout_segments(x, state, plan)
    out, _ = core.rnn(padded, _hx(core, init))
    return out.reshape(-1, out.shape[-1]), index


def _hx(core, state: State):
    """``state`` as the ``hx`` argument of the core's ``nn.LSTM`` / ``nn.GRU`` (one layer)."""
    if isinstance(core.rnn, nn.LSTM):
        return (state[0].unsqueeze(0).contiguous(), state[1].unsqueeze(0).contiguous())
    return state[0].unsqueeze(0).contiguous()


def _tree_copy_row(buf, t: int, x) -> None:
    if isinstance(buf, dict):
        for k in buf:
            _tree_copy_row(buf[k], t, x[k])
    else:
        buf[t].copy_(x)


def _copy_into(buf_np, t: int, x) -> None:
    """numpy ``buf[t] = x`` (cast to buf's dtype) for arrays or dicts of them."""
    if isinstance(buf_np, dict):
        for k in buf_np:
            _copy_into(buf_np[k], t, x[k])
    else:
        np.copyto(buf_np[t], x, casting="unsafe")


# -- the loss as one autograd node, numpy inside ----------------------------------------------------------------
def _objective(newlogp, entropy, newv, logp_old, adv, ret, val_old, coefs: tuple):
    """:func:`~membench_agents.algos.ppo.ppo_loss` in numpy (1-D float32 arrays, no autograd) with its
    gradient: ``(stats, g_logp, g_v, (s_logp, s_ent, s_v))``, ``stats = [loss, policy_loss, value_loss,
    entropy, approx_kl, clipfrac]``; the gradient of the loss is ``g_logp * s_logp`` for ``newlogp``,
    ``s_ent`` for every entropy element and ``g_v * s_v`` for ``newv``. Ties of the ``max`` terms split the
    gradient as ``torch.maximum`` does (autograd's gradient of the op-by-op loss)."""
    clip, clip_vloss, ent_coef, vf_coef, norm_adv = coefs
    n = newlogp.shape[0]
    logratio = newlogp - logp_old
    ratio = np.exp(logratio)
    if norm_adv and n > 1:
        centred = adv - adv.sum() / n
        adv = centred / (np.sqrt(np.dot(centred, centred) / (n - 1)) + 1e-8)
    s1 = adv * ratio  # the surrogate objectives, maximised: loss = mean(max(-s1, -s2)) = -mean(min(s1, s2))
    s2 = adv * np.clip(ratio, 1 - clip, 1 + clip)
    pg_loss = -np.minimum(s1, s2).sum() / n
    # d loss_i / d ratio_i = -adv_i where the unclipped term is the minimum (on ties the clamp is inactive
    # and both halves add up to the whole gradient), else 0
    g_logp = np.where(s1 <= s2, s1, 0.0)
    err = newv - ret
    if clip_vloss:
        dv = newv - val_old
        dv_clipped = np.clip(dv, -clip, clip)
        err_c = val_old + dv_clipped - ret
        l1, l2 = err * err, err_c * err_c
        v_loss = 0.5 * np.maximum(l1, l2).sum() / n
        g_c = np.where(dv_clipped == dv, err_c, 0.0)  # the clamp passes the gradient inside [-clip, clip]
        g_v = np.where(l1 > l2, err, np.where(l1 < l2, g_c, 0.5 * (err + g_c)))
    else:
        v_loss = 0.5 * np.dot(err, err) / n
        g_v = err
    ent = entropy.sum() / n
    loss = pg_loss - ent_coef * ent + vf_coef * v_loss
    approx_kl = (ratio - 1 - logratio).sum() / n
    clipfrac = np.count_nonzero(np.abs(ratio - 1) > clip) / n
    return [loss, pg_loss, v_loss, ent, approx_kl, clipfrac], g_logp, g_v, (-1.0 / n, -ent_coef / n, vf_coef / n)


class DiscretePPOLoss(torch.autograd.Function):
    """Head, categorical and PPO loss of a Discrete policy, from the core's feature rows, as one node.

    ``apply(rows [R, H], weight [n + 1, H], bias [n + 1], index [N] or None, actions, targets, coefs)`` ->
    ``[loss, policy_loss, value_loss, entropy, approx_kl, clipfrac]`` (only ``loss`` has a gradient).
    ``actions``: the 0-based actions (int array [N]); ``targets``: float32 array [4, N] of logp_old,
    advantages, returns and old values, in step order; ``index``: as in :func:`core_rows`.
    ``coefs = (clip_coef, clip_vloss, ent_coef, vf_coef, norm_adv)``. The head runs once per row; its
    narrow outputs are put in step order; the softmax and loss run in numpy and their gradient is written
    out.
    """

    @staticmethod
    def forward(
        ctx: Any,
        rows,
        weight,
        bias,
        index,
        actions,
        targets: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        coefs,
    ):
        n = weight.shape[0] - 1
        # the head's outputs transposed, [n + 1, steps]: each output is a contiguous row, so the softmax
        # reductions over the n logits are n - 1 vector operations
        head = torch.addmm(bias.unsqueeze(1), weight, rows.t())
        if index is not None:
            head = head.index_select(1, index)
        out = head.numpy()
        z = out[:n] - out[:n].max(0)
        e = np.exp(z)
        total = e.sum(0)
        logp_all = z - np.log(total)
        pi = e / total
        steps = np.arange(len(actions))
        entropy = -(pi * logp_all).sum(0)
        stats, g_logp, g_v, scales = _objective(logp_all[actions, steps], entropy, out[n], *targets, coefs)
        ctx.arrays = (steps, actions, pi, logp_all, entropy, g_logp, g_v, scales)
        ctx.save_for_backward(rows, weight, index)
        return torch.from_numpy(np.array(stats, dtype=np.float32))

    @staticmethod
    def backward(ctx: Any, grad):
        rows, weight, index = ctx.saved_tensors
        steps, a, pi, logp_all, entropy, g_logp, g_v, (s_logp, s_ent, s_v) = ctx.arrays
        g = float(grad[0])
        d_logp = g_logp * np.float32(g * s_logp)  # dL/d newlogp
        d_ent = np.float32(g * s_ent)  # dL/d entropy (the same for every step)
        # d logp_a / d z_j = [j = a] - pi_j;  d entropy / d z_j = -pi_j (logp_j + entropy)
        d_head = np.empty((pi.shape[0] + 1, len(a)), dtype=np.float32)  # [n + 1, steps], like the forward's out
        dz = d_head[:-1]
        np.multiply(pi, -d_ent * (logp_all + entropy) - d_logp, out=dz)
        dz[a, steps] += d_logp
        np.multiply(g_v, np.float32(g * s_v), out=d_head[-1])
        d_out = torch.from_numpy(d_head)
        if index is not None:
            d_out = d_out.new_zeros(d_out.shape[0], rows.shape[0]).index_copy_(1, index, d_out)
        d_rows = d_out.t().mm(weight) if ctx.needs_input_grad[0] else None
        return d_rows, d_out.mm(rows), d_out.sum(1), None, None, None, None
