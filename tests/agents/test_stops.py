"""Every stop and every failure ends: Ctrl-C / SIGTERM with runs still queued, a failed run with runs queued,
a second signal, a device that is not there, and a stop that arrives inside a long iteration or an evaluation
(it is honoured there, at the last consistent point, and the resumed run equals an uninterrupted one)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from membench_agents.algos.trainer import make_trainer
from membench_agents.config.resolve import resolve
from membench_agents.runs import loop
from membench_agents.runs.cell import run_config
from membench_agents.runs.checkpoint import load_checkpoint

from tests.agents._runs_helpers import (
    LONG_TRAINING_SETS,
    ROOT,
    TMAZE,
    alive,
    assert_same_params,
    final_params,
    history,
    membench,
    tiny_config,
    wait_for,
    worker_processes,
)

_BOUND_S = 60  # from the signal to the command's exit


def _start(args: list[str], env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    return subprocess.Popen(
        [sys.executable, "-m", "membench_agents", *args, "--no-progress"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _started_seeds(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("seed_*/checkpoint.pt"))


def _stop(proc: subprocess.Popen, root: Path, sig: int, started: int = 2) -> tuple[float, str]:
    """Wait until ``started`` runs have a checkpoint, send ``sig``; seconds until exit and stderr."""
    try:
        assert wait_for(lambda: len(_started_seeds(root)) >= started, 180), "the runs did not start"
        time.sleep(0.5)
        proc.send_signal(sig)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=_BOUND_S)
        return time.monotonic() - t0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize(
    "command,sig",
    [
        ("train", signal.SIGINT),
        # SIGTERM takes the path of SIGINT (runs.loop.STOP_SIGNALS): the default suite sends it to a suite run's
        # worker pool in tests/agents/test_scorecard.py and to a run in this process in test_run_folders.py
        pytest.param("train", signal.SIGTERM, marks=pytest.mark.slow),
        # bench, certify and suite runs stop through one helper (cli._run_bench): the default suite stops a suite run
        # with runs queued in tests/agents/test_scorecard.py
        pytest.param("bench", signal.SIGINT, marks=pytest.mark.slow),
    ],
)
def test_a_stop_with_runs_queued_ends_and_leaves_resumable_runs(tmp_path, command, sig):
    """3 runs on 2 workers: the queued run never starts, the running ones checkpoint, the command exits."""
    args = [
        "--env",
        "MIKASA/TMazePassiveDense-v0",
        "--agent",
        "ppo-mlp",
        "--seeds",
        "3",
        "--jobs",
        "2",
        "--steps",
        str(2000 * 8 * 16),
        *LONG_TRAINING_SETS,
    ]
    if command == "train":
        proc = _start(["train", *args, "--run-dir", str(tmp_path / "run")])
    else:  # the same cell as a config file in a bench spec
        (tmp_path / "cell.yaml").write_text(
            textwrap.dedent(f"""\
            env: MIKASA/TMazePassiveDense-v0
            agent: ppo-mlp
            total_steps: {2000 * 8 * 16}
            seeds: [0, 1, 2]
            eval: {{episodes: 10, every_steps: 0}}
            checkpoint: {{every_iterations: 0, every_seconds: 0}}
            ppo: {{num_envs: 8, num_steps: 16, num_minibatches: 2, hidden_size: 16}}
            """)
        )
        (tmp_path / "spec.yaml").write_text("jobs: 2\ncells: [cell.yaml]\n")
        proc = _start(["bench", "--spec", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out")])
    seconds, err = _stop(proc, tmp_path, sig)
    assert proc.returncode == 130, err
    assert seconds < _BOUND_S
    assert "1 queued run(s) not started" in err and f"membench {command} --resume" in err
    run_dir = next(tmp_path.rglob("config.yaml")).parent
    cfg = run_config(run_dir)
    points = [loop.resume_point(cfg, s, run_dir / f"seed_{s}") for s in cfg["seeds"]]
    assert sorted(kind for kind, _ in points) == ["checkpoint", "checkpoint", "fresh"]  # --resume trains the queued
    for kind, payload in points:
        if kind == "checkpoint":  # saved when stopped (not only the one at step 0), at an iteration boundary
            assert payload["global_step"] > 0 and payload["global_step"] % (8 * 16) == 0, payload["global_step"]
            assert payload["env_state"] is not None


@pytest.mark.slow
def test_a_stop_of_a_sweep_with_runs_queued_ends(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        textwrap.dedent("""\
        name: stop-test
        env: MIKASA/TMazePassiveDense-v0
        seeds: 2
        steps: 256000
        designs:
          - design: vary_length
            agents: [ppo-mlp]
            lengths: [2, 3]
            set: [ppo.num_envs=8, ppo.num_steps=16, ppo.num_minibatches=2, ppo.hidden_size=16, eval.episodes=10,
                  eval.every_steps=0]
        """)
    )
    proc = _start(["sweep", str(spec), "--jobs", "2", "--out", str(tmp_path / "out")])
    _seconds, err = _stop(proc, tmp_path / "out", signal.SIGTERM)
    assert proc.returncode == 130, err
    assert "queued run(s) not started" in err and "membench sweep --resume" in err


def _stuck_workers(pid: int) -> int:
    """How many worker processes of ``pid`` block SIGINT (Stuck-v0 does at its 41st step)."""
    n = 0
    for w in worker_processes(pid)[0]:
        try:
            status = Path(f"/proc/{w}/status").read_text().splitlines()
            blocked = next(line for line in status if line.startswith("SigBlk:"))
        except (OSError, StopIteration):
            continue
        n += bool(int(blocked.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return n


_CRASHY = '''
import gymnasium as gym
import numpy as np


class Crashy(gym.Env):
    """Fails after 40 steps (a bug in a user's environment, say)."""

    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = getattr(self, "t", 0)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.t > 40:
            raise RuntimeError("the environment broke at step 41")
        return np.zeros(2, np.float32), 0.0, False, self.t % 8 == 0, {}


class Stuck(Crashy):
    """Hangs at step 41 inside code that Python signals cannot interrupt (a native library, say)."""

    def step(self, action):
        self.t += 1
        if self.t > 40:
            import signal
            import time

            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            time.sleep(120)
        return np.zeros(2, np.float32), 0.0, False, self.t % 8 == 0, {}


gym.register("Crashy-v0", entry_point=Crashy)
gym.register("Stuck-v0", entry_point=Stuck)
'''


def _with_test_envs(tmp_path: Path) -> dict[str, str]:
    """The environment of a membench process (and its workers) in which Crashy-v0 and Stuck-v0 exist."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_CRASHY)  # every process, workers too, registers the envs
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def test_a_failed_run_with_runs_queued_ends_with_one_line_and_its_log(tmp_path):
    run = tmp_path / "run"
    proc = _start(
        [
            "train",
            "--env",
            "Crashy-v0",
            "--agent",
            "ppo-mlp",
            "--seeds",
            "3",
            "--jobs",
            "2",
            "--steps",
            "100000",
            *LONG_TRAINING_SETS,
            "--run-dir",
            str(run),
        ],
        env_extra=_with_test_envs(tmp_path),
    )
    try:
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    lines = [line for line in err.splitlines() if line.startswith("membench: error: run ")]
    assert lines and all("RuntimeError: the environment broke at step 41 (log: " in line for line in lines), err
    for line in lines:
        log = Path(line.rsplit("(log: ", 1)[1].rstrip(")"))
        assert log.is_file() and "the environment broke" in log.read_text()
    assert "Traceback" not in err
    assert "queued run(s) not started" in err and f"membench train --resume {run}" in err


def test_a_second_signal_aborts_at_once_even_when_the_runs_cannot_stop(tmp_path):
    """The first Ctrl-C cannot reach runs stuck in native code; the second ends the command anyway (its workers
    are killed after a short grace period), leaving each run's last checkpoint."""
    run = tmp_path / "run"
    proc = _start(
        [
            "train",
            "--env",
            "Stuck-v0",
            "--agent",
            "ppo-mlp",
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--steps",
            "100000",
            *LONG_TRAINING_SETS,
            "--run-dir",
            str(run),
        ],
        env_extra=_with_test_envs(tmp_path),
    )
    try:
        assert wait_for(lambda: _stuck_workers(proc.pid) >= 2, 180), "the runs did not get stuck"
        assert len(_started_seeds(tmp_path)) == 2
        workers = worker_processes(proc.pid)[0]
        proc.send_signal(signal.SIGINT)
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 15
    assert not any(alive(w) for w in workers)  # killed after the grace period, not left behind
    assert all((run / f"seed_{s}" / "checkpoint.pt").is_file() for s in (0, 1))


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_a_missing_gpu_is_refused_before_any_worker_starts(tmp_path):
    """In this process: the refusal comes before the worker pool, so no new process is needed to see it."""
    run = tmp_path / "run"
    args = ["--env", TMAZE, "--agent", "ppo-mlp", "--seeds", "3", "--jobs", "2", "--device", "cuda"]
    out = membench("train", *args, "--run-dir", str(run), "--no-progress")
    assert out.returncode == 2, out.stderr
    assert (
        out.stderr.strip().splitlines()[-1].startswith("membench: error: device 'cuda' was asked for but this machine")
    )
    assert not run.exists()


# ------------------------------------------------------------------------------------------------------
# a stop inside an iteration or an evaluation: the last consistent point, and exact resume
# ------------------------------------------------------------------------------------------------------
def _sac_config(**over):
    sets = [
        "sac.num_envs=2",
        "sac.batch_size=8",
        "sac.hidden_size=16",
        "sac.learning_starts=32",
        "sac.buffer_size=2000",
        "sac.iteration_steps=64",
        "sac.deterministic=true",
        "eval.episodes=4",
        "eval.num_envs=2",
        "eval.every_steps=0",
        "checkpoint.every_iterations=1",
        *[f"{k}={v}" for k, v in over.items()],
    ]
    return resolve(
        TMAZE,
        "sac-gru",
        steps=3 * 64,
        seeds=1,
        overrides=["env_kwargs.corridor_length=2", *sets, "sac.sequence_length=4"],
    ).config


def _dtqn_config():
    sets = [
        "dtqn.num_envs=2",
        "dtqn.num_steps=32",
        "dtqn.batch_size=4",
        "dtqn.context_len=4",
        "dtqn.d_model=16",
        "dtqn.num_heads=2",
        "dtqn.num_layers=1",
        "dtqn.learning_starts=16",
        "dtqn.train_frequency=2",
        "dtqn.buffer_size=2000",
        "dtqn.deterministic=true",
        "eval.episodes=4",
        "eval.num_envs=2",
        "eval.every_steps=0",
        "checkpoint.every_iterations=1",
    ]
    return resolve(TMAZE, "dtqn", steps=3 * 2 * 32, seeds=1, overrides=["env_kwargs.corridor_length=2", *sets]).config


class _StopAt:
    """A stop flag that turns on at the n-th poll, recording where (training loop, trainer, evaluation)."""

    def __init__(self, n: int):
        self.n, self.calls = n, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.n


@pytest.mark.parametrize("agent", ["sac-gru", "dtqn"])
def test_a_stop_inside_an_iteration_saves_it_unfinished_and_resume_completes_it(tmp_path, agent):
    """SAC and DTQN keep the unfinished iteration: the checkpoint is mid-iteration, resume is exact."""
    cfg = _sac_config() if agent == "sac-gru" else _dtqn_config()
    straight = tmp_path / "straight"
    loop.train_seed(cfg, 0, straight)
    stopped = tmp_path / "stopped"
    stop = _StopAt(1 + 32 + 1 + 10)  # the loop polls once per iteration, the trainer once per vector step (32)
    with pytest.raises(loop.Interrupted, match="inside an iteration"):
        loop.train_seed(cfg, 0, stopped, should_stop=stop)
    payload = load_checkpoint(stopped / "checkpoint.pt")
    per_iteration = 64 if agent == "sac-gru" else 2 * 32
    assert payload["global_step"] % per_iteration != 0  # saved where it stopped, not at an iteration boundary
    loop.train_seed(cfg, 0, stopped, resume=True)
    assert history(straight) == history(stopped)
    key = "actor" if agent == "sac-gru" else "q_net"
    a = load_checkpoint(straight / "checkpoint.pt")["trainer"]["algo"][key]
    b = load_checkpoint(stopped / "checkpoint.pt")["trainer"]["algo"][key]
    assert_same_params(a, b)


def test_a_stop_inside_a_ppo_iteration_drops_it_and_resume_is_exact(tmp_path):
    """PPO cannot continue half a rollout: the iteration is dropped and the checkpoint written before it stands."""
    cfg = tiny_config("ppo-lstm", iterations=6, **{"checkpoint.every_iterations": 1})
    straight = tmp_path / "straight"
    loop.train_seed(cfg, 0, straight)
    stopped = tmp_path / "stopped"
    trainer = make_trainer(cfg, 0)
    stop = _StopAt(10**9)
    real_iterate = trainer.iterate

    def iterate(should_stop=None):
        if trainer.algo.iteration == 3:  # the 4th iteration: the stop arrives in the middle of its rollout
            assert should_stop is stop  # a checkpoint was written just before it, so it may be dropped
            stop.n = stop.calls + 5
        return real_iterate(should_stop)

    trainer.iterate = iterate
    with pytest.raises(loop.Interrupted, match="which was dropped; the checkpoint of step 384 stands"):
        loop.train_seed(cfg, 0, stopped, should_stop=stop, trainer=trainer)
    assert load_checkpoint(stopped / "checkpoint.pt")["global_step"] == 3 * 8 * 16
    loop.train_seed(cfg, 0, stopped, resume=True)
    assert history(straight) == history(stopped)
    assert_same_params(final_params(straight), final_params(stopped))


def test_a_slow_ppo_iteration_is_preceded_by_a_checkpoint(tmp_path, monkeypatch):
    """Without periodic checkpoints, a PPO iteration that is slow gets a checkpoint before it, so a stop inside it
    loses nothing; a fast one is not stopped inside (the stop waits for its end, a few seconds at most)."""
    cfg = tiny_config("ppo-mlp", iterations=6, **{"checkpoint.every_iterations": 0})
    polls = []

    class Recorder:
        def __call__(self):
            polls.append(trainer.algo.global_step)
            return False

    trainer = make_trainer(cfg, 0)
    real_iterate = trainer.iterate
    given = []

    def iterate(should_stop=None):
        given.append(should_stop is not None)
        return real_iterate(should_stop)

    trainer.iterate = iterate
    monkeypatch.setattr(loop, "SLOW_ITERATION_S", 1e9)  # every iteration counts as fast
    loop.train_seed(cfg, 0, tmp_path / "fast", should_stop=Recorder(), trainer=trainer)
    assert given == [True, False, False, False, False, False]  # only the first follows a checkpoint (the start)

    trainer = make_trainer(cfg, 0)
    real_iterate = trainer.iterate
    given.clear()
    trainer.iterate = iterate
    monkeypatch.setattr(loop, "SLOW_ITERATION_S", 0.0)  # every iteration counts as slow
    loop.train_seed(cfg, 0, tmp_path / "slow", should_stop=Recorder(), trainer=trainer)
    assert given == [True] * 6


def test_a_stop_during_an_evaluation_is_prompt_and_resume_repeats_it(tmp_path, monkeypatch):
    cfg = tiny_config("ppo-mlp", iterations=4, **{"eval.every_steps": 2 * 8 * 16, "eval.episodes": 20})
    straight = tmp_path / "straight"
    loop.train_seed(cfg, 0, straight)
    stopped = tmp_path / "stopped"
    trainer = make_trainer(cfg, 0)
    stop = _StopAt(10**9)
    real_evaluate = loop.evaluate_trainer

    def evaluate_trainer(*args, **kwargs):
        if args[0] is trainer and trainer.global_step == 2 * 8 * 16:  # the periodic evaluation after iteration 2
            assert kwargs.get("should_stop") is stop
            stop.n = stop.calls + 3
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(loop, "evaluate_trainer", evaluate_trainer)
    with pytest.raises(loop.Interrupted, match="during an evaluation, which the resumed run repeats"):
        loop.train_seed(cfg, 0, stopped, should_stop=stop, trainer=trainer)
    payload = load_checkpoint(stopped / "checkpoint.pt")
    assert payload["global_step"] == 2 * 8 * 16 and payload["run"]["eval_due"]
    loop.train_seed(cfg, 0, stopped, resume=True)
    assert history(straight) == history(stopped)
    assert_same_params(final_params(straight), final_params(stopped))


def test_a_stop_names_a_few_queued_runs_and_counts_the_rest():
    """A suite run can queue hundreds of runs: the stop's line names the first few and counts the others."""
    from membench_agents.runs import workers

    lines: list[str] = []

    class Bar:
        write = staticmethod(lines.append)

    queued = [workers.Job(f"cell{i}/s0", {}, 0, "") for i in range(workers.NAMED_QUEUED + 3)]
    workers.report_not_started(Bar(), queued)
    workers.report_not_started(Bar(), queued[:2])
    assert lines == [
        f"{len(queued)} queued run(s) not started: "
        + ", ".join(f"cell{i}/s0" for i in range(workers.NAMED_QUEUED))
        + " and 3 more (resuming the folder trains them)",
        "2 queued run(s) not started: cell0/s0, cell1/s0 (resuming the folder trains them)",
    ]
