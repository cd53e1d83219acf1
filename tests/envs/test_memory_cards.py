"""Memory Cards (DTQN): encoding, match/miss rewards, reveal rule, time limit, variants, batched == single."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import membench_envs
from tests.envs._helpers import compare_batched_with_sync

ENV = "MIKASA/MemoryCards-v0"
P = 5
C = 2 * P
REMOVED = P + 1


def make(variant="partial", **kw):
    return gym.make(ENV, obs_variant=variant, **kw)


def face_up(obs, c=C):
    """(position, value) of the face-up card of a partial observation."""
    part = np.asarray(obs[:c])
    up = np.flatnonzero((part > 0) & (part < (c // 2) + 1))
    assert up.size == 1, part
    return int(up[0]), int(part[up[0]])


def partner(values, pos):
    (other,) = [j for j in np.flatnonzero(values == values[pos]) if j != pos]
    return int(other)


def test_presets_and_catalogue():
    for env_id, pairs in {
        "MIKASA/MemoryCards-v0": 5,
        "MIKASA/MemoryCardsEasy-v0": 5,
        "MIKASA/MemoryCardsMedium-v0": 10,
        "MIKASA/MemoryCardsHard-v0": 30,
    }.items():
        spec = membench_envs.info(env_id)
        assert dict(spec.kwargs) == {"num_pairs": pairs}
        assert spec.episode_length == 10 * pairs and spec.xi == (2, 10 * pairs)
        assert spec.memory_types == ("capacity",) and "MIKASA-Base" in spec.suites
        env = gym.make(env_id)
        assert env.action_space.n == 2 * pairs
        assert isinstance(env.observation_space, gym.spaces.MultiDiscrete)
        np.testing.assert_array_equal(env.observation_space.nvec, [pairs + 2] * 2 * pairs)
        assert gym.make(env_id, obs_variant="oracle").observation_space.shape == (4 * pairs,)


def test_reset_shows_one_card_of_a_shuffled_deck():
    env = make("full")
    positions = []
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        values = obs[C:]
        np.testing.assert_array_equal(np.sort(values), np.repeat(np.arange(1, P + 1), 2))
        pos, val = face_up(obs)
        assert val == values[pos]
        assert np.count_nonzero(obs[:C]) == 1
        expected_oracle = np.zeros(C, dtype=np.int64)
        expected_oracle[pos] = val
        np.testing.assert_array_equal(info["oracle"], expected_oracle)
        positions.append(pos)
    counts = np.bincount(positions, minlength=C)
    assert counts.min() >= 12, counts  # uniform: 30 expected per position
    # different seeds, different deals
    decks = {tuple(env.reset(seed=s)[0][C:]) for s in range(20)}
    assert len(decks) == 20


def test_match_removes_both_and_a_miss_turns_the_card_down():
    env = make("full")
    obs, info = env.reset(seed=3)
    values = obs[C:].copy()
    pos, val = face_up(obs)
    # Pointing at the face-up card itself: -1, the card turns down, a card is drawn again.
    obs, r, term, trunc, info = env.step(pos)
    assert r == -1.0 and not term and not trunc
    assert not (obs[:C] == REMOVED).any() and np.count_nonzero(obs[:C]) == 1
    # A non-matching card: -1.
    pos, val = face_up(obs)
    wrong = next(j for j in range(C) if values[j] != val)
    obs, r, term, _, info = env.step(wrong)
    assert r == -1.0 and not term
    assert np.count_nonzero(obs[:C]) == 1 and not (obs[:C] == REMOVED).any()
    # The partner: 0, both removed, a new card drawn among the others.
    pos, val = face_up(obs)
    mate = partner(values, pos)
    obs, r, term, _, info = env.step(mate)
    assert r == 0.0 and not term
    assert obs[pos] == REMOVED and obs[mate] == REMOVED and (obs[:C] == REMOVED).sum() == 2
    new_pos, new_val = face_up(obs)
    assert new_pos not in (pos, mate) and new_val == values[new_pos]
    assert info["oracle"][pos] == 0 and info["oracle"][mate] == 0  # removed cards need no memory
    # A removed card: -1.
    obs, r, term, _, info = env.step(pos)
    assert r == -1.0 and obs[pos] == REMOVED and obs[mate] == REMOVED


def test_clearing_the_table_terminates_with_success_and_removed_cards_never_come_up():
    env = make("full")
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        values = obs[C:].copy()
        for k in range(1, P + 1):
            pos, _ = face_up(obs)
            obs, r, term, trunc, info = env.step(partner(values, pos))
            assert r == 0.0 and not trunc
            assert (obs[:C] == REMOVED).sum() == 2 * k
            if k < P:
                assert not term and "success" not in info
                face_up(obs)  # exactly one face-up card, never a removed one
        assert term and info["success"]
        np.testing.assert_array_equal(obs[:C], np.full(C, REMOVED))
        assert not info["oracle"].any()


def test_time_limit_truncates_without_success():
    env = make(num_pairs=3, time_limit=7)
    obs, _ = env.reset(seed=0)
    for t in range(1, 8):
        pos, _ = face_up(obs, 6)
        obs, r, term, trunc, info = env.step(pos)  # always wrong
        assert r == -1.0 and not term
        assert trunc == (t == 7)
    assert info["success"] is False
    face_up(obs, 6)  # a card is face up in the truncated observation, as under DTQN's TimeLimit
    # ... and it is a fresh draw (DTQN draws the next card before its TimeLimit wrapper truncates).
    one_step = make(num_pairs=3, time_limit=1)
    moved = 0
    for seed in range(20):
        first, _ = face_up(one_step.reset(seed=seed)[0], 6)
        obs, _, term, trunc, _ = one_step.step(first)
        assert trunc and not term
        moved += face_up(obs, 6)[0] != first
    assert moved > 5
    default = make()
    default.reset(seed=0)
    for t in range(1, 51):
        pos, _ = face_up(default.unwrapped.core.observe("partial", np.zeros(1, dtype=np.int64))[0])
        *_, term, trunc, _ = default.step(pos)
        assert trunc == (t == 50) and not term


def test_oracle_accumulates_seen_values_until_removed():
    env = make("full")
    obs, info = env.reset(seed=11)
    values = obs[C:].copy()
    seen = {face_up(obs)[0]}
    for _ in range(30):
        pos, _ = face_up(obs)
        obs, _r, term, trunc, info = env.step((pos + 1) % C)
        if term or trunc:
            break
        removed = obs[:C] == REMOVED
        seen.add(face_up(obs)[0])
        expected = np.array([values[j] if (j in seen and not removed[j]) else 0 for j in range(C)])
        np.testing.assert_array_equal(info["oracle"], expected)
    assert len(seen) > 3


# --- scripted policies ---------------------------------------------------------------------------------


def full_policy(obs, memory):
    pos, _ = face_up(obs)
    return partner(obs[C:], pos)


def _best_guess(obs, known):
    """Point at a known partner, else at the first card never seen (all unseen cards are equally likely)."""
    pos, val = face_up(obs)
    mates = [j for j in range(C) if j != pos and known[j] == val]
    if mates:
        return mates[0]
    return next(j for j in range(C) if j != pos and known[j] == 0 and obs[j] != REMOVED)


def oracle_policy(obs, memory):
    return _best_guess(obs, obs[C:])  # memoryless: the oracle part is the memory


def partial_memory_policy(obs, memory):
    pos, val = face_up(obs)
    memory[pos] = val
    memory[obs[:C] == REMOVED] = 0
    return _best_guess(obs, memory)


def run_episode(env, policy, seed, rng=None):
    obs, info = env.reset(seed=seed)
    memory = np.zeros(C, dtype=np.int64)
    total, steps, hits = 0.0, 0, []
    while True:
        remaining = int((obs[:C] != REMOVED).sum())
        a = policy(obs, memory) if rng is None else policy(obs, rng)
        obs, r, term, trunc, info = env.step(a)
        # the partner of the face-up card was among `remaining - 1` candidates
        hits.append((remaining, r == 0.0))
        memory[obs[:C] == REMOVED] = 0
        total += r
        steps += 1
        if term or trunc:
            return total, steps, info["success"], hits


def partial_memoryless_policy(obs, rng):
    # Without memory every other card still on the table is equally likely to be the partner.
    pos, _ = face_up(obs)
    return int(rng.choice([j for j in range(C) if j != pos and obs[j] != REMOVED]))


def test_full_information_policy_is_perfect():
    env = make("full")
    for seed in range(50):
        total, steps, success, _ = run_episode(env, full_policy, seed)
        assert total == 0.0 and steps == P and success


def test_memoryless_oracle_policy_plays_exactly_like_perfect_memory():
    oracle_env, partial_env = make("oracle"), make("partial")
    returns = []
    for seed in range(200):
        a = run_episode(oracle_env, oracle_policy, seed)
        b = run_episode(partial_env, partial_memory_policy, seed)
        assert a[:3] == b[:3], seed
        returns.append(a[0])
        assert a[2]  # perfect memory always clears 5 pairs well within 50 steps
    # The unavoidable cost of guessing: about 5.3 misses per episode.
    assert -6.5 < np.mean(returns) < -4.0


def test_memoryless_partial_policy_is_at_chance():
    """Chance level: a guess is right with probability 1/(k-1) when k cards are on the table (1/9 for a full one).

    Clearing m pairs then costs 2m-2 misses on average (geometric), so the expected return is -P(P-1) = -20 for
    5 pairs (std 11.8 per episode; the 50-step limit truncates only a few percent of episodes). Perfect memory
    gets about -5.3.
    """
    env = make()
    rng = np.random.default_rng(0)
    hits, returns = [], []
    for seed in range(400):
        total, _, _, h = run_episode(env, partial_memoryless_policy, seed, rng=rng)
        hits += h
        returns.append(total)
    k = np.array([x for x, _ in hits])
    hit = np.array([y for _, y in hits])
    expected = (1.0 / (k - 1)).sum()
    assert 0.9 < hit.sum() / expected < 1.1, (hit.sum(), expected)
    full_table = k == C
    assert abs(hit[full_table].mean() - 1 / (C - 1)) < 0.02
    assert -22.5 < np.mean(returns) < -17.5, np.mean(returns)  # ±2.5 = 4.4 standard errors
    # With the oracle the same kind of memoryless policy hits far more often than chance.
    memory_hits = []
    for seed in range(50):
        memory_hits += run_episode(make("oracle"), oracle_policy, seed)[3]
    mk = np.array([x for x, _ in memory_hits])
    assert sum(y for _, y in memory_hits) / (1.0 / (mk - 1)).sum() > 1.5


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_batched_matches_single_envs_step_for_step(mode, variant):
    n = 8
    terminated, truncated = compare_batched_with_sync(
        ENV, n, mode, 60, lambda rng: rng.integers(0, 4, size=n), obs_variant=variant, num_pairs=2, time_limit=6
    )
    assert terminated > n and truncated > n  # both ways of ending happened, several times


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"num_pairs": 0}, ValueError, "num_pairs must be an int >= 1"),
        ({"num_pairs": -1}, ValueError, "num_pairs must be an int >= 1"),
        ({"time_limit": 0}, ValueError, "time_limit must be an int >= 1"),
        ({"num_pairs": 2.0}, TypeError, "num_pairs must be an int"),
        ({"time_limit": "50"}, TypeError, "time_limit must be an int"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(ENV, **kwargs)
    with pytest.raises(exc, match=match):
        gym.make_vec(ENV, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)


def test_one_pair_is_trivial_and_render():
    env = gym.make(ENV, num_pairs=1, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    pos, _ = face_up(obs, 2)
    assert "[1]" in env.render() and "t=0/10" in env.render()
    obs, r, term, _, info = env.step(1 - pos)
    assert r == 0.0 and term and info["success"]
