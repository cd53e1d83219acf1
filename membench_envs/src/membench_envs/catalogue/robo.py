"""MIKASA-Robo (the ``[robo]`` extra, ManiSkill3): the ONE table of every robot task. Plain data: no ManiSkill import.

Every ID is one :class:`Preset` row of :data:`PRESETS`: a :class:`Family` (its task class, kwargs, memory types,
oracle keys and timing rule) plus the preset's knob values (``colors=9``, ``sequence_length=5``, ...). Everything
else is derived from that row:

- the catalogue entry (:class:`~membench_envs.catalogue.TaskSpec`: T, Ξ and its note, kwargs, description);
- the phase table (:data:`PHASES`) and default parameters (:data:`PARAMETERS`) read by ``membench_envs.robo.task_info``;
- the task class's kwargs (defaults, allowed values), phases and T: ``MemoryTabletopEnv.knob`` and ``.timing``
  (``membench_envs.robo.base``) read this row; the classes repeat none of it and keep the rules.

``gym.make("MIKASA/<Name>-v0")`` builds the family class with the preset's knobs as registered kwargs (a kwarg given
to ``gym.make`` overrides them). Add an ID with one :class:`Preset` row; add a family with one :class:`Family`.

**One registration per ID.** Each ID is registered once, with gymnasium, as ``MIKASA/<Name>-v0`` (by
``membench_envs.registration``, from :data:`TASKS` and :data:`SHELL_GAME_TASKS`). There is no ManiSkill registration
(``mani_skill.utils.registration.register_env``): nothing here needs one. ManiSkill's registry serves only ManiSkill's
own ``gym.make`` / ``gym.make_vec`` (its ``ManiSkillVectorEnv``) and example scripts; membench's GPU path builds the
task class with ``num_envs`` directly (``membench_envs.robo.entry.make``: ``BaseEnv`` runs the batched ``physx_cuda``
simulation by itself), ``membench_envs.robo.make_vec`` / ``gym.make_vec`` give the vector env, and ManiSkill's
wrappers (``RecordEpisode``, ...) run on ``gym.make("MIKASA/<Name>-v0", batched=True)``.

**Correlation horizons** follow the memory paper's convention ξ = t_r − t_e − Δt + 1 (``membench_envs.memory``):
an event is a cue shown on observations t_e … t_e + Δt − 1, and a recall is the step t_r = t + 1 whose action a_t
(taken on observation t) needs the cue, for every t from the decision phase's first observation to T − 1. So a
Remember* cue at t = 0–4 (Δt = 5) and choices from t = 10 give ξ ∈ [11 − 0 − 5 + 1, 60 − 0 − 5 + 1] = [7, 56].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.params import Param

_EP = "membench_envs.robo.entry:make_robo_env"
_VEP = "membench_envs.robo.entry:make_robo_vec"

# ----------------------------------------------------------------------------------------------------------------
# the platform's kwargs (membench_envs.robo.base and .entry read their choices and defaults from here)
# ----------------------------------------------------------------------------------------------------------------
#: Observation variants of the platform (``membench_envs.robo.base``); the first three are membench's ladder.
VARIANTS = ("partial", "oracle", "full", "rgb", "prompt")
#: The variant when neither ``obs_variant`` nor ``obs_mode`` is given.
DEFAULT_VARIANT = "partial"
#: The variants of a family without a static prompt (every family but Rotate*).
ROBO_VARIANTS = tuple(v for v in VARIANTS if v != "prompt")
#: The paper's observation-mode names (the ``obs_mode`` kwarg) -> variants.
PAPER_OBS_MODES = {
    "rgb+joints": "partial",
    "rgb+joint": "partial",
    "rgb+joints+oracle": "oracle",
    "state": "full",
    "rgb": "rgb",
    "rgb+joints+prompt": "prompt",
}
#: ManiSkill controllers the tasks take: 8-D joint deltas + gripper, or 7-D end-effector pose deltas + gripper.
CONTROL_MODES = ("pd_joint_delta_pos", "pd_ee_delta_pose")
#: Reward modes (``sparse`` first, as upstream's list; the default is :data:`DEFAULT_REWARD_MODE`).
REWARD_MODES = ("sparse", "dense", "normalized_dense", "none")
#: Robots: the Panda with a wrist camera (every image variant needs it), or without.
ROBOT_UIDS = ("panda_wristcam", "panda")

#: The kwargs every MIKASA-Robo ID takes (see ``membench_envs.robo.entry``); ManiSkill's own ``BaseEnv`` kwargs
#: (``sim_config``, ``sensor_configs``, ...) pass through unchecked here and are checked by ManiSkill.
COMMON_PARAMS: tuple[Param, ...] = (
    Param(
        "obs_variant",
        "choice",
        None,
        none_ok=True,
        choices=VARIANTS,
        doc=f"the observation (None: {DEFAULT_VARIANT!r}, or what obs_mode says)",
    ),
    Param(
        "obs_mode",
        "choice",
        None,
        none_ok=True,
        choices=tuple(PAPER_OBS_MODES),
        doc="the paper's name for the observation, instead of obs_variant",
    ),
    Param("num_envs", "int", 1, low=1, doc="sub-scenes simulated together (> 1 needs a GPU)"),
    Param("sim_backend", "choice", "auto", choices=("auto", "physx_cpu", "physx_cuda", "cpu", "gpu")),
    Param("render_backend", "choice", None, none_ok=True, choices=("none", "cpu", "gpu", "sapien_cpu", "sapien_cuda")),
    Param("batched", "bool", None, none_ok=True, doc="force the batched torch interface"),
    Param("clip_actions", "bool", False, doc="clip out-of-range actions instead of raising"),
    Param("render_overlay", "bool", False, doc="draw the phase / reward overlay on rendered frames"),
    Param("terminate_on_success", "bool", True, doc="False: every episode runs the full T steps"),
    Param("episode_steps", "int", None, low=1, none_ok=True, doc="T (None: the task's default)"),
    Param("robot_init_qpos_noise", "float", 0.02, low=0.0),
    Param("control_mode", "choice", CONTROL_MODES[0], choices=CONTROL_MODES),
    Param(
        "reward_mode",
        "choice",
        "normalized_dense",
        none_ok=True,
        choices=REWARD_MODES,
        doc="None: the default, upstream MIKASA-Robo's (ManiSkill's first supported mode there)",
    ),
    Param("robot_uids", "choice", ROBOT_UIDS[0], choices=ROBOT_UIDS),
    Param(
        "strict_success",
        "bool",
        False,
        doc="the paper's success wording instead of the public code's rule (see the task's notes)",
    ),
)

#: ``reward_mode`` when the kwarg is not given (or None): upstream MIKASA-Robo's default, ``normalized_dense`` (its
#: tasks keep ManiSkill's reward-mode list, whose first entry ManiSkill takes when none is given; its PPO baselines
#: default to it too). Read from the one declaration above.
DEFAULT_REWARD_MODE: str = next(p.default for p in COMMON_PARAMS if p.name == "reward_mode")
#: Every common kwarg's default, read from the one declaration above (the platform's signature defaults).
COMMON_DEFAULTS: Mapping[str, Any] = MappingProxyType({p.name: p.default for p in COMMON_PARAMS})

#: Seconds a touch must last under ``strict_success=True`` (the paper: "contact ... for at least 0.1 seconds").
STRICT_HOLD_SECONDS = 0.1
#: ShellGamePick under ``strict_success=True``: the mug's open end at least this high above the table (the paper:
#: "elevating the correct mug above 0.1m").
STRICT_LIFT = 0.1
#: ShellGamePush under ``strict_success=True``: the mug moved forward (+x) by at least this much (the paper: "moving
#: forward the correct mug to the target zone", whose centre is 0.1 m ahead).
STRICT_PUSH = 0.1
#: Intercept under ``strict_success=True``: the ball counts as "at rest" in the goal zone below this speed (m/s; the
#: paper: "the ball must come to rest within the target area", no number given).
STRICT_REST_SPEED = 0.05
#: InterceptGrab under ``strict_success=True``: the grasped ball's bottom at least this high above the table (m; Table
#: 1: "catch the ball with the gripper and lift it up", no number given).
STRICT_GRAB_LIFT = 0.05
#: Rotate* under ``strict_success=True``: the peg counts as "stable" below this angular speed (rad/s; the paper:
#: "maintaining the final orientation in a stable position", no number given; the arm's own static threshold).
STRICT_PEG_SPIN = 0.2
#: RotateStrict* under ``strict_success=True``: the peg's long axis at most this far out of the table plane (rad; the
#: paper: "no significant deviation in other rotation axes", no number given; the same as the angle threshold).
STRICT_PEG_TILT = 0.1


# ----------------------------------------------------------------------------------------------------------------
# timing: phases, T and the cue / decision windows -> correlation horizons
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Timing:
    """The phase table of one task at given knobs, and what Ξ is derived from."""

    phases: tuple[tuple[str, int], ...]
    """((phase, first observation index), ...), starting at 0."""
    T: int
    """Default episode length (truncation)."""
    cues: tuple[tuple[int, int], ...]
    """The memory events: (t_e, Δt) = shown on observations t_e … t_e + Δt − 1."""
    decision: int
    """First observation whose action needs the cues (the decision phase's first step)."""

    def xi(self, T: int | None = None) -> tuple[int, int]:
        """(min ξ, max ξ) with ξ = t_r − t_e − Δt + 1, t_r = t + 1 for every t in [decision, T − 1]."""
        T = self.T if T is None else T
        first, last = self.decision + 1, T
        lows = [first - t_e - dt + 1 for t_e, dt in self.cues]
        highs = [last - t_e - dt + 1 for t_e, dt in self.cues]
        return max(1, min(lows)), max(1, max(highs))

    def xi_note(self) -> str:
        lo, hi = self.xi()
        cues = ", ".join(f"t={t_e}..{t_e + dt - 1}" for t_e, dt in self.cues)
        late = max(self.cues)
        early = min(self.cues)
        return (
            f"cue(s) on observations {cues}; the actions on observations t={self.decision}..{self.T - 1} need them "
            f"(t_r = t+1 = {self.decision + 1}..{self.T}); xi = t_r - t_e - dt + 1 ranges from "
            f"{self.decision + 1}-{late[0]}-{late[1]}+1={lo} to {self.T}-{early[0]}-{early[1]}+1={hi}"
        )


@dataclass(frozen=True)
class TrackingTiming(Timing):
    """A moving object in view on every observation whose *motion* (not a past cue) must be used: a velocity is read
    from two frames at least, so the action on observation t needs observation t − 1 as well as t.

    The event slides with the decision: for every t in [decision, T − 1], t_e = t − 1, Δt = 1 (the previous frame)
    and t_r = t + 1, so ξ = (t + 1) − (t − 1) − 1 + 1 = 2 on every step (more past frames, t_e = t − k + 1 with
    Δt = k − 1, give the same ξ = 2). ``cues`` holds the first of these events."""

    def events(self, T: int | None = None) -> tuple[tuple[int, int, int], ...]:
        """Every (t_e, Δt, t_r) pair: the previous frame, recalled by the action on the current one."""
        T = self.T if T is None else T
        return tuple((t - 1, 1, t + 1) for t in range(max(1, self.decision), T))

    def xi(self, T: int | None = None) -> tuple[int, int]:
        values = [t_r - t_e - dt + 1 for t_e, dt, t_r in self.events(T)]
        return min(values), max(values)

    def xi_note(self) -> str:
        lo, hi = self.xi()
        return (
            f"the ball moves on every observation; its velocity needs two frames, so the action on each observation "
            f"t={self.decision}..{self.T - 1} recalls the previous one (t_e = t-1, dt = 1, t_r = t+1); "
            f"xi = (t+1)-(t-1)-1+1 = {lo} on every step: min={lo} max={hi}"
        )


@dataclass(frozen=True)
class StartPoseTiming(Timing):
    """An object's start pose (Rotate's peg, TakeItBack's cube) is the cue: it is certainly shown on observation 0
    only (from the first action on the robot may move the object, and nothing in the scene marks where it was), and
    it is needed by the action on every later observation, so Δt = 1, t_e = 0 and the decision window starts at
    t = 1 (a_0 is taken on the cue itself: ξ = 1, no memory)."""

    what: str = "the start pose"

    def xi_note(self) -> str:
        return (
            f"{self.what} is certainly visible on observation t=0 only (the robot may move the object from the "
            f"first action on, and nothing marks the start); " + super().xi_note()
        )


def rotate_timing(T: int = 90) -> Timing:
    """Rotate*: one phase (the paper's "action phase"); the peg's start yaw, seen at t = 0, is needed until T."""
    return StartPoseTiming(
        (("action", 0),), T, ((0, 1),), 1, "the peg's start yaw (the peg looks the same after half a turn)"
    )


def take_it_back_timing(T: int = 180) -> Timing:
    """TakeItBack: one scheduled phase; the return starts when the cube first reaches the goal (a state, not a step),
    so the decision window is bounded below by t = 1 and ends at T."""
    return StartPoseTiming(
        (("action", 0),), T, ((0, 1),), 1, "the cube's start position (its region is never rendered to the cameras)"
    )


def tracking_timing(T: int = 90) -> Timing:
    """Intercept / InterceptGrab: one phase (the ball rolls from t = 0); every action from t = 1 needs the motion."""
    return TrackingTiming((("rolling", 0),), T, ((0, 1),), 1)


def remember_timing(time_offset: int, delta_time: int, choice_steps: int = 50, min_T: int = 60) -> Timing:
    """Remember*: cue on [0, time_offset), empty table for delta_time steps, then the choice (T keeps its 50 steps:
    60 at the paper's timing, 1000 for the paper's long variant time_offset=50, delta_time=900)."""
    choice = time_offset + delta_time
    return Timing(
        (("cue", 0), ("delay", time_offset), ("choice", choice)),
        max(min_T, choice + choice_steps),
        ((0, time_offset),),
        choice,
    )


def shell_game_timing(time_offset: int, T: int = 90) -> Timing:
    """ShellGame: ball visible on [0, time_offset), the mugs land at time_offset, the robot acts after."""
    return Timing(
        (("observation", 0), ("occlusion", time_offset), ("action", time_offset + 1)),
        T,
        ((0, time_offset),),
        time_offset,
    )


def colors_timing(
    sequence_length: int,
    step_duration: int,
    delta_time: int,
    sequential: bool,
    min_T: int = 120,
    min_selection: int = 80,
) -> Timing:
    """Bunch/Seq/ChainOfColors: the cue (all N cubes at once for ``step_duration`` steps, or one cube after the other,
    ``step_duration`` steps each), an empty table for ``delta_time`` steps, then the selection. T = 120, or longer
    when the cue and the delay leave fewer than 80 selection steps (SeqOfColors7's window at the paper's timing)."""
    n = sequence_length
    if sequential:
        cues = tuple((i * step_duration, step_duration) for i in range(n))
        phases = tuple((f"cue_{i}", i * step_duration) for i in range(n))
        cue_end = n * step_duration
    else:
        cues = ((0, step_duration),)
        phases = (("cue", 0),)
        cue_end = step_duration
    selection = cue_end + delta_time
    return Timing(
        phases + (("delay", cue_end), ("selection", selection)), max(min_T, selection + min_selection), cues, selection
    )


# ----------------------------------------------------------------------------------------------------------------
# families and presets
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """What every ID of one task class shares."""

    name: str
    cls_path: str
    memory_types: tuple[str, ...]
    oracle_keys: tuple[str, ...]
    params: tuple[Param, ...]
    """The family's own kwargs (App. M knobs); their ``default`` is the family default."""
    timing: Callable[[Mapping[str, Any]], Timing]
    """Knob values -> :class:`Timing`: the catalogue's T, phases and Ξ, and the task class's phase schedule and T
    (``MemoryTabletopEnv.timing`` calls it with the instance's knobs)."""
    describe: Callable[[Mapping[str, Any]], str]
    notes: str = ""
    variants: tuple[str, ...] = ROBO_VARIANTS
    """Observation variants; ``prompt`` only for the families with a static prompt (Rotate*)."""

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params if p.default is not None}

    def param(self, name: str) -> Param:
        """The declaration of the family's kwarg ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{name!r} is not a kwarg of {self.name}; its kwargs: {', '.join(p.name for p in self.params)}")


@dataclass(frozen=True)
class Preset:
    """One ID: ``MIKASA/<name>-v0`` = ``family`` at ``knobs``."""

    name: str
    family: Family
    knobs: Mapping[str, Any] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "knobs", MappingProxyType(dict(self.knobs)))
        unknown = set(self.knobs) - {p.name for p in self.family.params}
        if unknown:
            raise ValueError(f"{self.name}: knobs {sorted(unknown)} are not kwargs of {self.family.name}")

    @property
    def id(self) -> str:
        return f"MIKASA/{self.name}-v0"

    @property
    def parameters(self) -> dict[str, Any]:
        """Every knob at this preset: the family defaults overridden by the preset's knobs (sequences as lists)."""
        merged = {**self.family.defaults, **self.knobs}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in merged.items()}

    @property
    def timing(self) -> Timing:
        return self.family.timing(self.parameters)


def _num(name: str, default: float | None, doc: str = "", low_open: bool = True) -> Param:
    return Param(name, "float", default, low=0.0, low_open=low_open, none_ok=True, doc=doc)


# --- Remember* (App. K.2-K.4) -----------------------------------------------------------------------------------------
_REMEMBER_PARAMS: tuple[Param, ...] = (
    Param("time_offset", "int", 5, low=1, none_ok=True, doc="steps the cue is shown"),
    Param("delta_time", "int", 5, low=0, none_ok=True, doc="steps of empty table after the cue"),
    _num("goal_thresh", 0.05, "touch distance (m)"),
)
_REMEMBER_NOTES = (
    "Choice objects are parked out of physics and cameras while hidden and return to their recorded slots at the "
    "choice step (fixes upstream PR #6); success also requires the choice phase (upstream counts touching the cue). "
    "Success (default, the public code's rule): on one step the TCP is within goal_thresh (0.05 m) of the target's "
    "centre and every arm joint moves slower than 0.2 rad/s. strict_success=True (the paper's 'contact for at least "
    "0.1 s'): that condition holds on 2 consecutive steps (0.1 s at the 20 Hz control rate); neither source senses "
    "contact, so 'contact' is the same distance check in both."
)


def _remember_timing(k: Mapping[str, Any]) -> Timing:
    return remember_timing(int(k["time_offset"]), int(k["delta_time"]))


def _cue_words(k: Mapping[str, Any]) -> str:
    t = _remember_timing(k)
    return f"(t=0-{t.phases[1][1] - 1}), the table is empty (t={t.phases[1][1]}-{t.decision - 1})"


REMEMBER_COLOR = Family(
    "RememberColor",
    "membench_envs.robo.remember_color:RememberColorEnv",
    ("object",),
    ("true_color_indices",),
    _REMEMBER_PARAMS
    + (
        Param("colors", "int", 3, low=1, high=9, none_ok=True, doc="cubes of distinct colours"),
        _num("cube_halfsize", 0.02),
    ),
    _remember_timing,
    lambda k: (
        f"Panda: a cube of one colour is shown {_cue_words(k)}, then {k['colors']} cubes of distinct colours "
        "appear; touch the one with the shown colour and hold still"
    ),
    _REMEMBER_NOTES,
)
REMEMBER_SHAPE = Family(
    "RememberShape",
    "membench_envs.robo.remember_shape:RememberShapeEnv",
    ("object",),
    ("true_shape_indices",),
    _REMEMBER_PARAMS
    + (
        Param("shapes", "int", 3, low=1, high=9, none_ok=True, doc="objects of distinct shapes"),
        _num("shape_scale", 0.02),
        Param("color", "ints", (0, 0, 255, 255), low=0, high=255, length=(3, 4), none_ok=True, doc="RGB(A), 0-255"),
    ),
    _remember_timing,
    lambda k: (
        f"Panda: one blue object is shown {_cue_words(k)}, then {k['shapes']} blue objects of distinct shapes "
        "appear; touch the one with the shown shape and hold still"
    ),
    _REMEMBER_NOTES,
)
REMEMBER_SHAPE_AND_COLOR = Family(
    "RememberShapeAndColor",
    "membench_envs.robo.remember_shape_and_color:RememberShapeAndColorEnv",
    ("object",),
    ("true_shapes_info", "true_colors_info"),
    _REMEMBER_PARAMS
    + (
        Param("n_shapes", "int", 3, low=1, high=5, none_ok=True),
        Param("n_colors", "int", 2, low=1, high=3, none_ok=True),
        _num("shape_scale", 0.02),
    ),
    _remember_timing,
    lambda k: (
        f"Panda: one object is shown {_cue_words(k)}, then all {k['n_shapes'] * k['n_colors']} (shape, colour) "
        f"pairs of {k['n_shapes']} shapes x {k['n_colors']} colours appear; touch the exact match"
    ),
    _REMEMBER_NOTES,
)

# --- ShellGame (App. K.1) ---------------------------------------------------------------------------------------------
_SHELL_PARAMS: tuple[Param, ...] = (
    _num("ball_radius", 0.02),
    _num("min_dist", 0.2),
    _num("goal_thresh", 0.08),
    _num("mug_radius", 0.035),
    _num("mug_height", 0.08),
    Param("time_offset", "int", 5, low=1, none_ok=True, doc="steps the ball is visible"),
    _num("center_range", 0.1, low_open=False),
    Param("mug_yaw", "float", 0.0, none_ok=True),
)
_SHELL_NOTES = (
    "Mugs are built from primitives (a ring of 16 boxes + a top disc + a box handle, open at the bottom; outer "
    "diameter 0.07 m, height 0.08 m) instead of the YCB 025_mug mesh, so no asset download is needed. All three mugs "
    "have the same yaw in every episode (upstream ShellGamePick turns them by a target-dependent quaternion, which "
    "leaks the answer). Success is computed the same way in every reward mode (upstream masks early success only in "
    "the dense modes). Memory type: Object (Table 1); App. K.1 also calls it spatial memory."
)


def _shell_timing(k: Mapping[str, Any]) -> Timing:
    return shell_game_timing(int(k["time_offset"]))


def _shell_family(mode: str, describe: str, extra: tuple[Param, ...] = (), notes: str = "") -> Family:
    return Family(
        f"ShellGame{mode}",
        f"membench_envs.robo.shell_game:ShellGame{mode}Env",
        ("object",),
        ("cup_with_ball_number",),
        _SHELL_PARAMS + extra,
        _shell_timing,
        lambda k: (
            "Panda: a red ball lies at one of 3 positions (t=0-4), then 3 identical mugs cover the positions "
            f"(t=5); {describe}"
        ),
        _SHELL_NOTES + notes,
    )


SHELL_TOUCH = _shell_family(
    "Touch",
    "touch the mug that hides the ball (TCP within 0.08 m of its centre) and hold still",
    notes=" Success: TCP within goal_thresh (0.08 m) of the target mug's centre and a still arm (public code and "
    "paper agree: 'contact' is this distance check; strict_success changes nothing here).",
)
SHELL_PUSH = _shell_family(
    "Push",
    "push the mug that hides the ball forward into the goal zone (0.1 m in +x, tolerance 0.08 m) and hold still",
    (
        Param(
            "goal_offset",
            "floats",
            (0.1, 0.0, 0.025),
            length=3,
            none_ok=True,
            doc="(dx, dy, dz) of the goal from the ball",
        ),
        _num("reach_thresh", 0.08),
    ),
    " Success (default, the public code's rule): the mug's centre within goal_thresh (0.08 m) of ball start + "
    "(0.1, 0, 0.025), i.e. a straight push of at least 2.0 cm (sqrt(0.08^2 - 0.005^2) = 0.0798 m short of the goal "
    "centre), and a still arm. The paper only says 'moving forward the correct mug to the target zone'; "
    "strict_success=True reads it as: the mug moved forward (+x) by at least 0.1 m (the zone centre's offset), within "
    "goal_thresh of the zone centre, arm still.",
)
SHELL_PICK = _shell_family(
    "Pick",
    "lift the mug that hides the ball to the goal 0.1 m above the ball (tolerance 0.08 m) and hold still",
    (
        Param(
            "goal_offset",
            "floats",
            (0.0, 0.0, 0.125),
            length=3,
            none_ok=True,
            doc="(dx, dy, dz) of the goal from the ball",
        ),
        _num("reach_thresh", 0.04),
    ),
    " Success (default, the public code's rule): the mug's centre within goal_thresh (0.08 m) of ball start + "
    "(0, 0, 0.125) and a still arm; with the ball's centre at z = 0.02 and the mug's at 0.04 on the table, a mug "
    "lifted straight up succeeds from a lift of 2.5 cm (0.145 - 0.08 - 0.04); no grasp is checked, as upstream. "
    "strict_success=True is the paper's 'elevating the correct mug above 0.1m': the mug's open end at least 0.1 m "
    "above the table, arm still.",
)

# --- Bunch / Seq / ChainOfColors (App. K.10-K.12) ---------------------------------------------------------------------
_COLORS_PARAMS: tuple[Param, ...] = (
    Param("sequence_length", "int", 3, low=1, high=9, none_ok=True, doc="N: cubes to remember"),
    Param("colors", "int", 9, low=1, high=9, none_ok=True, doc="cubes on the table at the selection (>= N)"),
    Param("step_duration", "int", 5, low=1, none_ok=True, doc="steps each cue (cube or bunch) is shown"),
    Param("delta_time", "int", 5, low=0, none_ok=True, doc="steps of empty table after the cue"),
    _num("cube_halfsize", 0.02),
    _num("goal_thresh", None, "touch radius (m) around the point 0.5 cm above a cube (None: cube_halfsize)"),
)
_COLORS_NOTES = (
    "As the public code: the selection shows `colors` (9) cubes of the 9-colour palette at the RememberColor9 arc "
    "slots, jittered and shuffled; a cube counts as touched (latched) when the TCP is within goal_thresh (default "
    "cube_halfsize = 0.02 m) of the point 0.5 cm above its top face while every arm joint moves slower than "
    "0.2 rad/s, during the selection only; any touched cube outside the shown set makes success impossible; success "
    "also needs a still arm. strict_success=True (the paper's 'each cube must be touched for at least 0.1 seconds'): "
    "a touch counts only after that condition held on 2 consecutive steps. Hidden cubes are parked out of physics and "
    "cameras and return to their recorded slots at the selection (upstream wrote z = 1000 into the poses inside "
    "evaluate(), from where the cubes fell back, as in RememberColor). Upstream takes delta_time but "
    "ignores it (EMPTY_DURATION = 5); here delta_time sets the empty-table steps (default 5: the same timing). "
    "Upstream GOAL_THRESH (0.05) is unused by its touch check (radius CUBE_HALFSIZE); Code 18/19's GOAL_THRESH=0.03 "
    "corresponds to goal_thresh here."
)


def _colors_family(name: str, memory: str, sequential: bool, rule: str, notes: str) -> Family:
    def timing(k: Mapping[str, Any]) -> Timing:
        return colors_timing(int(k["sequence_length"]), int(k["step_duration"]), int(k["delta_time"]), sequential)

    def describe(k: Mapping[str, Any]) -> str:
        n, t = int(k["sequence_length"]), timing(k)
        cue_end = t.phases[-2][1]
        shown = (
            (
                f"{n} cubes of distinct colours are shown one after the other ({k['step_duration']} steps each, "
                f"t=0-{cue_end - 1})"
            )
            if sequential
            else (f"{n} cubes of distinct colours are shown together (t=0-{cue_end - 1})")
        )
        return (
            f"Panda: {shown}, the table is empty (t={cue_end}-{t.decision - 1}), then {k['colors']} cubes appear; "
            f"touch the shown ones {rule}, without touching any other, and hold still"
        )

    return Family(
        name,
        f"membench_envs.robo.colors:{name}Env",
        (memory,),
        ("true_color_indices",),
        _COLORS_PARAMS,
        timing,
        describe,
        _COLORS_NOTES + notes,
    )


BUNCH_OF_COLORS = _colors_family(
    "BunchOfColors",
    "capacity",
    False,
    "in any order",
    " The bunch stands on an arc of radius 0.22 m around the table centre (public code's layout).",
)
SEQ_OF_COLORS = _colors_family(
    "SeqOfColors",
    "capacity",
    True,
    "in any order",
    " Any order succeeds (paper K.10: 'order of selection doesn't matter'; the public code agrees).",
)
CHAIN_OF_COLORS = _colors_family(
    "ChainOfColors",
    "sequential",
    True,
    "in the order they were shown",
    " The order of first touches must equal the shown order (paper K.12, public code): the right colours in another "
    "order fail. Dense reward as upstream, also its reaching term once every place holds its colour (the distance "
    "to the last shown cube: upstream clamps the next place to N - 1), with one difference kept on purpose (an "
    "upstream bug): a new cube touched when all N places are filled (only after a wrong touch, when success is "
    "already impossible) is not recorded, while upstream writes it into place 0 (an argmax over an all-false mask), "
    "so there a late touch turns a right first place wrong (-90/N - 10) or a wrong one right (+90/N + 10).",
)

# --- Intercept / InterceptGrab (App. K.5, K.6, Codes 10, 11) ---------------------------------------------------------
_INTERCEPT_PARAMS: tuple[Param, ...] = (
    Param(
        "velocity_range",
        "floats",
        (0.0, 0.0),
        low=0.0,
        length=2,
        none_ok=True,
        doc="(min, max) of the ball's initial speed along +y, m/s (Slow 0.25-0.5, Medium 0.5-0.75, Fast 0.75-1)",
    ),
    _num("ball_radius", 0.02),
)
_INTERCEPT_SPEEDS = {"Slow": (0.25, 0.5), "Medium": (0.5, 0.75), "Fast": (0.75, 1.0)}
_INTERCEPT_NOTES = (
    "As the public code: the red ball (radius 0.02 m) starts at x = U(-0.35, -0.05), y = U(-0.9, -0.65) with initial "
    "velocity (U(0, 0.05), U(v_min, v_max), 0) m/s and rolls in +y from t = 0; it is never hidden (it can start "
    "outside the base camera's 90-degree view and roll into it). The oracle initial_velocity is that velocity, "
    "float32 (3,). Memory: a single frame shows where the ball is, not where it goes; its velocity needs two frames "
    "at least (Table 1: Spatial; xi = 2 on every step, see xi_note). Success never counts at t = 0 (the reset "
    "observation): PhysX still reports the previous episode's last contacts there, which read as a grasp. The draws "
    "use the episode seed (upstream: torch's global RNG). "
)


def _intercept_timing(k: Mapping[str, Any]) -> Timing:
    return tracking_timing()


INTERCEPT = Family(
    "Intercept",
    "membench_envs.robo.intercept:InterceptEnv",
    ("spatial",),
    ("initial_velocity",),
    _INTERCEPT_PARAMS + (_num("goal_radius", 0.1, "radius of the goal zone (m)"),),
    _intercept_timing,
    lambda k: (
        f"Panda: a red ball rolls across the table (speed {k['velocity_range'][0]:g}-{k['velocity_range'][1]:g} "
        "m/s along +y, visible all episode); estimate its velocity from several frames and knock it into the "
        f"target zone (radius {k['goal_radius']:g} m) 0.2 m to the side of its start"
    ),
    _INTERCEPT_NOTES
    + "The ball starts at z = 0.04 and drops onto the table during the first step. The goal is a red-white target "
    "disc (radius goal_radius 0.1 m, no collision) on the table at x = ball x + 0.2, y = U(-0.2, 0.2). Success "
    "(default, the public code's rule): the ball's centre within goal_radius (0.1 m) of the goal's centre in the "
    "table plane (xy distance < 0.1 m) on the current step, from t = 1; the robot need not be still. "
    "strict_success=True (the paper: the ball 'must come to rest within the target area (radius 0.1m)'): also the "
    f"ball's speed below {STRICT_REST_SPEED:g} m/s on that step. The ball barely slows by itself (idle arm: 0.33 "
    "-> 0.30 m/s over 4.35 s), so a knock does not meet the strict rule: the ball must be stopped in the zone, e.g. "
    "caught and carried there (the scripted TrackPolicy does: strict success on 10/10 episodes of each speed). "
    "Dense reward (max 30): hit point = ball + 0.07 m "
    "along (ball - goal); 'reached' latches once the TCP is within 0.04 m of it; 5 (1 - tanh d_xy(ball, goal)) if "
    "reached, else 2 (1 - tanh(2 |tcp - hit point|)); success gives 30.",
)
INTERCEPT_GRAB = Family(
    "InterceptGrab",
    "membench_envs.robo.intercept:InterceptGrabEnv",
    ("spatial",),
    ("initial_velocity",),
    _INTERCEPT_PARAMS,
    _intercept_timing,
    lambda k: (
        f"Panda: a red ball rolls across the table (speed {k['velocity_range'][0]:g}-{k['velocity_range'][1]:g} "
        "m/s along +y, visible all episode); estimate its velocity from several frames, catch it with the "
        "gripper and hold still"
    ),
    _INTERCEPT_NOTES
    + "The ball starts on the table (z = 0.02). There is no goal. Success (default, the public code's rule): "
    "ManiSkill's is_grasping(ball) (both fingers push on the ball with >= 0.5 N, within 85 degrees of their closing "
    "direction) and every arm joint slower than 0.2 rad/s, from t = 1; no lift is checked. strict_success=True (Table "
    "1: 'catch the ball with the gripper and lift it up'; K.6: 'the robot must be static with the ball firmly "
    f"grasped'): also the ball's bottom at least {STRICT_GRAB_LIFT:g} m above the table (the scripted TrackPolicy, "
    "lifting: 20/20 episodes of each speed). Dense reward (max 300): "
    "10 (1 - tanh 3d) + 10 [ball between the fingers] + 30 (1 - d/0.06) [d <= 0.025] + 90 exp(-5 max(|w - 0.04| - "
    "0.02, 0)) [between] + 45 [between and w <= 0.06] + 100 [grasped], d = |ball - tcp|, w = finger opening; "
    "success gives 300.",
)

# --- RotateLenient / RotateStrict (App. K.7, K.8, Codes 12, 13) ------------------------------------------------------
_ROTATE_PARAMS: tuple[Param, ...] = (
    Param(
        "mode",
        "choice",
        "pos_angle",
        choices=("pos_angle", "pos_neg_angle"),
        none_ok=True,
        doc="pos_angle: rotate by a positive angle (Pos); pos_neg_angle: positive or negative (PosNeg)",
    ),
    _num("angle_threshold", 0.1, "permissible deviation from the target angle (rad)"),
    _num("peg_half_width", 0.025),
    _num("peg_half_length", 0.12),
    Param(
        "angle_sampling",
        "choice",
        "code",
        choices=("code", "paper"),
        doc="target angle draw: 'code' (public code, |angle| >= angle_threshold) or 'paper' (App. K.7 ranges)",
    ),
    Param(
        "prompt_in_obs",
        "bool",
        True,
        doc="the target angle as obs['prompt'] in the image variants (paper, upstream); False: RGB + joints only, "
        "solvable by guessing only (13.6% Pos, 29.2% PosNeg with the best constant turn)",
    ),
)
_ROTATE_MODES = {"Pos": "pos_angle", "PosNeg": "pos_neg_angle"}
_ROTATE_NOTES = (
    "As the public code: a blue peg (a 0.24 x 0.05 x 0.05 m box, both halves the same colour, so it looks the same "
    "after half a turn) lies on the table at x, y = U(-0.1, 0.1) with yaw theta0 = U(0, 2 pi); the target rotation "
    "theta* is the static prompt, obs['prompt'] (float32 (1,), radians; positive = counter-clockwise seen from "
    "above, i.e. a yaw increase about +z: the paper's 'clockwise' gives no frame), in every image variant: the "
    "default partial (RGB + joints + prompt), oracle and rgb, as the paper (App. K: the prompt 'is additionally "
    "added to each observation') and upstream's PPO wrapper (prompt beside the images in every RGB mode); "
    "obs_variant='prompt' (the paper's RGB+joints+prompt) equals partial. prompt_in_obs=False drops it (RGB + "
    "joints only): the target is then unknowable and the task only guessable, a constant turn c succeeding when "
    "|theta* - c| < 0.1: with the best c on 0.2/(pi/2 - 0.1) = 13.6% of Pos and 29.2% of PosNeg episodes (one sign's "
    "range, 0.343 rad wide, holds half the targets), 0.2/(pi/2) = 12.7% under angle_sampling='paper'. Target "
    "draw (default angle_sampling='code', the public code): Pos theta* = 0.1 + r (pi/2 - 0.1); PosNeg |theta*| = "
    "0.1 + r (pi/4 - 0.1), positive iff r > 0.5 (sign and size correlated: "
    "positive targets in [0.44, 0.79], negative in [-0.44, -0.1]), r = U(0, 1), 0.1 = angle_threshold. "
    "angle_sampling='paper' (App. K.7): Pos theta* = U(0, pi/2), PosNeg theta* = U(-pi/4, pi/4); targets within "
    "angle_threshold of 0 are then solved by holding still. The oracle y_angle_diff (float32 (1,), Table 1) is "
    "wrap(theta* - wrap(yaw - theta0)), wrap to [-pi, pi), yaw = the third XYZ Euler angle of the peg's "
    "quaternion (as the public code): the rotation still to do. Success never counts before t = 6 (the public code "
    "masks t <= 5 in the dense reward modes only; here in every reward mode). The peg's start xy uses the episode "
    "seed of its own sub-scene (upstream: torch's global RNG, which ManiSkill seeds on a seeded reset from the first "
    "sub-scene's seed only, and not at all on a reset without a seed); the target is kept in float32 (upstream: "
    "float16, a rounding of at most 5e-4 rad). "
)


def _rotate_timing(k: Mapping[str, Any]) -> Timing:
    return rotate_timing()


def _rotate_words(k: Mapping[str, Any]) -> str:
    return ("a positive angle" if k["mode"] == "pos_angle" else "a positive or negative angle") + " given as a prompt"


ROTATE_LENIENT = Family(
    "RotateLenient",
    "membench_envs.robo.rotate:RotateLenientEnv",
    ("spatial",),
    ("y_angle_diff",),
    _ROTATE_PARAMS,
    _rotate_timing,
    lambda k: (
        f"Panda: a symmetric blue peg lies on the table at a random yaw; rotate it by {_rotate_words(k)} "
        f"(within {k['angle_threshold']:g} rad; its centre may move) and hold still: the start yaw must be "
        "remembered"
    ),
    _ROTATE_NOTES
    + "Success (default, the public code's rule): |y_angle_diff| < angle_threshold (0.1 rad) and every arm joint "
    "slower than 0.2 rad/s, from t = 6. strict_success=True (K.7: 'maintaining the final orientation in a stable "
    f"position'): also the peg's angular speed below {STRICT_PEG_SPIN:g} rad/s. Dense reward (max 25): "
    "exp(-5 d) + 15 exp(-1.5 |y_angle_diff|) [d < 0.1] + 5 [|y_angle_diff| < 0.1] + 2 [that and a still arm], "
    "d = |peg centre - tcp|; success gives 25.",
    ROBO_VARIANTS + ("prompt",),
)
ROTATE_STRICT = Family(
    "RotateStrict",
    "membench_envs.robo.rotate:RotateStrictEnv",
    ("spatial",),
    ("y_angle_diff",),
    _ROTATE_PARAMS + (_num("pos_threshold", 0.05, "how far the peg's centre may move (m)"),),
    _rotate_timing,
    lambda k: (
        f"Panda: a symmetric blue peg lies on the table at a random yaw; rotate it by {_rotate_words(k)} "
        f"(within {k['angle_threshold']:g} rad) without moving its centre more than {k['pos_threshold']:g} m, "
        "and hold still: the start yaw must be remembered"
    ),
    _ROTATE_NOTES
    + "Success (default, the public code's rule): |y_angle_diff| < angle_threshold (0.1 rad), |x - x0| < 0.05 and "
    "|y - y0| < 0.05 (per axis: a square of side 0.1 m around the start) and every arm joint slower than 0.2 rad/s, "
    "from t = 6; the other rotation axes are not checked. strict_success=True (K.8: 'within 5cm of its initial XY "
    "coordinates', 'no significant deviation in other rotation axes', 'stable'): |(x, y) - (x0, y0)| < 0.05 "
    f"(Euclidean), the peg's long axis at most {STRICT_PEG_TILT:g} rad out of the table plane and the peg's angular "
    f"speed below {STRICT_PEG_SPIN:g} rad/s, with the angle and a still arm. Dense reward (max 100), d = |peg "
    "centre - tcp|, reached = d < 0.04, pos_ok = |dx|, |dy| < 0.05: 0.5 exp(-3 d) + [reached] (5 exp(-5 |dx|) + "
    "5 exp(-5 |dy|)) + 35 exp(-|y_angle_diff|) [reached, pos_ok] + 10 [angle, reached, pos_ok] + 5 [that and a "
    "still arm]; success gives 100.",
    ROBO_VARIANTS + ("prompt",),
)

# --- TakeItBack (App. K.9, Code 14) -----------------------------------------------------------------------------------
TAKE_IT_BACK = Family(
    "TakeItBack",
    "membench_envs.robo.take_it_back:TakeItBackEnv",
    ("spatial",),
    ("xyz_initial",),
    (_num("goal_radius", 0.08, "radius of the goal and start regions (m)"), _num("cube_halfsize", 0.02)),
    lambda k: take_it_back_timing(),
    lambda k: (
        "Panda: push a green cube into the red goal region; the region turns violet once the cube is in it; "
        "then bring the cube back to where it started (that spot is never shown: remember it)"
    ),
    "As the public code: the green cube (half-size 0.02 m) starts at x0 = U(-0.05, 0.05), y0 = 0.1 c + U(0, 0.05), "
    "c uniform in {-1, 0, 1}; the oracle xyz_initial = (x0, y0, 0.001), float32 (3,). The goal region (a red-white "
    "disc, radius goal_radius 0.08 m, no collision) lies at x = U(0.2, 0.25), y = U(-0.025, 0.025). The start region "
    "(blue-white, same radius, centred on the cube's start) is hidden from both cameras (rendered only by the human "
    "render camera). On the first observation where the cube's centre is within goal_radius of the goal's centre "
    "(xy), goal_reached latches and the red disc is replaced by a violet one (147, 0, 211) at the same place (K.9 "
    "says magenta; upstream swaps one step later, in the next evaluate()). One scheduled phase ('action', t = 0 .. "
    "T - 1): the push and the return stages are states (info['goal_reached']), not steps. Success (default, the "
    "public code's rule): goal_reached and the cube's centre within goal_radius (0.08 m) of its start (xy), on the "
    "current step; no still arm needed. When the two regions overlap (centres closer than 0.16 m: about 0.2% of "
    "episodes, estimated by sampling the draw) pushing the cube into the overlap succeeds at once. "
    "strict_success=True (K.9: 'first reaching the goal region ..., then returning the cube to the initial region', "
    "'in sequence'): the goal was reached on an earlier step and the cube is outside the goal region now. Dense "
    "reward (max 30), push point = cube - (0.025, 0, 0), pull point = cube + (0.03, 0, 0): before goal_reached "
    "2 (1 - tanh 5 |tcp - push point|) + 5 (1 - tanh 5 d_xy(cube, goal)) [|tcp - push point| < 0.01]; after "
    "10 (1 - tanh 5 |tcp - pull point|) + 15 (1 - tanh 5 d_xy(cube, start)) [|tcp - pull point| < 0.01]; success "
    "gives 30. The draws use each sub-scene's episode seed (upstream: torch's global RNG, which ManiSkill seeds on a "
    "seeded reset from the first sub-scene's seed only, and not at all on a reset without a seed). Memory type: "
    "Spatial (Table 1); K.9 also calls it sequential memory and spatial reasoning.",
)

PRESETS: tuple[Preset, ...] = (
    *(Preset(f"RememberColor{n}", REMEMBER_COLOR, {"colors": n}) for n in (3, 5, 9)),
    *(Preset(f"RememberShape{n}", REMEMBER_SHAPE, {"shapes": n}) for n in (3, 5, 9)),
    Preset(
        "RememberShapeAndColor3x2",
        REMEMBER_SHAPE_AND_COLOR,
        {"n_shapes": 3, "n_colors": 2},
        " 3x2 follows the paper (cube/sphere/t-shape x red/green); the public code builds 2 shapes x 3 colours "
        "(n_shapes=2, n_colors=3).",
    ),
    Preset("RememberShapeAndColor3x3", REMEMBER_SHAPE_AND_COLOR, {"n_shapes": 3, "n_colors": 3}),
    Preset("RememberShapeAndColor5x3", REMEMBER_SHAPE_AND_COLOR, {"n_shapes": 5, "n_colors": 3}),
    Preset("ShellGameTouch", SHELL_TOUCH),
    Preset("ShellGamePush", SHELL_PUSH),
    Preset("ShellGamePick", SHELL_PICK),
    *(Preset(f"BunchOfColors{n}", BUNCH_OF_COLORS, {"sequence_length": n}) for n in (3, 5, 7)),
    *(Preset(f"SeqOfColors{n}", SEQ_OF_COLORS, {"sequence_length": n}) for n in (3, 5, 7)),
    *(Preset(f"ChainOfColors{n}", CHAIN_OF_COLORS, {"sequence_length": n}) for n in (3, 5, 7)),
    *(Preset(f"Intercept{mode}", INTERCEPT, {"velocity_range": v}) for mode, v in _INTERCEPT_SPEEDS.items()),
    *(Preset(f"InterceptGrab{mode}", INTERCEPT_GRAB, {"velocity_range": v}) for mode, v in _INTERCEPT_SPEEDS.items()),
    *(Preset(f"RotateLenient{mode}", ROTATE_LENIENT, {"mode": m}) for mode, m in _ROTATE_MODES.items()),
    *(Preset(f"RotateStrict{mode}", ROTATE_STRICT, {"mode": m}) for mode, m in _ROTATE_MODES.items()),
    Preset("TakeItBack", TAKE_IT_BACK),
)
FAMILIES: tuple[Family, ...] = tuple(dict.fromkeys(p.family for p in PRESETS))


def preset(env_id: str) -> Preset:
    """The table row of ``MIKASA/<name>-v0``."""
    for p in PRESETS:
        if env_id == p.id:
            return p
    raise KeyError(f"{env_id!r} is not a MIKASA-Robo ID; valid: {', '.join(p.id for p in PRESETS)}")


def family_of(cls_path: str) -> Family:
    return next(f for f in FAMILIES if f.cls_path == cls_path)


def family_of_class(cls: type) -> Family | None:
    """The family of a task class, or of the nearest family class it derives from (a custom subclass, App. M); None
    for a class outside the table."""
    paths = {f.cls_path: f for f in FAMILIES}
    for klass in cls.__mro__:
        family = paths.get(f"{klass.__module__}:{klass.__qualname__}")
        if family is not None:
            return family
    return None


def robo_params(env_id: str, cls_path: str) -> tuple[Param, ...]:
    """Every kwarg of one MIKASA-Robo ID: its registration, the common kwargs and its family's task parameters."""
    registration = (
        Param("robo_env", "choice", cls_path, choices=(cls_path,)),
        Param("membench_id", "choice", env_id, choices=(env_id,)),
    )
    return registration + COMMON_PARAMS + family_of(cls_path).params


#: Phase timing of every ID at its default parameters: ((phase, first step), ...); steps are observation indices.
PHASES: dict[str, tuple[tuple[str, int], ...]] = {p.id: p.timing.phases for p in PRESETS}
#: Default task parameters (the App. M knobs) of every ID.
PARAMETERS: dict[str, dict] = {p.id: p.parameters for p in PRESETS}


def _spec(p: Preset) -> TaskSpec:
    f, t = p.family, p.timing
    return TaskSpec(
        id=p.id,
        entry_point=_EP,
        vector_entry_point=_VEP,
        description=f.describe(p.parameters),
        suites=("MIKASA-Robo",),
        memory_types=f.memory_types,
        episode_length=t.T,
        xi=t.xi(),
        obs_type="dict",
        action_type="continuous",
        source="MIKASA",
        extra="robo",
        # gymnasium's passive checker converts observations to numpy: impossible for GPU (CUDA tensor) batches.
        disable_env_checker=True,
        kwargs={"robo_env": f.cls_path, "membench_id": p.id, **p.knobs},
        params=robo_params(p.id, f.cls_path),
        variants=f.variants,
        oracle_keys=f.oracle_keys,
        xi_note=t.xi_note(),
        notes=f.notes + p.notes,
    )


_ALL = [_spec(p) for p in PRESETS]
#: This module's entries; the ShellGame rows are listed by ``catalogue.robo_shell_game`` (same table).
TASKS: list[TaskSpec] = [s for s in _ALL if not s.id.startswith("MIKASA/ShellGame")]
SHELL_GAME_TASKS: list[TaskSpec] = [s for s in _ALL if s.id.startswith("MIKASA/ShellGame")]
