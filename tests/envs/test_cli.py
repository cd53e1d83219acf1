"""`membench-envs` console script and the generated README suites table (the task pages: tests/test_docs.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from membench_envs import cli

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("membench-envs", path=str(Path(sys.executable).parent))
    cmd = [exe, *args] if exe else [sys.executable, "-m", "membench_envs.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_list_filters_by_suite_memory_type_and_namespace():
    out = run("list", "--namespace", "MIKASA", "--memory-type", "object", "--ids")
    assert out.returncode == 0
    ids = out.stdout.split()
    assert "MIKASA/TMazePassive-v0" in ids and all(i.startswith("MIKASA/") for i in ids)
    table = run("list", "--suite", "MIKASA-Base").stdout
    assert "MIKASA/TMazeClassic-v0" in table and "environment(s)" in table and "Ξ" in table


def test_bad_filter_and_unknown_id_are_one_line_errors():
    out = run("list", "--suite", "Nope")
    assert out.returncode == 2 and "unknown suite" in out.stderr
    out = run("info", "MIKASA/TMazePasive-v0")
    assert out.returncode == 2 and "Did you mean" in out.stderr


def test_info_and_plan():
    out = run("info", "MIKASA/TMazePassive-v0")
    assert out.returncode == 0 and "corridor_length" in out.stdout and "K̄" in out.stdout
    out = run("plan", "MIKASA/TMazePassive-v0", "--K", "4", "--K-eff", "50")
    assert out.returncode == 0 and "LTM-only" in out.stdout and "yes" in out.stdout


def test_readme_suites_table_is_generated_from_the_catalogue():
    assert cli.main(["readme", str(ROOT / "README.md"), "--check"]) == 0


def test_no_parser_takes_an_abbreviated_flag():
    """--name is not --namespace, --K-e not --K-eff, --epi not --episodes: one usage error (exit 2)."""
    for args in (
        ("list", "--name", "MIKASA"),
        ("plan", "MIKASA/TMazePassive-v0", "--K", "4", "--K-e", "50"),
        ("readme", "--che"),
    ):
        out = run(*args)
        assert out.returncode == 2 and "unrecognized arguments" in out.stderr, (args, out.stderr)
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if a.choices and "list" in a.choices).choices
    assert not parser.allow_abbrev and all(not p.allow_abbrev for p in subparsers.values())


def test_readme_of_a_missing_file_or_a_folder_is_one_error_line(tmp_path):
    for path in (tmp_path / "nope.md", tmp_path):
        for extra in ((), ("--check",)):
            out = run("readme", str(path), *extra)
            assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
            assert out.stderr.strip().count("\n") == 0
            assert out.stderr.startswith(f"membench-envs: error: cannot read {path}")
    plain = tmp_path / "plain.md"
    plain.write_text("no tables here\n")
    out = run("readme", str(plain))
    assert out.returncode == 2 and "has no generated-table markers" in out.stderr and "Traceback" not in out.stderr
