"""`make bench-perf` section "executors": the overhead of `--executor ray` against the local worker pool, measured
in the same run on the same small job.

The job: `membench train` of ppo-mlp on MIKASA/TMazePassive-v0, RUNS seeds of STEPS steps each, 2 at a time
(`--jobs 2`), each in a fresh process. Three ways, one after another, REPEATS times in turn:
  local        this machine's worker pool (the default executor);
  ray-new      `--executor ray` with no cluster running: the command starts a local Ray cluster and stops it;
  ray-attached `--executor ray` attached (RAY_ADDRESS) to a running one-machine cluster started beforehand
               (loopback, authentication off), as on a real cluster.
Printed per way: the command's wall time (median over repeats) and its ratio to local, and the per-run start
latency: from the command's start to each run's first log file (the TensorBoard file it opens once its
environments and networks are built), median over runs and repeats.

Usage: python experiments/perf_executors.py [--runs 4] [--steps 8192] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV, AGENT = "MIKASA/TMazePassive-v0", "ppo-mlp"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one(way: str, runs: int, steps: int, out: Path, env: dict[str, str]) -> tuple[float, list[float]]:
    """(wall seconds, per-run start latencies) of one `membench train`."""
    run_dir = out / f"{way}-{time.monotonic_ns()}"
    cmd = [sys.executable, "-m", "membench_agents", "train", "--env", ENV, "--agent", AGENT, "--seeds", str(runs)]
    cmd += ["--steps", str(steps), "--jobs", "2", "--no-progress", "--run-dir", str(run_dir)]
    if way != "local":
        cmd += ["--executor", "ray"]
    t0 = time.time()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.time() - t0
    if done.returncode != 0:
        raise SystemExit(f"{way}: membench train failed:\n{done.stderr[-2000:]}")
    starts = []
    for seed_dir in sorted(run_dir.glob("seed_*")):
        first = min(float(p.name.split(".")[3]) for p in seed_dir.glob("events.out.tfevents.*"))
        starts.append(first - t0)
    shutil.rmtree(run_dir)
    return wall, starts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--steps", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        print("skipped: the ray extra is not installed (pip install 'membench-agents[ray]')")
        return 0
    base = dict(os.environ, OMP_NUM_THREADS="1", RAY_AUTH_MODE="disabled")
    base.pop("RAY_ADDRESS", None)
    port = _free_port()
    ray_exe = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    head = subprocess.Popen(
        [ray_exe, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2"]
        + ["--include-dashboard=false", "--disable-usage-stats"],
        env=base,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    envs = {"local": base, "ray-new": base, "ray-attached": dict(base, RAY_ADDRESS=f"127.0.0.1:{port}")}
    walls: dict[str, list[float]] = {w: [] for w in envs}
    starts: dict[str, list[float]] = {w: [] for w in envs}
    print(f"{args.runs} runs of {AGENT} on {ENV}, {args.steps:,} steps each, 2 at a time; {args.repeats} repeats")
    try:
        time.sleep(5)  # the head's start
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.repeats):
                for way, env in envs.items():
                    wall, s = one(way, args.runs, args.steps, Path(tmp), env)
                    walls[way].append(wall)
                    starts[way].extend(s)
    finally:
        head.send_signal(signal.SIGTERM)
        head.wait(timeout=60)
    ref = statistics.median(walls["local"])
    print(f"\n{'executor':<14}{'wall (median)':>15}{'vs local':>10}{'run start latency (median)':>30}")
    for way in envs:
        wall = statistics.median(walls[way])
        print(f"{way:<14}{wall:>13.1f} s{wall / ref:>9.2f}x{statistics.median(starts[way]):>28.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
