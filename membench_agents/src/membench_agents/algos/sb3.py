"""Reference agents: stable-baselines3 PPO (``sb3-ppo``) and sb3-contrib RecurrentPPO (``sb3-recurrentppo``).

They train on the same IDs (single ``gym.make(id, obs_variant=..., **env_kwargs)`` environments inside SB3's
``DummyVecEnv``) and go through the same run machinery as the membench agents: one iteration (one rollout +
update) at a time, the same TensorBoard tags, checkpoints and progress bar, and the same evaluation protocol
(episode ``i`` is ``reset(seed=episode_seeds[i])``; the per-episode results are aggregated by the same
:func:`membench_agents.runs.aggregate` code as every other agent).

Checkpoints hold the policy and optimizer, the algorithm's rollout cursor (last observation, episode
starts, LSTM states, step counters) and the python / numpy / torch RNG states, all as plain data; the
training loop saves the ``DummyVecEnv`` (:attr:`SB3Trainer.envs`) with :mod:`membench_agents.runs.envstate`, so
a resumed SB3 run continues exactly like an uninterrupted one (on CPU) without anything being unpickled.
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from membench_agents.algos.registry import AGENTS
from membench_agents.algos.vector import to_numpy
from membench_agents.config.env_facts import make_kwargs, obs_type
from membench_agents.errors import ConfigError, StopRequested, check_stop
from membench_agents.errors import close_matches as _close

#: SB3 hyperparameters that membench sets itself (they may not appear in the ``sb3:`` section).
_RESERVED = {"env", "seed", "device", "verbose", "tensorboard_log", "_init_setup_model"}
_SB3_SPACES_OBS = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Dict)
_SB3_SPACES_ACT = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def _require_sb3(agent: str):
    try:
        import stable_baselines3  # noqa: F401

        if agent == "sb3-recurrentppo":
            import sb3_contrib  # noqa: F401
    except ImportError as e:
        raise ConfigError(
            f"agent {agent!r} needs stable-baselines3 and sb3-contrib: pip install 'membench-agents[sb3]' ({e})"
        ) from None


def algo_class(agent: str):
    _require_sb3(agent)
    if AGENTS[agent].sb3_algo == "RecurrentPPO":
        from sb3_contrib import RecurrentPPO

        return RecurrentPPO
    from stable_baselines3 import PPO

    return PPO


def check_spaces(agent: str, obs_space: gym.Space, action_space: gym.Space) -> None:
    """One clear error when SB3 cannot handle the spaces of an environment."""
    if not isinstance(action_space, _SB3_SPACES_ACT):
        raise ConfigError(
            f"agent {agent!r} cannot handle the action space {action_space}: stable-baselines3 PPO supports "
            "Box, Discrete, MultiDiscrete and MultiBinary actions only"
        )
    if not isinstance(obs_space, _SB3_SPACES_OBS):
        raise ConfigError(
            f"agent {agent!r} cannot handle the observation space {obs_space}: stable-baselines3 supports "
            "Box, Discrete, MultiDiscrete, MultiBinary and flat Dict observations"
        )
    if isinstance(obs_space, spaces.Dict):
        nested = [k for k, s in obs_space.spaces.items() if isinstance(s, (spaces.Dict, spaces.Tuple))]
        if nested:
            raise ConfigError(
                f"agent {agent!r} cannot handle the observation space: keys {nested} are nested Dict/Tuple spaces, "
                "and stable-baselines3 supports flat Dict observations only (use a membench agent: ppo-lstm)"
            )


#: The smallest image side stable-baselines3's NatureCNN takes (8x8 stride 4, 4x4 stride 2, 3x3 stride 1).
NATURE_CNN_MIN_SIDE = 36


def check_image_sizes(agent: str, env_id: str, obs_space: gym.Space) -> None:
    """One clear error when an image of the observation is too small for SB3's default CNN (which fails inside
    its first forward pass otherwise)."""
    from stable_baselines3.common.preprocessing import is_image_space

    subspaces = obs_space.spaces.items() if isinstance(obs_space, spaces.Dict) else [(None, obs_space)]
    for key, sub in subspaces:
        if not isinstance(sub, spaces.Box) or not is_image_space(sub, check_channels=False):
            continue
        if min(sorted(sub.shape)[1:]) < NATURE_CNN_MIN_SIDE:  # the two largest sides (the third: channels)
            what = f"its observation {key!r}" if key is not None else "its observation"
            raise ConfigError(
                f"agent {agent!r} cannot handle {env_id}: {what} is an image of shape {sub.shape}, and "
                f"stable-baselines3's default CNN needs at least {NATURE_CNN_MIN_SIDE}x{NATURE_CNN_MIN_SIDE} "
                "pixels; use a membench agent (e.g. ppo-lstm, whose encoder takes any size) or give "
                "sb3.policy_kwargs.features_extractor_class"
            )


def default_policy(agent: str, obs_space: gym.Space) -> str:
    recurrent = AGENTS[agent].sb3_algo == "RecurrentPPO"
    base = {"dict": "MultiInput", "image": "Cnn", "vector": "Mlp"}[obs_type(obs_space)]
    return f"{base}LstmPolicy" if recurrent else f"{base}Policy"


def make_env(env_id: str, obs_variant: str, env_kwargs: dict[str, Any]) -> gym.Env:
    from membench_agents.config.env_facts import plain_env_id

    env_id = plain_env_id(env_id)  # no module prefix reaches gymnasium (it would import that module)
    return gym.make(env_id, **make_kwargs(env_id, obs_variant, env_kwargs))


class _EnvFn:
    """A picklable environment factory for DummyVecEnv."""

    def __init__(self, env_id: str, obs_variant: str, env_kwargs: dict[str, Any]):
        self.args = (env_id, obs_variant, dict(env_kwargs))

    def __call__(self) -> gym.Env:
        return make_env(*self.args)


class EpisodeTracker:
    """Collects (return, length, success) of the training episodes finished during a rollout."""

    def __init__(self, n_envs: int):
        self.returns = np.zeros(n_envs, dtype=np.float64)
        self.lengths = np.zeros(n_envs, dtype=np.int64)
        self.finished: list[tuple[float, int, bool | None]] = []

    def on_step(self, rewards, dones, infos) -> None:
        self.returns += rewards
        self.lengths += 1
        for i in np.flatnonzero(dones):
            success = infos[i].get("success")
            self.finished.append(
                (float(self.returns[i]), int(self.lengths[i]), None if success is None else bool(success))
            )
            self.returns[i] = 0.0
            self.lengths[i] = 0

    def pop(self) -> list[tuple[float, int, bool | None]]:
        out, self.finished = self.finished, []
        return out


def _make_callback(tracker: EpisodeTracker, should_stop: Callable[[], bool] | None = None):
    from stable_baselines3.common.callbacks import BaseCallback

    class _Callback(BaseCallback):
        stopped = False

        def _on_step(self) -> bool:
            tracker.on_step(self.locals["rewards"], self.locals["dones"], self.locals["infos"])
            self.stopped = should_stop is not None and should_stop()
            return not self.stopped  # False ends SB3's rollout and learn() at once

    return _Callback()


class SB3Trainer:
    """One SB3 training run (one seed), stepped one iteration (rollout + update) at a time."""

    keeps_unfinished_iteration = False  # SB3's learn() cannot be left half-way and continued
    _policy: SB3Policy | None = None  # made by the policy property

    @classmethod
    def check(cls, cfg: dict[str, Any], obs_space: gym.Space, action_space: gym.Space) -> None:
        """Pre-flight: one clear ConfigError when SB3 cannot handle the spaces (before a run folder exists)."""
        check_spaces(cfg["agent"], obs_space, action_space)
        if "features_extractor_class" not in (cfg["sb3"].get("policy_kwargs") or {}):
            check_image_sizes(cfg["agent"], cfg["env"], obs_space)

    def __init__(self, cfg: dict[str, Any], seed: int, device: str | None = None):
        """``device``: default the config's ``device``."""
        from stable_baselines3.common.logger import Logger
        from stable_baselines3.common.vec_env import DummyVecEnv

        device = cfg["device"] if device is None else device
        self.cfg = cfg
        self.agent = cfg["agent"]
        self.seed = seed
        cls = algo_class(self.agent)
        sb3cfg = dict(cfg["sb3"])
        n_envs = int(sb3cfg.pop("n_envs", 8))
        policy = sb3cfg.pop("policy", None)
        allowed = set(inspect.signature(cls.__init__).parameters) - {"self", "policy"} - _RESERVED
        for k in sb3cfg:
            if k not in allowed:
                raise ConfigError(
                    f"unknown key 'sb3.{k}' for {cls.__name__}.{_close(k, allowed)} "
                    f"Valid: n_envs, policy, {', '.join(sorted(allowed))}."
                )
        fn = _EnvFn(cfg["env"], cfg["obs_variant"], cfg["env_kwargs"])
        self.venv = self.envs = DummyVecEnv([fn for _ in range(n_envs)])
        check_spaces(self.agent, self.venv.observation_space, self.venv.action_space)
        policy = policy or default_policy(self.agent, self.venv.observation_space)
        self.model = cls(policy, self.venv, seed=seed, device=device, verbose=0, **sb3cfg)
        # An in-memory logger: without one, every learn() call makes an empty /tmp/SB3-<date> folder.
        self.model.set_logger(Logger(folder=None, output_formats=[]))
        self.steps_per_iteration = self.model.n_steps * n_envs
        self.tracker = EpisodeTracker(n_envs)
        self.num_iterations = 0

    # --- the Trainer protocol (membench_agents.algos.trainer) ------------------------------------------------
    @property
    def global_step(self) -> int:
        return int(self.model.num_timesteps)

    @property
    def policy(self) -> SB3Policy:
        """The model behind membench's policy interface (:class:`SB3Policy`), for evaluation and acting."""
        if self._policy is None or self._policy.model is not self.model:
            self._policy = SB3Policy(self.model)
        return self._policy

    @classmethod
    def budget(cls, cfg: dict[str, Any]):
        """SB3 trains whole rollouts: the budget rounded up to a multiple of n_steps x n_envs."""
        from membench_agents.algos.trainer import Budget

        sb3cfg = cfg["sb3"]
        n_envs = int(sb3cfg.get("n_envs", 8))
        n_steps = int(sb3cfg.get("n_steps", inspect.signature(algo_class(cfg["agent"])).parameters["n_steps"].default))
        spi = n_steps * n_envs
        return Budget(
            -(-int(cfg["total_steps"]) // spi) * spi,
            f"whole rollouts of {n_envs} environments x {n_steps} steps ({spi:,}), rounded up",
        )

    @property
    def target_steps(self) -> int:
        return self.budget(self.cfg).trained

    @property
    def finished(self) -> bool:
        return self.global_step >= self.target_steps

    def iterate(self, should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """One SB3 rollout and update. ``should_stop`` is polled after every environment step and before every
        optimizer step of the update; a stop drops the iteration (:class:`~membench_agents.errors.StopRequested`;
        the model is then mid-iteration)."""
        t0 = time.perf_counter()
        callback = _make_callback(self.tracker, should_stop)
        hook = None
        if should_stop is not None:  # SB3's update has no callback: its optimizer's pre-step hook polls instead
            hook = self.model.policy.optimizer.register_step_pre_hook(lambda *_: check_stop(should_stop))
        try:
            self.model.learn(
                self.steps_per_iteration,
                callback=callback,
                reset_num_timesteps=False,
                log_interval=None,
                progress_bar=False,
            )
        finally:
            if hook is not None:
                hook.remove()
        if callback.stopped:
            raise StopRequested
        dt = time.perf_counter() - t0
        self.num_iterations += 1
        logged = dict(self.model.logger.name_to_value)
        out: dict[str, Any] = {
            "global_step": self.global_step,
            "sps": self.steps_per_iteration / max(dt, 1e-9),
            "episodes": self.tracker.pop(),
        }
        for ours, theirs in (
            ("policy_loss", "train/policy_gradient_loss"),
            ("value_loss", "train/value_loss"),
            ("approx_kl", "train/approx_kl"),
            ("clipfrac", "train/clip_fraction"),
            ("explained_variance", "train/explained_variance"),
            ("learning_rate", "train/learning_rate"),
        ):
            if theirs in logged:
                out[ours] = float(logged[theirs])
        if "train/entropy_loss" in logged:
            out["entropy"] = -float(logged["train/entropy_loss"])
        return out

    def state_dict(self) -> dict[str, Any]:
        m = self.model
        cursor = {
            "num_timesteps": m.num_timesteps,
            "_n_updates": m._n_updates,
            "_episode_num": m._episode_num,
            "_last_obs": m._last_obs,
            "_last_episode_starts": m._last_episode_starts,
            "_current_progress_remaining": m._current_progress_remaining,
        }
        if hasattr(m, "_last_lstm_states"):  # RNNStates(pi=(h, c), vf=(h, c)), kept as plain tuples
            cursor["_last_lstm_states"] = tuple(tuple(t.clone() for t in pair) for pair in m._last_lstm_states)
        return {
            "kind": "sb3",
            "policy": m.policy.state_dict(),
            "optimizer": m.policy.optimizer.state_dict(),
            "cursor": cursor,
            "tracker": (self.tracker.returns.copy(), self.tracker.lengths.copy()),
            "num_iterations": self.num_iterations,
            "rng": {
                "python": random.getstate(),
                "numpy": np.random.get_state(),
                "torch": torch.get_rng_state(),
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        m = self.model
        m.policy.load_state_dict(state["policy"])
        m.policy.optimizer.load_state_dict(state["optimizer"])
        cursor = dict(state["cursor"])
        if "_last_lstm_states" in cursor:
            from sb3_contrib.common.recurrent.type_aliases import RNNStates

            pi, vf = cursor["_last_lstm_states"]
            cursor["_last_lstm_states"] = RNNStates(tuple(pi), tuple(vf))
        for k, v in cursor.items():
            setattr(m, k, v)
        self.tracker.returns, self.tracker.lengths = (x.copy() for x in state["tracker"])
        self.num_iterations = state["num_iterations"]
        random.setstate(state["rng"]["python"])
        np.random.set_state(state["rng"]["numpy"])
        torch.set_rng_state(state["rng"]["torch"])

    def close(self) -> None:
        self.venv.close()


class SB3Policy(torch.nn.Module):
    """An SB3 model behind the policy interface of :func:`membench_agents.runs.evaluation.evaluate`.

    So SB3 models are evaluated by exactly the code (episode seeds, waves, success bookkeeping) that
    evaluates the membench agents. ``act`` calls ``model.predict`` (RecurrentPPO: with its LSTM state and
    the episode starts); the recurrent state is SB3's own and is only passed back and forth.
    """

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.recurrent = hasattr(model, "_last_lstm_states")

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def initial_state(self, n: int, device=None):
        return None

    def act(self, obs, state, episode_start, deterministic: bool = False, generator=None):
        obs_np = to_numpy(obs)
        if self.recurrent:
            actions, state = self.model.predict(
                obs_np, state=state, episode_start=to_numpy(episode_start), deterministic=deterministic
            )
        else:
            actions, _ = self.model.predict(obs_np, deterministic=deterministic)
        return torch.as_tensor(np.asarray(actions)), None, None, state

    def env_action(self, action):
        return action


__all__ = ["SB3Policy", "SB3Trainer", "algo_class", "check_image_sizes", "check_spaces", "default_policy"]
