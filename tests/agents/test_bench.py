"""What a bench trains and how its folder reads back (membench_agents.runs.bench), without training: the CLI
end to end is in test_cli.py."""

from __future__ import annotations

import pytest
import yaml
from membench_agents.errors import ConfigError
from membench_agents.runs import bench
from membench_agents.runs.folder import RunFolderError

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


def test_cells_on_several_tasks_are_named_by_their_task_too():
    cfgs = [
        {"env": "MIKASA/TMazePassive-v0", "env_kwargs": {}, "agent": "ppo-mlp", "obs_variant": "partial"},
        {"env": "POPGym/RepeatPreviousEasy-v0", "env_kwargs": {}, "agent": "ppo-mlp", "obs_variant": "partial"},
    ]
    assert bench.labels(cfgs[:1]) == ["ppo-mlp"]
    assert bench.labels(cfgs) == ["MIKASA__TMazePassive-v0__ppo-mlp", "POPGym__RepeatPreviousEasy-v0__ppo-mlp"]
    with pytest.raises(ConfigError, match=r"two bench cells share a label: \['ppo-mlp', 'ppo-mlp'\]"):
        bench.labels([cfgs[0], cfgs[0]])


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
