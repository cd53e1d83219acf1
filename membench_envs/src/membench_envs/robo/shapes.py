"""Tabletop objects built only from physics primitives (boxes, spheres, capsules, cylinders): no mesh, no download.

Every builder takes a ``scale`` s (the paper's ``SHAPE_SCALE`` / ``CUBE_HALFSIZE``, 0.02 m by default) and an RGBA
colour in [0, 1], and returns ``(actor, rest_height)``: the actor's origin sits at ``rest_height`` above the table
when the object rests on it, so a task places it at ``(x, y, rest_height)``. Visual and collision geometry are the
same primitives, so what the cameras show is what the gripper touches. Sizes follow the public MIKASA-Robo shape
parameters (e.g. cross arm 1.5 s and width 0.75 s, torus radius s and tube s/2, star radius 1.5 s); curved meshes
(torus, star, crescent, pyramid) are approximated by compounds that keep the silhouette seen by the cameras.

The ``add_*`` helpers are reusable by other tasks (e.g. a mug = a ring of boxes + a disc + a handle).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import sapien
import sapien.render
from transforms3d.euler import euler2quat

#: The nine shapes of RememberShape, in the paper's order (App. K.3).
SHAPE_NAMES = ("cube", "sphere", "cylinder", "cross", "torus", "star", "pyramid", "t_shape", "crescent")


def _material(color: Sequence[float]) -> sapien.render.RenderMaterial:
    rgba = [float(c) for c in color]
    if len(rgba) == 3:
        rgba.append(1.0)
    return sapien.render.RenderMaterial(base_color=rgba)


def _yaw(angle: float) -> list[float]:
    return [float(v) for v in euler2quat(0.0, 0.0, angle)]


def add_box(builder, half_size, color, p=(0, 0, 0), q=(1, 0, 0, 0), collision: bool = True) -> None:
    pose = sapien.Pose(p=list(p), q=list(q))
    if collision:
        builder.add_box_collision(pose=pose, half_size=list(half_size))
    builder.add_box_visual(pose=pose, half_size=list(half_size), material=_material(color))


def add_sphere(builder, radius, color, p=(0, 0, 0), collision: bool = True) -> None:
    pose = sapien.Pose(p=list(p))
    if collision:
        builder.add_sphere_collision(pose=pose, radius=radius)
    builder.add_sphere_visual(pose=pose, radius=radius, material=_material(color))


def add_capsule(builder, radius, half_length, color, p=(0, 0, 0), q=(1, 0, 0, 0), collision: bool = True) -> None:
    """A capsule whose axis is the local x axis of ``q``."""
    pose = sapien.Pose(p=list(p), q=list(q))
    if collision:
        builder.add_capsule_collision(pose=pose, radius=radius, half_length=half_length)
    builder.add_capsule_visual(pose=pose, radius=radius, half_length=half_length, material=_material(color))


#: Rotates sapien's x-axis cylinders/capsules to stand along z.
UPRIGHT = [math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0]


def add_cylinder(builder, radius, half_length, color, p=(0, 0, 0), upright: bool = True, collision=True) -> None:
    pose = sapien.Pose(p=list(p), q=UPRIGHT if upright else [1, 0, 0, 0])
    if collision:
        builder.add_cylinder_collision(pose=pose, radius=radius, half_length=half_length)
    builder.add_cylinder_visual(pose=pose, radius=radius, half_length=half_length, material=_material(color))


# --- the nine shapes: each adds its parts and returns its rest height ----------------------------------------------
def _cube(b, s, c):
    add_box(b, (s, s, s), c)
    return s


def _sphere(b, s, c):
    add_sphere(b, s, c)
    return s


def _cylinder(b, s, c):
    add_cylinder(b, s, s, c)
    return s


def _cross(b, s, c):
    h = 0.5 * s
    add_box(b, (1.5 * s, 0.375 * s, h), c)
    add_box(b, (0.375 * s, 1.5 * s, h), c)
    return h


def _torus(b, s, c, segments: int = 12):
    tube = 0.5 * s
    half = s * math.sin(math.pi / segments)
    for k in range(segments):
        a = 2 * math.pi * k / segments
        add_capsule(b, tube, half, c, p=(s * math.cos(a), s * math.sin(a), 0.0), q=_yaw(a + math.pi / 2))
    return tube


def _star(b, s, c, points: int = 5):
    h = 0.375 * s
    add_cylinder(b, 0.55 * s, h, c)
    for k in range(points):
        a = 2 * math.pi * k / points + math.pi / 2
        r = 0.85 * s
        add_box(b, (0.65 * s, 0.2 * s, h), c, p=(r * math.cos(a), r * math.sin(a), 0.0), q=_yaw(a))
    return h


def _pyramid(b, s, c, layers: int = 4):
    step = s / layers
    for k in range(layers):
        half = s * (1.0 - k / layers)
        add_box(b, (half, half, step / 2), c, p=(0.0, 0.0, -s / 2 + step * (k + 0.5)))
    return s / 2


def _t_shape(b, s, c):
    h = 0.375 * s
    bar = 0.3 * s
    add_box(b, (s, bar, h), c, p=(0.0, s - bar, 0.0))
    add_box(b, (bar, s - bar, h), c, p=(0.0, -bar, 0.0))
    return h


def _crescent(b, s, c, segments: int = 7):
    h = 0.5 * s
    radius = 0.75 * s
    for k in range(segments):
        a = math.radians(-120 + 240 * k / (segments - 1))
        add_cylinder(b, 0.28 * s, h, c, p=(radius * math.cos(a), radius * math.sin(a), 0.0))
    return h


_BUILDERS: dict[str, Callable] = {
    "cube": _cube,
    "sphere": _sphere,
    "cylinder": _cylinder,
    "cross": _cross,
    "torus": _torus,
    "star": _star,
    "pyramid": _pyramid,
    "t_shape": _t_shape,
    "crescent": _crescent,
}


def build_shape(scene, kind: str, scale: float, color, name: str, body_type: str = "dynamic", initial_pose=None):
    """Build one ``kind`` object (one of :data:`SHAPE_NAMES`) in every sub-scene. Returns (actor, rest_height)."""
    if kind not in _BUILDERS:
        raise ValueError(f"unknown shape {kind!r}; valid: {', '.join(SHAPE_NAMES)}")
    builder = scene.create_actor_builder()
    rest = _BUILDERS[kind](builder, float(scale), np.asarray(color, dtype=float))
    builder.set_initial_pose(initial_pose if initial_pose is not None else sapien.Pose(p=[0, 0, 1000.0]))
    if body_type == "dynamic":
        actor = builder.build(name=name)
    elif body_type == "kinematic":
        actor = builder.build_kinematic(name=name)
    else:
        raise ValueError(f"body_type must be 'dynamic' or 'kinematic', got {body_type!r}")
    return actor, float(rest)
