"""How `graphmend check` grows with a file's number of compiled functions (issue 68).

    python benchmarks/function_count_scaling.py [N ...]     (default: 1000 2000 4000 8000)

Each file holds N functions, each `@torch.compile` with a tensor `if` and a `print` (7 lines, two
fixes per function), alone in a folder of its own (a sibling file would be summarised with it).
`graphmend check --no-cache --quiet` runs in a fresh process, as a user runs it; the best of three
wall times is printed, and each size's time over the previous one. Linear growth doubles the time
when N doubles; issue 68 asks for 4,000 in under 10 s on 2 cores, and 8,000 in at most 2.2 times that.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def program(count: int) -> str:
    functions = (
        f"\n@torch.compile\ndef f{i}(x):\n    if x.sum() > {i}:\n        x = x * 2\n    print('x', x)\n    return x\n"
        for i in range(count)
    )
    return "import torch\n\n" + "".join(functions)


def check_seconds(path: Path) -> float:
    """The best of three wall times of a fresh `graphmend check` of `path`."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "graphmend", "check", "--no-cache", "--quiet", str(path)],
            capture_output=True,
            check=False,
        )
        times.append(time.perf_counter() - start)
        if done.returncode != 1:  # the file has findings on purpose
            raise SystemExit(f"graphmend check exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return min(times)


def main() -> int:
    sizes = [int(arg) for arg in sys.argv[1:]] or [1000, 2000, 4000, 8000]
    print("| functions | file KB | check s | × previous |")
    print("|---:|---:|---:|---:|")
    previous = None
    with tempfile.TemporaryDirectory() as root:
        for count in sizes:
            folder = Path(root) / str(count)
            folder.mkdir()
            path = folder / "many.py"
            path.write_text(program(count), encoding="utf-8")
            seconds = check_seconds(path)
            ratio = f"{seconds / previous:.2f}" if previous else "—"
            print(f"| {count:,} | {path.stat().st_size // 1024:,} | {seconds:.1f} | {ratio} |", flush=True)
            previous = seconds
    return 0


if __name__ == "__main__":
    sys.exit(main())
