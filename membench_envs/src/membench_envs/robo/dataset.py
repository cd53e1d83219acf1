"""Read MIKASA-Robo datasets (:mod:`membench_envs.robo.collect`) as PyTorch sequences.

    from membench_envs.robo.dataset import EpisodeDataset
    data = EpisodeDataset("datasets/RememberColor3-v0.h5")             # one item per episode
    data = EpisodeDataset("datasets/RememberColor3-v0.h5", seq_len=16)  # every window of 16 steps (stride 16)
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)

An item is a dict of tensors over L steps (L = T for whole episodes, else ``seq_len``), observation t beside the
action chosen on it:

    rgb      (L, 128, 128, 6) uint8   base + wrist camera (``channels_first=True``: (L, 6, 128, 128))
    joints   (L, 25) float32
    oracle   (L, k)                   int64 or float32
    action   (L, 7) float32
    reward   (L,) float32
    success  (L,) bool
    done     (L,) bool

Only h5py, numpy and torch are needed (no ManiSkill). :func:`read_episode` gives one episode as numpy arrays.

**Checked when the files are opened**, so that a bad pair is one :class:`DatasetError` (a ``ValueError`` naming the
file) at once, never a hang, wrong data or a raw h5py error at the first item: the HDF5 file opens (not truncated,
not some other format); it holds exactly the groups ``traj_0`` … ``traj_<n-1>`` of the index's n episodes; each
episode's ``elapsed_steps`` in the index is an int ≥ 1 equal to its HDF5 length (T rows of ``actions``, T + 1 of
each observation); every field has its documented dtype and rank, and the same per-step shape in every episode;
and every object read is stored inside the file: soft and external links, external storage (raw data in another
file) and virtual datasets are refused, as are filters this HDF5 library lacks.
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
#: item key -> (allowed dtypes, rank, fixed per-step shape or None); the per-step shape must agree across episodes
LAYOUT: dict[str, tuple[tuple[str, ...], int, tuple[int, ...] | None]] = {
    "rgb": (("uint8",), 4, None),
    "joints": (("float32",), 2, (25,)),
    "oracle": (("int64", "float32"), 2, None),
    "action": (("float32",), 2, None),
    "reward": (("float32",), 1, ()),
    "success": (("bool",), 1, ()),
    "done": (("bool",), 1, ()),
}


class DatasetError(ValueError):
    """A dataset file pair that cannot be read as documented (the message names the file and what is wrong)."""


def _index(h5_path: Path) -> dict[str, Any]:
    json_path = h5_path.with_suffix(".json")
    if not h5_path.is_file() or not json_path.is_file():
        raise FileNotFoundError(
            f"a dataset is a pair {h5_path.name} + {json_path.name}; "
            f"{h5_path if not h5_path.is_file() else json_path} does not exist"
        )
    try:
        index = json.loads(json_path.read_text())
        episodes = index["episodes"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise DatasetError(f"{json_path} is not a dataset index ({type(e).__name__}: {e})") from None
    if not isinstance(episodes, list) or not all(isinstance(e, dict) for e in episodes):
        raise DatasetError(f"{json_path} is not a dataset index: 'episodes' must be a list of records")
    return index


def _lengths(json_path: Path, episodes: list[dict[str, Any]]) -> list[int]:
    out = []
    for i, e in enumerate(episodes):
        n = e.get("elapsed_steps")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise DatasetError(f"{json_path}: episode {i} has elapsed_steps={n!r}; it must be an int >= 1")
        out.append(n)
    return out


def _inside(h5_path: Path, group, path: str) -> Any:
    """``group[path]``, each step of the path a hard link to an object stored in this file (no soft or external
    link, no external raw storage, no virtual dataset, no filter this library lacks)."""
    import h5py

    node = group
    for part in path.split("/"):
        link = node.get(part, getlink=True)
        where = f"{h5_path}: {node.name.rstrip('/')}/{part}"
        if link is None:
            raise DatasetError(f"{where} is missing: not a membench dataset file")
        if not isinstance(link, h5py.HardLink):
            raise DatasetError(
                f"{where} is a {type(link).__name__}; dataset files hold their data themselves (links are refused)"
            )
        node = node[part]
    if isinstance(node, h5py.Dataset):
        if node.is_virtual:
            raise DatasetError(f"{h5_path}: {node.name} is a virtual dataset (its data lives in other files); refused")
        if node.external:
            raise DatasetError(
                f"{h5_path}: {node.name} stores its data in external files "
                f"{[str(name) for name, *_ in node.external]}; refused"
            )
        plist = node.id.get_create_plist()
        for k in range(plist.get_nfilters()):
            code = plist.get_filter(k)[0]
            if not h5py.h5z.filter_avail(code):
                raise DatasetError(f"{h5_path}: {node.name} needs HDF5 filter {code}, which this h5py lacks")
    return node


def _check_file(h5_path: Path, lengths: list[int]) -> None:
    """Match the HDF5 file against the index's episode lengths (see the module docstring)."""
    import h5py

    try:
        f = h5py.File(h5_path, "r")
    except OSError as e:
        raise DatasetError(f"{h5_path} is not a readable HDF5 file (truncated, or another format): {e}") from None
    with f:
        names = set(f.keys())
        expected = {f"traj_{i}" for i in range(len(lengths))}
        if names != expected:
            extra, missing = sorted(names - expected), sorted(expected - names)
            raise DatasetError(
                f"{h5_path} does not match its index ({len(lengths)} episodes): "
                + "; ".join(
                    s
                    for s in (f"missing {missing[:5]}" if missing else "", f"unexpected {extra[:5]}" if extra else "")
                    if s
                )
            )
        steps: dict[str, tuple[int, ...]] = {}
        for i, n in enumerate(lengths):
            g = _inside(h5_path, f, f"traj_{i}")
            if not isinstance(g, h5py.Group):
                raise DatasetError(f"{h5_path}: traj_{i} is not a group: not a membench dataset file")
            for key, (path, is_obs) in FIELDS.items():
                d = _inside(h5_path, g, path)
                where = f"{h5_path}: traj_{i}/{path}"
                if not isinstance(d, h5py.Dataset):
                    raise DatasetError(f"{where} is not a dataset")
                dtypes, rank, fixed = LAYOUT[key]
                if d.dtype.name not in dtypes or d.ndim != rank:
                    raise DatasetError(
                        f"{where} is {d.dtype.name} of rank {d.ndim}; expected {' or '.join(dtypes)} of rank {rank}"
                    )
                rows = n + 1 if is_obs else n
                if d.shape[0] != rows:
                    raise DatasetError(
                        f"{where} has {d.shape[0]} rows, but the index gives episode {i} "
                        f"elapsed_steps={n} ({rows} rows expected)"
                    )
                per_step = tuple(d.shape[1:])
                if fixed is not None and per_step != fixed:
                    raise DatasetError(f"{where} has steps of shape {per_step}; expected {fixed}")
                if steps.setdefault(key, per_step) != per_step:
                    raise DatasetError(f"{where} has steps of shape {per_step}, traj_0's have {steps[key]}")


def open_index(path: str | os.PathLike) -> tuple[dict[str, Any], list[int]]:
    """The JSON index of the dataset ``path`` (the ``.h5`` file) and its episode lengths, after checking the pair
    (see the module docstring); :class:`DatasetError` if they do not match."""
    h5_path = Path(path)
    index = _index(h5_path)
    lengths = _lengths(h5_path.with_suffix(".json"), index["episodes"])
    _check_file(h5_path, lengths)
    return index, lengths


def read_episode(h5_path: str | os.PathLike, i: int) -> dict[str, np.ndarray]:
    """Episode ``i`` as numpy arrays (keys of :data:`FIELDS`; observations without the final one); the pair is
    checked first (:func:`open_index`)."""
    import h5py

    _, lengths = open_index(h5_path)
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(lengths):
        raise IndexError(f"episode {i!r} is out of range: {h5_path} holds {len(lengths)} episodes")
    with h5py.File(h5_path, "r") as f:
        g = f[f"traj_{int(i)}"]
        return {k: g[path][:-1] if is_obs else g[path][()] for k, (path, is_obs) in FIELDS.items()}


class EpisodeDataset(Dataset):
    """Whole episodes (``seq_len=None``) or windows of ``seq_len`` steps every ``stride`` steps (default
    ``seq_len``; windows never cross episodes, a shorter tail is dropped) of one dataset file, as torch tensors.
    The file pair is checked when the dataset is made (:class:`DatasetError`, see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike,
        seq_len: int | None = None,
        stride: int | None = None,
        keys: tuple[str, ...] = tuple(FIELDS),
        channels_first: bool = False,
    ):
        self.path = Path(path)
        unknown = sorted(set(keys) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown keys {unknown}; valid: {', '.join(FIELDS)}")
        for name, value in (("seq_len", seq_len), ("stride", stride)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f"{name} must be an int >= 1 (or None), got {value!r}")
        self.index, lengths = open_index(self.path)
        self.keys, self.channels_first = tuple(keys), channels_first
        if seq_len is None:
            self.items = [(i, 0, n) for i, n in enumerate(lengths)]
        else:
            step = stride or seq_len
            self.items = [(i, s, seq_len) for i, n in enumerate(lengths) for s in range(0, n - seq_len + 1, step)]
        self._file: Any = None  # an h5py.File once opened

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
            value = torch.from_numpy(np.ascontiguousarray(g[path][start : start + length]))
            if k == "rgb" and self.channels_first:
                value = value.permute(0, 3, 1, 2)
            out[k] = value
        return out

    def __getstate__(self) -> dict[str, Any]:  # an open HDF5 handle does not travel to DataLoader workers
        return {**self.__dict__, "_file": None}


__all__ = ["FIELDS", "LAYOUT", "DatasetError", "EpisodeDataset", "open_index", "read_episode"]
