"""TakeItBack (paper App. K.9, Figure 22, Code 14; Table 1: T = 180, Spatial).

A green cube stands on the table; the robot must move it into a red goal region and, once the cube has reached it (the
region then turns violet), bring it back to where it started. The start is marked by a region that no camera sees, so
it has to be remembered from the first observations (the cube sits there until the robot moves it).

One scheduled phase, ``action``, t = 0 … T - 1; the two stages of the paper (to the goal, back to the start) are a
state, ``info["goal_reached"]``, not a step. Episode (as the public code; every draw from the sub-scene's episode RNG,
upstream drew all but the row from torch's global RNG, which ManiSkill seeds on a seeded reset from the first
sub-scene's seed only and not at all on a reset without a seed):

- cube (half-size ``cube_halfsize`` = 0.02) at x₀ = U(-0.05, 0.05), y₀ = 0.1 c + U(0, 0.05), c uniform in {-1, 0, 1};
  the oracle ``xyz_initial`` = (x₀, y₀, 0.001), float32 (3,);
- goal region (red-white disc, radius ``goal_radius`` = 0.08, no collision) at x = U(0.2, 0.25), y = U(-0.025, 0.025);
- start region (blue-white, same radius) at (x₀, y₀), hidden from both cameras (ManiSkill's ``_hidden_objects``:
  only the human render camera shows it).

``goal_reached`` latches on the first observation where ‖cube.xy - goal.xy‖ < ``goal_radius``; on that same
observation the red disc is parked out of view and a violet one (147, 0, 211) takes its place (K.9 says magenta;
upstream swaps one step later).

Success (no still arm needed):

- default (the public code): ``goal_reached`` ∧ ‖cube.xy - start.xy‖ < ``goal_radius`` on the current step. When
  the two regions overlap (centres closer than 2 ``goal_radius``: about 0.2% of the draws), a cube pushed into the
  overlap succeeds at once.
- ``strict_success=True`` (K.9: "first reaching the goal region ..., then returning the cube to the initial region",
  "in sequence"): the goal was reached on an earlier step and the cube is outside the goal region now.

Dense reward (max 30; on success the maximum; ``normalized_dense`` = dense / 30), push point = cube - (h + 0.005, 0,
0), pull point = cube + (h + 0.01, 0, 0), h = ``cube_halfsize``:

- before ``goal_reached``: 2 (1 - tanh 5 ‖tcp - push point‖) + 5 (1 - tanh 5 d_xy(cube, goal)) [‖tcp - push
  point‖ < 0.01];
- after: 10 (1 - tanh 5 ‖tcp - pull point‖) + 15 (1 - tanh 5 d_xy(cube, start)) [‖tcp - pull point‖ < 0.01]
  (at most 25 without success).

State (``full`` variant): qpos ‖ qvel ‖ tcp_pose (25) ‖ ``goal_pos`` (3) ‖ ``cube_pose`` (7) ‖ ``goal_reached`` (1) ‖
``time`` (1, t/T) ‖ ``xyz_initial`` (3). D = 40.

Customise with kwargs or class constants (App. M, Code 14)::

    gym.make("MIKASA/TakeItBack-v0", goal_radius=0.05, cube_halfsize=0.025)

    class TakeItBackDebug(TakeItBackEnv):     # then membench_envs.robo.make(TakeItBackDebug, ...)
        GOAL_RADIUS = 0.08; CUBE_HALFSIZE = 0.02; MAX_EPISODE_STEPS = 1000

Ξ = [2, 180]: the cube's start, seen on observation 0, is needed once the goal is reached, which can happen on any
later step; the lower end is a bound, not a typical value.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import sapien
import torch
from mani_skill.utils import common
from mani_skill.utils.structs.pose import Pose

from membench_envs.robo.base import MemoryTabletopEnv
from membench_envs.robo.shapes import add_cylinder, build_shape

CUBE_COLOR = (0.0, 1.0, 0.0, 1.0)
GOAL_COLOR = (194 / 255, 19 / 255, 22 / 255, 1.0)
REACHED_COLOR = (147 / 255, 0.0, 211 / 255, 1.0)
START_COLOR = (0.0, 0.0, 1.0, 1.0)
WHITE = (1.0, 1.0, 1.0, 1.0)


def build_region(scene, radius: float, color, name: str, thickness: float = 1e-5):
    """A flat target disc on the table: five concentric rings, ``color`` and white alternating, no collision; a
    kinematic actor whose origin is the disc's centre."""
    builder = scene.create_actor_builder()
    for k in range(5):  # the inner rings a little thicker, so they are drawn over the outer ones
        add_cylinder(
            builder, radius * (5 - k) / 5, thickness / 2 + k * 1e-5, color if k % 2 == 0 else WHITE, collision=False
        )
    builder.set_initial_pose(sapien.Pose(p=[0.0, 0.0, 1000.0]))
    return builder.build_kinematic(name=name)


class TakeItBackEnv(MemoryTabletopEnv):
    """Move the cube into the goal region, then back to its unmarked start (see the module docstring)."""

    MAX_DENSE_REWARD = 30.0
    ORACLE_DTYPE = torch.float32

    #: the episode draw (public code): start x, start row spacing and in-row jitter of y, goal x and y
    START_X_RANGE: ClassVar[tuple[float, float]] = (-0.05, 0.05)
    START_ROW_SPACING: ClassVar[float] = 0.1
    START_Y_JITTER: ClassVar[tuple[float, float]] = (0.0, 0.05)
    GOAL_X_RANGE: ClassVar[tuple[float, float]] = (0.2, 0.25)
    GOAL_Y_RANGE: ClassVar[tuple[float, float]] = (-0.025, 0.025)
    REGION_Z: ClassVar[float] = 1e-3
    #: the push point lies this far behind the cube's -x face, the pull point this far beyond its +x face
    PUSH_GAP: ClassVar[float] = 0.005
    PULL_GAP: ClassVar[float] = 0.01
    REACH_THRESH: ClassVar[float] = 0.01
    #: where the region disc that is not in use waits (no collision, beyond every camera's far plane)
    DISC_PARK: ClassVar[tuple[float, float, float]] = (-2.0, 0.0, 1000.0)

    def __init__(self, *args, goal_radius: float | None = None, cube_halfsize: float | None = None, **kwargs):
        # kwargs, defaults and allowed values: the catalogue's (MemoryTabletopEnv.knob)
        self.goal_radius = float(self.knob("goal_radius", goal_radius))
        self.cube_halfsize = float(self.knob("cube_halfsize", cube_halfsize))
        super().__init__(*args, **kwargs)

    # --- platform hooks (phases and T: the catalogue's take_it_back_timing, via MemoryTabletopEnv.timing) -------

    def _load_objects(self, options: dict) -> None:
        cube, self._cube_rest = build_shape(self.scene, "cube", self.cube_halfsize, CUBE_COLOR, "cube")
        self.cube = self.register_memory_object(cube)  # shown at its start at reset, never hidden
        r = self.goal_radius
        self.start_region = build_region(self.scene, r, START_COLOR, "start_region")
        self._hidden_objects.append(self.start_region)  # never in the cameras' images (human render only)
        self.goal_region = build_region(self.scene, r, GOAL_COLOR, "goal_region")
        self.reached_region = build_region(self.scene, r, REACHED_COLOR, "reached_goal_region")
        n, dev = self.num_envs, self.device
        self._start = torch.zeros((n, 3), device=dev)
        self._goal = torch.zeros((n, 3), device=dev)
        self._goal_reached = torch.zeros(n, dtype=torch.bool, device=dev)
        self._reached_step = torch.full((n,), -1, dtype=torch.int64, device=dev)
        park = torch.zeros((n, 7), device=dev)
        park[:, :3] = torch.tensor(self.DISC_PARK, device=dev)
        park[:, 3] = 1.0
        self._disc_park = park

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        b = len(env_idx)
        draw = lambda low, high: np.asarray(rng.uniform(low, high, 1)).reshape(b)  # noqa: E731
        row = np.asarray(rng.choice([-1, 0, 1], 1)).reshape(b)
        start = np.zeros((b, 3))
        start[:, 0] = draw(*self.START_X_RANGE)
        start[:, 1] = row * self.START_ROW_SPACING + draw(*self.START_Y_JITTER)
        start[:, 2] = self.REGION_Z
        goal = np.zeros((b, 3))
        goal[:, 0] = draw(*self.GOAL_X_RANGE)
        goal[:, 1] = draw(*self.GOAL_Y_RANGE)
        goal[:, 2] = self.REGION_Z
        cube = start.copy()
        cube[:, 2] = self._cube_rest
        self.show("action", 0, env_idx, cube)
        dev = self.device
        start_t = common.to_tensor(start, device=dev).float()
        goal_t = common.to_tensor(goal, device=dev).float()
        self._start[env_idx] = start_t
        self._goal[env_idx] = goal_t
        self._goal_reached[env_idx] = False
        self._reached_step[env_idx] = -1
        identity = torch.tensor([1.0, 0.0, 0.0, 0.0], device=dev).expand(b, 4)
        self.start_region.set_pose(Pose.create_from_pq(p=start_t, q=identity))
        self.goal_region.set_pose(Pose.create_from_pq(p=goal_t, q=identity))
        self.reached_region.set_pose(Pose.create(self._disc_park[env_idx]))

    def oracle(self) -> torch.Tensor:
        return self._start.clone()  # a fresh tensor: info values must not alias env buffers

    def oracle_bounds(self):
        low_y = -self.START_ROW_SPACING + self.START_Y_JITTER[0]
        high_y = self.START_ROW_SPACING + self.START_Y_JITTER[1]
        return ([self.START_X_RANGE[0], low_y, self.REGION_Z], [self.START_X_RANGE[1], high_y, self.REGION_Z])

    def describe_oracle(self, env_i: int) -> str:
        x, y, _ = (float(v) for v in self._start[env_i])
        stage = "goal reached: bring it back" if bool(self._goal_reached[env_i]) else "to the goal"
        return f"start ({x:+.3f}, {y:+.3f}); {stage}"

    @property
    def goal_position(self) -> torch.Tensor:
        """(num_envs, 3) the goal region's centre (on the table)."""
        return self._goal

    @property
    def goal_reached(self) -> torch.Tensor:
        """(num_envs,) whether the cube has reached the goal region in this episode (latched)."""
        return self._goal_reached

    # --- success and reward -----------------------------------------------------------------------------------
    def _show_reached_goal(self) -> None:
        """The violet disc where the goal is for every environment whose goal is reached, the red one elsewhere."""
        goal = torch.zeros_like(self._disc_park)
        goal[:, :3] = self._goal
        goal[:, 3] = 1.0
        reached = self._goal_reached[:, None]
        self.goal_region.set_pose(Pose.create(torch.where(reached, self._disc_park, goal)))
        self.reached_region.set_pose(Pose.create(torch.where(reached, goal, self._disc_park)))
        if self.gpu_sim_enabled:  # the buffer is current: _after_control_step fetched it after the physics
            self.scene.px.gpu_apply_rigid_dynamic_data()

    def _evaluate_task(self) -> dict:
        cube_xy = self.cube.pose.p[:, :2]
        to_goal = torch.linalg.norm(cube_xy - self._goal[:, :2], dim=1)
        to_start = torch.linalg.norm(cube_xy - self._start[:, :2], dim=1)
        in_goal = to_goal < self.goal_radius
        returned = to_start < self.goal_radius
        newly = in_goal & ~self._goal_reached
        if bool(newly.any()):
            self._goal_reached = self._goal_reached | newly
            self._reached_step = torch.where(newly, self.elapsed_steps.to(torch.int64), self._reached_step)
            self._show_reached_goal()
        if self.strict_success:  # K.9: first the goal, then (on a later step, out of the goal) back to the start
            earlier = self._goal_reached & (self._reached_step < self.elapsed_steps)
            success = earlier & returned & ~in_goal
        else:
            success = self._goal_reached & returned
        return {
            "cube_to_goal_dist": to_goal,
            "cube_to_start_dist": to_start,
            "is_cube_in_goal": in_goal,
            "is_cube_returned": returned,
            "goal_reached": self._goal_reached.clone(),
            "success": success,
        }

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        cube, tcp = self.cube.pose.p, self.agent.tcp.pose.p
        h = self.cube_halfsize
        push = torch.linalg.norm(cube - torch.tensor([h + self.PUSH_GAP, 0.0, 0.0], device=self.device) - tcp, dim=1)
        pull = torch.linalg.norm(cube + torch.tensor([h + self.PULL_GAP, 0.0, 0.0], device=self.device) - tcp, dim=1)
        before = (~info["goal_reached"]).float()
        after = info["goal_reached"].float()
        return {
            "reach_push_point": 2.0 * (1.0 - torch.tanh(5.0 * push)) * before,
            "cube_to_goal": 5.0
            * (1.0 - torch.tanh(5.0 * info["cube_to_goal_dist"]))
            * (push < self.REACH_THRESH).float()
            * before,
            "reach_pull_point": 10.0 * (1.0 - torch.tanh(5.0 * pull)) * after,
            "cube_to_start": 15.0
            * (1.0 - torch.tanh(5.0 * info["cube_to_start_dist"]))
            * (pull < self.REACH_THRESH).float()
            * after,
        }

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {
            "goal_pos": self._goal,
            "cube_pose": self.cube.pose.raw_pose,
            "goal_reached": info["goal_reached"].float().reshape(-1, 1),
            "time": (self.elapsed_steps.float() / self.max_episode_steps).reshape(-1, 1),
        }
