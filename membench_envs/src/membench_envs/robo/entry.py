"""Entry points of the ``MIKASA/...`` MIKASA-Robo IDs. ManiSkill is imported only inside the functions.

``gym.make("MIKASA/RememberColor9-v0", obs_variant="partial", reward_mode="normalized_dense",
control_mode="pd_joint_delta_pos", num_envs=1, sim_backend="auto", render_mode=None, **task_kwargs)``:

- ``reward_mode``: ``normalized_dense`` (default, as upstream MIKASA-Robo: dense / maximum, in [0, 1]), ``dense``,
  ``sparse`` (= success) or ``none``; declared once in ``membench_envs.catalogue.robo.COMMON_PARAMS`` (what
  ``membench-envs info`` prints). Without it ManiSkill would take the first entry of the task's supported modes.
- ``obs_variant``: ``partial`` (default; RGB + joints), ``oracle``, ``full`` (state), ``rgb`` (RGB only), ``prompt``
  (tasks with a prompt). ``obs_mode`` accepts the paper's names instead: ``"rgb+joints"``, ``"rgb+joints+oracle"``,
  ``"state"``, ``"rgb"``, ``"rgb+joints+prompt"``.
- ``num_envs > 1`` runs ManiSkill's GPU simulation and returns *batched torch* values; on a machine without a CUDA
  GPU it raises :class:`NoGPUError`, which points to :func:`membench_envs.robo.make_vec` (an ``AsyncVectorEnv`` of
  CPU environments; ``gym.make_vec`` does the same).
- ``render_backend`` defaults to ``"none"`` for the ``full`` variant without ``render_mode`` (no Vulkan needed),
  else ``"gpu"`` where a GPU exists and ``"cpu"`` (SAPIEN on Mesa lavapipe) otherwise.
- ``render_overlay=True`` wraps the env in :class:`~membench_envs.robo.wrappers.RenderOverlay`;
  ``clip_actions=True`` clips out-of-range actions instead of raising; ``batched=True`` forces the batched torch
  interface for ``num_envs=1``; ``terminate_on_success=False`` runs every episode for the full T steps;
  ``strict_success=True`` decides success by the paper's wording instead of the public code's rule (default).
- Any other kwarg is a task parameter (App. M of the paper), e.g. ``delta_time=100``, ``goal_thresh=0.03``,
  ``colors=4``, ``episode_steps=1000`` (T; the env truncates itself, so use ``episode_steps``, not gymnasium's
  ``max_episode_steps``, which would only add an outer ``TimeLimit``).
"""

from __future__ import annotations

import importlib
from typing import Any

from membench_envs._deps import require
from membench_envs.catalogue.robo import DEFAULT_VARIANT, PAPER_OBS_MODES, VARIANTS
from membench_envs.envs.core.native import check_variant

#: ManiSkill's render modes: "rgb_array" (the 512x512 human camera), "sensors" (the observation cameras), "all"
#: (both side by side), "human" (a GUI viewer).
RENDER_MODES = ("rgb_array", "sensors", "all", "human")


class NoGPUError(RuntimeError):
    """``num_envs > 1`` needs ManiSkill's GPU simulation, and this machine has no CUDA GPU."""


def resolve_variant(obs_variant: str | None, obs_mode: str | None) -> str:
    if obs_mode is not None:
        if obs_mode not in PAPER_OBS_MODES:
            raise ValueError(
                f"unknown obs_mode {obs_mode!r}; use obs_variant (valid values: {', '.join(VARIANTS)}) "
                f"or one of the paper's modes {sorted(PAPER_OBS_MODES)}"
            )
        mapped = PAPER_OBS_MODES[obs_mode]
        if obs_variant is not None and obs_variant != mapped:
            raise ValueError(f"obs_mode={obs_mode!r} means obs_variant={mapped!r}, but obs_variant={obs_variant!r}")
        return mapped
    return check_variant(DEFAULT_VARIANT if obs_variant is None else obs_variant, VARIANTS)


def _load_class(path: str):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def make(
    env_cls: Any,
    *,
    obs_variant: str | None = None,
    obs_mode: str | None = None,
    num_envs: int = 1,
    sim_backend: str = "auto",
    render_backend: str | None = None,
    render_mode: str | None = None,
    batched: bool | None = None,
    clip_actions: bool = False,
    render_overlay: bool = False,
    env_id: str | None = None,
    **kwargs: Any,
):
    """Build a MIKASA-Robo environment from a task class (or ``"module:Class"``); see the module docstring.

    This is also the way to run a custom subclass (App. M)::

        class RememberColor4Debug(RememberColorEnv):
            COLORS = 4; TIME_OFFSET = 200; DELTA_TIME = 100; GOAL_THRESH = 0.03

        env = membench_envs.robo.make(RememberColor4Debug, obs_variant="partial", episode_steps=1000)
    """
    if render_mode is not None and render_mode not in RENDER_MODES:  # ManiSkill itself would fail only at render()
        raise ValueError(f"unknown render_mode {render_mode!r}; valid: {', '.join(RENDER_MODES)} (or None)")
    require("mani_skill", "robo", env_id=env_id)
    variant = resolve_variant(obs_variant, obs_mode)
    from membench_envs.robo.wrappers import MikasaRoboEnv, RenderOverlay

    if isinstance(env_cls, str):
        env_cls = _load_class(env_cls)
    num_envs = int(num_envs)
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    name = env_id or env_cls.__name__
    from membench_envs.robo.vector import has_gpu

    gpu = has_gpu()
    if num_envs > 1 and not gpu:
        raise NoGPUError(
            f"num_envs={num_envs} runs ManiSkill's GPU simulation (physx_cuda), but no CUDA GPU is available here. "
            f"On a CPU use one environment per process: membench_envs.robo.make_vec({name!r}, num_envs={num_envs}) "
            f"(or gym.make_vec) builds an AsyncVectorEnv of CPU environments with the same agent-facing API."
        )
    if sim_backend == "auto":
        sim_backend = "physx_cuda" if num_envs > 1 else "physx_cpu"
    if render_backend is None:
        if variant == "full" and render_mode is None:
            render_backend = "none"
        else:
            render_backend = "gpu" if gpu else "cpu"
    raw = env_cls(
        num_envs=num_envs,
        obs_variant=variant,
        sim_backend=sim_backend,
        render_backend=render_backend,
        render_mode=render_mode,
        **kwargs,
    )
    env: MikasaRoboEnv | RenderOverlay = MikasaRoboEnv(raw, batched=batched, clip_actions=clip_actions)
    if render_overlay:
        env = RenderOverlay(env)
    return env


def check_robo_kwargs(robo_env: str, membench_id: str | None, kwargs: dict[str, Any]) -> None:
    """The catalogue's kwarg check of one ID (``TaskSpec.params``), before anything is built (no ManiSkill needed).

    ManiSkill's own ``BaseEnv`` kwargs pass through to ManiSkill, which checks them.
    """
    from membench_envs import catalogue
    from membench_envs.catalogue.robo import COMMON_PARAMS
    from membench_envs.envs.core.params import check_kwargs

    specs = [s for s in catalogue.all_tasks() if s.extra == "robo"]
    spec = next((s for s in specs if s.id == membench_id), None) or next(
        (s for s in specs if s.kwargs["robo_env"] == robo_env), None
    )
    if spec is None:  # not a catalogue task: the common kwargs only
        check_kwargs(membench_id or robo_env, COMMON_PARAMS, kwargs, pass_through=True)
        return
    given = {"robo_env": robo_env, **({} if membench_id is None else {"membench_id": membench_id}), **kwargs}
    check_kwargs(spec.id, spec.params, given, pass_through=True)


def make_robo_env(robo_env: str, membench_id: str | None = None, **kwargs: Any):
    """gymnasium entry point of every ``MIKASA/`` MIKASA-Robo ID (``robo_env`` = ``"module:Class"``)."""
    check_robo_kwargs(robo_env, membench_id, kwargs)
    return make(robo_env, env_id=membench_id, **kwargs)


def make_robo_vec(robo_env: str, membench_id: str | None = None, num_envs: int = 1, **kwargs: Any):
    """gymnasium vector entry point: ``gym.make_vec("MIKASA/...", num_envs=n)`` = :func:`make_vec`."""
    check_robo_kwargs(robo_env, membench_id, {"num_envs": num_envs, **kwargs})
    require("mani_skill", "robo", env_id=membench_id)
    from membench_envs.robo.vector import make_vec

    return make_vec(membench_id or robo_env, num_envs=num_envs, **kwargs)


def task_info(env_id: str) -> dict[str, Any]:
    """Timeout, oracle keys, memory types, phases and default parameters of a MIKASA-Robo ID (no ManiSkill needed)."""
    from membench_envs import catalogue
    from membench_envs.catalogue import robo as robo_catalogue

    spec = catalogue.get(env_id)
    if spec.extra != "robo":
        raise ValueError(f"{env_id} is not a MIKASA-Robo task")
    return {
        "id": spec.id,
        "episode_timeout": spec.episode_length,
        "oracle_keys": spec.oracle_keys,
        "memory_types": spec.memory_types,
        "xi": spec.xi,
        "phases": robo_catalogue.PHASES.get(spec.id, ()),
        "parameters": dict(robo_catalogue.PARAMETERS.get(spec.id, {})),
        "variants": spec.variants,
        "description": spec.description,
        "notes": spec.notes,
    }
