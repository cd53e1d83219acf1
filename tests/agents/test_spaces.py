"""Every catalogue ID, in every observation variant, is trainable by membench PPO: its observation space has an
encoder and its action space a policy head (the pre-flight every run makes). MIKASA-Robo and Memory Maze IDs (seconds
per make) are covered by the slow test."""

from __future__ import annotations

import gymnasium as gym
import pytest
from membench_agents.algos.ppo import check_ppo_spaces
from membench_envs.envs.core.params import VARIANTS

from membench_envs import catalogue
from tests.envs._helpers import SLOW_EXTRAS, ids_with_extra_installed


def _check(env_id: str) -> None:
    for variant in VARIANTS:
        env = gym.make(env_id, obs_variant=variant)
        try:
            check_ppo_spaces("ppo-lstm", env.observation_space, env.action_space, f"{env_id} ({variant})")
        finally:
            env.close()


@pytest.mark.parametrize("env_id", ids_with_extra_installed())
def test_every_id_and_variant_has_an_encoder_and_a_policy_head(env_id):
    _check(env_id)


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id",
    [p for p in ids_with_extra_installed(exclude_extras=()) if catalogue.get(p.values[0]).extra in SLOW_EXTRAS],
)
def test_every_slow_id_and_variant_has_an_encoder_and_a_policy_head(env_id):
    _check(env_id)
