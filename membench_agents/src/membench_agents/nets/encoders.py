"""Observation encoders: a gymnasium observation space -> an ``nn.Module`` mapping a batch to features.

* ``Box`` vector (a non-image shape of rank <= 2, or of rank 3 with at most ``MAX_FLAT_GRID`` values, flattened) ->
  a 2-layer MLP (``hidden_size=0``: the flat vector);
* ``Box`` image ``(H, W, C)`` (uint8 scaled by 1/255; float images as they are) -> a small CNN
  (the Nature-DQN CNN for images of at least 36x36 pixels, 3x3 convolutions below that);
* ``Discrete`` / ``MultiDiscrete`` -> one-hot (concatenated), ``MultiBinary`` -> 0/1 vector, then an MLP;
* ``Dict`` (also nested, e.g. ManiSkill's ``{"sensor_data": {...}, "agent": {...}}``) -> one encoder per
  key, outputs concatenated.

Every encoder takes torch tensors (any device) with arbitrary leading batch dims ``[..., *shape]`` and
returns ``[..., out_dim]``; dict encoders take dicts of such tensors.
"""

from __future__ import annotations

import math
from typing import TypeVar, cast

import gymnasium as gym
import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

#: A Box of rank 3 whose channel axis (last, or first) is at most this large is treated as an image.
MAX_CHANNELS = 16
#: A rank-3 Box that is not an image (a small board, e.g. POBAX's Battleship 3 state: 2 x 3 x 3) is flattened into a
#: vector when it holds at most this many values; a larger one (a deep frame stack?) is refused.
MAX_FLAT_GRID = 4096
#: Images whose smaller side is at least this large get the Nature-DQN CNN.
NATURE_MIN_SIDE = 36


_Layer = TypeVar("_Layer", nn.Linear, nn.Conv2d)


def layer_init(layer: _Layer, std: float = math.sqrt(2), bias: float = 0.0) -> _Layer:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(cast(Tensor, layer.bias), bias)  # the layers built here all have a bias
    return layer


def image_layout(space: gym.Space) -> str | None:
    """ "hwc" or "chw" when ``space`` is an image Box, else None."""
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 3:
        return None
    h, w, c = space.shape
    if c <= MAX_CHANNELS and min(h, w) > MAX_CHANNELS // 4:
        return "hwc"
    if h <= MAX_CHANNELS and min(w, c) > MAX_CHANNELS // 4:
        return "chw"
    return None


class Encoder(nn.Module):
    """An observation encoder: a batch of observations -> features ``[..., out_dim]``."""

    out_dim: int


class VectorEncoder(Encoder):
    """Flatten the trailing ``len(shape)`` dims; then a 2-layer tanh MLP of width ``hidden_size``.

    ``hidden_size=0``: no layers, the flattened float vector itself is the feature (``out_dim`` = its
    size). The agents use this for vector observations by default: the memory core's own input layer
    embeds them (as in sb3-contrib's RecurrentPPO), which saves a third of the LSTM's FLOPs per step.
    """

    def __init__(self, shape: tuple[int, ...], hidden_size: int = 64):
        super().__init__()
        if hidden_size < 0:
            raise ValueError(f"hidden_size must be >= 0, got {hidden_size}")
        self.shape = tuple(shape)
        self.in_dim = int(np.prod(self.shape)) if self.shape else 1
        self.net: nn.Sequential | None
        if hidden_size > 0:
            self.net = nn.Sequential(
                layer_init(nn.Linear(self.in_dim, hidden_size)),
                nn.Tanh(),
                layer_init(nn.Linear(hidden_size, hidden_size)),
                nn.Tanh(),
            )
            self.out_dim = hidden_size
        else:
            self.net = None
            self.out_dim = self.in_dim

    def flat(self, obs: Tensor) -> Tensor:
        if len(self.shape) != 1 or obs.shape[-1] != self.in_dim:
            obs = obs.reshape(*obs.shape[: obs.dim() - len(self.shape)], self.in_dim)
        return obs if obs.dtype == torch.float32 else obs.to(torch.float32)

    def forward(self, obs: Tensor) -> Tensor:
        return self._mlp(self.flat(obs))

    def _mlp(self, x: Tensor) -> Tensor:
        if self.net is None:
            return x
        # functional calls: no per-module dispatch overhead per step
        l1, l2 = cast(nn.Linear, self.net[0]), cast(nn.Linear, self.net[2])
        return torch.tanh(F.linear(torch.tanh(F.linear(x, l1.weight, l1.bias)), l2.weight, l2.bias))


class OneHotEncoder(VectorEncoder):
    """Discrete / MultiDiscrete observations (of any shape, in row-major order): concatenated one-hot codes, then the
    MLP (if any)."""

    offsets: Tensor  # buffers
    start: Tensor

    def __init__(
        self, nvec: np.ndarray, start: np.ndarray, hidden_size: int = 64, obs_shape: tuple[int, ...] | None = None
    ):
        nvec = np.asarray(nvec)
        self.obs_shape = tuple(nvec.shape) if obs_shape is None else tuple(obs_shape)  # () for Discrete
        flat = nvec.reshape(-1)  # a MultiDiscrete may be a grid (MIKASA-Base's MysteryPath oracle: 7 x 7 cells)
        super().__init__((int(np.sum(flat)),), hidden_size)
        self.register_buffer("offsets", torch.as_tensor(np.cumsum(flat) - flat, dtype=torch.long))
        self.register_buffer("start", torch.as_tensor(np.asarray(start), dtype=torch.long).reshape(-1))

    def forward(self, obs: Tensor) -> Tensor:
        lead = obs.shape[: obs.dim() - len(self.obs_shape)]
        idx = obs.reshape(*lead, -1).long() - self.start + self.offsets
        onehot = torch.zeros(*lead, self.in_dim, device=obs.device)
        onehot.scatter_(-1, idx, 1.0)
        return self._mlp(onehot)


class CNNEncoder(Encoder):
    """A small CNN on ``(H, W, C)`` (or ``(C, H, W)``) images; uint8 pixels are scaled by 1/255."""

    def __init__(self, space: gym.spaces.Box, layout: str = "hwc", feature_size: int = 256):
        super().__init__()
        self.layout = layout
        if layout == "hwc":
            h, w, c = space.shape
        else:
            c, h, w = space.shape
        self.scale = 1.0 / 255.0 if space.dtype == np.uint8 else 1.0
        if min(h, w) >= NATURE_MIN_SIDE:
            convs = [
                nn.Conv2d(c, 32, 8, 4),
                nn.ReLU(),
                nn.Conv2d(32, 64, 4, 2),
                nn.ReLU(),
                nn.Conv2d(64, 64, 3, 1),
                nn.ReLU(),
            ]
        else:
            convs = [
                nn.Conv2d(c, 16, 3, 1, 1),
                nn.ReLU(),
                nn.Conv2d(16, 32, 3, 1, 1),
                nn.ReLU(),
                nn.Conv2d(32, 32, 3, 2 if min(h, w) >= 8 else 1, 1),
                nn.ReLU(),
            ]
        for m in convs:
            if isinstance(m, nn.Conv2d):
                layer_init(m)
        self.convs = nn.Sequential(*convs, nn.Flatten())
        with torch.no_grad():
            n_flat = self.convs(torch.zeros(1, c, h, w)).shape[1]
        self.fc = nn.Sequential(layer_init(nn.Linear(n_flat, feature_size)), nn.ReLU())
        self.image_shape = tuple(space.shape)
        self.out_dim = feature_size

    def forward(self, obs: Tensor) -> Tensor:
        lead = obs.shape[:-3]
        x = obs.reshape(-1, *self.image_shape).to(torch.float32)
        if self.layout == "hwc":
            x = x.permute(0, 3, 1, 2)
        if self.scale != 1.0:
            x = x * self.scale
        return self.fc(self.convs(x)).reshape(*lead, self.out_dim)


class DictEncoder(Encoder):
    """One encoder per key (recursively for nested dicts); the outputs are concatenated in key order."""

    def __init__(self, space: gym.spaces.Dict, hidden_size: int = 64, path: str = "observation"):
        super().__init__()
        if len(space.spaces) == 0:
            raise ValueError(f"unsupported observation space {space}: {path} is an empty Dict")
        self.keys = list(space.spaces)
        encoders = {
            _module_key(k): make_encoder(s, hidden_size=hidden_size, _path=f"{path}[{k!r}]")
            for k, s in space.spaces.items()
        }
        self.encoders = nn.ModuleDict(encoders)
        self.out_dim = sum(e.out_dim for e in encoders.values())

    def forward(self, obs: dict) -> Tensor:
        return torch.cat([self.encoders[_module_key(k)](obs[k]) for k in self.keys], dim=-1)


def _module_key(key: str) -> str:
    # ModuleDict keys may not contain "." and may not shadow attributes
    return "k_" + str(key).replace(".", "_")


def make_encoder(observation_space: gym.Space, hidden_size: int = 64, *, _path: str = "observation") -> Encoder:
    """The encoder of ``observation_space`` (see the module docstring); ``.out_dim`` is its feature size.

    ``hidden_size``: width of the vector / one-hot MLPs (0: no MLP, the flat vector is the feature).

    Raises ValueError, naming the space and why, for spaces no encoder handles (Text, Graph, Sequence,
    Tuple, boxes of rank > 3, unbounded Discrete ...).
    """
    space = observation_space
    if isinstance(space, gym.spaces.Dict):
        return DictEncoder(space, hidden_size=hidden_size, path=_path)
    if isinstance(space, gym.spaces.Box):
        layout = image_layout(space)
        if layout is not None:
            return CNNEncoder(space, layout)
        if len(space.shape) > 3:
            raise ValueError(
                f"unsupported observation space {space} at {_path}: a Box of rank {len(space.shape)} "
                "is neither a vector nor an (H, W, C) image; flatten or split it with a wrapper"
            )
        if len(space.shape) == 3 and int(np.prod(space.shape)) > MAX_FLAT_GRID:
            raise ValueError(
                f"unsupported observation space {space} at {_path}: a rank-3 Box is encoded as an "
                f"image only with at most {MAX_CHANNELS} channels on the last (or first) axis, and flattened "
                f"only up to {MAX_FLAT_GRID} values"
            )
        return VectorEncoder(space.shape, hidden_size)
    if isinstance(space, gym.spaces.Discrete):
        return OneHotEncoder(np.array([space.n]), np.array([space.start]), hidden_size, obs_shape=())
    if isinstance(space, gym.spaces.MultiDiscrete):
        return OneHotEncoder(space.nvec, space.start, hidden_size)
    if isinstance(space, gym.spaces.MultiBinary):
        return VectorEncoder(tuple(np.atleast_1d(space.n)), hidden_size)
    why = {
        gym.spaces.Tuple: "Tuple observations have no encoder (use a Dict space with named keys)",
        gym.spaces.Text: "text observations have no encoder",
        gym.spaces.Graph: "graph observations have no encoder",
        gym.spaces.Sequence: "variable-length Sequence observations have no encoder",
    }.get(type(space), f"no encoder for spaces of type {type(space).__name__}")
    raise ValueError(f"unsupported observation space {space} at {_path}: {why}")


__all__ = ["CNNEncoder", "DictEncoder", "OneHotEncoder", "VectorEncoder", "image_layout", "make_encoder"]
