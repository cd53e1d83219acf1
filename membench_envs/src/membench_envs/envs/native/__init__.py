"""Native tasks: numpy only, one module per task holding its rules, its kwargs (``PARAMS``) and their defaults.

Each module defines a :class:`~membench_envs.envs.core.native.BatchedCore` and its single and batched envs; the
catalogue imports the module's ``PARAMS`` (and the rules its entries derive T and Ξ from).
"""
