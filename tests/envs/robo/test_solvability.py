"""Solvability: each family's scripted expert (:mod:`membench_envs.robo.experts`, privileged: it reads positions and
the oracle from the simulator) succeeds; a policy without the remembered cue does not, beyond chance.

The default suite runs the experts on representative IDs (each family's own tests run its expert once more, with its
reward checks) and checks, episode by episode, that picking a random object succeeds exactly when it picks the target.
``-m slow`` runs every ID with more episodes: the experts' rates (also under ``strict_success``), the chance rates of
random choices, and idle and random arms (the measured rates: the docstring of membench_envs.robo.experts).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from membench_envs.catalogue import robo as table
from membench_envs.robo.experts import ReachPolicy, RotatePolicy, ShellPolicy, TouchSequencePolicy, scripted_expert

from tests.envs.robo._helpers import episode, idle, run_episode

REMEMBER_IDS = [p.id for p in table.PRESETS if p.family.name.startswith("Remember")]
COLORS_IDS = [p.id for p in table.PRESETS if p.family.name.endswith("OfColors")]
#: (objects to choose from) per Remember ID: chance = 1 / N
N_OBJECTS = {
    "RememberColor3": 3,
    "RememberColor5": 5,
    "RememberColor9": 9,
    "RememberShape3": 3,
    "RememberShape5": 5,
    "RememberShape9": 9,
    "RememberShapeAndColor3x2": 6,
    "RememberShapeAndColor3x3": 9,
    "RememberShapeAndColor5x3": 15,
}


def _ee(robo_env, env_id, **kwargs):
    return robo_env(env_id, obs_variant="full", control_mode="pd_ee_delta_pose", **kwargs)


def _wins(env, policy, seeds) -> int:
    return sum(run_episode(env, policy, s) for s in seeds)


def _chance_interval(n_episodes: int, p: float, z: float = 3.3) -> tuple[float, float]:
    sd = math.sqrt(p * (1 - p) / n_episodes)
    return p - z * sd, p + z * sd  # ~99.9% normal interval of a binomial rate


# --------------------------------------------------------------------------------------------------------------
# default suite: representatives
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env_id", "order"),
    [
        ("MIKASA/RememberColor9-v0", None),
        ("MIKASA/RememberShapeAndColor5x3-v0", None),
        ("MIKASA/BunchOfColors7-v0", "nearest"),
        ("MIKASA/SeqOfColors7-v0", "nearest"),
        ("MIKASA/ChainOfColors5-v0", "oracle"),
    ],
)
def test_the_expert_solves_representative_ids(robo_env, env_id, order):
    """Remember*: the largest layouts (9 cubes; 15 shape-colour pairs); *OfColors: any order vs the shown order."""
    env = _ee(robo_env, env_id)
    policy = scripted_expert(env) if order is None else TouchSequencePolicy(env, order)
    wins = _wins(env, policy, range(3))
    assert wins >= 2, f"{env_id}: {wins}/3"


def test_the_expert_also_succeeds_from_the_partial_variant(robo_env):
    """The partial (RGB + joints) variant is the same task: the same policy succeeds there too."""
    env = robo_env("MIKASA/RememberColor3-v0", obs_variant="partial", control_mode="pd_ee_delta_pose")
    assert run_episode(env, ReachPolicy(env, "oracle"), seed=0)


def test_a_random_choice_succeeds_exactly_when_it_is_the_target(robo_env):
    """Touching a random object succeeds exactly when it is the cue (chance without memory: its rate over 300
    episodes is in the slow sweep). Seeds 1000-1006 hold both cases."""
    env = _ee(robo_env, "MIKASA/RememberColor3-v0")
    policy = ReachPolicy(env, "random", seed=1000)
    hits = []
    for s in range(7):
        won = run_episode(env, policy, 1000 + s)
        hit = policy.target == int(env.unwrapped.target_index()[0])
        assert won == hit, (s, policy.target)
        hits.append(hit)
    assert any(hits) and not all(hits)


# --------------------------------------------------------------------------------------------------------------
# slow: every ID, more episodes
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("env_id", REMEMBER_IDS)
def test_remember_expert_and_chance_sweep(robo_env, env_id):
    env = _ee(robo_env, env_id)
    oracle = _wins(env, ReachPolicy(env, "oracle", seed=100), range(100, 150)) / 50
    assert oracle >= 0.9, oracle
    n, p = 300, 1 / N_OBJECTS[env_id.removeprefix("MIKASA/").removesuffix("-v0")]
    low, high = _chance_interval(n, p)
    rate = _wins(env, ReachPolicy(env, "random", seed=2000), range(2000, 2000 + n)) / n
    print(f"{env_id}: oracle {oracle:.2f}, random {rate:.3f} (chance {p:.3f})")
    assert max(low, 0.0) <= rate <= high, rate


@pytest.mark.slow
@pytest.mark.parametrize("env_id", COLORS_IDS)
def test_colors_expert_sweep(robo_env, env_id):
    env = _ee(robo_env, env_id)
    order = "oracle" if "Chain" in env_id else "nearest"
    rate = _wins(env, TouchSequencePolicy(env, order), range(1000, 1030)) / 30
    print(f"{env_id}: scripted oracle policy {rate:.2f}")
    # measured (30 episodes, CPU): 1.00 everywhere except ChainOfColors7, 0.67 (7 ordered touches in 80 steps)
    assert rate >= (0.5 if env_id.endswith("ChainOfColors7-v0") else 0.9), rate


@pytest.mark.slow
def test_a_random_set_of_colours_is_near_chance_on_bunch3(robo_env):
    """Touching 3 of the 9 cubes at random succeeds with probability 1/C(9,3) = 1/84: never in 12 episodes here."""
    env = _ee(robo_env, "MIKASA/BunchOfColors3-v0")
    rng = np.random.default_rng(0)
    wins = sum(
        run_episode(env, TouchSequencePolicy(env, [int(k) for k in rng.choice(9, 3, replace=False)]), 100 + s)
        for s in range(12)
    )
    assert wins <= 1


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "episodes", "needed"), [("Touch", 10, 9), ("Push", 6, 5), ("Pick", 6, 5)])
def test_shell_game_expert_and_chance(robo_env, mode, episodes, needed):
    env = _ee(robo_env, f"MIKASA/ShellGame{mode}-v0", reward_mode="dense")
    wins = _wins(env, ShellPolicy(env, "oracle"), range(100, 100 + episodes))
    assert wins >= needed, f"{mode}: oracle policy solved {wins}/{episodes}"
    if mode == "Touch":
        policy, lucky = ShellPolicy(env, "random", seed=7), 0
        for s in range(30):
            info = episode(env, policy, 200 + s, max_steps=40)
            assert bool(info["success_once"]) == (policy.target == int(info["oracle"][0])), s
            lucky += bool(info["success_once"])
        assert 4 <= lucky <= 17, f"random cup: {lucky}/30 (chance = 10)"


#: (ID, strict_success, expert kwargs, episodes, wins needed): measured on the CPU, see each family's notes
EXPERT_RATES = [
    *((f"MIKASA/Intercept{m}-v0", False, {}, 15, 12) for m in ("Slow", "Medium", "Fast")),
    *((f"MIKASA/InterceptGrab{m}-v0", False, {}, 15, 12) for m in ("Slow", "Medium", "Fast")),
    # strict: Intercept's ball stopped in the zone (the policy carries it there), InterceptGrab's ball held still
    # 5 cm above the table (lift=True); measured on seeds 2000-2009: 10/10 on every ID
    *((f"MIKASA/Intercept{m}-v0", True, {}, 10, 8) for m in ("Slow", "Medium", "Fast")),
    *((f"MIKASA/InterceptGrab{m}-v0", True, {"lift": True}, 10, 8) for m in ("Slow", "Medium", "Fast")),
    *(
        (f"MIKASA/Rotate{f}{m}-v0", s, {}, 20, 17)
        for f in ("Lenient", "Strict")
        for m in ("Pos", "PosNeg")
        for s in (False, True)
    ),
    ("MIKASA/TakeItBack-v0", False, {}, 30, 27),
    ("MIKASA/TakeItBack-v0", True, {}, 30, 27),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "strict", "kwargs", "episodes", "needed"),
    EXPERT_RATES,
    ids=[f"{e.removeprefix('MIKASA/').removesuffix('-v0')}{'-strict' * s}" for e, s, *_ in EXPERT_RATES],
)
def test_expert_rates(robo_env, env_id, strict, kwargs, episodes, needed):
    env = _ee(robo_env, env_id, strict_success=strict)
    seed0 = 2000 if strict and "Intercept" in env_id else 300
    wins = _wins(env, scripted_expert(env, **kwargs), range(seed0, seed0 + episodes))
    print(f"{env_id} strict={strict}: scripted policy {wins}/{episodes}")
    assert wins >= needed, f"{env_id} strict={strict}: scripted policy {wins}/{episodes}"


#: ID -> (most idle successes, most random successes) of 30 episodes each. The exception is the published
#: InterceptSlow: the ball's sideways speed U(0, 0.05) m/s alone carries it 0.1 m towards the goal (0.2 m to the
#: side) in the 2-4 s a slow ball takes to reach the goal's row, when vx is near its top (about 0.04 m/s): measured
#: 3/60 idle episodes on seeds 1000-1059 (every success had vx >= 0.04) and, on this test's seeds, idle 5/30 and
#: random 3/30; 0/30 and 0/30 on the other five Intercept IDs.
IDLE_AND_RANDOM = {
    **{f"MIKASA/Intercept{g}{m}-v0": (3, 3) for g in ("", "Grab") for m in ("Slow", "Medium", "Fast")},
    "MIKASA/InterceptSlow-v0": (7, 7),
    **{f"MIKASA/Rotate{f}{m}-v0": (0, 3) for f in ("Lenient", "Strict") for m in ("Pos", "PosNeg")},
    "MIKASA/TakeItBack-v0": (0, 3),
}


@pytest.mark.slow
@pytest.mark.parametrize("env_id", list(IDLE_AND_RANDOM))
def test_idle_and_random_arms_rarely_succeed(robo_env, env_id):
    env = robo_env(env_id, obs_variant="full")
    rng = np.random.default_rng(0)
    n = 30
    idle_wins = _wins(env, idle, range(500, 500 + n))
    random_wins = _wins(env, lambda obs, info: rng.uniform(-1, 1, 8).astype(np.float32), range(600, 600 + n))
    print(f"{env_id}: idle {idle_wins}/{n}, random {random_wins}/{n}")
    most_idle, most_random = IDLE_AND_RANDOM[env_id]
    assert idle_wins <= most_idle and random_wins <= most_random


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id, guess", [("MIKASA/RotateLenientPos-v0", 0.835), ("MIKASA/RotateStrictPosNeg-v0", 0.614)]
)
def test_the_prompt_makes_rotate_solvable_and_a_constant_guess_stays_at_chance(robo_env, env_id, guess):
    """Reading θ* from the default observation's prompt, the scripted policy turns the peg by it (3 episodes in the
    partial variant, whose two renders cost ~0.4 s a step on the CPU); a policy that cannot see it can at best turn
    by a constant c (the middle of the Pos range, of PosNeg's positive range), and succeeds exactly on the episodes
    where |θ* − c| < 0.1: about 13.6% (Pos) and 29.2% (PosNeg) (20 episodes in the full variant: the guess reads
    no observation)."""
    partial = robo_env(env_id, control_mode="pd_ee_delta_pose")  # the default observation: rgb, joints, prompt
    reader = RotatePolicy(partial, target="prompt")
    assert all(run_episode(partial, reader, 700 + s) for s in range(3))
    full = _ee(robo_env, env_id)
    guesser = RotatePolicy(full, target=guess)
    wins, lucky = 0, 0
    for s in range(20):
        wins += run_episode(full, guesser, 800 + s)
        lucky += abs(float(full.unwrapped.target_angle[0]) - guess) < 0.1
    print(f"{env_id}: constant guess {guess} won {wins}/20, |target - guess| < 0.1 on {lucky}/20")
    assert abs(wins - lucky) <= 1 and wins <= 0.4 * 20
