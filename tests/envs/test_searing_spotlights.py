"""Searing Spotlights (Memory Gym; MIKASA-Base): step for step against the reference package ``memory_gym`` (same
seed -> same episode: rewards, ends, agent positions and pixels), the rules (spotlights hurt, the coin, the exit,
upstream's list quirk), the variants with memoryless scripted policies, seeding, batched == single and clear
errors."""

from __future__ import annotations

import importlib.util
import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from membench_envs.envs.memory_gym.common import AGENT_BODY_RGB
from membench_envs.envs.memory_gym.searing_spotlights import COIN_RGB, EXIT_CLOSED_RGB, EXIT_OPEN_RGB, RED

import membench_envs
from tests.envs._helpers import compare_batched_with_sync

ID, ENDLESS = "MIKASA/SearingSpotlights-v0", "MIKASA/EndlessSearingSpotlights-v0"
NOOP = np.array([0, 0])

needs_memory_gym = pytest.mark.skipif(
    importlib.util.find_spec("memory_gym") is None or importlib.util.find_spec("pygame") is None,
    reason="the reference package memory_gym (and pygame) is not importable; install memory-gym --no-deps and "
    "pygame-ce to compare step for step",
)


def make(variant="partial", env_id=ID, **kw):
    return gym.make(env_id, obs_variant=variant, **kw)


def upstream(env_id=ID):
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    import memory_gym  # noqa: F401  (registers the upstream IDs)

    return gym.make({ID: "SearingSpotlights-v0", ENDLESS: "Endless-SearingSpotlights-v0"}[env_id]).unwrapped


def toward(agent, target) -> np.ndarray:
    """The free-movement action that heads from ``agent`` to ``target`` (both [x, y] pixels)."""
    d = np.sign(np.asarray(target, dtype=np.int64) - np.asarray(agent, dtype=np.int64))
    return np.array([(0, 2, 1)[d[0]], (0, 2, 1)[d[1]]])  # sign -1 -> 1 (left / up), +1 -> 2 (right / down)


def oracle_policy(obs) -> np.ndarray:
    """Memoryless: from the oracle, head for the first coin not collected, then for the exit."""
    agent, *items = obs["oracle"]  # the agent, the coins and the exit (endless: the agent and the coin)
    if len(items) == 1:
        return toward(agent[:2], items[0][:2])
    coins = [row for row in items[:-1] if row[2]]
    return toward(agent[:2], coins[0][:2] if coins else items[-1][:2])


def image_policy(obs, rng) -> np.ndarray:
    """Memoryless, from the image alone: head from the agent to a coin (else the exit) where both are seen (at the
    start, before the light is off, or inside spotlights); a random move otherwise."""
    image = obs["image"]
    body = np.argwhere((image == AGENT_BODY_RGB).all(axis=2))
    targets = [np.argwhere((image == colour).all(axis=2)) for colour in (COIN_RGB, EXIT_OPEN_RGB, EXIT_CLOSED_RGB)]
    target = next((t for t in targets if len(t)), None)
    if len(body) and target is not None:
        return toward(body.mean(axis=0).round(), target.mean(axis=0).round())
    return rng.integers(0, 3, size=2)


# --- the catalogue entry, spaces --------------------------------------------------------------------------------------
def test_catalogue_entries():
    spec = membench_envs.info(ID)
    assert spec.source == "MemoryGym" and spec.extra is None and spec.episode_length == 256
    assert spec.memory_types == ("spatial",) and spec.xi == (1, 249) and "not in Table 2" in spec.xi_note
    assert spec.action_type == "multi-discrete" and spec.vector_entry_point
    spec = membench_envs.info(ENDLESS)
    assert spec.source == "MemoryGym" and spec.extra is None and spec.episode_length is None
    assert spec.xi == (1, 154) and "not in Table 2" in spec.xi_note


@pytest.mark.parametrize("env_id", [ID, ENDLESS])
@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_gymnasium_env_checker_and_spaces(variant, env_id):
    env = make(variant, env_id)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and obs["image"].shape == (84, 84, 3)
    assert info["oracle"].shape == ((3, 3) if env_id == ID else (2, 3))  # agent, one coin, (exit)
    full = (
        {
            "image",
            "agent",
            "coins",
            "exit",
            "rotation",
            "health",
            "spotlights",
            "alpha",
            "spawn_timer",
            "spawns_left",
            "time",
        }
        if env_id == ID
        else {
            "image",
            "agent",
            "coins",
            "rotation",
            "health",
            "spotlights",
            "alpha",
            "spawn_timer",
            "coin_timer",
            "time",
        }
    )
    keys = {"partial": {"image"}, "oracle": {"image", "oracle"}, "full": full}[variant]
    assert set(obs) == keys
    for _ in range(300):
        obs, _, term, trunc, _ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        if term or trunc:
            obs, _ = env.reset()


# --- against the reference package ------------------------------------------------------------------------------------
def _compare(seeds, options, scripted: bool, episodes: int = 2):
    """Run memory_gym and ours side by side (resets 2 … without a seed continue the generators); returns per
    episode (length, return, success)."""
    up = upstream()
    ours = make("full", **options)
    results = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for episode in range(episodes):
            first = seed if episode == 0 else None
            theirs, _ = up.reset(seed=first, options=dict(options))
            obs, _ = ours.reset(seed=first)
            np.testing.assert_array_equal(obs["image"], theirs)
            total, done, t = 0.0, False, 0
            while not done:
                if scripted and rng.random() > 0.3:
                    coins = [c for c in obs["coins"] if c[2]]
                    action = toward(obs["agent"], coins[0][:2] if coins else obs["exit"][:2])
                else:
                    action = rng.integers(0, 3, size=2)
                theirs, r_up, done_up, _, info_up = up.step(list(action))
                obs, reward, term, trunc, info = ours.step(action)
                t += 1
                assert reward == r_up, (seed, episode, t)
                assert (term or trunc) == done_up, (seed, episode, t)
                assert tuple(obs["agent"]) == tuple(up.agent.rect.center), (seed, episode, t)
                np.testing.assert_array_equal(obs["image"], theirs, err_msg=f"seed {seed} episode {episode} t {t}")
                done = term or trunc
                total += reward
            assert trunc == (t == up.max_episode_steps and not info_up["success"] and up.current_agent_health > 0)
            assert info["success"] == bool(info_up["success"])
            results.append((t, total, bool(info["success"])))
    return results


@needs_memory_gym
def test_step_for_step_equal_to_memory_gym_with_random_actions():
    results = _compare(range(6), {}, scripted=False)
    print("random: (length, return, success)", results)
    assert any(length > 100 for length, _, _ in results)


@needs_memory_gym
def test_step_for_step_equal_to_memory_gym_with_a_scripted_walk():
    """Heading for the coin then the exit (from the state; 30% random moves): coins, the exit and successes."""
    results = _compare(range(8), {}, scripted=True)
    print("scripted: (length, return, success)", results)
    assert sum(s for _, _, s in results) >= 8 and any(r == 0.25 for _, r, _ in results)


@needs_memory_gym
@pytest.mark.parametrize(
    "options",
    [
        # spotlights finish their travel within the episode (upstream's list quirk), several coins, many spawns
        {
            "num_coins": [2, 3],
            "spot_min_speed": 0.04,
            "spot_max_speed": 0.12,
            "initial_spawns": 8,
            "initial_spawn_interval": 2,
            "spawn_interval_threshold": 1,
            "agent_health": 40,
        },
        # everything drawn above the darkness, a light threshold, no action bar, the agent in the centre, rewards
        {
            "agent_visible": True,
            "coins_visible": True,
            "exit_visible": True,
            "light_threshold": 100,
            "light_dim_off_duration": 4,
            "show_last_action": False,
            "sample_agent_position": False,
            "reward_outside_spotlight": 0.01,
            "reward_inside_spotlight": -0.1,
            "spot_damage": 0.5,
            "reward_death": -1.0,
        },
        # some drawn above the darkness (upstream's list order puts the exit above the top bar), two coins
        {"exit_visible": True},
        {"coins_visible": True, "agent_visible": True, "num_coins": [2]},
        # no coin (the exit is open from the first step), a short limit, no feedback, other radii
        {
            "show_last_positive_reward": False,
            "visual_feedback": False,
            "num_coins": [0],
            "max_steps": 20,
            "spot_min_radius": 3.0,
            "spot_max_radius": 20.0,
        },
    ],
)
def test_kwargs_act_as_upstreams_reset_options(options):
    with np.errstate(invalid="ignore"):  # (upstream divides by its 0 coins at the end)
        results = _compare(range(3), options, scripted=True)
    print(options, results)


def _compare_endless(seeds, options, episodes: int = 2):
    """Endless: memory_gym and ours side by side, heading for the coin (from the state; 30% random moves)."""
    up = upstream(ENDLESS)
    ours = make("full", ENDLESS, **options)
    results = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for episode in range(episodes):
            first = seed if episode == 0 else None
            theirs, _ = up.reset(seed=first, options=dict(options))
            obs, _ = ours.reset(seed=first)
            np.testing.assert_array_equal(obs["image"], theirs)
            total, done, t = 0.0, False, 0
            while not done:
                if rng.random() > 0.3:
                    action = toward(obs["agent"], obs["coins"][0][:2])
                else:
                    action = rng.integers(0, 3, size=2)
                theirs, r_up, done_up, _, _ = up.step(list(action))
                obs, reward, term, trunc, _ = ours.step(action)
                t += 1
                assert reward == r_up and (term or trunc) == done_up, (seed, episode, t)
                assert tuple(obs["agent"]) == tuple(up.agent.rect.center), (seed, episode, t)
                assert tuple(obs["coins"][0][:2]) == tuple(up.coin.location), (seed, episode, t)
                np.testing.assert_array_equal(obs["image"], theirs, err_msg=f"seed {seed} episode {episode} t {t}")
                done = term or trunc
                total += reward
            results.append((t, total))
    return results


@needs_memory_gym
@pytest.mark.parametrize(
    "options",
    [
        {},
        # long episodes: many spawns, the 160-step coin limit
        {"agent_health": 400, "steps_per_coin": 60},
        # spotlights finishing their travel (upstream's list quirk), frequent spawns
        {"agent_health": 100, "spot_min_speed": 0.03, "spot_max_speed": 0.1, "spawn_interval": 3, "initial_spawns": 6},
        # visibility, a step limit, rewards, a light threshold, no feedback
        {
            "coins_visible": True,
            "agent_visible": True,
            "max_steps": 50,
            "steps_per_coin": 30,
            "coin_show_duration": 2,
            "reward_outside_spotlight": 0.01,
            "reward_death": -1.0,
            "light_threshold": 120,
            "show_last_positive_reward": False,
            "visual_feedback": False,
            "sample_agent_position": False,
        },
    ],
)
def test_endless_step_for_step_equal_to_memory_gym(options):
    long = options.get("agent_health", 0) >= 400  # one long episode already holds many spawns and coin limits
    results = _compare_endless(range(1 if long else 3), options)
    print("endless", options, "(length, return)", results)
    if options.get("steps_per_coin") == 60:
        assert all(length >= 60 for length, _ in results)


def test_endless_a_collected_coin_is_replaced_and_shown_for_five_steps():
    env = make("full", ENDLESS)
    obs, _ = env.reset(seed=2)
    core = env.unwrapped.core
    core.spots[0] = 0
    for _ in range(8):  # the light is off, the coin hidden
        obs, *_ = env.step(NOOP)
    assert not (obs["image"] == COIN_RGB).all(axis=2).any()
    collected = obs["agent"] + (9, 0)  # within reach (3 + 6 px)
    core.coin_at[0, 0] = core.coin_xy[0, 0] = collected
    shown = []
    for step in range(8):
        obs, reward, term, _, _ = env.step(NOOP)
        assert reward == (0.25 if step == 0 else 0.0) and not term
        shown.append(bool((obs["image"] == COIN_RGB).all(axis=2).any()))
    assert shown == [True] * 5 + [False] * 3
    assert obs["coins"][0, 2] == 1 and not np.array_equal(obs["coins"][0, :2], collected)  # a new coin elsewhere


def test_endless_ends_after_160_steps_without_a_coin():
    env = make("full", ENDLESS, spot_damage=0.0)
    env.reset(seed=3)
    core = env.unwrapped.core
    core.coin_at[0, 0] = (77, 77) if core.position[0, 0] < 60 else (7, 77)
    for t in range(1, 161):
        if np.hypot(*(core.coin_at[0, 0] - core.position[0])) < 12:
            core.coin_at[0, 0] = (7, 7)
        obs, _reward, term, trunc, _ = env.step(NOOP)
        assert term == (t == 160) and not trunc
    assert obs["coin_timer"][0] == 1.0


# --- the rules --------------------------------------------------------------------------------------------------------
def _quiet(env, seed=0):
    """Reset and empty the spotlight list (no spawns), so a test places its own spotlights."""
    obs, _ = env.reset(seed=seed)
    core = env.unwrapped.core
    core.spots[0] = 0
    core.spawns_left[0] = 0
    return core, obs


def _place_spotlight(core, j, at, radius=8, t=0.0, done=False):
    core.spot_path[0, j] = np.asarray(at, dtype=np.float64)  # spawn, target and offset: it stays there
    core.spot_radius[0, j], core.spot_speed[0, j], core.spot_t[0, j], core.spot_done[0, j] = radius, 0.01, t, done
    core.spots[0] = max(core.spots[0], j + 1)


def test_a_spotlight_on_the_agent_hurts_it_and_the_fifth_hit_kills():
    env = make("full")
    core, obs = _quiet(env)
    agent = obs["agent"].astype(float)
    side = 1 if agent[0] < 42 else -1  # place the spotlight towards the middle
    _place_spotlight(core, 0, agent + (side * (13 + 6 + 1), 0), radius=13)  # out of reach by 1 px
    obs, reward, term, _, _ = env.step(NOOP)
    assert obs["health"][0] == 1.0 and not term
    assert not (obs["image"] == RED).all(axis=2)[:, 4:].any()  # the board stays blue
    _place_spotlight(core, 0, agent + (side * (13 + 6), 0), radius=13)  # its radius + the agent's 6 px
    for hit in range(1, 6):
        obs, reward, term, trunc, info = env.step(NOOP)
        assert obs["health"][0] == pytest.approx(1 - hit / 5) and reward == 0.0
        red = int(42 * (1 - (5 - hit) / 5))
        assert (obs["image"][:red, 0] == RED).all() and not (obs["image"][red, 0] == RED).all()  # the health bar
        # the board turns red: seen where the spotlight lights it (26 px wide, it spans blue/red tiles)
        assert (obs["image"] == RED).all(axis=2)[:, 4:].any()
        assert term == (hit == 5)
    assert not info["success"] and not trunc


def test_collecting_the_coin_opens_the_exit_and_the_exit_ends_the_episode():
    env = make("full")
    core, obs = _quiet(env)
    agent = obs["agent"]
    core.coin_at[0, 0] = core.coin_xy[0, 0] = agent + (12, 0)  # 3 px further than reach after a step right
    core.exit_at[0] = np.clip(agent + (0, 40 if agent[1] < 44 else -40), 7, 77)
    obs, reward, term, _, _ = env.step(np.array([2, 0]))  # 3 px right: 9 px away, exactly in reach
    assert reward == 0.25 and not term and obs["coins"][0, 2] == 0 and obs["exit"][2] == 1
    assert not (obs["image"] == COIN_RGB).all(axis=2).any()
    exit_at = obs["exit"][:2]
    done, steps, total = False, 0, 0.0
    while not done:
        obs, reward, term, trunc, info = env.step(toward(obs["agent"], exit_at))
        done, steps, total = term or trunc, steps + 1, total + reward
    assert term and info["success"] and total == 1.0
    assert np.hypot(*(obs["agent"] - exit_at)) <= 11  # the exit's 5 px + the agent's 6


def test_a_closed_exit_does_nothing():
    env = make("full")
    core, obs = _quiet(env)
    core.exit_at[0] = obs["agent"]
    core.coin_at[0, 0] = core.coin_xy[0, 0] = (77, 77) if obs["agent"][0] < 50 else (7, 77)
    obs, reward, term, _trunc, _ = env.step(NOOP)
    assert reward == 0.0 and not term and obs["exit"][2] == 0


def test_a_removed_spotlight_makes_the_next_one_skip_a_step():
    """Upstream removes finished spotlights from the list while iterating it: the next one is neither drawn, moved
    nor checked on that step."""
    env = make("full")
    core, obs = _quiet(env)
    agent = obs["agent"].astype(float)
    _place_spotlight(core, 0, (-50, -50), done=True)
    _place_spotlight(core, 1, agent, t=0.5)  # on the agent
    _place_spotlight(core, 2, (-50, -50), t=0.25)
    obs, *_ = env.step(NOOP)
    assert obs["health"][0] == 1.0  # the second one was skipped
    assert core.spots[0] == 2 and core.spot_t[0, 0] == 0.5 and core.spot_t[0, 1] == 0.26
    obs, *_ = env.step(NOOP)
    assert obs["health"][0] == 0.8 and core.spot_t[0, 0] == 0.51


def test_the_light_dims_off_over_six_steps():
    env = make("full")
    _core, obs = _quiet(env)
    assert (obs["image"][:, 4:] == 255).any()  # everything shown at the reset
    alphas = []
    for _ in range(8):
        obs, *_ = env.step(NOOP)
        alphas.append(round(float(obs["alpha"][0]) * 255))
    assert alphas == [42, 84, 126, 168, 210, 252, 255, 255]
    assert not obs["image"][:, 4:].any()  # no spotlight: black below the top bar


def test_the_time_limit_truncates():
    env = make("full", max_steps=5, spot_damage=0.0)
    env.reset(seed=1)
    for _ in range(5):
        obs, _, term, trunc, _ = env.step(NOOP)
    assert trunc and not term and obs["time"][0] == 1.0


# --- variants, seeding, batching --------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", [ID, ENDLESS])
def test_memoryless_policies_climb_the_ladder(env_id):
    """With the oracle a memoryless policy walks to the coin and the exit (endless: coin after coin); from the
    image alone it only sees them at the start and inside spotlights."""
    episodes = 20 if env_id == ID else 8
    scores = {}
    for variant in ("partial", "oracle"):
        env = make(variant, env_id)
        rng = np.random.default_rng(1)
        returns, successes = [], 0
        for seed in range(episodes):
            obs, _ = env.reset(seed=seed)
            total, done = 0.0, False
            while not done:
                action = oracle_policy(obs) if variant == "oracle" else image_policy(obs, rng)
                obs, reward, term, trunc, info = env.step(action)
                total += reward
                done = term or trunc
            returns.append(total)
            successes += info["success"]
        scores[variant] = (float(np.mean(returns)), successes / episodes)
    print(env_id, "mean return, success rate:", scores)
    if env_id == ID:
        assert scores["oracle"][1] >= 0.6 and scores["partial"][1] <= 0.3
        assert scores["oracle"][0] > scores["partial"][0] + 0.5
    else:  # no success: coins until the spotlights or the 160-step coin limit end it
        assert scores["oracle"][0] > 2 * scores["partial"][0] + 1.0


def test_same_seed_same_episode_and_different_seeds_differ():
    env = make("oracle")
    starts = {env.reset(seed=s)[0]["oracle"].tobytes() for s in range(10)}
    assert len(starts) == 10
    a, b = make("full"), make("full")
    for episode in range(3):
        oa, _ = a.reset(seed=4) if episode == 0 else a.reset()
        ob, _ = b.reset(seed=4) if episode == 0 else b.reset()
        rng = np.random.default_rng(episode)
        for _ in range(60):
            for k in oa:
                np.testing.assert_array_equal(oa[k], ob[k])
            action = rng.integers(0, 3, size=2)
            oa, ra, term, trunc, _ = a.step(action)
            ob, rb, *_ = b.step(action)
            assert ra == rb
            if term or trunc:
                break


@pytest.mark.parametrize("env_id", [ID, ENDLESS])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_batched_equals_single(mode, env_id):
    """Environment i of the batch is the single env with the same seed, step for step over episode ends."""
    n = 3
    terminated, truncated = compare_batched_with_sync(
        env_id, n, mode, 120, lambda rng: rng.integers(0, 3, size=(n, 2)), obs_variant="full", max_steps=30
    )
    assert terminated + truncated >= n


def test_render_modes():
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    env.step(NOOP)
    picture = env.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3
    text = make(render_mode="ansi")
    text.reset(seed=0)
    assert "A" in text.render() and "health=5/5" in text.render()


# --- bad input ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"max_steps": 0}, ValueError, "max_steps=0 is not allowed"),
        ({"num_coins": ()}, ValueError, r"num_coins=\(\) is not allowed"),
        ({"agent_visible": 1}, TypeError, "agent_visible=1 is not allowed"),
        ({"spot_min_radius": 12.0, "spot_max_radius": 5.0}, ValueError, "spot_max_radius"),
        ({"spot_min_speed": 0.5, "spot_max_speed": 0.1}, ValueError, "spot_max_speed"),
        ({"agent_speed": 3.0}, TypeError, "unknown kwarg 'agent_speed'"),
        ({"obs_variant": "oracles"}, ValueError, "obs_variant='oracles' is not allowed"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(ID, **kwargs)


@pytest.mark.parametrize("action", [np.array([0, 3]), np.array([1]), 4, np.array([[0, 0]])])
def test_bad_actions_are_clear_errors(action):
    env = make()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(action)
