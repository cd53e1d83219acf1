"""Catalogue entries of the native (numpy, no extra) diagnostic tasks, and the kwargs each one takes.

T-Maze comes in two forms, under separate IDs:

- ``MIKASA/TMazePassive*``: the memory-classification paper's variant (its App. F), observation
  ``[y, clue, flag, noise]``. MIKASA-Base ships its code (``env_passive_t_maze_flag.py``) but leaves its
  registration (``T-Maze-Noise-v0``) commented out, so these IDs are in the ``MEM`` suite only.
- ``MIKASA/TMazeClassic*``: Ni et al.'s classic passive T-Maze (``TMazeClassicPassive`` of twni2016/Memory-RL),
  which is what MIKASA-Base registers as ``T-Maze-v0`` / ``T-Maze-Dense-v0``: ambiguous position, observation
  ``[at_junction, clue_or_y]``, no flag and no noise channel. Suite ``MIKASA-Base``.

Both use the authors' action order by default (0 = towards the junction, 1 = up, 2 = away, 3 = down);
``action_order="paper"`` gives the order the memory paper lists (left, up, right, down).
"""

from __future__ import annotations

from membench_envs.catalogue import VARIANTS, TaskSpec
from membench_envs.envs._params import Param

#: ``obs_variant`` of every native task.
OBS_VARIANT = Param("obs_variant", "choice", "partial", choices=VARIANTS, doc="the observation ladder rung")
#: The extra kwargs of ``gym.make_vec`` on the native batched path.
VECTOR_PARAMS: tuple[Param, ...] = (
    Param("num_envs", "int", 1, low=1, doc="environments stepped together"),
    Param("autoreset_mode", "choice", "NextStep", choices=("NextStep", "SameStep", "next_step", "same_step"),
          doc="gymnasium's AutoresetMode (the enum or its value)"),
    Param("max_episode_steps", "int", None, low=1, none_ok=True, doc="kept for introspection; T is the task's own"),
)

#: T-Maze action orders: per action, (dx, dy). "code" is the authors' (Ni et al.; MIKASA-Base), "paper" the
#: memory paper's listing "left, up, right, down".
TMAZE_ACTION_ORDERS = {
    "code": ((1, 0), (0, 1), (-1, 0), (0, -1)),
    "paper": ((-1, 0), (0, 1), (1, 0), (0, -1)),
}
TMAZE_PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("corridor_length", "int", 10, low=1, doc="L: cells from the start to the junction (T = L + 1)"),
    Param("penalty", "bool", False, doc="dense reward: -1/(T-1) on each step that lags behind the optimal one"),
    Param("action_order", "choice", "code", choices=tuple(TMAZE_ACTION_ORDERS),
          doc="'code': 0 towards the junction, 1 up, 2 away, 3 down (authors' code); 'paper': left, up, right, down"),
)

_TMAZE_EP = "membench_envs.envs.tmaze:TMazePassive"
_TMAZE_VEP = "membench_envs.envs.tmaze:TMazePassiveVector"
_CLASSIC_EP = "membench_envs.envs.tmaze:TMazeClassic"
_CLASSIC_VEP = "membench_envs.envs.tmaze:TMazeClassicVector"


def _tmaze(env_id: str, length: int, penalty: bool = False) -> TaskSpec:
    T = length + 1
    reward = "dense: -1/(T-1) per lagging step, +1 correct turn" if penalty else "sparse: +1 correct turn"
    return TaskSpec(
        id=env_id,
        entry_point=_TMAZE_EP,
        vector_entry_point=_TMAZE_VEP,
        description=(
            f"Passive T-Maze (memory paper's variant: obs [y, clue, flag, noise]), corridor L={length}; cue at t=0 "
            f"only, turn at the junction ({reward})"
        ),
        suites=("MEM",),
        memory_types=("object",),
        episode_length=T,
        xi=(T, T),
        obs_type="vector",
        action_type="discrete",
        source="MEM",
        kwargs={"corridor_length": length, "penalty": penalty},
        oracle_keys=("goal",),
        xi_note="one event-recall pair: clue at t=0, turn at t=T-1, so xi = T = L+1",
        notes=(
            "the memory paper's App. F T-Maze (code: MIKASA-Base env_passive_t_maze_flag.py, whose registration is "
            "commented out there); actions 0 = towards the junction, 1 = up, 2 = away, 3 = down (authors' code; "
            "action_order='paper' for left, up, right, down)"
        ),
        params=TMAZE_PARAMS,
        vector_params=VECTOR_PARAMS,
    )


def _tmaze_classic(env_id: str, length: int, penalty: bool = False) -> TaskSpec:
    T = length + 1
    reward = "dense: -1/L per lagging step, +1 correct turn" if penalty else "sparse: +1 correct turn"
    mikasa = "T-Maze-Dense-v0" if penalty else "T-Maze-v0"
    return TaskSpec(
        id=env_id,
        entry_point=_CLASSIC_EP,
        vector_entry_point=_CLASSIC_VEP,
        description=(
            f"Classic passive T-Maze (Ni et al.; MIKASA-Base {mikasa}), corridor L={length}: obs [at_junction, "
            f"clue_or_y], the corridor cells all look alike ({reward})"
        ),
        suites=("MIKASA-Base",),
        memory_types=("object",),
        episode_length=T,
        xi=(T, T),
        obs_type="vector",
        action_type="discrete",
        source="Ni2023",
        kwargs={"corridor_length": length, "penalty": penalty},
        oracle_keys=("goal",),
        xi_note="one event-recall pair: clue at t=0, turn at t=T-1, so xi = T = L+1",
        notes=(
            f"MIKASA-Base {mikasa} = twni2016/Memory-RL TMazeClassicPassive(corridor_length={length}"
            + (", mode='dense')" if penalty else ")")
            + "; actions 0 = towards the junction, 1 = up, 2 = away, 3 = down (action_order='paper': left, up, "
            "right, down). Upstream seeds numpy's global RNG in reset; here each env has its own stream."
        ),
        params=TMAZE_PARAMS,
        vector_params=VECTOR_PARAMS,
    )


TASKS: list[TaskSpec] = [
    _tmaze("MIKASA/TMazePassive-v0", 10),
    _tmaze("MIKASA/TMazePassiveDense-v0", 10, penalty=True),
    *[_tmaze(f"MIKASA/TMazePassiveL{n}-v0", n) for n in (5, 30, 100, 300)],
    _tmaze_classic("MIKASA/TMazeClassic-v0", 10),
    _tmaze_classic("MIKASA/TMazeClassicDense-v0", 10, penalty=True),
]

MEMORY_LENGTH_PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("memory_length", "int", 10, low=1, doc="L: steps between the context and the query (T = L + 1)"),
    Param("num_bits", "int", 1, low=1, doc="B: context bits, one of which is queried"),
)
MEMORY_CARDS_PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("num_pairs", "int", 5, low=1, doc="P: pairs of cards (2P cards)"),
    Param("time_limit", "int", None, low=1, none_ok=True, doc="T; None: 10 * num_pairs"),
)

_ML_EP = "membench_envs.envs.memory_length:MemoryLength"
_ML_VEP = "membench_envs.envs.memory_length:MemoryLengthVector"


def _memory_length(env_id: str, memory_length: int, num_bits: int, preset: str = "") -> TaskSpec:
    T = memory_length + 1
    return TaskSpec(
        id=env_id,
        entry_point=_ML_EP,
        vector_entry_point=_ML_VEP,
        description=(
            f"bsuite MemoryLength{preset}: {num_bits} context bit(s) shown at the start, the queried one must be "
            f"answered {memory_length} steps later (reward +1/-1 on the final step)"
        ),
        suites=("MIKASA-Base",),
        memory_types=("object",),
        episode_length=T,
        xi=(memory_length, memory_length),
        obs_type="vector",
        action_type="discrete",
        source="bsuite",
        kwargs={"memory_length": memory_length, "num_bits": num_bits},
        params=MEMORY_LENGTH_PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("context",),
        xi_note=(
            "one event-recall pair: the context is observed at t=0 and, because bsuite returns the pre-step "
            "observation, again at t=1 (t_e=0, dt=1); the answer is the action at t_r=L, so "
            "xi = t_r - t_e - dt + 1 = L = memory_length (T = L+1)"
        ),
        notes=(
            "terminated=True, truncated=False on the final step (MIKASA-Base's bsuite adapter sets both); "
            "oracle appends all context bits (the query is unknown until the last observation)"
        ),
    )


_MC_EP = "membench_envs.envs.memory_cards:MemoryCards"
_MC_VEP = "membench_envs.envs.memory_cards:MemoryCardsVector"


def _memory_cards(env_id: str, num_pairs: int, preset: str = "") -> TaskSpec:
    T = 10 * num_pairs
    return TaskSpec(
        id=env_id,
        entry_point=_MC_EP,
        vector_entry_point=_MC_VEP,
        description=(
            f"Memory Cards{preset}: {num_pairs} shuffled pairs, one card face up per step, point at its partner "
            f"(0 for a match, -1 otherwise); ends when all pairs are removed or after T={T} steps"
        ),
        suites=("MIKASA-Base",),
        memory_types=("capacity",),
        episode_length=T,
        xi=(2, T),
        obs_type="vector",
        action_type="discrete",
        source="DTQN",
        kwargs={"num_pairs": num_pairs},
        params=MEMORY_CARDS_PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("seen_card_values",),
        xi_note=(
            "memory-classification paper Table 2: Xi = [2, T]; a card seen at t_e is needed when its partner "
            "comes up at t_r (dt=0): xi = t_r - t_e + 1 ranges from 2 (the next step) to T (first and last step)"
        ),
        notes=(
            "time limit 10*num_pairs steps (truncated): DTQN's Memory-5-v0 limit of 50 for 5 pairs, scaled; "
            "MIKASA-Base registers no time limit"
        ),
    )


TASKS += [
    _memory_length("MIKASA/MemoryLength-v0", 10, 1),
    _memory_length("MIKASA/MemoryLengthEasy-v0", 10, 1, " (easy)"),
    _memory_length("MIKASA/MemoryLengthMedium-v0", 30, 1, " (medium)"),
    _memory_length("MIKASA/MemoryLengthHard-v0", 100, 3, " (hard)"),
    _memory_cards("MIKASA/MemoryCards-v0", 5),
    _memory_cards("MIKASA/MemoryCardsEasy-v0", 5, " (easy)"),
    _memory_cards("MIKASA/MemoryCardsMedium-v0", 10, " (medium)"),
    _memory_cards("MIKASA/MemoryCardsHard-v0", 30, " (hard)"),
]
