"""The MIKASA-Robo platform: a ManiSkill3 base for "show, hide, choose" tabletop memory tasks on a Franka Panda.

:class:`MemoryTabletopEnv` is a ManiSkill ``BaseEnv``. It owns everything the memory tasks share, so a task only
says *which* objects exist, *when* each is visible and *where*, and what counts as success:

- **Scene.** ManiSkill's ``TableSceneBuilder`` (table top at z = 0), Panda with a wrist camera (``panda_wristcam``)
  rooted at (-0.615, 0, 0), rest pose ``[0, 0, 0, -2π/3, 0, 2π/3, π/4, 0.04, 0.04]`` with N(0, 0.02) noise on the
  seven arm joints, drawn from the per-environment episode RNG (so GPU env i and a CPU env with the same seed agree).
- **Cameras.** ``base_camera`` 128×128, fov π/2, eye (0.3, 0, 0.6) looking at (-0.1, 0, 0.1); the wrist
  ``hand_camera`` 128×128 of ``panda_wristcam``; a 512×512 ``render_camera`` for videos only.
- **Controls.** ``pd_joint_delta_pos`` (default, 8-D: 7 arm-joint deltas + gripper, in [-1, 1]) or
  ``pd_ee_delta_pose`` (7-D: xyz + axis-angle deltas + gripper).
- **Rewards.** ``normalized_dense`` (the default, as upstream MIKASA-Robo: dense / ``MAX_DENSE_REWARD``, in [0, 1]),
  ``dense`` (the task's terms, overwritten by ``MAX_DENSE_REWARD`` on success) and ``sparse`` (= success); also
  ManiSkill's ``none``. The default is declared once, as the ``reward_mode`` Param of
  ``membench_envs.catalogue.robo.COMMON_PARAMS`` (:data:`~membench_envs.catalogue.robo.DEFAULT_REWARD_MODE`);
  without it ManiSkill would take the first of ``REWARD_MODES``, ``sparse``.
- **Episodes.** ``elapsed_steps`` is 0 at reset; the observation returned at step t shows the scene *after* the
  phase schedule for step t was applied. Episodes truncate at T = ``env.max_episode_steps`` (Table 1 of the paper;
  the ``episode_steps`` kwarg overrides it; the env truncates itself, also per sub-scene on the GPU, so no gymnasium
  ``TimeLimit`` is involved and ``gym.make``'s own ``max_episode_steps`` argument is not the way to change T) and,
  by default, terminate on success (ManiSkill's convention; ``terminate_on_success=False`` gives the paper
  baselines' fixed-length episodes). ``info["success_once"]`` latches success within an episode.
- **Success rules.** By default a task decides success with the public MIKASA-Robo code's rule (what the published
  results were measured with); ``strict_success=True`` applies the paper's wording where the two differ (e.g. a
  touch held for 0.1 s: :meth:`held_steps` counts consecutive steps). Each task's docstring gives both thresholds.
- **Observations** (``obs_variant``; every value batched, leading dim ``num_envs``; stable keys):

  ========== ===================================================================================================
  variant    keys
  ========== ===================================================================================================
  partial    ``rgb`` uint8 (128, 128, 6) = base camera RGB ‖ wrist camera RGB; ``joints`` float32 (25,) =
             qpos (9) ‖ qvel (9) ‖ tcp_pose (7: xyz + wxyz quaternion). The paper's "RGB+joints" memory test.
  oracle     partial + ``oracle`` (k,): exactly what must be remembered (the catalogue's ``oracle_keys``); int64 (an
             index), or float32 for tasks whose ``ORACLE_DTYPE`` is float (e.g. Intercept's initial velocity).
  full       ``state`` float32 (D,) = qpos ‖ qvel ‖ tcp_pose ‖ task state ‖ oracle (the oracle is the LAST k
             entries). The paper's ``state`` mode: an MDP, the solvability check.
  rgb        ``rgb`` only (the paper's offline-RL "RGB" mode).
  prompt     partial + ``prompt`` float32 (task's ``PROMPT_DIM``,); only for tasks with a static prompt
             (Rotate*: the target angle, (1,)).
  ========== ===================================================================================================

  A task with a static prompt (``PROMPT_DIM > 0``: Rotate*) adds ``prompt`` to *every* image variant (partial,
  oracle, rgb), as upstream's PPO wrapper does in every RGB mode, unless the task sets ``prompt_in_obs = False``
  (Rotate's ``prompt_in_obs`` kwarg); ``prompt`` is then partial with it (the paper's "RGB+joints+prompt" name).

  ``full`` needs no renderer (ManiSkill ``obs_mode="state"``); the others use ManiSkill ``obs_mode="rgb"``.

**Hiding objects (the fix for the upstream Remember* defect).** A hidden object is *parked*: teleported to its own
slot 1000 m above the table (``PARK_Z``; slots ``PARK_SPACING`` m apart, so parked objects never touch each other),
with zero velocity, and re-pinned there after every control step, so it never falls, never collides and never
reaches a camera (all cameras have far plane 100 m). The same mechanism works on the CPU and the GPU backend (GPU
visibility cannot be toggled at run time; poses can). When the schedule reveals an object, it is written to the
exact pose the task recorded at reset, with zero velocity. Upstream MIKASA-Robo wrote z = 1000 into the *physics*
pose inside ``evaluate()`` and restored poses it had read in the same call, so the choice cubes fell back from
1000 m and never reached the table on the CPU backend (upstream PR #6).

**Where a task's facts live.** A task of the catalogue (a :class:`~membench_envs.catalogue.robo.Family` row of
``membench_envs.catalogue.robo``) takes its kwargs' defaults and allowed values, its oracle keys, its phases and T
from that row: :meth:`knob` resolves a kwarg (the given value, else a subclass's class constant of the kwarg's
upper-case name, App. M style, else the catalogue's default) and checks it against the catalogue's ``Param``, and
:meth:`timing` is the catalogue's timing rule at the instance's knobs. The class holds the rules: the scene, the
draws, success, rewards, the state layout.

**How a task subclasses the platform** (a task outside the catalogue sets T and its phases itself)::

    class MyTask(MemoryTabletopEnv):
        MAX_EPISODE_STEPS = 60          # T (truncation), overridable with the episode_steps kwarg
        MAX_DENSE_REWARD = 3.0          # value written on success; normalized_dense divides by it

        def __init__(self, *args, my_param=5, **kwargs):
            self.my_param = my_param    # set task parameters BEFORE super().__init__ (it builds the scene)
            super().__init__(*args, **kwargs)

        def phase_schedule(self):       # [(name, first step)], first step 0, non-decreasing
            return [("cue", 0), ("delay", 5), ("choice", 10)]

        def _load_objects(self, options):      # build actors; register the ones the schedule moves
            self.cube = self.register_memory_object(build_shape(self.scene, "cube", 0.02, RED, "cube"))

        def _initialize_task(self, env_idx, rng):   # sample the episode (rng: per-env numpy RNGs), then
            self.show("cue", 0, env_idx, p_centre)   # schedule: visible at phase entry, placed at p (b, 3)
                                                     # (v=...: with that linear velocity instead of at rest)
            self.keep("delay", 0, env_idx)           # or stays visible where it is; unscheduled = hidden

        def oracle(self):                # (num_envs, k) tensor (ORACLE_DTYPE); info["oracle"] and obs["oracle"]
        def oracle_bounds(self):         # (low, high) sequences of length k, for the observation space
        def _evaluate_task(self):        # dict with boolean tensor "success" (+ anything the reward needs)
        def _reward_terms(self, info):   # dict name -> (num_envs,) float tensor; dense = sum (success -> max)
        def _task_state(self, info):     # dict name -> (num_envs, d) tensor, put in the full-variant state
        def describe_oracle(self, i):    # human-readable target of env i (render overlays)

``ShellGame``-style tasks use the same hooks: the ball is ``show``-n during the cue phase and ``keep``-t afterwards
(physically under a mug); the mugs are hidden during the cue phase and ``show``-n over the cups' positions at the
occlusion step; success rules and reward terms are the task's own.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import sapien
import torch
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.sensors.camera import CameraConfig
from mani_skill.utils import common, sapien_utils
from mani_skill.utils.scene_builder.table import TableSceneBuilder
from mani_skill.utils.structs.actor import Actor
from mani_skill.utils.structs.pose import Pose
from mani_skill.utils.structs.types import GPUMemoryConfig, SimConfig

from membench_envs.catalogue.robo import (
    COMMON_DEFAULTS,
    CONTROL_MODES,
    DEFAULT_REWARD_MODE,
    DEFAULT_VARIANT,
    REWARD_MODES,
    ROBOT_UIDS,
    STRICT_HOLD_SECONDS,
    VARIANTS,
    Family,
    Timing,
    family_of_class,
)
from membench_envs.envs.core.native import check_variant

#: The ManiSkill ``obs_mode`` each variant (:data:`~membench_envs.catalogue.robo.VARIANTS`) needs.
VARIANT_OBS_MODE = {"partial": "rgb", "oracle": "rgb", "rgb": "rgb", "prompt": "rgb", "full": "state"}
#: Panda arm rest pose of MIKASA-Robo (higher above the table than ManiSkill's default), gripper open.
PANDA_REST_QPOS = (0.0, 0.0, 0.0, -2 * math.pi / 3, 0.0, 2 * math.pi / 3, math.pi / 4, 0.04, 0.04)
ROBOT_ROOT = (-0.615, 0.0, 0.0)
JOINTS_DIM = 25


class MemoryTabletopEnv(BaseEnv):
    """Base of every MIKASA-Robo task (see the module docstring for the contract and the subclassing recipe)."""

    SUPPORTED_ROBOTS: ClassVar[list] = list(ROBOT_UIDS)
    SUPPORTED_REWARD_MODES = REWARD_MODES

    #: T; None: the catalogue's timing rule at the instance's knobs (a subclass may set it, App. M)
    MAX_EPISODE_STEPS: ClassVar[int | None] = None
    MAX_DENSE_REWARD: ClassVar[float] = 1.0
    #: the robot counts as still when every arm joint is slower than this (rad/s): ManiSkill's is_static, as upstream
    STATIC_THRESH: ClassVar[float] = 0.2
    #: dtype of the oracle in observations and info: int64 (indices) or float32 (continuous quantities)
    ORACLE_DTYPE: ClassVar[torch.dtype] = torch.int64
    PROMPT_DIM: ClassVar[int] = 0
    #: whether the image variants carry the static prompt (tasks with PROMPT_DIM > 0 may set it per instance)
    prompt_in_obs: bool = True
    CAMERA_SIZE: ClassVar[int] = 128
    BASE_CAMERA_EYE: ClassVar[tuple] = (0.3, 0.0, 0.6)
    BASE_CAMERA_TARGET: ClassVar[tuple] = (-0.1, 0.0, 0.1)
    RENDER_CAMERA_EYE: ClassVar[tuple] = (0.5, 1.0, 1.0)
    RENDER_CAMERA_TARGET: ClassVar[tuple] = (-0.3, 0.0, 0.0)
    PARK_Z: ClassVar[float] = 1000.0
    PARK_SPACING: ClassVar[float] = 2.0

    def __init__(
        self,
        *args: Any,
        obs_variant: str = DEFAULT_VARIANT,
        robot_uids: str = COMMON_DEFAULTS["robot_uids"],
        robot_init_qpos_noise: float = COMMON_DEFAULTS["robot_init_qpos_noise"],
        episode_steps: int | None = None,
        terminate_on_success: bool = COMMON_DEFAULTS["terminate_on_success"],
        strict_success: bool = COMMON_DEFAULTS["strict_success"],
        obs_mode: str | None = None,
        control_mode: str | None = COMMON_DEFAULTS["control_mode"],
        **kwargs: Any,
    ):
        self.obs_variant = check_variant(obs_variant, VARIANTS)
        if self.obs_variant == "prompt" and self.PROMPT_DIM == 0:
            raise ValueError(f"{type(self).__name__} has no static prompt; obs_variant='prompt' is not available")
        if self.obs_variant == "prompt" and not self.prompt_in_obs:
            raise ValueError(
                "obs_variant='prompt' conflicts with prompt_in_obs=False (an observation without the "
                "prompt); choose one"
            )
        if robot_uids != "panda_wristcam" and VARIANT_OBS_MODE[self.obs_variant] == "rgb":
            raise ValueError(f"obs_variant={obs_variant!r} needs the wrist camera: use robot_uids='panda_wristcam'")
        needed = VARIANT_OBS_MODE[self.obs_variant]
        if obs_mode is not None and obs_mode != needed:
            raise ValueError(
                f"obs_mode={obs_mode!r} conflicts with obs_variant={obs_variant!r} (which uses ManiSkill obs_mode "
                f"{needed!r}); choose the observation with obs_variant"
            )
        if control_mode not in CONTROL_MODES:
            raise ValueError(f"unknown control_mode {control_mode!r}; valid: {', '.join(CONTROL_MODES)}")
        if kwargs.get("reward_mode") is None:  # not ManiSkill's pick (the first of REWARD_MODES): upstream's default
            kwargs["reward_mode"] = DEFAULT_REWARD_MODE
        reward_mode = kwargs["reward_mode"]
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"unknown reward_mode {reward_mode!r}; valid: {', '.join(REWARD_MODES)}")
        self.robot_init_qpos_noise = float(robot_init_qpos_noise)
        self.max_episode_steps = int(self.default_episode_steps() if episode_steps is None else episode_steps)
        if self.max_episode_steps < 1:
            raise ValueError(f"episode_steps must be >= 1, got {episode_steps}")
        self.terminate_on_success = bool(terminate_on_success)
        self.strict_success = bool(strict_success)
        schedule = list(self.phase_schedule())
        starts = [start for _, start in schedule]
        if not schedule or starts[0] != 0 or any(b < a for a, b in itertools.pairwise(starts)):
            raise ValueError(f"phase_schedule must start at step 0 and be non-decreasing, got {schedule}")
        self.phase_names = tuple(name for name, _ in schedule)
        self.phase_starts = tuple(int(start) for _, start in schedule)
        self.memory_objects: list[Actor] = []
        super().__init__(*args, robot_uids=robot_uids, obs_mode=needed, control_mode=control_mode, **kwargs)

    # ------------------------------------------------------------------------------------------------------------
    # The task's catalogue row: kwargs and timing
    # ------------------------------------------------------------------------------------------------------------
    @classmethod
    def catalogue_family(cls) -> Family | None:
        """The catalogue's family of this class (or of the family class a custom subclass derives from); None for a
        task outside the catalogue."""
        return family_of_class(cls)

    def knob(self, name: str, value: Any = None) -> Any:
        """The task parameter ``name`` (an App. M knob) of this instance: ``value`` (the kwarg) unless None, else the
        class constant ``NAME`` where a subclass sets one (App. M style), else the catalogue's default; checked
        against the catalogue's ``Param`` (one clear error) and recorded in :attr:`knobs`."""
        family = self.catalogue_family()
        if family is None:
            raise TypeError(f"{type(self).__name__} is not a catalogue task: it has no catalogue kwarg {name!r}")
        param = family.param(name)
        if value is None:
            value = getattr(type(self), name.upper(), param.default)
        value = param.check(value, type(self).__name__)
        self.__dict__.setdefault("knobs", {})[name] = value
        return value

    def timing(self) -> Timing:
        """Phases, T and the memory windows: the catalogue's timing rule at this instance's :attr:`knobs`."""
        family = self.catalogue_family()
        if family is None:
            raise NotImplementedError(
                f"{type(self).__name__} is not a catalogue task: set MAX_EPISODE_STEPS and define phase_schedule()"
            )
        return family.timing(self.__dict__.get("knobs", {}))

    # ------------------------------------------------------------------------------------------------------------
    # Task hooks (override in subclasses)
    # ------------------------------------------------------------------------------------------------------------
    def default_episode_steps(self) -> int:
        """T when the ``episode_steps`` kwarg is not given: ``MAX_EPISODE_STEPS`` where the class sets it, else the
        catalogue's T (:meth:`timing`)."""
        return self.MAX_EPISODE_STEPS if self.MAX_EPISODE_STEPS is not None else self.timing().T

    def phase_schedule(self) -> Sequence[tuple[str, int]]:
        """``[(phase name, first step), ...]``: first step 0, non-decreasing (default: the catalogue's phases)."""
        return list(self.timing().phases)

    def _load_objects(self, options: dict) -> None:
        """Build the task's actors (call :meth:`register_memory_object` for those the schedule moves)."""
        raise NotImplementedError

    def _initialize_task(self, env_idx: torch.Tensor, rng) -> None:
        """Sample the episode of environments ``env_idx`` and fill the schedule with :meth:`show` / :meth:`keep`.

        ``rng`` is ManiSkill's batched numpy RNG restricted to ``env_idx`` (``rng.normal(...)`` returns one row per
        environment); use it, not the global torch RNG, so that seeding is exact on every backend.
        """
        raise NotImplementedError

    def oracle(self) -> torch.Tensor:
        """The remembered quantity, (num_envs, k) (``ORACLE_DTYPE``)."""
        raise NotImplementedError

    def oracle_bounds(self) -> tuple[Sequence[float], Sequence[float]]:
        raise NotImplementedError

    def prompt(self) -> torch.Tensor:
        """The static task prompt, (num_envs, PROMPT_DIM) float32 (only tasks with PROMPT_DIM > 0)."""
        raise NotImplementedError

    def _evaluate_task(self) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def _reward_terms(self, info: dict) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def _task_state(self, info: dict) -> dict[str, torch.Tensor]:
        return {}

    def describe_oracle(self, env_i: int) -> str:
        return str(common.to_numpy(self.oracle()[env_i]).tolist())

    # ------------------------------------------------------------------------------------------------------------
    # Schedule API for tasks
    # ------------------------------------------------------------------------------------------------------------
    def register_memory_object(self, actor: Actor) -> Actor:
        """Let the phase schedule move ``actor`` (must be a dynamic or kinematic actor built in every sub-scene)."""
        self.memory_objects.append(actor)
        return actor

    def phase_index(self, name: str) -> int:
        try:
            return self.phase_names.index(name)
        except ValueError:
            raise ValueError(f"unknown phase {name!r}; phases: {self.phase_names}") from None

    def show(self, phase: str, obj: int, env_idx: torch.Tensor, p, q=None, v=None) -> None:
        """Object ``obj`` is visible during ``phase`` and is placed at position ``p`` (b, 3) when the phase starts,
        at rest, or moving with linear velocity ``v`` (b, 3) (a ball rolled onto the table)."""
        k = self.phase_index(phase)
        p = common.to_tensor(p, device=self.device).float().reshape(-1, 3)
        pose = torch.zeros((len(env_idx), 7), device=self.device)
        pose[:, :3] = p
        if q is None:
            pose[:, 3] = 1.0
        else:
            pose[:, 3:] = common.to_tensor(q, device=self.device).float().reshape(-1, 4)
        self._sched_visible[k, env_idx, obj] = True
        self._sched_place[k, env_idx, obj] = True
        self._sched_pose[k, env_idx, obj] = pose
        vel = torch.zeros((len(env_idx), 6), device=self.device)
        if v is not None:
            vel[:, :3] = common.to_tensor(v, device=self.device).float().reshape(-1, 3)
        self._sched_vel[k, env_idx, obj] = vel

    def keep(self, phase: str, obj: int, env_idx: torch.Tensor) -> None:
        """Object ``obj`` stays visible during ``phase``, wherever the previous phase (and the robot) left it."""
        k = self.phase_index(phase)
        self._sched_visible[k, env_idx, obj] = True
        self._sched_place[k, env_idx, obj] = False

    @property
    def strict_hold_steps(self) -> int:
        """Consecutive steps a touch must last under ``strict_success`` (0.1 s: 2 steps at the 20 Hz control rate)."""
        return max(1, math.ceil(STRICT_HOLD_SECONDS * self.control_freq - 1e-9))

    def held_steps(self, name: str, condition: torch.Tensor) -> torch.Tensor:
        """How many consecutive control steps, this one included, ``condition`` (num_envs, ...) bool has held.

        Counted once per control step (calling it again on the same step returns the same counts); an episode reset
        zeroes the counts of the environments it resets."""
        count, step = self._holds.get(name, (None, -1))
        if count is None or count.shape != condition.shape:
            count = condition.to(torch.int64)
        elif step != self._control_step:
            count = torch.where(condition, count + 1, torch.zeros_like(count))
        self._holds[name] = (count, self._control_step)
        return count

    def current_phase(self) -> torch.Tensor:
        """Index of the current phase of every environment, (num_envs,) int64 (set when the schedule is applied)."""
        return self._phase_now

    def _cached(self, name: str, compute):
        """Per-step cache (invalidated whenever the simulation advances or an episode starts)."""
        hit = self._step_cache.get(name)
        if hit is not None and hit[0] == self._tick:
            return hit[1]
        value = compute()
        self._step_cache[name] = (self._tick, value)
        return value

    def object_visible(self) -> torch.Tensor:
        """(num_envs, M) bool: which memory objects are on the table now (the schedule's view)."""
        arange = torch.arange(self.num_envs, device=self.device)
        return self._cached("visible", lambda: self._sched_visible[self._phase_now, arange])

    @property
    def memory_object_positions(self) -> torch.Tensor:
        """(num_envs, M, 3) positions of the memory objects (parked ones report their parking slot)."""

        def compute():
            m = len(self.memory_objects)
            p = self._memory_view.pose.p  # (M * num_envs, 3), object-major
            return p.reshape(m, self.num_envs, 3).transpose(0, 1)

        return self._cached("positions", compute)

    # ------------------------------------------------------------------------------------------------------------
    # ManiSkill plumbing
    # ------------------------------------------------------------------------------------------------------------
    @property
    def _default_sim_config(self):
        return SimConfig(
            gpu_memory_config=GPUMemoryConfig(
                found_lost_pairs_capacity=2**25, max_rigid_patch_count=2**19, max_rigid_contact_count=2**21
            )
        )

    @property
    def _default_sensor_configs(self):
        pose = sapien_utils.look_at(eye=list(self.BASE_CAMERA_EYE), target=list(self.BASE_CAMERA_TARGET))
        size = self.CAMERA_SIZE
        return [CameraConfig("base_camera", pose, size, size, np.pi / 2, 0.01, 100)]

    @property
    def _default_human_render_camera_configs(self):
        pose = sapien_utils.look_at(list(self.RENDER_CAMERA_EYE), list(self.RENDER_CAMERA_TARGET))
        return CameraConfig("render_camera", pose, 512, 512, 1, 0.01, 100)

    def _load_agent(self, options: dict):
        super()._load_agent(options, sapien.Pose(p=list(ROBOT_ROOT)))

    def _load_scene(self, options: dict):
        self.table_scene = TableSceneBuilder(self, robot_init_qpos_noise=self.robot_init_qpos_noise)
        self.table_scene.build()
        self.memory_objects = []
        self._load_objects(options)
        n, m, p = self.num_envs, len(self.memory_objects), len(self.phase_names)
        if m == 0:
            raise RuntimeError(f"{type(self).__name__}._load_objects registered no memory object")
        dev = self.device
        self._memory_view = Actor.merge(self.memory_objects, name="membench_memory_objects")
        self._sched_visible = torch.zeros((p, n, m), dtype=torch.bool, device=dev)
        self._sched_place = torch.zeros((p, n, m), dtype=torch.bool, device=dev)
        self._sched_pose = torch.zeros((p, n, m, 7), device=dev)
        self._sched_vel = torch.zeros((p, n, m, 6), device=dev)  # linear ‖ angular velocity at placement
        park = torch.zeros((m, 7), device=dev)
        park[:, 0] = torch.arange(m, device=dev, dtype=torch.float32) * self.PARK_SPACING
        park[:, 2] = self.PARK_Z
        park[:, 3] = 1.0
        self._park_pose = park
        self._park_pose_np = park.cpu().numpy()
        self._starts = torch.tensor(self.phase_starts, device=dev, dtype=torch.int64)
        self._phase_now = torch.zeros(n, dtype=torch.int64, device=dev)
        self._tick = 0
        self._control_step = 0
        self._holds: dict[str, tuple[torch.Tensor | None, int]] = {}
        self._step_cache: dict = {}
        self._success_once = torch.zeros(n, dtype=torch.bool, device=dev)
        self._last_reward = torch.zeros(n, device=dev)
        self._last_reward_terms: dict[str, torch.Tensor] = {}

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict):
        with torch.device(self.device):
            self.table_scene.initialize(env_idx)
            self._reset_robot(env_idx)
            self._sched_visible[:, env_idx] = False
            self._sched_place[:, env_idx] = False
            self._sched_vel[:, env_idx] = 0.0
            self._success_once[env_idx] = False
            for count, _ in self._holds.values():
                if count is not None:
                    count[env_idx] = 0
            self._last_reward[env_idx] = 0.0
            self._initialize_task(env_idx, self._batched_episode_rng[common.to_numpy(env_idx)])
            if not self.gpu_sim_enabled:  # numpy mirror of the single env's schedule: the per-step fast path
                self._sched_np = (
                    self._sched_visible[:, 0].cpu().numpy().copy(),
                    self._sched_place[:, 0].cpu().numpy().copy(),
                    self._sched_pose[:, 0].cpu().numpy().copy(),
                    self._sched_vel[:, 0].cpu().numpy().copy(),
                )
            self._apply_schedule(env_idx, torch.zeros(len(env_idx), dtype=torch.int64, device=self.device))
            self._tick += 1

    def _reset_robot(self, env_idx: torch.Tensor) -> None:
        rest = np.asarray(PANDA_REST_QPOS, dtype=np.float64)
        rng = self._batched_episode_rng[common.to_numpy(env_idx)]
        noise = np.asarray(rng.normal(0.0, self.robot_init_qpos_noise, 7)).reshape(len(env_idx), 7)
        qpos = np.tile(rest, (len(env_idx), 1))
        qpos[:, :7] += noise
        self.agent.reset(common.to_tensor(qpos, device=self.device).float())
        self.agent.robot.set_root_pose(sapien.Pose(list(ROBOT_ROOT)))

    def _phase_of(self, t: torch.Tensor) -> torch.Tensor:
        t = t.to(torch.int64).reshape(-1, 1)
        return (t >= self._starts.reshape(1, -1)).sum(dim=1) - 1

    def _apply_schedule(self, env_idx: torch.Tensor, t: torch.Tensor) -> bool:
        """Park hidden objects and place objects whose phase starts at step ``t`` (for envs ``env_idx``); record the
        phase of step ``t``. Returns whether any pose was written."""
        if not self.gpu_sim_enabled:
            return self._apply_schedule_single(int(t.reshape(-1)[0]))
        phase = self._phase_of(t)
        self._phase_now[env_idx] = phase
        entering = t.to(torch.int64) == self._starts[phase]
        visible = self._sched_visible[phase, env_idx]  # (b, M)
        place = self._sched_place[phase, env_idx] & visible & entering[:, None]
        write = place | ~visible
        if not bool(write.any()):
            return False
        zeros6 = torch.zeros((len(env_idx), 6), device=self.device)
        for j in torch.nonzero(write.any(dim=0)).flatten().tolist():
            rows = torch.nonzero(write[:, j]).flatten()
            sel = env_idx[rows]
            placed = self._sched_pose[phase[rows], sel, j]
            pose = torch.where(place[rows, j, None], placed, self._park_pose[j].expand(len(rows), 7))
            vel = torch.where(place[rows, j, None], self._sched_vel[phase[rows], sel, j], zeros6[rows])
            state = torch.cat([pose, vel], dim=1)
            self.memory_objects[j].set_state(state, env_idx=sel)
        return True

    def _apply_schedule_single(self, t: int) -> bool:
        """CPU (num_envs = 1) version of :meth:`_apply_schedule` on numpy mirrors: ~no cost on steps without writes."""
        phase = bisect.bisect_right(self.phase_starts, t) - 1
        self._phase_now[0] = phase
        visible_all, place_all, pose_all, vel_all = self._sched_np
        visible = visible_all[phase]
        place = place_all[phase] & visible & (t == self.phase_starts[phase])
        write = place | ~visible
        if not write.any():
            return False
        park = self._park_pose_np
        for j in np.flatnonzero(write):
            if place[j]:
                state = np.concatenate([pose_all[phase, j], vel_all[phase, j]])
            else:
                state = np.concatenate([park[j], np.zeros(6, dtype=np.float32)])
            self.memory_objects[j].set_state(state[None])
        return True

    def _after_control_step(self):
        t = self._elapsed_steps.to(torch.int64) + 1  # the step whose observation is about to be produced
        all_idx = torch.arange(self.num_envs, device=self.device)
        if self.gpu_sim_enabled:
            # physics ran since the last fetch: refresh the buffer before writing rows into it
            self.scene.px.gpu_fetch_rigid_dynamic_data()
            if self._apply_schedule(all_idx, t):
                self.scene.px.gpu_apply_rigid_dynamic_data()
        else:
            self._apply_schedule(all_idx, t)
        self._tick += 1
        self._control_step += 1

    def reset(self, seed: int | list[int] | None = None, options: dict | None = None):
        if seed is not None:  # also seed gymnasium's np_random (ManiSkill keeps its own RNGs)
            first = seed if isinstance(seed, (int, np.integer)) else next(iter(seed))
            gym.Env.reset(self, seed=int(first))
        return super().reset(seed=seed, options=options)

    # --- evaluation, reward, episode end ---------------------------------------------------------------------
    def evaluate(self) -> dict:
        info = self._evaluate_task()
        self._success_once = self._success_once | info["success"]
        info["success_once"] = self._success_once.clone()
        info["phase"] = self.current_phase()
        info["oracle"] = self.oracle()
        return info

    def compute_dense_reward(self, obs: Any, action: torch.Tensor, info: dict):
        terms = self._reward_terms(info)
        reward = torch.zeros(self.num_envs, device=self.device)
        for value in terms.values():
            reward = reward + value.float()
        reward = torch.where(info["success"], torch.full_like(reward, self.MAX_DENSE_REWARD), reward)
        self._last_reward_terms = terms
        return reward

    def compute_normalized_dense_reward(self, obs: Any, action: torch.Tensor, info: dict):
        return self.compute_dense_reward(obs=obs, action=action, info=info) / self.MAX_DENSE_REWARD

    def step(self, action):
        obs, reward, terminated, _, info = super().step(action)
        if not self.terminate_on_success:
            terminated = torch.zeros_like(terminated)
        truncated = self.elapsed_steps >= self.max_episode_steps
        self._last_reward = reward.float() if isinstance(reward, torch.Tensor) else torch.as_tensor(reward)
        return obs, reward, terminated, truncated, info

    # --- observations -----------------------------------------------------------------------------------------
    def joints(self) -> torch.Tensor:
        """qpos (9) ‖ qvel (9) ‖ tcp_pose (7): the paper's 25-D "joints" vector."""
        robot = self.agent.robot
        return torch.cat([robot.get_qpos(), robot.get_qvel(), self.agent.tcp.pose.raw_pose], dim=-1).float()

    def get_obs(self, info: dict | None = None, unflattened: bool = False):
        if info is None:
            info = self.get_info()
        variant = self.obs_variant
        if variant == "full":
            parts = [self.joints()]
            for value in self._task_state(info).values():
                parts.append(value.reshape(self.num_envs, -1).float())
            parts.append(self.oracle().reshape(self.num_envs, -1).float())
            return {"state": torch.cat(parts, dim=-1)}
        sensors = self._get_obs_sensor_data()
        obs = {"rgb": torch.cat([sensors["base_camera"]["rgb"], sensors["hand_camera"]["rgb"]], dim=-1)}
        if variant in ("partial", "oracle", "prompt"):
            obs["joints"] = self.joints()
        if variant == "oracle":
            obs["oracle"] = self.oracle().to(self.ORACLE_DTYPE)
        if self.PROMPT_DIM > 0 and self.prompt_in_obs:  # every image variant (upstream: every RGB mode)
            obs["prompt"] = self.prompt().float()
        return obs

    def _flatten_raw_obs(self, obs: Any):
        return obs

    @cached_property
    def single_observation_space(self) -> gym.spaces.Dict:
        raw = common.to_numpy(self._init_raw_obs)
        spaces: dict[str, gym.Space] = {}
        for key, value in raw.items():
            shape = tuple(value.shape[1:])
            if key == "rgb":
                spaces[key] = gym.spaces.Box(0, 255, shape, dtype=np.uint8)
            elif key == "oracle":
                low, high = self.oracle_bounds()
                dtype: type[np.floating] | type[np.integer]
                dtype = np.float32 if self.ORACLE_DTYPE.is_floating_point else np.int64
                spaces[key] = gym.spaces.Box(
                    np.asarray(low, dtype=dtype), np.asarray(high, dtype=dtype), shape, dtype=dtype
                )
            else:
                spaces[key] = gym.spaces.Box(-np.inf, np.inf, shape, dtype=np.float32)
        return gym.spaces.Dict(spaces)

    # --- rendering helpers -------------------------------------------------------------------------------------
    def overlay_lines(self, env_i: int = 0) -> list[str]:
        """Debug text for frame ``env_i``: step, phase, target, reward and its terms (see wrappers.RenderOverlay)."""
        t = int(self.elapsed_steps[env_i])
        phase = self.phase_names[int(self.current_phase()[env_i])]
        lines = [
            f"step {t}/{self.max_episode_steps}  phase: {phase}",
            f"target: {self.describe_oracle(env_i)}",
            f"reward ({self.reward_mode}): {float(self._last_reward.reshape(-1)[env_i]):.3f}",
        ]
        for name, value in self._last_reward_terms.items():
            lines.append(f"  {name}: {float(value.reshape(-1)[env_i].float()):.3f}")
        if bool(self._success_once[env_i]):
            lines.append("success")
        return lines


def as_position_tensor(values, device) -> torch.Tensor:
    """Helper for tasks: numpy/tensor (b, 3) -> float32 tensor on ``device``."""
    return common.to_tensor(np.asarray(values, dtype=np.float32), device=device).reshape(-1, 3)


__all__ = [
    "CONTROL_MODES",
    "JOINTS_DIM",
    "PANDA_REST_QPOS",
    "REWARD_MODES",
    "VARIANTS",
    "VARIANT_OBS_MODE",
    "MemoryTabletopEnv",
    "Pose",
    "as_position_tensor",
]
