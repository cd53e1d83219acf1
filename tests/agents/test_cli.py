"""The `membench` CLI end to end on tiny budgets: train, eval, report, bench, and one clear error per bad input."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.agents._runs_helpers import ROOT, assert_same_params, final_params, history, membench

LADDER = ROOT / "membench_agents/src/membench_agents/config/cells/MIKASA/TMazePassiveDense-v0"
TINY = [
    "--steps",
    "1024",
    "--set",
    "ppo.num_envs=8",
    "--set",
    "ppo.num_steps=16",
    "--set",
    "ppo.hidden_size=16",
    "--set",
    "ppo.num_minibatches=2",
    "--set",
    "eval.episodes=20",
    "--set",
    "eval.every_steps=256",
    "--no-progress",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """`membench train` of a tiny ppo-lstm run with 2 seeds in 2 worker processes (deterministic algorithms: the
    same runs trained in this process must be equal)."""
    run = tmp_path_factory.mktemp("cli") / "run"
    args = ["--config", str(LADDER / "ppo-lstm.yaml"), "--seeds", "2", "--jobs", "2", "--run-dir", str(run)]
    out = membench("train", *args, *TINY, "--set", "ppo.deterministic=true")
    assert out.returncode == 0, out.stderr
    return run, out


def test_train_writes_every_promised_file(trained):
    run, out = trained
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    assert cfg["agent"] == "ppo-lstm" and cfg["seeds"] == [0, 1]
    assert cfg["env"] == "MIKASA/TMazePassiveDense-v0" and cfg["obs_variant"] == "partial"
    assert cfg["ppo"]["num_envs"] == 8 and cfg["total_steps"] == 1024
    for s in (0, 1):
        d = run / f"seed_{s}"
        events = list(d.glob("events.out.tfevents.*"))
        assert events and events[0].stat().st_size > 0
        assert (d / "checkpoint.pt").is_file() and (d / "metrics.jsonl").is_file() and (d / "eval.json").is_file()
    res = json.loads((run / "results.json").read_text())
    assert {"protocol", "versions", "git_commit", "mean", "sem", "per_run", "config"} <= set(res)
    assert res["protocol"]["episodes_per_run"] == 20 and res["protocol"]["n_runs"] == 2
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert res["git_commit"] == head
    assert (run / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ppo-lstm" in out.stdout and "mean ± SEM" in out.stdout and "success_rate" in out.stdout
    # --no-progress: plain lines, one per evaluation (every 256 steps) of each seed
    evals = [line for line in out.stderr.splitlines() if "  evaluation: success " in line]
    assert {line.split("]")[0] for line in evals} == {"[ppo-lstm/s0", "[ppo-lstm/s1"} and len(evals) == 8, out.stderr


def test_worker_processes_give_the_same_runs_as_one_process(trained, tmp_path):
    from membench_agents.runs import cell

    run, _ = trained
    inline = tmp_path / "inline"
    res = cell.train(cell.run_config(run), inline, workers=1, progress=False)
    assert res["per_run"] == json.loads((run / "results.json").read_text())["per_run"]
    for s in (0, 1):
        assert_same_params(final_params(run / f"seed_{s}"), final_params(inline / f"seed_{s}"))
        assert history(run / f"seed_{s}") == history(inline / f"seed_{s}")


def test_tensorboard_log_has_returns_success_losses_and_sps(trained):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(trained[0] / "seed_0"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in (
        "charts/episodic_return",
        "charts/success_rate",
        "charts/SPS",
        "losses/policy_loss",
        "losses/value_loss",
        "losses/entropy",
        "eval/success_rate",
        "final/success_rate",
    ):
        assert tag in tags, (tag, tags)
    assert [e.step for e in acc.Scalars("charts/SPS")] == [128 * i for i in range(1, 9)]


def test_eval_reloads_checkpoints_and_reproduces_the_results(trained):
    run, _ = trained
    out = membench("eval", str(run), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    res = json.loads((run / "results.json").read_text())
    assert got["reproduces_results"] is True
    assert got["per_run"] == res["per_run"] and got["mean"] == res["mean"] and got["sem"] == res["sem"]
    out = membench("eval", str(run))
    assert out.returncode == 0 and "reproduces results.json: yes" in out.stdout


def test_eval_video_writes_the_episodes_and_says_where(trained, tmp_path):
    from moviepy import VideoFileClip

    run, _ = trained
    out = membench("eval", str(run), "--episodes", "2", "--video", "1", "--video-dir", str(tmp_path / "v"), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["videos"] == [str(tmp_path / "v" / f"seed_{s}" / "episode_0.mp4") for s in (0, 1)]
    clip = VideoFileClip(got["videos"][0])
    assert clip.n_frames == 12  # the reset frame and one per step of the T-Maze's 11 steps
    clip.close()
    out = membench("eval", str(run), "--video", "0")
    assert out.returncode == 2 and "--video must be a number of episodes >= 1, got 0" in out.stderr


def test_report_prints_the_table_and_writes_one_plot(trained, tmp_path):
    run, _ = trained
    other = tmp_path / "runs" / "mlp"
    out = membench(
        "train", "--config", str(LADDER / "ppo-mlp.oracle.yaml"), "--seeds", "1", "--run-dir", str(other), *TINY
    )
    assert out.returncode == 0, out.stderr
    (tmp_path / "runs" / "lstm").symlink_to(run, target_is_directory=True)
    out = membench("report", str(tmp_path / "runs"), "--out", str(tmp_path / "cmp.png"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any("ppo-lstm" in line and "partial" in line for line in lines)
    assert any("ppo-mlp" in line and "oracle" in line for line in lines)
    assert (tmp_path / "cmp.png").stat().st_size > 10_000
    md = membench("report", str(tmp_path / "runs"), "--markdown", "--out", str(tmp_path / "cmp2.png")).stdout
    assert md.startswith("| agent (variant) |")


def test_bench_runs_a_spec_prints_the_table_checks_the_ladder_and_plots(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "title": "tiny ladder",
                "jobs": 1,  # the spec's count is used (automatic: 2 here); workers: `trained`
                "cells": [str(LADDER / "ppo-mlp.yaml"), str(LADDER / "ppo-mlp.oracle.yaml")],
                "expect": {"ppo-mlp": [0.0, 1.0], "ppo-mlp.oracle": [2.0, 3.0]},  # the second cannot be met
            }
        )
    )
    out = membench(
        "bench", "--spec", str(spec), "--steps", "1024", "--seeds", "1", "--out", str(tmp_path / "o"), "--no-progress"
    )
    assert out.returncode == 3, out.stderr  # an expectation not met is a failure exit code
    assert "2 training runs, 1 at a time" in out.stderr
    assert "expected ladder" in out.stdout and "NOT MET" in out.stdout and " ok" in out.stdout
    bench = next((tmp_path / "o" / "bench").iterdir())
    assert (bench / "comparison.png").is_file() and (bench / "table.md").is_file()
    assert {p.name for p in bench.iterdir() if p.is_dir()} == {"ppo-mlp", "ppo-mlp.oracle"}
    # --resume finishes what is missing (here: one seed's final evaluation) and rebuilds the outputs
    (bench / "ppo-mlp" / "seed_0" / "eval.json").unlink()
    (bench / "ppo-mlp" / "results.json").unlink()
    before = json.loads((bench / "ppo-mlp.oracle" / "results.json").read_text())["per_run"]
    out = membench("bench", "--resume", str(bench), "--no-progress", "--jobs", "1")  # automatic: 2 workers
    assert out.returncode == 3 and "ppo-mlp" in out.stdout, out.stderr
    assert (bench / "ppo-mlp" / "results.json").is_file()
    assert json.loads((bench / "ppo-mlp.oracle" / "results.json").read_text())["per_run"] == before


def test_bench_one_cell_uses_the_agent_defaults_on_an_id_without_config(tmp_path):
    out = membench(
        "bench",
        "--env",
        "MIKASA/TMazePassiveL5-v0",
        "--agent",
        "sb3-ppo",
        "--steps",
        "512",
        "--seeds",
        "1",
        "--out",
        str(tmp_path),
        "--no-progress",
    )
    assert out.returncode == 0, out.stderr
    assert "membench_agents/config/defaults/sb3.yaml" in out.stderr and "sb3-ppo" in out.stdout


def test_unknown_agent_and_env_are_one_clear_error():
    out = membench("train", "--env", "MIKASA/TMazePassive-v0", "--agent", "ppo-lstn")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "unknown agent 'ppo-lstn'" in out.stderr and "Did you mean ppo-lstm" in out.stderr
    out = membench("bench", "--env", "MIKASA/TMazePasive-v0", "--agent", "ppo-lstm")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "Did you mean" in out.stderr and "MIKASA/TMazePassive-v0" in out.stderr
    out = membench("train", "--env", "MIKASA/TMazePassive-v0", "--agent", "ppo-mlp", "--jobs", "-1")
    assert out.returncode == 2 and "argument --jobs: expected an integer >= 0 (0: automatic), got -1" in out.stderr


def test_obs_variant_is_any_variant_of_the_id_and_a_wrong_one_is_one_clear_error():
    from membench_agents import cli

    # the robot tasks' rgb variant is a variant of their IDs (argparse's fixed choices refused it)
    for command in ("train", "plan", "bench"):
        args = cli.build_parser().parse_args(
            [command, "--env", "MIKASA/RememberColor9-v0", "--agent", "ppo-lstm", "--obs-variant", "rgb"]
        )
        assert args.obs_variant == "rgb"
    out = membench("train", "--env", "MIKASA/TMazePassive-v0", "--agent", "ppo-mlp", "--obs-variant", "orcale")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "the arguments (obs_variant)" in out.stderr and "Did you mean oracle?" in out.stderr


def test_missing_config_value_is_one_clear_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("agent: ppo-mlp\ntotal_steps: 100\n")
    out = membench("train", "--config", str(cfg))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "missing config value 'env'" in out.stderr and "--env" in out.stderr


def test_resume_of_a_folder_that_is_not_a_run_is_one_clear_error(tmp_path):
    out = membench("train", "--resume", str(tmp_path))
    assert out.returncode == 2 and "not a membench run folder" in out.stderr


def test_module_entry_point_and_list():
    out = membench("list", fresh=True)  # the console script
    assert out.returncode == 0 and "sb3-recurrentppo" in out.stdout
    out = subprocess.run(
        [__import__("sys").executable, "-m", "membench_agents", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0 and "train" in out.stdout and "report" in out.stdout
