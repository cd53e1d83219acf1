"""The run-one-episode helper of the robot tests (the scripted experts live in membench_envs.robo.experts)."""

from __future__ import annotations


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
