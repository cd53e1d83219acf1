"""Several seeds (and cells) in parallel worker processes, with one aggregated progress bar and clean stops.

Ctrl-C or SIGTERM to the parent, or a failed job: no queued job starts, every running job saves a checkpoint
at its next consistent point and stops (a second signal aborts at once), then :class:`KeyboardInterrupt` (or
:class:`RunFailed`) is raised.

Workers are forked from a server process that has imported torch and membench once (multiprocessing's
``forkserver``, preloaded with :data:`PRELOAD`): a worker starts in about 10 ms instead of the 2 s a fresh
interpreter takes to import them, which matters to a suite of hundreds of short runs. Each worker takes the
parent's environment variables as they are when it starts. Workers die with the process that started them
(which is not their OS parent, the server): each holds a pidfd of it, exits at once if it is already gone,
and checks it wherever it checks for a Ctrl-C, which its exit then counts as. Where pidfds do not exist (not
Linux), workers are spawned fresh and watch their OS parent instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from typing import Any

from membench_agents.algos.registry import AGENTS
from membench_agents.errors import ConfigError
from membench_agents.runs.checkpoint import CHECKPOINT, load_checkpoint
from membench_agents.runs.folder import ERROR_LOG, EVAL
from membench_agents.runs.loop import STOP_SIGNALS, Interrupted, StopFlag, train_seed
from membench_agents.runs.tracking import Tracking


@dataclasses.dataclass
class Job:
    label: str
    cfg: dict[str, Any]
    seed: int
    seed_dir: str
    resume: bool = False
    tracking: Tracking | None = None

    @property
    def cost(self) -> float:
        return self.cfg["total_steps"] * (2.5 if AGENTS[self.cfg["agent"]].recurrent else 1.0)


class RunFailed(RuntimeError):
    """One or more runs failed. ``failures``: one line per failed run (its label, its error, its log file)."""

    def __init__(self, failures: list[str]):
        super().__init__("; ".join(failures))
        self.failures = list(failures)
        self.resume: str | None = None  # the command that continues the folder (set by the CLI)


class Progress:
    """One tqdm bar over every job: steps, SPS, recent return / success and ETA. Without the bar
    (``enabled=False``, ``--no-progress``: logs, CI, schedulers), one plain line per run and evaluation, and
    at most one every ``every_s`` seconds per run otherwise."""

    def __init__(self, jobs: list[Job], enabled: bool = True, every_s: float = 30.0):
        self.totals = {j.label: int(j.cfg["total_steps"]) for j in jobs}
        self.steps: dict[str, int] = {}
        self.info: dict[str, dict[str, Any]] = {}
        self.every_s = every_s
        self.last_line: dict[str, float] = {}
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=sum(self.totals.values()),
                unit="step",
                unit_scale=True,
                dynamic_ncols=True,
                mininterval=0.5,
                smoothing=0.05,
                file=sys.stderr,
            )

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
        if self.bar is None:
            now = time.monotonic()
            if msg.get("eval") is not None or now - self.last_line.get(job.label, -math.inf) >= self.every_s:
                self.last_line[job.label] = now
                self.write(plain_line(job.label, msg))
            return
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
        if self.bar is None:
            self.write(f"[{job.label}] finished at step {self.steps[job.label]:,}")

    def write(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def plain_line(label: str, msg: dict[str, Any]) -> str:
    """One progress line: ``[label] step 40,960/400,000 (10%)  2,310 sps  return 0.52  success 0.50``, and the
    evaluation when one was just made."""
    step, total = int(msg["step"]), int(msg.get("total") or 0)
    parts = [
        f"[{label}] step {step:,}" + (f"/{total:,} ({100 * step / total:.0f}%)" if total else ""),
        f"{msg.get('sps', 0):,.0f} sps",
    ]
    if msg.get("ret") is not None:
        parts.append(f"return {msg['ret']:.3g}")
    if msg.get("succ") is not None:
        parts.append(f"success {msg['succ']:.2f}")
    ev = msg.get("eval")
    if ev is not None:
        what = (
            f"success {ev['success_rate']:.2f}"
            if ev.get("success_rate") is not None
            else f"return {ev['mean_return']:.3g}"
        )
        parts.append(f"evaluation: {what}")
    return "  ".join(parts)


def steps_done(job: Job) -> int:
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


#: What the worker server imports once, before it forks the first worker: everything a run needs but its env.
PRELOAD = [
    __name__,
    "membench_agents.algos.ppo",
    "membench_agents.algos.sac",
    "membench_agents.algos.dtqn",
    "membench_envs",
]


def _has_pidfd() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):  # not Linux, or a kernel older than 5.3
        return False
    return True


@functools.cache
def _context():
    """The multiprocessing context of the workers: a preloaded forkserver where pidfds let a worker watch the
    process that started it, else spawn."""
    import multiprocessing as mp

    if not _has_pidfd():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _watch_parent(parent_pid: int) -> Callable[[], bool]:
    """A check "has the process ``parent_pid`` exited?" for the stop flag (polled between environment steps,
    so the run checkpoints and stops as after a Ctrl-C); exits now if it already has."""
    if not _has_pidfd():  # spawned: the parent is the OS parent, and Linux's kernel can signal its exit
        if sys.platform.startswith("linux"):
            import ctypes

            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent_pid:  # the parent died before the request above took effect
            os._exit(1)
        return lambda: os.getppid() != parent_pid
    import select

    try:
        fd = os.pidfd_open(parent_pid)
    except ProcessLookupError:
        os._exit(1)
    return lambda: bool(select.select([fd], [], [], 0)[0])  # a pidfd turns readable when its process exits


def failure_line(job: Job, error: BaseException) -> str:
    """The one line that names a failed run: its label, the error's message and the seed's log (if written)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    what = lines[-1] if lines else type(error).__name__
    if not isinstance(error, ConfigError):
        what = f"{type(error).__name__}: {what}"
    log = Path(job.seed_dir) / ERROR_LOG
    return f"{job.label}: {what}" + (f" (log: {log})" if log.is_file() else "")


def _worker(job: Job, queue, parent_pid: int, environ: dict[str, str]) -> None:
    """Entry point of a worker process: one job, progress and result through ``queue``."""
    parent_gone = _watch_parent(parent_pid)
    os.setpgrp()  # Ctrl-C in the terminal reaches only the parent, which forwards it exactly once
    os.environ.clear()  # the parent's variables now, not the worker server's from when it started
    os.environ.update(environ)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    stop = StopFlag(parent_gone=parent_gone)
    with stop.installed():
        try:
            summary = train_seed(
                job.cfg,
                job.seed,
                job.seed_dir,
                resume=job.resume,
                should_stop=stop,
                report=lambda m: queue.put(("progress", job.label, m)),
                tracking=job.tracking,
            )
            queue.put(("done", job.label, summary))
        except Interrupted as e:
            queue.put(("interrupted", job.label, str(e)))
        except KeyboardInterrupt:
            queue.put(("interrupted", job.label, "aborted (second signal); the last periodic checkpoint remains"))
        except BaseException as e:  # every failure becomes one line (train_seed wrote the traceback to the log)
            queue.put(("error", job.label, failure_line(job, e)))
    for sig in STOP_SIGNALS:  # the result is sent: a late stop request must not break the exit
        signal.signal(sig, signal.SIG_IGN)


def run_jobs(
    jobs: list[Job], workers: int = 1, progress: bool = True, executor: Any = None
) -> dict[str, dict[str, Any]]:
    """Run the jobs, ``workers`` at a time (1: in this process) on this machine, or on the ``executor``'s cluster
    (an :class:`membench_agents.runs.executors.Executor`, typed ``Any``: that module imports this one; ``workers``
    0 there: as many at a time as it schedules). Returns the summaries by job label.

    After a stop signal (Ctrl-C, SIGTERM) or a failed job, no queued job starts: every running job saves a
    checkpoint at its next consistent point and stops, and this returns as soon as they have. A second
    signal aborts at once (each job keeps its last checkpoint). Then :class:`KeyboardInterrupt` is raised
    (stop), or :class:`RunFailed` naming each failed job and its ``error.txt`` (failure). Queued jobs that
    never started stay as prepared: resuming the folder trains them.
    """
    bar = Progress(jobs, enabled=progress)
    for j in jobs:
        bar.start(j, steps_done(j))
    results: dict[str, dict[str, Any]] = {}
    try:
        if executor is not None and executor.name != "local":
            executor.runner(jobs, workers, bar, results).run()
        elif workers <= 1:
            _run_inline(jobs, bar, results)
        else:
            _Pool(jobs, workers, bar, results).run()
    finally:
        bar.close()
    return results


#: how many queued runs a stop names (a suite run can queue hundreds)
NAMED_QUEUED = 6


def report_not_started(bar: Progress, queued: list[Job]) -> None:
    """The line that names the queued runs a stop or a failure left unstarted (none: nothing)."""
    if queued:
        names = ", ".join(j.label for j in queued[:NAMED_QUEUED])
        more = len(queued) - NAMED_QUEUED
        bar.write(
            f"{len(queued)} queued run(s) not started: {names}{f' and {more} more' if more > 0 else ''} "
            "(resuming the folder trains them)"
        )


def _run_inline(jobs: list[Job], bar: Progress, results: dict[str, dict[str, Any]]) -> None:
    stop = StopFlag()
    with stop.installed():
        for i, job in enumerate(jobs):
            try:
                results[job.label] = train_seed(
                    job.cfg,
                    job.seed,
                    job.seed_dir,
                    resume=job.resume,
                    should_stop=stop,
                    report=functools.partial(bar.update, job),
                    tracking=job.tracking,
                )
            except Interrupted as e:
                bar.write(f"[{job.label}] {e}")
                report_not_started(bar, jobs[i + 1 :])
                raise KeyboardInterrupt from None
            except ConfigError:  # bad input met inside the run (a checkpoint that does not fit, ...): one line
                report_not_started(bar, jobs[i + 1 :])
                raise
            except KeyboardInterrupt:
                raise
            except Exception as e:
                report_not_started(bar, jobs[i + 1 :])
                raise RunFailed([failure_line(job, e)]) from None
            bar.finish(job)


class JobRunner:
    """Jobs that run elsewhere (worker processes here, tasks on a cluster: :mod:`membench_agents.runs.executors`),
    ``workers`` at a time (0: all at once, as the cluster schedules them), the most costly first: the jobs'
    messages, stop signals forwarded to them, and every end accounted for (:func:`run_jobs`).

    A subclass starts a job (:meth:`launch`), takes the jobs' messages and notices ended ones (:meth:`poll`,
    which hands each message to :meth:`handle` and each job that ended without a result to :meth:`lost`),
    asks the running jobs to checkpoint and stop (:meth:`ask_to_stop`) and ends them at once (:meth:`abort`).
    A job's messages: ``("progress", label, msg)``, ``("done", label, summary)``, ``("interrupted", label,
    text)``, ``("error", label, one line)``."""

    def __init__(self, jobs: list[Job], workers: int, bar: Progress, results: dict[str, dict[str, Any]]) -> None:
        self.workers = workers if workers > 0 else len(jobs)
        self.bar, self.results = bar, results
        self.pending = sorted(jobs, key=lambda j: -j.cost)
        self.by_label = {j.label: j for j in jobs}
        self.running: dict[str, Any] = {}  # label -> the subclass's handle of the running job
        self.failures: list[str] = []  # one line per failed run
        self.failed: set[str] = set()
        self.interrupted: list[str] = []
        self.stop = StopFlag()

    # -- what a subclass provides ----------------------------------------------------------------------------
    def launch(self, job: Job) -> Any:
        """Start the job; its handle."""
        raise NotImplementedError

    def poll(self) -> None:
        """Handle the messages that arrived (waiting half a second at most) and the jobs that ended."""
        raise NotImplementedError

    def ask_to_stop(self) -> None:
        """Ask every running job that has not answered yet to checkpoint at its next consistent point and stop."""
        raise NotImplementedError

    def abort(self) -> None:
        """End the jobs still running (the loop ended early: a second signal, an error here) within seconds."""
        raise NotImplementedError

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self) -> None:
        """Run every job unless stopped or one fails; then :class:`RunFailed` or :class:`KeyboardInterrupt`."""
        previous = [(s, signal.signal(s, self.forward)) for s in STOP_SIGNALS]
        os.environ["OMP_NUM_THREADS"] = "1"
        asked = False
        try:
            while self.running or (self.pending and self.may_start()):
                self.start_jobs()
                self.poll()
                if self.failures and not asked:
                    # no queued run starts; the running ones checkpoint and stop, then the failure is reported
                    asked = True
                    self.ask_to_stop()
        finally:
            for s, h in previous:
                signal.signal(s, h)
            if self.running:
                self.abort()
        report_not_started(self.bar, self.pending)
        if self.failures:
            raise RunFailed(self.failures)
        if self.stop.count or self.interrupted:
            raise KeyboardInterrupt

    def may_start(self) -> bool:
        """Whether a queued job may start: no stop was asked for and no run failed."""
        return not self.stop.count and not self.failures

    def start_jobs(self) -> None:
        while self.pending and len(self.running) < self.workers and self.may_start():
            job = self.pending.pop(0)
            self.running[job.label] = self.launch(job)

    def handle(self, kind: str, label: str, payload: Any) -> None:
        """One message from a job: progress, its final summary, an interruption or an error."""
        if kind == "progress":
            self.bar.update(self.by_label[label], payload)
        elif kind == "done":
            self.results[label] = payload
            self.bar.finish(self.by_label[label])
        elif kind == "interrupted":
            self.interrupted.append(label)
            self.bar.write(f"[{label}] {payload}")
        elif kind == "error":
            self.failed.add(label)
            self.failures.append(payload)
            self.bar.write(f"failed: {payload}")

    def unanswered(self, label: str) -> bool:
        """Whether the job has sent no result yet (no summary, interruption or error)."""
        return label not in self.results and label not in self.interrupted and label not in self.failed

    def lost(self, label: str, why: str) -> None:
        """The job ended without sending a result (``why``: what ended it): a failure naming its log or folder."""
        d = Path(self.by_label[label].seed_dir)
        log = d / ERROR_LOG
        where = f"its log: {log}" if log.is_file() else f"its folder: {d}"
        self.failed.add(label)
        self.failures.append(f"{label}: {why}; {where}")
        self.bar.write(f"failed: {self.failures[-1]}")

    def forward(self, signum, frame) -> None:
        """The handler of a stop signal: the first asks the jobs to stop, a second aborts."""
        self.stop.count += 1
        if self.stop.count == 1:
            self.bar.write(
                f"{signal.Signals(signum).name}: no queued run starts; each running run saves a "
                "checkpoint at its next consistent point and stops (Ctrl-C again to abort at once)"
            )
        self.ask_to_stop()
        if self.stop.count > 1:
            raise KeyboardInterrupt


class _Pool(JobRunner):
    """Jobs in worker processes of this machine (see the module docstring)."""

    def __init__(self, jobs: list[Job], workers: int, bar: Progress, results: dict[str, dict[str, Any]]) -> None:
        super().__init__(jobs, workers, bar, results)
        self.ctx = _context()
        self.q = self.ctx.Queue()

    def launch(self, job: Job) -> Any:
        p = self.ctx.Process(
            target=_worker, args=(job, self.q, os.getpid(), dict(os.environ)), name=f"membench-{job.label}"
        )
        p.start()
        return p

    def poll(self) -> None:
        try:
            self.handle(*self.q.get(timeout=0.5))
        except Empty:
            pass
        for label, p in list(self.running.items()):
            if p.exitcode is not None:
                self.reap(label, p)

    def reap(self, label: str, p) -> None:
        """A worker has exited: take what it sent before it did, then account for it."""
        while True:
            try:
                self.handle(*self.q.get(timeout=0.2))
            except Empty:
                break
        p.join()
        del self.running[label]
        if self.unanswered(label):
            self.lost(
                label, f"the worker process exited with code {p.exitcode} without a result (killed, or out of memory?)"
            )

    def ask_to_stop(self) -> None:
        for label, p in self.running.items():
            if self.unanswered(label):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGINT)

    def abort(self) -> None:
        _abort(self.running)


def _abort(running: dict[str, Any], grace_s: float = 5.0) -> None:
    """Workers still running after the loop ended early (a second signal, an error in the orchestrator): they
    were asked to stop; wait ``grace_s`` seconds at most, then kill them."""
    import time

    end = time.monotonic() + grace_s
    for p in running.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(p.pid, signal.SIGINT)
    for p in running.values():
        p.join(max(0.0, end - time.monotonic()))
        if p.exitcode is None:
            p.kill()
            p.join()


__all__ = ["Job", "Progress", "RunFailed", "run_jobs"]
