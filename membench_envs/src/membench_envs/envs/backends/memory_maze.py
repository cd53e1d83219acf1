"""Memory Maze (Pasukonis et al. 2022): a gymnasium wrapper of the package ``memory-maze`` 1.0.3's dm_env tasks.

The task (the package's, unchanged). Every episode a new maze of ``size`` x ``size`` cells (9, 11, 13 or 15;
labmaze rooms and corridors) holds 3, 4, 5 or 6 coloured target spheres. The agent, a rolling ball, sees a
64x64 first-person picture; a prompt names the colour of one target. Touching that target pays +1 and the package
picks a new prompted target at random (never the one being touched); touching another target pays nothing.
The episode is truncated after T = 1000, 2000, 3000 or 4000 steps (250 … 1000 simulated seconds at 4 Hz); it
never terminates. Actions: ``Discrete(6)``, the package's set: 0 = noop, 1 = forward, 2 = turn left, 3 = turn
right, 4 = forward + left, 5 = forward + right.

The package's options, as kwargs (its variant IDs, which MIKASA-Base copies, in brackets; the table is in
:mod:`membench_envs.catalogue.memory_maze`): ``good_visibility`` (``-Vis``), ``camera_resolution`` (``-HD``: 256),
``randomize_colors`` (``-6CL``), ``top_camera`` (``-Top``, with 256: the picture is taken from above the maze),
``control_freq`` (``-HiFreq``: 40 steps per simulated second instead of 4; the time limit stays in seconds, so T is
10x longer; a divisor of 200, the package's control step being a whole number of 5 ms physics steps) and
``show_path`` (``-Oracle``: a minimap with the shortest route to the prompted target drawn over the picture's
top-right corner; the package marks the route's cells 2 in its layout, here the layout stays 1 = floor, 0 = wall).

Observations (a ``Dict`` in every variant; positions in maze cells, (x, y) with (0, 0) the bottom-left corner of
the maze without its outer wall, so the cell of a point is ``maze_layout[int(y), int(x)]``):

- ``partial``: what the package gives its agents: ``"image"``, uint8 (64, 64, 3), the first-person camera with the
  prompt drawn as a border in the target's colour (the package's ``TargetColorAsBorderWrapper``, which is all
  MIKASA-Base's ``MemoryMaze-<n>x<n>-v0`` returns), and ``"target_color"``, float32 (3,), the prompted RGB in
  [0, 1] (the package's ``target_color`` observation; the border is 0.7 x 255 x it).
- ``oracle``: ``partial`` + ``"oracle"``, float32 (6 + size²,): ``[agent x, agent y, dir x, dir y, target x, target
  y, maze_layout.ravel()]``: where the agent is and faces (what it must integrate from its moves), where the
  prompted target is (what it must remember from having seen it) and the walls (the map it must remember to plan a
  route; 1 = floor, 0 = wall, row-major from the bottom row). These are the three things the package's README says
  the task asks an agent to remember (the positions of objects, the wall layout, its own position), the objects
  restricted to the one asked for now: with them a memoryless planner walks to the prompted target. Going forward
  moves the agent along ``dir``.
- ``full``: ``partial`` + every extra observation of the package's ``global_observables=True``: ``"agent_pos"``,
  ``"agent_dir"``, ``"target_pos"``, ``"target_vec"`` (the prompted target in the agent's frame),
  ``"targets_pos"`` / ``"targets_vec"`` (every target, (n, 2)), ``"maze_layout"`` (uint8 (size, size), 1 = floor,
  0 = wall, row 0 at the bottom), plus ``"targets_color"`` (float32 (n, 3), the colour each sphere is drawn with)
  and ``"time"`` (t / T): the whole state, the targets not asked for yet and the clock included.

``info["oracle"]`` is the oracle vector in every variant.

Seeding. The package draws the maze sequence from a labmaze generator seeded once, when the dm_env task is built
(``seed=``), and everything else from the task's ``RandomState``; neither can be re-seeded afterwards. So
``reset(seed=s)`` builds the task anew with ``seed=s`` (~1.5 s more than a plain reset); a ``reset()`` without a
seed continues the current task's sequence (the first one builds a task with a seed drawn from ``np_random``).
The same seed gives the same mazes, targets, prompts and, under the same actions, the same trajectory.

Importing the package without legacy ``gym``. ``memory_maze/__init__`` imports ``gym`` (to register old-gym IDs)
and re-raises the ImportError when it is missing, and membench does not depend on legacy ``gym`` (it makes Stable
Baselines 3 print a banner). So when ``gym`` is not installed, :func:`_legacy_gym_standin` puts a minimal stand-in
(``gym.Env``, ``gym.Space``, ``gym.spaces`` and a no-op ``gym.envs.registration.register``) into ``sys.modules``
only while ``memory_maze`` is imported, and removes it afterwards: the package's old-gym IDs are then not
registered and its ``GymWrapper`` is unusable, neither of which membench uses (it builds the dm_env tasks of
``memory_maze.tasks``). When the real ``gym`` is installed, nothing is faked.

Render modes: ``"rgb_array"`` (the agent's picture) and gymnasium's ``"rgb_array_list"``; ``"human"`` is one clear
``ValueError`` (:func:`make_memory_maze`, the registered entry point, says why), where the other IDs get gymnasium's
``HumanRendering`` window.

Rendering. MuJoCo needs a headless OpenGL: :func:`~membench_envs.envs.core.mujoco_gl.select_mujoco_gl` picks EGL or
OSMesa (or keeps the user's ``MUJOCO_GL``) before ``memory_maze`` is imported, which would otherwise force
``MUJOCO_GL=egl``; no library at all is a ``MissingSystemLibraryError`` at ``make``. When the chosen backend fails
to render at run time, :class:`MujocoRenderError` names the system packages that fix it. ``close()`` frees the
MuJoCo renderer.

Measured with a memoryless BFS planner (9x9, 300 steps, mean of 2 seeds): 7.5 targets reached with the ``oracle`` or
the ``full`` observation, 0 for random actions on the picture alone.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import sys
import types
from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.memory_maze import CONTROL_FREQ, PARAMS, SIZES, env_id, episode_length
from membench_envs.envs.core.mujoco_gl import render_error_hint, select_mujoco_gl
from membench_envs.envs.core.native import check_can_step, check_render_mode
from membench_envs.envs.core.params import check_kwargs, check_seed
from membench_envs.envs.core.wrap import check_action

#: What the ``full`` variant adds to ``partial`` (see the module docstring).
FULL_KEYS = (
    "agent_pos",
    "agent_dir",
    "target_pos",
    "target_vec",
    "targets_pos",
    "targets_vec",
    "targets_color",
    "maze_layout",
    "time",
)


class MujocoRenderError(RuntimeError):
    """MuJoCo could not render through the OpenGL backend in ``MUJOCO_GL``."""


@contextlib.contextmanager
def _legacy_gym_standin():
    """While the block runs, a minimal ``gym`` in ``sys.modules`` when the real one is not installed."""
    if "gym" in sys.modules or importlib.util.find_spec("gym") is not None:
        yield
        return
    gym_ = types.ModuleType("gym")
    gym_.__doc__ = "membench's stand-in for legacy gym while memory_maze is imported (see envs/backends/memory_maze.py)"
    gym_.Env = type("Env", (), {})
    gym_.Space = type("Space", (), {})
    spaces = types.ModuleType("gym.spaces")
    envs = types.ModuleType("gym.envs")
    registration = types.ModuleType("gym.envs.registration")
    registration.register = lambda *args, **kwargs: None
    gym_.spaces, gym_.envs, envs.registration = spaces, envs, registration
    standins = {"gym": gym_, "gym.spaces": spaces, "gym.envs": envs, "gym.envs.registration": registration}
    sys.modules.update(standins)
    try:
        yield
    finally:
        for name, module in standins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _render_failure(env_id: str, backend: str, exc: BaseException) -> MujocoRenderError:
    return MujocoRenderError(
        f"{env_id} renders its first-person camera with MuJoCo through MUJOCO_GL={backend}, which failed "
        f"({type(exc).__name__}: {exc}). Fix (Debian/Ubuntu, as root): apt-get install {render_error_hint(backend)}"
        " (or set MUJOCO_GL=egl / osmesa, or unset it to let membench pick one)"
    )


def _is_gl_failure(exc: BaseException) -> bool:
    """An error of MuJoCo's or dm_control's OpenGL layer (they raise plain RuntimeError / ImportError)."""
    if type(exc).__name__ == "FatalError" and type(exc).__module__.startswith("mujoco"):
        return True
    text = f"{type(exc).__module__} {type(exc).__name__} {exc}".lower()
    return any(word in text for word in ("opengl", "egl", "osmesa", "glfw", "display", "mjr_", "_render"))


def load_tasks(env_id: str, backend: str) -> types.ModuleType:
    """``memory_maze.tasks``, imported without legacy gym; a clear error naming the fix when it cannot be."""
    try:
        with _legacy_gym_standin():
            return importlib.import_module("memory_maze.tasks")
    except ModuleNotFoundError as exc:  # memory-maze, dm-control, mujoco or labmaze is not installed
        require(exc.name or "memory_maze", "memory-maze", env_id=env_id)
        raise
    except (ImportError, RuntimeError) as exc:  # dm_control loads its OpenGL backend when it is imported
        if _is_gl_failure(exc):
            raise _render_failure(env_id, backend, exc) from exc
        raise


class _QuietWalkerReset(logging.Filter):
    """Drop the package's walker's "Cannot set velocity on Entity with no free joint." warning of every reset."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Cannot set velocity on Entity with no free joint" not in record.getMessage()


_QUIET = _QuietWalkerReset()


class MemoryMaze(gym.Env):
    """The package's ``memory_maze_<size>x<size>`` dm_env task as a gymnasium env, with the membench variants."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": CONTROL_FREQ}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        """``kwargs``: see ``catalogue.memory_maze.PARAMS`` (checked and completed there)."""
        p = check_kwargs("MemoryMaze", PARAMS, kwargs)
        self.size, self.obs_variant = p["size"], p["obs_variant"]
        self.env_id = env_id(self.size)
        self.render_mode = check_render_mode(render_mode, tuple(self.metadata["render_modes"]))
        self.control_freq = p["control_freq"]
        self.metadata = {**self.metadata, "render_fps": self.control_freq}
        self._task_kwargs = {
            "global_observables": True,  # always: the oracle is in every variant's info
            "good_visibility": p["good_visibility"],
            "randomize_colors": p["randomize_colors"],
            "camera_resolution": p["camera_resolution"],
            "top_camera": p["top_camera"],
            "control_freq": float(self.control_freq),
            "show_path": p["show_path"],
        }
        if importlib.util.find_spec("memory_maze") is None:  # the missing extra first, then the OpenGL library
            require("memory_maze", "memory-maze", env_id=self.env_id)
        self._backend = select_mujoco_gl(self.env_id)  # before memory_maze / dm_control are imported
        self._tasks = load_tasks(self.env_id, self._backend)
        logging.getLogger("absl").addFilter(_QUIET)
        self.n_targets = SIZES[self.size][0]
        self.T = episode_length(self.size, self.control_freq)

        s, n, res = float(self.size), self.n_targets, p["camera_resolution"]
        reach = s * 1.5  # bounds the components of a vector between two points of the maze (<= s * sqrt(2))
        pos = gym.spaces.Box(0.0, s, (2,), np.float32)
        direction = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        partial: dict[str, gym.Space] = {
            "image": gym.spaces.Box(0, 255, (res, res, 3), np.uint8),
            "target_color": gym.spaces.Box(0.0, 1.0, (3,), np.float32),
        }
        cells = self.size * self.size
        self.oracle_space = gym.spaces.Box(
            np.array([0, 0, -1, -1, 0, 0] + [0] * cells, np.float32),
            np.array([s, s, 1, 1, s, s] + [1] * cells, np.float32),
            dtype=np.float32,
        )
        if self.obs_variant == "partial":
            self.observation_space = gym.spaces.Dict(partial)
        elif self.obs_variant == "oracle":
            self.observation_space = gym.spaces.Dict({**partial, "oracle": self.oracle_space})
        else:
            self.observation_space = gym.spaces.Dict(
                {
                    **partial,
                    "agent_pos": pos,
                    "agent_dir": direction,
                    "target_pos": pos,
                    "target_vec": gym.spaces.Box(-reach, reach, (2,), np.float32),
                    "targets_pos": gym.spaces.Box(0.0, s, (n, 2), np.float32),
                    "targets_vec": gym.spaces.Box(-reach, reach, (n, 2), np.float32),
                    "targets_color": gym.spaces.Box(0.0, 1.0, (n, 3), np.float32),
                    "maze_layout": gym.spaces.Box(0, 1, (self.size, self.size), np.uint8),
                    "time": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
                }
            )
        self.action_space = gym.spaces.Discrete(6)
        self._dm: Any = None  # the package's dm_env task, built at the first reset (and at every seeded one)
        self._t = 0
        self._image: np.ndarray | None = None
        self._started = False
        self._done = False

    # --- the package's task -----------------------------------------------------------------------------------
    def _guarded(self, call, *args):
        """Run a call that may render; an OpenGL failure becomes one error naming the fix."""
        try:
            return call(*args)
        except Exception as exc:
            if _is_gl_failure(exc):
                raise _render_failure(self.env_id, self._backend, exc) from exc
            raise

    def _build(self, seed: int) -> None:
        self._close_task()
        make_task = getattr(self._tasks, f"memory_maze_{self.size}x{self.size}")
        self._dm = self._guarded(lambda: make_task(seed=seed, **self._task_kwargs))

    def _close_task(self) -> None:
        if self._dm is not None:
            self._dm.close()  # frees the physics and its rendering context
            self._dm = None

    @property
    def dm_env(self):
        """The package's dm_env task (None before the first reset)."""
        return self._dm

    def targets_color(self) -> np.ndarray:
        """(n, 3): the colour each target sphere is drawn with, in the order of ``targets_pos``."""
        targets = self._dm.task._targets  # the package keeps them private; their textures are public MJCF
        return np.array([t.material.texture.rgb1 for t in targets], dtype=np.float32)

    # --- observations ---------------------------------------------------------------------------------------
    def _observe(self, o: dict[str, Any]) -> tuple[dict[str, np.ndarray], np.ndarray]:
        self._image = np.array(o["image"], dtype=np.uint8)
        agent_dir = np.clip(np.asarray(o["agent_dir"], dtype=np.float32), -1.0, 1.0)
        layout = (np.asarray(o["maze_layout"]) > 0).astype(np.uint8)  # show_path marks the route's cells 2
        oracle = np.concatenate([o["agent_pos"], agent_dir, o["target_pos"], layout.ravel()]).astype(np.float32)
        obs = {"image": self._image.copy(), "target_color": np.asarray(o["target_color"], dtype=np.float32)}
        if self.obs_variant == "oracle":
            obs["oracle"] = oracle.copy()
        elif self.obs_variant == "full":
            obs.update(
                {
                    "agent_pos": oracle[0:2].copy(),
                    "agent_dir": agent_dir,
                    "target_pos": oracle[4:6].copy(),
                    "target_vec": np.asarray(o["target_vec"], dtype=np.float32),
                    "targets_pos": np.asarray(o["targets_pos"], dtype=np.float32),
                    "targets_vec": np.asarray(o["targets_vec"], dtype=np.float32),
                    "targets_color": self.targets_color(),
                    "maze_layout": layout,
                    "time": np.array([self._t / self.T], dtype=np.float32),
                }
            )
        return obs, oracle

    # --- gymnasium API --------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, "MemoryMaze.reset")
        super().reset(seed=seed)
        if seed is not None or self._dm is None:
            self._build(seed if seed is not None else int(self.np_random.integers(1, 2**31)))
        timestep = self._guarded(self._dm.reset)
        self._t = 0
        self._started, self._done = True, False
        obs, oracle = self._observe(timestep.observation)
        return obs, {"oracle": oracle}

    def step(self, action):
        check_can_step(self._started, self._done)
        a = check_action(self.action_space, action)
        timestep = self._dm.step(a)
        self._t += 1
        last = timestep.last()
        terminated = bool(last and timestep.discount == 0.0)  # the package never terminates; kept for safety
        truncated = bool(last and not terminated)
        self._done = last
        obs, oracle = self._observe(timestep.observation)
        return obs, float(timestep.reward), terminated, truncated, {"oracle": oracle}

    def render(self):
        """``"rgb_array"``: the agent's camera picture (with the prompt border) of the current step."""
        if self.render_mode != "rgb_array" or self._image is None:
            return None
        return self._image.copy()

    def close(self):
        self._close_task()
        super().close()


#: Render modes of ``gym.make``: the env's own, and gymnasium's list of its frames.
RENDER_MODES = ("rgb_array", "rgb_array_list")


def make_memory_maze(render_mode: str | None = None, **kwargs: Any) -> gym.Env:
    """The registered entry point: :class:`MemoryMaze`, after checking ``render_mode``.

    ``render_mode="human"`` is refused here, before anything is built. Given a class whose metadata lacks "human",
    ``gym.make`` would wrap it in gymnasium's ``HumanRendering``, which opens a pygame window; that window's display
    breaks MuJoCo's offscreen EGL / OSMesa context in the same process (``EGL_BAD_DISPLAY``), and on some machines
    the first ``reset`` never returns. Being a function (no ``metadata``), this entry point receives the mode as
    the user gave it; ``"rgb_array_list"`` gets gymnasium's ``RenderCollection`` here, as ``gym.make`` would add it.
    """
    valid = f"valid: {', '.join(RENDER_MODES)} (or None)"
    if render_mode == "human":
        raise ValueError(
            f"render_mode='human' is not supported by Memory Maze: gymnasium's HumanRendering opens a "
            f"pygame window, which breaks MuJoCo's offscreen OpenGL context in the same process; {valid}; "
            "to watch an episode, record its 'rgb_array' frames (e.g. gymnasium.wrappers.RecordVideo)"
        )
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"unknown render_mode {render_mode!r}; {valid}")
    if render_mode == "rgb_array_list":
        return gym.wrappers.RenderCollection(MemoryMaze(render_mode="rgb_array", **kwargs))
    return MemoryMaze(render_mode=render_mode, **kwargs)
