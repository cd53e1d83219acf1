"""Run configs: resolution order, agent defaults per obs/action type, and one clear error per bad input."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from membench_agents.algos.registry import AGENTS, check_agent
from membench_agents.config import resolve as config
from membench_agents.config import schema
from membench_agents.config.env_facts import check_env_id, make_kwargs
from membench_agents.config.resolve import CONFIG_DATA, resolve
from membench_agents.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
TMAZE = "MIKASA/TMazePassive-v0"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def exp(tmp_path) -> Path:
    """A private config root (what the package ships: defaults/<kind>.yaml and cells/) with layered defaults, an
    agent's own delta and cells."""
    e = tmp_path / "config"
    write(
        e / "defaults" / "sb3.yaml",
        """
base:
  total_steps: 1000
  sb3: {n_envs: 2, n_steps: 16, learning_rate: 0.001}
agent:
  sb3-recurrentppo: {sb3: {n_steps: 24, policy_kwargs: {lstm_hidden_size: 8}}}
obs_type:
  vector: {sb3: {n_steps: 32}}
  image: {sb3: {n_steps: 64}}
action_type:
  discrete: {sb3: {ent_coef: 0.02}}
  continuous: {sb3: {ent_coef: 0.0}}
""",
    )
    write(
        e / "cells" / "MIKASA" / "TMazePassive-v0" / "sb3-ppo.yaml",
        """
total_steps: 5000
env_kwargs: {corridor_length: 4}
sb3: {learning_rate: 0.0005}
""",
    )
    write(
        e / "cells" / "MIKASA" / "TMazePassive-v0" / "sb3-ppo.oracle.yaml",
        """
obs_variant: oracle
total_steps: 7000
""",
    )
    return e


def test_resolution_order_defaults_then_cell_then_overrides(exp):
    r = resolve(TMAZE, "sb3-ppo", root=exp)
    c = r.config
    assert c["total_steps"] == 5000 and c["env_kwargs"] == {"corridor_length": 4}
    # base -> obs_type (vector) -> action_type (discrete) -> cell
    assert c["sb3"] == {"n_envs": 2, "n_steps": 32, "learning_rate": 0.0005, "ent_coef": 0.02}
    assert c["seeds"] == [0, 1, 2] and c["eval"]["episodes"] == 100 and c["eval"]["seed_start"] == 0
    assert r.sources[:3] == [
        "builtin",
        "membench_agents/config/defaults/sb3.yaml",
        "membench_agents/config/cells/MIKASA/TMazePassive-v0/sb3-ppo.yaml",
    ]

    r = resolve(
        TMAZE,
        "sb3-ppo",
        root=exp,
        steps=123,
        seeds="4,5",
        overrides=["sb3.n_steps=8", "eval.episodes=10", "env_kwargs.penalty=true"],
    )
    c = r.config
    assert c["total_steps"] == 123 and c["seeds"] == [4, 5] and c["sb3"]["n_steps"] == 8
    assert c["eval"]["episodes"] == 10 and c["env_kwargs"] == {"corridor_length": 4, "penalty": True}


def test_variant_cells_and_unknown_env_uses_agent_defaults(exp):
    c = resolve(TMAZE, "sb3-ppo", obs_variant="oracle", root=exp).config
    assert c["obs_variant"] == "oracle" and c["total_steps"] == 7000
    # a variant without its own cell falls back to the agent's cell and overrides the variant
    c = resolve(TMAZE, "sb3-ppo", obs_variant="full", root=exp).config
    assert c["obs_variant"] == "full" and c["total_steps"] == 5000
    # an ID without a cell: the agent defaults for its obs/action types
    c = resolve("MIKASA/TMazePassiveL5-v0", "sb3-ppo", root=exp).config
    assert c["total_steps"] == 1000 and c["sb3"]["n_steps"] == 32 and c["sb3"]["ent_coef"] == 0.02


def test_defaults_pick_the_agent_then_the_obs_and_action_type_sections(exp):
    d, path = config.agent_defaults("sb3-ppo", "image", "continuous", root=exp)
    assert d["sb3"] == {"n_envs": 2, "n_steps": 64, "learning_rate": 0.001, "ent_coef": 0.0}
    assert path == exp / "defaults" / "sb3.yaml"
    d, _ = config.agent_defaults("sb3-recurrentppo", "dict", "discrete", root=exp)  # its delta, under obs_type
    assert d["sb3"] == {
        "n_envs": 2,
        "n_steps": 24,
        "learning_rate": 0.001,
        "ent_coef": 0.02,
        "policy_kwargs": {"lstm_hidden_size": 8},
    }
    assert config.agent_defaults("ppo-gru", "vector", "discrete", root=exp) == ({}, None)  # no file: built-in only
    write(exp / "defaults" / "sb3.yaml", "agent:\n  ppo-lstm: {total_steps: 5}\n")  # another kind's agent
    with pytest.raises(ConfigError, match=r"unknown 'agent.ppo-lstm'.*Valid: sb3-ppo, sb3-recurrentppo"):
        config.agent_defaults("sb3-ppo", "vector", "discrete", root=exp)


def test_suite_section_applies_to_the_ids_of_that_suite_only(exp):
    """`suite.STORI` in a defaults file (the Atari preprocessing) reaches STORI IDs and no others; a suite the
    catalogue does not know is one error naming the valid ones."""
    write(
        exp / "defaults" / "ppo.yaml",
        """
base:
  total_steps: 1000
  ppo: {num_envs: 4}
suite:
  STORI: {env_kwargs: {grayscale: true, screen_size: 84}, ppo: {num_envs: 8}}
""",
    )
    stori = resolve("STORI/Breakout-5A-v0", "ppo-lstm", root=exp).config
    assert stori["env_kwargs"] == {"grayscale": True, "screen_size": 84} and stori["ppo"]["num_envs"] == 8
    tmaze = resolve("MIKASA/TMazeClassic-v0", "ppo-lstm", root=exp).config
    assert tmaze["env_kwargs"] == {} and tmaze["ppo"]["num_envs"] == 4
    write(exp / "defaults" / "ppo.yaml", "suite:\n  STROI: {total_steps: 5}\n")
    with pytest.raises(ConfigError, match=r"'suite\.STROI'.*STORI"):
        resolve("STORI/Breakout-5A-v0", "ppo-lstm", root=exp)


def test_shipped_stori_defaults_use_grey_84x84_frames_and_the_100k_budget():
    for env_id in ("STORI/Boxing-Type1-v0", "STORI/Gopher-5A-v0", "STORI/BankHeist-v0"):
        for agent in ("ppo-mlp", "ppo-lstm", "dtqn"):
            c = resolve(env_id, agent).config
            assert c["env_kwargs"] == {"grayscale": True, "screen_size": 84}, (env_id, agent)
            assert c["total_steps"] == 100_000, (env_id, agent)


def test_cell_path_scheme():
    p = config.cell_path("MIKASA/TMazePassive-v0", "ppo-lstm", root=Path("root"))
    assert p == Path("root/cells/MIKASA/TMazePassive-v0/ppo-lstm.yaml")
    assert config.cell_path("MIKASA/TMazePassive-v0", "ppo-mlp", "oracle").name == "ppo-mlp.oracle.yaml"
    assert config.cell_path("X/Y-v0", "dtqn").is_relative_to(CONFIG_DATA)  # the package's own by default


def test_unknown_agent_lists_close_matches():
    with pytest.raises(ConfigError, match=r"unknown agent 'ppo-lstn'.*Did you mean ppo-lstm") as e:
        resolve(TMAZE, "ppo-lstn")
    assert "sb3-recurrentppo" in str(e.value)  # and the valid names
    with pytest.raises(ConfigError, match="Did you mean sb3-recurrentppo"):
        check_agent("sb3-recurrent")


def test_unknown_env_lists_close_matches():
    with pytest.raises(ConfigError, match=r"unknown environment ID 'MIKASA/TMazePasive-v0'.*MIKASA/TMazePassive-v0"):
        resolve("MIKASA/TMazePasive-v0", "ppo-lstm")
    with pytest.raises(ConfigError, match="membench-envs list"):
        check_env_id("Zzzzzz/Qqqqq-v9")


def test_missing_values_are_one_clear_error(tmp_path, exp):
    f = write(tmp_path / "c.yaml", "agent: sb3-ppo\ntotal_steps: 100\n")
    with pytest.raises(ConfigError, match=r"missing config value 'env'.*--env"):
        resolve(config_file=f, root=exp)
    f = write(tmp_path / "d.yaml", f"env: {TMAZE}\nagent: sb3-ppo\ntotal_steps: null\n")
    with pytest.raises(ConfigError, match=r"missing config value 'total_steps'.*--steps"):
        resolve(config_file=f, root=exp)
    f = write(tmp_path / "e.yaml", f"env: {TMAZE}\nagent: ppo-mlp\ntotal_steps: 10\nppo: {{learning_rate: null}}\n")
    with pytest.raises(ConfigError, match=r"missing config value 'ppo.learning_rate'"):
        resolve(config_file=f, root=exp)
    with pytest.raises(ConfigError, match="missing config value 'agent'"):
        resolve(TMAZE, None, root=exp)


def test_unknown_keys_and_bad_values(tmp_path, exp):
    f = write(tmp_path / "c.yaml", f"env: {TMAZE}\nagent: sb3-ppo\ntotal_step: 100\n")
    with pytest.raises(ConfigError, match=r"unknown key 'total_step'.*Did you mean total_steps"):
        resolve(config_file=f, root=exp)
    with pytest.raises(ConfigError, match=r"unknown key 'eval.episode'.*Did you mean episodes"):
        resolve(TMAZE, "sb3-ppo", root=exp, overrides=["eval.episode=3"])
    with pytest.raises(ConfigError, match="total_steps must be a positive integer"):
        resolve(TMAZE, "sb3-ppo", root=exp, steps=-5)
    with pytest.raises(ConfigError, match="partial, oracle, full"):
        resolve(TMAZE, "sb3-ppo", root=exp, obs_variant="oracel")
    with pytest.raises(ConfigError, match="not inside env_kwargs"):
        resolve(TMAZE, "sb3-ppo", root=exp, overrides=["env_kwargs.obs_variant=oracle"])
    with pytest.raises(ConfigError, match="does not exist"):
        resolve(config_file=tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="key=value"):
        config.parse_override("ppo.learning_rate")


def test_seed_forms():
    assert schema.parse_seeds(3) == [0, 1, 2]
    assert schema.parse_seeds("3") == [0, 1, 2]
    assert schema.parse_seeds("0,5,7") == [0, 5, 7]
    assert schema.parse_seeds("2-4") == [2, 3, 4]
    assert schema.parse_seeds([1, 2]) == [1, 2]
    assert schema.parse_seeds("0-0") == [0] and schema.parse_seeds("7,") == [7]
    for bad in (0, "x", [1, 1], [], True, 1.5, "3-1", "0,0", [-1], "-2"):
        with pytest.raises(ConfigError):
            schema.parse_seeds(bad)


def test_seed_counts_are_bounded_before_any_list_is_built():
    """`seeds: 1000000000` (a typo) was a list of 10^9 ints before anything said no."""
    for value in (10**9, "1000000000", "0-4294967295", list(range(schema.MAX_SEEDS + 1))):
        with pytest.raises(ConfigError, match=f"seeds: at most {schema.MAX_SEEDS} training runs per cell"):
            schema.parse_seeds(value)
    assert len(schema.parse_seeds(schema.MAX_SEEDS)) == schema.MAX_SEEDS


def test_seeds_zero_says_why():
    """`--seeds 0` is a count of zero runs: the error says so (and how to ask for the single seed 0)."""
    for value in ("0", 0):
        with pytest.raises(ConfigError, match=r"0 is read as a count of runs, which must be >= 1.*0-0") as e:
            resolve(TMAZE, "ppo-mlp", seeds=value)
        assert "cannot" not in str(e.value)
    with pytest.raises(ConfigError, match="range '3-1' is empty"):
        resolve(TMAZE, "ppo-mlp", seeds="3-1")


def test_every_shipped_cell_resolves_and_matches_its_path():
    """Each shipped config/cells/<env-id>/<agent>[.<variant>].yaml names a real ID and agent, validates, and is
    what resolve() finds for its (ID, agent, variant)."""
    cells = config.list_cells()
    assert len(cells) >= 3 + 4 + 2 * 32, "the T-Maze ladder, the STORI cells and the 64 robot cells"
    for env_id, stem, path in cells:
        agent, _, variant = stem.partition(".")
        assert agent in AGENTS, f"{path}: {agent!r} is not an agent"
        r = resolve(env_id, agent, obs_variant=variant or None)
        assert config.shown(path) in r.sources, f"{path} is not what resolve() finds for ({env_id}, {stem})"
        assert r.config["obs_variant"] == (variant or "partial"), path
        data = config.load_yaml(path)
        assert "total_steps" in data, f"{path}: a cell config records its budget"


def test_every_agent_has_defaults_for_any_env():
    for agent in AGENTS:
        for obs in ("vector", "image", "dict"):
            for act in ("discrete", "multi-discrete", "continuous"):
                d, path = config.agent_defaults(agent, obs, act)
                assert path == CONFIG_DATA / "defaults" / f"{AGENTS[agent].kind}.yaml"
                assert d.get("total_steps"), (agent, obs, act)


def test_the_agents_of_one_kind_differ_only_by_their_deltas():
    """One defaults file per algorithm kind: ppo-mlp/lstm/gru share everything, ppo-gtrxl adds its core's options."""
    ppo = {
        a: resolve("POPGym/RepeatPreviousEasy-v0", a).config["ppo"]
        for a in ("ppo-mlp", "ppo-lstm", "ppo-gru", "ppo-gtrxl")
    }
    assert ppo["ppo-mlp"] == ppo["ppo-lstm"] == ppo["ppo-gru"]
    assert {k: v for k, v in ppo["ppo-gtrxl"].items() if k != "gtrxl"} == {
        k: v for k, v in ppo["ppo-lstm"].items() if k != "gtrxl"
    }
    assert ppo["ppo-gtrxl"]["gtrxl"]["window"] == 16
    sac = resolve("MIKASA/TMazePassive-v0", "sac-gru").config["sac"]
    assert (sac["batch_size"], sac["burn_in"], sac["sequence_length"]) == (32, 8, 16)
    assert resolve("MIKASA/TMazePassive-v0", "sac").config["sac"]["batch_size"] == 256


def test_the_default_bench_is_the_ladder_of_tuned_cells_train_resolves_too():
    """`make bench` with no arguments: the three cells `membench train --env ... --agent ...` resolves to, same
    task, budget and hyperparameters, 3 seeds each."""
    spec = config.load_yaml(CONFIG_DATA / "ladder.yaml")
    res = [resolve(spec["env"], c["agent"], obs_variant=c.get("obs_variant")) for c in spec["cells"]]
    cfgs = [r.config for r in res]
    assert [(c["agent"], c["obs_variant"]) for c in cfgs] == [
        ("ppo-mlp", "partial"),
        ("ppo-lstm", "partial"),
        ("ppo-mlp", "oracle"),
    ]
    assert all(r.sources[-1].startswith("membench_agents/config/cells/MIKASA/TMazePassiveDense-v0/") for r in res)
    assert all(c["env"] == spec["env"] and c["seeds"] == [0, 1, 2] for c in cfgs)
    assert cfgs[0]["ppo"] == cfgs[1]["ppo"] == cfgs[2]["ppo"]  # only the core / the variant differ
    assert cfgs[0]["total_steps"] == cfgs[1]["total_steps"] == cfgs[2]["total_steps"] == 400_000
    assert set(spec["expect"]) == {"ppo-mlp", "ppo-lstm", "ppo-mlp.oracle"}


# ------------------------------------------------------------------------------------------------------
# the typed schema, loaded strictly
# ------------------------------------------------------------------------------------------------------
def one_error(match: str, *args, **kwargs) -> str:
    with pytest.raises(ConfigError, match=match) as e:
        resolve(*args, **kwargs)
    msg = str(e.value)
    assert "\n" not in msg and "Traceback" not in msg, msg
    return msg


def test_unknown_keys_name_the_nearest_valid_one(tmp_path, exp):
    one_error(r"unknown key 'totl_steps'\. Did you mean total_steps\?", TMAZE, "ppo-mlp", overrides=["totl_steps=5"])
    one_error(r"unknown key 'ppo\.num_env'\. Did you mean num_envs", TMAZE, "ppo-mlp", overrides=["ppo.num_env=8"])
    one_error(
        r"unknown key 'checkpoint\.every_second'\. Did you mean every_seconds",
        TMAZE,
        "ppo-mlp",
        overrides=["checkpoint.every_second=5"],
    )
    one_error(
        r"unknown key 'sb3\.n_step'\. Did you mean n_steps", TMAZE, "sb3-ppo", root=exp, overrides=["sb3.n_step=5"]
    )
    # in a file: the error names the file that holds the key
    f = write(tmp_path / "c.yaml", f"env: {TMAZE}\nagent: ppo-lstm\ntotal_steps: 100\nppo: {{learnin_rate: 0.1}}\n")
    msg = one_error(r"unknown key 'ppo\.learnin_rate'\. Did you mean learning_rate", config_file=f)
    assert msg.startswith(str(f))


_FAIL = schema._FAIL


@pytest.mark.parametrize(
    ("value", "hint", "expected"),
    [
        (1e5, int, 100000),
        (1.5, int, _FAIL),
        (True, int, _FAIL),
        ("3", int, _FAIL),
        (3, float, 3.0),
        (float("nan"), float, _FAIL),
        (True, float, _FAIL),
        (True, bool, True),
        (1, bool, _FAIL),
        ("a", str, "a"),
        (1, str, _FAIL),
        (None, int | None, None),
        (None, int, _FAIL),
        ("2", int | str, "2"),
        (2.0, int | float, 2),
        ("gru", Literal["lstm", "gru"], "gru"),
        (True, Literal[1], _FAIL),
        ([1, 2.0], tuple[int, ...], (1, 2)),
        ((1, 2), list[int], [1, 2]),
        ([1, "x"], list[int], _FAIL),
        ({}, list, _FAIL),
        ({"a": 1}, dict[str, int], {"a": 1}),
        ({1: 1}, dict, _FAIL),
        ([1], dict, _FAIL),
        (Path("x"), Path, Path("x")),
        ("x", Path, _FAIL),
        ("anything", Any, "anything"),
    ],
)
def test_typed_values_convert_losslessly_or_fail(value, hint, expected):
    """The conversion rule of every typed config value: whole floats become ints, ints become floats, nothing
    else changes type (no booleans as numbers, no NaN); None only where the type allows it."""
    out = schema._convert(value, hint)
    assert out is _FAIL if expected is _FAIL else (out == expected and type(out) is type(expected))


def test_wrong_types_name_the_key_the_value_and_the_type(tmp_path):
    f = write(tmp_path / "c.yaml", f"env: {TMAZE}\nagent: ppo-lstm\ntotal_steps: 100\nppo: {{num_envs: '16'}}\n")
    one_error(r"ppo\.num_envs must be an integer, got '16' \(a string\)", config_file=f)
    f = write(tmp_path / "d.yaml", f"env: {TMAZE}\nagent: ppo-lstm\ntotal_steps: 100\nppo: {{anneal_lr: yes}}\n")
    one_error(r"ppo\.anneal_lr must be a boolean \(true or false\), got 'yes' \(a string\)", config_file=f)
    one_error(r"ppo\.anneal_lr must be a boolean", TMAZE, "ppo-mlp", overrides=["ppo.anneal_lr=on"])
    one_error(r"total_steps must be an integer, got 1\.5 \(a number\)", TMAZE, "ppo-mlp", overrides=["total_steps=1.5"])
    one_error(
        r"ppo\.learning_rate must be a number, got 'fast'", TMAZE, "ppo-mlp", overrides=["ppo.learning_rate=fast"]
    )
    one_error(r"ppo\.target_kl must be a number or null, got True", TMAZE, "ppo-mlp", overrides=["ppo.target_kl=true"])
    one_error(
        r"eval\.deterministic must be a boolean .*, got 1 \(an integer\)",
        TMAZE,
        "ppo-mlp",
        overrides=["eval.deterministic=1"],
    )
    one_error(r"'eval' must be a mapping .* got 3", TMAZE, "ppo-mlp", overrides=["eval=3"])
    one_error(r"env_kwargs must be a mapping, got \[1, 2\]", TMAZE, "ppo-mlp", overrides=["env_kwargs=[1, 2]"])
    one_error(r"sb3\.n_steps must be an integer, got 'many'", TMAZE, "sb3-ppo", overrides=["sb3.n_steps=many"])


def test_numbers_are_read_as_numbers_and_integral_floats_as_ints():
    c = resolve(TMAZE, "ppo-mlp", overrides=["ppo.learning_rate=3e-4", "total_steps=1e5", "ppo.ent_coef=0"]).config
    assert c["ppo"]["learning_rate"] == 3e-4 and isinstance(c["ppo"]["learning_rate"], float)
    assert c["total_steps"] == 100_000 and type(c["total_steps"]) is int
    assert c["ppo"]["ent_coef"] == 0.0 and type(c["ppo"]["ent_coef"]) is float
    # YAML 1.2 booleans: on/off/yes/no stay strings (a str field such as a mode switch can take them)
    assert config.parse_override("x=off") == (["x"], "off") and config.parse_override("x=true") == (["x"], True)


def test_bad_values_are_one_error_each():
    one_error(r"total_steps must be a positive integer, got -5", TMAZE, "ppo-mlp", steps=-5)
    one_error(r"ppo\.num_envs must be an integer >= 1, got 0", TMAZE, "ppo-mlp", overrides=["ppo.num_envs=0"])
    one_error(r"eval\.episodes must be a positive integer, got 0", TMAZE, "ppo-mlp", overrides=["eval.episodes=0"])
    one_error(
        r"checkpoint\.every_seconds must be a non-negative number",
        TMAZE,
        "ppo-mlp",
        overrides=["checkpoint.every_seconds=-1"],
    )
    one_error(r"device must be cpu, cuda, cuda:N or auto, got 'gpu'", TMAZE, "ppo-mlp", device="gpu")
    one_error(r"sb3\.n_envs must be a positive integer, got 0", TMAZE, "sb3-ppo", overrides=["sb3.n_envs=0"])
    one_error(
        r"missing config value 'ppo\.hidden_size' \(it is null\)", TMAZE, "ppo-mlp", overrides=["ppo.hidden_size=null"]
    )
    assert resolve(TMAZE, "ppo-mlp", overrides=["ppo.target_kl=null"]).config["ppo"]["target_kl"] is None


def test_a_section_the_agent_does_not_read_is_an_error(tmp_path, exp):
    one_error(
        r"'ppo\.learning_rate' is given, but agent 'sb3-ppo' reads only the 'sb3' section",
        TMAZE,
        "sb3-ppo",
        root=exp,
        overrides=["ppo.learning_rate=0.001"],
    )
    one_error(
        r"'sb3\.n_steps' is given, but agent 'ppo-lstm' reads only the 'ppo' section",
        TMAZE,
        "ppo-lstm",
        overrides=["sb3.n_steps=64"],
    )
    f = write(tmp_path / "c.yaml", f"env: {TMAZE}\nagent: sb3-recurrentppo\ntotal_steps: 100\nppo: {{num_envs: 8}}\n")
    assert one_error(r"'ppo\.num_envs' is given", config_file=f).startswith(str(f))
    # the run sets these
    one_error(r"'ppo\.core' is set by the run", TMAZE, "ppo-lstm", overrides=["ppo.core=gru"])
    one_error(r"'sb3\.seed' is set by the run", TMAZE, "sb3-ppo", overrides=["sb3.seed=1"])


def test_layering_defaults_then_cell_then_set_for_ppo(exp):
    write(
        exp / "defaults" / "ppo.yaml",
        """
base: {total_steps: 1000, ppo: {num_envs: 4, num_steps: 16, hidden_size: 32, num_minibatches: 1}}
obs_type: {vector: {ppo: {num_steps: 8}}}
action_type: {discrete: {ppo: {hidden_size: 24}}}
""",
    )
    write(exp / "cells" / "MIKASA" / "TMazePassive-v0" / "ppo-gru.yaml", "total_steps: 2000\nppo: {num_envs: 2}\n")
    p = resolve(TMAZE, "ppo-gru", root=exp).config["ppo"]
    assert (p["num_envs"], p["num_steps"], p["hidden_size"]) == (2, 8, 24)
    r = resolve(TMAZE, "ppo-gru", root=exp, overrides=["ppo.num_steps=4"])
    assert (r.config["ppo"]["num_envs"], r.config["ppo"]["num_steps"], r.config["total_steps"]) == (2, 4, 2000)
    # a bad key in the defaults file: the error names that file
    write(exp / "defaults" / "ppo.yaml", "base: {total_steps: 1000, ppo: {num_env: 4}}\nobs_type: {vectr: {}}\n")
    with pytest.raises(ConfigError, match=r"ppo\.yaml: unknown 'obs_type\.vectr'\. Did you mean vector"):
        resolve(TMAZE, "ppo-gru", root=exp)
    write(exp / "defaults" / "ppo.yaml", "base: {total_steps: 1000, ppo: {num_env: 4}}\n")
    with pytest.raises(ConfigError, match=r"defaults/ppo\.yaml: unknown key 'ppo\.num_env'"):
        resolve(TMAZE, "ppo-gru", root=exp)


def test_observation_variants_come_from_the_catalogue(exp):
    import membench_envs

    robo = next(t for t in membench_envs.all_tasks() if "rgb" in t.variants)
    c = resolve(robo.id, "ppo-lstm", obs_variant="rgb", root=exp, steps=100).config
    assert c["obs_variant"] == "rgb"
    assert make_kwargs(robo.id, c["obs_variant"], c["env_kwargs"])["obs_variant"] == "rgb"
    # a variant cell for it is found like any other
    write(config.cell_path(robo.id, "ppo-lstm", "rgb", root=exp), "total_steps: 777\n")
    assert resolve(robo.id, "ppo-lstm", obs_variant="rgb", root=exp).config["total_steps"] == 777
    assert resolve(robo.id, "ppo-lstm", overrides=["obs_variant=rgb"], root=exp).config["total_steps"] == 777
    one_error(
        r"obs_variant 'rgb' is not a variant of MIKASA/TMazePassive-v0\. Valid for this membench ID: "
        r"partial, oracle, full\.",
        TMAZE,
        "ppo-lstm",
        obs_variant="rgb",
    )
    one_error(
        r"obs_variant 'rbg' is not a variant of .* Did you mean rgb\?.*partial, oracle, full, rgb",
        robo.id,
        "ppo-lstm",
        steps=100,
        overrides=["obs_variant=rbg"],
    )
    one_error(
        r"obs_variant 'oracle' is not a variant of CartPole-v1\. .*: partial\.",
        "CartPole-v1",
        "ppo-mlp",
        obs_variant="oracle",
    )


def test_yaml_is_read_safely_and_bad_files_are_one_error(tmp_path):
    marker = tmp_path / "ran"
    f = write(tmp_path / "evil.yaml", f"env: !!python/object/apply:os.system ['touch {marker}']\nagent: ppo-mlp\n")
    with pytest.raises(ConfigError, match=r"evil\.yaml' is not valid YAML: .*python/object/apply.*plain YAML") as e:
        resolve(config_file=f)
    assert not marker.exists() and "\n" not in str(e.value)
    f = write(tmp_path / "empty.yaml", "# nothing here\n")
    with pytest.raises(ConfigError, match=r"config file '.*empty\.yaml' is empty"):
        resolve(config_file=f)
    f = write(tmp_path / "broken.yaml", "env: [unclosed\nagent: ppo-mlp\n")
    with pytest.raises(ConfigError, match=r"broken\.yaml' is not valid YAML: .*\(line \d+, column \d+\)") as e:
        resolve(config_file=f)
    assert "\n" not in str(e.value)
    f = write(tmp_path / "twice.yaml", f"env: {TMAZE}\nagent: ppo-mlp\ntotal_steps: 10\ntotal_steps: 20\n")
    with pytest.raises(ConfigError, match=r"twice\.yaml' is not valid YAML: the key 'total_steps' is given twice"):
        resolve(config_file=f)
    f = write(tmp_path / "list.yaml", "- 1\n- 2\n")
    with pytest.raises(ConfigError, match=r"list\.yaml' must hold a mapping of keys, got list"):
        resolve(config_file=f)


def test_typed_config_and_its_dict():
    import dataclasses

    from membench_agents.algos.ppo import PPOConfig
    from membench_agents.config.schema import PPO_SET_BY_RUN, RunConfig

    r = resolve(TMAZE, "ppo-gru", seeds="4,5", overrides=["ppo.hidden_size=16"])
    typed = r.run_config
    assert isinstance(typed, RunConfig) and config.resolve_typed(TMAZE, "ppo-gru").agent == "ppo-gru"
    pc = typed.ppo_config(5)
    assert isinstance(pc, PPOConfig) and (pc.core, pc.seed, pc.hidden_size) == ("gru", 5, 16)
    assert pc.total_steps == typed.total_steps and typed.seeds == (4, 5) and typed.sb3 is None
    # the dict: every PPOConfig field except those the run sets, read from the dataclass
    expected = {f.name for f in dataclasses.fields(PPOConfig)} - set(PPO_SET_BY_RUN)
    assert set(r.config["ppo"]) == expected and "sb3" not in r.config  # only the agent's own section
    from membench_agents.config.schema import sections

    assert set(r.config) == set(config.BUILTIN) - (set(sections()) - {"ppo"})  # no other algorithm's section
    assert config.validate(r.config) == r.config  # what config.yaml records loads back unchanged
    assert config.validate(yaml.safe_load(config.dump(r.config))) == r.config
    s = resolve(TMAZE, "sb3-recurrentppo").run_config  # the shipped defaults: n_envs 8
    assert s.ppo is None and s.sb3.n_envs == 8 and "ppo" not in s.to_dict()


def test_a_new_ppo_field_needs_no_change_in_the_loader(monkeypatch):
    """The ppo section is read from PPOConfig's fields at run time: a new field (here a str mode switch) is a
    valid key with its own type at once."""
    from membench_agents.algos import ppo

    @dataclasses.dataclass
    class Extended(ppo.PPOConfig):
        fast_cpu: str = "auto"

    monkeypatch.setattr(ppo, "PPOConfig", Extended)
    c = resolve(TMAZE, "ppo-mlp", overrides=["ppo.fast_cpu=off"])
    assert c.config["ppo"]["fast_cpu"] == "off" and c.run_config.ppo_config(0).fast_cpu == "off"
    one_error(r"ppo\.fast_cpu must be a string, got 1", TMAZE, "ppo-mlp", overrides=["ppo.fast_cpu=1"])


def test_robo_full_cells_cover_every_robot_id_and_match_their_generator():
    """Every MIKASA-Robo ID has its `full` PPO-MLP and SAC cells, as experiments/robo_full_configs.py writes them
    (the published budgets: Remember* 5M with gamma 0.8, ShellGamePick 100M, ...)."""
    import importlib.util

    from membench_envs.catalogue.robo import PRESETS

    spec = importlib.util.spec_from_file_location("robo_full_configs", ROOT / "experiments" / "robo_full_configs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    cells = gen.cells()
    assert len(cells) == 2 * len(PRESETS)
    for path, text in cells.items():
        assert path.is_file() and path.read_text() == text, f"{path} is stale: run python {gen.__file__}"
    by_id = {p.name: resolve(p.id, "ppo-mlp", obs_variant="full").config for p in PRESETS}
    assert by_id["RememberColor3"]["total_steps"] == 5_000_000 and by_id["RememberColor3"]["ppo"]["gamma"] == 0.8
    assert by_id["ShellGamePick"]["total_steps"] == 100_000_000
    assert by_id["ChainOfColors7"]["total_steps"] == 100_000_000 and by_id["ChainOfColors7"]["ppo"]["gamma"] == 0.9
    sac = resolve("MIKASA/RememberColor3-v0", "sac", obs_variant="full").config
    assert sac["env_kwargs"] == {"reward_mode": "normalized_dense", "terminate_on_success": False}
    assert sac["total_steps"] == 1_000_000 and by_id["RememberColor3"]["env_kwargs"] == sac["env_kwargs"]


def test_every_bench_spec_without_overrides_names_tuned_cells():
    """Each experiments/bench/*.yaml that sets no hyperparameters itself (no ``set``: the STORI specs) lists cells of
    its own env, each a tuned cell shipped with the package. (That every spec resolves: tests/agents/test_bench.py.)"""
    specs = sorted((ROOT / "experiments" / "bench").glob("*.yaml"))
    assert {p.stem for p in specs} >= {"stori-breakout-type1", "stori-breakout-5a"}
    for path in specs:
        spec = config.load_yaml(path)
        if "set" in spec or any("set" in c for c in spec["cells"]):
            continue
        for cell in spec["cells"]:
            r = resolve(spec["env"], cell["agent"], obs_variant=cell.get("obs_variant"))
            assert r.sources[-1].startswith("membench_agents/config/cells/"), (path, cell)
