"""A new algorithm plugs in by one row of registry.ALGORITHMS: its config section is typed and checked from its
dataclass, the run sets seed / total_steps / device (and core), and make_trainer builds its Trainer."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest
from membench_agents.algos import registry
from membench_agents.algos import trainer as trainers
from membench_agents.algos.registry import AgentInfo, Algorithm
from membench_agents.config.schema import RunConfig
from membench_agents.errors import ConfigError

TMAZE = "MIKASA/TMazePassive-v0"


@dataclasses.dataclass
class ToyConfig:
    learning_rate: float = 0.1
    layers: int = 2
    core: str = "mlp"
    seed: int = 0
    total_steps: int = 1
    device: str = "cpu"

    def validate(self) -> None:
        if self.learning_rate <= 0:
            raise ValueError(f"ToyConfig.learning_rate must be > 0, got {self.learning_rate}")


class ToyTrainer:
    def __init__(self, cfg, seed):
        self.cfg, self.seed = cfg, seed


@pytest.fixture
def toy(monkeypatch):
    module = types.ModuleType("toy_algo")
    module.ToyConfig, module.ToyTrainer = ToyConfig, ToyTrainer
    monkeypatch.setitem(sys.modules, "toy_algo", module)
    monkeypatch.setitem(
        registry.ALGORITHMS, "toy", Algorithm("toy", "toy_algo:ToyConfig", "toy_algo:ToyTrainer", "toy hyperparameters")
    )
    monkeypatch.setitem(registry.AGENTS, "toy-gru", AgentInfo("toy-gru", "toy", core="gru"))


def test_a_registered_algorithm_gets_a_typed_section_and_its_trainer(toy):
    cfg = RunConfig.from_dict(
        {"env": TMAZE, "agent": "toy-gru", "total_steps": 50, "seeds": [3, 4], "toy": {"learning_rate": 0.5}}
    )
    assert cfg.algo == ToyConfig(learning_rate=0.5, layers=2, core="gru", seed=3, total_steps=50, device="cpu")
    assert cfg.algo_config(4).seed == 4 and cfg.ppo is None and cfg.sb3 is None
    plain = cfg.to_dict()
    assert plain["toy"] == {"learning_rate": 0.5, "layers": 2} and "ppo" not in plain  # run-set fields left out
    assert RunConfig.from_dict(plain) == cfg  # what config.yaml records loads back unchanged
    t = trainers.make_trainer(plain, seed=4)
    assert isinstance(t, ToyTrainer) and t.seed == 4


@pytest.mark.parametrize(
    "section, message",
    [
        ({"learning_rat": 0.5}, r"unknown key 'toy\.learning_rat'.*learning_rate"),
        ({"layers": "2"}, r"toy\.layers must be an integer, got '2'"),
        ({"learning_rate": -1.0}, r"toy\.learning_rate must be > 0, got -1\.0"),
        ({"seed": 1}, r"'toy\.seed' is set by the run"),
    ],
)
def test_a_registered_algorithm_section_is_checked_strictly(toy, section, message):
    with pytest.raises(ConfigError, match=message):
        RunConfig.from_dict({"env": TMAZE, "agent": "toy-gru", "total_steps": 50, "toy": section})


def test_another_algorithms_section_is_an_error(toy):
    with pytest.raises(ConfigError, match=r"'ppo\.num_envs' is given, but agent 'toy-gru' reads only the 'toy'"):
        RunConfig.from_dict({"env": TMAZE, "agent": "toy-gru", "total_steps": 50, "ppo": {"num_envs": 2}})
    with pytest.raises(ConfigError, match=r"'toy\.layers' is given, but agent 'ppo-lstm' reads only the 'ppo'"):
        RunConfig.from_dict({"env": TMAZE, "agent": "ppo-lstm", "total_steps": 50, "toy": {"layers": 1}})


def test_every_agent_names_a_known_algorithm():
    for info in registry.AGENTS.values():
        assert info.kind == "sb3" or info.kind in registry.ALGORITHMS
        if info.kind != "sb3":
            algo = registry.ALGORITHMS[info.kind]
            assert dataclasses.is_dataclass(algo.config_class()) and callable(algo.trainer_class())
