"""ShellGameTouch / ShellGamePush / ShellGamePick (paper App. K.1, Figure 14, Codes 7-9; Table 1: T = 90, Object).

A red ball lies on the table at one of three cup positions; three identical upside-down mugs then cover the three
positions, and the robot must interact with the mug that hides the ball.

Phases (observation index t, 0 = reset; defaults ``time_offset = 5``):

- ``observation`` t in [0, time_offset): the ball is visible at its position; no mug on the table.
- ``occlusion``   t = time_offset: the three mugs come down over the three positions (the ball is under one).
- ``action``      t > time_offset: the mugs stay (they are dynamic: the robot can touch, push or lift them).

Layout: the centre position is (U(-c, c), U(-c, c)) with ``center_range`` c = 0.1; the other two are ``min_dist``
(0.2 m) away along y. ``cup_with_ball_number`` (the oracle, uniform in {0, 1, 2}) is the ball's position:
0 = centre - min_dist (left in the base camera), 1 = centre, 2 = centre + min_dist (right). The mugs are built from
primitives (:mod:`membench_envs.robo.mug`); all three share one yaw (``mug_yaw``, the handle direction), a constant
that never depends on the ball's cup. Upstream ShellGamePick turned all mugs by a target-dependent quaternion, which
leaked the answer into every frame; here it is the same in every episode.

Success (tcp = the gripper's tool centre point; ``static`` = every arm-joint speed ≤ 0.2 rad/s):

- **Touch**: ‖tcp - target mug‖ ≤ ``goal_thresh`` (0.08) ∧ static, from t = time_offset.
- **Push**: ‖goal - target mug‖ ≤ ``goal_thresh`` (0.08) ∧ static, from t = time_offset + 1, goal = ball start +
  ``goal_offset`` (0.1, 0, 0.025): the mug is pushed forward (+x, away from the robot). With the goal 0.005 m above
  the standing mug's centre, a straight push succeeds from 2.0 cm (0.1 - sqrt(0.08² - 0.005²)).
  ``strict_success=True`` (the paper: "moving forward the correct mug to the target zone", whose centre is 0.1 m
  ahead) also needs a forward displacement ≥ 0.1 m (``info["mug_forward"]``).
- **Pick**: ‖goal - target mug‖ ≤ ``goal_thresh`` (0.08) ∧ static, from t = time_offset + 1, goal = ball start +
  ``goal_offset`` (0, 0, 0.125). The goal is at z = 0.145 and the standing mug's centre at 0.04, so a straight lift
  succeeds from 2.5 cm (0.145 - 0.08 - 0.04): the public code's rule, measured with. As upstream, no grasp is
  required by the check. ``strict_success=True`` is the paper's "elevating the correct mug above 0.1m": the mug's
  open end ≥ 0.1 m above the table (``info["mug_lift"]``) ∧ static.

The dense reward's "placed" terms follow the success rule in use.

Distances use the mug's origin, the centre of its bounding cylinder (at z = 0.04 when it stands on the table).

Dense reward (every term × [t ≥ time_offset]; on success the reward is ``MAX_DENSE_REWARD``, ``normalized_dense`` =
dense / ``MAX_DENSE_REWARD`` in [0, 1]; d = ‖tcp - target mug‖, g = ‖goal - target mug‖, s = 1 - tanh(5 ‖arm qvel‖),
placed = the task's distance condition):

- Touch (max 3): (1 - tanh 5d) + s·placed + static·placed.
- Push (max 4): (1 - tanh 10d) + 2 (1 - tanh 5g)·[d ≤ ``reach_thresh`` 0.08] + 0.2 s·placed + 0.2 static·placed.
- Pick (max 75): 3 (1 - tanh 10d) + 2 [d ≤ r] + 30 (1 - tanh 5g)·[d ≤ r] + 5 s·placed·[d ≤ r]
  + 5 static·placed·[d ≤ r], r = ``reach_thresh`` 0.04.

Without success the dense reward stays below the maximum (3, 3.4 and 45).

State (``full`` variant): qpos ‖ qvel ‖ tcp_pose (25) ‖ ``ball_pose`` (7) ‖ ``mug_poses`` (21: the three mugs in cup
order, zeros while they are off the table) ‖ ``target_mug_pose`` (7) ‖ [``goal_pos`` (3): Push, Pick] ‖
[``is_grasped`` (1): Pick] ‖ ``phase`` one-hot (3) ‖ ``time`` (1, t/T) ‖ ``cup_with_ball_number`` (1).
D = 65 (Touch), 68 (Push), 69 (Pick).

Customise with kwargs or class constants (App. M, Codes 7-9)::

    gym.make("MIKASA/ShellGamePush-v0", time_offset=20, goal_thresh=0.05, min_dist=0.25, max_episode_steps=200)

    class ShellGameTouchDebug(ShellGameTouchEnv):     # then membench_envs.robo.make(ShellGameTouchDebug, ...)
        BALL_RADIUS = 0.02; MIN_DIST = 0.2; TIME_OFFSET = 5; GOAL_THRESH = 0.08; MAX_EPISODE_STEPS = 1000

A test checks that the RGB and joint observations after the mugs land are bit-identical whichever cup hides the
ball. As upstream, the ball is visible while the arm can already move, so a policy can point its arm at the right
cup and carry the memory in its joints: a property of the task as published.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch
from mani_skill.utils import common
from transforms3d.euler import euler2quat

from membench_envs.catalogue.robo import STRICT_LIFT, STRICT_PUSH
from membench_envs.robo.base import MemoryTabletopEnv
from membench_envs.robo.mug import MUG_COLOR, MugGeometry, build_mug
from membench_envs.robo.shapes import build_shape

BALL_COLOR = (1.0, 0.0, 0.0, 1.0)
CUP_LABELS = ("left", "center", "right")
N_CUPS = 3


class ShellGameEnv(MemoryTabletopEnv):
    """Shared mechanics of the three ShellGame modes (see the module docstring)."""

    RENDER_CAMERA_EYE: ClassVar[tuple] = (0.6, 0.7, 0.6)
    RENDER_CAMERA_TARGET: ClassVar[tuple] = (0.0, 0.0, 0.15)

    MODE: ClassVar[str] = "touch"
    #: success counts from t = time_offset + SUCCESS_DELAY (upstream: Touch t >= 5, Push/Pick t > 5)
    SUCCESS_DELAY: ClassVar[int] = 0

    def __init__(
        self,
        *args,
        ball_radius: float | None = None,
        min_dist: float | None = None,
        time_offset: int | None = None,
        goal_thresh: float | None = None,
        center_range: float | None = None,
        mug_yaw: float | None = None,
        mug_radius: float | None = None,
        mug_height: float | None = None,
        **kwargs,
    ):
        # kwargs, defaults and allowed values: the catalogue's (MemoryTabletopEnv.knob)
        self.ball_radius = float(self.knob("ball_radius", ball_radius))
        self.min_dist = float(self.knob("min_dist", min_dist))
        self.time_offset = self.knob("time_offset", time_offset)
        self.goal_thresh = float(self.knob("goal_thresh", goal_thresh))
        self.center_range = float(self.knob("center_range", center_range))
        self.mug_yaw = float(self.knob("mug_yaw", mug_yaw))  # 0: the handle towards +x, away from the robot
        radius = float(self.knob("mug_radius", mug_radius))
        height = float(self.knob("mug_height", mug_height))
        wall = min(0.006, 0.25 * radius)
        self.mug_geometry = MugGeometry(outer_radius=radius, height=height, wall=wall, top=min(0.006, 0.25 * height))
        if not self.mug_geometry.covers(self.ball_radius):
            raise ValueError(
                f"a ball of radius {self.ball_radius} does not fit under a mug of radius {radius} and height {height} "
                f"(inner radius {self.mug_geometry.inner_radius:.3f})"
            )
        reach = radius + (self.mug_geometry.handle_reach if self.mug_geometry.handle else 0.0)
        if self.min_dist <= 2 * reach:
            raise ValueError(f"min_dist={self.min_dist} makes neighbouring mugs overlap (needs > {2 * reach:.3f})")
        self._init_mode(kwargs)
        super().__init__(*args, **kwargs)

    # --- what the three modes define --------------------------------------------------------------------------
    def _init_mode(self, kwargs: dict) -> None:
        """Pop and check the mode's own kwargs (before the scene is built)."""

    def _mode_evaluate(self, info: dict, mug_p: torch.Tensor) -> dict[str, torch.Tensor]:
        """``is_obj_placed`` (and mode-specific terms) from the shared ``info`` and the target mug's position."""
        raise NotImplementedError

    def _mode_reward(self, info: dict, active: torch.Tensor, static_reward: torch.Tensor) -> dict:
        raise NotImplementedError

    def _mode_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {}

    # --- platform hooks (phases and T: the catalogue's shell_game_timing, via MemoryTabletopEnv.timing) --------
    def _load_objects(self, options: dict) -> None:
        import sapien

        self.mugs = []
        for j in range(N_CUPS):
            park = sapien.Pose(p=[j * self.PARK_SPACING, 0.0, self.PARK_Z])
            mug, rest = build_mug(self.scene, f"mug_{j}", self.mug_geometry, MUG_COLOR, park)
            self.mugs.append(self.register_memory_object(mug))
        self._mug_rest = rest
        park = sapien.Pose(p=[N_CUPS * self.PARK_SPACING, 0.0, self.PARK_Z])
        ball, self._ball_rest = build_shape(self.scene, "sphere", self.ball_radius, BALL_COLOR, "ball", "dynamic", park)
        self.ball = self.register_memory_object(ball)
        self._ball_index = N_CUPS
        n, dev = self.num_envs, self.device
        self._target = torch.zeros(n, dtype=torch.int64, device=dev)
        self._ball_start = torch.zeros((n, 3), device=dev)
        self._goal = torch.zeros((n, 3), device=dev)
        q = euler2quat(0.0, 0.0, self.mug_yaw)  # wxyz; one yaw for every mug, every episode
        self._mug_q = torch.tensor([float(v) for v in q], device=dev)

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        b = len(env_idx)
        target = np.asarray(rng.randint(0, N_CUPS)).reshape(b)
        centre = np.asarray(rng.uniform(-self.center_range, self.center_range, 2)).reshape(b, 2)
        offsets = (np.arange(N_CUPS) - 1) * self.min_dist  # cup j at centre + (0, (j - 1) min_dist)
        cups = np.repeat(centre[:, None, :], N_CUPS, axis=1)
        cups[:, :, 1] += offsets[None, :]
        q = self._mug_q.expand(b, 4)
        for j in range(N_CUPS):
            p = np.concatenate([cups[:, j], np.full((b, 1), self._mug_rest)], axis=1)
            self.show("occlusion", j, env_idx, p, q)
            self.keep("action", j, env_idx)
        ball_p = np.concatenate([cups[np.arange(b), target], np.full((b, 1), self._ball_rest)], axis=1)
        self.show("observation", self._ball_index, env_idx, ball_p)
        self.keep("occlusion", self._ball_index, env_idx)
        self.keep("action", self._ball_index, env_idx)
        ball_t = common.to_tensor(ball_p, device=self.device).float()
        self._target[env_idx] = torch.as_tensor(target, device=self.device, dtype=torch.int64)
        self._ball_start[env_idx] = ball_t
        self._goal[env_idx] = ball_t + self.goal_offset_tensor()

    def goal_offset_tensor(self) -> torch.Tensor:
        return torch.zeros(3, device=self.device)

    def oracle(self) -> torch.Tensor:
        return self._target.reshape(-1, 1).clone()  # a fresh tensor: info values must not alias env buffers

    def oracle_bounds(self):
        return [0], [N_CUPS - 1]

    def target_index(self) -> torch.Tensor:
        """Index of the mug that hides the ball (= ``cup_with_ball_number``), (num_envs,) int64."""
        return self._target

    def describe_oracle(self, env_i: int) -> str:
        k = int(self._target[env_i])
        return f"cup {k} ({CUP_LABELS[k]})"

    @property
    def mug_positions(self) -> torch.Tensor:
        """(num_envs, 3, 3) mug origins in cup order (parked mugs report their parking slot)."""
        return self.memory_object_positions[:, :N_CUPS]

    @property
    def goal_positions(self) -> torch.Tensor:
        """(num_envs, 3) the goal of every environment: ball start + ``goal_offset`` (Touch: the ball's start)."""
        return self._goal

    def _evaluate_task(self) -> dict:
        arange = torch.arange(self.num_envs, device=self.device)
        mug_p = self.mug_positions[arange, self._target]
        t = self.elapsed_steps
        info = {
            "tcp_to_mug_dist": torch.linalg.norm(mug_p - self.agent.tcp.pose.p, dim=1),
            "is_robot_static": self.agent.is_static(self.STATIC_THRESH),
            "mugs_down": t >= self.time_offset,
        }
        info.update(self._mode_evaluate(info, mug_p))
        can_succeed = t >= self.time_offset + self.SUCCESS_DELAY
        info["success"] = info["is_obj_placed"] & info["is_robot_static"] & can_succeed
        return info

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        active = info["mugs_down"].float()
        qvel = self.agent.robot.get_qvel()[..., :-2]
        static_reward = 1.0 - torch.tanh(5.0 * torch.linalg.norm(qvel, dim=1))
        return self._mode_reward(info, active, static_reward)

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        m = N_CUPS + 1
        raw = self._memory_view.pose.raw_pose.reshape(m, self.num_envs, 7).transpose(0, 1)
        visible = self.object_visible()[:, :N_CUPS, None].float()
        arange = torch.arange(self.num_envs, device=self.device)
        mugs = raw[:, :N_CUPS] * visible
        state = {
            "ball_pose": raw[:, self._ball_index],
            "mug_poses": mugs.reshape(self.num_envs, -1),
            "target_mug_pose": mugs[arange, self._target],
        }
        state.update(self._mode_state(info))
        state["phase"] = torch.nn.functional.one_hot(self.current_phase(), len(self.phase_names)).float()
        state["time"] = (self.elapsed_steps.float() / self.max_episode_steps).reshape(-1, 1)
        return state


class ShellGameTouchEnv(ShellGameEnv):
    """Touch the mug that hides the ball (TCP within ``goal_thresh`` of its centre) and hold still."""

    MODE = "touch"
    MAX_DENSE_REWARD = 3.0

    def _mode_evaluate(self, info: dict, mug_p: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"is_obj_placed": info["tcp_to_mug_dist"] <= self.goal_thresh}

    def _mode_reward(self, info: dict, active: torch.Tensor, static_reward: torch.Tensor) -> dict:
        placed = info["is_obj_placed"].float()
        return {
            "reaching": (1.0 - torch.tanh(5.0 * info["tcp_to_mug_dist"])) * active,
            "static": static_reward * placed * active,
            "static_at_target": (info["is_robot_static"].float() * placed) * active,
        }


class _GoalShellGameEnv(ShellGameEnv):
    """Push and Pick: move the target mug to a goal relative to the ball's start."""

    SUCCESS_DELAY = 1

    def _init_mode(self, kwargs: dict) -> None:
        self.goal_offset = tuple(float(v) for v in self.knob("goal_offset", kwargs.pop("goal_offset", None)))
        self.reach_thresh = float(self.knob("reach_thresh", kwargs.pop("reach_thresh", None)))

    def goal_offset_tensor(self) -> torch.Tensor:
        return torch.tensor(self.goal_offset, device=self.device, dtype=torch.float32)

    def _mode_evaluate(self, info: dict, mug_p: torch.Tensor) -> dict[str, torch.Tensor]:
        dist = torch.linalg.norm(self._goal - mug_p, dim=1)
        return {"mug_to_goal_dist": dist, "is_obj_placed": dist <= self.goal_thresh}

    def _mode_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {"goal_pos": self._goal}


class ShellGamePushEnv(_GoalShellGameEnv):
    """Push the mug that hides the ball forward (+x) into the goal zone and hold still."""

    MODE = "push"
    MAX_DENSE_REWARD = 4.0

    def _mode_evaluate(self, info: dict, mug_p: torch.Tensor) -> dict[str, torch.Tensor]:
        out = super()._mode_evaluate(info, mug_p)
        out["mug_forward"] = mug_p[:, 0] - self._ball_start[:, 0]
        if self.strict_success:  # the paper: "moving forward the correct mug to the target zone"
            out["is_obj_placed"] = out["is_obj_placed"] & (out["mug_forward"] >= STRICT_PUSH)
        return out

    def _mode_reward(self, info: dict, active: torch.Tensor, static_reward: torch.Tensor) -> dict:
        placed = info["is_obj_placed"].float()
        reached = (info["tcp_to_mug_dist"] <= self.reach_thresh).float()
        return {
            "reaching": (1.0 - torch.tanh(10.0 * info["tcp_to_mug_dist"])) * active,
            "push": 2.0 * (1.0 - torch.tanh(5.0 * info["mug_to_goal_dist"])) * reached * active,
            "static": 0.2 * static_reward * placed * active,
            "static_at_goal": 0.2 * info["is_robot_static"].float() * placed * active,
        }


class ShellGamePickEnv(_GoalShellGameEnv):
    """Lift the mug that hides the ball to the goal ~0.1 m above the ball and hold still."""

    MODE = "pick"
    MAX_DENSE_REWARD = 75.0

    def _mode_evaluate(self, info: dict, mug_p: torch.Tensor) -> dict[str, torch.Tensor]:
        out = super()._mode_evaluate(info, mug_p)
        out["mug_lift"] = mug_p[:, 2] - self.mug_geometry.rest_height  # height of the open end above the table
        if self.strict_success:  # the paper: "elevating the correct mug above 0.1m"
            out["is_obj_placed"] = out["mug_lift"] >= STRICT_LIFT
        grasped = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        for j, mug in enumerate(self.mugs):
            grasped = grasped | (self.agent.is_grasping(mug) & (self._target == j))
        out["is_grasped"] = grasped
        return out

    def _mode_reward(self, info: dict, active: torch.Tensor, static_reward: torch.Tensor) -> dict:
        placed = info["is_obj_placed"].float()
        reached = (info["tcp_to_mug_dist"] <= self.reach_thresh).float()
        return {
            "reaching": 3.0 * (1.0 - torch.tanh(10.0 * info["tcp_to_mug_dist"])) * active,
            "reached": 2.0 * reached * active,
            "lift": 30.0 * (1.0 - torch.tanh(5.0 * info["mug_to_goal_dist"])) * reached * active,
            "static": 5.0 * static_reward * placed * reached * active,
            "static_at_goal": 5.0 * info["is_robot_static"].float() * placed * reached * active,
        }

    def _mode_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {"goal_pos": self._goal, "is_grasped": info["is_grasped"].float().reshape(-1, 1)}
