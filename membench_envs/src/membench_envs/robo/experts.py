"""Scripted experts on the privileged state: one policy per MIKASA-Robo family, for datasets and solvability checks.

Each expert acts in ``pd_ee_delta_pose`` (make the env with ``control_mode="pd_ee_delta_pose"``: the controller does
the inverse kinematics) and reads object poses from the simulator and the answer from ``info["oracle"]``, so it
isolates the question "is the task solvable, and only through memory?". ``expert = scripted_expert(env)`` picks the
family's expert; call ``expert.reset()`` after every ``env.reset`` and ``expert(obs, info)`` for each action. Single
environments only (``num_envs=1``).

- :class:`ReachPolicy` (Remember*): hold still until the choice, then hover above the object that matches the oracle
  and descend until the closed gripper's TCP is 3.5 cm above its centre (inside the 5 cm success radius).
- :class:`ShellPolicy` (ShellGame Touch / Push / Pick): touch, push or lift the mug over the ball.
- :class:`TouchSequencePolicy` (Bunch / Seq / ChainOfColors): touch the shown cubes one after the other.
- :class:`TrackPolicy` (Intercept / InterceptGrab): catch the rolling ball from above.
- :class:`RotatePolicy` (RotateLenient / RotateStrict): grasp the peg, turn it by the oracle's remaining angle, put
  it down (``target="prompt"``: by the observation's prompt; ``target=c``: by a constant guess, the chance baseline).
- :class:`CarryPolicy` (TakeItBack): carry the cube into the goal, then back to its start (the oracle).

``choose="random"`` (Reach, Shell) or ``order=...`` (TouchSequence) turn an expert into the chance baseline of
the same motion.

Measured success rates (``make test-all`` runs these sweeps: ``tests/envs/robo/test_solvability.py``,
``test_shell_game.py``, ``test_colors.py``, ``test_intercept.py``, ``test_rotate.py``, ``test_take_it_back.py``):

- Remember* and ShellGame: 98-100% of episodes of every task; the random chooser about chance (1/3, 1/5, 1/9, 1/6,
  1/15).
- Bunch / Seq / ChainOfColors: 100% of 30 episodes per ID, except 67% on ChainOfColors7 (7 touches in the shown
  order within its 80 selection steps are tight for this simple policy); touching 3 random cubes of 9 (chance 1/84)
  never succeeded in 12 BunchOfColors3 episodes.
- Intercept and InterceptGrab (follow the ball from above, descend around it, close the gripper; Intercept then
  carries it into the goal): 15/15 episodes per ID; under ``strict_success=True`` 10/10 per Intercept ID (the ball
  stopped in the zone) and 20/20 per InterceptGrab ID (the ball lifted). Idle and random arms: 0/30 on every ID
  except InterceptSlow (idle 5/30, random 3/30; idle 3/60 on other seeds), where the ball's own sideways speed (up
  to 0.05 m/s) drifts it into the goal zone.
- Rotate* (grasp the peg across its middle, turn it until the oracle ``y_angle_diff`` is about 0, put it down, let
  go, hold still): 20/20 episodes per ID under the default rule; 19/20, 20/20, 19/20, 20/20 (LenientPos,
  LenientPosNeg, StrictPos, StrictPosNeg) under ``strict_success=True``. Idle and random arms: 0/30 on every ID.
- TakeItBack (grasp the cube, tilt the hand 0.6 rad forward, since a hand pointing straight down cannot get low
  beyond x ≈ 0.1 m, carry the cube into the goal region and back to its start, the oracle): 30/30 episodes under
  either rule; idle and random arms 0/30.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Seconds per control step (20 Hz): TrackPolicy's feed-forward on the ball's velocity.
STEP = 0.05


def _wrap_angle(x: float) -> float:
    """``x`` in [-pi, pi)."""
    return (x + math.pi) % (2 * math.pi) - math.pi


class ReachPolicy:
    def __init__(self, env, choose: str = "oracle", seed: int = 0):
        self.base = env.unwrapped
        self.choose = choose
        self.rng = np.random.default_rng(seed)
        self.target: int | None = None

    def reset(self):
        self.target = None

    def _pick(self, info) -> int:
        items = self.base.items
        if self.choose == "random":
            return int(self.rng.integers(len(items)))
        oracle = tuple(int(v) for v in np.atleast_1d(info["oracle"]))
        matches = [j for j, it in enumerate(items) if tuple(it.oracle) == oracle]
        assert len(matches) == 1, (oracle, matches)
        return matches[0]

    def __call__(self, obs, info) -> np.ndarray:
        action = np.zeros(7, dtype=np.float32)
        action[6] = -1.0  # gripper closed: a narrow tip
        if int(info["elapsed_steps"]) < self.base.choice_start:
            return action
        if self.target is None:
            self.target = self._pick(info)
        goal = self.base.memory_object_positions[0, self.target].cpu().numpy().astype(np.float64)
        tcp = self.base.agent.tcp.pose.p[0].cpu().numpy()
        horizontal = np.linalg.norm(goal[:2] - tcp[:2])
        aim = goal + np.array([0.0, 0.0, 0.035 if horizontal < 0.02 else 0.09])
        action[:3] = np.clip((aim - tcp) / 0.1 * 1.5, -1.0, 1.0)
        return action


class ShellPolicy:
    """Wait for the mugs, choose a cup (``oracle`` or ``random``), then touch / push / lift its mug and hold still."""

    def __init__(self, env, choose: str = "oracle", seed: int = 0):
        self.base = env.unwrapped
        self.mode = self.base.MODE
        self.choose = choose
        self.rng = np.random.default_rng(seed)
        self.reset()

    def reset(self):
        self.target = None
        self.stage = 0
        self.count = 0

    @staticmethod
    def _move(action, aim, tcp, gain=1.5, limit=1.0):
        action[:3] = np.clip((aim - tcp) / 0.1 * gain, -limit, limit)

    def __call__(self, obs, info) -> np.ndarray:
        b = self.base
        g = b.mug_geometry
        a = np.zeros(7, dtype=np.float32)
        a[6] = 1.0 if self.mode == "pick" else -1.0  # open to grasp, closed (a narrow tip) to touch / push
        if int(info["elapsed_steps"]) < b.time_offset:
            return a
        if self.target is None:
            self.target = int(self.rng.integers(3)) if self.choose == "random" else int(info["oracle"][0])
        mug = b.mug_positions[0, self.target].cpu().numpy().astype(np.float64)
        tcp = b.agent.tcp.pose.p[0].cpu().numpy().astype(np.float64)
        horizontal = np.linalg.norm(mug[:2] - tcp[:2])
        if self.mode == "touch":
            self._move(a, mug + [0.0, 0.0, g.height / 2 + (0.012 if horizontal < 0.015 else 0.08)], tcp)
        elif self.mode == "push":
            behind = mug + [-(g.outer_radius + 0.03), 0.0, 0.0]
            if self.stage == 0:  # above the point behind the mug
                aim = behind + [0.0, 0.0, 0.1]
                self._move(a, aim, tcp)
                self.stage = int(np.linalg.norm(aim - tcp) < 0.01)
            elif self.stage == 1:  # down behind it
                aim = np.array([behind[0], behind[1], mug[2] - 0.01])
                self._move(a, aim, tcp)
                self.stage = 2 if abs(aim[2] - tcp[2]) < 0.008 else 1
            elif self.stage == 2:  # push forward until the mug reaches the goal's x, then hold still
                self._move(a, np.array([tcp[0] + 0.05, mug[1], mug[2] - 0.01]), tcp, gain=0.6, limit=0.3)
                self.stage = 3 if mug[0] >= b.goal_positions[0, 0].item() - 0.01 else 2
        else:
            if self.stage == 0:  # gripper open, above the mug
                aim = mug + [0.0, 0.0, g.height / 2 + 0.06]
                self._move(a, aim, tcp)
                self.stage = int(np.linalg.norm(aim - tcp) < 0.01)
            elif self.stage == 1:  # down around the closed end, only while centred above it
                low, high = g.height / 2 - 0.02, g.height / 2 + 0.06
                dz = low if horizontal < 0.006 else max(low, min(high, tcp[2] - mug[2]))
                aim = mug + [0.0, 0.0, dz]
                self._move(a, aim, tcp, gain=1.0)
                self.stage = 2 if np.linalg.norm(aim - tcp) < 0.006 else 1
            elif self.stage == 2:  # close
                a[6] = -1.0
                self.count += 1
                self.stage = 3 if self.count >= 6 else 2
            else:  # lift the mug to the goal, then hold still
                a[6] = -1.0
                goal = b.goal_positions[0].cpu().numpy()
                if self.stage == 3:
                    self._move(a, goal + (tcp - mug), tcp, gain=1.0, limit=0.5)
                    self.stage = 4 if np.linalg.norm(goal - mug) < 0.02 else 3
        return a


class TouchSequencePolicy:
    """Bunch/Seq/ChainOfColors: touch the cubes of ``order`` (default: the oracle's, i.e. the shown order) one after
    the other: hover above a cube, descend to its touch point, hold still until the env counts the touch, rise.

    ``order="reversed"`` touches the shown cubes last-first, ``"nearest"`` along the arc of slots (any order: Bunch and
    Seq), ``order=[k, ...]`` any given colours. Acts in
    ``pd_ee_delta_pose`` and reads cube positions from the simulator (privileged)."""

    HOVER = 0.025  # height above the touch point while moving sideways
    ABOVE = 0.01  # where the TCP stops: the closed fingertips reach ~1 cm below it, onto the top face
    GAIN = 2.0

    def __init__(self, env, order="oracle", hasty: bool = False):
        self.base = env.unwrapped
        self.order = order
        self.hasty = hasty  # move on after ONE step meeting the touch condition, whatever the env counted
        self.reset()

    def _done(self, k: int, info) -> bool:
        if not self.hasty:
            return bool(np.asarray(info["touched"]).reshape(-1)[k])
        b = self.base
        point = b.touch_points()[0, k].cpu().numpy()
        tcp = b.agent.tcp.pose.p[0].cpu().numpy()
        return bool(np.linalg.norm(point - tcp) < b.goal_thresh and info["is_robot_static"])

    def reset(self):
        self.plan: list[int] | None = None
        self.i = 0

    def __call__(self, obs, info) -> np.ndarray:
        b = self.base
        action = np.zeros(7, dtype=np.float32)
        action[6] = -1.0  # gripper closed: a narrow tip
        if int(info["elapsed_steps"]) < b.selection_start:
            return action
        if self.plan is None:
            seq = [int(k) for k in np.atleast_1d(info["oracle"])]
            if self.order == "oracle":
                self.plan = seq
            elif self.order == "reversed":
                self.plan = seq[::-1]
            elif self.order == "nearest":  # any order (Bunch/Seq): along the arc of slots, the shortest path
                y = b.memory_object_positions[0, :, 1].cpu().numpy()
                self.plan = sorted(seq, key=lambda k: y[k])
            else:
                self.plan = list(self.order)
        while self.i < len(self.plan) and self._done(self.plan[self.i], info):
            self.i += 1
        tcp = b.agent.tcp.pose.p[0].cpu().numpy().astype(np.float64)
        if self.i >= len(self.plan):  # done: hold still well above the cubes
            aim = tcp.copy()
            aim[2] = max(aim[2], 0.12)
        else:
            point = b.touch_points()[0, self.plan[self.i]].cpu().numpy().astype(np.float64)
            horizontal = np.linalg.norm(point[:2] - tcp[:2])
            aim = point + np.array([0.0, 0.0, self.ABOVE if horizontal < 0.02 else self.HOVER])
            if horizontal > 0.04 and tcp[2] < point[2] + self.HOVER - 0.01:  # rise before moving sideways
                aim = np.array([tcp[0], tcp[1], point[2] + self.HOVER])
        if np.linalg.norm(aim - tcp) > 0.004:  # close enough: no command, so the arm comes to rest
            action[:3] = np.clip((aim - tcp) / 0.1 * self.GAIN, -1.0, 1.0)
        return action


class TrackPolicy:
    """Catch the rolling ball: hover above its path ahead of it with the gripper open, follow it from above (feed-
    forward on its velocity + feedback on the position error), descend around it once on top of it, close. Then
    InterceptGrab holds still (``lift``: raise it 8 cm first, for ``strict_success``) and Intercept carries it into
    the goal. Acts in ``pd_ee_delta_pose``."""

    HIGH = 0.085  # TCP height while following: the open fingertips clear the ball
    MOVE = 0.039  # metres the TCP moves in one step at a full command (measured)

    def __init__(self, env, lift: bool = False):
        self.base = env.unwrapped
        self.lift = lift
        self.reset()

    def reset(self):
        self.stage = "hover"
        self.wait_y = None
        self.count = 0

    def _wait_point(self, ball, vel, tcp) -> float:
        """The first y ahead of the ball that the TCP reaches with time to spare."""
        for y in np.arange(-0.45, 0.5, 0.01):
            if y < ball[1] + 0.15:
                continue
            travel = (max(abs(y - tcp[1]), abs(ball[0] - tcp[0])) + max(0.0, tcp[2] - self.HIGH)) / 0.035
            if travel + 6 <= (y - 0.12 - ball[1]) / max(vel[1], 1e-3) / STEP:
                return y
        return 0.5

    def __call__(self, obs, info) -> np.ndarray:
        b = self.base
        a = np.zeros(7, dtype=np.float32)
        a[6] = 1.0  # open
        tcp = b.agent.tcp.pose.p[0].cpu().numpy().astype(np.float64)
        ball = b.ball_position[0].cpu().numpy().astype(np.float64)
        vel = b.ball.linear_velocity[0].cpu().numpy().astype(np.float64)
        if self.stage == "hover":
            if int(info["elapsed_steps"]) < 2:  # Intercept's ball lands during the first step
                a[2] = -1.0
                return a
            if self.wait_y is None:
                self.wait_y = self._wait_point(ball, vel, tcp)
            steps = max(0.0, (self.wait_y - ball[1]) / max(vel[1], 1e-3) / STEP)
            aim = np.array([ball[0] + vel[0] * steps * STEP, self.wait_y, self.HIGH])
            a[:3] = np.clip((aim - tcp) / 0.1 * 2.0, -1, 1)
            if ball[1] > tcp[1] - 0.12:
                self.stage = "follow"
        if self.stage in ("follow", "descend", "close"):
            a[:2] = np.clip(vel[:2] * STEP / self.MOVE + (ball[:2] - tcp[:2]) / 0.1 * 3.0, -1, 1)
            if self.stage == "follow":
                a[2] = np.clip((self.HIGH - tcp[2]) / 0.1 * 2, -1, 1)
                self.count = self.count + 1 if np.linalg.norm(ball[:2] - tcp[:2]) < 0.008 else 0
                if self.count >= 2:
                    self.stage, self.count = "descend", 0
            elif self.stage == "descend":
                a[2] = np.clip((ball[2] - tcp[2]) / 0.1 * 2.5, -1, 1)
                if tcp[2] - ball[2] < 0.008:
                    self.stage = "close"
            else:
                a[2] = np.clip((ball[2] - tcp[2]) / 0.1 * 2, -1, 1)
                a[6] = -1.0
                self.count += 1
                if self.count >= 3:
                    self.stage = "hold"
        elif self.stage == "hold":
            a[6] = -1.0
            if hasattr(b, "goal_position"):  # Intercept: carry the ball into the goal
                goal = b.goal_position[0].cpu().numpy()
                a[:3] = np.clip((np.array([goal[0], goal[1], 0.03]) - tcp) / 0.1, -0.5, 0.5)
            elif self.lift:
                a[:3] = np.clip((np.array([tcp[0], tcp[1], 0.1]) - tcp) / 0.1, -0.5, 0.5)
        return a


class RotatePolicy:
    """Turn the gripper so its fingers close across the peg's middle (choosing the turn direction that keeps the
    wrist joint in range for the turn to come), descend, close, lift 2 cm, turn until the rotation still to do is
    ~0, put the peg down, open, rise and hold still. Acts in ``pd_ee_delta_pose``.

    ``target``: where the policy takes θ* from. ``"oracle"`` (default): the env's oracle ``y_angle_diff``, the rotation
    still to do; ``"prompt"``: ``obs["prompt"]`` (what the default observation carries), turning until wrap(θ* −
    turned so far) ~ 0; a number c: a constant guess, the chance baseline of a policy that does not see the prompt.
    The peg's pose and start yaw are read from the simulator (privileged) in every case."""

    GRASP_Z = 0.022
    CARRY_Z = 0.04

    def __init__(self, env, target: str | float = "oracle"):
        self.base = env.unwrapped
        if isinstance(target, str) and target not in ("oracle", "prompt"):
            raise ValueError(f"target must be 'oracle', 'prompt' or a number (radians), got {target!r}")
        self.target = target
        self.reset()

    def _target_and_diff(self, obs) -> tuple[float, float]:
        """(θ* as this policy knows it, the rotation still to do towards it)."""
        b = self.base
        if self.target == "oracle":
            return float(b.target_angle[0]), float(b.angle_diff()[0])
        if self.target == "prompt":
            if "prompt" not in obs:
                raise ValueError(
                    f"RotatePolicy(target='prompt') needs obs['prompt']; this observation has {sorted(obs)}"
                )
            theta = float(np.asarray(obs["prompt"]).reshape(-1)[0])
        else:
            theta = float(self.target)
        return theta, _wrap_angle(theta - float(b.relative_angle()[0]))

    def reset(self):
        self.stage, self.count = "align", 0
        self.turn, self.prev, self.turned = None, None, 0.0

    def _finger_yaw(self) -> float:
        from mani_skill.utils.geometry import rotation_conversions

        m = rotation_conversions.quaternion_to_matrix(self.base.agent.tcp.pose.q)[0].numpy()
        return math.atan2(m[1, 1], m[0, 1])  # the fingers close along the TCP's y axis

    def __call__(self, obs, info) -> np.ndarray:
        b = self.base
        a = np.zeros(7, dtype=np.float32)
        tcp = b.agent.tcp.pose.p[0].numpy().astype(np.float64)
        peg = b.peg.pose.p[0].numpy().astype(np.float64)
        phi = self._finger_yaw()
        if self.prev is not None:
            self.turned += _wrap_angle(phi - self.prev)
        self.prev = phi
        target, diff = self._target_and_diff(obs)
        if self.turn is None:  # the fingers' line across the peg, up to half turns of the gripper
            e = _wrap_angle(2 * (float(b.peg_yaw()[0]) + math.pi / 2 - phi)) / 2
            options = [e + k * math.pi for k in (-1, 0, 1)]
            ok = [o for o in options if max(o, o + target) <= 1.9 and min(o, o + target) >= -3.4]
            self.turn = min(ok or options, key=lambda o: max(abs(o), abs(o + target)))
        yaw_rate = 0.0
        a[6] = -1.0
        if self.stage == "align":
            aim, yaw_rate, a[6] = np.array([peg[0], peg[1], 0.12]), self.turn - self.turned, 1.0
            if abs(yaw_rate) < 0.03 and np.linalg.norm(aim - tcp) < 0.01:
                self.stage = "descend"
        elif self.stage == "descend":
            aim, a[6] = np.array([peg[0], peg[1], self.GRASP_Z]), 1.0
            if abs(tcp[2] - self.GRASP_Z) < 0.006:
                self.stage, self.count = "close", 0
        elif self.stage == "close":
            aim = np.array([tcp[0], tcp[1], self.GRASP_Z])
            self.count += 1
            if self.count >= 4:
                self.stage = "turn"
        elif self.stage == "turn":
            aim, yaw_rate = np.array([tcp[0], tcp[1], self.CARRY_Z]), diff
            if abs(diff) < 0.02:
                self.stage = "lower"
        elif self.stage == "lower":
            aim, yaw_rate = np.array([tcp[0], tcp[1], self.GRASP_Z + 0.004]), diff
            if abs(tcp[2] - aim[2]) < 0.005:
                self.stage, self.count = "release", 0
        elif self.stage == "release":  # open, then rise: the peg rests on the table on its own
            aim, a[6] = np.array([tcp[0], tcp[1], self.GRASP_Z + 0.004 + (0.05 if self.count >= 3 else 0.0)]), 1.0
            self.count += 1
            if self.count >= 8:
                self.stage = "hold"
        else:
            a[6] = 1.0
            return a
        a[:3] = np.clip((aim - tcp) / 0.1 * 2.0, -1, 1)
        a[5] = np.clip(-yaw_rate / 0.1 * 1.5, -1, 1)  # a positive command turns the downward TCP clockwise
        return a


class CarryPolicy:
    """Grasp the cube from above, lift it while tilting the hand 0.6 rad forward (a hand pointing straight down
    cannot get low beyond x ≈ 0.1, short of the goal), carry it into the goal region, then to its start (the
    oracle), put it down and let go. Acts in ``pd_ee_delta_pose``."""

    CARRY_Z = 0.045
    TILT = 0.6

    def __init__(self, env):
        self.base = env.unwrapped
        self.reset()

    def reset(self):
        self.stage, self.count = "reach", 0

    def _tilt(self) -> float:
        from mani_skill.utils.geometry import rotation_conversions

        m = rotation_conversions.quaternion_to_matrix(self.base.agent.tcp.pose.q)[0].numpy()
        return float(np.arccos(np.clip(-m[2, 2], -1.0, 1.0)))  # the TCP's z axis away from straight down

    def __call__(self, obs, info) -> np.ndarray:
        b = self.base
        a = np.zeros(7, dtype=np.float32)
        tcp = b.agent.tcp.pose.p[0].numpy().astype(np.float64)
        cube = b.cube.pose.p[0].numpy().astype(np.float64)
        start = np.asarray(info["oracle"], dtype=np.float64)
        goal = b.goal_position[0].numpy().astype(np.float64)
        a[6] = -1.0
        if self.stage in ("reach", "descend", "close", "lift"):
            aim = self._grasp(a, tcp, cube)
        else:
            aim = self._carry(a, tcp, cube, start, goal)
        a[:3] = np.clip((aim - tcp) / 0.1 * 1.5, -1, 1)
        return a

    def _grasp(self, a: np.ndarray, tcp: np.ndarray, cube: np.ndarray) -> np.ndarray:
        """The aim (and gripper, pitch in ``a``) of the stages up to the lifted, tilted cube; moves the stage on."""
        if self.stage == "reach":
            aim, a[6] = np.array([cube[0], cube[1], 0.1]), 1.0
            if np.linalg.norm(aim - tcp) < 0.01:
                self.stage = "descend"
        elif self.stage == "descend":
            aim, a[6] = cube.copy(), 1.0
            if abs(tcp[2] - cube[2]) < 0.005:
                self.stage, self.count = "close", 0
        elif self.stage == "close":
            aim = tcp.copy()
            self.count += 1
            if self.count >= 4:
                self.stage = "lift"
        else:  # lift
            aim = np.array([tcp[0], tcp[1], self.CARRY_Z + 0.02])
            if self._tilt() < self.TILT:
                a[4] = 1.0  # pitch the hand forward
            else:
                self.stage = "to_goal"
        return aim

    def _carry(
        self, a: np.ndarray, tcp: np.ndarray, cube: np.ndarray, start: np.ndarray, goal: np.ndarray
    ) -> np.ndarray:
        """The aim (and gripper in ``a``) of the stages from the goal region back to the start; moves the stage on."""
        b = self.base

        def carry(xy):  # the TCP's aim that brings the held cube to xy, CARRY_Z high
            return tcp + np.array([xy[0] - cube[0], xy[1] - cube[1], self.CARRY_Z - cube[2]])

        if self.stage == "to_goal":
            aim = carry(goal)
            if bool(b.goal_reached[0]):
                self.stage = "back"
        elif self.stage == "back":
            aim = carry(start)
            if np.linalg.norm(cube[:2] - start[:2]) < 0.01:
                self.stage = "put_down"
        elif self.stage == "put_down":
            aim = tcp + np.array([start[0] - cube[0], start[1] - cube[1], b.cube_halfsize - cube[2]])
            if abs(cube[2] - b.cube_halfsize) < 0.004:
                self.stage, self.count = "release", 0
        else:
            aim, a[6] = tcp + np.array([0.0, 0.0, 0.02 if self.count >= 3 else 0.0]), 1.0
            self.count += 1
        return aim


def scripted_expert(env: Any, **kwargs: Any):
    """The scripted expert of ``env``'s family (kwargs go to its class); a clear error for a family without one."""
    from membench_envs.robo._remember import RememberBaseEnv
    from membench_envs.robo.colors import ColorsEnv
    from membench_envs.robo.intercept import _RollingBallEnv
    from membench_envs.robo.shell_game import ShellGameEnv

    base = env.unwrapped
    if getattr(base, "num_envs", 1) != 1:
        raise ValueError("the scripted experts drive one environment (num_envs=1)")
    control = getattr(base, "control_mode", None)
    if control != "pd_ee_delta_pose":
        raise ValueError(
            f"the scripted experts act in pd_ee_delta_pose; this env uses {control!r} "
            "(make it with control_mode='pd_ee_delta_pose')"
        )
    from membench_envs.robo.rotate import _RotatePegEnv
    from membench_envs.robo.take_it_back import TakeItBackEnv

    for cls, expert in (
        (RememberBaseEnv, ReachPolicy),
        (ShellGameEnv, ShellPolicy),
        (ColorsEnv, TouchSequencePolicy),
        (_RollingBallEnv, TrackPolicy),
        (_RotatePegEnv, RotatePolicy),
        (TakeItBackEnv, CarryPolicy),
    ):
        if isinstance(base, cls):
            return expert(env, **kwargs)
    raise ValueError(f"no scripted expert for {type(base).__name__}")


__all__ = [
    "STEP",
    "CarryPolicy",
    "ReachPolicy",
    "RotatePolicy",
    "ShellPolicy",
    "TouchSequencePolicy",
    "TrackPolicy",
    "scripted_expert",
]
