"""Where a multi-run command trains its runs: ``local`` (this machine's worker processes, the default) or
``ray`` (each run a task on a Ray cluster). One backend is one module with a :class:`~membench_agents.runs.
workers.JobRunner` subclass; :data:`BACKENDS` names it and the extra that installs what it needs.

Whatever the backend, the run folder is the unit of truth: a run resumes from its folder (its checkpoint, its
done marker), so a run that a backend retries or re-submits continues where it stopped, and a finished run is
skipped. Run folders must therefore live on storage every node sees.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from typing import Any

from membench_agents.errors import ConfigError

#: backend name -> (the module holding its ``Runner``, the membench-agents extra that installs its library,
#: that library's import name); ``local`` is :mod:`membench_agents.runs.workers` itself
BACKENDS: dict[str, tuple[str, str, str] | None] = {
    "local": None,
    "ray": ("membench_agents.runs.ray_executor", "ray", "ray"),
}


@dataclasses.dataclass(frozen=True)
class Executor:
    """A backend and where it runs: ``address`` is the Ray cluster to attach to (None: ``RAY_ADDRESS`` if set,
    else the cluster `ray start` runs on this machine, else a new local one)."""

    name: str = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ConfigError(f"unknown executor {self.name!r}; choose one of: {', '.join(BACKENDS)}")
        spec = BACKENDS[self.name]
        if spec is None:
            if self.address is not None:
                raise ConfigError("--address names a cluster: it needs --executor ray")
            return
        _module, extra, library = spec
        if importlib.util.find_spec(library) is None:
            raise ConfigError(
                f"--executor {self.name} needs the {library!r} package: pip install 'membench-agents[{extra}]'"
            )

    def runner(self, jobs: list, workers: int, bar: Any, results: dict[str, dict[str, Any]]) -> Any:
        """The backend's :class:`~membench_agents.runs.workers.JobRunner` for these jobs."""
        spec = BACKENDS[self.name]
        assert spec is not None, "the local executor runs in membench_agents.runs.workers"
        return importlib.import_module(spec[0]).Runner(jobs, workers, bar, results, address=self.address)


__all__ = ["BACKENDS", "Executor"]
