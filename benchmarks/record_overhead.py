"""The cost of `graphmend record` against a plain run of the same command (issue 41).

    python benchmarks/record_overhead.py [--runs 5] [-- COMMAND ...]

Default command: `python benchmarks/record_overhead/t5_train.py` (tiny-config T5 of the installed
transformers, 12 training steps, backend "eager"), which prints its first step's time (the
compile) and the median of its steady steps as JSON. Plain and recorded runs alternate, `--runs`
of each, in one sitting; printed: min / median / max of the whole command's wall time, of the
first step and of the steady steps, and the recorded/plain ratio of each median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one(command: list[str], recorded: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="graphmend-overhead-") as out:
        full = [sys.executable, "-m", "graphmend", "record", "--out", out, "--", *command] if recorded else command
        start = time.perf_counter()
        done = subprocess.run(full, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
    figures = {"wall_s": wall}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            figures.update(json.loads(line))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    command = command or [sys.executable, str(HERE / "record_overhead" / "t5_train.py")]
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(args.runs):
        for recorded in (False, True):
            results[recorded].append(one(command, recorded))
    print(f"{'figure':<16} {'plain min/median/max s':>26} {'recorded min/median/max s':>28} {'ratio of medians':>17}")
    for figure in results[False][0]:
        plain = [r[figure] for r in results[False]]
        recorded = [r[figure] for r in results[True]]

        def spread(values: list[float]) -> str:
            return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"

        ratio = statistics.median(recorded) / statistics.median(plain)
        print(f"{figure:<16} {spread(plain):>26} {spread(recorded):>28} {ratio:>17.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
