"""How long `membench train` takes to exit after SIGTERM, for every agent's default config on a vector, an image
and a dict observation task (the promise: within 30 s, with a checkpoint at the last consistent point).

    python experiments/stop_latency.py                    # every agent x observation type (about 20 min)
    python experiments/stop_latency.py --agents sac-lstm --delay 30

Each cell starts `membench train --env ID --agent A --seeds 1` in a fresh folder with the agent's defaults,
waits until its first checkpoint exists plus ``--delay`` seconds (by then most cells are inside an iteration
or an evaluation), sends SIGTERM and times the exit. Prints one row per cell: seconds to exit, the exit code,
the step of the checkpoint left and the line the run printed about where it stopped.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = {
    "vector": "MIKASA/TMazePassiveDense-v0",
    "image": "MIKASA/MortarMayhemGrid-v0",
    "dict": "MIKASA/MortarMayhemBGrid-v0",
}
AGENTS = [
    "ppo-mlp",
    "ppo-lstm",
    "ppo-gru",
    "ppo-gtrxl",
    "sac",
    "sac-lstm",
    "sac-gru",
    "dtqn",
    "sb3-ppo",
    "sb3-recurrentppo",
]


def one(env: str, agent: str, delay: float, start_timeout: float = 300) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "membench_agents",
                "train",
                "--env",
                env,
                "--agent",
                agent,
                "--seeds",
                "1",
                "--run-dir",
                str(run),
                "--no-progress",
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        )
        ckpt = run / "seed_0" / "checkpoint.pt"
        end = time.monotonic() + start_timeout
        while not ckpt.is_file() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        if proc.poll() is not None:
            err = proc.communicate()[1].strip().splitlines()
            return ("-", str(proc.returncode), "-", (err[-1] if err else "")[:90])
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        try:
            _, err = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        seconds = time.monotonic() - t0
        step = "-"
        if ckpt.is_file():
            sys.path.insert(0, str(ROOT / "membench_agents" / "src"))
            from membench_agents.runs.checkpoint import load_checkpoint

            step = str(load_checkpoint(ckpt)["global_step"])
        said = next((line.strip() for line in err.splitlines() if "stopped" in line), err.strip()[-90:])
        return (f"{seconds:.1f}", str(proc.returncode), step, said[:110])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", nargs="+", default=AGENTS)
    ap.add_argument("--obs", nargs="+", default=list(TASKS), choices=list(TASKS))
    ap.add_argument("--delay", type=float, default=15.0, help="seconds after the first checkpoint (default 15)")
    args = ap.parse_args()
    print(f"{'agent':<18} {'obs':<7} {'exit s':>7} {'rc':>4} {'step':>8}  what the run said")
    for agent in args.agents:
        for obs in args.obs:
            row = one(TASKS[obs], agent, args.delay)
            print(f"{agent:<18} {obs:<7} {row[0]:>7} {row[1]:>4} {row[2]:>8}  {row[3]}", flush=True)


if __name__ == "__main__":
    main()
