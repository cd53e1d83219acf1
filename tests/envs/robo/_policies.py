"""Episode helpers of the robot tests (the scripted experts live in membench_envs.robo.experts)."""

from __future__ import annotations

import numpy as np


def state_rollout(env, seed: int, actions) -> tuple[np.ndarray, dict]:
    """The ``full``-variant states of ``reset(seed=seed)`` and of each of ``actions`` after it (stacked), and the
    reset's info."""
    obs, info = env.reset(seed=seed)
    states = [obs["state"]]
    for a in actions:
        states.append(env.step(a)[0]["state"])
    return np.stack(states), info


def run_episode(env, policy, seed: int, check=None) -> bool:
    """One episode of ``policy(obs, info) -> action`` from ``reset(seed=seed)``; ``check(reward, info)`` after each
    step; returns ``info["success_once"]`` at the end."""
    obs, info = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset()
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        if check is not None:
            check(reward, info)
        if terminated or truncated:
            return bool(info["success_once"])
