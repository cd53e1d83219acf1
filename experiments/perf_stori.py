"""`make bench-perf` section `stori`: emulator frames/s of each STORI preset against raw ``ALE/<Game>-v5``.

For each STORI game (Breakout, Boxing, Gopher, BankHeist), in one process, one thread, the same number of agent
steps of pre-drawn random actions (frame skip 4, so frames = 4 × steps; episodes reset when they end; best of 3
repeats):
  - reference: ale-py's own ``ALE/<Game>-v5`` with ``frameskip=4, repeat_action_probability=0.0`` (STORI's
    setting: sticky actions off), which returns the last frame of each step;
  - ``Default (no pool)``: ``STORI/<Game>-Default-v0`` with ``max_pool=False``: the same work, through StoriEnv;
  - every preset at its defaults (max-pool of the last two frames, as the paper's agents).
The overhead column is frames/s relative to the reference (positive = slower). The RAM-edit presets (Boxing 5C,
BankHeist 5A; Boxing Type3 after its switch, BankHeist Type3 in its second concept) emulate one extra frame per
observed frame, plus a state save/restore.

Usage: python experiments/perf_stori.py   (about a minute)
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from membench_envs.stori.games import GAMES, PRESET_TYPES  # noqa: E402

import membench_envs  # noqa: E402, F401  (registers the IDs)

STEPS = 1500
REPEATS = 3  # best of: the reference machine's cores are shared
WARMUP = 100
FRAME_SKIP = 4


def frames_per_second(env: gym.Env, steps: int = STEPS, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, env.action_space.n, size=WARMUP + steps)
    env.reset(seed=seed)
    for a in actions[:WARMUP]:
        if any(env.step(int(a))[2:4]):
            env.reset()
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        for a in actions[WARMUP:]:
            if any(env.step(int(a))[2:4]):
                env.reset()
        best = max(best, steps * FRAME_SKIP / (time.perf_counter() - start))
    return best


def main() -> int:
    try:
        import ale_py
    except ImportError:
        print("perf_stori: ale-py is not installed (pip install 'membench-envs[atari]'); skipped")
        return 0
    gym.register_envs(ale_py)
    print(f"{'ID':<34} {'frames/s':>9} {'overhead vs raw':>16}")
    for game in GAMES:
        raw = frames_per_second(gym.make(f"ALE/{game}-v5", frameskip=FRAME_SKIP, repeat_action_probability=0.0))
        print(f"{f'ALE/{game}-v5 (reference)':<34} {raw:>9.0f} {'':>16}")
        rows = [("Default (no pool)", gym.make(f"STORI/{game}-Default-v0", max_pool=False))]
        rows += [(p, gym.make(f"STORI/{game}-{p}-v0")) for p in PRESET_TYPES if p in GAMES[game].presets]
        for name, env in rows:
            fps = frames_per_second(env)
            print(f"{f'STORI/{game}-{name}':<34} {fps:>9.0f} {raw / fps - 1:>+15.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
