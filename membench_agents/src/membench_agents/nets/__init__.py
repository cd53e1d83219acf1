"""Networks: observation encoders, memory cores (one interface: ``initial_state``, ``forward``, ``step``) and the
actor-critic PPO trains. A memory core never knows which algorithm trains it."""
