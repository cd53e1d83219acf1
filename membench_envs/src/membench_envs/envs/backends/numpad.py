"""Numpad (Humplik et al. 2019, "Meta reinforcement learning as task inference"), as MIKASA-Base ships it (the
numpad-gym code, which drops the original's jump action), written by us on MuJoCo with upstream's numbers.

Pad. N x N tiles (``numpad_size``, default 3), numbered row by row from the top left. Lengths are upstream's pixel
units: a tile is 10 wide with 5 of spacing on each side, so tile centres are 20 apart and the pad is 20·N wide
(60 for N = 3). The rolling ball starts anywhere on the pad; its edges stop it at 0 and 20·N − 1 on each axis.

Sequence. Per episode, ``sequence_length`` (n, default 4) distinct tiles, each a neighbour of the previous one
(up, down, left or right; no diagonals): the first drawn uniformly, each next one uniformly among the unused
neighbours, the whole draw restarted when it gets stuck (upstream's rule). The ball never starts on the first
tile of the sequence.

Pressing. A correct press (the next tile of the sequence) lights that tile, and pays +1 if that index of the
sequence was not reached before since the last completion (a re-press after a mistake pays nothing). Pressing
any other tile turns every light off and sends the progress back to the first tile. Pressing the last tile
completes the sequence: that observation shows every tile of the sequence lit, then the lights go off and the
reward counter starts afresh, so the sequence can be run again for another n rewards. The episode ends after
``max_steps`` steps (``terminated``, as upstream): 500 for ``discrete``, 200 for the rolling ball.

Modes (``mode``):

- ``discrete`` (MIKASA-Base ``Numpad-Discrete-v0``): the ball always stands on a tile; actions 0-3 = up, right,
  down, left move it one tile (it stays put at the edge), and every step presses the tile it ends on. As in
  upstream's code, a wrong press whose tile is the first of the sequence starts the sequence again at once, and
  bumping into the edge re-presses the current tile (which resets the progress unless it was the first tile).
- ``continuous`` (``Numpad-Continuous-v0``): a rolling ball. The action ``a`` in [-1, 1]² (row, column) is an
  acceleration of ``a`` · tile/10 = ``a`` per step: velocity += acceleration, then position += velocity (one
  MuJoCo Euler step of a unit point mass, time step 1, no friction). Reaching the edge clamps the position and
  zeroes the velocity along that axis. A tile is pressed when the ball's centre enters it (from the spacing or
  from another tile); staying on it or in the spacing presses nothing, and a wrong press does not count as a
  press of the first tile: the ball must leave and re-enter it.
- ``continuous_discrete_actions`` (``Numpad-ContinuousDiscreteActions-v0``): the same rolling ball driven by 8
  actions: 0-3 = up, right, down, left, 4-7 = up-right, down-right, up-left, down-left, each an acceleration
  with components ±1 (diagonals are not normalised, as upstream).

Observation (``obs_mode="vector"``, float32):

- ``partial`` = what upstream observes. ``discrete``: lights then ball (upstream's (2, N, N) 0/1 array
  flattened, its ``flatten_state=True``); rolling ball: ``[row, column] / (20·N)``, ``[v_row, v_column] / 5`` and the
  N² lights (upstream's ``ram`` observation).
- ``oracle`` = ``partial`` + per tile its rank k/n in the sequence (1/n … 1; 0 off the sequence) + the progress
  (index of the next tile to press) / n: what a perfect memory of the episode holds.
- ``full`` = ``oracle`` + the reward counter ((highest index rewarded since the last completion + 1) / n), the
  tile the ball was on after the previous step (one-hot, zeros for none: decides whether the next step is a
  press) and t / T.

``obs_mode="image"``: a Dict ``{"image"}``, uint8 (``image_size``, ``image_size``, 3), the pad rendered top-down by
MuJoCo (ground grey, dark tiles, lit tiles yellow, the ball red: upstream's colours); ``oracle`` adds
``{"oracle"}`` (the vector above), ``full`` adds ``{"state"}`` (the whole ``full`` vector). ``info["oracle"]`` is the
oracle vector in every variant; ``info["success"]`` (at the end) says whether the sequence was completed once.

Differences from upstream's code, all fixes of its bugs:

- Speed. Upstream means to cap the speed at half a tile (5) per step on each axis, so that the ball cannot skip
  a tile (its code comment and README say so, and its observation space assumes |v| / 5 <= 1), but clips the
  acceleration instead, which never binds: the ball speeds up without limit and can jump over tiles. Here the
  acceleration is cut so that the speed stays within the cap (``speed_cap=False`` restores upstream's code,
  with an unbounded velocity observation).
- Start tile. Upstream's discrete reset means to keep the ball off the first tile of the sequence but its test
  only keeps it in the same row or column, the first tile included; here the ball starts uniformly on any other
  tile.
- Completion on a rolling ball. Upstream skips its "previous tile" update on the step that completes the
  sequence, so a ball resting on the last tile presses it again on the next step (which, for n = 1, pays on
  every step). Here every step updates it.
- ``Numpad-ContinuousDiscreteActions-v0``'s ``reset`` takes no seed (so ``reset(seed=...)`` fails), and no
  upstream env honours a seed. Here the sequence and the start come from ``reset(seed=...)``'s generator: the same
  seed gives the same episode and, with the same actions, the same trajectory.

Checked step for step against upstream's code (the same sequence, start and actions give the same observations and
rewards in all three modes, with ``speed_cap=False``). Upstream's task cues (off by default there) are not
implemented. Measured (4 episodes): a memoryless controller heading for the oracle's next tile vs the same
controller guessing from the lights, return 457 vs 13.5 (discrete), 23 vs 0.5 (continuous), 21.5 vs 0.5
(continuous_discrete_actions).
"""

from __future__ import annotations

import atexit
import importlib.util
import weakref
from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.numpad import EPISODE_LENGTH, IDS, PARAMS
from membench_envs.envs.core.mujoco_gl import (
    HeadlessRenderer,
    MissingSystemLibraryError,
    render_error_hint,
    select_mujoco_gl,
)
from membench_envs.envs.core.native import check_can_step
from membench_envs.envs.core.params import check_kwargs, check_seed
from membench_envs.envs.core.wrap import check_action

TILE, SPACING, BALL = 10.0, 5.0, 5.0  # upstream's pixel sizes
PITCH = TILE + 2 * SPACING  # tile centres are this far apart
ACCELERATION = TILE / 10  # per unit of action
MAX_SPEED = TILE / 2  # per axis and step
RENDER_SIZE = 240

#: (row, column) steps of the discrete actions: up, right, down, left.
MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)], dtype=np.int64)
#: (row, column) accelerations of the 8 actions of ``continuous_discrete_actions``.
ACCELERATIONS = np.array([(-1, 0), (0, 1), (1, 0), (0, -1), (-1, 1), (1, 1), (-1, -1), (1, -1)], dtype=np.float64)

#: upstream's RGB colours.
GROUND, BALL_RGB, LIGHT_ON, LIGHT_OFF = (192, 192, 192), (255, 0, 0), (255, 255, 102), (50, 50, 0)


#: Envs that may hold a renderer: closed at exit, before MuJoCo's own exit hook tears EGL down (a context freed after
#: that prints errors). Exit hooks run last-registered first, and MuJoCo registers its hook with its first OpenGL
#: context, so ours is registered after the first renderer is made.
_LIVE: weakref.WeakSet = weakref.WeakSet()
_exit_hook: list[bool] = []


def _close_renderers() -> None:
    for env in list(_LIVE):
        env.close()


def neighbours(tile: int, size: int) -> list[int]:
    """The tiles next to ``tile`` (no diagonals) on a ``size`` x ``size`` pad."""
    row, col = divmod(tile, size)
    out = []
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        r, c = row + dr, col + dc
        if 0 <= r < size and 0 <= c < size:
            out.append(r * size + c)
    return out


def draw_sequence(rng: np.random.Generator, size: int, length: int) -> np.ndarray:
    """A random self-avoiding walk of ``length`` tiles (upstream's distribution: restart when stuck)."""
    while True:
        seq = [int(rng.integers(size * size))]
        while len(seq) < length:
            options = [t for t in neighbours(seq[-1], size) if t not in seq]
            if not options:
                break
            seq.append(options[int(rng.integers(len(options)))])
        if len(seq) == length:
            return np.array(seq, dtype=np.int64)


def _rgba(rgb: tuple[int, int, int]) -> str:
    return " ".join(f"{c / 255:.6g}" for c in rgb) + " 1"


def model_xml(size: int) -> str:
    """The MJCF of an N x N pad: lengths in pixels, one unit of time per step, a unit point mass on two slides."""
    pad = size * PITCH
    tiles = "\n".join(
        f'    <geom name="tile{k}" type="box" size="{TILE / 2} {TILE / 2} 0.25" '
        f'pos="{(k % size + 0.5) * PITCH} {-(k // size + 0.5) * PITCH} 0.25" rgba="{_rgba(LIGHT_OFF)}"/>'
        for k in range(size * size)
    )
    height = 20 * pad
    fovy = np.degrees(2 * np.arctan(0.5 * pad / height))
    return f"""<mujoco model="numpad">
  <option timestep="1" integrator="Euler" gravity="0 0 0"/>
  <statistic extent="{pad}" center="{pad / 2} {-pad / 2} 0"/>
  <visual>
    <headlight ambient="0.5 0.5 0.5" diffuse="0.5 0.5 0.5" specular="0 0 0"/>
    <quality shadowsize="0" offsamples="0"/>
  </visual>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <geom name="ground" type="box" size="{pad / 2} {pad / 2} 0.5" pos="{pad / 2} {-pad / 2} -0.5"
          rgba="{_rgba(GROUND)}"/>
{tiles}
    <body name="ball">
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <joint name="row" type="slide" axis="0 -1 0"/>
      <joint name="column" type="slide" axis="1 0 0"/>
      <geom name="ball" type="sphere" size="{BALL / 2}" pos="0 0 {0.5 + BALL / 2}" rgba="{_rgba(BALL_RGB)}"/>
    </body>
    <camera name="top" pos="{pad / 2} {-pad / 2} {height}" xyaxes="1 0 0 0 1 0" fovy="{fovy:.6f}"/>
  </worldbody>
  <actuator>
    <motor name="row" joint="row" gear="{ACCELERATION}" ctrlrange="-1 1" ctrllimited="true"/>
    <motor name="column" joint="column" gear="{ACCELERATION}" ctrlrange="-1 1" ctrllimited="true"/>
  </actuator>
</mujoco>
"""


class Numpad(gym.Env):
    """Numpad on MuJoCo. Kwargs: see :mod:`membench_envs.catalogue.numpad` (``PARAMS``)."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        p = check_kwargs("Numpad", PARAMS, kwargs)
        self.mode, self.obs_variant = p["mode"], p["obs_variant"]
        self.size, self.n = p["numpad_size"], p["sequence_length"]
        self.tiles = self.size * self.size
        if self.n > self.tiles:
            raise ValueError(
                f"Numpad: sequence_length={self.n} is not allowed; a {self.size}x{self.size} pad has "
                f"{self.tiles} tiles, so sequence_length must be <= {self.tiles}"
            )
        self.T = EPISODE_LENGTH[self.mode] if p["max_steps"] is None else p["max_steps"]
        self.speed_cap, self.obs_mode, self.image_size = p["speed_cap"], p["obs_mode"], p["image_size"]
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; valid: {', '.join(self.metadata['render_modes'])}")
        self.render_mode = render_mode
        self.env_id = IDS[self.mode]
        self._mujoco = self._import_mujoco(needs_gl=self.obs_mode == "image" or render_mode is not None)
        mj = self._mujoco
        self.model = mj.MjModel.from_xml_string(model_xml(self.size))
        self.data = mj.MjData(self.model)
        self._tile_geoms = np.array(
            [mj.mj_name2id(self.model, mj.mjtObj.mjOBJ_GEOM, f"tile{k}") for k in range(self.tiles)]
        )
        self._camera_id = mj.mj_name2id(self.model, mj.mjtObj.mjOBJ_CAMERA, "top")
        self._renderers: dict[int, Any] = {}
        _LIVE.add(self)
        self.pad = self.size * PITCH
        self.rolling = self.mode != "discrete"

        if self.mode == "discrete":
            self.action_space = gym.spaces.Discrete(len(MOVES))
        elif self.mode == "continuous":
            self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        else:
            self.action_space = gym.spaces.Discrete(len(ACCELERATIONS))
        self.observation_space = self._spaces()

        self.seq = np.zeros(self.n, dtype=np.int64)
        self._ranks = np.zeros(self.tiles + 1, dtype=np.float32)
        self.lights = np.zeros(self.tiles, dtype=bool)
        self._shown = self.lights  # the lights of the last observation (all of the sequence on a completion)
        self.next_index, self.max_index, self.prev_tile, self.t, self.completions = 0, -1, -1, 0, 0
        self.cell = np.zeros(2, dtype=np.int64)  # discrete: the ball's (row, column) tile
        self._started = self._done = False

    def _import_mujoco(self, needs_gl: bool):
        if importlib.util.find_spec("mujoco") is None:
            require("mujoco", "numpad", env_id=self.env_id)  # raises MissingExtraError naming the fix
        self._gl: str | None
        try:
            self._gl = select_mujoco_gl(self.env_id)  # the headless backend our renderer makes its context on
        except MissingSystemLibraryError:
            if needs_gl:
                raise
            self._gl = None  # vector observations without render_mode need no OpenGL
        return require("mujoco", "numpad", env_id=self.env_id)

    # --- spaces ------------------------------------------------------------------------------------------------
    def _partial_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.rolling:
            return np.zeros(2 * self.tiles), np.ones(2 * self.tiles)
        v = 1.0 if self.speed_cap else np.inf
        low = np.concatenate([[0.0, 0.0, -v, -v], np.zeros(self.tiles)])
        high = np.concatenate([[1.0, 1.0, v, v], np.ones(self.tiles)])
        return low, high

    def _spaces(self) -> gym.Space:
        low, high = self._partial_bounds()
        oracle_n, extra_n = self.tiles + 1, 1 + self.tiles + 1

        def box(lo, hi) -> gym.spaces.Box:
            return gym.spaces.Box(np.asarray(lo, np.float32), np.asarray(hi, np.float32), dtype=np.float32)

        oracle = box(np.zeros(oracle_n), np.ones(oracle_n))
        full_low = np.concatenate([low, np.zeros(oracle_n + extra_n)])
        full_high = np.concatenate([high, np.ones(oracle_n + extra_n)])
        if self.obs_mode == "vector":
            if self.obs_variant == "partial":
                return box(low, high)
            if self.obs_variant == "oracle":
                return box(np.concatenate([low, oracle.low]), np.concatenate([high, oracle.high]))
            return box(full_low, full_high)
        image = gym.spaces.Box(0, 255, (self.image_size, self.image_size, 3), np.uint8)
        if self.obs_variant == "partial":
            return gym.spaces.Dict({"image": image})
        if self.obs_variant == "oracle":
            return gym.spaces.Dict({"image": image, "oracle": oracle})
        return gym.spaces.Dict({"image": image, "state": box(full_low, full_high)})

    # --- the ball ----------------------------------------------------------------------------------------------
    def tile_at(self, row: float, col: float) -> int:
        """The tile whose square holds the point (row, column), or -1 on the spacing (upstream's test)."""
        i, j = int(row / PITCH), int(col / PITCH)
        ci, cj = (i + 0.5) * PITCH, (j + 0.5) * PITCH
        half = TILE / 2
        if ci - half < row < ci + half and cj - half < col < cj + half:
            return i * self.size + j
        return -1

    @property
    def ball(self) -> np.ndarray:
        """The ball's centre (row, column) in pixels."""
        return self.data.qpos[:2].copy()

    @property
    def velocity(self) -> np.ndarray:
        """The ball's velocity (row, column) in pixels per step."""
        return self.data.qvel[:2].copy()

    def _roll(self, a_row: float, a_col: float) -> int:
        """One step of the rolling ball under an acceleration (row, column); returns the tile under its centre (-1:
        none). Plain floats: two numbers per step are cheaper that way than as numpy arrays."""
        d = self.data
        qpos, qvel, ctrl = d.qpos, d.qvel, d.ctrl
        if self.speed_cap:  # the motor cannot push past the speed limit
            v_row, v_col = float(qvel[0]), float(qvel[1])
            a_row = min(max(a_row, -MAX_SPEED - v_row), MAX_SPEED - v_row)
            a_col = min(max(a_col, -MAX_SPEED - v_col), MAX_SPEED - v_col)
        ctrl[0], ctrl[1] = a_row / ACCELERATION, a_col / ACCELERATION
        self._mujoco.mj_step(self.model, d)
        edge = self.pad - 1
        for axis in (0, 1):  # the pad's edge stops the ball dead along that axis
            x = float(qpos[axis])
            if x <= 0.0 or x >= edge:
                qpos[axis] = min(max(x, 0.0), edge)
                qvel[axis] = 0.0
        return self.tile_at(float(qpos[0]), float(qpos[1]))

    def _place_on_tile(self) -> None:
        self.data.qpos[:2] = (self.cell + 0.5) * PITCH
        self.data.qvel[:2] = 0.0

    # --- the rules ---------------------------------------------------------------------------------------------
    def _wrong(self) -> None:
        self.lights[:] = False
        self.next_index = 0

    def _correct(self) -> float:
        """The ball pressed the next tile of the sequence."""
        reward = 0.0
        if self.next_index > self.max_index:
            reward, self.max_index = 1.0, self.next_index
        self.lights[self.seq[self.next_index]] = True
        self.next_index += 1
        if self.next_index == self.n:  # completed: shown lit once, then dark and paying again
            self._shown = self.lights.copy()
            self.lights[:] = False
            self.next_index, self.max_index = 0, -1
            self.completions += 1
        return reward

    # --- observations ------------------------------------------------------------------------------------------
    def oracle(self) -> np.ndarray:
        """Per tile its rank k/n in the sequence (0 off it), then the progress (index of the next tile) / n."""
        out = self._ranks.copy()
        out[-1] = self.next_index / self.n
        return out

    def _vector(self) -> np.ndarray:
        shown = self._shown.astype(np.float32)
        if self.rolling:
            d = self.data
            head = np.array(
                [d.qpos[0] / self.pad, d.qpos[1] / self.pad, d.qvel[0] / MAX_SPEED, d.qvel[1] / MAX_SPEED],
                dtype=np.float32,
            )
            return np.concatenate([head, shown])
        ball = np.zeros(self.tiles, dtype=np.float32)
        ball[self.cell[0] * self.size + self.cell[1]] = 1.0
        return np.concatenate([shown, ball])

    def _full(self, partial: np.ndarray, oracle: np.ndarray) -> np.ndarray:
        prev = np.zeros(self.tiles, dtype=np.float32)
        if self.prev_tile >= 0:
            prev[self.prev_tile] = 1.0
        tail = np.array([(self.max_index + 1) / self.n], dtype=np.float32)
        return np.concatenate([partial, oracle, tail, prev, np.array([self.t / self.T], dtype=np.float32)])

    def _observe(self, oracle: np.ndarray):
        if self.obs_mode == "vector":
            partial = self._vector()
            if self.obs_variant == "partial":
                return partial
            if self.obs_variant == "oracle":
                return np.concatenate([partial, oracle])
            return self._full(partial, oracle)
        obs = {"image": self._picture(self.image_size)}
        if self.obs_variant == "oracle":
            obs["oracle"] = oracle
        elif self.obs_variant == "full":
            obs["state"] = self._full(self._vector(), oracle)
        return obs

    # --- pictures ----------------------------------------------------------------------------------------------
    def _picture(self, side: int) -> np.ndarray:
        """The pad seen from above: ``side`` x ``side`` uint8 RGB."""
        mj = self._mujoco
        on, off = np.array(LIGHT_ON + (255,)) / 255, np.array(LIGHT_OFF + (255,)) / 255
        self.model.geom_rgba[self._tile_geoms] = np.where(self._shown[:, None], on, off)
        mj.mj_kinematics(self.model, self.data)  # the ball where it is now (mj_step leaves the pre-step poses)
        mj.mj_camlight(self.model, self.data)
        if self._gl is None:
            self._gl = select_mujoco_gl(self.env_id)  # no OpenGL library: one error naming the packages
        try:
            renderer = self._renderers.get(side)
            if renderer is None:
                renderer = self._renderers[side] = HeadlessRenderer(self.model, side, side, self._gl)
                if not _exit_hook:
                    atexit.register(_close_renderers)
                    _exit_hook.append(True)
            return renderer.render(self.data, self._camera_id)
        except Exception as exc:
            backend = self._gl or "egl"
            raise RuntimeError(
                f"{self.env_id}: MuJoCo could not render through {backend} ({type(exc).__name__}: "
                f"{exc}). Fix (Debian/Ubuntu, as root): apt-get install "
                f"{render_error_hint(backend)}"
            ) from exc

    def render(self):
        """``"rgb_array"``: the pad from above, 240 x 240 uint8 (lit tiles as last observed); None otherwise."""
        if self.render_mode == "rgb_array":
            return self._picture(RENDER_SIZE)
        return None

    # --- gymnasium API -----------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, "Numpad.reset")
        super().reset(seed=seed)
        rng = self.np_random
        self.seq = draw_sequence(rng, self.size, self.n)
        self._ranks = np.zeros(self.tiles + 1, dtype=np.float32)
        self._ranks[self.seq] = np.arange(1, self.n + 1) / self.n
        self.lights[:] = False
        self._shown = self.lights
        self.next_index, self.max_index, self.prev_tile, self.t, self.completions = 0, -1, -1, 0, 0
        self._mujoco.mj_resetData(self.model, self.data)
        if self.rolling:
            while True:  # uniform on the pad, off the first tile of the sequence
                row, col = rng.random(2) * self.pad
                if self.tile_at(row, col) != self.seq[0]:
                    break
            self.data.qpos[:2] = row, col
        else:
            others = np.delete(np.arange(self.tiles), self.seq[0])
            self.cell[:] = divmod(int(others[rng.integers(len(others))]), self.size)
            self._place_on_tile()
        self._started, self._done = True, False
        oracle = self.oracle()
        return self._observe(oracle), {"oracle": oracle}

    def _push(self, action) -> tuple[float, float]:
        """A continuous action as two floats (full precision), or one clear ValueError (see ``check_action``)."""
        if type(action) is np.ndarray and action.shape == (2,) and action.dtype.kind == "f":  # the common case
            a_row, a_col = float(action[0]), float(action[1])
            if -1.0 <= a_row <= 1.0 and -1.0 <= a_col <= 1.0:  # also False for NaN
                return a_row, a_col
        check_action(self.action_space, action)  # raises, or accepts e.g. a list
        values = np.asarray(action, dtype=np.float64)
        return float(values[0]), float(values[1])

    def step(self, action):
        check_can_step(self._started, self._done)
        if self.mode == "continuous":
            push = self._push(action)
        else:
            a = check_action(self.action_space, action)
        self._shown = self.lights
        reward = 0.0
        if self.mode == "discrete":
            self.cell = np.clip(self.cell + MOVES[a], 0, self.size - 1)
            self._place_on_tile()
            tile = int(self.cell[0] * self.size + self.cell[1])
            if tile != self.seq[self.next_index]:
                self._wrong()
            if tile == self.seq[self.next_index]:  # a wrong press on the first tile starts again at once
                reward = self._correct()
        else:
            if self.mode != "continuous":
                push = ACCELERATIONS[a]
            tile = self._roll(float(push[0]) * ACCELERATION, float(push[1]) * ACCELERATION)
            if tile >= 0 and tile != self.prev_tile:  # entering a tile presses it
                if tile == self.seq[self.next_index]:
                    reward = self._correct()
                else:
                    self._wrong()
        self.prev_tile = tile
        self.t += 1
        terminated = self.t >= self.T
        self._done = terminated
        oracle = self.oracle()
        info: dict[str, Any] = {"oracle": oracle}
        if terminated:
            info["success"] = self.completions > 0
            info["completions"] = self.completions
        return self._observe(oracle), reward, terminated, False, info

    def close(self):
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()

    # --- exact resume (membench_agents.runs.envstate) -----------------------------------------------------------------
    #: The ball's state lives in MuJoCo's MjData, outside Python: it is saved through the two methods below (MuJoCo's
    #: full integration state). The model is rebuilt from the kwargs and renderers are caches, so neither is saved;
    #: everything else (sequence, lights, counters) is plain attributes.
    membench_external_state = ("model", "data", "_renderers")

    def membench_get_external(self) -> dict[str, np.ndarray]:
        mj = self._mujoco
        spec = mj.mjtState.mjSTATE_INTEGRATION
        state = np.empty(mj.mj_stateSize(self.model, spec), dtype=np.float64)
        mj.mj_getState(self.model, self.data, state, spec)
        return {"mujoco_state": state}

    def membench_set_external(self, state: dict[str, np.ndarray]) -> None:
        mj = self._mujoco
        values = np.asarray(state["mujoco_state"], dtype=np.float64)
        spec = mj.mjtState.mjSTATE_INTEGRATION
        if values.shape != (mj.mj_stateSize(self.model, spec),):
            raise ValueError(
                f"{self.env_id}: the saved MuJoCo state has {values.size} values, this pad needs "
                f"{mj.mj_stateSize(self.model, spec)}; it was saved from another configuration"
            )
        mj.mj_setState(self.model, self.data, values, spec)
        mj.mj_forward(self.model, self.data)
