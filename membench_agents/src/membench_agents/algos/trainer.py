"""Trainers: the one interface the training loop (:mod:`membench_agents.runs.loop`) drives, whatever the agent.

:class:`Trainer` is the protocol; :class:`AlgoTrainer` is its base for membench's algorithms (each algorithm file
ends with its Trainer: :class:`~membench_agents.algos.ppo.PPOTrainer`, ...), and
:class:`~membench_agents.algos.sb3.SB3Trainer` implements it for the stable-baselines3 reference agents.
:func:`make_trainer` picks the implementation from the agent registry; :func:`preflight` and
:func:`budget_notes` say before a run starts what it cannot do and what it will train.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from membench_agents.algos.registry import AGENTS, ALGORITHMS, SB3_TRAINER, load
from membench_agents.config.env_facts import make_kwargs
from membench_agents.errors import ConfigError


@runtime_checkable
class Trainer(Protocol):
    """One training run (one seed) of one agent on one environment, stepped one iteration at a time.

    The training loop owns logging, checkpoint files, evaluation scheduling and stopping; a trainer owns the
    algorithm, its networks and its training environments.
    """

    #: The vector env the trainer steps. Checkpoints save its state with :mod:`membench_agents.runs.envstate`
    #: and restore it in place, so a trainer must keep stepping this same object.
    envs: Any

    #: What a stop inside :meth:`iterate` leaves. True: the trainer is consistent at that point, its
    #: :meth:`state_dict` holds the unfinished iteration and the next :meth:`iterate` completes it (SAC,
    #: DTQN). False: the unfinished iteration is dropped and the trainer must not be saved any more; the
    #: training loop keeps the checkpoint it wrote before the iteration (PPO, the SB3 agents).
    keeps_unfinished_iteration: bool

    @property
    def global_step(self) -> int:
        """Environment steps trained so far (over all parallel environments)."""

    @property
    def target_steps(self) -> int:
        """The steps of the whole run (the budget, rounded to whole iterations)."""

    @property
    def finished(self) -> bool:
        """Whether the run has trained its budget."""

    @property
    def policy(self) -> Any:
        """The policy, for :func:`membench_agents.runs.evaluation.evaluate` (``initial_state``, ``act``,
        ``env_action``, ``device``; an ``nn.Module``, put in eval mode while it is evaluated)."""

    def iterate(self, should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        """One iteration (a rollout and an update). Returns ``global_step``, ``sps``, ``episodes`` (a list of
        (return, length, success or None) of the training episodes that ended) and optional losses
        (``policy_loss``, ``value_loss``, ``entropy``, ``approx_kl``, ``clipfrac``, ``explained_variance``,
        ``learning_rate``). ``should_stop`` is polled often (at least between environment steps): when it
        returns True, :class:`~membench_agents.errors.StopRequested` is raised (see
        :attr:`keeps_unfinished_iteration`)."""

    def state_dict(self) -> dict[str, Any]:
        """Everything but the environments needed to continue exactly: tensors, numpy arrays, numbers,
        strings and containers of them only (checkpoints are loaded with ``weights_only=True``)."""

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` into a freshly built trainer of the same config and seed."""

    def close(self) -> None:
        """Release the environments."""


def algo_config(cfg: dict[str, Any], seed: int):
    """The config dataclass of the agent's algorithm (``PPOConfig``, ...) for training seed ``seed``, loaded
    strictly by the typed schema (unknown or wrong keys: one clear error)."""
    from membench_agents.config.schema import RunConfig

    return RunConfig.from_dict(cfg).algo_config(seed)


def ppo_config(cfg: dict[str, Any], seed: int):
    """The membench ``PPOConfig`` of a run config (see :func:`algo_config`)."""
    from membench_agents.config.schema import RunConfig

    return RunConfig.from_dict(cfg).ppo_config(seed)


def env_kwargs_of(cfg: dict[str, Any]) -> dict[str, Any]:
    return make_kwargs(cfg["env"], cfg["obs_variant"], cfg["env_kwargs"])


@dataclass(frozen=True)
class Budget:
    """How a run spends its ``total_steps``: the environment steps it will train (whole iterations), what the
    budget is rounded to, and the steps of random acting before the first update (0: none)."""

    trained: int
    unit: str
    learning_starts: int = 0


class AlgoTrainer:
    """The :class:`Trainer` of a membench algorithm (one seed): the run config's vector env and the algorithm
    built on it, with the run layer's interface delegated to the algorithm.

    A subclass names its ``kind`` and builds the algorithm in :meth:`build` (``Algo(envs, config)``); it sets
    ``check_spaces`` (``(observation_space, action_space) -> None``, raising ValueError) or overrides
    :meth:`check`. The defaults of :attr:`target_steps` and :attr:`finished` suit algorithms that train whole
    iterations of ``num_envs x num_steps`` steps (``iteration`` of ``num_iterations``); others override them.
    """

    kind: str
    check_spaces: Any = None
    keeps_unfinished_iteration = True

    def __init__(self, cfg: dict[str, Any], seed: int):
        from membench_agents.algos.vector import make_vector_env

        self.cfg = cfg
        config = algo_config(cfg, seed)
        self.envs = make_vector_env(cfg["env"], num_envs=config.num_envs, seed=seed, env_kwargs=env_kwargs_of(cfg))
        try:
            self.algo = self.build(self.envs, config)
        except ValueError as e:
            self.envs.close()
            raise ConfigError(f"agent {cfg['agent']!r} cannot be built for {cfg['env']}: {e}") from None

    def build(self, envs, config):
        """The algorithm for this run's environments and config."""
        raise NotImplementedError

    @classmethod
    def check(cls, cfg: dict[str, Any], obs_space, action_space) -> None:
        """Pre-flight: one clear ConfigError when the algorithm cannot handle the spaces (before a run folder
        exists)."""
        if cls.check_spaces is None:
            return
        try:
            cls.check_spaces(obs_space, action_space)
        except ValueError as e:
            raise ConfigError(f"agent {cfg['agent']!r} cannot handle {cfg['env']}: {e}") from None

    @classmethod
    def budget(cls, cfg: dict[str, Any]) -> Budget:
        """:class:`Budget` of a run config (algorithms that train whole iterations of ``num_envs x num_steps``)."""
        c = algo_config(cfg, cfg["seeds"][0])
        per = c.num_envs * c.num_steps
        return Budget(
            c.num_iterations * per,
            f"whole iterations of {c.num_envs} environments x {c.num_steps} steps ({per:,})",
            int(getattr(c, "learning_starts", 0)),
        )

    @property
    def global_step(self) -> int:
        return int(self.algo.global_step)

    @property
    def policy(self):
        return self.algo.policy

    @property
    def target_steps(self) -> int:
        """The steps of the whole run: ``num_iterations`` iterations of ``num_envs x num_steps`` steps."""
        c = self.algo.config
        return int(self.algo.num_iterations * c.num_envs * c.num_steps)

    @property
    def finished(self) -> bool:
        return self.algo.iteration >= self.algo.num_iterations

    def iterate(self, should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
        return self.algo.train_iteration(should_stop)

    def state_dict(self) -> dict[str, Any]:
        # the environments are saved as plain data by the training loop (envstate), never pickled
        return {"kind": self.kind, "algo": self.algo.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.algo.load_state_dict(state["algo"])

    def close(self) -> None:
        self.envs.close()


def budget_notes(cfg: dict[str, Any]) -> list[str]:
    """One line for each way the run will not train what its config seems to ask: a step count the iteration
    shape rounds, a budget that never reaches the first update (``learning_starts``)."""
    b = trainer_class(cfg["agent"]).budget(cfg)
    notes = []
    total = int(cfg["total_steps"])
    if b.trained != total:
        notes.append(f"{cfg['agent']} trains {b.trained:,} steps, not the {total:,} asked: it runs {b.unit}")
    if b.learning_starts and b.trained <= b.learning_starts:
        kind = AGENTS[cfg["agent"]].kind
        notes.append(
            f"the budget ({b.trained:,} steps) never reaches {kind}.learning_starts ({b.learning_starts:,}): "
            f"it acts at random throughout and trains nothing; raise --steps or lower {kind}.learning_starts"
        )
    return notes


class TrainerClass(Protocol):
    """What the run layer asks of a Trainer class (:class:`AlgoTrainer`'s subclasses, the SB3 reference trainer):
    the run's :class:`Budget` before anything is built, then ``cls(cfg, seed)``; an optional classmethod
    ``check(cfg, observation_space, action_space)`` is looked up by :func:`preflight`."""

    def __call__(self, cfg: dict[str, Any], seed: int) -> Trainer: ...

    def budget(self, cfg: dict[str, Any]) -> Budget: ...


def trainer_class(agent: str) -> TrainerClass:
    """The Trainer class of an agent: its algorithm's (``registry.ALGORITHMS``), or the SB3 reference trainer."""
    kind = AGENTS[agent].kind
    return cast(TrainerClass, load(SB3_TRAINER) if kind == "sb3" else ALGORITHMS[kind].trainer_class())


def make_trainer(cfg: dict[str, Any], seed: int) -> Trainer:
    """The trainer of the config's agent, for training seed ``seed``."""
    return trainer_class(cfg["agent"])(cfg, seed)


def check_device_available(device: str) -> None:
    """One clear error when the config's device is a CUDA GPU that this machine does not have (before any
    worker starts; ``auto`` falls back to the CPU by itself)."""
    if not device.startswith("cuda"):
        return
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(
            f"device {device!r} was asked for but this machine has no usable CUDA GPU "
            "(torch.cuda.is_available() is False); use --device cpu or --device auto"
        )
    index = int(device.partition(":")[2] or 0)
    if index >= torch.cuda.device_count():
        raise ConfigError(
            f"device {device!r} was asked for but this machine has {torch.cuda.device_count()} CUDA "
            f"GPU(s) (cuda:0..cuda:{torch.cuda.device_count() - 1})"
        )


def env_spaces(cfg: dict[str, Any]) -> tuple[Any, Any]:
    """The observation and action spaces of the run config's environment (made once, then closed); one clear error
    when it cannot be made with the config's kwargs."""
    import gymnasium as gym

    try:
        env = gym.make(cfg["env"], **env_kwargs_of(cfg))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"cannot create {cfg['env']} with {env_kwargs_of(cfg)}: {e}") from None
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()


def preflight(cfg: dict[str, Any], spaces: tuple[Any, Any] | None = None) -> tuple[Any, Any]:
    """Fail early, with one clear message, when the device is missing, a key is wrong or the agent cannot handle the
    environment; return the environment's spaces. ``spaces``: the environment's :func:`env_spaces`, where the
    caller has them (cells on one environment make it once)."""
    check_device_available(cfg["device"])
    obs_space, act_space = env_spaces(cfg) if spaces is None else spaces
    check = getattr(trainer_class(cfg["agent"]), "check", None)  # optional: a Trainer's own pre-flight check
    if check is not None:
        check(cfg, obs_space, act_space)
    return obs_space, act_space


__all__ = [
    "AlgoTrainer",
    "Budget",
    "Trainer",
    "algo_config",
    "budget_notes",
    "check_device_available",
    "env_kwargs_of",
    "env_spaces",
    "make_trainer",
    "ppo_config",
    "preflight",
    "trainer_class",
]
