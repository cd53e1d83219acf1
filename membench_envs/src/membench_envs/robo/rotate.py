"""RotateLenient / RotateStrict (paper App. K.7, K.8, Figures 20, 21, Codes 12, 13; Table 1: T = 90, Spatial).

A blue peg (a box 2 ``peg_half_length`` × 2 ``peg_half_width`` × 2 ``peg_half_width`` = 0.24 × 0.05 × 0.05 m, one
colour) lies on the table at a random yaw; the robot must turn it by a target angle θ*, given as a static prompt on
every observation: ``obs["prompt"]``, float32 (1,), radians, in the default ``partial`` variant (RGB + joints +
prompt) and in ``oracle`` and ``rgb``, as the paper (App. K: the prompt "is additionally added to each
observation") and upstream's PPO wrapper (``prompt`` beside the images in every RGB mode); ``obs_variant="prompt"``
(the paper's RGB+joints+prompt name) is the same as ``partial``. The peg looks the same after half a turn and nothing
marks its start, so how far it has turned already can only be known by remembering the start yaw (observation 0).
Positive θ* = counter-clockwise seen from above (the yaw grows about +z).

``prompt_in_obs=False`` drops the prompt (RGB + joints only; ``full`` keeps θ* in its state either way). The task is
then not solvable as posed, only guessable: a policy that turns the peg by a constant c succeeds when |θ* − c| < 0.1
(``angle_threshold``), i.e. with the best c on 0.2 / (π/2 − 0.1) = 13.6% of Pos episodes and on 0.5 · 0.2 / 0.343 =
29.2% of PosNeg episodes (half the targets lie in each sign's range, 0.5 (π/4 − 0.1) = 0.343 rad wide); under
``angle_sampling="paper"`` on 0.2 / (π/2) = 12.7% of either. (:class:`~membench_envs.robo.experts.RotatePolicy`
with ``target=c`` is that guess.)

One phase, ``action``, from t = 0 to T = 90. Episode (every draw from the sub-scene's episode RNG; upstream drew the
peg's xy from torch's global RNG, which ManiSkill seeds on a seeded reset from the first sub-scene's seed only and not
at all on a reset without a seed):

- peg centre at x, y = U(-0.1, 0.1), z = ``peg_half_width`` (lying on the table), yaw θ₀ = U(0, 2π);
- θ* (``angle_sampling="code"``, default, the public code; r = U(0, 1), thr = ``angle_threshold`` = 0.1):
  Pos (``mode="pos_angle"``) θ* = thr + r (π/2 - thr); PosNeg (``"pos_neg_angle"``) |θ*| = thr + r (π/4 - thr), positive
  iff r > 0.5. ``angle_sampling="paper"`` (App. K.7): Pos θ* = U(0, π/2), PosNeg θ* = U(-π/4, π/4).

The oracle ``y_angle_diff`` (Table 1; float32 (1,)) is the rotation still to do: wrap(θ* - wrap(yaw - θ₀)), with
wrap to [-π, π) and yaw = the third XYZ Euler angle of the peg's quaternion, as the public code.

Success (``static`` = every arm joint slower than 0.2 rad/s; never before t = 6: the public code masks t ≤ 5 in the
dense reward modes only, here in every mode):

- **RotateLenient** (default, the public code): |y_angle_diff| < thr ∧ static. ``strict_success=True`` (K.7:
  "maintaining the final orientation in a stable position"): also the peg's angular speed below
  :data:`~membench_envs.catalogue.robo.STRICT_PEG_SPIN` (0.2 rad/s).
- **RotateStrict** (default, the public code): |y_angle_diff| < thr ∧ |x - x₀| < ``pos_threshold`` (0.05) ∧
  |y - y₀| < 0.05 (per axis) ∧ static; other rotation axes unchecked. ``strict_success=True`` (K.8: "within 5cm of
  its initial XY coordinates", "no significant deviation in other rotation axes"): ‖(x, y) - (x₀, y₀)‖ < 0.05, the
  peg's long axis at most :data:`~membench_envs.catalogue.robo.STRICT_PEG_TILT` (0.1 rad) out of the table plane and
  the peg's angular speed below 0.2 rad/s, with the angle and a still arm.

Dense reward (on success the maximum; ``normalized_dense`` = dense / maximum; d = ‖peg centre - tcp‖, Δ =
|y_angle_diff|, ok = Δ < thr):

- **RotateLenient** (max 25): exp(-5 d) + 15 exp(-1.5 Δ) [d < 0.1] + 5 [ok] + 2 [ok ∧ static] (at most 23 without
  success).
- **RotateStrict** (max 100), reached = d < 0.04, pos_ok = |dx|, |dy| < 0.05: 0.5 exp(-3 d) + [reached] (5 exp(-5
  |dx|) + 5 exp(-5 |dy|)) + 35 exp(-Δ) [reached ∧ pos_ok] + 10 [ok ∧ reached ∧ pos_ok] + 5 [that ∧ static] (at most
  60.5 without success).

State (``full`` variant): qpos ‖ qvel ‖ tcp_pose (25) ‖ ``peg_pose`` (7) ‖ ``target_angle`` (1) ‖ [RotateStrict:
``peg_xy_shift`` (2), (x - x₀, y - y₀)] ‖ ``time`` (1, t/T) ‖ ``y_angle_diff`` (1). D = 35 (Lenient), 37 (Strict).

Customise with kwargs or class constants (App. M, Codes 12, 13)::

    gym.make("MIKASA/RotateLenientPos-v0", angle_threshold=0.05)   # obs: rgb, joints, prompt

    class RotateStrictDebug(RotateStrictEnv):     # then membench_envs.robo.make(RotateStrictDebug, ...)
        MODE = "pos_neg_angle"; PEG_HALF_WIDTH = 0.025; PEG_HALF_LENGTH = 0.12; ANGLE_THRESHOLD = 0.1
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import sapien
import torch
from mani_skill.utils import common
from mani_skill.utils.geometry import rotation_conversions

from membench_envs.catalogue.robo import STRICT_PEG_SPIN, STRICT_PEG_TILT
from membench_envs.robo.base import MemoryTabletopEnv
from membench_envs.robo.shapes import add_box

PEG_COLOR = (12 / 255, 42 / 255, 160 / 255, 1.0)


def wrap_angle(x: torch.Tensor) -> torch.Tensor:
    """Map angles to [-π, π)."""
    return torch.remainder(x + math.pi, 2 * math.pi) - math.pi


class _RotatePegEnv(MemoryTabletopEnv):
    """What RotateLenient and RotateStrict share: the peg, the target draw, the angle and the prompt."""

    ORACLE_DTYPE = torch.float32
    PROMPT_DIM = 1
    #: success never counts before this step (the public code: elapsed_steps > 5)
    SUCCESS_FROM: ClassVar[int] = 6
    RENDER_CAMERA_EYE = (0.6, 0.7, 0.6)
    RENDER_CAMERA_TARGET = (0.0, 0.0, 0.35)

    #: the range of the peg centre's start x and y (public code)
    PEG_XY_RANGE: ClassVar[tuple[float, float]] = (-0.1, 0.1)

    def __init__(
        self,
        *args,
        mode: str | None = None,
        angle_threshold: float | None = None,
        peg_half_width: float | None = None,
        peg_half_length: float | None = None,
        angle_sampling: str | None = None,
        prompt_in_obs: bool | None = None,
        **kwargs,
    ):
        # kwargs, defaults and allowed values: the catalogue's (MemoryTabletopEnv.knob)
        self.prompt_in_obs = self.knob("prompt_in_obs", prompt_in_obs)
        self.mode = self.knob("mode", mode)
        self.angle_sampling = self.knob("angle_sampling", angle_sampling)
        self.angle_threshold = float(self.knob("angle_threshold", angle_threshold))
        self.peg_half_width = float(self.knob("peg_half_width", peg_half_width))
        self.peg_half_length = float(self.knob("peg_half_length", peg_half_length))
        self._init_task(kwargs)
        super().__init__(*args, **kwargs)

    def _init_task(self, kwargs: dict) -> None:
        """Pop and check the family's own kwargs (before the scene is built)."""

    # --- platform hooks (phases and T: the catalogue's rotate_timing, via MemoryTabletopEnv.timing) ------------
    def _load_objects(self, options: dict) -> None:
        builder = self.scene.create_actor_builder()
        add_box(builder, (self.peg_half_length, self.peg_half_width, self.peg_half_width), PEG_COLOR)
        builder.set_initial_pose(sapien.Pose(p=[0.0, 0.0, self.PARK_Z]))
        self.peg = self.register_memory_object(builder.build(name="peg"))  # shown at reset, never hidden
        n, dev = self.num_envs, self.device
        self._target = torch.zeros(n, device=dev)
        self._start_yaw = torch.zeros(n, device=dev)
        self._start_xy = torch.zeros((n, 2), device=dev)

    def draw_target(self, r: np.ndarray) -> np.ndarray:
        """θ* from r = U(0, 1) per environment ('code': the public code's draw; 'paper': App. K.7's ranges)."""
        thr = self.angle_threshold
        if self.angle_sampling == "paper":
            return r * (math.pi / 2) if self.mode == "pos_angle" else (r - 0.5) * (math.pi / 2)
        if self.mode == "pos_angle":
            return thr + r * (math.pi / 2 - thr)
        magnitude = thr + r * (math.pi / 4 - thr)
        return np.where(r > 0.5, magnitude, -magnitude)

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        b = len(env_idx)
        r = np.asarray(rng.uniform(0.0, 1.0, 1)).reshape(b)
        yaw = np.asarray(rng.uniform(0.0, 2 * math.pi, 1)).reshape(b)
        xy = np.asarray(rng.uniform(*self.PEG_XY_RANGE, 2)).reshape(b, 2)
        start = np.concatenate([xy, np.full((b, 1), self.peg_half_width)], axis=1)
        q = np.stack([np.cos(yaw / 2), np.zeros(b), np.zeros(b), np.sin(yaw / 2)], axis=1)
        self.show("action", 0, env_idx, start, q=q)
        dev = self.device
        self._target[env_idx] = common.to_tensor(self.draw_target(r), device=dev).float()
        self._start_yaw[env_idx] = common.to_tensor(yaw, device=dev).float()
        self._start_xy[env_idx] = common.to_tensor(xy, device=dev).float()

    @property
    def target_angle(self) -> torch.Tensor:
        """(num_envs,) θ*, the rotation to do (the prompt)."""
        return self._target

    @property
    def start_yaw(self) -> torch.Tensor:
        """(num_envs,) θ₀, the peg's yaw at reset."""
        return self._start_yaw

    def peg_yaw(self) -> torch.Tensor:
        """(num_envs,) the third XYZ Euler angle of the peg's orientation (its yaw when it lies flat); read from the
        simulator on every call (also right after a pose is written)."""
        matrix = rotation_conversions.quaternion_to_matrix(self.peg.pose.q)
        return rotation_conversions.matrix_to_euler_angles(matrix, "XYZ")[:, 2]

    def relative_angle(self) -> torch.Tensor:
        """(num_envs,) how far the peg has turned since reset, wrapped to [-π, π)."""
        return wrap_angle(self.peg_yaw() - self._start_yaw)

    def angle_diff(self) -> torch.Tensor:
        """(num_envs,) ``y_angle_diff``: the rotation still to do, wrapped to [-π, π)."""
        return wrap_angle(self._target - self.relative_angle())

    def peg_tilt(self) -> torch.Tensor:
        """(num_envs,) angle (rad) between the peg's long axis and the table plane."""
        matrix = rotation_conversions.quaternion_to_matrix(self.peg.pose.q)
        return torch.asin(matrix[:, 2, 0].abs().clamp(max=1.0))

    def oracle(self) -> torch.Tensor:
        return self.angle_diff().reshape(-1, 1).clone()

    def oracle_bounds(self):
        return [-math.pi], [math.pi]

    def prompt(self) -> torch.Tensor:
        return self._target.reshape(-1, 1).clone()

    def describe_oracle(self, env_i: int) -> str:
        target, left = float(self._target[env_i]), float(self.angle_diff()[env_i])
        return f"rotate {math.degrees(target):+.1f} deg, left {math.degrees(left):+.1f} deg"

    # --- success and reward -----------------------------------------------------------------------------------
    def _can_succeed(self) -> torch.Tensor:
        return self.elapsed_steps >= self.SUCCESS_FROM

    def _evaluate_task(self) -> dict:
        diff = self.angle_diff()
        correct = diff.abs() < self.angle_threshold
        static = self.agent.is_static(self.STATIC_THRESH)
        peg_p = self.peg.pose.p
        spin = torch.linalg.norm(self.peg.angular_velocity, dim=1)
        info = {
            "y_angle_diff": diff,
            "relative_angle": self.relative_angle(),
            "target_angle": self._target.clone(),
            "is_angle_correct": correct,
            "is_robot_static": static,
            "peg_angular_speed": spin,
            "tcp_to_peg_dist": torch.linalg.norm(peg_p - self.agent.tcp.pose.p, dim=1),
        }
        placed = correct & static & self._placed(info)
        if self.strict_success:
            placed = placed & (spin < STRICT_PEG_SPIN)
        info["success"] = placed & self._can_succeed()
        return info

    def _placed(self, info: dict) -> torch.Tensor:
        """The family's own condition on the peg (RotateLenient: none)."""
        return torch.ones_like(info["is_angle_correct"])

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        state = {"peg_pose": self.peg.pose.raw_pose, "target_angle": self._target.reshape(-1, 1)}
        state.update(self._family_state(info))
        state["time"] = (self.elapsed_steps.float() / self.max_episode_steps).reshape(-1, 1)
        return state

    def _family_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {}


class RotateLenientEnv(_RotatePegEnv):
    """Rotate the peg by the prompted angle; its centre may move (see the module docstring)."""

    MAX_DENSE_REWARD = 25.0
    REACH_THRESH: ClassVar[float] = 0.1

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        d = info["tcp_to_peg_dist"]
        correct = info["is_angle_correct"]
        return {
            "reaching": torch.exp(-5.0 * d),
            "angle": 15.0 * torch.exp(-1.5 * info["y_angle_diff"].abs()) * (d < self.REACH_THRESH).float(),
            "correct_angle": 5.0 * correct.float(),
            "correct_and_static": 2.0 * (correct & info["is_robot_static"]).float(),
        }


class RotateStrictEnv(_RotatePegEnv):
    """Rotate the peg by the prompted angle without moving its centre (see the module docstring)."""

    MAX_DENSE_REWARD = 100.0
    REACH_THRESH: ClassVar[float] = 0.04

    def _init_task(self, kwargs: dict) -> None:
        self.pos_threshold = float(self.knob("pos_threshold", kwargs.pop("pos_threshold", None)))

    def _placed(self, info: dict) -> torch.Tensor:
        shift = self.peg.pose.p[:, :2] - self._start_xy
        info["x_pos_error"], info["y_pos_error"] = shift[:, 0], shift[:, 1]
        info["peg_xy_dist"] = torch.linalg.norm(shift, dim=1)
        info["peg_tilt"] = self.peg_tilt()
        per_axis = (shift.abs() < self.pos_threshold).all(dim=1)
        info["is_position_ok"] = per_axis
        if self.strict_success:  # K.8: within 5 cm of the start (a disc) and no rotation about the other axes
            return (info["peg_xy_dist"] < self.pos_threshold) & (info["peg_tilt"] <= STRICT_PEG_TILT)
        return per_axis

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        d = info["tcp_to_peg_dist"]
        reached = d < self.REACH_THRESH
        ok = info["is_position_ok"] & reached
        aligned = info["is_angle_correct"] & ok
        reachedf = reached.float()
        return {
            "reaching": 0.5 * torch.exp(-3.0 * d),
            "x_position": 5.0 * torch.exp(-5.0 * info["x_pos_error"].abs()) * reachedf,
            "y_position": 5.0 * torch.exp(-5.0 * info["y_pos_error"].abs()) * reachedf,
            "angle": 35.0 * torch.exp(-info["y_angle_diff"].abs()) * ok.float(),
            "correct_angle": 10.0 * aligned.float(),
            "correct_and_static": 5.0 * (aligned & info["is_robot_static"]).float(),
        }

    def _family_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {"peg_xy_shift": self.peg.pose.p[:, :2] - self._start_xy}
