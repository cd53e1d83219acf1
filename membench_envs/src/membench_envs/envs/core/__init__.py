"""What every membench task is built on (imports only gymnasium and numpy).

- :mod:`~membench_envs.envs.core.params`: :class:`~membench_envs.envs.core.params.Param`, the one validation layer
  of every kwarg, and the reset-seed check;
- :mod:`~membench_envs.envs.core.native`: :class:`~membench_envs.envs.core.native.BatchedCore` (a task's state and
  rules for N environments) and the single / vector gymnasium envs over it, with the checks they share
  (variant, render mode, step order);
- :mod:`~membench_envs.envs.core.rng`: counter-based random streams (a pure function of key, episode, step);
- :mod:`~membench_envs.envs.core.draw`: a tiny numpy canvas for ``rgb_array`` frames;
- :mod:`~membench_envs.envs.core.wrap`: action checks, null actions and observation flattening for wrappers of
  third-party backends;
- :mod:`~membench_envs.envs.core.mujoco_gl`: the headless OpenGL choice for MuJoCo rendering.
"""
