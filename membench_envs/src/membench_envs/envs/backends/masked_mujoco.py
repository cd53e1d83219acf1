"""POBAX's masked MuJoCo tasks (``Walker-V-v0``, ``HalfCheetah-V-v0`` … of ``pobax/envs/__init__.py``) on Gymnasium's
MuJoCo v5 environments: ``POBAX/<Robot>-<P|V>-v0`` for Walker (``Walker2d-v5``), Hopper (``Hopper-v5``), Ant
(``Ant-v5`` with ``include_cfrc_ext_in_observation=False``, 27 dims: Brax's ``use_contact_forces=False``) and
HalfCheetah (``HalfCheetah-v5``). Extra ``[mujoco]``.

Physics. POBAX runs Brax's ``positional`` backend; here the physics is MuJoCo's (Gymnasium v5, its default
constructor arguments). Both observations are qpos without the root's x (without x and y for Ant) followed by qvel,
in the same joint order, with qvel clipped to ±10 for Walker and Hopper in both, the same control step (0.008 s for
Walker and Hopper, 0.05 s for HalfCheetah and Ant) and the same reward weights, so the masks keep the same
quantities; the dynamics differ, so absolute returns are not comparable with the paper's curves.

Masks (POBAX's ``mask_dims``, the indices KEPT, applied literally to Gymnasium v5's observation):

============  ============================  ===========================================================
robot         P keeps                       V keeps
============  ============================  ===========================================================
Walker (17)   0-7: rootz, rooty, 6 angles   8-16: d(rootx, rootz, rooty) + 6 joint velocities
Hopper (11)   0-4: rootz, rooty, 3 angles   5-10: the 6 velocities
Ant (27)      0-12: z, quaternion, 8 angles 13-26: torso linear + angular velocity, 8 joint velocities
HalfCheetah   0-3, 8-12: rootz, rooty,      4-7, 13-16: bfoot, fthigh, fshin, ffoot angles and their
(17)          bthigh, bshin angles + the    velocities
              velocities of rootx, rootz,
              rooty, bthigh, bshin
============  ============================  ===========================================================

HalfCheetah's masks do not split positions from velocities (its layout is qpos[1:] (8) then qvel (9), and the
authors' indices split the legs instead): ``V`` keeps the front leg's and the back foot's angles and velocities,
``P`` the torso and the back thigh and shin. They are kept as the authors' code has them.

Observation variants (float32 vectors):

- ``partial``: the kept dims, in Gymnasium's order (POBAX's ``<Robot>-<P|V>-v0``);
- ``oracle``: ``partial`` followed by the removed dims, in Gymnasium's order (what the mask hides);
  ``info["oracle"]`` is that removed part in every variant;
- ``full``: Gymnasium's whole observation, in its order: POBAX's ``<Robot>-F-v0`` (the ceiling input, on which the
  paper trains an RNN for Walker-V and HalfCheetah-V). So ``-F`` is a variant of both IDs, not an ID of its own.
  ``oracle`` carries the same numbers as ``full``, reordered so that the partial observation comes first.

Episodes. Gymnasium's dynamics, reward and termination (Walker, Hopper and Ant end when unhealthy, as Brax's do),
and a time limit of T = 1000 steps (Brax's ``episode_length``; truncated), ``max_steps`` to change it. Actions are
Gymnasium's ``Box(-1, 1)``: an action outside it is a ``ValueError`` (POBAX clips actions to [-1, 1]; an agent with
unbounded outputs clips before stepping). ``info`` passes Gymnasium's info on, with ``"oracle"`` added.

``render_mode="rgb_array"``: a 240 x 320 picture from the model's ``track`` camera, through MuJoCo's headless OpenGL
(EGL or OSMesa, :mod:`membench_envs.envs.core.mujoco_gl`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from membench_envs.catalogue.pobax_mujoco import MASKS, PARAMS, ROBOTS
from membench_envs.envs.backends.gym_mujoco import GymMujocoTask
from membench_envs.envs.core.mujoco_gl import HeadlessRenderer, select_mujoco_gl
from membench_envs.envs.core.native import check_render_mode
from membench_envs.envs.core.params import check_kwargs

RENDER_SIZE = (240, 320)


def kept_and_removed(robot: str, mask: str) -> tuple[np.ndarray, np.ndarray]:
    """The Gymnasium observation indices ``mask`` keeps and those it removes, each in increasing order."""
    keep = np.array(MASKS[robot][mask], dtype=np.int64)
    removed = np.setdiff1d(np.arange(ROBOTS[robot]["dim"]), keep)
    return keep, removed


class MaskedMujoco(GymMujocoTask):
    """One POBAX masked MuJoCo task (``robot`` and ``mask`` are set by the ID). Kwargs: ``PARAMS`` of
    :mod:`membench_envs.catalogue.pobax_mujoco`."""

    observation_space: gym.spaces.Box

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        p = check_kwargs("MaskedMujoco", PARAMS, kwargs)
        self.mask, self.obs_variant = p["mask"], p["obs_variant"]
        env_id = f"POBAX/{p['robot']}-{self.mask}-v0"
        self.render_mode = check_render_mode(render_mode, ("rgb_array",))
        self._gl = select_mujoco_gl(env_id) if render_mode is not None else None  # before mujoco's import
        spec = self._build(p["robot"], env_id, p["max_steps"])
        self.keep, self.removed = kept_and_removed(self.robot, self.mask)
        size = {"partial": len(self.keep), "oracle": spec["dim"], "full": spec["dim"]}[self.obs_variant]
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self._order = np.concatenate([self.keep, self.removed])  # the oracle variant's order

    def _observe(self, obs: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        obs = np.asarray(obs, dtype=np.float32)
        extra = {"oracle": obs[self.removed]}
        if self.obs_variant == "partial":
            return obs[self.keep], extra
        if self.obs_variant == "oracle":
            return obs[self._order], extra
        return obs, extra

    def render(self):
        """``"rgb_array"``: a uint8 (240, 320, 3) picture from the ``track`` camera; None without a render mode."""
        if self.render_mode != "rgb_array":
            return None
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before render()")
        import mujoco

        gl = self._gl or select_mujoco_gl(self.env_id)
        try:
            if self._renderer is None:
                self._renderer = HeadlessRenderer(self.inner.model, *RENDER_SIZE, gl)
            camera = mujoco.mj_name2id(self.inner.model, mujoco.mjtObj.mjOBJ_CAMERA, "track")
            return self._renderer.render(self.inner.data, camera)
        except Exception as exc:
            raise self._render_error(gl, exc) from exc
