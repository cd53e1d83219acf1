"""POBAX's numpy tasks (T-Maze, RockSample, Battleship): seeding and batched == single on every ID, and each rule
against the authors' code with constructed states. (gymnasium's checker on every ID in every variant runs in
tests/envs/test_catalogue_and_registry.py, the kwarg checks in tests/envs/test_inputs.py, the pictures in
tests/envs/test_render.py.)"""

from __future__ import annotations

import math
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from membench_envs.envs.pobax import battleship, rocksample
from membench_envs.envs.pobax.tmaze import DOWN, EAST, UP, WEST

import membench_envs
from tests.envs._helpers import assert_same, compare_batched_with_sync

# the IDs of the three task modules tested here (the mazes, MuJoCo and Crafter have their own test files)
_MODULES = {f"membench_envs.envs.pobax.{m}" for m in ("tmaze", "rocksample", "battleship")}
POBAX_IDS = [spec.id for spec in membench_envs.all_tasks() if spec.entry_point.split(":")[0] in _MODULES]
TMAZE, RS11, RS15 = "POBAX/TMaze10-v0", "POBAX/RockSample11x11-v0", "POBAX/RockSample15x15-v0"
BS10, BS5, BS3 = "POBAX/Battleship10-v0", "POBAX/Battleship5-v0", "POBAX/Battleship3-v0"


def test_the_ids():
    assert POBAX_IDS == [TMAZE, RS11, RS15, BS10, BS5, BS3]


# --- every ID: seeding, batched == single -----------------------------------------------------------------------------
def _trajectory(env_id: str, variant: str, seed: int, steps: int = 250) -> list:
    env = gym.make(env_id, obs_variant=variant)
    obs, info = env.reset(seed=seed)
    actions = np.random.default_rng(0).integers(0, env.action_space.n, steps)
    out = [(obs, info["oracle"])]
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(int(a))
        out.append((obs, info["oracle"], reward, terminated, truncated))
        if terminated or truncated:
            out.append(env.reset())
    return out


def _same(a, b) -> bool:
    try:
        for x, y in zip(a, b, strict=True):
            for u, v in zip(x, y, strict=True):
                assert_same(u, v)
    except (AssertionError, ValueError):
        return False
    return True


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
@pytest.mark.parametrize("env_id", POBAX_IDS)
def test_same_seed_same_trajectory_other_seed_other_trajectory(env_id, variant):
    a = _trajectory(env_id, variant, seed=11)
    assert _same(a, _trajectory(env_id, variant, seed=11))
    assert not _same(a, _trajectory(env_id, variant, seed=12))


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("env_id", POBAX_IDS)
def test_batched_equals_single(env_id, mode):
    """Random actions (fired cells included) with a 40-step cap, so that episodes end by the task and by the cap."""
    space_n = gym.make(env_id).action_space.n
    for variant in ("partial", "oracle", "full"):
        terminated, truncated = compare_batched_with_sync(
            env_id, 4, mode, 100, lambda rng: rng.integers(0, space_n, 4), obs_variant=variant, max_steps=40
        )
        assert terminated + truncated > 0, "no episode ended: the autoreset paths were not compared"


def test_battleship_batched_info_action_mask_equals_the_single_envs():
    venv = gym.make_vec(BS10, num_envs=3, vectorization_mode="vector_entry_point")
    singles = [gym.make(BS10) for _ in range(3)]
    _, info = venv.reset(seed=4)
    single_infos = [env.reset(seed=4 + i)[1] for i, env in enumerate(singles)]
    rng = np.random.default_rng(1)
    for _ in range(12):  # (no episode of 10x10 Battleship ends within 12 shots)
        assert info["_action_mask"].all()
        np.testing.assert_array_equal(info["action_mask"], np.stack([i["action_mask"] for i in single_infos]))
        actions = rng.integers(0, 100, 3)
        info = venv.step(actions)[-1]
        single_infos = [env.step(int(a))[-1] for env, a in zip(singles, actions, strict=True)]
    assert info["action_mask"].sum() < 300


# --- T-Maze -----------------------------------------------------------------------------------------------------------
N = 10


def _tmaze(goal: int, variant: str = "partial", **kwargs):
    """A T-Maze whose goal_dir is set to ``goal`` (0: up) after the reset; returns (env, reset observation)."""
    env = gym.make(TMAZE, obs_variant=variant, **kwargs)
    env.reset(seed=0)
    core = env.unwrapped.core
    core.goal[0] = goal
    return env, core.observe(variant)[0]


@pytest.mark.parametrize("goal", [0, 1])
def test_tmaze_start_observation_is_the_goal_bit_which_is_absent_for_up(goal):
    env, first = _tmaze(goal)
    np.testing.assert_array_equal(first, [goal, 1, 0, 0])  # goal 0 (up): the hallway's own observation
    seen = [env.step(EAST)[0] for _ in range(N + 1)]
    for obs in seen[:-1]:
        np.testing.assert_array_equal(obs, [0, 1, 0, 0])
    np.testing.assert_array_equal(seen[-1], [0, 0, 1, 0])  # the junction, cell n + 1
    for _ in range(N + 1):  # walking back to cell 0 shows the cue again
        obs = env.step(WEST)[0]
    np.testing.assert_array_equal(obs, [goal, 1, 0, 0])


@pytest.mark.parametrize("goal", [0, 1])
def test_tmaze_paper_layout_and_perfect_memory(goal):
    _, first = _tmaze(goal, observation="paper")
    np.testing.assert_array_equal(first, [goal == 0, goal == 1, 1, 0])
    env, first = _tmaze(goal, variant="oracle")
    np.testing.assert_array_equal(first, [goal, 1, 0, 0, goal])
    for _ in range(N + 1):
        obs, *_, info = env.step(EAST)
    np.testing.assert_array_equal(obs, [goal, 0, 1, 0, goal])  # the goal bit on every cell
    assert info["oracle"][0] == goal


@pytest.mark.parametrize("goal", [0, 1])
def test_tmaze_rewards_and_episode_length(goal):
    right, wrong = (UP, DOWN) if goal == 0 else (DOWN, UP)
    env, _ = _tmaze(goal)
    for a in (UP, DOWN):  # up / down in the hallway: nothing happens
        _, reward, terminated, truncated, _ = env.step(a)
        assert (reward, terminated, truncated) == (0.0, False, False)
    rewards = [env.step(EAST)[1] for _ in range(N + 1)]
    assert rewards == [0.0] * (N + 1)
    _, reward, terminated, truncated, info = env.step(right)
    assert (reward, terminated, truncated, info["success"]) == (4.0, True, False, True)
    assert env.unwrapped.core.t[0] == 2 + N + 2  # the shortest episode is n + 2 steps (+2 wasted here)
    env, _ = _tmaze(goal)
    for _ in range(N + 1):
        env.step(EAST)
    _, reward, terminated, _, info = env.step(wrong)
    assert (reward, terminated, info["success"]) == (-0.1, True, False)


def test_tmaze_episode_cap_truncates():
    env, _ = _tmaze(0, max_steps=5)
    ends = [env.step(WEST)[2:4] for _ in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]


# --- RockSample -------------------------------------------------------------------------------------------------------
def test_rocksample_maps_are_the_authors():
    """The maps of their generate_map for the best/ scripts' run seeds, (row, col), rock index = position."""
    expected = {
        (RS11, "ppo"): [[8, 6], [1, 7], [10, 2], [2, 9], [7, 4], [8, 4], [6, 9], [3, 5], [5, 3], [2, 1], [6, 3]],
        (RS15, "ppo"): [[8, 5], [10, 6], [3, 9], [5, 6], [4, 5], [9, 6], [0, 13], [7, 11], [5, 10], [9, 10], [13, 5],
                        [5, 0], [10, 4], [2, 7], [9, 9]],
        (RS11, "transformer"): [[5, 8], [5, 1], [7, 7], [3, 9], [1, 9], [6, 5], [5, 0], [5, 3], [6, 8], [9, 9], [2, 6]],
        (RS15, "transformer"): [[14, 4], [6, 8], [11, 7], [3, 5], [11, 13], [2, 2], [4, 11], [3, 12], [1, 8], [11, 6],
                                [10, 11], [6, 3], [13, 7], [7, 3], [0, 7]],
    }  # fmt: skip
    for (env_id, rock_map), rocks in expected.items():
        core = gym.make(env_id, rock_map=rock_map).unwrapped.core
        np.testing.assert_array_equal(core.rocks, rocks)
    assert gym.make(RS11).unwrapped.core.rocks.tolist() == expected[RS11, "ppo"]  # the default


def test_rocksample_drawn_maps_and_map_errors():
    a = gym.make(RS11, rock_map="drawn", map_seed=3).unwrapped.core.rocks
    assert np.array_equal(a, gym.make(RS11, rock_map="drawn", map_seed=3).unwrapped.core.rocks)
    assert not np.array_equal(a, gym.make(RS11, rock_map="drawn", map_seed=4).unwrapped.core.rocks)
    big = gym.make(RS11, rock_map="drawn", size=6, rocks=30).unwrapped.core.rocks  # every allowed cell
    assert len({tuple(r) for r in big}) == 30 and big[:, 1].max() == 4 and big[:, 0].max() == 5
    with pytest.raises(ValueError, match=re.escape("rock_map='ppo' is not allowed for size=12, rocks=11")):
        gym.make(RS11, size=12)
    with pytest.raises(ValueError, match=re.escape("map_seed=3 is not allowed with rock_map='ppo'")):
        gym.make(RS11, map_seed=3)
    with pytest.raises(ValueError, match=re.escape("rocks=31 is not allowed; a 6x6 grid has 30 cells")):
        gym.make(RS11, rock_map="drawn", size=6, rocks=31)


def test_rocksample_sensor_accuracy_formula():
    assert rocksample.sensor_accuracy(0.0) == 1.0
    assert rocksample.sensor_accuracy(20.0) == 0.75
    assert rocksample.sensor_accuracy(5.0) == pytest.approx(0.9204482)
    assert rocksample.sensor_accuracy(10 * math.sqrt(2)) == pytest.approx(0.8062, abs=1e-4)  # 11x11 diagonal
    assert rocksample.sensor_accuracy(14 * math.sqrt(2)) == pytest.approx(0.7517, abs=1e-4)  # 15x15 diagonal


@pytest.mark.parametrize(("offset", "distance"), [((0, 0), 0.0), ((3, 4), 5.0), ((6, 8), 10.0)])
def test_rocksample_check_reads_correctly_with_the_sensor_accuracy(offset, distance):
    n_envs, rock = 4000, 2  # rock 2 sits at (10, 2) on the 11x11 map
    venv = gym.make_vec(RS11, num_envs=n_envs, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    core = venv.unwrapped.core
    core.pos[:] = core.rocks[rock] - np.array(offset)
    good = np.arange(n_envs) % 2
    core.good[:, rock] = good
    obs, reward, *_ = venv.step(np.full(n_envs, rocksample.FIRST_CHECK + rock))
    reading = obs[:, 22 + rock]
    assert set(np.unique(reading)) <= {-1.0, 1.0} and np.all(reward == 0)
    others = np.delete(obs[:, 22:], rock, axis=1)
    assert not others.any()
    correct = np.mean(reading == np.where(good == 1, 1.0, -1.0))
    expected = rocksample.sensor_accuracy(distance)
    assert correct == pytest.approx(expected, abs=0.03), (correct, expected)


def test_rocksample_sample_good_then_bad_and_perfect_memory():
    env = gym.make(RS11, obs_variant="oracle")
    env.reset(seed=0)
    core = env.unwrapped.core
    rock = 4  # at (7, 4)
    core.pos[0] = core.rocks[rock]
    core.good[0, rock] = 1
    obs, reward, terminated, _, info = env.step(rocksample.SAMPLE)
    assert (reward, terminated) == (10.0, False)
    assert core.good[0, rock] == 0  # a sampled rock turns bad
    assert obs[22 + rock] == -1.0 and info["oracle"][rock] == -1.0  # the perfect memory: sampled means bad
    obs, reward, *_ = env.step(rocksample.SAMPLE)
    assert reward == -10.0
    env.step(2)  # south, to (8, 4): rock 5
    core.good[0, 5] = 0
    assert env.step(rocksample.SAMPLE)[1] == -10.0
    assert env.step(3)[1] == 0.0  # west, to (8, 3): no rock
    memory = core.memory[0].copy()
    obs, reward, *_ = env.step(rocksample.SAMPLE)
    assert reward == 0.0 and np.array_equal(obs[22:], memory)


def test_rocksample_partial_observation_shows_a_check_for_one_step_and_no_sample():
    env = gym.make(RS11)
    obs, _ = env.reset(seed=0)
    core = env.unwrapped.core
    assert not obs[22:].any()
    core.pos[0] = core.rocks[0]  # distance 0: the reading is the truth
    core.good[0] = 0
    core.good[0, 0] = 1
    obs, *_, info = env.step(rocksample.FIRST_CHECK)
    assert obs[22] == 1.0 and not obs[23:].any() and info["oracle"][0] == 1.0
    obs, *_, info = env.step(rocksample.SAMPLE)
    assert not obs[22:].any() and info["oracle"][0] == -1.0  # the partial view shows no sample
    pos = obs[:22]
    assert pos[core.rocks[0][0]] == 1 and pos[11 + core.rocks[0][1]] == 1 and pos.sum() == 2


def test_rocksample_exit_pays_10_and_ends():
    env = gym.make(RS15)
    env.reset(seed=0)
    core = env.unwrapped.core
    core.pos[0] = (3, 13)
    _, reward, terminated, truncated, info = env.step(1)  # east, into column 14
    assert (reward, terminated, truncated, info["success"]) == (10.0, True, False, True)
    env.reset(seed=0)
    core.pos[0] = (0, 0)
    assert env.step(0)[1:3] == (0.0, False)  # north at the edge: clipped, nothing
    assert core.pos[0].tolist() == [0, 0]


def test_rocksample_episodes_redraw_statuses_and_starts_and_forget_the_memory():
    env = gym.make(RS11, obs_variant="full")
    starts, statuses = set(), set()
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        starts.add((int(np.argmax(obs[:11])), int(np.argmax(obs[11:22]))))
        statuses.add(tuple(obs[22:]))
        assert not info["oracle"].any()
    assert max(col for _, col in starts) <= 9 and len(starts) > 20 and len(statuses) > 30
    env = gym.make(RS11, obs_variant="oracle")
    env.reset(seed=0)
    core = env.unwrapped.core
    core.pos[0] = (0, 9)
    assert env.step(rocksample.FIRST_CHECK + 3)[-1]["oracle"][3] != 0  # read rock 3
    terminated = env.step(1)[2]  # exit
    assert terminated
    obs, info = env.reset()
    assert not obs[22:].any() and not info["oracle"].any()  # (the authors' wrapper carries it over)


# --- Battleship -------------------------------------------------------------------------------------------------------
def _battleship(env_id: str, ship_cells: list[int], variant: str = "partial"):
    env = gym.make(env_id, obs_variant=variant)
    env.reset(seed=0)
    core = env.unwrapped.core
    core.board[0] = False
    core.board[0, ship_cells] = True
    return env, core


def test_battleship_firing_at_a_cell_twice_never_pays_twice():
    env, core = _battleship(BS5, [0, 1, 2, 10, 15])  # a ship of 3 in row 0, a ship of 2 in column 0
    obs, reward, terminated, *_ = env.step(1)
    assert obs["hit"][0] == 1.0 and reward == -1.0 and not terminated
    for _ in range(5):  # the same cell again: no hit, a wasted shot, never the end
        obs, reward, terminated, _, _ = env.step(1)
        assert obs["hit"][0] == 0.0 and reward == -1.0 and not terminated
    assert core.hits[0] == 1
    obs, reward, *_ = env.step(4)
    assert obs["hit"][0] == 0.0 and reward == -1.0  # a miss


@pytest.mark.parametrize(("env_id", "size"), [(BS10, 10), (BS5, 5), (BS3, 3)])
def test_battleship_end_reward_is_rows_times_cols(env_id, size):
    env = gym.make(env_id)
    env.reset(seed=7)
    ship_cells = np.flatnonzero(env.unwrapped.core.board[0])
    assert len(ship_cells) == sum(battleship.SHIPS[size])
    rewards = []
    for cell in ship_cells:
        _, reward, terminated, truncated, info = env.step(int(cell))
        rewards.append(reward)
    assert terminated and not truncated and info["success"]
    assert rewards == [-1.0] * (len(ship_cells) - 1) + [float(size * size)]
    if size == 10:
        assert sum(rewards) == 87.0  # the best return


def test_battleship_action_mask_in_the_observation_and_the_info():
    env, _ = _battleship(BS3, [4, 5])
    obs, info = env.reset(seed=1)
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].tolist() == [1] * 9
    assert np.array_equal(info["action_mask"], obs["action_mask"])
    env.unwrapped.core.board[0] = False
    env.unwrapped.core.board[0, [4, 5]] = True
    for shot in (0, 4):
        obs, *_, info = env.step(shot)
    expected = [0, 1, 1, 1, 0, 1, 1, 1, 1]
    assert obs["action_mask"].tolist() == expected and info["action_mask"].tolist() == expected
    for _ in range(20):  # gymnasium's masked sampling never picks a fired cell
        assert env.action_space.sample(mask=info["action_mask"]) not in (0, 4)


def test_battleship_perfect_memory_and_full_state():
    env, _ = _battleship(BS3, [4, 5], variant="oracle")
    env.step(0)
    obs, *_, info = env.step(4)
    grid = np.zeros((3, 3))
    grid[0, 0], grid[1, 1] = -1, 1
    np.testing.assert_array_equal(obs["oracle"], grid)
    np.testing.assert_array_equal(info["oracle"], grid)
    env, _ = _battleship(BS3, [4, 5], variant="full")
    env.step(0)
    obs, *_ = env.step(4)
    board = np.zeros((3, 3))
    board[1, 1:] = 1
    np.testing.assert_array_equal(obs["state"], np.stack([grid, board]))


def test_battleship_dense_reward_is_the_hit_bit():
    env = gym.make(BS3, dense_reward=True)
    env.reset(seed=0)
    ship = np.flatnonzero(env.unwrapped.core.board[0])
    water = np.flatnonzero(~env.unwrapped.core.board[0])
    assert env.step(int(water[0]))[1] == 0.0
    assert env.step(int(ship[0]))[1] == 1.0
    assert env.step(int(ship[0]))[1] == 0.0
    assert env.step(int(ship[1]))[1:3] == (1.0, True)


def test_battleship_ships_are_straight_disjoint_and_in_both_orientations():
    assert len(battleship.placements(10, 5, True)) == 60 and len(battleship.placements(10, 5, False)) == 60
    venv = gym.make_vec(BS10, num_envs=200, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    boards = venv.unwrapped.core.board.reshape(200, 10, 10)
    assert np.all(boards.sum(axis=(1, 2)) == 14)

    # Every board has a run of 5 ship cells (the 5-ship), horizontal on about half of them.
    def longest(lines):
        best = 0
        for line in lines:
            run = 0
            for v in line:
                run = run + 1 if v else 0
                best = max(best, run)
        return best

    horizontal = sum(longest(b) >= 5 for b in boards)
    vertical = sum(longest(b.T) >= 5 for b in boards)
    assert horizontal + vertical >= 200 and 60 < horizontal < 140, (horizontal, vertical)
    assert boards.any(axis=0).all()  # every cell holds a ship on some board
