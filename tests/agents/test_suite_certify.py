"""A suite run with certificates (`membench bench --suite ... --certify`): each ID's memory-improvability
certificate from the run's own floor (ppo-mlp) and memory (ppo-lstm) cells plus one ceiling cell, so no run trains
twice; the scorecard keeps the partial cells as its rows and normalises each task by its certificate; a table of
certificates is a --reference like a certificate folder; and the errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from membench_agents.analysis import certificate as cert
from membench_agents.analysis import scorecard as sc
from membench_agents.errors import ConfigError
from membench_agents.runs import suite

from membench_agents import cli
from tests.agents._runs_helpers import membench, one_error_line

TASK = "POPGym/RepeatPreviousEasy-v0"
TINY = [
    "--steps", "512", "--seeds", "2", "--no-progress", "--jobs", "1",
    "--set", "ppo.num_envs=8", "--set", "ppo.num_steps=16", "--set", "ppo.hidden_size=16",
    "--set", "ppo.num_minibatches=2", "--set", "eval.episodes=10", "--set", "eval.every_steps=0",
]  # fmt: skip


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    """A finished suite run with certificates on one task (3 cells x 2 seeds of 512 steps)."""
    out = tmp_path_factory.mktemp("certified")
    assert cli.main(["bench", "--ids", TASK, "--certify", "--out", str(out), *TINY]) == 0
    return next((out / "scorecard").iterdir())


def test_the_certificates_come_from_the_runs_own_cells_and_normalise_the_scorecard(certified):
    labels = ["ppo-mlp", "ppo-lstm", "ppo-mlp.oracle"]  # (one ID: the cells are named by their agents)
    assert yaml.safe_load((certified / "bench.yaml").read_text())["cells"] == labels  # 3 cells: nothing twice
    table = json.loads((certified / cert.TABLE).read_text())
    assert table["certificates"] == cert.TABLE_KIND and len(table["tasks"]) == 1
    (c,) = table["tasks"]
    assert {r: (c["cells"][r]["folder"], c["cells"][r]["obs_variant"]) for r in cert.ROLES} == {
        "floor": (labels[0], "partial"),
        "memory": (labels[1], "partial"),
        "ceiling": (labels[2], "oracle"),
    }
    runs = {
        r: json.loads((certified / c["cells"][r]["folder"] / "results.json").read_text())["per_run"] for r in cert.ROLES
    }
    stats = cert.certify(runs["floor"], runs["memory"], runs["ceiling"])  # the single certificate's statistics
    assert c["gap"] == vars(stats.gap) and c["verdict"] == stats.verdict and len(runs["floor"]) == 2
    assert f"| {TASK} | return | 512 x 2 |" in (certified / cert.TABLE_MARKDOWN).read_text()
    assert (certified / cert.TABLE_PLOT).stat().st_size > 5_000
    # the scorecard: the partial cells are its rows, the ceiling is the certificate's
    card = json.loads((certified / sc.SCORECARD).read_text())
    assert [t["cell"] for t in card["tasks"]] == labels[:2]
    assert any("ceiling cells" in n and cert.TABLE in n for n in card["notes"])
    assert "--certify" in card["command"]
    gap = c["ceiling"]["value"] - c["floor"]["value"]
    assert 0 < gap < table["rule"]["tolerance"]  # (at this budget and these seeds: -0.496 vs -0.510)
    for t in card["tasks"]:  # a gap within the tolerance is no scale: POPGym's -1..1, and a note says why
        assert t["normalisation"]["source"].startswith("POPGym")
    assert any(f"is {c['verdict']} (tolerance {table['rule']['tolerance']:g})" in n for n in card["notes"])
    # where the gap is established (memory-improvable: its interval above 0, above the tolerance), the scale is the
    # task's own certificate; an interval that reaches 0 (undetermined) is none
    table["rule"]["tolerance"] = 0.0
    results = [json.loads((certified / label / "results.json").read_text()) for label in labels[:2]]
    for lo, used in ((gap / 2, True), (-gap, False)):
        table["tasks"][0]["gap"].update(lo=lo, hi=2 * gap)
        refs = {r.task: r for r in sc.references_of(table, certified / cert.TABLE)}
        for t in sc.compute(results, refs, reps=50).data["tasks"]:
            assert t["normalisation"]["source"].startswith(f"certificate {certified / cert.TABLE}") is used
            assert (t["normalisation"]["floor"], t["normalisation"]["ceiling"]) == (
                (c["floor"]["value"], c["ceiling"]["value"]) if used else (-1, 1)
            )


def test_the_table_plot_puts_each_task_s_returns_on_its_own_scale():
    """0 is the lowest end of the three intervals, 1 the highest; one number everywhere sits in the middle."""
    c = {
        "floor": {"value": 100.0, "lo": 90.0, "hi": 110.0},
        "memory": {"value": 200.0, "lo": 150.0, "hi": 250.0},
        "ceiling": {"value": 480.0, "lo": 450.0, "hi": 490.0},
    }
    scaled = cert.row_scale(c)
    assert scaled["floor"] == pytest.approx((0.025, 0.0, 0.05)) and scaled["ceiling"][2] == 1.0
    assert scaled["memory"] == pytest.approx((0.275, 0.15, 0.4))
    flat = {r: {"value": -1000.0, "lo": -1000.0, "hi": -1000.0} for r in cert.ROLES}
    assert cert.row_scale(flat) == {r: (0.5, 0.5, 0.5) for r in cert.ROLES}


def test_a_table_of_certificates_is_a_reference_and_a_scorecard_folder_roundtrips(certified):
    refs = sc.load_references([certified])
    assert list(refs) == [TASK] and refs[TASK].path == str(certified / cert.TABLE)
    (certified / cert.TABLE_MARKDOWN).unlink()
    out = membench("report", str(certified), "--scorecard")
    assert out.returncode == 0, out.stderr
    assert (certified / cert.TABLE_MARKDOWN).is_file()
    html = certified.parent / "page.html"
    out = membench("report", str(certified), "--html", str(html))
    assert out.returncode == 0, out.stderr
    assert "Memory-improvability certificates: 1 task(s)" in html.read_text()


def test_scorecard_meta_with_roles_outside_its_cells_is_one_error(certified, tmp_path):
    meta = yaml.safe_load((certified / suite.META_FILE).read_text())
    assert suite.read_meta(certified)["certify"]["tasks"] == meta["certify"]["tasks"]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bench.yaml").write_text((certified / "bench.yaml").read_text())
    meta["certify"]["tasks"][TASK]["ceiling"] = "../elsewhere"
    (bad / suite.META_FILE).write_text(yaml.safe_dump(meta))
    with pytest.raises(Exception, match="certificates' roles naming its cells"):
        suite.read_meta(bad)


def test_the_roles_of_each_id_and_a_missing_role_is_an_error():
    configs = [
        {"env": "A", "agent": "ppo-mlp", "obs_variant": "partial"},
        {"env": "A", "agent": "ppo-gru", "obs_variant": "partial"},
        {"env": "A", "agent": "ppo-lstm", "obs_variant": "partial"},
        {"env": "A", "agent": "ppo-mlp", "obs_variant": "full"},
        {"env": "B", "agent": "ppo-mlp", "obs_variant": "partial"},
        {"env": "B", "agent": "ppo-lstm", "obs_variant": "partial"},
    ]
    labels = [f"c{i}" for i in range(len(configs))]
    with pytest.raises(
        ConfigError, match=r"B: a certificate needs a floor, a memory and a ceiling cell, found \['floor', 'memory'\]"
    ):
        suite.certificate_roles(labels, configs, "ppo-mlp", "ppo-lstm")
    assert suite.certificate_roles(labels[:4], configs[:4], "ppo-mlp", "ppo-lstm") == {
        "A": {"floor": "c0", "memory": "c2", "ceiling": "c3"}
    }


def _error(*args):
    return one_error_line(membench("bench", *args))


def test_certify_errors_are_one_line_and_a_dry_run_lists_the_ceilings(tmp_path):
    ids = ["--ids", TASK, "--out", str(tmp_path)]
    assert "--certify needs ppo-mlp (the floor) and ppo-lstm (memory) among --agent; add ppo-lstm" in _error(
        *ids, "--certify", "--agent", "ppo-mlp,ppo-gru"
    )
    assert "--certify normalises each task by its own certificate" in _error(
        *ids, "--certify", "--reference", str(tmp_path)
    )
    assert "--certify needs the agents on partial" in _error(*ids, "--certify", "--obs-variant", "oracle")
    assert "--certify belong to a suite run" in _error("--certify", "--out", str(tmp_path))
    assert "--certify cannot be combined with --resume" in _error("--resume", str(tmp_path), "--certify")
    out = membench("bench", *ids, "--certify", "--agent", "ppo-mlp,ppo-gru,ppo-lstm", "--dry-run", *TINY[:4])
    assert out.returncode == 0, out.stderr
    assert (
        "3 agent(s) (ppo-mlp, ppo-gru, ppo-lstm) on partial, and a certificate's ceiling cell on 1 ID(s)" in out.stderr
    )
    assert "ppo-mlp.oracle" in out.stderr and "4 cells" in out.stderr
    assert not any(tmp_path.iterdir())  # nothing written


def _baselines_script(monkeypatch):
    """experiments/baselines.py as a module."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "experiments" / "baselines.py"
    spec = importlib.util.spec_from_file_location("baselines", path)
    baselines = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "baselines", baselines)  # (its dataclass looks its module up)
    spec.loader.exec_module(baselines)
    return baselines


def test_the_popgym_baseline_is_set_beside_the_papers_table(monkeypatch):
    """Per ID the paper's MMER and membench's final return of MLP, GRU and LSTM with each one's best model (ties
    joined), then the agreement and the means; only partial rows of IDs the paper has, with all three agents."""
    baselines = _baselines_script(monkeypatch)
    ref = Path(__file__).resolve().parents[2] / "experiments" / "reference" / baselines.BASELINES["popgym"].paper
    paper = json.loads(ref.read_text())
    assert len(paper["tasks"]) == 45 and paper["tasks"]["POPGym/CountRecallEasy-v0"]["LSTM"] == [0.509, 0.062]

    def row(env, agent, per_run, variant="partial"):
        return {"env": env, "agent": agent, "obs_variant": variant, "per_run": per_run}

    card = {
        "tasks": [
            row("POPGym/RepeatFirstEasy-v0", "ppo-mlp", [-0.5, -0.3]),
            row("POPGym/RepeatFirstEasy-v0", "ppo-gru", [0.2, 0.4]),
            row("POPGym/RepeatFirstEasy-v0", "ppo-lstm", [0.5, 0.7]),
            row("POPGym/RepeatFirstEasy-v0", "ppo-mlp", [1.0, 1.0], "oracle"),  # a ceiling: not a model's row
            row("POPGym/CountRecallEasy-v0", "ppo-mlp", [0.1]),
            row("POPGym/CountRecallEasy-v0", "ppo-gru", [0.0]),
            row("POPGym/CountRecallEasy-v0", "ppo-lstm", [-0.1]),
            row("POPGym/BattleshipEasy-v0", "ppo-mlp", [0.0]),  # without GRU and LSTM rows: left out
            *(row("POPGym/VelocityOnlyCartPoleEasy-v0", a, [0.5]) for a in ("ppo-mlp", "ppo-gru", "ppo-lstm")),
        ]
    }
    text = "\n".join(baselines.beside_the_paper(card, paper))
    assert "| POPGym/RepeatFirstEasy-v0 | 0.489 | 1.000 | 1.000 | GRU = LSTM | -0.400 | 0.300 | 0.600 | LSTM |" in text
    assert "| POPGym/CountRecallEasy-v0 | -0.847 | 0.177 | 0.509 | LSTM | 0.100 | 0.000 | -0.100 | MLP |" in text
    assert "| POPGym/BattleshipEasy" not in text and "| POPGym/VelocityOnly" not in text
    assert "Over these 2 IDs: the best model is the same on 0. Sole best: MLP 0, GRU 0, LSTM 1 in the paper" in text
    assert "MLP 1, GRU 0, LSTM 1 here" in text and "LSTM 0.250 here" in text
    assert baselines.beside_the_paper({"tasks": []}, paper) == []


def test_a_baselines_environment_variables_reach_its_runs_and_its_stated_command(tmp_path, monkeypatch):
    """A baseline's environ (jax's threads and compile cache for Crafter) is set for its runs where the caller has
    not set it, and written into the command its README and `list` state."""
    baselines = _baselines_script(monkeypatch)
    environ = (("MEMBENCH_TEST_A", "{runs}/cache"), ("MEMBENCH_TEST_B", "the baseline's"))
    monkeypatch.setitem(baselines.BASELINES, "env-test", baselines.Baseline("t", "d", ("--ids", "X"), environ=environ))
    monkeypatch.delenv("MEMBENCH_TEST_A", raising=False)
    monkeypatch.setenv("MEMBENCH_TEST_B", "the caller's")
    seen = {}

    def main(argv):
        seen.update(a=os.environ.get("MEMBENCH_TEST_A"), b=os.environ.get("MEMBENCH_TEST_B"), argv=argv)
        return 1  # (a failed run: nothing to collect)

    monkeypatch.setattr(cli, "main", main)
    assert baselines.run("env-test", tmp_path / "runs", None, tmp_path / "results") == 1
    assert seen == {"a": f"{tmp_path / 'runs'}/cache", "b": "the caller's", "argv": seen["argv"]}
    assert seen["argv"][:3] == ["bench", "--ids", "X"]
    assert baselines._command("env-test", Path("runs", "baselines"), Path("results")) == (
        "MEMBENCH_TEST_A=runs/baselines/cache 'MEMBENCH_TEST_B=the baseline'\"'\"'s' membench bench --ids X"
    )


def test_the_baselines_script_collects_the_summaries_and_writes_the_results_page(certified, tmp_path, monkeypatch):
    """experiments/baselines.py: `collect` copies a finished suite run's summaries (the run's absolute path written
    as a path under the repository) with a README stating the command and the CPU-hours; `docs` writes the
    results page from them."""
    import shutil

    baselines = _baselines_script(monkeypatch)
    runs, results = tmp_path / "runs", tmp_path / "results"
    folder = runs / "popgym" / "scorecard" / certified.name
    shutil.copytree(certified, folder)
    for f in ("scorecard.json", "scorecard.md"):  # as written in that folder
        (folder / f).write_text((folder / f).read_text().replace(str(certified), str(folder)))
    out = baselines.collect("popgym", runs, results)
    assert sorted(p.name for p in out.iterdir()) == sorted([*baselines.SUMMARIES, "README.md"])
    assert (
        "Files: `scorecard.md` / `.json` / `.png` (per task and across tasks, normalised scores), "
        in (out / "README.md").read_text()
    )
    assert str(folder) not in (out / "scorecard.md").read_text()
    assert "runs/baselines/popgym/scorecard/" in (out / "scorecard.md").read_text()
    readme = (out / "README.md").read_text()
    hours = sum(r["train_time_s"] for f in certified.glob("*/results.json") for r in json.loads(f.read_text())["runs"])
    assert f"cost: {hours / 3600:.1f} CPU-hours" in readme
    assert "python experiments/baselines.py run popgym" in readme and "--certify" in readme
    page = baselines.docs(results, tmp_path / "results.md").read_text()
    assert f"| {TASK} | return | 512 x 2 |" in page and "![certificates of popgym](" in page
    assert "| ppo-lstm (partial) | normalised score | 1 | 2 |" in page and "What it shows" not in page
    (out / baselines.FINDINGS).write_text("Memory pays on this task.\n")  # written by hand, kept by collect
    baselines.collect("popgym", runs, results)
    page = baselines.docs(results, tmp_path / "results.md").read_text()
    assert "### What it shows\n\nMemory pays on this task.\n" in page
    # a baseline without certificates (rows scored against another baseline's): only the scorecard
    plain = runs / "popgym-gtrxl-easy" / "scorecard" / certified.name
    shutil.copytree(folder, plain)
    for f in [*plain.glob("certificates.*"), plain / "scorecard.png"]:  # (no plot where no task is normalised)
        f.unlink()
    with (plain / "scorecard.md").open("a") as f:  # as --reference writes the certificates it was scored against
        f.write(f"\nnormalised by {results.resolve() / 'popgym' / 'certificates.json'}\n")
    out = baselines.collect("popgym-gtrxl-easy", runs, results)
    assert not list(out.glob("certificates.*")) and "verdicts" not in (out / "README.md").read_text()
    assert (
        "Files: `scorecard.md` / `.json` (per task and across tasks, normalised scores).\n"
        in (out / "README.md").read_text()
    )
    assert "normalised by results/popgym/certificates.json" in (out / "scorecard.md").read_text()
    page = baselines.docs(results, tmp_path / "results.md").read_text()
    assert page.count("### Certificates") == 1 and "![scorecard of popgym](" in page
    assert "![scorecard of popgym-gtrxl-easy](" not in page  # (its plot is missing: no broken picture)
    # at a glance: a row per baseline (its verdicts counted where it has certificates), the totals of the certified
    card = json.loads((out / "scorecard.json").read_text())
    iqm = card["rows"][0]["iqm"]
    assert f"| popgym-gtrxl-easy | 1 | 512 x 2 | - | - | - | {card['rows'][0]['name']} {iqm['value']:.3f} [" in page
    verdict = json.loads((folder / "certificates.json").read_text())["tasks"][0]["verdict"]
    counts = " | ".join("1" if v == verdict else "0" for v in (cert.IMPROVABLE, cert.NOT_IMPROVABLE, cert.UNDETERMINED))
    assert f"| popgym | 1 | 512 x 2 | {counts} | " in page and f"| all | 1 certified | | {counts} | | " in page
    card["rows"] = []  # (no task normalised: no aggregate row)
    (out / "scorecard.json").write_text(json.dumps(card))
    page = baselines.docs(results, tmp_path / "results.md").read_text()
    assert "| popgym-gtrxl-easy | 1 | 512 x 2 | - | - | - | - (no task normalised) | " in page
    # results/ holds other experiments' summaries too: the page is the baselines'
    (results / "horizon-probe").mkdir()
    (results / "horizon-probe" / "README.md").write_text("# Another experiment\n")
    assert "Another experiment" not in baselines.docs(results, tmp_path / "results.md").read_text()


def test_a_baseline_continues_on_another_machine_from_its_committed_ledger(certified, tmp_path, monkeypatch):
    """experiments/baselines.py across machines: `save` writes the finished seeds of a run folder to the ledger;
    `run` on a machine without the folder creates it, fills it with the ledger's seeds (not trained again: their
    eval.json is the ledger's) and trains only the missing seed, to the same scorecard; `collect` then deletes the
    ledger. A bad ledger is one line of error before anything trains."""
    import shutil

    baselines = _baselines_script(monkeypatch)
    args = ("--ids", TASK, "--certify", *TINY)
    monkeypatch.setitem(baselines.BASELINES, "tiny", baselines.Baseline("Tiny", "A tiny baseline.", args))
    runs, results = tmp_path / "runs", tmp_path / "results"
    shutil.copytree(certified, runs / "tiny" / "scorecard" / certified.name)
    assert baselines.state("tiny", results) == "not run yet"
    assert baselines.save("tiny", runs, results) == 6  # 3 cells x 2 seeds
    ledger = results / "tiny" / baselines.LEDGER
    assert baselines.state("tiny", results).startswith("unfinished: its ledger holds 6 finished seeds")
    lines = ledger.read_text().splitlines()
    gone = next(i for i, line in enumerate(lines) if '"cell":"ppo-lstm","seed":1,' in line)
    ledger.write_text("".join(f"{line}\n" for i, line in enumerate(lines) if i != gone))

    def first_error(text: str, machine: str) -> str:
        ledger.write_text(text)
        with pytest.raises(SystemExit) as e:
            baselines.run("tiny", tmp_path / machine, 1, results)
        assert not list((tmp_path / machine).glob("tiny/scorecard/*"))  # nothing kept for a later `run` to continue
        return str(e.value)

    good = ledger.read_text()
    assert "line 2 is not valid JSON" in first_error(good.replace("\n", "\n{", 1), "bad1")
    assert "line 1 names the cell '../ppo-lstm'" in first_error(good.replace('"ppo-', '"../ppo-', 1), "bad2")
    edited = good.replace('"total_steps":512', '"total_steps":513', 1)
    assert "line 1 was trained with another config (total_steps: 512 vs 513)" in first_error(edited, "bad3")

    ledger.write_text(good)
    assert baselines.run("tiny", tmp_path / "machine2", 1, results) == 0
    folder = next((tmp_path / "machine2" / "tiny" / "scorecard").iterdir())
    for line in good.splitlines():  # the restored seeds were not trained again
        e = json.loads(line)
        assert json.loads((folder / e["cell"] / f"seed_{e['seed']}" / "eval.json").read_text()) == e["eval"]
    before, after = (json.loads((d / "scorecard.json").read_text())["tasks"] for d in (certified, folder))
    assert [t["per_run"] for t in after] == [t["per_run"] for t in before]
    assert not ledger.exists() and (results / "tiny" / "scorecard.json").is_file()
    assert baselines.state("tiny", results).startswith("collected")
