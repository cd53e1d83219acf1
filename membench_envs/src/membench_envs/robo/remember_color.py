"""RememberColor3/5/9 (paper App. K.2, Table 1): memorise the colour of a cube, then touch the cube of that colour.

Object memory, T = 60. The IDs RememberColor3/5/9 are rows of the one table in :mod:`membench_envs.catalogue.robo`
(``colors`` = 3, 5, 9) on this one class. Oracle ``true_color_indices`` (k = 1): index into :data:`COLORS`.
Customise with kwargs or class constants, as in the paper's App. M (Codes 3, 5, 15)::

    gym.make("MIKASA/RememberColor9-v0", time_offset=50, delta_time=900, goal_thresh=0.03)  # T = 50+900+50

    class RememberColor4Debug(RememberColorEnv):   # then membench_envs.robo.make(RememberColor4Debug, ...)
        COLORS = 4; TIME_OFFSET = 200; GOAL_THRESH = 0.03; CUBE_HALFSIZE = 0.02; DELTA_TIME = 100

Phases, success, dense reward, layout and the full-state layout are those of :mod:`membench_envs.robo._remember`.
"""

from __future__ import annotations

from membench_envs.robo._remember import Item, RememberBaseEnv

#: (name, RGB 0-255) in the paper's order; the first ``colors`` are used. "Olive" is (255, 128, 0), i.e. orange,
#: as in the public MIKASA-Robo code.
COLORS: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("Red", (255, 0, 0)),
    ("Lime", (0, 255, 0)),
    ("Blue", (0, 0, 255)),
    ("Yellow", (255, 255, 0)),
    ("Magenta", (255, 0, 255)),
    ("Cyan", (0, 255, 255)),
    ("Maroon", (128, 0, 0)),
    ("Olive", (255, 128, 0)),
    ("Teal", (0, 128, 128)),
)


class RememberColorEnv(RememberBaseEnv):
    """N cubes of distinct colours (``colors`` = N, 1-9)."""

    def __init__(self, *args, colors: int | None = None, cube_halfsize: float | None = None, **kwargs):
        self.n_colors = self.knob("colors", colors)  # 1..len(COLORS): the catalogue's bound
        self.cube_halfsize = float(self.knob("cube_halfsize", cube_halfsize))
        super().__init__(*args, **kwargs)

    @property
    def scale(self) -> float:
        return self.cube_halfsize

    def make_items(self) -> list[Item]:
        return [
            Item("cube", (r / 255, g / 255, b / 255, 1.0), name, (i,))
            for i, (name, (r, g, b)) in enumerate(COLORS[: self.n_colors])
        ]

    def oracle_bounds(self):
        return [0], [self.n_colors - 1]
