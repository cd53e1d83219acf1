"""Passive T-Maze (memory paper variant) and classic T-Maze: geometry, timing, rewards, variants, batched == single,
and the authors' action order and observation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from membench_envs.envs.native.tmaze import DOWN, LEFT, RIGHT, UP

import membench_envs
from tests.envs._helpers import compare_batched_with_sync, play

L = 10


def make(variant="partial", **kw):
    return gym.make("MIKASA/TMazePassive-v0", obs_variant=variant, **kw)


def test_cue_only_at_reset_flag_only_at_junction_and_T_is_L_plus_1():
    env = make()
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        goal = info["oracle"][0]
        assert obs[1] == goal and goal in (-1, 1)
        assert obs[0] == 0 and obs[2] == 0
        for t in range(1, L + 1):
            obs, r, term, trunc, info = env.step(RIGHT)
            assert obs[1] == 0, "the clue must be visible at t=0 only"
            assert obs[2] == (1 if t == L else 0), f"flag wrong at t={t}"
            assert obs[3] in (-1, 0, 1)
            assert not term and r == 0
        obs, r, term, trunc, info = env.step(UP if goal == 1 else DOWN)
        assert term and not trunc and r == 1.0 and info["success"]
        assert obs[0] == goal
    assert membench_envs.info("MIKASA/TMazePassive-v0").episode_length == L + 1


def test_noise_channel_takes_all_three_values():
    env = make()
    env.reset(seed=0)
    seen = set()
    for _ in range(L):
        seen.add(float(env.step(RIGHT)[0][3]))
    env.reset(seed=1)
    for _ in range(L):
        seen.add(float(env.step(RIGHT)[0][3]))
    assert seen == {-1.0, 0.0, 1.0}


def test_walls_wrong_turn_and_timeout():
    env = make()
    obs, info = env.reset(seed=0)
    goal = info["oracle"][0]
    # Up/down in the corridor and left at the start are walls: nothing happens, time passes.
    for a in (UP, DOWN, LEFT):
        obs, r, term, _, _ = env.step(a)
        assert obs[0] == 0 and r == 0 and not term
    for _ in range(L - 3):
        env.step(RIGHT)
    # 3 steps lost: the agent is 3 cells short of the junction with 1 step left.
    obs, r, term, _trunc, info = env.step(RIGHT)
    assert term and r == 0 and not info["success"]
    # Wrong turn.
    obs, info = env.reset(seed=0)
    for _ in range(L):
        env.step(RIGHT)
    obs, r, term, _, info = env.step(DOWN if goal == 1 else UP)
    assert term and r == 0 and not info["success"] and obs[0] == -goal


def test_dense_penalty_is_minus_one_over_T_minus_1_on_lagging_steps():
    env = gym.make("MIKASA/TMazePassiveDense-v0")
    _obs, info = env.reset(seed=4)
    goal = info["oracle"][0]
    # On schedule (x == t after every step): no penalty, and the optimal return is 1.
    rewards = [env.step(RIGHT)[1] for _ in range(L)]
    assert rewards == [0.0] * L
    _, r, term, _, info = env.step(UP if goal == 1 else DOWN)
    assert term and r == 1.0 and info["success"]
    # Every step that leaves the agent behind the schedule costs 1/(T-1); catching up is impossible.
    env.reset(seed=4)
    rewards = [env.step(a)[1] for a in (RIGHT, UP, RIGHT, LEFT, RIGHT)]
    np.testing.assert_allclose(rewards, [0.0, -1 / L, -1 / L, -1 / L, -1 / L])
    env.reset(seed=4)
    total = 0.0
    for _ in range(L + 1):
        _, r, term, _, _ = env.step(LEFT)
        total += r
    assert term and total == pytest.approx(-1.0)  # T-1 = L lagging non-final steps; the final step scores 0


def oracle_policy(obs, episode):
    # Memoryless: reads the goal from the oracle channel, turns when the flag is up.
    return (UP if obs[4] > 0 else DOWN) if obs[2] == 1 else RIGHT


def full_policy(obs, episode):
    return (UP if obs[2] > 0 else DOWN) if obs[0] == 1.0 else RIGHT


def partial_memoryless_policy(obs, episode):
    # The best memoryless policy: it cannot know the clue at the junction, so it always turns up.
    return UP if obs[2] == 1 else RIGHT


def partial_memory_policy(obs, episode):
    return (UP if episode.first[1] > 0 else DOWN) if obs[2] == 1 else RIGHT


@pytest.mark.parametrize(
    "variant,policy,expected",
    [
        ("oracle", oracle_policy, (1.0, 1.0)),
        ("full", full_policy, (1.0, 1.0)),
        ("partial", partial_memory_policy, (1.0, 1.0)),
        ("partial", partial_memoryless_policy, (0.4, 0.6)),
    ],
)
def test_memory_improvability_ladder_with_scripted_policies(variant, policy, expected):
    env = make(variant)
    episodes = [play(env, policy, seed) for seed in range(200)]
    success = np.mean([e.info["success"] for e in episodes])
    assert expected[0] <= success <= expected[1], success
    assert all(e.t == L + 1 for e in episodes)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_batched_matches_single_envs_step_for_step(mode, variant):
    n = 8

    def sample(rng):
        a = rng.integers(0, 4, size=n)
        a[rng.random(n) < 0.5] = RIGHT
        return a

    terminated, truncated = compare_batched_with_sync(
        "MIKASA/TMazePassive-v0", n, mode, 60, sample, obs_variant=variant, corridor_length=4
    )
    assert terminated > n and truncated == 0  # several autoresets happened


def test_batched_reset_with_seed_list_and_bad_inputs():
    venv = gym.make_vec("MIKASA/TMazePassive-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, _info = venv.reset(seed=[5, 6, 7])
    single = make()
    for i, s in enumerate([5, 6, 7]):
        np.testing.assert_array_equal(obs[i], single.reset(seed=s)[0])
    with pytest.raises(ValueError, match="seeds"):
        venv.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="outside the action space"):
        venv.step(np.array([0, 1, 4]))
    with pytest.raises(ValueError, match="outside the action space"):
        venv.step(np.array([0, -1, 2]))  # below the space's start


@pytest.mark.parametrize("bad", [0, -3, 100_001, 10**12])
def test_bad_corridor_length(bad):
    with pytest.raises(ValueError, match="corridor_length must be an int >= 1 and <= 100000"):
        gym.make("MIKASA/TMazePassive-v0", corridor_length=bad)


def test_corridor_length_type_and_step_before_reset():
    with pytest.raises(TypeError, match="corridor_length must be an int"):
        gym.make("MIKASA/TMazePassive-v0", corridor_length=2.5)
    env = membench_envs.envs.native.tmaze.TMazePassive()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(RIGHT)


def test_fixed_length_ids_and_custom_length():
    for n in (5, 30, 100, 300):
        spec = membench_envs.info(f"MIKASA/TMazePassiveL{n}-v0")
        assert spec.episode_length == n + 1 and spec.xi == (n + 1, n + 1)
    env = gym.make("MIKASA/TMazePassive-v0", corridor_length=3)
    env.reset(seed=0)
    assert [env.step(RIGHT)[0][2] for _ in range(3)] == [0, 0, 1]


def test_render_ansi():
    env = gym.make("MIKASA/TMazePassive-v0", render_mode="ansi", corridor_length=3)
    env.reset(seed=0)
    text = env.render()
    assert "A" in text and "G" in text and "t=0/4" in text


# --- the authors' definition (Ni et al.'s T-Maze code, as MIKASA-Base ships it) -------------------------------------
#: action -> (dx, dy): the authors' ``action_mapping``; the memory paper lists the actions "left, up, right, down".
AUTHORS_MAPPING = ((1, 0), (0, 1), (-1, 0), (0, -1))
PAPER_MAPPING = ((-1, 0), (0, 1), (1, 0), (0, -1))


class AuthorsTMaze:
    """The authors' passive T-Maze, written from its definition: a move is taken when the target cell is on the map
    (the corridor y = 0, x = 0..L, and the two arm cells (L, +-1)); the episode lasts T = L + 1 steps; the last step
    pays 1 if y == goal; other steps pay ``penalty`` when x < t (t counted after the step). Observations: the classic
    one ``[x == L, y if x == L else (goal at t = 0, else 0)]``; the memory paper's one starts ``[y, clue, flag]``."""

    def __init__(self, L, goal, penalty=0.0, mapping=AUTHORS_MAPPING):
        self.L, self.goal, self.penalty, self.mapping = L, goal, penalty, mapping
        self.x = self.y = self.t = 0

    def on_map(self, x, y):
        return (y == 0 and 0 <= x <= self.L) or (x == self.L and y in (-1, 1))

    def step(self, a):
        self.t += 1
        dx, dy = self.mapping[a]
        if self.on_map(self.x + dx, self.y + dy):
            self.x, self.y = self.x + dx, self.y + dy
        done = self.t >= self.L + 1
        reward = float(self.y == self.goal) if done else self.penalty * float(self.x < self.t)
        return reward, done

    def classic_obs(self):
        if self.x == self.L:
            return [1.0, float(self.y)]
        return [0.0, float(self.goal) if self.t == 0 else 0.0]

    def paper_obs(self):
        clue = float(self.goal) if self.t == 0 else 0.0
        return [float(self.y), clue, float(self.x == self.L and self.y == 0)]


def _policies(L, rng):
    """Random walks plus the optimal route to each arm (so both rewards and all walls are met)."""
    yield [0] * L + [1]
    yield [0] * L + [3]
    yield [2, 1, 3] + [0] * (L - 1)
    for _ in range(30):
        yield list(rng.integers(0, 4, L + 1))
        yield list(np.where(rng.random(L + 1) < 0.8, 0, rng.integers(0, 4, L + 1)))


@pytest.mark.parametrize(
    "env_id",
    ["MIKASA/TMazePassive-v0", "MIKASA/TMazePassiveDense-v0", "MIKASA/TMazeClassic-v0", "MIKASA/TMazeClassicDense-v0"],
)
@pytest.mark.parametrize("order", ["code", "paper"])
def test_dynamics_rewards_and_observations_match_the_authors_definition(env_id, order):
    L = 4
    spec = membench_envs.info(env_id)
    penalty = -1.0 / L if spec.kwargs["penalty"] else 0.0
    mapping = AUTHORS_MAPPING if order == "code" else PAPER_MAPPING
    env = gym.make(env_id, corridor_length=L, action_order=order)
    full = gym.make(env_id, corridor_length=L, action_order=order, obs_variant="full")
    rng = np.random.default_rng(0)
    for seed, actions in enumerate(_policies(L, rng)):
        obs, info = env.reset(seed=seed)
        full.reset(seed=seed)
        ref = AuthorsTMaze(L, int(info["oracle"][0]), penalty, mapping)
        classic = "Classic" in env_id
        assert list(obs[:2] if classic else obs[:3]) == (ref.classic_obs() if classic else ref.paper_obs())
        steps = 0
        for a in actions:
            steps += 1
            obs, r, term, trunc, _ = env.step(int(a))
            f = full.step(int(a))[0]
            r_ref, done = ref.step(int(a))
            assert (f[0] * L, f[1]) == (ref.x, ref.y)
            assert r == pytest.approx(r_ref) and term == done and not trunc
            assert list(obs[:2] if classic else obs[:3]) == (ref.classic_obs() if classic else ref.paper_obs())
            if term:
                break
        assert steps == L + 1  # the episode always lasts T = L + 1 steps


def test_action_zero_moves_towards_the_junction():
    for env_id in ("MIKASA/TMazePassive-v0", "MIKASA/TMazeClassic-v0"):
        env = gym.make(env_id, obs_variant="full")
        env.reset(seed=0)
        assert env.step(0)[0][0] == pytest.approx(1 / L)  # x: 0 -> 1
        paper = gym.make(env_id, obs_variant="full", action_order="paper")
        paper.reset(seed=0)
        assert paper.step(2)[0][0] == pytest.approx(1 / L) and paper.step(0)[0][0] == 0.0
    assert (RIGHT, UP, LEFT, DOWN) == (0, 1, 2, 3)


def test_classic_tmaze_ids_observation_and_suites():
    for env_id, dense in (("MIKASA/TMazeClassic-v0", False), ("MIKASA/TMazeClassicDense-v0", True)):
        spec = membench_envs.info(env_id)
        assert spec.suites == ("MIKASA-Base",) and spec.source == "Ni2023" and spec.xi == (11, 11)
        assert spec.kwargs == {"corridor_length": 10, "penalty": dense}
        spaces = {v: gym.make(env_id, obs_variant=v).observation_space.shape for v in ("partial", "oracle", "full")}
        assert spaces == {"partial": (2,), "oracle": (3,), "full": (4,)}
    env = gym.make("MIKASA/TMazeClassic-v0", obs_variant="oracle")
    obs, info = env.reset(seed=3)
    goal = info["oracle"][0]
    assert list(obs) == [0.0, goal, goal]  # the clue, then the oracle's goal
    for _ in range(L - 1):
        obs, *_ = env.step(RIGHT)
        assert list(obs) == [0.0, 0.0, goal]  # corridor cells all look alike: no flag, no noise
    obs, *_ = env.step(RIGHT)
    assert list(obs) == [1.0, 0.0, goal]  # at the junction
    obs, r, term, _, info = env.step(UP if goal > 0 else DOWN)
    assert list(obs) == [1.0, goal, goal] and r == 1.0 and term and info["success"]
    for tmaze_passive in ("MIKASA/TMazePassive-v0", "MIKASA/TMazePassiveL30-v0"):
        assert membench_envs.info(tmaze_passive).suites == ("MEM",)


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_classic_batched_equals_single(variant):
    def sample(rng):
        a = rng.integers(0, 4, size=6)
        a[rng.random(6) < 0.5] = RIGHT
        return a

    terminated, _ = compare_batched_with_sync(
        "MIKASA/TMazeClassicDense-v0", 6, AutoresetMode.NEXT_STEP, 40, sample, obs_variant=variant, corridor_length=3
    )
    assert terminated > 6
