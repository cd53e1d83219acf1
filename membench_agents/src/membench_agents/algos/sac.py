"""Soft Actor-Critic: continuous (Box) and discrete actions, automatic entropy tuning, optional recurrent core.

This file is the reference implementation, to be read top to bottom like CleanRL's ``sac_continuous_action.py``:
the networks (:class:`Actor`, :class:`Critic`), then :class:`SAC`: :meth:`SAC._collect` (one environment step
into the replay), :meth:`SAC.update` (one gradient step: critic loss, actor loss, entropy-coefficient loss,
Polyak averaging of the target critics). The replay is the one DTQN uses too,
:class:`~membench_agents.algos.replay.EpisodicReplay`; SAC samples its sequences
(:meth:`~membench_agents.algos.replay.EpisodicReplay.sample_sequences`).

* Continuous actions (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications"): a Gaussian
  policy squashed by tanh onto the Box bounds (the critics see the squashed action in [-1, 1]), twin Q
  critics with target copies updated by Polyak averaging (``tau``), the entropy coefficient alpha tuned
  towards ``target_entropy`` (default ``-dim(A)``).
* Discrete actions (Christodoulou 2019, "Soft Actor-Critic for Discrete Action Settings"): the policy is a
  categorical, the critics output Q(s, .) for every action, and every expectation over actions (soft value
  of the target, actor loss, alpha loss) is an exact sum over the actions. The default target entropy is
  ``target_entropy_scale * log|A|`` with CleanRL's 0.89 (the paper uses 0.98; the measured difference on
  CartPole, and the 0.5 option, in ``SACConfig.target_entropy_scale``).
* Memory (``core`` "lstm" / "gru"; "mlp" = none): actor and both critics each own an encoder and a memory
  core from :mod:`membench_agents.nets.memory`. The replay keeps every environment's stream of steps in order
  (episodes one after another, each ending with its final observation), and an update samples windows of
  ``burn_in + sequence_length + 1`` consecutive slots (rows of the replay: the environment uniformly, then
  the window uniformly among those whose first loss slot is a step; windows may cross episodes): the cores
  start from the initial state at the window start, the first ``burn_in`` steps only warm that state (run
  without gradient, no loss), the loss covers the next ``sequence_length`` steps (final observations among
  them are masked out), and the last slot is the next observation of the last loss step. The state is reset
  at every episode start inside a window (and by the actor when acting), so nothing leaks across episodes.
  With the "mlp" core a window is one transition (``sequence_length=1``, ``burn_in=0``), so the update is
  CleanRL's, but for one default: the actor and alpha are updated after every critic update
  (``policy_frequency=1``, as stable-baselines3), where CleanRL delays them (``policy_frequency=2``: every
  second update, twice).

Truncation (``truncated`` and not ``terminated``) bootstraps from the final observation (``info["final_obs"]``
under SAME_STEP autoreset); termination does not. Torch environments (ManiSkill's GPU simulation) keep their
tensors on the device: observations go into the replay on the training device without a detour through
numpy. :meth:`SAC.state_dict` holds everything to resume exactly (networks, optimizers, the replay as tensors,
RNGs) except the environments, whose state the run layer saves as plain data.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import gymnasium as gym
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
from membench_agents.algos.replay import EpisodicReplay
from membench_agents.algos.trainer import AlgoTrainer, Budget, algo_config
from membench_agents.algos.vector import (
    final_obs,
    first_leaf,
    is_torch,
    obs_to_tensor,
    take_rows,
    to_tensor,
)
from membench_agents.errors import StopRequested
from membench_agents.nets.encoders import make_encoder
from membench_agents.nets.memory import CORES, State, make_core

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


@dataclass
class SACConfig:
    """SAC hyperparameters (defaults: CleanRL's ``sac_continuous_action.py`` but ``policy_frequency``; Discrete
    actions: CleanRL's ``sac_atari.py`` target entropy; see the agent defaults files)."""

    num_envs: int = ranged(1, at_least=1)
    total_steps: int = ranged(1_000_000, at_least=1)
    """environment steps of the whole run (over all environments)"""
    buffer_size: int = ranged(1_000_000, at_least=1)
    """replay capacity in environment steps (over all environments; each environment keeps buffer_size /
    num_envs slots of steps and final observations, and one more for the observation it is about to act on)"""
    learning_starts: int = ranged(5000, at_least=0)
    """environment steps of uniformly random actions before the first update"""
    batch_size: int = ranged(256, at_least=1)
    """sampled windows per update (each: burn_in + sequence_length + 1 slots)"""
    gradient_steps: int = ranged(1, at_least=1)
    """updates after every vector step (of num_envs environment steps)"""
    gamma: float = ranged(0.99, at_least=0, at_most=1)
    tau: float = ranged(0.005, above=0, at_most=1)
    """Polyak coefficient of the target critics (target <- (1 - tau) target + tau online), every update"""
    policy_lr: float = ranged(3e-4, above=0)
    q_lr: float = ranged(1e-3, above=0)
    """learning rate of both critics and of the entropy coefficient"""
    alpha: float = ranged(0.2, at_least=0)
    """the entropy coefficient when autotune is off (its initial value is 1.0 when on)"""
    autotune: bool = True
    target_entropy: float | None = None
    """None: -dim(A) for Box actions, target_entropy_scale * log|A| for Discrete"""
    target_entropy_scale: float = ranged(0.89, above=0, at_most=1)
    """discrete actions: the target entropy as a fraction of the uniform policy's entropy log|A|. The default is
    CleanRL's ``sac_atari.py`` (0.89); Christodoulou's paper uses 0.98; membench's earlier default was 0.5.
    Measured together on CartPole-v1 (two actions; ``membench train --env CartPole-v1 --agent sac --steps 10000
    --seeds 2 --set sac.target_entropy_scale=S``; seeds 0 and 1; final alpha, critic loss, evaluation return
    over 100 episodes): 0.98: alpha 103, critic loss 338-368, return 442 / 339 (mean 390); 0.89: alpha 9.8-10.3,
    critic loss 5.4-6.2, return 465 / 486 (mean 476); 0.5: alpha 0.18-0.20, critic loss 0.6-0.8, return
    143 / 185 (mean 164). A high target asks for more entropy than a learning policy keeps with few actions,
    so alpha grows (0.98); 0.5 keeps alpha small but, at this budget, learns slowest. 0.5 stays an option
    (``--set sac.target_entropy_scale=0.5``)"""
    core: str = "mlp"
    """memory core of actor and critics: "mlp" (none) or a recurrent core of
    :data:`membench_agents.nets.memory.CORES` ("lstm", "gru", "ffm", "mingru", "lru", ...)"""
    hidden_size: int = ranged(256, at_least=1)
    """width of the two hidden layers of every MLP head (and of the memory core)"""
    encoder_size: int = ranged(0, at_least=0)
    """width of the MLP on vector observations; 0: none (images always get a CNN)"""
    sequence_length: int = ranged(1, at_least=1)
    """loss steps per sampled window (1 for the mlp core: ordinary transitions)"""
    burn_in: int = ranged(0, at_least=0)
    """steps at the start of each window that only warm the recurrent state (no gradient, no loss)"""
    policy_frequency: int = ranged(1, at_least=1)
    """the actor and alpha are updated on every policy_frequency-th update, policy_frequency times in a row
    (TD3's delayed policy update, compensated). 1: after every critic update, as stable-baselines3 and
    Haarnoja et al. (2018b) do, and so experiments/perf_sac.py compares like with like; CleanRL's
    sac_continuous_action.py uses 2"""
    iteration_steps: int = ranged(1000, at_least=1)
    """environment steps per Trainer iteration (one log row, a checkpoint opportunity)"""
    seed: int = 0
    device: str = "auto"
    """"cpu", "cuda", "cuda:N" or "auto" (cuda when available)"""
    deterministic: bool = False
    """use torch deterministic algorithms"""
    num_threads: int | None = ranged(1, at_least=1)
    """torch.set_num_threads (None: leave it)"""

    def validate(self) -> None:
        """Raise ValueError naming the first field outside its range (declared with the field, see
        :func:`~membench_agents.algos.common.check_fields`), then the rules between fields."""
        check_fields(self)
        if not isinstance(self.core, str) or self.core.lower() not in CORES:
            raise ValueError(f"unknown memory core {self.core!r}; valid names: {', '.join(CORES)}")
        if self.buffer_size // self.num_envs < 2 * self.window:
            raise ValueError(
                f"SACConfig.buffer_size ({self.buffer_size}) leaves {self.buffer_size // self.num_envs} "
                f"slots per environment; it needs at least 2 x the window (burn_in + sequence_length + 1 "
                f"= {self.window}) per environment"
            )

    @property
    def num_vector_steps(self) -> int:
        """Vector steps of the run (total_steps rounded up to whole steps of num_envs environments)."""
        return -(-self.total_steps // self.num_envs)

    @property
    def window(self) -> int:
        """Replay slots per sampled window: burn-in, loss steps, and the next observation of the last one."""
        return self.burn_in + self.sequence_length + 1


def check_spaces(observation_space: gym.Space, action_space: gym.Space) -> None:
    """Raise ValueError (one sentence) when SAC cannot handle the spaces."""
    if isinstance(action_space, gym.spaces.Box):
        if not (np.all(np.isfinite(action_space.low)) and np.all(np.isfinite(action_space.high))):
            raise ValueError(
                f"SAC squashes actions onto the Box bounds with tanh, so they must be finite; got {action_space}"
            )
        if np.any(action_space.high <= action_space.low):
            raise ValueError(f"the action Box {action_space} has an empty dimension (high <= low)")
    elif not isinstance(action_space, gym.spaces.Discrete):
        raise ValueError(
            f"unsupported action space {action_space}: SAC has a tanh-Gaussian policy for Box actions "
            "and a categorical policy for Discrete actions (MultiDiscrete: flatten it to Discrete)"
        )
    make_encoder(observation_space, 0)  # raises for observation spaces no encoder handles


# ---------------------------------------------------------------------------------------------------------
# networks: encoder -> memory core (none for "mlp") -> 2-layer ReLU MLP -> head
# ---------------------------------------------------------------------------------------------------------
class _Body(nn.Module):
    """Observation encoder and optional memory core; ``forward`` maps ``obs [T, B, ...]`` to ``[T, B, F]``."""

    def __init__(self, observation_space: gym.Space, core: str, hidden_size: int, encoder_size: int):
        super().__init__()
        self.encoder = make_encoder(observation_space, hidden_size=encoder_size)
        recurrent = CORES[core.lower()].recurrent
        self.core = make_core(core, self.encoder.out_dim, hidden_size) if recurrent else None
        self.out_dim = self.core.out_dim if self.core is not None else self.encoder.out_dim

    @property
    def recurrent(self) -> bool:
        return self.core is not None

    def initial_state(self, n: int, device) -> State:
        return self.core.initial_state(n, device) if self.core is not None else ()

    def forward(self, obs, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        x = self.encoder(obs)
        if self.core is None:
            return x, ()
        return self.core(x, state, episode_start)

    def step(self, obs, state: State, episode_start: Tensor) -> tuple[Tensor, State]:
        """One step for a batch ``obs [B, ...]``."""
        x = self.encoder(obs)
        if self.core is None:
            return x, ()
        return self.core.step(x, state, episode_start)


def mlp(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim)
    )


class Actor(nn.Module):
    """The policy. Box: tanh-squashed Gaussian, actions in [-1, 1] (``env_action`` maps them onto the bounds);
    Discrete: categorical over action indices (``env_action`` adds the space's ``start``).

    It is also the policy :func:`membench_agents.runs.evaluation.evaluate` runs: :meth:`act`, :meth:`initial_state`,
    :meth:`env_action`, :attr:`device`.
    """

    action_start: Tensor  # buffers: Discrete
    action_scale: Tensor  # Box
    action_bias: Tensor

    def __init__(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        core: str = "mlp",
        hidden_size: int = 256,
        encoder_size: int = 0,
    ):
        super().__init__()
        self.discrete = isinstance(action_space, gym.spaces.Discrete)
        self.body = _Body(observation_space, core, hidden_size, encoder_size)
        if isinstance(action_space, gym.spaces.Discrete):
            self.n_actions = int(action_space.n)
            self.net = mlp(self.body.out_dim, hidden_size, self.n_actions)  # logits
            self.register_buffer("action_start", torch.tensor(int(action_space.start)))
        else:
            box = cast(gym.spaces.Box, action_space)  # check_spaces: Box or Discrete
            self.action_shape = tuple(box.shape)
            self.n_actions = int(np.prod(self.action_shape))
            self.net = mlp(self.body.out_dim, hidden_size, 2 * self.n_actions)  # mean and log-std
            low = np.asarray(box.low, dtype=np.float32).reshape(-1)
            high = np.asarray(box.high, dtype=np.float32).reshape(-1)
            self.register_buffer("action_scale", torch.as_tensor((high - low) / 2.0))
            self.register_buffer("action_bias", torch.as_tensor((high + low) / 2.0))

    @property
    def device(self) -> torch.device:
        return cast(nn.Linear, self.net[0]).weight.device

    @property
    def recurrent(self) -> bool:
        return self.body.recurrent

    def initial_state(self, n: int, device=None) -> State:
        return self.body.initial_state(n, self.device if device is None else device)

    def distribution(self, feats: Tensor) -> tuple[Tensor, Tensor]:
        """Box: (mean, log_std); Discrete: (logits, log-probabilities)."""
        out = self.net(feats)
        if self.discrete:
            return out, torch.log_softmax(out, -1)
        mean, log_std = out.chunk(2, -1)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (torch.tanh(log_std) + 1)  # in [MIN, MAX]
        return mean, log_std

    def sample(self, feats: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """Box only: a reparameterised squashed action in [-1, 1] and its log-probability (tanh corrected)."""
        mean, log_std = self.distribution(feats)
        std = log_std.exp()
        noise = torch.randn(mean.shape, generator=generator, device=mean.device, dtype=mean.dtype)
        u = mean + std * noise
        a = torch.tanh(u)
        # log N(u; mean, std) - log |d(scale * tanh(u)) / du|, summed over action dimensions
        log_prob = -0.5 * noise.square() - log_std - 0.5 * math.log(2 * math.pi)
        log_prob = log_prob - torch.log(self.action_scale * (1 - a.square()) + 1e-6)
        return a, log_prob.sum(-1)

    @torch.no_grad()
    def act(
        self,
        obs,
        state: State,
        episode_start: Tensor,
        deterministic: bool = False,
        generator: torch.Generator | None = None,
    ) -> tuple[Tensor, Tensor | None, None, State]:
        """One step for a batch ``obs [B, ...]``: (action, log_prob or None, None, state). Box actions are in
        [-1, 1]; Discrete actions are indices (pass both through :meth:`env_action`)."""
        es = episode_start if episode_start.dtype == torch.bool else episode_start != 0
        feats, state = self.body.step(obs, state, es.to(self.device))
        if self.discrete:
            logits, _ = self.distribution(feats)
            if deterministic:
                return logits.argmax(-1), None, None, state
            gumbel = -torch.empty_like(logits).exponential_(generator=generator).log()  # Gumbel-max sampling
            return (logits + gumbel).argmax(-1), None, None, state
        if deterministic:
            mean, _ = self.distribution(feats)
            return torch.tanh(mean), None, None, state
        a, log_prob = self.sample(feats, generator)
        return a, log_prob, None, state

    def env_action(self, action: Tensor) -> Tensor:
        """Box: [-1, 1] -> the space's bounds (shape of the space); Discrete: index -> index + start."""
        if self.discrete:
            return action + self.action_start
        a = action * self.action_scale + self.action_bias
        return a.reshape(*a.shape[:-1], *self.action_shape)


class Critic(nn.Module):
    """One soft Q-function. Box: Q(s, a) from [features, a] (a in [-1, 1]) -> ``[T, B]``; Discrete: Q(s, .) for
    every action -> ``[T, B, |A|]``."""

    def __init__(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        core: str = "mlp",
        hidden_size: int = 256,
        encoder_size: int = 0,
    ):
        super().__init__()
        self.discrete = isinstance(action_space, gym.spaces.Discrete)
        self.body = _Body(observation_space, core, hidden_size, encoder_size)
        if isinstance(action_space, gym.spaces.Discrete):
            self.net = mlp(self.body.out_dim, hidden_size, int(action_space.n))
        else:
            box = cast(gym.spaces.Box, action_space)  # check_spaces: Box or Discrete
            self.net = mlp(self.body.out_dim + int(np.prod(box.shape)), hidden_size, 1)

    def q(self, feats: Tensor, action: Tensor | None = None) -> Tensor:
        if self.discrete:
            return self.net(feats)
        return self.net(torch.cat([feats, cast(Tensor, action)], -1)).squeeze(-1)  # Box: an action is given


# ---------------------------------------------------------------------------------------------------------
# the algorithm
# ---------------------------------------------------------------------------------------------------------
class SAC:
    """Soft Actor-Critic on a SAME_STEP-autoreset vector env (see the module docstring).

    Attributes: ``actor``, ``critics`` (two :class:`Critic`), ``critic_targets``, ``log_alpha``, ``replay``,
    ``envs``, ``device``, ``global_step``, ``updates``. The environment is reset with ``config.seed`` at
    construction.
    """

    def __init__(self, envs: VectorEnv, config: SACConfig):
        self.device = dev = set_up(envs, config)
        obs_space, act_space = envs.single_observation_space, envs.single_action_space
        check_spaces(obs_space, act_space)
        self.config = cfg = config
        self.envs = envs
        self.discrete = isinstance(act_space, gym.spaces.Discrete)
        core = cfg.core.lower()
        net_args = (obs_space, act_space, core, cfg.hidden_size, cfg.encoder_size)
        self.actor = Actor(*net_args).to(dev)
        self.critics = nn.ModuleList([Critic(*net_args), Critic(*net_args)]).to(dev)
        self.critic_targets = copy.deepcopy(self.critics).requires_grad_(False)
        self.actor_optimizer = adam(self.actor.parameters(), cfg.policy_lr)
        self.critic_optimizer = adam(self.critics.parameters(), cfg.q_lr)
        # the entropy coefficient alpha = exp(log_alpha), tuned towards the target entropy
        if cfg.target_entropy is not None:
            self.target_entropy = float(cfg.target_entropy)
        elif self.discrete:
            self.target_entropy = cfg.target_entropy_scale * math.log(self.actor.n_actions)
        else:
            self.target_entropy = -float(self.actor.n_actions)
        self.log_alpha = torch.zeros(1, device=dev, requires_grad=True)
        if not cfg.autotune:
            self.log_alpha.data.fill_(math.log(cfg.alpha) if cfg.alpha > 0 else -math.inf)
        self.alpha_optimizer = adam([self.log_alpha], cfg.q_lr)
        self.generator = torch.Generator(device=dev).manual_seed(cfg.seed)  # actions, noise, replay sampling

        N = cfg.num_envs
        self.num_vector_steps = cfg.num_vector_steps
        self.global_step = 0
        self.updates = 0
        #: the unfinished iteration a stop left (its target step, episodes and update sums so far), else None
        self.iteration_so_far: dict[str, Any] | None = None
        obs, _ = envs.reset(seed=cfg.seed)
        self.torch_env = is_torch(obs)
        self.env_device = first_leaf(obs).device if self.torch_env else None
        self.next_obs = obs_to_tensor(obs, dev)
        self.next_state = self.actor.initial_state(N, dev)
        self.next_episode_start = torch.ones(N, dtype=torch.bool, device=dev)
        self.episodes = EpisodeStats(N, dev)
        a_shape = () if self.discrete else (self.actor.n_actions,)
        a_dtype = torch.long if self.discrete else torch.float32
        self.replay = EpisodicReplay(
            N, cfg.buffer_size // N, tree_map(lambda o: o[0], self.next_obs), a_shape, a_dtype, dev
        )
        self.replay.start(self.next_obs)

    @property
    def alpha(self) -> Tensor:
        return self.log_alpha.detach().exp()

    # -- 1. acting --------------------------------------------------------------------------------------
    @torch.no_grad()
    def _collect(self) -> list[tuple[float, int, bool | None]]:
        """One vector step into the replay; returns the episodes that ended."""
        cfg, dev = self.config, self.device
        obs, es = self.next_obs, self.next_episode_start
        if self.global_step < cfg.learning_starts:  # uniformly random actions (the actor's state still runs)
            if self.actor.recurrent:  # keep the acting state current for when the actor takes over
                _, _, _, self.next_state = self.actor.act(obs, self.next_state, es, generator=self.generator)
            if self.discrete:
                action = torch.randint(self.actor.n_actions, (cfg.num_envs,), generator=self.generator, device=dev)
            else:
                action = torch.rand((cfg.num_envs, self.actor.n_actions), generator=self.generator, device=dev) * 2 - 1
        else:
            action, _, _, self.next_state = self.actor.act(obs, self.next_state, es, generator=self.generator)
        env_action = self.actor.env_action(action)
        step_action = env_action.to(self.env_device) if self.torch_env else env_action.cpu().numpy()
        next_obs, reward, terminated, truncated, info = self.envs.step(step_action)
        reward = to_tensor(reward, dev, torch.float32).reshape(-1)
        terminated = to_tensor(terminated, dev, torch.bool).reshape(-1)
        done = terminated | to_tensor(truncated, dev, torch.bool).reshape(-1)
        any_done = bool(done.any())
        last = None
        if any_done:  # the final observations of the episodes that ended (rows of the done environments)
            idx = torch.nonzero(done).squeeze(1)
            last = obs_to_tensor(take_rows(final_obs(info), idx if self.torch_env else idx.cpu().numpy()), dev)
        self.next_obs = obs_to_tensor(next_obs, dev)
        self.replay.add(action, reward, terminated, done, last, self.next_obs)
        self.episodes.add(reward)
        episodes = self.episodes.finish(done, info) if any_done else []
        self.next_episode_start = done
        self.global_step += cfg.num_envs
        return episodes

    # -- 2. the update ---------------------------------------------------------------------------------
    def features(self, body: _Body, obs, episode_start: Tensor, which: str) -> Tensor:
        """Features of ``body`` on windows ``obs [W, B, ...]``: at the loss steps (``which="current"``: slots
        burn_in .. W-2) or at their next observations (``"next"``: slots burn_in+1 .. W-1).

        A recurrent body runs the whole window from the initial state: the first ``burn_in`` slots without
        gradient (they only warm the state), the rest with it. A memoryless body encodes just the slots asked."""
        b = self.config.burn_in
        if not body.recurrent:
            part = slice(b, -1) if which == "current" else slice(b + 1, None)
            return body(tree_map(lambda o: o[part], obs), (), episode_start[part])[0]
        es = episode_start.clone()
        es[0] = True  # every window starts from the initial state
        state = body.initial_state(es.shape[1], self.device)
        if b > 0:
            with torch.no_grad():
                _, state = body(tree_map(lambda o: o[:b], obs), state, es[:b])
        feats, _ = body(tree_map(lambda o: o[b:], obs), state, es[b:])
        return feats[:-1] if which == "current" else feats[1:]

    def critic_loss(self, batch: dict[str, Any]) -> tuple[Tensor, dict[str, Tensor]]:
        """The soft Bellman error of both critics over the loss steps of a batch of windows."""
        cfg, b = self.config, self.config.burn_in
        critics, targets = cast(Sequence[Critic], self.critics), cast(Sequence[Critic], self.critic_targets)
        obs, es = batch["obs"], batch["episode_start"]
        # loss steps: slots b .. W-2 that are steps (not final observations); their next observation is the
        # slot after. Tensors below are over slots b .. W-1 (index 0 = slot b), cut into [:-1] and [1:].
        mask = (~batch["is_final"][b:-1]).float()
        actions, rewards = batch["actions"][b:-1], batch["rewards"][b:-1]
        not_term = (~batch["terminated"][b:-1]).float()
        with torch.no_grad():
            next_feats = self.features(self.actor.body, obs, es, "next")
            target_feats = [self.features(t.body, obs, es, "next") for t in targets]
            if self.discrete:  # exact expectation over the next actions
                _, next_logp = self.actor.distribution(next_feats)
                q_next = torch.min(*(t.q(f) for t, f in zip(targets, target_feats, strict=True)))
                v_next = (next_logp.exp() * (q_next - self.alpha * next_logp)).sum(-1)
            else:
                next_a, next_logp = self.actor.sample(next_feats, self.generator)
                q_next = torch.min(*(t.q(f, next_a) for t, f in zip(targets, target_feats, strict=True)))
                v_next = q_next - self.alpha * next_logp
            target = rewards + cfg.gamma * not_term * v_next
        n = mask.sum().clamp(min=1.0)
        losses, q_means = [], []
        for critic in critics:
            feats = self.features(critic.body, obs, es, "current")
            if self.discrete:
                q = critic.q(feats).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
            else:
                q = critic.q(feats, actions)
            losses.append(((q - target).square() * mask).sum() / n)
            q_means.append((q.detach() * mask).sum() / n)
        loss = losses[0] + losses[1]
        return loss, {"qf1_loss": losses[0].detach(), "qf2_loss": losses[1].detach(), "qf1_values": q_means[0]}

    def actor_loss(self, batch: dict[str, Any]) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
        """The policy loss E[alpha log pi - min Q] and the entropy-coefficient loss, over the loss steps."""
        b = self.config.burn_in
        critics = cast(Sequence[Critic], self.critics)
        obs, es = batch["obs"], batch["episode_start"]
        mask = (~batch["is_final"][b:-1]).float()
        n = mask.sum().clamp(min=1.0)
        feats = self.features(self.actor.body, obs, es, "current")
        with torch.no_grad():  # the critics are fixed here: only the actor learns from this loss
            critic_feats = [self.features(c.body, obs, es, "current") for c in critics]
        if self.discrete:
            _, logp = self.actor.distribution(feats)
            probs = logp.exp()
            q = torch.min(*(c.q(f) for c, f in zip(critics, critic_feats, strict=True)))
            per_step = (probs * (self.alpha * logp - q)).sum(-1)
            mean_logp = (probs * logp).sum(-1).detach()  # E_pi[log pi] = -entropy, exactly
        else:
            a, logp = self.actor.sample(feats, self.generator)
            q = torch.min(*(c.q(f, a) for c, f in zip(critics, critic_feats, strict=True)))
            per_step = self.alpha * logp - q
            mean_logp = logp.detach()
        loss = (per_step * mask).sum() / n
        # alpha grows while the entropy (-E[log pi]) is below the target, shrinks while above
        alpha_loss = (-self.log_alpha.exp() * (mean_logp + self.target_entropy) * mask).sum() / n
        return loss, alpha_loss, {"entropy": -(mean_logp * mask).sum() / n}

    def update(self) -> dict[str, Tensor]:
        """One gradient step of the critics; of the actor and alpha too on every ``policy_frequency``-th update
        (then ``policy_frequency`` of them, on the same batch); then the target critics move towards the
        critics by ``tau``. Returns the losses (tensors, detached; the actor's only when it was updated)."""
        cfg = self.config
        batch = self.replay.sample_sequences(cfg.batch_size, cfg.window, cfg.burn_in, self.generator)
        # critics
        q_loss, stats = self.critic_loss(batch)
        self.critic_optimizer.zero_grad()
        q_loss.backward()
        self.critic_optimizer.step()
        # actor (with the updated critics) and the entropy coefficient
        if self.updates % cfg.policy_frequency == 0:
            self.critics.requires_grad_(False)  # the actor's gradient passes through the critics, filling none
            for _ in range(cfg.policy_frequency):
                pi_loss, alpha_loss, pi_stats = self.actor_loss(batch)
                self.actor_optimizer.zero_grad()
                pi_loss.backward()
                self.actor_optimizer.step()
                if cfg.autotune:
                    self.alpha_optimizer.zero_grad()
                    alpha_loss.backward()
                    self.alpha_optimizer.step()
            self.critics.requires_grad_(True)
            stats.update(pi_stats, actor_loss=pi_loss.detach(), alpha_loss=alpha_loss.detach())
        # Polyak averaging of the target critics
        with torch.no_grad():
            for p, tp in zip(self.critics.parameters(), self.critic_targets.parameters(), strict=True):
                tp.lerp_(p, cfg.tau)
        self.updates += 1
        return {**stats, "alpha": self.alpha[0]}

    # ------------------------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self.global_step >= self.num_vector_steps * self.config.num_envs

    def train_iteration(self, should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """``iteration_steps`` environment steps (fewer at the end of the budget), each followed by
        ``gradient_steps`` updates once ``learning_starts`` steps are in the replay. Returns the metrics:
        ``global_step``, ``sps``, ``episodes``, and the mean losses of the iteration's updates (``value_loss``:
        the critics' loss, ``policy_loss``: the actor's, ``entropy``, ``alpha``, ``qf1_values``).

        ``should_stop`` is polled before every environment step: when it returns True,
        :class:`~membench_agents.errors.StopRequested` is raised with the iteration unfinished but consistent:
        :meth:`state_dict` holds it, and the next call completes it (the same steps, updates and metrics)."""
        cfg = self.config
        t0 = time.perf_counter()
        self.actor.train()
        if self.iteration_so_far is None:
            target = min(self.num_vector_steps * cfg.num_envs, self.global_step + cfg.iteration_steps)
            # running sums of the update statistics: keeping one small tensor per update alive for the whole
            # iteration fragments the allocator (measured: +1.8 GB over 5,000 updates on Pendulum)
            self.iteration_so_far = {
                "start_step": self.global_step,
                "target": target,
                "episodes": [],
                "sums": {},
                "counts": {},
                "time": 0.0,
            }
        it = self.iteration_so_far
        sums, counts = it["sums"], it["counts"]
        while self.global_step < it["target"]:
            if should_stop is not None and should_stop():
                it["time"] += time.perf_counter() - t0
                raise StopRequested
            it["episodes"].extend(self._collect())
            if self.global_step >= cfg.learning_starts and self.replay.can_sample(cfg.window):
                for _ in range(cfg.gradient_steps):
                    for k, v in self.update().items():
                        sums[k] = sums[k] + v if k in sums else v.clone()
                        counts[k] = counts.get(k, 0) + 1
        self.iteration_so_far = None
        elapsed = max(it["time"] + time.perf_counter() - t0, 1e-9)
        metrics: dict[str, Any] = {
            "global_step": self.global_step,
            "episodes": it["episodes"],
            "updates": self.updates,
            "sps": (self.global_step - it["start_step"]) / elapsed,
            "time": elapsed,
        }
        mean = {k: float(v) / counts[k] for k, v in sums.items()}
        if "qf1_loss" in mean:
            metrics.update(
                value_loss=mean["qf1_loss"] + mean["qf2_loss"], qf1_values=mean["qf1_values"], alpha=mean["alpha"]
            )
        if "actor_loss" in mean:
            metrics.update(policy_loss=mean["actor_loss"], entropy=mean["entropy"], alpha_loss=mean["alpha_loss"])
        return metrics

    # ------------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly except the environments: networks, optimizers, alpha, the replay,
        RNGs, the acting state. Tensors and plain data only (loadable with ``weights_only=True``)."""
        return {
            "config": dataclasses.asdict(self.config),
            "actor": self.actor.state_dict(),
            "critics": self.critics.state_dict(),
            "critic_targets": self.critic_targets.state_dict(),
            "log_alpha": self.log_alpha.detach().clone(),
            "actor_optimizer": self.actor_optimizer.state_dict(),
            "critic_optimizer": self.critic_optimizer.state_dict(),
            "alpha_optimizer": self.alpha_optimizer.state_dict(),
            "replay": self.replay.state_dict(),
            "global_step": self.global_step,
            "updates": self.updates,
            "next_obs": tree_map(lambda o: o.clone(), self.next_obs),
            "next_state": tuple(s.clone() for s in self.next_state),
            "next_episode_start": self.next_episode_start.clone(),
            **self.episodes.state_dict(),
            "iteration_so_far": _copy_iteration(self.iteration_so_far),
            "rng": rng_state({"generator": self.generator}),
        }

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` into a SAC built with the same config (``self.envs`` is kept)."""
        dev = self.device
        self.actor.load_state_dict(d["actor"])
        self.critics.load_state_dict(d["critics"])
        self.critic_targets.load_state_dict(d["critic_targets"])
        with torch.no_grad():
            self.log_alpha.copy_(d["log_alpha"])
        self.actor_optimizer.load_state_dict(d["actor_optimizer"])
        self.critic_optimizer.load_state_dict(d["critic_optimizer"])
        self.alpha_optimizer.load_state_dict(d["alpha_optimizer"])
        self.replay.load_state_dict(d["replay"])
        self.global_step = int(d["global_step"])
        self.updates = int(d["updates"])
        self.next_obs = tree_map(lambda o: o.to(dev), d["next_obs"])
        self.next_state = tuple(s.to(dev) for s in d["next_state"])
        self.next_episode_start = d["next_episode_start"].to(dev)
        self.episodes.load_state_dict(d)
        self.iteration_so_far = _copy_iteration(d.get("iteration_so_far"), dev)
        restore_rng(d["rng"], {"generator": self.generator})


def _copy_iteration(it: dict[str, Any] | None, device=None) -> dict[str, Any] | None:
    """A copy of an unfinished iteration's bookkeeping (for :meth:`SAC.state_dict` and its inverse)."""
    if it is None:
        return None
    sums = {k: (v.clone() if device is None else v.to(device)) for k, v in it["sums"].items()}
    episodes = [(float(r), int(n), None if s is None else bool(s)) for r, n, s in it["episodes"]]
    return {**it, "episodes": episodes, "sums": sums, "counts": dict(it["counts"])}


# ---------------------------------------------------------------------------------------------------------
# the run layer's interface (membench_agents.algos.trainer.Trainer)
# ---------------------------------------------------------------------------------------------------------
class SACTrainer(AlgoTrainer):
    """A membench SAC run (one seed): agents ``sac`` (no memory), ``sac-lstm``, ``sac-gru``, ``sac-ffm``,
    ``sac-mingru``, ``sac-lru``."""

    kind = "sac"
    check_spaces = staticmethod(check_spaces)

    def build(self, envs, config) -> SAC:
        return SAC(envs, config)

    @classmethod
    def budget(cls, cfg: dict[str, Any]) -> Budget:
        c = algo_config(cfg, cfg["seeds"][0])
        return Budget(
            c.num_vector_steps * c.num_envs, f"whole vector steps of {c.num_envs} environments", c.learning_starts
        )

    @property
    def target_steps(self) -> int:
        return int(self.algo.num_vector_steps * self.algo.config.num_envs)

    @property
    def finished(self) -> bool:
        return self.algo.finished

    @property
    def policy(self) -> Actor:
        return self.algo.actor


__all__ = ["SAC", "Actor", "Critic", "SACConfig", "SACTrainer", "check_spaces"]
