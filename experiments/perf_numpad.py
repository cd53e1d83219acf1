"""`make bench-perf` section `numpad`: env-steps/s of the three Numpad IDs (MuJoCo), vector and image observations,
against upstream's numpy Numpad in the same run where it can be imported.

For each ID, one process, one thread, the unwrapped env (no gymnasium checker wrappers), random actions drawn
before timing, episodes reset when they end, best of 3 repeats after a warm-up:
  - ours, ``obs_mode="vector"`` (upstream's observation);
  - ours, ``obs_mode="image"``, 64 x 64 (a MuJoCo render per step; EGL or OSMesa on the CPU here);
  - upstream, where importable: MIKASA-Base's copy of numpad-gym (``Numpad2DDiscrete``, ``Numpad2DContinuous``,
    ``NumpadContinuousDiscreteActions``), the code that produced MIKASA's numbers, in its default ``ram`` / 2x3x3
    observation. Upstream is on no package index (pip here reaches PyPI only, and neither numpad-gym nor
    MIKASA-Base is there), so it is found only through ``NUMPAD_UPSTREAM=<MIKASA-Base checkout>/mikasa_base/Numpad/env``
    (loaded as a package from that folder; MIKASA-Base's own ``__init__`` would import Memory Maze and dm_control).
    Without it the upstream column says why it is missing.

Usage: python experiments/perf_numpad.py   (about half a minute)
       NUMPAD_UPSTREAM=/path/to/MIKASA-Base/mikasa_base/Numpad/env python experiments/perf_numpad.py
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np

import membench_envs  # noqa: F401  (registers the IDs)

IDS = {
    "MIKASA/NumpadDiscrete-v0": "Numpad2DDiscrete",
    "MIKASA/NumpadContinuous-v0": "Numpad2DContinuous",
    "MIKASA/NumpadContinuousDiscreteActions-v0": "NumpadContinuousDiscreteActions",
}
UPSTREAM_MODULES = {
    "Numpad2DDiscrete": "numpad_discrete",
    "Numpad2DContinuous": "numpad_continuous",
    "NumpadContinuousDiscreteActions": "numpad_continuous_discrete_actions",
}
STEPS = {"vector": 10000, "image": 1000}
REPEATS, WARMUP = 3, 200


def steps_per_second(env, actions: list, reset) -> float:
    """Best of REPEATS timings of ``env.step`` over ``actions`` (after a warm-up), resetting when an episode ends."""
    reset()
    for a in actions[:WARMUP]:
        if env.step(a)[2]:
            reset()
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        for a in actions[WARMUP:]:
            if env.step(a)[2]:
                reset()
        best = max(best, (len(actions) - WARMUP) / (time.perf_counter() - start))
    return best


def load_upstream():
    """MIKASA-Base's Numpad env package from ``$NUMPAD_UPSTREAM``, or (None, why not)."""
    folder = os.environ.get("NUMPAD_UPSTREAM")
    if not folder:
        return None, (
            "not installed: numpad-gym / MIKASA-Base are not on PyPI (the only index pip reaches here); "
            "set NUMPAD_UPSTREAM to a checkout's mikasa_base/Numpad/env to compare"
        )
    init = Path(folder) / "__init__.py"
    if not init.is_file():
        return None, f"NUMPAD_UPSTREAM={folder} holds no __init__.py (expected mikasa_base/Numpad/env)"
    spec = importlib.util.spec_from_file_location("upstream_numpad", init, submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules["upstream_numpad"] = package
    spec.loader.exec_module(package)
    return {cls: importlib.import_module(f"upstream_numpad.{mod}") for cls, mod in UPSTREAM_MODULES.items()}, ""


def main() -> None:
    t0 = time.perf_counter()
    upstream, why = load_upstream()
    # the version from the metadata: importing mujoco before the env picks MUJOCO_GL would break rendering
    print(
        f"env-steps/s, random actions, unwrapped envs, one process (python {sys.version.split()[0]}, "
        f"gymnasium {gym.__version__}, mujoco {importlib.metadata.version('mujoco')})"
    )
    print(f"upstream: {'MIKASA-Base numpad (numpy) from ' + os.environ['NUMPAD_UPSTREAM'] if upstream else why}")
    header = f"{'ID':<44}{'vector':>10}{'image 64':>10}{'upstream':>10}{'vector/up':>11}"
    print(header)
    print("-" * len(header))
    for env_id, cls in IDS.items():
        rates = {}
        for mode in ("vector", "image"):
            env = gym.make(env_id, obs_mode=mode).unwrapped
            env.action_space.seed(0)
            actions = [env.action_space.sample() for _ in range(WARMUP + STEPS[mode])]
            rates[mode] = steps_per_second(env, actions, lambda env=env: env.reset(seed=0))
            env.close()
        up = None
        if upstream:
            env = getattr(upstream[cls], cls)()
            ours = gym.make(env_id).unwrapped
            ours.action_space.seed(0)
            actions = [ours.action_space.sample() for _ in range(WARMUP + STEPS["vector"])]
            if cls == "Numpad2DContinuous":
                actions = [a.astype(np.float64) for a in actions]  # its Box is float64
            up = steps_per_second(env, actions, env.reset)
        up_text = f"{up:>10,.0f}{rates['vector'] / up:>10.2f}x" if up else f"{'-':>10}{'-':>11}"
        print(f"{env_id:<44}{rates['vector']:>10,.0f}{rates['image']:>10,.0f}{up_text}")
    print(f"(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
