"""Ballet (HCAM; MIKASA-Base): presets, the dance timing, the instruction, rewards, the egocentric picture, the
variants with scripted memoryless policies, seeding, batched == single and clear errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.envs.native.ballet import CELL, CENTRE, COLOURS, DANCE_OFFSETS, HOMES, MOVES, SHAPES

import membench_envs

PRESETS = {  # ID: (num_dancers, dance_delay, easy_mode)
    "MIKASA/Ballet-v0": (2, 8, False),
    "MIKASA/BalletEasy-v0": (2, 16, False),
    "MIKASA/BalletMedium-v0": (4, 16, False),
    "MIKASA/BalletHard-v0": (8, 48, False),
    "MIKASA/BalletLightEasy-v0": (2, 16, True),
    "MIKASA/BalletLightMedium-v0": (4, 16, True),
    "MIKASA/BalletLightHard-v0": (8, 48, True),
}
N, E, S, W = 0, 2, 4, 6


def make(env_id="MIKASA/BalletEasy-v0", variant="partial", **kw):
    return gym.make(env_id, obs_variant=variant, **kw)


def tile(image, i, j):
    return image[i * CELL : (i + 1) * CELL, j * CELL : (j + 1) * CELL]


def agent_cell(image) -> np.ndarray:
    """The agent's room cell, read off the walls in the view's middle row and column (memoryless)."""
    centres = image[CELL // 2 :: CELL, CELL // 2 :: CELL]  # (11, 11, 3) cell centres
    wall = (centres == 40).all(axis=2)
    pos = []
    for line in (wall[:, CENTRE], wall[CENTRE, :]):
        k = int(np.flatnonzero(line)[0])
        pos.append(CENTRE - k if k < CENTRE else 15 - k)
    return np.array(pos)


def step_towards(image, home) -> int:
    d = np.sign(HOMES[home] - agent_cell(image))
    return int(np.flatnonzero((MOVES == d).all(axis=1))[0])


def test_presets_and_catalogue():
    for env_id, (n, delay, easy) in PRESETS.items():
        spec = membench_envs.info(env_id)
        assert dict(spec.kwargs) == {"num_dancers": n, "dance_delay": delay, "easy_mode": easy}
        assert spec.memory_types == ("sequential", "object") and "MIKASA-Base" in spec.suites
        assert spec.episode_length == (319 if delay == 16 else 1023)  # the authors' 320 / 1024 frames
        assert spec.xi == (delay, n * (15 + delay) - 15) and spec.obs_type == "dict"
        core = make(env_id).unwrapped.core
        assert (core.n, core.delay, core.easy_mode, core.T) == (n, delay, easy, spec.episode_length)
    assert membench_envs.info("MIKASA/BalletHard-v0").xi == (48, 489)


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
@pytest.mark.parametrize("env_id", list(PRESETS))
def test_gymnasium_env_checker_and_spaces(env_id, variant):
    env = make(env_id, variant)
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs["image"].shape == (99, 99, 3) and obs["image"].dtype == np.uint8
    assert env.action_space == gym.spaces.Discrete(8)
    keys = {"partial": set(), "oracle": {"oracle"}, "full": {"dances", "order", "target", "time"}}[variant]
    assert set(obs) == {"image", "instruction"} | keys


def test_dances_stay_in_their_square_and_end_at_home():
    assert np.abs(DANCE_OFFSETS).max() == 1 and not DANCE_OFFSETS[:, -1].any()
    assert (np.abs(np.diff(DANCE_OFFSETS, axis=1)).max(axis=2) == 1).all()  # every move moves
    assert len({d.tobytes() for d in DANCE_OFFSETS}) == 13
    assert SHAPES.shape == (15, 9, 9) and len({s.tobytes() for s in SHAPES}) == 15 and len(COLOURS) == 19


@pytest.mark.parametrize("env_id", ["MIKASA/BalletMedium-v0", "MIKASA/Ballet-v0"])
def test_dance_phase_timing_and_instruction(env_id):
    """Dancer k moves exactly in the observations k*P ... k*P+15 (P = 15 + delay); the agent cannot move and
    the instruction is 0 until the observation n*P, which shows the target's dance code."""
    n, delay, _ = PRESETS[env_id]
    period = 15 + delay
    env = make(env_id, "full")
    core = env.unwrapped.core
    obs, _ = env.reset(seed=3)
    target_code = obs["dances"][obs["target"]]
    homes = HOMES[core.home[0]]
    prev = homes.copy()
    for t in range(n * period + 1):
        if t:
            obs, reward, term, trunc, _ = env.step(t % 8)  # any action: ignored while they dance
            assert reward == 0 and not term and not trunc
        cells = core.dancer_cells(np.array([0]), np.array([t]))[0]
        moved = set(np.flatnonzero((cells != prev).any(axis=1)))
        dancing = {k for k in range(n) if k * period <= t <= k * period + 15}
        assert moved == dancing, t
        # the picture: each dancer's shape in its colour at its cell, in the agent-centred view
        for k, (r, c) in enumerate(cells):
            np.testing.assert_array_equal(tile(obs["image"], r, c), core.tiles[0, 3 + k])
        np.testing.assert_array_equal(tile(obs["image"], CENTRE, CENTRE), 255)  # the agent, never moved
        assert obs["instruction"] == (target_code if t >= n * period else 0), t
        prev = cells
    assert (cells == homes).all()
    obs, *_ = env.step(N)  # the first action on the instruction moves the agent: the view scrolls
    assert (agent_cell(obs["image"]) == (CENTRE - 1, CENTRE)).all()


def _wait(env, steps):
    for _ in range(steps):
        obs, *_ = env.step(0)
    return obs


def test_the_target_rewards_one_a_wrong_dancer_ends_with_zero_and_waiting_truncates():
    env = make("MIKASA/BalletEasy-v0", "full")
    outcomes = set()
    for seed in range(6):
        for pick_target in (True, False):
            obs, _ = env.reset(seed=seed)
            wrong = [h for h in np.flatnonzero(obs["order"]) if h != obs["target"]]
            home = obs["target"] if pick_target else wrong[0]
            obs = _wait(env, 2 * 31)
            for _ in range(4):
                obs, reward, term, trunc, info = env.step(step_towards(obs["image"], home))
                if term:
                    break
            assert term and not trunc and reward == float(pick_target) and info["success"] == pick_target
            outcomes.add(pick_target)
    assert outcomes == {True, False}
    env.reset(seed=0)
    _wait(env, 318)
    _, reward, term, trunc, info = env.step(0)  # 319th step: N from the centre is floor
    assert trunc and not term and reward == 0 and info["success"] is False


def test_walls_block_and_the_view_follows_the_agent():
    env = make("MIKASA/Ballet-v0", max_steps=200)
    obs, _ = env.reset(seed=1)
    core = env.unwrapped.core
    obs = _wait(env, 2 * 23)
    assert obs["instruction"] > 0
    for cell in [(4, 5), (5, 5)]:  # back and forth (no dancer stands next to the centre)
        obs, *_ = env.step(int(np.flatnonzero((MOVES == np.subtract(cell, core.agent[0])).all(axis=1))[0]))
        assert tuple(agent_cell(obs["image"])) == cell
    core.agent[0] = (1, 1)  # a corner: N, NW and W are walls
    for action in (0, 7, 6):
        obs, *_ = env.step(action)
        assert tuple(core.agent[0]) == (1, 1) and tuple(agent_cell(obs["image"])) == (1, 1)
        assert (obs["image"][: 3 * CELL, : 3 * CELL] == 0).all()  # beyond the room: black


def test_easy_mode_is_red_on_the_first_homes_and_shapes():
    env = make("MIKASA/BalletLightMedium-v0")
    homes, shapes = set(), set()
    for seed in range(20):
        env.reset(seed=seed)
        core = env.unwrapped.core
        dancers = core.tiles[0, 3:]
        assert ((dancers == 0) | (dancers == (255, 0, 0))).all(axis=-1).all()
        homes |= set(core.home[0].tolist())
        shapes |= {int(np.flatnonzero((SHAPES == (d.sum(-1) > 0)).all(axis=(1, 2)))[0]) for d in dancers}
    assert homes == {0, 1, 2, 3} and shapes == {0, 1, 2, 3}
    env = make("MIKASA/BalletMedium-v0")
    colours = set()
    for seed in range(10):
        env.reset(seed=seed)
        colours |= {tuple(c) for d in env.unwrapped.core.tiles[0, 3:] for c in d.reshape(-1, 3) if c.any()}
    assert len(colours) > 8


def _oracle_home(obs):
    hits = np.flatnonzero(obs["oracle"] == obs["instruction"])
    return int(hits[0])


def _first_visible_home(obs):
    """A memoryless guess from the picture alone: the first home cell (in the authors' order) with a dancer."""
    agent = agent_cell(obs["image"])
    for h, cell in enumerate(HOMES):
        i, j = cell - agent + CENTRE
        if 0 <= i < 11 and 0 <= j < 11 and tile(obs["image"], i, j).any() and not (i == j == CENTRE):
            return h
    raise AssertionError("no dancer in view")


POLICIES = {"partial": _first_visible_home, "oracle": _oracle_home, "full": lambda obs: int(obs["target"])}


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
def test_memoryless_policies_climb_the_ladder(variant):
    """With the oracle (the dances seen, per home) or the full state a memoryless policy always finds the target;
    from the picture and the instruction alone it is at chance, 1 / num_dancers."""
    n, episodes = 4, 48
    venv = gym.make_vec("MIKASA/BalletMedium-v0", num_envs=episodes, obs_variant=variant)
    obs, _ = venv.reset(seed=100)
    for _ in range(n * 31):
        obs, *_ = venv.step(np.zeros(episodes, dtype=np.int64))
    assert (obs["instruction"] > 0).all()
    homes = [POLICIES[variant]({k: v[i] for k, v in obs.items()}) for i in range(episodes)]
    done, rewards = np.zeros(episodes, dtype=bool), np.zeros(episodes)
    for _ in range(4):  # every home is 3 moves away
        actions = [step_towards(obs["image"][i], homes[i]) if not done[i] else 0 for i in range(episodes)]
        obs, reward, term, _trunc, _ = venv.step(np.array(actions))
        rewards += np.where(done, 0, reward)
        done |= term
    assert done.all()
    rate = rewards.mean()
    if variant == "partial":
        assert 0.1 <= rate <= 0.45, rate  # chance: 0.25
    else:
        assert rate == 1.0


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_same_seed_same_episode_and_batched_equals_single():
    env = make("MIKASA/BalletLightHard-v0", "full")
    firsts = {env.reset(seed=s)[0]["dances"].tobytes() for s in range(8)}
    assert len(firsts) > 1
    venv = gym.make_vec("MIKASA/Ballet-v0", num_envs=3, obs_variant="oracle")
    singles = [make("MIKASA/Ballet-v0", "oracle") for _ in range(3)]
    vobs, vinfo = venv.reset(seed=9)
    outs = [e.reset(seed=9 + i) for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(250):
        for i, (o, info) in enumerate(outs):
            _same({k: v[i] for k, v in vobs.items()}, o)
            np.testing.assert_array_equal(vinfo["oracle"][i], info["oracle"])
        actions = rng.integers(0, 8, 3)
        vobs, vr, vterm, vtrunc, vinfo = venv.step(actions)
        outs = []
        for i, e in enumerate(singles):
            if e.unwrapped._done:  # the vector env resets it on this step (NEXT_STEP autoreset)
                o, info = e.reset()
            else:
                o, r, term, trunc, info = e.step(int(actions[i]))
                assert (r, term, trunc) == (vr[i], vterm[i], vtrunc[i])
                ends += term or trunc
            outs.append((o, info))
    assert ends > 0


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"num_dancers": 9}, ValueError, "num_dancers=9 is not allowed"),
        ({"num_dancers": 0}, ValueError, "num_dancers=0 is not allowed"),
        ({"dance_delay": 0}, ValueError, "dance_delay=0 is not allowed"),
        ({"easy_mode": "yes"}, TypeError, "easy_mode='yes' is not allowed"),
        ({"max_steps": 2.5}, TypeError, "max_steps=2.5 is not allowed"),
        ({"num_dancers": 8, "dance_delay": 16, "max_steps": 249}, ValueError, r"max_steps must be > 249"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make("MIKASA/Ballet-v0", **kwargs)


def test_bad_actions_and_step_before_reset():
    env = make()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    for bad in (8, -1, 0.5, np.array([0, 1])):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    make(num_dancers=8, dance_delay=16, max_steps=250).reset(seed=0)  # the tightest limit that leaves a step


def test_render_shows_the_view_and_the_instruction():
    env = gym.make("MIKASA/BalletEasy-v0", render_mode="rgb_array")
    obs, _ = env.reset(seed=2)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[0] % 16 == 0
    np.testing.assert_array_equal(frame[8 : 8 + 297 : 3, 8 : 8 + 297 : 3], obs["image"])
    text = gym.make("MIKASA/BalletEasy-v0", render_mode="ansi")
    text.reset(seed=2)
    assert "instruction: watch" in text.render() and "#" in text.render()
