"""What `membench report` shows: runs of one agent with different configs kept apart (and the aggregate does not
pool them unless asked), one run shown as n = 1, no "nan" labels, tick labels that do not overlap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from membench_agents.analysis import aggregate, report

TASK = "MIKASA/TMazePassiveDense-v0"


def _run(
    root: Path,
    name: str,
    agent: str = "ppo-lstm",
    steps: int = 400_000,
    lr: float = 1e-3,
    per_run=(0.9, 1.0, 0.8),
    metric: str = "success_rate",
    variant: str = "partial",
) -> Path:
    """A run folder as `membench train` leaves it (results.json only: the report reads no checkpoint)."""
    d = root / name
    d.mkdir(parents=True)
    seeds = list(range(len(per_run)))
    config = {
        "env": TASK,
        "agent": agent,
        "obs_variant": variant,
        "env_kwargs": {},
        "total_steps": steps,
        "seeds": seeds,
        "device": "cpu",
        "eval": {"episodes": 100, "num_envs": 16, "every_steps": 20_000},
        "ppo": {"learning_rate": lr, "num_envs": 64},
    }
    mean = sum(per_run) / len(per_run)
    sem = (
        0.0
        if len(per_run) == 1
        else (sum((v - mean) ** 2 for v in per_run) / (len(per_run) - 1)) ** 0.5 / len(per_run) ** 0.5
    )
    results = {
        "env": TASK,
        "agent": agent,
        "obs_variant": variant,
        "env_kwargs": {},
        "total_steps": steps,
        "seeds": seeds,
        "metric": metric,
        "mean": mean,
        "sem": sem,
        "n_runs": len(per_run),
        "per_run": list(per_run),
        "protocol": {"episodes_per_run": 100},
        "config": config,
        "runs": [{"seed": s, "global_step": steps, "sps": 1000.0} for s in seeds],
    }
    (d / "results.json").write_text(json.dumps(results))
    return d


def test_runs_of_one_agent_with_other_budgets_or_hyperparameters_are_labelled_apart(tmp_path):
    a = _run(tmp_path, "a", steps=100_000)
    b = _run(tmp_path, "b", steps=400_000)
    c = _run(tmp_path, "c", steps=400_000, lr=3e-4)
    d = _run(tmp_path, "d", agent="ppo-mlp")  # another agent: its own name, nothing to add
    names = report.labels([report.load_results(x) for x in (a, b, c, d)])
    assert names == [
        "ppo-lstm (partial) [learning_rate=0.001, steps=100k]",
        "ppo-lstm (partial) [learning_rate=0.001, steps=400k]",
        "ppo-lstm (partial) [learning_rate=0.0003, steps=400k]",
        "ppo-mlp (partial)",
    ]
    text = report.table([a, b, c, d])
    assert all(n in text for n in names)


def test_the_aggregate_keeps_different_configs_apart_unless_pooled(tmp_path):
    runs = [report.load_results(_run(tmp_path, n, steps=s)) for n, s in (("a", 100_000), ("b", 400_000))]
    apart = aggregate.aggregate_results(runs, reps=50)
    assert [a.name for a in apart.algorithms] == ["ppo-lstm (partial) [steps=100k]", "ppo-lstm (partial) [steps=400k]"]
    assert any("kept apart" in n and "--pool" in n for n in apart.notes)
    pooled = aggregate.aggregate_results(runs, reps=50, pool=True)
    assert [(a.name, a.n_runs) for a in pooled.algorithms] == [("ppo-lstm (partial)", 6)]
    assert any("pooled (--pool)" in n for n in pooled.notes)


def test_one_run_is_n_equals_1_not_plus_minus_zero(tmp_path):
    one = _run(tmp_path, "one", per_run=(0.7,))
    text = report.table([one])
    assert "0.700 (n = 1)" in text and "± 0.000" not in text
    assert report.mean_text(0.5, 0.1, 3) == "0.500 ± 0.100"


def _texts(fig):
    return [t for ax in fig.axes for t in ax.texts]


def test_the_comparison_plot_has_no_nan_labels_and_no_overlapping_ticks(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    dirs = [_run(tmp_path, f"r{i}", steps=100_000 * (i + 1)) for i in range(5)]
    dirs.append(_run(tmp_path, "ret", agent="ppo-mlp", metric="return", per_run=(3.0, 4.0, 5.0)))
    figures = []
    monkeypatch.setattr(report, "save_figure", lambda fig, out: figures.append(fig) or Path(out))
    report.plot_comparison(dirs, tmp_path / "cmp.png")
    (fig,) = figures
    assert isinstance(fig, Figure)
    assert not [t.get_text() for t in _texts(fig) if "nan" in t.get_text().lower()]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    bars = fig.axes[1]
    renderer = canvas.get_renderer()
    ticks = bars.get_yticklabels()
    boxes = [t.get_window_extent(renderer) for t in ticks]
    assert len(boxes) == 6
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j]), (ticks[i].get_text(), ticks[j].get_text())


@pytest.mark.parametrize("n_runs", [1, 3])
def test_a_single_run_plot_title_says_n(tmp_path, monkeypatch, n_runs):
    d = _run(tmp_path, "x", per_run=(0.5,) * n_runs)
    titles = []
    monkeypatch.setattr(report, "save_figure", lambda fig, out: titles.extend(a.get_title() for a in fig.axes))
    report.plot_run(d)
    assert ("0.500 (n = 1)" in titles) == (n_runs == 1)
    assert not any("± 0.000 (n = 1)" in t for t in titles)
