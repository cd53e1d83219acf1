"""The LTM/STM experiment protocol of the memory-classification paper, for an (environment, agent) cell.

:mod:`membench_envs.memory` holds the paper's definitions (K̄ = min Ξ − 1, the three regimes, Eq 6,
Algorithm 1's warnings). This module supplies their two inputs for a run config:

- **Ξ of the task** (:func:`task_xi`): the catalogue's correlation horizons for the ID, recomputed when
  ``env_kwargs`` change the horizon (a corridor length: the ID's ``horizon`` in the catalogue; or kwargs equal to
  another registered ID of the same family, e.g. POPGym's ``difficulty``);
- **K and K_eff of the agent** (:func:`agent_context`), by one rule:

  1. a recurrent agent without an attention window (LSTM/GRU core, RecurrentPPO): K = 1 (one step enters per
     forward step) and K_eff = μ(K) unbounded (the hidden state carries any past step): the paper's RNN;
  2. an agent whose config sets an attention window (the first of
     :data:`~membench_agents.algos.registry.CONTEXT_KEYS` found in its hyperparameter section, or in that
     section's sub-section named after its core): K = that window and K_eff = K (attention over the last K
     steps only, nothing carried beyond them), except GTrXL, whose ``n_layers`` layers each attend over K steps
     of the layer below's memory: K_eff = n_layers (K - 1) + 1;
  3. a feed-forward agent (MLP core, SB3 PPO): K = K_eff = 1;
  4. anything else: K cannot be read from the config and must be given (``--K``).

:func:`plan_cell` runs Algorithm 1 on both (``membench plan``); the sweep designs (:mod:`membench_agents.ltm.sweep`)
use the same functions for every cell.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from membench_envs.catalogue import HorizonKwarg

from membench_agents.algos.registry import AGENTS, CONTEXT_KEYS, AgentInfo, context_field
from membench_agents.errors import ConfigError

#: Unbounded effective context (K_eff of a recurrent agent).
UNBOUNDED = math.inf

#: Kwargs that never change Ξ (how the observation looks, not when the cue and the recall happen).
_NEUTRAL_KWARGS = frozenset({"obs_variant", "render_mode"})


# ------------------------------------------------------------------------------------------------------
# Ξ of a task
# ------------------------------------------------------------------------------------------------------
def _spec(env_id: str):
    import membench_envs

    try:
        return membench_envs.info(env_id)
    except KeyError:
        raise ConfigError(
            f"{env_id} is not in the membench catalogue, so its correlation horizons Ξ are unknown; "
            "the LTM/STM protocol needs a membench ID (`membench-envs list`)"
        ) from None


def _full_kwargs(spec, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Every kwarg of ``gym.make(spec.id, **kwargs)``: the params' defaults, the registered kwargs, ``kwargs``."""
    out = {p.name: p.default for p in spec.params}
    out.update(spec.kwargs)
    out.update(kwargs)
    return {k: v for k, v in out.items() if k not in _NEUTRAL_KWARGS}


def length_rule(env_id: str) -> HorizonKwarg | None:
    """The catalogue's horizon kwarg of the ID (its family's rule), or None when its horizon is not one kwarg."""
    return _spec(env_id).horizon


def task_xi(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> tuple[int, int]:
    """(min Ξ, max Ξ) of ``gym.make(env_id, **env_kwargs)``.

    The catalogue's value when ``env_kwargs`` leave the horizon alone; the family's closed form when they set
    its horizon kwarg (the catalogue's ``TaskSpec.horizon``); the horizons of the registered ID with exactly these
    kwargs otherwise. Anything else is one error: membench does not guess Ξ."""
    spec = _spec(env_id)
    kwargs = dict(env_kwargs or {})
    if spec.xi is None:
        why = spec.xi_note or "not a memory task"
        raise ConfigError(
            f"{env_id} has no correlation horizon in the catalogue ({why}): the LTM/STM protocol does not apply"
        )
    base, wanted = _full_kwargs(spec, {}), _full_kwargs(spec, kwargs)
    changed = {k for k in wanted if wanted.get(k) != base.get(k)}
    rule = spec.horizon
    if rule is not None:
        other = changed - rule.neutral - {rule.name}
        if not other:
            if rule.name not in changed:
                return spec.xi
            length = wanted[rule.name]
            if isinstance(length, bool) or not isinstance(length, int) or length < 1:
                raise ConfigError(f"env_kwargs.{rule.name} must be an integer >= 1, got {length!r}")
            return rule.xi(length)
    elif not changed:
        return spec.xi
    import membench_envs

    for other_spec in membench_envs.all_tasks():
        if (
            other_spec.entry_point == spec.entry_point
            and other_spec.xi is not None
            and _full_kwargs(other_spec, {}) == wanted
        ):
            return other_spec.xi
    shown = ", ".join(f"{k}={wanted[k]!r}" for k in sorted(changed))
    raise ConfigError(
        f"membench cannot derive the correlation horizons of {env_id} with {shown}: no closed form for "
        "these kwargs and no registered ID with them; drop them or pass the horizons with --xi MIN,MAX"
    )


# ------------------------------------------------------------------------------------------------------
# K of an agent
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentContext:
    """K (the agent's context length) and K_eff = μ(K) (its effective context; ``math.inf``: unbounded)."""

    K: int
    K_eff: float
    source: str
    """where K comes from, in words (the config field, or the rule that fixes it)"""
    field: tuple[str, ...] | None = None
    """the config path of K when the agent's config sets it (e.g. ("dtqn", "context_len")), else None"""

    @property
    def K_eff_text(self) -> str:
        return "unbounded" if math.isinf(self.K_eff) else str(int(self.K_eff))


def _get(cfg: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = cfg
    for k in path:
        node = node[k]
    return node


def agent_context(info: AgentInfo | str, cfg: Mapping[str, Any] | None = None, K: int | None = None) -> AgentContext:
    """K and K_eff of an agent with run config ``cfg``, by the rule of the module docstring.

    ``K``: the user's value (``--K``); required where the config does not fix K, and where it does, it must
    agree (a different K is set in the config itself, e.g. ``--set dtqn.context_len=16``)."""
    info = AGENTS[info] if isinstance(info, str) else info
    cfg = cfg or {}
    if K is not None and (isinstance(K, bool) or not isinstance(K, int) or K < 1):
        raise ConfigError(f"--K must be an integer >= 1, got {K!r}")
    found: AgentContext | None = None
    if (path := context_field(info, cfg)) is not None:
        value = _get(cfg, path)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(
                f"{'.'.join(path)} (the context length K of {info.name}) must be an integer >= 1, got {value!r}"
            )
        layers = _get(cfg, path[:-1]).get("n_layers") if info.core == "gtrxl" else None
        if layers:  # GTrXL: each layer attends over K steps of the layer below's memory
            reach = int(layers) * (value - 1) + 1
            source = (
                f"{'.'.join(path)} = {value}: each of {layers} layers attends over the last K steps of the "
                f"layer below (K_eff = n_layers (K - 1) + 1 = {reach})"
            )
            found = AgentContext(value, reach, source, field=path)
        else:
            found = AgentContext(
                value, value, f"{'.'.join(path)} = {value} (attention over the last K steps, K_eff = K)", field=path
            )
    elif info.recurrent:
        found = AgentContext(
            1,
            UNBOUNDED,
            "recurrent core: one step enters per forward step (K = 1); the hidden "
            "state reaches back without bound (K_eff = μ(K) unbounded)",
        )
    elif info.core == "mlp" or info.sb3_algo == "PPO":
        found = AgentContext(1, 1, "no memory: the policy sees the current step only (K = K_eff = 1)")
    if found is None:
        if K is None:
            keys = ", ".join(CONTEXT_KEYS)
            raise ConfigError(
                f"cannot tell the context length K of agent {info.name!r} from its config (no "
                f"{keys} in its '{info.kind}' section); pass --K"
            )
        return AgentContext(K, K, f"--K {K} (K_eff = K assumed: no known memory mechanism)")
    if K is not None and K != found.K:
        how = (
            f"; set it with --set {'.'.join(found.field)}={K}"
            if found.field
            else " by construction; --K applies to agents whose config sets an attention window"
        )
        raise ConfigError(f"--K {K} contradicts agent {info.name!r}: K = {found.K}{how}")
    return found


def with_context(cfg: Mapping[str, Any], info: AgentInfo, K: int) -> list[str]:
    """The ``--set`` override that gives agent ``info`` the context length ``K`` (design (a) of a sweep)."""
    path = context_field(info, cfg)
    if path is None:
        ctx = agent_context(info, cfg) if (info.recurrent or info.core == "mlp" or info.sb3_algo == "PPO") else None
        why = f"its K is {ctx.K} by construction ({ctx.source})" if ctx else "its config sets no attention window"
        raise ConfigError(
            f"agent {info.name!r} cannot vary K: {why}; vary K with an attention agent whose config "
            f"has one of {', '.join(CONTEXT_KEYS)}"
        )
    return [f"{'.'.join(path)}={int(K)}"]


# ------------------------------------------------------------------------------------------------------
# Algorithm 1 for one cell
# ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CellPlan:
    """Algorithm 1 for one (task, agent): Ξ, K, K_eff, the regime, the Eq 6 check and the warnings."""

    env: str
    env_kwargs: dict[str, Any]
    agent: str
    xi: tuple[int, int]
    context: AgentContext
    regime: str
    K_bar: int
    valid_ltm: bool
    warnings: tuple[str, ...]
    recommendations: tuple[str, ...]
    xi_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["context"] = {
            "K": self.context.K,
            "K_eff": None if math.isinf(self.context.K_eff) else self.context.K_eff,
            "K_eff_unbounded": math.isinf(self.context.K_eff),
            "source": self.context.source,
        }
        d["xi"] = list(self.xi)
        return d

    def __str__(self) -> str:
        kw = ", ".join(f"{k}={v}" for k, v in self.env_kwargs.items())
        lo, hi = self.xi
        xi = f"{{{lo}}}" if lo == hi else f"[{lo}, {hi}]"
        lines = [
            f"task:   {self.env}{f' ({kw})' if kw else ''}: Ξ = {xi}, K̄ = min Ξ − 1 = {self.K_bar}"
            + (f"\n        ({self.xi_note})" if self.xi_note else ""),
            f"agent:  {self.agent}: K = {self.context.K}, K_eff = {self.context.K_eff_text}  [{self.context.source}]",
            f"regime: {self.regime}",
            f"valid LTM experiment (Eq 6: K <= K̄ < ξ <= K_eff): {'yes' if self.valid_ltm else 'no'}",
        ]
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"recommended: {r}" for r in self.recommendations]
        return "\n".join(lines)


def plan_cell(
    env_id: str,
    agent: AgentInfo | str,
    cfg: Mapping[str, Any] | None = None,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    obs_variant: str = "partial",
    K: int | None = None,
    xi: tuple[int, int] | None = None,
) -> CellPlan:
    """Algorithm 1 of the memory paper for ``agent`` (its run config ``cfg``) on ``env_id`` with ``env_kwargs``.

    ``xi``: the horizons (min, max) when the user gives them (else :func:`task_xi`); ``K``: see
    :func:`agent_context`."""
    from membench_envs import memory

    info = AGENTS[agent] if isinstance(agent, str) else agent
    kwargs = dict(env_kwargs or {})
    lo, hi = xi if xi is not None else task_xi(env_id, kwargs)
    if lo <= 1:
        raise ConfigError(
            f"{env_id}: min Ξ = {lo}, so the task is not memory-intensive (Def 4.6): it has no LTM/STM experiment"
        )
    ctx = agent_context(info, cfg, K)
    base = memory.plan((lo, hi), ctx.K)
    valid = ctx.K <= lo - 1 and hi <= ctx.K_eff  # Eq 6 (K_eff may be unbounded)
    warnings = list(base.warnings)
    if obs_variant != "partial":
        warnings.append(
            f"the {obs_variant!r} observation variant shows what the task asks to remember: it is not a "
            "memory experiment, whatever the regime (use obs_variant 'partial')"
        )
    if base.regime is memory.Regime.LTM_ONLY and not valid:
        warnings.append(
            f"max Ξ = {hi} > K_eff = {ctx.K_eff_text}: the agent cannot reach the event, so this tests "
            "for the absence of memory (expect chance), not for LTM"
        )
    recs = []
    if lo > 2:
        recs.append(f"LTM: hold ξ fixed and use K <= K̄ = {lo - 1} (well below K̄ reveals the memory mechanism best)")
    else:
        recs.append("LTM: only K = 1 is LTM-only on this task (K̄ = 1)")
    recs.append(f"STM: K >= max Ξ = {hi}")
    rule = length_rule(env_id)
    if rule is not None:
        recs.append(f"or hold K and sweep {rule.name} across K ({rule.text}): `membench sweep`")
    if lo != hi:
        recs.append("for an LTM claim prefer a fixed-horizon configuration with ξ > K (§5.1)")
    note = _spec(env_id).xi_note if not kwargs else ""
    return CellPlan(
        env_id,
        kwargs,
        info.name,
        (lo, hi),
        ctx,
        base.regime.value,
        lo - 1,
        bool(valid),
        tuple(warnings),
        tuple(recs),
        note,
    )


__all__ = [
    "UNBOUNDED",
    "AgentContext",
    "CellPlan",
    "agent_context",
    "length_rule",
    "plan_cell",
    "task_xi",
    "with_context",
]
