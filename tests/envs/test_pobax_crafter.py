"""POBAX's no-inventory Crafter on craftax (membench_envs.envs.backends.pobax_crafter): the crop keeps the 9 map rows
and hides the inventory rows, full = Craftax-Symbolic-v1's observation of the same state, seeding, batched == single,
the gymnasium checker, and the missing extra.

jax compiles craftax's step for 2-3 minutes per batch size on a CPU, so every test that steps is marked slow; they share
the compiled code within the process (one batch size for the single env, one for the batched)."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from membench_envs._deps import MissingExtraError

from tests.envs._helpers import compare_batched_with_sync, extra_installed

ID = "POBAX/Crafter-v0"
needs_craftax = pytest.mark.skipif(not extra_installed("craftax"), reason="extra [craftax] not installed")


def _play(variant, seed, steps=12, **kwargs):
    env = gym.make(ID, obs_variant=variant, **kwargs)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out, oracles = [obs], [info["oracle"]]
    for _ in range(steps):
        obs, _, term, trunc, info = env.step(int(rng.integers(43)))
        out.append(obs)
        oracles.append(info["oracle"])
        assert not (term or trunc)
    return env, np.stack(out), np.stack(oracles)


@needs_craftax
def test_spaces():
    env = gym.make(ID)
    assert env.action_space == gym.spaces.Discrete(43)
    assert env.observation_space == gym.spaces.Box(0, 255, (27, 33, 3), np.uint8)
    assert gym.make(ID, obs_variant="oracle").observation_space.shape == (39, 33, 3)
    assert gym.make(ID, obs_variant="full").observation_space.shape == (8268,)
    assert env.unwrapped.core.T == 100_000


@needs_craftax
@pytest.mark.slow
def test_the_crop_keeps_the_map_rows_and_hides_the_inventory_rows():
    env, pictures, inventory = _play("oracle", seed=5)
    _, partial, oracle_info = _play("partial", seed=5)
    np.testing.assert_array_equal(partial, pictures[:, :27])
    np.testing.assert_array_equal(inventory, pictures[:, 27:])
    np.testing.assert_array_equal(oracle_info, inventory)
    core = env.unwrapped.core
    state = core.state
    before = core.pictures()[0].copy()

    def picture(**changes):
        core.state = state.replace(**changes)
        core._changed()
        return core.pictures()[0]

    after = picture(inventory=state.inventory.replace(wood=state.inventory.wood + 5))  # only the inventory shows it
    np.testing.assert_array_equal(after[:27], before[:27])
    assert not np.array_equal(after[27:], before[27:])
    # at 3 px per block the digits are 1 px wide: the health level is not visible, even in the whole picture
    np.testing.assert_array_equal(picture(player_health=state.player_health * 0 + 2.0), before)


@needs_craftax
@pytest.mark.slow
def test_full_is_craftax_symbolic_observation_of_the_same_state():
    import jax
    from craftax.craftax.envs.craftax_symbolic_env import CraftaxSymbolicEnvNoAutoReset

    symbolic = CraftaxSymbolicEnvNoAutoReset()
    env = gym.make(ID, obs_variant="full")
    ref = gym.make(ID, obs_variant="partial")
    obs, _ = env.reset(seed=9)
    ref.reset(seed=9)
    rng = np.random.default_rng(1)
    for t in range(8):
        row = jax.tree.map(lambda x: x[0], ref.unwrapped.core.state)
        # (jitted here, eager there: the same numbers up to float32 rounding, e.g. health / 10)
        np.testing.assert_allclose(obs, np.asarray(symbolic.get_obs(row), dtype=np.float32), rtol=0, atol=1e-6)
        assert obs.shape == (8268,)
        a = int(rng.integers(43))
        obs, *_ = env.step(a)
        ref.step(a)
        if t == 0:
            first = obs
    assert not np.array_equal(first, obs)


@needs_craftax
@pytest.mark.slow
def test_seeding_and_check_env():
    _, a, _ = _play("partial", seed=11)
    _, b, _ = _play("partial", seed=11)
    _, c, _ = _play("partial", seed=12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[0], c[0])  # another world
    env = gym.make(ID)
    env.reset(seed=11)
    second, _ = env.reset()  # the next episode of seed 11: another world
    assert not np.array_equal(second, a[0])
    for variant in ("partial", "oracle", "full"):
        check_env(gym.make(ID, obs_variant=variant).unwrapped, skip_render_check=True)


@needs_craftax
@pytest.mark.slow
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_batched_equals_single(mode):
    """Truncated after 6 steps, so both autoreset modes start new worlds in the batched env as in the single ones
    (compared on the symbolic state, which shows the time of day, and on the inventory rows in info["oracle"]):
    3 truncations per environment in 20 steps (at steps 6, 13, 20 with NextStep's reset step; 6, 12, 18 with
    SameStep). Then environment 0 alone is reset, so that the two end their episodes at different steps."""
    terminated, truncated = compare_batched_with_sync(
        ID, 2, mode, 20, lambda rng: rng.integers(0, 43, 2), max_steps=6, obs_variant="full"
    )
    assert (terminated, truncated) == (0, 6)
    kwargs = {"num_envs": 2, "max_steps": 6, "obs_variant": "full"}
    ours = gym.make_vec(ID, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kwargs)
    ref = gym.make_vec(ID, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    ours.reset(seed=3)
    ref.reset(seed=3)
    rng = np.random.default_rng(2)
    for t in range(14):
        if t == 3:
            mask = np.array([True, False])
            got, want = ours.reset(options={"reset_mask": mask})[0], ref.reset(options={"reset_mask": mask})[0]
        else:
            a = rng.integers(0, 43, 2)
            got, want = ours.step(a), ref.step(a)
            np.testing.assert_array_equal(got[1:4], want[1:4])  # rewards, terminated, truncated
            np.testing.assert_array_equal(got[4]["oracle"], want[4]["oracle"])
            got, want = got[0], want[0]
        np.testing.assert_array_equal(got, want)


def test_the_missing_extra_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "craftax", None)  # import craftax fails, as without the extra
    with pytest.raises(MissingExtraError, match=r"POBAX/Crafter-v0 needs .*pip install 'membench-envs\[craftax\]'"):
        gym.make(ID)
