"""GPU check and benchmark: every membench agent trains on CUDA through the CLI, beside the same cell on the CPU.

For each cell (agent, environment, budget) this runs, in fresh processes, one after another:

1. ``membench train --device cuda`` and ``membench train --device cpu`` (same seed, budget and config; 1 torch
   thread on the CPU side, as everywhere in membench);
2. ``membench eval`` of the CUDA run in a process that sees no GPU (``CUDA_VISIBLE_DEVICES=""``): a run trained
   on a GPU machine must evaluate on a laptop (the policy is rebuilt on the CPU).

Printed per cell: training SPS on each device and their ratio, the final evaluation (success rate or return) of
each run, and the CPU re-evaluation of the CUDA run beside its stored value. The cells use the CPU-sized default
configs (a few parallel environments, small networks), so the ratio says what a GPU buys at these sizes, not at
GPU-sized batches; ``--wide`` adds PPO-LSTM and PPO-GTrXL rows with 128 parallel environments.

Usage: python experiments/perf_gpu.py [--scale X] [--agents ppo-lstm,dtqn] [--devices cuda,cpu] [--wide]
Without a CUDA GPU the section is skipped (``--devices cpu`` times the CPU side alone). Measured on an H200 (with its
machine's CPU beside it): docs/performance.md.
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

TMAZE = "MIKASA/TMazePassive-v0"
# (agent, env, steps at scale 1, extra --set overrides)
CELLS = [
    ("ppo-mlp", TMAZE, 32_768, []),
    ("ppo-lstm", TMAZE, 32_768, []),
    ("ppo-gru", TMAZE, 32_768, []),
    ("ppo-gtrxl", TMAZE, 8_192, []),
    ("dtqn", TMAZE, 1_024, ["dtqn.learning_starts=512"]),
    ("sac", TMAZE, 2_000, ["sac.learning_starts=500"]),
    ("sac", "Pendulum-v1", 2_000, ["sac.learning_starts=500"]),
    ("sac-lstm", "Pendulum-v1", 1_000, ["sac.learning_starts=500"]),
]
WIDE = [
    ("ppo-lstm", TMAZE, 131_072, ["ppo.num_envs=128"]),
    ("ppo-gtrxl", TMAZE, 32_768, ["ppo.num_envs=128"]),
]
EVAL_SETS = ["eval.episodes=20", "eval.num_envs=4"]


def _membench(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "membench_agents.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _train(agent: str, env_id: str, steps: int, sets: list[str], device: str, run_dir: Path) -> dict:
    argv = [
        "train",
        "--env",
        env_id,
        "--agent",
        agent,
        "--seeds",
        "0-0",
        "--steps",
        str(steps),
        "--device",
        device,
        "--run-dir",
        str(run_dir),
        "--no-progress",
        "--jobs",
        "1",
    ]
    for s in [*sets, *EVAL_SETS]:
        argv += ["--set", s]
    t0 = time.perf_counter()
    out = _membench(argv)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1], "wall_s": wall}
    ev = json.loads((run_dir / "seed_0" / "eval.json").read_text())
    return {"sps": ev["sps"], "metric": ev["metric"], "value": ev["value"], "wall_s": wall}


def _eval_without_gpu(run_dir: Path) -> dict:
    out = _membench(["eval", str(run_dir), "--json"], env={"CUDA_VISIBLE_DEVICES": ""})
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    res = json.loads(out.stdout)
    return {"value": res["per_run"][0], "stored": res["stored"]["per_run"][0], "note": out.stderr.strip()}


def _print_table(rows: list[dict], devices: list[str]) -> None:
    print(
        f"\n{'agent':<10} {'env':<24} {'steps':>7} {'extra':<16} "
        + " ".join(f"{d + ' SPS':>9}" for d in devices)
        + (f" {'cuda/cpu':>8}" if devices == ["cuda", "cpu"] else "")
        + " "
        + " ".join(f"{d + ' final':>11}" for d in devices)
        + ("  cuda run re-evaluated on a CPU-only process" if "cuda" in devices else "")
    )
    for r in rows:
        cells_txt = []
        for d in devices:
            cells_txt.append(f"{r[d]['sps']:9.0f}" if "sps" in r[d] else f"{'error':>9}")
        line = f"{r['agent']:<10} {r['env']:<24} {r['steps']:>7} {','.join(r['sets'])[:16]:<16} " + " ".join(cells_txt)
        if devices == ["cuda", "cpu"]:
            ok = "sps" in r["cuda"] and "sps" in r["cpu"]
            line += f" {r['cuda']['sps'] / r['cpu']['sps']:8.2f}" if ok else f" {'-':>8}"
        line += " " + " ".join(f"{r[d]['value']:11.3f}" if "value" in r[d] else f"{'-':>11}" for d in devices)
        if "cuda" in devices:
            ce = r.get("cpu_eval_of_cuda_run")
            if ce is None:
                line += "  -"
            elif "error" in ce:
                line += f"  FAILED: {ce['error']}"
            else:
                line += f"  {ce['value']:.3f} (stored {ce['stored']:.3f})"
        print(line)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every budget (default 1)")
    ap.add_argument("--agents", help="comma-separated agents (default: all cells)")
    ap.add_argument("--devices", default="cuda,cpu", help="comma-separated devices (default cuda,cpu)")
    ap.add_argument("--wide", action="store_true", help="add 128-environment PPO-LSTM and PPO-GTrXL rows")
    ap.add_argument("--out", help="keep the run folders here (default: a temporary folder)")
    args = ap.parse_args(argv)
    devices = args.devices.split(",")
    if "cuda" in devices:
        import torch

        if not torch.cuda.is_available():
            print("skipped: no CUDA GPU visible to torch (--devices cpu times the CPU side alone)")
            return 0
        print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; {os.cpu_count()} CPUs")
    cells = CELLS + (WIDE if args.wide else [])
    if args.agents:
        wanted = set(args.agents.split(","))
        cells = [c for c in cells if c[0] in wanted]
    root = Path(args.out or tempfile.mkdtemp(prefix="membench-gpu-"))
    rows = []
    for i, (agent, env_id, steps, sets) in enumerate(cells):
        steps = max(1, int(steps * args.scale))
        row = {"agent": agent, "env": env_id, "steps": steps, "sets": sets}
        for device in devices:
            run_dir = root / f"{i:02d}-{agent}-{device}"
            row[device] = _train(agent, env_id, steps, sets, device, run_dir)
            if device == "cuda" and "error" not in row[device]:
                row["cpu_eval_of_cuda_run"] = _eval_without_gpu(run_dir)
        rows.append(row)
        print(json.dumps(row), flush=True)

    _print_table(rows, devices)
    for r in rows:
        for d in devices:
            if "error" in r[d]:
                print(f"{r['agent']} on {r['env']} ({d}): {r[d]['error']}")
    failed = any("error" in r[d] for r in rows for d in devices) or any(
        "error" in r.get("cpu_eval_of_cuda_run", {}) for r in rows
    )
    print(f"\nrun folders: {root}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
