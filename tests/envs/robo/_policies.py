"""Scripted policies for the solvability tests: an oracle policy (reads info["oracle"]) and a random chooser.

Both act in ``pd_ee_delta_pose`` (the controller does the inverse kinematics): before the choice phase they hold
still; at the choice phase they pick an object (the oracle's match, or one uniformly at random), hover above it,
descend until the closed gripper's TCP is 3.5 cm above its centre (inside the 5 cm success radius, just above the
object, so a sphere is not rolled away), and hold still there. They read object positions
from the simulator (privileged), so they isolate the question "is the task solvable, and only through memory?".
"""

from __future__ import annotations

import numpy as np


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


def run_episode(env, policy, seed: int) -> bool:
    obs, info = env.reset(seed=seed)
    policy.reset()
    while True:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            return bool(info["success_once"])


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
