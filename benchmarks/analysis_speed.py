"""Analysis time of graphmend against LibCST's bare `parse_module` of the same text, in one run.

    python benchmarks/analysis_speed.py [FILE ...]   (default: transformers 4.49.0's longformer, t5, phi3)

Runs are interleaved (parse, analyse, parse, analyse, ...) so machine noise hits both alike; the
medians and their ratio are printed. Goal: ratio <= 2.0 (issue 2: analysis <= 2x parse_module).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import statistics
import sys
import time
from pathlib import Path

import libcst

from graphmend.api import check_source, read_source


def default_files() -> list[Path]:
    import transformers  # only to locate its installed sources; nothing is imported from them

    models = Path(transformers.__file__).parent / "models"
    return [
        models / "longformer/modeling_longformer.py",
        models / "t5/modeling_t5.py",
        models / "phi3/modeling_phi3.py",
    ]


def timed(function, *args) -> float:  # noqa: ANN001
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    files = args.files or default_files()
    print(f"python {sys.version.split()[0]}, libcst {importlib.metadata.version('libcst')}, repeat {args.repeat}")
    print(f"{'file':<28} {'lines':>6} {'parse_module ms':>16} {'graphmend ms':>13} {'ratio':>6}")
    worst = 0.0
    for path in files:
        text = read_source(path)
        check_source(text, path)  # warm caches of the interpreter, not of graphmend (it keeps none)
        parse_times, check_times = [], []
        gc.collect()
        for _ in range(args.repeat):
            parse_times.append(timed(libcst.parse_module, text))
            check_times.append(timed(check_source, text, path))
        parse_ms = statistics.median(parse_times) * 1000
        check_ms = statistics.median(check_times) * 1000
        ratio = check_ms / parse_ms
        worst = max(worst, ratio)
        print(f"{path.name:<28} {text.count(chr(10)):>6} {parse_ms:>16.1f} {check_ms:>13.1f} {ratio:>6.2f}")
    print(f"worst ratio {worst:.2f} (goal <= 2.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
