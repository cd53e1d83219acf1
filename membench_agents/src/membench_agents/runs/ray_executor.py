"""The ``ray`` executor: each run a Ray task on a cluster (``--executor ray``).

The driver (the ``membench`` command) attaches to the cluster named by ``--address`` or ``RAY_ADDRESS``, or
starts a local one, and submits one task per run with the resources its config needs (1 CPU, and 1 GPU for a
``device: cuda`` run); ``--jobs N`` caps the runs in flight (0: every run is submitted and the cluster
schedules them). A task trains its seed with :func:`~membench_agents.runs.loop.train_seed` in the run folder,
which must be on storage every node sees (a node that does not see it fails the run at once, saying so).

* Progress and stops go through one small actor, :class:`Hub`: tasks send their progress there and poll it for
  a stop every half second; the driver shows one progress bar over all runs. Ctrl-C or SIGTERM to the driver
  stops every run at its next consistent point, with its checkpoint saved (a second one cancels the tasks at
  once, each keeping its last checkpoint), and the command exits; rerunning it with ``--resume`` continues.
* Faults: a task whose worker process or node dies is retried by Ray (:data:`RETRIES` times); the retry finds
  the run's checkpoint in the folder and resumes from it, exactly for the environments that resume exactly.
  Each attempt appends a line to the seed folder's ``attempts.jsonl`` (node, host, process, the step it
  started from), so a user sees where a run trained and whether, and from where, it was retried.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import ray

from membench_agents.runs.checkpoint import CHECKPOINT
from membench_agents.runs.loop import Interrupted, StopFlag, train_seed
from membench_agents.runs.workers import Job, JobRunner, Progress, failure_line, steps_done

#: how often Ray retries a run whose worker process or node died (each retry resumes from the checkpoint)
RETRIES = 3

#: seconds between a task's looks at the hub for a stop
STOP_POLL_S = 0.5

#: the seed folder's log of the tasks that trained it: one JSON line per attempt
ATTEMPTS = "attempts.jsonl"


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


def _watch_stop(hub: Any, stop: StopFlag, done: threading.Event) -> None:
    while not done.wait(STOP_POLL_S):
        try:
            if ray.get(hub.is_stopped.remote()):
                stop.count = max(stop.count, 1)
                return
        except ray.exceptions.RayError:  # the driver is gone with its hub: stop as after a Ctrl-C
            stop.count = max(stop.count, 1)
            return


def run_task(job: Job, hub: Any) -> tuple[str, str, Any]:
    """One run on a node of the cluster: its message to the driver (``done``, ``interrupted`` or ``error``)."""
    node = ray.get_runtime_context().get_node_id()
    seed_dir = Path(job.seed_dir)
    if not seed_dir.parent.is_dir():
        return (
            "error",
            job.label,
            f"{job.label}: node {node[:12]} ({socket.gethostname()}) does not see the run folder "
            f"{seed_dir.parent}: run folders must be on storage every node of the cluster sees, at the same path",
        )
    seed_dir.mkdir(exist_ok=True)
    job = dataclasses.replace(job, resume=job.resume or (seed_dir / CHECKPOINT).is_file())  # a retry continues
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
    threading.Thread(target=_watch_stop, args=(hub, stop, done), daemon=True).start()
    try:
        summary = train_seed(
            job.cfg,
            job.seed,
            seed_dir,
            resume=job.resume,
            should_stop=stop,
            report=lambda m: hub.put.remote(("progress", job.label, m)),
            tracking=job.tracking,
        )
        return ("done", job.label, summary)
    except Interrupted as e:
        return ("interrupted", job.label, str(e))
    except BaseException as e:  # every failure becomes one line (train_seed wrote the traceback to the log)
        return ("error", job.label, failure_line(job, e))
    finally:
        done.set()


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
        if self.started_ray:
            ray.init(address=address, logging_level=logging.ERROR)  # None: RAY_ADDRESS, this machine's, or a new one
        self.hub = Hub.remote()  # type: ignore[attr-defined]
        self.task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(run_task)

    def run(self) -> None:
        try:
            super().run()
        finally:
            if self.started_ray:
                ray.shutdown()

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


__all__ = ["ATTEMPTS", "RETRIES", "Hub", "Runner", "run_task"]
