"""Shared helpers of the run / CLI / resume / SB3 tests: tiny configs and comparisons."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from membench_agents.config.resolve import resolve
from membench_agents.runs.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parents[2]
TMAZE = "MIKASA/TMazePassive-v0"

# A T-Maze training that runs long enough to be stopped (tiny network, many small iterations; no evaluation or
# checkpoint until the stop): the --set flags of `membench train`.
LONG_TRAINING_SETS = [
    "--set",
    "ppo.num_envs=8",
    "--set",
    "ppo.num_steps=16",
    "--set",
    "ppo.num_minibatches=2",
    "--set",
    "ppo.hidden_size=16",
    "--set",
    "eval.every_steps=0",
    "--set",
    "eval.episodes=10",
    "--set",
    "checkpoint.every_iterations=0",
    "--set",
    "checkpoint.every_seconds=0",
]


def tiny_config(agent: str = "ppo-lstm", *, iterations: int = 6, seeds=1, variant: str | None = None, **over):
    """A resolved config for T-Maze L=2 that trains ``iterations`` tiny PPO iterations (8 envs x 16 steps)."""
    sets = [
        "env_kwargs.corridor_length=2",
        "eval.episodes=20",
        "eval.num_envs=10",
        "checkpoint.every_iterations=2",
    ]
    if agent.startswith("sb3"):
        sets += ["sb3.n_envs=4", "sb3.n_steps=32", "sb3.batch_size=64", "sb3.n_epochs=2"]
        steps = iterations * 4 * 32
        if agent == "sb3-recurrentppo":
            sets += ["sb3.policy_kwargs={lstm_hidden_size: 16}"]
    else:
        sets += [
            "ppo.num_envs=8",
            "ppo.num_steps=16",
            "ppo.num_minibatches=2",
            "ppo.update_epochs=2",
            "ppo.hidden_size=16",
            "ppo.learning_rate=0.001",
            "ppo.deterministic=true",
        ]
        steps = iterations * 8 * 16
    sets += [f"{k}={v}" for k, v in over.items()]
    return resolve(TMAZE, agent, steps=steps, seeds=seeds, obs_variant=variant, overrides=sets).config


def history(seed_dir) -> list[dict]:
    """metrics.jsonl without the wall-clock fields."""
    rows = []
    for line in Path(seed_dir, "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        for k in ("sps", "time"):
            row.pop(k, None)
        rows.append(row)
    return rows


def final_params(seed_dir) -> dict[str, torch.Tensor]:
    payload = load_checkpoint(Path(seed_dir, "checkpoint.pt"))
    t = payload["trainer"]
    return t["algo"]["policy"] if t["kind"] == "ppo" else t["policy"]


def assert_same_params(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], atol: float = 0.0) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if atol == 0.0:
            assert torch.equal(a[k], b[k]), f"parameter {k} differs"
        else:
            torch.testing.assert_close(a[k], b[k], atol=atol, rtol=0)


def membench(*args: str, fresh: bool = False, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the CLI: in this process (``main(args)``, its output captured: the import cost of a new Python process
    is paid once per test worker, not per command), or, ``fresh``, in a new process as `make bench` does (the
    console script, its exit status and its streams). Workers of ``--jobs N`` are new processes either way."""
    if fresh:
        env = dict(os.environ, OMP_NUM_THREADS="1")
        exe = shutil.which("membench", path=str(Path(sys.executable).parent))
        cmd = [exe, *args] if exe else [sys.executable, "-m", "membench_agents", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    from membench_agents.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 2
    return subprocess.CompletedProcess(["membench", *args], code, out.getvalue(), err.getvalue())


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The one ``membench: error:`` line of a command that must fail with exit status 2 (asserted)."""
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("membench: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


class TupleActionEnv(gym.Env):
    """A valid gymnasium env whose action space no agent here supports."""

    observation_space = gym.spaces.Box(-1, 1, (3,), np.float32)
    action_space = gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(3)))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, True, False, {}


class NestedDictObsEnv(gym.Env):
    """Nested Dict observations (ManiSkill-like): membench encoders take them, SB3 does not."""

    observation_space = gym.spaces.Dict(
        {
            "agent": gym.spaces.Dict({"qpos": gym.spaces.Box(-1, 1, (2,), np.float32)}),
            "extra": gym.spaces.Box(-1, 1, (1,), np.float32),
        }
    )
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}


def register_test_envs() -> None:
    for name, cls in (("TupleAction-v0", TupleActionEnv), ("NestedDictObs-v0", NestedDictObsEnv)):
        if f"membench-test/{name}" not in gym.registry:
            gym.register(f"membench-test/{name}", entry_point=cls)


def _children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            with contextlib.suppress(OSError):
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def worker_processes(pid: int) -> tuple[list[int], list[int]]:
    """The run workers of the membench process ``pid`` and their worker servers (Linux, from /proc): the
    children of its multiprocessing forkserver, or (spawned workers) its own ``spawn_main`` children."""
    workers, servers = [], []
    for c in _children(pid):
        if b"forkserver" in _cmdline(c):
            servers.append(c)
            workers += _children(c)
        elif b"spawn_main" in _cmdline(c):
            workers.append(c)
    return workers, servers


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not; Linux)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(predicate, timeout: float) -> bool:
    """Poll ``predicate`` every 0.1 s until it holds (True) or ``timeout`` seconds pass (False)."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def interrupt_once_started(
    proc: subprocess.Popen,
    run: Path,
    seeds=(0, 1),
    wait_s: float = 180,
    *,
    marker: str = "metrics.jsonl",
    settle_s: float = 2.0,
    sig: int | None = None,
    must_start: bool = False,
) -> str:
    """``sig`` (default SIGINT) to a `membench train` process once every seed of ``run`` has written ``marker``
    (then ``settle_s`` more seconds); its stderr after it exited (killed if it outlives 120 s). ``must_start``:
    fail (and kill it) when the seeds have not started within ``wait_s``, instead of signalling anyway."""
    import signal
    import time

    try:
        started = wait_for(lambda: all((run / f"seed_{s}" / marker).is_file() for s in seeds), wait_s)
        assert started or not must_start, "the runs did not start"
        time.sleep(settle_s)
        proc.send_signal(signal.SIGINT if sig is None else sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return err
