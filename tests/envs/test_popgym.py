"""POPGym tasks: the wrapper reproduces popgym 1.0.7, the variants mean what they say, clear errors."""

from __future__ import annotations

import random
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import membench_envs
from membench_envs import catalogue
from tests.envs._helpers import on_info, play

pytest.importorskip("popgym")

from membench_envs.catalogue.popgym import DIFFICULTY_KWARGS, LEVELS, POPGYM_CLASSES

ALL_POPGYM = [s.id for s in catalogue.select(namespace="POPGym")]
FIXED_LENGTH = (
    "RepeatFirst",
    "RepeatPrevious",
    "Autoencode",
    "CountRecall",
    "HigherLower",
    "MultiarmedBandit",
    "PositionOnlyPendulum",
    "NoisyPositionOnlyPendulum",
    "Concentration",
)


def _mean_return(env_id, variant, policy, seeds=range(8)):
    """The mean return of ``policy(obs, info)`` over episodes from ``seeds``."""
    env = gym.make(env_id, obs_variant=variant)
    return float(np.mean([play(env, on_info(policy), s).total for s in seeds]))


# --- the catalogue ---------------------------------------------------------------------------------------
def test_every_family_at_every_level_is_registered_with_one_spelling():
    families = list(POPGYM_CLASSES)
    assert len(families) == 16 and len(ALL_POPGYM) == 48
    assert ALL_POPGYM == [f"POPGym/{f}{lv}-v0" for f in families for lv in LEVELS]
    assert "POPGym/VelocityOnlyCartPoleEasy-v0" in ALL_POPGYM  # class spelling, not popgym's "Cartpole" id
    base = set(membench_envs.suite("MIKASA-Base"))
    assert "POPGym/RepeatFirstEasy-v0" in base and "POPGym/LabyrinthEscapeHard-v0" in base
    assert "POPGym/NoisyPositionOnlyCartPoleEasy-v0" not in base  # not a row of MIKASA Table 9
    assert set(membench_envs.suite("POPGym")) == set(ALL_POPGYM)


def test_catalogue_memory_facts():
    info = membench_envs.info
    assert info("POPGym/RepeatPreviousEasy-v0").memory_types == ("sequential", "object")
    assert info("POPGym/CountRecallHard-v0").memory_types == ("object", "capacity")
    assert info("POPGym/BattleshipMedium-v0").memory_types == ("spatial",)
    assert [info(f"POPGym/RepeatPrevious{lv}-v0").xi for lv in LEVELS] == [(4, 4), (32, 32), (64, 64)]
    assert [info(f"POPGym/Autoencode{lv}-v0").xi for lv in LEVELS] == [(3, 103), (3, 207), (3, 311)]
    assert info("POPGym/RepeatFirstMedium-v0").xi == (2, 415)
    assert info("POPGym/LabyrinthExploreEasy-v0").xi is None
    assert "5" in info("POPGym/RepeatPreviousEasy-v0").xi_note  # the paper's value is quoted
    assert all(s.extra == "popgym" and s.obs_type == "vector" for s in catalogue.select(namespace="POPGym"))


@pytest.mark.parametrize("env_id", ALL_POPGYM)
def test_wrapper_reproduces_popgym_difficulty_subclass(env_id):
    """Our base class + kwargs == popgym's <Task><Level> subclass, step for step; episode length == catalogue T."""
    import popgym.envs

    spec = membench_envs.info(env_id)
    family, level = spec.kwargs["family"], spec.kwargs["difficulty"]
    ours = gym.make(env_id).unwrapped.inner
    theirs = getattr(popgym.envs, POPGYM_CLASSES[family].split(":")[1] + level)()
    py_state, np_state = random.getstate(), np.random.get_state()  # the Labyrinths seed the global RNGs
    try:
        oa, _ = ours.reset(seed=5)
        ob, _ = theirs.reset(seed=5)
        np.testing.assert_array_equal(np.asarray(oa, dtype=object), np.asarray(ob, dtype=object))
        space = ours.action_space
        space.seed(5)
        steps = 0
        while True:
            a = space.sample()
            ra, rb = ours.step(a), theirs.step(a)
            steps += 1
            np.testing.assert_array_equal(np.asarray(ra[0], dtype=object), np.asarray(rb[0], dtype=object))
            assert ra[1:4] == rb[1:4]
            if ra[2] or ra[3] or steps >= 60:
                break
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
    assert ours.action_space == theirs.action_space and ours.observation_space == theirs.observation_space
    if family in FIXED_LENGTH:
        env = gym.make(env_id)
        env.action_space.seed(0)
        length = play(env, lambda obs, episode: env.action_space.sample(), seed=0).t
        assert length == spec.episode_length


def test_partial_is_observation_previous_action_and_is_t0():
    env = gym.make("POPGym/RepeatFirstEasy-v0")
    obs, _info = env.reset(seed=1)
    inner = env.unwrapped.inner
    assert obs.shape == (9,) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs[:4], np.eye(4)[int(inner.card)])  # the dealt suit, one-hot
    np.testing.assert_array_equal(obs[4:8], [1, 0, 0, 0])  # null previous action = 0
    assert obs[8] == 1.0  # is_t0
    obs, *_ = env.step(2)
    np.testing.assert_array_equal(obs[4:8], [0, 0, 1, 0])
    assert obs[8] == 0.0
    assert obs[:4].sum() == 1


def test_full_is_popgym_markov_state_flattened():
    env = gym.make("POPGym/PositionOnlyCartPoleEasy-v0", obs_variant="full")
    obs, _ = env.reset(seed=2)
    np.testing.assert_allclose(obs, env.unwrapped.inner.state, rtol=1e-6)
    env = gym.make("POPGym/LabyrinthEscapeEasy-v0", obs_variant="full")
    obs, _ = env.reset(seed=2)
    y, x = env.unwrapped.inner.position
    np.testing.assert_allclose(obs[-2:], [y / 10, x / 10])  # the position popgym's state lacks


# --- variant semantics: memoryless scripted policies --------------------------------------------------------
def test_repeat_first_oracle_solves_partial_is_at_chance():
    env_id = "POPGym/RepeatFirstEasy-v0"
    assert _mean_return(env_id, "oracle", lambda o, i: int(np.argmax(o[-4:]))) == pytest.approx(1.0)
    assert _mean_return(env_id, "full", lambda o, i: int(np.argmax(o[:4]))) == pytest.approx(1.0)
    # Memoryless on the partial observation: answer the suit in view -> chance (E ≈ -0.5).
    assert _mean_return(env_id, "partial", lambda o, i: int(np.argmax(o[:4]))) < -0.2


def test_repeat_first_num_decks_sets_the_horizon_and_keeps_the_spaces():
    """RepeatFirst's horizon kwarg: popgym's num_decks overrides the difficulty's preset (None keeps it), so an
    episode lasts 52 n - 1 steps and the first suit still pays at every step; the spaces do not change, so a policy
    trained at one value acts at another."""
    easy = gym.make("POPGym/RepeatFirstEasy-v0")
    assert easy.unwrapped.inner.deck.num_cards == 52
    assert gym.make("POPGym/RepeatFirstEasy-v0", num_decks=None).unwrapped.inner.deck.num_cards == 52
    assert gym.make("POPGym/RepeatFirstHard-v0").unwrapped.inner.deck.num_cards == 16 * 52
    env = gym.make("POPGym/RepeatFirstEasy-v0", num_decks=3, obs_variant="oracle")
    assert env.observation_space == gym.make("POPGym/RepeatFirstEasy-v0", obs_variant="oracle").observation_space
    episode = play(env, lambda obs, episode: int(np.argmax(obs[-4:])), seed=3)  # the oracle's first suit
    assert episode.t == 3 * 52 - 1 and sum(episode.rewards) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="num_decks=0 is not allowed"):
        gym.make("POPGym/RepeatFirstEasy-v0", num_decks=0)
    with pytest.raises(TypeError, match="unknown kwarg 'num_decks'"):
        gym.make("POPGym/RepeatPreviousEasy-v0", num_decks=2)  # its deck count sizes its oracle


def test_repeat_previous_oracle_solves_partial_is_at_chance_and_xi_is_k():
    env_id = "POPGym/RepeatPreviousEasy-v0"  # k = 4
    assert _mean_return(env_id, "oracle", lambda o, i: int(np.argmax(o[9:13]))) == pytest.approx(1.0)
    assert _mean_return(env_id, "full", lambda o, i: int(np.argmax(o[:4]))) == pytest.approx(1.0)
    assert _mean_return(env_id, "partial", lambda o, i: int(np.argmax(o[:4]))) < -0.2

    def window_return(K):  # a policy that sees the last K observations only (context K)
        env = gym.make(env_id)
        total = 0.0
        for seed in range(6):
            obs, _ = env.reset(seed=seed)
            seen, done = [int(np.argmax(obs[:4]))], False
            while not done:
                a = seen[-4] if len(seen) >= 4 and K >= 4 else 0
                obs, r, term, trunc, _ = env.step(a)
                seen.append(int(np.argmax(obs[:4])))
                total, done = total + r, term or trunc
        return total / 6

    xi = membench_envs.info(env_id).xi[0]
    assert window_return(xi) == pytest.approx(1.0)  # K = ξ suffices ...
    assert window_return(xi - 1) < -0.2  # ... K = ξ - 1 does not (it must guess)


def test_count_recall_oracle_solves_partial_is_not():
    env_id = "POPGym/CountRecallEasy-v0"  # colours: values {0, 1}, max count 26; obs = [value(2), query(2), ...]
    max_count = 26

    def oracle_policy(o, info):
        query = int(np.argmax(o[2:4]))
        return int(round(o[-2:][query] * max_count))

    assert _mean_return(env_id, "oracle", oracle_policy) == pytest.approx(1.0)
    # The same counts are in info["oracle"] in the partial variant too.
    info_policy = lambda o, i: int(round(i["oracle"][int(np.argmax(o[2:4]))] * max_count))  # noqa: E731
    assert _mean_return(env_id, "partial", info_policy) == pytest.approx(1.0)
    # Memoryless on the partial observation: best constant-ish guess -> near the worst return.
    assert _mean_return(env_id, "partial", lambda o, i: 1) < -0.5


def test_autoencode_oracle_solves_and_recital_is_in_reverse_order():
    env_id = "POPGym/AutoencodeEasy-v0"  # partial: [flag(2): play, watch | suit(4) | prev action(4) | is_t0]
    assert _mean_return(env_id, "oracle", lambda o, i: int(np.argmax(o[11:15])), seeds=range(3)) == pytest.approx(1.0)

    def recite(order):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=0)
        shown = [int(np.argmax(obs[2:6]))]
        while obs[1] == 1.0:  # watch phase; the flag turns off on the last card shown
            obs, r, *_ = env.step(0)
            assert r == 0.0
            shown.append(int(np.argmax(obs[2:6])))
        total = 0.0
        for suit in order(shown):
            obs, r, term, _trunc, _ = env.step(suit)
            total += r
        assert term
        return len(shown), total

    n, backwards = recite(lambda s: s[::-1])
    assert n == 52 and backwards == pytest.approx(1.0)
    assert recite(list)[1] < 0.0  # the paper's "in order" is wrong for popgym's code


def test_position_only_cartpole_oracle_velocities_balance_partial_falls():
    env_id = "POPGym/PositionOnlyCartPoleEasy-v0"  # partial: [x, θ, prev(2), t0]; oracle appends [ẋ, θ̇]

    def controller(x, x_dot, th, th_dot):
        return int(x + x_dot + 10 * th + th_dot > 0)

    assert _mean_return(env_id, "oracle", lambda o, i: controller(o[0], o[5], o[1], o[6])) == pytest.approx(1.0)
    assert _mean_return(env_id, "full", lambda o, i: controller(*o)) == pytest.approx(1.0)
    assert _mean_return(env_id, "partial", lambda o, i: controller(o[0], 0.0, o[1], 0.0)) < 0.5


def test_stateless_control_xi_is_two_velocities_follow_from_two_observations():
    """The catalogue's Ξ = {2}: two consecutive observations (+ the previous action in view) give the oracle."""
    from gymnasium.envs.classic_control import CartPoleEnv

    env = gym.make("POPGym/PositionOnlyCartPoleEasy-v0", obs_variant="oracle")
    sim = CartPoleEnv()
    sim.reset(seed=0)
    prev, _ = env.reset(seed=3)
    for t in range(15):
        a = t % 2
        obs, *_ = env.step(a)
        tau = sim.tau
        v_prev = [(obs[0] - prev[0]) / tau, (obs[1] - prev[1]) / tau]  # Euler: x' = x + tau * x_dot
        sim.state = np.array([prev[0], v_prev[0], prev[1], v_prev[1]], dtype=np.float64)
        sim.step(int(np.argmax(obs[2:4])))  # the previous action, read from the observation
        np.testing.assert_allclose(sim.state[[1, 3]], obs[-2:], atol=2e-4)
        prev = obs
    assert membench_envs.info("POPGym/PositionOnlyCartPoleEasy-v0").xi == (2, 2)

    env = gym.make("POPGym/PositionOnlyPendulumEasy-v0", obs_variant="oracle")
    prev, _ = env.reset(seed=3)
    for t in range(15):
        obs, *_ = env.step(np.array([np.sin(t)], dtype=np.float32))
        d_theta = np.arctan2(obs[1], obs[0]) - np.arctan2(prev[1], prev[0])
        d_theta = (d_theta + np.pi) % (2 * np.pi) - np.pi
        np.testing.assert_allclose(d_theta / 0.05, obs[-1], atol=1e-3)  # theta_dot = d_theta / dt
        prev = obs


# --- what the oracle of the information-gathering tasks holds ------------------------------------------------
def test_battleship_oracle_is_the_shot_history():
    env = gym.make("POPGym/BattleshipEasy-v0", obs_variant="oracle")
    obs, info = env.reset(seed=3)
    assert info["oracle"].sum() == 64 and info["oracle"].reshape(64, 3)[:, 0].all()  # all unknown at reset
    board = env.unwrapped.inner.board
    for cell in [(0, 0), (3, 4), (7, 7), (3, 4)]:
        obs, _r, _term, _trunc, info = env.step(np.array(cell))
        res = info["oracle"].reshape(8, 8, 3)
        assert res[cell].argmax() == 1 + board[cell]  # 1 miss / 2 hit
        np.testing.assert_array_equal(obs[-192:], info["oracle"])
    assert (info["oracle"].reshape(64, 3)[:, 0] == 0).sum() == 3


def test_concentration_oracle_remembers_every_card_once_seen():
    env = gym.make("POPGym/ConcentrationEasy-v0", obs_variant="oracle")
    _, info = env.reset(seed=4)
    values = env.unwrapped.inner.state  # colour of each card
    assert info["oracle"].reshape(52, 3)[:, 2].all()  # all face-down
    env.step(0)
    _, _, _, _, info = env.step(1)  # two cards flipped, then turned back unless they match
    known = info["oracle"].reshape(52, 3)
    assert known[0].argmax() == values[0] and known[1].argmax() == values[1]
    assert known[2:, 2].all()


def test_minesweeper_oracle_and_bandit_statistics():
    env = gym.make("POPGym/MineSweeperEasy-v0")
    _, info = env.reset(seed=0)
    inner = env.unwrapped.inner
    safe = np.argwhere(inner.hidden_grid == 0)[0]
    _, _, _, _, info = env.step(safe)
    cells = info["oracle"].reshape(16, 4)  # Discrete(3) counts + "unrevealed"
    i = safe[0] * 4 + safe[1]
    assert cells[i].argmax() == 1 + inner.neighbor_grid[tuple(safe)] and cells[:, 0].sum() == 15

    env = gym.make("POPGym/MultiarmedBanditEasy-v0")
    env.reset(seed=0)
    payouts = 0
    for _ in range(5):
        obs, *_, info = env.step(3)
        payouts += int(obs[1])  # obs one-hot [no payout, payout]
    np.testing.assert_allclose(info["oracle"][3], 5 / 200)
    np.testing.assert_allclose(info["oracle"][13], payouts / 200)
    assert info["oracle"].sum() == pytest.approx((5 + payouts) / 200)


# --- seeding, errors ------------------------------------------------------------------------------------
def test_labyrinth_mazes_come_from_the_env_seed_not_the_global_rng():
    env_id = "POPGym/LabyrinthExploreEasy-v0"

    def maze(env, seed=None):
        env.reset(seed=seed)
        return env.unwrapped.inner.maze.grid.copy()

    a, b = gym.make(env_id), gym.make(env_id)
    random.seed(0)
    before = random.random()
    random.seed(0)
    first = maze(a, seed=11)
    assert random.random() == before  # the global RNG is untouched
    np.testing.assert_array_equal(first, maze(b, seed=11))
    # Interleaved resets without seeds follow each env's own stream.
    seq_a = [maze(a)]
    maze(b)
    seq_a.append(maze(a))
    c = gym.make(env_id)
    maze(c, seed=11)
    np.testing.assert_array_equal(seq_a[0], maze(c))
    np.testing.assert_array_equal(seq_a[1], maze(c))
    assert not np.array_equal(first, seq_a[0])


def test_bad_actions_are_clear_errors():
    cases = [
        ("POPGym/RepeatFirstEasy-v0", [4, -1, 1.5, np.array([0, 1])]),
        ("POPGym/BattleshipEasy-v0", [np.array([8, 0]), np.array([0, -1]), np.array([0, 0, 0]), 3]),
        ("POPGym/PositionOnlyPendulumEasy-v0", [np.array([2.5]), np.array([np.nan]), np.array([0.0, 0.0])]),
    ]
    for env_id, actions in cases:
        env = gym.make(env_id)
        env.reset(seed=0)
        for a in actions:
            with pytest.raises(ValueError, match="action"):
                env.step(a)
        env.step(env.action_space.sample())  # still usable after a rejected action


def test_step_after_the_end_needs_reset():
    env = gym.make("POPGym/MineSweeperEasy-v0").unwrapped
    env.reset(seed=0)
    mine = np.argwhere(env.inner.hidden_grid == 1)[0]
    _, _, term, _, info = env.step(mine)
    assert term and info["success"] is False
    with pytest.raises(gym.error.ResetNeeded):
        env.step(mine)


@pytest.mark.parametrize(
    "blocked, env_id",
    [("popgym", "POPGym/RepeatFirstEasy-v0"), ("mazelib", "POPGym/LabyrinthEscapeEasy-v0")],
)
def test_missing_backend_is_one_clear_error(blocked, env_id):
    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "import gymnasium as gym, membench_envs\n"
        "try:\n"
        f"    gym.make({env_id!r})\n"
        "except membench_envs.MissingExtraError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('made without its backend')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'membench-envs[popgym]'" in out and env_id in out and blocked in out


def test_unknown_family_or_level_is_a_clear_error():
    from membench_envs.envs.backends.popgym import POPGymTask

    with pytest.raises(ValueError, match="family"):
        POPGymTask("RepeatLast", "Easy")
    with pytest.raises(ValueError, match="difficulty"):
        POPGymTask("RepeatFirst", "Insane")
    assert set(DIFFICULTY_KWARGS) == set(POPGYM_CLASSES)


def test_the_wrappers_family_table_has_one_row_per_family():
    from membench_envs.envs.backends.popgym import FAMILIES

    assert list(FAMILIES) == list(POPGYM_CLASSES)
