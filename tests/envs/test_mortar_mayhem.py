"""Mortar Mayhem (Memory Gym; MIKASA-Base): step-for-step against the authors' ``memory_gym`` (same seed, same
commands, rewards, ends, positions and pixels), the presets, the rules (+0.1 per command, a wrong tile ends the
episode), the variants with memoryless scripted policies, seeding, batched == single and clear errors."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.envs.memory_gym.common import AGENT_BODY_RGB, AGENT_HAND_RGB, SCREEN, agent_sprites
from membench_envs.envs.memory_gym.mortar_mayhem import COMMAND_MOVES, COMMANDS, TILE, TILE_RED, command_symbol

import membench_envs
from tests.envs._helpers import on_info, play

PRESETS = {  # ID: (memory_gym ID, grid, show_commands, T, Xi)
    "MIKASA/MortarMayhemGrid-v0": ("MortarMayhem-Grid-v0", True, True, 118, (38, 74)),
    "MIKASA/MortarMayhemBGrid-v0": ("MortarMayhemB-Grid-v0", True, False, 79, None),
    "MIKASA/MortarMayhem-v0": ("MortarMayhem-v0", False, True, 274, (38, 218)),
    "MIKASA/MortarMayhemB-v0": ("MortarMayhemB-v0", False, False, 235, None),
    "MIKASA/EndlessMortarMayhem-v0": ("Endless-MortarMayhem-v0", False, True, None, None),
}
FINITE = [i for i in PRESETS if "Endless" not in i]


def _memory_gym():
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    try:
        import memory_gym
    except Exception as exc:
        pytest.skip(f"the reference package memory_gym is not importable here ({type(exc).__name__}: {exc})")
    return memory_gym


def image_of(obs) -> np.ndarray:
    return obs["image"] if isinstance(obs, dict) else obs


# --- memoryless reading of the picture ---------------------------------------------------------------------------
def agent_centre(image: np.ndarray) -> np.ndarray:
    """(x, y) centre of the agent's body disc, read off the picture."""
    ys, xs = np.nonzero((image == AGENT_BODY_RGB).all(axis=2) | (image == AGENT_HAND_RGB).all(axis=2))
    return np.array([(xs.min() + xs.max() + 1) / 2, (ys.min() + ys.max() + 1) / 2])


def facing(image: np.ndarray) -> int:
    """0 up, 2 left, 4 down, 6 right: where the hands are, seen from the body's centre."""
    body = np.argwhere((image == AGENT_BODY_RGB).all(axis=2)).mean(axis=0)
    hands = np.argwhere((image == AGENT_HAND_RGB).all(axis=2)).mean(axis=0)
    dy, dx = hands - body
    if abs(dy) >= abs(dx):
        return 0 if dy < 0 else 4
    return 2 if dx < 0 else 6


def tiles_red(image: np.ndarray) -> bool:
    return bool((image == TILE_RED).all(axis=2).any())


FORWARD = {0: (0, -1), 2: (-1, 0), 4: (0, 1), 6: (1, 0)}


def steer(image: np.ndarray, target: np.ndarray, grid: bool, left: int, wrap: bool = False):
    """One memoryless step towards the centre of tile ``target`` (no move while the tiles are red)."""
    still = 0 if grid else np.array([0, 0])
    if tiles_red(image):
        return still
    goal = left + TILE * np.asarray(target) + TILE // 2
    delta = goal - agent_centre(image)
    if wrap:  # across the screen's edge when shorter (the screen wraps over 91 pixels)
        delta = np.where(delta > 45, delta - 91, np.where(delta < -45, delta + 91, delta))
    if grid:
        tile_delta = np.round(delta / TILE).astype(int)
        if not tile_delta.any():
            return 0
        want = (int(np.sign(tile_delta[0])), 0) if tile_delta[0] else (0, int(np.sign(tile_delta[1])))
        face = facing(image)
        if FORWARD[face] == want:
            return 3
        want_face = next(k for k, v in FORWARD.items() if v == want)
        return 1 if (want_face - face) % 8 == 2 else 2
    d = np.where(np.abs(delta) >= 2, np.sign(delta), 0).astype(int)
    return np.array([{0: 0, -1: 1, 1: 2}[d[0]], {0: 0, -1: 1, 1: 2}[d[1]]])


# --- presets -----------------------------------------------------------------------------------------------------
def test_presets_and_catalogue():
    for env_id, (_, grid, show, T, xi) in PRESETS.items():
        spec = membench_envs.info(env_id)
        assert spec.episode_length == T and spec.xi == xi and spec.extra is None
        assert spec.memory_types == ("capacity", "sequential") and "MIKASA-Base" in spec.suites
        core = gym.make(env_id).unwrapped.core
        assert (core.grid, core.show_commands, core.T) == (grid, show, T)
        assert core.action_space == (gym.spaces.Discrete(4) if grid else gym.spaces.MultiDiscrete([3, 3]))
    assert membench_envs.info("MIKASA/MortarMayhem-v0").xi_paper == (38, 218)


def _leave(env_id: str, seed: int, start: int | None):
    """Follow the targets (read off the picture) until command 0 is verified; from action ``start`` on (None: never)
    walk off its tile (Grid: turned beforehand towards a neighbour in the arena, then forward; continuous: sideways,
    towards the arena's centre). Returns (the action that verified command 0, the action whose step left the tile,
    whether that step ended the episode)."""
    env = gym.make(env_id, obs_variant="full")
    core = env.unwrapped.core
    obs, info = env.reset(seed=seed)
    verified = None
    for t in range(400):
        tile = (obs["agent"] - core.left) // TILE
        if verified is None or start is None or (core.grid and t < start and t > verified):
            action = steer(image_of(obs), info["oracle"][-2:], core.grid, core.left)
            if verified is not None and core.grid:  # turn until facing a neighbour inside the arena (turns are safe)
                ahead = tile + FORWARD[int(obs["rotation"])]
                action = 0 if ((ahead >= 0) & (ahead < core.size)).all() else 1
        elif t < start:
            action = np.array([0, 0])
        else:
            action = 3 if core.grid else np.array([2 if tile[0] < core.size // 2 else 1, 0])
        obs, reward, term, trunc, info = env.step(action)
        if reward > 0 and verified is None:
            verified = t
        moved = ((obs["agent"] - core.left) // TILE != tile).any()
        if verified is not None and start is not None and t >= start and moved:
            return verified, t, term
        if term or trunc:
            return verified, None, term
    raise AssertionError("the walk did not end")


@pytest.mark.parametrize("env_id", ["MIKASA/MortarMayhemGrid-v0", "MIKASA/MortarMayhem-v0"])
def test_xi_is_measured_from_the_first_actions_that_can_execute_each_command(env_id):
    """Ξ's recall times measured on the env: no action moves the agent before action 39 (the first of the execution
    phase); after command 0 is verified, the first action that can leave its target without ending the episode is
    action 39 + (explosion delay + duration), and every next command comes that period later. With command k shown
    in observations 4k ... 4k+2 (t_e = 4k, dt = 2): xi = t_r - t_e - dt + 1 = the catalogue's Ξ, the paper's."""
    core = gym.make(env_id).unwrapped.core
    first_move = None
    env = gym.make(env_id, obs_variant="full")
    obs, _ = env.reset(seed=0)
    for t in range(60):  # turn (Grid) or move (continuous) from the start: the first action that does anything
        before = (obs["agent"].copy(), int(obs["rotation"]))
        obs, *_ = env.step(1 if core.grid else np.array([2, 2]))
        if not np.array_equal(obs["agent"], before[0]) or int(obs["rotation"]) != before[1]:
            first_move = t
            break
    assert first_move == 39
    verified, _, _ = _leave(env_id, 3, None)
    outcomes = {}
    for start in range(verified + 1, verified + core.explosion_duration[0] + 4):
        _, left_with, failed = _leave(env_id, 3, start)
        outcomes[left_with] = failed
    safe = min(t for t, failed in outcomes.items() if not failed)
    assert all(failed for t, failed in outcomes.items() if t < safe) and any(outcomes.values()), outcomes
    period = safe - first_move
    assert period == core.explosion_delay[0] + core.explosion_duration[0]
    xis = [first_move + k * period - 4 * k - 2 + 1 for k in range(10)]
    assert membench_envs.info(env_id).xi == (min(xis), max(xis)) == ((38, 74) if core.grid else (38, 218))


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
@pytest.mark.parametrize("env_id", list(PRESETS))
def test_gymnasium_env_checker_and_spaces(env_id, variant):
    env = gym.make(env_id, obs_variant=variant)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert image_of(obs).shape == (SCREEN, SCREEN, 3) and image_of(obs).dtype == np.uint8
    assert env.observation_space.contains(obs) and "oracle" in info
    b = "B" in env_id
    keys = {"partial": set(), "oracle": {"oracle"}, "full": {"oracle", "agent", "rotation", "tiles_on", "timers"}}
    if variant == "partial" and not b:
        assert isinstance(obs, np.ndarray)
    else:
        assert set(obs) == {"image"} | ({"commands_one_hot"} if b else set()) | keys[variant]


# --- the pictures: pygame-ce's rasterisation, re-implemented ----------------------------------------------------
def test_sprites_and_command_symbols_are_the_authors_pixels():
    _memory_gym()
    import pygame
    from memory_gym.character_controller import CharacterController
    from memory_gym.pygame_assets import Command

    pygame.init()
    pygame.display.set_mode((SCREEN, SCREEN), pygame.NOFRAME)
    alpha, rgb = agent_sprites()
    theirs = CharacterController(3.0, 0.25).character_surfaces
    for k in range(8):
        pixels = pygame.surfarray.array3d(theirs[k]).transpose(1, 0, 2)
        opaque = ~(pixels == (0, 0, 255)).all(axis=2)  # their colour key
        np.testing.assert_array_equal(alpha[k], opaque)
        np.testing.assert_array_equal(rgb[k][opaque], pixels[opaque])
    for name in COMMANDS:
        surface = Command(name, 0.25).surface
        mask = (pygame.surfarray.array3d(surface).transpose(1, 0, 2) > 0).any(axis=2)
        np.testing.assert_array_equal(command_symbol(name), mask, err_msg=name)


# --- step for step against memory_gym ----------------------------------------------------------------------------
def _script(core, rng, p_random: float):
    """Drive both envs: towards the current target (from our state), a random action with probability p."""
    grid = core.grid
    if rng.random() < p_random:
        return int(rng.integers(4)) if grid else rng.integers(0, 3, 2)
    image = core.image(np.array([0]))[0]
    return steer(image, core.target[0], grid, core.left, wrap=core.endless)


def _compare(env_id: str, seeds, p_random: float, max_steps: int = 10_000, options=None) -> list[int]:
    """Play ``seeds`` in memory_gym and in ours with the same actions; assert every step is the same; return the
    episode lengths. ``options``: memory_gym's reset parameters, given to ours as kwargs."""
    up_id = PRESETS[env_id][0]
    ours = gym.make(env_id, **{k: tuple(v) if isinstance(v, list) else v for k, v in (options or {}).items()})
    ours = ours.unwrapped
    core = ours.core
    lengths = []
    for seed in seeds:
        up = gym.make(up_id).unwrapped  # a fresh one: upstream's Endless draws a stale sprite after a reset
        rng = np.random.default_rng(1000 + seed)
        theirs, _ = up.reset(seed=seed, options=options)
        mine, _ = ours.reset(seed=seed)
        t = 0
        while True:
            assert list(up._commands) == [COMMANDS[c] for c in core.commands[0, : core.num[0]]], (seed, t)
            their_image = theirs["visual_observation"] if isinstance(theirs, dict) else theirs
            np.testing.assert_array_equal(their_image.transpose(1, 0, 2), image_of(mine), err_msg=f"{seed=} {t=}")
            if isinstance(theirs, dict):
                np.testing.assert_array_equal(theirs["vector_observation"], mine["commands_one_hot"])
            action = _script(core, rng, p_random)
            theirs, r_up, term_up, trunc_up, info_up = up.step(action if core.grid else list(action))
            mine, r, term, trunc, info = ours.step(action)
            t += 1
            assert (r, term, trunc) == (r_up, term_up, trunc_up), (seed, t)
            assert tuple(up.agent.rect.center) == tuple(core.pos[0]), (seed, t)
            if term or t >= max_steps:
                break
        if "Endless" not in env_id and term:
            # upstream also reports success when the last command fails
            assert info["success"] == (info_up["success"] == 1 and r == core.r_ok + core.r_done)
        up.close()
        lengths.append(t)
    return lengths


@pytest.mark.parametrize("env_id", FINITE)
def test_same_seed_same_episode_as_memory_gym(env_id):
    _memory_gym()
    T = PRESETS[env_id][3]
    perfect = _compare(env_id, range(3), 0.0)
    assert perfect == [T] * 3  # the scripted policy executes every command
    mixed = _compare(env_id, range(3, 8 if PRESETS[env_id][1] else 6), 0.1)
    random = _compare(env_id, range(15, 18), 1.0)
    print(env_id, "lengths scripted", perfect, "10% random", mixed, "random", random)
    assert min(mixed + random) < T


@pytest.mark.parametrize("env_id", ["MIKASA/MortarMayhemGrid-v0", "MIKASA/MortarMayhem-v0"])
def test_reset_parameters_mean_what_they_mean_upstream(env_id):
    _memory_gym()
    options = {
        "arena_size": 4,
        "allowed_commands": 9,
        "command_count": [3, 6],
        "command_show_duration": [1, 2],
        "command_show_delay": [0, 2],
        "explosion_duration": [1, 3],
        "explosion_delay": [4, 9],
    }
    lengths = _compare(env_id, range(4), 0.0, options=options)
    lengths += _compare(
        env_id,
        range(4, 8),
        0.2,
        options={**options, "arena_size": 3, "visual_feedback": False, "reward_command_success": 0.5},
    )
    print(env_id, "lengths with other reset parameters", lengths)
    assert len(set(lengths)) > 2


def test_endless_same_seed_same_episode_as_memory_gym():
    _memory_gym()
    lengths = _compare("MIKASA/EndlessMortarMayhem-v0", range(2), 0.0, max_steps=700)
    assert lengths == [700, 700]  # several rounds (a sequence of 4 commands by step 700)
    lengths += _compare("MIKASA/EndlessMortarMayhem-v0", range(2, 5), 0.3, max_steps=700)
    print("endless lengths", lengths)


# --- the rules ---------------------------------------------------------------------------------------------------
def _oracle_policy(env):
    core = env.unwrapped.core

    def policy(obs, info):
        return steer(image_of(obs), info["oracle"][-2:], core.grid, core.left, wrap=core.endless)

    return policy


@pytest.mark.parametrize("env_id", FINITE)
def test_executing_every_command_gives_0_1_each_and_success(env_id):
    env = gym.make(env_id)
    T = PRESETS[env_id][3]
    for seed in range(3):
        episode = play(env, on_info(_oracle_policy(env)), seed)
        assert episode.t == T and episode.terminated and episode.info["success"]
        assert np.count_nonzero(episode.rewards) == 10 and np.isclose(episode.total, 1.0)
        assert set(np.round(episode.rewards, 6)) == {0.0, 0.1}


def test_a_wrong_tile_ends_the_episode_without_reward():
    env = gym.make("MIKASA/MortarMayhemGrid-v0")
    core = env.unwrapped.core
    for seed in range(20):
        env.reset(seed=seed)
        if COMMANDS[core.commands[0, 0]] != "stay":
            break
    # standing still through the first command: its verification (7 steps into the execution) ends the episode
    for t in range(39 + 7):
        _, r, term, trunc, info = env.step(0)
        assert r == 0.0 and not trunc
        assert term == (t == 39 + 6)
    assert not info["success"] and core.current[0] == 1
    # stepping off the target while the tiles are red ends it too (the first seed whose agent faces a free tile)
    policy = _oracle_policy(env)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        for _ in range(39 + 7):
            obs, r, term, _, info = env.step(policy(obs, info))
        assert r == 0.1 and not term and core.tiles_on[0]
        ahead = core.tile_of(core.pos[0]) + FORWARD[int(core.rot[0])]
        if ((ahead >= 0) & (ahead < 5)).all():
            break
    obs, r, term, _, info = env.step(3)
    assert term and r == 0.0 and not info["success"]


def test_failing_the_last_command_is_not_a_success():
    """Upstream reports success whenever the last command is verified, even when the agent is off its tile."""
    env = gym.make("MIKASA/MortarMayhemGrid-v0", obs_variant="oracle")
    policy = _oracle_policy(env)
    core = env.unwrapped.core
    obs, info = env.reset(seed=0)
    while core.current[0] < 9 or core.tiles_on[0]:
        obs, *_, info = env.step(policy(obs, info))
    while True:  # walk away from the last target: turn until a free tile is ahead, then step forward
        ahead = core.tile_of(core.pos[0]) + FORWARD[int(core.rot[0])]
        on_target = (core.tile_of(core.pos[0]) == core.target[0]).all()
        action = 3 if on_target and ((ahead >= 0) & (ahead < 5)).all() else 1 if on_target else 0
        obs, r, term, _, info = env.step(action)
        if term:
            break
    assert r == 0.0 and core.current[0] == 10 and not info["success"]


def test_endless_draws_the_agent_where_it_is_after_a_reset():
    """Upstream keeps the previous episode's sprite and position for the command phase after a reset."""
    env = gym.make("MIKASA/EndlessMortarMayhem-v0")
    core = env.unwrapped.core
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        for _ in range(4):
            assert np.abs(agent_centre(image_of(obs)) - core.pos[0]).max() <= 1
            obs, *_ = env.step(np.array([2, 2]))
        for _ in range(60):  # walk off until the episode ends, so the next one starts elsewhere
            obs, _r, term, *_ = env.step(np.array([2, 2]))
            if term:
                break


def test_the_arena_turns_red_but_the_target_tile():
    env = gym.make("MIKASA/MortarMayhemGrid-v0", obs_variant="oracle")
    policy = _oracle_policy(env)
    obs, info = env.reset(seed=1)
    for _ in range(39 + 7):
        obs, _, _, _, info = env.step(policy(obs, info))
    image = image_of(obs)
    core = env.unwrapped.core
    x, y = core.left + TILE * core.target[0] + TILE // 2
    assert tiles_red(image) and not (image[y - 4 : y + 4, x - 4 : x + 4] == TILE_RED).all(axis=2).any()
    no_feedback = gym.make("MIKASA/MortarMayhemGrid-v0", visual_feedback=False)
    obs, info = no_feedback.reset(seed=1)
    policy = _oracle_policy(no_feedback)
    for _ in range(39 + 7):
        obs, _, _, _, info = no_feedback.step(policy(obs, info))
    assert no_feedback.unwrapped.core.tiles_on[0] and not tiles_red(image_of(obs))


def test_commands_are_shown_one_by_one_then_never_again():
    env = gym.make("MIKASA/MortarMayhemGrid-v0", obs_variant="oracle")
    core = env.unwrapped.core
    obs, info = env.reset(seed=4)
    symbols = {name: command_symbol(name) for name in COMMANDS}
    centre = slice(SCREEN // 2 - 11, SCREEN // 2 + 11)
    for t in range(40 + 20):
        white = (image_of(obs)[centre, centre] == 255).all(axis=2)
        k, shown = divmod(t, 4)
        if t < 40 and shown < 3:
            np.testing.assert_array_equal(white, symbols[COMMANDS[core.commands[0, k]]])
            assert (info["oracle"][: k + 1] == core.commands[0, : k + 1] + 1).all() and not info["oracle"][
                k + 1 : 10
            ].any()
        else:
            assert not white.any()
        if t >= 39:
            break
        obs, _, _, _, info = env.step(0)
    # without a blank frame after each command the last one is shown until the execution starts, not after
    no_delay = gym.make("MIKASA/MortarMayhemGrid-v0", command_show_delay=(0,))
    obs, _ = no_delay.reset(seed=4)
    for _ in range(30):  # 10 commands x 3 frames
        assert (image_of(obs)[centre, centre] == 255).all(axis=2).any()
        obs, *_ = no_delay.step(0)
    assert not (image_of(obs)[centre, centre] == 255).all(axis=2).any()


def test_b_variant_gives_the_sequence_as_the_authors_one_hot_vector():
    env = gym.make("MIKASA/MortarMayhemBGrid-v0")
    obs, _ = env.reset(seed=2)
    core = env.unwrapped.core
    one_hot = obs["commands_one_hot"].reshape(20, 9)
    order = ("stay", "right", "left", "up", "down", "right_down", "right_up", "left_down", "left_up")
    assert one_hot[:10].sum(axis=1).tolist() == [1] * 10 and not one_hot[10:].any()
    assert [order[i] for i in one_hot[:10].argmax(axis=1)] == [COMMANDS[c] for c in core.commands[0, :10]]


def test_endless_adds_one_command_a_round_and_wraps():
    env = gym.make("MIKASA/EndlessMortarMayhem-v0", max_steps=2000)
    core = env.unwrapped.core
    episode = play(env, on_info(_oracle_policy(env)), 0)
    assert not episode.terminated and episode.t == 2000  # truncated at max_steps
    rounds = int(core.num[0])
    assert rounds >= 5 and np.isclose(episode.total, 0.1 * sum(range(1, rounds)) + 0.1 * int(core.current[0]))
    moves = COMMAND_MOVES[core.commands[0, :rounds]]
    assert (np.abs(moves) > 0).any() and core.allowed == 9
    capped = gym.make("MIKASA/EndlessMortarMayhem-v0", max_commands=3)
    episode = play(capped, on_info(_oracle_policy(capped)), 0)
    assert not episode.terminated and np.isclose(episode.total, 0.1 * (1 + 2 + 3))  # truncated before a 4th command


# --- variants: memoryless scripted policies ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "env_id", ["MIKASA/MortarMayhemGrid-v0", "MIKASA/MortarMayhem-v0", "MIKASA/MortarMayhemBGrid-v0"]
)
def test_oracle_lets_a_memoryless_policy_execute_the_commands(env_id):
    oracle_env = gym.make(env_id, obs_variant="oracle")
    partial_env = gym.make(env_id, obs_variant="partial")
    grid = oracle_env.unwrapped.core.grid
    still = 0 if grid else np.array([0, 0])
    returns = {"oracle": [], "partial": []}
    for seed in range(10):
        returns["oracle"].append(play(oracle_env, on_info(_oracle_policy(oracle_env)), seed).total)
        # without the oracle a memoryless policy does not know where to go: it stays (right for leading "stay"s)
        returns["partial"].append(play(partial_env, lambda obs, episode: still, seed).total)
    mean = {k: float(np.mean(v)) for k, v in returns.items()}
    print(env_id, "mean return over 10 seeds:", mean)
    assert mean["oracle"] > 0.95 and mean["partial"] < 0.2


# --- seeding, batched == single ----------------------------------------------------------------------------------
def test_same_seed_same_episode_and_different_seeds_differ():
    env = gym.make("MIKASA/MortarMayhem-v0", obs_variant="full")
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 3, (80, 2))

    def run(seed):
        obs, _ = env.reset(seed=seed)
        out = [obs["oracle"].copy()]
        for a in actions:
            obs, r, term, _trunc, _ = env.step(a)
            out.append(np.concatenate([obs["oracle"], obs["agent"], [r, term]]))
            if term:
                break
        return out

    a, b = run(3), run(3)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    starts = set()
    for seed in range(10):
        env.reset(seed=seed)
        core = env.unwrapped.core
        starts.add((tuple(core.commands[0]), tuple(core.pos[0])))
    assert len(starts) == 10


@pytest.mark.parametrize(
    "env_id",
    [
        "MIKASA/MortarMayhemGrid-v0",
        "MIKASA/MortarMayhemBGrid-v0",
        "MIKASA/MortarMayhem-v0",
        "MIKASA/EndlessMortarMayhem-v0",
    ],
)
def test_batched_env_i_is_the_single_env_with_seed_plus_i(env_id):
    n, steps = 3, 260
    venv = gym.make_vec(env_id, num_envs=n, obs_variant="oracle")
    obs, _ = venv.reset(seed=7)
    singles = [gym.make(env_id, obs_variant="oracle") for _ in range(n)]
    single_obs = [s.reset(seed=7 + i)[0] for i, s in enumerate(singles)]
    needs_reset = [False] * n
    rng = np.random.default_rng(1)
    for _ in range(steps):
        for i in range(n):
            np.testing.assert_array_equal(obs["image"][i], single_obs[i]["image"])
            np.testing.assert_array_equal(obs["oracle"][i], single_obs[i]["oracle"])
        actions = venv.action_space.sample() if rng.random() < 0.5 else np.zeros(venv.action_space.shape, int)
        obs, reward, term, trunc, _ = venv.step(actions)
        for i, s in enumerate(singles):
            if needs_reset[i]:  # NEXT_STEP autoreset: the single env's next episode, from the same generator
                single_obs[i], _ = s.reset()
                needs_reset[i] = False
                assert reward[i] == 0 and not term[i]
                continue
            single_obs[i], r, te, tr, _ = s.step(actions[i])
            assert (r, te, tr) == (reward[i], term[i], trunc[i])
            needs_reset[i] = te or tr


# --- bad input ---------------------------------------------------------------------------------------------------
def test_bad_input_is_a_clear_error():
    env = gym.make("MIKASA/MortarMayhemGrid-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(4)
    continuous = gym.make("MIKASA/MortarMayhem-v0")
    continuous.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        continuous.step(np.array([1, 1, 1]))
    with pytest.raises(ValueError, match="outside the action space"):
        continuous.step(np.array([3, 0]))
    with pytest.raises(KeyError, match="MortarMayhemGrid"):
        membench_envs.info("MIKASA/MortarMayhemGrd-v0")
    with pytest.raises(TypeError, match="unknown kwarg 'arena'"):
        gym.make("MIKASA/MortarMayhemGrid-v0", arena=5)
    with pytest.raises(ValueError, match="arena_size=7 is not allowed"):
        gym.make("MIKASA/MortarMayhemGrid-v0", arena_size=7)
    with pytest.raises(ValueError, match="command_count=\\(\\) is not allowed"):
        gym.make("MIKASA/MortarMayhemGrid-v0", command_count=())
    with pytest.raises(ValueError, match="at most 20 commands"):
        gym.make("MIKASA/MortarMayhemBGrid-v0", command_count=(21,))
    with pytest.raises(ValueError, match="endless=True needs grid=False"):
        gym.make("MIKASA/MortarMayhemGrid-v0", endless=True)
    with pytest.raises(gym.error.ResetNeeded):
        gym.make("MIKASA/MortarMayhemGrid-v0").unwrapped.step(0)
