"""What the algorithms share (membench_agents.algos.common): declared field ranges, episode statistics, RNG state."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
from membench_agents.algos.common import EpisodeStats, check_fields, ranged, restore_rng, rng_state


@dataclass
class Toy:
    n: int = ranged(4, at_least=1)
    lr: float = ranged(1e-3, above=0)
    gamma: float = ranged(0.9, at_least=0, at_most=1)
    tau: float = ranged(0.5, above=0, at_most=1)
    drop: float = ranged(0.0, at_least=0, below=1)
    kl: float | None = ranged(None, above=0)
    threads: int | None = ranged(1, at_least=1)
    mode: str = ranged("a", choices=("a", "b"))
    flag: bool = True
    seed: int = 0
    extra: dict = field(default_factory=dict)


@pytest.mark.parametrize(
    "name, value, what",
    [
        ("n", 0, "an integer >= 1"),
        ("n", 2.0, "an integer >= 1"),
        ("n", True, "an integer >= 1"),
        ("lr", 0.0, "> 0"),
        ("lr", float("inf"), "a finite number"),
        ("lr", "1e-3", "a finite number"),
        ("gamma", 1.5, r"in \[0, 1\]"),
        ("tau", 0.0, r"in \(0, 1\]"),
        ("drop", 1.0, r"in \[0, 1\)"),
        ("kl", -1.0, "> 0 or None"),
        ("threads", 0, "an integer >= 1 or None"),
        ("mode", "c", "one of 'a', 'b'"),
        ("mode", 3, "one of 'a', 'b'"),
        ("flag", 1, "true or false"),
        ("seed", 0.5, "an integer"),
    ],
)
def test_a_field_outside_its_declared_type_or_range_is_one_error_naming_it(name, value, what):
    with pytest.raises(ValueError, match=rf"^Toy\.{name} must be {what}, got "):
        check_fields(Toy(**{name: value}))


def test_allowed_values_pass_including_none_where_optional_and_integers_for_numbers():
    check_fields(Toy(n=1, lr=3, gamma=0, tau=1, drop=0.99, kl=None, threads=None, mode="b", seed=-5, extra={"x": 1}))


@pytest.mark.parametrize("device", [None, torch.device("cpu")])
def test_episode_stats_hand_out_each_finished_episode_and_restart_it(device):
    stats = EpisodeStats(3, device)
    to = (lambda x: np.asarray(x)) if device is None else (lambda x: torch.as_tensor(x, device=device))
    stats.add(to([1.0, 2.0, 3.0]))
    stats.add(to([1.0, 2.0, 3.0]))
    assert stats.finish(to([False, True, False]), {"success": np.array([False, True, False])}) == [(4.0, 2, True)]
    stats.add(to([0.5, 0.5, 0.5]))
    saved = stats.state_dict()
    again = EpisodeStats(3, device)
    again.load_state_dict(saved)
    assert again.finish(to([True, True, True]), {}) == [(2.5, 3, None), (0.5, 1, None), (6.5, 3, None)]
    assert stats.finish(to([False, False, False]), {}) == []


def test_rng_state_round_trips_the_global_rngs_and_the_named_generators():
    g = torch.Generator().manual_seed(3)
    state = rng_state({"g": g})
    first = (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g).item())
    restore_rng(state, {"g": g})
    assert (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=g).item()) == first
