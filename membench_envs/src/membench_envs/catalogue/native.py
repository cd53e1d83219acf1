"""Catalogue entries of the native (numpy, no extra) MIKASA-Base diagnostic tasks."""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec

_TMAZE_EP = "membench_envs.envs.tmaze:TMazePassive"
_TMAZE_VEP = "membench_envs.envs.tmaze:TMazePassiveVector"


def _tmaze(env_id: str, length: int, penalty: bool = False) -> TaskSpec:
    T = length + 1
    reward = "dense: -1/(T-1) per lagging step, +1 correct turn" if penalty else "sparse: +1 correct turn"
    return TaskSpec(
        id=env_id,
        entry_point=_TMAZE_EP,
        vector_entry_point=_TMAZE_VEP,
        description=f"Passive T-Maze, corridor L={length}; cue at t=0 only, turn at the junction ({reward})",
        suites=("MIKASA-Base", "MEM"),
        memory_types=("object",),
        episode_length=T,
        xi=(T, T),
        obs_type="vector",
        action_type="discrete",
        source="MEM",
        kwargs={"corridor_length": length, "penalty": penalty},
        oracle_keys=("goal",),
        xi_note="one event-recall pair: clue at t=0, turn at t=T-1, so xi = T = L+1",
    )


TASKS: list[TaskSpec] = [
    _tmaze("MIKASA/TMazePassive-v0", 10),
    _tmaze("MIKASA/TMazePassiveDense-v0", 10, penalty=True),
    *[_tmaze(f"MIKASA/TMazePassiveL{n}-v0", n) for n in (5, 30, 100, 300)],
]


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
