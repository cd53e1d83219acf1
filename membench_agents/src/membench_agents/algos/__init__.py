"""Training algorithms: the agent registry, the Trainer interface the run loop drives, what the algorithms share,
and one file per algorithm (its config, networks, update and Trainer)."""
