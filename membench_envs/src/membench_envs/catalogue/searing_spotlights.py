"""Catalogue entry of Memory Gym's Searing Spotlights (Pleines et al., "Memory Gym: Towards Endless Tasks to
Benchmark Memory Capabilities of Agents"; the ``memory-gym`` package's ``SearingSpotlights-v0``, which MIKASA-Base
vendors), re-implemented in numpy in :mod:`membench_envs.envs.memory_gym.searing_spotlights`:
``MIKASA/SearingSpotlights-v0`` with upstream's default reset parameters, and ``Endless-SearingSpotlights-v0`` as
``MIKASA/EndlessSearingSpotlights-v0``.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.catalogue.native import OBS_VARIANT, VECTOR_PARAMS
from membench_envs.envs.core.params import Param

SCALE = 0.25

SEARING_SPOTLIGHTS_PARAMS: tuple[Param, ...] = (
    OBS_VARIANT,
    Param("max_steps", "int", 256, low=1, doc="episode limit in steps (a truncation here; upstream: done=True)"),
    Param("initial_spawns", "int", 4, low=0, high=64, doc="spotlights spawned at the reset"),
    Param("num_spawns", "int", 30, low=0, high=256, doc="spotlights spawned later, one every "
          "initial_spawn_interval + spawn_interval_threshold steps (upstream's decay never applies: it compares "
          "with the first interval and pops the last)"),
    Param("initial_spawn_interval", "int", 30, low=1, doc="see num_spawns"),
    Param("spawn_interval_threshold", "int", 10, low=0, doc="see num_spawns"),
    Param("spot_min_radius", "float", 30.0 * SCALE, low=1.0, high=30.0, doc="smallest spotlight radius "
          "(px; upstream draws integers(min, max + 1), i.e. int(min) … int(max + 1) - 1)"),
    Param("spot_max_radius", "float", 55.0 * SCALE, low=1.0, high=30.0, doc="largest spotlight radius (px)"),
    Param("spot_min_speed", "float", 0.0025, low=0.0, low_open=True, high=1.0,
          doc="slowest spotlight (fraction of its path per step)"),
    Param("spot_max_speed", "float", 0.0075, low=0.0, low_open=True, high=1.0, doc="fastest spotlight"),
    Param("spot_damage", "float", 1.0, low=0.0, doc="health lost on a step inside one or more spotlights"),
    Param("agent_health", "int", 5, low=1, doc="the agent's health: it dies (episode ends) at 0"),
    Param("visual_feedback", "bool", True, doc="the chessboard turns red on a step the agent is hit"),
    Param("light_dim_off_duration", "int", 6, low=1, doc="steps over which the light dims off: the darkness's "
          "alpha grows by int(255 / duration) per step from 0"),
    Param("light_threshold", "int", 255, low=0, high=255, doc="the darkness's alpha stops growing once above this"),
    Param("num_coins", "ints", (1,), low=0, high=8, max_length=100, doc="coins per episode, drawn from this list"),
    Param("sample_agent_position", "bool", True, doc="random start position (False: the centre)"),
    Param("agent_visible", "bool", False, doc="draw the agent above the darkness"),
    Param("coins_visible", "bool", False, doc="draw the coins above the darkness"),
    Param("exit_visible", "bool", False, doc="draw the exit above the darkness"),
    Param("show_last_action", "bool", True, doc="the top bar shows the previous action's two components"),
    Param("show_last_positive_reward", "bool", True, doc="the top bar shows a yellow mark after a positive reward"),
    Param("reward_inside_spotlight", "float", 0.0, doc="reward on a step inside a spotlight"),
    Param("reward_outside_spotlight", "float", 0.0, doc="reward on a step outside every spotlight"),
    Param("reward_death", "float", 0.0, doc="reward when the health runs out"),
    Param("reward_exit", "float", 1.0, doc="reward for reaching the open exit (ends the episode)"),
    Param("reward_coin", "float", 0.25, doc="reward per coin collected"),
)

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
        kwargs={},
        params=SEARING_SPOTLIGHTS_PARAMS,
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

ENDLESS_SEARING_SPOTLIGHTS_PARAMS: tuple[Param, ...] = (  # (show_last_action=False crashes upstream: not offered)
    OBS_VARIANT,
    Param("max_steps", "int", None, low=1, none_ok=True, doc="episode limit in steps (a truncation); None: none, as "
          "upstream (max_steps = -1)"),
    Param("steps_per_coin", "int", 160, low=1, doc="the episode ends when this many steps pass without a coin"),
    Param("initial_spawns", "int", 3, low=0, high=64, doc="spotlights spawned at the reset"),
    Param("spawn_interval", "int", 50, low=1, doc="a new spotlight every this many steps, without end"),
    Param("spot_min_radius", "float", 30.0 * SCALE, low=1.0, high=30.0, doc="smallest spotlight radius "
          "(px; upstream draws integers(min, max + 1), i.e. int(min) … int(max + 1) - 1)"),
    Param("spot_max_radius", "float", 55.0 * SCALE, low=1.0, high=30.0, doc="largest spotlight radius (px)"),
    Param("spot_min_speed", "float", 0.0025, low=0.001, high=1.0,
          doc="slowest spotlight (fraction of its path per step)"),
    Param("spot_max_speed", "float", 0.0075, low=0.001, high=1.0, doc="fastest spotlight"),
    Param("spot_damage", "float", 1.0, low=0.0, doc="health lost on a step inside one or more spotlights"),
    Param("agent_health", "int", 10, low=1, doc="the agent's health: it dies (episode ends) at 0"),
    Param("visual_feedback", "bool", True, doc="the chessboard turns red on a step the agent is hit"),
    Param("light_dim_off_duration", "int", 6, low=1, doc="steps over which the light dims off: the darkness's "
          "alpha grows by int(255 / duration) per step from 0"),
    Param("light_threshold", "int", 255, low=0, high=255, doc="the darkness's alpha stops growing once above this"),
    Param("coin_show_duration", "int", 6, low=0, doc="a new coin is drawn above the darkness while fewer steps "
          "than this have passed since the last coin (5 observations after a collection, 6 at the start)"),
    Param("coins_visible", "bool", False, doc="always draw the coin above the darkness"),
    Param("sample_agent_position", "bool", True, doc="random start position (False: the centre)"),
    Param("agent_visible", "bool", False, doc="draw the agent above the darkness"),
    Param("show_last_positive_reward", "bool", True, doc="the top bar shows a yellow mark after a positive reward"),
    Param("reward_inside_spotlight", "float", 0.0, doc="reward on a step inside a spotlight"),
    Param("reward_outside_spotlight", "float", 0.0, doc="reward on a step outside every spotlight"),
    Param("reward_death", "float", 0.0, doc="reward when the health runs out"),
    Param("reward_coin", "float", 0.25, doc="reward per coin collected (a new one appears elsewhere)"),
)

TASKS.append(TaskSpec(
    id="MIKASA/EndlessSearingSpotlights-v0",
    entry_point="membench_envs.envs.memory_gym.searing_spotlights:EndlessSearingSpotlights",
    vector_entry_point="membench_envs.envs.memory_gym.searing_spotlights:EndlessSearingSpotlightsVector",
    description=(
        "Endless Searing Spotlights: in the dark arena, collect coin after coin (+0.25 each; each new coin is shown "
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
    kwargs={},
    params=ENDLESS_SEARING_SPOTLIGHTS_PARAMS,
    vector_params=VECTOR_PARAMS,
    oracle_keys=("agent", "coin"),
    xi_note=(
        "not in Table 2; derived for the coin. A coin collected at step k is replaced by one shown above the "
        "darkness in observations k … k + 4 (Δt = 5; at the reset: observations 0 … 5, Δt = 6); 160 steps without a "
        "coin end the episode, so the last action that can head for it is taken at k + 158 (t = 158 at the reset). "
        "Ξ = t_r − t_e − Δt + 1 = 1 … 154 either way. The agent's own position (re-seen only inside spotlights) must "
        "be tracked for the whole episode, which has no bound"
    ),
    notes=(
        "memory-gym Endless-SearingSpotlights-v0 (MIKASA-Base vendors it), its default reset parameters: health 10, "
        "3 spotlights at the reset and one every 50 steps without end, coin +0.25, a new coin away from the last one "
        "(not from the agent), 160 steps per coin, no step limit; actions MultiDiscrete([3, 3]). Episodes end only "
        "by the rules (terminated); max_steps adds a truncation. Upstream's list quirk kept (a spotlight right after "
        "one removed from the list is skipped that step)"
    ),
))
