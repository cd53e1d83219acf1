"""The memory paper's experiment designs: an agent's LTM/STM regime on a task (:mod:`~membench_agents.ltm.plan`:
correlation horizons, context length, Algorithm 1) and the sweeps that vary them (:mod:`~membench_agents.ltm.sweep`)."""
