"""``membench-envs``: browse the catalogue, plan LTM/STM experiments, regenerate the task pages and the README table."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from membench_envs import catalogue, docgen, memory

COLUMNS = ("id", "suites", "memory", "T", "Ξ", "obs", "action", "extra", "source")


def _row(spec: catalogue.TaskSpec) -> tuple[str, ...]:
    return (
        spec.id,
        ", ".join(spec.suites),
        ", ".join(spec.memory_types),
        "–" if spec.episode_length is None else str(spec.episode_length),
        docgen.xi_text(spec),
        spec.obs_type,
        spec.action_type,
        spec.extra or "core",
        spec.source,
    )


def format_table(specs: list[catalogue.TaskSpec], markdown: bool = False) -> str:
    rows = [_row(s) for s in specs]
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(f"`{r[0]}`" if i == 0 else r[i] for i in range(len(r))) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(COLUMNS)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*COLUMNS), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


BEGIN, END = "<!-- BEGIN SUITES (generated: membench-envs readme) -->", "<!-- END SUITES -->"


def update_readme(path: Path) -> bool:
    """Rewrite the generated block of ``path`` (the suites table, :func:`membench_envs.docgen.readme_summary`);
    returns True if the file changed."""
    text = _read(path)
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{path} has no generated-table markers ({BEGIN} ... {END})")
    new = pattern.sub(lambda _: f"{BEGIN}\n{docgen.readme_summary()}\n{END}", text)
    if new != text:
        try:
            path.write_text(new)
        except OSError as exc:
            raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    return new != text


def _read(path: Path) -> str:
    """The text of ``path``; a missing file, a folder or an unreadable file is one ValueError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(f"cannot read {path}: {why}") from None


def _readme(path: Path, check: bool) -> int:
    if not check:
        print(f"{path}: {'updated' if update_readme(path) else 'already up to date'}")
        return 0
    pattern = re.compile(re.escape(BEGIN) + "\n(.*?)\n" + re.escape(END), re.S)
    m = pattern.search(_read(path))
    if m is None or m.group(1) != docgen.readme_summary():
        print(f"{path}: the suites table is out of date; run `membench-envs readme {path}`", file=sys.stderr)
        return 1
    print(f"{path}: the suites table is up to date")
    return 0


def _docs(root: Path, check: bool) -> int:
    if root.exists() and not root.is_dir():
        raise ValueError(f"{root} is not a folder")
    if check:
        stale = docgen.check(root)
        for page in stale:
            print(f"{page}: out of date; run `membench-envs docs {root}`", file=sys.stderr)
        if stale:
            return 1
        print(f"{root}: the task pages are up to date")
        return 0
    changed = docgen.write(root)
    print("\n".join(f"{p}: updated" for p in changed) or f"{root}: the task pages are already up to date")
    return 0


def _collect(args) -> int:
    spec = catalogue.get(args.env_id)
    if spec.extra != "robo":
        raise ValueError(f"collect records MIKASA-Robo tasks; {args.env_id} is not one")
    from membench_envs._deps import require

    require("mani_skill", "robo", env_id=args.env_id)
    import yaml  # comes with ManiSkill

    from membench_envs.robo.collect import CollectionError, collect

    kwargs = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        kwargs[key] = yaml.safe_load(value)
    try:
        h5, index = collect(
            args.env_id,
            args.episodes,
            args.out,
            only_success=args.only_success,
            seed_start=args.seed_start,
            max_attempts=args.max_attempts,
            progress=not args.no_progress,
            **kwargs,
        )
    except CollectionError as e:
        print(f"membench-envs: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # collect has said what was kept and how to continue
        return 130
    print(f"{h5}\n{index}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line. No parser takes abbreviated flags (``--name`` is not ``--namespace``)."""
    parser = argparse.ArgumentParser(prog="membench-envs", description=__doc__, allow_abbrev=False)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", allow_abbrev=False, help="print the catalogue as a table")
    p_list.add_argument("--suite", help=f"one of: {', '.join(catalogue.suites())}")
    p_list.add_argument("--memory-type", choices=catalogue.MEMORY_TYPES)
    p_list.add_argument("--namespace", help="e.g. MIKASA, POPGym")
    p_list.add_argument(
        "--stochasticity",
        type=int,
        choices=catalogue.STOCHASTICITY_TYPES,
        metavar="TYPE",
        help="STORI taxonomy type, 0-5 (e.g. 5: missing state variables)",
    )
    p_list.add_argument("--markdown", action="store_true", help="markdown instead of aligned text")
    p_list.add_argument("--ids", action="store_true", help="print only the IDs, one per line")
    p_info = sub.add_parser("info", allow_abbrev=False, help="everything the catalogue knows about one ID")
    p_info.add_argument("env_id")
    p_plan = sub.add_parser(
        "plan", allow_abbrev=False, help="LTM/STM regime of an agent with context K on a task (Algorithm 1)"
    )
    p_plan.add_argument("env_id")
    p_plan.add_argument("--K", type=int, required=True, help="agent context length")
    p_plan.add_argument("--K-eff", type=int, default=None, help="effective context μ(K), if known")
    p_readme = sub.add_parser("readme", allow_abbrev=False, help="regenerate the suites table in README.md")
    p_readme.add_argument("path", nargs="?", default="README.md")
    p_readme.add_argument("--check", action="store_true", help="exit 1 if the table is out of date")
    p_docs = sub.add_parser(
        "docs",
        allow_abbrev=False,
        help="regenerate the task pages (DIR/tasks/*.md) from the catalogue and the docstrings",
    )
    p_docs.add_argument("path", nargs="?", default="docs", metavar="DIR", help="the docs folder (default: docs)")
    p_docs.add_argument("--check", action="store_true", help="exit 1 if a page is out of date; write nothing")
    p_collect = sub.add_parser(
        "collect",
        allow_abbrev=False,
        help="record an offline dataset of a MIKASA-Robo task with its scripted expert (HDF5 + "
        "JSON, ManiSkill's trajectory format)",
    )
    p_collect.add_argument("env_id")
    p_collect.add_argument("--episodes", type=int, required=True, help="episodes to keep")
    p_collect.add_argument("--out", default="datasets", help="folder of the dataset files (default: datasets/)")
    p_collect.add_argument("--only-success", action="store_true", help="keep successful episodes only")
    p_collect.add_argument("--seed-start", type=int, default=0, help="first episode seed (default 0)")
    p_collect.add_argument(
        "--max-attempts",
        type=int,
        help="seeds tried at most (default: 10x --episodes with --only-success, else --episodes)",
    )
    p_collect.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an env kwarg, e.g. --set episode_steps=30 (value read as YAML)",
    )
    p_collect.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    try:
        if args.cmd == "list":
            specs = catalogue.select(args.suite, args.memory_type, args.namespace, stochasticity=args.stochasticity)
            print("\n".join(s.id for s in specs) if args.ids else format_table(specs, markdown=args.markdown))
            if not args.ids:
                print(f"\n{len(specs)} environment(s)")
        elif args.cmd == "info":
            spec = catalogue.get(args.env_id)
            for name in spec.__dataclass_fields__:
                value = getattr(spec, name)
                if name in ("params", "vector_params"):
                    lines = [f"{p.name}: {p.allowed()} (default {p.default!r})" for p in value] or ["–"]
                    print(f"{name:>18}: " + ("\n" + " " * 20).join(lines))
                else:
                    print(f"{name:>18}: {dict(value) if name == 'kwargs' else value}")
            print(f"{'K̄':>18}: {spec.context_memory_border}")
            print(f"{'install':>18}: {spec.pip_install}")
        elif args.cmd == "plan":
            print(memory.plan(args.env_id, args.K, args.K_eff))
        elif args.cmd == "collect":
            return _collect(args)
        elif args.cmd == "readme":
            return _readme(Path(args.path), args.check)
        elif args.cmd == "docs":
            return _docs(Path(args.path), args.check)
    except (KeyError, ValueError) as exc:
        print(f"membench-envs: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
