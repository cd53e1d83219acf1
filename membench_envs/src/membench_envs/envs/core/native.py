"""Native tasks: one numpy implementation, exposed as a single ``gymnasium.Env`` and as a batched ``VectorEnv``.

A task subclasses :class:`BatchedCore`, whose state is a set of arrays of length N. The single environment
is the same core with N = 1, so the two can never drift apart; the batched environment steps all N
environments with one call. Randomness comes from :mod:`membench_envs.envs.core.rng`, keyed per environment
by its seed, so ``reset(seed=s)`` on the batched env gives environment i exactly the episodes of a single
env reset with ``seed=s + i`` (gymnasium's ``SyncVectorEnv`` convention).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from membench_envs.envs.core import rng
from membench_envs.envs.core.params import VARIANTS, Param, check_kwargs, check_seed

#: The extra kwargs of ``gym.make_vec`` on the native batched path (:class:`NativeVectorEnv`).
VECTOR_PARAMS: tuple[Param, ...] = (
    Param("num_envs", "int", 1, low=1, doc="environments stepped together"),
    Param(
        "autoreset_mode",
        "choice",
        "NextStep",
        choices=("NextStep", "SameStep", "next_step", "same_step"),
        doc="gymnasium's AutoresetMode (the enum or its value)",
    ),
    Param("max_episode_steps", "int", None, low=1, none_ok=True, doc="kept for introspection; T is the task's own"),
)


def check_can_step(started: bool, done: bool) -> None:
    """A single env's step guard: ResetNeeded before the first reset and after the episode ended."""
    if not started:
        raise gym.error.ResetNeeded("call reset() before step()")
    if done:
        raise gym.error.ResetNeeded("the episode is over; call reset() before step()")


#: Render modes of every native task (single and batched); frames per second for videos.
RENDER_MODES = ("rgb_array", "ansi")
RENDER_FPS = 4


def check_render_mode(render_mode: str | None, allowed: tuple[str, ...] = RENDER_MODES) -> str | None:
    """None or one of ``allowed``; anything else is one clear ValueError naming the valid modes."""
    if render_mode is not None and render_mode not in allowed:
        raise ValueError(f"unknown render_mode {render_mode!r}; valid: {', '.join(allowed)} (or None)")
    return render_mode


def check_variant(obs_variant: str, allowed: tuple[str, ...] = VARIANTS) -> str:
    """One of ``allowed`` (for envs whose variants are not a declared ``Param``: MIKASA-Robo's)."""
    if obs_variant not in allowed:
        raise ValueError(f"unknown obs_variant {obs_variant!r}; valid values: {', '.join(allowed)}")
    return obs_variant


class BatchedCore:
    """The state and dynamics of N copies of one task, as numpy arrays.

    Subclasses define the spaces and implement :meth:`_new_episodes`, :meth:`step`, :meth:`observe`, :meth:`oracle`,
    :meth:`render_rgb` and :meth:`render_ansi`. They draw randomness only through :meth:`uniform` / :meth:`integers`.
    The task's kwargs are declared once in ``PARAMS`` (see :mod:`membench_envs.envs.core.params`); the single and
    the batched env check them there before building the core.
    """

    PARAMS: ClassVar[tuple[Param, ...]] = ()
    action_space: gym.Space
    obs_spaces: dict[str, gym.Space]
    oracle_dim: int

    def __init__(self, num_envs: int):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs
        self.keys = np.zeros(num_envs, dtype=np.uint64)
        self.episode = np.full(num_envs, -1, dtype=np.int64)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.success = np.zeros(num_envs, dtype=bool)

    # --- randomness --------------------------------------------------------------------------------
    def uniform(self, idx: np.ndarray, stream: int, step=None) -> np.ndarray:
        if self.num_envs == 1 and np.ndim(step) == 0:  # single env: same numbers without numpy overhead
            s = int(self.t[0]) if step is None else int(step)
            return np.array([rng.uniform_one(int(self.keys[0]), int(self.episode[0]), s, stream)])
        step = self.t[idx] if step is None else step
        return rng.uniform(self.keys[idx], self.episode[idx], step, stream)

    def integers(self, idx: np.ndarray, stream: int, low: int, high: int, step=None) -> np.ndarray:
        return rng.to_integers(self.uniform(idx, stream, step), low, high)

    # --- lifecycle -----------------------------------------------------------------------------------
    def begin(self, idx: np.ndarray) -> None:
        """Start a new episode in environments ``idx`` (their keys are already set)."""
        self.episode[idx] += 1
        self.t[idx] = 0
        self.success[idx] = False
        self._new_episodes(idx)

    def _new_episodes(self, idx: np.ndarray) -> None:
        raise NotImplementedError

    def step(self, actions: np.ndarray, idx: np.ndarray | None = None):
        """Advance environments ``idx`` (all when None); returns (reward, terminated, truncated) for them."""
        raise NotImplementedError

    def observe(self, variant: str, idx: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def oracle(self, idx: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def render_ansi(self, i: int) -> str:
        raise NotImplementedError

    def render_rgb(self, i: int, done: bool = False) -> np.ndarray:
        """Environment ``i`` as a uint8 (H, W, 3) picture whose size depends only on the task parameters;
        ``done`` draws the outcome border (see :mod:`membench_envs.envs.core.draw`)."""
        raise NotImplementedError


def validate_actions(space: gym.Space, actions: Any, batch: int | None) -> np.ndarray:
    """Return actions as an array, raising one clear ValueError for a wrong shape or an out-of-space value."""
    arr = np.asarray(actions)
    expected = space.shape if batch is None else (batch, *(space.shape or ()))
    if arr.shape != expected:
        raise ValueError(f"action has shape {arr.shape}, expected {expected} for action space {space}")
    if isinstance(space, gym.spaces.Discrete):
        if arr.dtype.kind not in "iub" and not (arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0)):
            raise ValueError(f"action {actions!r} is not an integer; action space is {space}")
        arr = arr.astype(np.int64, copy=False)
        # one reduction: below `start` wraps around to a huge unsigned value
        if arr.size and int((arr - space.start if space.start else arr).view(np.uint64).max()) >= int(space.n):
            raise ValueError(f"action {actions!r} is outside the action space {space}")
    elif isinstance(space, gym.spaces.MultiDiscrete):
        if arr.dtype.kind not in "iub" and not (arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0)):
            raise ValueError(f"action {actions!r} is not an array of integers; action space is {space}")
        arr = arr.astype(np.int64)
        if np.any(arr < space.start) or np.any(arr >= space.start + space.nvec):
            raise ValueError(f"action {actions!r} is outside the action space {space}")
    return arr


def _first(obs: np.ndarray | dict[str, np.ndarray]):
    """The first environment's observation of a batch (an array, or a dict of arrays for ``Dict`` spaces)."""
    if isinstance(obs, dict):
        return {key: value[0] for key, value in obs.items()}
    return obs[0]


class NativeEnv(gym.Env):
    """A single environment backed by a :class:`BatchedCore` with N = 1."""

    core_cls: ClassVar[type[BatchedCore]]
    # not a ClassVar: gymnasium's Env declares metadata per instance
    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        """``kwargs``: the task's (``core_cls.PARAMS``, ``obs_variant`` included), checked and completed there."""
        params = check_kwargs(type(self).__name__, self.core_cls.PARAMS, kwargs)
        self.obs_variant = params.pop("obs_variant")
        self.render_mode = check_render_mode(render_mode)
        self.core = self.core_cls(1, **params)
        self.observation_space = self.core.obs_spaces[self.obs_variant]
        self.action_space = self.core.action_space
        self._idx = np.zeros(1, dtype=np.int64)
        self._started = self._done = False

    def _info(self) -> dict[str, Any]:
        return {"oracle": self.core.oracle(self._idx)[0]}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed, f"{type(self).__name__}.reset")
        super().reset(seed=seed)
        if seed is not None:
            self.core.keys[0] = rng.key_from_seed(seed)
            self.core.episode[0] = -1
        elif not self._started:
            self.core.keys[0] = rng.random_key(self.np_random)
        self._started = True
        self.core.begin(self._idx)
        self._done = False
        return _first(self.core.observe(self.obs_variant, self._idx)), self._info()

    def step(self, action):
        check_can_step(self._started, self._done)
        space = self.action_space
        if (
            type(action) in (int, np.int64)
            and isinstance(space, gym.spaces.Discrete)
            and (space.start <= action < space.start + space.n)
        ):  # the common case, checked without numpy
            a = np.array([action], dtype=np.int64)
        else:
            a = validate_actions(space, action, None)[None]
        reward, terminated, truncated = self.core.step(a, self._idx)
        obs = _first(self.core.observe(self.obs_variant, self._idx))
        info = self._info()
        self._done = bool(terminated[0] or truncated[0])
        if self._done:
            info["success"] = bool(self.core.success[0])
        return obs, float(reward[0]), bool(terminated[0]), bool(truncated[0]), info

    def render(self):
        """``"rgb_array"``: a uint8 (H, W, 3) picture of the state (its size fixed by the task parameters);
        ``"ansi"``: the same as text; None without a render mode. Valid before the first reset too."""
        if self.render_mode == "ansi":
            return self.core.render_ansi(0)
        if self.render_mode == "rgb_array":
            return self.core.render_rgb(0, done=self._done)
        return None


_AUTORESET_NAMES = {"next_step": "NextStep", "same_step": "SameStep"}


class NativeVectorEnv(VectorEnv):
    """N environments stepped by one numpy call. Follows gymnasium's VectorEnv contract.

    ``autoreset_mode`` is gymnasium's: NEXT_STEP (default, like ``SyncVectorEnv``) or SAME_STEP, where
    the final observation of a finished episode is in ``info["final_obs"]`` and its info in
    ``info["final_info"]``. ``render_mode`` ("rgb_array" or "ansi") makes :meth:`render` return every
    environment's frame.
    """

    core_cls: ClassVar[type[BatchedCore]]

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        """``kwargs``: :data:`VECTOR_PARAMS` (``num_envs``, ``autoreset_mode``: an ``AutoresetMode`` or its value,
        ``max_episode_steps``) and the task's (``core_cls.PARAMS``), each checked and completed where declared."""
        owner = type(self).__name__
        vector = {p.name: kwargs.pop(p.name) for p in VECTOR_PARAMS if p.name in kwargs}
        if isinstance(vector.get("autoreset_mode"), AutoresetMode):
            vector["autoreset_mode"] = vector["autoreset_mode"].value
        vector = check_kwargs(owner, VECTOR_PARAMS, vector)
        num_envs, mode_value = vector["num_envs"], vector["autoreset_mode"]
        params = check_kwargs(owner, self.core_cls.PARAMS, kwargs)
        self.obs_variant = params.pop("obs_variant")
        self.render_mode = check_render_mode(render_mode)
        mode = AutoresetMode(_AUTORESET_NAMES.get(mode_value, mode_value))
        if mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode DISABLED is not supported by native batched envs")
        self.metadata = {"autoreset_mode": mode, "render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}
        self.core = self.core_cls(num_envs, **params)
        self.num_envs = num_envs
        self.single_observation_space = self.core.obs_spaces[self.obs_variant]
        self.single_action_space = self.core.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._all = np.arange(num_envs)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._started = False
        self._rng = np.random.default_rng()
        self.max_episode_steps = vector["max_episode_steps"]  # the core enforces T itself; kept for introspection

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        """Reset every environment, or with ``options={"reset_mask": mask}`` only those where ``mask`` is True.

        As gymnasium's ``SyncVectorEnv``: ``seed`` is None, an int (environment i gets ``seed + i``) or a list of
        ``num_envs`` ints / None; the mask is a bool numpy array of shape ``(num_envs,)`` with at least one True.
        Masked-out environments keep their state (and a pending autoreset); the returned observation holds every
        environment's current observation, and the info's ``_`` masks are True only for the reset ones.
        """
        n = self.num_envs
        owner = f"{type(self).__name__}.reset"
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            first = check_seed(seed, owner)
            seeds = [first + i for i in range(n)]
        elif isinstance(seed, (list, tuple)):
            if len(seed) != n:
                raise ValueError(f"{owner}: got {len(seed)} seeds for {n} environments")
            seeds = [check_seed(s, owner) for s in seed]
        else:
            raise TypeError(
                f"{owner}: seed={seed!r} is not allowed; seed must be None, an int >= 0 or a list of "
                f"{n} ints >= 0 / None"
            )
        mask = self._reset_mask(options, owner)
        rows = np.flatnonzero(mask)
        if seed is not None and seeds[rows[0]] is not None:
            self._rng = np.random.default_rng(seeds[rows[0]])
        for i in rows:
            s = seeds[i]
            if s is not None:
                self.core.keys[i] = rng.key_from_seed(s)
                self.core.episode[i] = -1
            elif self.core.episode[i] < 0:  # never reset: a key from the vector env's generator
                self.core.keys[i] = rng.random_key(self._rng)
        self._started = True
        self.core.begin(rows)
        self._needs_reset[rows] = False
        info = self._info()
        if not mask.all():
            info["oracle"] = np.where(mask.reshape((n,) + (1,) * (info["oracle"].ndim - 1)), info["oracle"], 0)
            info["_oracle"] = mask.copy()
        return self.core.observe(self.obs_variant), info

    def _reset_mask(self, options: dict[str, Any] | None, owner: str) -> np.ndarray:
        n = self.num_envs
        if options is None or "reset_mask" not in options:
            return np.ones(n, dtype=bool)
        mask = options["reset_mask"]
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"{owner}: options['reset_mask'] must be a numpy bool array, got {mask!r}")
        if mask.shape != (n,):
            raise ValueError(f"{owner}: options['reset_mask'] must have shape ({n},), got {mask.shape}")
        if not mask.any():
            raise ValueError(f"{owner}: options['reset_mask'] must have at least one True value, got {mask}")
        if not self._started and not mask.all():
            raise gym.error.ResetNeeded(f"{owner}: every environment must be reset once before a masked reset")
        return mask

    def _info(self) -> dict[str, Any]:
        return {"oracle": self.core.oracle(), "_oracle": np.ones(self.num_envs, dtype=bool)}

    def step(self, actions):
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = validate_actions(self.single_action_space, actions, self.num_envs)
        n = self.num_envs
        mode = self.metadata["autoreset_mode"]
        if mode == AutoresetMode.NEXT_STEP and self._needs_reset.any():
            reward = np.zeros(n, dtype=np.float64)
            terminated = np.zeros(n, dtype=bool)
            truncated = np.zeros(n, dtype=bool)
            resetting = np.flatnonzero(self._needs_reset)
            active = np.flatnonzero(~self._needs_reset)
            self.core.begin(resetting)
            if active.size:
                r, te, tr = self.core.step(a[active], active)
                reward[active], terminated[active], truncated[active] = r, te, tr
        else:
            reward, terminated, truncated = self.core.step(a)
        done = terminated | truncated
        info: dict[str, Any] = {}
        if mode == AutoresetMode.NEXT_STEP:
            obs = self.core.observe(self.obs_variant)
            info = self._info()
            if done.any():
                info["success"] = self.core.success.copy()
                info["_success"] = done.copy()
            self._needs_reset = done
        else:
            if done.any():
                final_obs = self.core.observe(self.obs_variant)
                final_info = {
                    "success": self.core.success.copy(),
                    "_success": done.copy(),
                    "oracle": self.core.oracle(),
                    "_oracle": done.copy(),
                }
                self.core.begin(np.flatnonzero(done))
                info["final_obs"] = final_obs
                info["_final_obs"] = done.copy()
                info["final_info"] = final_info
                info["_final_info"] = done.copy()
            obs = self.core.observe(self.obs_variant)
            info.update(self._info())
        return obs, reward, terminated, truncated, info

    def render(self):
        """One frame per environment, as ``SyncVectorEnv`` returns them: a tuple of N uint8 (H, W, 3) pictures
        (``"rgb_array"``) or N strings (``"ansi"``); None without a render mode. The cost grows with N; for
        one environment of a large batch call ``render_env(i)``."""
        if self.render_mode is None:
            return None
        return tuple(self.render_env(i) for i in range(self.num_envs))

    def render_env(self, i: int):
        """The frame of environment ``i`` in this env's render mode (``"rgb_array"`` when it has none)."""
        if not 0 <= i < self.num_envs:
            raise IndexError(f"environment index {i} is outside 0 … {self.num_envs - 1}")
        if self.render_mode == "ansi":
            return self.core.render_ansi(i)
        return self.core.render_rgb(i, done=bool(self._needs_reset[i]))
