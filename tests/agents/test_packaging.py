"""An installed (non-editable) membench-agents, run from an empty folder outside the repository, trains exactly
what the checkout trains: the agent defaults and the tuned cell configs are package data."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from membench_agents.config.resolve import resolve

ROOT = Path(__file__).resolve().parents[2]
CELL = ("MIKASA/TMazePassiveDense-v0", "ppo-lstm")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """A fresh venv holding wheels of both packages (not editable); its other dependencies come from this
    interpreter's site-packages (a path entry: that folder's own .pth files, the checkout's editable installs
    among them, are not read). Returns (its python, an empty folder to run in)."""
    tmp = tmp_path_factory.mktemp("installed")
    wheels = tmp / "wheels"
    sources = []
    for name in ("membench_envs", "membench_agents"):  # a clean copy: no build/ left by an earlier build
        sources.append(tmp / "src" / name)
        shutil.copytree(ROOT / name, sources[-1], ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            *map(str, sources),
        ],
        check=True,
        timeout=600,
    )
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)  # this pip installs into it (--python): no copy of pip to bootstrap
    py = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "membench-test-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index"]
        + [str(w) for w in wheels.glob("*.whl")],
        check=True,
        timeout=600,
    )
    empty = tmp / "empty"
    empty.mkdir()
    return py, empty


def _run(py: Path, cwd: Path, code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MEMBENCH_EXPERIMENTS")}
    return subprocess.run(
        [str(py), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=300
    ).stdout


def test_an_installed_copy_resolves_the_same_config_as_the_checkout(installed):
    py, empty = installed
    out = _run(
        py,
        empty,
        (
            "import json, membench_agents\n"
            "from membench_agents.config.resolve import resolve\n"
            f"r = resolve(*{CELL!r})\n"
            "print(json.dumps({'file': membench_agents.__file__, 'config': r.config, 'sources': r.sources}))\n"
        ),
    )
    got = json.loads(out)
    assert not Path(got["file"]).is_relative_to(ROOT), f"imported the checkout: {got['file']}"
    here = resolve(*CELL)
    assert got["config"] == json.loads(json.dumps(here.config))
    assert got["sources"] == here.sources
    assert got["sources"][-1] == "membench_agents/config/cells/MIKASA/TMazePassiveDense-v0/ppo-lstm.yaml"


@pytest.mark.slow
def test_the_headline_cell_learns_from_the_installed_copy_with_no_other_flags(installed):
    """`membench train --env MIKASA/TMazePassiveDense-v0 --agent ppo-lstm`: 3 seeds x 400k steps, success >= 0.9."""
    py, empty = installed
    membench = py.parent / "membench"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [str(membench), "train", "--env", CELL[0], "--agent", CELL[1], "--run-dir", "run", "--no-progress"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert out.returncode == 0, out.stderr
    results = json.loads((empty / "run" / "results.json").read_text())
    assert results["metric"] == "success_rate" and results["mean"] >= 0.9, results["per_run"]
