"""The ``ray`` executor: each run a Ray task on a cluster (``--executor ray``).

The driver (the ``membench`` command) attaches to the cluster named by ``--address`` or ``RAY_ADDRESS``
(``auto``: the one ``ray start`` runs on this machine), else starts a local one of its own, and submits one task
per run with the resources its config needs (1 CPU, and 1 GPU for a ``device: cuda`` run); ``--jobs N`` caps the
runs in flight (0: every run is submitted and the cluster schedules them). A task is
:func:`~membench_agents.runs.executors.run_on_node`: it trains its seed in the run folder, which must be on
storage every node sees.

* Progress and stops go through one small actor, :class:`Hub`: tasks send their progress there and poll it for
  a stop every half second; the driver shows one progress bar over all runs. Ctrl-C or SIGTERM to the driver
  stops every run at its next consistent point, with its checkpoint saved (a second one cancels the tasks at
  once, each keeping its last checkpoint), and the command exits; rerunning it with ``--resume`` continues.
* Faults: a task whose worker process or node dies is retried by Ray
  (:data:`~membench_agents.runs.executors.RETRIES` times); the retry resumes from the run's checkpoint, exactly
  for the environments that resume exactly.
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from membench_agents.runs.executors import RETRIES, run_on_node
from membench_agents.runs.loop import STOP_SIGNALS
from membench_agents.runs.workers import Job, JobRunner, Progress


@ray.remote(num_cpus=0)
class Hub:
    """The runs' mailbox and the driver's stop flag."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str, Any]] = []
        self.stopped = False

    def put(self, message: tuple[str, str, Any]) -> None:
        self.messages.append(message)

    def take(self) -> list[tuple[str, str, Any]]:
        out, self.messages = self.messages, []
        return out

    def stop(self) -> None:
        self.stopped = True

    def is_stopped(self) -> bool:
        return self.stopped


def _hub_stopped(hub: Any) -> bool:
    try:
        return bool(ray.get(hub.is_stopped.remote()))
    except ray.exceptions.RayError:  # the driver is gone with its hub: stop as after a Ctrl-C
        return True


def run_task(job: Job, hub: Any) -> tuple[str, str, Any]:
    """One run on a node of the cluster: its message to the driver (``done``, ``interrupted`` or ``error``)."""
    return run_on_node(
        job,
        node=ray.get_runtime_context().get_node_id(),
        report=lambda m: hub.put.remote(("progress", job.label, m)),
        stopped=lambda: _hub_stopped(hub),
    )


class Runner(JobRunner):
    """The runs as tasks of a Ray cluster (see the module docstring)."""

    def __init__(
        self,
        jobs: list[Job],
        workers: int,
        bar: Progress,
        results: dict[str, dict[str, Any]],
        address: str | None = None,
    ) -> None:
        super().__init__(jobs, workers, bar, results)
        self.started_ray = not ray.is_initialized()
        self.handlers = [(s, signal.getsignal(s)) for s in STOP_SIGNALS]  # ray.init replaces SIGTERM's for good
        if self.started_ray:
            if address is None and not os.environ.get("RAY_ADDRESS"):
                # a new local cluster: never a stale one that `ray start` left in /tmp/ray (ray.init's default)
                ray.init(address="local", logging_level=logging.ERROR, include_dashboard=False)
            else:
                ray.init(address=address, logging_level=logging.ERROR)  # "auto": the one `ray start` runs here
        # on the driver's node: a hub on another node would die with it, and the driver with the hub
        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        self.hub = Hub.options(scheduling_strategy=here).remote()  # type: ignore[attr-defined]
        self.task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(run_task)

    def run(self) -> None:
        try:
            super().run()
        finally:
            if self.started_ray:
                ray.shutdown()
                for s, h in self.handlers:
                    signal.signal(s, h)

    def launch(self, job: Job) -> Any:
        gpus = 1 if job.cfg.get("device") == "cuda" else 0
        return self.task.options(num_gpus=gpus, name=f"membench {job.label}").remote(job, self.hub)

    def poll(self) -> None:
        refs = list(self.running.values())
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0.5)
        for kind, label, payload in ray.get(self.hub.take.remote()):
            if kind != "progress" or self.unanswered(label):  # a late progress report of a finished run: dropped
                self.handle(kind, label, payload)
        label_of = {ref: label for label, ref in self.running.items()}
        for ref in ready:
            label = label_of[ref]
            del self.running[label]
            try:
                self.handle(*ray.get(ref))
            except ray.exceptions.RayError as e:
                first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
                self.lost(label, f"the Ray task ended without a result ({type(e).__name__}: {first})")

    def ask_to_stop(self) -> None:
        self.hub.stop.remote()

    def abort(self, grace_s: float = 5.0) -> None:
        """Cancel the tasks still running (each keeps its last checkpoint); wait ``grace_s`` at most."""
        refs = list(self.running.values())
        for ref in refs:
            ray.cancel(ref, force=True)
        ray.wait(refs, num_returns=len(refs), timeout=grace_s)


__all__ = ["Hub", "Runner", "run_task"]
