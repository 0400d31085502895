"""Whole-repository scale: graphmend against TorchFix on transformers 4.49.0's `models/` tree.

    python benchmarks/repo_scale.py [--repeats 3] [--torchfix PATH | --no-torchfix]

TorchFix 0.7.0 (also LibCST-based) must be installed in its own virtualenv, since it pins an older
LibCST: `python3 -m venv /tmp/torchfix-venv && /tmp/torchfix-venv/bin/pip install torchfix==0.7.0`.
Runs alternate (graphmend cold, TorchFix, graphmend warm cache) so machine noise hits all alike;
both tools use every core. Prints median wall time and peak RSS (of the largest process) and
the ratio graphmend / TorchFix (goal <= 0.2). `--no-torchfix` times graphmend alone (cold, then
warm), with the machine's load average before and after, for the figure the README quotes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def timed(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS in MB (GNU time: the largest of the process and its children)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], capture_output=True, text=True)
    seconds, kilobytes = re.findall(r"([\d.]+) (\d+)\s*$", result.stderr.strip())[-1]
    return float(seconds), int(kilobytes) // 1024


def main() -> int:
    import transformers

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torchfix", default="/tmp/torchfix-venv/bin/torchfix")
    parser.add_argument("--no-torchfix", action="store_true", help="time graphmend alone")
    args = parser.parse_args()
    if not args.no_torchfix and shutil.which(args.torchfix) is None:
        print(f"TorchFix not found at {args.torchfix}; see this script's docstring", file=sys.stderr)
        return 2
    models = Path(transformers.__file__).parent / "models"
    files = list(models.rglob("*.py"))
    lines = sum(p.read_text(encoding="utf-8", errors="replace").count("\n") for p in files)
    graphmend = [sys.executable, "-m", "graphmend", "check", "--output-format", "json", str(models)]
    results: dict[str, list[tuple[float, int]]] = {
        "graphmend (cold)": [],
        **({} if args.no_torchfix else {"TorchFix --select ALL": []}),
        "graphmend (cache warm)": [],
    }
    load_before = os.getloadavg()
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            results["graphmend (cold)"].append(timed([*graphmend, "--cache-dir", cache]))
            if not args.no_torchfix:
                results["TorchFix --select ALL"].append(timed([args.torchfix, "--select", "ALL", str(models)]))
            results["graphmend (cache warm)"].append(timed([*graphmend, "--cache-dir", cache]))
    print(
        f"transformers {transformers.__version__} models/: {len(files)} files, {lines} lines; {args.repeats} alternating rounds"
    )
    print(f"{os.cpu_count()} cores; load average (1, 5, 15 min) before {load_before}, after {os.getloadavg()}")
    torchfix = statistics.median(s for s, _ in results["TorchFix --select ALL"]) if not args.no_torchfix else None
    print(f"{'tool':<24} {'wall s':>8} {'peak RSS MB':>12} {'/ TorchFix':>11}")
    for name, runs in results.items():
        wall = statistics.median(s for s, _ in runs)
        memory = statistics.median(m for _, m in runs)
        ratio = f"{wall / torchfix:>11.3f}" if torchfix else f"{'-':>11}"
        print(f"{name:<24} {wall:>8.2f} {memory:>12} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
