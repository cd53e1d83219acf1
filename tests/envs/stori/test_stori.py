"""STORI: each stochasticity type and mode does what it says, seeding, variants, config errors (short rollouts)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.stori import GAMES, parse_config
from membench_envs.stori.games import CROP_RADIUS
from membench_envs.stori.preprocess import Preprocess, area_weights
from membench_envs.stori.wrappers import crop

import membench_envs
from tests.envs.stori._helpers import RecordingALE, make

pytest.importorskip("ale_py", reason="extra [atari] not installed")

STORI_IDS = [s.id for s in membench_envs.all_tasks() if s.namespace == "STORI"]
PRESET_IDS = [s.id for s in membench_envs.all_tasks() if s.namespace == "STORI" and s.stochasticity is not None]


# --- type 5: crop, blackout, RAM ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,zeroed", [(1, np.s_[:, :80]), (2, np.s_[:, 80:]), (3, np.s_[:105]), (4, np.s_[105:])])
def test_crop_zeroes_exactly_its_half(mode, zeroed):
    frame = np.full((210, 160, 3), 7, dtype=np.uint8)
    crop(frame, mode, np.random.default_rng(0))
    expected = np.full_like(frame, 7)
    expected[zeroed] = 0
    np.testing.assert_array_equal(frame, expected)


def test_circular_mask_keeps_a_disc_of_radius_75_around_a_drawn_centre():
    for seed in range(5):
        frame = np.full((210, 160, 3), 9, dtype=np.uint8)
        crop(frame, 5, np.random.default_rng(seed))
        replay = np.random.default_rng(seed)
        cx, cy = int(replay.integers(160)), int(replay.integers(210))
        kept = np.array([[np.hypot(x - cx, y - cy) <= CROP_RADIUS for x in range(160)] for y in range(210)])
        np.testing.assert_array_equal(frame[..., 0] == 9, kept)
        assert (frame[~kept] == 0).all()


@pytest.mark.parametrize("game", list(GAMES))
def test_blackout_fills_exactly_its_regions_in_every_mode(game):
    g = GAMES[game]
    full = make(game, obs_variant="full")  # the true screen: a blackout changes pictures, never the game
    for mode, (_, fills) in g.blackout.items():
        masked = make(game, {"type": 5, "kind": "blackout", "mode": mode, "prob": 1.0})
        painted = np.full((210, 160, 3), -1, dtype=np.int16)  # the colour each pixel must have; -1: the true one
        for fill in fills:
            (x0, x1, y0, y1), colour = fill if len(fill) == 2 else (fill, g.blackout_colour)
            painted[y0 : y1 + 1, x0 : x1 + 1] = colour
        inside = painted[..., 0] >= 0
        assert inside.any() == (mode != 0)
        obs, _ = masked.reset(seed=mode)
        ref, _ = full.reset(seed=mode)
        for t in range(3):
            np.testing.assert_array_equal(obs[inside], painted[inside], err_msg=f"{game} mode {mode} step {t}")
            np.testing.assert_array_equal(obs[~inside], ref["image"][~inside])
            obs, *_ = masked.step(t % masked.action_space.n)
            ref = full.step(t % masked.action_space.n)[0]


def test_a_blackout_region_outside_the_screen_is_refused():
    import dataclasses

    bad = {**GAMES["Breakout"].blackout, 12: ("off screen", ((150, 160, 0, 10),))}
    with pytest.raises(
        ValueError,
        match=r"Breakout blackout mode 12: region \(150, 160, 0, 10\) is not inside the "
        r"160x210 screen",
    ):
        dataclasses.replace(GAMES["Breakout"], blackout=bad)


def _rollout_with_ale(env, actions, seed=0):
    """Steps ``env`` with ``actions``; returns the images, rewards and the emulator RAM after each step."""
    obs, _ = env.reset(seed=seed)
    images, rewards, rams = [obs["image"] if isinstance(obs, dict) else obs], [], []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        images.append(obs["image"] if isinstance(obs, dict) else obs)
        rewards.append(r)
        rams.append(env.unwrapped.ale.getRAM().copy())
        assert not (term or trunc)
    return images, rewards, rams


def test_ram_edit_hides_the_ball_and_leaves_the_trajectory_unchanged():
    actions = [1] + [0, 2, 3, 0] * 15  # serve, then move about
    hidden = _rollout_with_ale(make("Breakout", {"type": 5, "kind": "ram", "mode": 2, "prob": 1.0}), actions)
    plain = _rollout_with_ale(make("Breakout"), actions)
    assert hidden[1] == plain[1]
    for a, b in zip(hidden[2], plain[2], strict=True):  # the emulator runs the same trajectory
        np.testing.assert_array_equal(a, b)
    field = np.s_[96:188, 8:152]  # between the blocks and the paddle: only the ball is drawn there
    seen = [img for img in plain[0] if img[field].any()]
    assert len(seen) > 10, "the ball never crossed the field in the reference run"
    assert not any(img[field].any() for img in hidden[0]), "the ball is visible despite the RAM edit"


def test_boxing_ram_edit_hides_the_enemy_only_in_the_frame():
    actions = [0, 1, 2, 3] * 10
    hidden = _rollout_with_ale(make("Boxing", {"type": 5, "kind": "ram", "mode": 2, "prob": 1.0}), actions)
    plain = _rollout_with_ale(make("Boxing"), actions)
    assert hidden[1] == plain[1]
    for a, b in zip(hidden[2], plain[2], strict=True):
        np.testing.assert_array_equal(a, b)
    black = np.array([0, 0, 0])  # the enemy boxer is drawn in black
    ring = np.s_[37:176, 33:127]
    assert all((img[ring] == black).all(-1).any() for img in plain[0])
    assert not any((img[ring] == black).all(-1).any() for img in hidden[0])


# --- type 1 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("game,p", [("Breakout", 0.3), ("Boxing", 0.6)])
def test_type1_replaces_actions_at_rate_p(game, p):
    env = make(game, {"type": 1, "prob": p})
    env.reset(seed=1)
    recorder = env.unwrapped.ale = RecordingALE(env.unwrapped.ale)
    actions = env.unwrapped._actions
    wanted = []
    for t in range(1500):
        a = t % len(actions)
        wanted += [actions[a]] * 4
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:  # the game may end inside a step
            break
    changed = np.mean([x != y for x, y in zip(recorder.acted, wanted[: len(recorder.acted)], strict=True)])
    expected = p * (1 - 1 / len(actions))  # a uniform draw may give back the agent's own action
    assert abs(changed - expected) < 0.025, (changed, expected)


@pytest.mark.parametrize("through", [True, False])
def test_reset_noops_go_through_the_type1_effect_by_default(through):
    """The authors' DreamerV3 pipeline steps its no-op start through the wrapped ALE env: with p = 1 type 1 replaces
    the NOOPs too (3 of Breakout's 4 actions are not NOOP); noops_through_effect=False runs them on the bare
    emulator."""
    env = make("Breakout", {"type": 1, "prob": 1.0}, noops_through_effect=through)
    env.unwrapped.ale = recorder = RecordingALE(env.unwrapped.ale)
    noop = env.unwrapped._noop
    for seed in range(3):
        recorder.acted.clear()
        env.reset(seed=seed)
        assert len(recorder.acted) > 5  # this seed draws a no-op start
        replaced = np.mean([a != noop for a in recorder.acted])
        assert (replaced > 0.4) if through else (replaced == 0), (seed, replaced)


# --- type 2 ------------------------------------------------------------------------------------------------------
def _play(env, steps, seed=0):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(steps):
        _, r, term, trunc, _ = env.step(int(rng.integers(env.action_space.n)))
        total += r
        if term or trunc:
            break
    return total


def test_breakout_mode2_cancels_every_hit_and_zeroes_its_reward():
    default = make("Breakout")
    assert _play(default, 600) > 0  # this seed hits blocks
    for mode, pays in ((1, True), (2, False)):
        env = make("Breakout", {"type": 2, "mode": mode, "prob": 1.0})
        start = None
        env.reset(seed=0)
        start = env.unwrapped.ale.getRAM()[:36].copy()
        total = _play(env, 600)
        ram = env.unwrapped.ale.getRAM()
        assert ram[84] > 0, "no block was hit"  # ALE's score counts the hits
        np.testing.assert_array_equal(ram[:36], start)  # ... but every hit was cancelled
        assert (total > 0) == pays, (mode, total)


def test_breakout_mode3_regenerates_hit_blocks():
    env = make("Breakout", {"type": 2, "mode": 3, "prob": 1.0})
    env.reset(seed=0)
    start = env.unwrapped.ale.getRAM()[:36].copy()
    _play(env, 600)
    ram = env.unwrapped.ale.getRAM()
    assert ram[84] > 0
    np.testing.assert_array_equal(ram[:36], start)


def test_boxing_hit_cancel_pays_nothing_and_keeps_the_scores():
    env = make("Boxing", {"type": 2, "mode": 2, "prob": 1.0})
    rewards = []
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(1500):
        _, r, _term, _trunc, _ = env.step(int(rng.integers(18)))
        rewards.append(r)
    ram = env.unwrapped.ale.getRAM()
    assert ram[18] == ram[19] == 0
    assert all(r == 0 for r in rewards), sorted(set(rewards))
    assert _play(make("Boxing"), 1500) != 0  # the same play scores without the cancel


def test_boxing_colour_flip_swaps_the_colours_each_toggle():
    # p = 1: the flag toggles every frame, so every other frame is drawn with the colours swapped (the game rewrites
    # the colour bytes after drawing, so the swap shows on the screen, not in the RAM after the frame).
    runs = []
    for cfg in (None, {"type": 2, "mode": 1, "prob": 1.0}):  # no no-op start: they would toggle the flag too
        env = make("Boxing", cfg, frame_skip=1, max_pool=False, noop_max=0)
        env.reset(seed=0)
        runs.append([env.step(0)[0] for _ in range(6)])
    for t, (ref, flip) in enumerate(zip(*runs, strict=True)):
        ring = np.s_[37:176, 33:127]
        white, black = (ref[ring] == 214).all(-1), (ref[ring] == 0).all(-1)  # player white, enemy black
        assert white.any() and black.any()
        if t % 2 == 0:
            assert (flip[ring][white] == 0).all() and (flip[ring][black] == 214).all(), t
        else:
            np.testing.assert_array_equal(flip, ref)


def test_a_drift_into_type2_takes_the_episode_start_as_its_reference():
    """The authors' wrapper built at a drift's switch reads the RAM recorded when the environment was built (the full
    wall), not the RAM at the switch: blocks hit before the switch are regenerated after it (mode 3, p = 1)."""
    env = make(
        "Breakout",
        {"type": 3, "schedule": "sudden", "threshold": 150, "concept": {"type": 2, "mode": 3, "prob": 1.0}},
        noop_max=0,
    )
    env.reset(seed=0)
    wall = env.unwrapped.ale.getRAM()[:36].copy()
    rng = np.random.default_rng(1)
    for step in range(400):
        _, _, term, trunc, info = env.step(int(rng.integers(env.action_space.n)))
        if step == 148:  # the last step of the default game
            assert (env.unwrapped.ale.getRAM()[:36] != wall).any(), "no block was hit before the switch"
        if term or trunc:
            break
    assert step > 160 and info["concept"] == 2
    np.testing.assert_array_equal(env.unwrapped.ale.getRAM()[:36], wall)


# --- type 3 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("schedule,timing,first_on", [("sudden", "code", 4), ("sudden", "paper", 5)])
def test_sudden_drift_switches_at_the_configured_step_and_back_on_reset(schedule, timing, first_on):
    cfg = {"type": 3, "schedule": schedule, "threshold": 5, "timing": timing}
    env = make("Breakout", {**cfg, "concept": {"type": 5, "kind": "blackout", "mode": 1, "prob": 1.0}})
    for _ in range(2):  # the second pass checks that reset went back to the first concept
        obs, info = env.reset(seed=0)
        assert info["concept"] == 1
        for s in range(9):  # step s (0-based) runs under concept 2 from s = first_on
            obs, _, _, _, info = env.step(0)
            assert info["concept"] == (2 if s >= first_on else 1), (s, info)
            assert (obs[57:93, 8:152] == 0).all() == (s >= first_on), s  # blocks blacked out under concept 2


def test_cyclic_drift_alternates_every_threshold_steps():
    env = make(
        "Boxing",
        {
            "type": 3,
            "schedule": "cyclic",
            "threshold": 3,
            "concept": {"type": 5, "kind": "blackout", "mode": 4, "prob": 1.0},
        },
    )
    env.reset(seed=0)
    colour = np.array(GAMES["Boxing"].blackout_colour)
    for s in range(12):
        obs, _, _, _, info = env.step(0)
        on = (s // 3) % 2 == 1
        assert info["concept"] == (2 if on else 1)
        assert (obs[36:177, 32:128] == colour).all() == on, s


# --- seeding, variants, preprocessing ----------------------------------------------------------------------------
def _trajectory(env_id, seed, steps=40, **kwargs):
    env = gym.make(env_id, obs_variant="partial", **kwargs)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(123)
    out = [obs.tobytes()]
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(int(rng.integers(env.action_space.n)))
        out.append((obs.tobytes(), r))
        if term or trunc:
            out.append(env.reset()[0].tobytes())
    return out


@pytest.mark.parametrize("env_id", PRESET_IDS)
def test_same_seed_gives_identical_frames_and_rewards_whatever_the_global_rng(env_id):
    np.random.seed(0)
    a = _trajectory(env_id, 5)
    state = np.random.get_state()
    np.random.seed(99)
    import random

    random.seed(99)
    b = _trajectory(env_id, 5)
    assert a == b
    np.random.seed(0)
    _trajectory(env_id, 5)
    assert np.array_equal(np.random.get_state()[1], state[1])  # the env never draws from numpy's global RNG


@pytest.mark.parametrize("env_id", ["STORI/Breakout-Type1-v0", "STORI/Breakout-5C-v0", "STORI/Boxing-5B-v0"])
def test_different_seeds_give_different_stochastic_episodes(env_id):
    assert _trajectory(env_id, 1) != _trajectory(env_id, 2)


def test_check_env_on_the_generic_id_under_one_config_of_each_type():
    # gymnasium's check_env runs on every STORI ID in tests/envs/test_catalogue_and_registry.py (every preset in every
    # variant on Breakout); here the generic ID under one config of each type, in the oracle variant (the partial
    # picture and the labels: test_variants_share_the_trajectory_and_oracle_holds_the_labels).
    for cfg in (
        {"type": 1, "prob": 0.5},
        {"type": 2, "mode": 3, "prob": 0.5},
        {"type": 5, "kind": "ram", "mode": 3, "prob": 0.5},
        {"type": 3, "schedule": "cyclic", "threshold": 2, "concept": {"type": 1, "prob": 1.0}},
    ):
        check_env(make("Boxing", cfg, obs_variant="oracle").unwrapped, skip_render_check=True)


def test_reset_with_a_seed_replays_the_episode_whatever_came_before():
    env = gym.make("STORI/Breakout-Type1-v0")
    runs = []
    for history in (0, 37):
        env.reset(seed=history)
        for _ in range(history):
            env.step(1)
        obs, _ = env.reset(seed=11)
        run = [obs.tobytes()]
        for t in range(30):
            obs, r, *_ = env.step(t % 4)
            run.append((obs.tobytes(), r))
        runs.append(run)
    assert runs[0] == runs[1]


def test_variants_share_the_trajectory_and_oracle_holds_the_labels():
    envs = {v: gym.make("STORI/Boxing-5C-v0", obs_variant=v) for v in ("partial", "oracle", "full")}
    first = {v: e.reset(seed=4) for v, e in envs.items()}
    labels = np.array(list(GAMES["Boxing"].ram_labels.values()))
    for t in range(20):
        steps = {v: e.step(t % 18) for v, e in envs.items()}
        assert len({s[1] for s in steps.values()}) == 1
        ram = steps["full"][0]["ram"]
        np.testing.assert_array_equal(steps["oracle"][0]["oracle"], ram[labels].astype(np.float32))
        np.testing.assert_array_equal(steps["partial"][0], steps["oracle"][0]["image"])
    assert first["full"][0]["image"].shape == (210, 160, 3)


def test_preprocessing_grey_84_and_render_is_the_rgb_frame():
    env = gym.make("STORI/Breakout-5A-v0", grayscale=True, screen_size=84, render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (84, 84, 1) and obs.dtype == np.uint8 and env.observation_space.contains(obs)
    frame = env.render()
    assert frame.shape == (210, 160, 3)
    grey = np.rint(frame.astype(np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32))
    expected = np.rint(area_weights(210, 84) @ grey @ area_weights(160, 84).T)
    np.testing.assert_allclose(obs[..., 0], expected, atol=1)
    assert (frame[105:131, 8:152] == 0).all()  # render shows what the agent sees (5A: the top ball band blacked out)


def test_area_resize_averages_blocks_exactly():
    w = area_weights(10, 5)
    np.testing.assert_allclose(w.sum(1), 1.0)
    np.testing.assert_allclose(w[0], [0.5, 0.5] + [0] * 8)
    img = np.repeat(np.repeat(np.arange(4, dtype=np.uint8).reshape(2, 2) * 60, 8, 0), 8, 1)[..., None].repeat(3, -1)
    out = Preprocess(16, 16, False, 2)(img)
    np.testing.assert_array_equal(out[..., 0], [[0, 60], [120, 180]])


# --- bad configs -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "config,error,match",
    [
        ({"type": 7}, ValueError, r"type=7 is not allowed; valid types: 1, 2, 3, 4, 5"),
        ({"type": 0}, ValueError, r"type 0 .* obs_variant='full'"),
        (
            {"type": 2, "mode": 9, "prob": 0.1},
            ValueError,
            r"mode=9 is not allowed; Breakout type-2 modes are 0, 1, 2, 3",
        ),
        ({"type": 5, "kind": "blackout", "mode": 12, "prob": 1.0}, ValueError, r"mode=12 .* Breakout blackout modes"),
        ({"type": 5, "kind": "ram", "mode": 1, "prob": 1.0}, ValueError, r"mode=1 .* Breakout ram modes are 0, 2"),
        ({"type": 5, "kind": "fog", "mode": 1, "prob": 1.0}, ValueError, r"kind='fog' is not allowed"),
        ({"type": 1, "prob": 1.5}, ValueError, r"prob=1.5 is not allowed; prob must be a number in \[0, 1\]"),
        ({"type": 1, "prob": -0.1}, ValueError, r"prob=-0.1 is not allowed"),
        ({"type": 1, "prob": "0.3"}, TypeError, r"prob='0.3' is not allowed"),
        ({"type": 1, "p": 0.3}, ValueError, r"unknown key\(s\) \['p'\] for type 1; its keys are type, prob"),
        ({"type": 2, "prob": 0.3}, ValueError, r"type 2 needs the key\(s\) mode"),
        (
            {"type": 3, "schedule": "sudden", "threshold": 10, "concept": {"type": 3}},
            ValueError,
            r"1, 2 or 5, got type 3",
        ),
        (
            {"type": 3, "schedule": "sudden", "threshold": 10, "concept": {"type": 4}},
            ValueError,
            r"1, 2 or 5, got type 4",
        ),
        (
            {"type": 3, "schedule": "gradual", "threshold": 10, "concept": {"type": 4}},
            ValueError,
            r"schedule='gradual'",
        ),
        (
            {"type": 3, "schedule": "sudden", "threshold": 0, "concept": {"type": 1, "prob": 0.1}},
            ValueError,
            "threshold=0",
        ),
        ([1, 0.3], TypeError, r"config must be a dict"),
    ],
)
def test_bad_config_is_one_clear_error(config, error, match):
    with pytest.raises(error, match=match):
        make("Breakout", config)


def test_unknown_game_and_preset_with_config_are_clear_errors():
    with pytest.raises(
        ValueError,
        match=r"game='Pong' is not allowed; game must be one of 'Breakout', 'Boxing', "
        r"'Gopher', 'BankHeist'",
    ):
        gym.make("STORI/Breakout-v0", game="Pong")
    with pytest.raises(ValueError, match=r"unknown game 'Pong'; valid games: Breakout, Boxing, Gopher, BankHeist"):
        parse_config("Pong", {"type": 4})
    with pytest.raises(ValueError, match=r"fixes its config; pass config=\.\.\. to STORI/Breakout-v0"):
        gym.make("STORI/Breakout-Type1-v0", config={"type": 4})


def test_catalogue_filters_by_stochasticity_type():
    assert {s.id for s in membench_envs.catalogue.select(stochasticity=5)} == {
        *(f"STORI/{g}-{p}-v0" for g in ("Breakout", "Boxing") for p in ("5A", "5B", "5C")),
        "STORI/Gopher-5A-v0",
        "STORI/BankHeist-5A-v0",
    }
    assert [s.id for s in membench_envs.catalogue.select(stochasticity=3)] == [
        "STORI/Breakout-Type3-v0",
        "STORI/Boxing-Type3-v0",
        "STORI/Gopher-Type3-v0",
        "STORI/BankHeist-Type3-v0",
    ]
    with pytest.raises(ValueError, match="unknown stochasticity type 6"):
        membench_envs.catalogue.select(stochasticity=6)
    for game in GAMES:  # every preset's config is valid and typed as its ID says
        for preset, cfg in GAMES[game].presets.items():
            assert parse_config(game, cfg).type == membench_envs.info(f"STORI/{game}-{preset}-v0").stochasticity
