"""One static, offline HTML page of a result folder (``membench report PATHS --html OUT``).

The kind of folder is told by the files it holds (:func:`detect`), in this order:

- ``certificate``: a ``membench certify`` folder with ``certificate.json`` (and ``certificate.png``);
- ``scorecard``: a suite run (``membench bench --suite``) with ``scorecard.json`` and ``scorecard.md``;
- ``sweep``: a ``membench sweep`` folder with ``sweep_results.json`` and ``sweep_results.md``;
- ``bench``: a ``membench bench`` folder with ``bench.yaml`` and the report's ``table.md``;
- ``runs``: any other paths holding run folders (``results.json``), as ``membench report PATHS`` finds them.

The page shows what the folder holds, computing no statistic again: its tables are the Markdown tables the
folder's command wrote (``scorecard.md``, ``sweep_results.md``, ``table.md``) or ``membench report --markdown``
prints (run folders), the certificate's numbers from ``certificate.json``; its plots are the folder's PNG files
(and, for run folders, the comparison plot of ``membench report``), embedded as ``data:`` URIs so the one file
opens anywhere without a network; and the provenance: the command that made the folder where it records one, the
package versions, git commit and date each run recorded, each cell's resolved ``config.yaml``, and the membench
that wrote the page.

:func:`build` makes the page's context (a dict per folder kind), :func:`render` the HTML (a Jinja2 template,
``templates/report.html.j2``, autoescaped: every string from a folder is text, never markup), :func:`write`
both into a file.
"""

from __future__ import annotations

import base64
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from membench_agents.analysis.certificate import CERTIFICATE
from membench_agents.analysis.certificate import META_FILE as CERTIFY_FILE
from membench_agents.analysis.report import BENCH_TABLE, SWEEP_FILE
from membench_agents.analysis.report import SWEEP_RESULTS_JSON as SWEEP_RESULTS
from membench_agents.analysis.report import SWEEP_RESULTS_MD as SWEEP_MD
from membench_agents.analysis.scorecard import MARKDOWN as SCORECARD_MD
from membench_agents.analysis.scorecard import SCORECARD
from membench_agents.errors import ConfigError
from membench_agents.runs.bench import BENCH_FILE
from membench_agents.runs.folder import CONFIG, RESULTS, RunFolderError, folder_name, git_info, read_json, versions
from membench_agents.runs.suite import META_FILE as SCORECARD_FILE

KINDS = {
    "certificate": "memory-improvability certificate (membench certify)",
    "scorecard": "suite scorecard (membench bench --suite)",
    "sweep": "experiment-design sweep (membench sweep)",
    "bench": "bench (membench bench)",
    "runs": "run folders (membench report)",
}
TEMPLATE = "report.html.j2"
#: The files that mark each folder kind; the unfinished kinds with the command that finishes them.
_UNFINISHED = (
    (CERTIFY_FILE, "certificate", CERTIFICATE, "membench certify --resume"),
    (SCORECARD_FILE, "suite run", SCORECARD, "membench bench --resume"),
    (SWEEP_FILE, "sweep", SWEEP_RESULTS, "membench sweep --resume"),
    (BENCH_FILE, "bench", BENCH_TABLE, "membench bench --resume"),
)
_PNG = b"\x89PNG\r\n\x1a\n"
_VERSION_KEYS = ("python", "torch", "numpy", "gymnasium", "membench_envs", "membench_agents")


# ------------------------------------------------------------------------------------------------------
# the kind of folder
# ------------------------------------------------------------------------------------------------------
def detect(paths: Sequence[str | os.PathLike]) -> str:
    """The kind of what ``paths`` hold (module docstring); one :class:`ConfigError` for a path that does not
    exist, a certificate, suite run, sweep or bench that is not finished, or paths that hold none of them."""
    from membench_agents.analysis.report import find_runs

    folders = [Path(p) for p in paths]
    if not folders:
        raise ConfigError("membench report --html needs a folder")
    for p in folders:
        if not p.exists():
            raise ConfigError(f"{p} does not exist")
    if len(folders) == 1 and folders[0].is_dir():
        p = folders[0]
        for kind, files in (
            ("certificate", (CERTIFICATE,)),
            ("scorecard", (SCORECARD,)),
            ("sweep", (SWEEP_RESULTS,)),
            ("bench", (BENCH_FILE, BENCH_TABLE)),
        ):
            if all((p / f).is_file() for f in files):
                return kind
        for marker, what, missing, resume in _UNFINISHED:
            if (p / marker).is_file():
                raise ConfigError(f"{p} is a {what} that is not finished (no {missing}); continue it with {resume} {p}")
    if find_runs(folders):
        return "runs"
    where = ", ".join(map(str, folders))
    raise ConfigError(
        f"{where} holds none of what membench report --html shows: a certificate ({CERTIFICATE}), a suite "
        f"scorecard ({SCORECARD}), a sweep ({SWEEP_RESULTS}), a bench ({BENCH_FILE} and {BENCH_TABLE}) or run "
        f"folders ({RESULTS})"
    )


# ------------------------------------------------------------------------------------------------------
# the pieces of a page
# ------------------------------------------------------------------------------------------------------
def markdown_sections(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The title (``# ``) and sections (``## ``) of Markdown that membench writes (scorecard.md,
    sweep_results.md, table.md, ``report --markdown``): each section a list of blocks, a table (``head``,
    ``rows``; the ``|---|`` line dropped), a list (``- `` lines), a command (a line in backticks) or a line of
    text."""
    title = None
    sections: list[dict[str, Any]] = [{"title": None, "blocks": []}]
    for line in text.splitlines():
        s = line.strip()
        blocks = sections[-1]["blocks"]
        last = blocks[-1] if blocks else None
        if not s:
            if last is not None:
                last["closed"] = True
        elif s.startswith("## "):
            sections.append({"title": s[3:].strip(), "blocks": []})
        elif s.startswith("# ") and title is None:
            title = s[2:].strip()
        elif s.startswith("|"):
            cells = [c.strip() for c in (s[1:-1] if s.endswith("|") and len(s) > 1 else s[1:]).split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            if last is not None and last["kind"] == "table" and not last.get("closed"):
                last["rows"].append(cells)
            else:
                blocks.append({"kind": "table", "head": cells, "rows": []})
        elif s.startswith("- "):
            if last is not None and last["kind"] == "list" and not last.get("closed"):
                last["items"].append(s[2:])
            else:
                blocks.append({"kind": "list", "items": [s[2:]]})
        elif len(s) > 2 and s[0] == s[-1] == "`" and "`" not in s[1:-1]:
            blocks.append({"kind": "code", "text": s[1:-1]})
        else:
            blocks.append({"kind": "text", "text": s})
    for section in sections:
        for b in section["blocks"]:
            b.pop("closed", None)
    return title, [s for s in sections if s["blocks"] or s["title"]]


def image(path: Path, title: str, notes: list[str]) -> dict[str, str] | None:
    """A PNG file as ``{"title", "uri"}`` with a ``data:`` URI; None (and a note) where it is absent or not a
    PNG."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    if not data.startswith(_PNG):
        notes.append(f"{path} is not a PNG image: left out")
        return None
    return {"title": title, "uri": "data:image/png;base64," + base64.b64encode(data).decode("ascii")}


def _images(items: Iterable[tuple[Path, str]], notes: list[str]) -> list[dict[str, str]]:
    return [img for path, title in items if (img := image(path, title, notes)) is not None]


def _cell_dir(root: Path, name: Any, what: str) -> Path:
    """``root / name`` for a cell folder named in a folder's file: one plain folder name (so nothing outside the
    folder is read into the page)."""
    parts = str(name).split("/")
    for part in parts:
        folder_name(part, what)
    return root.joinpath(*parts)


def cell(run_dir: Path, name: str) -> dict[str, Any]:
    """A cell's provenance: its versions, git commit and date (results.json) and its resolved config.yaml."""
    res: dict[str, Any] = {}
    if (run_dir / RESULTS).is_file():
        res = read_json(
            run_dir / RESULTS, "membench results file", f"rebuild it with membench train --resume {run_dir}"
        )
    if (run_dir / CONFIG).is_file():
        config = (run_dir / CONFIG).read_text(errors="replace")
    else:
        import yaml

        config = yaml.safe_dump(res.get("config") or {}, sort_keys=False) if res.get("config") else "(no config.yaml)"
    _, found, git, created = _record(name, res)
    return {"name": name, "path": str(run_dir), "versions": found, "git": git, "created": created, "config": config}


def _git_text(git: Any) -> str:
    if not isinstance(git, dict) or not git.get("commit"):
        return "unknown"
    return f"{str(git['commit'])[:12]}{' (with uncommitted changes)' if git.get('dirty') else ''}"


Record = tuple[str, dict[str, Any], str, str]
"""what recorded it, the versions, the git commit, the date"""


def _record(what: str, data: dict[str, Any]) -> Record:
    """The provenance a membench JSON file records (its versions, git and created keys)."""
    found = data.get("versions")
    return what, found if isinstance(found, dict) else {}, _git_text(data.get("git")), str(data.get("created") or "")


def _version_table(records: Sequence[Record]) -> dict[str, Any]:
    """Rows of (what, versions, git, date): the versions the folder's files and runs recorded."""
    keys = list(_VERSION_KEYS)
    for _, v, _, _ in records:
        keys += [k for k in v if k not in keys]
    head = ["recorded by", *keys, "git commit", "date"]
    rows = [[what, *(str(v.get(k) or "-") for k in keys), git, date or "-"] for what, v, git, date in records]
    return {"kind": "table", "head": head, "rows": rows}


def _table(head: list[str], rows: list[list[str]]) -> dict[str, Any]:
    return {"kind": "table", "head": head, "rows": rows}


def _page(
    kind: str,
    title: str,
    paths: Sequence[Path],
    *,
    command: str | None,
    sections: list[dict[str, Any]],
    images: list[dict[str, str]],
    cells: list[dict[str, Any]],
    record: Record | None = None,
    summary: Sequence[tuple[str, str]] = (),
    about: Sequence[tuple[str, str]] = (),
    notes: Sequence[str] = (),
    cell_images: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    records = [] if record is None else [record]
    records += [(f"run {c['name']}", c["versions"], c["git"], c["created"]) for c in cells]
    dates = [r[3] for r in records if r[3]]
    return {
        "kind": kind,
        "kind_text": KINDS[kind],
        "title": title,
        "paths": [str(p) for p in paths],
        "command": command,
        "created": record[3] if record is not None and record[3] else max(dates, default=None),
        "summary": list(summary),
        "about": list(about),
        "sections": sections,
        "images": images,
        "cell_images": list(cell_images),
        "notes": list(notes),
        "provenance": _version_table(records) if records else None,
        "cells": cells,
        "generated": {
            "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "membench_agents": versions().get("membench_agents") or "unknown",
            "git": _git_text(git_info()),
        },
    }


# ------------------------------------------------------------------------------------------------------
# one context per kind
# ------------------------------------------------------------------------------------------------------
def _certificate(path: Path, title: str | None) -> dict[str, Any]:
    from membench_agents.analysis.aggregate import Estimate
    from membench_agents.analysis.certificate import PLOT, ROLES, alike_note

    keys = (
        "env",
        "metric",
        "total_steps",
        "seeds",
        "protocol",
        "cells",
        "gap",
        "verdict",
        "rule",
        "statistics",
        *ROLES,
    )
    cert = read_json(path / CERTIFICATE, "certificate", f"rebuild it with membench certify --resume {path}", keys)
    pct = f"{cert['statistics']['confidence']:.0%}"

    def est(e: Any) -> str:
        return "undefined" if e is None else Estimate(**e).text()

    rows = [
        [
            role,
            f"{cert['cells'][role]['agent']} ({cert['cells'][role]['obs_variant']})",
            est(cert[role]),
            " ".join(f"{v:.3f}" for v in cert["cells"][role]["per_run"]),
        ]
        for role in ROLES
    ]
    rows.append(["gap", "ceiling - floor", est(cert["gap"]), ""])
    rows.append(["share", "closed by memory", est(cert.get("share_closed")), ""])
    kw = ",".join(f"{k}={v}" for k, v in sorted((cert.get("env_kwargs") or {}).items()))
    from membench_agents.analysis.report import steps_text

    budget = (
        f"{cert['env']}{f' [{kw}]' if kw else ''}: {cert['metric']}, {steps_text(cert['total_steps'])} steps x "
        f"{len(cert['seeds'])} seeds, mean [{pct} stratified-bootstrap interval, {cert['statistics']['reps']} "
        "resamples]"
    )
    rule = cert["rule"].get(cert["verdict"], "")
    sections: list[dict[str, Any]] = [
        {
            "title": "Certificate",
            "blocks": [
                {"kind": "text", "text": budget},
                _table(["", "cell", f"mean [{pct} CI]", "runs"], rows),
                {"kind": "text", "text": f"verdict: {cert['verdict']} ({rule}; tolerance {cert['rule']['tolerance']})"},
            ],
        }
    ]
    if cert["statistics"].get("method"):
        sections[0]["blocks"].append({"kind": "text", "text": f"statistics: {cert['statistics']['method']}"})
    cells = [
        cell(_cell_dir(path, cert["cells"][role]["folder"], f"the {role} cell's folder"), f"{role}: {c['folder']}")
        for role, c in ((r, cert["cells"][r]) for r in ROLES)
    ]
    notes: list[str] = [note] if (note := alike_note([cert])) else []
    images = _images([(path / PLOT, "the three learning curves and the final values with their intervals")], notes)
    cell_images = _images([(Path(c["path"]) / "learning_curve.png", c["name"]) for c in cells], notes)
    return _page(
        "certificate",
        title or f"memory-improvability certificate of {cert['env']}",
        [path],
        command=cert.get("command"),
        summary=[("verdict", str(cert["verdict"]))],
        sections=sections,
        images=images,
        cell_images=cell_images,
        cells=cells,
        record=_record("certificate.json", cert),
        notes=notes,
    )


def _markdown_file(path: Path, what: str, fix: str) -> str:
    if not path.is_file():
        raise RunFolderError(f"{path} does not exist ({what}); {fix}")
    return path.read_text(errors="replace")


def _scorecard(path: Path, title: str | None) -> dict[str, Any]:
    from membench_agents.analysis.certificate import TABLE_MARKDOWN, TABLE_PLOT
    from membench_agents.analysis.scorecard import PLOT

    fix = f"rebuild it with membench report {path} --scorecard"
    data = read_json(path / SCORECARD, "scorecard", fix, ("tasks",))
    md_title, sections = markdown_sections(_markdown_file(path / SCORECARD_MD, "the scorecard's tables", fix))
    command = data.get("command")
    for s in sections:  # the command is shown once, above the tables
        s["blocks"] = [b for b in s["blocks"] if not (b["kind"] == "code" and b["text"] == command)]
    notes: list[str] = []
    figures = [(path / PLOT, "IQM and performance profiles of the normalised scores")]
    if (path / TABLE_MARKDOWN).is_file():  # a suite run with --certify: its certificates first
        cert_title, cert_sections = markdown_sections(_markdown_file(path / TABLE_MARKDOWN, "the certificates", fix))
        sections = [
            {
                "title": cert_title or "Memory-improvability certificates",
                "blocks": [b for x in cert_sections for b in x["blocks"]],
            },
            *sections,
        ]
        figures.insert(
            0, (path / TABLE_PLOT, "the memory-improvability certificates: floor, memory and ceiling per task")
        )
    cells = [cell(_cell_dir(path, t["cell"], "a task's cell folder"), str(t["cell"])) for t in data["tasks"]]
    images = _images(figures, notes)
    cell_images = _images([(Path(c["path"]) / "learning_curve.png", c["name"]) for c in cells], notes)
    return _page(
        "scorecard",
        title or md_title or "suite scorecard",
        [path],
        command=command,
        sections=sections,
        images=images,
        cell_images=cell_images,
        cells=cells,
        record=_record("scorecard.json", data),
        notes=notes,
    )


def _sweep(path: Path, title: str | None) -> dict[str, Any]:
    fix = f"rebuild it with membench sweep --resume {path}"
    data = read_json(path / SWEEP_RESULTS, "sweep results", fix, ("spec", "cells"))
    spec = data["spec"]
    _, sections = markdown_sections(_markdown_file(path / SWEEP_MD, "the sweep's tables", fix))
    # the folder records the spec file, not the command line (--steps, --seeds, ... may have changed the cells)
    about = [("sweep spec", str(spec["source"]))] if spec.get("source") else []
    cells = [cell(_cell_dir(path, c["run_dir"], "a cell's folder"), str(c["name"])) for c in data["cells"]]
    notes: list[str] = []
    images = _images(
        [
            (path / "sweep.png", "success against K and against ξ"),
            (path / "generalization.png", "length generalisation: train length x eval length"),
            (path / "aggregate.png", "aggregate over the sweep's cells: IQM and performance profiles"),
        ],
        notes,
    )
    cell_images = _images([(Path(c["path"]) / "learning_curve.png", c["name"]) for c in cells], notes)
    if spec.get("description"):
        sections.insert(0, {"title": None, "blocks": [{"kind": "text", "text": str(spec["description"])}]})
    return _page(
        "sweep",
        title or spec.get("title") or f"sweep {spec.get('name')} on {spec.get('env')}",
        [path],
        command=None,
        about=about,
        sections=sections,
        images=images,
        cell_images=cell_images,
        cells=cells,
        notes=notes,
    )


def _bench(path: Path, title: str | None) -> dict[str, Any]:
    from membench_agents.analysis.report import mean_text
    from membench_agents.runs import bench

    meta = bench.read_meta(path)
    fix = f"rebuild it with membench bench --resume {path}"
    _, sections = markdown_sections(_markdown_file(path / BENCH_TABLE, "the bench's table", fix))
    b = bench.Bench(path, meta["cells"], [], [], meta.get("title"), meta.get("expect") or {})
    rows = []
    for e in bench.expectations(b):
        r = e.results
        rows.append(
            [e.label, mean_text(r["mean"], r["sem"], r["n_runs"]), f"[{e.low}, {e.high}]", "ok" if e.met else "NOT MET"]
        )
    if rows:
        sections.append({"title": "Expected ranges", "blocks": [_table(["cell", "mean ± SEM", "expected", ""], rows)]})
    cells = [cell(d, label) for label, d in zip(b.labels, b.cell_dirs, strict=True)]
    notes: list[str] = []
    images = _images([(path / "comparison.png", "learning curves and final values of the cells")], notes)
    cell_images = _images([(Path(c["path"]) / "learning_curve.png", c["name"]) for c in cells], notes)
    return _page(
        "bench",
        title or meta.get("title") or f"bench {path.name}",
        [path],
        command=None,
        sections=sections,
        images=images,
        cell_images=cell_images,
        cells=cells,
        notes=notes,
    )


def _runs(paths: list[Path], title: str | None) -> dict[str, Any]:
    from membench_agents.analysis.report import find_runs, report

    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="membench-html-") as tmp:
        try:
            text, plot, skipped = report(paths, out=Path(tmp) / "report.png", markdown=True, title=title)
        except FileNotFoundError as e:
            raise ConfigError(str(e)) from None
        images = _images([(plot, "learning curves and final values (membench report)")], notes)
    bad = {p.resolve() for p, _ in skipped}
    runs = [d for d in find_runs(paths) if d.resolve() not in bad]
    notes += [f"skipped, unreadable: {reason}" for _, reason in skipped]
    _, sections = markdown_sections(text)
    sections[0]["title"] = "Runs (mean ± SEM over training runs)"
    cells = [cell(d, str(d)) for d in runs]
    cell_images = _images([(d / "learning_curve.png", str(d)) for d in runs], notes)
    return _page(
        "runs",
        title or f"membench report of {len(runs)} run folder(s)",
        paths,
        command=None,
        sections=sections,
        images=images,
        cell_images=cell_images,
        cells=cells,
        notes=notes,
    )


_BUILDERS: dict[str, Callable[[Path, str | None], dict[str, Any]]] = {
    "certificate": _certificate,
    "scorecard": _scorecard,
    "sweep": _sweep,
    "bench": _bench,
}


def build(paths: Sequence[str | os.PathLike], title: str | None = None) -> dict[str, Any]:
    """The context of the page of ``paths`` (:func:`detect` tells its kind); ``title`` replaces the kind's own."""
    kind = detect(paths)
    folders = [Path(p) for p in paths]
    try:
        if kind == "runs":
            return _runs(folders, title)
        return _BUILDERS[kind](folders[0], title)
    except ConfigError:  # a RunFolderError, or a cell's folder name that is not one
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise RunFolderError(
            f"{folders[0]} holds a {kind} file that is not in membench's format ({type(e).__name__}: {e})"
        ) from None


def render(context: dict[str, Any]) -> str:
    """The HTML of a page context (:func:`build`), by the package's Jinja2 template, every value escaped."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("membench_agents.analysis", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(TEMPLATE).render(**context)


def check_out(out: str | os.PathLike) -> Path:
    """``out`` if it names an .html file (not a folder), else one :class:`ConfigError`."""
    path = Path(out)
    if path.suffix.lower() not in (".html", ".htm") or not path.stem:
        raise ConfigError(f"--html must name the page to write, a file ending in .html; got {str(out)!r}")
    if path.is_dir():
        raise ConfigError(f"--html {str(out)!r} is a folder; name the .html file to write")
    return path


def write(paths: Sequence[str | os.PathLike], out: str | os.PathLike, title: str | None = None) -> tuple[Path, str]:
    """Write the page of ``paths`` to ``out``; return its path and the folder kind."""
    out = check_out(out)
    context = build(paths, title)
    html = render(context)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(html, encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot write the page {out}: {e.strerror or e}") from None
    return out, context["kind"]


__all__ = ["KINDS", "build", "check_out", "detect", "image", "markdown_sections", "render", "write"]
