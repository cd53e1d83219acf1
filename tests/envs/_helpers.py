"""Helpers shared by the environment tests: which IDs to run (extras installed, one per family), an episode runner,
and the batched == single comparison."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any

import pytest

import membench_envs

#: The Python module that proves each extra is installed.
EXTRA_MODULES = {
    "popgym": "popgym",
    "minigrid": "minigrid",
    "robo": "mani_skill",
    "atari": "ale_py",
    "numpad": "mujoco",
    "vizdoom": "vizdoom",
    "memory-maze": "memory_maze",
    "mujoco": "mujoco",
    "craftax": "craftax",
}
#: Extras whose IDs take seconds per make or reset (Craftax: minutes of jax compilation): the generic tests over every
#: ID leave them out (each has its own dedicated tests: tests/envs/robo/, tests/envs/test_memory_maze.py,
#: tests/envs/test_pobax_crafter.py).
SLOW_EXTRAS = ("robo", "memory-maze", "craftax")


def extra_installed(extra: str | None) -> bool:
    return extra is None or importlib.util.find_spec(EXTRA_MODULES[extra]) is not None


def ids_with_extra_installed(exclude_extras: tuple[str, ...] = SLOW_EXTRAS) -> list:
    """Every catalogue ID as a pytest param, skipped when its extra is missing.

    MIKASA-Robo IDs (ManiSkill, seconds per make) and Memory Maze IDs (MuJoCo, seconds per reset) have their own,
    dedicated tests (tests/envs/robo/, tests/envs/test_memory_maze.py).
    """
    params = []
    for spec in membench_envs.all_tasks():
        if spec.extra in exclude_extras:
            continue
        marks = [] if extra_installed(spec.extra) else [pytest.mark.skip(reason=f"extra [{spec.extra}] not installed")]
        params.append(pytest.param(spec.id, marks=marks, id=spec.id))
    return params


def code_choices(spec: membench_envs.TaskSpec, only: tuple[str, ...] | None = None) -> set[tuple]:
    """What selects the code an ID runs: its entry point, and each word or flag it is built with (its bool and choice
    kwargs, registered or default: a POPGym family, a STORI game and preset, T-Maze's dense reward, Mortar Mayhem's
    grid / task B / endless, a layout, a mode). Numbers (sizes, lengths, delays), ``obs_variant`` (every test runs
    the variants) and POPGym's ``difficulty`` (popgym's constructor sizes) only set parameters of that code.
    ``only``: just these kwargs (e.g. ``("family",)``: POPGym's game, which picks its picture)."""
    out: set[tuple] = {(spec.entry_point,)}
    for p in spec.params:
        if p.kind not in ("bool", "choice") or p.name in ("obs_variant", "difficulty"):
            continue
        if only is None or p.name in only:
            out.add((spec.entry_point, p.name, spec.kwargs.get(p.name, p.default)))
    return out


def family_representatives(
    exclude_extras: tuple[str, ...] = SLOW_EXTRAS,
    native_batched: bool = False,
    action_type: str | None = None,
    only: tuple[str, ...] | None = None,
) -> list:
    """IDs that between them run every entry point with every word and flag its IDs are built with
    (:func:`code_choices`; in catalogue order, an ID is taken when it brings a new one), as pytest params, skipped when
    the extra is missing: what the IDs of a family share (reset, step, seeding, rendering) is tested on them.
    ``native_batched``: only IDs with a native batched env; ``action_type``: only IDs with that action type;
    ``only``: cover just these kwargs (see :func:`code_choices`)."""
    seen: set[tuple] = set()
    params = []
    for spec in membench_envs.all_tasks():
        choices = code_choices(spec, only)
        if (
            spec.extra in exclude_extras
            or choices <= seen
            or (native_batched and spec.vector_params == ())
            or (action_type is not None and spec.action_type != action_type)
        ):
            continue
        seen |= choices
        marks = [] if extra_installed(spec.extra) else [pytest.mark.skip(reason=f"extra [{spec.extra}] not installed")]
        params.append(pytest.param(spec.id, marks=marks, id=spec.id))
    return params


def load_entry_point(entry_point: str) -> Any:
    """The object a ``"module:attribute"`` entry point names."""
    module, name = entry_point.split(":")
    return getattr(importlib.import_module(module), name)


@dataclass
class Episode:
    """What :func:`play` saw: the reset observation, the latest info, the steps taken and their rewards."""

    first: Any
    info: dict
    t: int = 0
    rewards: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False

    @property
    def total(self) -> float:
        return float(sum(self.rewards))


def play(env, policy, seed: int | None) -> Episode:
    """One episode from ``reset(seed=seed)``: each action is ``policy(obs, episode)``, where ``episode`` (an
    :class:`Episode`) holds the reset observation, the last info and the steps taken so far."""
    obs, info = env.reset(seed=seed)
    episode = Episode(first=obs, info=info)
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs, episode))
        episode.t += 1
        episode.rewards.append(reward)
        episode.info, episode.terminated, episode.truncated = info, terminated, truncated
        if terminated or truncated:
            return episode


def on_info(policy):
    """A :func:`play` policy from one of ``(obs, info)``, the latest info."""
    return lambda obs, episode: policy(obs, episode.info)


def assert_same(a, b) -> None:
    """Equal observations: arrays, or (nested) dicts of them."""
    import numpy as np

    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    else:
        np.testing.assert_array_equal(a, b)


def row(obs, i: int):
    """Environment ``i``'s part of a batched observation (an array, a dict of arrays, or an object array of
    per-environment observations, as gymnasium's SyncVectorEnv gives dict ``final_obs``)."""
    return {k: row(v, i) for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


def compare_batched_with_sync(env_id: str, n: int, mode, steps: int, sample_actions, **kwargs) -> tuple[int, int]:
    """Step a native batched env and gymnasium's SyncVectorEnv of single envs side by side under the same
    seed and actions, asserting identical observations (arrays or dicts), rewards, ends, oracle and success infos
    (both autoreset modes). ``sample_actions(rng)`` draws one batch of actions. Returns (#terminated, #truncated).
    """
    import gymnasium as gym
    import numpy as np
    from gymnasium.vector import AutoresetMode

    batched = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    assert batched.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == mode
    ob, ib = batched.reset(seed=42)
    os_, is_ = sync.reset(seed=42)
    assert_same(ob, os_)
    np.testing.assert_array_equal(ib["oracle"], is_["oracle"])
    rng = np.random.default_rng(0)
    terminated = truncated = 0
    for _ in range(steps):
        a = sample_actions(rng)
        ob, rb, tb, trb, ib = batched.step(a)
        os_, rs, ts, trs, is_ = sync.step(a)
        assert_same(ob, os_)
        np.testing.assert_array_equal(rb, rs)
        np.testing.assert_array_equal(tb, ts)
        np.testing.assert_array_equal(trb, trs)
        np.testing.assert_array_equal(ib["oracle"], is_["oracle"])
        done = tb | trb
        if mode == AutoresetMode.SAME_STEP and done.any():
            for i in np.flatnonzero(done):
                assert_same(row(ib["final_obs"], i), row(is_["final_obs"], i))
                assert ib["final_info"]["success"][i] == is_["final_info"]["success"][i]
        if mode == AutoresetMode.NEXT_STEP and done.any():
            np.testing.assert_array_equal(ib["success"][done], is_["success"][done])
        terminated += int(tb.sum())
        truncated += int(trb.sum())
    return terminated, truncated
