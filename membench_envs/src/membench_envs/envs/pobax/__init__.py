"""POBAX's tasks (Tao et al., "Benchmarking Partial Observability in Reinforcement Learning with a Suite of
Memory-Improvable Domains"; the authors' JAX code is github.com/taodav/pobax) re-implemented in numpy, one module
per task holding its rules and its kwargs (``PARAMS``); the catalogue (:mod:`membench_envs.catalogue.pobax`,
:mod:`membench_envs.catalogue.pobax_maze`) imports them. POBAX's masked MuJoCo tasks wrap Gymnasium's MuJoCo
environments instead (:mod:`membench_envs.envs.backends.masked_mujoco`).
"""
