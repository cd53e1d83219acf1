"""Suite runs and their scorecards (`membench bench --suite`, membench_agents.runs.suite and
membench_agents.analysis.scorecard): the normalisation's precedence, raw tasks left out with a note, no pooling
across budgets, the breakdowns; the command end to end at a tiny budget, its rebuild and resume, a stop with runs
queued; and the errors."""

from __future__ import annotations

import json
import shlex
import signal

import numpy as np
import pytest
from membench_agents.analysis import aggregate
from membench_agents.analysis import scorecard as sc
from membench_agents.errors import ConfigError
from membench_agents.runs import loop, suite

from membench_agents import cli
from tests.agents._runs_helpers import LONG_TRAINING_SETS, membench, one_error_line
from tests.agents.test_stops import _start, _stop

TMAZE = "MIKASA/TMazeClassic-v0"  # success rate
RETURN_TASK = "MIKASA/TMazeClassicDense-v0"  # a native task, given a return in these synthetic results
REPEAT_PREV = "POPGym/RepeatPreviousEasy-v0"  # memory types sequential and object; suites POPGym and MIKASA-Base
REPEAT_FIRST = "POPGym/RepeatFirstEasy-v0"  # memory type object


def _res(env, agent="ppo-lstm", per_run=(0.5, 0.7), metric="success_rate", steps=1000, seeds=None, **cfg):
    seeds = list(range(len(per_run))) if seeds is None else seeds
    config = {
        "env": env,
        "agent": agent,
        "obs_variant": "partial",
        "env_kwargs": {},
        "total_steps": steps,
        "seeds": seeds,
        "eval": {"episodes": 100, "seed_start": 0, "deterministic": True, "num_envs": 10},
        "ppo": {"learning_rate": 3e-4},
        **cfg,
    }
    return {
        "env": env,
        "env_kwargs": {},
        "agent": agent,
        "obs_variant": "partial",
        "metric": metric,
        "per_run": list(per_run),
        "config": config,
    }


def _certificate(tmp_path, name, env, floor, ceiling, metric="success_rate", tolerance=0.05, gap=None):
    """A certificate's JSON in ``tmp_path/name``; ``gap``: its interval (default: the gap itself, no spread)."""
    d = tmp_path / name
    d.mkdir()
    lo, hi = (ceiling - floor,) * 2 if gap is None else gap
    cert = {
        "env": env,
        "env_kwargs": {},
        "metric": metric,
        "total_steps": 400_000,
        "floor": {"value": floor, "lo": floor, "hi": floor},
        "ceiling": {"value": ceiling, "lo": ceiling, "hi": ceiling},
        "gap": {"value": ceiling - floor, "lo": lo, "hi": hi},
        "rule": {"tolerance": tolerance},
    }
    (d / "certificate.json").write_text(json.dumps(cert))
    return d


def _task(card, task, row="ppo-lstm (partial)"):
    (t,) = [t for t in card.data["tasks"] if t["task"] == task and t["row"] == row]
    return t


# ------------------------------------------------------------------------------------------------------
# the statistics and the normalisation
# ------------------------------------------------------------------------------------------------------
def test_the_normalisation_precedence_and_raw_tasks_left_out_with_a_note(tmp_path):
    refs = sc.load_references([_certificate(tmp_path, "c", TMAZE, floor=0.5, ceiling=1.0)])
    results = [
        _res(TMAZE, per_run=[0.75, 1.0]),  # (a) the certificate wins over the success rate's 0..1
        _res(REPEAT_FIRST, per_run=[0.2, 0.8], metric="success_rate"),  # (b) a success rate: 0..1
        _res(REPEAT_PREV, per_run=[-0.5, 0.5], metric="return"),  # (b) a POPGym return: -1..1
        _res(RETURN_TASK, per_run=[3.0, 5.0], metric="return"),  # (c) raw
    ]
    card = sc.compute(results, refs, reps=200)
    a, b, p, raw = (_task(card, t) for t in (TMAZE, REPEAT_FIRST, REPEAT_PREV, RETURN_TASK))
    assert a["normalised_per_run"] == pytest.approx([0.5, 1.0]) and a["normalisation"]["source"].startswith(
        f"certificate {tmp_path / 'c'}"
    )
    assert b["normalised_per_run"] == pytest.approx([0.2, 0.8]) and b["normalisation"]["source"].startswith("success")
    assert p["normalised_per_run"] == pytest.approx([0.25, 0.75]) and p["normalisation"]["source"].startswith("POPGym")
    assert raw["normalisation"] is None and raw["normalised"] is None and raw["raw"]["value"] == pytest.approx(4.0)
    assert card.data["raw_tasks"] == [RETURN_TASK]
    assert any(n.startswith("raw, left out of the cross-task aggregates") and RETURN_TASK in n for n in card.notes)
    (row,) = card.aggregate.algorithms
    assert set(row.tasks) == {TMAZE, REPEAT_FIRST, REPEAT_PREV}  # the raw task is in no aggregate
    # the aggregate is aggregate.py's on the normalised scores
    scores = [row.tasks[t] for t in (TMAZE, REPEAT_FIRST, REPEAT_PREV)]
    assert row.iqm == aggregate.estimate(scores, aggregate.iqm, 200, 0.95, 0)
    assert row.mean.value == pytest.approx(np.mean([0.5, 1.0, 0.2, 0.8, 0.25, 0.75]))
    # the table names every task's source
    md = sc.markdown(card)
    assert "raw (not normalised)" in md and "POPGym normalised return" in md and "certificate" in md


def test_a_certificate_that_cannot_normalise_is_not_used_and_said_so(tmp_path):
    refs = sc.load_references(
        [
            _certificate(tmp_path, "flat", TMAZE, floor=0.9, ceiling=0.94),  # a gap within the tolerance
            _certificate(tmp_path, "other", REPEAT_PREV, floor=-0.5, ceiling=0.5, metric="success_rate"),
            _certificate(tmp_path, "unused", REPEAT_FIRST, floor=0.0, ceiling=0.5),
        ]
    )
    card = sc.compute([_res(TMAZE), _res(REPEAT_PREV, per_run=[0.0, 0.5], metric="return")], refs, reps=50)
    assert _task(card, TMAZE)["normalisation"]["source"].startswith("success rate")
    assert _task(card, REPEAT_PREV)["normalisation"]["source"].startswith("POPGym")
    notes = "\n".join(card.notes)
    assert (
        "gap, ceiling (0.940) - floor (0.900) in [0.040, 0.040], is not improvable at this budget (tolerance 0.05)"
        in notes
    )
    assert "reports success_rate, the cells return: not used" in notes
    assert f"unused: not used for {REPEAT_FIRST}, which this scorecard does not score" in notes
    # a suite's table of certificates, most of whose tasks this scorecard does not score: one note for the file
    table = {
        f"POPGym/{g}Easy-v0": sc.Reference(f"POPGym/{g}Easy-v0", "return", 0, 1, "t.json", 1000, 1, 1) for g in "ABCD"
    }
    notes = sc.compute([_res(TMAZE)], table, reps=50).notes
    assert [n for n in notes if "t.json" in n] == [
        "reference t.json: not used for 4 other tasks (POPGym/AEasy-v0, ...), which this scorecard does not score"
    ]


def test_references_that_are_not_certificates_or_twice_one_task_are_errors(tmp_path):
    odd = _certificate(tmp_path, "odd-rule", TMAZE, floor=0.0, ceiling=1.0)
    cert = json.loads((odd / "certificate.json").read_text())
    (odd / "certificate.json").write_text(json.dumps({**cert, "rule": "tolerance 0.05"}))
    with pytest.raises(ConfigError, match="is not a certificate"):
        sc.load_references([odd])
    with pytest.raises(ConfigError, match=r"no certificate\.json there"):
        sc.load_references([tmp_path])
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="is not a certificate"):
        sc.load_references([bad])
    one, two = (_certificate(tmp_path, n, TMAZE, 0.0, 1.0) for n in ("one", "two"))
    with pytest.raises(ConfigError, match=f"two reference certificates of {TMAZE}"):
        sc.load_references([one, two])


def test_cells_of_one_agent_at_different_budgets_are_never_pooled():
    results = [
        _res(TMAZE, steps=1000),
        _res(REPEAT_FIRST, steps=1000),
        _res(REPEAT_PREV, steps=5000),
        _res(TMAZE, agent="ppo-mlp", seeds=[0, 1]),
        _res(REPEAT_FIRST, agent="ppo-mlp", seeds=[3, 4]),
    ]
    card = sc.compute(results, reps=50)
    names = sorted(a.name for a in card.aggregate.algorithms)
    assert names == [
        "ppo-lstm (partial) [steps=1k]",
        "ppo-lstm (partial) [steps=5k]",
        "ppo-mlp (partial) [seeds=[0, 1]]",
        "ppo-mlp (partial) [seeds=[3, 4]]",
    ]
    by = {a.name: set(a.tasks) for a in card.aggregate.algorithms}
    assert by["ppo-lstm (partial) [steps=1k]"] == {TMAZE, REPEAT_FIRST}
    notes = "\n".join(card.notes)
    assert (
        "ppo-lstm (partial): its cells differ in budget or protocol (total_steps): separate rows, never pooled" in notes
    )
    assert "ppo-mlp (partial): its cells differ in budget or protocol (seeds)" in notes
    # the same budget, per-task hyperparameters (the resolution rule's): one row, and a note names the keys
    same = sc.compute([_res(TMAZE), _res(REPEAT_FIRST, ppo={"learning_rate": 1e-3})], reps=50)
    assert [a.name for a in same.aggregate.algorithms] == ["ppo-lstm (partial)"]
    assert any("per-task settings differ in ppo.learning_rate" in n for n in same.notes)


def test_the_breakdowns_count_a_task_of_several_memory_types_in_each():
    card = sc.compute([_res(REPEAT_PREV), _res(REPEAT_FIRST), _res(TMAZE)], reps=50)
    mt = card.data["breakdowns"]["memory_type"]
    assert set(mt) == {"object", "sequential"}
    assert mt["object"]["ppo-lstm (partial)"]["n_tasks"] == 3
    assert mt["sequential"]["ppo-lstm (partial)"]["tasks"] == [REPEAT_PREV]
    suites = card.data["breakdowns"]["suite"]
    assert suites["POPGym"]["ppo-lstm (partial)"]["n_tasks"] == 2
    assert suites["MIKASA-Base"]["ppo-lstm (partial)"]["n_tasks"] == 3  # the POPGym IDs are MIKASA-Base's too
    seq = mt["sequential"]["ppo-lstm (partial)"]["mean"]
    assert seq["value"] == pytest.approx(0.6)


# ------------------------------------------------------------------------------------------------------
# the selection
# ------------------------------------------------------------------------------------------------------
def test_the_selection_and_the_default_agents():
    assert suite.default_agents() == ["ppo-mlp", "ppo-lstm"]
    ids = [s.id for s in suite.select("MIKASA-Base", ["MIKASA/TMazeClassic*"])]
    assert ids == ["MIKASA/TMazeClassic-v0", "MIKASA/TMazeClassicDense-v0"]
    seq = [s.id for s in suite.select("POPGym", ["POPGym/Repeat*"], "sequential")]
    assert seq == ["POPGym/RepeatPreviousEasy-v0", "POPGym/RepeatPreviousMedium-v0", "POPGym/RepeatPreviousHard-v0"]
    assert suite.split_list(["ppo-mlp,ppo-lstm", "ppo-gru", "ppo-mlp"]) == ["ppo-mlp", "ppo-lstm", "ppo-gru"]


def test_every_extra_of_the_catalogue_can_be_checked():
    from membench_envs._deps import EXTRA_MODULES, installed

    from membench_envs import catalogue

    extras = {s.extra for s in catalogue.all_tasks()} - {None}
    assert extras <= set(EXTRA_MODULES)
    assert installed(None)


# ------------------------------------------------------------------------------------------------------
# the command
# ------------------------------------------------------------------------------------------------------
TINY = [
    "--steps", "256", "--seeds", "1", "--no-progress", "--jobs", "1",
    "--set", "ppo.num_envs=8", "--set", "ppo.num_steps=16", "--set", "ppo.hidden_size=16",
    "--set", "ppo.num_minibatches=2", "--set", "eval.episodes=10", "--set", "eval.every_steps=0",
]  # fmt: skip
SUITE = ["--suite", "MIKASA-Base", "--ids", "MIKASA/TMazeClassic*"]


def test_a_suite_run_end_to_end_writes_the_scorecard_rebuilds_and_resumes(tmp_path):
    out = membench("bench", *SUITE, "--out", str(tmp_path), *TINY)
    assert out.returncode == 0, out.stderr
    folder = next((tmp_path / "scorecard").iterdir())
    cells = [f"MIKASA__{t}__{a}" for t in ("TMazeClassic-v0", "TMazeClassicDense-v0") for a in ("ppo-mlp", "ppo-lstm")]
    assert {p.name for p in folder.iterdir()} == {
        *cells,
        "bench.yaml",
        "scorecard.yaml",
        sc.SCORECARD,
        sc.MARKDOWN,
        sc.PLOT,
    }
    data = json.loads((folder / sc.SCORECARD).read_text())
    assert [r["name"] for r in data["rows"]] == ["ppo-mlp (partial)", "ppo-lstm (partial)"]
    assert all(r["n_tasks"] == 2 and r["n_runs"] == 2 for r in data["rows"])
    assert {(t["task"], t["cell"]) for t in data["tasks"]} == {(f"MIKASA/{c.split('__')[1]}", c) for c in cells}
    assert all(t["total_steps"] == 256 and t["seeds"] == [0] for t in data["tasks"])
    assert data["command"].startswith("membench bench --suite MIKASA-Base --ids 'MIKASA/TMazeClassic*' --agent")
    assert "## Per task" in out.stdout and "## By memory type" in out.stdout
    assert (folder / sc.PLOT).stat().st_size > 10_000
    # the command it records selects the same cells
    args = cli.build_parser().parse_args(shlex.split(data["command"])[1:])
    again = suite.plan(
        suite.select(args.suite, suite.split_list([args.ids]), args.memory_type), suite.split_list(args.agent),
        variant=args.obs_variant, steps=args.steps, seeds=args.seeds, overrides=args.set,
    )  # fmt: skip
    assert [r.config for r in again.cells] == [
        json.loads((folder / c / "results.json").read_text())["config"] for c in (t["cell"] for t in data["tasks"])
    ]

    # report --scorecard rebuilds it from the folder
    table = (folder / sc.MARKDOWN).read_text()
    (folder / sc.MARKDOWN).unlink()
    out = membench("report", str(folder), "--scorecard")
    assert out.returncode == 0, out.stderr
    assert (folder / sc.MARKDOWN).read_text() == table

    # --resume finishes what is missing and writes the scorecard again
    (folder / cells[1] / "seed_0" / "eval.json").unlink()
    for f in (f"{cells[1]}/results.json", sc.SCORECARD, sc.MARKDOWN):
        (folder / f).unlink()
    out = membench("bench", "--resume", str(folder), "--no-progress", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert f"resuming {folder}" in out.stderr and (folder / sc.SCORECARD).is_file()
    assert json.loads((folder / sc.SCORECARD).read_text())["rows"][0] == data["rows"][0]


def test_a_stop_with_runs_queued_ends_with_checkpoints_saved(tmp_path):
    """4 runs on 2 workers: the queued runs never start, the running ones checkpoint, the command exits 130 with
    the resume command, and the folder resumes from the checkpoints."""
    args = ["bench", *SUITE, "--seeds", "0-0", "--jobs", "2", "--steps", str(2000 * 8 * 16)]
    proc = _start([*args, *LONG_TRAINING_SETS, "--out", str(tmp_path)])
    seconds, err = _stop(proc, tmp_path, signal.SIGTERM)
    assert proc.returncode == 130, err
    assert seconds < 60 and "2 queued run(s) not started" in err and "SIGTERM: no queued run starts" in err
    folder = next((tmp_path / "scorecard").iterdir())
    assert f"membench bench --resume {folder}" in err
    b, meta = suite.resume(folder)
    kinds = sorted(loop.resume_point(cfg, 0, d / "seed_0")[0] for cfg, d in zip(b.configs, b.cell_dirs, strict=True))
    assert kinds == ["checkpoint", "checkpoint", "fresh", "fresh"]
    assert meta["selection"] == {"suite": "MIKASA-Base", "ids": ["MIKASA/TMazeClassic*"], "memory_type": None}
    assert not (folder / sc.SCORECARD).exists()


def _error(*args):
    return one_error_line(membench("bench", *args))


def test_suite_run_errors_are_one_line(tmp_path, capsys, monkeypatch):
    assert "unknown suite 'Nope'; valid: MEM, MIKASA-Base" in _error("--suite", "Nope")
    assert "--ids pattern(s) 'X*' match no ID of suite POPGym" in _error("--suite", "POPGym", "--ids", "X*,P*")
    assert "unknown memory type 'colour'" in _error("--memory-type", "colour")
    assert "--env cannot be combined with --suite" in _error("--suite", "POPGym", "--env", TMAZE)
    assert "--dry-run belong to a suite run" in _error("--dry-run")
    assert "--agent takes one agent outside a suite run" in _error("--agent", "ppo-mlp,ppo-lstm")
    assert "--suite cannot be combined with --resume" in _error("--resume", str(tmp_path), "--suite", "POPGym")
    # a missing extra: every such ID named, nothing written; --skip-missing names what it skips
    import membench_envs._deps as deps

    monkeypatch.setattr(deps, "installed", lambda extra: extra != "popgym")
    line = _error("--ids", "POPGym/RepeatFirst*,MIKASA/TMazeClassic-v0", "--out", str(tmp_path))
    assert line == (
        "membench: error: 3 ID(s) need an extra that is not installed: POPGym/RepeatFirstEasy-v0, "
        "POPGym/RepeatFirstMedium-v0, POPGym/RepeatFirstHard-v0 (pip install 'membench-envs[popgym]'); install "
        "them, or pass --skip-missing to leave those IDs out"
    )
    code = cli.main(["bench", "--ids", "POPGym/RepeatFirst*,MIKASA/TMazeClassic-v0", "--skip-missing", "--dry-run"])
    err = capsys.readouterr().err
    assert code == 0 and "skipped (--skip-missing): 3 ID(s)" in err and "POPGym/RepeatFirstEasy-v0" in err
    assert "2 cells" in err and "dry run: every cell's agent takes its environment; nothing trained" in err
    assert not any(tmp_path.glob("**/scorecard"))


def test_a_dry_run_makes_the_checks_of_the_real_run(tmp_path):
    """An agent that cannot take a task's spaces is the same one error line in the dry run as in the real run,
    before anything is written."""
    args = ("--ids", "POPGym/PositionOnlyPendulumEasy-v0", "--agent", "ppo-mlp,dtqn", "--out", str(tmp_path))
    for dry in (("--dry-run",), ()):
        line = _error(*args, *dry)
        assert "agent 'dtqn' cannot handle POPGym/PositionOnlyPendulumEasy-v0: DTQN needs a Discrete action" in line
    assert not any(tmp_path.iterdir())
