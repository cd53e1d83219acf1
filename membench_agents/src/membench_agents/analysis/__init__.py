"""Analysis over run folders: tables and plots (:mod:`~membench_agents.analysis.report`) and the rliable-style
aggregate metrics across tasks (:mod:`~membench_agents.analysis.aggregate`)."""
