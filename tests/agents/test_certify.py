"""The memory-improvability certificate (membench_agents.analysis.certificate, `membench certify`): its statistics
and verdicts on constructed per-run values, against reference numbers computed independently; the cells it plans
and refuses; the command end to end at a tiny budget, its resume; and (slow) the verdicts on a task that needs
memory and on one that does not."""

from __future__ import annotations

import json
import signal

import numpy as np
import pytest
import yaml
from membench_agents.analysis import certificate as cert
from membench_agents.analysis.aggregate import Estimate
from membench_agents.errors import ConfigError
from membench_agents.runs import loop

from membench_agents import cli
from tests.agents._runs_helpers import LONG_TRAINING_SETS, ROOT, membench, one_error_line
from tests.agents.test_stops import _start, _stop

TMAZE = "MIKASA/TMazePassiveDense-v0"

# ------------------------------------------------------------------------------------------------------
# the statistics
# ------------------------------------------------------------------------------------------------------
FLOOR = [0.42, 0.55, 0.47, 0.51, 0.38]
MEMORY = [0.81, 0.93, 0.88, 0.97, 0.74]
CEILING = [0.99, 0.94, 1.0, 0.97, 0.92]
#: Computed once with rliable 1.2.0 (arch 7.2.0; `library.get_interval_estimates` on the 5 x 3 matrix of runs x
#: cells, 50000 resamples, 95 % percentile intervals; the gap and the share as functions of the resampled matrix):
RLIABLE = {
    "floor": (0.466, 0.414, 0.518),
    "memory": (0.866, 0.796, 0.936),
    "ceiling": (0.964, 0.938, 0.99),
    "gap": (0.498, 0.44, 0.558),
    "share": (0.8032128514056227, 0.6474, 0.9511),
}


def _direct_bootstrap(floor, memory, ceiling, reps=20000, seed=123):
    """An independent percentile bootstrap: each cell's runs drawn with replacement, one cell after another."""
    rng = np.random.default_rng(seed)
    f, m, c = (np.asarray(v)[rng.integers(0, len(v), (reps, len(v)))].mean(axis=1) for v in (floor, memory, ceiling))
    samples = {"floor": f, "memory": m, "ceiling": c, "gap": c - f, "share": (m - f) / (c - f)}
    return {k: tuple(np.percentile(v, [2.5, 97.5])) for k, v in samples.items()}


def test_the_statistics_match_rliable_and_a_direct_bootstrap():
    s = cert.certify(FLOOR, MEMORY, CEILING)
    got = {"floor": s.floor, "memory": s.memory, "ceiling": s.ceiling, "gap": s.gap, "share": s.share}
    direct = _direct_bootstrap(FLOOR, MEMORY, CEILING)
    for name, e in got.items():
        assert e is not None
        value, lo, hi = RLIABLE[name]
        assert e.value == pytest.approx(value, abs=1e-12), name  # the point estimates are exact
        assert (e.lo, e.hi) == pytest.approx((lo, hi), abs=0.01), name  # resampling noise only
        assert (e.lo, e.hi) == pytest.approx(direct[name], abs=0.01), name
    assert s.verdict == cert.IMPROVABLE
    assert cert.certify(FLOOR, MEMORY, CEILING) == s  # deterministic for the bootstrap seed


def test_the_cells_are_resampled_independently_even_with_different_run_counts():
    # one run in the floor: the gap's interval is the ceiling's shifted by the floor's one value
    s = cert.certify([0.5], [0.9, 0.8], [1.0, 0.8, 0.9, 0.7])
    assert s.gap.value == pytest.approx(0.85 - 0.5)
    assert (s.gap.lo, s.gap.hi) == pytest.approx((s.ceiling.lo - 0.5, s.ceiling.hi - 0.5))


@pytest.mark.parametrize(
    ("floor", "ceiling", "tolerance", "expected"),
    [
        ([0.45, 0.5, 0.55], [0.95, 1.0, 0.98], 0.05, cert.IMPROVABLE),  # the gap's interval lies above 0
        ([0.8, 0.85, 0.9], [0.5, 0.55, 0.6], 0.0, cert.NOT_IMPROVABLE),  # the ceiling below the floor
        ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 0.0, cert.NOT_IMPROVABLE),  # no gap at all (a task without memory)
        ([0.95, 1.0, 0.97], [0.93, 0.96, 0.99], 0.05, cert.NOT_IMPROVABLE),  # within the tolerance
        ([0.2, 0.5, 0.8], [0.3, 0.7, 0.9], 0.05, cert.UNDETERMINED),  # the intervals overlap
        ([0.5, 0.5, 0.5], [0.52, 0.53, 0.54], 0.05, cert.NOT_IMPROVABLE),  # above 0, but not beyond the tolerance
        ([0.5, 0.5, 0.5], [0.52, 0.53, 0.54], 0.0, cert.IMPROVABLE),  # ... which is improvable with no tolerance
    ],
)
def test_the_verdict_rules(floor, ceiling, tolerance, expected):
    s = cert.certify(floor, floor, ceiling, tolerance=tolerance)
    assert s.verdict == expected
    assert (s.share is None) == (s.gap.lo <= 0)  # the share is defined exactly when the gap's interval is above 0


def test_the_verdict_of_a_gap_at_its_bounds():
    assert cert.verdict(Estimate(0.1, 0.0, 0.2), 0.05) == cert.UNDETERMINED  # a lower bound of 0 is not above 0
    assert cert.verdict(Estimate(0.1, 0.001, 0.2), 0.05) == cert.IMPROVABLE
    assert cert.verdict(Estimate(0.0, -0.1, 0.05), 0.05) == cert.NOT_IMPROVABLE  # an upper bound at the tolerance
    assert cert.verdict(Estimate(0.0, -0.1, 0.0501), 0.05) == cert.UNDETERMINED


def test_the_share_of_the_gap_the_memory_agent_closes():
    floor, ceiling = [0.4, 0.5, 0.6], [0.9, 1.0, 0.95]
    assert cert.certify(floor, floor, ceiling).share.value == pytest.approx(0.0)
    assert cert.certify(floor, ceiling, ceiling).share.value == pytest.approx(1.0)
    half = cert.certify(floor, [0.7, 0.725, 0.75], ceiling).share
    assert half.value == pytest.approx(0.5) and half.lo < 0.5 < half.hi
    assert cert.certify(floor, [1.1, 1.2, 1.3], ceiling).share.value > 1  # a memory agent above the ceiling
    assert cert.certify([0.2, 0.5, 0.8], [0.9] * 3, [0.3, 0.7, 0.9]).share is None  # undetermined: undefined


def _table(env, metric, floor, memory, ceiling, deterministic=True):
    """A certificates table of one task, as write_table writes it (only what its Markdown and notes read)."""
    stats = cert.certify(floor, memory, ceiling)
    agents = {"floor": ("ppo-mlp", "partial"), "memory": ("ppo-lstm", "partial"), "ceiling": ("ppo-mlp", "oracle")}
    cells = {
        role: {"agent": agents[role][0], "obs_variant": agents[role][1], "per_run": runs}
        for role, runs in zip(cert.ROLES, (floor, memory, ceiling), strict=True)
    }
    task = {
        "env": env,
        "env_kwargs": {},
        "metric": metric,
        "total_steps": 1000,
        "seeds": [0, 1, 2],
        "protocol": {"deterministic_actions": deterministic},
        "cells": cells,
        **stats.to_dict(),
    }
    return {"tasks": [task], "statistics": {"confidence": 0.95, "reps": 2000}, "rule": {"tolerance": 0.05}}


@pytest.mark.parametrize(
    ("env", "metric", "runs", "deterministic", "noted"),
    [
        ("POBAX/Crafter-v0", "return", [0.71] * 3, True, True),  # one score, whatever the agent: noted
        (TMAZE, "success_rate", [0.35] * 3, True, True),
        (TMAZE, "success_rate", [0.0] * 3, True, False),  # all failing (an end of the known range): not noted
        (TMAZE, "success_rate", [1.0] * 3, True, False),  # all succeeding
        ("POPGym/RepeatFirstEasy-v0", "return", [-1.0] * 3, True, False),  # POPGym's lowest return
        (TMAZE, "success_rate", [0.35] * 3, False, False),  # sampled actions: no greedy policies to blame
        (TMAZE, "success_rate", [0.35, 0.35, 0.36], True, False),  # one run differs
    ],
)
def test_a_certificate_whose_runs_all_score_alike_says_so(env, metric, runs, deterministic, noted):
    """Early in training every greedy policy may act alike (POBAX's Crafter at 100k steps: DO on every step, 0.71 on
    every episode): the certificate's table and text say so when every run of the three cells shares one score that
    is not an end of the task's known range."""
    table = _table(env, metric, runs, runs, runs, deterministic)
    assert (cert.alike(table["tasks"][0]) is not None) == noted
    assert ("Note: every run of the three cells scores the same" in cert.table_markdown(table)) == noted
    one = {**table["tasks"][0], "statistics": table["statistics"], "rule": {"tolerance": 0.05, **cert.RULES}}
    assert ("note: every run of the three cells scores the same" in cert.text(one)) == noted


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_a_bad_tolerance_is_one_error(bad):
    with pytest.raises(ConfigError, match=r"--tolerance must be a finite number >= 0"):
        cert.certify([0.0], [0.0], [1.0], tolerance=bad)


# ------------------------------------------------------------------------------------------------------
# the cells
# ------------------------------------------------------------------------------------------------------
def _cells(p):
    return [(c["agent"], c["obs_variant"]) for c in p.configs]


def test_the_default_cells_and_shared_overrides():
    p = cert.plan(TMAZE, steps=1000, seeds=2, overrides=["ppo.hidden_size=8"])
    assert _cells(p) == [("ppo-mlp", "partial"), ("ppo-lstm", "partial"), ("ppo-mlp", "oracle")]
    assert all(c["total_steps"] == 1000 and c["seeds"] == [0, 1] for c in p.configs)
    assert all(c["ppo"]["hidden_size"] == 8 for c in p.configs)
    assert p.cells[0].sources[2].endswith("cells/MIKASA/TMazePassiveDense-v0/ppo-mlp.yaml")  # the tuned cells
    assert p.cells[2].sources[2].endswith("ppo-mlp.oracle.yaml")
    p = cert.plan(TMAZE, floor="sb3-ppo", memory="ppo-gru", variant="full", steps=512)
    assert _cells(p) == [("sb3-ppo", "partial"), ("ppo-gru", "partial"), ("sb3-ppo", "full")]


def test_the_ceiling_is_full_where_the_id_has_no_oracle(monkeypatch):
    monkeypatch.setattr(cert, "obs_variants", lambda env: ("partial", "full"))
    assert cert.ceiling_variant(TMAZE) == "full"
    with pytest.raises(ConfigError, match=r"has no 'oracle' observation variant \(it has partial, full\)"):
        cert.ceiling_variant(TMAZE, "oracle")
    monkeypatch.setattr(cert, "obs_variants", lambda env: ("partial",))
    with pytest.raises(ConfigError, match=r"has no oracle or full observation variant \(only partial\)"):
        cert.ceiling_variant(TMAZE)


def test_a_spec_gives_the_three_cells_their_own_hyperparameters_and_the_command_line_wins():
    spec = ROOT / "experiments/bench/pobax-tmaze10.yaml"
    p = cert.plan(spec=spec, steps=2048, overrides=["ppo.num_envs=8"])
    assert _cells(p) == [("ppo-mlp", "partial"), ("ppo-gru", "partial"), ("ppo-mlp", "oracle")]
    assert [c["ppo"]["learning_rate"] for c in p.configs] == [2.5e-4, 2.5e-3, 2.5e-4]
    assert [c["ppo"]["gae_lambda"] for c in p.configs] == [0.3, 0.7, 0.5]
    assert all(c["ppo"]["num_envs"] == 8 and c["total_steps"] == 2048 for c in p.configs)


def _spec(tmp_path, cells, **top):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({"env": TMAZE, **top, "cells": cells}))
    return path


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"memory": "ppo-mlp"},
            r"the memory cell's agent 'ppo-mlp' has no memory .*; choose one with memory: ppo-lstm",
        ),
        ({"memory": "sac"}, r"the memory cell's agent 'sac' has no memory"),
        ({"floor": "ppo-gru"}, r"the floor cell's agent 'ppo-gru' has memory; the floor must be memoryless: ppo-mlp"),
        ({"floor": "dtqn"}, r"the floor cell's agent 'dtqn' has memory"),
        ({"overrides": ["obs_variant=oracle"]}, r"--set obs_variant=oracle: the certificate sets each cell's"),
        ({"overrides": ["env=MIKASA/TMazePassive-v0"]}, r"--set env=MIKASA/TMazePassive-v0: the certificate sets"),
        ({"env": "CartPole-v1"}, r"CartPole-v1 has no oracle or full observation variant \(only partial\)"),
        ({"env": None}, r"needs an environment ID \(--env ID\), a --spec FILE or --resume DIR"),
    ],
)
def test_cells_that_are_not_a_certificate_are_refused(kwargs, message):
    kwargs = {"env": TMAZE, **kwargs}
    with pytest.raises(ConfigError, match=message):
        cert.plan(kwargs.pop("env"), **kwargs)


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        (
            [
                {"agent": "ppo-mlp"},
                {"agent": "ppo-lstm", "set": ["total_steps=999"]},
                {"agent": "ppo-mlp", "obs_variant": "oracle"},
            ],
            r"the floor and memory cells differ in total_steps: 400000 vs 999: a certificate compares its cells all "
            r"else equal",
        ),
        (
            [
                {"agent": "ppo-mlp"},
                {"agent": "ppo-lstm"},
                {"agent": "ppo-mlp", "obs_variant": "oracle", "set": ["seeds=[0, 1, 5]"]},
            ],
            r"the floor and ceiling cells differ in seeds: \[0, 1, 2\] vs \[0, 1, 5\]",
        ),
        (
            [
                {"agent": "ppo-mlp"},
                {"agent": "ppo-lstm", "set": ["env_kwargs.corridor_length=5"]},
                {"agent": "ppo-mlp", "obs_variant": "oracle"},
            ],
            r"differ in env_kwargs: \{\} vs \{\"corridor_length\": 5\}",
        ),
        (
            [
                {"agent": "ppo-mlp"},
                {"agent": "ppo-lstm", "set": ["eval.episodes=10"]},
                {"agent": "ppo-mlp", "obs_variant": "oracle"},
            ],
            r"differ in eval.episodes: 100 vs 10",
        ),
        (
            [
                {"agent": "ppo-mlp"},
                {"agent": "ppo-lstm", "env": "MIKASA/TMazePassive-v0"},
                {"agent": "ppo-mlp", "obs_variant": "oracle"},
            ],
            r"differ in env: \"MIKASA/TMazePassiveDense-v0\" vs \"MIKASA/TMazePassive-v0\"",
        ),
        (
            [{"agent": "ppo-mlp", "obs_variant": "oracle"}, {"agent": "ppo-lstm"}, {"agent": "ppo-mlp"}],
            r"the floor cell must be on the partial observation variant, got 'oracle' \(a spec's cells are floor, "
            r"memory, ceiling, in that order\)",
        ),
        (
            [{"agent": "ppo-mlp"}, {"agent": "ppo-lstm"}],
            r"a certificate takes exactly three cells \(floor, memory, ceiling, in that order\), got 2",
        ),
    ],
)
def test_a_spec_that_is_not_a_certificate_is_one_error(tmp_path, cells, message):
    with pytest.raises(ConfigError, match=message):
        cert.plan(spec=_spec(tmp_path, cells))


def test_the_agent_specific_hyperparameters_may_differ(tmp_path):
    cells = [
        {"agent": "ppo-mlp", "set": ["ppo.learning_rate=0.1"]},
        {"agent": "ppo-lstm", "set": ["ppo.num_envs=8", "eval.every_steps=0"]},
        {"agent": "ppo-mlp", "obs_variant": "full"},
    ]
    assert _cells(cert.plan(spec=_spec(tmp_path, cells))) == [
        ("ppo-mlp", "partial"),
        ("ppo-lstm", "partial"),
        ("ppo-mlp", "full"),
    ]


# ------------------------------------------------------------------------------------------------------
# the command
# ------------------------------------------------------------------------------------------------------
TINY = [
    "--steps", "512", "--seeds", "2", "--no-progress",
    "--set", "ppo.num_envs=8", "--set", "ppo.num_steps=16", "--set", "ppo.hidden_size=16",
    "--set", "ppo.num_minibatches=2", "--set", "eval.episodes=10", "--set", "eval.every_steps=256",
]  # fmt: skip


def test_certify_end_to_end_writes_the_certificate_and_resumes(tmp_path):
    """The command in this process (--jobs 1: no worker processes); test_cli runs the CLI as a program."""
    out = membench("certify", "--env", TMAZE, "--jobs", "1", "--out", str(tmp_path), *TINY)
    assert out.returncode == 0, out.stderr
    folder = next((tmp_path / "certify").iterdir())
    assert {p.name for p in folder.iterdir()} >= {
        "bench.yaml",
        "certify.yaml",
        "certificate.json",
        "certificate.png",
        "ppo-mlp",
        "ppo-lstm",
        "ppo-mlp.oracle",
    }
    assert (folder / "certificate.png").stat().st_size > 10_000
    c = json.loads((folder / "certificate.json").read_text())
    assert (c["env"], c["env_kwargs"], c["metric"], c["total_steps"], c["seeds"]) == (
        TMAZE, {}, "success_rate", 512, [0, 1]
    )  # fmt: skip
    assert {r: (c["cells"][r]["agent"], c["cells"][r]["obs_variant"]) for r in cert.ROLES} == {
        "floor": ("ppo-mlp", "partial"),
        "memory": ("ppo-lstm", "partial"),
        "ceiling": ("ppo-mlp", "oracle"),
    }
    for role in cert.ROLES:
        cell = c["cells"][role]
        assert len(cell["per_run"]) == 2 and cell["config"]["ppo"]["hidden_size"] == 16
        assert cell["sources"][-1].startswith("--set ppo.num_envs=8") and cell["versions"]["torch"]
        assert set(c[role]) == {"value", "lo", "hi"} and c[role]["value"] == pytest.approx(np.mean(cell["per_run"]))
    assert set(c["gap"]) == {"value", "lo", "hi"} and c["verdict"] in cert.RULES
    assert c["share_closed"] is None or set(c["share_closed"]) == {"value", "lo", "hi"}
    assert c["rule"]["tolerance"] == 0.05 and c["statistics"]["reps"] == 2000 and "git" in c
    assert c["protocol"] == {"episodes_per_run": 10, "deterministic_actions": True, "episode_seeds": [0, 9]}
    assert c["command"].startswith(f"membench certify --env {TMAZE} --floor ppo-mlp --memory ppo-lstm")
    assert f"verdict: {c['verdict']}" in out.stdout and "gap" in out.stdout
    # the command it records plans the same cells
    args = cli.build_parser().parse_args(c["command"].split()[1:])
    again = cert.plan(
        args.env, floor=args.floor, memory=args.memory, variant=args.ceiling_variant, steps=args.steps,
        seeds=args.seeds, overrides=args.set,
    )  # fmt: skip
    assert [r.config for r in again.cells] == [c["cells"][r]["config"] for r in cert.ROLES]

    # --resume finishes what is missing (one seed's final evaluation) and writes the certificate again
    (folder / "ppo-lstm" / "seed_1" / "eval.json").unlink()
    for f in ("ppo-lstm/results.json", "certificate.json", "certificate.png"):
        (folder / f).unlink()
    before = json.loads((folder / "ppo-mlp" / "results.json").read_text())["per_run"]
    out = membench("certify", "--resume", str(folder), "--no-progress", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert f"resuming {folder}" in out.stderr
    again = json.loads((folder / "certificate.json").read_text())
    assert again["cells"]["floor"]["per_run"] == before and again["gap"] == c["gap"]
    assert (folder / "certificate.png").is_file()


@pytest.mark.slow  # certify stops through cli._run_bench, as a suite run does in the default suite (test_scorecard)
def test_a_stop_with_runs_queued_ends_with_checkpoints_saved(tmp_path):
    """3 runs on 2 workers: the queued run never starts, the running ones checkpoint, the command exits, and the
    folder resumes from the checkpoints."""
    args = ["certify", "--env", TMAZE, "--seeds", "0-0", "--jobs", "2", "--steps", str(2000 * 8 * 16)]
    proc = _start([*args, *LONG_TRAINING_SETS, "--out", str(tmp_path)])
    seconds, err = _stop(proc, tmp_path, signal.SIGTERM)
    assert proc.returncode == 130, err
    assert seconds < 60 and "1 queued run(s) not started" in err
    folder = next((tmp_path / "certify").iterdir())
    assert f"membench certify --resume {folder}" in err
    b, meta = cert.resume(folder)
    kinds = sorted(loop.resume_point(cfg, 0, d / "seed_0")[0] for cfg, d in zip(b.configs, b.cell_dirs, strict=True))
    assert kinds == ["checkpoint", "checkpoint", "fresh"]  # --resume trains the queued run
    assert meta["roles"] == {"floor": "ppo-mlp", "memory": "ppo-lstm", "ceiling": "ppo-mlp.oracle"}
    assert not (folder / cert.CERTIFICATE).exists()


def test_certify_errors_are_one_line(tmp_path):
    def error(*args):
        return one_error_line(membench("certify", *args))

    assert "has no memory" in error("--env", TMAZE, "--memory", "ppo-mlp")
    assert "cannot be combined with --spec" in error("--spec", "x.yaml", "--env", TMAZE)
    assert "--tolerance must be a finite number >= 0" in error("--env", TMAZE, "--tolerance", "-1")
    bench_dir = tmp_path / "b"
    bench_dir.mkdir()
    assert "is not a membench bench folder" in error("--resume", str(bench_dir))
    (bench_dir / "bench.yaml").write_text("cells: [ppo-mlp]\n")
    assert "is not a certificate folder (no certify.yaml)" in error("--resume", str(bench_dir))
    assert "--steps, --set cannot be combined with --resume" in error(
        "--resume", str(bench_dir), "--steps", "5", "--set", "a=1"
    )
    assert not any(tmp_path.glob("**/certify"))


@pytest.mark.parametrize(
    ("key", "value"),
    [("roles.memory", "../elsewhere"), ("reps", 0), ("tolerance", -1), ("confidence", 1.0), ("bootstrap_seed", True)],
)
def test_a_broken_certify_file_is_refused_on_resume(tmp_path, key, value):
    plan = cert.plan(TMAZE, steps=128, seeds=1)
    b = cert.create(plan, tmp_path)
    assert cert.read_meta(b.path)["roles"] == {"floor": "ppo-mlp", "memory": "ppo-lstm", "ceiling": "ppo-mlp.oracle"}
    meta = yaml.safe_load((b.path / cert.META_FILE).read_text())
    node = meta
    *parents, last = key.split(".")
    for k in parents:
        node = node[k]
    node[last] = value
    (b.path / cert.META_FILE).write_text(yaml.safe_dump(meta, sort_keys=False))
    with pytest.raises(ConfigError, match=r"is not a certificate file \(roles floor, memory, ceiling naming the"):
        cert.resume(b.path)


# ------------------------------------------------------------------------------------------------------
# slow: the verdicts of real trainings
# ------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_passive_t_maze_is_memory_improvable(tmp_path):
    """The ladder's tuned cells, 400k steps x 3 seeds (config/ladder.yaml: floor ~0.47, memory and ceiling ~1)."""
    out = membench("certify", "--env", TMAZE, "--jobs", "2", "--out", str(tmp_path), "--no-progress", timeout=1800)
    assert out.returncode == 0, out.stderr
    c = json.loads(next((tmp_path / "certify").glob("*/certificate.json")).read_text())
    assert c["verdict"] == cert.IMPROVABLE and c["gap"]["lo"] > 0.3
    assert c["share_closed"]["value"] > 0.8


@pytest.mark.slow
def test_a_task_that_needs_no_memory_is_not_improvable(tmp_path):
    """bsuite MemoryLength with L = 1: the context and the query are both in the observation the agent answers
    from, so a memoryless agent on `partial` does what the oracle one does."""
    out = membench(
        "certify", "--env", "MIKASA/MemoryLength-v0", "--set", "env_kwargs.memory_length=1", "--steps", "20480",
        "--jobs", "2", "--out", str(tmp_path), "--no-progress", timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    c = json.loads(next((tmp_path / "certify").glob("*/certificate.json")).read_text())
    assert c["verdict"] == cert.NOT_IMPROVABLE, c
    assert c["floor"]["value"] > 0.9 and c["share_closed"] is None
