"""``--executor ray``: runs as tasks of a Ray cluster give the runs of this machine's executor, survive a killed
worker (Ray retries the task, which resumes from the run's checkpoint), stop on Ctrl-C and resume, and fail
at once where a node does not see the run folder.

The default suite runs two seeds on a local Ray cluster; the cluster of two nodes (a head and a second node
started on this machine, loopback only, token authentication set explicitly), the killed worker and the
stopped driver are ``slow``."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from membench_agents.errors import ConfigError
from membench_agents.runs import cell, executors, workers
from membench_agents.runs.checkpoint import load_checkpoint
from membench_agents.runs.executors import ATTEMPTS, Executor, run_on_node
from membench_agents.runs.folder import LOCK

from tests.agents._runs_helpers import (
    LONG_TRAINING_SETS,
    ROOT,
    assert_same_params,
    final_params,
    interrupt_once_started,
    tiny_config,
)

ray = pytest.importorskip("ray")


def test_an_unknown_executor_a_missing_extra_and_an_address_without_ray_are_one_clear_error(monkeypatch):
    with pytest.raises(ConfigError, match=r"unknown executor .slurmx.; choose one of: local, ray, slurm"):
        Executor("slurmx")
    with pytest.raises(ConfigError, match=r"--address names a Ray cluster: it needs --executor ray"):
        Executor("local", "127.0.0.1:6379")
    monkeypatch.setitem(executors.BACKENDS, "ray", ("membench_agents.runs.ray_executor", "ray", "no_such_ray"))
    with pytest.raises(ConfigError, match=r"needs the 'no_such_ray' package: pip install 'membench-agents\[ray\]'"):
        Executor("ray")


def _attempts(seed_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (seed_dir / ATTEMPTS).read_text().splitlines()]


def test_two_seeds_on_ray_equal_the_same_seeds_trained_here_and_the_command_leaves_nothing_behind(tmp_path):
    """The command starts a local cluster of its own and stops it; the signal handlers are as they were."""
    assert not ray.is_initialized()
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    cfg = tiny_config("ppo-mlp", iterations=3, seeds=[0, 1])
    here = cell.train(cfg, tmp_path / "here", workers=1, progress=False)
    there = cell.train(cfg, tmp_path / "ray", workers=0, progress=False, executor=Executor("ray"))
    assert here["per_run"] == there["per_run"]
    for s in (0, 1):
        assert_same_params(final_params(tmp_path / "here" / f"seed_{s}"), final_params(tmp_path / "ray" / f"seed_{s}"))
        (attempt,) = _attempts(tmp_path / "ray" / f"seed_{s}")
        assert attempt["from_step"] == 0 and attempt["pid"] != os.getpid()
    assert not ray.is_initialized()
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)] == handlers  # ray.init replaces SIGTERM's


def test_a_node_that_does_not_see_the_run_folder_fails_the_run_at_once(tmp_path):
    """The driver's folder is not on the node's storage (here: it never existed)."""
    gone = tmp_path / "gone"
    job = workers.Job("ppo-mlp/s0", tiny_config("ppo-mlp", iterations=1), 0, str(gone / "seed_0"))
    kind, label, line = run_on_node(job, node="3f2a91c0d4e1aa", report=print, stopped=lambda: False)
    assert (kind, label) == ("error", "ppo-mlp/s0")
    assert line.startswith("ppo-mlp/s0: node 3f2a91c0d4e1 (") and f"does not see the run folder {gone}: " in line
    assert not gone.exists()


# ------------------------------------------------------------------------------------------------------
# a cluster of two nodes on this machine
# ------------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_start(*args: str, env: dict[str, str]) -> subprocess.Popen:
    exe = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert exe, "the ray command is missing"
    return subprocess.Popen(
        [exe, "start", "--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@contextlib.contextmanager
def _cluster(temp: Path):
    """A head and a second node of one CPU each, on loopback, with a token of their own: (the driver's environment
    with ``RAY_ADDRESS`` and the token, the second node's ``ray start`` process)."""
    port = _free_port()
    env = dict(
        os.environ,
        RAY_AUTH_MODE="token",
        RAY_AUTH_TOKEN=secrets.token_hex(16),
        RAY_ADDRESS=f"127.0.0.1:{port}",
        OMP_NUM_THREADS="1",
    )
    nodes = [_ray_start("--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}", env=env)]
    try:
        probe = (
            "import ray; ray.init(logging_level='ERROR'); import time\n"
            "for _ in range(120):\n"
            "    if ray.cluster_resources().get('CPU', 0) >= 2: break\n"
            "    time.sleep(0.5)\n"
            "print(len(ray.nodes()))"
        )
        time.sleep(3)
        nodes.append(_ray_start(f"--address=127.0.0.1:{port}", env=env))
        out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == "2", out.stderr
        yield env, nodes[1]
    finally:
        for p in reversed(nodes):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(nodes):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    """The driver's environment while the module's tests share one cluster of two nodes."""
    with _cluster(tmp_path_factory.mktemp("ray")) as (env, _second):
        yield env


def _membench(env: dict[str, str], *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "membench_agents", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


SWEEP = """
name: two-nodes
env: MIKASA/TMazePassive-v0
seeds: 2
steps: 384
episodes: 10
set: [eval.num_envs=10, ppo.num_envs=8, ppo.num_steps=16, ppo.num_minibatches=2, ppo.update_epochs=2,
      ppo.hidden_size=16, ppo.deterministic=true]
designs:
  - design: vary_length
    agents: [ppo-mlp]
    lengths: [2, 3]
"""


@pytest.mark.slow
def test_a_sweep_of_runs_lands_on_both_nodes_and_equals_the_local_runs(two_nodes, tmp_path):
    spec = tmp_path / "two-nodes.yaml"
    spec.write_text(SWEEP)
    here = _membench(two_nodes, "sweep", str(spec), "--jobs", "1", "--no-progress", "--out", str(tmp_path / "here"))
    there = _membench(
        two_nodes, "sweep", str(spec), "--executor", "ray", "--no-progress", "--out", str(tmp_path / "ray")
    )
    for proc in (here, there):
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    (a,) = (tmp_path / "here" / "sweeps" / "two-nodes").iterdir()
    (b,) = (tmp_path / "ray" / "sweeps" / "two-nodes").iterdir()
    nodes = set()
    for cell_dir in sorted((a / "cells").iterdir()):
        other = b / "cells" / cell_dir.name
        assert (
            json.loads((cell_dir / "results.json").read_text())["per_run"]
            == json.loads((other / "results.json").read_text())["per_run"]
        )
        for s in (0, 1):
            assert_same_params(final_params(cell_dir / f"seed_{s}"), final_params(other / f"seed_{s}"))
            nodes |= {attempt["node_id"] for attempt in _attempts(other / f"seed_{s}")}
    assert len(nodes) == 2, nodes  # 4 runs of 1 CPU each on two nodes of 1 CPU


def _kill_when_checkpointed(seed_dir: Path, after_step: int, proc: subprocess.Popen) -> int | None:
    """SIGKILL the process training ``seed_dir`` once its checkpoint is past ``after_step``: its pid (None: the run
    ended first)."""
    while proc.poll() is None:
        try:
            step = load_checkpoint(seed_dir / "checkpoint.pt")["global_step"]
            holder = (seed_dir / LOCK).read_text().split()
        except Exception:  # not written yet, or being replaced
            step, holder = 0, []
        if step >= after_step and len(holder) == 2:
            os.kill(int(holder[1]), signal.SIGKILL)
            return int(holder[1])
        time.sleep(0.05)
    return None


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_the_run_ends_equal_to_an_uninterrupted_one(two_nodes, tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=60, seeds=[0])
    ref = cell.train(cfg, tmp_path / "here", workers=1, progress=False)
    path = tmp_path / "cfg.yaml"
    path.write_text(json.dumps(cfg))
    run = tmp_path / "ray"
    proc = _membench(two_nodes, "train", "--config", str(path), "--executor", "ray", "--run-dir", str(run))
    try:
        killed = _kill_when_checkpointed(run / "seed_0", 8 * 16 * 10, proc)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert killed, "the worker was not killed midway"
    assert proc.returncode == 0, err
    attempts = _attempts(run / "seed_0")
    assert len(attempts) == 2 and attempts[0]["pid"] == killed != attempts[1]["pid"], attempts
    assert attempts[0]["from_step"] == 0 and attempts[1]["from_step"] >= 8 * 16 * 10  # resumed, not restarted
    assert json.loads((run / "results.json").read_text())["per_run"] == ref["per_run"]
    assert_same_params(final_params(tmp_path / "here" / "seed_0"), final_params(run / "seed_0"))


@pytest.mark.slow
def test_ctrl_c_stops_the_runs_on_the_cluster_at_a_checkpoint_and_a_rerun_resumes_them(two_nodes, tmp_path):
    run = tmp_path / "run"
    args = [
        "train",
        "--env",
        "MIKASA/TMazePassive-v0",
        "--agent",
        "ppo-mlp",
        "--seeds",
        "2",
        "--steps",
        str(400 * 8 * 16),
        *LONG_TRAINING_SETS,
        "--no-progress",
        "--executor",
        "ray",
    ]
    proc = _membench(two_nodes, *args, "--run-dir", str(run))
    err = interrupt_once_started(proc, run, wait_s=180)
    assert proc.returncode == 130, err
    assert f"membench train --resume {run}" in err
    steps = [load_checkpoint(run / f"seed_{s}" / "checkpoint.pt")["global_step"] for s in (0, 1)]
    assert all(0 < st < 400 * 8 * 16 for st in steps), steps
    proc = _membench(two_nodes, "train", "--resume", str(run), "--executor", "ray", "--no-progress")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert all(len(_attempts(run / f"seed_{s}")) == 2 for s in (0, 1))


@pytest.mark.slow
def test_a_node_that_dies_mid_run_has_its_run_retried_elsewhere_and_it_ends_equal(tmp_path_factory, tmp_path):
    """Two seeds, one per node; the second node is killed (all its processes) once both have checkpointed."""
    cfg = tiny_config("ppo-mlp", iterations=150, seeds=[0, 1])
    ref = cell.train(cfg, tmp_path / "here", workers=1, progress=False)
    path = tmp_path / "cfg.yaml"
    path.write_text(json.dumps(cfg))
    run = tmp_path / "ray"
    with _cluster(tmp_path_factory.mktemp("ray")) as (env, second):
        proc = _membench(
            env, "train", "--config", str(path), "--executor", "ray", "--run-dir", str(run), "--no-progress"
        )
        try:
            end = time.monotonic() + 180
            while time.monotonic() < end and proc.poll() is None:
                with contextlib.suppress(Exception):
                    if all(
                        load_checkpoint(run / f"seed_{s}" / "checkpoint.pt")["global_step"] >= 8 * 16 * 20
                        for s in (0, 1)
                    ):
                        break
                time.sleep(0.1)
            pids = {s: _attempts(run / f"seed_{s}")[0]["pid"] for s in (0, 1)}
            os.killpg(second.pid, signal.SIGKILL)  # the node: its raylet, its workers, its `ray start`
            second.wait()
            _, err = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, "\n".join(line for line in err.splitlines() if "step/s" not in line)[-4000:]
    victims = [s for s in (0, 1) if len(_attempts(run / f"seed_{s}")) == 2]
    assert len(victims) == 1, [_attempts(run / f"seed_{s}") for s in (0, 1)]
    first, again = _attempts(run / f"seed_{victims[0]}")
    assert first["pid"] == pids[victims[0]] and again["node_id"] != first["node_id"] and again["from_step"] > 0
    assert json.loads((run / "results.json").read_text())["per_run"] == ref["per_run"]
    for s in (0, 1):
        assert_same_params(final_params(tmp_path / "here" / f"seed_{s}"), final_params(run / f"seed_{s}"))
