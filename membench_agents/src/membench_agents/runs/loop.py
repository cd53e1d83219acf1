"""The training loop of one seed: iterations, logging (TensorBoard, metrics.jsonl), checkpoints, resume, stop.

:func:`train_seed` drives any :class:`membench_agents.algos.trainer.Trainer`. Checkpoints are written at the
start, every ``checkpoint.every_iterations`` iterations / ``checkpoint.every_seconds`` seconds, when asked
to stop (Ctrl-C, SIGTERM) and at the end; see :mod:`membench_agents.runs.checkpoint` for what they hold.

A stop is honoured promptly, not only between iterations: the trainer polls it between environment steps
and minibatches, and evaluations poll it between steps. What is saved is the last consistent point: the
unfinished iteration itself where the trainer can continue it (SAC, DTQN), else the checkpoint written
before the iteration (PPO, SB3: slow iterations are preceded by one); a stopped evaluation is repeated by
the resumed run.

Resume is exact (the same parameters, logs and evaluations as an uninterrupted run, in deterministic mode)
when the environments' state can be saved as plain data (:mod:`membench_agents.runs.envstate`: membench's
native tasks, POPGym, MiniGrid, gymnasium's classic-control and toy-text tasks). For environments whose
state lives outside Python (ManiSkill / the MIKASA-Robo tasks, ``AsyncVectorEnv``), training says so once
at the start and ``--resume`` is refused with that reason: it could not continue where the run stopped.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from membench_agents.algos.trainer import Trainer, make_trainer
from membench_agents.config.env_facts import env_score
from membench_agents.errors import ConfigError, StopRequested
from membench_agents.runs import envstate
from membench_agents.runs.checkpoint import (
    CHECKPOINT,
    CheckpointError,
    load_checkpoint,
    load_trainer_state,
    save_checkpoint,
)
from membench_agents.runs.evaluation import evaluate_trainer
from membench_agents.runs.folder import (
    ERROR_LOG,
    EVAL,
    RunFolderError,
    diff_text,
    locked,
    read_json,
    same_config,
    write_json,
)
from membench_agents.runs.stats import episode_seeds, run_metric

if TYPE_CHECKING:
    from membench_agents.runs.tracking import Tracking

#: History fields that depend on the wall clock (left out when comparing two runs).
TIMING_KEYS = ("sps", "time")
_LOSS_KEYS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance")
#: Metrics of ``Trainer.iterate`` that are not algorithm scalars (bookkeeping, timings, the episode list).
_NOT_ALGO_SCALARS = frozenset({"global_step", "iteration", "sps", "rollout_sps", "learning_rate", "episodes"})


def _algo_scalars(metrics: dict[str, Any]) -> dict[str, float]:
    """An algorithm's own scalars beyond the shared loss keys (SAC's alpha, DTQN's epsilon and q_mean, ...):
    every finite real number it returns, less bookkeeping and wall-clock timings."""
    out = {}
    for k, v in metrics.items():
        if k in _NOT_ALGO_SCALARS or k in _LOSS_KEYS or k.startswith("time"):
            continue
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(v):
            out[k] = float(v)
    return out


_EVAL_KEYS = ("seed", "global_step", "iterations", "train_time_s", "sps", "metric", "value", "eval")


# ------------------------------------------------------------------------------------------------------
# stopping: Ctrl-C or SIGTERM finishes the current iteration, saves a checkpoint and exits; a second aborts
# ------------------------------------------------------------------------------------------------------
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: A trainer that drops an unfinished iteration on a stop (PPO) is checkpointed before every iteration once the
#: previous one took longer than this, so that a stop can end such an iteration at once and lose nothing.
SLOW_ITERATION_S = 5.0


class StopFlag:
    """Polled by the training loop and, inside an iteration or an evaluation, by the trainer. True after
    SIGINT / SIGTERM, or (``parent_gone`` given) once it says the process that started this one is gone."""

    def __init__(self, parent_gone: Callable[[], bool] | None = None) -> None:
        self.count = 0
        self.parent_gone = parent_gone

    def __call__(self) -> bool:
        if self.parent_gone is not None and self.parent_gone():
            return True
        return self.count > 0

    def _handler(self, signum, frame):
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopFlag]:
        try:
            previous = [(s, signal.signal(s, self._handler)) for s in STOP_SIGNALS]
        except ValueError:  # not the main thread
            yield self
            return
        try:
            yield self
        finally:
            for s, h in previous:
                signal.signal(s, h)


class Interrupted(Exception):
    """Training stopped on request; the checkpoint is saved."""


# ------------------------------------------------------------------------------------------------------
# logging
# ------------------------------------------------------------------------------------------------------
def _episode_stats(episodes: list[tuple]) -> dict[str, Any]:
    if not episodes:
        return {"episodes": 0, "return_mean": None, "length_mean": None, "success_rate": None}
    rets = [float(e[0]) for e in episodes]
    lens = [int(e[1]) for e in episodes]
    succ = [e[2] for e in episodes]
    return {
        "episodes": len(episodes),
        "return_mean": float(np.mean(rets)),
        "length_mean": float(np.mean(lens)),
        "success_rate": float(np.mean(succ)) if all(s is not None for s in succ) else None,
    }


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, path)


class _BatchedWriter:
    """A TensorBoard ``SummaryWriter`` fed in batches: scalars wait here and are handed over at most every
    ``every_s`` seconds, on :meth:`flush` (every checkpoint) and on :meth:`close`. The writer's background
    thread wakes for every scalar it is given; woken several times per training iteration, it competes with
    the training loop for the GIL between torch calls. ``mirror`` (a :class:`membench_agents.runs.tracking.WandbMirror`)
    receives the same scalars at the same steps."""

    def __init__(self, writer, every_s: float = 2.0, mirror=None):
        self.writer = writer
        self.every_s = every_s
        self.mirror = mirror
        self.pending: list[tuple[str, float, int]] = []
        self.last = time.monotonic()

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.pending.append((tag, value, step))
        if time.monotonic() - self.last >= self.every_s:
            self.flush()

    def add_text(self, tag: str, text: str) -> None:
        self.writer.add_text(tag, text, 0)

    def flush(self, to_disk: bool = False) -> None:
        """Hand the pending scalars over; ``to_disk``: also write the event file (before a checkpoint, so the
        log holds every step the checkpoint has trained)."""
        for tag, value, step in self.pending:
            self.writer.add_scalar(tag, value, step)
        if self.mirror is not None and self.pending:
            self.mirror.log(self.pending)
        self.pending = []
        self.last = time.monotonic()
        if to_disk:
            self.writer.flush()

    def close(self) -> None:
        self.flush()
        self.writer.close()
        if self.mirror is not None:
            self.mirror.close()
            self.mirror = None


def config_markdown(cfg: dict[str, Any]) -> str:
    """The resolved config as a Markdown table of dotted keys (TensorBoard's text tab, as CleanRL logs it)."""
    rows = []

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict) and node:
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        else:
            rows.append(f"|{prefix}|{json.dumps(node)}|")

    walk(cfg, "")
    return "|key|value|\n|-|-|\n" + "\n".join(rows)


# ------------------------------------------------------------------------------------------------------
# one seed
# ------------------------------------------------------------------------------------------------------
def _check_payload(payload: dict[str, Any], cfg: dict[str, Any], seed: int, path: Path) -> None:
    if not same_config(payload["config"], cfg):
        raise CheckpointError(
            f"{path} was trained with another config than the one given "
            f"({diff_text(payload['config'], cfg)}); the checkpoint's config is the run's: "
            "restore config.yaml or start a new run"
        )
    if payload["seed"] != seed:
        raise CheckpointError(f"{path} is the checkpoint of seed {payload['seed']}, not {seed}")


def read_eval(seed_dir: str | os.PathLike, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """A seed's ``eval.json`` (checked against ``cfg`` when given)."""
    path = Path(seed_dir) / EVAL
    summary = read_json(
        path,
        "final evaluation of a seed",
        "delete it and run `membench train --resume` on the run folder to evaluate the seed's checkpoint again",
        keys=_EVAL_KEYS,
    )
    if cfg is not None and "config" in summary and not same_config(summary["config"], cfg):
        raise RunFolderError(
            f"{path} was written by another config ({diff_text(summary['config'], cfg)}); restore config.yaml"
        )
    return summary


def resume_point(cfg: dict[str, Any], seed: int, seed_dir: str | os.PathLike) -> tuple[str, Any]:
    """Where ``--resume`` continues a seed: ("done", its eval.json summary), ("checkpoint", the checkpoint's
    payload) or ("fresh", None) for a seed that never started. One clear error for a seed folder that cannot
    be continued (unreadable files, another config, logs without a checkpoint, environments not saved)."""
    seed_dir = Path(seed_dir)
    ckpt = seed_dir / CHECKPOINT
    if (seed_dir / EVAL).is_file():
        return "done", read_eval(seed_dir, cfg)
    if ckpt.is_file():
        payload = load_checkpoint(ckpt)
        _check_payload(payload, cfg, seed, ckpt)
        if payload["env_state"] is None:
            raise CheckpointError(
                f"{ckpt} cannot be resumed exactly: the environments of {cfg['env']} cannot be saved as plain "
                f"data ({payload['env_state_error']}); start a new run (finished seeds can still be evaluated)"
            )
        return "checkpoint", payload
    if (seed_dir / "metrics.jsonl").is_file() or any(seed_dir.glob("events.out.tfevents.*")):
        raise CheckpointError(
            f"{ckpt} is missing but {seed_dir} holds training logs; restore the checkpoint, or "
            f"delete {seed_dir} to train this seed again from step 0"
        )
    return "fresh", None


def train_seed(
    cfg: dict[str, Any],
    seed: int,
    seed_dir: str | os.PathLike,
    *,
    resume: bool = False,
    report: Callable[[dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    stop_after_iterations: int | None = None,
    trainer: Trainer | None = None,
    tracking: Tracking | None = None,
) -> dict[str, Any]:
    """Train one seed into ``seed_dir`` and evaluate it. Returns the seed's summary (also ``eval.json``).

    ``resume``: continue from ``seed_dir/checkpoint.pt`` (a seed folder with logs but no checkpoint is an
    error, not a silent restart). ``should_stop`` is polled between iterations and inside them (see the
    module docstring): when it returns True the last consistent state is checkpointed and
    :class:`Interrupted` is raised (so does ``stop_after_iterations``, used by tests, between iterations).
    ``tracking``: mirror the scalars to Weights & Biases (:mod:`membench_agents.runs.tracking`). A failure leaves
    the last periodic checkpoint and its traceback in ``seed_dir/error.txt``. The folder is
    locked while this runs: a second process gets one error.
    """
    seed_dir = Path(seed_dir)
    with locked(seed_dir):
        try:
            return _train_seed(
                cfg, seed, seed_dir, resume, report, should_stop, stop_after_iterations, trainer, tracking
            )
        except (KeyboardInterrupt, Interrupted):
            raise
        except BaseException as e:  # the seed's log: what failed, for the one line the runner prints
            (seed_dir / ERROR_LOG).write_text(str(e) + "\n" if isinstance(e, ConfigError) else traceback.format_exc())
            raise


class _SeedRun:
    """The training of one seed once its trainer is built (and restored from ``payload``, the checkpoint resumed
    from; None: a fresh start): the loop, its logs, checkpoints and evaluations (:func:`train_seed`)."""

    def __init__(
        self,
        cfg: dict[str, Any],
        seed: int,
        seed_dir: Path,
        trainer: Trainer,
        payload: dict[str, Any] | None,
        should_stop: Callable[[], bool] | None,
        tracking: Tracking | None,
    ) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.cfg, self.seed, self.seed_dir, self.trainer = cfg, seed, seed_dir, trainer
        self.should_stop = should_stop
        self.ckpt = seed_dir / CHECKPOINT
        self.fresh = payload is None
        self.run: dict[str, Any] = (
            payload["run"]
            if payload is not None
            else {"history": [], "evals": [], "train_time": 0.0, "recent": [], "finished": False}
        )
        # purge_step: events after the checkpoint's step (logged by the interrupted process) are dropped; the
        # checkpoint's own step stays
        purge = trainer.global_step + 1 if payload is not None else None
        mirror = None
        if tracking is not None:
            from membench_agents.runs.tracking import WandbMirror

            mirror = WandbMirror(tracking, cfg, seed, seed_dir)
        self.writer = _BatchedWriter(SummaryWriter(str(seed_dir), purge_step=purge), mirror=mirror)
        if payload is None:
            self.writer.add_text("config", config_markdown(cfg))
        self.recent: deque[tuple[float, Any]] = deque(self.run["recent"], maxlen=100)
        self.total = trainer.target_steps
        self.every_eval = cfg["eval"]["every_steps"]
        self.seeds_eval = episode_seeds(cfg)
        self.env_warned = False
        self.saved_at = trainer.global_step if payload is not None else None  # the step of the checkpoint on disk

    # -- checkpoints and evaluations -------------------------------------------------------------------------
    def save(self, finished: bool = False) -> None:
        trainer, run = self.trainer, self.run
        self.writer.flush(to_disk=True)
        run["recent"] = list(self.recent)
        run["finished"] = finished
        try:
            env_state, env_error = envstate.capture(trainer.envs), None
        except envstate.NotCapturable as e:
            env_state, env_error = None, str(e)
            if not self.env_warned:
                self.env_warned = True
                print(
                    f"warning: the environments of {self.cfg['env']} cannot be saved as plain data ({e}); "
                    f"checkpoints in {self.seed_dir} hold the policy but this run cannot be resumed",
                    file=sys.stderr,
                )
        save_checkpoint(
            self.ckpt,
            {
                "config": self.cfg,
                "seed": self.seed,
                "trainer": trainer.state_dict(),
                "env_state": env_state,
                "env_state_error": env_error,
                "run": run,
                "global_step": trainer.global_step,
            },
        )
        _write_jsonl(self.seed_dir / "metrics.jsonl", run["history"] + [{"eval": e} for e in run["evals"]])
        self.saved_at = trainer.global_step

    def stop_here(self, where: str = "") -> Interrupted:
        """Checkpoint the current (consistent) state; the exception to raise."""
        self.save()
        return Interrupted(f"stopped at step {self.trainer.global_step}{where}; checkpoint saved to {self.ckpt}")

    def evaluate(self) -> dict[str, Any]:
        return evaluate_trainer(self.trainer, self.cfg, self.seeds_eval, should_stop=self.should_stop)

    def periodic_eval(self) -> None:
        """The evaluation due at this step. ``run["eval_due"]`` marks it until it is done, so that a stop in the
        middle of it checkpoints the trained state and the resumed run evaluates first."""
        self.run["eval_due"] = True
        try:
            res = self.evaluate()
        except StopRequested:
            raise self.stop_here(" (during an evaluation, which the resumed run repeats)") from None
        self.run["eval_due"] = False
        step = self.trainer.global_step
        self.run["evals"].append(
            {
                "global_step": step,
                "success_rate": res["success_rate"],
                "mean_return": res["mean_return"],
                "mean_length": res["mean_length"],
            }
        )
        if res["success_rate"] is not None:
            self.writer.add_scalar("eval/success_rate", res["success_rate"], step)
        self.writer.add_scalar("eval/return", res["mean_return"], step)

    # -- iterations ------------------------------------------------------------------------------------------
    def iterate(self, last_iteration_s: float) -> dict[str, Any]:
        """One iteration, stopped inside if asked. A trainer that keeps an unfinished iteration is saved where
        it stopped; one that drops it (PPO) leaves the checkpoint written before the iteration, so a slow
        iteration (the last one took over SLOW_ITERATION_S) is preceded by a checkpoint, and a stop inside an
        iteration is only asked for when one was."""
        trainer = self.trainer
        keeps = trainer.keeps_unfinished_iteration
        if not keeps and last_iteration_s > SLOW_ITERATION_S and self.saved_at != trainer.global_step:
            self.save()
        poll = self.should_stop if keeps or self.saved_at == trainer.global_step else None
        try:
            return trainer.iterate(poll)
        except StopRequested:
            if keeps:
                raise self.stop_here(" (inside an iteration, which the resumed run completes)") from None
            raise Interrupted(
                f"stopped inside the iteration after step {self.saved_at}, which was dropped; the "
                f"checkpoint of step {self.saved_at} stands: {self.ckpt}"
            ) from None

    def log(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """The iteration's row of the history (also written to TensorBoard)."""
        step, writer = self.trainer.global_step, self.writer
        episodes = metrics.get("episodes") or []
        stats = _episode_stats(episodes)
        self.recent.extend((float(e[0]), e[2]) for e in episodes)
        row = {
            "iteration": len(self.run["history"]) + 1,
            "global_step": step,
            **stats,
            **{k: float(metrics[k]) for k in _LOSS_KEYS if metrics.get(k) is not None},
            "sps": float(metrics.get("sps", 0.0)),
            "time": self.run["train_time"],
        }
        if metrics.get("learning_rate") is not None:
            row["learning_rate"] = float(metrics["learning_rate"])
        self.run["history"].append(row)
        if stats["episodes"]:
            writer.add_scalar("charts/episodic_return", stats["return_mean"], step)
            writer.add_scalar("charts/episodic_length", stats["length_mean"], step)
            if stats["success_rate"] is not None:
                writer.add_scalar("charts/success_rate", stats["success_rate"], step)
        writer.add_scalar("charts/SPS", row["sps"], step)
        if "learning_rate" in row:
            writer.add_scalar("charts/learning_rate", row["learning_rate"], step)
        for k in _LOSS_KEYS:
            if k in row:
                writer.add_scalar(f"losses/{k}", row[k], step)
        for k, v in _algo_scalars(metrics).items():
            writer.add_scalar(f"algo/{k}", v, step)
        return row

    def progress(self, row: dict[str, Any], evaluated: bool) -> dict[str, Any]:
        """What the progress report shows after an iteration: the recent training episodes, the evaluation."""
        rec_r = [r for r, _ in self.recent]
        rec_s = [s for _, s in self.recent if s is not None]
        return {
            "step": self.trainer.global_step,
            "total": self.total,
            "sps": row["sps"],
            "ret": float(np.mean(rec_r)) if rec_r else None,
            "succ": float(np.mean(rec_s)) if rec_s else None,
            "eval": self.run["evals"][-1] if evaluated else None,
        }

    # -- the run ---------------------------------------------------------------------------------------------
    def train(
        self, report: Callable[[dict[str, Any]], None] | None, stop_after_iterations: int | None
    ) -> tuple[dict[str, Any], str, float]:
        """Train to the end, then evaluate: (the final evaluation, its metric, the metric's value)."""
        try:
            if self.fresh:
                self.save()  # a checkpoint exists from the very start, so a crash always leaves one
                if self.every_eval:
                    self.periodic_eval()
            elif self.run.get("eval_due"):  # the run was stopped during this evaluation
                self.periodic_eval()
            self.loop(report, stop_after_iterations)
            if self.should_stop is not None and self.should_stop():
                raise self.stop_here(" (before the final evaluation)")
            try:
                final = self.evaluate()
            except StopRequested:
                raise self.stop_here(" (during the final evaluation, which the resumed run repeats)") from None
            metric, value = run_metric(final, env_score(self.cfg["env"]))
            self.writer.add_scalar(f"final/{metric}", value, self.trainer.global_step)
            self.save(finished=True)
        finally:
            self.writer.close()
        return final, metric, value

    def loop(self, report: Callable[[dict[str, Any]], None] | None, stop_after_iterations: int | None) -> None:
        """Iterations until the trainer's budget is spent, with the evaluations and checkpoints they are due."""
        trainer, every_eval, ck = self.trainer, self.every_eval, self.cfg["checkpoint"]
        last_save = time.monotonic()
        iterations_here = 0
        last_iteration_s = 0.0
        while not trainer.finished:
            if (self.should_stop is not None and self.should_stop()) or (
                stop_after_iterations is not None and iterations_here >= stop_after_iterations
            ):
                raise self.stop_here()
            t0 = time.perf_counter()
            before = trainer.global_step
            metrics = self.iterate(last_iteration_s)
            last_iteration_s = time.perf_counter() - t0
            self.run["train_time"] += last_iteration_s
            iterations_here += 1
            row = self.log(metrics)
            step = trainer.global_step
            evaluated = bool(every_eval) and (step // every_eval > before // every_eval or trainer.finished)
            if evaluated:
                self.periodic_eval()
            if report is not None:
                report(self.progress(row, evaluated))
            now = time.monotonic()
            if (ck["every_iterations"] and len(self.run["history"]) % int(ck["every_iterations"]) == 0) or (
                ck["every_seconds"] and now - last_save >= ck["every_seconds"]
            ):
                self.save()
                last_save = now


def _train_seed(cfg, seed, seed_dir: Path, resume, report, should_stop, stop_after_iterations, trainer, tracking):
    import torch

    ckpt = seed_dir / CHECKPOINT
    eval_path = seed_dir / EVAL
    payload = None
    if resume:
        kind, found = resume_point(cfg, seed, seed_dir)
        if kind == "done":
            return found
        payload = found
    # small networks: 1 thread is fastest and does not fight the other runs for the cores
    torch.set_num_threads(int(os.environ.get("MEMBENCH_TORCH_THREADS", "1")))

    trainer = trainer or make_trainer(cfg, seed)
    if payload is not None:
        load_trainer_state(trainer, payload["trainer"], ckpt)
        try:
            envstate.restore(trainer.envs, payload["env_state"])
        except ValueError as e:
            raise CheckpointError(f"{ckpt}: the saved environment state does not fit {cfg['env']} ({e})") from None
    seed_run = _SeedRun(cfg, seed, seed_dir, trainer, payload, should_stop, tracking)
    final, metric, value = seed_run.train(report, stop_after_iterations)
    run = seed_run.run
    seeds_eval = seed_run.seeds_eval
    summary = {
        "seed": seed,
        "global_step": trainer.global_step,
        "iterations": len(run["history"]),
        "train_time_s": run["train_time"],
        "sps": trainer.global_step / run["train_time"] if run["train_time"] > 0 else None,
        "metric": metric,
        "value": value,
        "episode_seeds": seeds_eval,
        "deterministic": cfg["eval"]["deterministic"],
        "eval": final,
        "config": cfg,
    }
    write_json(eval_path, summary)
    with contextlib.suppress(Exception):
        trainer.close()
    (seed_dir / ERROR_LOG).unlink(missing_ok=True)  # a failed earlier attempt's log
    return summary


def load_trainer(
    cfg: dict[str, Any], seed_dir: str | os.PathLike, seed: int, device: str | None = None
) -> tuple[Trainer, dict[str, Any]]:
    """Rebuild a seed's trainer from its checkpoint (for `membench eval`: the policy; the environments are
    not restored). The checkpoint must have been trained with ``cfg``. ``device`` (e.g. ``"cpu"`` for a run
    trained on ``"cuda"``) places the rebuilt networks elsewhere than the config's device."""
    path = Path(seed_dir) / CHECKPOINT
    payload = load_checkpoint(path)
    _check_payload(payload, cfg, seed, path)
    trainer = make_trainer(cfg if device is None else {**cfg, "device": device}, seed)
    load_trainer_state(trainer, payload["trainer"], path)
    return trainer, payload


__all__ = ["STOP_SIGNALS", "TIMING_KEYS", "Interrupted", "StopFlag", "load_trainer", "read_eval", "train_seed"]
