"""Memory Gym (Pleines et al.) re-implemented in numpy: Mortar Mayhem, Mystery Path (finite and endless) and
Searing Spotlights, one module per task over :mod:`~membench_envs.envs.memory_gym.common` (the authors' screen,
sprites, pygame-exact rasterisation, movement and seeding). Each task module holds its rules and its kwargs
(``PARAMS``); the catalogue imports them.
"""
