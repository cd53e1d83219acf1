"""POBAX's DMLab-style mazes (membench_envs.envs.pobax.mazes): the authors' maps and limits, the two partial views and
the full view against hand-drawn expectations at constructed agent cells, the oracle, the moves, the goal, the time
limit, the start and goal draws, seeding and batched == single."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from membench_envs.envs.core import draw
from membench_envs.envs.pobax import mazes

from tests.envs._helpers import compare_batched_with_sync

EAST, SOUTH, WEST, NORTH = 0, 1, 2, 3
LEFT, RIGHT, FORWARD = 0, 1, 2


def _env(maze="01", **kwargs):
    env = gym.make(f"POBAX/Maze{maze}-v0", **kwargs)
    env.reset(seed=0)
    return env


def _placed(maze, cell, direction, goal, variant="partial", **kwargs):
    """The observation of an agent put at ``cell`` facing ``direction`` with the goal at ``goal``."""
    env = _env(maze, obs_variant=variant, **kwargs)
    core = env.unwrapped.core
    core.place(0, cell, direction, goal)
    return core.observe(variant, np.zeros(1, dtype=np.int64))[0]


def test_the_maps_and_limits_are_the_authors():
    # (rows x columns with the outer wall, floor cells, T) of Navix-DMLab-Maze-00 ... 03
    expected = {
        "00": (9, 14, 54, 1000),
        "01": (11, 21, 109, 2000),
        "02": (19, 31, 318, 4000),
        "03": (27, 41, 668, 6000),
    }
    for maze, (h, w, floor, T) in expected.items():
        walls = mazes.walls_of(maze)
        assert walls.shape == (h, w) and int((~walls).sum()) == floor, maze
        assert walls[0].all() and walls[-1].all() and walls[:, 0].all() and walls[:, -1].all()
        spec = gym.spec(f"POBAX/Maze{maze}-v0")
        env = gym.make(spec.id, obs_variant="full")
        assert env.unwrapped.core.T == T and env.observation_space.shape == (2 * h - 1, 2 * w - 1, 6)
    # two rows of maze 01 as drawn in the paper's Fig. 7 / spec A.5.5
    walls = mazes.walls_of("01")
    assert "".join("#" if x else "." for x in walls[1]) == "#...#...#...........#"
    assert "".join("#" if x else "." for x in walls[8]) == "#####.#.###########.#"


def test_the_2x3_view_is_the_row_ahead_and_the_agents_row_turned_with_the_agent():
    # maze 01 around (1, 1):      col 0 1 2
    #   row 0                        # # #
    #   row 1                        # A .
    #   row 2                        # . #
    # facing south: left is east. Window row 0 = one ahead (row 2): left (2,2) #, front (2,1) goal, right (2,0) #;
    # row 1 = the agent's row: left (1,2) floor, agent, right (1,0) #.
    obs = _placed("01", (1, 1), SOUTH, goal=(2, 1)).reshape(2, 3, 2)
    np.testing.assert_array_equal(obs[..., 0], [[1, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(obs[..., 1], [[0, 1, 0], [0, 0, 0]])
    # facing east: left is north. Row 0 = column 2: (0,2) #, (1,2) floor, (2,2) #; row 1: (0,1) #, agent, (2,1) goal.
    obs = _placed("01", (1, 1), EAST, goal=(2, 1)).reshape(2, 3, 2)
    np.testing.assert_array_equal(obs[..., 0], [[1, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(obs[..., 1], [[0, 0, 0], [0, 0, 1]])


def test_the_3x3_view_hides_what_navix_hides_two_cells_ahead():
    # maze 01 around (7, 1):      col 0 1 2
    #   row 7                        # A .
    #   row 8                        # # #
    #   row 9                        # . G
    # facing south (left = east): one ahead is all wall, so the row two ahead is hidden: (9,0)'s wall and the goal
    # at (9,2) both read (0, 0); the 2x3 view does not reach that row at all.
    obs = _placed("01", (7, 1), SOUTH, goal=(9, 2), view="3x3").reshape(3, 3, 2)
    np.testing.assert_array_equal(obs[..., 0], [[0, 0, 0], [1, 1, 1], [0, 0, 1]])
    np.testing.assert_array_equal(obs[..., 1], 0)
    # at (1, 1) facing south the row one ahead has a gap at (2,1): the walls two ahead, (3,2) and (3,0), show;
    # the goal two ahead, at (3,1), does not (NAVIX's radius-1 cone), one ahead it does.
    obs = _placed("01", (1, 1), SOUTH, goal=(3, 1), view="3x3").reshape(3, 3, 2)
    np.testing.assert_array_equal(obs[..., 0], [[1, 0, 1], [1, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(obs[..., 1], 0)
    obs = _placed("01", (1, 1), SOUTH, goal=(2, 1), view="3x3").reshape(3, 3, 2)
    np.testing.assert_array_equal(obs[..., 1], [[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    # facing north from (1, 1) the row two ahead is off the map: (0, 0)
    obs = _placed("01", (1, 1), NORTH, goal=(2, 1), view="3x3").reshape(3, 3, 2)
    np.testing.assert_array_equal(obs[0], 0)


def test_the_full_view_is_the_map_centred_on_the_agent_with_one_goal_cell_and_the_direction():
    h, w = mazes.walls_of("00").shape
    full = _placed("00", (3, 1), WEST, goal=(7, 12), variant="full")
    centre = (h - 1, w - 1)
    walls = mazes.walls_of("00")
    # the map's cell (r, c) sits at (r - 3 + h - 1, c - 1 + w - 1): walls -1 there, 0 elsewhere (padding included)
    expected = np.zeros((2 * h - 1, 2 * w - 1))
    expected[h - 1 - 3 : 2 * h - 1 - 3, w - 1 - 1 : 2 * w - 1 - 1] = -walls.astype(float)
    np.testing.assert_array_equal(full[..., 0], expected)
    assert full[centre][0] == 0 and full[centre[0], centre[1] - 1, 0] == -1  # west of the agent: the outer wall
    goal = np.zeros((2 * h - 1, 2 * w - 1))
    goal[7 - 3 + h - 1, 12 - 1 + w - 1] = 1  # only the goal's cell (the authors' code marks two whole rows)
    np.testing.assert_array_equal(full[..., 1], goal)
    np.testing.assert_array_equal(full[..., 2:], np.broadcast_to([0, 0, 1, 0], full[..., 2:].shape))


def test_the_oracle_is_the_partial_view_then_the_one_hot_agent_direction_and_goal():
    h, w = mazes.walls_of("01").shape
    obs = _placed("01", (3, 5), NORTH, goal=(9, 17), variant="oracle")
    partial = _placed("01", (3, 5), NORTH, goal=(9, 17))
    np.testing.assert_array_equal(obs[: partial.size], partial)
    hot = obs[partial.size :]
    assert hot.shape == (2 * h + 2 * w + 4,)
    ones = np.flatnonzero(hot)
    np.testing.assert_array_equal(ones, [3, h + 5, h + w + 9, 2 * h + w + 17, 2 * h + 2 * w + NORTH])


def test_turns_forward_walls_and_the_goal():
    env = _env("01", obs_variant="oracle")
    core = env.unwrapped.core
    core.place(0, (1, 1), EAST, goal=(1, 3))
    _, r, term, trunc, info = env.step(LEFT)
    assert core.dir[0] == NORTH and (r, term, trunc) == (0.0, False, False)
    env.step(FORWARD)  # into the outer wall: no move
    assert tuple(core.floor[core.pos[0]]) == (1, 1)
    env.step(RIGHT)
    env.step(RIGHT)
    assert core.dir[0] == SOUTH
    env.step(LEFT)
    _, r, term, trunc, info = env.step(FORWARD)
    assert tuple(core.floor[core.pos[0]]) == (1, 2) and (r, term) == (0.0, False)
    obs, r, term, trunc, info = env.step(FORWARD)  # onto the goal
    assert (r, term, trunc, info["success"]) == (1.0, True, False, True)
    np.testing.assert_array_equal(obs[:12].reshape(2, 3, 2)[1, 1], [0, 0])  # the agent's own cell: never the goal


def test_the_episode_is_truncated_at_the_time_limit():
    env = gym.make("POBAX/Maze01-v0", max_steps=5)
    env.reset(seed=0)
    for t in range(1, 6):
        _, r, term, trunc, info = env.step(LEFT)  # turning never reaches the goal
        assert (r, term, trunc) == (0.0, False, t == 5)
    assert info["success"] is False
    assert gym.make("POBAX/Maze03-v0").unwrapped.core.T == 6000


def _starts(random_goal_pos: bool, n: int = 3000):
    env = gym.make_vec("POBAX/Maze01-v0", num_envs=n, random_goal_pos=random_goal_pos)
    env.reset(seed=0)
    core = env.unwrapped.core
    return core.floor[core.pos], core.floor[core.goal], core.dir


def test_start_cells_directions_and_goals():
    start, goal, direction = _starts(random_goal_pos=False)
    assert (goal == (1, 1)).all() and not (start == (1, 1)).all(axis=1).any()
    # every other floor cell can be a start, row 1 included (the authors' indexing excluded the goal's whole row)
    assert len({tuple(s) for s in start}) == 108 and (start[:, 0] == 1).any()
    assert set(direction.tolist()) == {0, 1, 2, 3}
    start, goal, _ = _starts(random_goal_pos=True)
    assert not (start == goal).all(axis=1).any()
    assert len({tuple(g) for g in goal}) == 109 and (start[:, 0] == goal[:, 0]).any()  # same row allowed


def test_seeding_and_check_env():
    def run(seed, **kw):
        env = gym.make("POBAX/Maze02-v0", **kw)
        out = [env.reset(seed=seed)[0]]
        for a in [2, 2, 0, 2, 1, 2, 2, 2]:
            out.append(env.step(a)[0])
        return np.stack(out)

    np.testing.assert_array_equal(run(4), run(4))
    assert any(not np.array_equal(run(4), run(s)) for s in (5, 6, 7))
    for variant in ("partial", "oracle", "full"):
        check_env(gym.make("POBAX/Maze00-v0", obs_variant=variant, view="3x3").unwrapped, skip_render_check=True)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("kwargs", [{"obs_variant": "oracle"}, {"view": "3x3", "random_goal_pos": False}])
def test_batched_equals_single(mode, kwargs):
    terminated, truncated = compare_batched_with_sync(
        "POBAX/Maze00-v0", 16, mode, 150, lambda rng: rng.integers(0, 3, 16), max_steps=30, **kwargs
    )
    assert terminated > 0 and truncated > 0
    compare_batched_with_sync(
        "POBAX/Maze01-v0", 3, mode, 5, lambda rng: rng.integers(0, 3, 3), obs_variant="full", max_steps=3
    )


def test_the_picture_shows_the_goal_and_the_agent():
    env = gym.make("POBAX/Maze01-v0", render_mode="rgb_array")
    env.reset(seed=0)
    core = env.unwrapped.core
    core.place(0, (9, 3), EAST, goal=(1, 19))
    frame = env.render()
    c = draw.cell_size(21, 480, 6, 32)
    assert tuple(frame[c + int(1.5 * c), c + int(19.5 * c)]) == draw.GOOD
    assert tuple(frame[c + int(9.5 * c), c + int(3.3 * c)]) == draw.AGENT
    assert tuple(frame[c + int(0.5 * c), c + int(0.5 * c)]) == draw.WALL
