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
