"""`make bench-perf` section `envs`: env-steps/s of the native batched tasks against gymnasium's SyncVectorEnv.

For each native task (T-Maze, MemoryLength, MemoryCards, Ballet, Passive Visual Match) and N in (1, 64, 1024):
  - batched: the task's native ``vector_entry_point`` (one numpy step for N envs);
  - sync:    N single environments in gymnasium's ``SyncVectorEnv`` (``vectorization_mode="sync"``).
Reference: POPGym RepeatFirstEasy in ``SyncVectorEnv`` (membench's ``POPGym/RepeatFirstEasy-v0`` if registered,
else popgym's own ``popgym-RepeatFirstEasy-v0``).

Random actions, drawn before timing; a fixed number of vector steps is timed after a warm-up; one process,
one thread. Both sides use gymnasium's default NEXT_STEP autoreset.

Usage: python experiments/perf_envs.py   (under a minute on 2 busy cores)
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np

import membench_envs  # noqa: F401  (registers the IDs)

NS = (1, 64, 1024)
TASKS = {
    "T-Maze": "MIKASA/TMazePassive-v0",
    "MemoryLength": "MIKASA/MemoryLength-v0",
    "MemoryCards": "MIKASA/MemoryCards-v0",
    "Ballet": "MIKASA/BalletEasy-v0",
    "PassiveVisualMatch": "MIKASA/PassiveVisualMatch-v0",
}
# Timed vector steps per (mode, N): each cell is a fixed amount of work, well above timer resolution.
STEPS = {"batched": {1: 20000, 64: 5000, 1024: 1000}, "sync": {1: 20000, 64: 300, 1024: 30}}
WARMUP = {"batched": 200, "sync": 5}


def steps_per_second(venv: gym.vector.VectorEnv, steps: int, warmup: int, seed: int = 0) -> float:
    """Env-steps per second (vector steps × N) over ``steps`` timed vector steps of random actions."""
    n = venv.num_envs
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, venv.single_action_space.n, size=(warmup + steps, n))
    venv.reset(seed=seed)
    for a in actions[:warmup]:
        venv.step(a)
    start = time.perf_counter()
    for a in actions[warmup:]:
        venv.step(a)
    elapsed = time.perf_counter() - start
    return steps * n / elapsed


def make_vec(env_id: str, n: int, mode: str) -> gym.vector.VectorEnv:
    if mode == "batched":
        return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="sync")


def reference_id() -> tuple[str, str]:
    if "POPGym/RepeatFirstEasy-v0" in gym.registry:
        return "POPGym/RepeatFirstEasy-v0", "membench's POPGym/RepeatFirstEasy-v0"
    import popgym  # noqa: F401  (registers popgym-* IDs)

    return "popgym-RepeatFirstEasy-v0", "popgym's own popgym-RepeatFirstEasy-v0 (POPGym/ IDs not registered yet)"


def main() -> int:
    t0 = time.perf_counter()
    results: dict[tuple[str, str, int], float] = {}
    for name, env_id in TASKS.items():
        for n in NS:
            for mode in ("batched", "sync"):
                venv = make_vec(env_id, n, mode)
                results[(name, mode, n)] = steps_per_second(venv, STEPS[mode][n], WARMUP[mode])
                venv.close()
    ref_id, ref_note = reference_id()
    for n in NS:
        venv = make_vec(ref_id, n, "sync")
        results[("POPGym RepeatFirstEasy", "sync", n)] = steps_per_second(venv, STEPS["sync"][n], WARMUP["sync"])
        venv.close()

    print(f"env-steps/s, random actions, one process (python {sys.version.split()[0]}, gymnasium {gym.__version__})")
    print(f"reference: {ref_note}, in SyncVectorEnv")
    header = f"{'task':<24}{'N':>6}{'batched':>14}{'sync':>14}{'batched/sync':>14}{'batched/ref':>13}"
    print(header)
    print("-" * len(header))
    for name in TASKS:
        for n in NS:
            b, s = results[(name, "batched", n)], results[(name, "sync", n)]
            ref = results[("POPGym RepeatFirstEasy", "sync", n)]
            print(f"{name:<24}{n:>6}{b:>14,.0f}{s:>14,.0f}{b / s:>13.1f}x{b / ref:>12.1f}x")
    for n in NS:
        ref = results[("POPGym RepeatFirstEasy", "sync", n)]
        print(f"{'POPGym RepeatFirstEasy':<24}{n:>6}{'-':>14}{ref:>14,.0f}{'-':>14}{'1.0x':>13}")
    ratio = results[("T-Maze", "batched", 1024)] / results[("T-Maze", "sync", 1024)]
    print(f"\nbatched T-Maze N=1024 vs SyncVectorEnv N=1024: {ratio:.1f}x (target >= 50x)")
    print(f"(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
