"""Run folders you can trust: opening one runs no code, an edited config is caught, one writer per folder,
stop signals leave a resumable checkpoint, broken files give one clear line, environment state round-trips
as plain data, and any gymnasium ID trains."""

from __future__ import annotations

import enum
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml
from membench_agents.algos.vector import make_vector_env
from membench_agents.cli import main
from membench_agents.config.resolve import resolve
from membench_agents.runs import cell, envstate, loop
from membench_agents.runs.checkpoint import CheckpointError, load_checkpoint
from membench_agents.runs.folder import RunFolderError, locked

from tests.agents._runs_helpers import (
    LONG_TRAINING_SETS,
    ROOT,
    alive,
    interrupt_once_started,
    tiny_config,
    wait_for,
    worker_processes,
)


# ------------------------------------------------------------------------------------------------------
# fixtures: one finished run and one interrupted run, copied per test
# ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("finished") / "run"
    cell.train(tiny_config("ppo-mlp", iterations=2), run, progress=False)
    return run


@pytest.fixture(scope="module")
def interrupted_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("interrupted") / "run"
    cfg = tiny_config("ppo-mlp", iterations=4)
    (job,) = cell.prepare_run(cfg, run)
    with pytest.raises(loop.Interrupted):
        loop.train_seed(job.cfg, job.seed, job.seed_dir, stop_after_iterations=2)
    return run


def _copy(run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(run, dst)
    return dst


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


class _Payload:
    """A pickle that creates a file when it is loaded (the way a malicious checkpoint runs code)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


# ------------------------------------------------------------------------------------------------------
# opening a folder runs no code
# ------------------------------------------------------------------------------------------------------
def test_a_checkpoint_with_a_code_running_payload_is_refused_without_running_it(finished_run, tmp_path, capsys):
    run = _copy(finished_run, tmp_path)
    marker = tmp_path / "payload-ran"
    good = load_checkpoint(run / "seed_0" / "checkpoint.pt")
    bad = {"format": 2, "config": good["config"], "seed": 0, "global_step": 0, "run": {}, "trainer": _Payload(marker)}
    torch.save(bad, run / "seed_0" / "checkpoint.pt")
    # the file really is a payload: an unrestricted load runs it
    probe = tmp_path / "probe.pt"
    torch.save({"x": _Payload(tmp_path / "probe-ran")}, probe)
    torch.load(probe, weights_only=False)
    assert (tmp_path / "probe-ran").exists()

    for argv in (["eval", str(run)], ["train", "--resume", str(run), "--no-progress"]):
        code, _, err = _cli(capsys, *argv)
        assert code == 2 and err.count("\n") == 1, err
        assert err.startswith("membench: error:") and "checkpoint.pt was refused" in err
        assert not marker.exists()
    with pytest.raises(CheckpointError, match="refused"):
        load_checkpoint(run / "seed_0" / "checkpoint.pt")
    assert not marker.exists()


def test_checkpoints_and_folders_hold_no_pickled_objects(finished_run):
    torch.load(finished_run / "seed_0" / "checkpoint.pt", weights_only=True)  # loads with the safe unpickler
    payload = load_checkpoint(finished_run / "seed_0" / "checkpoint.pt")
    assert payload["env_state"] is not None and payload["env_state_error"] is None
    assert "envs" not in payload["trainer"]["algo"]  # the PPO state carries no pickled environment


def test_env_state_cannot_name_classes_the_environment_does_not_use():
    envs = make_vector_env("MIKASA/TMazePassive-v0", 2, seed=0)
    envs.reset(seed=0)
    state = envstate.capture(envs)
    key = next(iter(state["attrs"]))  # an attribute the fresh environment has, holding an object of another class
    state["attrs"][key] = {"__object__": "subprocess:Popen", "attrs": {"args": {"__list__": ["true"]}}}
    with pytest.raises(ValueError, match="subprocess:Popen, a class this environment does not use"):
        envstate.restore(make_vector_env("MIKASA/TMazePassive-v0", 2, seed=0), state)


@pytest.fixture
def evil_module(tmp_path, monkeypatch):
    """An importable module that leaves a marker file when it is imported (the way `module:ID` runs code)."""
    name = "membench_evil_probe"
    (tmp_path / f"{name}.py").write_text("import pathlib\npathlib.Path(__file__).with_suffix('.ran').write_text('x')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    yield name, tmp_path / f"{name}.ran"
    sys.modules.pop(name, None)


@pytest.mark.parametrize("entry", ["config.yaml", "plan", "train --config", "sweep spec", "make_vector_env"])
def test_a_module_prefixed_env_string_is_refused_without_importing_the_module(
    finished_run, tmp_path, capsys, evil_module, entry
):
    from membench_agents.errors import ConfigError

    module, marker = evil_module
    env = f"{module}:MIKASA/TMazePassive-v0"
    message = f"environment ID {env!r} names a module to import ({module!r}); membench refuses module prefixes"
    if entry == "make_vector_env":
        with pytest.raises(ConfigError, match=re.escape(message)):
            make_vector_env(env, 2)
    else:
        if entry == "config.yaml":  # run folders read back: a finished one (eval), one not started yet (resume)
            run = _copy(finished_run, tmp_path)
            fresh = tmp_path / "fresh"
            cell.prepare_run(tiny_config("ppo-mlp", iterations=1), fresh)
            for d in (run, fresh):
                cfg = yaml.safe_load((d / "config.yaml").read_text())
                (d / "config.yaml").write_text(yaml.safe_dump({**cfg, "env": env}))
            argvs = [["eval", str(run)], ["train", "--resume", str(fresh), "--no-progress"]]
        elif entry == "plan":
            argvs = [["plan", "--env", env, "--agent", "ppo-lstm"]]
        elif entry == "train --config":
            (tmp_path / "c.yaml").write_text(yaml.safe_dump({"env": env, "agent": "ppo-mlp", "total_steps": 64}))
            argvs = [["train", "--config", str(tmp_path / "c.yaml"), "--run-dir", str(tmp_path / "r")]]
        else:
            (tmp_path / "s.yaml").write_text(
                yaml.safe_dump({"env": env, "designs": [{"design": "vary_length", "agent": "ppo-mlp", "lengths": [2]}]})
            )
            argvs = [["sweep", str(tmp_path / "s.yaml"), "--dry-run"]]
        for argv in argvs:
            code, _, err = _cli(capsys, *argv)
            assert code == 2 and err.count("\n") == 1 and err.startswith("membench: error:"), err
            assert message in err, err
    assert not marker.exists(), "the module named in the env string was imported"


def test_the_membench_envs_prefix_is_dropped_before_any_lookup(capsys):
    cfg = resolve("membench_envs:MIKASA/TMazePassive-v0", "ppo-mlp", steps=64).config
    assert cfg["env"] == "MIKASA/TMazePassive-v0"
    envs = make_vector_env("membench_envs:MIKASA/TMazePassive-v0", 2)
    assert envs.spec is None or envs.spec.id == "MIKASA/TMazePassive-v0"
    envs.close()
    code, out, _ = _cli(capsys, "plan", "--env", "membench_envs:MIKASA/TMazePassive-v0", "--agent", "ppo-lstm")
    assert code == 0 and "MIKASA/TMazePassive-v0: Ξ = {11}" in out


# ------------------------------------------------------------------------------------------------------
# the checkpoint's config is the truth
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "resume", "report-after-resume"])
def test_an_edited_config_yaml_is_one_clear_error(finished_run, tmp_path, capsys, command):
    run = _copy(finished_run, tmp_path)
    results_before = (run / "results.json").read_text()
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["env_kwargs"]["corridor_length"] = 5
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    argv = ["eval", str(run)] if command == "eval" else ["train", "--resume", str(run), "--no-progress"]
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and err.count("\n") == 1, err
    assert "config.yaml differs from the config" in err and "env_kwargs.corridor_length: 5 vs 2" in err
    assert "reproduces" not in out
    assert (run / "results.json").read_text() == results_before  # not relabelled


def _as_if_trained_on(run: Path, device: str) -> None:
    """Relabel every config copy of a run folder (config.yaml, checkpoints, eval.json, results.json) with
    ``device``: on a machine without a GPU this is what a folder trained on one looks like."""
    from membench_agents.runs.checkpoint import save_checkpoint

    cfg = yaml.safe_load((run / "config.yaml").read_text())
    (run / "config.yaml").write_text(yaml.safe_dump({**cfg, "device": device}))
    for ck in run.glob("seed_*/checkpoint.pt"):
        payload = load_checkpoint(ck)
        payload["config"]["device"] = device
        payload["trainer"]["algo"]["rng"]["generator"] = torch.zeros(16, dtype=torch.uint8)  # a CUDA generator's state
        save_checkpoint(ck, {k: v for k, v in payload.items() if k != "format"})
    for js in [*run.glob("seed_*/eval.json"), run / "results.json"]:
        data = json.loads(js.read_text())
        data["config"]["device"] = device
        js.write_text(json.dumps(data))


def test_a_generator_state_of_another_device_is_not_restored_but_warned():
    from membench_agents.algos.common import GeneratorStateWarning, restore_generator

    g = torch.Generator().manual_seed(3)
    state = g.get_state()
    torch.rand(2, generator=g)
    assert restore_generator(g, state) and torch.equal(g.get_state(), state)
    with pytest.warns(GeneratorStateWarning, match="16-byte torch generator state does not fit this cpu generator"):
        assert not restore_generator(g, torch.zeros(16, dtype=torch.uint8))
    assert torch.equal(g.get_state(), state)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the machine has a GPU")
def test_a_run_trained_on_cuda_evaluates_on_a_machine_without_one(finished_run, tmp_path, capsys):
    run = _copy(finished_run, tmp_path)
    stored = json.loads((run / "results.json").read_text())["per_run"]
    _as_if_trained_on(run, "cuda")
    code, out, err = _cli(capsys, "eval", str(run), "--json")
    assert code == 0, err
    assert "the run trained on cuda; this machine has no CUDA GPU, so it is evaluated on the cpu" in err
    result = json.loads(out)
    assert result["per_run"] == pytest.approx(stored) and result["reproduces_results"] is None
    code, out, err = _cli(capsys, "eval", str(run), "--device", "cpu")  # asked for: no note
    assert code == 0 and err == "" and "seed 0:" in out
    code, out, err = _cli(capsys, "eval", str(run), "--device", "gpu")
    assert code == 2 and "device must be cpu, cuda, cuda:N or auto, got 'gpu'" in err


def test_resume_api_refuses_a_config_other_than_the_folders(finished_run, tmp_path):
    run = _copy(finished_run, tmp_path)
    cfg = cell.run_config(run)
    with pytest.raises(RunFolderError, match=r"another config \(total_steps"):
        cell.train(dict(cfg, total_steps=cfg["total_steps"] * 2), run, resume=True, progress=False)


def test_resume_flags_that_change_the_config_are_an_error_and_equal_ones_are_fine(interrupted_run, tmp_path, capsys):
    run = _copy(interrupted_run, tmp_path)
    cfg = cell.run_config(run)
    for flags, key in (
        (["--steps", "99"], "total_steps"),
        (["--seeds", "0,1"], "seeds"),
        (["--set", "ppo.learning_rate=0.5"], "ppo.learning_rate"),
        (["--env", "CartPole-v1"], "env"),
        (["--agent", "ppo-gru"], "agent"),
    ):
        code, _, err = _cli(capsys, "train", "--resume", str(run), *flags)
        assert code == 2 and err.count("\n") == 1 and f"these flags change it ({key}" in err, err
    code, _, err = _cli(capsys, "train", "--resume", str(run), "--config", "x.yaml")
    assert code == 2 and "--config cannot be combined with --resume" in err
    code, _out, err = _cli(
        capsys,
        "train",
        "--resume",
        str(run),
        "--steps",
        str(cfg["total_steps"]),
        "--set",
        f"ppo.learning_rate={cfg['ppo']['learning_rate']}",
        "--no-progress",
    )
    assert code == 0, err


def test_argparse_abbreviations_are_off(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "--env", "MIKASA/TMazePassive-v0", "--agent", "ppo-mlp", "--seed", "5"])
    assert e.value.code == 2 and "unrecognized arguments: --seed" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------------
# one writer per folder; signals; workers die with the parent
# ------------------------------------------------------------------------------------------------------
def test_a_second_writer_on_a_locked_folder_gets_one_clear_error(interrupted_run, tmp_path, capsys):
    run = _copy(interrupted_run, tmp_path)
    with locked(run):
        code, _, err = _cli(capsys, "train", "--resume", str(run), "--no-progress")
        assert code == 2 and err.count("membench: error:") == 1 and "Traceback" not in err
        assert f"{run} is in use by another membench process (pid {os.getpid()})" in err
    with locked(run / "seed_0"), pytest.raises(RunFolderError, match="in use by another membench process"):
        loop.train_seed(cell.run_config(run), 0, run / "seed_0", resume=True)
    assert not (run / "seed_0" / "checkpoint.tmp").exists()
    code, _, err = _cli(capsys, "train", "--resume", str(run), "--no-progress")  # released: resume works
    assert code == 0, err


def test_sigterm_stops_like_ctrl_c_in_process(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=6)
    stop = loop.StopFlag()
    calls = []

    def report(msg):
        calls.append(msg["step"])
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    with stop.installed(), pytest.raises(loop.Interrupted, match="checkpoint saved"):
        loop.train_seed(cfg, 0, tmp_path, should_stop=stop, report=report)
    assert load_checkpoint(tmp_path / "checkpoint.pt")["global_step"] == 2 * 8 * 16
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the previous handler is back


_CELL = ROOT / "membench_agents/src/membench_agents/config/cells/MIKASA/TMazePassiveDense-v0/ppo-mlp.yaml"
_LONG = [
    "--config",
    str(_CELL),
    "--steps",
    str(400 * 8 * 16),
    *LONG_TRAINING_SETS,
    "--no-progress",
]


@pytest.mark.slow
def test_sigterm_to_membench_train_leaves_resumable_checkpoints(tmp_path):
    """The default suite: SIGTERM through the worker pool in test_scorecard.py
    (test_a_stop_with_runs_queued_ends_with_checkpoints_saved), a stopped `membench train` leaving resumable
    checkpoints in test_stops.py (test_a_stop_with_runs_queued_ends_and_leaves_resumable_runs[train-2]) and
    SIGTERM in this process in test_sigterm_stops_like_ctrl_c_in_process above."""
    run = tmp_path / "run"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "membench_agents",
            "train",
            *_LONG,
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--run-dir",
            str(run),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    err = interrupt_once_started(
        proc, run, wait_s=120, marker="checkpoint.pt", settle_s=1.0, sig=signal.SIGTERM, must_start=True
    )
    if proc.returncode == 0:
        pytest.skip("the runs finished before the signal arrived")
    assert proc.returncode == 130, err
    assert "SIGTERM" in err and f"membench train --resume {run}" in err
    steps = [load_checkpoint(run / f"seed_{s}" / "checkpoint.pt")["global_step"] for s in (0, 1)]
    assert all(st > 0 and st % (8 * 16) == 0 for st in steps), steps  # saved when stopped, not only at step 0
    for s in (0, 1):
        kind, payload = loop.resume_point(cell.run_config(run), s, run / f"seed_{s}")
        assert kind == "checkpoint" and payload["env_state"] is not None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_with_the_parent_killed_during_start_up(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "membench_agents",
            "train",
            *_LONG,
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(lambda: len(worker_processes(proc.pid)[0]) == 2, 120), "no workers started"
        workers, servers = worker_processes(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert wait_for(lambda: not any(alive(w) for w in workers), 60), "workers outlived the parent"
    assert wait_for(lambda: not any(alive(s) for s in servers), 10), "the worker server outlived the parent"


# ------------------------------------------------------------------------------------------------------
# broken files: one line each
# ------------------------------------------------------------------------------------------------------
def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


_CORRUPTIONS = {
    "config-empty": ("finished", "config.yaml", lambda p: p.write_text(""), "config.yaml is empty"),
    "config-invalid": ("finished", "config.yaml", lambda p: p.write_text("env: [unclosed\n"), "is not valid YAML"),
    "config-partial": (
        "finished",
        "config.yaml",
        lambda p: p.write_text("env: CartPole-v1\n"),
        "is not a complete run config",
    ),
    "config-missing": ("finished", "config.yaml", lambda p: p.unlink(), "not a membench run folder"),
    "checkpoint-truncated": ("finished", "seed_0/checkpoint.pt", _truncate, "checkpoint.pt cannot be read"),
    "checkpoint-garbage": (
        "finished",
        "seed_0/checkpoint.pt",
        lambda p: p.write_bytes(b"\x00junk" * 50),
        "checkpoint.pt cannot be read",
    ),
    "checkpoint-empty": (
        "finished",
        "seed_0/checkpoint.pt",
        lambda p: p.write_bytes(b""),
        "checkpoint.pt cannot be read",
    ),
    "checkpoint-foreign": (
        "finished",
        "seed_0/checkpoint.pt",
        lambda p: torch.save({"weights": torch.zeros(2)}, p),
        "is not a membench checkpoint",
    ),
    "eval-truncated": ("finished", "seed_0/eval.json", _truncate, "eval.json is not valid JSON"),
    "eval-empty-object": (
        "finished",
        "seed_0/eval.json",
        lambda p: p.write_text("{}"),
        "eval.json is not a complete final evaluation of a seed",
    ),
    "checkpoint-deleted-mid-run": (
        "interrupted",
        "seed_0/checkpoint.pt",
        lambda p: p.unlink(),
        "checkpoint.pt is missing but",
    ),
}


@pytest.mark.parametrize("case", sorted(_CORRUPTIONS))
@pytest.mark.parametrize("command", ["eval", "resume"])
def test_each_corrupted_file_is_one_error_line_naming_it(
    finished_run, interrupted_run, tmp_path, capsys, case, command
):
    which, rel, corrupt, expected = _CORRUPTIONS[case]
    run = _copy(finished_run if which == "finished" else interrupted_run, tmp_path)
    corrupt(run / rel)
    if command == "eval" and (which == "interrupted" or rel.endswith("eval.json")):
        pytest.skip("eval reads neither eval.json nor an unfinished seed's logs")
    argv = ["eval", str(run)] if command == "eval" else ["train", "--resume", str(run), "--no-progress"]
    code, _, err = _cli(capsys, *argv)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("membench: error:"), err
    assert expected in err and Path(rel).name in err, err


def _first_array(tree):
    """The first saved numpy array (``{"__ndarray__": ...}``) of a raw checkpoint tree."""
    stack = [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "__ndarray__" in x:
                return x
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    raise AssertionError("no saved array")


def _first_param(raw) -> str:
    return next(iter(raw["trainer"]["algo"]["policy"]))


#: Crafted plain-data checkpoints (each loads with the safe unpickler) and what the one error line says.
_CRAFTED = {
    "object-dtype": (lambda raw: _first_array(raw).update(dtype="|O"), "holds Python objects"),
    "wrong-shape": (
        lambda raw: _first_array(raw).update(shape=[*_first_array(raw)["shape"], 7]),
        "cannot be an array of shape",
    ),
    "missing-key": (lambda raw: _first_array(raw).pop("shape"), "is a saved numpy value with the keys"),
    "dtype-not-a-string": (lambda raw: _first_array(raw).update(dtype=5), "5 is not a numpy dtype string"),
    "data-not-bytes": (lambda raw: _first_array(raw).update(__ndarray__=[1, 2]), "the array's data must be bytes"),
    "scalar-overflow": (
        lambda raw: raw["run"].update(x={"__npscalar__": 10**40, "dtype": "<i8"}),
        "is not a <i8 scalar",
    ),
    "run-not-a-mapping": (lambda raw: raw.update(run=[]), "run must be a mapping"),
    "seed-a-string": (lambda raw: raw.update(seed="0"), "seed must be an integer"),
    "weight-of-another-shape": (
        lambda raw: raw["trainer"]["algo"]["policy"].update({_first_param(raw): torch.zeros(3)}),
        "the saved trainer state does not fit this agent (RuntimeError",
    ),
    "weight-missing": (
        lambda raw: raw["trainer"]["algo"]["policy"].pop(_first_param(raw)),
        "the saved trainer state does not fit this agent (RuntimeError",
    ),
    "trainer-key-missing": (
        lambda raw: raw["trainer"].pop("algo"),
        "the saved trainer state does not fit this agent (KeyError",
    ),
}


@pytest.mark.parametrize("case", sorted(_CRAFTED))
@pytest.mark.parametrize("command", ["eval", "resume"])
def test_a_crafted_plain_data_checkpoint_is_one_error_line(
    finished_run, interrupted_run, tmp_path, capsys, case, command
):
    edit, expected = _CRAFTED[case]
    run = _copy(finished_run if command == "eval" else interrupted_run, tmp_path)
    ck = run / "seed_0" / "checkpoint.pt"
    raw = torch.load(ck, weights_only=True)
    edit(raw)
    torch.save(raw, ck)
    torch.load(ck, weights_only=True)  # still plain data: the safe unpickler takes it
    argv = ["eval", str(run)] if command == "eval" else ["train", "--resume", str(run), "--no-progress"]
    code, _, err = _cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("membench: error:") and lines[:-1] in ([], [f"resuming {run}"]), err
    assert expected in err and "checkpoint.pt" in err, err


def test_from_plain_refuses_what_to_plain_cannot_write():
    from membench_agents.runs.checkpoint import from_plain, to_plain

    saved = to_plain({"a": [np.arange(6, dtype=np.int16).reshape(2, 3)], "s": np.float64(0.5)})
    back = from_plain(saved)
    assert back["a"][0].tolist() == [[0, 1, 2], [3, 4, 5]] and type(back["s"]) is np.float64
    bad = {"a": [dict(saved["a"][0], dtype="|O")]}
    with pytest.raises(CheckpointError, match=r"checkpoint\['a'\]\[0\]: dtype '\|O' holds Python objects"):
        from_plain(bad)


_EDITS = {  # key, the value as another type, what the error line says
    "episodes-float": (("eval", "episodes"), float, "eval.episodes: {v}.0 vs {v}"),
    "deterministic-int": (("eval", "deterministic"), int, "eval.deterministic must be a boolean"),
    "steps-float": (("total_steps",), float, "total_steps: {v}.0 vs {v}"),
}


@pytest.mark.parametrize("edit", sorted(_EDITS))
@pytest.mark.parametrize("command", ["eval", "resume", "resume-before-any-checkpoint"])
def test_an_edited_config_yaml_is_compared_type_strictly(finished_run, tmp_path, capsys, edit, command):
    keys, convert, expected = _EDITS[edit]
    if command == "resume-before-any-checkpoint":
        run = tmp_path / "fresh"
        cell.prepare_run(tiny_config("ppo-mlp", iterations=4), run)
    else:
        run = _copy(finished_run, tmp_path)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    node = cfg
    for k in keys[:-1]:
        node = node[k]
    old = node[keys[-1]]
    node[keys[-1]] = convert(old)
    assert node[keys[-1]] == old and type(node[keys[-1]]) is not type(old)  # equal, of another type
    expected = expected.format(v=old)
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    argv = ["eval", str(run)] if command == "eval" else ["train", "--resume", str(run), "--no-progress"]
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and err.startswith("membench: error:"), err
    assert "config.yaml" in err and expected in err, err


def test_resume_flags_and_stored_results_are_compared_type_strictly(finished_run, tmp_path, capsys):
    run = _copy(finished_run, tmp_path)
    code, _, err = _cli(capsys, "train", "--resume", str(run), "--set", "eval.episodes=20.0")
    assert code == 2 and "these flags change it (eval.episodes: 20 vs 20.0)" in err, err
    results = json.loads((run / "results.json").read_text())
    results["config"]["eval"]["deterministic"] = 1
    (run / "results.json").write_text(json.dumps(results))
    code, out, err = _cli(capsys, "eval", str(run))
    assert code == 2 and "results.json was written for another config" in err and "reproduces" not in out, err


@pytest.mark.parametrize("content", ["{}", '{"mean": ', "[1, 2]"])
def test_eval_with_a_broken_results_json_and_report_skips_it(finished_run, tmp_path, capsys, content):
    good = _copy(finished_run, tmp_path)
    bad = tmp_path / "tree" / "bad"
    shutil.copytree(good, bad)
    shutil.copytree(good, tmp_path / "tree" / "good")
    (bad / "results.json").write_text(content)
    code, _, err = _cli(capsys, "eval", str(bad))
    assert code == 2 and err.count("\n") == 1 and "results.json" in err, err
    code, out, err = _cli(capsys, "report", str(tmp_path / "tree"), "--out", str(tmp_path / "r.png"))
    assert code == 0, err
    assert len([line for line in out.splitlines() if "ppo-mlp" in line]) == 1  # the good folder's row
    assert "skipped 1 unreadable run folder" in err and str(bad / "results.json") in err


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--episodes", "0"], "--episodes must be a positive integer, got 0"),
        (["--episodes", "10000000000"], "--episodes must be at most 1000000, got 10000000000"),
        (["--seed-start", "-5"], "--seed-start must be a non-negative integer, got -5"),
        (["--seed-start", str(2**32 - 5)], "--seed-start must leave the episode seeds"),
    ],
)
def test_eval_flags_out_of_range_are_one_error_line(finished_run, capsys, flags, message):
    code, out, err = _cli(capsys, "eval", str(finished_run), *flags)
    assert code == 2 and err.count("\n") == 1 and err.startswith("membench: error:") and message in err, err
    assert out == ""


def test_report_out_that_cannot_be_written_is_one_error_line(finished_run, tmp_path, capsys):
    (tmp_path / "a-file").write_text("x")
    for out, message in (
        (tmp_path / "a-file" / "r.png", "cannot write the plot"),
        (tmp_path / "r.txt", "--out must name an image file ending in one of"),
        (tmp_path / "no-extension", "--out must name an image file ending in one of"),
        (tmp_path, "--out must name an image file"),
    ):
        code, _, err = _cli(capsys, "report", str(finished_run), "--out", str(out))
        assert code == 2 and err.count("\n") == 1 and err.startswith("membench: error:") and message in err, err
    assert not (tmp_path / "no-extension.png").exists()  # matplotlib would have added .png to the printed path


def test_report_aggregate_skips_a_run_with_a_nan_score_and_lists_it(finished_run, tmp_path, capsys):
    shutil.copytree(finished_run, tmp_path / "tree" / "good")
    shutil.copytree(finished_run, tmp_path / "tree" / "nan")
    res = json.loads((tmp_path / "tree" / "nan" / "results.json").read_text())
    res["per_run"], res["mean"] = [float("nan")], float("nan")
    (tmp_path / "tree" / "nan" / "results.json").write_text(json.dumps(res))
    code, out, err = _cli(
        capsys, "report", str(tmp_path / "tree"), "--aggregate", "--reps", "50", "--out", str(tmp_path / "r.png")
    )
    assert code == 0, err
    assert "IQM [95% CI]" in out and (tmp_path / "r.aggregate.png").is_file()
    assert "skipped 1 unreadable run folder" in err and "holds a score that is not a finite number" in err
    assert len([line for line in out.splitlines() if "ppo-mlp" in line and "(n = 1)" in line]) == 1  # the good run


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda r: r.update(protocol=[]), "is not in membench's format (TypeError"),
        (lambda r: r.update(per_run=r["per_run"] * 5), "does not add up"),
        (lambda r: r.update(seeds="abc"), "does not add up"),
    ],
)
def test_report_skips_a_results_json_whose_fields_do_not_fit(finished_run, tmp_path, capsys, edit, message):
    shutil.copytree(finished_run, tmp_path / "tree" / "good")
    shutil.copytree(finished_run, tmp_path / "tree" / "bad")
    res = json.loads((tmp_path / "tree" / "bad" / "results.json").read_text())
    edit(res)
    (tmp_path / "tree" / "bad" / "results.json").write_text(json.dumps(res))
    code, _, err = _cli(
        capsys, "report", str(tmp_path / "tree"), "--aggregate", "--reps", "20", "--out", str(tmp_path / "r.png")
    )
    assert code == 0 and "skipped 1 unreadable run folder" in err and message in err, err


def test_report_aggregate_reps_are_bounded_before_anything_runs(finished_run, tmp_path, capsys):
    code, out, err = _cli(
        capsys, "report", str(finished_run), "--aggregate", "--reps", "100000000", "--out", str(tmp_path / "r.png")
    )
    assert code == 2 and out == "" and "--reps must be between 1 and 100000" in err, err
    code, _, err = _cli(capsys, "report", str(finished_run), "--aggregate", "--bootstrap-seed", "-1")
    assert code == 2 and "--bootstrap-seed must be >= 0" in err, err


def test_report_skips_a_folder_with_a_truncated_metrics_log(finished_run, tmp_path, capsys):
    shutil.copytree(finished_run, tmp_path / "tree" / "a")
    shutil.copytree(finished_run, tmp_path / "tree" / "b")
    log = tmp_path / "tree" / "b" / "seed_0" / "metrics.jsonl"
    log.write_text(log.read_text()[:-40])  # the last line cut in the middle
    code, _, err = _cli(capsys, "report", str(tmp_path / "tree"), "--out", str(tmp_path / "r.png"))
    assert code == 0 and "skipped 1" in err and "metrics.jsonl line" in err, err


# ------------------------------------------------------------------------------------------------------
# TensorBoard, environments
# ------------------------------------------------------------------------------------------------------
def _tb_steps(d: Path) -> dict[str, list[int]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(d))
    acc.Reload()
    return {tag: [e.step for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_tensorboard_log_of_an_interrupted_and_resumed_run_has_every_step(tmp_path):
    cfg = tiny_config("ppo-mlp", iterations=6, **{"eval.every_steps": 256})
    loop.train_seed(cfg, 0, tmp_path / "a")
    with pytest.raises(loop.Interrupted):
        loop.train_seed(cfg, 0, tmp_path / "b", stop_after_iterations=3)
    loop.train_seed(cfg, 0, tmp_path / "b", resume=True)
    a, b = _tb_steps(tmp_path / "a"), _tb_steps(tmp_path / "b")
    assert a["charts/SPS"] == [128 * i for i in range(1, 7)]
    assert a == b


_ENV_IDS = [
    "MIKASA/TMazePassive-v0",
    "MIKASA/MemoryLength-v0",
    "MIKASA/MemoryCards-v0",
    "CartPole-v1",
    "FrozenLake-v1",
    "MIKASA/MiniGridMemoryS7-v0",
    "POPGym/RepeatPreviousEasy-v0",
    # the POPGym wrapper's per-family state: a mine hit, arm statistics, cards seen, the maze generator; HigherLower
    # holds a dict keyed by numpy strings
    "POPGym/MineSweeperEasy-v0",
    "POPGym/HigherLowerEasy-v0",
    "POPGym/MultiarmedBanditEasy-v0",
    "POPGym/ConcentrationEasy-v0",
    "POPGym/LabyrinthEscapeEasy-v0",
    # the Atari emulator's state is saved through StoriEnv's external-state methods
    "STORI/Breakout-Type1-v0",
    "STORI/Breakout-5C-v0",  # Boxing-Type3: a run resumes exactly in test_resume.py's test_a_stori_run_resumes_exactly
    # Numpad's ball lives in MuJoCo's MjData, saved through Numpad's external-state methods
    "MIKASA/NumpadContinuous-v0",
    "MIKASA/NumpadDiscrete-v0",
    # endless Mystery Path keeps its fall spots in a set
    "MIKASA/MortarMayhem-v0",
    "MIKASA/MysteryPathGrid-v0",
    "MIKASA/EndlessMysteryPath-v0",
    "MIKASA/SearingSpotlights-v0",
    "MIKASA/EndlessSearingSpotlights-v0",
    "MIKASA/BalletEasy-v0",
    "MIKASA/PassiveVisualMatch-v0",
    # Craftax's batched jax state is saved through CrafterCore's external-state methods (jax compiles for minutes)
    pytest.param("POBAX/Crafter-v0", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("env_id", _ENV_IDS)
def test_env_state_round_trips_as_plain_data_and_continues_exactly(env_id):
    try:
        envs = [make_vector_env(env_id, 3, seed=0) for _ in range(2)]
    except (ImportError, gym.error.Error) as e:
        pytest.skip(f"{env_id} is not available: {e}")
    a, b = envs
    a.reset(seed=0)
    b.reset(seed=0)
    space = a.action_space
    space.seed(1)
    actions = [space.sample() for _ in range(120)]
    for t in range(60):
        a.step(actions[t])
    buf = io.BytesIO()
    torch.save(envstate.capture(a), buf)
    buf.seek(0)
    envstate.restore(b, torch.load(buf, weights_only=True))  # plain data only
    for t in range(60, 120):
        ra, rb = a.step(actions[t]), b.step(actions[t])
        for x, y in zip(ra[:4], rb[:4], strict=True):
            if isinstance(x, dict):
                assert all(np.array_equal(x[k], y[k]) for k in x), t
            else:
                assert np.array_equal(np.asarray(x), np.asarray(y)), t


class _LockedEnv(gym.Env):
    """An env holding state that is not plain data (a lock stands in for a simulator handle)."""

    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        import threading

        self.handle = threading.Lock()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 1.0, False, self.np_random.random() < 0.2, {}


class _Phase(enum.Enum):
    CUE = 1
    RECALL = 2


def test_numpy_scalar_dict_keys_are_saved_as_their_python_values_and_other_objects_refused():
    state = {np.str_("a"): 1, np.int64(3): 2, (np.str_("b"), 4): 3, None: 4}
    saved = envstate.capture(state)
    assert list(saved["__dict__"]) == ["a", 3, ("b", 4), None]
    assert all(type(k) in (str, int, tuple, type(None)) for k in saved["__dict__"])
    with pytest.raises(envstate.NotCapturable, match="has a key 'x' of type _Label"):
        envstate.capture({_Label("x"): 1})


class _Label(str):
    """A str subclass: its value is not plain data a checkpoint can read back."""


class _ImmutableStateEnv(gym.Env):
    """An env whose state lives in immutable values: bytes, frozenset, tuple, range, complex, an enum member,
    a numpy float scalar."""

    observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self._set(0)

    def _set(self, t: int) -> None:
        self.tape = bytes([t % 256, 7])
        self.visited = frozenset(range(t))
        self.position = (t, -t)
        self.window = range(t, t + 6, 2)  # a step other than 1: each of start, stop, step is kept
        self.phase_shift = complex(t, 1)
        self.phase = _Phase.RECALL if t % 2 else _Phase.CUE
        self.score = np.float64(t / 3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._set(0)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        t = self.position[0] + 1 + int(action)
        self._set(t)
        return np.full(1, self.score, np.float32), float(self.tape[0]), False, False, {}


def _immutable_state(envs) -> list:
    env = envs.envs[0].unwrapped
    return [env.tape, env.visited, env.position, env.window, env.phase_shift, env.phase, env.score]


def _round_trip(state):
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def test_env_state_in_immutable_values_is_saved_as_data_and_restored():
    if "membench-test/ImmutableState-v0" not in gym.registry:
        gym.register("membench-test/ImmutableState-v0", entry_point=_ImmutableStateEnv)
    a, b = (make_vector_env("membench-test/ImmutableState-v0", 1, seed=0) for _ in range(2))
    a.reset(seed=0)
    b.reset(seed=0)
    for action in (1, 0, 1, 1, 0):
        a.step(np.array([action]))
    saved = _immutable_state(a)
    assert saved[0] == bytes([8, 7]) and len(saved[1]) == 8 and saved[5] is _Phase.CUE
    envstate.restore(b, _round_trip(envstate.capture(a)))  # plain data only
    assert _immutable_state(b) == saved and type(_immutable_state(b)[-1]) is np.float64


def test_env_state_that_cannot_be_saved_is_an_error_at_checkpoint_time_naming_its_path():
    if "membench-test/ImmutableState-v0" not in gym.registry:
        gym.register("membench-test/ImmutableState-v0", entry_point=_ImmutableStateEnv)
    envs = make_vector_env("membench-test/ImmutableState-v0", 1, seed=0)
    envs.reset(seed=0)
    envs.envs[0].unwrapped.tape = _Label("abc")
    with pytest.raises(envstate.NotCapturable, match=r"envs\.envs\[0\]\..*\.tape is a .*_Label \(a subclass of str\)"):
        envstate.capture(envs)


def test_env_state_restore_assigns_only_attributes_the_fresh_env_has():
    a, b = (make_vector_env("MIKASA/TMazePassive-v0", 2, seed=0) for _ in range(2))
    a.reset(seed=0)
    b.reset(seed=0)
    a.injected = [1, 2]
    with pytest.raises(ValueError, match=r"envs: the checkpoint sets 'injected', which this .* does not have"):
        envstate.restore(b, _round_trip(envstate.capture(a)))
    assert not hasattr(b, "injected")
    del a.injected
    state = envstate.capture(a)
    state["attrs"]["num_envs"] = {"__list__": 5}  # a node of the wrong shape
    with pytest.raises(ValueError, match="malformed"):
        envstate.restore(b, state)


def test_an_env_that_cannot_be_saved_warns_at_the_start_and_refuses_resume(tmp_path, capsys):
    if "membench-test/Locked-v0" not in gym.registry:
        gym.register("membench-test/Locked-v0", entry_point=_LockedEnv)
    cfg = resolve(
        "membench-test/Locked-v0",
        "ppo-mlp",
        steps=4 * 8 * 16,
        seeds=1,
        overrides=["ppo.num_envs=8", "ppo.num_steps=16", "ppo.num_minibatches=2", "eval.episodes=4"],
    ).config
    with pytest.raises(loop.Interrupted):
        loop.train_seed(cfg, 0, tmp_path, stop_after_iterations=1)
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "cannot be saved as plain data" in err and "handle" in err
    with pytest.raises(CheckpointError, match=r"cannot be resumed exactly: .*handle.*start a new run"):
        loop.train_seed(cfg, 0, tmp_path, resume=True)


def test_cartpole_trains_a_few_hundred_steps_and_resumes_exactly(tmp_path):
    over = ["ppo.num_envs=4", "ppo.num_steps=32", "ppo.num_minibatches=2", "eval.episodes=3", "ppo.deterministic=true"]
    cfg = resolve("CartPole-v1", "ppo-mlp", steps=3 * 128, seeds=1, overrides=over).config
    res = cell.train(cfg, tmp_path / "a", progress=False)
    assert res["metric"] == "return" and res["runs"][0]["global_step"] == 384
    with pytest.raises(loop.Interrupted):
        loop.train_seed(cfg, 0, tmp_path / "b", stop_after_iterations=1)
    loop.train_seed(cfg, 0, tmp_path / "b", resume=True)
    a = json.loads((tmp_path / "a" / "seed_0" / "eval.json").read_text())
    b = json.loads((tmp_path / "b" / "eval.json").read_text())
    assert a["eval"] == b["eval"]


def test_an_id_that_cannot_train_leaves_no_folder(tmp_path, capsys):
    from tests.agents._runs_helpers import register_test_envs

    register_test_envs()
    run = tmp_path / "never"
    code, _, err = _cli(
        capsys,
        "train",
        "--env",
        "membench-test/TupleAction-v0",
        "--agent",
        "ppo-mlp",
        "--steps",
        "64",
        "--run-dir",
        str(run),
    )
    assert code == 2 and "action space" in err
    assert not run.exists()


def test_unpickling_is_gone_from_the_package():
    src = Path(__file__).resolve().parents[2] / "membench_agents" / "src" / "membench_agents"
    for f in src.rglob("*.py"):
        text = f.read_text()
        assert "pickle.loads" not in text and "weights_only=False" not in text, f


# ------------------------------------------------------------------------------------------------------
# names read back from sweep.yaml / bench.yaml: the rule of new names, so none reaches outside its folder
# ------------------------------------------------------------------------------------------------------
def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _crafted_sweep(tmp_path: Path, finished_run: Path, name: str) -> tuple[Path, Path]:
    """A sweep folder whose sweep.yaml names one cell ``name``, beside a finished run ``victim``."""
    from membench_agents.ltm import sweep

    victim = tmp_path / "victim"
    shutil.copytree(finished_run, victim)
    sweep_dir = tmp_path / "sweep"
    (sweep_dir / "cells").mkdir(parents=True)
    spec = sweep.parse_spec(
        {"env": "MIKASA/TMazePassive-v0", "designs": [{"design": "vary_length", "agent": "ppo-mlp", "lengths": [2]}]},
        "s.yaml",
    )
    name = str(victim) if name == "<absolute>" else name
    cell = {"name": name, "agent": "ppo-mlp", "length": 2, "K": None, "designs": [0]}
    (sweep_dir / "sweep.yaml").write_text(yaml.safe_dump({"spec": sweep._spec_dict(spec), "cells": [cell]}))
    return sweep_dir, victim, name


@pytest.mark.parametrize("name", ["../../victim", "<absolute>", "a\x00b", ".."])
def test_a_sweep_cell_name_read_back_cannot_reach_outside_the_sweep(finished_run, tmp_path, capsys, name):
    sweep_dir, victim, name = _crafted_sweep(tmp_path, finished_run, name)
    assert (sweep_dir / "cells" / "../../victim" / "results.json").is_file()  # the path would reach the victim
    before = _snapshot(victim)
    code, _, err = _cli(capsys, "sweep", "--resume", str(sweep_dir), "--no-progress")
    assert code == 2 and err.count("\n") == 1 and err.startswith("membench: error:"), err
    assert "sweep.yaml: cells[0].name must be a folder name" in err and repr(name) in err
    assert _snapshot(victim) == before  # neither locked nor rewritten


@pytest.mark.parametrize(
    "cells, message",
    [
        (["../victim"], "cells[0] must be a folder name, one path component"),
        (["<absolute>"], "cells[0] must be a folder name, one path component"),
        (["ok", ".hidden"], "cells[1] must be a folder name, a visible folder name"),
        (["a\nb"], "free of control characters"),
    ],
)
def test_a_bench_cell_name_read_back_cannot_reach_outside_the_bench(finished_run, tmp_path, capsys, cells, message):
    victim = tmp_path / "victim"
    shutil.copytree(finished_run, victim)
    bench = tmp_path / "bench"
    bench.mkdir()
    cells = [str(victim) if c == "<absolute>" else c for c in cells]
    (bench / "bench.yaml").write_text(yaml.safe_dump({"cells": cells, "title": None, "expect": {}}))
    before = _snapshot(victim)
    code, _, err = _cli(capsys, "bench", "--resume", str(bench), "--no-progress")
    assert code == 2 and err.count("\n") == 1 and err.startswith("membench: error:"), err
    assert message in err and "bench.yaml" in err
    assert _snapshot(victim) == before
