"""Headless OpenGL for MuJoCo rendering (Numpad's images, Memory Maze), chosen by us, not by the user.

MuJoCo and dm_control read ``MUJOCO_GL`` once, when they are first imported, so the choice must be made
before that import. :func:`select_mujoco_gl` is called by every environment module that renders with MuJoCo,
before it imports ``mujoco`` or ``dm_control``:

* a ``MUJOCO_GL`` the user set is kept as it is (``egl``, ``osmesa`` or ``glfw``);
* otherwise ``egl`` when a Mesa (or vendor) EGL is installed: it renders on the CPU through llvmpipe when
  there is no GPU, and on the GPU when there is one;
* otherwise ``osmesa`` when libOSMesa is installed;
* otherwise :class:`MissingSystemLibraryError`, naming the Debian/Ubuntu packages that fix it.

A program may import ``mujoco`` before any of our environments (ManiSkill, gymnasium's MuJoCo tasks and
stable-baselines3 all do), so MuJoCo's own ``mujoco.Renderer`` may have locked in a windowed backend (GLFW) that
cannot render on a headless machine. :class:`HeadlessRenderer` therefore makes its OpenGL context itself, from
the backend chosen here, through MuJoCo's public ``mujoco.egl`` / ``mujoco.osmesa`` modules, and draws with the
public ``mjv_*`` / ``mjr_*`` functions: what ``mujoco.Renderer`` does for RGB images, without its import-time
choice.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
from typing import Any

import numpy as np

# Debian/Ubuntu packages that provide each backend's library.
EGL_PACKAGES = "libegl1 libegl-mesa0"
OSMESA_PACKAGES = "libosmesa6"


class MissingSystemLibraryError(ImportError):
    """A system library (not a Python package) that rendering needs is missing."""


def _loadable(*names: str) -> bool:
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def _egl_available() -> bool:
    # libEGL.so.1 is the glvnd dispatcher; it renders only with a vendor library behind it (Mesa's, or a GPU
    # driver's). Mesa's vendor library is libEGL_mesa.so.0; NVIDIA's is libEGL_nvidia.so.0.
    if not _loadable("libEGL.so.1", "libEGL.so"):
        return False
    return _loadable("libEGL_mesa.so.0", "libEGL_nvidia.so.0") or ctypes.util.find_library("EGL_mesa") is not None


def _osmesa_available() -> bool:
    return _loadable("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so")


def select_mujoco_gl(env_id: str | None = None) -> str:
    """Set ``MUJOCO_GL`` (and ``PYOPENGL_PLATFORM``) for headless rendering and return the backend's name."""
    chosen = os.environ.get("MUJOCO_GL", "").strip().lower()
    if not chosen:
        if _egl_available():
            chosen = "egl"
        elif _osmesa_available():
            chosen = "osmesa"
        else:
            what = f"{env_id} renders" if env_id else "This environment renders"
            raise MissingSystemLibraryError(
                f"{what} with MuJoCo, which needs a headless OpenGL library, and neither EGL nor OSMesa was "
                f"found. Fix (Debian/Ubuntu, as root): apt-get install {OSMESA_PACKAGES} "
                f"(or: apt-get install {EGL_PACKAGES})"
            )
        os.environ["MUJOCO_GL"] = chosen
    if chosen in ("egl", "osmesa"):
        os.environ.setdefault("PYOPENGL_PLATFORM", chosen)
    return chosen


def render_error_hint(backend: str) -> str:
    """The system packages to name when rendering through ``backend`` fails at run time."""
    return OSMESA_PACKAGES if backend == "osmesa" else EGL_PACKAGES


class HeadlessRenderer:
    """RGB pictures of a MuJoCo model from one of its cameras, on an OpenGL context of ``backend``.

    ``backend``: what :func:`select_mujoco_gl` returned (``egl`` or ``osmesa``; another value, e.g. a user's
    ``glfw``, uses MuJoCo's ``mujoco.glfw`` context).
    """

    def __init__(self, model: Any, height: int, width: int, backend: str):
        import mujoco

        module = {"egl": "mujoco.egl", "osmesa": "mujoco.osmesa"}.get(backend, "mujoco.glfw")
        self._mujoco, self._model = mujoco, model
        self._gl = importlib.import_module(module).GLContext(width, height)
        self._gl.make_current()
        self._context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._context)
        self._scene = mujoco.MjvScene(model, maxgeom=max(1000, model.ngeom + 100))
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._pixels = np.empty((height, width, 3), dtype=np.uint8)

    def render(self, data: Any, camera_id: int) -> np.ndarray:
        """The picture from camera ``camera_id`` of ``data``'s current poses, (height, width, 3) uint8, top row
        first."""
        if self._context is None:
            raise RuntimeError("HeadlessRenderer.render called after close()")
        mj = self._mujoco
        self._gl.make_current()
        self._camera.fixedcamid = camera_id
        mj.mjv_updateScene(
            self._model, data, self._option, None, self._camera, mj.mjtCatBit.mjCAT_ALL.value, self._scene
        )
        mj.mjr_render(self._rect, self._scene, self._context)
        mj.mjr_readPixels(self._pixels, None, self._rect, self._context)
        return np.flipud(self._pixels).copy()  # OpenGL's rows run bottom-up

    def close(self) -> None:
        if self._context is not None:
            self._context.free()
            self._context = None
        if self._gl is not None:
            self._gl.free()
            self._gl = None
