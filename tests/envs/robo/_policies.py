"""The run-one-episode helper of the solvability tests (the scripted experts live in membench_envs.robo.experts)."""

from __future__ import annotations


def run_episode(env, policy, seed: int) -> bool:
    obs, info = env.reset(seed=seed)
    policy.reset()
    while True:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            return bool(info["success_once"])
