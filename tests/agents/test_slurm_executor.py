"""``--executor slurm``: the submissions through submitit, run here by its local executor (``--slurm cluster=local``;
no Slurm on this machine): runs equal to this machine's, a killed job submitted again and resumed, Ctrl-C and
resume, and clear errors for a missing Slurm and bad parameters."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from membench_agents.errors import ConfigError
from membench_agents.runs import cell
from membench_agents.runs.checkpoint import load_checkpoint
from membench_agents.runs.executors import ATTEMPTS, Executor
from membench_agents.runs.folder import LOCK

from tests.agents._runs_helpers import (
    ROOT,
    assert_same_params,
    final_params,
    interrupt_once_started,
    membench,
    one_error_line,
    tiny_config,
)

pytest.importorskip("submitit")

LOCAL = Executor("slurm", options=("cluster=local",))


def _attempts(seed_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (seed_dir / ATTEMPTS).read_text().splitlines()]


def test_no_slurm_here_and_bad_parameters_are_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch
    args = ["train", "--env", "MIKASA/TMazePassive-v0", "--agent", "ppo-mlp", "--seeds", "2", "--steps", "256"]
    line = one_error_line(membench(*args, "--executor", "slurm", "--run-dir", str(tmp_path / "a")))
    assert "--executor slurm: this machine has no Slurm (sbatch is not on PATH)" in line and "cluster=local" in line
    line = one_error_line(
        membench(*args, "--executor", "slurm", "--slurm", "partition", "--run-dir", str(tmp_path / "b"))
    )
    assert "--slurm 'partition': expected KEY=VALUE" in line
    line = one_error_line(
        membench(
            *args,
            "--executor",
            "slurm",
            "--slurm",
            "cluster=local",
            "--slurm",
            "no_such_key=1",
            "--run-dir",
            str(tmp_path / "c"),
        )
    )
    assert (
        line.startswith("membench: error: --slurm: unknown parameter(s) no_such_key; submitit's are ")
        and "slurm_*" in line
    )
    assert not any((tmp_path / d).exists() for d in "abc")  # refused before any folder was written
    with pytest.raises(ConfigError, match="--slurm sets Slurm job parameters: it needs --executor slurm"):
        Executor("local", options=("timeout_min=5",))


def test_two_seeds_as_jobs_equal_the_same_seeds_trained_here(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=3, seeds=[0, 1])
    here = cell.train(cfg, tmp_path / "here", workers=1, progress=False)
    there = cell.train(cfg, tmp_path / "jobs", workers=0, progress=False, executor=LOCAL)
    assert here["per_run"] == there["per_run"]
    for s in (0, 1):
        assert_same_params(final_params(tmp_path / "here" / f"seed_{s}"), final_params(tmp_path / "jobs" / f"seed_{s}"))
        assert len(_attempts(tmp_path / "jobs" / f"seed_{s}")) == 1


def _driver(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "membench_agents", *args],
        cwd=ROOT,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_a_killed_job_is_submitted_again_and_ends_equal_to_an_uninterrupted_run(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=60, seeds=[0])
    ref = cell.train(cfg, tmp_path / "here", workers=1, progress=False)
    path = tmp_path / "cfg.yaml"
    path.write_text(json.dumps(cfg))
    run = tmp_path / "jobs"
    proc = _driver(
        "train", "--config", str(path), "--executor", "slurm", "--slurm", "cluster=local", "--run-dir", str(run)
    )
    killed = None
    try:
        while proc.poll() is None and killed is None:
            try:
                step = load_checkpoint(run / "seed_0" / "checkpoint.pt")["global_step"]
                holder = (run / "seed_0" / LOCK).read_text().split()
            except Exception:  # not written yet, or being replaced
                step, holder = 0, []
            if step >= 8 * 16 * 10 and len(holder) == 2:
                killed = int(holder[1])
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.05)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert killed and proc.returncode == 0, err
    assert "ended without a result" in err and "submitted again, it resumes from its checkpoint" in err
    first, again = _attempts(run / "seed_0")
    assert first["pid"] == killed and first["from_step"] == 0 and again["from_step"] >= 8 * 16 * 10
    assert json.loads((run / "results.json").read_text())["per_run"] == ref["per_run"]
    assert_same_params(final_params(tmp_path / "here" / "seed_0"), final_params(run / "seed_0"))


@pytest.mark.slow
def test_ctrl_c_stops_the_jobs_at_a_checkpoint_and_a_rerun_resumes_them(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=400, seeds=[0, 1])
    path = tmp_path / "cfg.yaml"
    path.write_text(json.dumps(cfg))
    run = tmp_path / "jobs"
    slurm = ["--executor", "slurm", "--slurm", "cluster=local", "--no-progress"]
    proc = _driver("train", "--config", str(path), *slurm, "--run-dir", str(run))
    err = interrupt_once_started(proc, run, wait_s=120)
    assert proc.returncode == 130, err
    assert f"membench train --resume {run}" in err
    steps = [load_checkpoint(run / f"seed_{s}" / "checkpoint.pt")["global_step"] for s in (0, 1)]
    assert all(0 < st < 400 * 8 * 16 for st in steps), steps
    proc = _driver("train", "--resume", str(run), *slurm)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert all(len(_attempts(run / f"seed_{s}")) == 2 for s in (0, 1))
