"""The single catalogue of every membench task.

Every registered ID has exactly one :class:`TaskSpec` here. The task pages (``membench-envs docs``),
``membench-envs list``, the LTM/STM planner (:mod:`membench_envs.memory`) and gymnasium registration all read this one
list.

The per-suite entries live in the sibling modules (``native``, ``popgym``, ``minigrid``, ``memory_maze``, ``robo``,
``stori``, ...) and never import a simulator backend. An entry holds what the catalogue alone knows (ID, suites,
memory types, T, Ξ and their derivation, the ID's preset kwargs); a numpy task's kwargs, defaults and rules live in
its task module (:mod:`membench_envs.envs.native`, :mod:`membench_envs.envs.memory_gym`), which its catalogue module
imports; a backend wrapper's kwargs are declared in its catalogue module, which the wrapper imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from membench_envs.envs.core.params import VARIANTS, Param

#: The MIKASA taxonomy of memory (Cherepanov et al., "Memory, Benchmark & Robots", §4.2).
MEMORY_TYPES = ("object", "spatial", "sequential", "capacity")

OBS_TYPES = ("vector", "image", "dict")
ACTION_TYPES = ("discrete", "multi-discrete", "continuous")

#: Source papers, keyed by the short names used in the catalogue.
PAPERS: Mapping[str, str] = MappingProxyType(
    {
        "MEM": "Cherepanov et al., Unraveling the complexity of memory in RL agents (classification and evaluation)",
        "MIKASA": "Cherepanov et al., Memory, Benchmark & Robots (MIKASA-Base / MIKASA-Robo)",
        "POPGym": "Morad et al., POPGym: Benchmarking Partially Observable Reinforcement Learning (ICLR 2023)",
        "POBAX": "Benchmarking Partial Observability in RL with a Suite of Memory-Improvable Domains (POBAX)",
        "STORI": "STORI: STOchastic-ataRI benchmark",
        "bsuite": "Osband et al., Behaviour Suite for Reinforcement Learning (memory_length)",
        "DTQN": "Esslinger et al., Deep Transformer Q-Networks for Partially Observable RL (Memory Cards)",
        "MiniGrid": "Chevalier-Boisvert et al., Minigrid & Miniworld (MiniGrid-Memory)",
        "Ni2023": "Ni et al., When do transformers shine in RL? Decoupling memory from credit assignment",
        "TVT": "Hung et al., Optimizing agent behavior over long time scales by transporting value (Visual Match)",
        "HCAM": "Lampinen et al., Towards mental time travel: a hierarchical memory for RL agents (Ballet)",
        "Humplik": "Humplik et al., Meta reinforcement learning as task inference (Numpad)",
        "MemoryGym": "Pleines et al., Memory Gym: Towards Endless Tasks to Benchmark Memory Capabilities of Agents",
        "MemUP": "Sorokin et al., Explain My Surprise: Learning Efficient Long-Term Memory by Predicting Uncertain "
        "Outcomes (NeurIPS 2022; ViZDoom-Two-Colors)",
        "MemoryMaze": "Pasukonis et al., Evaluating Long-Term Memory in 3D Mazes (Memory Maze)",
    }
)

#: Modules holding the per-suite entries, in table order.
_SUITE_MODULES = (
    "native",
    "numpad",
    "mortar_mayhem",
    "mystery_path",
    "searing_spotlights",
    "vizdoom",
    "memory_maze",
    "popgym",
    "minigrid",
    "robo",
    "robo_shell_game",
    "stori",
    "pobax",
    "pobax_maze",
    "pobax_mujoco",
    "pobax_pixels",
    "pobax_crafter",
)

#: What a task's :attr:`TaskSpec.score` may name.
SCORES = ("success_rate", "return")

#: STORI's taxonomy of stochasticity (paper Table 1): 0 deterministic RAM, 1 action dependent, 2 action independent
#: random, 3 concept drift, 4 representation learning (the default screen), 5 missing state variables.
STOCHASTICITY_TYPES = (0, 1, 2, 3, 4, 5)


@dataclass(frozen=True)
class HorizonKwarg:
    """The integer kwarg of a task family that sets how long its memory must hold (a corridor length, a number of
    decks) and leaves its spaces alone, so a policy trained at one value acts at another: the horizon probe and
    ``length_generalization`` of ``membench sweep`` vary it, and ``membench plan`` recomputes Ξ from it. Every ID of
    the family carries it (:attr:`TaskSpec.horizon`), and the ID's Ξ is :attr:`xi` at the ID's value."""

    name: str
    xi: Callable[[int], tuple[int, int]]
    """(min Ξ, max Ξ) as a function of the value"""
    text: str
    """the rule in words"""
    neutral: frozenset[str] = frozenset()
    """the family's other kwargs, none of which changes Ξ"""
    episode_length: Callable[[int], int] | None = None
    """T as a function of the value, where the env needs it (POPGym's wrapper)"""
    high: int | None = None
    """the largest value, where the kwarg is declared from this rule (POPGym's); else its :class:`Param` says"""


@dataclass(frozen=True)
class TaskSpec:
    """Everything membench knows about one environment ID."""

    id: str
    entry_point: str
    description: str
    suites: tuple[str, ...]
    memory_types: tuple[str, ...]
    episode_length: int | None
    """T: the (maximum) episode length in steps."""
    xi: tuple[int, int] | None
    """(min Ξ, max Ξ): the correlation horizons of the memory-classification paper, or None if undefined."""
    obs_type: str
    action_type: str
    source: str
    extra: str | None = None
    """The ``pip install membench-envs[extra]`` that provides the backend, or None for the core."""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    variants: tuple[str, ...] = VARIANTS
    vector_entry_point: str | None = None
    """A native batched implementation (one numpy step for N envs), if there is one."""
    max_episode_steps: int | None = None
    disable_env_checker: bool = False
    """True where gymnasium's passive checker cannot read the observations (e.g. CUDA tensors of ManiSkill)."""
    oracle_keys: tuple[str, ...] = ()
    """What the oracle variant (and ``info['oracle']``) exposes."""
    xi_note: str = ""
    xi_paper: tuple[int, int] | None = None
    """Ξ as printed in the memory-classification paper's Table 2, where it differs from ``xi`` (the value
    derived from the implementation, which is what an experiment on this ID must use)."""
    notes: str = ""
    params: tuple[Param, ...] = ()
    """Every kwarg ``gym.make(id, ...)`` accepts (besides gymnasium's own ``render_mode`` and wrapper kwargs), with
    its type, range and default: what :func:`membench_envs.envs.core.params.check_kwargs` enforces at ``make``."""
    vector_params: tuple[Param, ...] = ()
    """The extra kwargs of ``gym.make_vec(id, ...)`` on the native batched path (``num_envs``, ...)."""
    stochasticity: int | None = None
    """The STORI taxonomy type (:data:`STOCHASTICITY_TYPES`) of the ID's stochasticity, or None (not a STORI preset)."""
    horizon: HorizonKwarg | None = None
    """The kwarg that sets the ID's correlation horizon, where one integer kwarg does (its family's rule)."""
    score: str | None = None
    """The per-run number an evaluation reports (:data:`SCORES`): ``"return"`` where the task's papers score returns
    although the env also reports ``info["success"]`` (POBAX, POPGym, Memory Gym, ViZDoom Two-Colors); None: the
    success rate where the env defines success, the return otherwise."""

    def __post_init__(self) -> None:
        bad = [m for m in self.memory_types if m not in MEMORY_TYPES]
        if bad:
            raise ValueError(f"{self.id}: unknown memory type(s) {bad}; valid: {MEMORY_TYPES}")
        if self.obs_type not in OBS_TYPES:
            raise ValueError(f"{self.id}: obs_type {self.obs_type!r} not in {OBS_TYPES}")
        if self.action_type not in ACTION_TYPES:
            raise ValueError(f"{self.id}: action_type {self.action_type!r} not in {ACTION_TYPES}")
        if self.source not in PAPERS:
            raise ValueError(f"{self.id}: unknown source paper {self.source!r}")
        if self.xi is not None and not (1 <= self.xi[0] <= self.xi[1]):
            raise ValueError(f"{self.id}: correlation horizons must satisfy 1 <= min <= max, got {self.xi}")
        if self.score is not None and self.score not in SCORES:
            raise ValueError(f"{self.id}: score {self.score!r} not in {SCORES}")
        if self.stochasticity is not None and self.stochasticity not in STOCHASTICITY_TYPES:
            raise ValueError(f"{self.id}: stochasticity {self.stochasticity!r} not in {STOCHASTICITY_TYPES}")
        if "/" not in self.id:
            raise ValueError(f"{self.id}: membench IDs are namespaced (e.g. 'MIKASA/...')")
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))
        declared = {p.name for p in self.params}
        unknown = [k for k in self.kwargs if self.params and k not in declared]
        if unknown:
            raise ValueError(f"{self.id}: registered kwargs {unknown} are not declared in params")

    @property
    def namespace(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def context_memory_border(self) -> int | None:
        """K̄ = min Ξ − 1 (Theorem 2 of the memory-classification paper)."""
        return None if self.xi is None else self.xi[0] - 1

    @property
    def pip_install(self) -> str:
        return "pip install membench-envs" if self.extra is None else f"pip install 'membench-envs[{self.extra}]'"


_CATALOGUE: dict[str, TaskSpec] | None = None


def _load() -> dict[str, TaskSpec]:
    global _CATALOGUE
    if _CATALOGUE is None:
        tasks: dict[str, TaskSpec] = {}
        for name in _SUITE_MODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            for spec in module.TASKS:
                if spec.id in tasks:
                    raise RuntimeError(f"duplicate catalogue entry {spec.id}")
                tasks[spec.id] = spec
        _CATALOGUE = tasks
    return _CATALOGUE


def all_tasks() -> list[TaskSpec]:
    """Every catalogue entry, in table order."""
    return list(_load().values())


def get(env_id: str) -> TaskSpec:
    """The catalogue entry of ``env_id``; raises KeyError with close matches when unknown."""
    tasks = _load()
    if env_id in tasks:
        return tasks[env_id]
    import difflib

    close = difflib.get_close_matches(env_id, tasks, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(close)}?" if close else " Run `membench-envs list` to see every ID."
    raise KeyError(f"{env_id!r} is not a membench environment ID.{hint}")


def suites() -> list[str]:
    """The names of every suite, in first-seen order."""
    seen: dict[str, None] = {}
    for spec in all_tasks():
        for s in spec.suites:
            seen.setdefault(s, None)
    return list(seen)


def select(
    suite: str | None = None,
    memory_type: str | None = None,
    namespace: str | None = None,
    extra: str | None = None,
    stochasticity: int | None = None,
) -> list[TaskSpec]:
    """Filter the catalogue. Each filter is case-insensitive; None means no filter. ``stochasticity``: the STORI
    taxonomy type (0-5) of the ID."""
    if stochasticity is not None and stochasticity not in STOCHASTICITY_TYPES:
        raise ValueError(
            f"unknown stochasticity type {stochasticity!r}; valid: {', '.join(map(str, STOCHASTICITY_TYPES))}"
        )
    if memory_type is not None and memory_type.lower() not in MEMORY_TYPES:
        raise ValueError(f"unknown memory type {memory_type!r}; valid: {', '.join(MEMORY_TYPES)}")
    if suite is not None and suite.lower() not in {s.lower() for s in suites()}:
        raise ValueError(f"unknown suite {suite!r}; valid: {', '.join(suites())}")
    out = []
    for spec in all_tasks():
        if suite is not None and suite.lower() not in {s.lower() for s in spec.suites}:
            continue
        if memory_type is not None and memory_type.lower() not in spec.memory_types:
            continue
        if namespace is not None and spec.namespace.lower() != namespace.rstrip("/").lower():
            continue
        if extra is not None and (spec.extra or "core") != extra:
            continue
        if stochasticity is not None and spec.stochasticity != stochasticity:
            continue
        out.append(spec)
    return out


def suite(name: str) -> list[str]:
    """The IDs of one suite, e.g. ``suite("MIKASA-Base")``."""
    return [s.id for s in select(suite=name)]


def ids(specs: Iterable[TaskSpec]) -> list[str]:
    return [s.id for s in specs]
