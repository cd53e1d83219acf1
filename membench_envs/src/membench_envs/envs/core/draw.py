"""Tiny numpy drawing for ``render_mode="rgb_array"`` frames (no image library needed).

A :class:`Canvas` is a uint8 (H, W, 3) array with a few primitives: filled rectangles, outlines, thick line
segments, filled discs and digits from a 3x5 bitmap font. Its size is rounded up to multiples of 16 pixels so
every video encoder accepts the frames (libx264's yuv420p needs even sizes; imageio prefers blocks of 16).

Conventions shared by the native and POPGym pictures: a dark background, light cells for what the agent
can see now, dim colours for hidden state, a progress bar of t / T along the bottom, and a frame border that
turns green (success) or red (failure) when the episode is over.
"""

from __future__ import annotations

import numpy as np

BACKGROUND = (24, 24, 32)
WALL = (60, 60, 72)
FLOOR = (200, 200, 200)
AGENT = (230, 60, 40)
GOOD = (40, 190, 80)
BAD = (210, 50, 50)
HIDDEN = (70, 90, 150)
HIGHLIGHT = (250, 210, 40)
TEXT = (20, 20, 20)
WHITE = (245, 245, 245)

#: Distinct colours for categorical values (card values, suits, arms), repeated past the end.
PALETTE = np.array(
    [
        (230, 25, 75),
        (60, 180, 75),
        (255, 225, 25),
        (0, 130, 200),
        (245, 130, 48),
        (145, 30, 180),
        (70, 240, 240),
        (240, 50, 230),
        (210, 245, 60),
        (250, 190, 212),
        (0, 128, 128),
        (220, 190, 255),
        (170, 110, 40),
        (255, 250, 200),
        (128, 0, 0),
        (170, 255, 195),
        (128, 128, 0),
        (255, 215, 180),
    ],
    dtype=np.uint8,
)

_FONT = {  # 3 wide x 5 high, rows top to bottom
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "001", "001", "001"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    "?": ("111", "001", "011", "000", "010"),
    "-": ("000", "000", "111", "000", "000"),
}
_GLYPHS = {c: np.array([[ch == "1" for ch in row] for row in rows]) for c, rows in _FONT.items()}


def palette(i: int) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in PALETTE[int(i) % len(PALETTE)])
    return r, g, b


def dim(color, factor: float = 0.45) -> tuple[int, int, int]:
    r, g, b = (int(c * factor) for c in color)
    return r, g, b


class Canvas:
    """An RGB uint8 image of at least ``height`` x ``width`` pixels (rounded up to multiples of 16)."""

    def __init__(self, height: int, width: int, background=BACKGROUND):
        height, width = int(height) + -int(height) % 16, int(width) + -int(width) % 16
        self.pixels = np.empty((height, width, 3), dtype=np.uint8)
        self.pixels[:] = background

    @property
    def height(self) -> int:
        return self.pixels.shape[0]

    @property
    def width(self) -> int:
        return self.pixels.shape[1]

    def rect(self, x0: float, y0: float, x1: float, y1: float, color) -> None:
        """Fill the pixels with x0 <= x < x1 and y0 <= y < y1 (clipped to the canvas)."""
        h, w = self.height, self.width
        xa, xb = max(int(round(x0)), 0), min(int(round(x1)), w)
        ya, yb = max(int(round(y0)), 0), min(int(round(y1)), h)
        if xa < xb and ya < yb:
            self.pixels[ya:yb, xa:xb] = color

    def outline(self, x0: float, y0: float, x1: float, y1: float, color, width: int = 2) -> None:
        self.rect(x0, y0, x1, y0 + width, color)
        self.rect(x0, y1 - width, x1, y1, color)
        self.rect(x0, y0, x0 + width, y1, color)
        self.rect(x1 - width, y0, x1, y1, color)

    def disc(self, cx: float, cy: float, r: float, color) -> None:
        ys, xs = np.ogrid[: self.height, : self.width]
        self.pixels[(xs + 0.5 - cx) ** 2 + (ys + 0.5 - cy) ** 2 <= r * r] = color

    def line(self, x0: float, y0: float, x1: float, y1: float, color, width: float = 2.0) -> None:
        """A segment of the given width (every pixel within width/2 of it)."""
        ys, xs = np.ogrid[: self.height, : self.width]
        px, py = xs + 0.5 - x0, ys + 0.5 - y0
        dx, dy = x1 - x0, y1 - y0
        length2 = dx * dx + dy * dy
        s = np.clip((px * dx + py * dy) / length2, 0.0, 1.0) if length2 > 0 else 0.0
        self.pixels[(px - s * dx) ** 2 + (py - s * dy) ** 2 <= (width / 2) ** 2] = color

    def text(self, x: float, y: float, s: str, color, scale: int = 2) -> None:
        """Digits (and ``?``, ``-``) in a 3x5 font, top-left corner at (x, y); each font pixel is scale x scale."""
        for k, ch in enumerate(s):
            glyph = _GLYPHS[ch]
            ox = x + k * 4 * scale
            for r, c in zip(*np.nonzero(glyph), strict=True):
                self.rect(ox + c * scale, y + r * scale, ox + (c + 1) * scale, y + (r + 1) * scale, color)

    def text_centered(self, cx: float, cy: float, s: str, color, scale: int = 2) -> None:
        w, h = (4 * len(s) - 1) * scale, 5 * scale
        self.text(cx - w / 2, cy - h / 2, s, color, scale)

    def progress(self, fraction: float, height: int = 6) -> None:
        """A bar along the bottom edge, filled to ``fraction`` (the episode's t / T)."""
        y0 = self.height - height
        self.rect(0, y0, self.width, self.height, WALL)
        self.rect(0, y0, self.width * min(max(float(fraction), 0.0), 1.0), self.height, WHITE)

    def border(self, done: bool, success: bool, width: int = 3) -> None:
        """A frame around the picture: green / red once the episode is over (success / failure), else none."""
        if done:
            self.outline(0, 0, self.width, self.height, GOOD if success else BAD, width)

    def image(self) -> np.ndarray:
        return self.pixels


def cell_size(n_cells: int, target_width: int = 480, low: int = 3, high: int = 32) -> int:
    """Pixels per cell so that ``n_cells`` cells span about ``target_width`` pixels (clamped to [low, high])."""
    return int(min(max(target_width // max(n_cells, 1), low), high))
