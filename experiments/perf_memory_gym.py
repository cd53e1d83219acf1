"""`make bench-perf` section `memory_gym`: env-steps/s of membench's numpy Memory Gym tasks (Mortar Mayhem, Mystery
Path, Searing Spotlights) against memory-gym's pygame originals, in the same run.

For each task (its Grid versions take Discrete(4) actions, the others MultiDiscrete([3, 3])):
  - memory_gym: upstream's env (``memory_gym``, pygame), one env, stepped in a Python loop (its reference);
  - single:     ``gym.make("MIKASA/<task>-v0")`` (the numpy core with N = 1);
  - batched:    the native ``vector_entry_point`` with N = 64 and N = 256 (one numpy step for N envs).
All use the partial observation (the 84x84 image), random actions drawn before timing, resets included (a done
env is reset in the loop; the batched env autoresets). Random play ends episodes early: Mortar Mayhem at its first
verification, endless Mystery Path after ~25 steps (so its rates are mostly path generation), Searing Spotlights
after about 75 steps (endless about 100). One process, one thread; the best of 3 interleaved rounds per row.
memory_gym is optional: without it the table shows our numbers only.

Usage: python experiments/perf_memory_gym.py   (about a minute on 2 busy cores)
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import gymnasium as gym
import numpy as np

import membench_envs  # noqa: F401  (registers the IDs)

TASKS = {  # name: (our ID, upstream ID)
    "MortarMayhem-Grid": ("MIKASA/MortarMayhemGrid-v0", "MortarMayhem-Grid-v0"),
    "MortarMayhem": ("MIKASA/MortarMayhem-v0", "MortarMayhem-v0"),
    "MysteryPath-Grid": ("MIKASA/MysteryPathGrid-v0", "MysteryPath-Grid-v0"),
    "MysteryPath": ("MIKASA/MysteryPath-v0", "MysteryPath-v0"),
    "Endless-MysteryPath": ("MIKASA/EndlessMysteryPath-v0", "Endless-MysteryPath-v0"),
    "SearingSpotlights": ("MIKASA/SearingSpotlights-v0", "SearingSpotlights-v0"),
    "Endless-SearingSpot.": ("MIKASA/EndlessSearingSpotlights-v0", "Endless-SearingSpotlights-v0"),
}
SINGLE_STEPS, BATCHED_STEPS, ROUNDS = 2000, {64: 100, 256: 30}, 3


def actions(space: gym.Space, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if isinstance(space, gym.spaces.Discrete):
        return rng.integers(0, space.n, size=count)
    return rng.integers(0, space.nvec, size=(count, *space.shape))


def single_rate(env: gym.Env, steps: int, as_list: bool = False) -> float:
    acts = actions(env.action_space, steps)
    env.reset(seed=0)
    for a in acts[:50]:  # warm-up
        _, _, term, trunc, _ = env.step(list(a) if as_list else a)
        if term or trunc:
            env.reset()
    start = time.perf_counter()
    for a in acts:
        _, _, term, trunc, _ = env.step(list(a) if as_list else a)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def batched_rate(env_id: str, n: int, steps: int) -> float:
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    acts = actions(venv.single_action_space, steps * n).reshape(steps, n, *venv.single_action_space.shape)
    venv.reset(seed=0)
    for a in acts[:5]:
        venv.step(a)
    start = time.perf_counter()
    for a in acts:
        venv.step(a)
    elapsed = time.perf_counter() - start
    venv.close()
    return steps * n / elapsed


def main() -> int:
    t0 = time.perf_counter()
    have_upstream = importlib.util.find_spec("memory_gym") is not None
    if have_upstream:
        import memory_gym  # noqa: F401  (registers the upstream IDs)
    print(f"{'task':20s} {'env':22s} {'steps/s':>10s} {'vs memory_gym':>14s}")
    for name, (ours, theirs) in TASKS.items():
        # ROUNDS interleaved rounds, the best rate of each: a busy machine slows single rounds, not all of them
        best: dict[str, float] = {}
        for _ in range(ROUNDS):
            rates = {}
            env = gym.make(ours)
            if have_upstream:  # upstream's MultiDiscrete envs take their actions as lists
                rates["memory_gym (pygame)"] = single_rate(
                    gym.make(theirs).unwrapped,
                    SINGLE_STEPS,
                    as_list=not isinstance(env.action_space, gym.spaces.Discrete),
                )
            rates["membench single"] = single_rate(env, SINGLE_STEPS)
            for n, steps in BATCHED_STEPS.items():
                rates[f"membench batched N={n}"] = batched_rate(ours, n, steps)
            for label, rate in rates.items():
                best[label] = max(best.get(label, 0.0), rate)
        ref = best.get("memory_gym (pygame)")
        for label, rate in best.items():
            ratio = f"{rate / ref:13.2f}x" if ref else f"{'-':>14s}"
            print(f"{name:20s} {label:22s} {rate:10.0f} {ratio}")
    if not have_upstream:
        print("memory_gym is not installed: no reference column (pip install memory-gym --no-deps pygame-ce)")
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
