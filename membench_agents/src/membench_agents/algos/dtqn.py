"""DTQN: Deep Transformer Q-Networks (Esslinger, Platt & Amato 2022), discrete actions.

Off-policy Q-learning where the Q-network is a causal transformer over the agent's last ``context_len`` = K
observations of the current episode. This file reads top to bottom: :class:`DTQNConfig`, the network
(:class:`DTQNetwork`), the acting policy and its observation window (:class:`DTQNPolicy`), the algorithm
(:meth:`DTQN._collect` one environment step into the replay, :meth:`DTQN._update` one gradient step) and the
run-layer trainer (:class:`DTQNTrainer`). The replay is the one SAC uses too,
:class:`~membench_agents.algos.replay.EpisodicReplay`, built with K so that it indexes DTQN's episode windows
(:meth:`~membench_agents.algos.replay.EpisodicReplay.sample_episode_windows`).

What it does, following the paper and the authors' code (``kevslinger/DTQN``, read for facts):

* **Network.** Each observation is embedded (membench's encoders: the flat vector, a CNN for images, one
  encoder per key for dicts, then one linear layer to ``d_model``), a learned position embedding is added
  (position 0 = the oldest observation of the window), then ``num_layers`` transformer blocks with causal
  self-attention (the authors' default block: residual connection, then LayerNorm, after the attention and
  after the 4x-wide feed-forward layer, each sublayer's output passed through a ReLU), then a 2-layer MLP head
  giving Q-values at **every** position. The Q-value at position t depends only on observations 0..t.
* **Acting.** The policy's state is the window: the current episode's observations, oldest first, at most K
  of them (the first K steps fill positions 0..K-1; from then on the window slides by one each step). It is
  cleared at every episode start, so it never holds another episode's observations. The action comes from
  the Q-values at the position of the newest observation: epsilon-greedy while training (epsilon linear from
  ``epsilon_start`` to ``epsilon_end`` over ``exploration_fraction`` of ``total_steps``; the authors' code
  decays it geometrically instead), greedy in evaluation.
* **Episodic replay.** Each environment's stream of steps is stored in order, with the final
  observation of every episode, so that a training sample is a window of K consecutive steps of one episode
  plus the observation after each. The windows are those of the authors' buffer: in an episode of L >= K
  steps, the windows starting at steps 0..L-K; in a shorter episode, the one window starting at its first
  step, with the positions after its end masked out of the loss (by causality they never reach a real
  position's Q-value). Windows are drawn uniformly among all stored ones (the authors draw an episode first).
* **Loss.** Every position of each sampled window is trained (DTQN's "intermediate Q-value prediction"):
  the target of position t (steps s..s+t) is ``r_t + gamma * (1 - terminated_t) * Q_target(next)[a*]`` where
  ``a*`` is the online network's argmax there (Double DQN, as the authors' code; ``double_q=False``: the target
  network's max) and "next" is the window after step t. ``target_window="acting"`` (default): the window the
  agent acts on after step t, i.e. position t+1 of the same window (steps s..s+t+1) while t < K-1, and the
  window slid by one step (s+1..s+K) at the last position. ``"shifted"``: the authors' code, position t of the
  sampled window shifted by one step (s+1..s+t+1). When episodes fit in K every stored window starts at an
  episode's first step, so the shifted windows are never trained themselves and their Q-values drift far
  outside the range of returns (seen on the T-Maze); the acting windows are the ones the loss trains.
  Truncated episodes bootstrap from their final observation. Mean squared error over the real positions,
  ``clip_grad_norm_``, Adam; the target network is copied from the online one every
  ``target_update_frequency`` gradient steps. Difference from the authors' code: their buffer pads a window
  that runs past its episode's end (observations ``obs_mask``, action 0, reward 0, done 1) and their loss,
  ``F.mse_loss`` over all K positions, trains those padded positions too, towards a target of 0 (reward 0,
  no bootstrap); here they are masked out and the mean is over the real positions only. No real position's
  Q-value depends on a padded one (causal attention), but in their code the padded terms still move the
  shared weights and shrink the real positions' share of the loss in episodes shorter than K.

Speed: one gradient step per ``train_frequency`` environment steps (the authors: one per step) once
``learning_starts`` steps are in the replay; acting runs the network over the window's filled positions only
(equal to the full window by causality).

Metrics of :meth:`DTQN.train_iteration`: ``global_step``, ``iteration``, ``sps``, ``value_loss`` (the mean TD
loss of the iteration's gradient steps; None in an iteration without any), ``q_mean``, ``epsilon``,
``learning_rate``, ``gradient_steps`` and ``episodes`` (``(return, length, success or None)`` per finished
episode).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import VectorEnv
from torch import Tensor, nn
from torch.nn import functional as F

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
from membench_agents.algos.replay import EpisodicReplay
from membench_agents.algos.trainer import AlgoTrainer
from membench_agents.algos.vector import (
    final_obs,
    obs_to_tensor,
    take_rows,
    to_numpy,
)
from membench_agents.errors import StopRequested
from membench_agents.nets.encoders import make_encoder

TARGET_WINDOWS = ("acting", "shifted")


@dataclass
class DTQNConfig:
    """DTQN hyperparameters (defaults: the authors' ``run.py``, except ``num_envs``)."""

    context_len: int = ranged(50, at_least=1)
    """K: the number of most recent observations of the episode the Q-network sees"""
    num_envs: int = ranged(8, at_least=1)
    """parallel environments (the authors: 1); with train_frequency 1 there is still one gradient step per
    environment step"""
    num_steps: int = ranged(64, at_least=1)
    """vector-env steps per iteration (the unit of logging and checkpoints; the training itself is the same
    for any value)"""
    total_steps: int = ranged(2_000_000, at_least=1)
    buffer_size: int = ranged(500_000, at_least=1)
    """replay capacity in stored observations over all environments (each episode also stores its final one)"""
    learning_starts: int = ranged(50_000, at_least=0)
    """environment steps before the first gradient step (the authors prepopulate 50k steps)"""
    train_frequency: int = ranged(1, at_least=1)
    """environment steps per gradient step"""
    batch_size: int = ranged(32, at_least=1)
    """windows per gradient step"""
    learning_rate: float = ranged(3e-4, above=0)
    gamma: float = ranged(0.99, at_least=0, at_most=1)
    max_grad_norm: float = ranged(1.0, above=0)
    target_update_frequency: int = ranged(10_000, at_least=1)
    """gradient steps between copies of the online network into the target network"""
    target_window: str = ranged("acting", choices=TARGET_WINDOWS)
    """the window whose Q-values bootstrap position t: "acting" (the one the agent acts on at the next step:
    steps s .. s+t+1 while there is room, then the window slid by one) or "shifted" (the authors' code: the
    sampled window shifted by one step, s+1 .. s+t+1)"""
    double_q: bool = True
    """Double DQN targets (the online network picks the next action, the target network rates it)"""
    epsilon_start: float = ranged(1.0, at_least=0, at_most=1)
    epsilon_end: float = ranged(0.1, at_least=0, at_most=1)
    exploration_fraction: float = ranged(0.1, above=0, at_most=1)
    """fraction of total_steps over which epsilon falls linearly from epsilon_start to epsilon_end"""
    d_model: int = ranged(128, at_least=1)
    num_heads: int = ranged(8, at_least=1)
    num_layers: int = ranged(2, at_least=1)
    dropout: float = ranged(0.0, at_least=0, below=1)
    encoder_size: int = ranged(0, at_least=0)
    """width of an MLP on vector observations before the embedding layer; 0: none (the authors' linear
    embedding). Images always go through membench's CNN"""
    seed: int = 0
    device: str = "auto"
    """"cpu", "cuda", "cuda:N" or "auto" (cuda when available)"""
    deterministic: bool = False
    """use torch deterministic algorithms"""
    num_threads: int | None = ranged(1, at_least=1)
    """torch.set_num_threads (None: leave it)"""

    @property
    def num_iterations(self) -> int:
        """Iterations of the run: num_steps vector steps of num_envs each, at least one (total_steps rounds down)."""
        return max(1, self.total_steps // (self.num_envs * self.num_steps))

    def validate(self) -> None:
        """Raise ValueError naming the first field outside its range (declared with the field, see
        :func:`~membench_agents.algos.common.check_fields`), then the rules between fields."""
        check_fields(self)
        if self.d_model % self.num_heads:
            raise ValueError(f"DTQNConfig.d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        per_env = self.buffer_size // self.num_envs
        if per_env < 2 * (self.context_len + 1):
            raise ValueError(
                f"DTQNConfig.buffer_size ({self.buffer_size}) holds {per_env} observations per "
                f"environment (buffer_size // num_envs); a window of context_len = {self.context_len} "
                f"needs at least {2 * (self.context_len + 1)}"
            )


# -- 1. the network ------------------------------------------------------------------------------------------------
class TransformerBlock(nn.Module):
    """Causal self-attention and a 4x feed-forward layer, each followed by residual + LayerNorm (the authors'
    default ``TransformerLayer``; ReLU on each sublayer's output)."""

    def __init__(self, d_model: int, num_heads: int, dropout: float):
        super().__init__()
        self.attention = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, batch_first=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model), nn.Dropout(dropout)
        )
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: Tensor, causal_mask: Tensor) -> Tensor:
        attended, _ = self.attention(x, x, x, attn_mask=causal_mask, need_weights=False)
        x = self.norm1(x + F.relu(attended))
        return self.norm2(x + F.relu(self.ffn(x)))


class DTQNetwork(nn.Module):
    """Observations ``[B, T, *obs]`` (T <= K; a dict of such for Dict spaces) -> Q-values ``[B, T, num_actions]``;
    the Q-values at position t depend only on the observations at positions 0..t."""

    causal_mask: Tensor  # a buffer

    def __init__(self, observation_space: gym.Space, num_actions: int, cfg: DTQNConfig):
        super().__init__()
        self.context_len = cfg.context_len
        self.encoder = make_encoder(observation_space, hidden_size=cfg.encoder_size)
        self.embed = nn.Linear(self.encoder.out_dim, cfg.d_model)
        self.position = nn.Parameter(torch.zeros(1, cfg.context_len, cfg.d_model))  # learned, as the paper
        self.dropout = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(cfg.d_model, cfg.num_heads, cfg.dropout) for _ in range(cfg.num_layers)
        )
        self.head = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_model), nn.ReLU(), nn.Linear(cfg.d_model, num_actions))
        # True above the diagonal: position t may not attend to positions after t
        self.register_buffer(
            "causal_mask",
            torch.triu(torch.ones(cfg.context_len, cfg.context_len, dtype=torch.bool), diagonal=1),
            persistent=False,
        )
        for module in (self.embed, self.blocks, self.head):  # the authors' initialisation (the encoder keeps its own)
            module.apply(_init_weights)

    def forward(self, obs) -> Tensor:
        x = self.embed(self.encoder(obs))
        T = x.shape[1]
        if T > self.context_len:
            raise ValueError(f"DTQN got a window of {T} observations; its context_len is {self.context_len}")
        x = self.dropout(x + self.position[:, :T])
        mask = self.causal_mask[:T, :T]
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x)


def _init_weights(m: nn.Module) -> None:
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.02)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.MultiheadAttention):
        nn.init.normal_(m.in_proj_weight, 0.0, 0.02)
        nn.init.zeros_(m.in_proj_bias)


# -- 2. the policy and its window of observations ----------------------------------------------------------------
def _zeros_like_space(space: gym.Space):
    if isinstance(space, gym.spaces.Dict):
        return {k: _zeros_like_space(s) for k, s in space.spaces.items()}
    return np.zeros(space.shape, dtype=space.dtype)


class DTQNPolicy(nn.Module):
    """The acting side of DTQN, for training and for :func:`membench_agents.runs.evaluation.evaluate`.

    State: ``(window, length)``: ``window`` ``[n, K, *obs]`` (a dict of such for Dict spaces) holds the current
    episode's observations oldest first in positions ``0 .. length-1`` (zeros after them); ``length`` ``[n]``.
    """

    def __init__(self, q_net: DTQNetwork, observation_space: gym.Space, action_space: gym.spaces.Discrete):
        super().__init__()
        self.q_net = q_net
        self.context_len = q_net.context_len
        self.num_actions = int(action_space.n)
        self.action_start = int(action_space.start)
        self.epsilon = 0.0
        """the exploration rate of ``act(..., deterministic=False)`` (the trainer sets it every step)"""
        # one observation as the environments' outputs become tensors (float64 -> float32, ...)
        self._obs_example = obs_to_tensor(_zeros_like_space(observation_space), "cpu")

    @property
    def device(self) -> torch.device:
        return self.q_net.embed.weight.device

    def initial_state(self, n: int, device: str | torch.device | None = None) -> tuple[Any, Tensor]:
        dev = self.device if device is None else torch.device(device)
        window = tree_map(
            lambda o: torch.zeros((n, self.context_len, *o.shape), dtype=o.dtype, device=dev), self._obs_example
        )
        return window, torch.zeros(n, dtype=torch.long, device=dev)

    def push(self, obs, state: tuple[Any, Tensor], episode_start: Tensor) -> tuple[Any, Tensor]:
        """The window after observing ``obs``: cleared where an episode starts, shifted left by one where full."""
        window, length = state
        K = self.context_len
        start = episode_start.to(length.device, torch.bool)
        length = torch.where(start, 0, length)
        full = length >= K
        rows = torch.arange(length.shape[0], device=length.device)
        pos = length.clamp(max=K - 1)

        def put(w: Tensor, o: Tensor) -> Tensor:
            shape = (-1,) + (1,) * (w.dim() - 1)
            w = torch.where(start.view(shape), torch.zeros((), dtype=w.dtype, device=w.device), w)
            w = torch.where(full.view(shape), w.roll(-1, dims=1), w)
            w[rows, pos] = o.to(w.dtype)
            return w

        if isinstance(window, dict):
            window = {k: put(window[k], obs[k]) for k in window}
        else:
            window = put(window, obs)
        return window, (length + 1).clamp(max=K)

    def q_values(self, window, length: Tensor) -> Tensor:
        """Q-values ``[n, num_actions]`` at each window's newest observation. The network runs over the filled
        positions only (the same numbers as over all K: the positions after them cannot influence these)."""
        T = int(length.max())
        q = self.q_net(tree_map(lambda w: w[:, :T], window))
        return q[torch.arange(q.shape[0], device=q.device), length - 1]

    @torch.no_grad()
    def act(
        self, obs, state, episode_start: Tensor, deterministic: bool = True, generator: torch.Generator | None = None
    ) -> tuple[Tensor, None, Tensor, tuple[Any, Tensor]]:
        """``(action, None, q_values, new_state)``: greedy, or epsilon-greedy with ``self.epsilon`` when
        ``deterministic`` is False (random draws from ``generator``)."""
        window, length = self.push(obs, state, episode_start)
        q = self.q_values(window, length)
        action = q.argmax(-1)
        if not deterministic and self.epsilon > 0:
            n, dev = action.shape[0], action.device
            explore = torch.rand(n, generator=generator, device=dev) < self.epsilon
            random_action = torch.randint(self.num_actions, (n,), generator=generator, device=dev)
            action = torch.where(explore, random_action, action)
        return action, None, q, (window, length)

    def env_action(self, action: Tensor) -> Tensor:
        return action + self.action_start if self.action_start else action


# -- 4. the algorithm ---------------------------------------------------------------------------------------------
def check_spaces(observation_space: gym.Space, action_space: gym.Space) -> None:
    """ValueError, naming the space, for what DTQN cannot handle."""
    if not isinstance(action_space, gym.spaces.Discrete):
        raise ValueError(
            f"DTQN needs a Discrete action space (one Q-value per action), got {action_space}; "
            "use a PPO or SAC agent for continuous or multi-discrete actions"
        )
    make_encoder(observation_space)  # raises ValueError for observation spaces no encoder handles


class DTQN:
    """DTQN on a SAME_STEP-autoreset vector env (see the module docstring). The environments are reset with
    ``config.seed`` at construction. Attributes: ``q_net``, ``target_net``, ``policy``, ``optimizer``,
    ``replay``, ``envs``, ``device``, ``global_step``, ``iteration``, ``num_iterations``, ``gradient_steps``."""

    def __init__(self, envs: VectorEnv, config: DTQNConfig):
        self.device = set_up(envs, config)
        check_spaces(envs.single_observation_space, envs.single_action_space)
        self.config = cfg = config
        self.envs = envs
        obs_space = envs.single_observation_space
        act_space = cast(gym.spaces.Discrete, envs.single_action_space)  # check_spaces: Discrete only
        self.q_net = DTQNetwork(obs_space, int(act_space.n), cfg).to(self.device)
        self.target_net = copy.deepcopy(self.q_net)
        self.target_net.requires_grad_(False)
        self.policy = DTQNPolicy(self.q_net, obs_space, act_space)
        self.optimizer = adam(self.q_net.parameters(), cfg.learning_rate)
        self.act_generator = torch.Generator(device=self.device).manual_seed(cfg.seed)  # epsilon-greedy draws
        self.sample_generator = torch.Generator().manual_seed(cfg.seed + 1)  # replay windows
        N = cfg.num_envs
        self.num_iterations = cfg.num_iterations
        self.global_step = self.iteration = self.gradient_steps = 0
        self.updates_done = 0  # gradient steps due so far (those skipped while no window was stored count too)
        #: the unfinished iteration a stop left (vector steps, episodes and update statistics so far), else None
        self.iteration_so_far: dict[str, Any] | None = None
        # buffer_size counts every stored observation, the one each environment is about to act on included
        self.replay = EpisodicReplay(
            N, cfg.buffer_size // N - 1, self.policy._obs_example, device=self.device, episode_window=cfg.context_len
        )
        obs, _ = envs.reset(seed=cfg.seed)
        self.obs = to_numpy(obs)
        self.replay.start(obs_to_tensor(self.obs, self.device))
        self.state = self.policy.initial_state(N, self.device)
        self.episode_start = torch.ones(N, dtype=torch.bool, device=self.device)
        self.episodes = EpisodeStats(N)

    def epsilon(self) -> float:
        cfg = self.config
        frac = min(1.0, self.global_step / (cfg.exploration_fraction * cfg.total_steps))
        return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)

    # -- one environment step ------------------------------------------------------------------------------------
    def _collect(self) -> list[tuple[float, int, bool | None]]:
        """Act epsilon-greedily in every environment, store the step; returns the episodes that ended."""
        self.policy.epsilon = self.epsilon()
        obs = obs_to_tensor(self.obs, self.device)
        action, _, _, self.state = self.policy.act(
            obs, self.state, self.episode_start, deterministic=False, generator=self.act_generator
        )
        next_obs, reward, terminated, truncated, info = self.envs.step(self.policy.env_action(action).cpu().numpy())
        reward = to_numpy(reward).astype(np.float64).reshape(-1)
        terminated = to_numpy(terminated).astype(bool).reshape(-1)
        done = terminated | to_numpy(truncated).astype(bool).reshape(-1)
        idx = np.flatnonzero(done)
        final = obs_to_tensor(take_rows(final_obs(info), idx), self.device) if idx.size else None
        next_obs = to_numpy(next_obs)
        self.episode_start = torch.as_tensor(done, device=self.device)
        self.replay.add(
            action,
            torch.as_tensor(reward, device=self.device),
            torch.as_tensor(terminated, device=self.device),
            self.episode_start,
            final,
            obs_to_tensor(next_obs, self.device),
        )
        self.obs = next_obs
        self.global_step += self.config.num_envs
        self.episodes.add(reward)
        return self.episodes.finish(done, info)

    # -- one gradient step ------------------------------------------------------------------------------------------
    def _update(self) -> Tensor:
        """One gradient step on ``batch_size`` replayed windows; returns ``[loss, mean Q]`` (detached)."""
        cfg, K = self.config, self.config.context_len
        batch = self.replay.sample_episode_windows(cfg.batch_size, self.sample_generator)
        obs, action, reward = batch["obs"], batch["actions"], batch["rewards"]
        window = tree_map(lambda o: o[:, :K], obs)  # steps s .. s+K-1
        next_window = tree_map(lambda o: o[:, 1:], obs)  # steps s+1 .. s+K: position t holds the obs after step t
        not_done = (~batch["terminated"]).float()
        mask = batch["mask"].float()

        q_all = self.q_net(window)  # [B, K, A]: position t sees steps s .. s+t
        q = q_all.gather(2, action.unsqueeze(2)).squeeze(2)  # Q(steps s .. s+t, a_t)
        with torch.no_grad():
            # the Q-values after step t (position t of the next window sees steps s+1 .. s+t+1) ...
            q_next_target = self.target_net(next_window)
            q_next_online = self.q_net(next_window) if cfg.double_q else q_next_target
            if cfg.target_window == "acting":
                # ... or, as the agent sees them when it acts: position t+1 of the same window (steps s .. s+t+1)
                # for t < K-1; the last position has no room left, so the window slides (the next window's)
                q_next_target = torch.cat([self.target_net(window)[:, 1:], q_next_target[:, -1:]], 1)
                if cfg.double_q:
                    q_next_online = torch.cat([q_all.detach()[:, 1:], q_next_online[:, -1:]], 1)
                else:
                    q_next_online = q_next_target
            next_action = q_next_online.argmax(2, keepdim=True)  # Double DQN: the online network picks
            q_next = q_next_target.gather(2, next_action).squeeze(2)
            target = reward + cfg.gamma * not_done * q_next
        loss = ((q - target) ** 2 * mask).sum() / mask.sum()  # every real position of every window

        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.q_net.parameters(), cfg.max_grad_norm)
        self.optimizer.step()
        self.gradient_steps += 1
        if self.gradient_steps % cfg.target_update_frequency == 0:
            self.target_net.load_state_dict(self.q_net.state_dict())
        with torch.no_grad():
            return torch.stack([loss.detach(), (q * mask).sum() / mask.sum()])

    # ----------------------------------------------------------------------------------------------------------------
    def train_iteration(self, should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """``num_steps`` vector steps, each followed by the gradient steps that became due.

        ``should_stop`` is polled before every vector step: when it returns True,
        :class:`~membench_agents.errors.StopRequested` is raised with the iteration unfinished but consistent:
        :meth:`state_dict` holds it, and the next call completes it (the same steps, updates and metrics)."""
        cfg = self.config
        t0 = time.perf_counter()
        self.q_net.train()
        if self.iteration_so_far is None:
            self.iteration_so_far = {"steps": 0, "episodes": [], "stats": [], "time": 0.0}
        it = self.iteration_so_far
        while it["steps"] < cfg.num_steps:
            if should_stop is not None and should_stop():
                it["time"] += time.perf_counter() - t0
                raise StopRequested
            it["episodes"].extend(self._collect())
            # gradient steps due: one at learning_starts, then one every train_frequency environment steps
            after = self.global_step - cfg.learning_starts
            due = after // cfg.train_frequency + 1 if after >= 0 else 0
            while self.updates_done < due:
                self.updates_done += 1
                if self.replay.num_windows() > 0:
                    it["stats"].append(self._update())
            it["steps"] += 1
        self.iteration_so_far = None
        self.iteration += 1
        steps = cfg.num_envs * cfg.num_steps
        stats = it["stats"]
        loss, q_mean = torch.stack(stats).mean(0).tolist() if stats else (None, None)
        return {
            "global_step": self.global_step,
            "iteration": self.iteration,
            "episodes": it["episodes"],
            "sps": steps / max(it["time"] + time.perf_counter() - t0, 1e-9),
            "value_loss": loss,
            "q_mean": q_mean,
            "epsilon": self.policy.epsilon,
            "learning_rate": cfg.learning_rate,
            "gradient_steps": self.gradient_steps,
        }

    def train(self, callback=None) -> list[dict[str, Any]]:
        """Run the remaining iterations up to ``num_iterations``; ``callback(metrics)`` after each."""
        history = []
        while self.iteration < self.num_iterations:
            m = self.train_iteration()
            history.append(m)
            if callback is not None:
                callback(m)
        return history

    # ----------------------------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly except the environments (the run layer saves those): networks,
        optimizer, replay contents (tensors), the acting window, counters and RNGs. Plain data only."""
        window, length = self.state
        return {
            "config": dataclasses.asdict(self.config),
            "q_net": self.q_net.state_dict(),
            "target_net": self.target_net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "replay": self.replay.state_dict(),
            "obs": tree_map(np.copy, self.obs),
            "window": tree_map(lambda w: w.clone(), window),
            "length": length.clone(),
            "episode_start": self.episode_start.clone(),
            **self.episodes.state_dict(),
            "global_step": self.global_step,
            "iteration": self.iteration,
            "gradient_steps": self.gradient_steps,
            "updates_done": self.updates_done,
            "iteration_so_far": _copy_iteration(self.iteration_so_far),
            "rng": rng_state({"act": self.act_generator, "sample": self.sample_generator}),
        }

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (``self.envs`` is kept; its state is the run layer's business)."""
        dev = self.device
        self.q_net.load_state_dict(d["q_net"])
        self.target_net.load_state_dict(d["target_net"])
        self.optimizer.load_state_dict(d["optimizer"])
        self.replay.load_state_dict(d["replay"])
        self.obs = tree_map(np.array, d["obs"])
        self.state = (tree_map(lambda w: w.to(dev), d["window"]), d["length"].to(dev))
        self.episode_start = d["episode_start"].to(dev)
        self.episodes.load_state_dict(d)
        self.global_step = int(d["global_step"])
        self.iteration = int(d["iteration"])
        self.gradient_steps = int(d["gradient_steps"])
        self.updates_done = int(d["updates_done"])
        self.iteration_so_far = _copy_iteration(d.get("iteration_so_far"))
        restore_rng(d["rng"], {"act": self.act_generator, "sample": self.sample_generator})


def _copy_iteration(it: dict[str, Any] | None) -> dict[str, Any] | None:
    """A copy of an unfinished iteration's bookkeeping (for :meth:`DTQN.state_dict` and its inverse)."""
    if it is None:
        return None
    episodes = [(float(r), int(n), None if s is None else bool(s)) for r, n, s in it["episodes"]]
    return {**it, "episodes": episodes, "stats": [t.clone() for t in it["stats"]]}


# -- 5. the run layer's trainer -------------------------------------------------------------------------------------
class DTQNTrainer(AlgoTrainer):
    """A DTQN run (one seed) for :mod:`membench_agents.runs.loop` (the :class:`membench_agents.algos.trainer.Trainer`
    protocol)."""

    kind = "dtqn"
    check_spaces = staticmethod(check_spaces)

    def build(self, envs, config) -> DTQN:
        return DTQN(envs, config)


__all__ = ["DTQN", "DTQNConfig", "DTQNPolicy", "DTQNTrainer", "DTQNetwork", "check_spaces"]
