"""Run configs: the typed schema (:mod:`~membench_agents.config.schema`), resolution by one rule from the shipped
defaults, the tuned cell configs and the flags (:mod:`~membench_agents.config.resolve`), and what is known about
an environment ID (:mod:`~membench_agents.config.env_facts`). The YAML files beside them are package data."""
