"""`pip install ./membench_envs` works alone in a fresh virtualenv and never pulls in torch."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_membench_envs_installs_alone_without_torch(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)  # this pip installs into it (--python): no copy of pip to bootstrap
    py = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py)]
    # built from a copy: a build in place would leave membench_envs.egg-info in the checkout
    source = tmp_path / "membench_envs"
    shutil.copytree(ROOT / "membench_envs", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([*pip, "install", "-q", str(source)], check=True, timeout=600)
    listed = subprocess.run(
        [*pip, "list", "--format=freeze"], capture_output=True, text=True, check=True
    ).stdout.lower()
    assert "torch" not in listed, listed
    code = (
        "import sys, gymnasium as gym, membench_envs\n"
        "env = gym.make('MIKASA/TMazePassive-v0'); env.reset(seed=0)\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([str(py), "-c", code], check=True, timeout=120)
    out = subprocess.run(
        [str(env_dir / "bin" / "membench-envs"), "list", "--ids"], capture_output=True, text=True, check=True
    ).stdout
    assert "MIKASA/TMazePassive-v0" in out
    # No extra is installed here: making any backend-backed ID is one clear error naming the fix.
    code = (
        "import gymnasium as gym, membench_envs\n"
        "seen = set()\n"
        "for spec in membench_envs.all_tasks():\n"
        "    if spec.extra is None or spec.extra in seen: continue\n"
        "    seen.add(spec.extra)\n"
        "    try:\n"
        "        gym.make(spec.id)\n"
        "    except membench_envs.MissingExtraError as e:\n"
        "        assert f\"pip install 'membench-envs[{spec.extra}]'\" in str(e), e\n"
        "        assert spec.id in str(e), e\n"
        "    else:\n"
        "        raise AssertionError(spec.id + ' made without its extra')\n"
        "print(sorted(seen))\n"
    )
    subprocess.run([str(py), "-c", code], check=True, timeout=120)
