"""The docs: the generated task pages are up to date, every ID is on one page, and no page points at a missing file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from membench_envs import catalogue, cli, docgen

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


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
    out = subprocess.run([sys.executable, "-m", "membench_envs.cli", "docs", str(plain)], capture_output=True,
                         text=True)
    assert out.returncode == 2 and out.stderr == f"membench-envs: error: {plain} is not a folder\n"


def test_every_id_is_on_exactly_one_page_and_in_the_index():
    where = docgen.page_of()  # raises for an ID on two pages or on none
    assert sorted(where) == sorted(s.id for s in catalogue.all_tasks())
    index = docgen.render_index()
    for env_id, (page, family) in where.items():
        assert f"[`{env_id}`]({page.slug}.md#{family.slug})" in index


def test_a_page_shows_each_family_s_rules_kwargs_and_pictures():
    text = docgen.render_page(docgen.PAGES[0], DOCS / "images")
    assert "Dense (``penalty=True``)" in text  # the T-Maze module docstring
    assert "| `corridor_length` | an int >= 1 and <= 100000 | `10` |" in text  # its Param, allowed() and default
    assert "![T-Maze (passive and classic), partial](../images/t-maze-partial.png)" in text
    missing = docgen.render_page(docgen.PAGES[0], Path("/nonexistent"))
    assert "*no picture: not rendered yet: run `python docs/pictures.py`*" in missing


def test_rst_becomes_markdown():
    rst = """Intro with :class:`~membench_envs.envs.core.native.BatchedCore`, :mod:`membench_envs.memory` and
``POPGym/<Task>-v0`` beside a bare <Task>, and 3 < 4.

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
    assert "`BatchedCore`" in md and "`membench_envs.memory`" in md and ":class:" not in md
    assert "``POPGym/<Task>-v0``" in md and "a bare &lt;Task>" in md and "3 < 4" in md
    assert "| name | what |\n|---|---|\n| a | one \\| two |\n| b | three continued |" in md
    assert "Example:\n\n```python\nx = 1\n\ny = 2\n```\n\nAfter." in md
