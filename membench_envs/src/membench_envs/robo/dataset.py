"""Read MIKASA-Robo datasets (:mod:`membench_envs.robo.collect`) as PyTorch sequences.

    from membench_envs.robo.dataset import EpisodeDataset
    data = EpisodeDataset("datasets/RememberColor3-v0.h5")             # one item per episode
    data = EpisodeDataset("datasets/RememberColor3-v0.h5", seq_len=16)  # every window of 16 steps (stride 16)
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)

An item is a dict of tensors over L steps (L = T for whole episodes, else ``seq_len``), observation t beside the
action chosen on it:

    rgb      (L, 128, 128, 6) uint8   base + wrist camera (``channels_first=True``: (L, 6, 128, 128))
    joints   (L, 25) float32
    oracle   (L, k)
    action   (L, 7) float32
    reward   (L,) float32
    success  (L,) bool
    done     (L,) bool

Only h5py, numpy and torch are needed (no ManiSkill). :func:`read_episode` gives one episode as numpy arrays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

#: item key -> (HDF5 path in traj_<i>, whether it is an observation: T+1 rows, the last one dropped)
FIELDS = {
    "rgb": ("obs/rgb", True),
    "joints": ("obs/joints", True),
    "oracle": ("obs/oracle", True),
    "action": ("actions", False),
    "reward": ("rewards", False),
    "success": ("success", False),
    "done": ("done", False),
}


def _index(h5_path: Path) -> dict[str, Any]:
    json_path = h5_path.with_suffix(".json")
    if not h5_path.is_file() or not json_path.is_file():
        raise FileNotFoundError(f"a dataset is a pair {h5_path.name} + {json_path.name}; "
                                f"{h5_path if not h5_path.is_file() else json_path} does not exist")
    try:
        index = json.loads(json_path.read_text())
        index["episodes"]  # noqa: B018
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{json_path} is not a dataset index ({e})") from None
    return index


def read_episode(h5_path: str | os.PathLike, i: int) -> dict[str, np.ndarray]:
    """Episode ``i`` as numpy arrays (keys of :data:`FIELDS`; observations without the final one)."""
    import h5py

    with h5py.File(h5_path, "r") as f:
        g = f[f"traj_{i}"]
        return {k: g[path][:-1] if is_obs else g[path][()] for k, (path, is_obs) in FIELDS.items()}


class EpisodeDataset(Dataset):
    """Whole episodes (``seq_len=None``) or windows of ``seq_len`` steps every ``stride`` steps (default
    ``seq_len``; windows never cross episodes, a shorter tail is dropped) of one dataset file, as torch tensors."""

    def __init__(self, path: str | os.PathLike, seq_len: int | None = None, stride: int | None = None,
                 keys: tuple[str, ...] = tuple(FIELDS), channels_first: bool = False):
        self.path = Path(path)
        unknown = sorted(set(keys) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown keys {unknown}; valid: {', '.join(FIELDS)}")
        for name, value in (("seq_len", seq_len), ("stride", stride)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        self.index = _index(self.path)
        self.keys, self.channels_first = tuple(keys), channels_first
        lengths = [int(e["elapsed_steps"]) for e in self.index["episodes"]]
        if seq_len is None:
            self.items = [(i, 0, n) for i, n in enumerate(lengths)]
        else:
            step = stride or seq_len
            self.items = [(i, s, seq_len) for i, n in enumerate(lengths) for s in range(0, n - seq_len + 1, step)]
        self._file = None

    @property
    def episodes(self) -> list[dict[str, Any]]:
        """The JSON index's episode records (seed, length, success, return)."""
        return self.index["episodes"]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, idx: int) -> dict[str, torch.Tensor]:
        import h5py

        if self._file is None:  # opened per process (DataLoader workers each open their own)
            self._file = h5py.File(self.path, "r")
        i, start, length = self.items[idx]
        g = self._file[f"traj_{i}"]
        out = {}
        for k in self.keys:
            path, _ = FIELDS[k]
            value = torch.from_numpy(np.ascontiguousarray(g[path][start:start + length]))
            if k == "rgb" and self.channels_first:
                value = value.permute(0, 3, 1, 2)
            out[k] = value
        return out

    def __getstate__(self) -> dict[str, Any]:  # an open HDF5 handle does not travel to DataLoader workers
        return {**self.__dict__, "_file": None}


__all__ = ["FIELDS", "EpisodeDataset", "read_episode"]
