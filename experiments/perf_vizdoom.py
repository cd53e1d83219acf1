"""`make bench-perf` section `vizdoom`: steps/s of ``MIKASA/ViZDoomTwoColors*`` against vizdoom's own gymnasium
env ``VizdoomHealthGatheringSupreme-v1`` (the closest stock scenario: an acid room with health items), same run.

One process, one thread, random actions, episodes reset when they end; the envs take turns (1000 steps each,
3 rounds) so that all see the same machine load, and each keeps its best round. Engine tics
per step differ (vizdoom's gymnasium env: frame_skip=1 by default; ours: 2), so the table gives both steps/s and
tics/s; the ratio is on tics/s (the engine's work) and on steps/s. Our env also resizes the 320x180 screen to
112x64 per step; vizdoom's env returns its 240x320 screen as is.

Usage: python experiments/perf_vizdoom.py   (about half a minute)
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np

import membench_envs  # noqa: F401  (registers the IDs)

STEPS = 1000
REPEATS = 3
WARMUP = 100


def _rollout(env: gym.Env, actions: np.ndarray) -> float:
    start = time.perf_counter()
    for a in actions:
        if any(env.step(int(a))[2:4]):
            env.reset()
    return len(actions) / (time.perf_counter() - start)


def main() -> int:
    try:
        from vizdoom import gymnasium_wrapper  # noqa: F401  (registers Vizdoom*-v1)
    except ImportError:
        print("vizdoom is not installed: pip install 'membench-envs[vizdoom]'", file=sys.stderr)
        return 1
    reference = "VizdoomHealthGatheringSupreme-v1"
    names = [reference] + [
        f"{env_id} [{variant}]"
        for env_id in ("MIKASA/ViZDoomTwoColors-v0", "MIKASA/ViZDoomTwoColorsHard-v0")
        for variant in ("partial", "full")
    ]
    envs = {reference: gym.make(reference)}
    for name in names[1:]:
        env_id, variant = name[:-1].split(" [")
        envs[name] = gym.make(env_id, obs_variant=variant)
    rng = np.random.default_rng(0)
    best = dict.fromkeys(names, 0.0)
    for env in envs.values():
        env.reset(seed=0)
        _rollout(env, rng.integers(0, env.action_space.n, size=WARMUP))
    for _ in range(REPEATS):  # interleaved: every env sees the same machine load
        for name, env in envs.items():
            best[name] = max(best[name], _rollout(env, rng.integers(0, env.action_space.n, size=STEPS)))
    skips = {name: getattr(env.unwrapped, "frame_skip", 1) for name, env in envs.items()}
    ref = best[reference]
    print(f"{'env':<50} {'tics/step':>9} {'steps/s':>9} {'tics/s':>9} {'steps ratio':>12} {'tics ratio':>11}")
    for name in names:
        sps, skip = best[name], skips[name]
        label = f"{name} (reference)" if name == reference else name
        print(f"{label:<50} {skip:>9} {sps:>9.0f} {sps * skip:>9.0f} {sps / ref:>12.2f} {sps * skip / ref:>11.2f}")
    for env in envs.values():
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
