"""The memory-classification paper's own examples (Table 2, §4.1, §5.1) through membench_envs.memory."""

from __future__ import annotations

import numpy as np
import pytest
from membench_envs.memory import EventRecall, Regime

from membench_envs import memory


def test_passive_tmaze_example():
    L = 10
    pair = EventRecall(t_e=0, dt=0, t_r=L)  # clue at t=0, turn at t=T-1=L
    assert pair.xi == L + 1
    assert memory.context_memory_border([pair.xi]) == L
    assert memory.classify_experiment(L, L + 1) is Regime.LTM_ONLY
    assert memory.classify_experiment(L + 1, L + 1) is Regime.STM_ONLY
    # Read from the catalogue.
    assert memory.context_memory_border("MIKASA/TMazePassive-v0") == 10
    assert memory.classify_experiment(10, "MIKASA/TMazePassive-v0") is Regime.LTM_ONLY
    assert memory.classify_experiment(11, "MIKASA/TMazePassiveL30-v0") is Regime.LTM_ONLY


def test_minigrid_memory_fixed_vs_variable_masks_ltm_failure():
    # Fixed L = 21: Ξ = {22}; variable (random start): Ξ = [7, 22].
    assert memory.context_memory_border(22) == 21
    assert memory.classify_experiment(14, 22) is Regime.LTM_ONLY
    assert memory.classify_experiment(22, 22) is Regime.STM_ONLY
    assert memory.context_memory_border((7, 22)) == 6
    assert memory.classify_experiment(14, (7, 22)) is Regime.MIXED
    assert memory.classify_experiment(22, (7, 22)) is Regime.STM_ONLY
    p = memory.plan((7, 22), K=14)
    assert p.regime is Regime.MIXED and any("variable" in w for w in p.warnings)


def test_popgym_repeat_previous_and_autoencode():
    for xi, kbar in ((5, 4), (33, 32), (65, 64)):
        assert memory.context_memory_border(xi) == kbar
        assert memory.classify_experiment(kbar, xi) is Regime.LTM_ONLY
        assert memory.classify_experiment(kbar + 1, xi) is Regime.STM_ONLY
    autoencode_easy = range(2, 105, 2)
    assert memory.context_memory_border(autoencode_easy) == 1
    assert memory.classify_experiment(1, autoencode_easy) is Regime.LTM_ONLY
    assert memory.classify_experiment(2, autoencode_easy) is Regime.MIXED


def test_valid_ltm_condition_eq6():
    # K <= K̄ < ξ <= K_eff
    assert memory.valid_ltm_setup(5, 11, K_eff=11)
    assert not memory.valid_ltm_setup(5, 11, K_eff=10)  # mechanism too short
    assert not memory.valid_ltm_setup(11, 11, K_eff=100)  # K inside the horizon
    with pytest.raises(ValueError, match="K_eff"):
        memory.valid_ltm_setup(5, 11, K_eff=4)
    assert memory.plan(11, K=5, K_eff=20).valid_ltm is True


def test_mdp_and_bad_inputs():
    assert memory.is_markov(1) and not memory.is_memory_intensive(1)
    assert memory.is_memory_intensive((2, 2055))
    with pytest.raises(ValueError, match="not a memory-intensive task"):
        memory.classify_experiment(1, 1)
    with pytest.raises(ValueError, match="K must be an integer >= 1"):
        memory.classify_experiment(0, 5)
    with pytest.raises(ValueError, match="no event-recall pairs"):
        memory.correlation_horizons([])
    assert memory.classify_pair(3, 3) == "STM" and memory.classify_pair(3, 4) == "LTM"


def test_plan_warns_when_K_equals_K_bar():
    p = memory.plan("MIKASA/TMazePassive-v0", K=10)
    assert p.K_bar == 10 and p.regime is Regime.LTM_ONLY
    assert any("smaller K" in w for w in p.warnings)
    assert "LTM-only" in str(p)


def test_catalogue_keeps_the_papers_table2_values_beside_the_implementation_horizons():
    import membench_envs

    rp = membench_envs.info("POPGym/RepeatPreviousEasy-v0")
    assert rp.xi_paper == (5, 5) and memory.context_memory_border(rp.xi_paper) == 4
    assert rp.xi == (4, 4)  # popgym 1.0.7 answers deck[-k]: k-1 steps back (see xi_note)
    fixed, variable = (
        membench_envs.info("MIKASA/MiniGridMemoryS23-v0"),
        membench_envs.info("MIKASA/MiniGridMemoryS23Random-v0"),
    )
    assert fixed.xi == fixed.xi_paper == (22, 22)
    assert variable.xi_paper == (7, 22)
    assert memory.classify_experiment(14, fixed.xi) is Regime.LTM_ONLY
    assert memory.classify_experiment(14, variable.xi) is Regime.MIXED


def test_numpy_integers_are_accepted_and_non_integers_rejected():
    assert memory.classify_experiment(np.int64(3), 5) == memory.classify_experiment(3, 5)
    assert memory.classify_experiment(np.int32(3), np.int64(5)) == memory.Regime.LTM_ONLY
    assert memory.classify_experiment(3, (np.int64(2), np.int64(9))) == memory.Regime.MIXED
    assert memory.classify_pair(np.uint8(3), np.int64(4)) == "LTM"
    assert memory.valid_ltm_setup(np.int64(3), 5, np.int64(8))
    assert memory.plan("MIKASA/TMazeClassic-v0", np.int64(4)).regime is memory.Regime.LTM_ONLY
    with pytest.raises(TypeError, match=r"correlation horizon must be an integer >= 1, got 3\.5"):
        memory.classify_experiment(3, [2, 3.5])  # not silently truncated to 3
    with pytest.raises(ValueError, match="correlation horizon must be an integer >= 1, got 0"):
        memory.classify_experiment(3, 0)
    with pytest.raises(ValueError, match="K must be an integer >= 1"):
        memory.classify_experiment(np.float64(3.0), 5)
