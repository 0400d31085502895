"""How check and fix times grow with a file's size (one long line of dense code).

    python benchmarks/size_scaling.py

A compiled function holding one list literal of N integers (a one-line file of 0.25 to 2.5 MB,
300,000 syntax nodes per MB), with one fixable `if` and one print: `check_source` and
`fix_source` timed on each size. Linear growth means a constant time per MB.
"""

from __future__ import annotations

import sys
import time

from graphmend.api import check_source, fix_source


def program(count: int) -> str:
    values = ", ".join(str(i) for i in range(count))
    return (
        "import torch\n\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
        f"    values = [{values}]\n    if x.sum() > 0:\n        x = x * 2\n    print('x', x)\n    return x\n"
    )


def main() -> int:
    print("| size MB | check s | fix s | check s/MB | fix s/MB |")
    print("|---:|---:|---:|---:|---:|")
    for count in (40_000, 80_000, 160_000, 320_000):
        text = program(count)
        size = len(text) / 2**20
        start = time.perf_counter()
        check_source(text)
        checked = time.perf_counter() - start
        start = time.perf_counter()
        fix_source(text, unsafe=True)
        fixed = time.perf_counter() - start
        print(f"| {size:.2f} | {checked:.2f} | {fixed:.2f} | {checked / size:.1f} | {fixed / size:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
