"""The Python API: train a cell, load the run, act with its policy, evaluate it (as the CLI does)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from membench_agents.api import load, train

from tests.agents._runs_helpers import TMAZE


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    sets = [
        f"{k}={v}"
        for k, v in (
            ("env_kwargs.corridor_length", 2),
            ("ppo.num_envs", 8),
            ("ppo.num_steps", 16),
            ("ppo.hidden_size", 16),
            ("ppo.num_minibatches", 2),
            ("eval.episodes", 20),
            ("eval.num_envs", 10),
        )
    ]
    out = train(
        TMAZE,
        "ppo-lstm",
        seeds=[0, 1],
        steps=4 * 8 * 16,
        overrides=sets,
        run_dir=tmp_path_factory.mktemp("api") / "run",
        progress=False,
    )
    return out


def test_train_returns_the_run_with_its_results(run):
    assert run.config["agent"] == "ppo-lstm" and run.seeds == [0, 1]
    assert run.results["n_runs"] == 2 and run.results["metric"] == "success_rate"
    assert load(run.path).config == run.config


def test_an_agent_acting_episode_by_episode_reproduces_the_evaluation(run):
    """predict() on one env, episode seeds 0..19, gives exactly the per-episode returns the protocol stored."""
    stored = run.evaluate()["per_seed"][1]["returns"]
    agent = run.agent(seed=1)
    env = gym.make(TMAZE, corridor_length=2)
    returns = []
    for episode_seed in range(20):
        obs, _ = env.reset(seed=episode_seed)
        state, start, total = None, True, 0.0
        while True:
            action, state = agent.predict(obs, state, episode_start=start)
            obs, reward, terminated, truncated, _ = env.step(action)
            total, start = total + reward, False
            if terminated or truncated:
                break
        returns.append(total)
    assert returns == pytest.approx(stored)
    agent.close()


def test_predict_on_a_batch_equals_predict_on_each_observation(run):
    agent = run.agent()
    venv = gym.make_vec(TMAZE, num_envs=4, corridor_length=2)
    obs, _ = venv.reset(seed=0)
    batch_actions, _ = agent.predict(obs)
    singles = [agent.predict(o)[0] for o in obs]
    assert np.array_equal(batch_actions, np.array(singles))
    venv.close()
    agent.close()


def test_evaluate_matches_the_stored_results_and_takes_other_protocols(run):
    res = run.evaluate()
    assert res["per_run"] == pytest.approx(run.results["per_run"]) and res["mean"] == pytest.approx(run.results["mean"])
    assert run.evaluate(episodes=5, seed_start=100)["episode_seeds"] == list(range(100, 105))
    with pytest.raises(ValueError, match=r"has seeds \[0, 1\], not 7"):
        run.agent(seed=7)


def test_record_writes_a_playable_video_per_episode_with_one_frame_per_step(run, tmp_path):
    from moviepy import VideoFileClip

    files = run.record(episodes=2, folder=tmp_path)
    assert [f.name for f in files] == ["episode_0.mp4", "episode_1.mp4"]
    lengths = run.evaluate(episodes=2)["per_seed"][0]["lengths"]
    for f, length in zip(files, lengths, strict=True):
        clip = VideoFileClip(str(f))
        assert clip.n_frames == length + 1  # the reset frame and one per step
        assert clip.get_frame(0).shape[2] == 3
        clip.close()
    with pytest.raises(ValueError, match="episodes must be an integer >= 1, got 0"):
        run.record(episodes=0)
