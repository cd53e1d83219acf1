"""Catalogue entries of Mortar Mayhem (Memory Gym, Pleines et al.; listed by MIKASA-Base), re-implemented in numpy
(no extra): see :mod:`membench_envs.envs.memory_gym.mortar_mayhem` for the rules and every decision.

Presets are the ``memory-gym`` 1.0.2 registrations with their default reset parameters (MIKASA-Base vendors
memory-gym's files unchanged, except that its ``Endless-MortarMayhem-v0`` points at a module
``mikasa_base.MemoryGym.env.endless_mortar_mayhem`` that its repository lacks, so ``MIKASA/EndlessMortarMayhem-v0``
follows memory-gym 1.0.2's ``endless_mortar_mayhem.py``):

- ``MIKASA/MortarMayhemGrid-v0`` = ``MortarMayhem-Grid-v0``: grid movement, 5 commands (no diagonals),
  explosion delay 6 / duration 2;
- ``MIKASA/MortarMayhem-v0`` = ``MortarMayhem-v0``: continuous movement (3 pixels a step), 9 commands,
  explosion delay 18 / duration 6;
- ``MIKASA/MortarMayhemBGrid-v0`` / ``MIKASA/MortarMayhemB-v0`` = ``MortarMayhemB-Grid-v0`` / ``MortarMayhemB-v0``:
  the same without the command phase, the sequence given as a one-hot vector (task B of the paper).
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.memory_gym import mortar_mayhem

_EP = "membench_envs.envs.memory_gym.mortar_mayhem:MortarMayhem"
_VEP = "membench_envs.envs.memory_gym.mortar_mayhem:MortarMayhemVector"


def _xi(count: int, duration: int, delay: int, ex_delay: int, ex_duration: int) -> tuple[int, int]:
    """Ξ of the command phase, xi = t_r − t_e − Δt + 1 (the memory paper's definition: an event seen in
    observations t_e … t_e + Δt; one observation is Δt = 0).

    Event: command k, shown in observations k·P … k·P + duration − 1 (P = duration + delay): t_e = k·P,
    Δt = duration − 1. Recall: the first action that can execute it, t_r = F − 1 + k·(ex_delay + ex_duration)
    (F = count·P): action F − 1 is the first of the execution phase (the agent's first move, k = 0); command k − 1
    is verified ex_delay + 1 actions into its window and its red tiles hold the agent for that action and the
    ex_duration − 1 after it, so action F − 1 + k·(ex_delay + ex_duration) is the first that may leave its target
    (tests/envs/test_mortar_mayhem.py measures both on the env)."""
    period, frames = duration + delay, count * (duration + delay)
    xis = [frames - 1 + k * (ex_delay + ex_duration) - k * period - (duration - 1) + 1 for k in range(count)]
    return min(xis), max(xis)


def _spec(env_id: str, upstream: str, grid: bool, show: bool) -> TaskSpec:
    allowed, ex_duration, ex_delay = (5, 2, 6) if grid else (9, 6, 18)
    kwargs = {
        "grid": grid,
        "show_commands": show,
        "allowed_commands": allowed,
        "explosion_duration": (ex_duration,),
        "explosion_delay": (ex_delay,),
    }
    if not grid and not show:
        kwargs["spawn_jitter"] = 2  # memory-gym's MortarMayhemB-v0 draws a start offset in [-2, 2) pixels per axis
    T = mortar_mayhem.episode_length(10, 3 if show else 0, 1 if show else 0, ex_delay, ex_duration)
    movement = (
        "grid movement (turn left / right, forward)" if grid else "continuous movement (8 directions, 3 pixels a step)"
    )
    if show:
        what = (
            f"10 commands (of {allowed}) are shown one by one in the middle of the 84x84 screen, then the agent "
            "must walk them tile by tile in order"
        )
        xi = _xi(10, 3, 1, ex_delay, ex_duration)
        xi_note = (
            "event: command k, observations k*4 ... k*4+2 (t_e = 4k, dt = 2); recall: the first action that can "
            f"execute it, a_(39 + k*{ex_delay + ex_duration}): a_39 is the first action of the execution phase, and "
            f"for k >= 1 the first that may leave command k-1's target (its red tiles last actions "
            f"a_(39 + k*{ex_delay + ex_duration} - {ex_duration}) ... a_(39 + k*{ex_delay + ex_duration} - 1)). "
            f"xi = t_r - t_e - dt + 1 = 38 + {ex_delay + ex_duration - 4}k, k = 0 ... 9"
            + (
                ", the memory paper's Table 2 values. (Until this was measured the catalogue had [37, 218]: dt = 3, "
                "the event's length instead of the paper's dt, and t_r one action late for k >= 1.)"
                if not grid
                else ""
            )
        )
    else:
        what = (
            f"10 commands (of {allowed}) are given as a one-hot vector in every observation (task B); the agent "
            "must walk them tile by tile in order"
        )
        xi = None
        xi_note = (
            "undefined: the sequence is in every observation; what must be remembered is only how many "
            "commands are done, a count that each explosion (red tiles) updates"
        )
    return TaskSpec(
        id=env_id,
        entry_point=_EP,
        vector_entry_point=_VEP,
        description=(
            f"Mortar Mayhem{' B' if not show else ''}: {what}; {movement}; +0.1 per command, a wrong tile ends the "
            "episode"
        ),
        suites=("MIKASA-Base",),
        memory_types=("capacity", "sequential"),
        episode_length=T,
        xi=xi,
        xi_paper=(38, 218) if (show and not grid) else None,
        obs_type="image" if show else "dict",
        action_type="discrete" if grid else "multi-discrete",
        source="MemoryGym",
        score="return",  # the rule: membench_envs.envs.memory_gym
        kwargs=kwargs,
        params=mortar_mayhem.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("commands_shown", "current_command", "target_tile"),
        xi_note=xi_note,
        notes=(
            f"memory-gym 1.0.2 {upstream} with its default reset parameters (arena 5x5, 10 commands, "
            f"{'show 3 + 1 steps each, ' if show else ''}explosion delay {ex_delay} / duration {ex_duration}, "
            "+0.1 per command, 0 on failure and at the end); same seed, same episode as memory-gym; the observation "
            "is its render() orientation (its step() returns the transpose)"
        ),
    )


def _endless() -> TaskSpec:
    return TaskSpec(
        id="MIKASA/EndlessMortarMayhem-v0",
        entry_point=_EP,
        vector_entry_point=_VEP,
        description=(
            "Endless Mortar Mayhem: one command (of 9) is shown, the agent walks it; each round adds one shown "
            "command and the whole sequence is walked again (targets wrap around a 6x6 arena, the agent wraps "
            "around the screen); +0.1 per command, a wrong tile ends the episode"
        ),
        suites=("MIKASA-Base",),
        memory_types=("capacity", "sequential"),
        episode_length=None,
        xi=None,
        obs_type="image",
        action_type="multi-discrete",
        source="MemoryGym",
        score="return",  # the rule: membench_envs.envs.memory_gym
        kwargs={
            "grid": False,
            "endless": True,
            "arena_size": 6,
            "allowed_commands": 9,
            "command_count": (1,),
            "explosion_duration": (6,),
            "explosion_delay": (18,),
            "spawn_jitter": 2,
        },
        params=mortar_mayhem.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("commands_shown", "current_command", "target_tile"),
        xi_note=(
            "unbounded: command k is shown once, in round k, and must be recalled in every later round, "
            "so the horizon grows with the episode"
        ),
        notes=(
            "memory-gym 1.0.2 Endless-MortarMayhem-v0 with its default reset parameters (6x6 arena, 1 initial "
            "command, show 3 + 1 steps, explosion delay 18 / duration 6, +0.1 per command, no time limit); same "
            "seed, same episode as memory-gym; truncated (not terminated) at max_steps if given, and when the "
            "sequence would exceed max_commands (100). Provenance: MIKASA-Base (0.1.0b1) registers "
            "Endless-MortarMayhem-v0 with the entry point mikasa_base.MemoryGym.env.endless_mortar_mayhem, a module "
            "its repository does not contain (making it fails there; it vendors memory-gym's other files "
            "unchanged), so this ID follows memory-gym 1.0.2's endless_mortar_mayhem.py"
        ),
    )


TASKS: list[TaskSpec] = [
    _spec("MIKASA/MortarMayhemGrid-v0", "MortarMayhem-Grid-v0", grid=True, show=True),
    _spec("MIKASA/MortarMayhemBGrid-v0", "MortarMayhemB-Grid-v0", grid=True, show=False),
    _spec("MIKASA/MortarMayhem-v0", "MortarMayhem-v0", grid=False, show=True),
    _spec("MIKASA/MortarMayhemB-v0", "MortarMayhemB-v0", grid=False, show=False),
    _endless(),
]
