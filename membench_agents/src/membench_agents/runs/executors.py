"""Where a multi-run command trains its runs: ``local`` (this machine's worker processes, the default), ``ray``
(each run a task on a Ray cluster) or ``slurm`` (each run a Slurm job, through submitit). One backend is one
module with a ``Runner`` (a :class:`~membench_agents.runs.workers.JobRunner`); :data:`BACKENDS` names it and the
extra that installs what it needs; on the nodes, every cluster backend runs :func:`run_on_node`.

Whatever the backend, the run folder is the unit of truth: a run resumes from its folder (its checkpoint, its
done marker), so a run that a backend retries or re-submits continues where it stopped, and a finished run is
skipped. Run folders must therefore live on storage every node sees.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from membench_agents.errors import ConfigError
from membench_agents.runs.checkpoint import CHECKPOINT
from membench_agents.runs.loop import Interrupted, StopFlag, train_seed
from membench_agents.runs.workers import Job, failure_line, steps_done

#: how often a cluster backend retries a run whose process or node died (each retry resumes from the checkpoint)
RETRIES = 3

#: seconds between a run's looks for a stop request from the driver
STOP_POLL_S = 0.5

#: the seed folder's log of the cluster tasks that trained it: one JSON line per attempt (node, host, process, the
#: step it started from), so a user sees where a run trained and whether, and from where, it was retried
ATTEMPTS = "attempts.jsonl"

#: backend name -> (the module holding its ``Runner``, the membench-agents extra that installs its library,
#: that library's import name); ``local`` is :mod:`membench_agents.runs.workers` itself
BACKENDS: dict[str, tuple[str, str, str] | None] = {
    "local": None,
    "ray": ("membench_agents.runs.ray_executor", "ray", "ray"),
    "slurm": ("membench_agents.runs.slurm_executor", "slurm", "submitit"),
}


@dataclasses.dataclass(frozen=True)
class Executor:
    """A backend and where it runs: ``address`` is the Ray cluster to attach to (``auto``: the one ``ray start``
    runs on this machine; None: ``RAY_ADDRESS`` if set, else a new local cluster); ``options`` are Slurm job
    parameters, ``KEY=VALUE`` (:mod:`membench_agents.runs.slurm_executor`)."""

    name: str = "local"
    address: str | None = None
    options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ConfigError(f"unknown executor {self.name!r}; choose one of: {', '.join(BACKENDS)}")
        spec = BACKENDS[self.name]
        if self.address is not None and self.name != "ray":
            raise ConfigError("--address names a Ray cluster: it needs --executor ray")
        if self.options and self.name != "slurm":
            raise ConfigError("--slurm sets Slurm job parameters: it needs --executor slurm")
        if spec is None:
            return
        module, extra, library = spec
        if importlib.util.find_spec(library) is None:
            raise ConfigError(
                f"--executor {self.name} needs the {library!r} package: pip install 'membench-agents[{extra}]'"
            )
        if self.name == "slurm":  # its parameters and Slurm itself, before a command writes anything
            importlib.import_module(module).check(self.options)

    def runner(self, jobs: list, workers: int, bar: Any, results: dict[str, dict[str, Any]]) -> Any:
        """The backend's :class:`~membench_agents.runs.workers.JobRunner` for these jobs."""
        spec = BACKENDS[self.name]
        assert spec is not None, "the local executor runs in membench_agents.runs.workers"
        where = {"address": self.address} if self.name == "ray" else {"options": self.options}
        return importlib.import_module(spec[0]).Runner(jobs, workers, bar, results, **where)


def _watch(stopped: Callable[[], bool], stop: StopFlag, done: threading.Event) -> None:
    while not done.wait(STOP_POLL_S):
        if stopped():
            stop.count = max(stop.count, 1)
            return


def run_on_node(
    job: Job, node: str, report: Callable[[dict[str, Any]], None], stopped: Callable[[], bool]
) -> tuple[str, str, Any]:
    """One run on a node of a cluster (every backend but local): its message to the driver (``done`` and the
    summary, ``interrupted`` or ``error`` and one line). ``node`` names the node in the messages; ``report`` takes
    the progress; ``stopped`` says whether the driver asked the runs to stop (polled every :data:`STOP_POLL_S`).

    The run folder must be visible here (else an error that says so, at once); a folder that holds a
    checkpoint is resumed from it (a retried or re-submitted run continues); each attempt appends a line to
    :data:`ATTEMPTS`."""
    seed_dir = Path(job.seed_dir)
    if not seed_dir.parent.is_dir():
        return (
            "error",
            job.label,
            f"{job.label}: node {node[:12]} ({socket.gethostname()}) does not see the run folder "
            f"{seed_dir.parent}: run folders must be on storage every node of the cluster sees, at the same path",
        )
    seed_dir.mkdir(exist_ok=True)
    job = dataclasses.replace(job, resume=job.resume or (seed_dir / CHECKPOINT).is_file())
    attempt = {
        "node_id": node,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "time": time.time(),
        "from_step": steps_done(job),
    }
    with open(seed_dir / ATTEMPTS, "a") as f:
        f.write(json.dumps(attempt) + "\n")
    stop, done = StopFlag(), threading.Event()
    threading.Thread(target=_watch, args=(stopped, stop, done), daemon=True).start()
    try:
        summary = train_seed(
            job.cfg, job.seed, seed_dir, resume=job.resume, should_stop=stop, report=report, tracking=job.tracking
        )
        return ("done", job.label, summary)
    except Interrupted as e:
        return ("interrupted", job.label, str(e))
    except BaseException as e:  # every failure becomes one line (train_seed wrote the traceback to the log)
        return ("error", job.label, failure_line(job, e))
    finally:
        done.set()


__all__ = ["ATTEMPTS", "BACKENDS", "RETRIES", "Executor", "run_on_node"]
