"""`make bench-perf` section `memory_maze`: steps/s of ``MIKASA/MemoryMaze9x9-v0`` against the package's own task.

In one process (OMP_NUM_THREADS=1; the EGL/OSMesa rasteriser may use threads of its own), the same pre-drawn random
actions (after a warm-up, 3 repeats taken round robin over the configurations, best of 3; no episode ends within
them, T = 1000):
  - raw: memory-maze's dm_env task ``memory_maze_9x9(global_observables=True)``, stepped directly (what our
    env wraps: it always builds the task with the extra observations, the oracle being in every variant's info);
  - raw, image only: ``memory_maze_9x9(image_only_obs=True)``, what MIKASA-Base's ``MemoryMaze-9x9-v0`` steps
    (no extra observations to compute);
  - ours, per variant: ``gym.make("MIKASA/MemoryMaze9x9-v0", obs_variant=...)`` (gymnasium's checker wrappers
    included, as a user gets it).
Steps per CPU-second (this process's CPU time, the renderer's threads included) are what the ratio compares, against
the raw task with the extra observations: the wrapper's own overhead. On a shared machine they vary less than
wall-clock steps/s, which are printed beside them.
A reset (a new maze) and a seeded reset (the task rebuilt) are timed once each (wall clock).

Usage: python experiments/perf_memory_maze.py [--steps N]   (about a minute with the default 100 steps)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
from membench_envs.envs.backends.memory_maze import load_tasks
from membench_envs.envs.core.mujoco_gl import select_mujoco_gl

import membench_envs  # noqa: F401  (registers the IDs)

ENV_ID = "MIKASA/MemoryMaze9x9-v0"
REPEATS = 3
WARMUP = 20


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="timed steps per repeat (default 100)")
    args = parser.parse_args(argv)
    backend = select_mujoco_gl(ENV_ID)
    # the same actions everywhere; WARMUP + REPEATS * steps stays below T = 1000, so no episode ends
    steps = min(args.steps, (1000 - WARMUP) // REPEATS - 1)
    actions = np.random.default_rng(0).integers(0, 6, WARMUP + REPEATS * steps)

    tasks = load_tasks(ENV_ID, backend)  # memory_maze.tasks, imported as our env does (no legacy gym)
    configs = {}
    for name, kwargs in (
        ("raw dm_env task (global_observables=True)", {"global_observables": True}),
        ("raw dm_env task (image_only_obs=True)", {"image_only_obs": True}),
    ):
        task = tasks.memory_maze_9x9(seed=0, **kwargs)
        task.reset()
        configs[name] = (task, task.step)
    timed_resets = {}
    for variant in ("partial", "oracle", "full"):
        env = gym.make(ENV_ID, obs_variant=variant)
        if variant == "partial":
            for label, seed in (("reset (new maze)", None), ("reset(seed=...) (task rebuilt)", 1)):
                begin = time.perf_counter()
                env.reset(seed=seed)
                timed_resets[label] = time.perf_counter() - begin
        env.reset(seed=0)
        configs[f"ours, obs_variant={variant!r}"] = (env, env.step)

    for _, step in configs.values():
        for a in actions[:WARMUP]:
            step(int(a))
    # round robin over the configurations, so that a busy moment of a shared machine hits all of them alike
    wall = dict.fromkeys(configs, 0.0)
    cpu = dict.fromkeys(configs, 0.0)
    for r in range(REPEATS):
        chunk = actions[WARMUP + r * steps : WARMUP + (r + 1) * steps]
        for name, (_, step) in configs.items():
            begin, begin_cpu = time.perf_counter(), time.process_time()
            for a in chunk:
                step(int(a))
            wall[name] = max(wall[name], steps / (time.perf_counter() - begin))
            cpu[name] = max(cpu[name], steps / (time.process_time() - begin_cpu))
    for env, _ in configs.values():
        env.close()

    ref = next(iter(cpu.values()))
    print(f"Memory Maze 9x9, MUJOCO_GL={backend}, {steps} random-action steps per repeat, best of {REPEATS}")
    print(f"{'':44s} {'steps/s':>8s} {'steps/CPU-s':>12s} {'vs raw (CPU)':>13s}")
    for name in configs:
        print(f"{name:44s} {wall[name]:8.1f} {cpu[name]:12.1f} {cpu[name] / ref:13.2f}")
    print("; ".join(f"{label}: {seconds:.2f} s" for label, seconds in timed_resets.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
