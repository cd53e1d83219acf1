"""What the Memory Gym tasks (Mortar Mayhem, Mystery Path) share: the authors' screen and agent sprite, pygame-ce
compatible rasterisation, the character controllers' movement and facing, batched sprite drawing, and the
seeding of the authors' generators.

Masks and sprites are (height, width) arrays indexed [y, x]; a task that returns pygame's x-major pictures
transposes them. The rasterisers reproduce pygame-ce 2.5's pixels (the tasks' tests compare them with
``memory_gym``'s).
"""

from __future__ import annotations

import math

import numpy as np

from membench_envs.envs.core import draw
from membench_envs.envs.core.native import BatchedCore, NativeEnv, NativeVectorEnv
from membench_envs.envs.core.params import check_seed

SCALE = 0.25  #: the authors' scale factor: every length is their 336-pixel value times SCALE
SCREEN = int(336 * SCALE)  #: 84: the observation is SCREEN x SCREEN x 3

AGENT_BODY_RGB = (250, 204, 153)
AGENT_HAND_RGB = (50, 50, 50)  # the hands' outline colour; at SCALE 0.25 the outline width is 0, i.e. filled
AGENT_RADIUS = int(25 * SCALE)  #: 6
AGENT_SPRITE = AGENT_RADIUS * 2 + int(10 * SCALE) + 14  #: 28: the sprite's square side, centred on the agent


# --- pygame-ce rasterisation on [y, x] bool masks ---------------------------------------------------------------
def _span(mask: np.ndarray, y: int, x0: int, x1: int) -> None:
    """Set mask[y, x0 … x1] (inclusive), clipped to the mask."""
    h, w = mask.shape
    if 0 <= y < h:
        a, b = max(x0, 0), min(x1, w - 1)
        if a <= b:
            mask[y, a : b + 1] = True


def _vspan(mask: np.ndarray, x: int, y0: int, y1: int) -> None:
    """Set mask[y0 … y1, x] (inclusive), clipped to the mask."""
    h, w = mask.shape
    if 0 <= x < w:
        a, b = max(y0, 0), min(y1, h - 1)
        if a <= b:
            mask[a : b + 1, x] = True


def filled_circle(mask: np.ndarray, cx: float, cy: float, radius: float) -> None:
    """pygame's ``draw.circle(..., width=0)``: the centre and radius truncated to ints, then the midpoint circle
    filled by horizontal spans (the disc spans columns cx − r … cx + r − 1 and rows cy − r … cy + r − 1)."""
    x0, y0, r = int(cx), int(cy), int(radius)
    if r < 1:
        return
    f, ddy, x, y = 1 - r, -2 * r, 0, r
    while x < y:
        if f >= 0:
            y -= 1
            ddy += 2
            f += ddy
        x += 1
        f += 2 * x + 1
        if f >= 0:
            _span(mask, y0 + y - 1, x0 - x, x0 + x - 1)
            _span(mask, y0 - y, x0 - x, x0 + x - 1)
        _span(mask, y0 + x - 1, x0 - y, x0 + y - 1)
        _span(mask, y0 - x, x0 - y, x0 + y - 1)


class _QuadrantWalk:
    """pygame's midpoint ellipse walk (here a circle of radius r) over a quadrant, from (0, r) down to y = 0:
    region 1 (``dx < dy``) moves right, then diagonally; region 2 moves down or diagonally."""

    def __init__(self, r: int):
        self.rr = r * r
        self.x, self.y, self.dx, self.dy = 0, r, 0, 2 * self.rr * r
        self.d1, self.d2 = self.rr * (1.25 - r), 0.0

    def right(self) -> None:
        """Region 1: step right while the midpoint is inside."""
        while self.d1 < 0:
            self.x += 1
            self.dx += 2 * self.rr
            self.d1 += self.dx + self.rr

    def _diagonal(self) -> float:
        """One step right and down; returns the decision variable's change."""
        self.x += 1
        self.y -= 1
        self.dx += 2 * self.rr
        self.dy -= 2 * self.rr
        return self.dx - self.dy + self.rr

    def down_right(self) -> None:
        """Region 1's diagonal step."""
        self.d1 += self._diagonal()

    def begin_region_2(self) -> None:
        self.d2 = self.rr * ((self.x + 0.5) ** 2 + (self.y - 1) ** 2 - self.rr)

    def step_region_2(self) -> None:
        if self.d2 > 0:
            self.y -= 1
            self.dy -= 2 * self.rr
            self.d2 += self.rr - self.dy
        else:
            self.d2 += self._diagonal()


def ring(mask: np.ndarray, cx: float, cy: float, radius: float, width: int) -> None:
    """pygame's ``draw.circle(..., width)`` for 1 < width < radius: an outer and an inner midpoint ellipse walk
    (radius − width + 1 inside), whose horizontal spans between them make the ring."""
    x0, y0, r = int(cx), int(cy), int(radius)
    ri = r - width + 1
    outer, inner = _QuadrantWalk(r), _QuadrantWalk(ri)

    def rows(solid: bool) -> None:
        x = outer.x
        for row in (y0 - outer.y, y0 + outer.y - 1):
            if solid:
                _span(mask, row, x0 - x, x0 + x - 1)
            else:
                _span(mask, row, x0 - x, x0 - inner.x)
                _span(mask, row, x0 + inner.x - 1, x0 + x - 1)

    solid = True  # the rows above the inner circle are full
    while outer.dx < outer.dy:
        outer.right()
        rows(solid)
        outer.down_right()
        solid = solid and outer.y >= ri
        if not solid:
            inner.right()
            inner.down_right()
    outer.begin_region_2()
    while outer.y >= 0:
        rows(solid)
        outer.step_region_2()
        solid = solid and outer.y >= ri
        if not solid:
            if inner.dx < inner.dy:
                inner.right()
                inner.down_right()
            else:
                if not inner.d2:
                    inner.begin_region_2()
                inner.step_region_2()


def thick_line(mask: np.ndarray, start, end, width: int) -> None:
    """pygame's ``draw.line(..., width)`` for width >= 2: a Bresenham walk from start to end (ends truncated to
    ints) drawing a span of ``width`` pixels across the line's minor direction at each step."""
    x1, y1 = int(start[0]), int(start[1])
    x2, y2 = int(end[0]), int(end[1])
    half, extra = width // 2, 1 - width % 2
    steep = abs(x1 - x2) <= abs(y1 - y2)  # the spans are horizontal
    if x1 == x2 and y1 == y2:
        _span(mask, y1, x1 - half + extra, x1 + half)
        return
    dx, dy = abs(x2 - x1), abs(y2 - y1)
    sx, sy = (1 if x2 > x1 else -1), (1 if y2 > y1 else -1)
    err = int((dx if dx > dy else -dy) / 2)  # C division truncates towards zero
    while (y1 != y2 + sy) if steep else (x1 != x2 + sx):
        if steep:
            _span(mask, y1, x1 - half + extra, x1 + half)
        else:
            _vspan(mask, x1, y1 - half + extra, y1 + half)
        e2 = err
        if e2 > -dx:
            err -= dy
            x1 += sx
        if e2 < dy:
            err += dx
            y1 += sy


def rotate(mask: np.ndarray, angle: float) -> np.ndarray:
    """pygame's ``transform.rotate`` (counter-clockwise, degrees): exact quarter turns for multiples of 90,
    else nearest-neighbour sampling in 16.16 fixed point into the rotated bounding box (pixels outside the
    source are background, i.e. False)."""
    angle = float(np.float32(angle))  # the authors' angle reaches pygame as a C float
    if math.fmod(angle, 90.0) == 0:
        return np.rot90(mask, int(angle / 90) % 4).copy()
    h, w = mask.shape
    rad = angle * 0.01745329251994329
    s, c = math.sin(rad), math.cos(rad)
    nw = int(max(abs(c * w + s * h), abs(c * w - s * h), abs(-c * w + s * h), abs(-c * w - s * h)))
    nh = int(max(abs(s * w + c * h), abs(s * w - c * h), abs(-s * w + c * h), abs(-s * w - c * h)))
    cy = nh // 2
    xd, yd = (w - nw) << 15, (h - nh) << 15
    isin, icos = int(s * 65536), int(c * 65536)
    ax = (nw << 15) - int(c * ((nw - 1) << 15))
    ay = (nh << 15) - int(s * ((nw - 1) << 15))
    xmax, ymax = (w << 16) - 1, (h << 16) - 1
    rows = np.arange(nh)[:, None]
    cols = np.arange(nw)[None, :]
    sx = ax + isin * (cy - rows) + xd + icos * cols
    sy = ay - icos * (cy - rows) + yd + isin * cols
    inside = (sx >= 0) & (sy >= 0) & (sx <= xmax) & (sy <= ymax)
    out = np.zeros((nh, nw), dtype=bool)
    out[inside] = mask[sy[inside] >> 16, sx[inside] >> 16]
    return out


def rotate_vector(x: float, y: float, degrees: float) -> tuple[float, float]:
    """pygame's ``Vector2.rotate``: exact for quarter turns, else cos/sin of the angle in radians mod 2π."""
    a = math.fmod(degrees * (math.pi / 180.0), 2 * math.pi)
    if a < 0:
        a += 2 * math.pi
    eps = 1e-6
    if math.fmod(a + eps, math.pi / 2) < 2 * eps:
        turns = int((a + eps) / (math.pi / 2)) % 4
        return ((x, y), (-y, x), (-x, -y), (y, -x))[turns]
    s, c = math.sin(a), math.cos(a)
    return c * x - s * y, s * x + c * y


def agent_sprites() -> tuple[np.ndarray, np.ndarray]:
    """The authors' agent at SCALE: a body disc and two hands, in 8 orientations. Returns (8, 28, 28) bool
    opacity and (8, 28, 28, 3) uint8 colours, [y, x]; index k faces k·45° counter-clockwise from up."""
    size = AGENT_SPRITE
    centre = size // 2
    hand_dx, hand_dy, hand_r = int(18 * SCALE), int(12 * SCALE), int(10 * SCALE)
    hands = ((centre - hand_dx, hand_dy + 7), (centre + hand_dx, hand_dy + 7))
    masks = np.zeros((8, size, size), dtype=bool)
    colours = np.zeros((8, size, size, 3), dtype=np.uint8)
    body = np.zeros((size, size), dtype=bool)
    filled_circle(body, centre, centre, AGENT_RADIUS)
    for k in range(8):
        hand = np.zeros((size, size), dtype=bool)
        for hx, hy in hands:  # the authors rotate the hands by 360 - 45 k degrees (pygame's y-down rotation)
            rx, ry = rotate_vector(hx - centre, hy - centre, 360 - 45 * k)
            filled_circle(hand, rx + centre, ry + centre, hand_r)
        colours[k][body] = AGENT_BODY_RGB
        colours[k][hand] = AGENT_HAND_RGB
        masks[k] = body | hand
    return masks, colours


# --- the character controllers: movement and facing -------------------------------------------------------------
#: Facing (45° steps counter-clockwise from up: 0 up, 2 left, 4 down, 6 right) of a move (dx, dy); a diagonal
#: move has its own.
FACING = {(0, -1): 0, (-1, -1): 1, (-1, 0): 2, (-1, 1): 3, (0, 1): 4, (1, 1): 5, (1, 0): 6, (1, -1): 7}
SPEED = 12 * SCALE  #: 3.0: pixels per step of the continuous movement
#: Continuous movement, per action h * 3 + v (h: 0 none, 1 left, 2 right; v: 0 none, 1 up, 2 down): the velocity
#: (pygame's ``normalize() * speed``: diagonals 3/√2 per axis), its int truncation (diagonals 2 pixels), and per
#: (facing, action) the new facing (kept without a move).
FREE_VELOCITY = np.zeros((9, 2), dtype=np.float64)
FREE_FACING = np.repeat(np.arange(8)[:, None], 9, axis=1)
for _h in range(3):
    for _v in range(3):
        _dx, _dy = (0, -1, 1)[_h], (0, -1, 1)[_v]
        if _dx or _dy:
            _norm = math.hypot(_dx, _dy)
            FREE_VELOCITY[_h * 3 + _v] = (_dx / _norm * SPEED, _dy / _norm * SPEED)
            FREE_FACING[:, _h * 3 + _v] = FACING[(_dx, _dy)]
FREE_STEP = np.trunc(FREE_VELOCITY).astype(np.int64)
#: Grid movement, per (facing, action 0 stay, 1 turn left, 2 turn right, 3 one tile forward): the new facing and
#: the tile step (forward: up for facing 0, left for 2, down for 4, right for 6).
GRID_FACING = np.stack([np.arange(8), (np.arange(8) + 2) % 8, (np.arange(8) - 2) % 8, np.arange(8)], axis=1)
GRID_STEP = np.zeros((8, 4, 2), dtype=np.int64)
GRID_STEP[[0, 2, 4, 6], 3] = [(0, -1), (-1, 0), (0, 1), (1, 0)]


def tile_centre(tile, tile_size: int, left: int = 0):
    """The centre pixel of tile(s) ``tile`` (x, y) on a board whose first pixel is ``left``."""
    return left + np.asarray(tile) * tile_size + tile_size // 2


def pixel_tile(position, tile_size: int, left: int = 0):
    """The tile(s) under pixel(s) ``position`` (x, y) on a board whose first pixel is ``left`` (may be off it)."""
    return (np.asarray(position) - left) // tile_size


# --- batched sprite drawing -------------------------------------------------------------------------------------
def flat_canvas(m: int, size: int = SCREEN) -> tuple[np.ndarray, np.ndarray]:
    """m black size x size RGB pictures, flat, with one spare pixel each for what is drawn off the picture:
    returns (flat (m, size² + 1, 3), pictures (m, size, size, 3)), the latter a view of the former."""
    flat = np.zeros((m, size * size + 1, 3), dtype=np.uint8)
    return flat, flat[:, :-1].reshape(m, size, size, 3)


def flat_index(a: np.ndarray, b: np.ndarray, size: int = SCREEN) -> np.ndarray:
    """The flat pixel index of [a, b] on a size x size picture; off-picture pixels map to the spare index size²."""
    inside = (a >= 0) & (a < size) & (b >= 0) & (b < size)
    return np.where(inside, a * size + b, size * size)


class Sprites:
    """Sprites as pixel lists, to draw one sprite on each picture of a batch with one fancy-indexed write.

    ``masks`` (K, D, D) bool and ``colours`` (K, D, D, 3) or one RGB triple, in the pictures' axis order; each
    sprite's pixels are offsets from its corner, padded to the longest sprite by repeating its first pixel."""

    def __init__(self, masks: np.ndarray, colours):
        masks = np.asarray(masks, dtype=bool)
        k, d = masks.shape[:2]
        colours = np.broadcast_to(np.asarray(colours, dtype=np.uint8), (k, d, d, 3))
        count = int(masks.reshape(k, -1).sum(axis=1).max())
        self.offsets = np.zeros((2, k, count), dtype=np.int64)
        self.colours = np.zeros((k, count, 3), dtype=np.uint8)
        for i in range(k):
            a, b = np.nonzero(masks[i])
            pad = np.concatenate([np.arange(a.size), np.zeros(count - a.size, dtype=np.int64)])
            self.offsets[:, i] = a[pad], b[pad]
            self.colours[i] = colours[i][a[pad], b[pad]]

    def draw(
        self,
        flat: np.ndarray,
        which: np.ndarray,
        corner: np.ndarray,
        images: np.ndarray | None = None,
        size: int = SCREEN,
    ) -> None:
        """Draw sprite ``which[j]`` with its corner at ``corner[j]`` (pictures' axis order) on picture
        ``images[j]`` (default j) of ``flat`` (m, size² + 1, 3), see :func:`flat_canvas`; in place."""
        images = np.arange(len(which)) if images is None else images
        index = flat_index(
            corner[:, 0, None] + self.offsets[0, which], corner[:, 1, None] + self.offsets[1, which], size
        )
        flat[images[:, None], index] = self.colours[which]


# --- seeding: the authors' generators -----------------------------------------------------------------------------
class MemoryGymCore(BatchedCore):
    """A core whose environment i draws from its own ``numpy.random.Generator`` as the authors' env draws from
    ``np_random``: reset with seed s, it is ``default_rng(s)``; reset without a seed the first time, it is
    seeded from the environment's key; later episodes continue it."""

    def __init__(self, num_envs: int):
        super().__init__(num_envs)
        self.rngs: list[np.random.Generator | None] = [None] * num_envs
        self.pending_seeds: list[int | None] = [None] * num_envs  # set by the envs' reset(seed=...)

    def generator(self, i: int) -> np.random.Generator:
        """Environment i's generator for the episode that starts now."""
        rng = self.rngs[i]
        if self.episode[i] == 0 or rng is None:  # a new seed
            seed = self.pending_seeds[i]
            rng = self.rngs[i] = np.random.default_rng(int(self.keys[i]) if seed is None else seed)
        return rng

    def episode_generator(self, i: int) -> np.random.Generator:
        """Environment i's generator of the running episode (:meth:`generator` made it when the episode started)."""
        rng = self.rngs[i]
        assert rng is not None, "generator(i) starts every episode"
        return rng


class MemoryGymEnv(NativeEnv):
    """A single environment of a :class:`MemoryGymCore`: ``reset(seed=s)`` seeds the authors' generator."""

    def reset(self, *, seed=None, options=None):
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        self.core.pending_seeds[0] = seed
        return super().reset(seed=seed, options=options)


class MemoryGymVectorEnv(NativeVectorEnv):
    """N environments of a :class:`MemoryGymCore`: as gymnasium's SyncVectorEnv, seed s gives environment i
    the seed s + i."""

    def reset(self, *, seed=None, options=None):
        n = self.num_envs
        seeds: list[int | None] = [None] * n
        if isinstance(seed, (list, tuple)) and len(seed) == n:  # (a wrong length: the base class's error)
            seeds = [s if isinstance(s, (int, np.integer)) and not isinstance(s, bool) else None for s in seed]
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            seeds = [int(seed) + i for i in range(n)]
        self.core.pending_seeds[:] = seeds
        return super().reset(seed=seed, options=options)


RENDER_SCALE, RENDER_MARGIN = 4, 8  #: render_rgb: the 84 px screen at 4x (the authors' 336 px view), an 8 px frame


def framed_view(
    picture: np.ndarray, progress: float, done: bool, success: bool, caption: str | None = None
) -> np.ndarray:
    """``render_rgb``'s frame around an upright (84, 84, 3) [y, x] picture: scaled 4x, ``caption`` (if any) under
    it, ``progress`` (0-1) along the bottom and the outcome border."""
    scale, m = RENDER_SCALE, RENDER_MARGIN
    size = SCREEN * scale
    canvas = draw.Canvas(size + 2 * m + (24 if caption is not None else 8), size + 2 * m)
    canvas.pixels[m : m + size, m : m + size] = picture.repeat(scale, axis=0).repeat(scale, axis=1)
    if caption is not None:
        canvas.text(m, m + size + 4, caption, draw.WHITE, 2)
    canvas.progress(progress)
    canvas.border(done, success)
    return canvas.image()
