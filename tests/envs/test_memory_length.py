"""bsuite MemoryLength: step-exact timing of context/query/time, ±1 reward, variants, batched == single."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import membench_envs
from tests.envs._helpers import compare_batched_with_sync, play

ENV = "MIKASA/MemoryLength-v0"


def make(variant="partial", **kw):
    return gym.make(ENV, obs_variant=variant, **kw)


def test_presets_match_mikasa_base_and_catalogue_horizons():
    for env_id, (length, bits) in {
        "MIKASA/MemoryLength-v0": (10, 1),
        "MIKASA/MemoryLengthEasy-v0": (10, 1),
        "MIKASA/MemoryLengthMedium-v0": (30, 1),
        "MIKASA/MemoryLengthHard-v0": (100, 3),
    }.items():
        spec = membench_envs.info(env_id)
        assert dict(spec.kwargs) == {"memory_length": length, "num_bits": bits}
        assert spec.episode_length == length + 1
        assert spec.xi == (length, length) and spec.context_memory_border == length - 1
        assert spec.memory_types == ("object",) and "MIKASA-Base" in spec.suites
        env = gym.make(env_id)
        assert env.observation_space.shape == (bits + 2,) and env.action_space.n == 2


@pytest.mark.parametrize("length,bits", [(10, 1), (5, 3), (1, 2)])
def test_step_exact_timing_of_time_context_and_query(length, bits):
    env = make(memory_length=length, num_bits=bits)
    full = make("full", memory_length=length, num_bits=bits)
    for seed in range(8):
        obs, info = env.reset(seed=seed)
        state, _ = full.reset(seed=seed)
        query = int(state[1])
        context = info["oracle"]
        assert set(np.unique(context)) <= {-1.0, 1.0} and context.shape == (bits,)
        assert 0 <= query < bits
        np.testing.assert_array_equal(state[2:], context)
        # Reset observation: time 1, context shown, query only if L = 1 (then the reset obs is the query step).
        assert obs[0] == 1.0
        np.testing.assert_array_equal(obs[2:], context)
        assert obs[1] == (query if length == 1 else 0)
        for k in range(1, length + 1):  # actions 1 … L: reward 0, not over
            obs, r, term, trunc, info = env.step(0)
            s = k - 1  # bsuite's pre-step counter
            assert r == 0.0 and not term and not trunc
            np.testing.assert_allclose(obs[0], 1.0 - s / length, rtol=1e-6)
            if k == 1:
                np.testing.assert_array_equal(obs[2:], context)  # the first observation, repeated
            else:
                assert not obs[2:].any(), f"context visible after action {k}"
            assert obs[1] == (query if k == length else 0)
            np.testing.assert_array_equal(info["oracle"], context)
        # Action L + 1 is judged on the observation that shows the query.
        answer = int(context[query] > 0)
        obs, r, term, trunc, info = env.step(answer)
        assert r == 1.0 and term and not trunc and info["success"]
        np.testing.assert_array_equal(obs, np.zeros(bits + 2, np.float32))
        with pytest.raises(gym.error.ResetNeeded):
            env.unwrapped.step(0)


def test_wrong_answer_is_minus_one_and_only_the_final_action_counts():
    env = make(memory_length=4, num_bits=2)
    for seed in range(10):
        _, info = env.reset(seed=seed)
        state = env.unwrapped.core
        answer = int(state.context[0, state.query[0]])
        rewards = [env.step(1 - answer)[1] for _ in range(4)]  # wrong-looking actions before the end: no effect
        assert rewards == [0.0] * 4
        _, r, term, trunc, info = env.step(1 - answer)
        assert r == -1.0 and term and not trunc and not info["success"]


def test_full_variant_is_time_query_context():
    env = make("full", memory_length=3, num_bits=2)
    obs, info = env.reset(seed=5)
    q = int(obs[1])
    for t in range(1, 5):
        np.testing.assert_array_equal(obs[2:], info["oracle"])
        assert obs[1] == q
        obs, _r, term, _, info = env.step(0)
        np.testing.assert_allclose(obs[0], t / 4, rtol=1e-6)
    assert term


def test_context_bits_fair_and_query_uniform():
    venv = gym.make_vec(ENV, num_envs=1200, vectorization_mode="vector_entry_point", num_bits=3)
    venv.reset(seed=0)
    ctx, query = venv.unwrapped.core.context, venv.unwrapped.core.query
    assert abs(ctx.mean() - 0.5) < 0.03
    freq = np.bincount(query, minlength=3) / query.size
    np.testing.assert_allclose(freq, 1 / 3, atol=0.04)
    # bits of one episode are independent of each other and of the query
    assert abs(np.corrcoef(ctx[:, 0], ctx[:, 1])[0, 1]) < 0.1


def oracle_policy(obs, episode, bits=3):
    # Memoryless: the query (o[1], 0 except on the answer step) indexes the appended context bits.
    return int(obs[2 + bits + int(obs[1])] > 0)


def full_policy(obs, episode):
    return int(obs[2 + int(obs[1])] > 0)


def partial_memory_policy(obs, episode):
    return int(episode.first[2 + int(obs[1])] > 0)


def partial_memoryless_policy(obs, episode):
    # The context is gone by the time the query shows up: a memoryless policy can only guess (always 1).
    return 1


@pytest.mark.parametrize(
    "variant,policy,expected",
    [
        ("oracle", oracle_policy, (1.0, 1.0)),
        ("full", full_policy, (1.0, 1.0)),
        ("partial", partial_memory_policy, (1.0, 1.0)),
        ("partial", partial_memoryless_policy, (0.42, 0.58)),  # chance: success 1/2, mean return 0
    ],
)
def test_memory_improvability_ladder_with_scripted_policies(variant, policy, expected):
    env = gym.make("MIKASA/MemoryLengthHard-v0", obs_variant=variant, memory_length=12)
    episodes = [play(env, policy, seed) for seed in range(400)]
    success = np.mean([e.info["success"] for e in episodes])
    assert expected[0] <= success <= expected[1], success
    returns = np.array([e.total for e in episodes])
    assert set(np.unique(returns)) <= {-1.0, 1.0}
    np.testing.assert_allclose(returns.mean(), 2 * success - 1)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_batched_matches_single_envs_step_for_step(mode, variant):
    n = 8
    terminated, truncated = compare_batched_with_sync(
        ENV, n, mode, 30, lambda rng: rng.integers(0, 2, size=n), obs_variant=variant, memory_length=3, num_bits=2
    )
    assert terminated >= 5 * n and truncated == 0  # every env finished several 4-step episodes


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"memory_length": 0}, ValueError, "memory_length must be an int >= 1"),
        ({"memory_length": -2}, ValueError, "memory_length must be an int >= 1"),
        ({"num_bits": 0}, ValueError, "num_bits must be an int >= 1"),
        ({"memory_length": 2.5}, TypeError, "memory_length must be an int"),
        ({"num_bits": True}, TypeError, "num_bits must be an int"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(ENV, **kwargs)
    with pytest.raises(exc, match=match):
        gym.make_vec(ENV, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)


def test_render_ansi():
    env = gym.make(ENV, render_mode="ansi", memory_length=3, num_bits=2)
    env.reset(seed=0)
    assert "t=0/4" in env.render() and "query=" in env.render()
