"""Offline datasets of MIKASA-Robo episodes: ``membench-envs collect MIKASA/RememberColor3-v0 --episodes 1000``.

A scripted expert on the privileged state (:mod:`membench_envs.robo.experts`) plays episode seeds ``seed_start``,
``seed_start + 1``, ... in the ``oracle`` variant (the two 128x128 cameras, the joints and the oracle), with the
``normalized_dense`` reward and every episode running its full T steps (``terminate_on_success=False``), as the
published datasets were recorded. ``only_success=True`` keeps the successful episodes only (the failed seeds are
skipped and listed), until ``episodes`` are kept.

The result is ManiSkill's trajectory format, one HDF5 file and its JSON index in ``out``::

    <Task>-v0.h5    traj_<i>/obs/rgb     (T+1, 128, 128, 6) uint8   base camera RGB + wrist camera RGB
                    traj_<i>/obs/joints  (T+1, 25) float32          TCP pose, joint positions and velocities
                    traj_<i>/obs/oracle  (T+1, k)                   the privileged answer (the task's oracle keys)
                    traj_<i>/actions     (T, 7) float32             pd_ee_delta_pose commands (the expert's)
                    traj_<i>/rewards     (T,) float32               normalized_dense reward
                    traj_<i>/success     (T,) bool                  the task's success on each step
                    traj_<i>/terminated, truncated, done  (T,) bool
    <Task>-v0.json  {"env_info": {"env_id", "env_kwargs", "max_episode_steps"}, "source_type", "source_desc",
                     "episodes": [{"episode_id", "episode_seed", "reset_kwargs", "control_mode", "elapsed_steps",
                                   "success", "success_once", "return"}], "membench": {...}}

``obs`` holds T+1 observations (the one after the last action included, as in ManiSkill); observation t is the
one action t was chosen on. :class:`membench_envs.robo.dataset.EpisodeDataset` reads the files into torch tensors.

**Interrupted collections resume.** Each finished attempt is written at once and atomically, as its own file in
``<Task>-v0.parts/`` (``ep_<seed>.h5``, or ``ep_<seed>.rejected`` for a failed attempt under ``only_success``);
a restart with the same arguments skips every seed that has a file, so no episode is lost or written twice. The
final pair of files is assembled from the parts (written to temporary names, then renamed) and the parts are
removed.

**One collector per dataset.** ``<Task>-v0.lock`` in ``out`` is held (``fcntl.flock``, released when the process
ends, even by SIGKILL) for the whole collection; a second collector of the same task into the same folder stops at
once with :class:`DatasetLockedError` (collectors of other tasks may share the folder). The file is removed when its
collector ends.

**SIGTERM and Ctrl-C** stop the collection at once: the episode in play is dropped, every finished one is kept, and
one message on stderr says how many episodes were kept, where, and that the same command continues from the next
seed. Then SIGTERM ends the process as SIGTERM would have (exit status 143; a handler the caller had installed is
called instead), and Ctrl-C raises ``KeyboardInterrupt``.

The published MIKASA-Robo datasets (1000 episodes per task from an oracle PPO agent, about 200 GB to download) are
replaced by this collector. Differences from them: the actions are end-effector deltas (the experts' controller; the
published ones are joint deltas), and the expert is scripted, not a trained agent. A progress bar shows the episodes
kept and the success rate.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

#: What the recorded environment is made with (the expert's controller; the datasets' reward and fixed length).
RECORD_KWARGS: dict[str, Any] = {
    "obs_variant": "oracle",
    "control_mode": "pd_ee_delta_pose",
    "reward_mode": "normalized_dense",
    "terminate_on_success": False,
}
FORMAT = "membench-robo-dataset/1"


class CollectionError(RuntimeError):
    """The expert did not reach the asked number of successful episodes within ``max_attempts`` seeds."""


class DatasetLockedError(CollectionError):
    """Another process is collecting the same dataset into the same folder."""


class CollectionStopped(CollectionError):
    """SIGTERM stopped the collection and the caller's own SIGTERM handler returned (see the module docstring)."""


class _Terminated(BaseException):
    """Raised by the SIGTERM handler to unwind the collection loop (a BaseException: no ``except Exception`` in the
    env or the expert swallows it)."""

    message: str | None = None
    """What the collection said when it stopped (None: it stopped outside the recording loop)."""


def dataset_paths(out: str | os.PathLike, env_id: str) -> tuple[Path, Path, Path]:
    """(HDF5 file, JSON index, parts folder) of ``env_id``'s dataset in ``out``."""
    name = env_id.split("/")[-1]
    out = Path(out)
    return out / f"{name}.h5", out / f"{name}.json", out / f"{name}.parts"


@contextlib.contextmanager
def _locked(lock: Path, dataset: Path) -> Iterator[None]:
    """Hold ``lock`` (``fcntl.flock``) for the block; remove it when the block ends (see the module docstring)."""
    import fcntl

    lock.parent.mkdir(parents=True, exist_ok=True)
    f = open(lock, "a+")  # held for the whole block
    try:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "pid unknown"
            raise DatasetLockedError(
                f"{dataset} is being collected by another process ({holder}, lock {lock}); "
                "wait for it to finish or stop it, then run the same command again (it "
                "resumes)"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)  # still held: a collector that opens the path now gets a new file
    finally:
        f.close()


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[Any]:
    """While the block runs, SIGTERM raises :class:`_Terminated` (main thread only, and not when the caller ignores
    SIGTERM); yields the handler to restore (None: nothing installed)."""
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or previous is signal.SIG_IGN:
        yield None
        return

    def handler(signum, frame):
        raise _Terminated

    signal.signal(signal.SIGTERM, handler)
    try:
        yield previous
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _settings(env_id: str, env_kwargs: dict[str, Any], only_success: bool, seed_start: int) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "env_id": env_id,
        "env_kwargs": {**RECORD_KWARGS, **env_kwargs},
        "only_success": bool(only_success),
        "seed_start": int(seed_start),
        "policy": "scripted expert",
    }


def _check_settings(parts: Path, settings: dict[str, Any]) -> None:
    """A parts folder belongs to one set of arguments: resuming with others would mix two datasets."""
    path = parts / "settings.json"
    if not path.is_file():
        parts.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(settings, indent=1))
        os.replace(tmp, path)
        return
    try:
        stored = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is unreadable ({e}); delete {parts} to start the collection again") from None
    if stored != settings:
        diff = [k for k in settings if stored.get(k) != settings[k]]
        raise ValueError(
            f"{parts} holds an interrupted collection with other settings ({', '.join(diff)}); "
            f"resume it with the same arguments, or delete the folder"
        )


def _record_episode(env, expert, seed: int) -> dict[str, np.ndarray]:
    obs, info = env.reset(seed=seed)
    expert.reset()
    frames = {k: [np.asarray(obs[k])] for k in ("rgb", "joints", "oracle")}
    steps: dict[str, list] = {"actions": [], "rewards": [], "success": [], "terminated": [], "truncated": []}
    while True:
        action = np.asarray(expert(obs, info), dtype=np.float32)
        obs, reward, terminated, truncated, info = env.step(action)
        for k in frames:
            frames[k].append(np.asarray(obs[k]))
        steps["actions"].append(action)
        steps["rewards"].append(float(reward))
        steps["success"].append(bool(info["success"]))
        steps["terminated"].append(bool(terminated))
        steps["truncated"].append(bool(truncated))
        if terminated or truncated:
            break
    ep = {f"obs/{k}": np.stack(v) for k, v in frames.items()}
    ep["actions"] = np.stack(steps["actions"]).astype(np.float32)
    ep["rewards"] = np.asarray(steps["rewards"], dtype=np.float32)
    for k in ("success", "terminated", "truncated"):
        ep[k] = np.asarray(steps[k], dtype=bool)
    ep["done"] = ep["terminated"] | ep["truncated"]
    return ep


def _write_h5(path: Path, groups: dict[str, dict[str, np.ndarray]]) -> None:
    """Write ``{group: {dataset path: array}}`` to ``path`` atomically (a temporary file, then rename)."""
    import h5py

    tmp = path.with_name(path.name + ".tmp")
    with h5py.File(tmp, "w") as f:
        for group, arrays in groups.items():
            for key, value in arrays.items():
                f.create_dataset(
                    f"{group}/{key}",
                    data=value,
                    compression="gzip" if value.dtype == np.uint8 and value.ndim == 4 else None,
                )
    os.replace(tmp, path)


def _read_h5_group(f, group: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    f[group].visititems(lambda name, obj: out.__setitem__(name, obj[()]) if hasattr(obj, "shape") else None)
    return out


def _episode_meta(ep: dict[str, np.ndarray], seed: int, episode_id: int, control_mode: str) -> dict[str, Any]:
    return {
        "episode_id": episode_id,
        "episode_seed": seed,
        "reset_kwargs": {"seed": seed},
        "control_mode": control_mode,
        "elapsed_steps": len(ep["actions"]),
        "success": bool(ep["success"][-1]),
        "success_once": bool(ep["success"].any()),
        "return": float(ep["rewards"].sum()),
    }


def _progress(total: int, done: int):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with ManiSkill
        return None
    return tqdm(total=total, initial=done, unit="ep", desc="collect", dynamic_ncols=True, file=sys.stderr)


def collect(
    env_id: str,
    episodes: int,
    out: str | os.PathLike = "datasets",
    *,
    only_success: bool = False,
    seed_start: int = 0,
    max_attempts: int | None = None,
    progress: bool = True,
    **env_kwargs: Any,
) -> tuple[Path, Path]:
    """Collect ``episodes`` episodes of ``env_id`` with its scripted expert into ``out``; returns (h5, json) paths.

    ``only_success``: keep successful episodes only (``success_once``); ``max_attempts`` (default ``10 *
    episodes`` then) bounds the seeds tried. Other kwargs go to ``gym.make`` (e.g. ``episode_steps``); the
    recording settings :data:`RECORD_KWARGS` are fixed. A collection interrupted at any point resumes when called
    again with the same arguments (see the module docstring).
    """
    import membench_envs  # noqa: F401  (registers the IDs)

    episodes = int(episodes)
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    fixed = sorted(set(env_kwargs) & set(RECORD_KWARGS))
    if fixed:
        raise ValueError(f"{', '.join(fixed)} cannot be changed: datasets are recorded with {RECORD_KWARGS}")
    max_attempts = int(max_attempts) if max_attempts is not None else (10 * episodes if only_success else episodes)
    h5_path, json_path, parts = dataset_paths(out, env_id)
    with _sigterm_unwinds() as previous:
        try:
            with _locked(h5_path.with_suffix(".lock"), h5_path):
                return _collect_locked(
                    env_id,
                    episodes,
                    h5_path,
                    json_path,
                    parts,
                    only_success,
                    seed_start,
                    max_attempts,
                    progress,
                    env_kwargs,
                )
        except _Terminated as stop:  # unwound and unlocked
            message = stop.message
            if message is None:  # outside the recording loop: resuming, or assembling the final pair
                message = (
                    f"stopped by SIGTERM: every finished episode is kept in {parts} (or already in "
                    f"{h5_path}); run the same command again to continue."
                )
                print(f"membench-envs collect: {message}", file=sys.stderr, flush=True)
    # the caller's handler is back: end as SIGTERM would have
    if previous in (None, signal.SIG_DFL):
        signal.raise_signal(signal.SIGTERM)  # exit status 143
    elif callable(previous):
        previous(signal.SIGTERM, None)
    raise CollectionStopped(message)


def _collect_locked(
    env_id, episodes, h5_path, json_path, parts, only_success, seed_start, max_attempts, progress, env_kwargs
) -> tuple[Path, Path]:
    if _already_collected(h5_path, json_path, parts, episodes):
        return h5_path, json_path
    settings = _settings(env_id, env_kwargs, only_success, seed_start)
    _check_settings(parts, settings)
    tally = _resume(parts, seed_start, episodes, max_attempts)
    started = time.perf_counter()
    try:
        _record(env_id, env_kwargs, parts, episodes, max_attempts, only_success, progress, tally)
    except (_Terminated, KeyboardInterrupt) as stop:
        what = "SIGTERM" if isinstance(stop, _Terminated) else "Ctrl-C"
        if _attempted(parts, tally.seed) is not None:  # stopped after the attempt was written, before it was counted
            tally.kept += _attempted(parts, tally.seed) == "kept"
            tally.seed += 1
        done = f"seeds {seed_start}..{tally.seed - 1} done" if tally.seed > seed_start else "no seed done"
        message = (
            f"stopped by {what}: {tally.kept} of {episodes} episodes kept in {parts} ({done}); the episode in "
            f"play, if any, was dropped. Run the same command again to continue from seed {tally.seed}."
        )
        print(f"membench-envs collect: {message}", file=sys.stderr, flush=True)
        if isinstance(stop, _Terminated):
            stop.message = message
        raise
    if tally.kept < episodes:
        raise CollectionError(
            f"only {tally.kept} of {episodes} successful episodes in {tally.tried} seeds "
            f"(success rate {tally.successes / max(tally.tried, 1):.2f}); raise max_attempts or "
            f"resume later: the {tally.kept} kept are in {parts}"
        )
    _assemble(env_id, settings, parts, h5_path, json_path, seed_start, tally.seed, tally.tried, tally.successes)
    if tally.kept_here:
        print(f"{tally.kept_here / (time.perf_counter() - started) * 60:.1f} episodes/min in this run", file=sys.stderr)
    return h5_path, json_path


def _already_collected(h5_path: Path, json_path: Path, parts: Path, episodes: int) -> bool:
    """True when the final pair holds the episodes asked for (leftover parts removed); an error if it holds fewer."""
    from membench_envs.robo.dataset import open_index

    if not (json_path.is_file() and h5_path.is_file()):
        return False
    have = len(open_index(h5_path)[1])
    if have >= episodes:
        if parts.is_dir():  # a run stopped while removing its parts, after the final pair was written
            for p in parts.iterdir():
                p.unlink()
            parts.rmdir()
        print(f"{json_path}: already holds {have} episodes", file=sys.stderr)
        return True
    raise ValueError(f"{h5_path} already holds {have} episodes (< {episodes}); choose another --out or delete it")


@dataclass
class _Tally:
    """Where a collection stands: the next seed to play, and the episodes kept, seeds tried and successes so far."""

    seed: int
    kept: int = 0
    tried: int = 0
    successes: int = 0
    kept_here: int = 0
    """Episodes kept by this run (for its speed)."""


def _attempted(parts: Path, seed: int) -> str | None:
    """What an earlier attempt at ``seed`` left: ``"kept"``, ``"rejected"``, or None (not attempted)."""
    if (parts / f"ep_{seed}.h5").is_file():
        return "kept"
    if (parts / f"ep_{seed}.rejected").is_file():
        return "rejected"
    return None


def _resume(parts: Path, seed_start: int, episodes: int, max_attempts: int) -> _Tally:
    """The tally of what earlier runs did: the seeds from ``seed_start`` on that already have a part."""
    tally = _Tally(seed_start)
    while tally.kept < episodes and tally.tried < max_attempts and _attempted(parts, tally.seed) is not None:
        tally.kept += _attempted(parts, tally.seed) == "kept"
        tally.tried += 1
        tally.seed += 1
    if tally.tried:
        import h5py

        for s in range(seed_start, tally.seed):
            if _attempted(parts, s) == "kept":
                with h5py.File(parts / f"ep_{s}.h5", "r") as f:
                    tally.successes += bool(f["traj/success"][()].any())
        print(f"resuming: {tally.kept} episodes kept from {tally.tried} seeds already tried", file=sys.stderr)
    return tally


def _record(
    env_id: str,
    env_kwargs: dict[str, Any],
    parts: Path,
    episodes: int,
    max_attempts: int,
    only_success: bool,
    progress: bool,
    tally: _Tally,
) -> None:
    """Play seeds from ``tally.seed`` on, each attempt written as its part, until ``episodes`` are kept or
    ``max_attempts`` seeds are tried; ``tally`` follows every attempt on disk."""
    import gymnasium as gym

    from membench_envs.robo.experts import scripted_expert

    bar = _progress(episodes, tally.kept) if progress else None
    env = None
    try:
        while tally.kept < episodes and tally.tried < max_attempts:
            if env is None:
                env = gym.make(env_id, **RECORD_KWARGS, **env_kwargs)
                expert = scripted_expert(env)
            ep = _record_episode(env, expert, tally.seed)
            ok = bool(ep["success"].any())
            if ok or not only_success:
                _write_h5(parts / f"ep_{tally.seed}.h5", {"traj": ep})
            else:
                (parts / f"ep_{tally.seed}.rejected").touch()
            tally.successes += ok  # counted once the attempt is on disk: a stop before this drops the episode
            tally.tried += 1
            if ok or not only_success:
                tally.kept += 1
                tally.kept_here += 1
                if bar is not None:
                    bar.update(1)
            if bar is not None:
                bar.set_postfix(success=f"{tally.successes / tally.tried:.2f}", seeds=tally.tried)
            tally.seed += 1
    finally:
        if bar is not None:
            bar.close()
        if env is not None:
            env.close()


def _assemble(
    env_id,
    settings,
    parts: Path,
    h5_path: Path,
    json_path: Path,
    seed_start: int,
    seed_end: int,
    tried: int,
    successes: int,
) -> None:
    """The final HDF5 + JSON pair from the parts (kept seeds in order), then the parts are removed."""
    import h5py

    from membench_envs import catalogue

    groups: dict[str, dict[str, np.ndarray]] = {}
    metas: list[dict[str, Any]] = []
    rejected: list[int] = []
    control_mode = RECORD_KWARGS["control_mode"]
    for s in range(seed_start, seed_end):
        part = parts / f"ep_{s}.h5"
        if not part.is_file():
            rejected.append(s)
            continue
        with h5py.File(part, "r") as f:
            ep = _read_h5_group(f, "traj")
        i = len(metas)
        groups[f"traj_{i}"] = ep
        metas.append(_episode_meta(ep, s, i, control_mode))
    spec = catalogue.get(env_id)
    default_steps = cast(int, spec.episode_length)  # every robot task has its T
    index = {
        "env_info": {
            "env_id": env_id,
            "env_kwargs": settings["env_kwargs"],
            "max_episode_steps": int(settings["env_kwargs"].get("episode_steps") or default_steps),
        },
        "source_type": "scripted expert",
        "source_desc": "membench_envs.robo.experts (privileged state), oracle variant, two 128x128 cameras",
        "episodes": metas,
        "membench": {
            **settings,
            "rejected_seeds": rejected,
            "seeds_tried": tried,
            "expert_success_rate": successes / max(tried, 1),
            "memory_types": list(spec.memory_types),
            "oracle_keys": list(spec.oracle_keys),
        },
    }
    _write_h5(h5_path, groups)
    tmp = json_path.with_name(json_path.name + ".tmp")
    tmp.write_text(json.dumps(index, indent=1))
    os.replace(tmp, json_path)
    for p in parts.iterdir():
        p.unlink()
    parts.rmdir()
    print(f"{h5_path}: {len(metas)} episodes (expert success {successes}/{tried} seeds)", file=sys.stderr)


__all__ = [
    "FORMAT",
    "RECORD_KWARGS",
    "CollectionError",
    "CollectionStopped",
    "DatasetLockedError",
    "collect",
    "dataset_paths",
]
