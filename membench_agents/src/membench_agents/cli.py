"""``membench``: train, evaluate and report memory agents on membench environment IDs.

    membench train --env MIKASA/TMazePassiveDense-v0 --agent ppo-lstm  # 3 seeds x 400k steps: success 1.0, ~1 min
    membench train --resume runs/MIKASA/TMazePassiveDense-v0/ppo-lstm/<stamp>   # after Ctrl-C or a crash
    membench eval runs/MIKASA/TMazePassiveDense-v0/ppo-lstm/<stamp> --video 1   # re-evaluate; one video per seed
    membench report runs/                                                       # table + comparison plot
    membench bench                                                              # the T-Maze memory ladder
    membench bench --env POPGym/RepeatPreviousEasy-v0 --agent ppo-gru           # one cell (`make bench`)
    membench certify --env MIKASA/TMazePassiveDense-v0                          # is it a memory test? gap + verdict
    membench bench --suite POPGym --ids 'POPGym/Repeat*' --steps 100000         # suite run + scorecard
    membench report runs/scorecard/<stamp> --scorecard                          # rebuild a suite run's scorecard
    membench list                                                               # agents and tuned cell configs
    membench plan --env MIKASA/TMazePassiveDense-v0 --agent ppo-lstm            # LTM/STM regime (Algorithm 1)
    membench sweep experiments/sweeps/tmaze-memory.yaml                         # the memory paper's designs
    membench report runs/sweeps/... --aggregate                                 # + IQM, bootstrap CIs, profiles
    membench report runs/certify/<stamp> --html cert.html                       # one offline HTML page

A cell's config is resolved by one rule (train, bench, sweep and the Python API alike): the agent's shipped
defaults, then the tuned cell config shipped for that ID and agent where one exists (`membench list`; --config
FILE replaces it), then the flags; the run's first line names each layer.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from membench_agents.algos.registry import AGENTS
from membench_agents.errors import ConfigError

DEFAULT_OUT = "runs"


def _count(text: str) -> int:
    """An argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0 (0: automatic), got {value}")
    return value


def _add_set(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=help)


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        help="a cell config file of your own (instead of the tuned cell config the ID and agent "
        "resolve to: membench list)",
    )


def _add_obs_variant(p: argparse.ArgumentParser, help: str) -> None:
    # no argparse choices: the variants are the ID's (partial, oracle, full; the robot tasks add rgb), and the
    # config check names them, with the closest match, for a variant the ID does not have
    p.add_argument("--obs-variant", metavar="VARIANT", help=help)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", help="number of runs (3), a list (0,1,2) or a range (0-4)")
    p.add_argument("--steps", type=int, help="training budget per run, in environment steps")
    p.add_argument(
        "--jobs",
        type=_count,
        default=0,
        help="runs trained in parallel processes, 1 torch thread each (default 0: min(CPUs, runs))",
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray", "slurm"),
        default="local",
        help="where the runs train: local (this machine's worker processes, the default), ray (each run a task on "
        "a Ray cluster; extra: membench-agents[ray]) or slurm (each run a Slurm job; extra: membench-agents[slurm]); "
        "on a cluster, run folders must be on storage every node sees",
    )
    p.add_argument(
        "--address",
        help="the Ray cluster for --executor ray, host:port, or auto for the one `ray start` runs on this machine "
        "(default: RAY_ADDRESS if set, else a new local cluster)",
    )
    p.add_argument(
        "--slurm",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Slurm job parameter for --executor slurm, in submitit's names (slurm_partition=gpu, timeout_min=600, "
        "mem_gb=16, slurm_account=..., cluster=local to try the submissions on this machine); repeatable",
    )
    p.add_argument("--out", help=f"root folder for new runs (default: {DEFAULT_OUT}/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--device", help="cpu, cuda or auto (default: the config's, cpu)")
    p.add_argument(
        "--track",
        action="store_true",
        help="mirror every run's scalars and config to Weights & Biases (extra: membench-agents[wandb]; "
        "WANDB_MODE=offline keeps them local)",
    )
    p.add_argument("--wandb-project", default="membench", help="W&B project for --track (default: membench)")
    p.add_argument("--wandb-entity", help="W&B entity (team or user) for --track (default: your W&B default)")


CHECK_HELP = (
    "SUMMARY is a committed scorecard.json (or its folder) of a suite run at the same budget. Per task and agent "
    "it reports the new mean of the protocol metric, the committed mean with its 95%% interval and a verdict: "
    "inside, outside (the new mean lies outside the committed interval), missing (committed, not run now) or new; "
    "writes check.json and check.md beside scorecard.json. Exit status 1 when any task is outside, else 0; 2 for "
    "a summary that is not a scorecard or was scored at another budget (steps, seeds, evaluation protocol)"
)


def build_parser() -> argparse.ArgumentParser:
    # allow_abbrev=False everywhere: `--seed 5` is an error, not `--seeds 5`
    parser = argparse.ArgumentParser(
        prog="membench", description=__doc__, allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train one cell (env, agent) for every seed, then evaluate", allow_abbrev=False)
    p.add_argument("--env", help="environment ID")
    p.add_argument("--agent", help=f"one of {', '.join(AGENTS)}")
    _add_config(p)
    _add_obs_variant(p, "observation variant: partial (default), oracle, full; the robot tasks also rgb")
    _add_set(p, "override a config value, e.g. --set ppo.learning_rate=1e-3 (repeatable)")
    p.add_argument("--run-dir", help="write the run here (default: <out>/<env-id>/<agent>[.<variant>]/<time>)")
    p.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue an interrupted run from its checkpoints, with its own config (flags that would "
        "change it are an error)",
    )
    _add_common(p)

    p = sub.add_parser(
        "eval", help="reload the checkpoints of a run and evaluate them with the protocol", allow_abbrev=False
    )
    p.add_argument("run_dir")
    p.add_argument("--episodes", type=int, help="episodes per run, 1 to 1000000 (default: the run's protocol)")
    p.add_argument(
        "--seed-start",
        type=int,
        help="first episode seed, >= 0; the episode seeds must stay below 2**32 (default: the run's protocol)",
    )
    p.add_argument("--stochastic", action="store_true", help="sample actions instead of the deterministic policy")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--device",
        help="cpu, cuda, cuda:N or auto (default: the run's device; cpu where the run "
        "trained on cuda and this machine has no CUDA GPU)",
    )
    p.add_argument(
        "--video",
        type=int,
        metavar="N",
        help="also write the protocol's first N evaluation episodes of each seed as MP4 videos (needs "
        "membench-agents[video])",
    )
    p.add_argument("--video-dir", help="where the videos go (default: <run_dir>/videos)")

    p = sub.add_parser(
        "report",
        help="print the table of run folders and write one comparison plot; --html: one offline HTML page of a "
        "certificate, scorecard, sweep, bench or run folders",
        allow_abbrev=False,
    )
    p.add_argument("paths", nargs="+", help="run folders or folders holding runs")
    p.add_argument(
        "--out", help="plot file, an image by its extension: .png, .pdf, .svg, ... (default: <path>/report.png)"
    )
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--title")
    p.add_argument(
        "--aggregate",
        action="store_true",
        help="also the aggregate metrics across tasks: IQM and mean with stratified-bootstrap confidence "
        "intervals, and performance profiles (table + <plot>.aggregate.png)",
    )
    p.add_argument(
        "--reps", type=int, default=2000, help="bootstrap resamples for --aggregate, 1 to 100000 (default 2000)"
    )
    p.add_argument("--confidence", type=float, default=0.95, help="interval level for --aggregate (default 0.95)")
    p.add_argument("--bootstrap-seed", type=int, default=0, help="resampling seed for --aggregate, >= 0 (default 0)")
    p.add_argument(
        "--pool",
        action="store_true",
        help="--aggregate: pool runs of one agent on one task even where their configs differ (budget, "
        "hyperparameters); without it they count as different algorithms",
    )
    p.add_argument(
        "--scorecard",
        action="store_true",
        help="rebuild the scorecard (scorecard.json, .md, .png) of a finished suite-run folder (membench bench "
        "--suite), with --reps, --confidence and --bootstrap-seed",
    )
    p.add_argument(
        "--reference",
        nargs="+",
        action="extend",
        metavar="CERT_DIR",
        help="--scorecard: normalise by these `membench certify` folders instead of the run's own references",
    )
    p.add_argument("--check", metavar="SUMMARY", help="--scorecard: then compare it with SUMMARY; " + CHECK_HELP)
    p.add_argument(
        "--html",
        metavar="OUT",
        help="write one static, offline HTML page (OUT.html: tables, embedded plots, versions, configs) of a "
        "certificate, a suite scorecard, a sweep or a bench folder, or of run folders; the kind is told by the "
        "files the folder holds (--title sets the page's title)",
    )

    p = sub.add_parser(
        "plan", help="LTM/STM regime of an agent on a task: Ξ, K, K_eff, Eq 6 (Algorithm 1)", allow_abbrev=False
    )
    p.add_argument("--env", required=True, help="environment ID (a membench ID: Ξ comes from the catalogue)")
    p.add_argument("--agent", required=True, help=f"one of {', '.join(AGENTS)}")
    p.add_argument("--K", type=int, help="the agent's context length, where its config does not set it")
    p.add_argument("--xi", help="correlation horizons MIN[,MAX], where membench cannot derive them")
    _add_config(p)
    _add_obs_variant(p, "observation variant, as for train")
    _add_set(p, "override a config value as for train, e.g. --set env_kwargs.corridor_length=30")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")

    p = sub.add_parser(
        "sweep",
        help="run the memory paper's designs from a sweep spec (vary K, vary ξ, length "
        "generalisation) and tabulate them with their regimes",
        allow_abbrev=False,
    )
    p.add_argument("spec", nargs="?", help="sweep spec (YAML; see experiments/sweeps/)")
    p.add_argument("--resume", metavar="SWEEP_DIR", help="continue an interrupted sweep")
    p.add_argument("--dry-run", action="store_true", help="print the cells and their regimes, train nothing")
    _add_common(p)

    p = sub.add_parser(
        "bench",
        help="`make bench`: the T-Maze memory ladder, one (env, agent) cell, or a suite run with its scorecard",
        description="Without --suite/--ids/--memory-type: the T-Maze memory ladder, the ladder's cells on --env, or "
        "one (--env, --agent) cell. With them (a suite run): one cell per (ID, agent), each resolved as `membench "
        "train` resolves it, trained in <out>/scorecard/<time>/; when the runs are done it writes scorecard.json, "
        "scorecard.md and scorecard.png: per task the protocol metric and the normalised score (x - floor) / "
        "(ceiling - floor), floor and ceiling from a --reference certificate, else the metric's natural range "
        "(success rate 0..1, POPGym return -1..1), else the task stays raw; across tasks per agent the IQM and "
        "mean with stratified-bootstrap intervals, performance profiles, and breakdowns per memory type and suite "
        "(docs/methodology.md, 'Suite scorecards'). Cells of one agent at different budgets are never pooled.",
        allow_abbrev=False,
    )
    p.add_argument("--env", help="environment ID (default: the ladder's)")
    p.add_argument(
        "--agent",
        action="append",
        help="agent (default: the ladder's three cells); for a suite run one or more, repeatable or a comma list "
        "(default: the ladder's agents on partial, ppo-mlp and ppo-lstm)",
    )
    p.add_argument("--spec", help="bench spec file (default: the T-Maze ladder, membench_agents/config/ladder.yaml)")
    p.add_argument("--suite", help="a suite run over the IDs of this catalogue suite (membench-envs list)")
    p.add_argument(
        "--ids",
        metavar="PATTERN[,PATTERN]",
        help="a suite run over the IDs matching these fnmatch globs (e.g. 'MIKASA/TMaze*'), within --suite if given",
    )
    p.add_argument("--memory-type", help="a suite run over the IDs of this MIKASA memory type, within --suite if given")
    _add_obs_variant(p, "observation variant of a suite run's or one cell's agents, as for train (default partial)")
    _add_set(p, "override a config value of every cell, as for train (repeatable)")
    p.add_argument(
        "--skip-missing",
        action="store_true",
        help="a suite run skips the IDs whose extra is not installed (named, and listed in the scorecard) instead "
        "of stopping",
    )
    p.add_argument(
        "--reference",
        nargs="+",
        action="extend",
        default=[],
        metavar="CERT_DIR",
        help="a suite run normalises each task by these `membench certify` folders' floor and ceiling",
    )
    p.add_argument(
        "--certify",
        action="store_true",
        help="a suite run also trains each ID's memory-improvability ceiling (the floor agent ppo-mlp on oracle, "
        "else full) and writes certificates.json/.md/.png: per ID the certificate of `membench certify` from the "
        "run's ppo-mlp and ppo-lstm cells and that ceiling (no run trained twice); the scorecard normalises each "
        "task by its own certificate",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="a suite run: list the cells and their budgets (configs resolved and checked), train nothing",
    )
    p.add_argument(
        "--check",
        metavar="SUMMARY",
        help="a suite run (new or resumed): when its scorecard is written, compare it with SUMMARY; " + CHECK_HELP,
    )
    p.add_argument("--resume", metavar="BENCH_DIR", help="continue an interrupted bench or suite run")
    _add_common(p)

    p = sub.add_parser(
        "certify",
        help="the memory-improvability certificate of a task: floor, memory and ceiling with intervals, the gap "
        "and a verdict",
        description="Train, at one budget and on one set of seeds, a memoryless agent on `partial` (floor), an "
        "agent with memory on `partial` (memory) and the memoryless agent on `oracle` or `full` (ceiling); report "
        "each with its 95% stratified-bootstrap interval over the seeds, the gap (ceiling - floor), the share of "
        "it the memory agent closes, and a verdict: memory-improvable at this budget (the gap's interval lies "
        "above 0), not improvable at this budget (its upper bound is <= --tolerance), else undetermined. Writes "
        "<out>/certify/<time>/ with certificate.json and certificate.png (docs/methodology.md).",
        allow_abbrev=False,
    )
    p.add_argument("--env", help="environment ID")
    p.add_argument("--floor", help="the memoryless agent of the floor and the ceiling (default ppo-mlp)")
    p.add_argument("--memory", help="the agent with memory (default ppo-lstm)")
    p.add_argument(
        "--ceiling-variant",
        choices=["oracle", "full"],
        help="the ceiling's observation variant (default: oracle where the ID has it, else full)",
    )
    p.add_argument(
        "--spec",
        help="a bench spec of three cells, floor, memory and ceiling in that order (per-agent hyperparameters; "
        "e.g. experiments/bench/pobax-tmaze10.yaml), instead of --env/--floor/--memory/--ceiling-variant",
    )
    _add_set(p, "override a config value of all three cells, e.g. --set ppo.learning_rate=1e-3 (repeatable)")
    p.add_argument(
        "--tolerance",
        type=float,
        help="'not improvable' when the gap's upper bound is <= this, in units of the task's score (default 0.05)",
    )
    p.add_argument("--resume", metavar="CERTIFY_DIR", help="continue an interrupted certificate")
    _add_common(p)

    sub.add_parser("list", help="agents and the tuned cell configs shipped with membench", allow_abbrev=False)
    return parser


def _tracking(args):
    """The --track settings (None without --track); one clear error when wandb is not installed."""
    if not args.track:
        return None
    from membench_agents.runs.tracking import Tracking, check_available

    check_available()
    return Tracking(project=args.wandb_project, entity=args.wandb_entity)


def _print_budget_notes(cfgs: list[dict[str, Any]]) -> None:
    """Say it when a run will not train what its config seems to ask (rounded budget, no update at all)."""
    from membench_agents.algos.trainer import budget_notes

    for cfg in cfgs:
        for note in budget_notes(cfg):
            print(f"note: {note}", file=sys.stderr)


def _workers(requested: int, n_jobs: int) -> int:
    """The worker processes for ``n_jobs`` runs: ``--jobs`` (0: one per CPU, at most one per run)."""
    if requested > 0:
        return requested
    return max(1, min(os.cpu_count() or 1, n_jobs))


def _executor(args):
    """The executor of ``--executor``/``--address`` (one clear error for a backend whose extra is missing)."""
    from membench_agents.runs.executors import Executor

    return Executor(args.executor, args.address, tuple(args.slurm))


def _at_a_time(args, n_jobs: int) -> tuple[int, str]:
    """``workers`` for :func:`~membench_agents.runs.workers.run_jobs` and the line that says where the runs train."""
    if args.executor == "local":
        n = _workers(args.jobs, n_jobs)
        return n, f"{n_jobs} training runs, {n} at a time"
    limit = f"{args.jobs} at a time" if args.jobs else "as many at a time as the cluster schedules"
    if args.executor == "slurm":
        return args.jobs, f"{n_jobs} training runs as Slurm jobs, {limit}"
    where = args.address or os.environ.get("RAY_ADDRESS") or "a new local cluster"
    return args.jobs, f"{n_jobs} training runs on Ray ({where}), {limit}"


def _flags_given(args, names: tuple[str, ...]) -> list[str]:
    """The flags among ``names`` (argparse dests) given on the command line, as typed: ``--run-dir``."""
    return [f"--{k.replace('_', '-')}" for k in names if getattr(args, k) is not None]


# ------------------------------------------------------------------------------------------------------
def _resume_config(args, run_dir: Path) -> dict[str, Any]:
    """The config of the run to resume; flags given with --resume must agree with it (else one error)."""
    from membench_agents.config.resolve import parse_override
    from membench_agents.config.schema import parse_seeds
    from membench_agents.runs import cell
    from membench_agents.runs.folder import diff_text, same_config

    fixed = [
        flag
        for flag, value in (("--config", args.config), ("--run-dir", args.run_dir), ("--out", args.out))
        if value is not None
    ]
    if fixed:
        raise ConfigError(
            f"{', '.join(fixed)} cannot be combined with --resume: the run folder's config and place "
            "are fixed; start a new run instead"
        )
    cfg = cell.run_config(run_dir)
    wanted = copy.deepcopy(cfg)
    for key, value in (
        ("env", args.env),
        ("agent", args.agent),
        ("obs_variant", args.obs_variant),
        ("total_steps", args.steps),
        ("device", args.device),
    ):
        if value is not None:
            wanted[key] = value
    if args.seeds is not None:
        wanted["seeds"] = parse_seeds(args.seeds)
    for item in args.set:
        keys, value = parse_override(item)
        node = wanted
        for k in keys[:-1]:
            if not isinstance(node.get(k), dict):
                node[k] = {}
            node = node[k]
        node[keys[-1]] = value
    if not same_config(wanted, cfg):
        raise ConfigError(
            f"--resume continues {run_dir} with the config it was trained with, and these flags "
            f"change it ({diff_text(cfg, wanted)}); drop them, or start a new run"
        )
    cell.check_resumable(cfg, run_dir)
    return cfg


def cmd_train(args) -> int:
    from membench_agents.config.resolve import resolve
    from membench_agents.runs import cell, folder, workers

    tracking = _tracking(args)
    executor = _executor(args)
    if args.resume:
        run_dir = Path(args.resume)
        cfg = _resume_config(args, run_dir)
        print(f"resuming {run_dir}", file=sys.stderr)
    else:
        res = resolve(
            args.env,
            args.agent,
            config_file=args.config,
            steps=args.steps,
            seeds=args.seeds,
            obs_variant=args.obs_variant,
            overrides=args.set,
            device=args.device,
        )
        cfg = res.config
        run_dir = Path(args.run_dir) if args.run_dir else folder.new_run_dir(args.out or DEFAULT_OUT, cfg)
        if (run_dir / "config.yaml").exists():
            raise ConfigError(f"{run_dir} already holds a run; use --resume {run_dir} or another --run-dir")
        print(f"run folder: {run_dir}\nconfig: {' <- '.join(res.sources)}", file=sys.stderr)
        _print_budget_notes([cfg])
    try:
        results = cell.train(
            cfg,
            run_dir,
            workers=_at_a_time(args, len(cfg["seeds"]))[0],
            resume=bool(args.resume),
            progress=not args.no_progress,
            tracking=tracking,
            executor=executor,
        )
    except KeyboardInterrupt:
        print(f"\ninterrupted: checkpoints saved; continue with\n  membench train --resume {run_dir}", file=sys.stderr)
        return 130
    except workers.RunFailed as e:
        e.resume = f"membench train --resume {run_dir}"
        raise
    from membench_agents.analysis.report import plot_run, table

    plot = plot_run(run_dir)
    print(table([run_dir]))
    print(f"\nresults: {run_dir / 'results.json'}\nplot:    {plot}\ntensorboard --logdir {run_dir}")
    return 0 if results else 1


def cmd_eval(args) -> int:
    from membench_agents.analysis.report import load_results, mean_text
    from membench_agents.api import Run
    from membench_agents.runs.folder import RESULTS, RunFolderError, diff_text, same_config

    run = Run(args.run_dir)  # config.yaml, checked against every checkpoint's own config
    run_dir, cfg = run.path, run.config
    if args.video is not None and args.video < 1:
        raise ConfigError(f"--video must be a number of episodes >= 1, got {args.video}")
    device = _eval_device(args.device, cfg["device"])
    stored = load_results(run_dir) if (run_dir / RESULTS).is_file() else None
    if stored is not None and not same_config(stored.get("config", cfg), cfg):
        raise RunFolderError(
            f"{run_dir / RESULTS} was written for another config than the checkpoints' "
            f"({diff_text(cfg, stored['config'])}); rebuild it with membench train --resume {run_dir}"
        )
    try:
        agg = run.evaluate(
            episodes=args.episodes,
            seed_start=args.seed_start,
            deterministic=False if args.stochastic else None,
            device=device,
        )
    except ConfigError as e:  # the protocol's rules, named by the flags
        raise ConfigError(
            str(e).replace("eval.episodes", "--episodes").replace("eval.seed_start", "--seed-start")
        ) from None
    for s, step in agg.pop("unfinished"):
        print(f"warning: seed {s} has not finished training (step {step})", file=sys.stderr)
    seeds_eval = agg.pop("episode_seeds")
    agg.pop("per_seed")
    # Another device gives the same policy up to floating-point rounding: no exact comparison then.
    asked = {
        "episodes": args.episodes,
        "seed_start": args.seed_start,
        "deterministic": False if args.stochastic else None,
    }
    ev = {**cfg["eval"], **{k: v for k, v in asked.items() if v is not None}}
    same_protocol = same_config(ev, cfg["eval"]) and device is None
    matches = None
    if stored is not None and same_protocol:
        matches = bool(
            agg["metric"] == stored["metric"]
            and len(agg["per_run"]) == len(stored["per_run"])
            and all(abs(a - b) < 1e-9 for a, b in zip(agg["per_run"], stored["per_run"], strict=True))
        )
    videos = []
    if args.video is not None:
        for s in cfg["seeds"]:
            videos += run.record(
                args.video,
                folder=args.video_dir,
                seed=s,
                deterministic=False if args.stochastic else None,
                device=device,
            )
    out = {
        "run_dir": str(run_dir),
        "episode_seeds": [seeds_eval[0], seeds_eval[-1]],
        **agg,
        "stored": None
        if stored is None
        else {"mean": stored["mean"], "sem": stored["sem"], "per_run": stored["per_run"]},
        "reproduces_results": matches,
        "videos": [str(v) for v in videos],
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"{cfg['agent']} ({cfg['obs_variant']}) on {cfg['env']}: {agg['metric']} "
            f"{mean_text(agg['mean'], agg['sem'], agg['n_runs'])} over {agg['n_runs']} run(s) "
            f"(episode seeds {seeds_eval[0]}..{seeds_eval[-1]})"
        )
        for s, v in zip(cfg["seeds"], agg["per_run"], strict=True):
            print(f"  seed {s}: {v:.3f}")
        if matches is not None and stored is not None:  # (matches is set only with a stored result)
            print(
                f"reproduces results.json: {'yes' if matches else 'NO'} "
                f"(stored {mean_text(stored['mean'], stored['sem'], len(stored['per_run']))})"
            )
        if videos:
            print(f"videos ({len(videos)}): {Path(videos[0]).parent.parent}/seed_*/episode_*.mp4")
    return 0 if matches in (None, True) else 1


def _eval_device(asked: str | None, trained: str) -> str | None:
    """The device `membench eval` rebuilds the policies on: None keeps the run's own."""
    if asked is not None:
        from membench_agents.config.schema import check_device

        check_device(asked)
        return None if asked == trained else asked
    if trained.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            print(
                f"note: the run trained on {trained}; this machine has no CUDA GPU, so it is evaluated on the cpu",
                file=sys.stderr,
            )
            return "cpu"
    return None


def cmd_report(args) -> int:
    from membench_agents.analysis.report import check_plot_path, report

    if args.html is not None:
        return _report_html(args)
    if args.out is not None:
        check_plot_path(args.out)
    if args.reference and not args.scorecard:
        raise ConfigError("--reference needs --scorecard")
    if args.check is not None and not args.scorecard:
        raise ConfigError("--check needs --scorecard (it compares a suite run's scorecard with a committed one)")
    if args.scorecard:
        return _report_scorecard(args)
    if args.aggregate:  # before the table and plot: a bad flag is the only output
        _check_aggregate_flags(args)
    try:
        text, plot, skipped = report(args.paths, out=args.out, markdown=args.markdown, title=args.title)
    except FileNotFoundError as e:
        raise ConfigError(str(e)) from None
    print(text)
    print(f"\nplot: {plot}")
    if args.aggregate:
        _report_aggregate(args, plot, skipped)
    if skipped:
        print(f"skipped {len(skipped)} unreadable run folder(s):", file=sys.stderr)
        for _, reason in skipped:
            print(f"  {reason}", file=sys.stderr)
    return 0


def _report_html(args) -> int:
    from membench_agents.analysis import html_report

    given = [f for f, v in (("--out", args.out), ("--reference", args.reference), ("--check", args.check))
             if v is not None]  # fmt: skip
    given += [f for f, v in (("--markdown", args.markdown), ("--aggregate", args.aggregate), ("--pool", args.pool),
                             ("--scorecard", args.scorecard)) if v]  # fmt: skip
    if given:
        raise ConfigError(
            f"{', '.join(given)} cannot be combined with --html: the page shows the tables and plots the folder "
            "holds (only --title applies)"
        )
    html_report.check_out(args.html)
    page, kind = html_report.write(args.paths, args.html, title=args.title)
    print(f"html ({kind}): {page} ({page.stat().st_size / 1024:,.0f} KiB)")
    return 0


def _check_aggregate_flags(args) -> None:
    from membench_agents.analysis.aggregate import MAX_REPS

    if not 1 <= args.reps <= MAX_REPS:
        raise ConfigError(f"--reps must be between 1 and {MAX_REPS} (memory grows with it), got {args.reps}")
    if not 0 < args.confidence < 1:
        raise ConfigError(f"--confidence must be in (0, 1), got {args.confidence}")
    if args.bootstrap_seed < 0:
        raise ConfigError(f"--bootstrap-seed must be >= 0 (a numpy seed), got {args.bootstrap_seed}")


def _report_scorecard(args) -> int:
    from membench_agents.analysis import scorecard

    _check_aggregate_flags(args)
    given = [f for f, v in (("--out", args.out), ("--title", args.title)) if v is not None]
    given += [f for f, v in (("--aggregate", args.aggregate), ("--pool", args.pool)) if v]
    if given or len(args.paths) != 1:
        what = f"{', '.join(given)} cannot be combined with it" if given else f"got {len(args.paths)} paths"
        raise ConfigError(f"--scorecard rebuilds the scorecard of one suite-run folder in place ({what})")
    summary = _load_check(args.check)  # a bad summary is the only output
    card, files = scorecard.write(
        args.paths[0], args.reference, reps=args.reps, confidence=args.confidence, seed=args.bootstrap_seed
    )
    print(scorecard.markdown(card))
    print("\n" + "\n".join(f"{k}: {v}" for k, v in files.items()))
    return _check_scorecard(args.paths[0], card.data, summary)


def _load_check(path: str | None):
    """--check's summary, read and checked before anything runs (None without --check)."""
    from membench_agents.analysis import check

    return None if path is None else check.load_summary(path)


def _check_scorecard(folder, data, summary) -> int:
    """--check: compare the scorecard just written with the summary, print the table, write check.json and
    check.md; the exit status (0 passed, 1 some task outside its committed interval)."""
    if summary is None:
        return 0
    from membench_agents.analysis import check

    (committed, file) = summary
    result = check.compare(data, committed, file)
    files = check.save(folder, result)
    print("\n" + check.markdown(result))
    print("\n" + "\n".join(f"{k}: {v}" for k, v in files.items()))
    return result.exit_status


def _report_aggregate(args, plot: Path, skipped) -> None:
    from membench_agents.analysis import aggregate
    from membench_agents.analysis.report import find_runs

    bad = {p.resolve() for p, _ in skipped}
    run_dirs = [d for d in find_runs(args.paths) if d.resolve() not in bad]
    agg = aggregate.aggregate_runs(
        run_dirs, reps=args.reps, confidence=args.confidence, seed=args.bootstrap_seed, pool=args.pool
    )
    out = Path(plot).with_suffix(".aggregate.png")
    aggregate.plot(agg, out, title=args.title)
    print("\naggregate across tasks (rliable's metrics):")
    print(aggregate.table(agg, markdown=args.markdown))
    print(f"\naggregate plot: {out}")


def cmd_plan(args) -> int:
    from membench_agents.config.resolve import resolve
    from membench_agents.ltm.plan import plan_cell

    xi = None
    if args.xi is not None:
        try:
            parts = [int(v) for v in args.xi.split(",")]
        except ValueError:
            parts = []
        if len(parts) not in (1, 2) or min(parts) < 1 or parts[0] > parts[-1]:
            raise ConfigError(f"--xi expects MIN[,MAX] with 1 <= MIN <= MAX (integers), got {args.xi!r}")
        xi = (parts[0], parts[-1])
    res = resolve(
        args.env,
        args.agent,
        config_file=args.config,
        obs_variant=args.obs_variant,
        overrides=args.set,
    )
    cfg = res.config
    plan = plan_cell(
        cfg["env"], cfg["agent"], cfg, env_kwargs=cfg["env_kwargs"], obs_variant=cfg["obs_variant"], K=args.K, xi=xi
    )
    print(json.dumps(plan.to_dict(), indent=1) if args.json else plan)
    return 0


def cmd_sweep(args) -> int:
    from membench_agents.analysis.report import SWEEP_RESULTS_MD
    from membench_agents.ltm import sweep
    from membench_agents.runs import folder, workers

    t0 = time.perf_counter()
    tracking = _tracking(args)
    executor = _executor(args)
    if args.resume:
        given = _flags_given(args, ("spec", "steps", "seeds", "out", "device"))
        given += ["--dry-run"] if args.dry_run else []
        if given:
            raise ConfigError(
                f"{', '.join(given)} cannot be combined with --resume: a sweep continues with the "
                "configs it started with"
            )
        sweep_dir = Path(args.resume)
        meta, cells, jobs = sweep.resume_jobs(sweep_dir)
        print(f"resuming {sweep_dir}", file=sys.stderr)
    else:
        if args.spec is None:
            raise ConfigError(
                "membench sweep needs a sweep spec (e.g. experiments/sweeps/tmaze-memory.yaml) or --resume SWEEP_DIR"
            )
        spec = sweep.load_spec(args.spec)
        cells = sweep.expand(spec, steps=args.steps, seeds=args.seeds, device=args.device)
        text, warnings = sweep.plan_table(spec, cells)
        print(f"sweep {spec.name}: {len(cells)} cells on {spec.env}\n{text}", file=sys.stderr)
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
        if args.dry_run:
            sweep.check_cells(cells, spec)  # the checks the real run makes before it writes anything
            return 0
        if args.jobs == 0 and spec.jobs:
            args.jobs = spec.jobs
        sweep_dir = sweep.new_sweep_dir(args.out or DEFAULT_OUT, spec.name)
        jobs = sweep.prepare(spec, cells, sweep_dir)
        meta = sweep.read_sweep(sweep_dir)
        print(f"sweep folder: {sweep_dir}", file=sys.stderr)
    n_workers, where = _at_a_time(args, len(jobs))
    print(where, file=sys.stderr)
    with contextlib.ExitStack() as held:
        for c in cells:  # one writer per run folder
            held.enter_context(folder.locked(sweep_dir / "cells" / c.name))
        try:
            for job in jobs:
                job.tracking = tracking
            workers.run_jobs(jobs, workers=n_workers, progress=not args.no_progress, executor=executor)
        except KeyboardInterrupt:
            print(
                f"\ninterrupted: checkpoints saved; continue with\n  membench sweep --resume {sweep_dir}",
                file=sys.stderr,
            )
            return 130
        except workers.RunFailed as e:
            e.resume = f"membench sweep --resume {sweep_dir}"
            raise
        out = sweep.finish(meta, cells, sweep_dir, progress=not args.no_progress)
    print(sweep.results_table(out))
    print(f"\nwall time: {(time.perf_counter() - t0) / 60:.1f} min\nresults: {sweep_dir / SWEEP_RESULTS_MD}")
    for name in ("generalization.png", "sweep.png", "aggregate.png"):
        if (sweep_dir / name).is_file():
            print(f"plot:    {sweep_dir / name}")
    return 0


def cmd_list(args) -> int:
    from membench_agents.algos.registry import AGENTS
    from membench_agents.config.resolve import CONFIG_DATA, list_cells

    print("agents:")
    for a in AGENTS.values():
        print(f"  {a.name:<18} {a.description}")
    print(
        "\ntuned cell configs (what `membench train --env ID --agent A [--obs-variant V]` resolves to; other "
        f"cells use the agent's defaults, {CONFIG_DATA / 'defaults'}):"
    )
    for env_id, stem, _ in list_cells():
        agent, _, variant = stem.partition(".")
        print(f"  {env_id:<36} {agent}" + (f" --obs-variant {variant}" if variant else ""))
    return 0


# ------------------------------------------------------------------------------------------------------
# bench
# ------------------------------------------------------------------------------------------------------
def _run_bench(b, args, tracking, executor, command: str) -> bool:
    """Train a bench folder's runs (``args.jobs`` workers); False when Ctrl-C or SIGTERM stopped them (checkpoints
    saved, the resume command printed). A failed run raises with ``membench <command> --resume`` as its fix."""
    from membench_agents.runs import bench, workers

    n_workers, where = _at_a_time(args, len(b.jobs))
    print(where, file=sys.stderr)
    try:
        bench.run(b, workers=n_workers, progress=not args.no_progress, tracking=tracking, executor=executor)
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: checkpoints saved; continue with\n  membench {command} --resume {b.path}", file=sys.stderr
        )
        return False
    except workers.RunFailed as e:
        e.resume = f"membench {command} --resume {b.path}"
        raise
    return True


def cmd_bench(args) -> int:
    from membench_agents.analysis.report import expectation_text, write_bench_report
    from membench_agents.runs import bench, suite

    t0 = time.perf_counter()
    tracking = _tracking(args)
    executor = _executor(args)
    suite_run = any(v is not None for v in (args.suite, args.ids, args.memory_type))
    if args.resume:
        names = ("env", "agent", "spec", "steps", "seeds", "out", "device", "suite", "ids", "memory_type")
        given = _flags_given(args, names + ("obs_variant",))
        given += [f for f, v in (("--set", args.set), ("--reference", args.reference)) if v]
        given += [
            f
            for f, v in (
                ("--skip-missing", args.skip_missing),
                ("--dry-run", args.dry_run),
                ("--certify", args.certify),
            )
            if v
        ]
        if given:
            raise ConfigError(
                f"{', '.join(given)} cannot be combined with --resume: a bench continues with the "
                "configs it started with"
            )
        if suite.is_scorecard(args.resume):
            summary = _load_check(args.check)
            b, _ = suite.resume(args.resume)
            _preflight(b.configs, summary)
            suite_run = True
        else:
            if args.check is not None:
                raise ConfigError(f"--check compares a suite run's scorecard; {args.resume} is not a suite run")
            b = bench.resume(args.resume)
        print(f"resuming {b.path}", file=sys.stderr)
    elif suite_run:
        summary = _load_check(args.check)
        b = new_suite_run(args, summary)
        if b is None:  # --dry-run
            return 0
    else:
        b = _new_bench(args)
    if not _run_bench(b, args, tracking, executor, "bench"):
        return 130
    if suite_run:
        return _write_scorecard(b, t0, summary)
    text, expected, plot = write_bench_report(b)
    print(text)
    if expected:
        print("\nexpected ladder:\n" + "\n".join(expectation_text(e) for e in expected))
    print(f"\nwall time: {(time.perf_counter() - t0) / 60:.1f} min\nplot: {plot}\nruns: {b.path}")
    return 0 if all(e.met for e in expected) else 3


def _new_bench(args):
    """Resolve the bench's cells, say what each trains, and create its folder (nothing is written before every
    cell is known to train)."""
    from membench_agents.runs import bench
    from membench_agents.runs.folder import run_label
    from membench_agents.runs.suite import split_list

    suite_only = [
        f
        for f, v in (("--skip-missing", args.skip_missing), ("--dry-run", args.dry_run), ("--certify", args.certify))
        if v
    ]
    suite_only += ["--reference"] if args.reference else []
    suite_only += ["--check"] if args.check is not None else []
    if suite_only:
        raise ConfigError(f"{', '.join(suite_only)} belong to a suite run (--suite, --ids or --memory-type)")
    agents = split_list(args.agent)
    if len(agents) > 1:
        raise ConfigError(f"--agent takes one agent outside a suite run (--suite), got {', '.join(agents)}")
    agent = agents[0] if agents else None
    if args.obs_variant is not None and (args.env is None or agent is None):
        raise ConfigError("--obs-variant applies to one cell (--env and --agent) or a suite run (--suite)")
    plan = bench.plan(
        args.env,
        agent,
        args.spec,
        steps=args.steps,
        seeds=args.seeds,
        device=args.device,
        overrides=args.set,
        obs_variant=args.obs_variant,
    )
    if plan.description is not None:
        print(f"bench: {plan.description}", file=sys.stderr)
    if args.jobs == 0:
        args.jobs = plan.jobs
    for r in plan.cells:
        c = r.config
        print(
            f"  {run_label(c):<20} {c['env']} {c['env_kwargs'] or ''} {c['total_steps']:,} steps x "
            f"{len(c['seeds'])} seeds  <- {r.sources[-1]}",
            file=sys.stderr,
        )
    labels = bench.check(plan)
    _print_budget_notes(plan.configs)
    b = bench.create(plan, labels, args.out or DEFAULT_OUT)
    print(f"bench folder: {b.path}", file=sys.stderr)
    return b


def _preflight(configs, summary) -> None:
    """--check: the cells' budgets against the summary's before anything trains."""
    if summary is not None:
        from membench_agents.analysis import check

        check.preflight(configs, *summary)


def new_suite_run(args, summary=None):
    """Select the IDs, plan one cell per (ID, agent), say what each trains, check every cell as the real run does
    (its environment made once), and create the scorecard folder (None after --dry-run: nothing written); nothing
    trains. ``args``: ``build_parser().parse_args(["bench", ...])``
    (experiments/baselines.py creates its folders this way, to fill them before they train)."""
    from membench_agents.analysis.scorecard import load_references
    from membench_agents.runs import bench, suite
    from membench_agents.runs.folder import run_label

    if args.env is not None or args.spec is not None:
        given = ", ".join(f for f, v in (("--env", args.env), ("--spec", args.spec)) if v is not None)
        raise ConfigError(f"{given} cannot be combined with --suite/--ids/--memory-type: a suite run picks its IDs")
    ids = suite.split_list([args.ids]) if args.ids is not None else []
    specs = suite.select(args.suite, ids, args.memory_type)
    gone = suite.missing(specs)
    if gone and not args.skip_missing:
        raise ConfigError(f"{suite.missing_text(gone)}; install them, or pass --skip-missing to leave those IDs out")
    if gone:
        print(f"skipped (--skip-missing): {suite.missing_text(gone)}", file=sys.stderr)
        specs = [s for s in specs if s.id not in {g for g, _ in gone}]
        if not specs:
            raise ConfigError("every selected ID needs an extra that is not installed: nothing to run")
    agents = suite.split_list(args.agent) or suite.default_agents()
    certify = _suite_certify(args, agents)
    load_references(args.reference)  # a bad certificate is an error before anything trains
    plan = suite.plan(
        specs,
        agents,
        variant=args.obs_variant,
        steps=args.steps,
        seeds=args.seeds,
        device=args.device,
        overrides=args.set,
        ceilings=None if certify is None else _ceilings(specs, certify["floor"]),
    )
    if certify is not None:
        _check_certificates(plan, certify)
    print(f"suite run: {plan.description}", file=sys.stderr)
    total = 0
    for r in plan.cells:
        c = r.config
        total += c["total_steps"] * len(c["seeds"])
        print(
            f"  {c['env']:<40} {run_label(c):<16} {c['total_steps']:>11,} steps x {len(c['seeds'])} seeds  "
            f"<- {r.sources[-1]}",
            file=sys.stderr,
        )
    print(f"  {len(plan.cells)} cells, {total:,} environment steps in all", file=sys.stderr)
    _preflight(plan.configs, summary)
    if args.dry_run:
        bench.check(plan)  # the checks the real run makes before it writes anything: each cell's env is made once
        print("dry run: every cell's agent takes its environment; nothing trained", file=sys.stderr)
        return None
    _print_budget_notes(plan.configs)
    b = suite.create(
        plan,
        args.out or DEFAULT_OUT,
        suite=args.suite,
        ids=ids,
        memory_type=args.memory_type,
        agents=agents,
        variant=args.obs_variant,
        steps=args.steps,
        seeds=args.seeds,
        overrides=args.set,
        skipped=gone,
        references=args.reference,
        certify=certify,
    )
    print(f"scorecard folder: {b.path}", file=sys.stderr)
    return b


def _suite_certify(args, agents: list[str]) -> dict | None:
    """--certify: the certificates' settings (None without it); one error where the run cannot hold them."""
    from membench_agents.analysis import aggregate, certificate

    if not args.certify:
        return None
    if args.reference:
        raise ConfigError(
            "--certify normalises each task by its own certificate: it cannot be combined with --reference"
        )
    if args.obs_variant not in (None, "partial"):
        raise ConfigError(
            f"--certify needs the agents on partial (the floor and memory cells), got --obs-variant {args.obs_variant}"
        )
    floor, memory = certificate.DEFAULT_FLOOR, certificate.DEFAULT_MEMORY
    lacking = [a for a in (floor, memory) if a not in agents]
    if lacking:
        raise ConfigError(
            f"--certify needs {floor} (the floor) and {memory} (memory) among --agent; add {', '.join(lacking)}"
        )
    return {
        "floor": floor,
        "memory": memory,
        "tolerance": certificate.TOLERANCE,
        "reps": aggregate.REPS,
        "confidence": aggregate.CONFIDENCE,
        "bootstrap_seed": 0,
    }


def _ceilings(specs, floor: str) -> dict[str, tuple[str, str]]:
    from membench_agents.analysis.certificate import ceiling_variant

    return {s.id: (floor, ceiling_variant(s.id)) for s in specs}


def _check_certificates(plan, certify: dict) -> None:
    """Each ID's floor, memory and ceiling cells are a certificate (all else equal), before anything is written."""
    from membench_agents.analysis.certificate import check_cells
    from membench_agents.runs.suite import certificate_roles

    for env, roles in certificate_roles(plan.cells, plan.configs, certify["floor"], certify["memory"]).items():
        try:
            check_cells([roles[k] for k in ("floor", "memory", "ceiling")])
        except ConfigError as e:
            raise ConfigError(f"--certify on {env}: {e}") from None


def _write_scorecard(b, t0: float, summary=None) -> int:
    from membench_agents.analysis import scorecard

    card, files = scorecard.write(b.path)
    if "certificates table" in files:
        print(files["certificates table"].read_text())
    print(scorecard.markdown(card))
    print(f"\nwall time: {(time.perf_counter() - t0) / 60:.1f} min")
    print("\n".join(f"{k}: {v}" for k, v in files.items()) + f"\nruns: {b.path}")
    return _check_scorecard(b.path, card.data, summary)


# ------------------------------------------------------------------------------------------------------
# certify
# ------------------------------------------------------------------------------------------------------
def cmd_certify(args) -> int:
    from membench_agents.analysis import certificate
    from membench_agents.runs.folder import run_label

    t0 = time.perf_counter()
    tracking = _tracking(args)
    executor = _executor(args)
    if args.resume:
        names = ("env", "floor", "memory", "ceiling_variant", "spec", "steps", "seeds", "out", "device", "tolerance")
        given = _flags_given(args, names) + (["--set"] if args.set else [])
        if given:
            raise ConfigError(
                f"{', '.join(given)} cannot be combined with --resume: a certificate continues with the "
                "configs it started with"
            )
        b, meta = certificate.resume(args.resume)
        print(f"resuming {b.path}", file=sys.stderr)
    else:
        tolerance = certificate.check_tolerance(certificate.TOLERANCE if args.tolerance is None else args.tolerance)
        plan = certificate.plan(
            args.env,
            spec=args.spec,
            floor=args.floor,
            memory=args.memory,
            variant=args.ceiling_variant,
            steps=args.steps,
            seeds=args.seeds,
            device=args.device,
            overrides=args.set,
        )
        print(f"certify: {plan.description}", file=sys.stderr)
        if args.jobs == 0:
            args.jobs = plan.jobs
        for role, r in zip(certificate.ROLES, plan.cells, strict=True):
            c = r.config
            print(
                f"  {role:<8} {run_label(c):<20} {c['env']} {c['env_kwargs'] or ''} {c['total_steps']:,} steps x "
                f"{len(c['seeds'])} seeds  <- {r.sources[-1]}",
                file=sys.stderr,
            )
        _print_budget_notes(plan.configs)
        b = certificate.create(plan, args.out or DEFAULT_OUT, tolerance=tolerance, spec=args.spec, overrides=args.set)
        meta = certificate.read_meta(b.path)
        print(f"certificate folder: {b.path}", file=sys.stderr)
    if not _run_bench(b, args, tracking, executor, "certify"):
        return 130
    cert, plot = certificate.write(b, meta)
    print(certificate.text(cert))
    print(
        f"\nwall time: {(time.perf_counter() - t0) / 60:.1f} min\ncertificate: {b.path / certificate.CERTIFICATE}"
        f"\nplot: {plot}\nruns: {b.path}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    handler = {
        "train": cmd_train,
        "eval": cmd_eval,
        "report": cmd_report,
        "bench": cmd_bench,
        "certify": cmd_certify,
        "list": cmd_list,
        "plan": cmd_plan,
        "sweep": cmd_sweep,
    }[args.command]
    try:
        return handler(args)
    except ConfigError as e:
        print(f"membench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`membench list | head`): stop quietly, as head's writer would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as e:  # a failed run: the message, not a traceback from the orchestrator
        from membench_agents.runs.workers import RunFailed

        if isinstance(e, RunFailed):
            for line in e.failures:
                print(f"membench: error: run {line}", file=sys.stderr)
            if e.resume:
                print(
                    f"the other runs saved checkpoints; once the cause is fixed, continue with\n  {e.resume}",
                    file=sys.stderr,
                )
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
