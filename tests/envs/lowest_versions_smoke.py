"""Smoke run of the envs-only install (no extras), for the lowest declared gymnasium / numpy versions.

Run by tests/envs/test_lowest_versions.py inside a throwaway venv (it must not import anything from tests/):
every native ID in every variant is made, reset, stepped to the end of an episode and rendered; the batched
VectorEnv of each ID is stepped in both autoreset modes and checked against single envs. Prints the versions
it ran under and ``OK`` at the end.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import membench_envs

print(f"gymnasium {gym.__version__}, numpy {np.__version__}, membench-envs {membench_envs.__version__}")


def leaves(obs, space):
    """(value, space) of each array of an observation: itself, or each entry of a Dict observation."""
    if isinstance(obs, dict):
        return [(obs[k], space[k]) for k in space.spaces]
    return [(obs, space)]


def row(obs, i):
    return {k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


native = [spec for spec in membench_envs.all_tasks() if spec.extra is None]
assert native, "no native IDs in the catalogue"
for spec in native:
    for variant in spec.variants:
        env = gym.make(spec.id, obs_variant=variant, render_mode="rgb_array")
        obs, info = env.reset(seed=3)
        assert env.observation_space.contains(obs), (spec.id, variant, obs)
        assert "oracle" in info
        env.action_space.seed(3)
        shape = env.render().shape
        for _ in range(spec.episode_length or 1000):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            assert env.observation_space.contains(obs), (spec.id, variant, obs)
            frame = env.render()
            assert frame.dtype == np.uint8 and frame.shape == shape, (spec.id, frame.dtype, frame.shape, shape)
            if terminated or truncated:
                break
        assert terminated or truncated, f"{spec.id}: no episode end within T={spec.episode_length}"
        assert isinstance(info["success"], bool)
        env.close()
        text = gym.make(spec.id, obs_variant=variant, render_mode="ansi")
        text.reset(seed=0)
        assert isinstance(text.render(), str)

    n = 4
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        venv = gym.make_vec(spec.id, num_envs=n, autoreset_mode=mode)
        singles = [gym.make(spec.id) for _ in range(n)]
        obs, _ = venv.reset(seed=10)
        for i, single in enumerate(singles):
            first = single.reset(seed=10 + i)[0]
            for (a, _), (b, _) in zip(
                leaves(row(obs, i), single.observation_space), leaves(first, single.observation_space), strict=True
            ):
                np.testing.assert_array_equal(a, b)
        venv.action_space.seed(0)
        ends = 0
        for _ in range(3 * (spec.episode_length or 100)):
            actions = venv.action_space.sample()
            obs, reward, terminated, truncated, info = venv.step(actions)
            assert reward.shape == (n,)
            for value, space in leaves(obs, venv.observation_space):
                assert value.shape == space.shape, (spec.id, value.shape, space.shape)
            ends += int((terminated | truncated).sum())
        assert ends > 0, f"{spec.id}: no episode ended in the batched env ({mode})"
        venv.close()
print(f"{len(native)} native IDs OK")
print("OK")
