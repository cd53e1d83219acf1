"""Helpers shared by the robot tests: zero actions, running an episode, a seeded state rollout, placing an object in
the scene and projecting a world point into the base camera (the scripted experts live in
:mod:`membench_envs.robo.experts`)."""

from __future__ import annotations

import numpy as np

#: zero actions of the two controllers: pd_joint_delta_pos (8-D) and pd_ee_delta_pose (7-D)
ZERO = np.zeros(8, dtype=np.float32)
ZERO_EE = np.zeros(7, dtype=np.float32)
#: gravity (m/s^2): the upward speed that cancels one control step of it keeps a put object in place
G = 9.81


def state_rollout(env, seed: int, actions) -> tuple[np.ndarray, dict]:
    """The ``full``-variant states of ``reset(seed=seed)`` and of each of ``actions`` after it (stacked), and the
    reset's info."""
    obs, info = env.reset(seed=seed)
    states = [obs["state"]]
    for a in actions:
        states.append(env.step(a)[0]["state"])
    return np.stack(states), info


def run_episode(env, policy, seed: int, check=None, max_steps: int | None = None) -> bool:
    """One episode of ``policy(obs, info) -> action`` from ``reset(seed=seed)`` (at most ``max_steps`` steps);
    ``check(reward, info)`` after each step; returns ``info["success_once"]`` at the end."""
    return bool(episode(env, policy, seed, check, max_steps)["success_once"])


def episode(env, policy, seed: int, check=None, max_steps: int | None = None) -> dict:
    """As :func:`run_episode`; returns the last info."""
    obs, info = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset()
    steps = 0
    while max_steps is None or steps < max_steps:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        steps += 1
        if check is not None:
            check(reward, info)
        if terminated or truncated:
            break
    return info


def idle(obs, info) -> np.ndarray:
    """The arm at rest (joint control)."""
    return ZERO


def put(base, actor, p, v=(0.0, 0.0, 0.0), q=(1.0, 0.0, 0.0, 0.0), hover: bool = False) -> None:
    """Place ``actor`` at ``p`` (orientation ``q``, wxyz) with linear velocity ``v`` and no spin; ``hover`` adds the
    upward speed that cancels gravity over one control step, so an object put in the air ends the step where it
    was put."""
    state = np.zeros(13, dtype=np.float32)
    state[:3], state[3:7], state[7:10] = p, q, v
    if hover:
        state[9] += G * (1.0 / base.control_freq) / 2
    actor.set_state(state[None])


def rest_until(env, t: int, seed: int = 0) -> dict:
    """Reset with ``seed`` and step the idle arm until the observation index is ``t``; returns that info."""
    _, info = env.reset(seed=seed)
    while info["elapsed_steps"] < t:
        _, _, _, _, info = env.step(ZERO)
    return info


def project(base, p: np.ndarray) -> tuple[float, float]:
    """(row, column) of world point ``p`` in the base camera image."""
    params = base._sensors["base_camera"].get_params()
    ext = params["extrinsic_cv"][0].cpu().numpy()
    k = params["intrinsic_cv"][0].cpu().numpy()
    u, v, w = k @ (ext @ np.append(p, 1.0))
    return v / w, u / w


def pixel(base, p: np.ndarray) -> tuple[int, int]:
    """:func:`project`, rounded to the nearest pixel."""
    row, col = project(base, p)
    return int(round(row)), int(round(col))
