"""`make bench-perf` section "agents": training throughput of membench PPO-LSTM vs sb3-contrib RecurrentPPO, and
of membench PPO-GTrXL beside PPO-LSTM.

Same task (MIKASA/TMazePassive-v0), same step budget, same number of environments, rollout length,
epochs and LSTM width (the matched cell configs experiments/perf/tmaze-matched/ppo-lstm.yaml
and sb3-recurrentppo.yaml, checked below), 1 torch thread each, one agent at a time, each in a fresh
process. SPS = environment steps / training wall time (rollouts + updates; evaluation excluded). Both
trained policies are then evaluated by the same protocol code (membench_agents.runs.evaluation.evaluate,
episode seeds 0..99, deterministic actions). Each agent steps the task its library's standard way
(membench: the native batched env; RecurrentPPO: SB3's DummyVecEnv over single envs); the time inside those
step calls is measured too, and the ratio without it is printed for context. membench PPO trains through
its CPU fast path (membench_agents.algos.ppo_fast_cpu, PPOConfig.fast_cpu="auto"); the script prints how
many updates it ran there (0 would mean the readable path ran instead). --fast-cpu off times the readable
path (algos/ppo.py alone).

In the same run, membench PPO-GTrXL (agent ppo-gtrxl) trains on the same cell with PPO-LSTM's settings (every
``ppo`` value of the ppo-lstm cell; only the memory core differs: GTrXL with the options of the agent's shipped
defaults, membench_agents/config/defaults/ppo.yaml, width 128). GTrXL has no CPU fast path, so its SPS is printed
beside both PPO-LSTM's (whichever path --fast-cpu picked) and, for a like-for-like ratio, beside PPO-LSTM on the
readable path (fast_cpu="off"), a third membench run. Both train --gtrxl-steps steps (default 20,480: ten
rollouts, to keep the section short; SPS does not depend on the budget, the success rate does); --no-gtrxl skips
these two runs.

Usage: python experiments/perf_agents.py [--steps N] [--seed S] [--corridor-length L] [--sparse] [--sb3-default-arch]
                                        [--fast-cpu auto|on|off] [--gtrxl-steps N] [--no-gtrxl]
  (default: L = 10 with the dense variant's shaping (env_kwargs penalty=True, i.e. MIKASA/TMazePassiveDense-v0),
  so that both agents can learn and their final success rates can be compared; --sparse: the registered
  sparse reward, where neither agent gets a reward at L = 10 within the budget. --sb3-default-arch:
  RecurrentPPO with its default policy instead of the one matched to membench's architecture)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MATCHED = Path(__file__).resolve().parent / "perf" / "tmaze-matched"
TASK = "MIKASA/TMazePassive-v0"
AGENTS = ("ppo-lstm", "sb3-recurrentppo")
#: the GTrXL comparison: PPO-GTrXL, and PPO-LSTM on the readable path (its like-for-like reference)
GTRXL_RUNS = ("ppo-gtrxl", "ppo-lstm-readable")
TARGET_RATIO = 4.0


def config(
    agent: str,
    steps: int,
    seed: int,
    corridor_length: int | None,
    sb3_default_arch: bool = False,
    sparse: bool = False,
    fast_cpu: str = "auto",
) -> dict:
    from membench_agents.config.resolve import resolve

    sets = [
        "eval.episodes=100",
        "eval.seed_start=0",
        "eval.every_steps=0",
        "checkpoint.every_iterations=0",
        "checkpoint.every_seconds=0",
    ]
    if corridor_length is not None:
        sets.append(f"env_kwargs.corridor_length={corridor_length}")
    if not sparse:  # the dense variant's shaping (MIKASA/TMazePassiveDense-v0): both agents can learn at L = 10
        sets.append("env_kwargs.penalty=true")
    if agent == "ppo-lstm" and fast_cpu != "auto":
        sets.append(f"ppo.fast_cpu={fast_cpu}")
    matched = MATCHED / f"{agent}.yaml"
    cfg = resolve(
        TASK, agent, config_file=matched if matched.is_file() else None, steps=steps, seeds=[seed], overrides=sets
    ).config
    if agent == "ppo-gtrxl":  # the ppo-lstm cell's PPO settings: only the memory core differs
        lstm = config("ppo-lstm", steps, seed, corridor_length, sparse=sparse)["ppo"]
        cfg["ppo"].update({k: v for k, v in lstm.items() if k not in ("gtrxl", "fast_cpu")})
    if sb3_default_arch and agent == "sb3-recurrentppo":
        # RecurrentPPO's own default architecture: separate actor and critic LSTMs, 64-64 MLP heads
        cfg["sb3"]["policy_kwargs"] = {"lstm_hidden_size": cfg["sb3"]["policy_kwargs"]["lstm_hidden_size"]}
    return cfg


def matched(a: dict, b: dict) -> list[tuple[str, object, object]]:
    p, s = a["ppo"], b["sb3"]
    pairs = [
        ("environments", p["num_envs"], s["n_envs"]),
        ("rollout length", p["num_steps"], s["n_steps"]),
        ("epochs", p["update_epochs"], s["n_epochs"]),
        ("minibatch size", p["num_envs"] * p["num_steps"] // p["num_minibatches"], s["batch_size"]),
        ("LSTM width", p["hidden_size"], s["policy_kwargs"]["lstm_hidden_size"]),
        ("learning rate", p["learning_rate"], s["learning_rate"]),
        ("step budget", a["total_steps"], b["total_steps"]),
    ]
    bad = [x for x in pairs if x[1] != x[2]]
    if bad:
        raise SystemExit(f"the two cell configs are not matched: {bad}")
    return pairs


def run_one(
    agent: str, steps: int, seed: int, corridor_length: int | None, sb3_default_arch: bool, sparse: bool, fast_cpu: str
) -> dict:
    """Train + evaluate one agent in this process (called in a fresh subprocess)."""
    import torch

    torch.set_num_threads(1)
    from membench_agents.algos.trainer import make_trainer
    from membench_agents.runs import loop

    if agent == "ppo-lstm-readable":
        agent, fast_cpu = "ppo-lstm", "off"
    cfg = config(agent, steps, seed, corridor_length, sb3_default_arch, sparse, fast_cpu)
    trainer = make_trainer(cfg, seed)
    # Time spent stepping the training environments during training iterations: their class's step method is
    # timed while trainer.iterate runs (this process trains one agent; patching the class keeps the env
    # picklable for checkpoints). SB3's VecEnv.step is step_async + step_wait; DummyVecEnv steps in step_wait.
    env = trainer.venv if agent == "sb3-recurrentppo" else trainer.algo.envs
    name = "step_wait" if agent == "sb3-recurrentppo" else "step"
    env_time, training = [0.0], [False]
    setattr(type(env), name, _timed(getattr(type(env), name), env_time, training))
    iterate = trainer.iterate

    def timed_iterate(should_stop=None):  # the Trainer protocol: iterate(should_stop)
        training[0] = True
        try:
            return iterate(should_stop)
        finally:
            training[0] = False

    trainer.iterate = timed_iterate
    with tempfile.TemporaryDirectory() as d:
        summary = loop.train_seed(cfg, seed, d, trainer=trainer)
    fast = getattr(getattr(trainer, "algo", None), "fast", None)  # membench PPO's CPU fast path, if it ran
    return {
        "agent": agent,
        "steps": summary["global_step"],
        "train_time_s": summary["train_time_s"],
        "env_time_s": env_time[0],
        "sps": summary["sps"],
        "success_rate": summary["eval"]["success_rate"],
        "mean_return": summary["eval"]["mean_return"],
        "torch_threads": torch.get_num_threads(),
        "fast_cpu_updates": fast.counters["updates"] if fast is not None else 0,
    }


def _timed(fn, total: list[float], active: list[bool]):
    """``fn`` adding its wall time to ``total[0]`` while ``active[0]``."""

    def timed(*args, **kwargs):
        if not active[0]:
            return fn(*args, **kwargs)
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            total[0] += time.perf_counter() - t0

    return timed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=102_400, help="rounded up to whole rollouts (16 x 128 steps)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corridor-length", type=int, default=None)
    ap.add_argument(
        "--sb3-default-arch",
        action="store_true",
        help="RecurrentPPO with its default policy (separate critic LSTM, 64-64 MLPs) instead of the "
        "architecture matched to membench's (one shared LSTM, linear heads)",
    )
    ap.add_argument(
        "--sparse",
        action="store_true",
        help="the sparse reward (as registered) instead of the dense variant's shaping; at L = 10 "
        "neither agent then sees a reward within the budget",
    )
    ap.add_argument(
        "--fast-cpu",
        choices=("auto", "on", "off"),
        default="auto",
        help="membench PPO's PPOConfig.fast_cpu (off: time the readable path)",
    )
    ap.add_argument(
        "--gtrxl-steps",
        type=int,
        default=20_480,
        help="budget of the PPO-GTrXL run and its readable PPO-LSTM reference (whole rollouts)",
    )
    ap.add_argument("--no-gtrxl", action="store_true", help="skip the PPO-GTrXL runs")
    ap.add_argument("--one", choices=AGENTS + GTRXL_RUNS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(
            json.dumps(
                run_one(
                    args.one,
                    args.steps,
                    args.seed,
                    args.corridor_length,
                    args.sb3_default_arch,
                    args.sparse,
                    args.fast_cpu,
                )
            )
        )
        return 0

    probe = config("ppo-lstm", args.steps, args.seed, args.corridor_length, sparse=args.sparse)["ppo"]
    per_iteration = probe["num_envs"] * probe["num_steps"]
    args.steps = -(-args.steps // per_iteration) * per_iteration  # whole rollouts for both agents
    args.gtrxl_steps = max(1, -(-args.gtrxl_steps // per_iteration)) * per_iteration
    cfgs = {
        a: config(a, args.steps, args.seed, args.corridor_length, sparse=args.sparse) for a in (*AGENTS, "ppo-gtrxl")
    }
    task = TASK + (f" (corridor_length={args.corridor_length}" if args.corridor_length else " (L=10")
    task += ", sparse reward)" if args.sparse else ", dense shaping: penalty=True)"
    arch = "RecurrentPPO default policy" if args.sb3_default_arch else "architectures matched (one LSTM, linear heads)"
    print(f"task: {task}; budget {args.steps:,} steps; 1 torch thread; training seed {args.seed}; {arch}")
    for name, x, _ in matched(cfgs["ppo-lstm"], cfgs["sb3-recurrentppo"]):
        print(f"  {name:<15} {x}")
    results = {}
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for agent in AGENTS + (() if args.no_gtrxl else GTRXL_RUNS):
        steps = args.gtrxl_steps if agent in GTRXL_RUNS else args.steps
        cmd = [sys.executable, __file__, "--one", agent, "--steps", str(steps), "--seed", str(args.seed)]
        if args.corridor_length is not None:
            cmd += ["--corridor-length", str(args.corridor_length)]
        if args.sb3_default_arch:
            cmd += ["--sb3-default-arch"]
        if args.sparse:
            cmd += ["--sparse"]
        cmd += ["--fast-cpu", args.fast_cpu]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return 1
        results[agent] = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"\n{'agent':<20} {'steps':>8} {'train s':>8} {'of it env s':>12} {'SPS':>9} {'success (100 seeds)':>20} "
        f"{'return':>7}"
    )
    for agent, r in results.items():
        succ = "n/a" if r["success_rate"] is None else f"{r['success_rate']:.2f}"
        label = agent.replace("-readable", " (readable)")
        print(
            f"{label:<20} {r['steps']:>8,} {r['train_time_s']:>8.1f} {r['env_time_s']:>12.2f} {r['sps']:>9,.0f} "
            f"{succ:>20} {r['mean_return']:>7.3f}"
        )
    ours, ref = results["ppo-lstm"], results["sb3-recurrentppo"]
    print(
        f"\nmembench PPO-LSTM: {ours['fast_cpu_updates']} of its updates ran on the CPU fast path "
        f"(PPOConfig.fast_cpu={args.fast_cpu})"
    )
    ratio = ours["sps"] / ref["sps"]
    verdict = "meets" if ratio >= TARGET_RATIO else "BELOW"
    print(
        f"throughput ratio membench PPO-LSTM / sb3-contrib RecurrentPPO: {ratio:.1f}x "
        f"({verdict} the {TARGET_RATIO:.0f}x target)"
    )
    # For context: each agent steps the task its library's standard way (membench: the native batched env,
    # one numpy call per step for all envs; RecurrentPPO: SB3's DummyVecEnv over single envs). The same
    # comparison without the time spent inside the environments' step calls:
    no_env = (ref["train_time_s"] - ref["env_time_s"]) / (ours["train_time_s"] - ours["env_time_s"])
    print(
        f"without environment stepping (membench native batched env, {ours['env_time_s']:.2f} s; RecurrentPPO "
        f"SB3 DummyVecEnv, {ref['env_time_s']:.2f} s): {no_env:.1f}x"
    )
    if not args.no_gtrxl:
        g, plain = results["ppo-gtrxl"], results["ppo-lstm-readable"]
        gt = cfgs["ppo-gtrxl"]["ppo"]["gtrxl"]
        print(
            f"\nmembench PPO-GTrXL ({gt['n_layers']} layers, {gt['n_heads']} heads, window {gt['window']}, width "
            f"{cfgs['ppo-gtrxl']['ppo']['hidden_size']}; readable path, no CPU fast path) on the same cell:"
        )
        print(
            f"  SPS {g['sps']:,.0f}: {g['sps'] / ours['sps']:.2f}x PPO-LSTM (fast_cpu={args.fast_cpu}, "
            f"{ours['sps']:,.0f} SPS), {g['sps'] / plain['sps']:.2f}x PPO-LSTM on the readable path "
            f"({plain['sps']:,.0f} SPS)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
