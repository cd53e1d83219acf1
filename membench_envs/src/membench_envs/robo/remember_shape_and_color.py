"""RememberShapeAndColor 3x2 / 3x3 / 5x3 (paper App. K.4, Table 1): memorise shape *and* colour, touch the match.

Object memory, T = 60. Candidates are every (shape, colour) pair of the first ``n_shapes`` of (cube, sphere, t-shape,
cross, torus) and the first ``n_colors`` of (red, green, blue), enumerated shape-major. Oracle (k = 2):
``true_shapes_info`` (shape index) and ``true_colors_info`` (colour index).

**The 3x2 ambiguity, settled.** The paper (App. K.4) defines 3x2 as 3 shapes (cube, sphere, t-shape) × 2 colours
(red, green) = 6 objects; the public code's ``SHAPES = 6`` truncates a shape-major enumeration over 3 colours and so
gives 2 shapes (cube, sphere) × 3 colours instead. We follow the paper (its intent, and the name "3x2");
``n_shapes=2, n_colors=3`` reproduces the code's set. 3x3 and 5x3 agree in both sources.

Kwargs / class constants (App. M, Code 17): ``n_shapes`` / ``N_SHAPES`` (1-5), ``n_colors`` / ``N_COLORS`` (1-3),
``shape_scale`` / ``SHAPE_SCALE`` (0.02), ``time_offset``, ``delta_time``, ``goal_thresh``, ``episode_steps``.
Phases, success and reward: :mod:`membench_envs.robo._remember`.
"""

from __future__ import annotations

from membench_envs.robo._remember import Item, RememberBaseEnv

SC_SHAPES = (("cube", "cube"), ("sphere", "sphere"), ("t_shape", "t-shape"), ("cross", "cross"), ("torus", "torus"))
SC_COLORS = (("red", (1.0, 0.0, 0.0, 1.0)), ("green", (0.0, 1.0, 0.0, 1.0)), ("blue", (0.0, 0.0, 1.0, 1.0)))


class RememberShapeAndColorEnv(RememberBaseEnv):
    """``n_shapes`` × ``n_colors`` objects, all distinct (shape, colour) pairs."""

    def __init__(
        self,
        *args,
        n_shapes: int | None = None,
        n_colors: int | None = None,
        shape_scale: float | None = None,
        **kwargs,
    ):
        self.n_shapes = self.knob("n_shapes", n_shapes)  # 1..len(SC_SHAPES): the catalogue's bound
        self.n_colors = self.knob("n_colors", n_colors)  # 1..len(SC_COLORS)
        self.shape_scale = float(self.knob("shape_scale", shape_scale))
        super().__init__(*args, **kwargs)

    @property
    def scale(self) -> float:
        return self.shape_scale

    def make_items(self) -> list[Item]:
        items = []
        for s in range(self.n_shapes):
            shape, shape_label = SC_SHAPES[s]
            for c in range(self.n_colors):
                color_label, rgba = SC_COLORS[c]
                items.append(Item(shape, rgba, f"{color_label} {shape_label}", (s, c)))
        return items

    def oracle_bounds(self):
        return [0, 0], [self.n_shapes - 1, self.n_colors - 1]
