"""Runs: the evaluation protocol and its aggregation, results.json provenance, bad input, determinism."""

from __future__ import annotations

import json
import math
import multiprocessing.forkserver
import subprocess

import numpy as np
import pytest
from membench_agents.algos.trainer import make_trainer, preflight
from membench_agents.config import env_facts
from membench_agents.config.resolve import resolve
from membench_agents.errors import ConfigError
from membench_agents.runs import cell, loop, stats, workers

from tests.agents._runs_helpers import (
    ROOT,
    TMAZE,
    assert_same_params,
    final_params,
    history,
    register_test_envs,
    tiny_config,
)


def _eval(returns, successes=None):
    return stats.normalize_eval({"returns": returns, "lengths": [3] * len(returns), "successes": successes})


def test_aggregate_is_mean_and_sem_over_per_run_means():
    per_run = [
        _eval([1, 0, 1, 1], [True, False, True, True]),  # 0.75
        _eval([0, 0, 1, 1], [False, False, True, True]),  # 0.5
        _eval([1, 1, 1, 1], [True] * 4),
    ]  # 1.0
    agg = stats.aggregate(per_run)
    assert agg["metric"] == "success_rate" and agg["n_runs"] == 3
    assert agg["per_run"] == [0.75, 0.5, 1.0]
    assert agg["mean"] == pytest.approx(0.75)
    # SEM over the 3 run means with ddof=1: std([.75, .5, 1], ddof=1) / sqrt(3) = 0.25 / sqrt(3)
    assert agg["sem"] == pytest.approx(0.25 / math.sqrt(3))
    # not the SEM over the 12 pooled episodes
    pooled = np.array([1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1], dtype=float)
    assert agg["sem"] != pytest.approx(pooled.std(ddof=1) / math.sqrt(12))


def test_return_is_the_metric_where_the_task_defines_no_success():
    per_run = [_eval([1.0, 3.0]), _eval([2.0, 2.0], None), _eval([5.0, 3.0], [None, None])]
    agg = stats.aggregate(per_run)
    assert agg["metric"] == "return" and agg["per_run"] == [2.0, 2.0, 4.0]
    assert agg["sem"] == pytest.approx(np.std([2, 2, 4], ddof=1) / math.sqrt(3))
    assert stats.aggregate([_eval([1.0])])["sem"] == 0.0  # one run: no spread to estimate


def test_a_task_scored_by_return_reports_its_return_although_it_defines_success():
    per_run = [_eval([4.0, -0.1], [True, False]), _eval([4.0, 4.0], [True, True])]
    assert stats.aggregate(per_run)["metric"] == "success_rate"
    agg = stats.aggregate(per_run, env_facts.env_score("POBAX/TMaze10-v0"))
    assert agg["metric"] == "return" and agg["per_run"] == [1.95, 4.0]
    assert stats.run_metric(per_run[0], "return") == ("return", 1.95)
    assert env_facts.env_score("MIKASA/TMazePassive-v0") is None and env_facts.env_score("CartPole-v1") is None


def test_each_run_in_results_has_the_aggregates_metric_whatever_its_eval_json_names(tmp_path):
    """A seed's eval.json keeps the metric of the catalogue when it finished; results.json scores every run by the
    task's score now, as its aggregate does (a catalogue change re-scores a folder without retraining)."""
    cfg = tiny_config("ppo-mlp", iterations=2, seeds=[0, 1])
    cell.train(cfg, tmp_path, workers=1, progress=False)
    path = cell.seed_dir(tmp_path, 1) / "eval.json"
    stale = json.loads(path.read_text())
    path.write_text(json.dumps({**stale, "metric": "return", "value": 99.0}))
    res = cell.finalize_run(tmp_path)
    assert res["metric"] == "success_rate"
    assert [(r["metric"], r["value"]) for r in res["runs"]] == [("success_rate", v) for v in res["per_run"]]
    assert res["runs"][1]["value"] == stale["eval"]["success_rate"]


def test_episode_seeds_are_the_fixed_protocol_list():
    cfg = tiny_config("ppo-mlp")
    assert stats.episode_seeds(cfg) == list(range(20))
    cfg = resolve(TMAZE, "ppo-mlp").config
    assert stats.episode_seeds(cfg) == list(range(100))  # default: 100 episodes, seeds 0..99


def test_train_writes_results_with_protocol_versions_and_commit(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=3, seeds=[0, 1])
    res = cell.train(cfg, tmp_path, workers=1, progress=False)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["mean"] == res["mean"] and on_disk["metric"] == "success_rate"
    p = on_disk["protocol"]
    assert p["n_runs"] == 2 and p["training_seeds"] == [0, 1] and p["episodes_per_run"] == 20
    assert p["episode_seeds"]["list"] == list(range(20)) and p["deterministic_actions"] is True
    assert "ddof=1" in p["aggregation"]
    for k in ("python", "torch", "gymnasium", "numpy", "membench_envs", "membench_agents"):
        assert on_disk["versions"][k], k
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert on_disk["git_commit"] == head and len(head) == 40
    # the per-run values are the per-seed eval.json means, and the aggregate is computed from them
    per_seed = [json.loads((tmp_path / f"seed_{s}" / "eval.json").read_text()) for s in (0, 1)]
    assert on_disk["per_run"] == [s["eval"]["success_rate"] for s in per_seed]
    assert on_disk["sem"] == pytest.approx(stats.sem(on_disk["per_run"]))
    assert all(len(s["eval"]["returns"]) == 20 for s in per_seed)
    assert not list(tmp_path.rglob(".membench.lock"))  # a finished folder keeps no lock file


def test_evaluation_during_training_does_not_change_training(tmp_path):
    base = tiny_config("ppo-lstm", iterations=4)
    with_eval = tiny_config("ppo-lstm", iterations=4, **{"eval.every_steps": 128})
    loop.train_seed(base, 0, tmp_path / "a")
    loop.train_seed(with_eval, 0, tmp_path / "b")
    assert_same_params(final_params(tmp_path / "a"), final_params(tmp_path / "b"))
    hb = history(tmp_path / "b")
    assert [r for r in hb if "eval" not in r] == history(tmp_path / "a")
    assert len([r for r in hb if "eval" in r]) == 5  # at step 0 and after each of the 4 iterations


@pytest.mark.slow
def test_parallel_workers_give_the_same_runs_as_one_process(tmp_path):
    """The default suite compares the worker processes of test_cli.py's `membench train --jobs 2` with the same
    runs trained in one process (test_worker_processes_give_the_same_runs_as_one_process)."""
    cfg = tiny_config("ppo-mlp", iterations=3, seeds=[0, 1])
    a = cell.train(cfg, tmp_path / "inline", workers=1, progress=False)
    b = cell.train(cfg, tmp_path / "parallel", workers=2, progress=False)
    assert a["per_run"] == b["per_run"]
    for s in (0, 1):
        assert_same_params(
            final_params(tmp_path / "inline" / f"seed_{s}"), final_params(tmp_path / "parallel" / f"seed_{s}")
        )


def test_agent_that_cannot_handle_the_action_space_says_which_and_why():
    register_test_envs()
    for agent in ("ppo-lstm", "sb3-ppo"):
        cfg = resolve("membench-test/TupleAction-v0", agent, steps=100).config
        with pytest.raises(ConfigError) as e:
            preflight(cfg)
        msg = str(e.value)
        assert agent in msg and "action space" in msg and "Tuple" in msg
        assert "Discrete" in msg and "Box" in msg, msg  # why: what it does support


def test_sb3_cannot_take_nested_dict_observations_but_membench_ppo_can():
    register_test_envs()
    cfg = resolve("membench-test/NestedDictObs-v0", "sb3-recurrentppo", steps=100).config
    with pytest.raises(ConfigError, match=r"'sb3-recurrentppo' cannot handle the observation space.*nested.*agent"):
        preflight(cfg)
    preflight(resolve("membench-test/NestedDictObs-v0", "ppo-gru", steps=100).config)


def test_unknown_hyperparameter_is_one_error_with_close_matches(tmp_path):
    # the config loader rejects them (before any run folder exists)
    with pytest.raises(ConfigError, match=r"unknown key 'ppo.learning_rte'.*Did you mean learning_rate"):
        tiny_config("ppo-mlp", **{"ppo.learning_rte": 0.1})
    with pytest.raises(ConfigError, match="set by the run"):
        tiny_config("ppo-mlp", **{"ppo.core": "gru"})


def test_batched_writer_hands_scalars_over_in_order_on_time_flush_and_close(monkeypatch):
    """TensorBoard scalars wait in the batched writer until every_s seconds passed, a checkpoint flushes,
    or the run closes; none is lost or reordered."""

    class Fake:
        def __init__(self):
            self.got, self.closed = [], False

        def add_scalar(self, tag, value, step):
            self.got.append((tag, value, step))

        def close(self):
            self.closed = True

    clock = [100.0]
    monkeypatch.setattr(loop.time, "monotonic", lambda: clock[0])
    fake = Fake()
    w = loop._BatchedWriter(fake, every_s=2.0)
    w.add_scalar("a", 1.0, 1)
    w.add_scalar("b", 2.0, 1)
    assert fake.got == []
    clock[0] += 2.5
    w.add_scalar("a", 3.0, 2)  # the interval has passed: all three are handed over, in order
    assert fake.got == [("a", 1.0, 1), ("b", 2.0, 1), ("a", 3.0, 2)]
    w.add_scalar("c", 4.0, 3)
    w.flush()
    assert fake.got[-1] == ("c", 4.0, 3) and not w.pending
    w.add_scalar("d", 5.0, 4)
    w.close()
    assert fake.got[-1] == ("d", 5.0, 4) and fake.closed


def test_ppo_and_sb3_trainers_implement_the_trainer_protocol():
    from membench_agents.algos.ppo import PPOTrainer
    from membench_agents.algos.trainer import Trainer

    ppo = make_trainer(tiny_config("ppo-mlp"), 0)
    assert isinstance(ppo, PPOTrainer) and isinstance(ppo, Trainer)
    assert ppo.envs is ppo.algo.envs  # checkpoints restore the env the algorithm steps
    ppo.close()
    pytest.importorskip("sb3_contrib")
    sb3 = make_trainer(tiny_config("sb3-recurrentppo"), 0)
    assert isinstance(sb3, Trainer) and sb3.envs is sb3.venv
    sb3.close()
    assert not isinstance(object(), Trainer)


def test_an_algorithms_own_scalars_are_logged_beside_the_shared_losses():
    from membench_agents.runs.loop import _algo_scalars

    metrics = {
        "alpha": 0.2,
        "epsilon": np.float32(0.5),
        "gradient_steps": 7,
        "policy_loss": 1.0,
        "sps": 900.0,
        "time_update": 0.1,
        "global_step": 64,
        "learning_rate": 3e-4,
        "episodes": [(1.0, 3, True)],
        "converged": True,
        "q_mean": float("nan"),
        "note": "text",
    }
    assert _algo_scalars(metrics) == {"alpha": 0.2, "epsilon": 0.5, "gradient_steps": 7.0}


def test_without_the_bar_progress_is_one_plain_line_per_evaluation_and_per_interval(capsys, monkeypatch):
    from membench_agents.runs import workers as jobs

    job = workers.Job("ppo-lstm/s0", {"total_steps": 1000, "agent": "ppo-lstm"}, 0, "unused")
    clock = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: clock[0])
    bar = jobs.Progress([job], enabled=False, every_s=30)
    msg = {"step": 100, "total": 1000, "sps": 1234.5, "ret": 0.5, "succ": 0.25, "eval": None}
    bar.update(job, msg)  # the first report of a run: a line
    clock[0] += 10
    bar.update(job, {**msg, "step": 200})  # 10 s later: nothing
    bar.update(job, {**msg, "step": 300, "eval": {"success_rate": 0.75, "mean_return": 0.1}})  # an evaluation
    clock[0] += 31
    bar.update(job, {**msg, "step": 400})  # the interval passed
    bar.finish(job)
    lines = capsys.readouterr().err.splitlines()
    head = "[ppo-lstm/s0] step {}/1,000 ({}%)  1,234 sps  return 0.5  success 0.25"
    assert lines == [
        head.format(100, 10),
        head.format(300, 30) + "  evaluation: success 0.75",
        head.format(400, 40),
        "[ppo-lstm/s0] finished at step 1,000",
    ]


def test_the_config_is_in_tensorboard_and_track_mirrors_every_scalar_to_wandb(tmp_path, monkeypatch):
    """In worker processes, which take the environment variables of the parent as they are when they start."""
    pytest.importorskip("wandb")
    from membench_agents.runs.tracking import Tracking, run_id
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    if workers._context().get_start_method() == "forkserver":  # the variables below are set after it started
        multiprocessing.forkserver.ensure_running()
    monkeypatch.setenv("WANDB_MODE", "offline")  # without it, W&B refuses to run without an account
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = tiny_config("ppo-mlp", iterations=2)
    cell.train(cfg, tmp_path, workers=2, progress=False, tracking=Tracking(project="membench-test"))  # 1 worker
    seed_dir = tmp_path / "seed_0"
    acc = EventAccumulator(str(seed_dir))
    acc.Reload()
    text = acc.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert '|env|"MIKASA/TMazePassive-v0"|' in text and "|ppo.num_envs|8|" in text
    # the offline W&B run of the seed (its id derives from the folder) holds the config and the same scalar tags
    (log,) = seed_dir.glob(f"wandb/offline-run-*-{run_id(seed_dir)}/run-{run_id(seed_dir)}.wandb")
    data = log.read_bytes()
    for tag in set(acc.Tags()["scalars"]):
        assert tag.encode() in data, tag
    assert b"TMazePassive" in data and b"num_envs" in data


@pytest.mark.parametrize(
    "agent,steps,notes",
    [
        (
            "ppo-gtrxl",
            10_000,
            [
                "ppo-gtrxl trains 8,192 steps, not the 10,000 asked: it runs whole iterations of 16 "
                "environments x 128 steps (2,048)"
            ],
        ),
        (
            "sb3-ppo",
            10_000,
            [
                "sb3-ppo trains 10,240 steps, not the 10,000 asked: it runs whole rollouts of 8 environments "
                "x 128 steps (1,024), rounded up"
            ],
        ),
        (
            "sac",
            5_000,
            [
                "the budget (5,000 steps) never reaches sac.learning_starts (5,000): it acts at random throughout "
                "and trains nothing; raise --steps or lower sac.learning_starts"
            ],
        ),
        ("sac", 5_001, []),
        ("ppo-mlp", 4096, []),
    ],
)
def test_a_rounded_budget_or_one_below_learning_starts_is_said_with_the_numbers(agent, steps, notes):
    from membench_agents.algos.trainer import budget_notes

    assert budget_notes(resolve(TMAZE, agent, steps=steps).config) == notes


@pytest.mark.parametrize("agent", ["ppo-mlp", "sb3-ppo", "sac", "dtqn"])
def test_the_budget_said_at_start_is_what_the_trainer_trains(agent):
    from membench_agents.algos.trainer import trainer_class

    sets = {
        "ppo-mlp": ["ppo.num_envs=4", "ppo.num_steps=24"],
        "sb3-ppo": ["sb3.n_envs=3", "sb3.n_steps=40"],
        "sac": ["sac.num_envs=3"],
        "dtqn": ["dtqn.num_envs=3", "dtqn.num_steps=7", "dtqn.buffer_size=3000"],
    }[agent]
    cfg = resolve(TMAZE, agent, steps=1000, overrides=sets).config
    trainer = make_trainer(cfg, 0)
    try:
        assert trainer.target_steps == trainer_class(agent).budget(cfg).trained != 1000
    finally:
        trainer.close()
