"""Memory methodology of the memory-classification paper (Cherepanov et al.; Defs 4.5-4.7, Thm 2, Eq 6, Alg 1).

Vocabulary:
  - K: the agent's context length (1 for an MLP or an RNN's input; the attention window of a transformer);
  - K_eff = μ(K) >= K: the effective context reached by a memory mechanism (an RNN's hidden state);
  - ξ: a correlation horizon, the delay between an event and its recall; Ξ: all of them in one task;
  - K̄ = min Ξ − 1: the context memory border; K <= K̄ makes every recall long-term.

Regimes (§4.1): K <= K̄ validates LTM only; K̄ < K < max Ξ mixes STM and LTM (LTM cannot be measured
explicitly); K >= max Ξ validates STM only. A correct LTM experiment satisfies K <= K̄ < ξ <= K_eff (Eq 6).

Ξ comes from the catalogue (``membench_envs.info(env_id).xi``) or is given directly.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from membench_envs import catalogue


@dataclass(frozen=True)
class EventRecall:
    """One event-recall pair: an event starting at ``t_e`` lasting ``dt`` steps, recalled at ``t_r``."""

    t_e: int
    dt: int
    t_r: int

    @property
    def xi(self) -> int:
        """Correlation horizon ξ = t_r − t_e − Δt + 1."""
        return self.t_r - self.t_e - self.dt + 1


class Regime(str, Enum):
    LTM_ONLY = "LTM-only"
    MIXED = "mixed (STM and LTM)"
    STM_ONLY = "STM-only"


def correlation_horizons(pairs: Iterable[EventRecall]) -> tuple[int, int]:
    """(min Ξ, max Ξ) of a list of event-recall pairs."""
    xis = [p.xi for p in pairs]
    if not xis:
        raise ValueError("no event-recall pairs: the environment is not suitable for memory tests (n = 0)")
    return min(xis), max(xis)


def _xi_range(xi) -> tuple[int, int]:
    """Accept an env ID, an int ξ, a (min, max) pair or an iterable of ξ values."""
    if isinstance(xi, str):
        spec = catalogue.get(xi)
        if spec.xi is None:
            why = spec.xi_note or "not a memory task"
            raise ValueError(f"{xi} has no correlation horizon in the catalogue ({why})")
        return spec.xi
    if isinstance(xi, numbers.Integral) and not isinstance(xi, bool):
        value = _horizon(xi)
        return value, value
    try:
        values = sorted(_horizon(v) for v in xi)
    except TypeError as exc:
        if "not iterable" not in str(exc):
            raise
        raise TypeError(f"correlation horizons must be an env ID, an int, or ints (min, max), got {xi!r}") from None
    if not values:
        raise ValueError("empty set of correlation horizons")
    return values[0], values[-1]


def _horizon(value) -> int:
    """One correlation horizon: an integer >= 1 (Python or numpy)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"a correlation horizon must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"a correlation horizon must be an integer >= 1, got {value!r}")
    return int(value)


def is_memory_intensive(xi) -> bool:
    """Def 4.6: min Ξ > 1."""
    return _xi_range(xi)[0] > 1


def is_markov(xi) -> bool:
    """Corollary 1: the task is an MDP iff max Ξ = 1."""
    return _xi_range(xi)[1] == 1


def context_memory_border(xi) -> int:
    """K̄ = min Ξ − 1 (Theorem 2, Eq 4)."""
    lo, _ = _xi_range(xi)
    if lo <= 1:
        raise ValueError(f"min Ξ = {lo}: the task is not memory-intensive, so it has no context memory border")
    return lo - 1


def classify_pair(K: int, xi: int) -> str:
    """Def 4.5 for one event-recall pair: STM if ξ <= K, else LTM."""
    return "STM" if _horizon(xi) <= _check_k(K) else "LTM"


def classify_experiment(K: int, xi) -> Regime:
    """The regime of an agent with context K on a task with horizons Ξ (§4.1 (i)-(iii))."""
    K = _check_k(K)
    lo, hi = _xi_range(xi)
    if lo <= 1:
        raise ValueError(f"min Ξ = {lo}: not a memory-intensive task (Def 4.6), no LTM/STM experiment possible")
    if K <= lo - 1:
        return Regime.LTM_ONLY
    if K >= hi:
        return Regime.STM_ONLY
    return Regime.MIXED


def valid_ltm_setup(K: int, xi, K_eff: int) -> bool:
    """Eq 6: K <= K̄ < ξ <= K_eff for every ξ in Ξ."""
    K = _check_k(K)
    K_eff = _check_k(K_eff, "K_eff")
    if K_eff < K:
        raise ValueError(f"K_eff = μ(K) must be >= K, got K_eff={K_eff} < K={K}")
    lo, hi = _xi_range(xi)
    return K <= lo - 1 and hi <= K_eff


def _check_k(K: int, name: str = "K") -> int:
    """A context length: an integer >= 1 (Python or numpy, e.g. ``np.int64(3)``), returned as an int."""
    if isinstance(K, bool) or not isinstance(K, numbers.Integral) or K < 1:
        raise ValueError(f"the context length {name} must be an integer >= 1, got {K!r}")
    return int(K)


@dataclass(frozen=True)
class Plan:
    """The result of Algorithm 1 for one (task, K) pair."""

    xi_min: int
    xi_max: int
    K: int
    K_bar: int
    regime: Regime
    valid_ltm: bool | None
    warnings: tuple[str, ...]

    def __str__(self) -> str:
        lines = [
            f"Ξ = [{self.xi_min}, {self.xi_max}], K̄ = {self.K_bar}, K = {self.K}: {self.regime.value}",
        ]
        if self.valid_ltm is not None:
            lines.append(f"valid LTM experiment (K <= K̄ < ξ <= K_eff): {'yes' if self.valid_ltm else 'no'}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def plan(xi, K: int, K_eff: int | None = None) -> Plan:
    """Algorithm 1: regime, K̄, the Eq 6 check and the paper's methodological warnings."""
    lo, hi = _xi_range(xi)
    K = _check_k(K)
    regime = classify_experiment(K, (lo, hi))
    warnings = []
    if regime is Regime.MIXED:
        warnings.append(
            "some recalls fall inside the context: LTM cannot be estimated explicitly; "
            f"use K <= {lo - 1} (LTM) or K >= {hi} (STM)"
        )
    if lo != hi and regime is not Regime.STM_ONLY:
        warnings.append("variable correlation horizon: LTM claims need a fixed-ξ configuration with ξ > K (§5.1)")
    if regime is Regime.LTM_ONLY and K == lo - 1:
        warnings.append("K = K̄ is valid in theory, but a smaller K reveals the memory mechanism better")
    valid = None if K_eff is None else valid_ltm_setup(K, (lo, hi), K_eff)
    return Plan(lo, hi, K, lo - 1, regime, valid, tuple(warnings))
