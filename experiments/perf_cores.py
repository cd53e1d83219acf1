"""`make bench-perf` section "cores": training throughput and peak memory of membench PPO with every memory core on
the matched T-Maze cell, and in the same run TorchRL's recurrent PPO (LSTM and GRU, its own modules) on that cell.

The cell is experiments/perf/tmaze-matched/ppo-lstm.yaml (MIKASA/TMazePassive-v0, L = 10 with the dense shaping,
16 environments x 128 steps, 4 epochs x 4 minibatches, width 128, Adam 2.5e-4; perf_agents.py compares it with
sb3-contrib's RecurrentPPO); every membench row changes only the agent (its core; GTrXL keeps its shipped options).
Each run trains in a fresh process with 1 torch thread, one at a time; SPS = environment steps / training wall time
(rollouts + updates); peak memory = the process's max RSS, and for membench the part of it above the peak after
the imports (what training added). membench's LSTM and GRU train through the CPU fast path
(``fast_cpu: auto``), and ppo-lstm also once on the readable path (``algos/ppo.py`` alone), the like-for-like
reference of the cores that have no fast path (GTrXL, FFM, minGRU, LRU).

TorchRL (experiments/perf/torchrl_recurrent_ppo.py: ``LSTMModule`` / ``GRUModule``, ``ProbabilisticActor``,
``ValueOperator``, ``Collector``, ``GAE``, ``ClipPPOLoss`` in recurrent mode, the same cell) runs in the Python of
``.venv-torchrl``, which ``make bench-perf`` creates beside ``.venv`` (torchrl and tensordict on top of .venv's
packages, same torch); ``TORCHRL_PYTHON`` names another. Without it the TorchRL rows say why they are missing.

Usage: python experiments/perf_cores.py [--steps N] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MATCHED = HERE / "perf" / "tmaze-matched" / "ppo-lstm.yaml"
CORES = ("ppo-lstm", "ppo-gru", "ppo-gtrxl", "ppo-ffm", "ppo-mingru", "ppo-lru")
TORCHRL_CORES = ("lstm", "gru")


def run_one(agent: str, steps: int, seed: int) -> dict:
    """Train one membench agent on the matched cell in this process (called in a fresh subprocess)."""
    import tempfile

    import torch

    torch.set_num_threads(1)
    from membench_agents.algos.trainer import make_trainer
    from membench_agents.config.resolve import resolve
    from membench_agents.runs import loop

    readable = agent.endswith("-readable")
    name = agent.removesuffix("-readable")
    sets = ["env_kwargs.penalty=true", "eval.episodes=10", "eval.every_steps=0", "checkpoint.every_iterations=0",
            "checkpoint.every_seconds=0"]  # fmt: skip
    if readable:
        sets.append("ppo.fast_cpu=off")
    # the cell's ppo values over the agent's defaults: only the core (and GTrXL's shipped options) differ
    cfg = resolve("MIKASA/TMazePassive-v0", name, config_file=MATCHED, steps=steps, seeds=[seed], overrides=sets).config
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the imports' peak, before training
    trainer = make_trainer(cfg, seed)
    with tempfile.TemporaryDirectory() as d:
        summary = loop.train_seed(cfg, seed, d, trainer=trainer)
    fast = getattr(getattr(trainer, "algo", None), "fast", None)
    return {
        "agent": agent,
        "steps": summary["global_step"],
        "train_time_s": summary["train_time_s"],
        "sps": summary["sps"],
        "fast_cpu": fast is not None and fast.counters["updates"] > 0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "imports_rss_mib": before,
    }


def torchrl_python() -> tuple[str | None, str]:
    """The Python that has torchrl, or (None, why not)."""
    given = os.environ.get("TORCHRL_PYTHON")
    python = given or str(ROOT / ".venv-torchrl" / "bin" / "python")
    if not Path(python).is_file():
        return None, f"no {python}: `make bench-perf` creates .venv-torchrl (or set TORCHRL_PYTHON)"
    check = subprocess.run([python, "-c", "import torchrl, torch; print(torchrl.__version__, torch.__version__)"],
                           capture_output=True, text=True)  # fmt: skip
    if check.returncode != 0:
        return None, f"{python} cannot import torchrl: {check.stderr.strip().splitlines()[-1:]}"
    return python, "torchrl {} (torch {})".format(*check.stdout.split())


def _run(cmd: list[str]) -> dict | str:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if out.returncode != 0:
        return "failed: " + " | ".join(out.stderr.strip().splitlines()[-2:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=16_384, help="rounded up to whole rollouts (16 x 128 steps)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.steps, args.seed)))
        return 0
    args.steps = -(-args.steps // 2048) * 2048
    python, torchrl = torchrl_python()
    print(f"cell: {MATCHED.relative_to(ROOT)} (dense shaping), {args.steps:,} steps, 1 torch thread, seed {args.seed}")
    print(f"TorchRL: {torchrl}")
    rows: dict[str, dict | str] = {}
    for agent in (*CORES, "ppo-lstm-readable"):
        rows[agent] = _run(
            [sys.executable, __file__, "--one", agent, "--steps", str(args.steps), "--seed", str(args.seed)]
        )
    for core in TORCHRL_CORES:
        script = str(HERE / "perf" / "torchrl_recurrent_ppo.py")
        rows[f"torchrl-ppo-{core}"] = (
            _run([python, script, "--core", core, "--steps", str(args.steps), "--seed", str(args.seed)])
            if python
            else f"not run: {torchrl}"
        )
    lstm = rows["ppo-lstm"]
    readable = rows["ppo-lstm-readable"]
    print(f"\n{'agent':<22}{'path':>10}{'SPS':>9}{'peak MiB':>10}{'training':>10}{'/ ppo-lstm':>12}{'/ readable':>12}")
    for agent, r in rows.items():
        if isinstance(r, str):
            print(f"{agent:<22}  {r}")
            continue
        path = "torchrl" if agent.startswith("torchrl") else ("fast" if r["fast_cpu"] else "readable")
        vs = [f"{r['sps'] / ref['sps']:.2f}x" if isinstance(ref, dict) else "n/a" for ref in (lstm, readable)]
        added = f"+{r['peak_rss_mib'] - r['imports_rss_mib']:,.0f}" if "imports_rss_mib" in r else ""
        print(f"{agent:<22}{path:>10}{r['sps']:>9,.0f}{r['peak_rss_mib']:>10,.0f}{added:>10}{vs[0]:>12}{vs[1]:>12}")
    for core in TORCHRL_CORES:
        ours, theirs = rows[f"ppo-{core}"], rows[f"torchrl-ppo-{core}"]
        if isinstance(ours, dict) and isinstance(theirs, dict):
            print(f"membench PPO-{core.upper()} / TorchRL PPO-{core.upper()}: {ours['sps'] / theirs['sps']:.1f}x")
    return 1 if any(isinstance(r, str) and r.startswith("failed") for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
