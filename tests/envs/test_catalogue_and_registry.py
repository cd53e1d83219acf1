"""The catalogue and its registration; gymnasium's checker on every ID (in every variant on one ID per family);
seeding, the info contract and action errors on one ID per family (tests/envs/_helpers.py:
``family_representatives``)."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import membench_envs
from membench_envs import catalogue
from tests.envs._helpers import family_representatives, ids_with_extra_installed

ALL_IDS = ids_with_extra_installed()
FAMILIES = family_representatives()


def _rollout(env_id: str, seed: int, variant: str = "partial", steps: int = 30):
    env = gym.make(env_id, obs_variant=variant)
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    traj = [(_flat(obs), None, _flat(info["oracle"]))]
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        traj.append((_flat(obs), r, _flat(info["oracle"])))
        if term or trunc:
            obs, info = env.reset()
            traj.append((_flat(obs), None, _flat(info["oracle"])))
    env.close()
    return traj


def _flat(x) -> np.ndarray:
    if isinstance(x, dict):
        return np.concatenate([_flat(x[k]) for k in sorted(x)])
    if isinstance(x, str):
        return np.frombuffer(x.encode(), dtype=np.uint8).astype(np.float64)
    return np.asarray(x, dtype=np.float64).ravel()


def test_catalogue_ids_are_registered_and_unique():
    ids = [s.id for s in membench_envs.all_tasks()]
    assert len(ids) == len(set(ids))
    for env_id in ids:
        assert env_id in gym.registry, env_id
        spec = membench_envs.info(env_id)
        assert set(spec.variants) >= {"partial", "oracle", "full"}
        assert spec.namespace in {"MIKASA", "POPGym", "POBAX", "STORI"}


def test_unknown_id_suggests_close_matches():
    with pytest.raises(KeyError, match="TMazePassive"):
        membench_envs.info("MIKASA/TMazePasive-v0")


REPRESENTED = {p.values[0] for p in FAMILIES}


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_gymnasium_env_checker(env_id):
    """Every ID in its default variant; a family representative in every variant (the variants are one wrapper per
    entry point and flag, what :func:`family_representatives` covers; STORI's presets included)."""
    for variant in membench_envs.VARIANTS if env_id in REPRESENTED else ("partial",):
        env = gym.make(env_id, obs_variant=variant)
        check_env(env.unwrapped, skip_render_check=True)
        env.close()


@pytest.mark.parametrize("env_id", FAMILIES)
def test_same_seed_same_trajectory_different_seed_different_task(env_id):
    a, b = _rollout(env_id, 7), _rollout(env_id, 7)
    assert len(a) == len(b)
    for (oa, ra, qa), (ob, rb, qb) in zip(a, b, strict=True):
        np.testing.assert_array_equal(oa, ob)
        assert ra == rb
        np.testing.assert_array_equal(qa, qb)
    # Different seeds give different tasks: the Markov state at reset (the full variant) varies. The oracle
    # (what must be remembered) can be the same "nothing seen yet" at every reset (bandits, Battleship, ...).
    env = gym.make(env_id, obs_variant="full")
    first = _flat(env.reset(seed=0)[0])
    assert any(not np.array_equal(_flat(env.reset(seed=s)[0]), first) for s in range(1, 12)), (
        f"{env_id}: 12 seeds gave the same task"
    )
    env.close()


@pytest.mark.parametrize("env_id", FAMILIES)
def test_info_carries_oracle_in_every_variant_and_oracle_obs_contains_it(env_id):
    for variant in ("partial", "oracle", "full"):
        env = gym.make(env_id, obs_variant=variant)
        obs, info = env.reset(seed=3)
        assert "oracle" in info, (env_id, variant)
        obs, *_, info = env.step(env.action_space.sample())
        assert "oracle" in info
        if variant == "oracle":
            if isinstance(obs, dict):
                np.testing.assert_array_equal(_flat(obs["oracle"]), _flat(info["oracle"]))
            else:
                k = _flat(info["oracle"]).size
                np.testing.assert_array_equal(_flat(obs)[-k:], _flat(info["oracle"]))
        env.close()


@pytest.mark.parametrize("env_id", FAMILIES)
def test_out_of_space_and_wrong_shape_actions_are_clear_errors(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    space = env.action_space
    if isinstance(space, gym.spaces.Discrete):
        bad = [space.start + space.n, space.start - 1, np.array([0, 0])]
    elif isinstance(space, gym.spaces.MultiDiscrete):
        bad = [np.asarray(space.nvec) + 1, np.zeros(space.shape[0] + 1, dtype=np.int64)]
    else:
        bad = [np.full(space.shape, 1e6, dtype=np.float32), np.zeros((space.shape[0] + 1,), dtype=np.float32)]
    for action in bad:
        with pytest.raises(ValueError, match="action"):
            env.step(action)
    env.close()


def test_registration_is_lazy_and_never_imports_torch_or_backends():
    code = (
        "import sys, gymnasium as gym, membench_envs\n"
        "env = gym.make('MIKASA/TMazePassive-v0'); env.reset(seed=0)\n"
        "backends = ('torch', 'popgym', 'minigrid', 'mani_skill', 'sapien', 'ale_py', 'memory_maze', 'dm_control', "
        "'mujoco')\n"
        "heavy = [m for m in backends if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_module_prefix_makes_without_explicit_import():
    code = "import gymnasium as gym; gym.make('membench_envs:MIKASA/TMazePassive-v0').reset(seed=0)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_suites_and_select():
    base = membench_envs.suite("MIKASA-Base")
    # MIKASA-Base registers the classic T-Maze; the memory paper's [y, clue, flag, noise] variant is MEM only
    assert "MIKASA/TMazeClassic-v0" in base and "MIKASA/TMazePassive-v0" not in base
    assert "MIKASA/TMazePassive-v0" in membench_envs.suite("MEM")
    assert "MIKASA/TMazeClassic-v0" in membench_envs.suite("mikasa-base")  # case-insensitive
    assert all("object" in s.memory_types for s in catalogue.select(memory_type="object"))
    with pytest.raises(ValueError, match="unknown suite"):
        catalogue.select(suite="NoSuchSuite")
    with pytest.raises(ValueError, match="memory type"):
        catalogue.select(memory_type="episodic")


def test_every_horizon_kwarg_gives_the_xi_of_each_id_that_carries_it():
    """An ID's Ξ is its family's horizon rule at the ID's value (POPGym's default is the difficulty's preset); the
    families whose horizon is one kwarg carry it, the others do not."""
    from membench_envs.catalogue.popgym import constructor_kwargs

    checked = set()
    for spec in membench_envs.all_tasks():
        rule = spec.horizon
        if rule is not None:
            if spec.source == "POPGym":
                value = constructor_kwargs(spec.kwargs["family"], spec.kwargs["difficulty"], {})[rule.name]
            else:
                value = spec.kwargs[rule.name]
            assert rule.xi(value) == spec.xi, spec.id
            assert rule.name in {p.name for p in spec.params} and not rule.neutral - set(spec.kwargs) - {
                p.name for p in spec.params
            }, spec.id
            checked.add(spec.id)
    assert {"MIKASA/TMazePassiveL300-v0", "MIKASA/TMazeClassic-v0", "MIKASA/MemoryLengthHard-v0"} <= checked
    assert {"POPGym/RepeatFirstEasy-v0", "POPGym/RepeatFirstHard-v0"} <= checked and len(checked) == 15
    assert membench_envs.info("POPGym/RepeatPreviousEasy-v0").horizon is None  # (its deck count sizes its spaces)


def test_the_ids_of_papers_that_score_returns_are_scored_by_their_return():
    """Each ID's score is its papers' (TaskSpec.score): every ID of POBAX, POPGym, Memory Gym and ViZDoom Two-Colors
    by its return, also where its env reports success; no other ID names a score (its success rate where the env
    defines one, else its return)."""
    by_return = ("POBAX", "POPGym", "MemoryGym", "MemUP")
    scores: dict[str, set[str | None]] = {}
    for spec in membench_envs.all_tasks():
        scores.setdefault(spec.source, set()).add(spec.score)
    assert {source: scores[source] for source in by_return} == {source: {"return"} for source in by_return}
    assert {source: s for source, s in scores.items() if source not in by_return} == {
        source: {None} for source in scores if source not in by_return
    }


def test_catalogue_validates_entries():
    kw = dict(
        entry_point="x:y",
        description="d",
        suites=("s",),
        episode_length=2,
        obs_type="vector",
        action_type="discrete",
        source="MEM",
    )
    with pytest.raises(ValueError, match="memory type"):
        catalogue.TaskSpec(id="MIKASA/X-v0", memory_types=("episodic",), xi=(2, 2), **kw)
    with pytest.raises(ValueError, match="correlation horizons"):
        catalogue.TaskSpec(id="MIKASA/X-v0", memory_types=("object",), xi=(5, 2), **kw)
    with pytest.raises(ValueError, match="namespaced"):
        catalogue.TaskSpec(id="X-v0", memory_types=("object",), xi=(2, 2), **kw)


def test_gpu_capable_ids_skip_gymnasiums_numpy_checker():
    # ManiSkill batches are CUDA tensors on a GPU; gymnasium's passive checker would convert them to numpy.
    robo = [s for s in membench_envs.all_tasks() if s.extra == "robo"]
    assert robo
    for spec in robo:
        assert gym.spec(spec.id).disable_env_checker, spec.id
    assert not gym.spec("MIKASA/TMazePassive-v0").disable_env_checker
