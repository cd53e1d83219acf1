"""Run configs: resolution order, agent defaults per obs/action type, and one clear error per bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from membench_agents.config import AGENTS, ConfigError, resolve

from membench_agents import config

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"
TMAZE = "MIKASA/TMazePassive-v0"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def exp(tmp_path) -> Path:
    """A private experiments/ folder with layered defaults and one cell."""
    e = tmp_path / "experiments"
    write(e / "defaults" / "sb3-ppo.yaml", """
base:
  total_steps: 1000
  sb3: {n_envs: 2, n_steps: 16, learning_rate: 0.001}
obs_type:
  vector: {sb3: {n_steps: 32}}
  image: {sb3: {n_steps: 64}}
action_type:
  discrete: {sb3: {ent_coef: 0.02}}
  continuous: {sb3: {ent_coef: 0.0}}
""")
    write(e / "configs" / "MIKASA" / "TMazePassive-v0" / "sb3-ppo.yaml", """
total_steps: 5000
env_kwargs: {corridor_length: 4}
sb3: {learning_rate: 0.0005}
""")
    write(e / "configs" / "MIKASA" / "TMazePassive-v0" / "sb3-ppo.oracle.yaml", """
obs_variant: oracle
total_steps: 7000
""")
    return e


def test_resolution_order_defaults_then_cell_then_overrides(exp):
    r = resolve(TMAZE, "sb3-ppo", experiments=exp)
    c = r.config
    assert c["total_steps"] == 5000 and c["env_kwargs"] == {"corridor_length": 4}
    # base -> obs_type (vector) -> action_type (discrete) -> cell
    assert c["sb3"] == {"n_envs": 2, "n_steps": 32, "learning_rate": 0.0005, "ent_coef": 0.02}
    assert c["seeds"] == [0, 1, 2] and c["eval"]["episodes"] == 100 and c["eval"]["seed_start"] == 0
    assert str(exp / "defaults" / "sb3-ppo.yaml") in r.sources
    assert any(s.endswith("sb3-ppo.yaml") and "configs" in s for s in r.sources)

    r = resolve(TMAZE, "sb3-ppo", experiments=exp, steps=123, seeds="4,5",
                overrides=["sb3.n_steps=8", "eval.episodes=10", "env_kwargs.penalty=true"])
    c = r.config
    assert c["total_steps"] == 123 and c["seeds"] == [4, 5] and c["sb3"]["n_steps"] == 8
    assert c["eval"]["episodes"] == 10 and c["env_kwargs"] == {"corridor_length": 4, "penalty": True}


def test_variant_cells_and_unknown_env_uses_agent_defaults(exp):
    c = resolve(TMAZE, "sb3-ppo", obs_variant="oracle", experiments=exp).config
    assert c["obs_variant"] == "oracle" and c["total_steps"] == 7000
    # a variant without its own cell falls back to the agent's cell and overrides the variant
    c = resolve(TMAZE, "sb3-ppo", obs_variant="full", experiments=exp).config
    assert c["obs_variant"] == "full" and c["total_steps"] == 5000
    # an ID without a cell: the agent defaults for its obs/action types
    c = resolve("MIKASA/TMazePassiveL5-v0", "sb3-ppo", experiments=exp).config
    assert c["total_steps"] == 1000 and c["sb3"]["n_steps"] == 32 and c["sb3"]["ent_coef"] == 0.02


def test_defaults_pick_the_obs_and_action_type_sections(exp):
    d = config.agent_defaults(exp, "sb3-ppo", "image", "continuous")
    assert d["sb3"] == {"n_envs": 2, "n_steps": 64, "learning_rate": 0.001, "ent_coef": 0.0}
    assert config.agent_defaults(exp, "ppo-gru", "vector", "discrete") == {}  # no file: built-in only


def test_cell_path_scheme():
    p = config.cell_path(Path("experiments"), "MIKASA/TMazePassive-v0", "ppo-lstm")
    assert p == Path("experiments/configs/MIKASA/TMazePassive-v0/ppo-lstm.yaml")
    p = config.cell_path(Path("experiments"), "MIKASA/TMazePassive-v0", "ppo-mlp", "oracle")
    assert p.name == "ppo-mlp.oracle.yaml"


def test_unknown_agent_lists_close_matches():
    with pytest.raises(ConfigError, match=r"unknown agent 'ppo-lstn'.*Did you mean ppo-lstm") as e:
        resolve(TMAZE, "ppo-lstn")
    assert "sb3-recurrentppo" in str(e.value)  # and the valid names
    with pytest.raises(ConfigError, match="Did you mean sb3-recurrentppo"):
        config.check_agent("sb3-recurrent")


def test_unknown_env_lists_close_matches():
    with pytest.raises(ConfigError, match=r"unknown environment ID 'MIKASA/TMazePasive-v0'.*MIKASA/TMazePassive-v0"):
        resolve("MIKASA/TMazePasive-v0", "ppo-lstm")
    with pytest.raises(ConfigError, match="membench-envs list"):
        config.check_env_id("Zzzzzz/Qqqqq-v9")


def test_missing_values_are_one_clear_error(tmp_path, exp):
    f = write(tmp_path / "c.yaml", "agent: sb3-ppo\ntotal_steps: 100\n")
    with pytest.raises(ConfigError, match=r"missing config value 'env'.*--env"):
        resolve(config_file=f, experiments=exp)
    f = write(tmp_path / "d.yaml", f"env: {TMAZE}\nagent: sb3-ppo\ntotal_steps: null\n")
    with pytest.raises(ConfigError, match=r"missing config value 'total_steps'.*--steps"):
        resolve(config_file=f, experiments=exp)
    f = write(tmp_path / "e.yaml", f"env: {TMAZE}\nagent: ppo-mlp\ntotal_steps: 10\nppo: {{learning_rate: null}}\n")
    with pytest.raises(ConfigError, match=r"missing config value 'ppo.learning_rate'"):
        resolve(config_file=f, experiments=exp)
    with pytest.raises(ConfigError, match="missing config value 'agent'"):
        resolve(TMAZE, None, experiments=exp)


def test_unknown_keys_and_bad_values(tmp_path, exp):
    f = write(tmp_path / "c.yaml", f"env: {TMAZE}\nagent: sb3-ppo\ntotal_step: 100\n")
    with pytest.raises(ConfigError, match=r"unknown key 'total_step'.*Did you mean total_steps"):
        resolve(config_file=f, experiments=exp)
    with pytest.raises(ConfigError, match=r"unknown key 'eval.episode'.*Did you mean episodes"):
        resolve(TMAZE, "sb3-ppo", experiments=exp, overrides=["eval.episode=3"])
    with pytest.raises(ConfigError, match="total_steps must be a positive integer"):
        resolve(TMAZE, "sb3-ppo", experiments=exp, steps=-5)
    with pytest.raises(ConfigError, match="partial, oracle, full"):
        resolve(TMAZE, "sb3-ppo", experiments=exp, obs_variant="oracel")
    with pytest.raises(ConfigError, match="not inside env_kwargs"):
        resolve(TMAZE, "sb3-ppo", experiments=exp, overrides=["env_kwargs.obs_variant=oracle"])
    with pytest.raises(ConfigError, match="does not exist"):
        resolve(config_file=tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="key=value"):
        config.parse_override("ppo.learning_rate")


def test_seed_forms():
    assert config.parse_seeds(3) == [0, 1, 2]
    assert config.parse_seeds("3") == [0, 1, 2]
    assert config.parse_seeds("0,5,7") == [0, 5, 7]
    assert config.parse_seeds("2-4") == [2, 3, 4]
    assert config.parse_seeds([1, 2]) == [1, 2]
    for bad in (0, "x", [1, 1], [], True, 1.5):
        with pytest.raises(ConfigError):
            config.parse_seeds(bad)


def test_every_shipped_config_resolves_and_matches_its_path():
    """Each experiments/configs/<env-id>/<agent>[.<variant>].yaml names a real ID and agent and validates."""
    cells = config.list_cells(EXPERIMENTS)
    assert cells, "experiments/configs is empty"
    for env_id, stem, path in cells:
        agent, _, variant = stem.partition(".")
        assert agent in AGENTS, f"{path}: {agent!r} is not an agent"
        r = resolve(env_id, agent, obs_variant=variant or None, experiments=EXPERIMENTS)
        assert str(path) in r.sources, f"{path} is not what resolve() finds for ({env_id}, {stem})"
        assert r.config["obs_variant"] == (variant or "partial"), path
        data = config.load_yaml(path)
        assert "total_steps" in data, f"{path}: a cell config records its budget"


def test_every_agent_has_defaults_for_unknown_envs():
    for agent in AGENTS:
        assert (EXPERIMENTS / "defaults" / f"{agent}.yaml").is_file(), agent
        for obs in ("vector", "image", "dict"):
            for act in ("discrete", "multi-discrete", "continuous"):
                d = config.agent_defaults(EXPERIMENTS, agent, obs, act)
                assert d.get("total_steps"), (agent, obs, act)


def test_default_bench_spec_cells_resolve_to_the_ladder():
    """`make bench` with no arguments: three full cell configs, same task and hyperparameters, 3 seeds each."""
    spec = config.load_yaml(EXPERIMENTS / "bench" / "default.yaml")
    cfgs = [resolve(config_file=EXPERIMENTS / "bench" / c).config for c in spec["cells"]]
    assert [(c["agent"], c["obs_variant"]) for c in cfgs] == [
        ("ppo-mlp", "partial"), ("ppo-lstm", "partial"), ("ppo-mlp", "oracle")]
    assert all(c["env"] == spec["env"] and c["seeds"] == [0, 1, 2] for c in cfgs)
    assert cfgs[0]["ppo"] == cfgs[1]["ppo"] == cfgs[2]["ppo"]  # only the core / the variant differ
    assert cfgs[0]["total_steps"] == cfgs[1]["total_steps"] == cfgs[2]["total_steps"]
    assert set(spec["expect"]) == {"ppo-mlp", "ppo-lstm", "ppo-mlp.oracle"}
