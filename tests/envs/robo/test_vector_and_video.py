"""The parallel paths (batched torch interface, GPU-style SAME_STEP vector env, AsyncVectorEnv of CPU envs), the
one-line video recorder, the render overlays (each family's render camera and its words for the target), and
ManiSkill's own recorder on top of them."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from membench_envs.robo.vector import RoboVectorEnv, has_gpu, make_vec

import membench_envs


def test_batched_interface_gives_torch_tensors_and_same_episode_as_numpy(robo_env):
    batched = robo_env("MIKASA/RememberColor5-v0", obs_variant="full", batched=True)
    single = robo_env("MIKASA/RememberColor5-v0", obs_variant="full")
    obs_b, info_b = batched.reset(seed=11)
    obs_s, info_s = single.reset(seed=11)
    assert isinstance(obs_b["state"], torch.Tensor) and obs_b["state"].shape == (1, obs_s["state"].shape[0])
    np.testing.assert_allclose(obs_b["state"][0].numpy(), obs_s["state"], atol=1e-6)
    assert int(info_b["oracle"][0, 0]) == int(info_s["oracle"][0])
    a = np.random.default_rng(0).uniform(-1, 1, 8).astype(np.float32)
    obs_b, r_b, te_b, _tr_b, info_b = batched.step(torch.as_tensor(a)[None])
    obs_s, _r_s, *_ = single.step(a)
    assert isinstance(r_b, torch.Tensor) and r_b.shape == (1,) and te_b.dtype == torch.bool
    np.testing.assert_allclose(obs_b["state"][0].numpy(), obs_s["state"], atol=1e-5)
    with pytest.raises(ValueError, match="action"):
        batched.step(torch.zeros(1, 5))


def test_gpu_style_vector_env_same_step_autoreset_on_cpu():
    """RoboVectorEnv is the GPU path's VectorEnv; with num_envs=1 its logic runs on the CPU backend too."""
    env = gym.make(
        "MIKASA/RememberColor3-v0", obs_variant="full", batched=True, episode_steps=4, disable_env_checker=True
    )
    venv = RoboVectorEnv(env)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    obs, info = venv.reset(seed=3)
    first_oracle = info["oracle"].clone()
    for t in range(1, 5):
        obs, _r, _term, trunc, info = venv.step(torch.zeros(1, 8))
        if t < 4:
            assert "final_obs" not in info and int(info["elapsed_steps"][0]) == t
    assert bool(trunc[0]) and bool(info["_final_obs"][0])
    assert int(info["final_info"]["elapsed_steps"][0]) == 4
    assert int(info["elapsed_steps"][0]) == 0  # obs is already the first one of the next episode
    assert obs["state"].shape == info["final_obs"]["state"].shape
    venv.close()
    assert first_oracle.shape == (1, 1)


@pytest.mark.skipif(has_gpu(), reason="checks the CPU path")
def test_make_vec_picks_async_cpu_envs_here_with_seed_plus_i(robo_env, monkeypatch):
    """In this process: the CPU path hands AsyncVectorEnv its gym.make thunks (pickled, as the workers get them), the
    forkserver start method and SAME_STEP autoreset; those thunks, run in a SyncVectorEnv here, give env i the
    episode of seed + i and autoreset on the same step. The real worker processes (~10 s to start them) are the slow
    ``test_make_vec_runs_its_envs_in_worker_processes``."""
    import pickle

    from membench_envs.robo import vector

    seen = {}

    def in_this_process(fns, context, autoreset_mode):
        seen.update(context=context, autoreset_mode=autoreset_mode)
        return gym.vector.SyncVectorEnv([pickle.loads(pickle.dumps(fn)) for fn in fns], autoreset_mode=autoreset_mode)

    monkeypatch.setattr(vector, "AsyncVectorEnv", in_this_process)
    venv = make_vec("MIKASA/RememberColor9-v0", num_envs=2, obs_variant="full", episode_steps=3)
    assert seen == {"context": "forkserver", "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    _check_seed_plus_i_and_same_step_autoreset(venv, robo_env)


@pytest.mark.slow
@pytest.mark.skipif(has_gpu(), reason="checks the CPU path")
def test_make_vec_runs_its_envs_in_worker_processes(robo_env):
    """The AsyncVectorEnv itself (2 forkserver workers, each importing ManiSkill). The default suite guards the same
    thunks, context and autoreset in-process: ``test_make_vec_picks_async_cpu_envs_here_with_seed_plus_i``."""
    venv = make_vec("MIKASA/RememberColor9-v0", num_envs=2, obs_variant="full", episode_steps=3)
    assert isinstance(venv, gym.vector.AsyncVectorEnv)
    _check_seed_plus_i_and_same_step_autoreset(venv, robo_env)


def _check_seed_plus_i_and_same_step_autoreset(venv, robo_env) -> None:
    """Env i of ``venv`` (2 RememberColor9 envs, 3-step episodes) plays seed 20 + i and autoresets on the same step."""
    obs, info = venv.reset(seed=20)
    single = robo_env("MIKASA/RememberColor9-v0", obs_variant="full", episode_steps=3)
    for i in range(2):
        s_obs, s_info = single.reset(seed=20 + i)
        assert int(info["oracle"][i, 0]) == int(s_info["oracle"][0])
        np.testing.assert_allclose(obs["state"][i], s_obs["state"], atol=1e-6)
    for _ in range(3):
        obs, _r, _term, trunc, info = venv.step(np.zeros((2, 8), np.float32))
    assert trunc.all() and info["_final_obs"].all()
    assert obs["state"].shape == (2, single.observation_space["state"].shape[0])
    venv.close()


def test_gym_make_vec_uses_the_same_helper():
    spec = gym.spec("MIKASA/RememberColor3-v0")
    assert spec.vector_entry_point == "membench_envs.robo.entry:make_robo_vec"


def test_render_overlay_draws_on_frames(robo_env):
    plain = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", render_mode="rgb_array")
    over = robo_env("MIKASA/RememberColor3-v0", obs_variant="full", render_mode="rgb_array", render_overlay=True)
    plain.reset(seed=0)
    over.reset(seed=0)
    a, b = plain.render(), over.render()
    assert a.shape == b.shape == (512, 512, 3) and a.dtype == b.dtype == np.uint8
    assert not np.array_equal(a[:40, :200], b[:40, :200])  # text box in the top-left corner
    np.testing.assert_array_equal(a[300:], b[300:])  # the rest of the frame is untouched
    lines = over.unwrapped.overlay_lines(0)
    assert lines[0].startswith("step 0/60") and "cue" in lines[0]
    assert lines[1] == f"target: {['Red', 'Lime', 'Blue'][int(over.unwrapped.oracle()[0, 0])]}"


def _cup(info) -> str:
    k = int(info["oracle"][0])
    return f"cup {k} ({('left', 'center', 'right')[k]})"


def _colour_names(info) -> str:
    from membench_envs.robo.remember_color import COLORS

    return " > ".join(COLORS[k][0] for k in info["oracle"])  # the chain, in order


#: one ID per family (but Remember*, above) -> (start of the overlay's first line, its target words from the info)
OVERLAYS = {
    "MIKASA/ShellGamePick-v0": ("step 0/90  phase: observation", _cup),
    "MIKASA/ChainOfColors3-v0": ("step 0/120  phase: cue_0", _colour_names),
    "MIKASA/InterceptFast-v0": (
        "step 0/90  phase: rolling",
        lambda info: f"v0 = ({info['oracle'][0]:.2f}, {info['oracle'][1]:.2f}) m/s",
    ),
    "MIKASA/RotateStrictPosNeg-v0": (
        "step 0/90  phase: action",
        lambda info: f"rotate {math.degrees(info['target_angle']):+.1f} deg",
    ),
    "MIKASA/TakeItBack-v0": (
        "step 0/180  phase: action",
        lambda info: f"start ({info['oracle'][0]:+.3f}, {info['oracle'][1]:+.3f}); to the goal",
    ),
}


@pytest.mark.parametrize("env_id", list(OVERLAYS))
def test_each_family_renders_and_names_its_target_in_the_overlay(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full", render_mode="rgb_array", render_overlay=True)
    _, info = env.reset(seed=0)
    frame = env.render()  # the family's render camera
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8 and frame.std() > 0
    first, target = OVERLAYS[env_id]
    lines = env.unwrapped.overlay_lines(0)
    assert lines[0].startswith(first), lines
    assert target(info) in lines[1], lines


def test_record_episode_one_liner(tmp_path):
    import imageio

    path = membench_envs.robo.record_episode(
        "MIKASA/RememberColor3-v0", tmp_path / "rc3.mp4", max_steps=6, obs_variant="full"
    )
    frames = imageio.mimread(path)
    assert len(frames) == 7 and frames[0].shape == (512, 512, 3)


def test_maniskill_record_episode_wrapper_with_overlay(tmp_path):
    """ManiSkill's own RecordEpisode over our overlay, on the batched torch interface of a ``MIKASA/`` ID (the only
    ID: nothing is registered with ManiSkill)."""
    from mani_skill.utils.wrappers import RecordEpisode

    env = gym.make(
        "MIKASA/RememberColor3-v0",
        obs_variant="full",
        render_mode="rgb_array",
        batched=True,
        render_overlay=True,
        render_backend="cpu",
    )
    env = RecordEpisode(env, str(tmp_path), save_trajectory=False, max_steps_per_video=4)
    env.reset(seed=0)
    for _ in range(3):
        env.step(torch.zeros(1, 8))
    env.close()
    assert list(tmp_path.glob("*.mp4"))
