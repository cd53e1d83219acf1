"""Solvability: an oracle-reading scripted policy succeeds; a policy that picks an object at random succeeds at chance.

Together they show the tasks are solvable and that only the remembered cue (the oracle) makes them so. The default
suite runs a small version; ``-m slow`` runs every ID with more episodes (measured rates are in the README).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from membench_envs.robo.experts import ReachPolicy

from tests.envs.robo._policies import run_episode
from tests.envs.robo.conftest import REMEMBER_IDS, SIZES


def _rate(env, mode: str, episodes: int, seed0: int = 0) -> float:
    policy = ReachPolicy(env, mode, seed=seed0)
    return float(np.mean([run_episode(env, policy, seed0 + i) for i in range(episodes)]))


def _chance_interval(n_episodes: int, p: float, z: float = 3.3) -> tuple[float, float]:
    sd = math.sqrt(p * (1 - p) / n_episodes)
    return p - z * sd, p + z * sd  # ~99.9% normal interval of a binomial rate


def _env(robo_env, env_id):
    return robo_env(env_id, obs_variant="full", control_mode="pd_ee_delta_pose")


@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_oracle_policy_solves_every_task(robo_env, env_id):
    assert _rate(_env(robo_env, env_id), "oracle", 8) >= 7 / 8


def test_random_choice_is_at_chance_on_remember_color3(robo_env):
    n = 60
    low, high = _chance_interval(n, 1 / 3)
    rate = _rate(_env(robo_env, "MIKASA/RememberColor3-v0"), "random", n, seed0=1000)
    assert low <= rate <= high, rate


def test_oracle_policy_also_succeeds_from_pixels_variant(robo_env):
    """The partial (RGB + joints) variant is the same task: the same policy succeeds there too."""
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="partial", control_mode="pd_ee_delta_pose")
    assert run_episode(env, ReachPolicy(env, "oracle"), seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_solvability_and_chance_sweep(robo_env, env_id):
    env = _env(robo_env, env_id)
    n_objects, _ = SIZES[env_id]
    oracle = _rate(env, "oracle", 50, seed0=100)
    assert oracle >= 0.9, oracle
    n = 300
    low, high = _chance_interval(n, 1 / n_objects)
    rate = _rate(env, "random", n, seed0=2000)
    print(f"{env_id}: oracle {oracle:.2f}, random {rate:.3f} (chance {1 / n_objects:.3f})")
    assert max(low, 0.0) <= rate <= high, rate
