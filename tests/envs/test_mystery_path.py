"""Mystery Path (Memory Gym; MIKASA-Base): step for step against the reference package ``memory_gym`` (same seed ->
same path, rewards, ends, agent positions and pixels), the fall rule, rewards, the variants with memoryless scripted
policies, seeding, batched == single and clear errors."""

from __future__ import annotations

import importlib.util
import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from membench_envs.envs.memory_gym.common import AGENT_BODY_RGB, AGENT_HAND_RGB, agent_sprites, filled_circle
from membench_envs.envs.memory_gym.mystery_path import CROSS, TILE, draw_start_and_goal, generate_path

import membench_envs
from tests.envs._helpers import compare_batched_with_sync

FREE, GRID, ENDLESS = "MIKASA/MysteryPath-v0", "MIKASA/MysteryPathGrid-v0", "MIKASA/EndlessMysteryPath-v0"
UPSTREAM = {FREE: "MysteryPath-v0", GRID: "MysteryPath-Grid-v0", ENDLESS: "Endless-MysteryPath-v0"}
NONE, MOVE_RIGHT, MOVE_UP, MOVE_DOWN = 0, 1, 2, 3  # endless actions
WAIT, LEFT, RIGHT, FORWARD = 0, 1, 2, 3  # grid actions
#: free-movement action per tile step (dx, dy)
FREE_ACTION = {(-1, 0): (1, 0), (1, 0): (2, 0), (0, -1): (0, 1), (0, 1): (0, 2)}
#: grid facing (upstream's rotation / 45) per tile step
FACING = {(0, -1): 0, (-1, 0): 2, (0, 1): 4, (1, 0): 6}

needs_memory_gym = pytest.mark.skipif(
    importlib.util.find_spec("memory_gym") is None or importlib.util.find_spec("pygame") is None,
    reason="the reference package memory_gym (and pygame) is not importable; install memory-gym --no-deps and "
    "pygame-ce to compare step for step",
)


def make(env_id=FREE, variant="partial", **kw):
    return gym.make(env_id, obs_variant=variant, **kw)


def upstream(env_id):
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    import memory_gym  # noqa: F401  (registers the upstream IDs)

    return gym.make(UPSTREAM[env_id]).unwrapped


# --- a memoryless reading of the picture ---------------------------------------------------------------------------
def read_agent(image) -> tuple[np.ndarray, int]:
    """The agent's centre (pixels, [x, y]) and facing (0 up, 2 left, 4 down, 6 right; diagonals odd), read off the
    sprite in the image alone. The body disc spans centre - 6 … centre + 5; the hands may cover its rim on their
    side, so each coordinate is measured from the other side."""
    body = (image == AGENT_BODY_RGB).all(axis=2)
    hands = (image == AGENT_HAND_RGB).all(axis=2)
    centre = []
    for axis in (0, 1):
        b = np.flatnonzero(body.any(axis=1 - axis))
        h = np.flatnonzero(hands.any(axis=1 - axis))
        mid_b, mid_h = (b.min() + b.max()) / 2, (h.min() + h.max()) / 2
        centre.append(b.max() - 5 if mid_h < mid_b else b.min() + 6)
    centre = np.array(centre)
    hx, hy = np.nonzero(hands)
    d = np.sign(np.round([hx.mean() + 0.5 - centre[0], hy.mean() + 0.5 - centre[1]]))
    facing = {(0, -1): 0, (-1, -1): 1, (-1, 0): 2, (-1, 1): 3, (0, 1): 4, (1, 1): 5, (1, 0): 6, (1, -1): 7}
    return centre, facing[(int(d[0]), int(d[1]))]


def next_step(path, tile) -> tuple[int, int] | None:
    """The tile step (dx, dy) from ``tile`` to the next path tile, or None off the path."""
    rank = path[tile[0], tile[1]]
    if rank == 0:
        return None
    ahead = np.argwhere(path == rank + 1)
    return tuple(int(v) for v in ahead[0] - tile) if len(ahead) else None


def oracle_policy(env_id, obs):
    """Memoryless: the agent's tile and facing from the image, the next tile from the oracle path."""
    centre, facing = read_agent(obs["image"])
    step = next_step(obs["oracle"] if "oracle" in obs else obs["path"], centre // TILE)
    if env_id == FREE:
        return np.array(FREE_ACTION.get(step, (0, 0)))
    if step is None:
        return WAIT
    want = FACING[step]
    return FORWARD if want == facing else (LEFT if want == (facing + 2) % 8 else RIGHT)


def random_policy(env_id, rng):
    return rng.integers(0, 3, size=2) if env_id == FREE else int(rng.integers(0, 4))


# --- catalogue and API ---------------------------------------------------------------------------------------------
def test_presets_and_catalogue():
    for env_id, grid, T in ((FREE, False, 512), (GRID, True, 128)):
        spec = membench_envs.info(env_id)
        assert dict(spec.kwargs) == {"grid": grid} and spec.extra is None and spec.episode_length == T
        assert spec.memory_types == ("capacity", "spatial") and "MIKASA-Base" in spec.suites
        assert spec.xi == (8, 26) and spec.obs_type == "dict" and spec.oracle_keys == ("path",)
        assert "Endless-MysteryPath-v0" in spec.notes
        core = make(env_id).unwrapped.core
        assert (core.grid, core.T, core.reward_path_progress) == (grid, T, 0.0 if grid else 0.1)
    spec = membench_envs.info(ENDLESS)
    assert spec.episode_length is None and spec.xi is None and spec.action_type == "discrete" and spec.extra is None
    assert make(ENDLESS).unwrapped.core.stamina_level == 20


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
@pytest.mark.parametrize("env_id", [FREE, GRID, ENDLESS])
def test_gymnasium_env_checker_and_spaces(env_id, variant):
    env = make(env_id, variant)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs["image"].shape == (84, 84, 3) and obs["image"].dtype == np.uint8
    assert env.action_space == (gym.spaces.MultiDiscrete([3, 3]) if env_id == FREE else gym.spaces.Discrete(4))
    full = (
        {"path", "direction", "position", "rotation", "stamina", "returning"}
        if env_id == ENDLESS
        else {"path", "tile", "position", "rotation", "returning", "rewarded", "time"}
    )
    keys = {"partial": set(), "oracle": {"oracle"}, "full": full}[variant]
    assert set(obs) == {"image"} | keys
    assert info["oracle"].shape == ((16, 7) if env_id == ENDLESS else (7, 7))


# --- against the reference -----------------------------------------------------------------------------------------
@needs_memory_gym
def test_same_seed_same_path_as_memory_gym():
    env = upstream(GRID)
    for seed in range(200):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)  # gymnasium's np_random for this seed
        start, goal = draw_start_and_goal(rng, (0, 1, 2, 3))
        path = generate_path(rng, start, goal)
        assert (start, goal) == (tuple(int(v) for v in env.start), tuple(int(v) for v in env.end)), seed
        assert path == [(int(n.x), int(n.y)) for n in reversed(env.mystery_path.path)], seed
    ours = make(GRID, "oracle")
    _, info = ours.reset(seed=7)
    env.reset(seed=7)
    expected = np.zeros((7, 7), dtype=np.int64)
    for rank, node in enumerate(reversed(env.mystery_path.path), start=1):
        expected[node.x, node.y] = rank
    np.testing.assert_array_equal(info["oracle"], expected)


def _lockstep(env_id, seeds, choose):
    """Run ours (full) and memory_gym side by side; assert equal pixels, rewards, ends and agent states. Every
    third episode is reset with its seed, the others continue the generator (reset without a seed)."""
    ref, ours = upstream(env_id), make(env_id, "full")
    rng = np.random.default_rng(0)
    totals = {"steps": 0, "falls": 0, "goals": 0, "truncations": 0, "reward": 0.0}
    for k, seed in enumerate(seeds):
        if k % 3 == 0:
            ref_obs, _ = ref.reset(seed=seed)
            obs, _ = ours.reset(seed=seed)
        else:
            ref_obs, _ = ref.reset()
            obs, _ = ours.reset()
        np.testing.assert_array_equal(obs["image"], ref_obs)
        done = False
        while not done:
            action = choose(obs, rng)
            ref_obs, ref_r, ref_done, ref_trunc, ref_info = ref.step(action if env_id == GRID else list(action))
            obs, r, term, trunc, info = ours.step(action)
            np.testing.assert_array_equal(obs["image"], ref_obs)
            assert r == pytest.approx(ref_r, abs=1e-12) and not ref_trunc
            assert ref_done == (term or trunc) and term == bool(ref_done and ref_info["success"])
            assert tuple(obs["position"]) == tuple(int(v) for v in ref.agent.rect.center)
            assert obs["rotation"] == ref.agent.rotation // 45 and obs["returning"] == ref.is_off_path
            done = term or trunc
            totals["steps"] += 1
            totals["reward"] += r
            if done:
                assert info["success"] == term and ours.unwrapped.core.num_fails[0] == ref_info["num_fails"]
        totals["falls"] += ref.num_fails
        totals["goals"] += term
        totals["truncations"] += trunc
    return totals


@needs_memory_gym
@pytest.mark.parametrize("env_id", [GRID, FREE])
def test_step_for_step_equal_to_memory_gym_with_random_actions(env_id):
    """Random actions (forward favoured on the grid): falls, returns to the start and time limits."""

    def choose(obs, rng):
        if env_id == GRID:
            return FORWARD if rng.random() < 0.4 else int(rng.integers(0, 4))
        return rng.integers(0, 3, size=2)

    totals = _lockstep(env_id, range(6 if env_id == FREE else 12), choose)
    print(env_id, totals)
    assert totals["falls"] > 20 and totals["truncations"] > 0


@needs_memory_gym
@pytest.mark.parametrize("env_id", [GRID, FREE])
def test_step_for_step_equal_to_memory_gym_with_a_scripted_walk(env_id):
    """The oracle follower, with a detour off the path now and then: goals, progress rewards and falls."""

    def choose(obs, rng):
        if rng.random() < 0.1:
            return random_policy(env_id, rng)
        return oracle_policy(env_id, obs)

    totals = _lockstep(env_id, range(100, 112), choose)
    print(env_id, totals)
    assert totals["goals"] >= 8 and totals["falls"] > 0


@needs_memory_gym
@pytest.mark.parametrize(
    ("env_id", "options"),
    [
        (
            GRID,
            {
                "show_origin": True,
                "show_goal": True,
                "visual_feedback": False,
                "reward_fall_off": -0.25,
                "reward_step": -0.01,
                "reward_goal": 2.0,
                "max_steps": 60,
                "cardinal_origin_choice": [2, 3],
            },
        ),
        (
            FREE,
            {
                "show_origin": True,
                "show_goal": True,
                "reward_path_progress": 0.5,
                "max_steps": 60,
                "cardinal_origin_choice": [1],
            },
        ),
        (
            ENDLESS,
            {
                "show_past_path": False,
                "visual_feedback": False,
                "stamina_level": 7,
                "reward_fall_off": -1.0,
                "reward_path_progress": 0.3,
                "reward_step": -0.01,
            },
        ),
    ],
)
def test_kwargs_act_as_upstreams_reset_options(env_id, options):
    """Our kwargs are upstream's reset parameters (``reset(options=...)``): same pixels, rewards and ends."""
    ref = upstream(env_id)
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    if env_id == ENDLESS:
        kwargs["start_refills_stamina"] = True  # memory-gym 1.0.2's start-tile bug (fixed by default)
    ours = make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    for seed in range(6):
        ref_obs, _ = ref.reset(seed=seed, options=options)
        obs, _ = ours.reset(seed=seed)
        np.testing.assert_array_equal(obs["image"], ref_obs)
        done = False
        while not done:
            action = random_policy(env_id, rng)
            ref_obs, ref_r, ref_done, _, _ = ref.step(list(action) if env_id == FREE else action)
            obs, r, term, trunc, _ = ours.step(action)
            np.testing.assert_array_equal(obs["image"], ref_obs)
            assert r == pytest.approx(ref_r, abs=1e-12) and ref_done == (term or trunc)
            done = term or trunc


@needs_memory_gym
def test_sprites_are_drawn_as_pygame_draws_them():
    import pygame
    from memory_gym.character_controller import CharacterController

    for radius in range(1, 13):
        for centre in ((14, 14), (13.99, 8.34), (3, 25)):
            surface = pygame.Surface((28, 28))
            surface.fill(0)
            pygame.draw.circle(surface, (255, 255, 255), centre, radius)
            mask = np.zeros((28, 28), dtype=bool)  # [y, x]
            filled_circle(mask, *centre, radius)
            np.testing.assert_array_equal(mask.T, pygame.surfarray.array3d(surface)[..., 0] > 0)
    masks, _ = agent_sprites()
    for k, surface in enumerate(CharacterController(0, 0.25).character_surfaces):
        drawn = (pygame.surfarray.array3d(surface) != (0, 0, 255)).any(axis=2)  # blue is the colour key
        np.testing.assert_array_equal(masks[k].T, drawn)


# --- the rules -----------------------------------------------------------------------------------------------------
def _off_path_step(env_id, obs):
    """An action that leaves the path from the start tile (towards an off-path neighbour)."""
    centre, _facing = read_agent(obs["image"])
    tile = centre // TILE
    for dx, dy in FREE_ACTION:
        x, y = tile[0] + dx, tile[1] + dy
        if 0 <= x < 7 and 0 <= y < 7 and obs["path"][x, y] == 0:
            return (dx, dy)
    return None


@pytest.mark.parametrize("env_id", [GRID, FREE])
def test_leaving_the_path_returns_the_agent_to_the_start(env_id):
    """Off the path: the reward is reward_fall_off, a red cross covers the agent; on the next step, whatever the
    action, the agent is back on the start tile (facing unchanged) and the cross is gone."""
    env = make(env_id, "full", reward_fall_off=-0.5)
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        step = _off_path_step(env_id, obs)
        if step is None:
            continue
        start = obs["position"].copy()
        if env_id == GRID:
            while obs["rotation"] != FACING[step]:
                obs, *_ = env.step(LEFT)
            action = FORWARD
        else:
            action = np.array(FREE_ACTION[step])
        for _ in range(TILE):  # free movement needs a few steps to cross into the next tile
            obs, reward, term, _trunc, _ = env.step(action)
            if obs["returning"]:
                break
            assert reward == 0
        assert reward == -0.5 and obs["path"][tuple(obs["tile"])] == 0 and not term
        red = (obs["image"] == (255, 0, 0)).all(axis=2)
        assert red.sum() == CROSS.sum()
        facing = obs["rotation"]
        obs, reward, *_ = env.step(action)  # the same action again: ignored
        np.testing.assert_array_equal(obs["position"], start)
        assert obs["rotation"] == facing and not obs["returning"] and reward == 0
        assert not (obs["image"] == (255, 0, 0)).all(axis=2).any()
        return
    raise AssertionError("no start tile with an off-path neighbour")


def test_progress_is_rewarded_once_per_tile_and_the_goal_ends_the_episode():
    env = make(FREE, "full")
    obs, _ = env.reset(seed=3)
    length = obs["path"].max()
    rewards, tiles = [], []
    done = False
    while not done:
        obs, reward, term, trunc, info = env.step(oracle_policy(FREE, obs))
        rewards.append(reward)
        tiles.append(tuple(obs["tile"]))
        done = term or trunc
    assert term and info["success"] and rewards[-1] == 1.0
    # +0.1 on the first step on each path tile between the start and the goal, nothing else
    assert sum(r == pytest.approx(0.1) for r in rewards) == length - 2
    assert sum(rewards) == pytest.approx(1.0 + 0.1 * (length - 2))
    grid = make(GRID, "full")
    obs, _ = grid.reset(seed=3)
    total, done = 0.0, False
    while not done:
        obs, reward, term, trunc, _ = grid.step(oracle_policy(GRID, obs))
        total += reward
        done = term or trunc
    assert term and total == 1.0  # upstream's grid default: no progress reward


def test_the_time_limit_truncates():
    env = make(GRID, max_steps=5)
    env.reset(seed=0)
    ends = [env.step(WAIT)[2:4] for _ in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]
    endless = make(ENDLESS, max_steps=5)  # upstream has no limit by default; max_steps adds one
    endless.reset(seed=0)
    assert [endless.step(NONE)[2:4] for _ in range(5)] == [(False, False)] * 4 + [(False, True)]


# --- variants, seeding, batching -----------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", [GRID, FREE])
def test_memoryless_policies_climb_the_ladder(env_id):
    """With the oracle path a memoryless policy walks to the goal every time; without it (random moves, the best
    a memoryless policy can do when the path is invisible) it rarely does."""
    episodes = 16
    scores = {}
    for variant in ("partial", "oracle"):
        env = make(env_id, variant)
        rng = np.random.default_rng(1)
        returns, successes = [], 0
        for seed in range(episodes):
            obs, _ = env.reset(seed=seed)
            total, done = 0.0, False
            while not done:
                action = oracle_policy(env_id, obs) if variant == "oracle" else random_policy(env_id, rng)
                obs, reward, term, trunc, _ = env.step(action)
                total += reward
                done = term or trunc
            returns.append(total)
            successes += term
        scores[variant] = (float(np.mean(returns)), successes / episodes)
    print(env_id, "mean return, success rate:", scores)
    assert scores["oracle"][1] == 1.0 and scores["partial"][1] <= 0.25
    assert scores["oracle"][0] > scores["partial"][0] + 0.7


def test_the_picture_reader_is_exact():
    """The scripted policies' reading of the agent from the image agrees with the state, for every facing."""
    for env_id in (FREE, GRID, ENDLESS):
        env = make(env_id, "full")
        rng = np.random.default_rng(5)
        obs, _ = env.reset(seed=5)
        seen = set()
        for _ in range(300):
            whole = env_id != ENDLESS or 6 <= obs["position"][1] <= 78  # (endless: no clamp at the board's edge)
            if not obs["returning"] and whole:
                centre, facing = read_agent(obs["image"])
                if env_id == ENDLESS:  # drawn at a fixed screen column, the path scrolling by
                    assert centre[0] == 66 and centre[1] == obs["position"][1]
                else:
                    np.testing.assert_array_equal(centre, obs["position"])
                assert facing == obs["rotation"]
                seen.add(facing)
            obs, _, term, trunc, _ = env.step(random_policy(env_id, rng))
            if term or trunc:
                obs, _ = env.reset()
        assert len(seen) == {FREE: 8, GRID: 4, ENDLESS: 3}[env_id]


def test_same_seed_same_episode_and_different_seeds_differ():
    env = make(FREE, "oracle")
    paths = {env.reset(seed=s)[0]["oracle"].tobytes() for s in range(10)}
    assert len(paths) == 10
    a, b = make(FREE, "full"), make(FREE, "full")
    for episode in range(3):
        oa, _ = a.reset(seed=4) if episode == 0 else a.reset()
        ob, _ = b.reset(seed=4) if episode == 0 else b.reset()
        rng = np.random.default_rng(episode)
        for _ in range(60):
            np.testing.assert_array_equal(oa["image"], ob["image"])
            np.testing.assert_array_equal(oa["path"], ob["path"])
            action = rng.integers(0, 3, size=2)
            oa, ra, *_ = a.step(action)
            ob, rb, *_ = b.step(action)
            assert ra == rb


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("env_id", [GRID, FREE, ENDLESS])
def test_batched_equals_single(env_id, mode):
    """Environment i of the batch is the single env with the same seed, step for step over episode ends."""
    n = 3

    def actions(rng):
        return np.stack([random_policy(env_id, rng) for _ in range(n)])

    terminated, truncated = compare_batched_with_sync(env_id, n, mode, 150, actions, obs_variant="full", max_steps=30)
    assert terminated + truncated >= n


# --- bad input -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"grid": 1}, TypeError, "grid=1 is not allowed"),
        ({"max_steps": 0}, ValueError, "max_steps=0 is not allowed"),
        ({"cardinal_origin_choice": (0, 4)}, ValueError, r"cardinal_origin_choice=\(0, 4\) is not allowed"),
        ({"cardinal_origin_choice": ()}, ValueError, r"cardinal_origin_choice=\(\) is not allowed.*non-empty"),
        ({"reward_goal": "1"}, TypeError, "reward_goal='1' is not allowed"),
        ({"agent_speed": 3.0}, TypeError, "unknown kwarg 'agent_speed'"),
        ({"obs_variant": "oracles"}, ValueError, "obs_variant='oracles' is not allowed"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(FREE, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"stamina_level": 0}, ValueError, "stamina_level=0 is not allowed"),
        ({"grid": True}, TypeError, "unknown kwarg 'grid'"),
        ({"show_past_path": 1}, TypeError, "show_past_path=1 is not allowed"),
    ],
)
def test_endless_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(ENDLESS, **kwargs)


def test_bad_actions_unknown_ids_and_step_before_reset():
    env = make(FREE)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.array([0, 0]))
    env.reset(seed=0)
    for bad in (0, np.array([0, 3]), np.array([0, 1, 2]), np.array([0.5, 1])):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    grid = make(GRID)
    grid.reset(seed=0)
    for bad in (4, -1, 1.5, np.array([0, 1])):
        with pytest.raises(ValueError, match="action"):
            grid.step(bad)
    with pytest.raises(gym.error.Error):
        gym.make("MIKASA/MysteryPathEndless-v0")
    endless = make(ENDLESS)
    endless.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        endless.step(4)


def test_render_shows_the_upright_picture_and_the_hidden_path():
    env = gym.make(GRID, render_mode="rgb_array")
    obs, _ = env.reset(seed=2)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[0] % 16 == 0
    upright = obs["image"].transpose(1, 0, 2)
    agent = upright.any(axis=2)
    np.testing.assert_array_equal(frame[8 : 8 + 336 : 4, 8 : 8 + 336 : 4][agent], upright[agent])
    text = gym.make(GRID, render_mode="ansi")
    text.reset(seed=2)
    board = text.render()
    assert board.count("G") == 1 and board.count("A") == 1 and "t=0/128" in board


# --- Endless Mystery Path ------------------------------------------------------------------------------------------
def endless_oracle_policy(obs):
    """Memoryless: the agent's row from the image, then a step right, up or down onto a path tile ahead (2) in the
    oracle window (the agent's column is the window's column 7)."""
    window = obs["oracle"] if "oracle" in obs else obs["path"]
    y = int(read_agent(obs["image"])[0][1] // TILE)
    for action, (dx, dy) in ((MOVE_RIGHT, (1, 0)), (MOVE_UP, (0, -1)), (MOVE_DOWN, (0, 1))):
        if 0 <= y + dy < 7 and window[7 + dx, y + dy] == 2:
            return action
    return NONE


@needs_memory_gym
def test_endless_step_for_step_equal_to_memory_gym():
    """Mostly upstream's ground-truth direction, sometimes a random action: new segments, falls, the past path,
    every way an episode ends; pixels, rewards, ends, positions, stamina and the ground truth equal (with memory-gym
    1.0.2's start-tile stamina bug, an option here)."""
    ref, ours = upstream(ENDLESS), make(ENDLESS, "full", start_refills_stamina=True)
    core = ours.unwrapped.core
    rng = np.random.default_rng(0)
    steps = furthest = falls = 0
    for seed in range(24):
        ref_obs, ref_info = ref.reset(seed=seed) if seed % 3 == 0 else ref.reset()
        obs, _ = ours.reset(seed=seed) if seed % 3 == 0 else ours.reset()
        np.testing.assert_array_equal(obs["image"], ref_obs)
        done = False
        while not done:
            gt = obs["direction"]
            action = int(rng.integers(4)) if rng.random() < 0.25 else (1 if gt[0] else 2 if gt[1] else 3)
            ref_obs, ref_r, ref_done, _, ref_info = ref.step(action)
            obs, r, term, trunc, _ = ours.step(action)
            np.testing.assert_array_equal(obs["image"], ref_obs)
            assert r == pytest.approx(ref_r, abs=1e-12) and ref_done == term and not trunc
            assert tuple(obs["position"].astype(int)) == tuple(int(v) for v in ref.agent.rect.center)
            np.testing.assert_array_equal(obs["direction"], ref_info["ground_truth"])
            assert core.stamina[0] == ref.stamina and core.max_x[0] == ref.max_x_reached
            done = term
            steps += 1
        furthest = max(furthest, int(ref.max_x_reached))
        falls += ref.num_fails
    print("endless lockstep: steps", steps, "falls", falls, "furthest column", furthest)
    assert furthest >= 3 * 8 and falls > 20  # beyond the three initial segments


def _fall_from_here(env, obs):
    """Step off the path (up or down) from the agent's tile; returns the step's result."""
    y = int(read_agent(obs["image"])[0][1] // TILE)
    window = obs["path"]
    for action, dy in ((MOVE_UP, -1), (MOVE_DOWN, 1)):
        if not (0 <= y + dy < 7) or window[7, y + dy] == 0:
            for _ in range(TILE):  # 3 px per step
                result = env.step(action)
                if result[0]["returning"] or result[2]:
                    return result
    raise AssertionError("no way off the path from here")


def test_endless_a_fall_returns_to_the_start_and_a_second_fall_there_ends_the_episode():
    env = make(ENDLESS, "full", reward_fall_off=-1.0)
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        start = obs["position"].copy()
        obs, reward, term, *_ = _fall_from_here(env, obs)
        assert obs["returning"] and reward == -1.0 and not term
        assert (obs["image"] == (255, 0, 0)).all(axis=2).sum() == CROSS.sum()
        obs, reward, term, *_ = env.step(MOVE_RIGHT)  # ignored: back on the start
        np.testing.assert_array_equal(obs["position"], start)
        assert not obs["returning"] and not term
        obs, reward, term, *_ = _fall_from_here(env, obs)  # the same spot again
        assert obs["returning"] and term
        return


def test_endless_a_fall_behind_the_furthest_column_ends_the_episode():
    env = make(ENDLESS, "full")
    core = env.unwrapped.core
    obs, _ = env.reset(seed=2)
    while core.max_x[0] < 3:
        obs, _, term, *_ = env.step(endless_oracle_policy(obs))
        assert not term
    for _ in range(2):  # fall off at the front (a fresh spot: goes on), then from the start (behind: ends)
        obs, _, term, *_ = _fall_from_here(env, obs)
        assert term == (int(obs["position"][0] // TILE) < core.max_x[0])
        if term:
            break
        obs, *_ = env.step(NONE)
    assert term


@pytest.mark.parametrize(("start_refills_stamina", "back_on_start"), [(False, 18), (True, 19)])
def test_endless_the_start_tile_does_not_refill_the_stamina(start_refills_stamina, back_on_start):
    """MIKASA-Base's fix (the default): the step back on the start after a fall does not refill the stamina
    (20 - 2 = 18 left); memory-gym 1.0.2 compares a tile's (x, y) with the start node, never equal, so there the
    start refills it like any new tile (19 left; the option, for parity with memory_gym)."""
    env = make(ENDLESS, "full", stamina_level=20, start_refills_stamina=start_refills_stamina)
    obs, _ = env.reset(seed=0)
    obs, _, term, *_ = _fall_from_here(env, obs)
    assert obs["returning"] and not term and obs["stamina"][0] == pytest.approx(19 / 20)  # a fall refills every tile
    obs, _, term, *_ = env.step(NONE)  # back on the start tile
    assert not obs["returning"] and not term and obs["stamina"][0] == pytest.approx(back_on_start / 20)
    for k in range(1, back_on_start + 1):  # staying there: the stamina runs out
        obs, _, term, *_ = env.step(NONE)
        assert term == (k == back_on_start)


def test_endless_stamina_ends_the_episode_without_new_tiles():
    env = make(ENDLESS, "full", stamina_level=20)
    env.reset(seed=0)
    for k in range(1, 21):
        obs, reward, term, trunc, _ = env.step(NONE)
        assert reward == 0 and obs["stamina"][0] == pytest.approx((20 - k) / 20)
        assert term == (k == 20) and not trunc


def test_endless_memoryless_policies_climb_the_ladder():
    """Following the oracle window a memoryless policy walks far along the path; random moves do not."""
    scores = {}
    for variant in ("partial", "oracle"):
        env = make(ENDLESS, variant)
        core = env.unwrapped.core
        rng = np.random.default_rng(3)
        returns, furthest = [], []
        for seed in range(8):
            obs, _ = env.reset(seed=seed)
            total, done, steps = 0.0, False, 0
            while not done and steps < 300:
                action = endless_oracle_policy(obs) if variant == "oracle" else int(rng.integers(0, 4))
                obs, reward, term, trunc, _ = env.step(action)
                total += reward
                done, steps = term or trunc, steps + 1
            returns.append(total)
            furthest.append(int(core.max_x[0]))
        scores[variant] = (float(np.mean(returns)), float(np.mean(furthest)))
    print("endless mean return, mean furthest column (300-step cap):", scores)
    assert scores["oracle"][0] > 3 * scores["partial"][0] and scores["oracle"][1] > 3 * scores["partial"][1]
