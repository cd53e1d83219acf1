"""`make bench-perf` section `stori`: emulator frames/s of each STORI preset against raw ``ALE/<Game>-v5``.

For each STORI game (Breakout, Boxing, Gopher, BankHeist), in one process, one thread, the same number of agent
steps of pre-drawn random actions (frame skip 4, so frames = 4 × steps; episodes reset when they end; best of 3
repeats):
  - reference: ale-py's own ``ALE/<Game>-v5`` with ``frameskip=4, repeat_action_probability=0.0`` (STORI's
    setting: sticky actions off), which returns the last frame of each step;
  - every preset with ``max_pool=False``: the reference's work (one observed frame per step) plus the preset's
    stochasticity; the overhead target (at most 10% for types 1, 2, 4, 5-crop and 5-blackout) is on this column;
  - every preset at its defaults: max-pool of the last two frames, as the paper's agents (one more screen read and
    the pooling per step, which the reference does not do).
The overhead columns are frames/s relative to the reference (positive = slower). The RAM-edit presets (Breakout
and Boxing 5C, BankHeist 5A; Boxing Type3 after its switch, BankHeist Type3 in its second concept) emulate one extra
frame per observed frame, plus a state save/restore.

Usage: python experiments/perf_stori.py   (about a minute)
       python experiments/perf_stori.py --instructions [--game Breakout] [--presets Default,Type1,...]
  --instructions counts CPU instructions instead of timing (valgrind's callgrind; each configuration runs 100 and
  600 steps and the difference is kept, so start-up cost cancels): the same count whatever else the machine is
  doing, for comparisons on a shared machine. About half a minute per configuration.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
from membench_envs.stori.games import GAMES, PRESET_TYPES

import membench_envs  # noqa: F401  (registers the IDs)

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


def _steps(env_id: str, max_pool: bool, steps: int) -> None:
    """Child of --instructions: ``steps`` steps of pre-drawn random actions (episodes reset when they end)."""
    import ale_py

    gym.register_envs(ale_py)
    if env_id.startswith("ALE/"):
        env = gym.make(env_id, frameskip=FRAME_SKIP, repeat_action_probability=0.0)
    else:
        env = gym.make(env_id, max_pool=max_pool)
    actions = np.random.default_rng(0).integers(0, env.action_space.n, size=steps)
    env.reset(seed=0)
    for a in actions:
        if any(env.step(int(a))[2:4]):
            env.reset()


def _instructions(env_id: str, max_pool: bool) -> int:
    """Instructions of 500 steps (600 minus 100) of ``env_id``, counted by callgrind in child processes."""
    import re
    import subprocess
    import tempfile

    counts = []
    for steps in (100, 600):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "callgrind.out")
            subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={out}",
                    sys.executable,
                    __file__,
                    "--child",
                    env_id,
                    str(int(max_pool)),
                    str(steps),
                ],
                check=True,
                capture_output=True,
            )
            with open(out) as f:
                counts.append(int(re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M).group(1)))
    return counts[1] - counts[0]


def instructions_table(games: list[str], presets: list[str]) -> int:
    import shutil

    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind (Debian: apt-get install valgrind)")
        return 2
    print("CPU instructions of 500 agent steps (frame skip 4), relative to raw ALE/<Game>-v5")
    print(f"{'ID':<28} {'no pool':>14} {'overhead':>9}   {'defaults':>14} {'overhead':>9}")
    for game in games:
        raw = _instructions(f"ALE/{game}-v5", False)
        print(f"{f'ALE/{game}-v5 (reference)':<28} {raw:>14,}", flush=True)
        for preset in presets:
            env_id = f"STORI/{game}-{preset}-v0"
            if env_id not in gym.registry:
                continue
            bare, pooled = _instructions(env_id, False), _instructions(env_id, True)
            print(
                f"{env_id.removeprefix('STORI/'):<28} {bare:>14,} {bare / raw - 1:>+9.1%}   {pooled:>14,} "
                f"{pooled / raw - 1:>+9.1%}",
                flush=True,
            )
    return 0


def main() -> int:
    try:
        import ale_py
    except ImportError:
        print("perf_stori: ale-py is not installed (pip install 'membench-envs[atari]'); skipped")
        return 0
    gym.register_envs(ale_py)
    print(f"{'ID':<28} {'no pool: frames/s':>18} {'overhead':>9}   {'defaults: frames/s':>19} {'overhead':>9}")
    for game in GAMES:
        raw = frames_per_second(gym.make(f"ALE/{game}-v5", frameskip=FRAME_SKIP, repeat_action_probability=0.0))
        print(f"{f'ALE/{game}-v5 (reference)':<28} {raw:>18.0f}")
        for preset in PRESET_TYPES:
            env_id = f"STORI/{game}-{preset}-v0"
            if env_id not in gym.registry:
                continue
            bare = frames_per_second(gym.make(env_id, max_pool=False))
            pooled = frames_per_second(gym.make(env_id))
            print(
                f"{env_id.removeprefix('STORI/'):<28} {bare:>18.0f} {raw / bare - 1:>+9.1%}   "
                f"{pooled:>19.0f} {raw / pooled - 1:>+9.1%}"
            )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _steps(sys.argv[2], bool(int(sys.argv[3])), int(sys.argv[4]))
        sys.exit(0)
    if "--instructions" in sys.argv:
        import argparse

        ap = argparse.ArgumentParser()
        ap.add_argument("--instructions", action="store_true")
        ap.add_argument("--game", action="append", help="default: every game")
        ap.add_argument("--presets", default=",".join(PRESET_TYPES), help="comma-separated preset names")
        a = ap.parse_args()
        sys.exit(instructions_table(a.game or list(GAMES), a.presets.split(",")))
    sys.exit(main())
