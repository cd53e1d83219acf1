"""Run folders: their layout, provenance, the lock that keeps one writer per folder, and careful reading.

A *run* is one cell (environment, agent, budget, hyperparameters) trained once per seed. Its folder::

    <run>/config.yaml            the resolved configuration (each checkpoint holds its own copy, which wins)
    <run>/results.json           mean ± SEM over the per-seed means, protocol, versions, git commit
    <run>/learning_curve.png     learning curves (mean ± SEM over seeds) and the final evaluation
    <run>/.membench.lock         held (fcntl) while a process trains into the folder
    <run>/seed_<s>/events.out.tfevents.*   TensorBoard log (returns, success rate, losses, SPS)
    <run>/seed_<s>/checkpoint.pt the resumable state (written periodically, on Ctrl-C / SIGTERM and at the end)
    <run>/seed_<s>/metrics.jsonl one line per iteration (and per evaluation during training)
    <run>/seed_<s>/eval.json     the final evaluation: one episode per fixed episode seed

Every reader here turns a missing, empty, truncated or foreign file into one :class:`RunFolderError` line
naming the file and what to do, instead of a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from membench_agents.algos.registry import AGENTS
from membench_agents.config.env_facts import check_env_id
from membench_agents.errors import ConfigError

CONFIG = "config.yaml"
RESULTS = "results.json"
EVAL = "eval.json"
LOCK = ".membench.lock"
#: A failed seed's traceback, in its seed folder (removed when the seed finishes).
ERROR_LOG = "error.txt"
_CONFIG_KEYS = ("env", "agent", "obs_variant", "env_kwargs", "total_steps", "seeds", "eval", "checkpoint", "device")


class RunFolderError(ConfigError):
    """A run folder (or a file in it) that cannot be used as it is; the message names the file and the fix."""


# ------------------------------------------------------------------------------------------------------
# provenance
# ------------------------------------------------------------------------------------------------------
def versions(agent: str | None = None) -> dict[str, str | None]:
    """Versions of python and the packages a result depends on."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version()}
    names = ["torch", "gymnasium", "numpy", "membench-envs", "membench-agents"]
    if agent is None or AGENTS[agent].kind == "sb3":
        names += ["stable-baselines3", "sb3-contrib"]
    for name in names:
        try:
            out[name.replace("-", "_")] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name.replace("-", "_")] = None
    return out


def git_info() -> dict[str, Any]:
    """The commit of the membench checkout (and whether tracked files differ from it), or None outside git."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        if not commit:
            return {"commit": None, "dirty": None}
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return {"commit": commit, "dirty": bool(status)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


# ------------------------------------------------------------------------------------------------------
# names
# ------------------------------------------------------------------------------------------------------
#: The longest folder name most file systems take (bytes of its UTF-8 encoding).
MAX_NAME_BYTES = 255


def folder_name(name: Any, what: str) -> str:
    """``name`` if it is one plain folder name, else one :class:`ConfigError` naming ``what`` and the value.

    The one rule for every name membench joins onto a folder, whether it is new (a sweep spec's ``name``) or
    read back from disk (the cells of ``sweep.yaml`` and ``bench.yaml``): one path component (no ``/`` or
    ``\\``, not ``.`` or ``..``, not hidden), no control characters (NUL, newline, ...), at most 255 bytes. A
    name read back that breaks it cannot reach outside its folder."""
    bad = None
    if not isinstance(name, str) or not name:
        bad = "a non-empty string"
    elif "/" in name or "\\" in name:
        bad = "one path component (no slashes)"
    elif name.startswith("."):
        bad = "a visible folder name (not '.', '..' or starting with '.')"
    elif any(ord(c) < 32 or ord(c) == 127 for c in name):
        bad = "free of control characters (NUL, newline, ...)"
    elif len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        bad = f"at most {MAX_NAME_BYTES} bytes long"
    if bad is not None:
        raise ConfigError(f"{what} must be a folder name, {bad}; got {name!r}")
    return name


def run_label(cfg: dict[str, Any]) -> str:
    v = cfg["obs_variant"]
    return cfg["agent"] if v == "partial" else f"{cfg['agent']}.{v}"


def new_run_dir(root: str | os.PathLike, cfg: dict[str, Any]) -> Path:
    """``<root>/<env-id>/<agent>[.<variant>]/<time>`` (a suffix -2, -3, ... if it exists)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path(root) / Path(*cfg["env"].replace(":", "_").split("/")) / run_label(cfg)
    d = base / stamp
    k = 1
    while d.exists():
        k += 1
        d = base / f"{stamp}-{k}"
    return d


# ------------------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------------------
def read_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    """``config.yaml`` of a run folder, checked to be a run config (not yet against the checkpoints: see
    :func:`membench_agents.runs.run_config`)."""
    import yaml

    run_dir = Path(run_dir)
    path = run_dir / CONFIG
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir} {'is a file, not a run folder' if run_dir.exists() else 'does not exist'}")
    if not path.is_file():
        raise RunFolderError(f"{run_dir} is not a membench run folder (no {CONFIG})")
    fix = "restore it (each seed's checkpoint.pt and results.json hold the run's config), or start a new run"
    try:
        cfg = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        where = getattr(e, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        raise RunFolderError(f"{path} is not valid YAML{line}; {fix}") from None
    if cfg is None:
        raise RunFolderError(f"{path} is empty; {fix}")
    if not isinstance(cfg, dict):
        raise RunFolderError(f"{path} does not hold a mapping of config keys; {fix}")
    missing = [k for k in _CONFIG_KEYS if k not in cfg]
    if missing:
        raise RunFolderError(f"{path} is not a complete run config (no {', '.join(missing)}); {fix}")
    if not isinstance(cfg["agent"], str) or cfg["agent"] not in AGENTS:
        raise RunFolderError(f"{path} names an unknown agent {cfg['agent']!r}; {fix}")
    try:  # before anything makes an environment: gymnasium would import the module of a `module:ID` string
        check_env_id(cfg["env"])
    except ConfigError as e:
        raise RunFolderError(f"{path}: {e}; {fix}") from None
    if (
        not isinstance(cfg["seeds"], list)
        or not cfg["seeds"]
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in cfg["seeds"])
    ):
        raise RunFolderError(f"{path}: seeds must be a non-empty list of ints; {fix}")
    from membench_agents.config.resolve import validate

    try:  # the whole config, as strictly as a new one: a value of another type is an error here, not a crash later
        canonical = validate(cfg, str(path))
    except ConfigError as e:
        raise RunFolderError(f"{e}; {fix}") from None
    if not same_config(cfg, canonical):
        raise RunFolderError(f"{path} is not a run config as membench writes it ({diff_text(cfg, canonical)}); {fix}")
    return cfg


def read_json(path: str | os.PathLike, what: str, fix: str, keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON object file written by membench; one :class:`RunFolderError` when it is missing, truncated,
    not an object or lacks ``keys``. ``what``: what the file is; ``fix``: what the user can do."""
    path = Path(path)
    if not path.is_file():
        raise RunFolderError(f"{path} does not exist ({what}); {fix}")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RunFolderError(f"{path} is not valid JSON (truncated or edited?); {fix}") from None
    if not isinstance(data, dict):
        raise RunFolderError(f"{path} is not a JSON object ({what}); {fix}")
    missing = [k for k in keys if k not in data]
    if missing:
        raise RunFolderError(f"{path} is not a complete {what} (no {', '.join(missing)}); {fix}")
    return data


def write_json(path: str | os.PathLike, data: Any) -> None:
    """Write ``data`` as JSON (indent 1) to ``path`` atomically: a reader sees the old file or the new one, never a
    part (written to ``<name>.tmp``, then renamed)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _strict_equal(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down: ``10.0`` is not ``10`` and ``1`` is not ``True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def config_diff(a: Any, b: Any, prefix: str = "") -> list[str]:
    """The dotted keys where two configs differ (for one-line error messages); type-strict, as :func:`same_config`."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            key = f"{prefix}{k}"
            if k not in a or k not in b:
                out.append(key)
            else:
                out += config_diff(a[k], b[k], key + ".")
        return out
    return [] if _strict_equal(a, b) else [prefix.rstrip(".") or "(whole config)"]


def same_config(a: Any, b: Any) -> bool:
    """Whether two configs (or any plain values) are the same: every comparison of an edited config against the
    config a run was trained with goes through here. Type-strict (``episodes: 10.0`` in an edited config.yaml is
    not the ``10`` a checkpoint holds, ``deterministic: 1`` is not ``true``): a value that compares equal but has
    another type would pass the check and then fail, or behave differently, where it is used."""
    return not config_diff(a, b)


def diff_text(a: dict[str, Any], b: dict[str, Any], limit: int = 4) -> str:
    """``key: a_value != b_value`` for the first differing keys."""
    parts = []
    for key in config_diff(a, b)[:limit]:
        va, vb = _get(a, key), _get(b, key)
        parts.append(f"{key}: {va!r} vs {vb!r}")
    more = len(config_diff(a, b)) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _get(cfg: Any, dotted: str) -> Any:
    for k in dotted.split("."):
        if not isinstance(cfg, dict) or k not in cfg:
            return "<absent>"
        cfg = cfg[k]
    return cfg


# ------------------------------------------------------------------------------------------------------
# one writer per folder
# ------------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def locked(folder: str | os.PathLike) -> Iterator[Path]:
    """Hold the folder's lock file (``fcntl.flock``, released when the process ends, even by a crash) while
    writing into it. A second process gets one :class:`RunFolderError` instead of sharing the files. The
    file is removed when the block ends, so a finished folder holds no lock file."""
    import fcntl

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK
    while True:
        f = open(path, "a+")  # held for the whole block
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip()
            f.close()
            raise RunFolderError(
                f"{folder} is in use by another membench process ({holder or 'pid unknown'}); "
                "wait for it to finish or stop it, then retry"
            ) from None
        try:  # the previous holder may have removed the file between our open and our lock: lock the new one
            if os.stat(path).st_ino == os.fstat(f.fileno()).st_ino:
                break
        except FileNotFoundError:
            pass
        f.close()
    try:
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        yield folder
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # while still holding it: whoever opens the path next creates a new file
        f.close()


__all__ = [
    "CONFIG",
    "EVAL",
    "LOCK",
    "MAX_NAME_BYTES",
    "RESULTS",
    "RunFolderError",
    "config_diff",
    "diff_text",
    "folder_name",
    "git_info",
    "locked",
    "new_run_dir",
    "read_config",
    "read_json",
    "run_label",
    "same_config",
    "versions",
    "write_json",
]
