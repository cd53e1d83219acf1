"""Catalogue entry of Memory Gym's Searing Spotlights (Pleines et al., "Memory Gym: Towards Endless Tasks to
Benchmark Memory Capabilities of Agents"; the ``memory-gym`` package's ``SearingSpotlights-v0``, which MIKASA-Base
vendors), re-implemented in numpy in :mod:`membench_envs.envs.memory_gym.searing_spotlights`:
``MIKASA/SearingSpotlights-v0`` with upstream's default reset parameters, and ``Endless-SearingSpotlights-v0`` as
``MIKASA/EndlessSearingSpotlights-v0``.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.envs.core.native import VECTOR_PARAMS
from membench_envs.envs.memory_gym import searing_spotlights

TASKS = [
    TaskSpec(
        id="MIKASA/SearingSpotlights-v0",
        entry_point="membench_envs.envs.memory_gym.searing_spotlights:SearingSpotlights",
        vector_entry_point="membench_envs.envs.memory_gym.searing_spotlights:SearingSpotlightsVector",
        description=(
            "Searing Spotlights: the arena goes dark within 7 steps; collect the coin, then reach the exit, seen "
            "only at the start, while roaming spotlights (which hurt: 5 hits kill) light the floor around them "
            "(+0.25 coin, +1 exit); 84x84 image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("spatial",),
        episode_length=256,
        xi=(1, 249),
        obs_type="dict",
        action_type="multi-discrete",
        source="MemoryGym",
        score="return",  # the rule: membench_envs.envs.memory_gym
        kwargs={},
        params=searing_spotlights.PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("agent", "coins", "exit"),
        xi_note=(
            "not in Table 2; derived. Event: the positions of the agent, the coin and the exit are seen in "
            "observations 0 … 6 (the darkness's alpha 0, 42, … 252; from observation 7 on it is 255: only what a "
            "spotlight lights is seen), t_e = 0, Δt = 7. Recall: any decision in the dark that heads for the coin or "
            "the exit, t_r = 7 … 255 (the last action of a 256-step episode). Ξ = t_r − t_e − Δt + 1 = 1 … 249. "
            "The agent re-sees itself only inside a spotlight (which hurts), so it must also track its own position "
            "from its actions; the top bar shows the previous action"
        ),
        notes=(
            "memory-gym SearingSpotlights-v0 (MIKASA-Base vendors it), its default reset parameters: 256 steps, "
            "health 5, 4 spotlights at the reset and one every 40 steps, 1 coin (+0.25), the exit (+1, opens once "
            "the coin is collected), light dimmed off over 6 steps; actions MultiDiscrete([3, 3]) (3 px, 2 per axis "
            "diagonally). The time limit is a truncation here (upstream reports done=True, truncated=False). "
            "Upstream quirks kept: a spotlight right after one removed from the list is skipped that step (neither "
            "drawn, moved nor checked), the top bar shows the previous step's action and positive reward"
        ),
    ),
]

TASKS.append(
    TaskSpec(
        id="MIKASA/EndlessSearingSpotlights-v0",
        entry_point="membench_envs.envs.memory_gym.searing_spotlights:EndlessSearingSpotlights",
        vector_entry_point="membench_envs.envs.memory_gym.searing_spotlights:EndlessSearingSpotlightsVector",
        description=(
            "Endless Searing Spotlights: in the dark arena, collect coin after coin (+0.25 each; each new coin is "
            "shown "
            "for 5 steps, then only where a spotlight lights it) while spotlights (one more every 50 steps, 10 hits "
            "kill) roam; 160 steps without a coin end the episode; 84x84 image"
        ),
        suites=("MIKASA-Base",),
        memory_types=("spatial",),
        episode_length=None,
        xi=(1, 154),
        obs_type="dict",
        action_type="multi-discrete",
        source="MemoryGym",
        score="return",  # the rule: membench_envs.envs.memory_gym
        kwargs={},
        params=searing_spotlights.ENDLESS_PARAMS,
        vector_params=VECTOR_PARAMS,
        oracle_keys=("agent", "coin"),
        xi_note=(
            "not in Table 2; derived for the coin. A coin collected at step k is replaced by one shown above the "
            "darkness in observations k … k + 4 (Δt = 5; at the reset: observations 0 … 5, Δt = 6); 160 steps without "
            "a "
            "coin end the episode, so the last action that can head for it is taken at k + 158 (t = 158 at the reset). "
            "Ξ = t_r − t_e − Δt + 1 = 1 … 154 either way. The agent's own position (re-seen only inside spotlights) "
            "must "
            "be tracked for the whole episode, which has no bound"
        ),
        notes=(
            "memory-gym Endless-SearingSpotlights-v0 (MIKASA-Base vendors it), its default reset parameters: health "
            "10, "
            "3 spotlights at the reset and one every 50 steps without end, coin +0.25, a new coin away from the last "
            "one "
            "(not from the agent), 160 steps per coin, no step limit; actions MultiDiscrete([3, 3]). Episodes end only "
            "by the rules (terminated); max_steps adds a truncation. Upstream's list quirk kept (a spotlight right "
            "after "
            "one removed from the list is skipped that step)"
        ),
    )
)
