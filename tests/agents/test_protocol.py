"""The LTM/STM protocol: Algorithm 1 per cell (membench plan), the agent -> K rule, the sweep designs
(membench sweep) and the aggregate metrics (IQM, stratified bootstrap, performance profiles)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from membench_agents.algos.registry import AGENTS, AgentInfo
from membench_agents.analysis import aggregate, report
from membench_agents.cli import main
from membench_agents.config.resolve import resolve
from membench_agents.errors import ConfigError
from membench_agents.ltm.plan import agent_context, plan_cell, task_xi, with_context
from membench_agents.ltm.sweep import expand, generalization_figure, parse_spec

import membench_envs
from tests.agents._runs_helpers import membench

TMAZE = "MIKASA/TMazePassive-v0"
#: An attention agent as DTQN registers it: its own section holds the context length K.
DTQN = AgentInfo("dtqn", "dtqn")


def _dtqn(K: int) -> dict:
    return {"agent": "dtqn", "dtqn": {"context_len": K}}


# ------------------------------------------------------------------------------------------------------
# Algorithm 1 on the paper's examples (spec A.6 test vectors)
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "xi, K, regime",
    [
        ((11, 11), 10, "LTM-only"),  # Passive T-Maze L = 10: ξ = L + 1, K̄ = L
        ((11, 11), 11, "STM-only"),
        ((22, 22), 14, "LTM-only"),  # Minigrid-Memory fixed, L = 21
        ((22, 22), 22, "STM-only"),
        ((7, 22), 14, "mixed (STM and LTM)"),  # Minigrid-Memory variable: K = 14 hides the LTM failure
        ((7, 22), 22, "STM-only"),
        ((2, 104), 1, "LTM-only"),  # POPGym Autoencode easy: K̄ = 1, only K = 1 is LTM-only
        ((2, 104), 2, "mixed (STM and LTM)"),
        ((2, 2055), 1, "LTM-only"),  # ViZDoom-Two-Colors
    ],
)
def test_plan_matches_the_papers_examples(xi, K, regime):
    p = plan_cell(TMAZE, DTQN, _dtqn(K), xi=xi)
    assert p.regime == regime
    assert p.K_bar == xi[0] - 1
    assert p.valid_ltm == (K <= xi[0] - 1 and xi[1] <= K)  # attention agent: K_eff = K
    mixed = any("cannot be estimated explicitly" in w for w in p.warnings)
    variable = any("variable correlation horizon" in w for w in p.warnings)
    assert mixed == (regime.startswith("mixed"))
    assert variable == (xi[0] != xi[1] and regime != "STM-only")


@pytest.mark.parametrize("xi, K_bar", [((5, 5), 4), ((33, 33), 32), ((65, 65), 64)])  # RepeatPrevious easy/med/hard
def test_context_memory_border_of_repeat_previous(xi, K_bar):
    assert plan_cell(TMAZE, DTQN, _dtqn(K_bar), xi=xi).regime == "LTM-only"
    assert plan_cell(TMAZE, DTQN, _dtqn(K_bar + 1), xi=xi).regime == "STM-only"


def test_plan_refuses_a_markov_task():
    with pytest.raises(ConfigError, match="not memory-intensive"):
        plan_cell(TMAZE, DTQN, _dtqn(1), xi=(1, 1))


def test_xi_follows_the_env_kwargs():
    assert task_xi(TMAZE) == (11, 11)
    assert task_xi(TMAZE, {"corridor_length": 30}) == (31, 31)
    assert task_xi(TMAZE, {"corridor_length": 30, "penalty": True, "action_order": "paper"}) == (31, 31)
    assert task_xi("MIKASA/MemoryLength-v0", {"memory_length": 7}) == (7, 7)
    # kwargs equal to another registered ID of the family: that ID's horizons
    assert (
        task_xi("POPGym/RepeatPreviousEasy-v0", {"difficulty": "Hard"})
        == membench_envs.info("POPGym/RepeatPreviousHard-v0").xi
    )
    assert task_xi("POPGym/RepeatFirstEasy-v0", {"num_decks": 4}) == (2, 207)  # a POPGym family's horizon kwarg
    assert (
        task_xi("POPGym/RepeatFirstEasy-v0", {"difficulty": "Hard"})
        == membench_envs.info("POPGym/RepeatFirstHard-v0").xi
    )
    with pytest.raises(ConfigError, match=r"cannot derive the correlation horizons .* max_steps=50"):
        task_xi("MIKASA/MiniGridMemoryS23-v0", {"max_steps": 50})
    with pytest.raises(ConfigError, match="corridor_length must be an integer >= 1"):
        task_xi(TMAZE, {"corridor_length": 0})
    with pytest.raises(ConfigError, match="not in the membench catalogue"):
        task_xi("CartPole-v1")


def test_plan_warns_on_a_variable_horizon_task_and_on_an_oracle_variant():
    p = plan_cell("MIKASA/MiniGridMemoryS23Random-v0", DTQN, _dtqn(14))
    assert p.regime.startswith("mixed") and any("variable correlation horizon" in w for w in p.warnings)
    p = plan_cell(TMAZE, "ppo-mlp", {}, obs_variant="oracle")
    assert any("not a memory experiment" in w for w in p.warnings)
    p = plan_cell(TMAZE, "ppo-mlp", {})
    assert p.regime == "LTM-only" and not p.valid_ltm  # K_eff = 1 cannot reach ξ = 11: expect chance
    assert any("cannot reach the event" in w for w in p.warnings)


# ------------------------------------------------------------------------------------------------------
# the agent -> (K, K_eff) rule
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "agent, K, K_eff",
    [
        ("ppo-mlp", 1, 1),
        ("sb3-ppo", 1, 1),
        ("ppo-lstm", 1, math.inf),
        ("ppo-gru", 1, math.inf),
        ("sb3-recurrentppo", 1, math.inf),
    ],
)
def test_k_of_the_registered_agents(agent, K, K_eff):
    ctx = agent_context(agent, {})
    assert (ctx.K, ctx.K_eff) == (K, K_eff)


def test_k_of_an_attention_agent_comes_from_its_config():
    ctx = agent_context(DTQN, _dtqn(8))
    assert (ctx.K, ctx.K_eff, ctx.field) == (8, 8, ("dtqn", "context_len"))
    gtrxl = AgentInfo("ppo-gtrxl", "ppo", core="gtrxl")
    ctx = agent_context(gtrxl, {"ppo": {"hidden_size": 64, "gtrxl": {"window": 16}}})
    assert (ctx.K, ctx.field) == (16, ("ppo", "gtrxl", "window"))
    # GTrXL's layers each attend over K steps of the layer below's memory: it reaches n_layers (K - 1) + 1 back
    ctx = agent_context(gtrxl, {"ppo": {"hidden_size": 64, "gtrxl": {"window": 16, "n_layers": 2}}})
    assert (ctx.K, ctx.K_eff) == (16, 31)
    # the registered agent, with its defaults (membench_agents/config/defaults/ppo.yaml: 2 layers, window 16)
    ctx = agent_context("ppo-gtrxl", resolve(TMAZE, "ppo-gtrxl").config)
    assert (ctx.K, ctx.K_eff) == (16, 31)
    assert with_context(_dtqn(8), DTQN, 4) == ["dtqn.context_len=4"]


def test_k_errors():
    with pytest.raises(ConfigError, match=r"cannot tell the context length K of agent 'dtqn'.*pass --K"):
        agent_context(DTQN, {"dtqn": {}})
    assert agent_context(DTQN, {"dtqn": {}}, K=5).K == 5  # the --K fall-back
    with pytest.raises(ConfigError, match=r"--K 5 contradicts agent 'ppo-mlp': K = 1 by construction"):
        agent_context("ppo-mlp", {}, K=5)
    with pytest.raises(ConfigError, match=r"--set dtqn.context_len=5"):
        agent_context(DTQN, _dtqn(8), K=5)
    with pytest.raises(ConfigError, match=r"dtqn.context_len \(the context length K of dtqn\) must be an integer >= 1"):
        agent_context(DTQN, _dtqn(0))
    with pytest.raises(ConfigError, match="agent 'ppo-lstm' cannot vary K: its K is 1 by construction"):
        with_context({}, AgentInfo("ppo-lstm", "ppo", core="lstm"), 4)


def test_plan_cli(capsys):
    assert main(["plan", "--env", TMAZE, "--agent", "ppo-lstm", "--set", "env_kwargs.corridor_length=30"]) == 0
    out = capsys.readouterr().out
    assert "Ξ = {31}, K̄ = min Ξ − 1 = 30" in out and "K = 1, K_eff = unbounded" in out
    assert "regime: LTM-only" in out and "(Eq 6: K <= K̄ < ξ <= K_eff): yes" in out
    assert main(["plan", "--env", "MIKASA/MiniGridMemoryS23Random-v0", "--agent", "ppo-mlp", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["xi"] == [6, 22] and plan["regime"] == "LTM-only" and plan["context"]["K"] == 1
    assert main(["plan", "--env", TMAZE, "--agent", "ppo-mlp", "--K", "4"]) == 2
    assert "contradicts" in capsys.readouterr().err
    assert main(["plan", "--env", "POPGym/RepeatPreviousEasy-v0", "--agent", "ppo-gru", "--xi", "3,2"]) == 2
    assert "--xi expects MIN[,MAX]" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------------
# aggregate metrics (rliable's definitions)
# ------------------------------------------------------------------------------------------------------
def test_iqm_of_known_scores():
    assert aggregate.iqm([1, 2, 3, 4, 100, 5, 6, 7]) == pytest.approx(4.5)  # cut 2 each side: mean(3, 4, 5, 6)
    assert aggregate.iqm([0.0, 1.0, 0.4, 0.6]) == pytest.approx(0.5)  # cut 1 each side
    assert aggregate.iqm([1.0, 2.0, 9.0]) == pytest.approx(4.0)  # int(0.75) = 0: plain mean
    assert aggregate.iqm([[1, 2, 3, 4], [4, 3, 2, 10]], axis=-1).tolist() == [2.5, 3.5]
    # pooled over tasks (runs x tasks, as rliable's score matrices)
    assert aggregate.estimate(np.array([[0.2, 0.5], [0.8, 1.0], [0.5, 0.9]]), reps=50).value == pytest.approx(0.675)
    scipy_stats = pytest.importorskip("scipy.stats")
    x = np.random.default_rng(1).random(37)
    assert aggregate.iqm(x) == pytest.approx(scipy_stats.trim_mean(x, 0.25))


def test_stratified_bootstrap_ci():
    scores = [[0.1, 0.9, 0.5, 0.7], [0.3, 0.2, 1.0]]
    e = aggregate.estimate(scores, reps=500, seed=3)
    assert e.lo <= e.value <= e.hi and e.lo < e.hi
    assert aggregate.estimate(scores, reps=500, seed=3) == e  # deterministic with a seed
    assert aggregate.estimate(scores, reps=500, seed=4) != e
    samples = aggregate.stratified_bootstrap(scores, aggregate.iqm, reps=500, seed=3)
    assert samples.shape == (500,)
    assert [e.lo, e.hi] == pytest.approx(np.percentile(samples, [2.5, 97.5]).tolist())  # the 95 % percentile interval
    # stratified: each resample keeps every task's run count, so the mean of a task of zeros (2 runs) and a
    # task of ones (3 runs) is always 3/5; resampling the pooled runs would spread it
    flat = aggregate.estimate([[0.0, 0.0], [1.0, 1.0, 1.0]], aggregate.mean, reps=300)
    assert (flat.lo, flat.value, flat.hi) == pytest.approx((0.6, 0.6, 0.6))
    wider = aggregate.estimate([[0.0, 0.0, 1.0, 1.0, 1.0]], aggregate.mean, reps=300)
    assert wider.hi - wider.lo > 0.3
    # two runs 0 and 1: resampled means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so the 95 % percentile
    # interval is [0, 1] and the 50 % one [0.5, 0.5] (the 25th and 75th percentiles both fall on 0.5)
    assert vars(aggregate.estimate([[0.0, 1.0]], aggregate.mean, reps=2000)) == {"value": 0.5, "lo": 0.0, "hi": 1.0}
    narrow = aggregate.estimate([[0.0, 1.0]], aggregate.mean, reps=2000, confidence=0.4)
    assert (narrow.lo, narrow.hi) == (0.5, 0.5)


def test_performance_profile_values():
    scores = [[0.2, 0.8], [0.5, 1.0]]
    taus = [0.0, 0.5, 0.8, 1.0]
    assert aggregate.performance_profile(scores, taus).tolist() == [1.0, 0.5, 0.25, 0.0]  # fraction > τ
    prof, lo, hi = aggregate.performance_profile_ci(scores, taus, reps=300)
    assert prof.tolist() == [1.0, 0.5, 0.25, 0.0]
    assert np.all(lo <= prof) and np.all(prof <= hi) and lo[0] == hi[0] == 1.0


def test_performance_profile_bands_one_threshold_at_a_time_equal_the_broadcast():
    """The profile is computed one τ at a time (memory of reps x runs, not reps x runs x τ): the same numbers."""
    rows = np.random.default_rng(0).random((50, 7))
    taus = np.linspace(0, 1, 11)
    assert np.array_equal(aggregate._fraction_above(rows, taus), (rows[..., None] > taus).mean(axis=-2))
    with pytest.raises(ValueError, match=f"reps must be between 1 and {aggregate.MAX_REPS}"):
        aggregate.stratified_bootstrap([[0.5, 1.0]], aggregate.mean, reps=aggregate.MAX_REPS + 1)


def test_aggregate_groups_runs_by_algorithm_and_task(monkeypatch):
    def res(agent, L, per_run, K=None):
        cfg = {"agent": agent, **({"dtqn": {"context_len": K}} if K else {})}
        return {
            "agent": agent,
            "obs_variant": "partial",
            "env": TMAZE,
            "env_kwargs": {"corridor_length": L},
            "metric": "success_rate",
            "per_run": per_run,
            "config": cfg,
        }

    agg = aggregate.aggregate_results(
        [
            res("ppo-lstm", 2, [1.0, 0.9]),
            res("ppo-lstm", 3, [0.6, 0.8]),
            res("ppo-mlp", 2, [0.5, 0.4]),
            res("ppo-mlp", 3, [0.5, 0.6]),
        ],
        reps=100,
    )
    by = {a.name: a for a in agg.algorithms}
    assert set(by) == {"ppo-lstm (partial)", "ppo-mlp (partial)"} and len(by["ppo-lstm (partial)"].tasks) == 2
    assert by["ppo-lstm (partial)"].iqm.value == pytest.approx(0.85)
    assert not agg.notes
    assert "IQM [95% CI]" in aggregate.table(agg)
    agg = aggregate.aggregate_results([res("ppo-lstm", 2, [1.0]), res("ppo-mlp", 3, [0.5])], reps=10)
    assert any("different sets of tasks" in n for n in agg.notes)
    monkeypatch.setitem(AGENTS, "dtqn", DTQN)  # an attention agent: K is part of its name
    assert report.algorithm_name(res("dtqn", 2, [1.0], K=4)) == "dtqn (partial) K=4"


# ------------------------------------------------------------------------------------------------------
# sweep specs: one clear error each
# ------------------------------------------------------------------------------------------------------
GOOD = {"env": TMAZE, "designs": [{"design": "vary_length", "agent": "ppo-mlp", "lengths": [2, 3]}]}


def _with(**over):
    spec = json.loads(json.dumps(GOOD))
    design = over.pop("design", None)
    if design is not None:
        spec["designs"] = [design]
    spec.update(over)
    return {k: v for k, v in spec.items() if v is not None}


@pytest.mark.parametrize(
    "spec, message",
    [
        (_with(desings=[]), r"unknown key 'desings'. Did you mean designs"),
        (_with(env=None), r"missing 'env'"),
        (_with(env="MIKASA/TMazePasive-v0"), r"env: unknown environment ID 'MIKASA/TMazePasive-v0'. Did you mean"),
        (_with(designs=[]), r"designs: must be a non-empty list of designs"),
        (
            _with(design={"design": "vary_xi", "agent": "ppo-mlp", "lengths": [2]}),
            r"designs\[0\].design: must be one of vary_k, vary_length, length_generalization, got 'vary_xi'",
        ),
        (
            _with(design={"design": "vary_length", "agent": "ppo-mlp"}),
            r"designs\[0\] \(vary_length\): missing 'lengths'",
        ),
        (
            _with(design={"design": "vary_length", "agent": "ppo-mlp", "agents": ["ppo-lstm"], "lengths": [2]}),
            r"exactly one of 'agent' \(a name\) or 'agents'",
        ),
        (
            _with(design={"design": "vary_length", "agent": "ppo-lsmt", "lengths": [2]}),
            r"unknown agent 'ppo-lsmt'. Did you mean ppo-lstm",
        ),
        (
            _with(design={"design": "vary_length", "agent": "ppo-mlp", "lengths": [2, 0]}),
            r"designs\[0\] \(vary_length\).lengths\[1\]: must be an integer >= 1, got 0",
        ),
        (_with(design={"design": "vary_length", "agent": "ppo-mlp", "lengths": [2, 2]}), r"lists a value twice"),
        (
            _with(design={"design": "vary_length", "agent": "ppo-mlp", "lengths": [2], "train_lengths": [2]}),
            r"unknown key 'train_lengths'",
        ),
        (
            _with(design={"design": "length_generalization", "agent": "ppo-lstm", "train_lengths": [2]}),
            r"missing 'eval_lengths'",
        ),
        (_with(length_kwarg="corridor"), r"length_kwarg: 'corridor' is not a kwarg of MIKASA/TMazePassive-v0"),
        (_with(env="POPGym/RepeatPreviousEasy-v0"), r"length_kwarg: POPGym/RepeatPreviousEasy-v0 has no known length"),
        (_with(set=["env_kwargs.corridor_length=5"]), r"sets what the designs vary"),
        (_with(set="ppo.num_envs=4"), r"set: must be a list of KEY=VALUE strings"),
        (_with(steps=0), r"steps: must be an integer >= 1, got 0"),
        (_with(seeds="x"), r"seeds: "),
        (_with(obs_variant="rgb"), r"obs_variant: 'rgb' is not a variant of MIKASA/TMazePassive-v0"),
        (_with(name="a\x00b"), r"name: the sweep's name must be a folder name, free of control characters"),
        (_with(name="../up"), r"name: the sweep's name must be a folder name, one path component"),
    ],
)
def test_bad_sweep_specs_give_one_clear_error(spec, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_spec(spec, "s.yaml")
    assert str(info.value).startswith("sweep spec s.yaml: ") and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "over, args, message",
    [
        ({"length_kwarg": "penalty"}, [], "length_kwarg: 'penalty' is not an integer kwarg"),
        ({"name": "a\x00b"}, [], "free of control characters"),
        ({"set": ["env_kwargs.penalty=2"]}, [], "cell ppo-mlp.L2: cannot create MIKASA/TMazePassive-v0"),
        ({}, ["--steps", "0"], "total_steps must be a positive integer, got 0"),
    ],
)
def test_sweep_dry_run_makes_the_checks_of_the_real_run(tmp_path, capsys, over, args, message):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**GOOD, "seeds": 1, "steps": 64, **over}))
    for dry in (["--dry-run"], []):
        code = main(["sweep", str(spec), *dry, *args, "--out", str(tmp_path / "o"), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and message in err and err.count("membench: error:") == 1, err
        assert "Traceback" not in err and not (tmp_path / "o").exists()


def test_sweep_dry_run_checks_the_evaluation_lengths_the_real_run_reaches_after_training(tmp_path, capsys, monkeypatch):
    import yaml

    def preflight(cfg):  # an environment too large to build at one length (T-Maze at 10^12 asked for 7 TiB)
        if cfg["env_kwargs"]["corridor_length"] == 9:
            raise MemoryError

    from membench_agents.algos import trainer

    monkeypatch.setattr(trainer, "preflight", preflight)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "env": TMAZE,
                "seeds": 1,
                "steps": 64,
                "designs": [
                    {
                        "design": "length_generalization",
                        "agent": "ppo-lstm",
                        "train_lengths": [2],
                        "eval_lengths": [2, 9],
                    }
                ],
            }
        )
    )
    code = main(["sweep", str(spec), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and "cell ppo-lstm.L2 evaluated on corridor_length=9: MIKASA/TMazePassive-v0 with" in err, err
    assert "needs more memory than this machine has" in err and "Traceback" not in err


def test_sweep_cells_and_their_errors():
    spec = parse_spec(
        {
            "env": TMAZE,
            "seeds": 1,
            "steps": 64,
            "designs": [
                {"design": "vary_length", "agents": ["ppo-mlp", "ppo-lstm"], "lengths": [2, 3]},
                {
                    "design": "length_generalization",
                    "agent": "ppo-lstm",
                    "train_lengths": [3, 5],
                    "eval_lengths": [5, 9],
                },
            ],
        },
        "s.yaml",
    )
    cells = expand(spec)
    assert [c.name for c in cells] == ["ppo-mlp.L2", "ppo-mlp.L3", "ppo-lstm.L2", "ppo-lstm.L3", "ppo-lstm.L5"]
    assert [c.designs for c in cells] == [[0], [0], [0], [0, 1], [1]]  # one run folder for a cell of two designs
    assert all(c.cfg["env_kwargs"]["corridor_length"] == c.length for c in cells)
    bad = parse_spec({"env": TMAZE, "designs": [{"design": "vary_k", "agent": "ppo-lstm", "K": [2, 4]}]}, "s.yaml")
    with pytest.raises(ConfigError, match=r"designs\[0\] \(vary_k\), agent ppo-lstm, K 2: .* cannot vary K"):
        expand(bad)
    bad = parse_spec({"env": TMAZE, "set": ["ppo.learning_rat=1"], "designs": GOOD["designs"]}, "s.yaml")
    with pytest.raises(ConfigError, match=r"designs\[0\] \(vary_length\), agent ppo-mlp, length 2: .*learning_rat"):
        expand(bad)


# ------------------------------------------------------------------------------------------------------
# the sweep command on a tiny budget
# ------------------------------------------------------------------------------------------------------
TINY = """
name: tiny
env: MIKASA/TMazePassive-v0
seeds: 2
steps: 256
episodes: 10
set: [eval.num_envs=10, ppo.num_envs=8, ppo.num_steps=16, ppo.num_minibatches=2, ppo.update_epochs=2,
      ppo.hidden_size=16, ppo.learning_rate=0.003]
designs:
  - design: vary_length
    agents: [ppo-mlp, ppo-lstm]
    lengths: [2, 3]
  - design: length_generalization
    agent: ppo-lstm
    train_lengths: [2, 3]
    eval_lengths: [2, 3, 4]
"""


def test_generalization_panels_share_one_colour_scale():
    """One colour scale for every agent's panel (and the colour bar): the range of all values for a return, [0, 1]
    for a success rate."""

    def out(metric, values):
        rows = [
            {"agent": agent, "K": None, "train_length": 1, "eval_length": e, "metric": metric, "mean": m, "sem": 0.0}
            for agent, pair in values.items()
            for e, m in zip((1, 2), pair, strict=True)
        ]
        return {"length_kwarg": "num_decks", "generalization": rows, "spec": {"env": "POPGym/RepeatFirstEasy-v0"}}

    fig = generalization_figure(out("return", {"ppo-lstm": (0.99, 1.0), "ppo-ffm": (0.04, -0.1)}))
    assert {ax.images[0].get_clim() for ax in fig.axes if ax.images} == {(-0.1, 1.0)}
    fig = generalization_figure(out("success_rate", {"ppo-lstm": (0.2, 0.3), "ppo-ffm": (0.4, 0.5)}))
    assert {ax.images[0].get_clim() for ax in fig.axes if ax.images} == {(0.0, 1.0)}


def test_sweep_command_writes_the_heatmap_and_the_results_table(tmp_path, capsys):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    dry = membench("sweep", str(spec), "--dry-run", "--out", str(tmp_path / "o"))
    assert dry.returncode == 0, dry.stderr
    assert "ppo-lstm.L3  b,c" in dry.stderr and "LTM-only" in dry.stderr and not (tmp_path / "o").exists()
    out = membench("sweep", str(spec), "--out", str(tmp_path / "o"), "--jobs", "1")
    assert out.returncode == 0, out.stderr
    sweep = next((tmp_path / "o" / "sweeps" / "tiny").iterdir())
    png = (sweep / "generalization.png").read_bytes()
    assert png.startswith(b"\x89PNG") and (sweep / "sweep.png").is_file() and (sweep / "aggregate.png").is_file()
    table = (sweep / "sweep_results.md").read_text()
    assert table.count("| ppo-mlp |") == 2 and table.count("| ppo-lstm |") == 2 + 6
    assert "IQM [95% CI]" in table
    res = json.loads((sweep / "sweep_results.json").read_text())
    assert {(g["train_length"], g["eval_length"]) for g in res["generalization"]} == {
        (t, e) for t in (2, 3) for e in (2, 3, 4)
    }
    for g in res["generalization"]:
        assert g["xi"] == [g["eval_length"] + 1] * 2 and g["n_runs"] == 2
        assert g["mean_length"] == g["eval_length"] + 1  # T-Maze episodes last T = L + 1: run on the eval length
        if g["train_length"] == g["eval_length"]:  # the checkpoint re-evaluated on its own length = results.json
            cell = json.loads((sweep / "cells" / g["cell"] / "results.json").read_text())
            assert g["per_run"] == cell["per_run"]
    assert {c["name"] for c in res["cells"]} == {"ppo-mlp.L2", "ppo-mlp.L3", "ppo-lstm.L2", "ppo-lstm.L3"}
    assert main(["report", str(sweep), "--aggregate", "--out", str(tmp_path / "r.png")]) == 0
    rep = capsys.readouterr().out
    assert "IQM [95% CI]" in rep and "ppo-lstm (partial)" in rep
    assert (tmp_path / "r.aggregate.png").is_file()
    # an interrupted sweep continues where it stopped
    (sweep / "cells" / "ppo-mlp.L3" / "seed_1" / "eval.json").unlink()
    (sweep / "generalization.png").unlink()
    again = membench("sweep", "--resume", str(sweep), "--no-progress", "--jobs", "1")  # no worker processes
    assert again.returncode == 0, again.stderr
    assert (sweep / "cells" / "ppo-mlp.L3" / "seed_1" / "eval.json").is_file()
    assert (sweep / "generalization.png").is_file()
    assert main(["sweep", "--resume", str(sweep), "--steps", "5"]) == 2
    assert "--steps cannot be combined with --resume" in capsys.readouterr().err
