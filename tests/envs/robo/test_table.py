"""The one MIKASA-Robo table: every ID's catalogue entry, phase table, task-class defaults come
from its row; Ξ follows the memory paper's convention ξ = t_r − t_e − Δt + 1 (one test per family).

Ξ is recomputed here independently of ``Timing.xi``: from the ID's phase table alone, enumerating every event-recall
pair with :class:`membench_envs.memory.EventRecall` (events: the cue phases; recalls: the step t + 1 after each
action of the decision window, up to T).
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from membench_envs.catalogue import robo as table
from membench_envs.memory import EventRecall, correlation_horizons

import membench_envs

#: family -> (names of its cue phases, name of the phase whose first step starts the decision window)
CUES_AND_DECISION = {
    "RememberColor": (("cue",), "choice"),
    "RememberShape": (("cue",), "choice"),
    "RememberShapeAndColor": (("cue",), "choice"),
    "ShellGameTouch": (("observation",), "occlusion"),
    "ShellGamePush": (("observation",), "occlusion"),
    "ShellGamePick": (("observation",), "occlusion"),
    "BunchOfColors": (("cue",), "selection"),
    "SeqOfColors": (tuple(f"cue_{i}" for i in range(9)), "selection"),
    "ChainOfColors": (tuple(f"cue_{i}" for i in range(9)), "selection"),
}
#: The values the convention gives at the paper's timing (issue 12: Remember* [7, 56], ShellGame [2, 86]).
EXPECTED_XI = {
    "RememberColor": (7, 56), "RememberShape": (7, 56), "RememberShapeAndColor": (7, 56),
    "ShellGameTouch": (2, 86), "ShellGamePush": (2, 86), "ShellGamePick": (2, 86),
    "BunchOfColors": (7, 116), "SeqOfColors": (7, 116), "ChainOfColors": (7, 116),
}


def _xi_from_phase_table(phases, T, cue_names, decision_name) -> tuple[int, int]:
    starts = dict(phases)
    ends = [s for _, s in phases[1:]] + [T]
    cues = [(s, e - s) for (name, s), e in zip(phases, ends, strict=True) if name in cue_names]
    assert cues, phases
    decision = starts[decision_name]
    pairs = [EventRecall(t_e, dt, t + 1) for t_e, dt in cues for t in range(decision, T)]
    return correlation_horizons(pairs)


@pytest.mark.parametrize("family", list(CUES_AND_DECISION))
def test_xi_of_every_family_follows_the_memory_paper_convention(family):
    presets = [p for p in table.PRESETS if p.family.name == family]
    assert presets
    cue_names, decision = CUES_AND_DECISION[family]
    for p in presets:
        spec = membench_envs.info(p.id)
        assert spec.xi == _xi_from_phase_table(table.PHASES[p.id], spec.episode_length, cue_names, decision), p.id
        assert spec.xi == EXPECTED_XI[family], p.id
        assert f"={spec.xi[0]} " in spec.xi_note and spec.xi_note.endswith(f"={spec.xi[1]}")


def test_xi_follows_custom_timing():
    """A longer delay moves the horizons with it (the long RememberColor of the paper's Code 5)."""
    t = table.remember_timing(50, 900)
    assert t.T == 1000 and t.xi() == (951 - 0 - 50 + 1, 1000 - 0 - 50 + 1) == (902, 951)
    assert _xi_from_phase_table(t.phases, t.T, ("cue",), "choice") == (902, 951)
    seq = table.colors_timing(4, 3, 10, sequential=True)
    assert _xi_from_phase_table(seq.phases, seq.T, tuple(f"cue_{i}" for i in range(4)), "selection") == seq.xi()


def test_every_id_is_one_row_of_the_table():
    robo_ids = [s.id for s in membench_envs.all_tasks() if s.extra == "robo"]
    assert sorted(robo_ids) == sorted(p.id for p in table.PRESETS)
    assert len(robo_ids) == 32
    for p in table.PRESETS:
        spec = membench_envs.info(p.id)
        assert dict(spec.kwargs) == {"robo_env": p.family.cls_path, "membench_id": p.id, **p.knobs}
        assert spec.episode_length == p.timing.T and table.PHASES[p.id] == p.timing.phases
        assert table.PARAMETERS[p.id] == p.parameters
        assert spec.memory_types == p.family.memory_types and spec.oracle_keys == p.family.oracle_keys
    with pytest.raises(ValueError, match="not kwargs of RememberColor"):
        table.Preset("RememberColor4", table.REMEMBER_COLOR, {"shapes": 4})


def test_memory_types_of_the_new_families_follow_table_1():
    assert membench_envs.info("MIKASA/BunchOfColors7-v0").memory_types == ("capacity",)
    assert membench_envs.info("MIKASA/SeqOfColors3-v0").memory_types == ("capacity",)
    assert membench_envs.info("MIKASA/ChainOfColors5-v0").memory_types == ("sequential",)


def test_each_id_is_registered_once_with_gymnasium_and_never_with_maniskill():
    """Users see one ID per task, ``MIKASA/<Name>-v0``; importing the task classes registers nothing with ManiSkill
    (whose ``register_env`` would also add a second gymnasium ID)."""
    from mani_skill.utils.registration import REGISTERED_ENVS
    from membench_envs.robo.base import MemoryTabletopEnv
    from membench_envs.robo.entry import _load_class

    for p in table.PRESETS:
        cls = _load_class(p.family.cls_path)
        assert issubclass(cls, MemoryTabletopEnv)
    assert [uid for uid, spec in REGISTERED_ENVS.items() if issubclass(spec.cls, MemoryTabletopEnv)] == []
    robo = [env_id for env_id, spec in gym.registry.items() if "membench_envs.robo" in str(spec.entry_point)]
    assert sorted(robo) == sorted(p.id for p in table.PRESETS)
    from membench_envs.robo.colors import SeqOfColorsEnv
    from membench_envs.robo.remember_color import RememberColorEnv
    from membench_envs.robo.shell_game import ShellGamePickEnv

    assert (RememberColorEnv.TIME_OFFSET, RememberColorEnv.DELTA_TIME, RememberColorEnv.GOAL_THRESH) == (5, 5, 0.05)
    assert list(ShellGamePickEnv.GOAL_OFFSET) == table.PARAMETERS["MIKASA/ShellGamePick-v0"]["goal_offset"]
    assert (SeqOfColorsEnv.STEP_DURATION, SeqOfColorsEnv.DELTA_TIME, SeqOfColorsEnv.COLORS) == (5, 5, 9)


def test_an_id_builds_its_preset(robo_env):
    """``MIKASA/SeqOfColors5-v0`` is SeqOfColors with N = 5 and T = 120, its phases those of the table."""
    base = robo_env("MIKASA/SeqOfColors5-v0", obs_variant="full").unwrapped
    assert base.sequence_length == 5 and base.max_episode_steps == 120
    assert base.phase_starts == tuple(s for _, s in table.PHASES["MIKASA/SeqOfColors5-v0"])
