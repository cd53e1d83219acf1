"""Several seeds (and cells) in parallel worker processes, with one aggregated progress bar and clean stops.

Ctrl-C or SIGTERM to the parent: every running job finishes its current iteration, saves its checkpoint and
stops (a second signal aborts at once), then :class:`KeyboardInterrupt` is raised. Workers die with the
parent: each asks the kernel for SIGTERM when its parent goes (Linux), checks at start-up that the parent
is still there, and polls for it after every iteration.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

from membench_agents.checkpoint import CHECKPOINT, load_checkpoint
from membench_agents.config import AGENTS, ConfigError
from membench_agents.rundir import EVAL
from membench_agents.training import STOP_SIGNALS, Interrupted, StopFlag, train_seed


@dataclasses.dataclass
class Job:
    label: str
    cfg: dict[str, Any]
    seed: int
    seed_dir: str
    resume: bool = False

    @property
    def cost(self) -> float:
        return self.cfg["total_steps"] * (2.5 if AGENTS[self.cfg["agent"]].recurrent else 1.0)


class RunFailed(RuntimeError):
    pass


class Progress:
    """One tqdm bar over every job: steps, SPS, recent return / success and ETA."""

    def __init__(self, jobs: list[Job], enabled: bool = True):
        self.totals = {j.label: int(j.cfg["total_steps"]) for j in jobs}
        self.steps: dict[str, int] = {}
        self.info: dict[str, dict[str, Any]] = {}
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=sum(self.totals.values()), unit="step", unit_scale=True, dynamic_ncols=True,
                            mininterval=0.5, smoothing=0.05, file=sys.stderr)

    def start(self, job: Job, step: int) -> None:
        self._advance(job, step)

    def _set_total(self, job: Job, total: int) -> None:
        if total != self.totals[job.label]:
            self.totals[job.label] = total
            if self.bar is not None:
                self.bar.total = sum(self.totals.values())

    def _advance(self, job: Job, step: int) -> None:
        prev = self.steps.get(job.label, 0)
        self.steps[job.label] = step
        if self.bar is not None and step > prev:
            self.bar.update(step - prev)

    def update(self, job: Job, msg: dict[str, Any]) -> None:
        self._set_total(job, int(msg.get("total", self.totals[job.label])))
        self._advance(job, int(msg["step"]))
        self.info[job.label] = msg
        if self.bar is not None:
            sps = sum(m["sps"] for m in self.info.values())
            post = {"sps": f"{sps:,.0f}"}
            if msg.get("ret") is not None:
                post["ret"] = f"{msg['ret']:.3g}"
            if msg.get("succ") is not None:
                post["succ"] = f"{msg['succ']:.2f}"
            post["run"] = job.label
            self.bar.set_postfix(post, refresh=False)

    def finish(self, job: Job) -> None:
        self._advance(job, max(self.totals[job.label], self.steps.get(job.label, 0)))
        self._set_total(job, self.steps[job.label])
        self.info.pop(job.label, None)

    def write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _job_steps_done(job: Job) -> int:
    """Steps already trained (for the progress bar of a resumed run)."""
    d = Path(job.seed_dir)
    if (d / EVAL).is_file():
        return job.cfg["total_steps"]
    if job.resume and (d / CHECKPOINT).is_file():
        try:
            return int(load_checkpoint(d / CHECKPOINT)["global_step"])
        except (ConfigError, TypeError, ValueError):
            return 0
    return 0


def _die_with_parent(parent_pid: int) -> None:
    """SIGTERM this process when its parent exits (Linux prctl PR_SET_PDEATHSIG); exit now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:  # the parent died before the request above took effect
        os._exit(1)


def _worker(job: Job, queue, parent_pid: int) -> None:
    """Entry point of a worker process (spawned): one job, progress and result through ``queue``."""
    _die_with_parent(parent_pid)
    os.setpgrp()  # Ctrl-C in the terminal reaches only the parent, which forwards it exactly once
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    stop = StopFlag(parent_pid=parent_pid)
    with stop.installed():
        try:
            summary = train_seed(job.cfg, job.seed, job.seed_dir, resume=job.resume, should_stop=stop,
                                 report=lambda m: queue.put(("progress", job.label, m)))
            queue.put(("done", job.label, summary))
        except Interrupted as e:
            queue.put(("interrupted", job.label, str(e)))
        except KeyboardInterrupt:
            queue.put(("interrupted", job.label, "aborted (second signal); the last periodic checkpoint remains"))
        except ConfigError as e:
            queue.put(("error", job.label, str(e)))
        except BaseException:
            queue.put(("error", job.label, traceback.format_exc()))


def run_jobs(jobs: list[Job], workers: int = 1, progress: bool = True) -> dict[str, dict[str, Any]]:
    """Run the jobs, ``workers`` at a time (1: in this process). Returns the summaries by job label.

    Ctrl-C / SIGTERM: every running job finishes its current iteration, saves its checkpoint and stops (a
    second signal aborts at once); then :class:`KeyboardInterrupt` is raised. Any failed job raises
    :class:`RunFailed`.
    """
    bar = Progress(jobs, enabled=progress)
    for j in jobs:
        bar.start(j, _job_steps_done(j))
    results: dict[str, dict[str, Any]] = {}
    try:
        if workers <= 1:
            _run_inline(jobs, bar, results)
        else:
            _run_parallel(jobs, workers, bar, results)
    finally:
        bar.close()
    return results


def _run_inline(jobs: list[Job], bar: Progress, results: dict[str, dict[str, Any]]) -> None:
    stop = StopFlag()
    with stop.installed():
        for job in jobs:
            try:
                results[job.label] = train_seed(job.cfg, job.seed, job.seed_dir, resume=job.resume,
                                                should_stop=stop, report=lambda m, j=job: bar.update(j, m))
            except Interrupted as e:
                bar.write(f"[{job.label}] {e}")
                raise KeyboardInterrupt from None
            bar.finish(job)


def _run_parallel(jobs: list[Job], workers: int, bar: Progress, results: dict[str, dict[str, Any]]) -> None:
    import multiprocessing as mp
    import queue as queue_mod

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    pending = sorted(jobs, key=lambda j: -j.cost)
    by_label = {j.label: j for j in jobs}
    running: dict[str, Any] = {}
    failures: list[str] = []
    interrupted: list[str] = []
    stop = StopFlag()

    def handle(kind: str, label: str, payload: Any) -> None:
        """One message from a worker: progress, its final summary, an interruption or an error."""
        if kind == "progress":
            bar.update(by_label[label], payload)
        elif kind == "done":
            results[label] = payload
            bar.finish(by_label[label])
        elif kind == "interrupted":
            interrupted.append(label)
            bar.write(f"[{label}] {payload}")
        elif kind == "error":
            failures.append(label)
            bar.write(f"[{label}] failed:\n{payload}")

    def forward(signum, frame):  # noqa: ARG001
        stop.count += 1
        if stop.count == 1:
            bar.write(f"{signal.Signals(signum).name}: each running run finishes its iteration and saves a "
                      "checkpoint (Ctrl-C again to abort at once)")
        for p in running.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGINT)

    previous = [(s, signal.signal(s, forward)) for s in STOP_SIGNALS]
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        while pending or running:
            while pending and len(running) < workers and not stop.count and not failures:
                job = pending.pop(0)
                p = ctx.Process(target=_worker, args=(job, q, os.getpid()), name=f"membench-{job.label}")
                p.start()
                running[job.label] = p
            try:
                handle(*q.get(timeout=0.5))
            except queue_mod.Empty:
                pass
            for label, p in list(running.items()):
                if p.exitcode is None:
                    continue
                # drain what the process sent before it exited
                while True:
                    try:
                        handle(*q.get(timeout=0.2))
                    except queue_mod.Empty:
                        break
                p.join()
                del running[label]
                if label not in results and label not in interrupted and label not in failures:
                    failures.append(label)
                    bar.write(f"[{label}] worker exited with code {p.exitcode} (see its error.txt / checkpoint)")
            if failures and not stop.count:
                # let the other runs checkpoint and stop, then report the failure
                forward(signal.SIGINT, None)
    finally:
        for s, h in previous:
            signal.signal(s, h)
    if failures:
        raise RunFailed(f"run(s) failed: {', '.join(failures)}")
    if stop.count or interrupted:
        raise KeyboardInterrupt


__all__ = ["Job", "Progress", "RunFailed", "run_jobs"]
