"""Memory Gym (Pleines et al.) re-implemented in numpy: Mortar Mayhem, Mystery Path (finite and endless) and
Searing Spotlights, one module per task over :mod:`~membench_envs.envs.memory_gym.common` (the authors' screen,
sprites, pygame-exact rasterisation, movement and seeding). Each task module holds its rules and its kwargs
(``PARAMS``); the catalogue imports them.

Every Memory Gym ID is scored by its return (``TaskSpec.score``), as the authors' papers and public code report it
(CleanRL's PPO-TrXL table, for one: Mortar Mayhem Grid 0.99, Mystery Path 1.67): the finite tasks also report
``info["success"]`` (every command walked, the goal or the exit reached), which each evaluation keeps, but an
evaluation's per-run number is the mean return, which counts the commands walked, the path tiles found and the coins
collected before an agent succeeds. (Until 2026-12-07 the finite tasks were scored by their success.)
"""
