"""PPO with any memory core (mlp, lstm, gru, gtrxl, ffm, mingru, lru), discrete or continuous actions, truncated BPTT.

This file is the reference implementation, to be read top to bottom like CleanRL's ``ppo_atari_lstm.py``:
:meth:`PPO._rollout`, :meth:`PPO._advantages` (GAE), :meth:`PPO._update` (the op-by-op loss of
:func:`ppo_loss`, ``clip_grad_norm_``, ``optimizer.step()``). One :meth:`PPO.train_iteration` = one
rollout of ``num_steps`` steps in ``num_envs`` environments plus ``update_epochs`` passes of minibatch
updates.

What it does beyond CleanRL:

* Truncated BPTT: the rollout is cut into chunks of ``bptt_length`` steps; the core's state at the start
  of each chunk is stored (any core: a tuple of tensors with the batch on dim 0), and the update re-runs each
  chunk from it. Episode starts inside a chunk reset the state, so no gradient crosses them; the recurrent
  cores run a chunk's episode segments as ONE padded ``nn.LSTM`` / ``nn.GRU`` call
  (:mod:`membench_agents.nets.memory.rnn`); GTrXL's state is its memory of past steps, so the chunk sees the
  context the rollout saw (:mod:`membench_agents.nets.memory.gtrxl`). Minibatches are sets of chunks; a memoryless
  core uses chunks of one step (ordinary shuffled PPO minibatches).
* Truncation (``truncated`` and not ``terminated``): the reward is bootstrapped with ``gamma *
  V(final_obs)`` (SAME_STEP autoreset: ``info["final_obs"]``).
* Discrete actions are sampled by Gumbel-max (:meth:`ActorCritic.act`).
* Options: observation normalisation (running mean/std of the float vector parts, frozen during a rollout
  so acting and updating see the same inputs) and reward normalisation (scaled by the running std of the
  discounted return, as in gymnasium's ``NormalizeReward``).
* Torch environments (ManiSkill's GPU simulation) keep their tensors on their device; numpy environments
  are converted once per step.
* :meth:`PPO.state_dict` holds everything needed to resume exactly (RNGs, rollout position) except the
  environments, whose state the run layer saves as plain data (:mod:`membench_agents.runs.envstate`).

Speed: with ``PPOConfig.fast_cpu`` ("auto", the default) Discrete policies on the CPU with a built-in core
train through :mod:`membench_agents.algos.ppo_fast_cpu` instead of :meth:`PPO._rollout` and
:meth:`PPO._update`: the same algorithm and the same numbers (tested), with less per-operation overhead.
This file never depends on it otherwise; ``fast_cpu="off"`` runs exactly the code below.

Metrics of :meth:`PPO.train_iteration`: ``global_step``, ``iteration``, ``sps`` (environment steps per
wall-clock second of this iteration, rollout + update), ``rollout_sps``, ``time_rollout``,
``time_update``, ``policy_loss``, ``value_loss``, ``entropy``, ``approx_kl``, ``clipfrac`` (means over
the minibatches), ``explained_variance``, ``learning_rate``, and ``episodes``: one
``(return, length, success or None)`` per episode finished during the rollout (raw rewards).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium.vector import VectorEnv
from torch import Tensor, nn

from membench_agents.algos.common import (
    EpisodeStats,
    adam,
    check_fields,
    ranged,
    restore_rng,
    rng_state,
    set_up,
    tree_map,
)
from membench_agents.algos.trainer import AlgoTrainer, ppo_config
from membench_agents.algos.vector import (
    final_obs,
    first_leaf,
    is_torch,
    obs_to_tensor,
    take_rows,
    to_tensor,
)
from membench_agents.errors import ConfigError, check_stop
from membench_agents.nets.actor_critic import ActorCritic, RunningMeanStd
from membench_agents.nets.encoders import make_encoder
from membench_agents.nets.memory import CORES
from membench_agents.nets.memory.gtrxl import OPTIONS as GTRXL_OPTIONS
from membench_agents.nets.memory.gtrxl import check_options as check_gtrxl_options

FAST_CPU_MODES = ("auto", "on", "off")


@dataclass
class PPOConfig:
    """PPO hyperparameters (defaults: CleanRL's recurrent PPO, with smaller networks)."""

    num_envs: int = ranged(16, at_least=1)
    num_steps: int = ranged(128, at_least=1)
    """rollout length per environment"""
    total_steps: int = ranged(1_000_000, at_least=1)
    """environment steps of the whole run (sets ``num_iterations`` and the learning-rate schedule)"""
    learning_rate: float = ranged(2.5e-4, above=0)
    anneal_lr: bool = True
    gamma: float = ranged(0.99, at_least=0, at_most=1)
    gae_lambda: float = ranged(0.95, at_least=0, at_most=1)
    clip_coef: float = ranged(0.2, above=0)
    clip_vloss: bool = True
    ent_coef: float = ranged(0.01, at_least=0)
    vf_coef: float = ranged(0.5, at_least=0)
    max_grad_norm: float = ranged(0.5, above=0)
    update_epochs: int = ranged(4, at_least=1)
    num_minibatches: int = ranged(4, at_least=1)
    """minibatches per epoch: the training sequences are split into this many parts of equal size (+-1)"""
    bptt_length: int | None = ranged(None, at_least=1)
    """truncated-BPTT chunk length (must divide num_steps); None = the whole rollout"""
    core: str = "lstm"
    hidden_size: int = ranged(128, at_least=1)
    gtrxl: dict[str, Any] = field(default_factory=dict)
    """options of the gtrxl core (set only with core "gtrxl"): n_layers, n_heads, window (steps each attention
    layer sees), ff_size, gate_bias; unset ones take :class:`~membench_agents.nets.memory.GTrXLCore`'s defaults"""
    encoder_size: int = ranged(0, at_least=0)
    """width of the MLP on vector observations; 0: none (the memory core embeds them; images use a CNN)"""
    norm_obs: bool = False
    norm_reward: bool = False
    norm_adv: bool = True
    init_log_std: float = 0.0
    """initial log standard deviation of the Gaussian policy (Box actions); MIKASA-Robo's baselines use -0.5"""
    target_kl: float | None = ranged(None, above=0)
    """stop the epochs of an update early when the approximate KL exceeds this"""
    seed: int = 0
    device: str = "auto"
    """"cpu", "cuda", "cuda:N" or "auto" (cuda when available)"""
    deterministic: bool = False
    """use torch deterministic algorithms"""
    num_threads: int | None = ranged(1, at_least=1)
    """torch.set_num_threads (None: leave it); 1 is fastest for these small networks"""
    fast_cpu: str = ranged("auto", choices=FAST_CPU_MODES)
    """the CPU fast path (:mod:`membench_agents.algos.ppo_fast_cpu`): "auto" (where it applies: CPU, Discrete
    actions, a built-in core), "on" (an error where it cannot apply) or "off" (always this file's code)"""

    def validate(self) -> None:
        """Raise ValueError naming the first field outside its range (declared with the field, see
        :func:`~membench_agents.algos.common.check_fields`), then the rules between fields."""
        check_fields(self)
        if not isinstance(self.core, str) or self.core.lower() not in CORES:
            raise ValueError(f"unknown memory core {self.core!r}; valid names: {', '.join(CORES)}")
        if not isinstance(self.gtrxl, dict):
            raise ValueError(
                f"PPOConfig.gtrxl must be a mapping of GTrXL options ({', '.join(GTRXL_OPTIONS)}), got {self.gtrxl!r}"
            )
        if self.gtrxl and self.core.lower() != "gtrxl":
            raise ValueError(f"PPOConfig.gtrxl configures the gtrxl core, but core is {self.core!r}; remove it")
        check_gtrxl_options(self.gtrxl, self.hidden_size, "PPOConfig.gtrxl")
        if self.bptt_length is not None:
            if self.num_steps % self.bptt_length:
                raise ValueError(f"bptt_length ({self.bptt_length}) must divide num_steps ({self.num_steps})")
        n = self.num_sequences
        if self.num_minibatches > n:
            raise ValueError(
                f"num_minibatches ({self.num_minibatches}) exceeds the number of training sequences "
                f"({n} = num_envs x num_steps / bptt_length; 1-step sequences for the mlp core)"
            )

    @property
    def core_kwargs(self) -> dict[str, Any]:
        """The memory core's options (the ``gtrxl`` mapping for the gtrxl core; none for the others)."""
        return dict(self.gtrxl) if self.core.lower() == "gtrxl" else {}

    @property
    def num_iterations(self) -> int:
        """Iterations of the run: whole rollouts of num_envs x num_steps, at least one (total_steps rounds down)."""
        return max(1, self.total_steps // (self.num_envs * self.num_steps))

    @property
    def num_sequences(self) -> int:
        """How many training sequences (BPTT chunks) one rollout gives: the minibatches split these."""
        recurrent = CORES[self.core.lower()].recurrent
        bptt = (self.bptt_length or self.num_steps) if recurrent else 1
        return self.num_envs * (self.num_steps // bptt)


# -- small tree helpers (observations may be dicts of tensors) --------------------------------------------
def _tree_set(buf, t: int, x) -> None:
    if isinstance(buf, dict):
        for k in buf:
            _tree_set(buf[k], t, x[k])
    else:
        buf[t].copy_(x)


# -- the loss ------------------------------------------------------------------------------------------------
LOSS_STATS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")


def ppo_loss(
    cfg: PPOConfig,
    newlogp: Tensor,
    entropy: Tensor,
    newvalue: Tensor,
    logp_old: Tensor,
    advantages: Tensor,
    returns: Tensor,
    values_old: Tensor,
) -> tuple[Tensor, Tensor]:
    """The PPO loss of one minibatch (CleanRL's formulas) and its statistics ``[policy_loss, value_loss,
    entropy, approx_kl, clipfrac]`` (detached). All inputs have the same shape."""
    logratio = newlogp - logp_old
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > cfg.clip_coef).float().mean()
    adv = advantages
    if cfg.norm_adv and adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    # clipped surrogate objective
    pg_loss1 = -adv * ratio
    pg_loss2 = -adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    # value loss, optionally clipped around the rollout's values
    if cfg.clip_vloss:
        v_loss_unclipped = (newvalue - returns) ** 2
        v_clipped = values_old + torch.clamp(newvalue - values_old, -cfg.clip_coef, cfg.clip_coef)
        v_loss_clipped = (v_clipped - returns) ** 2
        v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        v_loss = 0.5 * ((newvalue - returns) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - cfg.ent_coef * entropy_loss + v_loss * cfg.vf_coef
    stats = torch.stack([pg_loss.detach(), v_loss.detach(), entropy_loss.detach(), approx_kl, clipfrac])
    return loss, stats


class PPO:
    """Proximal Policy Optimisation on a SAME_STEP-autoreset vector env (see the module docstring).

    The environment is reset with ``config.seed`` at construction. Attributes: ``policy`` (the
    :class:`ActorCritic`), ``optimizer``, ``envs``, ``device``, ``global_step``, ``iteration``,
    ``num_iterations``, ``fast`` (the :class:`~membench_agents.algos.ppo_fast_cpu.FastCPU` in use, or None).
    """

    def __init__(self, envs: VectorEnv, config: PPOConfig):
        self.device = set_up(envs, config)
        self.config = cfg = config
        self.envs = envs
        self.policy = ActorCritic(
            envs.single_observation_space,
            envs.single_action_space,
            cfg.core,
            cfg.hidden_size,
            norm_obs=cfg.norm_obs,
            encoder_size=cfg.encoder_size,
            core_kwargs=cfg.core_kwargs,
            init_log_std=cfg.init_log_std,
        ).to(self.device)
        self.optimizer = adam(self.policy.parameters(), cfg.learning_rate, eps=1e-5)  # CleanRL's eps
        self.generator = torch.Generator(device=self.device).manual_seed(cfg.seed)  # action sampling
        self.shuffle_generator = torch.Generator().manual_seed(cfg.seed + 1)  # minibatch shuffles
        self.num_iterations = cfg.num_iterations
        self.bptt = (cfg.bptt_length or cfg.num_steps) if self.policy.recurrent else 1
        self.global_step = 0
        self.iteration = 0
        N = cfg.num_envs
        self.return_rms = RunningMeanStd(()).to(self.device)
        self.discounted_return = torch.zeros(N, dtype=torch.float32, device=self.device)

        obs, _ = envs.reset(seed=cfg.seed)
        self.torch_env = is_torch(obs)
        self.env_device = first_leaf(obs).device if self.torch_env else None
        self.episodes = EpisodeStats(N, self.env_device)
        self.next_obs = obs_to_tensor(obs, self.device)
        self.next_state = self.policy.initial_state(N, self.device)
        self.next_episode_start = torch.ones(N, dtype=torch.bool, device=self.device)
        self._alloc_buffers()
        self.fast = None
        if cfg.fast_cpu != "off":
            from membench_agents.algos import ppo_fast_cpu

            why_not = ppo_fast_cpu.why_not(self)
            if why_not is None:
                self.fast = ppo_fast_cpu.FastCPU(self)
            elif cfg.fast_cpu == "on":
                raise ValueError(
                    f"PPOConfig.fast_cpu='on' but the CPU fast path cannot run here: {why_not} "
                    "(use fast_cpu='auto' or 'off')"
                )

    def _alloc_buffers(self) -> None:
        cfg, dev = self.config, self.device
        T, N = cfg.num_steps, cfg.num_envs
        # observations and episode starts have one extra row (T + 1): row t + 1 of the episode starts is "done
        # after step t" (an episode ends at step t exactly when one starts at step t + 1)
        self._obs_store = tree_map(lambda o: torch.zeros((T + 1, *o.shape), dtype=o.dtype, device=dev), self.next_obs)
        self.obs_buf = tree_map(lambda o: o[:T], self._obs_store)
        a_shape = tuple(self.envs.single_action_space.shape or ())
        a_dtype = torch.float32 if self.policy.kind == "continuous" else torch.long
        self.act_buf = torch.zeros((T, N, *a_shape), dtype=a_dtype, device=dev)
        self.logp_buf = torch.zeros((T, N), device=dev)
        self.val_buf = torch.zeros((T, N), device=dev)
        self.rew_buf = torch.zeros((T, N), device=dev)
        self._es_store = torch.zeros((T + 1, N), dtype=torch.bool, device=dev)
        self.es_buf, self.done_buf = self._es_store[:T], self._es_store[1:]
        # the core's state at the start of every BPTT chunk (every state tensor has the batch on dim 0)
        self.state_buf = tuple(
            torch.zeros((T // self.bptt, *s.shape), dtype=s.dtype, device=dev) for s in self.next_state
        )

    def _learning_rate(self) -> float:
        cfg = self.config
        if not cfg.anneal_lr:
            return cfg.learning_rate
        frac = max(0.0, 1.0 - self.iteration / self.num_iterations)
        return frac * cfg.learning_rate

    # -- 1. rollout ---------------------------------------------------------------------------------------
    @torch.no_grad()
    def _rollout(self, should_stop: Callable[[], bool] | None = None) -> list[tuple[float, int, bool | None]]:
        """``num_steps`` steps of every environment into the buffers; returns the finished episodes."""
        cfg, policy, envs, dev = self.config, self.policy, self.envs, self.device
        obs, state, es = self.next_obs, self.next_state, self.next_episode_start
        episodes: list[tuple[float, int, bool | None]] = []
        for t in range(cfg.num_steps):
            check_stop(should_stop)
            _tree_set(self.obs_buf, t, obs)
            self.es_buf[t] = es
            if t % self.bptt == 0:  # the state at the start of each BPTT chunk
                for buf, s in zip(self.state_buf, state, strict=True):
                    buf[t // self.bptt] = s
            action, logp, value, state = policy.act(obs, state, es, generator=self.generator)
            self.act_buf[t] = action
            self.logp_buf[t] = logp
            self.val_buf[t] = value
            env_action = policy.env_action(action)
            step_action = env_action.to(self.env_device) if self.torch_env else env_action.cpu().numpy()
            next_obs, reward, terminated, truncated, info = envs.step(step_action)
            # episode bookkeeping stays where the env lives: numpy for numpy envs, tensors for torch envs
            if self.torch_env:
                reward = reward.reshape(-1).to(torch.float64)
                terminated, truncated = terminated.reshape(-1).bool(), truncated.reshape(-1).bool()
            else:
                reward = np.asarray(reward, dtype=np.float64).reshape(-1)
                terminated = np.asarray(terminated, dtype=bool).reshape(-1)
                truncated = np.asarray(truncated, dtype=bool).reshape(-1)
            done = terminated | truncated
            self.episodes.add(reward)
            self.rew_buf[t] = to_tensor(reward, dev, torch.float32)
            self.done_buf[t] = to_tensor(done, dev, torch.bool)
            es = self.done_buf[t]
            if cfg.norm_reward:
                self.rew_buf[t] = self._normalize_reward(self.rew_buf[t], es)
            if done.any():
                self._bootstrap_truncated(t, truncated & ~terminated, info, state)
                episodes.extend(self.episodes.finish(done, info))
            obs = obs_to_tensor(next_obs, dev)
        self.next_obs, self.next_state, self.next_episode_start = obs, state, es
        return episodes

    def _bootstrap_truncated(self, t: int, cut, info: dict, state) -> None:
        """Add ``gamma * V(final_obs)`` to the reward of step t of the environments whose episode was cut
        (``cut``: truncated and not terminated; the value runs from the state after step t)."""
        dev = self.device
        cut = to_tensor(cut, dev, torch.bool)
        if not bool(cut.any()):
            return
        idx = torch.nonzero(cut).squeeze(1)
        fo = obs_to_tensor(take_rows(final_obs(info), idx.cpu().numpy()), dev)
        v = self.policy.value(fo, tuple(s[idx] for s in state), torch.zeros(len(idx), dtype=torch.bool, device=dev))
        self.rew_buf[t, idx] += self.config.gamma * v

    def _normalize_reward(self, reward: Tensor, done: Tensor) -> Tensor:
        """Scale by the running std of the discounted return (gymnasium's NormalizeReward)."""
        self.discounted_return.mul_(self.config.gamma).add_(reward)
        self.return_rms.update(self.discounted_return)
        self.discounted_return.masked_fill_(done, 0.0)
        return reward / torch.sqrt(self.return_rms.var.float() + 1e-8)

    # -- 2. advantages (GAE) ----------------------------------------------------------------------------------
    @torch.no_grad()
    def _advantages(self) -> tuple[Tensor, Tensor]:
        """Generalised advantage estimates and returns ``[T, N]``, bootstrapped with V(next_obs)."""
        cfg = self.config
        next_value = self.policy.value(self.next_obs, self.next_state, self.next_episode_start)
        values = torch.cat([self.val_buf, next_value.unsqueeze(0)], 0)
        notdone = (~self.done_buf).float()
        # the TD errors and the decay of every step at once; the recursion itself runs backwards in time
        deltas = self.rew_buf + cfg.gamma * values[1:] * notdone - values[:-1]
        decay = cfg.gamma * cfg.gae_lambda * notdone
        advantages = torch.zeros_like(self.rew_buf)
        lastgaelam = torch.zeros(cfg.num_envs, device=self.device)
        for t in reversed(range(cfg.num_steps)):
            lastgaelam = deltas[t] + decay[t] * lastgaelam
            advantages[t] = lastgaelam
        return advantages, advantages + self.val_buf

    # -- 3. update ------------------------------------------------------------------------------------------------
    def chunks(self, x: Tensor) -> Tensor:
        """Rollout ``[T, N, ...]`` -> training sequences ``[K, T/K * N, ...]`` (sequence j * N + n is steps
        j*K .. j*K + K - 1 of environment n; K = the BPTT length)."""
        T, N = x.shape[:2]
        K = self.bptt
        return x.reshape(T // K, K, N, *x.shape[2:]).transpose(0, 1).reshape(K, (T // K) * N, *x.shape[2:])

    def _update(
        self, advantages: Tensor, returns: Tensor, should_stop: Callable[[], bool] | None = None
    ) -> dict[str, float]:
        cfg, policy = self.config, self.policy
        obs = tree_map(self.chunks, self.obs_buf)
        actions, logp_old, es = self.chunks(self.act_buf), self.chunks(self.logp_buf), self.chunks(self.es_buf)
        adv, ret, val_old = self.chunks(advantages), self.chunks(returns), self.chunks(self.val_buf)
        states = tuple(s.reshape(-1, *s.shape[2:]) for s in self.state_buf)  # the state at each sequence start
        stats = []
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(adv.shape[1], generator=self.shuffle_generator).to(self.device)
            for mb in perm.tensor_split(cfg.num_minibatches):  # sizes differ by at most one
                check_stop(should_stop)
                newlogp, entropy, newvalue = policy.evaluate_actions(
                    tree_map(lambda o, mb=mb: o[:, mb], obs), actions[:, mb], tuple(s[mb] for s in states), es[:, mb]
                )
                loss, mb_stats = ppo_loss(
                    cfg, newlogp, entropy, newvalue, logp_old[:, mb], adv[:, mb], ret[:, mb], val_old[:, mb]
                )
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                stats.append(mb_stats)
                if cfg.target_kl is not None and float(mb_stats[3]) > cfg.target_kl:
                    break
            if cfg.target_kl is not None and float(stats[-1][3]) > cfg.target_kl:
                break
        return self._update_metrics(stats, returns)

    def _update_metrics(self, stats: list[Tensor], returns: Tensor) -> dict[str, float]:
        out = dict(zip(LOSS_STATS, torch.stack(stats).mean(0).tolist(), strict=True))
        y_pred, y_true = self.val_buf.flatten(), returns.flatten()
        var_y = torch.var(y_true)
        out["explained_variance"] = float("nan") if var_y == 0 else float(1 - torch.var(y_true - y_pred) / var_y)
        return out

    # ------------------------------------------------------------------------------------------------
    def train_iteration(self, should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """One rollout and one update; returns this iteration's metrics (see the module docstring).

        Iterations past ``num_iterations`` still run (with the learning rate annealed to 0 if ``anneal_lr``).
        ``should_stop`` is polled before every environment step and every minibatch: when it returns True,
        :class:`~membench_agents.errors.StopRequested` is raised and the iteration is dropped half-way (this
        object is then left mid-iteration: continue from a :meth:`state_dict` taken before it).
        """
        cfg = self.config
        t0 = time.perf_counter()
        lr = self._learning_rate()
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        self.policy.train()
        episodes = self.fast.rollout(should_stop) if self.fast else self._rollout(should_stop)
        t1 = time.perf_counter()
        advantages, returns = self._advantages()
        fast_or_readable = self.fast.update if self.fast else self._update
        metrics: dict[str, Any] = fast_or_readable(advantages, returns, should_stop)
        if cfg.norm_obs:  # new statistics take effect from the next rollout
            self.policy.update_obs_stats(tree_map(lambda o: o.reshape(-1, *o.shape[2:]), self.obs_buf))
        t2 = time.perf_counter()
        steps = cfg.num_envs * cfg.num_steps
        self.global_step += steps
        self.iteration += 1
        metrics.update(
            global_step=self.global_step,
            iteration=self.iteration,
            learning_rate=lr,
            sps=steps / max(t2 - t0, 1e-9),
            rollout_sps=steps / max(t1 - t0, 1e-9),
            time_rollout=t1 - t0,
            time_update=t2 - t1,
            episodes=episodes,
        )
        return metrics

    def train(self, callback=None) -> list[dict[str, Any]]:
        """Run the remaining iterations up to ``num_iterations``; ``callback(metrics)`` after each."""
        history = []
        while self.iteration < self.num_iterations:
            m = self.train_iteration()
            history.append(m)
            if callback is not None:
                callback(m)
        return history

    # ------------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly except the environments: network, optimizer, normalisers, RNGs,
        rollout position. Tensors and plain data only (loadable with ``weights_only=True``); the run layer saves
        the environments' state itself (:mod:`membench_agents.runs.envstate`)."""
        return {
            "config": dataclasses.asdict(self.config),
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "return_rms": self.return_rms.state_dict(),
            "discounted_return": self.discounted_return.clone(),
            **self.episodes.state_dict(),
            "global_step": self.global_step,
            "iteration": self.iteration,
            "next_obs": tree_map(lambda o: o.clone(), self.next_obs),
            "next_state": tuple(s.clone() for s in self.next_state),
            "next_episode_start": self.next_episode_start.clone(),
            "rng": rng_state({"generator": self.generator, "shuffle": self.shuffle_generator}),
        }

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (``self.envs`` is kept; its state is the run layer's business)."""
        dev = self.device
        self.policy.load_state_dict(d["policy"])
        self.optimizer.load_state_dict(d["optimizer"])
        self.return_rms.load_state_dict(d["return_rms"])
        self.discounted_return = d["discounted_return"].to(dev)
        self.episodes.load_state_dict(d)
        self.global_step = int(d["global_step"])
        self.iteration = int(d["iteration"])
        self.next_obs = tree_map(lambda o: o.to(dev), d["next_obs"])
        self.next_state = tuple(s.to(dev) for s in d["next_state"])
        self.next_episode_start = d["next_episode_start"].to(dev)
        restore_rng(d["rng"], {"generator": self.generator, "shuffle": self.shuffle_generator})


# ---------------------------------------------------------------------------------------------------------
# the run layer's interface (membench_agents.algos.trainer.Trainer)
# ---------------------------------------------------------------------------------------------------------
def check_ppo_spaces(agent: str, obs_space, action_space, env: str = "the environment") -> None:
    """Pre-flight: one clear ConfigError, naming ``env``, when membench PPO has no head or encoder for the spaces."""
    from gymnasium import spaces

    if not isinstance(action_space, (spaces.Discrete, spaces.MultiDiscrete, spaces.Box)):
        raise ConfigError(
            f"agent {agent!r} cannot handle {env}'s action space {action_space}: membench PPO has categorical "
            "(Discrete, MultiDiscrete) and diagonal-Gaussian (Box) policy heads only"
        )
    bounded = isinstance(action_space, spaces.Box) and np.all(np.isfinite(action_space.low))
    if isinstance(action_space, spaces.Box) and not (bounded and np.all(np.isfinite(action_space.high))):
        raise ConfigError(
            f"agent {agent!r} cannot handle {env}'s action space {action_space}: continuous actions are clipped to the "
            "space, so its bounds must be finite"
        )
    try:
        make_encoder(obs_space)  # the encoders say which observation spaces they take
    except ValueError as e:
        raise ConfigError(f"agent {agent!r} cannot handle {env}'s observation space: {e}") from None


class PPOTrainer(AlgoTrainer):
    """A membench PPO run (one seed). A stop inside an iteration drops it (PPO's update needs the whole rollout)."""

    kind = "ppo"
    keeps_unfinished_iteration = False

    def build(self, envs, config) -> PPO:
        return PPO(envs, config)

    @classmethod
    def check(cls, cfg: dict[str, Any], obs_space, action_space) -> None:
        """Pre-flight: one clear ConfigError when PPO cannot handle the spaces (before a run folder exists)."""
        agent = cfg["agent"]
        check_ppo_spaces(agent, obs_space, action_space, cfg["env"])
        pc = ppo_config(cfg, cfg["seeds"][0])
        try:
            ActorCritic(obs_space, action_space, pc.core, pc.hidden_size, core_kwargs=pc.core_kwargs)
        except ValueError as e:
            raise ConfigError(f"agent {agent!r} cannot handle {cfg['env']}: {e}") from None


__all__ = ["FAST_CPU_MODES", "LOSS_STATS", "PPO", "PPOConfig", "PPOTrainer", "check_ppo_spaces", "ppo_loss"]
