"""What a run config needs to know about an environment ID, read from the membench catalogue where the ID is a
membench task and from gymnasium's registry and spaces otherwise: is the ID known, its observation and action
types (which select the agent defaults), its observation variants, and the keyword arguments of ``gym.make``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from membench_agents.errors import ConfigError, close_matches

#: The one module prefix an env ID may carry: membench's own package (dropped before any lookup).
MEMBENCH_PREFIX = "membench_envs:"


def plain_env_id(env_id: str) -> str:
    """``env_id`` without a module prefix, checked before gymnasium sees it.

    gymnasium reads ``module:ID`` as "import ``module``, then make ``ID``", so an env string from a config file,
    a run folder or the command line could run any module. membench refuses every such prefix except its own
    ``membench_envs:`` (the membench IDs are registered anyway), which it drops."""
    if env_id.startswith(MEMBENCH_PREFIX):
        env_id = env_id[len(MEMBENCH_PREFIX) :]
    if ":" in env_id:
        module = env_id.split(":", 1)[0]
        raise ConfigError(
            f"environment ID {env_id!r} names a module to import ({module!r}); membench refuses module prefixes, "
            "which make gymnasium run that module's code: register the environment in your own Python code and pass "
            f"its plain ID (only {MEMBENCH_PREFIX!r} is accepted, and dropped)"
        )
    return env_id


def check_env_id(env_id: object) -> str:
    """The ID if gymnasium knows it (membench IDs and any other registered ID), else one error with close matches.
    A module prefix (``module:ID``) is refused, except ``membench_envs:``, which is dropped (:func:`plain_env_id`)."""
    if env_id is None:
        raise ConfigError(
            "missing config value 'env' (the environment ID, e.g. MIKASA/TMazePassive-v0): pass --env ID or set `env:`"
        )
    if not isinstance(env_id, str):
        raise ConfigError(f"env must be an environment ID (a string), got {env_id!r}")
    env_id = plain_env_id(env_id)
    import gymnasium as gym

    import membench_envs  # noqa: F401  (registers every membench ID)

    if env_id in gym.registry:
        return env_id
    ids = list(gym.registry)
    membench = [i for i in ids if "/" in i]
    hint = close_matches(env_id, membench) or close_matches(env_id, ids)
    if not hint:
        hint = " Run `membench-envs list` to see every membench ID."
    raise ConfigError(f"unknown environment ID {env_id!r}.{hint}")


def is_membench_id(env_id: str) -> bool:
    try:
        import membench_envs

        membench_envs.info(env_id)
        return True
    except KeyError:
        return False


def obs_variants(env_id: str) -> tuple[str, ...]:
    """The observation variants of an ID: its catalogue entry's (``partial``, ``oracle``, ``full`` and, for the
    robot tasks, ``rgb``); other gymnasium IDs have only their own observations, ``partial``."""
    try:
        import membench_envs

        return tuple(membench_envs.info(env_id).variants)
    except KeyError:
        return ("partial",)


def env_types(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """(obs_type, action_type) of an ID: from the membench catalogue, else from the spaces of one env."""
    try:
        import membench_envs

        spec = membench_envs.info(env_id)
        return spec.obs_type, spec.action_type
    except KeyError:
        pass
    import gymnasium as gym

    env = gym.make(plain_env_id(env_id), **dict(env_kwargs or {}))
    try:
        return space_types(env.observation_space, env.action_space)
    finally:
        env.close()


def env_suites(env_id: str) -> tuple[str, ...]:
    """The catalogue suites of a membench ID (``("STORI",)``, ...); () for other gymnasium IDs."""
    import membench_envs

    try:
        return tuple(membench_envs.info(env_id).suites)
    except KeyError:
        return ()


def env_score(env_id: str) -> str | None:
    """The per-run number the catalogue names for a membench ID (:attr:`membench_envs.catalogue.TaskSpec.score`:
    ``"return"`` where the papers score returns although the env reports success); None (the success rate where
    defined, else the return) for other IDs."""
    import membench_envs

    try:
        return membench_envs.info(env_id).score
    except KeyError:
        return None


#: The natural score ranges of :func:`natural_range`: (floor, ceiling, what it is).
SUCCESS_RANGE = (0.0, 1.0, "success rate (floor 0, ceiling 1)")
POPGYM_RANGE = (-1.0, 1.0, "POPGym normalised return (floor -1, ceiling 1)")


def natural_range(env_id: str, metric: str) -> tuple[float, float, str] | None:
    """The range a task's score is known to span, where it is known: a success rate spans 0..1; the return of a
    POPGym ID spans -1..1 (POPGym scales each task's per-step rewards so that an episode's return lies in [-1, 1],
    its "normalised return"); None for other returns, whose scale is the task's own."""
    if metric == "success_rate":
        return SUCCESS_RANGE
    if metric == "return" and "POPGym" in env_suites(env_id):
        return POPGYM_RANGE
    return None


def known_suites() -> tuple[str, ...]:
    """Every suite name of the membench catalogue (the keys a defaults file's ``suite`` section may use)."""
    from membench_envs import catalogue

    return tuple(catalogue.suites())


def make_kwargs(env_id: str, obs_variant: str, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ``gym.make``: membench IDs take ``obs_variant``; other gymnasium IDs only the
    default (partial) variant, which is then not passed."""
    if is_membench_id(env_id) or obs_variant != "partial":
        return {"obs_variant": obs_variant, **env_kwargs}
    return dict(env_kwargs)


def obs_type(obs_space) -> str:
    """ "dict", "image" (a rank-3 Box) or "vector": the observation kinds agent defaults are keyed by."""
    from gymnasium import spaces

    if isinstance(obs_space, spaces.Dict):
        return "dict"
    if isinstance(obs_space, spaces.Box) and len(obs_space.shape) == 3:
        return "image"
    return "vector"


def space_types(obs_space, action_space) -> tuple[str, str]:
    """(obs_type, action_type) from the spaces: action types discrete, multi-discrete or continuous (a Box)."""
    from gymnasium import spaces

    obs = obs_type(obs_space)
    if isinstance(action_space, spaces.Discrete):
        act = "discrete"
    elif isinstance(action_space, spaces.MultiDiscrete):
        act = "multi-discrete"
    elif isinstance(action_space, spaces.Box):
        act = "continuous"
    else:
        act = type(action_space).__name__
    return obs, act
