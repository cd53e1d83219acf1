"""ViZDoom-Two-Colors (MemUP; MIKASA-Base): the scenario built by membench, presets, the pillar's timing, the
reward sign, seeding, the variants with scripted memoryless policies and clear errors."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import membench_envs

pytest.importorskip("vizdoom", reason="extra [vizdoom] not installed")

from membench_envs.envs.backends import vizdoom_wad as wad
from membench_envs.envs.backends.vizdoom_two_colors import GREEN, MEDIKIT, RED, area_weights

PRESETS = {"MIKASA/ViZDoomTwoColors-v0": "base", "MIKASA/ViZDoomTwoColorsHard-v0": "hard"}
DELAY = "MIKASA/ViZDoomTwoColorsDelay1000-v0"
LEFT, RIGHT, FORWARD, LEFT_FORWARD, RIGHT_FORWARD = 0, 1, 2, 4, 6


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("MEMBENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "membench-cache"))


def make(env_id="MIKASA/ViZDoomTwoColors-v0", variant="partial", **kw):
    return gym.make(env_id, obs_variant=variant, **kw)


def test_presets_and_catalogue():
    for env_id, layout in PRESETS.items():
        spec = membench_envs.info(env_id)
        assert dict(spec.kwargs) == {"layout": layout} and spec.extra == "vizdoom"
        assert spec.memory_types == ("object",) and "MIKASA-Base" in spec.suites
        assert spec.episode_length == 1050  # 2100 tics at 2 tics per step
        assert spec.xi == (2, 1006) and spec.xi_paper == (2, 2055)
    delay = membench_envs.info(DELAY)
    assert dict(delay.kwargs) == {"layout": "delay", "pillar_tics": None, "living_reward": 0.0, "episode_timeout": 2300}
    assert delay.episode_length == 1150 and delay.xi == (1002, 1101) and delay.xi_paper is None


def test_the_scenario_is_built_here_deterministically(tmp_path, monkeypatch):
    data = wad.build_scenario("hard", 90)
    assert data == wad.build_scenario("hard", 90) and data != wad.build_scenario("base", 90)
    lumps = wad.read_lumps(data)
    assert [name for name, _ in lumps] == ["DECORATE", "MAP01", "TEXTMAP", "ENDMAP", "MAP02", "TEXTMAP", "ENDMAP"]
    names = {name for name, _ in lumps}
    assert not names & {"BEHAVIOR", "SCRIPTS", "ZNODES"}  # no ACS and no prebuilt nodes: ZDoom builds them
    text = dict(lumps)["TEXTMAP"].decode()
    assert 'namespace = "zdoom";' in text and "special = 83;" in text and text.count("linedef") == 8
    decorate = dict(lumps)["DECORATE"].decode()
    assert "COL1 A 89" in decorate and "Thing_Damage(0, -25, 0)" in decorate and "Thing_Damage(0, 25, 0)" in decorate
    assert 'A_GiveInventory("GreenArmor", 1)' in decorate and 'A_GiveInventory("BlueArmor", 1)' in decorate
    assert "Armor" not in wad.decorate(90, armour=False)  # the symmetric option: no armour worn
    assert "COL1 A -1" in wad.decorate(None)  # pillar_tics=None: the pillar stays
    assert wad.build_scenario("hard", 90, armour=False) != data
    monkeypatch.setenv("MEMBENCH_CACHE_DIR", str(tmp_path))
    path = wad.scenario_path("hard", 90)
    assert path.parent == tmp_path / "vizdoom" and path.read_bytes() == data
    mtime = path.stat().st_mtime_ns
    assert wad.scenario_path("hard", 90) == path and path.stat().st_mtime_ns == mtime  # written once
    assert wad.scenario_path("hard", 90, armour=False) != path  # its own file: the name carries the hash


def test_area_resize_weights_average_the_covered_pixels():
    w = area_weights(64, 180)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(area_weights(2, 4), [[0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5]])


@pytest.mark.parametrize("variant", ["partial", "oracle", "full"])
@pytest.mark.parametrize("env_id", [*PRESETS, DELAY])
def test_gymnasium_env_checker_and_spaces(env_id, variant):
    env = make(env_id, variant)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs["image"].shape == (64, 112, 3) and obs["image"].dtype == np.uint8
    assert env.action_space == gym.spaces.Discrete(8)
    keys = {"partial": set(), "oracle": {"oracle"}, "full": {"good_colour", "player", "pillar", "items", "time"}}
    # the acid's first bite is on tic 1; the delay layout starts in the cue room, without acid
    assert set(obs) == {"image", "health"} | keys[variant] and info["health"] == (100.0 if env_id == DELAY else 92.0)
    assert obs["health"].dtype == np.float32 and obs["health"].tolist() == [info["health"]]
    assert "shaping_reward" not in obs  # upstream's running item score: it tells the good colour without memory
    env.close()


def _trajectory(env_id, seed, steps=40):
    env = make(env_id, "full")
    obs, _ = env.reset(seed=seed)
    out = [(obs, 0.0)]
    for k in range(steps):
        obs, reward, *_ = env.step((k * 5) % 8)
        out.append((obs, reward))
    env.close()
    return out


def test_same_seed_same_trajectory_and_other_seeds_differ():
    a, b = _trajectory("MIKASA/ViZDoomTwoColorsHard-v0", 11), _trajectory("MIKASA/ViZDoomTwoColorsHard-v0", 11)
    for (oa, ra), (ob, rb) in zip(a, b, strict=True):
        assert ra == rb
        for key in oa:
            np.testing.assert_array_equal(oa[key], ob[key])
    env = make("MIKASA/ViZDoomTwoColors-v0", "full")
    firsts = [env.reset(seed=s)[0] for s in range(8)]
    assert {int(o["good_colour"]) for o in firsts} == {GREEN, RED}
    assert len({o["items"].tobytes() for o in firsts}) == 8  # the engine's item spots follow the seed
    assert all(o["items"][:, 0].sum() == 2 * wad.INITIAL_ITEMS for o in firsts)
    env.close()


def _bearing_action(player, target) -> int:
    x, y, angle, _ = player
    bearing = math.degrees(math.atan2(target[1] - y, target[0] - x))
    diff = (bearing - angle + 180.0) % 360.0 - 180.0
    if diff > 15:
        return LEFT_FORWARD if diff < 60 else LEFT
    if diff < -15:
        return RIGHT_FORWARD if diff > -60 else RIGHT
    return FORWARD


def seek(obs, colour) -> int:
    """A memoryless scripted policy: head for the nearest item of ``colour`` (positions from the full state)."""
    items = obs["items"][obs["items"][:, 0] > 0]
    mine = items[items[:, 3] == colour]
    if not len(mine):
        return LEFT
    x, y = obs["player"][:2]
    target = mine[np.argmin((mine[:, 1] - x) ** 2 + (mine[:, 2] - y) ** 2)]
    return _bearing_action(obs["player"], target[1:3])


def _lying(obs) -> set:
    return {(x, y, int(c)) for present, x, y, c in obs["items"] if present}


#: Health lost per bad item: upstream's items are armour (GreenArmor absorbs int(25 * 0.33335) = 8 of the 25
#: damage, BlueArmor, drawn red, int(25 * 0.5) = 12), measured on upstream's own WAD; armour=False: 25.
BAD_ITEM_COST = {True: {GREEN: 17.0, RED: 13.0}, False: {GREEN: 25.0, RED: 25.0}}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_reward_sign_follows_the_pillar_colour(seed):
    """Every item touched (seen vanishing from the engine's item list) gives +1 and 25 health if it has the
    pillar's colour, -1 and upstream's damage otherwise (17 for green, 13 for red); both happen here."""
    env = make("MIKASA/ViZDoomTwoColors-v0", "full")
    obs, info = env.reset(seed=seed)
    good = int(obs["good_colour"])
    signs = set()
    for colour in (1 - good, good, good):
        for _ in range(400):
            before, health = _lying(obs), info["health"]
            obs, reward, term, trunc, info = env.step(seek(obs, colour))
            if term or trunc:  # the item list is gone with the episode
                break
            taken = [c for _, _, c in before - _lying(obs)]
            n_good, n_bad = taken.count(good), taken.count(1 - good)
            assert (info["good_items"], info["bad_items"]) == (n_good, n_bad)
            assert reward == pytest.approx(n_good - n_bad + 0.02)  # + 2 tics of living reward
            if len(taken) == 1:
                change = info["health"] - health  # healing stops at 100; an acid bite (8) if one fell lands first
                if n_good:
                    expected = (min(25.0, 100 - health), min(25.0, 108 - health) - 8)
                else:
                    expected = (-BAD_ITEM_COST[True][1 - good], -BAD_ITEM_COST[True][1 - good] - 8)
                assert change in expected, (change, health)
                signs.add(n_good - n_bad)
            if colour in taken:
                break
    assert signs == {1, -1}
    env.close()


@pytest.mark.parametrize("armour", [True, False])
def test_health_lost_per_bad_item_is_upstreams_for_each_colour(armour):
    """One engine tic per step, so an acid bite (8 on tics 1, 33, 65, ...) is told apart: a bad green item costs 17
    health and a bad red one 13 by default (upstream's armour), 25 for both with armour=False."""
    costs: dict[int, set] = {GREEN: set(), RED: set()}
    env = make("MIKASA/ViZDoomTwoColors-v0", "full", frame_skip=1, armour=armour)
    for seed in range(4):  # green is good in some of these episodes, red in others
        obs, info = env.reset(seed=seed)
        bad = 1 - int(obs["good_colour"])
        for _ in range(600):
            health = info["health"]
            obs, _, term, trunc, info = env.step(seek(obs, bad))
            if term or trunc:
                break
            if info["bad_items"] == 1 and not info["good_items"]:
                bite = 8.0 if (env.unwrapped.game.get_episode_time() - 1) % 32 == 0 else 0.0
                costs[bad].add(health - info["health"] - bite)
    env.close()
    assert costs == {colour: {cost} for colour, cost in BAD_ITEM_COST[armour].items()}, costs


def test_health_reward_mode_pays_a_rise_and_ignores_bad_items():
    env = make("MIKASA/ViZDoomTwoColors-v0", "full", reward_mode="health")
    obs, info = env.reset(seed=5)
    for colour in (int(obs["good_colour"]), 1 - int(obs["good_colour"])):
        for _ in range(400):
            obs, reward, _term, _trunc, info = env.step(seek(obs, colour))
            if info["good_items"] or info["bad_items"]:
                break
        assert reward == pytest.approx((1.0 if info["good_items"] else 0.0) + 0.02)
    env.close()


def _pillar_pixels(image) -> int:
    """Pixels of the pillar's colours in the middle of the view (the base layout's pillar stands there)."""
    r, g, b = (image[8:56, 40:72, c].astype(int) for c in range(3))
    return int(((g > r + 40) & (g > b + 40) & (g > 90)).sum() + ((r > g + 60) & (r > b + 60) & (r > 90)).sum())


@pytest.mark.parametrize(
    ("env_id", "frame_skip", "last"),
    [
        ("MIKASA/ViZDoomTwoColorsHard-v0", 2, 44),
        ("MIKASA/ViZDoomTwoColors-v0", 2, 44),
        ("MIKASA/ViZDoomTwoColors-v0", 4, 22),
    ],
)
def test_the_pillar_is_taken_away_after_90_tics(env_id, frame_skip, last):
    """Observation k is tic 1 + k * frame_skip: the pillar stands in observation 44 and is gone in 45 (MemUP's
    frame skip 2; 22 / 23 at MIKASA-Base's 4). Engine state (the actor list) and, in front of the base start,
    the pixels."""
    env = make(env_id, "full", frame_skip=frame_skip)
    obs, _ = env.reset(seed=4)
    game = env.unwrapped.game

    def standing():
        return any(o.name.startswith("TwoColorsPillar") for o in game.get_state().objects)

    pixels = []
    for k in range(1, last + 2):
        obs, *_ = env.step(LEFT if k % 2 else RIGHT)  # turn back and forth: the view stays put
        assert obs["pillar"] == (k <= last) == standing(), k
        pixels.append(_pillar_pixels(obs["image"]))
    if env_id.endswith("TwoColors-v0"):
        assert pixels[-2] >= 20 and pixels[-1] < pixels[-2] / 4, pixels[-2:]
    kept = make(env_id, "full", frame_skip=frame_skip, pillar_tics=None)
    kept.reset(seed=4)
    for _ in range(last + 20):
        obs, *_ = kept.step(LEFT)
    assert obs["pillar"] == 1
    env.close()
    kept.close()


def test_acid_kills_and_the_timeout_truncates():
    env = make("MIKASA/ViZDoomTwoColorsHard-v0")
    env.reset(seed=0)
    steps, total = 0, 0.0
    while True:  # spin in place: no item is ever touched; 8 damage per 32 tics from 100 health
        _, reward, term, trunc, info = env.step(LEFT)
        steps, total = steps + 1, total + reward
        if term or trunc:
            break
    assert term and not trunc and info["success"] is False and info["health"] <= 0
    assert 185 <= steps <= 195 and total == pytest.approx(0.01 * 2 * steps, abs=0.03)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(LEFT)
    short = make("MIKASA/ViZDoomTwoColorsHard-v0", episode_timeout=101)
    short.reset(seed=0)
    for k in range(1, 52):  # observation k is tic 1 + 2k; the step past tic 101 ends it
        obs, _, term, trunc, info = short.step(LEFT)
        assert (term, trunc) == (False, k == 51), k
    assert info["success"] is True and not obs["image"].any()  # black after the end, as upstream
    env.close()
    short.close()


def _returns(variant, seeds, steps=300):
    """Mean return over ``steps`` steps of the seek policy, the colour taken from the oracle (oracle) or always
    green (partial: the pillar is gone and a memoryless policy cannot know it). Both navigate with the engine's
    item positions (the full observation); they differ only in where the colour comes from."""
    env = make("MIKASA/ViZDoomTwoColorsHard-v0", "full")
    totals = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        total = 0.0
        for _ in range(steps):
            colour = int(obs["good_colour"]) if variant == "oracle" else GREEN
            obs, reward, term, trunc, _ = env.step(seek(obs, colour))
            total += reward
            if term or trunc:
                break
        totals.append(total)
    env.close()
    return float(np.mean(totals)), totals


def test_memoryless_policies_oracle_beats_partial_in_the_hard_variant():
    seeds = range(8)
    oracle, o_all = _returns("oracle", seeds)
    partial, p_all = _returns("partial", seeds)
    print(
        f"hard variant, 300 steps, 8 seeds: oracle {oracle:.2f} {np.round(o_all, 2)}; "
        f"partial {partial:.2f} {np.round(p_all, 2)}"
    )
    assert oracle > partial + 3.0


def _walk(env, obs, kind, steps=300):
    """Seek the nearest item of ``kind`` until one is taken or the episode ends; the last step's outcome."""
    for _ in range(steps):
        obs, reward, term, trunc, info = env.step(seek(obs, kind))
        if term or trunc or info.get("medikits") or info.get("good_items"):
            return obs, reward, term, trunc, info
    raise AssertionError(f"no item of kind {kind} reached in {steps} steps")


@pytest.mark.parametrize("right_vest", [True, False])
def test_delay_layout_moves_the_player_and_scores_the_vest(right_vest):
    """Cue room for 100 tics (observations 0 ... 49), acid room with medikits (+0.1 each) for ``delay_tics``, then
    the choice room: the vest of the pillar's colour gives +5 and success, the other 0; both end the episode."""
    env = make(DELAY, "full", delay_tics=200, episode_timeout=600)
    obs, info = env.reset(seed=1 if right_vest else 2)
    good = int(obs["good_colour"])
    assert info["health"] == 100 and obs["pillar"] == 1 and (obs["items"][:, 3] == MEDIKIT).sum() == 20
    cue = tuple(obs["player"][:2])
    for k in range(1, 51):
        obs, reward, *_ = env.step(LEFT)
        assert reward == 0.0  # living reward 0 in this preset
        assert (tuple(obs["player"][:2]) == cue) == (k < 50), k  # observation 50 = tic 101: in the acid room
    assert tuple(obs["player"][:3]) == (-128.0, -128.0, 0.0)
    obs, reward, term, trunc, info = _walk(env, obs, MEDIKIT)
    assert info["medikits"] == 1 and reward == pytest.approx(0.1) and not term
    while env.unwrapped.game.get_episode_time() < 301:  # 100 + 200 tics, then the choice room
        obs, reward, term, trunc, info = env.step(LEFT)
    assert tuple(obs["player"][:2]) == (800.0, 0.0)
    obs, reward, term, trunc, info = _walk(env, obs, good if right_vest else 1 - good)
    assert reward == (5.0 if right_vest else 0.0) and info["good_items"] == int(right_vest)
    if not term:  # the engine ends the map on the tic after the touch, which may fall in the next step
        obs, reward, term, trunc, info = env.step(LEFT)
        assert reward == 0.0
    assert term and not trunc and info["success"] is right_vest
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"layout": "maze"}, ValueError, "layout='maze' is not allowed"),
        ({"delay_tics": -1}, ValueError, "delay_tics=-1 is not allowed"),
        ({"frame_skip": 0}, ValueError, "frame_skip=0 is not allowed"),
        ({"pillar_tics": 1}, ValueError, "pillar_tics=1 is not allowed"),
        ({"reward_mode": "shaping"}, ValueError, "reward_mode='shaping' is not allowed"),
        ({"episode_timeout": 2.5}, TypeError, "episode_timeout=2.5 is not allowed"),
        ({"screen_size": 84}, TypeError, "unknown kwarg 'screen_size'"),
    ],
)
def test_bad_kwargs_are_clear_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make("MIKASA/ViZDoomTwoColors-v0", **kwargs)


def test_bad_actions_unknown_preset_and_step_before_reset():
    env = make()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    for bad in (8, -1, 0.5, np.array([0, 1]), "2"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env.step(np.int64(2))
    env.step(np.array(3))
    env.close()
    with pytest.raises(gym.error.Error, match="ViZDoomTwoColorsMedium"):
        gym.make("MIKASA/ViZDoomTwoColorsMedium-v0")


def test_render_is_the_engine_screen():
    env = gym.make("MIKASA/ViZDoomTwoColors-v0", render_mode="rgb_array")
    obs, _ = env.reset(seed=2)
    frame = env.render()
    assert frame.shape == (180, 320, 3) and frame.dtype == np.uint8
    assert abs(frame.astype(float).mean() - obs["image"].astype(float).mean()) < 2  # the area average keeps it
    env.close()
