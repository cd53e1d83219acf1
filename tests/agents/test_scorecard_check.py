"""The regression check of a suite run against a committed scorecard (`--check SUMMARY`,
membench_agents.analysis.check): the verdicts and the exit status through `membench report DIR --scorecard
--check` on a synthetic finished suite-run folder (no training), the budget check before anything trains, and a
summary that is not a scorecard as one error line."""

from __future__ import annotations

import json

import pytest
import yaml
from membench_agents.analysis import check
from membench_agents.analysis import scorecard as sc
from membench_agents.errors import ConfigError

from membench_agents import cli
from tests.agents.test_scorecard import REPEAT_FIRST, REPEAT_PREV, TMAZE, _res

ROW = "ppo-lstm (partial)"


def _folder(tmp_path, results, name="run"):
    """A finished suite-run folder, by hand: bench.yaml, scorecard.yaml and each cell's results.json."""
    d = tmp_path / name
    d.mkdir()
    labels = [f"{r['env'].replace('/', '__')}__{r['agent']}" for r in results]
    (d / "bench.yaml").write_text(yaml.safe_dump({"cells": labels, "title": None, "expect": {}}))
    meta = {
        "selection": {"suite": None, "ids": ["X"], "memory_type": None},
        "agents": sorted({r["agent"] for r in results}),
        "obs_variant": "partial",
        "references": [],
        "skipped": [],
        "cells": {
            lab: {"env": r["env"], "agent": r["agent"], "sources": []} for lab, r in zip(labels, results, strict=True)
        },
    }
    (d / "scorecard.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    for lab, r in zip(labels, results, strict=True):
        (d / lab).mkdir()
        full = {**r, "seeds": r["config"]["seeds"], "mean": 0.0, "sem": 0.0, "n_runs": len(r["per_run"])}
        (d / lab / "results.json").write_text(json.dumps({**full, "runs": [], "protocol": {}}))
    return d


def _summary(tmp_path, results):
    """A committed scorecard.json, written by the module's own writer."""
    file = tmp_path / "committed.json"
    file.write_text(json.dumps(sc.compute(results, reps=200).data))
    return file


def _report(capsys, folder, summary):
    code = cli.main(["report", str(folder), "--scorecard", "--reps", "200", "--check", str(summary)])
    return code, capsys.readouterr()


def test_the_verdicts_and_the_exit_status_through_report_scorecard_check(tmp_path, capsys):
    committed = [
        _res(TMAZE, per_run=(0.4, 0.6, 0.8)),  # interval about [0.4, 0.8]
        _res(REPEAT_FIRST, per_run=(0.5, 0.6, 0.7)),
        _res(REPEAT_PREV, per_run=(0.1, 0.2, 0.3)),  # not in the new run: missing
    ]
    summary = _summary(tmp_path, committed)
    lo, hi = (json.loads(summary.read_text())["tasks"][0]["raw"][k] for k in ("lo", "hi"))
    new = [
        _res(TMAZE, per_run=(0.5, 0.6, 0.7)),  # mean 0.6: inside
        _res(REPEAT_FIRST, per_run=(0.5, 0.6, 0.7)),  # the committed numbers again: inside
        _res(TMAZE, agent="ppo-mlp", per_run=(0.1, 0.2, 0.3)),  # a row the summary lacks: new
    ]
    code, out = _report(capsys, _folder(tmp_path, new), summary)
    assert code == 0, out.err
    folder = tmp_path / "run"
    data = json.loads((folder / check.CHECK).read_text())
    verdicts = {(t["task"], t["row"]): t["verdict"] for t in data["tasks"]}
    assert verdicts == {
        (TMAZE, ROW): "inside",
        (REPEAT_FIRST, ROW): "inside",
        (REPEAT_PREV, ROW): "missing",
        (TMAZE, "ppo-mlp (partial)"): "new",
    }
    t = data["tasks"][0]
    assert t["new"] == pytest.approx(0.6) and t["committed"]["lo"] == lo and t["committed"]["hi"] == hi
    assert data["counts"] == {"inside": 2, "outside": 0, "missing": 1, "new": 1} and data["passed"]
    md = (folder / check.CHECK_MD).read_text()
    assert "committed mean [95% CI]" in md and "2 inside, 0 outside, 1 missing, 1 new: passed" in md
    assert md.strip() in out.out  # the table is printed too

    # one task below its committed interval fails the check: exit status 1, the side named
    code, out = _report(capsys, _folder(tmp_path, [_res(TMAZE, per_run=(0.0, 0.1, 0.2))], "worse"), summary)
    assert code == 1, out.err
    data = json.loads((tmp_path / "worse" / check.CHECK).read_text())
    assert data["tasks"][0]["verdict"] == "outside" and data["tasks"][0]["side"] == "below"
    assert not data["passed"] and "FAILED (1 outside the committed interval)" in out.out


def test_a_summary_at_another_budget_is_refused_naming_the_key(tmp_path, capsys):
    summary = _summary(tmp_path, [_res(TMAZE, steps=1000)])
    code, out = _report(capsys, _folder(tmp_path, [_res(TMAZE, steps=2000)]), summary)
    assert code == 2
    (line,) = out.err.splitlines()
    assert line.startswith(f"membench: error: --check {summary}: {TMAZE} ({ROW}) was committed at total_steps=1000")
    assert "the new run has total_steps=2000: comparing different budgets is meaningless" in line
    assert not (tmp_path / "run" / check.CHECK).exists()
    # the evaluation protocol is part of the budget
    eval_ = {"episodes": 50, "seed_start": 0, "deterministic": True, "num_envs": 10}
    with pytest.raises(ConfigError, match=r"eval\.episodes=100, the new run has eval\.episodes=50"):
        check.compare(sc.compute([_res(TMAZE, eval=eval_)], reps=50).data, json.loads(summary.read_text()))
    # before anything trains: the planned cells' configs against the summary
    with pytest.raises(ConfigError, match=r"committed at seeds=\[0, 1\], the new run has seeds=\[5, 6\]"):
        check.preflight([_res(TMAZE, steps=1000, seeds=[5, 6])["config"]], json.loads(summary.read_text()))
    check.preflight([_res(TMAZE, steps=1000)["config"]], json.loads(summary.read_text()))  # the same budget
    # through the command: `bench --suite ... --check` refuses before it writes or trains anything
    mlp = _summary(tmp_path, [_res(TMAZE, agent="ppo-mlp", steps=1000)])
    code = cli.main(
        ["bench", "--ids", TMAZE, "--agent", "ppo-mlp", "--steps", "2000", "--dry-run", "--check", str(mlp)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "ppo-mlp (partial)) was committed at total_steps=1000, the new run has total_steps=2000" in err


@pytest.mark.parametrize(
    "text",
    [
        "not json {",
        "[1, 2]",
        json.dumps({"scorecard": "membench suite scorecard", "format": 1, "tasks": [{"task": "A", "row": "r"}]}),
        "\udcff",  # not UTF-8 once written with surrogateescape
    ],
)
def test_a_summary_that_is_not_a_scorecard_is_one_error_line(tmp_path, capsys, text):
    bad = tmp_path / "bad.json"
    bad.write_bytes(text.encode("utf-8", "surrogateescape"))
    code = cli.main(["bench", "--ids", TMAZE, "--dry-run", "--check", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (
        f"membench: error: --check {bad} is not a scorecard.json of `membench bench --suite` (JSON with its format 1 "
        "and a list of tasks, each with task, row, metric, total_steps, seeds and the raw mean's value, lo and hi)"
    )
