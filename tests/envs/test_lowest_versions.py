"""The lowest gymnasium and numpy that membench-envs declares really work (slow: builds a venv, reaches PyPI).

The bounds are read from membench_envs/pyproject.toml, so raising one there moves this test with it. gymnasium 1.0
is below the bound because the native VectorEnvs need ``gymnasium.vector.AutoresetMode`` (new in 1.1).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("lowest_versions_smoke.py")


def lowest_declared() -> dict[str, str]:
    """{"gymnasium": "1.1", "numpy": "1.24"}: the ``>=`` bound of each core dependency."""
    deps = tomllib.loads((ROOT / "membench_envs" / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = {}
    for dep in deps:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)", dep)
        assert match, f"core dependency {dep!r} has no plain lower bound to test"
        bounds[match.group(1).lower()] = match.group(2)
    return bounds


def test_core_dependencies_are_gymnasium_and_numpy_with_lower_bounds():
    assert set(lowest_declared()) == {"gymnasium", "numpy"}


@pytest.mark.slow
def test_envs_only_install_works_at_the_lowest_declared_versions(tmp_path):
    bounds = lowest_declared()
    source = tmp_path / "membench_envs"  # a copy: pip's in-tree build must not write into the checkout
    shutil.copytree(ROOT / "membench_envs", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    pins = [f"{name}=={version}" for name, version in bounds.items()]
    install = subprocess.run(
        [py, "-m", "pip", "install", "-q", str(source), *pins], capture_output=True, text=True, timeout=900
    )
    assert install.returncode == 0, f"pip install {' '.join(pins)} failed:\n{install.stdout}\n{install.stderr}"
    run = subprocess.run([py, str(SMOKE)], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert run.returncode == 0, f"smoke run under {pins} failed:\n{run.stdout}\n{run.stderr}"
    assert run.stdout.rstrip().endswith("OK"), run.stdout
    versions = run.stdout.splitlines()[0]
    for name, version in bounds.items():  # pip really installed the bound (== pads: 1.1 is 1.1.0)
        assert re.search(rf"{name} {re.escape(version)}(\.0)*,", versions + ","), versions
