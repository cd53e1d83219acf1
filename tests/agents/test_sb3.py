"""The SB3 reference agents (sb3-ppo, sb3-recurrentppo): same IDs, same run machinery, same evaluation code."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from membench_agents.algos.sb3 import SB3Policy, SB3Trainer
from membench_agents.algos.trainer import preflight
from membench_agents.errors import ConfigError
from membench_agents.runs import cell, loop
from membench_agents.runs.evaluation import evaluate, evaluate_trainer

from tests.agents._runs_helpers import TMAZE, assert_same_params, final_params, history, tiny_config


@pytest.mark.parametrize("agent", ["sb3-ppo", "sb3-recurrentppo"])
def test_sb3_agent_end_to_end_on_tmaze_with_the_protocol(tmp_path, agent):
    cfg = tiny_config(agent, iterations=3, seeds=[0, 1])
    res = cell.train(cfg, tmp_path, workers=1, progress=False)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["agent"] == agent and on_disk["metric"] == "success_rate"
    assert on_disk["protocol"]["episode_seeds"]["list"] == list(range(20)) and on_disk["n_runs"] == 2
    assert on_disk["versions"]["stable_baselines3"] and on_disk["versions"]["sb3_contrib"]
    assert on_disk["per_run"] == res["per_run"]
    for s in (0, 1):
        d = tmp_path / f"seed_{s}"
        assert (d / "checkpoint.pt").is_file() and list(d.glob("events.out.tfevents.*"))
        rows = history(d)
        assert len(rows) == 3 and rows[-1]["global_step"] == 3 * 4 * 32
        assert {"policy_loss", "value_loss", "entropy", "approx_kl"} <= set(rows[-1])
        assert sum(r["episodes"] for r in rows) > 0


def _manual_rollouts(model, seeds, variant="partial", L=2):
    """One single gym.make env per episode seed, stepped by hand with model.predict."""
    out = []
    recurrent = hasattr(model, "_last_lstm_states")
    for s in seeds:
        env = gym.make(TMAZE, corridor_length=L, obs_variant=variant)
        obs, _ = env.reset(seed=s)
        state, start, ret, done = None, np.ones(1, bool), 0.0, False
        while not done:
            if recurrent:
                a, state = model.predict(obs[None], state=state, episode_start=start, deterministic=True)
            else:
                a, _ = model.predict(obs[None], deterministic=True)
            start = np.zeros(1, bool)
            obs, r, term, trunc, info = env.step(int(a[0]))
            ret += r
            done = term or trunc
        out.append((ret, info["success"]))
    return out


@pytest.mark.parametrize("agent", ["sb3-ppo", "sb3-recurrentppo"])
def test_sb3_models_go_through_the_shared_evaluation_with_the_same_episode_seeds(agent):
    cfg = tiny_config(agent, iterations=2)
    trainer = SB3Trainer(cfg, seed=0)
    trainer.iterate()
    seeds = [3, 11, 42, 7, 0, 99]
    assert isinstance(trainer.policy, SB3Policy)  # what the run loop evaluates, as it evaluates membench's agents
    res = evaluate(trainer.policy, TMAZE, {"corridor_length": 2}, seeds, num_envs=4)
    assert res["episode_seeds"] == seeds
    manual = _manual_rollouts(trainer.model, seeds)
    assert res["returns"] == [m[0] for m in manual]
    assert res["successes"] == [m[1] for m in manual]
    action = SB3Policy(trainer.model).act(torch.zeros(2, 4), None, torch.ones(2, dtype=torch.bool))[0]
    assert isinstance(action, torch.Tensor) and action.shape == (2,)


def test_sb3_evaluation_does_not_perturb_training():
    cfg = tiny_config("sb3-recurrentppo", iterations=2)
    # SB3 draws from the global RNGs, so the two runs go one after the other (each model seeds them)
    a = SB3Trainer(cfg, seed=0)
    a.iterate()
    a.iterate()
    b = SB3Trainer(cfg, seed=0)
    b.iterate()
    evaluate_trainer(b, cfg, list(range(10)), deterministic=False, num_envs=5)
    b.iterate()
    assert_same_params(a.model.policy.state_dict(), b.model.policy.state_dict())


@pytest.mark.parametrize("agent", ["sb3-ppo", "sb3-recurrentppo"])
def test_sb3_resume_equals_uninterrupted(tmp_path, agent):
    cfg = tiny_config(agent, iterations=5)
    loop.train_seed(cfg, 0, tmp_path / "a")
    with pytest.raises(loop.Interrupted):
        loop.train_seed(cfg, 0, tmp_path / "b", stop_after_iterations=2)
    loop.train_seed(cfg, 0, tmp_path / "b", resume=True)
    assert_same_params(final_params(tmp_path / "a"), final_params(tmp_path / "b"))
    assert history(tmp_path / "a") == history(tmp_path / "b")


def test_sb3_bad_keys_and_spaces_are_clear_errors():
    cfg = tiny_config("sb3-ppo")
    cfg["sb3"]["n_epoch"] = 3  # past the config loader (which rejects it too: tests/agents/test_config.py)
    with pytest.raises(ConfigError, match=r"unknown key 'sb3.n_epoch' for PPO.*Did you mean n_epochs"):
        SB3Trainer(cfg, seed=0)
    cfg = tiny_config("sb3-recurrentppo")
    cfg["sb3"]["seed"] = 3
    with pytest.raises(ConfigError, match=r"unknown key 'sb3\.seed'"):
        SB3Trainer(cfg, seed=0)


def test_an_image_too_small_for_sb3s_cnn_is_refused_before_the_run():
    from membench_agents.config.resolve import resolve

    cfg = resolve("MIKASA/PassiveVisualMatch-v0", "sb3-ppo", steps=1024).config
    with pytest.raises(
        ConfigError,
        match=r"cannot handle MIKASA/PassiveVisualMatch-v0: its observation 'image' is an "
        r"image of shape \(5, 5, 3\).* at least 36x36",
    ):
        preflight(cfg)
    big = resolve("MIKASA/MortarMayhemBGrid-v0", "sb3-ppo", steps=1024).config  # 84x84: fine
    preflight(big)


def test_a_stop_during_sb3s_update_drops_the_iteration_there():
    """SB3's update has no callback; the optimizer's pre-step hook polls the stop flag."""
    from membench_agents.errors import StopRequested

    trainer = SB3Trainer(tiny_config("sb3-ppo"), seed=0)  # 4 envs x 32 steps: 32 polls in the rollout
    calls = []

    def should_stop():
        calls.append(trainer.model.num_timesteps)
        return len(calls) > 32 + 3  # the 4th optimizer step of the update

    with pytest.raises(StopRequested):
        trainer.iterate(should_stop)
    assert trainer.model.num_timesteps == 4 * 32  # the rollout was complete: the stop came in the update
    trainer.iterate()  # the hook is gone again (it would still poll the flag, which says stop)
    trainer.close()


def test_sb3_training_leaves_no_folder_in_the_temp_dir(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    trainer = SB3Trainer(tiny_config("sb3-ppo", iterations=1), seed=0)
    out = trainer.iterate()
    assert "value_loss" in out  # the in-memory logger still hands SB3's training values over
    assert list(tmp_path.glob("SB3-*")) == []
