"""The usual Atari observation preprocessing, in numpy: grey-scale and a square area-average resize.

``grayscale``: ITU-R BT.601 luma, ``0.299 R + 0.587 G + 0.114 B`` rounded (what OpenCV's ``COLOR_RGB2GRAY`` computes).
``screen_size=n``: an area-average ("INTER_AREA") resize of the 210x160 screen to n x n: each output pixel is the
mean of the input area it covers, as two matrix products. Frame skip and max-pooling are the env's
(``frame_skip``, ``max_pool``); there is no frame stack (memory agents see one observation per step).
"""

from __future__ import annotations

import numpy as np

LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """The (n_out, n_in) matrix whose row j averages the input interval [j·n_in/n_out, (j+1)·n_in/n_out)."""
    scale = n_in / n_out
    edges = np.arange(n_out + 1) * scale
    lo, hi = edges[:-1, None], edges[1:, None]
    px = np.arange(n_in)[None, :]
    overlap = np.clip(np.minimum(hi, px + 1) - np.maximum(lo, px), 0.0, None)
    return (overlap / scale).astype(np.float32)


class Preprocess:
    """Maps a uint8 (210, 160, 3) frame to uint8 (n, n, 1 or 3), or (210, 160, 1) for grey-scale alone."""

    def __init__(self, height: int, width: int, grayscale: bool, screen_size: int | None):
        self.grayscale, self.screen_size = grayscale, screen_size
        channels = 1 if grayscale else 3
        self.shape = (screen_size, screen_size, channels) if screen_size else (height, width, channels)
        if screen_size:
            self.wy = area_weights(height, screen_size)
            self.wx_t = area_weights(width, screen_size).T.copy()

    @property
    def identity(self) -> bool:
        return not self.grayscale and not self.screen_size

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        if self.identity:
            return frame
        x = frame.astype(np.float32)
        if self.grayscale:
            x = x @ LUMA  # (H, W)
            if self.screen_size:
                x = self.wy @ x @ self.wx_t
            return np.rint(x).astype(np.uint8)[..., None]
        x = np.einsum("kh,hwc->kwc", self.wy, x)
        x = np.einsum("kwc,wj->kjc", x, self.wx_t)
        return np.rint(x).astype(np.uint8)
