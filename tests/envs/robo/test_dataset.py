"""Offline datasets: `membench-envs collect` writes ManiSkill's HDF5 + JSON pair, the loader reads it back as torch
sequences, an interrupted collection resumes with every episode exactly once, and bad input is one clear error.

Episodes are cut to a few steps (``episode_steps``) to keep the default suite fast; the expert cannot finish the
task in them, which the only-success tests use on purpose. Every test that collects holds the cached recording env
(:func:`recorder`): ``collect`` builds and closes its own env, and without another rendering env alive SAPIEN would
start its renderer again for each collection.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest
import torch

pytest.importorskip("mani_skill")

from membench_envs.cli import main as envs_cli
from membench_envs.robo import collect as collect_module
from membench_envs.robo.collect import (
    RECORD_KWARGS,
    CollectionError,
    DatasetLockedError,
    collect,
    dataset_paths,
)
from membench_envs.robo.dataset import EpisodeDataset, read_episode

pytestmark = [pytest.mark.robo, pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")]

SHORT = 6  # steps per episode in these tests
TASKS = {"MIKASA/RememberColor3-v0": (1, torch.int64), "MIKASA/InterceptSlow-v0": (3, torch.float32)}


@pytest.fixture
def recorder(robo_env):
    """The RememberColor3 env as ``collect`` records it (a rendering env: it keeps the renderer alive)."""
    return robo_env("MIKASA/RememberColor3-v0", **RECORD_KWARGS, episode_steps=SHORT)


@pytest.fixture(scope="module")
def small(tmp_path_factory, robo_env):
    """2 episodes of each of 2 tasks (an integer and a float oracle)."""
    robo_env("MIKASA/RememberColor3-v0", **RECORD_KWARGS, episode_steps=SHORT)  # the renderer stays alive
    out = tmp_path_factory.mktemp("datasets")
    for env_id in TASKS:
        collect(env_id, 2, out, episode_steps=SHORT, progress=False)
    return out


@pytest.mark.parametrize("env_id", list(TASKS))
def test_writer_and_loader_round_trip_with_the_documented_shapes(small, env_id):
    h5_path, json_path, parts = dataset_paths(small, env_id)
    assert h5_path.is_file() and json_path.is_file() and not parts.exists()
    assert not h5_path.with_suffix(".lock").exists()  # a finished collection leaves no lock file
    index = json.loads(json_path.read_text())
    assert index["env_info"]["env_id"] == env_id and index["env_info"]["max_episode_steps"] == SHORT
    assert index["env_info"]["env_kwargs"]["control_mode"] == "pd_ee_delta_pose"
    assert [e["episode_seed"] for e in index["episodes"]] == [0, 1]
    k, oracle_dtype = TASKS[env_id]
    with h5py.File(h5_path, "r") as f:
        assert sorted(f) == ["traj_0", "traj_1"]
        g = f["traj_0"]
        assert g["obs/rgb"].shape == (SHORT + 1, 128, 128, 6) and g["obs/rgb"].dtype == np.uint8
        assert g["obs/joints"].shape == (SHORT + 1, 25) and g["obs/oracle"].shape == (SHORT + 1, k)
        assert g["actions"].shape == (SHORT, 7) and g["rewards"].shape == (SHORT,)
        done = g["done"][()]
        assert done[-1] and not done[:-1].any() and g["truncated"][-1]
        assert index["episodes"][0]["return"] == pytest.approx(float(g["rewards"][()].sum()))
        assert g["obs/rgb"][0].std() > 0  # a rendered image, not zeros
    episode = EpisodeDataset(h5_path)
    assert len(episode) == 2
    item = episode[1]
    assert set(item) == {"rgb", "joints", "oracle", "action", "reward", "success", "done"}
    assert item["rgb"].shape == (SHORT, 128, 128, 6) and item["rgb"].dtype == torch.uint8
    assert item["oracle"].shape == (SHORT, k) and item["oracle"].dtype == oracle_dtype
    assert item["action"].shape == (SHORT, 7) and item["reward"].dtype == torch.float32
    assert item["done"].dtype == torch.bool and bool(item["done"][-1])
    np.testing.assert_array_equal(item["joints"].numpy(), read_episode(h5_path, 1)["joints"])
    windows = EpisodeDataset(h5_path, seq_len=4, stride=2, channels_first=True)
    assert len(windows) == 2 * 2  # starts 0, 2 in each 6-step episode (the second ends on its last step)
    w = windows[3]  # episode 1, steps 2..5
    assert w["rgb"].shape == (4, 6, 128, 128)
    np.testing.assert_array_equal(w["action"].numpy(), read_episode(h5_path, 1)["action"][2:6])
    batch = next(iter(torch.utils.data.DataLoader(windows, batch_size=4)))
    assert batch["joints"].shape == (4, 4, 25)


def test_the_episodes_replay_their_seed(small, recorder):
    """The stored first observation is what reset(seed) shows, and the two seeds differ."""
    h5_path, _, _ = dataset_paths(small, "MIKASA/RememberColor3-v0")
    env = recorder
    with h5py.File(h5_path, "r") as f:
        for i in (0, 1):
            obs, _ = env.reset(seed=i)
            np.testing.assert_array_equal(f[f"traj_{i}/obs/rgb"][0], obs["rgb"])
            np.testing.assert_allclose(f[f"traj_{i}/obs/joints"][0], obs["joints"], atol=1e-6)
        assert not np.array_equal(f["traj_0/obs/rgb"][0], f["traj_1/obs/rgb"][0])


def _collect_command(env_id, out) -> list[str]:
    """`membench-envs collect` of 3 short episodes of ``env_id`` into ``out``, in a new Python process."""
    return [
        sys.executable,
        "-m",
        "membench_envs.cli",
        "collect",
        env_id,
        "--episodes",
        "3",
        "--out",
        str(out),
        "--set",
        f"episode_steps={SHORT}",
        "--no-progress",
    ]


class _Killed(BaseException):
    """Stands in for SIGKILL inside this process (no ``except`` of the collector catches it)."""


def test_a_collection_killed_midway_and_restarted_holds_each_episode_once(tmp_path, capsys, monkeypatch, recorder):
    """The collection dies while writing seed 1's part, leaving what SIGKILL leaves: a half-written temporary file and
    the lock file (of a dead process); the same call then keeps seed 0, plays seeds 1 and 2, and a complete dataset
    is not collected again. The real SIGKILL of a running ``membench-envs collect`` is the slow
    ``test_a_real_sigkill_midway_and_the_same_command_continues``."""
    env_id = "MIKASA/RememberColor3-v0"
    h5_path, json_path, parts = dataset_paths(tmp_path, env_id)
    write = collect_module._write_h5

    def dies_in_the_second_write(path, groups):
        if path.name == "ep_1.h5":
            path.with_name(path.name + ".tmp").write_bytes(b"half an HDF5 file")
            raise _Killed
        write(path, groups)

    with monkeypatch.context() as m:
        m.setattr(collect_module, "_write_h5", dies_in_the_second_write)
        with pytest.raises(_Killed):
            collect(env_id, 3, tmp_path, episode_steps=SHORT, progress=False)
    h5_path.with_suffix(".lock").write_text("pid 999999\n")  # SIGKILL skips its removal; no process holds it
    assert not h5_path.exists()
    assert sorted(p.name for p in parts.glob("ep_*")) == ["ep_0.h5", "ep_1.h5.tmp"]
    capsys.readouterr()
    collect(env_id, 3, tmp_path, episode_steps=SHORT, progress=False)
    assert "resuming: 1 episodes kept from 1 seeds already tried" in capsys.readouterr().err
    _check_the_three_episodes(h5_path, json_path, parts)
    collect(env_id, 3, tmp_path, episode_steps=SHORT, progress=False)  # complete: nothing more is collected
    assert len(json.loads(json_path.read_text())["episodes"]) == 3


def _check_the_three_episodes(h5_path, json_path, parts) -> None:
    """Seeds 0, 1, 2 once each, in order, with distinct first images; the parts are gone."""
    index = json.loads(json_path.read_text())
    assert [e["episode_seed"] for e in index["episodes"]] == [0, 1, 2]
    with h5py.File(h5_path, "r") as f:
        assert sorted(f) == ["traj_0", "traj_1", "traj_2"]
        firsts = [f[f"traj_{i}/obs/rgb"][0] for i in range(3)]
    assert not any(np.array_equal(firsts[a], firsts[b]) for a, b in ((0, 1), (0, 2), (1, 2)))
    assert not parts.exists()


@pytest.mark.slow
def test_a_real_sigkill_midway_and_the_same_command_continues(tmp_path, capsys):
    """A running ``membench-envs collect`` killed with SIGKILL after its first episode (a new Python process: ~20 s
    of import and renderer start). The default suite guards the same resume with
    ``test_a_collection_killed_midway_and_restarted_holds_each_episode_once`` (the kill simulated in-process)."""
    env_id = "MIKASA/RememberColor3-v0"
    h5_path, json_path, parts = dataset_paths(tmp_path, env_id)
    argv = _collect_command(env_id, tmp_path)
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    try:
        deadline = time.monotonic() + 240
        while not (parts / "ep_0.h5").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (parts / "ep_0.h5").exists(), "the first episode was never written"
        os.kill(proc.pid, signal.SIGKILL)  # no clean-up of any kind
    finally:
        proc.wait(timeout=60)
    assert not h5_path.exists()
    before = sorted(p.name for p in parts.glob("ep_*.h5"))
    assert before and len(before) < 3, before
    collect(env_id, 3, tmp_path, episode_steps=SHORT, progress=False)
    assert f"resuming: {len(before)} episodes kept from {len(before)} seeds already tried" in capsys.readouterr().err
    _check_the_three_episodes(h5_path, json_path, parts)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_says_what_was_kept_and_the_same_command_continues(tmp_path, sig):
    """SIGTERM or Ctrl-C mid-collection: one message (episodes kept, where, the next seed) and no traceback, exit
    status 143 (killed by SIGTERM) or 130, no lock left; while it ran, a second collector of the same dataset was
    refused at once."""
    env_id = "MIKASA/RememberColor3-v0"
    h5_path, json_path, parts = dataset_paths(tmp_path, env_id)
    argv = _collect_command(env_id, tmp_path)
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 240
        while not (parts / "ep_0.h5").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (parts / "ep_0.h5").exists(), log.read_text()
        with pytest.raises(
            DatasetLockedError,
            match=rf"RememberColor3-v0.h5 is being collected by another process "
            rf"\(pid {proc.pid}, lock .*RememberColor3-v0.lock\)",
        ):
            collect(env_id, 3, tmp_path, episode_steps=SHORT, progress=False)
        os.kill(proc.pid, sig)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = log.read_text()
    assert code in ((-signal.SIGTERM, 128 + signal.SIGTERM) if sig == signal.SIGTERM else (130,)), (code, err)
    assert "Traceback" not in err, err
    kept = sorted(p.name for p in parts.glob("ep_*.h5"))
    line = next(x for x in err.splitlines() if f"stopped by {'SIGTERM' if sig == signal.SIGTERM else 'Ctrl-C'}" in x)
    assert f"{len(kept)} of 3 episodes kept in {parts} (seeds 0..{len(kept) - 1} done)" in line, err
    assert f"Run the same command again to continue from seed {len(kept)}." in line
    assert not h5_path.with_suffix(".lock").exists() and not h5_path.exists()
    collect(env_id, 3, tmp_path, episode_steps=SHORT, progress=False)
    assert [e["episode_seed"] for e in json.loads(json_path.read_text())["episodes"]] == [0, 1, 2]


def test_a_second_collector_of_the_same_dataset_is_one_clear_error(tmp_path, capsys, recorder):
    """The lock is held with fcntl.flock (as a running collector holds it); collectors of other tasks may share the
    folder."""
    import fcntl

    env_id = "MIKASA/RememberColor3-v0"
    h5_path, _, parts = dataset_paths(tmp_path, env_id)
    with open(h5_path.with_suffix(".lock"), "w") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("pid 4242\n")
        held.flush()
        with pytest.raises(DatasetLockedError, match=r"is being collected by another process \(pid 4242"):
            collect(env_id, 1, tmp_path, episode_steps=SHORT, progress=False)
        assert not parts.exists()  # nothing written
        code = envs_cli(
            [
                "collect",
                env_id,
                "--episodes",
                "1",
                "--out",
                str(tmp_path),
                "--set",
                f"episode_steps={SHORT}",
                "--no-progress",
            ]
        )
        err = capsys.readouterr().err
        assert code == 1 and "is being collected by another process (pid 4242" in err and err.count("\n") == 1, err
        with pytest.raises(CollectionError, match="only 0 of 1 successful"):  # another task: not locked
            collect(
                "MIKASA/RememberShape3-v0",
                1,
                tmp_path,
                only_success=True,
                max_attempts=1,
                episode_steps=SHORT,
                progress=False,
            )


def test_only_success_skips_failed_seeds_and_says_when_too_few_succeed(tmp_path, capsys, recorder):
    """In 6 steps the RememberColor3 expert never reaches its cube (the choice opens at step 10)."""
    env_id = "MIKASA/RememberColor3-v0"
    with pytest.raises(CollectionError, match=r"only 0 of 1 successful episodes in 2 seeds"):
        collect(env_id, 1, tmp_path, only_success=True, max_attempts=2, episode_steps=SHORT, progress=False)
    _, json_path, parts = dataset_paths(tmp_path, env_id)
    assert sorted(p.name for p in parts.glob("ep_*")) == ["ep_0.rejected", "ep_1.rejected"]
    assert not json_path.exists()
    code = envs_cli(
        [
            "collect",
            env_id,
            "--episodes",
            "1",
            "--out",
            str(tmp_path),
            "--only-success",
            "--max-attempts",
            "2",
            "--set",
            f"episode_steps={SHORT}",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "only 0 of 1 successful episodes in 2 seeds" in err  # resumed: no seed tried again
    assert "resuming: 0 episodes kept from 2 seeds already tried" in err


def test_a_restart_with_other_settings_is_refused(tmp_path, recorder):
    env_id = "MIKASA/RememberColor3-v0"
    with pytest.raises(CollectionError):
        collect(env_id, 1, tmp_path, only_success=True, max_attempts=1, episode_steps=SHORT, progress=False)
    with pytest.raises(ValueError, match=r"holds an interrupted collection with other settings .*only_success"):
        collect(env_id, 1, tmp_path, only_success=False, episode_steps=SHORT, progress=False)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["collect", "MIKASA/TMazePassive-v0", "--episodes", "1"], "collect records MIKASA-Robo tasks"),
        (["collect", "MIKASA/RememberColor3-v0", "--episodes", "0"], "episodes must be >= 1, got 0"),
        (
            ["collect", "MIKASA/RememberColor3-v0", "--episodes", "1", "--set", "obs_variant=full"],
            "obs_variant cannot be changed: datasets are recorded with",
        ),
        (["collect", "MIKASA/RememberColor3-v0", "--episodes", "1", "--set", "episode_steps"], "--set takes KEY=VALUE"),
    ],
)
def test_bad_collect_arguments_are_one_clear_error(argv, message, tmp_path, capsys):
    assert envs_cli([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_the_loader_names_a_missing_index_and_a_foreign_file(small, tmp_path):
    h5_path, _json_path, _ = dataset_paths(small, "MIKASA/RememberColor3-v0")
    lone = tmp_path / "RememberColor3-v0.h5"
    lone.write_bytes(h5_path.read_bytes())
    with pytest.raises(FileNotFoundError, match=r"RememberColor3-v0.json does not exist"):
        EpisodeDataset(lone)
    (tmp_path / "RememberColor3-v0.json").write_text("{}")
    with pytest.raises(ValueError, match="is not a dataset index"):
        EpisodeDataset(lone)
    with pytest.raises(ValueError, match="unknown keys \\['pixels'\\]"):
        EpisodeDataset(h5_path, keys=("pixels",))


def test_the_scripted_experts_refuse_a_controller_they_do_not_drive(robo_env):
    from membench_envs.robo.experts import scripted_expert

    with pytest.raises(ValueError, match="act in pd_ee_delta_pose; this env uses 'pd_joint_delta_pos'"):
        scripted_expert(robo_env("MIKASA/RememberColor3-v0", obs_variant="full"))


@pytest.mark.parametrize(
    "env_id, expert",
    [
        ("MIKASA/RememberShape3-v0", "ReachPolicy"),
        ("MIKASA/ShellGamePush-v0", "ShellPolicy"),
        ("MIKASA/SeqOfColors3-v0", "TouchSequencePolicy"),
        ("MIKASA/InterceptGrabFast-v0", "TrackPolicy"),
        ("MIKASA/RotateStrictPos-v0", "RotatePolicy"),
        ("MIKASA/TakeItBack-v0", "CarryPolicy"),
    ],
)
def test_every_family_has_its_scripted_expert(robo_env, env_id, expert):
    from membench_envs.robo.experts import scripted_expert

    env = robo_env(env_id, obs_variant="full", control_mode="pd_ee_delta_pose")
    assert type(scripted_expert(env)).__name__ == expert
