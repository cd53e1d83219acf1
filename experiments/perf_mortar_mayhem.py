"""`make bench-perf` section `mortar_mayhem`: env steps/s of our numpy Mortar Mayhem against the authors' pygame
``memory_gym`` env, in the same process and run.

For each preset (Grid and the continuous default), one thread, pre-drawn random actions (episodes reset when they
end; random play dies at the first verification, so resets are part of the cost, as in training early on):
  - memory_gym: the reference env (``MortarMayhem-Grid-v0`` / ``MortarMayhem-v0``; skipped if not installed);
  - ours, single: ``gym.make("MIKASA/...")`` (the same 84x84 picture every step);
  - ours, batched: ``gym.make_vec("MIKASA/...", num_envs=N)``, the native numpy vector env, steps/s counted as
    environment steps (N per call).
Best of 3 repeats; ratios are against memory_gym.

Usage: python experiments/perf_mortar_mayhem.py [--steps 3000] [--num-envs 64]   (about half a minute)
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import membench_envs  # noqa: E402, F401  (registers the IDs)

PRESETS = {"MIKASA/MortarMayhemGrid-v0": "MortarMayhem-Grid-v0", "MIKASA/MortarMayhem-v0": "MortarMayhem-v0"}
REPEATS = 3


def _single_steps_per_second(env: gym.Env, actions: list, as_list: bool) -> float:
    env.reset(seed=0)
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        for a in actions:
            if any(env.step(list(a) if as_list else a)[2:4]):
                env.reset()
        best = max(best, len(actions) / (time.perf_counter() - start))
    return best


def _vector_steps_per_second(env_id: str, num_envs: int, calls: int) -> float:
    venv = gym.make_vec(env_id, num_envs=num_envs)
    venv.action_space.seed(0)
    actions = [venv.action_space.sample() for _ in range(calls)]
    venv.reset(seed=0)
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        for a in actions:
            venv.step(a)
        best = max(best, calls * num_envs / (time.perf_counter() - start))
    return best


def _ratio(ours: float, reference: float | None) -> str:
    return f"{ours / reference:6.1f}x" if reference else "   n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="single-env steps per repeat")
    parser.add_argument("--num-envs", type=int, default=64, help="environments of the batched env")
    args = parser.parse_args()
    try:
        import memory_gym  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - the reference is optional
        memory_gym = None
        print(f"memory_gym not importable ({type(exc).__name__}: {exc}); our env only")
    print(f"{'preset':32s} {'memory_gym':>12s} {'ours single':>12s} {'ratio':>7s} "
          f"{f'ours x{args.num_envs}':>12s} {'ratio':>7s}   (env steps/s, best of {REPEATS})")
    for env_id, upstream in PRESETS.items():
        ours = gym.make(env_id)
        ours.action_space.seed(0)
        actions = [ours.action_space.sample() for _ in range(args.steps)]
        grid = isinstance(ours.action_space, gym.spaces.Discrete)
        reference = None
        if memory_gym is not None:
            up = gym.make(upstream)
            reference = _single_steps_per_second(up, actions, as_list=not grid)
            up.close()
        single = _single_steps_per_second(ours, actions, as_list=False)
        batched = _vector_steps_per_second(env_id, args.num_envs, max(args.steps // args.num_envs, 20))
        print(f"{env_id:32s} {reference or float('nan'):12.0f} {single:12.0f} {_ratio(single, reference):>7s} "
              f"{batched:12.0f} {_ratio(batched, reference):>7s}", flush=True)
    print(f"numpy {np.__version__}, gymnasium {gym.__version__}")


if __name__ == "__main__":
    main()
