"""An upside-down mug built only from physics primitives (boxes and one cylinder): no mesh, no asset download.

ShellGame needs three identical mugs that, turned over, cover a ball. Upstream MIKASA-Robo loads the YCB ``025_mug``
mesh, which ManiSkill downloads through an interactive prompt (fails offline and in CI). :func:`build_mug` builds an
equivalent object from primitives that ship with SAPIEN:

- **wall**: ``segments`` (16) boxes arranged in a ring, each ``wall`` thick and as tall as the mug, tangent to the
  circle of radius ``outer_radius``. Each box is as long as a side of the regular polygon circumscribed about that
  circle, so neighbouring boxes meet at the outer corners and overlap on the inside: the wall has no gap, for the
  cameras and for collisions.
- **closed end**: a disc (cylinder) of radius ``outer_radius`` and thickness ``top``, at the top (the mug stands
  upside down, as in the shell game).
- **open end**: at the bottom, the inner clearance ``outer_radius - wall`` (0.029 m by default) leaves room for a
  ball of radius up to ~0.028 m, so the mug covers the ball without touching it.
- **handle**: a "C" of three boxes on the local +x side (``handle=False`` leaves it out). It gives the mug an
  orientation; ShellGame gives all three mugs the same yaw, which never depends on where the ball is.

Visual and collision geometry are the same primitives, so what the cameras see is what the gripper and the ball
touch. The actor's origin is the centre of the mug's bounding cylinder (axis, mid-height): resting on the table it
sits at z = ``height / 2``. Default size: outer diameter 0.07 m and height 0.08 m, close to the YCB mug body
(~0.08 m) but narrow enough for the Panda gripper (0.08 m maximum opening) to grasp from above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import sapien
import sapien.render
from transforms3d.euler import euler2quat

#: Default mug colour (RGBA in [0, 1]): off-white ceramic, far from the ball's red.
MUG_COLOR = (0.9, 0.9, 0.86, 1.0)


@dataclass(frozen=True)
class MugGeometry:
    """Dimensions of the primitive mug, in metres."""

    outer_radius: float = 0.035
    height: float = 0.08
    wall: float = 0.006
    top: float = 0.006
    segments: int = 16
    handle: bool = True
    handle_reach: float = 0.022
    handle_height: float = 0.05
    handle_thickness: float = 0.007
    handle_width: float = 0.012

    def __post_init__(self) -> None:
        if not (self.outer_radius > 0 and self.height > 0):
            raise ValueError(f"mug outer_radius and height must be > 0, got {self.outer_radius}, {self.height}")
        if not 0 < self.wall < self.outer_radius:
            raise ValueError(f"mug wall must be in (0, outer_radius), got {self.wall}")
        if not 0 < self.top < self.height:
            raise ValueError(f"mug top thickness must be in (0, height), got {self.top}")
        if self.segments < 8:
            raise ValueError(f"a mug needs at least 8 wall segments, got {self.segments}")
        if self.handle and not (0 < self.handle_height < self.height):
            raise ValueError(f"handle_height must be in (0, height), got {self.handle_height}")

    @property
    def inner_radius(self) -> float:
        """Radius of the free space inside the wall (the largest ball it covers is a bit smaller)."""
        return self.outer_radius - self.wall

    @property
    def rest_height(self) -> float:
        """z of the actor origin when the mug stands (upside down) on the table."""
        return self.height / 2

    @property
    def segment_half_length(self) -> float:
        return self.outer_radius * math.tan(math.pi / self.segments)

    def covers(self, ball_radius: float) -> bool:
        """Whether a ball of ``ball_radius`` resting on the table fits under the mug without touching it."""
        return ball_radius < self.inner_radius and 2 * ball_radius < self.height - self.top


def _material(color: Sequence[float]) -> sapien.render.RenderMaterial:
    rgba = [float(c) for c in color]
    if len(rgba) == 3:
        rgba.append(1.0)
    return sapien.render.RenderMaterial(base_color=rgba, roughness=0.6)


def _part(builder, half_size, pose: sapien.Pose, material, physx_material, density: float) -> None:
    builder.add_box_collision(pose=pose, half_size=list(half_size), material=physx_material, density=density)
    builder.add_box_visual(pose=pose, half_size=list(half_size), material=material)


def add_mug(builder, geometry: MugGeometry, color=MUG_COLOR, physx_material=None, density: float = 1000.0) -> None:
    """Add the mug's parts to an actor builder (origin at the centre of the bounding cylinder, opening down)."""
    g = geometry
    mat = _material(color)
    r_mid = g.outer_radius - g.wall / 2
    half = (g.wall / 2, g.segment_half_length, g.height / 2)
    for k in range(g.segments):
        a = 2 * math.pi * k / g.segments
        q = [float(v) for v in euler2quat(0.0, 0.0, a)]
        _part(
            builder,
            half,
            sapien.Pose(p=[r_mid * math.cos(a), r_mid * math.sin(a), 0.0], q=q),
            mat,
            physx_material,
            density,
        )
    # the closed end: a disc on top (sapien cylinders lie along x; rotate the axis to z)
    disc_pose = sapien.Pose(
        p=[0.0, 0.0, g.height / 2 - g.top / 2], q=[math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0]
    )
    kwargs = {} if physx_material is None else {"material": physx_material}
    builder.add_cylinder_collision(
        pose=disc_pose, radius=g.outer_radius, half_length=g.top / 2, density=density, **kwargs
    )
    builder.add_cylinder_visual(pose=disc_pose, radius=g.outer_radius, half_length=g.top / 2, material=mat)
    if g.handle:
        t, w = g.handle_thickness, g.handle_width
        x0 = g.outer_radius - g.wall / 2  # arms start inside the wall, so the handle is one piece with it
        x1 = g.outer_radius + g.handle_reach
        arm_half = ((x1 - x0) / 2, w / 2, t / 2)
        for z in (g.handle_height / 2 - t / 2, -g.handle_height / 2 + t / 2):
            _part(builder, arm_half, sapien.Pose(p=[(x0 + x1) / 2, 0.0, z]), mat, physx_material, density)
        _part(
            builder,
            (t / 2, w / 2, g.handle_height / 2),
            sapien.Pose(p=[x1 - t / 2, 0.0, 0.0]),
            mat,
            physx_material,
            density,
        )


def build_mug(
    scene,
    name: str,
    geometry: MugGeometry | None = None,
    color=MUG_COLOR,
    initial_pose: sapien.Pose | None = None,
    physx_material=None,
    density: float = 1000.0,
):
    """Build one dynamic upside-down mug in every sub-scene. Returns ``(actor, rest_height)``."""
    geometry = geometry or MugGeometry()
    builder = scene.create_actor_builder()
    add_mug(builder, geometry, color, physx_material, density)
    builder.set_initial_pose(initial_pose if initial_pose is not None else sapien.Pose(p=[0.0, 0.0, 1000.0]))
    return builder.build(name=name), geometry.rest_height


__all__ = ["MUG_COLOR", "MugGeometry", "add_mug", "build_mug"]
