"""membench-agents: PyTorch memory agents that consume membench environment IDs."""

__version__ = "0.1.0"
