"""The actor-critic used by PPO: observation normaliser -> encoder -> memory core -> policy/value heads.

Action spaces: ``Discrete`` (categorical), ``MultiDiscrete`` (one categorical per dimension) and ``Box``
(diagonal Gaussian with a state-independent log-std; sampled actions are NOT clipped: clip them to the
space with :meth:`ActorCritic.env_action` before stepping the environment, and keep the unclipped ones
for :meth:`ActorCritic.evaluate_actions`). Discrete actions are returned as environment actions (the
space's ``start`` is added).

Observations are torch tensors (or dicts of them) on the policy's device with the batch in front:
``[B, ...]`` for :meth:`act`, ``[T, B, ...]`` for :meth:`evaluate_actions`.
"""

from __future__ import annotations

import math
from typing import cast

import gymnasium as gym
import numpy as np
import torch
from torch import Tensor, nn

from membench_agents.nets.encoders import image_layout, make_encoder
from membench_agents.nets.memory import State, make_core

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


# --------------------------------------------------------------------------------------------------------
# observation normalisation
# --------------------------------------------------------------------------------------------------------
class RunningMeanStd(nn.Module):
    """Running mean / variance of a stream of batches (parallel Welford), kept in buffers."""

    mean: Tensor  # buffers
    var: Tensor
    count: Tensor

    def __init__(self, shape: tuple[int, ...] = (), epsilon: float = 1e-4):
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(epsilon, dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: Tensor) -> None:
        x = x.reshape(-1, *self.mean.shape).to(torch.float64)
        n = x.shape[0]
        if n == 0:
            return
        b_mean = x.mean(0)
        b_var = x.var(0, unbiased=False)
        delta = b_mean - self.mean
        tot = self.count + n
        self.mean += delta * n / tot
        m2 = self.var * self.count + b_var * n + delta.square() * self.count * n / tot
        self.var.copy_(m2 / tot)
        self.count.copy_(tot)


class ObsNormalizer(nn.Module):
    """Normalise the float vector parts of an observation (images and discrete parts pass through)."""

    def __init__(self, space: gym.Space, enabled: bool = True, clip: float = 10.0, eps: float = 1e-8):
        super().__init__()
        self.enabled = enabled
        self.clip = clip
        self.eps = eps
        self.stats = nn.ModuleDict()
        if enabled:
            for path, sub in _leaves(space):
                is_vector = isinstance(sub, gym.spaces.Box) and image_layout(sub) is None
                if is_vector and np.issubdtype(sub.dtype, np.floating):
                    self.stats[_path_key(path)] = RunningMeanStd(sub.shape)
        self.enabled = enabled and len(self.stats) > 0

    def forward(self, obs, _path: tuple = ()):
        if not self.enabled:
            return obs
        if isinstance(obs, dict):
            return {k: self.forward(v, (*_path, k)) for k, v in obs.items()}
        key = _path_key(_path)
        if key not in self.stats:
            return obs
        rms = cast(RunningMeanStd, self.stats[key])
        mean = rms.mean.to(torch.float32)
        std = torch.sqrt(rms.var.to(torch.float32) + self.eps)
        return torch.clamp((obs.to(torch.float32) - mean) / std, -self.clip, self.clip)

    @torch.no_grad()
    def update(self, obs, _path: tuple = ()) -> None:
        """Update the statistics with a batch (any number of leading dims)."""
        if not self.enabled:
            return
        if isinstance(obs, dict):
            for k, v in obs.items():
                self.update(v, (*_path, k))
            return
        key = _path_key(_path)
        if key in self.stats:
            cast(RunningMeanStd, self.stats[key]).update(obs)


def _leaves(space: gym.Space, path: tuple = ()):
    if isinstance(space, gym.spaces.Dict):
        for k, s in space.spaces.items():
            yield from _leaves(s, (*path, k))
    else:
        yield path, space


def _path_key(path: tuple) -> str:
    return "obs" + "".join(f"_{k}" for k in path).replace(".", "_")


# --------------------------------------------------------------------------------------------------------
# action heads
# --------------------------------------------------------------------------------------------------------
def _action_head_size(space: gym.Space) -> int:
    """The number of policy outputs for ``space``; ValueError (which space, why) when unsupported."""
    if isinstance(space, gym.spaces.Discrete):
        return int(space.n)
    if isinstance(space, gym.spaces.MultiDiscrete):
        if space.nvec.ndim != 1:
            raise ValueError(
                f"unsupported action space {space}: MultiDiscrete actions must be 1-D "
                f"(got nvec of shape {space.nvec.shape}); flatten them with a wrapper"
            )
        return int(space.nvec.sum())
    if isinstance(space, gym.spaces.Box):
        if not np.issubdtype(space.dtype, np.floating):
            raise ValueError(
                f"unsupported action space {space}: an integer-valued Box has no Gaussian policy; "
                "use Discrete or MultiDiscrete"
            )
        if int(np.prod(space.shape)) < 1:
            raise ValueError(f"unsupported action space {space}: it has no action dimension")
        return int(np.prod(space.shape))
    why = {
        gym.spaces.MultiBinary: "MultiBinary actions have no Bernoulli policy head here; use MultiDiscrete([2, ...])",
        gym.spaces.Dict: "composite (Dict) action spaces have no policy head; flatten them with a wrapper",
        gym.spaces.Tuple: "composite (Tuple) action spaces have no policy head; flatten them with a wrapper",
        gym.spaces.Text: "text actions are not supported",
    }.get(type(space), f"no policy head for action spaces of type {type(space).__name__}")
    raise ValueError(f"unsupported action space {space}: {why}. Supported: Discrete, MultiDiscrete, Box")


class ActorCritic(nn.Module):
    """Encoder -> memory core (shared by actor and critic) -> linear policy and value heads.

    Args:
        observation_space, action_space: the single-environment spaces.
        core: memory core name (a key of :data:`membench_agents.nets.memory.CORES`: "mlp", "lstm", "gru", ...).
        hidden_size: width of the memory core (its output features).
        norm_obs: normalise float vector observations with running statistics (updated by the caller with
            :meth:`update_obs_stats`; PPO freezes them during a rollout so act and update agree).
        encoder_size: width of the MLP on vector (and one-hot) observations; 0 (default): none, the
            flat vector goes straight into the memory core, whose input layer embeds it.
        core_kwargs: options of the memory core (:func:`membench_agents.nets.memory.make_core`).
        init_log_std: initial log standard deviation of the Gaussian policy (Box actions only).
    """

    action_start: Tensor  # buffers: Discrete / MultiDiscrete
    action_low: Tensor  # Box
    action_high: Tensor

    def __init__(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        core: str = "lstm",
        hidden_size: int = 128,
        *,
        norm_obs: bool = False,
        encoder_size: int = 0,
        core_kwargs: dict | None = None,
        init_log_std: float = 0.0,
    ):
        super().__init__()
        self.observation_space = observation_space
        self.action_space = action_space
        self.n_out = _action_head_size(action_space)
        self.core_name = str(core).lower()
        self.obs_norm = ObsNormalizer(observation_space, enabled=norm_obs)
        self.encoder = make_encoder(observation_space, hidden_size=encoder_size)
        self.core = make_core(core, self.encoder.out_dim, hidden_size, **(core_kwargs or {}))
        H = self.core.out_dim
        # one linear layer for policy outputs and value (one matmul per step); rows initialised separately
        self.head = nn.Linear(H, self.n_out + 1)
        with torch.no_grad():
            nn.init.orthogonal_(self.head.weight[: self.n_out], 0.01)
            nn.init.orthogonal_(self.head.weight[self.n_out :], 1.0)
            self.head.bias.zero_()

        self.kind = type(action_space).__name__
        if isinstance(action_space, gym.spaces.Discrete):
            self.kind = "discrete"
            self.register_buffer("action_start", torch.tensor(int(action_space.start)))
            self._start_nonzero = int(action_space.start) != 0
        elif isinstance(action_space, gym.spaces.MultiDiscrete):
            self.kind = "multidiscrete"
            self.nvec = [int(n) for n in action_space.nvec]
            self.register_buffer("action_start", torch.as_tensor(action_space.start, dtype=torch.long))
        elif isinstance(action_space, gym.spaces.Box):  # (_action_head_size refused every other space)
            self.kind = "continuous"
            self.action_shape = tuple(action_space.shape)
            self.log_std = nn.Parameter(torch.full((self.n_out,), float(init_log_std)))
            low = torch.as_tensor(np.asarray(action_space.low, dtype=np.float32)).reshape(-1)
            high = torch.as_tensor(np.asarray(action_space.high, dtype=np.float32)).reshape(-1)
            self.register_buffer("action_low", low)
            self.register_buffer("action_high", high)

    # -- state ----------------------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return self.head.weight.device

    @property
    def recurrent(self) -> bool:
        return self.core.recurrent

    def initial_state(self, n: int, device=None) -> State:
        return self.core.initial_state(n, self.device if device is None else device)

    def update_obs_stats(self, obs) -> None:
        self.obs_norm.update(obs)

    # -- networks -------------------------------------------------------------------------------------
    def encode(self, obs) -> Tensor:
        """Observations (any leading dims) -> encoder features, normalised first when ``norm_obs``."""
        if self.obs_norm.enabled:
            obs = self.obs_norm(obs)
        return self.encoder.forward(obs)

    def _heads(self, obs, state: State, episode_start: Tensor) -> tuple[Tensor, Tensor, State]:
        """obs [T, B, ...] -> (policy outputs [T, B, n_out], value [T, B], state)."""
        feats, state = self.core(self.encode(obs), state, _as_mask(episode_start, self.device))
        out = self.head(feats)
        return out[..., : self.n_out], out[..., self.n_out], state

    def forward(self, obs, state: State, episode_start: Tensor):
        """Sequence forward: (policy outputs [T, B, n_out], value [T, B], final state)."""
        return self._heads(obs, state, episode_start)

    def value(self, obs, state: State, episode_start: Tensor) -> Tensor:
        """V(obs) for one step ``obs [B, ...]`` -> ``[B]`` (no state update returned)."""
        _, v, _ = self._heads(_unsqueeze0(obs), state, _as_mask(episode_start, self.device).unsqueeze(0))
        return v[0]

    def act(
        self,
        obs,
        state: State,
        episode_start: Tensor,
        deterministic: bool = False,
        generator: torch.Generator | None = None,
    ) -> tuple[Tensor, Tensor, Tensor, State]:
        """One step for a batch: ``obs [B, ...]``, ``episode_start [B]`` -> (action, log_prob, value, state)."""
        es = episode_start
        if not (isinstance(es, Tensor) and es.dtype == torch.bool and es.device == self.device):
            es = _as_mask(es, self.device)
        feats, state = self.core.step(self.encode(obs), state, es)
        out = self.head.forward(feats)
        p, v = out[:, : self.n_out], out[:, self.n_out]
        if self.kind == "discrete":
            logp_all = torch.log_softmax(p, -1)
            idx = p.argmax(-1) if deterministic else _sample_categorical(p, generator)
            logp = logp_all.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
            return (idx + self.action_start if self._start_nonzero else idx), logp, v, state
        if self.kind == "multidiscrete":
            idxs: list[Tensor] = []
            logp = torch.zeros_like(v)
            for logits in p.split(self.nvec, -1):
                lp = torch.log_softmax(logits, -1)
                i = logits.argmax(-1) if deterministic else _sample_categorical(logits, generator)
                idxs.append(i)
                logp = logp + lp.gather(-1, i.unsqueeze(-1)).squeeze(-1)
            idx = torch.stack(idxs, -1)
            return idx + self.action_start, logp, v, state
        std = self.log_std.exp()
        if deterministic:
            a = p
        else:
            a = p + std * torch.randn(p.shape, generator=generator, device=p.device, dtype=p.dtype)
        logp = self._gauss_logp(a, p)
        return a.reshape(*a.shape[:-1], *self.action_shape), logp, v, state

    def _gauss_logp(self, a: Tensor, mean: Tensor) -> Tensor:
        z = (a - mean) * torch.exp(-self.log_std)
        return (-0.5 * z.square() - self.log_std - _LOG_SQRT_2PI).sum(-1)

    def evaluate_actions(
        self, obs_seq, actions: Tensor, state: State, episode_start_seq: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Re-run chunks ``[T, B, ...]`` from ``state``: (log_prob [T, B], entropy [T, B], value [T, B])."""
        p, v, _ = self._heads(obs_seq, state, episode_start_seq)
        if self.kind == "discrete":
            logp_all = torch.log_softmax(p, -1)
            idx = (actions.long() - self.action_start).unsqueeze(-1)
            logp = logp_all.gather(-1, idx).squeeze(-1)
            ent = -(logp_all.exp() * logp_all).sum(-1)
            return logp, ent, v
        if self.kind == "multidiscrete":
            idx = actions.long() - self.action_start
            logp = torch.zeros_like(v)
            ent = torch.zeros_like(v)
            for j, logits in enumerate(p.split(self.nvec, -1)):
                lp = torch.log_softmax(logits, -1)
                logp = logp + lp.gather(-1, idx[..., j : j + 1]).squeeze(-1)
                ent = ent - (lp.exp() * lp).sum(-1)
            return logp, ent, v
        a = actions.reshape(*actions.shape[: actions.dim() - len(self.action_shape)], self.n_out).to(p.dtype)
        logp = self._gauss_logp(a, p)
        ent = (0.5 + _LOG_SQRT_2PI + self.log_std).sum().expand_as(v)
        return logp, ent, v

    def env_action(self, action: Tensor) -> Tensor:
        """The action to send to the environment: Box actions clipped to the bounds; others unchanged."""
        if self.kind != "continuous":
            return action
        flat = action.reshape(*action.shape[: action.dim() - len(self.action_shape)], self.n_out)
        flat = torch.maximum(torch.minimum(flat, self.action_high), self.action_low)
        return flat.reshape(action.shape)


def _sample_categorical(logits: Tensor, generator: torch.Generator | None) -> Tensor:
    """One sample per row of (unnormalised) ``logits``: argmax of logits - log E with E ~ Exp(1) i.i.d. (the
    Gumbel-max trick; -log E is Gumbel): exact, and 4 tensor ops instead of torch.multinomial's slower
    path for small batches."""
    e = torch.empty_like(logits).exponential_(generator=generator)
    return (logits - e.log()).argmax(-1)


def _unsqueeze0(obs):
    if isinstance(obs, dict):
        return {k: _unsqueeze0(v) for k, v in obs.items()}
    return obs.unsqueeze(0)


def _as_mask(episode_start, device) -> Tensor:
    es = torch.as_tensor(episode_start, device=device)
    return es if es.dtype == torch.bool else es != 0


__all__ = ["ActorCritic", "ObsNormalizer", "RunningMeanStd"]
