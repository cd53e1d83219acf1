"""stable-baselines3 trains on our IDs unchanged: ``make_vec_env(ID, n_envs=2)`` (which asks for
``render_mode="rgb_array"``) + ``PPO("MlpPolicy" | "MultiInputPolicy")`` for one rollout and its update, one ID per
family.

MiniGrid is the one exception to "unchanged": its observation is a Dict holding minigrid's 3x3 symbolic view as a
uint8 (3, 3, 3) Box, which SB3's ``MultiInputPolicy`` takes for an image and feeds to NatureCNN (8x8 kernels need
36x36 pixels or more); ``wrapper_class=FlattenObservation`` + ``MlpPolicy`` trains on it.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

from tests.envs._helpers import extra_installed, family_representatives

pytest.importorskip("stable_baselines3")


def _learn(env_id: str, n_steps: int = 64, total: int = 128, **make_kwargs):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # popgym's maze notice, SB3's small-batch advice
        venv = make_vec_env(env_id, n_envs=2, seed=0, **make_kwargs)
        policy = "MultiInputPolicy" if isinstance(venv.observation_space, gym.spaces.Dict) else "MlpPolicy"
        model = PPO(policy, venv, n_steps=n_steps, batch_size=n_steps, n_epochs=1, seed=0, device="cpu")
        model.learn(total)
    assert model.num_timesteps >= total
    assert venv.render_mode == "rgb_array"  # what make_vec_env asked for, and what the env accepted
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    venv.close()


@pytest.mark.parametrize("env_id", family_representatives(only=("family",)))  # every entry point and POPGym game
def test_sb3_make_vec_env_and_ppo_learn(env_id):
    kwargs = {}
    if env_id.startswith(("MIKASA/MiniGrid", "MIKASA/PassiveVisualMatch")):  # views smaller than NatureCNN's input
        kwargs["wrapper_class"] = gym.wrappers.FlattenObservation
    _learn(env_id, **kwargs)


@pytest.mark.skipif(not extra_installed("minigrid"), reason="extra [minigrid] not installed")
@pytest.mark.parametrize("variant", ["oracle", "full"])
def test_sb3_minigrid_other_variants(variant):
    _learn(
        "MIKASA/MiniGridMemoryS7-v0", env_kwargs={"obs_variant": variant}, wrapper_class=gym.wrappers.FlattenObservation
    )


ROBO = [("MIKASA/RememberColor3-v0", "full"), ("MIKASA/ShellGameTouch-v0", "partial")]


@pytest.mark.robo
@pytest.mark.slow
@pytest.mark.skipif(not extra_installed("robo"), reason="extra [robo] not installed")
@pytest.mark.parametrize(("env_id", "variant"), ROBO)
def test_sb3_robo(env_id, variant):
    """ManiSkill on CPU: ~15-25 s for 32 steps (the partial variant's 128x128x6 images go through NatureCNN)."""
    _learn(env_id, n_steps=16, total=32, env_kwargs={"obs_variant": variant})


def test_sb3_make_vec_env_with_the_module_prefix_in_a_fresh_process(tmp_path):
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from stable_baselines3 import PPO\n"
        "from stable_baselines3.common.env_util import make_vec_env\n"
        "assert 'membench_envs' not in sys.modules\n"
        "venv = make_vec_env('membench_envs:MIKASA/TMazePassive-v0', n_envs=2, seed=0)\n"
        "PPO('MlpPolicy', venv, n_steps=32, batch_size=32, n_epochs=1, device='cpu').learn(64)\n"
        "print(venv.get_images()[0].shape)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith("(")
