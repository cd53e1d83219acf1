"""Observation encoders: vector, image, one-hot and (nested) dict spaces; clear errors for the rest."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_agents.nets.encoders import CNNEncoder, DictEncoder, OneHotEncoder, VectorEncoder, make_encoder


def _sample_batch(space: gym.Space, lead: tuple[int, ...], seed: int = 0):
    space.seed(seed)
    n = int(np.prod(lead))
    samples = [space.sample() for _ in range(n)]
    if isinstance(space, gym.spaces.Dict):
        return {k: _stack([s[k] for s in samples], space[k], lead) for k in space.spaces}
    return _stack(samples, space, lead)


def _stack(samples, space, lead):
    if isinstance(space, gym.spaces.Dict):
        return {k: _stack([s[k] for s in samples], space[k], lead) for k in space.spaces}
    arr = np.stack([np.asarray(s) for s in samples])
    return torch.as_tensor(arr).reshape(*lead, *arr.shape[1:])


def test_vector_box_mlp_and_identity():
    space = gym.spaces.Box(-1, 1, (7,), np.float32)
    enc = make_encoder(space, hidden_size=32)
    assert isinstance(enc, VectorEncoder) and enc.out_dim == 32
    out = enc(_sample_batch(space, (3, 5)))
    assert out.shape == (3, 5, 32) and torch.isfinite(out).all()
    ident = make_encoder(space, hidden_size=0)
    assert ident.out_dim == 7
    x = _sample_batch(space, (4,))
    torch.testing.assert_close(ident(x), x)
    # float64 and integer vectors are accepted (converted to float32)
    enc64 = make_encoder(gym.spaces.Box(-1, 1, (3,), np.float64))
    assert enc64(torch.zeros(2, 3, dtype=torch.float64)).dtype == torch.float32


def test_matrix_box_is_flattened():
    space = gym.spaces.Box(-1, 1, (3, 4), np.float32)  # rank 2: not an image
    enc = make_encoder(space, hidden_size=0)
    assert enc.out_dim == 12
    assert enc(torch.zeros(2, 6, 3, 4)).shape == (2, 6, 12)
    # a small rank-3 board that is not an image (POBAX's Battleship 3 state) is flattened too, in row-major order
    board = make_encoder(gym.spaces.Box(-1, 1, (2, 3, 3), np.float32), hidden_size=0)
    x = torch.arange(36.0).reshape(2, 2, 3, 3)
    torch.testing.assert_close(board(x), x.reshape(2, 18))


@pytest.mark.parametrize("shape", [(64, 64, 3), (7, 7, 3), (48, 40, 6)])
def test_image_cnn(shape):
    space = gym.spaces.Box(0, 255, shape, np.uint8)
    enc = make_encoder(space)
    assert isinstance(enc, CNNEncoder)
    x = _sample_batch(space, (2, 3))
    out = enc(x)
    assert out.shape == (2, 3, enc.out_dim) and torch.isfinite(out).all()
    # uint8 pixels are scaled by 1/255: the same image as floats in [0, 1] through the conv stack agrees
    flat = x.reshape(-1, *shape).float().permute(0, 3, 1, 2) / 255.0
    torch.testing.assert_close(enc.fc(enc.convs(flat)).reshape(2, 3, -1), out)


def test_channel_first_image():
    space = gym.spaces.Box(0, 255, (3, 32, 32), np.uint8)
    enc = make_encoder(space)
    assert isinstance(enc, CNNEncoder) and enc.layout == "chw"
    assert enc(_sample_batch(space, (4,))).shape == (4, enc.out_dim)


def test_dict_rgb_and_joints_and_nested():
    space = gym.spaces.Dict(
        {
            "rgb": gym.spaces.Box(0, 255, (40, 40, 3), np.uint8),
            "joints": gym.spaces.Box(-3, 3, (9,), np.float32),
            "extra": gym.spaces.Dict({"phase": gym.spaces.Discrete(3), "bits": gym.spaces.MultiBinary(2)}),
        }
    )
    enc = make_encoder(space, hidden_size=0)
    assert isinstance(enc, DictEncoder)
    rgb_dim = enc.encoders["k_rgb"].out_dim
    assert enc.out_dim == rgb_dim + 9 + 3 + 2
    batch = _sample_batch(space, (2, 3))
    out = enc(batch)
    assert out.shape == (2, 3, enc.out_dim) and torch.isfinite(out).all()
    # the joints pass through unchanged (hidden_size=0), at their place in the key order
    offset = sum(enc.encoders[f"k_{k}"].out_dim for k in enc.keys[: enc.keys.index("joints")])
    torch.testing.assert_close(out[..., offset : offset + 9], batch["joints"])


def test_discrete_and_multidiscrete_are_one_hot():
    enc = make_encoder(gym.spaces.Discrete(4, start=1), hidden_size=0)
    assert isinstance(enc, OneHotEncoder) and enc.out_dim == 4
    torch.testing.assert_close(enc(torch.tensor([1, 4])), torch.tensor([[1.0, 0, 0, 0], [0, 0, 0, 1.0]]))
    md = make_encoder(gym.spaces.MultiDiscrete([2, 3]), hidden_size=0)
    assert md.out_dim == 5
    torch.testing.assert_close(md(torch.tensor([[1, 2]])), torch.tensor([[0.0, 1, 0, 0, 1]]))
    # a grid of cells (MIKASA-Base's MysteryPath and Searing Spotlights oracles): one code per cell, row-major
    grid = make_encoder(gym.spaces.MultiDiscrete([[2, 3], [2, 2]]), hidden_size=0)
    assert grid.out_dim == 9
    want = torch.tensor([[0.0, 1, 1, 0, 0, 1, 0, 0, 1]] * 3).reshape(3, 1, 9)
    torch.testing.assert_close(grid(torch.tensor([[[1, 0], [0, 1]]] * 3).reshape(3, 1, 2, 2)), want)


def test_encoders_run_on_tensors_of_any_device_without_numpy(monkeypatch):
    """Every kind of encoder (vector MLP, CNN, one-hot, nested dict) maps tensors to tensors on their device
    without a detour through numpy: converting a tensor to numpy (or a list) is an error during the call."""
    space = gym.spaces.Dict(
        {
            "joints": gym.spaces.Box(-1, 1, (3,), np.float32),
            "rgb": gym.spaces.Box(0, 255, (12, 12, 3), np.uint8),
            "extra": gym.spaces.Dict(
                {"phase": gym.spaces.Discrete(3, start=1), "bits": gym.spaces.MultiDiscrete([2, 4])}
            ),
        }
    )
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    enc = make_encoder(space, hidden_size=8).to(dev)
    batch = {
        "joints": torch.zeros(2, 5, 3),
        "rgb": torch.full((2, 5, 12, 12, 3), 7, dtype=torch.uint8),
        "extra": {"phase": torch.full((2, 5), 3), "bits": torch.tensor([1, 3]).expand(2, 5, 2)},
    }
    batch = {
        k: ({kk: vv.to(dev) for kk, vv in v.items()} if isinstance(v, dict) else v.to(dev)) for k, v in batch.items()
    }

    def no_numpy(*args, **kwargs):
        raise AssertionError("an encoder converted a tensor to numpy")

    for name in ("numpy", "__array__", "tolist", "item"):
        monkeypatch.setattr(torch.Tensor, name, no_numpy)
    with pytest.raises(AssertionError, match="converted a tensor to numpy"):
        torch.zeros(1).numpy()  # the guard is active
    out = enc(batch)
    monkeypatch.undo()
    assert out.device.type == dev and out.shape == (2, 5, enc.out_dim) and torch.isfinite(out).all()


@pytest.mark.parametrize(
    "space, named, why",
    [
        (gym.spaces.Text(5), "Text", "text observations have no encoder"),
        (gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(3))), "Tuple", "Tuple observations"),
        (gym.spaces.Box(0, 1, (2, 3, 4, 5), np.float32), "Box", "a Box of rank 4"),
        (gym.spaces.Box(0, 1, (30, 30, 30), np.float32), "Box", "at most 16 channels"),
        (gym.spaces.Sequence(gym.spaces.Discrete(2)), "Sequence", "variable-length Sequence"),
        # inside a Dict: the offending entry (a Text) and where it is
        (
            gym.spaces.Dict({"ok": gym.spaces.Discrete(2), "bad": gym.spaces.Text(3)}),
            "Text",
            r"at observation\['bad'\]: text observations have no encoder",
        ),
    ],
)
def test_unsupported_spaces_say_which_and_why(space, named, why):
    with pytest.raises(ValueError, match=f"^unsupported observation space {named}\\(.*{why}") as info:
        make_encoder(space)
    assert str(info.value).startswith(f"unsupported observation space {named}(")
