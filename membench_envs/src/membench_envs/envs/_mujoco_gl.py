"""Headless OpenGL for MuJoCo rendering (Numpad's images, Memory Maze), chosen by us, not by the user.

MuJoCo and dm_control read ``MUJOCO_GL`` once, when they are first imported, so the choice must be made
before that import. :func:`select_mujoco_gl` is called by every environment module that renders with MuJoCo,
before it imports ``mujoco`` or ``dm_control``:

* a ``MUJOCO_GL`` the user set is kept as it is (``egl``, ``osmesa`` or ``glfw``);
* otherwise ``egl`` when a Mesa (or vendor) EGL is installed: it renders on the CPU through llvmpipe when
  there is no GPU, and on the GPU when there is one;
* otherwise ``osmesa`` when libOSMesa is installed;
* otherwise :class:`MissingSystemLibraryError`, naming the Debian/Ubuntu packages that fix it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

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
