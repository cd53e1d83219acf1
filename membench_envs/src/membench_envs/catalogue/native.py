"""Catalogue entries of the native (numpy, no extra) diagnostic tasks: IDs, suites, memory types and Ξ. Each task's
kwargs, defaults and rules live in its module under :mod:`membench_envs.envs.native`, imported here.

T-Maze comes in two forms, under separate IDs:

- ``MIKASA/TMazePassive*``: the memory-classification paper's variant (its App. F), observation
  ``[y, clue, flag, noise]``. MIKASA-Base ships its code (``env_passive_t_maze_flag.py``) but leaves its
  registration (``T-Maze-Noise-v0``) commented out, so these IDs are in the ``MEM`` suite only.
- ``MIKASA/TMazeClassic*``: Ni et al.'s classic passive T-Maze (``TMazeClassicPassive`` of twni2016/Memory-RL),
  which is what MIKASA-Base registers as ``T-Maze-v0`` / ``T-Maze-Dense-v0``: ambiguous position, observation
  ``[at_junction, clue_or_y]``, no flag and no noise channel. Suite ``MIKASA-Base``.

Both use the authors' action order by default (0 = towards the junction, 1 = up, 2 = away, 3 = down);
``action_order="paper"`` gives the order the memory paper lists (left, up, right, down).

MIKASA-Base's two pycolab tasks are re-implemented in numpy from the authors' code (the MIKASA paper describes
only Ballet's room and view, and lists Passive Visual Match in Table 9 only): ``MIKASA/Ballet*`` (DeepMind's
``pycolab_ballet``, MIKASA-Base's ``Ballet*-v0`` presets) and ``MIKASA/PassiveVisualMatch-v0`` (Ni et al.'s
passive ``visual_match``). Their observations are dicts (an image, plus Ballet's instruction); see
:mod:`membench_envs.envs.native.ballet` and :mod:`membench_envs.envs.native.passive_visual_match` for every
decision.
"""

from __future__ import annotations

from membench_envs.catalogue import HorizonKwarg, TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.native import ballet, memory_cards, memory_length, passive_visual_match, tmaze

_TMAZE_EP = "membench_envs.envs.native.tmaze:TMazePassive"
_TMAZE_VEP = "membench_envs.envs.native.tmaze:TMazePassiveVector"
_CLASSIC_EP = "membench_envs.envs.native.tmaze:TMazeClassic"
_CLASSIC_VEP = "membench_envs.envs.native.tmaze:TMazeClassicVector"


#: The T-Mazes' horizon: one event-recall pair, the clue at t = 0 and the turn at t = T - 1 = L (each ID's ``xi``
#: is stated from its episode length; a test checks the two agree).
CORRIDOR = HorizonKwarg(
    "corridor_length", lambda n: (n + 1, n + 1), "ξ = L + 1", neutral=frozenset({"penalty", "action_order"})
)


def _tmaze(env_id: str, length: int, penalty: bool = False) -> TaskSpec:
    T = tmaze.episode_length(length)
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
        horizon=CORRIDOR,
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
        params=tmaze.PARAMS,
        vector_params=VECTOR_PARAMS,
    )


def _tmaze_classic(env_id: str, length: int, penalty: bool = False) -> TaskSpec:
    T = tmaze.episode_length(length)
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
        horizon=CORRIDOR,
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
        params=tmaze.PARAMS,
        vector_params=VECTOR_PARAMS,
    )


TASKS: list[TaskSpec] = [
    _tmaze("MIKASA/TMazePassive-v0", 10),
    _tmaze("MIKASA/TMazePassiveDense-v0", 10, penalty=True),
    *[_tmaze(f"MIKASA/TMazePassiveL{n}-v0", n) for n in (5, 30, 100, 300)],
    _tmaze_classic("MIKASA/TMazeClassic-v0", 10),
    _tmaze_classic("MIKASA/TMazeClassicDense-v0", 10, penalty=True),
]

_ML_EP = "membench_envs.envs.native.memory_length:MemoryLength"
_ML_VEP = "membench_envs.envs.native.memory_length:MemoryLengthVector"


#: bsuite MemoryLength's horizon (the ``xi_note`` of its IDs derives it).
MEMORY_LENGTH = HorizonKwarg("memory_length", lambda n: (n, n), "ξ = memory_length", neutral=frozenset({"num_bits"}))


def _memory_length(env_id: str, length: int, num_bits: int, preset: str = "") -> TaskSpec:
    T = memory_length.episode_length(length)
    return TaskSpec(
        id=env_id,
        entry_point=_ML_EP,
        vector_entry_point=_ML_VEP,
        description=(
            f"bsuite MemoryLength{preset}: {num_bits} context bit(s) shown at the start, the queried one must be "
            f"answered {length} steps later (reward +1/-1 on the final step)"
        ),
        suites=("MIKASA-Base",),
        memory_types=("object",),
        episode_length=T,
        xi=(length, length),
        horizon=MEMORY_LENGTH,
        obs_type="vector",
        action_type="discrete",
        source="bsuite",
        kwargs={"memory_length": length, "num_bits": num_bits},
        params=memory_length.PARAMS,
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


_MC_EP = "membench_envs.envs.native.memory_cards:MemoryCards"
_MC_VEP = "membench_envs.envs.native.memory_cards:MemoryCardsVector"


def _memory_cards(env_id: str, num_pairs: int, preset: str = "") -> TaskSpec:
    T = memory_cards.episode_length(num_pairs)
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
        params=memory_cards.PARAMS,
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

# --- Ballet (Lampinen et al. 2021, HCAM; DeepMind's pycolab_ballet, wrapped by MIKASA-Base) -----------------------
_BALLET_EP = "membench_envs.envs.native.ballet:Ballet"
_BALLET_VEP = "membench_envs.envs.native.ballet:BalletVector"


def _ballet(env_id: str, num_dancers: int, dance_delay: int, easy_mode: bool, upstream: str) -> TaskSpec:
    T = ballet.frame_limit(dance_delay) - 1
    period = ballet.DANCE_LENGTH - 1 + dance_delay
    light = "; all dancers red ('Light')" if easy_mode else ""
    return TaskSpec(
        id=env_id,
        entry_point=_BALLET_EP,
        vector_entry_point=_BALLET_VEP,
        description=(
            f"Ballet: {num_dancers} dancer(s) dance one after the other ({dance_delay}-step delay){light}; then an "
            "instruction names a dance and the agent must walk onto the dancer that danced it (+1), 99x99 "
            "egocentric image + instruction"
        ),
        suites=("MIKASA-Base",),
        memory_types=("sequential", "object"),
        episode_length=T,
        xi=(dance_delay, num_dancers * period - ballet.DANCE_LENGTH + 1),
        obs_type="dict",
        action_type="discrete",
        source="HCAM",
        kwargs={"num_dancers": num_dancers, "dance_delay": dance_delay, "easy_mode": easy_mode},
        params=ballet.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("dances_seen",),
        xi_note=(
            f"event: the target's dance, observations k*{period} ... k*{period}+15 (dt = 16) for the dancer k "
            f"(0-based) that dances k-th; recall: the first action that moves the agent, at t_r = "
            f"{num_dancers}*{period} (the instruction's first observation). xi = t_r - t_e - dt + 1 = "
            f"(n-k)*{period} - 15: from the last dancer ({dance_delay}) to the first "
            f"({num_dancers * period - ballet.DANCE_LENGTH + 1})"
        ),
        notes=(
            f"MIKASA-Base {upstream} (DeepMind pycolab_ballet, num_dancers={num_dancers}, dance_delay={dance_delay}"
            f"{', easy_mode=True' if easy_mode else ''}); episode limit max_steps={T + 1} frames = {T} steps "
            "(truncated, as the dm_env original's discount 1); actions 0-7 = N, NE, E, SE, S, SW, W, NW, ignored "
            "until the instruction is shown"
        ),
    )


TASKS += [
    _ballet("MIKASA/Ballet-v0", 2, 8, False, "Ballet-v0 (its defaults)"),
    _ballet("MIKASA/BalletEasy-v0", 2, 16, False, "BalletEasy-v0"),
    _ballet("MIKASA/BalletMedium-v0", 4, 16, False, "BalletMedium-v0"),
    _ballet("MIKASA/BalletHard-v0", 8, 48, False, "BalletHard-v0"),
    _ballet("MIKASA/BalletLightEasy-v0", 2, 16, True, "BalletLightEasy-v0"),
    _ballet("MIKASA/BalletLightMedium-v0", 4, 16, True, "BalletLightMedium-v0"),
    _ballet("MIKASA/BalletLightHard-v0", 8, 48, True, "BalletLightHard-v0"),
]

# --- Passive Visual Match (Hung et al. 2019, TVT; Ni et al.'s passive pycolab version, wrapped by MIKASA-Base) -------
TASKS += [
    TaskSpec(
        id="MIKASA/PassiveVisualMatch-v0",
        entry_point="membench_envs.envs.native.passive_visual_match:PassiveVisualMatch",
        vector_entry_point="membench_envs.envs.native.passive_visual_match:PassiveVisualMatchVector",
        description=(
            "Passive Visual Match: a colour is shown on the wall next to the agent, then 30 frames of apples "
            "(+1 each), then the agent must step on the pad of that colour among three (+10); 5x5 egocentric image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("object",),
        episode_length=passive_visual_match.episode_length(15, 30, 15),
        xi=(30, 30),
        obs_type="dict",
        action_type="discrete",
        source="TVT",
        kwargs={},
        params=passive_visual_match.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("target_colour",),
        xi_note=(
            "event: the colour, visible in observations 0 ... 13 (t_e = 0, dt = 14); recall: the first action "
            "of the choice phase, t_r = 43 (it can already head for the pad): xi = t_r - t_e - dt + 1 = 30 = "
            "distractor_frames"
        ),
        notes=(
            "MIKASA-Base Passive-VisualMatch-v0 = Ni et al.'s (Memory-RL) passive visual_match: 15/30/15 frames, 10 "
            "apples of reward 1 respawning after 20 frames, final reward 10; actions 0-3 = N, S, W, E (pycolab "
            "order). Upstream the pad colours are shuffled once per environment object and nothing is seedable; here "
            "the pad colours are drawn from the seed (fixed across that seed stream's episodes)."
        ),
    ),
]
