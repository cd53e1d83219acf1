"""What POBAX's masked and pixel MuJoCo tasks share: one of Gymnasium's MuJoCo v5 environments inside a membench
task (:mod:`membench_envs.envs.backends.masked_mujoco`, :mod:`membench_envs.envs.backends.pixel_mujoco`).

:class:`GymMujocoTask` builds the robot's Gymnasium environment (:data:`membench_envs.catalogue.pobax_mujoco.ROBOTS`),
seeds it (a first reset without a seed draws one from ``np_random``), checks actions, adds the task's time limit of
``T`` steps (truncated, unless the step terminated) and closes the renderer with the environment. A subclass turns
Gymnasium's observation into the variant's observation and ``info`` entries (:meth:`GymMujocoTask._observe`).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs._deps import require
from membench_envs.catalogue.pobax_mujoco import ROBOTS
from membench_envs.envs.core.mujoco_gl import HeadlessRenderer, render_error_hint
from membench_envs.envs.core.native import check_can_step
from membench_envs.envs.core.params import check_seed
from membench_envs.envs.core.wrap import check_action


class GymMujocoTask(gym.Env):
    """A Gymnasium MuJoCo robot (``self.inner``) with the task's seeding, time limit and observation."""

    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 20}  # noqa: RUF012

    def _build(self, robot: str, env_id: str, max_steps: int) -> dict[str, Any]:
        """Make the robot's Gymnasium environment (after the rendering backend is chosen: it must come before
        mujoco's import); returns the robot's catalogue row."""
        self.robot, self.env_id, self.T = robot, env_id, max_steps
        require("mujoco", "mujoco", env_id=env_id)
        require("imageio", "mujoco", env_id=env_id)  # gymnasium's MuJoCo envs import it
        spec = ROBOTS[robot]
        module, name = spec["entry"].split(":")
        self.inner = getattr(importlib.import_module(module), name)(**spec.get("kwargs", {}))
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.inner.dt)}
        self.action_space = self.inner.action_space
        self._renderer: HeadlessRenderer | None = None
        self._started = self._done = False
        self._t = 0
        return spec

    def _observe(self, obs: np.ndarray) -> tuple[Any, dict[str, Any]]:
        """The variant's observation of Gymnasium's ``obs`` and the entries it adds to ``info``."""
        raise NotImplementedError

    def _render_error(self, gl: str, exc: Exception) -> RuntimeError:
        return RuntimeError(
            f"{self.env_id}: MuJoCo could not render through {gl} ({type(exc).__name__}: {exc}). Fix "
            f"(Debian/Ubuntu, as root): apt-get install {render_error_hint(gl)}"
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, f"{self.env_id}.reset")
        super().reset(seed=seed)
        if seed is None and not self._started:  # a first reset without a seed: one drawn from np_random
            seed = int(self.np_random.integers(2**31 - 1))
        obs, info = self.inner.reset(seed=seed)
        self._started, self._done, self._t = True, False, 0
        observation, extra = self._observe(obs)
        return observation, {**info, **extra}

    def step(self, action):
        check_can_step(self._started, self._done)
        a = check_action(self.action_space, action)
        obs, reward, terminated, truncated, info = self.inner.step(a)
        self._t += 1
        terminated = bool(terminated)
        truncated = not terminated and (bool(truncated) or self._t >= self.T)
        self._done = terminated or truncated
        observation, extra = self._observe(obs)
        return observation, float(reward), terminated, truncated, {**info, **extra}

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.inner.close()
        super().close()
