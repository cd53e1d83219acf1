"""Resume: an interrupted + resumed run equals an uninterrupted one (same seed, deterministic mode).

The comparison is exact: network parameters (torch.equal), the logged per-iteration returns / success
rates / losses of metrics.jsonl, the evaluations during training and the final evaluation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from membench_agents.algos.trainer import make_trainer
from membench_agents.runs import cell, checkpoint, loop

from membench_agents import errors
from tests.agents._runs_helpers import (
    ROOT,
    assert_same_params,
    final_params,
    history,
    interrupt_once_started,
    membench,
    tiny_config,
)


def _uninterrupted(cfg, tmp_path: Path, name: str = "a") -> Path:
    d = tmp_path / name
    loop.train_seed(cfg, cfg["seeds"][0], d)
    return d


@pytest.mark.parametrize("agent", ["ppo-lstm", "ppo-mlp"])
def test_interrupt_then_resume_with_a_new_trainer_equals_uninterrupted(tmp_path, agent):
    cfg = tiny_config(agent, iterations=7, **{"eval.every_steps": 256})
    a = _uninterrupted(cfg, tmp_path)

    b = tmp_path / "b"
    with pytest.raises(loop.Interrupted, match="checkpoint saved"):
        loop.train_seed(cfg, 0, b, stop_after_iterations=3)
    assert (b / "checkpoint.pt").is_file() and not (b / "eval.json").exists()
    ckpt = checkpoint.load_checkpoint(b / "checkpoint.pt")
    assert ckpt["global_step"] == 3 * 8 * 16 and not ckpt["run"]["finished"]
    # a brand-new trainer object (fresh PPO, fresh env) loads the checkpoint and trains the rest
    summary = loop.train_seed(cfg, 0, b, resume=True)

    assert_same_params(final_params(a), final_params(b))
    ha, hb = history(a), history(b)
    assert len(ha) == 7 + len([r for r in ha if "eval" in r]) and ha == hb
    assert any(r.get("episodes") for r in ha)  # the logged returns are real episodes
    assert json.loads((a / "eval.json").read_text())["eval"] == summary["eval"]


def test_resume_in_a_new_process_equals_uninterrupted(tmp_path):
    """Interrupt (stop after k iterations), then `membench train --resume` continues in a new process."""
    cfg = tiny_config("ppo-gru", iterations=6, seeds=[0, 1])
    straight = tmp_path / "straight"
    cell.train(cfg, straight, workers=1, progress=False)

    run = tmp_path / "resumed"
    jobs = cell.prepare_run(cfg, run)
    for job in jobs:
        with pytest.raises(loop.Interrupted):
            loop.train_seed(job.cfg, job.seed, job.seed_dir, stop_after_iterations=2 + job.seed)
    out = membench("train", "--resume", str(run), "--jobs", "1", "--no-progress", fresh=True)
    assert out.returncode == 0, out.stderr
    for s in (0, 1):
        assert_same_params(final_params(straight / f"seed_{s}"), final_params(run / f"seed_{s}"))
        assert history(straight / f"seed_{s}") == history(run / f"seed_{s}")
    ra, rb = (json.loads((d / "results.json").read_text()) for d in (straight, run))
    assert ra["per_run"] == rb["per_run"] and ra["mean"] == rb["mean"] and ra["sem"] == rb["sem"]


def test_a_crash_leaves_a_checkpoint_and_resume_recovers(tmp_path):
    cfg = tiny_config("ppo-lstm", iterations=6, **{"checkpoint.every_iterations": 1})
    a = _uninterrupted(cfg, tmp_path)

    b = tmp_path / "b"
    trainer = make_trainer(cfg, 0)
    real_iterate, calls = trainer.iterate, []

    def crashing_iterate(should_stop=None):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("simulated crash inside an iteration")
        return real_iterate(should_stop)

    trainer.iterate = crashing_iterate
    with pytest.raises(RuntimeError, match="simulated crash"):
        loop.train_seed(cfg, 0, b, trainer=trainer)
    assert "simulated crash" in (b / "error.txt").read_text()
    assert checkpoint.load_checkpoint(b / "checkpoint.pt")["global_step"] == 3 * 8 * 16
    loop.train_seed(cfg, 0, b, resume=True)
    assert not (b / "error.txt").exists()
    assert_same_params(final_params(a), final_params(b))
    assert history(a) == history(b)


def test_resume_refuses_a_different_config(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=4)
    with pytest.raises(loop.Interrupted):
        loop.train_seed(cfg, 0, tmp_path, stop_after_iterations=1)
    other = dict(cfg, total_steps=cfg["total_steps"] * 2)
    with pytest.raises(errors.ConfigError, match=r"trained with another config.*total_steps: 512 vs 1024"):
        loop.train_seed(other, 0, tmp_path, resume=True)


@pytest.mark.slow  # the stop of parallel runs: tests/agents/test_stops.py; exact resume: the tests above
def test_ctrl_c_checkpoints_every_parallel_run_and_resume_matches(tmp_path):
    """A real SIGINT to `membench train` (2 runs in 2 worker processes): both runs stop at an iteration
    boundary with a checkpoint, the command says how to resume, and the resumed runs equal uninterrupted ones."""
    cell = ROOT / "membench_agents/src/membench_agents/config/cells/MIKASA/TMazePassiveDense-v0/ppo-lstm.yaml"
    cfg_args = [
        "--config",
        str(cell),
        "--seeds",
        "2",
        "--steps",
        str(150 * 8 * 16),
        "--set",
        "ppo.num_envs=8",
        "--set",
        "ppo.num_steps=16",
        "--set",
        "ppo.num_minibatches=2",
        "--set",
        "ppo.hidden_size=16",
        "--set",
        "ppo.deterministic=true",
        "--set",
        "eval.every_steps=0",
        "--set",
        "eval.episodes=20",
        "--set",
        "checkpoint.every_iterations=0",
        "--set",
        "checkpoint.every_seconds=0",
        "--no-progress",
    ]
    run = tmp_path / "run"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "membench_agents", "train", *cfg_args, "--run-dir", str(run), "--jobs", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    err = interrupt_once_started(proc, run, wait_s=120, marker="checkpoint.pt", settle_s=0.2, must_start=True)
    if proc.returncode == 0:
        pytest.skip("the runs finished before the interrupt arrived (machine too fast for this budget)")
    assert proc.returncode == 130, err
    assert f"membench train --resume {run}" in err
    steps = [checkpoint.load_checkpoint(run / f"seed_{s}" / "checkpoint.pt")["global_step"] for s in (0, 1)]
    assert all(st % (8 * 16) == 0 for st in steps)  # saved at an iteration boundary
    assert not (run / "results.json").exists()

    out = membench("train", "--resume", str(run), "--jobs", "1", "--no-progress")
    assert out.returncode == 0, out.stderr
    straight = tmp_path / "straight"
    out = membench("train", *cfg_args, "--run-dir", str(straight), "--jobs", "1")
    assert out.returncode == 0, out.stderr
    for s in (0, 1):
        assert_same_params(final_params(straight / f"seed_{s}"), final_params(run / f"seed_{s}"))
        assert history(straight / f"seed_{s}") == history(run / f"seed_{s}")


def test_a_stori_run_resumes_exactly(tmp_path):
    """The Atari emulator's state (RAM, CPU, its RNG) travels in the checkpoint as plain bytes."""
    pytest.importorskip("ale_py")
    from membench_agents.config.resolve import resolve

    sets = [
        "ppo.num_envs=2",
        "ppo.num_steps=16",
        "ppo.num_minibatches=2",
        "ppo.update_epochs=1",
        "ppo.deterministic=true",
        "eval.episodes=1",
        "eval.num_envs=1",
        "checkpoint.every_iterations=1",
        "env_kwargs.max_episode_frames=400",  # 100 steps: the evaluation's episode (a Boxing bout: 1,800 steps)
    ]
    cfg = resolve("STORI/Boxing-Type3-v0", "ppo-mlp", steps=4 * 2 * 16, seeds=1, overrides=sets).config
    a = _uninterrupted(cfg, tmp_path)
    b = tmp_path / "b"
    with pytest.raises(loop.Interrupted):
        loop.train_seed(cfg, 0, b, stop_after_iterations=2)
    assert checkpoint.load_checkpoint(b / "checkpoint.pt")["env_state"] is not None
    loop.train_seed(cfg, 0, b, resume=True)
    assert_same_params(final_params(a), final_params(b))
    assert history(a) == history(b)
