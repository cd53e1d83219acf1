"""Runs: a cell trained once per seed into a run folder, and everything a run folder holds.

- :mod:`~membench_agents.runs.cell`: one cell (env, agent, budget, hyperparameters) trained for every seed,
  then ``results.json``;
- :mod:`~membench_agents.runs.loop`: the training loop of one seed (logging, checkpoints, resume, stops);
- :mod:`~membench_agents.runs.workers`: several seeds and cells in parallel worker processes, one progress bar;
- :mod:`~membench_agents.runs.folder`: the folder layout, provenance, locking and careful reading;
- :mod:`~membench_agents.runs.checkpoint` and :mod:`~membench_agents.runs.envstate`: checkpoints without pickle;
- :mod:`~membench_agents.runs.evaluation` and :mod:`~membench_agents.runs.stats`: the evaluation protocol;
- :mod:`~membench_agents.runs.tracking`: the optional Weights & Biases mirror.
"""
