"""The environments behind the catalogue's entry points, by kind.

- :mod:`~membench_envs.envs.core`: the machinery every task uses (kwarg checks, the batched numpy core and its
  single / vector envs, counter-based randomness, drawing, backend wrapper helpers, headless OpenGL); ``robo``
  and ``stori`` import it too.
- :mod:`~membench_envs.envs.native`: numpy tasks, one module each (rules, kwargs and defaults together).
- :mod:`~membench_envs.envs.memory_gym`: Memory Gym's tasks re-implemented in numpy, over one shared module.
- :mod:`~membench_envs.envs.backends`: wrappers of third-party simulators (each imports its backend lazily).
"""
