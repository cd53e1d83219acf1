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


def test_task_classes_take_kwargs_defaults_bounds_and_timing_from_the_table():
    """A family class repeats none of its catalogue defaults as a class constant and sets no T: ``knob`` resolves a
    kwarg (the given value, else a subclass's constant of the upper-case name (App. M), else the catalogue's default)
    and checks it against the catalogue's Param; ``timing`` is the catalogue's rule at the instance's knobs."""
    from membench_envs.robo.entry import _load_class
    from membench_envs.robo.remember_color import RememberColorEnv

    for f in table.FAMILIES:
        cls = _load_class(f.cls_path)
        assert cls.catalogue_family() is f
        assert [p.name for p in f.params if hasattr(cls, p.name.upper())] == [], f.name
        assert cls.MAX_EPISODE_STEPS is None, f.name

    class RememberColor4Debug(RememberColorEnv):  # App. M, Code 15
        COLORS = 4
        DELTA_TIME = 100

    plain, custom = RememberColorEnv.__new__(RememberColorEnv), RememberColor4Debug.__new__(RememberColor4Debug)
    assert RememberColor4Debug.catalogue_family() is table.REMEMBER_COLOR
    assert (plain.knob("colors"), plain.knob("colors", 9), custom.knob("colors"), custom.knob("colors", 5)) == (
        3, 9, 4, 5)
    for name in ("time_offset", "delta_time"):
        plain.knob(name), custom.knob(name)
    assert plain.timing() == table.remember_timing(5, 5) and custom.timing() == table.remember_timing(5, 100)
    with pytest.raises(ValueError, match=r"RememberColorEnv: colors=10 is not allowed; colors must be an int >= 1"):
        plain.knob("colors", 10)
    with pytest.raises(TypeError, match="colors=2.5"):
        plain.knob("colors", 2.5)
    with pytest.raises(KeyError, match="'shapes' is not a kwarg of RememberColor"):
        plain.knob("shapes", 3)


def test_the_catalogue_bounds_are_the_palettes_and_shape_lists():
    from membench_envs.robo.remember_color import COLORS
    from membench_envs.robo.remember_shape_and_color import SC_COLORS, SC_SHAPES
    from membench_envs.robo.shapes import SHAPE_NAMES

    high = lambda family, name: family.param(name).high  # noqa: E731
    assert high(table.REMEMBER_COLOR, "colors") == high(table.BUNCH_OF_COLORS, "colors") == len(COLORS) == 9
    assert high(table.REMEMBER_SHAPE, "shapes") == len(SHAPE_NAMES) == 9
    assert high(table.REMEMBER_SHAPE_AND_COLOR, "n_shapes") == len(SC_SHAPES)
    assert high(table.REMEMBER_SHAPE_AND_COLOR, "n_colors") == len(SC_COLORS)


def test_an_id_builds_its_preset(robo_env):
    """``MIKASA/SeqOfColors5-v0`` is SeqOfColors with N = 5 and T = 120, its phases those of the table."""
    base = robo_env("MIKASA/SeqOfColors5-v0", obs_variant="full").unwrapped
    assert base.sequence_length == 5 and base.max_episode_steps == 120
    assert base.phase_starts == tuple(s for _, s in table.PHASES["MIKASA/SeqOfColors5-v0"])
