"""STORI's repository-only games, Gopher and BankHeist: each type-2 event and type-5 RAM edit does what it says,
type 1 on BankHeist draws from its first 10 actions, the presets, config errors (short rollouts). The blackout
modes of every game are checked in test_stori.py; seeding of every preset there and check_env on every ID and
variant in tests/envs/test_catalogue_and_registry.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from membench_envs.stori import GAMES, parse_config
from membench_envs.stori.games import ClearBits, Lookup, Replace, edit_writes

import membench_envs
from tests.envs.stori._helpers import RecordingALE, make

pytest.importorskip("ale_py", reason="extra [atari] not installed")

NEW_IDS = [s.id for s in membench_envs.all_tasks() if s.id.startswith(("STORI/Gopher", "STORI/BankHeist"))]
UNDERGROUND = slice(0, 24)
CARROT_BOXES = {2: np.s_[146:161, 60:68], 1: np.s_[146:161, 76:84], 0: np.s_[146:161, 92:100]}  # by carrot bit
CARROT_COLOURS = ((50, 132, 50), (180, 122, 48), (181, 83, 40))  # leaves and root
MAZE = np.s_[45:173, 16:144]  # BankHeist: inside the city walls


def count_colours(image: np.ndarray, colours) -> int:
    return int(sum((image == np.array(c)).all(-1).sum() for c in colours))


def _lockstep(envs, actions, seed=0):
    """Resets every env with ``seed`` and steps all with ``actions``; per env: images, rewards, RAM after each step."""
    out = []
    for env in envs:
        obs, _ = env.reset(seed=seed)
        images, rewards, rams = [obs], [], [env.unwrapped.ale.getRAM().copy()]
        for a in actions:
            obs, r, term, trunc, _ = env.step(a)
            assert not (term or trunc)
            images.append(obs)
            rewards.append(r)
            rams.append(env.unwrapped.ale.getRAM().copy())
        out.append((images, rewards, rams))
    return out


# --- presets and catalogue ---------------------------------------------------------------------------------------
def test_the_presets_are_the_authors_experiment_configs():
    assert NEW_IDS == [
        f"STORI/{g}-{p}v0"
        for g in ("Gopher", "BankHeist")
        for p in ("Type1-", "Type2-", "Type3-", "Default-", "5A-", "")
    ]
    assert GAMES["Gopher"].presets["Type2"] == {"type": 2, "mode": 2, "prob": 0.3}
    assert GAMES["Gopher"].presets["Type3"]["schedule"] == "cyclic" == GAMES["BankHeist"].presets["Type3"]["schedule"]
    assert GAMES["BankHeist"].presets["5A"] == {"type": 5, "kind": "ram", "mode": 3, "prob": 0.75}
    for game in ("Gopher", "BankHeist"):
        assert "not in the paper" in GAMES[game].notes.lower()


def test_gopher_type3_alternates_the_default_game_and_5A():
    cfg = GAMES["Gopher"].presets["Type3"]
    assert cfg["threshold"] == 600 and cfg["concept"] == GAMES["Gopher"].presets["5A"]
    env = gym.make("STORI/Gopher-Type3-v0")
    env.unwrapped.config = parse_config("Gopher", {**cfg, "threshold": 3})  # the same drift, shorter cycles
    env.reset(seed=0)
    for s in range(9):
        obs, _, _, _, info = env.step(0)
        on = (s // 3) % 2 == 1
        assert info["concept"] == (2 if on else 1)
        assert (obs[164:201] == (187, 159, 71)).all() == on, s


@pytest.mark.parametrize("game", ["Gopher", "BankHeist"])
def test_check_env_under_one_config_of_each_type(game):
    for cfg in (
        {"type": 1, "prob": 0.5},
        {"type": 2, "mode": 3, "prob": 0.5},
        {"type": 5, "kind": "ram", "mode": 4, "prob": 0.5},
        {"type": 3, "schedule": "cyclic", "threshold": 2, "concept": {"type": 2, "mode": 1, "prob": 1.0}},
    ):
        check_env(make(game, cfg, obs_variant="oracle").unwrapped, skip_render_check=True)  # (as in test_stori.py)


@pytest.mark.parametrize("env_id", ["STORI/Gopher-Type1-v0", "STORI/BankHeist-Type1-v0", "STORI/Gopher-5A-v0"])
def test_same_seed_same_episode_different_seed_different_episode(env_id):
    def run(seed):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(3)
        out = [obs.tobytes()]
        for _ in range(60):
            obs, r, *_ = env.step(int(rng.integers(env.action_space.n)))
            out.append((obs.tobytes(), r))
        return out

    assert run(4) == run(4)
    assert run(4) != run(5)


# --- type 1 ------------------------------------------------------------------------------------------------------


def test_bankheist_type1_draws_from_the_moves_and_fire_only():
    env = make("BankHeist", {"type": 1, "prob": 1.0})
    env.reset(seed=0)
    recorder = env.unwrapped.ale = RecordingALE(env.unwrapped.ale)
    first_ten = env.unwrapped._actions[:10]
    for _ in range(200):
        _, _, term, trunc, _ = env.step(17)  # DOWNLEFTFIRE, never executed at p = 1
        if term or trunc:
            break
    assert set(recorder.acted) == set(first_ten)
    gopher = make("Gopher", {"type": 1, "prob": 1.0})
    gopher.reset(seed=0)
    recorder = gopher.unwrapped.ale = RecordingALE(gopher.unwrapped.ale)
    for _ in range(100):
        gopher.step(0)
    assert set(recorder.acted) == set(gopher.unwrapped._actions)  # Gopher draws from all 8


# --- Gopher type 2 -----------------------------------------------------------------------------------------------
def _gopher_frames(config, frames=6000, seed=0):
    """Frame by frame (frame_skip=1), random actions held 6 frames, episodes one after the other; per frame: the
    reward and whether underground bits went from dug to earth."""
    env = make("Gopher", config, frame_skip=1, max_pool=False, noop_max=0)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    a, out = 0, []
    for f in range(frames):
        if f % 6 == 0:
            a = int(rng.integers(env.action_space.n))
        before = env.unwrapped.ale.getRAM()[UNDERGROUND].copy()
        _, r, term, trunc, _ = env.step(a)
        out.append((r, bool((before & ~env.unwrapped.ale.getRAM()[UNDERGROUND]).any())))
        if term or trunc:
            env.reset()
    return out


def test_gopher_hole_fill_cancel_keeps_the_holes_open():
    plain = _gopher_frames(None)
    fills = [r for r, cleared in plain if cleared and r > 0]
    assert len(fills) >= 10 and set(fills) == {20}  # a fill pays 20
    assert sum(r == 20 for r, _ in plain) == len(fills)  # and nothing else pays 20
    for mode in (1, 2):
        run = _gopher_frames({"type": 2, "mode": mode, "prob": 1.0})
        assert not any(cleared and r > 0 for r, cleared in run), mode  # no fill survives its frame
        paid = sum(r == 20 for r, _ in run)
        assert (paid >= 10) if mode == 1 else (paid == 0), (mode, paid)  # mode 1 keeps the reward, mode 2 not


def test_gopher_hole_fill_cancel_happens_with_probability_p():
    # Mode 1 keeps the fill's 20 points, so every fill shows as a 20-point frame; a cancelled one leaves the
    # underground as it was.
    run = _gopher_frames({"type": 2, "mode": 1, "prob": 0.5}, frames=16000)
    cancelled = [not cleared for r, cleared in run if r == 20]
    assert len(cancelled) >= 40, len(cancelled)
    assert abs(np.mean(cancelled) - 0.5) < 0.2, (np.mean(cancelled), len(cancelled))


def test_gopher_carrot_dies_once_after_the_opening():
    chosen = set()
    for seed in range(6):
        env = make("Gopher", {"type": 2, "mode": 3, "prob": 1.0}, frame_skip=1, max_pool=False, noop_max=0)
        env.reset(seed=seed)
        carrots = []
        for _ in range(400):
            env.step(0)
            carrots.append(int(env.unwrapped.ale.getRAM()[52]))
        frame = env.unwrapped.ale.getEpisodeFrameNumber()
        first = carrots.index(next(c for c in carrots if c != 7))
        assert frame - 400 + first + 1 == 238, first  # from the 238th frame of the episode on, at p = 1
        assert set(carrots[first:]) == {carrots[first]} and bin(carrots[first]).count("1") == 2  # once only
        chosen.add(carrots[first])
    assert chosen == {3, 5, 6}  # each of the three carrots can be the one


def test_gopher_carrot_event_waits_for_its_draw():
    delays = []
    for seed in range(12):
        env = make("Gopher", {"type": 2, "mode": 3, "prob": 0.05}, frame_skip=1, max_pool=False, noop_max=0)
        env.reset(seed=seed)
        for f in range(1, 600):
            env.step(0)
            if env.unwrapped.ale.getRAM()[52] != 7:
                delays.append(f - 238)
                break
    assert len(delays) >= 10 and min(delays) >= 0
    assert 8 < np.mean(delays) < 40, delays  # geometric with p = 0.05: mean 19


# --- BankHeist type 2 --------------------------------------------------------------------------------------------
def _bankheist_run(config, frames, seed=1):
    """Frame by frame: random moves and FIRE (the first 10 actions), each held 16 frames; the RAM after each frame
    (and at the start) and the rewards."""
    env = make("BankHeist", config, frame_skip=1, max_pool=False, noop_max=0)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    a, rams, rewards = 0, [env.unwrapped.ale.getRAM().copy()], []
    for f in range(frames):
        if f % 16 == 0:
            a = int(rng.integers(10))
        _, r, term, trunc, _ = env.step(a)
        rams.append(env.unwrapped.ale.getRAM().copy())
        rewards.append(r)
        if term or trunc:
            break
    return np.array(rams), np.array(rewards)


def test_bankheist_dud_bomb_never_lets_dynamite_lie():
    plain, _ = _bankheist_run(None, 3000)
    assert (plain[:, 12] != 0).sum() > 100  # the same play drops dynamite
    dud, _ = _bankheist_run({"type": 2, "mode": 1, "prob": 1.0}, 3000)
    assert (dud[:, 12] == 0).all()


class _FakeALE:
    """The RAM of an emulator whose game writes what the test says (the wrapper reads and writes only the RAM)."""

    def __init__(self):
        self.ram = np.zeros(128, dtype=np.uint8)

    def getRAM(self):  # ALE's name
        return self.ram.copy()

    def setRAM(self, index, value):
        self.ram[index] = value


def test_bankheist_dud_bomb_compares_with_the_byte_read_before_the_write_back():
    """The authors' rule: the previous dynamite value is the one read after the last frame, before any write-back.
    A drop (0 -> 12) is undone (p = 1); the game dropping it again on the next frame (12 once more) is no change
    from what the wrapper last read, so it is let through; a timer step (12 -> 20) is undone to 12."""
    from membench_envs.stori.config import Concept
    from membench_envs.stori.wrappers import BankHeistEvents

    ale = _FakeALE()
    dud = BankHeistEvents(Concept(type=2, prob=1.0, mode=1), GAMES["BankHeist"], 10)
    dud.start(ale, np.random.default_rng(0), ale.getRAM())
    kept = []
    for written in (12, 12, 20):  # what the game writes to the dynamite byte on each frame
        dud.before(ale)
        ale.ram[12] = written
        dud.after(ale, 0.0)
        kept.append(int(ale.ram[12]))
    assert kept == [0, 12, 12]


def test_reset_noops_go_through_the_type2_effect_by_default():
    """BankHeist's city switch (p = 1) acts on every no-op frame of the reset, as in the authors' DreamerV3
    pipeline; with noops_through_effect=False the reset leaves the first city."""
    for through in (True, False):
        env = make("BankHeist", {"type": 2, "mode": 3, "prob": 1.0}, noops_through_effect=through)
        cities = {int(env.reset(seed=seed)[1]["oracle"][0]) % 4 for seed in range(4)}
        assert (cities != {0}) if through else (cities == {0}), (through, cities)


def test_bankheist_fuel_leaks_once_per_city():
    env = make("BankHeist", {"type": 2, "mode": 2, "prob": 1.0}, frame_skip=1, noop_max=0)
    env.reset(seed=0)
    ale = env.unwrapped.ale
    assert ale.getRAM()[86] == 0  # a full tank
    env.step(0)
    assert ale.getRAM()[86] == 12  # the first frame leaked half the tank
    ale.setRAM(86, 0)
    for _ in range(20):
        env.step(0)
    assert ale.getRAM()[86] < 12  # not again in this city
    ale.setRAM(0, 1)  # the next city
    env.step(0)
    assert ale.getRAM()[86] == 12
    ale.setRAM(86, 20)  # an emptier tank than half does not fill up
    ale.setRAM(0, 2)
    env.step(0)
    assert ale.getRAM()[86] == 20


def test_bankheist_city_switch_changes_the_maze_at_rate_p_and_keeps_the_rounds():
    rams, _ = _bankheist_run({"type": 2, "mode": 3, "prob": 0.1}, 3000)
    cities = rams[:, 0]
    switches = np.flatnonzero(cities[1:] % 4 != cities[:-1] % 4)
    assert abs(len(switches) / (len(cities) - 1) - 0.1) < 0.025, len(switches)
    assert (cities // 4 == cities[0] // 4).all()
    assert len({(int(cities[i]), int(cities[i + 1])) for i in switches}) == 12  # every other city is drawn
    env = make("BankHeist", {"type": 2, "mode": 3, "prob": 1.0}, frame_skip=1, max_pool=False, noop_max=0)
    env.reset(seed=0)
    for _ in range(30):  # the maze is drawn
        env.step(0)
    env.unwrapped.ale.setRAM(0, 9)  # round 2, city 1
    obs = [env.step(0)[0][MAZE] for _ in range(3)]
    assert env.unwrapped.ale.getRAM()[0] // 4 == 2
    assert (obs[1] != obs[0]).any() and (obs[2] != obs[1]).any()  # another maze each frame


def test_bankheist_empty_bank_pays_nothing_and_changes_nothing_else():
    plain_rams, plain_rewards = _bankheist_run(None, 6000)
    rams, rewards = _bankheist_run({"type": 2, "mode": 4, "prob": 1.0}, 6000)
    np.testing.assert_array_equal(rams, plain_rams)  # the emulator runs the same trajectory
    robbed = [(rams[f, 24:27] == 253) & (rams[f + 1, 24:27] != 253) for f in range(len(rewards))]
    robberies = np.flatnonzero([r.any() for r in robbed])
    assert len(robberies) >= 2 and (plain_rewards[robberies] > 0).all()
    assert (rewards[robberies] == 0).all()
    others = np.setdiff1d(np.arange(len(rewards)), robberies)
    np.testing.assert_array_equal(rewards[others], plain_rewards[others])


# --- type 5 RAM edits --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["Gopher", "BankHeist"])
def test_every_ram_edit_leaves_the_trajectory_unchanged(game):
    actions = [int(a) for a in np.random.default_rng(0).integers(0, 8, 40)]
    plain = _lockstep([make(game)], actions)[0]
    for mode in GAMES[game].ram_edits:
        edited = _lockstep([make(game, {"type": 5, "kind": "ram", "mode": mode, "prob": 1.0})], actions)[0]
        assert edited[1] == plain[1], mode
        for a, b in zip(edited[2], plain[2], strict=True):
            np.testing.assert_array_equal(a, b)


def test_gopher_ram_edits_hide_their_carrots():
    actions = [0] * 20
    plain = _lockstep([make("Gopher", noop_max=0)], actions)[0][0]
    assert all(count_colours(img[box], CARROT_COLOURS) > 20 for img in plain[1:] for box in CARROT_BOXES.values())
    for mode, hidden in ((1, {2}), (2, {1}), (3, {0}), (4, {0, 1, 2})):
        images = _lockstep(
            [make("Gopher", {"type": 5, "kind": "ram", "mode": mode, "prob": 1.0}, noop_max=0)], actions
        )[0][0]
        for img in images[1:]:
            for bit, box in CARROT_BOXES.items():
                assert (count_colours(img[box], CARROT_COLOURS) == 0) == (bit in hidden), (mode, bit)


def test_gopher_seed_edit_leaves_the_frame_alone_without_a_seed():
    actions = [0, 1, 2, 3] * 5
    plain, edited = _lockstep(
        [make("Gopher"), make("Gopher", {"type": 5, "kind": "ram", "mode": 5, "prob": 1.0})], actions
    )
    assert all(ram[92] == 128 for ram in plain[2])  # no seed in the air
    for a, b in zip(plain[0], edited[0], strict=True):
        np.testing.assert_array_equal(a, b)


def test_bankheist_ram_edits_hide_what_they_say():
    actions = [3] * 10 + [5] * 10
    plain = _lockstep([make("BankHeist", noop_max=0)], actions)[0][0]
    car, bank, wall = (162, 98, 33), (142, 142, 142), (162, 162, 42)

    def run(mode):
        cfg = {"type": 5, "kind": "ram", "mode": mode, "prob": 1.0}
        return _lockstep([make("BankHeist", cfg, noop_max=0)], actions)[0][0]

    assert all(count_colours(img[MAZE], [car]) > 10 and count_colours(img[MAZE], [bank]) > 50 for img in plain[1:])
    assert all(count_colours(img[MAZE], [car]) == 0 for img in run(1)[1:])
    walls = [count_colours(img[MAZE], [wall]) for img in run(3)[1:]]
    assert max(walls) < 0.3 * min(count_colours(img[MAZE], [wall]) for img in plain[1:])
    for img in run(4)[1:]:  # blocks, walls and background in one colour
        _colours, counts = np.unique(img[MAZE].reshape(-1, 3), axis=0, return_counts=True)
        assert counts.max() > 0.97 * counts.sum()
    assert all(count_colours(img[MAZE], [bank]) == 0 for img in run(5)[1:])
    for a, b in zip(plain, run(6), strict=True):  # no police car yet: nothing to hide, the frame is the true one
        np.testing.assert_array_equal(a, b)


def test_bankheist_fuel_edit_shows_a_full_tank():
    gauge = np.s_[11:37, 12:74]
    envs = [make("BankHeist", cfg, noop_max=0) for cfg in (None, {"type": 5, "kind": "ram", "mode": 2, "prob": 1.0})]
    full = []
    for env in envs:
        env.reset(seed=0)
        for _ in range(10):  # the game draws its panel
            obs = env.step(0)[0]
        assert env.unwrapped.ale.getRAM()[86] == 0 and obs[gauge].any()
        full.append(obs[gauge])
        env.unwrapped.ale.setRAM(86, 20)  # most of the tank used
    plain, edited = (env.step(0)[0][gauge] for env in envs)
    assert (plain != full[0]).any()
    np.testing.assert_array_equal(edited, full[0])  # the plain game's full gauge


def test_ram_edit_writes():
    ram = np.zeros(128, dtype=np.uint8)
    ram[[24, 25, 26, 52, 0]] = [253, 254, 253, 0b101, 6]
    assert edit_writes({52: ClearBits(0b100)}, ram) == [(52, 0b001)]
    assert edit_writes({52: ClearBits(0b010)}, ram) == [(52, 0b101)]  # already hidden: unchanged
    assert edit_writes({69: Lookup(0, (30, 190, 46, 126))}, ram) == [(69, 46)]
    bank = {a: Replace(255, old=253) for a in (24, 25, 26)}
    assert edit_writes(bank, ram) == [(24, 255), (26, 255)]
    ram[[24, 26]] = 255
    assert edit_writes(bank, ram) is None  # nothing to hide
    ram[92] = 128
    assert edit_writes({92: Replace(128)}, ram) is None
    ram[92] = 40
    assert edit_writes({92: Replace(128)}, ram) == [(92, 128)]


# --- bad configs -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "game,config,match",
    [
        ("Gopher", {"type": 2, "mode": 4, "prob": 0.1}, r"mode=4 is not allowed; Gopher type-2 modes are 0, 1, 2, 3$"),
        (
            "Gopher",
            {"type": 5, "kind": "blackout", "mode": 19, "prob": 1.0},
            r"Gopher blackout modes are 0, 1, .*, 18$",
        ),
        ("Gopher", {"type": 5, "kind": "ram", "mode": 6, "prob": 1.0}, r"Gopher ram modes are 0, 1, 2, 3, 4, 5$"),
        ("BankHeist", {"type": 2, "mode": 5, "prob": 0.1}, r"BankHeist type-2 modes are 0, 1, 2, 3, 4$"),
        (
            "BankHeist",
            {"type": 5, "kind": "blackout", "mode": 11, "prob": 1.0},
            r"BankHeist blackout modes are 0, .*, 10$",
        ),
        ("BankHeist", {"type": 5, "kind": "ram", "mode": 7, "prob": 1.0}, r"BankHeist ram modes are 0, 1, .*, 6$"),
        (
            "BankHeist",
            {"type": 3, "schedule": "cyclic", "threshold": 600, "concept": {"type": 2, "mode": 9, "prob": 0.1}},
            r"\(drift concept\): mode=9 is not allowed",
        ),
    ],
)
def test_unknown_mode_is_one_clear_error(game, config, match):
    with pytest.raises(ValueError, match=match):
        make(game, config)


def test_a_preset_the_game_does_not_have_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown preset '5B' for Gopher; valid: Type1, Type2, Type3, Default, 5A"):
        gym.make("STORI/Gopher-v0", preset="5B")
