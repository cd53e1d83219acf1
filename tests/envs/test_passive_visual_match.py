"""Passive Visual Match (TVT; MIKASA-Base): the three phases and their timing, the egocentric picture, apples and
their respawn, the pad rewards, the variants with scripted memoryless policies, seeding, batched == single and
clear errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.envs.native.passive_visual_match import APPLE_CELLS, COLOUR0, PALETTE

import membench_envs

ENV = "MIKASA/PassiveVisualMatch-v0"
N, S, W, E = 0, 1, 2, 3
AGENT_RGB, APPLE_RGB, WALL_RGB = PALETTE[2], PALETTE[3], PALETTE[1]
COLOURS = PALETTE[COLOUR0:]


def make(variant="partial", **kw):
    return gym.make(ENV, obs_variant=variant, **kw)


def cells_of(image, rgb) -> list[tuple[int, int]]:
    return [tuple(int(v) for v in x) for x in np.argwhere((image == rgb).all(axis=2))]


def test_catalogue_entry():
    spec = membench_envs.info(ENV)
    assert spec.episode_length == 57 and spec.xi == (30, 30) and spec.memory_types == ("object",)
    assert "MIKASA-Base" in spec.suites and spec.obs_type == "dict"


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_gymnasium_env_checker_and_spaces(variant):
    env = make(variant)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs["image"].shape == (5, 5, 3) and obs["image"].dtype == np.uint8 and env.action_space.n == 4
    keys = {"partial": set(), "oracle": {"oracle"}, "full": {"target", "pads", "board", "respawn", "time"}}[variant]
    assert set(obs) == {"image"} | keys and info["oracle"] in (0, 1, 2)


def test_phases_timing_and_what_the_agent_sees():
    """Observations 0-13: the agent walled in, one wall cell in the target colour (actions do nothing);
    14-42: the apple room; 43-57: the choice room with its three pads; the episode ends after 57 steps."""
    env = make("full")
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        target = COLOURS[obs["target"]]
        for t in range(58):
            image = obs["image"]
            assert (image[2, 2] == AGENT_RGB).all(), t  # always the centre cell
            if t <= 13:
                assert cells_of(image, target) and len(cells_of(image, WALL_RGB)) == 7, t
                assert all(not cells_of(image, c) for c in COLOURS if not (c == target).all())
            elif t <= 42:
                assert not any(cells_of(image, c) for c in COLOURS), t
                assert ((obs["board"] == 3).sum() > 0) and (obs["board"][[0, -1]] == 1).all()
            else:
                assert sorted((obs["board"] >= COLOUR0).sum(axis=1)) in ([0] * 7, [0] * 6 + [3]), t
            if t == 57:
                break
            action = [N, W, S, E][t % 4]
            obs, _reward, term, trunc, _ = env.step(action)
            assert term == (t == 56) and not trunc
            if t < 13:
                np.testing.assert_array_equal(obs["image"], image)  # nothing moves while the colour is shown
        assert t == 57


def _to_choice(env, action=N):
    for _ in range(43):
        obs, *_ = env.step(action)
    return obs


def test_apples_reward_and_respawn_after_respawn_every_frames():
    env = make("full", respawn_every=3)
    core = env.unwrapped.core
    for seed in range(20):
        env.reset(seed=seed)
        for _ in range(14):
            obs, *_ = env.step(N)
        if obs["board"][5, 3] == 3:  # an episode with an apple at (5, 3) ((5, 4) is never an apple cell)
            break
    else:
        pytest.fail("no episode with an apple at (5, 3)")
    assert obs["board"][5, 5] == 2
    rewards = [env.step(W) for _ in range(2)]  # (5, 4) then the apple at (5, 3), eaten in apple frame 3
    assert [r[1] for r in rewards] == [0.0, 1.0] and not core.apples[0, 5, 3]
    obs = rewards[1][0]
    assert obs["respawn"][5, 3] == 4 and env.observation_space.contains(obs)
    obs, *_ = env.step(E)  # back in frame 7 = 3 + respawn_every + 1
    assert obs["respawn"][5, 3] == 3
    for frame in (5, 6):
        obs, r, *_ = env.step(E)
        assert r == 0 and obs["board"][5, 3] == 0 and obs["respawn"][5, 3] == 7 - frame
    obs, *_ = env.step(S)  # into the wall: frame 7
    assert obs["board"][5, 3] == 3 and obs["respawn"][5, 3] == 0
    assert (APPLE_CELLS.sum(axis=1) % 2 == 0).all() and len(APPLE_CELLS) == 22


def test_the_target_pad_pays_final_reward_a_wrong_pad_nothing_and_only_one_pad_counts():
    env = make("full")
    seen = set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        obs = _to_choice(env)
        c_is_target = obs["pads"][1] == obs["target"]
        rewards = [env.step(N)[1] for _ in range(4)]  # up the corridor onto the middle pad (1, 5)
        assert rewards == [0, 0, 0, 10.0 if c_is_target else 0]
        assert not (env.unwrapped.core.board(np.array([0]))[0] >= COLOUR0).any()  # all pads gone
        for action in [W, W, W] + [E] * 6:  # over the other pads' cells: nothing more
            obs, r, term, *_ = env.step(action)
            assert r == 0 and not term
        for _ in range(57 - 43 - 13 - 1):
            obs, r, term, *_ = env.step(N)
        obs, r, term, trunc, info = env.step(N)
        assert term and not trunc and info["success"] == c_is_target
        seen.add(bool(c_is_target))
    assert seen == {True, False}


def _seek(obs_image, target_rgb, cell) -> int:
    """A memoryless route to the pad of ``target_rgb``: towards it when in view, else up the corridor, left
    from (3, 5), up from (3, 4) and right along row 2 (every pad comes into view on that route)."""
    seen = cells_of(obs_image, target_rgb)
    r, c = cell
    if seen:
        dr, dc = seen[0][0] - 2, seen[0][1] - 2
        return (N if dr < 0 else S) if dr else (W if dc < 0 else E)
    if r >= 4 or (r == 3 and c == 5):
        return N if r >= 4 else W
    return N if r == 3 else E


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_memoryless_policies_climb_the_ladder(variant):
    """Knowing the colour (the oracle, or the full state) a memoryless policy always finds its pad; from the picture
    alone (at the choice it shows no colour any more) it can only guess: chance, 1/3. The policy steers by the
    agent's cell (visible through the walls) and chooses by the observation only."""
    episodes = 60
    venv = gym.make_vec(ENV, num_envs=episodes, obs_variant=variant)
    obs, _ = venv.reset(seed=500)
    for _ in range(43):
        obs, *_ = venv.step(np.zeros(episodes, dtype=np.int64))
    core = venv.unwrapped.core
    key = {"partial": None, "oracle": "oracle", "full": "target"}[variant]
    colours = np.zeros(episodes, dtype=np.int64) if key is None else obs[key]  # partial: always "red"
    total = np.zeros(episodes)
    for _ in range(14):
        actions = [_seek(obs["image"][i], COLOURS[colours[i]], core.agent[i]) for i in range(episodes)]
        obs, reward, term, *_ = venv.step(np.array(actions))
        total += reward
    assert term.all()
    rate = (total == 10).mean()
    if variant == "partial":
        assert 0.15 <= rate <= 0.55, rate
    else:
        assert rate == 1.0


def test_same_seed_same_episode_pad_colours_per_seed_and_batched_equals_single():
    env = make("full")
    a = [env.reset(seed=3)[0], env.reset(seed=3)[0]]
    for k in a[0]:
        np.testing.assert_array_equal(a[0][k], a[1][k])
    pads = {tuple(env.reset(seed=s)[0]["pads"]) for s in range(12)}
    assert len(pads) > 1  # the pad colours depend on the seed...
    env.reset(seed=4)
    stream = {tuple(env.reset()[0]["pads"]) for _ in range(6)}
    assert len(stream) == 1  # ...and stay put along its episodes, as upstream's once-per-env shuffle
    targets = {int(env.reset()[0]["target"]) for _ in range(30)}
    assert targets == {0, 1, 2}
    venv = gym.make_vec(ENV, num_envs=3, obs_variant="full", respawn_every=2)  # many respawns
    singles = [make("full", respawn_every=2) for _ in range(3)]
    vobs, _ = venv.reset(seed=11)
    outs = [e.reset(seed=11 + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(1)
    for _ in range(130):
        for i, o in enumerate(outs):
            for k in o:
                np.testing.assert_array_equal(vobs[k][i], o[k])
        actions = rng.integers(0, 4, 3)
        vobs, vr, vterm, _, _ = venv.step(actions)
        outs = []
        for i, e in enumerate(singles):
            if e.unwrapped._done:
                outs.append(e.reset()[0])
                continue
            o, r, term, _, _ = e.step(int(actions[i]))
            assert (r, term) == (vr[i], vterm[i])
            outs.append(o)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"num_apples": 23}, ValueError, "num_apples=23 is not allowed"),
        ({"respawn_every": -1}, ValueError, "respawn_every=-1 is not allowed"),
        ({"explore_frames": 1}, ValueError, "explore_frames=1 is not allowed"),
        ({"final_reward": "10"}, TypeError, "final_reward='10' is not allowed"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(ENV, **kwargs)


def test_bad_actions_and_short_phases():
    env = make()
    env.reset(seed=0)
    for bad in (4, -1, 1.5):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env = make("full", explore_frames=2, distractor_frames=2, reward_frames=2, num_apples=0)
    core = env.unwrapped.core
    env.reset(seed=0)
    phases = [int(core.phase(core.t)[0])]
    for _ in range(3):
        _, _, term, *_ = env.step(N)
        phases.append(int(core.phase(core.t)[0]))
    assert term and core.T == 3 and phases == [0, 1, 2, 2]  # one observation per phase, and the end
