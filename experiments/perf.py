"""`make bench-perf`: run every speed benchmark (experiments/perf_*.py), each in its own process.

Each section prints its own table with ratios against a reference measured in the same run.
Usage: python experiments/perf.py [section ...]   e.g. `python experiments/perf.py envs agents`
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    sections = sorted(p.stem.removeprefix("perf_") for p in HERE.glob("perf_*.py"))
    chosen = argv or sections
    unknown = sorted(set(chosen) - set(sections))
    if unknown:
        print(f"unknown section(s) {unknown}; available: {sections}", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        print(f"\n=== bench-perf: {name} ===", flush=True)
        if subprocess.run([sys.executable, str(HERE / f"perf_{name}.py")]).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed sections: {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
