"""One-line episode videos: ``membench_envs.robo.record_episode("MIKASA/RememberColor3-v0", "rc3.mp4")``.

Frames come from ``render()`` (``render_mode="rgb_array"``: the 512×512 human camera; ``"all"``: that camera plus
the two 128×128 observation cameras side by side), with the debug overlay (step, phase, target, reward terms)
unless ``overlay=False``. The policy is random unless ``policy(obs, info) -> action`` is given. Hidden objects are
parked beyond every camera's far plane, so the video shows exactly the phases the agent sees.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np


def record_episode(
    env: str | gym.Env,
    path: str | Path = "videos/episode.mp4",
    *,
    policy: Callable[[Any, dict], Any] | None = None,
    seed: int = 0,
    max_steps: int | None = None,
    render_mode: str = "rgb_array",
    overlay: bool = True,
    fps: int | None = None,
    **make_kwargs: Any,
) -> Path:
    """Run one episode (until it ends or ``max_steps``) and write it to ``path`` (mp4). Returns the path."""
    import imageio

    import membench_envs  # noqa: F401

    owns = isinstance(env, str)
    if isinstance(env, str):
        env = gym.make(env, render_mode=render_mode, render_overlay=overlay, **make_kwargs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        obs, info = env.reset(seed=seed)
        env.action_space.seed(seed)
        frames = [np.asarray(env.render())]
        steps = 0
        while max_steps is None or steps < max_steps:
            action = policy(obs, info) if policy is not None else env.action_space.sample()
            obs, _, terminated, truncated, info = env.step(action)
            frames.append(np.asarray(env.render()))
            steps += 1
            if np.any(terminated) or np.any(truncated):
                break
        fps = fps or int(env.metadata.get("render_fps", 20))
        with imageio.get_writer(str(path), fps=fps, macro_block_size=8) as writer:
            for frame in frames:
                # imageio's v2 stub types get_writer's result as its base class, which lacks append_data
                writer.append_data(frame[..., :3].astype(np.uint8))  # type: ignore[attr-defined]
    finally:
        if owns:
            env.close()
    return path
