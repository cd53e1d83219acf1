"""`membench report PATHS --html OUT` (membench_agents.analysis.html_report): one static, offline page per folder
kind (certificate, scorecard, sweep, bench, run folders) whose tables are the folder's own Markdown tables or
numbers, whose plots are embedded PNGs, with the provenance; strings from a folder escaped; the errors. The
folders are built from synthetic results files (no training). The slow test opens a page in headless Chromium."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import yaml
from membench_agents.analysis import certificate as cert
from membench_agents.analysis import html_report, report
from membench_agents.analysis import scorecard as sc
from membench_agents.analysis.aggregate import Estimate
from membench_agents.analysis.aggregate import plot as aggregate_plot
from membench_agents.runs import bench

from membench_agents import cli
from tests.agents.test_report import _run as _results_folder
from tests.agents.test_scorecard import _res

PNG = b"\x89PNG\r\n\x1a\n"
TMAZE = "MIKASA/TMazePassiveDense-v0"  # the task test_report's run folders are on


# ------------------------------------------------------------------------------------------------------
# the page, parsed
# ------------------------------------------------------------------------------------------------------
class Page(HTMLParser):
    """The parts of a page the tests read: its tables (head, rows), images, every attribute, the title, the
    summaries of its <details>, the elements seen."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self.images: list[dict[str, str]] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self.title = ""
        self.summaries: list[str] = []
        self.pres: list[str] = []
        self._text: list[str] | None = None
        self._row: list[str] | None = None
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = {k: v or "" for k, v in attrs}
        self.attrs += [(tag, k, v) for k, v in a.items()]
        if tag == "table":
            self.tables.append(([], []))
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td", "title", "summary", "pre"):
            self._text, self._in = [], tag
        elif tag == "img":
            self.images.append(a)

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._row is not None and self._text is not None:
            self._row.append("".join(self._text).strip())
        elif tag == "tr" and self._row is not None:
            head, rows = self.tables[-1]
            if not head and not rows and self.tags[-1] == "th":
                head.extend(self._row)
            else:
                rows.append(self._row)
            self._row = None
        elif tag == "title" and self._text is not None:
            self.title = "".join(self._text)
        elif tag == "summary" and self._text is not None:
            self.summaries.append("".join(self._text).strip())
        elif tag == "pre" and self._text is not None:
            self.pres.append("".join(self._text))
        if tag == self._in:
            self._text, self._in = None, None


def _md_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The pipe tables of Markdown text, read independently of the module: (head, rows)."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip()[1:-1].split("|")]
            if set("".join(cells)) <= {"-"}:
                continue
            if current is None:
                current = (cells, [])
                tables.append(current)
            else:
                current[1].append(cells)
        else:
            current = None
    return tables


def _check_offline(html: str, page: Page, n_images: int) -> None:
    """Every <img> a data: URI that decodes to a PNG; no resource from a network; no script."""
    assert len(page.images) == n_images
    for img in page.images:
        prefix = "data:image/png;base64,"
        assert img["src"].startswith(prefix)
        assert base64.b64decode(img["src"][len(prefix) :], validate=True).startswith(PNG)
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    for tag, key, value in page.attrs:
        assert not (key in ("src", "href", "srcset", "poster", "data") and not value.startswith("data:")), (tag, key)
    assert "http://" not in html and "https://" not in html and "url(" not in html and "@import" not in html


def _page(tmp_path: Path, *paths: Path, title: str | None = None) -> tuple[str, Page]:
    out, _ = html_report.write(paths, tmp_path / "page" / "report.html", title=title)
    text = out.read_text()
    return text, Page(text)


# ------------------------------------------------------------------------------------------------------
# folders from synthetic results
# ------------------------------------------------------------------------------------------------------
def _png(path: Path, seed: int = 0) -> Path:
    import matplotlib.image

    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    matplotlib.image.imsave(path, rng.random((8, 12, 3)))
    return path


def _run(root: Path, name: str, curve: bool = True, **kw) -> Path:
    """A run folder as `membench train` leaves it for the report: results.json (with versions, git and date),
    config.yaml, each seed's metrics.jsonl and the learning curve."""
    d = _results_folder(root, name, **kw)
    res = json.loads((d / "results.json").read_text())
    res |= {
        "versions": {"python": "3.11.7", "torch": "2.13.0", "membench_agents": "0.1.0"},
        "git": {"commit": "abc123", "dirty": False},
        "created": "2026-01-02T03:04:05+0000",
        "protocol": {"episodes_per_run": 100, "deterministic_actions": True, "episode_seeds": {"first": 0, "last": 99}},
    }
    (d / "results.json").write_text(json.dumps(res))
    (d / "config.yaml").write_text(yaml.safe_dump(res["config"], sort_keys=False))
    for s, v in zip(res["seeds"], res["per_run"], strict=True):  # two evaluations during training per seed
        evals = [
            {"global_step": n, "success_rate": v * n / res["total_steps"], "mean_return": v}
            for n in (1, res["total_steps"])
        ]
        (d / f"seed_{s}").mkdir()
        (d / f"seed_{s}" / "metrics.jsonl").write_text("".join(json.dumps({"eval": e}) + "\n" for e in evals))
    if curve:
        _png(d / "learning_curve.png")
    return d


def _certificate(tmp_path: Path) -> Path:
    """A finished certificate folder, written by membench_agents.analysis.certificate.write."""
    path = tmp_path / "certify" / "20260101-000000"
    labels = ["ppo-mlp", "ppo-lstm", "ppo-mlp.oracle"]
    cells = [("ppo-mlp", "partial", (0.5, 0.47, 0.53)), ("ppo-lstm", "partial", (0.9, 1.0, 0.95))]
    cells.append(("ppo-mlp", "oracle", (1.0, 1.0, 0.97)))
    dirs = [
        _run(path, label, agent=a, variant=v, per_run=per_run)
        for label, (a, v, per_run) in zip(labels, cells, strict=True)
    ]
    configs = [json.loads((d / "results.json").read_text())["config"] for d in dirs]
    (path / "bench.yaml").write_text(yaml.safe_dump({"cells": labels, "title": None, "expect": {}}))
    b = bench.Bench(path, labels, configs, [])
    meta = {
        "roles": dict(zip(cert.ROLES, labels, strict=True)),
        "command": f"membench certify --env {TMAZE} --steps 400000 --seeds 0,1,2",
        "tolerance": 0.05,
        "reps": 200,
        "confidence": 0.95,
        "bootstrap_seed": 0,
    }
    (path / "certify.yaml").write_text(yaml.safe_dump(meta))
    cert.write(b, meta)
    return path


def _scorecard(tmp_path: Path) -> Path:
    """A finished suite-run folder: scorecard.json, .md and .png as membench_agents.analysis.scorecard writes
    them, from synthetic results of two tasks and two agents."""
    path = tmp_path / "scorecard" / "20260101-000000"
    results = [
        _res("MIKASA/TMazeClassic-v0", "ppo-mlp", (0.5, 0.4)),
        _res("MIKASA/TMazeClassic-v0", "ppo-lstm", (0.9, 1.0)),
        _res("POPGym/RepeatPreviousEasy-v0", "ppo-mlp", (-0.5, -0.4), metric="return"),
        _res("POPGym/RepeatPreviousEasy-v0", "ppo-lstm", (0.2, 0.4), metric="return"),
    ]
    labels = [f"{r['env'].replace('/', '__')}__{r['agent']}" for r in results]
    card = sc.compute(results, labels=labels, reps=200)
    card.data["command"] = "membench bench --suite MIKASA-Base --steps 1000 --seeds 2"
    card.data["selection"] = {"suite": "MIKASA-Base", "ids": None, "memory_type": None}
    path.mkdir(parents=True)
    for label, r in zip(labels, results, strict=True):
        (path / label).mkdir()
        (path / label / "config.yaml").write_text(yaml.safe_dump(r["config"], sort_keys=False))
    (path / sc.SCORECARD).write_text(json.dumps(card.data))
    (path / sc.MARKDOWN).write_text(sc.markdown(card) + "\n")
    aggregate_plot(card.aggregate, path / sc.PLOT)
    return path


def _sweep(tmp_path: Path) -> Path:
    """A finished sweep folder: sweep_results.json and .md (the sweep's own table function) and its plots."""
    from membench_agents.ltm import sweep

    path = tmp_path / "sweeps" / "tiny" / "20260101-000000"
    rows = []
    for i, (agent, length) in enumerate((("ppo-mlp", 2), ("ppo-lstm", 5))):
        name = f"{agent}_L{length}"
        _run(path / "cells", name, agent=agent, per_run=(0.5 + 0.2 * i, 0.6 + 0.2 * i))
        rows.append(
            {
                "name": name, "agent": agent, "length": length, "K": None, "designs": [0],
                "design_kinds": ["vary_length"], "xi": [length + 1, length + 1], "K_agent": 1,
                "K_eff": None if agent == "ppo-lstm" else 1, "regime": "LTM-only", "valid_ltm": True,
                "metric": "success_rate", "mean": 0.55 + 0.2 * i, "sem": 0.05, "n_runs": 2,
                "per_run": [0.5 + 0.2 * i, 0.6 + 0.2 * i], "run_dir": f"cells/{name}",
            }
        )  # fmt: skip
    spec = {"name": "tiny", "env": TMAZE, "length_kwarg": "corridor_length", "title": None, "description": None}
    out = {"spec": spec | {"source": "experiments/sweeps/tiny.yaml"}, "length_kwarg": "corridor_length"}
    out |= {"cells": rows, "generalization": []}
    (path / "sweep_results.json").write_text(json.dumps(out))
    (path / "sweep_results.md").write_text(sweep.results_table(out, markdown=True) + "\n")
    (path / "sweep.yaml").write_text(yaml.safe_dump({"spec": spec, "cells": []}))
    _png(path / "sweep.png")
    return path


def _bench(tmp_path: Path) -> Path:
    """A finished bench folder: bench.yaml with expected ranges, table.md as the report writes it, the plot."""
    path = tmp_path / "bench" / "20260101-000000"
    dirs = [_run(path, "ppo-mlp", agent="ppo-mlp", per_run=(0.5, 0.5)), _run(path, "ppo-lstm", per_run=(1.0, 0.9))]
    expect = {"ppo-mlp": [0.4, 0.6], "ppo-lstm": [0.99, 1.0]}  # met, not met
    (path / "bench.yaml").write_text(
        yaml.safe_dump({"cells": ["ppo-mlp", "ppo-lstm"], "title": "tiny", "expect": expect})
    )
    (path / "table.md").write_text(report.table(dirs, markdown=True) + "\n")
    _png(path / "comparison.png")
    return path


def test_the_markdown_membench_writes_is_read_into_sections():
    text = "\n".join(
        ["# a title", "", "`membench x --y`", "", "intro", "## first", "", "| a | b |", "|---|---|", "| 1 | 2 |",
         "(a footnote)", "", "| c |", "|---|", "| 3 |", "", "| d |", "|---|", "## notes", "", "- one", "- two"]
    )  # fmt: skip
    title, sections = html_report.markdown_sections(text)
    assert title == "a title"
    assert sections == [
        {"title": None, "blocks": [{"kind": "code", "text": "membench x --y"}, {"kind": "text", "text": "intro"}]},
        {
            "title": "first",
            "blocks": [
                {"kind": "table", "head": ["a", "b"], "rows": [["1", "2"]]},
                {"kind": "text", "text": "(a footnote)"},
                {"kind": "table", "head": ["c"], "rows": [["3"]]},
                {"kind": "table", "head": ["d"], "rows": []},  # a blank line ends a table
            ],
        },
        {"title": "notes", "blocks": [{"kind": "list", "items": ["one", "two"]}]},
    ]


# ------------------------------------------------------------------------------------------------------
# one page per kind
# ------------------------------------------------------------------------------------------------------
def test_a_certificate_page_shows_its_numbers_plots_and_provenance(tmp_path):
    path = _certificate(tmp_path)
    c = json.loads((path / "certificate.json").read_text())
    html, page = _page(tmp_path, path)
    assert html_report.detect([path]) == "certificate"
    assert page.title == f"memory-improvability certificate of {TMAZE}"
    assert c["command"] in html and f"verdict: {c['verdict']}" in html
    (head, rows), versions = page.tables
    assert head == ["", "cell", "mean [95% CI]", "runs"]
    assert [r[0] for r in rows] == [*cert.ROLES, "gap", "share"]
    for role, row in zip(cert.ROLES, rows, strict=False):  # the numbers of certificate.json, as certify prints them
        assert row[2] == Estimate(**c[role]).text() and row[2] in cert.text(c)
        assert row[3] == " ".join(f"{v:.3f}" for v in c["cells"][role]["per_run"])
    assert rows[3][2] == Estimate(**c["gap"]).text()
    # the certificate's plot, then each cell's learning curve
    _check_offline(html, page, n_images=4)
    assert (path / "certificate.png").read_bytes() == base64.b64decode(page.images[0]["src"].split(",", 1)[1])
    # provenance: the certificate's and each run's versions and commits, each cell's config.yaml
    assert versions[0][:3] == ["recorded by", "python", "torch"]
    assert [r[0] for r in versions[1]] == [
        "certificate.json",
        *(f"run {r}: {c['cells'][r]['folder']}" for r in cert.ROLES),
    ]
    assert (
        versions[1][0][-2] == f"{c['git']['commit'][:12]}{' (with uncommitted changes)' if c['git']['dirty'] else ''}"
    )
    assert page.summaries[-3:] == [f"{r}: {c['cells'][r]['folder']}" for r in cert.ROLES]
    assert page.pres == [(path / c["cells"][r]["folder"] / "config.yaml").read_text() for r in cert.ROLES]


def test_a_certificate_page_notes_runs_that_all_score_alike(tmp_path):
    """The note of membench_agents.analysis.certificate.alike_note, on the page too (greedy policies that act alike)."""
    path = _certificate(tmp_path)
    assert "scores the same" not in _page(tmp_path, path)[0]
    c = json.loads((path / "certificate.json").read_text())
    for role in cert.ROLES:
        c["cells"][role]["per_run"] = [0.35, 0.35, 0.35]
    (path / "certificate.json").write_text(json.dumps(c))
    note = cert.alike_note([c])
    assert note is not None and f'<ul class="notes"><li>{note}</li>' in _page(tmp_path, path)[0]


def test_a_scorecard_page_shows_the_tables_of_scorecard_md(tmp_path):
    path = _scorecard(tmp_path)
    html, page = _page(tmp_path, path)
    md = (path / sc.MARKDOWN).read_text()
    expected = _md_tables(md)
    assert len(expected) == 4  # per task, across tasks, by memory type, by suite
    assert page.tables[: len(expected)] == expected
    assert page.title == md.splitlines()[0][2:] == "scorecard MIKASA-Base"
    assert "membench bench --suite MIKASA-Base --steps 1000 --seeds 2" in html
    _check_offline(html, page, n_images=1)
    assert len(page.pres) == 4  # the config.yaml of each cell


def test_a_sweep_and_a_bench_page_show_their_tables_and_plots(tmp_path):
    path = _sweep(tmp_path)
    html, page = _page(tmp_path, path)
    assert html_report.detect([path]) == "sweep"
    assert page.tables[:1] == _md_tables((path / "sweep_results.md").read_text())
    assert "<dt>sweep spec</dt><dd><code>experiments/sweeps/tiny.yaml</code></dd>" in html
    assert "<dt>command</dt>" not in html  # the folder records the spec file, not the command line
    _check_offline(html, page, n_images=3)  # sweep.png, each cell's learning curve

    path = _bench(tmp_path)
    html, page = _page(tmp_path, path)
    assert html_report.detect([path]) == "bench"
    assert page.title == "tiny"
    assert page.tables[0] == _md_tables((path / "table.md").read_text())[0]
    assert page.tables[1] == (
        ["cell", "mean ± SEM", "expected", ""],
        [["ppo-mlp", "0.500 ± 0.000", "[0.4, 0.6]", "ok"], ["ppo-lstm", "0.950 ± 0.050", "[0.99, 1.0]", "NOT MET"]],
    )
    _check_offline(html, page, n_images=3)


def test_a_page_of_run_folders_has_the_report_table_and_its_comparison_plot(tmp_path):
    a = _run(tmp_path / "runs", "a", steps=100_000)
    b = _run(tmp_path / "runs", "b", agent="ppo-mlp", curve=False)
    (tmp_path / "runs" / "broken").mkdir()
    (tmp_path / "runs" / "broken" / "results.json").write_text("{")
    html, page = _page(tmp_path, tmp_path / "runs", title="my runs")
    assert html_report.detect([tmp_path / "runs"]) == "runs"
    assert page.title == "my runs"
    assert page.tables[0] == _md_tables(report.table([a, b], markdown=True))[0]
    _check_offline(html, page, n_images=2)  # the comparison plot, a's learning curve
    assert "skipped, unreadable:" in html and "broken" in html


def test_strings_from_a_folder_are_escaped(tmp_path):
    evil = "<script>alert(1)</script>"
    d = _run(tmp_path, "x")
    res = json.loads((d / "results.json").read_text())
    res["agent"] = res["obs_variant"] = evil
    res["versions"]["torch"] = evil
    (d / "results.json").write_text(json.dumps(res))
    (d / "config.yaml").write_text(f"description: {evil}\n")
    html, page = _page(tmp_path, d, title=f"<b>{evil}</b>")
    assert "script" not in page.tags and "b" not in page.tags
    assert page.title == f"<b>{evil}</b>"  # shown as the text it is
    assert f"{evil} ({evil})" in page.tables[0][1][0][0] and evil in page.tables[1][1][0]
    assert page.pres == [f"description: {evil}\n"]
    assert html.count("&lt;script&gt;") >= 5


# ------------------------------------------------------------------------------------------------------
# the command and its errors
# ------------------------------------------------------------------------------------------------------
def _main(capsys, *args):
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_writes_the_page_and_refuses_what_it_cannot_show(tmp_path, capsys):
    path = _bench(tmp_path)
    out = tmp_path / "site" / "bench.html"
    code, stdout, _ = _main(capsys, "report", str(path), "--html", str(out))
    assert code == 0 and f"html (bench): {out}" in stdout and out.is_file()

    def error(*args) -> str:
        code, stdout, stderr = _main(capsys, "report", *args)
        assert code == 2 and not stdout and len(stderr.splitlines()) == 1, stderr
        assert stderr.startswith("membench: error: ")
        return stderr

    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("nothing of membench's")
    err = error(str(tmp_path / "empty"), "--html", str(out))
    assert "holds none of what membench report --html shows" in err and "certificate.json" in err
    (path / "table.md").unlink()  # a bench not finished
    err = error(str(path), "--html", str(out))
    assert "bench that is not finished (no table.md)" in err and f"membench bench --resume {path}" in err
    assert "cannot be combined with --html" in error(str(path), "--html", str(out), "--aggregate")
    assert "a file ending in .html" in error(str(path), "--html", str(tmp_path / "page.png"))
    assert "does not exist" in error(str(tmp_path / "nowhere"), "--html", str(out))


# ------------------------------------------------------------------------------------------------------
# the page in a browser
# ------------------------------------------------------------------------------------------------------
def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


@pytest.mark.slow
def test_the_page_shows_its_tables_and_plots_in_headless_chromium(tmp_path):
    """The certificate page rendered by Chromium: the screenshot is a PNG whose table and plot regions are not
    blank (several distinct colours in each)."""
    import matplotlib.image

    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium found: install Debian's package with `apt-get install -y chromium`")
    page, _ = html_report.write([_certificate(tmp_path)], tmp_path / "cert.html")
    shot = tmp_path / "shot.png"
    width, height = 1200, 1800
    subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", f"--window-size={width},{height}",
            page.as_uri(),
        ],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert shot.read_bytes().startswith(PNG)
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (height, width)

    def colours(rows: slice) -> int:
        return len(np.unique((pixels[rows] * 255).round().astype(np.uint8).reshape(-1, 3), axis=0))

    def near(rgb: tuple[int, int, int], tol: float = 0.03) -> np.ndarray:
        return np.all(np.abs(pixels - np.array(rgb) / 255) < tol, axis=-1)

    # the certificate's table: its dark header row, then striped rows, in the top half
    header = np.flatnonzero(near((0x1F, 0x4E, 0x79)).sum(axis=1) > 200)
    assert header.size and header[0] < height // 2
    table = slice(header[0], header[0] + 200)
    assert near((0xEE, 0xF3, 0xF8))[table].sum() > 5000 and colours(table) > 10
    # the plot: the floor's, memory's and ceiling's curves in matplotlib's first three colours (the page's own
    # style uses none of them), below the table, in a region of many colours
    rows = []
    for rgb in ((0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x2C, 0xA0, 0x2C)):
        found = np.flatnonzero(near(rgb, 0.05).sum(axis=1))
        assert found.size > 20, rgb
        rows += [found.min(), found.max()]
    assert min(rows) > header[0] + 200
    assert colours(slice(min(rows), max(rows))) > 50
