"""Catalogue entries of MIKASA-Robo ShellGame Touch / Push / Pick (paper App. K.1). Plain data: no ManiSkill import.

Built with :func:`membench_envs.catalogue.robo._robo`, so ``PHASES`` / ``PARAMETERS`` (read by
``membench_envs.robo.task_info``) hold these IDs too.
"""

from __future__ import annotations

from membench_envs.catalogue import TaskSpec
from membench_envs.catalogue.robo import _robo

_PHASES = (("observation", 0), ("occlusion", 5), ("action", 6))
_XI = (2, 90)
_XI_NOTE = (
    "ball visible at t=0..4, mugs cover it from t=5 and the robot acts until t=89; the first action that needs the "
    "memory is at t=5 (xi = 5-4+1 = 2), the last at t=89 for a cue seen at t=0 (xi = 89-0+1 = 90)"
)
_NOTES = (
    "Mugs are built from primitives (a ring of 16 boxes + a top disc + a box handle, open at the bottom; outer "
    "diameter 0.07 m, height 0.08 m) instead of the YCB 025_mug mesh, so no asset download is needed. All three mugs "
    "have the same yaw in every episode (upstream ShellGamePick turns them by a target-dependent quaternion, which "
    "leaks the answer). Success is computed the same way in every reward mode (upstream masks early success only in "
    "the dense modes). Memory type: Object (Table 1); App. K.1 also calls it spatial memory."
)
_COMMON = {"ball_radius": 0.02, "min_dist": 0.2, "time_offset": 5, "goal_thresh": 0.08, "center_range": 0.1,
           "mug_yaw": 0.0, "mug_radius": 0.035, "mug_height": 0.08, "max_episode_steps": 90}


def _shell_game(mode: str, description: str, parameters: dict, notes: str = "") -> TaskSpec:
    return _robo(
        f"MIKASA/ShellGame{mode}-v0",
        f"membench_envs.robo.shell_game:ShellGame{mode}Env",
        description,
        ("object",),
        90,
        _XI,
        ("cup_with_ball_number",),
        _PHASES,
        {**_COMMON, **parameters},
        _XI_NOTE,
        _NOTES + notes,
    )


TASKS: list[TaskSpec] = [
    _shell_game(
        "Touch",
        "Panda: a red ball lies at one of 3 positions (t=0-4), then 3 identical mugs cover the positions (t=5); touch "
        "the mug that hides the ball (TCP within 0.08 m of its centre) and hold still",
        {},
    ),
    _shell_game(
        "Push",
        "Panda: a red ball lies at one of 3 positions (t=0-4), then 3 identical mugs cover the positions (t=5); push "
        "the mug that hides the ball forward into the goal zone (0.1 m in +x, tolerance 0.08 m) and hold still",
        {"goal_offset": [0.1, 0.0, 0.025], "reach_thresh": 0.08},
        " Push goal = ball start + (0.1, 0, 0.025), as upstream (the paper: 'push to a designated area').",
    ),
    _shell_game(
        "Pick",
        "Panda: a red ball lies at one of 3 positions (t=0-4), then 3 identical mugs cover the positions (t=5); lift "
        "the mug that hides the ball to the goal 0.1 m above the ball (tolerance 0.08 m) and hold still",
        {"goal_offset": [0.0, 0.0, 0.125], "reach_thresh": 0.04},
        " Pick goal = ball start + (0, 0, 0.125) with tolerance 0.08 (upstream; the paper: 'elevating above 0.1 m'); "
        "no grasp is required by the success check, as upstream.",
    ),
]
