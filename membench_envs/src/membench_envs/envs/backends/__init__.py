"""Wrappers of third-party simulators: POPGym, MiniGrid, Memory Maze, Numpad (MuJoCo) and ViZDoom Two-Colors (with
the scenario builder :mod:`~membench_envs.envs.backends.vizdoom_wad`). Each imports its backend only when an env is
made; its kwargs are declared in its catalogue module, which never imports the backend.
"""
