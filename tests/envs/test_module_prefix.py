"""gymnasium's ``"module:ID"`` form, ``gym.make("membench_envs:MIKASA/TMazePassive-v0")``, in fresh processes that
never ``import membench_envs`` themselves, run from a directory outside the repository."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.envs._helpers import extra_installed


def _run(code: str, cwd) -> subprocess.CompletedProcess:
    prelude = "import sys, warnings\nwarnings.simplefilter('ignore')\nimport gymnasium as gym\n"
    prelude += "assert 'membench_envs' not in sys.modules\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_make_and_make_vec_with_the_module_prefix(tmp_path):
    code = (
        "env = gym.make('membench_envs:MIKASA/TMazePassive-v0', obs_variant='oracle', render_mode='rgb_array')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert env.spec.id == 'MIKASA/TMazePassive-v0' and obs.shape == (5,), (env.spec.id, obs.shape)\n"
        "assert env.render().dtype.name == 'uint8'\n"
        "env.step(2)\n"
        "venv = gym.make_vec('membench_envs:MIKASA/MemoryCards-v0', num_envs=3)\n"
        "assert type(venv).__name__ == 'MemoryCardsVector', type(venv)\n"
        "assert venv.reset(seed=0)[0].shape == (3, 10)\n"
        "assert 'MIKASA/TMazePassiveDense-v0' in gym.registry  # the import registered every ID\n"
        "print('OK')\n"
    )
    out = _run(code, tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stderr


@pytest.mark.parametrize(
    ("env_id", "extra"), [("POPGym/RepeatFirstEasy-v0", "popgym"), ("MIKASA/MiniGridMemoryS7-v0", "minigrid")]
)
def test_module_prefix_for_backend_ids(env_id, extra, tmp_path):
    if not extra_installed(extra):
        pytest.skip(f"extra [{extra}] not installed")
    out = _run(f"env = gym.make('membench_envs:{env_id}'); env.reset(seed=0); print(env.spec.id)\n", tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == env_id, out.stderr


def test_unknown_id_after_the_prefix_is_gymnasiums_clear_error(tmp_path):
    out = _run("gym.make('membench_envs:MIKASA/NoSuchTask-v0')\n", tmp_path)
    assert out.returncode != 0 and "NoSuchTask" in out.stderr
