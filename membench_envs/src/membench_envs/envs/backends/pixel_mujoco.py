"""POBAX's visual continuous control (``ant_pixels``, ``halfcheetah_pixels`` of ``pobax/envs/__init__.py``) on
Gymnasium's MuJoCo v5 tasks: ``POBAX/Ant-Pixels-v0`` (``Ant-v5`` with ``include_cfrc_ext_in_observation=False``, Brax's
``use_contact_forces=False``) and ``POBAX/HalfCheetah-Pixels-v0`` (``HalfCheetah-v5``). Extra ``[mujoco]``.

Pictures. The authors render Brax's MuJoCo model with the Madrona MJX batch renderer (``PixelMadronaVecEnvWrapper``:
``enabled_cameras = [0]``, an ``image_size`` x ``image_size`` RGB picture, the alpha channel dropped), which needs a
CUDA GPU and a source build. Here MuJoCo's own OpenGL renderer draws the same camera headless on the CPU (EGL or
OSMesa, :mod:`membench_envs.envs.core.mujoco_gl`): camera 0 of both Brax models is ``track`` (``trackcom``, 3 m
beside the torso, looking at it), the same camera as Gymnasium's models' (their only camera, also id 0). The
renderers shade differently (the paper notes Madrona's "dark coloration" artifacts), so the pictures are a
substitute, not the authors' pixels. One frame, no frame stacking; ``image_size`` = 32 (the paper and every script of
the authors; the code's default argument is 64 but ``ppo.py`` sets 32). uint8 values 0-255 (the authors' images are
0-255 floats, ``normalize_image=False``).

Observation variants:

- ``partial``: the picture, uint8 (``image_size``, ``image_size``, 3) (POBAX's ``<robot>_pixels``);
- ``oracle``: a ``Dict`` ``{"image": the picture, "oracle": the state}``: what one frame hides (velocities, and poses
  the camera cannot resolve) added. ``info["oracle"]`` is the state in every variant. The authors have no
  perfect-memory observation for these tasks;
- ``full``: Gymnasium's state observation, float32 (27,) for Ant and (17,) for HalfCheetah: the ceiling input (the
  authors' ``*_observable_madrona`` scripts run a memoryless PPO on the Brax state). The paper writes (18,) for
  HalfCheetah; Brax's HalfCheetah observation, like Gymnasium's, has 17 dims (qpos without x (8) and qvel (9)).

Physics and episodes are :mod:`membench_envs.envs.backends.masked_mujoco`'s: Gymnasium's MuJoCo dynamics, not
Brax's ``positional`` backend (absolute returns are not comparable with the paper's curves), Ant terminates when
unhealthy, a time limit of T = 1000 steps (``max_steps``), actions in ``Box(-1, 1)`` (outside it: ``ValueError``).

Speed: one OpenGL render per step, on the CPU (Mesa's llvmpipe) where there is no GPU. The picture is drawn into an
offscreen buffer of its own size, without multisampling, with a shadow map of 8 pixels per picture pixel (MuJoCo's
defaults, a 640 x 480 buffer, 4 samples and a 4096 x 4096 shadow map, made a 32 x 32 picture cost about 90 ms);
measured on a loaded 2-core CPU (EGL on llvmpipe, random actions, one environment): Ant about 87 steps/s and
HalfCheetah about 127 steps/s with pictures, against 1.6k and 4.5k steps/s for the state alone. Enough for CPU-sized
budgets (1e5 steps in 15-20 minutes), not for the paper's 5e6 steps x 30 seeds.

``render_mode="rgb_array"``: the observation picture enlarged 8 times (what the agent sees).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs.catalogue.pobax_pixels import PARAMS
from membench_envs.envs.backends.gym_mujoco import GymMujocoTask
from membench_envs.envs.core.mujoco_gl import HeadlessRenderer, select_mujoco_gl
from membench_envs.envs.core.native import check_render_mode
from membench_envs.envs.core.params import check_kwargs

#: The camera of the authors' Madrona renderer (``enabled_cameras = [0]``): ``track`` in both models.
CAMERA_ID = 0
RENDER_SCALE = 8
#: The shadow map's side per picture pixel (MuJoCo's default map is 4096 x 4096 whatever the picture, which makes a
#: 32 x 32 picture take about 90 ms on a CPU; 8 x 32 = 256 changes its pixels by about 1% of their range on average).
SHADOW_SCALE = 8


class PixelMujoco(GymMujocoTask):
    """One POBAX visual continuous-control task (``robot`` is set by the ID). Kwargs: ``PARAMS`` of
    :mod:`membench_envs.catalogue.pobax_pixels`."""

    observation_space: gym.spaces.Space

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        p = check_kwargs("PixelMujoco", PARAMS, kwargs)
        self.obs_variant, self.size = p["obs_variant"], p["image_size"]
        env_id = f"POBAX/{p['robot']}-Pixels-v0"
        self.render_mode = check_render_mode(render_mode, ("rgb_array",))
        self._gl = select_mujoco_gl(env_id)  # before mujoco's import
        spec = self._build(p["robot"], env_id, p["max_steps"])
        image = gym.spaces.Box(0, 255, (self.size, self.size, 3), np.uint8)
        state = gym.spaces.Box(-np.inf, np.inf, (spec["dim"],), np.float32)
        self.observation_space = {
            "partial": image,
            "oracle": gym.spaces.Dict({"image": image, "oracle": state}),
            "full": state,
        }[self.obs_variant]
        self._image: np.ndarray | None = None

    def picture(self) -> np.ndarray:
        """The camera's current picture, uint8 (image_size, image_size, 3), top row first."""
        try:
            if self._renderer is None:
                vis = self.inner.model.vis  # drawing only: an offscreen buffer and a shadow map for the picture's size
                vis.global_.offwidth = vis.global_.offheight = self.size
                vis.quality.shadowsize = SHADOW_SCALE * self.size
                vis.quality.offsamples = 0
                self._renderer = HeadlessRenderer(self.inner.model, self.size, self.size, self._gl)
            return self._renderer.render(self.inner.data, CAMERA_ID)
        except Exception as exc:
            raise self._render_error(self._gl, exc) from exc

    def _observe(self, obs: np.ndarray) -> tuple[Any, dict[str, Any]]:
        state = np.asarray(obs, dtype=np.float32)
        if self.obs_variant == "full":
            self._image = None  # drawn only when asked for (render())
            return state, {"oracle": state.copy()}
        self._image = self.picture()
        if self.obs_variant == "oracle":
            return {"image": self._image, "oracle": state}, {"oracle": state.copy()}
        return self._image, {"oracle": state}

    def render(self):
        """``"rgb_array"``: the observation picture enlarged 8 times, uint8; None without a render mode."""
        if self.render_mode != "rgb_array":
            return None
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before render()")
        image = self.picture() if self._image is None else self._image
        return np.repeat(np.repeat(image, RENDER_SCALE, axis=0), RENDER_SCALE, axis=1)
