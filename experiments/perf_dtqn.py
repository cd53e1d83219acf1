"""`make bench-perf` section "dtqn": DTQN's training throughput and memory as the context length K grows.

For each K (default 16, 64, 256), in its own fresh process: DTQN with the authors' network (d_model 128, 8 heads,
2 layers) and update ratio (one gradient step of 32 windows per environment step, 8 environments) trains on the
dense Passive T-Maze with corridor L = 4K (episodes of 4K + 1 steps). Once the replay holds full windows and the
agent's own windows hold K observations, one warm-up iteration and then a fixed number of iterations are timed
(the acting windows stay full throughout).

Printed per K: SPS (environment steps per second of training: acting + gradient steps), the milliseconds of one
gradient step and of one acting step (8 environments), the process's peak resident memory (RSS, or the peak
CUDA memory on a GPU) and its growth during training, the replay's size, and the ratios of SPS and of the
memory growth against K = 16 measured in the same run. The attention scores of one layer are
batch x heads x K x K floats, so time and activation memory of the update grow about quadratically in K.

Usage: python experiments/perf_dtqn.py [--K 16 64 256] [--iterations N] [--device cpu|cuda]
  (default: 2 timed iterations of 4 vector steps each, about a minute on one CPU core in all)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

TASK = "MIKASA/TMazePassiveDense-v0"


def measure(K: int, iterations: int, device: str) -> dict:
    import torch
    from membench_agents.algos.dtqn import DTQN, DTQNConfig
    from membench_agents.algos.vector import make_vector_env

    L = 4 * K  # episodes of 4K + 1 steps: every window the agent acts on is full from step K - 1 on
    cfg = DTQNConfig(
        context_len=K,
        num_envs=8,
        num_steps=4,
        total_steps=10**9,
        buffer_size=8 * 2 * (L + 2),
        learning_starts=8 * K,
        device=device,
        num_threads=1,
    )
    algo = DTQN(make_vector_env(TASK, cfg.num_envs, env_kwargs={"corridor_length": L}), cfg)
    # fill the replay with full windows and the acting windows with K steps (no timing, no gradient steps)
    while algo.global_step < cfg.learning_starts or int(algo.state[1].min()) < K:
        algo._collect()
    algo.updates_done = (algo.global_step - cfg.learning_starts) // cfg.train_frequency + 1  # none owed
    cuda = algo.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # networks and full replay in place
    algo.train_iteration()  # warm-up (its memory counts in the growth)
    steps0, grads0 = algo.global_step, algo.gradient_steps
    t_act = t_update = 0.0
    t0 = time.perf_counter()
    for _ in range(iterations * cfg.num_steps):
        a = time.perf_counter()
        algo._collect()
        b = time.perf_counter()
        due = (algo.global_step - cfg.learning_starts) // cfg.train_frequency + 1
        while algo.updates_done < due:
            algo.updates_done += 1
            algo._update()
        if cuda:
            torch.cuda.synchronize()
        t_act += b - a
        t_update += time.perf_counter() - b
    elapsed = time.perf_counter() - t0
    steps, grads = algo.global_step - steps0, algo.gradient_steps - grads0
    replay_bytes = algo.replay.nbytes
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else rss
    return {
        "K": K,
        "sps": steps / elapsed,
        "update_ms": 1000 * t_update / max(grads, 1),
        "act_ms": 1000 * t_act / (iterations * cfg.num_steps),
        "peak_mb": peak,
        "growth_mb": (peak if cuda else peak - rss_before),
        "memory": "cuda" if cuda else "rss",
        "replay_mb": replay_bytes / 2**20,
        "gradient_steps": grads,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--K", type=int, nargs="+", default=[16, 64, 256])
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        print(json.dumps(measure(args.child, args.iterations, args.device)))
        return 0
    rows = []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for K in args.K:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(K),
                "--iterations",
                str(args.iterations),
                "--device",
                args.device,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return 1
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    ref = rows[0]
    mem = "peak CUDA MB" if ref["memory"] == "cuda" else "peak RSS MB"
    print(
        f"DTQN on {TASK} (L = 4K), d_model 128, 8 heads, 2 layers, batch 32, 8 envs, 1 gradient step per env step, "
        f"device {args.device}; ratios against K = {ref['K']} of this run"
    )
    print(
        f"{'K':>5} {'SPS':>8} {'SPS ratio':>9} {'update ms':>9} {'act ms':>7} {mem:>12} {'growth MB':>9} "
        f"{'growth ratio':>12} {'replay MB':>9}"
    )
    for r in rows:
        growth_ratio = r["growth_mb"] / ref["growth_mb"] if ref["growth_mb"] > 0 else float("nan")
        print(
            f"{r['K']:>5} {r['sps']:>8.1f} {r['sps'] / ref['sps']:>9.3f} {r['update_ms']:>9.1f} {r['act_ms']:>7.1f} "
            f"{r['peak_mb']:>12.0f} {r['growth_mb']:>9.0f} {growth_ratio:>12.2f} {r['replay_mb']:>9.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
