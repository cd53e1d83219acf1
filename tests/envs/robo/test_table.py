"""The one MIKASA-Robo table (``membench_envs.catalogue.robo``): every ID's catalogue entry, phase table, kwargs and
defaults come from its row, the task classes take theirs from it, each ID is registered once; the rows of every family
(T, memory type, oracle keys, parameters, notes); Ξ follows the memory paper's convention ξ = t_r − t_e − Δt + 1.
No environment is built here but in the last test.

Ξ is recomputed here independently of ``Timing.xi``: from the ID's phase table alone, enumerating every event-recall
pair with :class:`membench_envs.memory.EventRecall` (events: the cue phases; recalls: the step t + 1 after each
action of the decision window, up to T).
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from membench_envs.catalogue import robo as table
from membench_envs.catalogue import robo_shell_game
from membench_envs.memory import EventRecall, correlation_horizons
from membench_envs.robo import task_info

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
    "RememberColor": (7, 56),
    "RememberShape": (7, 56),
    "RememberShapeAndColor": (7, 56),
    "ShellGameTouch": (2, 86),
    "ShellGamePush": (2, 86),
    "ShellGamePick": (2, 86),
    "BunchOfColors": (7, 116),
    "SeqOfColors": (7, 116),
    "ChainOfColors": (7, 116),
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
        3,
        9,
        4,
        5,
    )
    for name in ("time_offset", "delta_time"):
        plain.knob(name), custom.knob(name)
    assert plain.timing() == table.remember_timing(5, 5) and custom.timing() == table.remember_timing(5, 100)
    with pytest.raises(ValueError, match=r"RememberColorEnv: colors=10 is not allowed; colors must be an int >= 1"):
        plain.knob("colors", 10)
    with pytest.raises(TypeError, match=r"colors=2\.5"):
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


def test_common_kwargs_and_the_default_reward_mode():
    """Upstream MIKASA-Robo keeps ManiSkill's reward-mode list, whose first entry (normalized_dense) ManiSkill takes
    when none is given; ours lists sparse first, so the default is set, once, in the catalogue's Param, and every ID
    shows it (what `membench-envs info` prints)."""
    assert {p.name: p.default for p in table.COMMON_PARAMS}["reward_mode"] == "normalized_dense"
    assert table.DEFAULT_REWARD_MODE == "normalized_dense" and table.REWARD_MODES[0] == "sparse"
    for preset in table.PRESETS:
        params = {p.name: p.default for p in membench_envs.info(preset.id).params}
        assert params["reward_mode"] == "normalized_dense", preset.id
    assert set(table.PAPER_OBS_MODES.values()) <= set(table.VARIANTS)
    assert table.ROBO_VARIANTS == ("partial", "oracle", "full", "rgb")


def test_robo_ids_are_in_the_catalogue_with_their_suite():
    ids = membench_envs.suite("MIKASA-Robo")
    assert len(ids) == 32 and "MIKASA/RememberColor9-v0" in ids


# --------------------------------------------------------------------------------------------------------------
# the rows of each family, and task_info
# --------------------------------------------------------------------------------------------------------------
REMEMBER_IDS = [
    f"MIKASA/Remember{f}-v0"
    for f in (
        "Color3",
        "Color5",
        "Color9",
        "Shape3",
        "Shape5",
        "Shape9",
        "ShapeAndColor3x2",
        "ShapeAndColor3x3",
        "ShapeAndColor5x3",
    )
]
SPEEDS = {"Slow": (0.25, 0.5), "Medium": (0.5, 0.75), "Fast": (0.75, 1.0)}
INTERCEPT_IDS = [f"MIKASA/Intercept{m}-v0" for m in SPEEDS] + [f"MIKASA/InterceptGrab{m}-v0" for m in SPEEDS]
ROTATE_MODES = {"Pos": "pos_angle", "PosNeg": "pos_neg_angle"}
ROTATE_IDS = [f"MIKASA/Rotate{f}{m}-v0" for f in ("Lenient", "Strict") for m in ROTATE_MODES]


def test_remember_rows_and_task_info():
    for env_id in REMEMBER_IDS:
        info = task_info(env_id)
        assert info["episode_timeout"] == 60
        assert info["memory_types"] == ("object",)
        assert info["phases"] == (("cue", 0), ("delay", 5), ("choice", 10))
        assert env_id in gym.registry
    assert task_info("MIKASA/RememberColor9-v0")["oracle_keys"] == ("true_color_indices",)
    assert task_info("MIKASA/RememberShapeAndColor3x2-v0")["oracle_keys"] == ("true_shapes_info", "true_colors_info")
    assert task_info("MIKASA/RememberShapeAndColor3x2-v0")["parameters"]["n_shapes"] == 3
    with pytest.raises(ValueError, match="not a MIKASA-Robo task"):
        task_info("MIKASA/TMazePassive-v0")


def test_shell_game_rows_and_task_info():
    ids = [s.id for s in robo_shell_game.TASKS]
    assert ids == [f"MIKASA/ShellGame{m}-v0" for m in ("Touch", "Push", "Pick")]
    for spec in robo_shell_game.TASKS:
        assert spec.episode_length == 90 and spec.oracle_keys == ("cup_with_ball_number",)
        assert spec.memory_types == ("object",) and spec.extra == "robo"
        assert table.PHASES[spec.id] == (("observation", 0), ("occlusion", 5), ("action", 6))
        params = table.PARAMETERS[spec.id]
        assert params["time_offset"] == 5 and params["goal_thresh"] == 0.08 and params["min_dist"] == 0.2
        assert params["ball_radius"] == 0.02
    info = task_info("MIKASA/ShellGamePick-v0")
    assert info["episode_timeout"] == 90 and info["oracle_keys"] == ("cup_with_ball_number",)
    assert info["phases"] == (("observation", 0), ("occlusion", 5), ("action", 6))
    assert info["parameters"]["goal_offset"] == [0.0, 0.0, 0.125]


def test_intercept_rows():
    for env_id in INTERCEPT_IDS:
        spec = membench_envs.info(env_id)
        mode = env_id.split("Intercept")[-1].removeprefix("Grab").removesuffix("-v0")
        assert spec.episode_length == 90 and spec.memory_types == ("spatial",) and spec.extra == "robo"
        assert spec.oracle_keys == ("initial_velocity",)
        assert table.PHASES[env_id] == (("rolling", 0),)
        params = table.PARAMETERS[env_id]
        assert params["velocity_range"] == list(SPEEDS[mode]) and params["ball_radius"] == 0.02
        if "InterceptGrab" in env_id:
            assert "goal_radius" not in params
        else:
            assert params["goal_radius"] == 0.1
        assert "strict_success=True" in spec.notes


def test_intercept_xi_is_two_from_the_phase_table():
    """The ball is in view on every observation; its velocity needs the previous frame: for every action on
    observation t (t = 1 .. T-1; at t = 0 there is no previous frame) the event is observation t - 1 (Δt = 1) and the
    recall t_r = t + 1, so ξ = 2 for every pair (the memory paper's ξ = t_r − t_e − Δt + 1)."""
    for env_id in INTERCEPT_IDS:
        spec = membench_envs.info(env_id)
        phases, T = table.PHASES[env_id], spec.episode_length
        assert phases[0] == ("rolling", 0) and len(phases) == 1  # visible from t = 0 to T - 1, never hidden
        pairs = [EventRecall(t - 1, 1, t + 1) for t in range(1, T)]
        assert correlation_horizons(pairs) == spec.xi == (2, 2)
        assert spec.xi_note.endswith("min=2 max=2") and "t_e = t-1" in spec.xi_note
    timing = table.tracking_timing(200)
    assert timing.xi() == (2, 2) and timing.events()[-1] == (198, 1, 200)


def test_rotate_rows():
    for env_id in ROTATE_IDS:
        spec = membench_envs.info(env_id)
        assert spec.episode_length == 90 and spec.memory_types == ("spatial",) and spec.extra == "robo"
        assert spec.oracle_keys == ("y_angle_diff",)
        assert spec.variants == ("partial", "oracle", "full", "rgb", "prompt")
        assert table.PHASES[env_id] == (("action", 0),)
        params = table.PARAMETERS[env_id]
        mode = ROTATE_MODES[
            env_id.removesuffix("-v0").removeprefix("MIKASA/Rotate").removeprefix("Lenient").removeprefix("Strict")
        ]
        assert params["mode"] == mode and params["angle_threshold"] == 0.1
        assert (params["peg_half_width"], params["peg_half_length"], params["angle_sampling"]) == (0.025, 0.12, "code")
        assert ("pos_threshold" in params) == ("RotateStrict" in env_id)
        assert "strict_success=True" in spec.notes and "angle_sampling='paper'" in spec.notes
    strict = membench_envs.info("MIKASA/RotateStrictPos-v0").notes
    assert "|x - x0| < 0.05 and |y - y0| < 0.05" in strict and "< 0.05 (Euclidean)" in strict
    assert "prompt" not in membench_envs.info("MIKASA/InterceptSlow-v0").variants


def test_rotate_xi_from_the_phase_table():
    """The peg's start yaw is certainly shown on observation 0 only (t_e = 0, Δt = 1); every action from observation
    1 on needs it (t_r = t + 1 = 2 .. 90), so ξ = t_r − 0 − 1 + 1 ranges over [2, 90]."""
    for env_id in ROTATE_IDS:
        spec = membench_envs.info(env_id)
        phases, T = table.PHASES[env_id], spec.episode_length
        assert phases == (("action", 0),)
        pairs = [EventRecall(0, 1, t + 1) for t in range(1, T)]
        assert correlation_horizons(pairs) == spec.xi == (2, 90)
        assert spec.xi_note.startswith("the peg's start yaw") and spec.xi_note.endswith("=2 to 90-0-1+1=90")
    assert table.rotate_timing(200).xi() == (2, 200)


def test_take_it_back_row():
    spec = membench_envs.info("MIKASA/TakeItBack-v0")
    assert spec.episode_length == 180 and spec.memory_types == ("spatial",) and spec.extra == "robo"
    assert spec.oracle_keys == ("xyz_initial",) and "prompt" not in spec.variants
    assert table.PHASES[spec.id] == (("action", 0),)
    assert table.PARAMETERS[spec.id] == {"goal_radius": 0.08, "cube_halfsize": 0.02}
    assert "strict_success=True" in spec.notes and "within goal_radius (0.08 m) of its start" in spec.notes
    assert "0.2% of episodes" in spec.notes


def test_take_it_back_xi_from_the_phase_table():
    """The cube's start is certainly shown on observation 0 only (t_e = 0, Δt = 1; its region is never rendered);
    the return may begin on any later step (the goal is a state, not a step), so every action from observation 1 on
    may recall it (t_r = t + 1 = 2 .. 180): ξ = t_r − 0 − 1 + 1 over [2, 180]."""
    spec = membench_envs.info("MIKASA/TakeItBack-v0")
    T = spec.episode_length
    pairs = [EventRecall(0, 1, t + 1) for t in range(1, T)]
    assert correlation_horizons(pairs) == spec.xi == (2, 180)
    assert spec.xi_note.startswith("the cube's start position") and spec.xi_note.endswith("=2 to 180-0-1+1=180")
    assert table.take_it_back_timing(300).xi() == (2, 300)
