"""PPO with any memory core (mlp, lstm, gru), discrete or continuous actions, truncated BPTT.

One :meth:`PPO.train_iteration` = one rollout of ``num_steps`` steps in ``num_envs`` environments plus
``update_epochs`` passes of minibatch updates.

* Rollout: batched, one policy call and one ``envs.step`` per step (no per-environment Python loop).
  The recurrent state is reset (masked) for environments that start an episode. Numpy environments with
  CPU buffers: each output is copied once, into numpy views of the buffers, and the policy reads its input
  from there (``_rollout_numpy``); torch environments (ManiSkill GPU) are used on their device directly.
* Truncated BPTT: the rollout is cut into chunks of ``bptt_length`` steps; the recurrent state at the
  start of each chunk is stored, and the update re-runs each chunk from it (episode starts inside a
  chunk reset the state, so no gradient crosses them). Minibatches are sets of chunks. A memoryless core
  uses chunks of one step (ordinary shuffled PPO minibatches).
* Truncation (``truncated`` and not ``terminated``): the reward is bootstrapped with
  ``gamma * V(final_obs)`` (SAME_STEP autoreset: ``info["final_obs"]``).
* Options: observation normalisation (running mean/std of the float vector parts, frozen during a
  rollout so acting and updating see the same inputs) and reward normalisation (scaled by the running
  std of the discounted return, as in gymnasium's ``NormalizeReward``).

Metrics of :meth:`PPO.train_iteration`: ``global_step``, ``iteration``, ``sps`` (environment steps per
wall-clock second of this iteration, rollout + update), ``rollout_sps``, ``time_rollout``,
``time_update``, ``policy_loss``, ``value_loss``, ``entropy``, ``approx_kl``, ``clipfrac`` (means over
the minibatches), ``explained_variance``, ``learning_rate``, and ``episodes``: one
``(return, length, success or None)`` per episode finished during the rollout (raw rewards).

Speed (2-core CPU, one torch thread): the rollout costs one fused recurrent cell step per environment
step (weights in the cell's fastest layout, :meth:`ActorCritic.frozen`); Discrete actions are sampled by
Gumbel-max from the raw logits with the whole rollout's noise drawn at once, and their log-probabilities
are computed from the stored head outputs in one call after the rollout; the update runs every chunk's
episode segments through ONE padded ``nn.LSTM`` / ``nn.GRU`` call per minibatch (see
:mod:`membench_agents.memory.rnn`; the segment plans of an epoch's minibatches are computed in one pass,
:meth:`MemoryCore.plan_rows`), and everything after the memory core is one autograd node: the PPO loss
(:func:`_objective`, shared by numpy and torch), for Discrete policies on the CPU with the head and the
categorical too (:class:`_DiscretePPOLoss`, numpy inside: a numpy call on a few hundred numbers costs a
fraction of a torch op's dispatch). Parameters and gradients live in two flat buffers on the CPU, so
zeroing, clipping and the fused Adam step work on one tensor each; minibatches are contiguous slices of a
per-epoch permutation. Discrete LSTM policies on the CPU (no encoder parameters) skip autograd entirely:
oneDNN's LSTM layer kernels are called directly (:meth:`LSTMCore.forward_rows_manual`) and the loss's
written-out gradients go straight into the flat buffer (the same numbers; a test compares the two
updates). At PPO's minibatch sizes the LSTM kernels are most of the update; the rest is per-operation
overhead, which is what these choices remove.
"""

from __future__ import annotations

import dataclasses
import pickle
import random
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.optim.optimizer as _torch_optimizer
from gymnasium.vector import VectorEnv
from torch import Tensor, nn

from membench_agents.envs import (
    check_autoreset,
    episode_successes,
    final_obs,
    is_torch,
    obs_to_tensor,
    take_rows,
    to_tensor,
)
from membench_agents.memory import CORES, MemoryCore
from membench_agents.policy import ActorCritic, RunningMeanStd


@dataclass
class PPOConfig:
    """PPO hyperparameters (defaults: CleanRL's recurrent PPO, with smaller networks)."""

    num_envs: int = 16
    num_steps: int = 128
    """rollout length per environment"""
    total_steps: int = 1_000_000
    """environment steps of the whole run (sets ``num_iterations`` and the learning-rate schedule)"""
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 4
    num_minibatches: int = 4
    bptt_length: int | None = None
    """truncated-BPTT chunk length (must divide num_steps); None = the whole rollout"""
    core: str = "lstm"
    hidden_size: int = 128
    encoder_size: int = 0
    """width of the MLP on vector observations; 0: none (the memory core embeds them; images use a CNN)"""
    norm_obs: bool = False
    norm_reward: bool = False
    norm_adv: bool = True
    target_kl: float | None = None
    """stop the epochs of an update early when the approximate KL exceeds this"""
    seed: int = 0
    device: str = "auto"
    """"cpu", "cuda", "cuda:N" or "auto" (cuda when available)"""
    deterministic: bool = False
    """use torch deterministic algorithms"""
    num_threads: int | None = 1
    """torch.set_num_threads (None: leave it); 1 is fastest for these small networks"""

    def validate(self) -> None:
        def positive(name):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"PPOConfig.{name} must be >= 1, got {getattr(self, name)}")

        for name in ("num_envs", "num_steps", "total_steps", "update_epochs", "num_minibatches", "hidden_size"):
            positive(name)
        if self.encoder_size < 0:
            raise ValueError(f"PPOConfig.encoder_size must be >= 0, got {self.encoder_size}")
        if self.core.lower() not in CORES:
            raise ValueError(f"unknown memory core {self.core!r}; valid names: {', '.join(CORES)}")
        if self.bptt_length is not None:
            positive("bptt_length")
            if self.num_steps % self.bptt_length:
                raise ValueError(f"bptt_length ({self.bptt_length}) must divide num_steps ({self.num_steps})")
        if not 0.0 <= self.gamma <= 1.0 or not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError(f"gamma and gae_lambda must be in [0, 1], got {self.gamma}, {self.gae_lambda}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")


def resolve_device(device: str | torch.device) -> torch.device:
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    d = torch.device(device)
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    return d


# -- small tree helpers (observations may be dicts of tensors) --------------------------------------------
def _tree_map(fn, x):
    if isinstance(x, dict):
        return {k: _tree_map(fn, v) for k, v in x.items()}
    return fn(x)


def _first_tensor(x) -> Tensor:
    if isinstance(x, dict):
        return _first_tensor(next(iter(x.values())))
    return x


def _like(value, ref):
    """``value`` as the same kind (numpy array or tensor on ref's device) as ``ref``."""
    if isinstance(ref, np.ndarray):
        return value.cpu().numpy().copy() if isinstance(value, Tensor) else np.array(value, dtype=ref.dtype)
    return torch.as_tensor(value, device=ref.device, dtype=ref.dtype)


def _tree_copyto(buf, t: int, x) -> None:
    """numpy ``buf[t] = x`` (cast to buf's dtype) for arrays or dicts of them."""
    if isinstance(buf, dict):
        for k in buf:
            _tree_copyto(buf[k], t, x[k])
    else:
        np.copyto(buf[t], x, casting="unsafe")


def _tree_set(buf, t: int, x) -> None:
    if isinstance(buf, dict):
        for k in buf:
            _tree_set(buf[k], t, x[k])
    else:
        buf[t].copy_(x)


class PPO:
    """Proximal Policy Optimisation on a SAME_STEP-autoreset vector env (see the module docstring).

    The environment is reset with ``config.seed`` at construction. Attributes: ``policy`` (the
    :class:`ActorCritic`), ``optimizer``, ``envs``, ``global_step``, ``iteration``, ``num_iterations``.
    """

    def __init__(self, envs: VectorEnv, config: PPOConfig):
        config.validate()
        check_autoreset(envs)
        if envs.num_envs != config.num_envs:
            raise ValueError(f"the vector env has {envs.num_envs} environments but config.num_envs = {config.num_envs}")
        self.config = cfg = config
        self.envs = envs
        if cfg.num_threads is not None:
            torch.set_num_threads(int(cfg.num_threads))
        if cfg.deterministic:
            import os

            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
            torch.use_deterministic_algorithms(True)
        self.device = resolve_device(cfg.device)
        random.seed(cfg.seed)
        np.random.seed(cfg.seed % 2**32)
        torch.manual_seed(cfg.seed)
        self.policy = ActorCritic(envs.single_observation_space, envs.single_action_space, cfg.core,
                                  cfg.hidden_size, norm_obs=cfg.norm_obs, encoder_size=cfg.encoder_size).to(self.device)
        self._params = [p for p in self.policy.parameters() if p.requires_grad]
        self._flat = _FlatParams(self._params) if _FlatParams.supported(self._params) else None
        self._opt_params = [self._flat.param] if self._flat else self._params  # what Adam steps and clipping sees
        self.optimizer = _adam(self._opt_params, cfg.learning_rate, self.device)
        # Discrete policies on the CPU whose only parameters are the memory core's and the head's, with a core
        # that implements forward_rows_manual: updates write out their whole backward pass, without autograd
        core, head = self.policy.core, (self.policy.head.weight, self.policy.head.bias)
        self._manual = (self._flat is not None and self.policy.kind == "discrete" and self.device.type == "cpu"
                        and type(core).forward_rows_manual is not MemoryCore.forward_rows_manual
                        and {id(p) for p in self._params} == {id(p) for p in (*core.parameters(), *head)})
        self.generator = torch.Generator(device=self.device).manual_seed(cfg.seed)
        self.shuffle_generator = torch.Generator().manual_seed(cfg.seed + 1)
        self.num_iterations = max(1, cfg.total_steps // (cfg.num_envs * cfg.num_steps))
        self.bptt = (cfg.bptt_length or cfg.num_steps) if self.policy.recurrent else 1
        n_chunks = (cfg.num_steps // self.bptt) * cfg.num_envs
        if cfg.num_minibatches > n_chunks:
            raise ValueError(f"num_minibatches ({cfg.num_minibatches}) exceeds the number of training sequences "
                             f"({n_chunks} = num_envs x num_steps / bptt_length)")
        self.global_step = 0
        self.iteration = 0
        N = cfg.num_envs
        self.return_rms = RunningMeanStd(()).to(self.device)
        self.discounted_return = torch.zeros(N, dtype=torch.float32, device=self.device)

        obs, _ = envs.reset(seed=cfg.seed)
        self.torch_env = is_torch(obs)
        if self.torch_env:  # running episode statistics live where the env's outputs live
            env_dev = self.env_device = _first_tensor(obs).device
            self.ep_return = torch.zeros(N, dtype=torch.float64, device=env_dev)
            self.ep_length = torch.zeros(N, dtype=torch.long, device=env_dev)
        else:
            self.env_device = None
            self.ep_return = np.zeros(N, dtype=np.float64)
            self.ep_length = np.zeros(N, dtype=np.int64)
        self.next_obs = obs_to_tensor(obs, self.device)
        self.next_state = self.policy.initial_state(N, self.device)
        self.next_episode_start = torch.ones(N, dtype=torch.bool, device=self.device)
        self._alloc_buffers()

    # ------------------------------------------------------------------------------------------------
    def _alloc_buffers(self) -> None:
        cfg, dev = self.config, self.device
        T, N = cfg.num_steps, cfg.num_envs
        # observations and episode starts are stored with one extra row: row t + 1 is written once, right
        # after step t, and read as the next step's input (obs_buf / es_buf are rows 0..T-1, done_buf is es
        # rows 1..T: an episode ends at step t exactly when one starts at step t + 1)
        self._obs_store = _tree_map(lambda o: torch.zeros((T + 1, *o.shape), dtype=o.dtype, device=dev),
                                    self.next_obs)
        self.obs_buf = _tree_map(lambda o: o[:T], self._obs_store)
        a_shape = tuple(self.envs.single_action_space.shape or ())
        a_dtype = torch.float32 if self.policy.kind == "continuous" else torch.long
        self.act_buf = torch.zeros((T, N, *a_shape), dtype=a_dtype, device=dev)
        self.logp_buf = torch.zeros((T, N), device=dev)
        self.val_buf = torch.zeros((T, N), device=dev)
        self.rew_buf = torch.zeros((T, N), device=dev)
        self._es_store = torch.zeros((T + 1, N), dtype=torch.bool, device=dev)
        self.es_buf, self.done_buf = self._es_store[:T], self._es_store[1:]
        self.state_buf = tuple(torch.zeros((T // self.bptt, *s.shape), dtype=s.dtype, device=dev)
                               for s in self.next_state)
        # per-step views for the numpy-env rollout, made here (outside inference mode) once
        self._fast = self._fast_views() if not self.torch_env and dev.type == "cpu" else None

    def _learning_rate(self) -> float:
        cfg = self.config
        if not cfg.anneal_lr:
            return cfg.learning_rate
        frac = max(0.0, 1.0 - self.iteration / self.num_iterations)
        return frac * cfg.learning_rate

    # ------------------------------------------------------------------------------------------------
    def _rollout(self) -> list[tuple[float, int, bool | None]]:
        # inference mode: ~10% less overhead per tensor op than no_grad; the buffers are normal tensors,
        # and what outlives the rollout is cloned out of inference mode below.
        with torch.inference_mode(), self.policy.frozen():
            episodes = self._rollout_steps()
        self.next_obs = _tree_map(lambda o: o.clone(), self.next_obs)
        self.next_state = tuple(s.clone() for s in self.next_state)
        self.next_episode_start = self.next_episode_start.clone()
        return episodes

    def _fast_views(self) -> dict[str, Any]:
        """Per-step row views of the buffers (torch and numpy) for :meth:`_rollout_numpy`."""
        T, n = self.config.num_steps, self.policy.n_out
        discrete = self.policy.kind == "discrete"
        head = torch.zeros((T, self.config.num_envs, n + 1), device=self.device) if discrete else None
        log_noise = torch.zeros((T, self.config.num_envs, n), device=self.device) if discrete else None
        return {
            "obs": [_tree_map(lambda o, t=t: o[t], self._obs_store) for t in range(T + 1)],
            "obs_np": _tree_map(lambda o: o.numpy(), self._obs_store),
            "es": list(self._es_store.unbind(0)),
            "es_np": self._es_store.numpy(),
            "act": [a.unsqueeze(-1) for a in self.act_buf.unbind(0)] if discrete else list(self.act_buf.unbind(0)),
            "act_np": self.act_buf.numpy(),
            "logp": list(self.logp_buf.unbind(0)),
            "val": list(self.val_buf.unbind(0)),
            "rew_np": self.rew_buf.numpy(),
            "head_buf": head,
            "head": list(head.unbind(0)) if discrete else None,
            "log_noise_buf": log_noise,  # log Exp(1) draws of the whole rollout (Discrete policies)
            "log_noise": list(log_noise.unbind(0)) if discrete else None,
        }

    def _rollout_steps(self) -> list[tuple[float, int, bool | None]]:
        if not self.torch_env and self.device.type == "cpu":
            return self._rollout_numpy()
        return self._rollout_generic()

    def _rollout_numpy(self) -> list[tuple[float, int, bool | None]]:
        """:meth:`_rollout_generic` for a numpy env and CPU buffers, with the same results bit for bit and
        less work per step: the env's outputs are written straight into numpy views of the buffers (the
        observation row t + 1 is also the next step's policy input), Discrete policies write their outputs
        into the buffers (:meth:`ActorCritic.act_into`; their log-probabilities are computed for the whole
        rollout after it) and the rollout's exploration noise is drawn in one call (on CPU, one
        ``exponential_`` call of T x N x n draws produces exactly the draws of T calls of N x n in order;
        test_ppo checks this path against the generic one)."""
        cfg, policy, envs, dev = self.config, self.policy, self.envs, self.device
        K = self.bptt
        views = self._fast
        obs_rows, obs_np, es_rows, es_np = views["obs"], views["obs_np"], views["es"], views["es_np"]
        act_rows, act_np, logp_rows, val_rows = views["act"], views["act_np"], views["logp"], views["val"]
        rew_np = views["rew_np"]
        discrete = policy.kind == "discrete"
        if discrete:
            head_rows, log_noise = views["head"], views["log_noise"]
            views["log_noise_buf"].exponential_(generator=self.generator).log_()
        _tree_set(self._obs_store, 0, self.next_obs)
        es_rows[0].copy_(self.next_episode_start)
        state = self.next_state
        episodes: list[tuple[float, int, bool | None]] = []
        for t in range(cfg.num_steps):
            if t % K == 0:
                for buf, s in zip(self.state_buf, state, strict=True):
                    buf[t // K] = s
            if discrete:
                state = policy.act_into(obs_rows[t], state, es_rows[t], log_noise[t], act_rows[t], head_rows[t])
                env_action = act_np[t]
            else:
                action, logp, value, state = policy.act(obs_rows[t], state, es_rows[t], generator=self.generator)
                act_rows[t].copy_(action)
                logp_rows[t].copy_(logp)
                val_rows[t].copy_(value)
                env_action = policy.env_action(action).numpy()
            next_obs, reward, terminated, truncated, info = envs.step(env_action)
            reward = np.asarray(reward, dtype=np.float64).reshape(-1)
            terminated = np.asarray(terminated, dtype=bool).reshape(-1)
            truncated = np.asarray(truncated, dtype=bool).reshape(-1)
            done = np.logical_or(terminated, truncated, out=es_np[t + 1])  # = done_buf[t] = es_buf[t + 1]
            self.ep_return += reward
            self.ep_length += 1
            rew_np[t] = reward
            if isinstance(obs_np, dict):
                _tree_copyto(obs_np, t + 1, next_obs)
            else:
                np.copyto(obs_np[t + 1], next_obs, casting="unsafe")
            if cfg.norm_reward:
                self.rew_buf[t] = self._normalize_reward(self.rew_buf[t], es_rows[t + 1])
            if done.any():
                cut = truncated & ~terminated
                if cut.any():  # bootstrap truncated episodes with gamma * V(final observation)
                    cidx = np.flatnonzero(cut)
                    fo = obs_to_tensor(take_rows(final_obs(info), cidx), dev)
                    tidx = torch.from_numpy(cidx)
                    v = policy.value(fo, tuple(s[tidx] for s in state), torch.zeros(len(cidx), dtype=torch.bool))
                    self.rew_buf[t, tidx] += cfg.gamma * v
                idx = np.flatnonzero(done)
                succ = episode_successes(info, idx)
                episodes.extend(zip(self.ep_return[idx].tolist(), self.ep_length[idx].tolist(), succ, strict=True))
                self.ep_return[done] = 0.0
                self.ep_length[done] = 0
        if discrete:  # values and log-probabilities from the head outputs of the whole rollout
            head = views["head_buf"]
            self.val_buf.copy_(head[:, :, policy.n_out])
            self.logp_buf.copy_(policy.discrete_log_prob(head, self.act_buf))
        T = cfg.num_steps
        self.next_obs, self.next_state, self.next_episode_start = obs_rows[T], state, es_rows[T]
        return episodes

    def _rollout_generic(self) -> list[tuple[float, int, bool | None]]:
        cfg, policy, envs, dev = self.config, self.policy, self.envs, self.device
        K = self.bptt
        torch_env = self.torch_env
        numpy_rows = not torch_env and dev.type == "cpu"
        if numpy_rows:
            rew_np, done_np = self.rew_buf.numpy(), self.done_buf.numpy()
        obs, state, es = self.next_obs, self.next_state, self.next_episode_start
        episodes: list[tuple[float, int, bool | None]] = []
        for t in range(cfg.num_steps):
            _tree_set(self.obs_buf, t, obs)
            self.es_buf[t] = es
            if t % K == 0:
                for buf, s in zip(self.state_buf, state, strict=True):
                    buf[t // K] = s
            action, logp, value, state = policy.act(obs, state, es, generator=self.generator)
            self.act_buf[t] = action
            self.logp_buf[t] = logp
            self.val_buf[t] = value
            env_action = policy.env_action(action)
            if not torch_env:
                env_action = env_action.cpu().numpy()
            elif env_action.device != self.env_device:
                env_action = env_action.to(self.env_device)
            next_obs, reward, terminated, truncated, info = envs.step(env_action)
            # episode bookkeeping stays where the env lives: numpy for numpy envs, tensors for torch envs
            if torch_env:
                reward = reward.reshape(-1).to(torch.float64)
                terminated, truncated = terminated.reshape(-1).bool(), truncated.reshape(-1).bool()
            else:
                reward = np.asarray(reward, dtype=np.float64).reshape(-1)
                terminated = np.asarray(terminated, dtype=bool).reshape(-1)
                truncated = np.asarray(truncated, dtype=bool).reshape(-1)
            done = terminated | truncated
            self.ep_return += reward
            self.ep_length += 1
            if numpy_rows:  # CPU buffers: write the numpy rows directly (no tensor conversions per step)
                rew_np[t] = reward
                done_np[t] = done
            else:
                self.rew_buf[t] = to_tensor(reward, dev, torch.float32)
                self.done_buf[t] = to_tensor(done, dev, torch.bool)
            es = self.done_buf[t]
            if cfg.norm_reward:
                self.rew_buf[t] = self._normalize_reward(self.rew_buf[t], es)
            if done.any():
                cut = truncated & ~terminated
                if cut.any():  # bootstrap truncated episodes with gamma * V(final observation)
                    cidx = torch.nonzero(to_tensor(cut, dev, torch.bool)).squeeze(1)
                    fo = obs_to_tensor(take_rows(final_obs(info), cidx.cpu().numpy()), dev)
                    v = policy.value(fo, tuple(s[cidx] for s in state),
                                     torch.zeros(len(cidx), dtype=torch.bool, device=dev))
                    self.rew_buf[t, cidx] += cfg.gamma * v
                idx = torch.nonzero(done).squeeze(1) if torch_env else np.flatnonzero(done)
                idx_np = idx.cpu().numpy() if torch_env else idx
                succ = episode_successes(info, idx_np)
                episodes.extend(zip(self.ep_return[idx].tolist(), self.ep_length[idx].tolist(), succ, strict=True))
                self.ep_return[done] = 0.0
                self.ep_length[done] = 0
            obs = obs_to_tensor(next_obs, dev)
        self.next_obs, self.next_state, self.next_episode_start = obs, state, es
        return episodes

    def _normalize_reward(self, reward: Tensor, done: Tensor) -> Tensor:
        """Scale by the running std of the discounted return (gymnasium's NormalizeReward)."""
        self.discounted_return.mul_(self.config.gamma).add_(reward)
        self.return_rms.update(self.discounted_return)
        self.discounted_return.masked_fill_(done, 0.0)
        return reward / torch.sqrt(self.return_rms.var.float() + 1e-8)

    @torch.no_grad()
    def _advantages(self) -> tuple[Tensor, Tensor]:
        cfg = self.config
        next_value = self.policy.value(self.next_obs, self.next_state, self.next_episode_start)
        T = cfg.num_steps
        values = torch.cat([self.val_buf, next_value.unsqueeze(0)], 0)
        notdone = (~self.done_buf).float()
        deltas = self.rew_buf + cfg.gamma * values[1:] * notdone - values[:-1]
        decay = cfg.gamma * cfg.gae_lambda * notdone
        adv = torch.zeros_like(self.rew_buf)
        if adv.device.type == "cpu":  # numpy loop: ~5x less overhead per step than torch ops on tiny rows
            a, d, k = adv.numpy(), deltas.numpy(), decay.numpy()
            last = np.zeros(cfg.num_envs, dtype=np.float32)
            for t in range(T - 1, -1, -1):
                last = d[t] + k[t] * last
                a[t] = last
        else:
            last = torch.zeros(cfg.num_envs, device=adv.device)
            for t in range(T - 1, -1, -1):
                last = deltas[t] + decay[t] * last
                adv[t] = last
        return adv, adv + self.val_buf

    def _chunks(self, x: Tensor) -> Tensor:
        """[T, N, ...] -> [K, T/K * N, ...] (chunk index = j * N + n)."""
        T, N = x.shape[:2]
        K = self.bptt
        return x.reshape(T // K, K, N, *x.shape[2:]).transpose(0, 1).reshape(K, (T // K) * N, *x.shape[2:])

    def _update(self, advantages: Tensor, returns: Tensor) -> dict[str, float]:
        cfg, policy = self.config, self.policy
        obs = _tree_map(self._chunks, self.obs_buf)
        acts, logp_old = self._chunks(self.act_buf), self._chunks(self.logp_buf)
        adv, ret, val_old = self._chunks(advantages), self._chunks(returns), self._chunks(self.val_buf)
        discrete = policy.kind == "discrete" and self.device.type == "cpu"  # _DiscretePPOLoss: numpy inside
        if discrete:  # its inputs as host arrays: 0-based actions [K, C] and the targets [4, K, C]
            acts_host = (acts - policy.action_start if policy._start_nonzero else acts).numpy()
            targets_host = np.stack([x.numpy() for x in (logp_old, adv, ret, val_old)])
        es = self._chunks(self.es_buf)
        es_host = es.cpu().numpy()  # the cores plan their minibatches on the host, once per epoch
        states = tuple(s.reshape(-1, *s.shape[2:]) for s in self.state_buf)  # [T/K * N, H]
        n_chunks = adv.shape[1]
        stats: list[Tensor] = []
        coefs = (cfg.clip_coef, cfg.clip_vloss, cfg.ent_coef, cfg.vf_coef, cfg.norm_adv)
        stop = False
        M = cfg.num_minibatches
        bounds = [len(c) for c in torch.arange(n_chunks).chunk(M)]
        # every epoch's shuffle first, so the cores plan all the update's minibatches in one pass
        perms = [torch.randperm(n_chunks, generator=self.shuffle_generator) for _ in range(cfg.update_epochs)]
        all_plans = policy.core.plan_rows(es_host[:, torch.cat(perms).numpy()], bounds * cfg.update_epochs)
        for epoch, perm in enumerate(perms):
            # one gather per tensor and epoch; minibatches are then contiguous slices (views)
            plans = all_plans[epoch * M : (epoch + 1) * M]
            perm_host = perm.numpy()
            perm = perm.to(self.device)
            p_obs = _tree_map(lambda o, perm=perm: o.index_select(1, perm), obs)
            p_states = tuple(s.index_select(0, perm) for s in states)
            p_es = es.index_select(1, perm)
            if not discrete:
                p_acts, p_logp, p_adv, p_ret, p_val = (
                    x.index_select(1, perm) for x in (acts, logp_old, adv, ret, val_old))
            laid = None
            if self._manual:  # the epoch's minibatches laid out for the core's written-out path at once
                with torch.no_grad():
                    laid = policy.core.prepare_rows(policy._encode(p_obs), p_states, plans, bounds)
            start = 0
            for m, (size, plan) in enumerate(zip(bounds, plans, strict=True)):
                sl = slice(start, start + size)
                start += size
                mb_obs = _tree_map(lambda o, sl=sl: o[:, sl], p_obs)
                mb_state = tuple(s[sl] for s in p_states)
                if discrete:
                    cols = perm_host[sl]
                    mb_acts, mb_targets = acts_host[:, cols].reshape(-1), targets_host[:, :, cols].reshape(4, -1)
                if laid is not None and laid[m] is not None:
                    # the whole backward pass written out: gradients straight into the flat buffer
                    out = self._manual_gradients(policy.core.forward_rows_manual(laid[m]), mb_acts, mb_targets,
                                                 coefs)
                else:
                    if discrete:
                        rows, index = policy.features_rows(mb_obs, mb_state, p_es[:, sl], plan)
                        out = _DiscretePPOLoss.apply(rows, policy.head.weight, policy.head.bias, index, mb_acts,
                                                     mb_targets, coefs)
                    else:
                        out = _PPOObjective.apply(
                            *policy.evaluate_actions(mb_obs, p_acts[:, sl], mb_state, p_es[:, sl], plan),
                            p_logp[:, sl], p_adv[:, sl], p_ret[:, sl], p_val[:, sl], coefs)
                    if self._flat is not None:
                        self._flat.zero_grad()
                    else:
                        for q in self._params:  # optimizer.zero_grad(set_to_none=True) without its per-call overhead
                            q.grad = None
                    out[0].backward()
                if cfg.max_grad_norm and cfg.max_grad_norm > 0:
                    _clip_grad_norm(self._opt_params, cfg.max_grad_norm)
                _adam_step(self.optimizer)
                stats.append(out.detach()[1:])
                if cfg.target_kl is not None and float(out[4]) > cfg.target_kl:  # approx_kl
                    stop = True
                    break
            if stop:
                break
        out = dict(zip(_OBJECTIVE_STATS, torch.stack(stats).mean(0).tolist(), strict=True))
        y_pred, y_true = self.val_buf.flatten(), returns.flatten()
        var_y = torch.var(y_true)
        out["explained_variance"] = float("nan") if var_y == 0 else float(1 - torch.var(y_true - y_pred) / var_y)
        return out

    @torch.no_grad()
    def _manual_gradients(self, manual, actions: np.ndarray, targets: np.ndarray, coefs: tuple) -> Tensor:
        """One minibatch's loss statistics, with the loss's gradient written into the flat gradient buffer:
        the core's :meth:`MemoryCore.forward_rows_manual` rows and backward, :func:`_discrete_loss` and its
        written-out gradients (the numbers of the autograd path, without its graph)."""
        rows, index, core_backward = manual
        head = self.policy.head
        stats, saved = _discrete_loss(rows, head.weight, head.bias, index, actions, targets, coefs)
        d_rows, d_weight, d_bias = _discrete_loss_grads(saved, rows, head.weight, index, 1.0)
        grads = core_backward(d_rows)
        grads[head.weight], grads[head.bias] = d_weight, d_bias
        self._flat.set_grads(grads)
        return torch.from_numpy(stats)

    # ------------------------------------------------------------------------------------------------
    def train_iteration(self) -> dict[str, Any]:
        """One rollout and one update; returns this iteration's metrics (see the module docstring).

        Iterations past ``num_iterations`` still run (with the learning rate annealed to 0 if ``anneal_lr``).
        """
        cfg = self.config
        t0 = time.perf_counter()
        lr = self._learning_rate()
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        self.policy.train()
        episodes = self._rollout()
        t1 = time.perf_counter()
        advantages, returns = self._advantages()
        metrics = self._update(advantages, returns)
        if cfg.norm_obs:  # new statistics take effect from the next rollout
            self.policy.update_obs_stats(_tree_map(lambda o: o.reshape(-1, *o.shape[2:]), self.obs_buf))
        t2 = time.perf_counter()
        steps = cfg.num_envs * cfg.num_steps
        self.global_step += steps
        self.iteration += 1
        metrics.update(global_step=self.global_step, iteration=self.iteration, learning_rate=lr,
                       sps=steps / max(t2 - t0, 1e-9), rollout_sps=steps / max(t1 - t0, 1e-9),
                       time_rollout=t1 - t0, time_update=t2 - t1, episodes=episodes)
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
        """Everything needed to resume exactly: network, optimizer, normalisers, RNGs, rollout position, env."""
        try:
            envs_blob = pickle.dumps(self.envs)
        except Exception:  # noqa: BLE001 - subprocess / simulator envs cannot be pickled
            envs_blob = None
        return {
            "config": dataclasses.asdict(self.config),
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "return_rms": self.return_rms.state_dict(),
            "discounted_return": self.discounted_return.clone(),
            "ep_return": self.ep_return.copy() if isinstance(self.ep_return, np.ndarray) else self.ep_return.clone(),
            "ep_length": self.ep_length.copy() if isinstance(self.ep_length, np.ndarray) else self.ep_length.clone(),
            "global_step": self.global_step,
            "iteration": self.iteration,
            "next_obs": _tree_map(lambda o: o.clone(), self.next_obs),
            "next_state": tuple(s.clone() for s in self.next_state),
            "next_episode_start": self.next_episode_start.clone(),
            "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate(),
                    "generator": self.generator.get_state(), "shuffle": self.shuffle_generator.get_state()},
            "envs": envs_blob,
        }

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; a pickled env replaces ``self.envs`` (else the current one is kept)."""
        dev = self.device
        self.policy.load_state_dict(d["policy"])
        self.optimizer.load_state_dict(d["optimizer"])
        self.return_rms.load_state_dict(d["return_rms"])
        self.discounted_return = d["discounted_return"].to(dev)
        self.ep_return = _like(d["ep_return"], self.ep_return)
        self.ep_length = _like(d["ep_length"], self.ep_length)
        self.global_step = int(d["global_step"])
        self.iteration = int(d["iteration"])
        self.next_obs = _tree_map(lambda o: o.to(dev), d["next_obs"])
        self.next_state = tuple(s.to(dev) for s in d["next_state"])
        self.next_episode_start = d["next_episode_start"].to(dev)
        rng = d["rng"]
        torch.set_rng_state(rng["torch"])
        np.random.set_state(rng["numpy"])
        random.setstate(rng["python"])
        self.generator.set_state(rng["generator"])
        self.shuffle_generator.set_state(rng["shuffle"])
        if d.get("envs") is not None:
            self.envs = pickle.loads(d["envs"])

    def save(self, path) -> None:
        torch.save(self.state_dict(), path)

    def load(self, path) -> None:
        self.load_state_dict(torch.load(path, map_location=self.device, weights_only=False))


_OBJECTIVE_STATS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")  # stats[1:] of _objective


def _objective(xp, newlogp, entropy, newv, logp_old, adv, ret, val_old, coefs: tuple):
    """The PPO loss of a minibatch and its gradient, from the policy's ``newlogp``, ``entropy`` and ``newv``
    (1-D, equal lengths; no autograd): ``loss = clipped surrogate - ent_coef * mean entropy + vf_coef *
    value loss`` (CleanRL's formulas). ``xp``: the array library of the inputs, ``numpy`` or ``torch`` (the
    same code serves both). ``coefs = (clip_coef, clip_vloss, ent_coef, vf_coef, norm_adv)``; advantages are
    normalised per minibatch when ``norm_adv`` (and there is more than one).

    Returns ``(stats, g_logp, g_v, (s_logp, s_ent, s_v))`` where ``stats = [loss, policy_loss, value_loss,
    entropy, approx_kl, clipfrac]`` (scalars) and the gradient of the loss is ``g_logp * s_logp`` for
    ``newlogp``, ``s_ent`` for every entropy element and ``g_v * s_v`` for ``newv``. Ties of the ``max``
    terms split the gradient as ``torch.maximum`` does: this is autograd's gradient of the op-by-op loss.
    """
    clip, clip_vloss, ent_coef, vf_coef, norm_adv = coefs
    n = newlogp.shape[0]
    logratio = newlogp - logp_old
    ratio = xp.exp(logratio)
    if norm_adv and n > 1:
        centred = adv - adv.sum() / n
        adv = centred / (xp.sqrt(xp.dot(centred, centred) / (n - 1)) + 1e-8)
    s1 = adv * ratio  # the surrogate objectives, maximised: loss = mean(max(-s1, -s2)) = -mean(min(s1, s2))
    s2 = adv * xp.clip(ratio, 1 - clip, 1 + clip)
    pg_loss = -xp.minimum(s1, s2).sum() / n
    # d loss_i / d ratio_i = -adv_i where the unclipped term is the minimum (on ties the clamp is inactive
    # and both halves add up to the whole gradient), else 0
    g_logp = xp.where(s1 <= s2, s1, 0.0)
    err = newv - ret
    if clip_vloss:
        dv = newv - val_old
        dv_clipped = xp.clip(dv, -clip, clip)
        err_c = val_old + dv_clipped - ret
        l1, l2 = err * err, err_c * err_c
        v_loss = 0.5 * xp.maximum(l1, l2).sum() / n
        g_c = xp.where(dv_clipped == dv, err_c, 0.0)  # the clamp passes the gradient inside [-clip, clip]
        g_v = xp.where(l1 > l2, err, xp.where(l1 < l2, g_c, 0.5 * (err + g_c)))
    else:
        v_loss = 0.5 * xp.dot(err, err) / n
        g_v = err
    ent = entropy.sum() / n
    loss = pg_loss - ent_coef * ent + vf_coef * v_loss
    approx_kl = (ratio - 1 - logratio).sum() / n
    clipfrac = xp.count_nonzero(xp.abs(ratio - 1) > clip) / n
    return [loss, pg_loss, v_loss, ent, approx_kl, clipfrac], g_logp, g_v, (-1.0 / n, -ent_coef / n, vf_coef / n)


class _PPOObjective(torch.autograd.Function):
    """:func:`_objective` (torch) as one autograd node: ``apply(newlogp, entropy, newv, logp_old, adv, ret,
    val_old, coefs)`` (any equal shapes) -> ``[loss, policy_loss, value_loss, entropy, approx_kl, clipfrac]``
    (only ``loss`` carries a gradient). A few fused steps instead of ~40 recorded ops and their backward
    nodes: at PPO's minibatch sizes the per-op overhead is most of the loss's cost."""

    @staticmethod
    def forward(ctx, newlogp, entropy, newv, logp_old, adv, ret, val_old, coefs):
        stats, g_logp, g_v, ctx.scales = _objective(
            torch, *(x.reshape(-1) for x in (newlogp, entropy, newv, logp_old, adv, ret, val_old)), coefs)
        ctx.save_for_backward(g_logp, g_v)
        ctx.shape = entropy.shape
        return torch.stack(stats)

    @staticmethod
    def backward(ctx, grad):
        g_logp, g_v = ctx.saved_tensors
        s_logp, s_ent, s_v = ctx.scales
        g = grad[0]
        shape = ctx.shape
        return ((g_logp * (g * s_logp)).view(shape), (g * s_ent).expand(shape), (g_v * (g * s_v)).view(shape),
                None, None, None, None, None)


def _discrete_loss(rows: Tensor, weight: Tensor, bias: Tensor, index: Tensor | None, actions: np.ndarray,
                   targets: np.ndarray, coefs: tuple) -> tuple[np.ndarray, tuple]:
    """The forward pass of :class:`_DiscretePPOLoss` (no autograd): ``(stats, saved)``, where ``stats`` is
    the float32 array of :func:`_objective`'s statistics and ``saved`` what :func:`_discrete_loss_grads`
    needs."""
    n = weight.shape[0] - 1
    # the head's outputs transposed, [n + 1, steps]: each output is a contiguous row, so the softmax
    # reductions over the n logits are n - 1 vector operations
    out = torch.addmm(bias.unsqueeze(1), weight, rows.t())  # (callers run this without grad mode)
    if index is not None:
        out = out.index_select(1, index)
    out = out.numpy()
    z = out[:n] - out[:n].max(0)
    e = np.exp(z)
    total = e.sum(0)
    logp_all = z - np.log(total)
    pi = e / total
    steps = np.arange(len(actions))
    entropy = -(pi * logp_all).sum(0)
    stats, g_logp, g_v, scales = _objective(np, logp_all[actions, steps], entropy, out[n], *targets, coefs)
    return np.array(stats, dtype=np.float32), (steps, actions, pi, logp_all, entropy, g_logp, g_v, scales)


def _discrete_loss_grads(saved: tuple, rows: Tensor, weight: Tensor, index: Tensor | None, g: float,
                         need_rows: bool = True) -> tuple[Tensor | None, Tensor, Tensor]:
    """The backward pass of :class:`_DiscretePPOLoss` for ``g`` = dL/d loss: the gradients of ``rows``
    (None unless ``need_rows``), ``weight`` and ``bias``."""
    steps, a, pi, logp_all, entropy, g_logp, g_v, (s_logp, s_ent, s_v) = saved
    d_logp = g_logp * np.float32(g * s_logp)  # dL/d newlogp
    d_ent = np.float32(g * s_ent)  # dL/d entropy (the same for every step)
    # d logp_a / d z_j = [j = a] - pi_j;  d entropy / d z_j = -pi_j (logp_j + entropy)
    d_out = np.empty((pi.shape[0] + 1, len(a)), dtype=np.float32)  # [n + 1, steps], like the forward's out
    dz = d_out[:-1]
    np.multiply(pi, -d_ent * (logp_all + entropy) - d_logp, out=dz)
    dz[a, steps] += d_logp
    np.multiply(g_v, np.float32(g * s_v), out=d_out[-1])
    d_out = torch.from_numpy(d_out)
    if index is not None:
        d_out = d_out.new_zeros(d_out.shape[0], rows.shape[0]).index_copy_(1, index, d_out)
    return (d_out.t().mm(weight) if need_rows else None), d_out.mm(rows), d_out.sum(1)


class _DiscretePPOLoss(torch.autograd.Function):
    """The whole PPO loss of a Discrete policy on the CPU from the memory core's feature rows, as one
    autograd node: linear policy/value head, categorical log-probabilities and entropy, :func:`_objective`.

    ``apply(rows [R, H], weight [n + 1, H], bias [n + 1], index [N] or None, actions, targets, coefs)`` ->
    the stats of :func:`_objective`; ``actions``: the 0-based actions (int array [N]) and ``targets``: the
    float32 array [4, N] of logp_old, adv, ret and val_old, both host arrays in step order (PPO gathers
    them per minibatch with one numpy call each). The head runs once per feature row (``index`` puts its
    outputs in step order, as :meth:`ActorCritic.features_rows` returns them). Its backward pass is
    written out (softmax and head gradients), and everything but the matrix products runs in numpy, whose
    calls cost a fraction of a torch op's dispatch on vectors of a few hundred elements: the update records
    the memory core, this node and nothing else. (:func:`_discrete_loss` and :func:`_discrete_loss_grads`
    are its two passes, also used without autograd by PPO's direct LSTM update.)
    """

    @staticmethod
    def forward(ctx, rows, weight, bias, index, actions, targets, coefs):
        stats, ctx.arrays = _discrete_loss(rows, weight, bias, index, actions, targets, coefs)
        ctx.save_for_backward(rows, weight, index)
        return torch.from_numpy(stats)

    @staticmethod
    def backward(ctx, grad):
        rows, weight, index = ctx.saved_tensors
        d_rows, d_weight, d_bias = _discrete_loss_grads(ctx.arrays, rows, weight, index, float(grad[0]),
                                                         ctx.needs_input_grad[0])
        return d_rows, d_weight, d_bias, None, None, None, None


class _FlatParams:
    """Parameters as views of one flat tensor (``param``), their gradients as views of its ``grad``.

    Zeroing the gradients, clipping their norm and the fused Adam step (the optimizer steps ``param``) are
    then one kernel each on one tensor instead of one per parameter: for PPO's small networks the
    per-tensor overhead is most of their cost. Autograd accumulates into the preset gradient views in
    place. Used on the CPU (a CUDA LSTM keeps cuDNN's own weight layout).
    """

    def __init__(self, params: list[nn.Parameter]):
        self.params = params
        total = sum(p.numel() for p in params)
        self.param = nn.Parameter(torch.empty(total, dtype=params[0].dtype, device=params[0].device))
        self.param.grad = torch.zeros_like(self.param)
        self.grads: list[Tensor] = []
        offset = 0
        with torch.no_grad():
            for p in params:
                n = p.numel()
                self.param[offset : offset + n].copy_(p.reshape(-1))
                p.data = self.param.data[offset : offset + n].view_as(p)
                p.grad = self.param.grad[offset : offset + n].view_as(p)
                self.grads.append(p.grad)
                offset += n

    @staticmethod
    def supported(params: list[Tensor]) -> bool:
        return bool(params) and all(p.device.type == "cpu" and p.dtype == params[0].dtype and p.layout == torch.strided
                                    for p in params)

    def _attach(self) -> None:
        for p, g in zip(self.params, self.grads, strict=True):
            if p.grad is not g:  # replaced (e.g. optimizer.zero_grad() set it to None): re-attach the view
                p.grad = g

    def zero_grad(self) -> None:
        self._attach()
        self.param.grad.zero_()

    def set_grads(self, grads: dict[Tensor, Tensor]) -> None:
        """Write every parameter's gradient (``grads[p]`` for each parameter ``p``) with one copy."""
        self._attach()
        torch.cat([grads[p].reshape(-1) for p in self.params], out=self.param.grad)


def _clip_grad_norm(params: list[Tensor], max_norm: float) -> None:
    """``nn.utils.clip_grad_norm_`` for one device and dtype, in 4 tensor ops (a third of its overhead)."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    if len(grads) == 1 and grads[0].device.type == "cpu":
        # PPO's flat CPU gradient: one norm, the scale computed on the host, one conditional multiply
        scale = max_norm / (float(torch.linalg.vector_norm(grads[0])) + 1e-6)
        if scale < 1.0:
            grads[0].mul_(scale)
        return
    if not hasattr(torch, "_foreach_norm") or len({(g.device, g.dtype) for g in grads}) > 1:
        nn.utils.clip_grad_norm_(params, max_norm)
        return
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    torch._foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp(max=1.0))


def _adam_step(opt: torch.optim.Optimizer) -> None:
    """``opt.step()``; for a fused Adam with its state in place, the same two kernels that ``step`` runs
    (``_foreach_add_`` on the step counts, ``_fused_adam_``) called directly: ``Optimizer.step``'s hooks,
    profiler scope and grouping cost more than the kernels themselves for a small network."""
    group = opt.param_groups[0] if len(opt.param_groups) == 1 else None
    if (group is None or not isinstance(opt, torch.optim.Adam) or not group.get("fused") or group["amsgrad"]
            or group["maximize"] or group["differentiable"] or group["weight_decay"] != 0
            or isinstance(group["lr"], Tensor) or getattr(opt, "grad_scale", None) is not None
            or getattr(opt, "found_inf", None) is not None or opt._optimizer_step_pre_hooks
            or opt._optimizer_step_post_hooks or _torch_optimizer._global_optimizer_pre_hooks
            or _torch_optimizer._global_optimizer_post_hooks):
        opt.step()
        return
    params, grads, avgs, sqs, steps = [], [], [], [], []
    for p in group["params"]:
        if p.grad is None:
            continue
        st = opt.state.get(p)
        if not st or p.grad.is_sparse or p.grad.dtype != p.dtype or p.grad.device != p.device:
            opt.step()  # first step (state not created yet) or an unusual gradient: the general path
            return
        params.append(p)
        grads.append(p.grad)
        avgs.append(st["exp_avg"])
        sqs.append(st["exp_avg_sq"])
        steps.append(st["step"])
    if not params:
        return
    if len({(p.device, p.dtype) for p in params}) > 1 or len({(s.device, s.dtype) for s in steps}) > 1:
        opt.step()
        return
    beta1, beta2 = group["betas"]
    torch._foreach_add_(steps, 1)
    torch._fused_adam_(params, grads, avgs, sqs, [], steps, amsgrad=False, lr=group["lr"], beta1=float(beta1),
                       beta2=float(beta2), weight_decay=0.0, eps=group["eps"], maximize=False, grad_scale=None,
                       found_inf=None)


def _adam(params, lr: float, device: torch.device) -> torch.optim.Adam:
    """Adam with the fused kernel where this torch build has it (2-3x faster steps for small networks)."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=1e-5, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr, eps=1e-5)
