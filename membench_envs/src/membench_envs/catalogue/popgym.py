"""Catalogue entries of POPGym (Morad et al., ICLR 2023), wrapped from ``popgym`` 1.0.7: ``POPGym/<Task><Level>-v0``.

Every family at every difficulty (Easy / Medium / Hard). The difficulty presets below are the constructor
arguments of popgym's ``<Task>Easy|Medium|Hard`` subclasses (spec seed-pobax-popgym.md B.3 / D.1); the
wrapper instantiates the base class with them (``tests/envs/test_popgym.py`` checks that this reproduces
popgym's subclasses step for step).

ID spelling: popgym registers ``popgym-VelocityOnlyCartpole<Level>-v0`` (lower-case "pole") for the class
``VelocityOnlyCartPole``; membench uses the class spelling for every family, so the ID is
``POPGym/VelocityOnlyCartPole<Level>-v0``, consistent with ``POPGym/PositionOnlyCartPole<Level>-v0``.

Correlation horizons Ξ (memory-classification paper, ξ = t_r − t_e − Δt + 1 with t counting actions and
o_t the observation the action a_t is taken on) are derived from popgym 1.0.7's code; pairs whose event is
in the current observation (ξ = 1) are not memory pairs. Where the paper's Table 2 gives a value it is
quoted in ``xi_note``; it is one step longer than the code (see the notes of RepeatPrevious / Autoencode).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from membench_envs.catalogue import HorizonKwarg, TaskSpec
from membench_envs.envs.core.params import OBS_VARIANT, Param

LEVELS = ("Easy", "Medium", "Hard")

#: The entry point of every POPGym ID: one wrapper serves all 16 families.
ENTRY_POINT = "membench_envs.envs.backends.popgym:POPGymTask"

#: family -> "module:Class" of popgym 1.0.7.
POPGYM_CLASSES: dict[str, str] = {
    "RepeatFirst": "popgym.envs.repeat_first:RepeatFirst",
    "RepeatPrevious": "popgym.envs.repeat_previous:RepeatPrevious",
    "Autoencode": "popgym.envs.autoencode:Autoencode",
    "CountRecall": "popgym.envs.count_recall:CountRecall",
    "PositionOnlyCartPole": "popgym.envs.position_only_cartpole:PositionOnlyCartPole",
    "VelocityOnlyCartPole": "popgym.envs.velocity_only_cartpole:VelocityOnlyCartPole",
    "NoisyPositionOnlyCartPole": "popgym.envs.noisy_position_only_cartpole:NoisyPositionOnlyCartPole",
    "PositionOnlyPendulum": "popgym.envs.position_only_pendulum:PositionOnlyPendulum",
    "NoisyPositionOnlyPendulum": "popgym.envs.noisy_position_only_pendulum:NoisyPositionOnlyPendulum",
    "MultiarmedBandit": "popgym.envs.multiarmed_bandit:MultiarmedBandit",
    "HigherLower": "popgym.envs.higher_lower:HigherLower",
    "Concentration": "popgym.envs.concentration:Concentration",
    "Battleship": "popgym.envs.battleship:Battleship",
    "MineSweeper": "popgym.envs.minesweeper:MineSweeper",
    "LabyrinthExplore": "popgym.envs.labyrinth_explore:LabyrinthExplore",
    "LabyrinthEscape": "popgym.envs.labyrinth_escape:LabyrinthEscape",
}

#: The kwargs of every POPGym ID (``family`` and ``difficulty`` are set by the ID's registration).
PARAMS: tuple[Param, ...] = (
    Param("family", "choice", None, choices=tuple(POPGYM_CLASSES), doc="the popgym environment class"),
    Param("difficulty", "choice", None, choices=LEVELS, doc="popgym's difficulty preset"),
    OBS_VARIANT,
)

#: family -> level -> constructor kwargs (exactly popgym 1.0.7's difficulty subclasses).
DIFFICULTY_KWARGS: dict[str, dict[str, dict]] = {
    "RepeatFirst": {"Easy": {"num_decks": 1}, "Medium": {"num_decks": 8}, "Hard": {"num_decks": 16}},
    "RepeatPrevious": {
        "Easy": {"num_decks": 1, "k": 4},
        "Medium": {"num_decks": 2, "k": 32},
        "Hard": {"num_decks": 3, "k": 64},
    },
    "Autoencode": {"Easy": {"num_decks": 1}, "Medium": {"num_decks": 2}, "Hard": {"num_decks": 3}},
    "CountRecall": {
        "Easy": {"num_decks": 1, "deck_type": "colors"},
        "Medium": {"num_decks": 2, "deck_type": "suits"},
        "Hard": {"num_decks": 4, "deck_type": "ranks"},
    },
    "PositionOnlyCartPole": {lv: {"max_episode_length": n} for lv, n in zip(LEVELS, (200, 400, 600), strict=True)},
    "VelocityOnlyCartPole": {lv: {"max_episode_length": n} for lv, n in zip(LEVELS, (200, 400, 600), strict=True)},
    "NoisyPositionOnlyCartPole": {lv: {"noise_sigma": s} for lv, s in zip(LEVELS, (0.1, 0.2, 0.3), strict=True)},
    "PositionOnlyPendulum": {lv: {"max_episode_length": n} for lv, n in zip(LEVELS, (200, 150, 100), strict=True)},
    "NoisyPositionOnlyPendulum": {lv: {"noise_sigma": s} for lv, s in zip(LEVELS, (0.1, 0.2, 0.3), strict=True)},
    "MultiarmedBandit": {
        "Easy": {"num_bandits": 10, "episode_length": 200},
        "Medium": {"num_bandits": 20, "episode_length": 400},
        "Hard": {"num_bandits": 30, "episode_length": 600},
    },
    "HigherLower": {"Easy": {"num_decks": 1}, "Medium": {"num_decks": 2}, "Hard": {"num_decks": 3}},
    "Concentration": {
        "Easy": {"num_decks": 1, "deck_type": "colors"},
        "Medium": {"num_decks": 2, "deck_type": "colors"},
        "Hard": {"num_decks": 1, "deck_type": "ranks"},
    },
    "Battleship": {
        lv: {"board_size": b, "ship_sizes": [2, 3, 3, 4]} for lv, b in zip(LEVELS, (8, 10, 12), strict=True)
    },
    "MineSweeper": {lv: {"difficulty": lv.lower()} for lv in LEVELS},
    "LabyrinthExplore": {
        lv: {"maze_dims": (d, d), "episode_length": 1024} for lv, d in zip(LEVELS, (10, 14, 18), strict=True)
    },
    "LabyrinthEscape": {
        lv: {"maze_dims": (d, d), "episode_length": 1024} for lv, d in zip(LEVELS, (10, 14, 18), strict=True)
    },
}


#: family -> its horizon kwarg. RepeatFirst deals ``num_decks`` decks of 52 cards, one per step after the first,
#: and pays for the first card's suit at every step: T = 52 n - 1 and Ξ = [2, T]. (The other card games' deck
#: counts also size their spaces or their oracle: a policy trained on one could not act on another.)
HORIZON_KWARGS: dict[str, HorizonKwarg] = {
    "RepeatFirst": HorizonKwarg(
        "num_decks",
        lambda n: (2, 52 * n - 1),
        "Ξ = [2, 52 num_decks - 1]",
        episode_length=lambda n: 52 * n - 1,
        high=64,
    ),
}


def params(family: str) -> tuple[Param, ...]:
    """The kwargs of a family's IDs: :data:`PARAMS` and the family's horizon kwarg, if it has one (None, its
    default, means the difficulty's preset)."""
    h = HORIZON_KWARGS.get(family)
    if h is None:
        return PARAMS
    presets = " / ".join(str(DIFFICULTY_KWARGS[family][lv][h.name]) for lv in LEVELS)
    doc = f"popgym's {h.name}; default: the difficulty's preset ({presets}); sets the horizon: {h.text}"
    return (*PARAMS, Param(h.name, "int", None, low=1, high=h.high, none_ok=True, doc=doc))


def constructor_kwargs(family: str, difficulty: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """popgym's constructor arguments of ``family`` at ``difficulty`` with the checked ``kwargs`` of the ID: the
    difficulty's preset, with the family's horizon kwarg where it is given."""
    out = dict(DIFFICULTY_KWARGS[family][difficulty])
    h = HORIZON_KWARGS.get(family)
    if h is not None and kwargs.get(h.name) is not None:
        out[h.name] = kwargs[h.name]
    return out


#: family -> (E, M, H) episode length T in steps (measured with popgym 1.0.7; a cap for early-ending tasks).
EPISODE_LENGTH: dict[str, tuple[int, int, int]] = {
    "RepeatFirst": (51, 415, 831),
    "RepeatPrevious": (51, 103, 155),
    "Autoencode": (103, 207, 311),
    "CountRecall": (51, 103, 207),
    "PositionOnlyCartPole": (200, 400, 600),
    "VelocityOnlyCartPole": (200, 400, 600),
    "NoisyPositionOnlyCartPole": (200, 200, 200),
    "PositionOnlyPendulum": (200, 150, 100),
    "NoisyPositionOnlyPendulum": (200, 200, 200),
    "MultiarmedBandit": (200, 400, 600),
    "HigherLower": (51, 103, 155),
    "Concentration": (104, 208, 104),
    "Battleship": (64, 100, 144),
    "MineSweeper": (14, 30, 54),
    "LabyrinthExplore": (1023, 1023, 1023),
    "LabyrinthEscape": (1023, 1023, 1023),
}

#: Families in MIKASA-Base (MIKASA paper Table 9), with Table 9's memory types. The noisy control tasks are
#: described in MIKASA's App. L but are not rows of Table 9: they get their noiseless twin's type here.
_TABLE9: dict[str, tuple[str, ...]] = {
    "RepeatFirst": ("object",),
    "RepeatPrevious": ("sequential", "object"),
    "Autoencode": ("sequential",),
    "CountRecall": ("object", "capacity"),
    "PositionOnlyCartPole": ("sequential",),  # Table 9 "vectorless CartPole" (POPGym's Stateless CartPole)
    "VelocityOnlyCartPole": ("sequential",),  # ... whose App. L text (velocities only) matches this class
    "PositionOnlyPendulum": ("sequential",),  # Table 9 "vectorless Pendulum"
    "MultiarmedBandit": ("object", "capacity"),
    "HigherLower": ("object", "sequential"),
    "Concentration": ("capacity",),
    "Battleship": ("spatial",),
    "MineSweeper": ("spatial",),
    "LabyrinthExplore": ("spatial",),
    "LabyrinthEscape": ("spatial",),
}
_NOT_IN_TABLE9: dict[str, tuple[str, ...]] = {
    "NoisyPositionOnlyCartPole": ("sequential",),
    "NoisyPositionOnlyPendulum": ("sequential",),
}

_DESCRIPTION: dict[str, str] = {
    "RepeatFirst": "output the suit of the first card at every step (ξ: first card -> every later step)",
    "RepeatPrevious": "output the suit of the card dealt k-1 steps before the current one (k = 4/32/64)",
    "Autoencode": "watch a shuffled deck, then recite its suits (in reverse order in the code)",
    "CountRecall": "answer how many cards of the queried value have been dealt so far",
    "PositionOnlyCartPole": "CartPole observing only [x, θ] (POPGym's 'Stateless CartPole')",
    "VelocityOnlyCartPole": "CartPole observing only [ẋ, θ̇] (the reset observation shows positions: popgym bug)",
    "NoisyPositionOnlyCartPole": "Stateless CartPole with Gaussian observation noise σ = 0.1/0.2/0.3",
    "PositionOnlyPendulum": "Pendulum observing only [cos θ, sin θ] (POPGym's 'Stateless Pendulum')",
    "NoisyPositionOnlyPendulum": "Stateless Pendulum with Gaussian observation noise σ = 0.1/0.2/0.3",
    "MultiarmedBandit": "episodic bandit, arm probabilities redrawn every episode; observe payout of last pull",
    "HigherLower": "guess whether the next card is higher or lower; card counting helps",
    "Concentration": "flip face-down cards two at a time to find matching pairs",
    "Battleship": "hidden board; observe HIT/MISS of the last shot only",
    "MineSweeper": "hidden board; observe the mine count around the last click only",
    "LabyrinthExplore": "visit every cell of a procedural maze seeing a 3x3 neighbourhood",
    "LabyrinthEscape": "find the exit of a procedural maze seeing a 3x3 neighbourhood (sparse reward)",
}

#: What ``info['oracle']`` (and the end of the oracle observation) holds, per family.
ORACLE_KEYS: dict[str, tuple[str, ...]] = {
    "RepeatFirst": ("first_suit",),
    "RepeatPrevious": ("last_k_suits",),
    "Autoencode": ("cards_to_recite",),
    "CountRecall": ("running_counts",),
    "PositionOnlyCartPole": ("x_dot", "theta_dot"),
    "VelocityOnlyCartPole": ("x", "theta"),
    "NoisyPositionOnlyCartPole": ("true_state",),
    "PositionOnlyPendulum": ("theta_dot",),
    "NoisyPositionOnlyPendulum": ("true_state",),
    "MultiarmedBandit": ("pulls_per_arm", "payouts_per_arm"),
    "HigherLower": ("dealt_rank_counts",),
    "Concentration": ("revealed_cards",),
    "Battleship": ("shot_results",),
    "MineSweeper": ("revealed_counts",),
    "LabyrinthExplore": ("visited_map", "position"),
    "LabyrinthEscape": ("visited_map", "position"),
}

_ACTION_TYPE = {
    "Battleship": "multi-discrete",
    "MineSweeper": "multi-discrete",
    "PositionOnlyPendulum": "continuous",
    "NoisyPositionOnlyPendulum": "continuous",
}

_COMMON_NOTES = (
    "partial = popgym observation + previous action + is_t0 flag (the paper's Antialias(PreviousAction(env))), "
    "flattened one-hot; full = popgym's get_state() flattened; popgym 1.0.7 API (gymnasium), not the paper "
    "commit's gym API."
)

_NOTES: dict[str, str] = {
    "RepeatFirst": "⚠ paper: the first card carries a 'first' indicator; the code has none, the is_t0 flag "
    "supplies it. With the previous action in the observation a memoryless policy can carry the suit by "
    "repeating its last action (POPGym's MLP reaches 0.49±0.39 on Easy).",
    "RepeatPrevious": "The code answers deck[-k] (the card k-1 steps before the current one, reward only from "
    "t = k-1), not the docstring's 'k steps ago'. Full state = the last k suits: the ceiling is trivial (B.11).",
    "Autoencode": "⚠ paper: recite 'in order'; popgym pops from the end, so recall is in REVERSE order (LIFO). "
    "The watch flag turns off on the last shown card. Full state contains the answers (B.11).",
    "CountRecall": "⚠ popgym 1.0.7 action space is Discrete(max count + 1); the paper commit had Discrete(max "
    "count). error_clamp is unused.",
    "PositionOnlyCartPole": "⚠ paper text: positions removed, velocities observed; the paper code (this class) "
    "keeps positions [x, θ] and drops velocities.",
    "VelocityOnlyCartPole": "Added after the paper (popgym 1.0.3). ⚠ its reset observation returns the positions "
    "[x, θ], not velocities (popgym bug, kept). popgym's own ID is spelled VelocityOnlyCartpole.",
    "NoisyPositionOnlyCartPole": "⚠ max episode length is 200 at every difficulty (only σ changes). Not a row of "
    "MIKASA Table 9 (App. L only). The full state is the noiseless state (B.11).",
    "PositionOnlyPendulum": "Shorter episodes are harder (200/150/100).",
    "NoisyPositionOnlyPendulum": "⚠ max episode length 200 at every difficulty. Not a row of MIKASA Table 9. "
    "The full state is the noiseless state (B.11).",
    "MultiarmedBandit": "Payout +1/L, no payout -1/L; popgym needs the previous action (obs_requires_prev_action).",
    "HigherLower": "Ties give 0. Card counting gives a small edge over the memoryless policy.",
    "Concentration": "Match +1/(N/2), mismatch -2/L, flipping a face-up card -1/L per card in play. Hard is at "
    "random level for every model in the paper.",
    "Battleship": "⚠ paper: water = 0, only repeats are negative; code: every miss or repeat -1/(B²-12).",
    "MineSweeper": "popgym 1.0.7 removed one extra step the paper commit allowed.",
    "LabyrinthExplore": "Needs mazelib (pinned 0.9.16). popgym deprecates the mazes: solvable without memory "
    "(the paper's MLP wins). Full = popgym's state (grid, unvisited cells hidden) + the agent position, which "
    "popgym's state lacks. Mazes are drawn from a per-env seed, not popgym's global RNG.",
    "LabyrinthEscape": "Needs mazelib (pinned 0.9.16). popgym deprecates the mazes: solvable without memory "
    "(wall following). Full = popgym's state + the agent position. Mazes are drawn from a per-env seed.",
}


#: Table 2 of the memory-classification paper (and its caption for Medium / Hard).
_XI_PAPER: dict[str, tuple[tuple[int, int], ...]] = {
    "RepeatPrevious": ((5, 5), (33, 33), (65, 65)),
    "Autoencode": ((2, 104), (2, 208), (2, 312)),
}


def _xi(family: str, level: int, T: int) -> tuple[tuple[int, int] | None, str]:
    """(Ξ, derivation) for one family at one level (0/1/2)."""
    if family == "RepeatFirst":
        return (2, T), "first suit shown at o_0, recalled by every action a_t; memory pairs t >= 1: xi = t+1 in [2, T]"
    if family == "RepeatPrevious":
        k = (4, 32, 64)[level]
        return (k, k), (
            f"a_t must equal the suit shown at o_(t-k+1) (code: deck[-k]), so xi = k = {k}. The paper's Table 2 "
            f"gives {k + 1} (reading k as 'k steps ago', popgym's docstring): one step longer than the code."
        )
    if family == "Autoencode":
        n = 52 * (level + 1)
        return (3, 2 * n - 1), (
            f"card j shown at o_j (j < N={n}); the m-th recall a_(N-1+m) answers card N-1-m: xi = 2m+1, and m = 0 is "
            f"visible (xi = 1), so Xi = {{3, 5, ..., {2 * n - 1}}}. Paper Table 2: {{2, 4, ..., {2 * n}}} (one step "
            "longer: it counts the last watched card as shown before the recall phase)."
        )
    if family in ("CountRecall", "HigherLower"):
        return (2, T), "every earlier dealt card o_j is needed at every later step t: xi = t-j+1 in [2, T]"
    if family in ("PositionOnlyCartPole", "PositionOnlyPendulum"):
        return (2, 2), (
            "the missing velocities are finite differences of two consecutive observations (explicit Euler "
            "integration; the previous action is in the observation): xi = 2"
        )
    if family == "VelocityOnlyCartPole":
        return (2, T), "positions integrate every past velocity (the reset observation shows the initial positions)"
    if family in ("NoisyPositionOnlyCartPole", "NoisyPositionOnlyPendulum"):
        return (2, T), "velocity by finite difference (xi = 2); i.i.d. noise makes every past observation informative"
    if family == "MultiarmedBandit":
        return (2, T - 1), "o_j (j >= 1) shows the payout of a_(j-1); the arm statistics use every o_j: xi in [2, T-1]"
    if family in ("Concentration", "Battleship", "MineSweeper"):
        return (2, T), "a revealed card/shot/click result o_j can be needed at any later step: xi in [2, T]"
    return None, "undefined: POPGym §2.3 / popgym's deprecation warning: the mazes are solvable without memory"


def env_id(family: str, level: str) -> str:
    """``POPGym/<family><level>-v0``."""
    return f"POPGym/{family}{level}-v0"


def _spec(family: str, level_idx: int) -> TaskSpec:
    level = LEVELS[level_idx]
    T = EPISODE_LENGTH[family][level_idx]
    in_table9 = family in _TABLE9
    xi, xi_note = _xi(family, level_idx, T)
    xi_paper = _XI_PAPER.get(family, (None, None, None))[level_idx]
    kw = DIFFICULTY_KWARGS[family][level]
    args = ", ".join(f"{k}={v}" for k, v in kw.items())
    return TaskSpec(
        id=env_id(family, level),
        entry_point=ENTRY_POINT,
        description=f"{_DESCRIPTION[family]} [popgym {POPGYM_CLASSES[family].split(':')[1]}({args})]",
        suites=("POPGym", "MIKASA-Base") if in_table9 else ("POPGym",),
        memory_types=_TABLE9.get(family) or _NOT_IN_TABLE9[family],
        episode_length=T,
        xi=xi,
        horizon=HORIZON_KWARGS.get(family),
        obs_type="vector",
        action_type=_ACTION_TYPE.get(family, "discrete"),
        source="POPGym",
        extra="popgym",
        kwargs={"family": family, "difficulty": level},
        score="return",  # POPGym's results are returns (MMER); info["success"] of some families is membench's
        params=params(family),
        oracle_keys=ORACLE_KEYS[family],
        xi_note=xi_note,
        xi_paper=xi_paper,
        notes=_NOTES[family]
        + " "
        + _COMMON_NOTES
        + ("" if in_table9 else " Memory type chosen by membench (family not in MIKASA Table 9)."),
    )


TASKS: list[TaskSpec] = [_spec(family, i) for family in POPGYM_CLASSES for i in range(3)]
