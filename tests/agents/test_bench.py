"""What a bench trains and how its folder reads back (membench_agents.runs.bench), without training: the CLI
end to end is in test_cli.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from membench_agents.errors import ConfigError
from membench_agents.runs import bench
from membench_agents.runs.folder import RunFolderError

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "bench"
LADDER_ENV = "MIKASA/TMazePassiveDense-v0"
LADDER_CELLS = [("ppo-mlp", "partial"), ("ppo-lstm", "partial"), ("ppo-mlp", "oracle")]


def _cells(plan: bench.Plan) -> list[tuple[str, str, str]]:
    return [(c["env"], c["agent"], c["obs_variant"]) for c in plan.configs]


def test_the_four_forms_of_a_bench():
    ladder = bench.plan(steps=1000)
    assert _cells(ladder) == [(LADDER_ENV, a, v) for a, v in LADDER_CELLS]
    assert ladder.jobs == 2 and set(ladder.expect) == {"ppo-mlp", "ppo-lstm", "ppo-mlp.oracle"} and ladder.title
    assert all(c["total_steps"] == 1000 for c in ladder.configs)
    other = bench.plan("POPGym/RepeatPreviousEasy-v0")  # the ladder's cells on another ID, with no expectations
    assert _cells(other) == [("POPGym/RepeatPreviousEasy-v0", a, v) for a, v in LADDER_CELLS]
    assert other.expect == {} and other.title == "memory ladder on POPGym/RepeatPreviousEasy-v0"
    assert _cells(bench.plan(agent="ppo-gru")) == [(LADDER_ENV, "ppo-gru", "partial")]  # one cell on the ladder's ID
    # env and agent: one cell, the spec is not read
    assert _cells(bench.plan("MIKASA/TMazePassive-v0", "ppo-mlp", "no-such-spec.yaml")) == [
        ("MIKASA/TMazePassive-v0", "ppo-mlp", "partial")
    ]


def test_a_spec_s_set_applies_to_every_cell_then_the_cell_s_own_then_the_command_line(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"env: {LADDER_ENV}\n"
        "set: [ppo.num_envs=4, ppo.learning_rate=0.1, total_steps=5000]\n"
        "cells:\n"
        "  - {agent: ppo-mlp, set: [ppo.learning_rate=0.2]}\n"
        "  - {agent: ppo-gru, obs_variant: oracle}\n"
    )
    a, b = bench.plan(spec=spec).configs
    assert (a["ppo"]["num_envs"], a["ppo"]["learning_rate"], a["total_steps"]) == (4, 0.2, 5000)
    assert (b["ppo"]["num_envs"], b["ppo"]["learning_rate"], b["obs_variant"]) == (4, 0.1, "oracle")
    assert [c["total_steps"] for c in bench.plan(spec=spec, steps=700).configs] == [700, 700]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("env: E\n", r"'cells' must be a non-empty list of cells, got None"),
        ("cells: [{obs_variant: oracle}]\n", r"cells\[0\]: 'agent' must name an agent, got None"),
        ("cells: [3]\n", r"cells\[0\] must be a cell config file \(a path\) or a mapping with 'agent', got 3"),
        ("cells: [{agent: ppo-mlp, steps: 3}]\n", r"cells\[0\]: unknown key 'steps'; valid: agent, "),
        ("cell: [a.yaml]\n", r"unknown key 'cell'; valid: title, "),
        ("set: ppo.num_envs=4\ncells: [a.yaml]\n", r"'set' must be a list of 'key=value' overrides"),
        ("cells: [{agent: ppo-mlp, set: [lr]}]\n", r"cells\[0\]: 'set' must be a list of 'key=value'"),
        ("jobs: -1\ncells: [a.yaml]\n", r"'jobs' must be an int >= 0, got -1"),
    ],
)
def test_a_bad_bench_spec_is_one_error_naming_the_key(tmp_path, text, message):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    with pytest.raises(ConfigError, match=f"bench spec {spec}: " + message):
        bench.load_spec(spec)


def test_cells_on_several_tasks_are_named_by_their_task_too():
    cfgs = [
        {"env": "MIKASA/TMazePassive-v0", "env_kwargs": {}, "agent": "ppo-mlp", "obs_variant": "partial"},
        {"env": "POPGym/RepeatPreviousEasy-v0", "env_kwargs": {}, "agent": "ppo-mlp", "obs_variant": "partial"},
    ]
    assert bench.labels(cfgs[:1]) == ["ppo-mlp"]
    assert bench.labels(cfgs) == ["MIKASA__TMazePassive-v0__ppo-mlp", "POPGym__RepeatPreviousEasy-v0__ppo-mlp"]
    with pytest.raises(ConfigError, match=r"two bench cells share a label: \['ppo-mlp', 'ppo-mlp'\]"):
        bench.labels([cfgs[0], cfgs[0]])


def test_the_check_makes_each_environment_once_and_checks_every_cell(monkeypatch):
    """The ladder's three cells are on two environments (partial, oracle): two makes, three agent checks."""
    import gymnasium as gym
    from membench_agents.algos import ppo

    made, checked = [], []
    real_make = gym.make
    monkeypatch.setattr(gym, "make", lambda env_id, **kw: made.append(kw["obs_variant"]) or real_make(env_id, **kw))
    monkeypatch.setattr(ppo.PPOTrainer, "check", classmethod(lambda cls, cfg, *s: checked.append(cfg["agent"])))
    assert bench.check(bench.plan(steps=1000)) == ["ppo-mlp", "ppo-lstm", "ppo-mlp.oracle"]
    assert sorted(made) == ["oracle", "partial"] and checked == ["ppo-mlp", "ppo-lstm", "ppo-mlp"]


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (None, "is not a membench bench folder"),
        ("cells: [a, a]\n", "lists a cell twice"),
        ("cells: []\n", "is not a bench file"),
        ("- a\n", "is not a bench file"),
        ("cells: [a]\ntitle: 3\n", "title must be a string, got 3"),
        ("cells: [a]\nexpect: {a: [0, true]}\n", r"expect must map cell labels to \[low, high\]"),
    ],
)
def test_a_bench_file_read_back_is_checked(tmp_path, meta, message):
    if meta is not None:
        (tmp_path / bench.BENCH_FILE).write_text(meta)
    with pytest.raises(RunFolderError, match=message):
        bench.read_meta(tmp_path)


def test_a_good_bench_file_reads_back(tmp_path):
    meta = {"cells": ["ppo-mlp", "ppo-lstm"], "title": None, "expect": {"ppo-mlp": [0.35, 0.65]}}
    (tmp_path / bench.BENCH_FILE).write_text(yaml.safe_dump(meta))
    assert bench.read_meta(tmp_path) == meta


@pytest.mark.parametrize("spec", sorted(SPECS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_bench_spec_in_experiments_resolves(spec):
    p = bench.plan(spec=spec, steps=1000)  # every cell resolves (agent, variant, overrides) like membench train
    assert p.title and len(bench.labels(p.configs)) == len(p.configs) >= 2
