"""Intercept / InterceptGrab (paper App. K.5, K.6, Figures 18, 19, Codes 10, 11; Table 1: T = 90, Spatial).

A red ball rolls across the table in front of the robot from the first step on. It is never hidden: what the agent
must remember is its *motion*. One frame shows where the ball is, not where it goes, so the velocity has to be read
from two frames at least (the correlation horizon ξ = 2 on every step: :class:`~membench_envs.catalogue.robo.
TrackingTiming`).

- **Intercept**: knock the ball into a target zone (a red-white disc, radius ``goal_radius`` = 0.1 m, no collision).
- **InterceptGrab**: catch the ball with the gripper and hold still.

One phase, ``rolling``, from t = 0 to T = 90. Episode (as the public code; every draw from the episode RNG):

- ball (radius ``ball_radius`` = 0.02) at x = U(-0.35, -0.05), y = U(-0.9, -0.65), z = 2 r (Intercept: it drops
  onto the table during the first step) or r (InterceptGrab: it starts on the table);
- initial velocity (U(0, 0.05), U(v_min, v_max), 0) m/s, ``velocity_range`` = (v_min, v_max): Slow (0.25, 0.5),
  Medium (0.5, 0.75), Fast (0.75, 1.0). It is the oracle ``initial_velocity``, float32 (3,);
- Intercept's goal at x = ball x + 0.2, y = U(-0.2, 0.2), on the table.

Success never counts at t = 0 (the reset observation: PhysX reports the last contacts of the previous episode there,
so a ball grasped when the last episode ended would read as grasped again). From t = 1:

- **Intercept** (default, the public code): ‖ball.xy - goal.xy‖ < ``goal_radius`` on the current step; the robot
  need not be still. ``strict_success=True`` (the paper: "the ball must come to rest within the target area"): also
  the ball's speed < :data:`~membench_envs.catalogue.robo.STRICT_REST_SPEED` (0.05 m/s). A rolling ball barely slows
  by itself (idle arm, seed 0: 0.33 m/s at t = 2, 0.30 m/s at t = 89, about 0.007 m/s per second; it would need
  tens of seconds to drop below 0.05 m/s), so a knock that sends it rolling into the zone does not meet the strict
  rule: the ball must be stopped there, e.g. caught and carried into the zone, as the scripted
  :class:`~membench_envs.robo.experts.TrackPolicy` does (strict success on 10/10 episodes of each speed, seeds
  2000-2009; the ball, held, at 0.003-0.049 m/s on the step that succeeds).
- **InterceptGrab** (default, the public code): ManiSkill's ``is_grasping(ball)`` ∧ every arm joint slower than
  0.2 rad/s; no lift. ``strict_success=True`` (Table 1: "catch the ball with the gripper and lift it up"): also the
  ball's bottom ≥ :data:`~membench_envs.catalogue.robo.STRICT_GRAB_LIFT` (0.05 m) above the table (the scripted
  policy with ``lift=True``: 20/20 episodes of each speed, seeds 2000-2019).

Dense reward (on success the maximum; ``normalized_dense`` = dense / maximum):

- **Intercept** (max 30): hit point h = ball + (r + 0.05) · unit(ball - goal), the spot behind the ball from which a
  push drives it at the goal; ``reached`` latches once ‖tcp - h‖ < 0.04. Reward = 2 (1 - tanh(2 ‖tcp - h‖)) while not
  reached, then 5 (1 - tanh ‖ball.xy - goal.xy‖).
- **InterceptGrab** (max 300), d = ‖ball - tcp‖, w = finger opening, "between" = |dx|, |dy| ≤ 2r ∧ |dz| ≤ 1.5 r ∧
  d ≤ 2r ∧ w ≥ 2r: 10 (1 - tanh 3d) + 10 [between] + 30 (1 - d / 3r) [d ≤ 1.25 r] + 90 exp(-5 max(|w - 2r| - 0.02,
  0)) [between] + 45 [between ∧ w ≤ 2r + 0.02] + 100 [grasped]; below 300 without success.

State (``full`` variant): qpos ‖ qvel ‖ tcp_pose (25) ‖ Intercept: ``goal_pos`` (3) ‖ ``ball_pose`` (7) ‖
``ball_linear_vel`` (3) ‖ ``ball_angular_vel`` (3) ‖ ``tcp_to_ball_pos`` (3) ‖ [Intercept: ``ball_to_goal_pos`` (3) ‖
``reached`` (1)] ‖ [InterceptGrab: ``is_ball_grasped`` (1) ‖ ``gripper_width`` (1) ‖ ``relative_velocity`` (3)] ‖
``time`` (1, t/T) ‖ ``initial_velocity`` (3). D = 52 (Intercept), 50 (InterceptGrab).

Customise with kwargs or class constants (App. M, Codes 10, 11)::

    gym.make("MIKASA/InterceptMedium-v0", velocity_range=(0.1, 0.2), goal_radius=0.15)

    class InterceptDebug(InterceptEnv):        # then membench_envs.robo.make(InterceptDebug, ...)
        VELOCITY_RANGE = (0.0, 0.0); BALL_RADIUS = 0.02; GOAL_RADIUS = 0.1; MAX_EPISODE_STEPS = 1000
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import sapien
import torch
from mani_skill.utils import common
from mani_skill.utils.building import actors
from mani_skill.utils.structs.pose import Pose
from transforms3d.euler import euler2quat

from membench_envs.catalogue.robo import STRICT_GRAB_LIFT, STRICT_REST_SPEED
from membench_envs.robo.base import MemoryTabletopEnv
from membench_envs.robo.shapes import build_shape

BALL_COLOR = (1.0, 0.0, 0.0, 1.0)


class _RollingBallEnv(MemoryTabletopEnv):
    """What Intercept and InterceptGrab share: the rolling ball, its draw and the oracle (see the module docstring)."""

    ORACLE_DTYPE = torch.float32

    #: the episode draw (public code): ball start x, y; the sideways speed vx
    BALL_X_RANGE: ClassVar[tuple[float, float]] = (-0.35, -0.05)
    BALL_Y_RANGE: ClassVar[tuple[float, float]] = (-0.9, -0.65)
    VX_RANGE: ClassVar[tuple[float, float]] = (0.0, 0.05)
    #: ball start height in ball radii (Intercept drops it from one radius above the table)
    START_HEIGHT_RADII: ClassVar[float] = 1.0

    def __init__(self, *args, velocity_range=None, ball_radius: float | None = None, **kwargs):
        # kwargs, defaults and allowed values: the catalogue's (MemoryTabletopEnv.knob)
        self.velocity_range = tuple(float(x) for x in self.knob("velocity_range", velocity_range))
        self.ball_radius = float(self.knob("ball_radius", ball_radius))
        if self.velocity_range[0] > self.velocity_range[1]:
            raise ValueError(f"velocity_range must be (min, max) with 0 <= min <= max, got {velocity_range}")
        self._init_task(kwargs)
        super().__init__(*args, **kwargs)

    def _init_task(self, kwargs: dict) -> None:
        """Pop and check the task's own kwargs (before the scene is built)."""

    # --- platform hooks (phases and T: the catalogue's tracking_timing, via MemoryTabletopEnv.timing) ----------
    def _load_objects(self, options: dict) -> None:
        park = sapien.Pose(p=[0.0, 0.0, self.PARK_Z])
        ball, self._ball_rest = build_shape(self.scene, "sphere", self.ball_radius, BALL_COLOR, "ball", "dynamic", park)
        self.ball = self.register_memory_object(ball)  # shown at reset, with its initial velocity; never hidden
        n, dev = self.num_envs, self.device
        self._initial_velocity = torch.zeros((n, 3), device=dev)
        self._ball_start = torch.zeros((n, 3), device=dev)
        self._load_task_objects()

    def _load_task_objects(self) -> None:
        pass

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        b = len(env_idx)
        draw = lambda low, high: np.asarray(rng.uniform(low, high, 1)).reshape(b)  # noqa: E731
        x, y = draw(*self.BALL_X_RANGE), draw(*self.BALL_Y_RANGE)
        velocity = np.zeros((b, 3))
        velocity[:, 0] = draw(*self.VX_RANGE)
        velocity[:, 1] = draw(*self.velocity_range)
        start = np.stack([x, y, np.full(b, self.START_HEIGHT_RADII * self._ball_rest)], axis=1)
        self.show("rolling", 0, env_idx, start, v=velocity)
        self._initial_velocity[env_idx] = common.to_tensor(velocity, device=self.device).float()
        self._ball_start[env_idx] = common.to_tensor(start, device=self.device).float()
        self._initialize_task_objects(env_idx, rng, start)

    def _initialize_task_objects(self, env_idx: torch.Tensor, rng, start: np.ndarray) -> None:
        pass

    def oracle(self) -> torch.Tensor:
        return self._initial_velocity.clone()  # a fresh tensor: info values must not alias env buffers

    def oracle_bounds(self):
        return [self.VX_RANGE[0], self.velocity_range[0], 0.0], [self.VX_RANGE[1], self.velocity_range[1], 0.0]

    def describe_oracle(self, env_i: int) -> str:
        vx, vy, _ = (float(v) for v in self._initial_velocity[env_i])
        return f"v0 = ({vx:.2f}, {vy:.2f}) m/s"

    @property
    def ball_position(self) -> torch.Tensor:
        """(num_envs, 3) the ball's centre now (read from the simulator, also right after a pose is written)."""
        return self.ball.pose.p

    def _can_succeed(self) -> torch.Tensor:
        """Success counts from t = 1: the reset observation may carry the previous episode's contacts."""
        return self.elapsed_steps >= 1

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        state = self._ball_state(info)
        state["time"] = (self.elapsed_steps.float() / self.max_episode_steps).reshape(-1, 1)
        return state

    def _ball_state(self, info: dict) -> dict[str, torch.Tensor]:
        ball = self.ball
        return {
            "ball_pose": ball.pose.raw_pose,
            "ball_linear_vel": ball.linear_velocity,
            "ball_angular_vel": ball.angular_velocity,
            "tcp_to_ball_pos": ball.pose.p - self.agent.tcp.pose.p,
        }


class InterceptEnv(_RollingBallEnv):
    """Knock the rolling ball into the target zone (see the module docstring)."""

    MAX_DENSE_REWARD = 30.0
    START_HEIGHT_RADII = 2.0
    #: the goal's offset in x from the ball's start, and the range of its y (public code)
    GOAL_DX: ClassVar[float] = 0.2
    GOAL_Y_RANGE: ClassVar[tuple[float, float]] = (-0.2, 0.2)
    GOAL_Z: ClassVar[float] = 1e-3
    #: the hit point lies this far behind the ball's surface; ``reached`` latches within REACH_THRESH of it
    HIT_GAP: ClassVar[float] = 0.05
    REACH_THRESH: ClassVar[float] = 0.04

    def _init_task(self, kwargs: dict) -> None:
        self.goal_radius = float(self.knob("goal_radius", kwargs.pop("goal_radius", None)))

    def _load_task_objects(self) -> None:
        self.goal_region = actors.build_red_white_target(
            self.scene,
            radius=self.goal_radius,
            thickness=1e-5,
            name="goal_region",
            add_collision=False,
            body_type="kinematic",
            initial_pose=sapien.Pose(p=[0.0, 0.0, self.GOAL_Z]),
        )
        n, dev = self.num_envs, self.device
        self._goal = torch.zeros((n, 3), device=dev)
        self._reached = torch.zeros(n, dtype=torch.bool, device=dev)
        q = euler2quat(0.0, np.pi / 2, 0.0)  # the disc's axis (sapien cylinders lie along x) upright
        self._goal_q = torch.tensor([float(v) for v in q], device=dev)

    def _initialize_task_objects(self, env_idx: torch.Tensor, rng, start: np.ndarray) -> None:
        b = len(env_idx)
        goal = np.zeros((b, 3))
        goal[:, 0] = start[:, 0] + self.GOAL_DX
        goal[:, 1] = np.asarray(rng.uniform(*self.GOAL_Y_RANGE, 1)).reshape(b)
        goal[:, 2] = self.GOAL_Z
        goal_t = common.to_tensor(goal, device=self.device).float()
        self._goal[env_idx] = goal_t
        self._reached[env_idx] = False
        self.goal_region.set_pose(Pose.create_from_pq(p=goal_t, q=self._goal_q.expand(b, 4)))

    @property
    def goal_position(self) -> torch.Tensor:
        """(num_envs, 3) the centre of the target zone (on the table)."""
        return self._goal

    def hit_point(self) -> torch.Tensor:
        """(num_envs, 3) the spot behind the ball, on the line from the goal through the ball."""
        ball = self.ball_position
        away = ball - self._goal
        away = away / torch.linalg.norm(away, dim=1, keepdim=True).clamp_min(1e-9)
        return ball + away * (self.ball_radius + self.HIT_GAP)

    def _evaluate_task(self) -> dict:
        ball = self.ball_position
        to_goal = torch.linalg.norm(ball[:, :2] - self._goal[:, :2], dim=1)
        speed = torch.linalg.norm(self.ball.linear_velocity, dim=1)
        tcp_to_hit = torch.linalg.norm(self.hit_point() - self.agent.tcp.pose.p, dim=1)
        self._reached = self._reached | (tcp_to_hit < self.REACH_THRESH)
        in_goal = to_goal < self.goal_radius
        placed = in_goal & (speed < STRICT_REST_SPEED) if self.strict_success else in_goal
        return {
            "ball_to_goal_dist": to_goal,
            "ball_speed": speed,
            "tcp_to_hit_dist": tcp_to_hit,
            "reached": self._reached.clone(),
            "is_ball_in_goal": in_goal,
            "success": placed & self._can_succeed(),
        }

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        reached = info["reached"].float()
        return {
            "reaching": 2.0 * (1.0 - torch.tanh(2.0 * info["tcp_to_hit_dist"])) * (1.0 - reached),
            "place": 5.0 * (1.0 - torch.tanh(info["ball_to_goal_dist"])) * reached,
        }

    def _ball_state(self, info: dict) -> dict[str, torch.Tensor]:
        state = {"goal_pos": self._goal}
        state.update(super()._ball_state(info))
        state["ball_to_goal_pos"] = self._goal - self.ball.pose.p
        state["reached"] = info["reached"].float().reshape(-1, 1)
        return state


class InterceptGrabEnv(_RollingBallEnv):
    """Catch the rolling ball with the gripper and hold still (see the module docstring)."""

    MAX_DENSE_REWARD = 300.0

    def _gripper_width(self) -> torch.Tensor:
        return self.agent.robot.get_qpos()[:, -2:].sum(dim=1)

    def _evaluate_task(self) -> dict:
        # at t = 0 PhysX still reports the previous episode's last contacts: no grasp can exist at reset
        grasped = self.agent.is_grasping(self.ball) & self._can_succeed()
        static = self.agent.is_static(self.STATIC_THRESH)
        ball = self.ball_position
        lift = ball[:, 2] - self.ball_radius  # height of the ball's bottom above the table
        placed = grasped & static
        if self.strict_success:  # Table 1: "catch the ball with the gripper and lift it up"
            placed = placed & (lift >= STRICT_GRAB_LIFT)
        return {
            "is_ball_grasped": grasped,
            "is_robot_static": static,
            "ball_lift": lift,
            "tcp_to_ball_dist": torch.linalg.norm(ball - self.agent.tcp.pose.p, dim=1),
            "success": placed & self._can_succeed(),
        }

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        r = self.ball_radius
        d = info["tcp_to_ball_dist"]
        delta = torch.abs(self.agent.tcp.pose.p - self.ball_position)
        width = self._gripper_width()
        between = (
            (delta[:, 0] <= 2 * r) & (delta[:, 1] <= 2 * r) & (delta[:, 2] <= 1.5 * r) & (d <= 2 * r) & (width >= 2 * r)
        )
        betweenf = between.float()
        width_error = torch.clamp(torch.abs(width - 2 * r) - 0.02, min=0.0)
        return {
            "reaching": 10.0 * (1.0 - torch.tanh(3.0 * d)),
            "between_fingers": 10.0 * betweenf,
            "very_close": 30.0 * (1.0 - d / (3 * r)) * (d <= 1.25 * r).float(),
            "closing": 90.0 * torch.exp(-5.0 * width_error) * betweenf,
            "grasp_attempt": 45.0 * (between & (width <= 2 * r + 0.02)).float(),
            "grasped": 100.0 * info["is_ball_grasped"].float(),
        }

    def _ball_state(self, info: dict) -> dict[str, torch.Tensor]:
        state = super()._ball_state(info)
        state["is_ball_grasped"] = info["is_ball_grasped"].float().reshape(-1, 1)
        state["gripper_width"] = self._gripper_width().reshape(-1, 1)
        state["relative_velocity"] = self.ball.linear_velocity - self.agent.tcp.linear_velocity
        return state
