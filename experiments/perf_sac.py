"""`make bench-perf` section "sac": membench SAC vs stable-baselines3 SAC on Pendulum-v1, measured in the same run.

Matched settings (printed): one environment, networks 256-256 (ReLU) for the actor and both critics, batch 256,
one gradient step per environment step, learning rate 3e-4 for actor, critics and the entropy coefficient,
gamma 0.99, tau 0.005, replay 1M, the same random-action warm-up (``learning_starts``), the entropy coefficient
tuned automatically from 1.0 towards -dim(A). Each (agent, seed) trains in a fresh process with 1 torch thread,
one after another. SPS = environment steps / training wall time (acting, environment steps and updates). Both
trained policies are evaluated by the same code (membench_agents.runs.evaluation.evaluate, episode seeds 0..9,
deterministic actions). Printed: SPS and final return per seed, their means, and the ratios ours / SB3.

Usage: python experiments/perf_sac.py [--full] [--steps N] [--seeds K]
  default (quick, about 2 minutes of CPU time): 1,000 updates after a 1,000-step random warm-up, 3 seeds;
  the returns are not yet meaningful at this budget (SPS is).
  --full: 20,000 steps (both agents solve Pendulum-v1 well before), 3 seeds: the comparison of final returns
  (about 15 minutes per agent on one core).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

TASK = "Pendulum-v1"
HIDDEN, BATCH, LR, LEARNING_STARTS = 256, 256, 3e-4, 1000
EVAL_SEEDS = list(range(10))


def run_one(agent: str, steps: int, seed: int) -> dict:
    """Train + evaluate one agent in this process (called in a fresh subprocess)."""
    import torch

    torch.set_num_threads(1)
    from membench_agents.runs.evaluation import evaluate

    if agent == "membench-sac":
        from membench_agents.algos.sac import SAC, SACConfig
        from membench_agents.algos.vector import make_vector_env

        cfg = SACConfig(
            num_envs=1,
            total_steps=steps,
            buffer_size=1_000_000,
            learning_starts=LEARNING_STARTS,
            batch_size=BATCH,
            gradient_steps=1,
            gamma=0.99,
            tau=0.005,
            policy_lr=LR,
            q_lr=LR,
            hidden_size=HIDDEN,
            seed=seed,
            device="cpu",
            iteration_steps=steps,
        )
        algo = SAC(make_vector_env(TASK, 1), cfg)
        t0 = time.perf_counter()
        while not algo.finished:
            algo.train_iteration()
        train_time = time.perf_counter() - t0
        policy, done = algo.actor, algo.global_step
    else:
        import gymnasium as gym
        from membench_agents.algos.sb3 import SB3Policy
        from stable_baselines3 import SAC as SB3SAC

        model = SB3SAC(
            "MlpPolicy",
            gym.make(TASK),
            buffer_size=1_000_000,
            learning_starts=LEARNING_STARTS,
            batch_size=BATCH,
            train_freq=1,
            gradient_steps=1,
            gamma=0.99,
            tau=0.005,
            learning_rate=LR,
            ent_coef="auto",
            policy_kwargs={"net_arch": [HIDDEN, HIDDEN]},
            seed=seed,
            device="cpu",
        )
        t0 = time.perf_counter()
        model.learn(total_timesteps=steps)
        train_time = time.perf_counter() - t0
        policy, done = SB3Policy(model), model.num_timesteps
    res = evaluate(policy, TASK, None, EVAL_SEEDS, device="cpu", deterministic=True, num_envs=len(EVAL_SEEDS))
    return {
        "agent": agent,
        "seed": seed,
        "steps": done,
        "train_time_s": train_time,
        "sps": done / train_time,
        "mean_return": res["mean_return"],
        "torch_threads": torch.get_num_threads(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="20,000 steps: the comparison of final returns")
    ap.add_argument("--steps", type=int, default=None, help="training steps per run (overrides the mode)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--one", nargs=2, metavar=("AGENT", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    steps = args.steps or (20_000 if args.full else LEARNING_STARTS + 1_000)
    if args.one:
        print(json.dumps(run_one(args.one[0], steps, int(args.one[1]))))
        return 0
    agents = ("membench-sac", "sb3-sac")
    print(
        f"task: {TASK}; {steps:,} steps per run ({LEARNING_STARTS:,} random warm-up), seeds 0..{args.seeds - 1}; "
        f"1 env, nets {HIDDEN}-{HIDDEN}, batch {BATCH}, 1 update per step, lr {LR}, auto entropy; 1 torch thread"
    )
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    results: dict[str, list[dict]] = {a: [] for a in agents}
    for seed in range(args.seeds):
        for agent in agents:  # interleaved, so that a change in machine load hits both agents alike
            out = subprocess.run(
                [sys.executable, __file__, "--one", agent, str(seed), "--steps", str(steps)],
                capture_output=True,
                text=True,
                env=env,
            )
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                return 1
            results[agent].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"\n{'agent':<14} {'seed':>4} {'steps':>7} {'train s':>8} {'SPS':>7} {'return (10 eps)':>16}")
    for agent in agents:
        for r in results[agent]:
            print(
                f"{agent:<14} {r['seed']:>4} {r['steps']:>7,} {r['train_time_s']:>8.1f} {r['sps']:>7.0f} "
                f"{r['mean_return']:>16.1f}"
            )
    mean = {a: {k: sum(r[k] for r in rs) / len(rs) for k in ("sps", "mean_return")} for a, rs in results.items()}
    ours, ref = mean["membench-sac"], mean["sb3-sac"]
    print(
        f"\nmean SPS: membench {ours['sps']:.0f}, SB3 {ref['sps']:.0f}; ratio membench / SB3 = "
        f"{ours['sps'] / ref['sps']:.2f}x (target >= 1)"
    )
    print(
        f"mean final return: membench {ours['mean_return']:.1f}, SB3 {ref['mean_return']:.1f}"
        + ("" if args.full or args.steps else " (quick mode: too early to compare returns; use --full)")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
