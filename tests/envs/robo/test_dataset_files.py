"""The dataset loader checks the HDF5 + JSON pair when it opens it: one crafted file per case, each refused with one
:class:`DatasetError` (a ValueError naming the file) at open time, never a hang, wrong data or a raw h5py error at the
first item. Only h5py, numpy and torch: the pairs are written here in the collector's layout (small images)."""

from __future__ import annotations

import json
import time

import h5py
import numpy as np
import pytest
import torch
from membench_envs.robo.dataset import DatasetError, EpisodeDataset, read_episode

T = 4  # steps per crafted episode


def _episode(seed: int, k: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "obs/rgb": rng.integers(0, 255, (T + 1, 8, 8, 6), dtype=np.uint8),
        "obs/joints": rng.standard_normal((T + 1, 25)).astype(np.float32),
        "obs/oracle": np.full((T + 1, k), seed, dtype=np.int64),
        "actions": rng.standard_normal((T, 7)).astype(np.float32),
        "rewards": rng.random(T).astype(np.float32),
        "success": np.zeros(T, dtype=bool),
        "terminated": np.zeros(T, dtype=bool),
        "truncated": np.arange(T) == T - 1,
        "done": np.arange(T) == T - 1,
    }


def _pair(tmp_path, episodes: int = 2, lengths=None, write=None, name="Task-v0"):
    """A dataset pair in ``tmp_path``: ``episodes`` episodes of T steps; ``lengths`` overrides the index's
    elapsed_steps; ``write(f, i, key, value)`` replaces the writing of one array (return True when it wrote)."""
    h5_path = tmp_path / f"{name}.h5"
    with h5py.File(h5_path, "w") as f:
        for i in range(episodes):
            for key, value in _episode(i).items():
                if write is None or not write(f, i, key, value):
                    f.create_dataset(f"traj_{i}/{key}", data=value)
    lengths = [T] * episodes if lengths is None else lengths
    index = {
        "env_info": {"env_id": f"MIKASA/{name}"},
        "episodes": [{"episode_id": i, "episode_seed": i, "elapsed_steps": n} for i, n in enumerate(lengths)],
    }
    h5_path.with_suffix(".json").write_text(json.dumps(index))
    return h5_path


def _refused(path, match: str) -> None:
    for load in (lambda: EpisodeDataset(path), lambda: EpisodeDataset(path, seq_len=2), lambda: read_episode(path, 0)):
        with pytest.raises(DatasetError, match=match) as e:
            load()
        assert str(path.with_suffix("")) in str(e.value) and "\n" not in str(e.value)


def test_a_well_formed_pair_loads(tmp_path):
    path = _pair(tmp_path)
    data = EpisodeDataset(path)
    assert len(data) == 2 and data[1]["rgb"].shape == (T, 8, 8, 6) and data[1]["oracle"].dtype == torch.int64
    assert len(EpisodeDataset(path, seq_len=2)) == 4
    np.testing.assert_array_equal(read_episode(path, 1)["action"], _episode(1)["actions"])
    assert issubclass(DatasetError, ValueError)


def test_an_index_claiming_10_to_the_12_steps_is_an_error_not_a_hang(tmp_path):
    path = _pair(tmp_path, lengths=[T, 10**12])
    started = time.perf_counter()
    _refused(path, r"traj_1/obs/rgb has 5 rows, but the index gives episode 1 elapsed_steps=1000000000000")
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("bad", [-3, 0, 2.5, True, "4", None])
def test_a_negative_or_non_integer_length_is_an_error(tmp_path, bad):
    _refused(_pair(tmp_path, lengths=[T, bad]), rf"episode 1 has elapsed_steps={bad!r}; it must be an int >= 1")


def test_a_shorter_length_than_the_file_is_an_error(tmp_path):
    _refused(
        _pair(tmp_path, lengths=[T, T - 1]),
        r"traj_1/obs/rgb has 5 rows, but the index gives episode 1 "
        r"elapsed_steps=3 \(4 rows expected\)",
    )


@pytest.mark.parametrize("listed, held, match", [(3, 2, r"missing \['traj_2'\]"), (1, 2, r"unexpected \['traj_1'\]")])
def test_the_episode_count_must_match(tmp_path, listed, held, match):
    _refused(_pair(tmp_path, episodes=held, lengths=[T] * listed), r"does not match its index .*" + match)


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("obs/joints", np.zeros((T + 1, 24), np.float32), r"obs/joints has steps of shape \(24,\); expected \(25,\)"),
        ("rewards", np.zeros(T, np.float64), r"rewards is float64 of rank 1; expected float32 of rank 1"),
        ("obs/oracle", np.zeros((T + 1, 2), np.int64), r"traj_1/obs/oracle has steps of shape \(2,\), traj_0's have "),
        ("done", np.zeros((T, 1), bool), r"done is bool of rank 2; expected bool of rank 1"),
        ("actions", None, r"traj_1/actions is missing"),
    ],
)
def test_wrong_shapes_dtypes_and_missing_fields(tmp_path, key, value, match):
    def write(f, i, k, v):
        if i == 1 and k == key:
            if value is not None:
                f.create_dataset(f"traj_1/{k}", data=value)
            return True
        return False

    _refused(_pair(tmp_path, write=write), match)


def test_a_soft_link_is_refused(tmp_path):
    def write(f, i, k, v):
        if i == 1 and k == "actions":
            f["traj_1/actions"] = h5py.SoftLink("/traj_0/actions")
            return True
        return False

    _refused(_pair(tmp_path, write=write), r"traj_1/actions is a SoftLink; dataset files hold their data themselves")


def test_an_external_link_is_refused(tmp_path):
    other = tmp_path / "elsewhere.h5"
    with h5py.File(other, "w") as g:
        g["rgb"] = _episode(0)["obs/rgb"]

    def write(f, i, k, v):
        if i == 0 and k == "obs/rgb":
            f.require_group("traj_0/obs")["rgb"] = h5py.ExternalLink(str(other), "/rgb")
            return True
        return False

    _refused(_pair(tmp_path, write=write), r"traj_0/obs/rgb is a ExternalLink")


def test_external_raw_storage_is_refused(tmp_path):
    """A dataset whose bytes live in another local file: h5py would read that file as the rewards."""
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(T, dtype=np.float32).tobytes())

    def write(f, i, k, v):
        if i == 0 and k == "rewards":
            f.create_dataset("traj_0/rewards", shape=(T,), dtype=np.float32, external=[(str(secret), 0, 4 * T)])
            return True
        return False

    _refused(_pair(tmp_path, write=write), r"traj_0/rewards stores its data in external files .*secret.bin")


def test_a_virtual_dataset_is_refused(tmp_path):
    source = tmp_path / "source.h5"
    with h5py.File(source, "w") as g:
        g["r"] = np.ones(T, np.float32)

    def write(f, i, k, v):
        if i == 1 and k == "rewards":
            layout = h5py.VirtualLayout(shape=(T,), dtype=np.float32)
            layout[:] = h5py.VirtualSource(str(source), "r", shape=(T,))
            f.create_virtual_dataset("traj_1/rewards", layout)
            return True
        return False

    _refused(_pair(tmp_path, write=write), r"traj_1/rewards is a virtual dataset")


def test_a_filter_this_library_lacks_is_refused(tmp_path):
    """HDF5 filter 32004 (LZ4) is a plugin h5py does not ship: reading the data would fail at the first item."""

    def write(f, i, k, v):
        if i == 1 and k == "rewards":
            d = f.create_dataset(
                "traj_1/rewards",
                shape=(T,),
                dtype=np.float32,
                chunks=(T,),
                compression=32004,
                allow_unknown_filter=True,
            )
            d.id.write_direct_chunk((0,), v.tobytes())
            return True
        return False

    if h5py.h5z.filter_avail(32004):
        pytest.skip("this h5py has the LZ4 filter")
    _refused(_pair(tmp_path, write=write), r"traj_1/rewards needs HDF5 filter 32004, which this h5py lacks")


def test_a_truncated_file_is_refused_at_open(tmp_path):
    path = _pair(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _refused(path, r"is not a readable HDF5 file \(truncated, or another format\)")


def test_a_foreign_file_is_refused_at_open(tmp_path):
    path = _pair(tmp_path)
    path.write_bytes(b"not an HDF5 file at all\n" * 100)
    _refused(path, r"is not a readable HDF5 file")
    with h5py.File(path, "w") as f:  # an HDF5 file, but another layout
        f["data"] = np.zeros(3)
    _refused(path, r"does not match its index \(2 episodes\): missing \['traj_0', 'traj_1'\]; unexpected \['data'\]")


def test_a_broken_index_is_refused(tmp_path):
    path = _pair(tmp_path)
    json_path = path.with_suffix(".json")
    for text, match in (
        ("{", "is not a dataset index"),
        ('{"episodes": 3}', "'episodes' must be a list"),
        ('{"episodes": [4]}', "'episodes' must be a list of records"),
        ("[]", "is not a dataset"),
    ):
        json_path.write_text(text)
        with pytest.raises(DatasetError, match=match):
            EpisodeDataset(path)
