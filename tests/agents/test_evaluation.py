"""Evaluation on a fixed list of episode seeds (memory-classification paper, F.1: seeds 0..99)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_agents.config.resolve import resolve
from membench_agents.nets.actor_critic import ActorCritic
from membench_agents.runs.evaluation import DEFAULT_EPISODE_SEEDS, evaluate
from membench_agents.runs.stats import episode_seeds

import membench_envs  # noqa: F401

TMAZE = "MIKASA/TMazePassive-v0"
L = 3
RIGHT, UP = 0, 1  # the authors' T-Maze action order: 0 = right (towards the junction), 1 = up


class AlwaysUpPolicy(ActorCritic):
    """A scripted T-Maze policy: walk right, turn up at the junction (flag = obs[2]). Succeeds iff goal = up."""

    def act(self, obs, state, episode_start, deterministic=False, generator=None):
        action = torch.where(obs[:, 2] > 0.5, UP, RIGHT)
        zeros = torch.zeros(obs.shape[0])
        return action, zeros, zeros, state


def _policy(core="lstm", cls=ActorCritic):
    env = gym.make(TMAZE, corridor_length=L)
    return cls(env.observation_space, env.action_space, core, 16)


def _goal(seed: int) -> int:
    _, info = gym.make(TMAZE, corridor_length=L).reset(seed=seed)
    return int(info["oracle"][0])


def test_default_protocol_is_seeds_0_to_99():
    """A run config's default protocol and evaluate()'s default both use episode seeds 0..99 (F.1)."""
    assert episode_seeds(resolve(TMAZE, "ppo-mlp").config) == list(range(100))
    policy = _policy(cls=AlwaysUpPolicy)
    by_default = evaluate(policy, TMAZE, {"corridor_length": L}, num_envs=50)
    assert by_default["episode_seeds"] == list(range(100)) == list(DEFAULT_EPISODE_SEEDS)
    assert by_default["successes"] == [_goal(s) == 1 for s in range(100)]


@pytest.mark.parametrize("num_envs", [1, 7, 16])
def test_episode_i_is_run_with_seed_i(num_envs):
    seeds = [5, 17, 3, 99, 42, 0, 1, 2, 1000, 8]
    res = evaluate(_policy(cls=AlwaysUpPolicy), TMAZE, {"corridor_length": L}, seeds, num_envs=num_envs)
    expected = [_goal(s) == 1 for s in seeds]
    assert res["episode_seeds"] == seeds
    assert res["successes"] == expected
    assert res["returns"] == [float(e) for e in expected]
    assert res["lengths"] == [L + 1] * len(seeds)
    assert res["success_rate"] == pytest.approx(np.mean(expected))
    assert res["num_episodes"] == len(seeds)


def test_results_do_not_depend_on_num_envs_or_order_of_waves():
    policy = _policy("gru")
    seeds = list(range(30))
    a = evaluate(policy, TMAZE, {"corridor_length": L}, seeds, num_envs=4)
    b = evaluate(policy, TMAZE, {"corridor_length": L}, seeds, num_envs=30)
    assert a["returns"] == b["returns"] and a["successes"] == b["successes"]
    # stochastic evaluation is seeded too
    c = evaluate(policy, TMAZE, {"corridor_length": L}, seeds, deterministic=False, num_envs=8, seed=1)
    d = evaluate(policy, TMAZE, {"corridor_length": L}, seeds, deterministic=False, num_envs=8, seed=1)
    assert c["returns"] == d["returns"]
    assert policy.training  # the mode is restored


def test_tasks_without_success_report_none():
    env = gym.make("Pendulum-v1")
    policy = ActorCritic(env.observation_space, env.action_space, "mlp", 8)
    res = evaluate(policy, "Pendulum-v1", None, [0, 1, 2], num_envs=3)
    assert res["successes"] == [None, None, None] and res["success_rate"] is None
    assert res["lengths"] == [200, 200, 200]  # the TimeLimit truncation ends each episode
    assert all(np.isfinite(res["returns"]))


def test_empty_seed_list():
    with pytest.raises(ValueError, match="episode_seeds is empty"):
        evaluate(_policy(), TMAZE, None, [])


def test_env_kwargs_that_lengthen_episodes_are_evaluated_to_the_end():
    # The catalogue's T of MIKASA/TMazePassive-v0 is 11; corridor_length=30 makes episodes 31 steps long.
    env = gym.make("MIKASA/TMazePassive-v0", corridor_length=30)
    policy = ActorCritic(env.observation_space, env.action_space, core="mlp", hidden_size=8)
    out = evaluate(policy, "MIKASA/TMazePassive-v0", {"corridor_length": 30}, list(range(4)))
    assert out["success_rate"] is not None
    assert all(length <= 31 for length in out["lengths"]) and max(out["lengths"]) == 31


def test_evaluation_caps_parallel_episodes_where_each_env_is_a_process(monkeypatch):
    """MIKASA-Robo on a CPU runs one process per env: 100 parallel episodes would start 100 ManiSkill scenes
    (about 30 GB), so evaluation runs them in waves of at most process_cap; in-process tasks are not capped."""
    import membench_agents.runs.evaluation as evaluation
    from membench_agents.algos.vector import process_cap

    pytest.importorskip("mani_skill")
    import membench_envs.robo.vector as robo_vector

    monkeypatch.setattr(robo_vector, "has_gpu", lambda: False)
    cap = process_cap("MIKASA/RememberColor3-v0")
    assert cap is not None and 4 <= cap < 100
    assert process_cap("MIKASA/TMazePassive-v0") is None
    monkeypatch.setattr(robo_vector, "has_gpu", lambda: True)
    assert process_cap("MIKASA/RememberColor3-v0") is None
    monkeypatch.setattr(robo_vector, "has_gpu", lambda: False)

    asked = []

    class Stop(Exception):
        pass

    def fake_make(env_id, n, env_kwargs=None):
        asked.append(n)
        raise Stop

    monkeypatch.setattr(evaluation, "make_vector_env", fake_make)
    space = gym.spaces.Box(-1, 1, (3,))
    policy = ActorCritic(space, gym.spaces.Discrete(2), "mlp", 8)
    for env_id, expected in (("MIKASA/RememberColor3-v0", cap), ("MIKASA/TMazePassive-v0", 100)):
        with pytest.raises(Stop):
            evaluation.evaluate(policy, env_id, num_envs=100)
        assert asked[-1] == expected
