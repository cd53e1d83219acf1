"""`make bench-perf` section "robo": MIKASA-Robo env-steps/s on this machine's backend (CPU: physx_cpu + lavapipe).

One task per family (RememberColor3, ShellGameTouch, BunchOfColors3, InterceptMedium, and Rotate / TakeItBack where
registered) through ``gym.make`` (numpy out), beside ManiSkill's own ``PickCube-v1`` (raw, torch out) in the same
observation mode and backend, all with the ``panda_wristcam`` robot (two 128x128 cameras in RGB modes), measured in
alternating blocks in the same run; plus our raw RememberColor3 env without the wrapper (to separate task cost from
wrapper cost; target: wrapper overhead <= 15%), the ``AsyncVectorEnv`` helper (``membench_envs.robo.make_vec``) at
2 workers, and dataset collection (``membench_envs.robo.collect``: the scripted expert, RGB + joints + oracle,
HDF5) in episodes per minute. The GPU path (``num_envs > 1`` on physx_cuda) is not measured here when no GPU is
present.

Usage: python experiments/perf_robo.py [--quick]
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


#: One task per family (the ones not registered yet are skipped).
FAMILIES = [
    "MIKASA/RememberColor3-v0",
    "MIKASA/ShellGameTouch-v0",
    "MIKASA/BunchOfColors3-v0",
    "MIKASA/InterceptMedium-v0",
    "MIKASA/RotateLenientPos-v0",
    "MIKASA/TakeItBack-v0",
]


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
    from membench_envs.robo.remember_color import RememberColorEnv

    import membench_envs

    quick = "--quick" in argv
    n_state, n_rgb, n_vec = (300, 20, 100) if quick else (3000, 150, 1000)
    backend = "gpu" if has_gpu() else "cpu"
    rng = np.random.default_rng(0)
    rows = []

    families = [i for i in FAMILIES if i in gym.registry]
    for variant, ms_mode, steps in (("full", "state", n_state), ("partial", "rgb", n_rgb)):
        render = "none" if ms_mode == "state" else backend
        envs = {
            "PickCube-v1": gym.make(
                "PickCube-v1",
                obs_mode=ms_mode,
                sim_backend="physx_cpu",
                render_backend=render,
                robot_uids="panda_wristcam",
                control_mode="pd_joint_delta_pos",
            ),
            "RC3 raw": RememberColorEnv(colors=3, obs_variant=variant, sim_backend="physx_cpu", render_backend=render),
        }
        for env_id in families:
            envs[env_id] = gym.make(env_id, obs_variant=variant)
        batched = lambda: torch.as_tensor(rng.uniform(-1, 1, (1, 8)), dtype=torch.float32)  # noqa: E731
        single = lambda: rng.uniform(-1, 1, 8).astype(np.float32)  # noqa: E731
        samplers = {name: (batched if name in ("PickCube-v1", "RC3 raw") else single) for name in envs}
        rates = _interleaved_rates(envs, samplers, steps)
        for env in envs.values():
            env.close()
        rows.append((f"{variant} (ManiSkill obs_mode={ms_mode})", rates))

    print(f"\nMIKASA-Robo env-steps/s, 1 env, physx_cpu, render={backend} (torch threads: 1)")
    for mode, rates in rows:
        pick = rates["PickCube-v1"]
        print(f"\n{mode}")
        print(f"  {'env':36s} {'steps/s':>9s} {'vs PickCube-v1':>15s}")
        for name, rate in rates.items():
            print(f"  {name:36s} {rate:9.1f} {rate / pick:14.2f}x")
        ours = rates["MIKASA/RememberColor3-v0"]
        print(
            f"  wrapper alone (RC3 gym.make vs RC3 raw): {100 * (1 - ours / rates['RC3 raw']):.1f}% slower "
            f"(target <= 15%)"
        )

    from membench_envs.robo.vector import make_vec

    act = lambda: rng.uniform(-1, 1, (2, 8)).astype(np.float32)  # noqa: E731
    for variant, steps, single in (
        ("full", n_vec, rows[0][1]["MIKASA/RememberColor3-v0"]),
        ("partial", n_rgb // 2, rows[1][1]["MIKASA/RememberColor3-v0"]),
    ):
        venv = make_vec("MIKASA/RememberColor3-v0", num_envs=2, obs_variant=variant, backend="cpu")
        venv.reset(seed=0)
        for _ in range(5):
            venv.step(act())
        t0 = time.perf_counter()
        for _ in range(steps):
            venv.step(act())
        vec_rate = 2 * steps / (time.perf_counter() - t0)
        venv.close()
        print(
            f"AsyncVectorEnv helper, 2 CPU workers, {variant:7s}: {vec_rate:8.1f} env-steps/s "
            f"({vec_rate / single:.2f}x one in-process env; {os.cpu_count()} cores on this machine)"
        )

    import tempfile

    from membench_envs.robo.collect import collect

    n_eps = 2 if quick else 5
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        collect("MIKASA/RememberColor3-v0", n_eps, out, progress=False)
        minutes = (time.perf_counter() - t0) / 60
    print(
        f"dataset collection, MIKASA/RememberColor3-v0 (T = 60, RGB + joints + oracle, scripted expert, HDF5): "
        f"{n_eps / minutes:.1f} episodes/min ({n_eps} episodes, env start-up included)"
    )
    del membench_envs
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
