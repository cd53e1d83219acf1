"""RememberShape3/5/9 (paper App. K.3, Table 1): memorise the shape of an object, then touch the object of that shape.

Object memory, T = 60. All objects share one colour (blue by default), so only the shape identifies the target.
Shapes, in the paper's order: cube, sphere, cylinder, cross, torus, star, pyramid, t-shape, crescent (the first
``shapes`` are used; built from primitives, see :mod:`membench_envs.robo.shapes`). Oracle ``true_shape_indices``
(k = 1). Kwargs / class constants (App. M, Code 16): ``shapes`` / ``SHAPES`` (1-9), ``shape_scale`` / ``SHAPE_SCALE``
(0.02), ``color`` / ``COLOR`` (RGBA 0-255, [0, 0, 255, 255]), ``time_offset``, ``delta_time``, ``goal_thresh``,
``episode_steps``. Phases, success and reward: :mod:`membench_envs.robo._remember`.
"""

from __future__ import annotations

from membench_envs.robo._remember import Item, RememberBaseEnv
from membench_envs.robo.shapes import SHAPE_NAMES

SHAPE_LABELS = ("cube", "sphere", "cylinder", "cross", "torus", "star", "pyramid", "t-shape", "crescent")


class RememberShapeEnv(RememberBaseEnv):
    """N objects of distinct shapes and one colour (``shapes`` = N, 1-9)."""

    def __init__(self, *args, shapes: int | None = None, shape_scale: float | None = None, color=None, **kwargs):
        self.n_shapes = self.knob("shapes", shapes)  # 1..len(SHAPE_NAMES): the catalogue's bound
        self.shape_scale = float(self.knob("shape_scale", shape_scale))
        rgba = self.knob("color", color)  # RGB or RGBA, 0..255
        self.color = tuple(rgba) if len(rgba) == 4 else (*rgba, 255)
        super().__init__(*args, **kwargs)

    @property
    def scale(self) -> float:
        return self.shape_scale

    def make_items(self) -> list[Item]:
        rgba = tuple(c / 255 for c in self.color)
        return [Item(SHAPE_NAMES[i], rgba, SHAPE_LABELS[i], (i,)) for i in range(self.n_shapes)]

    def oracle_bounds(self):
        return [0], [self.n_shapes - 1]
