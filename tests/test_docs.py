"""The docs: the generated task pages are up to date, every ID is on one page, and no page points at a missing file."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from membench_envs import catalogue, cli, docgen

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The hand-written pages (the generated ones are checked by `membench-envs docs --check`).
HAND_WRITTEN = [
    ROOT / "README.md",
    ROOT / "membench_envs" / "README.md",
    ROOT / "membench_agents" / "README.md",
    ROOT / "experiments" / "README.md",
    *sorted(DOCS.glob("*.md")),
]


def test_the_task_pages_are_generated_from_the_catalogue_and_the_docstrings():
    """`membench-envs docs docs --check`: edit the docstring or the catalogue entry, then regenerate the pages."""
    assert cli.main(["docs", str(DOCS), "--check"]) == 0


def test_a_stale_or_missing_page_fails_the_check_and_names_it(tmp_path, capsys):
    assert cli.main(["docs", str(tmp_path)]) == 0
    assert cli.main(["docs", str(tmp_path), "--check"]) == 0
    page = tmp_path / "tasks" / "native.md"
    page.write_text(page.read_text().replace("T-Maze", "T-Maize"))
    (tmp_path / "tasks" / "popgym.md").unlink()
    capsys.readouterr()
    assert cli.main(["docs", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "native.md: out of date" in err and "popgym.md: out of date" in err and "stori.md" not in err
    assert cli.main(["docs", str(tmp_path)]) == 0 and cli.main(["docs", str(tmp_path), "--check"]) == 0


def test_docs_of_a_file_is_one_error_line(tmp_path):
    plain = tmp_path / "plain.md"
    plain.write_text("x\n")
    out = subprocess.run(
        [sys.executable, "-m", "membench_envs.cli", "docs", str(plain)], capture_output=True, text=True
    )
    assert out.returncode == 2 and out.stderr == f"membench-envs: error: {plain} is not a folder\n"


def test_every_id_is_on_exactly_one_page_and_in_the_index():
    where = docgen.page_of()  # raises for an ID on two pages or on none
    assert sorted(where) == sorted(s.id for s in catalogue.all_tasks())
    index = docgen.render_index()
    for env_id, (page, family) in where.items():
        assert f"[`{env_id}`]({page.slug}.md#{family.slug})" in index


def test_two_families_may_not_share_a_slug_which_names_their_pictures(monkeypatch):
    page = docgen.PAGES[0]
    twin = dataclasses.replace(page, slug="twin", families=(dataclasses.replace(page.families[0], keys=()),))
    monkeypatch.setattr(docgen, "PAGES", (*docgen.PAGES, twin))
    with pytest.raises(ValueError, match=f"family slugs used twice: \\['{page.families[0].slug}'\\]"):
        docgen.page_of()


def test_a_page_shows_each_family_s_rules_kwargs_and_pictures():
    text = docgen.render_page(docgen.PAGES[0], DOCS / "images")
    assert "Dense (``penalty=True``)" in text  # the T-Maze module docstring
    assert "| `corridor_length` | an int >= 1 and <= 100000 | `10` |" in text  # its Param, allowed() and default
    assert "![T-Maze (passive and classic), partial](../images/t-maze-partial.png)" in text
    missing = docgen.render_page(docgen.PAGES[0], Path("/nonexistent"))
    assert "*no picture: not rendered yet: run `python docs/pictures.py`*" in missing


def test_rst_becomes_markdown():
    rst = """Intro with :class:`~membench_envs.envs.core.native.BatchedCore`, :mod:`membench_envs.memory` and
``POPGym/<Task>-v0`` beside a bare <Task>, and 3 < 4; a role that wraps, :data:`~membench_envs.catalogue.
robo.PHASES`.

=====  ===========
name   what
=====  ===========
a      one | two
b      three
       continued
=====  ===========

Example::

    x = 1

    y = 2

After.
"""
    md = docgen.rst_to_markdown(rst)
    assert "`BatchedCore`" in md and "`membench_envs.memory`" in md and "`PHASES`" in md and ":class:" not in md
    assert ":data:" not in md
    assert "``POPGym/<Task>-v0``" in md and "a bare &lt;Task>" in md and "3 < 4" in md
    assert "| name | what |\n|---|---|\n| a | one \\| two |\n| b | three continued |" in md
    assert "Example:\n\n```python\nx = 1\n\ny = 2\n```\n\nAfter." in md


def _links(path: Path) -> list[tuple[str, str]]:
    """The page's relative links as (file, fragment); file "" is the page itself."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    links = re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text)
    return [(t, f) for t, f in links if not re.match(r"[a-z]+://", t)]


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors (lower case, punctuation dropped, spaces to hyphens) and the explicit ``<a id>``s."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings} | set(
        re.findall(r'<a id="([^"]+)"></a>', text)
    )


def _paths(path: Path) -> list[str]:
    """Repository paths the page names in backticks (no placeholders): `experiments/sweeps/x.yaml`, ..."""
    text = path.read_text(encoding="utf-8")
    names = re.findall(r"`([\w.-]+/[\w./-]+\.(?:py|yaml|md|json|toml|png))`", text)
    return [n for n in names if not n.startswith(("runs/", "datasets/", "~"))]


def _exists(name: str, page: Path) -> bool:
    bases = [
        page.parent,
        ROOT,
        ROOT / "membench_envs" / "src",
        ROOT / "membench_agents" / "src",
        ROOT / "membench_agents" / "src" / "membench_agents",
        ROOT / "membench_envs" / "src" / "membench_envs",
    ]
    return any((base / name).exists() for base in bases)


@pytest.mark.parametrize(
    "page", [*HAND_WRITTEN, *sorted((DOCS / "tasks").glob("*.md"))], ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_link_and_named_file_exists(page):
    """Relative links resolve, to a heading where they name one; a hand-written page's backticked repository paths
    exist (the generated pages quote upstream paths from the docstrings, so only their links are checked)."""
    broken = []
    for target, fragment in _links(page):
        path = page.parent / target if target else page
        if not path.exists() or (fragment and path.suffix == ".md" and fragment not in _anchors(path)):
            broken.append(f"{target}#{fragment}" if fragment else target)
    if page in HAND_WRITTEN:
        broken += [n for n in _paths(page) if not _exists(n, page)]
    assert not broken, f"{page.relative_to(ROOT)} names missing files: {broken}"


def test_no_doc_or_code_refers_to_shared_notes_or_an_architecture_file():
    files = [
        *HAND_WRITTEN,
        *(DOCS / "tasks").glob("*.md"),
        *ROOT.glob("membench_*/src/**/*.py"),
        *ROOT.glob("experiments/**/*.py"),
        ROOT / "Makefile",
    ]
    bad = [f for f in files if re.search(r"\.\./shared|ARCHITECTURE\.md", f.read_text(encoding="utf-8"))]
    assert not bad, bad


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
