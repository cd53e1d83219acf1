"""The published CPU baselines: each a `membench bench` suite run with certificates (`--certify`) at one documented
CPU budget, resumable across sittings. Its small summaries (scorecard and certificates: JSON, Markdown, PNG, and a
README with the command and the CPU-hours it cost) are committed under ``results/<name>/``; the run folders stay
in ``runs/baselines/<name>/`` (not in git); ``docs/results.md`` is generated from ``results/``.

    python experiments/baselines.py list                  # the baselines, their commands, budgets and state
    python experiments/baselines.py run popgym [--jobs 2] # start it, or continue its unfinished run (Ctrl-C stops
                                                          # it with checkpoints saved; run it again to continue)
    python experiments/baselines.py save popgym           # write its finished seeds to the ledger (while it runs)
    python experiments/baselines.py collect popgym        # copy its summaries into results/popgym/
    python experiments/baselines.py docs                  # regenerate docs/results.md from results/ (with each
                                                          # baseline's hand-written results/<name>/findings.md)

Across machines: a run folder does not travel, so each sitting leaves a ledger, ``results/<name>/finished-seeds.jsonl``
(one line per finished seed: its ``eval.json`` as written and its learning curve; `run` writes it whenever it stops,
`save` while it runs). Commit it; on a machine with no unfinished run folder, `run` creates the run's folder, fills it
with the ledger's seeds (each checked against the cell's config) and trains only the rest. `collect` deletes the
ledger: the summaries replace it. A seed that had not finished when the sitting ended starts again from step 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Baseline:
    title: str
    description: str
    args: tuple[str, ...]  #: the `membench bench` arguments (a suite run with --certify)
    paper: str | None = None
    """a published table to set beside it: a file of ``experiments/reference/`` (see :func:`beside_the_paper`)"""
    environ: tuple[tuple[str, str], ...] = ()
    """environment variables `run` sets for its runs where the caller has not (``{runs}``: the run folders' root)"""


BASELINES = {
    "popgym": Baseline(
        "POPGym: PPO with MLP, GRU and LSTM cores, and each ID's certificate",
        "All 48 POPGym IDs on `partial` with membench's PPO and three cores (`ppo-mlp`, `ppo-gru`, `ppo-lstm`: the "
        "agents' shipped defaults), 3 seeds of 100k environment steps each, and per ID the memory-improvability "
        "certificate from the run's own `ppo-mlp` (floor) and `ppo-lstm` (memory) cells plus `ppo-mlp` on `oracle` "
        "(ceiling). POPGym's paper trains 15M steps per task: at this CPU budget most tasks are far from solved, "
        "and the certificates say where memory already pays.",
        (
            "--suite", "POPGym", "--agent", "ppo-mlp,ppo-gru,ppo-lstm", "--certify",
            "--steps", "100000", "--seeds", "3",
        ),
        paper="popgym_paper_mmer.json",
    ),
    "mikasa-base-vector": Baseline(
        "MIKASA-Base's native vector tasks: each ID's certificate",
        "The native MIKASA-Base tasks with vector observations (the classic T-Mazes, Memory Length, Memory Cards, "
        "Numpad) and MEM's Passive T-Mazes: per ID `ppo-mlp` (floor) and `ppo-lstm` (memory) on `partial` and "
        "`ppo-mlp` on `oracle` (ceiling), 3 seeds of 100k environment steps each, the agents' shipped defaults "
        "and each ID's tuned cell config.",
        (
            "--ids", "MIKASA/TMaze*,MIKASA/MemoryLength*,MIKASA/MemoryCards*,MIKASA/Numpad*",
            "--agent", "ppo-mlp,ppo-lstm", "--certify", "--steps", "100000", "--seeds", "3",
        ),
    ),
    "pobax-vector": Baseline(
        "POBAX's native vector tasks: each ID's certificate",
        "POBAX's tasks with vector (or small dict) observations that membench implements natively (T-Maze 10, "
        "RockSample, Battleship, the mazes) and its partially observable MuJoCo tasks (-P: positions only, -V: "
        "velocities only): per ID `ppo-mlp` (floor) and `ppo-lstm` (memory) on `partial` and `ppo-mlp` on "
        "`oracle` (ceiling), 3 seeds of 100k environment steps each with membench's shipped defaults (POBAX's "
        "own hyperparameters and budgets are the `experiments/bench/pobax-*.yaml` specs for `membench certify`).",
        (
            "--suite", "POBAX", "--ids",
            "POBAX/TMaze*,POBAX/RockSample*,POBAX/Battleship*,POBAX/Maze*,POBAX/*-P-v0,POBAX/*-V-v0",
            "--agent", "ppo-mlp,ppo-lstm", "--certify", "--steps", "100000", "--seeds", "3",
        ),
    ),
    "popgym-gtrxl-easy": Baseline(
        "POPGym, Easy level: PPO with a GTrXL core",
        "The 16 Easy POPGym IDs with `ppo-gtrxl` on `partial` at the `popgym` baseline's budget (3 seeds of 100k "
        "steps), scored against that baseline's certificates (`--reference`): its normalised scores sit beside the "
        "MLP, GRU and LSTM rows there. Needs `results/popgym/` (collect `popgym` first).",
        (
            "--ids", "POPGym/*Easy-v0", "--agent", "ppo-gtrxl", "--steps", "100000", "--seeds", "3",
            "--reference", "{results}/popgym",
        ),
    ),
    "image-representatives": Baseline(
        "One representative per image-observation family: each ID's certificate",
        "One ID per image (or image-in-a-dict) family that trains at CPU speed: Ballet, Passive Visual Match, "
        "Mortar Mayhem, Mystery Path, Searing Spotlights, MiniGrid Memory, ViZDoom Two-Colors, STORI (Breakout "
        "Type 1) and POBAX's pixel MuJoCo (HalfCheetah): per ID `ppo-mlp` (floor) and `ppo-lstm` (memory) on "
        "`partial` and `ppo-mlp` on `oracle` (ceiling), 3 seeds of 100k environment steps each with the agents' "
        "shipped image defaults (their 5M-step budget cut to 100k). Left out: Memory Maze (MuJoCo renders about "
        "30 steps/s here: hours per run), MIKASA-Robo (ManiSkill renders about 7 steps/s on this CPU: a 100k-step run "
        "would take four hours; its GPU path needs SAPIEN's PhysX GPU library) and Crafter (the baseline "
        "`pobax-crafter`: its extra needs a Python environment of its own). At 100k steps most image tasks are far "
        "from solved: the verdicts say where memory already pays.",
        (
            "--ids",
            "MIKASA/BalletEasy-v0,MIKASA/PassiveVisualMatch-v0,MIKASA/MortarMayhemGrid-v0,MIKASA/MysteryPathGrid-v0,"
            "MIKASA/SearingSpotlights-v0,MIKASA/MiniGridMemoryS7-v0,MIKASA/ViZDoomTwoColors-v0,"
            "STORI/Breakout-Type1-v0,POBAX/HalfCheetah-Pixels-v0",
            "--agent", "ppo-mlp,ppo-lstm", "--certify", "--steps", "100000", "--seeds", "3",
        ),
    ),
    "pobax-crafter": Baseline(
        "POBAX's no-inventory Crafter: its certificate",
        "The image family `image-representatives` leaves out: POBAX's Crafter (`POBAX/Crafter-v0`, full Craftax on "
        "CPU jax) with `ppo-mlp` (floor) and `ppo-lstm` (memory) on `partial` and `ppo-mlp` on `oracle` (ceiling), 3 "
        "seeds of 100k environment steps each with the agents' shipped image defaults. It needs "
        "`membench-envs[craftax]`, in a Python environment of its own: craftax requires pygame, which replaces the "
        "pygame-ce that the test environment's Memory Gym reference runs on. jax runs single-threaded (one process "
        "per core) and keeps its compiled code in `runs/baselines/jax-cache` (each batch size compiles for minutes "
        "once). POBAX trains 5e8 steps: at 100k every agent is near the start of learning.",
        (
            "--ids", "POBAX/Crafter-v0", "--agent", "ppo-mlp,ppo-lstm", "--certify", "--steps", "100000",
            "--seeds", "3",
        ),
        environ=(
            ("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"),
            ("JAX_PLATFORMS", "cpu"),
            ("JAX_COMPILATION_CACHE_DIR", "{runs}/jax-cache"),
        ),
    ),
}  # fmt: skip
#: the finished seeds of a baseline's unfinished run, committed between sittings (module docstring)
LEDGER = "finished-seeds.jsonl"
#: the columns of metrics.jsonl the ledger keeps per iteration (the learning curve; evaluations are kept whole)
CURVE_KEYS = ("iteration", "global_step", "episodes", "return_mean", "length_mean", "success_rate", "time")
#: a baseline's reading of its numbers, written by hand in ``results/<name>/`` after `collect`; `docs` shows it
FINDINGS = "findings.md"
#: what `collect` copies from a finished suite run (membench_agents.analysis.scorecard and .certificate)
SUMMARIES = (
    "scorecard.json",
    "scorecard.md",
    "scorecard.png",
    "certificates.json",
    "certificates.md",
    "certificates.png",
)

#: what the README of ``results/<name>/`` says each kind of summary holds
FILES = (
    ("scorecard", "per task and across tasks, normalised scores"),
    ("certificates", "per task floor, memory, ceiling, gap, verdict"),
)


def _folders(runs: Path, name: str) -> list[Path]:
    root = runs / name / "scorecard"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def _unfinished(runs: Path, name: str) -> list[Path]:
    return [p for p in _folders(runs, name) if not (p / "scorecard.json").is_file()]


def run(name: str, runs: Path, jobs: int | None, results: Path) -> int:
    """Continue the baseline's latest unfinished suite run; else start one, filled first with the seeds of its
    ledger when there is one. Whenever it stops, write the ledger; when it is done, collect its summaries."""
    from membench_agents import cli

    for key, value in BASELINES[name].environ:  # before any worker starts: they inherit them
        os.environ.setdefault(key, value.format(runs=runs))
    extra = [] if jobs is None else ["--jobs", str(jobs)]
    unfinished = _unfinished(runs, name)
    ledger = results / name / LEDGER
    if unfinished:
        folder = unfinished[-1]
    elif ledger.is_file():
        args = cli.build_parser().parse_args(["bench", *_args(name, results), "--out", str(runs / name)])
        folder = cli.new_suite_run(args).path
        try:
            print(f"baselines: {restore(ledger, folder)} finished seeds restored from {ledger}", file=sys.stderr)
        except SystemExit:  # a bad ledger: no half-filled folder for the next `run` to continue
            shutil.rmtree(folder)
            raise
    else:
        folder = None
    try:
        if folder is None:
            code = cli.main(["bench", *_args(name, results), "--out", str(runs / name), *extra])
        else:
            code = cli.main(["bench", "--resume", str(folder), *extra])
    finally:
        if _folders(runs, name):
            save(name, runs, results)
    if code == 0:
        collect(name, runs, results)
    return code


def state(name: str, results: Path) -> str:
    """Where the baseline stands in git: collected, or how many seeds its ledger holds, or not started."""
    if (results / name / "README.md").is_file():
        return f"collected: {results / name}/"
    ledger = results / name / LEDGER
    if ledger.is_file():
        return f"unfinished: its ledger holds {len(ledger.read_text().splitlines())} finished seeds ({ledger})"
    return "not run yet"


def _curve_row(row: dict[str, Any]) -> dict[str, Any]:
    return row if "eval" in row else {k: row[k] for k in CURVE_KEYS if k in row}


def save(name: str, runs: Path, results: Path) -> int:
    """Write the finished seeds of the baseline's latest run folder into its ledger (entries of other seeds the
    ledger already holds are kept); return how many it holds."""
    from membench_agents.runs.folder import CONFIG
    from membench_agents.runs.loop import read_eval

    folders = _folders(runs, name)
    if not folders:
        sys.exit(f"baselines: no run of {name} under {runs / name}; run `python {__file__} run {name}`")
    path = results / name / LEDGER
    entries = {(e["cell"], e["seed"]): e for e in _read_ledger(path)} if path.is_file() else {}
    for cell in sorted(p for p in folders[-1].iterdir() if (p / CONFIG).is_file()):
        for seed_dir in sorted(cell.glob("seed_*")):
            if not (seed_dir / "eval.json").is_file():
                continue
            summary = read_eval(seed_dir)
            rows = [json.loads(line) for line in (seed_dir / "metrics.jsonl").read_text().splitlines() if line]
            entry = {
                "cell": cell.name,
                "seed": summary["seed"],
                "eval": summary,
                "metrics": list(map(_curve_row, rows)),
            }
            entries[(cell.name, summary["seed"])] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(entries[k], separators=(",", ":")) + "\n" for k in sorted(entries)))
    tmp.replace(path)
    print(f"baselines: {len(entries)} finished seeds of {name} in {path}", file=sys.stderr)
    return len(entries)


def _read_ledger(path: Path) -> list[dict[str, Any]]:
    """The ledger's entries, each checked for its form; one line of error for the first bad line."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        where = f"baselines: {path} line {n}"
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            sys.exit(f"{where} is not valid JSON (truncated or edited?); restore the file from git, or delete the line")
        if not (
            isinstance(e, dict)
            and set(e) == {"cell", "seed", "eval", "metrics"}
            and isinstance(e["cell"], str)
            and type(e["seed"]) is int
            and isinstance(e["eval"], dict)
            and isinstance(e["metrics"], list)
            and all(isinstance(r, dict) for r in e["metrics"])
        ):
            sys.exit(f"{where} is not a ledger entry (cell, seed, eval, metrics); restore the file from git")
        out.append(e)
    return out


def restore(path: Path, folder: Path) -> int:
    """Fill a new run folder with the ledger's seeds, every entry checked first (its cell one of the folder's, its
    seed one of the cell's, its eval.json written by the cell's config and for that seed): nothing is written
    unless all pass. Each seed gets its eval.json and its curve (metrics.jsonl)."""
    from membench_agents.runs.folder import CONFIG, diff_text, read_config, same_config

    cells = {p.name: p for p in folder.iterdir() if (p / CONFIG).is_file()}
    checked = []
    for n, e in enumerate(_read_ledger(path), 1):
        where = f"baselines: {path} line {n}"
        if e["cell"] not in cells:
            sys.exit(f"{where} names the cell {e['cell']!r}, which this baseline does not run; delete the line")
        cfg = read_config(cells[e["cell"]])
        if e["seed"] not in cfg["seeds"] or e["eval"].get("seed") != e["seed"]:
            sys.exit(f"{where}: seed {e['seed']} is not one of the cell's seeds {cfg['seeds']}; delete the line")
        if not isinstance(e["eval"].get("config"), dict):
            sys.exit(f"{where}: its eval.json holds no config; restore the file from git, or delete the line")
        if not same_config(e["eval"]["config"], cfg):
            diff = diff_text(cfg, e["eval"]["config"])
            sys.exit(f"{where} was trained with another config ({diff}); delete the line to train that seed again")
        seed_dir = cells[e["cell"]] / f"seed_{e['seed']}"
        if seed_dir.exists():
            sys.exit(f"{where}: {seed_dir} exists already; the ledger fills only a new run folder")
        checked.append((seed_dir, e))
    for seed_dir, e in checked:
        seed_dir.mkdir()
        (seed_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in e["metrics"]))
        (seed_dir / "eval.json").write_text(json.dumps(e["eval"], indent=1))  # last: a seed with eval.json is done
    return len(checked)


def _args(name: str, results: Path) -> list[str]:
    """The baseline's `membench bench` arguments, ``{results}`` standing for the results folder."""
    return [a.format(results=results) for a in BASELINES[name].args]


def _command(name: str, runs: Path, results: Path) -> str:
    """The shell command `run` amounts to: its environment variables, then `membench bench` with its arguments."""
    environ = [f"{k}={v.format(runs=runs)}" for k, v in BASELINES[name].environ]
    return shlex.join([*environ, "membench", "bench", *_args(name, results)])


def _cpu_hours(folder: Path) -> float:
    """The training time of every run of the suite run (each one process with one torch thread), in hours."""
    seconds = 0.0
    for f in folder.glob("*/results.json"):
        seconds += sum(float(r["train_time_s"]) for r in json.loads(f.read_text())["runs"])
    return seconds / 3600


def collect(name: str, runs: Path, results: Path) -> Path:
    """Copy the latest finished run's summaries into ``results/<name>/`` (the run folder's and the results folder's
    absolute paths written as their paths under the repository) with a README: the command, the budget and the
    CPU-hours."""
    done = [p for p in _folders(runs, name) if (p / "scorecard.json").is_file()]
    if not done:
        sys.exit(f"baselines: no finished run of {name} under {runs / name}; run `python {__file__} run {name}`")
    folder = done[-1]
    out = results / name
    out.mkdir(parents=True, exist_ok=True)
    try:
        shown = folder.resolve().relative_to(ROOT)
    except ValueError:
        shown = Path("runs", "baselines", name, "scorecard", folder.name)
    try:  # (a baseline scored against another's certificates names that one's folder)
        shown_results = results.resolve().relative_to(ROOT)
    except ValueError:
        shown_results = Path("results")
    copied = []
    for f in SUMMARIES:
        src = folder / f
        if not src.is_file():  # (no certificates without --certify; no scorecard plot where no task is normalised)
            continue
        copied.append(f)
        if f.endswith(".png"):
            shutil.copyfile(src, out / f)
        else:
            text = src.read_text().replace(str(folder.resolve()), str(shown))
            (out / f).write_text(text.replace(str(results.resolve()), str(shown_results)))
    card = json.loads((folder / "scorecard.json").read_text())
    certs = json.loads(t.read_text())["tasks"] if (t := folder / "certificates.json").is_file() else []
    verdicts: dict[str, int] = {}
    for c in certs:
        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    b = BASELINES[name]
    git = card.get("git") or {}
    lines = [
        f"# {b.title}",
        "",
        b.description,
        "",
        f"- regenerate: `python experiments/baselines.py run {name}` (resumable), which runs "
        f"`{_command(name, Path('runs', 'baselines'), Path('results'))}`",
        f"- cost: {_cpu_hours(folder):.1f} CPU-hours of training (the runs' training time, one process and one "
        "torch thread each)",
        f"- tasks: {len({t['task'] for t in card['tasks']})}"
        + ("; verdicts: " + ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items())) if certs else ""),
        f"- code: membench commit {str(git.get('commit', 'unknown'))[:12]}"
        + (" (with uncommitted changes)" if git.get("dirty") else "")
        + f"; scorecard written {card.get('created', '?')}",
        "",
        "Files: "
        + ", ".join(
            f"`{stem}.md` / `.json`" + (" / `.png`" if f"{stem}.png" in copied else "") + f" ({what})"
            for stem, what in FILES
            if f"{stem}.json" in copied
        )
        + ".",
    ]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    if (out / LEDGER).is_file() and not _unfinished(runs, name):  # the summaries replace it
        (out / LEDGER).unlink()
    print(f"baselines: {name} collected into {out}", file=sys.stderr)
    return out


def _section(markdown: str, title: str) -> list[str]:
    """The lines of the ``## title`` section of a scorecard.md (without its heading)."""
    lines, keep = [], False
    for line in markdown.splitlines():
        if line.startswith("## "):
            keep = line[3:].strip() == title
            continue
        if keep:
            lines.append(line)
    return lines


def _winner(values: dict[str, float]) -> str:
    """The model with the highest value, or the tied ones joined by '='."""
    best = max(values.values())
    return " = ".join(m for m, v in values.items() if round(v, 3) == round(best, 3))


def beside_the_paper(card: dict, paper: dict) -> list[str]:
    """Markdown lines setting a scorecard's ``partial`` rows beside a published table (``experiments/reference/``
    JSON: ``source``, ``models`` mapping the paper's model names to membench agents, and per ID each model's
    [mean, std]): per ID both sets of values and each one's best model, then how often the best model agrees and
    each model's mean over the IDs both hold."""
    models = paper["models"]
    ours: dict[str, dict[str, float]] = {}
    for t in card["tasks"]:
        if t["obs_variant"] == "partial" and t["agent"] in models.values():
            ours.setdefault(t["env"], {})[t["agent"]] = sum(t["per_run"]) / len(t["per_run"])
    ids = [i for i in paper["tasks"] if set(ours.get(i, {})) == set(models.values())]
    if not ids:
        return []
    names = list(models)
    head = [
        "ID",
        *(f"paper {m}" for m in names),
        "paper's best",
        *(f"membench {models[m]}" for m in names),
        "best here",
    ]
    lines = [
        "### Beside the paper",
        "",
        f"Source: {paper['source']} membench: the final return of each agent (the protocol's evaluation), mean "
        "over this baseline's seeds, at its budget. Different budgets and metrics (the paper's MMER is the best "
        "point of training): compare which model wins, not the numbers.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    agree, wins_paper, wins_ours = 0, dict.fromkeys(names, 0), dict.fromkeys(names, 0)
    for i in ids:
        theirs = {m: paper["tasks"][i][m][0] for m in names}
        here = {m: ours[i][models[m]] for m in names}
        w_paper, w_ours = _winner(theirs), _winner(here)
        agree += w_paper == w_ours
        for w, wins in ((w_paper, wins_paper), (w_ours, wins_ours)):
            if " = " not in w:
                wins[w] += 1
        cells = [i, *(f"{theirs[m]:.3f}" for m in names), w_paper, *(f"{here[m]:.3f}" for m in names), w_ours]
        lines.append("| " + " | ".join(cells) + " |")
    mean_paper = {m: sum(paper["tasks"][i][m][0] for i in ids) / len(ids) for m in names}
    mean_ours = {m: sum(ours[i][models[m]] for i in ids) / len(ids) for m in names}
    lines += [
        "",
        f"Over these {len(ids)} IDs: the best model is the same on {agree}. Sole best: "
        + ", ".join(f"{m} {wins_paper[m]}" for m in names)
        + " in the paper; "
        + ", ".join(f"{m} {wins_ours[m]}" for m in names)
        + " here. Mean over the IDs: "
        + ", ".join(f"{m} {mean_paper[m]:.3f}" for m in names)
        + " in the paper; "
        + ", ".join(f"{m} {mean_ours[m]:.3f}" for m in names)
        + " here.",
        "",
    ]
    return lines


def glance(results: Path, names: list[str]) -> list[str]:
    """Markdown lines: one table row per collected baseline (tasks, budget, verdicts, each row's IQM of normalised
    scores, CPU-hours), read from its summaries, with the totals."""
    from membench_agents.analysis.aggregate import Estimate
    from membench_agents.analysis.certificate import IMPROVABLE, NOT_IMPROVABLE, UNDETERMINED
    from membench_agents.analysis.report import steps_text

    verdicts = {IMPROVABLE: "memory-improvable", NOT_IMPROVABLE: "not improvable", UNDETERMINED: "undetermined"}

    lines = [
        "## At a glance",
        "",
        "| baseline | tasks | steps x seeds | "
        + " | ".join(verdicts.values())
        + " | IQM of normalised scores [95% CI] | CPU-hours |",
        "|---|---|---|" + "---|" * len(verdicts) + "---|---|",
    ]
    totals = {"tasks": 0, "hours": 0.0, **{v: 0 for v in verdicts}}
    for name in names:
        d = results / name
        card = json.loads((d / "scorecard.json").read_text())
        certs = (
            json.loads((d / "certificates.json").read_text())["tasks"] if (d / "certificates.json").is_file() else []
        )
        counts = {v: sum(c["verdict"] == v for c in certs) for v in verdicts}
        budgets = sorted({(t["total_steps"], len(t["seeds"])) for t in card["tasks"]})
        cost = re.search(r"^- cost: ([0-9.]+) CPU-hours", (d / "README.md").read_text(), re.M)
        iqm = "; ".join(f"{r['name']} {Estimate(**r['iqm']).text()}" for r in card["rows"]) or "- (no task normalised)"
        n_tasks = len({t["task"] for t in card["tasks"]})
        lines.append(
            f"| {name} | {n_tasks} | {', '.join(f'{steps_text(n)} x {k}' for n, k in budgets)} | "
            + " | ".join(str(counts[v]) if certs else "-" for v in verdicts)
            + f" | {iqm} | {cost.group(1) if cost else '?'} |"
        )
        totals["tasks"] += n_tasks if certs else 0
        totals["hours"] += float(cost.group(1)) if cost else 0.0
        for v in verdicts:
            totals[v] += counts[v]
    lines += [
        f"| all | {totals['tasks']} certified | | " + " | ".join(str(totals[v]) for v in verdicts) + " | | "
        f"{totals['hours']:.1f} |",
        "",
    ]
    return lines


def docs(results: Path, out: Path) -> Path:
    """docs/results.md: per collected baseline its README, its certificates table and plot, and the scorecard's
    cross-task table and plot."""
    rel = Path("..") / results.resolve().relative_to(ROOT) if results.resolve().is_relative_to(ROOT) else results
    lines = [
        "# Results: the published CPU baselines",
        "",
        "<!-- generated by `python experiments/baselines.py docs` from results/; edit that script, not this page -->",
        "",
        "Each baseline is one suite run at one CPU budget, with each ID's certificate (`membench bench --suite ... "
        "--certify`, [methodology](methodology.md#suite-scorecards-membench-bench---suite)) or, for an agent set "
        "beside another baseline's rows, scored against that baseline's certificates (`--reference`). A task is "
        "*memory-improvable at this budget* when the gap between the memoryless agent on `oracle` (ceiling) and on "
        "`partial` (floor) has a 95 % interval above 0: there, a memory agent has something to gain and its "
        "share of the gap closed measures its memory. *Not improvable* means the ceiling is within the tolerance "
        "of the floor at this budget: the task does not test memory here (too hard for the ceiling agent too, or "
        "solvable without memory), so it should not be read as a memory result at this budget. *Undetermined*: "
        "more seeds or steps are needed.",
        "",
        "Each baseline's folder opens as one offline page too: `membench report results/NAME --html NAME.html` "
        "(its tables, plots and provenance).",
        "",
    ]
    # the baselines only: results/ holds other experiments' summaries too (results/horizon-probe/)
    names = [n for n in sorted(BASELINES) if (results / n / "README.md").is_file()]
    if not names:
        lines.append("No baseline has been collected yet.")
    else:
        lines += glance(results, names)
    for name in names:
        d = results / name
        readme = (d / "README.md").read_text().splitlines()
        lines += ["#" + readme[0], *readme[1:], ""]
        if (d / FINDINGS).is_file():  # written by hand; `collect` leaves it alone
            lines += ["### What it shows", "", *(d / FINDINGS).read_text().strip().splitlines(), ""]
        if (d / "certificates.md").is_file():
            cert_md = (d / "certificates.md").read_text().splitlines()
            lines += ["### Certificates", "", *cert_md[1:], ""]
            lines += [f"![certificates of {name}]({rel / name / 'certificates.png'})", ""]
        lines += [
            "### Scorecard across tasks",
            "",
            *_section((d / "scorecard.md").read_text(), "Across tasks (normalised scores)"),
        ]
        lines += [""]
        if (d / "scorecard.png").is_file():  # (none where no task could be normalised)
            lines += [f"![scorecard of {name}]({rel / name / 'scorecard.png'})", ""]
        if BASELINES[name].paper:
            paper = json.loads((ROOT / "experiments" / "reference" / str(BASELINES[name].paper)).read_text())
            lines += beside_the_paper(json.loads((d / "scorecard.json").read_text()), paper)
        lines += [f"Per task and per memory type: [{name}/scorecard.md]({rel / name / 'scorecard.md'}).", ""]
    out.write_text("\n".join(lines).rstrip() + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["list", "run", "save", "collect", "docs"])
    p.add_argument("name", nargs="?", choices=sorted(BASELINES))
    p.add_argument("--jobs", type=int, help="worker processes of `run` (default: membench's)")
    p.add_argument("--runs", type=Path, default=ROOT / "runs" / "baselines", help="where the run folders live")
    p.add_argument("--results", type=Path, default=ROOT / "results", help="where the summaries are committed")
    p.add_argument("--docs", type=Path, default=ROOT / "docs" / "results.md", help="the page `docs` writes")
    a = p.parse_args(argv)
    if a.command in ("run", "save", "collect") and a.name is None:
        p.error(f"{a.command} needs a baseline: {', '.join(BASELINES)}")
    if a.command == "list":
        for name, b in BASELINES.items():
            print(f"{name}: {b.title}\n  {_command(name, a.runs, a.results)}\n  {state(name, a.results)}")
        return 0
    if a.command == "run":
        return run(a.name, a.runs, a.jobs, a.results)
    if a.command == "collect":
        collect(a.name, a.runs, a.results)
        return 0
    if a.command == "save":
        save(a.name, a.runs, a.results)
        return 0
    print(docs(a.results, a.docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
