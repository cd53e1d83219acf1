"""MiniGrid-Memory (minigrid 3.2.0 ``MemoryEnv``) in the set-ups of the memory-classification paper.

The layout (minigrid's): a 3x3 start room on the left holds a green key or ball; a one-cell corridor along the
middle row leads east to a junction; the cells two above and two below the junction hold a key and a ball in
random order. The agent starts facing east at a random cell of the corridor row, and must enter the cell next
to the end object that matches the start-room object. Success gives ``1 − 0.9·t/95`` (t = steps taken),
the wrong arm gives 0 and ends the episode, and the episode is truncated after 95 steps (paper, App. F).
Fixed vs variable corridor: see :mod:`membench_envs.catalogue.minigrid`.

Actions: 0 = turn left, 1 = turn right, 2 = forward (``full_action_space=True``: minigrid's 7 actions, the
last four being no-ops in this task).

Observations (a ``Dict`` in every variant):

- ``partial``: ``{"image"}``: the agent's 3x3 egocentric view. ``obs_encoding="rgb"`` (default, as the paper
  authors' code; see :mod:`membench_envs.catalogue.minigrid`): the view rendered as minigrid's
  ``RGBImgPartialObsWrapper`` does, uint8 (3·tile_size, 3·tile_size, 3), the agent drawn at the bottom centre
  facing up. ``obs_encoding="symbolic"``: minigrid's encoding (object, colour, state) per cell, uint8 (3, 3, 3);
  the agent stands at ``image[1, 2]`` looking towards ``image[1, 0]``. No direction, no mission string (the
  paper feeds the view image only).
- ``oracle``: ``partial`` + ``{"oracle"}``: the start-room object, one-hot float32 ``[key, ball]``: what
  must be remembered.
- ``full``: ``{"image"}``: the whole grid (size, size, 3) with the agent drawn in its cell (minigrid's
  fully-observable symbolic encoding, whatever ``obs_encoding``), ``{"agent"}``: [x, y, direction],
  ``{"time"}``: step / 95 (the reward and the time limit depend on it).

``info["oracle"]`` is the one-hot start object in every variant; ``info["success"]`` is set when the episode
ends.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.minigrid import PARAMS, env_id
from membench_envs.envs.core.native import check_can_step
from membench_envs.envs.core.params import check_kwargs, check_seed
from membench_envs.envs.core.wrap import check_action

_OBJECTS = ("key", "ball")


class MiniGridMemory(gym.Env):
    """minigrid's ``MemoryEnv`` with the paper's view, time limit and actions, and the membench variants."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        """``kwargs``: see ``catalogue.minigrid.PARAMS`` (checked and completed there)."""
        p = check_kwargs("MiniGridMemory", PARAMS, kwargs)
        size, random_length, agent_view_size = p["size"], p["random_length"], p["agent_view_size"]
        self.obs_variant = p["obs_variant"]
        self.obs_encoding, self.tile_size = p["obs_encoding"], p["tile_size"]
        self.env_id = env_id(size, random_length)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; valid: {self.metadata['render_modes']}")
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # minigrid imports pygame
        require("minigrid", "minigrid", env_id=self.env_id)
        memory_env = importlib.import_module("minigrid.envs.memory").MemoryEnv
        self.render_mode = render_mode
        self.size, self.random_length = int(size), bool(random_length)
        self.max_steps = p["max_steps"]
        self.minigrid = memory_env(
            size=self.size,
            random_length=self.random_length,
            max_steps=self.max_steps,
            agent_view_size=int(agent_view_size),
            render_mode=render_mode,
        )
        self._obj_idx = importlib.import_module("minigrid.core.constants").OBJECT_TO_IDX
        self.action_space = gym.spaces.Discrete(7 if p["full_action_space"] else 3)
        v = int(agent_view_size)
        side = v * self.tile_size if self.obs_encoding == "rgb" else v
        view = gym.spaces.Box(0, 255, (side, side, 3), dtype=np.uint8)
        oracle = gym.spaces.Box(0.0, 1.0, (2,), dtype=np.float32)
        if self.obs_variant == "partial":
            self.observation_space = gym.spaces.Dict({"image": view})
        elif self.obs_variant == "oracle":
            self.observation_space = gym.spaces.Dict({"image": view, "oracle": oracle})
        else:
            s = self.size
            self.observation_space = gym.spaces.Dict(
                {
                    "image": gym.spaces.Box(0, 255, (s, s, 3), dtype=np.uint8),
                    "agent": gym.spaces.Box(np.zeros(3), np.array([s - 1, s - 1, 3]), dtype=np.int64),
                    "time": gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32),
                }
            )
        self._started = False
        self._done = False

    # --- what the task is ----------------------------------------------------------------------------------
    @property
    def start_object(self) -> str:
        """'key' or 'ball': the object in the start room (what must be remembered)."""
        return self.minigrid.grid.get(1, self.size // 2 - 1).type

    @property
    def junction(self) -> tuple[int, int]:
        """The junction cell (x, y): the corridor row at the column between the two end objects."""
        return int(self.minigrid.success_pos[0]), self.size // 2

    def _oracle(self) -> np.ndarray:
        out = np.zeros(2, dtype=np.float32)
        out[_OBJECTS.index(self.start_object)] = 1.0
        return out

    def _view(self, mg_obs: dict) -> np.ndarray:
        if self.obs_encoding == "rgb":  # minigrid's RGBImgPartialObsWrapper: the agent's window, rendered
            return self.minigrid.get_frame(tile_size=self.tile_size, agent_pov=True)
        return mg_obs["image"]

    def _observe(self, mg_obs: dict, oracle: np.ndarray) -> dict[str, np.ndarray]:
        if self.obs_variant == "partial":
            return {"image": self._view(mg_obs)}
        if self.obs_variant == "oracle":
            return {"image": self._view(mg_obs), "oracle": oracle.copy()}
        mg = self.minigrid
        grid = mg.grid.encode()
        x, y = mg.agent_pos
        grid[x, y] = (self._obj_idx["agent"], 0, mg.agent_dir)
        return {
            "image": grid,
            "agent": np.array([x, y, mg.agent_dir], dtype=np.int64),
            "time": np.array([mg.step_count / self.max_steps], dtype=np.float32),
        }

    # --- gymnasium API -------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, "MiniGridMemory.reset")
        super().reset(seed=seed)
        mg_obs, _ = self.minigrid.reset(seed=seed)
        self._started, self._done = True, False
        oracle = self._oracle()
        return self._observe(mg_obs, oracle), {"oracle": oracle}

    def step(self, action):
        check_can_step(self._started, self._done)
        a = check_action(self.action_space, action)
        mg_obs, reward, terminated, truncated, _ = self.minigrid.step(a)
        terminated, truncated = bool(terminated), bool(truncated)
        oracle = self._oracle()
        info: dict[str, Any] = {"oracle": oracle}
        self._done = terminated or truncated
        if self._done:
            info["success"] = bool(terminated and tuple(self.minigrid.agent_pos) == self.minigrid.success_pos)
        return self._observe(mg_obs, oracle), float(reward), terminated, truncated, info

    def render(self):
        if self.render_mode == "rgb_array":
            return self.minigrid.render()
        return None

    def close(self):
        self.minigrid.close()
