"""`make bench-perf` section "robo": MIKASA-Robo env-steps/s on this machine's backend (CPU: physx_cpu + lavapipe).

Compares ``MIKASA/RememberColor3-v0`` (membench wrapper, numpy out) with ManiSkill's own ``PickCube-v1`` (raw,
torch out) in the same observation mode and backend, both with the ``panda_wristcam`` robot (two 128x128 cameras in
RGB modes), plus our raw ManiSkill env without the wrapper (to separate task cost from wrapper cost), and the
``AsyncVectorEnv`` helper (``membench_envs.robo.make_vec``) at 2 workers. Target: wrapper overhead <= 15%.
The GPU path (``num_envs > 1`` on physx_cuda) is not measured here when no GPU is present.

Usage: python experiments/perf_robo.py [--quick]
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _interleaved_rates(envs: dict, samplers: dict, steps: int, rounds: int = 5) -> dict:
    """env-steps/s of each env, measured in alternating blocks so that load changes hit every env alike."""
    for name, env in envs.items():
        env.reset(seed=0)
        for _ in range(5):
            env.step(samplers[name]())
    spent = dict.fromkeys(envs, 0.0)
    block = max(1, steps // rounds)
    for _ in range(rounds):
        for name, env in envs.items():
            sample = samplers[name]
            t0 = time.perf_counter()
            for _ in range(block):
                out = env.step(sample())
                done = out[2] | out[3]
                if bool(done.any() if hasattr(done, "any") else done):
                    env.reset()
            spent[name] += time.perf_counter() - t0
    return {name: block * rounds / spent[name] for name in envs}


def main(argv: list[str]) -> int:
    import gymnasium as gym
    import numpy as np
    import torch

    torch.set_num_threads(1)
    import mani_skill.envs  # noqa: F401  (registers PickCube-v1)
    from membench_envs.robo.entry import has_gpu
    from membench_envs.robo.remember_color import RememberColor3Env

    import membench_envs

    quick = "--quick" in argv
    n_state, n_rgb, n_vec = (300, 20, 100) if quick else (3000, 150, 1000)
    backend = "gpu" if has_gpu() else "cpu"
    rng = np.random.default_rng(0)
    rows = []

    for variant, ms_mode, steps in (("full", "state", n_state), ("partial", "rgb", n_rgb)):
        render = "none" if ms_mode == "state" else backend
        envs = {
            "pick": gym.make("PickCube-v1", obs_mode=ms_mode, sim_backend="physx_cpu", render_backend=render,
                             robot_uids="panda_wristcam", control_mode="pd_joint_delta_pos"),
            "raw": RememberColor3Env(obs_variant=variant, sim_backend="physx_cpu", render_backend=render),
            "ours": gym.make("MIKASA/RememberColor3-v0", obs_variant=variant),
        }
        batched = lambda: torch.as_tensor(rng.uniform(-1, 1, (1, 8)), dtype=torch.float32)  # noqa: E731
        samplers = {"pick": batched, "raw": batched, "ours": lambda: rng.uniform(-1, 1, 8).astype(np.float32)}
        rates = _interleaved_rates(envs, samplers, steps)
        for env in envs.values():
            env.close()
        rows.append((f"{variant} (ManiSkill obs_mode={ms_mode})", rates["pick"], rates["raw"], rates["ours"]))

    print(f"\nMIKASA-Robo env-steps/s, 1 env, physx_cpu, render={backend} (torch threads: 1)")
    print(f"{'mode':34s} {'PickCube-v1':>12s} {'RC3 raw':>10s} {'RC3 gym.make':>13s} {'overhead vs PickCube':>21s}")
    for name, pick, raw, ours in rows:
        print(f"{name:34s} {pick:12.1f} {raw:10.1f} {ours:13.1f} {100 * (1 - ours / pick):20.1f}%")
        print(f"{'':34s} {'':12s} {'':10s} {'':13s} (wrapper alone: {100 * (1 - ours / raw):.1f}%)")

    from membench_envs.robo.vector import make_vec

    act = lambda: rng.uniform(-1, 1, (2, 8)).astype(np.float32)  # noqa: E731
    for variant, steps, single in (("full", n_vec, rows[0][3]), ("partial", n_rgb // 2, rows[1][3])):
        venv = make_vec("MIKASA/RememberColor3-v0", num_envs=2, obs_variant=variant, backend="cpu")
        venv.reset(seed=0)
        for _ in range(5):
            venv.step(act())
        t0 = time.perf_counter()
        for _ in range(steps):
            venv.step(act())
        vec_rate = 2 * steps / (time.perf_counter() - t0)
        venv.close()
        print(f"AsyncVectorEnv helper, 2 CPU workers, {variant:7s}: {vec_rate:8.1f} env-steps/s "
              f"({vec_rate / single:.2f}x one in-process env; {os.cpu_count()} cores on this machine)")
    del membench_envs
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
