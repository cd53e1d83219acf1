"""The ``slurm`` executor: each run a Slurm job, submitted through submitit (``--executor slurm``).

The driver (the ``membench`` command, on a login node or in an allocation) submits one job per run with 1 CPU
(and 1 GPU for a ``device: cuda`` run), :data:`DEFAULTS` and the ``--slurm KEY=VALUE`` parameters (submitit's
names: ``slurm_partition``, ``timeout_min``, ``mem_gb``, ``slurm_account``, ...); ``--jobs N`` caps the jobs in
the queue at once (0: all are submitted). A job is :func:`~membench_agents.runs.executors.run_on_node`: it trains
its seed in the run folder, which must be on storage every node sees; so is the submission folder,
``<runs>/.slurm/<time>/``, which holds submitit's files and the runs' messages:

* progress: each run writes its last progress report to ``run<i>.progress.json`` there, which the driver reads
  for its progress bar; its outcome (``done`` with the summary, ``interrupted`` or ``error`` with one line) to
  ``run<i>.outcome.json``;
* stop: Ctrl-C or SIGTERM to the driver writes ``stop`` there; every run polls for it every half second, saves
  its checkpoint and stops; a second Ctrl-C cancels the jobs (``scancel``), each keeping its last checkpoint;
* faults: a job that ends without an outcome (its node died, it was preempted or killed, it ran out of time) is
  submitted again, :data:`~membench_agents.runs.executors.RETRIES` times at most, and resumes from the run's
  checkpoint.

``--slurm cluster=local`` runs the same submissions as local processes (submitit's local executor): the way to
try a set-up, and what the tests use.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections import Counter
from pathlib import Path
from typing import Any

import submitit
import yaml

from membench_agents.errors import ConfigError
from membench_agents.runs.executors import RETRIES, run_on_node
from membench_agents.runs.folder import write_json
from membench_agents.runs.workers import Job, JobRunner, Progress

#: submitit parameters of every job unless ``--slurm`` sets them (submitit's own default time limit is 5 minutes)
DEFAULTS: dict[str, Any] = {"timeout_min": 24 * 60, "cpus_per_task": 1}

#: the submission folders' parent, beside the run folders
SUBMIT_DIR = ".slurm"

OUTCOMES = ("done", "interrupted", "error")


def slurm_task(job: Job, stop_file: str, progress_file: str, outcome_file: str) -> None:
    """One run as a Slurm job: trains it, then writes its outcome for the driver."""
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    kind, _label, payload = run_on_node(
        job,
        node=node,
        report=lambda m: write_json(progress_file, m),
        stopped=lambda: os.path.exists(stop_file),
    )
    write_json(outcome_file, {"kind": kind, "payload": payload})


def _parameters(options: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """(the submitit cluster, the job parameters) of the ``--slurm KEY=VALUE`` items."""
    params: dict[str, Any] = dict(DEFAULTS)
    for item in options:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--slurm {item!r}: expected KEY=VALUE (a submitit parameter, e.g. timeout_min=120)")
        params[key.strip()] = yaml.safe_load(text)
    cluster = str(params.pop("cluster", "slurm"))
    if cluster not in ("slurm", "local"):
        raise ConfigError(
            f"--slurm cluster={cluster}: expected slurm (the default) or local (submitit's local executor)"
        )
    return cluster, params


def check(options: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """(the submitit cluster, the job parameters) of the ``--slurm`` items, checked before anything is written: one
    :class:`ConfigError` for a malformed item, an unknown parameter, or Slurm missing here."""
    cluster, params = _parameters(options)
    if cluster == "slurm" and shutil.which("sbatch") is None:
        raise ConfigError(
            "--executor slurm: this machine has no Slurm (sbatch is not on PATH); run membench on a login node "
            "of the cluster, or try the submissions locally with --slurm cluster=local"
        )
    generic = {"name", "timeout_min", "mem_gb", "nodes", "cpus_per_task", "gpus_per_node", "tasks_per_node"}
    unknown = sorted(k for k in params if k not in generic | {"stderr_to_stdout"} and not k.startswith("slurm_"))
    if unknown:
        raise ConfigError(
            f"--slurm: unknown parameter(s) {', '.join(unknown)}; submitit's are {', '.join(sorted(generic))} "
            "and slurm_* (slurm_partition, slurm_account, slurm_qos, ...)"
        )
    return cluster, params


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


class Runner(JobRunner):
    """The runs as Slurm jobs (see the module docstring)."""

    def __init__(
        self,
        jobs: list[Job],
        workers: int,
        bar: Progress,
        results: dict[str, dict[str, Any]],
        options: tuple[str, ...] = (),
    ) -> None:
        super().__init__(jobs, workers, bar, results)
        cluster, params = check(options)
        common = Path(os.path.commonpath([str(Path(j.seed_dir).parent) for j in jobs]))
        self.root = common / SUBMIT_DIR / time.strftime("%Y%m%d-%H%M%S")
        self.root.mkdir(parents=True, exist_ok=True)
        self.executor = submitit.AutoExecutor(folder=self.root, cluster=cluster)
        try:
            self.executor.update_parameters(**params)
        except (ValueError, TypeError, NameError) as e:  # a slurm_* name or a value submitit refuses
            raise ConfigError(f"--slurm: {e}") from None
        self.stop_file = self.root / "stop"
        self.index = {j.label: i for i, j in enumerate(jobs)}
        self.submitted: Counter[str] = Counter()
        self.seen: dict[str, float] = {}  # label -> mtime of the progress file last read

    def _file(self, label: str, what: str) -> Path:
        return self.root / f"run{self.index[label]}.{what}.json"

    def launch(self, job: Job) -> Any:
        self._file(job.label, "outcome").unlink(missing_ok=True)
        self.executor.update_parameters(
            gpus_per_node=1 if job.cfg.get("device") == "cuda" else 0, name=f"membench {job.label}"
        )
        self.submitted[job.label] += 1
        return self.executor.submit(
            slurm_task,
            job,
            str(self.stop_file),
            str(self._file(job.label, "progress")),
            str(self._file(job.label, "outcome")),
        )

    def poll(self) -> None:
        time.sleep(0.5)
        for label, sjob in list(self.running.items()):
            progress = self._file(label, "progress")
            mtime = progress.stat().st_mtime if progress.is_file() else None
            if mtime is not None and mtime != self.seen.get(label):
                self.seen[label] = mtime
                msg = _read_json(progress)
                if isinstance(msg, dict) and isinstance(msg.get("step"), int):
                    self.handle("progress", label, msg)
            if sjob.done():
                self.ended(label, sjob)

    def ended(self, label: str, sjob: Any) -> None:
        """A job has ended: its outcome, or a re-submission (it resumes), or a failure once retries are spent."""
        del self.running[label]
        outcome = _read_json(self._file(label, "outcome"))
        if isinstance(outcome, dict) and outcome.get("kind") in OUTCOMES:
            kind, payload = outcome["kind"], outcome.get("payload")
            if (kind == "done") == isinstance(payload, dict) and (kind == "done" or isinstance(payload, str)):
                self.handle(kind, label, payload)
                return
        why = f"the Slurm job {sjob.job_id} ended without a result ({sjob.state})"
        if self.submitted[label] <= RETRIES and self.may_start():
            self.bar.write(f"[{label}] {why}; submitted again, it resumes from its checkpoint")
            self.running[label] = self.launch(self.by_label[label])
        else:
            self.lost(label, f"{why}, {self.submitted[label]} time(s); its submission folder: {self.root}")

    def ask_to_stop(self) -> None:
        self.stop_file.touch()

    def abort(self) -> None:
        for sjob in self.running.values():
            sjob.cancel(check=False)


__all__ = ["DEFAULTS", "Runner", "check", "slurm_task"]
