"""RememberShape3/5/9 (paper App. K.3, Table 1): memorise the shape of an object, then touch the object of that shape.

Object memory, T = 60. All objects share one colour (blue by default), so only the shape identifies the target.
Shapes, in the paper's order: cube, sphere, cylinder, cross, torus, star, pyramid, t-shape, crescent (the first
``shapes`` are used; built from primitives, see :mod:`membench_envs.robo.shapes`). Oracle ``true_shape_indices``
(k = 1). Kwargs / class constants (App. M, Code 16): ``shapes`` / ``SHAPES`` (1-9), ``shape_scale`` / ``SHAPE_SCALE``
(0.02), ``color`` / ``COLOR`` (RGBA 0-255, [0, 0, 255, 255]), ``time_offset``, ``delta_time``, ``goal_thresh``,
``episode_steps``. Phases, success and reward: :mod:`membench_envs.robo._remember`.
"""

from __future__ import annotations

from typing import ClassVar

from membench_envs.catalogue.robo import REMEMBER_SHAPE
from membench_envs.robo._remember import Item, RememberBaseEnv
from membench_envs.robo.shapes import SHAPE_NAMES

SHAPE_LABELS = ("cube", "sphere", "cylinder", "cross", "torus", "star", "pyramid", "t-shape", "crescent")


class RememberShapeEnv(RememberBaseEnv):
    """N objects of distinct shapes and one colour (``shapes`` = N, 1-9)."""

    ORACLE_KEYS = ("true_shape_indices",)
    SHAPES: ClassVar[int] = REMEMBER_SHAPE.defaults["shapes"]
    SHAPE_SCALE: ClassVar[float] = REMEMBER_SHAPE.defaults["shape_scale"]
    COLOR: ClassVar[tuple[int, int, int, int]] = REMEMBER_SHAPE.defaults["color"]

    def __init__(self, *args, shapes: int | None = None, shape_scale: float | None = None, color=None, **kwargs):
        self.n_shapes = int(self.SHAPES if shapes is None else shapes)
        if not 1 <= self.n_shapes <= len(SHAPE_NAMES):
            raise ValueError(f"shapes must be in 1..{len(SHAPE_NAMES)}, got {self.n_shapes}")
        self.shape_scale = float(self.SHAPE_SCALE if shape_scale is None else shape_scale)
        if not self.shape_scale > 0:
            raise ValueError(f"shape_scale must be > 0, got {self.shape_scale}")
        rgba = list(self.COLOR if color is None else color)
        if len(rgba) == 3:
            rgba.append(255)
        if len(rgba) != 4 or not all(0 <= c <= 255 for c in rgba):
            raise ValueError(f"color must be RGB(A) in 0..255, got {color}")
        self.color = tuple(int(c) for c in rgba)
        super().__init__(*args, **kwargs)

    @property
    def scale(self) -> float:
        return self.shape_scale

    def make_items(self) -> list[Item]:
        rgba = tuple(c / 255 for c in self.color)
        return [Item(SHAPE_NAMES[i], rgba, SHAPE_LABELS[i], (i,)) for i in range(self.n_shapes)]

    def oracle_bounds(self):
        return [0], [self.n_shapes - 1]
